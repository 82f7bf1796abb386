//! `cargo xtask gen-untrusted DIR`: the crafted inputs of issue 38, too big to commit, written to
//! DIR to measure a build against (docs/limits.md has the figures). The tests build smaller ones
//! of the same shapes.

use anyhow::{Context, Result};
use std::path::Path;

fn demo(name: &str) -> Result<Vec<u8>> {
    let p = skelport_ir::testing::workspace_root().join("testdata/demo").join(name);
    std::fs::read(&p).with_context(|| format!("{}", p.display()))
}

/// `n` copies of `{"":0}` as a JSON array: 7 bytes each, about 450 as a `serde_json::Value`.
fn empty_objects(n: usize) -> String {
    let mut s = String::with_capacity(n * 7 + 2);
    s.push('[');
    for k in 0..n {
        if k > 0 {
            s.push(',');
        }
        s.push_str(r#"{"":0}"#);
    }
    s.push(']');
    s
}

/// `text` (a JSON object) with `"padding": pad` as its first member.
fn padded(text: &str, pad: &str) -> Result<String> {
    let at = text.find('{').context("not a JSON object")? + 1;
    Ok(format!("{}\"padding\":{pad},{}", &text[..at], &text[at..]))
}

fn gltf_doc(nodes: &str, skins: &str) -> String {
    format!(r#"{{"asset":{{"version":"2.0"}},"nodes":[{nodes}]{skins}}}"#)
}

/// Write every crafted input into `dir`.
pub fn gen(args: &[String]) -> Result<()> {
    let [dir] = args else { anyhow::bail!("usage: xtask gen-untrusted DIR") };
    let dir = Path::new(dir);
    std::fs::create_dir_all(dir)?;
    let write = |name: &str, bytes: &[u8]| -> Result<()> {
        std::fs::write(dir.join(name), bytes)?;
        println!("{name}: {} bytes", bytes.len());
        Ok(())
    };

    // Memory: value trees.
    let chunks = skelport_g4mf::container::read(&demo("sample.g4b")?, "demo")?;
    let json = String::from_utf8(chunks[0].data.clone())?;
    let mut zchunks = chunks.clone();
    zchunks[0].encoding = skelport_g4mf::container::ZSTD;
    zchunks[0].data = padded(&json, &empty_objects(2_000_000))?.into_bytes();
    write("zstd-json-tree.g4b", &skelport_g4mf::container::write(&zchunks)?)?;
    let g4tf = String::from_utf8(demo("sample.g4tf")?)?;
    write("padded.g4tf", padded(&g4tf, &empty_objects(4_000_000))?.as_bytes())?;
    let gltf = String::from_utf8(demo("sample.gltf")?)?.replace("\"uri\": \"sample.bin\"", "\"uri\": \"padded.bin\"");
    write("padded.bin", &demo("sample.bin")?)?;
    let extras = format!("\"extras\": {{\"padding\":{},", empty_objects(4_000_000));
    write("padded.gltf", gltf.replacen("\"extras\": {", &extras, 1).as_bytes())?;
    let rig = String::from_utf8(demo("rig.sample.json")?)?;
    write("padded.rig.json", padded(&rig, &empty_objects(4_000_000))?.as_bytes())?;
    let ir = String::from_utf8(demo("sample.ir.json")?)?;
    write("padded.ir.json", ir.replacen('{', &format!("{{\"ext\":{{\"x\":{}}},", empty_objects(4_000_000)), 1).as_bytes())?;
    // glTF nodes and a skin without inverse binds.
    write("empty-nodes.gltf", gltf_doc(&vec!["{}"; 10_000_000].join(","), "").as_bytes())?;
    let n = 2_000_000;
    let joints: Vec<String> = (0..n).map(|k| k.to_string()).collect();
    let kids: Vec<String> = (1..n).map(|k| k.to_string()).collect();
    let nodes =
        std::iter::once(format!(r#"{{"children":[{}]}}"#, kids.join(","))).chain((1..n).map(|_| "{}".to_string())).collect::<Vec<_>>();
    write("skin-without-binds.gltf", gltf_doc(&nodes.join(","), &format!(r#","skins":[{{"joints":[{}]}}]"#, joints.join(","))).as_bytes())?;
    // The .dae inside a .zae: 3 MB of elements that zip to a few kilobytes.
    let dae = String::from_utf8(demo("sample.dae")?)?;
    let at = dae.find("<library_visual_scenes>").context("no visual scenes")?;
    let filler: String = (0..200_000).map(|_| "<library_lights/>").collect();
    let inner = format!("{}{filler}{}", &dae[..at], &dae[at..]);
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    zip.start_file("rig.dae", opts)?;
    std::io::Write::write_all(&mut zip, inner.as_bytes())?;
    write("elements.zae", &zip.finish()?.into_inner())?;

    // Time: names repeated, attributes on one element, skins.
    let n = 40_000;
    let kids: Vec<String> = (1..=n).map(|k| k.to_string()).collect();
    let nodes = std::iter::once(format!(r#"{{"name":"root","children":[{}]}}"#, kids.join(",")))
        .chain((0..n).map(|_| r#"{"name":"j"}"#.to_string()))
        .collect::<Vec<_>>();
    let joints: Vec<String> = (0..=n).map(|k| k.to_string()).collect();
    write("same-names.gltf", gltf_doc(&nodes.join(","), &format!(r#","skins":[{{"joints":[{}]}}]"#, joints.join(","))).as_bytes())?;
    let joint_nodes: String = (0..n).map(|k| format!("<node id=\"j{k}\" name=\"j\" type=\"JOINT\"/>")).collect();
    let scene = |body: &str, attrs: &str| {
        format!(
            r##"<?xml version="1.0"?><COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1"{attrs}><asset><unit meter="1"/><up_axis>Y_UP</up_axis></asset><library_visual_scenes><visual_scene id="s"><node id="root" name="root" type="JOINT">{body}</node></visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene></COLLADA>"##
        )
    };
    write("same-names.dae", scene(&joint_nodes, "").as_bytes())?;
    let attrs: String = (0..400_000).map(|k| format!(" xmlns:p{k}=\"u\"")).collect();
    write("attributes.dae", scene("", &attrs).as_bytes())?;
    let extras = format!(r#""extras":{{"pad":"{}"}}"#, "x".repeat(1 << 20));
    let nodes = format!(r#"{{"name":"root","children":[1,2],{extras}}},{{"name":"a",{extras}}},{{"name":"b",{extras}}}"#);
    write(
        "skins-share-extras.gltf",
        gltf_doc(&nodes, &format!(r#","skins":[{}]"#, vec![r#"{"joints":[0,1,2]}"#; 1000].join(","))).as_bytes(),
    )?;
    let n = 200_000;
    let kids: Vec<String> = (1..=n).map(|k| k.to_string()).collect();
    let nodes = std::iter::once(format!(r#"{{"name":"root","children":[{}]}}"#, kids.join(",")))
        .chain((0..n).map(|k| format!(r#"{{"name":"n{k}"}}"#)));
    let skins: Vec<String> = (1..=n).map(|k| format!(r#"{{"joints":[{k}]}}"#)).collect();
    // AnvilToolkit on one line: 5,000 and 10,000 bones (UTF-8, so the line breaks can go).
    for n in [5_000, 10_000] {
        let mut sk = skelport_ir::Skeleton::new("flat");
        let root = sk.push(skelport_ir::Bone::new("Reference", None, skelport_ir::Transform::IDENTITY));
        for k in 0..n {
            let t = skelport_ir::Transform::from_rt(skelport_ir::DQuat::IDENTITY, skelport_ir::DVec3::new(0.01, 0.0, 0.0));
            sk.push(skelport_ir::Bone::new(format!("b{k}"), Some(root), t));
        }
        let mut doc = skelport_ir::Document::new(skelport_anvil::ANVIL_FRAME);
        doc.skeletons.push(sk);
        let out = skelport_ir::Format::write(&skelport_anvil::AnvilFormat, &doc, &Default::default(), &mut Default::default())
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        let text = skelport_anvil::text::decode(&out.main).map_err(|e| anyhow::anyhow!("{e:?}"))?.0;
        let flat: String = text.lines().map(str::trim).collect::<String>().replace("utf-16", "utf-8");
        write(&format!("one-line-{n}.xml"), flat.as_bytes())?;
    }
    write("many-skins.gltf", gltf_doc(&nodes.collect::<Vec<_>>().join(","), &format!(r#","skins":[{}]"#, skins.join(","))).as_bytes())?;
    Ok(())
}
