//! # skelport-mhskel — MakeHuman 1.x skeletons (`.mhskel`) and weights (`.mhw`)
//!
//! The standalone MakeHuman application (1.1, 1.2) keeps its rigs as `data/rigs/<name>.mhskel`:
//! JSON whose bones name a head joint and a tail joint, each joint a list of base-mesh vertex
//! indices whose mean places it, and whose `rotation_plane` names a plane of three joints whose
//! normal gives the bone's local X axis. The skin weights are in the `.mhw` file the rig names
//! (`weights_file`, MakeHuman writes `<name>_weights.mhw`) beside it, numbering the vertices of
//! the base mesh `data/3dobjs/base.obj`. This crate places joints and orients bones as
//! MakeHuman 1.x does (its `shared/skeleton.py`; see [`place`]), and writes `.mhskel` + `.mhw`
//! from any rig, fitting joints on a base mesh as MPFB's rig save picks strategies
//! ([`mod@write`]).
//!
//! Frame: MakeHuman's own, [`FRAME`] (+Y up, characters face +Z, right-handed, decimetres: the
//! base mesh's unit), so positions are MakeHuman's numbers.

#![forbid(unsafe_code)]

pub mod derive;
pub mod place;
pub mod read;
pub mod write;

use skelport_ir::{
    Axis, Diagnostics, Document, Fault, FaultKind, Format, FormatError, Frame, Handedness, Holds, InMemoryFile, Input, InputKind,
    InputRole, Output, Place, ReadOptions, WriteOptions,
};

/// The format's name, as `--from`/`--to` take it.
pub const NAME: &str = "mhskel";

/// The extension namespace of this format: the joints, planes and header of a rig read from a
/// `.mhskel` (skeleton), each bone's own definition (bone), and the base-mesh numbering of a
/// mesh read with it (mesh).
pub const NAMESPACE: &str = NAME;

/// MakeHuman 1.x's coordinates: +Y up, the character faces +Z, right-handed, and one unit is a
/// decimetre (the base mesh is 16.6 units tall for a 1.66 m human).
pub const FRAME: Frame = Frame { up: Axis::PosY, forward: Axis::PosZ, handedness: Handedness::Right, metres_per_unit: 0.1 };

/// The top-level key under which skelport keeps the positions of joints no base-mesh vertex
/// places (written without a base mesh, or off the body). MakeHuman ignores the key.
pub const POSITIONS_KEY: &str = "skelport_positions";

