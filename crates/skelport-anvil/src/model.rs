//! The typed model of an AnvilToolkit skeleton, the same for both forms.
//!
//! A file is one root [`Object`] (class `Skeleton`) whose [`Field`]s hold typed [`Value`]s:
//! scalars, hashes, enums, vectors and quaternions, pointers (null, a [`Link`] to an ID, or an
//! inlined object), embedded objects, lists, and — for anything this crate does not recognise —
//! [`Value::Raw`] XML kept verbatim. Bones are the inlined `Bone` objects of the `Bones` list;
//! their modifiers are the inlined objects of each bone's `Modifiers` list, classified by
//! [`ModifierKind`]. Every reference to a bone (parent, mirror, root bone, and every modifier
//! field such as `LookAtBone`, `UpNode`, `AssociatedBone`, `Targets`) is a [`Link`] holding the
//! bone's 64-bit ID, resolved and checked when the file is read, so edits that keep IDs keep
//! references right.
//!
//! Field names are stored in the Schema-Based (engine) spelling: a Standard `Name` is `BoneID`,
//! `Parent` is `FatherBone`, `BoneModifiers` is `Modifiers`. Scalar types are stored in the
//! Standard spelling (`Single`, `Byte`, `UInt32` …). Numbers keep the text they were written
//! with, so an unmodified value is written back exactly.
//!
//! Each field read from a file remembers which element it came from; the writer copies an element
//! byte for byte when the value is unchanged and the target form is the form it was read in.

use crate::text::{ByteForm, Txt};
use crate::xml::Source;
use skelport_ir::{DQuat, DVec3};
use std::sync::Arc;

/// Which of AnvilToolkit's two XML exporters a file is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    /// The Standard exporter: UTF-16, `type="0"`, `<Skeleton>`, `<Value Name Type>` elements.
    Standard,
    /// The Schema-Based exporter (ATK 1.3.0+): UTF-8, `type="1"`, `<Object Type="Skeleton">`,
    /// typed elements (`<Float>`, `<Hash32>`, `<Enum>` …), explicit `Index` and `ChildBoneCount`.
    Schema,
}

impl Form {
    /// The `type` attribute of the `<?info?>` line.
    pub fn type_attr(self) -> &'static str {
        self.dialect().type_attr
    }
    /// The byte form new files of this form are written in.
    pub fn default_bytes(self) -> ByteForm {
        self.dialect().bytes
    }
    /// The most bones a file of this form can hold.
    pub fn max_bones(self) -> usize {
        self.dialect().max_bones
    }
}

/// Where a model value was read from (which tree, which element). Never affects equality.
#[derive(Debug, Clone, Copy)]
pub struct SrcRef {
    pub(crate) source: u64,
    pub(crate) node: u32,
}

impl PartialEq for SrcRef {
    fn eq(&self, _: &SrcRef) -> bool {
        true
    }
}

/// A named (or, in a list, unnamed) value.
#[derive(Debug, Clone, PartialEq)]
pub struct Field {
    /// The field name (`Name=` attribute); `None` for list items.
    pub name: Option<Txt>,
    /// The value.
    pub value: Value,
    /// The element it was read from.
    pub src: Option<SrcRef>,
}

impl Field {
    /// A new named field (not from any file).
    pub fn new(name: &str, value: Value) -> Field {
        Field { name: Some(Txt::from(name)), value, src: None }
    }
    /// A new list item.
    pub fn item(value: Value) -> Field {
        Field { name: None, value, src: None }
    }
    /// The field name, or `""`.
    pub fn name(&self) -> &str {
        self.name.as_deref().unwrap_or("")
    }
}

/// A value.
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// A number, boolean or string.
    Scalar(Scalar),
    /// A 32-bit name hash with its label.
    Hash(Hash),
    /// An enumeration value.
    Enum(EnumValue),
    /// A vector or quaternion.
    Vector(Vector),
    /// A pointer: null, a link to an ID, or an inlined object.
    Ptr(Ptr),
    /// An object embedded by value (Standard `<BaseObject>`, Schema `<Object>`).
    Object(Box<Object>),
    /// A list (Standard `<List>`, Schema `<DynamicSmallArray>`).
    List(List),
    /// An element this crate does not interpret, kept as written.
    Raw(Txt),
}

/// A scalar: `ty` is the Standard type name (`Single`, `Bool`, `Byte`, `Int32`, `UInt32`, …).
#[derive(Debug, Clone, PartialEq)]
pub struct Scalar {
    /// Standard type name.
    pub ty: Txt,
    /// The text as written.
    pub text: Txt,
    /// Other attributes (e.g. a `Path` label), kept in order.
    pub attrs: Vec<(Txt, Txt)>,
}

