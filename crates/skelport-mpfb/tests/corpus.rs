//! MPFB over the whole corpus: every rig reads, placement matches independently computed
//! positions, v110 rigs round-trip as JSON, v100 rigs come back as their v110 upgrade.

use serde_json::Value;
use skelport_ir::{DVec3, Diagnostics, Document, Format, Input, ReadOptions, WriteOptions};
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

/// What MPFB's save rounds (rig.py cleanup_float_values: `round(x, 5) + 0` on default_position,
/// offset and roll), done here without the crate's code. Key order does not matter to Value's ==.
fn mpfb_cleaned(orig: &Value) -> Value {
    let r = |v: &mut Value| {
        if let Some(f) = v.as_f64().filter(|_| v.is_f64()) {
            *v = serde_json::json!((f * 100000.0).round() / 100000.0 + 0.0);
        }
    };
    let mut o = orig.clone();
    for (_, b) in o["bones"].as_object_mut().unwrap() {
        for end in ["head", "tail"] {
            for k in ["default_position", "offset"] {
                if let Some(Value::Array(a)) = b[end].get_mut(k) {
                    a.iter_mut().for_each(r);
                }
            }
        }
        r(&mut b["roll"]);
    }
    o
}

fn world_heads_tails(doc: &Document) -> Vec<(String, DVec3, DVec3)> {
    let sk = &doc.skeletons[0];
    let w = sk.world_transforms();
    let t = skelport_ir::proc::tails(sk, &w, 1.0);
    sk.bones.iter().enumerate().map(|(i, b)| (b.name.clone(), w[i].translation, t[i])).collect()
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
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
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
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
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
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
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
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
            assert_eq!(written, mpfb_cleaned(&orig), "{}", p.display());
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

/// An OBJ read independently of skelport-obj: Blender positions (X, −Z, Y) × `scale` and the
/// vertex sets of the `g` groups.
struct TestMesh {
    v: Vec<DVec3>,
    groups: std::collections::HashMap<String, std::collections::BTreeSet<usize>>,
}

fn test_mesh(text: &str, scale: f64) -> TestMesh {
    let mut m = TestMesh { v: vec![], groups: Default::default() };
    let mut g = String::new();
    for l in text.lines() {
        let t: Vec<&str> = l.split_whitespace().collect();
        match t.first() {
            Some(&"v") => {
                let f: Vec<f64> = t[1..4].iter().map(|x| x.parse().unwrap()).collect();
                m.v.push(DVec3::new(f[0], -f[2], f[1]) * scale);
            }
            Some(&"g") => g = t[1..].join(" "),
            Some(&"f") => {
                let set = m.groups.entry(g.clone()).or_default();
                for c in &t[1..] {
                    set.insert(c.split('/').next().unwrap().parse::<usize>().unwrap() - 1);
                }
            }
            _ => {}
        }
    }
    m
}

impl TestMesh {
    /// The same mesh at another scale (the rig's scale_factor is the mesh scale).
    fn scaled(&self, s: f64) -> TestMesh {
        TestMesh { v: self.v.iter().map(|p| *p * s).collect(), groups: self.groups.clone() }
    }
    fn mean(&self, idx: impl IntoIterator<Item = usize>) -> DVec3 {
        let v: Vec<DVec3> = idx.into_iter().map(|i| self.v[i]).collect();
        v.iter().sum::<DVec3>() / v.len() as f64
    }
    /// A strategy object evaluated as issue #3 states the rules.
    fn eval(&self, st: &Value) -> DVec3 {
        let idx = |k: &str| st[k].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect::<Vec<_>>();
        let p = match st["strategy"].as_str().unwrap() {
            "CUBE" => self.mean(self.groups[st["cube_name"].as_str().unwrap()].iter().copied()),
            "VERTEX" => self.v[st["vertex_index"].as_u64().unwrap() as usize],
            "MEAN" => self.mean(idx("vertex_indices")),
            "XYZ" => {
                let i = idx("vertex_indices");
                DVec3::new(self.v[i[0]].x, self.v[i[1]].y, self.v[i[2]].z)
            }
            s => panic!("{s}"),
        };
        p + st.get("offset").map(|o| DVec3::new(o[0].as_f64().unwrap(), o[1].as_f64().unwrap(), o[2].as_f64().unwrap())).unwrap_or_default()
    }
    fn lowest_body_z(&self) -> f64 {
        self.groups["body"].iter().map(|&i| self.v[i].z).fold(f64::INFINITY, f64::min)
    }
}

fn pos3(v: &Value) -> DVec3 {
    DVec3::new(v[0].as_f64().unwrap(), v[1].as_f64().unwrap(), v[2].as_f64().unwrap())
}

/// Bones stripped of their MPFB data (as if from another format), written with `--mesh`.
fn strip(doc: &Document) -> Document {
    let mut d = doc.clone();
    for b in &mut d.skeletons[0].bones {
        b.anchors = None;
        b.ext = Default::default();
    }
    d.skeletons[0].ext = Default::default();
    d
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn writer_picks_strategies_on_the_mesh_as_mpfb_saves() {
    let Some(c) = corpus() else { return };
    let base = c.join("3dobjs/base.obj");
    let p = c.join("rigs/standard/rig.default.json");
    let orig: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
    let (doc, _) = read(&p, &ReadOptions { mesh: Some(base.clone()), ..Default::default() });
    let mut d = Diagnostics::default();
    let opts = WriteOptions { file_stem: "rig.x".into(), mesh: Some(base.clone()), ..Default::default() };
    let out = MpfbFormat.write(&strip(&doc), &opts, &mut d).unwrap();
    let written: Value = serde_json::from_slice(&out.main).unwrap();
    assert!(!d.items.iter().any(|x| x.code == "mpfb.strategies"), "{:?}", d.items);
    let mesh = test_mesh(&std::fs::read_to_string(&base).unwrap(), 0.1);
    let (zs, zmax) = mesh.v.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |a, p| (a.0.min(p.z), a.1.max(p.z)));
    let penalty = 0.02 / (0.3 * (zmax - zs));
    let weight = |st: &Value, at: DVec3| {
        let i: Vec<usize> = st["vertex_indices"].as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as usize).collect();
        (mesh.mean(i.clone()) - at).length() + (mesh.v[i[1]] - mesh.v[i[0]]).length() * penalty
    };
    let (mut means, mut means_to_cubes) = (0, 0);
    for (name, b) in orig.as_object().unwrap() {
        for end in ["head", "tail"] {
            let (o, w) = (&b[end], &written["bones"][name][end]);
            // Every end stands where its strategy puts it on base.obj, so the written
            // default_position is that place and the picked strategy finds it again.
            // Standing on the ground, as read; the mesh below is the unlifted base.obj.
            let at = pos3(&w["default_position"]) - DVec3::new(0.0, 0.0, -mesh.lowest_body_z());
            assert!((at - mesh.eval(o)).length() < 1e-5, "{name} {end}");
            match o["strategy"].as_str().unwrap() {
                // Cubes and exact vertices: what MPFB's authors saved, picked again.
                "CUBE" | "VERTEX" => {
                    let keys = ["strategy", "cube_name", "vertex_index"];
                    assert!(keys.iter().all(|k| o.get(k) == w.get(k)), "{name} {end}: {o} vs {w}");
                }
                // Hand-made pairs: a cube within 0.01 wins; else a pair whose midpoint is within
                // 0.02, no worse by MPFB's weight than the file's own pair.
                "MEAN" => match w["strategy"].as_str().unwrap() {
                    "CUBE" => {
                        means_to_cubes += 1;
                        assert!((mesh.eval(w) - at).length() < 0.01, "{name} {end}");
                    }
                    "MEAN" => {
                        means += 1;
                        let i = w["vertex_indices"].as_array().unwrap();
                        assert!(i.len() == 2 && i[0].as_u64() < i[1].as_u64());
                        assert!((mesh.eval(w) - at).length() < 0.02, "{name} {end}");
                        assert!(weight(w, at) <= weight(o, at) + 1e-12, "{name} {end}: {w} vs {o}");
                    }
                    s => panic!("{name} {end}: {s}"),
                },
                s => panic!("{s}"),
            }
        }
    }
    assert_eq!((means, means_to_cubes), (22, 4));
    // Re-read on the same mesh: the same bones in the same places.
    let mut dd = Diagnostics::default();
    let again =
        MpfbFormat.read(Input { path: None, bytes: &out.main }, &ReadOptions { mesh: Some(base), ..Default::default() }, &mut dd).unwrap();
    let b: std::collections::HashMap<String, (DVec3, DVec3)> = world_heads_tails(&again).into_iter().map(|(n, h, t)| (n, (h, t))).collect();
    for (n, h, t) in world_heads_tails(&doc) {
        assert!((b[&n].0 - h).length() < 0.02 && (b[&n].1 - t).length() < 0.02, "{n}");
    }
}

