//! `formats()`, `maps()`, `diff()` and `validate()`: the command line's other subcommands. The
//! reports `--json` prints come back as the same dicts.

use crate::document::{load, map_arg, Document};
use crate::errors::{guard, Failure};
use crate::options::{self, Source};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use std::collections::BTreeMap;

/// One format skelport knows (`skelport formats`).
#[pyclass(module = "skelport", frozen, get_all)]
pub struct FormatInfo {
    /// The name `to=`, `from_=` and `format=` take (`"gltf"`, `"anvil-schema"`, …).
    pub name: &'static str,
    /// One line about it.
    pub description: &'static str,
    /// File extensions, without the dot, the first being the one written.
    pub extensions: Vec<&'static str>,
    /// Whether skelport reads it.
    pub can_read: bool,
    /// Whether skelport writes it.
    pub can_write: bool,
    /// What its files can hold: skins, meshes, scale, uvs, normals, extras, any_skeleton,
    /// orientations, bind_pose (bool each) and max_bones (int or None).
    pub holds: Py<PyAny>,
}

#[pymethods]
impl FormatInfo {
    fn __repr__(&self) -> String {
        format!("<FormatInfo {} .{}>", self.name, self.extensions.join(" ."))
    }
}

/// Every format, in the order `skelport formats` lists them.
#[pyfunction]
pub fn formats(py: Python<'_>) -> PyResult<Vec<FormatInfo>> {
    skelport::formats()
        .iter()
        .map(|f| {
            Ok(FormatInfo {
                name: f.name(),
                description: f.description(),
                extensions: f.extensions().to_vec(),
                can_read: f.can_read(),
                can_write: f.can_write(),
                holds: crate::json_value(py, &f.holds())?.unbind(),
            })
        })
        .collect()
}

/// A built-in retarget map (`skelport maps`).
#[pyclass(module = "skelport", frozen, get_all)]
pub struct MapInfo {
    /// The name `map=` takes.
    pub name: &'static str,
    /// What it is for.
    pub description: String,
    /// The skeleton it reads (`"mpfb game_engine"`).
    pub source: String,
    /// The skeleton it produces (`"sl bento"`).
    pub target: String,
    /// Source bone name → target bone name.
    pub bones: BTreeMap<String, String>,
}

#[pymethods]
impl MapInfo {
    fn __repr__(&self) -> String {
        format!("<MapInfo {}: {} bones>", self.name, self.bones.len())
    }
}

/// The built-in retarget maps.
#[pyfunction]
pub fn maps(py: Python<'_>) -> PyResult<Vec<MapInfo>> {
    let all = skelport::maps().map_err(|e| Failure::from(e).into_py(py))?;
    Ok(all
        .into_iter()
        .map(|(name, m)| MapInfo { name, description: m.description, source: m.source, target: m.target, bones: m.bones })
        .collect())
}

/// A document to compare: a `Document`, or a path or bytes read as `load` reads them.
fn doc_arg(
    py: Python<'_>,
    obj: &Bound<'_, PyAny>,
    what: &str,
    mesh: &options::Companion,
    weights: &options::Companion,
    sl_skeleton: &Option<std::path::PathBuf>,
) -> PyResult<skelport::Loaded> {
    if let Ok(d) = obj.cast::<Document>() {
        return Ok(d.get().inner.loaded.clone());
    }
    let e = options::Extra { sl_skeleton: sl_skeleton.clone(), ..Default::default() };
    let d = load(py, options::source(obj, what)?, None, mesh.clone(), weights.clone(), None, &e)?;
    // Only this function holds the new document: take it instead of copying it.
    Ok(std::sync::Arc::try_unwrap(d.inner).map_or_else(|shared| shared.loaded.clone(), |inner| inner.loaded))
}

