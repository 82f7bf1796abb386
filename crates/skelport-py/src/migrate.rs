//! The native half of `skelport.migrate` (python/skelport/migrate.py): planning a batch as the
//! command line's `convert` batch plans it, and converting one file of it into the row the
//! command line's `--json` batch report has for that file. The distributed part (Dask, the
//! manifest, resuming) is Python; each task calls `migrate_file` once per input, which releases
//! the GIL for the whole conversion.

use crate::convert::Job;
use crate::document::map_arg;
use crate::errors::{guard, Failure};
use crate::options;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use serde::Serialize;
use skelport::Diagnostic;
use std::path::{Path, PathBuf};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// One input's row: the fields of the command line's `--json` batch report
/// (schemas/convert-report.schema.json), and the files written.
#[derive(Serialize)]
struct Row {
    input: String,
    output: Option<String>,
    from: Option<String>,
    to: String,
    ok: bool,
    skipped: bool,
    error: Option<String>,
    code: Option<String>,
    diagnostics: Vec<Diagnostic>,
    /// Every file written (the main file last, as `Converted::save` renames them).
    outputs: Vec<String>,
}

/// Where a conversion running on its own thread is: a timed-out conversion must not write
/// after its row said it timed out, and one already saving is let finish (saving is bounded).
#[derive(PartialEq)]
enum Phase {
    Converting,
    Saving,
    Abandoned,
}

/// Read, convert and save `input` into `output` as the command line's batch does
/// ([`skelport::convert_file`]), unless `phase` says the caller gave up before the save began
/// (then `None`).
fn convert_one(s: &Job, input: &Path, output: &Path, phase: &Mutex<Phase>) -> Option<Row> {
    let before_save = || {
        let mut p = phase.lock().unwrap_or_else(|p| p.into_inner());
        if *p == Phase::Abandoned {
            return false;
        }
        *p = Phase::Saving;
        true
    };
    let o = s.convert_file(input, None, output, before_save)?;
    let mut row = pending_row(s, input, output);
    row.from = o.from.map(str::to_owned);
    row.diagnostics = o.diagnostics.items;
    match o.result {
        Ok(written) => {
            row.ok = true;
            row.outputs = written.iter().map(|p| p.display().to_string()).collect();
        }
        Err(e) => {
            row.code = Some(e.code().as_str().to_owned());
            row.error = Some(format!("{e:#}"));
        }
    }
    Some(row)
}

/// A row for a failure of this module's own (a panic, a timeout).
fn failed_row(s: &Job, input: &Path, output: &Path, code: &str, error: String) -> Row {
    Row { error: Some(error), code: Some(code.to_owned()), ..pending_row(s, input, output) }
}

/// The row of an input not yet converted: nothing read, nothing written.
fn pending_row(s: &Job, input: &Path, output: &Path) -> Row {
    Row {
        input: input.display().to_string(),
        output: Some(output.display().to_string()),
        from: None,
        to: s.target.name().to_owned(),
        ok: false,
        skipped: false,
        error: None,
        code: None,
        diagnostics: Vec::new(),
        outputs: Vec::new(),
    }
}

