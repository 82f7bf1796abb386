//! What the IR's `anvil` extension holds, per item so that an edit in another tool keeps the
//! rest. Each bone's element is kept as its values (`{"id": N, "shape": k, "values":
//! ["1091164576", "3738240529", "Hips", "0.09", ...]}`: its attribute values and element texts,
//! verbatim) and the skeleton's `shapes`: for each kind of bone element, the exact text around
//! those values, as indices into the skeleton's `pieces` (a bone with no modifiers and one with a
//! look-at modifier are two shapes, which share most pieces). Piece, value, piece, ..., piece is
//! the element's text again. The skeleton also holds the form, encoding, modifier count, a
//! fingerprint of what the IR held when it was read, and the `layout`: the source text with every
//! bone element cut out, as the pieces around them (`head`, one `sep` when every separator is the
//! same or else `seps`, `tail`; and `order`, the bones' IDs in file order, which the IR's order
//! need not be: it lists parents first, and a glTF reader depth first). Head, the elements in
//! file order joined by the separators, and tail are the source again.

use crate::validate;
use serde_json::{Map, Value as Json};
use skelport_ir::{Bone, Skeleton};

/// The extension namespace.
pub const NAMESPACE: &str = "anvil";

/// The run-local namespace (see `skelport_ir::ext`) holding the text a skeleton was read from.
pub(crate) const RUN_LOCAL_SOURCE: &str = "~anvil.source";

/// The run-local namespace of a skeleton whose bones' values the reader deferred
/// (`skelport_ir::ExtensionUse`): each bone element's ID and where it lies in the
/// [`RUN_LOCAL_SOURCE`] text (start × 2³² + end), in file order, as one string of 32 hex digits
/// a bone (a JSON array of two numbers a bone was 144 bytes a bone, 9.4 MB of a 65,535-bone
/// skeleton's peak memory; the string is 32). Its bones hold their IDs alone, and its extension
/// no `layout`, `pieces` or `shapes`.
pub(crate) const RUN_LOCAL_SPANS: &str = "~anvil.spans";

/// Hex digits a bone in [`RUN_LOCAL_SPANS`]: the ID, then start × 2³² + end, 16 each.
const SPAN_DIGITS: usize = 32;

/// [`RUN_LOCAL_SPANS`]' value for bone elements given as (ID, (start, end)).
pub(crate) fn spans_json(bones: impl ExactSizeIterator<Item = (u64, (u32, u32))>) -> Json {
    use std::fmt::Write;
    let mut v = String::with_capacity(SPAN_DIGITS * bones.len());
    for (id, (a, z)) in bones {
        // Writing to a String cannot fail.
        let _ = write!(v, "{id:016x}{:016x}", u64::from(a) << 32 | u64::from(z));
    }
    Json::String(v)
}

/// The (ID, (start, end)) of each bone in [`RUN_LOCAL_SPANS`]' value; `None` if it is not one
/// [`spans_json`] makes.
fn spans_of(v: &Json) -> Option<Vec<(u64, (u32, u32))>> {
    let digits = v.as_str()?.as_bytes();
    if digits.len() % SPAN_DIGITS != 0 {
        return None;
    }
    let hex = |d: &[u8]| std::str::from_utf8(d).ok().and_then(|t| u64::from_str_radix(t, 16).ok());
    digits
        .chunks_exact(SPAN_DIGITS)
        .map(|c| {
            let (id, place) = (hex(&c[..16])?, hex(&c[16..])?);
            Some((id, ((place >> 32) as u32, place as u32)))
        })
        .collect()
}

/// Whether the reader deferred this skeleton's bone values ([`complete`] makes them).
pub(crate) fn is_deferred(sk: &Skeleton) -> bool {
    sk.ext.raw(RUN_LOCAL_SPANS).is_some()
}

