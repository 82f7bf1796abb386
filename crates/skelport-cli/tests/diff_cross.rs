//! `skelport diff` across formats (issue 8): an MPFB rig against its glTF export, by name and
//! through a retarget map; an SL file against the SL avatar skeleton; and each kind of
//! difference (missing/extra bones, moves, rotations, hierarchy, skins) on a small document.

use serde_json::Value;
use skelport::diff::{diff, Tolerance};
use skelport_ir::{BoneId, DQuat, DVec3};
use std::path::PathBuf;
use std::process::{Command, Output};

fn skelport(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skelport")).args(args).output().expect("run skelport")
}

fn json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr)))
}

struct Mh {
    rig: String,
    weights: String,
    mesh: String,
}

fn makehuman() -> Option<Mh> {
    let c = skelport_ir::testing::corpus_root()?;
    let s = c.join("mpfb/rigs/standard");
    let p = |x: PathBuf| x.to_str().unwrap().to_string();
    Some(Mh {
        rig: p(s.join("rig.game_engine.json")),
        weights: p(s.join("weights.game_engine.json")),
        mesh: p(c.join("mpfb/3dobjs/base.obj")),
    })
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn mpfb_rig_against_its_gltf_export_is_the_same() {
    let Some(m) = makehuman() else { return };
    let dir = tempfile::tempdir().unwrap();
    let glb = dir.path().join("body.glb");
    let c = skelport(&["convert", &m.rig, "--weights", &m.weights, "--mesh", &m.mesh, "-o", glb.to_str().unwrap()]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let o = skelport(&["diff", &m.rig, glb.to_str().unwrap(), "--mesh", &m.mesh, "--weights", &m.weights, "--json", "--pose-test"]);
    let v = json(&o);
    assert_eq!(o.status.code(), Some(0), "{v:#}");
    assert_eq!(v["same"], true);
    assert!(v["max_head_distance"].as_f64().unwrap() < 1e-6, "{v:#}");
    assert_eq!(v["pose_test"]["vertices"], 13380);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn mpfb_rig_against_its_sl_export_through_the_map() {
    let Some(m) = makehuman() else { return };
    let dir = tempfile::tempdir().unwrap();
    let dae = dir.path().join("avatar.dae");
    let c = skelport(&[
        "convert",
        &m.rig,
        "--weights",
        &m.weights,
        "--mesh",
        &m.mesh,
        "--map",
        "mpfb-game_engine-to-sl",
        "-o",
        dae.to_str().unwrap(),
    ]);
    assert!(c.status.success(), "{}", String::from_utf8_lossy(&c.stderr));
    let d = dae.to_str().unwrap();
    // By name the two share nothing: every bone is missing on one side.
    let v = json(&skelport(&["diff", &m.rig, d, "--mesh", &m.mesh, "--weights", &m.weights, "--json"]));
    assert_eq!(v["removed"].as_array().unwrap().len(), 53, "{v:#}");
    // Through the map, the rig is converted as `convert` did and read back: every mapped bone
    // is matched, stands where the rig has it and is turned as SL turns it (SL's orientations
    // and the spine bones the SL skeleton adds are on both sides); the skin's joints match.
    let v = json(&skelport(&["diff", &m.rig, d, "--mesh", &m.mesh, "--weights", &m.weights, "--map", "mpfb-game_engine-to-sl", "--json"]));
    assert_eq!(v["same"], true, "{v:#}");
    assert!(v["removed"].as_array().unwrap().is_empty(), "{v:#}");
    assert!(v["moved"].as_array().unwrap().is_empty(), "{v:#}");
    assert!(v["rotated"].as_array().unwrap().is_empty(), "{v:#}");
    let skins: Vec<&str> = v["skins"].as_array().unwrap().iter().map(|s| s.as_str().unwrap()).collect();
    assert!(skins.iter().all(|s| !s.contains("joints only in")), "{skins:?}");
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn sl_file_against_the_sl_skeleton() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let f = c.join("sl/linden-lab/female_2016_08_05.dae");
    let o = skelport(&["diff", f.to_str().unwrap(), "--sl", "--json"]);
    let v = json(&o);
    // Every joint of the file is an SL joint: none extra; the file's joints sit where SL puts them.
    assert!(v["removed"].as_array().unwrap().is_empty(), "{v:#}");
    assert!(v["reparented"].as_array().unwrap().is_empty(), "{v:#}");
    assert!(v["max_head_distance"].as_f64().unwrap() < 1e-3, "{v:#}");
    // And the built-in skeleton against itself (from the viewer's file) is the same.
    let x = c.join("sl/viewer/avatar_skeleton.xml");
    let o = skelport(&["diff", x.to_str().unwrap(), "--sl", "--json"]);
    assert_eq!(o.status.code(), Some(0), "{:#}", json(&o));
}

#[test]
fn each_kind_of_difference_is_reported() {
    let a = skelport::demo::sample();
    assert!(diff(&a, &a, Tolerance::default()).same);
    let mut b = a.clone();
    let sk = &mut b.skeletons[0];
    let n = sk.bones.len();
    // Extra bone, renamed (missing + extra), rotated, moved and reparented bones.
    sk.push(skelport_ir::Bone::new("extra", Some(BoneId::new(0)), skelport_ir::Transform::default()));
    let renamed = sk.bones[n - 1].name.clone();
    sk.bones[n - 1].name = "renamed".into();
    let rotated = sk.bones[1].name.clone();
    sk.bones[1].rest.rotation = DQuat::from_rotation_z(0.1) * sk.bones[1].rest.rotation;
    let moved = sk.bones[0].name.clone();
    sk.bones[0].rest.translation += DVec3::new(0.0, 0.02, 0.0);
    // Weights: vertex 0 changes joints.
    let mut lists = b.skins[0].influences.to_lists();
    lists[0] = vec![(1, 1.0)];
    b.skins[0].influences = skelport_ir::Influences::from_lists(lists);
    let r = diff(&a, &b, Tolerance::default());
    assert!(!r.same);
    assert_eq!(r.added, vec!["renamed".to_string(), "extra".to_string()]);
    assert_eq!(r.removed, vec![renamed]);
    assert!(r.rotated.iter().any(|x| x.bone == rotated && (x.degrees - 0.1f64.to_degrees()).abs() < 1e-6), "{:?}", r.rotated);
    assert!(r.moved.iter().any(|x| x.bone == moved && (x.head - 0.02).abs() < 1e-9), "{:?}", r.moved);
    assert!(r.skins.iter().any(|s| s.contains("vertices have different weights")), "{:?}", r.skins);
    // Hierarchy: hang a bone from another parent, keeping its world place.
    let mut c = a.clone();
    let world = c.skeletons[0].world_matrices();
    let k = c.skeletons[0].bones.iter().rposition(|x| x.parent.is_some_and(|p| p.index() > 0)).unwrap();
    c.skeletons[0].bones[k].parent = Some(BoneId::new(0));
    c.skeletons[0].bones[k].rest = skelport_ir::Transform::from_matrix(&(world[0].inverse() * world[k])).unwrap();
    let r = diff(&a, &c, Tolerance::default());
    assert_eq!(r.reparented.len(), 1, "{:?}", r.reparented);
    assert!(r.moved.is_empty(), "{:?}", r.moved);
}

/// `--map humanoid` renames A to the names of B's format, or with `--sl` to the SL skeleton's:
/// the demo rig (Unreal-style names) compared with the SL avatar has no bone in common as read,
/// and its 18 humanoid bones under their SL names after the map. A format that holds any names
/// has none to rename to, which the message says. (It used to be refused as a map file that does
/// not exist.)
#[test]
fn the_humanoid_map_renames_to_b_s_names_or_to_the_sl_skeleton_s() {
    let sample = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo/sample.glb");
    let sample = sample.to_str().unwrap();
    let as_read = json(&skelport(&["diff", sample, "--sl", "--json"]));
    assert_eq!(as_read["compared"]["bones"], 0, "{as_read:#}");
    let o = skelport(&["diff", sample, "--sl", "--map", "humanoid", "--json"]);
    let v = json(&o);
    assert_eq!(v["compared"]["bones"], 18, "{v:#}");
    assert_eq!(v["removed"].as_array().map(Vec::len), Some(0), "every bone of A has its SL name: {v:#}");
    let o = skelport(&["diff", sample, sample, "--map", "humanoid"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("--map humanoid: glb holds any bone names, so there is nothing to rename to"), "{err}");
    // render --overlay: the overlay takes the drawn file's names.
    let dir = tempfile::tempdir().unwrap();
    let dae = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo/sample.dae");
    let svg = dir.path().join("r.svg");
    let o = skelport(&["render", dae.to_str().unwrap(), "--overlay", sample, "--map", "humanoid", "-o", svg.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}
