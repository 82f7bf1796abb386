//! Files the Khronos validator accepts are read (issue 22): glTF parts skelport does not model
//! (animations, including KHR_animation_pointer channels without `target.node`; cameras;
//! materials; textures) are skipped with one note; scenes without `nodes`, sparse accessors and
//! KHR_mesh_quantization's integer attributes are read as glTF 2.0 defines them.

use base64::Engine as _;
use serde_json::{json, Value};
use skelport_gltf::GltfFormat;
use skelport_ir::{Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, ReadOptions};
use skelport_ir::{Skeleton, Skin, Transform, WriteOptions};

/// A small skinned document written by skelport as embedded .gltf JSON.
fn written() -> Value {
    let mut doc = Document::new(Frame::GLTF);
    let mut sk = Skeleton::new("rig");
    sk.push(Bone::new("hips", None, Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 1.0, 0.0))));
    sk.push(Bone::new("spine", Some(BoneId::new(0)), Transform::from_rt(DQuat::from_rotation_z(0.3), DVec3::new(0.0, 0.5, 0.0))));
    let ib = sk.world_matrices().iter().map(|m| m.inverse()).collect();
    doc.skeletons.push(sk);
    let positions = vec![DVec3::new(0.0, 1.0, 0.0), DVec3::new(0.2, 1.2, 0.0), DVec3::new(0.0, 1.6, 0.1)];
    doc.meshes.push(Mesh {
        name: "body".into(),
        positions,
        faces: Faces { counts: vec![3], indices: vec![0, 1, 2] },
        ..Default::default()
    });
    doc.skins.push(Skin {
        name: "body".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints: vec![BoneId::new(0), BoneId::new(1)],
        inverse_bind: ib,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(vec![vec![(0, 1.0)], vec![(0, 0.5), (1, 0.5)], vec![(1, 1.0)]]),
        ext: Default::default(),
    });
    let out = GltfFormat.write(&doc, &WriteOptions { embed: true, ..Default::default() }, &mut Diagnostics::default()).unwrap();
    serde_json::from_slice(&out.main).unwrap()
}

fn read(v: &Value) -> Result<(Document, Diagnostics), String> {
    let bytes = serde_json::to_vec(v).unwrap();
    let mut diag = Diagnostics::default();
    let doc = GltfFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut diag).map_err(|e| e.to_string())?;
    Ok((doc, diag))
}

/// Append `bytes` as a new embedded buffer with one view; returns the view's index.
fn add_view(v: &mut Value, bytes: &[u8]) -> usize {
    let uri = format!("data:application/octet-stream;base64,{}", base64::engine::general_purpose::STANDARD.encode(bytes));
    let buffers = v["buffers"].as_array_mut().unwrap();
    buffers.push(json!({ "byteLength": bytes.len(), "uri": uri }));
    let b = buffers.len() - 1;
    let views = v["bufferViews"].as_array_mut().unwrap();
    views.push(json!({ "buffer": b, "byteLength": bytes.len() }));
    views.len() - 1
}

