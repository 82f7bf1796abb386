//! Python arguments → the facade's options: inputs given as a path or as bytes, and the
//! keyword options the command line has as flags.

use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyByteArray, PyBytes, PyDict, PyMemoryView, PyString};
use skelport::{ConvertOptions, InMemoryFile, WriteOptions};
use std::path::PathBuf;

/// An input: a file, or bytes in memory.
pub enum Source {
    Path(PathBuf),
    Bytes(Vec<u8>),
}

/// Bytes held by a `bytes`, `bytearray` or `memoryview`, or `None` for anything else.
fn bytes_of(obj: &Bound<'_, PyAny>) -> PyResult<Option<Vec<u8>>> {
    if let Ok(b) = obj.cast::<PyBytes>() {
        return Ok(Some(b.as_bytes().to_vec()));
    }
    if let Ok(b) = obj.cast::<PyByteArray>() {
        return Ok(Some(b.to_vec()));
    }
    if obj.is_instance_of::<PyMemoryView>() {
        return Ok(Some(obj.call_method0("tobytes")?.cast::<PyBytes>()?.as_bytes().to_vec()));
    }
    Ok(None)
}

/// A path (`str` or `os.PathLike`) or bytes.
pub fn source(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<Source> {
    if let Some(b) = bytes_of(obj)? {
        return Ok(Source::Bytes(b));
    }
    path(obj, what).map(Source::Path).map_err(|_| {
        let ty = obj.get_type().name().map(|n| n.to_string()).unwrap_or_default();
        PyTypeError::new_err(format!("{what} must be a path (str or os.PathLike) or bytes, not {ty}"))
    })
}

/// A path: `str` or `os.PathLike` (not bytes, which this package reads as file contents).
pub fn path(obj: &Bound<'_, PyAny>, what: &str) -> PyResult<PathBuf> {
    if obj.is_instance_of::<PyString>() || obj.hasattr("__fspath__")? {
        return obj.extract::<PathBuf>();
    }
    Err(PyTypeError::new_err(format!("{what} must be a path (str or os.PathLike), not {}", obj.get_type().name()?)))
}

/// A mesh or weights file: a path, or bytes (named `name` in messages).
#[derive(Clone, Default)]
pub struct Companion {
    pub path: Option<PathBuf>,
    pub data: Option<InMemoryFile>,
}

pub fn companion(obj: Option<&Bound<'_, PyAny>>, name: &str) -> PyResult<Companion> {
    let Some(obj) = obj.filter(|o| !o.is_none()) else { return Ok(Companion::default()) };
    Ok(match source(obj, name.trim_matches(['<', '>']))? {
        Source::Path(p) => Companion { path: Some(p), data: None },
        Source::Bytes(b) => Companion { path: None, data: Some(InMemoryFile::new(name, b)) },
    })
}

/// The keyword options (`**writer_options`), the command line's flags without the dashes.
#[derive(Clone, Default, Debug)]
pub struct Extra {
    pub embed: bool,
    pub compress: bool,
    pub default_joints: bool,
    pub allow_loss: bool,
    pub fix: bool,
    pub limit: Option<usize>,
    pub keep_helpers: bool,
    pub keep_origin: bool,
    pub names: Option<PathBuf>,
    pub sl_skeleton: Option<PathBuf>,
    pub skip_existing: bool,
    pub rest_pose: Option<skelport::ir::rest::RestPose>,
    pub vrm_meta: Option<PathBuf>,
    pub allow_outside_uris: bool,
}

/// What reading takes (`load`, and the reading half of `convert`).
pub const READ_OPTIONS: &[&str] = &["keep_helpers", "keep_origin", "names", "sl_skeleton", "allow_outside_uris"];
/// What writing takes (`Document.save`, `Document.dumps`).
pub const WRITE_OPTIONS: &[&str] = &[
    "embed",
    "compress",
    "default_joints",
    "fix",
    "limit",
    "keep_helpers",
    "keep_origin",
    "sl_skeleton",
    "rest_pose",
    "vrm_meta",
    "allow_loss",
];
/// What `convert` takes: both, and `skip_existing` for a batch.
pub const CONVERT_OPTIONS: &[&str] = &[
    "embed",
    "compress",
    "default_joints",
    "fix",
    "limit",
    "keep_helpers",
    "keep_origin",
    "names",
    "sl_skeleton",
    "rest_pose",
    "vrm_meta",
    "allow_loss",
    "allow_outside_uris",
    "skip_existing",
];

/// Parse `kwargs`, refusing any name not in `allowed` as Python refuses an unknown keyword.
pub fn extra(kwargs: Option<&Bound<'_, PyDict>>, allowed: &[&str], function: &str) -> PyResult<Extra> {
    let mut e = Extra::default();
    let Some(kwargs) = kwargs else { return Ok(e) };
    for (k, v) in kwargs.iter() {
        let key: String = k.extract()?;
        if !allowed.contains(&key.as_str()) {
            return Err(PyTypeError::new_err(format!(
                "{function}() got an unexpected keyword argument '{key}' (options: {})",
                allowed.join(", ")
            )));
        }
        let flag = || -> PyResult<bool> { v.extract::<bool>().map_err(|_| PyTypeError::new_err(format!("{key} must be True or False"))) };
        let opt_path = || -> PyResult<Option<PathBuf>> {
            if v.is_none() {
                Ok(None)
            } else {
                path(&v, &key).map(Some)
            }
        };
        match key.as_str() {
            "embed" => e.embed = flag()?,
            "compress" => e.compress = flag()?,
            "default_joints" => e.default_joints = flag()?,
            "allow_loss" => e.allow_loss = flag()?,
            "fix" => e.fix = flag()?,
            "keep_helpers" => e.keep_helpers = flag()?,
            "keep_origin" => e.keep_origin = flag()?,
            "skip_existing" => e.skip_existing = flag()?,
            "allow_outside_uris" => e.allow_outside_uris = flag()?,
            "limit" => e.limit = count(&v, "limit")?,
            "names" => e.names = opt_path()?,
            "sl_skeleton" => e.sl_skeleton = opt_path()?,
            "vrm_meta" => e.vrm_meta = opt_path()?,
            "rest_pose" => {
                e.rest_pose = if v.is_none() {
                    None
                } else {
                    let name: String = v.extract().map_err(|_| PyTypeError::new_err("rest_pose must be 't-pose', 'as-is' or None"))?;
                    Some(name.parse().map_err(|m: String| PyValueError::new_err(format!("rest_pose: {m}")))?)
                }
            }
            _ => unreachable!("every allowed option is parsed"),
        }
    }
    Ok(e)
}

/// `None` or a positive count (`max_influences`, `limit`).
pub fn count(v: &Bound<'_, PyAny>, what: &str) -> PyResult<Option<usize>> {
    if v.is_none() {
        return Ok(None);
    }
    match v.extract::<i64>() {
        Ok(n) if n >= 1 => Ok(Some(n as usize)),
        Ok(n) => Err(PyValueError::new_err(format!("{what} must be at least 1, not {n}"))),
        Err(_) => Err(PyTypeError::new_err(format!("{what} must be an int or None"))),
    }
}

/// The facade's read options.
pub fn read_options(from: Option<String>, mesh: &Companion, weights: &Companion, e: &Extra) -> skelport::OpenOptions {
    skelport::OpenOptions {
        from,
        reader: skelport::ir::ReadOptions {
            mesh: mesh.path.clone(),
            mesh_data: mesh.data.clone(),
            weights: weights.path.clone(),
            weights_data: weights.data.clone(),
            keep_origin: e.keep_origin,
            keep_helpers: e.keep_helpers,
            names: e.names.clone(),
            sl_skeleton: e.sl_skeleton.clone(),
            allow_outside_uris: e.allow_outside_uris,
            ..Default::default()
        },
    }
}

/// The facade's convert options, as the command line builds them: the mesh read with the
/// input is given to the writer too (the MPFB writer places bones on it).
pub fn convert_options(
    output: Option<PathBuf>,
    map: Option<String>,
    max_influences: Option<usize>,
    strict: bool,
    mesh: &Companion,
    e: &Extra,
) -> ConvertOptions {
    let file_stem = output.as_deref().map(skelport::stem_of).unwrap_or_default();
    ConvertOptions {
        map,
        strict,
        allow_loss: e.allow_loss,
        write: WriteOptions {
            file_stem,
            embed: e.embed,
            compress: e.compress,
            max_influences,
            default_joints: e.default_joints,
            fix: e.fix,
            bone_limit: e.limit,
            keep_helpers: e.keep_helpers,
            sl_skeleton: e.sl_skeleton.clone(),
            mesh: mesh.path.clone(),
            mesh_data: mesh.data.clone(),
            keep_origin: e.keep_origin,
            rest_pose: e.rest_pose,
            vrm_meta: e.vrm_meta.clone(),
            // From `map` when it names a humanoid map file: the facade looks.
            humanoid_map: None,
            // Whole unless the caller only saves the output (`Document.save` asks for pieces;
            // `dumps` and `dumps_all` hand `Output::main` to Python as bytes; `convert_file`,
            // behind `convert` and `migrate`, asks itself).
            main_in_pieces: false,
        },
    }
}
