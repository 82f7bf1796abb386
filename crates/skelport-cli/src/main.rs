//! `skelport`: convert character skeletons and skin weights between formats.

mod anvil_cmd;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, Parser, Subcommand};
use rayon::prelude::*;
use serde::Serialize;
use skelport_cli::{diff, inspect, io, load, registry, render, stem_of, Loaded};
use skelport_ir::{Diagnostic, Diagnostics, Document, Format, ReadOptions, Severity, WriteOptions};
use std::collections::HashMap;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

#[derive(Parser)]
#[command(
    name = "skelport",
    version,
    about = "Convert character skeletons (rigs) and skin weights between MPFB, AnvilToolkit XML, G4MF, glTF and Second Life Collada"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
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
    Formats,
    /// List the built-in retarget maps
    Maps,
    /// Merge AnvilToolkit addon skeletons into a main skeleton, as the engine does
    Merge(anvil_cmd::MergeArgs),
    /// Add, remove or rename a bone of an AnvilToolkit skeleton, keeping every link right
    Bone(anvil_cmd::BoneArgs),
}

#[derive(Args, Clone, Default)]
struct ReadArgs {
    /// Input format (default: from the extension and the content)
    #[arg(long, value_name = "FMT")]
    from: Option<String>,
    /// A mesh whose vertex numbering the rig or weights refer to (OBJ); the MPFB writer also
    /// picks placement strategies on it for bones that have none
    #[arg(long, value_name = "FILE")]
    mesh: Option<PathBuf>,
    /// A weights file to join to a rig
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    /// Keep the mesh origin instead of standing the feet on the ground (MPFB)
    #[arg(long)]
    keep_origin: bool,
    /// Keep helper geometry (MakeHuman joint cubes and helper groups)
    #[arg(long)]
    keep_helpers: bool,
    /// More bone names to resolve hashes with (one per line, or TSV with the name first)
    #[arg(long, value_name = "FILE")]
    names: Option<PathBuf>,
    /// Use this avatar_skeleton.xml instead of the built-in Second Life skeleton
    #[arg(long, value_name = "FILE")]
    sl_skeleton: Option<PathBuf>,
}

impl ReadArgs {
    fn options(&self) -> ReadOptions {
        ReadOptions {
            mesh: self.mesh.clone(),
            weights: self.weights.clone(),
            keep_origin: self.keep_origin,
            keep_helpers: self.keep_helpers,
            names: self.names.clone(),
            sl_skeleton: self.sl_skeleton.clone(),
            ..Default::default()
        }
    }
}

