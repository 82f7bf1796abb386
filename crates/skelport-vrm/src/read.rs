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
use skelport_ir::{Axis, Diagnostics, Document, FaultKind, Input, Place, ReadOptions};
use std::collections::BTreeMap;

/// The code of a warning that a humanoid bone names no node, one of the format's structural codes.
pub const BONE_NOT_READ: &str = "vrm.bone-not-read";
/// The code of a warning that the humanoid lacks a required bone, one of the format's structural codes.
pub const MISSING_REQUIRED: &str = "vrm.missing-required";

/// The JSON of a GLB (its first chunk) or of a JSON glTF.
fn json_of<'a>(bytes: &'a [u8], file: &str) -> Result<&'a [u8], VrmError> {
    if !bytes.starts_with(b"glTF") {
        return Ok(bytes);
    }
    // The glTF reader checks the container and describes what is wrong with it; this only finds
    // the chunk.
    let len = bytes.get(12..16).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize);
    match len.and_then(|l| bytes.get(20..20 + l)) {
        Some(j) => Ok(j),
        None => Err(VrmError::Invalid {
            file: file.into(),
            place: Place::Byte(12),
            message: "no JSON chunk".into(),
            kind: FaultKind::Container,
        }),
    }
}

/// The nodes a VRM 1.0 or 0.x humanoid names, from the `extensions` object alone and without
/// judging it (the reader judges the extension after the glTF underneath, as the file is ordered).
fn humanoid_nodes(ext: &Value) -> Vec<usize> {
    let node = |v: &Value| v.get("node").and_then(Value::as_u64).and_then(|n| usize::try_from(n).ok());
    let v1 = ext.pointer("/VRMC_vrm/humanoid/humanBones").and_then(Value::as_object).map(|o| o.values().filter_map(node).collect());
    let v0 = || ext.pointer("/VRM/humanoid/humanBones").and_then(Value::as_array).map(|l| l.iter().filter_map(node).collect());
    v1.or_else(v0).unwrap_or_default()
}

/// The parts of the glTF JSON the VRM reader looks at: `extensions` as raw text (only it is
/// parsed into a value tree, after it is charged), `textures` (a VRM 0.x thumbnail names one),
/// and how many materials there are. The glTF reader reads (and charges) the rest; a second tree
/// of the whole JSON took 71× the input.
#[derive(serde::Deserialize)]
struct Top<'a> {
    #[serde(borrow, default)]
    extensions: Option<&'a serde_json::value::RawValue>,
    #[serde(borrow, default)]
    textures: Option<&'a serde_json::value::RawValue>,
    #[serde(default)]
    materials: Option<skelport_ir::jsonskip::JsonSkip>,
}

