//! The interface every format crate implements, and what flows through it.
//!
//! A format is one value implementing [`Format`]; the `skelport` crate keeps the registry (one line
//! per format). Readers get the input bytes plus [`ReadOptions`]; writers get a document plus
//! [`WriteOptions`] and return an [`Output`] (the main file and any side files, such as a glTF
//! `.bin`). Both report warnings and losses through [`Diagnostics`] instead of printing.
//!
//! What is known about a format lives on it, as image-rs keeps capabilities on its `ImageFormat`:
//! what its files can hold ([`Format::holds`]), its frame ([`Format::write_frame`]), the extension
//! namespace it owns and the losses judged from it ([`Format::namespace`],
//! [`Format::check_losses`]), the kinds of file it reads and where each is tested
//! ([`Format::inputs`]). Code that needs a list of formats iterates the registry and asks them.

use crate::budget::Budget;
use crate::document::Document;
use serde::Serialize;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// What kind of fault a [`FormatError`] is. The fix said after the message is chosen by it
/// ([`FaultKind::hint`]), unless the error names a fix of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum FaultKind {
    /// The bytes are not in the text encoding the format uses.
    Encoding,
    /// The text is not well-formed (JSON, XML, OBJ lines): cut short or damaged there.
    Syntax,
    /// A binary container (GLB, G4MF's) is damaged or cut short.
    Container,
    /// A value is missing, of the wrong type or out of its range.
    Value,
    /// An index, ID or link names no item the file has.
    Reference,
    /// Items that do not fit together: a cycle, a duplicate, bytes past the end of their buffer.
    Structure,
    /// A version or feature of the format that skelport does not read.
    Unsupported,
    /// Data a URI names (a side file, a `data:` URI) could not be loaded.
    Buffer,
    /// The file asks for more memory than the decode budget allows ([`crate::budget`]).
    Budget,
    /// The document cannot be written in this format.
    Write,
    /// Anything else; its message says what to do.
    Other,
}

impl FaultKind {
    /// Every kind, for tests and docs.
    pub const ALL: &'static [FaultKind] = &[
        FaultKind::Encoding,
        FaultKind::Syntax,
        FaultKind::Container,
        FaultKind::Value,
        FaultKind::Reference,
        FaultKind::Structure,
        FaultKind::Unsupported,
        FaultKind::Buffer,
        FaultKind::Budget,
        FaultKind::Write,
        FaultKind::Other,
    ];

    /// The stable name: `encoding`, `syntax`, `container`, `value`, `reference`, `structure`,
    /// `unsupported`, `buffer`, `budget`, `write`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Encoding => "encoding",
            FaultKind::Syntax => "syntax",
            FaultKind::Container => "container",
            FaultKind::Value => "value",
            FaultKind::Reference => "reference",
            FaultKind::Structure => "structure",
            FaultKind::Unsupported => "unsupported",
            FaultKind::Buffer => "buffer",
            FaultKind::Budget => "budget",
            FaultKind::Write => "write",
            FaultKind::Other => "other",
        }
    }

    /// The fix for a fault of this kind whose error names none of its own. It names no option
    /// of any front end (the command line's flags, Python's keywords): those hints are the
    /// facade's. `None` for kinds whose messages say what to do themselves.
    pub fn hint(self) -> Option<&'static str> {
        Some(match self {
            FaultKind::Encoding => "save the file in the encoding its format uses, or export it again",
            FaultKind::Syntax => "the file is cut short or damaged there: fix it or export it again",
            FaultKind::Container => "the file is damaged or cut short: export it again",
            FaultKind::Value => "fix that value or export the file again",
            FaultKind::Reference => "make it name an item the file has, or export the file again",
            FaultKind::Structure => "fix it there or export the file again",
            FaultKind::Unsupported => "export it again in a version skelport reads (docs/formats/)",
            FaultKind::Buffer => "fix the uri (a data: URI must be valid base64; a file must sit beside the main file)",
            FaultKind::Budget | FaultKind::Write | FaultKind::Other => return None,
        })
    }
}

impl FaultKind {
    /// `message` with this kind's hint after `"; "`, unless the message carries a fix of its
    /// own (the project's messages say what is wrong, then after `"; "` what to do).
    pub fn with_hint(self, message: &str) -> String {
        match self.hint() {
            Some(h) if !message.contains("; ") => format!("{message}; {h}"),
            _ => message.to_owned(),
        }
    }
}

