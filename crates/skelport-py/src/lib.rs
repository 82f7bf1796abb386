//! The native module of the `skelport` Python package (`skelport._skelport`; the package's
//! `__init__.py` re-exports it, and `_skelport.pyi` types it). It calls the `skelport` crate,
//! the pipeline the command line runs, so a call reads, checks, converts and saves exactly as
//! `skelport convert` does and says the same things: diagnostics as `Diagnostic` objects,
//! failures as `skelport.Error` with the CLI's message, its stable code, the file and the place.
//!
//! Arrays are numpy arrays in the report frame (+Y up, +Z forward, right-handed, metres), the
//! frame of `skelport inspect --json`. Reading, converting and saving release the GIL; a batch
//! runs on every core. No entry point panics into Python: a panic becomes `skelport.Error` with
//! code `internal`.

// A Python function's keyword arguments are its API: the Rust functions behind them take one
// parameter each.
#![allow(clippy::too_many_arguments)]
// A `Failure` (the error on its way to Python, 136 bytes) is built at most once per call.
#![allow(clippy::result_large_err)]

mod construct;
mod convert;
mod document;
mod errors;
mod info;
mod migrate;
mod options;
mod report;

use pyo3::prelude::*;
use pyo3::types::PyDict;

/// A serializable report as the Python value `json.loads` gives for its `--json` text (the same
/// numbers: both print and parse floats exactly).
pub(crate) fn json_value<'py>(py: Python<'py>, value: &impl serde::Serialize) -> PyResult<Bound<'py, PyAny>> {
    let text = serde_json::to_string(value).map_err(|e| pyo3::exceptions::PyValueError::new_err(e.to_string()))?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Read a file, or bytes, into a `Document`.
///
/// `source` is a path (str or os.PathLike) or the file's bytes; `mesh` and `weights` (an MPFB
/// rig's base mesh and weights file) may be either too. `format` names the reader (see
/// `formats()`); by default it is told from the name and the content. `name` is what bytes are
/// called in messages; its extension helps tell the format. `read_options`: keep_origin,
/// keep_helpers, names, sl_skeleton (the command line's flags). Every array of the document is
/// in the report frame: +Y up, +Z forward, right-handed, metres. Raises `skelport.Error`.
#[pyfunction]
#[pyo3(signature = (source, *, format=None, mesh=None, weights=None, name=None, **read_options))]
fn load(
    py: Python<'_>,
    source: &Bound<'_, PyAny>,
    format: Option<String>,
    mesh: Option<&Bound<'_, PyAny>>,
    weights: Option<&Bound<'_, PyAny>>,
    name: Option<String>,
    read_options: Option<&Bound<'_, PyDict>>,
) -> PyResult<document::Document> {
    let e = options::extra(read_options, options::READ_OPTIONS, "load")?;
    let source = options::source(source, "source")?;
    let mesh = options::companion(mesh, "<mesh>")?;
    let weights = options::companion(weights, "<weights>")?;
    document::load(py, source, format, mesh, weights, name, &e)
}

#[pymodule]
fn _skelport(m: &Bound<'_, PyModule>) -> PyResult<()> {
    errors::register(m)?;
    m.add_class::<document::Document>()?;
    m.add_class::<document::Skeleton>()?;
    m.add_class::<document::Skin>()?;
    m.add_class::<document::Mesh>()?;
    m.add_class::<report::Report>()?;
    m.add_class::<report::FileReport>()?;
    m.add_class::<report::Diagnostic>()?;
    m.add_class::<info::FormatInfo>()?;
    m.add_class::<info::MapInfo>()?;
    m.add_function(wrap_pyfunction!(load, m)?)?;
    m.add_function(wrap_pyfunction!(convert::convert, m)?)?;
    m.add_function(wrap_pyfunction!(info::formats, m)?)?;
    m.add_function(wrap_pyfunction!(info::maps, m)?)?;
    m.add_function(wrap_pyfunction!(info::diff, m)?)?;
    m.add_function(wrap_pyfunction!(info::validate, m)?)?;
    m.add_function(wrap_pyfunction!(construct::from_arrays, m)?)?;
    m.add_function(wrap_pyfunction!(migrate::migrate_file, m)?)?;
    m.add_function(wrap_pyfunction!(migrate::migrate_plan, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
