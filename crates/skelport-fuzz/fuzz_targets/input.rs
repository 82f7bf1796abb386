//! Every kind of file a registered format reads, one at a time: `SKELPORT_FUZZ_TARGET` names the
//! target (a format's input, see `skelport::fuzzing::targets`). Must never panic, hang or
//! allocate without bound. `cargo xtask fuzz TARGET SECONDS` sets it, with a corpus and
//! artifacts of the target's own.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport::fuzzing::run_env_target(data);
});
