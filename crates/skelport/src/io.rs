//! File input and atomic output.

use crate::{Error, ErrorCode, Opt, Words};
use anyhow::{Context, Result as Chain};
use skelport_ir::Output;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// The facade's error for an `anyhow` chain of this module: `code` about `path`.
fn as_error(code: ErrorCode, path: &Path) -> impl FnOnce(anyhow::Error) -> Error + '_ {
    move |e| Error::from_chain(code, Some(&path.display().to_string()), &e)
}

/// Largest input file skelport reads, in bytes (documented in docs/limits.md).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Files at least this big are memory-mapped by [`map_input`] instead of read.
pub const MAP_FROM_BYTES: u64 = 1 << 20;

/// An input file's bytes: read into memory ([`read_input`]), or, when the caller opted in with
/// [`map_input`], for a file of [`MAP_FROM_BYTES`] or more, mapped.
///
/// Reading copies the file into memory the kernel must first hand out and zero page by page (a
/// large share of a conversion's page faults; docs/performance.md has the figures). A mapping
/// shares the page cache's pages, filled in as it is made or, when big, on the pool while it is
/// read (`map_file`), as linkers map their inputs.
/// As for them, the file must not be truncated or rewritten while it is mapped: its bytes would
/// change under the reader, and a truncation ends the process with SIGBUS. So mapping is never
/// what a safe call does; a library host (the Python package inside Blender) only ever reads.
#[derive(Debug)]
pub enum InputBytes {
    /// Read into memory (small files, standard input).
    Read(Vec<u8>),
    /// Mapped (shared with the pool's threads that fill in a big mapping's pages).
    Mapped(std::sync::Arc<memmap2::Mmap>),
}

impl std::ops::Deref for InputBytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            InputBytes::Read(v) => v,
            InputBytes::Mapped(m) => m,
        }
    }
}

/// Inputs at least this big are unmapped off the calling thread by [`release`] (and, mapped,
/// have their pages filled in on the pool while they are read: `map_file`).
pub const RELEASE_IN_BACKGROUND_FROM: usize = 4 << 20;

/// Let go of an input's bytes. A big mapping is unmapped on rayon's pool, beside the conversion
/// that goes on, rather than on the thread converting (docs/performance.md has the time it
/// saves). (The kernel lets page faults of the conversion run while another thread unmaps.) Small inputs are dropped here: starting the pool for them would
/// cost more than it saves.
pub fn release(bytes: InputBytes) {
    match bytes {
        InputBytes::Mapped(m) if m.len() >= RELEASE_IN_BACKGROUND_FROM => rayon::spawn(move || drop(m)),
        other => drop(other),
    }
}

/// Read a file, or stdin for `-`, into memory: a file that changes while it is read gives wrong
/// bytes at worst, never a signal.
pub fn read_input(path: &Path) -> crate::Result<InputBytes> {
    // SAFETY: `map: false` maps nothing.
    unsafe { input(path, false) }.map_err(as_error(ErrorCode::Input, path))
}

/// [`read_input`], except that a file of [`MAP_FROM_BYTES`] or more is memory-mapped (a file
/// that cannot be mapped is read).
///
/// # Safety
/// The file must not be truncated while the returned bytes live: reading a page past its new end
/// ends the process with SIGBUS (docs/limits.md). A process that owns its inputs for the length
/// of a command (the CLI) can promise that; a library host cannot.
pub unsafe fn map_input(path: &Path) -> crate::Result<InputBytes> {
    // SAFETY: passed on to the caller.
    unsafe { input(path, true) }.map_err(as_error(ErrorCode::Input, path))
}

