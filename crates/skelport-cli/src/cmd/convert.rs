//! `skelport convert`: one file, or many into a directory on every core (rayon), with a progress
//! bar on a terminal and Ctrl-C stopping cleanly between files.

use super::print_diagnostics;
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
    diagnostics: Vec<Diagnostic>,
}

/// What the library is given for one output.
fn options(a: &ConvertArgs, out: &Path) -> ConvertOptions {
    ConvertOptions {
        output: Some(out.to_path_buf()),
        map: a.map.clone(),
        strict: a.strict,
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

/// Convert one file; diagnostics are returned even on failure where known.
fn convert_one(
    a: &ConvertArgs,
    input: &Path,
    output: &Path,
    target: &'static dyn Format,
) -> (Result<(), skelport::Error>, Option<&'static dyn Format>, Diagnostics) {
    let loaded = match skelport::open(input, &a.read.options()) {
        Ok(l) => l,
        Err(e) => return (Err(e), None, Diagnostics::default()),
    };
    let from = loaded.format;
    let converted = match loaded.into_converted(target, &options(a, output)) {
        Ok(c) => c,
        Err(mut e) => {
            let diags = e.take_diagnostics();
            return (Err(e), Some(from), diags);
        }
    };
    let written = converted.save(output).map(drop);
    (written, Some(from), converted.diagnostics)
}

fn is_dir_target(p: &Path) -> bool {
    p.is_dir() || p.as_os_str().to_string_lossy().ends_with('/')
}

/// Run `skelport convert`.
pub fn run(a: ConvertArgs) -> Result<ExitCode> {
    let batch = a.inputs.len() > 1 || is_dir_target(&a.output);
    if !batch {
        let input = &a.inputs[0];
        let target = match &a.to {
            Some(t) => skelport::format_for(t, false)?,
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
    let target = skelport::format_for(to, false)?;
    std::fs::create_dir_all(&a.output).with_context(|| format!("{}: cannot create the output directory", a.output.display()))?;
    let progress = std::io::stderr().is_terminal().then(|| {
        let pb = indicatif::ProgressBar::new(a.inputs.len() as u64);
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
    let planned = skelport::batch_outputs(&a.inputs, &a.output, target, &options(&a, &a.output).write);
    let outputs: Vec<PathBuf> = planned.iter().map(|p| p.main.clone()).collect();
    let collision = |k: usize| -> Option<String> { planned[k].conflict.clone() };
    let results: Vec<ConvertResult> = (0..a.inputs.len())
        .into_par_iter()
        .map(|k| {
            let (input, out) = (&a.inputs[k], outputs[k].clone());
            // Never started: its output would collide, or Ctrl-C came first.
            let refused =
                collision(k).or_else(|| super::INTERRUPTED.load(Ordering::SeqCst).then(|| "interrupted before it started".to_owned()));
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
    if super::INTERRUPTED.load(Ordering::SeqCst) {
        eprintln!("interrupted: re-run with --skip-existing to resume");
        return Ok(ExitCode::from(130));
    }
    Ok(if any_failed.load(Ordering::Relaxed) { ExitCode::from(1) } else { ExitCode::SUCCESS })
}
