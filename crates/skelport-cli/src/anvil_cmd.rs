//! AnvilToolkit skeleton commands: `skelport merge` (addon skeletons into a main skeleton, as the
//! engine does) and `skelport bone add|remove|rename|list` (edits with every link kept right).
//!
//! These work on the AnvilToolkit model directly (not through the IR), so everything the IR does
//! not hold — modifiers, unknown elements, comments, number text — is kept, and untouched parts of
//! the file are written back byte for byte.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use skelport_anvil::{merge, AnvilSkeleton, Form, MergeOptions, Names, NewBone};
use skelport_cli::io::{read_input, write_atomic};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// Which AnvilToolkit form to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum FormArg {
    /// Standard exporter: UTF-16, type="0" (up to 65535 bones)
    Standard,
    /// Schema-Based exporter: UTF-8, type="1" (at most 255 bones)
    Schema,
}

impl From<FormArg> for Form {
    fn from(f: FormArg) -> Form {
        match f {
            FormArg::Standard => Form::Standard,
            FormArg::Schema => Form::Schema,
        }
    }
}

/// `skelport merge MAIN ADDON... -o OUT [--limit N]`
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The main (character) skeleton: AnvilToolkit Skeleton XML, either form
    #[arg(value_name = "MAIN")]
    pub main: PathBuf,
    /// Addon skeletons, merged in order (each addon's root must be a bone of the main skeleton)
    #[arg(value_name = "ADDON", required = true)]
    pub addons: Vec<PathBuf>,
    /// Output file
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Bone limit after de-duplication: 255 before Unity (the default for a Schema-Based main
    /// skeleton), 65535 for Unity and later (the default for a Standard one)
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Form to write (default: the main skeleton's)
    #[arg(long, value_enum)]
    pub form: Option<FormArg>,
    /// More bone names to show hashes with (one per line, or TSV with the name first)
    #[arg(long, value_name = "FILE")]
    pub names: Option<PathBuf>,
}

/// `skelport bone ...`
#[derive(Args, Debug)]
pub struct BoneArgs {
    #[command(subcommand)]
    pub command: BoneCommand,
}

/// Bone edits.
#[derive(Subcommand, Debug)]
pub enum BoneCommand {
    /// Add a bone under a parent (new ID, hash, Global and Local, mirror by Left/Right name)
    Add(BoneAddArgs),
    /// Remove a bone: children re-parented, MirrorBone/RootBone/modifier references fixed
    Remove(BoneRemoveArgs),
    /// Rename a bone (its hash changes, its ID and every link stay)
    Rename(BoneRenameArgs),
    /// List the bones: index, name, hash, ID, parent, modifiers
    List(BoneListArgs),
}

/// Where an edited skeleton goes.
#[derive(Args, Debug)]
pub struct EditOutput {
    /// Output file
    #[arg(short, long, value_name = "OUT", required_unless_present = "in_place", conflicts_with = "in_place")]
    pub output: Option<PathBuf>,
    /// Overwrite the input file
    #[arg(long)]
    pub in_place: bool,
    /// Form to write (default: the input's)
    #[arg(long, value_enum)]
    pub form: Option<FormArg>,
    /// More bone names to resolve hashes with (one per line, or TSV with the name first)
    #[arg(long, value_name = "FILE")]
    pub names: Option<PathBuf>,
}

/// `skelport bone add FILE NAME PARENT [--at X,Y,Z] [--rotation X,Y,Z,W] [--global]`
#[derive(Args, Debug)]
pub struct BoneAddArgs {
    /// The skeleton file
    pub file: PathBuf,
    /// The new bone's name (or x + 8 hex digits for a bare hash)
    pub name: String,
    /// The parent bone (name, or x + 8 hex digits)
    pub parent: String,
    /// Position relative to the parent (or global with --global), metres
    #[arg(long, visible_alias = "position", value_name = "X,Y,Z", value_parser = parse_vec3, allow_hyphen_values = true)]
    pub at: Option<[f64; 3]>,
    /// Rotation quaternion relative to the parent (or global with --global)
    #[arg(long, value_name = "X,Y,Z,W", value_parser = parse_quat, allow_hyphen_values = true)]
    pub rotation: Option<[f64; 4]>,
    /// --position and --rotation are global (world) rather than relative to the parent
    #[arg(long)]
    pub global: bool,
    /// The mirror bone (default: the Left/Right counterpart by name, else itself)
    #[arg(long)]
    pub mirror: Option<String>,
    #[command(flatten)]
    pub out: EditOutput,
}

/// `skelport bone remove FILE NAME`
#[derive(Args, Debug)]
pub struct BoneRemoveArgs {
    /// The skeleton file
    pub file: PathBuf,
    /// The bone to remove
    pub name: String,
    #[command(flatten)]
    pub out: EditOutput,
}

/// `skelport bone rename FILE OLD NEW`
#[derive(Args, Debug)]
pub struct BoneRenameArgs {
    /// The skeleton file
    pub file: PathBuf,
    /// The bone's current name (or x + 8 hex digits)
    pub old: String,
    /// Its new name
    pub new: String,
    #[command(flatten)]
    pub out: EditOutput,
}

/// `skelport bone list FILE`
#[derive(Args, Debug)]
pub struct BoneListArgs {
    /// The skeleton file
    pub file: PathBuf,
    /// More bone names to resolve hashes with (one per line, or TSV with the name first)
    #[arg(long, value_name = "FILE")]
    pub names: Option<PathBuf>,
}

fn parse_floats<const N: usize>(s: &str) -> Result<[f64; N], String> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.len() != N {
        return Err(format!("expected {N} comma-separated numbers, got '{s}'"));
    }
    let mut out = [0.0; N];
    for (o, p) in out.iter_mut().zip(&parts) {
        *o = p.parse::<f64>().map_err(|_| format!("'{p}' is not a number"))?;
        if !o.is_finite() {
            return Err(format!("'{p}' is not finite"));
        }
    }
    Ok(out)
}

