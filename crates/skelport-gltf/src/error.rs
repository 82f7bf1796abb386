//! The crate's error type: every error names where in the file it happened (a JSON pointer such
//! as `/skins/0/joints/3`, a JSON line/column, or a byte offset) and what to do about it.

use thiserror::Error;

/// An error reading or writing glTF.
#[derive(Debug, Error)]
pub enum GltfError {
    /// The JSON does not parse or does not match the glTF schema.
    #[error("{file}: invalid glTF JSON at line {line}, column {column}: {}", skelport_ir::with_hint(.message, "the file is cut short or damaged there: fix it or export it again"))]
    Json { file: String, line: usize, column: usize, message: String },
    /// The GLB container is malformed.
    #[error("{file}: invalid GLB container: {}", skelport_ir::with_hint(.message, "the file is damaged or cut short: export it again"))]
    Glb { file: String, message: String },
    /// A structural rule of glTF is broken (the validator would report an error).
    #[error("{file}: {pointer}: {}", skelport_ir::with_hint(.message, "fix that value (an index must name an existing item) or export the file again"))]
    Invalid { file: String, pointer: String, message: String },
    /// A buffer could not be loaded.
    #[error("{file}: {pointer}: cannot load buffer: {}", skelport_ir::with_hint(.message, "fix the uri (a data: URI must be valid base64; a file must sit next to the .gltf)"))]
    Buffer { file: String, pointer: String, message: String },
    /// The file asks for more memory than the decode budget allows (see `skelport_ir::budget`).
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
    /// The document cannot be written as glTF.
    #[error("cannot write glTF: {0}")]
    Write(String),
}

impl GltfError {
    pub(crate) fn invalid(file: &str, pointer: impl Into<String>, message: impl Into<String>) -> Self {
        GltfError::Invalid { file: file.to_owned(), pointer: pointer.into(), message: message.into() }
    }
}
