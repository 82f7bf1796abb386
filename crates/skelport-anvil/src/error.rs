//! The crate's error type: every variant names the file, and those about a place in it carry the
//! line and column.

/// Errors reading, editing, merging or writing AnvilToolkit skeleton XML.
#[derive(Debug, thiserror::Error)]
pub enum AnvilError {
    /// The bytes are not valid UTF-8 / UTF-16.
    #[error("{file}: byte {offset}: {message}")]
    Encoding {
        /// File name for messages.
        file: String,
        /// Byte offset of the problem.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// The text is not well-formed XML.
    #[error("{file}:{line}:{column}: malformed XML: {message}")]
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
    #[error("{file}:{line}:{column}: {message}")]
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
    #[error("{file}:{line}:{column}: dangling link: {message}")]
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
    #[error("{file}: {message}")]
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
}

/// Result alias.
pub type Result<T, E = AnvilError> = std::result::Result<T, E>;
