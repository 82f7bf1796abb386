//! `skelport formats`: the registry, one line per format.

use anyhow::Result;
use std::process::ExitCode;

/// Run `skelport formats`.
pub fn run() -> Result<ExitCode> {
    for f in skelport::formats() {
        println!(
            "{:<14} {:<5} {:<5} .{:<16} {}",
            f.name(),
            if f.can_read() { "read" } else { "" },
            if f.can_write() { "write" } else { "" },
            f.extensions().join(" ."),
            f.description()
        );
    }
    Ok(ExitCode::SUCCESS)
}
