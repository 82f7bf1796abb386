//! Bones read from a file → the IR document: names, links and transforms checked and composed,
//! the warnings the model's rules call for, the `anvil` extension filled in.

use crate::check::{list, parents_first_or_cycle};
use crate::error::{AnvilError, Result};
use crate::ext::{bone_ext, fingerprint, shapes_of, spans_json, Layout, NAMESPACE, RUN_LOCAL_SOURCE, RUN_LOCAL_SPANS};
use crate::model::{names, Form, IdHash};
use crate::names::{bone_hash, parse_hex_name, Names};
use crate::pose::{compose, normalize, pose_distance, relative, rest_from, Pose, ANVIL_FRAME, LOCAL_GLOBAL_TOLERANCE};
use serde_json::{Map, Value as Json};
use skelport_ir::{Bone, BoneId, DQuat, DVec3, Diagnostics, Document, Skeleton, Transform};
use std::collections::HashMap;

/// What the IR needs of one bone, however it was read.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct BoneData {
    pub id: u64,
    pub hash: u32,
    pub label: Option<String>,
    pub parent: Option<u64>,
    pub mirror: Option<u64>,
    pub global: Option<Pose>,
    pub local: Option<Pose>,
    /// A stored Index: `Some(None)` when present but not a number.
    pub index: Option<Option<usize>>,
    /// A stored ChildBoneCount.
    pub child_count: Option<Option<usize>>,
    /// Classes of modifiers whose Owner link is not this bone.
    pub bad_owners: Vec<String>,
    /// How many bone modifiers the bone has.
    pub modifiers: usize,
    /// The bone element's bytes in the decoded text: from its start tag's `<` to just after its
    /// end tag (the writer's verbatim fragment of the bone).
    pub span: (u32, u32),
}

/// How a skeleton was read, for the extension.
pub(crate) struct ReadInfo {
    pub form: Form,
    pub bytes: crate::text::ByteForm,
    pub text: String,
}

