//! `skelport.load` and what it returns: a `Document` with its skeletons, skins and meshes as
//! numpy arrays in the report frame (+Y up, +Z forward, right-handed, metres: glTF's, the frame
//! of `skelport inspect --json`), whatever frame the file was in.

use crate::errors::{guard, Failure};
use crate::options::{self, Companion, Extra, Source};
use crate::report::{diagnostic_list, diagnostics, FileReport, Report};
use numpy::ndarray::{Array1, Array2, Array3};
use numpy::{IntoPyArray, PyArray1, PyArray2, PyArray3};
use pyo3::exceptions::{PyIndexError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use skelport::ir::proc::report_skeletons;
use skelport::ir::{Attribute, Frame};
use skelport::{Format, Loaded};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// A read document and what is derived from it on first use.
pub struct Inner {
    pub loaded: Loaded,
    /// The mesh it was read with, given to writers too (the MPFB writer places bones on it).
    pub mesh: Companion,
    pub keep_origin: bool,
    skeletons: OnceLock<Vec<Arc<SkeletonData>>>,
    meshes: OnceLock<Vec<skelport::ir::Mesh>>,
    binds: OnceLock<Vec<Vec<f64>>>,
}

impl Inner {
    pub fn new(loaded: Loaded, mesh: Companion, keep_origin: bool) -> Self {
        Inner { loaded, mesh, keep_origin, skeletons: OnceLock::new(), meshes: OnceLock::new(), binds: OnceLock::new() }
    }

    fn skeletons(&self) -> &[Arc<SkeletonData>] {
        self.skeletons.get_or_init(|| {
            let doc = &self.loaded.doc;
            report_skeletons(doc)
                .into_iter()
                .zip(&doc.skeletons)
                .map(|(r, sk)| {
                    let n = r.bones.len();
                    let bound = r.bones.iter().any(|b| b.bind_matrix.is_some());
                    let bind = bound.then(|| {
                        // Column-major as glTF stores it → row-major as numpy indexes it
                        // (m[:3, 3] is the translation); NaN for bones no skin binds.
                        let mut out = vec![f64::NAN; n * 16];
                        for (i, b) in r.bones.iter().enumerate() {
                            if let Some(c) = b.bind_matrix {
                                for row in 0..4 {
                                    for col in 0..4 {
                                        out[i * 16 + row * 4 + col] = c[col * 4 + row];
                                    }
                                }
                            }
                        }
                        out
                    });
                    Arc::new(SkeletonData {
                        name: r.name,
                        parents: sk.bones.iter().map(|b| b.parent.map_or(-1, |p| p.raw() as i32)).collect(),
                        heads: r.bones.iter().flat_map(|b| b.head).collect(),
                        tails: r.bones.iter().flat_map(|b| b.tail).collect(),
                        rotations: r.bones.iter().flat_map(|b| b.rotation).collect(),
                        bone_names: r.bones.into_iter().map(|b| b.name).collect(),
                        bind,
                    })
                })
                .collect()
        })
    }

    /// Per skin, where it binds each joint in the report frame: the inverse of its inverse bind
    /// matrix times its bind shape matrix, row-major, 16 numbers a joint.
    fn binds(&self) -> &[Vec<f64>] {
        self.binds.get_or_init(|| {
            let doc = &self.loaded.doc;
            // Only what is read is converted: the skins without their weights.
            let skins = doc
                .skins
                .iter()
                .map(|s| skelport::ir::Skin { influences: Default::default(), ext: Default::default(), mesh: None, ..s.clone() })
                .collect();
            let mut d = skelport::Document { skeletons: doc.skeletons.clone(), skins, ..skelport::Document::new(doc.frame) };
            d.convert_frame(Frame::REPORT);
            d.skins
                .iter()
                .map(|s| {
                    s.inverse_bind
                        .iter()
                        .flat_map(|ibm| {
                            let m = (*ibm * s.bind_shape).inverse().to_cols_array();
                            (0..16).map(move |k| m[(k % 4) * 4 + k / 4])
                        })
                        .collect()
                })
                .collect()
        })
    }

    fn meshes(&self) -> &[skelport::ir::Mesh] {
        self.meshes.get_or_init(|| {
            let doc = &self.loaded.doc;
            let mut d = skelport::Document { meshes: doc.meshes.clone(), ..skelport::Document::new(doc.frame) };
            d.convert_frame(Frame::REPORT);
            d.meshes
        })
    }
}

/// One skeleton in the report frame.
pub struct SkeletonData {
    name: String,
    bone_names: Vec<String>,
    parents: Vec<i32>,
    heads: Vec<f64>,
    tails: Vec<f64>,
    rotations: Vec<f64>,
    bind: Option<Vec<f64>>,
}

fn rows<'py, T: numpy::Element>(py: Python<'py>, v: Vec<T>, width: usize) -> PyResult<Bound<'py, PyArray2<T>>> {
    let n = v.len().checked_div(width).unwrap_or(0);
    let a = Array2::from_shape_vec((n, width), v).map_err(|e| PyValueError::new_err(e.to_string()))?;
    Ok(a.into_pyarray(py))
}

