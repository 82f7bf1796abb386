//! `.dae` → IR.
//!
//! Two readings, chosen by the joint names:
//!
//! * **SL rig** — every skin joint (or, without skins, every `JOINT` node) has a legal SL name.
//!   The file is read the way the viewer's importer reads it: aliases become canonical names, the
//!   hierarchy is the SL skeleton's (the file's own node tree is not used: partial, flattened joint
//!   sets are normal), each joint's rest translation is its scene node's parent-relative
//!   translation (or the SL default `pos` when the file has no node for it), rotation identity
//!   (SL joints are axis-aligned at rest). Inverse bind and bind-shape matrices are kept as given.
//!   The document frame is Second Life's; Y_UP/X_UP geometry is turned Z-up and the turn is folded
//!   into the bind shape, so the skinned result is exactly the importer's.
//! * **Generic Collada** — anything else (a Blender or assimp export): the node tree is the
//!   skeleton, node transforms composed in full, the frame follows `<up_axis>` and `<unit>`.
//!
//! A skin's vertices are the entries of the geometry's position source: SL weights positions.

use crate::collada::{self, Dae, UpAxis};
use crate::error::SlError;
use crate::skeleton::{SlJoint, SlSkeleton};
use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use skelport_ir::frame::FrameMap;
use skelport_ir::names::{Suffix, UniqueNames};
use skelport_ir::{proc, Place};
use skelport_ir::{
    Axis, Bone, BoneId, DMat4, DVec2, DVec3, Diagnostics, Document, Faces, Frame, Handedness, Influences, Mesh, Normals, ReadOptions,
    Skeleton, Skin, Transform, UvSet, Uvs,
};
use std::collections::BTreeSet;

/// Decode a `.dae` file's bytes: UTF-8 (BOM optional, borrowed, not copied) or UTF-16 with a BOM.
pub fn decode<'b>(bytes: &'b [u8], file: &str) -> Result<std::borrow::Cow<'b, str>, SlError> {
    let utf16 = |le: bool| -> Result<std::borrow::Cow<'b, str>, SlError> {
        let body = &bytes[2..];
        if body.len() % 2 != 0 {
            return Err(SlError::invalid(file, 0, 0, "UTF-16 text with an odd number of bytes (truncated file?)"));
        }
        let units = body.chunks_exact(2).map(|c| if le { u16::from_le_bytes([c[0], c[1]]) } else { u16::from_be_bytes([c[0], c[1]]) });
        char::decode_utf16(units)
            .collect::<Result<String, _>>()
            .map(std::borrow::Cow::Owned)
            .map_err(|e| SlError::invalid(file, 0, 0, format!("invalid UTF-16 text: {e}; save the file as UTF-8")))
    };
    match bytes {
        [0xFF, 0xFE, ..] => utf16(true),
        [0xFE, 0xFF, ..] => utf16(false),
        _ => {
            let b = bytes.strip_prefix(&[0xEF, 0xBB, 0xBF][..]).unwrap_or(bytes);
            // simdutf8 vouches for valid text (the common case) faster than std (a pass that runs
            // alone; docs/performance.md); std's error gives the place.
            if let Ok(text) = simdutf8::basic::from_utf8(b) {
                return Ok(std::borrow::Cow::Borrowed(text));
            }
            std::str::from_utf8(b).map(std::borrow::Cow::Borrowed).map_err(|e| {
                let at = e.valid_up_to();
                let line = b[..at].iter().filter(|&&c| c == b'\n').count() + 1;
                SlError::invalid(
                    file,
                    line,
                    0,
                    format!("invalid UTF-8 at byte {at}; Collada files are UTF-8 text (re-export or convert the encoding)"),
                )
            })
        }
    }
}

/// The frame a generic Collada file's `<up_axis>` and `<unit>` mean (Z_UP files are taken to face
/// −Y as Blender exports them; Y_UP and X_UP to face +Z).
pub fn file_frame(up: Option<UpAxis>, meter: Option<f64>) -> Frame {
    let mut f = match up.unwrap_or(UpAxis::Y) {
        UpAxis::Z => Frame::BLENDER,
        UpAxis::Y => Frame::GLTF,
        UpAxis::X => Frame { up: Axis::PosX, forward: Axis::PosZ, handedness: Handedness::Right, metres_per_unit: 1.0 },
    };
    f.metres_per_unit = meter.unwrap_or(1.0);
    f
}

