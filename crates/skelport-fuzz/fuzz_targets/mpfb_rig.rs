//! MPFB rig JSON: must never panic, hang or allocate without bound. `cargo xtask fuzz mpfb_rig SECONDS`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport_cli::fuzzing::run_target("mpfb_rig", data);
});
