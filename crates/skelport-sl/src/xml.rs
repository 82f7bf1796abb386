//! A small read-only element tree for the Collada reader, built from quick-xml events.
//!
//! Why not roxmltree's tree: building it (text nodes, every attribute normalised, every character
//! checked) is a large share of the work of converting a Linden Lab body (docs/performance.md). This tree keeps only elements, their attributes and their leading text, all borrowed
//! from the input (entity references and odd whitespace in attribute values are the only copies),
//! so the number lists (`<float_array>`, `<p>`, `<v>`, `<vcount>`) are parsed straight from the
//! file's bytes into typed buffers.
//!
//! Well-formedness stays roxmltree's: quick-xml checks tags, end names, attributes, comments and
//! references on the fast path, the builder adds the document-level rules (one root, nothing but
//! whitespace outside it, no DTD), and anything it does not check itself (a non-XML character,
//! an unusual name or namespace prefix, a processing instruction) sends the whole text through
//! roxmltree's validation. Every error comes from roxmltree when roxmltree rejects the text, so
//! the messages (and their line:column) are what they were; DTDs, and so entity bombs and
//! external entities, are refused.

use crate::error::SlError;
use foldhash::{HashSet, HashSetExt};
use quick_xml::events::Event;
use skelport_ir::xml::ByteScan;
use skelport_ir::Budget;
use std::borrow::Cow;

/// No link (first child, next sibling, parent).
const NONE: u32 = u32::MAX;

/// Largest number of elements skelport reads (the CLI caps files at 1 GiB; Collada is text).
const MAX_ELEMENTS: usize = 50_000_000;
/// Attributes (`xmlns:` declarations included) on one element: Collada's carry a few, and the
/// cap keeps roxmltree's duplicate check (each attribute against the earlier ones), used when
/// this reader is unsure, from growing with the square of a file's size.
const MAX_ATTRIBUTES: usize = 256;
/// The end of the message past [`MAX_ATTRIBUTES`].
const TOO_MANY_ATTRIBUTES: &str = "attributes on one element";

/// One element: its local name, where it starts, its attributes and its leading text.
struct Elem<'a> {
    name: &'a str,
    /// Byte offset of its `<`, its 1-based line and its 1-based (byte) column, found for every
    /// element in one walk ([`Scan::number_lines`]): computing the column from the text when a
    /// message asks made reading a one-line file quadratic (every `<node>` records its place).
    start: usize,
    line: u32,
    column: u32,
    /// Range into [`Doc::attrs`].
    attrs: (u32, u32),
    parent: u32,
    first_child: u32,
    next_sibling: u32,
    /// One past the last element of its subtree (elements are stored in document order).
    end: u32,
    /// The text before its first child element, comment or processing instruction, as roxmltree's
    /// `Node::text` gives it.
    text: Option<Cow<'a, str>>,
}

/// A parsed document: elements in document order, the root first.
pub(crate) struct Doc<'a> {
    text: &'a str,
    elems: Vec<Elem<'a>>,
    attrs: Vec<(&'a str, Cow<'a, str>)>,
}

/// An element of a [`Doc`].
#[derive(Clone, Copy)]
pub(crate) struct Node<'d, 'a> {
    doc: &'d Doc<'a>,
    id: u32,
}

impl<'d, 'a> Node<'d, 'a> {
    fn e(&self) -> &'d Elem<'a> {
        &self.doc.elems[self.id as usize]
    }
    /// The local name (without a namespace prefix).
    pub fn name(&self) -> &'d str {
        self.e().name
    }
    pub fn has_tag_name(&self, name: &str) -> bool {
        self.e().name == name
    }
    /// The value of an unprefixed attribute.
    pub fn attribute(&self, key: &str) -> Option<&'d str> {
        let (a, b) = self.e().attrs;
        self.doc.attrs[a as usize..b as usize].iter().find(|(k, _)| *k == key).map(|(_, v)| v.as_ref())
    }
    /// The element's leading text (see [`Elem::text`]).
    pub fn text(&self) -> Option<&'d str> {
        self.e().text.as_deref()
    }
    /// 1-based line and (byte) column of the element's `<`.
    pub fn line_column(&self) -> (usize, usize) {
        let e = self.e();
        (e.line as usize, e.column as usize)
    }
    pub fn parent(&self) -> Option<Node<'d, 'a>> {
        let p = self.e().parent;
        (p != NONE).then_some(Node { doc: self.doc, id: p })
    }
    /// Child elements in order.
    pub fn children(&self) -> impl Iterator<Item = Node<'d, 'a>> + 'd {
        let doc = self.doc;
        let mut at = self.e().first_child;
        std::iter::from_fn(move || {
            if at == NONE {
                return None;
            }
            let n = Node { doc, id: at };
            at = doc.elems[at as usize].next_sibling;
            Some(n)
        })
    }
    /// The element and every element below it, in document order.
    pub fn descendants(&self) -> impl Iterator<Item = Node<'d, 'a>> + 'd {
        let doc = self.doc;
        (self.id..self.e().end).map(move |id| Node { doc, id })
    }
}

impl<'a> Doc<'a> {
    pub fn root(&self) -> Node<'_, 'a> {
        Node { doc: self, id: 0 }
    }
}

