//! The evidence suite of issue 22: every file of the corpus (`realworld/` with its VRM files, `gltf/`, `sl/`,
//! `mpfb/` rigs with their weights on the base mesh, `g4mf/` examples) and every AnvilToolkit
//! fixture of `testdata/anvil/` goes through every writer of the registry
//! (`skelport::registry::formats()`) and back through that format's reader. The re-read
//! document must have the same skeletons, bones, parents, heads, rotations and scales (report
//! frame: 1e-5 m and 1e-4 rad, the head tolerance scaled by the skeleton's size beyond 1 m, as
//! float32 formats round relatively) and, under random poses, the same skinned vertices (compared
//! corner by corner of the fan-triangulated faces, so a writer may split vertices at seams; the
//! poses and the linear-blend skinning are `skelport_ir::pose`'s, as `diff --pose-test` uses).
//! Any difference must be named by a loss line of the conversion ([`EXPLAINED_BY`]); a writer
//! may also refuse, with a message, only for the reasons in [`REFUSALS`].
//!
//! UVs and normals ([`compare_attributes`]): every face corner's texture coordinates and normal
//! come back (1e-4 texture units, 1e-3 between unit normals: float32 and re-normalisation), or
//! a loss line names why; a target that computes normals where the source had none passes.
//!
//! The table of outcomes (file × target) is printed with `--nocapture` and written to
//! `$SKELPORT_REALWORLD_TABLE` when set. The corpus is found as every corpus test finds it; with
//! `CI` set, a missing corpus fails the test instead of skipping it.

use rayon::prelude::*;
use skelport_ir::pose::{deform_all, in_report_frame, random_pose};
use skelport_ir::{DQuat, DVec3, Diagnostics, Document, Format, Input, ReadOptions, Severity, WriteOptions};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Head tolerance (metres, for skeletons up to 1 m; relative beyond).
const METRES: f64 = 1e-5;
/// Orientation tolerance, radians.
const RADIANS: f64 = 1e-4;
/// Random poses per skinned conversion.
const POSES: u64 = 2;

/// What kind of change the comparison found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Change {
    /// Fewer or more skeletons.
    Skeletons,
    /// Bones missing, added or renamed.
    Bones,
    /// A bone has another parent.
    Parents,
    /// A head moved.
    Heads,
    /// A bone turned.
    Rotations,
    /// A bone's world scale changed.
    Scales,
    /// A skin (or its mesh) is gone, or the skinned mesh has another topology.
    Skins,
    /// The posed skinned mesh differs.
    Posed,
    /// A mesh no skin binds is gone or differs.
    Meshes,
    /// A UV set is gone or its values differ.
    Uvs,
    /// Normals are gone or differ.
    Normals,
}

