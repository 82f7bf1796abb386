//! Property test: random skeletons (random trees and rest transforms) and skins (random sparse
//! weights) through every writer that holds any skeleton (`Format::holds`), and back through its
//! reader, equal the original within each format's precision — bone names, parents, world
//! positions, and (where the format holds skins) every vertex's influences by bone name.

use proptest::prelude::*;
use skelport_ir::{
    Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Frame, Influences, Input, Mesh, Skeleton, Skin, Transform, WriteOptions,
};
use std::collections::HashMap;

/// The formats checked here: every one that reads and writes any skeleton as given.
fn formats() -> impl Iterator<Item = &'static dyn skelport::Format> {
    skelport::formats().iter().copied().filter(|f| f.can_read() && f.can_write() && f.holds().any_skeleton && f.holds().orientations)
}

#[derive(Debug, Clone)]
struct BoneSpec {
    parent: Option<prop::sample::Index>,
    euler: (f64, f64, f64),
    t: (f64, f64, f64),
}

fn bone_spec() -> impl Strategy<Value = BoneSpec> {
    (
        prop::option::weighted(0.9, any::<prop::sample::Index>()),
        (-3.0..3.0f64, -3.0..3.0f64, -3.0..3.0f64),
        (-1.0..1.0f64, -1.0..1.0f64, -1.0..1.0f64),
    )
        .prop_map(|(parent, euler, t)| BoneSpec { parent, euler, t })
}

fn build(specs: &[BoneSpec], weights: &[Vec<(prop::sample::Index, f64)>], frame_i: usize) -> Document {
    let frame = [Frame::GLTF, Frame::BLENDER, Frame::SECOND_LIFE][frame_i % 3];
    let mut doc = Document::new(frame);
    let mut sk = Skeleton::new("rig");
    for (i, s) in specs.iter().enumerate() {
        // The first bone is a root; the others hang from an earlier bone, or are roots too.
        let parent = if i == 0 { None } else { s.parent.as_ref().map(|p| BoneId::from_index(p.index(i))) };
        let rot = DQuat::from_euler(glam::EulerRot::XYZ, s.euler.0, s.euler.1, s.euler.2);
        sk.push(Bone::new(format!("bone_{i}"), parent, Transform::from_rt(rot, DVec3::new(s.t.0, s.t.1, s.t.2))));
    }
    let n = specs.len();
    let world = sk.world_matrices();
    let joints: Vec<BoneId> = (0..n).map(BoneId::from_index).collect();
    let inverse_bind: Vec<DMat4> = world.iter().map(|m| m.inverse()).collect();
    doc.skeletons.push(sk);
    let positions: Vec<DVec3> = (0..weights.len()).map(|v| DVec3::new(v as f64 * 0.01, 0.5, 0.0)).collect();
    doc.meshes.push(Mesh { name: "m".into(), positions, ..Default::default() });
    let lists: Vec<Vec<(u32, f64)>> = weights
        .iter()
        .map(|ws| {
            let mut l: Vec<(u32, f64)> = Vec::new();
            for (j, w) in ws {
                let j = j.index(n) as u32;
                if !l.iter().any(|e| e.0 == j) {
                    l.push((j, *w));
                }
            }
            l
        })
        .collect();
    let mut influences = Influences::from_lists(lists);
    influences.normalize();
    doc.skins.push(Skin {
        name: "s".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints,
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences,
        ext: Default::default(),
    });
    doc
}

/// World positions by bone name, and parent names, in the glTF frame.
fn shape(doc: &Document) -> (HashMap<String, DVec3>, HashMap<String, Option<String>>) {
    let mut d = doc.clone();
    d.convert_frame(Frame::GLTF);
    let sk = &d.skeletons[0];
    let w = sk.world_matrices();
    let pos = sk.bones.iter().zip(&w).map(|(b, m)| (b.name.clone(), m.w_axis.truncate())).collect();
    let parents = sk.bones.iter().map(|b| (b.name.clone(), b.parent.map(|p| sk.bones[p.index()].name.clone()))).collect();
    (pos, parents)
}

