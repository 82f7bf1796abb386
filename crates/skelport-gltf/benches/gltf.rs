//! Reading and writing Fox.glb (corpus) and a MakeHuman-sized synthetic body (19,158 vertices in
//! quads, 163 joints, 4 influences per vertex, Blender frame: the writer converts it).

use criterion::{criterion_group, criterion_main, Criterion};
use skelport_gltf::{GlbFormat, GltfFormat};
use skelport_ir::{
    Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, ReadOptions, Skeleton, Skin,
    Transform, WriteOptions,
};
use std::hint::black_box;

fn body() -> Document {
    let mut doc = Document::new(Frame::BLENDER);
    let mut sk = Skeleton::new("body");
    for i in 0..163u32 {
        let parent = if i == 0 { None } else { Some(BoneId((i - 1) / 2)) };
        sk.push(Bone::new(
            format!("bone{i}"),
            parent,
            Transform::from_rt(DQuat::from_rotation_z(0.01 * i as f64), DVec3::new(0.0, 0.0, 0.05)),
        ));
    }
    let world = sk.world_matrices();
    let joints: Vec<BoneId> = (0..163).map(BoneId).collect();
    let inverse_bind: Vec<DMat4> = world.iter().map(|m| m.inverse()).collect();
    doc.skeletons.push(sk);
    let (w, h) = (124usize, 154usize); // 19,096 vertices
    let positions: Vec<DVec3> = (0..w * h).map(|i| DVec3::new((i % w) as f64 * 0.01, 0.0, (i / w) as f64 * 0.012)).collect();
    let mut faces = Faces::default();
    for z in 0..h - 1 {
        for x in 0..w - 1 {
            let a = (z * w + x) as u32;
            faces.counts.push(4);
            faces.indices.extend([a, a + 1, a + 1 + w as u32, a + w as u32]);
        }
    }
    let n = positions.len();
    doc.meshes.push(Mesh { name: "body".into(), positions, faces, ..Default::default() });
    let lists = (0..n).map(|v| {
        let j = (v % 160) as u32;
        vec![(j, 0.4), (j + 1, 0.3), (j + 2, 0.2), (j + 3, 0.1)]
    });
    doc.skins.push(Skin {
        name: "body".into(),
        skeleton: 0,
        mesh: Some(0),
        joints,
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(lists),
        ext: Default::default(),
    });
    doc
}

fn read(bytes: &[u8]) -> Document {
    GltfFormat.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap()
}

fn bench(c: &mut Criterion) {
    let opts = WriteOptions { file_stem: "bench".into(), ..Default::default() };
    if let Some(path) = skelport_ir::testing::corpus_file("gltf/Fox/Fox.glb") {
        let bytes = std::fs::read(path).unwrap();
        let doc = read(&bytes);
        c.bench_function("read Fox.glb", |b| b.iter(|| read(black_box(&bytes))));
        c.bench_function("write Fox.glb", |b| b.iter(|| GlbFormat.write(black_box(&doc), &opts, &mut Diagnostics::default()).unwrap()));
    }
    let doc = body();
    let glb = GlbFormat.write(&doc, &opts, &mut Diagnostics::default()).unwrap().main;
    c.bench_function("write body.glb (19k verts, 163 joints, Blender frame)", |b| {
        b.iter(|| GlbFormat.write(black_box(&doc), &opts, &mut Diagnostics::default()).unwrap())
    });
    c.bench_function("write body.gltf", |b| b.iter(|| GltfFormat.write(black_box(&doc), &opts, &mut Diagnostics::default()).unwrap()));
    c.bench_function("read body.glb", |b| b.iter(|| read(black_box(&glb))));
}

criterion_group!(benches, bench);
criterion_main!(benches);
