//! Model → XML text, for both forms.
//!
//! When the target form is the form the model was read in, every element whose value is unchanged
//! is copied from the source text byte for byte (including the whitespace and comments around
//! it); containers whose children changed keep their own tags and the gaps between surviving
//! children; only changed or new values are generated. Otherwise the whole file is generated with
//! two-space indentation and the source's line ending (CRLF for new files, as .NET writes).

use crate::dialect::Dialect;
use crate::error::{AnvilError, Result};
use crate::model::*;
use crate::parse::Parser;
use crate::text::{encode, escape_attr, escape_text, ByteForm, Encoding, Txt};
use crate::xml::Source;
use std::borrow::Cow;
use std::collections::HashMap;

/// The `toolVersion` written into new files when the model has none (ATK 1.3.0 added the
/// Schema-Based exporter; both forms are importable from that version on).
pub const DEFAULT_TOOL_VERSION: &str = "1.3.0";

struct Emitter<'a> {
    out: String,
    form: Form,
    nl: &'static str,
    src: Option<&'a Source>,
    parser: Option<Parser<'a>>,
    /// Bone ID → (index, descendant count), for the Schema-Based Index/ChildBoneCount.
    bone_info: HashMap<u64, (usize, usize)>,
}

fn bool_text(t: &str, capital: bool) -> Cow<'_, str> {
    if t.eq_ignore_ascii_case("true") {
        Cow::Borrowed(if capital { "True" } else { "true" })
    } else if t.eq_ignore_ascii_case("false") {
        Cow::Borrowed(if capital { "False" } else { "false" })
    } else {
        Cow::Borrowed(t)
    }
}

fn schema_scalar_tag(ty: &str) -> &str {
    SCALAR_TYPES.iter().find(|(s, _)| *s == ty).map(|(_, sc)| *sc).unwrap_or(if ty.is_empty() { "Value" } else { ty })
}

fn is_attr_field(f: &Field) -> bool {
    matches!(f.name.as_deref(), Some("BlendWeight" | "UseModifiedBoneMatrix")) && matches!(f.value, Value::Scalar(_))
}

/// How `d` spells the field the model names `name` in an object of class `class`.
fn file_name<'n>(d: &Dialect, class: &str, name: &'n str) -> &'n str {
    if class == "Bone" {
        d.file_bone_field(name)
    } else {
        name
    }
}

fn infer_item_type(items: &[Field]) -> Cow<'static, str> {
    match items.first().map(|f| &f.value) {
        None | Some(Value::Ptr(_)) => Cow::Borrowed("ObjectPtr"),
        Some(Value::Object(_)) => Cow::Borrowed("Object"),
        Some(Value::Scalar(s)) => Cow::Owned(schema_scalar_tag(&s.ty).to_string()),
        Some(Value::Hash(_)) => Cow::Borrowed("Hash32"),
        Some(Value::Enum(_)) => Cow::Borrowed("Enum"),
        Some(Value::Vector(v)) => Cow::Borrowed(v.kind.schema_tag()),
        Some(Value::List(_)) => Cow::Borrowed("DynamicSmallArray"),
        Some(Value::Raw(_)) => Cow::Borrowed("ObjectPtr"),
    }
}

/// Attribute list builder.
struct Tag {
    s: String,
}

impl Tag {
    fn new(name: &str) -> Tag {
        let mut s = String::with_capacity(48);
        s.push('<');
        s.push_str(name);
        Tag { s }
    }
    fn attr(mut self, k: &str, v: &str) -> Tag {
        self.s.push(' ');
        self.s.push_str(k);
        self.s.push_str("=\"");
        self.s.push_str(&escape_attr(v));
        self.s.push('"');
        self
    }
    fn opt(self, k: &str, v: Option<&str>) -> Tag {
        match v {
            Some(v) => self.attr(k, v),
            None => self,
        }
    }
    fn open(mut self) -> String {
        self.s.push('>');
        self.s
    }
    fn empty(mut self) -> String {
        self.s.push_str(" />");
        self.s
    }
}

impl<'a> Emitter<'a> {
    fn same(&self, r: Option<SrcRef>) -> Option<u32> {
        match (self.src, r) {
            (Some(s), Some(r)) if r.source == s.id => Some(r.node),
            _ => None,
        }
    }

