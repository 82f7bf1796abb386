//! XML tree → model, for both forms.

use crate::dialect::{Dialect, DIALECTS};
use crate::error::{AnvilError, Result};
use crate::model::*;
use crate::text::{decode, unescape, ByteForm, Txt};
use crate::xml::Source;
use std::sync::Arc;

/// Which form a text is in: the `<?info ... type="0|1"?>` line, else the root element.
pub fn detect_form(src: &Source) -> Option<Form> {
    if let Some(d) = info_attr(src.prolog(), "type").and_then(|t| Dialect::by_type_attr(&t)) {
        return Some(d.form);
    }
    let root = src.name(src.root);
    DIALECTS
        .into_iter()
        .find(|d| root == d.root_tag && d.class_attr.is_none_or(|a| src.attr(src.root, a) == Some("Skeleton")))
        .map(|d| d.form)
}

/// An attribute of the `<?info ...?>` processing instruction in a prolog.
pub fn info_attr(prolog: &str, name: &str) -> Option<String> {
    let p = prolog.find("<?info")?;
    let end = prolog[p..].find("?>")? + p;
    let body = &prolog[p + 6..end];
    let key = format!("{name}=");
    let k = body.find(&key)?;
    let rest = &body[k + key.len()..];
    let q = rest.chars().next()?;
    if q != '"' && q != '\'' {
        return None;
    }
    let v = &rest[1..];
    Some(v[..v.find(q)?].to_string())
}

/// What a pointer element holds, as both readers see it.
pub(crate) enum PtrParts {
    /// A null pointer.
    Null,
    /// A link to this ID.
    Link(u64),
    /// Something else (an inlined object, or an element kept verbatim).
    Other,
}

/// A Standard `<ObjectPtr>`/`<BaseObjectPtr>` or Schema-Based `<ObjectPtr>` element as a link or
/// null; `Err(node)` when a link's ID is not a number.
pub(crate) fn ptr_parts(s: &Source, n: u32, form: Form) -> std::result::Result<PtrParts, u32> {
    let mut kids = s.children(n);
    let (k0, k1) = (kids.next(), kids.next());
    // Structural (see crate::dialect): `<Link><Value>id</Value></Link>` against `PointerType` and a bare `<Link>`.
    match form {
        Form::Standard => {
            if s.attrs(n).any(|a| a.name != "Name") {
                return Ok(PtrParts::Other);
            }
            match (k0, k1) {
                (None, _) => Ok(PtrParts::Null),
                (Some(l), None) if s.name(l) == "Link" => {
                    let mut inner = s.children(l);
                    match (inner.next(), inner.next()) {
                        (Some(v), None) if s.name(v) == "Value" && s.attrs(v).all(|a| matches!(a.name, "Name" | "Type" | "Path")) => {
                            let id = s.content(v).trim().parse::<u64>().map_err(|_| v)?;
                            Ok(PtrParts::Link(id))
                        }
                        _ => Ok(PtrParts::Other),
                    }
                }
                _ => Ok(PtrParts::Other),
            }
        }
        Form::Schema => {
            let pt = s.attr(n, "PointerType");
            let one_link = k1.is_none() && k0.map(|k| s.name(k) == "Link").unwrap_or(false);
            if pt == Some("Link") || (pt.is_none() && one_link) {
                match (k0, k1) {
                    (Some(l), None)
                        if s.name(l) == "Link" && !s.has_children(l) && s.attrs(n).all(|a| matches!(a.name, "Name" | "PointerType")) =>
                    {
                        let id = s.content(l).trim().parse::<u64>().map_err(|_| l)?;
                        Ok(PtrParts::Link(id))
                    }
                    _ => Ok(PtrParts::Other),
                }
            } else if pt == Some("Inlined") || s.attr(n, "ID").is_some() {
                Ok(PtrParts::Other)
            } else if k0.is_none() && s.attrs(n).all(|a| matches!(a.name, "Name" | "PointerType")) {
                Ok(PtrParts::Null)
            } else {
                Ok(PtrParts::Other)
            }
        }
    }
}

/// The kind of a vector element name in a form.
pub(crate) fn vector_kind(tag: &str, form: Form) -> Option<VecKind> {
    form.dialect().vector_kind(tag)
}

