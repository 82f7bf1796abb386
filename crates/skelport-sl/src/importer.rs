//! How the Second Life viewer's Collada importer cuts a geometry into faces, simulated from the
//! parsed file so that `validate --target sl` (and the tests of the writer) judge a file as the
//! importer will (secondlife/viewer `indra/llprimitive/lldaeloader.cpp`; docs/formats/sl.md
//! names each rule). Facts, not code, are taken from the viewer: the numbers and the order of
//! the checks.
//!
//! * `<triangles>` (`load_face_from_dom_triangles`): corners become vertices, a vertex shared
//!   when position, normal and texture coordinate are equal (never twice in one triangle); after
//!   each triangle, a face of 65,532 vertices or more is closed and a new one begun. A triangle
//!   adds at most 3 vertices, so a face never passes the 16-bit limit.
//! * `<polylist>` (`load_face_from_dom_polylist`): each polygon is fanned from its first corner;
//!   after **every corner** a face holding 65,532 indices or more is closed. When that corner is
//!   not its polygon's last, the rest of the polygon is built from indices of the closed face:
//!   the new face holds indices past its vertices and the importer drops the whole model
//!   (`validate_model` in llmodel.cpp), or draws wrong triangles. A face reaching 65,535
//!   vertices is `VERTEX_NUMBER_OVERFLOW`: the model is dropped too.
//! * `<polygons>` (`load_face_from_dom_polygons`): one face for the whole element, never split;
//!   past 65,535 distinct vertices its 16-bit indices wrap.
//! * A model holds at most 8 faces (`LL_SCULPT_MESH_MAX_FACES`, `loadModelsFromDomMesh`): the
//!   importer makes further models of the rest; faces past `(768 / meshes + 1) × 8` (the
//!   `ImporterModelLimit` setting, 768) are dropped.

use crate::collada::{Geometry, Primitive, PrimitiveKind};
use skelport_ir::DVec3;
use std::collections::{HashMap, HashSet};

/// The importer closes a face once it reaches this many vertices (`<triangles>`) or indices
/// (`<polylist>`).
pub const FACE_SPLIT: usize = 65_532;
/// A face with this many vertices overflows the importer's 16-bit indices.
pub const FACE_VERTEX_LIMIT: usize = 65_535;
/// Faces per model (`LL_SCULPT_MESH_MAX_FACES`).
pub const FACES_PER_MODEL: usize = 8;
/// The viewer's default `ImporterModelLimit` (models generated from all meshes of a file).
pub const MODEL_LIMIT: usize = 768;

/// What the importer makes of one geometry.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Faces {
    /// Faces made.
    pub faces: usize,
    /// Where each face ends: (primitive, polygon, corner within the polygon).
    pub ends: Vec<(usize, usize, usize)>,
    /// `<polylist>` faces that end inside a polygon (a subset of `ends`).
    pub inside_polygon: Vec<(usize, usize, usize)>,
    /// Primitives whose face passes 65,535 vertices.
    pub vertex_overflow: Vec<usize>,
    /// `<polygons>` primitives with 65,535 distinct vertices or more (indices wrap).
    pub index_wrap: Vec<usize>,
    /// Primitives that make a face without one triangle (only points or lines).
    pub no_triangle: Vec<usize>,
}

impl Faces {
    /// Models the importer makes of this geometry's faces.
    pub fn models(&self) -> usize {
        self.faces.div_ceil(FACES_PER_MODEL).max(1)
    }
}

/// The vertex a corner becomes: position, normal and texture coordinate as the importer's
/// floats (-0 taken as 0, as its comparisons do).
type Key = [u32; 8];

fn bits(v: f64) -> u32 {
    ((v as f32) + 0.0).to_bits()
}

/// The data of the corners of primitive `p`, as the importer sees it.
struct Corners<'g> {
    geo: &'g Geometry,
    p: &'g Primitive,
    /// The TEXCOORD input the importer reads: for `<triangles>`/`<polylist>` the last one on the
    /// primitive (`get_dom_sources` keeps the last; one on `<vertices>` is not read), for
    /// `<polygons>` the last with set 0.
    uv: Option<usize>,
}

