//! Algorithms several formats share: the parents-first walk over a parent array, Blender's
//! bone-orientation math, tail inference, mesh attribute helpers (smooth normals, splitting
//! vertices at seams) and the canonical report view used by `inspect`, `diff` and `render`.

use crate::document::{Attribute, Document, Faces, Skeleton, Transform};
use crate::frame::Frame;
use crate::skin::Skin;
use glam::{DMat3, DMat4, DQuat, DVec3};
use serde::Serialize;

/// The children of every node of a parent array, in index order; a parent out of range counts
/// as none.
pub fn children_of(parents: &[Option<usize>]) -> Vec<Vec<usize>> {
    let mut children = vec![Vec::new(); parents.len()];
    for (i, p) in parents.iter().enumerate() {
        if let Some(p) = p.filter(|&p| p < parents.len()) {
            children[p].push(i);
        }
    }
    children
}

/// Depth-first pre-order of the nodes under `roots` (in that order), children in index order:
/// every parent before its children. Iterative, so a 65,535-deep chain is fine.
pub fn preorder_from(children: &[Vec<usize>], roots: impl IntoIterator<Item = usize>) -> Vec<usize> {
    preorder_where(children, roots, |_| true)
}

/// Depth-first pre-order of the nodes under `roots` (in that order), children in list order,
/// entering a child only when `keep(child)` holds (the roots are always entered; a child not
/// kept is skipped with everything below it). Iterative. Each node is entered once, and a root
/// past `children` not at all: a root on a parent cycle (an AnvilToolkit addon's `RootBone` may
/// name any bone) ends the walk instead of looping.
pub fn preorder_where(children: &[Vec<usize>], roots: impl IntoIterator<Item = usize>, keep: impl Fn(usize) -> bool) -> Vec<usize> {
    let mut order = Vec::with_capacity(children.len());
    let mut entered = vec![false; children.len()];
    let mut stack: Vec<usize> = roots.into_iter().collect();
    stack.reverse();
    while let Some(i) = stack.pop() {
        if entered.get(i).is_none_or(|&e| e) {
            continue;
        }
        entered[i] = true;
        order.push(i);
        stack.extend(children[i].iter().rev().copied().filter(|&c| keep(c)));
    }
    order
}

/// One step of [`walk_from`]: a node is entered before its children and left after them, with
/// its depth (roots 0). Writers of nested formats (a Collada `<node>` tree) open on `Enter` and
/// close on `Leave`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Entering `node` at `depth`; its children follow.
    Enter { node: usize, depth: usize },
    /// Leaving `node` (at `depth`): all its children were entered and left.
    Leave { node: usize, depth: usize },
}

/// Walk the trees under `roots` (in that order) depth first, children in list order, calling
/// `visit` on entering and on leaving each node: the `Enter` steps are [`preorder_from`]'s order.
/// Iterative (an explicit stack), so a 65,535-deep chain is fine. Each node is entered once, as
/// in [`preorder_where`].
pub fn walk_from(children: &[Vec<usize>], roots: impl IntoIterator<Item = usize>, mut visit: impl FnMut(Step)) {
    let mut entered = vec![false; children.len()];
    let mut stack: Vec<Step> = roots.into_iter().map(|r| Step::Enter { node: r, depth: 0 }).collect();
    stack.reverse();
    while let Some(step) = stack.pop() {
        match step {
            Step::Enter { node, .. } if entered.get(node).is_none_or(|&e| e) => {}
            Step::Enter { node, depth } => {
                entered[node] = true;
                visit(step);
                stack.push(Step::Leave { node, depth });
                stack.extend(children[node].iter().rev().map(|&c| Step::Enter { node: c, depth: depth + 1 }));
            }
            Step::Leave { .. } => visit(step),
        }
    }
}

/// Every node of a parent array parents first: a depth-first pre-order from the roots (nodes
/// without a parent, or with one out of range) in index order, children in index order.
/// `Err(i)`: node `i` lies on a parent cycle (no root reaches it).
pub fn parents_first(parents: &[Option<usize>]) -> Result<Vec<usize>, usize> {
    let n = parents.len();
    let roots = (0..n).filter(|&i| parents[i].is_none_or(|p| p >= n));
    let order = preorder_from(&children_of(parents), roots);
    if order.len() == n {
        return Ok(order);
    }
    let mut seen = vec![false; n];
    order.iter().for_each(|&i| seen[i] = true);
    Err(seen.iter().position(|s| !s).unwrap_or(0))
}