impl std::fmt::Display for FaultKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where in a file a fault or a diagnostic is, as data.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum Place {
    /// A line of text (1-based) and, when known, a column in it.
    Text {
        /// 1-based line.
        line: usize,
        /// Column in the line, as the parser counts it.
        column: Option<usize>,
    },
    /// A byte offset from the start of the file.
    Byte(u64),
    /// A path into the document: a JSON pointer (`/accessors/1`), a JSONPath (`$.bones.calf_l`),
    /// an indexed path (`nodes[3].skin`).
    Path(String),
    /// One element by its kind and its name or number: `bone "calf_l"`, `skin 0`.
    Element(String),
    /// A place within one part of the file (G4MF's binary container holds a JSON chunk).
    In {
        /// The part: `JSON chunk`.
        part: String,
        /// The place within it.
        place: Box<Place>,
    },
}

impl Place {
    /// Line `line`, column `column` of a text.
    pub fn text(line: usize, column: usize) -> Self {
        Place::Text { line, column: Some(column) }
    }
    /// Line `line` of a text.
    pub fn line(line: usize) -> Self {
        Place::Text { line, column: None }
    }
    /// A path into the document, as it is written: `/accessors/1`, `$.bones.calf_l`, `nodes[3]`.
    pub fn path(path: impl Into<String>) -> Self {
        Place::Path(path.into())
    }
    /// One element, as messages name it: `bone 'calf_l'`, `node 12 (hips)`.
    pub fn element(element: impl Into<String>) -> Self {
        Place::Element(element.into())
    }
    /// An element of `kind` by its name in double quotes: `bone "calf_l"`, `skin "body"`.
    pub fn named(kind: &str, name: &str) -> Self {
        Place::Element(format!("{kind} \"{name}\""))
    }
    /// An element of `kind` by its name in single quotes, as the glTF writer, AnvilToolkit and
    /// the facade word their messages: `skin 'body'`, `bone 'calf_l'`.
    pub fn single_quoted(kind: &str, name: &str) -> Self {
        Place::Element(format!("{kind} '{name}'"))
    }
    /// A bone by its name: `bone "calf_l"`.
    pub fn bone(name: &str) -> Self {
        Place::named("bone", name)
    }
    /// An element of `kind` by its number: `skin 0`, `node 12`.
    pub fn numbered(kind: &str, n: usize) -> Self {
        Place::Element(format!("{kind} {n}"))
    }
    /// How the place follows a file's name in a message: `:3:17` for text (as compilers
    /// print), `: <place>` for the rest.
    pub fn after_file(&self) -> String {
        match self {
            Place::Text { line, column: Some(c) } => format!(":{line}:{c}"),
            Place::Text { line, column: None } => format!(":{line}"),
            other => format!(": {other}"),
        }
    }
}

impl std::fmt::Display for Place {
    /// `line 3, column 17`, `line 12`, `byte 40`, the path or element as it is, `JSON chunk,
    /// line 1, column 2`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Place::Text { line, column: Some(c) } => write!(f, "line {line}, column {c}"),
            Place::Text { line, column: None } => write!(f, "line {line}"),
            Place::Byte(n) => write!(f, "byte {n}"),
            Place::Path(p) | Place::Element(p) => f.write_str(p),
            Place::In { part, place } => write!(f, "{part}, {place}"),
        }
    }
}

/// The error a format returns at the registry boundary, as data: the file at fault (the input,
/// or a mesh or weights file read with it), the place in it, the kind of fault and what is
/// wrong. The facade renders the message from these (`file:3:17: cannot read as gltf: …; fix`)
/// and hands each on (`skelport::Error::file`, `place`, `fault`); nothing is parsed back out of
/// text.
///
/// A format crate keeps its own `thiserror` type and implements [`Fault`] on it (or only
/// [`Fault::file`] and [`Fault::kind`] at first): `?` then turns it into a `FormatError`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FormatError {
    /// The file at fault, as messages name it; `None` when the fault is in no file (a writer's).
    pub file: Option<String>,
    /// Where in the file.
    pub place: Option<Place>,
    /// What kind of fault: it chooses the hint.
    pub kind: FaultKind,
    /// What is wrong, without the file or the place. A message that carries its own fix says it
    /// after `"; "` (the project's convention); the kind's hint is then not added.
    pub message: String,
    /// A fix of the error's own, said instead of the kind's hint.
    pub fix: Option<String>,
}

