//! Tree ↔ IR.
//!
//! Reading keeps the whole source text in the document's `anvil` extension and each bone's ID,
//! hash and mirroring type in the bone's. Writing starts from that source tree when the target
//! form is the source's (from a fresh tree otherwise, or the source converted to the other form)
//! and changes only what the IR changed: an unmodified document re-exports byte for byte.

use crate::model::{self, Form};
use crate::names;
use crate::xml::{Doc, Elem, Item};
use crate::AnvilError;
use serde::{Deserialize, Serialize};
use skelport_ir::{
    Axis, Bone, BoneId, DQuat, DVec3, Diagnostics, Document, Extension, Frame, Handedness, ReadOptions, Skeleton, Transform, WriteOptions,
};
use std::collections::{HashMap, HashSet};

/// AnvilNext space: Z up, metres, right-handed; characters face +Y (so +X is their right).
pub const FRAME: Frame = Frame { up: Axis::PosZ, forward: Axis::PosY, handedness: Handedness::Right, metres_per_unit: 1.0 };

/// How the file was encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    Utf8,
    Utf8Bom,
    Utf16Le,
    Utf16Be,
}

/// Document-level extension: the source file, for lossless same-form writes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnvilSource {
    pub form: Form,
    pub encoding: Encoding,
    pub text: String,
}

impl Extension for AnvilSource {
    const NAMESPACE: &'static str = "anvil";
}

/// Bone-level extension.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AnvilBone {
    pub id: u64,
    pub hash: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirroring_type: Option<i64>,
}

impl Extension for AnvilBone {
    const NAMESPACE: &'static str = "anvil";
}

/// Decode the bytes: UTF-16 with a BOM (LE or BE), UTF-8 with or without one.
pub fn decode(bytes: &[u8], file: &str) -> Result<(String, Encoding), AnvilError> {
    let bad = |offset: usize, message: String| AnvilError::Encoding { file: file.into(), offset, message };
    match bytes {
        [0xFF, 0xFE, rest @ ..] => encoding_rs::UTF_16LE
            .decode_without_bom_handling_and_without_replacement(rest)
            .map(|s| (s.into_owned(), Encoding::Utf16Le))
            .ok_or_else(|| bad(2, "invalid UTF-16LE text (an odd byte count or a lone surrogate); re-export the file".into())),
        [0xFE, 0xFF, rest @ ..] => encoding_rs::UTF_16BE
            .decode_without_bom_handling_and_without_replacement(rest)
            .map(|s| (s.into_owned(), Encoding::Utf16Be))
            .ok_or_else(|| bad(2, "invalid UTF-16BE text; re-export the file".into())),
        [b, 0, ..] | [0, b, ..] if *b != 0 => Err(bad(
            0,
            "UTF-16 text without a byte-order mark; AnvilToolkit writes one: re-save the file as UTF-16 with BOM or as UTF-8".into(),
        )),
        _ => {
            let (body, enc) = match bytes.strip_prefix(&[0xEF, 0xBB, 0xBF][..]) {
                Some(b) => (b, Encoding::Utf8Bom),
                None => (bytes, Encoding::Utf8),
            };
            let s =
                std::str::from_utf8(body).map_err(|e| bad(e.valid_up_to(), "invalid UTF-8; save the file as UTF-8 or UTF-16".into()))?;
            Ok((s.to_string(), enc))
        }
    }
}

/// Encode text as the file was.
pub fn encode(text: &str, enc: Encoding) -> Vec<u8> {
    match enc {
        Encoding::Utf8 => text.as_bytes().to_vec(),
        Encoding::Utf8Bom => [&[0xEF, 0xBB, 0xBF][..], text.as_bytes()].concat(),
        Encoding::Utf16Le => {
            let mut v = vec![0xFF, 0xFE];
            v.extend(text.encode_utf16().flat_map(|u| u.to_le_bytes()));
            v
        }
        Encoding::Utf16Be => {
            let mut v = vec![0xFE, 0xFF];
            v.extend(text.encode_utf16().flat_map(|u| u.to_be_bytes()));
            v
        }
    }
}

/// Which form a parsed document is in.
pub fn form_of(doc: &Doc) -> Form {
    match doc.pi_attr("info", "type").as_deref() {
        Some("1") => Form::Schema,
        Some("0") => Form::Standard,
        _ if doc.root.name == "Object" || doc.root.attr("Type") == Some("Skeleton") => Form::Schema,
        _ => Form::Standard,
    }
}