/// The loss codes (prefixes) that name each kind of change: a difference passes only when the
/// conversion reported one of them.
const EXPLAINED_BY: &[(Change, &[&str])] = &[
    (Change::Skeletons, &["anvil.skeletons", "mpfb.skeletons", "mhskel.skeletons", "dae-skeletons", "gltf.empty-skeleton"]),
    (Change::Bones, &["dae-not-sl-joint", "retarget.dropped", "gltf.renamed", "g4mf.renamed"]),
    (Change::Parents, &["dae-not-sl-joint", "retarget.dropped"]),
    (
        Change::Heads,
        &[
            "mhskel.fitted",
            "mhskel.origin",
            "mhskel.zero-length",
            "dae-joint-positions",
            "dae-not-sl-joint",
            "rest.t-pose",
            "vrm.grounded",
            "vrm.turned",
        ],
    ),
    (
        Change::Rotations,
        &[
            "mpfb.orientation",
            "mhskel.orientation",
            "mhskel.fitted",
            "mhskel.zero-length",
            "dae-joint-positions",
            "dae-not-sl-joint",
            "dae-orientation",
            "rest.t-pose",
            "vrm.turned",
        ],
    ),
    (Change::Scales, &["anvil.scale", "mpfb.scale", "mhskel.scale", "dae-scale", "vrm.bone-scale"]),
    (
        Change::Skins,
        &[
            "anvil.geometry",
            "mpfb.mesh",
            "mhskel.mesh",
            "mhskel.skins",
            "gltf.skin-without-mesh",
            "g4mf.skin-without-mesh",
            "dae-skin-dropped",
        ],
    ),
    (
        Change::Posed,
        &[
            "gltf.unweighted-vertices",
            "mhskel.mesh",
            "mhskel.fitted",
            "mhskel.origin",
            "mhskel.orientation",
            "gltf.max-influences",
            "vrm.max-influences",
            "dae-influences",
            "dae-joint-positions",
            "dae-not-sl-joint",
            "rest.t-pose",
            "vrm.grounded",
            "vrm.turned",
        ],
    ),
    (
        Change::Meshes,
        &[
            "anvil.geometry",
            "mpfb.mesh",
            "mhskel.mesh",
            "mhskel.origin",
            "g4mf.meshes",
            "gltf.empty-mesh",
            "dae-mesh",
            "rest.t-pose",
            "vrm.grounded",
            "vrm.turned",
        ],
    ),
    (
        Change::Uvs,
        &["anvil.geometry", "mpfb.mesh", "mhskel.mesh", "g4mf.meshes", "g4mf.uv-sets", "gltf.partial-uvs", "dae-uv-sets", "dae-mesh"],
    ),
    (
        Change::Normals,
        &[
            "anvil.geometry",
            "mpfb.mesh",
            "mhskel.mesh",
            "mhskel.origin",
            "g4mf.meshes",
            "gltf.partial-normals",
            "dae-mesh",
            "dae-influences",
            "gltf.max-influences",
            "vrm.max-influences",
            "rest.t-pose",
            "vrm.turned",
        ],
    ),
];

/// Why a writer may refuse a source (a refusal is an error with a message, never a silent
/// change): substrings of the error.
const REFUSALS: &[&str] =
    &["nothing to write", "no skeleton", "no bones", "at most 255 bones", "same name hash", "is not a humanoid skelport knows"];

/// What a comparison measured, for the table: the largest head distance and the largest posed
/// vertex distance (metres; `None` when no skinned mesh was posed).
#[derive(Debug, Clone, Copy, Default)]
struct Measured {
    head: f64,
    posed: Option<f64>,
}

/// One source file and how to read it.
struct Source {
    label: String,
    path: PathBuf,
    from: Option<&'static str>,
    read: ReadOptions,
}

/// The outcome of one conversion.
#[derive(Debug, Clone)]
enum Outcome {
    /// The re-read document is the same (with what was measured).
    Pass(Measured),
    /// Differences, each named by a loss line (the codes that named them), and what was measured.
    Named(BTreeSet<String>, Measured),
    /// The writer refused, with this message.
    Refused(String),
    /// A difference no loss names, a refusal for another reason, or a failed re-read.
    Fail(String),
}

