//! Entry points for the fuzz targets (crates/skelport-fuzz) and the byte-mutation property
//! tests. Every kind of file a registered format reads has its own target, named by the format
//! ([`Format::inputs`]): its main file is read as it is, a mesh or weights file is joined to the
//! demo sample as that format writes it. `read_any`/`roundtrip` take the format from the first
//! input byte instead. Nothing here names a format: adding one to the registry adds its targets.

use crate::registry;
use skelport_ir::{Diagnostics, Format, InMemoryFile, Input, InputKind, InputRole, ReadOptions, WriteOptions};
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
    let _ = format.read(Input { path: None, bytes }, &opts, &mut Diagnostics::default());
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
        assert!(targets().any(|(n, _, _)| n == t), "{TARGET_VAR}={t} names no fuzz target");
        t
    });
    run_target(t, data)
}