/// Read a parsed Collada document into the IR.
pub fn to_document(mut dae: Dae, sl: &SlSkeleton, file: &str, diag: &mut Diagnostics) -> Result<Document, SlError> {
    let skin_names: Vec<&str> = dae.controllers.iter().flat_map(|c| c.joints.iter().map(String::as_str)).collect();
    let sl_rig = if dae.controllers.is_empty() {
        // No skin: the viewer's own mRoot and mScreen count (a skeleton-only file may hold them).
        let joints: Vec<&collada::Node> = dae.nodes.iter().filter(|n| n.joint).collect();
        !joints.is_empty() && joints.iter().all(|n| n.label().is_some_and(|l| sl.joint(l).is_some()))
    } else {
        !skin_names.is_empty() && skin_names.iter().all(|n| sl.resolve(n).is_some())
    };
    for c in &dae.controllers {
        if dae.geometry(&c.skin_source).is_none() {
            return Err(SlError::invalid(
                file,
                c.pos.line,
                c.pos.column,
                format!("controller \"{}\": its skin source refers to \"#{}\", which is not a geometry in the file", c.id, c.skin_source),
            )
            .with_kind(skelport_ir::FaultKind::Reference));
        }
        if let Some((j, m)) = c.bind_count_mismatch {
            return Err(SlError::invalid(
                file,
                c.joints_pos.line,
                c.joints_pos.column,
                format!("controller \"{}\": {j} joints but {m} inverse bind matrices; each joint needs one", c.id),
            ));
        }
        if c.weight_count != c.vcount_len {
            return Err(SlError::invalid(
                file,
                c.weights_pos.line,
                c.weights_pos.column,
                format!("<vertex_weights count=\"{}\"> but <vcount> has {} entries; they must be equal", c.weight_count, c.vcount_len),
            ));
        }
        if let Some((have, need)) = c.v_mismatch {
            return Err(SlError::invalid(
                file,
                c.weights_pos.line,
                c.weights_pos.column,
                format!("<v> has {have} numbers but <vcount> and the inputs need {need}"),
            )
            .with_kind(skelport_ir::FaultKind::Value));
        }
    }
    for g in &dae.geometries {
        for p in &g.primitives {
            if let Some((declared, found)) = p.count_mismatch {
                diag.warn_at(
                    "dae-count-mismatch",
                    Place::text(p.pos.line, p.pos.column),
                    format!(
                        "line {}: geometry \"{}\": count=\"{declared}\" but {found} polygons found; the polygons found are used (the SL importer does the same)",
                        p.pos, g.name
                    ),
                );
            }
        }
    }
    let mut doc = if sl_rig { sl_document(&mut dae, sl, file, diag)? } else { generic_document(&mut dae, file, diag)? };
    skelport_ir::trace::phase("dae: IR document");
    doc.source_format = Some("dae".into());
    Ok(doc)
}

/// Meshes of the skinned (and instanced static) geometries, with a map geometry → mesh index;
/// built on every core when `parallel`.
/// (Parts of the document, not all of it, so callers can keep lookups into its nodes.)
fn meshes(
    controllers: &[collada::Controller],
    nodes: &[collada::Node],
    geometries: &mut [collada::Geometry],
    parallel: bool,
    diag: &mut Diagnostics,
) -> (Vec<Mesh>, HashMap<usize, usize>) {
    let geometry = |id: &str| geometries.iter().position(|g| g.id == id);
    let mut used: BTreeSet<usize> = BTreeSet::new();
    for c in controllers {
        if let Some(g) = geometry(&c.skin_source) {
            used.insert(g);
        }
    }
    for n in nodes {
        for g in &n.geometries {
            if let Some(g) = geometry(g) {
                used.insert(g);
            }
        }
    }
    let picked: Vec<(usize, &mut collada::Geometry)> = geometries.iter_mut().enumerate().filter(|(gi, _)| used.contains(gi)).collect();
    let mut out = Vec::with_capacity(picked.len());
    let mut index = HashMap::new();
    for ((gi, m), d) in skelport_ir::map_in_order(picked, parallel, reporting(|(gi, g), d| (gi, mesh_of(g, d)))) {
        diag.items.extend(d.items);
        index.insert(gi, out.len());
        out.push(m);
    }
    (out, index)
}

/// Whether a parsed file is big enough to build its meshes and skins in parallel (measured
/// before [`meshes`] moves the corners out).
fn big(dae: &Dae) -> bool {
    let corners: usize = dae.geometries.iter().flat_map(|g| &g.primitives).map(|p| p.vertex.len()).sum();
    let pairs: usize = dae.controllers.iter().map(|c| c.influence_pairs.len()).sum();
    corners + pairs >= skelport_ir::PARALLEL_FROM
}

/// `f` with diagnostics of its own, returned beside its result for the caller to merge in
/// order (so warnings never depend on the thread count).
fn reporting<T, R>(f: impl Fn(T, &mut Diagnostics) -> R + Sync + Send) -> impl Fn(T) -> (R, Diagnostics) + Sync + Send {
    move |t| {
        let mut d = Diagnostics::default();
        let r = f(t, &mut d);
        (r, d)
    }
}