/// Compare two documents bone by bone (`skelport diff --json`), as a dict: same, added,
/// removed, reparented, moved, rotated, skins, compared, notes, max_head_distance, pose_test
/// when asked (a pose test that compares nothing raises), and compared_as when B is in another
/// format than A: A is then compared as its conversion to B's format, with the same `map`.
#[pyfunction]
#[pyo3(signature = (a, b=None, *, sl=false, sl_skeleton=None, tolerance=1e-4, angle_tolerance=0.01, map=None, mesh=None, weights=None, pose_test=false, poses=20))]
pub fn diff<'py>(
    py: Python<'py>,
    a: &Bound<'py, PyAny>,
    b: Option<&Bound<'py, PyAny>>,
    sl: bool,
    sl_skeleton: Option<&Bound<'py, PyAny>>,
    tolerance: f64,
    angle_tolerance: f64,
    map: Option<&Bound<'py, PyAny>>,
    mesh: Option<&Bound<'py, PyAny>>,
    weights: Option<&Bound<'py, PyAny>>,
    pose_test: bool,
    poses: usize,
) -> PyResult<Bound<'py, PyAny>> {
    let sl_skeleton = sl_skeleton.filter(|s| !s.is_none()).map(|s| options::path(s, "sl_skeleton")).transpose()?;
    let mesh = options::companion(mesh, "<mesh>")?;
    let weights = options::companion(weights, "<weights>")?;
    let mut da = doc_arg(py, a, "a", &mesh, &weights, &sl_skeleton)?;
    let (db, b_format) = match (b.filter(|b| !b.is_none()), sl) {
        (Some(_), true) => return Err(PyValueError::new_err("give b or sl=True, not both")),
        (Some(b), false) => {
            let lb = doc_arg(py, b, "b", &mesh, &weights, &sl_skeleton)?;
            (lb.doc, Some(lb.format))
        }
        (None, true) => {
            let sk = sl_skeleton.clone();
            let doc = py
                .detach(|| {
                    guard(None, || skelport::diff::sl_avatar(sk.as_deref()).map_err(|e| Failure::new("input", None, format!("{e:#}"))))
                })
                .map_err(|f| f.into_py(py))?;
            (doc, None)
        }
        (None, false) => return Err(PyValueError::new_err("diff() needs b, or sl=True to compare with the Second Life skeleton")),
    };
    let map = map_arg(map)?;
    let report = py
        .detach(|| {
            guard(None, || {
                // B in another format is what a conversion of A to it gave: A is compared as that
                // conversion starts, as `skelport diff` does.
                let mut tol = skelport::diff::Tolerance { metres: tolerance, degrees: angle_tolerance, ..Default::default() };
                let seen_as = skelport::diff::prepare_a(&mut da, b_format, map.as_deref())?;
                if let Some(done) = &seen_as {
                    tol.orientations = done.orientations;
                }
                let mut r = skelport::diff(&da.doc, &db, tol);
                r.compared_as = seen_as;
                if pose_test {
                    let p =
                        skelport::diff::pose_test(&da.doc, &db, poses, 1).map_err(|e| Failure::new("invalid", None, format!("{e:#}")))?;
                    if p.max_deviation > tolerance {
                        r.same = false;
                    }
                    r.pose_test = Some(p);
                }
                Ok(r)
            })
        })
        .map_err(|f| f.into_py(py))?;
    crate::json_value(py, &report)
}

/// Check a file against the IR's rules and, with `target`, a format's rules or (`"sl"`) the
/// Second Life importer's (`skelport validate --json`), as a dict: file, format, target, valid,
/// problems (each with location and message), warnings. Invalid files are reported, not
/// raised; a file that cannot be read raises `skelport.Error`.
#[pyfunction]
#[pyo3(signature = (path, target=None, *, format=None, mesh=None, weights=None, **read_options))]
pub fn validate<'py>(
    py: Python<'py>,
    path: &Bound<'py, PyAny>,
    target: Option<String>,
    format: Option<String>,
    mesh: Option<&Bound<'py, PyAny>>,
    weights: Option<&Bound<'py, PyAny>>,
    read_options: Option<&Bound<'py, PyDict>>,
) -> PyResult<Bound<'py, PyAny>> {
    let path = options::path(path, "path")?;
    let e = options::extra(read_options, options::READ_OPTIONS, "validate")?;
    let mesh = options::companion(mesh, "<mesh>")?;
    let weights = options::companion(weights, "<weights>")?;
    let doc = load(py, Source::Path(path.clone()), format, mesh, weights, None, &e)?;
    let loaded = &doc.inner.loaded;
    let shown = loaded.name.clone();
    let v = py
        .detach(|| guard(Some(&shown), || Ok(skelport::validate(&path, loaded, target.as_deref(), e.sl_skeleton.as_deref())?)))
        .map_err(|f| f.into_py(py))?;
    let report = serde_json::json!({
        "file": loaded.name,
        "format": loaded.format.name(),
        "target": target,
        "valid": v.valid(),
        "problems": v.problems,
        "warnings": v.warnings,
    });
    crate::json_value(py, &report)
}
