//! The interface every format crate implements, and what flows through it.
//!
//! A format is one value implementing [`Format`]; the CLI keeps a registry (one line per format).
//! Readers get the input bytes plus [`ReadOptions`]; writers get a document plus [`WriteOptions`]
//! and return an [`Output`] (the main file and any side files, such as a glTF `.bin`). Both report
//! warnings and losses through [`Diagnostics`] instead of printing.

use crate::budget::Budget;
use crate::document::Document;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// The error a format returns at the registry boundary. Each format crate has its own
/// `thiserror` type carrying the location; it is boxed here.
pub type FormatError = Box<dyn std::error::Error + Send + Sync + 'static>;

/// How serious a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth knowing, nothing lost.
    Info,
    /// The input is odd or was repaired.
    Warning,
    /// The target cannot hold something the document has (the loss report).
    Loss,
}

/// One warning, loss or note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub severity: Severity,
    /// A stable machine-readable code, e.g. `"mpfb.default-position"`.
    pub code: String,
    /// What happened, naming the bone, vertex or element.
    pub message: String,
}

/// A sink for diagnostics.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Record a warning.
    pub fn warn(&mut self, code: &str, message: impl Into<String>) {
        self.push(Severity::Warning, code, message);
    }
    /// Record a loss (something the target cannot hold).
    pub fn loss(&mut self, code: &str, message: impl Into<String>) {
        self.push(Severity::Loss, code, message);
    }
    /// Record a note.
    pub fn info(&mut self, code: &str, message: impl Into<String>) {
        self.push(Severity::Info, code, message);
    }
    /// Record any diagnostic.
    pub fn push(&mut self, severity: Severity, code: &str, message: impl Into<String>) {
        self.items.push(Diagnostic { severity, code: code.to_owned(), message: message.into() });
    }
    /// Diagnostics of one severity.
    pub fn of(&self, s: Severity) -> impl Iterator<Item = &Diagnostic> {
        self.items.iter().filter(move |d| d.severity == s)
    }
}

/// One input file.
#[derive(Debug, Clone, Copy)]
pub struct Input<'a> {
    /// Where it came from (`None` for stdin); side files are resolved relative to it.
    pub path: Option<&'a Path>,
    pub bytes: &'a [u8],
}

impl Input<'_> {
    /// The path for messages: the file name, or `<stdin>`.
    pub fn display_name(&self) -> String {
        self.path.map(|p| p.display().to_string()).unwrap_or_else(|| "<stdin>".into())
    }
    /// The directory side files are resolved against.
    pub fn base_dir(&self) -> PathBuf {
        self.path.and_then(|p| p.parent()).map(Path::to_path_buf).unwrap_or_else(|| PathBuf::from("."))
    }
}

/// Options for readers. Each format uses the fields that concern it and ignores the rest.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// A mesh whose vertex numbering a rig or weights file refers to (`--mesh`, an OBJ at least).
    pub mesh: Option<PathBuf>,
    /// A weights file to join to a rig (`--weights`).
    pub weights: Option<PathBuf>,
    /// Keep the mesh origin instead of putting the feet on the ground (`--keep-origin`).
    pub keep_origin: bool,
    /// Keep helper geometry (MakeHuman joint cubes, helper-* groups) (`--keep-helpers`).
    pub keep_helpers: bool,
    /// Extra bone names to resolve hashes with (`--names`).
    pub names: Option<PathBuf>,
    /// Another avatar_skeleton.xml instead of the built-in SL table (`--sl-skeleton`).
    pub sl_skeleton: Option<PathBuf>,
    /// Let a document's side-file URIs (glTF and G4MF buffers) lead outside the input file's
    /// folder: `../shared/body.bin` or an absolute path. Off by default, because inputs are
    /// untrusted; for trees the user trusts (the CLI's `--allow-outside-uris`). URI schemes stay
    /// refused, and a side file must still be a regular file within the size limit
    /// ([`crate::files`]).
    pub allow_outside_uris: bool,
    /// The decode budget of the conversion this read belongs to, shared by every reader and
    /// side file of it ([`crate::budget`]). `None`: each read makes its own from its input's
    /// size ([`ReadOptions::budget_for`]). A caller that reads several files for one
    /// conversion, or that wants another limit, sets one ([`Budget::for_input`] of the main
    /// file's size, [`Budget::with_limit`]); clones of a `Budget` share its account.
    pub budget: Option<Budget>,
}