/// One geometry's mesh. Positions and the corners of a one-primitive geometry are moved out of
/// `g`, not copied (on a big file they are most of its memory).
fn mesh_of(g: &mut collada::Geometry, diag: &mut Diagnostics) -> Mesh {
    let mut faces = Faces::default();
    let with_normals = !g.primitives.is_empty() && g.primitives.iter().all(|p| p.normal.len() == p.vertex.len());
    if !with_normals && g.primitives.iter().any(|p| !p.normal.is_empty()) {
        diag.warn_at(
            "dae-partial-normals",
            Place::named("geometry", &g.name),
            format!("geometry \"{}\": some primitives have no normals; normals dropped", g.name),
        );
    }
    // A normal per corner, in corner order (what skelport and many exporters write): the
    // normals are the corners' already, moved rather than gathered into a copy.
    let in_corner_order = matches!(g.primitives.as_slice(), [p] if with_normals && in_order(&p.normal, g.normals.len()));
    if let [p] = g.primitives.as_mut_slice() {
        faces.counts = std::mem::take(&mut p.counts);
        faces.indices = std::mem::take(&mut p.vertex);
    } else {
        for p in &g.primitives {
            faces.counts.extend_from_slice(&p.counts);
            faces.indices.extend_from_slice(&p.vertex);
        }
    }
    let n = g.positions.len();
    // As the other readers store them: per vertex where every corner of a vertex agrees, so a
    // mesh without seams is not carried (and written) a value per corner. Each vertex's corners
    // naming one normal (a smooth mesh whose normals are indexed apart from its positions, as
    // Blender writes them) is found by index, and the normals gathered once a vertex.
    let normals = with_normals.then(|| {
        let per_corner = if in_corner_order {
            std::mem::take(&mut g.normals)
        } else if let Some(per_vertex) = normal_of_vertex(&faces.indices, &g.primitives, &g.normals, n) {
            return Normals::PerVertex(per_vertex);
        } else {
            let mut gathered = Vec::with_capacity(faces.indices.len());
            for p in &g.primitives {
                gathered.extend(p.normal.iter().map(|&k| g.normals.get(k as usize).copied().unwrap_or(DVec3::ZERO)));
            }
            gathered
        };
        proc::per_vertex_if_uniform(n, &faces.indices, per_corner, DVec3::ZERO)
    });
    let mut uvs = uv_sets(g, diag);
    for set in &mut uvs {
        if let Uvs::PerCorner(values) = &mut set.uvs {
            set.uvs = proc::per_vertex_if_uniform(n, &faces.indices, std::mem::take(values), DVec2::ZERO);
        }
    }
    Mesh { name: g.name.clone(), positions: std::mem::take(&mut g.positions), normals, uvs, faces, ..Default::default() }
}

/// The normals per vertex when every corner of each of the `n` vertices names the same normal
/// (`corners`: the vertex of each corner, the primitives' in turn; each primitive's `normal`:
/// the normal of each of its corners); vertices no corner uses get zero. `None` when some
/// vertex's corners name different ones.
fn normal_of_vertex(corners: &[u32], primitives: &[collada::Primitive], normals: &[DVec3], n: usize) -> Option<Vec<DVec3>> {
    const NONE: u32 = u32::MAX;
    let mut of = vec![NONE; n];
    let mut at = 0;
    for p in primitives {
        let vertices = corners.get(at..at + p.normal.len())?;
        at += p.normal.len();
        for (&v, &k) in vertices.iter().zip(&p.normal) {
            let slot = of.get_mut(v as usize)?;
            if *slot == NONE {
                *slot = k;
            } else if *slot != k {
                return None;
            }
        }
    }
    Some(of.iter().map(|&k| normals.get(k as usize).copied().unwrap_or(DVec3::ZERO)).collect())
}

/// Whether `index` takes each of `n` values once, in order (a value per corner in corner order):
/// the values are then the per-corner list already.
fn in_order(index: &[u32], n: usize) -> bool {
    index.len() == n && index.iter().enumerate().all(|(k, &i)| i as usize == k)
}

