//! `skelport diff`: a semantic comparison of two documents in the report frame. Bones are matched
//! by name; positions, orientations, hierarchy and skins are compared within tolerances.

use crate::Loaded;
use serde::Serialize;
use skelport_ir::frame::FrameMap;
use skelport_ir::proc::report_skeletons;
use skelport_ir::{DQuat, DVec3, Document};
use std::collections::{BTreeMap, HashMap};

/// Tolerances for [`diff`].
#[derive(Debug, Clone, Copy)]
pub struct Tolerance {
    /// Largest head/tail distance that counts as the same, in metres.
    pub metres: f64,
    /// Largest orientation difference that counts as the same, in degrees.
    pub degrees: f64,
    /// Largest per-joint weight difference (after normalization) that counts as the same.
    pub weight: f64,
    /// Compare orientations; `false` makes a turned bone no difference (for callers comparing
    /// files of formats that re-derive orientations without [`as_converted`]).
    pub orientations: bool,
}

impl Default for Tolerance {
    fn default() -> Self {
        Tolerance { metres: 1e-4, degrees: 0.01, weight: 1e-4, orientations: true }
    }
}

/// What [`as_converted`] did to A so that it compares with B as a conversion to B's format
/// would have left it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct AsConverted {
    /// The format B was read as: the conversion's target.
    pub target: String,
    /// The retarget map applied to A (`--map`), by name or file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub map: Option<String>,
    /// The target's writer put A in its own rest pose (VRM's T-pose).
    pub t_pose: bool,
    /// Orientations are compared (always: A is compared as the target's reader reads it back).
    pub orientations: bool,
}

impl AsConverted {
    /// One line: what A was compared as (`as a conversion to vrm: A in its T-pose, as the
    /// writer makes it`).
    pub fn describe(&self) -> String {
        let mut parts = vec!["A written and read back".to_owned()];
        if let Some(m) = &self.map {
            parts.push(format!("map {m}"));
        }
        if self.t_pose {
            parts.push("A in its T-pose, as the writer makes it".to_owned());
        }
        format!("as a conversion to {}: {}", self.target, parts.join(", "))
    }
}

/// A as a conversion of it to `target` (B's format) gives it, so that "did my conversion keep
/// the rig?" has its answer: A is converted as `convert` does (with `map`: a built-in map, a map
/// file, or `humanoid`, the target's own names; losses allowed, since only the rig is compared),
/// written to a temporary folder and read back by `target`'s reader. Everything the writer does
/// (VRM's T-pose and grounding, the joints Second Life's skeleton adds, orientations a format
/// re-derives) is then on both sides. Returns the document read back and what was done.
pub fn as_converted(a: &Loaded, target: &'static dyn skelport_ir::Format, map: Option<&str>) -> crate::Result<(Document, AsConverted)> {
    let dir = tempfile::tempdir().map_err(|e| crate::Error::new(crate::ErrorCode::Output, None, format!("a temporary folder: {e}")))?;
    let path = dir.path().join(format!("a.{}", target.extensions().first().copied().unwrap_or("out")));
    let opts = crate::ConvertOptions { map: map.map(str::to_owned), allow_loss: true, ..Default::default() }.named_for(&path);
    let converted = crate::convert(a, target, &opts)?;
    converted.save(&path)?;
    let t_pose = converted.diagnostics.items.iter().any(|d| d.code == "rest.t-pose");
    let reader = target.read_back(&converted.output);
    let back = target
        .read(skelport_ir::Input { path: Some(&path), bytes: &converted.output.main }, &reader, &mut skelport_ir::Diagnostics::default())
        .map_err(|e| crate::Error::read(&a.name, target.name(), e))?;
    Ok((back, AsConverted { target: target.name().to_owned(), map: map.map(str::to_owned), t_pose, orientations: true }))
}

