//! Round trips over the real corpus (Fox, SimpleSkin, the WebXR hand) and the Khronos
//! validator's skin cases. Set `SKELPORT_GLTF_OUT=<dir>` to keep the written files there (CI
//! runs the Khronos validator over them).

use skelport_gltf::{GlbFormat, GltfFormat};
use skelport_ir::testing::corpus_file;
use skelport_ir::{DMat4, Diagnostics, Document, Format, Input, ReadOptions, WriteOptions};
use std::path::{Path, PathBuf};

fn read_path(path: &Path) -> Result<(Document, Diagnostics), String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    let mut diag = Diagnostics::default();
    let doc = GltfFormat.read(Input { path: Some(path), bytes: &bytes }, &ReadOptions::default(), &mut diag).map_err(|e| e.to_string())?;
    Ok((doc, diag))
}

/// Write `doc` with `format` into `dir` as `<stem>.<ext>` (+ side files) and return the main path.
fn write_to(doc: &Document, format: &dyn Format, dir: &Path, stem: &str, opts: &WriteOptions) -> PathBuf {
    let mut diag = Diagnostics::default();
    let opts = WriteOptions { file_stem: stem.into(), ..opts.clone() };
    let out = format.write(doc, &opts, &mut diag).expect("write");
    let path = dir.join(format!("{stem}.{}", format.extensions()[0]));
    std::fs::write(&path, &out.main).unwrap();
    for (name, bytes) in &out.side_files {
        std::fs::write(dir.join(name), bytes).unwrap();
    }
    if let Some(keep) = std::env::var_os("SKELPORT_GLTF_OUT") {
        let keep = PathBuf::from(keep);
        std::fs::create_dir_all(&keep).unwrap();
        std::fs::write(keep.join(path.file_name().unwrap()), &out.main).unwrap();
        for (name, bytes) in &out.side_files {
            std::fs::write(keep.join(name), bytes).unwrap();
        }
    }
    path
}

