//! MakeHuman 1.x's own rig (`makehuman1/data/rigs/default.mhskel` with `default_weights.mhw` and
//! `data/3dobjs/base.obj`, read in place from the corpus): joints and orientations against
//! MakeHuman's algorithm ([`reference`]), weights against the `.mhw`, the `.mhskel` → `.mhskel`
//! round trip, and the written files against `schemas/`.

mod reference;

use serde_json::Value;
use skelport_ir::{DVec3, Diagnostics, Document, Format, Input, ReadOptions, Severity, WriteOptions};
use skelport_mhskel::MhskelFormat;
use std::collections::HashMap;
use std::path::PathBuf;

struct Corpus {
    rig: PathBuf,
    weights: PathBuf,
    base: PathBuf,
}

fn corpus() -> Option<Corpus> {
    let c = skelport_ir::testing::corpus_root()?.join("makehuman1/data");
    Some(Corpus { rig: c.join("rigs/default.mhskel"), weights: c.join("rigs/default_weights.mhw"), base: c.join("3dobjs/base.obj") })
}

fn read(path: &std::path::Path, opts: &ReadOptions) -> (Document, Diagnostics) {
    let bytes = std::fs::read(path).unwrap();
    let mut d = Diagnostics::default();
    let doc = MhskelFormat.read(Input { path: Some(path), bytes: &bytes }, opts, &mut d).unwrap();
    (doc, d)
}

fn v(a: [f64; 3]) -> DVec3 {
    DVec3::from_array(a)
}

/// World head, tail and X axis of every bone, in MakeHuman's frame.
fn placed(doc: &Document) -> HashMap<String, (DVec3, DVec3, DVec3)> {
    assert_eq!(doc.frame, skelport_mhskel::FRAME);
    let sk = &doc.skeletons[0];
    let w = sk.world_transforms();
    sk.bones
        .iter()
        .zip(&w)
        .map(|(b, t)| {
            let tail = t.translation + t.rotation * DVec3::Y * b.length.unwrap();
            (b.name.clone(), (t.translation, tail, t.rotation * DVec3::X))
        })
        .collect()
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn joints_and_orientations_are_makehumans() {
    let Some(c) = corpus() else { return };
    // Found from the layout: base.obj beside rigs/, the weights the rig names beside it.
    let (doc, diags) = read(&c.rig, &ReadOptions::default());
    let notes: Vec<&str> = diags.items.iter().map(|d| d.code.as_str()).collect();
    assert!(notes.contains(&"mhskel.base-mesh") && notes.contains(&"mhskel.weights"), "{notes:?}");
    assert_eq!(diags.of(Severity::Warning).count(), 0, "{:?}", diags.items);
    let got = placed(&doc);
    assert_eq!(got.len(), 163);
    assert_eq!(reference::DEFAULT_RIG.len(), 163);
    let (mut worst_pos, mut worst_axis) = (0.0f64, 0.0f64);
    for (name, head, tail, x) in reference::DEFAULT_RIG {
        let (h, t, ax) = got[*name];
        worst_pos = worst_pos.max((h - v(*head)).length()).max((t - v(*tail)).length());
        worst_axis = worst_axis.max((ax - v(*x)).length());
    }
    // The reference is float32 printed to 7 decimals: 1e-5 dm is 1 µm; 1e-5 between unit axes.
    assert!(worst_pos < 1e-5, "joint positions differ from MakeHuman's by up to {worst_pos} dm");
    assert!(worst_axis < 1e-5, "bone X axes differ from MakeHuman's by up to {worst_axis}");
    // MakeHuman's bone order: breadth-first from the root.
    let sk = &doc.skeletons[0];
    assert_eq!(sk.bones[0].name, "root");
    assert_eq!(sk.bones[1].parent.map(|p| p.index()), Some(0));
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn weights_are_the_mhw_and_every_vertex_is_bound() {
    let Some(c) = corpus() else { return };
    // Helpers kept: the mesh keeps the base numbering, so vertices compare one to one.
    let (doc, _) = read(&c.rig, &ReadOptions { keep_helpers: true, ..Default::default() });
    let skin = &doc.skins[0];
    let sk = &doc.skeletons[0];
    assert_eq!(doc.meshes[0].positions.len(), 19158);
    let file: Value = serde_json::from_slice(&std::fs::read(&c.weights).unwrap()).unwrap();
    let mut want: HashMap<(usize, String), f64> = HashMap::new();
    for (bone, pairs) in file["weights"].as_object().unwrap() {
        for p in pairs.as_array().unwrap() {
            *want.entry((p[0].as_u64().unwrap() as usize, bone.clone())).or_default() += p[1].as_f64().unwrap();
        }
    }
    let mut got: HashMap<(usize, String), f64> = HashMap::new();
    for vi in 0..skin.influences.vertex_count() {
        for (j, w) in skin.influences.vertex(vi) {
            got.insert((vi, sk.bones[skin.joints[j as usize].index()].name.clone()), w);
        }
    }
    want.retain(|_, w| *w != 0.0);
    assert_eq!(got.len(), want.len());
    assert!(want.len() > 50_000);
    for (k, w) in &want {
        assert_eq!(got.get(k), Some(w), "{k:?}");
    }
    // Trimmed of helper geometry (the default), the weights stay on the body's vertices.
    let (trimmed, _) = read(&c.rig, &ReadOptions::default());
    assert!(trimmed.meshes[0].positions.len() < 19158);
    assert_eq!(trimmed.skins[0].influences.vertex_count(), trimmed.meshes[0].positions.len());
}

/// A secondary rig as MakeHuman ships them (game_engine, cmu_mb, default_no_toes): no weights
/// file; each bone names the default rig's bones it stands for (`reference`) or whose weights it
/// takes (`weights_reference`).
const SECONDARY: &str = r#"{"name": "mini", "version": 110,
 "joints": {"a": [0, 1], "b": [2, 3], "c": [4, 5], "d": [6, 7]},
 "bones": {
  "body": {"head": "a", "tail": "b", "parent": null, "reference": ["root"]},
  "hand_l": {"head": "b", "tail": "c", "parent": "body", "reference": ["wrist.L"]},
  "head_x": {"head": "b", "tail": "d", "parent": "body", "reference": ["neck01"], "weights_reference": ["head"]},
  "toe1-3.L": {"head": "c", "tail": "d", "parent": "body"},
  "ghost": {"head": "c", "tail": "a", "parent": "hand_l", "reference": ["no_such_bone"]}
 }}"#;

/// [`SECONDARY`] in a folder; with MakeHuman's default rig and weights beside it when `beside`
/// (copied from the corpus into a temporary folder, as they sit in MakeHuman's data/rigs/).
fn secondary(c: &Corpus, beside: bool) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    if beside {
        std::fs::copy(&c.rig, dir.path().join("default.mhskel")).unwrap();
        std::fs::copy(&c.weights, dir.path().join("default_weights.mhw")).unwrap();
    }
    let path = dir.path().join("mini.mhskel");
    std::fs::write(&path, SECONDARY).unwrap();
    (dir, path)
}

