//! `.mhskel` (+ `.mhw`, + base mesh) → IR, placing joints and orienting bones as MakeHuman 1.x
//! does ([`crate::place`]).

use crate::place::{bone_normal, orientation, plane_normal, RollPlanes};
use crate::{MhskelError, FRAME, NAMESPACE, POSITIONS_KEY};
use serde_json::{Map, Value};
use skelport_ir::{
    Attribute, Bone, BoneId, Budget, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, InMemoryFile, Influences, Input, Mesh, Place,
    ReadOptions, Skeleton, Skin, Transform, UvSet, VertexGroup,
};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet, VecDeque};
use std::path::{Path, PathBuf};

/// Vertices in MakeHuman's base mesh (hm08), which rigs and weights number.
pub const BASE_VERTEX_COUNT: usize = 19158;

/// Largest vertex index + 1 a joint or weights file may use (docs/limits.md), as for MPFB.
pub const MAX_VERTICES: u64 = 1 << 24;

fn jerr(file: &str, path: impl Into<String>, message: impl Into<String>) -> MhskelError {
    MhskelError::Json { file: file.into(), path: path.into(), message: message.into() }
}

/// A `.mhskel` file, checked but not placed.
#[derive(Debug, Clone)]
pub struct RawRig {
    /// Every top-level key but `bones`, `joints`, `planes` and [`POSITIONS_KEY`], in file order.
    pub header: Map<String, Value>,
    /// The bones in file order.
    pub bones: Vec<(String, Map<String, Value>)>,
    /// `joints` as the file has it.
    pub joints: Map<String, Value>,
    /// The joints with a non-empty vertex list (MakeHuman skips the others).
    pub joint_vertices: HashMap<String, Vec<u32>>,
    /// `planes` as the file has it.
    pub planes: Map<String, Value>,
    /// Each plane's three joints.
    pub plane_joints: HashMap<String, [String; 3]>,
    /// Joint positions skelport wrote for joints no vertex places ([`POSITIONS_KEY`]).
    pub stored: HashMap<String, DVec3>,
}

fn vec3(v: &Value) -> Option<DVec3> {
    let a = v.as_array()?;
    if a.len() != 3 {
        return None;
    }
    let p = DVec3::new(a[0].as_f64()?, a[1].as_f64()?, a[2].as_f64()?);
    p.is_finite().then_some(p)
}

/// The planes a `rotation_plane` value names.
pub fn roll_planes(v: Option<&Value>) -> RollPlanes {
    match v {
        Some(Value::String(s)) => RollPlanes::One(s.clone()),
        Some(Value::Array(a)) if a.iter().all(Value::is_null) => RollPlanes::None,
        Some(Value::Array(a)) => RollPlanes::Many(a.iter().filter_map(|x| x.as_str().map(String::from)).collect()),
        _ => RollPlanes::None,
    }
}

