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
    Attribute, Bone, BoneId, DMat4, DVec2, DVec3, Frame, Influences, Mesh, MeshId, Skeleton, SkeletonId, Skin, Transform, UvSet,
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
///   (n,): head to tail). `name` names the skeleton.
/// * A mesh (optional): `positions` ((v, 3)), `faces` ((f, k) vertex indices, shorter faces
///   padded with -1, as `Mesh.faces` gives them), `uvs` ((v, 2) per vertex, or one row per
///   corner with `uvs_per_corner=True`; origin bottom left, v up), `normals` ((v, 3), or per
///   corner with `normals_per_corner=True`). `mesh_name` names it.
/// * A skin of that mesh (optional): `joints` ((v, k) indices into `joint_names`) and `weights`
///   ((v, k)), rows padded with weight 0, as `Skin.influences()` gives them; or `groups`, a dict
///   of vertex groups `{bone name: (vertex indices, weights)}` (Blender's), groups named after no
///   bone being left out. `joint_names` default to every bone, in bone order. Each joint binds at
///   its bone's rest matrix.
///
/// Raises ValueError naming the array and the row that is wrong.
#[pyfunction]
#[pyo3(name = "_from_arrays", signature = (bone_names, parents, matrices, *, name="armature", lengths=None, positions=None, faces=None, uvs=None, uvs_per_corner=false, normals=None, normals_per_corner=false, mesh_name="mesh", joints=None, weights=None, joint_names=None, groups=None))]
pub fn from_arrays(
    bone_names: Vec<String>,
    parents: PyReadonlyArray1<'_, i64>,
    matrices: PyReadonlyArray3<'_, f64>,
    name: &str,
    lengths: Option<PyReadonlyArray1<'_, f64>>,
    positions: Option<PyReadonlyArray2<'_, f64>>,
    faces: Option<PyReadonlyArray2<'_, i64>>,
    uvs: Option<PyReadonlyArray2<'_, f64>>,
    uvs_per_corner: bool,
    normals: Option<PyReadonlyArray2<'_, f64>>,
    normals_per_corner: bool,
    mesh_name: &str,
    joints: Option<PyReadonlyArray2<'_, i64>>,
    weights: Option<PyReadonlyArray2<'_, f64>>,
    joint_names: Option<Vec<String>>,
    groups: Option<&Bound<'_, PyDict>>,
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
    let mut by_name = HashMap::new();
    let mut world = Vec::with_capacity(n);
    let mut skeleton = Skeleton::new(name);
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
            let l = l.as_array();
            if l.len() != n {
                return Err(bad(format!("lengths has {} rows for {n} bones", l.len())));
            }
            b.length = Some(l[i]).filter(|x| x.is_finite() && *x > 0.0);
        }
        skeleton.bones.push(b);
        world.push(m);
    }
    let mut doc = skelport::Document::new(Frame::REPORT);
    doc.skeletons.push(skeleton);

    let has_skin = joints.is_some() || weights.is_some() || groups.is_some();
    let Some(positions) = positions else {
        if has_skin || faces.is_some() {
            return Err(bad("a skin or faces need the mesh's positions"));
        }
        return Ok(finish(doc));
    };
    let (v, flat) = float_rows(&positions, 3, "positions")?;
    let mut mesh = Mesh { name: mesh_name.to_owned(), positions: flat.chunks(3).map(DVec3::from_slice).collect(), ..Default::default() };
    if let Some(f) = &faces {
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
    if let Some(u) = &uvs {
        let (rows, flat) = float_rows(u, 2, "uvs")?;
        let values: Vec<DVec2> = flat.chunks(2).map(DVec2::from_slice).collect();
        let uvs = if attribute(uvs_per_corner, rows, "uvs")? { Attribute::PerCorner(values) } else { Attribute::PerVertex(values) };
        mesh.uvs.push(UvSet { name: String::new(), uvs });
    }
    if let Some(nm) = &normals {
        let (rows, flat) = float_rows(nm, 3, "normals")?;
        let values: Vec<DVec3> = flat.chunks(3).map(DVec3::from_slice).collect();
        mesh.normals =
            Some(if attribute(normals_per_corner, rows, "normals")? { Attribute::PerCorner(values) } else { Attribute::PerVertex(values) });
    }
    doc.meshes.push(mesh);

    if has_skin {
        let names = joint_names.unwrap_or_else(|| bone_names.clone());
        let mut slots = Vec::with_capacity(names.len());
        for j in &names {
            let b = *by_name.get(j.as_str()).ok_or_else(|| bad(format!("joint_names: {j:?} is no bone")))?;
            slots.push(b);
        }
        let mut triples: Vec<(u32, u32, f64)> = Vec::new();
        match (&joints, &weights, groups) {
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
        let inverse_bind = slots.iter().map(|&b| world[b].inverse()).collect();
        let mut influences = Influences::from_triples(v, triples);
        influences.sort_descending();
        doc.skins.push(Skin {
            name: name.to_owned(),
            skeleton: SkeletonId::new(0),
            mesh: Some(MeshId::new(0)),
            joints: slots.into_iter().map(BoneId::from_index).collect(),
            inverse_bind,
            bind_shape: DMat4::IDENTITY,
            influences,
            ext: Default::default(),
        });
    }
    Ok(finish(doc))
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
    let format = skelport::format_for("ir-json", false).expect("ir-json is registered");
    let loaded = skelport::Loaded { doc, format, diagnostics: Default::default(), name: "<arrays>".into(), reads: Vec::new() };
    Document { inner: Arc::new(Inner::new(loaded, Companion::default(), false)) }
}
