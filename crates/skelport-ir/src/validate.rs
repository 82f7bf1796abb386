//! The validator: a separate pass over a document that checks the IR's invariants.
//! Every problem names where it is (skeleton, bone, skin, vertex) and what is wrong.

use crate::document::{Document, Normals, Transform};
use serde::Serialize;
use std::collections::HashMap;

/// One broken rule.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Problem {
    /// Where: e.g. `skeletons[0].bones[3] "Hips"`.
    pub location: String,
    /// What is wrong and what to do.
    pub message: String,
}

impl std::fmt::Display for Problem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

/// Tolerance on quaternion length.
pub const UNIT_QUAT_TOLERANCE: f64 = 1e-6;

fn finite3(v: glam::DVec3) -> bool {
    v.is_finite()
}

/// A bone's rest transform; the caller names the location of what is found.
fn check_transform(t: &Transform, out: &mut Vec<Problem>) {
    if !finite3(t.translation) || !t.rotation.is_finite() || !finite3(t.scale) {
        out.push(Problem {
            location: String::new(),
            message: "rest transform has a NaN or infinite number; fix the value in the source file".into(),
        });
        return;
    }
    let len = t.rotation.length();
    if (len - 1.0).abs() > UNIT_QUAT_TOLERANCE {
        out.push(Problem {
            location: String::new(),
            message: format!("rotation quaternion is not unit length (|q| = {len}); normalize it"),
        });
    }
}

/// Which bones lie on a cycle of parent links, in O(n): each bone is walked up once, with the
/// path so far marked, so a chain of any depth (65,535 bones stored child-first) stays linear.
fn cycle_members(sk: &crate::document::Skeleton) -> Vec<bool> {
    let n = sk.bones.len();
    // 0 = unvisited, 1 = on the current path, 2 = finished.
    let mut state = vec![0u8; n];
    let mut on_cycle = vec![false; n];
    let mut path = Vec::new();
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        path.clear();
        let mut cur = start;
        loop {
            if state[cur] == 2 {
                break;
            }
            if state[cur] == 1 {
                // Found a cycle: every bone on the path from `cur` onwards is on it.
                if let Some(pos) = path.iter().position(|&x| x == cur) {
                    for &x in &path[pos..] {
                        on_cycle[x] = true;
                    }
                }
                break;
            }
            state[cur] = 1;
            path.push(cur);
            match sk.bones[cur].parent {
                Some(p) if p.index() < n => cur = p.index(),
                _ => break,
            }
        }
        for &x in &path {
            state[x] = 2;
        }
    }
    on_cycle
}

/// Check every invariant; an empty list means the document is valid.
pub fn validate(doc: &Document) -> Vec<Problem> {
    validate_with(doc, crate::PARALLEL_FROM)
}

/// [`validate`], checking meshes and skins on every core from `parallel_from` vertices plus corners.
fn validate_with(doc: &Document, parallel_from: usize) -> Vec<Problem> {
    let mut out = Vec::new();
    if doc.frame.check().is_err() {
        out.push(Problem {
            location: "frame".into(),
            message: "up and forward axes must be perpendicular and metres_per_unit positive".into(),
        });
    }
    for (si, sk) in doc.skeletons.iter().enumerate() {
        let n = sk.bones.len();
        let mut names: HashMap<&str, usize> = HashMap::with_capacity(n);
        let on_cycle = cycle_members(sk);
        for (bi, b) in sk.bones.iter().enumerate() {
            // The location is named once a problem is found: formatting it for every bone of a
            // valid skeleton was wasted work (0.18 M instructions for the Linden body's 159 bones).
            let first = out.len();
            if b.name.is_empty() {
                out.push(Problem { location: String::new(), message: "bone has an empty name; give it a unique name".into() });
            }
            if let Some(prev) = names.insert(b.name.as_str(), bi) {
                out.push(Problem {
                    location: String::new(),
                    message: format!("duplicate bone name \"{}\" (also bone {prev}); rename one of them", b.name),
                });
            }
            if let Some(p) = b.parent {
                if p.index() >= n {
                    out.push(Problem {
                        location: String::new(),
                        message: format!("parent index {} is out of range (skeleton has {n} bones)", p),
                    });
                } else if p.index() == bi {
                    out.push(Problem {
                        location: String::new(),
                        message: "bone is its own parent (a cycle); point it at another bone or make it a root".into(),
                    });
                } else if p.index() > bi {
                    let msg = if on_cycle[bi] {
                        format!("parent links form a cycle through \"{}\" and \"{}\"; break the cycle", b.name, sk.bones[p.index()].name)
                    } else {
                        format!("parent \"{}\" comes after its child; bones must be ordered parents first", sk.bones[p.index()].name)
                    };
                    out.push(Problem { location: String::new(), message: msg });
                }
            }
            if let Some(m) = b.mirror {
                if m.index() >= n {
                    out.push(Problem { location: String::new(), message: format!("mirror bone index {} is out of range", m) });
                }
            }
            check_transform(&b.rest, &mut out);
            if let Some(l) = b.length {
                if !l.is_finite() || l < 0.0 {
                    out.push(Problem { location: String::new(), message: format!("bone length {l} must be finite and non-negative") });
                }
            }
            if let Some(r) = b.roll {
                if !r.is_finite() {
                    out.push(Problem { location: String::new(), message: "roll is NaN or infinite".into() });
                }
            }
            if out.len() > first {
                let named = format!("skeletons[{si}].bones[{bi}] \"{}\"", b.name);
                out[first..].iter_mut().for_each(|p| p.location = named.clone());
            }
        }
    }
    // Meshes and skins hold most of a big document: checked on every core, problems in order.
    let big = crate::mesh_work(&doc.meshes) >= parallel_from;
    let meshes = crate::map_in_order(doc.meshes.iter().enumerate().collect(), big, |(mi, m)| mesh_problems(mi, m));
    let skins = crate::map_in_order(doc.skins.iter().enumerate().collect(), big, |(ki, s)| skin_problems(doc, ki, s));
    out.extend(meshes.into_iter().flatten());
    out.extend(skins.into_iter().flatten());
    out
}