/// Make what the reader deferred: the skeleton's layout and shapes and each bone's values, cut
/// from the text read, as a read that defers nothing makes them. Bones are matched by ID; a
/// bone whose ID no element has (added since) gets none, as it would from a file. Places that
/// do not lie in order within the text (not the reader's) make nothing: the writer then
/// generates the file from the bones, saying so.
pub(crate) fn complete(sk: &mut Skeleton) {
    let Some(spans) = sk.ext.remove(RUN_LOCAL_SPANS) else { return };
    let Some(text) = sk.ext.raw(RUN_LOCAL_SOURCE).and_then(Json::as_str) else { return };
    let Some(elements) = spans_of(&spans) else { return };
    drop(spans);
    let mut end = 0usize;
    for &(_, (a, z)) in &elements {
        let (au, zu) = (a as usize, z as usize);
        if au < end || zu < au || zu > text.len() || !text.is_char_boundary(au) || !text.is_char_boundary(zu) {
            return;
        }
        end = zu;
    }
    let layout = Layout::of_text(text, elements.iter().map(|e| e.1)).with_order(elements.iter().map(|e| e.0).collect()).to_json();
    let mut shapes = shapes_of(elements.iter().map(|&(_, (a, z))| &text[a as usize..z as usize]));
    let mut at: std::collections::HashMap<u64, usize, crate::model::IdHash> = Default::default();
    for (i, &(id, _)) in elements.iter().enumerate() {
        at.entry(id).or_insert(i);
    }
    for b in &mut sk.bones {
        let i = match b.ext.raw(NAMESPACE) {
            Some(Json::Number(n)) => n.as_u64().and_then(|id| at.get(&id).map(|&i| (id, i))),
            _ => None,
        };
        if let Some((id, i)) = i {
            b.ext.set_raw(NAMESPACE, bone_ext(id, shapes.shape[i] as usize, shapes.values(i)));
        }
    }
    let (pieces, shapes) = (std::mem::take(&mut shapes.pieces), std::mem::take(&mut shapes.shapes));
    // In the reader's order (the map keeps insertion order): `layout`, `pieces` and `shapes`
    // before `modifiers`.
    if let Some(Json::Object(e)) = sk.ext.remove(NAMESPACE) {
        let mut made = Map::with_capacity(e.len() + 3);
        let mut cut = Some([("layout", layout), ("pieces", pieces), ("shapes", shapes)]);
        for (k, v) in e {
            if k == "modifiers" {
                made.extend(cut.take().into_iter().flatten().map(|(k, v)| (k.to_owned(), v)));
            }
            made.insert(k, v);
        }
        made.extend(cut.into_iter().flatten().map(|(k, v)| (k.to_owned(), v)));
        sk.ext.set_raw(NAMESPACE, Json::Object(made));
    }
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

/// The Anvil ID stored on an IR bone: `{"id": N, ...}`, or a bare ID (`"anvil": 1091164575`:
/// a document may hold the ID alone).
pub fn bone_ext_id(b: &Bone) -> Option<u64> {
    match b.ext.raw(NAMESPACE)? {
        Json::Number(n) => n.as_u64(),
        Json::Object(m) => member(m, "id")?.as_u64(),
        _ => None,
    }
}

/// The shape and values stored on an IR bone: `None` when it has none, or they are not a shape
/// index and strings (another tool's edit, a hostile file).
pub(crate) fn bone_parts(b: &Bone) -> Option<(usize, Vec<&str>)> {
    let Json::Object(m) = b.ext.raw(NAMESPACE)? else { return None };
    let shape = usize::try_from(member(m, "shape")?.as_u64()?).ok()?;
    let values = match member(m, "values") {
        None => Vec::new(),
        Some(Json::Array(v)) => v.iter().map(Json::as_str).collect::<Option<_>>()?,
        Some(_) => return None,
    };
    Some((shape, values))
}

/// Whether a bone's extension holds values (to tell a refused element from an absent one).
pub(crate) fn has_bone_values(b: &Bone) -> bool {
    matches!(b.ext.raw(NAMESPACE), Some(Json::Object(m)) if member(m, "shape").is_some())
}

/// The skeleton's bone shapes: the distinct literal pieces, and each shape as the indices of its
/// pieces.
pub(crate) struct Shapes<'a> {
    pieces: Vec<&'a str>,
    shapes: Vec<Vec<usize>>,
}