    /// The dialect's words.
    #[inline]
    fn d(&self) -> &'static Dialect {
        self.form.dialect()
    }

    fn push(&mut self, s: &str) {
        self.out.push_str(s);
    }

    fn leaf(&mut self, tag: String, text: &str, close: &str) {
        self.out.push_str(&tag);
        self.out.push_str(&escape_text(text));
        self.out.push_str("</");
        self.out.push_str(close);
        self.out.push('>');
    }

    /// Emit a field whose first line is already indented by `indent`.
    fn field(&mut self, f: &Field, indent: &str, class: &str, owner: Option<u64>) {
        if let Some(n) = self.same(f.src) {
            if self.field_from_source(f, n, indent, class, owner) {
                return;
            }
        }
        self.gen_field(f, indent, class, owner);
    }

    // ------------------------------------------------------------------ verbatim paths

    fn field_from_source(&mut self, f: &Field, n: u32, indent: &str, class: &str, owner: Option<u64>) -> bool {
        let s = self.src.expect("same source");
        let tag = s.name(n);
        match &f.value {
            Value::List(l) => {
                let sname = s.attr(n, "Name");
                let fname = f.name.as_deref().map(|x| file_name(self.d(), class, x));
                if tag != self.d().list_tag || sname != fname || s.attr(n, "Type") != l.item_type.as_deref() {
                    return false;
                }
                if l.items.is_empty() {
                    // `<List Name="X" />` or `<List Name="X"></List>`: as written while it stays empty.
                    if !s.has_children(n) {
                        self.push(s.raw(n));
                        return true;
                    }
                    return false;
                }
                if s.self_closing(n) {
                    return false;
                }
                self.push(s.start_tag(n));
                let items: Vec<Cow<'_, Field>> = l.items.iter().map(Cow::Borrowed).collect();
                self.children(n, &items, indent, class, owner);
                self.push(s.end_tag(n));
                true
            }
            // Structural (see crate::dialect): a Standard pointer or embedded object wraps the
            // class-named object element; a Schema-Based `<ObjectPtr>`/`<Object>` is the object.
            Value::Ptr(Ptr { target: Target::Inline(o), base }) => {
                if self.form == Form::Standard && self.same(o.src) == Some(n) {
                    // An item: the element is the object itself.
                    return f.name.is_none() && self.object_from_source(o, n, indent, None, owner);
                }
                if self.form == Form::Schema {
                    return self.object_from_source(o, n, indent, f.name.as_deref(), owner);
                }
                let want = if *base { "BaseObjectPtr" } else { "ObjectPtr" };
                self.wrapper_from_source(f, n, want, o, class, owner)
            }
            Value::Object(o) => {
                if self.form == Form::Schema {
                    return tag == "Object" && self.object_from_source(o, n, indent, f.name.as_deref(), None);
                }
                self.wrapper_from_source(f, n, "BaseObject", o, class, None)
            }
            _ => {
                let parser = self.parser.as_ref().expect("same source");
                let Ok(re) = parser.field(n, class) else { return false };
                if re.name != f.name {
                    return false;
                }
                if re.value == f.value {
                    self.push(s.raw(n));
                    return true;
                }
                // Same kind, only the text changed: keep the tags, replace the content.
                match (&re.value, &f.value) {
                    (Value::Vector(a), Value::Vector(b)) if a.kind == b.kind => {
                        // Structural (see crate::dialect): one `<X>` child per component, or one `( x, y )` text.
                        if self.form == Form::Standard {
                            let kids: Vec<u32> = s.children(n).collect();
                            let (mut from, _) = (s.node(n).start as usize, 0);
                            for (i, &k) in kids.iter().enumerate() {
                                let (cs, ce) = s.content_range(k);
                                self.out.push_str(&s.text[from..cs]);
                                if a.comps[i] == b.comps[i] {
                                    self.out.push_str(&s.text[cs..ce]);
                                } else {
                                    self.out.push_str(&escape_text(&b.comps[i]));
                                }
                                from = ce;
                            }
                            self.out.push_str(&s.text[from..s.node(n).end as usize]);
                        } else {
                            self.push(s.start_tag(n));
                            let inner = b.comps.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ");
                            self.push(&format!("( {inner} )"));
                            self.push(s.end_tag(n));
                        }
                        true
                    }
                    (Value::Scalar(a), Value::Scalar(b)) if a.ty == b.ty && a.attrs == b.attrs && !s.self_closing(n) => {
                        self.replace_content(n, &b.text);
                        true
                    }
                    (Value::Hash(a), Value::Hash(b)) if a.label == b.label && !s.self_closing(n) => {
                        self.replace_content(n, &b.text);
                        true
                    }
                    (Value::Enum(a), Value::Enum(b)) if a.ty == b.ty && a.value_name == b.value_name && !s.self_closing(n) => {
                        self.replace_content(n, &b.text);
                        true
                    }
                    _ => false,
                }
            }
        }
    }

    fn replace_content(&mut self, n: u32, text: &str) {
        let s = self.src.expect("same source");
        self.out.push_str(s.start_tag(n));
        self.out.push_str(&escape_text(text));
        self.out.push_str(s.end_tag(n));
    }

    /// A Standard `<ObjectPtr Name="X">` / `<BaseObject Name="X">` holding one object element.
    #[allow(clippy::too_many_arguments)]
    fn wrapper_from_source(&mut self, f: &Field, n: u32, want: &str, o: &Object, class: &str, owner: Option<u64>) -> bool {
        let s = self.src.expect("same source");
        let fname = f.name.as_deref().map(|x| file_name(self.d(), class, x));
        if s.name(n) != want || s.attr(n, "Name") != fname || s.attrs(n).any(|a| a.name != "Name") {
            return false;
        }
        let kids: Vec<u32> = s.children(n).collect();
        let [inner] = kids.as_slice() else { return false };
        if self.same(o.src) != Some(*inner) {
            return false;
        }
        let mark = self.out.len();
        self.push(s.start_tag(n));
        self.push(s.gap_before(*inner));
        let ii = s.indent_of(*inner).to_string();
        if !self.object_from_source(o, *inner, &ii, None, owner) {
            self.out.truncate(mark);
            return false;
        }
        self.push(s.trailing_gap(n));
        self.push(s.end_tag(n));
        true
    }

    /// The fields of `o` to write in this form, with Index/ChildBoneCount recomputed.
    fn object_fields<'o>(&self, o: &'o Object, owner: Option<u64>) -> Vec<Cow<'o, Field>> {
        let bone = o.class == "Bone";
        let mut out: Vec<Cow<'o, Field>> = Vec::with_capacity(o.fields.len() + 2);
        // Index, ChildBoneCount and Owner are computed values: a dialect that stores them gets
        // them recomputed, the other keeps them only where its file had them.
        match self.d().stores_hierarchy {
            false => {
                for f in &o.fields {
                    if is_attr_field(f) {
                        continue;
                    }
                    // Schema-Based-only fields are dropped, unless this Standard file had them.
                    let here = self.same(f.src).is_some();
                    if !here && owner.is_some() && f.name() == names::OWNER && matches!(f.value, Value::Ptr(_)) {
                        continue;
                    }
                    if !here && bone && matches!(f.name(), names::INDEX | names::CHILD_BONE_COUNT) {
                        continue;
                    }
                    out.push(Cow::Borrowed(f));
                }
            }
            true => {
                if let Some(owner) = owner {
                    if o.field(names::OWNER).map(|f| !matches!(f.value, Value::Ptr(_))).unwrap_or(true) {
                        out.push(Cow::Owned(Field::new(
                            names::OWNER,
                            Value::Ptr(Ptr { target: Target::Link(Link { id: owner, label: None }), base: false }),
                        )));
                    }
                }
                let info = if bone { o.id.and_then(|id| self.bone_info.get(&id).copied()) } else { None };
                let (mut has_index, mut has_count) = (false, false);
                for f in &o.fields {
                    if let (Some(owner), names::OWNER, Value::Ptr(p)) = (owner, f.name(), &f.value) {
                        if !matches!(&p.target, Target::Link(l) if l.id == owner) {
                            let mut nf = f.clone();
                            nf.value = Value::Ptr(Ptr { target: Target::Link(Link { id: owner, label: None }), base: false });
                            out.push(Cow::Owned(nf));
                            continue;
                        }
                    }
                    if let (Some((idx, count)), name @ (names::INDEX | names::CHILD_BONE_COUNT)) = (info, f.name()) {
                        let want = if name == names::INDEX {
                            has_index = true;
                            idx
                        } else {
                            has_count = true;
                            count
                        };
                        let cur = match &f.value {
                            Value::Scalar(s) => s.text.trim().parse::<usize>().ok(),
                            _ => None,
                        };
                        if cur == Some(want) {
                            out.push(Cow::Borrowed(f));
                        } else {
                            let mut nf = f.clone();
                            nf.value =
                                Value::Scalar(Scalar { ty: Txt::from_static("Byte"), text: Txt::from(want.to_string()), attrs: vec![] });
                            out.push(Cow::Owned(nf));
                        }
                        continue;
                    }
                    out.push(Cow::Borrowed(f));
                }
                if let Some((idx, count)) = info {
                    if !has_index {
                        out.push(Cow::Owned(Field::new(
                            names::INDEX,
                            Value::Scalar(Scalar { ty: Txt::from_static("Byte"), text: Txt::from(idx.to_string()), attrs: vec![] }),
                        )));
                    }
                    if !has_count {
                        out.push(Cow::Owned(Field::new(
                            names::CHILD_BONE_COUNT,
                            Value::Scalar(Scalar { ty: Txt::from_static("Byte"), text: Txt::from(count.to_string()), attrs: vec![] }),
                        )));
                    }
                }
            }
        }
        out
    }

    /// The start tag a model object would get, as a sorted attribute multiset, for comparison.
    fn header_attrs(&self, o: &Object, name: Option<&str>, ptr: bool) -> Vec<(String, String)> {
        let mut v: Vec<(String, String)> = Vec::new();
        if let Some(id) = o.id {
            v.push(("ID".into(), id.to_string()));
        }
        // Structural (see crate::dialect): modifier fields as attributes of the class-named tag, against
        // `Type`, `Name` and `PointerType` attributes.
        match self.form {
            Form::Standard => {
                for f in o.fields.iter().filter(|f| is_attr_field(f)) {
                    if let Value::Scalar(sc) = &f.value {
                        v.push((f.name().to_string(), sc.text.to_string()));
                    }
                }
            }
            Form::Schema => {
                v.push(("Type".into(), o.class.to_string()));
                if let Some(n) = name {
                    v.push(("Name".into(), n.to_string()));
                }
                if ptr {
                    v.push(("PointerType".into(), "Inlined".into()));
                }
            }
        }
        for (k, val) in &o.attrs {
            v.push((k.to_string(), val.to_string()));
        }
        v.sort();
        v
    }

    fn object_from_source(&mut self, o: &Object, n: u32, indent: &str, name: Option<&str>, owner: Option<u64>) -> bool {
        let s = self.src.expect("same source");
        let tag = s.name(n);
        // Structural (see crate::dialect): the object element is its class, or `<ObjectPtr>`/`<Object>`.
        let ptr = self.form == Form::Schema && tag == "ObjectPtr";
        match self.form {
            Form::Standard if tag != o.class.as_str() => return false,
            Form::Schema if tag != "ObjectPtr" && tag != "Object" => return false,
            _ => {}
        }
        let mut src_attrs: Vec<(String, String)> = s.attrs(n).map(|a| (a.name.to_string(), a.value().into_owned())).collect();
        src_attrs.sort();
        let header_same = src_attrs == self.header_attrs(o, name, ptr);
        let fields = self.object_fields(o, owner);
        if s.self_closing(n) {
            if header_same && fields.is_empty() {
                self.push(s.raw(n));
                return true;
            }
            return false;
        }
        if fields.is_empty() {
            if s.has_children(n) {
                return false;
            }
            // `<X ...></X>` with nothing inside stays in that shape.
            if header_same {
                self.push(s.raw(n));
            } else {
                let t = self.object_tag(o, name, ptr);
                self.push(&t.open());
                self.push(s.content(n));
                self.push(s.end_tag(n));
            }
            return true;
        }
        if header_same {
            self.push(s.start_tag(n));
        } else {
            let t = self.object_tag(o, name, ptr);
            self.push(&t.open());
        }
        let item_owner = if o.class == "Bone" { o.id } else { None };
        self.children_of_object(n, &fields, indent, &o.class, item_owner);
        self.push(s.end_tag(n));
        true
    }

    fn children_of_object(&mut self, n: u32, fields: &[Cow<'_, Field>], indent: &str, class: &str, bone_id: Option<u64>) {
        // Items of a bone's Modifiers list are owned by the bone.
        let s = self.src.expect("same source");
        let child_indent = s.children(n).next().map(|c| s.indent_of(c).to_string()).unwrap_or_else(|| format!("{indent}  "));
        for f in fields {
            let owner = if f.name() == names::MODIFIERS { bone_id } else { None };
            match self.same(f.src) {
                Some(c) if s.node(c).parent == n => {
                    self.push(s.gap_before(c));
                    let ci = s.indent_of(c).to_string();
                    self.field_in(f, &ci, class, owner);
                }
                _ => {
                    self.push(self.nl);
                    self.push(&child_indent);
                    self.field_in(f, &child_indent, class, owner);
                }
            }
        }
        self.push(s.trailing_gap(n));
    }

    /// A field inside an object: `owner` is the bone ID when the field is a bone's Modifiers list.
    fn field_in(&mut self, f: &Field, indent: &str, class: &str, owner: Option<u64>) {
        // The owner is passed to the *items* of the list, handled in `children`/`gen_list`.
        self.field(f, indent, class, owner)
    }

    /// Items of a list that has a source element `n`.
    fn children(&mut self, n: u32, items: &[Cow<'_, Field>], indent: &str, class: &str, owner: Option<u64>) {
        let s = self.src.expect("same source");
        let child_indent = s.children(n).next().map(|c| s.indent_of(c).to_string()).unwrap_or_else(|| format!("{indent}  "));
        for f in items {
            match self.same(f.src) {
                Some(c) if s.node(c).parent == n => {
                    self.push(s.gap_before(c));
                    let ci = s.indent_of(c).to_string();
                    self.item(f, &ci, class, owner);
                }
                _ => {
                    self.push(self.nl);
                    self.push(&child_indent);
                    self.item(f, &child_indent, class, owner);
                }
            }
        }
        self.push(s.trailing_gap(n));
    }

    /// A list item: inlined objects in a Modifiers list get `owner`.
    fn item(&mut self, f: &Field, indent: &str, class: &str, owner: Option<u64>) {
        match (&f.value, owner) {
            (Value::Ptr(Ptr { target: Target::Inline(o), .. }), Some(_)) => {
                if let Some(n) = self.same(f.src) {
                    // Structural (see crate::dialect): a Standard item is the object element itself.
                    let ok = match self.form {
                        Form::Standard => self.same(o.src) == Some(n) && self.object_from_source(o, n, indent, None, owner),
                        Form::Schema => self.object_from_source(o, n, indent, None, owner),
                    };
                    if ok {
                        return;
                    }
                }
                self.gen_object_item(o, indent, owner);
            }
            _ => self.field(f, indent, class, None),
        }
    }

    // ------------------------------------------------------------------ generation

    fn object_tag(&self, o: &Object, name: Option<&str>, ptr: bool) -> Tag {
        let id = o.id.map(|i| i.to_string());
        // Structural (see crate::dialect): as in `header_attrs`.
        match self.form {
            Form::Standard => {
                let mut t = Tag::new(&o.class).opt("ID", id.as_deref());
                for f in o.fields.iter().filter(|f| is_attr_field(f)) {
                    if let Value::Scalar(sc) = &f.value {
                        let v = if sc.ty == "Bool" { bool_text(&sc.text, false) } else { Cow::Borrowed(sc.text.as_str()) };
                        t = t.attr(f.name(), &v);
                    }
                }
                for (k, v) in &o.attrs {
                    t = t.attr(k, v);
                }
                t
            }
            Form::Schema => {
                let mut t =
                    Tag::new(if ptr { "ObjectPtr" } else { "Object" }).opt("Name", name).opt("ID", id.as_deref()).attr("Type", &o.class);
                if ptr {
                    t = t.attr("PointerType", "Inlined");
                }
                for (k, v) in &o.attrs {
                    t = t.attr(k, v);
                }
                t
            }
        }
    }

    /// Generate an object element: Standard `<Class ID>`, Schema `<ObjectPtr ... Inlined>` or `<Object>`.
    fn gen_object(&mut self, o: &Object, indent: &str, name: Option<&str>, ptr: bool, owner: Option<u64>) {
        let fields = self.object_fields(o, owner);
        let t = self.object_tag(o, name, ptr);
        if fields.is_empty() {
            self.push(&t.empty());
            return;
        }
        self.push(&t.open());
        let ci = format!("{indent}  ");
        let bone_id = if o.class == "Bone" { o.id } else { None };
        for f in &fields {
            self.push(self.nl);
            self.push(&ci);
            let own = if f.name() == names::MODIFIERS { bone_id } else { None };
            self.field(f, &ci, &o.class, own);
        }
        self.push(self.nl);
        self.push(indent);
        self.push("</");
        self.push(if self.form == Form::Standard {
            &o.class
        } else if ptr {
            "ObjectPtr"
        } else {
            "Object"
        });
        self.push(">");
    }

    fn gen_object_item(&mut self, o: &Object, indent: &str, owner: Option<u64>) {
        self.gen_object(o, indent, None, self.form == Form::Schema, owner);
    }

    fn gen_field(&mut self, f: &Field, indent: &str, class: &str, owner: Option<u64>) {
        let name: Option<&str> = f.name.as_deref().map(|n| file_name(self.d(), class, n));
        let nl = self.nl;
        let d = self.d();
        match &f.value {
            Value::List(l) => {
                // The item type is said always (Schema-Based) or where the items do not tell it.
                let inferred = infer_item_type(&l.items);
                let ty = match l.item_type.as_deref() {
                    Some(t) if d.list_type_always || t != inferred.as_ref() => Some(t),
                    Some(_) => None,
                    None => d.list_type_always.then_some(inferred.as_ref()),
                };
                let t = Tag::new(d.list_tag).opt("Name", name).opt("Type", ty);
                return self.gen_list(t, &l.items, indent, class, owner, d.list_tag);
            }
            Value::Raw(r) => return self.push(r),
            _ => {}
        }
        // Scalars, vectors, pointers and objects differ in structure, not only in words: typed
        // `<Value Type>` elements, `<X>` children, `<Link><Value>` and class-named object tags
        // (Standard) against typed tags, `( x, y )` text, `PointerType` and `<Object Type>`.
        match self.form {
            Form::Standard => match &f.value {
                Value::Scalar(sc) => {
                    let mut t = Tag::new("Value").opt("Name", name).attr("Type", &sc.ty);
                    for (k, v) in &sc.attrs {
                        t = t.attr(k, v);
                    }
                    let text = if sc.ty == "Bool" { bool_text(&sc.text, true) } else { Cow::Borrowed(sc.text.as_str()) };
                    self.leaf(t.open(), &text, "Value");
                }
                Value::Hash(h) => {
                    let t = Tag::new("Value").opt("Name", name).attr("Type", "UInt32").opt("HashName", h.label.as_deref());
                    self.leaf(t.open(), &h.text, "Value");
                }
                Value::Enum(e) => {
                    let t = match INT_ENUMS.iter().find(|ie| Some(ie.field) == name && e.ty == ie.schema_type) {
                        Some(ie) => Tag::new("Value").opt("Name", name).attr("Type", ie.standard_type),
                        None => Tag::new("Value")
                            .opt("Name", name)
                            .attr("Type", "Enum")
                            .attr("EnumName", &e.ty)
                            .opt("ValueName", e.value_name.as_deref()),
                    };
                    self.leaf(t.open(), &e.text, "Value");
                }
                Value::Vector(v) => {
                    let tag = d.vector_tag(v.kind);
                    self.push(&Tag::new(tag).opt("Name", name).open());
                    self.push(nl);
                    self.push(indent);
                    self.push("  ");
                    for (i, c) in v.comps.iter().enumerate() {
                        if i > 0 {
                            self.push(" ");
                        }
                        let ax = ["X", "Y", "Z", "W"][i.min(3)];
                        self.leaf(format!("<{ax}>"), c, ax);
                    }
                    self.push(nl);
                    self.push(indent);
                    self.push(&format!("</{tag}>"));
                }
                Value::Ptr(p) => {
                    let tag = if p.base { "BaseObjectPtr" } else { "ObjectPtr" };
                    match &p.target {
                        Target::Null => self.push(&Tag::new(tag).opt("Name", name).empty()),
                        Target::Link(l) => {
                            self.push(&Tag::new(tag).opt("Name", name).open());
                            let id = l.id.to_string();
                            let label = l.label.as_deref().filter(|lb| *lb != id);
                            self.push(&format!("{nl}{indent}  <Link>{nl}{indent}    "));
                            let t = Tag::new("Value").attr("Name", "Value").attr("Type", "UInt64").opt("Path", label);
                            self.leaf(t.open(), &id, "Value");
                            self.push(&format!("{nl}{indent}  </Link>{nl}{indent}</{tag}>"));
                        }
                        Target::Inline(o) => {
                            if name.is_some() || p.base {
                                self.push(&Tag::new(tag).opt("Name", name).open());
                                let ci = format!("{indent}  ");
                                self.push(nl);
                                self.push(&ci);
                                self.gen_object(o, &ci, None, false, owner);
                                self.push(nl);
                                self.push(indent);
                                self.push(&format!("</{tag}>"));
                            } else {
                                self.gen_object(o, indent, None, false, owner);
                            }
                        }
                    }
                }
                Value::Object(o) => {
                    self.push(&Tag::new("BaseObject").opt("Name", name).open());
                    let ci = format!("{indent}  ");
                    self.push(nl);
                    self.push(&ci);
                    self.gen_object(o, &ci, None, false, None);
                    self.push(nl);
                    self.push(indent);
                    self.push("</BaseObject>");
                }
                Value::List(_) | Value::Raw(_) => unreachable!("written above"),
            },
            Form::Schema => match &f.value {
                Value::Scalar(sc) => {
                    let tag = schema_scalar_tag(&sc.ty).to_string();
                    let mut t = Tag::new(&tag).opt("Name", name);
                    for (k, v) in &sc.attrs {
                        t = t.attr(k, v);
                    }
                    let text = if sc.ty == "Bool" { bool_text(&sc.text, true) } else { Cow::Borrowed(sc.text.as_str()) };
                    self.leaf(t.open(), &text, &tag);
                }
                Value::Hash(h) => {
                    let t = Tag::new("Hash32").opt("Name", name).opt("HashValue", h.label.as_deref());
                    self.leaf(t.open(), &h.text, "Hash32");
                }
                Value::Enum(e) => {
                    let t = Tag::new("Enum").opt("Name", name).attr("Type", &e.ty).opt("Value", e.value_name.as_deref());
                    self.leaf(t.open(), &e.text, "Enum");
                }
                Value::Vector(v) => {
                    let tag = d.vector_tag(v.kind);
                    let inner = v.comps.iter().map(|c| c.as_str()).collect::<Vec<_>>().join(", ");
                    self.leaf(Tag::new(tag).opt("Name", name).open(), &format!("( {inner} )"), tag);
                }
                Value::Ptr(p) => match &p.target {
                    Target::Null => self.push(&Tag::new("ObjectPtr").opt("Name", name).attr("PointerType", "Null").empty()),
                    Target::Link(l) => {
                        self.push(&Tag::new("ObjectPtr").opt("Name", name).attr("PointerType", "Link").open());
                        let id = l.id.to_string();
                        self.push(nl);
                        self.push(indent);
                        self.push("  ");
                        let t = Tag::new("Link").opt("Name", name).attr("Path", l.label.as_deref().unwrap_or(&id));
                        self.leaf(t.open(), &id, "Link");
                        self.push(nl);
                        self.push(indent);
                        self.push("</ObjectPtr>");
                    }
                    Target::Inline(o) => self.gen_object(o, indent, name, true, owner),
                },
                Value::Object(o) => self.gen_object(o, indent, name, false, None),
                Value::List(_) | Value::Raw(_) => unreachable!("written above"),
            },
        }
    }

    fn gen_list(&mut self, t: Tag, items: &[Field], indent: &str, class: &str, owner: Option<u64>, close: &str) {
        if items.is_empty() {
            self.push(&t.empty());
            return;
        }
        self.push(&t.open());
        let ci = format!("{indent}  ");
        for it in items {
            self.push(self.nl);
            self.push(&ci);
            self.item(it, &ci, class, owner);
        }
        self.push(self.nl);
        self.push(indent);
        self.push(&format!("</{close}>"));
    }
}

/// The `encoding=` label for a byte form.
fn encoding_label(b: ByteForm) -> &'static str {
    match b.encoding {
        Encoding::Utf8 => "utf-8",
        Encoding::Utf16Le | Encoding::Utf16Be => "utf-16",
    }
}