/// Bytes charged per element the tree may hold (one per `<` in the text): an [`Elem`], twice
/// for a vector's spare capacity and the copy made when it grows.
const ELEMENT_BYTES: u64 = 2 * std::mem::size_of::<Elem<'static>>() as u64;
/// Bytes charged per attribute the tree may hold (one per `=` in the text), likewise.
const ATTRIBUTE_BYTES: u64 = 2 * std::mem::size_of::<(&str, Cow<'static, str>)>() as u64;
/// Bytes charged per `<` when roxmltree checks the text: its node (element, text or comment),
/// with spare capacity, a generous bound of `roxmltree::NodeData`.
const ROXMLTREE_NODE_BYTES: u64 = 2 * 96;
/// Bytes charged per `=` when roxmltree checks the text: its attribute, likewise.
const ROXMLTREE_ATTRIBUTE_BYTES: u64 = 2 * 64;

/// Parse `text` (`file` names it in errors), charging `budget` for the tree before it is built:
/// the elements and attributes the text can hold at most, counted from its `<` and `=` bytes
/// (one fast pass; a tree of `<a/>` takes 40 times its text).
pub(crate) fn parse<'a>(text: &'a str, file: &str, budget: &Budget) -> Result<Doc<'a>, SlError> {
    // The byte scan (unusual bytes, newlines, and the '<' and '=' that bound the tree) comes
    // first, as the budget is charged from it before the tree is built; a big text's blocks are
    // scanned on every core.
    let scan = if text.len() < PARALLEL_FROM { Scan::of(text) } else { Scan::of_parallel(text) };
    let (lt, eq) = (scan.lt, scan.eq);
    let tree = |element: u64, attribute: u64| lt.saturating_mul(element).saturating_add(eq.saturating_mul(attribute));
    budget.charge(tree(ELEMENT_BYTES, ATTRIBUTE_BYTES), file, &format!("the element tree ({lt} '<', {eq} '=')"))?;
    let full_check = |text: &str, file: &str| -> Result<(), SlError> {
        budget.charge(
            tree(ROXMLTREE_NODE_BYTES, ROXMLTREE_ATTRIBUTE_BYTES),
            file,
            &format!("the XML check's tree ({lt} '<', {eq} '=')"),
        )?;
        full_check(text, file)
    };
    let built = if text.len() < PARALLEL_FROM { build(text) } else { build_in_two(text, scan.middle()) };
    if scan.unusual {
        full_check(text, file)?;
    }
    // Past the check above, a second one would find the same.
    match built {
        Ok((mut doc, unsure)) => {
            if unsure && !scan.unusual {
                full_check(text, file)?;
            }
            scan.number_lines(&mut doc);
            Ok(doc)
        }
        Err((at, message)) => {
            // Past the attribute cap, roxmltree's verdict would take time in the square of the
            // attributes: the cap is the answer.
            if !message.ends_with(TOO_MANY_ATTRIBUTES) && !scan.unusual {
                full_check(text, file)?;
            }
            // roxmltree accepts what quick-xml refused: report quick-xml's finding.
            let before = &text[..floor_char_boundary(text, at)];
            let line = before.bytes().filter(|&b| b == b'\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            Err(SlError::Xml {
                file: file.into(),
                line,
                column,
                message: format!("{message}; the file is not well-formed XML (truncated or hand-edited?): re-export it"),
            })
        }
    }
}

fn floor_char_boundary(s: &str, mut at: usize) -> usize {
    at = at.min(s.len());
    while !s.is_char_boundary(at) {
        at -= 1;
    }
    at
}

/// roxmltree's full parse, for its verdict and error message. No DTD: Collada needs none, and
/// refusing it refuses entity-expansion bombs and external entities.
fn full_check(text: &str, file: &str) -> Result<(), SlError> {
    let opts = roxmltree::ParsingOptions { allow_dtd: false, nodes_limit: MAX_ELEMENTS as u32, ..Default::default() };
    roxmltree::Document::parse_with_options(text, opts).map(|_| ()).map_err(|e| SlError::xml(file, &e))
}

/// Bytes from which the scan and the tree run on two cores (below it, starting a thread costs
/// more than it saves: the same measurement as `collada::PARALLEL_FROM`).
const PARALLEL_FROM: usize = 4 << 20;

/// Newlines are counted per block of this many bytes, so that an element's line is found from
/// its block's count and at most one block's bytes.
const BLOCK: usize = 4096;

/// One pass over the text's bytes ([`skelport_ir::xml::scan_bytes`]): whether it holds bytes the
/// fast path does not vouch for, the `<` and `=` that bound the tree, and the number of newlines
/// before each [`BLOCK`].
#[cfg_attr(any(test, feature = "fuzzing"), derive(Debug, PartialEq))]
struct Scan {
    unusual: bool,
    lt: u64,
    eq: u64,
    /// `newlines_before[k]`: newlines in `text[..k * BLOCK]`.
    newlines_before: Vec<u32>,
    /// `work_before[k]`: the tree's work in `text[..k * BLOCK]`, in bytes' worth ([`ITEM_WORK`]).
    work_before: Vec<u64>,
}

/// What an element or attribute costs the tree builder beyond its bytes, in bytes' worth: about
/// 75 ns against 0.056 ns a byte of text here (the 50 MB Collada's halves read one after the
/// other: 25 MB and 7,500 `<` and `=` in 1.95 ms, 24.7 MB and 19,500 in 2.85 ms).
const ITEM_WORK: u64 = 1024;

impl Scan {
    fn of(text: &str) -> Scan {
        Scan::summed(text.as_bytes().chunks(BLOCK).map(skelport_ir::xml::scan_bytes))
    }

    /// [`Scan::of`], the blocks scanned on rayon's pool (each block's counts are its own; only
    /// the newlines before each block are summed in order, after).
    fn of_parallel(text: &str) -> Scan {
        use rayon::prelude::*;
        let blocks: Vec<ByteScan> = text.as_bytes().par_chunks(BLOCK).map(skelport_ir::xml::scan_bytes).collect();
        Scan::summed(blocks.into_iter())
    }

    /// The text's scan from its blocks' scans, in order.
    fn summed(blocks: impl ExactSizeIterator<Item = ByteScan>) -> Scan {
        let mut newlines_before = Vec::with_capacity(blocks.len());
        let mut work_before = Vec::with_capacity(blocks.len());
        let (mut unusual, mut lt, mut eq, mut n, mut work) = (false, 0u64, 0u64, 0u32, 0u64);
        for s in blocks {
            newlines_before.push(n);
            work_before.push(work);
            unusual |= s.unusual;
            lt += s.lt;
            eq += s.eq;
            n = n.wrapping_add(s.newlines as u32);
            work += BLOCK as u64 + ITEM_WORK * (s.lt + s.eq);
        }
        work_before.push(work);
        Scan { unusual, lt, eq, newlines_before, work_before }
    }

    /// The end of the block in which half the tree's work is done (0 for an empty text).
    fn middle(&self) -> usize {
        let half = self.work_before.last().copied().unwrap_or(0) / 2;
        self.work_before.partition_point(|&w| w < half) * BLOCK
    }

