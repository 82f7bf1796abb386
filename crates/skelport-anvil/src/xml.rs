//! A small, lossless XML tree.
//!
//! The tree records only *elements*, as byte ranges into the decoded text: everything between
//! elements (whitespace, line breaks, comments, processing instructions) lives in the gaps
//! between those ranges, so concatenating `text[..]` around untouched elements reproduces the file
//! byte for byte. Attributes are recorded as spans (name and raw value) in one array for the whole
//! file. The tokenizer checks well-formedness (matching tags, quoted attributes, references, one
//! root) and reports the line and column of the first problem.
//!
//! Why hand-rolled: byte-identical re-export needs the exact byte range of every start tag, end
//! tag, attribute value and gap, which roxmltree and quick-xml do not give back together (roxmltree
//! keeps no gap or tag ranges and resolves references; quick-xml events would need a second tree of
//! our own anyway). For speed and memory on a 65,535-bone file (two million elements) it allocates
//! nothing per element: one `Vec` of 32-byte nodes and one of attribute spans, indices into the one
//! decoded string, sized up front from the text length.

use crate::text::{entity_char, line_col, unescape};
use std::borrow::Cow;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// "No node".
pub const NONE: u32 = u32::MAX;

/// One element: 32 bytes, since a 65,535-bone file has two million of them (what the nodes do
/// not store is implied by document order: an element's first child, if any, is the next node;
/// its attributes run up to the next node's first; it is self-closing when its content ends
/// where it ends).
#[derive(Debug, Clone, Copy)]
pub struct Node {
    /// Offset of `<`.
    pub start: u32,
    /// End of the element name.
    pub name_end: u32,
    /// Offset just after the start tag's `>` (or `/>`).
    pub tag_end: u32,
    /// Offset of the end tag's `<` (equals `tag_end` and `end` for a self-closing element).
    pub content_end: u32,
    /// Offset just after the element.
    pub end: u32,
    /// The parent element.
    pub parent: u32,
    /// The next sibling element.
    pub next_sibling: u32,
    /// First entry of this element's attributes in [`Source::attr_spans`].
    pub attr_start: u32,
}

/// Where one attribute's name and raw value lie in the text.
#[derive(Debug, Clone, Copy)]
pub struct AttrSpan {
    name_start: u32,
    name_end: u32,
    value_start: u32,
    value_end: u32,
}

/// A parsed file: its text and its element tree.
#[derive(Debug)]
pub struct Source {
    /// The decoded text (BOM removed).
    pub text: Arc<String>,
    /// Elements in document order; `nodes[root]` is the root element.
    pub nodes: Vec<Node>,
    /// The root element.
    pub root: u32,
    /// Attribute spans of all elements (see [`Node::attr_start`]).
    pub attr_spans: Vec<AttrSpan>,
    /// A process-unique number, so model values can tell which tree they came from.
    pub id: u64,
    /// The deepest nesting seen while parsing (the root is 1), including dropped elements.
    pub max_depth: usize,
    /// Each line's start and the end of its indentation (byte offsets), made on the first
    /// [`Source::indent_of`]: scanning back to the line's start for every element was
    /// quadratic on a one-line file.
    lines: std::sync::OnceLock<Vec<(u32, u32)>>,
}

/// Why a streaming parse ended early.
#[derive(Debug)]
pub enum StreamError {
    /// The text is not well formed (the streaming reader then leaves the message, with its
    /// place, to the tree reader).
    Syntax,
    /// The hook stopped it.
    Stopped,
}

/// A well-formedness error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    /// 1-based line.
    pub line: usize,
    /// 1-based column (characters).
    pub column: usize,
    /// What is wrong.
    pub message: String,
}

static NEXT_ID: AtomicU64 = AtomicU64::new(1);

fn is_name_byte(b: u8) -> bool {
    NAME_BYTE[b as usize]
}

/// [`is_name_byte`] as a table: the tokenizer asks it of every byte of every name.
static NAME_BYTE: [bool; 256] = {
    let mut t = [true; 256];
    let not = [b' ', b'\t', b'\r', b'\n', b'/', b'>', b'=', b'<', b'"', b'\''];
    let mut i = 0;
    while i < not.len() {
        t[not[i] as usize] = false;
        i += 1;
    }
    t
};

/// Where the name starting at `i` ends (the first byte that is not a name byte).
#[inline(always)]
fn name_end_from(s: &[u8], i: usize) -> usize {
    s[i.min(s.len())..].iter().position(|&b| !is_name_byte(b)).map(|p| i + p).unwrap_or(s.len().max(i))
}

