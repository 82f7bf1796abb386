//! The `skelport` command line tool as a library: loading and saving through the format
//! registry, the demo sample, inspect/diff reports. `main.rs` only parses arguments.

pub mod demo;
pub mod diff;
pub mod fuzzing;
pub mod inspect;
pub mod io;
pub mod losses;
pub mod maps;
pub mod matrix;
pub mod registry;

use anyhow::{anyhow, bail, Context, Result};
use skelport_ir::{Diagnostics, Document, Format, Input, ReadOptions, WriteOptions};
use std::path::Path;

/// A document read from a file, with the format it came from and what the reader reported.
pub struct Loaded {
    pub doc: Document,
    pub format: &'static dyn Format,
    pub diagnostics: Diagnostics,
}

/// Resolve a `--from`/`--to` name, with a helpful error.
pub fn format_named(name: &str, want_reader: bool) -> Result<&'static dyn Format> {
    let f = registry::by_name(name).ok_or_else(|| anyhow!("unknown format '{name}'; known formats: {}", registry::names(|_| true)))?;
    if want_reader && !f.can_read() {
        bail!("format '{name}' cannot be read; readable formats: {}", registry::names(|f| f.can_read()));
    }
    if !want_reader && !f.can_write() {
        bail!("format '{name}' cannot be written; writable formats: {}", registry::names(|f| f.can_write()));
    }
    Ok(f)
}

/// Read a file (or `-` for stdin) into a document.
pub fn load(path: &Path, from: Option<&str>, opts: &ReadOptions) -> Result<Loaded> {
    let bytes = io::read_input(path)?;
    skelport_ir::trace::phase("input mapped");
    let shown = if path.as_os_str() == "-" { None } else { Some(path) };
    let format = match from {
        Some(name) => format_named(name, true)?,
        None => registry::detect_reader(shown, &bytes[..bytes.len().min(8192)]).ok_or_else(|| {
            anyhow!(
                "{}: cannot tell the format from the extension or the content; name it with --from ({})",
                path.display(),
                registry::names(|f| f.can_read())
            )
        })?,
    };
    let mut diagnostics = Diagnostics::default();
    let doc = format
        .read(Input { path: shown, bytes: &bytes }, opts, &mut diagnostics)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("{}: cannot read as {}", path.display(), format.name()))?;
    io::release(bytes);
    Ok(Loaded { doc, format, diagnostics })
}

/// Apply a retarget map to a loaded document, reporting every dropped bone as a loss.
pub fn retarget(doc: &mut Document, map: &skelport_ir::retarget::RetargetMap, diags: &mut skelport_ir::Diagnostics) -> Result<()> {
    let r = skelport_ir::retarget::apply(doc, map)?;
    for (bone, into) in &r.dropped {
        let msg = match into {
            Some(t) => format!("bone \"{bone}\" has no counterpart in map {}; its weights merge into \"{t}\"", map.name),
            None => format!("bone \"{bone}\" has no counterpart in map {} and no mapped ancestor; its weights are dropped", map.name),
        };
        diags.loss("retarget.dropped", msg);
    }
    Ok(())
}

/// Write a document with a format, returning the bytes and what the writer reported, with the
/// shared loss checks of [`losses::check`].
pub fn render(doc: &Document, format: &dyn Format, opts: &WriteOptions) -> Result<(skelport_ir::Output, Diagnostics)> {
    let mut diagnostics = Diagnostics::default();
    let out = format
        .write(doc, opts, &mut diagnostics)
        .map_err(|e| anyhow!("{e}"))
        .with_context(|| format!("cannot write as {}", format.name()))?;
    losses::check(doc, format, &mut diagnostics);
    Ok((out, diagnostics))
}

/// The file stem used to name side files.
pub fn stem_of(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("out");
    let name = name.strip_suffix(".ir.json").unwrap_or(name);
    match name.rfind('.') {
        Some(i) if i > 0 => name[..i].to_string(),
        _ => name.to_string(),
    }
}
