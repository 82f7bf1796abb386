//! # skelport-g4mf — G4MF skeletons, bones and skins
//!
//! G4MF (godot-dimensions/g4mf, Aaron Franke's draft "Good 4D Model Format") stores nodes with
//! `skeleton` and `bone` components and meshes with a sparse `skin` (vertex, group, weight
//! triplets). This crate reads and writes `.g4tf` (JSON) and `.g4b` (binary container), in 3D.
//!
//! * [`container`] — the `.g4b` chunk container (with Zstd chunks).
//! * [`accessor`] — typed accessors (every float, int and uint width the spec names).
//! * [`read`] and [`write`](mod@write) — the mapping to and from the IR.
//!
//! Frame: right-handed, +Y up, characters face +Z, metres (glTF's). Bones point along local +Y.
//! G4MF has no inverse bind matrices: the stored pose *is* the bind pose; the writer stores the
//! bind pose and reports a loss when the IR's rest pose differs.
//!
//! Normals and texture coordinates are surface bindings (`normals`, `textureMap`): values plus a
//! `simplexes` accessor indexing them per triangle corner, so per-corner data needs no vertex
//! split. A surface without `normals` is flat-shaded (the spec's default): the writer computes
//! smooth normals for a mesh without any, the reader gives such a surface flat per-corner
//! normals. Texture `y` runs down (as glTF's); the IR's `v` runs up, so both flip it.

#![forbid(unsafe_code)]

pub mod accessor;
pub mod container;
pub mod read;
pub mod write;

use skelport_ir::{
    Diagnostics, Document, Fault, FaultKind, Format, FormatError, Holds, Input, InputKind, InputRole, Output, Place, ReadOptions,
    WriteOptions,
};

