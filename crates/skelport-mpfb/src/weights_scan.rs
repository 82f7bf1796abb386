//! A scan of weights files laid out as MakeHuman and MPFB write them, beside serde_json.
//!
//! Hand-rolled, and why: a weights file is ~3 MB of `[vertex, weight]` pairs, pretty-printed
//! (83 bytes a pair, most of them indentation), and serde_json's typed parse of it took 52 M
//! instructions (17 a byte), a third of a whole MPFB → glTF conversion. This scan accepts only a
//! strict subset of JSON: an object whose members are `"weights"` (an object of group name →
//! array of `[unsigned integer, number]`) and header values that are strings without escapes,
//! numbers, `true`, `false` or `null`; names without escapes. Anything else, a fault included,
//! gives `None`, and serde_json parses the file and says what is wrong. The numbers are read as
//! serde_json reads them (a test compares the two on generated files): integers as `u64`,
//! weights correctly rounded ([`skelport_ir::num::fast_decimal`], bit for bit `str::parse`).

use crate::read::WeightGroup;

/// What the scan read: the header's values as their JSON text, in file order, and the groups.
pub(crate) struct Scanned<'a> {
    pub header: Vec<(String, &'a str)>,
    pub groups: Option<Vec<WeightGroup>>,
}

struct Cursor<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Cursor<'a> {
    /// Skip JSON whitespace; runs of spaces (indentation) eight bytes at a time.
    #[inline]
    fn ws(&mut self) {
        const SPACES: u64 = u64::from_ne_bytes([b' '; 8]);
        loop {
            while let Some(chunk) = self.b.get(self.i..self.i + 8) {
                let word = u64::from_ne_bytes(chunk.try_into().unwrap_or([0; 8]));
                if word != SPACES {
                    break;
                }
                self.i += 8;
            }
            match self.b.get(self.i) {
                Some(b' ' | b'\n' | b'\r' | b'\t') => self.i += 1,
                _ => return,
            }
        }
    }

    #[inline]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.b.get(self.i) == Some(&c)).then(|| self.i += 1)
    }

    #[inline]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// A string without escapes or control characters, as UTF-8 (its quotes consumed).
    fn string(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let len = self.b[start..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        if self.b[start + len] != b'"' {
            return None;
        }
        self.i = start + len + 1;
        std::str::from_utf8(&self.b[start..start + len]).ok()
    }

    /// A JSON number's text (strict grammar: `-`? (`0` | [1-9][0-9]*) (`.` [0-9]+)?
    /// ([eE] [+-]? [0-9]+)?).
    fn number(&mut self) -> Option<&'a str> {
        let start = self.i;
        let digits = |c: &mut Cursor<'_>| {
            let from = c.i;
            while c.peek().is_some_and(|d| d.is_ascii_digit()) {
                c.i += 1;
            }
            c.i - from
        };
        let _ = self.eat(b'-');
        let int_start = self.i;
        let n = digits(self);
        if n == 0 || (n > 1 && self.b[int_start] == b'0') {
            return None;
        }
        if self.eat(b'.').is_some() && digits(self) == 0 {
            return None;
        }
        if matches!(self.peek(), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.peek(), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if digits(self) == 0 {
                return None;
            }
        }
        std::str::from_utf8(&self.b[start..self.i]).ok()
    }

    /// An unsigned integer that fits `u64`, without sign, fraction or exponent.
    fn unsigned(&mut self) -> Option<u64> {
        let t = self.number()?;
        if !t.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        t.parse().ok()
    }

    /// A header value: a string without escapes, a number, `true`, `false` or `null`.
    fn scalar(&mut self) -> Option<&'a str> {
        let start = self.i;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            b't' | b'f' | b'n' => {
                let word = ["true", "false", "null"].into_iter().find(|w| self.b[self.i..].starts_with(w.as_bytes()))?;
                self.i += word.len();
            }
            _ => {
                self.number()?;
            }
        }
        std::str::from_utf8(&self.b[start..self.i]).ok()
    }

    /// `[[vertex, weight], ...]`.
    fn pairs(&mut self) -> Option<Vec<(u64, f64)>> {
        self.eat(b'[')?;
        self.ws();
        let mut out = Vec::new();
        if self.eat(b']').is_some() {
            return Some(out);
        }
        loop {
            self.eat(b'[')?;
            self.ws();
            let v = self.unsigned()?;
            self.ws();
            self.eat(b',')?;
            self.ws();
            let w = weight(self.number()?)?;
            self.ws();
            self.eat(b']')?;
            out.push((v, w));
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b']' => {
                    self.i += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }

    /// `{name: pairs, ...}`.
    fn groups(&mut self) -> Option<Vec<WeightGroup>> {
        self.eat(b'{')?;
        self.ws();
        let mut out = Vec::new();
        if self.eat(b'}').is_some() {
            return Some(out);
        }
        loop {
            let name = self.string()?;
            self.ws();
            self.eat(b':')?;
            self.ws();
            out.push((name.to_owned(), self.pairs()?));
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b'}' => {
                    self.i += 1;
                    return Some(out);
                }
                _ => return None,
            }
        }
    }
}

/// A weight's number as serde_json gives it for an `f64`: an unsigned integer's text through the
/// `u64` it is (as serde_json casts it), any other correctly rounded; `None` for what this scan
/// leaves to serde_json (a negative integer, whose zero serde_json makes `-0.0`; an integer past
/// `u64`; a value too large for `f64`).
fn weight(t: &str) -> Option<f64> {
    if t.bytes().all(|c| c.is_ascii_digit()) {
        return t.parse::<u64>().ok().map(|u| u as f64);
    }
    if t.starts_with('-') && t[1..].bytes().all(|c| c.is_ascii_digit()) {
        return None;
    }
    skelport_ir::num::fast_decimal(t).filter(|w| w.is_finite())
}

/// Header keys the scan takes (each new one is compared with those before it).
const MAX_HEADER_KEYS: usize = 32;

/// The file, when it is in the subset this scan reads (see the module documentation); `None`
/// otherwise (serde_json reads it then). Repeated keys give `None` too.
pub(crate) fn scan(bytes: &[u8]) -> Option<Scanned<'_>> {
    let mut c = Cursor { b: bytes, i: 0 };
    c.ws();
    c.eat(b'{')?;
    c.ws();
    let mut out = Scanned { header: Vec::new(), groups: None };
    if c.eat(b'}').is_none() {
        loop {
            let key = c.string()?;
            c.ws();
            c.eat(b':')?;
            c.ws();
            if key == "weights" {
                if out.groups.is_some() {
                    return None;
                }
                out.groups = Some(c.groups()?);
            } else {
                // A handful of header keys (more, or a repeated one, go to serde_json, which
                // keeps the last of each in the first one's place).
                if out.header.len() >= MAX_HEADER_KEYS || out.header.iter().any(|(k, _)| k == key) {
                    return None;
                }
                out.header.push((key.to_owned(), c.scalar()?));
            }
            c.ws();
            match c.peek()? {
                b',' => {
                    c.i += 1;
                    c.ws();
                }
                b'}' => {
                    c.i += 1;
                    break;
                }
                _ => return None,
            }
        }
    }
    c.ws();
    (c.i == bytes.len()).then_some(out)
}
