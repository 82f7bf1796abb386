//! IR → glTF.
//!
//! The document is converted to glTF's frame first (exactly, no extra root node). Each skeleton
//! becomes a node hierarchy with TRS (under an identity node marked `synthetic_root` when it has
//! several roots or its root is not a joint); each IR skin a glTF skin whose inverse bind matrices are
//! the IR's bind pose; the skinned mesh a single triangle primitive with POSITION (min/max),
//! NORMAL (smooth ones computed when the mesh has none), TEXCOORD_n, indices and as many
//! JOINTS_n/WEIGHTS_n sets as the widest vertex needs; vertices are split where per-corner
//! normals or UVs differ (the copies appended, listed in the mesh's extras). Weights are
//! written sorted largest first and normalized in float32 (the largest weight absorbs the
//! rounding), so the Khronos validator's sum check passes.
//!
//! The JSON is built as `serde_json::Value` rather than `gltf_json::Root` so that numbers can be
//! written as their shortest float32 text and empty properties omitted without boilerplate.

use crate::error::GltfError;
use crate::extras::{BoneExtras, DocExtras, MeshExtras, SkinExtras};
use crate::EXTRAS_KEY;
use base64::Engine as _;
use serde_json::{json, Map, Value};
use skelport_ir::{proc, Place};
use skelport_ir::{
    Attribute, BoneId, DMat3, DMat4, DQuat, DVec2, DVec3, Diagnostics, Document, Frame, Mesh, Normals, Output, Skin, UvSet, WriteOptions,
};
use std::borrow::Cow;

/// Which file flavour to produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Container {
    Json,
    Binary,
}

const ARRAY_BUFFER: u32 = 34962;
const ELEMENT_ARRAY_BUFFER: u32 = 34963;
const FLOAT: u32 = 5126;
const UNSIGNED_BYTE: u32 = 5121;
const UNSIGNED_SHORT: u32 = 5123;
const UNSIGNED_INT: u32 = 5125;

/// A float32 as the shortest JSON number that reads back as the same float32.
///
/// The shortest digits by zmij (what serde_json writes floats with), read back as the f64 that
/// serde_json then writes as those same digits: `format!` and `str::parse` cost 1,200
/// instructions a number, and a skeleton has ten a bone (docs/performance.md). Where the float32
/// lies halfway between two shortest spellings zmij rounds to the even digit and `Display`, which
/// this output was first written with, away from zero: those few take `Display`'s.
fn num(x: f64) -> Value {
    let f = x as f32;
    let mut buf = zmij::Buffer::new();
    let value = match f.is_finite().then(|| buf.format(f)) {
        Some(t) if !maybe_tie(f, t) => skelport_ir::num::fast_decimal(t),
        _ => format!("{f}").parse::<f64>().ok(),
    };
    value.and_then(serde_json::Number::from_f64).map_or(Value::from(0), Value::Number)
}

/// Whether the finite float32 `f` may lie halfway between `t` (its shortest decimal spelling,
/// as zmij writes it: `-12.5`, `300000.0`, `1.5e-7`, `3.4e+38`) and the next spelling with as
/// many digits: then its exact value is `t`'s digits and one more, a 5. Found by scaling `f` so
/// that digit is the units: the product (or quotient) is exact whenever it is such an integer,
/// and a scale past 10^22 (inexact in an f64) answers "maybe".
fn maybe_tie(f: f32, t: &str) -> bool {
    const POW10: [f64; 23] =
        [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];
    let (mantissa, exp) = match t.split_once('e') {
        Some((m, e)) => (m, e.parse::<i32>().unwrap_or(0)),
        None => (t, 0),
    };
    let (int, frac) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let int = int.trim_start_matches('-');
    let trailing_zeros = int.bytes().chain(frac.bytes()).rev().take_while(|&c| c == b'0').count();
    if trailing_zeros == int.len() + frac.len() {
        return false;
    }
    // The unit of the spelling's last non-zero digit is 10^last; the digit after it, 10^(last-1).
    let last = exp - frac.len() as i32 + trailing_zeros as i32;
    let x = f64::from(f).abs();
    let y = match 1 - last {
        k @ 0..=22 => x * POW10[k as usize],
        k @ -22..=-1 => x / POW10[(-k) as usize],
        _ => return true,
    };
    // Integer arithmetic: `%` and `fract` on an f64 are library calls.
    y < 9_007_199_254_740_992.0 && (y as u64) as f64 == y && y as u64 % 10 == 5
}

/// The exact double value of a float32 (for accessor min/max, compared against the data).
fn exact(x: f32) -> Value {
    serde_json::Number::from_f64(x as f64).map(Value::Number).unwrap_or(Value::from(0))
}

/// Buffer views and accessors, with the binary buffer kept as the pieces it is made of: each
/// placed (at a 4-byte aligned offset) but not copied until the output is assembled
/// ([`Builder::bin_into`]). Copying every encoded mesh into one growing buffer, then that buffer
/// into the GLB, touched twice the output's size in fresh pages, on one core.
#[derive(Default)]
struct Builder {
    /// (offset in the buffer, bytes), in buffer order.
    pieces: Vec<(usize, Vec<u8>)>,
    /// The buffer's length so far (before its final padding).
    len: usize,
    views: Vec<Value>,
    accessors: Vec<Value>,
}

impl Builder {
    fn view(&mut self, bytes: Vec<u8>, target: Option<u32>) -> usize {
        let offset = self.len.next_multiple_of(4);
        // Maps made at their size (a big document has thousands of views and accessors; `json!`
        // grows each map entry by entry).
        let mut v = Map::with_capacity(4);
        v.insert("buffer".into(), 0.into());
        v.insert("byteOffset".into(), offset.into());
        v.insert("byteLength".into(), bytes.len().into());
        if let Some(t) = target {
            v.insert("target".into(), t.into());
        }
        self.len = offset + bytes.len();
        self.pieces.push((offset, bytes));
        self.views.push(Value::Object(v));
        self.views.len() - 1
    }

    #[allow(clippy::too_many_arguments)]
    fn accessor(
        &mut self,
        bytes: Vec<u8>,
        target: Option<u32>,
        component: u32,
        count: usize,
        ty: &str,
        normalized: bool,
        minmax: Option<(Value, Value)>,
    ) -> usize {
        let view = self.view(bytes, target);
        let mut a = Map::with_capacity(7);
        a.insert("bufferView".into(), view.into());
        a.insert("componentType".into(), component.into());
        a.insert("count".into(), count.into());
        a.insert("type".into(), ty.into());
        if normalized {
            a.insert("normalized".into(), true.into());
        }
        if let Some((min, max)) = minmax {
            a.insert("min".into(), min);
            a.insert("max".into(), max);
        }
        self.accessors.push(Value::Object(a));
        self.accessors.len() - 1
    }

    /// The buffer's length padded to 4 bytes (its `byteLength`, and its GLB chunk's length).
    fn padded_len(&self) -> usize {
        self.len.next_multiple_of(4)
    }

    /// The buffer as [`Output::main_pieces`]: each piece, then the zeros up to the next piece's
    /// offset (the last piece's up to [`Builder::padded_len`]), the bytes [`Builder::bin_into`]
    /// writes.
    fn into_pieces(self) -> Vec<(Vec<u8>, usize)> {
        let total = self.padded_len();
        let ends: Vec<usize> = self.pieces.iter().skip(1).map(|p| p.0).chain([total]).collect();
        self.pieces
            .into_iter()
            .zip(ends)
            .map(|((offset, bytes), end)| {
                let zeros = end - offset - bytes.len();
                (bytes, zeros)
            })
            .collect()
    }

