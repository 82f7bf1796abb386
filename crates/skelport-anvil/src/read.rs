//! Element tree → IR directly: the reading path of the `Format` impls.
//!
//! Building the full [`crate::model`] of a 65,535-bone file means millions of small values; the
//! IR needs only each bone's ID, hash, links and transforms. This reader takes them straight from
//! the tree with the same helpers the model parser uses (so the numbers are bit-identical, which
//! the writer relies on to tell unchanged bones), checks IDs and links as strictly, and keeps the
//! text for the writer. The model is built only when a document is edited or converted.

use crate::error::{AnvilError, Result};
use crate::ir::{build_document, BoneData, Pose, ReadInfo};
use crate::model::{names, parse_number, Form, BONE_FIELD_NAMES};
use crate::names::Names;
use crate::parse::{detect_form, ptr_parts, vector_parts, PtrParts};
use crate::text::{unescape, ByteForm};
use crate::xml::Source;
use skelport_ir::{DQuat, DVec3, Diagnostics, Document};
use std::collections::HashSet;
use std::sync::Arc;

struct Ctx<'a> {
    src: &'a Source,
    form: Form,
    file: &'a str,
}

impl<'a> Ctx<'a> {
    fn err(&self, n: u32, message: impl Into<String>) -> AnvilError {
        let (line, column) = self.src.pos(n);
        AnvilError::Structure { file: self.file.to_string(), line, column, message: message.into() }
    }

    fn parse_id(&self, n: u32, raw: &str) -> Result<u64> {
        raw.trim().parse::<u64>().map_err(|_| self.err(n, format!("<{}>: ID '{raw}' is not an unsigned 64-bit number", self.src.name(n))))
    }

    /// A field name as the model stores it.
    fn field_name(&self, n: u32, in_bone: bool) -> Option<&'a str> {
        let s: &'a str = self.src.attr(n, "Name")?;
        if self.form == Form::Standard && in_bone {
            if let Some((_, c)) = BONE_FIELD_NAMES.iter().find(|(st, _)| *st == s) {
                return Some(c);
            }
        }
        Some(s)
    }

    fn is_pointer(&self, n: u32) -> bool {
        match self.form {
            Form::Standard => matches!(self.src.name(n), "ObjectPtr" | "BaseObjectPtr"),
            Form::Schema => self.src.name(n) == "ObjectPtr",
        }
    }

    /// The link or null of a pointer field element (`None` for anything else).
    fn link(&self, n: u32) -> Result<Option<Option<u64>>> {
        if !self.is_pointer(n) {
            return Ok(None);
        }
        match ptr_parts(self.src, n, self.form) {
            Ok(PtrParts::Null) => Ok(Some(None)),
            Ok(PtrParts::Link(id)) => Ok(Some(Some(id))),
            Ok(PtrParts::Other) => Ok(None),
            Err(v) => Err(self.parse_id(v, self.src.content(v)).unwrap_err()),
        }
    }

    /// A vector field's numbers, as `Object::vector` gives them.
    fn numbers(&self, n: u32) -> Option<([f64; 4], usize)> {
        let mut out = [0.0; 4];
        let mut len = 0;
        let mut ok = true;
        vector_parts(self.src, n, self.form, |c| match parse_number(&unescape(c).unwrap_or(std::borrow::Cow::Borrowed(c))) {
            Some(v) if len < 4 => {
                out[len] = v;
                len += 1;
            }
            _ => ok = false,
        })?;
        ok.then_some((out, len))
    }

    /// A bone's name hash and label, as `Object::bone_hash`/`bone_label` give them.
    fn hash(&self, n: u32) -> (Option<u32>, Option<String>) {
        let s = self.src;
        if s.has_children(n) {
            return (None, None);
        }
        let text = || unescape(s.content(n)).unwrap_or(std::borrow::Cow::Borrowed(s.content(n))).trim().parse::<u32>().ok();
        let val = |raw: &str| unescape(raw).map(|c| c.into_owned()).unwrap_or_else(|| raw.to_string());
        match self.form {
            Form::Standard => {
                if s.name(n) != "Value" {
                    return (None, None);
                }
                let (mut ty, mut hash_name, mut enum_attrs, mut others) = (None, None, false, false);
                for a in s.attrs(n) {
                    match a.name {
                        "Name" => {}
                        "Type" => ty = Some(a.raw),
                        "HashName" => hash_name = Some(a.raw),
                        "EnumName" | "ValueName" => enum_attrs = true,
                        _ => others = true,
                    }
                }
                if ty == Some("Enum") && hash_name.is_none() && !others {
                    return (None, None);
                }
                if !others && !enum_attrs {
                    (text(), hash_name.map(val))
                } else {
                    (text(), None)
                }
            }
            Form::Schema => match s.name(n) {
                "Hash32" if s.attrs(n).all(|a| matches!(a.name, "Name" | "HashValue")) => (text(), s.attr(n, "HashValue").map(val)),
                "Enum" | "Vector2" | "Vector3" | "Vector4" | "Quaternion" | "ObjectPtr" | "Object" | "DynamicSmallArray" => (None, None),
                _ => (text(), None),
            },
        }
    }

    /// Whether element `n` is an object (carries an object ID) as the model parser sees it.
    fn is_object(&self, n: u32) -> bool {
        let s = self.src;
        match self.form {
            Form::Standard => {
                s.attr(n, "ID").is_some()
                    && !matches!(
                        s.name(n),
                        "Value" | "Vector2" | "Vector3" | "Vector4" | "Quat" | "ObjectPtr" | "BaseObjectPtr" | "List" | "BaseObject"
                    )
            }
            Form::Schema => match s.name(n) {
                "Object" => true,
                "ObjectPtr" => {
                    s.attr(n, "PointerType") == Some("Inlined") || (s.attr(n, "ID").is_some() && s.attr(n, "PointerType") != Some("Link"))
                }
                _ => false,
            },
        }
    }
}