/// Bytes of `w` (eight bytes, little-endian) equal to `c`: the lowest set bit marks the first
/// one (bits above it may be wrong, so only the lowest is used).
#[inline(always)]
fn bytes_equal(w: u64, c: u8) -> u64 {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let x = w ^ (LO * c as u64);
    x.wrapping_sub(LO) & !x & HI
}

/// The first byte of `s[from..]` that is `a`, `b` or `c` (its index), eight bytes at a time: the
/// text between tags and attribute values are scanned to their end, and a byte loop was most of
/// the tokenizer's time.
#[inline]
fn find3(s: &[u8], from: usize, a: u8, b: u8, c: u8) -> Option<usize> {
    let mut i = from;
    while i + 8 <= s.len() {
        let w = u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
        let m = bytes_equal(w, a) | bytes_equal(w, b) | bytes_equal(w, c);
        if m != 0 {
            return Some(i + (m.trailing_zeros() / 8) as usize);
        }
        i += 8;
    }
    s[i..].iter().position(|&x| x == a || x == b || x == c).map(|p| i + p)
}

/// Byte-slice equality for short names without a call into libc's memcmp (which the end-tag
/// check and attribute lookups made two million times).
#[inline(always)]
pub(crate) fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |d, (x, y)| d | (x ^ y)) == 0
}
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\r' | b'\n')
}

/// One attribute of a start tag.
#[derive(Debug, Clone, Copy)]
pub struct Attr<'a> {
    /// Its name.
    pub name: &'a str,
    /// Its value as written (entities not resolved).
    pub raw: &'a str,
}

impl Attr<'_> {
    /// The value with references resolved.
    pub fn value(&self) -> Cow<'_, str> {
        unescape(self.raw).unwrap_or(Cow::Borrowed(self.raw))
    }
}

impl Source {
    /// Parse `text` into a tree.
    pub fn parse(text: String) -> Result<Source, SyntaxError> {
        Source::parse_shared(Arc::new(text))
    }

    /// Parse a shared `text` into a tree.
    pub fn parse_shared(text: Arc<String>) -> Result<Source, SyntaxError> {
        if text.len() >= u32::MAX as usize {
            return Err(SyntaxError { line: 1, column: 1, message: "file larger than 4 GiB".into() });
        }
        let src = Source::empty(Arc::clone(&text), text.len() / 24 + 16, text.len() / 16 + 16);
        let mut p = Tokenizer::<NoVisitor>::new(&text, src, None);
        match p.run() {
            Ok(()) => Ok(p.src),
            Err(TokError::At(off, message)) => {
                let (line, column) = line_col(&text, off);
                Err(SyntaxError { line, column, message })
            }
            // Only a hook stops or pauses a parse, and there is none.
            Err(TokError::Stopped) | Err(TokError::Paused) => Err(SyntaxError { line: 1, column: 1, message: "parse stopped".into() }),
        }
    }

    /// A tree with no elements yet. Capacity that is never touched costs address space, not
    /// memory.
    fn empty(text: Arc<String>, nodes: usize, attrs: usize) -> Source {
        Source {
            text,
            nodes: Vec::with_capacity(nodes),
            root: NONE,
            attr_spans: Vec::with_capacity(attrs),
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            max_depth: 0,
            lines: std::sync::OnceLock::new(),
        }
    }

    /// The node at `i`.
    #[inline]
    pub fn node(&self, i: u32) -> &Node {
        &self.nodes[i as usize]
    }

    /// The element name.
    pub fn name(&self, i: u32) -> &str {
        let n = self.node(i);
        &self.text[n.start as usize + 1..n.name_end as usize]
    }

    /// The whole element as written.
    pub fn raw(&self, i: u32) -> &str {
        let n = self.node(i);
        &self.text[n.start as usize..n.end as usize]
    }

    /// The raw start tag.
    pub fn start_tag(&self, i: u32) -> &str {
        let n = self.node(i);
        &self.text[n.start as usize..n.tag_end as usize]
    }

    /// The raw end tag (empty for a self-closing element).
    pub fn end_tag(&self, i: u32) -> &str {
        let n = self.node(i);
        &self.text[n.content_end as usize..n.end as usize]
    }

    /// The raw content between the tags.
    pub fn content(&self, i: u32) -> &str {
        let n = self.node(i);
        &self.text[n.tag_end as usize..n.content_end as usize]
    }

    /// Content byte range.
    pub fn content_range(&self, i: u32) -> (usize, usize) {
        let n = self.node(i);
        (n.tag_end as usize, n.content_end as usize)
    }