#[derive(Args)]
struct ConvertArgs {
    /// Input files (`-` for stdin)
    #[arg(required = true, value_name = "IN")]
    inputs: Vec<PathBuf>,
    /// Output file (`-` for stdout), or a directory when there are several inputs
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Output format (default: from the output extension)
    #[arg(long, value_name = "FMT")]
    to: Option<String>,
    #[command(flatten)]
    read: ReadArgs,
    /// Embed buffers in the main file instead of writing side files
    #[arg(long)]
    embed: bool,
    /// Compress chunks where the format allows it (G4MF binary)
    #[arg(long)]
    compress: bool,
    /// Keep at most N influences per vertex (largest kept, renormalized)
    #[arg(long, value_name = "N")]
    max_influences: Option<usize>,
    /// Write the source's joint positions instead of the target skeleton's defaults (SL)
    #[arg(long)]
    joint_positions: bool,
    /// Repair what can be repaired instead of refusing (e.g. bind unweighted vertices)
    #[arg(long)]
    fix: bool,
    /// Bone-count limit to enforce
    #[arg(long, value_name = "N")]
    limit: Option<usize>,
    /// Rename bones with a retarget map (a built-in name or a JSON file); unmapped bones are
    /// dropped and their weights merged into the nearest mapped ancestor
    #[arg(long, value_name = "NAME|FILE")]
    map: Option<String>,
    /// Treat any loss (something the target cannot hold) as a failure
    #[arg(long)]
    strict: bool,
    /// Skip inputs whose output already exists (resume a batch)
    #[arg(long)]
    skip_existing: bool,
    /// Print the result (and loss report) as JSON on stdout
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct InspectArgs {
    file: PathBuf,
    #[command(flatten)]
    read: ReadArgs,
    /// Print the stable JSON report (schemas/inspect.schema.json)
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct ValidateArgs {
    file: PathBuf,
    /// Also check the rules of this target format (a format name, or `sl` for the SL importer)
    #[arg(long, value_name = "FMT")]
    target: Option<String>,
    #[command(flatten)]
    read: ReadArgs,
    #[arg(long)]
    json: bool,
}

#[derive(Args)]
struct DiffArgs {
    a: PathBuf,
    /// The file to compare A with (not needed with --sl)
    #[arg(required_unless_present = "sl")]
    b: Option<PathBuf>,
    /// Compare A with the Second Life avatar skeleton (the built-in one, or --sl-skeleton FILE)
    #[arg(long, conflicts_with = "b")]
    sl: bool,
    /// The avatar_skeleton.xml to read SL files with and to compare against with --sl
    #[arg(long, value_name = "FILE")]
    sl_skeleton: Option<PathBuf>,
    /// Largest position difference that counts as equal, in metres
    #[arg(long, value_name = "METRES", default_value_t = 1e-4)]
    tolerance: f64,
    /// Largest orientation difference that counts as equal, in degrees
    #[arg(long, value_name = "DEGREES", default_value_t = 0.01)]
    angle_tolerance: f64,
    #[arg(long)]
    json: bool,
    /// Mesh for A and B (MPFB rigs)
    #[arg(long, value_name = "FILE")]
    mesh: Option<PathBuf>,
    /// Weights for A and B (MPFB rigs)
    #[arg(long, value_name = "FILE")]
    weights: Option<PathBuf>,
    /// Rename A's bones with a retarget map before comparing
    #[arg(long, value_name = "NAME|FILE")]
    map: Option<String>,
    /// Also pose both with the same random joint rotations and compare the skinned vertices
    #[arg(long)]
    pose_test: bool,
    /// Number of random poses for --pose-test
    #[arg(long, default_value_t = 20)]
    poses: usize,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum ViewArg {
    Front,
    Side,
    Top,
    All,
}

#[derive(Args)]
struct RenderArgs {
    file: PathBuf,
    /// Output picture: .svg or .png
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,
    /// Which orthographic view (report frame: front looks along -Z with +Y up)
    #[arg(long, value_enum, default_value = "all")]
    view: ViewArg,
    /// Size of the longest side in pixels
    #[arg(long, value_name = "PX", default_value_t = 1024)]
    size: u32,
    /// Label the main bones
    #[arg(long)]
    labels: bool,
    /// Hide the skinned mesh
    #[arg(long)]
    no_mesh: bool,
    /// Draw a second skeleton (any format) over the first, bones matched by name
    #[arg(long, value_name = "OTHER")]
    overlay: Option<PathBuf>,
    /// Rename the overlay's bones with a retarget map before matching
    #[arg(long, value_name = "NAME|FILE")]
    map: Option<String>,
    #[command(flatten)]
    read: ReadArgs,
}

#[derive(Args)]
struct DemoArgs {
    /// Directory to write the sample into (created if missing)
    dir: PathBuf,
}

/// glibc's malloc gives every block of 128 KiB or more its own fresh mapping and unmaps it when
/// freed, so each big buffer of a conversion (the number lists read, the meshes, the glTF buffer)
/// is new memory the kernel must fault in and zero page by page: on the Linden body → .glb that
/// was a quarter of the run. Served from the heap instead (up to 32 MiB, glibc's own upper bound
/// for its adaptive threshold), freed blocks are reused by the next ones; a heap top of up to 64
/// MiB is kept rather than trimmed after each file of a batch. Bigger blocks (a 160 MB skeleton's
/// text) still get their own mappings.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called at start-up, before any threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TOP_PAD, 4 << 20);
    }
}

fn main() -> ExitCode {
    skelport_ir::trace::phase("start");
    // Like other Unix tools, end quietly when stdout is a closed pipe (`skelport ... | head`)
    // instead of panicking in println!.
    #[cfg(unix)]
    // SAFETY: resetting a signal disposition to its default at start-up, before any threads.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    tune_malloc();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Convert(a) => convert(a),
        Command::Inspect(a) => cmd_inspect(a),
        Command::Validate(a) => cmd_validate(a),
        Command::Diff(a) => cmd_diff(a),
        Command::Demo(a) => demo(a),
        Command::Render(a) => cmd_render(a),
        Command::Formats => formats(),
        Command::Maps => list_maps(),
        Command::Merge(a) => anvil_cmd::run_merge(a),
        Command::Bone(a) => anvil_cmd::run_bone(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(1)
        }
    }
}