impl<'g> Corners<'g> {
    fn new(geo: &'g Geometry, p: &'g Primitive) -> Self {
        let uv = match p.kind {
            PrimitiveKind::Polygons => p.uvs.iter().rposition(|u| !u.on_vertices && u.set.unwrap_or(0) == 0),
            _ => p.uvs.iter().rposition(|u| !u.on_vertices),
        };
        Corners { geo, p, uv }
    }
    fn key(&self, c: usize) -> Key {
        let pos = self.geo.positions[self.p.vertex[c] as usize];
        let n = self.p.normal.get(c).and_then(|&i| self.geo.normals.get(i as usize)).copied().unwrap_or_default();
        let t = self
            .uv
            .and_then(|k| {
                let u = &self.p.uvs[k];
                self.geo.texcoords[u.source].values.get(u.index[c] as usize).copied()
            })
            .unwrap_or_default();
        [bits(pos.x), bits(pos.y), bits(pos.z), bits(n.x), bits(n.y), bits(n.z), bits(t.x), bits(t.y)]
    }
}

/// Simulate the importer's face building for every primitive of `geo`.
pub fn faces(geo: &Geometry) -> Faces {
    let mut out = Faces::default();
    for (pi, p) in geo.primitives.iter().enumerate() {
        let corners = Corners::new(geo, p);
        match p.kind {
            PrimitiveKind::Triangles => triangles(pi, p, &corners, &mut out),
            PrimitiveKind::Polylist => polylist(pi, p, &corners, &mut out),
            PrimitiveKind::Polygons => polygons(pi, p, &corners, &mut out),
        }
    }
    out
}

fn triangles(pi: usize, p: &Primitive, corners: &Corners<'_>, out: &mut Faces) {
    let mut verts = 0usize;
    let mut map: HashMap<Key, usize> = HashMap::new();
    let mut tri = [usize::MAX; 3];
    let mut indices = 0usize;
    for (c, _) in p.vertex.iter().enumerate() {
        let key = corners.key(c);
        let in_tri = indices % 3;
        let index = match map.get(&key) {
            // Never twice in one triangle.
            Some(&i) if !tri[..in_tri].contains(&i) => i,
            _ => {
                verts += 1;
                let i = verts - 1;
                map.entry(key).or_insert(i);
                i
            }
        };
        tri[in_tri] = index;
        indices += 1;
        if indices % 3 == 0 && verts >= FACE_SPLIT {
            let t = c / 3;
            out.faces += 1;
            out.ends.push((pi, t, 2));
            verts = 0;
            indices = 0;
            map.clear();
        }
    }
    if verts > 0 {
        out.faces += 1;
        out.ends.push((pi, p.vertex.len().div_ceil(3).saturating_sub(1), 2));
    }
}

fn polylist(pi: usize, p: &Primitive, corners: &Corners<'_>, out: &mut Faces) {
    // The face's distinct vertices.
    let mut seen: HashSet<Key> = HashSet::new();
    let mut indices = 0usize;
    let mut face_corners = 0usize;
    let mut c = 0usize;
    let mut overflow = false;
    for (poly, &n) in p.counts.iter().enumerate() {
        let n = n as usize;
        for j in 0..n {
            face_corners += 1;
            if seen.insert(corners.key(c)) && seen.len() >= FACE_VERTEX_LIMIT {
                overflow = true;
            }
            c += 1;
            if j >= 2 {
                indices += 3;
            }
            if indices >= FACE_SPLIT {
                out.faces += 1;
                out.ends.push((pi, poly, j));
                if j + 1 < n {
                    out.inside_polygon.push((pi, poly, j));
                }
                indices = 0;
                face_corners = 0;
                seen.clear();
            }
        }
    }
    if face_corners > 0 {
        out.faces += 1;
        out.ends.push((pi, p.counts.len().saturating_sub(1), p.counts.last().map_or(0, |&n| n as usize).saturating_sub(1)));
        if indices == 0 {
            out.no_triangle.push(pi);
        }
    }
    if overflow {
        out.vertex_overflow.push(pi);
    }
}

