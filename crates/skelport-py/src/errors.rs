//! `skelport.Error`: every failure the library reports, as one Python exception with the
//! facade's stable code, the file at fault and the place in it. Panics are caught at each entry
//! point and become the same exception (code `internal`), so a bug in skelport never takes the
//! interpreter (or Blender) down.

use crate::report::diagnostic_list;
use pyo3::prelude::*;
use skelport::Diagnostics;
use std::panic::{catch_unwind, AssertUnwindSafe};

pyo3::create_exception!(
    skelport,
    Error,
    pyo3::exceptions::PyException,
    "A file could not be read, converted or written.\n\n\
     str(e) says what is wrong, in which file and where, and what to do (naming keyword arguments \
     where the command line names flags). Attributes: code (a stable kind: 'read', 'input', \
     'input.kind', 'invalid', 'map', 'write', 'strict', 'output', 'loss', 'format.unknown', \
     'format.unsupported', 'format.undetected', 'internal'), fault (for 'read': the kind of fault \
     the reader found, such as 'syntax', 'reference' or 'value', else None), \
     path (the file at fault: the input, or its mesh or weights), place (where in it: \
     'line 3, column 17', 'byte 40', '/accessors/1', '$.bones.calf_l', or None), diagnostics \
     (the warnings and losses reported before the failure)."
);

/// A failure on its way to Python: the facade's error, or one of this module's own (an
/// undetectable output format, a panic), with the same fields.
#[derive(Debug)]
pub struct Failure {
    pub code: &'static str,
    pub path: Option<String>,
    pub place: Option<String>,
    /// The kind of fault a reader found (`syntax`, `reference`, …), for code `read`.
    pub fault: Option<&'static str>,
    pub message: String,
    pub diagnostics: Diagnostics,
    /// The input the diagnostics are about (the path may name its mesh or weights instead).
    pub input: Option<String>,
}

impl Failure {
    pub fn new(code: &'static str, path: Option<&str>, message: impl Into<String>) -> Self {
        Failure {
            code,
            path: path.map(str::to_owned),
            place: None,
            fault: None,
            // A library message (`anyhow` text) may name a flag: said in Python's words.
            message: skelport::Front::Python.say(&message.into()),
            diagnostics: Diagnostics::default(),
            input: path.map(str::to_owned),
        }
    }

    /// The Python exception.
    pub fn into_py(self, py: Python<'_>) -> PyErr {
        let err = Error::new_err(self.message);
        let v = err.value(py);
        // Setting attributes on a fresh exception instance cannot fail short of memory
        // exhaustion, which Python reports on its own.
        let _ = v.setattr("code", self.code);
        let _ = v.setattr("path", self.path.as_deref());
        let _ = v.setattr("place", self.place);
        let _ = v.setattr("fault", self.fault);
        if let Ok(list) = diagnostic_list(py, &self.diagnostics, self.input.as_deref().or(self.path.as_deref())) {
            let _ = v.setattr("diagnostics", list);
        }
        err
    }
}

impl From<skelport::Error> for Failure {
    fn from(mut e: skelport::Error) -> Self {
        let diagnostics = e.take_diagnostics();
        Failure {
            code: e.code().as_str(),
            path: e.file().map(str::to_owned),
            place: e.place(),
            fault: e.fault().map(|k| k.as_str()),
            // The advice in Python's words (`format=`, `weights=`, `strict=True`).
            message: e.said(skelport::Front::Python),
            diagnostics,
            input: None,
        }
    }
}

/// `f` on the input called `file`, with a panic turned into a [`Failure`] about it (the
/// interpreter is never unwound).
pub fn guard<T>(file: Option<&str>, f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    let r = catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|panic| {
        let what = panic
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| panic.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let about = file.map(|f| format!("{f}: ")).unwrap_or_default();
        Err(Failure::new(
            "internal",
            file,
            format!("{about}skelport failed unexpectedly ({what}); this is a bug in skelport: please report it with the file"),
        ))
    });
    r.map_err(|mut e| {
        e.input = e.input.or_else(|| file.map(str::to_owned));
        e
    })
}

/// Give the exception class its attributes' defaults, for instances raised by Python code
/// (`raise skelport.Error("…")`).
pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    let ty = py.get_type::<Error>();
    for attr in ["code", "path", "place", "fault"] {
        ty.setattr(attr, py.None())?;
    }
    ty.setattr("diagnostics", pyo3::types::PyTuple::empty(py))?;
    m.add("Error", ty)
}
