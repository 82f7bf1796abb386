//! Skins: sparse per-vertex influences and the operations every converter needs.

use crate::document::{BoneId, MeshId, SkeletonId};
use crate::ext::Extensions;
use glam::DMat4;
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// Sparse influences in compressed-row form: vertex `v`'s entries are
/// `joints[offsets[v]..offsets[v+1]]` / `weights[..]`. A joint value is a *slot* in
/// [`Skin::joints`], not a bone id.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Influences {
    pub offsets: Vec<u32>,
    pub joints: Vec<u32>,
    pub weights: Vec<f64>,
}

impl Default for Influences {
    fn default() -> Self {
        Influences { offsets: vec![0], joints: Vec::new(), weights: Vec::new() }
    }
}

impl Influences {
    /// Empty influences for `vertex_count` vertices.
    pub fn with_vertices(vertex_count: usize) -> Self {
        Influences { offsets: vec![0; vertex_count + 1], joints: Vec::new(), weights: Vec::new() }
    }

    /// Build from per-vertex lists of (joint slot, weight).
    pub fn from_lists<I, L>(lists: I) -> Self
    where
        I: IntoIterator<Item = L>,
        L: IntoIterator<Item = (u32, f64)>,
    {
        let mut out = Influences::default();
        for l in lists {
            for (j, w) in l {
                out.joints.push(j);
                out.weights.push(w);
            }
            out.offsets.push(out.joints.len() as u32);
        }
        out
    }

    /// Build from (vertex, joint slot, weight) triples in any order; entries for the same
    /// (vertex, joint) add up (in the triples' order, into the first one's place). Triples of
    /// vertices past `vertex_count` are dropped.
    ///
    /// A counting sort into the compressed rows (count per vertex, then place): a `Vec` per
    /// vertex cost an allocation for each of a body's tens of thousands of vertices.
    pub fn from_triples(vertex_count: usize, triples: impl IntoIterator<Item = (u32, u32, f64)>) -> Self {
        let triples: Vec<(u32, u32, f64)> = triples.into_iter().filter(|t| (t.0 as usize) < vertex_count).collect();
        let mut offsets = vec![0u32; vertex_count + 1];
        for t in &triples {
            offsets[t.0 as usize + 1] += 1;
        }
        for v in 0..vertex_count {
            offsets[v + 1] += offsets[v];
        }
        let mut fill: Vec<u32> = offsets[..vertex_count].to_vec();
        let mut joints = vec![0u32; triples.len()];
        let mut weights = vec![0f64; triples.len()];
        for &(v, j, w) in &triples {
            let at = &mut fill[v as usize];
            joints[*at as usize] = j;
            weights[*at as usize] = w;
            *at += 1;
        }
        // Merge repeated joints of a vertex, compacting the rows in place.
        let (mut kept, mut b) = (0usize, 0usize);
        for v in 0..vertex_count {
            // offsets[v] already holds the compacted start: the row's own start is the last end.
            let a = b;
            b = offsets[v + 1] as usize;
            let row = kept;
            for k in a..b {
                let (j, w) = (joints[k], weights[k]);
                match (row..kept).find(|&e| joints[e] == j) {
                    Some(e) => weights[e] += w,
                    None => {
                        joints[kept] = j;
                        weights[kept] = w;
                        kept += 1;
                    }
                }
            }
            offsets[v + 1] = kept as u32;
        }
        joints.truncate(kept);
        weights.truncate(kept);
        Influences { offsets, joints, weights }
    }

    /// Number of vertices.
    pub fn vertex_count(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    /// Where vertex `v`'s entries are in `joints` and `weights`. Empty for a vertex past the
    /// offsets and for a row that is not one (its offsets decrease or run past either array):
    /// [`crate::validate::validate`] reports those, and what reads a document unvalidated
    /// (`inspect`, `diff`, drawing it, Python's arrays) then sees no influences there rather
    /// than a panic. The checks are the ones slicing makes anyway.
    #[inline]
    pub fn row(&self, v: usize) -> std::ops::Range<usize> {
        match (self.offsets.get(v), self.offsets.get(v.wrapping_add(1))) {
            (Some(&a), Some(&b)) if a <= b && b as usize <= self.joints.len().min(self.weights.len()) => a as usize..b as usize,
            _ => 0..0,
        }
    }

    /// Entries of vertex `v` as (joint slot, weight) pairs (none where [`Influences::row`] is
    /// empty). Inlined: a call per vertex from another crate cost 35 instructions before the
    /// first pair.
    #[inline]
    pub fn vertex(&self, v: usize) -> impl Iterator<Item = (u32, f64)> + '_ {
        let r = self.row(v);
        self.joints[r.clone()].iter().copied().zip(self.weights[r].iter().copied())
    }