impl FormatError {
    /// A fault of `kind`, in no file yet.
    pub fn new(kind: FaultKind, message: impl Into<String>) -> Self {
        FormatError { file: None, place: None, kind, message: message.into(), fix: None }
    }
    /// What `e` says of itself, as data (a crate's `Display` can be `FormatError::of(self)`).
    pub fn of<E: Fault + ?Sized>(e: &E) -> Self {
        FormatError { file: e.file().map(str::to_owned), place: e.place(), kind: e.kind(), message: e.what(), fix: e.fix() }
    }
    /// The same fault, in `file`.
    pub fn in_file(mut self, file: impl Into<String>) -> Self {
        self.file = Some(file.into());
        self
    }
    /// The same fault, at `place`.
    pub fn at(mut self, place: Place) -> Self {
        self.place = Some(place);
        self
    }
    /// The same fault with a fix of its own instead of its kind's.
    pub fn with_fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }
    /// What to do: none when the message carries its own fix, else the error's fix, else the
    /// kind's.
    pub fn hint(&self) -> Option<&str> {
        match &self.fix {
            _ if self.message.contains("; ") => None,
            Some(f) => Some(f),
            None => self.kind.hint(),
        }
    }
    /// The message and its hint, without the file or place: `what is wrong; what to do`.
    pub fn what(&self) -> String {
        match self.hint() {
            Some(h) => format!("{}; {h}", self.message),
            None => self.message.clone(),
        }
    }
}

impl std::fmt::Display for FormatError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(file) = &self.file {
            f.write_str(file)?;
            if let Some(p) = &self.place {
                f.write_str(&p.after_file())?;
            }
            f.write_str(": ")?;
        } else if let Some(p) = &self.place {
            write!(f, "{p}: ")?;
        }
        f.write_str(&self.what())
    }
}

impl std::error::Error for FormatError {}

/// What a format crate's error says of itself, so that `?` turns it into a [`FormatError`]
/// (`impl<E: Fault> From<E> for FormatError`). Only [`Fault::file`], [`Fault::place`],
/// [`Fault::kind`] and [`Fault::what`] need be written where the defaults do not fit; a new
/// crate can begin with `impl Fault for MyError {}` (its whole `Display` text as the message,
/// kind [`FaultKind::Other`]) and fill them in as its errors learn their places.
pub trait Fault: std::error::Error + Send + Sync + 'static {
    /// The file at fault, as its messages name it.
    fn file(&self) -> Option<&str> {
        None
    }
    /// Where in the file.
    fn place(&self) -> Option<Place> {
        None
    }
    /// What kind of fault (default [`FaultKind::Other`]).
    fn kind(&self) -> FaultKind {
        FaultKind::Other
    }
    /// What is wrong, without the file and the place (default: the whole `Display` text).
    fn what(&self) -> String {
        self.to_string()
    }
    /// A fix of this error's own, said instead of its kind's hint (default: none).
    fn fix(&self) -> Option<String> {
        None
    }
    /// What is wrong and what to do, as a crate's `Display` says it after the file and place:
    /// [`Fault::what`], then [`Fault::fix`] or the kind's hint ([`FormatError::what`]).
    fn what_and_fix(&self) -> String {
        FormatError::of(self).what()
    }
}

impl<E: Fault> From<E> for FormatError {
    fn from(e: E) -> Self {
        FormatError::of(&e)
    }
}

impl From<Box<dyn std::error::Error + Send + Sync + 'static>> for FormatError {
    /// An error with nothing but its text: kind [`FaultKind::Other`], no file, no place.
    fn from(e: Box<dyn std::error::Error + Send + Sync + 'static>) -> Self {
        FormatError::new(FaultKind::Other, e.to_string())
    }
}

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
    /// The element of the file the diagnostic is about (`bone "calf_l"`, `skin 0`,
    /// `/meshes/0/primitives/1`, `nodes[3]`); `None` for the file as a whole. Given as data by the
    /// code that reports it ([`Diagnostics::warn_at`] and its kin), never read out of the message.
    #[serde(skip_serializing_if = "Option::is_none", serialize_with = "place_as_text")]
    pub place: Option<Place>,
}

