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
        let (ka, kb) = (&a.skeletons[sa.skeleton], &b.skeletons[sb.skeleton]);
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
                let (pa, pb) = (&a.meshes[ma].positions, &b.meshes[mb].positions);
                assert_eq!(pa.len(), pb.len());
                let d = pa.iter().zip(pb).map(|(x, y)| (*x - *y).length()).fold(0.0, f64::max);
                assert!(d < 1e-5, "{what}: positions differ by {d}");
                assert_eq!(a.meshes[ma].faces.triangulate().len(), b.meshes[mb].faces.triangulate().len(), "{what}: triangles");
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
fn fox_round_trip() {
    corpus_roundtrip("gltf/Fox/Fox.glb", "fox", 24);
}

#[test]
fn simple_skin_round_trip() {
    corpus_roundtrip("gltf/SimpleSkin/SimpleSkin.gltf", "simpleskin", 2);
}

#[test]
fn hand_round_trip() {
    corpus_roundtrip("gltf/webxr-generic-hand/left.glb", "hand", 25);
}
