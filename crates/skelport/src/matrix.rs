//! The conversion matrix: every source document through every writer and back, with the loss
//! report, the largest bone-head deviation and the pose-test deviation. `cargo xtask matrix`
//! renders it into docs/conversion-matrix.md; tests assert on the same rows. The targets, and the
//! chains of the pose test, come from the registry and what each format says it holds.

use crate::{diff, registry, ConvertOptions, Loaded, OpenOptions};
use serde::Serialize;
use skelport_ir::{Diagnostics, Document, Format, Input, Severity};
use std::path::{Path, PathBuf};

/// One source for the matrix.
pub struct Source {
    /// What the rows call it.
    pub label: String,
    /// The document.
    pub doc: Document,
    /// The format it was read as (`None` for the built-in sample).
    pub format: Option<&'static dyn Format>,
    /// What it was read with (a mesh, weights): a file of its own format is read back with the
    /// same mesh.
    pub read: skelport_ir::ReadOptions,
}

/// One (source, target) cell.
#[derive(Debug, Serialize, Clone)]
pub struct Cell {
    /// The source's label.
    pub source: String,
    /// The target format's name.
    pub target: String,
    /// Whether it was written and read back.
    pub ok: bool,
    /// Why not.
    pub error: Option<String>,
    /// Bones in the source.
    pub bones_in: usize,
    /// Bones read back.
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
    /// What the target's writer reported it could not hold.
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

/// Mesh `k`'s normals (or, with `smooth`, its computed smooth normals) where its skin puts them
/// at rest (each vertex's Σ wⱼ·restⱼ·IBMⱼ·bind shape, or the bind shape alone for a vertex without
/// weights): a writer without bind-shape matrices (glTF, G4MF) bakes the bind shape, and G4MF the
/// whole rest skinning, into the mesh, so raw normals of a re-read file need not be the source's.
fn bound_normals(doc: &Document, k: usize, smooth: bool) -> skelport_ir::Mesh {
    use skelport_ir::{DMat3, DMat4};
    let m = &doc.meshes[k];
    let skin = doc.skins.iter().find(|s| s.mesh.map(skelport_ir::MeshId::index) == Some(k));
    let world = skin.and_then(|s| doc.get_skeleton(s.skeleton)).map(|sk| sk.world_matrices()).unwrap_or_default();
    // restⱼ·IBMⱼ per joint slot, up to the first slot that has none (a valid document has them all).
    let joint_mats: Vec<DMat4> = skin
        .map(|s| s.joints.iter().zip(&s.inverse_bind).map_while(|(j, ibm)| world.get(j.index()).map(|w| *w * *ibm)).collect())
        .unwrap_or_default();
    let normal_matrix = |v: usize| -> DMat3 {
        let Some(s) = skin else { return DMat3::IDENTITY };
        let m = s.blend_matrix(v, &joint_mats).map_or(s.bind_shape, |m| m * s.bind_shape);
        DMat3::from_mat4(m).inverse().transpose()
    };
    let normals = if smooth {
        Some(skelport_ir::Normals::PerVertex(skelport_ir::proc::smooth_normals(&m.positions, &m.faces)))
    } else {
        m.normals.clone()
    };
    let normals = normals.map(|n| match n {
        skelport_ir::Attribute::PerVertex(x) => {
            skelport_ir::Attribute::PerVertex(x.iter().enumerate().map(|(v, &n)| (normal_matrix(v) * n).normalize_or_zero()).collect())
        }
        skelport_ir::Attribute::PerCorner(x) => skelport_ir::Attribute::PerCorner(
            x.iter().zip(&m.faces.indices).map(|(&n, &v)| (normal_matrix(v as usize) * n).normalize_or_zero()).collect(),
        ),
    });
    skelport_ir::Mesh { normals, faces: m.faces.clone(), ..Default::default() }
}

/// UVs and normals of `src` against `back` (already in `src`'s frame), mesh by mesh in order.
pub fn compare_attributes(src: &Document, back: &Document) -> (Attr, Attr) {
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

/// Sources: the built-in sample, plus the corpus files (and the AnvilToolkit fixtures under
/// `testdata/`) that registered readers recognise.
#[allow(clippy::print_stderr, reason = "the matrix is made by xtask and tests, which show it")]
pub fn sources(corpus: Option<&Path>) -> Vec<Source> {
    let mut out = vec![Source { label: "demo sample".into(), doc: crate::demo::sample(), format: None, read: Default::default() }];
    let mut list: Vec<(&str, PathBuf, skelport_ir::ReadOptions)> = Vec::new();
    if let Some(c) = corpus {
        let mpfb = c.join("mpfb");
        let std_rigs = mpfb.join("rigs/standard");
        let base = Some(mpfb.join("3dobjs/base.obj"));
        let with_mesh = skelport_ir::ReadOptions { mesh: base.clone(), ..Default::default() };
        list.extend([
            (
                "MPFB game_engine + weights + base.obj",
                std_rigs.join("rig.game_engine.json"),
                skelport_ir::ReadOptions { weights: Some(std_rigs.join("weights.game_engine.json")), ..with_mesh.clone() },
            ),
            ("MPFB default + base.obj", std_rigs.join("rig.default.json"), with_mesh),
            ("glTF Fox.glb", c.join("gltf/Fox/Fox.glb"), Default::default()),
            ("glTF SimpleSkin.gltf", c.join("gltf/SimpleSkin/SimpleSkin.gltf"), Default::default()),
            ("SL female_2016_08_05.dae", c.join("sl/linden-lab/female_2016_08_05.dae"), Default::default()),
            // Plain meshes and no skeleton: rig formats refuse it, the others keep the meshes.
            ("Collada human.dae (plain meshes)", c.join("realworld/assimp_human/human.dae"), Default::default()),
        ]);
    }
    let ws = skelport_ir::testing::workspace_root();
    list.push(("AC biped (Standard)", ws.join("testdata/anvil/biped.standard.xml"), Default::default()));
    list.push(("AC biped (Schema-Based)", ws.join("testdata/anvil/biped.schema.xml"), Default::default()));
    for (label, path, read) in list {
        match crate::open(&path, &OpenOptions { from: None, reader: read.clone() }) {
            Ok(l) => out.push(Source { label: label.into(), doc: l.doc, format: Some(l.format), read }),
            Err(e) => eprintln!("matrix: skipping {label}: {e}"),
        }
    }
    out
}

/// Write `doc` as `target` into `dir` and read it back (with the side files the reader needs
/// joined, and `read`'s mesh when the target is the source's own format): the diagnostics of
/// writing and the document read back.
fn through(
    doc: &Document,
    target: &'static dyn Format,
    dir: &Path,
    read: Option<&skelport_ir::ReadOptions>,
) -> Result<(Diagnostics, Document), String> {
    let path = dir.join(format!("m.{}", target.extensions().first().copied().unwrap_or("out")));
    let loaded = Loaded::from_document(doc.clone(), "matrix source");
    // The matrix measures what each writer keeps: a skin loss the facade refuses without
    // allow_loss is written anyway and listed among the cell's losses.
    let opts = ConvertOptions { allow_loss: true, ..Default::default() }.named_for(&path);
    let converted = crate::convert(loaded, target, &opts).map_err(|e| e.to_string())?;
    converted.save(&path).map_err(|e| e.to_string())?;
    let mut opts = target.read_back(&converted.output);
    if let Some(r) = read {
        opts.mesh = r.mesh.clone();
    }
    let back = target
        .read(Input { path: Some(&path), bytes: &converted.output.main }, &opts, &mut Diagnostics::default())
        .map_err(|e| format!("re-read as {}: {e}", target.name()))?;
    Ok((converted.diagnostics, back))
}

/// Run one source through one writer and back.
pub fn cell(src: &Source, target: &'static dyn Format) -> Cell {
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
    let result = tempfile::tempdir().map_err(|e| e.to_string()).and_then(|dir| through(&src.doc, target, dir.path(), own(src, target)));
    let (d, back) = match result {
        Ok(x) => x,
        Err(e) => {
            c.error = Some(e);
            return c;
        }
    };
    c.losses = d.of(Severity::Loss).map(|l| l.message.clone()).collect();
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

/// The options `src` was read with when `target` is its own format.
fn own<'a>(src: &'a Source, target: &dyn Format) -> Option<&'a skelport_ir::ReadOptions> {
    src.format.filter(|f| f.name() == target.name()).map(|_| &src.read)
}

/// Poses per file in the acceptance pose test (the figure).
pub const POSES: usize = 20;
/// Largest skinned-vertex (or posed-joint) deviation the acceptance pose test allows, metres.
pub const POSE_TOLERANCE: f64 = 1e-5;

/// Whether `target` can hold all of `doc` that the pose test compares: its hierarchy and rest
/// orientations, its bone count, its skins with their meshes, and the pose they are bound in.
fn expresses(target: &dyn Format, doc: &Document) -> bool {
    let h = target.holds();
    let bones = doc.skeletons.iter().map(|s| s.bones.len()).max().unwrap_or(0);
    target.can_read()
        && target.can_write()
        && h.any_skeleton
        && h.orientations
        && h.max_bones.is_none_or(|m| bones <= m)
        && (doc.skins.is_empty() || (h.skins && h.meshes && (h.bind_pose || bound_at_rest(doc))))
}

/// Whether every skin of `doc` is bound in its skeleton's rest pose.
fn bound_at_rest(doc: &Document) -> bool {
    doc.skins.iter().all(|s| {
        let Some(sk) = doc.get_skeleton(s.skeleton) else { return false };
        let world = sk.world_matrices();
        s.joints.iter().zip(&s.inverse_bind).all(|(j, ib)| {
            let m = world[j.index()] * *ib * s.bind_shape.inverse();
            m.abs_diff_eq(skelport_ir::DMat4::IDENTITY, 1e-6)
        })
    })
}

/// The chains a source takes in the acceptance test: straight to every other format that
/// expresses it, and through the first of those that keeps extras back to its own format. (A
/// chain ends in the format it checks.) None for a source without bones: there is nothing to
/// pose (its meshes are compared in the matrix's cells).
fn chains(src: &Source) -> Vec<Vec<&'static dyn Format>> {
    if src.doc.skeletons.iter().all(|s| s.bones.is_empty()) {
        return Vec::new();
    }
    let others: Vec<&'static dyn Format> = registry::formats()
        .iter()
        .copied()
        .filter(|f| src.format.is_none_or(|s| s.name() != f.name()) && expresses(*f, &src.doc))
        .collect();
    let mut out: Vec<Vec<&'static dyn Format>> = others.iter().map(|f| vec![*f]).collect();
    // Back to its own format through one that keeps other formats' facts as extras, so the
    // return trip can be whole.
    let hub = others.iter().find(|f| f.holds().extras).or(others.first());
    if let (Some(own), Some(hub)) = (src.format.filter(|f| f.can_write()), hub) {
        out.push(vec![*hub, own]);
    }
    out
}

