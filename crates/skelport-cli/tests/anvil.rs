//! End-to-end AnvilToolkit evidence through the `skelport` binary: byte-identical re-export of
//! every fixture, the seed's hidden-blade merge, bone edits, the Schema-Based bone limit, names
//! files, warnings and errors (issue #5).

use skelport_ir::{Bone, BoneId, DQuat, DVec3, Diagnostics, Document, Format, Skeleton, Transform, WriteOptions};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn skelport(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skelport")).args(args).output().expect("run skelport")
}

fn fixture(name: &str) -> PathBuf {
    skelport_ir::testing::workspace_root().join("testdata/anvil").join(name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn ok(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "failed ({:?}): {err}", out.status.code());
    err
}

/// Each fixture's four files (UTF-16 and UTF-8, both forms) and the format each is written back in.
const VARIANTS: [(&str, &str); 4] =
    [("standard.xml", "anvil"), ("standard.utf8.xml", "anvil"), ("schema.xml", "anvil-schema"), ("schema.utf16.xml", "anvil-schema")];

fn stems() -> impl Iterator<Item = &'static str> {
    skelport_anvil::FIXTURE_STEMS.iter().copied()
}

#[test]
fn every_fixture_converts_to_its_own_form_byte_identically() {
    let dir = tempfile::tempdir().unwrap();
    let mut n = 0;
    for stem in stems() {
        for (variant, to) in VARIANTS {
            let src = fixture(&format!("{stem}.{variant}"));
            let dst = dir.path().join(format!("{stem}.{variant}"));
            ok(&skelport(&["convert", s(&src), "--to", to, "-o", s(&dst)]));
            assert!(std::fs::read(&src).unwrap() == std::fs::read(&dst).unwrap(), "{stem}.{variant} --to {to} is not byte-identical");
            n += 1;
        }
    }
    assert_eq!(n, 12);
}

#[test]
fn standard_to_schema_to_standard_through_the_cli_keeps_every_value() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.xml"), dir.path().join("b.xml"));
    let src = fixture("biped.standard.xml");
    ok(&skelport(&["convert", s(&src), "--to", "anvil-schema", "-o", s(&a)]));
    ok(&skelport(&["convert", s(&a), "--to", "anvil", "-o", s(&b)]));
    // diff compares bone by bone (names, parents, rest transforms).
    let out = skelport(&["diff", s(&src), s(&b)]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stdout));
}

#[test]
fn merge_matches_the_seeds_hidden_blade_example() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("merged.xml");
    let err = ok(&skelport(&["merge", s(&fixture("biped.standard.xml")), s(&fixture("hidden_blade_addon.schema.xml")), "-o", s(&out)]));
    // The path bones are matched, only the two blade bones are added, under the forearms.
    for path in ["Spine2", "LeftClavicle", "LeftArm", "LeftForeArm", "RightClavicle", "RightArm", "RightForeArm"] {
        assert!(err.lines().any(|l| l.starts_with("matched") && l.contains(path)), "{path} matched: {err}");
    }
    assert!(err.contains("added    A_Hidden_Blade (under LeftForeArm)"), "{err}");
    assert!(err.contains("added    A_Hidden_Blade2 (under RightForeArm)"), "{err}");
    assert!(err.contains(": 42 bones"), "{err}");
    // The result is a clean Standard file (UTF-16 like its main skeleton) with no warnings.
    let bytes = std::fs::read(&out).unwrap();
    assert_eq!(&bytes[..2], &[0xFF, 0xFE]);
    let v = skelport(&["validate", s(&out)]);
    assert!(v.status.success(), "{}{}", String::from_utf8_lossy(&v.stdout), String::from_utf8_lossy(&v.stderr));
    let list = String::from_utf8(ok_stdout(&skelport(&["bone", "list", s(&out)]))).unwrap();
    let rows: Vec<Vec<&str>> = list.lines().skip(1).map(|l| l.split_whitespace().collect()).collect();
    assert_eq!(rows.len(), 42);
    assert_eq!(rows.iter().filter(|r| r[1] == "LeftForeArm").count(), 1, "not duplicated:\n{list}");
    assert!(rows.iter().any(|r| r[1] == "A_Hidden_Blade" && r[4] == "LeftForeArm"), "{list}");
    // A limit below the de-duplicated count is refused.
    let r = skelport(&[
        "merge",
        s(&fixture("biped.standard.xml")),
        s(&fixture("hidden_blade_addon.schema.xml")),
        "-o",
        s(&out),
        "--limit",
        "41",
    ]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("limit of 41"), "{}", String::from_utf8_lossy(&r.stderr));
}

