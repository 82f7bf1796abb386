//! glTF → IR.
//!
//! The JSON is deserialized into `gltf_json::Root` (the file model); every index is then checked
//! here, before use, against the arrays it points into. Checks follow the Khronos validator's
//! skin rules: unresolved references, empty joint lists, IBM format/count/stride/affinity, joints
//! without a common root, `skeleton` not an ancestor of the joints, nodes with several parents
//! and cycles, JOINTS/WEIGHTS pairing, joint indices out of range or duplicated, negative weights.

use crate::buffers::{self, AccessorData};
use crate::error::GltfError;
use crate::extras::{BoneExtras, DocExtras, MeshExtras, SkinExtras};
use gltf_json::accessor::ComponentType;
use gltf_json::mesh::{Mode, Semantic};
use gltf_json::validation::Checked;
use gltf_json::Root;
use skelport_ir::jsonskip::JsonSkip;
use skelport_ir::names::{Suffix, UniqueNames};
use skelport_ir::proc;
use skelport_ir::{
    Bone, BoneId, Budget, DMat4, DQuat, DVec2, DVec3, Diagnostics, Document, Extensions, Frame, Influences, Input, Mesh, Normals,
    ReadOptions, Skeleton, Skin, Transform, UvSet, Uvs,
};
use skelport_ir::{FaultKind, Place};
use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// The code of a warning that an accessor does not fit in its buffer view (only for accessors
/// nobody uses: a used one is refused), one of the format's structural codes.
pub const ACCESSOR_RANGE: &str = "gltf.accessor-range";

/// The code of a warning that the buffer view of inverse bind matrices has a `byteStride` equal
/// to the packed matrix size (read as if absent), one of the format's structural codes.
pub const IBM_STRIDE: &str = "gltf.ibm-stride";

/// Bytes of one inverse bind matrix (MAT4 of FLOAT).
const IBM_SIZE: usize = 64;

/// Weight sums further than this from 1 are reported and renormalized. The validator's own
/// threshold is tighter (a few float32 ulps per weight); files from real exporters that are a
/// little outside it still skin the same, so they are repaired with a warning rather than refused.
const WEIGHT_SUM_TOLERANCE: f64 = 2e-3;
/// Decode-budget bytes charged per node for the reader's node graph (two matrices, parent,
/// depth, order, name, child list).
const NODE_BYTES: u64 = 384;
/// Decode-budget bytes charged per skin joint (its inverse bind matrix, table entries).
const JOINT_BYTES: u64 = 192;
/// Decode-budget bytes charged per bone built: the IR's bone itself, and 256 for its name and
/// the reader's maps (node → bone, the names taken, the skeleton's node set and order).
const BONE_BYTES: u64 = std::mem::size_of::<Bone>() as u64 + 256;

/// TEXCOORD sets read per mesh (`TEXCOORD_0` to `TEXCOORD_7`; docs/limits.md): a set number
/// in an attribute name would otherwise size the reader's tables.
pub const MAX_UV_SETS: usize = 8;

pub(crate) fn read(input: Input<'_>, opts: &ReadOptions, format: &str, diag: &mut Diagnostics) -> Result<Document, GltfError> {
    read_with_nodes(input, opts, format, &[], diag).map(|(doc, _)| doc)
}

/// [`read`], also giving the (skeleton, bone) each node became. `bones` are nodes a format built
/// on glTF names as bones (VRM's humanoid): those no skin binds become a skeleton of their own.
pub(crate) fn read_with_nodes(
    input: Input<'_>,
    opts: &ReadOptions,
    format: &str,
    bones: &[usize],
    diag: &mut Diagnostics,
) -> Result<(Document, NodeBones), GltfError> {
    let file = input.display_name();
    let file = file.as_str();
    let glb = if input.bytes.starts_with(b"glTF") {
        check_glb(input.bytes, file)?;
        Some(gltf::binary::Glb::from_slice(input.bytes).map_err(|e| GltfError::Glb {
            file: file.to_owned(),
            offset: None,
            message: e.to_string(),
        })?)
    } else {
        None
    };
    let (json, bin): (&[u8], Option<&[u8]>) = match &glb {
        Some(g) => (&g.json, g.bin.as_deref()),
        None => (input.bytes, None),
    };
    let json_err = |e: serde_json::Error| GltfError::Json {
        file: file.to_owned(),
        line: e.line(),
        column: e.column(),
        message: without_position(&e),
        data: e.is_data(),
    };
    // A probe pass first (no allocation: every value is skipped, with serde_json's nesting cap),
    // then one typed parse. `extras` arrive as raw JSON text and are parsed only where skelport
    // reads its own entry; a whole-document `serde_json::Value` costs more than the typed
    // parse. The probe also tells an absent array from `[]`, which the typed model reads alike.
    let probe: Probe = serde_json::from_slice(json).map_err(json_err)?;
    let version = probe.version.as_deref().unwrap_or("");
    if !version.starts_with("2.") {
        return Err(GltfError::of(
            FaultKind::Unsupported,
            file,
            "/asset/version",
            format!("version is '{version}', only glTF 2.x is supported"),
        ));
    }
    if let Some(key) = probe.empty {
        return Err(GltfError::invalid(file, format!("/{key}"), "array must not be empty (omit the property instead)"));
    }
    // Only what skelport reads is parsed: the typed model of the parts it skips (animations,
    // materials, cameras, textures …) requires fields glTF extensions may leave out (a
    // KHR_animation_pointer channel has no `target.node`), so a valid file would be refused
    // for data that is dropped anyway.
    // The typed model is charged before it is built: each entry of the arrays read at its
    // struct's size (an empty node `{}` is a whole `Node`), and 4 × the text for what the
    // entries hold (index lists, names, the raw extras).
    let budget = opts.budget_for(&input);
    let entries: u64 = probe.counts.iter().map(|&(k, n)| n as u64 * entry_bytes(k)).sum();
    budget.charge((json.len() as u64).saturating_mul(4).saturating_add(entries), file, "the JSON (the objects read from it)")?;
    let root: Root = serde_json::from_slice::<Used>(json).map_err(json_err)?.into_root();
    check_required_extensions(&root.extensions_required, file)?;
    if !probe.skipped.is_empty() {
        let skipped: Vec<String> = probe.skipped.iter().map(|(k, n)| format!("{n} {k}")).collect();
        diag.info("gltf.not-read", format!("not read (skelport reads skeletons, skins and meshes): {}", skipped.join(", ")));
    }
    if let Some(sc) = root.scene.map(|s| s.value()) {
        let n = root.scenes.len();
        if sc >= n {
            return Err(GltfError::of(
                FaultKind::Reference,
                file,
                "/scene",
                format!("scene {sc} does not exist (the file has {n} scene(s)); set it to an index below {n} or remove it"),
            ));
        }
    }
    let mut buffers = buffers::load(&root, bin, &input, opts, &budget, file)?;
    if root.extensions_used.iter().any(|e| e == crate::meshopt::EXTENSION) {
        let n = crate::meshopt::decode(json, &mut buffers, &budget, file)?;
        diag.info("gltf.meshopt", format!("{n} buffer view(s) compressed with EXT_meshopt_compression decoded"));
    }
    Reader {
        root: &root,
        buffers: &buffers,
        file,
        diag,
        budget,
        accessors: HashMap::new(),
        skin_users: Vec::new(),
        explicit_deform: HashMap::new(),
        built_at: HashMap::new(),
    }
    .run(format, bones)
}

/// serde_json's message without its trailing " at line L column C": the error's place says it.
fn without_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_owned(),
        None => s,
    }
}

/// The GLB header and chunk headers (glTF 2.0 "GLB File Format Specification"), checked before
/// the `gltf` crate reads them so that every problem is reported at its byte offset (the crate's
/// errors carry none): version 2, a length equal to the file's, chunks that fit and are padded to
/// 4 bytes, JSON first, then at most BIN.
fn check_glb(b: &[u8], file: &str) -> Result<(), GltfError> {
    let e = |at: usize, m: String| GltfError::Glb { file: file.to_owned(), offset: Some(at), message: m };
    if b.len() < 12 {
        return Err(e(0, format!("the file is {} bytes, shorter than the 12-byte GLB header; it was cut short: export it again", b.len())));
    }
    let u = |at: usize| u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize;
    if u(4) != 2 {
        return Err(e(4, format!("GLB version {}; only version 2 (glTF 2.0) is read: export the file as glTF 2.0", u(4))));
    }
    if u(8) != b.len() {
        return Err(e(
            8,
            format!(
                "the header says the file is {} bytes but it is {}; it was cut short or had bytes appended: export it again",
                u(8),
                b.len()
            ),
        ));
    }
    let (mut at, mut k) = (12usize, 0);
    while at < b.len() {
        if b.len() - at < 8 {
            return Err(e(
                at,
                format!("a chunk header needs 8 bytes but {} are left; the file was cut short: export it again", b.len() - at),
            ));
        }
        let (len, ty) = (u(at), &b[at + 4..at + 8]);
        let shown = String::from_utf8_lossy(ty).replace('\0', "\\0");
        if len > b.len() - at - 8 {
            return Err(e(
                at,
                format!("the {shown} chunk's length {len} runs past the end of the file ({} bytes left); the file was cut short or damaged: export it again", b.len() - at - 8),
            ));
        }
        if len % 4 != 0 {
            return Err(e(
                at,
                format!("the {shown} chunk's length {len} is not a multiple of 4 (GLB pads chunks to 4 bytes); export the file again"),
            ));
        }
        match (k, ty) {
            (0, b"JSON") | (1, b"BIN\0") => {}
            (0, _) => {
                return Err(e(
                    at + 4,
                    format!("the first chunk is {shown}, not JSON; a GLB starts with its JSON chunk: export the file again"),
                ))
            }
            _ => {
                return Err(e(
                    at + 4,
                    format!("chunk {k} is of type {shown}; after the JSON chunk only one BIN chunk is read: export the file again"),
                ))
            }
        }
        at += 8 + len;
        k += 1;
    }
    if k == 0 {
        return Err(e(12, "no JSON chunk after the header; the file was cut short: export it again".into()));
    }
    Ok(())
}