/// Errors reading or writing G4MF, with the place in the file.
#[derive(Debug, thiserror::Error)]
pub enum G4mfError {
    /// The JSON (of a `.g4tf`, or of a `.g4b`'s JSON chunk: `part`) does not parse.
    #[error("{}", FormatError::of(self))]
    Syntax { file: String, part: Option<&'static str>, line: usize, column: usize, message: String },
    /// A value at `path` breaks a rule of G4MF; `kind` says which kind.
    #[error("{}", FormatError::of(self))]
    Json { file: String, path: String, message: String, kind: FaultKind },
    /// The bytes at `offset`: a damaged container ([`FaultKind::Container`]) or text that is not
    /// UTF-8 ([`FaultKind::Encoding`]).
    #[error("{}", FormatError::of(self))]
    Binary { file: String, offset: usize, message: String, kind: FaultKind },
    /// Something of G4MF that skelport does not read.
    #[error("{}", FormatError::of(self))]
    Unsupported { file: String, message: String },
    /// The file asks for more memory than the decode budget allows (see `skelport_ir::budget`).
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
    #[error("cannot write G4MF: {0}")]
    Write(String),
}

impl Fault for G4mfError {
    fn file(&self) -> Option<&str> {
        match self {
            G4mfError::Syntax { file, .. }
            | G4mfError::Json { file, .. }
            | G4mfError::Binary { file, .. }
            | G4mfError::Unsupported { file, .. } => Some(file),
            G4mfError::Budget(e) => e.file(),
            G4mfError::Write(_) => None,
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            G4mfError::Syntax { part: None, line, column, .. } => Some(Place::text(*line, *column)),
            G4mfError::Syntax { part: Some(part), line, column, .. } => {
                Some(Place::In { part: (*part).to_owned(), place: Box::new(Place::text(*line, *column)) })
            }
            G4mfError::Json { path, .. } => Some(Place::Path(path.clone())),
            G4mfError::Binary { offset, .. } => Some(Place::Byte(*offset as u64)),
            G4mfError::Budget(e) => e.place(),
            G4mfError::Unsupported { .. } | G4mfError::Write(_) => None,
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            G4mfError::Syntax { .. } => FaultKind::Syntax,
            G4mfError::Json { kind, .. } | G4mfError::Binary { kind, .. } => *kind,
            G4mfError::Unsupported { .. } => FaultKind::Unsupported,
            G4mfError::Budget(e) => e.kind(),
            G4mfError::Write(_) => FaultKind::Write,
        }
    }
    fn what(&self) -> String {
        match self {
            G4mfError::Syntax { message, .. } => format!("not valid JSON: {message}"),
            G4mfError::Json { message, .. } | G4mfError::Binary { message, .. } | G4mfError::Unsupported { message, .. } => message.clone(),
            G4mfError::Budget(e) => e.what(),
            G4mfError::Write(m) => format!("cannot write G4MF: {m}"),
        }
    }
}

/// `.g4tf`: G4MF as UTF-8 JSON.
pub struct G4tfFormat;
/// `.g4b`: G4MF in its binary container.
pub struct G4bFormat;

fn sniff_json(head: &[u8]) -> u8 {
    let s = skelport_ir::format::head_text(&head[..head.len().min(4096)]);
    if !s.trim_start().starts_with('{') || !s.contains("\"asset\"") {
        return 0;
    }
    if s.contains("\"dimension\"") {
        90
    } else {
        0
    }
}

/// What G4MF text and binary hold (the same model in two containers); a skin is bound at rest
/// (the writer reports a bind pose as a loss).
const HOLDS: Holds = Holds { bind_pose: false, ..Holds::EVERYTHING };

/// The reader's diagnostic codes for a file that breaks a rule of the G4MF specification
/// (SPEC-NOTES.md) the reader goes past: `validate` calls such a file invalid.
pub const STRUCTURAL: &[&str] = &[
    read::STRUCTURE,
    "g4mf.bom",
    "g4mf.root-transform",
    "g4mf.empty-children",
    "g4mf.name",
    "g4mf.joint",
    "g4mf.joint-order",
    "g4mf.skin-order",
    "g4mf.group-names",
];

impl Format for G4tfFormat {
    fn name(&self) -> &'static str {
        "g4tf"
    }
    fn description(&self) -> &'static str {
        "G4MF text (.g4tf): skeleton and bone nodes, skinned meshes"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["g4tf"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        sniff_json(head)
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        if input.bytes.starts_with(container::MAGIC) {
            return Ok(read::read_binary(input, opts, diag)?);
        }
        Ok(read::read_text(input, opts, diag)?)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Ok(write::write(doc, opts, false, diag)?)
    }
    fn structural(&self) -> &'static [&'static str] {
        STRUCTURAL
    }
    fn fuzz_side_file(&self, demo: &Document) -> Option<Vec<u8>> {
        blob_of(demo)
    }
    fn write_frame(&self) -> Option<skelport_ir::Frame> {
        Some(skelport_ir::Frame::GLTF)
    }
    fn holds(&self) -> Holds {
        HOLDS
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[InputKind { role: InputRole::Main, suite: "g4tf", fuzz_target: "g4tf" }]
    }
    fn namespace(&self) -> Option<&'static str> {
        Some(read::NAMESPACE)
    }
    fn check_losses(&self, doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
        check_losses(doc, target, diag)
    }
}

impl Format for G4bFormat {
    fn name(&self) -> &'static str {
        "g4b"
    }
    fn description(&self) -> &'static str {
        "G4MF binary (.g4b): skeleton and bone nodes, skinned meshes"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["g4b"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        if head.starts_with(container::MAGIC) {
            100
        } else {
            0
        }
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        if !input.bytes.starts_with(container::MAGIC) && input.bytes.first() == Some(&b'{') {
            return Ok(read::read_text(input, opts, diag)?);
        }
        Ok(read::read_binary(input, opts, diag)?)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Ok(write::write(doc, opts, true, diag)?)
    }
    fn structural(&self) -> &'static [&'static str] {
        STRUCTURAL
    }
    fn fuzz_side_file(&self, demo: &Document) -> Option<Vec<u8>> {
        blob_of(demo)
    }
    fn write_frame(&self) -> Option<skelport_ir::Frame> {
        Some(skelport_ir::Frame::GLTF)
    }
    fn holds(&self) -> Holds {
        HOLDS
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[InputKind { role: InputRole::Main, suite: "g4b", fuzz_target: "g4b" }]
    }
    fn namespace(&self) -> Option<&'static str> {
        Some(read::NAMESPACE)
    }
    fn check_losses(&self, doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
        check_losses(doc, target, diag)
    }
}

