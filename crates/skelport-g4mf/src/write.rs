//! IR → G4MF.

use crate::{accessor, container, rotor_from_quat, G4mfError, FORBIDDEN_NAME_CHARS};
use base64::Engine;
use serde_json::{json, Map, Value};
use skelport_ir::names::{Suffix, UniqueNames};
use skelport_ir::proc::{self, VertexSplit};
use skelport_ir::Place;
use skelport_ir::{
    Attribute, BoneId, DMat3, DMat4, DVec2, DVec3, Diagnostics, Document, Frame, Mesh, Normals, Output, Transform, WriteOptions,
};
use std::collections::{HashMap, HashSet};

/// Unique, legal names across the whole file. Bones' names are reserved first: tools find bones
/// by name, so the root, skeleton and mesh nodes skelport adds give way to them (a bone named
/// `Root` keeps its name; the file's root node becomes `Root_2`).
#[derive(Default)]
struct Names {
    used: UniqueNames,
    /// The legal forms of every bone name, reserved for the first bone that has it.
    reserved: HashSet<String>,
    /// Bones renamed because an earlier bone (of another skeleton) had the name: (was, now).
    renamed: Vec<(String, String)>,
}

fn legal(want: &str, fallback: &str) -> String {
    let s: String = want.chars().map(|c| if FORBIDDEN_NAME_CHARS.contains(&c) || c.is_control() { '_' } else { c }).collect();
    if s.is_empty() {
        fallback.to_string()
    } else {
        s
    }
}

impl Names {
    /// Reserve the names of every bone of `doc`, in order.
    fn reserve_bones(&mut self, doc: &Document) {
        for sk in &doc.skeletons {
            for (i, b) in sk.bones.iter().enumerate() {
                self.reserved.insert(legal(&b.name, &format!("Bone{i}")));
            }
        }
    }

    /// A legal unique name for `want`, and whether it had to change. Other nodes avoid the
    /// bones' names; a bone takes its reserved name unless an earlier bone took it.
    fn take(&mut self, want: &str, fallback: &str, bone: bool) -> (String, bool) {
        let base = legal(want, fallback);
        let reserved = &self.reserved;
        let s = self.used.unique_avoiding(&base, Suffix::Underscore, |s| !bone && reserved.contains(s));
        if bone && s != base {
            self.renamed.push((want.to_string(), s.clone()));
        }
        let changed = s != want;
        (s, changed)
    }
}

