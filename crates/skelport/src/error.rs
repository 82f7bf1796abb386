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
/// [`Error::file`] which file it is about, [`Error::place`] where in that file, and
/// [`Error::diagnostics`] holds what was reported before it failed (a reader's warnings, a
/// retarget map's losses), so a report can show them.
#[derive(Debug)]
pub struct Error {
    code: ErrorCode,
    file: Option<String>,
    place: Option<String>,
    message: String,
    diagnostics: Diagnostics,
    format: Option<&'static str>,
}

impl Error {
    /// An error of kind `code` about `file` (as named: a path, `-`, or an in-memory name).
    pub fn new(code: ErrorCode, file: Option<&str>, message: impl Into<String>) -> Self {
        Error {
            code,
            file: file.map(str::to_owned),
            place: None,
            message: message.into(),
            diagnostics: Diagnostics::default(),
            format: None,
        }
    }
    /// The same error about `file`, at `place` in it (`line 3, column 17`, `byte 40`,
    /// `/accessors/1`, `$.bones.calf_l`, `bone "x"`).
    pub fn at(mut self, file: Option<&str>, place: Option<&str>) -> Self {
        if let Some(f) = file {
            self.file = Some(f.to_owned());
        }
        self.place = place.map(str::to_owned);
        self
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
    /// The file the error is about, as it was named, when there is one: the input, or the mesh
    /// or weights file read with it when the fault is there.
    pub fn file(&self) -> Option<&str> {
        self.file.as_deref()
    }
    /// Where in [`Error::file`] the fault is, when the message names a place: `line 3, column
    /// 17`, `line 12`, `byte 40`, a JSON pointer or path (`/accessors/1/bufferView`,
    /// `$.bones.calf_l.head`, `accessors[0]`), an element (`bone "x"`), or, for a document that
    /// breaks the IR's rules, the first broken rule's place.
    pub fn place(&self) -> Option<&str> {
        self.place.as_deref()
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

/// Which of `files` a reader's error message is about, and the place in it the message names
/// after the file's name: every reader begins its errors with the file (the input, or the mesh
/// or weights read with it) and then, where it knows one, the place (`file:3:17: …`,
/// `file:12: …`, `file: byte 40: …`, `file: at $.bones.x: …`, `file: /accessors/1: …`,
/// `file: invalid glTF JSON at line 3, column 17: …`). `None` when the message begins with none
/// of the files.
pub(crate) fn locate<'a>(message: &str, files: &[&'a str]) -> Option<(&'a str, Option<String>)> {
    // The longest name that begins the message and is followed by ':' or by a part of the file
    // in parentheses (`a.g4b (JSON chunk):1:2`), not by more name (`a.json` vs `a.json.bak`).
    let file = files
        .iter()
        .copied()
        .filter(|f| !f.is_empty() && message.strip_prefix(f).is_some_and(|r| r.starts_with(':') || r.starts_with(" (")))
        .max_by_key(|f| f.len())?;
    let mut rest = &message[file.len()..];
    let mut part = None;
    if let Some((p, after)) = rest.strip_prefix(" (").and_then(|r| r.split_once(')')) {
        (part, rest) = (Some(p), after);
    }
    let place = locate_after(rest);
    Some((
        file,
        match (part, place) {
            (Some(p), Some(place)) => Some(format!("{p}, {place}")),
            (Some(p), None) => Some(p.to_owned()),
            (None, place) => place,
        },
    ))
}

/// The place at the head of `rest`, the message after its file's name.
fn locate_after(rest: &str) -> Option<String> {
    let number = |s: &str| -> Option<(String, usize)> {
        let n = s.bytes().take_while(u8::is_ascii_digit).count();
        (n > 0).then(|| (s[..n].to_owned(), n))
    };
    // `:L:C: ` or `:L: `
    if let Some((line, n)) = rest.strip_prefix(':').and_then(number) {
        let after = &rest[1 + n..];
        if let Some((col, m)) = after.strip_prefix(':').and_then(number) {
            if after[1 + m..].starts_with(':') {
                return Some(format!("line {line}, column {col}"));
            }
        }
        return after.starts_with(':').then(|| format!("line {line}"));
    }
    let rest = rest.strip_prefix(": ")?;
    for lead in ["byte ", "invalid GLB container: byte ", "not UTF-8 text at byte "] {
        if let Some((n, _)) = rest.strip_prefix(lead).and_then(number) {
            return Some(format!("byte {n}"));
        }
    }
    if let Some(r) = rest.strip_prefix("invalid glTF JSON at line ") {
        if let Some((line, n)) = number(r) {
            if let Some((col, _)) = r[n..].strip_prefix(", column ").and_then(number) {
                return Some(format!("line {line}, column {col}"));
            }
        }
    }
    if let Some(r) = rest.strip_prefix("at ") {
        if let Some((path, _)) = r.split_once(": ") {
            if !path.contains(char::is_whitespace) {
                return Some(path.to_owned());
            }
        }
    }
    skelport_ir::format::place_of(rest).map(str::to_owned)
}

/// `Result` with this crate's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::locate;

    #[test]
    fn places_after_the_file_name() {
        let files = ["rig.json", "weights.json", "base.obj"];
        let cases = [
            ("rig.json:2:12: not valid JSON: expected `:`", "rig.json", Some("line 2, column 12")),
            ("base.obj:3: v needs three finite numbers", "base.obj", Some("line 3")),
            ("weights.json:7:13: not valid JSON", "weights.json", Some("line 7, column 13")),
            ("rig.json: at $.bones.calf_l.head: missing or not an object", "rig.json", Some("$.bones.calf_l.head")),
            ("rig.json: byte 4: container version 1", "rig.json", Some("byte 4")),
            ("rig.json: invalid GLB container: byte 4: GLB version 99", "rig.json", Some("byte 4")),
            ("rig.json: not UTF-8 text at byte 4; avatar_skeleton.xml is ASCII", "rig.json", Some("byte 4")),
            ("rig.json: invalid glTF JSON at line 623, column 17: invalid value", "rig.json", Some("line 623, column 17")),
            ("rig.json: /accessors/1/bufferView: buffer view 999 does not exist", "rig.json", Some("/accessors/1/bufferView")),
            ("rig.json: the joint name \"mTorso\" is defined twice", "rig.json", None),
        ];
        for (message, file, place) in cases {
            let got = locate(message, &files);
            assert_eq!(got.as_ref().map(|g| (g.0, g.1.as_deref())), Some((file, place)), "{message}");
        }
        assert_eq!(locate("other.json:1:1: x", &files), None);
        // A part of the file in parentheses (G4MF's binary container holds a JSON chunk).
        assert_eq!(locate("rig.json (JSON chunk):1:128: x", &files), Some(("rig.json", Some("JSON chunk, line 1, column 128".into()))));
        // Whatever follows the name, no panic: cut short, or a character wider than a byte.
        for m in ["rig.json:", "rig.json: ", "rig.json (", "rig.json (x)", "rig.json:é", "rig.json (é):é", "rig.json:1:", "rig.json:1:2"]
        {
            assert_eq!(locate(m, &files).map(|g| g.0), Some("rig.json"), "{m}");
        }
        // The longer of two names that both begin the message.
        assert_eq!(locate("rig.json.bak:1:1: x", &["rig.json", "rig.json.bak"]).map(|g| g.0), Some("rig.json.bak"));
    }
}
