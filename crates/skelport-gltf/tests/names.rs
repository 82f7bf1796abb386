//! Every node name in a written glTF file is unique (issue 22: the identity root skelport adds
//! took a bone's name, two `godot_rig` nodes, and tools that find nodes by name picked the wrong
//! one). Bones keep their names; the nodes skelport adds give way with a note; a bone whose name
//! a bone of an earlier skeleton took is renamed with a loss, and skelport reads it back.

use skelport_gltf::GlbFormat;
use skelport_ir::{Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh};
use skelport_ir::{ReadOptions, Severity, Skeleton, Skin, Transform, WriteOptions};

fn skeleton(name: &str, bones: &[(&str, Option<u32>)]) -> Skeleton {
    let mut sk = Skeleton::new(name);
    for (i, (b, p)) in bones.iter().enumerate() {
        sk.push(Bone::new(*b, p.map(BoneId::new), Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.1 * i as f64, 0.0))));
    }
    sk
}

fn skinned(doc: &mut Document, sk: usize, mesh_name: &str) {
    let world = doc.skeletons[sk].world_matrices();
    let n = world.len();
    doc.meshes.push(Mesh {
        name: mesh_name.into(),
        positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y],
        faces: Faces { counts: vec![3], indices: vec![0, 1, 2] },
        ..Default::default()
    });
    doc.skins.push(Skin {
        name: format!("skin{sk}"),
        skeleton: skelport_ir::SkeletonId::from_index(sk),
        mesh: Some(skelport_ir::MeshId::from_index(doc.meshes.len() - 1)),
        joints: (0..n).map(BoneId::from_index).collect(),
        inverse_bind: world.iter().map(|m| m.inverse()).collect(),
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(vec![vec![(0, 1.0)]; 3]),
        ext: Default::default(),
    });
}

#[test]
fn node_names_are_unique_and_bones_keep_theirs() {
    let mut doc = Document::new(Frame::GLTF);
    // Two roots, so an identity root named after the skeleton is added: "godot_rig", as a bone.
    doc.skeletons.push(skeleton("godot_rig", &[("godot_rig", None), ("hips", Some(0)), ("ik", None)]));
    skinned(&mut doc, 0, "hips");
    doc.skeletons.push(skeleton("other", &[("hips", None), ("tail", Some(0))]));
    skinned(&mut doc, 1, "body");
    let mut diag = Diagnostics::default();
    let out = GlbFormat.write(&doc, &WriteOptions::default(), &mut diag).unwrap();
    let glb = gltf::Glb::from_slice(&out.main).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&glb.json).unwrap();
    let names: Vec<&str> = v["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    let unique: std::collections::HashSet<&&str> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    // The first skeleton's bones are named as they are; the added nodes give way.
    let joints: Vec<&str> = v["skins"][0]["joints"].as_array().unwrap().iter().map(|j| names[j.as_u64().unwrap() as usize]).collect();
    assert_eq!(joints, ["godot_rig", "hips", "ik"]);
    assert!(diag.items.iter().any(|d| d.severity == Severity::Info && d.code == "gltf.renamed-node"), "{:?}", diag.items);
    let loss: Vec<_> = diag.of(Severity::Loss).filter(|d| d.code == "gltf.renamed").collect();
    assert_eq!(loss.len(), 1, "{:?}", diag.items);
    assert!(loss[0].message.contains("\"hips\" → \"hips_2\""), "{}", loss[0].message);
    // skelport reads every bone's own name back.
    let back = GlbFormat.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    let got: Vec<Vec<&str>> = back.skeletons.iter().map(|s| s.bones.iter().map(|b| b.name.as_str()).collect()).collect();
    assert_eq!(got, [vec!["godot_rig", "hips", "ik"], vec!["hips", "tail"]]);
}

#[test]
fn nothing_to_write_is_an_error_and_an_empty_skeleton_is_no_loss() {
    let mut doc = Document::new(Frame::GLTF);
    doc.skeletons.push(Skeleton::new("skeleton"));
    let e = GlbFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("nothing to write"), "{e}");
    // With a mesh there is something: the mesh, and an empty skeleton loses nothing.
    doc.meshes.push(Mesh { name: "body".into(), positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y], ..Default::default() });
    let mut diag = Diagnostics::default();
    GlbFormat.write(&doc, &WriteOptions::default(), &mut diag).unwrap();
    assert!(diag.of(Severity::Loss).next().is_none(), "{:?}", diag.items);
}

/// Nodes skelport adds (one per mesh here) that want one name are numbered in work linear in
/// their count: trying `_2`, `_3`, … from the start for each was quadratic (4,000 meshes named
/// alike, 8 million tries). The names stay unique and the first keeps its own.
#[test]
fn many_nodes_wanting_one_name_take_linear_work() {
    let work = |n: usize| {
        let mut doc = Document::new(Frame::GLTF);
        for _ in 0..n {
            doc.meshes.push(Mesh { name: "m".into(), positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y], ..Default::default() });
        }
        let before = skelport_ir::names::work();
        let out = GlbFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap();
        let spent = skelport_ir::names::work() - before;
        let glb = gltf::Glb::from_slice(&out.main).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&glb.json).unwrap();
        let names: Vec<&str> = v["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
        let unique: std::collections::HashSet<&&str> = names.iter().collect();
        assert_eq!((names.len(), unique.len()), (n, n));
        assert_eq!((names[0], names[1], names[n - 1]), ("m", "m_2", format!("m_{n}").as_str()));
        spent
    };
    let (one, two) = (work(1000), work(2000));
    assert!(one >= 1000, "work was counted: {one}");
    assert!(two <= 2 * one + 100, "{one} then {two}");
}