/// A made ready to be compared with B (`b_format`: B's format; `None` for the Second Life
/// avatar skeleton, `diff --sl`), as `skelport diff` compares them: B in another format is what a
/// conversion of A to it gave, so A becomes that ([`as_converted`], with `map`); otherwise `map`
/// renames A's bones ([`Loaded::apply_map`]; `humanoid` to the names of B's format, or to the SL
/// skeleton's). Returns what the conversion did when A was converted; its `orientations` says
/// whether to compare bone orientations ([`Tolerance::orientations`]).
pub fn prepare_a(
    a: &mut Loaded,
    b_format: Option<&'static dyn skelport_ir::Format>,
    map: Option<&str>,
) -> crate::Result<Option<AsConverted>> {
    match b_format.filter(|f| f.name() != a.format.name()) {
        Some(target) => {
            let (doc, done) = as_converted(a, target, map)?;
            a.doc = doc;
            Ok(Some(done))
        }
        None => {
            // A retarget follows the document's parents and skins: a broken one is refused,
            // named (compared as read, without a map, it is not).
            if let Some(m) = map {
                a.apply_map(m, b_format.or_else(|| crate::registry::by_name("dae")))?;
            }
            Ok(None)
        }
    }
}

/// A bone whose parent differs.
#[derive(Debug, Serialize)]
pub struct Reparented {
    /// The bone.
    pub bone: String,
    /// Its parent in A (`None`: a root).
    pub from: Option<String>,
    /// Its parent in B (`None`: a root).
    pub to: Option<String>,
}

/// A bone whose head or tail moved more than the tolerance.
#[derive(Debug, Serialize)]
pub struct Moved {
    /// The bone.
    pub bone: String,
    /// Head distance in metres.
    pub head: f64,
    /// Tail distance in metres; `None` when one file does not store the bone's tail (its
    /// length): a tail a reader inferred (from the children, say) is not compared.
    pub tail: Option<f64>,
}

/// What [`diff`] compared: only what both files hold.
#[derive(Debug, Serialize, Default, Clone, Copy, PartialEq, Eq)]
pub struct Compared {
    /// Bones matched by name, whose parents, heads and orientations were compared.
    pub bones: usize,
    /// Matched bones whose tails were compared: those whose length both files store. Formats
    /// without bone lengths (glTF, Collada) leave the tail to be inferred, and an inferred
    /// tail is no fact of the file.
    pub tails: usize,
    /// Skins whose vertex counts, joints and weights were compared (paired by order).
    pub skins: usize,
    /// Meshes whose vertex and face counts and vertex positions were compared (paired by name
    /// when both files name every mesh once and alike, else by order).
    pub meshes: usize,
}

impl Compared {
    /// Nothing at all was compared: no bone, skin or mesh in common.
    pub fn nothing(&self) -> bool {
        self.bones + self.skins + self.meshes == 0
    }
}

/// A bone whose orientation turned more than the tolerance.
#[derive(Debug, Serialize)]
pub struct Rotated {
    /// The bone.
    pub bone: String,
    /// The angle between its orientations in A and B.
    pub degrees: f64,
}

/// The result of a diff.
#[derive(Debug, Serialize, Default)]
pub struct DiffReport {
    /// Nothing differs beyond the tolerances.
    pub same: bool,
    /// Bones only in B.
    pub added: Vec<String>,
    /// Bones only in A.
    pub removed: Vec<String>,
    /// Bones whose parent differs.
    pub reparented: Vec<Reparented>,
    /// Bones that moved.
    pub moved: Vec<Moved>,
    /// Bones that turned.
    pub rotated: Vec<Rotated>,
    /// Skin differences, one sentence each.
    pub skins: Vec<String>,
    /// Mesh differences, one sentence each.
    pub meshes: Vec<String>,
    /// What was compared.
    pub compared: Compared,
    /// Findings that are not differences, one sentence each: joints one skin lists and the
    /// other does not, with no weight on any vertex (no vertex moves with them).
    pub notes: Vec<String>,
    /// Largest head distance over matched bones, metres.
    pub max_head_distance: f64,
    /// The skinning comparison, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pose_test: Option<PoseTest>,
    /// What A was compared as, when B is in another format ([`as_converted`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compared_as: Option<AsConverted>,
}