/// The IR document of bones read from a file.
pub(crate) fn build_document(
    bones: Vec<BoneData>,
    info: ReadInfo,
    names: &Names,
    file: &str,
    stem: &str,
    defer: bool,
    diag: &mut Diagnostics,
) -> Result<Document> {
    let n = bones.len();
    let display: Vec<String> = bones.iter().map(|b| names.display(b.hash, b.label.as_deref())).collect();
    {
        let mut by_name: HashMap<&str, usize> = HashMap::with_capacity(n);
        for (i, d) in display.iter().enumerate() {
            if let Some(j) = by_name.insert(d, i) {
                return Err(AnvilError::Skeleton {
                    file: file.into(),
                    message: format!("bones {j} and {i} have the same name '{d}' (hash {})", bones[i].hash),
                });
            }
        }
    }
    let mut id_map: HashMap<u64, usize, IdHash> = HashMap::with_capacity_and_hasher(n, Default::default());
    id_map.extend(bones.iter().enumerate().map(|(i, b)| (b.id, i)));
    for (i, b) in bones.iter().enumerate() {
        for (fname, t) in [(names::FATHER, b.parent), (names::MIRROR, b.mirror)] {
            if let Some(t) = t {
                if t != 0 && !id_map.contains_key(&t) {
                    return Err(AnvilError::Skeleton {
                        file: file.into(),
                        message: format!("bone '{}': {fname} points to ID {t}, which is not a bone", display[i]),
                    });
                }
            }
        }
    }
    let parents: Vec<Option<usize>> = bones.iter().map(|b| b.parent.and_then(|p| id_map.get(&p).copied())).collect();
    let order = parents_first_or_cycle(&parents, &display, file)?;
    let mut globals: Vec<Option<Pose>> = vec![None; n];
    let mut rests: Vec<Pose> = vec![(DVec3::ZERO, DQuat::IDENTITY); n];
    let mut missing = Vec::new();
    let mut mismatched = Vec::new();
    for &i in &order {
        let b = &bones[i];
        let pg = parents[i].and_then(|p| globals[p]);
        let rest = match rest_from(b.global, b.local, parents[i].is_none(), pg) {
            Some(r) => r,
            None => {
                missing.push(display[i].clone());
                (DVec3::ZERO, DQuat::IDENTITY)
            }
        };
        rests[i] = rest;
        globals[i] = b.global.map(|(p, q)| (p, normalize(q))).or_else(|| Some(pg.map(|pg| compose(pg, rest)).unwrap_or(rest)));
        if let (Some(pg), Some(g), Some(l)) = (pg, b.global, b.local) {
            let expect = relative(pg, (g.0, normalize(g.1)));
            let d = pose_distance(expect, (l.0, normalize(l.1)));
            if d > LOCAL_GLOBAL_TOLERANCE {
                mismatched.push(format!("{} ({d:.2e})", display[i]));
            }
        }
    }
    if !missing.is_empty() {
        diag.warn(
            "anvil.missing-transform",
            format!("{} bone(s) have no usable position/rotation (identity used): {}", missing.len(), list(&missing)),
        );
    }
    if !mismatched.is_empty() {
        diag.warn(
            "anvil.local-global-mismatch",
            format!(
                "{} bone(s) whose Local is not inverse(parent Global) × Global within {LOCAL_GLOBAL_TOLERANCE:e} (both kept as written): {}",
                mismatched.len(),
                list(&mismatched)
            ),
        );
    }
    let mut bad_labels = Vec::new();
    for (i, b) in bones.iter().enumerate() {
        if let Some(l) = b.label.as_deref() {
            if bone_hash(l) != b.hash && parse_hex_name(l) != Some(b.hash) {
                bad_labels.push(format!("{} (label '{l}')", display[i]));
            }
        }
    }
    if !bad_labels.is_empty() {
        diag.warn(
            "anvil.hash-label",
            format!(
                "{} bone(s) whose HashName/HashValue is not their hash's name (the number rules): {}",
                bad_labels.len(),
                list(&bad_labels)
            ),
        );
    }
    // All descendants, accumulated children-first along the parents-first order (no allocation
    // per bone).
    let mut counts = vec![0usize; n];
    for &i in order.iter().rev() {
        if let Some(p) = parents[i] {
            counts[p] += counts[i] + 1;
        }
    }
    let mut bad_index = Vec::new();
    for (i, b) in bones.iter().enumerate() {
        if let Some(v) = b.index {
            if v != Some(i) {
                bad_index.push(format!("{}: Index {} (position {i})", display[i], v.map(|v| v.to_string()).unwrap_or("?".into())));
            }
        }
        if let Some(v) = b.child_count {
            if v != Some(counts[i]) {
                bad_index.push(format!(
                    "{}: ChildBoneCount {} ({} descendants)",
                    display[i],
                    v.map(|v| v.to_string()).unwrap_or("?".into()),
                    counts[i]
                ));
            }
        }
    }
    if !bad_index.is_empty() {
        diag.warn(
            "anvil.index",
            format!(
                "{} stored Index/ChildBoneCount value(s) disagree with the hierarchy (recomputed on write): {}",
                bad_index.len(),
                list(&bad_index)
            ),
        );
    }
    let bad_owner: Vec<String> = bones
        .iter()
        .enumerate()
        .flat_map(|(i, b)| b.bad_owners.iter().map(move |c| (i, c)))
        .map(|(i, c)| format!("{c} on '{}'", display[i]))
        .collect();
    let needs_rewrite = !bad_index.is_empty() || !bad_owner.is_empty();
    if !bad_owner.is_empty() {
        diag.warn(
            "anvil.owner",
            format!("modifier Owner links that do not point to their bone (rewritten on write): {}", list(&bad_owner)),
        );
    }

    // Deferred, each bone keeps its ID alone (what the writer matches bones by) and the
    // skeleton the elements' places, from which `ext::complete` cuts the values if the document
    // goes to another writer after all.
    let mut shapes = (!defer).then(|| shapes_of(bones.iter().map(|b| &info.text[b.span.0 as usize..b.span.1 as usize])));
    let mut sk = Skeleton::new(stem);
    sk.bones.reserve(n);
    for (i, (b, d)) in bones.iter().zip(display).enumerate() {
        let (t, r) = rests[i];
        let mut bone = Bone::new(d, parents[i].map(BoneId::from_index), Transform::from_rt(r, t));
        bone.mirror = b.mirror.filter(|m| *m != b.id).and_then(|m| id_map.get(&m)).map(|&m| BoneId::from_index(m));
        let ext = match &shapes {
            Some(s) => bone_ext(b.id, s.shape[i] as usize, s.values(i)),
            None => Json::from(b.id),
        };
        bone.ext.set_raw(NAMESPACE, ext);
        sk.bones.push(bone);
    }
    if order.iter().enumerate().any(|(k, &i)| k != i) {
        sk.sort_parents_first()
            .map_err(|name| AnvilError::Skeleton { file: file.into(), message: format!("bone '{name}' is its own ancestor") })?;
    }
    let fp = fingerprint(&sk);
    let mut e = Map::new();
    e.insert("form".into(), serde_json::to_value(info.form).unwrap_or(Json::Null));
    e.insert("bytes".into(), serde_json::to_value(info.bytes).unwrap_or(Json::Null));
    // A file whose stored Index/ChildBoneCount/Owner disagree is corrected on write, so it must
    // not be re-emitted verbatim.
    e.insert("fingerprint".into(), Json::String(if needs_rewrite { String::new() } else { fp }));
    if let Some(s) = &mut shapes {
        let layout = Layout::of_text(&info.text, bones.iter().map(|b| b.span)).with_order(bones.iter().map(|b| b.id).collect());
        e.insert("layout".into(), layout.to_json());
        e.insert("pieces".into(), std::mem::take(&mut s.pieces));
        e.insert("shapes".into(), std::mem::take(&mut s.shapes));
    } else {
        sk.ext.set_raw(RUN_LOCAL_SPANS, spans_json(bones.iter().map(|b| (b.id, b.span))));
    }
    e.insert("modifiers".into(), Json::from(bones.iter().map(|b| b.modifiers).sum::<usize>()));
    sk.ext.set_raw(NAMESPACE, Json::Object(e));
    // The text itself, for a write in this run: it is not carried into files (run-local), and
    // spares that write checking and joining every fragment.
    sk.ext.set_raw(RUN_LOCAL_SOURCE, Json::String(info.text));
    let mut doc = Document::new(ANVIL_FRAME);
    doc.source_format = Some(info.form.dialect().format_name.into());
    doc.skeletons.push(sk);
    Ok(doc)
}
