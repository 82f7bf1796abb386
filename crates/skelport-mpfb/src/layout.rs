//! Where MPFB keeps its files, and how to tell them apart: a data folder holds
//! `rigs/<kind>/rig.<name>.json` beside `weights.<name>.json`, and the base mesh the weights number
//! at `3dobjs/base.obj` (MPFB's `src/mpfb/data/`). Used to join a rig to its weights in a batch,
//! to find the base mesh when only `--weights` is given, and to name a file given in the wrong
//! place.

use std::path::{Path, PathBuf};

/// What an MPFB-related file is, told from its first bytes (not a validation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// An MPFB rig (`rig.*.json`): bones with head and tail strategies.
    Rig,
    /// An MPFB weights file (`weights.*.json`): a `weights` object of group → [[vertex, weight]].
    Weights,
    /// A Wavefront OBJ mesh.
    Obj,
    /// Anything else.
    Other,
}

impl FileKind {
    /// Tell the kind from the first bytes of a file (8 KiB are plenty).
    pub fn of(head: &[u8]) -> FileKind {
        let s = skelport_ir::format::head_text(&head[..head.len().min(8192)]);
        let t = s.trim_start_matches('\u{feff}').trim_start();
        if t.starts_with('{') {
            if t.contains("\"skelport_ir\"") || t.contains("\"asset\"") {
                return FileKind::Other;
            }
            // Weights files name groups ("head" is a bone name) but never placement strategies.
            if t.contains("\"strategy\"") && t.contains("\"head\"") && t.contains("\"tail\"") {
                return FileKind::Rig;
            }
            if t.contains("\"weights\"") {
                return FileKind::Weights;
            }
            return FileKind::Other;
        }
        // OBJ: the first statement that is not a comment is one of OBJ's keywords.
        let first = t.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with('#'));
        match first.and_then(|l| l.split_whitespace().next()) {
            Some("v" | "vt" | "vn" | "f" | "o" | "g" | "s" | "mtllib" | "usemtl") => FileKind::Obj,
            None if t.starts_with('#') => FileKind::Obj,
            _ => FileKind::Other,
        }
    }

    /// The kind of the file at `path` (its first 8 KiB), `Other` when it cannot be read.
    pub fn of_file(path: &Path) -> FileKind {
        use std::io::Read;
        let mut head = Vec::with_capacity(8192);
        // Only regular files: a FIFO named by mistake must not block.
        match std::fs::metadata(path) {
            Ok(m) if m.is_file() => {}
            _ => return FileKind::Other,
        }
        match std::fs::File::open(path) {
            Ok(f) => match f.take(8192).read_to_end(&mut head) {
                Ok(_) => FileKind::of(&head),
                Err(_) => FileKind::Other,
            },
            Err(_) => FileKind::Other,
        }
    }
}

/// `<name>` of a file called `rig.<name>.json` (`Some("game_engine")`), `None` for other names.
pub fn rig_name(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()?.strip_prefix("rig.")?.strip_suffix(".json").filter(|n| !n.is_empty())
}

/// `<name>` of a file called `weights.<name>.json`, `None` for other names.
pub fn weights_name(path: &Path) -> Option<&str> {
    path.file_name()?.to_str()?.strip_prefix("weights.")?.strip_suffix(".json").filter(|n| !n.is_empty())
}

/// The `weights.<name>.json` beside `rig.<name>.json`, when that file exists.
pub fn weights_beside(rig: &Path) -> Option<PathBuf> {
    let name = rig_name(rig)?;
    let w = rig.with_file_name(format!("weights.{name}.json"));
    w.is_file().then_some(w)
}

/// The `rig.<name>.json` a `weights.<name>.json` belongs to (whether or not it exists).
pub fn rig_beside(weights: &Path) -> Option<PathBuf> {
    Some(weights.with_file_name(format!("rig.{}.json", weights_name(weights)?)))
}

/// MakeHuman's base mesh where MPFB keeps it for a rig or weights file at `file`: the data folder's
/// `3dobjs/base.obj`, the data folder being the parent of the `rigs` folder the file is in (at
/// most two folders down: `rigs/standard/rig.x.json`). `None` when the file is not in such a
/// layout or the mesh is not there.
pub fn base_mesh_for(file: &Path) -> Option<PathBuf> {
    let dir = file.parent().filter(|d| !d.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let dir = std::fs::canonicalize(dir).ok()?;
    for d in dir.ancestors().take(2) {
        if d.file_name().is_some_and(|n| n == "rigs") {
            let mesh = d.parent()?.join("3dobjs").join("base.obj");
            return mesh.is_file().then_some(mesh);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_and_names() {
        assert_eq!(FileKind::of(br#"{"copyright": "x", "weights": {"root": [[0, 1.0]]}}"#), FileKind::Weights);
        assert_eq!(FileKind::of(br#"{"root": {"head": {"strategy": "VERTEX"}, "tail": {}}}"#), FileKind::Rig);
        assert_eq!(FileKind::of(b"# Blender\nmtllib a.mtl\nv 0 0 0\n"), FileKind::Obj);
        assert_eq!(FileKind::of(b"v 0 0 0\nf 1 1 1\n"), FileKind::Obj);
        assert_eq!(FileKind::of(br#"{"asset": {"version": "2.0"}}"#), FileKind::Other);
        assert_eq!(FileKind::of(b"<?xml version=\"1.0\"?>"), FileKind::Other);
        assert_eq!(rig_name(Path::new("a/rig.game_engine.json")), Some("game_engine"));
        assert_eq!(weights_name(Path::new("weights.cmu_mb.json")), Some("cmu_mb"));
        assert_eq!(rig_name(Path::new("rig.json")), None);
        assert_eq!(rig_beside(Path::new("d/weights.x.json")), Some(PathBuf::from("d/rig.x.json")));
    }
}