/// A name hash (CRC-32 of the exact-case name). The number rules; the label is informative.
#[derive(Debug, Clone, PartialEq)]
pub struct Hash {
    /// The decimal text.
    pub text: Txt,
    /// `HashName` (Standard) / `HashValue` (Schema).
    pub label: Option<Txt>,
}

impl Hash {
    /// The hash value.
    pub fn value(&self) -> Option<u32> {
        self.text.trim().parse().ok()
    }
}

/// An enumeration value.
#[derive(Debug, Clone, PartialEq)]
pub struct EnumValue {
    /// Enum type (`BoneMirroringType`, `BoneModifier::ModifierAxis` …).
    pub ty: Txt,
    /// Value name (`BONEMIRRORING_BIPED_TO_BIPED` …).
    pub value_name: Option<Txt>,
    /// The number as written.
    pub text: Txt,
}

/// The kind of a vector value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VecKind {
    /// Two components.
    Vector2,
    /// Three components.
    Vector3,
    /// Four components (positions keep their W verbatim).
    Vector4,
    /// A quaternion x, y, z, w.
    Quat,
}

impl VecKind {
    /// Number of components.
    pub fn len(self) -> usize {
        match self {
            VecKind::Vector2 => 2,
            VecKind::Vector3 => 3,
            VecKind::Vector4 | VecKind::Quat => 4,
        }
    }
    /// Always false (every kind has components); for clippy's `len_without_is_empty`.
    pub fn is_empty(self) -> bool {
        false
    }
    /// Element name in the Standard form.
    pub fn standard_tag(self) -> &'static str {
        match self {
            VecKind::Vector2 => "Vector2",
            VecKind::Vector3 => "Vector3",
            VecKind::Vector4 => "Vector4",
            VecKind::Quat => "Quat",
        }
    }
    /// Element name in the Schema-Based form.
    pub fn schema_tag(self) -> &'static str {
        match self {
            VecKind::Quat => "Quaternion",
            k => k.standard_tag(),
        }
    }
}

/// A vector: component texts as written.
#[derive(Debug, Clone, PartialEq)]
pub struct Vector {
    /// Kind.
    pub kind: VecKind,
    /// Component texts.
    pub comps: Vec<Txt>,
}

impl Vector {
    /// Components as numbers (`None` if one does not parse).
    pub fn numbers(&self) -> Option<Vec<f64>> {
        self.comps.iter().map(|c| parse_number(c)).collect()
    }
}

/// A pointer.
#[derive(Debug, Clone, PartialEq)]
pub struct Ptr {
    /// What it points to.
    pub target: Target,
    /// Written as `<BaseObjectPtr>` in the Standard form (e.g. `IKData`).
    pub base: bool,
}

/// A pointer's target.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// Null.
    Null,
    /// A link to an object ID in this file (a bone, usually).
    Link(Link),
    /// An object stored inline (bones in `Bones`, modifiers in `Modifiers`).
    Inline(Box<Object>),
}

/// A link by ID. The `Path` label is for humans only.
#[derive(Debug, Clone, PartialEq)]
pub struct Link {
    /// The target's ID.
    pub id: u64,
    /// The Schema `Path` label (or a Standard `Path` attribute).
    pub label: Option<Txt>,
}

/// An object: a class name, an optional ID and fields.
#[derive(Debug, Clone, PartialEq)]
pub struct Object {
    /// Class (`Skeleton`, `Bone`, `HingeBoneModifier`, `Hinge` …).
    pub class: Txt,
    /// Object ID.
    pub id: Option<u64>,
    /// Other attributes of the object element, kept in order.
    pub attrs: Vec<(Txt, Txt)>,
    /// Fields in order. `BlendWeight`/`UseModifiedBoneMatrix` are fields here (attributes in the
    /// Standard form); a Schema `Owner` link is a field too (implicit in the Standard form).
    pub fields: Vec<Field>,
    /// The element it was read from.
    pub src: Option<SrcRef>,
}

/// A list.
#[derive(Debug, Clone, PartialEq)]
pub struct List {
    /// The Schema `Type` attribute (`ObjectPtr`, `Bool` …), when known.
    pub item_type: Option<Txt>,
    /// Items (fields without names).
    pub items: Vec<Field>,
}

