//! AnvilToolkit XML: byte-identical round trips of the fixtures (both forms, both encodings),
//! Standard ↔ Schema-Based value preservation, limits, merge, edits and refusals.

use skelport_anvil_lead::{ir, names, xml::Doc, AnvilFormat, AnvilSchemaFormat, Form};
use skelport_ir::{Bone, Diagnostics, Document, Format, Input, ReadOptions, Skeleton, Transform, WriteOptions};
use std::path::PathBuf;

fn testdata() -> PathBuf {
    skelport_ir::testing::workspace_root().join("testdata/anvil")
}

fn read(bytes: &[u8]) -> Document {
    AnvilFormat.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap_or_else(|e| panic!("{e}"))
}

fn write(f: &dyn Format, doc: &Document) -> Vec<u8> {
    f.write(doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap_or_else(|e| panic!("{e}")).main
}

const FIXTURES: [&str; 3] = ["sword_addon", "hidden_blade_addon", "biped"];

fn variants(stem: &str) -> Vec<(String, Form)> {
    vec![
        (format!("{stem}.standard.utf8.xml"), Form::Standard),
        (format!("{stem}.standard.xml"), Form::Standard),
        (format!("{stem}.schema.xml"), Form::Schema),
        (format!("{stem}.schema.utf16.xml"), Form::Schema),
    ]
}

#[test]
fn fixtures_re_export_byte_identical() {
    for stem in FIXTURES {
        for (file, form) in variants(stem) {
            let bytes = std::fs::read(testdata().join(&file)).unwrap_or_else(|e| panic!("{file}: {e}"));
            let doc = read(&bytes);
            let f: &dyn Format = if form == Form::Standard { &AnvilFormat } else { &AnvilSchemaFormat };
            assert!(write(f, &doc) == bytes, "{file}: re-export differs");
            assert_eq!(skelport_anvil_lead::sniff(&bytes), Some(form), "{file}");
        }
    }
}

fn normalized(text: &str) -> String {
    // Whitespace between tags is layout, not value.
    let mut out = String::new();
    let mut in_tag_gap = false;
    for c in text.chars() {
        if c == '>' || c == '<' {
            in_tag_gap = c == '>';
            out.push(c);
        } else if !(in_tag_gap && c.is_whitespace()) {
            in_tag_gap = false;
            out.push(c);
        }
    }
    out
}

#[test]
fn standard_to_schema_to_standard_keeps_every_value() {
    for stem in FIXTURES {
        let bytes = std::fs::read(testdata().join(format!("{stem}.standard.utf8.xml"))).unwrap();
        let a = read(&bytes);
        let schema = write(&AnvilSchemaFormat, &a);
        let b = read(&schema);
        let back = write(&AnvilFormat, &b);
        let (t0, _) = ir::decode(&bytes, "a").unwrap();
        let (t2, _) = ir::decode(&back, "b").unwrap();
        let (n0, n2) = (normalized(&t0), normalized(&t2));
        let at = n0.bytes().zip(n2.bytes()).position(|(a, b)| a != b).unwrap_or(n0.len().min(n2.len()));
        assert!(
            n0 == n2,
            "{stem}: Standard → Schema → Standard changed a value at {at}: {:?} vs {:?}",
            &n0[at.saturating_sub(150)..(at + 80).min(n0.len())],
            &n2[at.saturating_sub(150)..(at + 80).min(n2.len())]
        );
        // And the reverse from the schema file.
        let again = write(&AnvilSchemaFormat, &read(&back));
        let (t1, _) = ir::decode(&schema, "s").unwrap();
        let (t3, _) = ir::decode(&again, "s2").unwrap();
        let (n1, n3) = (normalized(&t1), normalized(&t3));
        let at = n1.bytes().zip(n3.bytes()).position(|(a, b)| a != b).unwrap_or(n1.len().min(n3.len()));
        assert!(
            n1 == n3,
            "{stem}: Schema → Standard → Schema changed a value at {at}: {:?} vs {:?}",
            &n1[at.saturating_sub(150)..(at + 80).min(n1.len())],
            &n3[at.saturating_sub(150)..(at + 80).min(n3.len())]
        );
    }
}

#[test]
fn schema_form_computes_index_and_child_bone_count() {
    let bytes = std::fs::read(testdata().join("biped.schema.xml")).unwrap();
    let (text, _) = ir::decode(&bytes, "b").unwrap();
    let tree = Doc::parse(&text).unwrap();
    let recs = ir::bone_recs(&tree, Form::Schema, "b", &text).unwrap();
    assert_eq!(recs[0].child_count, Some(29), "Reference holds every other bone");
    assert_eq!(recs[1].index, Some(1));
    assert_eq!(recs.iter().find(|r| r.hash == names::hash("Hips")).unwrap().child_count, Some(28));
    assert_eq!(recs.iter().find(|r| r.hash == names::hash("LeftUpLeg")).unwrap().child_count, Some(3), "LeftLeg, LeftFoot, O_LeftLeg");
}

#[test]
fn names_hashes_and_frames() {
    assert_eq!(names::hash("Hips"), 3738240529);
    let doc = read(&std::fs::read(testdata().join("biped.standard.xml")).unwrap());
    let sk = &doc.skeletons[0];
    assert_eq!(sk.bones.len(), 30);
    let hips = sk.find("Hips").unwrap();
    assert_eq!(sk.bones[hips.index()].parent, sk.find("Reference"));
    let left = sk.find("LeftArm").unwrap();
    assert_eq!(sk.bones[left.index()].mirror, sk.find("RightArm"));
    // Global composed from Local equals the stored Global (the fixtures were written consistent).
    let bytes = std::fs::read(testdata().join("biped.standard.xml")).unwrap();
    let (text, _) = ir::decode(&bytes, "b").unwrap();
    let recs = ir::bone_recs(&Doc::parse(&text).unwrap(), Form::Standard, "b", &text).unwrap();
    let w = sk.world_transforms();
    for r in &recs {
        let b = sk.bones.iter().position(|b| names::hash(&b.name) == r.hash).unwrap();
        let g = r.global_pos.unwrap();
        assert!((w[b].translation - skelport_ir::DVec3::new(g[0], g[1], g[2])).length() < 1e-5, "{}", sk.bones[b].name);
    }
}

fn chain(n: usize) -> Document {
    let mut sk = Skeleton::new("big");
    for i in 0..n {
        let parent = if i == 0 { None } else { Some(skelport_ir::BoneId(((i - 1) / 2) as u32)) };
        sk.push(Bone::new(format!("bone_{i}"), parent, Transform::from_rt(Default::default(), skelport_ir::DVec3::new(0.0, 0.0, 0.01))));
    }
    let mut d = Document::new(ir::FRAME);
    d.skeletons.push(sk);
    d
}

#[test]
fn a_65535_bone_skeleton_round_trips_and_256_are_refused_in_schema_form() {
    let d = chain(65_535);
    let bytes = write(&AnvilFormat, &d);
    let back = read(&bytes);
    assert_eq!(back.skeletons[0].bones.len(), 65_535);
    let parent_of = |d: &Document| -> std::collections::HashMap<String, Option<String>> {
        let sk = &d.skeletons[0];
        sk.bones.iter().map(|b| (b.name.clone(), b.parent.map(|p| sk.bones[p.index()].name.clone()))).collect()
    };
    assert!(parent_of(&back) == parent_of(&d));
    assert!(write(&AnvilFormat, &back) == bytes, "re-export of the generated file is byte-identical");
    let e = AnvilSchemaFormat.write(&chain(256), &WriteOptions::default(), &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("256 bones but the limit is 255") && e.contains("Unsigned8"), "{e}");
    assert!(AnvilSchemaFormat.write(&chain(255), &WriteOptions::default(), &mut Diagnostics::default()).is_ok());
}

#[test]
fn merge_hidden_blade_into_biped() {
    let main = std::fs::read(testdata().join("biped.standard.xml")).unwrap();
    let addon = std::fs::read(testdata().join("hidden_blade_addon.standard.xml")).unwrap();
    let out = skelport_anvil_lead::ops::merge(&main, &[(&addon[..], "hidden_blade_addon.xml")], "biped.xml", None).unwrap();
    let doc = read(&out.bytes);
    let sk = &doc.skeletons[0];
    assert_eq!(sk.bones.len(), 32, "30 + A_Hidden_Blade + A_Hidden_Blade2; the path bones are matched");
    let blade = sk.find("A_Hidden_Blade").unwrap();
    assert_eq!(sk.bones[blade.index()].parent, sk.find("LeftForeArm"));
    let blade2 = sk.find("A_Hidden_Blade2").unwrap();
    assert_eq!(sk.bones[blade2.index()].parent, sk.find("RightForeArm"));
    assert_eq!(sk.bones[blade.index()].mirror, Some(blade2));
    // The addon's BallJoint on LeftForeArm now sits on the main LeftForeArm.
    let text = String::from_utf16_lossy(&out.bytes[2..].chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect::<Vec<_>>());
    assert!(text.contains("<BallJointBoneModifier ID=\"22223737855\""));
    assert_eq!(out.added, ["A_Hidden_Blade", "A_Hidden_Blade2"]);
    // A path that does not mirror the main hierarchy is refused, naming the bone.
    let (t, _) = ir::decode(&addon, "a").unwrap();
    let bad =
        t.replace("<Value Name=\"Value\" Type=\"UInt64\">1091170003</Value>", "<Value Name=\"Value\" Type=\"UInt64\">1091170001</Value>");
    let e = skelport_anvil_lead::ops::merge(&main, &[(bad.as_bytes(), "bad.xml")], "biped.xml", None).unwrap_err().to_string();
    assert!(e.contains("LeftForeArm"), "{e}");
    // The limit after de-duplication.
    let e = skelport_anvil_lead::ops::merge(&main, &[(&addon[..], "a.xml")], "biped.xml", Some(31)).unwrap_err().to_string();
    assert!(e.contains("32 bones") && e.contains("31"), "{e}");
}

#[test]
fn bone_edits_keep_links_right() {
    let bytes = std::fs::read(testdata().join("biped.standard.xml")).unwrap();
    // Rename: the hash and label change, links (by ID) stay.
    let out = skelport_anvil_lead::ops::rename(&bytes, "x.xml", "Jaw", "Jaw_Main").unwrap();
    let d = read(&out);
    assert!(d.skeletons[0].find("Jaw_Main").is_some() && d.skeletons[0].find("Jaw").is_none());
    // Remove: children re-parented, mirror and modifier links cleared.
    let out = skelport_anvil_lead::ops::remove(&bytes, "x.xml", "LeftLeg").unwrap();
    let d = read(&out);
    let sk = &d.skeletons[0];
    assert!(sk.find("LeftLeg").is_none());
    assert_eq!(sk.bones[sk.find("LeftFoot").unwrap().index()].parent, sk.find("LeftUpLeg"));
    assert_eq!(sk.bones[sk.find("RightLeg").unwrap().index()].mirror, None);
    let (t, _) = ir::decode(&out, "x").unwrap();
    assert!(!t.contains(">1091164578<"), "no link to the removed bone's ID is left");
    // Add: a new bone under Head with a fresh ID.
    let out = skelport_anvil_lead::ops::add(&bytes, "x.xml", "P_Hat", "Head", [0.0, 0.0, 0.12]).unwrap();
    let d = read(&out);
    let sk = &d.skeletons[0];
    let hat = sk.find("P_Hat").unwrap();
    assert_eq!(sk.bones[hat.index()].parent, sk.find("Head"));
    // Everything before the Bones list's end is untouched.
    let (t0, _) = ir::decode(&bytes, "x").unwrap();
    let (t1, _) = ir::decode(&out, "x").unwrap();
    let cut = t0.find("  </List>\r\n  <ObjectPtr Name=\"RootBone\">").unwrap();
    assert_eq!(&t1[..cut], &t0[..cut]);
}

#[test]
fn bad_files_are_refused_with_a_place() {
    let good = String::from_utf8(std::fs::read(testdata().join("sword_addon.standard.utf8.xml")).unwrap()).unwrap();
    let cases: Vec<(Vec<u8>, &str)> = vec![
        (good.replace(">882909071</Value>\r\n        </Link>\r\n      </ObjectPtr>\r\n      <ObjectPtr Name=\"MirrorBone\">\r\n        <Link>\r\n          <Value Name=\"Value\" Type=\"UInt64\">882909072", ">999</Value>\r\n        </Link>\r\n      </ObjectPtr>\r\n      <ObjectPtr Name=\"MirrorBone\">\r\n        <Link>\r\n          <Value Name=\"Value\" Type=\"UInt64\">882909072").into_bytes(), "points to ID 999"),
        (good.as_bytes()[..good.len() / 2].to_vec(), "truncated"),
        (good.replace("<X>0.16</X>", "<X>NaN</X>").into_bytes(), "NaN"),
        (good.encode_utf16().flat_map(|u| u.to_le_bytes()).collect(), "without a byte-order mark"),
        (good.replace("<Bone ID=\"882909077\">", "<Bone ID=\"882909071\">").into_bytes(), "two bones have the ID 882909071"),
    ];
    for (bytes, want) in cases {
        let e = AnvilFormat
            .read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains(want), "want {want}: {e}");
    }
}
