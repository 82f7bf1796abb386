//! The crate's error type: every variant names the file and, where known, the line and column.

use skelport_ir::{Fault, FaultKind, FormatError, Place};

/// Errors reading or writing SL files.
#[derive(Debug, thiserror::Error)]
pub enum SlError {
    /// The XML itself is malformed.
    #[error("{}", FormatError::of(self))]
    Xml { file: String, line: usize, column: usize, message: String },
    /// Well-formed XML whose content is not usable; `line` 0 means the file as a whole. `kind`
    /// chooses the hint: [`FaultKind::Structure`] unless the error says otherwise
    /// (a bad value, a reference to nothing).
    #[error("{}", FormatError::of(self))]
    Invalid { file: String, line: usize, column: usize, kind: FaultKind, message: String },
    /// Bytes that are not the text the file must be, from `offset`.
    #[error("{}", FormatError::of(self))]
    Encoding { file: String, offset: usize, message: String },
    /// The document cannot be written as an SL-importable file; the message says what to do.
    #[error("cannot write an SL Collada file: {message}")]
    Write { message: String },
    /// The file asks for more memory than the decode budget allows (a `.zae` whose `.dae`
    /// inflates far beyond the archive).
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
}

impl Fault for SlError {
    fn file(&self) -> Option<&str> {
        match self {
            SlError::Xml { file, .. } | SlError::Invalid { file, .. } | SlError::Encoding { file, .. } => Some(file),
            SlError::Write { .. } => None,
            SlError::Budget(e) => e.file(),
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            SlError::Xml { line, column, .. } => Some(Place::text(*line, *column)),
            SlError::Invalid { line: 0, .. } | SlError::Write { .. } => None,
            SlError::Invalid { line, column, .. } => Some(Place::text(*line, *column)),
            SlError::Encoding { offset, .. } => Some(Place::Byte(*offset as u64)),
            SlError::Budget(e) => e.place(),
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            SlError::Xml { .. } => FaultKind::Syntax,
            SlError::Invalid { kind, .. } => *kind,
            SlError::Encoding { .. } => FaultKind::Encoding,
            SlError::Write { .. } => FaultKind::Write,
            SlError::Budget(e) => e.kind(),
        }
    }
    fn what(&self) -> String {
        match self {
            SlError::Xml { message, .. } => format!("XML error: {message}"),
            SlError::Invalid { message, .. } | SlError::Encoding { message, .. } => message.clone(),
            SlError::Write { message } => format!("cannot write an SL Collada file: {message}"),
            SlError::Budget(e) => e.what(),
        }
    }
    fn fix(&self) -> Option<String> {
        matches!(self, SlError::Xml { .. }).then(|| "fix the XML there or export the file again".into())
    }
}

impl SlError {
    pub(crate) fn xml(file: &str, e: &roxmltree::Error) -> Self {
        let p = e.pos();
        SlError::Xml { file: file.into(), line: p.row as usize, column: p.col as usize, message: e.to_string() }
    }
    pub(crate) fn invalid(file: &str, line: usize, column: usize, message: impl Into<String>) -> Self {
        SlError::Invalid { file: file.into(), line, column, kind: FaultKind::Structure, message: message.into() }
    }
    /// The same error, of `kind` (a bad value, a reference to nothing) rather than a structure
    /// that does not fit; other variants keep theirs.
    pub(crate) fn with_kind(mut self, new: FaultKind) -> Self {
        if let SlError::Invalid { kind, .. } = &mut self {
            *kind = new;
        }
        self
    }
    pub(crate) fn encoding(file: &str, offset: usize, message: impl Into<String>) -> Self {
        SlError::Encoding { file: file.into(), offset, message: message.into() }
    }
    pub(crate) fn write(message: impl Into<String>) -> Self {
        SlError::Write { message: message.into() }
    }
}