impl<'a> Shapes<'a> {
    /// The length of the element `shape` and `values` make (`None` when the values do not fit
    /// the shape: a shape not there, or a count other than its pieces' less one).
    pub(crate) fn element_len(&self, shape: usize, values: &[&str]) -> Option<usize> {
        let shape = self.shapes.get(shape).filter(|s| s.len() == values.len() + 1)?;
        Some(shape.iter().map(|&k| self.pieces[k].len()).chain(values.iter().map(|v| v.len())).fold(0usize, usize::saturating_add))
    }

    /// The element `shape` and `values` make (see [`Shapes::element_len`]).
    pub(crate) fn element(&self, shape: usize, values: &[&str]) -> Option<String> {
        let mut out = String::with_capacity(self.element_len(shape, values)?);
        let shape = &self.shapes[shape];
        out.push_str(self.pieces[shape[0]]);
        for (v, &k) in values.iter().zip(&shape[1..]) {
            out.push_str(v);
            out.push_str(self.pieces[k]);
        }
        Some(out)
    }

    /// The bytes of data the shapes are: their pieces, and a byte for each piece index.
    pub(crate) fn data_len(&self) -> usize {
        self.pieces.iter().map(|p| p.len()).sum::<usize>() + self.shapes.iter().map(Vec::len).sum::<usize>()
    }

    /// The shapes in a skeleton's extension (`pieces` and `shapes`; `None` when absent or
    /// malformed: a shape with no pieces, or naming a piece that is not there).
    pub(crate) fn from_ext(ext: &'a Json) -> Option<Shapes<'a>> {
        let pieces: Vec<&str> = ext.get("pieces")?.as_array()?.iter().map(Json::as_str).collect::<Option<_>>()?;
        let shapes = ext
            .get("shapes")?
            .as_array()?
            .iter()
            .map(|s| match s {
                Json::Array(p) if !p.is_empty() => p
                    .iter()
                    .map(|k| k.as_u64().and_then(|k| usize::try_from(k).ok()).filter(|&k| k < pieces.len()))
                    .collect::<Option<Vec<_>>>(),
                _ => None,
            })
            .collect::<Option<_>>()?;
        Some(Shapes { pieces, shapes })
    }
}

/// The attributes whose values say what an element is rather than hold data: they stay in the
/// shape's text. Every other attribute value (IDs, hash labels, enum names, links' paths, a
/// modifier's settings) and every element text is a bone's value.
const STRUCTURAL_ATTRIBUTES: &[&str] = &["Name", "Type", "EnumName", "PointerType"];

/// A bone element's text cut at its values into `pieces` and `values` (cleared first), with one
/// more piece than values, which interleaved give the text back. The values are the attribute
/// values not in [`STRUCTURAL_ATTRIBUTES`] (between their quotes) and every element text that is
/// not only whitespace; comments, CDATA sections and processing instructions stay in the pieces.
///
/// Hand-written rather than a second pass of the XML tokenizer: the text is one element the
/// reader already checked, so only quotes, tags, markup and text runs need telling apart, and
/// the cut must give back every byte (the tokenizer yields nodes, not the gaps between them).
/// Text it cannot cut (a markup section with no end) is one piece, kept exact.
fn cut<'a>(xml: &'a str, pieces: &mut Vec<&'a str>, values: &mut Vec<&'a str>) {
    pieces.clear();
    values.clear();
    let b = xml.as_bytes();
    let mut from = 0;
    let mut i = 0;
    let whole = |pieces: &mut Vec<&'a str>, values: &mut Vec<&'a str>| {
        pieces.clear();
        values.clear();
        pieces.push(xml);
    };
    while i < b.len() {
        if b[i] == b'<' {
            let rest = &xml[i..];
            let end = [("<!--", "-->"), ("<![CDATA[", "]]>"), ("<?", "?>")]
                .iter()
                .find(|(open, _)| rest.starts_with(open))
                .map(|(_, close)| close);
            if let Some(close) = end {
                // Markup stays in the piece.
                let Some(k) = rest.find(close) else { return whole(pieces, values) };
                i += k + close.len();
                continue;
            }
            // A tag: the values of its data attributes are values.
            i += 1;
            while i < b.len() && b[i] != b'>' {
                if b[i] == b'"' || b[i] == b'\'' {
                    let q = b[i];
                    let a = i + 1;
                    let Some(len) = b[a..].iter().position(|&c| c == q) else { return whole(pieces, values) };
                    let attr = xml[..i].trim_end().strip_suffix('=').map(str::trim_end).unwrap_or("");
                    let name_start = attr.rfind(|c: char| c.is_ascii_whitespace()).map_or(0, |k| k + 1);
                    if !STRUCTURAL_ATTRIBUTES.contains(&&attr[name_start..]) {
                        pieces.push(&xml[from..a]);
                        values.push(&xml[a..a + len]);
                        from = a + len;
                    }
                    i = a + len;
                }
                i += 1;
            }
            i += 1;
        } else {
            // A text run up to the next tag: a value unless it is only whitespace.
            let z = b[i..].iter().position(|&c| c == b'<').map_or(b.len(), |k| i + k);
            if b[i..z].iter().any(|c| !c.is_ascii_whitespace()) {
                pieces.push(&xml[from..i]);
                values.push(&xml[i..z]);
                from = z;
            }
            i = z;
        }
    }
    pieces.push(&xml[from..]);
}