/// Errors reading or writing `.mhskel` / `.mhw` files, with the place.
#[derive(Debug, thiserror::Error)]
pub enum MhskelError {
    /// The JSON does not parse (or a `.mhw` does not have its shape), at a line and column.
    #[error("{}", FormatError::of(self))]
    Syntax { file: String, line: usize, column: usize, message: String },
    /// A value of the rig breaks the format's rules, at a JSONPath (`$.bones.root.head`).
    #[error("{}", FormatError::of(self))]
    Json { file: String, path: String, message: String },
    /// A file the rig needs (its mesh, its weights) cannot be used; `place` is the element that
    /// needs it, when one does.
    #[error("{}", FormatError::of(self))]
    File { file: String, place: Option<String>, message: String },
    /// The base mesh (OBJ) does not parse.
    #[error("{0}")]
    Obj(#[from] skelport_obj::ObjError),
    /// The conversion's decode budget would be exceeded.
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
    /// The document cannot be written as a MakeHuman skeleton.
    #[error("cannot write a MakeHuman skeleton: {0}")]
    Write(String),
}

impl Fault for MhskelError {
    fn file(&self) -> Option<&str> {
        match self {
            MhskelError::Syntax { file, .. } | MhskelError::Json { file, .. } | MhskelError::File { file, .. } => Some(file),
            MhskelError::Obj(e) => e.file(),
            MhskelError::Budget(e) => e.file(),
            MhskelError::Write(_) => None,
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            MhskelError::Syntax { line, column, .. } => Some(Place::text(*line, *column)),
            MhskelError::Json { path, .. } => Some(Place::Path(path.clone())),
            MhskelError::File { place, .. } => place.clone().map(Place::Path),
            MhskelError::Obj(e) => e.place(),
            MhskelError::Budget(e) => e.place(),
            MhskelError::Write(_) => None,
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            MhskelError::Syntax { .. } => FaultKind::Syntax,
            MhskelError::Json { .. } => FaultKind::Value,
            // Its message says which file to give and how.
            MhskelError::File { .. } => FaultKind::Other,
            MhskelError::Obj(e) => e.kind(),
            MhskelError::Budget(e) => e.kind(),
            MhskelError::Write(_) => FaultKind::Write,
        }
    }
    fn what(&self) -> String {
        match self {
            MhskelError::Syntax { message, .. } => format!("not valid JSON: {message}"),
            MhskelError::Json { message, .. } | MhskelError::File { message, .. } => message.clone(),
            MhskelError::Obj(e) => e.what(),
            MhskelError::Budget(e) => e.what(),
            MhskelError::Write(m) => format!("cannot write a MakeHuman skeleton: {m}"),
        }
    }
    fn fix(&self) -> Option<String> {
        match self {
            MhskelError::Syntax { .. } => Some("fix the JSON there".into()),
            MhskelError::Json { .. } => Some("fix that value (the format is in docs/formats/mhskel.md)".into()),
            MhskelError::Obj(e) => e.fix(),
            _ => None,
        }
    }
}

/// Is this a MakeHuman 1.x skeleton? A JSON object with `bones` whose `head` names a joint (a
/// string), not an MPFB strategy object.
pub fn sniff(head: &[u8]) -> u8 {
    let s = skelport_ir::format::head_text(&head[..head.len().min(8192)]);
    let t = s.trim_start_matches('\u{feff}').trim_start();
    if !t.starts_with('{') || t.contains("\"strategy\"") || t.contains("\"skelport_ir\"") || !t.contains("\"bones\"") {
        return 0;
    }
    let names_joint = |key: &str| {
        t.match_indices(key).any(|(at, _)| {
            let rest = t[at + key.len()..].trim_start();
            rest.strip_prefix(':').is_some_and(|r| r.trim_start().starts_with('"'))
        })
    };
    if names_joint("\"head\"") && names_joint("\"tail\"") {
        95
    } else {
        0
    }
}

/// MakeHuman 1.x skeleton (`.mhskel`), with its `.mhw` weights and the base mesh.
pub struct MhskelFormat;

impl Format for MhskelFormat {
    fn name(&self) -> &'static str {
        NAME
    }
    fn description(&self) -> &'static str {
        "MakeHuman 1.x skeleton (.mhskel): joints on base.obj (found as data/3dobjs/base.obj, or --mesh), weights from the .mhw it names"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["mhskel"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        sniff(head)
    }
    fn structural(&self) -> &'static [&'static str] {
        // A bone whose parent names no bone (MakeHuman leaves it and its children out).
        &["mhskel.parent"]
    }
    fn mesh_hint(&self) -> Option<&'static str> {
        Some("give MakeHuman's base mesh with --mesh (data/3dobjs/base.obj of MakeHuman 1.x)")
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        Ok(read::read(input, opts, diag)?)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Ok(write::write(doc, opts, diag)?)
    }
    fn write_frame(&self) -> Option<Frame> {
        Some(FRAME)
    }
    fn holds(&self) -> Holds {
        // Weights in the .mhw beside the rig; no geometry (the base mesh is MakeHuman's); bones
        // as head, tail and a plane whose normal is the local X axis, which give the orientation
        // back; no scale.
        Holds { skins: true, any_skeleton: true, orientations: true, ..Holds::NOTHING }
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[
            InputKind { role: InputRole::Main, suite: "mhskel", fuzz_target: "mhskel" },
            InputKind { role: InputRole::Weights, suite: "mhw", fuzz_target: "mhw" },
        ]
    }
    fn namespace(&self) -> Option<&'static str> {
        Some(NAMESPACE)
    }
    fn check_losses(&self, doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
        check_losses(doc, target, diag)
    }
    fn read_back(&self, output: &Output) -> ReadOptions {
        let weights = output.side_files.iter().find(|(name, _)| name.ends_with(".mhw"));
        ReadOptions { weights_data: weights.map(|(name, bytes)| InMemoryFile::new(name.clone(), bytes.as_slice())), ..Default::default() }
    }
}

/// What writing `doc` as another format loses of a MakeHuman rig: the joints' base-mesh
/// vertices and the rotation planes, by which MakeHuman refits the rig to every body it makes.
fn check_losses(doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
    if target.namespace() == Some(NAMESPACE) {
        return;
    }
    let name = target.name();
    let n = doc.skeletons.iter().flat_map(|s| &s.bones).filter(|b| b.ext.raw(NAMESPACE).is_some()).count();
    if n > 0 && target.holds().extras {
        diag.info(
            "mhskel.extras-only",
            format!(
                "{n} bone(s) carry MakeHuman joint and plane definitions: kept only as skelport extras in {name}; other tools ignore them"
            ),
        );
    } else if n > 0 {
        diag.loss(
            "mhskel.rig-data",
            format!(
                "{n} bone(s) carry MakeHuman joint and plane definitions (base-mesh vertices), which {name} cannot store: dropped (the rig will not refit to other bodies)"
            ),
        );
    }
}
