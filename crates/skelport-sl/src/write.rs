//! IR → `.dae`, written for the Second Life importer.
//!
//! When every skin joint (or, without skins, every bone) has a legal SL name the file is an **SL
//! rig**: Z-up metres, joint nodes `id = name = sid =` the canonical SL name with a
//! `<matrix sid="transform">`, the SL skeleton's hierarchy whatever the source's was (missing
//! ancestors added at their default positions), `<skeleton>#mPelvis</skeleton>`, and skins within
//! the importer's rules (≤ 110 joints, ≤ 4 influences of at least 0.001, every vertex weighted).
//! Joints sit at the source's positions (`--default-joints`: at the SL default `pos`); the
//! inverse bind matrices carry the source's bind pose with the source bone rotations folded in
//! (SL joints are axis-aligned at rest), so the mesh binds exactly where the source had it.
//!
//! Anything else is written as **generic Collada** (the IR's hierarchy and rest transforms) with a
//! loss saying the SL importer will refuse its joint names.

use crate::error::SlError;
use crate::importer::{FACES_PER_MODEL, FACE_SPLIT};
use crate::skeleton::{SlJoint, SlSkeleton, MAX_INFLUENCES, MAX_JOINTS_PER_SKIN, MIN_WEIGHT};
use skelport_ir::names::{Suffix, UniqueNames};
use skelport_ir::{BoneId, DMat4, DVec2, DVec3, Diagnostics, Document, Frame, Influences, Mesh, Place, Skin, WriteOptions};
use std::collections::{HashMap, HashSet};
use std::fmt::Write as _;

/// One scene node to write: name, parent (index into the list), local matrix.
struct SceneJoint {
    name: String,
    id: String,
    parent: Option<usize>,
    local: DMat4,
}

/// Where each IR bone went.
struct Rig {
    joints: Vec<SceneJoint>,
    /// IR bone → index in `joints` (bones dropped from an SL rig have none).
    of_bone: Vec<Option<usize>>,
    /// SL rigs: each joint's default rotation and scale (identity for bones).
    rs: Vec<DMat4>,
    sl: bool,
    /// SL rigs: per IR bone, how far the avatar's default joint is from the source's joint
    /// (avatar space): what a vertex bound to it moves by when the upload leaves the joints
    /// at the defaults. Zero for bones that are not SL joints.
    offset: Vec<DVec3>,
}

/// Escape for text and double-quoted attributes: the workspace's one XML escaping. Bone names XML
/// cannot hold are replaced, with a loss line, before any is written; other names (meshes,
/// skins) have such characters replaced here.
fn esc(s: &str) -> String {
    skelport_ir::xml::escape_attr(&skelport_ir::xml::replace_unholdable(s)).into_owned()
}

/// An XML ID (NCName) for `base`, unique in `taken`.
/// Names that only differ in characters an ID cannot hold become one base (`a#` and `a$` are
/// both `a_`): [`UniqueNames`] numbers their repeats in linear work.
fn fresh_id(base: &str, taken: &mut UniqueNames) -> String {
    let mut s: String = base.chars().map(|c| if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' }).collect();
    if s.is_empty() || !s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') {
        s.insert(0, '_');
    }
    taken.unique(&s, Suffix::Dot3)
}

/// Shortest text that reads back to the same f64 (zmij, serde_json's float printer); `0` for ±0 and
/// integers without `.0`, as Collada exporters write them.
fn num(out: &mut String, v: f64) {
    if v == 0.0 {
        out.push('0');
    } else {
        let mut b = zmij::Buffer::new();
        let s = b.format(v);
        out.push_str(s.strip_suffix(".0").unwrap_or(s));
    }
}

fn nums<I: IntoIterator<Item = f64>>(out: &mut String, it: I) {
    let mut first = true;
    for v in it {
        if !first {
            out.push(' ');
        }
        first = false;
        num(out, v);
    }
}

fn ints<I: IntoIterator<Item = u32>>(out: &mut String, it: I) {
    let mut first = true;
    for v in it {
        if !first {
            out.push(' ');
        }
        first = false;
        push_u32(out, v);
    }
}

/// Decimal digits of `v`: index lists are most of a written file, and `write!` goes through
/// `core::fmt` (a `Formatter`, padding) for each one, several times the cost of this loop.
fn push_u32(out: &mut String, mut v: u32) {
    let mut buf = [0u8; 10];
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    // Only ASCII digits were written.
    out.push_str(std::str::from_utf8(&buf[i..]).unwrap_or_default());
}

/// Row-major, as Collada stores matrices.
fn matrix(out: &mut String, m: &DMat4) {
    nums(out, (0..4).flat_map(|r| (0..4).map(move |c| m.col(c)[r])));
}

