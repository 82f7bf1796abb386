//! VRM → IR: the glTF underneath through skelport-gltf, then `extensions.VRMC_vrm` (or VRM
//! 0.x's `extensions.VRM`): the humanoid becomes roles on the skeleton (`ext["vrm"].humanoid`,
//! role → bone name), the meta is kept in `ext["vrm"].meta` for a VRM written back; what the IR
//! cannot hold (expressions, look-at, first person, spring bones, constraints, MToon materials)
//! is reported as lost.

use crate::error::VrmError;
use crate::humanoid::{store_roles, NAMESPACE};
use crate::spec;
use serde_json::{json, Value};
use skelport_ir::rest::{HumanBone, Humanoid};
use skelport_ir::{Axis, Diagnostics, Document, Input, ReadOptions};
use std::collections::BTreeMap;

/// The JSON of a GLB (its first chunk) or of a JSON glTF.
fn json_of<'a>(bytes: &'a [u8], file: &str) -> Result<&'a [u8], VrmError> {
    if !bytes.starts_with(b"glTF") {
        return Ok(bytes);
    }
    // The glTF reader has checked the container already; this only has to find the chunk.
    let len = bytes.get(12..16).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    match len.and_then(|l| bytes.get(20..20 + l)) {
        Some(j) => Ok(j),
        None => Err(VrmError::Invalid { file: file.into(), pointer: "byte 12".into(), message: "no JSON chunk".into() }),
    }
}

/// The parts of the glTF JSON the VRM reader looks at: `extensions` as raw text (only it is
/// parsed into a value tree, after it is charged), and how many materials there are. The glTF
/// reader has read (and charged) the rest; a second tree of the whole JSON took 71× the input.
#[derive(serde::Deserialize)]
struct Top<'a> {
    #[serde(borrow, default)]
    extensions: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    materials: Option<skelport_ir::jsonskip::JsonSkip>,
}