/// Result of posing two documents alike and comparing their skinned vertices (or, for skins
/// without vertices, their joints' skinning matrices; for skeleton-only files, their posed
/// joints).
#[derive(Debug, Serialize, Clone)]
pub struct PoseTest {
    /// Random poses compared.
    pub poses: usize,
    /// Skinned vertices compared per pose (over every skin whose mesh both files have).
    pub vertices: usize,
    /// Posed joint heads compared per pose (skeleton-only files); 0 when skins are compared.
    pub joints: usize,
    /// Joints whose skinning matrices (posed world × inverse bind) were compared per pose, over
    /// the skins that have no vertices in one file or both.
    pub matrices: usize,
    /// Largest vertex (or joint, or skinning-matrix point) distance over all poses, metres
    /// (report frame).
    pub max_deviation: f64,
}

/// How far from a joint's bind-pose head the points lie whose images under its two skinning
/// matrices are compared (metres): a turn of the joint moves them, a turn about the head does
/// not move the head itself.
pub const MATRIX_PROBE_M: f64 = 0.1;

/// Pose A and B with the same `poses` random rotations (by bone name, up to 0.6 rad each) and
/// compare the linear-blend-skinned vertices of every skin (skins paired by order). A skin pair
/// without vertices on either side (a skin read without its mesh) compares the skinning matrices
/// (posed world × inverse bind) of each joint both skins have, by name, at the joint's bind head
/// and at points [`MATRIX_PROBE_M`] from it along each axis. When neither file has a skin,
/// compare the posed world positions of the joints both have.
///
/// # Errors
/// When the skins cannot be paired (one file has skins and the other none, or their numbers
/// differ), a pair of skinned meshes differs in vertex count, or nothing at all was compared (no
/// pose, or no vertex, joint or bone name in common): a check that compared nothing has not
/// passed.
pub fn pose_test(a: &Document, b: &Document, poses: usize, seed: u64) -> crate::Result<PoseTest> {
    pose_test_words(a, b, poses, seed).map_err(|words| crate::Error::new(crate::ErrorCode::Invalid, None, words))
}

fn pose_test_words(a: &Document, b: &Document, poses: usize, seed: u64) -> Result<PoseTest, crate::Words> {
    use crate::{Opt, Words};
    use skelport_ir::pose::{deform_all, in_report_frame, max_deviation, posed_heads, random_pose};
    // Converted once: every pose below borrows them.
    let (a, b) = (&*in_report_frame(a), &*in_report_frame(b));
    let names: Vec<&str> = a.skeletons.iter().flat_map(|s| s.bones.iter().map(|b| b.name.as_str())).collect();
    let mut worst = 0.0f64;
    let (mut vertices, mut joints, mut matrices) = (0, 0, 0);
    match (a.skins.is_empty(), b.skins.is_empty()) {
        (false, false) if a.skins.len() != b.skins.len() => {
            return Err(Words::new(format!(
                "the files have different numbers of skins ({} vs {}); the pose test pairs skins by order",
                a.skins.len(),
                b.skins.len()
            )))
        }
        (false, false) | (true, true) => {}
        _ => return Err(Words::default().opt(Opt::PoseTest).text(" needs a skin in both files, or in neither (then joints are compared)")),
    }
    for k in 0..poses {
        let pose = random_pose(names.iter().copied(), seed.wrapping_add(k as u64), 0.6);
        if a.skins.is_empty() {
            let (ha, hb) = (posed_heads(a, &pose), posed_heads(b, &pose));
            joints = 0;
            for (n, p) in &ha {
                if let Some(q) = hb.get(n) {
                    joints += 1;
                    worst = worst.max(p.distance(*q));
                }
            }
            continue;
        }
        let (da, db) = (deform_all(a, &pose), deform_all(b, &pose));
        (vertices, matrices) = (0, 0);
        for (k, (va, vb)) in da.iter().zip(&db).enumerate() {
            if va.is_empty() || vb.is_empty() {
                let (n, d) = skinning_matrices_apart(a, &a.skins[k], b, &b.skins[k], &pose);
                matrices += n;
                worst = worst.max(d);
                continue;
            }
            vertices += va.len();
            let d = max_deviation(va, vb)
                .ok_or_else(|| Words::new(format!("skin {k}: the skinned meshes differ in vertex count ({} vs {})", va.len(), vb.len())))?;
            worst = worst.max(d);
        }
    }
    if vertices + joints + matrices == 0 {
        return Err(Words::new(format!(
            "the pose test compared nothing ({}): {}; a check that compares nothing does not pass",
            if poses == 0 { "no poses".to_string() } else { format!("{poses} poses") },
            if a.skins.is_empty() {
                "neither file has a skin, and the files have no bone names in common"
            } else {
                "the skins have no vertices to skin and no joints in common"
            }
        )));
    }
    Ok(PoseTest { poses, vertices, joints, matrices, max_deviation: worst })
}