/// The bone elements of a skeleton cut into shapes and values (see the module documentation).
pub(crate) struct BoneShapes<'a> {
    /// The skeleton's `pieces`.
    pub pieces: Json,
    /// The skeleton's `shapes`.
    pub shapes: Json,
    /// Each element's shape.
    pub shape: Vec<u32>,
    /// Each element's values: `values[ranges[i].0..ranges[i].1]`.
    values: Vec<&'a str>,
    ranges: Vec<(u32, u32)>,
}

impl<'a> BoneShapes<'a> {
    /// Element `i`'s values.
    pub(crate) fn values(&self, i: usize) -> &[&'a str] {
        let (a, z) = self.ranges[i];
        &self.values[a as usize..z as usize]
    }
}

/// The bone elements of a skeleton cut into shapes and values. In a shape two or more bones
/// have, a value they all share is folded into the shape's pieces, so a bone keeps only what
/// tells it from the others (a bone alone in its shape keeps all its values).
pub(crate) fn shapes_of<'a>(elements: impl ExactSizeIterator<Item = &'a str>) -> BoneShapes<'a> {
    use std::borrow::Cow;
    type Fx<K, V> = std::collections::HashMap<K, V, crate::model::IdHash>;
    struct Kind<'a> {
        pieces: Vec<&'a str>,
        first: Vec<&'a str>,
        varies: Vec<bool>,
        bones: usize,
    }
    let n = elements.len();
    let mut kinds: Fx<Vec<&'a str>, u32> = Fx::default();
    let mut shapes: Vec<Kind<'a>> = Vec::new();
    let (mut shape, mut values, mut ranges) = (Vec::with_capacity(n), Vec::new(), Vec::with_capacity(n));
    let (mut pieces, mut vals) = (Vec::new(), Vec::new());
    for xml in elements {
        cut(xml, &mut pieces, &mut vals);
        let k = match kinds.get(&pieces) {
            Some(&k) => {
                let s = &mut shapes[k as usize];
                for ((v, f), x) in vals.iter().zip(&s.first).zip(&mut s.varies) {
                    *x |= v != f;
                }
                s.bones += 1;
                k
            }
            None => {
                let k = shapes.len() as u32;
                shapes.push(Kind { pieces: pieces.clone(), first: vals.clone(), varies: vec![false; vals.len()], bones: 1 });
                kinds.insert(pieces.clone(), k);
                k
            }
        };
        shape.push(k);
        let a = values.len() as u32;
        values.extend_from_slice(&vals);
        ranges.push((a, values.len() as u32));
    }
    drop(kinds);
    // A shape of one bone keeps every value.
    for s in &mut shapes {
        if s.bones < 2 {
            s.varies.iter_mut().for_each(|x| *x = true);
        }
    }
    // Each bone's values without the folded ones, in place.
    let mut kept = 0;
    for (range, &k) in ranges.iter_mut().zip(&shape) {
        let varies = &shapes[k as usize].varies;
        let start = kept;
        for h in 0..(range.1 - range.0) as usize {
            if varies[h] {
                values[kept] = values[range.0 as usize + h];
                kept += 1;
            }
        }
        *range = (start as u32, kept as u32);
    }
    values.truncate(kept);
    // The shapes' pieces, folded values joined in, each distinct piece once.
    let mut table: Fx<Cow<'a, str>, usize> = Fx::default();
    let mut list: Vec<Json> = Vec::new();
    let mut id = |p: Cow<'a, str>| {
        let next = table.len();
        *table.entry(p).or_insert_with_key(|p| {
            list.push(Json::String(p.to_string()));
            next
        })
    };
    let shapes = shapes
        .iter()
        .map(|s| {
            let mut out = Vec::with_capacity(s.varies.iter().filter(|&&v| v).count() + 1);
            let mut cur = Cow::Borrowed(s.pieces[0]);
            for ((v, p), &x) in s.first.iter().zip(&s.pieces[1..]).zip(&s.varies) {
                if x {
                    out.push(Json::from(id(std::mem::replace(&mut cur, Cow::Borrowed(p)))));
                } else {
                    let c = cur.to_mut();
                    c.push_str(v);
                    c.push_str(p);
                }
            }
            out.push(Json::from(id(cur)));
            Json::Array(out)
        })
        .collect();
    BoneShapes { pieces: Json::Array(list), shapes: Json::Array(shapes), shape, values, ranges }
}