impl ReadOptions {
    /// The budget a read of `input` charges: [`ReadOptions::budget`], or a new one of
    /// [`Budget::for_input`] the input's size.
    pub fn budget_for(&self, input: &Input<'_>) -> Budget {
        self.budget.clone().unwrap_or_else(|| Budget::for_input(input.bytes.len() as u64))
    }
}

/// Options for writers. Each format uses the fields that concern it and ignores the rest.
#[derive(Debug, Clone, Default)]
pub struct WriteOptions {
    /// The output file's stem, used to name side files (`model` → `model.bin`).
    pub file_stem: String,
    /// Embed buffers instead of writing side files (`--embed`).
    pub embed: bool,
    /// Compress chunks where the format allows it (`--compress`).
    pub compress: bool,
    /// Keep at most this many influences per vertex (`--max-influences`).
    pub max_influences: Option<usize>,
    /// Write the source's joint positions rather than a format's defaults (`--joint-positions`).
    pub joint_positions: bool,
    /// Repair what can be repaired instead of refusing (`--fix`).
    pub fix: bool,
    /// A bone-count limit to enforce (`--limit`).
    pub bone_limit: Option<usize>,
    /// Keep helper geometry (`--keep-helpers`).
    pub keep_helpers: bool,
    /// Another avatar_skeleton.xml instead of the built-in SL table (`--sl-skeleton`).
    pub sl_skeleton: Option<PathBuf>,
    /// A base mesh (OBJ) for writers whose bones are anchored to a mesh (`--mesh`): the MPFB
    /// writer picks placement strategies on it for bones that have none.
    pub mesh: Option<PathBuf>,
    /// The skeleton stands on the mesh's own origin rather than with the feet on the ground
    /// (`--keep-origin`); used with `mesh`.
    pub keep_origin: bool,
}

/// What a writer produces.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// The main file's bytes.
    pub main: Vec<u8>,
    /// Side files: (file name relative to the main file's directory, bytes).
    pub side_files: Vec<(String, Vec<u8>)>,
}

impl Output {
    /// An output with only a main file.
    pub fn single(main: Vec<u8>) -> Self {
        Output { main, side_files: Vec::new() }
    }
}

/// A file format: a name, how to recognise it, a reader and/or a writer.
pub trait Format: Sync + Send {
    /// The name used with `--from`/`--to` (e.g. `"gltf"`).
    fn name(&self) -> &'static str;
    /// One line for `--help` and docs.
    fn description(&self) -> &'static str;
    /// File extensions (lower case, no dot) this format claims.
    fn extensions(&self) -> &'static [&'static str];
    /// How sure the format is that these bytes are its own (0 = no, 100 = certain). Called with
    /// the first bytes of the file (at least 4 KiB when the file has them).
    fn sniff(&self, head: &[u8]) -> u8;
    /// Whether [`Format::read`] is implemented.
    fn can_read(&self) -> bool {
        true
    }
    /// Whether [`Format::write`] is implemented.
    fn can_write(&self) -> bool {
        true
    }
    /// Read a document.
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError>;
    /// Write a document. The writer converts frames itself when its format needs another one
    /// and reports what it cannot hold through `diag` as losses.
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError>;
    /// The frame [`Format::write`] converts every document to, if it is always the same one. A
    /// caller that owns its document and needs it no more can convert it in place first
    /// ([`Document::convert_frame`]), which spares the writer a copy of every mesh; the output
    /// is the same.
    fn write_frame(&self) -> Option<crate::Frame> {
        None
    }
}

/// `message` with a fix appended (`message; hint`) unless it already carries one: the project's
/// messages say what is wrong, then after `"; "` what to do. Error types use it for the generic
/// fix of a whole category (a JSON syntax error, a dangling index) so specific messages keep
/// their own.
pub fn with_hint(message: &str, hint: &str) -> String {
    if message.contains("; ") {
        message.to_string()
    } else {
        format!("{message}; {hint}")
    }
}