fn place_as_text<S: serde::Serializer>(p: &Option<Place>, s: S) -> Result<S::Ok, S::Error> {
    match p {
        Some(p) => s.collect_str(p),
        None => s.serialize_none(),
    }
}

impl Diagnostic {
    /// The element of the file the diagnostic is about, as text (`bone "calf_l"`, `skin 0`).
    pub fn place(&self) -> Option<String> {
        self.place.as_ref().map(Place::to_string)
    }
    /// The message without the place it begins with (`bone "x": has no scale` → `has no
    /// scale`), or the whole message.
    pub fn what(&self) -> &str {
        match &self.place {
            Some(Place::Path(p) | Place::Element(p)) if self.message.starts_with(p.as_str()) => {
                self.message[p.len()..].trim_start_matches(':').trim_start()
            }
            _ => &self.message,
        }
    }
}

/// A sink for diagnostics. [`Diagnostics::warn`], [`Diagnostics::loss`] and [`Diagnostics::info`]
/// report on the file or document as a whole; [`Diagnostics::warn_at`], [`Diagnostics::loss_at`]
/// and [`Diagnostics::info_at`] on one place in it, given as data by the code that knows it (a
/// message about one element begins with it, which [`Diagnostic::what`] leaves out).
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct Diagnostics {
    pub items: Vec<Diagnostic>,
}

impl Diagnostics {
    /// Record a warning about the file as a whole.
    pub fn warn(&mut self, code: &str, message: impl Into<String>) {
        self.push(Severity::Warning, code, message);
    }
    /// Record a loss (something the target cannot hold) of the document as a whole.
    pub fn loss(&mut self, code: &str, message: impl Into<String>) {
        self.push(Severity::Loss, code, message);
    }
    /// Record a note about the file as a whole.
    pub fn info(&mut self, code: &str, message: impl Into<String>) {
        self.push(Severity::Info, code, message);
    }
    /// Record a warning about `place`.
    pub fn warn_at(&mut self, code: &str, place: impl Into<Option<Place>>, message: impl Into<String>) {
        self.push_at(Severity::Warning, code, place.into(), message);
    }
    /// Record a loss of what `place` holds.
    pub fn loss_at(&mut self, code: &str, place: impl Into<Option<Place>>, message: impl Into<String>) {
        self.push_at(Severity::Loss, code, place.into(), message);
    }
    /// Record a note about `place`.
    pub fn info_at(&mut self, code: &str, place: impl Into<Option<Place>>, message: impl Into<String>) {
        self.push_at(Severity::Info, code, place.into(), message);
    }
    /// Record any diagnostic about the file as a whole.
    pub fn push(&mut self, severity: Severity, code: &str, message: impl Into<String>) {
        self.push_at(severity, code, None, message);
    }
    /// Record a diagnostic about `place` (`None`: the file as a whole).
    pub fn push_at(&mut self, severity: Severity, code: &str, place: Option<Place>, message: impl Into<String>) {
        self.items.push(Diagnostic { severity, code: code.to_owned(), message: message.into(), place });
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

/// A companion file held in memory (a mesh or weights that a host such as a Blender add-on
/// already has), so that it needs no temporary file: the name messages call it by, and its bytes
/// (shared, so cloning options is cheap).
#[derive(Clone, PartialEq, Eq)]
pub struct InMemoryFile {
    /// The name messages use for the file (`base.obj`, `weights.default.json`).
    pub name: String,
    /// The file's bytes.
    pub bytes: Arc<[u8]>,
}

impl InMemoryFile {
    /// A file named `name` holding `bytes`.
    pub fn new(name: impl Into<String>, bytes: impl Into<Arc<[u8]>>) -> Self {
        InMemoryFile { name: name.into(), bytes: bytes.into() }
    }
}

impl std::fmt::Debug for InMemoryFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InMemoryFile").field("name", &self.name).field("bytes", &self.bytes.len()).finish()
    }
}

