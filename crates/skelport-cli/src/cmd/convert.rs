//! `skelport convert`: one file, or many into a directory on every core (rayon), with a progress
//! bar on a terminal and Ctrl-C stopping cleanly between files.

use super::{print_diagnostics, verbose};
use crate::flags::ConvertArgs;
use anyhow::{anyhow, Context, Result};
use rayon::prelude::*;
use serde::Serialize;
use skelport::{registry, stem_of, ConvertOptions, Diagnostic, Diagnostics, Format, WriteOptions};
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

/// One file's line of the `--json` report.
#[derive(Serialize)]
struct ConvertResult {
    input: String,
    output: Option<String>,
    from: Option<String>,
    to: String,
    ok: bool,
    skipped: bool,
    error: Option<String>,
    /// The error's stable code (`skelport::ErrorCode`), when it failed.
    code: Option<String>,
    diagnostics: Vec<Diagnostic>,
}

/// What the library is given for one output.
fn options(a: &ConvertArgs, out: &Path) -> ConvertOptions {
    ConvertOptions {
        map: a.map.clone(),
        strict: a.strict,
        allow_loss: a.allow_loss,
        write: WriteOptions {
            file_stem: stem_of(out),
            embed: a.embed,
            compress: a.compress,
            max_influences: a.max_influences,
            default_joints: a.default_joints,
            fix: a.fix,
            bone_limit: a.limit,
            keep_helpers: a.read.keep_helpers,
            sl_skeleton: a.read.sl_skeleton.clone(),
            mesh: a.read.mesh.clone(),
            keep_origin: a.read.keep_origin,
            rest_pose: a.rest_pose,
            vrm_meta: a.vrm_meta.clone(),
            ..Default::default()
        },
    }
}

/// One file's conversion: the result, the formats (as far as it got) and the diagnostics.
struct Outcome {
    result: Result<(), skelport::Error>,
    from: Option<&'static str>,
    to: Option<&'static dyn Format>,
    diagnostics: Diagnostics,
}

/// Convert one file (with `weights` joined to it, when given) to `target`, or when `None` to the
/// format `output` names ([`skelport::output_format`]: an input's own format when it writes that
/// extension). Diagnostics are returned even on failure where known.
fn convert_one(a: &ConvertArgs, input: &Path, weights: Option<&Path>, output: &Path, target: Option<&'static dyn Format>) -> Outcome {
    let mut read = a.read.options();
    if let Some(w) = weights {
        read.reader.weights = Some(w.to_path_buf());
    }
    // The extension data only other writers take may wait (`ReadOptions::extension_use`): made
    // by `convert_file` if the format the output's name gives turns out to be another's.
    if let Some(ns) = target.or_else(|| registry::detect_writer(output)).and_then(|t| t.namespace()) {
        read.reader.extension_use = skelport::ir::ExtensionUse::Owner(ns);
    }
    let open = |p: &Path| super::open(p, &read);
    let o =
        skelport::convert_file(input, output, open, target, &options(a, output), || true).expect("nothing here gives up before the save");
    if let (Some(from), true, true) = (o.from, o.read, verbose()) {
        // The weights read with it: joined from beside it, or given with --weights.
        let with = weights.or(a.read.weights.as_deref());
        tell!("{}: read as {from}{}", input.display(), with.map(|w| format!(" with {}", w.display())).unwrap_or_default());
    }
    if let (Some(to), Ok(files), true) = (o.to, &o.result, verbose()) {
        for f in files {
            // The format's own line says which form (AnvilToolkit's Standard or Schema-Based).
            tell!("{}: wrote {} as {} ({})", input.display(), f.display(), to.name(), to.description());
        }
    }
    Outcome { result: o.result.map(drop), from: o.from, to: o.to, diagnostics: o.diagnostics }
}

fn is_dir_target(p: &Path) -> bool {
    p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/')
}

