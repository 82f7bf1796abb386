//! The crate's error type: every variant names the file, and those about a place in it carry the
//! line and column.

use skelport_ir::{Fault, FaultKind, FormatError, Place};

/// Errors reading, editing, merging or writing AnvilToolkit skeleton XML.
#[derive(Debug, thiserror::Error)]
pub enum AnvilError {
    /// The bytes are not valid UTF-8 / UTF-16.
    #[error("{}", FormatError::of(self))]
    Encoding {
        /// File name for messages.
        file: String,
        /// Byte offset of the problem.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// The text is not well-formed XML.
    #[error("{}", FormatError::of(self))]
    Syntax {
        /// File name for messages.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// Well-formed XML that is not a skeleton as AnvilToolkit writes it (a bad number, a bone
    /// without an ID …).
    #[error("{}", FormatError::of(self))]
    Structure {
        /// File name for messages.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// What is wrong.
        message: String,
    },
    /// A link to an ID no object in the file has.
    #[error("{}", FormatError::of(self))]
    DanglingLink {
        /// File name for messages.
        file: String,
        /// 1-based line.
        line: usize,
        /// 1-based column.
        column: usize,
        /// Which bone and field, and the ID.
        message: String,
    },
    /// A problem with the skeleton as a whole (a parent cycle, two bones with one name …).
    #[error("{}", FormatError::of(self))]
    Skeleton {
        /// File name for messages.
        file: String,
        /// What is wrong.
        message: String,
    },
    /// More bones than the form or the `--limit` allows.
    #[error("{0}")]
    Limit(String),
    /// An addon that cannot be merged as the engine would.
    #[error("merge: {0}")]
    Merge(String),
    /// A bone edit that cannot be done (unknown bone, name taken …).
    #[error("{0}")]
    Edit(String),
    /// Reading a side file (the `--names` list).
    #[error("{file}: {message}")]
    Io {
        /// File name for messages.
        file: String,
        /// What went wrong.
        message: String,
    },
    /// Something the writer cannot express.
    #[error("cannot write AnvilToolkit XML: {0}")]
    Write(String),
    /// The file asks for more memory than the decode budget allows.
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
}

impl Fault for AnvilError {
    fn file(&self) -> Option<&str> {
        match self {
            AnvilError::Encoding { file, .. }
            | AnvilError::Syntax { file, .. }
            | AnvilError::Structure { file, .. }
            | AnvilError::DanglingLink { file, .. }
            | AnvilError::Skeleton { file, .. }
            | AnvilError::Io { file, .. } => Some(file),
            AnvilError::Budget(e) => e.file(),
            AnvilError::Limit(_) | AnvilError::Merge(_) | AnvilError::Edit(_) | AnvilError::Write(_) => None,
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            AnvilError::Encoding { offset, .. } => Some(Place::Byte(*offset as u64)),
            AnvilError::Syntax { line, column, .. }
            | AnvilError::Structure { line, column, .. }
            | AnvilError::DanglingLink { line, column, .. } => Some(Place::text(*line, *column)),
            AnvilError::Budget(e) => e.place(),
            _ => None,
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            AnvilError::Encoding { .. } => FaultKind::Encoding,
            AnvilError::Syntax { .. } => FaultKind::Syntax,
            AnvilError::Structure { .. } => FaultKind::Value,
            AnvilError::DanglingLink { .. } => FaultKind::Reference,
            AnvilError::Skeleton { .. } => FaultKind::Structure,
            AnvilError::Write(_) => FaultKind::Write,
            AnvilError::Budget(e) => e.kind(),
            AnvilError::Limit(_) | AnvilError::Merge(_) | AnvilError::Edit(_) | AnvilError::Io { .. } => FaultKind::Other,
        }
    }
    fn what(&self) -> String {
        match self {
            AnvilError::Syntax { message, .. } => format!("malformed XML: {message}"),
            AnvilError::DanglingLink { message, .. } => format!("dangling link: {message}"),
            AnvilError::Encoding { message, .. }
            | AnvilError::Structure { message, .. }
            | AnvilError::Skeleton { message, .. }
            | AnvilError::Io { message, .. } => message.clone(),
            AnvilError::Budget(e) => e.what(),
            other => other.to_string(),
        }
    }
    fn fix(&self) -> Option<String> {
        // Each of these fixes fits every fault of its variant, and says more than the kind's.
        Some(
            match self {
                AnvilError::Encoding { .. } => {
                    "save the file as UTF-16 with a byte-order mark (Standard form) or UTF-8 (Schema-Based), as AnvilToolkit exports it"
                }
                AnvilError::Syntax { .. } => "fix the XML there or export the file from AnvilToolkit again",
                AnvilError::Structure { .. } => "fix it there or export the file from AnvilToolkit again",
                AnvilError::DanglingLink { .. } => "point it at the ID of an object in the file, or make it a null pointer",
                AnvilError::Skeleton { .. } => "fix the bones' IDs and FatherBone links",
                _ => return None,
            }
            .into(),
        )
    }
}

/// Result alias.
pub type Result<T, E = AnvilError> = std::result::Result<T, E>;
