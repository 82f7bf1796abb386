//! Texture coordinates and normals through glTF: random meshes with seams (the writer splits
//! vertices, the reader folds them back) and the real files that carry TEXCOORD_0 and NORMAL.

use proptest::prelude::*;
use skelport_gltf::{GlbFormat, GltfFormat};
use skelport_ir::proc::smooth_normals;
use skelport_ir::testing::{corpus_file, normal_delta, uv_delta};
use skelport_ir::{
    BoneId, DMat4, DVec2, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, Normals, ReadOptions, Severity,
    Skeleton, Skin, Transform, UvSet, Uvs, WriteOptions,
};

fn write_read(doc: &Document, format: &dyn Format) -> (Document, Diagnostics, Vec<u8>) {
    let mut d = Diagnostics::default();
    let out = format.write(doc, &WriteOptions { file_stem: "t".into(), embed: true, ..Default::default() }, &mut d).expect("write");
    let back = format.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut d).expect("re-read");
    assert_eq!(skelport_ir::validate::validate(&back), vec![]);
    (back, d, out.main)
}

/// A skinned mesh in glTF's frame: `n` vertices on a bumpy sheet, random faces, per-corner UVs
/// with seams at some vertices, per-corner normals with hard edges at others, two bones.
fn skinned(n: usize, faces: Faces, uv: Vec<DVec2>, normals: Vec<DVec3>) -> Document {
    let mut doc = Document::new(Frame::GLTF);
    let mut sk = Skeleton::new("s");
    sk.push(skelport_ir::Bone::new("a", None, Transform::IDENTITY));
    sk.push(skelport_ir::Bone::new("b", Some(BoneId::new(0)), Transform::from_rt(Default::default(), DVec3::Y)));
    let inverse_bind = sk.world_matrices().iter().map(DMat4::inverse).collect();
    doc.skeletons.push(sk);
    let positions = (0..n).map(|i| DVec3::new((i % 7) as f64, (i * i % 5) as f64 * 0.1, (i / 7) as f64)).collect();
    let mesh = Mesh {
        name: "m".into(),
        positions,
        normals: Some(Normals::PerCorner(normals)),
        uvs: vec![UvSet { name: String::new(), uvs: Uvs::PerCorner(uv) }],
        faces,
        ..Default::default()
    };
    doc.meshes.push(mesh);
    let lists = (0..n).map(|v| vec![(0u32, 0.25 + (v % 3) as f64 * 0.25), (1, 0.75 - (v % 3) as f64 * 0.25)]);
    doc.skins.push(Skin {
        name: "k".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints: vec![BoneId::new(0), BoneId::new(1)],
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(lists),
        ext: Default::default(),
    });
    doc
}

