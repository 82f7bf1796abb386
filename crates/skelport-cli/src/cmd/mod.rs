//! One file per subcommand: each takes its arguments (`crate::flags`), calls the `skelport`
//! library and prints. Diagnostics come back as data; this module prints them.

pub mod bone;
pub mod convert;
pub mod demo;
pub mod diff;
pub mod formats;
pub mod inspect;
pub mod maps;
pub mod merge;
pub mod render;
pub mod validate;

use skelport::{Diagnostics, Severity};
use std::path::Path;

/// Print diagnostics about `file` on stderr, one line each: `note:`, `warning:` or `loss:`.
pub fn print_diagnostics(file: &str, d: &Diagnostics) {
    for item in &d.items {
        let tag = match item.severity {
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Loss => "loss",
        };
        eprintln!("{tag}: {file}: {}", item.message);
    }
}

/// A file's name for captions: its last component.
pub fn file_label(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}