/// A member of a small object by a scan: `get` would hash the key with SipHash, once per bone.
fn member<'a>(m: &'a Map<String, Json>, key: &str) -> Option<&'a Json> {
    m.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
}

/// A bone's extension: its ID, its element's shape and values.
pub(crate) fn bone_ext(id: u64, shape: usize, values: &[&str]) -> Json {
    let mut m = Map::with_capacity(3);
    m.insert("id".into(), Json::from(id));
    m.insert("shape".into(), Json::from(shape));
    if !values.is_empty() {
        m.insert("values".into(), Json::Array(values.iter().map(|&v| Json::String(v.to_string())).collect()));
    }
    Json::Object(m)
}

/// The source text around the bone elements (see the module documentation).
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Layout<'a> {
    head: &'a str,
    seps: Seps<'a>,
    tail: &'a str,
    /// The bones' IDs in file order (absent: the IR's order is taken as the file's).
    order: Option<Vec<u64>>,
}

#[derive(Debug, Clone, PartialEq)]
enum Seps<'a> {
    Same(&'a str),
    Each(Vec<&'a str>),
}

impl<'a> Layout<'a> {
    /// The layout of `text` whose bone elements lie at `spans` (in file order, not overlapping).
    pub(crate) fn of_text(text: &'a str, spans: impl IntoIterator<Item = (u32, u32)>) -> Layout<'a> {
        let mut spans = spans.into_iter().map(|(a, b)| (a as usize, b as usize));
        let Some((first_start, mut end)) = spans.next() else {
            return Layout { head: text, seps: Seps::Same(""), tail: "", order: None };
        };
        let mut seps = Vec::new();
        for (a, b) in spans {
            seps.push(&text[end..a]);
            end = b;
        }
        let seps = match seps.first() {
            Some(&first) if seps.iter().any(|s| *s != first) => Seps::Each(seps),
            Some(&first) => Seps::Same(first),
            None => Seps::Same(""),
        };
        Layout { head: &text[..first_start], seps, tail: &text[end..], order: None }
    }

    /// The layout with the bones' IDs in file order.
    pub(crate) fn with_order(self, ids: Vec<u64>) -> Layout<'a> {
        Layout { order: Some(ids), ..self }
    }

    /// The layout stored in a skeleton's extension (`None` when absent or malformed).
    pub(crate) fn from_ext(ext: &'a Json) -> Option<Layout<'a>> {
        let l = ext.get("layout")?.as_object()?;
        let head = member(l, "head")?.as_str()?;
        let tail = member(l, "tail")?.as_str()?;
        let seps = match (member(l, "sep"), member(l, "seps")) {
            (Some(Json::String(s)), None) => Seps::Same(s),
            (None, Some(Json::Array(v))) => Seps::Each(v.iter().map(Json::as_str).collect::<Option<_>>()?),
            _ => return None,
        };
        let order = match member(l, "order") {
            None => None,
            Some(Json::Array(v)) => Some(v.iter().map(Json::as_u64).collect::<Option<_>>()?),
            Some(_) => return None,
        };
        Some(Layout { head, seps, tail, order })
    }

    /// Whether the pieces join into a skeleton file of `form` around good bone elements (see
    /// [`is_skeleton_frame`]).
    pub(crate) fn is_frame(&self, form: crate::model::Form, bytes: crate::text::ByteForm) -> bool {
        let seps = match &self.seps {
            Seps::Same(s) => std::slice::from_ref(s),
            Seps::Each(v) => v.as_slice(),
        };
        is_skeleton_frame(self.head, self.tail, seps, form, bytes)
    }

    /// The extension's form of the layout.
    pub(crate) fn to_json(&self) -> Json {
        let mut m = Map::with_capacity(3);
        m.insert("head".into(), Json::from(self.head));
        match &self.seps {
            Seps::Same(s) => m.insert("sep".into(), Json::from(*s)),
            Seps::Each(v) => m.insert("seps".into(), Json::from(v.clone())),
        };
        m.insert("tail".into(), Json::from(self.tail));
        if let Some(o) = &self.order {
            m.insert("order".into(), Json::from(o.clone()));
        }
        Json::Object(m)
    }

    /// The separator after the `k`-th fragment. With bones added or removed since the read there
    /// are more or fewer gaps than separators: the last one stands in, and the model the text is
    /// parsed into decides the output's layout anyway.
    fn sep(&self, k: usize) -> &'a str {
        match &self.seps {
            Seps::Same(s) => s,
            Seps::Each(v) => v.get(k).or(v.last()).copied().unwrap_or(""),
        }
    }

    /// `(id, fragment)` pairs in file order: as the layout's `order` lists them, the bones it
    /// does not list (added since) after them in the order given.
    pub(crate) fn file_order<T>(&self, fragments: &mut [(u64, T)]) {
        if let Some(order) = &self.order {
            let at: std::collections::HashMap<u64, usize, crate::model::IdHash> =
                order.iter().enumerate().map(|(k, &id)| (id, k)).collect();
            fragments.sort_by_key(|(id, _)| at.get(id).copied().unwrap_or(usize::MAX));
        }
    }

    /// The bytes of data the layout is: its pieces, each separator once.
    pub(crate) fn data_len(&self) -> usize {
        let seps = match &self.seps {
            Seps::Same(s) => s.len(),
            Seps::Each(v) => v.iter().map(|s| s.len()).sum(),
        };
        self.head.len() + self.tail.len() + seps + self.order.as_ref().map_or(0, Vec::len)
    }

    /// The length of [`Layout::join`]'s text for `count` fragments of `len` bytes in all.
    pub(crate) fn joined_len(&self, count: usize, len: usize) -> usize {
        let seps = (0..count.saturating_sub(1)).map(|k| self.sep(k).len()).fold(0usize, usize::saturating_add);
        len.saturating_add(seps).saturating_add(self.head.len() + self.tail.len())
    }

    /// The text: head, the fragments joined by the separators, tail.
    pub(crate) fn join<'f>(&self, fragments: impl ExactSizeIterator<Item = &'f str> + Clone) -> String {
        let mut out = String::with_capacity(self.joined_len(fragments.len(), fragments.clone().map(str::len).sum()));
        out.push_str(self.head);
        for (k, f) in fragments.enumerate() {
            if k > 0 {
                out.push_str(self.sep(k - 1));
            }
            out.push_str(f);
        }
        out.push_str(self.tail);
        out
    }
}

