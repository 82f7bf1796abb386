//! Standard ↔ Schema-Based: a structural rewrite of the tree, element by element, following the
//! tutorial's comparison table. Every value's text is carried over unchanged, so Standard →
//! Schema-Based → Standard gives back every value; elements with no known counterpart are copied
//! verbatim.

use crate::model::{self, Form};
use crate::xml::{Doc, Elem, Item};

fn bool_text(s: &str, form: Form) -> String {
    let t = s.trim();
    let v = t.eq_ignore_ascii_case("true") || t == "1";
    match form {
        // The tutorial writes the attribute form lower-case and the element form capitalised.
        Form::Standard => if v { "true" } else { "false" }.into(),
        Form::Schema => if v { "True" } else { "False" }.into(),
    }
}

/// Convert a whole document to `to` (no-op when it is already in that form).
pub fn convert(doc: &Doc, from: Form, to: Form) -> Doc {
    if from == to {
        return doc.clone();
    }
    let mut prolog = Vec::new();
    for i in &doc.prolog {
        if let Item::Raw(r) = i {
            let mut r = r.clone();
            if r.starts_with("<?xml") {
                r = match to {
                    Form::Standard => {
                        r.replace("encoding=\"utf-8\"", "encoding=\"utf-16\"").replace("encoding=\"UTF-8\"", "encoding=\"utf-16\"")
                    }
                    Form::Schema => {
                        r.replace("encoding=\"utf-16\"", "encoding=\"utf-8\"").replace("encoding=\"UTF-16\"", "encoding=\"utf-8\"")
                    }
                };
            } else if r.starts_with("<?info") {
                r = match to {
                    Form::Standard => r.replace("type=\"1\"", "type=\"0\""),
                    Form::Schema => r.replace("type=\"0\"", "type=\"1\""),
                };
            }
            prolog.push(Item::Raw(r));
        }
    }
    let root = match to {
        Form::Schema => root_to_schema(&doc.root),
        Form::Standard => root_to_standard(&doc.root),
    };
    Doc { prolog, root, epilog: doc.epilog.clone() }
}

fn copy_children(src: &Elem, dst: &mut Elem, f: &mut dyn FnMut(&Elem) -> Elem) {
    for c in &src.children {
        match c {
            Item::Raw(r) => dst.push_raw(r),
            Item::Elem(e) => dst.push(f(e)),
        }
    }
}

fn root_to_schema(r: &Elem) -> Elem {
    let mut out = Elem::new("Object", &[("Type", "Skeleton")]);
    for (k, v) in &r.attrs {
        out.set_attr(k, v);
    }
    copy_children(r, &mut out, &mut |e| field_to_schema(e, None));
    out
}

fn root_to_standard(r: &Elem) -> Elem {
    let mut out = Elem::new("Skeleton", &[]);
    for (k, v) in &r.attrs {
        if k != "Type" {
            out.set_attr(k, v);
        }
    }
    copy_children(r, &mut out, &mut |e| field_to_standard(e, None));
    out
}

