//! Model ↔ IR: checks on read, the IR document, writing an IR document back (verbatim when
//! unchanged, patched when edited, generated when it comes from another format).

use crate::error::{AnvilError, Result};
use crate::model::*;
use crate::names::{bone_hash, hash_of_display, hex_name, mirror_name, parse_hex_name, Names};
use crate::text::Txt;
use serde_json::{Map, Value as Json};
use skelport_ir::{Axis, Bone, BoneId, DQuat, DVec3, Diagnostics, Document, Frame, Handedness, Skeleton, Transform};
use std::collections::{HashMap, HashSet};

/// AnvilNext's frame: Z up, metres (1 world unit = 1 m), right-handed. Characters face −Y, as in
/// 3ds Max (Ubisoft's authoring tool) and Blender; this is an inference, see docs/formats/anvil.md.
pub const ANVIL_FRAME: Frame = Frame { up: Axis::PosZ, forward: Axis::NegY, handedness: Handedness::Right, metres_per_unit: 1.0 };

/// The extension namespace.
pub const NAMESPACE: &str = "anvil";

/// The first local object ID AnvilToolkit hands out inside a file (0xF8000000); generated files
/// number the skeleton and its bones from here.
pub const FIRST_LOCAL_ID: u64 = 0xF800_0000;

/// Tolerance for reporting Local ≠ inverse(parent Global) × Global.
pub const LOCAL_GLOBAL_TOLERANCE: f64 = 1e-5;

pub(crate) type Pose = (DVec3, DQuat);

fn compose(parent: Pose, local: Pose) -> Pose {
    (parent.0 + parent.1 * local.0, parent.1 * local.1)
}

fn relative(parent: Pose, global: Pose) -> Pose {
    let inv = parent.1.inverse();
    (inv * (global.0 - parent.0), inv * global.1)
}

fn pose_distance(a: Pose, b: Pose) -> f64 {
    let dp = (a.0 - b.0).abs().max_element();
    // q and -q are the same rotation.
    let dq = (a.1 - b.1).length().min((a.1 + b.1).length());
    dp.max(dq)
}

/// Whether two poses are the same to the engine ([`same_number`] on every component; `q` and
/// `-q` are the same rotation).
fn same_pose(stored: Pose, computed: Pose) -> bool {
    let (a, b) = (stored.0.to_array(), computed.0.to_array());
    let (q, r) = (stored.1.to_array(), computed.1.to_array());
    (0..3).all(|k| same_number(a[k], b[k])) && ((0..4).all(|k| same_number(q[k], r[k])) || (0..4).all(|k| same_number(q[k], -r[k])))
}

fn normalize(q: DQuat) -> DQuat {
    let l = q.length();
    if l > 0.0 && l.is_finite() {
        q / l
    } else {
        DQuat::IDENTITY
    }
}

/// What an AnvilToolkit file holds of each bone of an IR skeleton (already in [`ANVIL_FRAME`]),
/// as the engine composes it: `Global = parent Global ∘ Local`, rigid (no scale).
pub(crate) struct EnginePoses {
    /// Each bone's world translation and rotation (its world scale dropped).
    pub global: Vec<Pose>,
    /// Relative to the parent's Global (roots: their Global). Where the parent's world scale is
    /// exactly 1 this is the IR rest itself, untouched; under a scaled parent it is derived from
    /// the Globals, so every head stays where the source puts it (an unscaled Local would move
    /// the bones below a parent scaled ×100 by metres).
    pub local: Vec<Pose>,
    /// Bones whose world scale is not 1 (beyond float noise such as 0.99999994), and the scale.
    pub scaled: Vec<(usize, DVec3)>,
}

/// A world scale this close to 1 (relative) is float noise, not a scale.
pub const SCALE_NOISE: f64 = 1e-5;

pub(crate) fn engine_poses(sk: &Skeleton) -> EnginePoses {
    let world = sk.world_transforms();
    let global: Vec<Pose> = world.iter().map(|w| (w.translation, normalize(w.rotation))).collect();
    let local = sk
        .bones
        .iter()
        .enumerate()
        .map(|(i, b)| match b.parent {
            Some(p) if world[p.index()].scale != DVec3::ONE => relative(global[p.index()], global[i]),
            Some(_) => (b.rest.translation, normalize(b.rest.rotation)),
            None => global[i],
        })
        .collect();
    let scaled = world
        .iter()
        .enumerate()
        .filter(|(_, w)| (w.scale - DVec3::ONE).abs().max_element() > SCALE_NOISE)
        .map(|(i, w)| (i, w.scale))
        .collect();
    EnginePoses { global, local, scaled }
}