    /// Append the buffer ([`Builder::padded_len`] bytes, zero padding included) to `out`. Each
    /// piece is copied once, straight into its place, on every core when `parallel`: the
    /// destination's fresh pages are then faulted in by both cores instead of one.
    fn bin_into(&self, out: &mut Vec<u8>, parallel: bool) {
        let total = self.padded_len();
        out.reserve(total);
        let mut rest = &mut out.spare_capacity_mut()[..total];
        // Each piece's region runs from its offset to the next piece's (the last to the end):
        // its bytes, then zeros. The first piece is at 0 (`view` places it there), so the
        // regions tile the whole buffer.
        assert!(self.pieces.first().is_none_or(|p| p.0 == 0), "the first piece is at offset 0");
        let mut regions = Vec::with_capacity(self.pieces.len());
        for (k, (offset, bytes)) in self.pieces.iter().enumerate() {
            let end = self.pieces.get(k + 1).map_or(total, |p| p.0);
            let (region, tail) = std::mem::take(&mut rest).split_at_mut(end - offset);
            regions.push((region, bytes.as_slice()));
            rest = tail;
        }
        let fill = |(region, bytes): (&mut [std::mem::MaybeUninit<u8>], &[u8])| {
            let (data, pad) = region.split_at_mut(bytes.len());
            // SAFETY: `data` is exactly `bytes.len()` bytes long and cannot overlap `bytes` (it
            // is spare capacity of the output). (`write_copy_of_slice` needs Rust 1.93; the
            // workspace's minimum is 1.85.)
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data.as_mut_ptr().cast::<u8>(), bytes.len()) };
            pad.fill(std::mem::MaybeUninit::new(0));
        };
        if parallel {
            use rayon::prelude::*;
            regions.into_par_iter().for_each(fill);
        } else {
            regions.into_iter().for_each(fill);
        }
        // SAFETY: the regions are consecutive splits of `out`'s spare capacity whose lengths add
        // up to `total` (offsets from 0, the first piece's, to `total`), and `fill` wrote every
        // byte of each: its piece's bytes, then zeros.
        unsafe { out.set_len(out.len() + total) };
    }
}

/// Node names, unique in the file: tools find nodes by name (Blender's importer, Godot's
/// skeleton paths, three.js's `getObjectByName`), so two nodes with one name make them pick the
/// wrong one. Bones' names are reserved first; the identity root and the mesh nodes skelport adds
/// take another (`rig_2`), and a bone whose name a bone of an earlier skeleton took is renamed
/// (its name kept in `extras.skelport.name`).
#[derive(Default)]
struct NodeNames<'d> {
    /// Names taken, and per wanted name the next suffix to try: `n` nodes wanting one name cost
    /// `O(n)` tries, where trying `_2`, `_3`, … from the start for each was quadratic.
    used: skelport_ir::names::UniqueNames,
    reserved: foldhash::HashSet<&'d str>,
    /// (was, now) for bones.
    bones: Vec<(String, String)>,
    /// (was, now) for the nodes skelport adds.
    added: Vec<(String, String)>,
}

impl<'d> NodeNames<'d> {
    fn new(doc: &'d Document) -> Self {
        let reserved = doc.skeletons.iter().flat_map(|s| s.bones.iter().map(|b| b.name.as_str())).collect();
        NodeNames { reserved, ..Default::default() }
    }

    /// A unique name for a node that wants `want`.
    fn take(&mut self, want: &str, bone: bool) -> String {
        let reserved = &self.reserved;
        let s = self.used.unique_avoiding(want, skelport_ir::names::Suffix::Underscore, |n| !bone && reserved.contains(n));
        if s != want {
            let list = if bone { &mut self.bones } else { &mut self.added };
            list.push((want.to_string(), s.clone()));
        }
        s
    }
}

fn renames(list: &[(String, String)]) -> String {
    let shown: Vec<String> = list.iter().take(8).map(|(a, b)| format!("\"{a}\" → \"{b}\"")).collect();
    format!("{}{}", shown.join(", "), if list.len() > 8 { ", …" } else { "" })
}

fn extras_value<T: serde::Serialize>(x: &T) -> Option<Value> {
    let v = serde_json::to_value(x).ok()?;
    match &v {
        Value::Object(m) if m.is_empty() => None,
        _ => Some(json!({ EXTRAS_KEY: v })),
    }
}

/// Joints per skin a glTF file can hold: JOINTS_n indices are at most unsigned shorts.
pub const MAX_SKIN_JOINTS: usize = 65_536;

pub(crate) fn write(doc: &Document, opts: &WriteOptions, container: Container, diag: &mut Diagnostics) -> Result<Output, GltfError> {
    write_with(doc, opts, container, diag, skelport_ir::PARALLEL_FROM)
}

/// Where [`write`] put each bone: `bones[skeleton][bone]` is its node index (an empty list for a
/// skeleton that was not written).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeLayout {
    pub bones: Vec<Vec<usize>>,
}

/// A change to the glTF JSON made after everything else is in place and before it is encoded
/// (a root extension, `extensionsUsed`, node renames), given where each bone went.
pub type Edit<'a> = &'a mut dyn FnMut(&mut Map<String, Value>, &NodeLayout) -> Result<(), String>;

/// [`write`], encoding meshes on every core when they hold `parallel_from` vertices plus corners.
fn write_with(
    doc: &Document,
    opts: &WriteOptions,
    container: Container,
    diag: &mut Diagnostics,
    parallel_from: usize,
) -> Result<Output, GltfError> {
    write_edited(doc, opts, container, diag, parallel_from, None)
}