/// Buffer builder: every view 16-byte aligned, one view per accessor.
#[derive(Default)]
struct Buf {
    data: Vec<u8>,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Buf {
    fn push(&mut self, bytes: &[u8], component: &str, vector: usize) -> usize {
        while self.data.len() % 16 != 0 {
            self.data.push(0);
        }
        let off = self.data.len();
        self.data.extend_from_slice(bytes);
        let mut view = Map::new();
        if off > 0 {
            view.insert("byteOffset".into(), off.into());
        }
        view.insert("byteLength".into(), bytes.len().into());
        self.views.push(Value::Object(view));
        let mut acc = Map::new();
        acc.insert("bufferView".into(), (self.views.len() - 1).into());
        acc.insert("componentType".into(), component.into());
        if vector != 1 {
            acc.insert("vectorSize".into(), vector.into());
        }
        self.accessors.push(Value::Object(acc));
        self.accessors.len() - 1
    }
}

fn transform_keys(node: &mut Map<String, Value>, m: &DMat4) {
    match Transform::from_matrix(m) {
        Some(t) => trs_keys(node, &t),
        None => {
            let c = m.to_cols_array();
            node.insert("basis".into(), json!([c[0], c[1], c[2], c[4], c[5], c[6], c[8], c[9], c[10]]));
            if m.w_axis.truncate() != DVec3::ZERO {
                node.insert("position".into(), json!(m.w_axis.truncate().to_array()));
            }
        }
    }
}

/// position / rotor / scale keys of a TRS, identity parts omitted.
fn trs_keys(node: &mut Map<String, Value>, t: &Transform) {
    {
        {
            if t.translation != DVec3::ZERO {
                node.insert("position".into(), json!(t.translation.to_array()));
            }
            let q = t.rotation;
            if q != skelport_ir::DQuat::IDENTITY {
                node.insert("rotor".into(), json!(rotor_from_quat(q)));
            }
            if t.scale != DVec3::ONE {
                if (t.scale.x - t.scale.y).abs() < 1e-12 && (t.scale.x - t.scale.z).abs() < 1e-12 {
                    node.insert("scale".into(), json!([t.scale.x]));
                } else {
                    node.insert("scale".into(), json!(t.scale.to_array()));
                }
            }
        }
    }
}

/// Whether two matrices agree within `tol` in every entry.
fn close(a: &DMat4, b: &DMat4, tol: f64) -> bool {
    (*a - *b).to_cols_array().iter().all(|d| d.abs() <= tol)
}

/// A surface binding (`normals`, `textureMap`) of `attr`: per-vertex values indexed by the
/// surface's own `simplexes` accessor; per-corner values stored once per distinct value at each
/// vertex (the vertex split of `skelport_ir::proc`), with a `simplexes` accessor of their own
/// indexing them per triangle corner. `encode` gives a value's float32 components.
fn binding<T: Copy + PartialEq>(
    buf: &mut Buf,
    attr: &Attribute<T>,
    mesh: &Mesh,
    (tri_corners, simplexes): (&[u32], usize),
    missing: T,
    width: usize,
    encode: impl Fn(T) -> [f32; 3],
) -> Value {
    let nv = mesh.positions.len();
    let (values, index): (Vec<T>, Option<Vec<u32>>) = match attr {
        Attribute::PerVertex(v) => (v.clone(), None),
        Attribute::PerCorner(c) => {
            let split: VertexSplit = proc::split_vertices(nv, &mesh.faces.indices, |a, b| c[a] == c[b]);
            let values = split.values(attr, missing);
            let index = tri_corners.iter().map(|&k| split.corner_vertex[k as usize]).collect();
            (values, Some(index))
        }
    };
    let mut bytes = Vec::with_capacity(values.len() * width * 4);
    for v in values.iter().copied() {
        for c in &encode(v)[..width] {
            bytes.extend_from_slice(&c.to_le_bytes());
        }
    }
    let vacc = buf.push(&bytes, "float32", width);
    let sacc = match index {
        None => simplexes,
        Some(index) => {
            let t = accessor::uint_type_for(values.len().saturating_sub(1) as u64);
            let mut b = Vec::new();
            accessor::encode_uint(t, index.iter().map(|&i| i as u64), &mut b);
            buf.push(&b, t, 3)
        }
    };
    json!({ "values": vacc, "simplexes": sacc })
}

/// The surface's `normals` and `textureMap` bindings. A mesh without normals gets smooth ones
/// (G4MF reads a surface without normals as flat-shaded), said in a note; UV sets past the
/// first are a loss (a surface has one texture map).
fn bind_attributes(
    buf: &mut Buf,
    surface: &mut Map<String, Value>,
    mesh: &Mesh,
    tri_corners: &[u32],
    simplexes: usize,
    linear: &DMat3,
    diag: &mut Diagnostics,
) {
    // Identity to f64 rounding (a G4MF-read document's rest·rest⁻¹) is identity, so that
    // rewriting a G4MF file keeps its normals bit for bit.
    let normal_m = linear.inverse().transpose();
    let identity = (normal_m - DMat3::IDENTITY).to_cols_array().iter().all(|x| x.abs() < 1e-12);
    let normal_m = if identity { DMat3::IDENTITY } else { normal_m };
    let computed;
    let normals = match &mesh.normals {
        Some(n) => n,
        None => {
            computed = Normals::PerVertex(proc::smooth_normals(&mesh.positions, &mesh.faces));
            diag.info_at(
                "g4mf.computed-normals",
                Place::named("mesh", &mesh.name),
                format!("mesh \"{}\" has no normals: smooth normals computed (area-weighted per vertex), since G4MF draws a surface without normals flat", mesh.name),
            );
            &computed
        }
    };
    let unit = |n: DVec3| {
        let d = normal_m * n;
        let len = d.length();
        // A zero normal (a vertex on no face of any area) cannot be normalized: +Y. One that is
        // unit to float32 precision is kept as it is (a normal read from G4MF writes back the same).
        let d = if len == 0.0 || !len.is_finite() {
            DVec3::Y
        } else if (len - 1.0).abs() > 1e-7 {
            d / len
        } else {
            d
        };
        [d.x as f32, d.y as f32, d.z as f32]
    };
    surface.insert("normals".into(), binding(buf, normals, mesh, (tri_corners, simplexes), DVec3::Y, 3, unit));
    if let Some(set) = mesh.uvs.first() {
        // The IR's v runs up from the bottom; G4MF's texture y runs down from the top.
        let uv = |t: DVec2| [t.x as f32, (1.0 - t.y) as f32, 0.0];
        let mut b = binding(buf, &set.uvs, mesh, (tri_corners, simplexes), DVec2::ZERO, 2, uv);
        if !set.name.is_empty() {
            b["extras"] = json!({ "skelport": { "name": set.name } });
        }
        surface.insert("textureMap".into(), b);
    }
    if mesh.uvs.len() > 1 {
        diag.loss_at(
            "g4mf.uv-sets",
            Place::named("mesh", &mesh.name),
            format!("mesh \"{}\": a G4MF surface has one texture map; {} more UV set(s) not written", mesh.name, mesh.uvs.len() - 1),
        );
    }
}

/// The triangles of `mesh` (its faces fan-triangulated, `tri_corners` their corners) as the
/// surface's `simplexes` accessor; `None` for a mesh without faces.
fn push_simplexes(buf: &mut Buf, surface: &mut Map<String, Value>, mesh: &Mesh, tri_corners: &[u32]) -> Option<usize> {
    if tri_corners.is_empty() {
        return None;
    }
    let t = accessor::uint_type_for(mesh.positions.len().saturating_sub(1) as u64);
    let mut b = Vec::new();
    accessor::encode_uint(t, tri_corners.iter().map(|&c| mesh.faces.indices[c as usize] as u64), &mut b);
    let a = buf.push(&b, t, 3);
    surface.insert("simplexes".into(), a.into());
    Some(a)
}

/// Write `doc` as G4MF; `binary` picks `.g4b`.
pub fn write(doc: &Document, opts: &WriteOptions, binary: bool, diag: &mut Diagnostics) -> Result<Output, G4mfError> {
    let skinned =
        |m: usize| doc.skins.iter().any(|s| s.mesh.map(skelport_ir::MeshId::index) == Some(m) && doc.get_skeleton(s.skeleton).is_some());
    let bones = doc.skeletons.iter().map(|s| s.bones.len()).sum::<usize>();
    if bones == 0 && doc.meshes.is_empty() {
        return Err(G4mfError::Write("nothing to write: the document has no bones and no meshes".into()));
    }
    let d = doc.in_frame(Frame::GLTF);
    let mut names = Names::default();
    let mut buf = Buf::default();
    let mut nodes: Vec<Value> = vec![Value::Null];
    let mut root_children: Vec<usize> = Vec::new();
    let mut meshes: Vec<Value> = Vec::new();
    names.reserve_bones(&d);
    let (root_name, _) = names.take("Root", "Root", false);

    let mut skins_by_skeleton = d.skins_by_skeleton();
    for (si, sk) in d.skeletons.iter().enumerate() {
        let skins: Vec<usize> = std::mem::take(&mut skins_by_skeleton[si]);
        let rest_world = sk.world_matrices();
        // Inverse binds usually come from float32 files: compare poses relative to the
        // skeleton's size (1e-6 of its extent, at least 1e-6), not absolutely.
        let extent = rest_world.iter().map(|m| m.w_axis.truncate().abs().max_element()).fold(1.0f64, f64::max);
        let tol = 1e-6 * extent;
        // Bind pose: G4MF stores one pose. If every joint's rest·IBM is one common matrix C, the
        // rest pose is the bind pose (C is baked into the vertices); otherwise write the bind pose.
        let mut c_common: Option<DMat4> = None;
        let mut consistent = true;
        let mut bind_of: HashMap<usize, DMat4> = HashMap::new();
        for &k in &skins {
            let s = &d.skins[k];
            for (slot, j) in s.joints.iter().enumerate() {
                let Some(ibm) = s.inverse_bind.get(slot) else { continue };
                let c = rest_world[j.index()] * *ibm;
                match &c_common {
                    None => c_common = Some(c),
                    Some(c0) if !close(c0, &c, tol) => consistent = false,
                    _ => {}
                }
                let bind = ibm.inverse();
                if let Some(prev) = bind_of.insert(j.index(), bind) {
                    if !close(&prev, &bind, tol) {
                        diag.loss_at(
                            "g4mf.bind-conflict",
                            Place::bone(&sk.bones[j.index()].name),
                            format!(
                                "bone \"{}\" has different bind poses in two skins; G4MF keeps one (the last)",
                                sk.bones[j.index()].name
                            ),
                        );
                    }
                }
            }
        }
        let (world, bake) = if consistent {
            (rest_world.clone(), c_common.unwrap_or(DMat4::IDENTITY))
        } else {
            let mut w: Vec<DMat4> = Vec::with_capacity(sk.bones.len());
            let mut moved = 0;
            for (i, b) in sk.bones.iter().enumerate() {
                let m = match bind_of.get(&i) {
                    Some(bm) => *bm,
                    None => match b.parent {
                        Some(p) => w[p.index()] * b.rest.matrix(),
                        None => b.rest.matrix(),
                    },
                };
                if !close(&m, &rest_world[i], tol) {
                    moved += 1;
                }
                w.push(m);
            }
            diag.info_at(
                "g4mf.rest-pose",
                Place::named("skeleton", &sk.name),
                format!("skeleton \"{}\": the rest pose differs from the bind pose for {moved} bone(s); G4MF stores one pose, so the bind pose is written (what other readers see) and the rest pose is kept in skelport extras (skelport reads it back)", sk.name),
            );
            (w, DMat4::IDENTITY)
        };

        // Skeleton node (no transform: skeleton space = document space).
        let skel_node = nodes.len();
        nodes.push(Value::Null);
        let (sname, schanged) = names.take(&sk.name, "Skeleton", false);
        // Bones in depth-first pre-order so parents get lower indices and joints increase.
        let parents: Vec<Option<usize>> = sk.bones.iter().map(|b| b.parent.map(|p| p.index())).collect();
        let roots: Vec<usize> = (0..sk.bones.len()).filter(|&i| sk.bones[i].parent.is_none()).collect();
        let children = proc::children_of(&parents);
        let pre = proc::preorder_from(&children, roots.iter().copied());
        let mut node_of_bone = vec![0usize; sk.bones.len()];
        for (k, &i) in pre.iter().enumerate() {
            node_of_bone[i] = skel_node + 1 + k;
        }
        let joint_bones: HashSet<usize> = skins.iter().flat_map(|&k| d.skins[k].joints.iter().map(|j| j.index())).collect();
        for &i in &pre {
            let b = &sk.bones[i];
            let mut node = Map::new();
            let (name, changed) = names.take(&b.name, &format!("Bone{i}"), true);
            node.insert("name".into(), name.into());
            // The rest pose when the bind pose differs: skelport's own, in extras (G4MF's one
            // pose is the bind pose).
            let mut rest_extra = None;
            if consistent {
                // The rest pose is the bind pose: write each bone's own TRS, untouched.
                trs_keys(&mut node, &b.rest);
            } else {
                let local = match b.parent {
                    Some(p) => world[p.index()].inverse() * world[i],
                    None => world[i],
                };
                transform_keys(&mut node, &local);
                // Every bone whose written transform is not exactly its rest (a joint bound
                // elsewhere, or one whose bind pose only rounds differently), so the rest pose
                // comes back bit for bit.
                if Transform::from_matrix(&local) != Some(b.rest) {
                    rest_extra = serde_json::to_value(b.rest).ok();
                }
            }
            let kids: Vec<usize> = children[i].iter().map(|&c| node_of_bone[c]).collect();
            if !kids.is_empty() {
                node.insert("children".into(), json!(kids));
            }
            let mut bone = Map::new();
            if let Some(l) = b.length {
                bone.insert("length".into(), json!(l));
            }
            if let Some(Value::Object(own)) = b.ext.raw(crate::read::NAMESPACE) {
                for (k, v) in own {
                    bone.insert(k.clone(), v.clone());
                }
            }
            node.insert("bone".into(), Value::Object(bone));
            let mut ex = Map::new();
            if changed {
                ex.insert("name".into(), b.name.clone().into());
            }
            if let Some(rest) = rest_extra {
                ex.insert("rest".into(), rest);
            }
            if let Some(r) = b.roll {
                ex.insert("roll".into(), json!(r));
            }
            // Readers take joints as deforming and other bones as not (when the skeleton has a
            // skin); say so only where the bone disagrees.
            let default_deform = skins.is_empty() || joint_bones.contains(&i);
            if b.deform != default_deform {
                ex.insert("deform".into(), b.deform.into());
            }
            if let Some(a) = &b.anchors {
                ex.insert("anchors".into(), serde_json::to_value(a).unwrap_or(Value::Null));
            }
            let mut other = b.ext.clone();
            other.remove(crate::read::NAMESPACE);
            if !other.is_empty() {
                ex.insert("ext".into(), serde_json::to_value(&other).unwrap_or(Value::Null));
            }
            if !ex.is_empty() {
                node.insert("extras".into(), json!({ "skelport": ex }));
            }
            nodes.push(Value::Object(node));
        }
        // Joints: every skin joint of this skeleton, by node index (strictly increasing).
        let mut joint_list: Vec<usize> = joint_bones.iter().copied().collect();
        joint_list.sort_by_key(|&i| node_of_bone[i]);
        let group_of_bone: HashMap<usize, usize> = joint_list.iter().enumerate().map(|(g, &b)| (b, g)).collect();
        let group_names: Vec<String> =
            joint_list.iter().map(|&b| nodes[node_of_bone[b]]["name"].as_str().unwrap_or("").to_string()).collect();

        let mut skel_children: Vec<usize> = roots.iter().map(|&r| node_of_bone[r]).collect();
        for &k in &skins {
            let s = &d.skins[k];
            let Some(mesh) = d.mesh_of(s) else {
                diag.loss_at(
                    "g4mf.skin-without-mesh",
                    Place::named("skin", &s.name),
                    format!("skin \"{}\" has no mesh; G4MF keeps skins on meshes only", s.name),
                );
                continue;
            };
            // Vertices go where the source's own skinning puts them at rest (Σ wⱼ·restⱼ·IBMⱼ·v).
            // That is `bake` when every joint's rest·IBM agrees exactly; float32 inverse binds
            // agree only to rounding (Fox: 8e-6 m at 95 m), and one joint's matrix for all would
            // move the rest shape by that much.
            let c_slot: Vec<DMat4> = s
                .joints
                .iter()
                .enumerate()
                .map(|(slot, j)| s.inverse_bind.get(slot).map(|ibm| rest_world[j.index()] * *ibm).unwrap_or(bake))
                .collect();
            // Agreement to f64 rounding (a G4MF-read document's rest·rest⁻¹) stays on `bake`, so
            // rewriting a G4MF file keeps its vertices bit for bit.
            let per_vertex = consistent && c_slot.iter().any(|c| !close(c, &bake, 1e-9 * extent));
            // Each vertex's Σ wⱼ·(restⱼ·IBMⱼ) / Σ wⱼ when the joints disagree (else `bake`): it moves
            // the vertex, and its linear part the vertex's normal.
            let vertex_matrix = |v: usize| -> DMat4 {
                if per_vertex {
                    s.blend_matrix(v, &c_slot).unwrap_or(bake)
                } else {
                    bake
                }
            };
            let mut pos = Vec::with_capacity(mesh.positions.len() * 12);
            for (v, p) in mesh.positions.iter().enumerate() {
                let q = vertex_matrix(v).transform_point3(s.bind_shape.transform_point3(*p));
                for c in q.to_array() {
                    pos.extend_from_slice(&(c as f32).to_le_bytes());
                }
            }
            let vacc = buf.push(&pos, "float32", 3);
            // Triangles by corner, so that per-corner normals and UVs follow them.
            let tri_corners = mesh.faces.triangulated_corners();
            let mut surface = Map::new();
            let simplexes = push_simplexes(&mut buf, &mut surface, mesh, &tri_corners);
            if let Some(simplexes) = simplexes {
                // Normals move with the linear part of what moved the positions: `bake`'s, or
                // each vertex's own blend when the positions were moved vertex by vertex.
                let moved;
                let (mesh, linear) = match &mesh.normals {
                    Some(n) if per_vertex => {
                        let vertex_linear: Vec<DMat3> = (0..mesh.positions.len())
                            .map(|v| DMat3::from_mat4(vertex_matrix(v) * s.bind_shape).inverse().transpose())
                            .collect();
                        let turn = |v: usize, x: DVec3| (vertex_linear[v] * x).normalize_or(DVec3::Y);
                        let n = match n {
                            Attribute::PerVertex(x) => Attribute::PerVertex(x.iter().enumerate().map(|(v, &x)| turn(v, x)).collect()),
                            Attribute::PerCorner(x) => {
                                Attribute::PerCorner(x.iter().zip(&mesh.faces.indices).map(|(&x, &v)| turn(v as usize, x)).collect())
                            }
                        };
                        moved = Mesh { normals: Some(n), ..mesh.clone() };
                        (&moved, DMat3::IDENTITY)
                    }
                    _ => (mesh, DMat3::from_mat4(bake * s.bind_shape)),
                };
                bind_attributes(&mut buf, &mut surface, mesh, &tri_corners, simplexes, &linear, diag);
            }
            // Triplets: vertices ascending, weights descending within a vertex; zero weights dropped.
            let mut tv = Vec::new();
            let mut tg = Vec::new();
            let mut tw: Vec<f32> = Vec::new();
            for v in 0..s.influences.vertex_count() {
                let mut e: Vec<(usize, f64)> = s
                    .influences
                    .vertex(v)
                    .filter(|&(_, w)| w > 0.0)
                    .filter_map(|(slot, w)| {
                        s.joints.get(slot as usize).and_then(|b: &BoneId| group_of_bone.get(&b.index())).map(|&g| (g, w))
                    })
                    .collect();
                e.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                for (g, w) in e {
                    tv.push(v as u64);
                    tg.push(g as u64);
                    tw.push(w as f32);
                }
            }
            let vt = accessor::uint_type_for(tv.last().copied().unwrap_or(0));
            let gt = accessor::uint_type_for(joint_list.len().saturating_sub(1) as u64);
            let mut bv = Vec::new();
            accessor::encode_uint(vt, tv.iter().copied(), &mut bv);
            let mut bg = Vec::new();
            accessor::encode_uint(gt, tg.iter().copied(), &mut bg);
            let bw: Vec<u8> = tw.iter().flat_map(|w| w.to_le_bytes()).collect();
            let mut skin = json!({
                "vertices": buf.push(&bv, vt, 1),
                "groups": buf.push(&bg, gt, 1),
                "weights": buf.push(&bw, "float32", 1),
                "groupNames": group_names,
            });
            // G4MF numbers groups by the skeleton's joints, shared by every skin of it (group
            // names must agree across them); a skin that binds fewer has its own joints, in its
            // order, in skelport's extras, so that it reads back with its own joint list.
            let own: Vec<usize> = s.joints.iter().filter_map(|j| group_of_bone.get(&j.index()).copied()).collect();
            if own.len() != joint_list.len() {
                skin["extras"] = json!({ "skelport": { "joints": own } });
            }
            let (mname, _) = names.take(&mesh.name, "Mesh", false);
            let mut m = Map::new();
            m.insert("name".into(), mname.into());
            m.insert("vertices".into(), vacc.into());
            m.insert("surfaces".into(), json!([surface]));
            m.insert("skin".into(), skin);
            meshes.push(Value::Object(m));
            let (iname, _) = names.take(&format!("{}Instance", mesh.name), "MeshInstance", false);
            skel_children.push(nodes.len());
            nodes.push(json!({ "name": iname, "meshInstance": { "mesh": meshes.len() - 1 } }));
        }
        let mut snode = Map::new();
        snode.insert("name".into(), sname.into());
        if !skel_children.is_empty() {
            snode.insert("children".into(), json!(skel_children));
        }
        snode.insert("skeleton".into(), json!({ "joints": joint_list.iter().map(|&b| node_of_bone[b]).collect::<Vec<_>>() }));
        let mut ex = Map::new();
        if schanged {
            ex.insert("name".into(), sk.name.clone().into());
        }
        if !sk.ext.is_empty() {
            ex.insert("ext".into(), serde_json::to_value(&sk.ext).unwrap_or(Value::Null));
        }
        if !ex.is_empty() {
            snode.insert("extras".into(), json!({ "skelport": ex }));
        }
        nodes[skel_node] = Value::Object(snode);
        root_children.push(skel_node);
    }
    // Meshes no skin binds: plain meshes, each instanced by a child of the root node, where
    // they stand in the document.
    for (m, mesh) in d.meshes.iter().enumerate().filter(|&(m, _)| !skinned(m)) {
        let mut pos = Vec::with_capacity(mesh.positions.len() * 12);
        for p in &mesh.positions {
            for c in p.to_array() {
                pos.extend_from_slice(&(c as f32).to_le_bytes());
            }
        }
        let vacc = buf.push(&pos, "float32", 3);
        let tri_corners = mesh.faces.triangulated_corners();
        let mut surface = Map::new();
        if let Some(simplexes) = push_simplexes(&mut buf, &mut surface, mesh, &tri_corners) {
            bind_attributes(&mut buf, &mut surface, mesh, &tri_corners, simplexes, &DMat3::IDENTITY, diag);
        }
        let (mname, _) = names.take(&mesh.name, &format!("Mesh{m}"), false);
        meshes.push(json!({ "name": mname, "vertices": vacc, "surfaces": [surface] }));
        let (iname, _) = names.take(&format!("{}Instance", mesh.name), "MeshInstance", false);
        root_children.push(nodes.len());
        nodes.push(json!({ "name": iname, "meshInstance": { "mesh": meshes.len() - 1 } }));
    }
    for (k, s) in d.skins.iter().enumerate() {
        if d.get_skeleton(s.skeleton).is_none() {
            diag.loss_at("g4mf.skin", Place::numbered("skin", k), format!("skin {k} refers to a missing skeleton and is not written"));
        }
    }
    if !names.renamed.is_empty() {
        let shown: Vec<String> = names.renamed.iter().take(8).map(|(a, b)| format!("\"{a}\" → \"{b}\"")).collect();
        diag.loss(
            "g4mf.renamed",
            format!(
                "{} bone(s) renamed because a bone of an earlier skeleton has the name, and G4MF names are unique in the file (the original is kept in skelport extras): {}{}",
                names.renamed.len(),
                shown.join(", "),
                if names.renamed.len() > 8 { ", …" } else { "" }
            ),
        );
    }
    let mut root = Map::new();
    root.insert("name".into(), root_name.into());
    if !root_children.is_empty() {
        root.insert("children".into(), json!(root_children));
    }
    nodes[0] = Value::Object(root);

    let mut top = Map::new();
    top.insert("asset".into(), json!({ "dimension": 3, "generator": concat!("skelport ", env!("CARGO_PKG_VERSION")), "specification": "https://github.com/godot-dimensions/g4mf" }));
    if !buf.accessors.is_empty() {
        top.insert("accessors".into(), Value::Array(std::mem::take(&mut buf.accessors)));
        top.insert("bufferViews".into(), Value::Array(std::mem::take(&mut buf.views)));
    }
    if !meshes.is_empty() {
        top.insert("meshes".into(), Value::Array(meshes));
    }
    top.insert("nodes".into(), Value::Array(nodes));
    if !d.ext.is_empty() {
        top.insert("extras".into(), json!({ "skelport": { "ext": d.ext } }));
    }
    let has_data = !buf.data.is_empty();
    if has_data {
        let mut b = Map::new();
        b.insert("byteLength".into(), buf.data.len().into());
        if binary {
            b.insert("chunk".into(), 1.into());
            if opts.compress {
                b.insert("encoding".into(), "Zstd".into());
            }
        } else {
            // .g4tf is always self-contained (a data URI): .g4b is the compact binary form, and
            // no side file can collide with a glTF `<stem>.bin` written beside it.
            let uri = format!("data:application/octet-stream;base64,{}", base64::engine::general_purpose::STANDARD.encode(&buf.data));
            b.insert("uri".into(), uri.into());
        }
        top.insert("buffers".into(), json!([b]));
    }
    let json_bytes = if binary { serde_json::to_vec(&Value::Object(top)) } else { serde_json::to_vec_pretty(&Value::Object(top)) }
        .map_err(|e| G4mfError::Write(e.to_string()))?;
    if binary {
        let enc = if opts.compress { container::ZSTD } else { container::PLAIN };
        let mut chunks = vec![container::Chunk { kind: container::JSON, encoding: enc, data: json_bytes }];
        if has_data {
            chunks.push(container::Chunk { kind: container::BLOB, encoding: enc, data: buf.data });
        }
        let bytes = container::write(&chunks).map_err(|e| G4mfError::Write(e.to_string()))?;
        return Ok(Output::single(bytes));
    }
    let mut main = json_bytes;
    main.push(b'\n');
    Ok(Output::single(main))
}
