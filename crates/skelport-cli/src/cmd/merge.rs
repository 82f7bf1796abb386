//! `skelport merge`: AnvilToolkit addon skeletons into a main skeleton, as the engine does
//! (`skelport_anvil::commands`).

use crate::flags::anvil::MergeArgs;
use anyhow::{Context, Result};
use skelport_anvil::{commands, AnvilSkeleton, Form, Names};
use std::path::Path;
use std::process::ExitCode;

/// The `--names` list, or the built-in one.
pub fn load_names(path: Option<&Path>) -> Result<Names> {
    match path {
        Some(p) => Names::with_file(p).with_context(|| format!("reading names from {}", p.display())),
        None => Ok(Names::builtin()),
    }
}

/// Read and check a skeleton file (dangling links, duplicate IDs or names are errors).
pub fn open(path: &Path, names: &Names) -> Result<AnvilSkeleton> {
    let bytes = skelport::io::read_input(path)?;
    Ok(commands::open(&bytes, &path.display().to_string(), names)?)
}

/// Run `skelport merge`.
pub fn run(a: MergeArgs) -> Result<ExitCode> {
    let names = load_names(a.names.as_deref())?;
    let main = open(&a.main, &names)?;
    let addons = a.addons.iter().map(|p| Ok((p.display().to_string(), open(p, &names)?))).collect::<Result<Vec<_>>>()?;
    let merged = commands::merge_labelled(&main, &addons, a.form.map(Form::from), a.limit, names)?;
    super::write_file(&a.output, &merged.bytes)?;
    let report = &merged.report;
    for m in &report.matched {
        eprintln!("matched  {m}");
    }
    for m in &report.added {
        eprintln!("added    {m}");
    }
    if report.modifiers_applied > 0 {
        eprintln!("applied  {} modifier(s) from path bones to main bones", report.modifiers_applied);
    }
    eprintln!("{}: {} bones (limit {})", a.output.display(), report.bone_count, merged.limit);
    Ok(ExitCode::SUCCESS)
}
