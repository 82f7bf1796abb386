//! `skelport maps`: the built-in retarget maps.

use anyhow::Result;
use std::process::ExitCode;

/// Run `skelport maps`.
pub fn run() -> Result<ExitCode> {
    for (name, m) in skelport::maps()? {
        println!("{name:<26} {:>3} bones  {}", m.bones.len(), m.description);
    }
    Ok(ExitCode::SUCCESS)
}
