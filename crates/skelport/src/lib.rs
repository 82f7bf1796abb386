//! # skelport — convert character skeletons and skin weights between formats
//!
//! The library under the `skelport` command line tool and the Python package: it reads MPFB
//! (MakeHuman) rigs and weights, MakeHuman 1.x skeletons, AnvilToolkit skeleton XML, G4MF, glTF
//! 2.0, VRM, Second Life Collada (and its `avatar_skeleton.xml`), FBX (read only) and skelport's
//! own `ir-json` into one document model
//! (the IR, [`ir`]), and writes them back, saying what the target could not hold (the list,
//! with what each reads and writes: [`registry::formats`]; a test checks this one names them).
//!
//! Calling a format's `read` and `write` directly skips what makes a conversion trustworthy; the
//! functions here run the whole pipeline the CLI runs:
//!
//! 1. [`open`] (a file) or [`from_bytes`] (bytes in memory, with the mesh and weights in memory
//!    too): pick the reader (the name given, else the extension and the content), read, and keep
//!    what the reader reported.
//! 2. [`convert`] (`&loaded` to convert it again, or `loaded`, which spares a copy): rename bones with a
//!    retarget map, check the document against the IR's rules ([`check`]), write it with the
//!    target format, judge the losses other formats' facts suffer ([`losses`]), and with
//!    `strict` refuse any loss. The result holds the output's bytes (the main file and its side
//!    files) and every diagnostic, as data.
//! 3. [`Converted::save`]: every file written to a temporary file first, then all renamed into
//!    place, so an output is never half-replaced.
//!
//! Around it: [`formats`] (the registry: the one list of formats, each knowing what its files
//! hold), [`maps()`] (the built-in retarget maps), [`inspect()`] (the `inspect --json` report),
//! [`diff()`] (a bone-by-bone comparison) and [`validate()`] (a file against the IR's and a target's
//! rules).
//!
//! ```
//! use skelport::{ConvertOptions, OpenOptions, Severity};
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let dir = tempfile::tempdir()?;
//! # let demo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo");
//! # std::fs::copy(demo.join("sample.gltf"), dir.path().join("sample.gltf"))?;
//! # std::fs::copy(demo.join("sample.bin"), dir.path().join("sample.bin"))?;
//! # let (input, output) = (dir.path().join("sample.gltf"), dir.path().join("sample.rig.xml"));
//! // Read a glTF file (the format is told from its name and content) ...
//! let loaded = skelport::open(&input, &OpenOptions::default())?;
//! // ... write it as AnvilToolkit XML, which holds no skin: that is reported as a loss ...
//! // (the side files, if any, are named after the output: `sample.rig`)
//! let options = ConvertOptions::default().named_for(&output);
//! let converted = skelport::convert(&loaded, skelport::format("anvil")?, &options)?;
//! assert!(converted.diagnostics.of(Severity::Loss).any(|d| d.code == "anvil.geometry"));
//! // ... and save it (side files too, all or nothing).
//! converted.save(&output)?;
//! # assert!(output.exists());
//! # Ok(())
//! # }
//! ```

#![warn(missing_docs)]

pub mod demo;
pub mod diff;
mod error;
#[cfg(feature = "fuzzing")]
pub mod fuzzing;
pub mod inspect;
pub mod io;
pub mod losses;
pub mod maps;
#[cfg(feature = "testing")]
pub mod matrix;
pub mod mpfb_folder;
pub mod registry;
pub mod validate;

pub use diff::diff;
pub use error::{Error, ErrorCode, Front, Opt, Result, Words};
pub use inspect::inspect;
pub use validate::validate;

/// The document model every format meets in: [`ir::Document`], its skeletons, skins and meshes.
pub use skelport_ir as ir;
pub use skelport_ir::{Diagnostic, Diagnostics, Document, Format, Holds, InMemoryFile, Output, Severity, WriteOptions};

use skelport_ir::{Input, ReadOptions as ReaderOptions};
use std::borrow::Cow;
use std::path::{Path, PathBuf};

/// Every registered format, in the order `skelport formats` lists them.
pub fn formats() -> &'static [&'static dyn Format] {
    registry::formats()
}

/// The registered format called `name` (`gltf`, `anvil-schema`, …; case does not matter).
pub fn format(name: &str) -> Result<&'static dyn Format> {
    registry::by_name(name).ok_or_else(|| unknown_format(name, |_| true, "known formats"))
}

/// The error for a format name no format has: the closest name (`glft` → `gltf`) and the list of
/// the formats `keep` admits, called `what`.
fn unknown_format(name: &str, keep: impl Fn(&dyn Format) -> bool + Copy, what: &str) -> Error {
    let names: Vec<&str> = formats().iter().filter(|f| keep(**f)).map(|f| f.name()).collect();
    let list = names.join(", ");
    let msg = match ir::suggest::closest(name, names.iter().copied()) {
        Some(c) => format!("unknown format '{name}': did you mean '{c}'? {what}: {list}"),
        None => format!("unknown format '{name}'; {what}: {list}"),
    };
    Error::new(ErrorCode::UnknownFormat, None, msg)
}

/// The format called `name`, which must be able to read (`--from`): [`format()`], with a message
/// listing the formats that can (and the closest of their names to a mistyped one) when it is
/// unknown or cannot read.
pub fn format_to_read(name: &str) -> Result<&'static dyn Format> {
    format_that(name, Direction::Read)
}

/// The format called `name`, which must be able to write (`--to`): [`format()`], with a message
/// listing the formats that can when it is unknown or read-only (and, for a read-only format,
/// its own word on what to write instead: FBX names glb, vrm and dae).
pub fn format_to_write(name: &str) -> Result<&'static dyn Format> {
    format_that(name, Direction::Write)
}

#[derive(Clone, Copy, PartialEq)]
enum Direction {
    Read,
    Write,
}

