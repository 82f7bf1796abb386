//! AnvilToolkit skeleton XML: lossless round trips, form conversion, merge, edits, limits, errors.

use skelport_anvil::model::{names as f, Target, Value};
use skelport_anvil::{bone_hash, merge, AnvilError, AnvilFormat, AnvilSchemaFormat, AnvilSkeleton, Form, MergeOptions, Names, NewBone};
use skelport_ir::{
    Bone, BoneId, DQuat, DVec3, Diagnostics, Document, Format, Frame, Input, ReadOptions, Severity, Skeleton, Transform, WriteOptions,
};
use std::path::{Path, PathBuf};

fn dir() -> PathBuf {
    skelport_ir::testing::workspace_root().join("testdata/anvil")
}

const STEMS: &[&str] = &["biped", "sword_addon", "hidden_blade_addon"];
const VARIANTS: &[(&str, Form)] = &[
    ("standard.xml", Form::Standard),
    ("standard.utf8.xml", Form::Standard),
    ("schema.xml", Form::Schema),
    ("schema.utf16.xml", Form::Schema),
];

fn fixture(stem: &str, variant: &str) -> Vec<u8> {
    let p = dir().join(format!("{stem}.{variant}"));
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

fn fmt(form: Form) -> &'static dyn Format {
    match form {
        Form::Standard => &AnvilFormat,
        Form::Schema => &AnvilSchemaFormat,
    }
}

fn read_doc(bytes: &[u8]) -> (Document, Diagnostics) {
    let mut d = Diagnostics::default();
    let doc = AnvilFormat
        .read(Input { path: Some(Path::new("t.xml")), bytes }, &ReadOptions::default(), &mut d)
        .unwrap_or_else(|e| panic!("read: {e}"));
    (doc, d)
}

fn write_doc(form: Form, doc: &Document) -> Vec<u8> {
    let mut d = Diagnostics::default();
    fmt(form).write(doc, &WriteOptions::default(), &mut d).unwrap_or_else(|e| panic!("write: {e}")).main
}

fn model(bytes: &[u8]) -> AnvilSkeleton {
    AnvilSkeleton::parse(bytes, "t.xml").unwrap_or_else(|e| panic!("parse: {e}"))
}

fn text_of(bytes: &[u8]) -> String {
    skelport_anvil::text::decode(bytes).unwrap().0
}

#[test]
fn crc_of_hips_is_the_engine_hash() {
    assert_eq!(bone_hash("Hips"), 3_738_240_529);
    assert_ne!(bone_hash("hips"), bone_hash("Hips"), "exact case");
    assert_eq!(bone_hash("Spine2"), 372_288_500);
}

#[test]
fn every_fixture_round_trips_byte_identically() {
    for stem in STEMS {
        for (variant, form) in VARIANTS {
            let bytes = fixture(stem, variant);
            // Through the IR and the Format API.
            let (doc, diag) = read_doc(&bytes);
            assert!(diag.of(Severity::Warning).next().is_none(), "{stem}.{variant}: {:?}", diag.items);
            let out = write_doc(*form, &doc);
            assert!(out == bytes, "{stem}.{variant}: IR round trip changed bytes");
            // Through the model's emitter (the path edited documents take), no fast path.
            let m = model(&bytes);
            assert_eq!(m.form, *form);
            let out = m.to_bytes(*form).unwrap();
            assert!(out == bytes, "{stem}.{variant}: model round trip changed bytes:\n{}", first_diff(&text_of(&bytes), &text_of(&out)));
            // An ir-json round trip of the document keeps it too.
            let json = serde_json::to_string(&doc).unwrap();
            let back: Document = serde_json::from_str(&json).unwrap();
            assert!(write_doc(*form, &back) == bytes, "{stem}.{variant}: through ir-json");
        }
    }
}

fn first_diff(a: &str, b: &str) -> String {
    let i = a.bytes().zip(b.bytes()).position(|(x, y)| x != y).unwrap_or(a.len().min(b.len()));
    let lo = i.saturating_sub(120);
    format!("at byte {i}:\n--- expected\n{}\n--- got\n{}", &a[lo..(i + 120).min(a.len())], &b[lo..(i + 120).min(b.len())])
}

/// Strip comments and whitespace between tags: what carries values.
fn values_only(t: &str) -> String {
    let mut s = String::new();
    let mut rest = t;
    while let Some(p) = rest.find("<!--") {
        s.push_str(&rest[..p]);
        rest = &rest[p + rest[p..].find("-->").unwrap() + 3..];
    }
    s.push_str(rest);
    let collapsed: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed.replace("> <", "><")
}

#[test]
fn standard_to_schema_to_standard_keeps_every_value() {
    for stem in STEMS {
        let std_bytes = fixture(stem, "standard.xml");
        let (a, _) = read_doc(&std_bytes);
        let schema = write_doc(Form::Schema, &a);
        let (b, diag) = read_doc(&schema);
        assert!(diag.of(Severity::Warning).next().is_none(), "{stem}: {:?}", diag.items);
        let back = write_doc(Form::Standard, &b);
        let (c, _) = read_doc(&back);
        // Every value in the model is equal (text of every number, labels, links, modifiers).
        assert!(model(&std_bytes).root == model(&back).root, "{stem}: model changed");
        assert_eq!(values_only(&text_of(&std_bytes)), values_only(&text_of(&back)), "{stem}: text values changed");
        // And the IR.
        assert_eq!(a.skeletons[0].bones.len(), c.skeletons[0].bones.len());
        for (x, y) in a.skeletons[0].bones.iter().zip(&c.skeletons[0].bones) {
            assert_eq!((&x.name, x.parent, x.mirror, x.rest), (&y.name, y.parent, y.mirror, y.rest), "{stem}");
        }
        // The Schema-Based text is what the fixture holds, values-wise.
        // (The UTF-16 fixture has the CRLF line endings generated text has inside verbatim elements.)
        assert!(
            model(&schema).root == model(&fixture(stem, "schema.utf16.xml")).root,
            "{stem}: conversion differs from the schema fixture"
        );
    }
}

#[test]
fn schema_to_standard_to_schema_keeps_every_value() {
    for stem in STEMS {
        let s = fixture(stem, "schema.xml");
        let (a, _) = read_doc(&s);
        let std = write_doc(Form::Standard, &a);
        assert_eq!(&std[..2], &[0xFF, 0xFE], "Standard is written as UTF-16 LE with BOM");
        assert!(text_of(&std).starts_with("<?xml version=\"1.0\" encoding=\"utf-16\"?>\r\n<?info tool=\"AnvilToolkit\""));
        let (b, _) = read_doc(&std);
        let back = write_doc(Form::Schema, &b);
        assert!(model(&s).root == model(&back).root, "{stem}");
        assert_eq!(values_only(&text_of(&s)), values_only(&text_of(&back)), "{stem}");
    }
}

#[test]
fn the_biped_has_a_modifier_of_every_kind_with_resolved_references() {
    use skelport_anvil::ModifierKind;
    let m = model(&fixture("biped", "standard.xml"));
    let ids = m.id_map();
    let mut kinds = std::collections::HashSet::new();
    for b in m.bones() {
        for md in b.modifiers() {
            let k = ModifierKind::from_class(&md.class);
            assert!(!matches!(k, ModifierKind::Other(_)), "{}", md.class);
            kinds.insert(k.clone());
            // Every documented reference field that is set points to a bone of this file.
            for fname in k.bone_reference_fields() {
                let mut found = 0;
                md.for_each_link(&mut |field, l, _| {
                    if field == *fname {
                        assert!(ids.contains_key(&l.id), "{}.{fname} → {}", md.class, l.id);
                        found += 1;
                    }
                });
                let _ = found;
            }
        }
    }
    assert_eq!(kinds.len(), ModifierKind::KNOWN.len(), "{kinds:?}");
    // MaxLookAt from the seed: UpNode = Hips, LookAtBone = LeftLeg.
    let o = m.find_bone("O_LeftLeg").unwrap();
    let ml = m.bone(o).modifiers().next().unwrap();
    assert_eq!(ml.link("UpNode"), m.bone(m.find_bone("Hips").unwrap()).id);
    assert_eq!(ml.link("LookAtBone"), m.bone(m.find_bone("LeftLeg").unwrap()).id);
}

