//! Helpers for tests across the workspace: finding the third-party corpus.
//!
//! The corpus lives beside the project at `../shared/corpus` (or wherever `$SKELPORT_CORPUS`
//! points). Its files are never copied into the project. When `CI` is set and the corpus is
//! missing, [`corpus_root`] panics so the test fails instead of silently skipping.

use std::path::PathBuf;

/// The corpus directory, or `None` outside CI when it is absent (tests then skip with a note).
///
/// # Panics
/// When the `CI` environment variable is set and the corpus cannot be found.
#[allow(clippy::print_stderr, reason = "tells a test run why corpus tests did nothing")]
pub fn corpus_root() -> Option<PathBuf> {
    let candidates: Vec<PathBuf> = match std::env::var_os("SKELPORT_CORPUS") {
        Some(p) => vec![PathBuf::from(p)],
        None => {
            // Walk up from the crate directory to the workspace root, then `../shared/corpus`.
            let mut v = Vec::new();
            let mut dir = Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")));
            while let Some(d) = dir {
                v.push(d.join("../shared/corpus"));
                dir = d.parent().map(PathBuf::from);
            }
            v
        }
    };
    for c in candidates {
        if c.is_dir() {
            return c.canonicalize().ok().or(Some(c));
        }
    }
    if std::env::var_os("CI").is_some() {
        panic!("the corpus was not found at ../shared/corpus or $SKELPORT_CORPUS, and CI is set: corpus tests must not be skipped");
    }
    eprintln!("note: corpus not found (set SKELPORT_CORPUS); skipping corpus test");
    None
}

/// A path inside the corpus, or `None` when the corpus is absent outside CI.
pub fn corpus_file(rel: &str) -> Option<PathBuf> {
    corpus_root().map(|r| r.join(rel))
}

/// The workspace root (for `testdata/` and `schemas/`).
pub fn workspace_root() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("testdata").is_dir() || !dir.join("crates").is_dir() {
        if !dir.pop() {
            return PathBuf::from(".");
        }
    }
    dir
}

/// A synthetic skinned body for benchmarks and tests: `bones` joints in a binary tree (each 5 cm
/// from its parent along the frame's up axis, slightly turned), a `w` × `h` grid of quads 1 cm
/// apart, and four influences per vertex (0.4, 0.3, 0.2, 0.1). `w` = 124, `h` = 154 and 163
/// bones is MakeHuman-sized (19,096 vertices, like base.obj's 19,158).
pub fn synthetic_body(frame: crate::Frame, bones: u32, w: usize, h: usize) -> crate::Document {
    use crate::{Bone, BoneId, DMat4, DQuat, DVec3, Document, Faces, Influences, Mesh, Skeleton, Skin, Transform};
    let mut doc = Document::new(frame);
    let mut sk = Skeleton::new("body");
    let up = if frame == crate::Frame::BLENDER { DVec3::Z } else { DVec3::Y };
    for i in 0..bones {
        let parent = if i == 0 { None } else { Some(BoneId::new((i - 1) / 2)) };
        sk.push(Bone::new(format!("bone{i}"), parent, Transform::from_rt(DQuat::from_rotation_x(0.01 * i as f64), up * 0.05)));
    }
    let inverse_bind: Vec<DMat4> = sk.world_matrices().iter().map(|m| m.inverse()).collect();
    doc.skeletons.push(sk);
    let positions: Vec<DVec3> = (0..w * h).map(|i| DVec3::new((i % w) as f64 * 0.01, 0.0, 0.0) + up * ((i / w) as f64 * 0.012)).collect();
    let mut faces = Faces::default();
    for z in 0..h.saturating_sub(1) {
        for x in 0..w.saturating_sub(1) {
            let a = (z * w + x) as u32;
            faces.counts.push(4);
            faces.indices.extend([a, a + 1, a + 1 + w as u32, a + w as u32]);
        }
    }
    let n = positions.len();
    doc.meshes.push(Mesh { name: "body".into(), positions, faces, ..Default::default() });
    let last = bones.saturating_sub(4);
    let lists = (0..n).map(|v| {
        let j = (v as u32) % (last + 1);
        vec![(j, 0.4), (j + 1, 0.3), (j + 2, 0.2), (j + 3, 0.1)]
    });
    doc.skins.push(Skin {
        name: "body".into(),
        skeleton: crate::SkeletonId::new(0),
        mesh: Some(crate::MeshId::new(0)),
        joints: (0..bones).map(BoneId::new).collect(),
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(lists),
        ext: Default::default(),
    });
    doc
}

