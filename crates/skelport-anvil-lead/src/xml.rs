//! A lossless XML tree: every byte of the source is kept (declaration, processing instructions,
//! comments, whitespace, attribute order and quoting, the original text of every number), so an
//! unmodified file serializes to exactly the text it was parsed from, and an edit changes only the
//! elements it touches.
//!
//! Tokenizing is quick-xml's; this module only records, for each event, the slice of source text
//! it came from (quick-xml's own writer would normalize what modders need kept byte for byte).

use quick_xml::events::Event;
use quick_xml::Reader;

/// A child of an element (or of the document).
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Elem(Elem),
    /// Text, whitespace, comments, processing instructions, CDATA: kept as written.
    Raw(String),
}

/// An element with its original tags.
#[derive(Debug, Clone, PartialEq)]
pub struct Elem {
    pub name: String,
    /// Attributes in source order, values unescaped.
    pub attrs: Vec<(String, String)>,
    /// The start tag as written; `None` once attributes changed (then it is regenerated).
    start_raw: Option<String>,
    /// The end tag as written (`None` for `<x/>` or a generated element).
    end_raw: Option<String>,
    self_closing: bool,
    pub children: Vec<Item>,
    /// Byte offset of the start tag in the source (0 for generated elements).
    pub offset: usize,
}

/// A parsed document: items before the root, the root, items after it.
#[derive(Debug, Clone, PartialEq)]
pub struct Doc {
    pub prolog: Vec<Item>,
    pub root: Elem,
    pub epilog: Vec<Item>,
}

/// Why the XML could not be read, with the byte offset.
#[derive(Debug, Clone, PartialEq)]
pub struct XmlError {
    pub offset: usize,
    pub message: String,
}

/// Escape text content and attribute values.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            c => o.push(c),
        }
    }
    o
}

/// Maximum element nesting; deeper input is refused (skeleton XML nests about 10 levels).
pub const MAX_DEPTH: usize = 256;

impl Elem {
    /// A new element without children.
    pub fn new(name: &str, attrs: &[(&str, &str)]) -> Elem {
        Elem {
            name: name.into(),
            attrs: attrs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            start_raw: None,
            end_raw: None,
            self_closing: true,
            children: Vec::new(),
            offset: 0,
        }
    }

    /// A new element holding text.
    pub fn with_text(name: &str, attrs: &[(&str, &str)], text: &str) -> Elem {
        let mut e = Elem::new(name, attrs);
        e.set_text(text);
        e
    }

    pub fn attr(&self, k: &str) -> Option<&str> {
        self.attrs.iter().find(|(a, _)| a == k).map(|(_, v)| v.as_str())
    }

    /// Set (or add) an attribute; the start tag is regenerated.
    pub fn set_attr(&mut self, k: &str, v: &str) {
        if self.attr(k) == Some(v) {
            return;
        }
        match self.attrs.iter_mut().find(|(a, _)| a == k) {
            Some(e) => e.1 = v.to_string(),
            None => self.attrs.push((k.into(), v.into())),
        }
        self.start_raw = None;
    }

    pub fn elems(&self) -> impl Iterator<Item = &Elem> {
        self.children.iter().filter_map(|c| match c {
            Item::Elem(e) => Some(e),
            Item::Raw(_) => None,
        })
    }

    pub fn elems_mut(&mut self) -> impl Iterator<Item = &mut Elem> {
        self.children.iter_mut().filter_map(|c| match c {
            Item::Elem(e) => Some(e),
            Item::Raw(_) => None,
        })
    }

    /// The first child element with this tag name.
    pub fn child(&self, name: &str) -> Option<&Elem> {
        self.elems().find(|e| e.name == name)
    }

    pub fn child_mut(&mut self, name: &str) -> Option<&mut Elem> {
        self.elems_mut().find(|e| e.name == name)
    }

    /// The first child element with attribute `Name="name"`.
    pub fn named(&self, name: &str) -> Option<&Elem> {
        self.elems().find(|e| e.attr("Name") == Some(name))
    }

    pub fn named_mut(&mut self, name: &str) -> Option<&mut Elem> {
        self.elems_mut().find(|e| e.attr("Name") == Some(name))
    }

