//! The conversion matrix: every source document through every writer and back, with the loss
//! report, the largest bone-head deviation and the pose-test deviation. `cargo xtask matrix`
//! renders it into docs/conversion-matrix.md; tests assert on the same rows.

use crate::{diff, registry};
use serde::Serialize;
use skelport_ir::{Diagnostics, Document, Input, ReadOptions, Severity, WriteOptions};
use std::path::PathBuf;

/// One source for the matrix.
pub struct Source {
    pub label: String,
    pub doc: Document,
}

/// One (source, target) cell.
#[derive(Debug, Serialize, Clone)]
pub struct Cell {
    pub source: String,
    pub target: String,
    pub ok: bool,
    pub error: Option<String>,
    pub bones_in: usize,
    pub bones_out: usize,
    /// Largest head distance between the source and the re-read file (metres, report frame),
    /// over bones matched by name.
    pub max_head_delta: Option<f64>,
    /// Largest skinned-vertex distance over the pose test (metres), when both sides have a skin.
    pub pose_max_deviation: Option<f64>,
    /// Texture coordinates, source against re-read, at every face corner: see [`Attr`].
    pub uvs: Attr,
    /// Normals, likewise (compared as unit vectors, in the source's frame).
    pub normals: Attr,
    pub losses: Vec<String>,
}

/// How a mesh attribute (UVs, normals) came through a cell, compared at every face corner of
/// every mesh (a re-read triangle mesh is mapped onto the source's polygons).
#[derive(Debug, Serialize, Clone, Copy, PartialEq)]
#[serde(rename_all = "snake_case", tag = "status", content = "max_delta")]
pub enum Attr {
    /// The source has none (and the target wrote none).
    Absent,
    /// Every corner came back; the largest difference (texture units, or between unit normals).
    Kept(f64),
    /// The source had none; the writer computed them (normals). The largest difference from
    /// `skelport_ir::proc::smooth_normals` of the source.
    Computed(f64),
    /// The source has them; the re-read file has none.
    Lost,
    /// Both have them but the faces do not map onto each other (renumbered vertices).
    NotComparable,
    /// The re-read file has no mesh at all.
    NoMesh,
}

impl Attr {
    fn markdown(&self) -> String {
        match self {
            Attr::Absent => "–".into(),
            Attr::Kept(d) => format!("kept ({})", fmt_m(Some(*d))),
            Attr::Computed(d) => format!("computed ({})", fmt_m(Some(*d))),
            Attr::Lost => "**lost**".into(),
            Attr::NotComparable => "not comparable".into(),
            Attr::NoMesh => "no mesh".into(),
        }
    }
}

/// Mesh `k`'s normals (or, with `smooth`, its computed smooth normals) where its skin's bind
/// shape puts them: a writer without bind-shape matrices (glTF, G4MF) bakes it into the mesh.
fn bound_normals(doc: &Document, k: usize, smooth: bool) -> skelport_ir::Mesh {
    let m = &doc.meshes[k];
    let bind = doc.skins.iter().find(|s| s.mesh == Some(k)).map_or(skelport_ir::DMat4::IDENTITY, |s| s.bind_shape);
    let nm = skelport_ir::DMat3::from_mat4(bind).inverse().transpose();
    let normals = if smooth {
        Some(skelport_ir::Normals::PerVertex(skelport_ir::proc::smooth_normals(&m.positions, &m.faces)))
    } else {
        m.normals.clone()
    };
    let normals = normals.map(|mut n| {
        for v in n.values_mut() {
            *v = nm * *v;
        }
        n
    });
    skelport_ir::Mesh { normals, faces: m.faces.clone(), ..Default::default() }
}