fn corpus_sources(root: &Path, folder: &str) -> Vec<Source> {
    let mut files = Vec::new();
    walk(&root.join(folder), &mut files);
    files.sort();
    let mut out = Vec::new();
    for path in files {
        let label = path.strip_prefix(root).unwrap_or(&path).display().to_string();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
        match (folder, ext.as_str()) {
            (_, "glb" | "gltf" | "dae" | "g4tf" | "g4b" | "fbx" | "vrm") => {
                // The validator's cases: only the files it accepts (its report has no error).
                let report = path.with_file_name(format!("{name}.report.json"));
                if let Ok(text) = std::fs::read_to_string(&report) {
                    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
                    if v["issues"]["numErrors"].as_u64() != Some(0) {
                        continue;
                    }
                }
                out.push(Source { label, path, from: None, read: ReadOptions::default() });
            }
            ("sl", "xml") if name == "avatar_skeleton.xml" => {
                out.push(Source { label, path, from: Some("sl-skeleton"), read: ReadOptions::default() })
            }
            // MakeHuman 1.x: the weights the rig names are found beside it.
            ("makehuman1", "mhskel") => {
                let read = ReadOptions { mesh: Some(root.join("makehuman1/data/3dobjs/base.obj")), ..Default::default() };
                out.push(Source { label, path, from: None, read });
            }
            ("mpfb", "json") if name.starts_with("rig.") => {
                let stem = name.trim_start_matches("rig.").trim_end_matches(".json");
                let weights = path.with_file_name(format!("weights.{stem}.json"));
                let read = ReadOptions {
                    mesh: Some(root.join("mpfb/3dobjs/base.obj")),
                    weights: weights.is_file().then_some(weights),
                    ..Default::default()
                };
                out.push(Source { label, path, from: None, read });
            }
            _ => {}
        }
    }
    out
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else { return };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            walk(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// Every AnvilToolkit fixture the project writes (`testdata/anvil`).
fn anvil_sources() -> Vec<Source> {
    let dir = skelport_ir::testing::workspace_root().join("testdata/anvil");
    let mut files: Vec<PathBuf> =
        std::fs::read_dir(&dir).unwrap().flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|e| e == "xml")).collect();
    files.sort();
    files
        .into_iter()
        .map(|path| Source {
            label: format!("testdata/anvil/{}", path.file_name().unwrap().to_string_lossy()),
            path,
            from: None,
            read: ReadOptions::default(),
        })
        .collect()
}

fn writers() -> Vec<&'static dyn Format> {
    skelport::registry::formats().iter().copied().filter(|f| f.can_write()).collect()
}

/// Convert `doc` (read from `src`) with `target` and read it back; compare.
fn convert(src: &Source, doc: &Document, target: &'static dyn Format, dir: &Path) -> Outcome {
    let opts = WriteOptions { file_stem: "out".into(), embed: true, mesh: src.read.mesh.clone(), ..Default::default() };
    let (out, diags) = match skelport::render(doc, target, &opts) {
        Ok(x) => x,
        Err(e) => {
            let msg = format!("{e:#}");
            return if REFUSALS.iter().any(|r| msg.contains(r)) { Outcome::Refused(msg) } else { Outcome::Fail(format!("refused: {msg}")) };
        }
    };
    let main = dir.join(format!("out.{}", target.extensions()[0]));
    std::fs::write(&main, &out.main).unwrap();
    let mut read = ReadOptions::default();
    for (name, bytes) in &out.side_files {
        let p = dir.join(name);
        std::fs::write(&p, bytes).unwrap();
        if name.starts_with("weights.") {
            read.weights = Some(p);
        }
    }
    // An MPFB rig's weights number the base mesh's vertices: read back on the same mesh.
    if target.name() == "mpfb" && doc.source_format.as_deref() == Some("mpfb") {
        read.mesh = src.read.mesh.clone();
    }
    // A MakeHuman 1.x skeleton written with a base mesh places its joints on it.
    if target.name() == "mhskel" {
        read.mesh = src.read.mesh.clone();
    }
    let mut rd = Diagnostics::default();
    let back = match target.read(Input { path: Some(&main), bytes: &out.main }, &read, &mut rd) {
        Ok(d) => d,
        Err(e) => return Outcome::Fail(format!("cannot read back: {e}")),
    };
    let problems = skelport_ir::validate::validate(&back);
    if !problems.is_empty() {
        return Outcome::Fail(format!("the re-read document breaks {} rule(s), e.g. {}", problems.len(), problems[0]));
    }
    let (changes, measured) = compare(doc, &back);
    if changes.is_empty() {
        return Outcome::Pass(measured);
    }
    let losses: Vec<&str> = diags.of(Severity::Loss).map(|d| d.code.as_str()).collect();
    let mut named = BTreeSet::new();
    let mut unnamed = Vec::new();
    for (kind, what) in &changes {
        let codes = EXPLAINED_BY.iter().find(|(k, _)| k == kind).map(|(_, c)| *c).unwrap_or(&[]);
        match losses.iter().find(|l| codes.iter().any(|c| l.starts_with(c))) {
            Some(l) => {
                named.insert(l.to_string());
            }
            None => unnamed.push(format!("{kind:?}: {what}")),
        }
    }
    if unnamed.is_empty() {
        Outcome::Named(named, measured)
    } else {
        Outcome::Fail(format!("{} (losses reported: {:?})", unnamed.join("; "), losses))
    }
}