fn max_diff(a: &DMat4, b: &DMat4) -> f64 {
    a.to_cols_array().iter().zip(b.to_cols_array()).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// Joint world positions, inverse bind matrices and normalized influences agree.
fn assert_same_skins(a: &Document, b: &Document, what: &str) {
    assert_eq!(a.skins.len(), b.skins.len(), "{what}: skin count");
    for (sa, sb) in a.skins.iter().zip(&b.skins) {
        let (ka, kb) = (a.skeleton(sa.skeleton), b.skeleton(sb.skeleton));
        assert_eq!(sa.joints.len(), sb.joints.len(), "{what}: joint count");
        let (wa, wb) = (ka.world_matrices(), kb.world_matrices());
        for (ja, jb) in sa.joints.iter().zip(&sb.joints) {
            let (ba, bb) = (&ka.bones[ja.index()], &kb.bones[jb.index()]);
            assert_eq!(ba.name, bb.name, "{what}: joint order");
            let d = (wa[ja.index()].w_axis - wb[jb.index()].w_axis).length();
            assert!(d < 1e-6, "{what}: joint {} moved by {d}", ba.name);
        }
        for (k, (ma, mb)) in sa.inverse_bind.iter().zip(&sb.inverse_bind).enumerate() {
            let d = max_diff(ma, mb);
            assert!(d < 1e-6, "{what}: inverse bind matrix {k} differs by {d}");
        }
        let (mut ia, mut ib) = (sa.influences.clone(), sb.influences.clone());
        for i in [&mut ia, &mut ib] {
            i.prune(0.0);
            i.normalize();
            i.sort_descending();
        }
        assert_eq!(ia.vertex_count(), ib.vertex_count(), "{what}: vertex count");
        for v in 0..ia.vertex_count() {
            let (la, lb): (Vec<_>, Vec<_>) = (ia.vertex(v).collect(), ib.vertex(v).collect());
            assert_eq!(la.len(), lb.len(), "{what}: vertex {v} influence count");
            for (x, y) in la.iter().zip(&lb) {
                assert_eq!(x.0, y.0, "{what}: vertex {v} joint");
                assert!((x.1 - y.1).abs() < 1e-6, "{what}: vertex {v} weight {} vs {}", x.1, y.1);
            }
        }
        match (sa.mesh, sb.mesh) {
            (Some(ma), Some(mb)) => {
                let (pa, pb) = (&a.mesh(ma).positions, &b.mesh(mb).positions);
                assert_eq!(pa.len(), pb.len());
                let d = pa.iter().zip(pb).map(|(x, y)| (*x - *y).length()).fold(0.0, f64::max);
                assert!(d < 1e-5, "{what}: positions differ by {d}");
                assert_eq!(a.mesh(ma).faces.triangulate().len(), b.mesh(mb).faces.triangulate().len(), "{what}: triangles");
            }
            (None, None) => {}
            _ => panic!("{what}: mesh presence differs"),
        }
    }
}

fn corpus_roundtrip(rel: &str, stem: &str, joints: usize) {
    let Some(path) = corpus_file(rel) else { return };
    let (doc, _) = read_path(&path).unwrap();
    assert_eq!(doc.skins.len(), 1, "{rel}");
    assert_eq!(doc.skins[0].joints.len(), joints, "{rel}");
    assert!(skelport_ir::validate::validate(&doc).is_empty(), "{rel}: {:?}", skelport_ir::validate::validate(&doc));
    let dir = tempfile::tempdir().unwrap();
    for (format, embed) in [(&GltfFormat as &dyn Format, false), (&GltfFormat, true), (&GlbFormat, false)] {
        let s = format!("{stem}{}", if embed { "-embedded" } else { "" });
        let p = write_to(&doc, format, dir.path(), &s, &WriteOptions { embed, ..Default::default() });
        let (back, _) = read_path(&p).unwrap();
        assert_same_skins(&doc, &back, &format!("{rel} via {}", p.display()));
        // And once more: the second trip is stable too.
        let p2 = write_to(&back, format, dir.path(), &format!("{s}-2"), &WriteOptions { embed, ..Default::default() });
        let (back2, _) = read_path(&p2).unwrap();
        assert_same_skins(&back, &back2, "second trip");
    }
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn fox_round_trip() {
    corpus_roundtrip("gltf/Fox/Fox.glb", "fox", 24);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn simple_skin_round_trip() {
    corpus_roundtrip("gltf/SimpleSkin/SimpleSkin.gltf", "simpleskin", 2);
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn hand_round_trip() {
    corpus_roundtrip("gltf/webxr-generic-hand/left.glb", "hand", 25);
}

/// The Khronos validator's skin cases: files whose expected report has no error must load; the
/// others must be refused, with a message naming the rule the report names.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn validator_skin_cases() {
    // (file, expected: Ok(skins) or Err(substring of the error))
    let cases: &[(&str, Result<usize, &str>)] = &[
        ("skin/valid.gltf", Ok(1)),
        ("skin/custom_property.gltf", Ok(1)),
        ("skin/ignored_animated_transform.gltf", Ok(1)),
        ("skin/ignored_local_transform.gltf", Ok(1)),
        ("skin/ignored_parent_transform.gltf", Ok(1)),
        ("node/node_skinned_mesh_without_skin.gltf", Ok(0)),
        ("mesh/unequal_joints.gltf", Err("must both be present")),
        ("mesh_data/joints_no_weights.gltf", Err("exceeds the buffer")),
        ("mesh_data/joints_weights_complex.gltf", Err("out of range")),
        ("node/node_skin_without_skinned_mesh.gltf", Err("no JOINTS_0")),
        ("node/skin_with_no_mesh.gltf", Err("must also have a mesh")),
        ("node/unresolved_skin.gltf", Err("/nodes/0/skin")),
        ("skin/buffer_view_bytestride.gltf", Err("byteStride")),
        ("skin/empty_array.gltf", Err("/skins")),
        ("skin/empty_joints_array.gltf", Err("joints must not be empty")),
        ("skin/empty_object.gltf", Err("missing field `joints`")),
        ("skin/ibm_invalid_count.gltf", Err("at least 3 elements; found 2")),
        ("skin/ibm_invalid_format.gltf", Err("MAT4 accessor of FLOAT")),
        ("skin/no_common_root.gltf", Err("common root")),
        ("skin/no_joints_in_scene.gltf", Err("does not contain the skin's joints")),
        ("skin/skeleton_invalid.gltf", Err("/skins/0/skeleton")),
        ("skin/unresolved_ibm.gltf", Err("/skins/0/inverseBindMatrices")),
        ("skin/unresolved_joint.gltf", Err("/skins/0/joints/")),
        ("skin/unresolved_skeleton.gltf", Err("/skins/0/skeleton")),
        ("skin_data/invalid_ibm.gltf", Err("not a valid inverse bind matrix")),
    ];
    let Some(root) = corpus_file("gltf/validator-skin-cases") else { return };
    let mut seen = 0;
    for (rel, want) in cases {
        let path = root.join(rel);
        // The expected report agrees with the table: no error ⇔ must load.
        let report: serde_json::Value = serde_json::from_slice(&std::fs::read(format!("{}.report.json", path.display())).unwrap()).unwrap();
        let errors = report["issues"]["numErrors"].as_u64().unwrap();
        assert_eq!(errors == 0, want.is_ok(), "{rel}: table disagrees with the expected report");
        match (read_path(&path), want) {
            (Ok((doc, _)), Ok(n)) => {
                assert_eq!(doc.skins.len(), *n, "{rel}");
                assert!(skelport_ir::validate::validate(&doc).is_empty(), "{rel}: {:?}", skelport_ir::validate::validate(&doc));
            }
            (Err(e), Err(s)) => assert!(e.contains(s), "{rel}: error '{e}' should mention '{s}'"),
            (got, want) => panic!("{rel}: expected {want:?}, got {:?}", got.map(|d| d.0.skins.len())),
        }
        seen += 1;
    }
    // Every case in the folder is in the table.
    let mut files = 0;
    for sub in std::fs::read_dir(&root).unwrap().flatten() {
        if sub.path().is_dir() {
            files += std::fs::read_dir(sub.path()).unwrap().flatten().filter(|f| f.path().extension().is_some_and(|e| e == "gltf")).count();
        }
    }
    assert_eq!(files, seen);
}

/// The Khronos validator gate, run when `GLTF_VALIDATOR` points at the npm package
/// (`node_modules/gltf-validator`): every round-trip output must have 0 errors and 0 warnings.
/// Without it the test only notes that it skipped (CI sets it).
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn khronos_validator_gate() {
    let Some(validator) = std::env::var_os("GLTF_VALIDATOR") else {
        eprintln!("note: GLTF_VALIDATOR not set; skipping the Khronos validator gate");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let mut files = Vec::new();
    for (rel, stem) in
        [("gltf/Fox/Fox.glb", "fox"), ("gltf/SimpleSkin/SimpleSkin.gltf", "simpleskin"), ("gltf/webxr-generic-hand/left.glb", "hand")]
    {
        let Some(path) = corpus_file(rel) else { return };
        let (doc, _) = read_path(&path).unwrap();
        for (format, embed) in [(&GltfFormat as &dyn Format, false), (&GltfFormat, true), (&GlbFormat, false)] {
            let s = format!("{stem}{}", if embed { "-embedded" } else { "" });
            files.push(write_to(&doc, format, dir.path(), &s, &WriteOptions { embed, ..Default::default() }));
        }
    }
    let script = skelport_ir::testing::workspace_root().join(".ci/tools/gltf-validate.mjs");
    let out = std::process::Command::new("node").arg(script).args(&files).env("GLTF_VALIDATOR", validator).output().expect("run node");
    let text = String::from_utf8_lossy(&out.stdout);
    eprintln!("{text}");
    assert!(out.status.success(), "validator found errors or warnings:\n{text}{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(text.lines().filter(|l| l.contains(": 0 errors, 0 warnings")).count(), files.len());
}
