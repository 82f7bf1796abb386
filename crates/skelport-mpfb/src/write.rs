//! IR → MPFB rig JSON v110 (and weights JSON), as MPFB writes them: indent 4, sorted keys,
//! floats rounded to 5 decimals.

use crate::fit::StrategyPicker;
use crate::read::{base_mesh, BaseMesh, Companion, BASE_VERTEX_COUNT};
use crate::{MpfbError, NAMESPACE};
use serde_json::{json, Map, Value};
use skelport_ir::proc::{bone_from_head_tail, mat3_to_vec_roll};
use skelport_ir::{AnchorStrategy, DMat3, DQuat, DVec3, Diagnostics, Document, Frame, Output, Place, WriteOptions};
use std::collections::BTreeMap;

/// MPFB's `round(x, 5) + 0`: 5 decimals, and no negative zero.
pub fn round5(x: f64) -> f64 {
    (x * 1e5).round() / 1e5 + 0.0
}

fn round5_json(v: &Value) -> Value {
    match v {
        Value::Number(n) if n.is_f64() => {
            serde_json::Number::from_f64(round5(n.as_f64().unwrap_or(0.0))).map(Value::Number).unwrap_or(Value::Null)
        }
        Value::Array(a) => Value::Array(a.iter().map(round5_json).collect()),
        other => other.clone(),
    }
}

/// Round what MPFB's save rounds (`cleanup_float_values`): each end's `default_position` and
/// `offset`, and `roll`. Other floats (constraints, rigify parameters, `scale_factor`) are
/// written as they are, as MPFB does.
pub fn mpfb_rounding(bone: &mut Map<String, Value>) {
    for end in ["head", "tail"] {
        if let Some(Value::Object(e)) = bone.get_mut(end) {
            for k in ["default_position", "offset"] {
                if let Some(v) = e.get_mut(k) {
                    *v = round5_json(v);
                }
            }
        }
    }
    if let Some(r) = bone.get_mut("roll") {
        *r = round5_json(r);
    }
}

/// Sort every object's keys, as Python's `json.dump(..., sort_keys=True)`.
pub fn canonical(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        Value::Object(o) => {
            let sorted: BTreeMap<&String, Value> = o.iter().map(|(k, v)| (k, canonical(v))).collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        other => other.clone(),
    }
}

/// Serialize with a 4-space indent and a trailing newline.
pub fn to_bytes(v: &Value) -> Result<Vec<u8>, MpfbError> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(v, &mut ser).map_err(|e| MpfbError::Write(e.to_string()))?;
    out.push(b'\n');
    Ok(out)
}

fn strategy_json(m: &mut Map<String, Value>, strategy: &AnchorStrategy) {
    match strategy {
        AnchorStrategy::Cube { group } => {
            m.insert("strategy".into(), "CUBE".into());
            m.insert("cube_name".into(), group.clone().into());
        }
        AnchorStrategy::Vertex { index } => {
            m.insert("strategy".into(), "VERTEX".into());
            m.insert("vertex_index".into(), (*index).into());
        }
        AnchorStrategy::Mean { indices } => {
            m.insert("strategy".into(), "MEAN".into());
            m.insert("vertex_indices".into(), json!(indices));
        }
        AnchorStrategy::Xyz { indices } => {
            m.insert("strategy".into(), "XYZ".into());
            m.insert("vertex_indices".into(), json!(indices));
        }
        // No mesh rule: MPFB falls back to default_position for strategies it cannot evaluate.
        AnchorStrategy::Default => {
            m.insert("strategy".into(), "DEFAULT".into());
        }
    }
}

/// One end from an IR anchor; `pos` is where the end stands.
fn end_json(anchor: Option<&skelport_ir::Anchor>, pos: DVec3) -> Value {
    let mut m = Map::new();
    strategy_json(&mut m, anchor.map_or(&AnchorStrategy::Default, |a| &a.strategy));
    if let Some(a) = anchor.filter(|a| a.offset != DVec3::ZERO) {
        m.insert("offset".into(), json!(a.offset.to_array()));
    }
    m.insert("default_position".into(), json!(pos.to_array()));
    Value::Object(m)
}

/// `x` to 9 decimals, no negative zero.
fn round9(x: f64) -> f64 {
    (x * 1e9).round() / 1e9 + 0.0
}

fn round9_v(v: DVec3) -> DVec3 {
    DVec3::new(round9(v.x), round9(v.y), round9(v.z))
}