/// One acceptance pose-test row: a source taken through a chain of formats whose targets can
/// express it, then posed alike with the source and compared.
#[derive(Debug, Serialize, Clone)]
pub struct PoseRow {
    /// The source's label.
    pub source: String,
    /// The formats the source went through, e.g. `glb → g4b → glb`.
    pub path: String,
    /// The comparison.
    pub test: Option<diff::PoseTest>,
    /// Why the chain failed.
    pub error: Option<String>,
}

/// Run every source's chains and pose each result against its source ([`POSES`] poses).
pub fn pose_rows(sources: &[Source]) -> Vec<PoseRow> {
    let mut rows = Vec::new();
    for src in sources {
        for chain in chains(src) {
            let path = chain.iter().map(|f| f.name()).collect::<Vec<_>>().join(" → ");
            let mut row = PoseRow { source: src.label.clone(), path, test: None, error: None };
            let run = || -> Result<diff::PoseTest, String> {
                let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
                let mut doc = src.doc.clone();
                for f in &chain {
                    doc = through(&doc, *f, dir.path(), own(src, *f))?.1;
                }
                // A skeleton-only source is compared joint by joint, whatever skin a target
                // added to mark its joints (glTF's).
                if src.doc.skins.is_empty() {
                    doc.skins.clear();
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
            (Some(t), _) if t.matrices > 0 => (format!("{} skinning matrices", t.matrices), fmt_m(Some(t.max_deviation))),
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

/// Why the target rightly refused the source, when it did: VRM holds only humanoids
/// (`Holds::humanoid_only`), and a rig format is its bones, so a document of plain meshes is
/// refused with the formats that keep them named. `None` for a cell that passed or failed.
pub fn refusal(c: &Cell) -> Option<String> {
    let error = c.error.as_deref()?;
    if error.contains("is not a humanoid") {
        Some("not a humanoid (VRM holds humanoids only)".to_string())
    } else if error.contains("nothing to write") && error.contains("no bones") {
        let keep = error.split("; convert to ").nth(1).unwrap_or("").trim_end_matches(" to keep the meshes");
        Some(format!("no bones (a {} file is its bones; convert to {keep})", c.target))
    } else {
        None
    }
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
        let error = c.error.as_deref().unwrap_or("");
        let result = if c.ok {
            "ok".to_string()
        } else if let Some(why) = refusal(c) {
            format!("refused: {why}")
        } else {
            format!("**failed**: {}", error.replace('\n', " ").replace('|', "\\|"))
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