/// [`write_with`], with `edit` applied to the JSON before it is encoded.
pub(crate) fn write_edited(
    doc: &Document,
    opts: &WriteOptions,
    container: Container,
    diag: &mut Diagnostics,
    parallel_from: usize,
    edit: Option<Edit<'_>>,
) -> Result<Output, GltfError> {
    if doc.skeletons.iter().all(|s| s.bones.is_empty()) && doc.meshes.iter().all(|m| m.positions.is_empty()) {
        return Err(GltfError::Write(
            "nothing to write: the document has no bones and no mesh with vertices; a glTF file of it would be empty".into(),
        ));
    }
    // JOINTS_n holds a joint's index in its skin as an unsigned short at most (glTF 2.0
    // §3.7.3.3): a skin of more joints would have its indices wrap around.
    if let Some((k, s)) = doc.skins.iter().enumerate().find(|(_, s)| s.joints.len() > MAX_SKIN_JOINTS) {
        return Err(GltfError::Write(format!(
            "skin {k} ('{}') has {} joints; glTF holds at most {MAX_SKIN_JOINTS} per skin (16-bit JOINTS indices): split the skin",
            s.name,
            s.joints.len()
        )));
    }
    let doc = doc.in_frame(Frame::GLTF);
    let mut layout = NodeLayout { bones: vec![Vec::new(); doc.skeletons.len()] };
    let mut b = Builder::default();
    let mut nodes: Vec<Value> = Vec::new();
    let mut scene_roots: Vec<usize> = Vec::new();
    let mut skins_json: Vec<Value> = Vec::new();
    let mut meshes_json: Vec<Value> = Vec::new();
    let mut mesh_done: Vec<bool> = vec![false; doc.meshes.len()];
    let parallel = ahead_in_parallel(&doc, parallel_from);
    // The JSON tree, once written out, is freed on the pool when the document is big (a
    // 65,535-bone skeleton's took 128 ms to free; the 50 MB Collada's accessors and split_from
    // lists 1 ms).
    let big = skelport_ir::big_to_free(&doc);
    let mut encoded = if parallel { encode_meshes_ahead(&doc, opts) } else { Ahead::new() };
    skelport_ir::trace::phase("gltf: meshes encoded");
    let mut names = NodeNames::new(&doc);
    // Bones first, so that the nodes skelport adds never push a bone's name aside.
    let bone_names: Vec<Vec<String>> =
        doc.skeletons.iter().map(|sk| sk.bones.iter().map(|b| names.take(&b.name, true)).collect()).collect();

    let skins_by_skeleton = doc.skins_by_skeleton();
    for (si, sk) in doc.skeletons.iter().enumerate() {
        if sk.bones.is_empty() {
            // Nothing is lost: an empty skeleton holds nothing glTF could write.
            diag.info_at(
                "gltf.empty-skeleton",
                Place::single_quoted("skeleton", &sk.name),
                format!("skeleton '{}' has no bones; not written", sk.name),
            );
            continue;
        }
        // (index in the document, skin): borrowed, not cloned (a skin holds all its weights).
        let mut skins: Vec<(Option<usize>, std::borrow::Cow<'_, Skin>)> =
            skins_by_skeleton[si].iter().map(|&k| (Some(k), std::borrow::Cow::Borrowed(&doc.skins[k]))).collect();
        if skins.is_empty() {
            // A rig without a skin: glTF only knows joints through skins, so make one (no mesh
            // uses it; the validator reports an unused object as information only).
            let deform: Vec<BoneId> = (0..sk.bones.len()).filter(|&i| sk.bones[i].deform).map(BoneId::from_index).collect();
            let joints = if deform.is_empty() { (0..sk.bones.len()).map(BoneId::from_index).collect() } else { deform };
            let world = sk.world_matrices();
            let inverse_bind = joints.iter().map(|j| world[j.index()].inverse()).collect();
            skins.push((
                None,
                std::borrow::Cow::Owned(Skin {
                    name: sk.name.clone(),
                    skeleton: skelport_ir::SkeletonId::from_index(si),
                    mesh: None,
                    joints,
                    inverse_bind,
                    bind_shape: DMat4::IDENTITY,
                    influences: Default::default(),
                    ext: Default::default(),
                }),
            ));
        }
        let is_joint: Vec<bool> = {
            let mut v = vec![false; sk.bones.len()];
            for (_, s) in &skins {
                for j in &s.joints {
                    if let Some(x) = v.get_mut(j.index()) {
                        *x = true;
                    }
                }
            }
            v
        };
        let roots: Vec<usize> = (0..sk.bones.len()).filter(|&i| sk.bones[i].parent.is_none()).collect();
        let children = sk.children();
        // An identity node above the roots when there are several (glTF needs one common root
        // above a skin's joints), or when the root is not a joint: Blender's importer makes a
        // non-joint skeleton root the armature *object*, not a bone, and takes the inverse bind
        // matrices as relative to it, so a root with a rotation or offset (the demo's root faces
        // forward) would turn its whole rest pose. Above an identity node both readings agree.
        let root_not_joint = roots.len() == 1 && !is_joint[roots[0]];
        let synthetic = roots.len() > 1 || root_not_joint;
        let top = nodes.len();
        let base = if synthetic { top + 1 } else { top };
        if synthetic {
            let kids: Vec<usize> = roots.iter().map(|r| base + r).collect();
            let ex = BoneExtras { synthetic_root: true, skeleton_ext: Cow::Borrowed(&sk.ext), ..Default::default() };
            let mut n = json!({ "name": names.take(&sk.name, false), "children": kids });
            if let Some(e) = extras_value(&ex) {
                n["extras"] = e;
            }
            nodes.push(n);
            let why = if root_not_joint {
                format!("its root '{}' is not a joint", sk.bones[roots[0]].name)
            } else {
                format!("it has {} roots", roots.len())
            };
            diag.info_at(
                "gltf.synthetic-root",
                Place::single_quoted("skeleton", &sk.name),
                format!("skeleton '{}': {why}; added an identity node above it", sk.name),
            );
        }
        for (i, bone) in sk.bones.iter().enumerate() {
            let mut n = Map::new();
            let name = bone_names[si][i].clone();
            let renamed = (name != bone.name).then(|| bone.name.clone());
            n.insert("name".into(), json!(name));
            let t = &bone.rest;
            if t.translation != DVec3::ZERO {
                n.insert("translation".into(), json!([num(t.translation.x), num(t.translation.y), num(t.translation.z)]));
            }
            let q = t.rotation.normalize();
            if q != DQuat::IDENTITY {
                n.insert("rotation".into(), json!([num(q.x), num(q.y), num(q.z), num(q.w)]));
            }
            if t.scale != DVec3::ONE {
                n.insert("scale".into(), json!([num(t.scale.x), num(t.scale.y), num(t.scale.z)]));
            }
            if !children[i].is_empty() {
                n.insert("children".into(), json!(children[i].iter().map(|c| base + c.index()).collect::<Vec<_>>()));
            }
            let ex = BoneExtras {
                length: bone.length,
                roll: bone.roll,
                anchors: bone.anchors.as_ref().map(Cow::Borrowed),
                mirror: bone.mirror.and_then(|m| sk.bones.get(m.index())).map(|m| m.name.clone()),
                deform: (bone.deform != is_joint[i]).then_some(bone.deform),
                ext: Cow::Borrowed(&bone.ext),
                synthetic_root: false,
                name: renamed,
                skeleton_ext: if !synthetic && i == roots[0] { Cow::Borrowed(&sk.ext) } else { Default::default() },
            };
            if let Some(e) = extras_value(&ex) {
                n.insert("extras".into(), e);
            }
            nodes.push(Value::Object(n));
        }
        if synthetic {
            scene_roots.push(top);
        } else {
            scene_roots.extend(roots.iter().map(|r| base + r));
        }
        layout.bones[si] = (base..base + sk.bones.len()).collect();
        let skeleton_node = if synthetic { top } else { base + roots[0] };
        let world = sk.world_matrices();
        for (k, (doc_skin, skin)) in skins.iter().enumerate() {
            if skin.joints.is_empty() {
                // glTF skins need at least one joint; the mesh is then written unskinned below.
                diag.loss_at(
                    "gltf.skin-without-joints",
                    Place::single_quoted("skin", &skin.name),
                    format!("skin '{}' has no joints; written without a skin", skin.name),
                );
                continue;
            }
            let skin_index = skins_json.len();
            let n = skin.joints.len();
            let mut ibm_bytes = Vec::with_capacity(n * 64);
            for (slot, j) in skin.joints.iter().enumerate() {
                let m = skin.inverse_bind.get(slot).copied().unwrap_or_else(|| {
                    diag.warn_at(
                        "gltf.missing-ibm",
                        Place::single_quoted("skin", &skin.name),
                        format!("skin '{}': joint slot {slot} has no inverse bind matrix; using the rest pose", skin.name),
                    );
                    world.get(j.index()).map(|w| w.inverse()).unwrap_or(DMat4::IDENTITY)
                });
                let mut arr = m.to_cols_array();
                // Exactly affine, as the validator requires.
                arr[3] = 0.0;
                arr[7] = 0.0;
                arr[11] = 0.0;
                arr[15] = 1.0;
                for x in arr {
                    ibm_bytes.extend_from_slice(&(x as f32).to_le_bytes());
                }
            }
            let ibm = b.accessor(ibm_bytes, None, FLOAT, n, "MAT4", false, None);
            let joints: Vec<usize> = skin.joints.iter().map(|j| base + j.index()).collect();
            let mut sj = json!({ "name": skin.name.clone(), "inverseBindMatrices": ibm, "joints": joints, "skeleton": skeleton_node });
            let ex = SkinExtras {
                skeleton: (k == 0 && sk.name != skin.name).then(|| sk.name.clone()),
                skeleton_ext: Default::default(),
                ext: skin.ext.clone(),
            };
            if let Some(e) = extras_value(&ex) {
                sj["extras"] = e;
            }
            skins_json.push(sj);
            match skin.mesh.and_then(|m| doc.get_mesh(m).map(|mesh| (m.index(), mesh))) {
                Some((mi, mesh)) => {
                    let e = match encoded.remove(&(mi, *doc_skin)) {
                        Some(e) => e?,
                        None => encode_mesh(mesh, Some(skin), opts)?,
                    };
                    if let Some(mj) = commit_mesh(&mut b, mesh, e, diag) {
                        mesh_done[mi] = true;
                        meshes_json.push(mj);
                        nodes.push(json!({ "name": names.take(&mesh.name, false), "mesh": meshes_json.len() - 1, "skin": skin_index }));
                        scene_roots.push(nodes.len() - 1);
                    }
                }
                None if skin.influences.weighted_vertices() > 0 => {
                    diag.loss_at(
                        "gltf.skin-without-mesh",
                        Place::single_quoted("skin", &skin.name),
                        format!("skin '{}' has weights but no mesh geometry; weights not written", skin.name),
                    );
                }
                None => {}
            }
        }
    }
    for s in &doc.skins {
        if doc.get_skeleton(s.skeleton).is_none() {
            diag.loss_at(
                "gltf.skin-bad-skeleton",
                Place::single_quoted("skin", &s.name),
                format!("skin '{}' points at a missing skeleton; not written", s.name),
            );
        }
    }
    for (mi, mesh) in doc.meshes.iter().enumerate() {
        if !mesh_done[mi] && !skinned(&doc, mi) {
            let e = match encoded.remove(&(mi, None)) {
                Some(e) => e?,
                None => encode_mesh(mesh, None, opts)?,
            };
            if let Some(mj) = commit_mesh(&mut b, mesh, e, diag) {
                meshes_json.push(mj);
                nodes.push(json!({ "name": names.take(&mesh.name, false), "mesh": meshes_json.len() - 1 }));
                scene_roots.push(nodes.len() - 1);
            }
        }
    }

    if !names.bones.is_empty() {
        diag.loss(
            "gltf.renamed",
            format!(
                "{} bone(s) renamed because a bone of an earlier skeleton has the name, and node names are made unique (skelport reads the original back from extras): {}",
                names.bones.len(),
                renames(&names.bones)
            ),
        );
    }
    if !names.added.is_empty() {
        diag.info(
            "gltf.renamed-node",
            format!("node(s) skelport adds renamed so that every node name is unique: {}", renames(&names.added)),
        );
    }
    let mut root = Map::new();
    skelport_ir::trace::phase("gltf: nodes, skins, accessors");
    root.insert("asset".into(), json!({ "version": "2.0", "generator": concat!("skelport ", env!("CARGO_PKG_VERSION")) }));
    if !nodes.is_empty() {
        root.insert("scene".into(), json!(0));
        root.insert("scenes".into(), json!([{ "nodes": scene_roots }]));
        root.insert("nodes".into(), Value::Array(nodes));
    }
    if !meshes_json.is_empty() {
        root.insert("meshes".into(), Value::Array(meshes_json));
    }
    if !skins_json.is_empty() {
        root.insert("skins".into(), Value::Array(skins_json));
    }
    if !b.accessors.is_empty() {
        root.insert("accessors".into(), Value::Array(std::mem::take(&mut b.accessors)));
        root.insert("bufferViews".into(), Value::Array(std::mem::take(&mut b.views)));
    }
    if let Some(e) = extras_value(&DocExtras { ext: doc.ext.clone() }) {
        root.insert("extras".into(), e);
    }
    if let Some(edit) = edit {
        edit(&mut root, &layout).map_err(GltfError::Write)?;
    }
    let has_bin = b.len > 0;
    let stem = if opts.file_stem.is_empty() { "skelport" } else { opts.file_stem.as_str() };
    match container {
        Container::Json => {
            let mut side = Vec::new();
            if has_bin {
                let mut bin = Vec::new();
                b.bin_into(&mut bin, parallel);
                let uri = if opts.embed {
                    format!("data:application/octet-stream;base64,{}", base64::engine::general_purpose::STANDARD.encode(&bin))
                } else {
                    // A URI, not a file name: `my model#1.bin` must not read as a fragment,
                    // nor `a%41.bin` decode to `aA.bin`.
                    skelport_ir::files::percent_encode(&format!("{stem}.bin"))
                };
                root.insert("buffers".into(), json!([{ "byteLength": bin.len(), "uri": uri }]));
                if !opts.embed {
                    side.push((format!("{stem}.bin"), bin));
                }
            }
            let root = Value::Object(root);
            let mut text = crate::pretty::to_vec(&root).map_err(|e| GltfError::Write(e.to_string()))?;
            skelport_ir::drop_aside(root, big);
            text.push(b'\n');
            Ok(Output { main: text, side_files: side, ..Output::default() })
        }
        Container::Binary => {
            let bin_len = b.padded_len();
            if has_bin {
                root.insert("buffers".into(), json!([{ "byteLength": bin_len }]));
            }
            // The GLB container (a 12-byte header, then a JSON and a BIN chunk, each with an
            // 8-byte header and padded to 4 bytes: glTF 2.0 §4.4) written straight into one
            // buffer sized for both chunks, the binary pieces copied once into place; or, when
            // the caller writes pieces, the pieces left as they are after the BIN chunk's header.
            let in_pieces = opts.main_in_pieces && has_bin;
            let mut out = Vec::with_capacity(20 + bin_len / 2 + 4096 + 8 + if in_pieces { 0 } else { bin_len });
            out.resize(20, 0);
            let root = Value::Object(root);
            serde_json::to_writer(&mut out, &root).map_err(|e| GltfError::Write(e.to_string()))?;
            skelport_ir::drop_aside(root, big);
            while out.len() % 4 != 0 {
                out.push(b' ');
            }
            let json_len = out.len() - 20;
            skelport_ir::trace::phase("gltf: JSON");
            if has_bin {
                out.extend_from_slice(&(bin_len as u32).to_le_bytes());
                out.extend_from_slice(b"BIN\0");
                if !in_pieces {
                    b.bin_into(&mut out, parallel);
                }
            }
            let whole = out.len() + if in_pieces { bin_len } else { 0 };
            let total = u32::try_from(whole).map_err(|_| GltfError::Write("the GLB would be 4 GiB or more".into()))?;
            out[..4].copy_from_slice(b"glTF");
            out[4..8].copy_from_slice(&2u32.to_le_bytes());
            out[8..12].copy_from_slice(&total.to_le_bytes());
            out[12..16].copy_from_slice(&(json_len as u32).to_le_bytes());
            out[16..20].copy_from_slice(b"JSON");
            Ok(Output { main: out, main_pieces: if in_pieces { b.into_pieces() } else { Vec::new() }, side_files: Vec::new() })
        }
    }
}

/// Whether skin `s` is written as a glTF skin (it has joints, on a skeleton with bones).
fn written(doc: &Document, s: &Skin) -> bool {
    !s.joints.is_empty() && doc.get_skeleton(s.skeleton).is_some_and(|k| !k.bones.is_empty())
}

/// Whether a skin that is written binds mesh `mi` (a mesh no written skin binds is written alone).
fn skinned(doc: &Document, mi: usize) -> bool {
    doc.skins.iter().any(|s| s.mesh.map(skelport_ir::MeshId::index) == Some(mi) && written(doc, s))
}

/// Whether the meshes are encoded ahead and the buffer assembled on every core: several meshes
/// holding `parallel_from` vertices plus corners.
fn ahead_in_parallel(doc: &Document, parallel_from: usize) -> bool {
    doc.meshes.len() >= 2 && skelport_ir::mesh_work(&doc.meshes) >= parallel_from
}

/// Whether meshes encoded ahead on every core give `doc` the same bytes, diagnostics and first
/// error as meshes encoded in turn, in both containers; a disagreement panics. Returns the
/// comparisons made: none for a document the ahead path never takes (fewer than two meshes).
/// Shared by the tests and [`crate::GlbFormat`]'s fuzz check.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn ahead_agrees(doc: &Document) -> usize {
    if !ahead_in_parallel(doc, 0) {
        return 0;
    }
    for container in [Container::Binary, Container::Json] {
        let run = |from: usize| {
            let mut d = Diagnostics::default();
            let out = write_with(doc, &WriteOptions::default(), container, &mut d, from).map_err(|e| e.to_string());
            (out.map(|o| (o.main, o.side_files)), d.items)
        };
        let ((seq, seq_diags), (par, par_diags)) = (run(usize::MAX), run(0));
        assert!(seq_diags == par_diags, "{container:?}: diagnostics differ, in turn {seq_diags:?}, ahead {par_diags:?}");
        // Not assert_eq!: the outputs are whole files; the errors are what is worth printing.
        assert!(
            seq == par,
            "{container:?}: meshes encoded ahead and in turn differ (errors: {:?}, {:?})",
            seq.as_ref().err(),
            par.as_ref().err()
        );
    }
    2
}