fn ok_stdout(out: &Output) -> Vec<u8> {
    ok(out);
    out.stdout.clone()
}

#[test]
fn bone_add_rename_remove_through_the_cli() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (dir.path().join("a.xml"), dir.path().join("b.xml"), dir.path().join("c.xml"));
    let src = fixture("sword_addon.standard.xml");
    ok(&skelport(&["bone", "add", s(&src), "P_Test_Tag", "P_Sword_Tag", "--at", "0,-0.1,0.2", "-o", s(&a)]));
    ok(&skelport(&["bone", "rename", s(&a), "P_Test_Tag", "P_Test2_Tag", "-o", s(&b)]));
    let list = String::from_utf8(ok_stdout(&skelport(&["bone", "list", s(&b)]))).unwrap();
    assert!(list.lines().any(|l| l.contains("P_Test2_Tag") && l.contains("P_Sword_Tag")), "{list}");
    ok(&skelport(&["bone", "remove", s(&b), "P_Test2_Tag", "-o", s(&c)]));
    // Adding then removing a leaf gives the original file back, byte for byte.
    assert!(std::fs::read(&c).unwrap() == std::fs::read(&src).unwrap());
    let r = skelport(&["bone", "remove", s(&src), "NoSuchBone", "-o", s(&c)]);
    assert_eq!(r.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&r.stderr).contains("NoSuchBone"));
}

fn chain(n: usize) -> Document {
    let mut sk = Skeleton::new("big");
    for i in 0..n {
        let parent = if i == 0 { None } else { Some(BoneId::from_index((i - 1) / 2)) };
        sk.push(Bone::new(format!("b{i}"), parent, Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.0, 0.05))));
    }
    let mut d = Document::new(skelport_anvil::ANVIL_FRAME);
    d.skeletons.push(sk);
    d
}

