//! IR → `.mhskel` + `.mhw`.
//!
//! A MakeHuman skeleton holds no positions: each joint is a list of base-mesh vertices whose mean
//! places it. So the writer
//! * keeps the joints and planes of bones read from a `.mhskel` that have not moved or turned;
//! * fits every other joint on the base mesh given (`--mesh`), as MPFB's rig save picks strategies
//!   ([`skelport_mpfb::fit`]): a joint cube's vertices, one vertex, or a vertex pair, the nearest
//!   within 1–2 cm, and orients the bone by a plane through its head, its tail and the base-mesh
//!   vertex that makes the plane's normal closest to the bone's X axis;
//! * writes joints that no vertex places (no mesh given, or none near enough) with their exact
//!   position under the top-level key [`POSITIONS_KEY`], which skelport reads back and MakeHuman
//!   ignores (it puts such joints at the origin): a loss line says so.

use crate::place::{bone_normal, orientation, plane_normal};
use crate::read::{given, roll_planes, BaseMesh};
use crate::{MhskelError, FRAME, NAMESPACE, POSITIONS_KEY};
use serde_json::{json, Map, Value};
use skelport_ir::{AnchorStrategy, DQuat, DVec3, Diagnostics, Document, Output, Place, WriteOptions};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Joints within this distance (decimetres, 10 µm) of where the bone stands are the same joint.
const SAME_PLACE: f64 = 1e-4;
/// How far (radians) an orientation may be from the bone's and still be the same.
const SAME_TURN: f64 = 1e-4;
/// A bone shorter than this (decimetres) has no direction.
const MIN_LENGTH: f64 = 1e-6;
/// The length given to bones that have none (decimetres: 10 cm).
const ZERO_LENGTH_FIX: f64 = 1.0;
/// A world scale this close to 1 (relative) is float noise.
const SCALE_NOISE: f64 = 1e-5;

fn turn(a: DQuat, b: DQuat) -> f64 {
    let d = a.inverse() * b;
    2.0 * d.xyz().length().atan2(d.w.abs())
}

/// At most 12 names, then a count.
fn list(v: &[String]) -> String {
    if v.len() <= 12 {
        v.join(", ")
    } else {
        format!("{}, … and {} more", v[..12].join(", "), v.len() - 12)
    }
}

/// The joints, planes and stored positions being written, with the names taken.
#[derive(Default)]
struct Tables {
    joints: Map<String, Value>,
    planes: Map<String, Value>,
    stored: Map<String, Value>,
    taken: HashSet<String>,
    /// Where MakeHuman (or skelport, for stored joints) will place each written joint.
    placed: HashMap<String, DVec3>,
}

impl Tables {
    fn fresh(&mut self, base: &str) -> String {
        let mut name = base.to_string();
        let mut k = 1;
        while self.taken.contains(&name) {
            name = format!("{base}_{k}");
            k += 1;
        }
        self.taken.insert(name.clone());
        name
    }
}

/// A base mesh to fit joints on, and MPFB's strategy picker over it (which works in Blender
/// axes and metres).
struct Fitter {
    mesh: BaseMesh,
    picker_mesh: skelport_mpfb::read::BaseMesh,
    /// The base mesh's joint cubes (`joint-*` face groups): their vertices (sorted) and centre.
    cubes: Vec<(Vec<u32>, DVec3)>,
}

impl Fitter {
    fn new(mesh: BaseMesh) -> Self {
        let positions = mesh.positions.iter().map(|p| DVec3::new(p.x, -p.z, p.y) * 0.1).collect();
        let picker_mesh = skelport_mpfb::read::BaseMesh { obj: Default::default(), positions, groups: mesh.groups.clone() };
        let mut cubes: Vec<(Vec<u32>, DVec3)> = mesh
            .groups
            .iter()
            .filter(|(g, v)| g.starts_with("joint-") && !v.is_empty())
            .filter_map(|(_, v)| {
                let mut v = v.clone();
                v.sort_unstable();
                v.dedup();
                let c = mesh.mean(&v).ok()?;
                Some((v, c))
            })
            .collect();
        // Group order is a hash map's: sort so that ties resolve the same on every run.
        cubes.sort_by(|a, b| a.0.cmp(&b.0));
        Fitter { mesh, picker_mesh, cubes }
    }

