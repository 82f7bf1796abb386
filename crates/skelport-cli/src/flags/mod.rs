//! The command line: every subcommand's arguments (clap), as the user typed them. `main.rs` parses
//! them and hands each subcommand to its file in `cmd/`.

pub mod anvil;

use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;

/// A value named from a list that shell completion offers (`--to <TAB>`: the writable formats)
/// and `--help` shows, while any text is accepted here: the library refuses an unknown name
/// itself, with the closest known one ("did you mean 'gltf'?") and the list.
#[derive(Clone)]
pub struct Named(fn() -> Vec<&'static str>);

impl clap::builder::TypedValueParser for Named {
    type Value = String;
    fn parse_ref(&self, cmd: &clap::Command, arg: Option<&clap::Arg>, value: &std::ffi::OsStr) -> Result<String, clap::Error> {
        clap::builder::StringValueParser::new().parse_ref(cmd, arg, value)
    }
    fn possible_values(&self) -> Option<Box<dyn Iterator<Item = clap::builder::PossibleValue> + '_>> {
        Some(Box::new((self.0)().into_iter().map(clap::builder::PossibleValue::new)))
    }
}

/// The formats `--from` takes.
fn readable() -> Vec<&'static str> {
    skelport::formats().iter().filter(|f| f.can_read()).map(|f| f.name()).collect()
}

/// The formats `--to` takes.
fn writable() -> Vec<&'static str> {
    skelport::formats().iter().filter(|f| f.can_write()).map(|f| f.name()).collect()
}

/// What `validate --target` takes: the SL importer's rules, or a writable format.
fn targets() -> Vec<&'static str> {
    std::iter::once(skelport::validate::SL_TARGET).chain(writable()).collect()
}

/// The names `--map` takes (besides a map file): the built-in maps and `humanoid`.
fn map_names() -> Vec<&'static str> {
    skelport::maps::BUILT_IN.iter().map(|(n, _)| *n).chain([skelport::maps::HUMANOID]).collect()
}

/// Parse the process's arguments (clap exits with its usage message on an error).
pub fn parse() -> Cli {
    Cli::parse()
}

#[derive(Parser)]
#[command(
    name = "skelport",
    version,
    about = "Convert character skeletons (rigs) and skin weights between MPFB, MakeHuman 1.x, AnvilToolkit XML, G4MF, glTF, VRM and Second Life Collada (and from FBX)"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Print only losses, warnings and errors (no notes)
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
    /// Also print each diagnostic's code and what was read and written
    #[arg(short, long, global = true)]
    pub verbose: bool,
}

// Each subcommand's arguments are defined when it is the one run (clap's `defer`): defining all
// eleven took 0.55 M instructions of every run (a sixtieth of a Collada conversion).
#[derive(Subcommand)]
#[command(defer = true)]
pub enum Command {
    /// Convert one file, or many files into a directory (in parallel)
    Convert(ConvertArgs),
    /// Show a file's skeletons and skins as a tree, or as JSON
    Inspect(InspectArgs),
    /// Check a file against the IR's rules and a target format's rules
    Validate(ValidateArgs),
    /// Compare two files bone by bone (any formats)
    Diff(DiffArgs),
    /// Write the built-in sample humanoid in every format
    Demo(DemoArgs),
    /// Draw a skeleton (and optionally a second one over it) as SVG or PNG
    Render(RenderArgs),
    /// List the formats, their extensions and whether they read and write
    Formats(ListArgs),
    /// List the built-in retarget maps
    Maps(ListArgs),
    /// Merge AnvilToolkit addon skeletons into a main skeleton, as the engine does
    Merge(anvil::MergeArgs),
    /// Add, remove or rename a bone of an AnvilToolkit skeleton, keeping every link right
    Bone(anvil::BoneArgs),
    /// Print a shell completion script (bash, zsh, fish, powershell, elvish) on stdout
    Completions(CompletionsArgs),
}