/// Parse and check a `.mhskel` file.
pub fn parse(bytes: &[u8], file: &str) -> Result<RawRig, MhskelError> {
    let v: Value = serde_json::from_slice(bytes).map_err(|e| MhskelError::Syntax {
        file: file.into(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let Value::Object(mut top) = v else { return Err(jerr(file, "$", "a MakeHuman skeleton is a JSON object")) };
    let bones_v = match top.shift_remove("bones") {
        Some(Value::Object(b)) if !b.is_empty() => b,
        Some(Value::Object(_)) => return Err(jerr(file, "$.bones", "no bones: not a MakeHuman skeleton")),
        Some(_) => return Err(jerr(file, "$.bones", "must be an object mapping bone names to bones")),
        None => return Err(jerr(file, "$", "no \"bones\": not a MakeHuman skeleton")),
    };
    let joints = match top.shift_remove("joints") {
        Some(Value::Object(j)) => j,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(jerr(file, "$.joints", "must be an object mapping joint names to lists of vertex indices")),
    };
    let planes = match top.shift_remove("planes") {
        Some(Value::Object(p)) => p,
        None | Some(Value::Null) => Map::new(),
        Some(_) => return Err(jerr(file, "$.planes", "must be an object mapping plane names to three joint names")),
    };
    let stored_v = top.shift_remove(POSITIONS_KEY);
    let mut joint_vertices = HashMap::new();
    for (name, list) in &joints {
        // MakeHuman uses a joint's list only when it is a non-empty list.
        let Value::Array(a) = list else { continue };
        let mut idx = Vec::with_capacity(a.len());
        for (k, x) in a.iter().enumerate() {
            match x.as_u64() {
                Some(i) if i < MAX_VERTICES => idx.push(i as u32),
                _ => return Err(jerr(file, format!("$.joints.{name}[{k}]"), format!("{x} is not a vertex index of the base mesh"))),
            }
        }
        if !idx.is_empty() {
            joint_vertices.insert(name.clone(), idx);
        }
    }
    let mut plane_joints = HashMap::new();
    for (name, p) in &planes {
        let three = p.as_array().filter(|a| a.len() == 3).and_then(|a| {
            let s: Vec<String> = a.iter().filter_map(|x| x.as_str().map(String::from)).collect();
            <[String; 3]>::try_from(s).ok()
        });
        match three {
            Some(t) => {
                plane_joints.insert(name.clone(), t);
            }
            None => return Err(jerr(file, format!("$.planes.{name}"), "a plane is a list of three joint names")),
        }
    }
    let mut stored = HashMap::new();
    match stored_v {
        Some(Value::Object(m)) => {
            for (name, p) in m {
                let p = vec3(&p).ok_or_else(|| jerr(file, format!("$.{POSITIONS_KEY}.{name}"), "needs three finite numbers"))?;
                stored.insert(name, p);
            }
        }
        None => {}
        Some(_) => return Err(jerr(file, format!("$.{POSITIONS_KEY}"), "must be an object mapping joint names to positions")),
    }
    let mut bones = Vec::with_capacity(bones_v.len());
    for (name, b) in bones_v {
        let path = format!("$.bones.{name}");
        let Value::Object(b) = b else { return Err(jerr(file, &path, "a bone must be an object")) };
        for end in ["head", "tail"] {
            match b.get(end) {
                Some(Value::String(_)) => {}
                Some(Value::Object(o)) if o.contains_key("strategy") => {
                    return Err(jerr(
                        file,
                        format!("{path}.{end}"),
                        "a placement strategy instead of a joint name: this is an MPFB rig, not a MakeHuman 1.x skeleton; read it with --from mpfb",
                    ))
                }
                _ => return Err(jerr(file, format!("{path}.{end}"), "missing or not a joint name; every bone names a head and a tail joint")),
            }
        }
        match b.get("parent") {
            None | Some(Value::Null | Value::String(_)) => {}
            Some(_) => return Err(jerr(file, format!("{path}.parent"), "must be a bone name or null")),
        }
        match b.get("rotation_plane") {
            None | Some(Value::Null | Value::String(_) | Value::Number(_)) => {}
            Some(Value::Array(a)) if a.iter().all(|x| x.is_string() || x.is_null()) => {}
            Some(_) => return Err(jerr(file, format!("{path}.rotation_plane"), "must be a plane name, a list of plane names or null")),
        }
        bones.push((name, b));
    }
    Ok(RawRig { header: top, bones, joints, joint_vertices, planes, plane_joints, stored })
}

/// MakeHuman's base mesh (or another OBJ given as it), in MakeHuman's frame.
pub struct BaseMesh {
    pub obj: skelport_obj::ObjMesh,
    /// The positions as MakeHuman holds them: 32-bit floats.
    pub positions: Vec<DVec3>,
    /// Face groups → their vertices.
    pub groups: HashMap<String, Vec<u32>>,
}

impl BaseMesh {
    /// Parse an OBJ.
    pub fn parse(bytes: &[u8], file: &str) -> Result<BaseMesh, MhskelError> {
        BaseMesh::parse_budgeted(bytes, file, &Budget::for_input(bytes.len() as u64))
    }

    /// [`BaseMesh::parse`] charging `budget`, which the mesh grows (it is input too).
    pub fn parse_budgeted(bytes: &[u8], file: &str, budget: &Budget) -> Result<BaseMesh, MhskelError> {
        // Under its canonical path, the key the file was read under (counted once).
        budget.add_input(&std::fs::canonicalize(file).unwrap_or_else(|_| PathBuf::from(file)), bytes.len() as u64);
        let obj = skelport_obj::parse_budgeted(bytes, file, budget)?;
        let positions = obj.positions.iter().map(|p| p.as_vec3().as_dvec3()).collect();
        let groups = obj.vertex_groups().into_iter().map(|g| (g.name, g.vertices)).collect();
        Ok(BaseMesh { obj, positions, groups })
    }

    /// The mean of `idx`'s positions; `Err(k)` for the first index past the mesh.
    pub fn mean(&self, idx: &[u32]) -> Result<DVec3, usize> {
        let mut s = DVec3::ZERO;
        for (k, &i) in idx.iter().enumerate() {
            s += *self.positions.get(i as usize).ok_or(k)?;
        }
        Ok(s / idx.len().max(1) as f64)
    }

    /// How far the feet stand below the ground: minus the lowest y of the `body` group (0 without
    /// one), the lift MPFB gives the same mesh.
    pub fn feet_lift(&self) -> f64 {
        self.groups
            .get("body")
            .and_then(|g| g.iter().filter_map(|&v| self.positions.get(v as usize)).map(|p| p.y).reduce(f64::min))
            .map(|y| -y)
            .unwrap_or(0.0)
    }
}

/// A side file (the mesh or the weights), given by path or in memory.
#[derive(Clone)]
pub(crate) enum Side<'a> {
    Path(PathBuf),
    Memory(&'a InMemoryFile),
}

impl Side<'_> {
    pub(crate) fn name(&self) -> String {
        match self {
            Side::Path(p) => p.display().to_string(),
            Side::Memory(m) => m.name.clone(),
        }
    }
    /// The file's bytes; a file read from disk counts into `budget` as a side file (so the
    /// run's outputs are kept off it).
    pub(crate) fn bytes(&self, what: &str, budget: &Budget) -> Result<Cow<'_, [u8]>, MhskelError> {
        match self {
            Side::Path(p) => skelport_ir::files::read_user_file(p, Some(budget)).map(Cow::Owned).map_err(|e| MhskelError::File {
                file: self.name(),
                place: None,
                message: format!("cannot read the {what}: {e}"),
            }),
            Side::Memory(m) => Ok(Cow::Borrowed(&m.bytes)),
        }
    }
}

/// The mesh given in `opts`, if any.
pub(crate) fn given<'a>(path: Option<&Path>, data: Option<&'a InMemoryFile>) -> Option<Side<'a>> {
    data.map(Side::Memory).or_else(|| path.map(|p| Side::Path(p.to_path_buf())))
}

