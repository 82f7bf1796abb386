//! IR → `.dae`, written for the Second Life importer.
//!
//! When every skin joint (or, without skins, every bone) has a legal SL name the file is an **SL
//! rig**: Z-up metres, joint nodes `id = name = sid =` the canonical SL name with a
//! `<matrix sid="transform">`, the SL skeleton's hierarchy whatever the source's was (missing
//! ancestors added at their default positions), `<skeleton>#mPelvis</skeleton>`, and skins within
//! the importer's rules (≤ 110 joints, ≤ 4 influences of at least 0.001, every vertex weighted).
//! Joints sit at the SL default `pos` unless `--joint-positions` asks for the source's locations;
//! the inverse bind matrices carry the source's bind pose with the source bone rotations folded in
//! (SL joints are axis-aligned at rest), so the mesh binds exactly where the source had it.
//!
//! Anything else is written as **generic Collada** (the IR's hierarchy and rest transforms) with a
//! loss saying the SL importer will refuse its joint names.

use crate::error::SlError;
use crate::skeleton::{SlJoint, SlSkeleton, MAX_INFLUENCES, MAX_JOINTS_PER_SKIN, MIN_WEIGHT};
use skelport_ir::{BoneId, DMat4, DVec3, Diagnostics, Document, Frame, Influences, Mesh, Normals, Skin, WriteOptions};
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
}

/// Escape for text and double-quoted attributes: the workspace's one XML escaping. Bone names XML
/// cannot hold are replaced, with a loss line, before any is written; other names (meshes,
/// skins) have such characters replaced here.
fn esc(s: &str) -> String {
    skelport_ir::xml::escape_attr(&skelport_ir::xml::replace_unholdable(s)).into_owned()
}

