//! Write and read a MakeHuman-sized body (`testing::synthetic_body`) as ir-json.
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_ir::irjson::IrJsonFormat;
use skelport_ir::{Diagnostics, Format, Frame, Input, ReadOptions, WriteOptions};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let doc = skelport_ir::testing::synthetic_body(Frame::GLTF, 163, 124, 154);
    let opts = WriteOptions { file_stem: "body".into(), ..Default::default() };
    let bytes = IrJsonFormat.write(&doc, &opts, &mut Diagnostics::default()).unwrap().main;
    c.bench_function("ir-json write body (19k verts, 163 joints)", |b| {
        b.iter(|| IrJsonFormat.write(black_box(&doc), &opts, &mut Diagnostics::default()).unwrap())
    });
    c.bench_function("ir-json read body", |b| {
        b.iter(|| {
            IrJsonFormat.read(Input { path: None, bytes: black_box(&bytes) }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