/// The index of the first value that fails `ok`. Blocks are tested with `&` rather than `&&`, so
/// the test has no branch per value and vectorises; only a failing block is searched. A mesh's
/// per-corner values are most of what validation reads: on AVX2 machines (found at run time)
/// the test is compiled for AVX2, twice the values a step (Linden body's meshes: 0.56 -> 0.23 M
/// instructions, docs/performance.md).
fn first_failing<T>(values: &[T], ok: impl Fn(&T) -> bool) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    if crate::has_avx2() {
        // SAFETY: the CPU has AVX2, checked above; the function is plain Rust otherwise.
        #[allow(unsafe_code)]
        return unsafe { first_failing_avx2(values, ok) };
    }
    first_failing_in(values, ok)
}

/// [`first_failing`] compiled for AVX2.
///
/// # Safety
/// The CPU must have AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
#[allow(unsafe_code)]
unsafe fn first_failing_avx2<T>(values: &[T], ok: impl Fn(&T) -> bool) -> Option<usize> {
    first_failing_in(values, ok)
}

#[inline(always)]
fn first_failing_in<T>(values: &[T], ok: impl Fn(&T) -> bool) -> Option<usize> {
    const BLOCK: usize = 64;
    let (k, block) = values.chunks(BLOCK).enumerate().find(|(_, c)| !c.iter().fold(true, |all, v| all & ok(v)))?;
    block.iter().position(|v| !ok(v)).map(|p| k * BLOCK + p)
}

/// The index of the first number that is NaN or infinite, in a flat view of vectors' coordinates.
/// `x * 0.0 == 0.0` holds exactly for the finite numbers and, unlike `is_finite`'s integer test,
/// compiles to packed float instructions.
fn first_non_finite(values: &[f64]) -> Option<usize> {
    first_failing(values, |&x| x * 0.0 == 0.0)
}

