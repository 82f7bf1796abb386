//! The loss report (issue 8): one test per class of loss the issue names, each through the
//! same path `skelport convert` takes (`skelport::render`), plus the CLI's `--json` list and
//! `--strict` exit code.

use skelport::{demo, registry, render};
use skelport_ir::{DMat4, DVec3, Document, Influences, Severity, WriteOptions};
use std::process::Command;

/// Write `doc` as `fmt`; the codes of the losses and of the notes reported.
fn codes(doc: &Document, fmt: &str, opts: WriteOptions) -> (Vec<String>, Vec<String>) {
    let (_, d) = render(doc, registry::by_name(fmt).unwrap(), &WriteOptions { file_stem: "x".into(), ..opts }).unwrap();
    let of = |s: Severity| d.items.iter().filter(|i| i.severity == s).map(|i| i.code.clone()).collect();
    (of(Severity::Loss), of(Severity::Info))
}

fn losses(doc: &Document, fmt: &str) -> Vec<String> {
    codes(doc, fmt, WriteOptions::default()).0
}

fn with_mpfb_data() -> Document {
    let mut d = demo::sample();
    d.skeletons[0].bones[0]
        .ext
        .set_raw("mpfb", serde_json::json!({ "rotation_strategy": "ALIGN_Z_WORLD_TO_LOCAL", "constraints": [{ "type": "IK" }] }));
    d
}

#[test]
fn mpfb_strategies_and_constraints_are_lost_where_no_extras_hold_them() {
    let d = with_mpfb_data();
    for fmt in ["dae", "anvil", "anvil-schema"] {
        assert!(losses(&d, fmt).contains(&"mpfb.rig-data".to_string()), "{fmt}");
    }
    // glTF and G4MF keep them as skelport extras: a note (other tools ignore extras), no loss.
    for fmt in ["glb", "g4b"] {
        let (l, notes) = codes(&d, fmt, WriteOptions::default());
        assert!(!l.contains(&"mpfb.rig-data".to_string()) && notes.contains(&"mpfb.extras-only".to_string()), "{fmt}: {l:?} {notes:?}");
    }
    assert!(!losses(&demo::sample(), "dae").contains(&"mpfb.rig-data".to_string()));
    assert!(losses(&d, "mpfb").iter().all(|c| c != "mpfb.rig-data"));
}

#[test]
fn anvil_modifiers_are_lost_into_sl() {
    let p = skelport_ir::testing::workspace_root().join("testdata/anvil/biped.standard.xml");
    let biped = skelport::open(&p, &Default::default()).unwrap().doc;
    let (_, d) = render(&biped, registry::by_name("dae").unwrap(), &WriteOptions { file_stem: "x".into(), ..Default::default() }).unwrap();
    let m = d.items.iter().find(|i| i.code == "anvil.modifiers").expect("modifier loss");
    // biped.standard.xml has 19: 14 `…BoneModifier` classes and 5 named `…Modifier`
    // (RotationConstraint, RotationExpression, RotationPaste, SplineConstraint, SpringBox).
    assert!(m.message.starts_with("19 AnvilToolkit bone modifier(s)"), "{}", m.message);
    assert!(losses(&biped, "anvil-schema").iter().all(|c| c != "anvil.modifiers"));
    assert!(!losses(&demo::sample(), "dae").contains(&"anvil.modifiers".to_string()));
}

#[test]
fn rest_pose_unlike_bind_pose_is_kept_in_g4mf_extras() {
    let mut d = demo::sample();
    let rest_pose = "g4mf.rest-pose".to_string();
    assert!(!codes(&d, "g4tf", WriteOptions::default()).1.contains(&rest_pose));
    // Bind the fourth joint 5 cm away from its rest pose: G4MF's one pose is the bind pose, the
    // rest pose travels in skelport extras (a note, not a loss).
    d.skins[0].inverse_bind[3] *= DMat4::from_translation(DVec3::new(0.05, 0.0, 0.0));
    let (loss, notes) = codes(&d, "g4tf", WriteOptions::default());
    assert!(notes.contains(&rest_pose) && !loss.contains(&rest_pose), "{loss:?} {notes:?}");
    assert!(!codes(&d, "glb", WriteOptions::default()).1.contains(&rest_pose), "glTF keeps both poses");
}