/// glTF 2.0 §3.12: a loader must refuse a file whose `extensionsRequired` names an extension it
/// does not implement. Those that only change materials, textures, lights or animations leave the
/// skeleton, skins and mesh data skelport reads exactly as written, so they are ignored;
/// KHR_mesh_quantization only allows integer component types for attributes, which the accessor
/// reader decodes (normalized or not) as the extension defines. Any other (mesh compression,
/// unknown ones) is refused.
fn check_required_extensions(list: &[String], file: &str) -> Result<(), GltfError> {
    for (i, name) in list.iter().enumerate() {
        let harmless =
            ["KHR_materials_", "KHR_texture_", "EXT_texture_", "KHR_lights_punctual", "KHR_animation_pointer", "KHR_mesh_quantization"]
                .iter()
                .any(|p| name.starts_with(p));
        if name == crate::meshopt::EXTENSION {
            // Decoded before anything is read (meshopt.rs).
            continue;
        }
        if name == "KHR_draco_mesh_compression" {
            // Draco needs Google's decoder (C++, no maintained Rust port); glTF Transform decodes
            // it when reading and writes the file uncompressed (`copy`, alias `cp`).
            return Err(GltfError::invalid(
                file,
                format!("/extensionsRequired/{i}"),
                "the file's meshes are Draco-compressed (KHR_draco_mesh_compression), which skelport does not decode; decompress it first with glTF Transform: `npx @gltf-transform/cli copy IN.glb OUT.glb` (it decodes Draco when reading and writes the meshes uncompressed), then convert OUT.glb",
            ));
        }
        if !harmless {
            return Err(GltfError::of(
                FaultKind::Unsupported,
                file,
                format!("/extensionsRequired/{i}"),
                format!(
                    "the file requires extension \"{name}\" to be read correctly and skelport does not implement it; export without it"
                ),
            ));
        }
    }
    Ok(())
}

/// The (skeleton, bone) each node became, by node index (`None`: the node is no bone).
pub type NodeBones = Vec<Option<(usize, BoneId)>>;

struct Reader<'a> {
    root: &'a Root,
    buffers: &'a [Vec<u8>],
    file: &'a str,
    diag: &'a mut Diagnostics,
    /// The conversion's decode budget: decoded accessors and the mesh data built from them are
    /// charged before they are allocated.
    budget: Budget,
    /// Accessors decoded so far: primitives (and skins) that share an accessor share one decode.
    accessors: HashMap<usize, Rc<AccessorData>>,
    /// Per skin, the nodes that use it (found in one pass over the nodes, not one per skin).
    skin_users: Vec<Vec<usize>>,
    /// Per node, whether its extras set `deform` (parsed once, not once per skin using it).
    explicit_deform: HashMap<usize, bool>,
    /// Per root node, the skeletons built from it (entries of `built`), so that a skin finds
    /// the one it shares without looking at every other.
    built_at: HashMap<usize, Vec<usize>>,
}

/// A skeleton already read for an earlier skin: its nodes and their bones, so a later skin over
/// the same node hierarchy (glTF lets several skins share joints, and skelport writes one node
/// hierarchy per skeleton however many skins use it) binds to it instead of a copy.
struct BuiltSkeleton {
    index: usize,
    bone_of: HashMap<usize, BoneId>,
}

/// The node graph after checking: parents, top ancestors, unique names, local transforms.
struct Graph {
    parent: Vec<Option<usize>>,
    children: Vec<Vec<usize>>,
    top: Vec<usize>,
    names: Vec<String>,
    local: Vec<DMat4>,
    world: Vec<DMat4>,
    depth: Vec<usize>,
    /// Every node, parents before children.
    preorder: Vec<usize>,
    /// Each node's place in `preorder`.
    order: Vec<usize>,
}

impl Graph {
    /// The lowest common ancestor of nodes `a` and `b` of one tree: climb the deeper, then both.
    fn common_ancestor(&self, mut a: usize, mut b: usize) -> usize {
        while self.depth[a] > self.depth[b] {
            a = self.parent[a].expect("a deeper node has a parent");
        }
        while self.depth[b] > self.depth[a] {
            b = self.parent[b].expect("a deeper node has a parent");
        }
        while a != b {
            skelport_ir::names::add_work(1);
            match (self.parent[a], self.parent[b]) {
                (Some(x), Some(y)) => (a, b) = (x, y),
                _ => break,
            }
        }
        a
    }
}

