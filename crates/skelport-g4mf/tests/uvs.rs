//! Normals and texture maps through G4MF surface bindings: per-corner data (seams, hard edges)
//! indexed per triangle corner, smooth normals computed when a mesh has none, flat normals read
//! for a surface without a normals binding (the spec's default), per-simplex bindings.

use base64::Engine as _;
use serde_json::{json, Value};
use skelport_g4mf::{G4bFormat, G4tfFormat};
use skelport_ir::testing::{normal_delta, uv_delta};
use skelport_ir::{
    Bone, BoneId, DMat4, DQuat, DVec2, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, Normals, ReadOptions,
    Severity, Skeleton, Skin, Transform, UvSet, Uvs, WriteOptions,
};

/// Two bones over a 3×2 grid of quads in Blender's frame, with a UV seam down the middle
/// column (its corners in the right quads have other UVs) and a hard normal at one corner.
fn rig() -> Document {
    let mut sk = Skeleton::new("rig");
    let a = sk.push(Bone::new("a", None, Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.0, 1.0))));
    sk.push(Bone::new("b", Some(a), Transform::from_rt(DQuat::from_rotation_x(0.3), DVec3::new(0.0, 0.0, 0.5))));
    let ibm = sk.world_matrices().iter().map(DMat4::inverse).collect();
    let positions: Vec<DVec3> = (0..12).map(|i| DVec3::new((i % 4) as f64 * 0.1, 0.0, 1.0 + (i / 4) as f64 * 0.2)).collect();
    let mut faces = Faces::default();
    for z in 0..2u32 {
        for x in 0..3u32 {
            let v = z * 4 + x;
            faces.counts.push(4);
            faces.indices.extend([v, v + 1, v + 5, v + 4]);
        }
    }
    let uv: Vec<DVec2> = faces
        .indices
        .iter()
        .enumerate()
        .map(|(c, &v)| {
            let quad_x = (c / 4) % 3;
            let shift = if quad_x == 2 { 0.5 } else { 0.0 };
            DVec2::new((v % 4) as f64 * 0.25 + shift, (v / 4) as f64 * 0.5)
        })
        .collect();
    let mut n = vec![DVec3::new(0.0, -1.0, 0.0); faces.indices.len()];
    n[5] = DVec3::new(0.0, -0.6, 0.8);
    let mut d = Document::new(Frame::BLENDER);
    d.meshes.push(Mesh {
        name: "grid".into(),
        positions,
        normals: Some(Normals::PerCorner(n)),
        uvs: vec![UvSet { name: "UVMap".into(), uvs: Uvs::PerCorner(uv) }],
        faces,
        ..Default::default()
    });
    d.skins.push(Skin {
        name: "skin".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints: vec![BoneId::new(0), BoneId::new(1)],
        inverse_bind: ibm,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists((0..12).map(|v| vec![(0, 1.0 - v as f64 / 12.0), (1, v as f64 / 12.0)])),
        ext: Default::default(),
    });
    d.skeletons.push(sk);
    d
}

fn write(f: &dyn Format, d: &Document) -> (Vec<u8>, Diagnostics) {
    let mut diag = Diagnostics::default();
    let out = f.write(d, &WriteOptions { file_stem: "t".into(), ..Default::default() }, &mut diag).unwrap();
    (out.main, diag)
}

fn read(f: &dyn Format, bytes: &[u8]) -> (Document, Diagnostics) {
    let mut diag = Diagnostics::default();
    let d = f.read(Input { path: None, bytes }, &ReadOptions::default(), &mut diag).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(skelport_ir::validate::validate(&d), vec![]);
    (d, diag)
}

/// `doc`'s first mesh in `frame`.
fn mesh_in(doc: &Document, frame: Frame) -> Mesh {
    let mut d = doc.clone();
    d.convert_frame(frame);
    d.meshes.swap_remove(0)
}

#[test]
fn seams_and_hard_normals_come_back_at_every_corner() {
    let src = rig();
    for f in [&G4tfFormat as &dyn Format, &G4bFormat] {
        let (bytes, diag) = write(f, &src);
        assert_eq!(diag.of(Severity::Loss).count(), 0, "{:?}", diag.items);
        let (back, _) = read(f, &bytes);
        let b = mesh_in(&back, Frame::BLENDER);
        let a = &src.meshes[0];
        assert_eq!(b.positions.len(), a.positions.len(), "G4MF indexes per corner: no vertex is split");
        let du = uv_delta(a, &b, 0).expect("comparable");
        assert!(du < 1e-6, "UVs moved by {du}");
        let dn = normal_delta(a, &b).expect("comparable");
        assert!(dn < 1e-6, "normals moved by {dn}");
        assert_eq!(b.uvs[0].name, "UVMap");
        assert!(b.uvs[0].uvs.is_per_corner() && b.normals.as_ref().unwrap().is_per_corner());
    }
    // In the file: values once per distinct value at each vertex, indexed per triangle corner;
    // v flipped (G4MF's texture y runs down).
    let (bytes, _) = write(&G4tfFormat, &src);
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let surface = &v["meshes"][0]["surfaces"][0];
    let tm = &surface["textureMap"];
    let values = &v["accessors"][tm["values"].as_u64().unwrap() as usize];
    assert_eq!(values["componentType"], "float32");
    assert_eq!(values["vectorSize"], 2);
    let view = &v["bufferViews"][values["bufferView"].as_u64().unwrap() as usize];
    // 12 vertices, and the seam's 3 vertices on the middle line twice (v = 0.25 and 0.75 … see rig).
    assert_eq!(view["byteLength"].as_u64().unwrap() / 8, 15);
    assert_ne!(tm["simplexes"], surface["simplexes"]);
    let nb = &surface["normals"];
    assert_ne!(nb["simplexes"], surface["simplexes"], "the hard corner splits its vertex");
}

