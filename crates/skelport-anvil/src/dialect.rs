//! The two AnvilToolkit XML dialects, each described once as data.
//!
//! Everything that is only a different word or number between the Standard and the Schema-Based
//! exporter (tag names, the `type` of the `<?info?>` line, the byte form, the bone limit, which
//! elements are pointers, how Bone fields are spelled, the format name) is a field of a
//! [`Dialect`]; the reader, the model parser, the writer and the checks look it up here instead of
//! branching on [`Form`]. What remains a `match` on the form is where the two differ in
//! structure, not in words: scalars (`<Value Type="Single">` vs `<Float>`), vectors (`<X>…</X>`
//! children vs `( x, y, z )` text), pointers (`<Link><Value …>` vs `PointerType` and a bare
//! `<Link>`) and object headers (the class as the tag with modifier fields as attributes vs
//! `<Object Type=…>`/`<ObjectPtr … PointerType="Inlined">`). Each of those places says so.

use crate::model::{Form, VecKind, BONE_FIELD_NAMES};
use crate::text::{ByteForm, Encoding};

/// One dialect's words and numbers. Get it with [`Form::dialect`].
#[derive(Debug)]
pub struct Dialect {
    /// The form this describes.
    pub form: Form,
    /// What messages call the form (`Standard`, `Schema-Based`).
    pub title: &'static str,
    /// The skelport format name (`anvil`, `anvil-schema`).
    pub format_name: &'static str,
    /// The one-line description of the format.
    pub description: &'static str,
    /// The bad-input suite (`testdata/bad/<suite>`).
    pub suite: &'static str,
    /// The fuzz target.
    pub fuzz_target: &'static str,
    /// The `type` attribute of the `<?info?>` line.
    pub type_attr: &'static str,
    /// The byte form new files are written in.
    pub bytes: ByteForm,
    /// The most bones a file can hold.
    pub max_bones: usize,
    /// Why [`Dialect::max_bones`] is the limit, for the error past it (`None`: the engine's own
    /// limit is the only one).
    pub limit_reason: Option<&'static str>,
    /// The list element (`<List>`, `<DynamicSmallArray>`).
    pub list_tag: &'static str,
    /// Whether a written list always says its item `Type` (Schema-Based), or only when it is not
    /// the one inferred from its items (Standard).
    pub list_type_always: bool,
    /// The quaternion element (`<Quat>`, `<Quaternion>`); `Vector2/3/4` are the same in both.
    pub quat_tag: &'static str,
    /// The elements that are pointers (null, a link, or an inlined object).
    pub pointer_tags: &'static [&'static str],
    /// The element of an object embedded by value (`<BaseObject>` wrapping the object, or
    /// `<Object>` being it).
    pub embedded_tag: &'static str,
    /// The attribute that names an object's class (`None`: the element name is the class).
    pub class_attr: Option<&'static str>,
    /// How the file spells Bone fields that the model stores in the engine spelling:
    /// `(file, model)` pairs (`Name` is `BoneID` …); empty where the two agree.
    pub bone_field_names: &'static [(&'static str, &'static str)],
    /// Whether bones store `Index` and `ChildBoneCount` and modifiers an explicit `Owner` link
    /// (written, recomputed, on every bone).
    pub stores_hierarchy: bool,
    /// Whether `Bool` values must be the words `True`/`False` (Standard) rather than any text the
    /// type accepts.
    pub bool_words: bool,
    /// The `<?info?>`-less root element that marks a skeleton: its tag, and the attribute that
    /// must be present (`ID=`) or equal `Skeleton` (`Type="Skeleton"`).
    pub root_tag: &'static str,
    /// The attribute text a sniffer looks for to tell a skeleton root (`<Skeleton`,
    /// `Type="Skeleton"`).
    pub root_marker: &'static str,
}

/// The Standard exporter: UTF-16 LE with BOM, `type="0"`, `<Skeleton ID>`, `<Value Name Type>`.
pub const STANDARD: Dialect = Dialect {
    form: Form::Standard,
    title: "Standard",
    format_name: "anvil",
    description: "AnvilToolkit Skeleton XML, Standard form (UTF-16, type=\"0\"): lossless, Assassin's Creed",
    suite: "anvil",
    fuzz_target: "anvil",
    type_attr: "0",
    bytes: ByteForm { encoding: Encoding::Utf16Le, bom: true },
    max_bones: 65_535,
    limit_reason: None,
    list_tag: "List",
    list_type_always: false,
    quat_tag: "Quat",
    pointer_tags: &["ObjectPtr", "BaseObjectPtr"],
    embedded_tag: "BaseObject",
    class_attr: None,
    bone_field_names: BONE_FIELD_NAMES,
    stores_hierarchy: false,
    bool_words: true,
    root_tag: "Skeleton",
    root_marker: "<Skeleton",
};

