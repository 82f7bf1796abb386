//! MPFB rig (+ weights, + base mesh) → IR.

use crate::{MpfbError, NAMESPACE};
use serde_json::{Map, Value};
use skelport_ir::proc::{bone_from_head_tail, vec_roll_to_mat3};
use skelport_ir::Place;
use skelport_ir::{
    Anchor, AnchorStrategy, Attribute, Bone, BoneAnchors, BoneId, Budget, DMat4, DQuat, DVec3, Diagnostics, Document, Faces, FaultKind,
    Frame, InMemoryFile, Influences, Mesh, ReadOptions, Skeleton, Skin, Transform, UvSet, VertexGroup,
};
use std::borrow::Cow;
use std::collections::HashMap;
use std::path::Path;

/// The rig's bone map in file order, and the header (every top-level key but `bones`).
pub struct RawRig {
    pub version: u64,
    /// "headerless", "v100" or "v110": the shape the file came in.
    pub shape: &'static str,
    pub header: Map<String, Value>,
    /// Bones, upgraded to v110 form, in file order.
    pub bones: Vec<(String, Map<String, Value>)>,
}

fn jerr(file: &str, path: impl Into<String>, message: impl Into<String>) -> MpfbError {
    MpfbError::Json { file: file.into(), path: path.into(), message: message.into(), kind: FaultKind::Value }
}

/// A JSON parse error's kind: a well-formed value of the wrong shape is a value to fix, not
/// damaged text.
fn json_kind(e: &serde_json::Error) -> FaultKind {
    if e.is_data() {
        FaultKind::Value
    } else {
        FaultKind::Syntax
    }
}