/// The skinning matrices of the joints skins `sa` (of `a`) and `sb` (of `b`) both have, by
/// name, under `pose`: how many were compared, and the largest distance between their images of
/// the joint's bind head (A's) and of the points [`MATRIX_PROBE_M`] from it along each axis.
/// Both documents are in the report frame.
fn skinning_matrices_apart(
    a: &Document,
    sa: &skelport_ir::Skin,
    b: &Document,
    sb: &skelport_ir::Skin,
    pose: &skelport_ir::pose::Pose,
) -> (usize, f64) {
    use skelport_ir::pose::posed_worlds;
    let (Some(ka), Some(kb)) = (a.get_skeleton(sa.skeleton), b.get_skeleton(sb.skeleton)) else { return (0, 0.0) };
    let (pa, pb) = (posed_worlds(ka, pose), posed_worlds(kb, pose));
    let skinning = |k: &skelport_ir::Skeleton, posed: &[skelport_ir::DMat4], s: &skelport_ir::Skin| {
        s.joints
            .iter()
            .zip(&s.inverse_bind)
            .filter_map(|(j, ibm)| Some((k.bones.get(j.index())?.name.clone(), (*posed.get(j.index())? * *ibm, *ibm))))
            .collect::<HashMap<String, _>>()
    };
    let mb = skinning(kb, &pb, sb);
    let (mut n, mut worst) = (0usize, 0.0f64);
    for (name, (ma, ibm)) in skinning(ka, &pa, sa) {
        let Some((other, _)) = mb.get(&name) else { continue };
        n += 1;
        let head = ibm.inverse().w_axis.truncate();
        let probes = [DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::Z].map(|d| head + d * MATRIX_PROBE_M);
        for p in probes {
            worst = worst.max(ma.transform_point3(p).distance(other.transform_point3(p)));
        }
    }
    (n, worst)
}

fn angle_deg(a: [f64; 4], b: [f64; 4]) -> f64 {
    let qa = DQuat::from_array(a).normalize();
    let qb = DQuat::from_array(b).normalize();
    let d = qa.dot(qb).abs().min(1.0);
    (2.0 * d.acos()).to_degrees()
}