impl AnvilSkeleton {
    /// Check the bone count against the form (Schema-Based: Unsigned8 indices, 255 bones;
    /// Standard: 65,535) and an optional lower limit.
    pub fn check_limit(&self, form: Form, limit: Option<usize>) -> Result<()> {
        check_bone_count(self.bone_count(), form, limit)
    }

    /// Write the skeleton as text in `form`. Unchanged parts are copied verbatim when `form` is the
    /// form the model was read in.
    pub fn to_text(&self, form: Form) -> Result<String> {
        self.check_limit(form, None)?;
        let src = self.source.as_deref().filter(|_| self.form == form);
        let nl = src.map(|s| s.newline()).unwrap_or("\r\n");
        let mut bone_info = HashMap::new();
        if form.dialect().stores_hierarchy {
            let counts = self.descendant_counts();
            for (i, b) in self.bones().enumerate() {
                if let Some(id) = b.id {
                    bone_info.insert(id, (i, counts[i]));
                }
            }
        }
        let mut e = Emitter {
            out: String::with_capacity(src.map(|s| s.text.len() + 1024).unwrap_or(4096 + self.bone_count() * 1200)),
            form,
            nl,
            src,
            parser: src.map(|s| Parser { src: s, form, file: "" }),
            bone_info,
        };
        match src {
            Some(s) => {
                e.push(s.prolog());
                let done = self.same_root(&mut e, s);
                if !done {
                    e.gen_object(&self.root, "", None, false, None);
                }
                e.push(s.epilog());
            }
            None => {
                let bytes = if form == self.form { self.bytes } else { form.default_bytes() };
                let v = self.tool_version.as_deref().unwrap_or(DEFAULT_TOOL_VERSION);
                e.push(&format!("<?xml version=\"1.0\" encoding=\"{}\"?>{nl}", encoding_label(bytes)));
                e.push(&format!("<?info tool=\"AnvilToolkit\" toolVersion=\"{}\" type=\"{}\"?>{nl}", escape_attr(v), form.type_attr()));
                e.gen_object(&self.root, "", None, false, None);
            }
        }
        Ok(e.out)
    }