#[test]
fn missing_normals_are_computed_and_per_vertex_data_indexed_by_the_surface() {
    let mut src = rig();
    src.meshes[0].normals = None;
    src.meshes[0].uvs[0].uvs = Uvs::PerVertex((0..12).map(|i| DVec2::new(i as f64 / 12.0, 0.5)).collect());
    let (bytes, diag) = write(&G4tfFormat, &src);
    assert!(diag.items.iter().any(|d| d.code == "g4mf.computed-normals"), "{diag:?}");
    let v: Value = serde_json::from_slice(&bytes).unwrap();
    let surface = &v["meshes"][0]["surfaces"][0];
    assert_eq!(surface["normals"]["simplexes"], surface["simplexes"]);
    assert_eq!(surface["textureMap"]["simplexes"], surface["simplexes"]);
    let (back, _) = read(&G4tfFormat, &bytes);
    let b = mesh_in(&back, Frame::BLENDER);
    assert!(!b.uvs[0].uvs.is_per_corner() && !b.normals.as_ref().unwrap().is_per_corner());
    // The grid lies in Blender's XZ plane, wound to face −Y.
    assert!(b.normals.as_ref().unwrap().values().iter().all(|n| (*n - DVec3::NEG_Y).length() < 1e-6));
    assert!(uv_delta(&src.meshes[0], &b, 0).unwrap() < 1e-6);
}

/// A surface without a normals binding is flat-shaded (the spec's default): each corner gets its
/// face's normal, said in a note. A per-simplex binding gives each triangle's corners its value.
#[test]
fn foreign_bindings_flat_and_per_simplex() {
    let (bytes, _) = write(&G4tfFormat, &rig());
    let mut v: Value = serde_json::from_slice(&bytes).unwrap();
    v["meshes"][0]["surfaces"][0].as_object_mut().unwrap().remove("normals");
    let (back, diag) = read(&G4tfFormat, &serde_json::to_vec(&v).unwrap());
    assert!(diag.items.iter().any(|d| d.code == "g4mf.flat-normals"), "{diag:?}");
    let n = back.meshes[0].normals.as_ref().unwrap();
    // glTF frame: Blender −Y is +Z.
    assert!(n.values().iter().all(|x| (*x - DVec3::Z).length() < 1e-9), "{n:?}");
    // A texture map per simplex, from a second buffer: triangle t gets value t % 2.
    let tris = back.meshes[0].faces.len();
    let mut data = Vec::new();
    for c in [0.25f32, 0.5, 0.75, 1.0] {
        data.extend_from_slice(&c.to_le_bytes());
    }
    let index_at = data.len();
    data.extend((0..tris).map(|t| (t % 2) as u8));
    let uri = format!("data:application/octet-stream;base64,{}", base64::engine::general_purpose::STANDARD.encode(&data));
    v["buffers"].as_array_mut().unwrap().push(json!({ "byteLength": data.len(), "uri": uri }));
    let views = v["bufferViews"].as_array_mut().unwrap();
    views.push(json!({ "buffer": 1, "byteLength": 16 }));
    views.push(json!({ "buffer": 1, "byteOffset": index_at, "byteLength": tris }));
    let nviews = views.len();
    let accs = v["accessors"].as_array_mut().unwrap();
    accs.push(json!({ "bufferView": nviews - 2, "componentType": "float32", "vectorSize": 2 }));
    accs.push(json!({ "bufferView": nviews - 1, "componentType": "uint8" }));
    let nacc = accs.len();
    v["meshes"][0]["surfaces"][0]["textureMap"] = json!({ "values": nacc - 2, "perSimplex": nacc - 1 });
    let (back, _) = read(&G4tfFormat, &serde_json::to_vec(&v).unwrap());
    let m = &back.meshes[0];
    for t in 0..tris {
        let want = if t % 2 == 0 { DVec2::new(0.25, 0.5) } else { DVec2::new(0.75, 0.0) };
        for k in 0..3 {
            assert_eq!(skelport_ir::testing::corner_value(&m.uvs[0].uvs, &m.faces, 3 * t + k), Some(want), "triangle {t}");
        }
    }
    // An index past the values is refused, naming the place.
    let mut bad = v.clone();
    bad["meshes"][0]["surfaces"][0]["textureMap"]["perSimplex"] = bad["meshes"][0]["surfaces"][0]["simplexes"].clone();
    let e = G4tfFormat
        .read(Input { path: None, bytes: &serde_json::to_vec(&bad).unwrap() }, &ReadOptions::default(), &mut Diagnostics::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("surfaces[0].textureMap.perSimplex"), "{e}");
}

/// More UV sets than the one texture map a surface holds: a loss line.
#[test]
fn extra_uv_sets_are_a_loss() {
    let mut src = rig();
    let second = src.meshes[0].uvs[0].clone();
    src.meshes[0].uvs.push(second);
    let (_, diag) = write(&G4bFormat, &src);
    assert!(diag.of(Severity::Loss).any(|d| d.code == "g4mf.uv-sets"), "{diag:?}");
}

/// A mesh no skin binds is a plain mesh: written with its texture map and normals, read back.
#[test]
fn an_unskinned_mesh_keeps_its_uvs() {
    let mut src = rig();
    src.skins.clear();
    let (bytes, diag) = write(&G4tfFormat, &src);
    assert!(diag.of(Severity::Loss).next().is_none(), "{diag:?}");
    let back = G4tfFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    assert_eq!(back.meshes.len(), 1);
    assert_eq!(back.meshes[0].uvs.len(), 1);
}