#[test]
fn ir_of_the_biped() {
    let (doc, _) = read_doc(&fixture("biped", "standard.xml"));
    assert_eq!(doc.frame, skelport_anvil::ANVIL_FRAME);
    let sk = &doc.skeletons[0];
    assert!(skelport_ir::validate::validate(&doc).is_empty(), "{:?}", skelport_ir::validate::validate(&doc));
    let hips = sk.find("Hips").unwrap();
    assert_eq!(sk.bone(hips).parent, sk.find("Reference"));
    assert_eq!(sk.bone(hips).rest.rotation, DQuat::from_xyzw(-0.5, -0.5, -0.5, 0.5));
    // The unknown hash shows as x + 8 hex digits.
    assert!(sk.find("x2BA0BB9F").is_some());
    // Mirrors.
    let l = sk.find("LeftArm").unwrap();
    assert_eq!(sk.bone(l).mirror, sk.find("RightArm"));
    assert_eq!(sk.bone(hips).mirror, None);
    // World transforms from the locals equal the file's globals.
    let m = model(&fixture("biped", "standard.xml"));
    let w = sk.world_transforms();
    for (i, b) in sk.bones.iter().enumerate() {
        let mi = m.find_bone(&b.name).unwrap();
        let (gp, gq) = m.bone(mi).global_pose().unwrap();
        assert!((w[i].translation - gp).length() < 1e-5, "{}", b.name);
        assert!(w[i].rotation.dot(gq).abs() > 1.0 - 1e-6, "{}", b.name);
    }
}

#[test]
fn names_file_resolves_more_hashes_and_they_survive() {
    let bytes = fixture("biped", "standard.xml");
    let dirp = std::env::temp_dir().join(format!("skelport-anvil-names-{}", std::process::id()));
    std::fs::create_dir_all(&dirp).unwrap();
    // 0x2BA0BB9F is not any name we know; find what a names file would do with a real name:
    // rename the bone to a name only the file knows, then read with and without the file.
    let mut m = model(&bytes);
    m.rename_bone("x2BA0BB9F", "LeftKneeHelper_Custom").unwrap();
    let renamed = m.to_bytes(Form::Standard).unwrap();
    let plain = read_doc(&renamed).0;
    // The label matches the hash, so the name shows even without the file.
    assert!(plain.skeletons[0].find("LeftKneeHelper_Custom").is_some());
    // Strip the label: now only the names file can resolve it.
    let t = text_of(&renamed).replace(" HashName=\"LeftKneeHelper_Custom\"", "");
    let unlabeled =
        skelport_anvil::text::encode(&t, skelport_anvil::text::ByteForm { encoding: skelport_anvil::text::Encoding::Utf16Le, bom: true });
    let hex = format!("x{:08X}", bone_hash("LeftKneeHelper_Custom"));
    assert!(read_doc(&unlabeled).0.skeletons[0].find(&hex).is_some());
    let names = dirp.join("names.tsv");
    std::fs::write(&names, "name\tcrc32\n# comment\nLeftKneeHelper_Custom\t123\n").unwrap();
    let mut d = Diagnostics::default();
    let doc = AnvilFormat
        .read(Input { path: None, bytes: &unlabeled }, &ReadOptions { names: Some(names.clone()), ..Default::default() }, &mut d)
        .unwrap();
    assert!(doc.skeletons[0].find("LeftKneeHelper_Custom").is_some());
    // Written back unchanged, byte for byte.
    assert!(write_doc(Form::Standard, &doc) == unlabeled);
    let _ = std::fs::remove_dir_all(&dirp);
}

#[test]
fn sniffing() {
    for stem in STEMS {
        for (variant, form) in VARIANTS {
            let b = fixture(stem, variant);
            let head = &b[..b.len().min(4096)];
            let (right, wrong) = match form {
                Form::Standard => (AnvilFormat.sniff(head), AnvilSchemaFormat.sniff(head)),
                Form::Schema => (AnvilSchemaFormat.sniff(head), AnvilFormat.sniff(head)),
            };
            assert_eq!(right, 100, "{stem}.{variant}");
            assert!(wrong < right && wrong > 0, "{stem}.{variant}");
        }
    }
    let collada = b"<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\"><asset/></COLLADA>";
    let avatar = b"<?xml version=\"1.0\" encoding=\"US-ASCII\" standalone=\"yes\"?>\n<linden_skeleton num_bones=\"133\" num_collision_volumes=\"26\" version=\"2.0\">\n<bone name=\"mPelvis\"/></linden_skeleton>";
    let buildtable = "<?xml version=\"1.0\" encoding=\"utf-16\"?>\r\n<?info tool=\"AnvilToolkit\" toolVersion=\"1.2.10\" type=\"0\"?>\r\n<BuildTable ID=\"1778867967382\">\r\n</BuildTable>";
    let bt = skelport_anvil::text::encode(buildtable, Form::Standard.default_bytes());
    for x in [&collada[..], &avatar[..], &bt[..], b"", b"{\"asset\":{}}"] {
        assert_eq!(AnvilFormat.sniff(x), 0);
        assert_eq!(AnvilSchemaFormat.sniff(x), 0);
    }
}

fn hidden_blade_merge() -> (AnvilSkeleton, AnvilSkeleton, skelport_anvil::MergeReport) {
    let main = model(&fixture("biped", "standard.xml"));
    let addon = model(&fixture("hidden_blade_addon", "schema.xml"));
    let (out, report) = merge(&main, &[addon], &MergeOptions::default()).unwrap();
    (main, out, report)
}

#[test]
fn merge_matches_the_seeds_hidden_blade_example() {
    let (main, out, report) = hidden_blade_merge();
    // Spine2 is matched by hash; LeftClavicle → LeftArm → LeftForeArm (and the right side) are
    // the path: matched, not duplicated. Only the two blade bones are new.
    assert_eq!(out.bone_count(), main.bone_count() + 2, "{report:?}");
    assert_eq!(report.added.len(), 2);
    assert_eq!(report.matched.len(), 7, "{report:?}");
    let ids = out.id_map();
    for (blade, fore) in [("A_Hidden_Blade", "LeftForeArm"), ("A_Hidden_Blade2", "RightForeArm")] {
        let b = out.find_bone(blade).unwrap_or_else(|| panic!("{blade} added"));
        let p = out.bone(b).bone_parent().unwrap();
        assert_eq!(out.bone(ids[&p]).bone_hash(), Some(bone_hash(fore)), "{blade} under {fore}");
        // Placed after its parent in the array (parents first).
        assert!(ids[&p] < b);
    }
    for path in ["Spine2", "LeftClavicle", "LeftArm", "LeftForeArm", "RightClavicle", "RightArm", "RightForeArm"] {
        assert_eq!(out.bones().filter(|b| b.bone_hash() == Some(bone_hash(path))).count(), 1, "{path} not duplicated");
    }
    // The addon LeftForeArm's BallJoint modifier is applied to the main LeftForeArm.
    let lf = out.find_bone("LeftForeArm").unwrap();
    assert_eq!(out.bone(lf).modifiers().map(|m| m.class.to_string()).collect::<Vec<_>>(), vec!["BallJointBoneModifier"]);
    assert_eq!(report.modifiers_applied, 1);
    // The blade's Follow modifier now points at the main skeleton's LeftForeArm.
    let blade = out.find_bone("A_Hidden_Blade").unwrap();
    let follow = out.bone(blade).modifiers().next().unwrap();
    assert_eq!(follow.link("AssociatedBone"), out.bone(lf).id);
    // IDs stay unique; the result writes, reads back cleanly, and keeps the biped's text.
    let mut all = Vec::new();
    skelport_anvil::model::collect_ids(&out.root, &mut all);
    let n = all.len();
    all.sort();
    all.dedup();
    assert_eq!(n, all.len(), "IDs unique");
    let bytes = out.to_bytes(Form::Standard).unwrap();
    let (doc, diag) = read_doc(&bytes);
    assert!(diag.of(Severity::Warning).next().is_none(), "{:?}", diag.items);
    assert_eq!(doc.skeletons[0].bones.len(), main.bone_count() + 2);
    let orig = text_of(&fixture("biped", "standard.xml"));
    let merged = text_of(&bytes);
    let lines_orig: std::collections::HashSet<&str> = orig.lines().collect();
    let kept = merged.lines().filter(|l| lines_orig.contains(l)).count();
    assert!(kept >= orig.lines().count() - 2, "untouched biped text is kept verbatim");
    // Merging the same addon again changes nothing more.
    let (again, r2) = merge(&out, &[model(&fixture("hidden_blade_addon", "standard.xml"))], &MergeOptions::default()).unwrap();
    assert_eq!(again.bone_count(), out.bone_count());
    assert!(r2.added.is_empty());
}