/// Each vertex's influences as bone name → weight (normalised).
fn weights_by_name(doc: &Document) -> Vec<HashMap<String, f64>> {
    let sk = doc.skeleton(doc.skins[0].skeleton);
    let skin = &doc.skins[0];
    let mut inf = skin.influences.clone();
    inf.normalize();
    (0..inf.vertex_count())
        .map(|v| inf.vertex(v).map(|(s, w)| (sk.bones[skin.joints[s as usize].index()].name.clone(), w)).collect())
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]
    #[test]
    fn random_skeletons_and_skins_survive_every_writer(
        specs in prop::collection::vec(bone_spec(), 1..30),
        weights in prop::collection::vec(prop::collection::vec((any::<prop::sample::Index>(), 0.05..1.0f64), 1..6), 3..20),
        frame_i in 0usize..3,
    ) {
        let doc = build(&specs, &weights, frame_i);
        prop_assume!(skelport_ir::validate::validate(&doc).is_empty());
        let (pos0, par0) = shape(&doc);
        let w0 = weights_by_name(&doc);
        for f in formats() {
            let name = f.name();
            let opts = WriteOptions { file_stem: "rt".into(), embed: true, ..Default::default() };
            let out = f.write(&doc, &opts, &mut Diagnostics::default()).map_err(|e| TestCaseError::fail(format!("{name}: write: {e}")))?;
            // With the side files its reader needs given back (MPFB's weights).
            let back = f.read(Input { path: None, bytes: &out.main }, &f.read_back(&out), &mut Diagnostics::default())
                .map_err(|e| TestCaseError::fail(format!("{name}: read back: {e}")))?;
            let (pos1, par1) = shape(&back);
            for (bone, p) in &pos0 {
                let q = pos1.get(bone).ok_or_else(|| TestCaseError::fail(format!("{name}: lost bone {bone}")))?;
                // glTF/G4MF store 32-bit floats in places; 1e-4 m is far below any visible change.
                prop_assert!((*p - *q).length() < 1e-4, "{}: bone {} moved {:?} → {:?}", name, bone, p, q);
                prop_assert_eq!(&par0[bone], &par1[bone], "{}: parent of {}", name, bone);
            }
            if f.holds().skins {
                prop_assert!(!back.skins.is_empty(), "{}: lost the skin", name);
                let w1 = weights_by_name(&back);
                prop_assert_eq!(w0.len(), w1.len(), "{}: vertex count", name);
                for (v, (a, b)) in w0.iter().zip(&w1).enumerate() {
                    for (bone, w) in a {
                        let got = b.get(bone).copied().unwrap_or(0.0);
                        prop_assert!((w - got).abs() < 1e-4, "{}: vertex {} bone {}: {} → {}", name, v, bone, w, got);
                    }
                }
            }
        }
    }
}

/// A writer that names the frame it converts to (`Format::write_frame`) writes the same bytes
/// whether it is handed the document as it is or already converted there (the CLI converts in
/// place first, to spare the writer a copy).
#[test]
fn writers_give_the_same_bytes_for_a_document_converted_to_their_frame_first() {
    let sample = skelport::demo::sample();
    let mut checked = 0;
    for f in skelport::registry::formats().iter().filter(|f| f.can_write()) {
        let Some(frame) = f.write_frame() else { continue };
        // The sample in a frame the writer must convert from.
        let other = if sample.frame == frame { Frame::GLTF } else { sample.frame };
        let doc = sample.in_frame(other).into_owned();
        assert_ne!(doc.frame, frame);
        let mut converted = doc.clone();
        converted.convert_frame(frame);
        let opts = WriteOptions::default();
        let a = f.write(&doc, &opts, &mut Diagnostics::default()).unwrap();
        let b = f.write(&converted, &opts, &mut Diagnostics::default()).unwrap();
        assert!(a.main == b.main && a.side_files == b.side_files, "{}", f.name());
        checked += 1;
    }
    assert!(checked > 0, "no writer names its frame");
}