/// Canonical bone field names.
pub mod names {
    /// The bone's name hash.
    pub const BONE_ID: &str = "BoneID";
    /// The parent link.
    pub const FATHER: &str = "FatherBone";
    /// The mirror link.
    pub const MIRROR: &str = "MirrorBone";
    /// World position.
    pub const GLOBAL_POS: &str = "GlobalPosition";
    /// World rotation.
    pub const GLOBAL_ROT: &str = "GlobalRotation";
    /// Position relative to the parent.
    pub const LOCAL_POS: &str = "LocalPosition";
    /// Rotation relative to the parent.
    pub const LOCAL_ROT: &str = "LocalRotation";
    /// Constraint solving order.
    pub const SOLVING_PRIORITY: &str = "SolvingPriority";
    /// Mirroring type.
    pub const MIRRORING_TYPE: &str = "MirroringType";
    /// The modifier list.
    pub const MODIFIERS: &str = "Modifiers";
    /// Wrinkle category.
    pub const WRINKLE_CATEGORY: &str = "WrinkleCategory";
    /// Wrinkle factor.
    pub const WRINKLE_FACTOR: &str = "WrinkleFactor";
    /// Position in the bone array (Schema-Based only).
    pub const INDEX: &str = "Index";
    /// Number of all descendants (Schema-Based only).
    pub const CHILD_BONE_COUNT: &str = "ChildBoneCount";
    /// The skeleton's bone list.
    pub const BONES: &str = "Bones";
    /// The skeleton's root-bone link.
    pub const ROOT_BONE: &str = "RootBone";
    /// A modifier's owner link (Schema-Based only).
    pub const OWNER: &str = "Owner";
}

/// Standard ↔ Schema-Based field names that differ, inside a `Bone`.
pub const BONE_FIELD_NAMES: &[(&str, &str)] = &[("Name", "BoneID"), ("Parent", "FatherBone"), ("BoneModifiers", "Modifiers")];

/// Standard `Value Type` ↔ Schema-Based element names of scalars.
pub const SCALAR_TYPES: &[(&str, &str)] = &[
    ("Bool", "Bool"),
    ("Byte", "Unsigned8"),
    ("SByte", "Signed8"),
    ("Int16", "Signed16"),
    ("UInt16", "Unsigned16"),
    ("Int32", "Signed32"),
    ("UInt32", "Unsigned32"),
    ("Int64", "Signed64"),
    ("UInt64", "Unsigned64"),
    ("Single", "Float"),
    ("Double", "Double"),
    ("String", "String"),
];

/// Fields the Standard form writes as plain integers but the Schema-Based form as `<Enum>`
/// (from the seed's comparison: `AxisConstraintType` is `Type="Int32"` in Standard and
/// `<Enum Type="BoneModifier::ModifierAxis" Value="AxisX">` in Schema-Based).
pub struct IntEnum {
    /// Field name.
    pub field: &'static str,
    /// Standard `Type`.
    pub standard_type: &'static str,
    /// Schema `Type`.
    pub schema_type: &'static str,
    /// Value names by number.
    pub values: &'static [&'static str],
}

/// `SkeletonType` values.
pub const SKELETON_TYPES: &[&str] = &[
    "SKELETONTYPE_BIPED",
    "SKELETONTYPE_BIPED_FEMALE",
    "SKELETONTYPE_QUADRUPED",
    "SKELETONTYPE_CARRIAGEHITCH",
    "SKELETONTYPE_HITCH",
    "SKELETONTYPE_WAGON",
    "SKELETONTYPE_REINS",
    "SKELETONTYPE_CANNON",
    "SKELETONTYPE_CUSTOM",
];

const MODIFIER_AXES: &[&str] = &["AxisX", "AxisY", "AxisZ"];

/// The integer-coded enums.
pub const INT_ENUMS: &[IntEnum] = &[
    IntEnum { field: "SkeletonType", standard_type: "UInt32", schema_type: "SkeletonType", values: SKELETON_TYPES },
    IntEnum { field: "AxisConstraintType", standard_type: "Int32", schema_type: "BoneModifier::ModifierAxis", values: MODIFIER_AXES },
    IntEnum { field: "AxisLookAtType", standard_type: "Int32", schema_type: "BoneModifier::ModifierAxis", values: MODIFIER_AXES },
];

/// Pointer fields the Standard form writes as `<BaseObjectPtr>`.
pub const BASE_PTR_FIELDS: &[&str] = &["IKData"];

/// `BoneMirroringType` values (ACU `BoneMirroringType`, the seed's table).
pub const MIRRORING_TYPES: &[&str] = &[
    "BONEMIRRORING_NONE",
    "BONEMIRRORING_WORLD_TO_WORLD",
    "BONEMIRRORING_WORLD_TO_PELVIS",
    "BONEMIRRORING_PELVIS_TO_WORLD",
    "BONEMIRRORING_PELVIS_TO_BIPED",
    "BONEMIRRORING_BIPED_TO_BIPED",
    "BONEMIRRORING_WEAPONREF",
];

