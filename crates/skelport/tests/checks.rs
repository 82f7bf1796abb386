//! Changes that are named, not silent (issue 33): VRM's four influences, the formats a refusal
//! points to, and one bind per joint for meshes that hang from bones.

use skelport::{ConvertOptions, OpenOptions, Severity};
use skelport_ir::{Diagnostics, Document, Faces, Format, Frame, Input, Mesh, WriteOptions};

/// `doc` as IR JSON, loaded back through the facade as a file would be.
fn loaded(doc: &Document) -> skelport::Loaded {
    let mut diag = Diagnostics::default();
    let out = skelport_ir::irjson::IrJsonFormat.write(doc, &WriteOptions::default(), &mut diag).unwrap();
    skelport::from_bytes("doc.ir.json", &out.main, &OpenOptions::default()).unwrap()
}

#[test]
fn vrm_keeps_four_influences_and_names_what_it_dropped() {
    let mut doc = skelport::demo::sample();
    let skin = &mut doc.skins[0];
    let n = skin.joints.len() as u32;
    assert!(n >= 6);
    let mut lists = skin.influences.to_lists();
    // Two vertices with six and five influences (the largest dropped: 0.06, then 0.05 of 1.0).
    lists[0] = vec![(0, 0.3), (1, 0.25), (2, 0.2), (3, 0.15), (4, 0.06), (5, 0.04)];
    lists[9] = vec![(1, 0.4), (2, 0.2), (3, 0.2), (4, 0.15), (5, 0.05)];
    skin.influences = skelport_ir::Influences::from_lists(lists);
    let vrm = skelport::format("vrm").unwrap();
    let (out, diag) = skelport::render(&doc, vrm, &WriteOptions { file_stem: "t".into(), ..Default::default() }).unwrap();
    let loss: Vec<&str> = diag.of(Severity::Loss).filter(|d| d.code == "vrm.max-influences").map(|d| d.message.as_str()).collect();
    assert_eq!(loss.len(), 1, "{:?}", diag.items);
    assert!(
        loss[0].contains("2 vertices have more than 4 influences") && loss[0].contains("largest weight dropped: 0.0600"),
        "{}",
        loss[0]
    );
    // One JOINTS/WEIGHTS set in the file, and at most four influences read back, summing to 1.
    let text = String::from_utf8_lossy(&out.main);
    assert!(text.contains("JOINTS_0") && !text.contains("JOINTS_1") && !text.contains("WEIGHTS_1"));
    let mut rd = Diagnostics::default();
    let back = vrm.read(Input { path: None, bytes: &out.main }, &skelport_ir::ReadOptions::default(), &mut rd).unwrap();
    for s in &back.skins {
        assert!(s.influences.max_influences() <= 4);
    }
    // The sample without the extra influences writes no such loss.
    let (_, diag) = skelport::render(&skelport::demo::sample(), vrm, &WriteOptions::default()).unwrap();
    assert!(!diag.items.iter().any(|d| d.code == "vrm.max-influences"));
}

#[test]
fn a_refusal_names_only_formats_that_accept_the_file() {
    let mut meshes = Document::new(Frame::GLTF);
    meshes.meshes.push(Mesh {
        name: "body".into(),
        positions: vec![skelport_ir::DVec3::ZERO, skelport_ir::DVec3::X, skelport_ir::DVec3::Y],
        faces: Faces { counts: vec![3], indices: vec![0, 1, 2] },
        ..Default::default()
    });
    let l = loaded(&meshes);
    for rig in ["mpfb", "anvil"] {
        let e = skelport::convert(&l, skelport::format(rig).unwrap(), &ConvertOptions::default()).unwrap_err();
        let msg = e.message().to_string();
        assert!(msg.contains("nothing to write"), "{msg}");
        let named =
            msg.split("; convert to ").nth(1).and_then(|s| s.strip_suffix(" to keep the meshes")).unwrap_or_else(|| panic!("{msg}"));
        let named: Vec<&str> = named.split(", ").collect();
        assert!(named.contains(&"g4tf") && named.contains(&"glb"), "{msg}");
        for f in skelport::registry::formats().iter().filter(|f| f.can_write()) {
            let accepts = f.write(&meshes, &WriteOptions::default(), &mut Diagnostics::default()).is_ok();
            assert_eq!(named.contains(&f.name()), accepts && f.name() != rig, "{}: {msg}", f.name());
        }
    }
    // An empty document: no format has anything to write, and none is named.
    let e =
        skelport::convert(loaded(&Document::new(Frame::GLTF)), skelport::format("mpfb").unwrap(), &ConvertOptions::default()).unwrap_err();
    assert!(e.message().contains("nothing to write") && !e.message().contains("convert to"), "{}", e.message());
}