/// Each weighted bone's number of vertices and the sum of its weights.
fn fingerprint(doc: &Document) -> HashMap<String, (usize, f64)> {
    let (skin, sk) = (&doc.skins[0], &doc.skeletons[0]);
    let mut out: HashMap<String, (usize, f64)> = HashMap::new();
    for vi in 0..skin.influences.vertex_count() {
        let mut sum = 0.0;
        for (j, w) in skin.influences.vertex(vi) {
            let e = out.entry(sk.bones[skin.joints[j as usize].index()].name.clone()).or_default();
            e.0 += 1;
            e.1 += w;
            sum += w;
        }
        assert!((sum - 1.0).abs() < 1e-6, "vertex {vi}: weights sum to {sum}");
    }
    out
}

/// The weights MakeHuman derives: the figures are what MakeHuman 1.x's own `shared/skeleton.py`
/// (autoBuildWeightReferences, getVertexWeights) gives for [`SECONDARY`] on the default rig's
/// weights (docs/formats/mhskel.md says how this was run). `hand_l` references only `wrist.L` and
/// so takes the fingers too; `head_x` takes `head` alone (its `weights_reference` is explicit, so
/// not completed); `body` takes the rest; `toe1-3.L` would take its namesake, which has no
/// weights; `ghost` references a bone with none.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn a_secondary_rig_gets_the_weights_makehuman_derives() {
    let Some(c) = corpus() else { return };
    let (_dir, path) = secondary(&c, true);
    let opts = ReadOptions { mesh: Some(c.base.clone()), keep_helpers: true, ..Default::default() };
    let (doc, d) = read(&path, &opts);
    let got = fingerprint(&doc);
    let want = [("body", 15681, 14089.6665), ("hand_l", 1894, 1894.0), ("head_x", 4876, 3174.3335)];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (bone, n, sum) in want {
        let (gn, gsum) = got[bone];
        assert_eq!(gn, n, "{bone}");
        assert!((gsum - sum).abs() < 1e-3, "{bone}: {gsum} against MakeHuman's {sum}");
    }
    let said = d.of(Severity::Info).find(|x| x.code == "mhskel.reference-weights").expect("a note on the derived weights");
    assert!(said.message.contains("3 of 5 bones weighted"), "{}", said.message);
    let ghost = d.of(Severity::Warning).find(|x| x.code == "mhskel.reference-unweighted").expect("a warning on ghost");
    assert!(ghost.message.ends_with(": ghost"), "{}", ghost.message);
    // The default rig's weights were read as side files (kept off the outputs of the run).
    let budget = skelport_ir::Budget::unlimited();
    let opts = ReadOptions { budget: Some(budget.clone()), ..opts };
    read(&path, &opts);
    let sides = budget.side_files();
    for f in ["default.mhskel", "default_weights.mhw"] {
        assert!(sides.iter().any(|s| s.ends_with(f)), "{f} not among {sides:?}");
    }
}