/// Parse and upgrade a rig file without placing anything. Its value tree is charged to
/// `budget` before it is built.
pub fn parse_rig(bytes: &[u8], file: &str, budget: &Budget) -> Result<RawRig, MpfbError> {
    budget.charge_json(bytes, file, "$ (the rig's value tree)")?;
    let v: Value = serde_json::from_slice(bytes).map_err(|e| MpfbError::Syntax {
        file: file.into(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
        kind: json_kind(&e),
    })?;
    let Value::Object(mut top) = v else { return Err(jerr(file, "$", "an MPFB rig must be a JSON object")) };
    // The bones are taken out of the top object, not copied with it (a copy doubled the memory
    // of a rig padded with an unknown key).
    let (mut header, bones_v, shape) = match top.get("bones") {
        Some(Value::Object(_)) => {
            let Some(Value::Object(b)) = top.shift_remove("bones") else { unreachable!("checked above") };
            let version = top.get("version").and_then(Value::as_u64).unwrap_or(100);
            (top, b, if version >= 110 { "v110" } else { "v100" })
        }
        Some(_) => return Err(jerr(file, "$.bones", "must be an object mapping bone names to bones")),
        None => (Map::new(), top, "headerless"),
    };
    let version = header.get("version").and_then(Value::as_u64).unwrap_or(100);
    if version > 110 {
        return Err(jerr(
            file,
            "$.version",
            format!("rig version {version} is newer than this skelport reads (100 and 110); upgrade skelport"),
        ));
    }
    if bones_v.is_empty() {
        return Err(jerr(file, "$", "no bones: not an MPFB rig"));
    }
    let has_rigify_ui = header.contains_key("rigify_ui");
    let mut bones = Vec::with_capacity(bones_v.len());
    let mut collections: Vec<String> = header
        .get("collections")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    for (name, b) in bones_v {
        let path = format!("$.bones.{name}");
        let Value::Object(mut b) = b else { return Err(jerr(file, &path, "a bone must be an object")) };
        for end in ["head", "tail"] {
            match b.get(end) {
                Some(Value::Object(_)) => {}
                Some(Value::String(_)) => {
                    return Err(jerr(
                        file,
                        format!("{path}.{end}"),
                        "a joint name instead of a strategy object: this looks like a MakeHuman 1.x .mhskel skeleton, not an MPFB rig",
                    ))
                }
                _ => {
                    return Err(jerr(file, format!("{path}.{end}"), "missing or not an object; every bone needs head and tail strategies"))
                }
            }
        }
        // v100 → v110: `layers` (32 booleans) become collections, as MPFB upgrades them.
        if let Some(Value::Array(layers)) = b.remove("layers") {
            let mut colls = Vec::new();
            for (i, on) in layers.iter().enumerate() {
                if on.as_bool() == Some(true) {
                    let cname = if i == 0 && !has_rigify_ui { "Bones".to_string() } else { format!("Layer {}", i + 1) };
                    if !collections.contains(&cname) {
                        collections.push(cname.clone());
                    }
                    colls.push(Value::String(cname));
                }
            }
            b.insert("collections".into(), Value::Array(colls));
        }
        if let Some(Value::Object(rig)) = b.get_mut("rigify") {
            if let Some(Value::Object(params)) = rig.get_mut("rigify_parameters") {
                let keys: Vec<String> = params.keys().filter(|k| k.ends_with("_layers")).cloned().collect();
                for k in keys {
                    if let Some(Value::Array(layers)) = params.remove(&k) {
                        let refs: Vec<Value> = layers
                            .iter()
                            .enumerate()
                            .filter(|(_, on)| on.as_bool() == Some(true))
                            .map(|(i, _)| Value::String(format!("Layer {}", i + 1)))
                            .collect();
                        params.insert(k.replace("_layers", "_coll_refs"), Value::Array(refs));
                    }
                }
            }
        }
        bones.push((name, b));
    }
    if shape != "v110" {
        header.insert("version".into(), 110.into());
        header.entry("is_subrig").or_insert(Value::Bool(false));
        if !collections.is_empty() {
            header.insert("collections".into(), Value::Array(collections.into_iter().map(Value::String).collect()));
        }
    }
    Ok(RawRig { version, shape, header, bones })
}

fn vec3(v: Option<&Value>) -> Option<DVec3> {
    let a = v?.as_array()?;
    if a.len() != 3 {
        return None;
    }
    Some(DVec3::new(a[0].as_f64()?, a[1].as_f64()?, a[2].as_f64()?))
}

fn indices(v: Option<&Value>) -> Vec<u32> {
    v.and_then(Value::as_array).map(|a| a.iter().filter_map(|x| x.as_u64()).map(|x| x as u32).collect()).unwrap_or_default()
}

/// The base mesh in Blender axes and metres, with its face groups.
pub struct BaseMesh {
    pub obj: skelport_obj::ObjMesh,
    /// Positions in Blender axes × scale.
    pub positions: Vec<DVec3>,
    pub groups: HashMap<String, Vec<u32>>,
}

/// A companion file (the mesh or the weights), given by path or in memory.
#[derive(Clone, Copy)]
pub(crate) enum Companion<'a> {
    Path(&'a Path),
    Memory(&'a InMemoryFile),
}

impl<'a> Companion<'a> {
    /// The one given: in memory when both are.
    pub(crate) fn of(path: Option<&'a Path>, data: Option<&'a InMemoryFile>) -> Option<Self> {
        data.map(Companion::Memory).or(path.map(Companion::Path))
    }
    /// The name messages use: the path as given, or the in-memory file's name.
    pub(crate) fn name(&self) -> String {
        match self {
            Companion::Path(p) => p.display().to_string(),
            Companion::Memory(m) => m.name.clone(),
        }
    }
    /// Its bytes (read now when given by path); `what` names it in the error ("mesh").
    fn bytes(&self, what: &str) -> Result<Cow<'a, [u8]>, MpfbError> {
        match self {
            // Through the checked reader: a regular file within the size limit, a FIFO refused,
            // not waited on.
            Companion::Path(p) => skelport_ir::files::read_user_file(p, None)
                .map(Cow::Owned)
                .map_err(|e| MpfbError::File { file: self.name(), message: format!("cannot read the {what}: {e}") }),
            Companion::Memory(m) => Ok(Cow::Borrowed(&m.bytes)),
        }
    }
}

/// Load an OBJ as MPFB sees it: OBJ (X, Y, Z) → Blender (X, −Z, Y) × `scale`.
pub fn load_base_mesh(path: &Path, scale: f64) -> Result<BaseMesh, MpfbError> {
    base_mesh(Companion::Path(path), scale, None)
}

/// [`load_base_mesh`] of a mesh given by path or in memory, charged to `budget` (which the mesh
/// grows, being input too), or without one to a budget of its own size.
pub(crate) fn base_mesh(mesh: Companion<'_>, scale: f64, budget: Option<&Budget>) -> Result<BaseMesh, MpfbError> {
    let file = mesh.name();
    let bytes = mesh.bytes("mesh")?;
    let own;
    let budget = match budget {
        Some(b) => {
            b.add_input(Path::new(&file), bytes.len() as u64);
            b
        }
        None => {
            own = Budget::for_input(bytes.len() as u64);
            &own
        }
    };
    let obj = skelport_obj::parse_budgeted(&bytes, &file, budget)?;
    let positions = obj.positions.iter().map(|p| DVec3::new(p.x, -p.z, p.y) * scale).collect();
    let groups = obj.vertex_groups().into_iter().map(|g| (g.name, g.vertices)).collect();
    Ok(BaseMesh { obj, positions, groups })
}

/// Vertices in MakeHuman's base mesh (hm08); rigs and weights number vertices as it does.
pub const BASE_VERTEX_COUNT: usize = 19158;

/// The run-local namespace (never written, never read from a file: [`skelport_ir::RUN_LOCAL`]) in
/// which a bone read from a rig placed on a base mesh it was not given
/// ([`ReadOptions::mesh_for_placement`]) records where the reader placed its ends (Blender axes,
/// metres: `{"head": [x, y, z], "tail": [x, y, z]}`), so that the MPFB writer keeps the file's
/// default_position for an end still there. Run-local, so no other format's output carries it:
/// the same rig converted to glTF is the same file whether the base mesh was found or given.
pub(crate) const PLACED: &str = "~mpfb.placed";

impl BaseMesh {
    /// How far MPFB lifts the character so its feet stand on the ground: minus the lowest z of
    /// the `body` group (0 when the mesh has no `body` group).
    pub fn feet_lift(&self) -> f64 {
        self.groups
            .get("body")
            .and_then(|g| g.iter().filter_map(|&v| self.positions.get(v as usize)).map(|p| p.z).reduce(f64::min))
            .map(|z| -z)
            .unwrap_or(0.0)
    }
}

fn mean(mesh: &BaseMesh, idx: &[u32]) -> Option<DVec3> {
    if idx.is_empty() {
        return None;
    }
    let mut s = DVec3::ZERO;
    for &i in idx {
        s += *mesh.positions.get(i as usize)?;
    }
    Some(s / idx.len() as f64)
}

/// Evaluate one strategy; `None` when it cannot be evaluated (MPFB then uses default_position).
fn evaluate(st: &Map<String, Value>, mesh: &BaseMesh) -> Option<DVec3> {
    match st.get("strategy")?.as_str()? {
        // Only groups whose name contains "joint" are cubes, as MPFB looks them up.
        "CUBE" => {
            let g = st.get("cube_name")?.as_str()?;
            if !g.contains("joint") {
                return None;
            }
            mean(mesh, mesh.groups.get(g)?)
        }
        "VERTEX" => mesh.positions.get(st.get("vertex_index")?.as_u64()? as usize).copied(),
        "MEAN" => mean(mesh, &indices(st.get("vertex_indices"))),
        "XYZ" => {
            let i = indices(st.get("vertex_indices"));
            if i.len() < 3 {
                return None;
            }
            let p = |k: usize| mesh.positions.get(i[k] as usize).copied();
            Some(DVec3::new(p(0)?.x, p(1)?.y, p(2)?.z))
        }
        _ => None,
    }
}

fn anchor_of(st: &Map<String, Value>) -> Anchor {
    let strategy = match st.get("strategy").and_then(Value::as_str) {
        Some("CUBE") => AnchorStrategy::Cube { group: st.get("cube_name").and_then(Value::as_str).unwrap_or("").into() },
        Some("VERTEX") => AnchorStrategy::Vertex { index: st.get("vertex_index").and_then(Value::as_u64).unwrap_or(0) as u32 },
        Some("MEAN") => AnchorStrategy::Mean { indices: indices(st.get("vertex_indices")) },
        Some("XYZ") => AnchorStrategy::Xyz { indices: indices(st.get("vertex_indices")) },
        _ => AnchorStrategy::Default,
    };
    Anchor { strategy, offset: vec3(st.get("offset")).unwrap_or(DVec3::ZERO), default_position: vec3(st.get("default_position")) }
}

/// Roll that aligns the bone's local Z (or X) with a world axis, as MPFB's roll strategies do.
pub(crate) fn roll_for_strategy(strategy: &str, dir: DVec3) -> Option<f64> {
    let base = vec_roll_to_mat3(dir, 0.0);
    let (x0, z0) = (base.x_axis, base.z_axis);
    match strategy {
        "ALIGN_Z_WORLD_Z" | "ALIGN_Z_REFERENCE_Z" => Some((x0.dot(DVec3::Z)).atan2(z0.dot(DVec3::Z))),
        "ALIGN_X_WORLD_X" => Some((-z0.dot(DVec3::X)).atan2(x0.dot(DVec3::X))),
        _ => None,
    }
}

/// Order bone indices parents first, keeping file order otherwise.
fn parents_first(bones: &[(String, Map<String, Value>)], file: &str) -> Result<Vec<usize>, MpfbError> {
    let index: HashMap<&str, usize> = bones.iter().enumerate().map(|(i, (n, _))| (n.as_str(), i)).collect();
    let parent: Vec<Option<usize>> = bones
        .iter()
        .map(|(_, b)| b.get("parent").and_then(Value::as_str).filter(|p| !p.is_empty()).and_then(|p| index.get(p).copied()))
        .collect();
    skelport_ir::proc::parents_first(&parent).map_err(|bad| MpfbError::Json {
        file: file.into(),
        path: format!("$.bones.{}.parent", bones[bad].0),
        message: "parent links form a cycle; point one bone at another parent".into(),
        kind: FaultKind::Structure,
    })
}

/// Read a rig (with `opts.mesh` and `opts.weights`) into the IR.
pub fn read(bytes: &[u8], file: &str, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, MpfbError> {
    // The weights file (a few MB of JSON) depends on neither the rig nor the mesh until it is
    // applied: read and parsed on a second core while the rig and the mesh are (no thread when
    // there is none). Errors keep their order (rig, mesh, then weights).
    let budget = opts.budget.clone().unwrap_or_else(|| Budget::for_input(bytes.len() as u64));
    let rig_and_mesh = || -> Result<_, MpfbError> {
        let rig = parse_rig(bytes, file, &budget)?;
        let scale = rig.header.get("scale_factor").and_then(Value::as_f64).filter(|s| *s > 0.0).unwrap_or(0.1);
        let mesh = Companion::of(opts.mesh.as_deref(), opts.mesh_data.as_ref())
            .map(|c| Ok::<_, MpfbError>((c.name(), base_mesh(c, scale, Some(&budget))?)))
            .transpose()?;
        Ok((rig, mesh))
    };
    let (rig_and_mesh, weights) = match Companion::of(opts.weights.as_deref(), opts.weights_data.as_ref()) {
        Some(wp) => {
            let (r, w) = rayon::join(rig_and_mesh, || load_weights(wp, &budget));
            (r, Some(w))
        }
        None => (rig_and_mesh(), None),
    };
    let (rig, mesh) = rig_and_mesh?;
    let mesh = match mesh {
        Some((p, m)) => {
            if m.positions.len() != BASE_VERTEX_COUNT {
                diag.warn(
                    "mpfb.mesh-topology",
                    format!(
                        "{p}: the mesh has {} vertices but MakeHuman's base mesh has {BASE_VERTEX_COUNT}: the rig's vertex numbers may point at the wrong places; use base.obj or a body exported with the base topology",
                        m.positions.len()
                    ),
                );
            }
            let without_uv = m.obj.corners_without_uv();
            if without_uv > 0 {
                diag.warn(
                    "mpfb.partial-uvs",
                    format!("{p}: {without_uv} face corners name no texture coordinate (vt) where others do; they get UV (0, 0)"),
                );
            }
            let without_normal = m.obj.corners_without_normal();
            if without_normal > 0 {
                diag.loss(
                    "mpfb.partial-normals",
                    format!(
                        "{p}: {without_normal} face corners name no normal (vn) where others do; the mesh's normals are dropped (writers that need normals compute smooth ones)"
                    ),
                );
            }
            Some(m)
        }
        None => {
            diag.info("mpfb.no-mesh", "no --mesh given: every bone is placed at its default_position");
            None
        }
    };
    // MPFB scales offsets by the current mesh scale over the rig's own scale factor; skelport
    // places the mesh at the rig's scale factor, so that ratio is 1.
    let offset_scale = 1.0;
    let order = parents_first(&rig.bones, file)?;
    let index: HashMap<&str, usize> = rig.bones.iter().enumerate().map(|(i, (n, _))| (n.as_str(), i)).collect();
    let n = rig.bones.len();
    // Feet on the ground, as MPFB does: lowest vertex of the `body` group at z = 0. Only ends
    // placed on the mesh are lifted: a `default_position` is where MPFB puts the end already.
    let lift = match (&mesh, opts.keep_origin) {
        (Some(m), false) => m.feet_lift(),
        _ => 0.0,
    };
    let lift_v = DVec3::new(0.0, 0.0, lift);
    let mut heads = vec![DVec3::ZERO; n];
    let mut tails = vec![DVec3::ZERO; n];
    for &i in &order {
        let (name, b) = &rig.bones[i];
        for (end, out) in [("head", &mut heads[i]), ("tail", &mut tails[i])] {
            let st = b.get(end).and_then(Value::as_object).ok_or_else(|| jerr(file, format!("$.bones.{name}.{end}"), "missing"))?;
            let placed = mesh.as_ref().and_then(|m| evaluate(st, m));
            *out = match placed {
                Some(p) => p + vec3(st.get("offset")).unwrap_or(DVec3::ZERO) * offset_scale + lift_v,
                None => {
                    // DEFAULT (or no strategy) means default_position: nothing to warn about.
                    let chosen = st.get("strategy").and_then(Value::as_str).is_some_and(|s| s != "DEFAULT");
                    if mesh.is_some() && chosen {
                        diag.warn_at(
                            "mpfb.default-position",
                            Place::bone(name),
                            format!(
                                "{file}: bone \"{name}\" {end}: strategy {} cannot be evaluated on this mesh; using default_position",
                                st.get("strategy").unwrap_or(&Value::Null)
                            ),
                        );
                    }
                    vec3(st.get("default_position"))
                        .ok_or_else(|| jerr(file, format!("$.bones.{name}.{end}.default_position"), "needs three numbers"))?
                }
            };
        }
    }
    // use_connect snaps a child's head to its parent's tail.
    for &i in &order {
        let b = &rig.bones[i].1;
        if b.get("use_connect").and_then(Value::as_bool) == Some(true) {
            if let Some(&p) = b.get("parent").and_then(Value::as_str).and_then(|p| index.get(p)) {
                heads[i] = tails[p];
            }
        }
    }

    let mut sk = Skeleton::new(rig.header.get("name").and_then(Value::as_str).unwrap_or("rig"));
    let mut id_of = vec![BoneId::new(0); n];
    let mut world_rot = vec![DQuat::IDENTITY; n];
    for &i in &order {
        let (name, b) = &rig.bones[i];
        let (h, t) = (heads[i], tails[i]);
        let dir = (t - h).normalize_or_zero();
        let mut roll = b.get("roll").and_then(Value::as_f64).unwrap_or(0.0);
        if let Some(rs) = b.get("roll_strategy").and_then(Value::as_str) {
            match roll_for_strategy(rs, dir) {
                Some(r) => roll = r,
                None => diag.warn_at(
                    "mpfb.roll-strategy",
                    Place::bone(name),
                    format!("bone \"{name}\": unknown roll_strategy \"{rs}\"; the file's roll is used"),
                ),
            }
        }
        let (q, len) = bone_from_head_tail(h, t, roll);
        let parent = b.get("parent").and_then(Value::as_str).filter(|p| !p.is_empty()).and_then(|p| index.get(p).copied());
        if parent.is_none() && b.get("parent").and_then(Value::as_str).is_some_and(|p| !p.is_empty()) {
            let p = b.get("parent").and_then(Value::as_str).unwrap_or_default();
            diag.warn_at(
                "mpfb.parent",
                Place::path(format!("$.bones.{name}.parent")),
                // The place first, as messages about one element begin (`Diagnostic::place`).
                format!("$.bones.{name}.parent: bone \"{name}\": parent \"{p}\" does not exist; made a root"),
            );
        }
        let rest = match parent {
            Some(p) => {
                let pq = world_rot[p];
                let ph = heads[p];
                Transform::from_rt((pq.inverse() * q).normalize(), pq.inverse() * (h - ph))
            }
            None => Transform::from_rt(q, h),
        };
        let mut bone = Bone::new(name.clone(), parent.map(|p| id_of[p]), rest);
        bone.length = Some(len);
        bone.roll = Some(roll);
        bone.anchors = Some(BoneAnchors {
            head: anchor_of(b["head"].as_object().unwrap_or(&Map::new())),
            tail: anchor_of(b["tail"].as_object().unwrap_or(&Map::new())),
        });
        if opts.mesh_for_placement && mesh.is_some() {
            // Placed on a mesh nobody gave (the base mesh skelport found, with the weights beside
            // the rig or without): where each end was placed, so that the MPFB writer keeps the
            // file's default_position for an end still there (an MPFB → MPFB conversion with
            // no edit changes nothing). A body the user gives is where the rig is meant to stand.
            bone.ext.set_raw(PLACED, serde_json::json!({"head": h.to_array(), "tail": t.to_array()}));
        }
        bone.ext.set_raw(NAMESPACE, Value::Object(b.clone()));
        world_rot[i] = q;
        id_of[i] = sk.push(bone);
    }
    // Mirror links by MPFB's .L/.R (and _l/_r) naming.
    let names = sk.name_map().into_iter().map(|(k, v)| (k.to_string(), v)).collect::<HashMap<String, BoneId>>();
    for i in 0..sk.bones.len() {
        let nm = &sk.bones[i].name;
        let other = [(".L", ".R"), (".R", ".L"), ("_l", "_r"), ("_r", "_l"), ("Left", "Right"), ("Right", "Left")]
            .iter()
            .find_map(|(a, b)| nm.strip_suffix(a).map(|s| format!("{s}{b}")).or_else(|| nm.contains(a).then(|| nm.replacen(a, b, 1))));
        sk.bones[i].mirror = other.and_then(|o| names.get(&o).copied()).filter(|m| m.index() != i);
    }
    let mut header = rig.header.clone();
    header.insert("skelport_source_shape".into(), rig.shape.into());
    // How the bones stand relative to the mesh's own origin: the writer picks strategies for
    // bones added later on the mesh lifted the same way.
    if mesh.is_some() {
        header.insert("skelport_lift".into(), lift.into());
    }
    sk.ext.set_raw(NAMESPACE, Value::Object(header));

    let mut doc = Document::new(Frame::BLENDER);
    doc.source_format = Some("mpfb".into());
    // The mesh, with helper geometry trimmed unless asked to keep it.
    let mut remap: Option<Vec<Option<u32>>> = None;
    if let Some(m) = mesh.as_ref().filter(|_| !opts.mesh_for_placement || weights.is_some()) {
        let (ir, map) = build_mesh(m, lift_v, opts.keep_helpers);
        remap = map;
        doc.meshes.push(ir);
    }
    if let Some(weights) = weights {
        let (wfile, wf) = weights?;
        let vertices = mesh.as_ref().map(|m| m.positions.len());
        let on = WeightsOn { mesh_vertices: vertices, remap: remap.as_deref(), budget: &budget };
        let skin = read_weights_into(wf, &wfile, &sk, on, &mut doc, diag)?;
        if let Some(mut s) = skin {
            s.mesh = (!doc.meshes.is_empty()).then_some(skelport_ir::MeshId::new(0));
            doc.skins.push(s);
        }
    }
    doc.skeletons.push(sk);
    Ok(doc)
}

/// The IR mesh: Blender axes, lifted, helper faces dropped (with the old → new vertex map). The
/// OBJ's texture coordinates and normals (Blender axes too) come along, each corner of a kept
/// face keeping its own.
fn build_mesh(m: &BaseMesh, lift: DVec3, keep_helpers: bool) -> (Mesh, Option<Vec<Option<u32>>>) {
    let is_helper = |g: &str| g.starts_with("helper-") || g.starts_with("joint-");
    let positions: Vec<DVec3> = m.positions.iter().map(|p| *p + lift).collect();
    let uv_set = m.obj.uv_set();
    // OBJ (X, Y, Z) → Blender (X, −Z, Y), as the positions (a rotation: no rescaling).
    let normals = m.obj.normal_attribute().map(|mut n| {
        for v in n.values_mut() {
            *v = DVec3::new(v.x, -v.z, v.y);
        }
        n
    });
    // The groups were gathered once on load; here they are put back in file order.
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
        // The whole base mesh, in its own numbering (writers need no runs to map it back).
        mesh.ext.set_raw(NAMESPACE, serde_json::json!({ "base_vertex_count": m.positions.len() }));
        return (mesh, None);
    }
    let helper_group: Vec<bool> = m.obj.group_names.iter().map(|g| is_helper(g)).collect();
    let face_kept: Vec<bool> = m.obj.face_groups.iter().map(|g| !g.is_some_and(|g| helper_group[g as usize])).collect();
    let mut keep = vec![false; positions.len()];
    let mut faces = Faces::default();
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
    for (f, _) in m.obj.faces.iter().zip(&face_kept).filter(|(_, k)| **k) {
        faces.counts.push(f.len() as u32);
        faces.indices.extend(f.iter().filter_map(|&v| map[v as usize]));
    }
    let uv_set = uv_set.map(|s| UvSet { name: s.name, uvs: trim_attribute(s.uvs, &m.obj.faces.counts, &face_kept, &keep) });
    let normals = normals.map(|n| trim_attribute(n, &m.obj.faces.counts, &face_kept, &keep));
    let groups = groups
        .into_iter()
        .filter(|g| !is_helper(&g.name))
        .map(|g| VertexGroup { name: g.name, vertices: g.vertices.iter().filter_map(|&v| map[v as usize]).collect(), weights: None })
        .collect();
    let mut mesh =
        Mesh { name: "base".into(), positions: kept, normals, uvs: uv_set.into_iter().collect(), faces, groups, ext: Default::default() };
    // Kept base-mesh vertices as runs [first, count], so weights can be written in base numbering.
    mesh.ext.set_raw(NAMESPACE, serde_json::json!({ "base_vertex_count": m.positions.len(), "kept_runs": runs }));
    (mesh, Some(map))
}

/// An attribute of the whole OBJ cut to what is kept: per corner, the corners of the kept faces
/// (`counts` gives each face's corners), in order; per vertex, the kept vertices' values.
fn trim_attribute<T: Copy>(attr: Attribute<T>, counts: &[u32], face_kept: &[bool], keep: &[bool]) -> Attribute<T> {
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

/// Largest vertex index + 1 a weights file may use (docs/limits.md): 16,777,216 vertices, far
/// beyond MakeHuman's 19,158, so a corrupt index cannot size the skin.
pub const MAX_WEIGHT_VERTICES: usize = 1 << 24;

/// Join the bytes of a weights file to the first skeleton of a document read without a mesh, as
/// `--weights` does without `--mesh` (the skin is appended). Lets the weights reader be fuzzed and
/// tested without files.
pub fn read_weights(bytes: &[u8], file: &str, doc: &mut Document, diag: &mut Diagnostics) -> Result<(), MpfbError> {
    let Some(sk) = doc.skeletons.first().cloned() else {
        return Err(MpfbError::File { file: file.into(), message: "no skeleton to join the weights to; read a rig first".into() });
    };
    let budget = Budget::for_input(bytes.len() as u64);
    let on = WeightsOn { mesh_vertices: None, remap: None, budget: &budget };
    if let Some(mut s) = read_weights_into(parse_weights(bytes, file, &budget)?, file, &sk, on, doc, diag)? {
        s.mesh = None;
        doc.skins.push(s);
    }
    Ok(())
}

/// Read and parse a weights file: its name for messages and its typed contents.
fn load_weights(weights: Companion<'_>, budget: &Budget) -> Result<(String, WeightsFile), MpfbError> {
    let file = weights.name();
    let bytes = weights.bytes("weights")?;
    // The weights file is input too: it grows the budget it is charged to.
    budget.add_input(Path::new(&file), bytes.len() as u64);
    let wf = parse_weights(&bytes, &file, budget)?;
    Ok((file, wf))
}

/// Bytes the typed weights model may take per byte of its text, charged before the parse: a
/// group is at least 6 bytes of text (`"":[],`) and takes a 48-byte (name, entries) slot, doubled
/// for the vector's spare capacity (16 per byte); an entry is at least 6 bytes (`[0,0],`) and
/// takes 16 bytes, doubled (under 6 per byte); names are copied (1 per byte). A bound that needs
/// no pass over the text: the scan [`Budget::charge_json`] makes was a sixth of a conversion's
/// instructions. The header's values, parsed as JSON trees, are charged by that scan each.
const WEIGHTS_BYTES_PER_TEXT_BYTE: u64 = 17;

/// Typed parse straight into (vertex, weight) pairs: a weights file is ~3 MB of small arrays,
/// and building a serde_json::Value for each entry costs most of the read. The scanner of the
/// shape MPFB writes goes first; anything outside it takes serde_json's typed parse, which
/// gives the same groups or the placed error.
fn parse_weights(bytes: &[u8], file: &str, budget: &Budget) -> Result<WeightsFile, MpfbError> {
    budget.charge((bytes.len() as u64).saturating_mul(WEIGHTS_BYTES_PER_TEXT_BYTE), file, "$ (the weights)")?;
    // The line the parsed text starts on in the file, and the bytes before it on that line.
    let syntax = |e: &serde_json::Error, (line, column): (usize, usize)| {
        let (line, column) = match e.line() {
            0 => (0, 0),
            1 => (line, column + e.column()),
            l => (line + l - 1, e.column()),
        };
        let text = e.to_string();
        let what = if line > 0 { text.rsplit_once(" at line ").map_or(text.as_str(), |(m, _)| m) } else { text.as_str() };
        let at = if line > 0 { format!(" at line {line} column {column}") } else { String::new() };
        MpfbError::Syntax {
            file: file.to_string(),
            line,
            column,
            message: format!("{what}{at}; a weights file is {{\"weights\": {{group: [[vertex, weight], ...]}}}}"),
            kind: json_kind(e),
        }
    };
    let raw = match crate::wscan::scan(bytes) {
        Some(raw) => raw,
        None => serde_json::from_slice(bytes).map_err(|e| syntax(&e, (1, 0)))?,
    };
    let mut header = Map::new();
    for (k, v) in raw.header {
        let text = v.get();
        budget.charge_json(text.as_bytes(), file, &format!("$.{k} (its value tree)"))?;
        header.insert(
            k,
            serde_json::from_str(text).map_err(|e| {
                // Where the value starts in the file (found only for a fault: a pass over what
                // precedes each of many values would be quadratic), so the fault is placed in it.
                let at = (text.as_ptr() as usize).saturating_sub(bytes.as_ptr() as usize).min(bytes.len());
                let before = &bytes[..at];
                let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
                syntax(&e, (line, before.iter().rev().take_while(|&&b| b != b'\n').count()))
            })?,
        );
    }
    Ok(WeightsFile { header, groups: raw.groups })
}

/// Join a weights file to the skeleton: a skin (and `mhmask-*` groups on the mesh).
/// What a weights file is joined to besides the skeleton: the mesh's vertex count and its
/// renumbering (helper geometry left out), when there is a mesh, and the conversion's budget.
struct WeightsOn<'a> {
    mesh_vertices: Option<usize>,
    remap: Option<&'a [Option<u32>]>,
    budget: &'a Budget,
}

fn read_weights_into(
    wf: WeightsFile,
    file: &str,
    sk: &Skeleton,
    on: WeightsOn<'_>,
    doc: &mut Document,
    diag: &mut Diagnostics,
) -> Result<Option<Skin>, MpfbError> {
    let WeightsOn { mesh_vertices, remap, budget } = on;
    let file = file.to_string();
    let Some(groups) = wf.groups else {
        return Err(jerr(&file, "$.weights", "a weights file needs a \"weights\" object of group name → [[vertex, weight], ...]"));
    };
    let names = sk.name_map();
    let mut joints: Vec<BoneId> = Vec::new();
    let mut slot_of: HashMap<BoneId, u32> = HashMap::new();
    let mut triples = Vec::new();
    let mut max_v = 0usize;
    let mut unmatched = Vec::new();
    // Weight entries of groups that match a bone, and of groups that match none.
    let (mut matched_entries, mut unmatched_entries) = (0usize, 0usize);
    let mut masks = Vec::new();
    // The output vertex of a weights file's vertex: helper geometry left out with the mesh has
    // none.
    let map = |vi: u64| -> Option<u32> {
        match remap {
            Some(r) => r.get(vi as usize).copied().flatten(),
            None => Some(vi as u32),
        }
    };
    // Entries on helper geometry, left out.
    let mut on_helpers = 0usize;
    for (g, pairs) in groups {
        if let Some(k) = pairs.iter().position(|p| !p.1.is_finite()) {
            return Err(jerr(&file, format!("$.weights.{g}[{k}]"), "weight must be a finite number"));
        }
        // Without a mesh the skin is sized by the largest index: cap it before allocating.
        if let Some(k) = pairs.iter().position(|p| p.0 >= MAX_WEIGHT_VERTICES as u64) {
            return Err(jerr(
                &file,
                format!("$.weights.{g}[{k}]"),
                format!("vertex index {} is past skelport's limit of {MAX_WEIGHT_VERTICES} vertices; fix the index", pairs[k].0),
            ));
        }
        max_v = max_v.max(pairs.iter().map(|p| p.0 as usize + 1).max().unwrap_or(0));
        if g.starts_with("mhmask-") {
            masks.push((g.clone(), pairs));
            continue;
        }
        let bone = names.get(g.as_str()).or_else(|| match g.strip_prefix("DEF-") {
            Some(s) => names.get(s),
            None => names.get(format!("DEF-{g}").as_str()),
        });
        let Some(&bone) = bone else {
            if !pairs.is_empty() {
                unmatched.push(g.clone());
                unmatched_entries += pairs.len();
            }
            continue;
        };
        matched_entries += pairs.len();
        let slot = *slot_of.entry(bone).or_insert_with(|| {
            joints.push(bone);
            (joints.len() - 1) as u32
        });
        // Duplicate entries add up, as MPFB's vertex-group ADD does; zero weights carry nothing.
        for (vi, w) in pairs {
            match map(vi) {
                Some(v) => triples.push((v, slot, w)),
                None => on_helpers += 1,
            }
        }
    }
    if !unmatched.is_empty() {
        let listed = unmatched.iter().take(8).cloned().collect::<Vec<_>>().join(", ");
        let more = if unmatched.len() > 8 { format!(" and {} more", unmatched.len() - 8) } else { String::new() };
        let msg = format!("{} weight group(s) match no bone and are ignored: {listed}{more}", unmatched.len());
        // None matched: the skin is empty, which the conversion judges (`skin.empty`).
        if unmatched_entries > matched_entries && matched_entries > 0 {
            // Most of the skin gone: weights made for another rig. `skin.weights-dropped` is one
            // of the losses a conversion refuses unless allowed (skelport's `allow_loss`).
            let share = 100.0 * unmatched_entries as f64 / (unmatched_entries + matched_entries) as f64;
            diag.loss(
                "skin.weights-dropped",
                format!(
                    "{file}: {share:.0} % of the weight entries ({unmatched_entries} of {}) are in groups that match no bone of the rig (weights made for another rig?): {msg}",
                    unmatched_entries + matched_entries
                ),
            );
        } else {
            diag.warn("mpfb.unmatched-weights", format!("{file}: {msg}"));
        }
    }
    if let Some(nv) = mesh_vertices {
        if max_v > nv {
            return Err(MpfbError::File {
                file,
                message: format!("the weights refer to vertex {} but the mesh has {nv} vertices; use the base mesh (or a body with its topology) the weights were made for", max_v - 1),
            });
        }
    }
    let count = match (remap, &doc.meshes.first()) {
        (_, Some(m)) => m.positions.len(),
        _ => max_v,
    };
    // Without a mesh the highest vertex number sets the skin's length: per-vertex arrays here
    // and in every writer, charged before they are made (one entry is far smaller than that).
    budget.charge_items::<[u64; 4]>(count, &file, "$.weights")?;
    if on_helpers > 0 {
        diag.info(
            "mpfb.helper-weights",
            format!("{file}: {on_helpers} weight entries on helper geometry are left out with it (--keep-helpers keeps them)"),
        );
    }
    let influences = Influences::from_triples(count, triples.into_iter().filter(|t| t.2 != 0.0));
    if let Some(m) = doc.meshes.first_mut() {
        for (g, pairs) in masks {
            let mut verts = Vec::new();
            let mut ws = Vec::new();
            for (vi, w) in pairs {
                if let Some(v) = map(vi) {
                    verts.push(v);
                    ws.push(w);
                }
            }
            m.groups.push(VertexGroup { name: g, vertices: verts, weights: Some(ws) });
        }
    }
    let world = sk.world_matrices();
    let inverse_bind: Vec<DMat4> = joints.iter().map(|j| world[j.index()].inverse()).collect();
    let header = wf.header;
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
    skin.ext.set_raw(NAMESPACE, Value::Object(header));
    Ok(Some(skin))
}

/// One weights group: its name and (vertex, weight) entries.
type WeightGroup = crate::wscan::Group;

/// A weights file: the header keys as they are, and the groups in file order.
struct WeightsFile {
    header: Map<String, Value>,
    groups: Option<Vec<WeightGroup>>,
}

/// A weights file as parsed (by the scanner or serde): the header's values still text (each is charged before it is
/// built), the groups typed.
pub(crate) struct RawWeightsFile<'a> {
    pub(crate) header: Vec<(String, &'a serde_json::value::RawValue)>,
    pub(crate) groups: Option<Vec<WeightGroup>>,
}

impl<'de> serde::Deserialize<'de> for RawWeightsFile<'de> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Top;
        impl<'de> serde::de::Visitor<'de> for Top {
            type Value = RawWeightsFile<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object with a \"weights\" object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut m: A) -> Result<RawWeightsFile<'de>, A::Error> {
                let mut out = RawWeightsFile { header: Vec::new(), groups: None };
                let mut at: HashMap<String, usize> = HashMap::new();
                while let Some(k) = m.next_key::<String>()? {
                    if k == "weights" {
                        out.groups = Some(m.next_value::<Groups>()?.0);
                    } else {
                        let v: &'de serde_json::value::RawValue = m.next_value()?;
                        // A repeated key: the last value wins, in the first one's place (as
                        // an order-preserving map keeps it).
                        match at.get(&k) {
                            Some(&i) => out.header[i].1 = v,
                            None => {
                                at.insert(k.clone(), out.header.len());
                                out.header.push((k, v));
                            }
                        }
                    }
                }
                Ok(out)
            }
        }
        d.deserialize_map(Top)
    }
}