impl Reader<'_> {
    fn err(&self, pointer: impl Into<String>, message: impl Into<String>) -> GltfError {
        GltfError::invalid(self.file, pointer, message)
    }
    /// A fault of `kind` (an index naming nothing, items that do not fit together).
    fn err_of(&self, kind: FaultKind, pointer: impl Into<String>, message: impl Into<String>) -> GltfError {
        GltfError::of(kind, self.file, pointer, message)
    }

    /// Accessor `index`, decoded once however many properties refer to it.
    fn accessor(&mut self, index: usize, pointer: &str) -> Result<Rc<AccessorData>, GltfError> {
        if let Some(a) = self.accessors.get(&index) {
            return Ok(a.clone());
        }
        let a = Rc::new(buffers::read_accessor(self.root, self.buffers, index, pointer, self.file, &self.budget)?);
        self.accessors.insert(index, a.clone());
        Ok(a)
    }

    /// Charge the budget for `count` values of `T` built for `pointer`, before they are.
    fn charge<T>(&self, count: usize, pointer: &str) -> Result<(), GltfError> {
        Ok(self.budget.charge_items::<T>(count, self.file, pointer)?)
    }

    /// skelport's own part of node `node`'s extras (charged, see [`own_extras`]).
    fn node_extras(&self, node: usize) -> Result<Option<serde_json::Value>, GltfError> {
        Ok(own_extras(&self.root.nodes[node].extras, &self.budget, self.file, &format!("/nodes/{node}/extras"))?)
    }

    fn run(mut self, format: &str, named_bones: &[usize]) -> Result<(Document, NodeBones), GltfError> {
        let g = self.graph()?;
        let mut doc = Document::new(Frame::GLTF);
        doc.source_format = Some(format.to_owned());
        if let Some(x) =
            own_extras(&self.root.extras, &self.budget, self.file, "/extras")?.and_then(|v| serde_json::from_value::<DocExtras>(v).ok())
        {
            doc.ext = x.ext;
        }
        let scene_tops = self.scene_tops(&g)?;
        // Whole-file checks that do not depend on use: buffer views inside their buffers, and
        // JOINTS_n / WEIGHTS_n in pairs on every primitive.
        for (i, v) in self.root.buffer_views.iter().enumerate() {
            let declared = self.root.buffers.get(v.buffer.value()).map(|b| b.byte_length.0);
            let Some(declared) = declared else {
                return Err(self.err_of(
                    FaultKind::Reference,
                    format!("/bufferViews/{i}/buffer"),
                    format!("buffer {} does not exist", v.buffer.value()),
                ));
            };
            let (off, len) = (v.byte_offset.map(|o| o.0).unwrap_or(0), v.byte_length.0);
            if off.checked_add(len).is_none_or(|end| end > declared) {
                return Err(self.err_of(
                    FaultKind::Structure,
                    format!("/bufferViews/{i}"),
                    format!("byteOffset {off} + byteLength {len} exceeds the buffer's {declared} bytes"),
                ));
            }
        }
        for i in 0..self.root.accessors.len() {
            if let Some(why) = buffers::accessor_misfit(self.root, i) {
                self.diag.warn_at(ACCESSOR_RANGE, Place::path(format!("/accessors/{i}")), format!("/accessors/{i}: {why}"));
            }
        }
        for (mi, m) in self.root.meshes.iter().enumerate() {
            for (pi, p) in m.primitives.iter().enumerate() {
                for sem in p.attributes.keys() {
                    let (other, s, have) = match sem {
                        Checked::Valid(Semantic::Joints(s)) => ("WEIGHTS", *s, Semantic::Weights(*s)),
                        Checked::Valid(Semantic::Weights(s)) => ("JOINTS", *s, Semantic::Joints(*s)),
                        _ => continue,
                    };
                    if !p.attributes.contains_key(&Checked::Valid(have)) {
                        return Err(self.err_of(
                            FaultKind::Structure,
                            format!("/meshes/{mi}/primitives/{pi}/attributes"),
                            format!("{other}_{s} is missing: JOINTS_{s} and WEIGHTS_{s} must both be present"),
                        ));
                    }
                }
            }
        }
        let nodes = &self.root.nodes;
        // Nodes that reference a skin / mesh: check the references first.
        for (i, n) in nodes.iter().enumerate() {
            if let Some(s) = n.skin {
                if s.value() >= self.root.skins.len() {
                    return Err(self.err_of(
                        FaultKind::Reference,
                        format!("/nodes/{i}/skin"),
                        format!("skin {} does not exist", s.value()),
                    ));
                }
                if n.mesh.is_none() {
                    return Err(self.err_of(FaultKind::Structure, format!("/nodes/{i}"), "a node with a skin must also have a mesh"));
                }
            }
            if let Some(m) = n.mesh {
                let mesh = self.root.meshes.get(m.value()).ok_or_else(|| {
                    self.err_of(FaultKind::Reference, format!("/nodes/{i}/mesh"), format!("mesh {} does not exist", m.value()))
                })?;
                let skinned = mesh.primitives.iter().any(|p| p.attributes.keys().any(|k| matches!(k, Checked::Valid(Semantic::Joints(_)))));
                match (n.skin.is_some(), skinned) {
                    (true, false) => {
                        return Err(self.err_of(
                            FaultKind::Structure,
                            format!("/nodes/{i}"),
                            "node has a skin but its mesh has no JOINTS_0/WEIGHTS_0 attributes",
                        ))
                    }
                    (false, true) => self.diag.warn_at(
                        "gltf.skinned-mesh-without-skin",
                        Place::numbered("node", i),
                        format!(
                            "node {} ({}) has a mesh with joints but no skin; read as an unskinned mesh (its joints and weights are not)",
                            i, g.names[i]
                        ),
                    ),
                    _ => {}
                }
            }
        }
        let mut users = vec![Vec::new(); self.root.skins.len()];
        for (i, n) in nodes.iter().enumerate() {
            if let Some(s) = n.skin {
                users[s.value()].push(i);
            }
        }
        self.skin_users = users;
        let mut built: Vec<BuiltSkeleton> = Vec::new();
        for si in 0..self.root.skins.len() {
            self.skin(si, &g, &scene_tops, &mut doc, &mut built)?;
        }
        let unbound = self.unbound_skeletons(&g, named_bones, &mut doc, &mut built)?;
        if self.root.skins.is_empty() && unbound == 0 {
            self.diag.warn("gltf.no-skins", "the file has no skins: no skeleton was read");
        }
        // Mesh nodes without a skin: meshes at their node's world place (glTF renders them so).
        // One that hangs below a bone moves with it: a rigid skin binds every vertex to that
        // bone with weight 1, which the IR holds exactly.
        let mut on_bones = 0;
        // The tables below cost a few hundred bytes per bone: only built for a file that has
        // an unskinned mesh node.
        let loose_meshes = nodes.iter().any(|n| n.mesh.is_some() && n.skin.is_none());
        if loose_meshes {
            // A bone gets one bind across the file's skins: a rigid skin takes the inverse bind a
            // skin of the file already gives the bone (its bind shape keeps the mesh where it
            // hangs), so importers that guess the bind pose from the inverse binds (Blender's) see
            // one pose, not the file's and a second one at the bone's rest.
            let mut bind_of: HashMap<(usize, BoneId), DMat4> = HashMap::new();
            for s in &doc.skins {
                for (j, ibm) in s.joints.iter().zip(&s.inverse_bind) {
                    bind_of.entry((s.skeleton.index(), *j)).or_insert(*ibm);
                }
            }
            let worlds: Vec<Vec<DMat4>> = doc.skeletons.iter().map(|s| s.world_matrices()).collect();
            // Each node's nearest ancestor that is a bone (of the first skeleton holding it), in one
            // pass, parents before children: climbing from every mesh node was quadratic.
            let mut bone_at: HashMap<usize, (usize, BoneId)> = HashMap::new();
            for b in built.iter().rev() {
                bone_at.extend(b.bone_of.iter().map(|(&node, &id)| (node, (b.index, id))));
            }
            let mut bone_above: Vec<Option<(usize, BoneId)>> = vec![None; nodes.len()];
            for &i in &g.preorder {
                if let Some(p) = g.parent[i] {
                    bone_above[i] = bone_at.get(&p).copied().or(bone_above[p]);
                }
            }
            for (i, node) in nodes.iter().enumerate() {
                let (Some(m), None) = (node.mesh, node.skin) else { continue };
                let (mut mesh, _) = self.merge_meshes(&[m.value()], 0, None)?;
                place(&mut mesh, &g.world[i]);
                let bone = bone_above[i];
                let vertices = mesh.positions.len();
                let name = mesh.name.clone();
                doc.meshes.push(mesh);
                if let Some((sk, bone)) = bone {
                    on_bones += 1;
                    let world = worlds[sk][bone.index()];
                    let shared = bind_of.get(&(sk, bone)).map(|ibm| (*ibm, (world * *ibm).inverse())).filter(|(_, b)| b.is_finite());
                    let (ibm, bind_shape) = shared.unwrap_or((world.inverse(), DMat4::IDENTITY));
                    doc.skins.push(Skin {
                        name,
                        skeleton: skelport_ir::SkeletonId::from_index(sk),
                        mesh: Some(skelport_ir::MeshId::from_index(doc.meshes.len() - 1)),
                        joints: vec![bone],
                        inverse_bind: vec![ibm],
                        bind_shape,
                        influences: Influences::from_lists(vec![vec![(0u32, 1.0)]; vertices]),
                        ext: Default::default(),
                    });
                }
            }
        }
        if on_bones > 0 {
            self.diag.info(
                "gltf.mesh-on-bone",
                format!("{on_bones} unskinned mesh node(s) hang from a bone: each read as a mesh bound to that bone with weight 1 (a rigid skin), so it moves with it"),
            );
        }
        let mut node_bones: NodeBones = vec![None; self.root.nodes.len()];
        for b in &built {
            for (&node, &bone) in &b.bone_of {
                node_bones[node] = Some((b.index, bone));
            }
        }
        Ok((doc, node_bones))
    }

    /// Check the node hierarchy (references, single parents, no cycles) and compute names and transforms.
    fn graph(&mut self) -> Result<Graph, GltfError> {
        let nodes = &self.root.nodes;
        let n = nodes.len();
        // The graph's tables: two matrices, parent, depth, order, a name and a child list a node.
        self.budget.charge(n as u64 * NODE_BYTES, self.file, "/nodes")?;
        let mut parent: Vec<Option<usize>> = vec![None; n];
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, node) in nodes.iter().enumerate() {
            for (k, c) in node.children.iter().flatten().enumerate() {
                let c = c.value();
                if c >= n {
                    return Err(self.err_of(FaultKind::Reference, format!("/nodes/{i}/children/{k}"), format!("node {c} does not exist")));
                }
                if c == i {
                    return Err(self.err_of(FaultKind::Structure, format!("/nodes/{i}/children/{k}"), "a node cannot be its own child"));
                }
                if let Some(p) = parent[c] {
                    return Err(self.err_of(
                        FaultKind::Structure,
                        format!("/nodes/{i}/children/{k}"),
                        format!("node {c} already has parent {p}: nodes must form trees"),
                    ));
                }
                parent[c] = Some(i);
                children[i].push(c);
            }
        }
        // Tops and cycle detection in linear time: resolve each node's top ancestor with memo.
        let mut top: Vec<usize> = vec![usize::MAX; n];
        let mut state = vec![0u8; n]; // 0 new, 1 on the current path, 2 done
        let mut path = Vec::new();
        for start in 0..n {
            let mut cur = start;
            path.clear();
            let t = loop {
                match state[cur] {
                    2 => break top[cur],
                    1 => return Err(self.err_of(FaultKind::Structure, format!("/nodes/{cur}"), "the node hierarchy contains a cycle")),
                    _ => {}
                }
                state[cur] = 1;
                path.push(cur);
                match parent[cur] {
                    Some(p) => cur = p,
                    None => break cur,
                }
            };
            for &p in &path {
                top[p] = t;
                state[p] = 2;
            }
        }
        // Names: missing → node<i> (made unique per skeleton when the bones are built).
        let names: Vec<String> = nodes
            .iter()
            .enumerate()
            .map(|(i, node)| match node.name.as_deref() {
                Some(s) if !s.is_empty() => s.to_owned(),
                _ => format!("node{i}"),
            })
            .collect();
        let mut local = Vec::with_capacity(n);
        for (i, node) in nodes.iter().enumerate() {
            let m = if let Some(m) = node.matrix {
                DMat4::from_cols_array(&m.map(f64::from))
            } else {
                let t = node.translation.map(|t| DVec3::new(t[0] as f64, t[1] as f64, t[2] as f64)).unwrap_or(DVec3::ZERO);
                let r = node
                    .rotation
                    .map(|q| DQuat::from_xyzw(q.0[0] as f64, q.0[1] as f64, q.0[2] as f64, q.0[3] as f64))
                    .unwrap_or(DQuat::IDENTITY);
                let s = node.scale.map(|s| DVec3::new(s[0] as f64, s[1] as f64, s[2] as f64)).unwrap_or(DVec3::ONE);
                let len = r.length();
                if !(len.is_finite() && (len - 1.0).abs() < 1e-3) {
                    return Err(self.err(format!("/nodes/{i}/rotation"), format!("rotation is not a unit quaternion (length {len})")));
                }
                DMat4::from_scale_rotation_translation(s, r.normalize(), t)
            };
            if !m.is_finite() {
                return Err(self.err(format!("/nodes/{i}"), "transform has non-finite numbers"));
            }
            local.push(m);
        }
        // World matrices in an order where parents come first (walk from the tops).
        let mut world = vec![DMat4::IDENTITY; n];
        let mut depth = vec![0usize; n];
        let preorder = skelport_ir::proc::preorder_from(&children, (0..n).filter(|&i| parent[i].is_none()));
        for &i in &preorder {
            (world[i], depth[i]) = match parent[i] {
                Some(p) => (world[p] * local[i], depth[p] + 1),
                None => (local[i], 0),
            };
        }
        let mut order = vec![0; n];
        for (k, &i) in preorder.iter().enumerate() {
            order[i] = k;
        }
        Ok(Graph { parent, children, top, names, local, world, depth, preorder, order })
    }

    /// For each scene, the set of top nodes it lists (checked references).
    fn scene_tops(&self, g: &Graph) -> Result<Vec<HashSet<usize>>, GltfError> {
        let mut out = Vec::new();
        for (s, scene) in self.root.scenes.iter().enumerate() {
            let mut set = HashSet::new();
            for (k, n) in scene.nodes.iter().enumerate() {
                if n.value() >= g.parent.len() {
                    return Err(self.err_of(
                        FaultKind::Reference,
                        format!("/scenes/{s}/nodes/{k}"),
                        format!("node {} does not exist", n.value()),
                    ));
                }
                if g.parent[n.value()].is_some() {
                    return Err(self.err_of(
                        FaultKind::Structure,
                        format!("/scenes/{s}/nodes/{k}"),
                        format!("node {} is not a root node", n.value()),
                    ));
                }
                set.insert(n.value());
            }
            out.push(set);
        }
        Ok(out)
    }

    fn skin(
        &mut self,
        si: usize,
        g: &Graph,
        scene_tops: &[HashSet<usize>],
        doc: &mut Document,
        built: &mut Vec<BuiltSkeleton>,
    ) -> Result<(), GltfError> {
        let skin = &self.root.skins[si];
        let sp = format!("/skins/{si}");
        let n = g.parent.len();
        if skin.joints.is_empty() {
            return Err(self.err(format!("{sp}/joints"), "joints must not be empty"));
        }
        // Per joint: its inverse bind matrix (an identity where the skin has none), its place
        // in the joint tables and sets.
        self.budget.charge(skin.joints.len() as u64 * JOINT_BYTES, self.file, &format!("{sp}/joints"))?;
        let mut joints = Vec::with_capacity(skin.joints.len());
        let mut seen = HashSet::new();
        for (k, j) in skin.joints.iter().enumerate() {
            let j = j.value();
            if j >= n {
                return Err(self.err_of(FaultKind::Reference, format!("{sp}/joints/{k}"), format!("node {j} does not exist")));
            }
            if !seen.insert(j) {
                return Err(self.err_of(FaultKind::Structure, format!("{sp}/joints/{k}"), format!("node {j} is listed twice")));
            }
            joints.push(j);
        }
        // Common root: all joints under one top node, then the lowest common ancestor.
        let top = g.top[joints[0]];
        if let Some(k) = joints.iter().position(|&j| g.top[j] != top) {
            return Err(self.err_of(
                FaultKind::Structure,
                format!("{sp}/joints/{k}"),
                "joints do not have a common root (they live in different node trees)",
            ));
        }
        // Lowest common ancestor: that of the first and the last joint in preorder, found by
        // climbing from both (a pass over every node per skin made many skins quadratic).
        let first = joints.iter().copied().min_by_key(|&j| g.order[j]).expect("joints are not empty");
        let last = joints.iter().copied().max_by_key(|&j| g.order[j]).expect("joints are not empty");
        let lca = g.common_ancestor(first, last);
        if let Some(s) = skin.skeleton {
            let s = s.value();
            if s >= n {
                return Err(self.err_of(FaultKind::Reference, format!("{sp}/skeleton"), format!("node {s} does not exist")));
            }
            // `skeleton` must be the common root or one of its ancestors.
            let mut x = Some(lca);
            let mut ok = false;
            while let Some(y) = x {
                if y == s {
                    ok = true;
                    break;
                }
                x = g.parent[y];
            }
            if !ok {
                return Err(self.err_of(
                    FaultKind::Structure,
                    format!("{sp}/skeleton"),
                    format!("node {s} is not the common root of the joints nor an ancestor of it"),
                ));
            }
        }
        // Inverse bind matrices.
        let ibm: Vec<DMat4> = match skin.inverse_bind_matrices {
            None => vec![DMat4::IDENTITY; joints.len()],
            Some(a) => {
                let p = format!("{sp}/inverseBindMatrices");
                let ai = a.value();
                let acc = self
                    .root
                    .accessors
                    .get(ai)
                    .ok_or_else(|| self.err_of(FaultKind::Reference, &p, format!("accessor {ai} does not exist")))?;
                let fmt_ok = matches!(acc.type_, Checked::Valid(gltf_json::accessor::Type::Mat4))
                    && matches!(acc.component_type, Checked::Valid(c) if c.0 == ComponentType::F32);
                if !fmt_ok {
                    return Err(self.err(&p, "inverse bind matrices must be a MAT4 accessor of FLOAT"));
                }
                // glTF forbids byteStride on the view of inverse bind matrices (they are packed).
                // One equal to the matrix size (three.js's Soldier.glb and SimpleSkinning.gltf)
                // reads the same bytes as none, and three.js, Blender and assimp load such files:
                // read, with a warning (written without it). Any other stride is refused.
                if let Some((vi, stride)) = buffers::view_stride(self.root, ai) {
                    let at = format!("/bufferViews/{vi}/byteStride");
                    if stride != IBM_SIZE {
                        return Err(self.err(
                            at,
                            format!(
                                "byteStride {stride} on the view of skin {si}'s inverse bind matrices; glTF forbids a stride there (the matrices are packed, {IBM_SIZE} bytes each): remove byteStride and pack the matrices, or export the file again"
                            ),
                        ));
                    }
                    self.diag.warn_at(
                        IBM_STRIDE,
                        Place::path(&at),
                        format!(
                            "{at}: byteStride {stride} on the view of skin {si}'s inverse bind matrices, which glTF forbids; it equals the packed matrix size, so the matrices were read as if it were absent (skelport writes no stride there)"
                        ),
                    );
                }
                if (acc.count.0 as usize) < joints.len() {
                    return Err(self.err(&p, format!("IBM accessor must have at least {} elements; found {}", joints.len(), acc.count.0)));
                }
                let data = self.accessor(ai, &p)?;
                let backed = acc.buffer_view.is_some();
                if !backed {
                    self.diag.warn_at(
                        "gltf.ibm-zero",
                        Place::numbered("skin", si),
                        format!("skin {si}: inverse bind matrices have no buffer view, so they are all zero"),
                    );
                }
                let mut out = Vec::with_capacity(joints.len());
                for k in 0..joints.len() {
                    let v = data.get(k);
                    let arr: [f64; 16] = v.try_into().map_err(|_| self.err(&p, "short matrix data"))?;
                    let m = DMat4::from_cols_array(&arr);
                    if backed && !(m.is_finite() && arr[3] == 0.0 && arr[7] == 0.0 && arr[11] == 0.0 && arr[15] == 1.0) {
                        return Err(self.err(
                            format!("/accessors/{ai}"),
                            format!("matrix {k} is not a valid inverse bind matrix (last row must be 0 0 0 1)"),
                        ));
                    }
                    out.push(m);
                }
                out
            }
        };
        // Mesh nodes using this skin, and the scene check.
        let mesh_nodes = std::mem::take(&mut self.skin_users[si]);
        for &mn in &mesh_nodes {
            for tops in scene_tops {
                if tops.contains(&g.top[mn]) && !tops.contains(&top) {
                    return Err(self.err_of(
                        FaultKind::Structure,
                        format!("/nodes/{mn}"),
                        "a node with a skinned mesh is used in a scene that does not contain the skin's joints",
                    ));
                }
            }
            if g.parent[mn].is_some() || g.local[mn] != DMat4::IDENTITY {
                self.diag.info_at(
                    "gltf.skinned-mesh-transform",
                    Place::numbered("node", mn),
                    format!("node {} ({}): its transform and its parents' are ignored, as glTF skinning requires", mn, g.names[mn]),
                );
            }
        }
        let joint_set: HashSet<usize> = joints.iter().copied().collect();
        let skel_root = skin.skeleton.map(|s| s.value()).unwrap_or(lca);
        let skin_extras: SkinExtras = own_extras(&skin.extras, &self.budget, self.file, &format!("/skins/{si}/extras"))?
            .and_then(|v| serde_json::from_value(v).ok())
            .unwrap_or_default();
        let skin_name = skin.name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| format!("skin{si}"));
        // Same root as an earlier skin and all joints among its bones: share that skeleton.
        let shared = self
            .built_at
            .get(&skel_root)
            .and_then(|ks| ks.iter().copied().find(|&k| joints.iter().all(|j| built[k].bone_of.contains_key(j))));
        let k = match shared {
            Some(k) => {
                let b = &built[k];
                let sk = &mut doc.skeletons[b.index];
                let root = self.root;
                for j in &joints {
                    let explicit = match self.explicit_deform.get(j) {
                        Some(&e) => e,
                        None => {
                            let e = own_extras(&root.nodes[*j].extras, &self.budget, self.file, &format!("/nodes/{j}/extras"))?
                                .and_then(|v| v.get("deform").cloned())
                                .is_some_and(|d| !d.is_null());
                            self.explicit_deform.insert(*j, e);
                            e
                        }
                    };
                    if !explicit {
                        sk.bones[b.bone_of[j].index()].deform = true;
                    }
                }
                k
            }
            None => self.build_skeleton(g, &joints, &joint_set, skel_root, &skin_extras, &skin_name, doc, built)?,
        };
        let (skeleton_index, bone_of) = (built[k].index, &built[k].bone_of);
        // Geometry: every primitive of every mesh used with this skin, merged.
        let mut mesh_ids: Vec<usize> = Vec::new();
        let mut mesh_seen = HashSet::new();
        for &mn in &mesh_nodes {
            if let Some(m) = self.root.nodes[mn].mesh {
                if mesh_seen.insert(m.value()) {
                    mesh_ids.push(m.value());
                }
            }
        }
        let skin_joint_count = joints.len();
        let (mesh_index, influences) = if mesh_ids.is_empty() {
            (None, Influences::default())
        } else {
            let (mesh, infl) = self.merge_meshes(&mesh_ids, skin_joint_count, Some(si))?;
            doc.meshes.push(mesh);
            (Some(doc.meshes.len() - 1), infl)
        };
        let ir_joints: Vec<BoneId> = joints.iter().map(|j| bone_of.get(j).copied().unwrap_or(BoneId::new(0))).collect();
        doc.skins.push(Skin {
            name: skin_name,
            skeleton: skelport_ir::SkeletonId::from_index(skeleton_index),
            mesh: mesh_index.map(skelport_ir::MeshId::from_index),
            joints: ir_joints,
            inverse_bind: ibm,
            bind_shape: DMat4::IDENTITY,
            influences,
            ext: skin_extras.ext,
        });
        Ok(())
    }

    /// Skeletons for the nodes in `named` that no skin binds (a VRM humanoid over nodes no skinned
    /// mesh uses: meshless armatures, rigid meshes under bones): for each node tree holding some,
    /// the subtree of their lowest common ancestor, read as a skin's would be, every bone a joint.
    /// Returns how many were made.
    fn unbound_skeletons(
        &mut self,
        g: &Graph,
        named: &[usize],
        doc: &mut Document,
        built: &mut Vec<BuiltSkeleton>,
    ) -> Result<usize, GltfError> {
        let n = g.parent.len();
        // Sets and an index, not scans: a file decides how many names, skins and trees there are.
        let bound: HashSet<usize> = built.iter().flat_map(|b| b.bone_of.keys().copied()).collect();
        let mut by_top: Vec<(usize, Vec<usize>)> = Vec::new();
        let mut slot_of_top: HashMap<usize, usize> = HashMap::new();
        let mut seen = HashSet::new();
        for &node in named {
            if node >= n || !seen.insert(node) || bound.contains(&node) {
                continue;
            }
            let slot = *slot_of_top.entry(g.top[node]).or_insert_with(|| {
                by_top.push((g.top[node], Vec::new()));
                by_top.len() - 1
            });
            by_top[slot].1.push(node);
        }
        let made = by_top.len();
        for (_, nodes) in by_top {
            // Their lowest common ancestor (the nodes share one tree).
            let lca = nodes[1..].iter().fold(nodes[0], |lca, &x| g.common_ancestor(lca, x));
            let name = g.names[lca].clone();
            let k = self.build_skeleton(g, &nodes, &nodes.iter().copied().collect(), lca, &SkinExtras::default(), &name, doc, built)?;
            // No skin says which bones deform: every bone of the armature may.
            for b in &mut doc.skeletons[built[k].index].bones {
                b.deform = true;
            }
            self.diag.info_at(
                "gltf.unskinned-skeleton",
                Place::numbered("node", lca),
                format!(
                    "node {lca} ({name}): {} named bone(s) that no skin binds; its {} nodes read as a skeleton",
                    nodes.len(),
                    doc.skeletons[built[k].index].bones.len()
                ),
            );
        }
        Ok(made)
    }

    /// Read the bones of one skin's node hierarchy into a new skeleton of `doc`; returns its
    /// entry in `built`.
    #[allow(clippy::too_many_arguments)]
    fn build_skeleton(
        &mut self,
        g: &Graph,
        joints: &[usize],
        joint_set: &HashSet<usize>,
        skel_root: usize,
        skin_extras: &SkinExtras,
        skin_name: &str,
        doc: &mut Document,
        built: &mut Vec<BuiltSkeleton>,
    ) -> Result<usize, GltfError> {
        // Bones: the subtree of the skin's `skeleton` node (or, without one, of the joints'
        // lowest common ancestor): the joints, the nodes between them, helper and end nodes.
        // Nodes carrying a mesh or camera (and what hangs below them) are not bones.
        let is_bone = |i: usize| {
            let node = &self.root.nodes[i];
            joint_set.contains(&i) || (node.mesh.is_none() && node.camera.is_none())
        };
        let mut in_set: HashSet<usize> = skelport_ir::proc::preorder_where(&g.children, [skel_root], is_bone).into_iter().collect();
        for &j in joints {
            // A joint below a mesh node still belongs, with the nodes leading to it.
            let mut x = j;
            while in_set.insert(x) {
                match g.parent[x] {
                    Some(p) if x != skel_root => x = p,
                    _ => break,
                }
            }
        }
        let lca = skel_root;
        // A synthetic root written by skelport for multi-root skeletons is not a bone.
        let mut roots = vec![lca];
        if !joint_set.contains(&lca)
            && self.node_extras(lca)?.and_then(|v| v.get("synthetic_root").and_then(|v| v.as_bool())).unwrap_or(false)
        {
            in_set.remove(&lca);
            roots = g.children[lca].iter().copied().filter(|c| in_set.contains(c)).collect();
        }
        let order = skelport_ir::proc::preorder_where(&g.children, roots.iter().copied(), |c| in_set.contains(&c));
        // Skins over nested roots each build their own skeleton: every bone is charged.
        self.budget.charge(order.len() as u64 * BONE_BYTES, self.file, &format!("skeleton of skin '{skin_name}'"))?;
        let root_set: HashSet<usize> = roots.iter().copied().collect();
        let bone_of: HashMap<usize, BoneId> = order.iter().enumerate().map(|(b, &i)| (i, BoneId::from_index(b))).collect();
        let mut sk = Skeleton::new(skin_extras.skeleton.clone().unwrap_or_else(|| skin_name.to_string()));
        // The skeleton's extension: on its root node, a synthetic one or the root bone (or, after
        // a tool that exports its own root above the bones, the first bone that has it); files
        // written before it moved there have it on the skin.
        let mut skeleton_ext = None;
        if !in_set.contains(&lca) {
            skeleton_ext = self
                .node_extras(lca)?
                .and_then(|v| v.get("skeleton_ext").cloned())
                .and_then(|v| serde_json::from_value::<Extensions>(v).ok());
        }
        // Exactly: pushing into an empty Vec reserves four bones, 1.4 KB for a one-joint skin.
        sk.bones.reserve_exact(order.len());
        let mut mirrors: Vec<(usize, String)> = Vec::new();
        // One warning for the skeleton's unnamed nodes (a file can have millions).
        let mut unnamed: Vec<usize> = Vec::new();
        let mut used = UniqueNames::new();
        for (bi, &node) in order.iter().enumerate() {
            let is_root = root_set.contains(&node);
            let m = if is_root { g.world[node] } else { g.local[node] };
            let rest = Transform::from_matrix(&m).unwrap_or_else(|| {
                self.diag.warn_at(
                    "gltf.shear",
                    Place::numbered("node", node),
                    format!("node {node} ({}): transform has shear or a mirror that TRS cannot hold; approximated", g.names[node]),
                );
                let (s, r, t) = m.to_scale_rotation_translation();
                Transform { translation: t, rotation: r.normalize(), scale: s }
            });
            if self.root.nodes[node].name.as_deref().is_none_or(str::is_empty) {
                unnamed.push(node);
            }
            let parent = if is_root { None } else { g.parent[node].and_then(|p| bone_of.get(&p).copied()) };
            // Each skeleton holding the node parses (and keeps) its extras again: charged each time.
            let extras = self.node_extras(node)?.and_then(|v| serde_json::from_value::<BoneExtras>(v).ok());
            // The bone's own name where skelport had to give the node another.
            let base = extras.as_ref().and_then(|x| x.name.clone()).filter(|n| !n.is_empty()).unwrap_or_else(|| g.names[node].clone());
            let name = used.unique(&base, Suffix::Dot3);
            if name != base {
                self.diag.warn_at(
                    "gltf.duplicate-name",
                    Place::numbered("node", node),
                    format!("node {node}: name '{base}' is used more than once; renamed to '{name}'"),
                );
            }
            let mut bone = Bone::new(name, parent, rest);
            bone.deform = joint_set.contains(&node);
            if let Some(x) = extras {
                bone.length = x.length;
                bone.roll = x.roll;
                bone.anchors = x.anchors.map(Cow::into_owned);
                bone.ext = x.ext.into_owned();
                if skeleton_ext.as_ref().is_none_or(Extensions::is_empty) && !x.skeleton_ext.is_empty() {
                    skeleton_ext = Some(x.skeleton_ext.into_owned());
                }
                if let Some(d) = x.deform {
                    bone.deform = d;
                }
                if let Some(m) = x.mirror {
                    mirrors.push((bi, m));
                }
            }
            sk.bones.push(bone);
        }
        if let Some(&first) = unnamed.first() {
            let shown: Vec<String> = unnamed.iter().take(5).map(|&n| format!("node {n} '{}'", g.names[n])).collect();
            let more = if unnamed.len() > 5 { format!(" and {} more", unnamed.len() - 5) } else { String::new() };
            self.diag.warn_at(
                "gltf.unnamed-node",
                Place::numbered("node", first),
                format!(
                    "node {first}: {} node(s) of skeleton '{}' have no name; called them after their index: {}{more}",
                    unnamed.len(),
                    sk.name,
                    shown.join(", ")
                ),
            );
        }
        sk.ext = skeleton_ext.filter(|x| !x.is_empty()).unwrap_or_else(|| skin_extras.skeleton_ext.clone());
        let names = sk.name_map().into_iter().map(|(k, v)| (k.to_owned(), v)).collect::<HashMap<_, _>>();
        for (bi, m) in mirrors {
            sk.bones[bi].mirror = names.get(&m).copied();
        }
        let index = doc.skeletons.len();
        doc.skeletons.push(sk);
        self.built_at.entry(skel_root).or_default().push(built.len());
        built.push(BuiltSkeleton { index, bone_of });
        Ok(built.len() - 1)
    }

    /// Every primitive of `mesh_ids` as one IR mesh, with the influences of skin `skin` (`None`:
    /// an unskinned mesh node, whose JOINTS/WEIGHTS, if any, are not read).
    fn merge_meshes(&mut self, mesh_ids: &[usize], joint_count: usize, skin: Option<usize>) -> Result<(Mesh, Influences), GltfError> {
        let place = match skin {
            Some(si) => Place::numbered("skin", si),
            None => Place::numbered("mesh", mesh_ids.first().copied().unwrap_or(0)),
        };
        let mut mesh = Mesh::default();
        let mut normals: Vec<DVec3> = Vec::new();
        let mut all_normals = true;
        // TEXCOORD_n of every primitive, set by set (a set some primitive lacks is dropped).
        let mut uvs: Vec<Vec<DVec2>> = Vec::new();
        let mut uv_complete: Vec<bool> = Vec::new();
        let mut extras = MeshExtras::default();
        let mut lists: Vec<Vec<(u32, f64)>> = Vec::new();
        let mut renormalized = 0usize;
        let mut prim_count = 0usize;
        for (k, &mi) in mesh_ids.iter().enumerate() {
            let gm = &self.root.meshes[mi];
            if k == 0 {
                let x: MeshExtras = own_extras(&gm.extras, &self.budget, self.file, &format!("/meshes/{mi}/extras"))?
                    .and_then(|v| serde_json::from_value(v).ok())
                    .unwrap_or_default();
                mesh.name = gm.name.clone().filter(|s| !s.is_empty()).unwrap_or_else(|| format!("mesh{mi}"));
                mesh.ext = x.ext.clone();
                extras = x;
            }
            for (pi, prim) in gm.primitives.iter().enumerate() {
                let pp = format!("/meshes/{mi}/primitives/{pi}");
                prim_count += 1;
                let mut pos_acc = None;
                let mut nrm_acc = None;
                let mut uv_accs: Vec<(u32, usize)> = Vec::new();
                let mut jsets: HashMap<u32, usize> = HashMap::new();
                let mut wsets: HashMap<u32, usize> = HashMap::new();
                for (sem, acc) in &prim.attributes {
                    match sem {
                        Checked::Valid(Semantic::Positions) => pos_acc = Some(acc.value()),
                        Checked::Valid(Semantic::Normals) => nrm_acc = Some(acc.value()),
                        Checked::Valid(Semantic::TexCoords(t)) => uv_accs.push((*t, acc.value())),
                        Checked::Valid(Semantic::Joints(s)) => {
                            jsets.insert(*s, acc.value());
                        }
                        Checked::Valid(Semantic::Weights(s)) => {
                            wsets.insert(*s, acc.value());
                        }
                        _ => {}
                    }
                }
                let Some(pa) = pos_acc else {
                    self.diag.warn_at("gltf.no-position", Place::path(&pp), format!("{pp}: primitive has no POSITION; skipped"));
                    continue;
                };
                let pos = self.accessor(pa, &format!("{pp}/attributes/POSITION"))?;
                if pos.components != 3 {
                    return Err(self.err(format!("{pp}/attributes/POSITION"), "POSITION must be VEC3"));
                }
                let base = mesh.positions.len();
                let vcount = pos.count;
                // Every primitive's vertices are copied into the merged mesh, so many primitives
                // over one accessor cost many copies: charged before they are made.
                self.charge::<DVec3>(vcount, &format!("{pp}/attributes/POSITION"))?;
                mesh.positions.extend((0..vcount).map(|v| {
                    let p = pos.get(v);
                    DVec3::new(p[0], p[1], p[2])
                }));
                match nrm_acc {
                    Some(na) if all_normals => {
                        let nd = self.accessor(na, &format!("{pp}/attributes/NORMAL"))?;
                        self.charge::<DVec3>(vcount, &format!("{pp}/attributes/NORMAL"))?;
                        if nd.components != 3 || nd.count != vcount {
                            return Err(self.err(format!("{pp}/attributes/NORMAL"), "NORMAL must be VEC3 with one entry per vertex"));
                        }
                        normals.extend((0..vcount).map(|v| {
                            let p = nd.get(v);
                            DVec3::new(p[0], p[1], p[2])
                        }));
                    }
                    _ => all_normals = false,
                }
                // Texture coordinates: VEC2 float or normalized unsigned byte/short, v flipped
                // (glTF's runs down from the top, the IR's up from the bottom). Each set holds a
                // value for every vertex so far; one that some primitive lacks is dropped below.
                let many = uv_accs.iter().filter(|a| a.0 as usize >= MAX_UV_SETS).count();
                if many > 0 {
                    self.diag.loss_at(
                        "gltf.uv-sets",
                        Place::path(&pp),
                        format!("{pp}: {many} TEXCOORD sets numbered {MAX_UV_SETS} or more are not read (skelport reads TEXCOORD_0 to TEXCOORD_{})", MAX_UV_SETS - 1),
                    );
                    uv_accs.retain(|a| (a.0 as usize) < MAX_UV_SETS);
                }
                // A set that earlier vertices lack starts incomplete (zeros there).
                let sets = uv_accs.iter().map(|a| a.0 as usize + 1).max().unwrap_or(0);
                while uvs.len() < sets {
                    self.charge::<DVec2>(base, &format!("{pp}/attributes"))?;
                    uvs.push(vec![DVec2::ZERO; base]);
                    uv_complete.push(base == 0);
                }
                for &(t, ua) in &uv_accs {
                    let at = format!("{pp}/attributes/TEXCOORD_{t}");
                    let d = self.accessor(ua, &at)?;
                    self.charge::<DVec2>(vcount, &at)?;
                    let ok_type = match d.component_type {
                        ComponentType::F32 => true,
                        ComponentType::U8 | ComponentType::U16 => d.normalized,
                        _ => false,
                    };
                    if d.components != 2 || d.count != vcount || !ok_type {
                        return Err(self.err(at, "TEXCOORD must be VEC2 of float or normalized unsigned byte/short, one per vertex"));
                    }
                    uvs[t as usize].extend((0..vcount).map(|v| {
                        let p = d.get(v);
                        DVec2::new(p[0], 1.0 - p[1])
                    }));
                }
                for (t, set) in uvs.iter_mut().enumerate() {
                    if set.len() != base + vcount {
                        uv_complete[t] = false;
                        set.resize(base + vcount, DVec2::ZERO);
                    }
                }
                // Faces.
                let mode = match prim.mode {
                    Checked::Valid(m) => m,
                    Checked::Invalid => return Err(self.err(format!("{pp}/mode"), "unknown primitive mode")),
                };
                let idx: Vec<u32> = match prim.indices {
                    Some(ia) => {
                        let d = self.accessor(ia.value(), &format!("{pp}/indices"))?;
                        if d.components != 1 || !matches!(d.component_type, ComponentType::U8 | ComponentType::U16 | ComponentType::U32) {
                            return Err(self.err(format!("{pp}/indices"), "indices must be SCALAR unsigned byte/short/int"));
                        }
                        self.charge::<u32>(d.count, &format!("{pp}/indices"))?;
                        let mut out = Vec::with_capacity(d.count);
                        for &v in &d.values {
                            if v as usize >= vcount {
                                return Err(self.err(format!("{pp}/indices"), format!("index {v} is out of range ({vcount} vertices)")));
                            }
                            out.push(v as u32);
                        }
                        out
                    }
                    None => {
                        self.charge::<u32>(vcount, &pp)?;
                        (0..vcount as u32).collect()
                    }
                };
                // Faces: at most one triangle per index (strips and fans), 3 corners and a count.
                self.charge::<u32>(idx.len().saturating_mul(4), &pp)?;
                let b = base as u32;
                match mode {
                    Mode::Triangles => {
                        for t in idx.chunks_exact(3) {
                            mesh.faces.counts.push(3);
                            mesh.faces.indices.extend(t.iter().map(|i| i + b));
                        }
                    }
                    Mode::TriangleStrip => {
                        for k in 2..idx.len() {
                            let t = if k % 2 == 0 { [idx[k - 2], idx[k - 1], idx[k]] } else { [idx[k - 1], idx[k - 2], idx[k]] };
                            mesh.faces.counts.push(3);
                            mesh.faces.indices.extend(t.iter().map(|i| i + b));
                        }
                    }
                    Mode::TriangleFan => {
                        for k in 2..idx.len() {
                            mesh.faces.counts.push(3);
                            mesh.faces.indices.extend([idx[0] + b, idx[k - 1] + b, idx[k] + b]);
                        }
                    }
                    _ => {
                        self.diag.loss_at(
                            "gltf.non-triangle-primitive",
                            Place::path(&pp),
                            format!("{pp}: points/lines primitive: vertices kept, no faces"),
                        );
                    }
                }
                // Influences: a list per vertex, at most four entries per JOINTS_n set.
                let set_count = jsets.len().max(wsets.len());
                self.charge::<Vec<(u32, f64)>>(vcount, &format!("{pp}/attributes"))?;
                self.charge::<(u32, f64)>(vcount.saturating_mul(4 * set_count), &format!("{pp}/attributes"))?;
                let mut plists: Vec<Vec<(u32, f64)>> = vec![Vec::new(); vcount];
                let mut sets: Vec<u32> = jsets.keys().chain(wsets.keys()).copied().collect();
                sets.sort_unstable();
                sets.dedup();
                if skin.is_none() {
                    sets.clear();
                }
                for s in sets {
                    let (Some(&ja), Some(&wa)) = (jsets.get(&s), wsets.get(&s)) else {
                        return Err(self.err_of(
                            FaultKind::Structure,
                            format!("{pp}/attributes"),
                            format!("JOINTS_{s} and WEIGHTS_{s} must both be present"),
                        ));
                    };
                    let jd = self.accessor(ja, &format!("{pp}/attributes/JOINTS_{s}"))?;
                    let wd = self.accessor(wa, &format!("{pp}/attributes/WEIGHTS_{s}"))?;
                    check_joints_weights(&jd, &wd, vcount).map_err(|m| self.err(format!("{pp}/attributes/JOINTS_{s}"), m))?;
                    for (v, list) in plists.iter_mut().enumerate() {
                        let (jj, ww) = (jd.get(v), wd.get(v));
                        for c in 0..4 {
                            let (j, w) = (jj[c], ww[c]);
                            if j as usize >= joint_count {
                                return Err(self.err(
                                    format!("/accessors/{ja}"),
                                    format!("vertex {v}: joint index {j} is out of range (the skin has {joint_count} joints)"),
                                ));
                            }
                            if !(w >= 0.0 && w.is_finite()) {
                                return Err(
                                    self.err(format!("/accessors/{wa}"), format!("vertex {v}: weight {w} is negative or not finite"))
                                );
                            }
                            if w > 0.0 {
                                if list.iter().any(|e| e.0 == j as u32) {
                                    return Err(self.err(format!("/accessors/{ja}"), format!("vertex {v}: joint {j} is used twice")));
                                }
                                list.push((j as u32, w));
                            }
                        }
                    }
                }
                for l in &mut plists {
                    let sum: f64 = l.iter().map(|e| e.1).sum();
                    if sum > 0.0 && (sum - 1.0).abs() > WEIGHT_SUM_TOLERANCE {
                        renormalized += 1;
                        for e in l.iter_mut() {
                            e.1 /= sum;
                        }
                    }
                }
                lists.extend(plists);
            }
        }
        if renormalized > 0 {
            self.diag.warn_at(
                "gltf.weights-not-normalized",
                place.clone(),
                format!("{place}: {renormalized} vertices had weights not summing to 1; renormalized"),
            );
        }
        let unweighted = lists.iter().filter(|l| l.is_empty()).count();
        if unweighted > 0 && skin.is_some() {
            self.diag.warn_at("gltf.unweighted-vertices", place.clone(), format!("{place}: {unweighted} vertices have no influence"));
        }
        if prim_count > 1 {
            self.diag.info_at("gltf.merged-primitives", place.clone(), format!("{place}: {prim_count} primitives merged into one mesh"));
        }
        if all_normals && !normals.is_empty() && normals.len() == mesh.positions.len() {
            mesh.normals = Some(Normals::PerVertex(normals));
        } else if !normals.is_empty() {
            self.diag.loss_at(
                "gltf.partial-normals",
                place.clone(),
                format!("{place}: only some primitives have normals; normals dropped"),
            );
        }
        for (t, (set, complete)) in uvs.into_iter().zip(uv_complete).enumerate() {
            if complete {
                let name = extras.uv_names.get(t).cloned().unwrap_or_default();
                mesh.uvs.push(UvSet { name, uvs: Uvs::PerVertex(set) });
            } else {
                self.diag.loss_at(
                    "gltf.partial-uvs",
                    place.clone(),
                    format!("{place}: only some primitives have TEXCOORD_{t}; that UV set is dropped"),
                );
            }
        }
        if prim_count == 1 && !extras.split_from.is_empty() {
            self.fold_split(&mut mesh, &mut lists, &extras.split_from, &place);
        }
        Ok((mesh, Influences::from_lists(lists)))
    }

    /// Fold the vertices skelport's writer appended at seams (`extras.skelport.split_from`) back
    /// into their source vertices: faces name the source vertex again and the normals and UVs
    /// become per-corner values (per-vertex again where no vertex was split for them). Only
    /// when the list fits the primitive and every copy stands exactly where its source vertex
    /// does; otherwise (a file edited since, by a tool that kept the extras) the vertices are
    /// kept as they are, with a note.
    fn fold_split(&mut self, mesh: &mut Mesh, lists: &mut Vec<Vec<(u32, f64)>>, split_from: &[u32], place: &Place) {
        let total = mesh.positions.len();
        let n = total.wrapping_sub(split_from.len());
        let fits = split_from.len() < total
            && split_from.iter().enumerate().all(|(k, &v)| (v as usize) < n && mesh.positions[n + k] == mesh.positions[v as usize])
            && lists.len() == total;
        if !fits {
            self.diag.info_at(
                "gltf.split-ignored",
                place.clone(),
                format!("{place}: the mesh's list of vertices split at seams does not match it (edited since skelport wrote it?); its vertices are kept as they are"),
            );
            return;
        }
        let source = |o: u32| if (o as usize) < n { o } else { split_from[o as usize - n] };
        let corners = std::mem::take(&mut mesh.faces.indices);
        mesh.faces.indices = corners.iter().map(|&o| source(o)).collect();
        let fold = |values: &[DVec3]| corners.iter().map(|&o| values[o as usize]).collect::<Vec<_>>();
        if let Some(nrm) = mesh.normals.take() {
            let per_corner = fold(nrm.values());
            mesh.normals = Some(proc::per_vertex_if_uniform(n, &mesh.faces.indices, per_corner, DVec3::ZERO));
        }
        for set in &mut mesh.uvs {
            let per_corner: Vec<DVec2> = corners.iter().map(|&o| set.uvs.values()[o as usize]).collect();
            set.uvs = proc::per_vertex_if_uniform(n, &mesh.faces.indices, per_corner, DVec2::ZERO);
        }
        mesh.positions.truncate(n);
        lists.truncate(n);
    }
}