/// # Safety
/// With `map`, as [`map_input`].
unsafe fn input(path: &Path, map: bool) -> Chain<InputBytes> {
    if path.as_os_str() == "-" {
        let mut v = Vec::new();
        std::io::stdin().lock().take(MAX_INPUT_BYTES + 1).read_to_end(&mut v).context("<stdin>: cannot read standard input")?;
        anyhow::ensure!(v.len() as u64 <= MAX_INPUT_BYTES, "<stdin>: input is larger than the {MAX_INPUT_BYTES}-byte limit");
        return Ok(InputBytes::Read(v));
    }
    // The size and kind from the open file (one stat, where `metadata` + `fs::read` made two).
    // Opened without blocking, so that a FIFO named by mistake is refused below, not waited on.
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(&mut options, libc::O_NONBLOCK);
    let mut file = options.open(path).with_context(|| format!("{}: cannot open the file; check the path", path.display()))?;
    let meta = file.metadata().with_context(|| format!("{}: cannot open the file; check the path", path.display()))?;
    anyhow::ensure!(meta.is_file(), "{}: is not a regular file", path.display());
    anyhow::ensure!(
        meta.len() <= MAX_INPUT_BYTES,
        "{}: file is {} bytes, over the {MAX_INPUT_BYTES}-byte limit",
        path.display(),
        meta.len()
    );
    if map && meta.len() >= MAP_FROM_BYTES {
        // SAFETY: the mapping is read-only; the one hazard, the file changing while
        // it is mapped, is the caller's promise (`map_input`). A file that cannot be mapped is
        // read instead.
        if let Some(m) = unsafe { map_file(&file, meta.len()) } {
            return Ok(InputBytes::Mapped(m));
        }
    }
    let mut v = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut v).with_context(|| format!("{}: cannot read the file", path.display()))?;
    Ok(InputBytes::Read(v))
}

/// The bytes of a mapping one `MADV_POPULATE_READ` fills (page-aligned).
const FILL_PIECE: usize = 2 << 20;

/// `file` mapped read-only with its pages filled in (`None`: it cannot be mapped, or its length
/// is not `len`). Filling a mapping's page tables is kernel work per page (4.6 ms of a 50 MB
/// input here) that the reader's first pass would otherwise do a page fault at a time. A small
/// mapping is filled as it is made (`MAP_POPULATE`). A big one ([`RELEASE_IN_BACKGROUND_FROM`])
/// is returned at once and filled on rayon's pool, back to front (`MADV_POPULATE_READ`, Linux
/// 5.14), while the reader's first pass goes front to back, faulting in what is not filled yet:
/// the two meet instead of one waiting for the other. The pool's task holds the mapping until it
/// is done.
///
/// # Safety
/// As [`map_input`]: the file must not be truncated while the mapping lives.
unsafe fn map_file(file: &std::fs::File, len: u64) -> Option<std::sync::Arc<memmap2::Mmap>> {
    let big = len >= RELEASE_IN_BACKGROUND_FROM as u64;
    let mut options = memmap2::MmapOptions::new();
    if !big {
        options.populate();
    }
    // SAFETY: the caller's promise.
    let m = std::sync::Arc::new(unsafe { options.map(file) }.ok()?);
    if m.len() as u64 != len {
        return None;
    }
    if big {
        let filled = std::sync::Arc::clone(&m);
        rayon::spawn(move || {
            use rayon::prelude::*;
            let pieces: Vec<usize> = (0..filled.len()).step_by(FILL_PIECE).collect();
            pieces.into_par_iter().rev().for_each(|at| {
                // A kernel without MADV_POPULATE_READ refuses it: the reader faults the pages in.
                let _ = filled.advise_range(memmap2::Advice::PopulateRead, at, FILL_PIECE.min(filled.len() - at));
            });
        });
    }
    Some(m)
}

/// Temporary files created and not yet renamed into place or removed: what
/// [`remove_temporaries`] removes when the process is ended by a signal. A temporary file is
/// registered under this lock as it is created and deregistered under it as it is renamed, so the
/// list never misses a file that exists.
static PENDING: std::sync::Mutex<Vec<PathBuf>> = std::sync::Mutex::new(Vec::new());