/// A geometry's texture coordinate sets, per corner in corner order. The sets are those of the
/// first primitive in `set` order, matched in the others by `set` (else by position among the
/// TEXCOORD inputs); a set some primitive lacks is dropped with a warning, as partial normals are.
/// Named by the `set` number where the file gives one.
fn uv_sets(g: &mut collada::Geometry, diag: &mut Diagnostics) -> Vec<UvSet> {
    let Some(first) = g.primitives.first() else { return Vec::new() };
    let mut keys: Vec<(usize, Option<u32>)> = first.uvs.iter().enumerate().map(|(k, u)| (k, u.set)).collect();
    // Set 0 first: it is the one formats with a single set (and the SL importer) take.
    keys.sort_by_key(|&(k, set)| (set.is_none(), set, k));
    let find = |p: &collada::Primitive, (k, set): (usize, Option<u32>)| match set {
        Some(s) => p.uvs.iter().position(|u| u.set == Some(s)),
        None => (k < p.uvs.len() && p.uvs[k].set.is_none()).then_some(k),
    };
    let mut out = Vec::with_capacity(keys.len());
    for key in keys {
        let picks: Option<Vec<usize>> = g.primitives.iter().map(|p| find(p, key)).collect();
        let Some(picks) = picks else {
            diag.warn(
                "dae-partial-uvs",
                format!(
                    "geometry \"{}\": texture coordinate set {} is missing from some primitives; that set is dropped",
                    g.name,
                    key.1.map(|s| s.to_string()).unwrap_or_else(|| format!("#{}", key.0))
                ),
            );
            continue;
        };
        // One primitive whose corners take the source's values in order (what Blender and
        // skelport write: a coordinate per corner), from a source no other set reads: the
        // source is the set already, moved rather than gathered into a copy (fresh pages cost
        // more than the copy: 371 KB of the Linden body's 1.1 MB).
        if let ([p], &[k]) = (g.primitives.as_slice(), picks.as_slice()) {
            let u = &p.uvs[k];
            let src = &g.texcoords[u.source].values;
            let alone = p.uvs.iter().filter(|o| o.source == u.source).count() == 1;
            if alone && in_order(&u.index, src.len()) {
                let values = std::mem::take(&mut g.texcoords[u.source].values);
                out.push(UvSet { name: key.1.map(|s| s.to_string()).unwrap_or_default(), uvs: Uvs::PerCorner(values) });
                continue;
            }
        }
        let corners: usize = g.primitives.iter().zip(&picks).map(|(p, &k)| p.uvs[k].index.len()).sum();
        let mut values = Vec::with_capacity(corners);
        for (p, &k) in g.primitives.iter().zip(&picks) {
            let u = &p.uvs[k];
            let src = &g.texcoords[u.source].values;
            // Indices were checked against the source when the file was parsed.
            values.extend(u.index.iter().map(|&i| src[i as usize]));
        }
        out.push(UvSet { name: key.1.map(|s| s.to_string()).unwrap_or_default(), uvs: Uvs::PerCorner(values) });
    }
    out
}

fn influences(
    c: &collada::Controller,
    vertex_count: usize,
    slot_of: &[u32],
    diag: &mut Diagnostics,
    file: &str,
) -> Result<Influences, SlError> {
    if c.weight_count != vertex_count {
        return Err(SlError::invalid(
            file,
            c.weights_pos.line,
            c.weights_pos.column,
            format!(
                "controller \"{}\": <vertex_weights count=\"{}\"> but its geometry has {vertex_count} positions; SL weights positions, so they must be equal",
                c.id, c.weight_count
            ),
        ));
    }
    let mut bind_shape_pairs = 0usize;
    let mut dropped = 0usize;
    let mut bad = 0usize;
    // Built in place: one buffer for all vertices, not one list per vertex.
    let mut inf = Influences { offsets: Vec::with_capacity(c.influence_offsets.len().max(1)), ..Default::default() };
    inf.offsets.push(0);
    inf.joints.reserve(c.influence_pairs.len());
    inf.weights.reserve(c.influence_pairs.len());
    for list in c.influences() {
        let first = inf.joints.len();
        for &(j, w) in list {
            if j < 0 {
                bind_shape_pairs += 1;
            } else if w == 0.0 {
                dropped += 1;
            } else if !(w.is_finite() && w > 0.0) {
                bad += 1;
            } else {
                let slot = slot_of[j as usize];
                // Two entries for one joint (or two aliases of one joint) add up.
                match inf.joints[first..].iter().position(|&e| e == slot) {
                    Some(k) => inf.weights[first + k] += w,
                    None => {
                        inf.joints.push(slot);
                        inf.weights.push(w);
                    }
                }
            }
        }
        inf.offsets.push(inf.joints.len() as u32);
    }
    if bind_shape_pairs > 0 {
        diag.info_at(
            "dae-bind-shape-weight",
            Place::named("controller", &c.id),
            format!(
                "controller \"{}\": {bind_shape_pairs} influence(s) on joint -1 (the bind shape) dropped, as the SL importer does",
                c.id
            ),
        );
    }
    if dropped > 0 {
        diag.info_at(
            "dae-zero-weight",
            Place::named("controller", &c.id),
            format!("controller \"{}\": {dropped} zero weight(s) dropped", c.id),
        );
    }
    if bad > 0 {
        diag.warn_at(
            "dae-bad-weight",
            Place::named("controller", &c.id),
            format!("controller \"{}\": {bad} negative or non-finite weight(s) dropped", c.id),
        );
    }
    Ok(inf)
}

