//! The crate's error type: every variant names the file, and those about a place in it carry the
//! line and column.

/// Errors reading, editing, merging or writing AnvilToolkit skeleton XML.
#[derive(Debug, thiserror::Error)]
pub enum AnvilError {
    /// The bytes are not valid UTF-8 / UTF-16.
    #[error("{file}: byte {offset}: {}", skelport_ir::with_hint(.message, "save the file as UTF-16 with a byte-order mark (Standard form) or UTF-8 (Schema-Based), as AnvilToolkit exports it"))]
    Encoding {
        /// File name for messages.
        file: String,
        /// Byte offset of the problem.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// The text is not well-formed XML.
    #[error("{file}:{line}:{column}: malformed XML: {}", skelport_ir::with_hint(.message, "fix the XML there or export the file from AnvilToolkit again"))]
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
    #[error("{file}:{line}:{column}: {}", skelport_ir::with_hint(.message, "fix it there or export the file from AnvilToolkit again"))]
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
    #[error("{file}:{line}:{column}: dangling link: {}", skelport_ir::with_hint(.message, "point it at the ID of an object in the file, or make it a null pointer"))]
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
    #[error("{file}: {}", skelport_ir::with_hint(.message, "fix the bones' IDs and FatherBone links"))]
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

/// Result alias.
pub type Result<T, E = AnvilError> = std::result::Result<T, E>;
