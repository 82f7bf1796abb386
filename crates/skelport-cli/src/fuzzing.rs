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
];

/// Run the fuzz target `target` (a name from [`TARGETS`], or `read_any` / `roundtrip`) on one input.
pub fn run_target(target: &str, data: &[u8]) {
    match target {
        "read_any" => read_selected(data),
        "roundtrip" => roundtrip_selected(data),
        "mpfb_weights" => read_mpfb_weights(data),
        "obj" => read_obj(data),
        t => {
            let (_, name) = TARGETS.iter().find(|(n, _)| *n == t).unwrap_or_else(|| panic!("unknown fuzz target {t}"));
            read_named(name, data)
        }
    }
}
