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
    !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'/' | b'>' | b'=' | b'<' | b'"' | b'\'')
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
        let text = Arc::new(text);
        let mut p = Tokenizer {
            s: text.as_bytes(),
            pos: 0,
            // Generous: capacity that is never touched costs address space, not memory.
            nodes: Vec::with_capacity(text.len() / 24 + 16),
            attrs: Vec::with_capacity(text.len() / 16 + 16),
            stack: Vec::new(),
            last_child: Vec::new(),
            root: NONE,
        };
        if text.len() >= u32::MAX as usize {
            return Err(SyntaxError { line: 1, column: 1, message: "file larger than 4 GiB".into() });
        }
        p.run().map_err(|(off, message)| {
            let (line, column) = line_col(&text, off);
            SyntaxError { line, column, message }
        })?;
        let root = p.root;
        let nodes = p.nodes;
        let attr_spans = p.attrs;
        Ok(Source { text, nodes, root, attr_spans, id: NEXT_ID.fetch_add(1, Ordering::Relaxed) })
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
            .find(|a| &b[a.name_start as usize..a.name_end as usize] == name.as_bytes())?;
        Some(&self.text[a.value_start as usize..a.value_end as usize])
    }

    /// Whether element `i` is named `name` (a byte comparison, for loops over every element).
    pub fn name_is(&self, i: u32, name: &str) -> bool {
        let n = self.node(i);
        &self.text.as_bytes()[n.start as usize + 1..n.name_end as usize] == name.as_bytes()
    }

    /// Child elements.
    pub fn children(&self, i: u32) -> Children<'_> {
        Children { src: self, next: self.first_child(i) }
    }

    /// The first child element with this name.
    pub fn child(&self, i: u32, name: &str) -> Option<u32> {
        self.children(i).find(|&c| self.name(c) == name)
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
        let start = self.node(i).start as usize;
        let b = self.text.as_bytes();
        let ls = b[..start].iter().rposition(|&c| c == b'\n').map(|p| p + 1).unwrap_or(0);
        let mut e = ls;
        while e < start && (b[e] == b' ' || b[e] == b'\t') {
            e += 1;
        }
        &self.text[ls..e]
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

struct Tokenizer<'a> {
    s: &'a [u8],
    pos: usize,
    nodes: Vec<Node>,
    attrs: Vec<AttrSpan>,
    stack: Vec<u32>,
    last_child: Vec<u32>,
    root: u32,
}

type TokResult<T> = Result<T, (usize, String)>;

