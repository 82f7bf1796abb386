//! `skelport maps`: the built-in retarget maps (or JSON: schemas/maps.schema.json).

use anyhow::Result;
use std::process::ExitCode;

/// Run `skelport maps`.
pub fn run(json: bool) -> Result<ExitCode> {
    let maps = skelport::maps()?;
    if json {
        let list: Vec<serde_json::Value> = maps
            .iter()
            .map(|(name, m)| serde_json::json!({ "name": name, "bones": m.bones.len(), "description": m.description }))
            .collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "maps": list }))?);
        return Ok(ExitCode::SUCCESS);
    }
    for (name, m) in maps {
        say!("{name:<26} {:>3} bones  {}", m.bones.len(), m.description);
    }
    Ok(ExitCode::SUCCESS)
}
