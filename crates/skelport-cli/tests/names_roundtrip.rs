//! Property test (issue 21): bone names a target cannot hold. Random names, drawn from control
//! characters, quotes, `<&>`, characters outside the Basic Multilingual Plane, the characters
//! XML 1.0 forbids and blanks, go through every registered writer; each output must read back
//! with its own reader, every name the target can hold must come back as it was, and every name
//! that changed must have been reported as a loss.

use proptest::prelude::*;
use skelport::registry;
use skelport_ir::{
    Bone, BoneId, DMat4, DQuat, DVec3, Diagnostics, Document, Frame, Influences, Input, Mesh, ReadOptions, Severity, Skeleton, Skin,
    Transform, WriteOptions,
};
use std::collections::BTreeSet;

/// Characters names are made of: the awkward ones weighted as heavily as the plain ones.
const POOL: &[char] = &[
    'a',
    'B',
    'z',
    '0',
    '9',
    '_',
    '-',
    '.',
    ':',
    ' ',
    '\t',
    '\n',
    '\r',
    '\u{1}',
    '\u{8}',
    '\u{1f}',
    '\u{7f}',
    '\u{85}',
    '"',
    '\'',
    '<',
    '>',
    '&',
    ';',
    '%',
    '#',
    '/',
    '\\',
    '=',
    '?',
    '*',
    '|',
    '@',
    'é',
    'ß',
    '中',
    '\u{200b}',
    '\u{feff}',
    '\u{fffe}',
    '\u{ffff}',
    '\u{fffd}',
    '😀',
    '\u{10ffff}',
    '\u{e000}',
];

fn name() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(POOL), 1..7).prop_map(|v| v.into_iter().collect())
}

/// A chain of bones with these names (the first a root), a mesh of one vertex per bone and a
/// skin binding each vertex wholly to its bone.
fn doc(names: &[String], other: &str) -> Document {
    let mut d = Document::new(Frame::GLTF);
    let mut sk = Skeleton::new(other);
    for (i, n) in names.iter().enumerate() {
        let parent = (i > 0).then(|| BoneId::from_index(i - 1));
        sk.push(Bone::new(n.clone(), parent, Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.1, 0.0))));
    }
    let world = sk.world_matrices();
    d.skeletons.push(sk);
    let n = names.len();
    d.meshes.push(Mesh {
        name: other.into(),
        positions: (0..n).map(|v| DVec3::new(0.0, 0.1 * v as f64, 0.0)).collect(),
        ..Default::default()
    });
    d.skins.push(Skin {
        name: other.into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints: (0..n).map(BoneId::from_index).collect(),
        inverse_bind: world.iter().map(|m| m.inverse()).collect(),
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists((0..n).map(|v| vec![(v as u32, 1.0)])),
        ext: Default::default(),
    });
    d
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn every_writer_holds_a_name_or_reports_it(names in prop::collection::btree_set(name(), 1..6), other in name()) {
        // The skeleton, mesh and skin are named `other`: their names must not break a file either.
        let names: Vec<String> = names.into_iter().collect();
        let d = doc(&names, &other);
        // SKELPORT_NAMES_ONLY=<format> tries one format (to look at one writer's failures).
        let only = std::env::var("SKELPORT_NAMES_ONLY").ok();
        for f in registry::formats().iter().filter(|f| f.can_write() && f.can_read() && only.as_deref().is_none_or(|o| o == f.name())) {
            let mut diag = Diagnostics::default();
            let opts = WriteOptions { file_stem: "t".into(), embed: true, ..Default::default() };
            let out = match f.write(&d, &opts, &mut diag) {
                Ok(o) => o,
                // A writer may refuse a document for what it is (the SL rig has its own bone
                // names), but never by writing a file it cannot read back.
                Err(e) => {
                    let e = e.to_string();
                    if std::env::var_os("SKELPORT_NAMES_SHOW").is_some() {
                        eprintln!("{}: refused {names:?}: {e}", f.name());
                    }
                    prop_assert!(!e.is_empty());
                    continue;
                }
            };
            let back = f
                .read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default())
                .map_err(|e| TestCaseError::fail(format!("{}: the output does not read back: {e}\nnames: {names:?}\noutput: {}", f.name(), String::from_utf8_lossy(&out.main).chars().take(3000).collect::<String>())))?;
            let got: BTreeSet<&str> = back.skeletons.iter().flat_map(|s| s.bones.iter().map(|b| b.name.as_str())).collect();
            let changed: Vec<&String> = names.iter().filter(|n| !got.contains(n.as_str())).collect();
            let losses = diag.of(Severity::Loss).count();
            prop_assert!(
                changed.is_empty() || losses > 0,
                "{}: names {changed:?} did not come back ({got:?}) and no loss was reported", f.name()
            );
        }
    }
}

/// The case the issue found: a control character in a bone name made the AnvilToolkit writers
/// write XML their own reader refuses. Now the name is replaced, the loss said, the file read.
#[test]
fn a_control_character_in_a_name_is_replaced_with_a_loss() {
    let names = ["Hips".to_string(), "Spine\u{1}".to_string(), "a\"<&>\t\n\r😀".to_string()];
    let d = doc(&names, "rig");
    for fmt in ["anvil", "anvil-schema", "dae"] {
        let f = registry::by_name(fmt).unwrap();
        let mut diag = Diagnostics::default();
        let out = f.write(&d, &WriteOptions { file_stem: "t".into(), ..Default::default() }, &mut diag).unwrap();
        let back = f.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
        let got: Vec<&str> = back.skeletons[0].bones.iter().map(|b| b.name.as_str()).collect();
        assert!(got.contains(&"Spine\u{fffd}"), "{fmt}: {got:?}");
        assert!(got.contains(&"a\"<&>\t\n\r😀"), "{fmt}: escaped, not replaced: {got:?}");
        assert!(
            diag.of(Severity::Loss).any(|l| l.message.contains("\"Spine\\u{1}\" is written as \"Spine\u{fffd}\"")),
            "{fmt}: {:?}",
            diag.items
        );
    }
}
