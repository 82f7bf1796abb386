//! # skelport-gltf — glTF 2.0 skins (`.gltf` and `.glb`)
//!
//! Two [`Format`]s share one reader and one writer:
//! * [`GltfFormat`] (`"gltf"`): JSON with the binary data in a `<stem>.bin` side file, or in a
//!   base64 data URI when [`WriteOptions::embed`] is set;
//! * [`GlbFormat`] (`"glb"`): the binary container (JSON chunk + BIN chunk).
//!
//! Both read either flavour (the reader looks at the bytes). The frame is [`Frame::GLTF`](skelport_ir::Frame::GLTF)
//! (+Y up, +Z forward, right-handed, metres).
//!
//! ## Mapping
//! * every glTF skin becomes one IR [`skelport_ir::Skeleton`] plus one [`skelport_ir::Skin`];
//!   the skeleton holds the joint nodes, the non-joint nodes between them (as `deform = false`
//!   bones) and their lowest common ancestor; the nodes above it are baked into the root's rest;
//! * every mesh primitive of every node using a skin is merged into one IR mesh per skin;
//! * inverse bind matrices are kept as given (the bind pose is not the rest pose);
//! * what glTF cannot hold (bone length, roll, anchors, mirror, other formats' extension data)
//!   is written to `extras.skelport` and restored on read.
//!
//! See `docs/formats/gltf.md` for the full list of what is kept and lost.

mod buffers;
mod error;
mod extras;
mod meshopt;
mod pretty;
mod read;
pub use read::{ACCESSOR_RANGE, IBM_STRIDE};
mod write;

pub use error::GltfError;
pub use read::MAX_UV_SETS;

use skelport_ir::{Diagnostics, Document, Format, FormatError, Holds, Input, InputKind, InputRole, Output, ReadOptions, WriteOptions};

/// The namespace of this crate's IR extension data and of its `extras` key in written files.
pub const EXTRAS_KEY: &str = "skelport";

/// glTF 2.0 as JSON (`.gltf`), with external or data-URI buffers.
#[derive(Debug, Clone, Copy, Default)]
pub struct GltfFormat;

/// glTF 2.0 binary container (`.glb`).
#[derive(Debug, Clone, Copy, Default)]
pub struct GlbFormat;

/// How sure we are that `head` is glTF 2.0 JSON: the top-level object must have an `"asset"`
/// whose `"version"` is `"2.0"` and no `"dimension"` (G4MF reuses glTF's asset layout).
///
/// Only the first bytes are available, so this is a text scan rather than a JSON parse.
fn sniff_json(head: &[u8]) -> u8 {
    let text = skelport_ir::format::head_text(head);
    let t = text.trim_start_matches('\u{feff}').trim_start();
    if !t.starts_with('{') {
        return 0;
    }
    // A full parse is tried first (small files); when the head is truncated we fall back to
    // looking for the asset object's text.
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(t) {
        let asset = v.get("asset");
        let version = asset.and_then(|a| a.get("version")).and_then(|x| x.as_str());
        let dimension = asset.and_then(|a| a.get("dimension"));
        return if version == Some("2.0") && dimension.is_none() { 95 } else { 0 };
    }
    let Some(pos) = t.find("\"asset\"") else { return 0 };
    let rest = &t[pos..];
    let end = rest.find('}').unwrap_or(rest.len());
    let asset = &rest[..end];
    let compact: String = asset.chars().filter(|c| !c.is_whitespace()).collect();
    if compact.contains("\"version\":\"2.0\"") && !compact.contains("\"dimension\"") {
        90
    } else {
        0
    }
}

fn sniff_any(head: &[u8]) -> (u8, u8) {
    if head.starts_with(b"glTF") {
        // Version 2 containers only.
        let v2 = head.get(4..8).map(|b| b == [2, 0, 0, 0]).unwrap_or(true);
        return (0, if v2 { 100 } else { 10 });
    }
    (sniff_json(head), 0)
}

/// What glTF and GLB hold (the same model in two containers).
const HOLDS: Holds = Holds::EVERYTHING;

impl Format for GltfFormat {
    fn name(&self) -> &'static str {
        "gltf"
    }
    fn structural(&self) -> &'static [&'static str] {
        &[read::ACCESSOR_RANGE, read::IBM_STRIDE]
    }
    fn description(&self) -> &'static str {
        "glTF 2.0 JSON (.gltf + .bin or data URIs): skins, joints, inverse bind matrices, skinned meshes"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["gltf"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        sniff_any(head).0
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        read::read(input, opts, "gltf", diag).map_err(Into::into)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        write::write(doc, opts, write::Container::Json, diag).map_err(Into::into)
    }
    fn fuzz_side_file(&self, demo: &Document) -> Option<Vec<u8>> {
        let opts = WriteOptions { file_stem: "sample".into(), ..Default::default() };
        let out = write::write(demo, &opts, write::Container::Json, &mut Diagnostics::default()).ok()?;
        out.side_files.into_iter().next().map(|(_, bytes)| bytes)
    }
    fn write_frame(&self) -> Option<skelport_ir::Frame> {
        Some(skelport_ir::Frame::GLTF)
    }
    fn holds(&self) -> Holds {
        HOLDS
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[InputKind { role: InputRole::Main, suite: "gltf", fuzz_target: "gltf" }]
    }
}

