//! Smooth normals, the vertex split at seams and the per-vertex collapse (`skelport_ir::proc`).

use proptest::prelude::*;
use skelport_ir::proc::{per_vertex_if_uniform, smooth_normals, split_vertices, NO_CORNER};
use skelport_ir::{Attribute, DVec2, DVec3, Faces};

/// A random polygon mesh: `n` vertices, faces of 3–5 corners, and per corner a UV picked from
/// a palette of two per vertex (so some vertices have seams and some not).
fn mesh() -> impl Strategy<Value = (usize, Faces, Vec<DVec2>)> {
    (1usize..40).prop_flat_map(|n| {
        let face = (3usize..6).prop_flat_map(move |k| proptest::collection::vec((0..n as u32, any::<bool>()), k));
        proptest::collection::vec(face, 0..30).prop_map(move |fs| {
            let mut faces = Faces::default();
            let mut uvs = Vec::new();
            for f in fs {
                faces.counts.push(f.len() as u32);
                for (v, side) in f {
                    faces.indices.push(v);
                    // Vertices divisible by 3 never have a seam.
                    let seam = side && v % 3 != 0;
                    uvs.push(DVec2::new(v as f64, if seam { 1.0 } else { 0.0 }));
                }
            }
            (n, faces, uvs)
        })
    })
}

proptest! {
    /// Every corner lands on a copy of its own vertex holding its value; the copies of one
    /// vertex hold different values; the source's vertices keep their numbers; no copy is unused.
    #[test]
    fn split_keeps_each_corner_and_only_splits_at_seams((n, faces, uvs) in mesh()) {
        let s = split_vertices(n, &faces.indices, |a, b| uvs[a] == uvs[b]);
        prop_assert_eq!(s.corner_vertex.len(), faces.indices.len());
        prop_assert_eq!(s.len(), n + s.extra.len());
        let values = s.values(&Attribute::PerCorner(uvs.clone()), DVec2::splat(-1.0));
        for (c, &o) in s.corner_vertex.iter().enumerate() {
            prop_assert_eq!(s.source(o as usize), faces.indices[c] as usize);
            prop_assert_eq!(values[o as usize], uvs[c]);
        }
        for o in 0..s.len() {
            if o >= n {
                prop_assert!(s.corner_of[o] != NO_CORNER, "copy {} unused", o);
            }
            for p in o + 1..s.len() {
                if s.source(o) == s.source(p) {
                    prop_assert!(values[o] != values[p], "{} and {} are one value", o, p);
                }
            }
        }
        // A vertex is split only where its corners differ: vertices divisible by 3 never are.
        prop_assert!(s.extra.iter().all(|&v| v % 3 != 0));
        // No per-corner values, no split.
        let whole = split_vertices(n, &faces.indices, |_, _| true);
        prop_assert!(whole.extra.is_empty());
        prop_assert_eq!(&whole.corner_vertex, &faces.indices);
    }

    /// The collapse to per-vertex happens exactly when no vertex has two values, and gives each
    /// corner its value back.
    #[test]
    fn collapse_is_exact((n, faces, uvs) in mesh()) {
        let seams = !split_vertices(n, &faces.indices, |a, b| uvs[a] == uvs[b]).extra.is_empty();
        match per_vertex_if_uniform(n, &faces.indices, uvs.clone(), DVec2::ZERO) {
            Attribute::PerVertex(v) => {
                prop_assert!(!seams);
                prop_assert_eq!(v.len(), n);
                for (c, &i) in faces.indices.iter().enumerate() {
                    prop_assert_eq!(v[i as usize], uvs[c]);
                }
            }
            Attribute::PerCorner(c) => {
                prop_assert!(seams);
                prop_assert_eq!(c, uvs);
            }
        }
    }
}

