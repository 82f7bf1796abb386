//! Arguments of the AnvilToolkit skeleton commands: `skelport merge` (addon skeletons into a main
//! skeleton, as the engine does) and `skelport bone add|remove|rename|list` (edits with every link
//! kept right). Their logic is `skelport_anvil::commands`.

use clap::{Args, Subcommand, ValueEnum};
use skelport_anvil::Form;
use std::path::PathBuf;

/// Which AnvilToolkit form to write: `standard` or `schema`, or the format names `--to` takes
/// for them (`anvil`, `anvil-schema`, from the format crate) as aliases.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormArg {
    /// Standard exporter: UTF-16, type="0" (up to 65535 bones)
    Standard,
    /// Schema-Based exporter: UTF-8, type="1" (at most 255 bones)
    Schema,
}

impl ValueEnum for FormArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[FormArg::Standard, FormArg::Schema]
    }
    fn to_possible_value(&self) -> Option<clap::builder::PossibleValue> {
        let (name, form, help) = match self {
            FormArg::Standard => ("standard", Form::Standard, "Standard exporter: UTF-16, type=\"0\" (up to 65535 bones)"),
            FormArg::Schema => ("schema", Form::Schema, "Schema-Based exporter: UTF-8, type=\"1\" (at most 255 bones)"),
        };
        let alias = format_name(form);
        Some(clap::builder::PossibleValue::new(name).alias(alias).help(format!("{help}; `{alias}` as --to names it")))
    }
}

/// The format name of an AnvilToolkit form (`anvil`, `anvil-schema`), as `--to` takes it.
pub fn format_name(f: Form) -> &'static str {
    use skelport::ir::Format;
    match f {
        Form::Standard => skelport_anvil::AnvilFormat.name(),
        Form::Schema => skelport_anvil::AnvilSchemaFormat.name(),
    }
}

impl From<FormArg> for Form {
    fn from(f: FormArg) -> Form {
        match f {
            FormArg::Standard => Form::Standard,
            FormArg::Schema => Form::Schema,
        }
    }
}

/// Merge AnvilToolkit addon skeletons into a main skeleton, as the engine does
#[derive(Args, Debug)]
pub struct MergeArgs {
    /// The main (character) skeleton: AnvilToolkit Skeleton XML, either form
    #[arg(value_name = "MAIN")]
    pub main: PathBuf,
    /// Addon skeletons, merged in order (each addon's root must be a bone of the main skeleton)
    #[arg(value_name = "ADDON", required = true)]
    pub addons: Vec<PathBuf>,
    /// Output file (`-` for stdout)
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
    /// Print what the merge did as JSON on stdout (schemas/merge-report.schema.json) instead of
    /// text on stderr; needs -o FILE, not -o -
    #[arg(long)]
    pub json: bool,
}

/// Add, remove or rename a bone of an AnvilToolkit skeleton, keeping every link right
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
    /// Output file (`-` for stdout)
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
    /// Print the bones as JSON (schemas/bone-list.schema.json)
    #[arg(long)]
    pub json: bool,
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
