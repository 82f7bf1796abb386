//! MPFB over the whole corpus: every rig reads, placement matches independently computed
//! positions, v110 rigs round-trip as JSON, v100 rigs come back as their v110 upgrade.

use serde_json::Value;
use skelport_ir::{DVec3, Diagnostics, Document, Format, Input, ReadOptions, WriteOptions};
use skelport_mpfb::write::canonical;
use skelport_mpfb::MpfbFormat;
use std::path::PathBuf;

fn corpus() -> Option<PathBuf> {
    skelport_ir::testing::corpus_root().map(|c| c.join("mpfb"))
}

fn rigs(c: &std::path::Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = ["rigs/standard", "rigs/rigify"]
        .iter()
        .flat_map(|d| std::fs::read_dir(c.join(d)).unwrap().flatten().map(|e| e.path()))
        .filter(|p| p.file_name().unwrap().to_string_lossy().starts_with("rig."))
        .collect();
    v.sort();
    v
}

fn read(path: &std::path::Path, opts: &ReadOptions) -> (Document, Diagnostics) {
    let mut d = Diagnostics::default();
    let bytes = std::fs::read(path).unwrap();
    let doc =
        MpfbFormat.read(Input { path: Some(path), bytes: &bytes }, opts, &mut d).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (doc, d)
}

fn world_heads_tails(doc: &Document) -> Vec<(String, DVec3, DVec3)> {
    let sk = &doc.skeletons[0];
    let w = sk.world_transforms();
    let t = skelport_ir::proc::tails(sk, &w, 1.0);
    sk.bones.iter().enumerate().map(|(i, b)| (b.name.clone(), w[i].translation, t[i])).collect()
}

#[test]
fn every_rig_reads_with_and_without_the_base_mesh() {
    let Some(c) = corpus() else { return };
    let mesh = Some(c.join("3dobjs/base.obj"));
    let list = rigs(&c);
    assert_eq!(list.len(), 8);
    for p in list {
        let (plain, d) = read(&p, &ReadOptions::default());
        assert!(d.items.iter().any(|x| x.code == "mpfb.no-mesh"));
        let (placed, _) = read(&p, &ReadOptions { mesh: mesh.clone(), ..Default::default() });
        assert_eq!(plain.skeletons[0].bones.len(), placed.skeletons[0].bones.len());
        assert!(skelport_ir::validate::validate(&placed).is_empty(), "{}", p.display());
        assert_eq!(placed.meshes[0].positions.len(), 13380, "helpers trimmed");
    }
}

#[test]
fn default_rig_places_163_bones_where_an_independent_computation_does() {
    let Some(c) = corpus() else { return };
    let opts = ReadOptions { mesh: Some(c.join("3dobjs/base.obj")), keep_origin: true, ..Default::default() };
    let (doc, _) = read(&c.join("rigs/standard/rig.default.json"), &opts);
    assert_eq!(doc.skeletons[0].bones.len(), 163);
    // Tails computed with a separate Python script over base.obj: OBJ (x, y, z) → (x, −z, y) × 0.1,
    // CUBE = mean of the group's vertices, MEAN = mean of the listed vertices.
    let expected = [
        ("root", [0.0, -0.014450000000000003, 0.072685]),
        ("upperarm01.L", [0.215755, -0.019589999999999996, 0.4689650000000001]),
        ("foot.L", [0.21968000000000004, -0.062885, -0.7748]),
        ("head", [0.0, -0.008244999999999999, 0.8404350000000003]),
        ("finger2-1.R", [-0.4531525, -0.28537875, 0.18951375]),
    ];
    let ht = world_heads_tails(&doc);
    for (name, want) in expected {
        let (_, _, tail) = ht.iter().find(|x| x.0 == name).unwrap();
        assert!((*tail - DVec3::from_array(want)).length() < 1e-9, "{name}: {tail} vs {want:?}");
    }
    // Feet on the ground: the same rig lifted by the body's lowest vertex (z = −0.81676).
    let (lifted, _) = read(&c.join("rigs/standard/rig.default.json"), &ReadOptions { mesh: opts.mesh.clone(), ..Default::default() });
    let (_, _, t) = world_heads_tails(&lifted).into_iter().find(|x| x.0 == "head").unwrap();
    assert!((t.z - (0.8404350000000003 + 0.81676)).abs() < 1e-9);
    // Bones point head → tail along local +Y.
    for (name, h, t) in ht.iter().take(40) {
        let sk = &doc.skeletons[0];
        let i = sk.find(name).unwrap().index();
        let y = sk.world_transforms()[i].rotation * DVec3::Y;
        if (*t - *h).length() > 1e-6 {
            assert!((y - (*t - *h).normalize()).length() < 1e-9, "{name}");
        }
    }
}