fn sl_document(dae: &mut Dae, sl: &SlSkeleton, file: &str, diag: &mut Diagnostics) -> Result<Document, SlError> {
    let mut doc = Document::new(Frame::SECOND_LIFE);
    // The SL importer takes rigged data (geometry through bind shape and inverse binds, joint
    // translations) as Z-up metres; a Y_UP file must carry its turn inside those matrices, as
    // Skeleton.Male.dae does. Only a root joint's translation is in the file's scene frame.
    let up = dae.up_axis.unwrap_or(UpAxis::Y);
    let turn = (up != UpAxis::Z).then(|| FrameMap::new(&file_frame(Some(up), None), &Frame::BLENDER));
    if turn.is_some() {
        diag.info(
            "dae-up-axis",
            format!("{up:?}_UP: root joint translations turned Z-up; geometry, bind shape and inverse binds taken as Z-up, as the SL importer takes them"),
        );
    }
    if dae.meter.is_some_and(|m| m != 1.0) {
        diag.info(
            "dae-unit",
            format!("<unit meter=\"{}\"> ignored for the rig: the SL importer takes rigged data as metres", dae.meter.unwrap_or(1.0)),
        );
    }
    // Which joints: every skin joint, every scene node with a legal name, and their SL ancestors.
    let mut scene: HashMap<SlJoint, usize> = HashMap::new();
    for (i, n) in dae.nodes.iter().enumerate() {
        if !n.controllers.is_empty() || !n.geometries.is_empty() {
            continue;
        }
        if let Some(j) = n.label().and_then(|l| sl.joint(l)) {
            scene.entry(j).or_insert(i);
        }
    }
    let mut set: HashSet<SlJoint> = scene.keys().copied().collect();
    let mut renamed: BTreeSet<(String, String)> = BTreeSet::new();
    for c in &dae.controllers {
        for n in &c.joints {
            if let Some(j) = sl.resolve(n) {
                set.insert(j);
                let canon = sl.name(j);
                if canon != *n {
                    renamed.insert((n.clone(), canon));
                }
            }
        }
    }
    for (i, n) in dae.nodes.iter().enumerate() {
        if let Some(l) = n.label() {
            if let Some(j) = sl.joint(l) {
                if scene.get(&j) == Some(&i) && sl.name(j) != l {
                    renamed.insert((l.to_string(), sl.name(j)));
                }
            }
        }
    }
    if !renamed.is_empty() {
        let list: Vec<String> = renamed.iter().map(|(a, b)| format!("{a} → {b}")).collect();
        diag.info("dae-alias", format!("aliases renamed to canonical SL names: {}", list.join(", ")));
    }
    for j in set.clone() {
        let mut p = sl.parent(j);
        while let Some(a) = p {
            if !set.insert(a) {
                break;
            }
            p = sl.parent(a);
        }
    }
    let mut order: Vec<SlJoint> = set.into_iter().collect();
    order.sort_by_cached_key(|&j| sl.rank(j));
    let mut sk = Skeleton::new(
        dae.nodes
            .iter()
            .find(|n| n.controllers.is_empty() && n.geometries.is_empty() && !n.joint)
            .and_then(|n| n.label())
            .unwrap_or("Avatar"),
    );
    let mut ids: HashMap<SlJoint, BoneId> = HashMap::new();
    let mut missing = 0usize;
    for &j in &order {
        let t = match scene.get(&j).and_then(|&i| dae.nodes[i].importer_translation.map(|t| (i, t))) {
            // A joint whose parent node is no joint is placed in the file's frame: turn it.
            Some((i, t)) => match (&turn, dae.nodes[i].parent) {
                (Some(m), p) if p.is_none_or(|p| dae.nodes[p].label().is_none_or(|l| sl.joint(l).is_none())) => m.direction(t),
                _ => t,
            },
            None => {
                missing += 1;
                sl.default_pos(j)
            }
        };
        let parent = sl.parent(j).and_then(|p| ids.get(&p).copied());
        // The viewer's joint keeps its default rotation and scale (non-trivial on collision
        // volumes and attachment points); the file gives only the translation.
        let bone = Bone::new(sl.name(j), parent, Transform { translation: t, ..sl.default_rest(j) });
        ids.insert(j, sk.push(bone));
    }
    if missing > 0 {
        diag.info("dae-default-joints", format!("{missing} joint(s) not in the scene placed at their SL default positions"));
    }
    doc.skeletons.push(sk);
    skelport_ir::trace::phase("dae: skeleton");
    let parallel = big(dae);
    let (meshes, mesh_of) = meshes(&dae.controllers, &dae.nodes, &mut dae.geometries, parallel, diag);
    doc.meshes = meshes;
    skelport_ir::trace::phase("dae: meshes");
    let mut prepared = Vec::with_capacity(dae.controllers.len());
    for c in &dae.controllers {
        let gi = dae.geometry(&c.skin_source).expect("checked in to_document");
        let mi = mesh_of[&gi];
        let joints: Vec<BoneId> = c.joints.iter().map(|n| ids[&sl.resolve(n).expect("checked legal")]).collect();
        // One slot per distinct joint (aliases of one joint share it).
        let mut uniq: Vec<BoneId> = Vec::new();
        let mut ib = Vec::new();
        let mut slot_of = Vec::with_capacity(joints.len());
        for (k, b) in joints.iter().enumerate() {
            match uniq.iter().position(|u| u == b) {
                Some(s) => slot_of.push(s as u32),
                None => {
                    slot_of.push(uniq.len() as u32);
                    uniq.push(*b);
                    ib.push(c.inverse_binds[k]);
                }
            }
        }
        prepared.push((c, mi, uniq, ib, slot_of));
    }
    let jobs: Vec<(&collada::Controller, usize, &[u32])> =
        prepared.iter().map(|(c, mi, _, _, slot_of)| (*c, doc.meshes[*mi].positions.len(), slot_of.as_slice())).collect();
    let weights = skelport_ir::map_in_order(jobs, parallel, reporting(|(c, nv, slot_of), d| influences(c, nv, slot_of, d, file)));
    skelport_ir::trace::phase("dae: influences");
    for ((c, mi, uniq, ib, _), (influences, d)) in prepared.into_iter().zip(weights) {
        diag.items.extend(d.items);
        let influences = influences?;
        let bind_shape = c.bind_shape;
        doc.skins.push(Skin {
            name: if c.id.is_empty() { c.name.clone() } else { c.id.clone() },
            skeleton: skelport_ir::SkeletonId::new(0),
            mesh: Some(skelport_ir::MeshId::from_index(mi)),
            joints: uniq,
            inverse_bind: ib,
            bind_shape,
            influences,
            ext: Default::default(),
        });
    }
    Ok(doc)
}

