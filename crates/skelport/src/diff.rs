//! `skelport diff`: a semantic comparison of two documents in the report frame. Bones are matched
//! by name; positions, orientations, hierarchy and skins are compared within tolerances.

use serde::Serialize;
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
    /// Compare orientations; `false` where B's format re-derives them (Second Life Collada:
    /// [`as_converted`]), so a turned bone is no difference.
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
    /// A was put in its T-pose, as the target's writer does (VRM).
    pub t_pose: bool,
    /// Orientations are compared (`false` where the target re-derives them).
    pub orientations: bool,
}

impl AsConverted {
    /// One line: what A was compared as (`as a conversion to vrm: T-pose, orientations
    /// compared`).
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(m) = &self.map {
            parts.push(format!("map {m}"));
        }
        if self.t_pose {
            parts.push("A in its T-pose, as the writer makes it".to_owned());
        }
        parts.push(if self.orientations {
            "orientations compared".to_owned()
        } else {
            format!("orientations not compared ({} re-derives them)", self.target)
        });
        format!("as a conversion to {}: {}", self.target, parts.join(", "))
    }
}

/// Make A what a conversion of it to `target` (B's format) starts from, so that "did my
/// conversion keep the rig?" has its answer: `map` renames A's bones as `convert --map` does
/// (a built-in map, a map file, or `humanoid`: the target's own names), a target whose writer
/// makes its own rest pose (VRM's T-pose) has A put in that pose, and orientations are compared
/// only where the target keeps them exactly (`Holds::orientations`). Returns what was done and
/// the [`Tolerance::orientations`] to use.
pub fn as_converted(
    a: &mut Document,
    target: &'static dyn skelport_ir::Format,
    map: Option<&str>,
    diags: &mut skelport_ir::Diagnostics,
) -> anyhow::Result<AsConverted> {
    let mut done = AsConverted { target: target.name().to_owned(), orientations: true, ..Default::default() };
    if let Some(m) = map {
        let map = if m == crate::maps::HUMANOID { crate::maps::humanoid_for(a, target)? } else { crate::maps::load(m)? };
        crate::retarget(a, &map, diags)?;
        done.map = Some(m.to_owned());
    }
    if target.applies_rest_pose() {
        skelport_vrm::t_pose(a, None, diags)?;
        done.t_pose = true;
    }
    done.orientations = target.holds().orientations;
    Ok(done)
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
    /// Tail distance in metres.
    pub tail: f64,
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
    /// Largest head distance over matched bones, metres.
    pub max_head_distance: f64,
    /// The skinning comparison, when asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pose_test: Option<PoseTest>,
    /// What A was compared as, when B is in another format ([`as_converted`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub compared_as: Option<AsConverted>,
}

/// Result of posing two documents alike and comparing their skinned vertices (or, for
/// skeleton-only files, their posed joints).
#[derive(Debug, Serialize, Clone)]
pub struct PoseTest {
    /// Random poses compared.
    pub poses: usize,
    /// Skinned vertices compared per pose (over every skin); 0 for skeleton-only files.
    pub vertices: usize,
    /// Posed joint heads compared per pose (skeleton-only files); 0 when vertices are compared.
    pub joints: usize,
    /// Largest vertex (or joint) distance over all poses, metres (report frame).
    pub max_deviation: f64,
}