/// Options for readers. Each format uses the fields that concern it and ignores the rest.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// A mesh whose vertex numbering a rig or weights file refers to (`--mesh`, an OBJ at least).
    pub mesh: Option<PathBuf>,
    /// The mesh given in memory instead of by path; used in place of `mesh` when set.
    pub mesh_data: Option<InMemoryFile>,
    /// A weights file to join to a rig (`--weights`).
    pub weights: Option<PathBuf>,
    /// The weights file given in memory instead of by path; used in place of `weights` when set.
    pub weights_data: Option<InMemoryFile>,
    /// The mesh was found by skelport, not given (MPFB's base mesh beside a rig): it places the
    /// bones, and is kept in the document only as the body a weights file numbers, so a rig
    /// alone stands as the rigs with weights beside it do, without a body nobody asked for; and
    /// a same-format conversion keeps the file's stored positions for bones still where it placed
    /// them.
    pub mesh_for_placement: bool,
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
    /// Who takes the document's extension data after the read ([`ExtensionUse`]): everyone (the
    /// default), or only the writer of one namespace's format. In the second case a reader may
    /// leave out data only other writers use, and [`Format::complete`] makes it when the
    /// document goes elsewhere after all.
    pub extension_use: ExtensionUse,
}

/// Who reads a document's extension data after its reader ([`ReadOptions::extension_use`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ExtensionUse {
    /// Any writer, the IR JSON, the Python API: every extension is filled in.
    #[default]
    Everyone,
    /// Only the writer of formats owning this namespace (a conversion back to the format read):
    /// that reader may defer data its writer makes again from what the reader keeps
    /// run-locally (an AnvilToolkit skeleton's per-bone values, which a conversion back writes
    /// from the text it read).
    Owner(&'static str),
    /// No writer: the document is only reported on (`inspect`). Every reader may defer.
    Nobody,
}

impl ExtensionUse {
    /// Whether a reader of the formats owning `namespace` may defer the data of its extension
    /// that other writers use.
    pub fn defers(self, namespace: &str) -> bool {
        match self {
            ExtensionUse::Everyone => false,
            ExtensionUse::Owner(ns) => ns == namespace,
            ExtensionUse::Nobody => true,
        }
    }
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
    /// Write a format's default joint positions instead of the source's (`--default-joints`):
    /// the Second Life writer then puts every joint at the SL skeleton's default `pos`. False
    /// (the default) keeps the source's joints.
    pub default_joints: bool,
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
    /// The mesh given in memory instead of by path; used in place of `mesh` when set.
    pub mesh_data: Option<InMemoryFile>,
    /// The skeleton stands on the mesh's own origin rather than with the feet on the ground
    /// (`--keep-origin`); used with `mesh`.
    pub keep_origin: bool,
    /// The rest pose to write (`--rest-pose`); `None` is the target format's own choice (VRM:
    /// the T-pose; every other format: the rest pose as read).
    pub rest_pose: Option<crate::rest::RestPose>,
    /// A VRM meta file: the model's name, authors and licence terms (`--vrm-meta`).
    pub vrm_meta: Option<PathBuf>,
    /// A humanoid map file naming the bone of each humanoid role (`--map FILE` whose JSON has a
    /// `humanoid` object), for writers that need roles (VRM, `--rest-pose t-pose`).
    pub humanoid_map: Option<PathBuf>,
    /// The caller writes [`Output::main_pieces`] after [`Output::main`] (skelport's file output
    /// does: `skelport::convert_file`): a writer may then leave its big buffers there rather than
    /// copy them into `main` (the GLB writer's binary chunk, whose copy touched as many fresh
    /// pages as the chunk is long). False (the default): `main` is the whole main file.
    pub main_in_pieces: bool,
}

/// What a writer produces.
#[derive(Debug, Clone, Default)]
pub struct Output {
    /// The main file's bytes; all of them unless the writer was given
    /// [`WriteOptions::main_in_pieces`].
    pub main: Vec<u8>,
    /// The rest of the main file, after `main`, when the writer was given
    /// [`WriteOptions::main_in_pieces`]: each piece's bytes, then that many zero bytes. Empty
    /// otherwise.
    pub main_pieces: Vec<(Vec<u8>, usize)>,
    /// Side files: (file name relative to the main file's directory, bytes).
    pub side_files: Vec<(String, Vec<u8>)>,
}