impl Format for GlbFormat {
    fn name(&self) -> &'static str {
        "glb"
    }
    fn structural(&self) -> &'static [&'static str] {
        &[read::ACCESSOR_RANGE, read::IBM_STRIDE]
    }
    fn description(&self) -> &'static str {
        "glTF 2.0 binary (.glb): skins, joints, inverse bind matrices, skinned meshes"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["glb"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        sniff_any(head).1
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        read::read(input, opts, "glb", diag).map_err(Into::into)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        write::write(doc, opts, write::Container::Binary, diag).map_err(Into::into)
    }
    fn write_frame(&self) -> Option<skelport_ir::Frame> {
        Some(skelport_ir::Frame::GLTF)
    }
    fn holds(&self) -> Holds {
        HOLDS
    }
    fn inputs(&self) -> &'static [InputKind] {
        &[InputKind { role: InputRole::Main, suite: "glb", fuzz_target: "glb" }]
    }
    #[cfg(feature = "fuzzing")]
    fn fuzz_check_write(&self, doc: &Document) -> usize {
        write::ahead_agrees(doc)
    }
}

pub use read::NodeBones;
pub use write::{Edit, NodeLayout, MAX_SKIN_JOINTS};

/// Write `doc` as a GLB, with `edit` applied to the glTF JSON (as a `serde_json` object) after
/// everything else is in place and before it is encoded: for formats built on glTF (a root
/// extension and its `extensionsUsed`, references to the nodes [`NodeLayout`] gives each bone).
pub fn write_glb_edited(doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics, edit: Edit<'_>) -> Result<Output, GltfError> {
    write::write_edited(doc, opts, write::Container::Binary, diag, skelport_ir::PARALLEL_FROM, Some(edit))
}

/// [`read_bytes`], also giving the bone each node became: `nodes[i] = Some((skeleton, bone))`
/// for node `i`, `None` for nodes that are no bone (meshes, nodes outside every skin). `bones`
/// are nodes the caller's format names as bones (VRM's humanoid): those no skin binds are read
/// as a skeleton of their own, the subtree of their lowest common ancestor (mesh nodes left out,
/// meshes hanging below a bone bound to it rigidly), so a meshless or unskinned armature keeps
/// its bones.
pub fn read_bytes_with_nodes(
    bytes: &[u8],
    path: Option<&std::path::Path>,
    bones: &[usize],
    diag: &mut Diagnostics,
) -> Result<(Document, NodeBones), GltfError> {
    read::read_with_nodes(Input { path, bytes }, &ReadOptions::default(), "gltf", bones, diag)
}

/// [`read_bytes_with_nodes`] with the caller's [`ReadOptions`] (its decode budget, URI rules).
pub fn read_input_with_nodes(
    input: Input<'_>,
    opts: &ReadOptions,
    bones: &[usize],
    diag: &mut Diagnostics,
) -> Result<(Document, NodeBones), GltfError> {
    read::read_with_nodes(input, opts, "gltf", bones, diag)
}

/// Read glTF or GLB bytes (the flavour is detected from the bytes). `path` resolves external
/// buffers (inside its folder only; default [`ReadOptions`]). Convenience for callers that do
/// not go through the [`Format`] registry.
pub fn read_bytes(bytes: &[u8], path: Option<&std::path::Path>, diag: &mut Diagnostics) -> Result<Document, GltfError> {
    read::read(Input { path, bytes }, &ReadOptions::default(), "gltf", diag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sniffing() {
        assert_eq!(GlbFormat.sniff(b"glTF\x02\0\0\0"), 100);
        assert_eq!(GltfFormat.sniff(b"glTF\x02\0\0\0"), 0);
        assert_eq!(GltfFormat.sniff(br#"{"asset":{"version":"2.0"}}"#), 95);
        assert_eq!(GltfFormat.sniff(br#"{"asset":{"version":"2.0","dimension":4}}"#), 0);
        assert_eq!(GltfFormat.sniff(br#"{"asset":{"version":"1.0"}}"#), 0);
        assert_eq!(GltfFormat.sniff(br#"{"bones":{"root":{}}}"#), 0);
        assert_eq!(GltfFormat.sniff(br#"{"asset" : { "version" : "2.0" }, "nodes": [ {"#), 90);
        assert_eq!(GlbFormat.sniff(b"{"), 0);
    }

    /// The edit hook sees every bone's node and its change is written; reading back gives each
    /// node the bone it was written for.
    #[test]
    fn edit_hook_and_node_map_agree() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata/demo/sample.glb");
        let doc = read_bytes(&std::fs::read(&path).unwrap(), Some(&path), &mut Diagnostics::default()).unwrap();
        let mut seen = NodeLayout::default();
        let mut edit = |root: &mut serde_json::Map<String, serde_json::Value>, layout: &NodeLayout| {
            root.insert("extensionsUsed".into(), serde_json::json!(["EXT_test"]));
            seen = layout.clone();
            Ok(())
        };
        let out = write_glb_edited(&doc, &WriteOptions::default(), &mut Diagnostics::default(), &mut edit).unwrap();
        assert_eq!(seen.bones.len(), doc.skeletons.len());
        let (back, nodes) = read_bytes_with_nodes(&out.main, None, &[], &mut Diagnostics::default()).unwrap();
        let text = String::from_utf8_lossy(&out.main);
        assert!(text.contains("\"extensionsUsed\":[\"EXT_test\"]"));
        for (si, sk) in doc.skeletons.iter().enumerate() {
            assert_eq!(seen.bones[si].len(), sk.bones.len());
            for (bi, &node) in seen.bones[si].iter().enumerate() {
                let (s2, b2) = nodes[node].expect("a bone node");
                assert_eq!(back.skeletons[s2].bones[b2.index()].name, sk.bones[bi].name);
            }
        }
        // An edit that fails fails the write.
        let mut bad = |_: &mut serde_json::Map<String, serde_json::Value>, _: &NodeLayout| Err("no".to_string());
        assert!(write_glb_edited(&doc, &WriteOptions::default(), &mut Diagnostics::default(), &mut bad).is_err());
    }
}