/// Blender's `vec_roll_to_mat3_normalized` (Blender ≥ 2.93 thresholds), in f64: the rest
/// orientation of a bone whose unit head→tail direction is `nor`, with `roll` radians about it.
/// Column 1 (local +Y) is `nor`.
pub fn vec_roll_to_mat3(nor: DVec3, roll: f64) -> DMat3 {
    // Thresholds as Blender defines them (float32 there): theta above SAFE has enough
    // precision; below CRITICAL² in the XZ plane the direction is treated as exactly -Y.
    const SAFE_THRESHOLD: f64 = 6.1e-3;
    const CRITICAL_THRESHOLD: f64 = 2.5e-4;
    const THRESHOLD_SQUARED: f64 = CRITICAL_THRESHOLD * CRITICAL_THRESHOLD;
    let (x, y, z) = (nor.x, nor.y, nor.z);
    let mut theta = 1.0 + y;
    let theta_alt = x * x + z * z;
    let b = if theta > SAFE_THRESHOLD || theta_alt > THRESHOLD_SQUARED {
        if theta <= SAFE_THRESHOLD {
            theta = theta_alt * 0.5 + theta_alt * theta_alt * 0.125;
        }
        DMat3::from_cols(
            DVec3::new(1.0 - x * x / theta, -x, -x * z / theta),
            DVec3::new(x, y, z),
            DVec3::new(-x * z / theta, -z, 1.0 - z * z / theta),
        )
    } else {
        DMat3::from_cols(DVec3::new(-1.0, 0.0, 0.0), DVec3::new(0.0, -1.0, 0.0), DVec3::new(0.0, 0.0, 1.0))
    };
    let r = DMat3::from_axis_angle(nor, roll);
    r * b
}

/// Blender's `mat3_vec_to_roll`: the roll that, with direction `nor`, gives orientation `m`.
/// As Blender computes it: `R = vec_roll_to_mat3(nor, 0)⁻¹ · m` is (for `m` whose +Y is `nor`)
/// a turn about Y, and the roll is its angle, `atan2(R[2][0], R[2][2])` (column 2's X and Z), in
/// [-π, π].
pub fn mat3_to_roll(m: &DMat3, nor: DVec3) -> f64 {
    // The inverse, not the transpose: near −Y Blender's base matrix is not quite orthonormal.
    let rel = vec_roll_to_mat3(nor, 0.0).inverse() * *m;
    rel.z_axis.x.atan2(rel.z_axis.z)
}

/// Blender's `mat3_to_vec_roll`, the inverse of [`vec_roll_to_mat3`]: the direction of a bone
/// with orientation `m` (its local +Y, column 1) and the roll that rebuilds `m` from it. With
/// `tail = head + direction × length`, an edit bone (head, tail, roll) holds any rotation whose
/// +Y is not within Blender's snapping distance of −Y (see [`vec_roll_to_mat3`]).
pub fn mat3_to_vec_roll(m: &DMat3) -> (DVec3, f64) {
    let nor = m.y_axis.normalize_or_zero();
    (nor, mat3_to_roll(m, nor))
}

/// World rest orientation and length of a bone from its head, tail and roll (Blender rules).
/// A zero-length bone gets the identity orientation.
pub fn bone_from_head_tail(head: DVec3, tail: DVec3, roll: f64) -> (DQuat, f64) {
    let d = tail - head;
    let len = d.length();
    if len <= 0.0 || !len.is_finite() {
        return (DQuat::IDENTITY, 0.0);
    }
    let m = vec_roll_to_mat3(d / len, roll);
    (DQuat::from_mat3(&m).normalize(), len)
}