    fn same_root(&self, e: &mut Emitter<'_>, s: &Source) -> bool {
        match e.same(self.root.src) {
            Some(n) if n == s.root => e.object_from_source(&self.root, n, "", None, None),
            _ => false,
        }
    }

    /// Write the skeleton as bytes in `form`: the encoding it was read in when the form is the
    /// same, else the form's own (Standard: UTF-16 LE with BOM; Schema-Based: UTF-8).
    pub fn to_bytes(&self, form: Form) -> Result<Vec<u8>> {
        let text = self.to_text(form)?;
        let bytes = if form == self.form { self.bytes } else { form.default_bytes() };
        Ok(encode(&text, bytes))
    }
}

/// Check a bone count against a form (Schema-Based: Unsigned8 indices, 255 bones; Standard:
/// 65,535) and an optional lower limit.
pub fn check_bone_count(n: usize, form: Form, limit: Option<usize>) -> Result<()> {
    let d = form.dialect();
    if let Some(reason) = d.limit_reason.filter(|_| n > d.max_bones) {
        return Err(AnvilError::Limit(format!("{n} bones do not fit the {} form: {reason}", d.title)));
    }
    if n > 65_535 {
        return Err(AnvilError::Limit(format!("{n} bones exceed the engine's limit of 65535 bones (16-bit bone indices)")));
    }
    if let Some(l) = limit {
        if n > l {
            return Err(AnvilError::Limit(format!("{n} bones exceed the bone limit of {l}")));
        }
    }
    Ok(())
}
