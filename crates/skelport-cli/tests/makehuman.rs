//! MakeHuman into game formats (issue 8): the MPFB game_engine body through the built-in maps
//! into an SL avatar that passes the SL importer's rules, and into an AnvilToolkit Standard XML
//! with AC biped names; the mixamo maps between MPFB's mixamo rigs and Mixamo names.

use skelport_ir::ReadOptions;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::{Command, Output};

/// A file read as the CLI reads it.
fn load(path: &std::path::Path, reader: &ReadOptions) -> skelport::Result<skelport::Loaded> {
    skelport::open(path, &skelport::OpenOptions { from: None, reader: reader.clone() })
}

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
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
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
            let n = &back.skeleton(s.skeleton).bones[j.index()].name;
            assert!(sl.contains(n), "joint {n} is not a map target");
        }
    }
    assert_eq!(back.skins.iter().map(|s| s.vertex_count()).sum::<usize>(), 13380);
}

/// Joint positions are kept by default (issue 23): every joint of the MakeHuman rig, mapped to SL
/// names and taken to the SL frame, is where the written .dae puts it (1e-6 m), although the
/// A-posed body is up to 0.72 m from the SL defaults; `--joint-positions` (now the default, kept
/// for old scripts) writes the same bytes, and `--default-joints` puts them at the defaults.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn makehuman_to_sl_keeps_the_source_joint_positions() {
    let Some(r) = rig("game_engine") else { return };
    let dir = tempfile::tempdir().unwrap();
    let dae = dir.path().join("avatar.dae");
    let c = convert(&r, "mpfb-game_engine-to-sl", &dae);
    assert!(c.status.success(), "{}", text(&c));
    let t = text(&c);
    assert!(t.contains("note:") && t.contains("joints kept at the source's positions, up to 718.7 mm"), "{t}");
    let o = ReadOptions { mesh: Some(r.mesh.clone()), weights: Some(r.weights.clone()), ..Default::default() };
    let mut src = load(&r.rig, &o).unwrap().doc;
    skelport::retarget(&mut src, &skelport::maps::load("mpfb-game_engine-to-sl").unwrap(), &mut Default::default()).unwrap();
    src.convert_frame(skelport_ir::Frame::SECOND_LIFE);
    let back = load(&dae, &ReadOptions::default()).unwrap().doc;
    assert_eq!(back.frame, skelport_ir::Frame::SECOND_LIFE);
    let world = |d: &skelport_ir::Document| -> std::collections::HashMap<String, skelport_ir::DVec3> {
        let w = d.skeletons[0].world_matrices();
        d.skeletons[0].bones.iter().zip(w).map(|(b, m)| (b.name.clone(), m.w_axis.truncate())).collect()
    };
    let (ws, wb) = (world(&src), world(&back));
    let mut worst = (0.0f64, String::new());
    for (n, p) in &ws {
        let q = wb.get(n).unwrap_or_else(|| panic!("{n} is not in the output"));
        if (*p - *q).length() > worst.0 {
            worst = ((*p - *q).length(), n.clone());
        }
    }
    assert!(ws.len() >= 50, "{} joints", ws.len());
    assert!(worst.0 < 1e-6, "joint {} moved {} m", worst.1, worst.0);
    // The old switch is accepted and changes nothing; --default-joints gives the old file.
    let same = dir.path().join("same.dae");
    let c = skelport(&[
        "convert",
        r.rig.to_str().unwrap(),
        "--weights",
        r.weights.to_str().unwrap(),
        "--mesh",
        r.mesh.to_str().unwrap(),
        "--map",
        "mpfb-game_engine-to-sl",
        "--joint-positions",
        "-o",
        same.to_str().unwrap(),
    ]);
    assert!(c.status.success(), "{}", text(&c));
    assert!(std::fs::read(&same).unwrap() == std::fs::read(&dae).unwrap(), "--joint-positions changed the output");
    for flag in ["--default-joints", "--sl-default-joints"] {
        let def = dir.path().join("default.dae");
        let c = skelport(&[
            "convert",
            r.rig.to_str().unwrap(),
            "--weights",
            r.weights.to_str().unwrap(),
            "--mesh",
            r.mesh.to_str().unwrap(),
            "--map",
            "mpfb-game_engine-to-sl",
            flag,
            "-o",
            def.to_str().unwrap(),
        ]);
        assert!(c.status.success(), "{}", text(&c));
        assert!(text(&c).contains("loss:") && text(&c).contains("joints written at the SL default positions (--default-joints)"));
        let d = load(&def, &ReadOptions::default()).unwrap().doc;
        let sl = skelport_sl::SlSkeleton::builtin();
        for b in &d.skeletons[0].bones {
            let j = sl.joint(&b.name).unwrap();
            assert!((b.rest.translation - sl.default_pos(j)).length() < 1e-9, "{flag}: {}", b.name);
        }
    }
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
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
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn mixamo_maps_take_mpfb_mixamo_rigs_to_mixamo_and_back() {
    let (Some(plain), Some(unity)) = (rig("mixamo"), rig("mixamo_unity")) else { return };
    let read = |r: &Rig| {
        let o = ReadOptions { mesh: Some(r.mesh.clone()), weights: Some(r.weights.clone()), ..Default::default() };
        skelport::open(&r.rig, &skelport::OpenOptions { from: None, reader: o }).unwrap().doc
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
