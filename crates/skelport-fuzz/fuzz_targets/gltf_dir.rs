//! gltf read from a file in a folder with its side file, links, a FIFO and a directory beside
//! it, so buffer URIs reach skelport_ir::files: must never panic, hang, read outside the folder
//! or allocate without bound. `cargo xtask fuzz gltf_dir SECONDS`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport_cli::fuzzing::run_target("gltf_dir", data);
});
