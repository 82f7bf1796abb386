//! `validate` tells the truth (issue 24): a structure the format's own rules forbid makes the
//! file invalid (exit 1, naming the place) even where the reader goes past it and converting
//! still works; and every valid file stays valid. The glTF verdicts are checked against the
//! Khronos validator's own reports on its skin cases in the corpus.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn skelport(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skelport")).args(args).output().expect("run skelport")
}

fn all_text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn demo(name: &str) -> PathBuf {
    skelport_ir::testing::workspace_root().join("testdata/demo").join(name)
}

/// `file` is invalid, its report names `place` and `what`, and converting it still works.
fn assert_invalid_but_readable(file: &Path, place: &str, what: &str) {
    let f = file.to_str().unwrap();
    let o = skelport(&["validate", f]);
    assert_eq!(o.status.code(), Some(1), "{}", all_text(&o));
    let text = all_text(&o);
    assert!(text.contains(&format!("{f}: {place}: ")) && text.contains(what), "{text}");
    let o = skelport(&["validate", "--json", f]);
    let v: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["valid"], false);
    assert!(v["problems"].as_array().unwrap().iter().any(|p| p["location"] == place), "{v}");
    // The reader goes past it: a conversion works and warns.
    let out = file.with_extension("out.glb");
    let o = skelport(&["convert", f, "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", all_text(&o));
    assert!(all_text(&o).contains(what), "convert does not warn: {}", all_text(&o));
}

fn edit_json(src: &Path, dst: &Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_slice(&std::fs::read(src).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(dst, serde_json::to_vec(&v).unwrap()).unwrap();
}

#[test]
fn every_demo_file_is_valid() {
    for e in std::fs::read_dir(demo("")).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_str().unwrap().to_owned();
        // Weights files (MPFB's weights.*.json, MakeHuman 1.x's .mhw) are no input of their own.
        if name.ends_with(".bin") || name.ends_with(".inspect.json") || name.starts_with("weights.") || name.ends_with(".mhw") {
            continue;
        }
        let o = skelport(&["validate", p.to_str().unwrap()]);
        assert!(o.status.success(), "{name}: {}", all_text(&o));
    }
}

#[test]
fn g4mf_buffer_view_past_its_buffer_is_invalid_even_unused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.g4tf");
    edit_json(&demo("sample.g4tf"), &f, |v| {
        v["bufferViews"].as_array_mut().unwrap().push(serde_json::json!({"byteOffset": 16, "byteLength": 1_000_000}));
    });
    let n = serde_json::from_slice::<Value>(&std::fs::read(&f).unwrap()).unwrap()["bufferViews"].as_array().unwrap().len() - 1;
    assert_invalid_but_readable(&f, &format!("bufferViews[{n}]"), "run past the end of buffer 0");
}

#[test]
fn g4mf_accessor_not_whole_elements_is_invalid_even_unused() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("x.g4tf");
    edit_json(&demo("sample.g4tf"), &f, |v| {
        let views = v["bufferViews"].as_array_mut().unwrap();
        views.push(serde_json::json!({"byteLength": 10}));
        let vi = views.len() - 1;
        v["accessors"].as_array_mut().unwrap().push(serde_json::json!({"bufferView": vi, "componentType": "float32", "vectorSize": 3}));
    });
    let n = serde_json::from_slice::<Value>(&std::fs::read(&f).unwrap()).unwrap()["accessors"].as_array().unwrap().len() - 1;
    assert_invalid_but_readable(&f, &format!("accessors[{n}]"), "not a whole number of float32 × 3 elements");
}

#[test]
fn gltf_accessor_past_its_view_is_invalid_even_unused() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(demo("sample.bin"), dir.path().join("sample.bin")).unwrap();
    let f = dir.path().join("x.gltf");
    edit_json(&demo("sample.gltf"), &f, |v| {
        v["accessors"].as_array_mut().unwrap().push(serde_json::json!({
            "bufferView": 0, "byteOffset": 4, "componentType": 5126, "count": 1_000, "type": "VEC3"
        }));
    });
    let n = serde_json::from_slice::<Value>(&std::fs::read(&f).unwrap()).unwrap()["accessors"].as_array().unwrap().len() - 1;
    assert_invalid_but_readable(&f, &format!("/accessors/{n}"), "do not fit in buffer view 0");
}