    /// The gap text before this element (after the previous sibling or the parent's start tag).
    pub fn gap_before(&self, i: u32) -> &str {
        let n = self.node(i);
        let gap_start = if n.parent == NONE {
            n.start
        } else if n.parent == i - 1 {
            self.node(n.parent).tag_end
        } else {
            // The previous sibling is the ancestor of the previous node that is our sibling.
            let mut p = i - 1;
            while self.node(p).parent != n.parent {
                p = self.node(p).parent;
            }
            self.node(p).end
        };
        &self.text[gap_start as usize..n.start as usize]
    }

    /// The gap after the last child element up to the end tag (the whole content if no child).
    pub fn trailing_gap(&self, i: u32) -> &str {
        let n = self.node(i);
        let from = self.children(i).last().map(|c| self.node(c).end).unwrap_or(n.tag_end);
        &self.text[from as usize..n.content_end as usize]
    }

    /// Attributes in order.
    pub fn attrs(&self, i: u32) -> impl Iterator<Item = Attr<'_>> + '_ {
        let n = self.node(i);
        self.attr_spans[n.attr_start as usize..self.attr_end(i)].iter().map(move |a| Attr {
            name: &self.text[a.name_start as usize..a.name_end as usize],
            raw: &self.text[a.value_start as usize..a.value_end as usize],
        })
    }

    /// Where element `i`'s attributes end in [`Source::attr_spans`]: where the next element's
    /// start (elements and their attributes are both stored in document order).
    fn attr_end(&self, i: u32) -> usize {
        self.nodes.get(i as usize + 1).map(|n| n.attr_start as usize).unwrap_or(self.attr_spans.len())
    }

    /// How many attributes element `i` has.
    pub fn attr_count(&self, i: u32) -> usize {
        self.attr_end(i) - self.node(i).attr_start as usize
    }

    /// Whether element `i` was written `<x/>`.
    pub fn self_closing(&self, i: u32) -> bool {
        let n = self.node(i);
        n.content_end == n.end
    }

    /// The first child element (`NONE` when there is none): the next node, if it is a child.
    fn first_child(&self, i: u32) -> u32 {
        match self.nodes.get(i as usize + 1) {
            Some(c) if c.parent == i => i + 1,
            _ => NONE,
        }
    }

    /// One attribute's raw value.
    pub fn attr(&self, i: u32, name: &str) -> Option<&str> {
        // Compared as bytes: the readers ask this of every element, and building a `&str` for
        // each attribute name checks char boundaries first.
        let b = self.text.as_bytes();
        let a = self.attr_spans[self.node(i).attr_start as usize..self.attr_end(i)]
            .iter()
            .find(|a| same(&b[a.name_start as usize..a.name_end as usize], name.as_bytes()))?;
        Some(&self.text[a.value_start as usize..a.value_end as usize])
    }

    /// Whether element `i` is named `name` (a byte comparison, for loops over every element).
    pub fn name_is(&self, i: u32, name: &str) -> bool {
        let n = self.node(i);
        same(&self.text.as_bytes()[n.start as usize + 1..n.name_end as usize], name.as_bytes())
    }

    /// Child elements.
    pub fn children(&self, i: u32) -> Children<'_> {
        Children { src: self, next: self.first_child(i) }
    }

    /// Whether the element has child elements.
    pub fn has_children(&self, i: u32) -> bool {
        self.first_child(i) != NONE
    }

    /// Line and column of an element's start.
    pub fn pos(&self, i: u32) -> (usize, usize) {
        line_col(&self.text, self.node(i).start as usize)
    }

    /// The whitespace that indents the line an element starts on.
    pub fn indent_of(&self, i: u32) -> &str {
        let start = self.node(i).start;
        let lines = self.lines.get_or_init(|| {
            let b = self.text.as_bytes();
            skelport_ir::names::add_work(b.len() as u64);
            let starts = std::iter::once(0).chain(b.iter().enumerate().filter(|(_, &c)| c == b'\n').map(|(p, _)| p + 1));
            starts
                .map(|ls| {
                    let e = ls + b[ls..].iter().take_while(|&&c| c == b' ' || c == b'\t').count();
                    (ls as u32, e as u32)
                })
                .collect()
        });
        skelport_ir::names::add_work(1);
        let (ls, e) = lines[lines.partition_point(|&(ls, _)| ls <= start) - 1];
        // An element inside the indentation (none is) would end it early.
        &self.text[ls as usize..e.min(start) as usize]
    }

    /// The prolog: everything before the root element.
    pub fn prolog(&self) -> &str {
        &self.text[..self.node(self.root).start as usize]
    }

    /// The epilog: everything after the root element.
    pub fn epilog(&self) -> &str {
        &self.text[self.node(self.root).end as usize..]
    }

    /// The line ending the file uses (`\r\n` when it has one, else `\n`).
    pub fn newline(&self) -> &'static str {
        match self.text.find('\n') {
            Some(p) if p > 0 && self.text.as_bytes()[p - 1] == b'\r' => "\r\n",
            Some(_) => "\n",
            None => "\r\n",
        }
    }
}

