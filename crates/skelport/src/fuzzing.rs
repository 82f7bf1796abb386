//! Entry points for the fuzz targets (crates/skelport-fuzz) and the byte-mutation property
//! tests. Every kind of file a registered format reads has its own target, named by the format
//! ([`Format::inputs`]): its main file is read as it is, a mesh or weights file is joined to the
//! demo sample as that format writes it. `read_any`/`roundtrip` take the format from the first
//! input byte instead. A format whose files name side files ([`Format::fuzz_side_file`]) also has a
//! folder target, `<target>_dir` ([`folder_targets`]): the input read by path from a folder laid
//! out with side files, links, a FIFO and a directory, so buffer URIs reach `skelport_ir::files`.
//! Nothing here names a format: adding one to the registry adds its targets.

use crate::registry;
use skelport_ir::{Diagnostics, Document, Format, InMemoryFile, Input, InputKind, InputRole, ReadOptions, WriteOptions};
use std::sync::OnceLock;

/// The fuzz target that reads any registered format, picked by the first byte.
pub const READ_ANY: &str = "read_any";
/// The fuzz target that reads, writes and reads again with the format picked by the first byte.
pub const ROUNDTRIP: &str = "roundtrip";

fn select(data: &[u8]) -> Option<(&'static dyn Format, &[u8])> {
    let readers: Vec<&'static dyn Format> = registry::formats().iter().copied().filter(|f| f.can_read()).collect();
    let (&first, rest) = data.split_first()?;
    Some((readers[first as usize % readers.len()], rest))
}

/// The registry index byte that makes [`read_selected`] / [`roundtrip_selected`] pick `name`.
pub fn selector(name: &str) -> Option<u8> {
    registry::formats().iter().filter(|f| f.can_read()).position(|f| f.name() == name).map(|i| i as u8)
}

/// Read the input with the selected format; the result is ignored, only panics and hangs matter.
pub fn read_selected(data: &[u8]) {
    if let Some((f, bytes)) = select(data) {
        let _ = f.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default());
    }
}

/// Every per-input fuzz target, in registry order: its name, the format and the kind of input.
pub fn targets() -> impl Iterator<Item = (&'static str, &'static dyn Format, &'static InputKind)> {
    registry::formats().iter().filter(|f| f.can_read()).flat_map(|f| f.inputs().iter().map(move |k| (k.fuzz_target, *f, k)))
}

