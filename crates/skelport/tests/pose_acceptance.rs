//! The acceptance test of the converter (issue 8, "proof by skinning"): every corpus source taken
//! through every format that can express it (what `Format::holds` says), and through the first of
//! them back to its own format, deforms like its source under the same 20 random poses, within
//! 1e-5 m. docs/conversion-matrix.md shows the same rows (`cargo xtask matrix`).

use skelport::matrix::{pose_rows, sources, POSES, POSE_TOLERANCE};

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn every_expressible_conversion_skins_like_its_source() {
    let corpus = skelport_ir::testing::corpus_root();
    let srcs = sources(corpus.as_deref());
    let rows = pose_rows(&srcs);
    // The demo sample and the AC fixtures always run; with the corpus, MPFB, glTF and SL sources
    // too (and a file of plain meshes, which has nothing to pose). Each source with bones takes
    // at least one chain, and every format that reads and writes is in one.
    assert_eq!(srcs.len(), if corpus.is_some() { 9 } else { 3 });
    for s in srcs.iter().filter(|s| s.doc.skeletons.iter().any(|k| !k.bones.is_empty())) {
        assert!(rows.iter().any(|r| r.source == s.label), "{}: no chain", s.label);
    }
    // Every format that reads, writes and keeps rest orientations is in one (VRM re-rests into a
    // T-pose by design; its own pose test is crates/skelport-cli/tests/vrm.rs).
    for f in skelport::formats().iter().filter(|f| f.can_read() && f.can_write() && f.holds().orientations) {
        assert!(rows.iter().any(|r| r.path.split(" → ").any(|p| p == f.name())), "{}: in no chain", f.name());
    }
    let mut bad = Vec::new();
    for r in &rows {
        match (&r.test, &r.error) {
            (Some(t), _) => {
                assert_eq!(t.poses, POSES);
                assert!(t.vertices > 0 || t.joints > 0 || t.matrices > 0, "{} via {}: nothing compared", r.source, r.path);
                if t.max_deviation > POSE_TOLERANCE {
                    bad.push(format!("{} via {}: {:.2e} m", r.source, r.path, t.max_deviation));
                }
            }
            (None, e) => bad.push(format!("{} via {}: {}", r.source, r.path, e.as_deref().unwrap_or("?"))),
        }
    }
    assert!(bad.is_empty(), "over {POSE_TOLERANCE} m or failed:\n{}", bad.join("\n"));
}