/// What a streaming hook does with an element it was handed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visit {
    /// Keep it in the tree.
    Keep,
    /// Drop it and its subtree.
    Drop,
    /// Drop it and pause the parse right after it ([`Progress::Paused`]).
    DropAndPause,
    /// Stop the parse ([`StreamError::Stopped`]).
    Stop,
}

/// How far [`Stream::run`] got.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// The whole text is parsed and well formed.
    Done,
    /// Paused: by the hook, or at the position asked for.
    Paused,
}

/// What a [`Stream`] hands each element at its depth to.
pub trait Visitor {
    /// Element `n` of `s` is complete.
    fn visit(&mut self, s: &Source, n: u32) -> Visit;
}

/// The visitor of a parse that has none.
struct NoVisitor;

impl Visitor for NoVisitor {
    fn visit(&mut self, _: &Source, _: u32) -> Visit {
        Visit::Keep
    }
}

/// A streaming parse: every element that closes at a chosen depth (the root is depth 1) is handed
/// to a hook as soon as it is complete. The hook sees the tree built so far and says whether the
/// element and its subtree stay in the tree; a reader that takes what it needs from each bone
/// and drops it keeps the tree a few hundred nodes long instead of two million (the whole tree
/// of a 65,535-bone file is about 110 MB of fresh pages).
///
/// A stream can pause (by its hook, or before the markup at a given offset) and go on, and a
/// second stream can start at an offset inside the text with the open elements it would have
/// there ([`Stream::resume_at`]), so two threads can parse the two halves of one big list.
pub struct Stream<'t, V: Visitor> {
    tok: Tokenizer<'t, V>,
}

impl<'t, V: Visitor> Stream<'t, V> {
    /// A stream over `text` from its start. `None` for a text of 4 GiB or more.
    pub fn new(text: &'t Arc<String>, depth: usize, hook: V) -> Option<Stream<'t, V>> {
        if text.len() >= u32::MAX as usize {
            return None;
        }
        let src = Source::empty(Arc::clone(text), 1024, 1024);
        Some(Stream { tok: Tokenizer::new(text, src, Some((depth, hook))) })
    }

    /// A stream over `text` from offset `pos`, where the elements `open` of `from` (outermost
    /// first) are open: they are copied (with their attributes) as the new tree's first nodes,
    /// each the child of the one before, so `open[0]` is the new root (node 0).
    pub fn resume_at(text: &'t Arc<String>, pos: usize, from: &Source, open: &[u32], depth: usize, hook: V) -> Option<Stream<'t, V>> {
        let mut st = Stream::new(text, depth, hook)?;
        let t = &mut st.tok;
        for (k, &o) in open.iter().enumerate() {
            let n = from.node(o);
            let attr_start = t.src.attr_spans.len() as u32;
            let (a, b) = (n.attr_start as usize, from.attr_end(o));
            t.src.attr_spans.extend_from_slice(&from.attr_spans[a..b]);
            let parent = if k == 0 { NONE } else { k as u32 - 1 };
            let idx = k as u32;
            t.src.nodes.push(Node { content_end: n.tag_end, end: n.tag_end, parent, next_sibling: NONE, attr_start, ..*n });
            if let Some(lc) = t.last_child.last_mut() {
                *lc = idx;
            }
            t.stack.push(idx);
            t.last_child.push(NONE);
        }
        t.src.root = if open.is_empty() { NONE } else { 0 };
        t.src.max_depth = open.len();
        t.pos = pos;
        Some(st)
    }

    /// Parse on, up to the end or until paused: by the hook, or (with `stop_at`) when the next
    /// markup starts exactly at that offset. A stream that passes `stop_at` inside markup just
    /// goes on to the end.
    pub fn run(&mut self, stop_at: Option<usize>) -> Result<Progress, StreamError> {
        self.tok.stop_at = stop_at.unwrap_or(usize::MAX);
        match self.tok.run() {
            Ok(()) => Ok(Progress::Done),
            Err(TokError::Paused) => Ok(Progress::Paused),
            Err(TokError::Stopped) => Err(StreamError::Stopped),
            Err(TokError::At(..)) => Err(StreamError::Syntax),
        }
    }

    /// The tree so far.
    pub fn source(&self) -> &Source {
        &self.tok.src
    }

    /// The open elements, outermost first.
    pub fn open(&self) -> &[u32] {
        &self.tok.stack
    }

    /// Where the parse is.
    pub fn pos(&self) -> usize {
        self.tok.pos
    }

    /// The visitor.
    pub fn visitor(&self) -> &V {
        &self.tok.hook.as_ref().expect("a stream has a visitor").1
    }

    /// The tree and the visitor.
    pub fn into_parts(self) -> (Source, V) {
        let v = self.tok.hook.expect("a stream has a visitor").1;
        (self.tok.src, v)
    }
}

/// Iterator over child elements.
pub struct Children<'a> {
    src: &'a Source,
    next: u32,
}

impl Iterator for Children<'_> {
    type Item = u32;
    fn next(&mut self) -> Option<u32> {
        if self.next == NONE {
            return None;
        }
        let c = self.next;
        self.next = self.src.node(c).next_sibling;
        Some(c)
    }
}