fn pending() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PENDING.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// Remove every temporary file this process has created and not yet renamed into place, and keep
/// any other thread from creating or renaming one: for a signal handler (SIGINT, SIGTERM) that
/// ends the process right after (the lock stays held until exit). Each exit path that returns
/// normally removes its own temporaries; this covers the ones a signal cuts short.
pub fn remove_temporaries() {
    let mut list = pending();
    for p in list.drain(..) {
        let _ = std::fs::remove_file(p);
    }
    // Held until the process exits: a thread about to create or rename a temporary waits here.
    std::mem::forget(list);
}

/// A file written to a temporary file beside its target, not yet renamed into place. Dropped
/// before [`Staged::commit`], the temporary file is removed.
struct Staged {
    tmp: Option<tempfile::NamedTempFile>,
    path: PathBuf,
}

impl Drop for Staged {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let mut list = pending();
            list.retain(|p| p != tmp.path());
            drop(tmp);
        }
    }
}

impl Staged {
    /// Write `parts`, one after another, to a temporary file in `path`'s folder. The file gets
    /// the permissions of the file it will replace, or those a plain create gives (0666 less the
    /// umask: tempfile's own default is 0600). A new file gets them as it is created; a replaced
    /// file's are set after the write (the umask must not narrow them), so a batch into a new
    /// directory makes one system call less per file.
    fn new(path: &Path, parts: &[&[u8]]) -> Chain<Staged> {
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".skelport-").suffix(".tmp");
        #[cfg(unix)]
        let replaced = {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(path).ok().map(|m| m.permissions().mode());
            builder.permissions(std::fs::Permissions::from_mode(mode.unwrap_or(0o666)));
            mode
        };
        let mut staged = {
            let mut list = pending();
            let tmp = match builder.tempfile_in(&dir) {
                Ok(t) => t,
                // Say what the user can fix: the folder is missing, or is not a folder.
                Err(_) if !dir.exists() => anyhow::bail!(
                    "{}: the folder {} does not exist; create it (mkdir -p {}) or write elsewhere",
                    path.display(),
                    dir.display(),
                    dir.display()
                ),
                Err(_) if !dir.is_dir() => {
                    anyhow::bail!("{}: {} is not a folder; write into a folder", path.display(), dir.display())
                }
                Err(e) => {
                    return Err(e).with_context(|| format!("{}: cannot create a temporary file in {}", path.display(), dir.display()))
                }
            };
            list.push(tmp.path().to_path_buf());
            Staged { tmp: Some(tmp), path: path.to_path_buf() }
        };
        let tmp = staged.tmp.as_mut().expect("just created");
        write_parts(tmp.as_file_mut(), parts).with_context(|| format!("{}: cannot write", path.display()))?;
        #[cfg(unix)]
        if let Some(mode) = replaced {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode)).ok();
        }
        Ok(staged)
    }

    /// Rename the temporary file over the target.
    fn commit(mut self) -> Chain<PathBuf> {
        let tmp = self.tmp.take().expect("committed once");
        let mut list = pending();
        let at = tmp.path().to_path_buf();
        list.retain(|p| *p != at);
        let path = std::mem::take(&mut self.path);
        // On failure the temporary file is dropped (removed) with the error.
        tmp.persist(&path).map_err(|e| anyhow::anyhow!("{}: cannot rename the temporary file into place: {}", path.display(), e.error))?;
        Ok(path)
    }
}

/// What a path to be written is now.
enum Target {
    /// Nothing, or a regular file (or a link to one): written to a temporary file, renamed over.
    Replace,
    /// A character device (`/dev/null`, a terminal) or a FIFO, or a link to one: written
    /// through, never renamed over (as root, a rename would replace `/dev/null` by a file).
    Through,
}

/// Whether `path` is a character device (`/dev/null`, a terminal) or a link to one.
fn is_char_device(path: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        std::fs::metadata(path).is_ok_and(|m| m.file_type().is_char_device())
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        false
    }
}