#[test]
fn parts_skelport_does_not_read_are_skipped_with_one_note() {
    let mut v = written();
    let (plain, _) = read(&v).unwrap();
    // An animation whose channels target JSON pointers (KHR_animation_pointer: no target.node),
    // a camera, a material with an extension, a texture, and a second, empty scene.
    let times = add_view(&mut v, &[0.0f32, 1.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
    let accs = v["accessors"].as_array_mut().unwrap();
    accs.push(json!({ "bufferView": times, "componentType": 5126, "count": 2, "type": "SCALAR", "min": [0.0], "max": [1.0] }));
    let t = accs.len() - 1;
    v["animations"] = json!([{
        "channels": [{ "sampler": 0, "target": { "path": "pointer",
            "extensions": { "KHR_animation_pointer": { "pointer": "/materials/0/pbrMetallicRoughness/roughnessFactor" } } } }],
        "samplers": [{ "input": t, "output": t }]
    }]);
    v["extensionsUsed"] = json!(["KHR_animation_pointer", "KHR_materials_emissive_strength"]);
    v["cameras"] = json!([{ "type": "perspective", "perspective": { "yfov": 0.8, "znear": 0.1 } }]);
    v["materials"] = json!([{ "pbrMetallicRoughness": { "roughnessFactor": 0.5 },
        "extensions": { "KHR_materials_emissive_strength": { "emissiveStrength": 2.0 } } }]);
    v["meshes"][0]["primitives"][0]["material"] = json!(0);
    v["scenes"].as_array_mut().unwrap().push(json!({ "name": "empty" }));
    let (doc, diag) = read(&v).unwrap_or_else(|e| panic!("a valid glTF is refused: {e}"));
    assert_eq!(doc, plain, "the skipped parts change nothing skelport reads");
    let notes: Vec<_> = diag.items.iter().filter(|d| d.code == "gltf.not-read").collect();
    assert_eq!(notes.len(), 1, "{:?}", diag.items);
    assert!(notes[0].message.contains("1 animations") && notes[0].message.contains("1 cameras"), "{}", notes[0].message);
    // The same file still refuses what is wrong in the parts it reads.
    v["skins"][0]["joints"] = json!([0, 0]);
    assert!(read(&v).unwrap_err().contains("listed twice"));
}

#[test]
fn sparse_accessors_are_applied() {
    let mut v = written();
    let (plain, _) = read(&v).unwrap();
    let pos = v["meshes"][0]["primitives"][0]["attributes"]["POSITION"].as_u64().unwrap() as usize;
    // Vertex 2 moves to (1, 2, 3): one sparse index (u16, padded) and one VEC3 value.
    let iv = add_view(&mut v, &[2u8, 0, 0, 0]);
    let vv = add_view(&mut v, &[1.0f32, 2.0, 3.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>());
    v["accessors"][pos]["sparse"] =
        json!({ "count": 1, "indices": { "bufferView": iv, "componentType": 5123 }, "values": { "bufferView": vv } });
    v["accessors"][pos]["max"] = json!([1.0, 2.0, 3.0]);
    let (doc, _) = read(&v).unwrap_or_else(|e| panic!("a sparse accessor is refused: {e}"));
    assert_eq!(doc.meshes[0].positions[..2], plain.meshes[0].positions[..2]);
    assert_eq!(doc.meshes[0].positions[2], DVec3::new(1.0, 2.0, 3.0));
    // Without a buffer view, the base is zeros.
    v["accessors"][pos].as_object_mut().unwrap().remove("bufferView");
    let (doc, _) = read(&v).unwrap();
    assert_eq!(doc.meshes[0].positions, [DVec3::ZERO, DVec3::ZERO, DVec3::new(1.0, 2.0, 3.0)]);
    // An index past the count is refused, naming the place.
    let iv = add_view(&mut v, &[7u8, 0, 0, 0]);
    v["accessors"][pos]["sparse"]["indices"]["bufferView"] = json!(iv);
    let e = read(&v).unwrap_err();
    assert!(e.contains(&format!("/accessors/{pos}/sparse/indices")) && e.contains("is 7"), "{e}");
}

#[test]
fn quantized_positions_are_read_when_the_extension_is_required() {
    let mut v = written();
    let (plain, _) = read(&v).unwrap();
    let pos = v["meshes"][0]["primitives"][0]["attributes"]["POSITION"].as_u64().unwrap() as usize;
    // Positions as unnormalized SHORTs (KHR_mesh_quantization): the float positions × 10, read
    // back as those integers.
    let ints: Vec<i16> = plain.meshes[0].positions.iter().flat_map(|p| [p.x, p.y, p.z]).map(|x| (x * 10.0).round() as i16).collect();
    let mut bytes: Vec<u8> = ints.iter().flat_map(|x| x.to_le_bytes()).collect();
    bytes.resize(bytes.len().next_multiple_of(4), 0);
    let view = add_view(&mut v, &bytes);
    v["accessors"][pos] = json!({ "bufferView": view, "componentType": 5122, "count": 3, "type": "VEC3",
        "min": [0, 10, 0], "max": [2, 16, 1] });
    v["extensionsUsed"] = json!(["KHR_mesh_quantization"]);
    v["extensionsRequired"] = json!(["KHR_mesh_quantization"]);
    let (doc, _) = read(&v).unwrap_or_else(|e| panic!("KHR_mesh_quantization is refused: {e}"));
    for (a, b) in doc.meshes[0].positions.iter().zip(&plain.meshes[0].positions) {
        assert!((*a - *b * 10.0).length() < 1e-5, "{a} vs {b}");
    }
    // Mesh compression is still refused: skelport cannot decode it.
    v["extensionsRequired"] = json!(["KHR_draco_mesh_compression"]);
    assert!(read(&v).unwrap_err().contains("KHR_draco_mesh_compression"));
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn the_animation_pointer_sample_from_blender_is_read() {
    let Some(p) = skelport_ir::testing::corpus_file("realworld/blenderio_24_animation_pointer/24_animation_pointer.gltf") else { return };
    let bytes = std::fs::read(&p).unwrap();
    let mut diag = Diagnostics::default();
    let doc = GltfFormat
        .read(Input { path: Some(&p), bytes: &bytes }, &ReadOptions::default(), &mut diag)
        .unwrap_or_else(|e| panic!("the Khronos validator accepts this file (0 errors): {e}"));
    assert_eq!(doc.skins.len(), 1);
    assert!(!doc.skeletons[0].bones.is_empty());
    assert_eq!(diag.items.iter().filter(|d| d.code == "gltf.not-read").count(), 1, "{:?}", diag.items);
}

#[test]
fn unskinned_mesh_nodes_are_read_at_their_place() {
    let mut v = written();
    let (plain, _) = read(&v).unwrap();
    // The same mesh also as a rigid node: moved 1 m up and mirrored in X.
    v["nodes"]
        .as_array_mut()
        .unwrap()
        .push(json!({ "name": "statue", "mesh": 0, "translation": [0.0, 1.0, 0.0], "scale": [-1.0, 1.0, 1.0] }));
    let n = v["nodes"].as_array().unwrap().len() - 1;
    v["scenes"][0]["nodes"].as_array_mut().unwrap().push(json!(n));
    let (doc, diag) = read(&v).unwrap();
    assert_eq!(doc.meshes.len(), 2, "{:?}", diag.items);
    assert!(doc.skins.iter().all(|s| s.mesh != Some(skelport_ir::MeshId::new(1))));
    let (a, b) = (&plain.meshes[0], &doc.meshes[1]);
    for (p, q) in a.positions.iter().zip(&b.positions) {
        assert_eq!(*q, DVec3::new(-p.x, p.y + 1.0, p.z));
    }
    // Mirrored: each face's corners reversed, so it keeps its front.
    assert_eq!(b.faces.indices, a.faces.indices.iter().rev().copied().collect::<Vec<_>>());
}

#[test]
fn a_mesh_node_below_a_bone_moves_with_it() {
    let mut v = written();
    let nodes = v["nodes"].as_array().unwrap();
    let spine = nodes.iter().position(|n| n["name"] == "spine").unwrap();
    // A hat on the spine (three.js's RobotExpressive hangs 15 rigid meshes from its joints).
    v["nodes"].as_array_mut().unwrap().push(json!({ "name": "hat", "mesh": 0, "translation": [0.0, 0.2, 0.0] }));
    let hat = v["nodes"].as_array().unwrap().len() - 1;
    v["nodes"][spine]["children"] = json!([hat]);
    let (doc, diag) = read(&v).unwrap();
    assert!(diag.items.iter().any(|d| d.code == "gltf.mesh-on-bone" && d.severity == skelport_ir::Severity::Info), "{:?}", diag.items);
    let rigid = doc.skins.iter().find(|s| s.name == "body" && s.joints.len() == 1).expect("a rigid skin");
    let sk = doc.skeleton(rigid.skeleton);
    assert_eq!(sk.bones[rigid.joints[0].index()].name, "spine");
    // Posed, the hat turns with the spine as one rigid piece.
    let pose: skelport_ir::pose::Pose = [("spine".to_string(), DQuat::from_rotation_x(0.5))].into_iter().collect();
    let k = doc.skins.iter().position(|s| std::ptr::eq(s, rigid)).unwrap();
    let at_rest = skelport_ir::pose::deform(&doc, k, &Default::default());
    let posed = skelport_ir::pose::deform(&doc, k, &pose);
    let w = sk.world_matrices()[rigid.joints[0].index()];
    let head = w.w_axis.truncate();
    for (a, b) in at_rest.iter().zip(&posed) {
        let want = head + DQuat::from_rotation_x(0.5) * (*a - head);
        assert!((want - *b).length() < 1e-9, "{b} vs {want}");
    }
    assert!(at_rest.iter().zip(&posed).any(|(a, b)| a.distance(*b) > 1e-3));
}

/// A `byteStride` equal to the packed matrix size on the view of inverse bind matrices (three.js's
/// Soldier.glb and SimpleSkinning.gltf): glTF forbids it, but it reads the same bytes as none, so
/// it is read with a warning (at the view's place) and written without it; any other stride is
/// refused with a message about the stride, not about indices.
#[test]
fn an_ibm_stride_equal_to_the_matrix_size_is_read_with_a_warning() {
    let mut v = written();
    let ibm = v["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
    let view = v["accessors"][ibm]["bufferView"].as_u64().unwrap() as usize;
    v["bufferViews"][view]["byteStride"] = json!(64);
    let (doc, diag) = read(&v).unwrap_or_else(|e| panic!("refused: {e}"));
    let w: Vec<&str> = diag.items.iter().filter(|i| i.code == skelport_gltf::IBM_STRIDE).map(|i| i.message.as_str()).collect();
    assert_eq!(w.len(), 1, "{:?}", diag.items);
    assert!(w[0].starts_with(&format!("/bufferViews/{view}/byteStride: byteStride 64")), "{}", w[0]);
    let (plain, _) = read(&written()).unwrap();
    assert_eq!(doc.skins[0].inverse_bind, plain.skins[0].inverse_bind);
    let out = GltfFormat.write(&doc, &WriteOptions { embed: true, ..Default::default() }, &mut Diagnostics::default()).unwrap();
    let back: Value = serde_json::from_slice(&out.main).unwrap();
    let ibm = back["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize;
    let view = back["accessors"][ibm]["bufferView"].as_u64().unwrap() as usize;
    assert!(back["bufferViews"][view].get("byteStride").is_none(), "{}", back["bufferViews"][view]);
    let (_, diag) = read(&back).unwrap();
    assert!(!diag.items.iter().any(|i| i.code == skelport_gltf::IBM_STRIDE));
    // Another stride is refused, saying what is wrong and what to do.
    let mut v = written();
    let view = v["accessors"][v["skins"][0]["inverseBindMatrices"].as_u64().unwrap() as usize]["bufferView"].as_u64().unwrap() as usize;
    v["bufferViews"][view]["byteStride"] = json!(128);
    let e = read(&v).unwrap_err();
    assert!(e.contains(&format!("/bufferViews/{view}/byteStride: byteStride 128")) && e.contains("remove byteStride"), "{e}");
    assert!(!e.contains("an index must name"), "{e}");
}

/// Nodes a format names as bones (VRM's humanoid) that no skin binds are read as a skeleton: the
/// subtree of their lowest common ancestor, mesh nodes left out, every bone a joint; a mesh node
/// hanging below one of them is bound to it rigidly. Without such nodes, a file with no skins
/// reads no skeleton, with a warning.
#[test]
fn named_bones_no_skin_binds_become_a_skeleton() {
    // root(0) → hips(1) → spine(2) → head(3), hips → leg(4); a mesh node (5) under head.
    let mut v = written();
    let mesh = v["nodes"].as_array().unwrap().iter().find_map(|n| n.get("mesh").cloned()).unwrap();
    v["nodes"] = json!([
        { "name": "root", "children": [1] },
        { "name": "hips", "translation": [0.0, 1.0, 0.0], "children": [2, 4] },
        { "name": "spine", "translation": [0.0, 0.3, 0.0], "children": [3] },
        { "name": "head", "translation": [0.0, 0.4, 0.0], "children": [5] },
        { "name": "leg", "translation": [0.1, -0.5, 0.0] },
        { "name": "hat", "mesh": mesh }
    ]);
    v["scenes"] = json!([{ "nodes": [0] }]);
    v["scene"] = json!(0);
    for p in v["meshes"][0]["primitives"].as_array_mut().unwrap() {
        let a = p["attributes"].as_object_mut().unwrap();
        a.remove("JOINTS_0");
        a.remove("WEIGHTS_0");
    }
    v.as_object_mut().unwrap().remove("skins");
    let (doc, diag) = read(&v).unwrap();
    assert!(doc.skeletons.is_empty() && diag.items.iter().any(|i| i.code == "gltf.no-skins"));
    let bytes = serde_json::to_vec(&v).unwrap();
    let mut diag = Diagnostics::default();
    let (doc, nodes) = skelport_gltf::read_bytes_with_nodes(&bytes, None, &[3, 4, 1], &mut diag).unwrap();
    assert!(!diag.items.iter().any(|i| i.code == "gltf.no-skins"), "{:?}", diag.items);
    assert_eq!(doc.skeletons.len(), 1);
    let sk = &doc.skeletons[0];
    let names: Vec<&str> = sk.bones.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["hips", "spine", "head", "leg"]);
    assert!(sk.bones.iter().all(|b| b.deform));
    let heads: Vec<DVec3> = sk.world_matrices().iter().map(|m| m.w_axis.truncate()).collect();
    assert!((heads[2] - DVec3::new(0.0, 1.7, 0.0)).length() < 1e-6, "{}", heads[2]);
    assert_eq!(nodes[3], Some((0, BoneId::new(2))));
    assert_eq!(nodes[0], None);
    // The hat moves with the head: a rigid skin.
    assert_eq!(doc.skins.len(), 1);
    assert_eq!(doc.skins[0].joints, [BoneId::new(2)]);
}

/// The bytes of buffer view `view` of an embedded .gltf.
fn view_bytes(v: &Value, view: usize) -> Vec<u8> {
    let bv = &v["bufferViews"][view];
    let uri = v["buffers"][bv["buffer"].as_u64().unwrap() as usize]["uri"].as_str().unwrap();
    let data = base64::engine::general_purpose::STANDARD.decode(&uri[uri.find(',').unwrap() + 1..]).unwrap();
    let off = bv["byteOffset"].as_u64().unwrap_or(0) as usize;
    data[off..off + bv["byteLength"].as_u64().unwrap() as usize].to_vec()
}

/// `EXT_meshopt_compression` (what gltfpack writes): positions and indices compressed with
/// meshoptimizer's codecs, their views pointing into a fallback buffer with no data, are
/// decoded and read exactly as the uncompressed file; broken compressed bytes are refused at
/// their view.
#[test]
fn meshopt_compressed_views_are_decoded() {
    let mut v = written();
    let (plain, _) = read(&v).unwrap();
    let prim = v["meshes"][0]["primitives"][0].clone();
    let pos_view = v["accessors"][prim["attributes"]["POSITION"].as_u64().unwrap() as usize]["bufferView"].as_u64().unwrap() as usize;
    let idx_acc = &v["accessors"][prim["indices"].as_u64().unwrap() as usize];
    let idx_view = idx_acc["bufferView"].as_u64().unwrap() as usize;
    let idx_size = if idx_acc["componentType"] == 5125 { 4 } else { 2 };
    assert!(v["bufferViews"][pos_view].get("byteStride").is_none());
    let positions: Vec<[f32; 3]> =
        view_bytes(&v, pos_view).chunks(12).map(|c| [0, 4, 8].map(|k| f32::from_le_bytes(c[k..k + 4].try_into().unwrap()))).collect();
    let indices: Vec<u32> = view_bytes(&v, idx_view)
        .chunks(idx_size)
        .map(|c| if idx_size == 4 { u32::from_le_bytes(c.try_into().unwrap()) } else { u16::from_le_bytes(c.try_into().unwrap()) as u32 })
        .collect();
    let vpack = meshopt::encoding::encode_vertex_buffer(&positions).unwrap();
    let ipack = meshopt::encoding::encode_index_buffer(&indices, positions.len()).unwrap();
    let mut packed = vpack.clone();
    packed.resize(packed.len().next_multiple_of(4), 0);
    let ioff = packed.len();
    packed.extend(&ipack);
    packed.resize(packed.len().next_multiple_of(4), 0);
    let uri = format!("data:application/octet-stream;base64,{}", base64::engine::general_purpose::STANDARD.encode(&packed));
    let (plen, ilen) = (positions.len() * 12, (indices.len() * idx_size).next_multiple_of(4));
    let buffers = v["buffers"].as_array_mut().unwrap();
    buffers.push(json!({ "byteLength": packed.len(), "uri": uri }));
    let packed_buffer = buffers.len() - 1;
    buffers.push(json!({ "byteLength": plen + ilen, "extensions": { "EXT_meshopt_compression": { "fallback": true } } }));
    let fallback = buffers.len() - 1;
    v["bufferViews"][pos_view] = json!({ "buffer": fallback, "byteOffset": 0, "byteLength": plen, "extensions": { "EXT_meshopt_compression": {
        "buffer": packed_buffer, "byteLength": vpack.len(), "byteStride": 12, "count": positions.len(), "mode": "ATTRIBUTES" } } });
    v["bufferViews"][idx_view] = json!({ "buffer": fallback, "byteOffset": plen, "byteLength": indices.len() * idx_size, "extensions": { "EXT_meshopt_compression": {
        "buffer": packed_buffer, "byteOffset": ioff, "byteLength": ipack.len(), "byteStride": idx_size, "count": indices.len(), "mode": "TRIANGLES" } } });
    v["extensionsUsed"] = json!(["EXT_meshopt_compression"]);
    v["extensionsRequired"] = json!(["EXT_meshopt_compression"]);
    let (doc, diag) = read(&v).unwrap_or_else(|e| panic!("refused: {e}"));
    assert!(diag.items.iter().any(|i| i.code == "gltf.meshopt" && i.message.starts_with("2 buffer view(s)")), "{:?}", diag.items);
    assert_eq!(doc.meshes[0].positions, plain.meshes[0].positions);
    assert_eq!(doc.meshes[0].faces, plain.meshes[0].faces);
    // Damaged compressed bytes: an error at the view, not a panic or garbage.
    v["bufferViews"][pos_view]["extensions"]["EXT_meshopt_compression"]["byteLength"] = json!(3);
    let e = read(&v).unwrap_err();
    assert!(e.contains(&format!("/bufferViews/{pos_view}/extensions/EXT_meshopt_compression")) && e.contains("does not decode"), "{e}");
    v["bufferViews"][pos_view]["extensions"]["EXT_meshopt_compression"]["byteStride"] = json!(6);
    assert!(read(&v).unwrap_err().contains("multiple of 4"));
}