fn sl_rig(doc: &Document, sl: &SlSkeleton, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Rig, SlError> {
    let sk = &doc.skeletons[0];
    let world = sk.world_matrices();
    let mut joint_of: Vec<Option<SlJoint>> = vec![None; sk.bones.len()];
    let mut bone_of: HashMap<SlJoint, BoneId> = HashMap::new();
    let mut dropped = Vec::new();
    for (i, b) in sk.bones.iter().enumerate() {
        // mRoot and mScreen are the viewer's joints too (attachment points hang from them).
        match sl.joint(&b.name) {
            Some(j) => {
                if let Some(prev) = bone_of.insert(j, BoneId::from_index(i)) {
                    return Err(SlError::write(format!(
                        "bones \"{}\" and \"{}\" are both the SL joint {}; rename or remove one (a --map can merge them)",
                        sk.bones[prev.index()].name,
                        b.name,
                        sl.name(j)
                    )));
                }
                joint_of[i] = Some(j);
            }
            None => dropped.push(b.name.clone()),
        }
    }
    if !dropped.is_empty() {
        let shown: Vec<&str> = dropped.iter().take(12).map(String::as_str).collect();
        diag.loss(
            "dae-not-sl-joint",
            format!(
                "{} bone(s) are not SL joints and are left out (their children hang from their SL parents): {}{}",
                dropped.len(),
                shown.join(", "),
                if dropped.len() > shown.len() { ", …" } else { "" }
            ),
        );
    }
    let mut set: HashSet<SlJoint> = bone_of.keys().copied().collect();
    for j in bone_of.keys() {
        let mut p = sl.parent(*j);
        while let Some(a) = p {
            if !set.insert(a) {
                break;
            }
            p = sl.parent(a);
        }
    }
    let mut order: Vec<SlJoint> = set.into_iter().collect();
    order.sort_by_key(|&j| sl.rank(j));
    let mut index: HashMap<SlJoint, usize> = HashMap::new();
    let mut file_world: Vec<DVec3> = Vec::with_capacity(order.len());
    let mut joints = Vec::with_capacity(order.len());
    let mut world_rs = Vec::with_capacity(order.len());
    let mut offset = vec![DVec3::ZERO; sk.bones.len()];
    for &j in &order {
        let parent = sl.parent(j).and_then(|p| index.get(&p).copied());
        let parent_world = parent.map(|p| file_world[p]).unwrap_or(DVec3::ZERO);
        let default = sl.default_pos(j);
        let src = bone_of.get(&j).map(|b| world[b.index()].w_axis.truncate());
        let local = match src {
            Some(w) if !opts.default_joints => w - parent_world,
            _ => default,
        };
        if let Some(b) = bone_of.get(&j) {
            offset[b.index()] = sl.default_world_pos(j) - world[b.index()].w_axis.truncate();
        }
        index.insert(j, joints.len());
        file_world.push(parent_world + local);
        let name = sl.name(j);
        let d = sl.default_rest(j);
        let rs = DMat4::from_scale_rotation_translation(d.scale, d.rotation, DVec3::ZERO);
        world_rs.push(rs);
        joints.push(SceneJoint { id: name.clone(), name, parent, local: DMat4::from_translation(local) * rs });
    }
    let of_bone = joint_of.iter().map(|j| j.and_then(|j| index.get(&j).copied())).collect();
    Ok(Rig { joints, of_bone, rs: world_rs, sl: true, offset })
}

fn generic_rig(doc: &Document, taken: &mut UniqueNames) -> Rig {
    let sk = &doc.skeletons[0];
    let joints = sk
        .bones
        .iter()
        .map(|b| SceneJoint {
            name: b.name.clone(),
            id: fresh_id(&b.name, taken),
            parent: b.parent.map(|p| p.index()),
            local: b.rest.matrix(),
        })
        .collect();
    Rig { joints, of_bone: (0..sk.bones.len()).map(Some).collect(), rs: Vec::new(), sl: false, offset: Vec::new() }
}

/// The farthest a skinned vertex gets from where the source binds it when the avatar's joints
/// sit at the SL defaults: each vertex moves by the weighted sum of its joints' offsets
/// (bind = W_sl⁻¹·J·IB, so the default joint D gives D·W_sl⁻¹ = a pure translation by the
/// offset: SL joints have the same rest rotation at both places). `(distance, vertex)`.
fn worst_vertex(inf: &Influences, slots: &[DVec3]) -> (f64, usize) {
    let mut worst = (0.0f64, 0usize);
    for v in 0..inf.vertex_count() {
        let d: DVec3 = inf.vertex(v).map(|(s, w)| slots.get(s as usize).copied().unwrap_or(DVec3::ZERO) * w).sum();
        if d.length() > worst.0 {
            worst = (d.length(), v);
        }
    }
    worst
}

/// What the user sees in the SL upload of a rig whose joints are `joints_far` (metres, joint)
/// from the SL defaults and whose vertices move by up to `vertex_far` (metres, vertex, mesh)
/// when the upload leaves the joints at the defaults: a note when the file keeps the source's
/// joints, a loss when `--default-joints` put them at the defaults.
fn joint_positions_note(opts: &WriteOptions, joints_far: (f64, String), vertex_far: Option<(f64, usize, String)>, diag: &mut Diagnostics) {
    if joints_far.0 <= crate::skeleton::JOINT_OFFSET_THRESHOLD {
        return;
    }
    let mm = |m: f64| format!("{:.1} mm", m * 1000.0);
    let moved = match &vertex_far {
        Some((d, v, mesh)) => format!("vertices move up to {} (vertex {v} of mesh \"{mesh}\")", mm(*d)),
        None => "the joints sit at the defaults".into(),
    };
    if opts.default_joints {
        diag.loss(
            "dae-joint-positions",
            format!(
                "joints written at the SL default positions (--default-joints); the source's are up to {} away ({}): uploaded with or without \"Include joint positions\", the mesh is bound to the avatar's default joints and {moved}; convert without --default-joints to keep the source's joints",
                mm(joints_far.0),
                joints_far.1
            ),
        );
    } else {
        diag.info(
            "dae-joint-positions",
            format!(
                "joints kept at the source's positions, up to {} from the SL defaults ({}): uploaded with \"Include joint positions\" ticked, the avatar takes these joints and the mesh rests as in the source; unticked, the mesh is bound to the avatar's default joints and {moved}",
                mm(joints_far.0),
                joints_far.1
            ),
        );
    }
}

/// Give unweighted vertices the influences of the nearest weighted vertex.
fn fix_unweighted(lists: &mut [Vec<(u32, f64)>], positions: &[DVec3]) -> usize {
    let weighted: Vec<usize> = (0..lists.len()).filter(|&v| !lists[v].is_empty()).collect();
    let Some(&first) = weighted.first() else { return 0 };
    let at = |v: usize| positions.get(v).copied().unwrap_or(DVec3::ZERO);
    // An R*-tree instead of a scan over every weighted vertex for each unweighted one (that was
    // 2 × 10⁹ distance tests for a 65,535-vertex mesh half unweighted).
    let tree = rstar::RTree::bulk_load(
        weighted.iter().filter(|&&v| at(v).is_finite()).map(|&v| rstar::primitives::GeomWithData::new(at(v).to_array(), v)).collect(),
    );
    let mut fixed = 0;
    for v in 0..lists.len() {
        if lists[v].is_empty() {
            let best = nearest_lowest(&tree, at(v)).unwrap_or(first);
            lists[v] = lists[best].clone();
            fixed += 1;
        }
    }
    fixed
}

/// The nearest point's vertex; among equally near ones the lowest vertex, as a scan in vertex
/// order picks, so the output does not depend on the tree's layout.
fn nearest_lowest(tree: &rstar::RTree<rstar::primitives::GeomWithData<[f64; 3], usize>>, p: DVec3) -> Option<usize> {
    if !p.is_finite() {
        return None;
    }
    let mut it = tree.nearest_neighbor_iter_with_distance_2(&p.to_array());
    let (first, d) = it.next()?;
    Some(it.take_while(|(_, e)| *e == d).map(|(g, _)| g.data).fold(first.data, usize::min))
}

/// Apply the SL importer's weight rules to one skin, or fail naming the vertices.
fn sl_influences(skin: &Skin, mesh: &Mesh, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Influences, SlError> {
    let limit = match opts.max_influences {
        Some(n) if n > MAX_INFLUENCES => {
            diag.warn(
                "dae-max-influences",
                format!("--max-influences {n} is above the SL importer's {MAX_INFLUENCES}; {MAX_INFLUENCES} used"),
            );
            MAX_INFLUENCES
        }
        Some(n) => n.max(1),
        None => MAX_INFLUENCES,
    };
    let mut inf = skin.influences.clone();
    inf.prune(0.0);
    let over = (0..inf.vertex_count()).filter(|&v| inf.vertex(v).count() > limit).count();
    if over > 0 {
        inf.limit(limit);
        diag.loss_at(
            "dae-influences",
            Place::named("skin", &skin.name),
            format!(
                "skin \"{}\": {over} vertex(es) had more than {limit} influences; the {limit} largest kept and renormalized",
                skin.name
            ),
        );
    }
    inf.normalize();
    // Kept as they are: the viewer raises a weight below 0.001 to 0.001 when it decodes the
    // upload (llvolume.cpp LLVolume::unpackVolumeFacesInternal clamps to [0.001, 0.999]); dropping them
    // here would change the file for nothing.
    let small = inf.weights.iter().filter(|&&w| w < MIN_WEIGHT).count();
    if small > 0 {
        diag.info_at(
            "dae-small-weights",
            Place::named("skin", &skin.name),
            format!(
                "skin \"{}\": {small} weight(s) below {MIN_WEIGHT} written as they are; the viewer raises them to {MIN_WEIGHT} when it decodes the upload",
                skin.name
            ),
        );
    }
    let mut lists = inf.to_lists();
    let unweighted: Vec<usize> = (0..lists.len()).filter(|&v| lists[v].is_empty()).collect();
    if !unweighted.is_empty() {
        if opts.fix {
            let n = fix_unweighted(&mut lists, &mesh.positions);
            if n < unweighted.len() {
                return Err(SlError::write(format!("skin \"{}\" has no weighted vertex to copy weights from", skin.name)));
            }
            diag.warn_at(
                "dae-fixed-unweighted",
                Place::named("skin", &skin.name),
                format!("skin \"{}\": {n} unweighted vertex(es) given their nearest weighted neighbour's weights (--fix)", skin.name),
            );
        } else {
            let shown: Vec<String> = unweighted.iter().take(10).map(|v| v.to_string()).collect();
            return Err(SlError::write(format!(
                "skin \"{}\": {} vertex(es) have no weights (vertex {}{}); the SL importer would bind them to joint 0 silently: weight them, or pass --fix to copy the nearest weighted vertex's weights",
                skin.name,
                unweighted.len(),
                shown.join(", "),
                if unweighted.len() > shown.len() { ", …" } else { "" }
            )));
        }
    }
    Ok(Influences::from_lists(lists))
}

/// The skins written as SL skins: of the first skeleton, with a mesh.
fn skinned_skins(doc: &Document) -> Vec<usize> {
    doc.skins.iter().enumerate().filter(|(_, s)| s.skeleton.index() == 0 && s.mesh.is_some()).map(|(i, _)| i).collect()
}

/// The names an SL rig needs legal: every joint of the `skinned` skins, or, without skins, every
/// bone.
fn rig_names<'a>(doc: &'a Document, skinned: &[usize]) -> Vec<&'a str> {
    let Some(sk) = doc.skeletons.first() else { return Vec::new() };
    if skinned.is_empty() {
        sk.bones.iter().map(|b| b.name.as_str()).collect()
    } else {
        skinned.iter().flat_map(|&i| doc.skins[i].joints.iter().filter_map(|b| sk.bones.get(b.index())).map(|b| b.name.as_str())).collect()
    }
}