/// Run `skelport convert`.
pub fn run(mut a: ConvertArgs) -> Result<ExitCode> {
    let folder = a.inputs.iter().any(|p| p.is_dir());
    if folder {
        a.inputs = registry::files_to_read(&a.inputs)?;
    }
    let batch = folder || a.inputs.len() > 1 || is_dir_target(&a.output);
    if !batch {
        let input = &a.inputs[0];
        let named = match &a.to {
            Some(t) => Some(skelport::format_to_write(t)?),
            None => None,
        };
        if named.is_none() && registry::detect_writer(&a.output).is_none() {
            return Err(anyhow!(
                "cannot tell the output format from '{}'; name it with --to ({})",
                a.output.display(),
                registry::names(|f| f.can_write())
            ));
        }
        // As in a batch: an MPFB rig.<name>.json is joined to the weights.<name>.json beside it.
        let plan = skelport::mpfb_folder::plan_batch(std::slice::from_ref(input), a.read.weights.as_deref())?;
        let beside = plan.jobs.first().and_then(|j| j.weights.clone());
        if let (Some(note), false, false) = (&plan.note, super::quiet(), beside.is_none()) {
            tell!("note: {note}");
        }
        let o = convert_one(&a, input, beside.as_deref(), &a.output, named);
        let shown = input.display().to_string();
        if a.json && a.output.as_os_str() != "-" {
            let r = ConvertResult {
                input: shown.clone(),
                output: Some(a.output.display().to_string()),
                from: o.from.map(str::to_owned),
                to: o.to.map_or_else(|| a.to.clone().unwrap_or_default(), |t| t.name().to_owned()),
                ok: o.result.is_ok(),
                skipped: false,
                error: o.result.as_ref().err().map(|e| format!("{e:#}")),
                code: o.result.as_ref().err().map(|e| e.code().as_str().to_owned()),
                diagnostics: o.diagnostics.items.clone(),
            };
            println!("{}", serde_json::to_string_pretty(&r)?);
        } else {
            let mut shown_diags = o.diagnostics.clone();
            if o.result.as_ref().is_err_and(|e| e.code() == skelport::ErrorCode::Loss) {
                // The error lists them.
                shown_diags.items.retain(|d| !(d.severity == skelport::Severity::Loss && d.code.starts_with("skin.")));
            }
            print_diagnostics(&shown, &shown_diags);
        }
        o.result?;
        return Ok(ExitCode::SUCCESS);
    }

    let to = a.to.as_deref().ok_or_else(|| anyhow!("several inputs need --to FMT to name the output format"))?;
    let target = skelport::format_to_write(to)?;
    // MPFB folders: each rig joined to the weights beside it; weights files are not inputs.
    skelport::ir::trace::phase("batch: arguments read");
    let plan = skelport::mpfb_folder::plan_batch(&a.inputs, a.read.weights.as_deref())?;
    skelport::ir::trace::phase("batch: planned");
    std::fs::create_dir_all(&a.output).with_context(|| format!("{}: cannot create the output directory", a.output.display()))?;
    let progress = std::io::stderr().is_terminal().then(|| {
        let pb = indicatif::ProgressBar::new(plan.jobs.len() as u64);
        pb.set_style(
            indicatif::ProgressStyle::with_template("{bar:40} {pos}/{len} {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        pb
    });
    // Ctrl-C (or SIGTERM) stops starting new files; files in flight finish their atomic write,
    // so an interrupted batch leaves no partial output and can be resumed with --skip-existing.
    // A second one ends the batch at once, removing the temporaries (super::on_signal).
    super::BATCH.store(true, Ordering::SeqCst);
    let any_failed = AtomicBool::new(false);
    // Outputs are named by input stem, so `a/rig.json` and `b/rig.glb` would write the same file
    // (and `rig.x.glb` and `x.glb` the same MPFB weights file) and one would silently replace
    // the other. Every path is known before any is written: such inputs fail, naming each other;
    // the rest of the batch goes on.
    let inputs: Vec<PathBuf> = plan.jobs.iter().map(|j| j.input.clone()).collect();
    let planned = skelport::batch_outputs(&inputs, &a.output, target, &options(&a, &a.output).write);
    skelport::ir::trace::phase("batch: outputs named");
    let results: Vec<ConvertResult> = (0..inputs.len())
        .into_par_iter()
        .map(|k| {
            let input = &inputs[k];
            // Never started: its output would collide, or Ctrl-C came first.
            let out = planned[k].main.clone();
            let refused = planned[k]
                .conflict
                .clone()
                .or_else(|| super::INTERRUPTED.load(Ordering::SeqCst).then(|| "interrupted before it started".to_owned()));
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
                    code: Some("output".into()),
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
                    code: None,
                    diagnostics: vec![],
                }
            } else {
                let o = convert_one(&a, input, plan.jobs[k].weights.as_deref(), &out, Some(target));
                if o.result.is_err() {
                    any_failed.store(true, Ordering::Relaxed);
                }
                ConvertResult {
                    input: input.display().to_string(),
                    output: Some(out.display().to_string()),
                    from: o.from.map(str::to_owned),
                    to: target.name().into(),
                    ok: o.result.is_ok(),
                    skipped: false,
                    code: o.result.as_ref().err().map(|e| e.code().as_str().to_owned()),
                    error: o.result.err().map(|e| format!("{e:#}")),
                    diagnostics: o.diagnostics.items,
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
    // Weights files whose rig is not in the batch: not converted on their own, and failed.
    let mut results = results;
    for (input, error) in &plan.refused {
        any_failed.store(true, Ordering::Relaxed);
        results.push(ConvertResult {
            input: input.display().to_string(),
            output: None,
            from: Some(skelport::mpfb_folder::FORMAT.into()),
            to: target.name().into(),
            ok: false,
            skipped: false,
            error: Some(error.clone()),
            code: Some(skelport::ErrorCode::Kind.as_str().into()),
            diagnostics: vec![],
        });
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
        if let (Some(note), false) = (&plan.note, super::quiet()) {
            tell!("note: {note}");
        }
        for r in &results {
            print_diagnostics(&r.input, &Diagnostics { items: r.diagnostics.clone() });
        }
        tell!(
            "converted {} of {} files to {}{}",
            results.len() - failed.len() - skipped,
            results.len(),
            target.name(),
            if skipped > 0 { format!(" ({skipped} skipped: output exists)") } else { String::new() }
        );
        if !failed.is_empty() {
            tell!("{} failed:", failed.len());
            for r in &failed {
                let error = r.error.as_deref().unwrap_or("?");
                // Errors name their file first: said once.
                if error.starts_with(&r.input) {
                    tell!("  {error}");
                } else {
                    tell!("  {}: {error}", r.input);
                }
            }
        }
    }
    if super::INTERRUPTED.load(Ordering::SeqCst) {
        tell!("interrupted: re-run with --skip-existing to resume");
        return Ok(ExitCode::from(super::SIGNAL_EXIT.load(Ordering::SeqCst)));
    }
    Ok(if any_failed.load(Ordering::Relaxed) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