fn mesh_problems(mi: usize, m: &crate::Mesh) -> Vec<Problem> {
    let mut out = Vec::new();
    let nv = m.positions.len();
    let loc = format!("meshes[{mi}] \"{}\"", m.name);
    if let Some(v) = first_non_finite(bytemuck::cast_slice(&m.positions)).map(|k| k / 3) {
        out.push(Problem { location: format!("{loc} vertex {v}"), message: "position has a NaN or infinite coordinate".into() });
    }
    let corners: u64 = m.faces.counts.iter().map(|&c| c as u64).sum();
    if corners != m.faces.indices.len() as u64 {
        out.push(Problem {
            location: loc.clone(),
            message: format!("face counts add up to {corners} corners but {} indices are given", m.faces.indices.len()),
        });
    }
    if let Some(i) = first_failing(&m.faces.indices, |&i| (i as usize) < nv) {
        out.push(Problem {
            location: format!("{loc} face corner {i}"),
            message: format!("vertex index {} is out of range ({nv} vertices)", m.faces.indices[i]),
        });
    }
    match &m.normals {
        Some(Normals::PerVertex(n)) if n.len() != nv => {
            out.push(Problem { location: loc.clone(), message: format!("{} normals for {nv} vertices", n.len()) })
        }
        Some(Normals::PerCorner(n)) if n.len() != m.faces.indices.len() => out
            .push(Problem { location: loc.clone(), message: format!("{} corner normals for {} corners", n.len(), m.faces.indices.len()) }),
        _ => {}
    }
    if let Some(Normals::PerVertex(n) | Normals::PerCorner(n)) = &m.normals {
        if let Some(v) = first_non_finite(bytemuck::cast_slice(n)).map(|k| k / 3) {
            out.push(Problem { location: format!("{loc} normal {v}"), message: "normal has a NaN or infinite coordinate".into() });
        }
    }
    for (k, set) in m.uvs.iter().enumerate() {
        let (what, want) = if set.uvs.is_per_corner() { ("corner", m.faces.indices.len()) } else { ("vertex", nv) };
        let got = set.uvs.values().len();
        if got != want {
            out.push(Problem {
                location: format!("{loc} uvs[{k}]"),
                message: format!("{got} texture coordinates for {want} {what} values"),
            });
        }
        if let Some(v) = first_non_finite(bytemuck::cast_slice(set.uvs.values())).map(|k| k / 2) {
            out.push(Problem {
                location: format!("{loc} uvs[{k}] {what} {v}"),
                message: "texture coordinate has a NaN or infinite value".into(),
            });
        }
    }
    for g in &m.groups {
        if let Some(&v) = g.vertices.iter().find(|&&v| v as usize >= nv) {
            out.push(Problem {
                location: format!("{loc} group \"{}\"", g.name),
                message: format!("vertex index {v} is out of range ({nv} vertices)"),
            });
        }
    }
    out
}