/// Length used for leaf bones that have no tail, as a fraction of the distance to the parent's
/// head (see docs/ir.md).
pub const LEAF_LENGTH_FRACTION: f64 = 0.5;
/// Length of a lone root with no children and no tail, in metres.
pub const LONE_ROOT_LENGTH_M: f64 = 0.1;

/// World-space tail of every bone: from `length` where the bone has one, else inferred: the
/// mean of the children's heads (ignoring children at the bone's own head), else half the
/// distance from the parent's head continued past this head, else 0.1 m up the bone's +Y.
pub fn tails(sk: &Skeleton, world: &[Transform], metres_per_unit: f64) -> Vec<DVec3> {
    let children = sk.children();
    let mut out = Vec::with_capacity(sk.bones.len());
    for (i, b) in sk.bones.iter().enumerate() {
        let w = &world[i];
        let head = w.translation;
        if let Some(l) = b.length {
            out.push(head + w.rotation * DVec3::new(0.0, l * w.scale.y, 0.0));
            continue;
        }
        let heads: Vec<DVec3> = children[i].iter().map(|c| world[c.index()].translation).filter(|h| h.distance(head) > 1e-9).collect();
        if !heads.is_empty() {
            out.push(heads.iter().copied().sum::<DVec3>() / heads.len() as f64);
            continue;
        }
        if let Some(p) = b.parent {
            let d = head - world[p.index()].translation;
            if d.length() > 1e-9 {
                out.push(head + d * LEAF_LENGTH_FRACTION);
                continue;
            }
        }
        out.push(head + w.rotation * DVec3::new(0.0, LONE_ROOT_LENGTH_M / metres_per_unit, 0.0));
    }
    out
}

/// Smooth vertex normals: each face's normal, weighted by its area, summed at the face's
/// vertices and normalized (Newell's method, so a non-planar polygon counts by its projected
/// area). Vertices are kept apart as the source numbers them: two vertices at one position (a
/// seam the source split) each get the normals of their own faces only, while per-corner data
/// (UV seams) plays no part, so the shading stays smooth across UV seams. A vertex that no face
/// of non-zero area uses gets `DVec3::ZERO`; the caller picks a fallback. Corners naming a
/// vertex past `positions` are skipped.
///
/// Writers call it when a mesh has no normals and their format wants them (glTF and G4MF draw a
/// mesh without normals faceted), and say so in a note.
pub fn smooth_normals(positions: &[DVec3], faces: &Faces) -> Vec<DVec3> {
    let mut sum = vec![DVec3::ZERO; positions.len()];
    let at = |v: u32| positions.get(v as usize).copied();
    for f in faces.iter() {
        // Newell: Σ (p_i × p_{i+1}) is twice the area times the unit normal. Relative to the
        // first corner, so large coordinates do not cancel.
        let Some(&first) = f.first() else { continue };
        let Some(o) = at(first) else { continue };
        let mut n = DVec3::ZERO;
        for k in 1..f.len().saturating_sub(1) {
            if let (Some(a), Some(b)) = (at(f[k]), at(f[k + 1])) {
                n += (a - o).cross(b - o);
            }
        }
        if !n.is_finite() {
            continue;
        }
        for &v in f {
            if let Some(s) = sum.get_mut(v as usize) {
                *s += n;
            }
        }
    }
    for s in &mut sum {
        *s = s.normalize_or_zero();
    }
    sum
}

/// Flat normals: each corner gets the unit normal of its own face (`ZERO` for a face of no
/// area), in corner order. What a format that means "no normals: flat shading" (G4MF) holds.
pub fn flat_corner_normals(positions: &[DVec3], faces: &Faces) -> Vec<DVec3> {
    let mut out = Vec::with_capacity(faces.indices.len());
    let at = |v: u32| positions.get(v as usize).copied().unwrap_or(DVec3::ZERO);
    for f in faces.iter() {
        let o = f.first().map_or(DVec3::ZERO, |&v| at(v));
        let mut n = DVec3::ZERO;
        for k in 1..f.len().saturating_sub(1) {
            n += (at(f[k]) - o).cross(at(f[k + 1]) - o);
        }
        out.extend(std::iter::repeat_n(n.normalize_or_zero(), f.len()));
    }
    out
}