fn polygons(pi: usize, p: &Primitive, corners: &Corners<'_>, out: &mut Faces) {
    let distinct: HashSet<Key> = (0..p.vertex.len()).map(|c| corners.key(c)).collect();
    if distinct.is_empty() {
        return;
    }
    out.faces += 1;
    out.ends.push((pi, p.counts.len().saturating_sub(1), p.counts.last().map_or(0, |&n| n as usize).saturating_sub(1)));
    if distinct.len() >= FACE_VERTEX_LIMIT {
        out.index_wrap.push(pi);
    }
    if p.counts.iter().all(|&n| n < 3) {
        out.no_triangle.push(pi);
    }
}

/// The influences the importer keeps for one `<vertex_weights>` entry
/// (`LLDAELoader::processDomModel`): pairs on joint -1 (the bind shape) dropped, the rest sorted
/// by weight, the 4 largest with a positive weight kept and scaled to sum 1. Empty when none is
/// left (the upload then binds the vertex to joint 0: llvolume.cpp `LLVolume::unpackVolumeFacesInternal`).
pub fn kept_influences(pairs: &[(i64, f64)]) -> Vec<(i64, f64)> {
    let mut l: Vec<(i64, f64)> = pairs.iter().copied().filter(|&(j, _)| j >= 0).collect();
    l.sort_by(|a, b| b.1.total_cmp(&a.1));
    l.truncate(4);
    l.retain(|&(_, w)| w > 0.0);
    let total: f64 = l.iter().map(|e| e.1).sum();
    if total > 0.0 {
        for e in &mut l {
            e.1 /= total;
        }
    }
    l
}

/// Two kept influence lists the upload cannot tell apart (weights within 0.001, the decoder's
/// floor).
fn same_influences(a: &[(i64, f64)], b: &[(i64, f64)]) -> bool {
    let sorted = |l: &[(i64, f64)]| {
        let mut l = l.to_vec();
        l.sort_by_key(|e| e.0);
        l
    };
    let (a, b) = (sorted(a), sorted(b));
    a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| x.0 == y.0 && (x.1 - y.1).abs() <= 1e-3)
}

/// How near two positions must be, in the importer's unit cube, to share weights
/// (`LLModel::jointPositionalLookup`).
pub const SHARED_POSITION_EPSILON: f64 = 1e-5;