/// The component texts (raw, as written) of a vector element, or `None` when it is not one the
/// readers interpret (it is then kept verbatim). `f` receives each component.
pub(crate) fn vector_parts<'s>(s: &'s Source, n: u32, form: Form, mut f: impl FnMut(&'s str)) -> Option<VecKind> {
    let kind = vector_kind(s.name(n), form)?;
    if s.attrs(n).any(|a| a.name != "Name") {
        return None;
    }
    // Structural (see crate::dialect): `<X>…</X>` children against `( x, y, z )` text.
    match form {
        Form::Standard => {
            const AXES: [&str; 4] = ["X", "Y", "Z", "W"];
            let mut count = 0;
            for (i, k) in s.children(n).enumerate() {
                if i >= kind.len() || !s.name_is(k, AXES[i]) || s.has_children(k) || s.attr_count(k) != 0 {
                    return None;
                }
                count += 1;
            }
            if count != kind.len() {
                return None;
            }
            for k in s.children(n) {
                f(s.content(k));
            }
            Some(kind)
        }
        Form::Schema => {
            if s.has_children(n) {
                return None;
            }
            let t = s.content(n).trim();
            let inner = t.strip_prefix('(').and_then(|t| t.strip_suffix(')'))?;
            if inner.split(',').count() != kind.len() {
                return None;
            }
            for p in inner.split(',') {
                f(p.trim());
            }
            Some(kind)
        }
    }
}

pub(crate) struct Parser<'a> {
    pub src: &'a Source,
    pub form: Form,
    pub file: &'a str,
}

impl<'a> Parser<'a> {
    fn sref(&self, n: u32) -> Option<SrcRef> {
        Some(SrcRef { source: self.src.id, node: n })
    }

    /// A Txt for a slice of the source text (resolving references when it has any).
    fn tv(&self, s: &str) -> Txt {
        if s.contains('&') {
            return Txt::from(unescape(s).unwrap_or(std::borrow::Cow::Borrowed(s)));
        }
        let base = self.src.text.as_ptr() as usize;
        let p = s.as_ptr() as usize;
        if p >= base && p + s.len() <= base + self.src.text.len() {
            Txt::shared(&self.src.text, p - base, p - base + s.len())
        } else {
            Txt::from(s)
        }
    }

    pub fn err(&self, n: u32, message: impl Into<String>) -> AnvilError {
        let (line, column) = self.src.pos(n);
        AnvilError::Structure { file: self.file.to_string(), line, column, message: message.into() }
    }

    fn attr_txt(&self, n: u32, name: &str) -> Option<Txt> {
        self.src.attr(n, name).map(|r| self.tv(r))
    }

    fn content(&self, n: u32) -> Txt {
        self.tv(self.src.content(n))
    }

    fn parse_id(&self, n: u32, raw: &str) -> Result<u64> {
        raw.trim().parse::<u64>().map_err(|_| self.err(n, format!("<{}>: ID '{raw}' is not an unsigned 64-bit number", self.src.name(n))))
    }

    fn canonical_name(&self, class: &str, name: Txt) -> Txt {
        if class == "Bone" {
            if let Some((_, c)) = self.form.dialect().bone_field_names.iter().find(|(s, _)| name == *s) {
                return Txt::from_static(c);
            }
        }
        name
    }

    /// Parse the element `n` as a field of an object of class `class`.
    pub fn field(&self, n: u32, class: &str) -> Result<Field> {
        let name = self.attr_txt(n, "Name").map(|t| self.canonical_name(class, t));
        // Structural (see crate::dialect): `<Value Type>` and class-named elements against typed tags.
        let value = match self.form {
            Form::Standard => self.std_value(n, name.as_deref(), class)?,
            Form::Schema => self.schema_value(n, name.as_deref())?,
        };
        Ok(Field { name, value, src: self.sref(n) })
    }

    fn raw(&self, n: u32) -> Value {
        Value::Raw(self.tv_raw(n))
    }

    fn tv_raw(&self, n: u32) -> Txt {
        let node = self.src.node(n);
        Txt::shared(&self.src.text, node.start as usize, node.end as usize)
    }

    fn list_items(&self, n: u32, class: &str) -> Result<Vec<Field>> {
        self.src.children(n).map(|c| self.field(c, class)).collect()
    }

    fn vector(&self, n: u32) -> Value {
        let mut comps = Vec::with_capacity(4);
        match vector_parts(self.src, n, self.form, |c| comps.push(self.tv(c))) {
            Some(kind) => Value::Vector(Vector { kind, comps }),
            None => self.raw(n),
        }
    }

    // ---------------- Standard ----------------

