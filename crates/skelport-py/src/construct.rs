//! `skelport.from_arrays`: a `Document` built from arrays (an armature's bones, a mesh, its
//! skin), in the report frame the arrays of a loaded document are in, so a program that holds
//! a rig in memory (a Blender exporter, a batch script) writes any format skelport writes
//! without a file in between.

use crate::document::{Document, Inner};
use crate::options::Companion;
use numpy::{PyReadonlyArray1, PyReadonlyArray2, PyReadonlyArray3};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use skelport::ir::{
    Attribute, Bone, BoneId, DMat4, DVec2, DVec3, Extensions, Frame, Influences, Mesh, MeshId, Skeleton, SkeletonId, Skin, Transform, UvSet,
};
use std::collections::HashMap;
use std::sync::Arc;

fn bad(msg: impl Into<String>) -> PyErr {
    PyValueError::new_err(msg.into())
}

/// Rows of a `(n, w)` float array as a flat vector, checking the width.
fn float_rows(a: &PyReadonlyArray2<'_, f64>, width: usize, what: &str) -> PyResult<(usize, Vec<f64>)> {
    let v = a.as_array();
    if v.ncols() != width {
        return Err(bad(format!("{what} must have shape (n, {width}), not {:?}", v.shape())));
    }
    if v.iter().any(|x| !x.is_finite()) {
        return Err(bad(format!("{what} holds a value that is not finite")));
    }
    Ok((v.nrows(), v.iter().copied().collect()))
}