/// One bone as the file has it.
#[derive(Debug, Clone, PartialEq)]
pub struct BoneRec {
    pub id: u64,
    pub hash: u32,
    pub label: Option<String>,
    pub parent: Option<u64>,
    pub mirror: Option<u64>,
    pub global_pos: Option<[f64; 4]>,
    pub global_rot: Option<[f64; 4]>,
    pub local_pos: Option<[f64; 4]>,
    pub local_rot: Option<[f64; 4]>,
    pub mirroring: Option<i64>,
    pub index: Option<i64>,
    pub child_count: Option<i64>,
    pub offset: usize,
}

/// The bones of a parsed document, in file order.
pub fn bone_recs(doc: &Doc, form: Form, file: &str, text: &str) -> Result<Vec<BoneRec>, AnvilError> {
    let at = |offset: usize, message: String| AnvilError::at(file, text, offset, message);
    let Some(list) = model::bones_container(&doc.root) else {
        return Err(at(doc.root.offset, format!("<{}> has no Bones list; is this a Skeleton export?", doc.root.name)));
    };
    let mut out = Vec::new();
    for b in list.elems().filter(|e| model::is_bone(e, form)) {
        let id = model::id_of(b).ok_or_else(|| at(b.offset, "a bone without a numeric ID attribute".into()))?;
        let (hash, label) = model::name_of(b, form).ok_or_else(|| {
            at(
                b.offset,
                format!(
                    "bone {id} has no {} hash",
                    if form == Form::Standard { "<Value Name=\"Name\">" } else { "<Hash32 Name=\"BoneID\">" }
                ),
            )
        })?;
        let ptr = |field: &str| -> Result<Option<u64>, AnvilError> {
            match b.named(field) {
                Some(p) => model::link(p, form).map_err(|m| at(p.offset, format!("bone {id}: {field}: {m}"))),
                None => Ok(None),
            }
        };
        let v4 = |field: &str| -> Result<Option<[f64; 4]>, AnvilError> {
            match b.named(field) {
                None => Ok(None),
                Some(e) => match model::vec4(e, form) {
                    Some(v) if v.iter().all(|x| x.is_finite()) => Ok(Some(v)),
                    Some(_) => Err(at(e.offset, format!("bone {id}: {field} has a NaN or infinite number"))),
                    None => Err(at(e.offset, format!("bone {id}: {field} is not four numbers"))),
                },
            }
        };
        let int = |field: &str| b.named(field).and_then(|e| e.text().parse::<i64>().ok());
        out.push(BoneRec {
            id,
            hash,
            label,
            parent: ptr(form.parent_field())?,
            mirror: ptr("MirrorBone")?,
            global_pos: v4("GlobalPosition")?,
            global_rot: v4("GlobalRotation")?,
            local_pos: v4("LocalPosition")?,
            local_rot: v4("LocalRotation")?,
            mirroring: model::mirroring(b),
            index: int("Index"),
            child_count: int("ChildBoneCount"),
            offset: b.offset,
        });
    }
    Ok(out)
}

fn quat(v: [f64; 4]) -> DQuat {
    let q = DQuat::from_xyzw(v[0], v[1], v[2], v[3]);
    if q.length_squared() > 0.0 {
        q.normalize()
    } else {
        DQuat::IDENTITY
    }
}

fn pos(v: [f64; 4]) -> DVec3 {
    DVec3::new(v[0], v[1], v[2])
}

/// Resolve names: the label when it matches the hash, else the built-in dictionary, else
/// `--names`, else `xXXXXXXXX`.
pub struct Resolver {
    extra: HashMap<u32, String>,
}

impl Resolver {
    pub fn new(opts: &ReadOptions) -> Result<Resolver, AnvilError> {
        let extra = match &opts.names {
            Some(p) => {
                let t = std::fs::read_to_string(p).map_err(|e| AnvilError::Invalid {
                    file: p.display().to_string(),
                    message: format!("cannot read the names file: {e}"),
                })?;
                names::parse_names(&t)
            }
            None => HashMap::new(),
        };
        Ok(Resolver { extra })
    }
    pub fn name(&self, hash: u32, label: Option<&str>) -> String {
        if let Some(l) = label {
            if names::hash(l) == hash {
                return l.to_string();
            }
        }
        if let Some(n) = names::builtin().get(&hash) {
            return n.to_string();
        }
        if let Some(n) = self.extra.get(&hash) {
            return n.clone();
        }
        names::unknown_name(hash)
    }
}

