//! # skelport-mpfb — MakeHuman (MPFB) rigs and weights
//!
//! MPFB stores a skeleton as `rig.*.json` — each bone's head and tail placed by a *strategy* over
//! the MakeHuman base mesh (a joint cube's centre, a vertex, a mean of vertices, or x/y/z from
//! three vertices), plus roll, parent and Blender bone settings — and its skin weights as
//! `weights.*.json`. This crate reads all three shapes real rig files come in (headerless v100,
//! v100 with a header, v110), places the bones on a base mesh exactly as MPFB does in Blender,
//! joins weights, and writes v110 rigs and weights as MPFB writes them.
//!
//! Frame: Blender's (+Z up, characters face −Y, right-handed), metres after the rig's
//! `scale_factor` (0.1 for MakeHuman's decimetre base mesh).

#![forbid(unsafe_code)]

pub mod fit;
pub mod layout;
pub mod read;
pub mod write;
mod wscan;

use skelport_ir::{
    Diagnostics, Document, Fault, FaultKind, Format, FormatError, Holds, InMemoryFile, Input, InputKind, InputRole, Output, Place,
    ReadOptions, WriteOptions,
};

/// The extension namespace of this format.
pub const NAMESPACE: &str = NAME;

/// The format's name, as `--from`/`--to` take it.
pub const NAME: &str = "mpfb";