/// Where joints come from while placing: the rig's lists on a mesh, its stored positions.
pub struct Joints<'a> {
    pub rig: &'a RawRig,
    pub mesh: Option<&'a BaseMesh>,
    pub file: &'a str,
    /// The mesh's name, for messages.
    pub mesh_name: &'a str,
}

impl Joints<'_> {
    /// Where joint `name` is: the mean of its vertices, else of the mesh's `joint-<name>` group,
    /// else the position skelport stored; `Ok(None)` when nothing places it (MakeHuman puts it
    /// at the origin).
    pub fn position(&self, name: &str) -> Result<Option<DVec3>, MhskelError> {
        if let Some(idx) = self.rig.joint_vertices.get(name) {
            return match self.mesh {
                Some(m) => m.mean(idx).map(Some).map_err(|k| {
                    jerr(
                        self.file,
                        format!("$.joints.{name}[{k}]"),
                        format!(
                            "vertex {} is past the {} vertices of {}; use MakeHuman's base mesh (data/3dobjs/base.obj, {BASE_VERTEX_COUNT} vertices)",
                            idx[k],
                            m.positions.len(),
                            self.mesh_name
                        ),
                    )
                }),
                None => match self.rig.stored.get(name) {
                    Some(p) => Ok(Some(*p)),
                    None => Err(MhskelError::File {
                        file: self.file.into(),
                        place: Some(format!("$.joints.{name}")),
                        message: format!(
                            "joint \"{name}\" is placed on MakeHuman's base mesh, and none was found (MakeHuman 1.x keeps it in data/3dobjs/base.obj beside data/rigs/); give it with --mesh base.obj"
                        ),
                    }),
                },
            };
        }
        if let Some(m) = self.mesh {
            let group = if name.starts_with("joint-") { name.to_string() } else { format!("joint-{name}") };
            if let Some(g) = m.groups.get(&group).filter(|g| !g.is_empty()) {
                return Ok(m.mean(g).ok());
            }
        }
        Ok(self.rig.stored.get(name).copied())
    }
}