/// Whether `xml` is exactly one bone element of `form` (an item of the Bones list) with the ID
/// `id`, well formed and holding only characters XML allows: what the writer asks of a bone's
/// fragment from the extension before it puts it in a file.
///
/// The text is shared with the tokenizer rather than copied for it: the writer checks every bone
/// of a skeleton this way.
pub(crate) fn is_bone_element(xml: &std::sync::Arc<String>, form: crate::model::Form, id: u64) -> bool {
    if validate::first_control(xml.as_bytes()).is_some() {
        return false;
    }
    let Ok(src) = crate::xml::Source::parse_shared(std::sync::Arc::clone(xml)) else { return false };
    let r = src.root;
    if src.node(r).start != 0 || src.node(r).end as usize != xml.len() {
        return false;
    }
    // Structural (see crate::dialect): a `<Bone ID>` element, or an inlined `<ObjectPtr Type="Bone" ID>`.
    let bone = match form {
        crate::model::Form::Standard => src.name(r) == "Bone" && src.attr(r, "Name").is_none(),
        crate::model::Form::Schema => {
            src.name(r) == "ObjectPtr" && src.attr(r, "Type") == Some("Bone") && src.attr(r, "PointerType") != Some("Link")
        }
    };
    bone && src.attr(r, "ID").and_then(|v| v.trim().parse::<u64>().ok()) == Some(id)
}

