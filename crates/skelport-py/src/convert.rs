//! `skelport.convert`: the command line's `convert` as a call. One input to one output raises on
//! failure; a list of inputs into a folder runs on every core with the GIL released, goes on
//! past a bad file (each failure is in the `Report`), and stops between files on Ctrl-C.

use crate::document::{map_arg, target_for};
use crate::errors::{guard, Failure};
use crate::options::{self, Companion, Extra};
use crate::report::{diagnostics, FileReport, Report};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};
use rayon::prelude::*;
use skelport::{Diagnostics, Format};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Mutex};
use std::time::Duration;

/// What converting one input gave, before it becomes Python objects.
struct Done {
    input: PathBuf,
    output: Option<PathBuf>,
    from: Option<&'static str>,
    skipped: bool,
    failure: Option<Failure>,
    diagnostics: Diagnostics,
    written: Vec<PathBuf>,
}

impl Done {
    /// `input`, nothing done yet (to be written to `output`).
    fn new(input: &Path, output: Option<&Path>) -> Self {
        Done {
            input: input.to_path_buf(),
            output: output.map(Path::to_path_buf),
            from: None,
            skipped: false,
            failure: None,
            diagnostics: Diagnostics::default(),
            written: Vec::new(),
        }
    }

    /// `input` refused before it was read: `code` and why.
    fn refused(input: &Path, code: &'static str, why: String) -> Self {
        Done { failure: Some(Failure::new(code, Some(&input.display().to_string()), why)), ..Done::new(input, None) }
    }
}

/// An input of a batch and the weights joined to it (found beside an MPFB rig).
type Input = (PathBuf, Option<PathBuf>);

/// Everything one conversion needs, shared by a batch's workers (and by `migrate`'s tasks).
pub(crate) struct Job {
    pub(crate) target: &'static dyn Format,
    pub(crate) read: skelport::OpenOptions,
    pub(crate) map: Option<String>,
    pub(crate) max_influences: Option<usize>,
    pub(crate) strict: bool,
    pub(crate) mesh: Companion,
    pub(crate) extra: Extra,
}

impl Job {
    /// Read (with `weights` joined, when a batch found them beside an MPFB rig), convert and save
    /// one input: [`skelport::convert_file`] (the command line's per-file conversion) with this
    /// job's options; `None` when `before_save` gave up.
    pub(crate) fn convert_file(
        &self,
        input: &Path,
        weights: Option<&Path>,
        output: &Path,
        before_save: impl FnOnce() -> bool,
    ) -> Option<skelport::FileOutcome> {
        let joined;
        let read = match weights {
            Some(w) => {
                joined = skelport::OpenOptions {
                    reader: skelport::ir::ReadOptions { weights: Some(w.to_path_buf()), ..self.read.reader.clone() },
                    ..self.read.clone()
                };
                &joined
            }
            None => &self.read,
        };
        let opts = options::convert_options(
            Some(output.to_path_buf()),
            self.map.clone(),
            self.max_influences,
            self.strict,
            &self.mesh,
            &self.extra,
        );
        skelport::convert_file(input, output, |p| skelport::open(p, read), Some(self.target), &opts, before_save)
    }

    /// Read, convert and save one input, a panic included in the failure.
    fn run(&self, input: &Path, weights: Option<&Path>, output: &Path) -> Done {
        let shown = input.display().to_string();
        let mut done = Done::new(input, Some(output));
        let r = guard(Some(&shown), || {
            let o = self.convert_file(input, weights, output, || true).expect("nothing here gives up before the save");
            done.from = o.from;
            done.diagnostics = o.diagnostics;
            done.written = o.result?;
            Ok(())
        });
        if let Err(mut f) = r {
            if done.diagnostics.items.is_empty() {
                done.diagnostics = std::mem::take(&mut f.diagnostics);
            }
            done.failure = Some(f);
        }
        done
    }
}