/// The meshes [`write`] will write, keyed by (mesh, skin index in the document), encoded on
/// every core when there is enough of them; empty otherwise ([`write`] encodes whatever it does
/// not find here itself, so this only has to be right to be fast).
type Ahead = std::collections::HashMap<(usize, Option<usize>), Result<Encoded, GltfError>>;

fn encode_meshes_ahead(doc: &Document, opts: &WriteOptions) -> Ahead {
    let mut jobs: Vec<(usize, Option<usize>)> = Vec::new();
    for (k, s) in doc.skins.iter().enumerate() {
        if let Some(mi) = s.mesh.map(skelport_ir::MeshId::index).filter(|&m| m < doc.meshes.len() && written(doc, s)) {
            jobs.push((mi, Some(k)));
        }
    }
    jobs.extend((0..doc.meshes.len()).filter(|&mi| !skinned(doc, mi)).map(|mi| (mi, None)));
    let encoded = skelport_ir::map_in_order(jobs, true, |(mi, k)| ((mi, k), encode_mesh(&doc.meshes[mi], k.map(|k| &doc.skins[k]), opts)));
    encoded.into_iter().collect()
}

/// An accessor's data, encoded apart from the buffer so that meshes can be encoded on any thread
/// and placed in the buffer afterwards, in order.
struct Pending {
    /// The primitive attribute it is (`None`: the indices, in an element array buffer).
    attribute: Option<String>,
    bytes: Vec<u8>,
    component: u32,
    count: usize,
    ty: &'static str,
    minmax: Option<(Value, Value)>,
}