/// The `anvil.scale` loss for the bones of `poses.scaled`, if any.
fn report_scale(sk: &Skeleton, poses: &EnginePoses, diag: &mut Diagnostics) {
    if poses.scaled.is_empty() {
        return;
    }
    let shown: Vec<String> = poses
        .scaled
        .iter()
        .map(|&(i, s)| {
            let s = if (s.x - s.y).abs() <= SCALE_NOISE * s.x.abs() && (s.x - s.z).abs() <= SCALE_NOISE * s.x.abs() {
                format!("{:.6}", s.x)
            } else {
                format!("{:.6}, {:.6}, {:.6}", s.x, s.y, s.z)
            };
            format!("{} (×{})", sk.bones[i].name, s.trim_end_matches('0').trim_end_matches('.'))
        })
        .collect();
    diag.loss(
        "anvil.scale",
        format!(
            "AnvilToolkit bones have no scale; {} bone(s) have a world scale other than 1, dropped (their heads and orientations are kept: Local is written to compose to the source's Global): {}",
            shown.len(),
            list(&shown)
        ),
    );
}

/// A bone's rest transform as the IR holds it: roots their Global, others their Local (or, when a
/// file lacks Local, the one computed from the Globals).
fn bone_rest(b: &Object, is_root: bool, parent_global: Option<Pose>) -> Option<Pose> {
    rest_from(b.global_pose(), b.local_pose(), is_root, parent_global)
}

fn rest_from(global: Option<Pose>, local: Option<Pose>, is_root: bool, parent_global: Option<Pose>) -> Option<Pose> {
    let rest = if is_root {
        global.or(local)
    } else {
        local.or_else(|| match (parent_global, global) {
            (Some(pg), Some(g)) => Some(relative(pg, g)),
            _ => None,
        })
    };
    rest.map(|(p, q)| (p, normalize(q)))
}

/// Check a model: unique IDs, every link resolves, parents are bones, names resolve uniquely.
/// Returns the display name of every bone.
pub fn check(model: &AnvilSkeleton, names: &Names, file: &str) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    collect_ids(&model.root, &mut ids);
    let mut seen = HashSet::with_capacity(ids.len());
    for id in &ids {
        if !seen.insert(*id) {
            return Err(AnvilError::Skeleton { file: file.into(), message: format!("two objects have the ID {id}") });
        }
    }
    let n = model.bone_count();
    let mut display = Vec::with_capacity(n);
    let mut by_name: HashMap<String, usize> = HashMap::with_capacity(n);
    for i in 0..n {
        let b = model.bone(i);
        let Some(h) = b.bone_hash() else {
            let (line, column) = model.pos_of(model.bone_items()[i].src);
            return Err(AnvilError::Structure {
                file: file.into(),
                line,
                column,
                message: format!("bone {} (ID {}) has no BoneID/Name hash", i, b.id.unwrap_or(0)),
            });
        };
        let d = names.display(h, b.bone_label());
        if let Some(j) = by_name.insert(d.clone(), i) {
            return Err(AnvilError::Skeleton {
                file: file.into(),
                message: format!("bones {j} and {i} have the same name '{d}' (hash {h})"),
            });
        }
        display.push(d);
    }
    let bone_ids = model.id_map();
    // Every link resolves.
    let mut err: Option<AnvilError> = None;
    let mut check_link = |owner: &str, field: &str, l: &Link, src: Option<SrcRef>| {
        if err.is_some() || l.id == 0 || seen.contains(&l.id) {
            return;
        }
        let (line, column) = model.pos_of(src);
        err = Some(AnvilError::DanglingLink {
            file: file.into(),
            line,
            column,
            message: format!("{owner}: {field} points to ID {}, which no object in this file has", l.id),
        });
    };
    for f in &model.root.fields {
        if f.name() == names::BONES {
            continue;
        }
        let mut single = Object::new("Skeleton", None);
        single.fields.push(f.clone());
        single.for_each_link(&mut |field, l, src| check_link("the skeleton", field, l, src.or(f.src)));
    }
    for (i, item) in model.bone_items().iter().enumerate() {
        let b = model.bone(i);
        let owner = format!("bone '{}'", display[i]);
        b.for_each_link(&mut |field, l, src| check_link(&owner, field, l, src.or(item.src)));
    }
    if let Some(e) = err {
        return Err(e);
    }
    // Parents and mirrors must be bones; RootBone too.
    for (i, item) in model.bone_items().iter().enumerate() {
        let b = model.bone(i);
        for (fname, target) in [(names::FATHER, b.bone_parent()), (names::MIRROR, b.bone_mirror())] {
            if let Some(t) = target {
                if t != 0 && !bone_ids.contains_key(&t) {
                    let (line, column) = model.pos_of(b.field(fname).and_then(|f| f.src).or(item.src));
                    return Err(AnvilError::Structure {
                        file: file.into(),
                        line,
                        column,
                        message: format!("bone '{}': {fname} points to ID {t}, which is not a bone", display[i]),
                    });
                }
            }
        }
    }
    if let Some(r) = model.root_bone() {
        if r != 0 && !bone_ids.contains_key(&r) {
            return Err(AnvilError::Skeleton { file: file.into(), message: format!("RootBone points to ID {r}, which is not a bone") });
        }
    }
    Ok(display)
}

