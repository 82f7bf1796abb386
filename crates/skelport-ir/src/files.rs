//! Opening the files a document refers to, and the files users name in options, safely.
//!
//! Inputs are untrusted: a downloaded `.gltf` may name `../../../etc/passwd` as its buffer and
//! have its bytes come out as vertex data. [`read_referenced`] is the one way a reader opens a
//! file named inside a document (a glTF or G4MF buffer `uri`):
//!
//! 1. the URI is percent-decoded; a URI with a scheme (`file:`, `http:`, …) is refused (data
//!    URIs are decoded by the format before it gets here);
//! 2. an absolute path, or a relative one that climbs out with `..`, is refused without touching
//!    the file system;
//! 3. the path is canonicalized, and so is the input file's folder; unless the first lies inside
//!    the second it is refused (a symbolic link cannot lead out). A missing file and a file
//!    outside get the same message, so nothing is learnt about paths outside the folder;
//! 4. the file is opened without blocking and without following a last symbolic link, and must be
//!    a regular file: a FIFO, a directory or a device is refused at once, never waited on;
//! 5. its size counts against [`MAX_INPUT_BYTES`] (with the input and the side files read before
//!    it) and against the conversion's [`Budget`], which grows with it (a file read twice counts
//!    once towards the budget's growth, but its bytes are charged each time).
//!
//! [`crate::ReadOptions::allow_outside_uris`] lifts steps 2 and 3 for trusted trees; the
//! scheme, regular-file and size checks stay.
//!
//! [`read_user_file`] reads a path the user gave as an option (`--mesh`, `--weights`,
//! `--names`, `--sl-skeleton`): no containment (the user chose it), but the same regular-file,
//! non-blocking and size checks.

use crate::budget::{Budget, BudgetError, MAX_INPUT_BYTES};
use crate::format::{Input, ReadOptions};
use std::io::Read;
use std::path::{Component, Path, PathBuf};

/// Why a file could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// Refused or unreadable; the message says why and never describes a path outside the
    /// input's folder.
    #[error("{0}")]
    Refused(String),
    /// The file would take the decode budget past its limit.
    #[error(transparent)]
    Budget(#[from] BudgetError),
}

/// Percent-decode a URI reference (RFC 3986 §2.1). A `%` not followed by two hex digits stays as
/// it is (lenient, as loaders are).
pub fn percent_decode(s: &str) -> Vec<u8> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'%' && i + 2 < b.len() {
            let hex = |c: u8| (c as char).to_digit(16);
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    out
}

/// Percent-encode a file name for use as a relative URI reference: everything but RFC 3986's
/// unreserved characters and a few path-safe sub-delimiters is encoded as UTF-8 `%XX`, so
/// `my model#1.bin` becomes `my%20model%231.bin` and `a%41.bin` becomes `a%2541.bin`, and a
/// reader that decodes once gets the name back. A `:` is encoded too, so the reference can never
/// be read as a scheme.
pub fn percent_encode(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for &c in name.as_bytes() {
        if c.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=@".contains(&c) {
            out.push(c as char);
        } else {
            out.push_str(&format!("%{c:02X}"));
        }
    }
    out
}

/// The scheme of a URI reference, if it has one (`ALPHA *( ALPHA / DIGIT / "+" / "-" / "." ) ":"`
/// before any `/`, `?` or `#`, RFC 3986 §3.1). A Windows drive (`C:`) counts: it is absolute.
fn scheme(uri: &str) -> Option<&str> {
    let end = uri.find([':', '/', '?', '#'])?;
    if uri.as_bytes()[end] != b':' || end == 0 {
        return None;
    }
    let s = &uri[..end];
    let mut chars = s.chars();
    let first = chars.next()?;
    (first.is_ascii_alphabetic() && chars.all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))).then_some(s)
}