#[test]
fn merge_sword_and_blade_together_in_schema_form() {
    let main = model(&fixture("biped", "schema.xml"));
    let addons = [model(&fixture("sword_addon", "standard.xml")), model(&fixture("hidden_blade_addon", "standard.utf8.xml"))];
    let (out, report) = merge(&main, &addons, &MergeOptions::default()).unwrap();
    assert_eq!(out.bone_count(), main.bone_count() + 4, "{report:?}");
    let sword = out.find_bone("P_Sword_Tag").unwrap();
    let spine = out.find_bone("Spine").unwrap();
    assert_eq!(out.bone(sword).bone_parent(), out.bone(spine).id);
    assert_eq!(out.bone(sword).modifiers().count(), 2, "two HingeBoneModifiers come with the new bone");
    let waist = out.find_bone("P_LeftWaist_Tag").unwrap();
    assert_eq!(out.bone(waist).bone_parent(), out.bone(sword).id);
    let bytes = out.to_bytes(Form::Schema).unwrap();
    let (doc, diag) = read_doc(&bytes);
    assert!(diag.of(Severity::Warning).next().is_none(), "{:?}", diag.items);
    // Index / ChildBoneCount recomputed: Spine has its old descendants + 2.
    let m = model(&bytes);
    let s = m.find_bone("Spine").unwrap();
    assert_eq!(m.bone(s).text(f::CHILD_BONE_COUNT).unwrap().parse::<usize>().unwrap(), m.descendant_counts()[s]);
    assert_eq!(doc.skeletons[0].bones.len(), out.bone_count());
}

#[test]
fn merge_refuses_a_path_that_does_not_mirror_the_main_hierarchy() {
    let main = model(&fixture("biped", "standard.xml"));
    // Hang LeftArm directly under Spine2 in the addon (skipping LeftClavicle): the game would crash.
    let mut addon = model(&fixture("hidden_blade_addon", "standard.xml"));
    let spine2 = addon.bone(addon.find_bone("Spine2").unwrap()).id;
    let la = addon.find_bone("LeftArm").unwrap();
    addon.bone_mut(la).set_link(f::FATHER, spine2);
    let err = merge(&main, &[addon], &MergeOptions::default()).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, AnvilError::Merge(_)), "{msg}");
    assert!(msg.contains("'LeftArm'") && msg.contains("mirror the main hierarchy"), "{msg}");
    // An addon whose root is not in the main skeleton.
    let mut addon = model(&fixture("hidden_blade_addon", "standard.xml"));
    let r = addon.find_bone("Spine2").unwrap();
    addon.rename_bone("Spine2", "NotInMain").unwrap();
    let _ = r;
    let msg = merge(&main, &[addon], &MergeOptions::default()).unwrap_err().to_string();
    assert!(msg.contains("NotInMain"), "{msg}");
}

#[test]
fn merge_checks_the_bone_limit_after_deduplication() {
    let main = model(&fixture("biped", "standard.xml"));
    let addon = model(&fixture("hidden_blade_addon", "standard.xml"));
    let n = main.bone_count();
    // Exactly fits after de-duplication (path bones are not counted twice).
    assert!(merge(&main, std::slice::from_ref(&addon), &MergeOptions { limit: Some(n + 2), ..Default::default() }).is_ok());
    let err = merge(&main, &[addon], &MergeOptions { limit: Some(n + 1), ..Default::default() }).unwrap_err();
    assert!(matches!(err, AnvilError::Limit(_)), "{err}");
    assert!(err.to_string().contains(&format!("{} bones", n + 2)), "{err}");
}

fn chain_doc(n: usize) -> Document {
    // A wide, fairly deep tree: every bone's parent is (i - 1) / 4.
    let mut sk = Skeleton::new("big");
    for i in 0..n {
        let parent = if i == 0 { None } else { Some(BoneId::from_index((i - 1) / 4)) };
        let t = Transform::from_rt(DQuat::from_rotation_z(0.001 * (i % 7) as f64), DVec3::new(0.01, 0.02 * (i % 3) as f64, 0.05));
        sk.push(Bone::new(format!("b{i}"), parent, t));
    }
    let mut d = Document::new(skelport_anvil::ANVIL_FRAME);
    d.skeletons.push(sk);
    d
}

#[test]
fn a_65535_bone_skeleton_round_trips() {
    let doc = chain_doc(65_535);
    let bytes = write_doc(Form::Standard, &doc);
    let (back, diag) = read_doc(&bytes);
    assert!(diag.of(Severity::Warning).next().is_none(), "{:?}", diag.items.first());
    assert_eq!(back.skeletons[0].bones.len(), 65_535);
    assert!(write_doc(Form::Standard, &back) == bytes, "byte-identical");
    // Every bone in order with its parent (a file this big is read in two halves on two
    // threads), and values as f32, the engine's precision.
    for (a, b) in doc.skeletons[0].bones.iter().zip(&back.skeletons[0].bones) {
        assert_eq!((&a.name, a.parent), (&b.name, b.parent));
        assert!((a.rest.translation - b.rest.translation).length() < 1e-6, "{}", a.name);
    }
    // One more does not fit the engine.
    let mut d = Diagnostics::default();
    let err = AnvilFormat.write(&chain_doc(65_536), &WriteOptions::default(), &mut d).unwrap_err();
    assert!(err.to_string().contains("65535"), "{err}");
}

#[test]
fn schema_form_refuses_256_bones() {
    let mut d = Diagnostics::default();
    let err = AnvilSchemaFormat.write(&chain_doc(256), &WriteOptions::default(), &mut d).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("Unsigned8") && msg.contains("255"), "{msg}");
    assert!(AnvilSchemaFormat.write(&chain_doc(255), &WriteOptions::default(), &mut d).is_ok());
    assert!(AnvilFormat.write(&chain_doc(256), &WriteOptions::default(), &mut d).is_ok());
    // --limit is honoured too.
    let err = AnvilFormat.write(&chain_doc(30), &WriteOptions { bone_limit: Some(20), ..Default::default() }, &mut d).unwrap_err();
    assert!(err.to_string().contains("limit of 20"), "{err}");
}

#[test]
fn from_another_format_generates_ids_hashes_transforms_and_defaults() {
    // A small biped in Blender's frame.
    let mut sk = Skeleton::new("gen");
    let r = sk.push(Bone::new("Reference", None, Transform::IDENTITY));
    let h = sk.push(Bone::new("Hips", Some(r), Transform::from_rt(DQuat::from_rotation_x(0.3), DVec3::new(0.0, 0.0, 1.0))));
    let s = sk.push(Bone::new("Spine", Some(h), Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.2, 0.0))));
    let la = sk.push(Bone::new("LeftArm", Some(s), Transform::from_rt(DQuat::from_rotation_z(1.0), DVec3::new(0.2, 0.3, 0.0))));
    let ra = sk.push(Bone::new("RightArm", Some(s), Transform::from_rt(DQuat::from_rotation_z(-1.0), DVec3::new(-0.2, 0.3, 0.0))));
    let _ = (la, ra);
    let mut doc = Document::new(Frame::BLENDER);
    doc.skeletons.push(sk);
    for form in [Form::Standard, Form::Schema] {
        let bytes = write_doc(form, &doc);
        let (back, diag) = read_doc(&bytes);
        assert!(diag.of(Severity::Warning).next().is_none(), "Global and Local agree: {:?}", diag.items);
        let m = model(&bytes);
        let mt = |n: &str| m.bone(m.find_bone(n).unwrap()).text(f::MIRRORING_TYPE).unwrap().to_string();
        assert_eq!(mt("Reference"), "2");
        assert_eq!(mt("Hips"), "4");
        assert_eq!(mt("Spine"), "4");
        assert_eq!(mt("LeftArm"), "5");
        let la = m.find_bone("LeftArm").unwrap();
        let ra = m.find_bone("RightArm").unwrap();
        assert_eq!(m.bone(la).bone_mirror(), m.bone(ra).id, "MirrorBone by Left/Right names");
        assert_eq!(m.bone(m.find_bone("Spine").unwrap()).bone_mirror(), m.bone(m.find_bone("Spine").unwrap()).id);
        assert_eq!(m.root.text("SkeletonType"), Some("0"), "BIPED");
        assert_eq!(m.bone(m.find_bone("Hips").unwrap()).bone_hash(), Some(3_738_240_529));
        // Frame converted exactly; world positions agree with the source.
        let mut src = doc.clone();
        src.convert_frame(skelport_anvil::ANVIL_FRAME);
        let (wa, wb) = (src.skeletons[0].world_transforms(), back.skeletons[0].world_transforms());
        for (x, y) in wa.iter().zip(&wb) {
            assert!((x.translation - y.translation).length() < 1e-6);
        }
    }
    // An addon (root Spine) is SKELETONTYPE_CUSTOM.
    let mut sk = Skeleton::new("addon");
    let s = sk.push(Bone::new("Spine", None, Transform::IDENTITY));
    sk.push(Bone::new("P_Sword_Tag", Some(s), Transform::IDENTITY));
    let mut doc = Document::new(skelport_anvil::ANVIL_FRAME);
    doc.skeletons.push(sk);
    let m = model(&write_doc(Form::Standard, &doc));
    assert_eq!(m.root.text("SkeletonType"), Some("8"));
}