/// Group name → [[vertex, weight], ...], in file order.
struct Groups(Vec<WeightGroup>);

impl<'de> serde::Deserialize<'de> for Groups {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Groups;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object of group name → [[vertex index, weight], ...]")
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

#[cfg(test)]
mod tests {
    use super::*;

    const RIG: &str = r#"{"root": {"head": {"strategy": "VERTEX", "vertex_index": 0, "default_position": [0, 0, 0]},
        "tail": {"strategy": "VERTEX", "vertex_index": 1, "default_position": [0, 0, 1]}}}"#;

    fn rig() -> Document {
        read(RIG.as_bytes(), "rig.json", &ReadOptions::default(), &mut Diagnostics::default()).unwrap()
    }

    #[test]
    fn weights_join_from_bytes_and_refuse_indices_past_the_cap() {
        let mut doc = rig();
        read_weights(br#"{"weights": {"root": [[0, 1.0], [3, 0.5]]}}"#, "w.json", &mut doc, &mut Diagnostics::default()).unwrap();
        assert_eq!(doc.skins[0].influences.vertex_count(), 4);
        // A corrupt index would size the skin at 16 GiB: refused, naming the entry and the fix.
        let mut doc = rig();
        let e = read_weights(
            br#"{"weights": {"root": [[0, 1.0], [18446744073709551615, 0.5]]}}"#,
            "w.json",
            &mut doc,
            &mut Diagnostics::default(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.starts_with("w.json: $.weights.root[1]:") && e.contains("limit of 16777216"), "{e}");
        let e =
            read_weights(br#"{"weights": {"root": [[16777216, 0.5]]}}"#, "w.json", &mut rig(), &mut Diagnostics::default()).unwrap_err();
        assert!(e.to_string().contains("vertex index 16777216"), "{e}");
        // Under the cap, but a 40-byte file asking for per-vertex arrays of 16,777,216 vertices
        // (about 512 MiB): the decode budget refuses it (it took 132 MB before it was charged).
        let e =
            read_weights(br#"{"weights": {"root": [[16777215, 0.5]]}}"#, "w.json", &mut rig(), &mut Diagnostics::default()).unwrap_err();
        assert!(matches!(e, MpfbError::Budget(_)) && e.to_string().contains("budget exceeded"), "{e}");
        // What the budget allows (64 MiB at 32 bytes a vertex) still reads.
        read_weights(br#"{"weights": {"root": [[2000000, 0.5]]}}"#, "w.json", &mut rig(), &mut Diagnostics::default()).unwrap();
    }

    /// `n` empty objects as JSON (7 bytes each, about 450 as a value tree).
    fn pad(n: usize) -> String {
        format!("[{}]", vec![r#"{"":0}"#; n].join(","))
    }

    /// Issue 38: a rig padded with an unknown key took 128× its size (the value tree, then a
    /// copy of it), and a weights file's pairs 73×. Both are charged before they are parsed:
    /// past the budget they stop, naming the file's value tree.
    #[test]
    fn value_trees_are_charged_before_they_are_built() {
        let padded = format!(r#"{{"padding": {}, "bones": {RIG}}}"#, pad(300_000));
        let e = read(padded.as_bytes(), "rig.json", &ReadOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
        assert!(e.contains("rig.json: $ (the rig's value tree): decode budget exceeded"), "{e}");
        let weights = format!(r#"{{"weights": {{"root": [[0, 1.0]]}}, "padding": {}}}"#, pad(300_000));
        let e = read_weights(weights.as_bytes(), "w.json", &mut rig(), &mut Diagnostics::default()).unwrap_err().to_string();
        assert!(e.contains("w.json: $.padding (its value tree): decode budget exceeded"), "{e}");
        // The groups are charged by a bound per byte of text, before the parse: the worst case
        // (empty groups, 48 bytes a slot for 6 bytes of text, doubled) stays under it and reads.
        let groups = format!(r#"{{"weights": {{{}}}}}"#, vec![r#""":[]"#; 300_000].join(","));
        let budget = Budget::for_input(groups.len() as u64);
        let wf = parse_weights(groups.as_bytes(), "w.json", &budget).unwrap();
        let built = wf.groups.as_ref().map(|g| g.capacity() * std::mem::size_of::<WeightGroup>()).unwrap_or(0);
        assert!(built as u64 <= budget.used(), "{built} bytes built, {} charged", budget.used());
        // A real rig's size reads.
        let small = format!(r#"{{"padding": {}, "bones": {RIG}}}"#, pad(1000));
        read(small.as_bytes(), "rig.json", &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    }

    /// What a weights text parses to, comparable: header keys with their raw text, groups with
    /// each weight's bits.
    type Parsed = (Vec<(String, String)>, Option<Vec<(String, Vec<(u64, u64)>)>>);

    fn comparable(header: Vec<(String, &serde_json::value::RawValue)>, groups: Option<Vec<WeightGroup>>) -> Parsed {
        (
            header.into_iter().map(|(k, v)| (k, v.get().to_string())).collect(),
            groups.map(|g| g.into_iter().map(|(n, p)| (n, p.into_iter().map(|(v, w)| (v, w.to_bits())).collect())).collect()),
        )
    }

    /// The scanner's result (`None` when it leaves the text to serde) and serde's.
    fn scanned_and_serde(bytes: &[u8]) -> (Option<Parsed>, Option<Parsed>) {
        let fast = crate::wscan::scan(bytes).map(|r| comparable(r.header, r.groups));
        let slow = serde_json::from_slice::<RawWeightsFile<'_>>(bytes).ok().map(|r| comparable(r.header, r.groups));
        (fast, slow)
    }

    /// Every weights file of the corpus takes the scanner's path (MPFB writes the shape it reads)
    /// and gives what serde_json gives, bit for bit.
    #[test]
    #[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
    fn the_weights_scanner_reads_every_corpus_weights_file_as_serde_does() {
        let root = skelport_ir::testing::corpus_root().expect("corpus").join("mpfb/rigs");
        let mut seen = 0;
        for dir in std::fs::read_dir(&root).unwrap().flatten() {
            for f in std::fs::read_dir(dir.path()).unwrap().flatten() {
                let name = f.file_name().to_string_lossy().into_owned();
                if !(name.starts_with("weights.") && name.ends_with(".json")) {
                    continue;
                }
                let bytes = std::fs::read(f.path()).unwrap();
                let (fast, slow) = scanned_and_serde(&bytes);
                let fast = fast.unwrap_or_else(|| panic!("{name}: the scanner left it to serde"));
                assert!(fast.1.as_ref().is_some_and(|g| g.iter().map(|(_, p)| p.len()).sum::<usize>() > 1000), "{name}");
                assert_eq!(Some(fast), slow, "{name}");
                seen += 1;
            }
        }
        assert!(seen >= 3, "{seen} weights files");
    }

    #[test]
    fn the_weights_scanner_leaves_what_it_does_not_read_to_serde() {
        let ok = r#"{"name": "w", "weights": {"a": [[0, 0.5], [12, 1]], "b": []}}"#;
        assert!(scanned_and_serde(ok.as_bytes()).0.is_some());
        for t in [
            r#"{"weights": {"a": [[-1, 0.5]]}}"#,
            r#"{"weights": {"a": [[1.0, 0.5]]}}"#,
            r#"{"weights": {"a": [[01, 0.5]]}}"#,
            r#"{"weights": {"a": [[1, .5]]}}"#,
            r#"{"weights": {"a": [[1, 1.]]}}"#,
            r#"{"weights": {"a": [[1, -0]]}}"#,
            r#"{"weights": {"a": [[1, 1e400]]}}"#,
            r#"{"weights": {"a\"b": [[1, 1]]}}"#,
            r#"{"weights": {"a": [[1, 1]]}} x"#,
            "\u{feff}{\"weights\": {}}",
            r#"{"weights": {"a": [[1, 1, 2]]}}"#,
            r#"{"weights": null}"#,
        ] {
            assert_eq!(scanned_and_serde(t.as_bytes()).0, None, "{t}");
        }
    }

    /// A weights file of `groups` (name, [(vertex, weight)] as text) with the `header` members
    /// around its `weights` member, every token separated by `blank`.
    fn weights_text(groups: &[(String, Vec<(String, String)>)], header: &[(String, String)], blank: &str) -> String {
        let sep = format!(",{blank}");
        let pairs =
            |p: &[(String, String)]| p.iter().map(|(v, w)| format!("[{blank}{v},{blank}{w}{blank}]")).collect::<Vec<_>>().join(&sep);
        let body = groups.iter().map(|(g, p)| format!("\"{g}\":{blank}[{blank}{}{blank}]", pairs(p))).collect::<Vec<_>>().join(&sep);
        let mut members: Vec<String> = header.iter().map(|(k, v)| format!("\"{k}\":{blank}{v}")).collect();
        members.insert(members.len() / 2, format!("\"weights\":{blank}{{{blank}{body}{blank}}}"));
        format!("{{{blank}{}{blank}}}", members.join(&sep))
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(3000))]
        /// Texts made of weights-file pieces (numbers JSON allows and refuses, escapes, repeated
        /// keys, every blank): whatever the scanner reads, serde reads the same, bit for bit.
        #[test]
        fn the_weights_scanner_agrees_with_serde(
            groups in proptest::collection::vec(
                ("[a-z\"\\\\ ]{0,3}", proptest::collection::vec(("(0|[1-9][0-9]{0,5}|-1|1\\.0|01|18446744073709551616)", "(0|-0|1|-1|0\\.[0-9]{1,22}|[1-9]\\.[0-9]{0,3}e-?[0-9]{1,3}|1\\.|\\.5|01|-0\\.0|1E400|[0-9]{17,25})"), 0..4)),
                0..4,
            ),
            header in proptest::collection::vec(("(name|version|weights|x)", "(1|\"s\"|\\[1, \\{\"a\": null\\}\\]|true)"), 0..3),
            blank in "( |\n|\r\n|\t|\n        ){1}",
        ) {
            let text = format!("{blank}{}{blank}", weights_text(&groups, &header, &blank));
            let (fast, slow) = scanned_and_serde(text.as_bytes());
            if let Some(f) = fast {
                proptest::prop_assert_eq!(Some(f), slow, "{}", text);
            }
        }

        /// The shape MPFB writes, with any blanks and numbers JSON allows for a vertex and a
        /// non-negative weight: always the scanner's path, and serde's result.
        #[test]
        fn the_weights_scanner_reads_the_shape_mpfb_writes(
            groups in proptest::collection::vec(
                ("[a-zA-Z_. -]{0,6}", proptest::collection::vec(("(0|[1-9][0-9]{0,5})", "(0|1|0\\.[0-9]{1,22}|[1-9]\\.[0-9]{1,3}[eE][-+]?[0-9]{1,2}|[1-9][0-9]{15,24})"), 0..5)),
                0..5,
            ),
            header in proptest::collection::vec(("(name|version|copyright|x)", "(110|\"s\"|\\[1, \\{\"a\": null\\}\\])"), 0..4),
            blank in "( |\n|\r\n|\t|\n {1,17})",
        ) {
            let text = weights_text(&groups, &header, &blank);
            let (fast, slow) = scanned_and_serde(text.as_bytes());
            proptest::prop_assert!(fast.is_some(), "{}", text);
            proptest::prop_assert_eq!(fast, slow, "{}", text);
        }
    }
}