fn parse_vec3(s: &str) -> Result<[f64; 3], String> {
    parse_floats::<3>(s)
}

fn parse_quat(s: &str) -> Result<[f64; 4], String> {
    let q = parse_floats::<4>(s)?;
    if q.iter().map(|v| v * v).sum::<f64>() < 1e-12 {
        return Err("a rotation quaternion cannot be zero".into());
    }
    Ok(q)
}

fn load_names(path: Option<&Path>) -> Result<Names> {
    match path {
        Some(p) => Names::with_file(p).with_context(|| format!("reading names from {}", p.display())),
        None => Ok(Names::builtin()),
    }
}

/// Read and check a skeleton file (dangling links, duplicate IDs or names are errors).
fn load(path: &Path, names: &Names) -> Result<AnvilSkeleton> {
    let bytes = read_input(path)?;
    let file = path.display().to_string();
    let m = AnvilSkeleton::parse(&bytes, &file)?;
    skelport_anvil::ir::check(&m, names, &file)?;
    Ok(m)
}

fn save(m: &AnvilSkeleton, input: &Path, out: &EditOutput) -> Result<PathBuf> {
    let form = out.form.map(Form::from).unwrap_or(m.form);
    let bytes = m.to_bytes(form)?;
    let path = match (&out.output, out.in_place) {
        (Some(p), _) => p.clone(),
        (None, true) => input.to_path_buf(),
        (None, false) => bail!("give -o OUT or --in-place"),
    };
    write_atomic(&path, &bytes)?;
    Ok(path)
}