struct Tokenizer<'a, V: Visitor> {
    s: &'a [u8],
    pos: usize,
    /// The tree being built.
    src: Source,
    stack: Vec<u32>,
    last_child: Vec<u32>,
    /// The streaming hook and the depth it watches.
    hook: Option<(usize, V)>,
    /// Pause before markup that starts here (`usize::MAX`: never).
    stop_at: usize,
}

enum TokError {
    /// Not well formed: the byte offset and the message.
    At(usize, String),
    /// The streaming hook stopped the parse.
    Stopped,
    /// Paused by the hook or at `stop_at`; the parse can go on.
    Paused,
}

type TokResult<T> = Result<T, TokError>;

impl<'t, V: Visitor> Tokenizer<'t, V> {
    fn new(text: &'t Arc<String>, src: Source, hook: Option<(usize, V)>) -> Self {
        Tokenizer { s: text.as_bytes(), pos: 0, src, stack: Vec::new(), last_child: Vec::new(), hook, stop_at: usize::MAX }
    }

    fn find(&self, from: usize, pat: &[u8]) -> Option<usize> {
        let s = self.s;
        if pat.is_empty() || from >= s.len() {
            return None;
        }
        let first = pat[0];
        let mut i = from;
        while i + pat.len() <= s.len() {
            match s[i..].iter().position(|&b| b == first) {
                None => return None,
                Some(p) => {
                    i += p;
                    if i + pat.len() <= s.len() && &s[i..i + pat.len()] == pat {
                        return Some(i);
                    }
                    i += 1;
                }
            }
        }
        None
    }

    fn run(&mut self) -> TokResult<()> {
        let s = self.s;
        let n = s.len();
        while self.pos < n {
            // Text up to the next '<'.
            let text_start = self.pos;
            // One pass to the next '<', noting whether a reference needs checking.
            let mut lt = self.pos;
            let mut amp = false;
            loop {
                match find3(s, lt, b'<', b'&', b'<') {
                    Some(p) if s[p] == b'&' => {
                        amp = true;
                        lt = p + 1;
                    }
                    Some(p) => {
                        lt = p;
                        break;
                    }
                    None => {
                        lt = n;
                        break;
                    }
                }
            }
            if amp || self.stack.is_empty() {
                self.check_text(text_start, lt)?;
            }
            self.pos = lt;
            if lt >= n {
                break;
            }
            if lt == self.stop_at {
                return Err(TokError::Paused);
            }
            let rest = &s[lt..];
            if rest.starts_with(b"<?") {
                let e =
                    self.find(lt + 2, b"?>").ok_or_else(|| TokError::At(lt, "processing instruction is not closed with ?>".to_string()))?;
                self.pos = e + 2;
            } else if rest.starts_with(b"<!--") {
                let e = self.find(lt + 4, b"-->").ok_or_else(|| TokError::At(lt, "comment is not closed with -->".to_string()))?;
                self.pos = e + 3;
            } else if rest.starts_with(b"<![CDATA[") {
                if self.stack.is_empty() {
                    return Err(TokError::At(lt, "CDATA section outside the root element".into()));
                }
                let e = self.find(lt + 9, b"]]>").ok_or_else(|| TokError::At(lt, "CDATA section is not closed with ]]>".to_string()))?;
                self.pos = e + 3;
            } else if rest.starts_with(b"<!DOCTYPE") || rest.starts_with(b"<!doctype") {
                if self.src.root != NONE || !self.stack.is_empty() {
                    return Err(TokError::At(lt, "DOCTYPE after the root element started".into()));
                }
                let mut depth = 0i32;
                let mut i = lt + 2;
                loop {
                    match s.get(i) {
                        None => return Err(TokError::At(lt, "DOCTYPE is not closed".into())),
                        Some(b'[') => depth += 1,
                        Some(b']') => depth -= 1,
                        Some(b'>') if depth <= 0 => break,
                        _ => {}
                    }
                    i += 1;
                }
                self.pos = i + 1;
            } else if rest.starts_with(b"</") {
                self.end_tag(lt)?;
            } else {
                self.start_tag(lt)?;
            }
        }
        if let Some(&open) = self.stack.last() {
            let st = self.src.nodes[open as usize].start as usize;
            let name = String::from_utf8_lossy(&s[st + 1..self.src.nodes[open as usize].name_end as usize]).into_owned();
            return Err(TokError::At(n, format!("unexpected end of file: <{name}> is not closed")));
        }
        if self.src.root == NONE {
            return Err(TokError::At(n, "no root element".into()));
        }
        Ok(())
    }