fn generic_document(dae: &mut Dae, file: &str, diag: &mut Diagnostics) -> Result<Document, SlError> {
    let mut doc = Document::new(file_frame(dae.up_axis, dae.meter));
    let n = dae.nodes.len();
    let mut world = vec![DMat4::IDENTITY; n];
    for i in 0..n {
        world[i] = match dae.nodes[i].parent {
            Some(p) => world[p] * dae.nodes[i].local,
            None => dae.nodes[i].local,
        };
    }
    // Node lookup for skin joint names: sid, then name, then id (first in document order).
    let mut by_sid: HashMap<&str, usize> = HashMap::new();
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    let mut by_id: HashMap<&str, usize> = HashMap::new();
    for (i, nd) in dae.nodes.iter().enumerate() {
        if let Some(s) = &nd.sid {
            by_sid.entry(s).or_insert(i);
        }
        if let Some(s) = &nd.name {
            by_name.entry(s).or_insert(i);
        }
        if let Some(s) = &nd.id {
            by_id.entry(s).or_insert(i);
        }
    }
    let find = |name: &str| by_sid.get(name).or(by_name.get(name)).or(by_id.get(name)).copied();
    let mut member = vec![false; n];
    for (i, nd) in dae.nodes.iter().enumerate() {
        member[i] = nd.joint;
    }
    let mut orphans: Vec<String> = Vec::new();
    let mut orphan_set: HashSet<&str> = HashSet::new();
    for c in &dae.controllers {
        for j in &c.joints {
            match find(j) {
                Some(i) => member[i] = true,
                None => {
                    if orphan_set.insert(j) {
                        orphans.push(j.clone())
                    }
                }
            }
        }
    }
    // Nodes between two joints belong to the skeleton too: their transforms matter.
    let mut has_member_below = member.clone();
    for i in (0..n).rev() {
        if has_member_below[i] {
            if let Some(p) = dae.nodes[i].parent {
                has_member_below[p] = true;
            }
        }
    }
    let mut has_member_above = vec![false; n];
    for i in 0..n {
        if let Some(p) = dae.nodes[i].parent {
            has_member_above[i] = member[p] || has_member_above[p];
        }
    }
    let include: Vec<bool> = (0..n).map(|i| member[i] || (has_member_below[i] && has_member_above[i])).collect();
    let mut sk = Skeleton::new("skeleton");
    let mut bone_of: Vec<Option<BoneId>> = vec![None; n];
    let mut taken = UniqueNames::new();
    let mut bone_world: Vec<DMat4> = Vec::new();
    let mut bad_tr = Vec::new();
    for i in 0..n {
        if !include[i] {
            continue;
        }
        let mut p = dae.nodes[i].parent;
        while let Some(pi) = p {
            if bone_of[pi].is_some() {
                break;
            }
            p = dae.nodes[pi].parent;
        }
        let parent = p.and_then(|pi| bone_of[pi]);
        let local = match parent {
            Some(pb) => bone_world[pb.index()].inverse() * world[i],
            None => world[i],
        };
        let rest = Transform::from_matrix(&local).unwrap_or_else(|| {
            bad_tr.push(dae.nodes[i].label().unwrap_or("?").to_string());
            let (s, r, t) = local.to_scale_rotation_translation();
            Transform { translation: t, rotation: r.normalize(), scale: s.abs() }
        });
        let name = unique_name(dae.nodes[i].label().unwrap_or("joint"), &mut taken);
        let id = sk.push(Bone::new(name, parent, rest));
        bone_of[i] = Some(id);
        bone_world.push(world[i]);
    }
    if !bad_tr.is_empty() {
        diag.warn("dae-shear", format!("node transform(s) with shear or mirroring approximated by TRS: {}", bad_tr.join(", ")));
    }
    let mut orphan_ids: HashMap<String, BoneId> = HashMap::new();
    if !orphans.is_empty() {
        diag.warn("dae-missing-joint-node", format!("skin joint(s) with no scene node, placed at their bind pose: {}", orphans.join(", ")));
        for c in &dae.controllers {
            for (k, j) in c.joints.iter().enumerate() {
                if find(j).is_none() && !orphan_ids.contains_key(j) {
                    let bind = c.inverse_binds[k].inverse();
                    let rest = Transform::from_matrix(&bind).unwrap_or_default();
                    let name = unique_name(j, &mut taken);
                    orphan_ids.insert(j.clone(), sk.push(Bone::new(name, None, rest)));
                }
            }
        }
    }
    doc.skeletons.push(sk);
    let parallel = big(dae);
    let (meshes, mesh_of) = meshes(&dae.controllers, &dae.nodes, &mut dae.geometries, parallel, diag);
    doc.meshes = meshes;
    // Each skin's mesh, and its joints in slot order (one slot per joint).
    let mesh_index: Vec<usize> =
        dae.controllers.iter().map(|c| mesh_of[&dae.geometry(&c.skin_source).expect("checked in to_document")]).collect();
    let slots: Vec<Vec<u32>> = dae.controllers.iter().map(|c| (0..c.joints.len() as u32).collect()).collect();
    let jobs: Vec<(&collada::Controller, usize, &[u32])> = dae
        .controllers
        .iter()
        .zip(&mesh_index)
        .zip(&slots)
        .map(|((c, &mi), s)| (c, doc.meshes[mi].positions.len(), s.as_slice()))
        .collect();
    let weights = skelport_ir::map_in_order(jobs, parallel, reporting(|(c, nv, slot_of), d| influences(c, nv, slot_of, d, file)));
    for ((c, &mi), (influences, d)) in dae.controllers.iter().zip(&mesh_index).zip(weights) {
        diag.items.extend(d.items);
        let influences = influences?;
        let joints: Vec<BoneId> = c.joints.iter().map(|j| find(j).and_then(|i| bone_of[i]).unwrap_or_else(|| orphan_ids[j])).collect();
        doc.skins.push(Skin {
            name: if c.id.is_empty() { c.name.clone() } else { c.id.clone() },
            skeleton: skelport_ir::SkeletonId::new(0),
            mesh: Some(skelport_ir::MeshId::from_index(mi)),
            joints,
            inverse_bind: c.inverse_binds.clone(),
            bind_shape: c.bind_shape,
            influences,
            ext: Default::default(),
        });
    }
    Ok(doc)
}