/// UVs and normals of `src` against `back` (already in `src`'s frame), mesh by mesh in order.
fn compare_attributes(src: &Document, back: &Document) -> (Attr, Attr) {
    use skelport_ir::testing::{normal_delta, uv_delta};
    let has_uvs = src.meshes.iter().any(|m| !m.uvs.is_empty());
    if back.meshes.is_empty() {
        let none = |has: bool| if has { Attr::NoMesh } else { Attr::Absent };
        return (none(has_uvs), none(src.meshes.iter().any(|m| !m.faces.is_empty())));
    }
    // The worst of the per-mesh results: lost, then not comparable, then the largest delta.
    fn worse(a: Attr, b: Attr) -> Attr {
        let rank = |x: &Attr| match x {
            Attr::Lost | Attr::NoMesh => 4,
            Attr::NotComparable => 3,
            Attr::Kept(_) | Attr::Computed(_) => 2,
            Attr::Absent => 1,
        };
        match (a, b) {
            (Attr::Kept(x), Attr::Kept(y)) => Attr::Kept(x.max(y)),
            (Attr::Computed(x), Attr::Computed(y)) => Attr::Computed(x.max(y)),
            _ if rank(&b) > rank(&a) => b,
            _ => a,
        }
    }
    let (mut uvs, mut normals) = (Attr::Absent, Attr::Absent);
    for (k, a) in src.meshes.iter().enumerate() {
        let Some(b) = back.meshes.get(k) else {
            uvs = worse(uvs, if a.uvs.is_empty() { Attr::Absent } else { Attr::Lost });
            normals = worse(normals, if a.normals.is_some() { Attr::Lost } else { Attr::Absent });
            continue;
        };
        for set in 0..a.uvs.len() {
            let r = match (b.uvs.get(set), uv_delta(a, b, set)) {
                (None, _) => Attr::Lost,
                (Some(_), Some(d)) => Attr::Kept(d),
                (Some(_), None) => Attr::NotComparable,
            };
            uvs = worse(uvs, r);
        }
        let r = match (&a.normals, &b.normals) {
            (None, None) => Attr::Absent,
            (Some(_), None) => Attr::Lost,
            (Some(_), Some(_)) => {
                normal_delta(&bound_normals(src, k, false), &bound_normals(back, k, false)).map_or(Attr::NotComparable, Attr::Kept)
            }
            (None, Some(_)) => {
                normal_delta(&bound_normals(src, k, true), &bound_normals(back, k, false)).map_or(Attr::NotComparable, Attr::Computed)
            }
        };
        normals = worse(normals, r);
    }
    (uvs, normals)
}

/// Read a file with a named format (used to build sources from the corpus).
pub fn read(path: &std::path::Path, format: &str, opts: &ReadOptions) -> Result<Document, String> {
    let f = registry::by_name(format).ok_or_else(|| format!("no format {format}"))?;
    let bytes = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
    f.read(Input { path: Some(path), bytes: &bytes }, opts, &mut Diagnostics::default()).map_err(|e| e.to_string())
}

/// Sources: the built-in sample, plus corpus files whose formats are registered.
pub fn sources(corpus: Option<&std::path::Path>) -> Vec<Source> {
    let mut out = vec![Source { label: "demo sample".into(), doc: crate::demo::sample() }];
    let Some(c) = corpus else { return out };
    let mpfb = c.join("mpfb");
    let std_rigs = mpfb.join("rigs/standard");
    let base = Some(mpfb.join("3dobjs/base.obj"));
    let list: Vec<(&str, PathBuf, &str, ReadOptions)> = vec![
        (
            "MPFB game_engine + weights + base.obj",
            std_rigs.join("rig.game_engine.json"),
            "mpfb",
            ReadOptions { mesh: base.clone(), weights: Some(std_rigs.join("weights.game_engine.json")), ..Default::default() },
        ),
        ("MPFB default + base.obj", std_rigs.join("rig.default.json"), "mpfb", ReadOptions { mesh: base.clone(), ..Default::default() }),
        ("glTF Fox.glb", c.join("gltf/Fox/Fox.glb"), "glb", ReadOptions::default()),
        ("glTF SimpleSkin.gltf", c.join("gltf/SimpleSkin/SimpleSkin.gltf"), "gltf", ReadOptions::default()),
        ("SL female_2016_08_05.dae", c.join("sl/linden-lab/female_2016_08_05.dae"), "dae", ReadOptions::default()),
    ];
    for (label, path, fmt, opts) in list {
        if registry::by_name(fmt).is_none() {
            continue;
        }
        match read(&path, fmt, &opts) {
            Ok(doc) => out.push(Source { label: label.into(), doc }),
            Err(e) => eprintln!("matrix: skipping {label}: {e}"),
        }
    }
    let ws = skelport_ir::testing::workspace_root();
    for (label, rel, fmt) in [
        ("AC biped (Standard)", "testdata/anvil/biped.standard.xml", "anvil"),
        ("AC biped (Schema-Based)", "testdata/anvil/biped.schema.xml", "anvil-schema"),
    ] {
        let p = ws.join(rel);
        if registry::by_name(fmt).is_some() && p.exists() {
            if let Ok(doc) = read(&p, fmt, &ReadOptions::default()) {
                out.push(Source { label: label.into(), doc });
            }
        }
    }
    out
}