impl Output {
    /// An output with only a main file.
    pub fn single(main: Vec<u8>) -> Self {
        Output { main, ..Output::default() }
    }

    /// The main file's parts in order: [`Output::main`], then each of
    /// [`Output::main_pieces`] and its zeros (empty parts left out).
    pub fn main_parts(&self) -> Vec<&[u8]> {
        /// Zero padding is at most a few bytes (GLB pieces are padded to 4); longer runs are
        /// cut from this in turn.
        const ZEROS: [u8; 64] = [0; 64];
        let mut parts = vec![self.main.as_slice()];
        for (bytes, zeros) in &self.main_pieces {
            parts.push(bytes);
            let mut z = *zeros;
            while z > 0 {
                let n = z.min(ZEROS.len());
                parts.push(&ZEROS[..n]);
                z -= n;
            }
        }
        parts.retain(|p| !p.is_empty());
        parts
    }

    /// The whole main file in one buffer: [`Output::main`] with [`Output::main_pieces`]
    /// appended.
    pub fn into_main(self) -> Vec<u8> {
        if self.main_pieces.is_empty() {
            return self.main;
        }
        let parts = self.main_parts();
        let mut whole = Vec::with_capacity(parts.iter().map(|p| p.len()).sum());
        parts.iter().for_each(|p| whole.extend_from_slice(p));
        whole
    }
}

/// The first bytes of a file as text for a sniffer ([`Format::sniff`]): borrowed when they are
/// UTF-8, else `String::from_utf8_lossy`'s copy. The same text either way, but the check of
/// valid bytes reads ASCII a word at a time where the lossy copy's costs 3.5 instructions a
/// byte, and every run sniffs its input's 4-8 KiB several times.
pub fn head_text(head: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(head) {
        Ok(s) => std::borrow::Cow::Borrowed(s),
        Err(_) => String::from_utf8_lossy(head),
    }
}

/// What a format's files can hold. Each format says it in [`Format::holds`]; the `skelport`
/// crate's tests check every claim by a round trip, so the table stays true.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
pub struct Holds {
    /// Skin weights, in the main file or in a side file the writer produces.
    pub skins: bool,
    /// Mesh geometry (positions and faces).
    pub meshes: bool,
    /// Bone scale other than 1 in rest transforms.
    pub scale: bool,
    /// Texture coordinates.
    pub uvs: bool,
    /// Vertex normals.
    pub normals: bool,
    /// Other formats' facts (their extension data) as skelport extras: read back by skelport,
    /// ignored by other tools.
    pub extras: bool,
    /// Any bone hierarchy, as given; `false` when bones are mapped onto a fixed skeleton (SL's).
    pub any_skeleton: bool,
    /// Rest orientations exactly, twist included; `false` when re-derived (from head, tail and
    /// roll, say).
    pub orientations: bool,
    /// Skins bound in a pose other than the rest pose (inverse bind matrices of their own);
    /// `false` when a skin is bound at rest.
    pub bind_pose: bool,
    /// The most bones one file can hold; `None` when only the IR's own limits apply.
    pub max_bones: Option<usize>,
    /// Only humanoid skeletons: the writer refuses a skeleton in which it finds no humanoid
    /// (VRM); what it writes keeps the hierarchy as `any_skeleton` says.
    pub humanoid_only: bool,
}

impl Holds {
    /// Holds nothing beyond a skeleton's names and hierarchy: the default of [`Format::holds`].
    pub const NOTHING: Holds = Holds {
        skins: false,
        meshes: false,
        scale: false,
        uvs: false,
        normals: false,
        extras: false,
        any_skeleton: false,
        orientations: false,
        bind_pose: false,
        max_bones: None,
        humanoid_only: false,
    };
    /// Everything the IR holds, with no bone limit and any skeleton: the IR's own JSON and glTF.
    /// Other formats say what they lack from here (`Holds { bind_pose: false, ..Holds::EVERYTHING }`)
    /// or what they have from [`Holds::NOTHING`].
    pub const EVERYTHING: Holds = Holds {
        skins: true,
        meshes: true,
        scale: true,
        uvs: true,
        normals: true,
        extras: true,
        any_skeleton: true,
        orientations: true,
        bind_pose: true,
        max_bones: None,
        humanoid_only: false,
    };
}