/// Move an unskinned mesh to its node's world place: positions by the matrix, normals by its
/// inverse transpose; a mirroring matrix reverses each face's corners so the faces keep their
/// front (glTF draws them flipped for a negative determinant).
fn place(mesh: &mut Mesh, world: &DMat4) {
    if *world == DMat4::IDENTITY {
        return;
    }
    for p in &mut mesh.positions {
        *p = world.transform_point3(*p);
    }
    let nm = skelport_ir::DMat3::from_mat4(*world).inverse().transpose();
    if let Some(n) = &mut mesh.normals {
        for v in n.values_mut() {
            *v = (nm * *v).normalize_or_zero();
        }
    }
    if world.determinant() < 0.0 {
        let mut start = 0usize;
        for &c in &mesh.faces.counts {
            let end = (start + c as usize).min(mesh.faces.indices.len());
            mesh.faces.indices[start..end].reverse();
            start = end;
        }
    }
}

/// JOINTS_n: VEC4 unsigned byte/short; WEIGHTS_n: VEC4 float or normalized unsigned byte/short.
fn check_joints_weights(jd: &AccessorData, wd: &AccessorData, vcount: usize) -> Result<(), String> {
    if jd.components != 4 || !matches!(jd.component_type, ComponentType::U8 | ComponentType::U16) || jd.normalized {
        return Err("JOINTS must be VEC4 of unsigned byte or unsigned short".into());
    }
    let w_ok = match wd.component_type {
        ComponentType::F32 => true,
        ComponentType::U8 | ComponentType::U16 => wd.normalized,
        _ => false,
    };
    if wd.components != 4 || !w_ok {
        return Err("WEIGHTS must be VEC4 of float or normalized unsigned byte/short".into());
    }
    if jd.count != vcount || wd.count != vcount {
        return Err(format!("JOINTS has {} and WEIGHTS {} entries but POSITION has {vcount}", jd.count, wd.count));
    }
    Ok(())
}