#[derive(Args)]
pub struct ListArgs {
    /// Print the list as JSON (schemas/formats.schema.json, schemas/maps.schema.json)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, powershell or elvish
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// The command's definition (for completions and the man page).
pub fn command() -> clap::Command {
    <Cli as clap::CommandFactory>::command()
}

#[derive(Args, Clone, Default)]
pub struct ReadArgs {
    /// Input format (default: from the extension and the content)
    #[arg(long, value_name = "FMT", value_parser = Named(readable), hide_possible_values = true)]
    pub from: Option<String>,
    /// A mesh whose vertex numbering the rig or weights refer to (OBJ); the MPFB writer also
    /// picks placement strategies on it for bones that have none
    #[arg(long, value_name = "FILE")]
    pub mesh: Option<PathBuf>,
    /// A weights file to join to a rig
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    /// Keep the mesh origin instead of standing the feet on the ground (MPFB)
    #[arg(long)]
    pub keep_origin: bool,
    /// Keep helper geometry (MakeHuman joint cubes and helper groups)
    #[arg(long)]
    pub keep_helpers: bool,
    /// More bone names to resolve hashes with (one per line, or TSV with the name first)
    #[arg(long, value_name = "FILE")]
    pub names: Option<PathBuf>,
    /// Use this avatar_skeleton.xml instead of the built-in Second Life skeleton
    #[arg(long, value_name = "FILE")]
    pub sl_skeleton: Option<PathBuf>,
    /// Let glTF and G4MF buffer URIs lead outside the input file's folder (`../`, absolute
    /// paths): only for trees you trust (docs/limits.md)
    #[arg(long)]
    pub allow_outside_uris: bool,
}

impl ReadArgs {
    /// What `skelport::open` is given.
    pub fn options(&self) -> skelport::OpenOptions {
        skelport::OpenOptions {
            from: self.from.clone(),
            reader: skelport::ir::ReadOptions {
                mesh: self.mesh.clone(),
                weights: self.weights.clone(),
                keep_origin: self.keep_origin,
                keep_helpers: self.keep_helpers,
                names: self.names.clone(),
                sl_skeleton: self.sl_skeleton.clone(),
                allow_outside_uris: self.allow_outside_uris,
                ..Default::default()
            },
        }
    }
}

#[derive(Args)]
pub struct ConvertArgs {
    /// Input files (`-` for stdin)
    #[arg(required = true, value_name = "IN")]
    pub inputs: Vec<PathBuf>,
    /// Output file (`-` for stdout), or a directory when there are several inputs
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Output format (default: from the output extension)
    #[arg(long, value_name = "FMT", value_parser = Named(writable), hide_possible_values = true)]
    pub to: Option<String>,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Embed buffers in the main file instead of writing side files
    #[arg(long)]
    pub embed: bool,
    /// Compress chunks where the format allows it (G4MF binary)
    #[arg(long)]
    pub compress: bool,
    /// Keep at most N influences per vertex (largest kept, renormalized)
    #[arg(long, value_name = "N")]
    pub max_influences: Option<usize>,
    /// Accepted for old scripts; does nothing: the source's joint positions are kept by default
    /// (see --default-joints)
    #[arg(long)]
    pub joint_positions: bool,
    /// Put the joints at the target skeleton's default positions instead of the source's (SL:
    /// the SL default `pos`; the mesh stays bound where the source had it)
    #[arg(long, alias = "sl-default-joints")]
    pub default_joints: bool,
    /// Repair what can be repaired instead of refusing (e.g. bind unweighted vertices)
    #[arg(long)]
    pub fix: bool,
    /// Bone-count limit to enforce
    #[arg(long, value_name = "N")]
    pub limit: Option<usize>,
    /// Rename bones with a retarget map (a built-in name or a JSON file); unmapped bones are
    /// dropped and their weights merged into the nearest mapped ancestor. A JSON file with a
    /// `humanoid` object is a humanoid map instead (VRM role → bone) for --to vrm and --rest-pose.
    /// `--map humanoid` renames a humanoid (a VRM's bone roles, or a rig a built-in humanoid map
    /// knows) to the bone names of the target (Second Life, AnvilToolkit)
    #[arg(long, value_name = "NAME|FILE|humanoid", value_parser = Named(map_names), hide_possible_values = true)]
    pub map: Option<String>,
    /// The rest pose to write: `t-pose` (arms out, legs down, made from the humanoid's roles and
    /// baked into the mesh) or `as-is`; default: t-pose for VRM, as-is for the others
    #[arg(long, value_name = "POSE")]
    pub rest_pose: Option<skelport::ir::rest::RestPose>,
    /// VRM meta (name, authors, licence terms) as a JSON file (schemas/vrm-meta.schema.json)
    #[arg(long, value_name = "FILE")]
    pub vrm_meta: Option<PathBuf>,
    /// Treat any loss (something the target cannot hold) as a failure
    #[arg(long)]
    pub strict: bool,
    /// Write even when the skin is left behind (its weight groups match no bone, no mesh to bind
    /// it to, most of its weights dropped), which is otherwise an error
    #[arg(long)]
    pub allow_loss: bool,
    /// Skip inputs whose output already exists (resume a batch)
    #[arg(long)]
    pub skip_existing: bool,
    /// Print the result (and loss report) as JSON on stdout
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct InspectArgs {
    pub file: PathBuf,
    #[command(flatten)]
    pub read: ReadArgs,
    /// Print the stable JSON report (schemas/inspect.schema.json)
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct ValidateArgs {
    pub file: PathBuf,
    /// Also check the rules of this target format (a format name, or `sl` for the SL importer)
    #[arg(long, value_name = "FMT", value_parser = Named(targets), hide_possible_values = true)]
    pub target: Option<String>,
    #[command(flatten)]
    pub read: ReadArgs,
    #[arg(long)]
    pub json: bool,
}

#[derive(Args)]
pub struct DiffArgs {
    pub a: PathBuf,
    /// The file to compare A with (not needed with --sl)
    #[arg(required_unless_present = "sl")]
    pub b: Option<PathBuf>,
    /// Compare A with the Second Life avatar skeleton (the built-in one, or --sl-skeleton FILE)
    #[arg(long, conflicts_with = "b")]
    pub sl: bool,
    /// The avatar_skeleton.xml to read SL files with and to compare against with --sl
    #[arg(long, value_name = "FILE")]
    pub sl_skeleton: Option<PathBuf>,
    /// Largest position difference that counts as equal, in metres
    #[arg(long, value_name = "METRES", default_value_t = 1e-4)]
    pub tolerance: f64,
    /// Largest orientation difference that counts as equal, in degrees
    #[arg(long, value_name = "DEGREES", default_value_t = 0.01)]
    pub angle_tolerance: f64,
    #[arg(long)]
    pub json: bool,
    /// Mesh for A and B (MPFB rigs)
    #[arg(long, value_name = "FILE")]
    pub mesh: Option<PathBuf>,
    /// Weights for A and B (MPFB rigs)
    #[arg(long, value_name = "FILE")]
    pub weights: Option<PathBuf>,
    /// Rename A's bones with a retarget map before comparing
    #[arg(long, value_name = "NAME|FILE", value_parser = Named(map_names), hide_possible_values = true)]
    pub map: Option<String>,
    /// Also pose both with the same random joint rotations and compare the skinned vertices
    #[arg(long)]
    pub pose_test: bool,
    /// Number of random poses for --pose-test
    #[arg(long, default_value_t = 20)]
    pub poses: usize,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ViewArg {
    Front,
    Side,
    Top,
    All,
}

impl ViewArg {
    /// The name `--view` takes.
    pub fn name(self) -> String {
        clap::ValueEnum::to_possible_value(&self).map(|v| v.get_name().to_owned()).unwrap_or_default()
    }
}

#[derive(Args)]
pub struct RenderArgs {
    pub file: PathBuf,
    /// Output picture: .svg or .png
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Which orthographic view (report frame: front looks along -Z with +Y up)
    #[arg(long, value_enum, default_value = "all")]
    pub view: ViewArg,
    /// Size of the longest side in pixels
    #[arg(long, value_name = "PX", default_value_t = 1024)]
    pub size: u32,
    /// Label the main bones
    #[arg(long)]
    pub labels: bool,
    /// Hide the skinned mesh
    #[arg(long)]
    pub no_mesh: bool,
    /// Draw a second skeleton (any format) over the first, bones matched by name
    #[arg(long, value_name = "OTHER")]
    pub overlay: Option<PathBuf>,
    /// Rename the overlay's bones with a retarget map before matching
    #[arg(long, value_name = "NAME|FILE", value_parser = Named(map_names), hide_possible_values = true)]
    pub map: Option<String>,
    /// Print what was drawn as JSON (schemas/render-report.schema.json)
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub read: ReadArgs,
}

#[derive(Args)]
pub struct DemoArgs {
    /// Directory to write the sample into (created if missing)
    pub dir: PathBuf,
    /// Print one JSON object for the whole run (schemas/demo-report.schema.json)
    #[arg(long)]
    pub json: bool,
}