fn pose(p: Option<([f64; 4], usize)>, r: Option<([f64; 4], usize)>) -> Option<Pose> {
    let ((p, pl), (r, rl)) = (p?, r?);
    if pl < 3 || rl < 4 {
        return None;
    }
    Some((DVec3::new(p[0], p[1], p[2]), DQuat::from_xyzw(r[0], r[1], r[2], r[3])))
}

/// Read decoded text into an IR document.
pub(crate) fn read_text(text: String, bytes: ByteForm, names: &Names, file: &str, stem: &str, diag: &mut Diagnostics) -> Result<Document> {
    crate::validate::check_text(&text, bytes, file)?;
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
    crate::validate::check(&src, form, file)?;
    let bones = extract(&Ctx { src: &src, form, file }, names)?;
    // Free the tree (nodes and attribute spans, most of the read's memory) before the IR is
    // built: a `let Source { text, .. }` pattern would keep the other fields alive to the end of
    // this function, and they were the peak.
    let Source { text, nodes, attr_spans, .. } = src;
    drop((nodes, attr_spans));
    let text = Arc::try_unwrap(text).unwrap_or_else(|a| (*a).clone());
    build_document(bones, ReadInfo { form, bytes, text }, names, file, stem, diag)
}

fn extract(c: &Ctx<'_>, names: &Names) -> Result<Vec<BoneData>> {
    let s = c.src;
    let r = s.root;
    // The root object.
    match c.form {
        Form::Standard => {
            let Some(id) = s.attr(r, "ID") else {
                return Err(c.err(r, format!("root element <{}> has no ID (expected <Skeleton ID=\"...\">)", s.name(r))));
            };
            c.parse_id(r, id)?;
            if s.name(r) != "Skeleton" {
                return Err(c.err(r, format!("the root object is a {}, not a Skeleton", s.name(r))));
            }
        }
        Form::Schema => {
            if s.name(r) != "Object" {
                return Err(c.err(r, format!("root element is <{}>, expected <Object Type=\"Skeleton\">", s.name(r))));
            }
            match s.attr(r, "Type") {
                None => return Err(c.err(r, "<Object> object without a Type attribute")),
                Some("Skeleton") => {}
                Some(t) => return Err(c.err(r, format!("the root object is a {t}, not a Skeleton"))),
            }
        }
    }
    // Every object ID: numbers, unique. Every link: resolves.
    let mut ids: HashSet<u64, crate::ir::IdHash> = HashSet::with_capacity_and_hasher(s.nodes.len() / 30, Default::default());
    for n in 0..s.nodes.len() as u32 {
        if c.is_object(n) {
            if c.form == Form::Schema && s.attr(n, "Type").is_none() {
                return Err(c.err(n, format!("<{}> object without a Type attribute", s.name(n))));
            }
            if let Some(raw) = s.attr(n, "ID") {
                let id = c.parse_id(n, raw)?;
                if !ids.insert(id) {
                    return Err(
                        c.err(n, format!("another object already has the ID {id}; IDs must be unique, so give this one an unused ID"))
                    );
                }
            }
        }
    }
    // The Bones list.
    let list_tag = if c.form == Form::Standard { "List" } else { "DynamicSmallArray" };
    let Some(list) = s.children(r).find(|&k| s.attr(k, "Name") == Some(names::BONES)) else {
        return Err(c.err(r, "the skeleton has no Bones list"));
    };
    if s.name(list) != list_tag || s.attrs(list).any(|a| !matches!(a.name, "Name" | "Type")) {
        return Err(c.err(list, "Bones is not a list"));
    }
    let mut bones = Vec::with_capacity(s.children(list).count());
    let mut bone_nodes = Vec::with_capacity(bones.capacity());
    for item in s.children(list) {
        let ok = match c.form {
            Form::Standard => s.name(item) == "Bone" && s.attr(item, "ID").is_some() && s.attr(item, "Name").is_none(),
            Form::Schema => {
                s.name(item) == "ObjectPtr" && c.is_object(item) && s.attr(item, "Type") == Some("Bone") && s.attr(item, "ID").is_some()
            }
        };
        if !ok {
            return Err(c.err(item, "an item of the Bones list is not a bone with an ID"));
        }
        let id = c.parse_id(item, s.attr(item, "ID").unwrap_or(""))?;
        bones.push(bone(c, item, id)?);
        bone_nodes.push(item);
    }
    // Links resolve (checked after the bones so messages can name them).
    let bone_of_node = |mut n: u32| -> Option<usize> {
        while n != crate::xml::NONE {
            let p = s.node(n).parent;
            if p == list {
                return bone_nodes.binary_search(&n).ok();
            }
            n = p;
        }
        None
    };
    for n in 0..s.nodes.len() as u32 {
        if !s.name_is(n, "Link") {
            continue;
        }
        let ptr = s.node(n).parent;
        if ptr == crate::xml::NONE || !c.is_pointer(ptr) {
            continue;
        }
        let id = match ptr_parts(s, ptr, c.form) {
            Ok(PtrParts::Link(id)) => id,
            Ok(_) => continue,
            Err(v) => return Err(c.parse_id(v, s.content(v)).unwrap_err()),
        };
        if id == 0 || ids.contains(&id) {
            continue;
        }
        let owner = match bone_of_node(ptr) {
            Some(b) => format!("bone '{}'", names.display(bones[b].hash, bones[b].label.as_deref())),
            None => "the skeleton".to_string(),
        };
        let field = s.attr(ptr, "Name").or_else(|| s.attr(s.node(ptr).parent, "Name")).unwrap_or("");
        let field = if c.form == Form::Standard {
            BONE_FIELD_NAMES.iter().find(|(st, _)| *st == field).map(|(_, sc)| *sc).unwrap_or(field)
        } else {
            field
        };
        let (line, column) = s.pos(ptr);
        return Err(AnvilError::DanglingLink {
            file: c.file.into(),
            line,
            column,
            message: format!("{owner}: {field} points to ID {id}, which no object in this file has"),
        });
    }
    Ok(bones)
}