fn print_diagnostics(file: &str, d: &Diagnostics) {
    for item in &d.items {
        let tag = match item.severity {
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Loss => "loss",
        };
        eprintln!("{tag}: {file}: {}", item.message);
    }
}

fn check_valid(doc: &Document, file: &str) -> Result<()> {
    let problems = skelport_ir::validate::validate(doc);
    if problems.is_empty() {
        return Ok(());
    }
    let list: Vec<String> = problems.iter().take(20).map(|p| format!("  {p}")).collect();
    bail!(
        "{file}: the document breaks {} rule(s):\n{}\nfix them in {file} (each line names the place) and convert again",
        problems.len(),
        list.join("\n")
    )
}

#[derive(Serialize)]
struct ConvertResult {
    input: String,
    output: Option<String>,
    from: Option<String>,
    to: String,
    ok: bool,
    skipped: bool,
    error: Option<String>,
    diagnostics: Vec<Diagnostic>,
}

fn write_options(a: &ConvertArgs, out: &Path) -> WriteOptions {
    WriteOptions {
        file_stem: stem_of(out),
        embed: a.embed,
        compress: a.compress,
        max_influences: a.max_influences,
        joint_positions: a.joint_positions,
        fix: a.fix,
        bone_limit: a.limit,
        keep_helpers: a.read.keep_helpers,
        sl_skeleton: a.read.sl_skeleton.clone(),
        mesh: a.read.mesh.clone(),
        keep_origin: a.read.keep_origin,
    }
}

/// Convert one file; diagnostics are returned even on failure where known.
fn convert_one(
    a: &ConvertArgs,
    input: &Path,
    output: &Path,
    target: &'static dyn Format,
) -> (Result<()>, Option<&'static dyn Format>, Diagnostics) {
    let mut diags = Diagnostics::default();
    let Loaded { mut doc, format, diagnostics } = match load(input, a.read.from.as_deref(), &a.read.options()) {
        Ok(l) => l,
        Err(e) => return (Err(e), None, diags),
    };
    diags.items.extend(diagnostics.items);
    skelport_ir::trace::phase("read");
    if let Some(m) = &a.map {
        let r = skelport_cli::maps::load(m).and_then(|map| skelport_cli::retarget(&mut doc, &map, &mut diags));
        if let Err(e) = r {
            return (Err(e.context(input.display().to_string())), Some(format), diags);
        }
    }
    let name = input.display().to_string();
    if let Err(e) = check_valid(&doc, &name) {
        return (Err(e), Some(format), diags);
    }
    skelport_ir::trace::phase("validated");
    // The document is ours and not needed after this: convert it in place when the writer
    // would convert a copy of it (the same output, without copying every mesh).
    if let Some(frame) = target.write_frame() {
        doc.convert_frame(frame);
    }
    skelport_ir::trace::phase("frame converted");
    let (out, wd) = match render(&doc, target, &write_options(a, output)) {
        Ok(x) => x,
        Err(e) => return (Err(e.context(format!("{name} → {}", output.display()))), Some(format), diags),
    };
    diags.items.extend(wd.items);
    skelport_ir::trace::phase("rendered");
    if a.strict {
        let losses: Vec<_> = diags.of(Severity::Loss).map(|d| d.message.clone()).collect();
        if !losses.is_empty() {
            return (
                Err(anyhow!("{name}: --strict: {} loss(es) converting to {}:\n  {}", losses.len(), target.name(), losses.join("\n  "))),
                Some(format),
                diags,
            );
        }
    }
    let written = io::write_output(output, &out).map(|_| ());
    skelport_ir::trace::phase("written");
    (written, Some(format), diags)
}

