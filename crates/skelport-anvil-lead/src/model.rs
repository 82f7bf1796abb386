//! The skeleton seen through the lossless tree, in either form: find the bones, read and write
//! their fields in place. Field names and syntax follow the AnvilToolkit tutorial's examples:
//!
//! | | Standard (`type="0"`) | Schema-Based (`type="1"`) |
//! |---|---|---|
//! | bone | `<Bone ID>` in `<List Name="Bones">` | `<ObjectPtr ID Type="Bone">` |
//! | name | `<Value Name="Name" HashName>` | `<Hash32 Name="BoneID" HashValue>` |
//! | parent | `<ObjectPtr Name="Parent"><Link><Value>` | `<ObjectPtr Name="FatherBone"><Link>` |
//! | vector | `<Vector4 Name><X>…<W>` | `<Vector4 Name>( x, y, z, w )` |
//! | rotation | `<Quat Name><X>…` | `<Quaternion Name>( x, y, z, w )` |
//! | modifiers | `<List Name="BoneModifiers">` | `<DynamicSmallArray Name="Modifiers">` |

use crate::xml::Elem;

/// Which export form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Form {
    Standard,
    Schema,
}

impl Form {
    pub fn parent_field(self) -> &'static str {
        match self {
            Form::Standard => "Parent",
            Form::Schema => "FatherBone",
        }
    }
    pub fn modifiers_field(self) -> &'static str {
        match self {
            Form::Standard => "BoneModifiers",
            Form::Schema => "Modifiers",
        }
    }
    pub fn quat_tag(self) -> &'static str {
        match self {
            Form::Standard => "Quat",
            Form::Schema => "Quaternion",
        }
    }
}

/// Is this element a bone?
pub fn is_bone(e: &Elem, form: Form) -> bool {
    match form {
        Form::Standard => e.name == "Bone",
        Form::Schema => e.attr("Type") == Some("Bone"),
    }
}

/// The element holding the bones.
pub fn bones_container(root: &Elem) -> Option<&Elem> {
    root.named("Bones")
}

pub fn bones_container_mut(root: &mut Elem) -> Option<&mut Elem> {
    root.named_mut("Bones")
}

/// The element's numeric ID.
pub fn id_of(e: &Elem) -> Option<u64> {
    e.attr("ID").and_then(|v| v.trim().parse().ok())
}

/// (hash, label) of a bone.
pub fn name_of(b: &Elem, form: Form) -> Option<(u32, Option<String>)> {
    let (field, label) = match form {
        Form::Standard => (b.named("Name")?, "HashName"),
        Form::Schema => (b.named("BoneID")?, "HashValue"),
    };
    let h = field.text().parse::<u32>().ok()?;
    Some((h, field.attr(label).map(str::to_string)))
}

/// Set a bone's hash and label.
pub fn set_name(b: &mut Elem, form: Form, hash: u32, label: &str) {
    let (field, attr) = match form {
        Form::Standard => ("Name", "HashName"),
        Form::Schema => ("BoneID", "HashValue"),
    };
    if let Some(f) = b.named_mut(field) {
        f.set_text(&hash.to_string());
        f.set_attr(attr, label);
    }
}

/// The target of a link field (`None` when null/empty). `Err` when the text is not a number.
pub fn link(ptr: &Elem, form: Form) -> Result<Option<u64>, String> {
    let Some(l) = ptr.child("Link") else { return Ok(None) };
    let text = match form {
        Form::Standard => l.named("Value").or_else(|| l.elems().next()).map(|v| v.text()).unwrap_or_default(),
        Form::Schema => l.text(),
    };
    if text.is_empty() {
        return Ok(None);
    }
    text.parse::<u64>().map(Some).map_err(|_| format!("link value \"{text}\" is not an ID"))
}

