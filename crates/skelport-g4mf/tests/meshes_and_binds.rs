//! G4MF holds what the IR gives it: plain meshes (no skin), each skin's own joints, and bind
//! poses TRS cannot hold (a non-uniform scale under a rotated parent, as Second Life's collision
//! volumes in an Avastar export are).

use skelport_g4mf::{G4bFormat, G4tfFormat};
use skelport_ir::pose::{deform_all, max_deviation, random_pose};
use skelport_ir::{
    Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, Format, Frame, Influences, Input, Mesh, MeshId, ReadOptions, Severity,
    Skeleton, SkeletonId, Skin, Transform, WriteOptions,
};

fn round_trip(f: &dyn Format, d: &Document) -> (Document, Diagnostics) {
    let mut diag = Diagnostics::default();
    let out = f.write(d, &WriteOptions { file_stem: "t".into(), ..Default::default() }, &mut diag).unwrap_or_else(|e| panic!("{e}"));
    let back = f.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut diag).unwrap_or_else(|e| panic!("{e}"));
    (back, diag)
}

fn quad(name: &str, at: DVec3) -> Mesh {
    Mesh {
        name: name.into(),
        positions: vec![at, at + DVec3::X * 0.1, at + DVec3::new(0.1, 0.1, 0.0), at + DVec3::Y * 0.1],
        faces: Faces { counts: vec![4], indices: vec![0, 1, 2, 3] },
        ..Default::default()
    }
}

/// The largest skinned-vertex distance between `a` and `b` (skins paired by order) over a few
/// random poses.
fn posed_apart(a: &Document, b: &Document) -> f64 {
    let names: Vec<&str> = a.skeletons.iter().flat_map(|s| s.bones.iter().map(|b| b.name.as_str())).collect();
    let mut worst = 0.0f64;
    for seed in 0..4 {
        let pose = random_pose(names.iter().copied(), seed, 0.6);
        let (da, db) = (deform_all(a, &pose), deform_all(b, &pose));
        assert_eq!(da.len(), db.len());
        for (x, y) in da.iter().zip(&db) {
            assert!(!x.is_empty());
            worst = worst.max(max_deviation(x, y).expect("same vertex count"));
        }
    }
    worst
}

#[test]
fn meshes_without_a_skin_are_written_and_read_back() {
    // A skeleton-less file of plain meshes (as an osRoth2 body or assimp's human.dae reads).
    let mut d = Document::new(Frame::GLTF);
    d.meshes.push(quad("head", DVec3::new(0.0, 1.6, 0.0)));
    d.meshes.push(quad("torso", DVec3::new(0.0, 1.2, 0.1)));
    for f in [&G4tfFormat as &dyn Format, &G4bFormat] {
        let (back, diag) = round_trip(f, &d);
        assert!(diag.of(Severity::Loss).next().is_none(), "{:?}", diag.items);
        assert!(back.skins.is_empty() && back.skeletons.is_empty());
        assert_eq!(back.meshes.iter().map(|m| m.name.as_str()).collect::<Vec<_>>(), ["head", "torso"]);
        for (m, n) in d.meshes.iter().zip(&back.meshes) {
            assert_eq!(m.faces.triangulate().len(), n.faces.triangulate().len());
            let apart = m.positions.iter().zip(&n.positions).map(|(p, q)| p.distance(*q)).fold(0.0, f64::max);
            assert!(apart < 1e-6, "{}: {apart}", m.name);
        }
    }
    // Beside a skinned one: both come back, the plain one unskinned.
    let mut with_skin = skinned_arm(false);
    with_skin.meshes.push(quad("prop", DVec3::new(1.0, 0.0, 0.0)));
    let (back, diag) = round_trip(&G4tfFormat, &with_skin);
    assert!(diag.of(Severity::Loss).next().is_none(), "{:?}", diag.items);
    assert_eq!(back.meshes.len(), 2);
    assert_eq!(back.skins.len(), 1);
    assert_eq!(back.mesh(back.skins[0].mesh.unwrap()).name, "arm");
}

#[test]
fn the_empty_document_is_refused() {
    let mut diag = Diagnostics::default();
    let e = G4tfFormat.write(&Document::new(Frame::GLTF), &WriteOptions::default(), &mut diag).unwrap_err();
    assert!(e.to_string().contains("nothing to write: the document has no bones and no meshes"), "{e}");
}

