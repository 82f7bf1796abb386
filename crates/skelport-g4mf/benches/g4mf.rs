//! Write and read a ~13k-vertex skinned body (`skelport_ir::testing::synthetic_body`) as .g4b
//! and as .g4tf.
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_g4mf::{G4bFormat, G4tfFormat};
use skelport_ir::{Diagnostics, Format, Frame, Input, ReadOptions, WriteOptions};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let doc = skelport_ir::testing::synthetic_body(Frame::GLTF, 60, 100, 134);
    let opts = WriteOptions { file_stem: "body".into(), embed: true, ..Default::default() };
    let read =
        |f: &dyn Format, bytes: &[u8]| f.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    for (name, f) in [("g4b", &G4bFormat as &dyn Format), ("g4tf", &G4tfFormat)] {
        let bytes = f.write(&doc, &opts, &mut Diagnostics::default()).unwrap().main;
        c.bench_function(&format!("{name} write 13k-vertex body"), |b| {
            b.iter(|| f.write(black_box(&doc), &opts, &mut Diagnostics::default()).unwrap())
        });
        c.bench_function(&format!("{name} read 13k-vertex body"), |b| b.iter(|| read(f, black_box(&bytes))));
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