    /// Per-vertex lists.
    pub fn to_lists(&self) -> Vec<Vec<(u32, f64)>> {
        (0..self.vertex_count()).map(|v| self.vertex(v).collect()).collect()
    }

    /// Largest number of influences on one vertex.
    pub fn max_influences(&self) -> usize {
        (0..self.vertex_count()).map(|v| self.row(v).len()).max().unwrap_or(0)
    }

    /// Number of vertices with at least one entry of positive weight.
    pub fn weighted_vertices(&self) -> usize {
        (0..self.vertex_count()).filter(|&v| self.vertex(v).any(|(_, w)| w > 0.0)).count()
    }

    /// Rebuild from a per-vertex transformation of the entry lists.
    fn map_lists(&mut self, mut f: impl FnMut(&mut Vec<(u32, f64)>)) {
        let mut out = Influences {
            offsets: Vec::with_capacity(self.offsets.len()),
            joints: Vec::with_capacity(self.joints.len()),
            weights: Vec::with_capacity(self.weights.len()),
        };
        out.offsets.push(0);
        let mut buf = Vec::new();
        for v in 0..self.vertex_count() {
            buf.clear();
            buf.extend(self.vertex(v));
            f(&mut buf);
            for &(j, w) in &buf {
                out.joints.push(j);
                out.weights.push(w);
            }
            out.offsets.push(out.joints.len() as u32);
        }
        *self = out;
    }

    /// Scale each vertex's weights to sum to 1. Vertices whose weights sum to 0 are left as they are.
    pub fn normalize(&mut self) {
        for v in 0..self.vertex_count() {
            let r = self.row(v);
            let sum: f64 = self.weights[r.clone()].iter().sum();
            if sum > 0.0 && sum.is_finite() {
                for w in &mut self.weights[r] {
                    *w /= sum;
                }
            }
        }
    }

    /// Sort each vertex's entries by weight, largest first (ties: smaller joint slot first).
    pub fn sort_descending(&mut self) {
        self.map_lists(|l| l.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0))));
    }

    /// Keep at most `n` influences per vertex (the largest), renormalizing the vertices that lost
    /// some. Returns the number of vertices changed.
    pub fn limit(&mut self, n: usize) -> usize {
        let mut changed = 0;
        self.map_lists(|l| {
            if l.len() > n {
                l.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
                l.truncate(n);
                let s: f64 = l.iter().map(|e| e.1).sum();
                if s > 0.0 {
                    for e in l.iter_mut() {
                        e.1 /= s;
                    }
                }
                changed += 1;
            }
        });
        changed
    }

    /// The influences as dense rows of the same width, as GPU skinning and array libraries take
    /// them: each vertex's entries largest first (ties: smaller slot first), padded with slot 0
    /// and weight 0. With `max`, the width is `max` and a vertex with more entries keeps its
    /// `max` largest, renormalized to sum to 1 as [`Influences::limit`] does ([`Padded::limited`]
    /// counts them);
    /// without it, the width is the largest number of entries any vertex has and no weight
    /// changes. Zero-weight entries are kept (they are data); nothing is renormalized that was
    /// not cut.
    pub fn padded(&self, max: Option<usize>) -> Padded {
        let width = max.unwrap_or_else(|| self.max_influences());
        let n = self.vertex_count();
        let mut out = Padded { width, joints: vec![0; n * width], weights: vec![0.0; n * width], limited: 0 };
        let mut row: Vec<(u32, f64)> = Vec::new();
        for v in 0..n {
            row.clear();
            row.extend(self.vertex(v));
            row.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            if row.len() > width {
                row.truncate(width);
                let s: f64 = row.iter().map(|e| e.1).sum();
                if s > 0.0 && s.is_finite() {
                    for e in &mut row {
                        e.1 /= s;
                    }
                }
                out.limited += 1;
            }
            for (k, &(j, w)) in row.iter().enumerate() {
                out.joints[v * width + k] = j;
                out.weights[v * width + k] = w;
            }
        }
        out
    }

    /// Drop entries whose weight is below `epsilon` (and zero-weight entries). Returns how many.
    pub fn prune(&mut self, epsilon: f64) -> usize {
        let mut dropped = 0;
        self.map_lists(|l| {
            let before = l.len();
            l.retain(|e| e.1 >= epsilon && e.1 > 0.0);
            dropped += before - l.len();
        });
        dropped
    }

    /// Move all weight of joint slot `from` onto slot `into` (adding to an existing entry).
    pub fn merge_joint(&mut self, from: u32, into: u32) {
        self.map_lists(|l| {
            let moved: f64 = l.iter().filter(|e| e.0 == from).map(|e| e.1).sum();
            if moved == 0.0 && !l.iter().any(|e| e.0 == from) {
                return;
            }
            l.retain(|e| e.0 != from);
            match l.iter_mut().find(|e| e.0 == into) {
                Some(e) => e.1 += moved,
                None => l.push((into, moved)),
            }
        });
    }

    /// Remove every entry of joint slot `slot` (the weight is dropped, not moved).
    pub fn map_remove_slot(&mut self, slot: u32) {
        self.map_lists(|l| l.retain(|e| e.0 != slot));
    }

    /// Rewrite joint slots through `map` (old slot → new slot); entries mapped to the same slot add up.
    pub fn remap_slots(&mut self, map: &[u32]) {
        self.map_lists(|l| {
            let mut out: Vec<(u32, f64)> = Vec::with_capacity(l.len());
            for &(j, w) in l.iter() {
                let nj = map.get(j as usize).copied().unwrap_or(j);
                match out.iter_mut().find(|e| e.0 == nj) {
                    Some(e) => e.1 += w,
                    None => out.push((nj, w)),
                }
            }
            *l = out;
        });
    }
}

