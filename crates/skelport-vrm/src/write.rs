//! IR → VRM 1.0.
//!
//! The document is taken to glTF's frame (+Y up, +Z forward, metres), its humanoid found
//! ([`crate::humanoid::find`]) and checked against VRM's hierarchy rules, turned to face +Z when
//! its left arm is at −X, its near-uniform bone scales made uniform, re-rested into VRM's T-pose
//! ([`skelport_ir::rest::t_pose`], baked), stood on Y = 0, and written by the glTF writer with
//! `extensions.VRMC_vrm` (specVersion, meta, humanoid) and unique node names added.

use crate::error::VrmError;
use crate::humanoid::{self, HumanoidMap, NAMESPACE};
use crate::meta::Meta;
use crate::spec;
use serde_json::{json, Map, Value};
use skelport_ir::rest::{self, HumanBone, Humanoid, Rebind, RestPose};
use skelport_ir::{Axis, DMat4, DVec3, Diagnostics, Document, Frame, Output, Place, WriteOptions};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Largest relative spread of a bone's scale components taken as float noise (files from other
/// tools carry scales like (1, 0.9999982, 1.0000156)): made exactly uniform in place.
const SCALE_SNAP: f64 = 1e-4;

/// The most influences a VRM vertex has: UniVRM and three-vrm read `JOINTS_0`/`WEIGHTS_0` only,
/// and the VRM add-on for Blender keeps four on export.
pub const MAX_INFLUENCES: usize = 4;

/// Lowest vertex further than this from Y = 0 (metres) is moved there.
const GROUND_TOLERANCE: f64 = 1e-4;

pub(crate) fn read_file(p: &std::path::Path, what: &str) -> Result<Vec<u8>, VrmError> {
    // The checked reader: a regular file within the input size limit (a FIFO refused at once).
    skelport_ir::files::read_user_file(p, None).map_err(|e| VrmError::Rig(format!("{}: cannot read the {what}: {e}", p.display())))
}

/// The document as VRM needs it (frame, facing, scales, T-pose, ground), its humanoid and meta.
pub struct Prepared {
    pub doc: Document,
    pub skeleton: skelport_ir::SkeletonId,
    pub humanoid: Humanoid,
    pub meta: Meta,
}