/// Whether `head` followed by `tail` is a good skeleton file of `form` (encoded as `bytes`) whose
/// Bones list is empty and is where the two meet, and every separator only whitespace and
/// comments: with fragments that pass [`is_bone_element`], the pieces of the extension's layout
/// then join into a skeleton file whose bones are those fragments.
fn is_skeleton_frame(head: &str, tail: &str, seps: &[&str], form: crate::model::Form, bytes: crate::text::ByteForm) -> bool {
    let text = format!("{head}{tail}");
    if validate::check_text(&text, bytes, "").is_err() || !seps.iter().all(|s| is_gap(s)) {
        return false;
    }
    let Ok(src) = crate::xml::Source::parse(text) else { return false };
    if crate::parse::detect_form(&src) != Some(form) || validate::check(&src, form, "").is_err() {
        return false;
    }
    let Some(list) = src.children(src.root).find(|&k| src.attr(k, "Name") == Some(crate::model::names::BONES)) else { return false };
    let (from, to) = src.content_range(list);
    src.name(list) == form.dialect().list_tag && !src.has_children(list) && (from..=to).contains(&head.len())
}

/// Whether `gap` is only whitespace and well-formed comments.
fn is_gap(gap: &str) -> bool {
    let mut rest = gap.trim_start_matches([' ', '\t', '\r', '\n']);
    while let Some(r) = rest.strip_prefix("<!--") {
        let Some(end) = r.find("-->") else { return false };
        if r[..end].contains("--") {
            return false;
        }
        rest = r[end + 3..].trim_start_matches([' ', '\t', '\r', '\n']);
    }
    rest.is_empty() && validate::first_control(gap.as_bytes()).is_none()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rebuilt(pieces: &[&str], values: &[&str]) -> String {
        let mut out = pieces[0].to_string();
        for (v, p) in values.iter().zip(&pieces[1..]) {
            out.push_str(v);
            out.push_str(p);
        }
        out
    }

    #[test]
    fn spans_come_back_as_they_were_stored() {
        let bones = [(0u64, (0u32, 0u32)), (u64::MAX, (u32::MAX - 1, u32::MAX)), (0x1234_5678_9abc_def0, (17, 4096))];
        let v = spans_json(bones.iter().copied());
        assert_eq!(v.as_str().map(str::len), Some(3 * SPAN_DIGITS));
        assert_eq!(spans_of(&v).as_deref(), Some(&bones[..]));
        assert_eq!(spans_of(&spans_json(std::iter::empty())), Some(Vec::new()));
        // Not what `spans_json` makes: a cut string, a non-hex digit, another JSON type.
        let s = v.as_str().unwrap();
        assert_eq!(spans_of(&Json::from(&s[..s.len() - 1])), None);
        assert_eq!(spans_of(&Json::from(format!("g{}", &s[1..]))), None);
        assert_eq!(spans_of(&serde_json::json!([1, 2])), None);
    }

    /// The cut gives back every byte; values are data attribute values and non-blank texts, and
    /// markup (with quotes or `>` inside) stays in the pieces.
    #[test]
    fn a_cut_gives_the_text_back() {
        let cases: &[(&str, &[&str])] = &[
            ("<Bone ID=\"7\">\r\n  <Value Name=\"Name\" Type=\"UInt32\" HashName='Hips'>12</Value>\n</Bone>", &["7", "Hips", "12"]),
            (
                "<Bone ID = \"7\" Flag=\"a>b\"><!-- \"quoted\" > --><X>1</X> <Y> 2 </Y><![CDATA[<z>]]><?pi \"x\"?></Bone>",
                &["7", "a>b", "1", " 2 "],
            ),
            ("<Bone ID=\"7\"><Enum Name=\"M\" Type=\"T\" Value=\"V\" EnumName=\"E\" PointerType=\"P\">3</Enum></Bone>", &["7", "V", "3"]),
            ("<Bone ID=\"7\"><!-- no end </Bone>", &[]),
            ("<Bone ID=\"7></Bone>", &[]),
            ("", &[]),
        ];
        let (mut p, mut v) = (Vec::new(), Vec::new());
        for (xml, want) in cases {
            cut(xml, &mut p, &mut v);
            assert_eq!(p.len(), v.len() + 1, "{xml}");
            assert_eq!(rebuilt(&p, &v), *xml);
            assert_eq!(&v, want, "{xml}");
        }
    }

    /// Every element comes back from its shape and values; values all bones of a shape share are
    /// folded, a bone alone in its shape keeps them all, and each piece is listed once.
    #[test]
    fn shapes_give_every_element_back() {
        let els = [
            "<Bone ID=\"1\"><A>0</A><B>5</B></Bone>",
            "<Bone ID=\"2\"><A>0</A><B>6</B></Bone>",
            "<Bone ID=\"3\"><A>0</A><C>0</C></Bone>",
            "<Bone ID=\"4\"><A>0</A><B>6</B></Bone>",
        ];
        let s = shapes_of(els.iter().copied());
        let ext = serde_json::json!({"pieces": s.pieces, "shapes": s.shapes});
        let shapes = Shapes::from_ext(&ext).unwrap();
        let pieces: Vec<&str> = ext["pieces"].as_array().unwrap().iter().map(|p| p.as_str().unwrap()).collect();
        assert_eq!(pieces.len(), pieces.iter().collect::<std::collections::HashSet<_>>().len(), "{pieces:?}");
        for (i, xml) in els.iter().enumerate() {
            let mut b = Bone::new(format!("b{i}"), None, Default::default());
            b.ext.set_raw(NAMESPACE, bone_ext(i as u64 + 1, s.shape[i] as usize, s.values(i)));
            let (k, v) = bone_parts(&b).unwrap();
            assert_eq!(shapes.element_len(k, &v), Some(xml.len()));
            assert_eq!(shapes.element(k, &v).as_deref(), Some(*xml));
        }
        assert_eq!(s.shape, [0, 0, 1, 0]);
        assert_eq!(s.values(0), ["1", "5"], "<A>0</A> is the same in the shape's three bones");
        assert_eq!(s.values(2), ["3", "0", "0"], "alone in its shape");
    }
}