/// A bone shorter than this (metres) has no direction to write.
const MIN_LENGTH: f64 = 1e-6;
/// A world scale this close to 1 (relative) is float noise, not a scale.
const SCALE_NOISE: f64 = 1e-5;
/// How close to where the reader placed it an end must stand to count as not moved (metres):
/// far below MPFB's 5-decimal rounding, above the noise of a frame converted and back.
const PLACED_KEPT: f64 = 1e-9;
/// How far (radians) the rebuilt orientation may be from the bone's: Blender's bone math is
/// approximate within ~6° of −Y (≈3e-5) and snaps within 2.5e-4 of it.
const ORIENTATION_KEPT: f64 = 1e-4;
/// The angle between two rotations, radians.
fn turn(a: DQuat, b: DQuat) -> f64 {
    let d = a.inverse() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

/// At most 12 names, then a count.
fn list(v: &[&str]) -> String {
    if v.len() <= 12 {
        v.join(", ")
    } else {
        format!("{}, … and {} more", v[..12].join(", "), v.len() - 12)
    }
}

/// What a document holds, for a message about why nothing of it can be written.
pub(crate) fn what_it_has(d: &Document) -> String {
    let mut parts = Vec::new();
    if !d.skeletons.is_empty() {
        parts.push(format!("{} empty skeleton(s)", d.skeletons.len()));
    }
    if !d.meshes.is_empty() {
        parts.push(format!("{} mesh(es)", d.meshes.len()));
    }
    if parts.is_empty() {
        "it is empty".into()
    } else {
        format!("it has {}", parts.join(" and "))
    }
}

/// The mesh to pick strategies on, loaded only when a bone needs one.
fn picker_mesh(opts: &WriteOptions, scale: f64, diag: &mut Diagnostics) -> Result<Option<BaseMesh>, MpfbError> {
    let Some(p) = Companion::of(opts.mesh.as_deref(), opts.mesh_data.as_ref()) else { return Ok(None) };
    let m = base_mesh(p, scale, None)?;
    if m.positions.len() != BASE_VERTEX_COUNT {
        diag.warn(
            "mpfb.mesh-topology",
            format!(
                "{}: {} vertices, not the base mesh's {BASE_VERTEX_COUNT}: strategies picked on it fit only bodies with its numbering",
                p.name(),
                m.positions.len()
            ),
        );
    }
    Ok(Some(m))
}

/// An MPFB rig and weights file hold no mesh: weights name the base mesh's vertices by number.
/// A mesh read from MakeHuman's base mesh comes back from that OBJ (`--mesh`), UVs and normals
/// included: a note. Any other mesh's geometry, UVs and normals are a loss.
fn geometry_not_written(d: &Document, diag: &mut Diagnostics) {
    for m in &d.meshes {
        let what = mesh_data(m);
        let from_base = m.ext.raw(NAMESPACE).and_then(|e| e.get("base_vertex_count")).is_some();
        // Any other mesh is the `mpfb.mesh` loss (one line for them all, where the skin is written).
        if from_base {
            diag.info_at(
                "mpfb.mesh-not-written",
                Place::named("mesh", &m.name),
                format!("mesh \"{}\" ({what}) is MakeHuman's base mesh: an MPFB rig refers to it and holds none; read it back with --mesh base.obj", m.name),
            );
        }
    }
}

/// What of `m` a rig does not hold: `13380 vertices, 13378 faces, 1 UV set(s), normals`.
fn mesh_data(m: &skelport_ir::Mesh) -> String {
    let mut what = vec![format!("{} vertices", m.positions.len()), format!("{} faces", m.faces.len())];
    if !m.uvs.is_empty() {
        what.push(format!("{} UV set(s)", m.uvs.len()));
    }
    if m.normals.is_some() {
        what.push("normals".into());
    }
    what.join(", ")
}

/// Write the document's first skeleton as a v110 rig (plus a weights file when it has a skin).
///
/// `default_position` is each end where the bone stands now (feet on the ground when it was
/// placed that way), as MPFB's save writes it: MPFB's own v110 files (openpose, rigify) hold
/// positions about 0.8 m above the base mesh's origin. Bones without a strategy get one picked on
/// `opts.mesh`, lifted the same way, as MPFB's save does (see [`crate::fit`]).
pub fn write(doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, MpfbError> {
    let d = doc.in_frame(Frame::BLENDER);
    let Some(si) = d.skeletons.iter().position(|s| !s.bones.is_empty()) else {
        // Which formats keep the meshes is the registry's to say (the facade adds it).
        return Err(MpfbError::Write(format!(
            "nothing to write: the document has no bones ({}), and an MPFB rig is its bones",
            what_it_has(&d)
        )));
    };
    let sk = &d.skeletons[si];
    let others = d.skeletons.iter().filter(|s| !s.bones.is_empty()).count() - 1;
    if others > 0 {
        diag.loss("mpfb.skeletons", format!("an MPFB rig holds one skeleton; only \"{}\" is written, {others} more are not", sk.name));
    }
    geometry_not_written(&d, diag);
    let mut header = match sk.ext.raw(NAMESPACE) {
        Some(Value::Object(h)) => h.clone(),
        _ => {
            let mut h = Map::new();
            h.insert("is_subrig".into(), false.into());
            h.insert("scale_factor".into(), json!(0.1));
            h
        }
    };
    let read_lift = header.get("skelport_lift").and_then(Value::as_f64);
    header.retain(|k, _| !k.starts_with("skelport_"));
    header.insert("version".into(), 110.into());
    let scale = header.get("scale_factor").and_then(Value::as_f64).filter(|s| *s > 0.0).unwrap_or(0.1);
    let needs_pick = sk.bones.iter().any(|b| !matches!(b.ext.raw(NAMESPACE), Some(Value::Object(_))) && b.anchors.is_none());
    let mesh = if needs_pick { picker_mesh(opts, scale, diag)? } else { None };
    // Where the mesh's origin is: lifted by the reader (recorded), or as `--keep-origin` says.
    let lift = match (read_lift, &mesh) {
        (Some(l), _) => l,
        (None, Some(m)) if !opts.keep_origin => m.feet_lift(),
        _ => 0.0,
    };
    let lift_v = DVec3::new(0.0, 0.0, lift);
    let picker = mesh.as_ref().map(StrategyPicker::new);
    let world = sk.world_transforms();
    let tails = skelport_ir::proc::tails(sk, &world, 1.0);
    let mut bones = Map::new();
    let mut lost_strategies = 0;
    let mut picked = 0;
    let (mut zero_length, mut turned, mut scaled) = (Vec::new(), Vec::new(), Vec::new());
    for (i, b) in sk.bones.iter().enumerate() {
        let head = world[i].translation;
        let rot = world[i].rotation.normalize();
        if (world[i].scale - DVec3::ONE).abs().max_element() > SCALE_NOISE {
            scaled.push(b.name.as_str());
        }
        let parent = b.parent.map(|p| sk.bones[p.index()].name.clone()).unwrap_or_default();
        let from_mpfb = matches!(b.ext.raw(NAMESPACE), Some(Value::Object(_)));
        let mut m = match b.ext.raw(NAMESPACE) {
            // A bone read from MPFB: its own JSON, so nothing is lost; only where it stands now
            // (its tail lies along its +Y, as the reader built it).
            Some(Value::Object(orig)) => {
                let mut m = orig.clone();
                for (end, pos) in [("head", head), ("tail", tails[i])] {
                    if let Some(Value::Object(e)) = m.get_mut(end) {
                        // An end the reader placed on a base mesh it found itself, and still
                        // there, keeps the file's default_position: the same rig out as in.
                        let placed = b.ext.raw(crate::read::PLACED).and_then(|p| serde_json::from_value::<[f64; 3]>(p[end].clone()).ok());
                        let unmoved = placed.is_some_and(|p| DVec3::from_array(p).distance(pos) <= PLACED_KEPT);
                        if !(unmoved && e.contains_key("default_position")) {
                            e.insert("default_position".into(), json!(pos.to_array()));
                        }
                    }
                }
                // Turned about its own axis since it was read (in another tool): the roll that
                // rebuilds it replaces the stored one, unless a roll strategy decides the roll.
                let dir = (tails[i] - head).normalize_or_zero();
                let stored = m.get("roll").and_then(Value::as_f64).unwrap_or(0.0);
                let strategy = m.get("roll_strategy").and_then(Value::as_str).and_then(|st| crate::read::roll_for_strategy(st, dir));
                let rebuilt = |roll: f64| bone_from_head_tail(head, tails[i], roll).0;
                if dir != DVec3::ZERO && turn(rebuilt(strategy.unwrap_or(stored)), rot) > ORIENTATION_KEPT {
                    let (_, roll) = mat3_to_vec_roll(&DMat3::from_quat(rot));
                    if strategy.is_none() {
                        m.insert("roll".into(), json!(roll));
                    }
                    let now = rebuilt(strategy.unwrap_or(roll));
                    if turn(now, rot) > ORIENTATION_KEPT {
                        turned.push(format!("{} ({:.4}°)", b.name, turn(now, rot).to_degrees()));
                    }
                }
                m
            }
            _ => {
                // The bone's own axes: the tail along its +Y at its length (a length skelport
                // infers for bones without one), and the roll that rebuilds its rotation with
                // Blender's vec_roll_to_mat3 (mat3_to_vec_roll), so the orientation is kept.
                let mut length = (tails[i] - head).length();
                if !(length > MIN_LENGTH && length.is_finite()) {
                    zero_length.push(b.name.as_str());
                    length = skelport_ir::proc::LONE_ROOT_LENGTH_M;
                }
                let (dir, roll) = mat3_to_vec_roll(&DMat3::from_quat(rot));
                // A nanometre and a nanoradian: far finer than MPFB's rounding (1e-5, which would
                // turn a 1 cm bone by 1e-3 rad), without the noise of composed transforms
                // (0.10000000000000002).
                let (head, tail, roll) = (round9_v(head), round9_v(head + dir * length), round9(roll));
                let (rebuilt, _) = bone_from_head_tail(head, tail, roll);
                if turn(rebuilt, rot) > ORIENTATION_KEPT {
                    turned.push(format!("{} ({:.4}°)", b.name, turn(rebuilt, rot).to_degrees()));
                }
                let mut m = Map::new();
                match (&b.anchors, &picker) {
                    (Some(a), _) => {
                        m.insert("head".into(), end_json(Some(&a.head), head));
                        m.insert("tail".into(), end_json(Some(&a.tail), tail));
                    }
                    (None, Some(pk)) => {
                        for (end, pos) in [("head", head), ("tail", tail)] {
                            let st = pk.pick(pos - lift_v);
                            if st == AnchorStrategy::Default {
                                lost_strategies += 1;
                            } else {
                                picked += 1;
                            }
                            let a = skelport_ir::Anchor { strategy: st, offset: DVec3::ZERO, default_position: None };
                            m.insert(end.into(), end_json(Some(&a), pos));
                        }
                    }
                    (None, None) => {
                        lost_strategies += 2;
                        m.insert("head".into(), end_json(None, head));
                        m.insert("tail".into(), end_json(None, tail));
                    }
                }
                m.insert("roll".into(), json!(roll));
                m.insert("use_connect".into(), false.into());
                m.insert("use_inherit_rotation".into(), true.into());
                m.insert("use_local_location".into(), true.into());
                m.insert("inherit_scale".into(), "FULL".into());
                m.insert("rigify".into(), json!({}));
                m
            }
        };
        m.insert("parent".into(), parent.into());
        // MPFB's own rounding for its own bones (so its files come back as it saves them);
        // bones from other formats keep 9 decimals, or a short bone would turn (1e-5 m on a
        // 1 cm bone is 1e-3 rad).
        if from_mpfb {
            mpfb_rounding(&mut m);
        }
        bones.insert(b.name.clone(), Value::Object(m));
    }
    if !zero_length.is_empty() {
        diag.loss(
            "mpfb.zero-length",
            format!(
                "{} bone(s) have no length (head and tail would meet, which Blender deletes): written {} m long along their +Y: {}",
                zero_length.len(),
                skelport_ir::proc::LONE_ROOT_LENGTH_M,
                list(&zero_length)
            ),
        );
    }
    if !turned.is_empty() {
        diag.loss(
            "mpfb.orientation",
            format!(
                "{} bone(s) cannot keep their orientation as head, tail and roll (straight down −Y Blender's bone math snaps the direction; a roll strategy fixes the roll): turned by {}",
                turned.len(),
                list(&turned.iter().map(String::as_str).collect::<Vec<_>>())
            ),
        );
    }
    if !scaled.is_empty() {
        diag.loss(
            "mpfb.scale",
            format!("MPFB bones have no scale; {} bone(s) have a world scale other than 1, dropped: {}", scaled.len(), list(&scaled)),
        );
    }
    if picked > 0 {
        diag.info(
            "mpfb.picked-strategies",
            format!("{picked} bone end(s) without a strategy got one picked on the mesh as MPFB's save does"),
        );
    }
    if lost_strategies > 0 {
        let why = if opts.mesh.is_some() || opts.mesh_data.is_some() {
            "no joint cube, vertex or vertex pair of the mesh is close enough"
        } else {
            "they came from another format; give --mesh base.obj to pick strategies"
        };
        diag.loss(
            "mpfb.strategies",
            format!("{lost_strategies} bone end(s) have no placement strategy ({why}): written with default_position only, so they will not refit to other bodies"),
        );
    }
    header.insert("bones".into(), Value::Object(bones));
    let main = to_bytes(&canonical(&Value::Object(header)))?;
    let mut out = Output::single(main);
    let skins: Vec<&skelport_ir::Skin> = d.skins.iter().filter(|s| s.skeleton.index() == si).collect();
    if skins.len() > 1 {
        diag.loss(
            "mpfb.skins",
            format!("an MPFB rig has one weights file; skin \"{}\" is written, {} more are not", skins[0].name, skins.len() - 1),
        );
    }
    // MPFB has no mesh: the weights number the MakeHuman base mesh's vertices, which a mesh read
    // with the rig is; any other mesh is lost.
    let is_foreign = |m: &skelport_ir::Mesh| m.ext.raw(NAMESPACE).and_then(|e| e.get("base_vertex_count")).is_none();
    let foreign: Vec<String> = d.meshes.iter().filter(|m| is_foreign(m)).map(|m| format!("{} ({})", m.name, mesh_data(m))).collect();
    if !foreign.is_empty() {
        let names: Vec<&str> = foreign.iter().map(String::as_str).collect();
        diag.loss(
            "mpfb.mesh",
            format!(
                "MPFB rigs and weights hold no mesh: {} mesh(es) not written ({}); the weights file numbers their vertices, so it fits only them",
                foreign.len(),
                list(&names)
            ),
        );
    }
    // Weights that number a mesh no written file holds (not MakeHuman's base mesh): the skin is
    // left behind, as when a target drops it (the facade refuses this without allow_loss).
    if let Some(mesh) = skins.first().and_then(|s| d.mesh_of(s)).filter(|m| is_foreign(m)) {
        diag.loss_at(
            "skin.mesh-not-written",
            Place::named("skin", &skins[0].name),
            format!(
                "skin \"{}\" numbers the vertices of mesh \"{}\", which is not written: its weights file fits no body MPFB or skelport can read it with",
                skins[0].name, mesh.name
            ),
        );
    }
    if let Some(skin) = skins.first() {
        let mut wh = match skin.ext.raw(NAMESPACE) {
            Some(Value::Object(h)) => h.clone(),
            _ => {
                let mut h = Map::new();
                h.insert("copyright".into(), "".into());
                h.insert("description".into(), "Weights written by skelport".into());
                h.insert("license".into(), "CC0".into());
                h.insert("name".into(), sk.name.clone().into());
                h
            }
        };
        wh.insert("version".into(), 110.into());
        // Vertex numbering: back to the base mesh's when the mesh was trimmed on read.
        let base_index: Option<Vec<u32>> = skin
            .mesh
            .and_then(|m| d.get_mesh(m))
            .and_then(|m| m.ext.raw(NAMESPACE))
            .and_then(|e| e.get("kept_runs"))
            .and_then(Value::as_array)
            .map(|runs| {
                runs.iter()
                    .filter_map(|r| Some((r.get(0)?.as_u64()? as u32, r.get(1)?.as_u64()? as u32)))
                    .flat_map(|(s, n)| s..s + n)
                    .collect()
            });
        let mut groups: BTreeMap<String, Vec<(u32, f64)>> = BTreeMap::new();
        for v in 0..skin.influences.vertex_count() {
            let bv = base_index.as_ref().and_then(|b| b.get(v).copied()).unwrap_or(v as u32);
            for (j, w) in skin.influences.vertex(v) {
                let w = w.clamp(0.0, 1.0);
                if w < 0.0001 {
                    continue;
                }
                if let Some(b) = skin.joints.get(j as usize).and_then(|b| sk.bones.get(b.index())) {
                    groups.entry(b.name.clone()).or_default().push((bv, w));
                }
            }
        }
        let weights: Map<String, Value> =
            groups.into_iter().map(|(g, e)| (g, Value::Array(e.into_iter().map(|(v, w)| json!([v, round5(w)])).collect()))).collect();
        wh.insert("weights".into(), Value::Object(weights));
        let stem = opts.file_stem.strip_prefix("rig.").unwrap_or(&opts.file_stem);
        let name = format!("weights.{}.json", if stem.is_empty() { "skelport" } else { stem });
        out.side_files.push((name, to_bytes(&canonical(&Value::Object(wh)))?));
    }
    Ok(out)
}