impl Tokenizer<'_> {
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
            while lt < n {
                match s[lt] {
                    b'<' => break,
                    b'&' => amp = true,
                    _ => {}
                }
                lt += 1;
            }
            if amp || self.stack.is_empty() {
                self.check_text(text_start, lt)?;
            }
            self.pos = lt;
            if lt >= n {
                break;
            }
            let rest = &s[lt..];
            if rest.starts_with(b"<?") {
                let e = self.find(lt + 2, b"?>").ok_or((lt, "processing instruction is not closed with ?>".to_string()))?;
                self.pos = e + 2;
            } else if rest.starts_with(b"<!--") {
                let e = self.find(lt + 4, b"-->").ok_or((lt, "comment is not closed with -->".to_string()))?;
                self.pos = e + 3;
            } else if rest.starts_with(b"<![CDATA[") {
                if self.stack.is_empty() {
                    return Err((lt, "CDATA section outside the root element".into()));
                }
                let e = self.find(lt + 9, b"]]>").ok_or((lt, "CDATA section is not closed with ]]>".to_string()))?;
                self.pos = e + 3;
            } else if rest.starts_with(b"<!DOCTYPE") || rest.starts_with(b"<!doctype") {
                if self.root != NONE || !self.stack.is_empty() {
                    return Err((lt, "DOCTYPE after the root element started".into()));
                }
                let mut depth = 0i32;
                let mut i = lt + 2;
                loop {
                    match s.get(i) {
                        None => return Err((lt, "DOCTYPE is not closed".into())),
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
            let st = self.nodes[open as usize].start as usize;
            let name = String::from_utf8_lossy(&s[st + 1..self.nodes[open as usize].name_end as usize]).into_owned();
            return Err((n, format!("unexpected end of file: <{name}> is not closed")));
        }
        if self.root == NONE {
            return Err((n, "no root element".into()));
        }
        Ok(())
    }

    /// Text between markup: entity references must be well formed; outside the root only
    /// whitespace is allowed.
    fn check_text(&self, a: usize, b: usize) -> TokResult<()> {
        let s = &self.s[a..b];
        if self.stack.is_empty() {
            if let Some(p) = s.iter().position(|&c| !is_ws(c)) {
                let what = if self.root == NONE { "text before the root element" } else { "text after the root element" };
                return Err((a + p, what.into()));
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
                .ok_or((a + at, "'&' that does not start a reference (write &amp;)".to_string()))?;
            let ent = std::str::from_utf8(&s[at + 1..at + semi]).unwrap_or("");
            if entity_char(ent).is_none() {
                return Err((a + at, format!("unknown entity '&{ent};'")));
            }
            i = at + semi + 1;
        }
        Ok(())
    }

    fn start_tag(&mut self, lt: usize) -> TokResult<()> {
        let s = self.s;
        let n = s.len();
        if self.stack.is_empty() && self.root != NONE {
            return Err((lt, "a second root element (only one is allowed)".into()));
        }
        let mut i = lt + 1;
        while i < n && is_name_byte(s[i]) {
            i += 1;
        }
        if i == lt + 1 {
            return Err((lt, "'<' not followed by an element name".into()));
        }
        let name_end = i;
        let attr_start = self.attrs.len() as u32;
        // Attributes.
        let mut first = true;
        let self_closing;
        loop {
            let ws_start = i;
            while i < n && is_ws(s[i]) {
                i += 1;
            }
            if i >= n {
                return Err((lt, "start tag is not closed".into()));
            }
            match s[i] {
                b'>' => {
                    self_closing = false;
                    i += 1;
                    break;
                }
                b'/' => {
                    if s.get(i + 1) != Some(&b'>') {
                        return Err((i, "'/' in a start tag not followed by '>'".into()));
                    }
                    self_closing = true;
                    i += 2;
                    break;
                }
                _ => {}
            }
            if i == ws_start && !first {
                return Err((i, "attributes must be separated by whitespace".into()));
            }
            first = false;
            let an = i;
            while i < n && is_name_byte(s[i]) {
                i += 1;
            }
            if i == an {
                return Err((i, format!("unexpected '{}' in a start tag", s[i] as char)));
            }
            let ae = i;
            while i < n && is_ws(s[i]) {
                i += 1;
            }
            if s.get(i) != Some(&b'=') {
                return Err((i, format!("attribute '{}' has no value", String::from_utf8_lossy(&s[an..i]).trim())));
            }
            i += 1;
            while i < n && is_ws(s[i]) {
                i += 1;
            }
            let q = match s.get(i) {
                Some(&q @ (b'"' | b'\'')) => q,
                _ => return Err((i, "attribute value must be quoted".into())),
            };
            let vs = i + 1;
            // One pass to the closing quote.
            let mut ve = vs;
            let mut amp = false;
            loop {
                match s.get(ve) {
                    None => return Err((vs, "attribute value is not closed".to_string())),
                    Some(&c) if c == q => break,
                    Some(b'<') => return Err((ve, "'<' inside an attribute value".into())),
                    Some(b'&') => amp = true,
                    _ => {}
                }
                ve += 1;
            }
            if amp {
                self.check_attr_refs(vs, ve)?;
            }
            self.attrs.push(AttrSpan { name_start: an as u32, name_end: ae as u32, value_start: vs as u32, value_end: ve as u32 });
            i = ve + 1;
        }
        let idx = self.nodes.len() as u32;
        let parent = self.stack.last().copied().unwrap_or(NONE);
        self.nodes.push(Node {
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
                self.nodes[*lc as usize].next_sibling = idx;
            }
            *lc = idx;
        }
        if parent == NONE {
            self.root = idx;
        }
        if !self_closing {
            self.stack.push(idx);
            self.last_child.push(NONE);
        }
        self.pos = i;
        Ok(())
    }

    fn check_attr_refs(&self, a: usize, b: usize) -> TokResult<()> {
        let s = &self.s[a..b];
        let mut i = 0;
        while let Some(p) = s[i..].iter().position(|&c| c == b'&') {
            let at = i + p;
            let semi =
                s[at..].iter().take(12).position(|&c| c == b';').ok_or((a + at, "'&' that does not start a reference".to_string()))?;
            let ent = std::str::from_utf8(&s[at + 1..at + semi]).unwrap_or("");
            if entity_char(ent).is_none() {
                return Err((a + at, format!("unknown entity '&{ent};'")));
            }
            i = at + semi + 1;
        }
        Ok(())
    }

    fn end_tag(&mut self, lt: usize) -> TokResult<()> {
        let s = self.s;
        let n = s.len();
        let mut i = lt + 2;
        while i < n && is_name_byte(s[i]) {
            i += 1;
        }
        let name = &s[lt + 2..i];
        while i < n && is_ws(s[i]) {
            i += 1;
        }
        if s.get(i) != Some(&b'>') {
            return Err((i.min(n), "end tag is not closed with '>'".into()));
        }
        let Some(open) = self.stack.pop() else {
            return Err((lt, format!("end tag </{}> without a start tag", String::from_utf8_lossy(name))));
        };
        self.last_child.pop();
        let node = &mut self.nodes[open as usize];
        let open_name = &s[node.start as usize + 1..node.name_end as usize];
        if open_name != name {
            let (l, c) = {
                // Position of the start tag, for the message.
                let text = std::str::from_utf8(&s[..node.start as usize]).unwrap_or("");
                let line = text.bytes().filter(|&b| b == b'\n').count() + 1;
                let col = text.rsplit('\n').next().map(|t| t.chars().count() + 1).unwrap_or(1);
                (line, col)
            };
            return Err((
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
        Ok(())
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