/// The demo sample as `format` writes it (its main file): what a mesh or weights input is joined
/// to. `None` when the format cannot write it.
fn demo_file(format: &'static dyn Format) -> Option<&'static [u8]> {
    type Files = Vec<(&'static str, Option<Vec<u8>>)>;
    static FILES: OnceLock<Files> = OnceLock::new();
    let files = FILES.get_or_init(|| {
        let sample = crate::demo::sample();
        registry::formats()
            .iter()
            .map(|f| {
                let out = f.can_write().then(|| f.write(&sample, &WriteOptions::default(), &mut Diagnostics::default()).ok()).flatten();
                (f.name(), out.map(|o| o.main))
            })
            .collect()
    });
    files.iter().find(|(n, _)| *n == format.name()).and_then(|(_, b)| b.as_deref())
}

/// Feed `data` to `format` as the kind of input `kind` says; only panics, hangs and runaway
/// allocations matter.
pub fn read_input(format: &'static dyn Format, kind: &InputKind, data: &[u8]) {
    let given = || Some(InMemoryFile::new(format!("fuzz.{}", kind.suite), data));
    let (bytes, opts) = match kind.role {
        InputRole::Main => (data, ReadOptions::default()),
        InputRole::Mesh => (demo_file(format).unwrap_or_default(), ReadOptions { mesh_data: given(), ..Default::default() }),
        InputRole::Weights => (demo_file(format).unwrap_or_default(), ReadOptions { weights_data: given(), ..Default::default() }),
    };
    let read = format.read(Input { path: None, bytes }, &opts, &mut Diagnostics::default());
    if kind.role == InputRole::Main {
        format.fuzz_check(data);
    }
    let Ok(doc) = read else { return };
    read_only_checks(&doc, format);
    // Writers rely on the IR's invariants (`Format::write`): every conversion validates first.
    if skelport_ir::validate::validate(&doc).is_empty() {
        write_checks(&doc);
    }
}

/// What reads a document without validating it first (`inspect`, `diff`, `diff --pose-test`),
/// on any document a fuzz input was read into: each must live with broken rules.
pub fn read_only_checks(doc: &Document, format: &dyn Format) {
    let _ = crate::inspect(doc, format.name());
    let _ = crate::diff::diff(doc, doc, crate::diff::Tolerance::default());
    let _ = crate::diff::pose_test(doc, doc, 1, 1);
    prepare_checks(doc);
}

/// What `convert` does to a document before it is written (`--map`, `--rest-pose t-pose`), on
/// a copy of any document a fuzz input was read into: every built-in map, `humanoid` for each
/// target with humanoid names, and the T-pose for a target that does not make it itself.
fn prepare_checks(doc: &Document) {
    let writers = || registry::formats().iter().copied().filter(|f| f.can_write());
    let Some(plain) = writers().find(|f| !f.applies_rest_pose()) else { return };
    let maps = crate::maps::BUILT_IN.iter().map(|(name, _)| (*name, plain));
    let humanoid = writers().filter(|f| f.humanoid_names().is_some()).map(|f| (crate::maps::HUMANOID, f));
    let mut cases: Vec<(Option<&str>, &'static dyn Format, bool)> = maps.chain(humanoid).map(|(m, f)| (Some(m), f, false)).collect();
    cases.push((None, plain, true));
    // The humanoid's roles renamed first, then posed by them.
    if let Some(f) = writers().find(|f| f.humanoid_names().is_some() && !f.applies_rest_pose()) {
        cases.push((Some(crate::maps::HUMANOID), f, true));
    }
    for (map, target, t_pose) in cases {
        let rest_pose = t_pose.then_some(skelport_ir::rest::RestPose::TPose);
        let opts = crate::ConvertOptions {
            map: map.map(str::to_owned),
            write: WriteOptions { rest_pose, ..Default::default() },
            ..Default::default()
        };
        let mut copy = doc.clone();
        let _ = crate::prepare(&mut copy, "fuzz", target, &opts, None, &mut Diagnostics::default());
    }
}

/// The demo sample with a second, unskinned copy of its mesh: a document the writers' checks
/// ([`write_checks`]) compare something on (the glTF writer encodes meshes ahead from two), and,
/// as each format writes it, a seed of its main-file fuzz target (`cargo xtask fuzz`).
pub fn two_mesh_demo() -> Document {
    let mut doc = crate::demo::sample();
    let copy = skelport_ir::Mesh { name: "sample_copy".into(), ..doc.meshes[0].clone() };
    doc.meshes.push(copy);
    doc
}

/// Every writer's check of its own machinery ([`Format::fuzz_check_write`]) on a document a fuzz
/// input was read into and that validates; how many comparisons they made.
pub fn write_checks(doc: &Document) -> usize {
    registry::formats().iter().filter(|f| f.can_write()).map(|f| f.fuzz_check_write(doc)).sum()
}

/// Read with the selected format, and if that succeeds and the document validates, write it with
/// the same format and read it back: that second read must succeed.
pub fn roundtrip_selected(data: &[u8]) {
    let Some((f, bytes)) = select(data) else { return };
    roundtrip_with(f, bytes);
}

fn roundtrip_with(f: &'static dyn Format, bytes: &[u8]) {
    if !f.can_write() {
        return;
    }
    let Ok(doc) = f.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()) else { return };
    if !skelport_ir::validate::validate(&doc).is_empty() {
        return;
    }
    let opts = WriteOptions { file_stem: "fuzz".into(), embed: true, ..Default::default() };
    let Ok(out) = f.write(&doc, &opts, &mut Diagnostics::default()) else { return };
    if !out.side_files.is_empty() {
        return;
    }
    if let Err(e) = f.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()) {
        panic!("{} accepted a file, wrote it, and refused its own output: {e}", f.name());
    }
}

/// Run the fuzz target `target` ([`READ_ANY`], [`ROUNDTRIP`], or a name from [`targets`]) on one
/// input. Panics on an unknown target, so a renamed one fails the fuzz build's smoke run instead
/// of silently fuzzing nothing.
pub fn run_target(target: &str, data: &[u8]) {
    match target {
        READ_ANY => read_selected(data),
        ROUNDTRIP => roundtrip_selected(data),
        t if folder_target(t).is_some() => {
            if let Some(f) = folder_target(t) {
                drop(read_in_folder(f.format, data));
            }
        }
        t => {
            let (_, format, kind) = targets().find(|(n, _, _)| *n == t).unwrap_or_else(|| panic!("unknown fuzz target {t}"));
            read_input(format, kind, data)
        }
    }
}

/// The fuzz binary of every per-input target (crates/skelport-fuzz): it runs the target named in
/// [`TARGET_VAR`].
pub const INPUT_BIN: &str = "input";
/// The environment variable that tells [`INPUT_BIN`] which target of [`targets`] to run.
pub const TARGET_VAR: &str = "SKELPORT_FUZZ_TARGET";

/// [`run_target`] for the target named in [`TARGET_VAR`], read once. Panics when it is unset or
/// names no target, so a mistyped run fails at once instead of fuzzing nothing.
pub fn run_env_target(data: &[u8]) {
    static TARGET: OnceLock<String> = OnceLock::new();
    let t = TARGET.get_or_init(|| {
        let t = std::env::var(TARGET_VAR).unwrap_or_else(|_| panic!("set {TARGET_VAR} to a fuzz target (`cargo xtask fuzz` does)"));
        assert!(targets().any(|(n, _, _)| n == t) || folder_target(&t).is_some(), "{TARGET_VAR}={t} names no fuzz target");
        t
    });
    run_target(t, data)
}

/// A folder target: its name (`<the main input's target>_dir`), its format and the side file
/// put beside the input when the input brings none.
#[derive(Debug)]
pub struct FolderTarget {
    /// The target's name.
    pub name: String,
    /// The format that reads the input.
    pub format: &'static dyn Format,
    /// The demo's side file as the format would load it.
    pub side_file: Vec<u8>,
}

/// Every folder target, in registry order: one per readable format that names side files.
pub fn folder_targets() -> &'static [FolderTarget] {
    static TARGETS: OnceLock<Vec<FolderTarget>> = OnceLock::new();
    TARGETS.get_or_init(|| {
        let demo: Document = crate::demo::sample();
        registry::formats()
            .iter()
            .filter(|f| f.can_read())
            .filter_map(|f| {
                let main = f.inputs().iter().find(|k| k.role == InputRole::Main)?;
                let side_file = f.fuzz_side_file(&demo)?;
                Some(FolderTarget { name: format!("{}_dir", main.fuzz_target), format: *f, side_file })
            })
            .collect()
    })
}