fn format_that(name: &str, direction: Direction) -> Result<&'static dyn Format> {
    let reading = direction == Direction::Read;
    let can = move |f: &dyn Format| if reading { f.can_read() } else { f.can_write() };
    let what = if reading { "readable formats" } else { "writable formats" };
    let Some(f) = registry::by_name(name) else { return Err(unknown_format(name, can, what)) };
    if !can(f) {
        // A read-only format's writer says why and what to write instead (FBX: glb, vrm, dae).
        let why = if reading {
            None
        } else {
            f.write(&Document::new(ir::Frame::GLTF), &ir::WriteOptions::default(), &mut Diagnostics::default()).err()
        };
        let why = why.map(|e| format!(": {e}")).unwrap_or_default();
        let msg = format!("format '{name}' cannot be {}{why}; {what}: {}", if reading { "read" } else { "written" }, registry::names(can));
        return Err(Error::new(ErrorCode::Unsupported, None, msg));
    }
    Ok(f)
}

/// The built-in retarget maps, by name (`skelport maps`).
pub fn maps() -> Result<Vec<(&'static str, ir::retarget::RetargetMap)>> {
    maps::BUILT_IN.iter().map(|(name, _)| Ok((*name, maps::load(name)?))).collect()
}

/// How to read an input.
#[derive(Debug, Clone, Default)]
pub struct OpenOptions {
    /// The format to read with, by name (`--from`); `None` tells it from the input's name and
    /// content.
    pub from: Option<String>,
    /// What the reader is given: a mesh and weights (by path, or in memory with
    /// [`InMemoryFile`]), more bone names, another SL skeleton, …
    pub reader: ReaderOptions,
}

/// A document read from an input, with the format it was read as and what the reader reported.
#[derive(Debug, Clone)]
pub struct Loaded {
    /// The document.
    pub doc: Document,
    /// The format it was read as.
    pub format: &'static dyn Format,
    /// What the reader reported (warnings, notes).
    pub diagnostics: Diagnostics,
    /// The input as messages name it: the path as given, `-` for standard input, or the name an
    /// in-memory input was given.
    pub name: String,
    /// Every file the read opened, by its canonical path: the input file itself first (when it
    /// is one), then the side files its document names (glTF and G4MF buffers) and the mesh and
    /// weights files of the options. [`Converted::save`] refuses to overwrite any of them.
    pub reads: Vec<PathBuf>,
}

impl Loaded {
    /// A document built in memory (not read from a file), named `name` in messages. It counts
    /// as read from `ir-json`, the IR's own format.
    pub fn from_document(doc: Document, name: impl Into<String>) -> Self {
        Loaded { doc, format: &ir::irjson::IrJsonFormat, diagnostics: Diagnostics::default(), name: name.into(), reads: Vec::new() }
    }

    /// Rename the document's bones by the retarget map `name_or_file` stands for (`--map`, as
    /// [`maps::for_document`] takes it; `target` is the format the result is for, which
    /// [`maps::HUMANOID`] needs). A document that breaks the IR's rules is refused with
    /// [`ErrorCode::Invalid`], naming this file, and left as it is; each dropped bone is a loss
    /// (or a note) in [`Loaded::diagnostics`]. The document is checked once, before the map is
    /// made (a humanoid map walks its parents).
    pub fn apply_map(&mut self, name_or_file: &str, target: Option<&dyn Format>) -> Result<()> {
        check(&self.doc, &self.name)?;
        let map = maps::for_sound_document(name_or_file, &self.doc, target)?;
        retarget_valid(&mut self.doc, &map, &mut self.diagnostics)
    }
}

/// A borrowed document for [`convert`]: copied only when a retarget map or a rest pose changes it.
impl<'a> From<&'a Loaded> for Cow<'a, Loaded> {
    fn from(loaded: &'a Loaded) -> Self {
        Cow::Borrowed(loaded)
    }
}

/// An owned document for [`convert`]: changed in place (retargeted, turned into the target's
/// frame), never copied.
impl From<Loaded> for Cow<'_, Loaded> {
    fn from(loaded: Loaded) -> Self {
        Cow::Owned(loaded)
    }
}

/// Read the file at `path` (`-` reads standard input). The file is read into memory
/// ([`io::read_input`]), so a file that another program truncates meanwhile cannot end the
/// calling process; [`open_mapped`] maps big files instead.
pub fn open(path: impl AsRef<Path>, opts: &OpenOptions) -> Result<Loaded> {
    // SAFETY: `map: false` maps nothing.
    unsafe { open_with(path.as_ref(), opts, false) }
}

/// [`open`], with a file of 1 MiB or more memory-mapped while it is read ([`io::map_input`]):
/// fewer page faults and no copy for big inputs (docs/performance.md).
///
/// # Safety
/// The file must not be truncated while it is read: reading a page past its new end ends the
/// process with SIGBUS (docs/limits.md). The CLI, which owns its inputs for one command, opts in;
/// a library host (the Python package inside Blender) calls [`open`].
pub unsafe fn open_mapped(path: impl AsRef<Path>, opts: &OpenOptions) -> Result<Loaded> {
    // SAFETY: passed on to the caller.
    unsafe { open_with(path.as_ref(), opts, true) }
}

/// # Safety
/// With `map`, as [`open_mapped`].
unsafe fn open_with(path: &Path, opts: &OpenOptions, map: bool) -> Result<Loaded> {
    let name = path.display().to_string();
    // SAFETY: with `map`, the caller's promise (`open_mapped`).
    let bytes = if map { unsafe { io::map_input(path) } } else { io::read_input(path) };
    let bytes = bytes?;
    ir::trace::phase("input mapped");
    let shown = if path.as_os_str() == "-" { None } else { Some(path) };
    let loaded = read(shown, &name, &bytes, opts)?;
    io::release(bytes);
    Ok(loaded)
}

/// Read an input held in memory, called `name` (its extension helps tell the format, and
/// messages name it). Files it refers to by relative path (a glTF `.bin`) are looked up from the
/// current directory, as for standard input; a mesh or weights can be given in memory too
/// ([`InMemoryFile`] in [`OpenOptions::reader`]).
pub fn from_bytes(name: &str, bytes: &[u8], opts: &OpenOptions) -> Result<Loaded> {
    read(Some(Path::new(name)), name, bytes, opts)
}

