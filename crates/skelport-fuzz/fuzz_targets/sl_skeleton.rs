//! Second Life avatar_skeleton.xml: must never panic, hang or allocate without bound. `cargo xtask fuzz sl_skeleton SECONDS`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport_cli::fuzzing::run_target("sl_skeleton", data);
});
