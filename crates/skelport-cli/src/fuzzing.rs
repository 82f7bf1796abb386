//! Entry points for the fuzz targets (crates/skelport-fuzz) and the byte-mutation property
//! tests. Each reader has its own target, reached through the registry by format name (so a
//! format crate can be swapped without touching the targets); `read_any`/`roundtrip` take the
//! format from the first input byte instead.

use crate::registry;
use skelport_ir::{Diagnostics, Document, Format, Input, ReadOptions, WriteOptions};
use std::sync::OnceLock;

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

/// Read `data` with the registered format `name` (`mpfb`, `anvil`, `gltf`, …); only panics,
/// hangs and runaway allocations matter. Panics if no such readable format is registered, so a
/// renamed format fails the fuzz build's smoke test instead of silently fuzzing nothing.
pub fn read_named(name: &str, data: &[u8]) {
    let f = registry::by_name(name).filter(|f| f.can_read()).unwrap_or_else(|| panic!("no readable format named {name}"));
    let _ = f.read(Input { path: None, bytes: data }, &ReadOptions::default(), &mut Diagnostics::default());
}

/// The demo rig read as MPFB without a mesh: the skeleton the weights target joins weights to.
fn demo_rig() -> &'static Document {
    static RIG: OnceLock<Document> = OnceLock::new();
    RIG.get_or_init(|| {
        let mpfb = registry::by_name("mpfb").expect("mpfb is registered");
        let out = mpfb.write(&crate::demo::sample(), &WriteOptions::default(), &mut Diagnostics::default()).expect("demo writes as MPFB");
        mpfb.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default())
            .expect("demo rig reads back")
    })
}

/// MPFB weights (`weights.*.json`): join `data` to the demo rig as `--weights` does.
pub fn read_mpfb_weights(data: &[u8]) {
    let mut doc = demo_rig().clone();
    let _ = skelport_mpfb::read::read_weights(data, "fuzz.weights.json", &mut doc, &mut Diagnostics::default());
}

/// Wavefront OBJ, the `--mesh` reader.
pub fn read_obj(data: &[u8]) {
    let _ = skelport_obj::parse(data, "fuzz.obj");
}

/// Read with the selected format, and if that succeeds and the document validates, write it with
/// the same format and read it back: that second read must succeed.
pub fn roundtrip_selected(data: &[u8]) {
    let Some((f, bytes)) = select(data) else { return };
    roundtrip_with(f, bytes);
}

/// [`roundtrip_selected`] with the format given by name.
pub fn roundtrip_named(name: &str, data: &[u8]) {
    let f = registry::by_name(name).filter(|f| f.can_read()).unwrap_or_else(|| panic!("no readable format named {name}"));
    roundtrip_with(f, data);
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

/// The per-reader fuzz targets: (target name, what it reads). `cargo xtask fuzz` seeds each from
/// testdata/ files this reader recognises; [`run_target`] dispatches.
pub const TARGETS: &[(&str, &str)] = &[
    ("mpfb_rig", "mpfb"),
    ("mpfb_weights", "mpfb-weights"),
    ("obj", "obj"),
    ("anvil", "anvil"),
    ("anvil_schema", "anvil-schema"),
    ("g4tf", "g4tf"),
    ("g4b", "g4b"),
    ("gltf", "gltf"),
    ("glb", "glb"),
    ("dae", "dae"),
    ("sl_skeleton", "sl-skeleton"),
    ("ir_json", "ir-json"),
    ("gltf_dir", "gltf"),
    ("g4tf_dir", "g4tf"),
    ("g4b_dir", "g4b"),
];

/// Run the fuzz target `target` (a name from [`TARGETS`], or `read_any` / `roundtrip`) on one input.
pub fn run_target(target: &str, data: &[u8]) {
    match target {
        "read_any" => read_selected(data),
        "roundtrip" => roundtrip_selected(data),
        "mpfb_weights" => read_mpfb_weights(data),
        "obj" => read_obj(data),
        "gltf_dir" => drop(read_in_folder("gltf", data)),
        "g4tf_dir" => drop(read_in_folder("g4tf", data)),
        "g4b_dir" => drop(read_in_folder("g4b", data)),
        t => {
            let (_, name) = TARGETS.iter().find(|(n, _)| *n == t).unwrap_or_else(|| panic!("unknown fuzz target {t}"));
            read_named(name, data)
        }
    }
}

/// Splits a `*_dir` target's input: the main file before it, the side file `sample.bin` after.
pub const SIDE_FILE_SEPARATOR: &[u8] = b"\n--skelport-side-file--\n";

/// The folder the `*_dir` targets read in, made once per process:
///
/// ```text
/// <tmp>/skelport-fuzz-<pid>/
///     secret.bin            a regular file outside the input's folder
///     trap.bin              a FIFO outside it (opening it blocking would hang: a timeout)
///     in/model.<ext>        the input (rewritten for every run)
///     in/sample.bin         the side file (from the input, or the demo's buffer)
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

/// The demo's buffer as glTF and as G4MF write it: the side file when the input brings none.
fn demo_buffer(format: &str) -> &'static [u8] {
    static GLTF: OnceLock<Vec<u8>> = OnceLock::new();
    static G4MF: OnceLock<Vec<u8>> = OnceLock::new();
    let write = |name: &str| {
        let f = registry::by_name(name).expect("registered");
        f.write(&crate::demo::sample(), &WriteOptions { file_stem: "sample".into(), ..Default::default() }, &mut Diagnostics::default())
            .expect("the demo writes")
    };
    if format == "gltf" {
        GLTF.get_or_init(|| write("gltf").side_files.into_iter().next().map(|s| s.1).unwrap_or_default())
    } else {
        G4MF.get_or_init(|| {
            let out = write("g4b");
            let chunks = skelport_g4mf::container::read(&out.main, "demo").unwrap_or_default();
            chunks.into_iter().find(|c| c.kind == skelport_g4mf::container::BLOB).map(|c| c.data).unwrap_or_default()
        })
    }
}

/// Read `data` with the format `name` from a file in [`fuzz_folder`], its side file beside it:
/// the path reaches buffer URIs and skelport_ir::files, which the byte-only targets never do.
/// `data` is the main file, then optionally [`SIDE_FILE_SEPARATOR`] and the side file. The
/// result (the targets ignore it; tests look at it), or `None` when the folder cannot be written.
pub fn read_in_folder(name: &str, data: &[u8]) -> Option<Result<Document, String>> {
    let f = registry::by_name(name).filter(|f| f.can_read()).unwrap_or_else(|| panic!("no readable format named {name}"));
    let (main, side) = match data.windows(SIDE_FILE_SEPARATOR.len()).position(|w| w == SIDE_FILE_SEPARATOR) {
        Some(at) => (&data[..at], &data[at + SIDE_FILE_SEPARATOR.len()..]),
        None => (data, demo_buffer(name)),
    };
    let inside = fuzz_folder().join("in");
    let path = inside.join(format!("model.{name}"));
    if std::fs::write(&path, main).is_err()
        || std::fs::write(inside.join("sample.bin"), side).is_err()
        || std::fs::write(inside.join("sub/sample.bin"), side).is_err()
    {
        return None;
    }
    Some(f.read(Input { path: Some(&path), bytes: main }, &ReadOptions::default(), &mut Diagnostics::default()).map_err(|e| e.to_string()))
}