/// Without the default rig beside it, a secondary rig is read skinless, and says so.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn a_secondary_rig_without_the_default_rig_beside_it_says_no_skin_was_read() {
    let Some(c) = corpus() else { return };
    let (_dir, path) = secondary(&c, false);
    let opts = ReadOptions { mesh: Some(c.base.clone()), ..Default::default() };
    let (doc, d) = read(&path, &opts);
    assert!(doc.skins.is_empty());
    let said = d.of(Severity::Warning).find(|x| x.code == "mhskel.reference-weights").expect("a warning on the reference bones");
    assert!(
        said.message.contains("4 bone(s)") && said.message.contains("default_weights.mhw") && said.message.contains("--weights"),
        "{}",
        said.message
    );
    // The rig as MakeHuman ships it (a weights file named) says nothing of it.
    let (_, d) = read(&c.rig, &opts);
    assert!(d.items.iter().all(|x| x.code != "mhskel.reference-weights"));
}

fn validator(name: &str) -> jsonschema::Validator {
    let path = skelport_ir::testing::workspace_root().join("schemas").join(name);
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).expect("schema compiles")
}

fn assert_valid(v: &jsonschema::Validator, bytes: &[u8]) {
    let doc: Value = serde_json::from_slice(bytes).unwrap();
    let errors: Vec<String> = v.iter_errors(&doc).map(|e| format!("{e} at {}", e.instance_path)).collect();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn mhskel_round_trip_gives_the_rig_back() {
    let Some(c) = corpus() else { return };
    let (doc, _) = read(&c.rig, &ReadOptions::default());
    let opts = WriteOptions { file_stem: "default".into(), mesh: Some(c.base.clone()), ..Default::default() };
    let mut d = Diagnostics::default();
    let out = MhskelFormat.write(&doc, &opts, &mut d).unwrap();
    assert_eq!(d.of(Severity::Loss).count(), 0, "{:?}", d.items);
    assert_eq!(out.side_files.len(), 1);
    assert_eq!(out.side_files[0].0, "default_weights.mhw");
    assert_valid(&validator("mhskel.schema.json"), &out.main);
    assert_valid(&validator("mhw.schema.json"), &out.side_files[0].1);
    // The same bones, joints and planes as MakeHuman's file.
    let orig: Value = serde_json::from_slice(&std::fs::read(&c.rig).unwrap()).unwrap();
    let back: Value = serde_json::from_slice(&out.main).unwrap();
    for key in ["bones", "joints", "planes", "name", "version", "description", "license", "copyright", "tags", "weights_file"] {
        assert_eq!(back[key], orig[key], "{key}");
    }
    assert!(back.get(skelport_mhskel::POSITIONS_KEY).is_none());
    // The same weights, in base numbering (the mesh was read trimmed of helpers).
    let w_orig: Value = serde_json::from_slice(&std::fs::read(&c.weights).unwrap()).unwrap();
    let w_back: Value = serde_json::from_slice(&out.side_files[0].1).unwrap();
    let sums = |v: &Value| {
        let mut m: HashMap<(String, u64), f64> = HashMap::new();
        for (b, pairs) in v["weights"].as_object().unwrap() {
            for p in pairs.as_array().unwrap() {
                *m.entry((b.clone(), p[0].as_u64().unwrap())).or_default() += p[1].as_f64().unwrap();
            }
        }
        m.retain(|_, w| *w != 0.0);
        m
    };
    let (a, b) = (sums(&w_orig), sums(&w_back));
    // Helper vertices' weights are left out with the helpers; every body vertex's are kept.
    assert!(b.len() > 40_000 && b.len() <= a.len());
    for (k, w) in &b {
        assert!((a[k] - w).abs() < 1e-12, "{k:?}");
    }
    // Read back on the base mesh, every bone stands where it stood.
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("default.mhskel");
    std::fs::write(&p, &out.main).unwrap();
    std::fs::write(dir.path().join("default_weights.mhw"), &out.side_files[0].1).unwrap();
    let (again, _) = read(&p, &ReadOptions { mesh: Some(c.base.clone()), ..Default::default() });
    let (x, y) = (placed(&doc), placed(&again));
    for (name, (h, t, ax)) in &x {
        let (h2, t2, ax2) = y[name];
        assert!((*h - h2).length() < 1e-12 && (*t - t2).length() < 1e-12 && (*ax - ax2).length() < 1e-12, "{name}");
    }
    assert_eq!(again.skins[0].influences.weighted_vertices(), doc.skins[0].influences.weighted_vertices());
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn a_rig_from_elsewhere_is_fitted_on_the_base_mesh() {
    let Some(c) = corpus() else { return };
    let (mut doc, _) = read(&c.rig, &ReadOptions::default());
    // Forget where the bones came from: a rig another tool made, standing where MakeHuman's does.
    doc.skeletons[0].ext = Default::default();
    for b in &mut doc.skeletons[0].bones {
        b.ext = Default::default();
    }
    let opts = WriteOptions { file_stem: "fitted".into(), mesh: Some(c.base.clone()), keep_origin: true, ..Default::default() };
    let mut d = Diagnostics::default();
    let out = MhskelFormat.write(&doc, &opts, &mut d).unwrap();
    assert_valid(&validator("mhskel.schema.json"), &out.main);
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("fitted.mhskel");
    std::fs::write(&p, &out.main).unwrap();
    let (again, _) = read(&p, &ReadOptions { mesh: Some(c.base.clone()), ..Default::default() });
    let (x, y) = (placed(&doc), placed(&again));
    // MakeHuman's joints are joint cubes and vertex means: MPFB's picker finds them again
    // (within 2 cm, most exactly), and a plane through a base-mesh vertex keeps the roll close.
    // A joint MakeHuman puts between two joint cubes (tongue04's head) is found as their union.
    let worst = x.iter().map(|(n, (h, _, _))| (*h - y[n.as_str()].0).length()).fold(0.0, f64::max);
    assert!(worst < 0.02, "a head moved {worst} dm");
    let exact = x.iter().filter(|(n, (h, _, _))| (*h - y[n.as_str()].0).length() < 1e-4).count();
    assert!(exact > 150, "{exact} of 163 heads found exactly");
    let codes: Vec<&str> = d.of(Severity::Loss).map(|x| x.code.as_str()).collect();
    assert!(codes.iter().all(|c| ["mhskel.fitted", "mhskel.orientation"].contains(c)), "{codes:?}");
    // The roll comes from a plane through a base-mesh vertex: close, not exact, and said.
    let turned: Vec<f64> = x.iter().map(|(n, (_, _, a))| a.angle_between(y[n.as_str()].2)).collect();
    // No bone comes back turned over: tongue04 once did (by pi), its ends fitted onto one cube.
    assert!(turned.iter().all(|t| *t < 0.1), "{turned:?}");
    let (h, t, _) = x["tongue04"];
    let (h2, t2, _) = y["tongue04"];
    assert!((h - h2).length() < 1e-4 && (t - t2).length() < 1e-4, "tongue04 {h} {t} came back {h2} {t2}");
    let said = d.of(Severity::Loss).find(|l| l.code == "mhskel.orientation").expect("an orientation loss");
    let n: usize = said.message.split(' ').next().unwrap().parse().unwrap();
    assert!(n >= turned.iter().filter(|t| **t > 1e-3).count(), "{}", said.message);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn without_a_base_mesh_joints_are_stored_and_come_back_exactly() {
    let Some(c) = corpus() else { return };
    let (doc, _) = read(&c.rig, &ReadOptions::default());
    let mut d = Diagnostics::default();
    let out = MhskelFormat.write(&doc, &WriteOptions { file_stem: "x".into(), ..Default::default() }, &mut d).unwrap();
    assert_valid(&validator("mhskel.schema.json"), &out.main);
    // Read back without any mesh: the stored positions place every joint.
    let mut rd = Diagnostics::default();
    let back = MhskelFormat.read(Input { path: None, bytes: &out.main }, &MhskelFormat.read_back(&out), &mut rd).unwrap();
    let (x, y) = (placed(&doc), placed(&back));
    for (name, (h, t, ax)) in &x {
        let (h2, t2, ax2) = y[name];
        assert!((*h - h2).length() < 1e-12 && (*t - t2).length() < 1e-12 && (*ax - ax2).length() < 1e-12, "{name}");
    }
    // Reading MakeHuman's own file without its base mesh is refused, naming the fix.
    let bytes = std::fs::read(&c.rig).unwrap();
    let e = MhskelFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap_err();
    assert!(e.to_string().contains("--mesh base.obj"), "{e}");
}