/// Errors reading or writing MPFB files, with the place.
#[derive(Debug, thiserror::Error)]
pub enum MpfbError {
    #[error("{}", FormatError::of(self))]
    Syntax { file: String, line: usize, column: usize, message: String, kind: FaultKind },
    #[error("{}", FormatError::of(self))]
    Json { file: String, path: String, message: String, kind: FaultKind },
    #[error("{file}: {message}")]
    File { file: String, message: String },
    #[error("{0}")]
    Obj(#[from] skelport_obj::ObjError),
    /// The conversion's decode budget would be exceeded (a tiny weights file naming vertex
    /// 16,000,000 would make per-vertex arrays of that length).
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
    #[error("cannot write MPFB: {0}")]
    Write(String),
}

impl Fault for MpfbError {
    fn file(&self) -> Option<&str> {
        match self {
            MpfbError::Syntax { file, .. } | MpfbError::Json { file, .. } | MpfbError::File { file, .. } => Some(file),
            MpfbError::Obj(e) => e.file(),
            MpfbError::Budget(e) => e.file(),
            MpfbError::Write(_) => None,
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            MpfbError::Syntax { line, column, .. } => Some(Place::text(*line, *column)),
            MpfbError::Json { path, .. } => Some(Place::Path(path.clone())),
            MpfbError::Obj(e) => e.place(),
            MpfbError::Budget(e) => e.place(),
            MpfbError::File { .. } | MpfbError::Write(_) => None,
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            MpfbError::Syntax { kind, .. } | MpfbError::Json { kind, .. } => *kind,
            MpfbError::Obj(e) => e.kind(),
            MpfbError::Budget(e) => e.kind(),
            MpfbError::File { .. } => FaultKind::Other,
            MpfbError::Write(_) => FaultKind::Write,
        }
    }
    fn what(&self) -> String {
        match self {
            MpfbError::Syntax { message, .. } => format!("not valid JSON: {message}"),
            MpfbError::Json { message, .. } | MpfbError::File { message, .. } => message.clone(),
            MpfbError::Obj(e) => e.what(),
            MpfbError::Budget(e) => e.what(),
            MpfbError::Write(m) => format!("cannot write MPFB: {m}"),
        }
    }
    fn fix(&self) -> Option<String> {
        match self {
            // Every JSON fault of a rig or weights file is fixed in the JSON or by exporting again.
            MpfbError::Syntax { .. } => Some("fix the JSON there or export the file from MPFB again".into()),
            MpfbError::Obj(e) => e.fix(),
            _ => None,
        }
    }
}

/// MPFB rig JSON (`rig.*.json`), with `--weights` and `--mesh`.
pub struct MpfbFormat;

/// Is this JSON an MPFB rig? Looks for bone objects with head/tail strategy objects.
fn sniff_rig(head: &[u8]) -> u8 {
    let s = skelport_ir::format::head_text(&head[..head.len().min(8192)]);
    if !s.trim_start().starts_with('{') || s.contains("\"skelport_ir\"") || s.contains("\"asset\"") || s.contains("\"weights\"") {
        return 0;
    }
    if s.contains("\"strategy\"") && s.contains("\"head\"") && s.contains("\"tail\"") {
        90
    } else {
        0
    }
}

impl Format for MpfbFormat {
    fn name(&self) -> &'static str {
        NAME
    }
    fn mesh_hint(&self) -> Option<&'static str> {
        Some("give the body the weights number with --mesh (MakeHuman's 3dobjs/base.obj for MPFB's own rigs)")
    }
    fn description(&self) -> &'static str {
        "MPFB rig JSON (rig.*.json, v100/v110); --weights joins weights.*.json, --mesh places bones on base.obj"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["json"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        sniff_rig(head)
    }
    fn structural(&self) -> &'static [&'static str] {
        // A bone whose `parent` names no bone: read as a root.
        &["mpfb.parent"]
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        Ok(read::read(input.bytes, &input.display_name(), opts, diag)?)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Ok(write::write(doc, opts, diag)?)
    }
    fn write_frame(&self) -> Option<skelport_ir::Frame> {
        Some(skelport_ir::Frame::BLENDER)
    }
    fn holds(&self) -> Holds {
        // Skins in the weights file beside the rig; no geometry (the base mesh is MakeHuman's);
        // bones as head, tail and roll, which give the orientation back; no scale.
        Holds { skins: true, any_skeleton: true, orientations: true, ..Holds::NOTHING }
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[
            InputKind { role: InputRole::Main, suite: "mpfb", fuzz_target: "mpfb_rig" },
            InputKind { role: InputRole::Weights, suite: "mpfb-weights", fuzz_target: "mpfb_weights" },
            InputKind { role: InputRole::Mesh, suite: "obj", fuzz_target: "obj" },
        ]
    }
    fn namespace(&self) -> Option<&'static str> {
        Some(NAMESPACE)
    }
    fn check_losses(&self, doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
        check_losses(doc, target, diag)
    }
    fn conventional_name(&self, stem: &str) -> Option<String> {
        // MPFB's own naming: rig.<name>.json beside weights.<name>.json.
        Some(format!("rig.{stem}.json"))
    }
    fn read_back(&self, output: &Output) -> ReadOptions {
        let weights = output.side_files.iter().find(|(name, _)| name.starts_with("weights."));
        ReadOptions { weights_data: weights.map(|(name, bytes)| InMemoryFile::new(name.clone(), bytes.as_slice())), ..Default::default() }
    }
}

/// What writing `doc` as another format loses of MPFB's rig data: placement strategies (anchors)
/// and the rig's own bone data (constraints, roll strategies) kept under the `mpfb` extension.
/// A target that keeps extras keeps them for skelport only (a note); any other drops them.
fn check_losses(doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
    if target.namespace() == Some(NAMESPACE) {
        return;
    }
    let name = target.name();
    let n = doc.skeletons.iter().flat_map(|s| &s.bones).filter(|b| b.anchors.is_some() || b.ext.raw(NAMESPACE).is_some()).count();
    if n > 0 && target.holds().extras {
        diag.info(
            "mpfb.extras-only",
            format!(
                "{n} bone(s) carry MPFB placement strategies/constraints: kept only as skelport extras in {name}; other tools ignore them"
            ),
        );
    } else if n > 0 {
        diag.loss(
            "mpfb.rig-data",
            format!("{n} bone(s) carry MPFB placement strategies/constraints, which {name} cannot store: dropped (the rig will not refit to other bodies)"),
        );
    }
}
