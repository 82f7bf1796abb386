//! Names in a written G4MF file are unique (issue 22) and the bones keep theirs: the root,
//! skeleton and mesh nodes skelport adds give way to bone names, and a bone whose name an earlier
//! skeleton's bone took is renamed with a loss (skelport reads the original back from extras).
//! A document with nothing G4MF can hold is an error; meshes no skin binds are a loss.

use skelport_g4mf::G4tfFormat;
use skelport_ir::WriteOptions;
use skelport_ir::{Bone, BoneId, DVec3, Diagnostics, Document, Format, Frame, Input, Mesh, ReadOptions, Severity, Skeleton, Transform};

fn skeleton(name: &str, bones: &[&str]) -> Skeleton {
    let mut sk = Skeleton::new(name);
    for (i, b) in bones.iter().enumerate() {
        sk.push(Bone::new(
            *b,
            (i > 0).then_some(BoneId::new(0)),
            Transform::from_rt(Default::default(), DVec3::new(0.0, i as f64 * 0.1, 0.0)),
        ));
    }
    sk
}

fn write(doc: &Document) -> Result<(serde_json::Value, Diagnostics, Vec<u8>), String> {
    let mut d = Diagnostics::default();
    let out = G4tfFormat.write(doc, &WriteOptions::default(), &mut d).map_err(|e| e.to_string())?;
    Ok((serde_json::from_slice(&out.main).unwrap(), d, out.main))
}

#[test]
fn bone_names_win_and_clashes_between_skeletons_are_a_loss() {
    let mut doc = Document::new(Frame::GLTF);
    doc.skeletons.push(skeleton("Root", &["Root", "hips", "Skeleton"]));
    doc.skeletons.push(skeleton("other", &["hips", "tail"]));
    let (v, diag, bytes) = write(&doc).unwrap();
    let names: Vec<&str> = v["nodes"].as_array().unwrap().iter().map(|n| n["name"].as_str().unwrap()).collect();
    let unique: std::collections::HashSet<&&str> = names.iter().collect();
    assert_eq!(unique.len(), names.len(), "{names:?}");
    // The bones of the first skeleton keep their names; the file's root and the skeleton node
    // (also called "Root") give way.
    let bone = |name: &str| v["nodes"].as_array().unwrap().iter().any(|n| n["name"] == name && n.get("bone").is_some());
    assert!(bone("Root") && bone("hips") && bone("Skeleton"), "{names:?}");
    assert_ne!(v["nodes"][0]["name"], "Root");
    let loss: Vec<_> = diag.of(Severity::Loss).filter(|d| d.code == "g4mf.renamed").collect();
    assert_eq!(loss.len(), 1, "{:?}", diag.items);
    assert!(loss[0].message.contains("\"hips\" → \"hips_2\""), "{}", loss[0].message);
    // skelport reads every original name back.
    let back = G4tfFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    let got: Vec<Vec<&str>> = back.skeletons.iter().map(|s| s.bones.iter().map(|b| b.name.as_str()).collect()).collect();
    assert_eq!(got, [vec!["Root", "hips", "Skeleton"], vec!["hips", "tail"]]);
    assert_eq!(back.skeletons[0].name, "Root");
}

#[test]
fn nothing_to_write_is_an_error_and_unskinned_meshes_are_plain_meshes() {
    let mesh = || Mesh { name: "body".into(), positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y], ..Default::default() };
    let mut doc = Document::new(Frame::GLTF);
    assert!(write(&doc).unwrap_err().contains("nothing to write"));
    doc.skeletons.push(Skeleton::new("empty"));
    doc.meshes.push(mesh());
    for bones in [false, true] {
        if bones {
            doc.skeletons.push(skeleton("rig", &["hips"]));
        }
        let (_, diag, bytes) = write(&doc).unwrap();
        assert!(diag.of(Severity::Loss).next().is_none(), "{:?}", diag.items);
        let back = G4tfFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
        assert_eq!(back.meshes.len(), 1);
        assert_eq!(back.meshes[0].name, "body");
        assert!(back.skins.is_empty());
    }
}