    /// The element's text content (text children joined, entities unescaped), trimmed.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for c in &self.children {
            if let Item::Raw(r) = c {
                if !r.starts_with("<!--") && !r.starts_with("<?") {
                    s.push_str(r);
                }
            }
        }
        let t = s.trim();
        match quick_xml::escape::unescape(t) {
            Ok(u) => u.into_owned(),
            Err(_) => t.to_string(),
        }
    }

    fn open(&mut self) {
        if self.self_closing {
            self.self_closing = false;
            self.start_raw = None;
            self.end_raw = None;
        }
    }

    /// Replace the text content (text children are dropped; elements kept).
    pub fn set_text(&mut self, text: &str) {
        if !self.children.iter().any(|c| matches!(c, Item::Elem(_))) && !self.self_closing && self.text() == text {
            return;
        }
        self.children.retain(|c| matches!(c, Item::Elem(_)));
        self.children.insert(0, Item::Raw(escape(text)));
        self.open();
    }

    /// Append a child element.
    pub fn push(&mut self, e: Elem) {
        self.open();
        self.children.push(Item::Elem(e));
    }

    /// Append raw text (whitespace, usually).
    pub fn push_raw(&mut self, r: &str) {
        self.open();
        self.children.push(Item::Raw(r.to_string()));
    }

    /// Serialize.
    pub fn write(&self, out: &mut String) {
        match &self.start_raw {
            Some(r) => out.push_str(r),
            None => {
                out.push('<');
                out.push_str(&self.name);
                for (k, v) in &self.attrs {
                    out.push(' ');
                    out.push_str(k);
                    out.push_str("=\"");
                    out.push_str(&escape(v));
                    out.push('"');
                }
                out.push_str(if self.self_closing { " />" } else { ">" });
            }
        }
        if self.self_closing {
            return;
        }
        for c in &self.children {
            match c {
                Item::Raw(r) => out.push_str(r),
                Item::Elem(e) => e.write(out),
            }
        }
        match &self.end_raw {
            Some(r) => out.push_str(r),
            None => {
                out.push_str("</");
                out.push_str(&self.name);
                out.push('>');
            }
        }
    }
}

impl Doc {
    /// Serialize the whole document.
    pub fn write(&self) -> String {
        let mut out = String::new();
        for i in &self.prolog {
            if let Item::Raw(r) = i {
                out.push_str(r);
            }
        }
        self.root.write(&mut out);
        for i in &self.epilog {
            if let Item::Raw(r) = i {
                out.push_str(r);
            }
        }
        out
    }

    /// A pseudo-attribute of a processing instruction in the prolog, e.g. (`info`, `type`).
    pub fn pi_attr(&self, target: &str, key: &str) -> Option<String> {
        for i in &self.prolog {
            if let Item::Raw(r) = i {
                let Some(body) = r.strip_prefix("<?").and_then(|b| b.strip_suffix("?>")) else { continue };
                let mut parts = body.splitn(2, char::is_whitespace);
                if parts.next() != Some(target) {
                    continue;
                }
                let rest = parts.next().unwrap_or("");
                let pat = format!("{key}=\"");
                if let Some(at) = rest.find(&pat) {
                    let v = &rest[at + pat.len()..];
                    return v.find('"').map(|e| v[..e].to_string());
                }
            }
        }
        None
    }