fn read(path: Option<&Path>, name: &str, bytes: &[u8], opts: &OpenOptions) -> Result<Loaded> {
    let head = &bytes[..bytes.len().min(8192)];
    let mut diagnostics = Diagnostics::default();
    let format = match &opts.from {
        Some(from) => format_to_read(from)?,
        None => match registry::detect_reader(path, head) {
            Some(f) => f,
            None => {
                // A file of a kind skelport reads only beside a rig (an OBJ mesh): say where it goes.
                mpfb_folder::before_read(None, path, name, head, &opts.reader, &mut diagnostics)?;
                let msg = Words::new(format!("{name}: cannot tell the format from the extension or the content; name it with "))
                    .opt(Opt::From)
                    .text(format!(" ({})", registry::names(|f| f.can_read())));
                return Err(Error::new(ErrorCode::Undetected, Some(name), msg));
            }
        },
    };
    let changed = mpfb_folder::before_read(Some(format.name()), path, name, head, &opts.reader, &mut diagnostics)
        .map_err(|e| e.with_format(format.name()))?;
    let reader = changed.as_ref().unwrap_or(&opts.reader);
    // One budget for the read, so that the side files it opened are known afterwards.
    let budget = reader.budget.clone().unwrap_or_else(|| ir::Budget::for_input(bytes.len() as u64));
    let reader = &ir::ReadOptions { budget: Some(budget.clone()), ..reader.clone() };
    let doc = format.read(Input { path, bytes }, reader, &mut diagnostics).map_err(|e| Error::read(name, format.name(), e))?;
    let real = |p: &Path| std::fs::canonicalize(p).ok();
    let reads = path
        .filter(|p| p.as_os_str() != "-")
        .and_then(real)
        .into_iter()
        .chain(budget.side_files())
        .chain([&reader.mesh, &reader.weights].into_iter().flatten().filter_map(|p| real(p)))
        .collect();
    Ok(Loaded { doc, format, diagnostics, name: name.to_owned(), reads })
}

/// The format to write `output` as when `--to` is not given: the one its extension names, except
/// that an input whose own format writes that extension keeps its format (an AnvilToolkit
/// Schema-Based file converted to `.xml` stays Schema-Based, so an unmodified round trip gives
/// the same bytes back; `.xml` alone would mean the Standard form).
pub fn output_format(output: &Path, from: Option<&'static dyn Format>) -> Option<&'static dyn Format> {
    let by_name = registry::detect_writer(output)?;
    let ext = registry::extension_of(output)?;
    match from {
        Some(f) if f.can_write() && f.extensions().contains(&ext.as_str()) => Some(f),
        _ => Some(by_name),
    }
}

/// How to convert.
#[derive(Debug, Clone, Default)]
pub struct ConvertOptions {
    /// Rename bones with a retarget map first: a built-in map's name ([`maps()`]) or a map file
    /// (`--map`). Unmapped bones are dropped (a loss each), their weights merged into the
    /// nearest mapped ancestor.
    pub map: Option<String>,
    /// Refuse any loss (`--strict`): the conversion fails, listing them.
    pub strict: bool,
    /// Accept a conversion that leaves a skin behind (`--allow-loss`): a skin that binds no
    /// vertex (its weight groups match no bone), a skin the target would drop (no mesh to bind
    /// it to), or most of a skin's weights dropped. Without it such a conversion fails with
    /// [`ErrorCode::Loss`]; with it they are losses (`skin.empty`, `skin.dropped`,
    /// `skin.weights-dropped`). Losses asked for (`map` merges, `max_influences`) never fail.
    pub allow_loss: bool,
    /// What the writer is given (`--embed`, `--max-influences`, …). `file_stem` names the side
    /// files (`model` → `model.bin`): set it to the [`stem_of`] the path the output will be saved
    /// to ([`convert_file`] does); empty, it is the input's. [`Converted::save`] refuses a path
    /// whose stem is another when there are side files, so they never disagree.
    pub write: WriteOptions,
}

impl ConvertOptions {
    /// These options, the side files named for a save to `path` (`write.file_stem` =
    /// [`stem_of`]`(path)`: `out/model.gltf` → `model.bin`).
    pub fn named_for(mut self, path: impl AsRef<Path>) -> Self {
        self.write.file_stem = stem_of(path.as_ref());
        self
    }
}

/// A finished conversion: the output's bytes and everything reported on the way.
#[derive(Debug, Clone)]
pub struct Converted {
    /// The format the input was read as.
    pub from: &'static dyn Format,
    /// The format written.
    pub to: &'static dyn Format,
    /// The main file and its side files (named relative to the main file's folder).
    pub output: Output,
    /// The stem the side files are named for (`model` for `model.bin`): the `file_stem` of
    /// the write options, or the input's.
    pub file_stem: String,
    /// What reading, retargeting and writing reported, in that order: warnings, notes and the
    /// losses (`Severity::Loss`), each with a stable code.
    pub diagnostics: Diagnostics,
    /// The files the input was read from ([`Loaded::reads`]): [`Converted::save`] writes over
    /// none of them, except the input itself (converting a file onto itself).
    pub reads: Vec<PathBuf>,
}

impl Converted {
    /// Write the output to `path` (side files beside it; `-` writes the main file to standard
    /// output and refuses side files), all or nothing: every file goes to a temporary file in
    /// its folder first, then all are renamed into place (side files first, the main file
    /// last); when any temporary cannot be written, nothing is renamed and the temporaries are
    /// removed. Returns the paths written.
    ///
    /// When there are side files, `path`'s stem must be the one they were named for
    /// ([`Converted::file_stem`]): the main file names them, so saving `other.gltf` beside
    /// `model.bin` would scatter one output under two names.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<Vec<PathBuf>> {
        let path = path.as_ref();
        let shown = path.display().to_string();
        self.check_stem(path).map_err(|m| Error::new(ErrorCode::Output, Some(&shown), m))?;
        self.check_not_an_input(path).map_err(|m| Error::new(ErrorCode::Output, Some(&shown), m))?;
        let written = io::write_output(path, &self.output);
        ir::trace::phase("written");
        written
    }
}