/// MakeHuman's bone order: bones whose parent is known are taken in file order, pass after pass
/// (a bone whose parent never comes is left out), then listed breadth-first from the roots.
/// Returns the bone indices in that order and each one's parent; the left-out bones' indices.
pub fn bone_order(bones: &[(String, Map<String, Value>)]) -> (Vec<(usize, Option<usize>)>, Vec<usize>) {
    let index: HashMap<&str, usize> = bones.iter().enumerate().map(|(i, (n, _))| (n.as_str(), i)).collect();
    let parent_name = |i: usize| bones[i].1.get("parent").and_then(Value::as_str).filter(|p| !p.is_empty());
    let mut added: Vec<usize> = Vec::with_capacity(bones.len());
    let mut is_added = vec![false; bones.len()];
    loop {
        let before = added.len();
        for i in 0..bones.len() {
            if is_added[i] {
                continue;
            }
            let ok = match parent_name(i) {
                None => true,
                Some(p) => index.get(p).is_some_and(|&pi| is_added[pi]),
            };
            if ok {
                is_added[i] = true;
                added.push(i);
            }
        }
        if added.len() == before || added.len() == bones.len() {
            break;
        }
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); bones.len()];
    let mut roots = Vec::new();
    for &i in &added {
        match parent_name(i).and_then(|p| index.get(p)) {
            Some(&p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let mut order = Vec::with_capacity(added.len());
    let mut queue: VecDeque<(usize, Option<usize>)> = roots.into_iter().map(|r| (r, None)).collect();
    while let Some((i, p)) = queue.pop_front() {
        order.push((i, p));
        queue.extend(children[i].iter().map(|&c| (c, Some(i))));
    }
    let left_out = (0..bones.len()).filter(|&i| !is_added[i]).collect();
    (order, left_out)
}

/// The weights file named by the rig (`weights_file`), beside the rig: only a plain file name is
/// followed (an untrusted file must not lead elsewhere).
fn weights_beside(rig: &RawRig, input: &Input<'_>) -> Option<(String, Option<PathBuf>)> {
    let name = rig.header.get("weights_file").and_then(Value::as_str).filter(|n| !n.is_empty())?;
    let plain = !name.contains(['/', '\\']) && name != ".." && name != ".";
    let path = input.path.filter(|_| plain).map(|p| p.parent().unwrap_or(Path::new("")).join(name)).filter(|p| p.is_file());
    Some((name.to_string(), path))
}

/// A secondary rig's weights (it names no weights file, its bones name reference bones):
/// derived from MakeHuman's default rig and weights beside it ([`crate::derive`]), as MakeHuman
/// does when the rig is chosen. `None`, with a warning, when the rig has no reference bones to go
/// by or the default rig is not beside it.
fn reference_weights(
    rig: &RawRig,
    input: &Input<'_>,
    opts: &ReadOptions,
    mesh_vertices: Option<usize>,
    budget: &Budget,
    diag: &mut Diagnostics,
) -> Result<Option<(String, WeightsFile)>, MhskelError> {
    use crate::derive::{DeriveError, REFERENCE_RIG, REFERENCE_WEIGHTS};
    let file = input.display_name();
    let referring: Vec<&str> = rig
        .bones
        .iter()
        .filter(|(_, b)| {
            ["weights_reference", "reference"]
                .iter()
                .any(|k| b.get(*k).is_some_and(|v| v.is_string() || v.as_array().is_some_and(|a| !a.is_empty())))
        })
        .map(|(n, _)| n.as_str())
        .collect();
    let Some(first) = referring.first() else { return Ok(None) };
    let folder = input.path.map(|p| p.parent().unwrap_or(Path::new("")));
    let beside = |name: &str| folder.map(|d| d.join(name)).filter(|p| p.exists());
    let (Some(rig_path), Some(weights_path)) = (beside(REFERENCE_RIG), beside(REFERENCE_WEIGHTS)) else {
        diag.warn_at(
            "mhskel.reference-weights",
            Place::path(format!("$.bones.{first}")),
            format!(
                "$.bones.{first}: the rig names no weights file; MakeHuman gives its {} bone(s) with reference bones the weights of its default rig through them, and {REFERENCE_RIG} and {REFERENCE_WEIGHTS} are not beside it: no skin was read; put them beside it (MakeHuman's data/rigs/) or give weights with --weights",
                referring.len()
            ),
        );
        return Ok(None);
    };
    let side = |path: &Path, name: &str| -> Result<Vec<u8>, MhskelError> {
        skelport_ir::files::read_referenced(input, name, opts, budget).map_err(|e| match e {
            skelport_ir::files::FileError::Budget(b) => MhskelError::Budget(b),
            e => MhskelError::File {
                file: path.display().to_string(),
                place: None,
                message: format!("cannot read MakeHuman's default rig: {e}"),
            },
        })
    };
    let (rig_name, weights_name) = (rig_path.display().to_string(), weights_path.display().to_string());
    let bytes = side(&rig_path, REFERENCE_RIG)?;
    budget.charge_json(&bytes, &rig_name, "the rig's JSON")?;
    let reference = parse(&bytes, &rig_name)?;
    let wf = parse_weights(&side(&weights_path, REFERENCE_WEIGHTS)?, &weights_name)?;
    let Some(groups) = wf.groups else {
        return Err(jerr(&weights_name, "$.weights", "a .mhw file needs a \"weights\" object of bone name → [[vertex, weight], ...]"));
    };
    let derived = match crate::derive::derive(rig, &reference, groups, mesh_vertices, budget, &weights_name) {
        Ok(d) => d,
        Err(DeriveError::Budget(b)) => return Err(b.into()),
        Err(DeriveError::TooMuchWork) => {
            return Err(jerr(
                &file,
                "$.bones",
                format!(
                    "completing the bones' weight references against {rig_name} takes more than {} steps (MakeHuman's rigs take a few thousand); give weights with --weights",
                    crate::derive::MAX_STEPS
                ),
            ))
        }
        Err(DeriveError::Vertex { group, k, vertex }) => {
            return Err(jerr(
                &weights_name,
                format!("$.weights.{group}[{k}]"),
                format!("vertex {vertex} is past the base mesh's {} vertices; use the base mesh the weights were made for", mesh_vertices.unwrap_or(0)),
            ))
        }
    };
    diag.info(
        "mhskel.reference-weights",
        format!(
            "the rig names no weights file: its weights are derived from {weights_name} through its bones' reference bones, as MakeHuman derives them ({} of {} bones weighted)",
            derived.groups.len(),
            rig.bones.len()
        ),
    );
    if !derived.unweighted.is_empty() {
        diag.warn(
            "mhskel.reference-unweighted",
            format!(
                "{} bone(s) name reference bones of which none has weights in {weights_name}, so they get none, as in MakeHuman: {}",
                derived.unweighted.len(),
                derived.unweighted.join(", ")
            ),
        );
    }
    let mut header = wf.header;
    header.insert("name".into(), format!("{} weights", rig.header.get("name").and_then(Value::as_str).unwrap_or("skeleton")).into());
    header.insert(
        "description".into(),
        format!("derived by skelport from {REFERENCE_WEIGHTS} through the bones' reference bones, as MakeHuman 1.x derives them").into(),
    );
    Ok(Some((weights_name, WeightsFile { header, groups: Some(derived.groups) })))
}

/// Read a `.mhskel` (with its weights and the base mesh) into the IR.
pub fn read(input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, MhskelError> {
    let file = input.display_name();
    let budget = opts.budget_for(&input);
    budget.charge_json(input.bytes, &file, "the rig's JSON")?;
    let rig = parse(input.bytes, &file)?;
    // The base mesh: --mesh, else MakeHuman's data folder (data/rigs/ beside data/3dobjs/).
    let explicit = given(opts.mesh.as_deref(), opts.mesh_data.as_ref());
    let has_explicit = explicit.is_some();
    let side = explicit.or_else(|| input.path.and_then(skelport_mpfb::layout::base_mesh_for).map(Side::Path));
    if let (false, Some(s)) = (has_explicit, &side) {
        diag.info(
            "mhskel.base-mesh",
            format!("no --mesh given: joints placed on MakeHuman's base mesh {} (data/3dobjs/ beside data/rigs/); give --mesh to use another body", s.name()),
        );
    }
    let mesh = match &side {
        Some(s) => Some((s.name(), BaseMesh::parse_budgeted(&s.bytes("mesh", &budget)?, &s.name(), &budget)?)),
        None => None,
    };
    if let Some((name, m)) = &mesh {
        if m.positions.len() != BASE_VERTEX_COUNT {
            diag.warn(
                "mhskel.mesh-topology",
                format!(
                    "{name}: the mesh has {} vertices but MakeHuman's base mesh has {BASE_VERTEX_COUNT}: the rig's vertex numbers may point at the wrong places",
                    m.positions.len()
                ),
            );
        }
    }
    // The weights: --weights, else the file the rig names, beside it, else (a secondary rig)
    // derived from the default rig's beside it.
    let weights: Option<(String, WeightsFile)> = match given(opts.weights.as_deref(), opts.weights_data.as_ref()) {
        Some(w) => Some((w.name(), parse_weights(&w.bytes("weights", &budget)?, &w.name())?)),
        None => match weights_beside(&rig, &input) {
            Some((_, Some(p))) => {
                diag.info("mhskel.weights", format!("weights from {}, the file the rig names (weights_file)", p.display()));
                let w = Side::Path(p);
                Some((w.name(), parse_weights(&w.bytes("weights", &budget)?, &w.name())?))
            }
            Some((name, None)) => {
                diag.warn(
                    "mhskel.no-weights",
                    format!("{file}: the weights file it names (\"{name}\") is not beside it: no skin was read; give it with --weights"),
                );
                None
            }
            None => reference_weights(&rig, &input, opts, mesh.as_ref().map(|m| m.1.positions.len()), &budget, diag)?,
        },
    };

    let (mesh_name, mesh_ref) = match &mesh {
        Some((n, m)) => (n.as_str(), Some(m)),
        None => ("", None),
    };
    let joints = Joints { rig: &rig, mesh: mesh_ref, file: &file, mesh_name };
    let mut positions: HashMap<String, DVec3> = HashMap::new();
    let mut unplaced: Vec<String> = Vec::new();
    let mut place = |name: &str, positions: &mut HashMap<String, DVec3>| -> Result<DVec3, MhskelError> {
        if let Some(p) = positions.get(name) {
            return Ok(*p);
        }
        let p = match joints.position(name)? {
            Some(p) => p,
            None => {
                unplaced.push(name.to_string());
                DVec3::ZERO
            }
        };
        positions.insert(name.to_string(), p);
        Ok(p)
    };

    let (order, left_out) = bone_order(&rig.bones);
    if !left_out.is_empty() {
        let names: Vec<&str> = left_out.iter().map(|&i| rig.bones[i].0.as_str()).collect();
        let first = names[0];
        diag.warn_at(
            "mhskel.parent",
            Place::path(format!("$.bones.{first}.parent")),
            format!(
                "$.bones.{first}.parent: {} bone(s) have a parent that names no bone (or a cycle) and are left out, as MakeHuman leaves them: {}",
                names.len(),
                names.join(", ")
            ),
        );
    }
    let mut sk = Skeleton::new(rig.header.get("name").and_then(Value::as_str).unwrap_or("skeleton"));
    let mut id_of: HashMap<usize, BoneId> = HashMap::new();
    let mut world: HashMap<usize, (DQuat, DVec3)> = HashMap::new();
    let mut degenerate = Vec::new();
    for &(i, parent) in &order {
        let (name, b) = &rig.bones[i];
        let head_j = b.get("head").and_then(Value::as_str).unwrap_or_default();
        let tail_j = b.get("tail").and_then(Value::as_str).unwrap_or_default();
        let h = place(head_j, &mut positions)?;
        let t = place(tail_j, &mut positions)?;
        let planes = roll_planes(b.get("rotation_plane"));
        if b.get("rotation_plane").and_then(Value::as_array).is_some_and(|a| !a.is_empty() && a.iter().all(Value::is_null)) {
            diag.warn_at(
                "mhskel.rotation-plane",
                Place::path(format!("$.bones.{name}.rotation_plane")),
                format!("$.bones.{name}.rotation_plane: [null, null, null] names no plane: the bone's normal is +Y, as in MakeHuman"),
            );
        }
        let mut plane_err = None;
        let normal = bone_normal(&planes, |p| {
            let js = rig.plane_joints.get(p)?;
            let mut ps = [DVec3::ZERO; 3];
            for (k, j) in js.iter().enumerate() {
                match place(j, &mut positions) {
                    Ok(x) => ps[k] = x,
                    Err(e) => {
                        plane_err.get_or_insert(e);
                    }
                }
            }
            Some(plane_normal(ps[0], ps[1], ps[2]))
        });
        if let Some(e) = plane_err {
            return Err(e);
        }
        let q = match orientation(h, t, normal) {
            Some(q) => q,
            None => {
                degenerate.push(name.as_str());
                skelport_ir::proc::bone_from_head_tail(h, t, 0.0).0
            }
        };
        let rest = match parent {
            Some(p) => {
                let (pq, ph) = world[&p];
                Transform::from_rt((pq.inverse() * q).normalize(), pq.inverse() * (h - ph))
            }
            None => Transform::from_rt(q, h),
        };
        let mut bone = Bone::new(name.clone(), parent.map(|p| id_of[&p]), rest);
        bone.length = Some((t - h).length());
        bone.ext.set_raw(NAMESPACE, Value::Object(b.clone()));
        world.insert(i, (q, h));
        id_of.insert(i, sk.push(bone));
    }
    if !unplaced.is_empty() {
        unplaced.sort();
        diag.warn(
            "mhskel.joint-missing",
            format!(
                "{file}: {} joint(s) have no vertices, no joint-<name> group on the mesh and no stored position: placed at the origin, as MakeHuman places them: {}",
                unplaced.len(),
                unplaced.join(", ")
            ),
        );
    }
    if !degenerate.is_empty() {
        diag.warn(
            "mhskel.degenerate",
            format!(
                "{} bone(s) have no length or a plane normal along the bone, so MakeHuman's axes are not a rotation: oriented along the bone with roll 0 instead: {}",
                degenerate.len(),
                degenerate.join(", ")
            ),
        );
    }
    // Mirror links by MakeHuman's .L/.R naming.
    let names: HashMap<String, BoneId> = sk.name_map().into_iter().map(|(k, v)| (k.to_string(), v)).collect();
    for i in 0..sk.bones.len() {
        let nm = &sk.bones[i].name;
        let other = nm.strip_suffix(".L").map(|s| format!("{s}.R")).or_else(|| nm.strip_suffix(".R").map(|s| format!("{s}.L")));
        sk.bones[i].mirror = other.and_then(|o| names.get(&o).copied());
    }
    let mut placed: Vec<(&String, &DVec3)> = positions.iter().collect();
    placed.sort_by(|a, b| a.0.cmp(b.0));
    let placed: Map<String, Value> = placed.into_iter().map(|(k, p)| (k.clone(), serde_json::json!(p.to_array()))).collect();
    sk.ext.set_raw(
        NAMESPACE,
        serde_json::json!({
            "header": rig.header,
            "joints": rig.joints,
            "planes": rig.planes,
            "positions": placed,
            "placed_on_mesh": mesh.is_some(),
        }),
    );

    let mut doc = Document::new(FRAME);
    doc.source_format = Some(crate::NAME.into());
    let keep_mesh = weights.is_some() || (has_explicit && !opts.mesh_for_placement);
    let mut remap = None;
    if let Some((_, m)) = mesh.as_ref().filter(|_| keep_mesh) {
        let (ir, map) = build_mesh(m, opts.keep_helpers);
        remap = map;
        doc.meshes.push(ir);
    }
    if let Some((wname, wf)) = weights {
        let on = WeightsOn { mesh_vertices: mesh.as_ref().map(|m| m.1.positions.len()), remap: remap.as_deref(), budget: &budget };
        let mut skin = weights_into(wf, &wname, &sk, on, &doc, diag)?;
        skin.mesh = (!doc.meshes.is_empty()).then_some(skelport_ir::MeshId::new(0));
        doc.skins.push(skin);
    }
    doc.skeletons.push(sk);
    Ok(doc)
}

/// The IR mesh: helper geometry (`helper-*`, `joint-*` groups) left out unless kept, with the
/// kept base-mesh vertices recorded as runs so weights can be written in base numbering.
fn build_mesh(m: &BaseMesh, keep_helpers: bool) -> (Mesh, Option<Vec<Option<u32>>>) {
    let is_helper = |g: &str| g.starts_with("helper-") || g.starts_with("joint-");
    let positions: Vec<DVec3> = m.obj.positions.clone();
    let uv_set = m.obj.uv_set();
    let normals = m.obj.normal_attribute();
    let groups: Vec<VertexGroup> = m
        .obj
        .group_names
        .iter()
        .map(|n| VertexGroup { name: n.clone(), vertices: m.groups.get(n).cloned().unwrap_or_default(), weights: None })
        .collect();
    if keep_helpers {
        let mut mesh = Mesh {
            name: "base".into(),
            positions,
            normals,
            uvs: uv_set.into_iter().collect(),
            faces: m.obj.faces.clone(),
            groups,
            ext: Default::default(),
        };
        mesh.ext.set_raw(NAMESPACE, serde_json::json!({ "base_vertex_count": m.positions.len() }));
        return (mesh, None);
    }
    let helper_group: Vec<bool> = m.obj.group_names.iter().map(|g| is_helper(g)).collect();
    let face_kept: Vec<bool> = m.obj.face_groups.iter().map(|g| !g.is_some_and(|g| helper_group[g as usize])).collect();
    let mut keep = vec![false; positions.len()];
    for (f, _) in m.obj.faces.iter().zip(&face_kept).filter(|(_, k)| **k) {
        for &v in f {
            keep[v as usize] = true;
        }
    }
    let mut map = vec![None; positions.len()];
    let mut kept = Vec::new();
    let mut runs: Vec<[u32; 2]> = Vec::new();
    for (i, k) in keep.iter().enumerate() {
        if *k {
            map[i] = Some(kept.len() as u32);
            kept.push(positions[i]);
            match runs.last_mut() {
                Some(r) if r[0] + r[1] == i as u32 => r[1] += 1,
                _ => runs.push([i as u32, 1]),
            }
        }
    }
    let mut faces = Faces::default();
    for (f, _) in m.obj.faces.iter().zip(&face_kept).filter(|(_, k)| **k) {
        faces.counts.push(f.len() as u32);
        faces.indices.extend(f.iter().filter_map(|&v| map[v as usize]));
    }
    let uv_set = uv_set.map(|s| UvSet { name: s.name, uvs: trim(s.uvs, &m.obj.faces.counts, &face_kept, &keep) });
    let normals = normals.map(|n| trim(n, &m.obj.faces.counts, &face_kept, &keep));
    let groups = groups
        .into_iter()
        .filter(|g| !is_helper(&g.name))
        .map(|g| VertexGroup { name: g.name, vertices: g.vertices.iter().filter_map(|&v| map[v as usize]).collect(), weights: None })
        .collect();
    let mut mesh =
        Mesh { name: "base".into(), positions: kept, normals, uvs: uv_set.into_iter().collect(), faces, groups, ext: Default::default() };
    mesh.ext.set_raw(NAMESPACE, serde_json::json!({ "base_vertex_count": m.positions.len(), "kept_runs": runs }));
    (mesh, Some(map))
}

/// An attribute of the whole OBJ cut to the kept faces (per corner) or vertices (per vertex).
fn trim<T: Copy>(attr: Attribute<T>, counts: &[u32], face_kept: &[bool], keep: &[bool]) -> Attribute<T> {
    match attr {
        Attribute::PerCorner(values) => {
            let mut out = Vec::with_capacity(values.len());
            let mut at = 0usize;
            for (&c, &k) in counts.iter().zip(face_kept) {
                let end = (at + c as usize).min(values.len());
                if k {
                    out.extend_from_slice(&values[at..end]);
                }
                at = end;
            }
            Attribute::PerCorner(out)
        }
        Attribute::PerVertex(v) => Attribute::PerVertex(v.iter().zip(keep).filter(|(_, k)| **k).map(|(x, _)| *x).collect()),
    }
}

/// One weights group: its name and (vertex, weight) entries.
type Group = (String, Vec<(u64, f64)>);

/// A `.mhw` file: the header keys as they are, and the groups in file order.
pub struct WeightsFile {
    pub header: Map<String, Value>,
    pub groups: Option<Vec<Group>>,
}

impl<'de> serde::Deserialize<'de> for WeightsFile {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> serde::de::Visitor<'de> for Top {
            type Value = WeightsFile;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object with a \"weights\" object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<WeightsFile, A::Error> {
                let mut out = WeightsFile { header: Map::new(), groups: None };
                while let Some(k) = m.next_key::<String>()? {
                    if k == "weights" {
                        out.groups = Some(m.next_value::<Groups>()?.0);
                    } else {
                        let v: Value = m.next_value()?;
                        out.header.insert(k, v);
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(Top)
    }
}

/// Bone name → [[vertex, weight], ...], in file order.
struct Groups(Vec<Group>);

impl<'de> serde::Deserialize<'de> for Groups {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Groups;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of bone name → [[vertex index, weight], ...]")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<Groups, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = m.next_entry::<String, Vec<(u64, f64)>>()? {
                    out.push((k, v));
                }
                Ok(Groups(out))
            }
        }
        d.deserialize_map(V)
    }
}

