//! skelport IR JSON: must never panic, hang or allocate without bound. `cargo xtask fuzz ir_json SECONDS`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport_cli::fuzzing::run_target("ir_json", data);
});