/// Pose A and B with the same `poses` random rotations (by bone name, up to 0.6 rad each) and
/// compare the linear-blend-skinned vertices of every skin (skins paired by order). When neither
/// file has a skin, compare the posed world positions of the joints both have.
pub fn pose_test(a: &Document, b: &Document, poses: usize, seed: u64) -> anyhow::Result<PoseTest> {
    use skelport_ir::pose::{deform_all, in_report_frame, max_deviation, posed_heads, random_pose};
    // Converted once: every pose below borrows them.
    let (a, b) = (&*in_report_frame(a), &*in_report_frame(b));
    let names: Vec<&str> = a.skeletons.iter().flat_map(|s| s.bones.iter().map(|b| b.name.as_str())).collect();
    let mut worst = 0.0f64;
    let (mut vertices, mut joints) = (0, 0);
    match (a.skins.is_empty(), b.skins.is_empty()) {
        (false, false) => anyhow::ensure!(
            a.skins.len() == b.skins.len(),
            "the files have different numbers of skins ({} vs {}); the pose test pairs skins by order",
            a.skins.len(),
            b.skins.len()
        ),
        (true, true) => {}
        _ => anyhow::bail!("--pose-test needs a skinned mesh in both files, or in neither (then joints are compared)"),
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
            anyhow::ensure!(joints > 0, "the files have no bone names in common");
            continue;
        }
        let (da, db) = (deform_all(a, &pose), deform_all(b, &pose));
        vertices = 0;
        for (k, (va, vb)) in da.iter().zip(&db).enumerate() {
            vertices += va.len();
            let d = max_deviation(va, vb)
                .ok_or_else(|| anyhow::anyhow!("skin {k}: the skinned meshes differ in vertex count ({} vs {})", va.len(), vb.len()))?;
            worst = worst.max(d);
        }
    }
    Ok(PoseTest { poses, vertices, joints, max_deviation: worst })
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
    let mut r = DiffReport::default();
    for ba in &bones_a {
        let Some(bb) = map_b.get(ba.name.as_str()) else {
            r.removed.push(ba.name.clone());
            continue;
        };
        if ba.parent != bb.parent {
            r.reparented.push(Reparented { bone: ba.name.clone(), from: ba.parent.clone(), to: bb.parent.clone() });
        }
        let head = DVec3::from_array(ba.head).distance(DVec3::from_array(bb.head));
        let tail = DVec3::from_array(ba.tail).distance(DVec3::from_array(bb.tail));
        r.max_head_distance = r.max_head_distance.max(head);
        if head > tol.metres || tail > tol.metres {
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
        compare_skins(a, sa, b, sb, k, tol, &mut r.skins);
    }
    r.same = r.added.is_empty()
        && r.removed.is_empty()
        && r.reparented.is_empty()
        && r.moved.is_empty()
        && r.rotated.is_empty()
        && r.skins.is_empty();
    r
}

fn joint_names(doc: &Document, s: &skelport_ir::Skin) -> Vec<String> {
    let sk = doc.get_skeleton(s.skeleton);
    s.joints.iter().map(|j| sk.and_then(|k| k.bones.get(j.index())).map(|b| b.name.clone()).unwrap_or_default()).collect()
}

fn compare_skins(
    a: &Document,
    sa: &skelport_ir::Skin,
    b: &Document,
    sb: &skelport_ir::Skin,
    k: usize,
    tol: Tolerance,
    out: &mut Vec<String>,
) {
    if sa.vertex_count() != sb.vertex_count() {
        out.push(format!("skin {k}: {} vertices in A, {} in B", sa.vertex_count(), sb.vertex_count()));
        return;
    }
    let (na, nb) = (joint_names(a, sa), joint_names(b, sb));
    let only_a: Vec<_> = na.iter().filter(|n| !nb.contains(n)).cloned().collect();
    let only_b: Vec<_> = nb.iter().filter(|n| !na.contains(n)).cloned().collect();
    if !only_a.is_empty() {
        out.push(format!("skin {k}: joints only in A: {}", only_a.join(", ")));
    }
    if !only_b.is_empty() {
        out.push(format!("skin {k}: joints only in B: {}", only_b.join(", ")));
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
pub fn sl_avatar(path: Option<&std::path::Path>) -> anyhow::Result<Document> {
    let sl = match path {
        Some(p) => std::borrow::Cow::Owned(skelport_sl::SlSkeleton::from_file(p)?),
        None => std::borrow::Cow::Borrowed(skelport_sl::SlSkeleton::builtin()),
    };
    Ok(skelport_sl::skeleton_document(&sl))
}
