//! What an AnvilToolkit file holds (issue 22): Global is a bone's world translation and rotation,
//! Local what the engine composes with the parent's Global to get it, and neither has a scale.
//! From a source with scaled parents the Locals are derived so that they compose to the source's
//! Globals; only real scales are reported. Values present in the source survive a trip through
//! other precision (a float32 format, a frame change) as the file's text, with its quaternion
//! signs; derived values are the shortest float text, exact zeros are `0`.

use skelport_anvil::model::{names as f, VecKind};
use skelport_anvil::{AnvilFormat, AnvilSchemaFormat, AnvilSkeleton, Form};
use skelport_ir::{Bone, BoneId, DQuat, DVec3, Diagnostics, Document, Format, Input, ReadOptions, Severity, Skeleton, Transform};
use skelport_ir::{Frame, WriteOptions};

fn fixture(name: &str) -> Vec<u8> {
    std::fs::read(skelport_ir::testing::workspace_root().join("testdata/anvil").join(name)).unwrap()
}

fn read(bytes: &[u8]) -> Document {
    AnvilFormat.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap()
}

fn write(form: Form, doc: &Document) -> (Vec<u8>, Diagnostics) {
    let mut d = Diagnostics::default();
    let f: &dyn Format = if form == Form::Standard { &AnvilFormat } else { &AnvilSchemaFormat };
    (f.write(doc, &WriteOptions::default(), &mut d).unwrap().main, d)
}

/// (Global position, Global rotation, Local position, Local rotation) texts of every bone.
fn pose_texts(bytes: &[u8]) -> Vec<(String, [Vec<String>; 4])> {
    let m = AnvilSkeleton::parse(bytes, "t.xml").unwrap();
    let t = |o: &skelport_anvil::model::Object, n: &str| o.vector_texts(n).unwrap_or(&[]).iter().map(|x| x.to_string()).collect::<Vec<_>>();
    (0..m.bone_count())
        .map(|i| {
            let b = m.bone(i);
            (b.bone_label().unwrap_or("").to_string(), [t(b, f::GLOBAL_POS), t(b, f::GLOBAL_ROT), t(b, f::LOCAL_POS), t(b, f::LOCAL_ROT)])
        })
        .collect()
}

fn world(doc: &Document) -> Vec<(String, Transform)> {
    let d = doc.in_frame(skelport_anvil::ANVIL_FRAME);
    let sk = &d.skeletons[0];
    sk.bones.iter().map(|b| b.name.clone()).zip(sk.world_transforms()).collect()
}

/// A root scaled ×100 with a child 1 cm out (so 1 m in the world), as assimp's quad_skin and
/// three.js's RobotExpressive have; below, a bone scaled ×0.01 back to 1 and a grandchild.
fn scaled_rig() -> Document {
    let mut sk = Skeleton::new("scaled");
    let mut root = Bone::new("Armature", None, Transform::from_rt(DQuat::from_rotation_x(0.5), DVec3::new(0.0, 0.0, 0.2)));
    root.rest.scale = DVec3::splat(100.0);
    let r = sk.push(root);
    let mut hips = Bone::new("Hips", Some(r), Transform::from_rt(DQuat::from_rotation_z(0.3), DVec3::new(0.0, 0.01, 0.0)));
    hips.rest.scale = DVec3::splat(0.01);
    let h = sk.push(hips);
    let s = sk.push(Bone::new("Spine", Some(h), Transform::from_rt(DQuat::from_rotation_y(0.2), DVec3::new(0.0, 0.3, 0.0))));
    // Float noise, not a scale (a float32 file's 100 × 0.01).
    let mut tip = Bone::new("Head", Some(s), Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.4, 0.1)));
    tip.rest.scale = DVec3::splat(0.99999994);
    sk.push(tip);
    let _ = BoneId::new(0);
    let mut doc = Document::new(Frame::GLTF);
    doc.skeletons.push(sk);
    doc
}

#[test]
fn locals_under_scaled_parents_compose_to_the_source_globals() {
    let doc = scaled_rig();
    let want = world(&doc);
    for form in [Form::Standard, Form::Schema] {
        let (bytes, diag) = write(form, &doc);
        let back = read(&bytes);
        for ((name, a), (_, b)) in want.iter().zip(world(&back)) {
            assert!(a.translation.distance(b.translation) < 1e-5, "{form:?}: {name} moved {}", a.translation.distance(b.translation));
            let turn = 2.0 * a.rotation.dot(b.rotation).abs().min(1.0).acos();
            assert!(turn < 1e-4, "{form:?}: {name} turned {turn} rad");
        }
        // The loss names the one bone whose world scale is not 1: the ×0.01 undoes the ×100
        // and 0.99999994 is float noise.
        let losses: Vec<_> = diag.of(Severity::Loss).filter(|d| d.code == "anvil.scale").collect();
        assert_eq!(losses.len(), 1, "{:?}", diag.items);
        assert!(losses[0].message.contains("1 bone(s)") && losses[0].message.contains("Armature (×100)"), "{}", losses[0].message);
        // Read back, every Local agrees with the Globals (no local-global warning).
        let mut d = Diagnostics::default();
        AnvilFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut d).unwrap();
        assert!(d.of(Severity::Warning).next().is_none(), "{:?}", d.items);
    }
}