/// RobotExpressive's meshes that hang from bones become rigid skins bound as the file's own skins
/// bind those bones (scale 1 where the armature node scales by 100): one bind per joint across
/// the file, so importers that guess the bind pose from the inverse binds see one pose; at rest
/// every rigid mesh stays where it hangs.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn meshes_hanging_from_bones_bind_each_joint_as_the_file_does() {
    let Some(path) = skelport_ir::testing::corpus_file("realworld/threejs_RobotExpressive.glb") else { return };
    let l = skelport::open(&path, &OpenOptions::default()).unwrap();
    let doc = &l.doc;
    assert!(l.diagnostics.items.iter().any(|d| d.code == "gltf.mesh-on-bone"), "{:?}", l.diagnostics.items);
    let rigid: Vec<usize> = (0..doc.skins.len()).filter(|&k| doc.skins[k].joints.len() == 1).collect();
    assert!(rigid.len() >= 15, "{} rigid skins", rigid.len());
    let mut bind: std::collections::HashMap<(usize, usize), skelport_ir::DMat4> = Default::default();
    let mut shared = 0;
    for s in &doc.skins {
        for (j, ibm) in s.joints.iter().zip(&s.inverse_bind) {
            match bind.get(&(s.skeleton.index(), j.index())) {
                Some(first) => {
                    shared += 1;
                    let apart = (*first - *ibm).to_cols_array().iter().fold(0.0f64, |a, b| a.max(b.abs()));
                    assert!(apart < 1e-9, "bone {} has two binds ({apart:e} apart)", j.index());
                }
                None => {
                    bind.insert((s.skeleton.index(), j.index()), *ibm);
                }
            }
        }
    }
    assert!(shared >= 15, "only {shared} joints are bound by two skins");
    // At rest, each rigid skin leaves its mesh where the file hangs it.
    let at_rest = skelport_ir::pose::deform_all(doc, &Default::default());
    let mut placed = doc.clone();
    placed.convert_frame(skelport_ir::Frame::REPORT);
    for &k in &rigid {
        let mesh = doc.mesh(doc.skins[k].mesh.unwrap());
        let want = &placed.mesh(doc.skins[k].mesh.unwrap()).positions;
        let apart = skelport_ir::pose::max_deviation(&at_rest[k], want).unwrap();
        assert!(apart < 1e-6, "mesh \"{}\" moves {apart:e} m at rest", mesh.name);
    }
}

/// Where each end of every bone of an MPFB rig file says it stands: `(bone, end) → default_position`.
fn default_positions(json: &[u8]) -> std::collections::BTreeMap<(String, &'static str), [f64; 3]> {
    let v: serde_json::Value = serde_json::from_slice(json).unwrap();
    let mut out = std::collections::BTreeMap::new();
    for (name, b) in v["bones"].as_object().unwrap() {
        for end in ["head", "tail"] {
            let p = &b[end]["default_position"];
            out.insert((name.clone(), end), [0, 1, 2].map(|k| p[k].as_f64().unwrap()));
        }
    }
    out
}