    fn std_value(&self, n: u32, name: Option<&str>, class: &str) -> Result<Value> {
        let s = self.src;
        let tag = s.name(n);
        Ok(match tag {
            "Value" => {
                if s.has_children(n) {
                    return Ok(self.raw(n));
                }
                // One pass over the attributes.
                let (mut ty, mut hash_name, mut enum_name, mut value_name, mut others) = (None, None, None, None, 0usize);
                for a in s.attrs(n) {
                    match a.name {
                        "Name" => {}
                        "Type" => ty = Some(a.raw),
                        "HashName" => hash_name = Some(a.raw),
                        "EnumName" => enum_name = Some(a.raw),
                        "ValueName" => value_name = Some(a.raw),
                        _ => others += 1,
                    }
                }
                let ty_s = ty.unwrap_or("");
                let text = self.content(n);
                let plain = hash_name.is_none() && enum_name.is_none() && value_name.is_none();
                if ty_s == "Enum" && hash_name.is_none() && others == 0 {
                    Value::Enum(EnumValue {
                        ty: enum_name.map(|r| self.tv(r)).unwrap_or(Txt::from_static("")),
                        value_name: value_name.map(|r| self.tv(r)),
                        text,
                    })
                } else if (hash_name.is_some() || (class == "Bone" && name == Some(names::BONE_ID)))
                    && others == 0
                    && enum_name.is_none()
                    && value_name.is_none()
                {
                    Value::Hash(Hash { text, label: hash_name.map(|r| self.tv(r)) })
                } else if let Some(ie) =
                    INT_ENUMS.iter().find(|e| Some(e.field) == name && ty_s == e.standard_type).filter(|_| plain && others == 0)
                {
                    let value_name = text.trim().parse::<usize>().ok().and_then(|i| ie.values.get(i)).map(|v| Txt::from_static(v));
                    Value::Enum(EnumValue { ty: Txt::from_static(ie.schema_type), value_name, text })
                } else {
                    let attrs = if plain && others == 0 {
                        Vec::new()
                    } else {
                        s.attrs(n).filter(|a| !matches!(a.name, "Name" | "Type")).map(|a| (self.tv(a.name), self.tv(a.raw))).collect()
                    };
                    Value::Scalar(Scalar { ty: ty.map(|r| self.tv(r)).unwrap_or(Txt::from_static("")), text, attrs })
                }
            }
            "Vector2" | "Vector3" | "Vector4" | "Quat" => self.vector(n),
            "ObjectPtr" | "BaseObjectPtr" => {
                let base = tag == "BaseObjectPtr";
                if s.attrs(n).any(|a| a.name != "Name") {
                    return Ok(self.raw(n));
                }
                let mut kids = s.children(n);
                let (k0, k1) = (kids.next(), kids.next());
                match (k0, k1) {
                    (None, _) => Value::Ptr(Ptr { target: Target::Null, base }),
                    (Some(l), None) if s.name(l) == "Link" => {
                        let mut inner = s.children(l);
                        let (id_node, label) = match (inner.next(), inner.next()) {
                            (Some(v), None) if s.name(v) == "Value" && s.attrs(v).all(|a| matches!(a.name, "Name" | "Type" | "Path")) => {
                                (v, self.attr_txt(v, "Path"))
                            }
                            _ => return Ok(self.raw(n)),
                        };
                        let raw = s.content(id_node);
                        let id = self.parse_id(id_node, raw)?;
                        Value::Ptr(Ptr { target: Target::Link(Link { id, label }), base })
                    }
                    (Some(o), None) if s.attr(o, "ID").is_some() => {
                        Value::Ptr(Ptr { target: Target::Inline(Box::new(self.std_object(o)?)), base })
                    }
                    _ => self.raw(n),
                }
            }
            "List" => {
                if s.attrs(n).any(|a| !matches!(a.name, "Name" | "Type")) {
                    return Ok(self.raw(n));
                }
                Value::List(List { item_type: self.attr_txt(n, "Type"), items: self.list_items(n, class)? })
            }
            "BaseObject" => {
                let kids: Vec<u32> = s.children(n).collect();
                match kids.as_slice() {
                    [o] if s.attr(*o, "ID").is_some() && s.attrs(n).all(|a| a.name == "Name") => {
                        Value::Object(Box::new(self.std_object(*o)?))
                    }
                    _ => self.raw(n),
                }
            }
            _ if s.attr(n, "ID").is_some() && s.attr(n, "Name").is_none() => {
                Value::Ptr(Ptr { target: Target::Inline(Box::new(self.std_object(n)?)), base: false })
            }
            _ => self.raw(n),
        })
    }