/// A 64-bit fingerprint of what the IR holds of a skeleton, to tell whether a document was
/// edited since it was read. It takes a 64-bit word per step (a 65,535-bone skeleton is 6 MB of
/// words, which a byte at a time would be slow to hash on each read and write; docs/performance.md
/// has the figure): `h = (rotl(h, 23) ^ w) ×
/// K`. Each step is a bijection of the state for a given word and injective in the word for a
/// given state, so any edit that changes one word (one coordinate, one link, one name chunk) always
/// changes the result; a collision needs several words changed at once by chance (~2⁻⁶⁴). Names
/// go in as their length, then 8-byte chunks (the last zero-padded).
pub fn fingerprint(sk: &Skeleton) -> String {
    struct H(u64);
    impl H {
        #[inline]
        fn u64(&mut self, w: u64) {
            self.0 = (self.0.rotate_left(23) ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        fn bytes(&mut self, b: &[u8]) {
            self.u64(b.len() as u64);
            let mut chunks = b.chunks_exact(8);
            for c in &mut chunks {
                self.u64(u64::from_le_bytes(c.try_into().expect("8 bytes")));
            }
            let rest = chunks.remainder();
            if !rest.is_empty() {
                let mut last = [0u8; 8];
                last[..rest.len()].copy_from_slice(rest);
                self.u64(u64::from_le_bytes(last));
            }
        }
        fn f(&mut self, v: f64) {
            self.u64(v.to_bits());
        }
    }
    let mut h = H(0xcbf2_9ce4_8422_2325);
    h.u64(sk.bones.len() as u64);
    for b in &sk.bones {
        h.bytes(b.name.as_bytes());
        h.u64(b.parent.map(|p| u64::from(p.raw())).unwrap_or(u64::MAX));
        h.u64(b.mirror.map(|p| u64::from(p.raw())).unwrap_or(u64::MAX));
        let t = &b.rest;
        for v in [t.translation.x, t.translation.y, t.translation.z, t.rotation.x, t.rotation.y, t.rotation.z, t.rotation.w] {
            h.f(v);
        }
        for v in [t.scale.x, t.scale.y, t.scale.z] {
            h.f(v);
        }
        h.u64(bone_ext_id(b).unwrap_or(u64::MAX));
    }
    // Fold the high bits down so the printed value depends on all of them evenly.
    let x = h.0 ^ (h.0 >> 32);
    format!("{x:016x}")
}

/// The Anvil ID stored on an IR bone.
///
/// The extension is the bare ID (`"anvil": 1091164575`): a JSON object per bone was three more
/// allocations each for a 65,535-bone file. `{"id": N}`, what earlier versions stored, is still
/// read.
pub fn bone_ext_id(b: &Bone) -> Option<u64> {
    match b.ext.raw(NAMESPACE)? {
        Json::Number(n) => n.as_u64(),
        // A scan of the one-entry object: `get` would hash the key with SipHash.
        Json::Object(m) => m.iter().find(|(k, _)| k.as_str() == "id")?.1.as_u64(),
        _ => None,
    }
}

/// The hasher for object IDs: rustc's FxHash (a multiply per `u64`), as the hand-written one it
/// replaced. IDs come from the file, so a crafted file could choose colliding ones and slow its
/// own read; real files hold the engine's 64-bit IDs, for which SipHash would only cost time.
pub type IdHash = rustc_hash::FxBuildHasher;

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
}

/// How a skeleton was read, for the extension.
pub(crate) struct ReadInfo {
    pub form: Form,
    pub bytes: crate::text::ByteForm,
    pub text: String,
}

/// Build the IR document of a model (checked with [`check`]). Warnings go to `diag`; `stem`
/// names the skeleton.
///
/// There is one reading path into the IR: the model is written as text in its own form (its
/// source byte for byte when unedited, the edits included when not) and read by the reader the
/// `Format` impls use, so a model and a file give the same document.
pub fn to_document(model: AnvilSkeleton, names: &Names, file: &str, stem: &str, diag: &mut Diagnostics) -> Result<Document> {
    check(&model, names, file)?;
    let text = model.to_text(model.form)?;
    crate::read::read_decoded(text, model.bytes, names, file, stem, diag)
}

/// The IR document of bones read from a file.
pub(crate) fn build_document(
    bones: Vec<BoneData>,
    info: ReadInfo,
    names: &Names,
    file: &str,
    stem: &str,
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
    let order = parents_first_order(&parents).ok_or_else(|| {
        let bad = cycle_member(&parents);
        AnvilError::Skeleton { file: file.into(), message: format!("bone '{}' is its own ancestor (a FatherBone cycle)", display[bad]) }
    })?;
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

    let mut sk = Skeleton::new(stem);
    sk.bones.reserve(n);
    for (i, (b, d)) in bones.iter().zip(display).enumerate() {
        let (t, r) = rests[i];
        let mut bone = Bone::new(d, parents[i].map(BoneId::from_index), Transform::from_rt(r, t));
        bone.mirror = b.mirror.filter(|m| *m != b.id).and_then(|m| id_map.get(&m)).map(|&m| BoneId::from_index(m));
        bone.ext.set_raw(NAMESPACE, Json::from(b.id));
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
    e.insert("source".into(), Json::String(info.text));
    e.insert("modifiers".into(), Json::from(bones.iter().map(|b| b.modifiers).sum::<usize>()));
    sk.ext.set_raw(NAMESPACE, Json::Object(e));
    let mut doc = Document::new(ANVIL_FRAME);
    doc.source_format = Some(info.form.dialect().format_name.into());
    doc.skeletons.push(sk);
    Ok(doc)
}

fn list(v: &[String]) -> String {
    if v.len() <= 12 {
        v.join(", ")
    } else {
        format!("{}, … and {} more", v[..12].join(", "), v.len() - 12)
    }
}

/// The bones parents first: as they are when they already are, else a depth-first pre-order
/// from the roots (`skelport_ir::proc::parents_first`); `None` when some bones are on a cycle.
pub(crate) fn parents_first_order(parents: &[Option<usize>]) -> Option<Vec<usize>> {
    // Fast path: already parents-first.
    if parents.iter().enumerate().all(|(i, p)| p.map(|p| p < i).unwrap_or(true)) {
        return Some((0..parents.len()).collect());
    }
    skelport_ir::proc::parents_first(parents).ok()
}

fn cycle_member(parents: &[Option<usize>]) -> usize {
    let n = parents.len();
    let mut reach = vec![false; n];
    for (i, r) in reach.iter_mut().enumerate() {
        let mut p = Some(i);
        let mut steps = 0;
        while let Some(x) = p {
            if steps > n {
                break;
            }
            p = parents[x];
            steps += 1;
        }
        *r = p.is_none();
    }
    reach.iter().position(|r| !r).unwrap_or(0)
}

/// How to generate a skeleton from another format.
#[derive(Debug, Clone, Default)]
pub struct GenerateOptions {
    /// Addon skeleton (`SkeletonType` CUSTOM); `None` guesses: a root that is a known biped bone
    /// other than Reference/Root/Hips/Pelvis (an addon hangs off the main skeleton).
    pub addon: Option<bool>,
    /// Write `BONEMIRRORING_NONE` on every bone instead of the biped defaults.
    pub mirroring_none: bool,
}

fn enum_value(ty: &str, names: &[&'static str], v: usize) -> Value {
    Value::Enum(EnumValue { ty: Txt::from(ty), value_name: names.get(v).map(|s| Txt::from_static(s)), text: Txt::from(v.to_string()) })
}

fn scalar(ty: &'static str, text: &str) -> Value {
    Value::Scalar(Scalar { ty: Txt::from_static(ty), text: Txt::from(text), attrs: vec![] })
}

fn link(id: Option<u64>) -> Value {
    Value::Ptr(Ptr { target: id.map(|id| Target::Link(Link { id, label: None })).unwrap_or(Target::Null), base: false })
}

fn vec4(kind: VecKind, v: [f64; 4]) -> Value {
    let n = kind.len();
    Value::Vector(Vector { kind, comps: v[..n].iter().map(|&x| Txt::from(format_number(x))).collect() })
}

/// The seed's MirroringType default for a new bone: root WORLD_TO_PELVIS, Hips/Spine
/// PELVIS_TO_BIPED, the rest BIPED_TO_BIPED (NONE when asked).
pub fn default_mirroring(name: &str, is_root: bool, none: bool) -> usize {
    if none {
        0
    } else if is_root {
        2
    } else if name == "Hips" || name == "Spine" {
        4
    } else {
        5
    }
}

/// A new bone object with the fields and order of the seed's "How to add a bone" template.
#[allow(clippy::too_many_arguments)]
///
/// Rotations are written with `w ≥ 0` (no file gave them a sign).
pub fn new_bone_object(id: u64, name: &str, parent: Option<u64>, mirror: u64, global: Pose, local: Pose, mirroring: usize) -> Object {
    let (global, local) = ((global.0, canonical_sign(global.1)), (local.0, canonical_sign(local.1)));
    let hash = hash_of_display(name);
    let label = if parse_hex_name(name).is_some() { hex_name(hash) } else { name.to_string() };
    let mut o = Object::new("Bone", Some(id));
    o.fields = vec![
        Field::new(names::BONE_ID, Value::Hash(Hash { text: Txt::from(hash.to_string()), label: Some(Txt::from(label)) })),
        Field::new(names::FATHER, link(parent)),
        Field::new(names::MIRROR, link(Some(mirror))),
        Field::new(names::GLOBAL_POS, vec4(VecKind::Vector4, [global.0.x, global.0.y, global.0.z, 0.0])),
        Field::new(names::GLOBAL_ROT, vec4(VecKind::Quat, [global.1.x, global.1.y, global.1.z, global.1.w])),
        Field::new(names::LOCAL_POS, vec4(VecKind::Vector4, [local.0.x, local.0.y, local.0.z, 0.0])),
        Field::new(names::LOCAL_ROT, vec4(VecKind::Quat, [local.1.x, local.1.y, local.1.z, local.1.w])),
        Field::new(names::SOLVING_PRIORITY, scalar("Byte", "0")),
        Field::new(names::MIRRORING_TYPE, enum_value("BoneMirroringType", MIRRORING_TYPES, mirroring)),
        Field::new(names::MODIFIERS, Value::List(List { item_type: None, items: vec![] })),
        Field::new(names::WRINKLE_CATEGORY, enum_value("WrinkleCategory", WRINKLE_CATEGORIES, 7)),
        Field::new(names::WRINKLE_FACTOR, scalar("Single", "0")),
    ];
    o
}

fn null_reference(name: &str) -> Value {
    // Kept as an uninterpreted element (identical in both forms), indented for a root field.
    Value::Raw(Txt::from(format!(
        "<Reference Name=\"{name}\">\r\n    <FileReference Name=\"Value\" IsGlobal=\"0\" Path=\"0\">0</FileReference>\r\n  </Reference>"
    )))
}

/// Generate a model from an IR skeleton (already in [`ANVIL_FRAME`]).
pub fn generate(sk: &Skeleton, form: Form, opts: &GenerateOptions, diag: &mut Diagnostics) -> Result<AnvilSkeleton> {
    let n = sk.bones.len();
    let names = Names::builtin();
    let name_map = sk.name_map();
    let mut seen_hash: HashMap<u32, usize> = HashMap::with_capacity(n);
    for (i, b) in sk.bones.iter().enumerate() {
        let h = hash_of_display(&b.name);
        if let Some(j) = seen_hash.insert(h, i) {
            return Err(AnvilError::Write(format!("bones '{}' and '{}' have the same name hash {h}", sk.bones[j].name, b.name)));
        }
    }
    let poses = engine_poses(sk);
    report_scale(sk, &poses, diag);
    let roots: Vec<usize> = (0..n).filter(|&i| sk.bones[i].parent.is_none()).collect();
    if roots.len() > 1 {
        diag.warn("anvil.roots", format!("{} root bones; RootBone points to the first, '{}'", roots.len(), sk.bones[roots[0]].name));
    }
    let root_name = roots.first().map(|&r| sk.bones[r].name.as_str()).unwrap_or("");
    let addon = opts.addon.unwrap_or_else(|| {
        !matches!(root_name, "Reference" | "Root" | "Hips" | "Pelvis" | "") && names.resolve(bone_hash(root_name)) == Some(root_name)
    });
    let id_of = |i: usize| FIRST_LOCAL_ID + 1 + i as u64;
    let mut bones = Vec::with_capacity(n);
    for (i, b) in sk.bones.iter().enumerate() {
        let (g, local) = (poses.global[i], poses.local[i]);
        let mirror = b
            .mirror
            .map(|m| m.index())
            .or_else(|| mirror_name(&b.name).and_then(|mn| name_map.get(mn.as_str()).map(|m| m.index())))
            .filter(|&m| m != i)
            .map(id_of)
            .unwrap_or(id_of(i));
        let mt = default_mirroring(&b.name, b.parent.is_none(), opts.mirroring_none);
        let o = new_bone_object(id_of(i), &b.name, b.parent.map(|p| id_of(p.index())), mirror, g, local, mt);
        bones.push(Field::item(Value::Ptr(Ptr { target: Target::Inline(Box::new(o)), base: false })));
    }
    let root_pose = roots.first().map(|&r| poses.global[r]).unwrap_or((DVec3::ZERO, DQuat::IDENTITY));
    let root_rot = canonical_sign(root_pose.1);
    let mut root = Object::new("Skeleton", Some(FIRST_LOCAL_ID));
    let st = if addon { 8 } else { 0 };
    root.fields = vec![
        Field::new("SkeletonType", enum_value("SkeletonType", SKELETON_TYPES, st)),
        Field::new(names::BONES, Value::List(List { item_type: None, items: bones })),
        Field::new(names::ROOT_BONE, link(roots.first().map(|&r| id_of(r)))),
        Field::new("RootBoneDefaultLocalPosition", vec4(VecKind::Vector4, [root_pose.0.x, root_pose.0.y, root_pose.0.z, 0.0])),
        Field::new("RootBoneDefaultLocalRotation", vec4(VecKind::Quat, [root_rot.x, root_rot.y, root_rot.z, root_rot.w])),
        Field::new("BodyPartMapping", null_reference("BodyPartMapping")),
        Field::new("PoseGroups", Value::List(List { item_type: None, items: vec![] })),
        Field::new("IKData", Value::Ptr(Ptr { target: Target::Null, base: true })),
        Field::new("COMData", link(None)),
        Field::new("LookAtDataSkeletonDefinitionDefault", null_reference("LookAtDataSkeletonDefinitionDefault")),
        Field::new("SkeletonKey", scalar("UInt32", &bone_hash(&sk.name).to_string())),
    ];
    Ok(AnvilSkeleton { form, bytes: form.default_bytes(), tool_version: None, root, source: None })
}

/// Bring a model in line with an IR skeleton that was read from it and possibly edited: bones
/// matched by their stored ID; renamed, re-parented, moved, added and removed bones are applied
/// with every link kept right; everything else stays as read.
pub fn apply(model: &mut AnvilSkeleton, sk: &Skeleton, names: &Names, diag: &mut Diagnostics) -> Result<()> {
    let ids = model.id_map();
    let n = sk.bones.len();
    let mut claimed: Vec<Option<usize>> = vec![None; n];
    let mut taken = vec![false; model.bone_count()];
    for (i, b) in sk.bones.iter().enumerate() {
        if let Some(&mi) = bone_ext_id(b).and_then(|id| ids.get(&id)) {
            if !taken[mi] {
                taken[mi] = true;
                claimed[i] = Some(mi);
            }
        }
    }
    let removed: HashSet<u64> = (0..model.bone_count()).filter(|&mi| !taken[mi]).filter_map(|mi| model.bone(mi).id).collect();
    // Parent globals of the model as read (for "unchanged" decisions).
    let old_parents = model.parents();
    let old_order = parents_first_order(&old_parents).unwrap_or_else(|| (0..old_parents.len()).collect());
    let mut old_globals: Vec<Option<Pose>> = vec![None; model.bone_count()];
    let mut old_rest: Vec<Option<Pose>> = vec![None; model.bone_count()];
    for &i in &old_order {
        let b = model.bone(i);
        let pg = old_parents[i].and_then(|p| old_globals[p]);
        let rest = bone_rest(b, old_parents[i].is_none(), pg);
        old_rest[i] = rest;
        old_globals[i] = b.global_pose().map(|(p, q)| (p, normalize(q))).or_else(|| rest.map(|r| pg.map(|pg| compose(pg, r)).unwrap_or(r)));
    }
    // IDs for every IR bone.
    let mut next = model.max_id().max(FIRST_LOCAL_ID) + 1;
    let mut new_ids = Vec::with_capacity(n);
    for c in &claimed {
        match c {
            Some(mi) => new_ids.push(model.bone(*mi).id.unwrap_or(0)),
            None => {
                new_ids.push(next);
                next += 1;
            }
        }
    }
    // Build the new bone list: kept bones in their order, removed ones dropped.
    let mut items: Vec<Field> = std::mem::take(model.bone_items_mut());
    let mut kept: Vec<Option<Field>> = items.drain(..).map(Some).collect();
    let mut list: Vec<Field> = Vec::with_capacity(n);
    let mut pos_of_model: HashMap<usize, usize> = HashMap::new();
    for (mi, f) in kept.iter_mut().enumerate() {
        if taken[mi] {
            pos_of_model.insert(mi, list.len());
            list.push(f.take().expect("once"));
        }
    }
    let mut list_pos: Vec<usize> = vec![usize::MAX; n];
    for (i, c) in claimed.iter().enumerate() {
        if let Some(mi) = c {
            list_pos[i] = pos_of_model[mi];
        }
    }
    let poses = engine_poses(sk);
    report_scale(sk, &poses, diag);
    // New bones: create and insert after their parent's subtree (IR order is parents-first).
    let name_map = sk.name_map();
    for i in 0..n {
        if claimed[i].is_some() {
            continue;
        }
        let b = &sk.bones[i];
        let (g, local) = (poses.global[i], poses.local[i]);
        let mirror = b
            .mirror
            .map(|m| m.index())
            .or_else(|| mirror_name(&b.name).and_then(|mn| name_map.get(mn.as_str()).map(|m| m.index())))
            .filter(|&m| m != i)
            .map(|m| new_ids[m])
            .unwrap_or(new_ids[i]);
        let o = new_bone_object(
            new_ids[i],
            &b.name,
            b.parent.map(|p| new_ids[p.index()]),
            mirror,
            g,
            local,
            default_mirroring(&b.name, b.parent.is_none(), false),
        );
        let at = match b.parent {
            Some(p) if list_pos[p.index()] != usize::MAX => subtree_end(&list, list_pos[p.index()]),
            _ => list.len(),
        };
        list.insert(at, Field::item(Value::Ptr(Ptr { target: Target::Inline(Box::new(o)), base: false })));
        for lp in list_pos.iter_mut() {
            if *lp != usize::MAX && *lp >= at {
                *lp += 1;
            }
        }
        list_pos[i] = at;
    }
    *model.bone_items_mut() = list;
    // Names, parents, mirrors, transforms.
    let mut unchanged = vec![false; n];
    let mut new_globals: Vec<Pose> = vec![(DVec3::ZERO, DQuat::IDENTITY); n];
    let mut renamed = 0usize;
    for i in 0..n {
        let b = &sk.bones[i];
        let new_parent = b.parent.map(|p| new_ids[p.index()]);
        let rest = poses.local[i];
        let existing = claimed[i];
        let o = model.bone_mut(list_pos[i]);
        if let Some(mi) = existing {
            // Name.
            // The hash is the name: a name that hashes (or hex-parses) to the bone's hash is the
            // same name however it was displayed (dictionary, --names file, label).
            let cur = names.display(o.bone_hash().unwrap_or(0), o.bone_label());
            if cur != b.name && o.bone_hash() != Some(hash_of_display(&b.name)) {
                let h = hash_of_display(&b.name);
                let label = if parse_hex_name(&b.name).is_some() { hex_name(h) } else { b.name.clone() };
                o.set_bone_hash(h, Some(&label));
                renamed += 1;
            }
            let parent_same = o.bone_parent().filter(|&p| p != 0) == new_parent;
            if !parent_same {
                o.set_link(names::FATHER, new_parent);
            }
            // Mirror: IR None means "self" (or no field).
            let want_mirror = b.mirror.map(|m| new_ids[m.index()]);
            let cur_mirror = o.bone_mirror().filter(|&m| Some(m) != o.id);
            if cur_mirror != want_mirror && !(want_mirror.is_none() && cur_mirror.map(|m| removed.contains(&m)).unwrap_or(false)) {
                let target = want_mirror.or(o.id);
                if o.field(names::MIRROR).is_some() || want_mirror.is_some() {
                    o.set_link(names::MIRROR, target);
                }
            }
            // The same to the engine: a value that went through a float32 format or a frame
            // change on the way keeps the file's text (and sign), and so do the values derived
            // from it.
            let same_rest = old_rest[mi].is_some_and(|r| same_pose(r, rest));
            let parent_unchanged = b.parent.map(|p| unchanged[p.index()]).unwrap_or(true);
            unchanged[i] = parent_same && same_rest && parent_unchanged;
            if unchanged[i] {
                new_globals[i] = old_globals[mi].unwrap_or(rest);
                continue;
            }
        }
        let g = match b.parent {
            Some(p) => compose(new_globals[p.index()], rest),
            None => rest,
        };
        new_globals[i] = g;
        if existing.is_some() {
            o.set_pose(names::GLOBAL_POS, names::GLOBAL_ROT, g.0, g.1);
            if b.parent.is_some() {
                o.set_pose(names::LOCAL_POS, names::LOCAL_ROT, rest.0, rest.1);
            }
        }
    }
    if renamed > 0 {
        diag.info("anvil.renamed", format!("{renamed} bone(s) renamed: their BoneID hashes were recomputed"));
    }
    if !removed.is_empty() {
        let notes = crate::ops::fix_references(model, &removed);
        diag.info("anvil.removed", format!("{} bone(s) removed", removed.len()));
        for m in notes {
            diag.warn("anvil.reference-removed", m);
        }
    }
    // RootBone: the first IR root.
    if let Some(r) = (0..n).find(|&i| sk.bones[i].parent.is_none()) {
        let want = new_ids[r];
        if model.root_bone() != Some(want) {
            let cur_ok = model.root_bone().map(|c| (0..n).any(|i| new_ids[i] == c && sk.bones[i].parent.is_none())).unwrap_or(false);
            if !cur_ok {
                model.root.set_link(names::ROOT_BONE, Some(want));
            }
        }
    }
    Ok(())
}

/// The list position just after bone `p`'s last descendant (by list order).
pub(crate) fn subtree_end(list: &[Field], p: usize) -> usize {
    let id_of = |f: &Field| match &f.value {
        Value::Ptr(Ptr { target: Target::Inline(o), .. }) => (o.id, o.bone_parent()),
        _ => (None, None),
    };
    let mut inside: HashSet<u64> = HashSet::new();
    if let (Some(id), _) = id_of(&list[p]) {
        inside.insert(id);
    }
    let mut end = p + 1;
    for (k, f) in list.iter().enumerate().skip(p + 1) {
        let (id, parent) = id_of(f);
        match parent {
            Some(par) if inside.contains(&par) => {
                if let Some(id) = id {
                    inside.insert(id);
                }
                end = k + 1;
            }
            _ => {}
        }
    }
    end
}