    /// Give every element its 1-based line and column (elements are in document order, so one
    /// walk). A line's start is looked for backwards from an element only when its line differs
    /// from the previous element's, and never past that element: each byte is looked at once.
    fn number_lines(&self, doc: &mut Doc<'_>) {
        let b = doc.text.as_bytes();
        let (mut counted, mut line) = (0usize, 1u32);
        let (mut previous, mut line_start) = (0usize, 0usize);
        for e in &mut doc.elems {
            let at = e.start;
            let before = line;
            if at / BLOCK > counted / BLOCK {
                counted = at / BLOCK * BLOCK;
                line = 1 + self.newlines_before[at / BLOCK];
            }
            line += count_newlines(&b[counted..at]);
            counted = at;
            e.line = line;
            if line != before {
                // A newline lies between the previous element and this one.
                line_start = memchr::memrchr(b'\n', &b[previous..at]).map_or(line_start, |i| previous + i + 1);
                #[cfg(test)]
                position_work::add(at - line_start.max(previous) + 1);
            }
            e.column = u32::try_from(at - line_start + 1).unwrap_or(u32::MAX);
            previous = at;
        }
    }
}

/// A name the fast path vouches for: ASCII letters, digits, `_ - . :` or non-ASCII, not starting
/// with a digit, `-` or `.`. Anything else is left to roxmltree.
fn plain_name(n: &[u8]) -> bool {
    match n.first() {
        None | Some(b'0'..=b'9' | b'-' | b'.') => false,
        Some(_) => n.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.' | b':') || c >= 0x80),
    }
}

/// The `&'a str` of a slice quick-xml borrowed from `text`.
fn within<'a>(text: &'a str, part: &[u8]) -> Option<&'a str> {
    let off = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    text.get(off..off + part.len())
}

/// Build the tree. `Ok((doc, true))` asks for roxmltree's full check (something the fast path
/// does not vouch for); `Err((byte offset, message))` is a definite error.
#[allow(clippy::type_complexity)]
fn build(text: &str) -> Result<(Doc<'_>, bool), (usize, String)> {
    let part = build_piece(text, 0, text.len(), Piece::Whole)?;
    Ok(finish(text, part))
}

/// [`build`] on two threads for a big text: the part before the first start tag from byte
/// `middle` (where about half the work lies, [`Scan::middle`]) and the part from it are read at
/// once and joined. Joined, the tree is [`build`]'s, element for element
/// (`build_in_two_agrees_with_build` checks every split point of its texts). Anything the join
/// cannot vouch for (the split inside a comment, CDATA or a tag; end tags that do not close what
/// the first part left open; any error) is read again by [`build`], so errors and their places
/// are always [`build`]'s.
#[allow(clippy::type_complexity)]
fn build_in_two(text: &str, middle: usize) -> Result<(Doc<'_>, bool), (usize, String)> {
    match split_point(text, middle).and_then(|at| build_split(text, at)) {
        Some(built) => Ok(built),
        None => build(text),
    }
}

/// The first start tag's `<` at or after byte `from` (a `<` followed by a name's first byte), if
/// any. It may lie inside a comment, CDATA or an attribute value: [`build_split`] finds out.
fn split_point(text: &str, from: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut at = from;
    while let Some(k) = memchr::memchr(b'<', b.get(at..)?) {
        let lt = at + k;
        if starts_tag(b, lt) {
            return Some(lt);
        }
        at = lt + 1;
    }
    None
}

/// Whether `b[at..]` begins like a start tag: `<` and a name's first byte.
fn starts_tag(b: &[u8], at: usize) -> bool {
    b.get(at) == Some(&b'<') && b.get(at + 1).is_some_and(|&c| c.is_ascii_alphabetic() || c == b'_' || c == b':' || c >= 0x80)
}

/// The tree of `text` read as two pieces split at byte `at` on two threads, or `None` when the
/// pieces do not join into [`build`]'s tree. `at` must begin a start tag: its element ends
/// the text its parent collects ([`Elem::text`]), which the head read.
fn build_split(text: &str, at: usize) -> Option<(Doc<'_>, bool)> {
    if !starts_tag(text.as_bytes(), at) {
        return None;
    }
    let (head, tail) = rayon::join(|| build_piece(text, 0, at, Piece::Head), || build_piece(text, at, text.len(), Piece::Tail));
    let (mut head, tail) = (head.ok()?, tail.ok()?);
    // The tail's end tags of elements it did not open must close the head's open elements, innermost
    // first, and all of them; nothing of the tail may lie past the root's end.
    let depth = head.stack.len();
    if tail.closes.len() != depth
        || tail.closes.iter().enumerate().any(|(k, (name, _))| *name != head.stack[depth - 1 - k].2)
        || tail.tops.iter().any(|&(_, k)| k as usize >= depth)
        || tail.outside.is_some_and(|k| k as usize >= depth)
        || head.elems.len() + tail.elems.len() > MAX_ELEMENTS
    {
        return None;
    }
    let (n, a) = (head.elems.len() as u32, head.attrs.len() as u32);
    let moved = |x: u32| if x == NONE { NONE } else { x + n };
    head.elems.extend(tail.elems.into_iter().map(|mut e| {
        e.parent = moved(e.parent);
        e.first_child = moved(e.first_child);
        e.next_sibling = moved(e.next_sibling);
        e.end += n;
        e.attrs = (e.attrs.0 + a, e.attrs.1 + a);
        e
    }));
    head.attrs.extend(tail.attrs);
    // The tail's outermost elements are children of the head's open elements: of the innermost
    // until its end tag, then of the one around it, and so on.
    for &(id, k) in &tail.tops {
        let id = id + n;
        let (parent, last, _) = &mut head.stack[depth - 1 - k as usize];
        head.elems[id as usize].parent = *parent;
        if *last == NONE {
            head.elems[*parent as usize].first_child = id;
        } else {
            head.elems[*last as usize].next_sibling = id;
        }
        *last = id;
    }
    for (k, &(_, before)) in tail.closes.iter().enumerate() {
        let open = head.stack[depth - 1 - k].0;
        head.elems[open as usize].end = n + before;
    }
    head.unsure |= tail.unsure;
    head.prefixed |= tail.prefixed;
    head.prefixes.extend(tail.prefixes);
    Some(finish(text, head))
}