/// Everything [`write`] does before encoding; public so tests and tools can look at the
/// document VRM gets (it is in glTF's frame).
pub fn prepare(doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Prepared, VrmError> {
    let mut doc = doc.in_frame(Frame::GLTF).into_owned();
    let map = match &opts.humanoid_map {
        Some(p) => Some(HumanoidMap::parse(&read_file(p, "humanoid map")?, &p.display().to_string())?),
        None => None,
    };
    let found = humanoid::find(&doc, map.as_ref())?;
    let (sid, h) = (found.skeleton, found.humanoid);
    let si = sid.index();
    diag.info(
        "vrm.humanoid",
        format!(
            "humanoid from {}: {} of {} VRM bones on skeleton \"{}\"",
            found.source,
            h.len(),
            spec::BONES.len(),
            doc.skeletons[si].name
        ),
    );
    humanoid::check_hierarchy(&doc.skeletons[si], &h)?;
    face_plus_z(&mut doc, si, &h, diag);
    uniform_scales(&mut doc, diag)?;
    // A VRM source (1.0, or 0.x migrated) already stands in its author's VRM pose on VRM's ground:
    // kept as it is, as UniVRM's migration keeps it, unless --rest-pose asks.
    let from_vrm = doc.source_format.as_deref() == Some("vrm");
    match opts.rest_pose.unwrap_or(if from_vrm { RestPose::AsIs } else { RestPose::TPose }) {
        RestPose::TPose => {
            let report = rest::t_pose(&mut doc, sid, &h, Rebind::Bake).map_err(|e| VrmError::Rig(e.to_string()))?;
            report_t_pose(&doc, si, &h, &report, diag);
        }
        RestPose::AsIs => {
            let worst = arm_elevations(&doc, si, &h).into_iter().fold(0.0f64, |a, (_, e)| a.max(e.abs()));
            if worst > 1.0 {
                diag.warn(
                    "vrm.not-t-pose",
                    format!("--rest-pose as-is: an upper arm is {worst:.1}° from horizontal; VRM expects a T-pose (drop --rest-pose as-is to make one)"),
                );
            }
        }
    }
    if from_vrm {
        diag.info("vrm.source-pose", "a VRM source: its rest pose and ground kept as they are (--rest-pose t-pose poses it)");
    } else {
        ground(&mut doc, si, diag);
    }
    four_influences(&mut doc, diag);
    let meta = match &opts.vrm_meta {
        Some(p) => Meta::parse(&read_file(p, "VRM meta")?, &p.display().to_string())?,
        None => match doc.ext.raw(NAMESPACE).and_then(|v| v.get("meta")).and_then(Meta::from_value) {
            Some(m) => m,
            None => {
                let name = if opts.file_stem.is_empty() { doc.skeletons[si].name.clone() } else { opts.file_stem.clone() };
                diag.warn(
                    "vrm.meta-placeholder",
                    format!(
                        "no --vrm-meta: meta.name is \"{name}\" and meta.authors is \"unknown (no --vrm-meta given)\"; no licence is assumed: every \
                         permission is at its most restrictive (onlyAuthor, personalNonProfit, credit required, modification prohibited, \
                         redistribution and the allow* uses not allowed); give the real terms with --vrm-meta meta.json"
                    ),
                );
                Meta::placeholder(&name)
            }
        },
    };
    // Kept natively in VRMC_vrm: not again in extras.
    doc.ext.remove(NAMESPACE);
    for sk in &mut doc.skeletons {
        sk.ext.remove(NAMESPACE);
    }
    Ok(Prepared { doc, skeleton: sid, humanoid: h, meta })
}

pub(crate) fn write(doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, VrmError> {
    let p = prepare(doc, opts, diag)?;
    let meta = p.meta.to_json(diag);
    let (si, h) = (p.skeleton.index(), &p.humanoid);
    let mut renamed: Vec<String> = Vec::new();
    let mut edit = |root: &mut Map<String, Value>, layout: &skelport_gltf::NodeLayout| -> Result<(), String> {
        let bones = layout.bones.get(si).filter(|b| !b.is_empty()).ok_or("the humanoid skeleton was not written")?;
        let human_bones: Map<String, Value> = h.iter().map(|(r, b)| (r.name().to_owned(), json!({ "node": bones[b.index()] }))).collect();
        unique_node_names(root, bones, &mut renamed);
        let used = root.entry("extensionsUsed").or_insert_with(|| json!([]));
        if let Some(list) = used.as_array_mut() {
            if !list.iter().any(|e| e == spec::EXTENSION) {
                list.push(json!(spec::EXTENSION));
            }
        }
        let ext = root.entry("extensions").or_insert_with(|| json!({}));
        let vrm = json!({ "specVersion": spec::SPEC_VERSION, "meta": meta, "humanoid": { "humanBones": human_bones } });
        ext.as_object_mut().ok_or("extensions is not an object")?.insert(spec::EXTENSION.into(), vrm);
        Ok(())
    };
    let out = skelport_gltf::write_glb_edited(&p.doc, opts, diag, &mut edit)?;
    if !renamed.is_empty() {
        diag.info("vrm.renamed-nodes", format!("node names made unique, as VRM needs: {}", renamed.join(", ")));
    }
    Ok(out)
}

/// Rename nodes whose name another node already has (the humanoid's bones keep theirs; meshes
/// and added roots yield): VRM needs unique node names.
fn unique_node_names(root: &mut Map<String, Value>, bones: &[usize], renamed: &mut Vec<String>) {
    let Some(nodes) = root.get_mut("nodes").and_then(Value::as_array_mut) else { return };
    let name = |n: &Value| n.get("name").and_then(Value::as_str).unwrap_or("").to_owned();
    let keep: HashSet<usize> = bones.iter().copied().collect();
    // Repeats of one name numbered in linear work (trying `.001`, `.002`, … from the start for
    // each was quadratic in the nodes sharing a name).
    let mut used = skelport_ir::names::UniqueNames::new();
    for n in bones.iter().filter_map(|&i| nodes.get(i)) {
        used.insert(name(n));
    }
    for (i, n) in nodes.iter_mut().enumerate() {
        if keep.contains(&i) {
            continue;
        }
        let base = name(n);
        let base = if base.is_empty() { format!("node{i}") } else { base };
        let candidate = used.unique(&base, skelport_ir::names::Suffix::Dot3);
        if candidate != name(n) {
            renamed.push(format!("node {i} \"{}\" → \"{candidate}\"", name(n)));
            n["name"] = json!(candidate);
        }
    }
}

/// VRM models face +Z, their left at +X. A humanoid whose left upper arm is at −X faces −Z: it is
/// turned half round the up axis (exactly: a change of frame).
fn face_plus_z(doc: &mut Document, si: usize, h: &Humanoid, diag: &mut Diagnostics) {
    let world = doc.skeletons[si].world_matrices();
    let head = |role: HumanBone| world[h[&role].index()].w_axis.truncate();
    let across = head(HumanBone::LeftUpperArm) - head(HumanBone::RightUpperArm);
    let up = head(HumanBone::Head) - head(HumanBone::Hips);
    if across.x < 0.0 {
        let mut facing_back = Frame::GLTF;
        facing_back.forward = Axis::NegZ;
        doc.frame = facing_back;
        doc.convert_frame(Frame::GLTF);
        diag.loss("vrm.turned", "the character faced -Z (its left arm at -X); turned 180° about +Y to face +Z as VRM needs");
    }
    // (Turning about +Y keeps the up direction's y.)
    if up.normalize_or_zero().y < 0.5 {
        diag.warn(
            "vrm.not-upright",
            "the head is not above the hips along +Y: the source's frame may be wrong (VRM is +Y up); the T-pose and ground are made along +Y",
        );
    }
}

/// VRM needs every node's scale positive and uniform. A bone whose scale is within
/// [`SCALE_SNAP`] of uniform (float noise) gets its mean (1 when that close to 1), its own inverse
/// binds absorbing the difference; its children move by at most that fraction of their offsets.
/// Any other bone gets scale 1 and its scale `f` is moved where it changes nothing: into its
/// children's rest (`f · L`) and its inverse bind matrices (`f · IBM`), so every skinning matrix,
/// at rest and in any pose, is what it was. Refused only when a child is turned against the
/// scale's axes (TRS cannot hold the shear).
fn uniform_scales(doc: &mut Document, diag: &mut Diagnostics) -> Result<(), VrmError> {
    let (mut snapped, mut moved) = (0usize, Vec::new());
    for (si, sk) in doc.skeletons.iter_mut().enumerate() {
        let children = sk.children();
        for (i, kids) in children.iter().enumerate() {
            let s = sk.bones[i].rest.scale;
            if s.x == s.y && s.y == s.z && s.x > 0.0 {
                continue;
            }
            let (lo, hi) = (s.min_element(), s.max_element());
            if !(lo > 0.0 && hi.is_finite()) {
                return Err(VrmError::Rig(format!(
                    "bone \"{}\" has scale ({}, {}, {}); VRM needs every scale positive: apply the scale to the rig first",
                    sk.bones[i].name, s.x, s.y, s.z
                )));
            }
            let near = (hi - lo) <= SCALE_SNAP * hi;
            let mean = (s.x + s.y + s.z) / 3.0;
            let u = if near && (mean - 1.0).abs() > SCALE_SNAP { mean } else { 1.0 };
            let f = DMat4::from_scale(s / u);
            let name = sk.bones[i].name.clone();
            for c in kids.iter().filter(|_| !near) {
                let b = &mut sk.bones[c.index()];
                b.rest = skelport_ir::Transform::from_matrix(&(f * b.rest.matrix())).ok_or_else(|| {
                    VrmError::Rig(format!(
                        "bone \"{}\" has scale ({}, {}, {}) and its child \"{}\" is turned against the scale's axes: VRM needs uniform scales and \
                         moving this one into the child would shear it; apply the scale to the rig first",
                        name, s.x, s.y, s.z, b.name
                    ))
                })?;
            }
            sk.bones[i].rest.scale = DVec3::splat(u);
            for skin in doc.skins.iter_mut().filter(|k| k.skeleton.index() == si) {
                for (slot, j) in skin.joints.iter().enumerate() {
                    if j.index() == i {
                        if let Some(m) = skin.inverse_bind.get_mut(slot) {
                            *m = f * *m;
                        }
                    }
                }
            }
            if near {
                snapped += 1;
            } else {
                moved.push(sk.bones[i].name.clone());
            }
        }
    }
    if snapped > 0 {
        diag.info("vrm.uniform-scale", format!("{snapped} bone scales within {SCALE_SNAP} of uniform made exactly uniform, as VRM needs"));
    }
    if !moved.is_empty() {
        diag.loss(
            "vrm.bone-scale",
            format!(
                "{} bones had non-uniform scales, which VRM forbids ({}{}): each now has scale 1 and its scale moved into its children and inverse bind matrices; the skin deforms exactly as before, the bones' own axes lose their scale",
                moved.len(),
                moved.iter().take(6).cloned().collect::<Vec<_>>().join(", "),
                if moved.len() > 6 { ", …" } else { "" }
            ),
        );
    }
    Ok(())
}

/// Each upper arm's angle from horizontal in degrees (head → lower arm head).
pub(crate) fn arm_elevations(doc: &Document, si: usize, h: &Humanoid) -> Vec<(HumanBone, f64)> {
    let world = doc.skeletons[si].world_matrices();
    let up = doc.frame.up.vector();
    [(HumanBone::LeftUpperArm, HumanBone::LeftLowerArm), (HumanBone::RightUpperArm, HumanBone::RightLowerArm)]
        .into_iter()
        .map(|(a, b)| (a, rest::elevation_degrees(world[h[&a].index()].w_axis.truncate(), world[h[&b].index()].w_axis.truncate(), up)))
        .collect()
}

fn report_t_pose(doc: &Document, si: usize, h: &Humanoid, r: &rest::RestReport, diag: &mut Diagnostics) {
    if r.turned.is_empty() {
        diag.info("rest.t-pose", "already in VRM's T-pose: no bone turned");
        return;
    }
    let sk = &doc.skeletons[si];
    let role_of: HashMap<&str, HumanBone> = h.iter().map(|(r, b)| (sk.bones[b.index()].name.as_str(), *r)).collect();
    let mut turned = r.turned.clone();
    turned.sort_by(|a, b| b.1.total_cmp(&a.1));
    let top: Vec<String> = turned
        .iter()
        .take(4)
        .map(|(n, d)| match role_of.get(n.as_str()) {
            Some(role) => format!("{role} \"{n}\" {d:.1}°"),
            None => format!("\"{n}\" {d:.1}°"),
        })
        .collect();
    let arms: Vec<String> = arm_elevations(doc, si, h).into_iter().map(|(r, e)| format!("{r} {e:.4}°")).collect();
    diag.loss(
        "rest.t-pose",
        format!(
            "rest pose changed to VRM's T-pose: {} bones turned ({}{}), the mesh re-bound in that pose ({} vertices moved; upper arms from horizontal: {}); \
             vertices weighted to bones the T-pose turned differently (shoulders, hips) deform slightly differently under later poses (docs/formats/vrm.md)",
            turned.len(),
            top.join(", "),
            if turned.len() > 4 { ", …" } else { "" },
            r.vertices_moved,
            arms.join(", ")
        ),
    );
    if !r.skins_without_mesh.is_empty() {
        diag.loss(
            "rest.skin-without-mesh",
            format!(
                "skins {} have weights but no mesh here: their inverse binds now fit the T-pose, not that mesh",
                r.skins_without_mesh.join(", ")
            ),
        );
    }
}

/// Stand the model on Y = 0 (VRM's ground): move everything up or down so the lowest point of
/// the humanoid, its skinned vertices and its bone heads, is at 0. (Bone heads count too: a file
/// whose skinned meshes do not reach the feet, such as RobotExpressive's skinned hands, still
/// stands on its feet; a skeleton without a mesh stands on its lowest joint.)
/// Keep each vertex's [`MAX_INFLUENCES`] largest weights, renormalised, so the glTF writer
/// writes one `JOINTS_0`/`WEIGHTS_0` set that every VRM reader takes whole; a loss line names
/// the vertices cut and the largest weight dropped (as a share of its vertex's total).
fn four_influences(doc: &mut Document, diag: &mut Diagnostics) {
    for skin in &mut doc.skins {
        let (mut vertices, mut largest) = (0usize, 0.0f64);
        let mut row: Vec<f64> = Vec::new();
        for v in 0..skin.influences.vertex_count() {
            row.clear();
            row.extend(skin.influences.vertex(v).map(|(_, w)| w).filter(|w| *w > 0.0 && w.is_finite()));
            if row.len() > MAX_INFLUENCES {
                let sum: f64 = row.iter().sum();
                row.sort_by(|a, b| b.total_cmp(a));
                vertices += 1;
                largest = largest.max(row[MAX_INFLUENCES] / sum);
            }
        }
        if vertices == 0 {
            continue;
        }
        // Zero weights are no influence: dropped first, so they never take one of the four places.
        skin.influences.prune(0.0);
        skin.influences.limit(MAX_INFLUENCES);
        diag.loss_at(
            "vrm.max-influences",
            Place::named("skin", &skin.name),
            format!(
                "skin \"{}\": {vertices} vertices have more than {MAX_INFLUENCES} influences, which VRM readers do not read; each keeps its {MAX_INFLUENCES} largest, renormalised (the largest weight dropped: {largest:.4})",
                skin.name
            ),
        );
    }
}

fn ground(doc: &mut Document, si: usize, diag: &mut Diagnostics) {
    let mut low = doc.skeletons[si].world_matrices().iter().map(|m| m.w_axis.y).fold(f64::INFINITY, f64::min);
    let mut vertices = 0usize;
    for s in doc.skins.iter().filter(|s| s.skeleton.index() == si) {
        if let Some(m) = doc.mesh_of(s) {
            for p in &m.positions {
                low = low.min(s.bind_shape.transform_point3(*p).y);
            }
            vertices += m.positions.len();
        }
    }
    if !low.is_finite() {
        return;
    }
    if vertices == 0 {
        diag.info(
            "vrm.ground-joints",
            "no skinned mesh: the lowest joint is put on Y = 0 (the soles, which the file does not have, may be lower)",
        );
    }
    if low.abs() <= GROUND_TOLERANCE {
        return;
    }
    let d = DVec3::new(0.0, -low, 0.0);
    let (t, back) = (DMat4::from_translation(d), DMat4::from_translation(-d));
    for sk in &mut doc.skeletons {
        for b in sk.bones.iter_mut().filter(|b| b.parent.is_none()) {
            b.rest.translation += d;
        }
    }
    let mut skinned = vec![false; doc.meshes.len()];
    for s in &mut doc.skins {
        s.bind_shape = t * s.bind_shape;
        for ibm in &mut s.inverse_bind {
            *ibm *= back;
        }
        if let Some(m) = s.mesh.map(skelport_ir::MeshId::index).filter(|&m| m < skinned.len()) {
            skinned[m] = true;
        }
    }
    for (_, mesh) in doc.meshes.iter_mut().enumerate().filter(|(m, _)| !skinned[*m]) {
        for p in &mut mesh.positions {
            *p += d;
        }
    }
    diag.loss("vrm.grounded", format!("moved the model {:+.1} mm along Y so its lowest point is on Y = 0, as VRM needs", d.y * 1000.0));
}

/// Role → node index of a written VRM, for tests and tools: `extensions.VRMC_vrm.humanoid`.
pub fn human_bones(json: &Value) -> BTreeMap<String, u64> {
    json.pointer("/extensions/VRMC_vrm/humanoid/humanBones")
        .and_then(Value::as_object)
        .map(|o| o.iter().filter_map(|(k, v)| v.get("node").and_then(Value::as_u64).map(|n| (k.clone(), n))).collect())
        .unwrap_or_default()
}