/// Run `skelport merge`.
pub fn run_merge(a: MergeArgs) -> Result<ExitCode> {
    let names = load_names(a.names.as_deref())?;
    let main = load(&a.main, &names)?;
    let addons = a.addons.iter().map(|p| load(p, &names)).collect::<Result<Vec<_>>>()?;
    let form = a.form.map(Form::from).unwrap_or(main.form);
    // The limit follows the game generation: --limit, else the form's.
    let limit = a.limit.or(Some(match form {
        Form::Schema => 255,
        Form::Standard => 65_535,
    }));
    // Messages name addons by position; show their files instead.
    let with_files = |msg: &str| -> String {
        let mut msg = msg.to_string();
        for (i, p) in a.addons.iter().enumerate().rev() {
            msg = msg.replace(&format!("addon {}:", i + 1), &format!("{}:", p.display()));
        }
        msg
    };
    let (merged, report) =
        merge(&main, &addons, &MergeOptions { limit, names }).map_err(|e| anyhow::anyhow!(with_files(&e.to_string())))?;
    let bytes = merged.to_bytes(form)?;
    write_atomic(&a.output, &bytes)?;
    for m in &report.matched {
        eprintln!("matched  {}", with_files(m));
    }
    for m in &report.added {
        eprintln!("added    {m}");
    }
    if report.modifiers_applied > 0 {
        eprintln!("applied  {} modifier(s) from path bones to main bones", report.modifiers_applied);
    }
    eprintln!("{}: {} bones (limit {})", a.output.display(), report.bone_count, limit.unwrap_or(65_535));
    Ok(ExitCode::SUCCESS)
}

/// Run `skelport bone ...`.
pub fn run_bone(a: BoneArgs) -> Result<ExitCode> {
    match a.command {
        BoneCommand::Add(a) => run_bone_add(a),
        BoneCommand::Remove(a) => run_bone_remove(a),
        BoneCommand::Rename(a) => run_bone_rename(a),
        BoneCommand::List(a) => run_bone_list(a),
    }
}

/// Run `skelport bone add`.
pub fn run_bone_add(a: BoneAddArgs) -> Result<ExitCode> {
    let names = load_names(a.out.names.as_deref())?;
    let mut m = load(&a.file, &names)?;
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
    eprintln!(
        "added '{}' (ID {id}, hash {}) under '{}' → {}",
        a.name,
        skelport_anvil::names::hash_of_display(&a.name),
        a.parent,
        path.display()
    );
    Ok(ExitCode::SUCCESS)
}

/// Run `skelport bone remove`.
pub fn run_bone_remove(a: BoneRemoveArgs) -> Result<ExitCode> {
    let names = load_names(a.out.names.as_deref())?;
    let mut m = load(&a.file, &names)?;
    let notes = m.remove_bone(&a.name, &names)?;
    let path = save(&m, &a.file, &a.out)?;
    for n in &notes {
        eprintln!("{n}");
    }
    eprintln!("removed '{}' → {}", a.name, path.display());
    Ok(ExitCode::SUCCESS)
}

/// Run `skelport bone rename`.
pub fn run_bone_rename(a: BoneRenameArgs) -> Result<ExitCode> {
    let names = load_names(a.out.names.as_deref())?;
    let mut m = load(&a.file, &names)?;
    m.rename_bone(&a.old, &a.new)?;
    let path = save(&m, &a.file, &a.out)?;
    eprintln!("renamed '{}' to '{}' (hash {}) → {}", a.old, a.new, skelport_anvil::names::hash_of_display(&a.new), path.display());
    Ok(ExitCode::SUCCESS)
}

/// Run `skelport bone list`.
pub fn run_bone_list(a: BoneListArgs) -> Result<ExitCode> {
    let names = load_names(a.names.as_deref())?;
    let m = load(&a.file, &names)?;
    let ids = m.id_map();
    use std::io::Write;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    // A closed pipe (`| head`) ends the listing quietly.
    if writeln!(out, "{:>5}  {:<32} {:>10}  {:>14}  {:<32} modifiers", "index", "name", "hash", "ID", "parent").is_err() {
        return Ok(ExitCode::SUCCESS);
    }
    for (i, b) in m.bones().enumerate() {
        let parent = b.bone_parent().and_then(|p| ids.get(&p)).map(|&p| m.display_name(p, &names)).unwrap_or_else(|| "-".into());
        let mods: Vec<String> = b.modifiers().map(|o| o.class.to_string()).collect();
        let line = writeln!(
            out,
            "{i:>5}  {:<32} {:>10}  {:>14}  {:<32} {}",
            m.display_name(i, &names),
            b.bone_hash().unwrap_or(0),
            b.id.unwrap_or(0),
            parent,
            mods.join(", ")
        );
        if line.is_err() {
            break;
        }
    }
    Ok(ExitCode::SUCCESS)
}