fn file_report(py: Python<'_>, d: Done, target: &dyn Format) -> PyResult<Py<FileReport>> {
    let input = d.input.display().to_string();
    let error = d.failure.map(|mut f| {
        // The exception carries the diagnostics too; the report lists them once, on the file.
        let diags = std::mem::take(&mut f.diagnostics);
        let e = f.into_py(py);
        let v = e.value(py);
        if let Ok(list) = crate::report::diagnostic_list(py, &diags, Some(&input)) {
            let _ = v.setattr("diagnostics", list);
        }
        v.clone().unbind().into_any()
    });
    let ok = error.is_none();
    Py::new(
        py,
        FileReport {
            diagnostics: diagnostics(&d.diagnostics, Some(&input)),
            input,
            output: d.output.map(|o| o.display().to_string()),
            from_format: d.from.map(str::to_owned),
            to_format: target.name().to_owned(),
            ok,
            skipped: d.skipped,
            error,
            outputs: d.written.iter().map(|p| p.display().to_string()).collect(),
        },
    )
}

fn is_dir_target(p: &Path) -> bool {
    p.is_dir() || p.as_os_str().to_string_lossy().ends_with(['/', std::path::MAIN_SEPARATOR])
}

/// Convert files, as `skelport convert` does, and return a `Report`.
///
/// One path (str or os.PathLike) into a file: the format from `to` or the output's extension;
/// raises `skelport.Error` on failure (with `strict=True`, on any loss). A list of paths, or an
/// existing folder (or a path ending in '/') as `output`: a batch into that folder as
/// `<stem>.<extension>`, `to` required, run on every core without the GIL; a failure is in
/// `Report.errors` and the rest goes on; Ctrl-C stops it between files (KeyboardInterrupt);
/// `skip_existing=True` resumes. A folder among the inputs is a batch of the files in it a reader
/// claims, each MPFB rig joined to the weights beside it. `from_` (or `format`, as `load` names
/// it) names the reader; `mesh` and `weights` (paths or bytes)
/// go with every input; `map` is a built-in retarget map's name or a map file. Writer options:
/// embed, compress, joint_positions, fix, limit, keep_helpers, keep_origin, names, sl_skeleton,
/// skip_existing (the command line's flags).
#[pyfunction]
#[pyo3(signature = (inputs, output, *, to=None, from_=None, format=None, mesh=None, weights=None, map=None, max_influences=None, strict=false, **writer_options))]
pub fn convert(
    py: Python<'_>,
    inputs: &Bound<'_, PyAny>,
    output: &Bound<'_, PyAny>,
    to: Option<&str>,
    from_: Option<String>,
    format: Option<String>,
    mesh: Option<&Bound<'_, PyAny>>,
    weights: Option<&Bound<'_, PyAny>>,
    map: Option<&Bound<'_, PyAny>>,
    max_influences: Option<&Bound<'_, PyAny>>,
    strict: bool,
    writer_options: Option<&Bound<'_, PyDict>>,
) -> PyResult<Report> {
    let output = options::path(output, "output")?;
    // A list, a tuple or any other iterable of paths is a batch; a str or a path is one input.
    let one = inputs.is_instance_of::<pyo3::types::PyString>() || inputs.hasattr("__fspath__")?;
    let listed = !one && (inputs.is_instance_of::<PyList>() || inputs.is_instance_of::<PyTuple>() || inputs.hasattr("__iter__")?);
    let inputs: Vec<PathBuf> = if listed {
        inputs.try_iter()?.map(|i| options::path(&i?, "each input")).collect::<PyResult<_>>()?
    } else {
        vec![options::path(inputs, "inputs")?]
    };
    // A folder is a batch of the files in it a reader claims, as on the command line.
    let folder = inputs.iter().any(|p| p.is_dir());
    let inputs = if folder { skelport::registry::files_to_read(&inputs).map_err(|e| Failure::from(e).into_py(py))? } else { inputs };
    let from_ = match (from_, format) {
        (Some(a), Some(b)) if a != b => {
            return Err(pyo3::exceptions::PyTypeError::new_err(format!("convert() got from_='{a}' and format='{b}': give one")))
        }
        (a, b) => a.or(b),
    };
    let e = options::extra(writer_options, options::CONVERT_OPTIONS, "convert")?;
    let mesh = options::companion(mesh, "<mesh>")?;
    let weights = options::companion(weights, "<weights>")?;
    let max_influences = max_influences.map(|m| options::count(m, "max_influences")).transpose()?.flatten();
    let batch = listed || folder || is_dir_target(&output);
    let target = match (batch, to) {
        (true, None) => {
            return Err(Failure::new("format.undetected", None, "converting into a folder needs to= to name the output format").into_py(py))
        }
        _ => target_for(to, Some(&output)).map_err(|f| f.into_py(py))?,
    };
    let job =
        Job { target, read: options::read_options(from_, &mesh, &weights, &e), map: map_arg(map)?, max_influences, strict, mesh, extra: e };
    // As on the command line, one input or a batch: each MPFB rig.<name>.json is joined to the
    // weights.<name>.json beside it, and a batch's weights files are no inputs of their own (those
    // whose rig is not converted are refused, saying so; a weights file given alone is refused by
    // the reader, naming its rig).
    let plan = skelport::mpfb_folder::plan_batch(&inputs, job.read.reader.weights.as_deref()).map_err(|e| Failure::from(e).into_py(py))?;
    if !batch {
        let beside = plan.jobs.first().and_then(|j| j.weights.clone());
        let mut d = py.detach(|| job.run(&inputs[0], beside.as_deref(), &output));
        if let Some(mut f) = d.failure.take() {
            f.diagnostics = d.diagnostics;
            return Err(f.into_py(py));
        }
        return Ok(Report { files: vec![file_report(py, d, target)?] });
    }
    std::fs::create_dir_all(&output).map_err(|err| {
        Failure::new("output", Some(&output.display().to_string()), format!("{}: cannot create the output folder: {err}", output.display()))
            .into_py(py)
    })?;
    let (jobs, refused): (Vec<Input>, Vec<(PathBuf, String)>) =
        (plan.jobs.into_iter().map(|j| (j.input, j.weights)).collect(), plan.refused);
    let inputs: Vec<PathBuf> = jobs.iter().map(|j| j.0.clone()).collect();
    let planned =
        skelport::batch_outputs(&inputs, &output, target, &options::convert_options(None, None, None, false, &job.mesh, &job.extra).write)
            .into_iter()
            .map(|b| b.conflict.map_or(Ok(b.main), Err))
            .collect();
    let mut done = run_batch(py, Arc::new(job), jobs, planned)?;
    done.extend(refused.into_iter().map(|(input, why)| Done::refused(&input, "input.kind", why)));
    let files = done.into_iter().map(|d| file_report(py, d, target)).collect::<PyResult<Vec<_>>>()?;
    Ok(Report { files })
}