/// A skeleton: its bones in order, parents before children, every number in the report frame.
#[pyclass(module = "skelport", frozen)]
pub struct Skeleton {
    data: Arc<SkeletonData>,
    doc: Arc<Inner>,
    index: usize,
}

/// Extension data (namespace → value, as the file's reader left it) as a Python dict; run-local
/// namespaces are left out, as in every output.
fn extensions<'py>(py: Python<'py>, ext: &skelport::ir::Extensions) -> PyResult<Bound<'py, PyAny>> {
    crate::json_value(py, ext)
}

impl Skeleton {
    fn bones(&self) -> &[skelport::ir::Bone] {
        &self.doc.loaded.doc.skeletons[self.index].bones
    }
}

#[pymethods]
impl Skeleton {
    /// The skeleton's name.
    #[getter]
    fn name(&self) -> &str {
        &self.data.name
    }
    /// Bone names, in bone order (the row order of every array).
    #[getter]
    fn bone_names(&self) -> Vec<String> {
        self.data.bone_names.clone()
    }
    /// Parent of each bone as an index into the bones (int32, shape (n,)); -1 for roots.
    #[getter]
    fn parents<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        Array1::from(self.data.parents.clone()).into_pyarray(py)
    }
    /// World rest position of each bone's head (float64, shape (n, 3)), metres, +Y up.
    #[getter]
    fn heads<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        rows(py, self.data.heads.clone(), 3)
    }
    /// Each bone's tail (float64, shape (n, 3)): from its length where the file gives one, else
    /// inferred as `inspect` does (docs/ir.md).
    #[getter]
    fn tails<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        rows(py, self.data.tails.clone(), 3)
    }
    /// World rest orientation of each bone as a unit quaternion x, y, z, w (float64, shape (n, 4));
    /// the bone's local +Y points along it.
    #[getter]
    fn rotations<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        rows(py, self.data.rotations.clone(), 4)
    }
    /// Where skins bind each bone (float64, shape (n, 4, 4), row-major: `m[:3, 3]` is the
    /// position): the inverse of its inverse bind matrix, from the first skin that binds it.
    /// Rows of bones no skin binds are NaN. None when no skin binds this skeleton.
    #[getter]
    fn bind_matrices<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray3<f64>>>> {
        let Some(b) = &self.data.bind else { return Ok(None) };
        let a = Array3::from_shape_vec((b.len() / 16, 4, 4), b.clone()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(Some(a.into_pyarray(py)))
    }
    /// What formats keep of this skeleton beyond the IR (namespace → JSON value, e.g. an
    /// AnvilToolkit skeleton's source and form under `"anvil"`), as `from_arrays` takes it back
    /// (`skeleton_extensions`).
    #[getter]
    fn extensions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        extensions(py, &self.doc.loaded.doc.skeletons[self.index].ext)
    }
    /// Head-to-tail length of each bone where the file gives one (float64, shape (n,), metres);
    /// NaN where it gives none (`tails` then infers the tail).
    #[getter]
    fn lengths<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        let (h, t) = (&self.data.heads, &self.data.tails);
        // `tails` is head + length along the bone where there is a length: its distance is the
        // length in the report frame's metres.
        let length = |i: usize| (0..3).map(|k| (t[3 * i + k] - h[3 * i + k]).powi(2)).sum::<f64>().sqrt();
        Array1::from_iter(self.bones().iter().enumerate().map(|(i, b)| if b.length.is_some() { length(i) } else { f64::NAN }))
            .into_pyarray(py)
    }
    /// Blender roll of each bone in radians, as the file gave it (float64, shape (n,)); NaN
    /// where it gave none. Informational: `rotations` hold the orientation.
    #[getter]
    fn rolls<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<f64>> {
        Array1::from_iter(self.bones().iter().map(|b| b.roll.unwrap_or(f64::NAN))).into_pyarray(py)
    }
    /// Whether each bone deforms geometry (bool, shape (n,)).
    #[getter]
    fn deform<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<bool>> {
        Array1::from_iter(self.bones().iter().map(|b| b.deform)).into_pyarray(py)
    }
    /// Each bone's mirror counterpart (left <-> right) as a bone index (int32, shape (n,)); -1
    /// for none.
    #[getter]
    fn mirrors<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        Array1::from_iter(self.bones().iter().map(|b| b.mirror.map_or(-1, |m| m.raw() as i32))).into_pyarray(py)
    }
    /// How each bone's head and tail are placed on a base mesh (MPFB's strategies: a dict with
    /// `head` and `tail`, as ir-json writes them), or None, per bone.
    #[getter]
    fn bone_anchors<'py>(&self, py: Python<'py>) -> PyResult<Vec<Option<Bound<'py, PyAny>>>> {
        self.bones().iter().map(|b| b.anchors.as_ref().map(|a| crate::json_value(py, a)).transpose()).collect()
    }
    /// The same per bone, in bone order (a dict per bone, empty when there is none), as
    /// `from_arrays` takes it back (`bone_extensions`).
    #[getter]
    fn bone_extensions<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyAny>>> {
        self.bones().iter().map(|b| extensions(py, &b.ext)).collect()
    }
    /// The index of the bone called `name`.
    fn index(&self, name: &str) -> PyResult<usize> {
        self.data.bone_names.iter().position(|n| n == name).ok_or_else(|| PyIndexError::new_err(format!("no bone called {name:?}")))
    }
    fn __len__(&self) -> usize {
        self.data.bone_names.len()
    }
    fn __repr__(&self) -> String {
        format!("<Skeleton {:?}: {} bones>", self.data.name, self.data.bone_names.len())
    }
}