/// What converting one file gave ([`convert_file`]).
#[derive(Debug)]
pub struct FileOutcome {
    /// The format the input was read as, or was to be read as when reading failed (`None` when
    /// it could not be told).
    pub from: Option<&'static str>,
    /// The input was read: any failure came after.
    pub read: bool,
    /// The format written (`None` when nothing names one).
    pub to: Option<&'static dyn Format>,
    /// What the conversion reported: of the step that failed, when one did; a failed save keeps
    /// the conversion's.
    pub diagnostics: Diagnostics,
    /// The files written (the main file last), or why nothing was.
    pub result: Result<Vec<PathBuf>>,
}

/// Read `input` with `open`, convert it to `target` (or, when `None`, to the format `output`
/// names: [`output_format`]) with `opts` and save it to `output`, all or nothing: the one
/// per-file conversion of the command line's `convert`, Python's `skelport.convert` and
/// `skelport.migrate`. `before_save` is asked last: when it says no (a caller that gave up
/// waiting), nothing is written and the result is `None`. A failure is the outcome's `result`.
pub fn convert_file(
    input: &Path,
    output: &Path,
    open: impl FnOnce(&Path) -> Result<Loaded>,
    target: Option<&'static dyn Format>,
    opts: &ConvertOptions,
    before_save: impl FnOnce() -> bool,
) -> Option<FileOutcome> {
    let failed = |from, read, to, mut e: Error| Some(FileOutcome { from, read, to, diagnostics: e.take_diagnostics(), result: Err(e) });
    let loaded = match open(input) {
        Ok(l) => l,
        Err(e) => return failed(e.format(), false, target.or_else(|| registry::detect_writer(output)), e),
    };
    let from = loaded.format;
    let Some(to) = target.or_else(|| output_format(output, Some(from))) else {
        let msg = Words::new(format!("cannot tell the output format from '{}'; name it with ", output.display()))
            .opt(Opt::To)
            .text(format!(" ({})", registry::names(|f| f.can_write())));
        let e = Error::new(ErrorCode::UnknownFormat, None, msg);
        // What reading reported comes with the refusal.
        return Some(FileOutcome { from: Some(from.name()), read: true, to: None, diagnostics: loaded.diagnostics, result: Err(e) });
    };
    let mut opts = opts.clone();
    if opts.write.file_stem.is_empty() {
        opts = opts.named_for(output);
    }
    // The output is only saved, and the save writes a main file left in pieces: the writer need
    // not copy them into one buffer first.
    opts.write.main_in_pieces = true;
    let converted = match convert_for(Cow::Owned(loaded), to, &opts, Some(output)) {
        Ok(c) => c,
        Err(e) => return failed(Some(from.name()), true, Some(to), e),
    };
    if !before_save() {
        return None;
    }
    let result = converted.save(output);
    Some(FileOutcome { from: Some(from.name()), read: true, to: Some(to), diagnostics: converted.diagnostics, result })
}

impl Converted {
    /// Refuse a path whose stem is not the one the side files were named for.
    fn check_stem(&self, path: &Path) -> std::result::Result<(), String> {
        if self.output.side_files.is_empty() || path.as_os_str() == "-" || stem_of(path) == self.file_stem {
            return Ok(());
        }
        let names: Vec<&str> = self.output.side_files.iter().map(|(n, _)| n.as_str()).collect();
        let (made, asked) = (&self.file_stem, stem_of(path));
        Err(format!(
            "the output was written for the name '{made}' (its side files: {}), not '{asked}': save it under that name, or convert with the write option file_stem = \"{asked}\"",
            names.join(", ")
        ))
    }

    /// Refuse an output that would overwrite a file the input was read from (a buffer beside
    /// it, its mesh or weights), before anything is written. Writing onto the input itself is
    /// allowed, and then so is replacing its side files with the new ones.
    fn check_not_an_input(&self, path: &Path) -> std::result::Result<(), String> {
        if self.reads.is_empty() || path.as_os_str() == "-" {
            return Ok(());
        }
        let real = |p: &Path| std::fs::canonicalize(p).ok();
        // The output's real path is found once (each costs a system call per path component).
        let real_path = real(path);
        if real_path.as_ref().is_some_and(|r| self.reads.first() == Some(r)) {
            return Ok(());
        }
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        let sides = self.output.side_files.iter().map(|(n, _)| {
            let t = dir.join(n);
            let r = real(&t);
            (t, r)
        });
        for (t, r) in std::iter::once((path.to_path_buf(), real_path)).chain(sides) {
            if let Some(r) = r.filter(|r| self.reads.contains(r)) {
                return Err(format!(
                    "{}: is the file {} that the input was read from, and writing it would destroy that input; write to another name or directory",
                    t.display(),
                    r.display()
                ));
            }
        }
        Ok(())
    }
}

/// Convert a read document to `target` (see the [crate docs](crate) for the steps). Give it
/// `&loaded` to convert the same document again to another target (it is copied only when a
/// retarget map or a rest pose changes it), or `loaded` when it is not needed after (it is then
/// changed in place and never copied: the same output, without a copy of every mesh).
pub fn convert<'a>(loaded: impl Into<Cow<'a, Loaded>>, target: &'static dyn Format, opts: &ConvertOptions) -> Result<Converted> {
    convert_for(loaded.into(), target, opts, None)
}

