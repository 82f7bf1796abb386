//! Read and write a generated 65,535-bone Standard skeleton (the engine's maximum, Unity and later).
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_anvil::{AnvilFormat, AnvilSkeleton, Form, ANVIL_FRAME};
use skelport_ir::{Bone, BoneId, DQuat, DVec3, Diagnostics, Document, Format, Input, ReadOptions, Skeleton, Transform, WriteOptions};
use std::time::Duration;

fn big() -> Vec<u8> {
    let mut sk = Skeleton::new("big");
    for i in 0..65_535usize {
        let parent = if i == 0 { None } else { Some(BoneId(((i - 1) / 4) as u32)) };
        let t = Transform::from_rt(DQuat::from_rotation_z(0.001 * (i % 7) as f64), DVec3::new(0.01, 0.02 * (i % 3) as f64, 0.05));
        sk.push(Bone::new(format!("b{i}"), parent, t));
    }
    let mut d = Document::new(ANVIL_FRAME);
    d.skeletons.push(sk);
    AnvilFormat.write(&d, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main
}

fn bench(c: &mut Criterion) {
    let bytes = big();
    let mut g = c.benchmark_group("anvil 65535 bones");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("round trip (read + write, Standard UTF-16)", |b| {
        b.iter(|| {
            let mut d = Diagnostics::default();
            let doc = AnvilFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut d).unwrap();
            let out = AnvilFormat.write(&doc, &WriteOptions::default(), &mut d).unwrap();
            assert_eq!(out.main.len(), bytes.len());
        })
    });
    g.bench_function("read", |b| {
        b.iter(|| AnvilFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap())
    });
    let doc = AnvilFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    g.bench_function("write (the document read, unedited)", |b| {
        b.iter(|| AnvilFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap())
    });
    g.bench_function("model parse + full re-emit (the edited-document path)", |b| {
        b.iter(|| {
            let m = AnvilSkeleton::parse(&bytes, "big.xml").unwrap();
            m.to_bytes(Form::Standard).unwrap()
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