/// Compare A and B.
pub fn diff(a: &Document, b: &Document, tol: Tolerance) -> DiffReport {
    let ra = report_skeletons(a);
    let rb = report_skeletons(b);
    let bones_a: Vec<_> = ra.iter().flat_map(|s| s.bones.iter()).collect();
    let bones_b: Vec<_> = rb.iter().flat_map(|s| s.bones.iter()).collect();
    let map_b: HashMap<&str, _> = bones_b.iter().map(|x| (x.name.as_str(), *x)).collect();
    let map_a: HashMap<&str, _> = bones_a.iter().map(|x| (x.name.as_str(), *x)).collect();
    // Which bones store their tail (a length): only those tails are facts of the file.
    let stored = |d: &Document| -> HashMap<String, bool> {
        d.skeletons.iter().flat_map(|s| s.bones.iter().map(|b| (b.name.clone(), b.length.is_some()))).collect()
    };
    let (stored_a, stored_b) = (stored(a), stored(b));
    let mut r = DiffReport::default();
    for ba in &bones_a {
        let Some(bb) = map_b.get(ba.name.as_str()) else {
            r.removed.push(ba.name.clone());
            continue;
        };
        r.compared.bones += 1;
        if ba.parent != bb.parent {
            r.reparented.push(Reparented { bone: ba.name.clone(), from: ba.parent.clone(), to: bb.parent.clone() });
        }
        let head = DVec3::from_array(ba.head).distance(DVec3::from_array(bb.head));
        let both_store = stored_a.get(&ba.name).copied().unwrap_or(false) && stored_b.get(&ba.name).copied().unwrap_or(false);
        let tail = both_store.then(|| DVec3::from_array(ba.tail).distance(DVec3::from_array(bb.tail)));
        r.compared.tails += usize::from(both_store);
        r.max_head_distance = r.max_head_distance.max(head);
        if head > tol.metres || tail.is_some_and(|t| t > tol.metres) {
            r.moved.push(Moved { bone: ba.name.clone(), head, tail });
        }
        let deg = angle_deg(ba.rotation, bb.rotation);
        if tol.orientations && deg > tol.degrees {
            r.rotated.push(Rotated { bone: ba.name.clone(), degrees: deg });
        }
    }
    r.added = bones_b.iter().filter(|x| !map_a.contains_key(x.name.as_str())).map(|x| x.name.clone()).collect();
    if a.skins.len() != b.skins.len() {
        r.skins.push(format!("A has {} skins, B has {}", a.skins.len(), b.skins.len()));
    }
    for (k, (sa, sb)) in a.skins.iter().zip(&b.skins).enumerate() {
        r.compared.skins += 1;
        compare_skins(a, sa, b, sb, k, tol, &mut r.skins, &mut r.notes);
    }
    compare_meshes(a, b, tol, &mut r);
    if r.compared.nothing() {
        r.notes.push(
            "nothing was compared: the files have no bone name, skin or mesh in common; a check that compares nothing does not pass".into(),
        );
    }
    r.same = r.added.is_empty()
        && r.removed.is_empty()
        && r.reparented.is_empty()
        && r.moved.is_empty()
        && r.rotated.is_empty()
        && r.skins.is_empty()
        && r.meshes.is_empty()
        && !r.compared.nothing();
    r
}

/// Compare the meshes of A and B (positions in the report frame): their numbers, and of each pair the
/// vertex and face counts and the largest distance between vertices of the same index. Meshes
/// pair by name when both files name every mesh once and with the same names (writers may order
/// them differently), else by order.
fn compare_meshes(a: &Document, b: &Document, tol: Tolerance, r: &mut DiffReport) {
    if a.meshes.is_empty() && b.meshes.is_empty() {
        return;
    }
    if a.meshes.len() != b.meshes.len() {
        r.meshes.push(format!("A has {} meshes, B has {}", a.meshes.len(), b.meshes.len()));
    }
    // Positions mapped into the report frame as they are compared (not whole documents copied).
    let report = skelport_ir::Frame::REPORT;
    let (pa, pb) = (FrameMap::new(&a.frame, &report), FrameMap::new(&b.frame, &report));
    let names_b: HashMap<&str, usize> = b.meshes.iter().enumerate().map(|(j, m)| (m.name.as_str(), j)).collect();
    let once_a = a.meshes.iter().map(|m| m.name.as_str()).collect::<std::collections::HashSet<_>>().len() == a.meshes.len();
    let by_name = once_a && names_b.len() == b.meshes.len() && a.meshes.iter().all(|m| names_b.contains_key(m.name.as_str()));
    let pairs: Vec<(usize, usize)> = if by_name {
        a.meshes.iter().enumerate().map(|(i, m)| (i, names_b[m.name.as_str()])).collect()
    } else {
        (0..a.meshes.len().min(b.meshes.len())).map(|i| (i, i)).collect()
    };
    for (i, j) in pairs {
        let (ma, mb) = (&a.meshes[i], &b.meshes[j]);
        r.compared.meshes += 1;
        let label = if ma.name == mb.name { format!("mesh {:?}", ma.name) } else { format!("mesh {i} ({:?} / {:?})", ma.name, mb.name) };
        if ma.positions.len() != mb.positions.len() {
            r.meshes.push(format!("{label}: {} vertices in A, {} in B", ma.positions.len(), mb.positions.len()));
            continue;
        }
        // Triangles, so that a quad and the two triangles a format stores it as are alike.
        let triangles = |m: &skelport_ir::Mesh| m.faces.counts.iter().map(|&c| c.saturating_sub(2) as usize).sum::<usize>();
        let (ta, tb) = (triangles(ma), triangles(mb));
        if ta != tb {
            r.meshes.push(format!("{label}: {ta} triangles in A, {tb} in B"));
        }
        let (mut worst, mut at, mut moved) = (0.0f64, 0usize, 0usize);
        for (v, (p, q)) in ma.positions.iter().zip(&mb.positions).enumerate() {
            let d = pa.point(*p).distance(pb.point(*q));
            if d > tol.metres {
                moved += 1;
            }
            if d > worst {
                (worst, at) = (d, v);
            }
        }
        if moved > 0 {
            r.meshes.push(format!("{label}: {moved} vertices moved (worst: vertex {at}, by {worst:.3e} m)"));
        }
    }
}

