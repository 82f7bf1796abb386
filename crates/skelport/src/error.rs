//! The error every fallible function of this crate returns.

use skelport_ir::Diagnostics;
use std::fmt;

/// A stable, machine-readable kind of [`Error`] (`Error::code().as_str()`), for scripts and the
/// JSON reports: the message may be reworded, the code stays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorCode {
    /// No registered format has the name given (`--from`, `--to`).
    UnknownFormat,
    /// The format named cannot read (or cannot write) files.
    Unsupported,
    /// The format of an input could not be told from its name or its content.
    Undetected,
    /// An input (or a file it names) could not be opened or read, or is over a size limit.
    Input,
    /// The reader refused the file: the message names the place in it.
    Read,
    /// The document breaks the IR's rules (`skelport_ir::validate`).
    Invalid,
    /// A retarget map is unknown, broken or does not fit the document.
    Map,
    /// The target's writer refused the document.
    Write,
    /// `strict` was set and the conversion loses something.
    Strict,
    /// An output could not be written.
    Output,
    /// A file is of another kind than where it was given (an MPFB weights file as the rig, an
    /// OBJ as `--weights`): the message says where it goes.
    Kind,
    /// The conversion would leave the user without what they asked for (a whole skin, or most
    /// of its weights, dropped) and `allow_loss` was not set.
    Loss,
}

impl ErrorCode {
    /// The stable code: `format.unknown`, `format.unsupported`, `format.undetected`, `input`,
    /// `read`, `invalid`, `map`, `write`, `strict`, `output`, `input.kind`, `loss`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::UnknownFormat => "format.unknown",
            ErrorCode::Unsupported => "format.unsupported",
            ErrorCode::Undetected => "format.undetected",
            ErrorCode::Input => "input",
            ErrorCode::Read => "read",
            ErrorCode::Invalid => "invalid",
            ErrorCode::Map => "map",
            ErrorCode::Write => "write",
            ErrorCode::Strict => "strict",
            ErrorCode::Output => "output",
            ErrorCode::Kind => "input.kind",
            ErrorCode::Loss => "loss",
        }
    }
}

impl fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why reading, converting or saving failed. The message names the file, the place in it and
/// the fix (the CLI prints it after `error: `); [`Error::code`] says what kind of failure it is,
/// [`Error::file`] which file it is about, and [`Error::diagnostics`] holds what was reported
/// before it failed (a reader's warnings, a retarget map's losses), so a report can show them.
#[derive(Debug)]
pub struct Error {
    code: ErrorCode,
    file: Option<String>,
    message: String,
    diagnostics: Diagnostics,
    format: Option<&'static str>,
}

impl Error {
    /// An error of kind `code` about `file` (as named: a path, `-`, or an in-memory name).
    pub fn new(code: ErrorCode, file: Option<&str>, message: impl Into<String>) -> Self {
        Error { code, file: file.map(str::to_owned), message: message.into(), diagnostics: Diagnostics::default(), format: None }
    }
    /// The same error, saying which format the input was told to be (kept when reading failed).
    pub fn with_format(mut self, format: &'static str) -> Self {
        self.format = Some(format);
        self
    }
    /// The format the input was detected (or named) as, when it got that far, even if reading
    /// it then failed.
    pub fn format(&self) -> Option<&'static str> {
        self.format
    }
    /// An error of kind `code` from an `anyhow` chain, its contexts joined as `{:#}` prints them.
    pub(crate) fn from_chain(code: ErrorCode, file: Option<&str>, e: &anyhow::Error) -> Self {
        Error::new(code, file, format!("{e:#}"))
    }
    /// The same error carrying the diagnostics reported before it.
    pub fn with_diagnostics(mut self, diagnostics: Diagnostics) -> Self {
        self.diagnostics = diagnostics;
        self
    }
    /// What kind of failure this is.
    pub fn code(&self) -> ErrorCode {
        self.code
    }
    /// The file the error is about, as it was named, when there is one.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
    /// The whole message (what is wrong, where, and what to do).
    pub fn message(&self) -> &str {
        &self.message
    }
    /// What was reported before the failure.
    pub fn diagnostics(&self) -> &Diagnostics {
        &self.diagnostics
    }
    /// Take the diagnostics out (for a report that lists them).
    pub fn take_diagnostics(&mut self) -> Diagnostics {
        std::mem::take(&mut self.diagnostics)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