fn skin_problems(doc: &Document, ki: usize, s: &crate::Skin) -> Vec<Problem> {
    let mut out = Vec::new();
    let loc = format!("skins[{ki}] \"{}\"", s.name);
    let Some(sk) = doc.get_skeleton(s.skeleton) else {
        out.push(Problem { location: loc, message: format!("skeleton index {} is out of range", s.skeleton) });
        return out;
    };
    if let Some(mi) = s.mesh {
        match doc.get_mesh(mi) {
            None => out.push(Problem { location: loc.clone(), message: format!("mesh index {mi} is out of range") }),
            Some(m) if m.positions.len() != s.vertex_count() => out.push(Problem {
                location: loc.clone(),
                message: format!("skin covers {} vertices but mesh \"{}\" has {}", s.vertex_count(), m.name, m.positions.len()),
            }),
            _ => {}
        }
    }
    for (slot, j) in s.joints.iter().enumerate() {
        if j.index() >= sk.bones.len() {
            out.push(Problem { location: format!("{loc} joint {slot}"), message: format!("bone index {} is out of range", j) });
        }
    }
    if s.inverse_bind.len() != s.joints.len() {
        out.push(Problem {
            location: loc.clone(),
            message: format!("{} inverse bind matrices for {} joints", s.inverse_bind.len(), s.joints.len()),
        });
    }
    if let Some(i) = s.inverse_bind.iter().position(|m| !m.is_finite()) {
        out.push(Problem { location: format!("{loc} inverse bind matrix {i}"), message: "has a NaN or infinite number".into() });
    }
    let inf = &s.influences;
    if inf.offsets.first() != Some(&0)
        || inf.offsets.windows(2).any(|w| w[1] < w[0])
        || inf.offsets.last().map(|&l| l as usize) != Some(inf.joints.len())
        || inf.joints.len() != inf.weights.len()
    {
        out.push(Problem {
            location: loc.clone(),
            message: "influence arrays are inconsistent (offsets, joints and weights disagree)".into(),
        });
        return out;
    }
    let nj = s.joints.len() as u32;
    // Two vectorised passes find most skins sound; only a skin with a bad influence is walked
    // vertex by vertex to name them (0.27 -> 0.1 M instructions on the Linden body).
    let sound_joints = first_failing(&inf.joints, |&j| j < nj).is_none();
    // Finite (`x * 0.0 == 0.0`) and not below zero: what the walk reports otherwise.
    let sound_weights = first_failing(&inf.weights, |&w| (w * 0.0 == 0.0) & (w >= 0.0)).is_none();
    if sound_joints && sound_weights {
        return out;
    }
    let mut reported = 0;
    for v in 0..inf.vertex_count() {
        for (j, w) in inf.vertex(v) {
            if reported >= 20 {
                break;
            }
            if j >= nj {
                out.push(Problem {
                    location: format!("{loc} vertex {v}"),
                    message: format!("joint slot {j} is out of range ({nj} joints)"),
                });
                reported += 1;
            }
            if !w.is_finite() {
                out.push(Problem { location: format!("{loc} vertex {v}"), message: "weight is NaN or infinite".into() });
                reported += 1;
            } else if w < 0.0 {
                let jn = s.joints.get(j as usize).and_then(|b| sk.bones.get(b.index())).map(|b| b.name.as_str()).unwrap_or("?");
                out.push(Problem {
                    location: format!("{loc} vertex {v}"),
                    message: format!("negative weight {w} on joint \"{jn}\"; weights must be ≥ 0"),
                });
                reported += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Bone, BoneId, Skeleton};
    use crate::frame::Frame;
    use crate::skin::{Influences, Skin};
    use glam::{DMat4, DVec3};

    fn doc(bones: Vec<Bone>) -> Document {
        let mut d = Document::new(Frame::GLTF);
        d.skeletons.push(Skeleton { name: "s".into(), bones, ext: Default::default() });
        d
    }

    /// Meshes and skins checked on every core give the problems, in the order, one thread gives.
    #[test]
    fn parallel_and_sequential_validation_agree() {
        let mut d = doc(vec![Bone::new("a", None, Transform::IDENTITY)]);
        for k in 0..12 {
            let mut m = crate::Mesh { name: format!("m{k}"), positions: vec![DVec3::ONE; 3], ..Default::default() };
            m.faces.counts = vec![3];
            m.faces.indices = vec![0, 1, if k % 5 == 2 { 7 } else { 2 }];
            if k % 4 == 1 {
                m.positions[1].x = f64::NAN;
            }
            d.meshes.push(m);
            d.skins.push(Skin {
                name: format!("s{k}"),
                skeleton: crate::SkeletonId::new(0),
                mesh: Some(crate::MeshId::from_index(k)),
                joints: vec![BoneId::new(0)],
                inverse_bind: vec![DMat4::IDENTITY; if k % 3 == 0 { 2 } else { 1 }],
                bind_shape: DMat4::IDENTITY,
                influences: Influences::from_lists(vec![vec![(if k == 7 { 3 } else { 0 }, 1.0)]; 3]),
                ext: Default::default(),
            });
        }
        let seq = validate_with(&d, usize::MAX);
        assert!(seq.len() > 10, "{seq:?}");
        assert_eq!(seq, validate_with(&d, 0));
    }

    /// A mesh's first non-finite position, normal and texture coordinate and its first vertex
    /// index out of range are each named by their own index, past the blocks tested at once.
    #[test]
    fn mesh_values_are_named_by_index() {
        for (bad, inf) in [(0usize, f64::NAN), (63, f64::INFINITY), (64, f64::NEG_INFINITY), (150, f64::NAN), (199, f64::NAN)] {
            let n = 200;
            let mut m = crate::Mesh { name: "m".into(), positions: vec![DVec3::ONE; n], ..Default::default() };
            m.faces.counts = vec![4; n / 4];
            m.faces.indices = (0..n as u32).collect();
            let mut normals = vec![DVec3::Y; n];
            let mut uvs = vec![glam::DVec2::ONE; n];
            m.positions[bad].y = inf;
            m.positions[n - 1].z = f64::NAN;
            normals[bad].z = inf;
            uvs[bad].x = inf;
            m.faces.indices[bad] = n as u32 + 5;
            m.normals = Some(Normals::PerCorner(normals));
            m.uvs = vec![crate::document::UvSet { name: String::new(), uvs: crate::document::Attribute::PerCorner(uvs) }];
            let mut d = doc(vec![Bone::new("a", None, Transform::IDENTITY)]);
            d.meshes.push(m);
            let at: Vec<String> = validate(&d).into_iter().map(|p| p.location).collect();
            let want = [
                format!("meshes[0] \"m\" vertex {bad}"),
                format!("meshes[0] \"m\" face corner {bad}"),
                format!("meshes[0] \"m\" normal {bad}"),
                format!("meshes[0] \"m\" uvs[0] corner {bad}"),
            ];
            assert_eq!(at, want, "bad value at {bad}");
        }
    }

    #[test]
    fn detects_cycle() {
        let mut a = Bone::new("a", Some(BoneId::new(1)), Transform::IDENTITY);
        a.parent = Some(BoneId::new(1));
        let b = Bone::new("b", Some(BoneId::new(0)), Transform::IDENTITY);
        let p = validate(&doc(vec![a, b]));
        assert!(p.iter().any(|p| p.message.contains("cycle") && p.message.contains("\"a\"")), "{p:?}");
    }

    #[test]
    fn detects_duplicate_and_nan() {
        let mut t = Transform::IDENTITY;
        t.translation.x = f64::NAN;
        let p = validate(&doc(vec![Bone::new("Hips", None, Transform::IDENTITY), Bone::new("Hips", Some(BoneId::new(0)), t)]));
        assert!(p.iter().any(|p| p.message.contains("duplicate bone name \"Hips\"")));
        assert!(p.iter().any(|p| p.message.contains("NaN") && p.location.contains("bones[1]")));
    }

    #[test]
    fn detects_negative_weight() {
        let mut d = doc(vec![Bone::new("root", None, Transform::IDENTITY)]);
        d.skins.push(Skin {
            name: "skin".into(),
            skeleton: crate::SkeletonId::new(0),
            mesh: None,
            joints: vec![BoneId::new(0)],
            inverse_bind: vec![DMat4::IDENTITY],
            bind_shape: DMat4::IDENTITY,
            influences: Influences::from_lists(vec![vec![(0, -0.5)]]),
            ext: Default::default(),
        });
        let p = validate(&d);
        assert!(p.iter().any(|p| p.message.contains("negative weight -0.5 on joint \"root\"") && p.location.contains("vertex 0")), "{p:?}");
    }

    /// A bad influence anywhere in a skin of many vertices (inside and at the edges of the
    /// blocks the sound-skin test reads) is named by its vertex: each kind of bad weight, and a
    /// joint slot past the skin's joints; a sound skin has no problem.
    #[test]
    fn bad_influences_are_named_by_vertex() {
        let skin = |lists: Vec<Vec<(u32, f64)>>| Skin {
            name: "skin".into(),
            skeleton: crate::SkeletonId::new(0),
            mesh: None,
            joints: vec![BoneId::new(0), BoneId::new(1)],
            inverse_bind: vec![DMat4::IDENTITY; 2],
            bind_shape: DMat4::IDENTITY,
            influences: Influences::from_lists(lists),
            ext: Default::default(),
        };
        let bones = vec![Bone::new("root", None, Transform::IDENTITY), Bone::new("b", Some(BoneId::new(0)), Transform::IDENTITY)];
        let sound: Vec<Vec<(u32, f64)>> = (0..200).map(|v| vec![(0, 0.75), (1, if v % 2 == 0 { 0.25 } else { 0.0 })]).collect();
        let mut d = doc(bones.clone());
        d.skins.push(skin(sound.clone()));
        assert!(validate(&d).is_empty(), "{:?}", validate(&d));
        for (bad, (joint, weight), says) in [
            (0usize, (1u32, f64::NAN), "NaN or infinite"),
            (31, (1, f64::INFINITY), "NaN or infinite"),
            (32, (0, f64::NEG_INFINITY), "NaN or infinite"),
            (150, (1, -0.25), "negative weight -0.25"),
            (199, (2, 0.5), "joint slot 2 is out of range"),
        ] {
            let mut lists = sound.clone();
            lists[bad].push((joint, weight));
            let mut d = doc(bones.clone());
            d.skins.push(skin(lists));
            let p = validate(&d);
            assert!(p.iter().any(|p| p.message.contains(says) && p.location.ends_with(&format!("vertex {bad}"))), "vertex {bad}: {p:?}");
        }
    }

    #[test]
    fn deep_reversed_chain_is_linear_and_reported_as_order() {
        // 65,535 bones, each the parent of the previous one: no cycle, but every parent comes late.
        let n = 65_535u32;
        let bones: Vec<Bone> =
            (0..n).map(|i| Bone::new(format!("b{i}"), (i + 1 < n).then_some(BoneId::new(i + 1)), Transform::IDENTITY)).collect();
        let mut sk = Skeleton { name: "s".into(), bones, ext: Default::default() };
        let p = validate(&doc(sk.bones.clone()));
        assert_eq!(p.len(), (n - 1) as usize);
        assert!(p[0].message.contains("comes after its child"));
        // Sorting repairs it, iteratively.
        sk.sort_parents_first().unwrap();
        assert!(validate(&doc(sk.bones)).is_empty());
    }

    #[test]
    fn valid_document_is_clean() {
        let d = doc(vec![Bone::new("root", None, Transform::IDENTITY), Bone::new("child", Some(BoneId::new(0)), Transform::IDENTITY)]);
        assert!(validate(&d).is_empty());
    }
}
