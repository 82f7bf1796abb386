//! `skelport maps`: the built-in retarget maps (or JSON: schemas/maps.schema.json).

use anyhow::Result;
use std::process::ExitCode;

/// Run `skelport maps`.
pub fn run(json: bool) -> Result<ExitCode> {
    let maps = skelport::maps()?;
    if json {
        let list: Vec<serde_json::Value> = maps
            .iter()
            .map(|(name, m)| {
                serde_json::json!({
                    "name": name, "source": m.source, "target": m.target, "bones": m.bones.len(), "description": m.description,
                })
            })
            .collect();
        println!("{}", serde_json::to_string_pretty(&serde_json::json!({ "maps": list }))?);
        return Ok(ExitCode::SUCCESS);
    }
    for (name, m) in maps {
        say!("{name:<26} {:>3} bones  {}", m.bones.len(), m.description);
    }
    // Not a map file but a name every conversion takes: the way from any recognised humanoid
    // (Mixamo, MakeHuman, a VRM's roles) to the target's own names (Second Life, AnvilToolkit).
    println!(
        "{:<26}            renames a humanoid skelport recognises (Mixamo, MPFB, VRM roles) to the target's bone names: \
         `--map {}` for Second Life (.dae) and AnvilToolkit",
        skelport::maps::HUMANOID,
        skelport::maps::HUMANOID
    );
    Ok(ExitCode::SUCCESS)
}