fn bone(c: &Ctx<'_>, item: u32, id: u64) -> Result<BoneData> {
    let s = c.src;
    let mut b = BoneData {
        id,
        hash: 0,
        label: None,
        parent: None,
        mirror: None,
        global: None,
        local: None,
        index: None,
        child_count: None,
        bad_owners: Vec::new(),
        modifiers: 0,
    };
    let mut have_hash = None;
    let (mut seen_parent, mut seen_mirror) = (false, false);
    let (mut gp, mut gr, mut lp, mut lr) = (None, None, None, None);
    let (mut seen_gp, mut seen_gr, mut seen_lp, mut seen_lr, mut seen_mods) = (false, false, false, false, false);
    for k in s.children(item) {
        let Some(name) = c.field_name(k, true) else { continue };
        match name {
            names::BONE_ID if have_hash.is_none() => {
                let (h, l) = c.hash(k);
                have_hash = Some(h);
                b.label = l;
            }
            names::FATHER if !seen_parent => {
                seen_parent = true;
                b.parent = c.link(k)?.flatten();
            }
            names::MIRROR if !seen_mirror => {
                seen_mirror = true;
                b.mirror = c.link(k)?.flatten();
            }
            names::GLOBAL_POS if !seen_gp => {
                seen_gp = true;
                gp = c.numbers(k);
            }
            names::GLOBAL_ROT if !seen_gr => {
                seen_gr = true;
                gr = c.numbers(k);
            }
            names::LOCAL_POS if !seen_lp => {
                seen_lp = true;
                lp = c.numbers(k);
            }
            names::LOCAL_ROT if !seen_lr => {
                seen_lr = true;
                lr = c.numbers(k);
            }
            names::INDEX if b.index.is_none() => b.index = Some(leaf_number(s, k)),
            names::CHILD_BONE_COUNT if b.child_count.is_none() => b.child_count = Some(leaf_number(s, k)),
            names::MODIFIERS if !seen_mods => {
                seen_mods = true;
                let list_ok = match c.form {
                    Form::Standard => s.name(k) == "List",
                    Form::Schema => s.name(k) == "DynamicSmallArray",
                };
                if !list_ok {
                    continue;
                }
                for m in s.children(k) {
                    if !c.is_object(m) {
                        continue;
                    }
                    b.modifiers += 1;
                    let Some(o) = s.children(m).find(|&f| s.attr(f, "Name") == Some(names::OWNER)) else { continue };
                    if let Some(Some(owner)) = c.link(o)? {
                        if owner != id {
                            let class = if c.form == Form::Schema { s.attr(m, "Type").unwrap_or("") } else { s.name(m) };
                            b.bad_owners.push(class.to_string());
                        }
                    }
                }
            }
            _ => {}
        }
    }
    match have_hash.flatten() {
        Some(h) => b.hash = h,
        None => return Err(c.err(item, format!("bone (ID {id}) has no BoneID/Name hash"))),
    }
    b.global = pose(gp, gr);
    b.local = pose(lp, lr);
    Ok(b)
}

fn leaf_number(s: &Source, n: u32) -> Option<usize> {
    if s.has_children(n) {
        return None;
    }
    s.content(n).trim().parse().ok()
}