/// [`convert`], for a save to `output` when it is known (a writer's refusal then names it).
fn convert_for(loaded: Cow<'_, Loaded>, target: &'static dyn Format, opts: &ConvertOptions, output: Option<&Path>) -> Result<Converted> {
    let (mut doc, from, name, reads, mut diags) = match loaded {
        Cow::Owned(Loaded { doc, format, diagnostics, name, reads }) => (Cow::Owned(doc), format, Cow::Owned(name), reads, diagnostics),
        Cow::Borrowed(l) => (Cow::Borrowed(&l.doc), l.format, Cow::Borrowed(l.name.as_str()), l.reads.clone(), l.diagnostics.clone()),
    };
    ir::trace::phase("read");
    // What the reader deferred for its own writer (`ReadOptions::extension_use`) is made now if
    // the document goes to another after all.
    if target.namespace().is_none_or(|ns| Some(ns) != from.namespace()) && from.deferred(&doc) {
        from.complete(doc.to_mut());
    }
    let humanoid = humanoid_map(opts);
    if changes_document(target, opts) {
        if let Err(e) = prepare(doc.to_mut(), &name, target, opts, humanoid.as_deref(), &mut diags) {
            return Err(e.with_diagnostics(diags));
        }
    }
    if let Err(e) = check(&doc, &name) {
        return Err(e.with_diagnostics(diags));
    }
    ir::trace::phase("validated");
    // A document that is ours (given, or copied for the map) goes to the writer's frame in place:
    // the writer would otherwise convert a copy of it, every mesh included.
    if let (Cow::Owned(d), Some(frame)) = (&mut doc, target.write_frame()) {
        d.convert_frame(frame);
        ir::trace::phase("frame converted");
    }
    let converted = finish(&doc, from, &name, target, opts, humanoid, diags, output).map(|c| Converted { reads, ..c });
    // Ours and no longer needed: a big document (a bone's extension is a small JSON tree; the
    // 65,535-bone AnvilToolkit skeleton's took ~50 ms to free) is freed on the pool, beside the
    // save.
    if let Cow::Owned(d) = doc {
        let big = ir::big_to_free(&d);
        ir::drop_aside(d, big);
    }
    converted
}

/// A `--map FILE` that holds a humanoid map (VRM role → bone, a JSON object with `humanoid`)
/// rather than a retarget map: it is handed to the writer, not applied as a rename.
fn humanoid_map(opts: &ConvertOptions) -> Option<PathBuf> {
    let m = opts.map.as_deref()?;
    // Names, not files: `humanoid` and the built-in retarget maps.
    if m == maps::HUMANOID || maps::built_in_name(m).is_some() {
        return None;
    }
    let p = Path::new(m);
    // A file that cannot be read here (missing, a FIFO, too big) is not a humanoid map; the
    // retarget-map loader then says what is wrong with it.
    let bytes = skelport_ir::files::read_user_file(p, None).ok()?;
    skelport_vrm::HumanoidMap::is_humanoid_map(&bytes).then(|| p.to_path_buf())
}

/// Whether [`prepare`] changes the document (so [`convert`] must work on a copy).
fn changes_document(target: &dyn Format, opts: &ConvertOptions) -> bool {
    opts.map.is_some() || (opts.write.rest_pose == Some(ir::rest::RestPose::TPose) && !target.applies_rest_pose())
}

/// What happens to a document between reading and the writer's check: the retarget map, then
/// the rest pose the writer does not make itself (`--rest-pose t-pose`, from the humanoid's
/// roles). Both follow the document's parents, joints and skins, so it is [`check`]ed first (and
/// again after, as every conversion is).
/// `humanoid` is `--map` when it names a humanoid map file ([`humanoid_map`], looked at once per
/// conversion).
pub(crate) fn prepare(
    doc: &mut Document,
    name: &str,
    target: &dyn Format,
    opts: &ConvertOptions,
    humanoid: Option<&Path>,
    diags: &mut Diagnostics,
) -> Result<()> {
    check(doc, name)?;
    if let Some(m) = opts.map.as_ref().filter(|_| humanoid.is_none()) {
        maps::for_sound_document(m, doc, Some(target)).and_then(|map| retarget_valid(doc, &map, diags)).map_err(|e| e.in_file(name))?;
    }
    if opts.write.rest_pose == Some(ir::rest::RestPose::TPose) && !target.applies_rest_pose() {
        skelport_vrm::t_pose(doc, humanoid, diags).map_err(|e| {
            Error::new(ErrorCode::Write, Some(name), Words::new(format!("{name}: ")).opt(Opt::RestPose).text(format!(" t-pose: {e}")))
        })?;
    }
    Ok(())
}

/// Write, judge the losses, apply `strict`. `output`, when known, names the file in a writer's
/// refusal.
#[allow(clippy::too_many_arguments, reason = "the pipeline's state at its last step, each used once")]
fn finish(
    doc: &Document,
    from: &'static dyn Format,
    name: &str,
    target: &'static dyn Format,
    opts: &ConvertOptions,
    humanoid: Option<PathBuf>,
    mut diags: Diagnostics,
    output: Option<&Path>,
) -> Result<Converted> {
    let mut write = opts.write.clone();
    if write.humanoid_map.is_none() {
        write.humanoid_map = humanoid;
    }
    if write.file_stem.is_empty() {
        write.file_stem = stem_of(Path::new(name));
    }
    // Before the output exists: finding a humanoid indexes every bone name (3.3 MB for 65,535
    // bones), which beside a big output would raise the peak. Said after the writer's lines.
    let mut hint = Diagnostics::default();
    humanoid_hint(doc, target, opts, &mut hint);
    let output = match render_valid(doc, target, &write) {
        Ok((output, reported)) => {
            diags.items.extend(reported.items);
            output
        }
        Err(e) => {
            let keep = targets_that_write(doc, target, &write).map(|others| format!("; convert to {others} to keep the meshes"));
            let to = output.map_or_else(|| target.name().to_owned(), |o| o.display().to_string());
            let msg = Words::new(format!("{name} → {to}: ")).then(e.words().clone()).text(keep.unwrap_or_default());
            return Err(Error::new(ErrorCode::Write, Some(name), msg).with_diagnostics(diags));
        }
    };
    ir::trace::phase("rendered");
    diags.items.extend(hint.items);
    let grave = skin_losses(doc, from, target, &mut diags);
    if grave > 0 && !opts.allow_loss {
        let lines: Vec<&str> = diags.of(Severity::Loss).filter(|d| d.code.starts_with("skin.")).map(|d| d.message.as_str()).collect();
        // The losses' own advice (`--mesh`) is said by the front end too.
        let msg = Words::new(format!("{name}: converting to {} would leave the skin behind:\n  ", target.name()))
            .then(Words::from_cli(&lines.join("\n  ")))
            .text("\nnothing written; pass ")
            .opt(Opt::AllowLoss)
            .text(" to write it anyway");
        return Err(Error::new(ErrorCode::Loss, Some(name), msg).with_format(from.name()).with_diagnostics(diags));
    }
    if opts.strict {
        // What the user asked for is no surprise: the merges of `map`, the influences cut by
        // `max_influences`, the rest pose asked for (docs/cli.md, --strict).
        let asked = |code: &str| {
            (code == "retarget.dropped" && opts.map.is_some())
                || (opts.write.max_influences.is_some() && matches!(code, "gltf.max-influences" | "dae-influences"))
                || (opts.write.rest_pose.is_some() && code == "rest.t-pose")
        };
        let losses: Vec<&str> = diags.of(Severity::Loss).filter(|d| !asked(&d.code)).map(|d| d.message.as_str()).collect();
        if !losses.is_empty() {
            let msg = Words::new(format!("{name}: "))
                .opt(Opt::Strict)
                .text(format!(": {} loss(es) converting to {}:\n  ", losses.len(), target.name()))
                .then(Words::from_cli(&losses.join("\n  ")));
            return Err(Error::new(ErrorCode::Strict, Some(name), msg).with_diagnostics(diags));
        }
    }
    Ok(Converted { from, to: target, output, file_stem: write.file_stem, diagnostics: diags, reads: Vec::new() })
}

