//! The acceptance test of the converter (issue 8, "proof by skinning"): every corpus source taken
//! through the formats that can express it (glTF ↔ G4MF ↔ ir-json, MPFB → glTF → MPFB, SL → glTF →
//! SL, AC → glTF → AC) deforms like its source under the same 20 random poses, within 1e-5 m.
//! docs/conversion-matrix.md shows the same rows (`cargo xtask matrix`).

use skelport::matrix::{pose_rows, sources, POSES, POSE_TOLERANCE};

#[test]
fn every_expressible_conversion_skins_like_its_source() {
    let corpus = skelport_ir::testing::corpus_root();
    let srcs = sources(corpus.as_deref());
    let rows = pose_rows(&srcs);
    // The demo sample always runs; with the corpus, MPFB, glTF, SL and AC sources too.
    let want = if corpus.is_some() { 23 } else { 4 };
    assert_eq!(rows.len(), want, "{rows:#?}");
    let mut bad = Vec::new();
    for r in &rows {
        match (&r.test, &r.error) {
            (Some(t), _) => {
                assert_eq!(t.poses, POSES);
                assert!(t.vertices > 0 || t.joints > 0, "{} via {}: nothing compared", r.source, r.path);
                if t.max_deviation > POSE_TOLERANCE {
                    bad.push(format!("{} via {}: {:.2e} m", r.source, r.path, t.max_deviation));
                }
            }
            (None, e) => bad.push(format!("{} via {}: {}", r.source, r.path, e.as_deref().unwrap_or("?"))),
        }
    }
    assert!(bad.is_empty(), "over {POSE_TOLERANCE} m or failed:\n{}", bad.join("\n"));
}