/// `WrinkleCategory` values.
pub const WRINKLE_CATEGORIES: &[&str] =
    &["Translation", "AxisMagnitude", "RotationDifference_Expensive", "RotationYaw", "RotationPitch", "RotationRoll", "Debug", "None"];

/// The BoneModifier classes the seed describes, plus any other class by name.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ModifierKind {
    /// Ball-and-socket physics.
    BallJoint,
    /// Single-axis swing physics with a list of `Hinge` constraints.
    Hinge,
    /// Hinge driven by target bones (`HingeTargets`).
    HingeVector,
    /// Pendulum physics.
    Pendulum,
    /// Spring physics.
    SpringBox,
    /// Position blended from `Targets`.
    PositionConstraint,
    /// Rotation blended from `Targets`, plus an `Offset`.
    OrientationConstraint,
    /// Rotation constraint with inertia and damping.
    RotationConstraint,
    /// Follows a spline through other bones.
    SplineConstraint,
    /// Aim at `LookAtBone` with `UpNode`.
    MaxLookAt,
    /// Look-at with angle clamping (AC3+ name).
    AnvilLookAt,
    /// Look-at (pre-AC3 name).
    LookAt,
    /// Copies `AssociatedBone`.
    Follow,
    /// Twist from `SourceBone`.
    Roll,
    /// Squash from `OffsetBone1`/`OffsetBone2`.
    Compress,
    /// Stretch toward a target.
    Stretch,
    /// Rotation by expression from `LinkedBone`.
    RotationExpression,
    /// Rotation copied from `LinkedBone`.
    RotationPaste,
    /// Effects marker, no properties.
    Fx,
    /// Any other class, kept as read.
    Other(String),
}

impl ModifierKind {
    /// Every known kind with its class name.
    pub const KNOWN: &'static [(&'static str, ModifierKind)] = &[
        ("BallJointBoneModifier", ModifierKind::BallJoint),
        ("HingeBoneModifier", ModifierKind::Hinge),
        ("HingeVectorBoneModifier", ModifierKind::HingeVector),
        ("PendulumBoneModifier", ModifierKind::Pendulum),
        ("SpringBoxModifier", ModifierKind::SpringBox),
        ("PositionConstraintBoneModifier", ModifierKind::PositionConstraint),
        ("OrientationConstraintBoneModifier", ModifierKind::OrientationConstraint),
        ("RotationConstraintModifier", ModifierKind::RotationConstraint),
        ("SplineConstraintModifier", ModifierKind::SplineConstraint),
        ("MaxLookAtBoneModifier", ModifierKind::MaxLookAt),
        ("AnvilLookAtBoneModifier", ModifierKind::AnvilLookAt),
        ("LookAtBoneModifier", ModifierKind::LookAt),
        ("FollowBoneModifier", ModifierKind::Follow),
        ("RollBoneModifier", ModifierKind::Roll),
        ("CompressBoneModifier", ModifierKind::Compress),
        ("StretchBoneModifier", ModifierKind::Stretch),
        ("RotationExpressionModifier", ModifierKind::RotationExpression),
        ("RotationPasteModifier", ModifierKind::RotationPaste),
        ("FXBoneModifier", ModifierKind::Fx),
    ];

    /// The kind of a class name.
    pub fn from_class(class: &str) -> ModifierKind {
        Self::KNOWN.iter().find(|(c, _)| *c == class).map(|(_, k)| k.clone()).unwrap_or_else(|| ModifierKind::Other(class.to_string()))
    }

    /// The class name.
    pub fn class(&self) -> &str {
        match self {
            ModifierKind::Other(s) => s,
            k => Self::KNOWN.iter().find(|(_, kk)| kk == k).map(|(c, _)| *c).unwrap_or(""),
        }
    }

    /// The fields of this kind that the seed documents as bone references. Every other link in a
    /// modifier is resolved and kept right too; this list is what `bone remove` reports by name.
    pub fn bone_reference_fields(&self) -> &'static [&'static str] {
        match self {
            ModifierKind::Hinge => &["GravityAssociatedBone", "ConstraintAssociatedBone"],
            ModifierKind::HingeVector => &["HingeTargets"],
            ModifierKind::PositionConstraint | ModifierKind::OrientationConstraint => &["Targets"],
            ModifierKind::RotationConstraint => &["ConstraintAssociatedBone"],
            ModifierKind::SplineConstraint => &["Targets"],
            ModifierKind::MaxLookAt => &["UpNode", "LookAtBone"],
            ModifierKind::AnvilLookAt | ModifierKind::LookAt => &["LookAtBone"],
            ModifierKind::Follow => &["AssociatedBone"],
            ModifierKind::Roll => &["SourceBone"],
            ModifierKind::Compress => &["OffsetBone1", "OffsetBone2"],
            ModifierKind::Stretch => &["TargetBone"],
            ModifierKind::RotationExpression => &["LinkedBone", "GravityBone"],
            ModifierKind::RotationPaste => &["LinkedBone"],
            _ => &[],
        }
    }
}