/// What writing `doc` as G4MF loses of its bone names: the characters G4MF forbids, which the
/// writer replaces with '_' (the original is kept in skelport extras).
fn check_losses(doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
    if target.namespace() != Some(read::NAMESPACE) {
        return;
    }
    let bad: Vec<&str> = doc.skeletons.iter().flat_map(|s| &s.bones).map(|b| b.name.as_str()).filter(|n| !name_is_legal(n)).collect();
    if !bad.is_empty() {
        diag.loss(
            "g4mf.names",
            format!(
                "{} bone name(s) have characters G4MF forbids (e.g. {}): written with '_' instead (the original is kept in skelport extras)",
                bad.len(),
                bad.iter().take(5).copied().collect::<Vec<_>>().join(", ")
            ),
        );
    }
}

/// Characters G4MF forbids in names.
pub const FORBIDDEN_NAME_CHARS: &[char] = &['"', '#', '*', '.', ':', '|', '?', '@', '<', '>', '{', '}', '[', ']', '/', '\\', '%'];

/// Whether a name is legal in G4MF.
pub fn name_is_legal(name: &str) -> bool {
    !name.chars().any(|c| FORBIDDEN_NAME_CHARS.contains(&c) || c.is_control())
}

/// 3D rotor `[s, xy, xz, yz]` from a glTF-style quaternion (x, y, z, w): `[w, z, -y, x]`.
pub fn rotor_from_quat(q: skelport_ir::DQuat) -> [f64; 4] {
    [q.w, q.z, -q.y, q.x]
}

/// Quaternion (x, y, z, w) from a 3D rotor `[s, xy, xz, yz]`: `(yz, -xz, xy, s)`.
pub fn quat_from_rotor(r: [f64; 4]) -> skelport_ir::DQuat {
    skelport_ir::DQuat::from_xyzw(r[3], -r[2], r[1], r[0])
}

/// The bytes of `demo`'s G4MF buffer (the binary file's BLOB chunk): a side file a `uri` may name.
fn blob_of(demo: &Document) -> Option<Vec<u8>> {
    let out = write::write(demo, &WriteOptions::default(), true, &mut Diagnostics::default()).ok()?;
    let chunks = container::read(&out.main, "demo").ok()?;
    chunks.into_iter().find(|c| c.kind == container::BLOB).map(|c| c.data)
}

#[cfg(test)]
mod tests {
    use super::*;
    use skelport_ir::{DQuat, DVec3};

    /// Rotor → matrix, as the reference implementation defines it for 3D: the rotor
    /// [cos θ/2, sin θ/2, 0, 0] (xy plane) turns +X toward +Y.
    fn rotor_rotate(r: [f64; 4], v: DVec3) -> DVec3 {
        // Sandwich product R v R~ in the even subalgebra of Cl(3,0), written out.
        let (s, xy, xz, yz) = (r[0], r[1], r[2], r[3]);
        // Equivalent quaternion through the bivector duality e_yz ↔ i, e_zx ↔ j, e_xy ↔ k,
        // derived independently here from the plane-rotation definition: rotation in the xy plane
        // by θ is about +Z.
        let q = DQuat::from_xyzw(yz, -xz, xy, s);
        q * v
    }

    #[test]
    fn rotor_and_quaternion_rotate_vectors_alike_both_ways() {
        // Quarter turn in the xy plane: +X → +Y (right-handed about +Z).
        let half = std::f64::consts::FRAC_PI_4;
        let r = [half.cos(), half.sin(), 0.0, 0.0];
        assert!((rotor_rotate(r, DVec3::X) - DVec3::Y).length() < 1e-12);
        for q in
            [DQuat::from_rotation_x(0.3), DQuat::from_rotation_y(-1.1), DQuat::from_axis_angle(DVec3::new(1.0, 2.0, -0.5).normalize(), 2.0)]
        {
            let r = rotor_from_quat(q);
            for v in [DVec3::X, DVec3::Y, DVec3::Z, DVec3::new(0.3, -0.7, 1.9)] {
                assert!((rotor_rotate(r, v) - q * v).length() < 1e-12);
                assert!((quat_from_rotor(r) * v - q * v).length() < 1e-12);
            }
        }
        // The plane reading: xz rotor [c, 0, s, 0] turns +X toward +Z, i.e. about -Y.
        let r = [half.cos(), 0.0, half.sin(), 0.0];
        assert!((quat_from_rotor(r) * DVec3::X - DVec3::Z).length() < 1e-12);
    }

    #[test]
    fn names() {
        assert!(name_is_legal("Hips"));
        assert!(!name_is_legal("upperarm01.L"));
        assert!(!name_is_legal("mixamorig:Hips"));
    }
}
