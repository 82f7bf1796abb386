//! The `skelport` binary on MPFB rigs: inspect with the base mesh, and writing an MPFB rig from
//! another format with `--mesh` (strategies picked as MPFB's save does).

use serde_json::Value;
use std::process::Command;

fn skelport(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_skelport")).args(args).output().expect("run skelport")
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn inspect_default_rig_on_base_mesh_reports_163_bones_and_glb_round_trip_picks_strategies() {
    let Some(c) = skelport_ir::testing::corpus_root().map(|c| c.join("mpfb")) else { return };
    let (rig, base) = (c.join("rigs/standard/rig.default.json"), c.join("3dobjs/base.obj"));
    let (rig, base) = (rig.to_str().unwrap(), base.to_str().unwrap());
    let out = skelport(&["inspect", rig, "--mesh", base, "--json"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["format"], "mpfb");
    assert_eq!(v["skeletons"][0]["bones"].as_array().unwrap().len(), 163);

    // MPFB → Collada (no strategies, no tails) → MPFB with --mesh: strategies picked again on the
    // base mesh; every joint-cube and vertex head of the original is found again.
    let dir = tempfile::tempdir().unwrap();
    let dae = dir.path().join("human.dae");
    let back = dir.path().join("rig.back.json");
    let out = skelport(&["convert", rig, "--mesh", base, "-o", dae.to_str().unwrap()]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = skelport(&["convert", dae.to_str().unwrap(), "--mesh", base, "-o", back.to_str().unwrap(), "--to", "mpfb"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stderr).contains("got one picked on the mesh"));
    let w: Value = serde_json::from_slice(&std::fs::read(&back).unwrap()).unwrap();
    let orig: Value = serde_json::from_slice(&std::fs::read(rig).unwrap()).unwrap();
    let bones = w["bones"].as_object().unwrap();
    assert_eq!(bones.len(), 163);
    let mut found = 0;
    for (name, b) in orig.as_object().unwrap() {
        let (o, n) = (&b["head"], &bones[name]["head"]);
        if o["strategy"] == "CUBE" || o["strategy"] == "VERTEX" {
            found += 1;
            for k in ["strategy", "cube_name", "vertex_index"] {
                assert_eq!(o.get(k), n.get(k), "{name} head {k}");
            }
        }
    }
    assert_eq!(found, 150);
}