/// Build a `Document` from arrays in the report frame (+Y up, +Z forward, right-handed,
/// metres), the frame of a loaded document's arrays.
///
/// * Bones: `bone_names` (n names), `parents` (int, shape (n,), -1 for roots, each parent before
///   its children), `matrices` (float64, (n, 4, 4), row-major: each bone's world rest matrix,
///   `m[:3, 3]` its head, its +Y axis along the bone, no shear or mirror), `lengths` (optional,
///   (n,): head to tail; NaN for none), `rolls` ((n,), radians, NaN for none), `deform` ((n,)
///   bool), `mirrors` ((n,), each bone's mirror counterpart, -1 for none), `bone_anchors` (JSON
///   text of each bone's MPFB placement, as `Skeleton.bone_anchors` gives it, or None), as a
///   loaded skeleton's properties of those names give them. `name` names the skeleton.
/// * Meshes: `meshes`, one dict each (the Python wrapper makes them; keys as
///   [`MeshArgs::from_dict`] reads them): positions, faces, UVs, normals, and a skin of it.
/// * Format data the IR does not model, as JSON text of the namespace → value objects that
///   `Document.extensions`, `Skeleton.extensions`, `Skeleton.bone_extensions`, `Mesh.extensions`
///   and `Skin.extensions` give: `extensions` (the document's), `skeleton_extensions`,
///   `bone_extensions` (one per bone, `None` for none). Run-local namespaces are dropped, as
///   when a file is read.
///
/// Raises ValueError naming the array and the row that is wrong.
#[pyfunction]
#[pyo3(name = "_from_arrays", signature = (bone_names, parents, matrices, *, name="armature", lengths=None, rolls=None, deform=None, mirrors=None, bone_anchors=None, meshes=Vec::new(), extensions=None, skeleton_extensions=None, bone_extensions=None))]
#[allow(clippy::too_many_arguments)]
pub fn from_arrays(
    bone_names: Vec<String>,
    parents: PyReadonlyArray1<'_, i64>,
    matrices: PyReadonlyArray3<'_, f64>,
    name: &str,
    lengths: Option<PyReadonlyArray1<'_, f64>>,
    rolls: Option<PyReadonlyArray1<'_, f64>>,
    deform: Option<PyReadonlyArray1<'_, bool>>,
    mirrors: Option<PyReadonlyArray1<'_, i64>>,
    bone_anchors: Option<Vec<Option<String>>>,
    meshes: Vec<Bound<'_, PyDict>>,
    extensions: Option<&str>,
    skeleton_extensions: Option<&str>,
    bone_extensions: Option<Vec<Option<String>>>,
) -> PyResult<Document> {
    let n = bone_names.len();
    let parents = parents.as_array();
    let mats = matrices.as_array();
    if parents.len() != n {
        return Err(bad(format!("parents has {} rows for {n} bone names", parents.len())));
    }
    if mats.shape() != [n, 4, 4] {
        return Err(bad(format!("matrices must have shape ({n}, 4, 4), not {:?}", mats.shape())));
    }
    let rows = |len: usize, what: &str| -> PyResult<()> {
        if len == n {
            Ok(())
        } else {
            Err(bad(format!("{what} has {len} rows for {n} bones")))
        }
    };
    for (len, what) in [
        (lengths.as_ref().map(|a| a.as_array().len()), "lengths"),
        (rolls.as_ref().map(|a| a.as_array().len()), "rolls"),
        (deform.as_ref().map(|a| a.as_array().len()), "deform"),
        (mirrors.as_ref().map(|a| a.as_array().len()), "mirrors"),
        (bone_anchors.as_ref().map(Vec::len), "bone_anchors"),
        (bone_extensions.as_ref().map(Vec::len), "bone_extensions"),
    ] {
        if let Some(len) = len {
            rows(len, what)?;
        }
    }
    let (lengths, rolls, deform, mirrors) = (
        lengths.as_ref().map(|a| a.as_array()),
        rolls.as_ref().map(|a| a.as_array()),
        deform.as_ref().map(|a| a.as_array()),
        mirrors.as_ref().map(|a| a.as_array()),
    );
    let mut by_name = HashMap::new();
    let mut world = Vec::with_capacity(n);
    let mut skeleton = Skeleton::new(name);
    skeleton.ext = ext_from(skeleton_extensions, "skeleton_extensions")?;
    for (i, bone) in bone_names.iter().enumerate() {
        if by_name.insert(bone.as_str(), i).is_some() {
            return Err(bad(format!("bone_names: bone {bone:?} is named twice")));
        }
        // Row-major as numpy holds it → glam's column-major.
        let m = DMat4::from_cols_array(&std::array::from_fn(|k| mats[[i, k % 4, k / 4]]));
        let parent = match parents[i] {
            -1 => None,
            p if p >= 0 && (p as usize) < i => Some(p as usize),
            p => return Err(bad(format!("parents[{i}] (bone {bone:?}) is {p}: a parent is -1 or a bone before its child"))),
        };
        let local = match parent {
            Some(p) => world_inverse(&world, p)? * m,
            None => m,
        };
        let rest = Transform::from_matrix(&local).ok_or_else(|| {
            bad(format!("matrices[{i}] (bone {bone:?}) is no rest transform: not finite, sheared or mirrored relative to its parent"))
        })?;
        let mut b = Bone::new(bone.clone(), parent.map(BoneId::from_index), rest);
        if let Some(l) = &lengths {
            b.length = Some(l[i]).filter(|x| x.is_finite() && *x > 0.0);
        }
        if let Some(r) = &rolls {
            b.roll = Some(r[i]).filter(|x| x.is_finite());
        }
        if let Some(d) = &deform {
            b.deform = d[i];
        }
        if let Some(m) = &mirrors {
            b.mirror = match m[i] {
                -1 => None,
                j if j >= 0 && (j as usize) < n => Some(BoneId::from_index(j as usize)),
                j => return Err(bad(format!("mirrors[{i}] (bone {bone:?}) is {j}: a bone index, or -1 for none"))),
            };
        }
        if let Some(Some(a)) = bone_anchors.as_ref().map(|a| &a[i]) {
            b.anchors = Some(serde_json::from_str(a).map_err(|e| bad(format!("bone_anchors[{i}] (bone {bone:?}): {e}")))?);
        }
        if let Some(Some(e)) = bone_extensions.as_ref().map(|e| &e[i]) {
            b.ext = ext_from(Some(e), &format!("bone_extensions[{i}]"))?;
        }
        skeleton.bones.push(b);
        world.push(m);
    }
    let mut doc = skelport::Document::new(Frame::REPORT);
    doc.ext = ext_from(extensions, "extensions")?;
    doc.skeletons.push(skeleton);
    for (k, d) in meshes.iter().enumerate() {
        let args = MeshArgs::from_dict(d).map_err(|e| bad(format!("meshes[{k}]: {}", e.value(d.py()))))?;
        add_mesh(&mut doc, args, &bone_names, &by_name, &world, name).map_err(|e| bad(format!("meshes[{k}]: {}", e.value(d.py()))))?;
    }
    Ok(finish(doc))
}

