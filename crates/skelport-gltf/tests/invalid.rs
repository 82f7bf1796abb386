//! Hand-written invalid and edge-case files: clear errors, never a panic, linear time.

use skelport_gltf::GltfFormat;
use skelport_ir::{Diagnostics, Format, Input, ReadOptions};

fn read(json: &str) -> Result<(skelport_ir::Document, Diagnostics), String> {
    let mut d = Diagnostics::default();
    GltfFormat
        .read(Input { path: None, bytes: json.as_bytes() }, &ReadOptions::default(), &mut d)
        .map(|doc| (doc, d))
        .map_err(|e| e.to_string())
}

#[test]
fn cycles_and_shared_children_are_refused() {
    let e = read(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[0]}],"skins":[{"joints":[0,1]}]}"#).unwrap_err();
    assert!(e.contains("already has parent") || e.contains("cycle"), "{e}");
    let e = read(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[2]},{"children":[1]}]}"#).unwrap_err();
    assert!(e.contains("already has parent"), "{e}");
    let e = read(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[0]}]}"#).unwrap_err();
    assert!(e.contains("own child"), "{e}");
    let e = read(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[2]},{"children":[0]}]}"#).unwrap_err();
    assert!(e.contains("already has parent") || e.contains("cycle"), "{e}");
}

#[test]
fn errors_name_the_place() {
    let e = read(r#"{"asset":{"version":"2.0"},"nodes":[{}],"skins":[{"joints":[0, 7]}]}"#).unwrap_err();
    assert!(e.contains("/skins/0/joints/1") && e.contains("node 7 does not exist"), "{e}");
    let e = read("{\"asset\":{\"version\":\"2.0\"},\n \"nodes\": [ {,] }").unwrap_err();
    assert!(e.contains("<stdin>:2:14:"), "{e}");
    let e = read(r#"{"asset":{"version":"1.0"}}"#).unwrap_err();
    assert!(e.contains("only glTF 2.x"), "{e}");
}

#[test]
fn unnamed_and_duplicate_names_are_made_unique() {
    let (doc, diag) = read(r#"{"asset":{"version":"2.0"},"nodes":[{"name":"a","children":[1,2,3]},{"name":"b"},{"name":"b"},{}],"skins":[{"joints":[0,1,2,3]}]}"#).unwrap();
    let names: Vec<_> = doc.skeletons[0].bones.iter().map(|b| b.name.as_str()).collect();
    assert_eq!(names, ["a", "b", "b.001", "node3"]);
    assert!(diag.items.iter().any(|d| d.code == "gltf.duplicate-name"));
    assert!(diag.items.iter().any(|d| d.code == "gltf.unnamed-node"));
}

#[test]
fn parents_above_the_joints_are_baked() {
    let (doc, _) = read(
        r#"{"asset":{"version":"2.0"},"nodes":[{"translation":[1,2,3],"children":[1]},{"name":"hips","translation":[0,1,0],"children":[2]},{"name":"spine","translation":[0,0.5,0]}],
        "skins":[{"joints":[1,2]}]}"#,
    )
    .unwrap();
    let sk = &doc.skeletons[0];
    assert_eq!(sk.bones.len(), 2);
    assert_eq!(sk.bones[0].rest.translation, skelport_ir::DVec3::new(1.0, 3.0, 3.0));
    assert_eq!(doc.skins[0].inverse_bind, vec![skelport_ir::DMat4::IDENTITY; 2]);
}

#[test]
fn a_very_deep_chain_reads_in_linear_time() {
    let n = 65_535;
    let mut nodes = String::new();
    for i in 0..n {
        if i + 1 < n {
            nodes.push_str(&format!("{{\"children\":[{}]}},", i + 1));
        } else {
            nodes.push_str("{}");
        }
    }
    let joints: Vec<String> = (0..n).map(|i| i.to_string()).collect();
    let json = format!(r#"{{"asset":{{"version":"2.0"}},"nodes":[{nodes}],"skins":[{{"joints":[{}]}}]}}"#, joints.join(","));
    let (doc, _) = read(&json).unwrap();
    assert_eq!(doc.skeletons[0].bones.len(), n);
    assert_eq!(doc.skeletons[0].bones[n - 1].parent, Some(skelport_ir::BoneId::from_index(n - 2)));
}