/// One field (or object) Standard → Schema-Based. `owner` is the enclosing bone's ID.
fn field_to_schema(e: &Elem, owner: Option<&str>) -> Elem {
    let name = e.attr("Name").unwrap_or("");
    match e.name.as_str() {
        "Bone" => {
            let id = e.attr("ID").unwrap_or("0").to_string();
            let mut out = Elem::new("ObjectPtr", &[("ID", &id), ("Type", "Bone"), ("PointerType", "Inlined")]);
            copy_children(e, &mut out, &mut |c| field_to_schema(c, Some(&id)));
            out
        }
        "Value" => match e.attr("Type") {
            Some("Enum") if name == "SkeletonType" || e.attr("EnumName").is_some() => Elem::with_text(
                "Enum",
                &[("Name", name), ("Type", e.attr("EnumName").unwrap_or("")), ("Value", e.attr("ValueName").unwrap_or(""))],
                &e.text(),
            ),
            _ if name == "Name" && owner.is_some() => {
                Elem::with_text("Hash32", &[("Name", "BoneID"), ("HashValue", e.attr("HashName").unwrap_or(""))], &e.text())
            }
            _ if name == "SkeletonType" => {
                let v: usize = e.text().parse().unwrap_or(0);
                Elem::with_text(
                    "Enum",
                    &[("Name", name), ("Type", "SkeletonType"), ("Value", SKELETON_TYPES.get(v).copied().unwrap_or(""))],
                    &e.text(),
                )
            }
            Some(_) if e.attr("HashName").is_some() => {
                Elem::with_text("Hash32", &[("Name", name), ("HashValue", e.attr("HashName").unwrap_or(""))], &e.text())
            }
            Some(t) => Elem::with_text(model::schema_tag(t), &[("Name", name)], &e.text()),
            None => e.clone(),
        },
        "Vector4" | "Quat" => match model::vec4_text(e, Form::Standard) {
            Some(t) => Elem::with_text(
                if e.name == "Quat" { "Quaternion" } else { "Vector4" },
                &[("Name", name)],
                &format!("( {}, {}, {}, {} )", t[0], t[1], t[2], t[3]),
            ),
            None => e.clone(),
        },
        "ObjectPtr" | "BaseObjectPtr" => {
            if let Ok(target) = model::link(e, Form::Standard) {
                if e.child("Link").is_some() || e.elems().next().is_none() {
                    let pname = if name == "Parent" && owner.is_some() { "FatherBone" } else { name };
                    return model::new_link(Form::Schema, pname, target);
                }
            }
            // An inlined object behind a pointer.
            let mut out = Elem::new("ObjectPtr", &[("Name", name)]);
            copy_children(e, &mut out, &mut |c| field_to_schema(c, owner));
            out
        }
        "List" => {
            let list_name = if name == "BoneModifiers" { "Modifiers" } else { name };
            let mut out = Elem::new("DynamicSmallArray", &[("Name", list_name), ("Type", "ObjectPtr")]);
            let modifiers = name == "BoneModifiers";
            copy_children(e, &mut out, &mut |c| {
                if modifiers {
                    modifier_to_schema(c, owner)
                } else if c.name == "BaseObject" && c.elems().count() == 1 {
                    object_to_schema(c.elems().next().expect("one"), owner)
                } else {
                    field_to_schema(c, owner)
                }
            });
            out
        }
        _ => e.clone(),
    }
}