/// MPFB → MPFB without `--mesh` changes nothing: the rig alone in MPFB's data folder is placed on
/// the base mesh skelport finds there (as for any other target), and its default_positions come
/// back as the file has them (MPFB's save rounds to 5 decimals; the file already is).
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn an_mpfb_rig_converted_to_mpfb_keeps_its_default_positions() {
    let Some(path) = skelport_ir::testing::corpus_file("mpfb/rigs/standard/rig.openpose.json") else { return };
    let l = skelport::open(&path, &OpenOptions::default()).unwrap();
    assert!(l.diagnostics.items.iter().any(|d| d.code == "mpfb.base-mesh"), "placed on the base mesh: {:?}", l.diagnostics.items);
    let out = skelport::convert(&l, skelport::format("mpfb").unwrap(), &ConvertOptions::default()).unwrap();
    let (was, now) = (default_positions(&std::fs::read(&path).unwrap()), default_positions(&out.output.main));
    assert_eq!(was.len(), now.len());
    let round5 = |p: [f64; 3]| p.map(|x| (x * 1e5).round() / 1e5);
    for (k, p) in &was {
        assert_eq!(round5(*p), round5(now[k]), "{k:?}");
    }
    let ankle = now[&("LAnkle".to_string(), "head")];
    eprintln!("rig.openpose.json → mpfb: {} ends, every default_position as in the source (LAnkle head {ankle:?})", now.len());
    assert!(!String::from_utf8_lossy(&out.output.main).contains("skelport_placed"));
    // Placed on the base mesh, the bones stand elsewhere: the placement is what other targets get.
    let placed = &l.doc.skeletons[0];
    let ankle_placed = placed.world_transforms()[placed.find("LAnkle").unwrap().index()].translation;
    assert!((ankle_placed - skelport_ir::DVec3::from_array(ankle)).length() > 1e-3, "{ankle_placed} vs {ankle:?}");
    // With the weights beside it joined (as the command line and a batch join them), the base
    // mesh is the skin's body and is kept: the default_positions still come back as they were.
    let weights = path.with_file_name("weights.openpose.json");
    let reader = skelport::ir::ReadOptions { weights: Some(weights), ..Default::default() };
    let l = skelport::open(&path, &OpenOptions { reader, ..Default::default() }).unwrap();
    assert_eq!(l.doc.skins.len(), 1, "the weights were joined");
    let out = skelport::convert(&l, skelport::format("mpfb").unwrap(), &ConvertOptions { allow_loss: true, ..Default::default() }).unwrap();
    let now = default_positions(&out.output.main);
    for (k, p) in &was {
        assert_eq!(round5(*p), round5(now[k]), "with weights: {k:?}");
    }
    // The record of where the reader placed each end is for the MPFB writer alone: the same rig
    // to .glb is the same file whether skelport found the base mesh or the user gave it.
    let glb = skelport::format("glb").unwrap();
    let found = skelport::convert(&l, glb, &ConvertOptions::default()).unwrap().output.main;
    let base = path.parent().unwrap().join("../../3dobjs/base.obj");
    let reader =
        skelport::ir::ReadOptions { weights: Some(path.with_file_name("weights.openpose.json")), mesh: Some(base), ..Default::default() };
    let given = skelport::open(&path, &OpenOptions { reader, ..Default::default() }).unwrap();
    let given = skelport::convert(&given, glb, &ConvertOptions::default()).unwrap().output.main;
    assert!(found == given, "the .glb differs: found {} bytes, given {} bytes", found.len(), given.len());
    assert!(!String::from_utf8_lossy(&found).contains("placed"), "no placement record in the .glb");
}

/// A rig skelport wrote from CesiumMan (every end DEFAULT with its default_position) read with
/// `--mesh base.obj` stands where MPFB puts it: each DEFAULT end at its default_position, not
/// lifted a second time by the feet-on-ground shift; and no warning about the strategy skelport
/// wrote itself.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn default_strategy_ends_stand_at_their_default_position_with_a_mesh() {
    let (Some(cesium), Some(base)) =
        (skelport_ir::testing::corpus_file("realworld/khr_CesiumMan.glb"), skelport_ir::testing::corpus_file("mpfb/3dobjs/base.obj"))
    else {
        return;
    };
    let l = skelport::open(&cesium, &OpenOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rig = dir.path().join("rig.cesium.json");
    // The rig holds no mesh: the weights file fits only CesiumMan's body (a skin loss, opted in).
    let opts = ConvertOptions { allow_loss: true, ..Default::default() }.named_for(&rig);
    skelport::convert(&l, skelport::format("mpfb").unwrap(), &opts).unwrap().save(&rig).unwrap();
    let written = default_positions(&std::fs::read(&rig).unwrap());
    let json: serde_json::Value = serde_json::from_slice(&std::fs::read(&rig).unwrap()).unwrap();
    assert!(json["bones"].as_object().unwrap().values().all(|b| b["head"]["strategy"] == "DEFAULT" && b["tail"]["strategy"] == "DEFAULT"));
    let with_mesh = OpenOptions { reader: skelport_ir::ReadOptions { mesh: Some(base), ..Default::default() }, ..Default::default() };
    let back = skelport::open(&rig, &with_mesh).unwrap();
    assert!(!back.diagnostics.items.iter().any(|d| d.code == "mpfb.default-position"), "{:?}", back.diagnostics.items);
    let mut doc = back.doc.clone();
    doc.convert_frame(Frame::BLENDER);
    let sk = &doc.skeletons[0];
    let world = sk.world_transforms();
    let mut worst = 0.0f64;
    for (i, b) in sk.bones.iter().enumerate() {
        let want = skelport_ir::DVec3::from_array(written[&(b.name.clone(), "head")]);
        worst = worst.max(world[i].translation.distance(want));
    }
    eprintln!("CesiumMan's MPFB rig read on base.obj: {} heads, largest distance from default_position {worst:.3e} m", sk.bones.len());
    assert!(worst < 1e-9, "{worst}");
}