/// "No corner": an output vertex of a [`VertexSplit`] that no face uses.
pub const NO_CORNER: u32 = u32::MAX;

/// Vertices split where their corners' per-corner values differ, for formats that store every
/// attribute per vertex (glTF, G4MF's per-vertex data): what [`split_vertices`] returns.
///
/// Output vertices `0..n` are the source's own `n` vertices, in their numbering; the copies
/// made at seams follow, `n + k` being a copy of source vertex `extra[k]`. A copy carries its
/// source vertex's position and skin influences and the per-corner values of `corner_of`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct VertexSplit {
    /// The output vertex of each corner, in `Faces::indices` order.
    pub corner_vertex: Vec<u32>,
    /// The source vertex of each copy (output vertex `n + k` copies `extra[k]`).
    pub extra: Vec<u32>,
    /// One corner of each output vertex, where its per-corner values are read ([`NO_CORNER`]
    /// for a source vertex no face uses).
    pub corner_of: Vec<u32>,
}

impl VertexSplit {
    /// Number of output vertices (source vertices plus copies).
    pub fn len(&self) -> usize {
        self.corner_of.len()
    }

    /// True when there are no output vertices.
    pub fn is_empty(&self) -> bool {
        self.corner_of.is_empty()
    }

    /// The source vertex of output vertex `o`.
    #[inline]
    pub fn source(&self, o: usize) -> usize {
        let n = self.corner_of.len() - self.extra.len();
        if o < n {
            o
        } else {
            self.extra[o - n] as usize
        }
    }

    /// Per-vertex values for the output vertices: a per-vertex attribute copied to each copy, a
    /// per-corner one read at each output vertex's corner (`missing` where no face uses it).
    pub fn values<T: Copy>(&self, attr: &Attribute<T>, missing: T) -> Vec<T> {
        match attr {
            Attribute::PerVertex(v) => (0..self.len()).map(|o| v.get(self.source(o)).copied().unwrap_or(missing)).collect(),
            Attribute::PerCorner(c) => self
                .corner_of
                .iter()
                .map(|&k| if k == NO_CORNER { missing } else { c.get(k as usize).copied().unwrap_or(missing) })
                .collect(),
        }
    }
}

/// Split `n` vertices so that every corner of an output vertex has the same per-corner values:
/// `same(a, b)` tells whether corners `a` and `b` (of one source vertex) carry the same values.
/// A vertex whose corners all agree stays one vertex under its own number; each other distinct
/// set of values gets one copy, appended. `corners` are the faces' vertex indices; indices past
/// `n` are left as they are (the caller has validated the mesh).
///
/// One pass over the corners, comparing each with the vertex's copies so far (a chain per
/// vertex, usually one or two long), and no allocation per vertex.
pub fn split_vertices(n: usize, corners: &[u32], same: impl Fn(usize, usize) -> bool) -> VertexSplit {
    let mut corner_of = vec![NO_CORNER; n];
    // The next copy of the same source vertex, chained from the vertex itself.
    let mut next = vec![NO_CORNER; n];
    let mut extra = Vec::new();
    let mut corner_vertex = Vec::with_capacity(corners.len());
    for (c, &v) in corners.iter().enumerate() {
        let mut o = v as usize;
        if o >= n {
            corner_vertex.push(v);
            continue;
        }
        loop {
            let k = corner_of[o];
            if k == NO_CORNER {
                corner_of[o] = c as u32;
                break;
            }
            if same(k as usize, c) {
                break;
            }
            if next[o] == NO_CORNER {
                let copy = corner_of.len();
                next[o] = copy as u32;
                corner_of.push(c as u32);
                next.push(NO_CORNER);
                extra.push(v);
                o = copy;
                break;
            }
            o = next[o] as usize;
        }
        corner_vertex.push(o as u32);
    }
    VertexSplit { corner_vertex, extra, corner_of }
}

