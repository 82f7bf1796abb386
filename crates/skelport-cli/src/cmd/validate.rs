//! `skelport validate`: a file against the IR's rules and, with `--target`, a format's or the SL
//! importer's.

use crate::flags::ValidateArgs;
use anyhow::Result;
use serde::Serialize;
use std::process::ExitCode;

/// The `--json` report.
#[derive(Serialize)]
struct ValidateReport {
    file: String,
    format: String,
    target: Option<String>,
    valid: bool,
    problems: Vec<skelport::ir::validate::Problem>,
    warnings: Vec<String>,
}

/// Run `skelport validate`.
pub fn run(a: ValidateArgs) -> Result<ExitCode> {
    let l = super::open(&a.file, &a.read.options())?;
    let name = l.name.clone();
    let v = skelport::validate(&a.file, &l, a.target.as_deref(), a.read.sl_skeleton.as_deref())?;
    let valid = v.valid();
    if a.json {
        let r = ValidateReport {
            file: name,
            format: l.format.name().into(),
            target: a.target.clone(),
            valid,
            problems: v.problems,
            warnings: v.warnings,
        };
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        for w in &v.warnings {
            // The SL validator's warnings begin with the file and its line (`f.dae:114:9: …`).
            if w.strip_prefix(name.as_str()).is_some_and(|rest| rest.starts_with(':')) {
                tell!("warning: {w}");
            } else {
                tell!("warning: {name}: {w}");
            }
        }
        print_problems(&name, &v.problems);
        if valid {
            say!("{name}: valid ({}{})", l.format.name(), a.target.as_deref().map(|t| format!(", target {t}")).unwrap_or_default());
        } else {
            say!("{name}: {} problem(s)", v.problems.len());
        }
    }
    Ok(if valid { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The problems, one line each, except that problems with the same message at several places
/// (one broken rule at each joint of a skin) are one line: the message, how many places, the
/// first few (`-v` lists every place).
fn print_problems(name: &str, problems: &[skelport::ir::validate::Problem]) {
    const SHOWN: usize = 3;
    let mut groups: Vec<(&str, Vec<&str>)> = Vec::new();
    for p in problems {
        match groups.iter_mut().find(|(m, _)| *m == p.message) {
            Some((_, places)) => places.push(p.location.as_str()),
            None => groups.push((p.message.as_str(), vec![p.location.as_str()])),
        }
    }
    for (message, places) in groups {
        if places.len() == 1 || super::verbose() {
            for place in places {
                // The file as a whole: named once.
                if place == "file" {
                    say!("{name}: {message}");
                } else {
                    say!("{name}: {place}: {message}");
                }
            }
        } else {
            let first = places[..SHOWN.min(places.len())].join("; ");
            let more = if places.len() > SHOWN { "; …" } else { "" };
            say!("{name}: {message} ({} places: {first}{more})", places.len());
        }
    }
}
