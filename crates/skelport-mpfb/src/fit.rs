//! Picking placement strategies for bone ends that have none, as MPFB's rig save does.
//!
//! MPFB (entities/rig.py, `_match_position_to_strategy`) compares each bone end with the base
//! mesh, all in Blender units of the scaled mesh (metres at the usual scale factor 0.1):
//! 1. the nearest joint-cube centre (mean of a group whose name contains `joint`) closer than
//!    0.01 → CUBE;
//! 2. the nearest vertex closer than 0.01 → VERTEX when there is no cube match, or when the vertex
//!    is closer than 0.001 and the cube is not;
//! 3. unless CUBE was chosen or the match is already closer than 0.001: the vertex pair whose
//!    midpoint is closer than 0.02, penalised by the pair's length (weight = distance +
//!    |v2 − v1| × 0.02 / (0.3 × mesh height)), searched among first vertices within 15 % of the
//!    mesh height on every axis (0.02 when a vertex already matched) → MEAN when it beats the
//!    match so far;
//! 4. else DEFAULT: only `default_position`.
//!
//! MPFB uses Blender's KD-tree; a uniform grid gives the same nearest neighbours here.

use crate::read::BaseMesh;
use skelport_ir::{AnchorStrategy, DVec3};

const MAX_ALLOWED_DIST: f64 = 0.01;
const EXACT: f64 = 0.001;
const MEAN_MAX_DIST: f64 = MAX_ALLOWED_DIST * 2.0;
const CLOSE_MEAN_SEARCH_RADIUS: f64 = MAX_ALLOWED_DIST * 2.0;
/// Grid cells as wide as the largest radius of a nearest-vertex query (a midpoint within 0.02
/// means the second vertex within 0.04 of the mirrored first one).
const CELL: f64 = MEAN_MAX_DIST * 2.0;

/// Joint-cube centres and a vertex grid over one base mesh.
pub struct StrategyPicker<'a> {
    positions: &'a [DVec3],
    cubes: Vec<(String, DVec3)>,
    min: DVec3,
    dims: [usize; 3],
    /// Cell → range in `order` (cell starts, prefix sums).
    starts: Vec<u32>,
    order: Vec<u32>,
    /// 15 % of the mesh height: MPFB's box for first vertices of a pair.
    max_axis: f64,
}

impl<'a> StrategyPicker<'a> {
    /// Index the mesh (positions in the frame the bone ends are given in).
    pub fn new(mesh: &'a BaseMesh) -> Self {
        let positions = &mesh.positions[..];
        let mut cubes: Vec<(String, DVec3)> = mesh
            .groups
            .iter()
            .filter(|(n, v)| n.contains("joint") && !v.is_empty())
            .map(|(n, v)| (n.clone(), v.iter().map(|&i| positions[i as usize]).sum::<DVec3>() / v.len() as f64))
            .collect();
        // Stable order so ties pick the same cube every run.
        cubes.sort_by(|a, b| a.0.cmp(&b.0));
        let (mut min, mut max) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
        for p in positions {
            min = min.min(*p);
            max = max.max(*p);
        }
        if positions.is_empty() {
            (min, max) = (DVec3::ZERO, DVec3::ZERO);
        }
        let span = ((max - min) / CELL).floor();
        let dims = [span.x as usize + 1, span.y as usize + 1, span.z as usize + 1];
        let ncell = dims[0] * dims[1] * dims[2];
        let mut picker = StrategyPicker {
            positions,
            cubes,
            min,
            dims,
            starts: vec![0; ncell + 1],
            order: vec![0; positions.len()],
            max_axis: 0.15 * (max.z - min.z).abs(),
        };
        let cell_of: Vec<usize> = positions.iter().map(|p| picker.cell_index(picker.cell(*p))).collect();
        for &c in &cell_of {
            picker.starts[c + 1] += 1;
        }
        for i in 0..ncell {
            picker.starts[i + 1] += picker.starts[i];
        }
        let mut fill = picker.starts.clone();
        for (v, &c) in cell_of.iter().enumerate() {
            picker.order[fill[c] as usize] = v as u32;
            fill[c] += 1;
        }
        picker
    }

