//! MakeHuman into game formats (issue 8): the MPFB game_engine body through the built-in maps
//! into an SL avatar that passes the SL importer's rules, and into an AnvilToolkit Standard XML
//! with AC biped names; the mixamo maps between MPFB's mixamo rigs and Mixamo names.

use skelport_ir::ReadOptions;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

fn skelport(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skelport")).args(args).output().expect("run skelport")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

struct Rig {
    rig: PathBuf,
    weights: PathBuf,
    mesh: PathBuf,
}

fn rig(name: &str) -> Option<Rig> {
    let c = skelport_ir::testing::corpus_root()?;
    let s = c.join("mpfb/rigs/standard");
    Some(Rig {
        rig: s.join(format!("rig.{name}.json")),
        weights: s.join(format!("weights.{name}.json")),
        mesh: c.join("mpfb/3dobjs/base.obj"),
    })
}

fn convert(r: &Rig, map: &str, out: &std::path::Path) -> Output {
    skelport(&[
        "convert",
        r.rig.to_str().unwrap(),
        "--weights",
        r.weights.to_str().unwrap(),
        "--mesh",
        r.mesh.to_str().unwrap(),
        "--map",
        map,
        "-o",
        out.to_str().unwrap(),
    ])
}

fn map_targets(name: &str) -> BTreeSet<String> {
    skelport::maps::load(name).unwrap().bones.into_values().collect()
}

#[test]
fn makehuman_game_engine_becomes_an_sl_avatar_that_validates() {
    let Some(r) = rig("game_engine") else { return };
    let dir = tempfile::tempdir().unwrap();
    let dae = dir.path().join("avatar.dae");
    let c = convert(&r, "mpfb-game_engine-to-sl", &dae);
    assert!(c.status.success(), "{}", text(&c));
    let v = skelport(&["validate", dae.to_str().unwrap(), "--target", "sl"]);
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
    assert!(String::from_utf8_lossy(&v.stdout).contains("valid (dae, target sl)"), "{}", text(&v));
    // Every joint is an SL joint the map names, and the body is still skinned.
    let back = skelport::open(&dae, &Default::default()).unwrap().doc;
    let sl = map_targets("mpfb-game_engine-to-sl");
    let names: Vec<&str> = back.skeletons[0].bones.iter().map(|b| b.name.as_str()).collect();
    assert!(names.contains(&"mPelvis") && names.contains(&"mHandIndex1Left"), "{names:?}");
    for s in &back.skins {
        for j in &s.joints {
            let n = &back.skeletons[s.skeleton].bones[j.index()].name;
            assert!(sl.contains(n), "joint {n} is not a map target");
        }
    }
    assert_eq!(back.skins.iter().map(|s| s.vertex_count()).sum::<usize>(), 13380);
}

#[test]
fn makehuman_game_engine_becomes_an_ac_standard_xml_with_biped_names() {
    let Some(r) = rig("game_engine") else { return };
    let dir = tempfile::tempdir().unwrap();
    let xml = dir.path().join("ac.xml");
    let c = convert(&r, "mpfb-game_engine-to-ac", &xml);
    assert!(c.status.success(), "{}", text(&c));
    let bytes = std::fs::read(&xml).unwrap();
    // Standard form: UTF-16 with a BOM, as AnvilToolkit writes it.
    assert!(bytes.starts_with(&[0xFF, 0xFE]) || bytes.starts_with(&[0xFE, 0xFF]), "not UTF-16: {:?}", &bytes[..8]);
    let l = skelport::open(&xml, &Default::default()).unwrap();
    assert_eq!(l.format.name(), "anvil");
    let names: BTreeSet<String> = l.doc.skeletons[0].bones.iter().map(|b| b.name.clone()).collect();
    let ac = map_targets("mpfb-game_engine-to-ac");
    assert!(names.is_subset(&ac), "names not in the AC map: {:?}", names.difference(&ac).collect::<Vec<_>>());
    for n in ["Reference", "Hips", "Spine", "Spine1", "Neck", "Head", "LeftArm", "RightUpLeg"] {
        assert!(names.contains(n), "no {n} in {names:?}");
    }
    // The biped names are those of the AC biped sample skeleton.
    let biped =
        skelport::open(skelport_ir::testing::workspace_root().join("testdata/anvil/biped.standard.xml"), &Default::default()).unwrap().doc;
    let biped: BTreeSet<String> = biped.skeletons[0].bones.iter().map(|b| b.name.clone()).collect();
    let shared = names.intersection(&biped).count();
    assert!(shared >= 20, "only {shared} names shared with the AC biped: {names:?}");
}

#[test]
fn mixamo_maps_take_mpfb_mixamo_rigs_to_mixamo_and_back() {
    let (Some(plain), Some(unity)) = (rig("mixamo"), rig("mixamo_unity")) else { return };
    let read = |r: &Rig| {
        let o = ReadOptions { mesh: Some(r.mesh.clone()), weights: Some(r.weights.clone()), ..Default::default() };
        skelport::open(&r.rig, &skelport::ReadOptions { from: None, reader: o }).unwrap().doc
    };
    let reference = read(&plain);
    let ref_names: BTreeSet<String> = reference.skeletons[0].bones.iter().map(|b| b.name.clone()).collect();
    // mixamo_unity's extra bones (breasts, buttocks, face) merge into their parents; its Root,
    // above Hips, has no mapped ancestor (listed with none).
    let mut doc = read(&unity);
    let to_mixamo = skelport::maps::load("mpfb-mixamo-to-mixamo").unwrap();
    let r = skelport_ir::retarget::apply(&mut doc, &to_mixamo).unwrap();
    assert_eq!(r.dropped[0], ("mixamorig:Root".to_string(), None));
    assert!(r.dropped.len() > 1 && r.dropped[1..].iter().all(|(_, into)| into.is_some()), "{:?}", r.dropped);
    let names: BTreeSet<String> = doc.skeletons[0].bones.iter().map(|b| b.name.clone()).collect();
    assert!(names.is_subset(&ref_names), "{:?}", names.difference(&ref_names).collect::<Vec<_>>());
    // A Mixamo export names bones with another prefix (mixamorig1:); the map brings them back.
    for b in &mut doc.skeletons[0].bones {
        b.name = b.name.replace("mixamorig:", "mixamorig1:");
    }
    let back = skelport::maps::load("mixamo-to-mpfb-mixamo").unwrap();
    skelport_ir::retarget::apply(&mut doc, &back).unwrap();
    let again: BTreeSet<String> = doc.skeletons[0].bones.iter().map(|b| b.name.clone()).collect();
    assert_eq!(again, names);
    // The plain mixamo rig goes through both maps unchanged: same names, same heads.
    let mut there = reference.clone();
    skelport_ir::retarget::apply(&mut there, &to_mixamo).unwrap();
    skelport_ir::retarget::apply(&mut there, &back).unwrap();
    let d = skelport::diff::diff(&reference, &there, skelport::diff::Tolerance::default());
    assert!(d.added.is_empty() && d.removed.is_empty() && d.moved.is_empty(), "{d:?}");
    let p = skelport::diff::pose_test(&reference, &there, 3, 5).unwrap();
    assert!(p.max_deviation < 1e-9, "{}", p.max_deviation);
}
