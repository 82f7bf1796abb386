//! The registry is the only list of formats, so what the project promises for each format is
//! checked here by iterating it: a test fails when a registered format lacks its malformed-input
//! suite, its fuzz target or its docs/formats page, and each format's [`Holds`] is checked by a
//! round trip, so the table the matrix, the loss report and the tests rely on stays true.

use skelport::ir::{DQuat, DVec3, InputRole};
use skelport::{ConvertOptions, Format, Holds, Loaded};
use std::collections::HashSet;

fn formats() -> impl Iterator<Item = &'static dyn Format> {
    skelport::formats().iter().copied()
}

#[test]
fn every_format_has_its_inputs_suites_fuzz_targets_and_docs_page() {
    let root = skelport::ir::testing::workspace_root();
    let pages: Vec<String> =
        std::fs::read_dir(root.join("docs/formats")).unwrap().flatten().map(|e| std::fs::read_to_string(e.path()).unwrap()).collect();
    let (mut suites, mut targets) = (HashSet::new(), HashSet::new());
    let mut problems = Vec::new();
    for f in formats() {
        let name = f.name();
        if !pages.iter().any(|p| p.contains(&format!("`{name}`"))) {
            problems.push(format!("{name}: no page in docs/formats/ names `{name}`"));
        }
        if !f.can_read() {
            continue;
        }
        match f.inputs().first() {
            Some(k) if k.role == InputRole::Main => {}
            _ => problems.push(format!("{name}: reads, but declares no main input first (Format::inputs)")),
        }
        for k in f.inputs() {
            let dir = root.join("testdata/bad").join(k.suite);
            let cases =
                std::fs::read_dir(&dir).map(|d| d.flatten().filter(|e| !e.file_name().to_string_lossy().ends_with(".expected")).count());
            match cases {
                Ok(n) if n >= 40 => {}
                Ok(n) => problems.push(format!("{name}: testdata/bad/{}/ has {n} malformed files, want 40 (xtask/src/bad.rs)", k.suite)),
                Err(_) => problems.push(format!("{name}: no malformed-input suite testdata/bad/{}/ (xtask/src/bad.rs)", k.suite)),
            }
            if !suites.insert(k.suite) {
                problems.push(format!("{name}: suite {} declared twice", k.suite));
            }
            if !targets.insert(k.fuzz_target) {
                problems.push(format!("{name}: fuzz target {} declared twice", k.fuzz_target));
            }
            // The target runs (through the registry: nothing else lists it).
            skelport::fuzzing::run_target(k.fuzz_target, b"");
        }
    }
    // Every suite under testdata/bad/ belongs to a registered format.
    for e in std::fs::read_dir(root.join("testdata/bad")).unwrap().flatten().filter(|e| e.path().is_dir()) {
        let dir = e.file_name().to_string_lossy().into_owned();
        if !suites.contains(dir.as_str()) {
            problems.push(format!("testdata/bad/{dir}/ belongs to no registered format's inputs"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    assert!(targets.len() >= formats().filter(|f| f.can_read()).count());
}

/// The sample with what each capability is about: a scaled bone, normals, UVs, foreign
/// extension data on a bone.
fn probe() -> skelport::Document {
    let mut doc = skelport::demo::sample();
    let sk = &mut doc.skeletons[0];
    let hand = sk.find("hand_l").unwrap().index();
    sk.bones[hand].rest.scale = DVec3::splat(1.25);
    // A bone without a length whose axis does not point at its child: formats that store a head
    // and a tail re-derive its orientation (the tail at the child).
    let calf = sk.find("calf_r").unwrap().index();
    sk.bones[calf].rest.rotation = (sk.bones[calf].rest.rotation * DQuat::from_rotation_x(0.3)).normalize();
    sk.bones[calf].length = None;
    sk.bones[0].ext.set_raw("probe", serde_json::json!({"kept": true}));
    // Bound at rest, as changed.
    let world = sk.world_matrices();
    let skin = &mut doc.skins[0];
    skin.inverse_bind = skin.joints.iter().map(|j| world[j.index()].inverse()).collect();
    let m = &mut doc.meshes[0];
    let n = m.positions.len();
    m.normals = Some(skelport::ir::Attribute::PerVertex(vec![DVec3::Z; n]));
    m.uvs = vec![skelport::ir::UvSet {
        name: "UVMap".into(),
        uvs: skelport::ir::Attribute::PerVertex(vec![skelport::ir::DVec2::new(0.25, 0.75); n]),
    }];
    doc
}

/// What came back of [`probe`] through a format.
fn observed(back: &skelport::Document, limit: Option<usize>) -> Holds {
    let src = probe();
    let bone = |name: &str| back.skeletons.iter().flat_map(|s| &s.bones).find(|b| b.name == name);
    let report = skelport::diff(&src, back, skelport::diff::Tolerance { metres: 1e-4, degrees: 0.05, weight: 1e-4, orientations: true });
    Holds {
        skins: !back.skins.is_empty(),
        meshes: !back.meshes.is_empty(),
        scale: bone("hand_l").is_some_and(|b| (b.rest.scale - DVec3::splat(1.25)).abs().max_element() < 1e-4),
        uvs: back.meshes.iter().any(|m| !m.uvs.is_empty()),
        normals: back.meshes.iter().any(|m| m.normals.is_some()),
        extras: bone("root").is_some_and(|b| b.ext.raw("probe").is_some()),
        any_skeleton: report.added.is_empty() && report.removed.is_empty() && report.reparented.is_empty(),
        orientations: report.rotated.is_empty(),
        bind_pose: false,
        max_bones: limit,
        humanoid_only: false,
    }
}

/// Each writable and readable format's `holds()` against a round trip of [`probe`]: a claim the
/// round trip does not bear out (or a capability it shows that is not claimed) fails.
#[test]
fn what_each_format_says_it_holds_is_what_a_round_trip_keeps() {
    let dir = tempfile::tempdir().unwrap();
    let mut wrong = Vec::new();
    for f in formats().filter(|f| f.can_read() && f.can_write()) {
        let path = dir.path().join(skelport::demo::file_name(f));
        // Opted in to losses: a format that holds no mesh leaves the probe's skin numbering it.
        let opts = ConvertOptions { allow_loss: true, ..Default::default() }.named_for(&path);
        let out = skelport::convert(Loaded::from_document(probe(), "probe"), f, &opts).unwrap();
        out.save(&path).unwrap();
        let back = skelport::open(&path, &skelport::OpenOptions { from: Some(f.name().into()), reader: f.read_back(&out.output) }).unwrap();
        let claimed = f.holds();
        let seen = observed(&back.doc, claimed.max_bones);
        // A bind pose other than rest is the pose test's concern (crate::matrix); checked there.
        let claimed = Holds { bind_pose: false, humanoid_only: false, ..claimed };
        if claimed != seen {
            wrong.push(format!("{}:\n  claims {claimed:?}\n  keeps  {seen:?}", f.name()));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// A format's `max_bones` is where its writer starts refusing.
#[test]
fn bone_limits_are_where_writers_refuse() {
    for f in formats().filter(|f| f.can_write()) {
        let Some(max) = f.holds().max_bones else { continue };
        if max > 4096 {
            continue; // the 65,535-deep chain (deep_chain.rs) covers the big ones
        }
        let chain = |n: usize| {
            let mut sk = skelport::ir::Skeleton::new("chain");
            for i in 0..n {
                let parent = i.checked_sub(1).map(|p| skelport::ir::BoneId::from_index(p));
                sk.push(skelport::ir::Bone::new(
                    format!("b{i}"),
                    parent,
                    skelport::ir::Transform::from_rt(DQuat::IDENTITY, DVec3::Y * 0.01),
                ));
            }
            let mut d = skelport::Document::new(skelport::ir::Frame::GLTF);
            d.skeletons.push(sk);
            Loaded::from_document(d, "chain")
        };
        let opts = ConvertOptions::default();
        assert!(skelport::convert(chain(max), f, &opts).is_ok(), "{} refused {max} bones", f.name());
        assert!(skelport::convert(chain(max + 1), f, &opts).is_err(), "{} took {} bones", f.name(), max + 1);
    }
}