/// `Skin.influences()`: joints and weights, one row per vertex.
type Influences<'py> = (Bound<'py, PyArray2<i32>>, Bound<'py, PyArray2<f32>>);

/// A skin: a mesh's vertices bound to a skeleton's joints.
#[pyclass(module = "skelport", frozen)]
pub struct Skin {
    doc: Arc<Inner>,
    index: usize,
}

impl Skin {
    fn skin(&self) -> &skelport::ir::Skin {
        &self.doc.loaded.doc.skins[self.index]
    }
}

#[pymethods]
impl Skin {
    /// The skin's name.
    #[getter]
    fn name(&self) -> &str {
        &self.skin().name
    }
    /// Index of its skeleton in `Document.skeletons`.
    #[getter]
    fn skeleton(&self) -> usize {
        self.skin().skeleton.index()
    }
    /// Index of its mesh in `Document.meshes`, or None when the file has no geometry.
    #[getter]
    fn mesh(&self) -> Option<usize> {
        self.skin().mesh.map(skelport::ir::MeshId::index)
    }
    /// The joints' bone names, in joint order: `influences()` joint numbers index this list.
    #[getter]
    fn joint_names(&self) -> Vec<String> {
        let skin = self.skin();
        let sk = self.doc.loaded.doc.get_skeleton(skin.skeleton);
        skin.joints.iter().map(|j| sk.and_then(|k| k.bones.get(j.index())).map(|b| b.name.clone()).unwrap_or_default()).collect()
    }
    /// Each joint's bone as an index into its skeleton's bones (int32, shape (j,)).
    #[getter]
    fn joint_bones<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<i32>> {
        Array1::from_iter(self.skin().joints.iter().map(|j| j.raw() as i32)).into_pyarray(py)
    }
    /// Where the skin binds each joint (float64, shape (j, 4, 4), row-major, `m[:3, 3]` the
    /// position; the inverse of its inverse bind matrix times the bind shape matrix), as
    /// `from_arrays` takes it back (a mesh's `bind_matrices`).
    #[getter]
    fn bind_matrices<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray3<f64>>> {
        let b = &self.doc.binds()[self.index];
        let a = Array3::from_shape_vec((b.len() / 16, 4, 4), b.clone()).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(a.into_pyarray(py))
    }
    /// What formats keep of this skin beyond the IR (namespace → JSON value), as `from_arrays`
    /// takes it back (a mesh's `skin_extensions`).
    #[getter]
    fn extensions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        extensions(py, &self.skin().ext)
    }
    /// Vertices of the skinned mesh (as `inspect` counts them).
    #[getter]
    fn vertex_count(&self) -> usize {
        let skin = self.skin();
        self.doc.loaded.doc.mesh_of(skin).map_or_else(|| skin.vertex_count(), |m| m.positions.len())
    }
    /// The weights as two arrays of shape (v, k), one row per vertex: joints (int32, indices
    /// into `joint_names`) and weights (float32), each row largest first, padded with joint 0
    /// and weight 0. With `max`, k is `max` and vertices with more influences keep their `max`
    /// largest, renormalized to sum to 1; without it, k is the most any vertex has and the
    /// weights are as the file gives them.
    #[pyo3(signature = (max=None))]
    fn influences<'py>(&self, py: Python<'py>, max: Option<&Bound<'py, PyAny>>) -> PyResult<Influences<'py>> {
        let max = match max {
            Some(m) => options::count(m, "max")?,
            None => None,
        };
        let p = self.skin().influences.padded(max);
        let joints: Vec<i32> = p.joints.iter().map(|&j| j as i32).collect();
        let weights: Vec<f32> = p.weights.iter().map(|&w| w as f32).collect();
        let v = self.skin().influences.vertex_count();
        let j = Array2::from_shape_vec((v, p.width), joints).map_err(|e| PyValueError::new_err(e.to_string()))?;
        let w = Array2::from_shape_vec((v, p.width), weights).map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok((j.into_pyarray(py), w.into_pyarray(py)))
    }
    fn __repr__(&self) -> String {
        format!("<Skin {:?}: {} joints, {} vertices>", self.skin().name, self.skin().joints.len(), self.vertex_count())
    }
}