/// A rotated shoulder, an upper arm scaled (1, 2, 0.5) and a forearm turned under it (its world
/// transform has shear), each joint weighing some of `arm`'s eight vertices. With `sheared_bind`
/// the forearm is bound in a pose whose transform relative to the upper arm's bind is itself
/// sheared, which G4MF can only store as a `basis`.
fn skinned_arm(sheared_bind: bool) -> Document {
    let mut sk = Skeleton::new("rig");
    let shoulder = sk.push(Bone::new("shoulder", None, Transform::from_rt(DQuat::from_rotation_z(0.5), DVec3::new(0.0, 1.4, 0.0))));
    let upper = sk.push(Bone::new(
        "upper",
        Some(shoulder),
        Transform { translation: DVec3::new(0.0, 0.1, 0.0), rotation: DQuat::from_rotation_x(0.3), scale: DVec3::new(1.0, 2.0, 0.5) },
    ));
    let fore = sk.push(Bone::new("fore", Some(upper), Transform::from_rt(DQuat::from_rotation_z(0.8), DVec3::new(0.0, 0.15, 0.0))));
    let world = sk.world_matrices();
    let mut bind = world.clone();
    if sheared_bind {
        let shear = DMat4::from_rotation_z(0.6) * DMat4::from_scale(DVec3::new(1.0, 1.5, 0.7)) * DMat4::from_rotation_y(0.9);
        bind[fore.index()] = bind[upper.index()] * DMat4::from_translation(DVec3::new(0.0, 0.12, 0.0)) * shear;
    }
    let mut d = Document::new(Frame::GLTF);
    let positions: Vec<DVec3> = (0..8).map(|i| DVec3::new(0.02 * i as f64, 1.3 + 0.05 * i as f64, 0.01)).collect();
    d.meshes.push(Mesh {
        name: "arm".into(),
        positions,
        faces: Faces { counts: vec![4, 4], indices: vec![0, 1, 2, 3, 4, 5, 6, 7] },
        ..Default::default()
    });
    d.skins.push(Skin {
        name: "arm".into(),
        skeleton: SkeletonId::new(0),
        mesh: Some(MeshId::new(0)),
        joints: vec![shoulder, upper, fore],
        inverse_bind: [shoulder, upper, fore].iter().map(|j| bind[j.index()].inverse()).collect(),
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists((0..8).map(|v| match v % 3 {
            0 => vec![(0, 0.6), (1, 0.4)],
            1 => vec![(1, 0.5), (2, 0.5)],
            _ => vec![(2, 1.0)],
        })),
        ext: Default::default(),
    });
    d.skeletons.push(sk);
    d
}

#[test]
fn sheared_rest_and_bind_poses_deform_exactly_as_the_source() {
    for sheared_bind in [false, true] {
        let src = skinned_arm(sheared_bind);
        for f in [&G4tfFormat as &dyn Format, &G4bFormat] {
            let (back, diag) = round_trip(f, &src);
            // Exact: nothing to name (float32 positions round at 1e-7 m here).
            let apart = posed_apart(&src, &back);
            assert!(apart < 1e-6, "sheared bind {sheared_bind}, {}: posed vertices {apart:.3e} m apart", f.name());
            assert!(diag.of(Severity::Loss).next().is_none(), "{:?}", diag.items);
        }
    }
}

#[test]
fn each_skin_comes_back_with_its_own_joints() {
    // Two skins of one skeleton, as Ruth2's eyeballs are: each binds its own joints, in its order.
    let mut d = skinned_arm(false);
    let world = d.skeletons[0].world_matrices();
    d.meshes.push(quad("hand", DVec3::new(0.2, 1.5, 0.0)));
    d.skins.push(Skin {
        name: "hand".into(),
        skeleton: SkeletonId::new(0),
        mesh: Some(MeshId::new(1)),
        joints: vec![BoneId::new(2), BoneId::new(1)],
        inverse_bind: vec![world[2].inverse(), world[1].inverse()],
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists((0..4).map(|v| vec![(v % 2, 1.0)])),
        ext: Default::default(),
    });
    let joints = |d: &Document| -> Vec<Vec<String>> {
        d.skins.iter().map(|s| s.joints.iter().map(|j| d.skeletons[0].bones[j.index()].name.clone()).collect()).collect()
    };
    for f in [&G4tfFormat as &dyn Format, &G4bFormat] {
        let (back, _) = round_trip(f, &d);
        assert_eq!(joints(&back), joints(&d), "{}", f.name());
        assert!(posed_apart(&d, &back) < 1e-6);
    }
}
