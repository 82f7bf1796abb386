//! A MakeHuman-like body built from the real MPFB corpus data without the MPFB crate: the
//! base mesh (19,158 vertices, 18,486 quads, helper geometry included), the game_engine rig's
//! bone heads/tails/rolls/parents (53 bones, Blender frame) and its real weights. Written as
//! .glb and read back; this is the shape of what `skelport convert rig.game_engine.json
//! --weights weights.game_engine.json --mesh base.obj -o human.glb` hands the writer.

use skelport_gltf::GlbFormat;
use skelport_ir::proc::bone_from_head_tail;
use skelport_ir::testing::corpus_file;
use skelport_ir::{
    Bone, BoneId, DMat4, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, ReadOptions, Severity, Skeleton,
    Skin, Transform, WriteOptions,
};
use std::collections::HashMap;

/// Only `v` and `f` lines: enough for positions and polygons (the OBJ crate is not a dependency).
fn parse_obj(text: &str) -> (Vec<DVec3>, Faces) {
    let mut pos = Vec::new();
    let mut faces = Faces::default();
    for line in text.lines() {
        let mut it = line.split_whitespace();
        match it.next() {
            Some("v") => {
                let v: Vec<f64> = it.take(3).map(|x| x.parse().unwrap()).collect();
                pos.push(DVec3::new(v[0], v[1], v[2]));
            }
            Some("f") => {
                let idx: Vec<u32> = it.map(|t| t.split('/').next().unwrap().parse::<u32>().unwrap() - 1).collect();
                faces.counts.push(idx.len() as u32);
                faces.indices.extend(idx);
            }
            _ => {}
        }
    }
    (pos, faces)
}

fn v3(v: &serde_json::Value) -> DVec3 {
    DVec3::new(v[0].as_f64().unwrap(), v[1].as_f64().unwrap(), v[2].as_f64().unwrap())
}