/// Every kind of change from `a` to `b`, with the first example of each, and what was measured.
fn compare(a: &Document, b: &Document) -> (BTreeMap<Change, String>, Measured) {
    let (a, b) = (in_report_frame(a), in_report_frame(b));
    let mut out: BTreeMap<Change, String> = BTreeMap::new();
    let mut measured = Measured::default();
    let mut note = |k: Change, s: String| {
        out.entry(k).or_insert(s);
    };
    let with_bones = |d: &Document| d.skeletons.iter().filter(|s| !s.bones.is_empty()).count();
    if with_bones(&a) != with_bones(&b) {
        note(Change::Skeletons, format!("{} skeleton(s) with bones → {}", with_bones(&a), with_bones(&b)));
    }
    for (ka, kb) in a.skeletons.iter().filter(|s| !s.bones.is_empty()).zip(b.skeletons.iter().filter(|s| !s.bones.is_empty())) {
        let (wa, wb) = (ka.world_transforms(), kb.world_transforms());
        let extent = wa.iter().map(|t| t.translation.length()).fold(1.0f64, f64::max);
        let mb = kb.name_map();
        let parent = |k: &skelport_ir::Skeleton, i: usize| k.bones[i].parent.map(|p| k.bones[p.index()].name.clone());
        for (i, bone) in ka.bones.iter().enumerate() {
            let Some(&j) = mb.get(bone.name.as_str()) else {
                note(Change::Bones, format!("\"{}\" is gone", bone.name));
                continue;
            };
            let j = j.index();
            if parent(ka, i) != parent(kb, j) {
                note(Change::Parents, format!("\"{}\": parent {:?} → {:?}", bone.name, parent(ka, i), parent(kb, j)));
            }
            let d = wa[i].translation.distance(wb[j].translation);
            measured.head = measured.head.max(d);
            if d > METRES * extent {
                note(Change::Heads, format!("\"{}\" moved {d:.3e} m", bone.name));
            }
            let r = angle(wa[i].rotation, wb[j].rotation);
            if r > RADIANS {
                note(Change::Rotations, format!("\"{}\" turned {:.2}°", bone.name, r.to_degrees()));
            }
            let s = (wa[i].scale - wb[j].scale).abs().max_element();
            if s > 1e-5 * wa[i].scale.abs().max_element().max(1.0) {
                note(Change::Scales, format!("\"{}\": scale {} → {}", bone.name, wa[i].scale, wb[j].scale));
            }
        }
        let ma = ka.name_map();
        if let Some(extra) = kb.bones.iter().find(|x| !ma.contains_key(x.name.as_str())) {
            note(Change::Bones, format!("\"{}\" is new", extra.name));
        }
    }
    // Skins: B may add joint-only skins without a mesh (glTF has no skeleton without a skin).
    let skins_b: Vec<usize> =
        (0..b.skins.len()).filter(|&k| b.skins[k].mesh.is_some() || b.skins[k].influences.weighted_vertices() > 0).collect();
    let skins_a: Vec<usize> =
        (0..a.skins.len()).filter(|&k| a.skins[k].mesh.is_some() || a.skins[k].influences.weighted_vertices() > 0).collect();
    if skins_a.len() != skins_b.len() {
        note(Change::Skins, format!("{} skin(s) → {}", skins_a.len(), skins_b.len()));
    } else {
        let names: Vec<&str> = a.skeletons.iter().flat_map(|s| s.bones.iter().map(|b| b.name.as_str())).collect();
        for seed in 0..POSES {
            let pose = random_pose(names.iter().copied(), 0x22 + seed, 0.6);
            let (da, db) = (deform_all(&a, &pose), deform_all(&b, &pose));
            for (&ka, &kb) in skins_a.iter().zip(&skins_b) {
                let (ma, mb) = (a.skins[ka].mesh.map(|m| a.mesh(m)), b.skins[kb].mesh.map(|m| b.mesh(m)));
                let (Some(ma), Some(mb)) = (ma, mb) else {
                    if ma.is_some() {
                        note(Change::Skins, format!("skin \"{}\" lost its mesh", a.skins[ka].name));
                    }
                    continue;
                };
                let extent = ma.positions.iter().map(|p| p.length()).fold(1.0f64, f64::max);
                match corners_apart(ma, &da[ka], mb, &db[kb]) {
                    Ok(d) if d > METRES * extent => {
                        note(Change::Posed, format!("skin \"{}\": a posed vertex is {d:.3e} m off", a.skins[ka].name))
                    }
                    Ok(d) => measured.posed = Some(measured.posed.unwrap_or(0.0).max(d)),
                    Err(e) => note(Change::Skins, format!("skin \"{}\": {e}", a.skins[ka].name)),
                }
            }
        }
    }
    // Meshes no skin binds.
    let free = |d: &Document| -> Vec<usize> {
        (0..d.meshes.len()).filter(|&m| !d.skins.iter().any(|s| s.mesh.map(skelport_ir::MeshId::index) == Some(m))).collect()
    };
    let (fa, fb) = (free(&a), free(&b));
    if fa.len() != fb.len() {
        note(Change::Meshes, format!("{} unskinned mesh(es) → {}", fa.len(), fb.len()));
    } else {
        for (&x, &y) in fa.iter().zip(&fb) {
            let (ma, mb) = (&a.meshes[x], &b.meshes[y]);
            let extent = ma.positions.iter().map(|p| p.length()).fold(1.0f64, f64::max);
            match corners_apart(ma, &ma.positions, mb, &mb.positions) {
                Ok(d) if d > METRES * extent => note(Change::Meshes, format!("mesh \"{}\": a vertex is {d:.3e} m off", ma.name)),
                Ok(_) => {}
                Err(e) => note(Change::Meshes, format!("mesh \"{}\": {e}", ma.name)),
            }
        }
    }
    compare_attributes(&a, &b, &mut note);
    (out, measured)
}

