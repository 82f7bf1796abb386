//! Reading and writing Fox.glb (corpus) and a MakeHuman-sized synthetic body
//! (`skelport_ir::testing::synthetic_body`: 19,096 vertices in quads, 163 joints, 4 influences
//! per vertex, Blender frame: the writer converts it), as .glb and as .gltf.

use criterion::{criterion_group, criterion_main, Criterion};
use skelport_gltf::{GlbFormat, GltfFormat};
use skelport_ir::{Diagnostics, Document, Format, Frame, Input, ReadOptions, WriteOptions};
use std::hint::black_box;

fn read(bytes: &[u8]) -> Document {
    GltfFormat.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap()
}

fn bench(c: &mut Criterion) {
    let opts = WriteOptions { file_stem: "bench".into(), ..Default::default() };
    if let Some(path) = skelport_ir::testing::corpus_file("gltf/Fox/Fox.glb") {
        let bytes = std::fs::read(path).unwrap();
        let doc = read(&bytes);
        c.bench_function("glb read Fox.glb", |b| b.iter(|| read(black_box(&bytes))));
        c.bench_function("glb write Fox.glb", |b| b.iter(|| GlbFormat.write(black_box(&doc), &opts, &mut Diagnostics::default()).unwrap()));
    }
    let doc = skelport_ir::testing::synthetic_body(Frame::BLENDER, 163, 124, 154);
    let glb = GlbFormat.write(&doc, &opts, &mut Diagnostics::default()).unwrap().main;
    let embedded = WriteOptions { embed: true, ..opts.clone() };
    let gltf = GltfFormat.write(&doc, &embedded, &mut Diagnostics::default()).unwrap().main;
    c.bench_function("glb write body (19k verts, 163 joints, Blender frame)", |b| {
        b.iter(|| GlbFormat.write(black_box(&doc), &opts, &mut Diagnostics::default()).unwrap())
    });
    c.bench_function("glb read body", |b| b.iter(|| read(black_box(&glb))));
    c.bench_function("gltf write body (embedded buffer)", |b| {
        b.iter(|| GltfFormat.write(black_box(&doc), &embedded, &mut Diagnostics::default()).unwrap())
    });
    c.bench_function("gltf read body (embedded buffer)", |b| b.iter(|| read(black_box(&gltf))));
}

criterion_group!(benches, bench);
criterion_main!(benches);