/// Of `names` ([`rig_names`]), those that keep the document from being an SL rig: skin joints
/// that are not legal skin-joint names (mRoot and mScreen are not), or, without skins, bones that
/// are not SL joints (a skeleton alone may hold the viewer's own joints).
fn illegal_names<'a>(names: &[&'a str], skinned: bool, sl: &SlSkeleton) -> Vec<&'a str> {
    let legal = |n: &str| if skinned { sl.resolve(n).is_some() } else { sl.joint(n).is_some() };
    let mut out: Vec<&str> = names.iter().copied().filter(|n| !legal(n)).collect();
    out.dedup();
    out
}

/// The joint names that keep `doc` from being an SL rig (the writer's `dae-not-sl`, and
/// `validate --target sl`'s `NotSlRig`). Empty: an SL rig, or no skeleton.
pub(crate) fn not_sl_joints<'a>(doc: &'a Document, sl: &SlSkeleton) -> Vec<&'a str> {
    let skinned = skinned_skins(doc);
    illegal_names(&rig_names(doc, &skinned), !skinned.is_empty(), sl)
}

/// Write the document as a `.dae` string.
pub fn write(doc: &Document, opts: &WriteOptions, sl: &SlSkeleton, diag: &mut Diagnostics) -> Result<String, SlError> {
    if doc.skeletons.is_empty() && doc.meshes.is_empty() {
        return Err(SlError::write("the document has no skeleton and no mesh: nothing to write"));
    }
    let skinned = skinned_skins(doc);
    // An SL rig when every skin joint (or, without skins, every bone) has a legal SL name.
    let names = rig_names(doc, &skinned);
    let not_sl = illegal_names(&names, !skinned.is_empty(), sl);
    let sl_names = !names.is_empty() && not_sl.is_empty();
    let mut doc = doc.clone();
    for sk in &mut doc.skeletons {
        skelport_ir::xml::make_names_holdable(sk, "dae-name", "Collada", diag);
    }
    // SL rigs are Second Life's frame; generic Collada is Z-up facing −Y, as Blender exports it
    // and as the reader takes an unknown Z_UP file.
    doc.convert_frame(if sl_names { Frame::SECOND_LIFE } else { Frame::BLENDER });
    if doc.skeletons.len() > 1 {
        diag.loss("dae-skeletons", format!("{} skeletons: only the first (\"{}\") is written", doc.skeletons.len(), doc.skeletons[0].name));
    }
    let mut taken = UniqueNames::new();
    for (i, s) in doc.skins.iter().enumerate() {
        if !skinned.contains(&i) {
            diag.loss_at(
                "dae-skin-dropped",
                Place::named("skin", &s.name),
                format!("skin \"{}\" has no mesh or belongs to another skeleton: not written", s.name),
            );
        }
    }
    let rig = if doc.skeletons.is_empty() {
        Rig { joints: Vec::new(), of_bone: Vec::new(), rs: Vec::new(), sl: false, offset: Vec::new() }
    } else if sl_names {
        let r = sl_rig(&doc, sl, opts, diag)?;
        for j in &r.joints {
            taken.insert(j.id.clone());
        }
        r
    } else {
        let shown: Vec<&str> = not_sl.iter().copied().take(8).collect();
        // Empty skeletons (a document of plain meshes) have no joint names to be wrong.
        if !shown.is_empty() {
            diag.loss(
                "dae-not-sl",
                format!(
                    "joint names are not SL joint names (e.g. {}): written as generic Collada that the SL importer refuses; use --map (e.g. mpfb-game_engine-to-sl) for an SL rig",
                    shown.join(", ")
                ),
            );
        }
        generic_rig(&doc, &mut taken)
    };

    let mut o = String::with_capacity(1 << 16);
    o.push_str("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n");
    o.push_str("<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n");
    o.push_str("  <asset>\n    <contributor>\n");
    let _ = writeln!(o, "      <authoring_tool>skelport {}</authoring_tool>", env!("CARGO_PKG_VERSION"));
    // A fixed timestamp keeps output reproducible (same input, same bytes).
    o.push_str("    </contributor>\n    <created>1970-01-01T00:00:00Z</created>\n    <modified>1970-01-01T00:00:00Z</modified>\n");
    o.push_str("    <unit name=\"meter\" meter=\"1\"/>\n    <up_axis>Z_UP</up_axis>\n  </asset>\n");
    let material = "skelport-material";
    taken.insert(material);
    taken.insert("skelport-effect");
    if !doc.meshes.is_empty() {
        o.push_str("  <library_effects>\n    <effect id=\"skelport-effect\">\n      <profile_COMMON>\n        <technique sid=\"common\">\n          <lambert>\n            <diffuse>\n              <color sid=\"diffuse\">0.8 0.8 0.8 1</color>\n            </diffuse>\n          </lambert>\n        </technique>\n      </profile_COMMON>\n    </effect>\n  </library_effects>\n");
        o.push_str("  <library_materials>\n    <material id=\"skelport-material\" name=\"skelport\">\n      <instance_effect url=\"#skelport-effect\"/>\n    </material>\n  </library_materials>\n");
    }
    // Geometries.
    let mut geo_ids = Vec::with_capacity(doc.meshes.len());
    if !doc.meshes.is_empty() {
        o.push_str("  <library_geometries>\n");
        for m in &doc.meshes {
            let g = fresh_id(&format!("{}-mesh", m.name), &mut taken);
            // The SL importer reads one texture coordinate set (the last TEXCOORD input of a
            // primitive: lldaeloader.cpp get_dom_sources), so an SL rig gets the first.
            let sets = if rig.sl { 1 } else { usize::MAX };
            if m.uvs.len() > sets {
                diag.loss_at(
                    "dae-uv-sets",
                    Place::named("mesh", &m.name),
                    format!(
                        "mesh \"{}\": {} texture coordinate sets; the SL importer reads one, so only the first (\"{}\") is written",
                        m.name,
                        m.uvs.len(),
                        m.uvs[0].name
                    ),
                );
            }
            if rig.sl {
                sl_faces(m, diag)?;
            }
            write_geometry(&mut o, &g, m, material, sets, rig.sl);
            geo_ids.push(g);
        }
        o.push_str("  </library_geometries>\n");
    }
    // Controllers.
    let mut ctl_ids: Vec<(usize, String)> = Vec::new();
    let mut vertex_far: Option<(f64, usize, String)> = None;
    if !skinned.is_empty() {
        o.push_str("  <library_controllers>\n");
        let world = doc.skeletons[0].world_matrices();
        for &si in &skinned {
            let skin = &doc.skins[si];
            let mi = skin.mesh.expect("filtered").index();
            let mesh = &doc.meshes[mi];
            if skin.vertex_count() != mesh.positions.len() {
                return Err(SlError::write(format!(
                    "skin \"{}\" weights {} vertices but its mesh \"{}\" has {}",
                    skin.name,
                    skin.vertex_count(),
                    mesh.name,
                    mesh.positions.len()
                )));
            }
            let mut inf = if rig.sl { sl_influences(skin, mesh, opts, diag)? } else { generic_influences(skin, opts, diag) };
            if rig.sl {
                // LLModel::getJointInfluences keys weights by position: report what it merges.
                let lists: Vec<Vec<(i64, f64)>> =
                    (0..inf.vertex_count()).map(|v| inf.vertex(v).map(|(j, w)| (i64::from(j), w)).collect()).collect();
                let lost = crate::importer::shared_position_losses(&mesh.positions, &lists);
                if !lost.is_empty() {
                    let shown: Vec<String> = lost.iter().take(8).map(|v| v.to_string()).collect();
                    diag.loss_at(
                        "dae-shared-position-weights",
                        Place::named("skin", &skin.name),
                        format!(
                            "skin \"{}\": {} vertex(es) share a position with a vertex weighted otherwise (vertex {}{}); the SL importer keys weights by position and gives them that vertex's weights",
                            skin.name,
                            lost.len(),
                            shown.join(", "),
                            if lost.len() > shown.len() { ", …" } else { "" }
                        ),
                    );
                }
                let slots: Vec<DVec3> = skin.joints.iter().map(|b| rig.offset.get(b.index()).copied().unwrap_or(DVec3::ZERO)).collect();
                let (d, v) = worst_vertex(&inf, &slots);
                if vertex_far.as_ref().is_none_or(|w| d > w.0) {
                    vertex_far = Some((d, v, mesh.name.clone()));
                }
            }
            // Joint list: names and inverse binds.
            let mut joints: Vec<(String, DMat4)> = Vec::with_capacity(skin.joints.len());
            for (k, b) in skin.joints.iter().enumerate() {
                let j = rig.of_bone[b.index()]
                    .ok_or_else(|| SlError::write(format!("skin \"{}\": joint {} has no scene node", skin.name, b)))?;
                let ib = skin.inverse_bind.get(k).copied().unwrap_or(DMat4::IDENTITY);
                let ib = if rig.sl {
                    // Fold the source joint's rest rotation and scale into the inverse bind: the SL
                    // joint has its own rest frame W (axis-aligned for bones), so W⁻¹·J·IB keeps
                    // the mesh where the source's J·IB had it.
                    let w = world[b.index()];
                    let w_sl = DMat4::from_translation(w.w_axis.truncate()) * rig.rs[j];
                    w_sl.inverse() * w * ib
                } else {
                    ib
                };
                joints.push((if rig.sl { rig.joints[j].name.clone() } else { rig.joints[j].id.clone() }, ib));
            }
            if rig.sl && joints.len() > MAX_JOINTS_PER_SKIN {
                // Unused joints first go.
                let used: HashSet<u32> = inf.joints.iter().copied().collect();
                let keep: Vec<usize> = (0..joints.len()).filter(|&k| used.contains(&(k as u32))).collect();
                if keep.len() > MAX_JOINTS_PER_SKIN {
                    return Err(SlError::write(format!(
                        "skin \"{}\" is weighted to {} joints; the SL importer takes at most {MAX_JOINTS_PER_SKIN} per skin: merge bones (a --map drops unmapped bones into their parents) or split the mesh",
                        skin.name,
                        keep.len()
                    )));
                }
                let mut map = vec![u32::MAX; joints.len()];
                for (n, &k) in keep.iter().enumerate() {
                    map[k] = n as u32;
                }
                inf.remap_slots(&map);
                joints = keep.iter().map(|&k| joints[k].clone()).collect();
            }
            let c = fresh_id(&format!("{}-skin", skin.name), &mut taken);
            write_controller(&mut o, &c, &geo_ids[mi], &mesh.name, skin, &joints, &inf);
            ctl_ids.push((si, c));
        }
        o.push_str("  </library_controllers>\n");
    }
    if rig.sl {
        let bones = &doc.skeletons[0].bones;
        let far =
            rig.offset
                .iter()
                .zip(bones)
                .fold((0.0f64, String::new()), |w, (o, b)| if o.length() > w.0 { (o.length(), b.name.clone()) } else { w });
        joint_positions_note(opts, far, vertex_far, diag);
    }
    // The scene.
    o.push_str("  <library_visual_scenes>\n    <visual_scene id=\"Scene\" name=\"Scene\">\n");
    let roots: Vec<String> = rig.joints.iter().filter(|j| j.parent.is_none()).map(|j| j.id.clone()).collect();
    if !rig.joints.is_empty() {
        let armature = fresh_id(if rig.sl { "Avatar" } else { &doc.skeletons[0].name }, &mut taken);
        let _ = writeln!(o, "      <node id=\"{armature}\" name=\"{}\" type=\"NODE\">", esc(&armature));
        write_joints(&mut o, &rig.joints);
        o.push_str("      </node>\n");
    }
    // Every node name unique: the importer finds joints by `name` over every scene node when a
    // file has no <skeleton>, so a mesh node named like a joint would be taken for it.
    let mut names: HashSet<String> = rig.joints.iter().map(|j| j.name.clone()).collect();
    for (mi, m) in doc.meshes.iter().enumerate() {
        let node = fresh_id(&m.name, &mut taken);
        let name = if names.contains(&m.name) { node.clone() } else { m.name.clone() };
        if name != m.name {
            diag.info_at(
                "dae-renamed-node",
                Place::named("mesh", &m.name),
                format!("mesh \"{}\" has a joint's name; its node is named \"{name}\"", m.name),
            );
        }
        names.insert(name.clone());
        let _ = writeln!(o, "      <node id=\"{node}\" name=\"{}\" type=\"NODE\">", esc(&name));
        let mut any = false;
        for (_, c) in ctl_ids.iter().filter(|(si, _)| doc.skins[*si].mesh.map(skelport_ir::MeshId::index) == Some(mi)) {
            any = true;
            let _ = writeln!(o, "        <instance_controller url=\"#{c}\">");
            for r in &roots {
                let _ = writeln!(o, "          <skeleton>#{r}</skeleton>");
            }
            bind_material(&mut o, material);
            o.push_str("        </instance_controller>\n");
        }
        if !any {
            let _ = writeln!(o, "        <instance_geometry url=\"#{}\">", geo_ids[mi]);
            bind_material(&mut o, material);
            o.push_str("        </instance_geometry>\n");
        }
        o.push_str("      </node>\n");
    }
    o.push_str(
        "    </visual_scene>\n  </library_visual_scenes>\n  <scene>\n    <instance_visual_scene url=\"#Scene\"/>\n  </scene>\n</COLLADA>\n",
    );
    Ok(o)
}

