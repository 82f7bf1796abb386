//! `skelport merge`: AnvilToolkit addon skeletons into a main skeleton, as the engine does
//! (`skelport_anvil::commands`).

use crate::flags::anvil::MergeArgs;
use anyhow::{bail, Context, Result};
use serde::Serialize;
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
    // Another format's file is named as such, not reported as broken AnvilToolkit XML.
    if let Some(f) = skelport::registry::detect_reader(Some(path), &bytes[..bytes.len().min(8192)]) {
        if !f.name().starts_with("anvil") {
            bail!(
                "{}: this is {} ({}); `skelport bone` and `skelport merge` edit AnvilToolkit skeletons: convert it first (skelport convert {} -o skeleton.xml --to anvil)",
                path.display(),
                f.name(),
                f.description(),
                path.display()
            );
        }
    }
    Ok(commands::open(&bytes, &path.display().to_string(), names)?)
}

/// `skelport merge --json`: what the merge did (schemas/merge-report.schema.json).
#[derive(Serialize)]
struct MergeJson<'a> {
    output: String,
    format: &'static str,
    limit: usize,
    bone_count: usize,
    matched: &'a [String],
    added: &'a [String],
    modifiers_applied: usize,
}

/// Run `skelport merge`.
pub fn run(a: MergeArgs) -> Result<ExitCode> {
    if a.json && a.output.as_os_str() == "-" {
        bail!("--json prints the report on stdout, where -o - would write the skeleton: give -o FILE");
    }
    let names = load_names(a.names.as_deref())?;
    let main = open(&a.main, &names)?;
    let addons = a.addons.iter().map(|p| Ok((p.display().to_string(), open(p, &names)?))).collect::<Result<Vec<_>>>()?;
    let form = a.form.map(Form::from);
    let merged = commands::merge_labelled(&main, &addons, form, a.limit, names)?;
    super::write_file(&a.output, &merged.bytes)?;
    let report = &merged.report;
    if a.json {
        let j = MergeJson {
            output: a.output.display().to_string(),
            format: crate::flags::anvil::format_name(form.unwrap_or(main.form)),
            limit: merged.limit,
            bone_count: report.bone_count,
            matched: &report.matched,
            added: &report.added,
            modifiers_applied: report.modifiers_applied,
        };
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(ExitCode::SUCCESS);
    }
    for m in &report.matched {
        tell!("matched  {m}");
    }
    for m in &report.added {
        tell!("added    {m}");
    }
    if report.modifiers_applied > 0 {
        tell!("applied  {} modifier(s) from path bones to main bones", report.modifiers_applied);
    }
    if report.modifiers_present > 0 {
        tell!("kept     {} modifier(s) the main bones have already (merged before): not applied twice", report.modifiers_present);
    }
    tell!("{}: {} bones (limit {})", a.output.display(), report.bone_count, merged.limit);
    Ok(ExitCode::SUCCESS)
}