/// How a reader is handed one kind of file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum InputRole {
    /// The file itself: [`Format::read`]'s input.
    Main,
    /// A mesh given beside it: [`ReadOptions::mesh`].
    Mesh,
    /// A weights file given beside it: [`ReadOptions::weights`].
    Weights,
}

/// One kind of file a format reads, and where the project tests it: the malformed-input suite
/// `testdata/bad/<suite>/` and the fuzz target `<fuzz_target>` (docs/fuzzing.md). A test in the
/// `skelport` crate fails when a readable format declares no main input, or when a declared suite
/// or fuzz target is missing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct InputKind {
    /// How the reader gets it.
    pub role: InputRole,
    /// The folder of its malformed-input suite under `testdata/bad/`.
    pub suite: &'static str,
    /// Its fuzz target's name.
    pub fuzz_target: &'static str,
}

/// A file format: a name, how to recognise it, a reader and/or a writer, and what is known about
/// it (what its files hold, its frame, its extension namespace, its inputs).
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
    /// and reports what it cannot hold through `diag` as losses. The document must validate
    /// ([`crate::validate::validate`]): writers rely on the invariants it checks.
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError>;
    /// The frame [`Format::write`] converts every document to, if it is always the same one. A
    /// caller that owns its document and needs it no more can convert it in place first
    /// ([`Document::convert_frame`]), which spares the writer a copy of every mesh; the output
    /// is the same.
    fn write_frame(&self) -> Option<crate::Frame> {
        None
    }
    /// What this format's files can hold (default: [`Holds::NOTHING`]).
    fn holds(&self) -> Holds {
        Holds::NOTHING
    }
    /// The kinds of file this format reads (its main file first), with the names of their tests.
    /// Empty for a format that cannot read.
    fn inputs(&self) -> &'static [InputKind] {
        &[]
    }
    /// The extension namespace this format owns (`ext["<namespace>"]`), if any. Formats that
    /// share one (a text and a binary form) name the same namespace.
    fn namespace(&self) -> Option<&'static str> {
        None
    }
    /// Losses of writing `doc` as `target` judged from facts this format's [`Format::namespace`]
    /// holds (MPFB placement strategies, AnvilToolkit bone modifiers) or from rules this
    /// namespace's formats set on what they are given. Called after the writer, once per
    /// namespace (on its first registered format), so that only the owner reads its namespace
    /// and writers need not know other formats' facts.
    fn check_losses(&self, doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
        let _ = (doc, target, diag);
    }
    /// Whether this format's reader deferred extension data of `doc`
    /// ([`ReadOptions::extension_use`]) that [`Format::complete`] would make. The default: no,
    /// as most readers defer nothing.
    fn deferred(&self, doc: &Document) -> bool {
        let _ = doc;
        false
    }
    /// Make the extension data this format's reader deferred from what it kept run-locally,
    /// before `doc` goes to a writer of another namespace. The default does nothing.
    fn complete(&self, doc: &mut Document) {
        let _ = doc;
    }
    /// The name this format's own tools give a file of a document called `stem`, when they have
    /// a convention (MPFB: `rig.<stem>.json`); `None` for `<stem>.<extension>`.
    fn conventional_name(&self, stem: &str) -> Option<String> {
        let _ = stem;
        None
    }
    /// Whether [`Format::write`] applies [`WriteOptions::rest_pose`] itself (VRM makes its own
    /// T-pose); for the other formats the pipeline re-rests the document before writing.
    fn applies_rest_pose(&self) -> bool {
        false
    }
    /// The built-in humanoid map (`skelport_vrm`'s `HumanoidMap::built_in`) whose bone names
    /// this format's rigs use, so `--map humanoid` can rename a humanoid (a VRM's bone roles, or
    /// any rig a built-in humanoid map recognises) to them: `sl-bento` for Second Life, `ac-biped`
    /// for AnvilToolkit. `None`, the default, for formats that hold any names.
    fn humanoid_names(&self) -> Option<&'static str> {
        None
    }
    /// The reader options that join `output`'s side files back when its main file is read again
    /// (MPFB: the weights file); the default is none, for formats whose main file names its side
    /// files itself (glTF's `.bin`).
    fn read_back(&self, output: &Output) -> ReadOptions {
        let _ = output;
        ReadOptions::default()
    }
    /// A side file this format's reader loads through a URI the main file names, made from
    /// `demo` (glTF's `.bin`, the bytes of a G4MF buffer): the folder fuzz target
    /// (`skelport::fuzzing::folder_targets`) puts it beside the input. `None`, the default, for
    /// formats whose files name no side files; they get no folder target.
    fn fuzz_side_file(&self, demo: &Document) -> Option<Vec<u8>> {
        let _ = demo;
        None
    }
    /// Checks of this format's own machinery that a fuzz input can reach no other way, run by
    /// the main-file fuzz target (`skelport::fuzzing`) after each input is read; a disagreement
    /// panics, which the fuzzer reports. Collada's and AnvilToolkit's run the paths only big files
    /// take (two threads, texts in halves) on the input and compare them with the one-thread
    /// paths (docs/fuzzing.md). Returns how many comparisons were made (tests hold it above 0 for
    /// a format that has a check). None, the default; a format's check exists only when its crate
    /// is built with its `fuzzing` feature.
    fn fuzz_check(&self, data: &[u8]) -> usize {
        let _ = data;
        0
    }
    /// A check of this writer's own machinery, run by the fuzz targets (`skelport::fuzzing`) on
    /// every document a fuzz input is read into that validates: glTF's runs the path only big
    /// documents take (meshes encoded ahead on the pool) and compares its bytes, diagnostics and
    /// first error with the one-thread path's. A disagreement panics. Returns how many comparisons
    /// were made (0 for a document the path does not apply to); none, the default, and a
    /// format's check exists only when its crate is built with its `fuzzing` feature.
    fn fuzz_check_write(&self, doc: &Document) -> usize {
        let _ = doc;
        0
    }
    /// The codes of this reader's diagnostics that mean the file breaks a structural rule of
    /// the format's own specification (a buffer view past its buffer, a parent naming no bone, a
    /// stored count that disagrees with the hierarchy). The reader goes past such a structure
    /// when it can, so converting still works, but `validate` calls the file invalid. The
    /// default is none: the reader refuses every broken structure it meets.
    fn structural(&self) -> &'static [&'static str] {
        &[]
    }
    /// How to give the mesh that this format's skin weights number, when a file was read with
    /// weights and no mesh (MPFB: `--mesh`): said after a `skin.dropped` loss. `None`, the
    /// default, for formats whose files carry their meshes.
    fn mesh_hint(&self) -> Option<&'static str> {
        None
    }
}