fn joint_names(doc: &Document, s: &skelport_ir::Skin) -> Vec<String> {
    let sk = doc.get_skeleton(s.skeleton);
    s.joints.iter().map(|j| sk.and_then(|k| k.bones.get(j.index())).map(|b| b.name.clone()).unwrap_or_default()).collect()
}

/// The names of the joints of `s` that weigh some vertex.
fn weighted_joints(names: &[String], s: &skelport_ir::Skin) -> std::collections::HashSet<String> {
    let mut used = vec![false; names.len()];
    for (&j, &w) in s.influences.joints.iter().zip(&s.influences.weights) {
        if w > 0.0 {
            if let Some(u) = used.get_mut(j as usize) {
                *u = true;
            }
        }
    }
    names.iter().zip(used).filter(|(_, u)| *u).map(|(n, _)| n.clone()).collect()
}

/// Compare skin `k` of A and B: differences go to `out`, joints one side lists with no weight
/// (which change no vertex) to `notes`.
#[allow(clippy::too_many_arguments, reason = "one comparison's inputs and its two outputs")]
fn compare_skins(
    a: &Document,
    sa: &skelport_ir::Skin,
    b: &Document,
    sb: &skelport_ir::Skin,
    k: usize,
    tol: Tolerance,
    out: &mut Vec<String>,
    notes: &mut Vec<String>,
) {
    if sa.vertex_count() != sb.vertex_count() {
        out.push(format!("skin {k}: {} vertices in A, {} in B", sa.vertex_count(), sb.vertex_count()));
        return;
    }
    let (na, nb) = (joint_names(a, sa), joint_names(b, sb));
    for (side, mine, theirs, s) in [("A", &na, &nb, sa), ("B", &nb, &na, sb)] {
        let weighted = weighted_joints(mine, s);
        let (moving, idle): (Vec<String>, Vec<String>) =
            mine.iter().filter(|n| !theirs.contains(n)).cloned().partition(|n| weighted.contains(n));
        if !moving.is_empty() {
            out.push(format!("skin {k}: joints only in {side}: {}", moving.join(", ")));
        }
        if !idle.is_empty() {
            notes.push(format!("skin {k}: joints only in {side}, with no weight (no vertex moves with them): {}", idle.join(", ")));
        }
    }
    let mut differing = 0usize;
    let mut worst = (0.0f64, 0usize);
    for v in 0..sa.vertex_count() {
        let norm = |it: Vec<(u32, f64)>, names: &[String]| {
            let sum: f64 = it.iter().map(|e| e.1).sum();
            let mut m: BTreeMap<String, f64> = BTreeMap::new();
            for (j, w) in it {
                let n = names.get(j as usize).cloned().unwrap_or_default();
                *m.entry(n).or_default() += if sum > 0.0 { w / sum } else { w };
            }
            m
        };
        let ma = norm(sa.influences.vertex(v).collect(), &na);
        let mb = norm(sb.influences.vertex(v).collect(), &nb);
        let mut d = 0.0f64;
        for (n, w) in &ma {
            d = d.max((w - mb.get(n).copied().unwrap_or(0.0)).abs());
        }
        for (n, w) in &mb {
            d = d.max((w - ma.get(n).copied().unwrap_or(0.0)).abs());
        }
        if d > tol.weight {
            differing += 1;
            if d > worst.0 {
                worst = (d, v);
            }
        }
    }
    if differing > 0 {
        out.push(format!("skin {k}: {differing} vertices have different weights (worst: vertex {}, by {:.6})", worst.1, worst.0));
    }
}