/// `doc` with its meshes and skins `copies` times over: copy `c` (from 1) renamed `<name>_<c>`,
/// its skins pointing at its own meshes. A big multi-mesh document for benchmarks and for the
/// tests that hold parallel paths equal to one thread.
pub fn repeated(doc: &crate::Document, copies: usize) -> crate::Document {
    let mut out = doc.clone();
    for c in 1..copies {
        for m in &doc.meshes {
            let mut m = m.clone();
            m.name = format!("{}_{c}", m.name);
            out.meshes.push(m);
        }
        for s in &doc.skins {
            let mut s = s.clone();
            s.name = format!("{}_{c}", s.name);
            s.mesh = s.mesh.map(|i| crate::MeshId::from_index(i.index() + c * doc.meshes.len()));
            out.skins.push(s);
        }
    }
    out
}

/// A deterministic pseudo-random sequence (xorshift64: each call steps the state and returns
/// it) for tests that generate inputs. `seed` must not be 0.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// How the corners of `b` (a re-read mesh) map onto the corners of `a` (its source): corner
/// `k` of `b` is corner `map[k]` of `a`. Defined when `b` has `a`'s faces (same vertex numbers)
/// or their fan triangulation (what glTF and G4MF store); `None` otherwise.
pub fn corner_map(a: &crate::Faces, b: &crate::Faces) -> Option<Vec<u32>> {
    if a == b {
        return Some((0..a.indices.len() as u32).collect());
    }
    if b.counts.iter().all(|&c| c == 3) && b.indices == a.triangulate() {
        return Some(a.triangulated_corners());
    }
    None
}

/// An attribute's value at corner `c` of `faces`, per vertex or per corner.
pub fn corner_value<T: Copy>(attr: &crate::Attribute<T>, faces: &crate::Faces, c: usize) -> Option<T> {
    match attr {
        crate::Attribute::PerVertex(v) => v.get(*faces.indices.get(c)? as usize).copied(),
        crate::Attribute::PerCorner(v) => v.get(c).copied(),
    }
}

/// The largest distance, over the corners of `b`, between `b`'s value and `a`'s at the same
/// corner ([`corner_map`]); `dist` measures two values. `None` when the faces do not map or a
/// corner has no value.
pub fn max_corner_delta<T: Copy>(
    a: (&crate::Attribute<T>, &crate::Faces),
    b: (&crate::Attribute<T>, &crate::Faces),
    dist: impl Fn(T, T) -> f64,
) -> Option<f64> {
    let map = corner_map(a.1, b.1)?;
    let mut worst = 0.0f64;
    for (k, &c) in map.iter().enumerate() {
        let (x, y) = (corner_value(a.0, a.1, c as usize)?, corner_value(b.0, b.1, k)?);
        worst = worst.max(dist(x, y));
    }
    Some(worst)
}

/// UV set `set` of `b` against `a`'s, corner by corner (texture units).
pub fn uv_delta(a: &crate::Mesh, b: &crate::Mesh, set: usize) -> Option<f64> {
    let (sa, sb) = (a.uvs.get(set)?, b.uvs.get(set)?);
    max_corner_delta((&sa.uvs, &a.faces), (&sb.uvs, &b.faces), |x, y| x.distance(y))
}

/// `b`'s normals against `a`'s, corner by corner, as the distance between the unit vectors
/// (≈ the angle in radians). Both meshes must be in one frame.
pub fn normal_delta(a: &crate::Mesh, b: &crate::Mesh) -> Option<f64> {
    let (na, nb) = (a.normals.as_ref()?, b.normals.as_ref()?);
    max_corner_delta((na, &a.faces), (nb, &b.faces), |x, y| x.normalize_or_zero().distance(y.normalize_or_zero()))
}