/// UV sets and normals survive where both formats hold them (`a` and `b` in one frame), face
/// corner by face corner (`skelport::matrix::compare_attributes`). A re-read file with no mesh
/// is the mesh comparisons' concern; faces that no longer map onto the source's (a writer that
/// renumbers vertices) cannot be compared corner by corner and are not judged here.
fn compare_attributes(a: &Document, b: &Document, note: &mut dyn FnMut(Change, String)) {
    use skelport::matrix::Attr;
    let (uvs, normals) = skelport::matrix::compare_attributes(a, b);
    match uvs {
        Attr::Lost => note(Change::Uvs, "a UV set is gone".into()),
        Attr::Kept(d) if d > 1e-4 => note(Change::Uvs, format!("a texture coordinate is {d:.3e} off")),
        _ => {}
    }
    match normals {
        Attr::Lost => note(Change::Normals, "normals are gone".into()),
        Attr::Kept(d) if d > 1e-3 => note(Change::Normals, format!("a normal is {d:.3e} off")),
        _ => {}
    }
}

/// The largest distance between the points of `a` and `b` (per vertex of each mesh) over the
/// corners of their fan-triangulated faces, so a writer that splits vertices (seams) or
/// triangulates polygons still compares; by vertex index when the meshes have no faces.
fn corners_apart(ma: &skelport_ir::Mesh, pa: &[DVec3], mb: &skelport_ir::Mesh, pb: &[DVec3]) -> Result<f64, String> {
    let (ta, tb) = (ma.faces.triangulate(), mb.faces.triangulate());
    let pairs: Vec<(u32, u32)> = if ta.is_empty() && tb.is_empty() {
        if pa.len() != pb.len() {
            return Err(format!("{} vertices → {}", pa.len(), pb.len()));
        }
        (0..pa.len() as u32).map(|v| (v, v)).collect()
    } else if ta.len() == tb.len() {
        ta.into_iter().zip(tb).collect()
    } else {
        return Err(format!("{} triangle corners → {}", ta.len(), tb.len()));
    };
    let mut worst = 0.0f64;
    for (x, y) in pairs {
        let (Some(p), Some(q)) = (pa.get(x as usize), pb.get(y as usize)) else { return Err("a face refers past the vertices".into()) };
        worst = worst.max(p.distance(*q));
    }
    Ok(worst)
}

