//! What the IR's `anvil` extension holds, per item so that an edit in another tool keeps the
//! rest: on each bone its object ID and its element's exact text (`{"id": N, "xml": "<Bone
//! ...>...</Bone>"}`); on the skeleton the form, encoding, modifier count, a fingerprint of what
//! the IR held when it was read, and the `layout`: the source text with every bone element cut
//! out, as the pieces around them (`head`, one `sep` when every separator is the same or else
//! `seps`, `tail`; and `order`, the bones' IDs in file order, which the IR's order need not be:
//! it lists parents first, and a glTF reader depth first). Head, the fragments in file order
//! joined by the separators, and tail are the source again.

use serde_json::{Map, Value as Json};
use skelport_ir::{Bone, Skeleton};

/// The extension namespace.
pub const NAMESPACE: &str = "anvil";

/// The run-local namespace (see `skelport_ir::ext`) holding the text a skeleton was read from.
pub(crate) const RUN_LOCAL_SOURCE: &str = "~anvil.source";

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

/// The Anvil ID stored on an IR bone: `{"id": N, "xml": ...}`, or the bare ID
/// (`"anvil": 1091164575`) that documents written before the fragments hold.
pub fn bone_ext_id(b: &Bone) -> Option<u64> {
    match b.ext.raw(NAMESPACE)? {
        Json::Number(n) => n.as_u64(),
        Json::Object(m) => member(m, "id")?.as_u64(),
        _ => None,
    }
}

/// The bone element's text stored on an IR bone (`None` when absent or not a string).
pub(crate) fn bone_ext_xml(b: &Bone) -> Option<&str> {
    match b.ext.raw(NAMESPACE)? {
        Json::Object(m) => member(m, "xml")?.as_str(),
        _ => None,
    }
}

/// A member of a small object by a scan: `get` would hash the key with SipHash, once per bone.
fn member<'a>(m: &'a Map<String, Json>, key: &str) -> Option<&'a Json> {
    m.iter().find(|(k, _)| k.as_str() == key).map(|(_, v)| v)
}

/// A bone's extension: its ID and its element's text.
pub(crate) fn bone_ext(id: u64, xml: &str) -> Json {
    let mut m = Map::with_capacity(2);
    m.insert("id".into(), Json::from(id));
    m.insert("xml".into(), Json::String(xml.to_string()));
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
    /// [`crate::parse::is_skeleton_frame`]).
    pub(crate) fn is_frame(&self, form: crate::model::Form, bytes: crate::text::ByteForm) -> bool {
        let seps = match &self.seps {
            Seps::Same(s) => std::slice::from_ref(s),
            Seps::Each(v) => v.as_slice(),
        };
        crate::parse::is_skeleton_frame(self.head, self.tail, seps, form, bytes)
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
    pub(crate) fn file_order(&self, fragments: &mut [(u64, &str)]) {
        if let Some(order) = &self.order {
            let at: std::collections::HashMap<u64, usize, crate::model::IdHash> =
                order.iter().enumerate().map(|(k, &id)| (id, k)).collect();
            fragments.sort_by_key(|(id, _)| at.get(id).copied().unwrap_or(usize::MAX));
        }
    }

    /// The text: head, the fragments joined by the separators, tail.
    pub(crate) fn join<'f>(&self, fragments: impl ExactSizeIterator<Item = &'f str> + Clone) -> String {
        let len = self.head.len() + self.tail.len() + fragments.clone().map(|f| f.len() + self.sep(0).len()).sum::<usize>();
        let mut out = String::with_capacity(len);
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