/// When `target` refused a document that has meshes but no bones (a rig format has nothing to
/// write), the formats of the registry whose writers accept it, asked by writing it: `None` for
/// any other refusal, or when no format writes the document.
fn targets_that_write(doc: &Document, target: &dyn Format, opts: &WriteOptions) -> Option<String> {
    let bones: usize = doc.skeletons.iter().map(|s| s.bones.len()).sum();
    if bones > 0 || doc.meshes.is_empty() {
        return None;
    }
    let accepting: Vec<&str> = registry::formats()
        .iter()
        .filter(|f| f.can_write() && f.name() != target.name())
        .filter(|f| f.write(doc, opts, &mut Diagnostics::default()).is_ok())
        .map(|f| f.name())
        .collect();
    (!accepting.is_empty()).then(|| accepting.join(", "))
}

/// A target whose rigs use a humanoid's names of their own (Second Life's joints, AnvilToolkit's
/// biped), written without a map from a rig whose humanoid a built-in map recognises (Mixamo,
/// MakeHuman, a VRM's roles) and whose bones are not those names: say that `--map humanoid` gives
/// the target's own rig (note `convert.map-humanoid`). Not conditioned on `Holds::any_skeleton`:
/// every such target also writes any other skeleton as it is (the SL `.dae` as generic Collada the
/// SL importer refuses), which is why the hint is needed.
fn humanoid_hint(doc: &Document, target: &dyn Format, opts: &ConvertOptions, diags: &mut Diagnostics) {
    let Some(names) = target.humanoid_names() else { return };
    if opts.map.is_some() {
        return;
    }
    // The document is the conversion's, checked.
    let Ok(map) = maps::humanoid_chain(doc, target) else { return };
    let renamed = map.bones.iter().filter(|(from, to)| from != to).count();
    if renamed == 0 {
        return;
    }
    // Second Life's joints are checked by the SL importer's rules (`validate --target sl`), not
    // by the `.dae` format's; other targets have no check of bone names to point to.
    let (whose, check) = if names == "sl-bento" {
        ("Second Life's joints".to_owned(), format!(" (`validate --target {}` checks it)", validate::SL_TARGET))
    } else {
        (format!("{}'s own bone names", target.name()), String::new())
    };
    diags.info(
        "convert.map-humanoid",
        format!(
            "the rig is a humanoid skelport recognises, but {renamed} of its bones are not {whose}: the map `{}` (--map {}) \
             renames them, giving the rig the target's importer expects{check}",
            maps::HUMANOID,
            maps::HUMANOID,
        ),
    );
}

/// The losses that leave a user without the skin they had: reported as `skin.*` losses (a
/// reader's `skin.weights-dropped` among them), counted. Only where the target holds skins: a
/// skeleton-only target (AnvilToolkit) drops skins by what it is, which its own loss says.
fn skin_losses(doc: &Document, from: &dyn Format, target: &dyn Format, diags: &mut Diagnostics) -> usize {
    // A writer's own (`skin.mesh-not-written`: weights written for a mesh no file holds) count too.
    let mut n = diags
        .items
        .iter()
        .filter(|d| d.severity == Severity::Loss && matches!(d.code.as_str(), "skin.weights-dropped" | "skin.mesh-not-written"))
        .count();
    let holds = target.holds();
    if !holds.skins {
        return n;
    }
    let mesh_hint = from.mesh_hint().map(|h| format!("; {h}")).unwrap_or_default();
    for skin in &doc.skins {
        let weighted = skin.influences.weighted_vertices();
        // A skin with joints and no weights is a carrier of joints (glTF knows joints only
        // through skins): nothing is lost. One with no joints had weights that matched no bone.
        if skin.joints.is_empty() {
            n += 1;
            diags.loss_at(
                "skin.empty",
                ir::Place::single_quoted("skin", &skin.name),
                format!(
                    "skin '{}' binds no vertex to a bone (its weight groups match no bone of the skeleton: weights made for another rig?); {} would be written without it",
                    skin.name,
                    target.name()
                ),
            );
        } else if weighted > 0 && holds.meshes && doc.mesh_of(skin).is_none() {
            n += 1;
            diags.loss_at(
                "skin.dropped",
                ir::Place::single_quoted("skin", &skin.name),
                format!(
                    "skin '{}' has weights on {weighted} vertices but no mesh to bind them to, and {} keeps weights only on a mesh{mesh_hint}",
                    skin.name,
                    target.name()
                ),
            );
        }
    }
    n
}

/// Check a document against the IR's rules (`skelport_ir::validate`), as every conversion does
/// between reading and writing; `name` names it in the message, which lists up to 20 problems.
pub fn check(doc: &Document, name: &str) -> Result<()> {
    broken_rules(doc, Some(name))
}