fn angle(a: DQuat, b: DQuat) -> f64 {
    let d = a.normalize().dot(b.normalize()).abs().min(1.0);
    2.0 * d.acos()
}

/// Run every source of a folder through every writer; returns the table rows and the failures.
fn run(sources: Vec<Source>) -> (Vec<(String, Vec<Outcome>)>, Vec<String>) {
    let ws = writers();
    let rows: Vec<(String, Vec<Outcome>)> = sources
        .par_iter()
        .map(|src| {
            let loaded =
                match skelport::open(&src.path, &skelport::OpenOptions { from: src.from.map(Into::into), reader: src.read.clone() }) {
                    Ok(l) => l,
                    Err(e) => return (src.label.clone(), vec![Outcome::Fail(format!("cannot read the source: {e:#}")); ws.len()]),
                };
            let doc = loaded.doc;
            if let Some(p) = skelport_ir::validate::validate(&doc).first() {
                return (src.label.clone(), vec![Outcome::Fail(format!("the source breaks an IR rule: {p}")); ws.len()]);
            }
            let outcomes = ws
                .par_iter()
                .map(|w| {
                    let dir = tempfile::tempdir().unwrap();
                    convert(src, &doc, *w, dir.path())
                })
                .collect();
            (src.label.clone(), outcomes)
        })
        .collect();
    let mut failures = Vec::new();
    for (label, outs) in &rows {
        for (w, o) in ws.iter().zip(outs) {
            if let Outcome::Fail(m) = o {
                failures.push(format!("{label} → {}: {m}", w.name()));
            }
        }
    }
    (rows, failures)
}

/// Print (and append to `$SKELPORT_REALWORLD_TABLE`) the rows as a Markdown table.
#[allow(clippy::print_stderr, reason = "the table is the suite's report, shown with --nocapture")]
fn table(title: &str, rows: &[(String, Vec<Outcome>)]) {
    let ws = writers();
    let mut t = format!(
        "\n### {title}\n\npass (largest head distance / largest posed-vertex distance, metres); loss: the loss codes that name each change (largest head distance); refused: the writer's error\n\n| file | {} |\n|---|{}\n",
        ws.iter().map(|w| w.name()).collect::<Vec<_>>().join(" | "),
        "---|".repeat(ws.len())
    );
    for (label, outs) in rows {
        let cells: Vec<String> = outs
            .iter()
            .map(|o| match o {
                Outcome::Pass(m) => match m.posed {
                    Some(p) => format!("pass ({:.0e} / {:.0e} m)", m.head, p),
                    None => format!("pass ({:.0e} m)", m.head),
                },
                Outcome::Named(c, m) => format!("loss: {} ({:.0e} m)", c.iter().cloned().collect::<Vec<_>>().join(", "), m.head),
                Outcome::Refused(m) => format!("refused: {}", m.lines().last().unwrap_or("").chars().take(60).collect::<String>()),
                Outcome::Fail(m) => format!("**FAIL**: {}", m.chars().take(120).collect::<String>()),
            })
            .collect();
        let _ = writeln!(t, "| {label} | {} |", cells.join(" | "));
    }
    eprintln!("{t}");
    if let Some(p) = std::env::var_os("SKELPORT_REALWORLD_TABLE") {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new().create(true).append(true).open(p).unwrap();
        f.write_all(t.as_bytes()).unwrap();
    }
}

