//! Every reader: the first byte picks the format (by registry index), the rest is the file.
//! One target for all formats keeps CI's build short; `cargo xtask fuzz read_any SECONDS` runs it.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport::fuzzing::read_selected(data);
});
