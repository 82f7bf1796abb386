//! The `anvil` (Standard) reader and writer on a generated 65,535-bone skeleton (the engine's
//! maximum, Unity and later), and both forms (`anvil`, `anvil-schema`) on the project's biped
//! fixture (testdata/anvil, written from the seed's example). Names: `<format> read|write <input>`.
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_anvil::{AnvilFormat, AnvilSchemaFormat, AnvilSkeleton, Form, ANVIL_FRAME};
use skelport_ir::{Bone, BoneId, DQuat, DVec3, Diagnostics, Document, Format, Input, ReadOptions, Skeleton, Transform, WriteOptions};
use std::time::Duration;

fn big() -> Vec<u8> {
    let mut sk = Skeleton::new("big");
    for i in 0..65_535usize {
        let parent = if i == 0 { None } else { Some(BoneId::from_index((i - 1) / 4)) };
        let t = Transform::from_rt(DQuat::from_rotation_z(0.001 * (i % 7) as f64), DVec3::new(0.01, 0.02 * (i % 3) as f64, 0.05));
        sk.push(Bone::new(format!("b{i}"), parent, t));
    }
    let mut d = Document::new(ANVIL_FRAME);
    d.skeletons.push(sk);
    AnvilFormat.write(&d, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main
}

fn bench(c: &mut Criterion) {
    let bytes = big();
    let mut g = c.benchmark_group("big inputs");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("anvil round trip (read + write) 65,535 bones", |b| {
        b.iter(|| {
            let mut d = Diagnostics::default();
            let doc = AnvilFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut d).unwrap();
            let out = AnvilFormat.write(&doc, &WriteOptions::default(), &mut d).unwrap();
            assert_eq!(out.main.len(), bytes.len());
        })
    });
    g.bench_function("anvil read 65,535 bones", |b| {
        b.iter(|| AnvilFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap())
    });
    let doc = AnvilFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    g.bench_function("anvil write 65,535 bones (the document read, unedited)", |b| {
        b.iter(|| AnvilFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap())
    });
    g.bench_function("anvil model parse + full re-emit 65,535 bones (the edited-document path)", |b| {
        b.iter(|| {
            let m = AnvilSkeleton::parse(&bytes, "big.xml").unwrap();
            m.to_bytes(Form::Standard).unwrap()
        })
    });
    g.finish();

    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/anvil");
    for (name, f, file) in
        [("anvil", &AnvilFormat as &dyn Format, "biped.standard.xml"), ("anvil-schema", &AnvilSchemaFormat, "biped.schema.xml")]
    {
        let bytes = std::fs::read(fixtures.join(file)).expect("biped fixture");
        let read = || f.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
        let doc = read();
        c.bench_function(&format!("{name} read {file}"), |b| b.iter(read));
        c.bench_function(&format!("{name} write {file}"), |b| {
            b.iter(|| f.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap())
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