/// The folder target named `name`.
pub fn folder_target(name: &str) -> Option<&'static FolderTarget> {
    folder_targets().iter().find(|t| t.name == name)
}

/// Splits a folder target's input: the main file before it, the side file `sample.bin` after.
pub const SIDE_FILE_SEPARATOR: &[u8] = b"\n--skelport-side-file--\n";

/// The folder the folder targets read in, made once per process:
///
/// ```text
/// <tmp>/skelport-fuzz-<pid>/
///     secret.bin            a regular file outside the input's folder
///     trap.bin              a FIFO outside it (opening it blocking would hang: a timeout)
///     in/model.<ext>        the input (rewritten for every run)
///     in/sample.bin         the side file (from the input, or the demo's)
///     in/sub/sample.bin     the same, one folder down
///     in/link.bin           a link to ../secret.bin (leads out)
///     in/inside.bin         a link to sample.bin (stays in)
///     in/pipe.bin           a FIFO
///     in/dir.bin            a directory
/// ```
///
/// so that URIs reach every case of skelport_ir::files, and a reader that follows a URI out of
/// the folder hangs on the trap or reads the secret.
fn fuzz_folder() -> &'static std::path::Path {
    static DIR: OnceLock<std::path::PathBuf> = OnceLock::new();
    /// Removes the folder when the process exits (libFuzzer and the test harness both exit).
    #[cfg(unix)]
    extern "C" fn remove_folder() {
        if let Some(d) = DIR.get() {
            let _ = std::fs::remove_dir_all(d);
        }
    }
    DIR.get_or_init(|| {
        let root = std::env::temp_dir().join(format!("skelport-fuzz-{}", std::process::id()));
        #[cfg(unix)]
        // SAFETY: registers a plain function with no arguments, as atexit requires.
        unsafe {
            libc::atexit(remove_folder);
        }
        let inside = root.join("in");
        let _ = std::fs::create_dir_all(inside.join("sub"));
        let _ = std::fs::create_dir_all(inside.join("dir.bin"));
        let _ = std::fs::write(root.join("secret.bin"), vec![0x5Au8; 4096]);
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink(root.join("secret.bin"), inside.join("link.bin"));
            let _ = std::os::unix::fs::symlink("sample.bin", inside.join("inside.bin"));
            for fifo in [root.join("trap.bin"), inside.join("pipe.bin")] {
                if let Ok(c) = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()) {
                    // SAFETY: a valid NUL-terminated path; failure (it exists) is fine.
                    unsafe { libc::mkfifo(c.as_ptr(), 0o600) };
                }
            }
        }
        root
    })
}

/// Read `data` with `format` from a file in the fuzz folder, its side file beside it: the path
/// reaches buffer URIs and skelport_ir::files, which the byte-only targets never do. `data` is
/// the main file, then optionally [`SIDE_FILE_SEPARATOR`] and the side file (else the demo's,
/// [`Format::fuzz_side_file`]). The result (the targets ignore it; tests look at it), or `None`
/// when the folder cannot be written.
pub fn read_in_folder(format: &'static dyn Format, data: &[u8]) -> Option<Result<Document, String>> {
    let (main, side) = match data.windows(SIDE_FILE_SEPARATOR.len()).position(|w| w == SIDE_FILE_SEPARATOR) {
        Some(at) => (&data[..at], &data[at + SIDE_FILE_SEPARATOR.len()..]),
        None => (data, folder_targets().iter().find(|t| t.format.name() == format.name()).map_or(&[][..], |t| &t.side_file[..])),
    };
    let inside = fuzz_folder().join("in");
    let ext = format.extensions().first().copied().unwrap_or("in");
    let path = inside.join(format!("model.{ext}"));
    if std::fs::write(&path, main).is_err()
        || std::fs::write(inside.join("sample.bin"), side).is_err()
        || std::fs::write(inside.join("sub/sample.bin"), side).is_err()
    {
        return None;
    }
    Some(
        format
            .read(Input { path: Some(&path), bytes: main }, &ReadOptions::default(), &mut Diagnostics::default())
            .map_err(|e| e.to_string()),
    )
}