    /// Text between markup: entity references must be well formed; outside the root only
    /// whitespace is allowed.
    fn check_text(&self, a: usize, b: usize) -> TokResult<()> {
        let s = &self.s[a..b];
        if self.stack.is_empty() {
            if let Some(p) = s.iter().position(|&c| !is_ws(c)) {
                let what = if self.src.root == NONE { "text before the root element" } else { "text after the root element" };
                return Err(TokError::At(a + p, what.into()));
            }
            return Ok(());
        }
        let mut i = 0;
        while let Some(p) = s[i..].iter().position(|&c| c == b'&') {
            let at = i + p;
            let semi = s[at..]
                .iter()
                .take(12)
                .position(|&c| c == b';')
                .ok_or_else(|| TokError::At(a + at, "'&' that does not start a reference (write &amp;)".to_string()))?;
            let ent = std::str::from_utf8(&s[at + 1..at + semi]).unwrap_or("");
            if entity_char(ent).is_none() {
                return Err(TokError::At(a + at, format!("unknown entity '&{ent};'")));
            }
            i = at + semi + 1;
        }
        Ok(())
    }

    fn start_tag(&mut self, lt: usize) -> TokResult<()> {
        let s = self.s;
        let n = s.len();
        if self.stack.is_empty() && self.src.root != NONE {
            return Err(TokError::At(lt, "a second root element (only one is allowed)".into()));
        }
        let mut i = name_end_from(s, lt + 1);
        if i == lt + 1 {
            return Err(TokError::At(lt, "'<' not followed by an element name".into()));
        }
        let name_end = i;
        let attr_start = self.src.attr_spans.len() as u32;
        // Attributes.
        let mut first = true;
        let self_closing;
        loop {
            let ws_start = i;
            while i < n && is_ws(s[i]) {
                i += 1;
            }
            if i >= n {
                return Err(TokError::At(lt, "start tag is not closed".into()));
            }
            match s[i] {
                b'>' => {
                    self_closing = false;
                    i += 1;
                    break;
                }
                b'/' => {
                    if s.get(i + 1) != Some(&b'>') {
                        return Err(TokError::At(i, "'/' in a start tag not followed by '>'".into()));
                    }
                    self_closing = true;
                    i += 2;
                    break;
                }
                _ => {}
            }
            if i == ws_start && !first {
                return Err(TokError::At(i, "attributes must be separated by whitespace".into()));
            }
            first = false;
            let an = i;
            i = name_end_from(s, i);
            if i == an {
                return Err(TokError::At(i, format!("unexpected '{}' in a start tag", s[i] as char)));
            }
            let ae = i;
            while i < n && is_ws(s[i]) {
                i += 1;
            }
            if s.get(i) != Some(&b'=') {
                return Err(TokError::At(i, format!("attribute '{}' has no value", String::from_utf8_lossy(&s[an..i]).trim())));
            }
            i += 1;
            while i < n && is_ws(s[i]) {
                i += 1;
            }
            let q = match s.get(i) {
                Some(&q @ (b'"' | b'\'')) => q,
                _ => return Err(TokError::At(i, "attribute value must be quoted".into())),
            };
            let vs = i + 1;
            // One pass to the closing quote.
            let mut ve = vs;
            let mut amp = false;
            loop {
                match find3(s, ve, q, b'<', b'&') {
                    None => return Err(TokError::At(vs, "attribute value is not closed".to_string())),
                    Some(p) if s[p] == q => {
                        ve = p;
                        break;
                    }
                    Some(p) if s[p] == b'<' => return Err(TokError::At(p, "'<' inside an attribute value".into())),
                    Some(p) => {
                        amp = true;
                        ve = p + 1;
                    }
                }
            }
            if amp {
                self.check_attr_refs(vs, ve)?;
            }
            self.src.attr_spans.push(AttrSpan { name_start: an as u32, name_end: ae as u32, value_start: vs as u32, value_end: ve as u32 });
            i = ve + 1;
        }
        let idx = self.src.nodes.len() as u32;
        let parent = self.stack.last().copied().unwrap_or(NONE);
        self.src.nodes.push(Node {
            start: lt as u32,
            name_end: name_end as u32,
            tag_end: i as u32,
            content_end: i as u32,
            end: i as u32,
            parent,
            next_sibling: NONE,
            attr_start,
        });
        if let Some(lc) = self.last_child.last_mut() {
            if *lc != NONE {
                self.src.nodes[*lc as usize].next_sibling = idx;
            }
            *lc = idx;
        }
        if parent == NONE {
            self.src.root = idx;
        }
        self.pos = i;
        if !self_closing {
            self.stack.push(idx);
            self.last_child.push(NONE);
            self.src.max_depth = self.src.max_depth.max(self.stack.len());
            Ok(())
        } else {
            self.src.max_depth = self.src.max_depth.max(self.stack.len() + 1);
            self.closed(idx)
        }
    }