fn generic_influences(skin: &Skin, opts: &WriteOptions, diag: &mut Diagnostics) -> Influences {
    let mut inf = skin.influences.clone();
    if let Some(n) = opts.max_influences {
        let over = (0..inf.vertex_count()).filter(|&v| inf.vertex(v).count() > n).count();
        if over > 0 {
            inf.limit(n.max(1));
            diag.loss_at(
                "dae-influences",
                Place::named("skin", &skin.name),
                format!("skin \"{}\": {over} vertex(es) limited to {n} influences", skin.name),
            );
        }
    }
    inf
}

fn bind_material(o: &mut String, material: &str) {
    let _ = writeln!(
        o,
        "          <bind_material>\n            <technique_common>\n              <instance_material symbol=\"{material}\" target=\"#{material}\"/>\n            </technique_common>\n          </bind_material>"
    );
}

fn write_vec3_source(o: &mut String, id: &str, v: &[DVec3]) {
    let _ = write!(o, "        <source id=\"{id}\">\n          <float_array id=\"{id}-array\" count=\"{}\">", v.len() * 3);
    nums(o, v.iter().flat_map(|p| [p.x, p.y, p.z]));
    let _ = write!(
        o,
        "</float_array>\n          <technique_common>\n            <accessor source=\"#{id}-array\" count=\"{}\" stride=\"3\">\n              <param name=\"X\" type=\"float\"/>\n              <param name=\"Y\" type=\"float\"/>\n              <param name=\"Z\" type=\"float\"/>\n            </accessor>\n          </technique_common>\n        </source>\n",
        v.len()
    );
}