/// Convert one input of a migration into `output`, as the command line's batch converts it,
/// and return its `--json` row as a dict (`input`, `output`, `from`, `to`, `ok`, `skipped`,
/// `error`, `code`, `diagnostics`) with `outputs`, the files written. Never raises for the
/// file's own failure: that is the row. `weights` is the MPFB weights file joined to the rig
/// (`_plan` finds it). With `timeout` (seconds), a conversion still running then is abandoned
/// before it saves anything and the row says so (code `timeout`); its thread runs on to its end
/// in the background and writes nothing.
#[pyfunction]
#[pyo3(name = "_migrate_file", signature = (input, output, to, *, weights=None, from_=None, mesh=None, map=None, max_influences=None, strict=false, timeout=None, **writer_options))]
pub fn migrate_file(
    py: Python<'_>,
    input: &Bound<'_, PyAny>,
    output: &Bound<'_, PyAny>,
    to: &str,
    weights: Option<&Bound<'_, PyAny>>,
    from_: Option<String>,
    mesh: Option<&Bound<'_, PyAny>>,
    map: Option<&Bound<'_, PyAny>>,
    max_influences: Option<&Bound<'_, PyAny>>,
    strict: bool,
    timeout: Option<f64>,
    writer_options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Py<PyAny>> {
    let input = options::path(input, "input")?;
    let output = options::path(output, "output")?;
    let e = options::extra(writer_options, options::CONVERT_OPTIONS, "migrate")?;
    let mesh = options::companion(mesh, "<mesh>")?;
    let weights = options::companion(weights, "<weights>")?;
    let max_influences = max_influences.map(|m| options::count(m, "max_influences")).transpose()?.flatten();
    let target = skelport::format_to_write(to).map_err(|e| Failure::from(e).into_py(py))?;
    let timeout = match timeout {
        Some(t) if t.is_finite() && t > 0.0 => Some(Duration::from_secs_f64(t)),
        Some(t) => return Err(pyo3::exceptions::PyValueError::new_err(format!("timeout must be a positive number of seconds, not {t}"))),
        None => None,
    };
    let s = Arc::new(Job {
        target,
        read: options::read_options(from_, &mesh, &weights, &e),
        map: map_arg(map)?,
        max_influences,
        strict,
        mesh,
        extra: e,
    });
    let shown = input.display().to_string();
    let row = py.detach(move || {
        let run = {
            let (s, input, output) = (s.clone(), input.clone(), output.clone());
            move |phase: &Mutex<Phase>| {
                guard(Some(&shown), || Ok(convert_one(&s, &input, &output, phase)))
                    .unwrap_or_else(|f: Failure| Some(failed_row(&s, &input, &output, f.code, f.message)))
            }
        };
        let Some(limit) = timeout else {
            return run(&Mutex::new(Phase::Converting)).unwrap_or_else(|| unreachable!("only a timeout abandons a conversion"));
        };
        let phase = Arc::new(Mutex::new(Phase::Converting));
        let (tx, rx) = mpsc::channel();
        {
            let phase = phase.clone();
            std::thread::spawn(move || {
                if let Some(row) = run(&phase) {
                    let _ = tx.send(row);
                }
            });
        }
        match rx.recv_timeout(limit) {
            Ok(row) => row,
            Err(_) => {
                let mut p = phase.lock().unwrap_or_else(|p| p.into_inner());
                if *p == Phase::Saving {
                    drop(p);
                    // Saving when the time ran out: its files are being renamed into place.
                    return rx.recv().unwrap_or_else(|_| {
                        failed_row(&s, &input, &output, "internal", format!("{}: the conversion stopped without a result; this is a bug in skelport", input.display()))
                    });
                }
                *p = Phase::Abandoned;
                failed_row(
                    &s,
                    &input,
                    &output,
                    "timeout",
                    format!(
                        "{}: not converted within {} s (the migration's per-file timeout); nothing was written: give a larger timeout= to convert it",
                        input.display(),
                        limit.as_secs_f64()
                    ),
                )
            }
        }
    });
    crate::json_value(py, &row).map(|v| v.unbind())
}

/// One planned job: input, weights, main output, side files, conflict.
type PlannedJob = (String, Option<String>, String, Vec<String>, Option<String>);

/// Plan a migration of `inputs` into `out_dir` as `to`, as the command line's batch plans it:
/// each MPFB `rig.<name>.json` joined to the `weights.<name>.json` beside it (weights files are
/// not inputs of their own), and each input's output paths, with why an input must not be
/// converted when its outputs would collide with another's. Returns a dict: `jobs` (a list of
/// `(input, weights, output, side_files, conflict)`), `refused` (weights files whose rig is not
/// among the inputs: `(input, message)`, code `input.kind` as on the command line), `note`,
/// `to` (the target's name).
#[pyfunction]
#[pyo3(name = "_migrate_plan", signature = (inputs, out_dir, to, *, weights=None, embed=false, compress=false))]
pub fn migrate_plan(
    py: Python<'_>,
    inputs: Vec<PathBuf>,
    out_dir: PathBuf,
    to: &str,
    weights: Option<PathBuf>,
    embed: bool,
    compress: bool,
) -> PyResult<Py<PyAny>> {
    #[derive(Serialize)]
    struct Plan {
        jobs: Vec<PlannedJob>,
        refused: Vec<(String, String)>,
        note: Option<String>,
        to: &'static str,
    }
    let target = skelport::format_to_write(to).map_err(|e| Failure::from(e).into_py(py))?;
    let plan = py.detach(|| -> Result<Plan, skelport::Error> {
        let plan = skelport::mpfb_folder::plan_batch(&inputs, weights.as_deref())?;
        let ins: Vec<PathBuf> = plan.jobs.iter().map(|j| j.input.clone()).collect();
        let write = skelport::WriteOptions { embed, compress, ..Default::default() };
        let outs = skelport::batch_outputs(&ins, &out_dir, target, &write);
        let shown = |p: &Path| p.display().to_string();
        Ok(Plan {
            jobs: plan
                .jobs
                .iter()
                .zip(outs)
                .map(|(j, o)| {
                    (
                        shown(&j.input),
                        j.weights.as_deref().map(shown),
                        shown(&o.main),
                        o.side_files.iter().map(|p| shown(p)).collect(),
                        o.conflict,
                    )
                })
                .collect(),
            refused: plan.refused.iter().map(|(i, m)| (shown(i), m.clone())).collect(),
            note: plan.note,
            to: target.name(),
        })
    });
    let plan = plan.map_err(|e| Failure::from(e).into_py(py))?;
    crate::json_value(py, &plan).map(|v| v.unbind())
}
