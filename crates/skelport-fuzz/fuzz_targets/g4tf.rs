//! G4MF text (.g4tf): must never panic, hang or allocate without bound. `cargo xtask fuzz g4tf SECONDS`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport_cli::fuzzing::run_target("g4tf", data);
});
