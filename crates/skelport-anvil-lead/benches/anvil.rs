//! Read and write a generated 65,535-bone Standard skeleton (the Unity-era limit); target: the
//! round trip under 250 ms.
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_anvil_lead::{ir, AnvilFormat};
use skelport_ir::{Bone, BoneId, DVec3, Diagnostics, Document, Format, Input, ReadOptions, Skeleton, Transform, WriteOptions};

fn big() -> Document {
    let mut sk = Skeleton::new("big");
    for i in 0..65_535usize {
        let parent = if i == 0 { None } else { Some(BoneId(((i - 1) / 2) as u32)) };
        sk.push(Bone::new(format!("bone_{i}"), parent, Transform::from_rt(Default::default(), DVec3::new(0.0, 0.0, 0.01))));
    }
    let mut d = Document::new(ir::FRAME);
    d.skeletons.push(sk);
    d
}

fn bench(c: &mut Criterion) {
    let bytes = AnvilFormat.write(&big(), &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main;
    let read = || AnvilFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    let doc = read();
    let mut g = c.benchmark_group("anvil");
    g.sample_size(10);
    g.bench_function("read_65535", |b| b.iter(read));
    g.bench_function("write_65535_unchanged", |b| {
        b.iter(|| AnvilFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main.len())
    });
    g.bench_function("round_trip_65535", |b| {
        b.iter(|| {
            let d = read();
            AnvilFormat.write(&d, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main.len()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