#[test]
fn schema_form_refuses_256_bones_saying_why() {
    let dir = tempfile::tempdir().unwrap();
    let big = dir.path().join("big.xml");
    let bytes = skelport_anvil::AnvilFormat.write(&chain(256), &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main;
    std::fs::write(&big, bytes).unwrap();
    let out = dir.path().join("out.xml");
    let r = skelport(&["convert", s(&big), "--to", "anvil-schema", "-o", s(&out)]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("256") && err.contains("255") && err.contains("Unsigned8"), "{err}");
    assert!(!out.exists(), "no half-written output");
    ok(&skelport(&["convert", s(&big), "--to", "anvil", "-o", s(&out)]));
}

#[test]
fn names_file_resolves_an_unknown_hash_and_it_survives() {
    let dir = tempfile::tempdir().unwrap();
    // The biped carries an unknown hash, shown as x + 8 hex digits.
    let src = fixture("biped.standard.xml");
    let plain = String::from_utf8(ok_stdout(&skelport(&["bone", "list", s(&src)]))).unwrap();
    assert!(plain.contains("x2BA0BB9F"), "{plain}");
    // Give a name the hash of which is known, through a names file.
    let renamed = dir.path().join("r.xml");
    ok(&skelport(&["bone", "rename", s(&src), "x2BA0BB9F", "KneeHelper_Custom", "-o", s(&renamed)]));
    // Strip the label the rename wrote: now only a names file can resolve the hash.
    let (text, form) = skelport_anvil::text::decode(&std::fs::read(&renamed).unwrap()).unwrap();
    let stripped = text.replace(" HashName=\"KneeHelper_Custom\"", "");
    assert_ne!(stripped, text);
    std::fs::write(&renamed, skelport_anvil::text::encode(&stripped, form)).unwrap();
    let hex = format!("x{:08X}", skelport_anvil::bone_hash("KneeHelper_Custom"));
    let without = String::from_utf8(ok_stdout(&skelport(&["bone", "list", s(&renamed)]))).unwrap();
    assert!(without.contains(&hex) && !without.contains("KneeHelper_Custom"), "{without}");
    let names = dir.path().join("names.tsv");
    std::fs::write(&names, "KneeHelper_Custom\tfrom a names file\n").unwrap();
    let with = String::from_utf8(ok_stdout(&skelport(&["bone", "list", s(&renamed), "--names", s(&names)]))).unwrap();
    assert!(with.contains("KneeHelper_Custom"), "{with}");
    let with = String::from_utf8(ok_stdout(&skelport(&["inspect", s(&renamed), "--names", s(&names)]))).unwrap();
    assert!(with.contains("KneeHelper_Custom"), "{with}");
    // Unknown hashes survive a trip through the other form and back.
    let (a, b) = (dir.path().join("a.xml"), dir.path().join("b.xml"));
    ok(&skelport(&["convert", s(&src), "--to", "anvil-schema", "-o", s(&a)]));
    ok(&skelport(&["convert", s(&a), "--to", "anvil", "-o", s(&b)]));
    let back = String::from_utf8(ok_stdout(&skelport(&["bone", "list", s(&b)]))).unwrap();
    assert!(back.contains("x2BA0BB9F"), "{back}");
}

#[test]
fn stored_index_disagreement_warns_and_dangling_link_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let t = std::fs::read_to_string(fixture("sword_addon.schema.xml")).unwrap();
    let bad = t.replacen("<Unsigned8 Name=\"Index\">1</Unsigned8>", "<Unsigned8 Name=\"Index\">7</Unsigned8>", 1);
    assert_ne!(bad, t);
    let p = dir.path().join("idx.xml");
    std::fs::write(&p, &bad).unwrap();
    let out = dir.path().join("o.xml");
    let err = ok(&skelport(&["convert", s(&p), "--to", "anvil-schema", "-o", s(&out)]));
    assert!(err.contains("Index 7"), "warning: {err}");
    assert_eq!(std::fs::read_to_string(&out).unwrap(), t, "recomputed on write");
    let dangling = t.replacen("Path=\"882909071\">882909071</Link>", "Path=\"99\">99</Link>", 1);
    assert_ne!(dangling, t);
    std::fs::write(&p, &dangling).unwrap();
    let r = skelport(&["convert", s(&p), "--to", "anvil", "-o", s(&out)]);
    assert_eq!(r.status.code(), Some(1));
    let err = String::from_utf8_lossy(&r.stderr);
    assert!(err.contains("dangling") && err.contains("99") && err.contains("idx.xml"), "{err}");
}

/// `bone ... --in-place` through a symbolic link edits the file the link points to and keeps
/// the link (it used to be renamed over with a regular file).
#[cfg(unix)]
#[test]
fn in_place_through_a_link_edits_its_target_and_keeps_the_link() {
    let dir = tempfile::tempdir().unwrap();
    let real = dir.path().join("real.xml");
    std::fs::copy(fixture("biped.schema.xml"), &real).unwrap();
    let link = dir.path().join("link.xml");
    std::os::unix::fs::symlink(&real, &link).unwrap();
    ok(&skelport(&["bone", "rename", s(&link), "Hips", "Pelvis2", "--in-place"]));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(std::fs::read_to_string(&real).unwrap().contains("Pelvis2"), "the target was not edited");
}

/// Every bone object of a file by ID, with the fields the IR holds (the transforms) left out
/// when `poses` is false.
fn bone_objects(bytes: &[u8], poses: bool) -> std::collections::BTreeMap<u64, skelport_anvil::model::Object> {
    let m = skelport_anvil::AnvilSkeleton::parse(bytes, "test").unwrap();
    let pose_fields = ["GlobalPosition", "GlobalRotation", "LocalPosition", "LocalRotation"];
    m.bones()
        .map(|b| {
            let mut b = b.clone();
            if !poses {
                b.fields.retain(|f| !pose_fields.contains(&f.name()));
            }
            (b.id.unwrap(), b)
        })
        .collect()
}