/// Which piece of the text [`build_piece`] reads.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Piece {
    /// All of it.
    Whole,
    /// From the start to a start tag, where it must end outside any markup, inside the root.
    Head,
    /// From a start tag to the end, inside elements it does not know.
    Tail,
}

/// What [`build_piece`] read: a tree, or for a [`Piece`] of the text, a part of one with what
/// joining it to the other part needs.
struct Part<'a> {
    elems: Vec<Elem<'a>>,
    attrs: Vec<(&'a str, Cow<'a, str>)>,
    /// Open elements at the end (a head's): id, last child so far, qualified name.
    stack: Vec<(u32, u32, &'a str)>,
    /// A tail's end tags of elements opened before it: qualified name, elements read before it.
    closes: Vec<(&'a str, u32)>,
    /// A tail's outermost elements: id, end tags of `closes` before it.
    tops: Vec<(u32, u32)>,
    /// A tail's last character data, CDATA or reference outside its own elements: the end tags
    /// of `closes` before it (a document may have none outside its root; closes only grow, so
    /// the last is the one that may lie past the root).
    outside: Option<u32>,
    unsure: bool,
    /// Whether a name has a prefix, and the prefixes declared (`xmlns:p`) anywhere.
    prefixed: bool,
    prefixes: HashSet<&'a str>,
}

impl Part<'_> {
    /// Character data, CDATA or a reference outside every element a tail opened (inside elements
    /// it does not know, or past the root's end): remember where, the last time.
    fn mark_outside(&mut self) {
        self.outside = Some(self.closes.len() as u32);
    }
}