/// Per-corner values stored per vertex when every corner of each vertex has the same value
/// (vertices no face uses get `missing`); per corner otherwise. Readers use it so that a mesh
/// without seams gets the lighter form.
pub fn per_vertex_if_uniform<T: Copy + PartialEq>(n: usize, corners: &[u32], values: Vec<T>, missing: T) -> Attribute<T> {
    if values.len() != corners.len() {
        return Attribute::PerCorner(values);
    }
    let mut per_vertex = vec![missing; n];
    let mut seen = vec![false; n];
    for (&v, &x) in corners.iter().zip(&values) {
        let Some(slot) = per_vertex.get_mut(v as usize) else { return Attribute::PerCorner(values) };
        if seen[v as usize] {
            if *slot != x {
                return Attribute::PerCorner(values);
            }
        } else {
            *slot = x;
            seen[v as usize] = true;
        }
    }
    Attribute::PerVertex(per_vertex)
}

/// One bone as reports show it, in the report frame.
#[derive(Debug, Clone, Serialize)]
pub struct ReportBone {
    pub name: String,
    pub parent: Option<String>,
    pub head: [f64; 3],
    pub tail: [f64; 3],
    /// World rest orientation (x, y, z, w).
    pub rotation: [f64; 4],
    /// Where the skin binds this joint: the translation of the inverse of its inverse bind matrix
    /// (the first skin that uses the bone). Equal to `head` when the mesh was bound in the rest
    /// pose; Blender's importers build their rest (edit-bone) pose from it. `None` for bones no
    /// skin uses.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_head: Option<[f64; 3]>,
    /// The whole bind matrix (inverse of the inverse bind matrix), column-major as glTF stores
    /// matrices: the bind can carry a rotation or scale the rest does not (Linden's female shape).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bind_matrix: Option<[f64; 16]>,
}

/// A skeleton as reports show it.
#[derive(Debug, Clone, Serialize)]
pub struct ReportSkeleton {
    pub name: String,
    pub bones: Vec<ReportBone>,
}

/// The document's skeletons in the report frame (glTF's: +Y up, +Z forward, metres).
pub fn report_skeletons(doc: &Document) -> Vec<ReportSkeleton> {
    // Only what the report reads is converted: skins without their weights.
    let skins = doc
        .skins
        .iter()
        .map(|s| Skin {
            name: String::new(),
            skeleton: s.skeleton,
            mesh: None,
            joints: s.joints.clone(),
            inverse_bind: s.inverse_bind.clone(),
            bind_shape: DMat4::IDENTITY,
            influences: Default::default(),
            ext: Default::default(),
        })
        .collect();
    let mut d = Document { skeletons: doc.skeletons.clone(), skins, ..Document::new(doc.frame) };
    d.convert_frame(Frame::REPORT);
    let skins_by_skeleton = d.skins_by_skeleton();
    d.skeletons
        .iter()
        .enumerate()
        .map(|(si, sk)| {
            let world = sk.world_transforms();
            let tails = tails(sk, &world, 1.0);
            let mut bind: Vec<Option<DMat4>> = vec![None; sk.bones.len()];
            for s in skins_by_skeleton[si].iter().map(|&k| &d.skins[k]) {
                for (j, ibm) in s.joints.iter().zip(&s.inverse_bind) {
                    if let Some(slot @ None) = bind.get_mut(j.index()) {
                        let m = ibm.inverse();
                        *slot = m.is_finite().then_some(m);
                    }
                }
            }
            ReportSkeleton {
                name: sk.name.clone(),
                bones: sk
                    .bones
                    .iter()
                    .enumerate()
                    .map(|(i, b)| ReportBone {
                        name: b.name.clone(),
                        parent: b.parent.and_then(|p| sk.bones.get(p.index())).map(|p| p.name.clone()),
                        head: clean(world[i].translation.to_array()),
                        tail: clean(tails[i].to_array()),
                        rotation: clean(world[i].rotation.to_array()),
                        bind_head: bind[i].map(|m| clean(m.w_axis.truncate().to_array())),
                        bind_matrix: bind[i].map(|m| clean(m.to_cols_array())),
                    })
                    .collect(),
            }
        })
        .collect()
}