    /// The union of two joint cubes whose mean stands nearest `p` (mesh coordinates), with that
    /// mean. MakeHuman's own rigs place a joint between two cubes so (the head of `tongue04` is
    /// the mean of the cubes `joint-tongue-3` and `joint-tongue-4`), which MPFB's picker, choosing
    /// one cube, cannot find: it takes the nearer cube, which may be the bone's other end.
    fn cube_pair(&self, p: DVec3) -> Option<(Vec<u32>, DVec3)> {
        // Only cubes near p can average to p: the 8 nearest bound the search.
        let mut near: Vec<(f64, usize)> = self.cubes.iter().enumerate().map(|(i, c)| ((c.1 - p).length(), i)).collect();
        near.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        near.truncate(8);
        let mut best: Option<(f64, Vec<u32>, DVec3)> = None;
        for (k, &(_, a)) in near.iter().enumerate() {
            for &(_, b) in &near[k + 1..] {
                let mut v: Vec<u32> = self.cubes[a].0.iter().chain(&self.cubes[b].0).copied().collect();
                v.sort_unstable();
                v.dedup();
                let Ok(m) = self.mesh.mean(&v) else { continue };
                let d = (m - p).length();
                if best.as_ref().is_none_or(|(bd, _, _)| d < *bd) {
                    best = Some((d, v, m));
                }
            }
        }
        best.map(|(_, v, m)| (v, m))
    }

    /// The vertices whose mean stands nearest `p` (mesh coordinates) by MPFB's rules, if any.
    fn fit(&self, picker: &skelport_mpfb::fit::StrategyPicker<'_>, p: DVec3) -> Option<Vec<u32>> {
        match picker.pick(DVec3::new(p.x, -p.z, p.y) * 0.1) {
            AnchorStrategy::Cube { group } => {
                let mut v = self.mesh.groups.get(&group)?.clone();
                v.sort_unstable();
                v.dedup();
                Some(v)
            }
            AnchorStrategy::Vertex { index } => Some(vec![index]),
            AnchorStrategy::Mean { indices } => Some(indices),
            _ => None,
        }
    }

    /// The vertex `v` that makes the plane (head, tail, v) have the normal nearest `x`.
    fn roll_vertex(&self, head: DVec3, tail: DVec3, x: DVec3) -> Option<u32> {
        let mut best: Option<(f64, u32)> = None;
        for (i, &v) in self.mesh.positions.iter().enumerate() {
            if (v - tail).length() < 1e-3 {
                continue;
            }
            let d = plane_normal(head, tail, v).dot(x);
            if best.is_none_or(|(bd, _)| d > bd) {
                best = Some((d, i as u32));
            }
        }
        best.map(|b| b.1)
    }
}