/// A mesh encoded for glTF: its accessors in buffer order and what encoding it reported.
struct Encoded {
    diag: Diagnostics,
    /// `None` when the mesh is not written (no vertices).
    accessors: Option<Vec<Pending>>,
    /// The mesh's `extras` (its extension, the source vertex of each vertex appended at a seam,
    /// its UV set names): made with the rest, so on the pool when meshes are encoded ahead (a
    /// big mesh's `split_from` is thousands of JSON numbers).
    extras: Option<Value>,
}

/// `N` floats as little-endian bytes into `out`, a chunk of a buffer sized once: one
/// `Vec::extend` per component checked the capacity each time, a fifth of the mesh encoding's
/// instructions (docs/performance.md).
#[inline(always)]
fn put_f32s<const N: usize>(out: &mut [u8], vals: [f32; N]) {
    for (dst, v) in out.chunks_exact_mut(4).zip(vals) {
        dst.copy_from_slice(&v.to_le_bytes());
    }
}

/// Encode `mesh` (skinned by `skin`) without touching the shared buffer.
///
/// glTF holds every attribute per vertex: where a vertex's corners carry different normals or
/// UVs (a seam), the vertex is split, the copies appended after the mesh's own vertices (whose
/// numbers stay) and each carrying its source vertex's position and skin influences. A mesh
/// without normals gets smooth ones (`skelport_ir::proc::smooth_normals`), said in a note: glTF
/// viewers draw a mesh without normals faceted.
fn encode_mesh(mesh: &Mesh, skin: Option<&Skin>, opts: &WriteOptions) -> Result<Encoded, GltfError> {
    #[cfg(target_arch = "x86_64")]
    if skelport_ir::has_avx2() {
        // SAFETY: the CPU has AVX2, checked above; the function is plain Rust otherwise.
        return unsafe { encode_mesh_avx2(mesh, skin, opts) };
    }
    encode_mesh_in(mesh, skin, opts)
}

/// [`encode_mesh`] compiled for AVX2: its per-vertex loops (transforms, conversions to float32,
/// normalisation) take fewer instructions (Linden body -0.19 M, MakeHuman body -0.62 M;
/// docs/performance.md).
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn encode_mesh_avx2(mesh: &Mesh, skin: Option<&Skin>, opts: &WriteOptions) -> Result<Encoded, GltfError> {
    encode_mesh_in(mesh, skin, opts)
}