/// base.obj with every vertex moved (scaled, shifted, bent): another body, same numbering.
fn morphed_body(base: &str) -> String {
    let mut out = String::with_capacity(base.len());
    for l in base.lines() {
        match l.strip_prefix("v ") {
            Some(rest) => {
                let f: Vec<f64> = rest.split_whitespace().map(|x| x.parse().unwrap()).collect();
                let (x, y, z) = (f[0] * 1.1 + 0.2, f[1] * 0.95 + 0.3, f[2] * 1.05 + 0.05 * (f[1] * 0.3).sin());
                out.push_str(&format!("v {x} {y} {z}\n"));
            }
            None => {
                out.push_str(l);
                out.push('\n');
            }
        }
    }
    out
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn every_rig_refits_to_another_body_with_the_base_numbering() {
    let Some(c) = corpus() else { return };
    let dir = tempfile_dir("refit");
    let body = dir.join("body.obj");
    let text = morphed_body(&std::fs::read_to_string(c.join("3dobjs/base.obj")).unwrap());
    std::fs::write(&body, &text).unwrap();
    let base_text = std::fs::read_to_string(c.join("3dobjs/base.obj")).unwrap();
    for (mesh_path, mesh_text) in [(c.join("3dobjs/base.obj"), &base_text), (body.clone(), &text)] {
        let unscaled = test_mesh(mesh_text, 1.0);
        for p in rigs(&c) {
            let orig: Value = serde_json::from_slice(&std::fs::read(&p).unwrap()).unwrap();
            // (The rigify rig says 0.10000000149011612, float32's 0.1.)
            let mesh = unscaled.scaled(orig.get("scale_factor").and_then(Value::as_f64).unwrap_or(0.1));
            let lift = -mesh.lowest_body_z();
            let bones = orig.get("bones").unwrap_or(&orig).as_object().unwrap();
            let (doc, d) = read(&p, &ReadOptions { mesh: Some(mesh_path.clone()), ..Default::default() });
            assert!(!d.items.iter().any(|x| x.code == "mpfb.default-position" || x.code == "mpfb.mesh-topology"), "{:?}", d.items);
            let placed: std::collections::HashMap<String, (DVec3, DVec3)> =
                world_heads_tails(&doc).into_iter().map(|(n, h, t)| (n, (h, t))).collect();
            let up = DVec3::new(0.0, 0.0, lift);
            for (name, b) in bones {
                let (h, t) = placed[name];
                // The IR keeps a bone as a rotation and a length; for bones pointing within ~6°
                // of −Y (toes, face bones) Blender's vec_roll_to_mat3 approximates and is not quite
                // orthonormal, so the tail rebuilt from the rotation is off by up to ~1e-7 m.
                let tol = if (t - h).normalize().y < -0.99 { 1e-6 } else { 1e-9 };
                let want_tail = mesh.eval(&b["tail"]) + up;
                assert!((t - want_tail).length() < tol, "{}: {name} tail {t} vs {want_tail}", p.display());
                // use_connect snaps the head to the parent's tail.
                let want_head = match (b["use_connect"].as_bool(), b["parent"].as_str()) {
                    (Some(true), Some(par)) if !par.is_empty() => mesh.eval(&bones[par]["tail"]) + up,
                    _ => mesh.eval(&b["head"]) + up,
                };
                assert!((h - want_head).length() < 1e-9, "{}: {name} head {h} vs {want_head}", p.display());
            }
            // Written back: the same strategies, default_position where the bones now stand (on the
            // ground, as MPFB's v110 files are saved).
            let out = MpfbFormat
                .write(&doc, &WriteOptions { file_stem: "rig.x".into(), ..Default::default() }, &mut Diagnostics::default())
                .unwrap();
            let written: Value = serde_json::from_slice(&out.main).unwrap();
            for (name, b) in bones {
                let w = &written["bones"][name];
                for (end, at) in [("head", placed[name].0), ("tail", placed[name].1)] {
                    assert!((pos3(&w[end]["default_position"]) - at).length() < 1e-5, "{name} {end}");
                    assert_eq!(w[end]["strategy"], b[end]["strategy"]);
                }
            }
        }
    }
    // A body with other numbering: said once, and each unplaceable end named.
    let small = dir.join("small.obj");
    std::fs::write(&small, base_text.lines().filter(|l| l.starts_with("v ")).take(5000).collect::<Vec<_>>().join("\n")).unwrap();
    let (_, d) = read(&c.join("rigs/standard/rig.default.json"), &ReadOptions { mesh: Some(small), ..Default::default() });
    let topo: Vec<_> = d.items.iter().filter(|x| x.code == "mpfb.mesh-topology").collect();
    assert!(topo.len() == 1 && topo[0].message.contains("has 5000 vertices") && topo[0].message.contains("19158"), "{topo:?}");
    assert!(d.items.iter().any(|x| x.code == "mpfb.default-position" && x.message.contains("\"upperarm01.L\" head")));
}

fn tempfile_dir(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("skelport-mpfb-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn a_placed_rig_written_and_re_read_without_the_mesh_stands_where_it_stood() {
    let Some(c) = corpus() else { return };
    let base = Some(c.join("3dobjs/base.obj"));
    for p in rigs(&c) {
        let (doc, _) = read(&p, &ReadOptions { mesh: base.clone(), ..Default::default() });
        let out =
            MpfbFormat.write(&doc, &WriteOptions { file_stem: "rig.x".into(), ..Default::default() }, &mut Diagnostics::default()).unwrap();
        for opts in [ReadOptions::default(), ReadOptions { mesh: base.clone(), ..Default::default() }] {
            let again = MpfbFormat.read(Input { path: None, bytes: &out.main }, &opts, &mut Diagnostics::default()).unwrap();
            let b: std::collections::HashMap<String, DVec3> = world_heads_tails(&again).into_iter().map(|(n, h, _)| (n, h)).collect();
            for (n, h, _) in world_heads_tails(&doc) {
                // 5-decimal rounding of default_position, or the same strategies on the same mesh.
                let tol = if opts.mesh.is_some() { 1e-9 } else { 1e-5 };
                assert!((b[&n] - h).length() < tol, "{} {n}: {} vs {h}", p.display(), b[&n]);
            }
        }
    }
}

/// A weights file as MPFB would write it back: duplicates added, clamped to 0..1, below 0.0001
/// dropped, 5 decimals; computed here from the JSON alone.
fn expected_weights(v: &Value) -> std::collections::BTreeMap<String, std::collections::BTreeMap<u64, f64>> {
    let mut out = std::collections::BTreeMap::new();
    for (g, list) in v["weights"].as_object().unwrap() {
        let mut m = std::collections::BTreeMap::<u64, f64>::new();
        for e in list.as_array().unwrap() {
            *m.entry(e[0].as_u64().unwrap()).or_default() += e[1].as_f64().unwrap();
        }
        let m: std::collections::BTreeMap<u64, f64> = m
            .into_iter()
            .map(|(k, w)| (k, w.clamp(0.0, 1.0)))
            .filter(|e| e.1 >= 0.0001)
            .map(|(k, w)| (k, (w * 1e5).round() / 1e5))
            .collect();
        if !m.is_empty() {
            out.insert(g.clone(), m);
        }
    }
    out
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn all_five_weights_files_join_their_rigs_and_write_back_as_mpfb_would() {
    let Some(c) = corpus() else { return };
    let dir = c.join("rigs/standard");
    let mut seen = 0;
    for e in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = e.file_name().to_string_lossy().to_string();
        let Some(stem) = name.strip_prefix("weights.") else { continue };
        seen += 1;
        let orig: Value = serde_json::from_slice(&std::fs::read(e.path()).unwrap()).unwrap();
        let want = expected_weights(&orig);
        let rig = dir.join(format!("rig.{stem}"));
        let mesh = Some(c.join("3dobjs/base.obj"));
        // All of the mesh kept: every weight comes back, in base numbering.
        let opts = ReadOptions { mesh: mesh.clone(), weights: Some(e.path()), keep_helpers: true, ..Default::default() };
        let (doc, d) = read(&rig, &opts);
        assert!(!d.items.iter().any(|x| x.code == "mpfb.unmatched-weights"), "{name}: {:?}", d.items);
        assert_eq!(doc.skins[0].vertex_count(), 19158);
        let out =
            MpfbFormat.write(&doc, &WriteOptions { file_stem: "rig.x".into(), ..Default::default() }, &mut Diagnostics::default()).unwrap();
        let (wname, wbytes) = &out.side_files[0];
        assert_eq!(wname, "weights.x.json");
        let written: Value = serde_json::from_slice(wbytes).unwrap();
        let got = expected_weights(&written);
        assert_eq!(got.keys().collect::<Vec<_>>(), want.keys().collect::<Vec<_>>(), "{name}");
        for (g, m) in &want {
            assert_eq!(got[g].len(), m.len(), "{name} {g}");
            for (v, w) in m {
                assert!((got[g][v] - w).abs() < 1e-12, "{name} {g} {v}: {} vs {w}", got[g][v]);
            }
        }
        for k in ["copyright", "description", "license", "name"] {
            assert_eq!(written[k], orig[k], "{name} {k}");
        }
        // Helpers trimmed (the default): the body's weights come back in base numbering, and what
        // sat on helper geometry is said to be left out.
        let (doc, d) = read(&rig, &ReadOptions { keep_helpers: false, ..opts.clone() });
        assert_eq!(doc.skins[0].vertex_count(), 13380);
        let out =
            MpfbFormat.write(&doc, &WriteOptions { file_stem: "rig.x".into(), ..Default::default() }, &mut Diagnostics::default()).unwrap();
        let got = expected_weights(&serde_json::from_slice(&out.side_files[0].1).unwrap());
        let body: std::collections::BTreeSet<u64> = (0..13380).collect();
        let mut dropped = 0;
        for (g, m) in &want {
            let kept: std::collections::BTreeMap<u64, f64> = m.iter().filter(|(v, _)| body.contains(v)).map(|(v, w)| (*v, *w)).collect();
            dropped += m.len() - kept.len();
            assert_eq!(got.get(g).cloned().unwrap_or_default(), kept, "{name} {g}");
        }
        assert_eq!(dropped > 0, d.items.iter().any(|x| x.code == "mpfb.helper-weights"), "{name}: {dropped}");
    }
    assert_eq!(seen, 5);
}

fn write_json(doc: &Document) -> Value {
    let out =
        MpfbFormat.write(doc, &WriteOptions { file_stem: "rig.x".into(), ..Default::default() }, &mut Diagnostics::default()).unwrap();
    serde_json::from_slice(&out.main).unwrap()
}

fn read_bytes(bytes: &[u8]) -> Document {
    MpfbFormat.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap()
}

#[test]
fn every_key_of_the_spec_comes_back_and_roll_may_be_an_integer() {
    let rig = serde_json::json!({
        "version": 110, "is_subrig": true, "scale_factor": 0.10000000149011612,
        "collections": ["Bones", "Torso"],
        "extra_bones": {"hair": {"parent": "spine"}},
        "rigify_ui": {"Torso": {"row": 3, "title": "Torso"}},
        "bones": {
            "spine": {
                "head": {"strategy": "CUBE", "cube_name": "joint-spine1", "default_position": [0.0, 0.0, 1.0]},
                "tail": {"strategy": "XYZ", "vertex_indices": [1, 2, 3], "offset": [0.0, 0.01, 0.0], "default_position": [0.0, 0.0, 1.2]},
                "roll": 0, "parent": "", "use_connect": false, "use_inherit_rotation": true, "use_local_location": false,
                "inherit_scale": "FIX_SHEAR", "rotation_mode": "XYZ", "collections": ["Torso"],
                "rigify": {"rigify_type": "spines.basic_spine", "rigify_parameters": {"fk_coll_refs": ["Torso"], "pivot_pos": 2, "segments": 1.5}},
                "bendy_bone": {"segments": 3, "custom_handle_start": "neck", "handle_type_end": "ABSOLUTE", "easein": 0.25,
                    "handle_use_scale_start": [true, false, false]}
            },
            "neck": {
                "head": {"strategy": "VERTEX", "vertex_index": 7, "default_position": [0.0, 0.0, 1.2]},
                "tail": {"strategy": "MEAN", "vertex_indices": [4, 5, 5], "default_position": [0.0, -0.01, 1.4]},
                "roll": 0.12346, "parent": "spine", "use_connect": true, "use_inherit_rotation": false, "use_local_location": true,
                "inherit_scale": "AVERAGE", "roll_strategy": "ALIGN_Z_WORLD_Z", "collections": [], "rigify": {},
                "constraints": [
                    {"type": "COPY_ROTATION", "name": "Copy", "target": true, "subtarget": "spine", "influence": 0.3333333432674408},
                    {"type": "ARMATURE", "name": "Arm", "target": {"strategy": "VERTEX", "vertex_index": 12},
                     "targets": [{"subtarget": "spine", "weight": 1.0, "target": {"strategy": "JOINTS", "joint_head": "joint-neck", "joint_tail": "joint-head"}}]},
                    {"type": "DAMPED_TRACK", "name": "Track", "target": {"strategy": null}, "head_tail": 0.5},
                    {"type": "LIMIT_ROTATION", "name": "Limit", "target": false, "space_object": true, "space_subtarget": "spine"}
                ]
            }
        }
    });
    let doc = read_bytes(&serde_json::to_vec(&rig).unwrap());
    assert_eq!(doc.skeletons[0].bones[0].roll, Some(0.0));
    let written = write_json(&doc);
    assert_eq!(written, rig);
    assert!(written["bones"]["spine"]["roll"].is_i64(), "an integer roll stays an integer");
}

#[test]
fn v100_layers_become_collections_as_mpfb_upgrades_them() {
    let mut layers = vec![false; 32];
    layers[0] = true;
    layers[2] = true;
    let mut fk = vec![false; 32];
    fk[1] = true;
    let bone = |l: &Vec<bool>| {
        serde_json::json!({
            "head": {"strategy": "CUBE", "cube_name": "joint-a", "default_position": [0.0, 0.0, 0.0]},
            "tail": {"strategy": "CUBE", "cube_name": "joint-b", "default_position": [0.0, 0.0, 1.0]},
            "roll": 0.0, "parent": "", "use_connect": false, "use_inherit_rotation": true, "use_local_location": true,
            "inherit_scale": "FULL", "layers": l, "rigify": {"rigify_parameters": {"fk_layers": fk, "tweak_layers_extra": true}}
        })
    };
    // Headerless: layer 0 is "Bones"; with a rigify_ui it is "Layer 1".
    for (top, first) in [
        (serde_json::json!({"a": bone(&layers)}), "Bones"),
        (serde_json::json!({"version": 100, "rigify_ui": {}, "bones": {"a": bone(&layers)}}), "Layer 1"),
    ] {
        let w = write_json(&read_bytes(&serde_json::to_vec(&top).unwrap()));
        assert_eq!(w["version"], 110);
        let b = &w["bones"]["a"];
        assert!(b.get("layers").is_none());
        assert_eq!(b["collections"], serde_json::json!([first, "Layer 3"]));
        assert_eq!(w["collections"], serde_json::json!([first, "Layer 3"]));
        assert_eq!(b["rigify"]["rigify_parameters"]["fk_coll_refs"], serde_json::json!(["Layer 2"]));
        assert!(b["rigify"]["rigify_parameters"].get("fk_layers").is_none());
        // The upgrade re-reads to itself.
        assert_eq!(write_json(&read_bytes(&serde_json::to_vec(&w).unwrap())), w);
    }
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn bad_weights_files_name_the_place() {
    let Some(c) = corpus() else { return };
    let dir = tempfile_dir("badweights");
    let rig = std::fs::read(c.join("rigs/standard/rig.game_engine.json")).unwrap();
    for (text, needle) in [
        ("{\"weights\": {\"spine_01\": [[1, 0.5],\n [2, \"x\"]]}}", ":2:"),
        ("{\"weights\": {\"spine_01\": [[1.5, 0.5]]}}", "expected u64"),
        ("{\"name\": \"w\"}", "needs a \"weights\" object"),
    ] {
        let w = dir.join("w.json");
        std::fs::write(&w, text).unwrap();
        let e = MpfbFormat
            .read(
                Input { path: None, bytes: &rig },
                &ReadOptions { weights: Some(w.clone()), ..Default::default() },
                &mut Diagnostics::default(),
            )
            .unwrap_err()
            .to_string();
        assert!(e.contains("w.json") && e.contains(needle), "{e}");
    }
}

/// base.obj read here without skelport's OBJ code: each face's group and its corners' (vertex,
/// texture coordinate) as the file gives them.
struct PlainObj {
    v: Vec<DVec3>,
    vt: Vec<[f64; 2]>,
    faces: Vec<(String, Vec<(usize, usize)>)>,
}

fn plain_obj(text: &str) -> PlainObj {
    let mut o = PlainObj { v: vec![], vt: vec![], faces: vec![] };
    let mut group = String::new();
    for l in text.lines() {
        let w: Vec<&str> = l.split_whitespace().collect();
        let num = |k: usize| w[k].parse::<f64>().unwrap();
        match w.first().copied() {
            Some("v") => o.v.push(DVec3::new(num(1), num(2), num(3))),
            Some("vt") => o.vt.push([num(1), num(2)]),
            Some("g") => group = w[1..].join(" "),
            Some("f") => {
                let corners = w[1..]
                    .iter()
                    .map(|c| {
                        let mut p = c.split('/').map(|x| x.parse::<usize>().unwrap() - 1);
                        (p.next().unwrap(), p.next().unwrap())
                    })
                    .collect();
                o.faces.push((group.clone(), corners));
            }
            _ => {}
        }
    }
    o
}

/// The base mesh's 21,334 texture coordinates reach the IR corner by corner, with the helper
/// geometry (joint cubes, helper-*) and without: each kept face's corners keep their own `vt`
/// although the vertices are renumbered, and each corner's vertex is the OBJ's.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn base_mesh_uvs_survive_on_every_corner_with_and_without_helpers() {
    let Some(c) = corpus() else { return };
    let obj = plain_obj(&std::fs::read_to_string(c.join("3dobjs/base.obj")).unwrap());
    assert_eq!(obj.vt.len(), 21334);
    let rigs = c.join("rigs/standard");
    for keep_helpers in [true, false] {
        let opts = ReadOptions { mesh: Some(c.join("3dobjs/base.obj")), keep_helpers, ..Default::default() };
        let (doc, d) = read(&rigs.join("rig.game_engine.json"), &opts);
        assert!(!d.items.iter().any(|x| x.code.contains("uv")), "{d:?}");
        // One UV per corner, no more (the validator checks the counts).
        assert_eq!(skelport_ir::validate::validate(&doc), vec![], "keep_helpers {keep_helpers}");
        let m = &doc.meshes[0];
        assert_eq!(m.uvs.len(), 1);
        assert!(m.normals.is_none(), "base.obj has no vn");
        let kept: Vec<&(String, Vec<(usize, usize)>)> =
            obj.faces.iter().filter(|(g, _)| keep_helpers || !(g.starts_with("joint-") || g.starts_with("helper-"))).collect();
        assert_eq!(m.faces.len(), kept.len(), "keep_helpers {keep_helpers}");
        // The feet-on-the-ground lift, the same for every vertex.
        let first = kept[0].1[0].0;
        let lift = m.positions[m.faces.indices[0] as usize].z - obj.v[first].y * 0.1;
        let mut corner = 0;
        for (j, (_, corners)) in kept.iter().enumerate() {
            assert_eq!(m.faces.counts[j] as usize, corners.len());
            for &(v, t) in corners {
                let uv = skelport_ir::testing::corner_value(&m.uvs[0].uvs, &m.faces, corner).unwrap();
                assert_eq!(uv.to_array(), obj.vt[t], "face {j}, corner {corner} (keep_helpers {keep_helpers})");
                // The corner's vertex: OBJ (x, y, z) → Blender (x, −z, y) × 0.1, lifted.
                let p = m.positions[m.faces.indices[corner] as usize];
                let want = DVec3::new(obj.v[v].x, -obj.v[v].z, obj.v[v].y) * 0.1;
                assert!((p - want - DVec3::new(0.0, 0.0, lift)).length() < 1e-12, "face {j}");
                corner += 1;
            }
        }
        assert_eq!(corner, m.faces.indices.len());
    }
}

/// An MPFB rig holds no mesh: the base mesh (which `--mesh base.obj` gives back, UVs included)
/// is a note; any other mesh's geometry, UVs and normals a loss that names them.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn the_writer_says_what_mesh_data_it_does_not_write() {
    let Some(c) = corpus() else { return };
    let rigs = c.join("rigs/standard");
    let opts =
        ReadOptions { mesh: Some(c.join("3dobjs/base.obj")), weights: Some(rigs.join("weights.game_engine.json")), ..Default::default() };
    let (doc, _) = read(&rigs.join("rig.game_engine.json"), &opts);
    let write = |doc: &Document| {
        let mut d = Diagnostics::default();
        MpfbFormat.write(doc, &WriteOptions { file_stem: "rig.t".into(), ..Default::default() }, &mut d).unwrap();
        d
    };
    let d = write(&doc);
    assert!(d.items.iter().any(|x| x.code == "mpfb.mesh-not-written" && x.message.contains("1 UV set(s)")), "{d:?}");
    assert_eq!(d.of(skelport_ir::Severity::Loss).count(), 0, "{d:?}");
    let mut other = doc.clone();
    other.meshes[0].ext = Default::default();
    other.meshes[0].normals = Some(skelport_ir::Normals::PerVertex(vec![DVec3::Z; other.meshes[0].positions.len()]));
    let d = write(&other);
    let loss: Vec<&str> = d.of(skelport_ir::Severity::Loss).map(|x| x.message.as_str()).collect();
    assert!(loss.iter().any(|m| m.contains("hold no mesh") && m.contains("1 UV set(s), normals")), "{loss:?}");
}