/// The demo AnvilToolkit files with one stored value changed that the reader repairs (with a
/// warning): Schema-Based, the second bone's `Index` (1 → 7); Standard, the second bone's
/// `HashName` (`pelvis` → `hips`, no longer its hash's name). `validate` calls each invalid.
#[test]
fn anvil_stored_values_that_disagree_are_invalid() {
    for (name, utf16, from, to, says) in [
        ("sample.anvil-schema.xml", false, "<Unsigned8 Name=\"Index\">1<", "<Unsigned8 Name=\"Index\">7<", "Index 7 (position 1)"),
        ("sample.anvil.xml", true, "HashName=\"pelvis\"", "HashName=\"hips\"", "(label 'hips')"),
    ] {
        let bytes = std::fs::read(demo(name)).unwrap();
        let text = if utf16 {
            let units: Vec<u16> = bytes[2..].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect();
            String::from_utf16(&units).unwrap()
        } else {
            String::from_utf8(bytes).unwrap()
        };
        assert_eq!(text.matches(from).count(), 1, "{name}");
        let changed = text.replacen(from, to, 1);
        let out = if utf16 {
            let mut b = vec![0xFF, 0xFE];
            b.extend(changed.encode_utf16().flat_map(u16::to_le_bytes));
            b
        } else {
            changed.into_bytes()
        };
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join(name);
        std::fs::write(&f, out).unwrap();
        let o = skelport(&["validate", f.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", all_text(&o));
        assert!(all_text(&o).contains(says), "{name}: {}", all_text(&o));
        let conv = dir.path().join("out.glb");
        assert!(skelport(&["convert", f.to_str().unwrap(), "-o", conv.to_str().unwrap()]).status.success(), "{name}");
    }
}

/// Every glTF skin case of the Khronos validator in the corpus: skelport's verdict is the
/// validator's (`numErrors == 0` in its `.report.json`).
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn gltf_verdicts_match_the_khronos_validator() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let mut reports = Vec::new();
    let mut stack = vec![c.join("gltf/validator-skin-cases")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_str().unwrap().ends_with(".gltf.report.json") {
                reports.push(p);
            }
        }
    }
    reports.sort();
    assert!(reports.len() >= 20, "{} reports", reports.len());
    let (mut valid, mut invalid) = (0, 0);
    for r in &reports {
        let report: Value = serde_json::from_slice(&std::fs::read(r).unwrap()).unwrap();
        let khronos_valid = report["issues"]["numErrors"] == 0;
        let gltf = PathBuf::from(r.to_str().unwrap().strip_suffix(".report.json").unwrap());
        let o = skelport(&["validate", gltf.to_str().unwrap()]);
        assert_eq!(o.status.success(), khronos_valid, "{}: the validator says {}: {}", gltf.display(), report["issues"], all_text(&o));
        if khronos_valid {
            valid += 1
        } else {
            invalid += 1
        }
    }
    assert!(valid >= 5 && invalid >= 15, "{valid} valid, {invalid} invalid");
}

/// Every file of the corpus that a reader reads, written by other tools, is valid: no structural
/// rule fires on real exports (the validator's invalid cases and files that are no input of
/// their own are left out).
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn real_files_that_read_are_valid() {
    let Some(c) = skelport_ir::testing::corpus_root() else { return };
    let mut files = Vec::new();
    let mut stack = vec![c.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let s = p.to_str().unwrap().to_owned();
            if p.is_dir() {
                if !s.ends_with("specification") && !s.ends_with("validator-skin-cases") && !s.ends_with("mesh_metadata") {
                    stack.push(p);
                }
            } else if [".xml", ".dae", ".gltf", ".glb", ".g4tf", ".g4b", ".vrm"].iter().any(|x| s.ends_with(x))
                || (s.ends_with(".json") && p.file_name().unwrap().to_str().unwrap().starts_with("rig."))
            {
                files.push(p);
            }
        }
    }
    files.sort();
    let mut checked = 0;
    for f in &files {
        let o = skelport(&["validate", f.to_str().unwrap()]);
        let text = all_text(&o);
        if text.contains("cannot tell the format") {
            continue; // e.g. the viewer's avatar_lad.xml: no skeleton file of any format
        }
        // three.js's SimpleSkinning puts a byteStride on its inverse bind matrices, which glTF
        // forbids (the Khronos validator's error too): read with a warning, and invalid.
        if f.ends_with("threejs_SimpleSkinning.gltf") {
            assert!(!o.status.success() && text.contains("byteStride 64"), "{}: {text}", f.display());
            continue;
        }
        assert!(o.status.success(), "{}: {text}", f.display());
        checked += 1;
    }
    assert!(checked >= 25, "{checked} files validated");
}
