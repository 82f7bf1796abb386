//! UVs and normals through every writer and back (issue 22): MakeHuman's base mesh (21,334
//! texture coordinates, per-corner seams, no normals) and the glTF corpus files that carry
//! TEXCOORD_0 and NORMAL, compared at every face corner; chains through several formats too.

use skelport::matrix::{cell, Attr, Source};
use skelport::registry;
use skelport_ir::testing::{normal_delta, uv_delta};
use skelport_ir::{Diagnostics, Document, Input, ReadOptions, WriteOptions};

const CLOSE: f64 = 1e-6;
/// Normals are compared where the rest skinning puts them (float32 matrices, re-normalised).
const CLOSE_NORMALS: f64 = 1e-5;

/// A corpus file read with the format `format`, as a matrix source.
fn source(label: &str, path: &std::path::Path, format: &str, opts: ReadOptions) -> Source {
    let f = skelport::format(format).unwrap();
    let loaded = skelport::open(path, &skelport::OpenOptions { from: Some(format.into()), reader: opts.clone() }).unwrap();
    Source { label: label.into(), doc: loaded.doc, format: Some(f), read: opts }
}

fn mpfb_source(c: &std::path::Path) -> Source {
    let rigs = c.join("mpfb/rigs/standard");
    let opts = ReadOptions {
        mesh: Some(c.join("mpfb/3dobjs/base.obj")),
        weights: Some(rigs.join("weights.game_engine.json")),
        ..Default::default()
    };
    source("MPFB game_engine + base.obj", &rigs.join("rig.game_engine.json"), "mpfb", opts)
}

fn gltf_source(c: &std::path::Path, rel: &str) -> Source {
    source(rel, &c.join(rel), "glb", ReadOptions::default())
}

fn kept(a: Attr) -> bool {
    matches!(a, Attr::Kept(d) if d < CLOSE)
}

/// Each source through each writer that holds meshes and back: UVs kept at every corner;
/// normals kept, or computed (smooth) where the source has none and the format draws a mesh
/// without normals faceted (glTF) or flat (G4MF); ir-json keeps exactly what there is.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn every_mesh_writer_keeps_uvs_and_normals() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let sources = [
        (mpfb_source(&c), true, false),
        (gltf_source(&c, "realworld/khr_CesiumMan.glb"), true, true),
        (gltf_source(&c, "gltf/Fox/Fox.glb"), true, false),
        (gltf_source(&c, "realworld/threejs_RobotExpressive.glb"), false, true),
    ];
    let mut bad = Vec::new();
    for (src, has_uvs, has_normals) in &sources {
        assert_eq!(src.doc.meshes.iter().any(|m| !m.uvs.is_empty()), *has_uvs, "{}", src.label);
        assert_eq!(src.doc.meshes.iter().all(|m| m.normals.is_some()), *has_normals, "{}", src.label);
        for fmt in ["glb", "gltf", "g4tf", "g4b", "ir-json"] {
            let c = cell(src, registry::by_name(fmt).unwrap());
            let uvs_ok = if *has_uvs { kept(c.uvs) } else { c.uvs == Attr::Absent };
            let normals_ok = match (*has_normals, fmt) {
                (true, _) => matches!(c.normals, Attr::Kept(d) if d < CLOSE_NORMALS),
                (false, "ir-json") => c.normals == Attr::Absent,
                (false, _) => matches!(c.normals, Attr::Computed(d) if d < CLOSE_NORMALS),
            };
            if !c.ok || !uvs_ok || !normals_ok {
                bad.push(format!("{} → {fmt}: ok {} {:?}, uvs {:?}, normals {:?}", src.label, c.ok, c.error, c.uvs, c.normals));
            }
        }
        // The skeleton-only formats say they drop the mesh. MPFB keeps no mesh either: read back
        // on base.obj (as the matrix reads a source's own format) its UVs are base.obj's, whole.
        for fmt in ["anvil", "mpfb"] {
            let c = cell(src, registry::by_name(fmt).unwrap());
            let own_base_mesh = fmt == "mpfb" && src.label.starts_with("MPFB") && kept(c.uvs);
            if *has_uvs && c.uvs != Attr::NoMesh && !own_base_mesh {
                bad.push(format!("{} → {fmt}: uvs {:?}", src.label, c.uvs));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Write `doc` as `fmt` into `dir` and read it back (MPFB with base.obj and its weights).
fn through(doc: &Document, fmt: &str, dir: &std::path::Path, mesh: Option<&std::path::Path>) -> Document {
    let f = registry::by_name(fmt).unwrap();
    let path = dir.join(format!("chain.{}", f.extensions()[0]));
    let out = f.write(doc, &WriteOptions { file_stem: "rig.chain".into(), ..Default::default() }, &mut Diagnostics::default()).unwrap();
    std::fs::write(&path, &out.main).unwrap();
    for (n, b) in &out.side_files {
        std::fs::write(dir.join(n), b).unwrap();
    }
    let weights = out.side_files.iter().find(|s| s.0.starts_with("weights.")).map(|s| dir.join(&s.0));
    let opts = ReadOptions { weights, mesh: mesh.map(|m| m.to_path_buf()), ..Default::default() };
    let back = f.read(Input { path: Some(&path), bytes: &out.main }, &opts, &mut Diagnostics::default()).unwrap();
    assert_eq!(skelport_ir::validate::validate(&back), vec![], "{fmt}");
    back
}

/// base.obj's UVs through glb → g4b → ir-json → gltf → mpfb (re-read on base.obj) and back to
/// glb: every corner keeps its UV, on the base mesh's own vertices (the split copies folded
/// back at each glTF read), with the smooth normals the first writer computed kept from then on.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn base_mesh_uvs_survive_a_chain_of_formats() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let src = mpfb_source(&c).doc;
    let base = c.join("mpfb/3dobjs/base.obj");
    let dir = tempfile::tempdir().unwrap();
    let mut doc = through(&src, "glb", dir.path(), None);
    let first_normals = doc.clone();
    for fmt in ["g4b", "ir-json", "gltf", "glb"] {
        doc = through(&doc, fmt, dir.path(), None);
        let mut d = doc.clone();
        d.convert_frame(src.frame);
        let (a, b) = (&src.meshes[0], &d.meshes[0]);
        assert_eq!(b.positions.len(), a.positions.len(), "after {fmt}");
        let du = uv_delta(a, b, 0).unwrap_or_else(|| panic!("after {fmt}: not comparable"));
        assert!(du < CLOSE, "after {fmt}: UVs moved by {du}");
        let dn = normal_delta(&first_normals.meshes[0], &doc.meshes[0]).expect("comparable");
        assert!(dn < CLOSE, "after {fmt}: normals moved by {dn}");
    }
    // Into MPFB and back: the rig and weights, re-read on base.obj, give the base mesh's UVs.
    let back = through(&doc, "mpfb", dir.path(), Some(&base));
    assert_eq!(back.meshes[0].uvs, src.meshes[0].uvs);
}