/// anvil → .gltf (its JSON changed by `edit`) → anvil in the file's own form, through the binary:
/// the source and what came back.
fn via_gltf(name: &str, to: &str, edit: impl FnOnce(&mut serde_json::Value)) -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let (g, back) = (dir.path().join("a.gltf"), dir.path().join("back.xml"));
    let src = fixture(name);
    ok(&skelport(&["convert", s(&src), "-o", s(&g)]));
    let mut json: serde_json::Value = serde_json::from_slice(&std::fs::read(&g).unwrap()).unwrap();
    edit(&mut json);
    std::fs::write(&g, serde_json::to_vec_pretty(&json).unwrap()).unwrap();
    ok(&skelport(&["convert", s(&g), "--to", to, "-o", s(&back)]));
    (std::fs::read(&src).unwrap(), std::fs::read(&back).unwrap())
}

/// An AnvilToolkit skeleton taken to glTF and back unedited is the file it was; a bone moved in
/// the glTF (one with modifiers: the first of them), with the skins' extras dropped as Blender's
/// importer drops them, comes back moved, and every bone keeps its ID, name hash, parent, mirror,
/// modifiers and every other field, the moved one too.
#[test]
fn anvil_through_gltf_comes_back_and_a_bone_moved_there_keeps_everything_else() {
    for (name, to) in [("biped.standard.xml", "anvil"), ("biped.schema.xml", "anvil-schema")] {
        let (a, b) = via_gltf(name, to, |_| {});
        assert!(a == b, "{name}: unedited, not the same bytes");
        let before = bone_objects(&a, false);
        let modifiers: usize = before.values().map(|b| b.modifiers().count()).sum();
        assert!(modifiers >= 19, "{name}: {modifiers} modifiers");
        let moved = *before.iter().find(|(_, o)| o.modifiers().count() > 0).expect("a bone with modifiers").0;
        let (a, b) = via_gltf(name, to, |json| {
            let node = json["nodes"]
                .as_array_mut()
                .unwrap()
                .iter_mut()
                .find(|n| n["extras"]["skelport"]["ext"]["anvil"]["id"].as_u64() == Some(moved))
                .expect("the node of the bone to move");
            let t = node.as_object_mut().unwrap().entry("translation").or_insert(serde_json::json!([0.0, 0.0, 0.0]));
            t[0] = serde_json::json!(t[0].as_f64().unwrap() + 0.05);
            drop_skin_extras(json);
        });
        let after = bone_objects(&b, false);
        assert_eq!(before.len(), after.len(), "{name}: every bone kept");
        for (id, o) in &before {
            assert_eq!(Some(o), after.get(id), "{name}: bone {id} (the moved one: {})", *id == moved);
        }
        let (pa, pb) = (bone_objects(&a, true), bone_objects(&b, true));
        assert_ne!(pa[&moved], pb[&moved], "{name}: the move did not arrive");
        let unmoved = pa.iter().filter(|(id, o)| pb.get(id) == Some(o)).count();
        assert!(unmoved >= pa.len() / 2, "{name}: only {unmoved} of {} bones' transforms kept as they were", pa.len());
    }
}

/// Every fixture, UTF-16 and UTF-8, in both forms, through .gltf and back into its own form: the
/// same bytes, also when the skins' extras are dropped on the way (as Blender's importer does).
#[test]
fn every_fixture_through_gltf_comes_back_byte_identical_without_the_skins_extras() {
    let mut n = 0;
    for stem in stems() {
        for (variant, to) in VARIANTS {
            let name = format!("{stem}.{variant}");
            let (a, b) = via_gltf(&name, to, drop_skin_extras);
            assert!(a == b, "{name}: not the same bytes");
            n += 1;
        }
    }
    assert_eq!(n, 12);
}

/// What Blender's glTF importer does to a skin: its extras are not kept.
fn drop_skin_extras(json: &mut serde_json::Value) {
    for skin in json["skins"].as_array_mut().unwrap() {
        skin.as_object_mut().unwrap().remove("extras");
    }
}