#[test]
fn ir_edits_are_patched_into_the_original_text() {
    let bytes = fixture("biped", "standard.xml");
    let (mut doc, _) = read_doc(&bytes);
    let sk = &mut doc.skeletons[0];
    let i = sk.find("LeftHand_Weapon_Ref").unwrap();
    sk.bones[i.index()].name = "LeftHand_Weapon_Ref2".into();
    let j = sk.find("P_Generic_Object_01").unwrap();
    sk.bones[j.index()].rest.translation.z = 0.9;
    let out = write_doc(Form::Standard, &doc);
    let (a, b) = (text_of(&bytes), text_of(&out));
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    assert_eq!(la.len(), lb.len(), "same layout");
    let changed: Vec<(usize, &str)> = la.iter().zip(&lb).enumerate().filter(|(_, (x, y))| x != y).map(|(k, (_, y))| (k, *y)).collect();
    // The name line, and the Global/Local Z of P_Generic_Object_01 (root-level child of Reference).
    assert_eq!(changed.len(), 3, "{changed:#?}");
    assert!(changed[0].1.contains(&format!("HashName=\"LeftHand_Weapon_Ref2\">{}<", bone_hash("LeftHand_Weapon_Ref2"))), "{changed:?}");
    assert!(changed.iter().filter(|(_, l)| l.contains("<Z>0.9</Z>")).count() == 2, "{changed:?}");
    let (back, diag) = read_doc(&out);
    assert!(diag.of(Severity::Warning).next().is_none(), "{:?}", diag.items);
    assert!(back.skeletons[0].find("LeftHand_Weapon_Ref2").is_some());
}

#[test]
fn ir_bone_removal_and_addition_keep_links_right() {
    let bytes = fixture("biped", "schema.xml");
    let (doc, _) = read_doc(&bytes);
    // Remove LeftLeg the IR way: children re-parented with their world pose kept.
    let sk = &doc.skeletons[0];
    let ll = sk.find("LeftLeg").unwrap();
    let world = sk.world_transforms();
    let mut nsk = Skeleton::new(&sk.name);
    nsk.ext = sk.ext.clone();
    let mut map = vec![None; sk.bones.len()];
    for (i, b) in sk.bones.iter().enumerate() {
        if i == ll.index() {
            continue;
        }
        let mut nb = b.clone();
        let mut parent = b.parent;
        if parent == Some(ll) {
            parent = sk.bones[ll.index()].parent;
            let pw = world[parent.unwrap().index()];
            nb.rest = Transform::from_rt(
                pw.rotation.inverse() * world[i].rotation,
                pw.rotation.inverse() * (world[i].translation - pw.translation),
            );
        }
        nb.parent = parent.map(|p| map[p.index()].unwrap());
        nb.mirror = b.mirror.and_then(|m| map.get(m.index()).copied().flatten());
        map[i] = Some(nsk.push(nb));
    }
    // And add a bone.
    let hand = nsk.find("LeftHand").unwrap();
    nsk.push(Bone::new("LeftHandIndex1", Some(hand), Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.05, 0.0, 0.0))));
    let mut ndoc = doc.clone();
    ndoc.skeletons[0] = nsk;
    let mut d = Diagnostics::default();
    let out = AnvilSchemaFormat.write(&ndoc, &WriteOptions::default(), &mut d).unwrap().main;
    let m = model(&out);
    let foot = m.find_bone("LeftFoot").unwrap();
    let upleg = m.find_bone("LeftUpLeg").unwrap();
    assert_eq!(m.bone(foot).bone_parent(), m.bone(upleg).id);
    let rl = m.find_bone("RightLeg").unwrap();
    assert_eq!(m.bone(rl).bone_mirror(), m.bone(rl).id, "mirror of a removed bone points to itself");
    let o = m.bone(m.find_bone("O_LeftLeg").unwrap()).modifiers().next().unwrap().clone();
    assert!(matches!(o.get("LookAtBone"), Some(Value::Ptr(p)) if matches!(p.target, Target::Null)));
    let spline = m.bone(m.find_bone("H_LF2_Skirt").unwrap()).modifiers().next().unwrap().clone();
    assert!(matches!(spline.get("Targets"), Some(Value::List(l)) if l.items.len() == 1));
    assert!(d.of(Severity::Warning).count() >= 2, "{:?}", d.items);
    let idx = m.find_bone("LeftHandIndex1").unwrap();
    assert_eq!(m.bone(idx).bone_parent(), m.bone(m.find_bone("LeftHand").unwrap()).id);
    // Schema Index / ChildBoneCount are right, and the file reads back cleanly.
    let (_, diag) = read_doc(&out);
    assert!(diag.of(Severity::Warning).next().is_none(), "{:?}", diag.items);
}

#[test]
fn library_bone_edits_keep_every_link() {
    let bytes = fixture("biped", "standard.xml");
    let names = Names::builtin();
    let mut m = model(&bytes);
    let n = m.bone_count();
    // Remove LeftLeg: LeftFoot moves to LeftUpLeg keeping its global pose.
    let foot_global = m.bone(m.find_bone("LeftFoot").unwrap()).global_pose().unwrap();
    let notes = m.remove_bone("LeftLeg", &names).unwrap();
    assert!(notes.iter().any(|s| s.contains("re-parented")), "{notes:?}");
    assert!(notes.iter().any(|s| s.contains("MirrorBone")), "{notes:?}");
    assert_eq!(m.bone_count(), n - 1);
    let foot = m.find_bone("LeftFoot").unwrap();
    assert_eq!(m.bone(foot).bone_parent(), m.bone(m.find_bone("LeftUpLeg").unwrap()).id);
    assert_eq!(m.bone(foot).global_pose().unwrap(), foot_global);
    // Rename LeftHand: its ID is unchanged, so Follow/Roll/Stretch references stay right.
    let hand_id = m.bone(m.find_bone("LeftHand").unwrap()).id;
    m.rename_bone("LeftHand", "LeftHandRenamed").unwrap();
    assert_eq!(m.bone(m.find_bone("LeftHandRenamed").unwrap()).id, hand_id);
    let wr = m.find_bone("LeftHand_Weapon_Ref").unwrap();
    assert_eq!(m.bone(wr).modifiers().next().unwrap().link("AssociatedBone"), hand_id);
    assert!(m.rename_bone("LeftHandRenamed", "Hips").is_err(), "name taken");
    // Add a bone with a Left/Right mirror.
    let at = m.add_bone(&NewBone { position: [0.1, 0.0, 0.0], ..NewBone::new("RightHandThumb1", "RightHand") }, &names).unwrap();
    let nb = m.bone(at);
    assert_eq!(nb.bone_hash(), Some(bone_hash("RightHandThumb1")));
    let parent = m.bone(m.find_bone("RightHand").unwrap());
    assert_eq!(nb.bone_parent(), parent.id);
    let (pp, pq) = parent.global_pose().unwrap();
    let (gp, _) = nb.global_pose().unwrap();
    assert!((gp - (pp + pq * DVec3::new(0.1, 0.0, 0.0))).length() < 1e-6);
    assert!(m.add_bone(&NewBone::new("Hips", "Reference"), &names).is_err());
    // Remove the root: one child takes its place... the biped's root has several, so refused.
    assert!(m.remove_bone("Reference", &names).is_err());
    // Writes in both forms and reads back without warnings.
    for form in [Form::Standard, Form::Schema] {
        let out = m.to_bytes(form).unwrap();
        let (doc, diag) = read_doc(&out);
        assert!(diag.of(Severity::Warning).next().is_none(), "{form:?}: {:?}", diag.items);
        assert_eq!(doc.skeletons[0].bones.len(), n);
    }
    // Removing a root with one child moves RootBone.
    let mut s = model(&fixture("sword_addon", "standard.xml"));
    s.remove_bone("Spine", &names).unwrap();
    assert_eq!(s.root_bone(), s.bone(s.find_bone("P_Sword_Tag").unwrap()).id);
    let out = s.to_bytes(Form::Standard).unwrap();
    assert_eq!(read_doc(&out).0.skeletons[0].bones.len(), 2);
}