/// [`check`] for a document that may come from no file (`name` `None`: [`render`]'s).
fn broken_rules(doc: &Document, name: Option<&str>) -> Result<()> {
    let problems = ir::validate::validate(doc);
    if problems.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = problems.iter().take(20).map(|p| format!("  {p}")).collect();
    let (head, fix) = match name {
        Some(name) => (format!("{name}: the document"), format!("fix them in {name} (each line names the place) and convert again")),
        None => ("the document".to_owned(), "fix them (each line names the place) and write it again".to_owned()),
    };
    let msg = format!("{head} breaks {} rule(s):\n{}\n{fix}", problems.len(), list.join("\n"));
    Err(Error::new(ErrorCode::Invalid, name, msg).at(ir::Place::Path(problems[0].location.clone())))
}

/// Apply a retarget map to a document, reporting every dropped bone as a loss. A document that
/// breaks the IR's rules ([`ir::validate::validate`]: the map follows its parents, joints and
/// skins) is refused with [`ErrorCode::Invalid`] and its problems, and left as it is.
pub fn retarget(doc: &mut Document, map: &ir::retarget::RetargetMap, diags: &mut Diagnostics) -> Result<()> {
    broken_rules(doc, None)?;
    retarget_valid(doc, map, diags)
}

/// [`retarget`] of a document known to keep the IR's rules.
fn retarget_valid(doc: &mut Document, map: &ir::retarget::RetargetMap, diags: &mut Diagnostics) -> Result<()> {
    // Bones that carry weights, by name: dropping one without is no loss of skin.
    let weighted: std::collections::HashSet<String> = doc
        .skins
        .iter()
        .flat_map(|skin| {
            let sk = &doc.skeletons[skin.skeleton.index()];
            let mut used = vec![false; skin.joints.len()];
            for v in 0..skin.influences.vertex_count() {
                for (slot, w) in skin.influences.vertex(v) {
                    if w > 0.0 {
                        if let Some(u) = used.get_mut(slot as usize) {
                            *u = true;
                        }
                    }
                }
            }
            skin.joints.iter().zip(used).filter(|(_, u)| *u).map(|(j, _)| sk.bones[j.index()].name.clone()).collect::<Vec<_>>()
        })
        .collect();
    let r = ir::retarget::apply(doc, map).map_err(|e| Error::new(ErrorCode::Map, None, e.to_string()))?;
    for (bone, into) in &r.dropped {
        if !weighted.contains(bone) {
            // Nothing of the skin goes with it: a note, not a loss.
            let msg = format!("bone \"{bone}\" has no counterpart in map {} and no weights; left out", map.name);
            diags.info_at("retarget.left-out", ir::Place::bone(bone), msg);
            continue;
        }
        let msg = match into {
            Some(t) => format!("bone \"{bone}\" has no counterpart in map {}; its weights merge into \"{t}\"", map.name),
            None => format!("bone \"{bone}\" has no counterpart in map {} and no mapped ancestor; its weights are dropped", map.name),
        };
        diags.loss_at("retarget.dropped", ir::Place::bone(bone), msg);
    }
    Ok(())
}

/// Write a document with a format, returning the bytes and what the writer reported, followed by
/// the losses [`losses::check`] judges. A document that breaks the IR's rules
/// ([`ir::validate::validate`], which writers rely on) is refused with [`ErrorCode::Invalid`]
/// and its problems; no `strict`: [`convert`] adds that.
pub fn render(doc: &Document, format: &dyn Format, opts: &WriteOptions) -> Result<(Output, Diagnostics)> {
    broken_rules(doc, None)?;
    render_valid(doc, format, opts)
}

/// [`render`] of a document already checked (a conversion checks it once, before its map and
/// frame steps).
fn render_valid(doc: &Document, format: &dyn Format, opts: &WriteOptions) -> Result<(Output, Diagnostics)> {
    let mut diagnostics = Diagnostics::default();
    let out = format
        .write(doc, opts, &mut diagnostics)
        .map_err(|e| Error::new(ErrorCode::Write, None, format!("cannot write as {}: {e}", format.name())))?;
    losses::check(doc, format, &mut diagnostics);
    Ok((out, diagnostics))
}

/// The file stem used to name side files: `model` for `out/model.gltf` (and for
/// `model.ir.json`).
pub fn stem_of(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let name = name.strip_suffix(".ir.json").unwrap_or(name);
    match name.rfind('.') {
        Some(i) if i > 0 => name[..i].to_string(),
        _ => name.to_string(),
    }
}

/// The side files the document at `path` names (glTF, GLB, VRM and G4MF buffer URIs), found by
/// a probe of its JSON without reading the document: what a batch keeps its outputs off before
/// any input is read. Nothing for other formats, a JSON chunk that is compressed, or a file that
/// cannot be read (its conversion reports that).
pub fn referenced_files(path: &Path) -> Vec<PathBuf> {
    #[derive(serde::Deserialize)]
    struct Probe {
        #[serde(default)]
        buffers: Vec<Buffer>,
    }
    #[derive(serde::Deserialize)]
    struct Buffer {
        #[serde(default)]
        uri: Option<String>,
    }
    // Only the formats whose documents name side files: a batch of other files is not read twice.
    let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("").to_ascii_lowercase();
    if !matches!(ext.as_str(), "gltf" | "glb" | "vrm" | "g4tf" | "g4b") {
        return Vec::new();
    }
    let Ok(bytes) = io::read_input(path) else { return Vec::new() };
    let json: &[u8] = if bytes.starts_with(b"glTF") {
        let len = bytes.get(12..16).map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
        bytes.get(20..20usize.saturating_add(len)).unwrap_or_default()
    } else if bytes.starts_with(skelport_g4mf::container::MAGIC) {
        match skelport_g4mf::container::split(&bytes, "") {
            Ok(chunks) => chunks
                .into_iter()
                .find(|c| c.kind == skelport_g4mf::container::JSON && c.encoding == skelport_g4mf::container::PLAIN)
                .map_or(&[][..], |c| c.raw),
            Err(_) => &[],
        }
    } else if bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{') {
        &bytes[..]
    } else {
        &[]
    };
    let Ok(probe) = serde_json::from_slice::<Probe>(json) else { return Vec::new() };
    probe.buffers.iter().filter_map(|b| ir::files::referenced_path(path, b.uri.as_deref()?)).collect()
}

