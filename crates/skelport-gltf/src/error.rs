//! The crate's error type: every error names where in the file it happened (a JSON pointer such
//! as `/skins/0/joints/3`, a JSON line/column, or a byte offset) and what to do about it.

use skelport_ir::{Fault, FaultKind, FormatError, Place};
use thiserror::Error;

/// An error reading or writing glTF.
#[derive(Debug, Error)]
pub enum GltfError {
    /// The JSON does not parse (`data` false) or does not match the glTF schema (`data` true).
    #[error("{}", FormatError::of(self))]
    Json { file: String, line: usize, column: usize, message: String, data: bool },
    /// The GLB container is malformed (at `offset`, when the header check found it).
    #[error("{}", FormatError::of(self))]
    Glb { file: String, offset: Option<usize>, message: String },
    /// A rule of glTF is broken (the validator would report an error); `kind` says which kind.
    #[error("{}", FormatError::of(self))]
    Invalid { file: String, pointer: String, message: String, kind: FaultKind },
    /// A buffer could not be loaded.
    #[error("{}", FormatError::of(self))]
    Buffer { file: String, pointer: String, message: String },
    /// The file asks for more memory than the decode budget allows (see `skelport_ir::budget`).
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
    /// The document cannot be written as glTF.
    #[error("cannot write glTF: {0}")]
    Write(String),
}

impl GltfError {
    /// A value that breaks a rule of glTF (its type, its range), at `pointer`.
    pub(crate) fn invalid(file: &str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        GltfError::of(FaultKind::Value, file, pointer, message)
    }
    /// A fault of `kind` at `pointer`: [`FaultKind::Reference`] for an index naming nothing,
    /// [`FaultKind::Structure`] for items that do not fit together.
    pub(crate) fn of(kind: FaultKind, file: &str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        GltfError::Invalid { file: file.to_owned(), pointer: pointer.into(), message: message.into(), kind }
    }
}

impl Fault for GltfError {
    fn file(&self) -> Option<&str> {
        match self {
            GltfError::Json { file, .. }
            | GltfError::Glb { file, .. }
            | GltfError::Invalid { file, .. }
            | GltfError::Buffer { file, .. } => Some(file),
            GltfError::Budget(e) => e.file(),
            GltfError::Write(_) => None,
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            GltfError::Json { line, column, .. } => Some(Place::text(*line, *column)),
            GltfError::Glb { offset, .. } => offset.map(|o| Place::Byte(o as u64)),
            GltfError::Invalid { pointer, .. } | GltfError::Buffer { pointer, .. } => Some(Place::Path(pointer.clone())),
            GltfError::Budget(e) => e.place(),
            GltfError::Write(_) => None,
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            // Well-formed JSON of the wrong shape is a value to fix, not damaged text.
            GltfError::Json { data: true, .. } => FaultKind::Value,
            GltfError::Json { .. } => FaultKind::Syntax,
            GltfError::Glb { .. } => FaultKind::Container,
            GltfError::Invalid { kind, .. } => *kind,
            GltfError::Buffer { .. } => FaultKind::Buffer,
            GltfError::Budget(e) => e.kind(),
            GltfError::Write(_) => FaultKind::Write,
        }
    }
    fn what(&self) -> String {
        match self {
            GltfError::Json { message, .. } => format!("invalid glTF JSON: {message}"),
            GltfError::Glb { message, .. } => format!("invalid GLB container: {message}"),
            GltfError::Invalid { message, .. } => message.clone(),
            GltfError::Buffer { message, .. } => format!("cannot load buffer: {message}"),
            GltfError::Budget(e) => e.what(),
            GltfError::Write(m) => format!("cannot write glTF: {m}"),
        }
    }
}