#[inline(always)]
fn encode_mesh_in(mesh: &Mesh, skin: Option<&Skin>, opts: &WriteOptions) -> Result<Encoded, GltfError> {
    let mut diag = Diagnostics::default();
    let nv = mesh.positions.len();
    if nv == 0 {
        diag.loss_at(
            "gltf.empty-mesh",
            Place::single_quoted("mesh", &mesh.name),
            format!("mesh '{}' has no vertices; not written", mesh.name),
        );
        return Ok(Encoded { diag, accessors: None, extras: None });
    }
    if u32::try_from(nv).is_err() {
        return Err(GltfError::Write(format!("mesh '{}' has too many vertices", mesh.name)));
    }
    let corners = mesh.faces.indices.len();
    let fits = |per_corner: bool, len: usize| len == if per_corner { corners } else { nv };
    // Attributes whose count is wrong (only an unvalidated document has them) are dropped.
    let given = match &mesh.normals {
        Some(n) if fits(n.is_per_corner(), n.values().len()) => Some(std::borrow::Cow::Borrowed(n)),
        Some(n) => {
            let what = if n.is_per_corner() { "corner" } else { "vertex" };
            diag.loss_at(
                "gltf.normals",
                Place::single_quoted("mesh", &mesh.name),
                format!("mesh '{}': normal count differs from {what} count; normals dropped", mesh.name),
            );
            None
        }
        None => None,
    };
    let computed = given.is_none() && !mesh.faces.is_empty();
    let normals = match given {
        Some(n) => Some(n),
        None if computed => Some(std::borrow::Cow::Owned(Normals::PerVertex(proc::smooth_normals(&mesh.positions, &mesh.faces)))),
        None => None,
    };
    let mut uv_sets: Vec<&UvSet> = Vec::with_capacity(mesh.uvs.len());
    for (k, set) in mesh.uvs.iter().enumerate() {
        if fits(set.uvs.is_per_corner(), set.uvs.values().len()) {
            uv_sets.push(set);
        } else {
            diag.loss_at(
                "gltf.uvs",
                Place::single_quoted("mesh", &mesh.name),
                format!("mesh '{}': UV set {k} has the wrong count of values; not written", mesh.name),
            );
        }
    }
    // Split where per-corner values differ; no split (and no copy of anything) without them.
    let corner_normals = normals.as_deref().filter(|n| n.is_per_corner()).map(|n| n.values());
    let corner_uvs: Vec<&[DVec2]> = uv_sets.iter().filter(|s| s.uvs.is_per_corner()).map(|s| s.uvs.values()).collect();
    let split = (corner_normals.is_some() || !corner_uvs.is_empty()).then(|| {
        proc::split_vertices(nv, &mesh.faces.indices, |a, b| {
            corner_normals.is_none_or(|n| n[a] == n[b]) && corner_uvs.iter().all(|u| u[a] == u[b])
        })
    });
    let out_n = split.as_ref().map_or(nv, |s| s.len());
    if u32::try_from(out_n).is_err() {
        return Err(GltfError::Write(format!("mesh '{}' has too many vertices once split at its seams", mesh.name)));
    }
    let src = |o: usize| split.as_ref().map_or(o, |s| s.source(o));
    // Per-vertex values of the output vertices: borrowed when nothing was split.
    fn per_output<'a, T: Copy>(attr: &'a Attribute<T>, split: Option<&proc::VertexSplit>, missing: T) -> std::borrow::Cow<'a, [T]> {
        match (split, attr) {
            (Some(s), a) => std::borrow::Cow::Owned(s.values(a, missing)),
            (None, a) => std::borrow::Cow::Borrowed(a.values()),
        }
    }
    let mut out = Vec::new();
    let attr = |name: &str, bytes: Vec<u8>, component: u32, count: usize, ty: &'static str| Pending {
        attribute: Some(name.to_string()),
        bytes,
        component,
        count,
        ty,
        minmax: None,
    };
    // glTF has no bind-shape matrix: bake it into the geometry.
    let bind = skin.map(|s| s.bind_shape).unwrap_or(DMat4::IDENTITY);
    let normal_m = DMat3::from_mat4(bind).inverse().transpose();
    let mut pos_bytes = vec![0u8; out_n * 12];
    let (mut min, mut max) = ([f32::INFINITY; 3], [f32::NEG_INFINITY; 3]);
    let mut finite = true;
    for (o, out) in pos_bytes.chunks_exact_mut(12).enumerate() {
        let p = bind.transform_point3(mesh.positions[src(o)]);
        let a = [p.x as f32, p.y as f32, p.z as f32];
        for k in 0..3 {
            finite &= a[k].is_finite();
            min[k] = min[k].min(a[k]);
            max[k] = max[k].max(a[k]);
        }
        put_f32s(out, a);
    }
    if !finite {
        return Err(GltfError::Write(format!("mesh '{}' has a non-finite position", mesh.name)));
    }
    out.push(Pending { minmax: Some((json!(min.map(exact)), json!(max.map(exact)))), ..attr("POSITION", pos_bytes, FLOAT, out_n, "VEC3") });
    if let Some(n) = &normals {
        let n = per_output(n, split.as_ref(), DVec3::ZERO);
        let mut bytes = vec![0u8; n.len() * 12];
        let mut fixed = 0usize;
        for (v, out) in n.iter().zip(bytes.chunks_exact_mut(12)) {
            let mut d = (normal_m * *v).normalize_or_zero();
            if d == DVec3::ZERO || !d.is_finite() {
                d = DVec3::Y;
                fixed += 1;
            }
            // Renormalize in f32 so the validator's unit-length check holds.
            let f = glam::Vec3::new(d.x as f32, d.y as f32, d.z as f32).normalize();
            put_f32s(out, [f.x, f.y, f.z]);
        }
        if computed {
            let alone = if fixed > 0 { format!(" ({fixed} vertices on no face of any area got +Y)") } else { String::new() };
            diag.info_at(
                "gltf.computed-normals",
                Place::single_quoted("mesh", &mesh.name),
                format!("mesh '{}' has no normals: smooth normals computed (area-weighted per vertex){alone}", mesh.name),
            );
        } else if fixed > 0 {
            diag.warn_at(
                "gltf.zero-normal",
                Place::single_quoted("mesh", &mesh.name),
                format!("mesh '{}': {fixed} zero-length normals replaced by +Y", mesh.name),
            );
        }
        out.push(attr("NORMAL", bytes, FLOAT, out_n, "VEC3"));
    }
    for (k, set) in uv_sets.iter().enumerate() {
        let uv = per_output(&set.uvs, split.as_ref(), DVec2::ZERO);
        let mut bytes = vec![0u8; uv.len() * 8];
        for (t, out) in uv.iter().zip(bytes.chunks_exact_mut(8)) {
            // The IR's v runs up from the bottom; glTF's runs down from the top.
            put_f32s(out, [t.x as f32, (1.0 - t.y) as f32]);
        }
        out.push(attr(&format!("TEXCOORD_{k}"), bytes, FLOAT, out_n, "VEC2"));
    }
    if let Some(skin) = skin {
        for (s, (jb, wide, wb)) in encode_influences(mesh, skin, opts, &mut diag, split.as_ref()).into_iter().enumerate() {
            out.push(attr(&format!("JOINTS_{s}"), jb, if wide { UNSIGNED_SHORT } else { UNSIGNED_BYTE }, out_n, "VEC4"));
            out.push(attr(&format!("WEIGHTS_{s}"), wb, FLOAT, out_n, "VEC4"));
        }
    }
    // Triangles by corner, so that each corner takes its own (split) vertex; a triangle naming a
    // vertex the mesh does not have is dropped.
    let tri_corners = mesh.faces.triangulated_corners();
    let vertex_of = |c: u32| mesh.faces.indices[c as usize];
    let bad = tri_corners.chunks_exact(3).filter(|t| t.iter().any(|&c| vertex_of(c) as usize >= nv)).count();
    if bad > 0 {
        diag.loss_at(
            "gltf.bad-face",
            Place::single_quoted("mesh", &mesh.name),
            format!("mesh '{}': {bad} triangles refer to missing vertices; dropped", mesh.name),
        );
    }
    let output_vertex = |c: u32| split.as_ref().map_or(vertex_of(c), |s| s.corner_vertex[c as usize]);
    // Without a dropped triangle, one sized pass (an `extend` per triangle cost 97 instructions).
    let tris: Vec<u32> = if bad == 0 {
        tri_corners.iter().map(|&c| output_vertex(c)).collect()
    } else {
        let mut tris = Vec::with_capacity(tri_corners.len());
        for t in tri_corners.chunks_exact(3).filter(|t| t.iter().all(|&c| (vertex_of(c) as usize) < nv)) {
            tris.extend(t.iter().map(|&c| output_vertex(c)));
        }
        tris
    };
    if tris.is_empty() {
        diag.info_at(
            "gltf.points",
            Place::single_quoted("mesh", &mesh.name),
            format!("mesh '{}' has no faces; written as points", mesh.name),
        );
    } else {
        // 65535 is the primitive-restart value, so 16-bit indices need fewer vertices than that.
        // Plain loops into a sized buffer: `flat_map(..).collect()` cannot size its output.
        let (bytes, ct) = if out_n < 65535 {
            let mut v = vec![0u8; tris.len() * 2];
            for (&i, out) in tris.iter().zip(v.chunks_exact_mut(2)) {
                out.copy_from_slice(&(i as u16).to_le_bytes());
            }
            (v, UNSIGNED_SHORT)
        } else {
            let mut v = vec![0u8; tris.len() * 4];
            for (&i, out) in tris.iter().zip(v.chunks_exact_mut(4)) {
                out.copy_from_slice(&i.to_le_bytes());
            }
            (v, UNSIGNED_INT)
        };
        out.push(Pending { attribute: None, bytes, component: ct, count: tris.len(), ty: "SCALAR", minmax: None });
    }
    let split_from = split.map(|s| s.extra).unwrap_or_default();
    let uv_names = if mesh.uvs.iter().any(|s| !s.name.is_empty()) { mesh.uvs.iter().map(|s| s.name.clone()).collect() } else { Vec::new() };
    let extras = extras_value(&MeshExtras { ext: mesh.ext.clone(), split_from, uv_names });
    Ok(Encoded { diag, accessors: Some(out), extras })
}