    fn cell(&self, p: DVec3) -> [i64; 3] {
        let c = ((p - self.min) / CELL).floor();
        [c.x as i64, c.y as i64, c.z as i64]
    }

    fn cell_index(&self, c: [i64; 3]) -> usize {
        let k = |i: usize| c[i].clamp(0, self.dims[i] as i64 - 1) as usize;
        (k(2) * self.dims[1] + k(1)) * self.dims[0] + k(0)
    }

    /// Visit every vertex in cells overlapping the box `p ± r`.
    fn for_each_near(&self, p: DVec3, r: f64, mut f: impl FnMut(u32, DVec3)) {
        let (lo, hi) = (self.cell(p - DVec3::splat(r)), self.cell(p + DVec3::splat(r)));
        let clamp = |v: i64, i: usize| v.clamp(0, self.dims[i] as i64 - 1);
        if hi[0] < 0 || hi[1] < 0 || hi[2] < 0 || lo.iter().zip(self.dims).any(|(l, d)| *l >= d as i64) {
            return;
        }
        for z in clamp(lo[2], 2)..=clamp(hi[2], 2) {
            for y in clamp(lo[1], 1)..=clamp(hi[1], 1) {
                let row = (z as usize * self.dims[1] + y as usize) * self.dims[0];
                let (a, b) = (row + clamp(lo[0], 0) as usize, row + clamp(hi[0], 0) as usize);
                for &v in &self.order[self.starts[a] as usize..self.starts[b + 1] as usize] {
                    f(v, self.positions[v as usize]);
                }
            }
        }
    }

    /// The nearest vertex closer than `limit` (lowest index on ties).
    fn nearest_vertex(&self, p: DVec3, limit: f64) -> Option<(u32, f64)> {
        let mut best: Option<(u32, f64)> = None;
        self.for_each_near(p, limit, |v, q| {
            let d = (q - p).length();
            if d < limit && best.is_none_or(|(bv, bd)| d < bd || (d == bd && v < bv)) {
                best = Some((v, d));
            }
        });
        best
    }

    fn nearest_cube(&self, p: DVec3) -> Option<(&str, f64)> {
        self.cubes
            .iter()
            .map(|(n, c)| (n.as_str(), (*c - p).length()))
            .filter(|(_, d)| *d < MAX_ALLOWED_DIST)
            .min_by(|a, b| a.1.total_cmp(&b.1))
    }

    /// The best vertex pair for a MEAN, and its midpoint's distance.
    fn closest_mean(&self, p: DVec3, search_radius: f64) -> Option<([u32; 2], f64)> {
        let penalty = MEAN_MAX_DIST / (self.max_axis * 2.0);
        let mut best_weight = MEAN_MAX_DIST + penalty * self.max_axis * 2.0;
        let mut best = None;
        let mut firsts = Vec::new();
        self.for_each_near(p, search_radius, |v, q| {
            if (q - p).abs().max_element() < search_radius {
                firsts.push(v);
            }
        });
        // Nearest first (index order on ties, a deterministic stand-in for the KD-tree's range
        // order), so the search can stop early: a pair's midpoint within 0.02 of p means
        // |v2 − v1| ≥ 2|v1 − p| − 0.04, so its weight is at least that times the penalty.
        let mut firsts: Vec<(f64, u32)> = firsts.into_iter().map(|v| ((self.positions[v as usize] - p).length(), v)).collect();
        firsts.sort_unstable_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        for (r1, v1) in firsts {
            if (2.0 * r1 - 2.0 * MEAN_MAX_DIST) * penalty >= best_weight {
                break;
            }
            let q1 = self.positions[v1 as usize];
            // The pair's midpoint is closest to p when v2 is closest to p mirrored through v1;
            // beyond 2 × 0.02 the midpoint is out of range anyway.
            let Some((v2, _)) = self.nearest_vertex(p * 2.0 - q1, MEAN_MAX_DIST * 2.0) else { continue };
            if v2 <= v1 {
                continue;
            }
            let q2 = self.positions[v2 as usize];
            let d = ((q1 + q2) / 2.0 - p).length();
            if d < MEAN_MAX_DIST {
                let w = d + (q2 - q1).length() * penalty;
                if w < best_weight {
                    best_weight = w;
                    best = Some(([v1, v2], d));
                }
            }
        }
        best
    }

