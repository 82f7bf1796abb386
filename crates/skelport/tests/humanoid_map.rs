//! `--map humanoid` (issue 27): a VRM's bone roles (or a rig a built-in humanoid map knows)
//! rename its bones to the names the target format's rigs use, so VRM → Second Life and
//! VRM → AnvilToolkit need no map file; a target that holds any names refuses it, naming those
//! that take it.

use skelport::{ConvertOptions, Loaded};

fn vrm() -> Loaded {
    let p = skelport::ir::testing::workspace_root().join("testdata/demo/sample.vrm");
    skelport::open(&p, &Default::default()).unwrap()
}

fn names(c: &skelport::Converted, to: &str) -> Vec<String> {
    let f = skelport::format(to).unwrap();
    let back = skelport::from_bytes("out", &c.output.main, &skelport::OpenOptions { from: Some(to.into()), ..Default::default() }).unwrap();
    assert_eq!(back.format.name(), f.name());
    back.doc.skeletons.iter().flat_map(|s| s.bones.iter().map(|b| b.name.clone())).collect()
}

#[test]
fn a_vrm_takes_the_second_life_and_anvil_names_by_its_roles() {
    let src = vrm();
    let opts = ConvertOptions { map: Some("humanoid".into()), ..Default::default() };
    for (to, hips, head) in [("dae", "mPelvis", "mHead"), ("anvil", "Hips", "Head")] {
        let out = skelport::convert(&src, skelport::format(to).unwrap(), &opts).unwrap();
        let got = names(&out, to);
        assert!(got.iter().any(|n| n == hips) && got.iter().any(|n| n == head), "{to}: {got:?}");
        // Without the map the VRM's own names go in (and SL drops every one that is not its).
        let plain = skelport::convert(&src, skelport::format(to).unwrap(), &ConvertOptions::default());
        if let Ok(plain) = plain {
            assert!(!names(&plain, to).iter().any(|n| n == hips), "{to}");
        }
    }
}

#[test]
fn a_target_with_any_names_refuses_the_humanoid_map() {
    let opts = ConvertOptions { map: Some("humanoid".into()), ..Default::default() };
    let e = skelport::convert(vrm(), skelport::format("glb").unwrap(), &opts).unwrap_err().to_string();
    assert!(e.contains("--map humanoid") && e.contains("dae") && e.contains("anvil"), "{e}");
}