/// Turn `-0.0` into `0.0` so reports do not show signed zeros.
fn clean<const N: usize>(mut a: [f64; N]) -> [f64; N] {
    for v in &mut a {
        *v += 0.0;
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walk_enters_in_preorder_and_leaves_after_the_children() {
        // 0 ← 2 ← 1, 3 a root, 4 under 0.
        let children = children_of(&[None, Some(2), Some(0), None, Some(0)]);
        let mut steps = Vec::new();
        walk_from(&children, [0, 3], |s| steps.push(s));
        use Step::{Enter as E, Leave as L};
        assert_eq!(
            steps,
            [
                E { node: 0, depth: 0 },
                E { node: 2, depth: 1 },
                E { node: 1, depth: 2 },
                L { node: 1, depth: 2 },
                L { node: 2, depth: 1 },
                E { node: 4, depth: 1 },
                L { node: 4, depth: 1 },
                L { node: 0, depth: 0 },
                E { node: 3, depth: 0 },
                L { node: 3, depth: 0 },
            ]
        );
        let entered: Vec<usize> = steps.iter().filter_map(|s| if let E { node, .. } = s { Some(*node) } else { None }).collect();
        assert_eq!(entered, preorder_from(&children, [0, 3]));
        // A filtered pre-order skips a child with its subtree; a root is always entered.
        assert_eq!(preorder_where(&children, [0, 3], |c| c != 2), [0, 4, 3]);
        assert_eq!(preorder_where(&children, [2], |c| c != 2), [2, 1]);
        // 65,535 deep: no recursion.
        let n: usize = 65_535;
        let chain = children_of(&(0..n).map(|i| i.checked_sub(1)).collect::<Vec<_>>());
        let mut deepest = 0;
        walk_from(&chain, [0], |s| {
            if let E { depth, .. } = s {
                deepest = deepest.max(depth)
            }
        });
        assert_eq!(deepest, n - 1);
    }

    #[test]
    fn walks_from_a_root_on_a_cycle_end() {
        // 0 its own parent; 1 ← 2 ← 1 with 3 under 2; roots given twice and out of range.
        let children = children_of(&[Some(0), Some(2), Some(1), Some(2)]);
        assert_eq!(preorder_from(&children, [0]), [0]);
        assert_eq!(preorder_from(&children, [1, 0, 1, 9]), [1, 2, 3, 0]);
        let mut steps = Vec::new();
        walk_from(&children, [2, 7], |s| steps.push(s));
        use Step::{Enter as E, Leave as L};
        assert_eq!(
            steps,
            [
                E { node: 2, depth: 0 },
                E { node: 1, depth: 1 },
                L { node: 1, depth: 1 },
                E { node: 3, depth: 1 },
                L { node: 3, depth: 1 },
                L { node: 2, depth: 0 }
            ]
        );
    }

    #[test]
    fn parents_first_walks_depth_first_and_names_a_bone_on_a_cycle() {
        // 0 ← 2 ← 1, 3 a root, 4 under 0: pre-order 0, 2, 1, 4, 3.
        let parents = [None, Some(2), Some(0), None, Some(0)];
        assert_eq!(parents_first(&parents), Ok(vec![0, 2, 1, 4, 3]));
        // A parent out of range is a root.
        assert_eq!(parents_first(&[Some(9), Some(0)]), Ok(vec![0, 1]));
        // 1 and 2 point at each other: no root reaches them.
        assert_eq!(parents_first(&[None, Some(2), Some(1)]), Err(1));
        // A 65,535-deep chain given children first.
        let n = 65_535;
        let chain: Vec<Option<usize>> = (0..n).map(|i| (i + 1 < n).then_some(i + 1)).collect();
        let order = parents_first(&chain).unwrap();
        assert_eq!(order.first(), Some(&(n - 1)));
        assert_eq!(order.last(), Some(&0));
    }

    #[test]
    fn report_gives_the_bind_of_skinned_joints_in_the_report_frame() {
        // Blender frame (Z up): bound 2 cm lower than the rest; `tip` is in no skin.
        use crate::document::{Bone, BoneId};
        let mut sk = Skeleton::new("s");
        sk.push(Bone::new("root", None, Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.0, 1.0))));
        sk.push(Bone::new("tip", Some(BoneId::new(0)), Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.0, 0.5))));
        let ib = (DMat4::from_translation(DVec3::new(0.0, 0.0, -0.02)) * sk.world_matrices()[0]).inverse();
        let mut doc = Document::new(Frame::BLENDER);
        doc.skeletons.push(sk);
        doc.skins.push(Skin {
            name: "k".into(),
            skeleton: crate::SkeletonId::new(0),
            mesh: None,
            joints: vec![BoneId::new(0)],
            inverse_bind: vec![ib],
            bind_shape: DMat4::IDENTITY,
            influences: Default::default(),
            ext: Default::default(),
        });
        let r = &report_skeletons(&doc)[0];
        let (root, tip) = (&r.bones[0], &r.bones[1]);
        assert!((DVec3::from_array(root.head) - DVec3::new(0.0, 1.0, 0.0)).length() < 1e-12);
        let bind = DVec3::from_array(root.bind_head.expect("root is skinned"));
        assert!((bind - DVec3::new(0.0, 0.98, 0.0)).length() < 1e-12, "{bind}");
        let m = root.bind_matrix.expect("with bind_head");
        assert_eq!(DVec3::new(m[12], m[13], m[14]), bind);
        assert!(tip.bind_head.is_none() && tip.bind_matrix.is_none());
    }

    #[test]
    fn roll_zero_along_z_matches_blender() {
        // A bone pointing up (+Z) with roll 0 in Blender has local X = world X, local Z = world -Y.
        let m = vec_roll_to_mat3(DVec3::Z, 0.0);
        assert!((m.x_axis - DVec3::X).length() < 1e-12);
        assert!((m.y_axis - DVec3::Z).length() < 1e-12);
        assert!((m.z_axis - DVec3::NEG_Y).length() < 1e-12);
    }

    #[test]
    fn any_rotation_round_trips_through_direction_and_roll() {
        let mut next = crate::testing::xorshift(0x5eed);
        let mut unit = move || (next() >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        for k in 0..5000 {
            let q = DQuat::from_xyzw(unit(), unit(), unit(), unit()).normalize();
            // Every 50th: a bone straight down −Y or just off it (Blender's special case).
            let q = match k % 50 {
                0 => DQuat::from_rotation_x(std::f64::consts::PI) * DQuat::from_rotation_y(unit() * 3.0),
                1 => DQuat::from_rotation_z(0.01 * unit()) * DQuat::from_rotation_x(std::f64::consts::PI),
                _ => q,
            };
            let m = DMat3::from_quat(q);
            let (nor, roll) = mat3_to_vec_roll(&m);
            let back = DQuat::from_mat3(&vec_roll_to_mat3(nor, roll)).normalize();
            let d = q.inverse() * back;
            let turn = 2.0 * d.xyz().length().atan2(d.w.abs());
            // Within 2.5e-4 of −Y Blender snaps the direction to −Y (so the bone turns by up to
            // that); within ~6° its base matrix uses a series for 1 + y and is orthonormal only
            // to ~3e-5; elsewhere the round trip is exact to rounding.
            let tol = match nor.x * nor.x + nor.z * nor.z {
                a if nor.y < 0.0 && a <= 2.5e-4 * 2.5e-4 => 2.5e-4,
                _ if nor.y < -0.99 => 5e-5,
                _ => 1e-9,
            };
            assert!(turn < tol, "{k}: {q} → dir {nor} roll {roll} → {back}: {turn} rad");
        }
    }

    #[test]
    fn roll_round_trips() {
        for &(d, r) in &[(DVec3::new(0.3, -0.2, 0.9), 0.7), (DVec3::new(-1.0, 0.0, 0.0), -2.0), (DVec3::new(0.0, 1.0, 0.0), 1.0)] {
            let n = d.normalize();
            let m = vec_roll_to_mat3(n, r);
            assert!((mat3_to_roll(&m, n) - r).abs() < 1e-9);
        }
    }

    #[test]
    fn near_negative_y_is_a_symmetry() {
        let m = vec_roll_to_mat3(DVec3::NEG_Y, 0.0);
        assert!((m.x_axis - DVec3::NEG_X).length() < 1e-12);
        assert!((m.y_axis - DVec3::NEG_Y).length() < 1e-12);
    }
}