    /// Element `idx` is complete: hand it to the streaming hook if it is at the hook's depth, and
    /// drop its subtree when the hook says so.
    #[inline]
    fn closed(&mut self, idx: u32) -> TokResult<()> {
        let Some((depth, hook)) = self.hook.as_mut() else { return Ok(()) };
        if self.stack.len() + 1 != *depth {
            return Ok(());
        }
        let visit = hook.visit(&self.src, idx);
        match visit {
            Visit::Keep => return Ok(()),
            Visit::Stop => return Err(TokError::Stopped),
            Visit::Drop | Visit::DropAndPause => {}
        }
        let node = self.src.nodes[idx as usize];
        // Unlink it from a kept previous sibling (found as `gap_before` finds it).
        let parent = node.parent;
        let mut prev = NONE;
        if idx > 0 && idx - 1 != parent {
            let mut p = idx - 1;
            while self.src.nodes[p as usize].parent != parent {
                p = self.src.nodes[p as usize].parent;
            }
            prev = p;
            self.src.nodes[p as usize].next_sibling = NONE;
        }
        if let Some(lc) = self.last_child.last_mut() {
            *lc = prev;
        }
        self.src.nodes.truncate(idx as usize);
        self.src.attr_spans.truncate(node.attr_start as usize);
        if visit == Visit::DropAndPause {
            return Err(TokError::Paused);
        }
        Ok(())
    }

    fn check_attr_refs(&self, a: usize, b: usize) -> TokResult<()> {
        let s = &self.s[a..b];
        let mut i = 0;
        while let Some(p) = s[i..].iter().position(|&c| c == b'&') {
            let at = i + p;
            let semi = s[at..]
                .iter()
                .take(12)
                .position(|&c| c == b';')
                .ok_or_else(|| TokError::At(a + at, "'&' that does not start a reference".to_string()))?;
            let ent = std::str::from_utf8(&s[at + 1..at + semi]).unwrap_or("");
            if entity_char(ent).is_none() {
                return Err(TokError::At(a + at, format!("unknown entity '&{ent};'")));
            }
            i = at + semi + 1;
        }
        Ok(())
    }