/// What one input of a batch writes ([`batch_outputs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchOutput {
    /// The main file: `DIR/STEM.EXT` (the target's first extension).
    pub main: PathBuf,
    /// The side files the target may write beside it (a glTF `.bin`, MPFB's `weights.STEM.json`).
    pub side_files: Vec<PathBuf>,
    /// Why this input must not be converted: a path it would write is also written by another
    /// input of the batch, or is another input; the message names both.
    pub conflict: Option<String>,
}

/// The files each input of a batch into `dir` writes as `target`, with `write`'s options (its
/// `file_stem` is ignored: each output's is the input's stem, or an MPFB `rig.<name>.json`'s
/// `<name>`), and the inputs that must not be
/// converted because two of them would write the same file, main or side (`rig.x.glb` and
/// `x.glb` both write `weights.x.json` as MPFB), or one would overwrite another's input. Every
/// path is known before anything is written, so such inputs fail, naming each other, and no file
/// of the batch is written twice.
///
/// The side files are those the target writes for the demo sample (which has a skeleton, a skin
/// and a mesh) under the same stem and options: a superset of what a smaller document gets.
pub fn batch_outputs(inputs: &[PathBuf], dir: &Path, target: &'static dyn Format, write: &WriteOptions) -> Vec<BatchOutput> {
    let ext = target.extensions().first().copied().unwrap_or("out");
    let sample = demo::sample();
    let sides_for = |stem: &str| -> Vec<String> {
        let opts = WriteOptions { file_stem: stem.to_owned(), embed: write.embed, compress: write.compress, ..Default::default() };
        let mut doc = sample.clone();
        if let Some(frame) = target.write_frame() {
            doc.convert_frame(frame);
        }
        target.write(&doc, &opts, &mut Diagnostics::default()).map(|o| o.side_files.into_iter().map(|s| s.0).collect()).unwrap_or_default()
    };
    // A target that writes no side file for one stem writes none for any: one write, not one
    // per input (a batch of thousands of files).
    let any_sides = !sides_for("skelport-probe").is_empty();
    let mut sides_of: std::collections::HashMap<String, Vec<String>> = std::collections::HashMap::new();
    let mut outs: Vec<BatchOutput> = inputs
        .iter()
        .map(|i| {
            // The MPFB folder layout names a rig by what follows `rig.` (`rig.cmu_mb.json` is the
            // rig `cmu_mb`): its output is `cmu_mb.glb`, not `rig.cmu_mb.glb`.
            let stem = skelport_mpfb::layout::rig_name(i).map_or_else(|| stem_of(i), str::to_owned);
            let sides = sides_of
                .entry(stem.clone())
                .or_insert_with(|| if any_sides { sides_for(&stem) } else { Vec::new() })
                .iter()
                .map(|s| dir.join(s))
                .collect();
            BatchOutput { main: dir.join(format!("{stem}.{ext}")), side_files: sides, conflict: None }
        })
        .collect();
    // Who writes each path; and each input by its real path, so an output cannot overwrite
    // another input of the batch (spelled differently or through a link).
    let mut writers: std::collections::HashMap<&Path, Vec<usize>> = std::collections::HashMap::new();
    for (k, o) in outs.iter().enumerate() {
        let mut mine: Vec<&Path> = std::iter::once(o.main.as_path()).chain(o.side_files.iter().map(PathBuf::as_path)).collect();
        mine.sort();
        mine.dedup();
        for p in mine {
            writers.entry(p).or_default().push(k);
        }
    }
    let real_dir = std::fs::canonicalize(dir).ok();
    // Each input's real path and the real paths of the side files it will read (a buffer beside
    // a .gltf or .g4tf), so that no output of the batch replaces one before (or after) its input
    // is read: file system calls for every input, made on every core, in the inputs' order.
    let found = skelport_ir::map_in_order(inputs.iter().collect(), inputs.len() > 1, |i: &PathBuf| {
        let reads: Vec<PathBuf> = referenced_files(i).iter().filter_map(|f| std::fs::canonicalize(f).ok()).collect();
        (std::fs::canonicalize(i).ok(), reads)
    });
    let mut real_inputs: std::collections::HashMap<PathBuf, usize> = std::collections::HashMap::new();
    let mut real_reads: std::collections::HashMap<PathBuf, usize> = std::collections::HashMap::new();
    for (k, (real, reads)) in found.into_iter().enumerate() {
        if let Some(r) = real {
            real_inputs.insert(r, k);
        }
        for r in reads {
            real_reads.entry(r).or_insert(k);
        }
    }
    let conflicts: Vec<Option<String>> = outs
        .iter()
        .enumerate()
        .map(|(k, o)| {
            for p in std::iter::once(&o.main).chain(&o.side_files) {
                let others: Vec<String> =
                    writers[p.as_path()].iter().filter(|&&u| u != k).map(|&u| format!("'{}'", inputs[u].display())).collect();
                if !others.is_empty() {
                    return Some(format!(
                        "its output {} would also be written by {}; convert inputs with the same file stem in separate batches (or to separate directories)",
                        p.display(),
                        others.join(", ")
                    ));
                }
                let real = real_dir.as_ref().zip(p.file_name()).map(|(d, n)| d.join(n));
                if let Some(&u) = real.as_ref().and_then(|r| real_inputs.get(r)).filter(|&&u| u != k) {
                    return Some(format!(
                        "its output {} is the input '{}' of this batch, which it would overwrite; write to another directory",
                        p.display(),
                        inputs[u].display()
                    ));
                }
                // Its own side file only when it rewrites itself in place.
                let in_place = real_dir.as_ref().zip(o.main.file_name()).map(|(d, n)| d.join(n)).is_some_and(|m| real_inputs.get(&m) == Some(&k));
                if let Some(&u) = real.as_ref().and_then(|r| real_reads.get(r)).filter(|&&u| u != k || !in_place) {
                    return Some(format!(
                        "its output {} is a file that the input '{}' of this batch reads (a buffer it names), which it would overwrite; write to another directory",
                        p.display(),
                        inputs[u].display()
                    ));
                }
            }
            None
        })
        .collect();
    for (o, c) in outs.iter_mut().zip(conflicts) {
        o.conflict = c;
    }
    outs
}