/// Extension data from the JSON text of a namespace → value object.
fn ext_from(text: Option<&str>, what: &str) -> PyResult<Extensions> {
    match text {
        None => Ok(Extensions::default()),
        Some(t) => serde_json::from_str(t).map_err(|e| bad(format!("{what}: not a JSON object of namespaces: {e}"))),
    }
}

/// One mesh of `from_arrays` and its skin, as the Python wrapper passes it.
struct MeshArgs<'py> {
    name: String,
    positions: PyReadonlyArray2<'py, f64>,
    faces: Option<PyReadonlyArray2<'py, i64>>,
    uvs: Option<PyReadonlyArray2<'py, f64>>,
    uvs_per_corner: bool,
    normals: Option<PyReadonlyArray2<'py, f64>>,
    normals_per_corner: bool,
    joints: Option<PyReadonlyArray2<'py, i64>>,
    weights: Option<PyReadonlyArray2<'py, f64>>,
    joint_names: Option<Vec<String>>,
    bind_matrices: Option<PyReadonlyArray3<'py, f64>>,
    groups: Option<Bound<'py, PyDict>>,
    extensions: Option<String>,
    skin_name: Option<String>,
    skin_extensions: Option<String>,
}

impl<'py> MeshArgs<'py> {
    /// Keys: `positions` ((v, 3), required), `faces` ((f, k) vertex indices, shorter faces padded
    /// with -1, as `Mesh.faces` gives them), `uvs` ((v, 2) per vertex, or one row per corner with
    /// `uvs_per_corner`), `normals` ((v, 3), or per corner with `normals_per_corner`), `name`;
    /// a skin: `joints` ((v, k) indices into `joint_names`) and `weights` ((v, k), rows padded
    /// with weight 0, as `Skin.influences()` gives them), or `groups`, Blender's vertex groups
    /// `{bone name: (vertex indices, weights)}` (groups named after no joint left out);
    /// `joint_names` (default: every bone, in bone order), `bind_matrices` ((j, 4, 4) row-major,
    /// where the skin binds each joint; default: at its bone's rest), `skin_name` (default: the
    /// skeleton's name); `extensions` and `skin_extensions` (JSON text, as `from_arrays`' own). A missing
    /// key or `None` is the default.
    fn from_dict(d: &Bound<'py, PyDict>) -> PyResult<Self> {
        fn get<'py, T: pyo3::conversion::FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<Option<T>> {
            match d.get_item(key)? {
                Some(v) if !v.is_none() => {
                    v.extract::<T>().map(Some).map_err(|_| bad(format!("{key}: not of the type from_arrays takes ({})", v.get_type())))
                }
                _ => Ok(None),
            }
        }
        const KEYS: &[&str] = &[
            "name",
            "positions",
            "faces",
            "uvs",
            "uvs_per_corner",
            "normals",
            "normals_per_corner",
            "joints",
            "weights",
            "joint_names",
            "bind_matrices",
            "groups",
            "extensions",
            "skin_name",
            "skin_extensions",
        ];
        for key in d.keys() {
            let key: String = key.extract()?;
            if !KEYS.contains(&key.as_str()) {
                return Err(bad(format!("unknown key {key:?} (a mesh has {})", KEYS.join(", "))));
            }
        }
        Ok(MeshArgs {
            name: get(d, "name")?.unwrap_or_else(|| "mesh".to_owned()),
            positions: get(d, "positions")?.ok_or_else(|| bad("a mesh needs its positions"))?,
            faces: get(d, "faces")?,
            uvs: get(d, "uvs")?,
            uvs_per_corner: get(d, "uvs_per_corner")?.unwrap_or(false),
            normals: get(d, "normals")?,
            normals_per_corner: get(d, "normals_per_corner")?.unwrap_or(false),
            joints: get(d, "joints")?,
            weights: get(d, "weights")?,
            joint_names: get(d, "joint_names")?,
            bind_matrices: get(d, "bind_matrices")?,
            groups: get(d, "groups")?,
            extensions: get(d, "extensions")?,
            skin_name: get(d, "skin_name")?,
            skin_extensions: get(d, "skin_extensions")?,
        })
    }
}

