//! G4MF round trips, rules and refusals.

use skelport_g4mf::{G4bFormat, G4tfFormat};
use skelport_ir::{
    Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, ReadOptions, Severity,
    Skeleton, Skin, Transform, WriteOptions,
};

/// A small humanoid chain in Blender's frame with names G4MF forbids, lengths and rolls.
fn rig(bind_differs: bool) -> Document {
    let mut sk = Skeleton::new("rig.main");
    let hips = sk.push(Bone::new("hips", None, Transform::from_rt(DQuat::from_rotation_x(0.1), DVec3::new(0.0, 0.0, 1.0))));
    let spine = sk.push(Bone::new("spine.01", Some(hips), Transform::from_rt(DQuat::from_rotation_z(0.2), DVec3::new(0.0, 0.2, 0.0))));
    let arm = sk.push(Bone::new("upperarm.L", Some(spine), Transform::from_rt(DQuat::from_rotation_y(-1.2), DVec3::new(0.15, 0.3, 0.0))));
    let _tip = sk.push(Bone::new("mixamorig:Tip", Some(arm), Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.25, 0.0))));
    for b in &mut sk.bones {
        b.length = Some(0.2);
        b.roll = Some(0.5);
    }
    sk.bones[3].deform = false;
    let world = sk.world_matrices();
    let positions: Vec<DVec3> = (0..8).map(|i| DVec3::new(i as f64 * 0.05, 1.0 + i as f64 * 0.1, 0.02)).collect();
    let mut d = Document::new(Frame::BLENDER);
    d.meshes.push(Mesh {
        name: "body.mesh".into(),
        positions,
        faces: Faces { counts: vec![4, 4, 3], indices: vec![0, 1, 2, 3, 2, 3, 4, 5, 5, 6, 7] },
        ..Default::default()
    });
    let mut ibm: Vec<DMat4> = [0, 1, 2].iter().map(|&j| world[j].inverse()).collect();
    if bind_differs {
        ibm[2] = (world[2] * DMat4::from_rotation_z(0.4)).inverse();
    }
    d.skins.push(Skin {
        name: "skin".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints: vec![BoneId::new(0), BoneId::new(1), BoneId::new(2)],
        inverse_bind: ibm,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists((0..8).map(|v| match v % 3 {
            0 => vec![(0, 1.0)],
            1 => vec![(0, 0.25), (1, 0.75)],
            _ => vec![(2, 0.5), (1, 0.3), (0, 0.2)],
        })),
        ext: Default::default(),
    });
    d.skeletons.push(sk);
    d
}

fn write(f: &dyn Format, d: &Document, embed: bool) -> (Vec<u8>, Diagnostics) {
    let mut diag = Diagnostics::default();
    let out = f.write(d, &WriteOptions { file_stem: "t".into(), embed, ..Default::default() }, &mut diag).unwrap();
    assert!(out.side_files.is_empty() || !embed);
    (out.main, diag)
}

fn read(f: &dyn Format, bytes: &[u8]) -> (Document, Diagnostics) {
    let mut diag = Diagnostics::default();
    let d = f.read(Input { path: None, bytes }, &ReadOptions::default(), &mut diag).unwrap_or_else(|e| panic!("{e}"));
    (d, diag)
}

fn heads(d: &Document) -> Vec<(String, DVec3)> {
    let mut d = d.clone();
    d.convert_frame(Frame::GLTF);
    let sk = &d.skeletons[0];
    sk.world_transforms().iter().zip(&sk.bones).map(|(w, b)| (b.name.clone(), w.translation)).collect()
}

fn normalized(d: &Document) -> Vec<Vec<(String, f64)>> {
    let s = &d.skins[0];
    let sk = d.skeleton(s.skeleton);
    let mut inf = s.influences.clone();
    inf.normalize();
    (0..inf.vertex_count())
        .map(|v| {
            let mut e: Vec<(String, f64)> = inf.vertex(v).map(|(j, w)| (sk.bones[s.joints[j as usize].index()].name.clone(), w)).collect();
            e.sort_by(|a, b| a.0.cmp(&b.0));
            e
        })
        .collect()
}