/// Whether a stored number and a computed one are the same value to the engine: equal within
/// two `f32` steps (what reading, a frame change or a float32 format on the way adds) or both
/// below [`SNAP_TO_ZERO`]. A file's text is kept for such a value instead of a re-rounded one.
pub fn same_number(stored: f64, computed: f64) -> bool {
    (stored - computed).abs() <= SNAP_TO_ZERO + stored.abs() * (2.0 * f32::EPSILON as f64)
}

/// `q` or `-q`, whichever has `w ≥ 0` (the sign written for a rotation no file gave).
pub fn canonical_sign(q: DQuat) -> DQuat {
    if q.w < 0.0 {
        -q
    } else {
        q
    }
}

/// Parse a number as AnvilToolkit writes it (`0.4`, `-0`, `1E-05`, `NaN` is refused).
pub fn parse_number(s: &str) -> Option<f64> {
    // fast-float2: what `str::parse` gives, bit for bit, at about half the time (tested in
    // skelport_ir::num); a 65,535-bone file has two million numbers.
    let v = skelport_ir::num::fast_decimal(s.trim())?;
    v.is_finite().then_some(v)
}

/// Below this magnitude a computed value is written `0`: it is what composing rotations and
/// changing frames leaves of an exact zero (`-1.1102230246251565e-16`), far below what a game
/// unit (a metre) or a quaternion component can show.
pub const SNAP_TO_ZERO: f64 = 1e-9;

/// Format a number for a new value: the engine stores `float`, so the shortest text that reads
/// back as the same `f32` (`0.4`, `-0.7853982`); `-0` and anything smaller than
/// [`SNAP_TO_ZERO`] are written `0`.
pub fn format_number(v: f64) -> String {
    let f = v as f32;
    if f == 0.0 || v.abs() < SNAP_TO_ZERO {
        return "0".into();
    }
    format!("{f}")
}