    fn end_tag(&mut self, lt: usize) -> TokResult<()> {
        let s = self.s;
        let n = s.len();
        // The usual case, the open element's name and '>': compared in place instead of scanning
        // the name first.
        if let Some(&open) = self.stack.last() {
            let node = self.src.nodes[open as usize];
            let open_name = &s[node.start as usize + 1..node.name_end as usize];
            let e = lt + 2 + open_name.len();
            if s.get(e) == Some(&b'>') && same(&s[lt + 2..e], open_name) {
                self.stack.pop();
                self.last_child.pop();
                let node = &mut self.src.nodes[open as usize];
                node.content_end = lt as u32;
                node.end = (e + 1) as u32;
                self.pos = e + 1;
                return self.closed(open);
            }
        }
        let mut i = name_end_from(s, lt + 2);
        let name = &s[lt + 2..i];
        while i < n && is_ws(s[i]) {
            i += 1;
        }
        if s.get(i) != Some(&b'>') {
            return Err(TokError::At(i.min(n), "end tag is not closed with '>'".into()));
        }
        let Some(open) = self.stack.pop() else {
            return Err(TokError::At(lt, format!("end tag </{}> without a start tag", String::from_utf8_lossy(name))));
        };
        self.last_child.pop();
        let node = &mut self.src.nodes[open as usize];
        let open_name = &s[node.start as usize + 1..node.name_end as usize];
        if !same(open_name, name) {
            let (l, c) = {
                // Position of the start tag, for the message.
                let text = std::str::from_utf8(&s[..node.start as usize]).unwrap_or("");
                let line = text.bytes().filter(|&b| b == b'\n').count() + 1;
                let col = text.rsplit('\n').next().map(|t| t.chars().count() + 1).unwrap_or(1);
                (line, col)
            };
            return Err(TokError::At(
                lt,
                format!(
                    "end tag </{}> does not match <{}> opened at line {l}, column {c}",
                    String::from_utf8_lossy(name),
                    String::from_utf8_lossy(open_name)
                ),
            ));
        }
        node.content_end = lt as u32;
        node.end = (i + 1) as u32;
        self.pos = i + 1;
        self.closed(open)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tree_and_gaps() {
        let t = "<?xml version=\"1.0\"?>\r\n<a x=\"1\"  y='2'>\r\n  <b>t</b> <!-- c -->\r\n  <c/>\r\n</a>\r\n";
        let s = Source::parse(t.to_string()).unwrap();
        assert_eq!(s.name(s.root), "a");
        let kids: Vec<u32> = s.children(s.root).collect();
        assert_eq!(kids.len(), 2);
        assert_eq!(s.content(kids[0]), "t");
        assert_eq!(s.gap_before(kids[1]), " <!-- c -->\r\n  ");
        assert_eq!(s.trailing_gap(s.root), "\r\n");
        let a: Vec<(&str, &str)> = s.attrs(s.root).map(|a| (a.name, a.raw)).collect();
        assert_eq!(a, vec![("x", "1"), ("y", "2")]);
        assert_eq!(s.indent_of(kids[1]), "  ");
        assert_eq!(s.newline(), "\r\n");
    }

    #[test]
    fn implied_links_gaps_and_attributes() {
        // Links the nodes do not store: first child, previous sibling (through a nested one),
        // attribute ranges, self-closing.
        let t = "<a k=\"1\">\n <b><x y='1' z='2'/><w></w></b> <!-- c --> <c/>\n</a>";
        let s = Source::parse(t.to_string()).unwrap();
        let kids: Vec<u32> = s.children(s.root).collect();
        assert_eq!(kids.iter().map(|&k| s.name(k)).collect::<Vec<_>>(), ["b", "c"]);
        let inner: Vec<u32> = s.children(kids[0]).collect();
        assert_eq!(inner.iter().map(|&k| s.name(k)).collect::<Vec<_>>(), ["x", "w"]);
        assert_eq!(s.gap_before(kids[0]), "\n ");
        assert_eq!(s.gap_before(kids[1]), " <!-- c --> ");
        assert_eq!(s.gap_before(inner[1]), "");
        assert_eq!((s.attr_count(s.root), s.attr_count(kids[0]), s.attr_count(inner[0]), s.attr_count(kids[1])), (1, 0, 2, 0));
        assert_eq!(s.attr(inner[0], "z"), Some("2"));
        assert!(s.self_closing(inner[0]) && s.self_closing(kids[1]));
        assert!(!s.self_closing(inner[1]) && !s.has_children(inner[1]) && s.has_children(kids[0]));
        assert_eq!(s.content(inner[1]), "");
        assert_eq!(s.gap_before(s.root), "");
    }

    #[test]
    fn find3_and_same_agree_with_byte_loops() {
        // Every offset of texts built from a few bytes, high bytes included (the carry of the
        // word trick), against the plain searches.
        let mut x = 0x2545_F491_4F6C_DD1Du64;
        for len in 0..40 {
            for _ in 0..200 {
                let t: Vec<u8> = (0..len)
                    .map(|_| {
                        x ^= x << 13;
                        x ^= x >> 7;
                        x ^= x << 17;
                        [b'a', b'<', b'&', b'"', 0x80, 0xFF, b';', 0x3B, 0x26 ^ 0x80][(x % 9) as usize]
                    })
                    .collect();
                for from in 0..=len {
                    let want = t[from..].iter().position(|&c| c == b'"' || c == b'<' || c == b'&').map(|p| from + p);
                    assert_eq!(find3(&t, from, b'"', b'<', b'&'), want, "{t:?} from {from}");
                }
                let half = len / 2;
                assert_eq!(same(&t[..half], &t[half..half * 2]), t[..half] == t[half..half * 2]);
            }
        }
    }

    #[test]
    fn errors_have_positions() {
        let e = Source::parse("<a>\n  <b>\n</a>".into()).unwrap_err();
        assert_eq!((e.line, e.column), (3, 1));
        assert!(e.message.contains("does not match"), "{}", e.message);
        let e = Source::parse("<a x=1/>".into()).unwrap_err();
        assert_eq!((e.line, e.column), (1, 6));
        let e = Source::parse("<a>&nope;</a>".into()).unwrap_err();
        assert!(e.message.contains("entity"));
        assert!(Source::parse("<a/><b/>".into()).is_err());
        assert!(Source::parse("<a>".into()).is_err());
        assert!(Source::parse("".into()).is_err());
    }
}
