//! `skelport validate`: a file against the IR's rules and, optionally, a target's: what the
//! target's writer refuses or cannot hold, or (target `sl`) every rule of the Second Life
//! importer.

use crate::{render, stem_of, Error, ErrorCode, Loaded, Result};
use serde::Serialize;
use skelport_ir::validate::Problem;
use skelport_ir::{Diagnostic, Format, Severity, WriteOptions};
use std::path::Path;

/// The target name that checks the Second Life importer's rules (not a format name).
pub const SL_TARGET: &str = "sl";

/// What [`validate`] found.
#[derive(Debug, Serialize)]
pub struct Validation {
    /// The format the file was read as.
    #[serde(skip)]
    pub format: &'static dyn Format,
    /// Broken rules: each makes the file invalid.
    pub problems: Vec<Problem>,
    /// What the reader warned about, and what the target would lose.
    pub warnings: Vec<String>,
}

impl Validation {
    /// No problem.
    pub fn valid(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Check `loaded` (read from the file at `path`) against the IR's rules and, when `target` is
/// given, that target's: a format name, or [`SL_TARGET`] for the SL importer (checked on the
/// `.dae` skelport would upload, or on the file itself when it is one; `sl_skeleton` replaces the
/// built-in SL skeleton).
pub fn validate(path: &Path, loaded: &Loaded, target: Option<&str>, sl_skeleton: Option<&Path>) -> Result<Validation> {
    let mut problems = skelport_ir::validate::validate(&loaded.doc);
    // Writers rely on the IR's rules: a target is checked by writing, so only a sound document.
    let sound = problems.is_empty();
    // What a lenient reader went past but the format's own rules forbid: the file is invalid.
    let structural = loaded.format.structural();
    problems.extend(loaded.diagnostics.items.iter().filter(|d| structural.contains(&d.code.as_str())).map(structural_problem));
    let mut warnings: Vec<String> = loaded
        .diagnostics
        .items
        .iter()
        .filter(|d| d.severity != Severity::Info && !structural.contains(&d.code.as_str()))
        .map(|d| d.message.clone())
        .collect();
    if let Some(t) = target {
        if t.eq_ignore_ascii_case(SL_TARGET) {
            let r = skelport_sl::validate_target(&loaded.doc, path, sl_skeleton)
                .map_err(|e| Error::new(ErrorCode::Input, Some(&loaded.name), e.to_string()))?;
            problems.extend(r.problems);
            warnings.extend(r.warnings);
        } else if sound {
            problems.extend(target_problems(path, loaded, t)?);
        } else {
            let fmt = target_format(t)?;
            warnings.push(format!(
                "target {} not checked: a target is checked by writing to it, and writers take only a document that keeps the IR's rules",
                fmt.name()
            ));
        }
    }
    Ok(Validation { format: loaded.format, problems, warnings })
}

/// A structural diagnostic as a problem: at its place ([`Diagnostic::place`]: `bufferViews[6]`,
/// `$.bones.x.parent`), or the file as a whole.
fn structural_problem(d: &Diagnostic) -> Problem {
    match d.place() {
        Some(place) => Problem { location: place, message: d.what().to_owned() },
        None => Problem { location: "file".to_owned(), message: d.message.clone() },
    }
}

/// The writable format a `--target` names; an unknown name is refused with the list of targets
/// (`sl` among them) and the closest to what was typed (`s1` → `sl`).
fn target_format(target: &str) -> Result<&'static dyn Format> {
    match crate::registry::by_name(target) {
        Some(f) if f.can_write() => Ok(f),
        _ => {
            let mut targets = vec![SL_TARGET];
            targets.extend(crate::formats().iter().filter(|f| f.can_write()).map(|f| f.name()));
            let list = format!("{SL_TARGET} (the Second Life importer's rules), {}", targets[1..].join(", "));
            let msg = match skelport_ir::suggest::closest(target, targets.iter().copied()) {
                Some(c) => format!("unknown target '{target}': did you mean '{c}'? targets: {list}"),
                None => format!("unknown target '{target}'; targets: {list}"),
            };
            Err(Error::new(ErrorCode::UnknownFormat, None, msg))
        }
    }
}

/// The target format's rules: whatever the target's writer refuses or cannot hold.
fn target_problems(file: &Path, l: &Loaded, target: &str) -> Result<Vec<Problem>> {
    let fmt = target_format(target)?;
    let mut out = Vec::new();
    match render(&l.doc, fmt, &WriteOptions { file_stem: stem_of(file), ..Default::default() }) {
        Err(e) => out.push(Problem { location: format!("target {}", fmt.name()), message: format!("{e:#}") }),
        Ok((_, d)) => {
            out.extend(d.of(Severity::Loss).map(|d| Problem { location: format!("target {}", fmt.name()), message: d.message.clone() }))
        }
    }
    Ok(out)
}