impl Object {
    /// A new object (not from any file).
    pub fn new(class: &str, id: Option<u64>) -> Object {
        Object { class: Txt::from(class), id, attrs: Vec::new(), fields: Vec::new(), src: None }
    }
    /// The first field with this name.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name.as_deref() == Some(name))
    }
    /// The first field with this name, mutably.
    pub fn field_mut(&mut self, name: &str) -> Option<&mut Field> {
        self.fields.iter_mut().find(|f| f.name.as_deref() == Some(name))
    }
    /// The value of the first field with this name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.field(name).map(|f| &f.value)
    }
    /// Set a field's value (appending the field if missing). Returns whether anything changed.
    pub fn set(&mut self, name: &str, value: Value) -> bool {
        match self.field_mut(name) {
            Some(f) if f.value == value => false,
            Some(f) => {
                f.value = value;
                true
            }
            None => {
                self.fields.push(Field::new(name, value));
                true
            }
        }
    }
    /// A link field's target ID (`None` for null, missing, or not a link).
    pub fn link(&self, name: &str) -> Option<u64> {
        match self.get(name) {
            Some(Value::Ptr(Ptr { target: Target::Link(l), .. })) => Some(l.id),
            _ => None,
        }
    }
    /// Point a link field at `id` (or null). Keeps the field's kind and `base` flag.
    pub fn set_link(&mut self, name: &str, id: Option<u64>) {
        let base = matches!(self.get(name), Some(Value::Ptr(p)) if p.base);
        let cur = self.link(name);
        if cur == id && self.field(name).is_some() {
            return;
        }
        let target = match id {
            Some(id) => Target::Link(Link { id, label: None }),
            None => Target::Null,
        };
        self.set(name, Value::Ptr(Ptr { target, base }));
    }
    /// A vector field's numbers.
    pub fn vector(&self, name: &str) -> Option<Vec<f64>> {
        match self.get(name) {
            Some(Value::Vector(v)) => v.numbers(),
            _ => None,
        }
    }
    /// A vector field's component texts.
    pub fn vector_texts(&self, name: &str) -> Option<&[Txt]> {
        match self.get(name) {
            Some(Value::Vector(v)) => Some(&v.comps),
            _ => None,
        }
    }
    /// Set a vector field's components from numbers, keeping the text of components whose value
    /// does not change (so `0` stays `0` and a position's `W` stays as written).
    pub fn set_vector(&mut self, name: &str, kind: VecKind, values: &[f64]) {
        let old = match self.get(name) {
            Some(Value::Vector(v)) if v.kind == kind => Some(v.clone()),
            _ => None,
        };
        let comps: Vec<Txt> = (0..kind.len())
            .map(|i| {
                let want = values.get(i).copied();
                match (old.as_ref().and_then(|o| o.comps.get(i)), want) {
                    (Some(t), Some(w)) if parse_number(t).is_some_and(|x| same_number(x, w)) => t.clone(),
                    (Some(t), None) => t.clone(),
                    (_, Some(w)) => Txt::from(format_number(w)),
                    (None, None) => Txt::from_static("0"),
                }
            })
            .collect();
        self.set(name, Value::Vector(Vector { kind, comps }));
    }
    /// A scalar or enum field's text.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.get(name)? {
            Value::Scalar(s) => Some(&s.text),
            Value::Enum(e) => Some(&e.text),
            Value::Hash(h) => Some(&h.text),
            _ => None,
        }
    }

    // ---- bones ----

    /// A bone's name hash.
    pub fn bone_hash(&self) -> Option<u32> {
        match self.get(names::BONE_ID)? {
            Value::Hash(h) => h.value(),
            Value::Scalar(s) => s.text.trim().parse().ok(),
            _ => None,
        }
    }
    /// A bone's hash label (`HashName`/`HashValue`).
    pub fn bone_label(&self) -> Option<&str> {
        match self.get(names::BONE_ID)? {
            Value::Hash(h) => h.label.as_deref(),
            _ => None,
        }
    }
    /// Set a bone's name hash and label.
    pub fn set_bone_hash(&mut self, hash: u32, label: Option<&str>) {
        let h = Hash { text: Txt::from(hash.to_string()), label: label.map(Txt::from) };
        if let Some(Value::Hash(cur)) = self.get(names::BONE_ID) {
            if cur.value() == Some(hash) && cur.label.as_deref() == label {
                return;
            }
        }
        if self.field(names::BONE_ID).is_none() {
            self.fields.insert(0, Field::new(names::BONE_ID, Value::Hash(h)));
        } else {
            self.set(names::BONE_ID, Value::Hash(h));
        }
    }
    /// A bone's parent ID.
    pub fn bone_parent(&self) -> Option<u64> {
        self.link(names::FATHER)
    }
    /// A bone's mirror ID (itself when it has no mirror; `None` when the field is missing).
    pub fn bone_mirror(&self) -> Option<u64> {
        self.link(names::MIRROR)
    }
    /// The modifiers of a bone (inlined objects of its `Modifiers` list).
    pub fn modifiers(&self) -> impl Iterator<Item = &Object> {
        let items: &[Field] = match self.get(names::MODIFIERS) {
            Some(Value::List(l)) => &l.items,
            _ => &[],
        };
        items.iter().filter_map(|f| match &f.value {
            Value::Ptr(Ptr { target: Target::Inline(o), .. }) => Some(&**o),
            _ => None,
        })
    }
    /// The `Modifiers` list items, mutably (created when missing).
    pub fn modifier_items_mut(&mut self) -> &mut Vec<Field> {
        if !matches!(self.get(names::MODIFIERS), Some(Value::List(_))) {
            let pos = self.fields.iter().position(|f| f.name() == names::WRINKLE_CATEGORY).unwrap_or(self.fields.len());
            self.fields.retain(|f| f.name() != names::MODIFIERS);
            let pos = pos.min(self.fields.len());
            self.fields
                .insert(pos, Field::new(names::MODIFIERS, Value::List(List { item_type: Some(Txt::from("ObjectPtr")), items: vec![] })));
        }
        match &mut self.field_mut(names::MODIFIERS).expect("just inserted").value {
            Value::List(l) => &mut l.items,
            _ => unreachable!("checked above"),
        }
    }
    /// Position and rotation of a bone from two fields (`None` when missing or not numbers).
    pub fn pose(&self, pos: &str, rot: &str) -> Option<(DVec3, DQuat)> {
        let p = self.vector(pos)?;
        let r = self.vector(rot)?;
        if p.len() < 3 || r.len() < 4 {
            return None;
        }
        Some((DVec3::new(p[0], p[1], p[2]), DQuat::from_xyzw(r[0], r[1], r[2], r[3])))
    }
    /// The global (world) rest pose.
    pub fn global_pose(&self) -> Option<(DVec3, DQuat)> {
        self.pose(names::GLOBAL_POS, names::GLOBAL_ROT)
    }
    /// The local rest pose (relative to the parent).
    pub fn local_pose(&self) -> Option<(DVec3, DQuat)> {
        self.pose(names::LOCAL_POS, names::LOCAL_ROT)
    }
    /// Set a pose pair, keeping unchanged component texts and the position's W.
    ///
    /// The quaternion keeps the sign of the one it replaces (`q` and `-q` are one rotation, and
    /// a file's text should not flip for nothing); with none to replace, `w ≥ 0`.
    pub fn set_pose(&mut self, pos: &str, rot: &str, p: DVec3, r: DQuat) {
        let w = self.vector(pos).and_then(|v| v.get(3).copied()).unwrap_or(0.0);
        self.set_vector(pos, VecKind::Vector4, &[p.x, p.y, p.z, w]);
        let old = self.vector(rot).filter(|v| v.len() == 4).map(|v| DQuat::from_xyzw(v[0], v[1], v[2], v[3]));
        let r = match old {
            Some(o) if o.dot(r) < 0.0 => -r,
            Some(_) => r,
            None => canonical_sign(r),
        };
        self.set_vector(rot, VecKind::Quat, &[r.x, r.y, r.z, r.w]);
    }

    /// Visit every link in this object (recursively), mutably.
    pub fn for_each_link_mut(&mut self, f: &mut dyn FnMut(&str, &mut Link)) {
        for field in &mut self.fields {
            let name = field.name.clone();
            visit_links_mut(&mut field.value, name.as_deref().unwrap_or(""), f);
        }
    }
    /// Visit every link in this object (recursively).
    pub fn for_each_link(&self, f: &mut dyn FnMut(&str, &Link, Option<SrcRef>)) {
        for field in &self.fields {
            visit_links(&field.value, field.name(), field.src, f);
        }
    }
}