/// Read `text[from..to]` as `piece`. Element places are offsets in `text`.
fn build_piece(text: &str, from: usize, to: usize, piece: Piece) -> Result<Part<'_>, (usize, String)> {
    let mut reader = quick_xml::Reader::from_str(&text[from..to]);
    reader.config_mut().check_comments = true;
    // A tail's end tags may close elements it never saw: it checks the names itself.
    reader.config_mut().check_end_names = piece != Piece::Tail;
    reader.config_mut().allow_unmatched_ends = piece == Piece::Tail;
    let mut part = Part {
        elems: Vec::new(),
        attrs: Vec::new(),
        stack: Vec::new(),
        closes: Vec::new(),
        tops: Vec::new(),
        outside: None,
        unsure: false,
        prefixed: false,
        prefixes: HashSet::new(),
    };
    let mut root_done = false;
    let mut first_event = piece != Piece::Tail;
    // The attribute names of the element being read: duplicates found with a set (quick-xml's
    // own check compares each attribute with every earlier one).
    let mut keys: HashSet<&str> = HashSet::new();
    // Whether the innermost open element still collects its leading text.
    let mut collecting = false;
    let tail = piece == Piece::Tail;
    // quick-xml skips a byte order mark at the start and counts its places after it (one is left
    // when a file begins with two: the reader's decode strips the first).
    let origin = from + if from == 0 && text.starts_with('\u{feff}') { '\u{feff}'.len_utf8() } else { 0 };
    loop {
        let at = origin + reader.buffer_position() as usize;
        let ev = match reader.read_event() {
            Ok(ev) => ev,
            Err(e) => return Err((origin + reader.error_position() as usize, e.to_string())),
        };
        let first = std::mem::replace(&mut first_event, false);
        match ev {
            Event::Start(ref s) | Event::Empty(ref s) => {
                if root_done {
                    return Err((at, "a second root element".into()));
                }
                if part.elems.len() >= MAX_ELEMENTS {
                    return Err((at, format!("more than {MAX_ELEMENTS} elements")));
                }
                let qname = s.name().into_inner();
                part.unsure |= !plain_name(qname);
                let qname = within(text, qname).ok_or_else(|| (at, "element name outside the text".to_string()))?;
                let name = match qname.split_once(':') {
                    Some((_, local)) => {
                        part.prefixed = true;
                        local
                    }
                    None => qname,
                };
                let a0 = part.attrs.len() as u32;
                keys.clear();
                for a in s.attributes().with_checks(false) {
                    let a = a.map_err(|e| (at, e.to_string()))?;
                    skelport_ir::names::add_work(1);
                    if keys.len() >= MAX_ATTRIBUTES {
                        return Err((at, format!("more than {MAX_ATTRIBUTES} {TOO_MANY_ATTRIBUTES}")));
                    }
                    let key = a.key.into_inner();
                    part.unsure |= !plain_name(key);
                    let key = within(text, key).ok_or_else(|| (at, "attribute name outside the text".to_string()))?;
                    // XML wants whitespace before each attribute; quick-xml does not insist.
                    let key_at = key.as_ptr() as usize - text.as_ptr() as usize;
                    if !keys.insert(key) {
                        return Err((key_at, format!("attribute '{key}' is given twice on one element")));
                    }
                    part.unsure |= !text.as_bytes()[..key_at].last().is_some_and(u8::is_ascii_whitespace);
                    if let Some(p) = key.strip_prefix("xmlns:") {
                        part.prefixes.insert(p);
                    } else if key.contains(':') && !key.starts_with("xml:") {
                        part.prefixed = true;
                    }
                    let raw: &[u8] = &a.value;
                    if raw.contains(&b'<') {
                        part.unsure = true;
                    }
                    let value = if raw.iter().any(|&c| matches!(c, b'&' | b'\t' | b'\n' | b'\r')) {
                        // Attribute-value normalisation (XML 1.0 §3.3.3): literal line ends (CR LF
                        // as one, §2.11) and tabs become spaces, then references are resolved, so
                        // `&#9;`, `&#10;` and `&#13;` give back the characters they name.
                        let raw = within(text, raw).ok_or_else(|| (at, "attribute value outside the text".to_string()))?;
                        let flat = raw.replace("\r\n", " ").replace(['\t', '\n', '\r'], " ");
                        Cow::Owned(quick_xml::escape::unescape(&flat).map_err(|e| (at, e.to_string()))?.into_owned())
                    } else {
                        Cow::Borrowed(within(text, raw).ok_or_else(|| (at, "attribute value outside the text".to_string()))?)
                    };
                    part.attrs.push((key, value));
                }
                let id = part.elems.len() as u32;
                let parent = match part.stack.last_mut() {
                    Some((p, last, _)) => {
                        if *last == NONE {
                            part.elems[*p as usize].first_child = id;
                        } else {
                            part.elems[*last as usize].next_sibling = id;
                        }
                        *last = id;
                        *p
                    }
                    None => {
                        if tail {
                            part.tops.push((id, part.closes.len() as u32));
                        }
                        NONE
                    }
                };
                part.elems.push(Elem {
                    name,
                    start: at,
                    line: 0,
                    column: 0,
                    attrs: (a0, part.attrs.len() as u32),
                    parent,
                    first_child: NONE,
                    next_sibling: NONE,
                    end: id + 1,
                    text: None,
                });
                if matches!(ev, Event::Start(_)) {
                    part.stack.push((id, NONE, qname));
                    collecting = true;
                } else {
                    collecting = false;
                    root_done |= part.stack.is_empty() && !tail;
                }
            }
            Event::End(ref e) => {
                collecting = false;
                if tail {
                    let qname = within(text, e.name().into_inner()).ok_or_else(|| (at, "element name outside the text".to_string()))?;
                    match part.stack.pop() {
                        Some((id, _, open)) if open == qname => part.elems[id as usize].end = part.elems.len() as u32,
                        Some(_) => return Err((at, "an end tag that does not match its start tag".into())),
                        None => part.closes.push((qname, part.elems.len() as u32)),
                    }
                    continue;
                }
                // quick-xml has checked the name against the open element.
                let (id, _, _) = part.stack.pop().ok_or_else(|| (at, "an end tag without a start tag".to_string()))?;
                part.elems[id as usize].end = part.elems.len() as u32;
                root_done |= part.stack.is_empty();
            }
            Event::Text(t) => {
                let raw = t.into_inner();
                // `]]>` may not appear in character data; quick-xml does not check it.
                if memchr::memchr(b'>', &raw).is_some() && raw.windows(3).any(|w| w == b"]]>") {
                    part.unsure = true;
                }
                match part.stack.last() {
                    None => {
                        if !raw.iter().all(u8::is_ascii_whitespace) {
                            if !tail {
                                return Err((at, "text outside the root element".into()));
                            }
                            part.mark_outside();
                        }
                    }
                    Some(&(id, _, _)) if collecting => {
                        let s = within(text, &raw).ok_or_else(|| (at, "text outside the input".to_string()))?;
                        push_text(&mut part.elems[id as usize].text, s);
                    }
                    Some(_) => {}
                }
            }
            Event::CData(t) => {
                let raw = t.into_inner();
                match part.stack.last() {
                    Some(&(id, _, _)) if collecting => {
                        let s = within(text, &raw).ok_or_else(|| (at, "CDATA outside the input".to_string()))?;
                        push_text(&mut part.elems[id as usize].text, s);
                    }
                    Some(_) => {}
                    None if tail => part.mark_outside(),
                    None => return Err((at, "CDATA outside the root element".into())),
                }
            }
            Event::GeneralRef(r) => {
                let c: char = match r.resolve_char_ref() {
                    Ok(Some(c)) => c,
                    Ok(None) => match &*r {
                        b"lt" => '<',
                        b"gt" => '>',
                        b"amp" => '&',
                        b"apos" => '\'',
                        b"quot" => '"',
                        _ => return Err((at, "an unknown entity reference".into())),
                    },
                    Err(e) => return Err((at, e.to_string())),
                };
                if (c as u32) < 0x20 && !matches!(c, '\t' | '\n' | '\r') || matches!(c, '\u{FFFE}' | '\u{FFFF}') {
                    part.unsure = true;
                }
                match part.stack.last() {
                    Some(&(id, _, _)) if collecting => {
                        let slot = &mut part.elems[id as usize].text;
                        slot.get_or_insert(Cow::Borrowed("")).to_mut().push(c);
                    }
                    Some(_) => {}
                    None if tail => part.mark_outside(),
                    None => return Err((at, "a reference outside the root element".into())),
                }
            }
            Event::Comment(_) => collecting = false,
            Event::Decl(_) => {
                // quick-xml does not check the declaration's pseudo-attributes: let roxmltree
                // judge it on its own (a few bytes) and the whole text if it objects.
                let decl = text.get(at..from + reader.buffer_position() as usize).unwrap_or("");
                part.unsure |= !first || roxmltree::Document::parse(&format!("{decl}<a/>")).is_err();
            }
            Event::PI(_) => {
                part.unsure = true;
                collecting = false;
            }
            Event::DocType(_) => return Err((at, "a DTD".into())),
            Event::Eof => {
                let ended = match piece {
                    Piece::Whole => part.stack.is_empty() && root_done,
                    // A head ends (at the tail's first byte: quick-xml refuses to end inside
                    // markup) inside the root; a tail inside no element of its own.
                    Piece::Head => !part.stack.is_empty(),
                    Piece::Tail => part.stack.is_empty(),
                };
                if !ended {
                    return Err((at, "the document ends inside the root element or has none".into()));
                }
                break;
            }
        }
    }
    Ok(part)
}

/// The tree of a whole [`Part`], and whether it asks for roxmltree's full check.
fn finish<'a>(text: &'a str, part: Part<'a>) -> (Doc<'a>, bool) {
    let mut unsure = part.unsure;
    let doc = Doc { text, elems: part.elems, attrs: part.attrs };
    if part.prefixed {
        // An undeclared prefix is an error for roxmltree; let it judge unless every prefix used
        // is declared somewhere.
        let declared = |q: &str| q.split_once(':').is_none_or(|(p, _)| p == "xml" || p == "xmlns" || part.prefixes.contains(&p));
        let all_declared = doc.attrs.iter().all(|(k, _)| declared(k))
            && doc.elems.iter().all(|e| {
                // The stored name is local: find the qualified one in the text.
                let q = &text[e.start + 1..];
                let end = q.find(|c: char| c.is_ascii_whitespace() || c == '>' || c == '/').unwrap_or(q.len());
                declared(&q[..end])
            });
        unsure |= !all_declared;
    }
    (doc, unsure)
}

fn push_text<'a>(slot: &mut Option<Cow<'a, str>>, s: &'a str) {
    match slot {
        None => *slot = Some(Cow::Borrowed(s)),
        Some(t) => t.to_mut().push_str(s),
    }
}

