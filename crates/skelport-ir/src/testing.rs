//! Helpers for tests across the workspace: finding the third-party corpus.
//!
//! The corpus lives beside the project at `../shared/corpus` (or wherever `$SKELPORT_CORPUS`
//! points). Its files are never copied into the project. When `CI` is set and the corpus is
//! missing, [`corpus_root`] panics so the test fails instead of silently skipping.

use std::path::PathBuf;

/// The corpus directory, or `None` outside CI when it is absent (tests then skip with a note).
///
/// # Panics
/// When the `CI` environment variable is set and the corpus cannot be found.
pub fn corpus_root() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("SKELPORT_CORPUS") {
        Some(p) => vec![PathBuf::from(p)],
        None => {
            // Walk up from the crate directory to the workspace root, then `../shared/corpus`.
            let mut v = Vec::new();
            let mut dir = Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
            while let Some(d) = dir {
                v.push(d.join("../shared/corpus"));
                dir = d.parent().map(PathBuf::from);
            }
            v
        }
    };
    for c in candidates {
        if c.is_dir() {
            return c.canonicalize().ok().or(Some(c));
        }
    }
    if std::env::var_os("CI").is_some() {
        panic!("the corpus was not found at ../shared/corpus or $SKELPORT_CORPUS, and CI is set: corpus tests must not be skipped");
    }
    eprintln!("note: corpus not found (set SKELPORT_CORPUS); skipping corpus test");
    None
}

/// A path inside the corpus, or `None` when the corpus is absent outside CI.
pub fn corpus_file(rel: &str) -> Option<PathBuf> {
    corpus_root().map(|r| r.join(rel))
}

/// The workspace root (for `testdata/` and `schemas/`).
pub fn workspace_root() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("testdata").is_dir() || !dir.join("crates").is_dir() {
        if !dir.pop() {
            return PathBuf::from(".");
        }
    }
    dir
}