/// How `path` is to be written; a directory, a block device or a socket is refused.
fn target_kind(path: &Path) -> Chain<Target> {
    // Follows links: a link to /dev/stdout is written through; a link to a regular file is
    // replaced by the new file, as a rename does.
    let Ok(meta) = std::fs::metadata(path) else { return Ok(Target::Replace) };
    if meta.is_file() {
        return Ok(Target::Replace);
    }
    anyhow::ensure!(!meta.is_dir(), "{}: is a directory; name a file to write", path.display());
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        let t = meta.file_type();
        if t.is_char_device() || t.is_fifo() {
            return Ok(Target::Through);
        }
    }
    anyhow::bail!("{}: is not a regular file, a character device or a FIFO; name a file to write", path.display())
}

/// Write `parts`, one after another, to a device or FIFO that exists (opening a FIFO waits for a
/// reader, as a shell redirection does).
fn write_through(path: &Path, parts: &[&[u8]]) -> Chain<PathBuf> {
    let mut f =
        std::fs::OpenOptions::new().write(true).open(path).with_context(|| format!("{}: cannot open for writing", path.display()))?;
    write_parts(&mut f, parts).and_then(|()| f.flush()).with_context(|| format!("{}: cannot write", path.display()))?;
    Ok(path.to_path_buf())
}

