//! `skelport formats`: the registry, one line per format (or JSON: schemas/formats.schema.json).

use anyhow::Result;
use serde::Serialize;
use std::process::ExitCode;

/// One format in `skelport formats --json`.
#[derive(Serialize)]
struct FormatInfo {
    name: &'static str,
    read: bool,
    write: bool,
    /// Without the dot; empty when the format is told by content only.
    extensions: Vec<&'static str>,
    description: &'static str,
}

/// Run `skelport formats`.
pub fn run(json: bool) -> Result<ExitCode> {
    if json {
        let formats: Vec<FormatInfo> = skelport::formats()
            .iter()
            .map(|f| FormatInfo {
                name: f.name(),
                read: f.can_read(),
                write: f.can_write(),
                extensions: f.extensions().to_vec(),
                description: f.description(),
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "formats": formats }))?);
        return Ok(ExitCode::SUCCESS);
    }
    for f in skelport::formats() {
        // A format told by content alone (sl-skeleton) has no extension: a dash, not a bare dot.
        let ext = if f.extensions().is_empty() {
            "-".to_owned()
        } else {
            f.extensions().iter().map(|e| format!(".{e}")).collect::<Vec<_>>().join(" ")
        };
        say!(
            "{:<14} {:<5} {:<5} {:<17} {}",
            f.name(),
            if f.can_read() { "read" } else { "" },
            if f.can_write() { "write" } else { "" },
            ext,
            f.description()
        );
    }
    Ok(ExitCode::SUCCESS)
}
