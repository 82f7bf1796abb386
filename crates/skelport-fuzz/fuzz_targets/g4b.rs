//! G4MF binary (.g4b): must never panic, hang or allocate without bound. `cargo xtask fuzz g4b SECONDS`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport_cli::fuzzing::run_target("g4b", data);
});