pub(crate) fn read(input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, VrmError> {
    let file = input.display_name();
    let budget = opts.budget_for(&input);
    let opts = ReadOptions { budget: Some(budget.clone()), ..ReadOptions::default() };
    let syntax = |e: serde_json::Error| VrmError::Invalid {
        file: file.clone(),
        place: Place::In { part: "JSON".into(), place: Box::new(Place::text(e.line(), e.column())) },
        message: e.to_string(),
        kind: FaultKind::Syntax,
    };
    // The extensions first: the humanoid's nodes are read as bones even where no skin binds
    // them. Broken containers and JSON are the glTF reader's to describe, so a failure here
    // is reported only after it has read the file.
    let early = (|| -> Result<(Top<'_>, Option<Value>, Value), VrmError> {
        let top: Top<'_> = serde_json::from_slice(json_of(input.bytes, &file)?).map_err(syntax)?;
        let tree = |raw: Option<&serde_json::value::RawValue>, at: &str| -> Result<Option<Value>, VrmError> {
            let Some(raw) = raw else { return Ok(None) };
            budget.charge_json(raw.get().as_bytes(), &file, at).map_err(skelport_gltf::GltfError::from)?;
            Ok(Some(serde_json::from_str(raw.get()).map_err(syntax)?))
        };
        let ext = tree(top.extensions, "/extensions")?;
        let textures = tree(top.textures, "/textures")?.unwrap_or(Value::Null);
        Ok((top, ext, json!({ "textures": textures })))
    })();
    let named = match &early {
        Ok((_, Some(ext), _)) => humanoid_nodes(ext),
        _ => Vec::new(),
    };
    let (mut doc, nodes) = skelport_gltf::read_input_with_nodes(input, &opts, &named, diag)?;
    doc.source_format = Some("vrm".into());
    let (top, ext, root) = early?;
    let invalid = |pointer: &str, message: String| VrmError::Invalid {
        file: file.clone(),
        place: Place::Path(pointer.into()),
        message,
        kind: FaultKind::Value,
    };
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
                    None => diag.warn_at("vrm.unknown-bone", Place::path(&at), format!("{at}: \"{b}\" is no VRM humanoid bone; ignored")),
                },
                _ => diag.warn_at("vrm.bad-bone", Place::path(&at), format!("{at}: needs a \"bone\" name and a \"node\" index; ignored")),
            }
        }
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
                (None, _) => {
                    diag.warn_at("vrm.unknown-bone", Place::path(&at), format!("{at}: \"{name}\" is no VRM 1.0 humanoid bone; ignored"))
                }
                (_, None) => diag.warn_at("vrm.bad-bone", Place::path(&at), format!("{at}: needs a \"node\" index; ignored")),
            }
        }
    }
    if v0 {
        let mut frame = doc.frame;
        frame.forward = Axis::NegZ;
        doc.frame = frame;
        diag.info("vrm.v0", "a VRM 0.x file: its model faces -Z, and its document frame says so (a VRM written from it is turned 180° about +Y to face +Z, as UniVRM's migration does)");
    }
    // Roles per skeleton; the humanoid is the skeleton holding most of them.
    let humanoid_at = if v0 { "/extensions/VRM/humanoid/humanBones" } else { "/extensions/VRMC_vrm/humanoid/humanBones" };
    let mut per: BTreeMap<usize, Humanoid> = BTreeMap::new();
    for (role, node, at) in pairs {
        match usize::try_from(node).ok().and_then(|n| nodes.get(n).copied().flatten()) {
            Some((si, b)) => {
                per.entry(si).or_default().insert(role, b);
            }
            None => diag.warn_at(
                BONE_NOT_READ,
                Place::path(&at),
                format!("{at}: node {node} does not exist (the file has {} nodes); {role} is not kept", nodes.len()),
            ),
        }
    }
    let Some((&si, h)) = per.iter().max_by_key(|(si, h)| (h.len(), usize::MAX - **si)) else {
        return Err(invalid(
            humanoid_at,
            "no humanoid bone names an existing node, so no humanoid skeleton can be read; the file is broken: export it again".into(),
        ));
    };
    let missing: Vec<&str> = spec::required().filter(|r| !h.contains_key(r)).map(|r| r.name()).collect();
    if !missing.is_empty() {
        diag.warn_at(
            MISSING_REQUIRED,
            Place::path(humanoid_at),
            format!("{humanoid_at}: the humanoid lacks required bones {}: not a valid VRM", missing.join(", ")),
        );
    }
    if v0 {
        // VRM 0.x also requires chest and neck (specification/0.0, "Defined bones"); 1.0 does not,
        // so a migrated file without them is valid.
        let v0_missing: Vec<&str> = [HumanBone::Chest, HumanBone::Neck].iter().filter(|r| !h.contains_key(r)).map(|r| r.name()).collect();
        if !v0_missing.is_empty() {
            diag.warn_at(
                "vrm.v0-required",
                Place::path(humanoid_at),
                format!("{humanoid_at}: VRM 0.x requires {} too, which the humanoid lacks (VRM 1.0 does not)", v0_missing.join(", ")),
            );
        }
    }
    store_roles(&mut doc.skeletons[si], h);
    let meta = if v0 {
        let stem = input.path.and_then(|p| p.file_stem()).map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "avatar".into());
        vrm.get("meta").map(|m| serde_json::to_value(crate::meta::from_v0(m, &root, &stem, diag)).unwrap_or_else(|_| json!({})))
    } else {
        vrm.get("meta").cloned()
    };
    if let Some(meta) = meta {
        let mut v = doc.ext.raw(NAMESPACE).cloned().unwrap_or_else(|| json!({}));
        v["meta"] = meta;
        doc.ext.set_raw(NAMESPACE, v);
    }
    let mut lost: Vec<String> = [
        ("expressions", "expressions"),
        ("lookAt", "lookAt"),
        ("firstPerson", "firstPerson (first-person view and look-at)"),
        ("blendShapeMaster", "blendShapeMaster (blend shape groups, VRM 1.0's expressions)"),
        ("secondaryAnimation", "secondaryAnimation (spring bones and colliders, VRM 1.0's VRMC_springBone)"),
        ("materialProperties", "materialProperties (MToon settings)"),
    ]
    .iter()
    .filter(|(k, _)| vrm.get(*k).is_some())
    .map(|(_, say)| (*say).to_owned())
    .collect();
    if v0
        && ["armStretch", "legStretch", "upperArmTwist", "feetSpacing", "hasTranslationDoF"]
            .iter()
            .any(|k| vrm.pointer(&format!("/humanoid/{k}")).is_some())
    {
        lost.push("the humanoid's Unity avatar settings (armStretch, legStretch, twists, bone limits; VRM 1.0 has none)".into());
    }
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