    /// A Standard object element (`<Class ID=... [BlendWeight=...] ...>`).
    pub fn std_object(&self, n: u32) -> Result<Object> {
        let s = self.src;
        let class = self.tv(s.name(n));
        let mut id = None;
        let mut attrs = Vec::new();
        let mut fields = Vec::new();
        for a in s.attrs(n) {
            match a.name {
                "ID" => id = Some(self.parse_id(n, a.raw)?),
                "BlendWeight" => fields.push(Field {
                    name: Some(Txt::from_static("BlendWeight")),
                    value: Value::Scalar(Scalar { ty: Txt::from_static("Single"), text: self.tv(a.raw), attrs: vec![] }),
                    src: None,
                }),
                "UseModifiedBoneMatrix" => fields.push(Field {
                    name: Some(Txt::from_static("UseModifiedBoneMatrix")),
                    value: Value::Scalar(Scalar { ty: Txt::from_static("Bool"), text: self.tv(a.raw), attrs: vec![] }),
                    src: None,
                }),
                _ => attrs.push((self.tv(a.name), self.tv(a.raw))),
            }
        }
        for c in s.children(n) {
            fields.push(self.field(c, &class)?);
        }
        Ok(Object { class, id, attrs, fields, src: self.sref(n) })
    }

    // ---------------- Schema-Based ----------------

    fn schema_value(&self, n: u32, name: Option<&str>) -> Result<Value> {
        let s = self.src;
        let tag = s.name(n);
        Ok(match tag {
            "Hash32" => {
                if s.has_children(n) || s.attrs(n).any(|a| !matches!(a.name, "Name" | "HashValue")) {
                    return Ok(self.raw(n));
                }
                Value::Hash(Hash { text: self.content(n), label: self.attr_txt(n, "HashValue") })
            }
            "Enum" => {
                if s.has_children(n) || s.attrs(n).any(|a| !matches!(a.name, "Name" | "Type" | "Value")) {
                    return Ok(self.raw(n));
                }
                Value::Enum(EnumValue {
                    ty: self.attr_txt(n, "Type").unwrap_or(Txt::from_static("")),
                    value_name: self.attr_txt(n, "Value"),
                    text: self.content(n),
                })
            }
            "Vector2" | "Vector3" | "Vector4" | "Quaternion" => self.vector(n),
            "ObjectPtr" => {
                let pt = s.attr(n, "PointerType");
                let base = name.map(|nm| BASE_PTR_FIELDS.contains(&nm)).unwrap_or(false);
                let kids: Vec<u32> = s.children(n).collect();
                if pt == Some("Link") || (pt.is_none() && kids.len() == 1 && s.name(kids[0]) == "Link") {
                    match kids.as_slice() {
                        [l] if s.name(*l) == "Link"
                            && !s.has_children(*l)
                            && s.attrs(n).all(|a| matches!(a.name, "Name" | "PointerType")) =>
                        {
                            let id = self.parse_id(*l, s.content(*l))?;
                            Value::Ptr(Ptr { target: Target::Link(Link { id, label: self.attr_txt(*l, "Path") }), base })
                        }
                        _ => self.raw(n),
                    }
                } else if pt == Some("Inlined") || s.attr(n, "ID").is_some() {
                    Value::Ptr(Ptr { target: Target::Inline(Box::new(self.schema_object(n)?)), base })
                } else if kids.is_empty() && s.attrs(n).all(|a| matches!(a.name, "Name" | "PointerType")) {
                    Value::Ptr(Ptr { target: Target::Null, base })
                } else {
                    self.raw(n)
                }
            }
            "Object" => Value::Object(Box::new(self.schema_object(n)?)),
            "DynamicSmallArray" => {
                if s.attrs(n).any(|a| !matches!(a.name, "Name" | "Type")) {
                    return Ok(self.raw(n));
                }
                // Items belong to the object that owns the list; the class only matters for Bone
                // field names, which never occur inside lists.
                Value::List(List { item_type: self.attr_txt(n, "Type"), items: self.list_items(n, "")? })
            }
            _ if !s.has_children(n) => {
                let ty = SCALAR_TYPES.iter().find(|(_, sc)| *sc == tag).map(|(st, _)| Txt::from_static(st)).unwrap_or_else(|| self.tv(tag));
                let attrs = s.attrs(n).filter(|a| a.name != "Name").map(|a| (self.tv(a.name), self.tv(a.raw))).collect();
                Value::Scalar(Scalar { ty, text: self.content(n), attrs })
            }
            _ => self.raw(n),
        })
    }

