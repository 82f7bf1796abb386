//! File input and atomic output.

use anyhow::{Context, Result};
use skelport_ir::Output;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Largest input file skelport reads, in bytes (documented in docs/limits.md).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Files at least this big are memory-mapped instead of read (see [`InputBytes`]).
pub const MAP_FROM_BYTES: u64 = 1 << 20;

/// An input file's bytes: read into memory, or for a file of [`MAP_FROM_BYTES`] or more, mapped.
///
/// Reading copies the file into memory the kernel must first hand out and zero page by page (a
/// large share of a conversion's page faults; docs/performance.md has the figures). A mapping shares the page cache's pages, filled in one call (`populate`), as
/// linkers map their inputs. As for them, the file must not be truncated or rewritten while
/// skelport reads it (docs/limits.md): its bytes would change under the reader, and a truncation
/// ends the process with SIGBUS.
#[derive(Debug)]
pub enum InputBytes {
    /// Read into memory (small files, standard input).
    Read(Vec<u8>),
    /// Mapped.
    Mapped(memmap2::Mmap),
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

/// Inputs at least this big are unmapped off the calling thread by [`release`].
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

/// Read a file, or stdin for `-`.
pub fn read_input(path: &Path) -> Result<InputBytes> {
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
    if meta.len() >= MAP_FROM_BYTES {
        // SAFETY: the mapping is read-only and private; the one hazard, the file changing while
        // it is mapped, is documented above and in docs/limits.md. A file that cannot be mapped
        // is read instead.
        if let Ok(m) = unsafe { memmap2::MmapOptions::new().populate().map(&file) } {
            if m.len() as u64 == meta.len() {
                return Ok(InputBytes::Mapped(m));
            }
        }
    }
    let mut v = Vec::with_capacity(meta.len() as usize);
    file.read_to_end(&mut v).with_context(|| format!("{}: cannot read the file", path.display()))?;
    Ok(InputBytes::Read(v))
}

/// A file written to a temporary file beside its target, not yet renamed into place. Dropped
/// before [`Staged::commit`], the temporary file is removed.
struct Staged {
    tmp: tempfile::NamedTempFile,
    path: PathBuf,
}

impl Staged {
    /// Write `bytes` to a temporary file in `path`'s folder. The file gets the permissions of the
    /// file it will replace, or those a plain create gives (0666 less the umask: tempfile's own
    /// default is 0600). A new file gets them as it is created; a replaced file's are set after
    /// the write (the umask must not narrow them), so a batch into a new directory makes one
    /// system call less per file.
    fn new(path: &Path, bytes: &[u8]) -> Result<Staged> {
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
        let mut tmp = builder
            .tempfile_in(&dir)
            .with_context(|| format!("{}: cannot create a temporary file in {}", path.display(), dir.display()))?;
        tmp.write_all(bytes).with_context(|| format!("{}: cannot write", path.display()))?;
        #[cfg(unix)]
        if let Some(mode) = replaced {
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode)).ok();
        }
        Ok(Staged { tmp, path: path.to_path_buf() })
    }

    /// Rename the temporary file over the target.
    fn commit(self) -> Result<PathBuf> {
        let Staged { tmp, path } = self;
        tmp.persist(&path).map_err(|e| anyhow::anyhow!("{}: cannot rename the temporary file into place: {}", path.display(), e.error))?;
        Ok(path)
    }
}

/// Write `bytes` to `path` atomically: one write to a temporary file in the same directory, then a
/// rename over the target. On failure or interruption the target is untouched and no temporary file
/// is left behind. There is no fsync: it costs more than a whole small conversion
/// (docs/performance.md) and guards only against power loss, which, as for `cp` and the tools users compare
/// skelport with, is left to the file system (ext4 and XFS flush a file renamed over another).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    Staged::new(path, bytes)?.commit().map(drop)
}

/// Write a writer's output, all or nothing: every file (side files, then the main file) is
/// written to a temporary file first; only when all are written are they renamed into place, side
/// files first, so a reader never sees a main file whose side files are missing. When a
/// temporary file cannot be written, nothing is renamed and the temporaries are removed. `-`
/// writes the main file to stdout (side files are refused there: use `--embed` or a path).
pub fn write_output(path: &Path, out: &Output) -> Result<Vec<PathBuf>> {
    if path.as_os_str() == "-" {
        anyhow::ensure!(
            out.side_files.is_empty(),
            "this output has side files ({}); write to a file or use --embed",
            out.side_files.iter().map(|s| s.0.as_str()).collect::<Vec<_>>().join(", ")
        );
        std::io::stdout().lock().write_all(&out.main).context("<stdout>: cannot write")?;
        return Ok(vec![]);
    }
    let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
    let mut staged = Vec::with_capacity(out.side_files.len() + 1);
    for (name, bytes) in &out.side_files {
        staged.push(Staged::new(&dir.join(name), bytes)?);
    }
    staged.push(Staged::new(path, &out.main)?);
    staged.into_iter().map(Staged::commit).collect()
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
        let out = Output { main: b"{}".to_vec(), side_files: vec![(side, b"a new buffer".to_vec())] };
        let e = write_output(&main, &out).unwrap_err();
        assert!(format!("{e:#}").contains("cannot create a temporary file"), "{e:#}");
        assert_eq!(std::fs::read(dir.path().join("model.bin")).unwrap(), b"the old buffer");
        let names: Vec<_> = std::fs::read_dir(dir.path()).unwrap().flatten().map(|e| e.file_name()).collect();
        assert_eq!(names, vec![std::ffi::OsString::from("model.bin")], "temporary files left behind");
        // Where the main file can be written, both are replaced.
        std::fs::create_dir(dir.path().join("sub")).unwrap();
        let written = write_output(&main, &out).unwrap();
        assert_eq!(written.len(), 2);
        assert_eq!(std::fs::read(dir.path().join("model.bin")).unwrap(), b"a new buffer");
    }

    #[test]
    fn big_files_are_mapped_small_ones_read_both_whole() {
        let dir = tempfile::tempdir().unwrap();
        for (len, mapped) in [(MAP_FROM_BYTES as usize - 1, false), (MAP_FROM_BYTES as usize + 12_345, true)] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7 % 251) as u8).collect();
            let p = dir.path().join(format!("f{len}"));
            std::fs::write(&p, &bytes).unwrap();
            let got = read_input(&p).unwrap();
            assert_eq!(matches!(got, InputBytes::Mapped(_)), mapped, "{len}");
            assert!(*got == *bytes, "{len}");
        }
        // A directory is refused, not mapped or read.
        assert!(read_input(dir.path()).unwrap_err().to_string().contains("not a regular file"));
    }
}