#[test]
fn warnings_for_local_global_mismatch_and_wrong_index() {
    let t = text_of(&fixture("sword_addon", "standard.xml"));
    // P_LeftWaist_Tag's LocalPosition Z -0.1 → -0.2: Local no longer matches the Globals.
    let bad = t.replacen("<X>0</X> <Y>0</Y> <Z>-0.1</Z> <W>0</W>", "<X>0</X> <Y>0</Y> <Z>-0.2</Z> <W>0</W>", 1);
    assert_ne!(bad, t);
    let bytes = skelport_anvil::text::encode(&bad, Form::Standard.default_bytes());
    let (doc, diag) = read_doc(&bytes);
    let w: Vec<&str> = diag.of(Severity::Warning).map(|d| d.message.as_str()).collect();
    assert!(w.iter().any(|m| m.contains("P_LeftWaist_Tag") && m.contains("Local")), "{w:?}");
    // Both kept as written.
    assert!(write_doc(Form::Standard, &doc) == bytes);
    // A Schema file with a wrong ChildBoneCount: warned, and corrected on write.
    let s = text_of(&fixture("sword_addon", "schema.xml"));
    let bad = s.replacen("<Unsigned8 Name=\"ChildBoneCount\">2</Unsigned8>", "<Unsigned8 Name=\"ChildBoneCount\">1</Unsigned8>", 1);
    assert_ne!(bad, s);
    let (doc, diag) = read_doc(bad.as_bytes());
    assert!(diag.of(Severity::Warning).any(|d| d.message.contains("ChildBoneCount 1 (2 descendants)")), "{:?}", diag.items);
    let out = write_doc(Form::Schema, &doc);
    assert_eq!(text_of(&out), s, "recomputed on write");
}