/// Place an encoded mesh's accessors in the buffer (in order) and give its glTF mesh.
fn commit_mesh(b: &mut Builder, mesh: &Mesh, e: Encoded, diag: &mut Diagnostics) -> Option<Value> {
    diag.items.extend(e.diag.items);
    let accessors = e.accessors?;
    let mut attrs = Map::new();
    let mut indices = None;
    for a in accessors {
        let target = if a.attribute.is_some() { ARRAY_BUFFER } else { ELEMENT_ARRAY_BUFFER };
        let i = b.accessor(a.bytes, Some(target), a.component, a.count, a.ty, false, a.minmax);
        match a.attribute {
            Some(name) => {
                attrs.insert(name, json!(i));
            }
            None => indices = Some(i),
        }
    }
    let mut prim = Map::new();
    prim.insert("attributes".into(), Value::Object(attrs));
    match indices {
        Some(i) => prim.insert("indices".into(), json!(i)),
        None => prim.insert("mode".into(), json!(0)),
    };
    let mut mj = json!({ "name": mesh.name.clone(), "primitives": [Value::Object(prim)] });
    if let Some(e) = e.extras {
        mj["extras"] = e;
    }
    Some(mj)
}

/// Per-vertex (slot, weight) lists, vertex after vertex in one buffer: vertex `v`'s are
/// `pairs[ends[v - 1]..ends[v]]` (from 0 for the first).
pub(crate) struct Prepared {
    pub pairs: Vec<(u32, f64)>,
    pub ends: Vec<usize>,
}

impl Prepared {
    /// Each vertex's list.
    pub fn lists(&self) -> impl Iterator<Item = &[(u32, f64)]> + '_ {
        (0..self.ends.len()).map(|v| &self.pairs[if v == 0 { 0 } else { self.ends[v - 1] }..self.ends[v]])
    }
}

/// Per-vertex (slot, weight) lists ready for writing: positive weights only, largest first,
/// limited, normalized; vertices without influences bound to slot 0. One scratch list and one
/// output buffer, not one `Vec` per vertex.
pub(crate) fn prepared_lists(skin: &Skin, nv: usize, max_influences: Option<usize>) -> (Prepared, usize, usize) {
    let mut limited = 0usize;
    let mut unbound = 0usize;
    let slots = skin.joints.len() as u32;
    let mut out = Prepared { pairs: Vec::with_capacity(skin.influences.joints.len().max(nv)), ends: Vec::with_capacity(nv) };
    let mut l: Vec<(u32, f64)> = Vec::new();
    for v in 0..nv {
        l.clear();
        if v < skin.influences.vertex_count() {
            l.extend(skin.influences.vertex(v).filter(|&(j, w)| w > 0.0 && w.is_finite() && j < slots));
        }
        // Merge duplicate slots (the validator refuses a joint listed twice).
        l.sort_by_key(|e| e.0);
        l.dedup_by(|a, b| {
            if a.0 == b.0 {
                b.1 += a.1;
                true
            } else {
                false
            }
        });
        l.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        if let Some(n) = max_influences {
            if l.len() > n.max(1) {
                l.truncate(n.max(1));
                limited += 1;
            }
        }
        let s: f64 = l.iter().map(|e| e.1).sum();
        if l.is_empty() || s <= 0.0 {
            l.clear();
            l.push((0, 1.0));
            unbound += 1;
        } else {
            for e in &mut l {
                e.1 /= s;
            }
        }
        out.pairs.extend_from_slice(&l);
        out.ends.push(out.pairs.len());
    }
    (out, limited, unbound)
}

/// Float32 weights whose sum is as close to 1 as float32 allows: the largest weight (first)
/// takes up the rounding of the others. Appended to `out` (one buffer for a whole skin).
pub(crate) fn f32_weights_into(l: &[(u32, f64)], out: &mut Vec<f32>) {
    let first = out.len();
    out.extend(l.iter().map(|e| e.1 as f32));
    let w = &mut out[first..];
    if w.len() > 1 {
        let rest: f64 = w[1..].iter().map(|&x| x as f64).sum();
        w[0] = (1.0 - rest) as f32;
    } else if let Some(x) = w.first_mut() {
        *x = 1.0;
    }
}