pub(crate) fn read(input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, VrmError> {
    let file = input.display_name();
    let budget = opts.budget_for(&input);
    let opts = ReadOptions { budget: Some(budget.clone()), ..ReadOptions::default() };
    let (mut doc, nodes) = skelport_gltf::read_input_with_nodes(input, &opts, diag)?;
    doc.source_format = Some("vrm".into());
    let json = json_of(input.bytes, &file)?;
    let syntax = |e: serde_json::Error| VrmError::Invalid {
        file: file.clone(),
        pointer: format!("JSON line {}, column {}", e.line(), e.column()),
        message: e.to_string(),
    };
    let top: Top<'_> = serde_json::from_slice(json).map_err(syntax)?;
    let ext: Option<Value> = match top.extensions {
        Some(raw) => {
            budget.charge_json(raw.get().as_bytes(), &file, "/extensions").map_err(skelport_gltf::GltfError::from)?;
            Some(serde_json::from_str(raw.get()).map_err(syntax)?)
        }
        None => None,
    };
    let invalid = |pointer: &str, message: String| VrmError::Invalid { file: file.clone(), pointer: pointer.into(), message };
    let ext = ext.as_ref();
    // (role, node) pairs, and the pointer they came from.
    let mut pairs: Vec<(HumanBone, u64, String)> = Vec::new();
    let (vrm, v0) = match (ext.and_then(|e| e.get(spec::EXTENSION)), ext.and_then(|e| e.get("VRM"))) {
        (Some(v), _) => (v, false),
        (None, Some(v)) => (v, true),
        (None, None) => {
            return Err(invalid(
                "/extensions",
                "no VRMC_vrm (VRM 1.0) or VRM (0.x) extension: this is a plain glTF; read it as .glb (--from glb)".into(),
            ))
        }
    };
    if v0 {
        // VRM 0.x: humanBones is a list of {bone, node}; models face -Z.
        let list = vrm.pointer("/humanoid/humanBones").and_then(Value::as_array).ok_or_else(|| {
            invalid("/extensions/VRM/humanoid/humanBones", "missing or not a list; a VRM 0.x humanoid lists {\"bone\", \"node\"}".into())
        })?;
        for (k, e) in list.iter().enumerate() {
            let at = format!("/extensions/VRM/humanoid/humanBones/{k}");
            match (e.get("bone").and_then(Value::as_str), e.get("node").and_then(Value::as_u64)) {
                (Some(b), Some(n)) => match spec::role_from_v0(b) {
                    Some(r) => pairs.push((r, n, at)),
                    None => diag.warn("vrm.unknown-bone", format!("{at}: \"{b}\" is no VRM humanoid bone; ignored")),
                },
                _ => diag.warn("vrm.bad-bone", format!("{at}: needs a \"bone\" name and a \"node\" index; ignored")),
            }
        }
        let mut frame = doc.frame;
        frame.forward = Axis::NegZ;
        doc.frame = frame;
        diag.info("vrm.v0", "a VRM 0.x file: its model faces -Z, and its document frame says so");
    } else {
        let version = vrm.get("specVersion").and_then(Value::as_str).unwrap_or("");
        if !version.starts_with("1.0") {
            diag.warn("vrm.spec-version", format!("/extensions/VRMC_vrm/specVersion is \"{version}\"; read as VRM 1.0"));
        }
        let bones = vrm.pointer("/humanoid/humanBones").and_then(Value::as_object).ok_or_else(|| {
            invalid("/extensions/VRMC_vrm/humanoid/humanBones", "missing or not an object; VRM 1.0 needs the humanoid".into())
        })?;
        for (name, v) in bones {
            let at = format!("/extensions/VRMC_vrm/humanoid/humanBones/{name}");
            match (HumanBone::from_name(name), v.get("node").and_then(Value::as_u64)) {
                (Some(r), Some(n)) => pairs.push((r, n, at)),
                (None, _) => diag.warn("vrm.unknown-bone", format!("{at}: \"{name}\" is no VRM 1.0 humanoid bone; ignored")),
                (_, None) => diag.warn("vrm.bad-bone", format!("{at}: needs a \"node\" index; ignored")),
            }
        }
    }
    // Roles per skeleton; the humanoid is the skeleton holding most of them.
    let mut per: BTreeMap<usize, Humanoid> = BTreeMap::new();
    for (role, node, at) in pairs {
        match nodes.get(node as usize).copied().flatten() {
            Some((si, b)) => {
                per.entry(si).or_default().insert(role, b);
            }
            None => diag.warn(
                "vrm.bone-not-read",
                format!("{at}: node {node} is not a bone of any skin's skeleton (or does not exist); {role} is not kept"),
            ),
        }
    }
    if let Some((&si, h)) = per.iter().max_by_key(|(si, h)| (h.len(), usize::MAX - **si)) {
        let missing: Vec<&str> = spec::required().filter(|r| !h.contains_key(r)).map(|r| r.name()).collect();
        if !missing.is_empty() {
            diag.warn("vrm.missing-required", format!("the humanoid lacks required bones {}: not a valid VRM", missing.join(", ")));
        }
        store_roles(&mut doc.skeletons[si], h);
    } else {
        diag.warn("vrm.no-humanoid", "no humanoid bone refers to a bone that was read");
    }
    let meta = if v0 {
        // 0.x meta has other names and licence terms: only what means the same is kept.
        let m = vrm.get("meta");
        let s = |k: &str| m.and_then(|m| m.get(k)).and_then(Value::as_str).filter(|s| !s.trim().is_empty()).map(str::to_owned);
        diag.loss("vrm.v0-meta", "VRM 0.x meta: only title, author and version are kept; its licence terms are not carried into VRM 1.0's");
        s("title").map(|name| {
            let mut v = json!({ "name": name, "authors": [s("author").unwrap_or_else(|| "unknown".into())] });
            if let Some(ver) = s("version") {
                v["version"] = json!(ver);
            }
            v
        })
    } else {
        vrm.get("meta").cloned()
    };
    if let Some(meta) = meta {
        let mut v = doc.ext.raw(NAMESPACE).cloned().unwrap_or_else(|| json!({}));
        v["meta"] = meta;
        doc.ext.set_raw(NAMESPACE, v);
    }
    let mut lost: Vec<String> = ["expressions", "lookAt", "firstPerson", "blendShapeMaster", "secondaryAnimation"]
        .iter()
        .filter(|k| vrm.get(**k).is_some())
        .map(|k| (*k).to_owned())
        .collect();
    for k in ["VRMC_springBone", "VRMC_node_constraint"] {
        if ext.and_then(|e| e.get(k)).is_some() {
            lost.push(k.to_owned());
        }
    }
    let materials = top.materials.map_or(0, |m| m.0);
    if materials > 0 {
        lost.push(format!("{materials} materials (MToon and others)"));
    }
    if !lost.is_empty() {
        diag.loss("vrm.dropped", format!("not kept (the IR has no place for them): {}", lost.join(", ")));
    }
    Ok(doc)
}