fn is_dir_target(p: &Path) -> bool {
    p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/')
}

fn convert(a: ConvertArgs) -> Result<ExitCode> {
    let batch = a.inputs.len() > 1 || is_dir_target(&a.output);
    if !batch {
        let input = &a.inputs[0];
        let target = match &a.to {
            Some(t) => skelport_cli::format_named(t, false)?,
            None => registry::detect_writer(&a.output).ok_or_else(|| {
                anyhow!(
                    "cannot tell the output format from '{}'; name it with --to ({})",
                    a.output.display(),
                    registry::names(|f| f.can_write())
                )
            })?,
        };
        let (res, from, diags) = convert_one(&a, input, &a.output, target);
        let shown = input.display().to_string();
        if a.json && a.output.as_os_str() != "-" {
            let r = ConvertResult {
                input: shown.clone(),
                output: Some(a.output.display().to_string()),
                from: from.map(|f| f.name().to_string()),
                to: target.name().into(),
                ok: res.is_ok(),
                skipped: false,
                error: res.as_ref().err().map(|e| format!("{e:#}")),
                diagnostics: diags.items.clone(),
            };
            println!("{}", serde_json::to_string_pretty(&r)?);
        } else {
            print_diagnostics(&shown, &diags);
        }
        res?;
        return Ok(ExitCode::SUCCESS);
    }

    let to = a.to.as_deref().ok_or_else(|| anyhow!("several inputs need --to FMT to name the output format"))?;
    let target = skelport_cli::format_named(to, false)?;
    std::fs::create_dir_all(&a.output).with_context(|| format!("{}: cannot create the output directory", a.output.display()))?;
    let ext = target.extensions().first().copied().unwrap_or("out");
    let progress = std::io::stderr().is_terminal().then(|| {
        let pb = indicatif::ProgressBar::new(a.inputs.len() as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    });
    // Ctrl-C stops starting new files; files in flight finish their atomic write, so an
    // interrupted batch leaves no partial output and can be resumed with --skip-existing.
    static INTERRUPTED: AtomicBool = AtomicBool::new(false);
    let _ = ctrlc::set_handler(|| INTERRUPTED.store(true, Ordering::SeqCst));
    let any_failed = AtomicBool::new(false);
    // Outputs are named by input stem, so `a/rig.json` and `b/rig.glb` would write the same file
    // and one would silently replace the other. Such inputs fail, naming each other; the rest
    // of the batch goes on.
    let outputs: Vec<PathBuf> = a.inputs.iter().map(|i| a.output.join(format!("{}.{ext}", stem_of(i)))).collect();
    let mut claimed: HashMap<&Path, Vec<usize>> = HashMap::new();
    for (k, o) in outputs.iter().enumerate() {
        claimed.entry(o.as_path()).or_default().push(k);
    }
    let collision = |k: usize| -> Option<String> {
        let users = &claimed[outputs[k].as_path()];
        (users.len() > 1).then(|| {
            let others: Vec<String> =
                users.iter().filter(|&&u| u != k).map(|&u| format!("'{}'", a.inputs[u].display())).collect();
            format!(
                "its output {} would also be written by {}; convert inputs with the same file stem in separate batches (or to separate directories)",
                outputs[k].display(),
                others.join(", ")
            )
        })
    };
    let results: Vec<ConvertResult> = (0..a.inputs.len())
        .into_par_iter()
        .map(|k| {
            let (input, out) = (&a.inputs[k], outputs[k].clone());
            // Never started: its output would collide, or Ctrl-C came first.
            let refused = collision(k).or_else(|| INTERRUPTED.load(Ordering::SeqCst).then(|| "interrupted before it started".to_owned()));
            let r = if let Some(error) = refused {
                any_failed.store(true, Ordering::Relaxed);
                ConvertResult {
                    input: input.display().to_string(),
                    output: None,
                    from: None,
                    to: target.name().into(),
                    ok: false,
                    skipped: false,
                    error: Some(error),
                    diagnostics: vec![],
                }
            } else if a.skip_existing && out.exists() {
                ConvertResult {
                    input: input.display().to_string(),
                    output: Some(out.display().to_string()),
                    from: None,
                    to: target.name().into(),
                    ok: true,
                    skipped: true,
                    error: None,
                    diagnostics: vec![],
                }
            } else {
                let (res, from, diags) = convert_one(&a, input, &out, target);
                if res.is_err() {
                    any_failed.store(true, Ordering::Relaxed);
                }
                ConvertResult {
                    input: input.display().to_string(),
                    output: Some(out.display().to_string()),
                    from: from.map(|f| f.name().to_string()),
                    to: target.name().into(),
                    ok: res.is_ok(),
                    skipped: false,
                    error: res.err().map(|e| format!("{e:#}")),
                    diagnostics: diags.items,
                }
            };
            if let Some(pb) = &progress {
                pb.inc(1);
            }
            r
        })
        .collect();
    if let Some(pb) = progress {
        pb.finish_and_clear();
    }
    let failed: Vec<&ConvertResult> = results.iter().filter(|r| !r.ok).collect();
    let skipped = results.iter().filter(|r| r.skipped).count();
    if a.json {
        #[derive(Serialize)]
        struct Summary<'a> {
            total: usize,
            converted: usize,
            skipped: usize,
            failed: usize,
            results: &'a [ConvertResult],
        }
        let s = Summary {
            total: results.len(),
            converted: results.len() - failed.len() - skipped,
            skipped,
            failed: failed.len(),
            results: &results,
        };
        println!("{}", serde_json::to_string_pretty(&s)?);
    } else {
        for r in &results {
            print_diagnostics(&r.input, &Diagnostics { items: r.diagnostics.clone() });
        }
        eprintln!(
            "converted {} of {} files to {}{}",
            results.len() - failed.len() - skipped,
            results.len(),
            target.name(),
            if skipped > 0 { format!(" ({skipped} skipped: output exists)") } else { String::new() }
        );
        if !failed.is_empty() {
            eprintln!("{} failed:", failed.len());
            for r in &failed {
                eprintln!("  {}: {}", r.input, r.error.as_deref().unwrap_or("?"));
            }
        }
    }
    if INTERRUPTED.load(Ordering::SeqCst) {
        eprintln!("interrupted: re-run with --skip-existing to resume");
        return Ok(ExitCode::from(130));
    }
    Ok(if any_failed.load(Ordering::Relaxed) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn cmd_inspect(a: InspectArgs) -> Result<ExitCode> {
    let l = load(&a.file, a.read.from.as_deref(), &a.read.options())?;
    let name = a.file.display().to_string();
    print_diagnostics(&name, &l.diagnostics);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&inspect::report(&l.doc, l.format.name()))?);
    } else {
        print!("{}", inspect::text(&l.doc, l.format.name(), &name));
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Serialize)]
struct ValidateReport {
    file: String,
    format: String,
    target: Option<String>,
    valid: bool,
    problems: Vec<skelport_ir::validate::Problem>,
    warnings: Vec<String>,
}