    /// The strategy MPFB's save would pick for a bone end at `p` (mesh frame).
    pub fn pick(&self, p: DVec3) -> AnchorStrategy {
        let mut strategy = AnchorStrategy::Default;
        let mut best = 100.0;
        let cube = self.nearest_cube(p);
        let vertex = self.nearest_vertex(p, MAX_ALLOWED_DIST);
        if let Some((name, d)) = cube {
            strategy = AnchorStrategy::Cube { group: name.into() };
            best = d;
        }
        if let Some((v, d)) = vertex {
            let cube_d = cube.map_or(f64::INFINITY, |c| c.1);
            if cube.is_none() || (d < EXACT && EXACT < cube_d) {
                strategy = AnchorStrategy::Vertex { index: v };
                best = d;
            }
        }
        if !matches!(strategy, AnchorStrategy::Cube { .. }) && best > EXACT {
            let radius = if matches!(strategy, AnchorStrategy::Vertex { .. }) { CLOSE_MEAN_SEARCH_RADIUS } else { self.max_axis };
            if let Some((pair, d)) = self.closest_mean(p, radius) {
                if d < best {
                    strategy = AnchorStrategy::Mean { indices: pair.to_vec() };
                }
            }
        }
        strategy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mesh() -> BaseMesh {
        let mut positions = Vec::new();
        // 0..8: a joint cube of half-size 0.05 around the origin.
        for i in 0..8 {
            let s = |b: usize| if i & b != 0 { 0.05 } else { -0.05 };
            positions.push(DVec3::new(s(1), s(2), s(4)));
        }
        positions.push(DVec3::new(0.004, 0.0, 0.0)); // 8: a vertex inside the cube
        positions.extend([DVec3::new(1.0, 0.0, 0.0), DVec3::new(1.1, 0.0, 0.0)]); // 9, 10: a pair
        positions.extend([DVec3::new(1.8, 0.0, 0.0), DVec3::new(2.2, 0.0, 0.0)]); // 11, 12: long pair
        positions.extend([DVec3::new(1.95, 0.0, 0.0), DVec3::new(2.05, 0.0, 0.0)]); // 13, 14: short pair
        positions.extend([DVec3::new(0.0, 0.0, -1.0), DVec3::new(0.0, 0.0, 1.0)]); // height 2
        let groups = [("joint-a".to_string(), (0..8).collect()), ("body".to_string(), vec![15, 16])].into_iter().collect();
        BaseMesh { obj: Default::default(), positions, groups }
    }

    #[test]
    fn picks_cube_then_exact_vertex_then_the_shortest_close_pair_then_default() {
        let m = mesh();
        let p = StrategyPicker::new(&m);
        let cube = AnchorStrategy::Cube { group: "joint-a".into() };
        // A cube centre within 0.01 wins over a vertex that is not exact.
        assert_eq!(p.pick(DVec3::new(0.0, 0.0, 0.0)), cube);
        assert_eq!(p.pick(DVec3::new(-0.009, 0.0, 0.0)), cube);
        // An exact vertex (< 0.001) beats a cube that is not exact.
        assert_eq!(p.pick(DVec3::new(0.0045, 0.0, 0.0)), AnchorStrategy::Vertex { index: 8 });
        // No cube: the nearest vertex within 0.01.
        assert_eq!(p.pick(DVec3::new(1.0, 0.009, 0.0)), AnchorStrategy::Vertex { index: 9 });
        // Nothing within 0.01: a pair whose midpoint is within 0.02, shorter pairs preferred.
        assert_eq!(p.pick(DVec3::new(1.05, 0.0, 0.01)), AnchorStrategy::Mean { indices: vec![9, 10] });
        assert_eq!(p.pick(DVec3::new(2.0, 0.0, 0.0)), AnchorStrategy::Mean { indices: vec![13, 14] });
        // Midpoint 0.025 away: too far.
        assert_eq!(p.pick(DVec3::new(1.05, 0.025, 0.0)), AnchorStrategy::Default);
        assert_eq!(p.pick(DVec3::new(5.0, 5.0, 5.0)), AnchorStrategy::Default);
    }
}