/// The SkeletonType enum names.
pub const SKELETON_TYPES: [&str; 9] = [
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

fn object_to_schema(o: &Elem, owner: Option<&str>) -> Elem {
    let mut out = Elem::new("ObjectPtr", &[("ID", o.attr("ID").unwrap_or("0")), ("Type", &o.name), ("PointerType", "Inlined")]);
    copy_children(o, &mut out, &mut |c| field_to_schema(c, owner));
    out
}

fn modifier_to_schema(m: &Elem, owner: Option<&str>) -> Elem {
    if m.attr("ID").is_none() {
        return m.clone();
    }
    let mut out = Elem::new("ObjectPtr", &[("ID", m.attr("ID").unwrap_or("0")), ("Type", &m.name), ("PointerType", "Inlined")]);
    let indent = m.children.iter().find_map(|c| if let Item::Raw(r) = c { Some(r.clone()) } else { None }).unwrap_or_default();
    let owner_id = owner.and_then(|o| o.parse().ok());
    out.push_raw(&indent);
    out.push(model::new_link(Form::Schema, "Owner", owner_id));
    if let Some(b) = m.attr("BlendWeight") {
        out.push_raw(&indent);
        out.push(Elem::with_text("Float", &[("Name", "BlendWeight")], b));
    }
    if let Some(u) = m.attr("UseModifiedBoneMatrix") {
        out.push_raw(&indent);
        out.push(Elem::with_text("Bool", &[("Name", "UseModifiedBoneMatrix")], &bool_text(u, Form::Schema)));
    }
    copy_children(m, &mut out, &mut |c| field_to_schema(c, owner));
    out
}

/// One field Schema-Based → Standard.
fn field_to_standard(e: &Elem, owner: Option<&str>) -> Elem {
    let name = e.attr("Name").unwrap_or("");
    match e.name.as_str() {
        "ObjectPtr" if e.attr("Type") == Some("Bone") => {
            let id = e.attr("ID").unwrap_or("0").to_string();
            let mut out = Elem::new("Bone", &[("ID", &id)]);
            // Index and ChildBoneCount are computed by the toolkit in the Standard form: drop them
            // with the whitespace before them.
            for c in &e.children {
                match c {
                    Item::Elem(f) if matches!(f.attr("Name"), Some("Index") | Some("ChildBoneCount")) => {
                        if let Some(Item::Raw(_)) = out.children.last() {
                            out.children.pop();
                        }
                    }
                    Item::Elem(f) => out.push(field_to_standard(f, Some(&id))),
                    Item::Raw(r) => out.push_raw(r),
                }
            }
            out
        }
        "Hash32" if name == "BoneID" => {
            Elem::with_text("Value", &[("Name", "Name"), ("Type", "UInt32"), ("HashName", e.attr("HashValue").unwrap_or(""))], &e.text())
        }
        "Hash32" => {
            Elem::with_text("Value", &[("Name", name), ("Type", "UInt32"), ("HashName", e.attr("HashValue").unwrap_or(""))], &e.text())
        }
        "Enum" if name == "SkeletonType" => Elem::with_text("Value", &[("Name", name), ("Type", "UInt32")], &e.text()),
        "Enum" => Elem::with_text(
            "Value",
            &[("Name", name), ("Type", "Enum"), ("EnumName", e.attr("Type").unwrap_or("")), ("ValueName", e.attr("Value").unwrap_or(""))],
            &e.text(),
        ),
        "Vector4" | "Quaternion" => match model::vec4(e, Form::Schema).and(model::vec4_text(e, Form::Schema)) {
            Some(t) => {
                let mut out = Elem::new(if e.name == "Quaternion" { "Quat" } else { "Vector4" }, &[("Name", name)]);
                out.push_raw("\n");
                for (i, n) in ["X", "Y", "Z", "W"].iter().enumerate() {
                    if i > 0 {
                        out.push_raw(" ");
                    }
                    out.push(Elem::with_text(n, &[], &t[i]));
                }
                out.push_raw("\n");
                out
            }
            None => e.clone(),
        },
        "ObjectPtr" if e.attr("PointerType") == Some("Link") || e.attr("PointerType") == Some("Null") => {
            let target = model::link(e, Form::Schema).ok().flatten();
            let pname = if name == "FatherBone" { "Parent" } else { name };
            let mut l = model::new_link(Form::Standard, pname, target);
            if name == "IKData" {
                l.name = "BaseObjectPtr".into();
            }
            l
        }
        "ObjectPtr" if e.attr("PointerType").is_none() && e.elems().next().is_none() && name == "IKData" => {
            Elem::new("BaseObjectPtr", &[("Name", name)])
        }
        "DynamicSmallArray" if e.attr("Type") == Some("ObjectPtr") => {
            let modifiers = name == "Modifiers" && owner.is_some();
            let list_name = if modifiers { "BoneModifiers" } else { name };
            let mut out = Elem::new("List", &[("Name", list_name)]);
            copy_children(e, &mut out, &mut |c| {
                if c.attr("PointerType") == Some("Inlined") && c.attr("Type").is_some_and(|t| t != "Bone") {
                    if modifiers {
                        modifier_to_standard(c, owner)
                    } else {
                        let mut b = Elem::new("BaseObject", &[]);
                        b.push(object_to_standard(c, owner));
                        b
                    }
                } else {
                    field_to_standard(c, owner)
                }
            });
            out
        }
        tag if e.attr("Type").is_none() && model::std_type(tag).is_some() && !name.is_empty() => {
            let t = model::std_type(tag).expect("checked");
            Elem::with_text("Value", &[("Name", name), ("Type", t)], &e.text())
        }
        _ => e.clone(),
    }
}

fn object_to_standard(o: &Elem, owner: Option<&str>) -> Elem {
    let mut out = Elem::new(o.attr("Type").unwrap_or("Object"), &[("ID", o.attr("ID").unwrap_or("0"))]);
    copy_children(o, &mut out, &mut |c| field_to_standard(c, owner));
    out
}

fn modifier_to_standard(m: &Elem, owner: Option<&str>) -> Elem {
    let mut out = Elem::new(m.attr("Type").unwrap_or("BoneModifier"), &[("ID", m.attr("ID").unwrap_or("0"))]);
    if let Some(b) = m.named("BlendWeight") {
        out.set_attr("BlendWeight", &b.text());
    }
    if let Some(u) = m.named("UseModifiedBoneMatrix") {
        out.set_attr("UseModifiedBoneMatrix", &bool_text(&u.text(), Form::Standard));
    }
    let mut skip_next_ws = false;
    let mut pending_ws: Option<String> = None;
    for c in &m.children {
        match c {
            Item::Elem(f) if matches!(f.attr("Name"), Some("Owner") | Some("BlendWeight") | Some("UseModifiedBoneMatrix")) => {
                skip_next_ws = true;
                pending_ws = None;
            }
            Item::Elem(f) => {
                if let Some(w) = pending_ws.take() {
                    out.push_raw(&w);
                }
                skip_next_ws = false;
                out.push(field_to_standard(f, owner));
            }
            Item::Raw(r) => {
                if skip_next_ws {
                    pending_ws = Some(r.clone());
                } else {
                    out.push_raw(r);
                }
            }
        }
    }
    if let Some(w) = pending_ws {
        out.push_raw(&w);
    }
    out
}