/// A `<source>` of (s, t) pairs.
fn write_vec2_source(o: &mut String, id: &str, v: &[DVec2]) {
    let _ = write!(o, "        <source id=\"{id}\">\n          <float_array id=\"{id}-array\" count=\"{}\">", v.len() * 2);
    nums(o, v.iter().flat_map(|p| [p.x, p.y]));
    let _ = write!(
        o,
        "</float_array>\n          <technique_common>\n            <accessor source=\"#{id}-array\" count=\"{}\" stride=\"2\">\n              <param name=\"S\" type=\"float\"/>\n              <param name=\"T\" type=\"float\"/>\n            </accessor>\n          </technique_common>\n        </source>\n",
        v.len()
    );
}

/// Polygons in runs the SL importer takes as one face each: its `<polylist>` reader closes a
/// face after the corner that brings it to 65,532 indices (three per triangle of each fan), even
/// inside a polygon, and then builds the rest of that polygon from the closed face's indices
/// (lldaeloader.cpp load_face_from_dom_polylist). A run holds at most 65,532 indices and 65,532
/// corners (its vertices, at most one per corner, stay below the 65,535 the importer refuses),
/// so each `<polylist>` is exactly one face and no polygon is cut. Polygons of fewer than three
/// corners (no triangle) are not counted: the writer leaves them out.
fn sl_runs(counts: &[u32]) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let (mut start, mut indices, mut corners) = (0usize, 0usize, 0usize);
    for (f, &n) in counts.iter().enumerate() {
        let n = n as usize;
        if n < 3 {
            continue;
        }
        let (i, c) = (3 * (n - 2), n);
        if indices + i > FACE_SPLIT || corners + c > FACE_SPLIT {
            runs.push(start..f);
            start = f;
            indices = 0;
            corners = 0;
        }
        indices += i;
        corners += c;
    }
    runs.push(start..counts.len());
    runs
}