fn cmd_validate(a: ValidateArgs) -> Result<ExitCode> {
    let l = load(&a.file, a.read.from.as_deref(), &a.read.options())?;
    let name = a.file.display().to_string();
    let mut problems = skelport_ir::validate::validate(&l.doc);
    let mut warnings: Vec<String> =
        l.diagnostics.items.iter().filter(|d| d.severity != Severity::Info).map(|d| d.message.clone()).collect();
    if let Some(t) = &a.target {
        if t.eq_ignore_ascii_case("sl") {
            let (p, w) = sl_problems(&a.file, &l, a.read.sl_skeleton.as_deref())?;
            problems.extend(p);
            warnings.extend(w);
        } else {
            problems.extend(target_problems(&a.file, &l, t)?);
        }
    }
    let valid = problems.is_empty();
    if a.json {
        let r = ValidateReport { file: name, format: l.format.name().into(), target: a.target.clone(), valid, problems, warnings };
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        for w in &warnings {
            eprintln!("warning: {name}: {w}");
        }
        for p in &problems {
            println!("{name}: {p}");
        }
        if valid {
            println!("{name}: valid ({}{})", l.format.name(), a.target.as_deref().map(|t| format!(", target {t}")).unwrap_or_default());
        } else {
            println!("{name}: {} problem(s)", problems.len());
        }
    }
    Ok(if valid { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

/// The SL importer's rules: a `.dae` is checked as it is; anything else is first written as the
/// `.dae` skelport would upload (writer errors are problems, its losses warnings).
fn sl_problems(file: &Path, l: &Loaded, sl_skeleton: Option<&Path>) -> Result<(Vec<skelport_ir::validate::Problem>, Vec<String>)> {
    use skelport_ir::validate::Problem;
    let sl = match sl_skeleton {
        Some(p) => std::borrow::Cow::Owned(skelport_sl::SlSkeleton::from_file(p)?),
        None => std::borrow::Cow::Borrowed(skelport_sl::SlSkeleton::builtin()),
    };
    let name = file.display().to_string();
    let mut problems = Vec::new();
    let mut warnings = Vec::new();
    let bytes = if l.format.name() == "dae" {
        skelport_cli::io::read_input(file)?
    } else {
        let opts = WriteOptions { file_stem: stem_of(file), sl_skeleton: sl_skeleton.map(Path::to_path_buf), ..Default::default() };
        match render(&l.doc, &skelport_sl::DaeFormat, &opts) {
            Err(e) => {
                problems.push(Problem { location: "target sl".into(), message: format!("{e:#}") });
                return Ok((problems, warnings));
            }
            Ok((out, d)) => {
                warnings.extend(d.of(Severity::Loss).map(|d| format!("as .dae: {}", d.message)));
                skelport_cli::io::InputBytes::Read(out.main)
            }
        }
    };
    for v in skelport_sl::validate_sl(&bytes, &name, &sl) {
        match v.level {
            skelport_sl::Level::Error => {
                problems.push(Problem { location: v.location.clone(), message: format!("[{}] {}", v.rule, v.message) })
            }
            skelport_sl::Level::Warning => warnings.push(format!("{} [{}] {}", v.location, v.rule, v.message)),
        }
    }
    Ok((problems, warnings))
}

/// The target format's rules: whatever the target's writer refuses or cannot hold.
fn target_problems(file: &Path, l: &Loaded, target: &str) -> Result<Vec<skelport_ir::validate::Problem>> {
    use skelport_ir::validate::Problem;
    let fmt = skelport_cli::format_named(target, false)?;
    let mut out = Vec::new();
    match render(&l.doc, fmt, &WriteOptions { file_stem: stem_of(file), ..Default::default() }) {
        Err(e) => out.push(Problem { location: format!("target {}", fmt.name()), message: format!("{e:#}") }),
        Ok((_, d)) => {
            out.extend(d.of(Severity::Loss).map(|d| Problem { location: format!("target {}", fmt.name()), message: d.message.clone() }))
        }
    }
    Ok(out)
}

fn cmd_diff(a: DiffArgs) -> Result<ExitCode> {
    let opts = ReadOptions { mesh: a.mesh.clone(), weights: a.weights.clone(), sl_skeleton: a.sl_skeleton.clone(), ..Default::default() };
    let mut la = load(&a.a, None, &opts)?;
    let lb = match &a.b {
        Some(b) => load(b, None, &opts)?,
        None => {
            let sl = match &a.sl_skeleton {
                Some(p) => std::borrow::Cow::Owned(skelport_sl::SlSkeleton::from_file(p)?),
                None => std::borrow::Cow::Borrowed(skelport_sl::SlSkeleton::builtin()),
            };
            Loaded { doc: skelport_sl::skeleton_document(&sl), format: &skelport_sl::SlSkeletonFormat, diagnostics: Diagnostics::default() }
        }
    };
    if let Some(m) = &a.map {
        let map = skelport_cli::maps::load(m)?;
        skelport_cli::retarget(&mut la.doc, &map, &mut Diagnostics::default())?;
    }
    let mut r = diff::diff(&la.doc, &lb.doc, diff::Tolerance { metres: a.tolerance, degrees: a.angle_tolerance, ..Default::default() });
    if a.pose_test {
        let p = diff::pose_test(&la.doc, &lb.doc, a.poses, 1)?;
        if p.max_deviation > a.tolerance {
            r.same = false;
        }
        r.pose_test = Some(p);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        if let Some(p) = &r.pose_test {
            let over = if p.vertices > 0 { format!("{} vertices", p.vertices) } else { format!("{} joints", p.joints) };
            println!("pose test: {} poses over {over}, max deviation {:.3e} m", p.poses, p.max_deviation);
        }
        for n in &r.removed {
            println!("- {n}");
        }
        for n in &r.added {
            println!("+ {n}");
        }
        for p in &r.reparented {
            println!("~ {}: parent {} → {}", p.bone, p.from.as_deref().unwrap_or("(root)"), p.to.as_deref().unwrap_or("(root)"));
        }
        for m in &r.moved {
            println!("~ {}: moved head {:.6} m, tail {:.6} m", m.bone, m.head, m.tail);
        }
        for m in &r.rotated {
            println!("~ {}: rotated {:.4}°", m.bone, m.degrees);
        }
        for s in &r.skins {
            println!("~ {s}");
        }
        println!("{}", if r.same { "same".to_string() } else { "different".to_string() });
    }
    Ok(if r.same { ExitCode::SUCCESS } else { ExitCode::from(1) })
}

fn demo(a: DemoArgs) -> Result<ExitCode> {
    std::fs::create_dir_all(&a.dir).with_context(|| format!("{}: cannot create the directory", a.dir.display()))?;
    let doc = skelport_cli::demo::sample();
    check_valid(&doc, "built-in sample")?;
    let mut failed = 0;
    for f in registry::formats().iter().filter(|f| f.can_write()) {
        let path = a.dir.join(skelport_cli::demo::file_name(*f));
        let result = (|| -> Result<String> {
            let (out, d) = render(&doc, *f, &WriteOptions { file_stem: stem_of(&path), ..Default::default() })?;
            io::write_output(&path, &out)?;
            let size = out.main.len() + out.side_files.iter().map(|s| s.1.len()).sum::<usize>();
            // Side files a reader needs back (MPFB's weights.<name>.json).
            let weights = out.side_files.iter().find(|s| s.0.starts_with("weights.")).map(|s| a.dir.join(&s.0));
            let back = load(&path, Some(f.name()), &ReadOptions { weights, ..Default::default() })?;
            let r = diff::diff(&doc, &back.doc, diff::Tolerance::default());
            let bones: usize = back.doc.skeletons.iter().map(|s| s.bones.len()).sum();
            let verts: usize = back.doc.skins.iter().map(|s| s.vertex_count()).sum();
            let losses = d.of(Severity::Loss).count();
            Ok(format!(
                "{:<12} {bones} bones, {} skin(s), {verts} skinned vertices, {size} bytes; re-read {} (max head Δ {:.1e} m){}",
                f.name(),
                back.doc.skins.len(),
                if r.same { "identical" } else { "differs" },
                r.max_head_distance,
                if losses > 0 { format!(", {losses} loss(es)") } else { String::new() }
            ))
        })();
        match result {
            Ok(line) => println!("{}  {line}", path.display()),
            Err(e) => {
                failed += 1;
                println!("{}  {:<12} FAILED: {e:#}", path.display(), f.name());
            }
        }
    }
    let pic = a.dir.join("sample.svg");
    let opts = skelport_render::RenderOptions {
        view: skelport_render::View::All,
        size: 1024,
        labels: true,
        mesh: true,
        caption: "built-in sample".into(),
        overlay: None,
    };
    match skelport_render::render_svg(&doc, &opts)
        .map_err(|e| anyhow!("{e}"))
        .and_then(|svg| io::write_output(&pic, &skelport_ir::Output::single(svg.into_bytes())))
    {
        Ok(_) => println!("{}  render       23 bones, front/side/top views", pic.display()),
        Err(e) => {
            failed += 1;
            println!("{}  render       FAILED: {e:#}", pic.display());
        }
    }
    Ok(if failed > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
}

fn cmd_render(a: RenderArgs) -> Result<ExitCode> {
    use skelport_render::{render_svg, svg_to_png, Overlay, RenderOptions, View};
    let l = load(&a.file, a.read.from.as_deref(), &a.read.options())?;
    print_diagnostics(&a.file.display().to_string(), &l.diagnostics);
    let overlay = match &a.overlay {
        Some(p) => {
            let mut o = load(p, None, &ReadOptions { mesh: a.read.mesh.clone(), ..Default::default() })?;
            if let Some(m) = &a.map {
                skelport_cli::retarget(&mut o.doc, &skelport_cli::maps::load(m)?, &mut Diagnostics::default())?;
            }
            Some(Overlay { doc: o.doc, caption: file_label(p) })
        }
        None => None,
    };
    let view = match a.view {
        ViewArg::Front => View::Front,
        ViewArg::Side => View::Side,
        ViewArg::Top => View::Top,
        ViewArg::All => View::All,
    };
    let opts = RenderOptions { view, size: a.size, labels: a.labels, mesh: !a.no_mesh, caption: file_label(&a.file), overlay };
    let svg = render_svg(&l.doc, &opts).map_err(|e| anyhow!("{}: {e}", a.file.display()))?;
    let bytes = match registry::extension_of(&a.output).as_deref() {
        Some("svg") => svg.into_bytes(),
        Some("png") => svg_to_png(&svg).map_err(|e| anyhow!("{}: {e}", a.output.display()))?,
        _ => bail!("{}: the picture must be .svg or .png", a.output.display()),
    };
    io::write_output(&a.output, &skelport_ir::Output::single(bytes))?;
    Ok(ExitCode::SUCCESS)
}

fn file_label(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}

fn list_maps() -> Result<ExitCode> {
    for (name, _) in skelport_cli::maps::BUILT_IN {
        let m = skelport_cli::maps::load(name)?;
        println!("{name:<26} {:>3} bones  {}", m.bones.len(), m.description);
    }
    Ok(ExitCode::SUCCESS)
}

fn formats() -> Result<ExitCode> {
    for f in registry::formats() {
        println!(
            "{:<14} {:<5} {:<5} .{:<16} {}",
            f.name(),
            if f.can_read() { "read" } else { "" },
            if f.can_write() { "write" } else { "" },
            f.extensions().join(" ."),
            f.description()
        );
    }
    Ok(ExitCode::SUCCESS)
}