/// Run one source through one writer and back.
pub fn cell(src: &Source, target: &'static dyn skelport_ir::Format) -> Cell {
    let bones_in = src.doc.skeletons.iter().map(|s| s.bones.len()).sum();
    let mut c = Cell {
        source: src.label.clone(),
        target: target.name().into(),
        ok: false,
        error: None,
        bones_in,
        bones_out: 0,
        max_head_delta: None,
        pose_max_deviation: None,
        uvs: Attr::Absent,
        normals: Attr::Absent,
        losses: vec![],
    };
    let dir = match tempfile::tempdir() {
        Ok(d) => d,
        Err(e) => {
            c.error = Some(e.to_string());
            return c;
        }
    };
    let name = format!("m.{}", target.extensions().first().copied().unwrap_or("out"));
    let path = dir.path().join(&name);
    let (out, d) = match crate::render(&src.doc, target, &WriteOptions { file_stem: crate::stem_of(&path), ..Default::default() }) {
        Ok(o) => o,
        Err(e) => {
            c.error = Some(format!("{e:#}"));
            return c;
        }
    };
    c.losses = d.of(Severity::Loss).map(|l| l.message.clone()).collect();
    if let Err(e) = crate::io::write_output(&path, &out) {
        c.error = Some(format!("{e:#}"));
        return c;
    }
    let back = match target.read(Input { path: Some(&path), bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()) {
        Ok(b) => b,
        Err(e) => {
            c.error = Some(format!("re-read: {e}"));
            return c;
        }
    };
    c.bones_out = back.skeletons.iter().map(|s| s.bones.len()).sum();
    let r = diff::diff(&src.doc, &back, diff::Tolerance::default());
    c.max_head_delta = Some(r.max_head_distance);
    if !src.doc.skins.is_empty() && !back.skins.is_empty() {
        if let Ok(p) = diff::pose_test(&src.doc, &back, 5, 7) {
            c.pose_max_deviation = Some(p.max_deviation);
        }
    }
    let mut in_frame = back;
    in_frame.convert_frame(src.doc.frame);
    (c.uvs, c.normals) = compare_attributes(&src.doc, &in_frame);
    c.ok = true;
    c
}

/// Poses per file in the acceptance pose test (the figure).
pub const POSES: usize = 20;
/// Largest skinned-vertex (or posed-joint) deviation the acceptance pose test allows, metres.
pub const POSE_TOLERANCE: f64 = 1e-5;

/// One acceptance pose-test row: a source taken through a chain of formats whose targets can
/// express it, then posed alike with the source and compared.
#[derive(Debug, Serialize, Clone)]
pub struct PoseRow {
    pub source: String,
    /// The formats the source went through, e.g. `glb → g4b → glb`.
    pub path: String,
    pub test: Option<diff::PoseTest>,
    pub error: Option<String>,
}

/// The chains each source takes for the acceptance test: glTF ↔ G4MF ↔ ir-json, MPFB → glTF →
/// MPFB, SL → glTF → SL, AC → glTF → AC. (A chain ends in the format it checks.)
fn chains(label: &str) -> &'static [&'static [&'static str]] {
    match label {
        "demo sample" => &[&["glb"], &["g4b"], &["ir-json"], &["g4tf", "gltf"]],
        "glTF Fox.glb" | "glTF SimpleSkin.gltf" => &[&["g4tf"], &["g4b"], &["ir-json"], &["g4b", "glb"], &["ir-json", "g4tf", "gltf"]],
        "MPFB game_engine + weights + base.obj" => &[&["glb", "mpfb"], &["glb"], &["g4b"], &["ir-json"]],
        "SL female_2016_08_05.dae" => &[&["glb", "dae"], &["glb"], &["ir-json"]],
        "AC biped (Standard)" => &[&["glb", "anvil"]],
        "AC biped (Schema-Based)" => &[&["glb", "anvil-schema"]],
        _ => &[],
    }
}

/// Write `doc` as `fmt` into `dir` and read it back; an MPFB rig is read back on `mesh` with the
/// weights file its writer produced.
fn through(doc: &Document, fmt: &str, dir: &std::path::Path, mesh: Option<&std::path::Path>) -> Result<Document, String> {
    let f = registry::by_name(fmt).ok_or_else(|| format!("no format {fmt}"))?;
    let path = dir.join(format!("p.{}", f.extensions().first().copied().unwrap_or("out")));
    let mut d = Diagnostics::default();
    let out = f.write(doc, &WriteOptions { file_stem: crate::stem_of(&path), ..Default::default() }, &mut d).map_err(|e| e.to_string())?;
    crate::io::write_output(&path, &out).map_err(|e| format!("{e:#}"))?;
    let weights = out.side_files.iter().find(|s| s.0.starts_with("weights.")).map(|s| dir.join(&s.0));
    let opts = ReadOptions { weights, mesh: mesh.map(|m| m.to_path_buf()), ..Default::default() };
    f.read(Input { path: Some(&path), bytes: &out.main }, &opts, &mut Diagnostics::default()).map_err(|e| format!("re-read as {fmt}: {e}"))
}

/// Run every source's chains and pose each result against its source ([`POSES`] poses).
pub fn pose_rows(sources: &[Source], corpus: Option<&std::path::Path>) -> Vec<PoseRow> {
    let mesh = corpus.map(|c| c.join("mpfb/3dobjs/base.obj"));
    let mut rows = Vec::new();
    for src in sources {
        for chain in chains(&src.label) {
            let mut row = PoseRow { source: src.label.clone(), path: chain.join(" → "), test: None, error: None };
            let run = || -> Result<diff::PoseTest, String> {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                let mut doc = src.doc.clone();
                for fmt in *chain {
                    let m = if *fmt == "mpfb" { mesh.as_deref() } else { None };
                    doc = through(&doc, fmt, dir.path(), m)?;
                }
                diff::pose_test(&src.doc, &doc, POSES, 11).map_err(|e| format!("{e:#}"))
            };
            match run() {
                Ok(t) => row.test = Some(t),
                Err(e) => row.error = Some(e),
            }
            rows.push(row);
        }
    }
    rows
}

/// The pose-test table as markdown.
pub fn pose_markdown(rows: &[PoseRow]) -> String {
    let mut s = format!(
        "\n## Proof by skinning\n\nEach source taken through the formats that can express it, then posed alike with the \
         source ({POSES} random poses: every bone rotated up to 0.6 rad about a random axis, by name) and compared: \
         linear-blend-skinned vertices of every skin, or posed joint positions for skeleton-only files. The acceptance \
         bar is {POSE_TOLERANCE:.0e} m (the test `pose_acceptance` asserts it).\n\n| source | path | compared | max Δ (m) |\n|---|---|---|---|\n"
    );
    for r in rows {
        let (what, dev) = match (&r.test, &r.error) {
            (Some(t), _) if t.vertices > 0 => (format!("{} vertices", t.vertices), fmt_m(Some(t.max_deviation))),
            (Some(t), _) => (format!("{} joints", t.joints), fmt_m(Some(t.max_deviation))),
            (None, e) => ("–".into(), format!("**failed**: {}", e.as_deref().unwrap_or("").replace('|', "\\|"))),
        };
        s.push_str(&format!("| {} | {} | {what} | {dev} |\n", r.source, r.path));
    }
    s
}

/// Every source × every writer.
pub fn run(sources: &[Source]) -> Vec<Cell> {
    let mut cells = Vec::new();
    for s in sources {
        for f in registry::formats().iter().filter(|f| f.can_write() && f.can_read()) {
            cells.push(cell(s, *f));
        }
    }
    cells
}

fn fmt_m(v: Option<f64>) -> String {
    v.map(|x| if x == 0.0 { "0".into() } else { format!("{x:.1e}") }).unwrap_or_else(|| "–".into())
}

/// The matrix as markdown: one table row per cell.
pub fn markdown(cells: &[Cell]) -> String {
    let mut s = String::from(
        "# Conversion matrix\n\nGenerated by `cargo xtask matrix` (the same code runs in the test suite): every source \
         through every writer, re-read, compared with `skelport diff` (bone heads, report frame) and, where both sides \
         have a skin, posed with 5 random poses and compared vertex by vertex (linear blend skinning). UVs and normals are \
         compared at every face corner (source against re-read, in the source's frame): *kept* with the largest \
         difference (texture units; between unit normals), *computed* where the source had no normals and the writer \
         made smooth ones (difference from area-weighted smooth normals of the source), *lost*, *no mesh* (the target \
         holds none), or – (the source has none). Losses are what the target's writer reported it could not hold.\n\n\
         | source | target | result | bones in → out | max head Δ (m) | pose max Δ (m) | UVs | normals | losses |\n\
         |---|---|---|---|---|---|---|---|---|\n",
    );
    for c in cells {
        let result = if c.ok {
            "ok".to_string()
        } else {
            format!("**failed**: {}", c.error.as_deref().unwrap_or("").replace('\n', " ").replace('|', "\\|"))
        };
        let losses = if c.losses.is_empty() {
            "–".to_string()
        } else {
            let mut l: Vec<String> = c.losses.iter().take(3).map(|x| x.replace('|', "\\|")).collect();
            if c.losses.len() > 3 {
                l.push(format!("… {} more", c.losses.len() - 3));
            }
            format!("{}: {}", c.losses.len(), l.join("; "))
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} → {} | {} | {} | {} | {} | {} |\n",
            c.source,
            c.target,
            result,
            c.bones_in,
            c.bones_out,
            fmt_m(c.max_head_delta),
            fmt_m(c.pose_max_deviation),
            c.uvs.markdown(),
            c.normals.markdown(),
            losses
        ));
    }
    s
}