fn visit_links_mut(v: &mut Value, name: &str, f: &mut dyn FnMut(&str, &mut Link)) {
    match v {
        Value::Ptr(p) => match &mut p.target {
            Target::Link(l) => f(name, l),
            Target::Inline(o) => o.for_each_link_mut(f),
            Target::Null => {}
        },
        Value::Object(o) => o.for_each_link_mut(f),
        Value::List(l) => {
            for it in &mut l.items {
                visit_links_mut(&mut it.value, name, f);
            }
        }
        _ => {}
    }
}

fn visit_links(v: &Value, name: &str, src: Option<SrcRef>, f: &mut dyn FnMut(&str, &Link, Option<SrcRef>)) {
    match v {
        Value::Ptr(p) => match &p.target {
            Target::Link(l) => f(name, l, src),
            Target::Inline(o) => o.for_each_link(f),
            Target::Null => {}
        },
        Value::Object(o) => o.for_each_link(f),
        Value::List(l) => {
            for it in &l.items {
                visit_links(&it.value, name, it.src.or(src), f);
            }
        }
        _ => {}
    }
}

/// Every object ID defined in an object (itself and nested objects).
pub fn collect_ids(o: &Object, out: &mut Vec<u64>) {
    if let Some(id) = o.id {
        out.push(id);
    }
    for f in &o.fields {
        collect_value_ids(&f.value, out);
    }
}

fn collect_value_ids(v: &Value, out: &mut Vec<u64>) {
    match v {
        Value::Ptr(Ptr { target: Target::Inline(o), .. }) | Value::Object(o) => collect_ids(o, out),
        Value::List(l) => {
            for it in &l.items {
                collect_value_ids(&it.value, out);
            }
        }
        _ => {}
    }
}

/// Give every object inside `o` (and `o` itself) a fresh ID from `next`, and return old → new.
pub fn renumber(o: &mut Object, next: &mut u64, map: &mut std::collections::HashMap<u64, u64>) {
    if let Some(id) = o.id {
        map.insert(id, *next);
        o.id = Some(*next);
        *next += 1;
    }
    o.src = None;
    for f in &mut o.fields {
        f.src = None;
        renumber_value(&mut f.value, next, map);
    }
}

fn renumber_value(v: &mut Value, next: &mut u64, map: &mut std::collections::HashMap<u64, u64>) {
    match v {
        Value::Ptr(Ptr { target: Target::Inline(o), .. }) | Value::Object(o) => renumber(o, next, map),
        Value::List(l) => {
            for it in &mut l.items {
                it.src = None;
                renumber_value(&mut it.value, next, map);
            }
        }
        _ => {}
    }
}