/// Typed parse of a `.mhw` (a few MB of small arrays: no `Value` per entry).
pub fn parse_weights(bytes: &[u8], file: &str) -> Result<WeightsFile, MhskelError> {
    serde_json::from_slice(bytes).map_err(|e| MhskelError::Syntax {
        file: file.to_string(),
        line: e.line(),
        column: e.column(),
        message: format!("{e}; a .mhw file is {{\"weights\": {{bone: [[vertex, weight], ...]}}}}"),
    })
}

/// What a weights file is joined to besides the skeleton.
struct WeightsOn<'a> {
    mesh_vertices: Option<usize>,
    remap: Option<&'a [Option<u32>]>,
    budget: &'a Budget,
}

/// Join a weights file to the skeleton: a skin. The weights are the file's (duplicates add, as
/// MakeHuman merges them); vertices of the mesh that no weight names are given to the first root
/// bone with weight 1, as MakeHuman does.
fn weights_into(
    wf: WeightsFile,
    file: &str,
    sk: &Skeleton,
    on: WeightsOn<'_>,
    doc: &Document,
    diag: &mut Diagnostics,
) -> Result<Skin, MhskelError> {
    let Some(groups) = wf.groups else {
        return Err(jerr(file, "$.weights", "a .mhw file needs a \"weights\" object of bone name → [[vertex, weight], ...]"));
    };
    let names = sk.name_map();
    let mut joints: Vec<BoneId> = Vec::new();
    let mut slot_of: HashMap<BoneId, u32> = HashMap::new();
    let mut triples: Vec<(usize, u32, f64)> = Vec::new();
    let mut max_v = 0usize;
    let mut unmatched = Vec::new();
    for (g, pairs) in groups {
        if let Some(k) = pairs.iter().position(|p| !p.1.is_finite()) {
            return Err(jerr(file, format!("$.weights.{g}[{k}]"), "weight must be a finite number"));
        }
        let limit = on.mesh_vertices.map_or(MAX_VERTICES, |n| n as u64);
        if let Some(k) = pairs.iter().position(|p| p.0 >= limit) {
            let msg = match on.mesh_vertices {
                Some(n) => format!("vertex {} is past the mesh's {n} vertices; use the base mesh the weights were made for", pairs[k].0),
                None => format!("vertex index {} is past skelport's limit of {MAX_VERTICES} vertices; fix the index", pairs[k].0),
            };
            return Err(jerr(file, format!("$.weights.{g}[{k}]"), msg));
        }
        max_v = max_v.max(pairs.iter().map(|p| p.0 as usize + 1).max().unwrap_or(0));
        let Some(&bone) = names.get(g.as_str()) else {
            if !pairs.is_empty() {
                unmatched.push(g);
            }
            continue;
        };
        let slot = *slot_of.entry(bone).or_insert_with(|| {
            joints.push(bone);
            (joints.len() - 1) as u32
        });
        triples.extend(pairs.into_iter().map(|(v, w)| (v as usize, slot, w)));
    }
    if !unmatched.is_empty() {
        diag.warn(
            "mhskel.unmatched-weights",
            format!("{file}: {} weight group(s) name no bone of the rig and are ignored: {}", unmatched.len(), unmatched.join(", ")),
        );
    }
    let base_count = on.mesh_vertices.unwrap_or(max_v);
    on.budget.charge_items::<[u64; 4]>(base_count, file, "$.weights")?;
    // MakeHuman gives every vertex no weight names to the root bone.
    let mut weighted = vec![false; base_count];
    for t in &triples {
        if t.2 != 0.0 {
            weighted[t.0] = true;
        }
    }
    let unweighted: Vec<usize> = if on.mesh_vertices.is_some() { (0..base_count).filter(|&v| !weighted[v]).collect() } else { Vec::new() };
    if let (false, Some(root)) = (unweighted.is_empty(), sk.bones.iter().position(|b| b.parent.is_none())) {
        let root = BoneId::new(root as u32);
        let slot = *slot_of.entry(root).or_insert_with(|| {
            joints.push(root);
            (joints.len() - 1) as u32
        });
        let kept = unweighted.iter().filter(|&&v| on.remap.is_none_or(|r| r[v].is_some())).count();
        if kept > 0 {
            diag.info(
                "mhskel.root-weights",
                format!(
                    "{file}: {kept} vertices no weight names are bound to the root bone \"{}\" with weight 1, as MakeHuman binds them",
                    sk.bones[root.index()].name
                ),
            );
        }
        triples.extend(unweighted.into_iter().map(|v| (v, slot, 1.0)));
    }
    let count = match doc.meshes.first() {
        Some(m) => m.positions.len(),
        None => base_count,
    };
    let map = |v: usize| -> Option<u32> {
        match on.remap {
            Some(r) => r.get(v).copied().flatten(),
            None => Some(v as u32),
        }
    };
    let influences =
        Influences::from_triples(count, triples.into_iter().filter(|t| t.2 != 0.0).filter_map(|(v, s, w)| map(v).map(|v| (v, s, w))));
    let world = sk.world_matrices();
    let inverse_bind: Vec<DMat4> = joints.iter().map(|j| world[j.index()].inverse()).collect();
    let mut skin = Skin {
        name: "weights".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: None,
        joints,
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences,
        ext: Default::default(),
    };
    skin.ext.set_raw(NAMESPACE, Value::Object(wf.header));
    Ok(skin)
}

/// Joint names a rig already uses (joints and planes), for naming new ones.
pub(crate) fn taken_names(rig_joints: &Map<String, Value>, planes: &Map<String, Value>) -> HashSet<String> {
    rig_joints.keys().chain(planes.keys()).cloned().collect()
}
