//! The crate's error type: every variant names the file and, where known, the line and column.

/// Errors reading or writing SL files.
#[derive(Debug, thiserror::Error)]
pub enum SlError {
    /// The XML itself is malformed.
    #[error("{file}:{line}:{column}: XML error: {}", skelport_ir::with_hint(.message, "fix the XML there or export the file again"))]
    Xml { file: String, line: usize, column: usize, message: String },
    /// Well-formed XML whose content is not usable; `line` 0 means the file as a whole.
    #[error("{file}{}: {}", if *.line > 0 { format!(":{}:{}", .line, .column) } else { String::new() }, skelport_ir::with_hint(.message, "fix it there or export the file again"))]
    Invalid { file: String, line: usize, column: usize, message: String },
    /// The document cannot be written as an SL-importable file; the message says what to do.
    #[error("cannot write an SL Collada file: {message}")]
    Write { message: String },
    /// The file asks for more memory than the decode budget allows (a `.zae` whose `.dae`
    /// inflates far beyond the archive).
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
}

impl SlError {
    pub(crate) fn xml(file: &str, e: &roxmltree::Error) -> Self {
        let p = e.pos();
        SlError::Xml { file: file.into(), line: p.row as usize, column: p.col as usize, message: e.to_string() }
    }
    pub(crate) fn invalid(file: &str, line: usize, column: usize, message: impl Into<String>) -> Self {
        SlError::Invalid { file: file.into(), line, column, message: message.into() }
    }
    pub(crate) fn write(message: impl Into<String>) -> Self {
        SlError::Write { message: message.into() }
    }
}