/// Influences as dense rows ([`Influences::padded`]): vertex `v`'s entries are
/// `joints[v * width..(v + 1) * width]` and the same range of `weights`.
#[derive(Debug, Clone, PartialEq)]
pub struct Padded {
    /// Entries per vertex.
    pub width: usize,
    /// Joint slots (positions in [`Skin::joints`]), row by row; padding is slot 0.
    pub joints: Vec<u32>,
    /// Weights, row by row; padding is 0.
    pub weights: Vec<f64>,
    /// Vertices that had more than `width` entries and were cut and renormalized.
    pub limited: usize,
}

/// A skin: a mesh's vertices bound to a skeleton's joints.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Skin {
    pub name: String,
    /// The skeleton in `Document::skeletons` ([`crate::Document::skeleton`]).
    pub skeleton: SkeletonId,
    /// The mesh in `Document::meshes`, when the document carries the geometry
    /// ([`crate::Document::mesh_of`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mesh: Option<MeshId>,
    /// The joints; influences refer to positions (slots) in this list.
    pub joints: Vec<BoneId>,
    /// One inverse bind matrix per joint: document space → the joint's bind-pose space.
    pub inverse_bind: Vec<DMat4>,
    /// Mesh space → document space at bind time (Collada's bind_shape_matrix); identity normally.
    #[serde(default = "ident", skip_serializing_if = "is_ident")]
    pub bind_shape: DMat4,
    pub influences: Influences,
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Extensions,
}

fn ident() -> DMat4 {
    DMat4::IDENTITY
}
fn is_ident(m: &DMat4) -> bool {
    *m == DMat4::IDENTITY
}

impl Skin {
    /// Number of skinned vertices.
    pub fn vertex_count(&self) -> usize {
        self.influences.vertex_count()
    }

    /// Vertex `v`'s linear-blend skinning matrix: Σᵢ wᵢ·Mᵢ / Σᵢ wᵢ over its influences, where
    /// `Mᵢ = joint_mats[slot]` is usually the joint's world matrix times its inverse bind matrix
    /// (the bind shape is not included: callers apply [`Skin::bind_shape`] themselves). Entries
    /// whose slot is past the end of `joint_mats` are skipped. `None` when `v` has no influences
    /// here (past [`Skin::vertex_count`]) or its counted weights do not sum above 0; callers fall
    /// back to their own matrix (the bind shape, or a shared bake).
    ///
    /// The one blend of the rest-pose checks (`skelport::matrix`), the G4MF writer and the T-pose
    /// bake ([`crate::rest`]), so all move a vertex and its normal by the same sum, in the same
    /// order.
    pub fn blend_matrix(&self, v: usize, joint_mats: &[DMat4]) -> Option<DMat4> {
        if v >= self.influences.vertex_count() {
            return None;
        }
        let (mut acc, mut total) = (DMat4::ZERO, 0.0);
        // Zero, negative and non-finite weights count for nothing (a valid document has only the
        // first, which adds nothing either way; the T-pose bake may meet the others first).
        for (j, w) in self.influences.vertex(v).filter(|&(_, w)| w > 0.0 && w.is_finite()) {
            if let Some(m) = joint_mats.get(j as usize) {
                acc += *m * w;
                total += w;
            }
        }
        (total > 0.0).then(|| acc * (1.0 / total))
    }