/// skelport's own entry (`extras.skelport`) of a glTF object, parsed from gltf-json's raw extras.
/// skelport's own member ([`crate::EXTRAS_KEY`]) of an extras object. The other members are
/// skipped without being built (extras can be padded with millions of values), and the own part
/// is charged to `budget` as the tree it becomes before it is parsed.
fn own_extras(
    extras: &gltf_json::extras::Extras,
    budget: &Budget,
    file: &str,
    at: &str,
) -> Result<Option<serde_json::Value>, skelport_ir::BudgetError> {
    #[derive(serde::Deserialize)]
    struct Own<'a> {
        // The literal of crate::EXTRAS_KEY (a test checks they agree).
        #[serde(borrow, rename = "skelport")]
        own: Option<&'a serde_json::value::RawValue>,
    }
    let Some(raw) = extras.as_ref() else { return Ok(None) };
    let Some(own) = serde_json::from_str::<Own>(raw.get()).ok().and_then(|o| o.own) else { return Ok(None) };
    budget.charge_json(own.get().as_bytes(), file, at)?;
    Ok(serde_json::from_str(own.get()).ok())
}

/// The parts of a glTF file skelport reads, typed with `gltf_json`'s models; every other
/// top-level property is skipped unparsed (see [`SKIPPED`]).
#[derive(serde::Deserialize)]
struct Used {
    asset: gltf_json::Asset,
    #[serde(default)]
    accessors: Vec<gltf_json::Accessor>,
    #[serde(default)]
    buffers: Vec<gltf_json::Buffer>,
    #[serde(default, rename = "bufferViews")]
    buffer_views: Vec<gltf_json::buffer::View>,
    #[serde(default)]
    scene: Option<gltf_json::Index<gltf_json::Scene>>,
    #[serde(default)]
    scenes: Vec<UsedScene>,
    #[serde(default)]
    nodes: Vec<gltf_json::Node>,
    #[serde(default)]
    meshes: Vec<gltf_json::Mesh>,
    #[serde(default)]
    skins: Vec<gltf_json::Skin>,
    #[serde(default)]
    extras: gltf_json::extras::Extras,
    #[serde(default, rename = "extensionsUsed")]
    extensions_used: Vec<String>,
    #[serde(default, rename = "extensionsRequired")]
    extensions_required: Vec<String>,
}