/// Write every byte of `parts`, in order, with as few system calls as the writer allows
/// (`writev` for a file: a GLB's binary pieces go out without first being copied into one
/// buffer). `Write::write_all_vectored` is not stable yet.
fn write_parts(w: &mut impl Write, parts: &[&[u8]]) -> std::io::Result<()> {
    let mut slices: Vec<std::io::IoSlice<'_>> = parts.iter().filter(|p| !p.is_empty()).map(|p| std::io::IoSlice::new(p)).collect();
    let mut rest = slices.as_mut_slice();
    while !rest.is_empty() {
        match w.write_vectored(rest) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(n) => std::io::IoSlice::advance_slices(&mut rest, n),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Write `bytes` to `path` atomically: one write to a temporary file in the same directory, then a
/// rename over the target. On failure or interruption the target is untouched and no temporary file
/// is left behind. There is no fsync: it costs more than a whole small conversion
/// (docs/performance.md) and guards only against power loss, which, as for `cp` and the tools users compare
/// skelport with, is left to the file system (ext4 and XFS flush a file renamed over another).
/// A character device or FIFO (or a link to one) is written through instead.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> crate::Result<()> {
    let write = || match target_kind(path)? {
        Target::Through => write_through(path, &[bytes]).map(drop),
        Target::Replace => Staged::new(path, &[bytes])?.commit().map(drop),
    };
    write().map_err(as_error(ErrorCode::Output, path))
}

/// Write a writer's output, all or nothing: every file (side files, then the main file) is
/// written to a temporary file first; only when all are written are they renamed into place, side
/// files first, so a reader never sees a main file whose side files are missing. When a
/// temporary file cannot be written, nothing is renamed and the temporaries are removed. A path
/// that is a character device or a FIFO (or a link to one: `/dev/null`, `/dev/stdout`) is written
/// through once every temporary is written, never renamed over; a directory, block device or
/// socket is refused before anything is written. `-` writes the main file to stdout (side files
/// are refused there: use `--embed` or a path).
pub fn write_output(path: &Path, out: &Output) -> crate::Result<Vec<PathBuf>> {
    let side_files = || out.side_files.iter().map(|s| s.0.as_str()).collect::<Vec<_>>().join(", ");
    let refused = |text: String| {
        let words = Words::new(text).opt(Opt::Embed);
        Err(Error::new(ErrorCode::Output, Some(&path.display().to_string()), words))
    };
    if path.as_os_str() == "-" && !out.side_files.is_empty() {
        return refused(format!("this output has side files ({}); write to a file or use ", side_files()));
    }
    // A device has no folder of its own: `-o /dev/null --to gltf` must not create a regular
    // `/dev/null.bin`. (A FIFO sits in a folder of the user's: its side files go there.)
    if path.as_os_str() != "-" && !out.side_files.is_empty() && is_char_device(path) {
        let shown = path.display();
        return refused(format!(
            "{shown}: is a device, and this output has side files ({}) that cannot go beside it; write to a file or use ",
            side_files()
        ));
    }
    write_output_chain(path, out).map_err(as_error(ErrorCode::Output, path))
}

fn write_output_chain(path: &Path, out: &Output) -> Chain<Vec<PathBuf>> {
    if path.as_os_str() == "-" {
        write_parts(&mut std::io::stdout().lock(), &out.main_parts()).context("<stdout>: cannot write")?;
        return Ok(vec![]);
    }
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let files: Vec<(PathBuf, Vec<&[u8]>)> = out
        .side_files
        .iter()
        .map(|(name, bytes)| (dir.join(name), vec![bytes.as_slice()]))
        .chain([(path.to_path_buf(), out.main_parts())])
        .collect();
    // Every path's kind first, so that a directory in the way refuses the output before any
    // temporary is written (a rename over it would fail after others were renamed).
    let kinds = files.iter().map(|(p, _)| target_kind(p)).collect::<Chain<Vec<_>>>()?;
    let mut staged = Vec::with_capacity(files.len());
    for ((p, bytes), kind) in files.iter().zip(&kinds) {
        if let Target::Replace = kind {
            staged.push(Staged::new(p, bytes)?);
        }
    }
    let mut written = Vec::with_capacity(files.len());
    for ((p, bytes), kind) in files.iter().zip(&kinds) {
        if let Target::Through = kind {
            written.push(write_through(p, bytes)?);
        }
    }
    written.extend(commit_all(staged)?);
    Ok(written)
}

/// A file about to be replaced, kept under a second name (a hard link beside it) until every
/// rename of the output has succeeded, so a failed later rename can put it back.
struct Kept {
    target: PathBuf,
    /// The hard link to the old file; `None` when there was no file (or no link could be made).
    backup: Option<PathBuf>,
}

/// Rename every staged file into place, all or nothing: when one rename fails, the files already
/// renamed are put back as they were (the old file restored from its hard link, or the new one
/// removed where there was none) and the error says so. Hard links are registered as
/// temporaries, so a signal mid-way removes them too (the targets then hold old or new files,
/// each whole). Where a link cannot be made (a file system without them), that file is replaced
/// without one, as a single rename is.
fn commit_all(staged: Vec<Staged>) -> Chain<Vec<PathBuf>> {
    if staged.len() < 2 {
        return staged.into_iter().map(Staged::commit).collect();
    }
    let kept: Vec<Kept> = staged
        .iter()
        .map(|s| {
            let backup = std::fs::metadata(&s.path).ok().filter(|m| m.is_file()).and_then(|_| {
                let dir = s.path.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
                // Registered under the lock as it is made: a signal handler that takes the list
                // first sees no link (none is made after it), one that comes later removes it.
                let mut list = pending();
                let name = tempfile::Builder::new().prefix(".skelport-").suffix(".bak").make_in(dir, |p| {
                    std::fs::hard_link(&s.path, p)?;
                    list.push(p.to_path_buf());
                    Ok(())
                });
                let p = name.ok()?.into_temp_path().keep().ok()?;
                Some(p)
            });
            Kept { target: s.path.clone(), backup }
        })
        .collect();
    // A link is removed (or renamed back) and deregistered under the lock, so that a signal
    // between the two neither misses it nor removes a path already reused.
    let forget = |k: &Kept| {
        if let Some(b) = &k.backup {
            let mut list = pending();
            let _ = std::fs::remove_file(b);
            list.retain(|p| p != b);
        }
    };
    let mut done = Vec::with_capacity(staged.len());
    for (i, s) in staged.into_iter().enumerate() {
        match s.commit() {
            Ok(p) => done.push(p),
            Err(e) => {
                for k in &kept[..i] {
                    let mut list = pending();
                    let _ = match &k.backup {
                        Some(b) => std::fs::rename(b, &k.target),
                        None => std::fs::remove_file(&k.target),
                    };
                    if let Some(b) = &k.backup {
                        list.retain(|p| p != b);
                    }
                }
                kept[i..].iter().for_each(forget);
                return Err(e.context("the files already renamed were put back as they were"));
            }
        }
    }
    kept.iter().for_each(forget);
    Ok(done)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_whose_main_file_cannot_be_written_replaces_no_side_file() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("model.bin"), b"the old buffer").unwrap();
        // The main file's folder is missing: its temporary file cannot be created. (The side
        // file is named by its absolute path, so that it alone can be written.)
        let main = dir.path().join("sub").join("model.gltf");
        let side = dir.path().join("model.bin").display().to_string();
        let out = Output { main: b"{}".to_vec(), side_files: vec![(side, b"a new buffer".to_vec())], ..Output::default() };
        let e = write_output(&main, &out).unwrap_err();
        assert!(format!("{e:#}").contains(&format!("the folder {} does not exist", main.parent().unwrap().display())), "{e:#}");
        assert_eq!(std::fs::read(dir.path().join("model.bin")).unwrap(), b"the old buffer");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("model.bin")], "temporary files left behind");
        // Where the main file can be written, both are replaced.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let written = write_output(&main, &out).unwrap();
        assert_eq!(written.len(), 2);
        assert_eq!(std::fs::read(dir.path().join("model.bin")).unwrap(), b"a new buffer");
    }

    /// The second rename fails (the main file's path became a non-empty directory after the
    /// output was staged): the side file already renamed is put back, a new side file that had
    /// no old one is removed, and no temporary or backup is left.
    #[test]
    fn a_failed_later_rename_puts_the_earlier_ones_back() {
        for side_existed in [true, false] {
            let dir = tempfile::tempdir().unwrap();
            let (side, main) = (dir.path().join("model.bin"), dir.path().join("model.gltf"));
            if side_existed {
                std::fs::write(&side, b"the old buffer").unwrap();
            }
            let staged = vec![Staged::new(&side, &[b"a new buffer"]).unwrap(), Staged::new(&main, &[b"{}"]).unwrap()];
            std::fs::create_dir(&main).unwrap();
            std::fs::write(main.join("keep"), b"x").unwrap();
            let e = commit_all(staged).unwrap_err();
            assert!(format!("{e:#}").contains("put back as they were"), "{e:#}");
            if side_existed {
                assert_eq!(std::fs::read(&side).unwrap(), b"the old buffer");
            } else {
                assert!(!side.exists(), "the new side file stayed");
            }
            assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
            assert!(!pending().iter().any(|p| p.starts_with(dir.path())), "a temporary is still registered");
        }
        // And when every rename works, the backups are gone and both files are new.
        let dir = tempfile::tempdir().unwrap();
        let (side, main) = (dir.path().join("model.bin"), dir.path().join("model.gltf"));
        std::fs::write(&side, b"the old buffer").unwrap();
        std::fs::write(&main, b"old").unwrap();
        commit_all(vec![Staged::new(&side, &[b"a new buffer"]).unwrap(), Staged::new(&main, &[b"{}"]).unwrap()]).unwrap();
        assert_eq!((std::fs::read(&side).unwrap(), std::fs::read(&main).unwrap()), (b"a new buffer".to_vec(), b"{}".to_vec()));
        assert!(leftovers(dir.path()).is_empty(), "{:?}", leftovers(dir.path()));
    }

    fn leftovers(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        v.retain(|n| n.starts_with(".skelport-"));
        v
    }

    #[cfg(unix)]
    #[test]
    fn a_link_to_a_device_is_written_through_never_renamed_over() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let link = dir.path().join("out.glb");
        std::os::unix::fs::symlink("/dev/null", &link).unwrap();
        let out = Output { main: b"glTF bytes".to_vec(), side_files: vec![], ..Output::default() };
        assert_eq!(write_output(&link, &out).unwrap(), vec![link.clone()]);
        let meta = std::fs::symlink_metadata(&link).unwrap();
        assert!(meta.file_type().is_symlink(), "the link was replaced by a {:?}", meta.file_type());
        assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
        assert!(leftovers(dir.path()).is_empty());
        // write_atomic too.
        write_atomic(&link, b"x").unwrap();
        assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
        assert!(leftovers(dir.path()).is_empty());
    }

    #[cfg(unix)]
    #[test]
    fn a_fifo_and_a_link_to_it_are_written_through() {
        use std::os::unix::fs::FileTypeExt;
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("pipe.gltf");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: mkfifo with a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let link = dir.path().join("link.gltf");
        std::os::unix::fs::symlink(&fifo, &link).unwrap();
        for target in [&fifo, &link] {
            let reader = {
                let fifo = fifo.clone();
                std::thread::spawn(move || std::fs::read(fifo).unwrap())
            };
            // A main file in pieces (`WriteOptions::main_in_pieces`) is written whole.
            let main_pieces = vec![(b"glTF".to_vec(), 2), (vec![], 1), (b"bytes".to_vec(), 0)];
            let out = Output { main: b"{\"asset\":{}}".to_vec(), side_files: vec![], main_pieces };
            write_output(target, &out).unwrap();
            // Before joining: had the FIFO been renamed over, its reader would wait for ever.
            assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo());
            assert_eq!(reader.join().unwrap(), b"{\"asset\":{}}glTF\0\0\0bytes");
            assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink());
            assert!(leftovers(dir.path()).is_empty());
        }
    }

    #[test]
    fn a_directory_in_the_way_refuses_the_output_before_anything_is_written() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("model.bin"), b"the old buffer").unwrap();
        std::fs::create_dir(dir.path().join("model.gltf")).unwrap();
        let out = Output { main: b"{}".to_vec(), side_files: vec![("model.bin".into(), b"a new buffer".to_vec())], ..Output::default() };
        let e = write_output(&dir.path().join("model.gltf"), &out).unwrap_err();
        assert!(format!("{e:#}").contains("is a directory"), "{e:#}");
        assert_eq!(std::fs::read(dir.path().join("model.bin")).unwrap(), b"the old buffer");
        assert!(leftovers(dir.path()).is_empty());
    }

    #[test]
    fn only_an_opted_in_big_file_is_mapped_every_input_whole() {
        let dir = tempfile::tempdir().unwrap();
        // The last: a mapping filled in on the pool while it is read (the last piece short).
        let filled_beside = RELEASE_IN_BACKGROUND_FROM + FILL_PIECE + 4_321;
        for (len, mapped) in [(MAP_FROM_BYTES as usize - 1, false), (MAP_FROM_BYTES as usize + 12_345, true), (filled_beside, true)] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let p = dir.path().join(format!("f{len}"));
            std::fs::write(&p, &bytes).unwrap();
            // SAFETY: nothing changes the file while the test holds the mapping.
            let got = unsafe { map_input(&p) }.unwrap();
            assert_eq!(matches!(got, InputBytes::Mapped(_)), mapped, "{len}");
            assert!(*got == *bytes, "{len}");
            // The safe read never maps, so a file that shrinks under it cannot raise SIGBUS.
            let got = read_input(&p).unwrap();
            assert!(matches!(got, InputBytes::Read(_)), "{len}");
            assert!(*got == *bytes, "{len}");
        }
        // A directory is refused, not mapped or read.
        assert!(read_input(dir.path()).unwrap_err().to_string().contains("not a regular file"));
    }
}