/// The error reading `text` as bad.xml (through the model and the IR checks).
fn read_err(text: &str) -> String {
    let mut d = Diagnostics::default();
    match AnvilSkeleton::parse(text.as_bytes(), "bad.xml")
        .and_then(|m| skelport_anvil::ir::to_document(m, &Names::builtin(), "bad.xml", "bad", &mut d))
    {
        Ok(_) => panic!("no error"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn malformed_inputs_are_errors_with_positions_never_panics() {
    let good = text_of(&fixture("sword_addon", "standard.xml"));
    type Case<'a> = (String, &'a str, Option<(usize, usize)>);
    let cases: Vec<Case> = vec![
        (good.replacen("</Quat>", "</Quaternion>", 1), "does not match", Some((22, 7))),
        (good[..good.find("</Bone>").unwrap() + 7].to_string(), "not closed", None),
        (good[..good.len() / 2].to_string(), "malformed XML", None),
        (good.replacen("<Bone ID=\"882909072\">", "<Bone ID=\"88290907x\">", 1), "not an unsigned 64-bit", Some((38, 5))),
        (
            good.replacen(
                "<Value Name=\"Value\" Type=\"UInt64\">882909071</Value> <!-- Parent = Spine -->",
                "<Value Name=\"Value\" Type=\"UInt64\">99</Value>",
                1,
            ),
            "dangling link",
            Some((40, 7)),
        ),
        (good.replacen("<Value Name=\"LagFactor\"", "<Value Name=LagFactor", 1), "quoted", None),
        ("<?xml version=\"1.0\"?>\n<Collada/>".into(), "not an AnvilToolkit skeleton", Some((2, 1))),
        (good.replacen("<X>0.15</X>", "<X>0.15 & 1</X>", 1), "reference", None),
    ];
    for (text, want, pos) in cases {
        let msg = read_err(&text);
        assert!(msg.contains(want), "want {want:?} in {msg}");
        assert!(msg.starts_with("bad.xml"), "{msg}");
        if let Some((l, c)) = pos {
            assert!(msg.starts_with(&format!("bad.xml:{l}:{c}:")), "want {l}:{c} in {msg}");
        }
    }
    // The dangling link's message names the bone and field.
    let t = good.replacen(
        "<Value Name=\"Value\" Type=\"UInt64\">882909071</Value> <!-- Parent = Spine -->",
        "<Value Name=\"Value\" Type=\"UInt64\">99</Value>",
        1,
    );
    // Fed as UTF-8, so declared as UTF-8 (a "utf-16" declaration on UTF-8 bytes is refused).
    let t = t.replacen("encoding=\"utf-16\"", "encoding=\"utf-8\"", 1);
    let mut d = Diagnostics::default();
    let e = AnvilFormat.read(Input { path: Some(Path::new("bad.xml")), bytes: t.as_bytes() }, &ReadOptions::default(), &mut d).unwrap_err();
    assert!(e.to_string().contains("bone 'P_Sword_Tag': FatherBone points to ID 99"), "{e}");
    // Bad encodings.
    let e = AnvilSkeleton::parse(&[0xFF, 0xFE, 0x3C], "odd.xml").unwrap_err();
    assert!(e.to_string().contains("odd number"), "{e}");
    let e = AnvilSkeleton::parse(&[b'<', b'a', 0xC3, 0x28], "utf8.xml").unwrap_err();
    assert!(e.to_string().contains("byte 2"), "{e}");
    // Every truncation and a sweep of corruptions: errors or documents, never a panic.
    let bytes = fixture("sword_addon", "schema.xml");
    for cut in (0..bytes.len()).step_by(7) {
        let _ = AnvilSkeleton::parse(&bytes[..cut], "cut.xml").map(|m| m.to_bytes(Form::Standard));
    }
    for (k, pos) in (0..bytes.len()).step_by(13).enumerate() {
        let mut b = bytes.clone();
        b[pos] = [b'<', b'>', b'"', b'/', b'&', b'x', 0xFF][k % 7];
        let mut d = Diagnostics::default();
        if let Ok(doc) = AnvilFormat.read(Input { path: None, bytes: &b }, &ReadOptions::default(), &mut d) {
            let _ = AnvilFormat.write(&doc, &WriteOptions::default(), &mut d);
        }
        if let Ok(m) = AnvilSkeleton::parse(&b, "x.xml") {
            let _ = merge(&model(&fixture("biped", "standard.xml")), std::slice::from_ref(&m), &MergeOptions::default());
            let mut m2 = m.clone();
            let _ = m2.remove_bone("P_Sword_Tag", &Names::builtin());
            let mut d = Diagnostics::default();
            if let Ok(doc) = skelport_anvil::ir::to_document(m, &Names::builtin(), "x", "x", &mut d) {
                let _ = AnvilFormat.write(&doc, &WriteOptions::default(), &mut d);
                let _ = AnvilSchemaFormat.write(&doc, &WriteOptions::default(), &mut d);
            }
        }
    }
}

#[test]
fn unusual_but_valid_markup_is_kept_byte_for_byte() {
    let t = text_of(&fixture("sword_addon", "standard.xml"));
    let t = t
        .replacen("<List Name=\"BoneModifiers\" />", "<List Name=\"BoneModifiers\"></List>", 1)
        .replacen("<Value Name=\"WrinkleFactor\" Type=\"Single\">0</Value>", "<Value Name='WrinkleFactor'\tType=\"Single\" >0</Value >", 1)
        .replacen(
            "<Value Name=\"SolvingPriority\" Type=\"Byte\">0</Value>",
            "<Value  Name=\"SolvingPriority\"   Type=\"Byte\">0</Value>\r\n      <Value Name=\"x73B5D0A0\" Type=\"String\">a &amp; b &#x41;</Value>\r\n      <Mystery Kind=\"1\"><![CDATA[<kept>]]><Inner/></Mystery>",
            1,
        )
        .replacen(
            "</HingeBoneModifier>\r\n      </List>",
            "</HingeBoneModifier>\r\n        <FXBoneModifier ID=\"882909099\" BlendWeight=\"1\" UseModifiedBoneMatrix=\"false\">\r\n        </FXBoneModifier>\r\n      </List>",
            1,
        );
    let bytes = skelport_anvil::text::encode(&t, Form::Standard.default_bytes());
    let m = model(&bytes);
    assert!(m.to_bytes(Form::Standard).unwrap() == bytes, "model path");
    let (doc, diag) = read_doc(&bytes);
    assert!(diag.of(Severity::Warning).next().is_none(), "{:?}", diag.items);
    assert!(write_doc(Form::Standard, &doc) == bytes, "IR path");
    // An edit elsewhere leaves all of it alone.
    let mut m = model(&bytes);
    m.rename_bone("P_LeftWaist_Tag", "P_RightWaist_Tag").unwrap();
    let out = text_of(&m.to_bytes(Form::Standard).unwrap());
    let changed: Vec<(&str, &str)> = t.lines().zip(out.lines()).filter(|(a, b)| a != b).collect();
    assert_eq!(changed.len(), 1, "{changed:#?}");
    assert!(changed[0].1.contains("HashName=\"P_RightWaist_Tag\""));
    // And the unknown elements travel to the other form and back.
    let schema = m.to_bytes(Form::Schema).unwrap();
    let back = model(&schema).to_bytes(Form::Standard).unwrap();
    let back_t = text_of(&back);
    assert!(back_t.contains("<Mystery Kind=\"1\"><![CDATA[<kept>]]><Inner/></Mystery>"), "{back_t}");
    assert!(back_t.contains("<Value Name=\"x73B5D0A0\" Type=\"String\">a &amp; b A</Value>"), "{back_t}");
}

#[test]
fn merged_bones_get_their_global_from_the_main_parent_and_their_local() {
    // An addon placed elsewhere (every Global moved 5 m along X; Locals unchanged, so the addon
    // itself is consistent): the added bones must land on the main skeleton, not keep the
    // addon's Globals.
    let main = model(&fixture("biped", "standard.xml"));
    let mut addon = model(&fixture("hidden_blade_addon", "standard.xml"));
    for i in 0..addon.bone_count() {
        let (p, q) = addon.bone(i).global_pose().unwrap();
        addon.bone_mut(i).set_pose(f::GLOBAL_POS, f::GLOBAL_ROT, p + DVec3::new(5.0, 0.0, 0.0), q);
    }
    let (out, _) = merge(&main, &[addon.clone()], &MergeOptions::default()).unwrap();
    let ids = out.id_map();
    for blade in ["A_Hidden_Blade", "A_Hidden_Blade2"] {
        let b = out.find_bone(blade).unwrap();
        let (pp, pq) = out.bone(ids[&out.bone(b).bone_parent().unwrap()]).global_pose().unwrap();
        let (lp, lq) = addon.bone(addon.find_bone(blade).unwrap()).local_pose().unwrap();
        let (gp, gq) = out.bone(b).global_pose().unwrap();
        assert!((gp - (pp + pq * lp)).length() < 1e-6, "{blade}: Global position {gp} is parent Global × Local");
        let want = (pq.normalize() * lq.normalize()).normalize();
        assert!(gq.normalize().dot(want).abs() > 1.0 - 1e-9, "{blade}: Global rotation {gq} is parent Global × Local {want}");
        assert!(gp.x < 2.0, "{blade} is on the main skeleton, not 5 m away");
    }
    // The merged file re-reads with no Local/Global mismatch, in both forms.
    for form in [Form::Standard, Form::Schema] {
        let (_, diag) = read_doc(&out.to_bytes(form).unwrap());
        assert!(diag.items.iter().all(|d| d.code != "anvil.local-global-mismatch"), "{form:?}: {:?}", diag.items);
    }
}

/// A model and its file reach the IR by one reader: an unedited model gives the document the
/// `Format` reader gives, and an edited one a document holding the edit (it used to carry the
/// file's original text, so writing it back brought a removed bone back).
#[test]
fn a_model_reaches_the_ir_by_the_reader_of_its_file() {
    for variant in ["standard.xml", "schema.xml"] {
        let bytes = fixture("biped", variant);
        let names = Names::builtin();
        let (from_file, _) = read_doc(&bytes);
        let doc = skelport_anvil::ir::to_document(model(&bytes), &names, "t.xml", "t", &mut Diagnostics::default()).unwrap();
        assert_eq!(doc.skeletons[0].bones, from_file.skeletons[0].bones, "{variant}");
        let form = model(&bytes).form;
        assert!(write_doc(form, &doc) == bytes, "{variant}: unedited, written back byte for byte");

        let mut m = model(&bytes);
        m.remove_bone("LeftEye", &names).unwrap();
        let edited = m.to_bytes(form).unwrap();
        let doc = skelport_anvil::ir::to_document(m, &names, "t.xml", "t", &mut Diagnostics::default()).unwrap();
        assert_eq!(doc.skeletons[0].bones.len(), from_file.skeletons[0].bones.len() - 1, "{variant}");
        assert!(doc.skeletons[0].bones.iter().all(|b| b.name != "LeftEye"), "{variant}");
        assert!(write_doc(form, &doc) == edited, "{variant}: the edited model's text");
    }
}

/// Issue 38: on a file written on one line, each element's indentation was found by scanning
/// back to the line's start (renaming 5,000 bones took 40 s). Renaming every bone of a one-line
/// file and writing it counts about twice the work for twice the bones; the edit still lands.
#[test]
fn edits_of_a_one_line_file_take_linear_work() {
    let one_line = |n: usize| {
        let text = text_of(&write_doc(Form::Standard, &chain_doc(n)));
        let flat: String = text.lines().map(str::trim).collect();
        flat.replace("utf-16", "utf-8").replace("UTF-16", "UTF-8").into_bytes()
    };
    let work = |n: usize| {
        let bytes = one_line(n);
        let before = skelport_ir::names::work();
        let mut m = model(&bytes);
        for i in 0..n {
            m.rename_bone(&format!("b{i}"), &format!("c{i}")).unwrap();
        }
        let out = m.to_bytes(Form::Standard).unwrap();
        let spent = skelport_ir::names::work() - before;
        let (back, _) = read_doc(&out);
        assert_eq!(back.skeletons[0].bones[n - 1].name, format!("c{}", n - 1));
        spent
    };
    let (one, two) = (work(1000), work(2000));
    assert!(one > 0 && two <= 2 * one + 1000, "{one} then {two}");
}

/// Issue 38: what reading builds (the element tree, the bones read from it) is charged to the
/// decode budget before it is built, counted from the text's `<` and `=`. A file padded with
/// empty elements (`<a/>`: 4 bytes, charged 128) stops at the tree under a budget of 16 times
/// the file, naming it, where the demo reads.
#[test]
fn the_element_tree_is_charged_before_it_is_built() {
    let read_with = |bytes: &[u8], limit: u64| {
        let opts = ReadOptions { budget: Some(skelport_ir::Budget::with_limit(limit)), ..Default::default() };
        let input = Input { path: Some(Path::new("crafted.xml")), bytes };
        AnvilSchemaFormat.read(input, &opts, &mut Diagnostics::default()).map_err(|e| e.to_string())
    };
    let demo = std::fs::read(skelport_ir::testing::workspace_root().join("testdata/demo/sample.anvil-schema.xml")).unwrap();
    read_with(&demo, 16 * demo.len() as u64).unwrap();
    let text = String::from_utf8(demo).unwrap();
    let at = text.rfind("</Object>").unwrap();
    let crafted = format!("{}<Unknown>{}</Unknown>{}", &text[..at], "<a/>".repeat(200_000), &text[at..]);
    let e = read_with(crafted.as_bytes(), 16 * crafted.len() as u64).unwrap_err();
    assert!(e.starts_with("crafted.xml: the element tree (200") && e.contains("decode budget exceeded"), "{e}");
}

/// Each bone's hash with its modifiers' classes, in array order: what a second merge must leave
/// as the first left it.
fn bones_and_modifiers(s: &AnvilSkeleton) -> Vec<(Option<u32>, Vec<String>)> {
    s.bones().map(|b| (b.bone_hash(), b.modifiers().map(|m| m.class.to_string()).collect())).collect()
}

/// Merging what is already merged changes nothing, whatever form the main skeleton and each
/// addon are in (issue 39: a Schema-Based addon merged into a Standard biped, then merged again in
/// either form, gave `BallJointBoneModifier, BallJointBoneModifier`).
#[test]
fn merging_again_changes_nothing_in_any_mix_of_forms() {
    for main_form in ["standard.xml", "schema.xml"] {
        for addon in ["hidden_blade_addon", "sword_addon"] {
            for first in ["standard.xml", "schema.xml"] {
                let main = model(&fixture("biped", main_form));
                let (once, r1) = merge(&main, &[model(&fixture(addon, first))], &MergeOptions::default()).unwrap();
                // The blade's modifier goes onto a main bone; the sword's come with its new bones.
                assert!(!r1.added.is_empty() && bones_and_modifiers(&once).iter().any(|b| !b.1.is_empty()), "{addon}.{first}: {r1:?}");
                for again in ["standard.xml", "schema.xml"] {
                    let case = format!("biped.{main_form} + {addon}.{first}, then {addon}.{again}");
                    let (twice, r2) = merge(&once, &[model(&fixture(addon, again))], &MergeOptions::default()).unwrap();
                    assert!(r2.added.is_empty() && r2.modifiers_applied == 0, "{case}: {r2:?}");
                    assert_eq!(bones_and_modifiers(&twice), bones_and_modifiers(&once), "{case}");
                    let form = if main_form == "standard.xml" { Form::Standard } else { Form::Schema };
                    assert_eq!(twice.to_bytes(form).unwrap(), once.to_bytes(form).unwrap(), "{case}: the written file changed");
                }
            }
        }
    }
}

/// `doc` as read back from another format's file: without the run-local copy of the text read,
/// which only the run that read it has.
fn as_from_a_file(mut doc: Document) -> Document {
    assert!(doc.skeletons[0].ext.remove("~anvil.source").is_some());
    doc
}

/// `edit` applied to the skeleton's `anvil` extension of `doc`.
fn edit_skeleton_ext(doc: &mut Document, edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>)) {
    let sk = &mut doc.skeletons[0];
    let mut e = sk.ext.remove("anvil").expect("the skeleton's extension");
    edit(e.as_object_mut().expect("an object"));
    sk.ext.set_raw("anvil", e);
}

/// A bone's element as its extension and the skeleton's `shapes` and `pieces` give it: the
/// shape's pieces with the bone's values between them.
fn element_of(skeleton: &serde_json::Value, bone: &serde_json::Value) -> String {
    let shape = skeleton["shapes"][bone["shape"].as_u64().unwrap() as usize].as_array().unwrap();
    let piece = |k: usize| skeleton["pieces"][shape[k].as_u64().unwrap() as usize].as_str().unwrap();
    let values = bone.get("values").and_then(|v| v.as_array()).cloned().unwrap_or_default();
    assert_eq!(shape.len(), values.len() + 1);
    let mut out = piece(0).to_string();
    for (k, v) in values.iter().enumerate() {
        out.push_str(v.as_str().unwrap());
        out.push_str(piece(k + 1));
    }
    out
}

/// The skeleton's extension holds no source text, and the layout with each bone's element in
/// file order gives the text back; each bone's extension is its ID, and its element as its
/// values (attribute values and texts) in a shape the skeleton holds. The values are a small
/// part of the elements' text, and every shape is some bone's.
#[test]
fn the_extension_holds_each_bones_values_and_the_text_around_them() {
    for (stem, (variant, _)) in STEMS.iter().flat_map(|s| VARIANTS.iter().map(move |v| (s, v))) {
        let bytes = fixture(stem, variant);
        let text = text_of(&bytes);
        let (doc, _) = read_doc(&bytes);
        let sk = &doc.skeletons[0];
        let e = sk.ext.raw("anvil").unwrap();
        assert!(e.get("source").is_none(), "{stem}.{variant}: the whole text is not carried");
        let l = &e["layout"];
        let (mut len, mut values_len) = (0, 0);
        let mut used = vec![0; e["shapes"].as_array().unwrap().len()];
        for b in &sk.bones {
            let anvil = b.ext.raw("anvil").unwrap();
            let xml = element_of(e, anvil);
            let id = anvil["id"].as_u64().unwrap();
            assert!(xml.starts_with('<') && xml.ends_with('>') && xml.contains(&format!("ID=\"{id}\"")), "{stem}.{variant}: {xml:.60}");
            assert_eq!(text.matches(&xml).count(), 1, "{stem}.{variant}: bone {id}'s element is not the file's text");
            len += xml.len();
            values_len += anvil.get("values").and_then(|v| v.as_array()).map_or(0, |v| v.iter().map(|v| v.as_str().unwrap().len()).sum());
            used[anvil["shape"].as_u64().unwrap() as usize] += 1;
        }
        assert!(values_len * 5 < len, "{stem}.{variant}: values {values_len} bytes of {len}");
        assert!(used.iter().all(|&n| n > 0), "{stem}.{variant}: a shape no bone has");
        let (head, tail) = (l["head"].as_str().unwrap(), l["tail"].as_str().unwrap());
        assert!(text.starts_with(head) && text.ends_with(tail) && head.len() + tail.len() < text.len() / 4, "{stem}.{variant}");
        // Nothing of the text is left out or carried twice.
        let seps: usize = match (&l["sep"], &l["seps"]) {
            (serde_json::Value::String(s), _) => s.len() * (sk.bones.len() - 1),
            (_, serde_json::Value::Array(v)) => v.iter().map(|s| s.as_str().unwrap().len()).sum(),
            _ => panic!("{stem}.{variant}: {l}"),
        };
        assert_eq!(head.len() + len + seps + tail.len(), text.len(), "{stem}.{variant}");
        assert_eq!(l["order"].as_array().map(Vec::len), Some(sk.bones.len()), "{stem}.{variant}");
    }
}

/// A document as skelport wrote it before the per-bone fragments (the whole text in `source`,
/// bare IDs on the bones) still writes back the same bytes, and patched when edited.
#[test]
fn an_old_document_with_the_whole_source_still_writes_back() {
    for (variant, form) in [("standard.xml", Form::Standard), ("schema.xml", Form::Schema)] {
        let bytes = fixture("biped", variant);
        let mut doc = as_from_a_file(read_doc(&bytes).0);
        let text = text_of(&bytes);
        edit_skeleton_ext(&mut doc, |e| {
            e.remove("layout");
            e.insert("source".into(), text.clone().into());
        });
        for b in &mut doc.skeletons[0].bones {
            let id = b.ext.raw("anvil").unwrap()["id"].clone();
            b.ext.set_raw("anvil", id);
        }
        assert!(write_doc(form, &doc) == bytes, "{variant}: unedited");
        let hips = doc.skeletons[0].find("Hips").unwrap();
        doc.skeletons[0].bones[hips.index()].rest.translation.z += 0.01;
        let out = write_doc(form, &doc);
        let (a, b) = (model(&bytes), model(&out));
        assert_eq!(a.bone_count(), b.bone_count());
        assert_eq!(a.bones().map(|b| b.modifiers().count()).sum::<usize>(), b.bones().map(|b| b.modifiers().count()).sum::<usize>());
    }
}

/// Every bone's values of one shape: a piece of a megabyte a million times over.
fn skeleton_and_bones(good: &Document) -> Box<dyn Fn(&mut Document)> {
    let n = good.skeletons[0].bones.len();
    Box::new(move |d: &mut Document| {
        edit_skeleton_ext(d, |e| {
            e.insert("pieces".into(), serde_json::json!([" ".repeat(1 << 20)]));
            e.insert("shapes".into(), serde_json::Value::Array(vec![serde_json::Value::Array(vec![0.into(); 1_000_000])]));
        });
        let empty = serde_json::Value::Array(vec!["".into(); 999_999]);
        for b in d.skeletons[0].bones.iter_mut().take(n) {
            let id = b.ext.raw("anvil").unwrap()["id"].clone();
            b.ext.set_raw("anvil", serde_json::json!({"id": id, "shape": 0, "values": empty.clone()}));
        }
    })
}

/// Extension data a file or another tool got wrong (values that are not strings, too few, of a
/// shape that is not there, making no bone element, another bone's, a control character, text
/// that is not well formed; shapes or a layout missing or malformed; pieces that make no
/// skeleton): a warning, and the file written from what is left, never a panic or a file
/// AnvilToolkit cannot read.
#[test]
fn hostile_extension_data_warns_and_regenerates() {
    let bytes = fixture("biped", "standard.xml");
    let good = as_from_a_file(read_doc(&bytes).0);
    let ids: Vec<u64> = good.skeletons[0].bones.iter().map(|b| b.ext.raw("anvil").unwrap()["id"].as_u64().unwrap()).collect();
    let ext = |i: usize| good.skeletons[0].bones[i].ext.raw("anvil").unwrap().clone();
    type Edit = Box<dyn Fn(&mut Document)>;
    // Bone 3's extension with its values changed by `f`.
    let values = |f: fn(&mut Vec<serde_json::Value>)| -> Edit {
        let mut e = ext(3);
        let mut v = e["values"].as_array().unwrap().clone();
        f(&mut v);
        e["values"] = v.into();
        Box::new(move |d: &mut Document| d.skeletons[0].bones[3].ext.set_raw("anvil", e.clone()))
    };
    let bone = |v: serde_json::Value| -> Edit { Box::new(move |d: &mut Document| d.skeletons[0].bones[3].ext.set_raw("anvil", v.clone())) };
    let skeleton = |key: &'static str, v: Option<serde_json::Value>| -> Edit {
        Box::new(move |d: &mut Document| {
            edit_skeleton_ext(d, |e| match &v {
                Some(v) => {
                    e.insert(key.into(), v.clone());
                }
                None => {
                    e.remove(key);
                }
            })
        })
    };
    let with = |mut e: serde_json::Value, k: &str, v: serde_json::Value| {
        e[k] = v;
        e
    };
    let (id3, other) = (ids[3], ext(4));
    let cases: Vec<(&str, Edit, &str)> = vec![
        ("values a number", bone(with(ext(3), "values", 42.into())), "anvil.fragment"),
        ("a value a number", values(|v| v[0] = 42.into()), "anvil.fragment"),
        ("a value too few", values(|v| drop(v.pop())), "anvil.fragment"),
        ("a shape not there", bone(with(ext(3), "shape", 999.into())), "anvil.fragment"),
        ("a shape not a number", bone(with(ext(3), "shape", "0".into())), "anvil.fragment"),
        ("another bone's values", bone(with(other, "id", id3.into())), "anvil.fragment"),
        ("a value closing the element", values(|v| v[1] = "x\"></Bone><Bone ID=\"1".into()), "anvil.fragment"),
        ("a value a control character", values(|v| v[1] = "\u{1}".into()), "anvil.fragment"),
        ("a value not well formed", values(|v| v[1] = "<".into()), "anvil.fragment"),
        ("shapes missing", skeleton("shapes", None), "anvil.extension"),
        ("shapes a string", skeleton("shapes", Some("x".into())), "anvil.extension"),
        ("a shape with no pieces", skeleton("shapes", Some(serde_json::json!([[]]))), "anvil.extension"),
        ("a shape naming no piece", skeleton("shapes", Some(serde_json::json!([[100000]]))), "anvil.extension"),
        ("pieces missing", skeleton("pieces", None), "anvil.extension"),
        // Small data rebuilding into far more text: a megabyte piece a million times over.
        ("a shape of a piece a million times", skeleton_and_bones(&good), "anvil.extension"),
        ("a piece a number", skeleton("pieces", Some(serde_json::json!([1]))), "anvil.extension"),
        ("layout missing", skeleton("layout", None), "anvil.extension"),
        ("layout a string", skeleton("layout", Some("x".into())), "anvil.extension"),
        ("seps not strings", skeleton("layout", Some(serde_json::json!({"head": "", "seps": [1], "tail": ""}))), "anvil.extension"),
        (
            "pieces of no skeleton",
            skeleton("layout", Some(serde_json::json!({"head": "<a>", "sep": "", "tail": "</b>"}))),
            "anvil.extension",
        ),
    ];
    for (what, edit, code) in cases {
        let mut doc = good.clone();
        edit(&mut doc);
        let mut d = Diagnostics::default();
        let out = AnvilFormat.write(&doc, &WriteOptions::default(), &mut d).unwrap_or_else(|e| panic!("{what}: {e}")).main;
        assert!(d.items.iter().any(|i| i.code == code), "{what}: no {code}: {:?}", d.items);
        let (back, _) = read_doc(&out);
        assert_eq!(back.skeletons[0].bones.len(), ids.len(), "{what}: every bone written");
        // A bone made anew goes after its parent's other children: the same bones, maybe in another order.
        let names = |d: &Document| d.skeletons[0].bones.iter().map(|b| b.name.clone()).collect::<std::collections::BTreeSet<_>>();
        assert_eq!(names(&back), names(&good), "{what}");
        if code == "anvil.fragment" {
            // The other bones' elements came back whole, and the refused one kept its ID.
            let m = model(&out);
            let (a, b) = (model(&bytes), m);
            for i in (0..ids.len()).filter(|&i| i != 3) {
                let find = |m: &AnvilSkeleton| m.bones().find(|o| o.id == Some(ids[i])).cloned();
                assert_eq!(find(&a), find(&b), "{what}: bone {i}");
            }
            assert!(b.bones().any(|o| o.id == Some(ids[3])), "{what}: the refused bone's ID");
        }
    }
}

