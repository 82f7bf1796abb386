//! MPFB keeps a bone as head, tail and roll (issue 22): written from another format, each bone's
//! tail lies along its own +Y and its roll is Blender's `mat3_to_vec_roll` of its rotation, so
//! reading the rig back (Blender's `vec_roll_to_mat3`) gives every bone its orientation again.
//! What head, tail and roll cannot hold (no length, a scale, a mesh, more skins) is a loss.

use skelport_ir::testing::xorshift;
use skelport_ir::{Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Format, Frame, Input, Mesh, ReadOptions, Severity};
use skelport_ir::{Skeleton, Skin, Transform, WriteOptions};
use skelport_mpfb::MpfbFormat;

fn turn(a: DQuat, b: DQuat) -> f64 {
    let d = a.inverse() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

/// Write as MPFB and read back (rig only).
fn through(doc: &Document) -> (Document, Diagnostics) {
    let mut diag = Diagnostics::default();
    let out = MpfbFormat.write(doc, &WriteOptions::default(), &mut diag).unwrap_or_else(|e| panic!("{e}"));
    let back = MpfbFormat.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    (back, diag)
}

/// World transforms by bone name (an MPFB rig's bones come back in sorted-key order).
fn worlds(doc: &Document) -> Vec<(String, Transform)> {
    let d = doc.in_frame(Frame::GLTF);
    let sk = &d.skeletons[0];
    let mut v: Vec<(String, Transform)> = sk.bones.iter().map(|b| b.name.clone()).zip(sk.world_transforms()).collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

/// A random tree of bones with random rotations and offsets, in glTF's frame (as CesiumMan's and
/// most glTF rigs' bones: +Y does not point at the child).
fn random_rig(seed: u64, n: usize) -> Document {
    let mut next = xorshift(seed);
    let mut unit = move || (next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    let mut sk = Skeleton::new("random");
    for i in 0..n {
        let q = DQuat::from_xyzw(unit(), unit(), unit(), unit()).normalize();
        let t = DVec3::new(unit(), unit(), unit()) * 0.3;
        let parent = (i > 0).then(|| BoneId::from_index(((unit() + 1.0) * 0.5 * i as f64) as usize % i));
        sk.push(Bone::new(format!("b{i}"), parent, Transform::from_rt(q, t)));
    }
    let mut doc = Document::new(Frame::GLTF);
    doc.skeletons.push(sk);
    doc
}

#[test]
fn bones_from_other_formats_keep_their_orientation() {
    for seed in 1..20u64 {
        let doc = random_rig(seed, 40);
        let (back, diag) = through(&doc);
        let turned = diag.items.iter().any(|d| d.code == "mpfb.orientation");
        for ((name, a), (_, b)) in worlds(&doc).iter().zip(worlds(&back)) {
            assert!(a.translation.distance(b.translation) < 1e-9, "seed {seed}: {name} moved {}", a.translation.distance(b.translation));
            let r = turn(a.rotation, b.rotation);
            // Blender's bone math: within ~6° of −Y it is approximate (≈3e-5 rad).
            assert!(r < 1e-4 || turned, "seed {seed}: {name} turned {r} rad with no loss: {:?}", diag.items);
        }
        assert!(diag.of(Severity::Loss).all(|d| d.code == "mpfb.strategies" || d.code == "mpfb.orientation"), "{:?}", diag.items);
    }
}

#[test]
fn a_bone_straight_down_minus_y_keeps_its_twist() {
    // Blender's special case: direction exactly −Y (world axes of the Blender frame).
    let mut sk = Skeleton::new("down");
    let q = DQuat::from_rotation_x(std::f64::consts::PI) * DQuat::from_rotation_y(0.7);
    sk.push(Bone::new("down", None, Transform::from_rt(q, DVec3::new(0.0, 0.0, 1.0))));
    let mut doc = Document::new(Frame::BLENDER);
    doc.skeletons.push(sk);
    let (back, diag) = through(&doc);
    assert!(turn(back.skeletons[0].bones[0].rest.rotation, q) < 1e-9, "{:?}", back.skeletons[0].bones[0].rest);
    assert!(!diag.items.iter().any(|d| d.code == "mpfb.orientation"));
}

#[test]
fn what_head_tail_roll_cannot_hold_is_a_loss() {
    let mut sk = Skeleton::new("lossy");
    let r = sk.push(Bone::new("root", None, Transform::IDENTITY));
    // Two children on either side: the inferred tail (their mean) is the head itself.
    let mut hub = Bone::new("hub", Some(r), Transform::from_rt(DQuat::from_rotation_z(0.4), DVec3::new(0.0, 1.0, 0.0)));
    hub.rest.scale = DVec3::splat(2.0);
    let h = sk.push(hub);
    sk.push(Bone::new("left", Some(h), Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.1, 0.0, 0.0))));
    sk.push(Bone::new("right", Some(h), Transform::from_rt(DQuat::IDENTITY, DVec3::new(-0.1, 0.0, 0.0))));
    let mut doc = Document::new(Frame::GLTF);
    doc.skeletons.push(sk);
    let world = doc.skeletons[0].world_matrices();
    doc.meshes.push(Mesh { name: "body".into(), positions: vec![DVec3::ZERO], ..Default::default() });
    for k in 0..2 {
        doc.skins.push(Skin {
            name: format!("skin{k}"),
            skeleton: skelport_ir::SkeletonId::new(0),
            mesh: Some(skelport_ir::MeshId::new(0)),
            joints: vec![BoneId::new(1)],
            inverse_bind: vec![world[1].inverse()],
            bind_shape: DMat4::IDENTITY,
            influences: skelport_ir::Influences::from_lists(vec![vec![(0, 1.0)]]),
            ext: Default::default(),
        });
    }
    let (back, diag) = through(&doc);
    let loss = |code: &str| diag.of(Severity::Loss).find(|d| d.code == code).map(|d| d.message.clone()).unwrap_or_default();
    assert!(loss("mpfb.zero-length").contains("hub"), "{:?}", diag.items);
    assert!(loss("mpfb.scale").contains("hub") && loss("mpfb.scale").contains("left"), "{:?}", diag.items);
    assert!(loss("mpfb.mesh").contains("body"), "{:?}", diag.items);
    assert!(loss("mpfb.skins").contains("1 more"), "{:?}", diag.items);
    // The zero-length bone still has its orientation, and a length.
    let hub = &back.skeletons[0].bones[back.skeletons[0].find("hub").unwrap().index()];
    assert!((hub.length.unwrap() - skelport_ir::proc::LONE_ROOT_LENGTH_M).abs() < 1e-8, "{:?}", hub.length);
    let (a, b) = (worlds(&doc), worlds(&back));
    let hub = |w: &[(String, Transform)]| w.iter().find(|x| x.0 == "hub").unwrap().1.rotation;
    assert!(turn(hub(&a), hub(&b)) < 1e-7);
}

#[test]
fn a_bone_turned_about_its_axis_after_reading_gets_the_new_roll() {
    let rig = br#"{"a": {"head": {"strategy": "VERTEX", "vertex_index": 0, "default_position": [0, 0, 1]},
        "tail": {"strategy": "VERTEX", "vertex_index": 1, "default_position": [0, 0.2, 1.5]}, "roll": 0.25}}"#;
    let mut doc = MpfbFormat.read(Input { path: None, bytes: rig }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    // Unchanged: the file's roll is kept as written.
    let out = MpfbFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap();
    let v: serde_json::Value = serde_json::from_slice(&out.main).unwrap();
    assert_eq!(v["bones"]["a"]["roll"], serde_json::json!(0.25));
    // Twisted by 0.5 rad about its own +Y.
    let b = &mut doc.skeletons[0].bones[0];
    b.rest.rotation *= DQuat::from_rotation_y(0.5);
    let want = b.rest.rotation;
    let (back, diag) = through(&doc);
    assert!(turn(back.skeletons[0].bones[0].rest.rotation, want) < 1e-5, "{:?}", back.skeletons[0].bones[0].rest);
    assert!(!diag.items.iter().any(|d| d.code == "mpfb.orientation"), "{:?}", diag.items);
}

#[test]
fn nothing_to_write_is_an_error() {
    let mut doc = Document::new(Frame::GLTF);
    doc.skeletons.push(Skeleton::new("empty"));
    doc.meshes.push(Mesh { name: "body".into(), positions: vec![DVec3::ZERO], ..Default::default() });
    let e = MpfbFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("nothing to write") && e.contains("1 mesh"), "{e}");
    let e = MpfbFormat.write(&Document::new(Frame::GLTF), &WriteOptions::default(), &mut Diagnostics::default()).unwrap_err();
    assert!(e.to_string().contains("nothing to write"), "{e}");
}
