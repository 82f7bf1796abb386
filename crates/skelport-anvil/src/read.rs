//! Element tree → IR directly: the one reading path into the IR (the `Format` impls, and
//! [`crate::ir::to_document`] for a model, written as text first).
//!
//! Building the full [`crate::model`] of a 65,535-bone file means millions of small values; the
//! IR needs only each bone's ID, hash, links and transforms. This reader takes them straight from
//! the tree with the same helpers the model parser uses (so the numbers are bit-identical, which
//! the writer relies on to tell unchanged bones), checks IDs and links as strictly, and keeps the
//! text for the writer. The model is built only when a document is edited or converted.

use crate::build::{build_document, BoneData, ReadInfo};
use crate::dialect::Dialect;
use crate::error::{AnvilError, Result};
use crate::model::{names, parse_number, Form, IdHash};
use crate::names::Names;
use crate::parse::{detect_form, ptr_parts, vector_parts, PtrParts};
use crate::pose::Pose;
use crate::text::{unescape, ByteForm};
use crate::xml::{Progress, Source, Stream, Visit};
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

    /// The dialect's words.
    #[inline]
    fn d(&self) -> &'static Dialect {
        self.form.dialect()
    }

    /// A field name as the model stores it.
    fn field_name(&self, n: u32, in_bone: bool) -> Option<&'a str> {
        let s: &'a str = self.src.attr(n, "Name")?;
        Some(if in_bone { self.d().model_bone_field(s) } else { s })
    }

    fn is_pointer(&self, n: u32) -> bool {
        self.d().is_pointer_tag(self.src.name(n))
    }

    /// Whether object element `n` lacks the class attribute its dialect requires.
    fn lacks_class(&self, n: u32) -> bool {
        self.d().class_attr.is_some_and(|a| self.src.attr(n, a).is_none())
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
        // Structural (see crate::dialect): a hash is a `<Value Type HashName>` or a typed `<Hash32 HashValue>`.
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
        // Structural (see crate::dialect): an object is any class-named element with an ID, or an `<Object>` or an
        // inlined `<ObjectPtr>`.
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

/// Bytes charged per element the text can hold (one per `<` that does not begin an end tag):
/// its tree node, twice for a vector's spare capacity, and a share of the bone read from the
/// elements (a bone takes dozens of them; 64 bytes each covers its `BoneData` and IR bone).
const ELEMENT_BYTES: u64 = 2 * std::mem::size_of::<crate::xml::Node>() as u64 + 64;
/// Bytes charged per attribute the text can hold (one per `=`): its span, likewise.
const ATTRIBUTE_BYTES: u64 = 2 * std::mem::size_of::<crate::xml::AttrSpan>() as u64;

/// Charge `budget` for what reading `text` builds, before it is built: one pass counting the
/// `<` not followed by `/` and the `=`, each the start of at most one element or attribute. The
/// streaming reader builds less than the tree reader; the charge is the tree's, which a bad
/// file falls back to.
pub(crate) fn charge_tree(text: &str, budget: &skelport_ir::Budget, file: &str) -> Result<()> {
    // One pass (AVX2 where the machine has it): a byte loop and a two-byte window over every
    // byte were 15 % of a 65,535-bone round trip's instructions, memchr's three passes 45 ms of
    // its time (docs/performance.md).
    let skelport_ir::xml::TagCounts { starts: lt, eq } = skelport_ir::xml::tag_counts(text.as_bytes());
    let bytes = lt.saturating_mul(ELEMENT_BYTES).saturating_add(eq.saturating_mul(ATTRIBUTE_BYTES));
    Ok(budget.charge(bytes, file, &format!("the element tree ({lt} elements, {eq} '=')"))?)
}

/// Decoded text into an IR document; the text must be well encoded (checked by
/// `validate::check_text`, or written from a model). With `defer`, each bone's values and the
/// skeleton's shapes are left to [`crate::ext::complete`] (`skelport_ir::ExtensionUse`).
pub(crate) fn read_decoded(
    text: String,
    bytes: ByteForm,
    names: &Names,
    file: &str,
    stem: &str,
    defer: bool,
    diag: &mut Diagnostics,
) -> Result<Document> {
    let text = Arc::new(text);
    let (bones, form) = match streaming(&text, file) {
        Some(found) => found,
        None => tree(&text, names, file)?,
    };
    let text = Arc::try_unwrap(text).unwrap_or_else(|a| (*a).clone());
    build_document(bones, ReadInfo { form, bytes, text }, names, file, stem, defer, diag)
}

/// The streaming reader against the tree reader on one text: read in one piece and split wherever
/// a split point is found, it gives up or gives exactly what the tree reader gives (panics
/// otherwise). Returns whether the streaming reader read it, and whether the tree reader did.
#[cfg(any(test, feature = "fuzzing"))]
pub(crate) fn streaming_agrees(text: Arc<String>, what: &str) -> (bool, bool) {
    let fast = streaming_split(&text, what, usize::MAX);
    let split = streaming_split(&text, what, 0);
    assert_eq!(fast, split, "{what}: one thread and two disagree");
    let slow = tree(&text, &Names::builtin(), what);
    match (fast, slow) {
        (Some(f), Ok(s)) => {
            assert_eq!(f.1, s.1, "{what}: form");
            assert_eq!(f.0, s.0, "{what}: bones");
            (true, true)
        }
        (Some(_), Err(e)) => panic!("{what}: the streaming reader accepts what the tree reader refuses: {e}"),
        (None, slow) => (false, slow.is_ok()),
    }
}

/// The reference reader: the whole element tree, then every check in a fixed order, so the
/// first problem of a bad file is the one reported, with its place and fix.
fn tree(text: &Arc<String>, names: &Names, file: &str) -> Result<(Vec<BoneData>, Form)> {
    let src = Source::parse_shared(Arc::clone(text)).map_err(|e| AnvilError::Syntax {
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
    Ok((bones, form))
}

/// The fast reader: a streaming pass that takes each bone from the tree as soon as its end tag
/// is read and then drops its elements, so the tree never holds more than one bone plus the
/// skeleton's other fields (a 65,535-bone file has two million elements: as a whole tree they
/// were 110 MB of fresh memory and most of the read's time). A big file's Bones list is read in
/// two halves on two threads (see [`split_point`]). It makes every check the tree reader makes,
/// but on any problem it gives up (`None`) instead of reporting it: the caller then runs
/// [`tree`], so a bad file gets exactly the reference message. Equal results on good files are
/// tested against [`tree`].
fn streaming(text: &Arc<String>, file: &str) -> Option<(Vec<BoneData>, Form)> {
    // Below this, a second thread and the split search cost more than they save.
    const SPLIT_FROM: usize = 4 << 20;
    streaming_split(text, file, SPLIT_FROM)
}

/// [`streaming`], splitting texts of `split_from` bytes or more.
fn streaming_split(text: &Arc<String>, file: &str, split_from: usize) -> Option<(Vec<BoneData>, Form)> {
    // About 1.2 kB of Standard text per bone, and half of them for each half of a split file.
    let per_half = text.len() / 2400 + 16;
    let mut st = Stream::new(text, 3, Half::new(file, None, None, text.len() >= split_from, per_half))?;
    let mut second: Option<(Source, Half<'_>)> = None;
    if st.run(None).ok()? == Progress::Paused {
        // Paused after the first bone, to split the rest.
        let (first, list, form) = (st.visitor().first?, st.visitor().parent_seen?.0, st.visitor().form);
        match split_point(text, first, st.pos()) {
            Some(p) if st.open().last() == Some(&list) => {
                let b = Half::new(file, form, Some((1, true)), false, per_half);
                let mut sb = Stream::resume_at(text, p, st.source(), st.open(), 3, b)?;
                let (ra, rb) = rayon::join(|| st.run(Some(p)), || sb.run(None));
                let paused_right = ra.as_ref().ok() == Some(&Progress::Paused) && st.pos() == p && st.open().last() == Some(&list);
                if paused_right {
                    // The first half ends where the second began, in the state it assumed.
                    if rb.ok()? != Progress::Done {
                        return None;
                    }
                    #[cfg(test)]
                    tests::SPLITS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    second = Some(sb.into_parts());
                } else if ra.ok()? == Progress::Paused {
                    // The split was inside something else (a comment, say): go on alone.
                    st.run(None).ok()?;
                }
            }
            _ => {
                st.run(None).ok()?;
            }
        }
    }
    let (src, a) = st.into_parts();
    let form = match a.form {
        Some(f) => f,
        None => detect_form(&src)?,
    };
    let c = Ctx { src: &src, form, file };
    let max_depth = src.max_depth.max(second.as_ref().map(|(s, _)| s.max_depth).unwrap_or(0));
    if max_depth > crate::validate::MAX_DEPTH || crate::validate::check_prolog(&src, file).is_err() || !root_ok(&c) {
        return None;
    }
    let list = src.children(src.root).find(|&k| src.attr(k, "Name") == Some(names::BONES))?;
    // Every item of the list was taken and dropped, or the hook gave up.
    if !bones_list_ok(&src, list, form) || src.has_children(list) {
        return None;
    }
    let Half { mut bones, mut seen, .. } = a;
    seen.nodes(&c, 0..src.nodes.len() as u32, &[]).ok()?;
    if let Some((src_b, b)) = second {
        // The second half's tree starts with copies of the root and the list.
        let cb = Ctx { src: &src_b, form, file };
        if src_b.has_children(1) {
            return None;
        }
        let Half { bones: bones_b, seen: mut seen_b, .. } = b;
        seen_b.nodes(&cb, 2..src_b.nodes.len() as u32, &[]).ok()?;
        for id in seen_b.ids {
            if !seen.ids.insert(id) {
                return None;
            }
        }
        seen.pending.extend(seen_b.pending);
        bones.extend(bones_b);
    }
    seen.pending.iter().all(|id| seen.ids.contains(id)).then_some((bones, form))
}

/// Where to split a big Bones list: the start of a bone item near the middle of the text, found
/// by the bytes around the first one (`first`: its tag name and the gap before it), past
/// `after`. A match inside something else (a comment) is caught when the first half does not
/// arrive there in the right state.
fn split_point(text: &str, first: FirstBone, after: usize) -> Option<usize> {
    let name = text.get(first.name.0..first.name.1)?;
    let gap = text.get(first.gap.0..first.gap.1)?;
    let pattern = format!("</{name}>{gap}<{name}");
    let mut mid = (text.len() / 2).max(after);
    while !text.is_char_boundary(mid) {
        mid += 1;
    }
    let q = mid + text[mid..].find(&pattern)?;
    Some(q + name.len() + 3 + gap.len())
}

/// Where the first bone item's tag name and the gap before it are.
#[derive(Clone, Copy)]
struct FirstBone {
    name: (usize, usize),
    gap: (usize, usize),
}

/// The state of one streaming reader (one half of a split file, or the whole).
struct Half<'f> {
    file: &'f str,
    form: Option<Form>,
    /// The element whose children the hook saw last, and whether it is the Bones list.
    parent_seen: Option<(u32, bool)>,
    bones: Vec<BoneData>,
    seen: Seen,
    /// Pause after the first bone (to split the rest).
    pause: bool,
    first: Option<FirstBone>,
}

impl crate::xml::Visitor for Half<'_> {
    fn visit(&mut self, s: &Source, n: u32) -> Visit {
        Half::visit(self, s, n).unwrap_or(Visit::Stop)
    }
}

impl<'f> Half<'f> {
    fn new(file: &'f str, form: Option<Form>, parent_seen: Option<(u32, bool)>, pause: bool, bones: usize) -> Self {
        Half {
            file,
            form,
            parent_seen,
            bones: Vec::with_capacity(bones),
            seen: Seen { ids: HashSet::with_capacity_and_hasher(bones, Default::default()), pending: Vec::new() },
            pause,
            first: None,
        }
    }

    /// The hook: an element one level below the root's children has closed.
    fn visit(&mut self, s: &Source, n: u32) -> std::result::Result<Visit, ()> {
        let form = match self.form {
            Some(f) => f,
            None => *self.form.insert(detect_form(s).ok_or(())?),
        };
        let c = Ctx { src: s, form, file: self.file };
        let parent = s.node(n).parent;
        let in_bones = match self.parent_seen {
            Some((p, b)) if p == parent => b,
            _ => {
                // The Bones list is the root's first child named Bones.
                let b = s.children(s.root).find(|&k| s.attr(k, "Name") == Some(names::BONES)) == Some(parent);
                if b && !bones_list_ok(s, parent, form) {
                    return Err(());
                }
                self.parent_seen = Some((parent, b));
                b
            }
        };
        if !in_bones {
            return Ok(Visit::Keep);
        }
        if !is_bone_item(&c, n) {
            return Err(());
        }
        let id = c.parse_id(n, s.attr(n, "ID").unwrap_or("")).map_err(drop)?;
        let mut parsed = [crate::xml::NONE; 4];
        self.bones.push(bone(&c, n, id, &mut parsed).map_err(drop)?);
        self.seen.nodes(&c, n..s.nodes.len() as u32, &parsed)?;
        if self.first.is_none() && n == parent + 1 {
            let node = s.node(n);
            self.first = Some(FirstBone {
                name: (node.start as usize + 1, node.name_end as usize),
                gap: (s.node(parent).tag_end as usize, node.start as usize),
            });
        }
        if self.pause && self.bones.len() == 1 {
            self.pause = false;
            return Ok(Visit::DropAndPause);
        }
        Ok(Visit::Drop)
    }
}

/// Object IDs and link targets met so far by [`streaming`].
struct Seen {
    ids: HashSet<u64, IdHash>,
    /// Link targets that were not yet known IDs when met.
    pending: Vec<u64>,
}

impl Seen {
    /// The checks the tree reader makes of every element, for `range`: typed values, unique
    /// object IDs, links that are numbers.
    /// `checked`: elements whose values are known to be good.
    fn nodes(&mut self, c: &Ctx<'_>, range: std::ops::Range<u32>, checked: &[u32]) -> std::result::Result<(), ()> {
        let s = c.src;
        for k in range {
            if !checked.contains(&k) {
                crate::validate::check_value(s, k, c.form).map_err(drop)?;
            }
            if c.is_object(k) {
                if c.lacks_class(k) {
                    return Err(());
                }
                if let Some(raw) = s.attr(k, "ID") {
                    if !self.ids.insert(c.parse_id(k, raw).map_err(drop)?) {
                        return Err(());
                    }
                }
            }
            if s.name_is(k, "Link") {
                let ptr = s.node(k).parent;
                if ptr != crate::xml::NONE && c.is_pointer(ptr) {
                    match ptr_parts(s, ptr, c.form) {
                        Ok(PtrParts::Link(id)) if id != 0 && !self.ids.contains(&id) => self.pending.push(id),
                        Ok(_) => {}
                        Err(_) => return Err(()),
                    }
                }
            }
        }
        Ok(())
    }
}

/// The root element is a skeleton object with a numeric ID (Standard) or a Type (Schema-Based).
fn root_ok(c: &Ctx<'_>) -> bool {
    let (s, r) = (c.src, c.src.root);
    // Structural (see crate::dialect): the Standard root is the class with an ID, the Schema-Based one `<Object Type>`.
    match c.form {
        Form::Standard => s.attr(r, "ID").is_some_and(|id| c.parse_id(r, id).is_ok()) && s.name(r) == "Skeleton",
        Form::Schema => s.name(r) == "Object" && s.attr(r, "Type") == Some("Skeleton"),
    }
}

/// The Bones element is the form's list element with no attributes but Name and Type.
fn bones_list_ok(s: &Source, list: u32, form: Form) -> bool {
    s.name(list) == form.dialect().list_tag && s.attrs(list).all(|a| matches!(a.name, "Name" | "Type"))
}

/// An item of the Bones list is a bone object with an ID.
fn is_bone_item(c: &Ctx<'_>, item: u32) -> bool {
    let s = c.src;
    // Structural (see crate::dialect): a `<Bone ID>` element, or an inlined `<ObjectPtr Type="Bone" ID>`.
    match c.form {
        Form::Standard => s.name(item) == "Bone" && s.attr(item, "ID").is_some() && s.attr(item, "Name").is_none(),
        Form::Schema => {
            s.name(item) == "ObjectPtr" && c.is_object(item) && s.attr(item, "Type") == Some("Bone") && s.attr(item, "ID").is_some()
        }
    }
}

fn extract(c: &Ctx<'_>, names: &Names) -> Result<Vec<BoneData>> {
    let s = c.src;
    let r = s.root;
    // The root object. Structural (see crate::dialect): as in `root_ok`, with a message for each way it is wrong.
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
    let mut ids: HashSet<u64, IdHash> = HashSet::with_capacity_and_hasher(s.nodes.len() / 30, Default::default());
    for n in 0..s.nodes.len() as u32 {
        if c.is_object(n) {
            if c.lacks_class(n) {
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
    let Some(list) = s.children(r).find(|&k| s.attr(k, "Name") == Some(names::BONES)) else {
        return Err(c.err(r, "the skeleton has no Bones list"));
    };
    if !bones_list_ok(s, list, c.form) {
        return Err(c.err(list, "Bones is not a list"));
    }
    let mut bones = Vec::with_capacity(s.children(list).count());
    let mut bone_nodes = Vec::with_capacity(bones.capacity());
    for item in s.children(list) {
        if !is_bone_item(c, item) {
            return Err(c.err(item, "an item of the Bones list is not a bone with an ID"));
        }
        let id = c.parse_id(item, s.attr(item, "ID").unwrap_or(""))?;
        bones.push(bone(c, item, id, &mut [crate::xml::NONE; 4])?);
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
        let field = c.d().model_bone_field(field);
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

/// One bone's data. `parsed` receives the vector fields whose every component was read as a
/// number (a typed-value check of them would pass, so the streaming reader skips it).
fn bone(c: &Ctx<'_>, item: u32, id: u64, parsed: &mut [u32; 4]) -> Result<BoneData> {
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
        span: (s.node(item).start, s.node(item).end),
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
                if gp.is_some() {
                    parsed[0] = k;
                }
            }
            names::GLOBAL_ROT if !seen_gr => {
                seen_gr = true;
                gr = c.numbers(k);
                if gr.is_some() {
                    parsed[1] = k;
                }
            }
            names::LOCAL_POS if !seen_lp => {
                seen_lp = true;
                lp = c.numbers(k);
                if lp.is_some() {
                    parsed[2] = k;
                }
            }
            names::LOCAL_ROT if !seen_lr => {
                seen_lr = true;
                lr = c.numbers(k);
                if lr.is_some() {
                    parsed[3] = k;
                }
            }
            names::INDEX if b.index.is_none() => b.index = Some(leaf_number(s, k)),
            names::CHILD_BONE_COUNT if b.child_count.is_none() => b.child_count = Some(leaf_number(s, k)),
            names::MODIFIERS if !seen_mods => {
                seen_mods = true;
                if s.name(k) != c.d().list_tag {
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
                            let class = match c.d().class_attr {
                                Some(a) => s.attr(m, a).unwrap_or(""),
                                None => s.name(m),
                            };
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    /// How many reads used two threads.
    pub(super) static SPLITS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

    /// [`super::streaming_agrees`], and the streaming reader must not give up on a file the tree
    /// reader reads (the fixtures hold it to that; a fuzz input may be odd enough that it does).
    fn agree(text: &str, what: &str) -> bool {
        match super::streaming_agrees(Arc::new(text.to_string()), what) {
            (true, _) => true,
            (false, true) => panic!("{what}: the streaming reader gives up on a good file"),
            (false, false) => false,
        }
    }

    fn testdata() -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata")
    }

    fn decoded(p: &Path) -> Option<String> {
        crate::text::decode(&std::fs::read(p).ok()?).ok().map(|(t, _)| t)
    }

    #[test]
    fn streaming_equals_tree_on_the_fixtures_and_a_generated_skeleton() {
        let mut n = 0;
        for e in std::fs::read_dir(testdata().join("anvil")).unwrap() {
            let p = e.unwrap().path();
            let text = decoded(&p).unwrap();
            assert!(agree(&text, &p.display().to_string()), "{}", p.display());
            n += 1;
        }
        assert_eq!(n, 12);
        // Generated from another format: every bone a link to a later mirror, in both forms.
        let mut sk = skelport_ir::Skeleton::new("g");
        for i in 0..200usize {
            let side = ["Left", "Right"][i % 2];
            let parent = (i > 0).then(|| skelport_ir::BoneId::from_index((i - 1) / 3));
            sk.push(skelport_ir::Bone::new(format!("{side}Bone{}", i / 2), parent, skelport_ir::Transform::IDENTITY));
        }
        for form in [Form::Standard, Form::Schema] {
            let m = crate::generate::generate(&sk, form, &Default::default(), &mut Diagnostics::default()).unwrap();
            let bytes = m.to_bytes(form).unwrap();
            let (text, _) = crate::text::decode(&bytes).unwrap();
            assert!(agree(&text, &format!("generated {form:?}")));
        }
    }

    #[test]
    fn streaming_gives_up_or_agrees_on_every_malformed_file() {
        let mut gave_up = 0;
        for dir in ["anvil", "anvil-schema"] {
            for e in std::fs::read_dir(testdata().join("bad").join(dir)).unwrap() {
                let p = e.unwrap().path();
                if p.extension().is_some_and(|x| x == "expected") {
                    continue;
                }
                let Some(text) = decoded(&p) else { continue };
                if !agree(&text, &p.display().to_string()) {
                    gave_up += 1;
                }
            }
        }
        assert!(gave_up > 50, "{gave_up}");
    }

    /// Every single-byte deletion at the byte offsets `at` of `text`, and characters that break
    /// markup or numbers written over each: the streaming reader must agree with the tree reader
    /// or give up on each. Returns how many copies were still good.
    fn damage(text: &str, at: impl Iterator<Item = usize>) -> usize {
        let mut accepted = 0;
        for i in at.filter(|&i| text.is_char_boundary(i) && text.is_char_boundary(i + 1)) {
            let mut t = text.to_string();
            t.remove(i);
            accepted += agree(&t, &format!("deleted byte {i}")) as usize;
            for c in ['<', '>', '/', '"', '&', 'x', ',', ')'] {
                let mut t = text.to_string();
                t.replace_range(i..i + 1, &c.to_string());
                accepted += agree(&t, &format!("{c:?} at byte {i}")) as usize;
            }
        }
        accepted
    }

    #[test]
    fn streaming_gives_up_or_agrees_on_damaged_copies_of_the_biped() {
        // The first bones, and around the place a two-thread read splits the file.
        let text = decoded(&testdata().join("anvil/biped.standard.utf8.xml")).unwrap();
        let before = SPLITS.load(std::sync::atomic::Ordering::Relaxed);
        assert!(streaming_split(&Arc::new(text.clone()), "biped", 0).is_some());
        assert!(SPLITS.load(std::sync::atomic::Ordering::Relaxed) > before, "the biped is read in two halves");
        let mid = text.len() / 2;
        let split = mid + text[mid..].find("</Bone>").unwrap();
        assert!(damage(&text, (0..2600).chain(split - 300..split + 300)) > 100);
    }

    #[test]
    fn streaming_gives_up_or_agrees_on_damaged_copies_of_the_schema_biped() {
        let text = decoded(&testdata().join("anvil/biped.schema.xml")).unwrap();
        let first = text.find("Type=\"Bone\"").unwrap();
        assert!(damage(&text, first..first + 2000) > 100);
    }

    #[test]
    fn a_split_inside_a_comment_is_read_by_one_thread() {
        // The bytes a split looks for, inside a comment in the middle of the Bones list.
        let text = decoded(&testdata().join("anvil/biped.standard.utf8.xml")).unwrap();
        let list_end = text.find("<List Name=\"Bones\">").unwrap() + "<List Name=\"Bones\">".len();
        let gap = &text[list_end..list_end + text[list_end..].find("<Bone").unwrap()];
        let mid = text.len() / 2;
        let at = mid + text[mid..].find("</Bone>").unwrap() + "</Bone>".len();
        let bait = format!("<!-- </Bone>{gap}<Bone ID=\"1\"> -->");
        let mut t = text.clone();
        t.insert_str(at, &bait);
        let first = FirstBone { name: (list_end + gap.len() + 1, list_end + gap.len() + 5), gap: (list_end, list_end + gap.len()) };
        let p = split_point(&t, first, 0).unwrap();
        assert!(p > at && p < at + bait.len(), "the split point is in the comment");
        assert!(agree(&t, "comment bait"));
    }
}