/// Vertices that the importer gives another vertex's influences. It keys influences by position
/// (`LLModel::mSkinWeights`, a map from the position, scaled into the unit cube per axis by
/// `LLModel::normalizeVolumeFaces`): of vertices at one position the last one's influences are
/// kept, and a vertex then takes those of the first key (in x, y, z order) within 1e-5 of it
/// (`LLModel::getJointInfluences`). `influences[v]` are vertex v's kept influences
/// ([`kept_influences`]).
pub fn shared_position_losses(positions: &[DVec3], influences: &[Vec<(i64, f64)>]) -> Vec<usize> {
    let finite: Vec<usize> = (0..positions.len().min(influences.len())).filter(|&v| positions[v].is_finite()).collect();
    let Some(&first) = finite.first() else { return Vec::new() };
    let (mut lo, mut hi) = (positions[first], positions[first]);
    for &v in &finite {
        lo = lo.min(positions[v]);
        hi = hi.max(positions[v]);
    }
    let size = (hi - lo).to_array().map(|s| if s.abs() < 1e-5 { 1.0 } else { s });
    let centre = (lo + hi) * 0.5;
    // The importer's keys: unit-cube positions as floats (-0 as 0).
    let key = |v: usize| -> [f32; 3] {
        let q = positions[v] - centre;
        [(q.x / size[0]) as f32 + 0.0, (q.y / size[1]) as f32 + 0.0, (q.z / size[2]) as f32 + 0.0]
    };
    let keys: Vec<[f32; 3]> = (0..positions.len()).map(|v| if positions[v].is_finite() { key(v) } else { [0.0; 3] }).collect();
    let lex = |a: &[f32; 3], b: &[f32; 3]| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])).then(a[2].total_cmp(&b[2]));
    // One entry per distinct key, in the map's (x, y, z) order, holding the last vertex there
    // (sorted, not hashed: a sweep over x then finds neighbours in a few comparisons).
    let mut order = finite.clone();
    order.sort_by(|&a, &b| lex(&keys[a], &keys[b]).then(a.cmp(&b)));
    let mut entries: Vec<([f32; 3], usize)> = Vec::with_capacity(order.len());
    for &v in &order {
        match entries.last_mut() {
            Some(e) if lex(&e.0, &keys[v]).is_eq() => e.1 = v,
            _ => entries.push((keys[v], v)),
        }
    }
    let eps = SHARED_POSITION_EPSILON as f32;
    let mut lost = Vec::new();
    for &v in &finite {
        let k = keys[v];
        // Entries are sorted by x first: those within eps in x are one run around k.
        let start = entries.partition_point(|e| e.0[0] < k[0] - eps);
        let winner = entries[start..]
            .iter()
            .take_while(|e| e.0[0] <= k[0] + eps)
            .find(|e| (0..3).map(|i| f64::from(e.0[i] - k[i]).powi(2)).sum::<f64>().sqrt() < SHARED_POSITION_EPSILON)
            .map_or(v, |e| e.1);
        if winner != v && !same_influences(&influences[v], &influences[winner]) {
            lost.push(v);
        }
    }
    lost
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sweep finds what comparing every pair finds: each vertex's winner is the last vertex
    /// at the smallest key (x, y, z order) within the epsilon.
    #[test]
    fn shared_positions_sweep_equals_every_pair() {
        let mut next = skelport_ir::testing::xorshift(0x5eed_cafe_u64);
        for round in 0..50 {
            let n = 2 + (next() % 300) as usize;
            let mut positions: Vec<DVec3> = Vec::with_capacity(n);
            for _ in 0..n {
                let p = match next() % 4 {
                    // Exact copies and points a hair apart share weights.
                    0 if !positions.is_empty() => positions[(next() % positions.len() as u64) as usize],
                    1 if !positions.is_empty() => positions[(next() % positions.len() as u64) as usize] + DVec3::new(3e-6, 0.0, -2e-6),
                    _ => DVec3::new((next() % 1000) as f64 * 1e-3, (next() % 1000) as f64 * 1e-3, (next() % 7) as f64 * 0.3),
                };
                positions.push(p);
            }
            let influences: Vec<Vec<(i64, f64)>> = (0..n).map(|_| vec![((next() % 3) as i64, 1.0)]).collect();
            let got = shared_position_losses(&positions, &influences);
            // Every pair.
            let (lo, hi) = positions.iter().fold((positions[0], positions[0]), |(l, h), p| (l.min(*p), h.max(*p)));
            let size = (hi - lo).to_array().map(|s| if s.abs() < 1e-5 { 1.0 } else { s });
            let c = (lo + hi) * 0.5;
            let key = |p: DVec3| {
                let q = p - c;
                [(q.x / size[0]) as f32 + 0.0, (q.y / size[1]) as f32 + 0.0, (q.z / size[2]) as f32 + 0.0]
            };
            let keys: Vec<[f32; 3]> = positions.iter().map(|p| key(*p)).collect();
            let last_at = |k: [f32; 3]| (0..n).rev().find(|&w| keys[w] == k).unwrap();
            let mut want = Vec::new();
            for v in 0..n {
                let best = (0..n)
                    .filter(|&w| (0..3).map(|i| f64::from(keys[w][i] - keys[v][i]).powi(2)).sum::<f64>().sqrt() < SHARED_POSITION_EPSILON)
                    .map(|w| keys[w])
                    .min_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])).then(a[2].total_cmp(&b[2])))
                    .unwrap();
                let w = last_at(best);
                if w != v && !same_influences(&influences[v], &influences[w]) {
                    want.push(v);
                }
            }
            assert_eq!(got, want, "round {round}");
        }
    }
}
