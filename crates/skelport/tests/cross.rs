//! Cross-format round trips on the real corpus: glTF → G4MF (.g4tf and .g4b) → glTF keeps joint
//! world positions and skin influences; MPFB → glTF → MPFB keeps the skinned body (pose test).

use skelport::registry::by_name;
use skelport_ir::{DVec3, Diagnostics, Document, Input, ReadOptions, WriteOptions};
use std::collections::BTreeMap;

fn read(fmt: &str, path: &std::path::Path, opts: &ReadOptions) -> Document {
    let bytes = std::fs::read(path).unwrap();
    by_name(fmt)
        .unwrap()
        .read(Input { path: Some(path), bytes: &bytes }, opts, &mut Diagnostics::default())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Write with `fmt` (embedded, no side files) and read back.
fn through(doc: &Document, fmt: &str) -> Document {
    let f = by_name(fmt).unwrap();
    let out =
        f.write(doc, &WriteOptions { file_stem: "x".into(), embed: true, ..Default::default() }, &mut Diagnostics::default()).unwrap();
    assert!(out.side_files.is_empty());
    f.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap()
}

fn joint_worlds(d: &Document) -> BTreeMap<String, DVec3> {
    let mut d = d.clone();
    d.convert_frame(skelport_ir::Frame::GLTF);
    let mut out = BTreeMap::new();
    for s in &d.skins {
        let sk = d.skeleton(s.skeleton);
        let w = sk.world_transforms();
        for j in &s.joints {
            out.insert(sk.bones[j.index()].name.clone(), w[j.index()].translation);
        }
    }
    out
}

fn influences(d: &Document) -> Vec<BTreeMap<String, f64>> {
    let s = &d.skins[0];
    let sk = d.skeleton(s.skeleton);
    let mut inf = s.influences.clone();
    inf.normalize();
    (0..inf.vertex_count())
        .map(|v| inf.vertex(v).map(|(j, w)| (sk.bones[s.joints[j as usize].index()].name.clone(), w)).collect())
        .collect()
}

fn assert_same(a: &Document, b: &Document, what: &str) {
    let (ja, jb) = (joint_worlds(a), joint_worlds(b));
    assert_eq!(ja.keys().collect::<Vec<_>>(), jb.keys().collect::<Vec<_>>(), "{what}: joint names");
    for (n, p) in &ja {
        assert!((*p - jb[n]).length() < 1e-6, "{what}: joint {n} moved {}", (*p - jb[n]).length());
    }
    let (ia, ib) = (influences(a), influences(b));
    assert_eq!(ia.len(), ib.len(), "{what}: vertex count");
    for (v, (x, y)) in ia.iter().zip(&ib).enumerate() {
        assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>(), "{what}: vertex {v} joints");
        for (n, w) in x {
            assert!((w - y[n]).abs() < 1e-6, "{what}: vertex {v} joint {n}: {w} vs {}", y[n]);
        }
    }
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn gltf_through_g4mf_keeps_joints_and_influences() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let mut sources = vec![
        ("Fox", read("glb", &c.join("gltf/Fox/Fox.glb"), &ReadOptions::default())),
        ("SimpleSkin", read("gltf", &c.join("gltf/SimpleSkin/SimpleSkin.gltf"), &ReadOptions::default())),
    ];
    let rigs = c.join("mpfb/rigs/standard");
    let human = read(
        "mpfb",
        &rigs.join("rig.game_engine.json"),
        &ReadOptions {
            mesh: Some(c.join("mpfb/3dobjs/base.obj")),
            weights: Some(rigs.join("weights.game_engine.json")),
            ..Default::default()
        },
    );
    sources.push(("MakeHuman game_engine body", through(&human, "glb")));
    for (name, gltf) in &sources {
        // Reference: the same document through glTF once, so both sides carry glTF's float32
        // rounding (roots can hold baked f64 parent transforms) and only G4MF's error remains.
        let reference = through(gltf, "glb");
        for g4 in ["g4tf", "g4b"] {
            let back = through(&through(gltf, g4), "glb");
            assert_same(&reference, &back, &format!("{name} → {g4} → glb"));
        }
        // .g4tf ↔ .g4b is lossless.
        let t = through(gltf, "g4tf");
        assert_eq!(through(&t, "g4b"), through(&through(&t, "g4b"), "g4tf"), "{name}: g4tf ↔ g4b");
    }
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn makehuman_body_survives_gltf_and_back_by_pose_test() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let rigs = c.join("mpfb/rigs/standard");
    let opts = ReadOptions {
        mesh: Some(c.join("mpfb/3dobjs/base.obj")),
        weights: Some(rigs.join("weights.game_engine.json")),
        ..Default::default()
    };
    let human = read("mpfb", &rigs.join("rig.game_engine.json"), &opts);
    let glb = through(&human, "glb");
    assert_eq!(glb.skins[0].joints.len(), human.skins[0].joints.len());
    let p = skelport::diff::pose_test(&human, &glb, 20, 3).unwrap();
    assert_eq!(p.vertices, 13380);
    // float32 storage in glTF: well under a tenth of a millimetre.
    assert!(p.max_deviation < 1e-5, "max deviation {} m", p.max_deviation);
}

/// Several skins over one skeleton: glTF writes one node hierarchy they share, and reading it
/// back gives one skeleton again (it once gave a copy per skin: SL female 159 bones → 795).
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn skins_sharing_a_skeleton_come_back_sharing_it() {
    let mut doc = skelport::demo::sample();
    let mut second = doc.skins[0].clone();
    second.name = "second".into();
    doc.skins.push(second);
    for fmt in ["glb", "gltf"] {
        let back = through(&doc, fmt);
        assert_eq!(back.skeletons.len(), 1, "{fmt}");
        assert_eq!(back.skeletons[0].bones.len(), doc.skeletons[0].bones.len(), "{fmt}");
        assert_eq!(back.skins.len(), 2, "{fmt}");
        assert!(back.skins.iter().all(|s| s.skeleton.index() == 0));
        assert_eq!(back.skins[1].name, "second");
    }
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let sl = read("dae", &c.join("sl/linden-lab/female_2016_08_05.dae"), &ReadOptions::default());
    let back = through(&sl, "glb");
    let bones = |d: &Document| d.skeletons.iter().map(|s| s.bones.len()).sum::<usize>();
    assert_eq!((bones(&sl), sl.skins.len()), (159, 5));
    assert_eq!((bones(&back), back.skins.len(), back.skeletons.len()), (159, 5, 1));
}