/// Bytes the position code looked at on this thread (tests hold it linear in the file).
#[cfg(test)]
pub(crate) mod position_work {
    use std::cell::Cell;
    thread_local!(static BYTES: Cell<usize> = const { Cell::new(0) });
    pub fn add(n: usize) {
        BYTES.with(|b| b.set(b.get() + n));
    }
    /// The count so far, reset to 0.
    pub fn take() -> usize {
        BYTES.with(|b| b.replace(0))
    }
}

/// Byte-wide sums over blocks of 255, so that the count vectorises on full-width lanes.
fn count_newlines(b: &[u8]) -> u32 {
    b.chunks(255).map(|c| u32::from(c.iter().fold(0u8, |a, &x| a + u8::from(x == b'\n')))).sum()
}

/// A tree's every field but the places [`Scan::number_lines`] fills in afterwards.
#[cfg(any(test, feature = "fuzzing"))]
fn shape(doc: &Doc<'_>, unsure: bool) -> String {
    let elems: Vec<_> =
        doc.elems.iter().map(|e| (e.name, e.start, e.attrs, e.parent, e.first_child, e.next_sibling, e.end, e.text.as_deref())).collect();
    format!("{elems:?} {:?} {unsure}", doc.attrs)
}

/// Joined at a `<`, the two pieces give [`build`]'s tree or nothing (then the text is read by
/// [`build`]): never another tree, and never a tree of a text [`build`] refuses. Tried at every
/// `<` (`most` is `None`: also those that begin no start tag, which the join must refuse), or at
/// up to `most` of the start tags, spread over the text; panics on a disagreement, else returns
/// how many splits joined.
#[cfg(any(test, feature = "fuzzing"))]
fn split_agrees(text: &str, most: Option<usize>) -> usize {
    let whole = build(text);
    let b = text.as_bytes();
    let at: Vec<usize> = match most {
        None => memchr::memchr_iter(b'<', b).collect(),
        Some(most) => {
            let tags: Vec<usize> = memchr::memchr_iter(b'<', b).filter(|&at| starts_tag(b, at)).collect();
            let step = tags.len().div_ceil(most.max(1)).max(1);
            tags.into_iter().step_by(step).collect()
        }
    };
    let mut joined = 0;
    for at in at {
        match (&whole, build_split(text, at)) {
            (_, None) => {}
            (Ok((doc, unsure)), Some((split, split_unsure))) => {
                assert_eq!(shape(doc, *unsure), shape(&split, split_unsure), "split at byte {at} of {text:?}");
                joined += 1;
            }
            (Err(e), Some(_)) => panic!("a tree at byte {at} of a text build refuses ({e:?}): {text:?}"),
        }
    }
    joined
}

/// Part of [`crate::DaeFormat`]'s `Format::fuzz_check` (`collada::fuzz_check`): `text` read as
/// texts of [`PARALLEL_FROM`] bytes and more are: its byte scan per block on the pool
/// ([`Scan::of_parallel`]) against [`Scan::of`], and its tree split at up to 64 of its start tags
/// ([`split_agrees`]; each split parses the whole text again, hence the bound). Panics on a
/// difference; returns how many comparisons were made.
#[cfg(feature = "fuzzing")]
pub(crate) fn fuzz_split(text: &str) -> usize {
    assert_eq!(Scan::of_parallel(text), Scan::of(text), "the byte scan per block differs from the scan in one piece");
    1 + split_agrees(text, Some(64))
}

#[cfg(test)]
mod tests {
    use super::{Doc, BLOCK, PARALLEL_FROM};
    use crate::error::SlError;