    /// Parse a document.
    pub fn parse(text: &str) -> Result<Doc, XmlError> {
        let mut r = Reader::from_str(text);
        let cfg = r.config_mut();
        cfg.trim_text(false);
        cfg.expand_empty_elements = false;
        cfg.check_end_names = true;
        let mut prolog = Vec::new();
        let mut epilog = Vec::new();
        let mut stack: Vec<Elem> = Vec::new();
        let mut root: Option<Elem> = None;
        loop {
            let start = r.buffer_position() as usize;
            let ev = r.read_event().map_err(|e| XmlError { offset: r.error_position() as usize, message: e.to_string() })?;
            let end = r.buffer_position() as usize;
            let raw = &text[start..end];
            match ev {
                Event::Eof => break,
                Event::DocType(_) => return Err(XmlError {
                    offset: start,
                    message:
                        "a <!DOCTYPE> is not allowed (skeleton XML has none; refusing it refuses entity expansion and external entities)"
                            .into(),
                }),
                Event::Start(ref s) | Event::Empty(ref s) => {
                    let empty = matches!(ev, Event::Empty(_));
                    let name = String::from_utf8_lossy(s.name().as_ref()).into_owned();
                    let mut attrs = Vec::new();
                    for a in s.attributes() {
                        let a = a.map_err(|e| XmlError { offset: start, message: format!("bad attribute in <{name}>: {e}") })?;
                        let k = String::from_utf8_lossy(a.key.as_ref()).into_owned();
                        let v = a
                            .unescape_value()
                            .map_err(|e| XmlError { offset: start, message: format!("bad attribute value in <{name}>: {e}") })?
                            .into_owned();
                        attrs.push((k, v));
                    }
                    if root.is_some() && stack.is_empty() {
                        return Err(XmlError { offset: start, message: format!("a second root element <{name}>") });
                    }
                    let e = Elem {
                        name,
                        attrs,
                        start_raw: Some(raw.to_string()),
                        end_raw: None,
                        self_closing: empty,
                        children: Vec::new(),
                        offset: start,
                    };
                    if empty {
                        match stack.last_mut() {
                            Some(p) => p.children.push(Item::Elem(e)),
                            None => root = Some(e),
                        }
                    } else {
                        if stack.len() >= MAX_DEPTH {
                            return Err(XmlError { offset: start, message: format!("elements nested deeper than {MAX_DEPTH} levels") });
                        }
                        stack.push(e);
                    }
                }
                Event::End(_) => {
                    let mut e = stack.pop().ok_or_else(|| XmlError { offset: start, message: "an end tag without a start tag".into() })?;
                    e.end_raw = Some(raw.to_string());
                    match stack.last_mut() {
                        Some(p) => p.children.push(Item::Elem(e)),
                        None => root = Some(e),
                    }
                }
                Event::Text(_) | Event::CData(_) | Event::GeneralRef(_) => {
                    let item = Item::Raw(raw.to_string());
                    match stack.last_mut() {
                        Some(p) => match p.children.last_mut() {
                            // quick-xml splits text at entity references: keep one text run.
                            Some(Item::Raw(prev)) if !prev.starts_with("<!--") && !prev.starts_with("<?") => prev.push_str(raw),
                            _ => p.children.push(item),
                        },
                        None if raw.trim().is_empty() => {
                            if root.is_none() {
                                prolog.push(item)
                            } else {
                                epilog.push(item)
                            }
                        }
                        None => return Err(XmlError { offset: start, message: "text outside the root element".into() }),
                    }
                }
                _ => {
                    let item = Item::Raw(raw.to_string());
                    match stack.last_mut() {
                        Some(p) => p.children.push(item),
                        None if root.is_none() => prolog.push(item),
                        None => epilog.push(item),
                    }
                }
            }
        }
        if let Some(open) = stack.last() {
            return Err(XmlError { offset: text.len(), message: format!("the file ends inside <{}> (truncated?)", open.name) });
        }
        let root = root.ok_or(XmlError { offset: 0, message: "no root element (empty or truncated file)".into() })?;
        Ok(Doc { prolog, root, epilog })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_byte_for_byte() {
        let t = "<?xml version=\"1.0\" encoding=\"utf-16\"?>\r\n<?info tool=\"AnvilToolkit\" type=\"0\"?>\r\n<A ID='1'  x=\"&amp;\">\r\n  <!-- c -->\r\n  <B Name=\"n\">1E-05 &amp; more</B>\t<C/>\r\n</A>\r\n";
        let d = Doc::parse(t).unwrap();
        assert_eq!(d.write(), t);
        assert_eq!(d.pi_attr("info", "type").as_deref(), Some("0"));
        assert_eq!(d.root.named("n").unwrap().text(), "1E-05 & more");
    }

    #[test]
    fn edits_touch_only_their_element() {
        let t = "<A>\n  <B Name=\"n\">1</B>\n  <C  k='v'/>\n</A>";
        let mut d = Doc::parse(t).unwrap();
        d.root.named_mut("n").unwrap().set_text("2");
        assert_eq!(d.write(), "<A>\n  <B Name=\"n\">2</B>\n  <C  k='v'/>\n</A>");
        d.root.child_mut("C").unwrap().set_attr("k", "w");
        assert_eq!(d.write(), "<A>\n  <B Name=\"n\">2</B>\n  <C k=\"w\" />\n</A>");
    }

    #[test]
    fn refuses_doctype_and_truncation() {
        assert!(Doc::parse("<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>").unwrap_err().message.contains("DOCTYPE"));
        assert!(Doc::parse("<a><b>").is_err());
        let deep = "<a>".repeat(300);
        assert!(Doc::parse(&deep).unwrap_err().message.contains("nested"));
    }
}
