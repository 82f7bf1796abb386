//! Built-in retarget maps (data in `maps/*.json`, schema `schemas/retarget-map.schema.json`) and
//! loading a map by name or file.

use crate::{Error, ErrorCode, Opt, Words};
use anyhow::Context;
use skelport_ir::retarget::RetargetMap;
use std::path::Path;

/// (name, JSON) of every built-in map.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("mpfb-game_engine-to-sl", include_str!("../maps/mpfb-game_engine-to-sl.json")),
    ("mpfb-default-to-sl", include_str!("../maps/mpfb-default-to-sl.json")),
    ("mpfb-game_engine-to-ac", include_str!("../maps/mpfb-game_engine-to-ac.json")),
    ("mpfb-default-to-ac", include_str!("../maps/mpfb-default-to-ac.json")),
    ("mixamo-to-mpfb-mixamo", include_str!("../maps/mixamo-to-mpfb-mixamo.json")),
    ("mpfb-mixamo-to-mixamo", include_str!("../maps/mpfb-mixamo-to-mixamo.json")),
];

/// Short names for built-in maps (alias, map): `--map mixamo` is what a user with a Mixamo
/// character types first.
pub const ALIASES: &[(&str, &str)] = &[("mixamo", "mixamo-to-mpfb-mixamo")];

/// The built-in map's name that `name` is or stands for, if any.
pub fn built_in_name(name: &str) -> Option<&'static str> {
    let name = ALIASES.iter().find(|(a, _)| *a == name).map_or(name, |(_, m)| *m);
    BUILT_IN.iter().find(|(n, _)| *n == name).map(|(n, _)| *n)
}

/// The `--map` value that renames a humanoid's bones to the names the target format's rigs use
/// (`Format::humanoid_names`), from the bone roles a VRM gave them or a built-in humanoid map
/// that recognises the rig: VRM → Second Life, MakeHuman → AnvilToolkit without a map file.
pub const HUMANOID: &str = "humanoid";

/// The retarget map `--map humanoid` applies to `doc` for `target`. A document that breaks the
/// IR's rules is refused with [`ErrorCode::Invalid`]: finding the humanoid walks its parents.
pub fn humanoid_for(doc: &skelport_ir::Document, target: &dyn skelport_ir::Format) -> crate::Result<RetargetMap> {
    crate::broken_rules(doc, None)?;
    humanoid_chain(doc, target)
}

/// [`humanoid_for`] of a document known to keep the IR's rules.
pub(crate) fn humanoid_chain(doc: &skelport_ir::Document, target: &dyn skelport_ir::Format) -> Result<RetargetMap, Error> {
    let map_error =
        |then: Words| Error::new(ErrorCode::Map, None, Words::default().opt(Opt::Map).text(format!(" {HUMANOID}: ")).then(then));
    let Some(names) = target.humanoid_names() else {
        let with: Vec<&str> =
            crate::registry::formats().iter().filter(|f| f.can_write() && f.humanoid_names().is_some()).map(|f| f.name()).collect();
        return Err(map_error(Words::new(format!(
            "{} holds any bone names, so there is nothing to rename to; it renames a humanoid for {}",
            target.name(),
            with.join(", ")
        ))));
    };
    let map = skelport_vrm::HumanoidMap::built_in(names)
        .with_context(|| format!("built-in humanoid map {names} is missing"))
        .map_err(|e| Error::from_chain(ErrorCode::Map, None, &e))?;
    // The VRM crate's message names the options it advises as the command line does.
    skelport_vrm::humanoid::retarget_map(doc, &map).map_err(|e| map_error(Words::from_cli(&e.to_string())))
}

/// The retarget map `name_or_file` (`--map`) stands for when `doc` is written as `target`:
/// [`HUMANOID`] (the target's humanoid names, so it needs the target: `None` is an error naming
/// `to`), else a built-in map or a map file ([`load`]). For [`HUMANOID`], a document that breaks
/// the IR's rules is refused ([`humanoid_for`]).
pub fn for_document(
    name_or_file: &str,
    doc: &skelport_ir::Document,
    target: Option<&dyn skelport_ir::Format>,
) -> crate::Result<RetargetMap> {
    if name_or_file == HUMANOID {
        crate::broken_rules(doc, None)?;
    }
    for_sound_document(name_or_file, doc, target)
}

/// [`for_document`] of a document known to keep the IR's rules (a conversion's, checked).
pub(crate) fn for_sound_document(
    name_or_file: &str,
    doc: &skelport_ir::Document,
    target: Option<&dyn skelport_ir::Format>,
) -> crate::Result<RetargetMap> {
    match (name_or_file, target) {
        (HUMANOID, Some(t)) => humanoid_chain(doc, t),
        (HUMANOID, None) => Err(Error::new(
            ErrorCode::Map,
            None,
            Words::default()
                .opt(Opt::Map)
                .text(format!(" {HUMANOID} renames to the names of the format written: name it with "))
                .opt(Opt::To),
        )),
        (m, _) => load(m),
    }
}

/// Load a built-in map by name, or a map file by path.
pub fn load(name_or_file: &str) -> crate::Result<RetargetMap> {
    let map_error = |words: Words| Error::new(ErrorCode::Map, None, words);
    if let Some((_, json)) = built_in_name(name_or_file).and_then(|n| BUILT_IN.iter().find(|(b, _)| *b == n)) {
        return serde_json::from_str(json).map_err(|e| map_error(Words::new(format!("built-in map {name_or_file} is broken: {e}"))));
    }
    let p = Path::new(name_or_file);
    if !p.exists() {
        let names: Vec<&str> = BUILT_IN.iter().map(|m| m.0).chain([HUMANOID]).collect();
        let close = skelport_ir::suggest::did_you_mean(name_or_file, names.iter().copied().chain(ALIASES.iter().map(|a| a.0)));
        return Err(map_error(Words::default().opt(Opt::Map).text(format!(
            " {name_or_file}: no built-in map has that name and no such file exists{close}; built-in maps: {} \
             ({HUMANOID}: any humanoid skelport recognises to the target's names, e.g. Mixamo to Second Life); short names: {}",
            names.join(", "),
            ALIASES.iter().map(|(a, m)| format!("{a} ({m})")).collect::<Vec<_>>().join(", ")
        ))));
    }
    // The checked reader: a regular file within the input size limit (a FIFO refused at once).
    let bytes = skelport_ir::files::read_user_file(p, None)
        .map_err(|e| map_error(Words::new(format!("{name_or_file}: {e}; ")).opt(Opt::Map).text(" names a built-in map or a map file")))?;
    serde_json::from_slice(&bytes)
        .map_err(|e| map_error(Words::new(format!("{name_or_file}:{}:{}: not a retarget map: {e}", e.line(), e.column()))))
}
