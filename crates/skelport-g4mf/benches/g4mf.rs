//! Write and read a ~13k-vertex skinned body as .g4b.
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_g4mf::G4bFormat;
use skelport_ir::{
    Bone, BoneId, DMat4, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, ReadOptions, Skeleton, Skin,
    Transform, WriteOptions,
};

fn body() -> Document {
    let mut sk = Skeleton::new("body");
    for i in 0..60u32 {
        let parent = if i == 0 { None } else { Some(BoneId((i - 1) / 2)) };
        sk.push(Bone::new(
            format!("b{i}"),
            parent,
            Transform::from_rt(skelport_ir::DQuat::from_rotation_z(0.01 * i as f64), DVec3::new(0.0, 0.1, 0.0)),
        ));
    }
    let w = sk.world_matrices();
    let n = 13_380usize;
    let positions: Vec<DVec3> = (0..n).map(|i| DVec3::new((i % 100) as f64 * 0.01, (i / 100) as f64 * 0.01, 0.0)).collect();
    let mut faces = Faces::default();
    for i in 0..n - 101 {
        if i % 100 != 99 {
            faces.counts.push(4);
            faces.indices.extend([i as u32, i as u32 + 1, i as u32 + 101, i as u32 + 100]);
        }
    }
    let infl =
        Influences::from_lists((0..n).map(|i| vec![((i % 60) as u32, 0.6), (((i + 7) % 60) as u32, 0.3), (((i + 19) % 60) as u32, 0.1)]));
    let mut d = Document::new(Frame::GLTF);
    d.meshes.push(Mesh { name: "body".into(), positions, faces, ..Default::default() });
    d.skins.push(Skin {
        name: "body".into(),
        skeleton: 0,
        mesh: Some(0),
        joints: (0..60).map(BoneId).collect(),
        inverse_bind: w.iter().map(|m| m.inverse()).collect(),
        bind_shape: DMat4::IDENTITY,
        influences: infl,
        ext: Default::default(),
    });
    d.skeletons.push(sk);
    d
}

fn bench(c: &mut Criterion) {
    let doc = body();
    let opts = WriteOptions { file_stem: "body".into(), ..Default::default() };
    let bytes = G4bFormat.write(&doc, &opts, &mut Diagnostics::default()).unwrap().main;
    c.bench_function("g4b write 13k-vertex body", |b| b.iter(|| G4bFormat.write(&doc, &opts, &mut Diagnostics::default()).unwrap()));
    c.bench_function("g4b read 13k-vertex body", |b| {
        b.iter(|| G4bFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