/// A mesh in the report frame.
#[pyclass(module = "skelport", frozen)]
pub struct Mesh {
    doc: Arc<Inner>,
    index: usize,
}

impl Mesh {
    fn mesh(&self) -> &skelport::ir::Mesh {
        &self.doc.meshes()[self.index]
    }
}

fn index_i32(i: u32) -> PyResult<i32> {
    i32::try_from(i).map_err(|_| PyValueError::new_err(format!("vertex index {i} does not fit in int32")))
}

#[pymethods]
impl Mesh {
    /// The mesh's name.
    #[getter]
    fn name(&self) -> &str {
        &self.mesh().name
    }
    /// What formats keep of this mesh beyond the IR (namespace → JSON value), as `from_arrays`
    /// takes it back (a mesh's `extensions`).
    #[getter]
    fn extensions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        extensions(py, &self.doc.loaded.doc.meshes[self.index].ext)
    }
    /// Vertex positions (float64, shape (n, 3)), metres, +Y up.
    #[getter]
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<f64>>> {
        rows(py, self.mesh().positions.iter().flat_map(|p| p.to_array()).collect(), 3)
    }
    /// Faces as vertex indices (int32, shape (f, k)), k the most corners any face has; shorter
    /// faces are padded with -1. `faces[faces >= 0]` lists every corner in order (the order of
    /// per-corner normals and UVs).
    #[getter]
    fn faces<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray2<i32>>> {
        let f = &self.mesh().faces;
        let k = f.counts.iter().copied().max().unwrap_or(0) as usize;
        let mut out = vec![-1i32; f.len() * k];
        for (n, face) in f.iter().enumerate() {
            for (c, &v) in face.iter().enumerate() {
                out[n * k + c] = index_i32(v)?;
            }
        }
        rows(py, out, k)
    }
    /// Corners of each face (int32, shape (f,)).
    #[getter]
    fn face_sizes<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<i32>>> {
        let c: PyResult<Vec<i32>> = self.mesh().faces.counts.iter().map(|&c| index_i32(c)).collect();
        Ok(Array1::from(c?).into_pyarray(py))
    }
    /// Normals (float64, shape (n, 3)): one per vertex, or one per face corner when
    /// `normals_per_corner`; None when the file has none.
    #[getter]
    fn normals<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        self.mesh().normals.as_ref().map(|n| rows(py, n.values().iter().flat_map(|v| v.to_array()).collect(), 3)).transpose()
    }
    /// True when `normals` has one row per face corner (in `faces[faces >= 0]` order).
    #[getter]
    fn normals_per_corner(&self) -> bool {
        self.mesh().normals.as_ref().is_some_and(Attribute::is_per_corner)
    }
    /// The first set of texture coordinates (float64, shape (n, 2); origin bottom left, v up,
    /// as Blender has them): one per vertex, or per face corner when `uvs_per_corner`; None
    /// when the file has none.
    #[getter]
    fn uvs<'py>(&self, py: Python<'py>) -> PyResult<Option<Bound<'py, PyArray2<f64>>>> {
        self.mesh().uvs.first().map(|s| rows(py, s.uvs.values().iter().flat_map(|v| v.to_array()).collect(), 2)).transpose()
    }
    /// True when `uvs` has one row per face corner.
    #[getter]
    fn uvs_per_corner(&self) -> bool {
        self.mesh().uvs.first().is_some_and(|s| s.uvs.is_per_corner())
    }
    fn __repr__(&self) -> String {
        let m = self.mesh();
        format!("<Mesh {:?}: {} vertices, {} faces>", m.name, m.positions.len(), m.faces.len())
    }
}