#[test]
fn ir_round_trip_keeps_names_heads_influences_and_extras() {
    let src = rig(false);
    for f in [&G4tfFormat as &dyn Format, &G4bFormat] {
        let (bytes, diag) = write(f, &src, true);
        assert_eq!(diag.of(Severity::Loss).count(), 0, "{:?}", diag.items);
        let (back, _) = read(f, &bytes);
        let (a, b) = (heads(&src), heads(&back));
        assert_eq!(a.len(), b.len());
        for ((na, ha), (nb, hb)) in a.iter().zip(&b) {
            assert_eq!(na, nb, "original names are restored from extras");
            assert!((*ha - *hb).length() < 1e-9, "{na}: {ha} vs {hb}");
        }
        let (ia, ib) = (normalized(&src), normalized(&back));
        for (x, y) in ia.iter().zip(&ib) {
            assert_eq!(x.len(), y.len());
            for (p, q) in x.iter().zip(y) {
                assert_eq!(p.0, q.0);
                assert!((p.1 - q.1).abs() < 1e-6);
            }
        }
        let sk = &back.skeletons[0];
        assert_eq!(sk.name, "rig.main");
        assert_eq!(sk.bones[1].length, Some(0.2));
        assert_eq!(sk.bones[1].roll, Some(0.5));
        assert!(!sk.bones[3].deform);
        // Skinned positions at rest agree (pose test with the identity pose).
        let pa = skelport_ir::pose::deform(&src, 0, &Default::default());
        let pb = skelport_ir::pose::deform(&back, 0, &Default::default());
        assert!(skelport_ir::pose::max_deviation(&pa, &pb).unwrap() < 1e-6);
    }
}

#[test]
fn text_and_binary_round_trip_losslessly() {
    let src = rig(false);
    let (t1, _) = write(&G4tfFormat, &src, true);
    let (d1, _) = read(&G4tfFormat, &t1);
    let (b1, _) = write(&G4bFormat, &d1, true);
    let (d2, _) = read(&G4bFormat, &b1);
    assert_eq!(d1, d2, "g4tf → IR → g4b → IR is lossless");
    let (t2, _) = write(&G4tfFormat, &d2, true);
    assert_eq!(t1, t2, "and writes the same text again");
    // Compressed binary reads back the same.
    let mut diag = Diagnostics::default();
    let z = G4bFormat.write(&d1, &WriteOptions { compress: true, ..Default::default() }, &mut diag).unwrap().main;
    assert!(z.windows(4).any(|w| w == b"Zstd"));
    assert_eq!(read(&G4bFormat, &z).0, d2);
}

#[test]
fn bind_pose_is_written_and_the_rest_pose_kept_in_skelport_extras() {
    let src = rig(true);
    let (bytes, diag) = write(&G4tfFormat, &src, true);
    assert!(diag.of(Severity::Loss).all(|d| d.code != "g4mf.rest-pose"), "{:?}", diag.items);
    assert!(diag.items.iter().any(|d| d.code == "g4mf.rest-pose" && d.message.contains("skelport extras")), "{:?}", diag.items);
    let mut s = src.clone();
    s.convert_frame(Frame::GLTF);
    // Other readers see the bind pose (G4MF's one pose): the moved joint's node sits where the
    // inverse bind matrix puts it, and at that pose the mesh is its undeformed bind shape.
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let mut plain = v.clone();
    for n in plain["nodes"].as_array_mut().unwrap() {
        if let Some(x) = n.get_mut("extras") {
            x["skelport"].as_object_mut().unwrap().remove("rest");
        }
    }
    let (bind, _) = read(&G4tfFormat, &serde_json::to_vec(&plain).unwrap());
    let w = bind.skeletons[0].world_matrices();
    assert!((w[2] - s.skins[0].inverse_bind[2].inverse()).to_cols_array().iter().all(|x| x.abs() < 1e-9));
    let at_bind = skelport_ir::pose::deform(&bind, 0, &Default::default());
    assert!(skelport_ir::pose::max_deviation(&at_bind, &s.meshes[0].positions).unwrap() < 1e-6);
    // skelport reads the rest pose back (exactly: JSON numbers round-trip) with the bind pose
    // still in the inverse binds, so the skinned mesh poses as the source's does.
    let (back, _) = read(&G4tfFormat, &bytes);
    for (a, b) in s.skeletons[0].bones.iter().zip(&back.skeletons[0].bones) {
        assert_eq!(a.rest, b.rest, "{}", a.name);
    }
    for (a, b) in s.skins[0].inverse_bind.iter().zip(&back.skins[0].inverse_bind) {
        assert!((*a - *b).to_cols_array().iter().all(|x| x.abs() < 1e-9));
    }
    for seed in 0..3 {
        let pose = skelport_ir::pose::random_pose(s.skeletons[0].bones.iter().map(|b| b.name.as_str()), seed, 0.6);
        let (x, y) = (skelport_ir::pose::deform(&s, 0, &pose), skelport_ir::pose::deform(&back, 0, &pose));
        assert!(skelport_ir::pose::max_deviation(&x, &y).unwrap() < 1e-6);
    }
}