/// Point a link field at `target` (or make it null).
pub fn set_link(ptr: &mut Elem, form: Form, target: Option<u64>) {
    if link(ptr, form).ok().flatten() == target {
        return;
    }
    let name = ptr.attr("Name").unwrap_or("").to_string();
    match target {
        None => {
            ptr.children.clear();
            *ptr = match form {
                Form::Standard => Elem::new("ObjectPtr", &[("Name", &name)]),
                Form::Schema => Elem::new("ObjectPtr", &[("Name", &name), ("PointerType", "Null")]),
            };
        }
        Some(t) => {
            let t = t.to_string();
            match (form, ptr.child_mut("Link")) {
                (Form::Standard, Some(l)) => match l.named_mut("Value") {
                    Some(v) => v.set_text(&t),
                    None => l.push(Elem::with_text("Value", &[("Name", "Value"), ("Type", "UInt64")], &t)),
                },
                (Form::Schema, Some(l)) => {
                    l.set_text(&t);
                    l.set_attr("Path", &t);
                }
                (_, None) => *ptr = new_link(form, &name, Some(t.parse().unwrap_or(0))),
            }
        }
    }
}

/// A fresh link field.
pub fn new_link(form: Form, name: &str, target: Option<u64>) -> Elem {
    match (form, target) {
        (Form::Standard, None) => Elem::new("ObjectPtr", &[("Name", name)]),
        (Form::Schema, None) => Elem::new("ObjectPtr", &[("Name", name), ("PointerType", "Null")]),
        (Form::Standard, Some(t)) => {
            let mut p = Elem::new("ObjectPtr", &[("Name", name)]);
            let mut l = Elem::new("Link", &[]);
            l.push(Elem::with_text("Value", &[("Name", "Value"), ("Type", "UInt64")], &t.to_string()));
            p.push(l);
            p
        }
        (Form::Schema, Some(t)) => {
            let mut p = Elem::new("ObjectPtr", &[("Name", name), ("PointerType", "Link")]);
            p.push(Elem::with_text("Link", &[("Name", name), ("Path", &t.to_string())], &t.to_string()));
            p
        }
    }
}

/// The four number texts of a vector or quaternion field.
pub fn vec4_text(e: &Elem, form: Form) -> Option<[String; 4]> {
    match form {
        Form::Standard => {
            let g = |n: &str| e.child(n).map(|c| c.text());
            Some([g("X")?, g("Y")?, g("Z")?, g("W")?])
        }
        Form::Schema => {
            let t = e.text();
            let inner = t.trim().strip_prefix('(')?.strip_suffix(')')?;
            let v: Vec<String> = inner.split(',').map(|s| s.trim().to_string()).collect();
            (v.len() == 4).then(|| [v[0].clone(), v[1].clone(), v[2].clone(), v[3].clone()])
        }
    }
}

/// Parse the four numbers (lenient: .NET writes `1E-05`, `-0`, `NaN` is refused by the caller).
pub fn vec4(e: &Elem, form: Form) -> Option<[f64; 4]> {
    let t = vec4_text(e, form)?;
    let mut out = [0.0; 4];
    for (o, s) in out.iter_mut().zip(&t) {
        *o = s.parse().ok()?;
    }
    Some(out)
}

/// Shortest round-trip text of a number, as .NET's "R" format writes it (`1E-05` style exponents
/// are not produced; plain decimals are valid input for AnvilToolkit).
pub fn num(v: f64) -> String {
    if v == 0.0 {
        return "0".into();
    }
    // Single-precision values stay short: the file's numbers are f32 in the engine.
    let f = v as f32;
    let mut b = zmij::Buffer::new();
    let s = if f as f64 == v || ((f as f64) - v).abs() <= 1e-9 * v.abs().max(1.0) { b.format(f) } else { b.format(v) };
    s.strip_suffix(".0").unwrap_or(s).to_string()
}