/// Area weighting: a vertex shared by a big and a small face leans to the big one's normal;
/// duplicated vertices at one position stay apart; a quad and its two triangles agree.
#[test]
fn smooth_normals_are_area_weighted_and_split_where_the_source_splits() {
    // Two faces meeting at the edge 0–1 on the x axis: a 1×1 square in the xy plane (+z up)
    // and a thin 1×0.1 strip folded up into the xz plane (normal +y, by its winding).
    let positions = vec![
        DVec3::new(0.0, 0.0, 0.0),
        DVec3::new(1.0, 0.0, 0.0),
        DVec3::new(1.0, 1.0, 0.0),
        DVec3::new(0.0, 1.0, 0.0),
        DVec3::new(1.0, 0.0, 0.1),
        DVec3::new(0.0, 0.0, 0.1),
    ];
    let faces = Faces { counts: vec![4, 4], indices: vec![0, 1, 2, 3, 1, 0, 5, 4] };
    let n = smooth_normals(&positions, &faces);
    let want = (DVec3::Z + DVec3::Y * 0.1).normalize();
    assert!((n[0] - want).length() < 1e-12, "{}", n[0]);
    assert!((n[2] - DVec3::Z).length() < 1e-12 && (n[4] - DVec3::Y).length() < 1e-12);
    // The strip on its own copies of vertices 0 and 1 (a split the source made): no blending.
    let mut split = positions.clone();
    split.extend([positions[0], positions[1]]);
    let faces2 = Faces { counts: vec![4, 4], indices: vec![0, 1, 2, 3, 7, 6, 5, 4] };
    let n2 = smooth_normals(&split, &faces2);
    assert!((n2[0] - DVec3::Z).length() < 1e-12 && (n2[6] - DVec3::Y).length() < 1e-12);
    // Triangulated, the vertices of the square alone keep +z (a vertex on both faces weighs
    // them by the areas of its own triangles, which differ from the polygons').
    let tri = Faces { counts: vec![3; 4], indices: faces.triangulate() };
    let n3 = smooth_normals(&positions, &tri);
    for v in [2, 3] {
        assert!((n3[v] - n[v]).length() < 1e-12, "vertex {v}");
    }
    // An unused vertex, and a corner past the positions, give zero without a panic.
    let mut more = positions.clone();
    more.push(DVec3::ONE);
    let bad = Faces { counts: vec![3], indices: vec![0, 1, 99] };
    assert_eq!(smooth_normals(&more, &bad)[6], DVec3::ZERO);
}

#[test]
fn triangulated_corners_follow_triangulate() {
    let faces = Faces { counts: vec![4, 3, 5], indices: vec![10, 11, 12, 13, 20, 21, 22, 30, 31, 32, 33, 34] };
    let corners = faces.triangulated_corners();
    let by_corner: Vec<u32> = corners.iter().map(|&c| faces.indices[c as usize]).collect();
    assert_eq!(by_corner, faces.triangulate());
    // A last face cut short (an invalid document) gives what `triangulate` gives, no panic.
    let short = Faces { counts: vec![3, 4], indices: vec![0, 1, 2, 3, 4, 5] };
    let by_corner: Vec<u32> = short.triangulated_corners().iter().map(|&c| short.indices[c as usize]).collect();
    assert_eq!(by_corner, short.triangulate());
    // Only triangles take a shorter way: the same corners. Faces whose counts add up to three a
    // face without all being triangles, and triangles with indices missing or to spare, do not.
    let tris = Faces { counts: vec![3; 5], indices: (100..115).collect() };
    assert_eq!(tris.triangulated_corners(), (0..15).collect::<Vec<u32>>());
    for faces in [
        Faces { counts: vec![2, 4], indices: (0..6).collect() },
        Faces { counts: vec![3, 3, 1, 5], indices: (0..12).collect() },
        Faces { counts: vec![3, 3], indices: (0..5).collect() },
        Faces { counts: vec![3, 3], indices: (0..7).collect() },
    ] {
        let by_corner: Vec<u32> = faces.triangulated_corners().iter().map(|&c| faces.indices[c as usize]).collect();
        assert_eq!(by_corner, faces.triangulate(), "{faces:?}");
    }
}
