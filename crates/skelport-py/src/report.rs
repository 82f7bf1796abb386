//! What a conversion reports: `Diagnostic` (a loss, warning or note), `FileReport` (one input of
//! a call) and `Report` (the call: every file, every diagnostic, every file written).

use pyo3::prelude::*;
use pyo3::types::PyList;
use skelport::{Diagnostics, Severity};

/// One loss, warning or note, as the command line prints it (`loss: FILE: MESSAGE`).
#[pyclass(module = "skelport", frozen, get_all, from_py_object)]
#[derive(Clone, Debug)]
pub struct Diagnostic {
    /// `"loss"` (the target cannot hold something), `"warning"` (the input is odd or was
    /// repaired) or `"info"` (a note), as in the `--json` reports.
    pub severity: &'static str,
    /// Stable machine-readable code, e.g. `"anvil.geometry"`, `"retarget.dropped"`.
    pub code: String,
    /// What happened, naming the bone, skin or element.
    pub message: String,
    /// The element the message is about when it names one (`bone "calf_l"`, `skin 0`,
    /// `/meshes/0/primitives/1`), else None.
    pub place: Option<String>,
    /// The input file it is about (a batch reports many), or None for bytes without a name.
    pub path: Option<String>,
}

#[pymethods]
impl Diagnostic {
    fn __repr__(&self) -> String {
        format!("<Diagnostic {} {}: {:?}>", self.severity, self.code, self.message)
    }
    fn __str__(&self) -> String {
        let tag = if self.severity == "info" { "note" } else { self.severity };
        match &self.path {
            Some(p) => format!("{tag}: {p}: {}", self.message),
            None => format!("{tag}: {}", self.message),
        }
    }
}

pub fn severity_name(s: Severity) -> &'static str {
    match s {
        Severity::Info => "info",
        Severity::Warning => "warning",
        Severity::Loss => "loss",
    }
}

pub fn diagnostics(d: &Diagnostics, path: Option<&str>) -> Vec<Diagnostic> {
    d.items
        .iter()
        .map(|d| Diagnostic {
            severity: severity_name(d.severity),
            code: d.code.clone(),
            // The advice in Python's words (`mesh=`, `map=`), as errors say it.
            message: skelport::Front::Python.say(&d.message),
            place: d.place(),
            path: path.map(str::to_owned),
        })
        .collect()
}

pub fn diagnostic_list<'py>(py: Python<'py>, d: &Diagnostics, path: Option<&str>) -> PyResult<Bound<'py, PyList>> {
    PyList::new(py, diagnostics(d, path))
}

/// One input of a `convert` call (a batch has one per input).
#[pyclass(module = "skelport", frozen, get_all)]
pub struct FileReport {
    /// The input, as given.
    pub input: String,
    /// The main output file, or None when the input was refused before it started (its
    /// output would collide with another input's, or the batch was interrupted).
    pub output: Option<String>,
    /// The format the input was read as, when it was read.
    pub from_format: Option<String>,
    /// The format written.
    pub to_format: String,
    /// Converted and saved (or skipped because the output exists, with `skip_existing`).
    pub ok: bool,
    /// Not converted: `skip_existing` and the output was there.
    pub skipped: bool,
    /// The `skelport.Error` that stopped this input, or None.
    pub error: Option<Py<PyAny>>,
    /// What reading, retargeting and writing this input reported.
    pub diagnostics: Vec<Diagnostic>,
    /// Every file written for this input (the main file last).
    pub outputs: Vec<String>,
}

#[pymethods]
impl FileReport {
    fn __repr__(&self) -> String {
        let state = if self.skipped {
            "skipped"
        } else if self.ok {
            "ok"
        } else {
            "failed"
        };
        format!("<FileReport {} → {} {state}>", self.input, self.output.as_deref().unwrap_or("-"))
    }
}

/// What a `convert` call (or `Document.save`) did: the files written and everything reported.
/// Losses are data: a conversion that loses something still succeeds unless `strict=True`.
#[pyclass(module = "skelport", frozen)]
pub struct Report {
    pub files: Vec<Py<FileReport>>,
}

impl Report {
    fn all(&self, py: Python<'_>, severity: Option<&str>) -> Vec<Diagnostic> {
        let mut out = Vec::new();
        for f in &self.files {
            out.extend(f.get().diagnostics.iter().filter(|d| severity.is_none_or(|s| d.severity == s)).cloned());
        }
        let _ = py;
        out
    }
}

#[pymethods]
impl Report {
    /// Every input of the call, in the order given.
    #[getter]
    fn files(&self, py: Python<'_>) -> Vec<Py<FileReport>> {
        self.files.iter().map(|f| f.clone_ref(py)).collect()
    }
    /// Every file written (side files too), input by input.
    #[getter]
    fn outputs(&self) -> Vec<String> {
        self.files.iter().flat_map(|f| f.get().outputs.iter().cloned()).collect()
    }
    /// What the targets could not hold (each a `Diagnostic`).
    #[getter]
    fn losses(&self, py: Python<'_>) -> Vec<Diagnostic> {
        self.all(py, Some("loss"))
    }
    /// What was odd or repaired in the inputs.
    #[getter]
    fn warnings(&self, py: Python<'_>) -> Vec<Diagnostic> {
        self.all(py, Some("warning"))
    }
    /// Notes (nothing lost).
    #[getter]
    fn notes(&self, py: Python<'_>) -> Vec<Diagnostic> {
        self.all(py, Some("info"))
    }
    /// Every diagnostic, losses, warnings and notes, in the order reported.
    #[getter]
    fn diagnostics(&self, py: Python<'_>) -> Vec<Diagnostic> {
        self.all(py, None)
    }
    /// The `skelport.Error` of each input that failed (a batch goes on past them).
    #[getter]
    fn errors(&self, py: Python<'_>) -> Vec<Py<PyAny>> {
        self.files.iter().filter_map(|f| f.get().error.as_ref().map(|e| e.clone_ref(py))).collect()
    }
    /// True when every input was converted (or skipped).
    #[getter]
    fn ok(&self) -> bool {
        self.files.iter().all(|f| f.get().ok)
    }
    fn __repr__(&self) -> String {
        let failed = self.files.iter().filter(|f| !f.get().ok).count();
        let losses = self.files.iter().flat_map(|f| &f.get().diagnostics).filter(|d| d.severity == "loss").count();
        format!("<Report {} file(s), {failed} failed, {losses} loss(es)>", self.files.len())
    }
}