/// A document read by `skelport.load`: skeletons, skins and meshes, ready to inspect, save or
/// convert to bytes.
#[pyclass(module = "skelport", frozen)]
pub struct Document {
    pub inner: Arc<Inner>,
}

/// The target format: `to` by name, else told from the output's extension.
pub fn target_for(to: Option<&str>, output: Option<&Path>) -> Result<&'static dyn Format, Failure> {
    match (to, output) {
        (Some(t), _) => Ok(skelport::format_to_write(t)?),
        (None, Some(o)) => skelport::registry::detect_writer(o).ok_or_else(|| {
            Failure::new(
                "format.undetected",
                None,
                format!(
                    "cannot tell the output format from '{}'; name it with to= ({})",
                    o.display(),
                    skelport::registry::names(|f| f.can_write())
                ),
            )
        }),
        (None, None) => Err(Failure::new("format.undetected", None, "name the output format with to=")),
    }
}

pub fn map_arg(map: Option<&Bound<'_, PyAny>>) -> PyResult<Option<String>> {
    match map.filter(|m| !m.is_none()) {
        None => Ok(None),
        Some(m) => match m.extract::<String>() {
            Ok(s) => Ok(Some(s)),
            Err(_) => Ok(Some(options::path(m, "map")?.display().to_string())),
        },
    }
}