/// The JOINTS_n / WEIGHTS_n data of a skinned mesh: per set of four, the joint bytes, whether
/// they are 16-bit, and the weight bytes.
/// With a `split`, each output vertex carries its source vertex's influences.
fn encode_influences(
    mesh: &Mesh,
    skin: &Skin,
    opts: &WriteOptions,
    diag: &mut Diagnostics,
    split: Option<&proc::VertexSplit>,
) -> Vec<(Vec<u8>, bool, Vec<u8>)> {
    let nv = mesh.positions.len();
    if skin.influences.vertex_count() != nv {
        diag.warn_at(
            "gltf.influence-count",
            Place::single_quoted("skin", &skin.name),
            format!(
                "skin '{}' has influences for {} vertices but mesh '{}' has {nv}",
                skin.name,
                skin.influences.vertex_count(),
                mesh.name
            ),
        );
    }
    let (lists, limited, unbound) = prepared_lists(skin, nv, opts.max_influences);
    if limited > 0 {
        diag.loss_at(
            "gltf.max-influences",
            Place::single_quoted("skin", &skin.name),
            format!(
                "skin '{}': {limited} vertices kept only their {} largest influences (renormalized)",
                skin.name,
                opts.max_influences.unwrap_or(0)
            ),
        );
    }
    if unbound > 0 {
        let first = skin.joints.first().map(|j| j.raw()).unwrap_or(0);
        diag.loss_at(
            "gltf.unweighted-vertices",
            Place::single_quoted("skin", &skin.name),
            format!(
                "skin '{}': {unbound} vertices had no influence; bound to the first joint (bone #{first}) with weight 1, as glTF requires",
                skin.name
            ),
        );
    }
    let widest = lists.lists().map(<[_]>::len).max().unwrap_or(1).max(1);
    let sets = widest.div_ceil(4);
    let wide = skin.joints.len() > 256;
    // Same layout as `lists`: vertex v's weights are at the same positions as its pairs.
    let mut weights: Vec<f32> = Vec::with_capacity(lists.pairs.len());
    for l in lists.lists() {
        f32_weights_into(l, &mut weights);
    }
    let out_n = split.map_or(nv, |s| s.len());
    let mut out = Vec::with_capacity(sets);
    for s in 0..sets {
        let jsize = if wide { 2 } else { 1 };
        let mut jb = vec![0u8; out_n * 4 * jsize];
        let mut wb = vec![0u8; out_n * 16];
        for (o, (js, ws)) in jb.chunks_exact_mut(4 * jsize).zip(wb.chunks_exact_mut(16)).enumerate() {
            let v = split.map_or(o, |s| s.source(o));
            let range = if v == 0 { 0 } else { lists.ends[v - 1] }..lists.ends[v];
            let (l, w) = (&lists.pairs[range.clone()], &weights[range]);
            let mut four = [0.0f32; 4];
            for c in 0..4 {
                let k = s * 4 + c;
                // Slots past the vertex's influences stay joint 0, weight 0.
                if let (Some(e), Some(&x)) = (l.get(k), w.get(k)) {
                    four[c] = x;
                    if wide {
                        js[2 * c..2 * c + 2].copy_from_slice(&(e.0 as u16).to_le_bytes());
                    } else {
                        js[c] = e.0 as u8;
                    }
                }
            }
            put_f32s(ws, four);
        }
        out.push((jb, wide, wb));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{ahead_agrees, write_with, Builder, Container};

    /// The buffer assembled from its pieces is their concatenation with each piece at a 4-byte
    /// boundary and zeros between and after, on one core or many, after bytes already there;
    /// and so are the pieces left for the caller (`Output::main_pieces`).
    #[test]
    fn buffer_pieces_are_placed_and_padded() {
        let mut next = skelport_ir::testing::xorshift(0x5eed_0000_0b1du64);
        for _ in 0..200 {
            let mut b = Builder::default();
            let mut want: Vec<u8> = Vec::new();
            for _ in 0..(next() % 6) {
                let piece: Vec<u8> = (0..next() % 11).map(|_| (next() % 255 + 1) as u8).collect();
                want.resize(want.len().next_multiple_of(4), 0);
                want.extend_from_slice(&piece);
                b.view(piece, None);
            }
            want.resize(want.len().next_multiple_of(4), 0);
            assert_eq!(b.padded_len(), want.len());
            for parallel in [false, true] {
                let mut out = vec![9u8, 9, 9];
                b.bin_into(&mut out, parallel);
                assert_eq!(out[..3], [9, 9, 9]);
                assert_eq!(out[3..], want[..], "parallel: {parallel}");
            }
            // Left in pieces for the caller to write: the same bytes.
            let out = skelport_ir::Output { main: vec![9u8, 9, 9], main_pieces: b.into_pieces(), side_files: vec![] };
            assert_eq!(out.into_main()[3..], want[..]);
        }
    }
    use skelport_ir::{DVec3, Diagnostics, Document};

    /// What `num` wrote before zmij: the float32's `Display` text read back by `str::parse`.
    fn num_by_std(x: f64) -> serde_json::Value {
        let f = x as f32;
        format!("{f}")
            .parse::<f64>()
            .ok()
            .and_then(serde_json::Number::from_f64)
            .map_or(serde_json::Value::from(0), serde_json::Value::Number)
    }

    fn assert_num_as_std(bits: u32) {
        let x = f64::from(f32::from_bits(bits));
        let (got, want) = (super::num(x), num_by_std(x));
        // Compared as the JSON text written, and as bits (the text of -0.0 and 0.0 differ too).
        assert_eq!(got.to_string(), want.to_string(), "float32 bits {bits:#010x}");
        assert_eq!(got.as_f64().map(f64::to_bits), want.as_f64().map(f64::to_bits), "float32 bits {bits:#010x}");
    }

    /// Numbers are written as before: random float32s of every exponent, the edges (zeros,
    /// subnormals, the largest, non-finite values), and f64s that round to them.
    #[test]
    fn numbers_are_the_shortest_float32_text() {
        let mut next = skelport_ir::testing::xorshift(0x0f32_5107_7e57u64);
        for _ in 0..200_000 {
            assert_num_as_std(next() as u32);
        }
        for bits in
            [0, 0x8000_0000, 1, 0x8000_0001, 0x007f_ffff, 0x0080_0000, 0x7f7f_ffff, 0xff7f_ffff, 0x7f80_0000, 0xff80_0000, 0x7fc0_0000]
        {
            assert_num_as_std(bits);
        }
        for x in [0.1f64, 1e-7, 1e21, 123_456_789.0, 0.3, -2.5e-38, 1e39, 16_777_217.0] {
            assert_eq!(super::num(x).to_string(), num_by_std(x).to_string(), "{x}");
        }
        // Integers and powers of ten, where the two spellings (`1e21`, `100000000000000000000`)
        // differ most.
        for e in -45..39 {
            for m in [1.0f64, 3.0, 9.999_999] {
                let x = m * 10f64.powi(e);
                assert_eq!(super::num(x).to_string(), num_by_std(x).to_string(), "{x}");
            }
        }
    }

    /// Every float32, when asked for (`cargo test --release -p skelport-gltf -- --ignored`):
    /// 23 minutes on two cores (all 2^32 agreed, 2026-11-29).
    #[test]
    #[ignore]
    fn numbers_are_the_shortest_float32_text_for_every_float32() {
        std::thread::scope(|s| {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get()) as u64;
            for t in 0..n {
                s.spawn(move || {
                    let (lo, hi) = ((1u64 << 32) * t / n, (1u64 << 32) * (t + 1) / n);
                    for bits in lo..hi {
                        assert_num_as_std(bits as u32);
                    }
                });
            }
        });
    }

    /// The demo's meshes and skins four times over, plus an unskinned copy, an empty mesh and
    /// (in the bad case) a non-finite position in the third skinned mesh.
    fn many(bad: bool) -> Document {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo/sample.glb");
        let bytes = std::fs::read(&path).expect("demo");
        let doc = crate::read_bytes(&bytes, Some(&path), &mut Diagnostics::default()).expect("demo reads");
        assert!(!doc.meshes.is_empty() && !doc.skins.is_empty());
        let mut out = skelport_ir::testing::repeated(&doc, 4);
        // Each copy's skins placed apart, so a mesh encoded with the wrong skin shows.
        for (k, s) in out.skins.iter_mut().enumerate() {
            let c = k / doc.skins.len();
            s.bind_shape = skelport_ir::DMat4::from_translation(DVec3::new(c as f64, 0.0, 0.0)) * s.bind_shape;
        }
        let mut alone = doc.meshes[0].clone();
        alone.name = "alone".into();
        out.meshes.push(alone);
        out.meshes.push(skelport_ir::Mesh { name: "empty".into(), ..Default::default() });
        if bad {
            out.meshes[2 * doc.meshes.len()].positions[0] = DVec3::new(f64::NAN, 0.0, 0.0);
        }
        out
    }

    /// Meshes encoded ahead on every core give the same bytes, diagnostics and first error as
    /// meshes encoded one after another in [`super::write`]'s own order.
    #[test]
    fn parallel_and_sequential_writes_agree() {
        for bad in [false, true] {
            let doc = many(bad);
            assert_eq!(ahead_agrees(&doc), 2);
            for container in [Container::Binary, Container::Json] {
                let mut d = Diagnostics::default();
                let out = write_with(&doc, &Default::default(), container, &mut d, 0);
                assert_eq!(out.is_err(), bad);
                if !bad {
                    assert!(d.items.iter().any(|i| i.code == "gltf.empty-mesh"), "{:?}", d.items);
                }
            }
        }
    }
}