/// A whole skeleton file.
#[derive(Debug, Clone)]
pub struct AnvilSkeleton {
    /// The form the model was read in (or is meant for).
    pub form: Form,
    /// Encoding and BOM of the file it was read from.
    pub bytes: ByteForm,
    /// `toolVersion` of the `<?info?>` line.
    pub tool_version: Option<String>,
    /// The root object (class `Skeleton`).
    pub root: Object,
    /// The tree the model was read from, for verbatim output.
    pub(crate) source: Option<Arc<Source>>,
}

impl AnvilSkeleton {
    /// The `Bones` list items.
    pub fn bone_items(&self) -> &[Field] {
        match self.root.get(names::BONES) {
            Some(Value::List(l)) => &l.items,
            _ => &[],
        }
    }
    /// The `Bones` list items, mutably (the list is created when missing).
    pub fn bone_items_mut(&mut self) -> &mut Vec<Field> {
        if !matches!(self.root.get(names::BONES), Some(Value::List(_))) {
            let pos = self.root.fields.iter().position(|f| f.name() == names::ROOT_BONE).unwrap_or(self.root.fields.len());
            self.root
                .fields
                .insert(pos, Field::new(names::BONES, Value::List(List { item_type: Some(Txt::from("ObjectPtr")), items: vec![] })));
        }
        match &mut self.root.field_mut(names::BONES).expect("inserted").value {
            Value::List(l) => &mut l.items,
            _ => unreachable!(),
        }
    }
    /// Number of bones.
    pub fn bone_count(&self) -> usize {
        self.bone_items().len()
    }
    /// Bone `i` (an inlined `Bone` object).
    pub fn bone(&self, i: usize) -> &Object {
        match &self.bone_items()[i].value {
            Value::Ptr(Ptr { target: Target::Inline(o), .. }) => o,
            Value::Object(o) => o,
            _ => panic!("bone item {i} is not an object (checked on read)"),
        }
    }
    /// Bone `i`, mutably.
    pub fn bone_mut(&mut self, i: usize) -> &mut Object {
        match &mut self.bone_items_mut()[i].value {
            Value::Ptr(Ptr { target: Target::Inline(o), .. }) => o,
            Value::Object(o) => o,
            _ => panic!("bone item {i} is not an object (checked on read)"),
        }
    }
    /// Every bone.
    pub fn bones(&self) -> impl Iterator<Item = &Object> {
        (0..self.bone_count()).map(move |i| self.bone(i))
    }
    /// Bone ID → index.
    pub fn id_map(&self) -> std::collections::HashMap<u64, usize> {
        self.bones().enumerate().filter_map(|(i, b)| b.id.map(|id| (id, i))).collect()
    }
    /// Index of the bone with this name hash.
    pub fn find_hash(&self, hash: u32) -> Option<usize> {
        self.bones().position(|b| b.bone_hash() == Some(hash))
    }
    /// Parent index of every bone (`None` for roots; links to non-bones count as none).
    pub fn parents(&self) -> Vec<Option<usize>> {
        let ids = self.id_map();
        self.bones().map(|b| b.bone_parent().and_then(|p| ids.get(&p).copied())).collect()
    }
    /// Number of all descendants of every bone (ChildBoneCount).
    pub fn descendant_counts(&self) -> Vec<usize> {
        let parents = self.parents();
        descendant_counts(&parents)
    }
    /// The largest object ID in the file.
    pub fn max_id(&self) -> u64 {
        let mut ids = Vec::new();
        collect_ids(&self.root, &mut ids);
        ids.into_iter().max().unwrap_or(0)
    }
    /// The root-bone link.
    pub fn root_bone(&self) -> Option<u64> {
        self.root.link(names::ROOT_BONE)
    }
}

/// Number of all descendants of every node of a parent array, in O(n). Nodes on a cycle get 0.
pub fn descendant_counts(parents: &[Option<usize>]) -> Vec<usize> {
    let n = parents.len();
    let roots = (0..n).filter(|&i| parents[i].is_none_or(|p| p >= n));
    let order = skelport_ir::proc::preorder_from(&skelport_ir::proc::children_of(parents), roots);
    let mut counts = vec![0usize; n];
    for &i in order.iter().rev() {
        if let Some(p) = parents[i] {
            if p < n {
                counts[p] += counts[i] + 1;
            }
        }
    }
    counts
}

/// The hasher for object IDs and other keys taken from the file: foldhash, a few multiplies per
/// `u64` like FxHash, but seeded at random per process (as SipHash is), so that a crafted file
/// cannot choose IDs that collide and make its own read quadratic.
pub type IdHash = foldhash::fast::RandomState;