fn random_mesh() -> impl Strategy<Value = Document> {
    (3usize..30).prop_flat_map(|n| {
        let face = (3usize..5).prop_flat_map(move |k| proptest::collection::vec((0..n as u32, 0u8..3), k));
        proptest::collection::vec(face, 1..25).prop_map(move |fs| {
            let (mut faces, mut uv, mut nrm) = (Faces::default(), Vec::new(), Vec::new());
            for f in fs {
                faces.counts.push(f.len() as u32);
                for (v, side) in f {
                    faces.indices.push(v);
                    // Up to three UVs per vertex (seams) on vertices not divisible by 4; hard
                    // normals on odd vertices.
                    let s = if v % 4 == 0 { 0 } else { side };
                    uv.push(DVec2::new(v as f64 / 32.0, s as f64 * 0.25 + 0.125));
                    nrm.push(if v % 2 == 1 && side == 1 { DVec3::X } else { DVec3::Y });
                }
            }
            skinned(n, faces, uv, nrm)
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    /// Every corner gets its own UV and normal back, on the source's vertices (the split copies
    /// folded back), with each vertex's influences; no loss reported.
    #[test]
    fn seams_split_and_fold_back(doc in random_mesh()) {
        for format in [&GlbFormat as &dyn Format, &GltfFormat] {
            let (back, d, _) = write_read(&doc, format);
            prop_assert!(d.of(Severity::Loss).count() == 0, "{:?}", d);
            let (a, b) = (&doc.meshes[0], &back.meshes[0]);
            prop_assert_eq!(b.positions.len(), a.positions.len());
            prop_assert_eq!(&b.faces.indices, &a.faces.triangulate());
            let du = uv_delta(a, b, 0).expect("comparable");
            prop_assert!(du < 1e-6, "UVs moved by {}", du);
            let dn = normal_delta(a, b).expect("comparable");
            prop_assert!(dn < 1e-6, "normals moved by {}", dn);
            let (ia, ib) = (&doc.skins[0].influences, &back.skins[0].influences);
            prop_assert_eq!(ib.vertex_count(), ia.vertex_count());
            for v in 0..ia.vertex_count() {
                let (x, y): (Vec<_>, Vec<_>) = (ia.vertex(v).collect(), ib.vertex(v).collect());
                prop_assert_eq!(x.len(), y.len());
            }
        }
    }
}

/// The written file itself: copies follow the mesh's vertices, each where its source vertex is
/// with its joints and weights; v is flipped; one TEXCOORD per IR set.
#[test]
fn split_copies_carry_position_and_skin() {
    // Two triangles sharing the edge 1–2, with a UV seam along it.
    let faces = Faces { counts: vec![3, 3], indices: vec![0, 1, 2, 2, 1, 3] };
    let uv = vec![
        DVec2::new(0.0, 0.0),
        DVec2::new(1.0, 0.0),
        DVec2::new(0.0, 1.0),
        DVec2::new(0.5, 0.5),
        DVec2::new(0.6, 0.0),
        DVec2::new(1.0, 1.0),
    ];
    let doc = skinned(4, faces, uv, vec![DVec3::Y; 6]);
    let (_, _, bytes) = write_read(&doc, &GltfFormat);
    let root: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(root["meshes"][0]["extras"]["skelport"]["split_from"], serde_json::json!([2, 1]));
    let prim = &root["meshes"][0]["primitives"][0];
    let attrs = prim["attributes"].as_object().unwrap();
    let mut keys: Vec<&String> = attrs.keys().collect();
    keys.sort();
    assert_eq!(keys, ["JOINTS_0", "NORMAL", "POSITION", "TEXCOORD_0", "WEIGHTS_0"]);
    // The data, decoded from the embedded buffer.
    let uri = root["buffers"][0]["uri"].as_str().unwrap();
    use base64::Engine as _;
    let buf = base64::engine::general_purpose::STANDARD.decode(&uri[uri.find(',').unwrap() + 1..]).unwrap();
    let floats = |name: &str| -> Vec<f32> {
        let a = &root["accessors"][attrs[name].as_u64().unwrap() as usize];
        let v = &root["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
        let (o, l) = (v["byteOffset"].as_u64().unwrap_or(0) as usize, v["byteLength"].as_u64().unwrap() as usize);
        buf[o..o + l].chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
    };
    let (pos, tex, w) = (floats("POSITION"), floats("TEXCOORD_0"), floats("WEIGHTS_0"));
    assert_eq!(pos.len(), 6 * 3);
    assert_eq!(pos[4 * 3..5 * 3], pos[2 * 3..3 * 3], "copy 4 of vertex 2");
    assert_eq!(pos[5 * 3..6 * 3], pos[3..2 * 3], "copy 5 of vertex 1");
    assert_eq!(w[16..20], w[8..12]);
    assert_eq!(w[20..24], w[4..8]);
    // Vertex 2's first corner (0, 1) → glTF (0, 0); its copy has the second triangle's (0.5, 0.5).
    assert_eq!(tex[4..6], [0.0, 0.0]);
    assert_eq!(tex[8..10], [0.5, 0.5]);
    assert_eq!(tex[10..12], [0.6, 1.0]);
}

/// The real files with TEXCOORD_0 and NORMAL (RobotExpressive's skinned meshes have no UVs, Fox
/// no normals): read into the IR (per vertex, v up) and through glTF and GLB unchanged at every
/// corner; Fox gets smooth normals computed, with a note.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn real_files_keep_uvs_and_normals() {
    let files = [
        ("realworld/khr_CesiumMan.glb", true, true),
        ("realworld/threejs_RobotExpressive.glb", false, true),
        ("gltf/Fox/Fox.glb", true, false),
    ];
    for (rel, has_uvs, has_normals) in files {
        let Some(p) = corpus_file(rel) else { return };
        let bytes = std::fs::read(&p).unwrap();
        let mut d = Diagnostics::default();
        let doc = GlbFormat.read(Input { path: Some(&p), bytes: &bytes }, &ReadOptions::default(), &mut d).unwrap();
        for m in &doc.meshes {
            assert_eq!(m.uvs.len(), has_uvs as usize, "{rel}: mesh {}", m.name);
            assert_eq!(m.normals.as_ref().map(|n| n.is_per_corner()), has_normals.then_some(false), "{rel}: mesh {}", m.name);
            assert!(m.uvs.iter().all(|s| !s.uvs.is_per_corner()));
        }
        for format in [&GlbFormat as &dyn Format, &GltfFormat] {
            let (back, wd, _) = write_read(&doc, format);
            let computed = wd.items.iter().filter(|x| x.code == "gltf.computed-normals").count();
            assert_eq!(computed, if has_normals { 0 } else { doc.meshes.len() }, "{rel}: {wd:?}");
            assert!(
                !wd.items.iter().any(|x| x.code != "gltf.computed-normals" && (x.code.contains("uv") || x.code.contains("normal"))),
                "{rel}: {wd:?}"
            );
            assert_eq!(back.meshes.len(), doc.meshes.len());
            for (a, b) in doc.meshes.iter().zip(&back.meshes) {
                assert_eq!(b.positions.len(), a.positions.len(), "{rel}: no vertex split without per-corner data");
                for set in 0..a.uvs.len() {
                    let du = uv_delta(a, b, set).unwrap_or_else(|| panic!("{rel}: UV set {set} not comparable"));
                    assert!(du < 1e-6, "{rel}: UV set {set} moved by {du}");
                }
                let want = match &a.normals {
                    Some(_) => a.clone(),
                    None => Mesh { normals: Some(Normals::PerVertex(smooth_normals(&a.positions, &a.faces))), ..a.clone() },
                };
                let dn = normal_delta(&want, b).expect("comparable");
                assert!(dn < 1e-6, "{rel}: normals moved by {dn}");
            }
        }
    }
}

/// CesiumMan's UVs read as the file has them (v flipped into the IR's convention): its first
/// vertex's TEXCOORD_0, decoded here from the GLB's bytes.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn cesium_man_uv_is_flipped_on_read() {
    let Some(p) = corpus_file("realworld/khr_CesiumMan.glb") else { return };
    let bytes = std::fs::read(&p).unwrap();
    let json_len = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let root: serde_json::Value = serde_json::from_slice(&bytes[20..20 + json_len]).unwrap();
    let bin = &bytes[20 + json_len + 8..];
    let prim = &root["meshes"][0]["primitives"][0];
    let a = &root["accessors"][prim["attributes"]["TEXCOORD_0"].as_u64().unwrap() as usize];
    assert_eq!(a["componentType"], 5126);
    let v = &root["bufferViews"][a["bufferView"].as_u64().unwrap() as usize];
    let at = v["byteOffset"].as_u64().unwrap_or(0) as usize + a["byteOffset"].as_u64().unwrap_or(0) as usize;
    let f = |k: usize| f32::from_le_bytes(bin[at + 4 * k..at + 4 * k + 4].try_into().unwrap()) as f64;
    let doc = GlbFormat.read(Input { path: Some(&p), bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    let uv = doc.meshes[0].uvs[0].uvs.values()[0];
    assert_eq!(uv, DVec2::new(f(0), 1.0 - f(1)));
}

/// A written file edited so that the split list no longer fits (a copy moved): the vertices are
/// read as the file has them, with a note, not folded onto the wrong vertex. A TEXCOORD set
/// numbered past the sets skelport reads is a loss line.
#[test]
fn unfitting_split_lists_and_far_sets_are_said() {
    let faces = Faces { counts: vec![3, 3], indices: vec![0, 1, 2, 2, 1, 3] };
    let uv = vec![DVec2::ZERO, DVec2::X, DVec2::Y, DVec2::splat(0.5), DVec2::new(0.6, 0.0), DVec2::ONE];
    let doc = skinned(4, faces, uv, vec![DVec3::Y; 6]);
    let (_, _, bytes) = write_read(&doc, &GltfFormat);
    let mut root: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    // Point the list at other vertices: copy 4 (of vertex 2) now claims vertex 3.
    root["meshes"][0]["extras"]["skelport"]["split_from"] = serde_json::json!([3, 1]);
    let mut d = Diagnostics::default();
    let text = serde_json::to_vec(&root).unwrap();
    let back = GltfFormat.read(Input { path: None, bytes: &text }, &ReadOptions::default(), &mut d).unwrap();
    assert!(d.items.iter().any(|x| x.code == "gltf.split-ignored"), "{d:?}");
    assert_eq!(back.meshes[0].positions.len(), 6, "kept as the file has them");
    // TEXCOORD_9: past the 8 sets read.
    let prim = &mut root["meshes"][0]["primitives"][0]["attributes"];
    let t = prim.as_object_mut().unwrap().remove("TEXCOORD_0").unwrap();
    prim["TEXCOORD_9"] = t;
    let mut d = Diagnostics::default();
    let text = serde_json::to_vec(&root).unwrap();
    let back = GltfFormat.read(Input { path: None, bytes: &text }, &ReadOptions::default(), &mut d).unwrap();
    assert!(d.of(Severity::Loss).any(|x| x.code == "gltf.uv-sets"), "{d:?}");
    assert!(back.meshes[0].uvs.is_empty());
    assert_eq!(skelport_gltf::MAX_UV_SETS, 8);
}