impl Document {
    /// Convert (in memory) to `target`, as if saved to `output`. `saved`: the output is only
    /// saved, so a GLB's binary chunk may stay in pieces (`WriteOptions::main_in_pieces`), written
    /// by `Converted::save` without first being copied into one buffer.
    fn converted(
        &self,
        py: Python<'_>,
        target: &'static dyn Format,
        output: Option<PathBuf>,
        stem: Option<String>,
        map: Option<String>,
        max_influences: Option<usize>,
        strict: bool,
        e: &Extra,
        saved: bool,
    ) -> PyResult<skelport::Converted> {
        let mut e = e.clone();
        e.keep_origin |= self.inner.keep_origin;
        let mut opts = options::convert_options(output, map, max_influences, strict, &self.inner.mesh, &e);
        if let Some(s) = stem {
            opts.write.file_stem = s;
        }
        opts.write.main_in_pieces = saved;
        let inner = &self.inner;
        py.detach(|| guard(Some(&inner.loaded.name), || Ok(skelport::convert(&inner.loaded, target, &opts)?))).map_err(|f| f.into_py(py))
    }
}

#[pymethods]
impl Document {
    /// The format the document was read as (`"mpfb"`, `"gltf"`, `"anvil"`, …).
    #[getter]
    fn format(&self) -> &'static str {
        self.inner.loaded.format.name()
    }
    /// The input's name in messages: the path as given, or the name given with bytes.
    #[getter]
    fn name(&self) -> &str {
        &self.inner.loaded.name
    }
    /// What the reader reported (warnings and notes), as `Diagnostic`s.
    #[getter]
    fn diagnostics<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        diagnostic_list(py, &self.inner.loaded.diagnostics, Some(&self.inner.loaded.name))
    }
    /// The skeletons, in file order.
    #[getter]
    fn skeletons(&self) -> Vec<Skeleton> {
        self.inner.skeletons().iter().enumerate().map(|(index, d)| Skeleton { data: d.clone(), doc: self.inner.clone(), index }).collect()
    }
    /// The skins (a mesh's vertices bound to a skeleton's joints).
    #[getter]
    fn skins(&self) -> Vec<Skin> {
        (0..self.inner.loaded.doc.skins.len()).map(|index| Skin { doc: self.inner.clone(), index }).collect()
    }
    /// The meshes, in the report frame.
    #[getter]
    fn meshes(&self) -> Vec<Mesh> {
        (0..self.inner.loaded.doc.meshes.len()).map(|index| Mesh { doc: self.inner.clone(), index }).collect()
    }
    /// What formats keep of the whole document beyond the IR (namespace → JSON value, e.g. VRM's
    /// meta), as `from_arrays` takes it back (`extensions`).
    #[getter]
    fn extensions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        extensions(py, &self.inner.loaded.doc.ext)
    }

    /// Write the document to `path` (side files beside it), all or nothing, as `to` (a format
    /// name) or the format the extension names. Returns the `Report`; raises `skelport.Error`.
    #[pyo3(signature = (path, *, to=None, map=None, max_influences=None, strict=false, **writer_options))]
    fn save(
        &self,
        py: Python<'_>,
        path: &Bound<'_, PyAny>,
        to: Option<&str>,
        map: Option<&Bound<'_, PyAny>>,
        max_influences: Option<&Bound<'_, PyAny>>,
        strict: bool,
        writer_options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Report> {
        let path = options::path(path, "path")?;
        let e = options::extra(writer_options, options::WRITE_OPTIONS, "save")?;
        let max = max_influences.map(|m| options::count(m, "max_influences")).transpose()?.flatten();
        let target = target_for(to, Some(&path)).map_err(|f| f.into_py(py))?;
        let c = self.converted(py, target, Some(path.clone()), None, map_arg(map)?, max, strict, &e, true)?;
        let written = py.detach(|| guard(Some(&self.inner.loaded.name), || Ok(c.save(&path)?))).map_err(|f| f.into_py(py))?;
        let name = self.inner.loaded.name.clone();
        let file = FileReport {
            input: name.clone(),
            output: Some(path.display().to_string()),
            from_format: Some(self.inner.loaded.format.name().to_owned()),
            to_format: target.name().to_owned(),
            ok: true,
            skipped: false,
            error: None,
            diagnostics: diagnostics(&c.diagnostics, Some(&name)),
            outputs: written.iter().map(|p| p.display().to_string()).collect(),
        };
        Ok(Report { files: vec![Py::new(py, file)?] })
    }

    /// The document written as `to`, as bytes (glTF with its buffers embedded). Raises
    /// `skelport.Error` when the target writes side files too (MPFB's weights file): use
    /// `dumps_all` or `save` for those.
    #[pyo3(signature = (to, *, map=None, max_influences=None, strict=false, **writer_options))]
    fn dumps<'py>(
        &self,
        py: Python<'py>,
        to: &str,
        map: Option<&Bound<'_, PyAny>>,
        max_influences: Option<&Bound<'_, PyAny>>,
        strict: bool,
        writer_options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyBytes>> {
        let mut e = options::extra(writer_options, options::WRITE_OPTIONS, "dumps")?;
        if !writer_options.is_some_and(|k| k.contains("embed").unwrap_or(false)) {
            e.embed = true;
        }
        let max = max_influences.map(|m| options::count(m, "max_influences")).transpose()?.flatten();
        let target = target_for(Some(to), None).map_err(|f| f.into_py(py))?;
        let c = self.converted(py, target, None, None, map_arg(map)?, max, strict, &e, false)?;
        if !c.output.side_files.is_empty() {
            let names: Vec<&str> = c.output.side_files.iter().map(|s| s.0.as_str()).collect();
            let msg = format!(
                "{}: as {} it is more than one file (also {}); use dumps_all() for every file's bytes, or save() to a path",
                self.inner.loaded.name,
                target.name(),
                names.join(", ")
            );
            return Err(Failure::new("output", Some(&self.inner.loaded.name), msg).into_py(py));
        }
        Ok(PyBytes::new(py, &c.output.main))
    }

    /// The document written as `to`, every file's bytes by file name: the main file first
    /// (named `<stem>.<extension>`, or as the format's tools name it: MPFB's
    /// `rig.<stem>.json`), then its side files.
    #[pyo3(signature = (to, *, stem="out", map=None, max_influences=None, strict=false, **writer_options))]
    fn dumps_all<'py>(
        &self,
        py: Python<'py>,
        to: &str,
        stem: &str,
        map: Option<&Bound<'_, PyAny>>,
        max_influences: Option<&Bound<'_, PyAny>>,
        strict: bool,
        writer_options: Option<&Bound<'_, PyDict>>,
    ) -> PyResult<Bound<'py, PyDict>> {
        let e = options::extra(writer_options, options::WRITE_OPTIONS, "dumps_all")?;
        let max = max_influences.map(|m| options::count(m, "max_influences")).transpose()?.flatten();
        let target = target_for(Some(to), None).map_err(|f| f.into_py(py))?;
        let main =
            target.conventional_name(stem).unwrap_or_else(|| format!("{stem}.{}", target.extensions().first().copied().unwrap_or("out")));
        let c = self.converted(py, target, Some(PathBuf::from(&main)), Some(stem.to_owned()), map_arg(map)?, max, strict, &e, false)?;
        let out = PyDict::new(py);
        out.set_item(main, PyBytes::new(py, &c.output.main))?;
        for (name, bytes) in &c.output.side_files {
            out.set_item(name, PyBytes::new(py, bytes))?;
        }
        Ok(out)
    }

    /// This document with its bones renamed by `map` (a built-in map's name or a map file), as
    /// `convert --map` renames them: unmapped bones are dropped, their weights merged into the
    /// nearest mapped ancestor (a loss each, in the new document's `diagnostics` after this
    /// one's). `"humanoid"` needs `to`, the format whose names it renames to. This document is
    /// left as it is. Raises `skelport.Error`.
    #[pyo3(signature = (map, *, to=None))]
    fn renamed(&self, py: Python<'_>, map: &Bound<'_, PyAny>, to: Option<&str>) -> PyResult<Document> {
        let Some(map) = map_arg(Some(map))? else {
            return Err(pyo3::exceptions::PyTypeError::new_err("map must be a map's name or a path"));
        };
        let target = to.map(|t| target_for(Some(t), None)).transpose().map_err(|f| f.into_py(py))?;
        let inner = &self.inner;
        let name = &inner.loaded.name;
        let loaded = py
            .detach(|| {
                guard(Some(name), || {
                    // A retarget follows the document's parents and skins: a broken one is
                    // refused, named.
                    let mut loaded = inner.loaded.clone();
                    loaded.apply_map(&map, target)?;
                    Ok(loaded)
                })
            })
            .map_err(|f| f.into_py(py))?;
        Ok(Document { inner: Arc::new(Inner::new(loaded, inner.mesh.clone(), inner.keep_origin)) })
    }

    /// The `skelport inspect --json` report of this document, as a dict (the same value:
    /// schemas/inspect.schema.json).
    fn inspect<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let r = skelport::inspect(&self.inner.loaded.doc, self.inner.loaded.format.name());
        crate::json_value(py, &r)
    }

    fn __repr__(&self) -> String {
        let d = &self.inner.loaded.doc;
        format!(
            "<Document {:?} ({}): {} skeleton(s), {} skin(s), {} mesh(es)>",
            self.inner.loaded.name,
            self.inner.loaded.format.name(),
            d.skeletons.len(),
            d.skins.len(),
            d.meshes.len()
        )
    }
}