impl std::fmt::Debug for dyn Format {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Format({})", self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_given_as_data_and_left_out_of_what() {
        let mut d = Diagnostics::default();
        d.warn_at("x", Place::bone("a: b"), "bone \"a: b\": parent is missing");
        d.loss_at("x", Place::numbered("skin", 0), "skin 0: 12 vertices have no influence");
        d.info_at("x", Place::path("/meshes/0/primitives/1"), "/meshes/0/primitives/1: primitive has no POSITION; skipped");
        d.warn_at("x", Place::named("node", "hips"), "node \"hips\" has no name");
        d.warn_at("x", None, "bone \"x\": said, but about the file");
        // A message that begins like a place is about the file unless its place is given.
        d.warn("x", "skin 0: 12 vertices have no influence");
        d.loss("x", "$.bones.calf_l: needs three numbers");
        let got: Vec<(Option<String>, &str)> = d.items.iter().map(|i| (i.place(), i.what())).collect();
        assert_eq!(
            got,
            [
                (Some("bone \"a: b\"".into()), "parent is missing"),
                (Some("skin 0".into()), "12 vertices have no influence"),
                (Some("/meshes/0/primitives/1".into()), "primitive has no POSITION; skipped"),
                (Some("node \"hips\"".into()), "has no name"),
                (None, "bone \"x\": said, but about the file"),
                (None, "skin 0: 12 vertices have no influence"),
                (None, "$.bones.calf_l: needs three numbers"),
            ]
        );
        let json = serde_json::to_value(&d).unwrap();
        assert_eq!(json[0]["place"], "bone \"a: b\"");
        assert!(json[4].get("place").is_none());
    }
}