#[test]
fn influences_beyond_the_target_limit_are_reported() {
    // An SL rig (the sample through the SL map): the SL importer takes 4 influences per vertex.
    let mut d = demo::sample();
    skelport_ir::retarget::apply(&mut d, &skelport::maps::load("mpfb-game_engine-to-sl").unwrap()).unwrap();
    assert!(!losses(&d, "dae").contains(&"dae-influences".to_string()));
    let s = &mut d.skins[0];
    let mut lists = s.influences.to_lists();
    lists[0] = (0..5).map(|j| (j, 0.2)).collect();
    s.influences = Influences::from_lists(lists);
    assert!(losses(&d, "dae").contains(&"dae-influences".to_string()), "SL allows 4");
    let (l, _) = codes(&d, "glb", WriteOptions { max_influences: Some(4), ..Default::default() });
    assert!(l.contains(&"gltf.max-influences".to_string()), "{l:?}");
}

#[test]
fn bones_beyond_the_target_bone_limit_are_refused() {
    let mut d = demo::sample();
    let f = registry::by_name("anvil-schema").unwrap();
    let opts = WriteOptions { file_stem: "x".into(), ..Default::default() };
    assert!(render(&d, f, &opts).is_ok());
    // Schema-Based skeletons index bones with one byte: 255 at most.
    let parent = skelport_ir::BoneId::new(0);
    for k in 0..240 {
        d.skeletons[0].push(skelport_ir::Bone::new(format!("extra{k}"), Some(parent), skelport_ir::Transform::default()));
    }
    let e = format!("{:#}", render(&d, f, &opts).unwrap_err());
    assert!(e.contains("263 bones") && e.contains("at most 255"), "{e}");
    let e = format!(
        "{:#}",
        render(&demo::sample(), registry::by_name("anvil").unwrap(), &WriteOptions { bone_limit: Some(10), ..opts }).unwrap_err()
    );
    assert!(e.contains("23 bones exceed the bone limit of 10"), "{e}");
}

#[test]
fn names_the_target_forbids_are_reported() {
    let mut d = demo::sample();
    assert!(!losses(&d, "g4b").contains(&"g4mf.names".to_string()));
    d.skeletons[0].bones[2].name = "spine.001".into();
    assert!(losses(&d, "g4b").contains(&"g4mf.names".to_string()));
    // SL takes only its own joint names.
    assert!(losses(&d, "dae").contains(&"dae-not-sl".to_string()));
}

#[test]
fn cli_lists_losses_in_json_and_strict_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("in.ir.json");
    let out = render(&with_mpfb_data(), registry::by_name("ir-json").unwrap(), &WriteOptions::default()).unwrap().0;
    std::fs::write(&src, out.main).unwrap();
    let dae = dir.path().join("out.dae");
    let run = |extra: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_skelport"))
            .args(["convert", src.to_str().unwrap(), "-o", dae.to_str().unwrap()])
            .args(extra)
            .output()
            .unwrap()
    };
    let o = run(&["--json"]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let list: Vec<&str> =
        v["diagnostics"].as_array().unwrap().iter().filter(|d| d["severity"] == "loss").map(|d| d["code"].as_str().unwrap()).collect();
    assert!(list.contains(&"mpfb.rig-data") && list.contains(&"dae-not-sl"), "{list:?}");
    let o = run(&[]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("loss: "), "warnings printed");
    std::fs::remove_file(&dae).unwrap();
    let o = run(&["--strict"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--strict"));
    assert!(!dae.exists(), "--strict writes nothing");
}
