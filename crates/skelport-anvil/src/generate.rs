//! A model generated from an IR skeleton of another format, and the new bone objects the seed's
//! template describes (also used by `apply` and the bone commands).

use crate::check::list;
use crate::error::{AnvilError, Result};
use crate::model::*;
use crate::names::{bone_hash, hash_of_display, hex_name, mirror_name, parse_hex_name, Names};
use crate::pose::{engine_poses, EnginePoses, Pose, SCALE_NOISE};
use crate::text::Txt;
use skelport_ir::{DQuat, DVec3, Diagnostics, Skeleton};
use std::collections::HashMap;

/// The first local object ID AnvilToolkit hands out inside a file (0xF8000000); generated files
/// number the skeleton and its bones from here.
pub const FIRST_LOCAL_ID: u64 = 0xF800_0000;

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

/// Generate a model from an IR skeleton (already in [`ANVIL_FRAME`](crate::pose::ANVIL_FRAME)).
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
        let mirror = id_of(mirror_index(b, i, &name_map));
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

/// The `anvil.scale` loss for the bones of `poses.scaled`, if any.
/// The index of bone `i`'s mirror partner: the IR's own link, else the bone named as its mirror
/// (`l_`/`r_` and the like), else the bone itself.
pub(crate) fn mirror_index(b: &skelport_ir::Bone, i: usize, name_map: &HashMap<&str, skelport_ir::BoneId>) -> usize {
    b.mirror
        .map(|m| m.index())
        .or_else(|| mirror_name(&b.name).and_then(|mn| name_map.get(mn.as_str()).map(|m| m.index())))
        .filter(|&m| m != i)
        .unwrap_or(i)
}

pub(crate) fn report_scale(sk: &Skeleton, poses: &EnginePoses, diag: &mut Diagnostics) {
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