/// Read `source`: a path, or bytes (then `name` names it in messages and its extension helps
/// tell the format).
pub fn load(
    py: Python<'_>,
    source: Source,
    format: Option<String>,
    mesh: Companion,
    weights: Companion,
    name: Option<String>,
    e: &Extra,
) -> PyResult<Document> {
    let opts = options::read_options(format, &mesh, &weights, e);
    let loaded = match &source {
        // `load` reads one file; a folder is a batch, which `convert` runs.
        Source::Path(p) if p.is_dir() => {
            let shown = p.display().to_string();
            let msg = format!(
                "{shown}: is a folder, and load reads one file: convert the files in it with skelport.convert(folder, out_dir, to=...) (or skelport.migrate), or load each file"
            );
            Err(Failure::new("input", Some(&shown), msg))
        }
        Source::Path(p) => {
            let shown = p.display().to_string();
            py.detach(|| guard(Some(&shown), || Ok(skelport::open(p, &opts)?)))
        }
        Source::Bytes(b) => {
            let name = name.unwrap_or_else(|| "<bytes>".to_owned());
            py.detach(|| guard(Some(&name), || Ok(skelport::from_bytes(&name, b, &opts)?)))
        }
    }
    .map_err(|f| f.into_py(py))?;
    Ok(Document { inner: Arc::new(Inner::new(loaded, mesh, e.keep_origin)) })
}