/// What a trip through glTF does to an AnvilToolkit document: every rest rounded to float32 and
/// its quaternion normalized again, frame-change noise on zeros, and some quaternions negated.
fn through_float32(doc: &Document) -> Document {
    let mut d = doc.clone();
    for (k, b) in d.skeletons[0].bones.iter_mut().enumerate() {
        let t = b.rest.translation.to_array().map(|x| (x as f32) as f64 + if x == 0.0 { -1.1102230246251565e-16 } else { 0.0 });
        b.rest.translation = DVec3::from_array(t);
        let q = DQuat::from_array(b.rest.rotation.to_array().map(|x| (x as f32) as f64)).normalize();
        b.rest.rotation = if k % 2 == 0 { -q } else { q };
    }
    d
}

#[test]
fn values_from_the_source_keep_their_text_and_sign_after_float32_and_frame_noise() {
    for (src, form, direct) in [
        ("biped.schema.xml", Form::Standard, "biped.standard.xml"),
        ("biped.standard.xml", Form::Schema, "biped.schema.utf16.xml"),
        ("sword_addon.schema.xml", Form::Standard, "sword_addon.standard.xml"),
        ("hidden_blade_addon.standard.xml", Form::Schema, "hidden_blade_addon.schema.utf16.xml"),
    ] {
        let doc = read(&fixture(src));
        let (out, _) = write(form, &through_float32(&doc));
        assert_eq!(pose_texts(&out), pose_texts(&fixture(direct)), "{src} → {form:?}");
    }
}

#[test]
fn derived_values_are_short_zeros_are_zero_and_signs_are_kept() {
    let bytes = fixture("biped.standard.xml");
    let mut doc = through_float32(&read(&bytes));
    // A real edit: Hips turn 90° about Z. Its Global and Local, and every descendant's Global,
    // are derived; the rest keep their text.
    let sk = &mut doc.skeletons[0];
    let h = sk.find("Hips").unwrap().index();
    sk.bones[h].rest.rotation = DQuat::from_rotation_z(std::f64::consts::FRAC_PI_2) * sk.bones[h].rest.rotation;
    let (out, _) = write(Form::Standard, &doc);
    let (before, after) = (pose_texts(&bytes), pose_texts(&out));
    let mut derived = 0;
    for ((name, a), (_, b)) in before.iter().zip(&after) {
        for (k, (x, y)) in a.iter().zip(b).enumerate() {
            if x != y {
                derived += 1;
                for t in y {
                    let v: f64 = t.parse().unwrap();
                    assert!(t == "0" || v.abs() >= 1e-9, "{name}: {t} should be 0");
                    assert!(t.len() <= 11 && !t.contains('e'), "{name}: {t} is not the shortest float text");
                }
                if k % 2 == 1 {
                    // A rotation: the same sign as the file's.
                    let p = |v: &Vec<String>| DQuat::from_array([0, 1, 2, 3].map(|i| v[i].parse::<f64>().unwrap()));
                    assert!(p(x).dot(p(y)) > 0.0 || name == "Hips", "{name}: quaternion sign flipped: {x:?} → {y:?}");
                }
            }
        }
    }
    assert!(derived > 10, "the edit changed {derived} vectors");
    // The vectors that change are exactly Hips' own and its descendants' Globals.
    let back = read(&out);
    let sk = &back.skeletons[0];
    let hips = sk.find("Hips").unwrap();
    for (i, (name, a)) in before.iter().enumerate() {
        let below = {
            let mut p = Some(BoneId::from_index(sk.find(name).map(|b| b.index()).unwrap_or(i)));
            let mut yes = false;
            while let Some(x) = p {
                yes |= x == hips;
                p = sk.bones[x.index()].parent;
            }
            yes
        };
        if !below {
            assert_eq!(a, &after[i].1, "{name} is not below Hips: unchanged");
        }
    }
    let _ = VecKind::Quat;
}

#[test]
fn nothing_to_write_is_an_error() {
    let mut doc = Document::new(Frame::GLTF);
    for form in [Form::Standard, Form::Schema] {
        let f: &dyn Format = if form == Form::Standard { &AnvilFormat } else { &AnvilSchemaFormat };
        let e = f.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
        assert!(e.contains("nothing to write") && e.contains("it is empty"), "{e}");
    }
    // An empty skeleton (a skeleton-less Collada export) and a mesh: still nothing to write.
    doc.skeletons.push(Skeleton::new("skeleton"));
    doc.meshes.push(skelport_ir::Mesh { name: "body".into(), positions: vec![DVec3::ZERO], ..Default::default() });
    let e = AnvilFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("nothing to write") && e.contains("1 empty skeleton(s) and 1 mesh(es)"), "{e}");
    // An empty skeleton before one with bones: the one with bones is written, no skeleton loss.
    doc.skeletons.push(scaled_rig().skeletons.remove(0));
    doc.meshes.clear();
    let (bytes, diag) = write(Form::Standard, &doc);
    assert_eq!(read(&bytes).skeletons[0].bones.len(), 4);
    assert!(diag.of(Severity::Loss).all(|d| d.code != "anvil.skeletons"), "{:?}", diag.items);
}
