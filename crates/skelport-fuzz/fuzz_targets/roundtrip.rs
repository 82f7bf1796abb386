//! Read → write → read: whatever a reader accepted, its own writer must write and read back.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    skelport::fuzzing::roundtrip_selected(data);
});