/// The folder side files of `input` are resolved against (`.` for standard input).
fn base_dir(input: &Input<'_>) -> PathBuf {
    match input.path.and_then(Path::parent) {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Where the side-file URI `uri` of the document at `input` leads, found without reading or
/// checking anything: for a caller that must know which files an input will read before it is
/// read (a batch keeping its outputs off them). `None` for a URI with a scheme (`data:` too).
pub fn referenced_path(input: &Path, uri: &str) -> Option<PathBuf> {
    if scheme(uri).is_some() {
        return None;
    }
    let rel = path_from_bytes(percent_decode(uri))?;
    Some(input.parent().unwrap_or(Path::new("")).join(rel))
}

/// Read the file `uri` that `input` names (a buffer or image URI), with the checks of the
/// module's documentation. `budget` is the conversion's ([`ReadOptions::budget_for`]).
pub fn read_referenced(input: &Input<'_>, uri: &str, opts: &ReadOptions, budget: &Budget) -> Result<Vec<u8>, FileError> {
    let refused = |m: String| FileError::Refused(m);
    if let Some(s) = scheme(uri) {
        return Err(refused(format!(
            "'{uri}' is a {s}: URI, and skelport does not fetch URIs; it reads data: URIs and files in the input's folder: put the file there and name it by a relative path"
        )));
    }
    let decoded = percent_decode(uri);
    if decoded.contains(&0) {
        return Err(refused(format!("'{uri}' holds a NUL byte, which no file name can; fix the uri")));
    }
    let rel = path_from_bytes(decoded).ok_or_else(|| refused(format!("'{uri}' is not UTF-8 after percent-decoding; fix the uri")))?;
    let base = base_dir(input);
    let outside_hint = "side files are read only from the input's folder and below: put the file there, or for a trusted tree allow URIs outside it (--allow-outside-uris)";
    let joined = if opts.allow_outside_uris {
        base.join(&rel)
    } else {
        // Lexically first: an absolute path or one that climbs out is refused without asking the
        // file system anything.
        let mut depth = 0usize;
        let mut clean = PathBuf::new();
        for c in rel.components() {
            match c {
                Component::Prefix(_) | Component::RootDir => {
                    return Err(refused(format!("'{uri}' is an absolute path; {outside_hint}")));
                }
                Component::CurDir => {}
                Component::ParentDir if depth == 0 => {
                    return Err(refused(format!("'{uri}' leads outside the input's folder; {outside_hint}")));
                }
                Component::ParentDir => {
                    depth -= 1;
                    clean.pop();
                }
                Component::Normal(n) => {
                    depth += 1;
                    clean.push(n);
                }
            }
        }
        base.join(clean)
    };
    // Canonical paths: a symbolic link inside the folder that leads out is caught here. A
    // missing file and a file outside get the same message, so the message tells nothing about
    // what exists outside.
    let not_found = || {
        refused(format!(
            "'{uri}' is not a file in the input's folder {} (a link leading out of the folder counts as missing); put the file there, or for a trusted tree allow URIs outside it (--allow-outside-uris)",
            base.display()
        ))
    };
    let real = std::fs::canonicalize(&joined).map_err(|_| not_found())?;
    if !opts.allow_outside_uris {
        let real_base =
            std::fs::canonicalize(&base).map_err(|e| refused(format!("cannot resolve the input's folder {}: {e}", base.display())))?;
        if !real.starts_with(&real_base) {
            return Err(not_found());
        }
    }
    read_checked(&real, true, budget, &input.display_name(), &format!("'{uri}'")).map_err(|e| match e {
        FileError::Refused(m) => refused(format!("'{uri}' {m}")),
        b => b,
    })
}

/// Read a file the user named in an option (`--mesh`, `--weights`, `--names`,
/// `--sl-skeleton`): a regular file (opened without blocking, so a FIFO is refused instead of
/// waited on), at most [`MAX_INPUT_BYTES`]. With a `budget`, the file counts into it as a side
/// file. A refusal's message is what follows the file's name (`is not a regular file …`): the
/// caller's error type names the file.
pub fn read_user_file(path: &Path, budget: Option<&Budget>) -> Result<Vec<u8>, FileError> {
    let shown = path.display().to_string();
    let unlimited;
    let budget = match budget {
        Some(b) => b,
        None => {
            unlimited = Budget::unlimited();
            &unlimited
        }
    };
    read_checked(path, false, budget, &shown, "the file")
}

/// Open without blocking, require a regular file, check the size, charge the budget, read.
/// Messages are the part after the file's name.
fn read_checked(path: &Path, no_follow: bool, budget: &Budget, file: &str, element: &str) -> Result<Vec<u8>, FileError> {
    let refused = |m: String| FileError::Refused(m);
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: a FIFO opens at once (and is refused below) instead of waiting for a
        // writer. O_NOFOLLOW: the canonical path has no link left; one put there since is refused.
        let mut flags = libc::O_NONBLOCK | libc::O_NOCTTY;
        if no_follow {
            flags |= libc::O_NOFOLLOW;
        }
        options.custom_flags(flags);
    }
    let mut f = options.open(path).map_err(|e| refused(format!("cannot be opened: {e}")))?;
    let meta = f.metadata().map_err(|e| refused(format!("cannot be opened: {e}")))?;
    if !meta.is_file() {
        return Err(refused("is not a regular file (a directory, device or pipe); name a plain file".into()));
    }
    let len = meta.len();
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if len > MAX_INPUT_BYTES.saturating_sub(budget.input()) {
        return Err(refused(format!(
            "is {len} bytes; with the input and the files read before it that is over the {MAX_INPUT_BYTES}-byte input limit"
        )));
    }
    budget.add_input(&key, len);
    budget.charge(len, file, element)?;
    let mut v = Vec::with_capacity(len as usize);
    // At most one byte more than the size the file had when opened: a file that grows (or a
    // /proc file, which says it is empty) is refused rather than read without end.
    (&mut f).take(len + 1).read_to_end(&mut v).map_err(|e| refused(format!("cannot be read: {e}")))?;
    if v.len() as u64 > len {
        return Err(refused(format!("grew while it was read (it was {len} bytes when opened); it is not a plain file at rest")));
    }
    Ok(v)
}

/// A path from decoded URI bytes. UTF-8 is required, so a name means the same on every platform.
fn path_from_bytes(b: Vec<u8>) -> Option<PathBuf> {
    String::from_utf8(b).ok().map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(path: &Path) -> Input<'_> {
        Input { path: Some(path), bytes: b"{}" }
    }

    fn read(doc: &Path, uri: &str, outside: bool) -> Result<Vec<u8>, FileError> {
        let opts = ReadOptions { allow_outside_uris: outside, ..Default::default() };
        read_referenced(&input(doc), uri, &opts, &Budget::for_input(2))
    }

    fn refused(r: Result<Vec<u8>, FileError>) -> String {
        match r {
            Err(FileError::Refused(m)) => m,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn percent_coding_round_trips() {
        for name in ["my model#1.bin", "a%41.bin", "ü ñ/x?y.bin", "c:d.bin", "plain-name_1.bin", "100%", "%zz"] {
            assert_eq!(percent_decode(&percent_encode(name)), name.as_bytes(), "{name}");
        }
        assert_eq!(percent_encode("my model#1.bin"), "my%20model%231.bin");
        assert_eq!(percent_decode("%2e%2E/x%"), b"../x%");
        assert_eq!(scheme("file:///etc/passwd"), Some("file"));
        assert_eq!(scheme("HTTP://x"), Some("HTTP"));
        assert_eq!(scheme("C:\\x"), Some("C"));
        assert_eq!(scheme("a/b:c"), None);
        assert_eq!(scheme("model.bin"), None);
        assert_eq!(scheme(":x"), None);
    }

    #[test]
    fn inside_reads_outside_is_refused_and_says_nothing_about_it() {
        let t = tempfile::tempdir().unwrap();
        let dir = t.path().join("in");
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        std::fs::write(dir.join("sub/a b.bin"), b"abc").unwrap();
        std::fs::write(t.path().join("secret.bin"), b"secret").unwrap();
        let doc = dir.join("m.gltf");
        assert_eq!(read(&doc, "sub/a%20b.bin", false).unwrap(), b"abc");
        assert_eq!(read(&doc, "./sub/../sub/a b.bin", false).unwrap(), b"abc");
        for uri in ["../secret.bin", "%2e%2e/secret.bin", "sub/../../secret.bin"] {
            assert!(refused(read(&doc, uri, false)).contains("leads outside the input's folder"), "{uri}");
        }
        let abs = t.path().join("secret.bin").display().to_string();
        assert!(refused(read(&doc, &abs, false)).contains("is an absolute path"));
        assert!(refused(read(&doc, "/etc/passwd", false)).contains("is an absolute path"));
        for uri in ["file:///etc/passwd", "file:secret.bin", "http://example.com/a.bin"] {
            assert!(refused(read(&doc, uri, false)).contains("does not fetch URIs"), "{uri}");
        }
        // Opted in: the same paths read.
        assert_eq!(read(&doc, "../secret.bin", true).unwrap(), b"secret");
        assert_eq!(read(&doc, &abs, true).unwrap(), b"secret");
        assert!(refused(read(&doc, "file:secret.bin", true)).contains("does not fetch URIs"));
        // A missing file inside, a link to an existing file outside, a link to a missing one:
        // one message, which does not tell them apart.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(t.path().join("secret.bin"), dir.join("out.bin")).unwrap();
            std::os::unix::fs::symlink(t.path().join("nothing.bin"), dir.join("dangling.bin")).unwrap();
            std::os::unix::fs::symlink(t.path(), dir.join("up")).unwrap();
            let shape = |uri: &str| refused(read(&doc, uri, false)).replace(uri, "U");
            let missing = shape("missing.bin");
            assert!(missing.contains("is not a file in the input's folder"), "{missing}");
            assert_eq!(shape("out.bin"), missing);
            assert_eq!(shape("dangling.bin"), missing);
            assert_eq!(shape("up/secret.bin"), missing);
            assert_eq!(shape("up/nothing.bin"), missing);
            assert_eq!(read(&doc, "out.bin", true).unwrap(), b"secret");
        }
    }

    #[cfg(unix)]
    #[test]
    fn fifos_directories_and_devices_are_refused_at_once() {
        let t = tempfile::tempdir().unwrap();
        let fifo = t.path().join("pipe.bin");
        // mkfifo(1), not libc::mkfifo: this crate forbids unsafe code.
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        std::fs::create_dir(t.path().join("dir.bin")).unwrap();
        let doc = t.path().join("m.gltf");
        // Without O_NONBLOCK the FIFO's open would wait for a writer forever.
        assert!(refused(read(&doc, "pipe.bin", false)).contains("is not a regular file"));
        assert!(refused(read(&doc, "dir.bin", false)).contains("is not a regular file"));
        assert!(refused(read(&doc, "", false)).contains("is not a regular file"));
        for dev in ["/dev/zero", "/dev/urandom", "/dev/null"] {
            assert!(refused(read(&doc, dev, true)).contains("is not a regular file"), "{dev}");
            assert!(refused(read_user_file(Path::new(dev), None)).contains("is not a regular file"), "{dev}");
        }
        // /proc files say they are empty; /proc/self/mem cannot be read from its start.
        for p in ["/proc/self/mem", "/proc/self/status"] {
            if Path::new(p).exists() {
                let m = refused(read(&doc, p, true));
                assert!(m.contains("grew while it was read") || m.contains("cannot be read"), "{p}: {m}");
            }
        }
        let m = refused(read_user_file(&fifo, None));
        assert!(m.starts_with("is not a regular file"), "{m}");
    }

    #[test]
    fn side_files_count_against_the_budget_and_the_input_limit() {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("a.bin"), vec![7u8; 1000]).unwrap();
        let doc = t.path().join("m.gltf");
        let opts = ReadOptions::default();
        let budget = Budget::with_limit(2500);
        for _ in 0..2 {
            read_referenced(&input(&doc), "a.bin", &opts, &budget).unwrap();
        }
        assert_eq!(budget.input(), 1000, "one file, counted once");
        match read_referenced(&input(&doc), "a.bin", &opts, &budget) {
            Err(FileError::Budget(e)) => assert_eq!((e.element.as_str(), e.needed, e.used), ("'a.bin'", 1000, 2000)),
            other => panic!("{other:?}"),
        }
        // The proportional budget grows with the side file.
        let budget = Budget::for_input(10);
        read_referenced(&input(&doc), "a.bin", &opts, &budget).unwrap();
        assert_eq!(budget.input(), 1010);
        // Over the input limit with what was read before.
        let full = Budget::for_input(MAX_INPUT_BYTES - 999);
        assert!(refused(read_referenced(&input(&doc), "a.bin", &opts, &full)).contains("over the 1073741824-byte input limit"));
        assert_eq!(read_user_file(&t.path().join("a.bin"), None).unwrap().len(), 1000);
    }
}
