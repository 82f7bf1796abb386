//! AnvilToolkit Schema-Based XML: must never panic, hang or allocate without bound. `cargo xtask fuzz anvil_schema SECONDS`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport_cli::fuzzing::run_target("anvil_schema", data);
});