/// Convert every planned input on rayon's pool while this thread, without the GIL, waits and
/// looks for Ctrl-C every 100 ms: on KeyboardInterrupt no new file starts, files in flight
/// finish (each output is written all or nothing), and the interrupt is raised.
fn run_batch(py: Python<'_>, job: Arc<Job>, inputs: Vec<Input>, planned: Vec<Result<PathBuf, String>>) -> PyResult<Vec<Done>> {
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    {
        let stop = stop.clone();
        rayon::spawn(move || {
            let done: Vec<Done> = inputs
                .par_iter()
                .zip(planned.par_iter())
                .map(|((input, weights), plan)| {
                    let refused = |why: String| Done::refused(input, "output", format!("{}: {why}", input.display()));
                    match plan {
                        Err(why) => refused(why.clone()),
                        Ok(_) if stop.load(Ordering::SeqCst) => refused("interrupted before it started".into()),
                        Ok(out) if job.extra.skip_existing && out.exists() => Done { skipped: true, ..Done::new(input, Some(out)) },
                        Ok(out) => job.run(input, weights.as_deref(), out),
                    }
                })
                .collect();
            let _ = tx.send(done);
        });
    }
    // A `Receiver` is not `Sync`: the waits below borrow it across the detach through a lock.
    let rx = Mutex::new(rx);
    let wait = |timeout: Option<Duration>| {
        let rx = rx.lock().unwrap_or_else(|p| p.into_inner());
        match timeout {
            Some(t) => rx.recv_timeout(t),
            None => rx.recv().map_err(|_| mpsc::RecvTimeoutError::Disconnected),
        }
    };
    loop {
        match py.detach(|| wait(Some(Duration::from_millis(100)))) {
            Ok(done) => return Ok(done),
            Err(mpsc::RecvTimeoutError::Timeout) => {
                if let Err(interrupt) = py.check_signals() {
                    stop.store(true, Ordering::SeqCst);
                    // Let the files in flight finish their all-or-nothing save.
                    let _ = py.detach(|| wait(None));
                    return Err(interrupt);
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                return Err(
                    Failure::new("internal", None, "the batch's worker stopped without a result; this is a bug in skelport").into_py(py)
                )
            }
        }
    }
}