fn body() -> Option<Document> {
    let obj = std::fs::read_to_string(corpus_file("mpfb/3dobjs/base.obj")?).ok()?;
    let rig: serde_json::Value =
        serde_json::from_slice(&std::fs::read(corpus_file("mpfb/rigs/standard/rig.game_engine.json")?).ok()?).ok()?;
    let weights: serde_json::Value =
        serde_json::from_slice(&std::fs::read(corpus_file("mpfb/rigs/standard/weights.game_engine.json")?).ok()?).ok()?;
    let mut doc = Document::new(Frame::BLENDER);
    let mut sk = Skeleton::new("game_engine");
    let rig = rig.as_object().unwrap();
    let names: Vec<&String> = rig.keys().collect();
    let index: HashMap<&str, usize> = names.iter().enumerate().map(|(i, n)| (n.as_str(), i)).collect();
    let mut world = Vec::new();
    for n in &names {
        let b = &rig[*n];
        let (head, tail) = (v3(&b["head"]["default_position"]), v3(&b["tail"]["default_position"]));
        let (rot, len) = bone_from_head_tail(head, tail, b["roll"].as_f64().unwrap_or(0.0));
        world.push(Transform::from_rt(rot, head));
        let parent = b["parent"].as_str().and_then(|p| index.get(p)).map(|&p| BoneId::from_index(p));
        let mut bone = Bone::new(n.as_str(), parent, Transform::IDENTITY);
        bone.length = Some(len);
        bone.roll = b["roll"].as_f64();
        sk.push(bone);
    }
    for i in 0..sk.bones.len() {
        let w = world[i].matrix();
        let local = match sk.bones[i].parent {
            Some(p) => world[p.index()].matrix().inverse() * w,
            None => w,
        };
        sk.bones[i].rest = Transform::from_matrix(&local).unwrap();
    }
    sk.sort_parents_first().unwrap();
    let world: Vec<DMat4> = sk.world_matrices();
    let (positions, faces) = parse_obj(&obj);
    let nv = positions.len();
    let joints: Vec<BoneId> = (0..sk.bones.len()).map(BoneId::from_index).collect();
    let slot_of_name: HashMap<String, u32> = sk.bones.iter().enumerate().map(|(i, b)| (b.name.clone(), i as u32)).collect();
    let mut triples = Vec::new();
    for (bone, list) in weights["weights"].as_object().unwrap() {
        let slot = slot_of_name[bone];
        for e in list.as_array().unwrap() {
            triples.push((e[0].as_u64().unwrap() as u32, slot, e[1].as_f64().unwrap()));
        }
    }
    doc.skeletons.push(sk);
    doc.meshes.push(Mesh { name: "body".into(), positions, faces, ..Default::default() });
    doc.skins.push(Skin {
        name: "body".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints,
        inverse_bind: world.iter().map(|m| m.inverse()).collect(),
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_triples(nv, triples),
        ext: Default::default(),
    });
    assert!(skelport_ir::validate::validate(&doc).is_empty(), "{:?}", skelport_ir::validate::validate(&doc));
    Some(doc)
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn makehuman_body_as_glb() {
    let Some(doc) = body() else { return };
    let mut diag = Diagnostics::default();
    let out = GlbFormat.write(&doc, &WriteOptions { file_stem: "human".into(), ..Default::default() }, &mut diag).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("human.glb");
    std::fs::write(&path, &out.main).unwrap();
    if let Some(keep) = std::env::var_os("SKELPORT_GLTF_OUT") {
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::write(std::path::Path::new(&keep).join("human-like.glb"), &out.main).unwrap();
    }
    // Vertices without weights are reported (bound to the first joint), and only then.
    let unweighted = doc.skins[0].influences.vertex_count() - doc.skins[0].influences.weighted_vertices();
    assert_eq!(unweighted > 0, diag.of(Severity::Loss).any(|d| d.code == "gltf.unweighted-vertices"), "{diag:?}");
    let back = GlbFormat.read(Input { path: Some(&path), bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    assert_eq!(back.skins[0].joints.len(), 53);
    let m = &back.meshes[0];
    assert_eq!(m.positions.len(), 19_158);
    assert_eq!(m.faces.len(), 2 * 18_486);
    let mut expect = doc.clone();
    expect.convert_frame(Frame::GLTF);
    let (wa, wb) = (expect.skeletons[0].world_matrices(), back.skeletons[0].world_matrices());
    let names = back.skeletons[0].name_map();
    for (i, b) in expect.skeletons[0].bones.iter().enumerate() {
        let j = names[b.name.as_str()].index();
        assert!((wa[i].w_axis - wb[j].w_axis).length() < 1e-6, "{}", b.name);
        assert_eq!(b.length, back.skeletons[0].bones[j].length);
        assert_eq!(b.roll, back.skeletons[0].bones[j].roll);
    }
    // Weighted vertices keep their influences (normalized, largest first).
    let (mut ia, ib) = (expect.skins[0].influences.clone(), &back.skins[0].influences);
    ia.prune(0.0);
    ia.normalize();
    ia.sort_descending();
    let mut compared = 0;
    for v in 0..ia.vertex_count() {
        let la: Vec<_> = ia.vertex(v).collect();
        if la.is_empty() {
            continue;
        }
        let lb: Vec<_> = ib.vertex(v).collect();
        assert_eq!(la.len(), lb.len(), "vertex {v}");
        for (x, y) in la.iter().zip(&lb) {
            assert!(x.0 == y.0 && (x.1 - y.1).abs() < 1e-6, "vertex {v}: {la:?} vs {lb:?}");
        }
        compared += 1;
    }
    assert!(compared > 13_000, "{compared}");
    if let Some(validator) = std::env::var_os("GLTF_VALIDATOR") {
        let script = skelport_ir::testing::workspace_root().join(".ci/tools/gltf-validate.mjs");
        let out = std::process::Command::new("node").arg(script).arg(&path).env("GLTF_VALIDATOR", validator).output().unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success() && text.contains(": 0 errors, 0 warnings"), "{text}");
    }
}