    /// The parse without a budget: these tests are about the tree.
    fn parse<'a>(text: &'a str, file: &str) -> Result<Doc<'a>, SlError> {
        super::parse(text, file, &skelport_ir::Budget::unlimited())
    }

    /// Element lines from the per-block newline counts equal a plain count, for texts that
    /// cross many blocks with long lines, blank runs and elements on block boundaries, on the
    /// one-thread and the two-thread path.
    #[test]
    fn lines_from_block_counts_equal_a_plain_count() {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |m: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % m as u64) as usize
        };
        for target in [16 * BLOCK, PARALLEL_FROM + BLOCK] {
            let mut text = String::from("<r>");
            while text.len() < target {
                match next(4) {
                    0 => text.push_str(&"\n".repeat(1 + next(3))),
                    1 => text.push_str(&"1 ".repeat(next(BLOCK / 4))),
                    2 => text.push_str(&" ".repeat(BLOCK - text.len() % BLOCK)),
                    _ => {}
                }
                text.push_str("<e>7</e>");
            }
            text.push_str("</r>");
            let doc = parse(&text, "t").expect("well-formed");
            let (mut n, mut counted, mut line) = (0, 0, 1);
            for e in doc.root().descendants() {
                let start = e.e().start;
                line += text[counted..start].bytes().filter(|&b| b == b'\n').count();
                counted = start;
                assert_eq!(e.line_column().0, line, "element at byte {start}");
                n += 1;
            }
            assert!(n > 20, "{n} elements");
        }
    }

    /// The block scan on the pool finds what the scan on one thread finds: the same counts, the
    /// same newlines before every block, an unusual byte wherever it lies (first block, a block's
    /// last byte, the short last block).
    #[test]
    fn the_parallel_scan_equals_the_scan_on_one_thread() {
        let mut next = skelport_ir::testing::xorshift(0x005c_a90f_b10c);
        let alphabet = b"<<=\n\n ab09<>/\"";
        for len in [0, 1, BLOCK - 1, BLOCK, BLOCK + 1, 7 * BLOCK + 123, 64 * BLOCK] {
            let base: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            let mut places = vec![None, Some(0), Some(len.saturating_sub(1))];
            places.extend((len > BLOCK).then_some(Some(BLOCK - 1)));
            for at in places {
                let mut b = base.clone();
                if let (Some(at), false) = (at, b.is_empty()) {
                    b[at] = 0x01;
                }
                let text = std::str::from_utf8(&b).expect("ASCII");
                let (one, pool) = (super::Scan::of(text), super::Scan::of_parallel(text));
                assert_eq!(one, pool, "{len} bytes, control byte at {at:?}");
                assert_eq!(one.unusual, at.is_some() && len > 0);
                assert_eq!(one.lt, b.iter().filter(|&&c| c == b'<').count() as u64);
            }
        }
    }

    fn split_agrees(text: &str) -> usize {
        super::split_agrees(text, None)
    }

    /// Every split of every Collada file the project writes or keeps as a bad input (a second
    /// root, text after the root, mismatched and missing end tags, truncations), and of texts
    /// made to tempt the split: a start tag inside a comment, CDATA, an attribute value and a
    /// processing instruction; prefixes declared after the split; references and CDATA in an
    /// element's text; comments and text after the root.
    #[test]
    fn build_in_two_agrees_with_build() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        let mut texts: Vec<String> = Vec::new();
        let mut dirs = vec![root];
        while let Some(d) = dirs.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    dirs.push(p);
                } else if p.extension().is_some_and(|x| x == "dae") {
                    texts.extend(String::from_utf8(std::fs::read(&p).unwrap()).ok());
                }
            }
        }
        assert!(texts.len() >= 40, "{} Collada files in testdata", texts.len());
        let made = [
            "<r><a x=\"1\">t<b/>u</a><!-- <c> --><d/></r>",
            "\u{feff}<r><a/><b>x</b></r>",
            "\u{feff}<r><a/><b>x</c></r>",
            "<r><![CDATA[ <a> ]]><a/><b>x&amp;y&#65;<c/></b></r>",
            "<r a=\"<b>\"><b/></r>",
            "<r><?pi <b> ?><b/></r>",
            "<p:r xmlns:p=\"u\"><a/><p:b q:c=\"1\" xmlns:q=\"v\"/></p:r>",
            "<r><a/><b/></r><!-- after --> ",
            "<r><a/></r>text",
            "<r><a>x<b/>y</a></r>z",
            "<r><a>x<b/>&amp;</a></r><![CDATA[z]]>",
            "<r><a/></r><s/>",
            "<r><a></b></r>",
            "<r><a/></r></r>",
            "<r><a/><b>",
            "<?xml version=\"1.0\"?>\n<r>\n <a>1 2 3</a>\n <b><c/><d>x</d></b>\n</r>\n",
            "<r><a/><?xml version=\"1.0\"?><b/></r>",
        ];
        texts.extend(made.iter().map(|t| t.to_string()));
        let mut joined = 0;
        for t in &texts {
            joined += split_agrees(t);
        }
        // The fixtures alone have thousands of start tags a split may take.
        assert!(joined > 1000, "{joined} splits joined");
    }

    /// Random well-formed and damaged texts: every split agrees with the one-thread tree.
    #[test]
    fn build_in_two_agrees_on_random_texts() {
        let mut next = skelport_ir::testing::xorshift(0x0b17_5917_7e57);
        let names = ["a", "b", "p:c", "geometry", "source"];
        let (mut joined, mut texts) = (0, 0);
        for _ in 0..400 {
            let mut t = String::from("<r xmlns:p=\"u\">");
            let mut open: Vec<&str> = Vec::new();
            for _ in 0..(next() % 40) {
                match next() % 9 {
                    0 | 1 => {
                        let n = names[(next() % names.len() as u64) as usize];
                        t.push_str(&format!("<{n} k=\"{}\">", next() % 7));
                        open.push(n);
                    }
                    2 => {
                        if let Some(n) = open.pop() {
                            t.push_str(&format!("</{n}>"));
                        }
                    }
                    3 => t.push_str("<e/>"),
                    4 => t.push_str("1 2.5 -3"),
                    5 => t.push_str("<!-- <a> -->"),
                    6 => t.push_str("<![CDATA[<b>]]>"),
                    7 => t.push_str("&lt;&#66;"),
                    _ => t.push('\n'),
                }
            }
            while let Some(n) = open.pop() {
                t.push_str(&format!("</{n}>"));
            }
            t.push_str("</r>");
            // Damaged copies: a byte dropped, a tag cut.
            let cut = (next() as usize) % t.len();
            for text in [t.clone(), format!("{}{}", &t[..cut], &t[(cut + 1).min(t.len())..])] {
                if text.is_char_boundary(cut) {
                    joined += split_agrees(&text);
                    texts += 1;
                }
            }
        }
        assert!(texts > 400 && joined > 2000, "{joined} splits joined in {texts} texts");
    }

    /// The split point is a start tag's `<`, at or after the byte asked for.
    #[test]
    fn split_points_are_start_tags() {
        let t = "<r> 1 < 2 </r><a/><!x><_b/><:c/><\u{e9}/>";
        assert_eq!(super::split_point(t, 0), Some(0));
        assert_eq!(super::split_point(t, 1), Some(14));
        assert_eq!(super::split_point(t, 15), Some(22));
        assert_eq!(super::split_point(t, 23), Some(27));
        assert_eq!(super::split_point(t, 28), Some(32));
        assert_eq!(super::split_point(t, 33), None);
    }

    /// A text that still begins with a byte order mark (a file with two: decoding strips one)
    /// has its element and error places counted from the text's start, as any other text.
    #[test]
    fn places_count_a_leading_byte_order_mark() {
        let (doc, _) = super::build("\u{feff}<r><a/></r>").unwrap();
        assert_eq!(doc.elems.iter().map(|e| e.start).collect::<Vec<_>>(), [3, 6]);
        assert_eq!(super::build("\u{feff}<r><a></b></r>").err().map(|e| e.0), Some(9));
    }

    /// `most` bounds the splits tried (the fuzz check's 64), spread over the start tags: a text of
    /// a thousand and one joins at no more than 64 of them, and at every one when unbounded.
    #[test]
    fn split_agrees_bounds_its_splits() {
        let text = format!("<r>{}</r>", "<a x=\"1\">2</a>".repeat(1000));
        let bounded = super::split_agrees(&text, Some(64));
        assert!((32..=64).contains(&bounded), "{bounded} splits joined");
        // Every `<a>` joins; the root's own start tag (an empty head) does not.
        assert_eq!(super::split_agrees(&text, None), 1000);
    }

    /// The split's middle is where half the tree's work lies: the byte middle of a text of one
    /// kind throughout, nearer the start when the start is dense with elements.
    #[test]
    fn the_middle_weighs_elements() {
        let plain = " 1.5".repeat(16 * BLOCK / 4);
        assert_eq!(super::Scan::of(&plain).middle(), 8 * BLOCK);
        let dense = format!("{}{}", "<a b=\"1\"/>".repeat(4 * BLOCK / 11), " 1.5".repeat(12 * BLOCK / 4));
        let middle = super::Scan::of(&dense).middle();
        assert!(middle <= 4 * BLOCK, "{middle}");
        assert_eq!(super::Scan::of("").middle(), 0);
    }

    /// A one-line Collada of `n` nested joints, and the same with a newline between tags.
    fn nested(n: usize, newlines: bool) -> String {
        let mut s = String::from(
            r#"<?xml version="1.0"?><COLLADA xmlns="http://www.collada.org/2005/11/COLLADASchema" version="1.4.1"><asset><unit meter="1"/><up_axis>Z_UP</up_axis></asset><library_visual_scenes><visual_scene id="s">"#,
        );
        for i in 0..n {
            s.push_str(&format!(
                r#"<node id="n{i}" sid="n{i}" name="n{i}" type="JOINT"><matrix>1 0 0 0 0 1 0 0 0 0 1 0.1 0 0 0 1</matrix>"#
            ));
        }
        s.push_str(&"</node>".repeat(n));
        s.push_str(r##"</visual_scene></library_visual_scenes><scene><instance_visual_scene url="#s"/></scene></COLLADA>"##);
        if newlines {
            s = s.replace("><", ">\n<");
        }
        s
    }

    /// Positions cost work linear in the file, however long its lines: a column counted from the
    /// line's start for every `<node>` would make a one-line file of 40,000 nested nodes quadratic.
    /// Every element's place is asked for here, as the Collada reader asks for every node's.
    #[test]
    fn positions_are_linear_on_one_line_and_on_many() {
        for newlines in [false, true] {
            for n in [10_000, 40_000] {
                let text = nested(n, newlines);
                super::position_work::take();
                let doc = parse(&text, "t").unwrap();
                let mut sum = 0;
                for e in doc.root().descendants() {
                    let (line, column) = e.line_column();
                    sum += line + column;
                }
                assert!(sum > 0);
                let work = super::position_work::take();
                assert!(work <= text.len(), "{n} nodes, newlines {newlines}: {work} bytes looked at for a {}-byte file", text.len());
            }
        }
        // And the columns are right: the last element's column on one line is its byte offset + 1.
        let text = nested(3, false);
        let doc = parse(&text, "t").unwrap();
        let last = doc.root().descendants().last().unwrap();
        assert_eq!(last.line_column(), (1, last.e().start + 1));
        let text = nested(3, true);
        let doc = parse(&text, "t").unwrap();
        assert!(doc.root().descendants().all(|e| e.line_column().1 == 1));
    }

    /// The whole Collada read of the one-line file: the position code looks at no byte twice.
    #[test]
    fn a_one_line_collada_reads_in_linear_position_work() {
        use skelport_ir::Format as _;
        for n in [10_000, 40_000] {
            let text = nested(n, false);
            super::position_work::take();
            let doc = crate::DaeFormat
                .read(skelport_ir::Input { path: None, bytes: text.as_bytes() }, &Default::default(), &mut Default::default())
                .unwrap();
            assert_eq!(doc.skeletons[0].bones.len(), n);
            assert!(super::position_work::take() <= text.len());
        }
    }

    /// Literal tabs and line ends in an attribute read as spaces (CR LF as one), character
    /// references as the characters they name: a writer that escapes a name's tab gets it back.
    #[test]
    fn attribute_normalisation_keeps_character_references() {
        let doc = parse("<a n=\"x&#9;y\tz&#10;&#13;w\r\nv\"/>", "t").unwrap();
        assert_eq!(doc.root().attribute("n"), Some("x\ty z\n\rw v"));
    }

    #[test]
    fn tree_shape_text_and_positions() {
        let text = "<?xml version=\"1.0\"?>\n<a x=\"1\">\n  <b id=\"p&amp;q\" n=\"a\tb\">1 2 &lt;3</b><c/>\n  <b>x<!-- c -->y</b>\n</a>\n";
        let doc = parse(text, "t").unwrap();
        let root = doc.root();
        assert_eq!(root.name(), "a");
        assert_eq!(root.attribute("x"), Some("1"));
        let kids: Vec<_> = root.children().map(|n| n.name()).collect();
        assert_eq!(kids, ["b", "c", "b"]);
        let b = root.children().next().unwrap();
        assert_eq!(b.attribute("id"), Some("p&q"));
        assert_eq!(b.attribute("n"), Some("a b"));
        assert_eq!(b.text(), Some("1 2 <3"));
        assert_eq!(b.line_column(), (3, 3));
        assert_eq!(&text[b.e().start..b.e().start + 2], "<b");
        assert_eq!(root.children().nth(2).unwrap().text(), Some("x"));
        assert_eq!(root.descendants().count(), 4);
        assert_eq!(b.parent().unwrap().name(), "a");
        assert_eq!(root.children().nth(1).unwrap().text(), None);
    }

    #[test]
    fn malformed_documents_get_roxmltree_messages() {
        for (text, want) in [
            ("", "the document does not have a root node"),
            ("<a>", "the root node was opened but never closed"),
            ("<a/><b/>", "unknown token"),
            ("<a/>x", "unknown token"),
            ("<!DOCTYPE a [<!ENTITY e \"x\">]><a>&e;</a>", "DTD"),
            ("<a>&nosuch;</a>", "unknown entity reference"),
            ("<a x=y/>", "expected a quote"),
            ("<a>\0</a>", "non-XML character"),
            ("<p:a/>", "unknown namespace prefix"),
            ("<1a/>", "invalid name token"),
            ("<a></b>", "expected 'a' tag"),
            ("<a>1]]>2</a>", "']]>'"),
            ("<a x=\"1\"y=\"2\"/>", "expected a whitespace"),
            ("<?xml version=\"1.0\" encoding>\n<a/>", "expected '='"),
        ] {
            let e = parse(text, "t").err().unwrap_or_else(|| panic!("{text:?} was accepted")).to_string();
            assert!(e.contains(want), "{text:?}: {e}");
        }
    }
}