/// What the SL importer makes of mesh `m`'s polygons as [`write_geometry`] writes them: an
/// error for a polygon no face can hold, a loss for polygons without a triangle (left out), a
/// warning when the faces are more than one model holds (the importer makes several models).
fn sl_faces(m: &Mesh, diag: &mut Diagnostics) -> Result<(), SlError> {
    if let Some((f, &n)) = m.faces.counts.iter().enumerate().find(|(_, &n)| 3 * (n as usize).saturating_sub(2) > FACE_SPLIT) {
        return Err(SlError::write(format!(
            "mesh \"{}\": polygon {f} has {n} corners, more than the SL importer's 65,532 indices per face can hold ({} triangles); triangulate it",
            m.name,
            n - 2
        )));
    }
    let degenerate = m.faces.counts.iter().filter(|&&n| n < 3).count();
    if degenerate > 0 {
        diag.loss_at(
            "dae-degenerate-faces",
            Place::named("mesh", &m.name),
            format!(
                "mesh \"{}\": {degenerate} face(s) with fewer than 3 corners left out: the SL importer makes no triangle of them",
                m.name
            ),
        );
    }
    let faces = sl_runs(&m.faces.counts).iter().filter(|r| !r.is_empty()).count();
    if faces > FACES_PER_MODEL {
        diag.warn_at(
            "dae-model-split",
            Place::named("mesh", &m.name),
            format!(
                "mesh \"{}\": {faces} faces of at most 21,844 triangles each; the SL importer puts 8 faces in a model and makes {} models of this mesh",
                m.name,
                faces.div_ceil(FACES_PER_MODEL)
            ),
        );
    }
    Ok(())
}