/// The Schema-Based exporter (ATK 1.3.0+): UTF-8, `type="1"`, `<Object Type="Skeleton">`, typed
/// elements, `Unsigned8` `Index`/`ChildBoneCount` (so at most 255 bones).
pub const SCHEMA: Dialect = Dialect {
    form: Form::Schema,
    title: "Schema-Based",
    format_name: "anvil-schema",
    description: "AnvilToolkit Skeleton XML, Schema-Based form (UTF-8, type=\"1\", at most 255 bones)",
    suite: "anvil-schema",
    fuzz_target: "anvil_schema",
    type_attr: "1",
    bytes: ByteForm { encoding: Encoding::Utf8, bom: false },
    max_bones: 255,
    limit_reason: Some(
        "it stores Index and ChildBoneCount as Unsigned8, which holds at most 255 bones \
                 (use the Standard form, `anvil`, for Unity and later, up to 65535)",
    ),
    list_tag: "DynamicSmallArray",
    list_type_always: true,
    quat_tag: "Quaternion",
    pointer_tags: &["ObjectPtr"],
    embedded_tag: "Object",
    class_attr: Some("Type"),
    bone_field_names: &[],
    stores_hierarchy: true,
    bool_words: false,
    root_tag: "Object",
    root_marker: "Type=\"Skeleton\"",
};

/// Both dialects, Standard first.
pub const DIALECTS: [&Dialect; 2] = [&STANDARD, &SCHEMA];

impl Dialect {
    /// The dialect whose `<?info?>` `type` is `t`.
    pub fn by_type_attr(t: &str) -> Option<&'static Dialect> {
        DIALECTS.into_iter().find(|d| d.type_attr == t)
    }

    /// Whether element `tag` is a pointer.
    #[inline]
    pub fn is_pointer_tag(&self, tag: &str) -> bool {
        self.pointer_tags.contains(&tag)
    }

    /// The model (engine) spelling of a Bone field spelled `name` in the file.
    #[inline]
    pub fn model_bone_field<'n>(&self, name: &'n str) -> &'n str {
        match self.bone_field_names.iter().find(|(file, _)| *file == name) {
            Some((_, model)) => model,
            None => name,
        }
    }

    /// The file spelling of a Bone field the model spells `name`.
    #[inline]
    pub fn file_bone_field<'n>(&self, name: &'n str) -> &'n str {
        match self.bone_field_names.iter().find(|(_, model)| *model == name) {
            Some((file, _)) => file,
            None => name,
        }
    }

    /// The element of a vector of `kind`.
    pub fn vector_tag(&self, kind: VecKind) -> &'static str {
        match kind {
            VecKind::Vector2 => "Vector2",
            VecKind::Vector3 => "Vector3",
            VecKind::Vector4 => "Vector4",
            VecKind::Quat => self.quat_tag,
        }
    }

    /// The vector kind of element `tag`, if it is a vector of this dialect.
    #[inline]
    pub fn vector_kind(&self, tag: &str) -> Option<VecKind> {
        match tag {
            "Vector2" => Some(VecKind::Vector2),
            "Vector3" => Some(VecKind::Vector3),
            "Vector4" => Some(VecKind::Vector4),
            t if t == self.quat_tag => Some(VecKind::Quat),
            _ => None,
        }
    }
}

impl Form {
    /// This form's words and numbers.
    #[inline]
    pub const fn dialect(self) -> &'static Dialect {
        match self {
            Form::Standard => &STANDARD,
            Form::Schema => &SCHEMA,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dialect_is_found_by_its_form_and_its_type() {
        for d in DIALECTS {
            assert_eq!(d.form.dialect().format_name, d.format_name);
            assert_eq!(Dialect::by_type_attr(d.type_attr).unwrap().form, d.form);
            for (file, model) in d.bone_field_names {
                assert_eq!(d.model_bone_field(file), *model);
                assert_eq!(d.file_bone_field(model), *file);
            }
            for k in [VecKind::Vector2, VecKind::Vector3, VecKind::Vector4, VecKind::Quat] {
                assert_eq!(d.vector_kind(d.vector_tag(k)), Some(k));
            }
        }
        assert_eq!(STANDARD.vector_kind("Quaternion"), None);
        assert_eq!(SCHEMA.vector_kind("Quat"), None);
    }
}