/// The Second Life avatar skeleton as a document (`diff --sl`): the built-in one, or the
/// `avatar_skeleton.xml` at `path`.
pub fn sl_avatar(path: Option<&std::path::Path>) -> crate::Result<Document> {
    let sl = match path {
        Some(p) => std::borrow::Cow::Owned(
            skelport_sl::SlSkeleton::from_file(p)
                .map_err(|e| crate::Error::new(crate::ErrorCode::Read, Some(&p.display().to_string()), e.to_string()))?,
        ),
        None => std::borrow::Cow::Borrowed(skelport_sl::SlSkeleton::builtin()),
    };
    Ok(skelport_sl::skeleton_document(&sl))
}

#[cfg(test)]
mod tests {
    use super::*;
    use skelport_ir::{Bone, BoneId, DMat4, Frame, Influences, MeshId, Skeleton, SkeletonId, Skin, Transform};

    /// An arm in glTF's frame: shoulder → elbow → hand, 0.3 m apart along +X, no bone lengths
    /// (tails inferred, as glTF and Collada leave them).
    fn arm() -> Document {
        let mut doc = Document::new(Frame::GLTF);
        let mut sk = Skeleton::new("arm");
        let along = Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.3, 0.0, 0.0));
        sk.push(Bone::new("shoulder", None, Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 1.4, 0.0))));
        sk.push(Bone::new("elbow", Some(BoneId::new(0)), along));
        sk.push(Bone::new("hand", Some(BoneId::new(1)), along));
        doc.skeletons.push(sk);
        doc
    }

    /// `doc` with a skin of `joints` (bound at rest) and no mesh, as a rig read without its mesh
    /// is; each joint weighs one vertex, except those in `idle`.
    fn with_meshless_skin(mut doc: Document, joints: &[u32], idle: &[u32]) -> Document {
        let world = doc.skeletons[0].world_matrices();
        let lists = joints.iter().enumerate().filter(|(_, j)| !idle.contains(j)).map(|(k, _)| vec![(k as u32, 1.0)]).collect::<Vec<_>>();
        doc.skins.push(Skin {
            name: "skin".into(),
            skeleton: SkeletonId::new(0),
            mesh: None::<MeshId>,
            joints: joints.iter().map(|&j| BoneId::new(j)).collect(),
            inverse_bind: joints.iter().map(|&j| world[j as usize].inverse()).collect(),
            bind_shape: DMat4::IDENTITY,
            influences: Influences::from_lists(lists),
            ext: Default::default(),
        });
        doc
    }

    #[test]
    fn tails_are_compared_only_where_both_files_store_them() {
        let inferred = arm();
        // The same bones with lengths along their own +Y, as the MPFB writer gives them: tails
        // far from the inferred ones (the children's heads along +X).
        let mut stored = arm();
        for b in &mut stored.skeletons[0].bones {
            b.length = Some(0.25);
        }
        let r = diff(&inferred, &stored, Tolerance::default());
        assert!(r.same, "{r:?}");
        assert_eq!(r.compared, Compared { bones: 3, tails: 0, skins: 0, meshes: 0 });
        // Where both store the length, a changed one is a moved tail.
        let mut longer = stored.clone();
        longer.skeletons[0].bones[2].length = Some(0.4);
        let r = diff(&stored, &longer, Tolerance::default());
        assert!(!r.same);
        assert_eq!(r.compared.tails, 3);
        assert_eq!(r.moved.len(), 1, "{r:?}");
        assert_eq!(r.moved[0].bone, "hand");
        assert!((r.moved[0].tail.unwrap() - 0.15).abs() < 1e-12 && r.moved[0].head == 0.0, "{:?}", r.moved[0]);
    }

    #[test]
    fn a_listed_joint_without_weight_is_a_note_not_a_difference() {
        let a = with_meshless_skin(arm(), &[0, 1], &[]);
        let b = with_meshless_skin(arm(), &[0, 1, 2], &[2]);
        let r = diff(&a, &b, Tolerance::default());
        assert!(r.same, "{r:?}");
        assert_eq!(r.notes.len(), 1, "{r:?}");
        assert!(r.notes[0].contains("joints only in B, with no weight") && r.notes[0].ends_with("hand"), "{}", r.notes[0]);
        // With a weight it moves vertices: a difference.
        let mut c = b.clone();
        c.skins[0].influences = Influences::from_lists(vec![vec![(0, 1.0)], vec![(1, 0.5), (2, 0.5)]]);
        let r = diff(&a, &c, Tolerance::default());
        assert!(!r.same && r.notes.is_empty(), "{r:?}");
        assert!(r.skins.iter().any(|s| s.contains("joints only in B: hand")), "{:?}", r.skins);
    }

    #[test]
    fn the_pose_test_of_meshless_skins_compares_skinning_matrices() {
        let a = with_meshless_skin(arm(), &[0, 1, 2], &[]);
        let p = pose_test(&a, &a.clone(), 20, 1).unwrap();
        assert_eq!((p.vertices, p.joints, p.matrices), (0, 0, 3));
        assert_eq!(p.max_deviation, 0.0);
        // An output whose hand turned 7.1° about its head while its bind stayed: the hand's
        // skinning matrix turns too, and points 0.1 m from the head move 0.1 · 2 sin(3.55°).
        let mut turned = a.clone();
        let hand = &mut turned.skeletons[0].bones[2].rest;
        hand.rotation = DQuat::from_rotation_z(7.1f64.to_radians()) * hand.rotation;
        let p = pose_test(&a, &turned, 20, 1).unwrap();
        assert_eq!(p.matrices, 3);
        let chord = MATRIX_PROBE_M * 2.0 * (3.55f64.to_radians()).sin();
        assert!((p.max_deviation - chord).abs() < 1e-9, "{} vs {chord}", p.max_deviation);
    }

    #[test]
    fn a_pose_test_that_compares_nothing_fails() {
        let empty = Document::new(Frame::GLTF);
        let e = pose_test(&empty, &empty, 20, 1).unwrap_err();
        assert!(format!("{e:#}").contains("compared nothing"), "{e:#}");
        let a = with_meshless_skin(arm(), &[0, 1, 2], &[]);
        assert!(pose_test(&a, &a, 0, 1).is_err());
        // Skins with no joint name in common and no vertices.
        let mut other = a.clone();
        for b in &mut other.skeletons[0].bones {
            b.name.insert_str(0, "x_");
        }
        assert!(pose_test(&a, &other, 20, 1).is_err());
    }

    /// A plain mesh (no bones, no skin): its vertices are compared, and a document with nothing
    /// in common is not "same".
    #[test]
    fn plain_meshes_are_compared_and_nothing_compared_is_not_same() {
        let mut a = Document::new(Frame::GLTF);
        let mut m = skelport_ir::Mesh { name: "body".into(), ..Default::default() };
        m.positions = vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::ONE];
        m.faces = skelport_ir::Faces { counts: vec![4], indices: vec![0, 1, 3, 2] };
        a.meshes.push(m);
        let r = diff(&a, &a.clone(), Tolerance::default());
        assert!(r.same, "{r:?}");
        assert_eq!(r.compared, Compared { bones: 0, tails: 0, skins: 0, meshes: 1 });
        // The same quad as two triangles, in another frame (Blender's: +Z up): alike.
        let mut tri = a.clone();
        tri.meshes[0].faces = skelport_ir::Faces { counts: vec![3, 3], indices: vec![0, 1, 3, 0, 3, 2] };
        tri.convert_frame(Frame::BLENDER);
        assert!(diff(&a, &tri, Tolerance::default()).same);
        // A vertex moved 1 cm.
        let mut moved = a.clone();
        moved.meshes[0].positions[3].y += 0.01;
        let r = diff(&a, &moved, Tolerance::default());
        assert!(!r.same && r.meshes.len() == 1 && r.meshes[0].contains("1 vertices moved (worst: vertex 3"), "{r:?}");
        // A mesh lost.
        let r = diff(&a, &Document::new(Frame::GLTF), Tolerance::default());
        assert!(!r.same && r.meshes == ["A has 1 meshes, B has 0"], "{r:?}");
        // Nothing at all to compare.
        let empty = Document::new(Frame::GLTF);
        let r = diff(&empty, &empty, Tolerance::default());
        assert!(!r.same && r.compared.nothing() && r.notes.iter().any(|n| n.contains("nothing was compared")), "{r:?}");
    }
}