#[test]
fn written_files_follow_the_structural_rules() {
    let (bytes, _) = write(&G4tfFormat, &rig(false), true);
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    let nodes = v["nodes"].as_array().unwrap();
    assert!(nodes[0].get("position").is_none() && nodes[0].get("rotor").is_none());
    let mut names = std::collections::HashSet::new();
    for n in nodes {
        let name = n["name"].as_str().unwrap();
        assert!(skelport_g4mf::name_is_legal(name), "{name}");
        assert!(names.insert(name.to_string()), "unique: {name}");
        if let Some(c) = n.get("children") {
            assert!(!c.as_array().unwrap().is_empty());
        }
    }
    let skel = nodes.iter().find(|n| n.get("skeleton").is_some()).unwrap();
    let joints: Vec<u64> = skel["skeleton"]["joints"].as_array().unwrap().iter().map(|j| j.as_u64().unwrap()).collect();
    assert!(joints.windows(2).all(|w| w[0] < w[1]), "joints strictly increasing: {joints:?}");
    assert_eq!(skel["children"][0].as_u64(), Some(joints[0]), "single root bone first, and joints[0]");
    assert_eq!(v["meshes"][0]["skin"]["groupNames"][1], "spine_01");
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn upstream_4d_examples_read_without_error_and_stay_untouched() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    for f in ["g4mf/extracted-examples/minimal_4d.g4tf", "g4mf/extracted-examples/node_child_4d.g4tf"] {
        let p = c.join(f);
        let before = std::fs::read(&p).unwrap();
        let (d, diag) = read(&G4tfFormat, &before);
        assert!(d.skeletons.is_empty());
        assert!(diag.items.iter().any(|x| x.message.contains("4D")), "{:?}", diag.items);
        assert_eq!(std::fs::read(&p).unwrap(), before);
    }
    // A 4D file with a skeleton is refused clearly.
    let four = br#"{"asset":{"dimension":4},"nodes":[{"children":[1]},{"skeleton":{}}]}"#;
    let e =
        G4tfFormat.read(Input { path: None, bytes: four }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("4D") && e.contains("3D only"), "{e}");
}

#[test]
fn lying_containers_and_accessors_are_refused_not_panicked_on() {
    let (bytes, _) = write(&G4bFormat, &rig(false), true);
    let mut big = bytes.clone();
    big[8..16].copy_from_slice(&(bytes.len() as u64 + 100).to_le_bytes());
    let e =
        G4bFormat.read(Input { path: None, bytes: &big }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("byte 8") && e.contains("header says"), "{e}");
    let mut chunk = bytes.clone();
    chunk[24..32].copy_from_slice(&u64::MAX.wrapping_shr(1).to_le_bytes());
    let e =
        G4bFormat.read(Input { path: None, bytes: &chunk }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("runs past the end"), "{e}");
    for n in 0..bytes.len().min(400) {
        let _ = G4bFormat.read(Input { path: None, bytes: &bytes[..n] }, &ReadOptions::default(), &mut Diagnostics::default());
    }
    let (text, _) = write(&G4tfFormat, &rig(false), true);
    let mut v: serde_json::Value = serde_json::from_slice(&text).unwrap();
    v["bufferViews"][0]["byteLength"] = 1_000_000.into();
    let e = G4tfFormat
        .read(Input { path: None, bytes: &serde_json::to_vec(&v).unwrap() }, &ReadOptions::default(), &mut Diagnostics::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("bufferViews[0]") && e.contains("past the end"), "{e}");
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn written_g4tf_validates_against_the_upstream_schemas() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let dir = c.join("g4mf/specification/schema");
    // Register every schema file under a file:// URI that mirrors its path, so relative $refs resolve.
    let mut opts = jsonschema::options();
    let mut stack = vec![dir.clone()];
    let mut main = None;
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let mut v: serde_json::Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            let uri = format!("file:///g4mf/{}", p.strip_prefix(&dir).unwrap().display());
            if let Some(o) = v.as_object_mut() {
                o.insert("$id".into(), uri.clone().into());
            }
            if p.file_name().unwrap() == "g4mf.schema.json" {
                main = Some(v.clone());
            }
            opts = opts.with_resource(uri, jsonschema::Resource::from_contents(v).unwrap());
        }
    }
    let validator = opts.build(&main.unwrap()).expect("schema");
    // With per-corner texture coordinates and normals: textureMap and normals bindings.
    let mut with_uvs = rig(false);
    let m = &mut with_uvs.meshes[0];
    let uv = m.faces.indices.iter().enumerate().map(|(c, &v)| skelport_ir::DVec2::new(v as f64 * 0.1, (c % 2) as f64)).collect();
    m.uvs.push(skelport_ir::UvSet { name: String::new(), uvs: skelport_ir::Uvs::PerCorner(uv) });
    m.normals = Some(skelport_ir::Normals::PerCorner(m.faces.indices.iter().map(|&v| DVec3::new(0.0, -1.0, v as f64 * 0.1)).collect()));
    for d in [rig(false), rig(true), with_uvs] {
        let (bytes, _) = write(&G4tfFormat, &d, true);
        let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
        let errors: Vec<String> = validator.iter_errors(&v).map(|e| format!("{e} at {}", e.instance_path)).collect();
        assert!(errors.is_empty(), "{errors:#?}");
    }
}