/// An XML ID (NCName) for `base`, unique in `taken`.
fn fresh_id(base: &str, taken: &mut HashSet<String>) -> String {
    let mut s: String = base.chars().map(|c| if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') { c } else { '_' }).collect();
    if s.is_empty() || !s.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_') {
        s.insert(0, '_');
    }
    if taken.insert(s.clone()) {
        return s;
    }
    (1..).map(|k| format!("{s}.{k:03}")).find(|n| taken.insert(n.clone())).expect("some suffix is free")
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
        match sl.resolve(&b.name) {
            Some(j) => {
                if let Some(prev) = bone_of.insert(j, BoneId(i as u32)) {
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
    let mut worst = (0.0f64, String::new());
    let mut world_rs = Vec::with_capacity(order.len());
    for &j in &order {
        let parent = sl.parent(j).and_then(|p| index.get(&p).copied());
        let parent_world = parent.map(|p| file_world[p]).unwrap_or(DVec3::ZERO);
        let default = sl.default_pos(j);
        let src = bone_of.get(&j).map(|b| world[b.index()].w_axis.truncate());
        let local = match src {
            Some(w) if opts.joint_positions => w - parent_world,
            _ => default,
        };
        if let Some(w) = src {
            let d = (w - (parent_world + default)).length();
            if !opts.joint_positions && d > worst.0 {
                worst = (d, sl.name(j));
            }
        }
        index.insert(j, joints.len());
        file_world.push(parent_world + local);
        let name = sl.name(j);
        let d = sl.default_rest(j);
        let rs = DMat4::from_scale_rotation_translation(d.scale, d.rotation, DVec3::ZERO);
        world_rs.push(rs);
        joints.push(SceneJoint { id: name.clone(), name, parent, local: DMat4::from_translation(local) * rs });
    }
    if worst.0 > crate::skeleton::JOINT_OFFSET_THRESHOLD {
        diag.loss(
            "dae-joint-positions",
            format!(
                "joints written at the SL default positions; the source's differ by up to {:.4} m ({}): pass --joint-positions to keep them",
                worst.0, worst.1
            ),
        );
    }
    let of_bone = joint_of.iter().map(|j| j.and_then(|j| index.get(&j).copied())).collect();
    Ok(Rig { joints, of_bone, rs: world_rs, sl: true })
}

fn generic_rig(doc: &Document, taken: &mut HashSet<String>) -> Rig {
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
    Rig { joints, of_bone: (0..sk.bones.len()).map(Some).collect(), rs: Vec::new(), sl: false }
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
        diag.loss(
            "dae-influences",
            format!(
                "skin \"{}\": {over} vertex(es) had more than {limit} influences; the {limit} largest kept and renormalized",
                skin.name
            ),
        );
    }
    inf.normalize();
    let small = inf.prune(MIN_WEIGHT);
    if small > 0 {
        inf.normalize();
        diag.info(
            "dae-small-weights",
            format!("skin \"{}\": {small} weight(s) below {MIN_WEIGHT} (the importer's floor) dropped", skin.name),
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
            diag.warn(
                "dae-fixed-unweighted",
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

/// Write the document as a `.dae` string.
pub fn write(doc: &Document, opts: &WriteOptions, sl: &SlSkeleton, diag: &mut Diagnostics) -> Result<String, SlError> {
    if doc.skeletons.is_empty() && doc.meshes.is_empty() {
        return Err(SlError::write("the document has no skeleton and no mesh: nothing to write"));
    }
    let skinned: Vec<usize> = doc.skins.iter().enumerate().filter(|(_, s)| s.skeleton == 0 && s.mesh.is_some()).map(|(i, _)| i).collect();
    // An SL rig when every skin joint (or, without skins, every bone) has a legal SL name.
    let mut not_sl: Vec<&str> = Vec::new();
    let sl_names = match doc.skeletons.first() {
        None => false,
        Some(sk) => {
            let names: Vec<&str> = if skinned.is_empty() {
                sk.bones.iter().map(|b| b.name.as_str()).collect()
            } else {
                skinned
                    .iter()
                    .flat_map(|&i| doc.skins[i].joints.iter().filter_map(|b| sk.bones.get(b.index())).map(|b| b.name.as_str()))
                    .collect()
            };
            not_sl = names.iter().copied().filter(|n| sl.resolve(n).is_none()).collect();
            not_sl.dedup();
            !names.is_empty() && not_sl.is_empty()
        }
    };
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
    let mut taken: HashSet<String> = HashSet::new();
    for (i, s) in doc.skins.iter().enumerate() {
        if !skinned.contains(&i) {
            diag.loss("dae-skin-dropped", format!("skin \"{}\" has no mesh or belongs to another skeleton: not written", s.name));
        }
    }
    let rig = if doc.skeletons.is_empty() {
        Rig { joints: Vec::new(), of_bone: Vec::new(), rs: Vec::new(), sl: false }
    } else if sl_names {
        let r = sl_rig(&doc, sl, opts, diag)?;
        for j in &r.joints {
            taken.insert(j.id.clone());
        }
        r
    } else {
        let shown: Vec<&str> = not_sl.iter().copied().take(8).collect();
        diag.loss(
            "dae-not-sl",
            format!(
                "joint names are not SL joint names (e.g. {}): written as generic Collada that the SL importer refuses; use --map (e.g. mpfb-game_engine-to-sl) for an SL rig",
                shown.join(", ")
            ),
        );
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
    taken.insert(material.into());
    taken.insert("skelport-effect".into());
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
            write_geometry(&mut o, &g, m, material);
            geo_ids.push(g);
        }
        o.push_str("  </library_geometries>\n");
    }
    // Controllers.
    let mut ctl_ids: Vec<(usize, String)> = Vec::new();
    if !skinned.is_empty() {
        o.push_str("  <library_controllers>\n");
        let world = doc.skeletons[0].world_matrices();
        for &si in &skinned {
            let skin = &doc.skins[si];
            let mi = skin.mesh.expect("filtered");
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
            // Joint list: names and inverse binds.
            let mut joints: Vec<(String, DMat4)> = Vec::with_capacity(skin.joints.len());
            for (k, b) in skin.joints.iter().enumerate() {
                let j = rig.of_bone[b.index()]
                    .ok_or_else(|| SlError::write(format!("skin \"{}\": joint {} has no scene node", skin.name, b.0)))?;
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
    // The scene.
    o.push_str("  <library_visual_scenes>\n    <visual_scene id=\"Scene\" name=\"Scene\">\n");
    let roots: Vec<String> = rig.joints.iter().filter(|j| j.parent.is_none()).map(|j| j.id.clone()).collect();
    if !rig.joints.is_empty() {
        let armature = fresh_id(if rig.sl { "Avatar" } else { &doc.skeletons[0].name }, &mut taken);
        let _ = writeln!(o, "      <node id=\"{armature}\" name=\"{}\" type=\"NODE\">", esc(&armature));
        write_joints(&mut o, &rig.joints);
        o.push_str("      </node>\n");
    }
    for (mi, m) in doc.meshes.iter().enumerate() {
        let node = fresh_id(&m.name, &mut taken);
        let _ = writeln!(o, "      <node id=\"{node}\" name=\"{}\" type=\"NODE\">", esc(&m.name));
        let mut any = false;
        for (_, c) in ctl_ids.iter().filter(|(si, _)| doc.skins[*si].mesh == Some(mi)) {
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
            diag.loss("dae-influences", format!("skin \"{}\": {over} vertex(es) limited to {n} influences", skin.name));
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

fn write_geometry(o: &mut String, g: &str, m: &Mesh, material: &str) {
    let _ = writeln!(o, "    <geometry id=\"{g}\" name=\"{}\">\n      <mesh>", esc(&m.name));
    write_vec3_source(o, &format!("{g}-positions"), &m.positions);
    let normals = match &m.normals {
        Some(Normals::PerCorner(n)) if n.len() == m.faces.indices.len() => Some((n, false)),
        Some(Normals::PerVertex(n)) if n.len() == m.positions.len() => Some((n, true)),
        _ => None,
    };
    if let Some((n, _)) = normals {
        write_vec3_source(o, &format!("{g}-normals"), n);
    }
    let _ = writeln!(
        o,
        "        <vertices id=\"{g}-vertices\">\n          <input semantic=\"POSITION\" source=\"#{g}-positions\"/>\n        </vertices>"
    );
    if !m.faces.counts.is_empty() {
        let _ = writeln!(o, "        <polylist count=\"{}\" material=\"{material}\">", m.faces.counts.len());
        let _ = writeln!(o, "          <input semantic=\"VERTEX\" source=\"#{g}-vertices\" offset=\"0\"/>");
        if normals.is_some() {
            let _ = writeln!(o, "          <input semantic=\"NORMAL\" source=\"#{g}-normals\" offset=\"1\"/>");
        }
        o.push_str("          <vcount>");
        ints(o, m.faces.counts.iter().copied());
        o.push_str("</vcount>\n          <p>");
        match normals {
            Some((_, per_vertex)) => {
                ints(o, m.faces.indices.iter().enumerate().flat_map(|(c, &v)| [v, if per_vertex { v } else { c as u32 }]))
            }
            None => ints(o, m.faces.indices.iter().copied()),
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
    ints(o, (0..inf.vertex_count()).map(|v| inf.offsets[v + 1] - inf.offsets[v]));
    o.push_str("</vcount>\n          <v>");
    ints(o, inf.joints.iter().enumerate().flat_map(|(k, &j)| [j, k as u32]));
    o.push_str("</v>\n        </vertex_weights>\n      </skin>\n    </controller>\n");
}

/// The joint tree, depth first, without recursion (a 65,535-deep chain must not overflow the
/// stack); indentation stops growing past 32 levels so deep chains stay linear in size.
fn write_joints(o: &mut String, joints: &[SceneJoint]) {
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); joints.len()];
    let mut roots = Vec::new();
    for (i, j) in joints.iter().enumerate() {
        match j.parent {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    enum Step {
        Open(usize, usize),
        Close(usize),
    }
    let mut stack: Vec<Step> = roots.iter().rev().map(|&r| Step::Open(r, 0)).collect();
    let pad = |o: &mut String, depth: usize| {
        for _ in 0..(8 + 2 * depth.min(32)) {
            o.push(' ');
        }
    };
    while let Some(s) = stack.pop() {
        match s {
            Step::Open(i, d) => {
                let j = &joints[i];
                pad(o, d);
                let _ = writeln!(o, "<node id=\"{}\" name=\"{}\" sid=\"{}\" type=\"JOINT\">", j.id, esc(&j.name), j.id);
                pad(o, d + 1);
                o.push_str("<matrix sid=\"transform\">");
                matrix(o, &j.local);
                o.push_str("</matrix>\n");
                stack.push(Step::Close(d));
                stack.extend(children[i].iter().rev().map(|&c| Step::Open(c, d + 1)));
            }
            Step::Close(d) => {
                pad(o, d);
                o.push_str("</node>\n");
            }
        }
    }
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