fn unique_name(base: &str, taken: &mut UniqueNames) -> String {
    taken.unique(base, Suffix::Dot3)
}

/// Read `.dae` bytes into the IR (the `dae` format's reader).
pub fn read(bytes: &[u8], file: &str, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, SlError> {
    let unpacked = crate::zae::unpack_if_zipped(bytes, file)?;
    let budget = opts.budget.clone().unwrap_or_else(|| skelport_ir::Budget::for_input(bytes.len() as u64));
    let (bytes, file, budget) = match &unpacked {
        Some((name, dae)) => {
            diag.info("dae-zae", format!("{file}: zipped Collada; read {name}"));
            // The Collada reader takes memory in proportion to its text, within the budget of
            // a file that size: the `.dae` inside is charged as the input it stands for, so an
            // archive is allowed no more than a `.dae` of the archive's size.
            // That charge stands for what reading it builds, which is not charged again.
            budget.charge((dae.len() as u64).saturating_mul(skelport_ir::budget::BUDGET_FACTOR), file, name)?;
            (dae.as_slice(), name.as_str(), skelport_ir::Budget::unlimited())
        }
        None => (bytes, file, budget),
    };
    let text = decode(bytes, file)?;
    skelport_ir::trace::phase("dae: text decoded");
    let dae = collada::parse_budgeted(&text, file, &budget)?;
    skelport_ir::trace::phase("dae: parsed");
    crate::dae_check::check(&dae, file)?;
    skelport_ir::trace::phase("dae: checked");
    let owned;
    let sl = match &opts.sl_skeleton {
        Some(p) => {
            owned = SlSkeleton::from_file(p)?;
            &owned
        }
        None => SlSkeleton::builtin(),
    };
    to_document(dae, sl, file, diag)
}

#[cfg(test)]
mod tests {
    use super::mesh_of;
    use crate::collada::{Geometry, Primitive};
    use skelport_ir::{DVec3, Diagnostics, Normals};

    /// A one-primitive geometry: two quads on four positions, `normal` giving each corner's normal.
    fn quads(normal: Vec<u32>, normals: usize) -> Geometry {
        Geometry {
            id: "g".into(),
            name: "g".into(),
            positions: (0..4).map(|k| DVec3::new(k as f64, 0.0, 0.0)).collect(),
            normals: (0..normals).map(|k| DVec3::new(0.0, k as f64, 1.0)).collect(),
            primitives: vec![Primitive { counts: vec![4, 4], vertex: vec![0, 1, 2, 3, 3, 2, 1, 0], normal, ..Default::default() }],
            ..Default::default()
        }
    }

    /// Each corner gets the normal its index names, whether the normals are moved (one per corner,
    /// in corner order) or gathered (any other indexing).
    #[test]
    fn per_corner_normals_are_the_indexed_ones() {
        for (normal, count) in [
            (vec![0, 1, 2, 3, 4, 5, 6, 7], 8),
            (vec![7, 6, 5, 4, 3, 2, 1, 0], 8),
            (vec![0, 1, 2, 3, 4, 5, 6, 6], 8),
            (vec![0, 1, 2, 3, 0, 1, 2, 3], 4),
            (vec![0, 1, 2, 3, 4, 5, 6, 7], 9),
        ] {
            let mut g = quads(normal.clone(), count);
            let want: Vec<DVec3> = normal.iter().map(|&n| g.normals[n as usize]).collect();
            let m = mesh_of(&mut g, &mut Diagnostics::default());
            assert_eq!(m.normals, Some(Normals::PerCorner(want)), "{normal:?} of {count}");
            assert_eq!(m.faces.indices, vec![0, 1, 2, 3, 3, 2, 1, 0]);
        }
    }

    /// Each corner gets the texture coordinate its index names, whether the source is moved (one
    /// value per corner, in corner order, read by one set) or gathered: reordered, fewer corners
    /// than values, or a source two sets read (each set gets all its values).
    #[test]
    fn per_corner_uvs_are_the_indexed_ones() {
        use crate::collada::{TexCoords, UvInput};
        use skelport_ir::{DVec2, Uvs};
        let uv = |source: usize, set: u32, index: &[u32]| UvInput { set: Some(set), source, index: index.to_vec(), ..Default::default() };
        let id: &[u32] = &[0, 1, 2, 3, 4, 5, 6, 7];
        for (inputs, sources) in [
            (vec![uv(0, 0, id)], vec![8]),
            (vec![uv(0, 0, &[7, 6, 5, 4, 3, 2, 1, 0])], vec![8]),
            (vec![uv(0, 0, id)], vec![9]),
            (vec![uv(0, 0, &[0, 1, 2, 3, 0, 1, 2, 3])], vec![4]),
            (vec![uv(0, 0, id), uv(0, 1, id)], vec![8]),
            (vec![uv(1, 1, id), uv(0, 0, &[1, 1, 2, 3, 4, 5, 6, 7])], vec![8, 8]),
        ] {
            let mut g = quads((0..8).collect(), 8);
            g.texcoords = sources
                .iter()
                .enumerate()
                .map(|(s, &n)| TexCoords {
                    values: (0..n).map(|k| DVec2::new(s as f64, k as f64)).collect(),
                    stride: 2,
                    ..Default::default()
                })
                .collect();
            g.primitives[0].uvs = inputs.clone();
            let mut sets: Vec<&UvInput> = inputs.iter().collect();
            sets.sort_by_key(|u| u.set);
            let want: Vec<(String, Uvs)> = sets
                .iter()
                .map(|u| {
                    (
                        u.set.unwrap().to_string(),
                        Uvs::PerCorner(u.index.iter().map(|&i| g.texcoords[u.source].values[i as usize]).collect()),
                    )
                })
                .collect();
            let m = mesh_of(&mut g, &mut Diagnostics::default());
            let got: Vec<(String, Uvs)> = m.uvs.into_iter().map(|s| (s.name, s.uvs)).collect();
            assert_eq!(got, want, "{inputs:?} of {sources:?}");
        }
    }
}