/// Add one mesh (and its skin, if it has one) to `doc`, whose skeleton 0 has `bone_names`.
fn add_mesh(
    doc: &mut skelport::Document,
    a: MeshArgs<'_>,
    bone_names: &[String],
    by_name: &HashMap<&str, usize>,
    world: &[DMat4],
    skeleton_name: &str,
) -> PyResult<()> {
    let (v, flat) = float_rows(&a.positions, 3, "positions")?;
    let mut mesh = Mesh { name: a.name, positions: flat.chunks(3).map(DVec3::from_slice).collect(), ..Default::default() };
    mesh.ext = ext_from(a.extensions.as_deref(), "extensions")?;
    if let Some(f) = &a.faces {
        let f = f.as_array();
        for (k, row) in f.rows().into_iter().enumerate() {
            let mut count = 0u32;
            let mut ended = false;
            for &x in row {
                match x {
                    -1 => ended = true,
                    x if !ended && x >= 0 && (x as usize) < v => {
                        mesh.faces.indices.push(x as u32);
                        count += 1;
                    }
                    x => return Err(bad(format!("faces[{k}] holds {x}: a vertex index below {v}, then -1 padding"))),
                }
            }
            if count < 3 {
                return Err(bad(format!("faces[{k}] has {count} corners; a face has at least 3")));
            }
            mesh.faces.counts.push(count);
        }
    }
    let corners = mesh.faces.indices.len();
    let attribute = |per_corner: bool, rows: usize, what: &str| -> PyResult<bool> {
        let want = if per_corner { corners } else { v };
        if rows != want {
            return Err(bad(format!(
                "{what} has {rows} rows; {} it has one per {}",
                if per_corner { "per corner" } else { "per vertex" },
                if per_corner { format!("corner ({want})") } else { format!("vertex ({want})") }
            )));
        }
        Ok(per_corner)
    };
    if let Some(u) = &a.uvs {
        let (rows, flat) = float_rows(u, 2, "uvs")?;
        let values: Vec<DVec2> = flat.chunks(2).map(DVec2::from_slice).collect();
        let uvs = if attribute(a.uvs_per_corner, rows, "uvs")? { Attribute::PerCorner(values) } else { Attribute::PerVertex(values) };
        mesh.uvs.push(UvSet { name: String::new(), uvs });
    }
    if let Some(nm) = &a.normals {
        let (rows, flat) = float_rows(nm, 3, "normals")?;
        let values: Vec<DVec3> = flat.chunks(3).map(DVec3::from_slice).collect();
        mesh.normals = Some(if attribute(a.normals_per_corner, rows, "normals")? {
            Attribute::PerCorner(values)
        } else {
            Attribute::PerVertex(values)
        });
    }
    let mesh_id = MeshId::from_index(doc.meshes.len());
    doc.meshes.push(mesh);

    if a.joints.is_none() && a.weights.is_none() && a.groups.is_none() {
        if a.joint_names.is_some() || a.skin_extensions.is_some() || a.bind_matrices.is_some() {
            return Err(bad("joint_names, bind_matrices and skin_extensions belong to a skin: give joints and weights, or groups"));
        }
        return Ok(());
    }
    let names = a.joint_names.unwrap_or_else(|| bone_names.to_vec());
    let mut slots = Vec::with_capacity(names.len());
    for j in &names {
        let b = *by_name.get(j.as_str()).ok_or_else(|| bad(format!("joint_names: {j:?} is no bone")))?;
        slots.push(b);
    }
    let mut triples: Vec<(u32, u32, f64)> = Vec::new();
    match (&a.joints, &a.weights, &a.groups) {
        (Some(j), Some(w), None) => {
            let (j, w) = (j.as_array(), w.as_array());
            if j.shape() != w.shape() || j.nrows() != v {
                return Err(bad(format!("joints {:?} and weights {:?} must both have shape ({v}, k)", j.shape(), w.shape())));
            }
            for ((vert, slot), wt) in j.indexed_iter().map(|((r, c), &s)| ((r, s), w[[r, c]])) {
                if wt == 0.0 {
                    continue;
                }
                if !(wt.is_finite() && wt > 0.0) || slot < 0 || slot as usize >= names.len() {
                    return Err(bad(format!(
                        "vertex {vert}: joint {slot} with weight {wt}: joints index joint_names, weights are positive"
                    )));
                }
                triples.push((vert as u32, slot as u32, wt));
            }
        }
        (None, None, Some(g)) => {
            let slot_of: HashMap<&str, usize> = names.iter().enumerate().map(|(k, n)| (n.as_str(), k)).collect();
            for (key, value) in g.iter() {
                let group: String = key.extract()?;
                let Some(&slot) = slot_of.get(group.as_str()) else { continue };
                let (vs, ws): (Vec<i64>, Vec<f64>) =
                    value.extract().map_err(|_| bad(format!("groups[{group:?}] must be (vertex indices, weights)")))?;
                if vs.len() != ws.len() {
                    return Err(bad(format!("groups[{group:?}]: {} vertices and {} weights", vs.len(), ws.len())));
                }
                for (&vert, &wt) in vs.iter().zip(&ws) {
                    if vert < 0 || vert as usize >= v || !wt.is_finite() || wt < 0.0 {
                        return Err(bad(format!(
                            "groups[{group:?}]: vertex {vert} with weight {wt}: a vertex below {v}, a weight of 0 or more"
                        )));
                    }
                    if wt > 0.0 {
                        triples.push((vert as u32, slot as u32, wt));
                    }
                }
            }
        }
        _ => return Err(bad("a skin is joints and weights together, or groups")),
    }
    let inverse_bind = match &a.bind_matrices {
        None => slots.iter().map(|&b| world[b].inverse()).collect(),
        Some(m) => {
            let m = m.as_array();
            if m.shape() != [names.len(), 4, 4] {
                return Err(bad(format!("bind_matrices must have shape ({}, 4, 4), one per joint, not {:?}", names.len(), m.shape())));
            }
            let mut out = Vec::with_capacity(names.len());
            for j in 0..names.len() {
                let b = DMat4::from_cols_array(&std::array::from_fn(|k| m[[j, k % 4, k / 4]]));
                if !b.is_finite() || b.determinant().abs() < 1e-12 {
                    return Err(bad(format!("bind_matrices[{j}] (joint {:?}) cannot be inverted", names[j])));
                }
                out.push(b.inverse());
            }
            out
        }
    };
    let mut influences = Influences::from_triples(v, triples);
    influences.sort_descending();
    doc.skins.push(Skin {
        name: a.skin_name.unwrap_or_else(|| skeleton_name.to_owned()),
        skeleton: SkeletonId::new(0),
        mesh: Some(mesh_id),
        joints: slots.into_iter().map(BoneId::from_index).collect(),
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences,
        ext: ext_from(a.skin_extensions.as_deref(), "skin_extensions")?,
    });
    Ok(())
}

fn world_inverse(world: &[DMat4], p: usize) -> PyResult<DMat4> {
    let m = world[p];
    if m.determinant().abs() < 1e-12 {
        return Err(bad(format!("matrices[{p}] cannot be inverted")));
    }
    Ok(m.inverse())
}

/// The `Document` of a built IR document: in the IR's own terms, as ir-json reads it.
fn finish(doc: skelport::Document) -> Document {
    let format = skelport::format_to_write("ir-json").expect("ir-json is registered");
    let loaded = skelport::Loaded { doc, format, diagnostics: Default::default(), name: "<arrays>".into(), reads: Vec::new() };
    Document { inner: Arc::new(Inner::new(loaded, Companion::default(), false)) }
}
