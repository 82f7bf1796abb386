//! `skelport bone add|remove|rename|list`: AnvilToolkit skeleton edits that keep every link right
//! (the edits are `skelport_anvil`'s).

use super::merge::{load_names, open};
use crate::flags::anvil::{BoneAddArgs, BoneArgs, BoneCommand, BoneListArgs, BoneRemoveArgs, BoneRenameArgs, EditOutput};
use anyhow::{bail, Result};
use skelport_anvil::{commands, AnvilSkeleton, Form, NewBone};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Write an edited skeleton where `out` says, in its form (default: the input's).
fn save(m: &AnvilSkeleton, input: &Path, out: &EditOutput) -> Result<PathBuf> {
    let form = out.form.map(Form::from).unwrap_or(m.form);
    let bytes = m.to_bytes(form)?;
    let path = match (&out.output, out.in_place) {
        (Some(p), _) => p.clone(),
        // The file the input names: through a symbolic link, the file it points to is edited and
        // the link stays (a rename over the link would replace it with a regular file).
        (None, true) => std::fs::canonicalize(input).unwrap_or_else(|_| input.to_path_buf()),
        (None, false) => bail!("give -o OUT or --in-place"),
    };
    super::write_file(&path, &bytes)?;
    Ok(path)
}

/// Refuse a bone name `m` (read from `file`) does not have, naming the file and the closest
/// bone name (`Hipz` → `Hips`), before an edit is tried.
fn require_bone(m: &AnvilSkeleton, file: &Path, name: &str, names: &skelport_anvil::Names) -> Result<()> {
    if m.find_bone(name).is_some() {
        return Ok(());
    }
    let all: Vec<String> = (0..m.bones().count()).map(|i| m.display_name(i, names)).collect();
    let hint = match skelport::ir::suggest::closest(name, all.iter().map(String::as_str)) {
        Some(c) => format!("; did you mean '{c}'?"),
        None => "; `skelport bone list FILE` lists them".to_owned(),
    };
    bail!("{}: no bone named '{name}' in the skeleton{hint}", file.display())
}

/// Run `skelport bone ...`.
pub fn run(a: BoneArgs) -> Result<ExitCode> {
    match a.command {
        BoneCommand::Add(a) => run_add(a),
        BoneCommand::Remove(a) => run_remove(a),
        BoneCommand::Rename(a) => run_rename(a),
        BoneCommand::List(a) => run_list(a),
    }
}

/// Run `skelport bone add`.
fn run_add(a: BoneAddArgs) -> Result<ExitCode> {
    let names = load_names(a.out.names.as_deref())?;
    let mut m = open(&a.file, &names)?;
    require_bone(&m, &a.file, &a.parent, &names)?;
    let spec = NewBone {
        name: a.name.clone(),
        parent: a.parent.clone(),
        position: a.at.unwrap_or([0.0; 3]),
        rotation: a.rotation.unwrap_or([0.0, 0.0, 0.0, 1.0]),
        global: a.global,
        mirror: a.mirror.clone(),
    };
    let at = m.add_bone(&spec, &names)?;
    let path = save(&m, &a.file, &a.out)?;
    let id = m.bone(at).id.unwrap_or(0);
    tell!(
        "added '{}' (ID {id}, hash {}) under '{}' → {}",
        a.name,
        skelport_anvil::names::hash_of_display(&a.name),
        a.parent,
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Run `skelport bone remove`.
fn run_remove(a: BoneRemoveArgs) -> Result<ExitCode> {
    let names = load_names(a.out.names.as_deref())?;
    let mut m = open(&a.file, &names)?;
    require_bone(&m, &a.file, &a.name, &names)?;
    let notes = m.remove_bone(&a.name, &names)?;
    let path = save(&m, &a.file, &a.out)?;
    for n in &notes {
        tell!("{n}");
    }
    tell!("removed '{}' → {}", a.name, path.display());
    Ok(ExitCode::SUCCESS)
}

/// Run `skelport bone rename`.
fn run_rename(a: BoneRenameArgs) -> Result<ExitCode> {
    let names = load_names(a.out.names.as_deref())?;
    let mut m = open(&a.file, &names)?;
    require_bone(&m, &a.file, &a.old, &names)?;
    m.rename_bone(&a.old, &a.new)?;
    let path = save(&m, &a.file, &a.out)?;
    tell!("renamed '{}' to '{}' (hash {}) → {}", a.old, a.new, skelport_anvil::names::hash_of_display(&a.new), path.display());
    Ok(ExitCode::SUCCESS)
}

/// Run `skelport bone list`.
fn run_list(a: BoneListArgs) -> Result<ExitCode> {
    let names = load_names(a.names.as_deref())?;
    let m = open(&a.file, &names)?;
    if a.json {
        let bones: Vec<serde_json::Value> = commands::bone_rows(&m, &names)
            .map(|r| {
                serde_json::json!({
                    "index": r.index, "name": r.name, "hash": r.hash, "id": r.id,
                    // A root's parent is null (the text listing prints `-`).
                    "parent": if r.parent == "-" { serde_json::Value::Null } else { r.parent.into() },
                    "modifiers": r.modifiers,
                })
            })
            .collect();
        let j =
            serde_json::json!({ "file": a.file.display().to_string(), "format": crate::flags::anvil::format_name(m.form), "bones": bones });
        println!("{}", serde_json::to_string_pretty(&j)?);
        return Ok(ExitCode::SUCCESS);
    }
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // A closed pipe (`| head`) ends the listing quietly.
    if writeln!(out, "{:>5}  {:<32} {:>10}  {:>14}  {:<32} modifiers", "index", "name", "hash", "ID", "parent").is_err() {
        return Ok(ExitCode::SUCCESS);
    }
    for r in commands::bone_rows(&m, &names) {
        let line =
            writeln!(out, "{:>5}  {:<32} {:>10}  {:>14}  {:<32} {}", r.index, r.name, r.hash, r.id, r.parent, r.modifiers.join(", "));
        if line.is_err() {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}