/// Write four numbers into a vector field, keeping each original text whose value is unchanged.
pub fn set_vec4(e: &mut Elem, form: Form, v: [f64; 4]) {
    let old = vec4_text(e, form);
    let texts: Vec<String> = (0..4)
        .map(|i| match &old {
            Some(o) if o[i].parse::<f64>().ok().is_some_and(|x| x == v[i] || (x - v[i]).abs() <= 1e-7 * x.abs().max(1e-3)) => o[i].clone(),
            _ => num(v[i]),
        })
        .collect();
    match form {
        Form::Standard => {
            for (i, n) in ["X", "Y", "Z", "W"].iter().enumerate() {
                match e.child_mut(n) {
                    Some(c) => c.set_text(&texts[i]),
                    None => e.push(Elem::with_text(n, &[], &texts[i])),
                }
            }
        }
        Form::Schema => e.set_text(&format!("( {}, {}, {}, {} )", texts[0], texts[1], texts[2], texts[3])),
    }
}

/// A fresh vector/quaternion field.
pub fn new_vec4(form: Form, tag: &str, name: &str, v: [f64; 4]) -> Elem {
    let mut e = Elem::new(tag, &[("Name", name)]);
    match form {
        Form::Standard => {
            // The tutorial's layout: `<X>0</X> <Y>0</Y> <Z>0</Z> <W>0</W>` on one line.
            e.push_raw("\n");
            for (i, n) in ["X", "Y", "Z", "W"].iter().enumerate() {
                if i > 0 {
                    e.push_raw(" ");
                }
                e.push(Elem::with_text(n, &[], &num(v[i])));
            }
            e.push_raw("\n");
        }
        Form::Schema => e.set_text(&format!("( {}, {}, {}, {} )", num(v[0]), num(v[1]), num(v[2]), num(v[3]))),
    }
    e
}

/// `MirroringType` value.
pub fn mirroring(b: &Elem) -> Option<i64> {
    b.named("MirroringType").and_then(|e| e.text().parse().ok())
}

/// The `BoneMirroringType` names.
pub const MIRRORING: [&str; 8] = [
    "BONEMIRRORING_NONE",
    "BONEMIRRORING_WORLD_TO_WORLD",
    "BONEMIRRORING_WORLD_TO_PELVIS",
    "BONEMIRRORING_PELVIS_TO_WORLD",
    "BONEMIRRORING_PELVIS_TO_BIPED",
    "BONEMIRRORING_BIPED_TO_BIPED",
    "BONEMIRRORING_WEAPONREF",
    "BONEMIRRORING_COUNT",
];

/// A scalar field in either form: Standard `<Value Name Type>`, Schema `<{schema_tag} Name>`.
pub fn new_scalar(form: Form, name: &str, std_type: &str, text: &str) -> Elem {
    match form {
        Form::Standard => Elem::with_text("Value", &[("Name", name), ("Type", std_type)], text),
        Form::Schema => Elem::with_text(schema_tag(std_type), &[("Name", name)], text),
    }
}

/// An enum field in either form.
pub fn new_enum(form: Form, name: &str, enum_type: &str, value_name: &str, value: i64) -> Elem {
    match form {
        Form::Standard => Elem::with_text(
            "Value",
            &[("Name", name), ("Type", "Enum"), ("EnumName", enum_type), ("ValueName", value_name)],
            &value.to_string(),
        ),
        Form::Schema => Elem::with_text("Enum", &[("Name", name), ("Type", enum_type), ("Value", value_name)], &value.to_string()),
    }
}

/// Standard `Type` of a scalar → Schema-Based element name (and back).
pub const SCALARS: [(&str, &str); 10] = [
    ("Single", "Float"),
    ("Double", "Double"),
    ("Bool", "Bool"),
    ("Byte", "Unsigned8"),
    ("UInt16", "Unsigned16"),
    ("UInt32", "Unsigned32"),
    ("UInt64", "Unsigned64"),
    ("Int16", "Signed16"),
    ("Int32", "Signed32"),
    ("Int64", "Signed64"),
];

pub fn schema_tag(std_type: &str) -> &'static str {
    SCALARS.iter().find(|(s, _)| *s == std_type).map(|(_, t)| *t).unwrap_or("Unsigned32")
}

pub fn std_type(schema_tag: &str) -> Option<&'static str> {
    SCALARS.iter().find(|(_, t)| *t == schema_tag).map(|(s, _)| *s)
}