/// Every MPFB rig written from a real-world glTF or Collada file compares as "same" bone by bone
/// with its source where the heads and orientations agree: the MPFB writer's tails run along each
/// bone's +Y while the source's were inferred from the children, and `diff` compares tails only
/// where both files store them (it called every one of these "different", tails up to 2.7 m apart).
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn mpfb_outputs_of_the_realworld_corpus_diff_as_same_bone_by_bone() {
    let Some(root) = skelport_ir::testing::corpus_file("realworld") else { return };
    let mpfb = skelport::format("mpfb").unwrap();
    let mut compared = 0;
    let mut files: Vec<_> = std::fs::read_dir(&root).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files {
        let ext = path.extension().and_then(|e| e.to_str()).unwrap_or("");
        if !["glb", "gltf", "dae", "vrm"].contains(&ext) {
            continue;
        }
        let Ok(l) = skelport::open(&path, &OpenOptions::default()) else { continue };
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let dir = tempfile::tempdir().unwrap();
        let rig = dir.path().join("rig.out.json");
        let opts = ConvertOptions { allow_loss: true, ..Default::default() }.named_for(&rig);
        let Ok(out) = skelport::convert(&l, mpfb, &opts) else { continue };
        let turned = out.diagnostics.items.iter().any(|d| d.code == "mpfb.orientation");
        let back = skelport::from_bytes("rig.out.json", &out.output.main, &OpenOptions::default()).unwrap();
        let r = skelport::diff(&l.doc, &back.doc, skelport::diff::Tolerance::default());
        eprintln!(
            "{name} → mpfb: {} bones, {} tails compared, largest head distance {:.1e} m, {} turned (named: {turned}), same bones: {}",
            r.compared.bones,
            r.compared.tails,
            r.max_head_distance,
            r.rotated.len(),
            r.moved.is_empty() && r.rotated.is_empty()
        );
        assert_eq!(r.compared.tails, 0, "{name}: the source stores no tails");
        assert!(r.added.is_empty() && r.removed.is_empty() && r.reparented.is_empty(), "{name}: {r:?}");
        assert!(r.moved.is_empty(), "{name}: {:?}", r.moved);
        assert!(turned || r.rotated.is_empty(), "{name}: turned without an mpfb.orientation loss: {:?}", r.rotated);
        compared += 1;
    }
    assert!(compared >= 5, "only {compared} real-world files converted to MPFB");
}

/// `render` takes any document: one that breaks the IR's rules writers rely on (here influence
/// rows that run backwards) is refused as invalid by every writer, not handed to it.
#[test]
fn render_refuses_a_document_that_breaks_the_rules() {
    let mut doc = skelport::demo::sample();
    doc.skins[0].influences.offsets[5] = 0;
    let writers: Vec<&dyn Format> = skelport::formats().iter().copied().filter(|f| f.can_write()).collect();
    assert!(writers.len() >= 10, "{} writers", writers.len());
    for f in writers {
        let e = skelport::render(&doc, f, &WriteOptions { file_stem: "t".into(), ..Default::default() }).unwrap_err();
        assert_eq!(e.code(), skelport::ErrorCode::Invalid, "{}: {e:#}", f.name());
        assert!(format!("{e:#}").contains("influence arrays are inconsistent"), "{}: {e:#}", f.name());
    }
}

/// What changes a document before a conversion writes it (a retarget map, `--map humanoid`,
/// `--rest-pose t-pose`) follows its parents, joints and skins: a document that breaks the IR's
/// rules (here a skin on a skeleton that is not there) is refused as invalid, and left as it
/// was, instead of being followed where its indices point nowhere.
#[test]
fn retargets_refuse_a_document_that_breaks_the_rules() {
    let mut doc = skelport::demo::sample();
    doc.skins[0].skeleton = skelport_ir::SkeletonId::new(9);
    let broken = doc.clone();
    let said = |e: &skelport::Error| {
        assert_eq!(e.code(), skelport::ErrorCode::Invalid, "{e:#}");
        assert!(format!("{e:#}").contains("skeleton index 9 is out of range"), "{e:#}");
    };
    let map = skelport::maps::load("mpfb-game_engine-to-sl").unwrap();
    said(&skelport::retarget(&mut doc, &map, &mut Diagnostics::default()).unwrap_err());
    assert_eq!(doc, broken);
    let sl = skelport::format("dae").unwrap();
    said(&skelport::maps::humanoid_for(&doc, sl).unwrap_err());
    let glb = skelport::format("glb").unwrap();
    let t_pose = WriteOptions { rest_pose: Some(skelport_ir::rest::RestPose::TPose), ..Default::default() };
    for (target, opts) in [
        (sl, ConvertOptions { map: Some("humanoid".into()), ..Default::default() }),
        (glb, ConvertOptions { map: Some("mpfb-game_engine-to-sl".into()), ..Default::default() }),
        (glb, ConvertOptions { write: t_pose.clone(), ..Default::default() }),
    ] {
        let loaded = skelport::Loaded::from_document(doc.clone(), "broken.ir.json");
        let e = skelport::convert(loaded, target, &opts).expect_err("a broken document converted");
        said(&e);
        assert_eq!(e.file(), Some("broken.ir.json"));
    }
}