/// Read bytes into the IR.
pub fn read(bytes: &[u8], file: &str, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, AnvilError> {
    let (text, encoding) = decode(bytes, file)?;
    let tree = Doc::parse(&text).map_err(|e| AnvilError::at(file, &text, e.offset, format!("XML error: {}", e.message)))?;
    let form = form_of(&tree);
    let recs = bone_recs(&tree, form, file, &text)?;
    let resolver = Resolver::new(opts)?;
    let by_id: HashMap<u64, usize> = recs.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    if by_id.len() != recs.len() {
        let mut seen = HashSet::new();
        let dup = recs.iter().find(|r| !seen.insert(r.id)).expect("a duplicate");
        return Err(AnvilError::at(file, &text, dup.offset, format!("two bones have the ID {}; IDs must be unique", dup.id)));
    }
    for r in &recs {
        for (what, t) in [("parent", r.parent), ("MirrorBone", r.mirror)] {
            if let Some(t) = t {
                if !by_id.contains_key(&t) {
                    return Err(AnvilError::at(
                        file,
                        &text,
                        r.offset,
                        format!(
                            "bone {} ({}): its {what} link points to ID {t}, which is no bone in this file",
                            r.id,
                            resolver.name(r.hash, r.label.as_deref())
                        ),
                    ));
                }
            }
        }
        if let Some(l) = &r.label {
            if !l.is_empty() && names::hash_of_display(l) != r.hash {
                diag.warn(
                    "anvil-hashname",
                    format!(
                        "bone {}: label \"{l}\" does not hash to {} (CRC32 \"{l}\" = {}); the number rules",
                        r.id,
                        r.hash,
                        names::hash(l)
                    ),
                );
            }
        }
    }
    // Parents before children (depth first from the roots, file order among siblings).
    let n = recs.len();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        match r.parent.map(|p| by_id[&p]) {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(children[i].iter().rev());
    }
    if order.len() != n {
        let inside: HashSet<usize> = order.iter().copied().collect();
        let r = recs.iter().enumerate().find(|(i, _)| !inside.contains(i)).map(|(_, r)| r).expect("one outside");
        return Err(AnvilError::at(
            file,
            &text,
            r.offset,
            format!("bone {} is in a parent cycle (its parent chain never reaches a root)", r.id),
        ));
    }
    // Stored Index / ChildBoneCount must agree with the array.
    let mut desc = vec![0usize; n];
    for &i in order.iter().rev() {
        if let Some(p) = recs[i].parent.map(|p| by_id[&p]) {
            desc[p] += desc[i] + 1;
        }
    }
    let mut disagree = Vec::new();
    for (i, r) in recs.iter().enumerate() {
        if r.index.is_some_and(|x| x != i as i64) || r.child_count.is_some_and(|c| c != desc[i] as i64) {
            disagree.push(resolver.name(r.hash, r.label.as_deref()));
        }
    }
    if !disagree.is_empty() {
        diag.warn(
            "anvil-index",
            format!("stored Index/ChildBoneCount disagree with the bone array for: {} (recomputed on write)", disagree.join(", ")),
        );
    }
    // Globals: stored, or composed from locals.
    let mut global: Vec<Option<(DVec3, DQuat)>> = vec![None; n];
    for &i in &order {
        let r = &recs[i];
        global[i] = match (r.global_pos, r.global_rot) {
            (Some(p), Some(q)) => Some((pos(p), quat(q))),
            _ => match (r.local_pos, r.local_rot, r.parent.map(|p| by_id[&p])) {
                (Some(lp), Some(lr), Some(p)) => global[p].map(|(gp, gq)| (gp + gq * pos(lp), gq * quat(lr))),
                (Some(lp), Some(lr), None) => Some((pos(lp), quat(lr))),
                _ => None,
            },
        };
    }
    let mut sk = Skeleton::new(tree.root.attr("ID").map(|id| format!("Skeleton {id}")).unwrap_or_else(|| "Skeleton".into()));
    let mut bone_of = vec![BoneId(0); n];
    let mut off = Vec::new();
    for &i in &order {
        let r = &recs[i];
        let parent = r.parent.map(|p| by_id[&p]);
        let rest = match (r.local_pos, r.local_rot) {
            (Some(lp), Some(lr)) => {
                let local = Transform::from_rt(quat(lr), pos(lp));
                if let (Some((gp, gq)), Some(p)) = (global[i], parent) {
                    if let Some((pp, pq)) = global[p] {
                        let (ep, eq) = (pp + pq * local.translation, pq * local.rotation);
                        if (ep - gp).length() > 1e-5 || eq.dot(gq).abs() < 1.0 - 1e-9 {
                            off.push(resolver.name(r.hash, r.label.as_deref()));
                        }
                    }
                }
                local
            }
            _ => match (global[i], parent.and_then(|p| global[p])) {
                (Some((gp, gq)), Some((pp, pq))) => Transform::from_rt(pq.inverse() * gq, pq.inverse() * (gp - pp)),
                (Some((gp, gq)), None) => Transform::from_rt(gq, gp),
                _ => {
                    return Err(AnvilError::at(
                        file,
                        &text,
                        r.offset,
                        format!("bone {} has neither Local nor Global position and rotation", r.id),
                    ));
                }
            },
        };
        let name = resolver.name(r.hash, r.label.as_deref());
        let mut b = Bone::new(name, parent.map(|p| bone_of[p]), rest);
        b.ext.set(&AnvilBone { id: r.id, hash: r.hash, mirroring_type: r.mirroring });
        bone_of[i] = sk.push(b);
    }
    if !off.is_empty() {
        diag.warn("anvil-local-global", format!("Local and Global disagree beyond 1e-5 for: {} (Local used)", off.join(", ")));
    }
    for (i, r) in recs.iter().enumerate() {
        if let Some(m) = r.mirror.map(|m| by_id[&m]) {
            if m != i {
                sk.bones[bone_of[i].index()].mirror = Some(bone_of[m]);
            }
        }
    }
    let mut names_seen: HashMap<String, usize> = HashMap::new();
    for b in &mut sk.bones {
        let c = names_seen.entry(b.name.clone()).or_insert(0);
        *c += 1;
        if *c > 1 {
            diag.warn("anvil-duplicate-name", format!("two bones are named {}; the second is called {}.{:03}", b.name, b.name, *c - 1));
            b.name = format!("{}.{:03}", b.name, *c - 1);
        }
    }
    let mut doc = Document::new(FRAME);
    doc.source_format = Some(match form {
        Form::Standard => "anvil".into(),
        Form::Schema => "anvil-schema".into(),
    });
    doc.skeletons.push(sk);
    doc.ext.set(&AnvilSource { form, encoding, text });
    Ok(doc)
}

/// The fresh document a skeleton from another format is written into (the tutorial's layout).
fn template(form: Form) -> Doc {
    let t = match form {
        Form::Standard => "<?xml version=\"1.0\" encoding=\"utf-16\"?>\r\n<?info tool=\"AnvilToolkit\" toolVersion=\"1.3.0\" type=\"0\"?>\r\n<Skeleton ID=\"0\">\r\n  <Value Name=\"SkeletonType\" Type=\"UInt32\">0</Value>\r\n  <List Name=\"Bones\">\r\n  </List>\r\n  <ObjectPtr Name=\"RootBone\" />\r\n  <Vector4 Name=\"RootBoneDefaultLocalPosition\">\r\n    <X>0</X> <Y>0</Y> <Z>0</Z> <W>0</W>\r\n  </Vector4>\r\n  <Quat Name=\"RootBoneDefaultLocalRotation\">\r\n    <X>0</X> <Y>0</Y> <Z>0</Z> <W>1</W>\r\n  </Quat>\r\n  <Reference Name=\"BodyPartMapping\">\r\n    <FileReference Name=\"Value\" IsGlobal=\"0\" Path=\"0\">0</FileReference>\r\n  </Reference>\r\n  <List Name=\"PoseGroups\" />\r\n  <BaseObjectPtr Name=\"IKData\" />\r\n  <ObjectPtr Name=\"COMData\" />\r\n  <Reference Name=\"LookAtDataSkeletonDefinitionDefault\">\r\n    <FileReference Name=\"Value\" IsGlobal=\"0\" Path=\"0\">0</FileReference>\r\n  </Reference>\r\n  <Value Name=\"SkeletonKey\" Type=\"UInt32\">0</Value>\r\n</Skeleton>\r\n",
        Form::Schema => "<?xml version=\"1.0\" encoding=\"utf-8\"?>\r\n<?info tool=\"AnvilToolkit\" toolVersion=\"1.3.0\" type=\"1\"?>\r\n<Object ID=\"0\" Type=\"Skeleton\">\r\n  <Enum Name=\"SkeletonType\" Type=\"SkeletonType\" Value=\"SKELETONTYPE_BIPED\">0</Enum>\r\n  <DynamicSmallArray Name=\"Bones\" Type=\"ObjectPtr\">\r\n  </DynamicSmallArray>\r\n  <ObjectPtr Name=\"RootBone\" PointerType=\"Null\" />\r\n  <Vector4 Name=\"RootBoneDefaultLocalPosition\">( 0, 0, 0, 0 )</Vector4>\r\n  <Quaternion Name=\"RootBoneDefaultLocalRotation\">( 0, 0, 0, 1 )</Quaternion>\r\n  <Reference Name=\"BodyPartMapping\">\r\n    <FileReference Name=\"Value\" IsGlobal=\"0\" Path=\"0\">0</FileReference>\r\n  </Reference>\r\n  <DynamicSmallArray Name=\"PoseGroups\" Type=\"ObjectPtr\" />\r\n  <ObjectPtr Name=\"IKData\" />\r\n  <ObjectPtr Name=\"COMData\" />\r\n  <Reference Name=\"LookAtDataSkeletonDefinitionDefault\">\r\n    <FileReference Name=\"Value\" IsGlobal=\"0\" Path=\"0\">0</FileReference>\r\n  </Reference>\r\n  <Unsigned32 Name=\"SkeletonKey\">0</Unsigned32>\r\n</Object>\r\n",
    };
    Doc::parse(t).expect("the built-in template parses")
}

/// A new bone element in the tutorial's layout ("How to add a bone").
/// A new bone element in the tutorial's layout ("How to add a bone").
pub fn new_bone_elem(form: Form, id: u64, hash: u32, label: &str, indent: &str) -> Elem {
    let inner = format!("{indent}  ");
    let mut b = match form {
        Form::Standard => Elem::new("Bone", &[("ID", &id.to_string())]),
        Form::Schema => Elem::new("ObjectPtr", &[("ID", &id.to_string()), ("Type", "Bone"), ("PointerType", "Inlined")]),
    };
    let field = |b: &mut Elem, e: Elem| {
        b.push_raw(&inner);
        b.push(e);
    };
    let name = match form {
        Form::Standard => Elem::with_text("Value", &[("Name", "Name"), ("Type", "UInt32"), ("HashName", label)], &hash.to_string()),
        Form::Schema => Elem::with_text("Hash32", &[("Name", "BoneID"), ("HashValue", label)], &hash.to_string()),
    };
    field(&mut b, name);
    field(&mut b, model::new_link(form, form.parent_field(), None));
    field(&mut b, model::new_link(form, "MirrorBone", Some(id)));
    field(&mut b, model::new_vec4(form, "Vector4", "GlobalPosition", [0.0; 4]));
    field(&mut b, model::new_vec4(form, form.quat_tag(), "GlobalRotation", [0.0, 0.0, 0.0, 1.0]));
    field(&mut b, model::new_vec4(form, "Vector4", "LocalPosition", [0.0; 4]));
    field(&mut b, model::new_vec4(form, form.quat_tag(), "LocalRotation", [0.0, 0.0, 0.0, 1.0]));
    field(&mut b, model::new_scalar(form, "SolvingPriority", "Byte", "0"));
    field(&mut b, model::new_enum(form, "MirroringType", "BoneMirroringType", model::MIRRORING[5], 5));
    field(
        &mut b,
        match form {
            Form::Standard => Elem::new("List", &[("Name", "BoneModifiers")]),
            Form::Schema => Elem::new("DynamicSmallArray", &[("Name", "Modifiers"), ("Type", "ObjectPtr")]),
        },
    );
    field(&mut b, model::new_enum(form, "WrinkleCategory", "WrinkleCategory", "None", 7));
    field(&mut b, model::new_scalar(form, "WrinkleFactor", "Single", "0"));
    if form == Form::Schema {
        field(&mut b, Elem::with_text("Unsigned8", &[("Name", "Index")], "0"));
        field(&mut b, Elem::with_text("Unsigned8", &[("Name", "ChildBoneCount")], "0"));
    }
    b.push_raw(indent);
    b
}

/// Set a named vector field if present (or add it before `MirroringType`... at the end when absent
/// is not done: the tutorial's Schema example omits Local fields, and they stay omitted).
fn update_vec(b: &mut Elem, form: Form, field: &str, v: [f64; 4]) {
    if let Some(e) = b.named_mut(field) {
        model::set_vec4(e, form, v);
    }
}

fn set_int(b: &mut Elem, field: &str, v: usize) {
    if let Some(e) = b.named_mut(field) {
        if e.text().parse::<usize>().ok() != Some(v) {
            e.set_text(&v.to_string());
        }
    }
}

/// Default MirroringType for a bone with no stored one (the tutorial's conventions).
fn default_mirroring(name: &str, is_root: bool) -> usize {
    if is_root {
        2
    } else if matches!(name, "Hips" | "Spine" | "Pelvis") {
        4
    } else {
        5
    }
}

/// The mirror partner by name: Left ↔ Right.
fn mirror_by_name(name: &str, sk: &Skeleton) -> Option<BoneId> {
    let other = if name.contains("Left") {
        name.replacen("Left", "Right", 1)
    } else if name.contains("Right") {
        name.replacen("Right", "Left", 1)
    } else {
        return None;
    };
    sk.find(&other)
}

/// Write the document's first skeleton in `form`.
pub fn write(doc: &Document, form: Form, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Vec<u8>, AnvilError> {
    let Some(first) = doc.skeletons.first() else {
        return Err(AnvilError::Write("the document has no skeleton".into()));
    };
    let limit = opts.bone_limit.unwrap_or(match form {
        Form::Schema => 255,
        Form::Standard => 65535,
    });
    if first.bones.len() > limit {
        return Err(AnvilError::Write(format!(
            "{} bones but the limit is {limit}{}; remove bones or retarget with --map",
            first.bones.len(),
            if form == Form::Schema && limit == 255 {
                " (Schema-Based Index and ChildBoneCount are Unsigned8, and pre-Unity games index bones with one byte)"
            } else {
                ""
            }
        )));
    }
    if doc.skeletons.len() > 1 {
        diag.loss("anvil-skeletons", format!("{} skeletons: only the first is written", doc.skeletons.len()));
    }
    if !doc.skins.is_empty() || !doc.meshes.is_empty() {
        diag.loss("anvil-skin", "AnvilToolkit skeleton XML holds no mesh or skin weights: they are not written");
    }
    let mut d = Document { skins: Vec::new(), meshes: Vec::new(), skeletons: vec![first.clone()], ..doc.clone() };
    d.convert_frame(FRAME);
    let sk = &d.skeletons[0];
    let world = sk.world_transforms();
    if sk.bones.iter().any(|b| (b.rest.scale - DVec3::ONE).abs().max_element() > 1e-6) {
        diag.loss("anvil-scale", "bone scale is not stored in AnvilToolkit skeletons: dropped");
    }
    let source: Option<AnvilSource> = doc.ext.get();
    let (mut tree, encoding) = match &source {
        Some(s) => {
            let t = Doc::parse(&s.text).map_err(|e| AnvilError::Write(format!("the kept source no longer parses: {}", e.message)))?;
            let enc = if s.form == form {
                s.encoding
            } else if form == Form::Standard {
                Encoding::Utf16Le
            } else {
                Encoding::Utf8
            };
            (crate::convert::convert(&t, s.form, form), enc)
        }
        None => (template(form), if form == Form::Standard { Encoding::Utf16Le } else { Encoding::Utf8 }),
    };
    apply(&mut tree, form, sk, &world, source.is_none());
    Ok(encode(&tree.write(), encoding))
}

/// Make the tree's bones what the IR skeleton says, touching only what differs.
fn apply(tree: &mut Doc, form: Form, sk: &Skeleton, world: &[Transform], fresh: bool) {
    let existing: Vec<(u64, u32)> = model::bones_container(&tree.root)
        .map(|l| {
            l.elems().filter(|e| model::is_bone(e, form)).filter_map(|e| Some((model::id_of(e)?, model::name_of(e, form)?.0))).collect()
        })
        .unwrap_or_default();
    let mut max_id = existing.iter().map(|e| e.0).max().unwrap_or(0);
    // Fresh files count local IDs up from 0xF8000000 as AnvilToolkit's exports do.
    if max_id < 0xF800_0000 && fresh {
        max_id = 0xF800_0000 - 1;
    }
    let mut taken: HashSet<u64> = HashSet::new();
    let mut ids: Vec<u64> = Vec::with_capacity(sk.bones.len());
    for b in &sk.bones {
        let ext: Option<AnvilBone> = b.ext.get();
        let hash = names::hash_of_display(&b.name);
        let by_ext = ext.as_ref().map(|e| e.id).filter(|id| existing.iter().any(|x| x.0 == *id) && !taken.contains(id));
        let by_hash = || existing.iter().find(|x| x.1 == hash && !taken.contains(&x.0)).map(|x| x.0);
        let id = by_ext.or_else(by_hash).or_else(|| ext.as_ref().map(|e| e.id).filter(|id| !taken.contains(id) && *id > 0)).unwrap_or_else(
            || {
                max_id += 1;
                max_id
            },
        );
        max_id = max_id.max(id);
        taken.insert(id);
        ids.push(id);
    }
    let root_indent =
        tree.root.children.iter().find_map(|c| if let Item::Raw(r) = c { Some(r.clone()) } else { None }).unwrap_or_else(|| "\n  ".into());
    let Some(list) = model::bones_container_mut(&mut tree.root) else { return };
    // Current bone elements by ID; everything else in the list stays where it is.
    let mut elems: HashMap<u64, Elem> = HashMap::new();
    let mut order_before: Vec<u64> = Vec::new();
    for e in list.elems() {
        if model::is_bone(e, form) {
            if let Some(id) = model::id_of(e) {
                order_before.push(id);
                elems.insert(id, e.clone());
            }
        }
    }
    let bone_indent = {
        let mut ind = None;
        let mut last_raw = None;
        for c in &list.children {
            match c {
                Item::Raw(r) => last_raw = Some(r.clone()),
                Item::Elem(e) if model::is_bone(e, form) => {
                    ind = last_raw.clone();
                    break;
                }
                _ => {}
            }
        }
        ind.unwrap_or_else(|| format!("{root_indent}  "))
    };
    let n = sk.bones.len();
    let mut desc = vec![0usize; n];
    for i in (0..n).rev() {
        if let Some(p) = sk.bones[i].parent {
            desc[p.index()] += desc[i] + 1;
        }
    }
    let mut new_elems: Vec<Elem> = Vec::with_capacity(n);
    let mut dirty = vec![false; n];
    let prev_parent: HashMap<u64, Option<u64>> =
        elems.iter().map(|(id, e)| (*id, e.named(form.parent_field()).and_then(|p| model::link(p, form).ok().flatten()))).collect();
    for (i, b) in sk.bones.iter().enumerate() {
        let id = ids[i];
        let hash = names::hash_of_display(&b.name);
        let is_new = !elems.contains_key(&id);
        let mut e = elems.remove(&id).unwrap_or_else(|| new_bone_elem(form, id, hash, &b.name, &bone_indent));
        if model::name_of(&e, form).map(|x| x.0) != Some(hash) {
            model::set_name(&mut e, form, hash, &b.name);
        }
        let parent = b.parent.map(|p| ids[p.index()]);
        if let Some(p) = e.named_mut(form.parent_field()) {
            if model::link(p, form).ok().flatten() != parent {
                model::set_link(p, form, parent);
            }
        }
        let mirror = b.mirror.or_else(|| if is_new { mirror_by_name(&b.name, sk) } else { None }).map(|m| ids[m.index()]);
        if let Some(m) = e.named_mut("MirrorBone") {
            let cur = model::link(m, form).ok().flatten();
            let want = mirror.unwrap_or(id);
            // A self link and no link both mean "no mirror"; keep whichever the file has.
            if cur != Some(want) && !(mirror.is_none() && (cur.is_none() || cur == Some(id))) {
                model::set_link(m, form, Some(want));
            }
        }
        // Only a bone whose own rest changed (or whose parent or an ancestor did) is rewritten:
        // everything else keeps its text, Global included.
        let file_local = match (
            e.named("LocalPosition").and_then(|v| model::vec4(v, form)),
            e.named("LocalRotation").and_then(|v| model::vec4(v, form)),
        ) {
            (Some(p), Some(q)) => Some((pos(p), quat(q))),
            _ => None,
        };
        let parent_changed = !is_new && prev_parent.get(&id).copied().flatten() != parent;
        let local_changed = match file_local {
            Some((p, q)) => {
                (p - b.rest.translation).abs().max_element() > 1e-9 * p.abs().max_element().max(1.0)
                    || q.dot(b.rest.rotation).abs() < 1.0 - 1e-12
            }
            None => is_new,
        };
        dirty[i] = is_new || parent_changed || local_changed || b.parent.is_some_and(|p| dirty[p.index()]);
        if form == Form::Schema {
            for field in ["Index", "ChildBoneCount"] {
                if e.named(field).is_none() {
                    let ind =
                        e.children.iter().rev().find_map(|c| if let Item::Raw(r) = c { Some(r.clone()) } else { None }).unwrap_or_default();
                    let close = e.children.pop();
                    e.push_raw(&format!(
                        "{}  ",
                        ind.trim_end_matches(' ').to_string() + &" ".repeat(ind.len() - ind.trim_end_matches(' ').len())
                    ));
                    e.push(Elem::with_text("Unsigned8", &[("Name", field)], "0"));
                    if let Some(Item::Raw(r)) = close {
                        e.push_raw(&r);
                    }
                }
            }
        }
        set_int(&mut e, "Index", i);
        set_int(&mut e, "ChildBoneCount", desc[i]);
        if !dirty[i] {
            new_elems.push(e);
            continue;
        }
        let w = world[i];
        let keep_w = |e: &Elem, f: &str| e.named(f).and_then(|v| model::vec4(v, form)).map(|v| v[3]).unwrap_or(0.0);
        let gw = keep_w(&e, "GlobalPosition");
        let lw = keep_w(&e, "LocalPosition");
        let g = |q: DQuat| [q.x, q.y, q.z, q.w];
        // Keep the stored quaternion's sign when it is the same rotation.
        let same_sign = |e: &Elem, f: &str, q: DQuat| -> DQuat {
            match e.named(f).and_then(|v| model::vec4(v, form)) {
                Some(o) if DQuat::from_xyzw(o[0], o[1], o[2], o[3]).dot(q) < 0.0 => -q,
                _ => q,
            }
        };
        let gq = same_sign(&e, "GlobalRotation", w.rotation);
        let lq = same_sign(&e, "LocalRotation", b.rest.rotation);
        update_vec(&mut e, form, "GlobalPosition", [w.translation.x, w.translation.y, w.translation.z, gw]);
        update_vec(&mut e, form, "GlobalRotation", g(gq));
        update_vec(&mut e, form, "LocalPosition", [b.rest.translation.x, b.rest.translation.y, b.rest.translation.z, lw]);
        update_vec(&mut e, form, "LocalRotation", g(lq));
        if is_new {
            let ext: Option<AnvilBone> = b.ext.get();
            let mt =
                ext.and_then(|x| x.mirroring_type).map(|v| v as usize).unwrap_or_else(|| default_mirroring(&b.name, b.parent.is_none()));
            if let Some(f) = e.named_mut("MirroringType") {
                f.set_text(&mt.to_string());
                let vn = model::MIRRORING.get(mt).copied().unwrap_or("BONEMIRRORING_NONE");
                match form {
                    Form::Standard => f.set_attr("ValueName", vn),
                    Form::Schema => f.set_attr("Value", vn),
                }
            }
        }
        new_elems.push(e);
    }
    // Same bones as the file: keep the file's order (the array order is the file's business; only
    // Index follows it). Otherwise the IR's parents-first order.
    let same_set = {
        let mut a = order_before.clone();
        let mut b = ids.clone();
        a.sort_unstable();
        b.sort_unstable();
        a == b
    };
    if same_set && !order_before.is_empty() {
        let pos: HashMap<u64, usize> = order_before.iter().enumerate().map(|(i, id)| (*id, i)).collect();
        for (k, e) in new_elems.iter_mut().enumerate() {
            set_int(e, "Index", pos[&ids[k]]);
        }
        let mut by_id: HashMap<u64, Elem> = ids.iter().copied().zip(new_elems).collect();
        for c in list.children.iter_mut() {
            if let Item::Elem(e) = c {
                if model::is_bone(e, form) {
                    if let Some(id) = model::id_of(e) {
                        if let Some(n) = by_id.remove(&id) {
                            *e = n;
                        }
                    }
                }
            }
        }
    } else {
        // Rebuild the list: non-bone children first as they were, then the bones.
        let trailing = match list.children.last() {
            Some(Item::Raw(r)) => r.clone(),
            _ => root_indent.clone(),
        };
        let mut kept: Vec<Item> = Vec::new();
        let mut prev_raw: Option<String> = None;
        for c in std::mem::take(&mut list.children) {
            match c {
                Item::Elem(e) if model::is_bone(&e, form) => prev_raw = None,
                Item::Raw(r) => {
                    if let Some(p) = prev_raw.take() {
                        kept.push(Item::Raw(p));
                    }
                    prev_raw = Some(r);
                }
                other => {
                    if let Some(p) = prev_raw.take() {
                        kept.push(Item::Raw(p));
                    }
                    kept.push(other);
                }
            }
        }
        for k in kept {
            match k {
                Item::Raw(r) => list.push_raw(&r),
                Item::Elem(e) => list.push(e),
            }
        }
        for e in new_elems {
            list.push_raw(&bone_indent);
            list.push(e);
        }
        list.push_raw(&trailing);
    }
    // Skeleton-level links and values.
    let root = sk.bones.iter().position(|b| b.parent.is_none());
    if let Some(r) = tree.root.named_mut("RootBone") {
        let want = root.map(|r| ids[r]);
        if model::link(r, form).ok().flatten() != want {
            model::set_link(r, form, want);
        }
    }
    if fresh {
        if let Some(r) = root {
            let b = &sk.bones[r];
            let t = b.rest.translation;
            let q = b.rest.rotation;
            if let Some(e) = tree.root.named_mut("RootBoneDefaultLocalPosition") {
                model::set_vec4(e, form, [t.x, t.y, t.z, 0.0]);
            }
            if let Some(e) = tree.root.named_mut("RootBoneDefaultLocalRotation") {
                model::set_vec4(e, form, [q.x, q.y, q.z, q.w]);
            }
            let addon =
                matches!(b.name.as_str(), "Spine" | "Spine1" | "Spine2" | "Hips" | "Pelvis" | "Neck" | "Head" | "LeftHand" | "RightHand");
            let st = if addon { 8 } else { 0 };
            if let Some(e) = tree.root.named_mut("SkeletonType") {
                e.set_text(&st.to_string());
                if form == Form::Schema {
                    e.set_attr("Value", crate::convert::SKELETON_TYPES[st]);
                }
            }
        }
        let key = names::hash(&sk.bones.iter().map(|b| b.name.as_str()).collect::<Vec<_>>().join(","));
        if let Some(e) = tree.root.named_mut("SkeletonKey") {
            e.set_text(&key.to_string());
        }
        tree.root.set_attr("ID", &(ids.iter().copied().min().unwrap_or(0xF800_0000).saturating_sub(1)).to_string());
    }
}
