//! Entry points for the fuzz targets (crates/skelport-fuzz) and the byte-mutation property
//! tests: the first input byte selects a readable format from the registry, the rest is the file.

use crate::registry;
use skelport_ir::{Diagnostics, Format, Input, ReadOptions, WriteOptions};

fn select(data: &[u8]) -> Option<(&'static dyn Format, &[u8])> {
    let readers: Vec<&'static dyn Format> = registry::formats().iter().copied().filter(|f| f.can_read()).collect();
    let (&first, rest) = data.split_first()?;
    Some((readers[first as usize % readers.len()], rest))
}

/// Read the input with the selected format; the result is ignored, only panics and hangs matter.
pub fn read_selected(data: &[u8]) {
    if let Some((f, bytes)) = select(data) {
        let _ = f.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default());
    }
}

/// Read with the selected format, and if that succeeds and the document validates, write it with
/// the same format and read it back: that second read must succeed.
pub fn roundtrip_selected(data: &[u8]) {
    let Some((f, bytes)) = select(data) else { return };
    if !f.can_write() {
        return;
    }
    let Ok(doc) = f.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()) else { return };
    if !skelport_ir::validate::validate(&doc).is_empty() {
        return;
    }
    let opts = WriteOptions { file_stem: "fuzz".into(), embed: true, ..Default::default() };
    let Ok(out) = f.write(&doc, &opts, &mut Diagnostics::default()) else { return };
    if !out.side_files.is_empty() {
        return;
    }
    if let Err(e) = f.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()) {
        panic!("{} accepted a file, wrote it, and refused its own output: {e}", f.name());
    }
}