/// Write the document's first skeleton with bones as a `.mhskel` (and its first skin as the
/// `.mhw` the rig names).
pub fn write(doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, MhskelError> {
    let d = doc.in_frame(FRAME);
    let Some(si) = d.skeletons.iter().position(|s| !s.bones.is_empty()) else {
        return Err(MhskelError::Write(
            // The command line adds the targets that accept the document (it asks the registry).
            "nothing to write: the document has no bones, and a MakeHuman skeleton is its bones".into(),
        ));
    };
    let sk = &d.skeletons[si];
    let others = d.skeletons.iter().filter(|s| !s.bones.is_empty()).count() - 1;
    if others > 0 {
        diag.loss(
            "mhskel.skeletons",
            format!("a MakeHuman rig holds one skeleton; only \"{}\" is written, {others} more are not", sk.name),
        );
    }
    let source = sk.ext.raw(NAMESPACE).and_then(Value::as_object);
    let obj = |k: &str| source.and_then(|s| s.get(k)).and_then(Value::as_object).cloned().unwrap_or_default();
    let (src_header, src_joints, src_planes, src_positions) = (obj("header"), obj("joints"), obj("planes"), obj("positions"));
    let src_pos = |name: &str| {
        src_positions.get(name).and_then(|v| {
            let a = v.as_array()?;
            Some(DVec3::new(a.first()?.as_f64()?, a.get(1)?.as_f64()?, a.get(2)?.as_f64()?))
        })
    };
    let src_plane_joints: HashMap<String, [String; 3]> = src_planes
        .iter()
        .filter_map(|(k, v)| {
            let a: Vec<String> = v.as_array()?.iter().filter_map(|x| x.as_str().map(String::from)).collect();
            Some((k.clone(), <[String; 3]>::try_from(a).ok()?))
        })
        .collect();

    let fitter = match given(opts.mesh.as_deref(), opts.mesh_data.as_ref()) {
        Some(s) => Some(Fitter::new(BaseMesh::parse(&s.bytes("mesh", &skelport_ir::Budget::unlimited())?, &s.name())?)),
        None => None,
    };
    let picker = fitter.as_ref().map(|f| skelport_mpfb::fit::StrategyPicker::new(&f.picker_mesh));
    // A rig read from a .mhskel stands on the mesh's origin; any other is taken to stand with the
    // feet on the ground, as MPFB and most exports place a MakeHuman body, unless --keep-origin.
    let lift = match &fitter {
        Some(f) if source.is_none() && !opts.keep_origin => f.mesh.feet_lift(),
        _ => 0.0,
    };
    let lift_v = DVec3::new(0.0, lift, 0.0);

    let mut t = Tables { taken: crate::read::taken_names(&src_joints, &src_planes), ..Default::default() };
    let world = sk.world_transforms();
    let tails = skelport_ir::proc::tails(sk, &world, FRAME.metres_per_unit);
    let mut bones = Map::new();
    let (mut zero_length, mut scaled, mut turned) = (Vec::new(), Vec::new(), Vec::new());
    let (mut fitted_moved, mut max_moved) = (0usize, 0.0f64);
    let mut unplaced: Vec<String> = Vec::new();

    // Copy a joint of the source rig: its vertices, else its position (stored).
    let copy_joint = |t: &mut Tables, name: &str| {
        if t.placed.contains_key(name) {
            return;
        }
        let pos = src_pos(name).unwrap_or(DVec3::ZERO);
        match src_joints.get(name) {
            Some(Value::Array(a)) if !a.is_empty() => {
                t.joints.insert(name.to_string(), Value::Array(a.clone()));
                if fitter.is_none() {
                    t.stored.insert(name.to_string(), json!(pos.to_array()));
                }
            }
            _ => {
                t.stored.insert(name.to_string(), json!(pos.to_array()));
            }
        }
        t.placed.insert(name.to_string(), pos);
    };

    for (i, b) in sk.bones.iter().enumerate() {
        let head = world[i].translation;
        let rot = world[i].rotation.normalize();
        if (world[i].scale - DVec3::ONE).abs().max_element() > SCALE_NOISE {
            scaled.push(b.name.clone());
        }
        let mut tail = tails[i];
        let len = (tail - head).length();
        if !(len > MIN_LENGTH && len.is_finite()) {
            zero_length.push(b.name.clone());
            tail = head + rot * DVec3::Y * ZERO_LENGTH_FIX;
        }
        let parent = b.parent.map(|p| Value::String(sk.bones[p.index()].name.clone())).unwrap_or(Value::Null);
        let own = b.ext.raw(NAMESPACE).and_then(Value::as_object);
        // The source's joints, when they still stand where the bone does.
        let src_ends = own.and_then(|o| {
            let (hj, tj) = (o.get("head")?.as_str()?, o.get("tail")?.as_str()?);
            let (ph, pt) = (src_pos(hj)?, src_pos(tj)?);
            ((ph - head).length() <= SAME_PLACE && (pt - tail).length() <= SAME_PLACE).then(|| (hj.to_string(), tj.to_string(), ph, pt))
        });
        let mut m = own.cloned().unwrap_or_else(|| {
            let mut m = Map::new();
            m.insert("reference".into(), Value::Null);
            m
        });
        m.insert("parent".into(), parent);
        if let Some((hj, tj, ph, pt)) = &src_ends {
            // The source's plane, when it still gives the bone's orientation.
            let planes = roll_planes(own.and_then(|o| o.get("rotation_plane")));
            let normal = bone_normal(&planes, |p| {
                let js = src_plane_joints.get(p)?;
                let at = |j: &String| src_pos(j).unwrap_or(DVec3::ZERO);
                Some(plane_normal(at(&js[0]), at(&js[1]), at(&js[2])))
            });
            if orientation(*ph, *pt, normal).is_some_and(|q| turn(q, rot) <= SAME_TURN) {
                copy_joint(&mut t, hj);
                copy_joint(&mut t, tj);
                for p in planes_named(&planes) {
                    if let Some(js) = src_plane_joints.get(&p) {
                        for j in js {
                            copy_joint(&mut t, j);
                        }
                        t.planes.insert(p.clone(), json!(js));
                    }
                }
                bones.insert(b.name.clone(), Value::Object(m));
                continue;
            }
        }
        // New joints (or the source's, when only the plane changed).
        let mut place_joint = |t: &mut Tables, base: &str, p: DVec3| -> (String, DVec3) {
            let name = t.fresh(base);
            let at_mesh = p - lift_v;
            let fit = match (&fitter, &picker) {
                (Some(f), Some(pk)) => {
                    let picked = f.fit(pk, at_mesh).and_then(|v| f.mesh.mean(&v).ok().map(|m| (v, m)));
                    // Where the picker's choice is not exact, a pair of joint cubes may be.
                    match picked {
                        Some((_, m)) if (m - at_mesh).length() <= SAME_PLACE => picked,
                        _ => match f.cube_pair(at_mesh) {
                            Some((v, m)) if (m - at_mesh).length() <= SAME_PLACE => Some((v, m)),
                            _ => picked,
                        },
                    }
                }
                _ => None,
            };
            let placed = match fit {
                Some((v, mean)) => {
                    let moved = (mean - at_mesh).length();
                    if moved > SAME_PLACE {
                        fitted_moved += 1;
                        max_moved = max_moved.max(moved);
                    }
                    t.joints.insert(name.clone(), json!(v));
                    mean
                }
                None => {
                    unplaced.push(name.clone());
                    t.stored.insert(name.clone(), json!(at_mesh.to_array()));
                    at_mesh
                }
            };
            t.placed.insert(name.clone(), placed);
            (name, placed)
        };
        let (hj, tj, ph, pt) = match src_ends {
            Some((hj, tj, _, _)) => {
                copy_joint(&mut t, &hj);
                copy_joint(&mut t, &tj);
                let (ph, pt) = (t.placed[&hj], t.placed[&tj]);
                (hj, tj, ph, pt)
            }
            None => {
                let (hj, mut ph) = place_joint(&mut t, &format!("{}____head", b.name), head);
                let (tj, pt) = place_joint(&mut t, &format!("{}____tail", b.name), tail);
                // Ends fitted onto one place would leave MakeHuman a bone without length or
                // direction: the head keeps its exact position instead.
                if (pt - ph).length() <= MIN_LENGTH && t.joints.remove(&hj).is_some() {
                    ph = head - lift_v;
                    t.stored.insert(hj.clone(), json!(ph.to_array()));
                    t.placed.insert(hj.clone(), ph);
                    unplaced.push(hj.clone());
                }
                (hj, tj, ph, pt)
            }
        };
        // The third joint of the bone's plane: off the tail along −Z, so that the plane's normal
        // is the bone's X axis; on a mesh, the vertex that comes nearest that.
        let (x, z) = (rot * DVec3::X, rot * DVec3::Z);
        let third_name = t.fresh(&format!("{}____roll", b.name));
        let third = match &fitter {
            Some(f) => match f.roll_vertex(ph, pt, x) {
                Some(v) => {
                    t.joints.insert(third_name.clone(), json!([v]));
                    f.mesh.positions[v as usize]
                }
                None => {
                    let p = pt - z * (tail - head).length();
                    t.stored.insert(third_name.clone(), json!(p.to_array()));
                    unplaced.push(third_name.clone());
                    p
                }
            },
            None => {
                let p = pt - z * (tail - head).length();
                t.stored.insert(third_name.clone(), json!(p.to_array()));
                p
            }
        };
        t.placed.insert(third_name.clone(), third);
        let plane = t.fresh(&format!("{}____plane", b.name));
        t.planes.insert(plane.clone(), json!([hj, tj, third_name]));
        let got = orientation(ph, pt, plane_normal(ph, pt, third));
        match got {
            Some(q) if turn(q, rot) <= SAME_TURN => {}
            Some(q) => turned.push(format!("{} ({:.3}°)", b.name, turn(q, rot).to_degrees())),
            None => turned.push(format!("{} (no rotation)", b.name)),
        }
        m.insert("head".into(), Value::String(hj));
        m.insert("tail".into(), Value::String(tj));
        m.insert("rotation_plane".into(), Value::String(plane));
        bones.insert(b.name.clone(), Value::Object(m));
    }
    if !zero_length.is_empty() {
        diag.loss(
            "mhskel.zero-length",
            format!(
                "{} bone(s) have no length (MakeHuman cannot orient them): written {} cm long along their +Y: {}",
                zero_length.len(),
                ZERO_LENGTH_FIX * 10.0,
                list(&zero_length)
            ),
        );
    }
    if !scaled.is_empty() {
        diag.loss(
            "mhskel.scale",
            format!("MakeHuman bones have no scale; {} bone(s) have a world scale other than 1, dropped: {}", scaled.len(), list(&scaled)),
        );
    }
    if lift != 0.0 {
        diag.loss(
            "mhskel.origin",
            format!(
                "the rig stands with the feet on the ground, {:.1} mm above the base mesh's own origin, where MakeHuman's joints are: every bone is written {:.1} mm lower (--keep-origin if the rig stands at the mesh's origin)",
                lift * 100.0,
                lift * 100.0
            ),
        );
    }
    if fitted_moved > 0 {
        diag.loss(
            "mhskel.fitted",
            format!(
                "{fitted_moved} joint(s) fitted to the base mesh moved, up to {:.2} mm: MakeHuman places a joint only at the mean of base-mesh vertices (a joint cube, a vertex or a vertex pair, the nearest within 1-2 cm)",
                max_moved * 100.0
            ),
        );
    }
    if !unplaced.is_empty() {
        let why = if fitter.is_some() {
            "no joint cube, vertex or vertex pair of the mesh is near enough"
        } else {
            "no base mesh was given; give --mesh base.obj to fit them"
        };
        diag.loss(
            "mhskel.positions",
            format!(
                "{} joint(s) have no base-mesh vertices ({why}): MakeHuman 1.x places them at the origin; skelport reads them back from \"{POSITIONS_KEY}\": {}",
                unplaced.len(),
                list(&unplaced)
            ),
        );
    }
    if !turned.is_empty() {
        diag.loss(
            "mhskel.orientation",
            format!(
                "{} bone(s) cannot keep their orientation as joints and a plane on the base mesh: turned by {}",
                turned.len(),
                list(&turned)
            ),
        );
    }

    let stem = if opts.file_stem.is_empty() { "skelport".to_string() } else { opts.file_stem.clone() };
    let skins: Vec<&skelport_ir::Skin> = d.skins.iter().filter(|s| s.skeleton.index() == si).collect();
    let mut header = src_header;
    if header.is_empty() {
        header.insert("name".into(), sk.name.clone().into());
        header.insert("description".into(), "Skeleton written by skelport".into());
        header.insert("version".into(), 110.into());
    }
    header.shift_remove("weights_file");
    let weights_name = format!("{stem}_weights.mhw");
    if !skins.is_empty() {
        header.insert("weights_file".into(), weights_name.clone().into());
    }
    header.insert("bones".into(), Value::Object(bones));
    header.insert("joints".into(), Value::Object(t.joints));
    header.insert("planes".into(), Value::Object(t.planes));
    if !t.stored.is_empty() {
        header.insert(POSITIONS_KEY.into(), Value::Object(t.stored));
    }
    let main = to_bytes(&canonical(&Value::Object(header)))?;
    let mut out = Output::single(main);
    if skins.len() > 1 {
        diag.loss(
            "mhskel.skins",
            format!("a MakeHuman rig has one weights file; skin \"{}\" is written, {} more are not", skins[0].name, skins.len() - 1),
        );
    }
    geometry_not_written(&d, diag);
    if let Some(skin) = skins.first() {
        out.side_files.push((weights_name, weights_bytes(&d, sk, skin)?));
    }
    Ok(out)
}

/// The plane names a `rotation_plane` names.
fn planes_named(p: &crate::place::RollPlanes) -> Vec<String> {
    match p {
        crate::place::RollPlanes::None => Vec::new(),
        crate::place::RollPlanes::One(s) => vec![s.clone()],
        crate::place::RollPlanes::Many(v) => v.clone(),
    }
}

/// A MakeHuman rig holds no mesh; its weights number the base mesh's vertices. A mesh read with
/// a `.mhskel` is that base mesh (a note); any other is a loss.
fn geometry_not_written(d: &Document, diag: &mut Diagnostics) {
    for m in &d.meshes {
        let from_base = m.ext.raw(NAMESPACE).and_then(|e| e.get("base_vertex_count")).is_some();
        if from_base {
            diag.info_at(
                "mhskel.mesh-not-written",
                Place::named("mesh", &m.name),
                format!(
                    "mesh \"{}\" is MakeHuman's base mesh: a .mhskel refers to it and holds none; read it back with --mesh base.obj",
                    m.name
                ),
            );
        } else {
            diag.loss(
                "mhskel.mesh",
                format!(
                    "a MakeHuman rig holds no mesh: mesh \"{}\" ({} vertices, {} faces) is not written; the .mhw numbers its vertices, so it fits only that mesh",
                    m.name,
                    m.positions.len(),
                    m.faces.len()
                ),
            );
        }
    }
}

/// The `.mhw`: the skin's weights by bone name, in the base mesh's numbering when the mesh was
/// read with a `.mhskel` (helpers left out), pairs four to a line as MakeHuman's files have them.
fn weights_bytes(d: &Document, sk: &skelport_ir::Skeleton, skin: &skelport_ir::Skin) -> Result<Vec<u8>, MhskelError> {
    let mut header = match skin.ext.raw(NAMESPACE) {
        Some(Value::Object(h)) => h.clone(),
        _ => {
            let mut h = Map::new();
            h.insert("description".into(), "Weights written by skelport".into());
            h.insert("name".into(), sk.name.clone().into());
            h.insert("version".into(), 110.into());
            h
        }
    };
    header.shift_remove("weights");
    let base_index: Option<Vec<u32>> = skin
        .mesh
        .and_then(|m| d.get_mesh(m))
        .and_then(|m| m.ext.raw(NAMESPACE))
        .and_then(|e| e.get("kept_runs"))
        .and_then(Value::as_array)
        .map(|runs| {
            runs.iter()
                .filter_map(|r| Some((r.get(0)?.as_u64()? as u32, r.get(1)?.as_u64()? as u32)))
                .flat_map(|(s, n)| s..s.saturating_add(n))
                .collect()
        });
    let mut groups: BTreeMap<&str, Vec<(u32, f64)>> = BTreeMap::new();
    for v in 0..skin.influences.vertex_count() {
        let bv = base_index.as_ref().and_then(|b| b.get(v).copied()).unwrap_or(v as u32);
        for (j, w) in skin.influences.vertex(v) {
            if !(w > 0.0 && w.is_finite()) {
                continue;
            }
            if let Some(b) = skin.joints.get(j as usize).and_then(|b| sk.bones.get(b.index())) {
                groups.entry(b.name.as_str()).or_default().push((bv, w));
            }
        }
    }
    let js = |v: &Value| serde_json::to_string(v).map_err(|e| MhskelError::Write(e.to_string()));
    let mut out = String::from("{\n");
    for (k, v) in canonical(&Value::Object(header)).as_object().into_iter().flatten() {
        out.push_str(&format!("{}: {},\n", js(&Value::String(k.clone()))?, js(v)?));
    }
    out.push_str("\"weights\": {");
    for (gi, (g, pairs)) in groups.iter().enumerate() {
        out.push_str(if gi == 0 { "\n" } else { ",\n" });
        out.push_str(&format!("\t{}: [", js(&Value::String(g.to_string()))?));
        for (k, (v, w)) in pairs.iter().enumerate() {
            out.push_str(if k == 0 {
                "\n\t\t"
            } else if k % 4 == 0 {
                ",\n\t\t"
            } else {
                ", "
            });
            out.push_str(&format!("[{v}, {}]", js(&json!(w))?));
        }
        out.push_str("\n\t]");
    }
    out.push_str("\n}\n}\n");
    Ok(out.into_bytes())
}

/// Sort every object's keys, as MakeHuman's own files have them.
fn canonical(v: &Value) -> Value {
    match v {
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        Value::Object(o) => {
            let sorted: BTreeMap<&String, Value> = o.iter().map(|(k, v)| (k, canonical(v))).collect();
            Value::Object(sorted.into_iter().map(|(k, v)| (k.clone(), v)).collect())
        }
        other => other.clone(),
    }
}

/// Serialize with a 4-space indent and a trailing newline, as MakeHuman writes its rigs.
fn to_bytes(v: &Value) -> Result<Vec<u8>, MhskelError> {
    let mut out = Vec::new();
    let fmt = serde_json::ser::PrettyFormatter::with_indent(b"    ");
    let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
    serde::Serialize::serialize(v, &mut ser).map_err(|e| MhskelError::Write(e.to_string()))?;
    out.push(b'\n');
    Ok(out)
}
