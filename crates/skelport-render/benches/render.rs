//! Render timings: the 22-bone sample biped (all views, labels, mesh) and a 65,535-bone chain.
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_ir::{Bone, BoneId, DVec3, Document, Frame, Skeleton, Transform};
use skelport_render::{render_svg, sample_biped, svg_to_png, RenderOptions, View};

fn chain(n: u32) -> Document {
    let mut sk = Skeleton::new("chain");
    for i in 0..n {
        let a = i as f64 * 0.01;
        let t = if i == 0 { DVec3::ZERO } else { DVec3::new(0.0005 * a.cos(), 0.00003, 0.0005 * a.sin()) };
        sk.push(Bone::new(format!("b{i}"), i.checked_sub(1).map(BoneId::new), Transform::from_rt(Default::default(), t)));
    }
    Document { skeletons: vec![sk], ..Document::new(Frame::GLTF) }
}

fn bench(c: &mut Criterion) {
    let biped = sample_biped();
    let opts = RenderOptions { view: View::All, size: 1200, labels: true, ..Default::default() };
    c.bench_function("svg biped all 1200", |b| b.iter(|| render_svg(&biped, &opts).unwrap()));
    let svg = render_svg(&biped, &opts).unwrap();
    c.bench_function("png biped all 1200", |b| b.iter(|| svg_to_png(&svg).unwrap()));
    let big = chain(65_535);
    c.bench_function("svg chain 65535 all 1200", |b| b.iter(|| render_svg(&big, &opts).unwrap()));
    let svg = render_svg(&big, &opts).unwrap();
    c.bench_function("png chain 65535 all 1200", |b| b.iter(|| svg_to_png(&svg).unwrap()));
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(10);
    targets = bench
}
criterion_main!(benches);