/// The .gltf of an AnvilToolkit skeleton carries no source text: each joint node carries its
/// bone's ID and values, which with the shapes on the skeleton's root node make its element
/// (exactly the file's text); the root node carries the rest.
#[test]
fn the_gltf_carries_each_bones_element_on_its_node_and_no_source() {
    let dir = tempfile::tempdir().unwrap();
    let g = dir.path().join("a.gltf");
    let src = fixture("biped.standard.xml");
    ok(&skelport(&["convert", s(&src), "-o", s(&g)]));
    let raw = std::fs::read_to_string(&g).unwrap();
    assert!(!raw.contains("\"source\""), "a source string is carried");
    let json: serde_json::Value = serde_json::from_str(&raw).unwrap();
    let text = skelport_anvil::text::decode(&std::fs::read(&src).unwrap()).unwrap().0;
    let joints: std::collections::BTreeSet<u64> =
        json["skins"][0]["joints"].as_array().unwrap().iter().map(|j| j.as_u64().unwrap()).collect();
    assert_eq!(joints.len(), 40);
    assert!(json["skins"][0]["extras"]["skelport"].get("skeleton_ext").is_none(), "the skin carries the skeleton's data");
    let root = &json["nodes"][json["skins"][0]["skeleton"].as_u64().unwrap() as usize];
    let skeleton = &root["extras"]["skelport"]["skeleton_ext"]["anvil"];
    for key in ["form", "bytes", "fingerprint", "modifiers", "layout", "pieces", "shapes"] {
        assert!(skeleton.get(key).is_some(), "the root node's skeleton data has no {key}: {skeleton}");
    }
    for j in &joints {
        let node = &json["nodes"][*j as usize];
        let anvil = &node["extras"]["skelport"]["ext"]["anvil"];
        let id = anvil["id"].as_u64().unwrap();
        let shape = skeleton["shapes"][anvil["shape"].as_u64().unwrap() as usize].as_array().unwrap();
        let piece = |k: usize| skeleton["pieces"][shape[k].as_u64().unwrap() as usize].as_str().unwrap();
        let values = anvil.get("values").and_then(|v| v.as_array()).cloned().unwrap_or_default();
        assert_eq!(shape.len(), values.len() + 1, "node {j}");
        let mut xml = piece(0).to_string();
        for (k, v) in values.iter().enumerate() {
            xml.push_str(v.as_str().unwrap());
            xml.push_str(piece(k + 1));
        }
        assert!(xml.starts_with(&format!("<Bone ID=\"{id}\"")) && xml.ends_with("</Bone>"), "node {j}: {xml:.60}");
        assert_eq!(text.matches(&xml).count(), 1, "node {j}: its element is the file's text");
    }
    // Per item: no string near the size of the file.
    fn longest(v: &serde_json::Value) -> usize {
        match v {
            serde_json::Value::String(s) => s.len(),
            serde_json::Value::Array(a) => a.iter().map(longest).max().unwrap_or(0),
            serde_json::Value::Object(m) => m.values().map(longest).max().unwrap_or(0),
            _ => 0,
        }
    }
    assert!(longest(&json) < text.len() / 10, "a string of {} bytes", longest(&json));
    // The whole .gltf, bones and their data, is smaller than the skeleton's text.
    assert!(raw.len() < text.len(), ".gltf {} bytes, the skeleton's text {}", raw.len(), text.len());
}

/// A .gltf skelport wrote before the per-bone fragments (the whole source text in the skin's
/// extras, bare IDs on the nodes) still converts back to the same bytes.
#[test]
fn an_old_gltf_with_the_source_on_the_skin_still_converts_back() {
    let src = fixture("biped.standard.xml");
    let text = skelport_anvil::text::decode(&std::fs::read(&src).unwrap()).unwrap().0;
    let (a, b) = via_gltf("biped.standard.xml", "anvil", |json| {
        let root = json["skins"][0]["skeleton"].as_u64().unwrap() as usize;
        let node = json["nodes"][root]["extras"]["skelport"].as_object_mut().unwrap();
        let mut ext = node.remove("skeleton_ext").unwrap();
        let anvil = ext["anvil"].as_object_mut().unwrap();
        anvil.remove("layout");
        anvil.insert("source".into(), text.clone().into());
        json["skins"][0]["extras"] = serde_json::json!({ "skelport": { "skeleton_ext": ext } });
        for n in json["nodes"].as_array_mut().unwrap() {
            if let Some(a) = n.pointer_mut("/extras/skelport/ext/anvil") {
                *a = a["id"].clone();
            }
        }
    });
    assert!(a == b, "not the same bytes");
}