#[test]
fn game_engine_rig_joins_its_weights() {
    let Some(c) = corpus() else { return };
    let rigs = c.join("rigs/standard");
    let opts =
        ReadOptions { mesh: Some(c.join("3dobjs/base.obj")), weights: Some(rigs.join("weights.game_engine.json")), ..Default::default() };
    let (doc, _) = read(&rigs.join("rig.game_engine.json"), &opts);
    let s = &doc.skins[0];
    assert_eq!(s.vertex_count(), 13380);
    assert_eq!(s.influences.weighted_vertices(), 13380);
    assert!(s.joints.len() <= 53 && s.joints.len() > 40);
    // A weights file against a too-small mesh says so.
    let dir = std::env::temp_dir().join(format!("skelport-mpfb-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let small = dir.join("small.obj");
    std::fs::write(&small, "v 0 0 0\nv 1 0 0\nv 0 1 0\ng body\nf 1 2 3\n").unwrap();
    let bytes = std::fs::read(rigs.join("rig.game_engine.json")).unwrap();
    let e = MpfbFormat
        .read(
            Input { path: None, bytes: &bytes },
            &ReadOptions { mesh: Some(small), weights: opts.weights.clone(), ..Default::default() },
            &mut Diagnostics::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("weights refer to vertex") && e.contains("mesh has 3 vertices"), "{e}");
}

#[test]
fn v110_rigs_round_trip_as_json_and_v100_rigs_as_their_upgrade() {
    let Some(c) = corpus() else { return };
    for p in rigs(&c) {
        let orig: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
        let (doc, _) = read(&p, &ReadOptions::default());
        let mut d = Diagnostics::default();
        let out = MpfbFormat.write(&doc, &WriteOptions { file_stem: "rig.x".into(), ..Default::default() }, &mut d).unwrap();
        let written: Value = serde_json::from_slice(&out.main).unwrap();
        let is_v110 = orig.get("version").and_then(Value::as_u64) == Some(110);
        if is_v110 {
            assert_eq!(written, canonical(&orig), "{}", p.display());
        } else {
            assert_eq!(written["version"], 110);
        }
        // Re-reading the written file gives the same IR (bones, placement, anchors).
        let (again, _) = {
            let mut dd = Diagnostics::default();
            (MpfbFormat.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut dd).unwrap(), dd)
        };
        // (Written keys are sorted, so bones come back in another order: match them by name.)
        let (a, b) = (world_heads_tails(&doc), world_heads_tails(&again));
        assert_eq!(a.len(), b.len());
        let b: std::collections::HashMap<String, (DVec3, DVec3)> = b.into_iter().map(|(n, h, t)| (n, (h, t))).collect();
        for x in &a {
            let y = (x.0.clone(), b[&x.0].0, b[&x.0].1);
            assert!((x.1 - y.1).length() < 1e-5 && (x.2 - y.2).length() < 1e-5, "{}: {}", p.display(), x.0);
        }
        // Anchors: same strategies; positions equal after MPFB's 5-decimal rounding.
        for x in &doc.skeletons[0].bones {
            let y = again.skeletons[0].bone(again.skeletons[0].find(&x.name).unwrap());
            let (a, b) = (x.anchors.as_ref().unwrap(), y.anchors.as_ref().unwrap());
            for (ea, eb) in [(&a.head, &b.head), (&a.tail, &b.tail)] {
                assert_eq!(ea.strategy, eb.strategy, "{}: {}", p.display(), x.name);
                let d = (ea.default_position.unwrap() - eb.default_position.unwrap()).abs().max_element();
                assert!(d <= 5e-6, "{}: {} default_position differs by {d}", p.display(), x.name);
            }
        }
    }
}

#[test]
fn newer_versions_and_mhskel_are_refused_clearly() {
    let e = MpfbFormat
        .read(Input { path: None, bytes: br#"{"version": 120, "bones": {"a": {}}}"# }, &ReadOptions::default(), &mut Diagnostics::default())
        .unwrap_err()
        .to_string();
    assert!(e.contains("version 120"), "{e}");
    let e = MpfbFormat
        .read(
            Input { path: None, bytes: br#"{"bones": {"a": {"head": "joint-neck", "tail": "joint-head", "roll": 0, "parent": ""}}}"# },
            &ReadOptions::default(),
            &mut Diagnostics::default(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("mhskel"), "{e}");
}