    /// Merge joint slot `from` into `into` and drop `from` from the joint list (slots renumbered).
    pub fn merge_joint(&mut self, from: usize, into: usize) {
        if from == into || from >= self.joints.len() || into >= self.joints.len() {
            return;
        }
        self.influences.merge_joint(from as u32, into as u32);
        self.joints.remove(from);
        if from < self.inverse_bind.len() {
            self.inverse_bind.remove(from);
        }
        let map: Vec<u32> = (0..=self.joints.len() as u32).map(|j| if j > from as u32 { j - 1 } else { j }).collect();
        self.influences.remap_slots(&map);
    }

    /// Point this skin at another skeleton by bone name: `names` are the current joints' names,
    /// `target` maps a name to the new skeleton's bone. Joints with no match are returned; their
    /// slots keep their old ids (callers merge or drop them).
    pub fn remap_by_name(&mut self, names: &[String], target: &HashMap<&str, BoneId>) -> Vec<String> {
        let mut missing = Vec::new();
        for (slot, name) in names.iter().enumerate() {
            match target.get(name.as_str()) {
                Some(&id) => self.joints[slot] = id,
                None => missing.push(name.clone()),
            }
        }
        missing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Influences {
        Influences::from_lists(vec![vec![(0, 0.5), (1, 0.3), (2, 0.1), (3, 0.05), (4, 0.05)], vec![(2, 2.0)], vec![]])
    }

    #[test]
    fn rows_that_are_not_rows_read_as_no_influences() {
        let sound = sample();
        assert_eq!(sound.row(0), 0..5);
        assert_eq!(sound.row(3), 0..0, "past the vertices");
        assert_eq!(sound.row(usize::MAX), 0..0);
        // Offsets that run backwards, past the joints, or past a shorter weights array.
        let mut backwards = sample();
        backwards.offsets = vec![0, 6, 5, 6];
        let mut past = sample();
        past.offsets = vec![0, 5, 99, 99];
        let mut short = sample();
        short.weights.truncate(3);
        for (mut inf, want) in [(backwards, [6, 0, 1]), (past, [5, 0, 0]), (short, [0, 0, 0])] {
            let rows: Vec<usize> = (0..inf.vertex_count()).map(|v| inf.row(v).len()).collect();
            assert_eq!(rows, want);
            assert_eq!(inf.max_influences(), *rows.iter().max().unwrap());
            assert_eq!(inf.to_lists().iter().map(Vec::len).collect::<Vec<_>>(), rows);
            inf.normalize();
            let _ = inf.padded(Some(4));
        }
    }

    #[test]
    fn blend_matrix_is_the_weighted_mean_of_the_slots_it_has() {
        let skin = Skin {
            name: "s".into(),
            skeleton: SkeletonId::new(0),
            mesh: None,
            joints: vec![BoneId::new(0), BoneId::new(1), BoneId::new(2)],
            inverse_bind: vec![DMat4::IDENTITY; 3],
            bind_shape: DMat4::IDENTITY,
            // v0: slots 0 and 1 (1:3); v1: slot 2 only, which has no matrix; v2: nothing.
            influences: Influences::from_lists(vec![vec![(0, 1.0), (1, 3.0)], vec![(2, 1.0)], vec![]]),
            ext: Default::default(),
        };
        let t = |x: f64| DMat4::from_translation(glam::DVec3::new(x, 0.0, 0.0));
        let mats = [t(4.0), t(8.0)];
        let m = skin.blend_matrix(0, &mats).unwrap();
        assert_eq!(m.w_axis.x, 7.0, "(1·4 + 3·8) / 4");
        assert_eq!(m.x_axis.x, 1.0);
        assert_eq!(skin.blend_matrix(1, &mats), None, "only a slot without a matrix");
        assert_eq!(skin.blend_matrix(2, &mats), None, "no influences");
        assert_eq!(skin.blend_matrix(3, &mats), None, "past the skin's vertices");
    }

    #[test]
    fn limit_keeps_largest_and_renormalizes() {
        let mut i = sample();
        assert_eq!(i.limit(2), 1);
        let v0: Vec<_> = i.vertex(0).collect();
        assert_eq!(v0.len(), 2);
        assert_eq!(v0[0].0, 0);
        assert!((v0[0].1 - 0.625).abs() < 1e-12 && (v0[1].1 - 0.375).abs() < 1e-12);
    }

    #[test]
    fn padded_rows_largest_first_and_padded() {
        let i = Influences::from_lists(vec![vec![(1, 0.3), (0, 0.5), (4, 0.05), (3, 0.05), (2, 0.1)], vec![(2, 2.0)], vec![]]);
        // Unlimited: as wide as the widest vertex, weights untouched, zero padding.
        let p = i.padded(None);
        assert_eq!((p.width, p.limited), (5, 0));
        assert_eq!(p.joints, [0, 1, 2, 3, 4, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(p.weights, [0.5, 0.3, 0.1, 0.05, 0.05, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]);
        // Limited: the cut vertex keeps its largest, renormalized; the others keep their weights
        // (vertex 1's 2.0 is not renormalized) and are padded to the width asked for.
        let p = i.padded(Some(2));
        assert_eq!((p.width, p.limited), (2, 1));
        assert_eq!(p.joints, [0, 1, 2, 0, 0, 0]);
        assert!((p.weights[0] - 0.625).abs() < 1e-12 && (p.weights[1] - 0.375).abs() < 1e-12);
        assert_eq!(&p.weights[2..], [2.0, 0.0, 0.0, 0.0]);
        // Wider than needed: padded.
        let p = i.padded(Some(8));
        assert_eq!((p.width, p.limited, p.joints.len()), (8, 0, 24));
        // Limited rows equal `limit` (the same rule), row by row.
        let mut l = i.clone();
        l.limit(3);
        let p = i.padded(Some(3));
        for v in 0..3 {
            let mut row: Vec<(u32, f64)> = l.vertex(v).collect();
            row.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            for (k, (j, w)) in row.into_iter().enumerate() {
                assert_eq!((p.joints[v * 3 + k], p.weights[v * 3 + k]), (j, w));
            }
        }
        assert_eq!(Influences::default().padded(None), Padded { width: 0, joints: vec![], weights: vec![], limited: 0 });
    }

    #[test]
    fn normalize_sums_to_one_and_skips_empty() {
        let mut i = sample();
        i.normalize();
        assert!((i.vertex(1).map(|e| e.1).sum::<f64>() - 1.0).abs() < 1e-12);
        assert_eq!(i.vertex(2).count(), 0);
    }

    #[test]
    fn prune_and_merge() {
        let mut i = sample();
        assert_eq!(i.prune(0.06), 2);
        i.merge_joint(1, 0);
        let v0: Vec<_> = i.vertex(0).collect();
        assert_eq!(v0, vec![(0, 0.8), (2, 0.1)]);
    }

    #[test]
    fn triples_add_duplicates() {
        let i = Influences::from_triples(2, [(1, 0, 0.25), (1, 0, 0.25), (0, 3, 1.0)]);
        assert_eq!(i.vertex(1).collect::<Vec<_>>(), vec![(0, 0.5)]);
        assert_eq!(i.max_influences(), 1);
    }

    /// The counting sort equals the plain per-vertex lists, bit for bit: random triples with
    /// repeated (vertex, joint) pairs, vertices past the count, and every order.
    #[test]
    fn triples_equal_per_vertex_lists() {
        let mut next = crate::testing::xorshift(0x2545_f491_4f6c_dd1du64);
        for _ in 0..2_000 {
            let vertex_count = (next() % 9) as usize;
            let triples: Vec<(u32, u32, f64)> =
                (0..next() % 40).map(|_| ((next() % 11) as u32, (next() % 5) as u32, (next() % 1000) as f64 / 7.0)).collect();
            let mut per: Vec<Vec<(u32, f64)>> = vec![Vec::new(); vertex_count];
            for &(v, j, w) in &triples {
                if let Some(list) = per.get_mut(v as usize) {
                    match list.iter_mut().find(|e| e.0 == j) {
                        Some(e) => e.1 += w,
                        None => list.push((j, w)),
                    }
                }
            }
            let want = Influences::from_lists(per);
            let got = Influences::from_triples(vertex_count, triples.iter().copied());
            assert_eq!(got.offsets, want.offsets, "{triples:?}");
            assert_eq!(got.joints, want.joints, "{triples:?}");
            assert_eq!(
                got.weights.iter().map(|w| w.to_bits()).collect::<Vec<_>>(),
                want.weights.iter().map(|w| w.to_bits()).collect::<Vec<_>>()
            );
        }
    }
}