/// Extras that went through Blender hold booleans as integers: `"bom": 1` is read as `true`, so
/// the file still comes back byte for byte.
#[test]
fn a_byte_order_mark_flag_given_as_an_integer_is_read() {
    let bytes = fixture("biped", "standard.xml");
    let mut doc = as_from_a_file(read_doc(&bytes).0);
    edit_skeleton_ext(&mut doc, |e| {
        assert_eq!(e["bytes"]["bom"], serde_json::json!(true));
        e["bytes"]["bom"] = 1.into();
    });
    assert!(write_doc(Form::Standard, &doc) == bytes);
}

/// A file with more than one fault reports the first bone's: a name repeated by bones 1 and 2
/// comes before bone 5's missing hash, as the check names the bones in file order.
#[test]
fn the_check_reports_the_first_faulty_bone() {
    let text = text_of(&fixture("biped", "standard.utf8.xml"));
    let names: Vec<(usize, &str)> = text.match_indices(r#"<Value Name="Name" Type="UInt32""#).collect();
    let line = |k: usize| {
        let start = names[k].0;
        &text[start..start + text[start..].find('\n').unwrap()]
    };
    let (one, two, five) = (line(1).to_string(), line(2).to_string(), line(5).to_string());
    let no_hash = five.replace(|c: char| c.is_ascii_digit(), "").replace("></Value>", ">x</Value>");
    let bad = text.replacen(&two, &one, 1).replacen(&five, &no_hash, 1);
    let err = skelport_anvil::commands::open(bad.as_bytes(), "t.xml", &Names::default()).unwrap_err().to_string();
    assert!(err.contains("bones 1 and 2 have the same name"), "{err}");
    // Bone 5 alone is reported for its hash.
    let only_five = text.replacen(&five, &no_hash, 1);
    let err = skelport_anvil::commands::open(only_five.as_bytes(), "t.xml", &Names::default()).unwrap_err().to_string();
    assert!(err.contains("bone 5") && err.contains("no BoneID/Name hash"), "{err}");
}

/// A read that defers the bones' values (`ExtensionUse::Owner`, as a conversion back to
/// AnvilToolkit asks, or `Nobody`, as `inspect`) writes what a full read writes: back unedited
/// (the text read), in the other form, and after an edit (both of which cut the values from the
/// text then); and completed, it is the full read's document, byte for byte as IR JSON.
#[test]
fn deferred_values_make_what_a_full_read_makes() {
    use skelport_ir::ExtensionUse;
    let read = |bytes: &[u8], use_: ExtensionUse| {
        let opts = ReadOptions { extension_use: use_, ..Default::default() };
        AnvilFormat.read(Input { path: Some(Path::new("t.xml")), bytes }, &opts, &mut Diagnostics::default()).unwrap()
    };
    let edit = |doc: &mut Document| {
        let b = &mut doc.skeletons[0].bones[1];
        b.rest.translation.x += 0.25;
        b.name = format!("{}_moved", b.name);
    };
    for stem in STEMS {
        for (variant, form) in VARIANTS {
            let bytes = fixture(stem, variant);
            let at = format!("{stem}.{variant}");
            let full = read(&bytes, ExtensionUse::Everyone);
            assert!(!AnvilFormat.deferred(&full), "{at}");
            assert!(!AnvilFormat.deferred(&read(&bytes, ExtensionUse::Owner("gltf"))), "{at}: another writer's use defers nothing");
            for use_ in [ExtensionUse::Owner(skelport_anvil::ir::NAMESPACE), ExtensionUse::Nobody] {
                let lazy = read(&bytes, use_);
                assert!(AnvilFormat.deferred(&lazy), "{at}: {use_:?}");
                assert!(write_doc(*form, &lazy) == bytes, "{at}: written back");
                let other = match form {
                    Form::Standard => Form::Schema,
                    Form::Schema => Form::Standard,
                };
                assert!(write_doc(other, &lazy) == write_doc(other, &full), "{at}: in the other form");
                let (mut a, mut b) = (lazy.clone(), full.clone());
                edit(&mut a);
                edit(&mut b);
                let edited = write_doc(*form, &b);
                assert!(edited != bytes, "{at}: the edit shows");
                assert!(write_doc(*form, &a) == edited, "{at}: edited");
                // Too many bones for the limit: refused alike, the deferred one before its copy.
                let limited = WriteOptions { bone_limit: Some(b.skeletons[0].bones.len() - 1), ..Default::default() };
                let refuse = |d: &Document| fmt(*form).write(d, &limited, &mut Diagnostics::default()).map(|_| ()).unwrap_err().to_string();
                assert_eq!(refuse(&a), refuse(&b), "{at}: refused");
                let mut made = lazy.clone();
                AnvilFormat.complete(&mut made);
                assert!(!AnvilFormat.deferred(&made), "{at}");
                assert_eq!(skelport_ir::irjson::to_vec(&made), skelport_ir::irjson::to_vec(&full), "{at}: completed");
            }
        }
    }
}