    /// A Schema-Based object element (`<ObjectPtr ID Type PointerType="Inlined">`, `<Object>`).
    pub fn schema_object(&self, n: u32) -> Result<Object> {
        let s = self.src;
        let mut id = None;
        let mut class = None;
        let mut attrs = Vec::new();
        for a in s.attrs(n) {
            match a.name {
                "ID" => id = Some(self.parse_id(n, a.raw)?),
                "Type" => class = Some(self.tv(a.raw)),
                "Name" | "PointerType" => {}
                _ => attrs.push((self.tv(a.name), self.tv(a.raw))),
            }
        }
        let class = class.ok_or_else(|| self.err(n, format!("<{}> object without a Type attribute", s.name(n))))?;
        let mut fields = Vec::new();
        for c in s.children(n) {
            fields.push(self.field(c, &class)?);
        }
        Ok(Object { class, id, attrs, fields, src: self.sref(n) })
    }

    /// The root object.
    pub fn root(&self) -> Result<Object> {
        let r = self.src.root;
        // Structural (see crate::dialect): a class-named root with an ID against `<Object Type>`.
        match self.form {
            Form::Standard => {
                if self.src.attr(r, "ID").is_none() {
                    return Err(self.err(r, format!("root element <{}> has no ID (expected <Skeleton ID=\"...\">)", self.src.name(r))));
                }
                self.std_object(r)
            }
            Form::Schema => {
                if self.src.name(r) != "Object" {
                    return Err(self.err(r, format!("root element is <{}>, expected <Object Type=\"Skeleton\">", self.src.name(r))));
                }
                self.schema_object(r)
            }
        }
    }
}

impl AnvilSkeleton {
    /// Read a skeleton from file bytes (UTF-16 with or without BOM, or UTF-8; either form).
    pub fn parse(bytes: &[u8], file: &str) -> Result<AnvilSkeleton> {
        let (text, form) =
            decode(bytes).map_err(|e| AnvilError::Encoding { file: file.to_string(), offset: e.offset, message: e.message })?;
        Self::parse_text(text, form, file)
    }

    /// Read a skeleton from decoded text; `bytes` records how it was stored.
    pub fn parse_text(text: String, bytes: ByteForm, file: &str) -> Result<AnvilSkeleton> {
        let src = Source::parse(text).map_err(|e| AnvilError::Syntax {
            file: file.to_string(),
            line: e.line,
            column: e.column,
            message: e.message,
        })?;
        let form = detect_form(&src).ok_or_else(|| {
            let (line, column) = src.pos(src.root);
            AnvilError::Structure {
                file: file.to_string(),
                line,
                column,
                message: format!(
                    "not an AnvilToolkit skeleton: no <?info tool=\"AnvilToolkit\" type=\"0|1\"?> line and the root element is <{}>",
                    src.name(src.root)
                ),
            }
        })?;
        let p = Parser { src: &src, form, file };
        let root = p.root()?;
        if root.class != "Skeleton" {
            return Err(p.err(src.root, format!("the root object is a {}, not a Skeleton", root.class)));
        }
        // Every Bones item must be an inlined Bone object with an ID.
        match root.field(names::BONES) {
            Some(f) => match &f.value {
                Value::List(l) => {
                    for it in &l.items {
                        let node = it.src.map(|s| s.node).unwrap_or(src.root);
                        match &it.value {
                            Value::Ptr(Ptr { target: Target::Inline(o), .. }) if o.id.is_some() && o.class == "Bone" => {}
                            _ => return Err(p.err(node, "an item of the Bones list is not a bone with an ID")),
                        }
                    }
                }
                _ => return Err(p.err(f.src.map(|s| s.node).unwrap_or(src.root), "Bones is not a list")),
            },
            None => return Err(p.err(src.root, "the skeleton has no Bones list")),
        }
        let tool_version = info_attr(src.prolog(), "toolVersion");
        Ok(AnvilSkeleton { form, bytes, tool_version, root, source: Some(Arc::new(src)) })
    }

    /// File position of a model element, when it was read from this model's source.
    pub(crate) fn pos_of(&self, r: Option<SrcRef>) -> (usize, usize) {
        match (&self.source, r) {
            (Some(s), Some(r)) if r.source == s.id => s.pos(r.node),
            _ => (0, 0),
        }
    }
}
