//! File input and atomic output.

use anyhow::{Context, Result};
use skelport_ir::Output;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

/// Largest input file skelport reads, in bytes (documented in docs/limits.md).
pub const MAX_INPUT_BYTES: u64 = 1 << 30;

/// Read a file, or stdin for `-`.
pub fn read_input(path: &Path) -> Result<Vec<u8>> {
    if path.as_os_str() == "-" {
        let mut v = Vec::new();
        std::io::stdin().lock().take(MAX_INPUT_BYTES + 1).read_to_end(&mut v).context("<stdin>: cannot read standard input")?;
        anyhow::ensure!(v.len() as u64 <= MAX_INPUT_BYTES, "<stdin>: input is larger than the {MAX_INPUT_BYTES}-byte limit");
        return Ok(v);
    }
    let meta = std::fs::metadata(path).with_context(|| format!("{}: cannot open the file; check the path", path.display()))?;
    anyhow::ensure!(meta.is_file(), "{}: is not a regular file", path.display());
    anyhow::ensure!(
        meta.len() <= MAX_INPUT_BYTES,
        "{}: file is {} bytes, over the {MAX_INPUT_BYTES}-byte limit",
        path.display(),
        meta.len()
    );
    std::fs::read(path).with_context(|| format!("{}: cannot read the file", path.display()))
}

/// Write `bytes` to `path` atomically: one write to a temporary file in the same directory, then a
/// rename over the target. On failure or interruption the target is untouched and no temporary file
/// is left behind. There is no fsync: it cost 0.4–8 ms per file (more than the whole Linden
/// conversion) and guards only against power loss, which, as for `cp` and the tools users compare
/// skelport with, is left to the file system (ext4 and XFS flush a file renamed over another).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let mut tmp = tempfile::Builder::new()
        .prefix(".skelport-")
        .suffix(".tmp")
        .tempfile_in(&dir)
        .with_context(|| format!("{}: cannot create a temporary file in {}", path.display(), dir.display()))?;
    tmp.write_all(bytes).with_context(|| format!("{}: cannot write", path.display()))?;
    // tempfile creates 0600 files; give the output the permissions a plain create would (or
    // keep those of the file it replaces).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).map(|m| m.permissions().mode()).unwrap_or(0o644);
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(mode)).ok();
    }
    tmp.persist(path).map_err(|e| anyhow::anyhow!("{}: cannot rename the temporary file into place: {}", path.display(), e.error))?;
    Ok(())
}

/// Write a writer's output: side files first (each atomically), then the main file, so a reader
/// never sees a main file whose side files are missing. `-` writes the main file to stdout
/// (side files are refused there: use `--embed` or a path).
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
    let mut written = Vec::new();
    for (name, bytes) in &out.side_files {
        let p = dir.join(name);
        write_atomic(&p, bytes)?;
        written.push(p);
    }
    write_atomic(path, &out.main)?;
    written.push(path.to_path_buf());
    Ok(written)
}