/// Write mesh `m` as geometry `g`: positions, normals where the IR has them, and the first
/// `uv_sets` texture coordinate sets, each per-vertex or per-corner input indexed by the
/// vertex or by the corner. For an SL rig (`sl`) the polygons go in runs the importer reads as
/// one face each ([`sl_runs`]) and polygons without a triangle are left out.
fn write_geometry(o: &mut String, g: &str, m: &Mesh, material: &str, uv_sets: usize, sl: bool) {
    let _ = writeln!(o, "    <geometry id=\"{g}\" name=\"{}\">\n      <mesh>", esc(&m.name));
    write_vec3_source(o, &format!("{g}-positions"), &m.positions);
    let (nv, nc) = (m.positions.len(), m.faces.indices.len());
    // (semantic, source id, set, per vertex) of each input after VERTEX, in offset order.
    let mut inputs: Vec<(&str, String, Option<u32>, bool)> = Vec::new();
    let fits = |per_corner: bool, len: usize| if per_corner { len == nc } else { len == nv };
    // A mesh without normals is written without (the viewer then draws it faceted): the smooth
    // normals skelport_ir::proc is to compute for such sources belong here, for SL rigs.
    if let Some(n) = &m.normals {
        if fits(n.is_per_corner(), n.values().len()) {
            let id = format!("{g}-normals");
            write_vec3_source(o, &id, n.values());
            inputs.push(("NORMAL", id, None, !n.is_per_corner()));
        }
    }
    for (k, set) in m.uvs.iter().take(uv_sets).enumerate() {
        if fits(set.uvs.is_per_corner(), set.uvs.values().len()) {
            let id = format!("{g}-map-{k}");
            write_vec2_source(o, &id, set.uvs.values());
            let n = set.name.parse::<u32>().unwrap_or(k as u32);
            inputs.push(("TEXCOORD", id, Some(n), !set.uvs.is_per_corner()));
        }
    }
    let _ = writeln!(
        o,
        "        <vertices id=\"{g}-vertices\">\n          <input semantic=\"POSITION\" source=\"#{g}-positions\"/>\n        </vertices>"
    );
    // Faces in runs, one <polylist> each; per-corner inputs keep the mesh's corner numbers.
    let starts: Vec<usize> = m
        .faces
        .counts
        .iter()
        .scan(0usize, |at, &n| {
            let s = *at;
            *at += n as usize;
            Some(s)
        })
        .collect();
    let runs: Vec<std::ops::Range<usize>> = if sl { sl_runs(&m.faces.counts) } else { std::iter::once(0..m.faces.counts.len()).collect() };
    let keep = |f: usize| !sl || m.faces.counts[f] >= 3;
    let per_vertex: Vec<bool> = inputs.iter().map(|i| i.3).collect();
    for run in runs.into_iter().filter(|r| !r.is_empty()) {
        let count = run.clone().filter(|&f| keep(f)).count();
        if count == 0 {
            continue;
        }
        let _ = writeln!(o, "        <polylist count=\"{count}\" material=\"{material}\">");
        let _ = writeln!(o, "          <input semantic=\"VERTEX\" source=\"#{g}-vertices\" offset=\"0\"/>");
        for (k, (semantic, id, set, _)) in inputs.iter().enumerate() {
            let set = set.map(|s| format!(" set=\"{s}\"")).unwrap_or_default();
            let _ = writeln!(o, "          <input semantic=\"{semantic}\" source=\"#{id}\" offset=\"{}\"{set}/>", k + 1);
        }
        o.push_str("          <vcount>");
        ints(o, run.clone().filter(|&f| keep(f)).map(|f| m.faces.counts[f]));
        o.push_str("</vcount>\n          <p>");
        let corners = run.filter(|&f| keep(f)).flat_map(|f| starts[f]..starts[f] + m.faces.counts[f] as usize);
        if per_vertex.is_empty() {
            ints(o, corners.map(|c| m.faces.indices[c]));
        } else {
            for (k, c) in corners.enumerate() {
                if k > 0 {
                    o.push(' ');
                }
                let v = m.faces.indices[c];
                push_u32(o, v);
                for &pv in &per_vertex {
                    o.push(' ');
                    push_u32(o, if pv { v } else { c as u32 });
                }
            }
        }
        o.push_str("</p>\n        </polylist>\n");
    }
    o.push_str("      </mesh>\n    </geometry>\n");
}