/// A scene: `nodes` is optional in glTF 2.0 (an empty scene), which `gltf_json::Scene` requires.
#[derive(serde::Deserialize)]
struct UsedScene {
    #[serde(default)]
    nodes: Vec<gltf_json::Index<gltf_json::Node>>,
    #[serde(default)]
    name: Option<String>,
}

impl Used {
    fn into_root(self) -> Root {
        Root {
            asset: self.asset,
            accessors: self.accessors,
            buffers: self.buffers,
            buffer_views: self.buffer_views,
            scene: self.scene,
            scenes: self
                .scenes
                .into_iter()
                .map(|s| gltf_json::Scene { extensions: None, extras: Default::default(), name: s.name, nodes: s.nodes })
                .collect(),
            nodes: self.nodes,
            meshes: self.meshes,
            skins: self.skins,
            extras: self.extras,
            extensions_used: self.extensions_used,
            extensions_required: self.extensions_required,
            ..Default::default()
        }
    }
}

/// Top-level arrays skelport does not read; the probe counts them for the reader's one note.
const SKIPPED: [&str; 6] = ["animations", "cameras", "materials", "textures", "images", "samplers"];

/// What the reader needs before the typed parse: `asset.version`, the first top-level array
/// that glTF requires to be non-empty when present but is `[]`, and how many items of each
/// skipped kind the file has.
#[derive(Default)]
struct Probe {
    version: Option<String>,
    empty: Option<&'static str>,
    skipped: Vec<(&'static str, usize)>,
    /// Entries of each top-level array skelport reads, for the decode budget.
    counts: Vec<(&'static str, usize)>,
}

/// The size of one entry of the top-level array `key` in the typed model.
fn entry_bytes(key: &str) -> u64 {
    use std::mem::size_of;
    (match key {
        "nodes" => size_of::<gltf_json::Node>(),
        "skins" => size_of::<gltf_json::Skin>(),
        "meshes" => size_of::<gltf_json::Mesh>(),
        "accessors" => size_of::<gltf_json::Accessor>(),
        "scenes" => size_of::<gltf_json::Scene>(),
        "buffers" => size_of::<gltf_json::Buffer>(),
        _ => size_of::<gltf_json::buffer::View>(),
    }) as u64
}

/// Top-level arrays that must have at least one element when present (glTF 2.0, 5.x `minItems`).
const NON_EMPTY: [&str; 7] = ["skins", "nodes", "meshes", "accessors", "scenes", "buffers", "bufferViews"];

impl<'de> serde::Deserialize<'de> for Probe {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Probe;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a glTF JSON object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Probe, A::Error> {
                let mut probe = Probe::default();
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "asset" {
                        probe.version = map.next_value::<AssetProbe>()?.version;
                    } else if let Some(k) = NON_EMPTY.iter().find(|k| **k == key) {
                        let n = map.next_value::<JsonSkip>()?.0;
                        if n == 0 && probe.empty.is_none() {
                            probe.empty = Some(k);
                        }
                        probe.counts.push((k, n));
                    } else if let Some(k) = SKIPPED.iter().find(|k| **k == key) {
                        let n = map.next_value::<JsonSkip>()?.0;
                        if n > 0 {
                            probe.skipped.push((k, n));
                        }
                    } else {
                        map.next_value::<JsonSkip>()?;
                    }
                }
                Ok(probe)
            }
            // Not an object: no version (reported as such); arrays are still walked for depth.
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Probe, A::Error> {
                while seq.next_element::<JsonSkip>()?.is_some() {}
                Ok(Probe::default())
            }
            fn visit_bool<E>(self, _: bool) -> Result<Probe, E> {
                Ok(Probe::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<Probe, E> {
                Ok(Probe::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<Probe, E> {
                Ok(Probe::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<Probe, E> {
                Ok(Probe::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<Probe, E> {
                Ok(Probe::default())
            }
            fn visit_unit<E>(self) -> Result<Probe, E> {
                Ok(Probe::default())
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(serde::Deserialize)]
struct AssetProbe {
    version: Option<String>,
    #[serde(flatten)]
    _rest: std::collections::BTreeMap<String, JsonSkip>,
}
