//! Parse MakeHuman's base.obj (corpus: 19,158 vertices, 1.7 MB) and compute its vertex groups.
use criterion::{criterion_group, criterion_main, Criterion};
use std::hint::black_box;

fn bench(c: &mut Criterion) {
    let Some(path) = skelport_ir::testing::corpus_file("mpfb/3dobjs/base.obj") else { return };
    let bytes = std::fs::read(path).unwrap();
    c.bench_function("obj read base.obj", |b| b.iter(|| skelport_obj::parse(black_box(&bytes), "base.obj").unwrap()));
}

criterion_group!(benches, bench);
criterion_main!(benches);