fn write_controller(o: &mut String, c: &str, geo: &str, name: &str, skin: &Skin, joints: &[(String, DMat4)], inf: &Influences) {
    let _ = writeln!(o, "    <controller id=\"{c}\" name=\"{}\">\n      <skin source=\"#{geo}\">", esc(name));
    o.push_str("        <bind_shape_matrix>");
    matrix(o, &skin.bind_shape);
    o.push_str("</bind_shape_matrix>\n");
    let _ = write!(o, "        <source id=\"{c}-joints\">\n          <Name_array id=\"{c}-joints-array\" count=\"{}\">", joints.len());
    for (k, (n, _)) in joints.iter().enumerate() {
        if k > 0 {
            o.push(' ');
        }
        o.push_str(&esc(n));
    }
    let _ = write!(
        o,
        "</Name_array>\n          <technique_common>\n            <accessor source=\"#{c}-joints-array\" count=\"{}\" stride=\"1\">\n              <param name=\"JOINT\" type=\"name\"/>\n            </accessor>\n          </technique_common>\n        </source>\n",
        joints.len()
    );
    let _ = write!(
        o,
        "        <source id=\"{c}-bind_poses\">\n          <float_array id=\"{c}-bind_poses-array\" count=\"{}\">",
        joints.len() * 16
    );
    for (k, (_, m)) in joints.iter().enumerate() {
        if k > 0 {
            o.push(' ');
        }
        matrix(o, m);
    }
    let _ = write!(
        o,
        "</float_array>\n          <technique_common>\n            <accessor source=\"#{c}-bind_poses-array\" count=\"{}\" stride=\"16\">\n              <param name=\"TRANSFORM\" type=\"float4x4\"/>\n            </accessor>\n          </technique_common>\n        </source>\n",
        joints.len()
    );
    let _ =
        write!(o, "        <source id=\"{c}-weights\">\n          <float_array id=\"{c}-weights-array\" count=\"{}\">", inf.weights.len());
    nums(o, inf.weights.iter().copied());
    let _ = write!(
        o,
        "</float_array>\n          <technique_common>\n            <accessor source=\"#{c}-weights-array\" count=\"{}\" stride=\"1\">\n              <param name=\"WEIGHT\" type=\"float\"/>\n            </accessor>\n          </technique_common>\n        </source>\n",
        inf.weights.len()
    );
    let _ = writeln!(
        o,
        "        <joints>\n          <input semantic=\"JOINT\" source=\"#{c}-joints\"/>\n          <input semantic=\"INV_BIND_MATRIX\" source=\"#{c}-bind_poses\"/>\n        </joints>"
    );
    let _ = writeln!(
        o,
        "        <vertex_weights count=\"{}\">\n          <input semantic=\"JOINT\" source=\"#{c}-joints\" offset=\"0\"/>\n          <input semantic=\"WEIGHT\" source=\"#{c}-weights\" offset=\"1\"/>",
        inf.vertex_count()
    );
    o.push_str("          <vcount>");
    ints(o, (0..inf.vertex_count()).map(|v| inf.row(v).len() as u32));
    o.push_str("</vcount>\n          <v>");
    ints(o, inf.joints.iter().enumerate().flat_map(|(k, &j)| [j, k as u32]));
    o.push_str("</v>\n        </vertex_weights>\n      </skin>\n    </controller>\n");
}

/// The joint tree, depth first, without recursion (a 65,535-deep chain must not overflow the
/// stack); indentation stops growing past 32 levels so deep chains stay linear in size.
fn write_joints(o: &mut String, joints: &[SceneJoint]) {
    use skelport_ir::proc::{children_of, walk_from, Step};
    let parents: Vec<Option<usize>> = joints.iter().map(|j| j.parent).collect();
    let pad = |o: &mut String, depth: usize| {
        for _ in 0..(8 + 2 * depth.min(32)) {
            o.push(' ');
        }
    };
    walk_from(&children_of(&parents), (0..joints.len()).filter(|&i| parents[i].is_none()), |step| match step {
        Step::Enter { node, depth: d } => {
            let j = &joints[node];
            pad(o, d);
            let _ = writeln!(o, "<node id=\"{}\" name=\"{}\" sid=\"{}\" type=\"JOINT\">", j.id, esc(&j.name), j.id);
            pad(o, d + 1);
            o.push_str("<matrix sid=\"transform\">");
            matrix(o, &j.local);
            o.push_str("</matrix>\n");
        }
        Step::Leave { depth: d, .. } => {
            pad(o, d);
            o.push_str("</node>\n");
        }
    });
}

#[cfg(test)]
mod nearest_tests {
    use super::*;

    #[test]
    fn fix_unweighted_copies_the_nearest_weighted_vertex_as_a_scan_would() {
        let mut seed = 7u64;
        let mut rnd = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 11) as f64 / (1u64 << 53) as f64
        };
        // A dense blob, far points, exact duplicates (ties), and every third vertex unweighted.
        let mut pts: Vec<DVec3> = (0..3000).map(|_| DVec3::new(rnd(), rnd() * 0.1, rnd() * 0.01)).collect();
        pts.extend([DVec3::new(50.0, 0.0, 0.0), DVec3::new(-50.0, 3.0, 0.0), DVec3::splat(0.5), DVec3::splat(0.5), DVec3::splat(0.5)]);
        let lists: Vec<Vec<(u32, f64)>> = (0..pts.len()).map(|v| if v % 3 == 0 { vec![] } else { vec![(v as u32, 1.0)] }).collect();
        let mut fixed = lists.clone();
        assert_eq!(fix_unweighted(&mut fixed, &pts), lists.iter().filter(|l| l.is_empty()).count());
        let weighted: Vec<usize> = (0..pts.len()).filter(|&v| !lists[v].is_empty()).collect();
        for v in (0..pts.len()).filter(|&v| lists[v].is_empty()) {
            let brute = weighted
                .iter()
                .copied()
                .min_by(|&a, &b| pts[a].distance_squared(pts[v]).total_cmp(&pts[b].distance_squared(pts[v])))
                .unwrap();
            assert_eq!(fixed[v], lists[brute], "vertex {v}");
        }
        // The copies of (0.5, 0.5, 0.5) are 3002, 3003 (unweighted) and 3004: 3002 wins the tie.
        assert_eq!(fixed[3003], vec![(3002, 1.0)]);
    }
}

#[cfg(test)]
mod tests {
    /// The digit loop must print what `Display` prints.
    #[test]
    fn push_u32_equals_display() {
        let mut x = 0x2545F4914F6CDD1Du64;
        let mut cases: Vec<u32> = vec![0, 1, 9, 10, 99, 100, 65535, 65536, 999_999_999, 1_000_000_000, u32::MAX];
        for _ in 0..10_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            cases.push((x as u32) >> (x % 32));
        }
        for v in cases {
            let mut s = String::from("x");
            super::push_u32(&mut s, v);
            assert_eq!(s, format!("x{v}"));
        }
    }
}