fn check(title: &str, sources: Vec<Source>, expected: usize) {
    assert!(sources.len() >= expected, "{title}: {} source files, expected at least {expected}", sources.len());
    let (rows, failures) = run(sources);
    table(title, &rows);
    assert!(
        failures.is_empty(),
        "{title}: {} conversion(s) change the file without a loss line:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn realworld_files_survive_every_writer() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    check("realworld", corpus_sources(&root, "realworld"), 12);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn gltf_corpus_survives_every_writer() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    check("gltf", corpus_sources(&root, "gltf"), 8);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn second_life_corpus_survives_every_writer() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    check("sl", corpus_sources(&root, "sl"), 5);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn makehuman_rigs_with_weights_on_the_base_mesh_survive_every_writer() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    check("mpfb", corpus_sources(&root, "mpfb"), 8);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn makehuman1_skeletons_with_their_weights_survive_every_writer() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    check("makehuman1", corpus_sources(&root, "makehuman1"), 1);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn fbx_corpus_survives_every_writer() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    check("fbx", corpus_sources(&root, "fbx"), 8);
}

/// The same suite on a folder outside the corpus (`$SKELPORT_EVIDENCE_DIR`): public files whose
/// licences keep them out of the corpus (ufbx's and assimp's FBX test data, Mixamo's characters)
/// are checked as the corpus is, every writer and back. Run by hand, for the evidence tables of
/// docs/formats:
/// `SKELPORT_EVIDENCE_DIR=DIR cargo test -p skelport-cli --test realworld -- --ignored outside`.
#[test]
#[ignore = "needs $SKELPORT_EVIDENCE_DIR, a folder of public files outside the corpus"]
fn outside_folder_survives_every_writer() {
    let dir = std::env::var_os("SKELPORT_EVIDENCE_DIR").expect("set SKELPORT_EVIDENCE_DIR to the folder to check");
    let dir = PathBuf::from(dir);
    let (root, folder) = (dir.parent().expect("a folder with a parent"), dir.file_name().and_then(|n| n.to_str()).expect("a folder name"));
    check(folder, corpus_sources(root, folder), 1);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn g4mf_examples_survive_every_writer() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    check("g4mf", corpus_sources(&root, "g4mf"), 2);
}

#[test]
fn anvil_fixtures_survive_every_writer() {
    check("anvil fixtures", anvil_sources(), 12);
}

/// `skelport convert` on the two realworld files the issue names for the CLI: a skeleton-less
/// export to a rig format is exit 1 with a message and no file; the valid glTF with
/// KHR_animation_pointer channels converts.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn the_cli_refuses_nothing_to_write_and_reads_the_animation_pointer_file() {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    let dir = tempfile::tempdir().unwrap();
    let run = |input: &Path, to: &str| {
        let out = dir.path().join(format!("out.{to}"));
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_skelport"))
            .args(["convert", input.to_str().unwrap(), "--to", to, "-o", out.to_str().unwrap()])
            .output()
            .unwrap();
        (o.status.code(), String::from_utf8_lossy(&o.stderr).into_owned(), out.exists())
    };
    let human = root.join("realworld/assimp_human/human.dae");
    for to in ["mpfb", "anvil", "anvil-schema"] {
        let (code, err, exists) = run(&human, to);
        assert_eq!(code, Some(1), "{to}: {err}");
        assert!(err.contains("nothing to write") && err.contains("2 mesh(es)"), "{to}: {err}");
        assert!(!exists, "{to}: a refused conversion wrote its output");
    }
    let pointer = root.join("realworld/blenderio_24_animation_pointer/24_animation_pointer.gltf");
    let (code, err, exists) = run(&pointer, "glb");
    assert_eq!(code, Some(0), "{err}");
    assert!(exists && err.matches("not read").count() == 1, "{err}");
}
