//! The weights file's fast path: a scanner for the one shape MPFB writes,
//! `{"key": value, ..., "weights": {"group": [[vertex, weight], ...], ...}}`.
//!
//! Hand-written because a weights file is ~3 MB of pretty-printed JSON, two thirds of it
//! indentation, and serde_json skips whitespace a byte at a time through its generic visitor
//! calls: the typed serde parse was a third of an MPFB → glTF conversion's instructions
//! (docs/performance.md). This scanner skips runs of spaces eight bytes at a time and reads each
//! pair without the visitor machinery. It accepts a subset of JSON and gives `None` on anything
//! outside it (an escape in a name, a negative or fractional vertex, a number JSON does not allow,
//! unexpected text): the caller then parses with serde_json, which gives the same result for
//! every text this accepts (a property test checks it) and the placed error for text that is
//! not JSON. Header values are left to serde_json as raw values (they are small).

use crate::read::RawWeightsFile;
use serde_json::value::RawValue;
use skelport_ir::num::decimal_prefix;

/// Header keys the scan keeps (MPFB writes five); a file with more takes serde's path.
const MAX_HEADER_KEYS: usize = 64;

/// One group: its name and (vertex, weight) entries.
pub(crate) type Group = (String, Vec<(u64, f64)>);

struct Scan<'a> {
    b: &'a [u8],
    i: usize,
}

impl<'a> Scan<'a> {
    /// Skip JSON whitespace: runs of spaces eight bytes at a time, other blanks one by one.
    #[inline(always)]
    fn ws(&mut self) {
        const SPACES: u64 = u64::from_le_bytes(*b"        ");
        let b = self.b;
        loop {
            match b.get(self.i) {
                Some(b' ') => {
                    while let Some(w) = b.get(self.i..self.i + 8) {
                        if u64::from_le_bytes(w.try_into().expect("eight bytes")) != SPACES {
                            break;
                        }
                        self.i += 8;
                    }
                    while b.get(self.i) == Some(&b' ') {
                        self.i += 1;
                    }
                }
                Some(b'\n' | b'\r' | b'\t') => self.i += 1,
                _ => return,
            }
        }
    }

    #[inline(always)]
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// The byte at the cursor, when it is `c`: consumed.
    #[inline(always)]
    fn eat(&mut self, c: u8) -> Option<()> {
        (self.peek()? == c).then(|| self.i += 1)
    }

    /// A string without escapes or control characters (anything else: `None`).
    fn name(&mut self) -> Option<&'a str> {
        self.eat(b'"')?;
        let start = self.i;
        let len = self.b[start..].iter().position(|&c| c == b'"' || c == b'\\' || c < 0x20)?;
        self.i = start + len;
        self.eat(b'"')?;
        std::str::from_utf8(&self.b[start..start + len]).ok()
    }

    /// A vertex: a JSON integer, not negative, of at most 19 digits (anything else: `None`).
    #[inline(always)]
    fn vertex(&mut self) -> Option<u64> {
        let b = self.b;
        let start = self.i;
        let (len, v) = skelport_ir::num::digit_run(b, &mut self.i);
        // No digits, a leading zero, or a fraction or exponent (serde refuses a float vertex);
        // past 19 digits the value may have wrapped (serde reads the few that fit 64 bits).
        let bad = len == 0 || len > 19 || (b[start] == b'0' && len > 1) || matches!(b.get(self.i), Some(b'.' | b'e' | b'E'));
        (!bad).then_some(v)
    }

    /// A weight: a JSON number that is not negative, as serde_json (with `float_roundtrip`: the
    /// correctly rounded value) reads it into an f64. Negative numbers are left to serde (it reads
    /// `-0` as the integer 0), as are values past an f64's range (serde refuses them).
    #[inline(always)]
    fn weight(&mut self) -> Option<f64> {
        let b = &self.b[self.i..];
        // JSON's grammar where fast-float2's is wider: a digit first (no sign, `.5`, `inf` or
        // `nan`), no leading zero, and a digit after the dot (no `1.` or `1.e5`). The exponent's
        // forms are the same in both.
        if !b.first()?.is_ascii_digit() {
            return None;
        }
        let int = b.iter().position(|c| !c.is_ascii_digit()).unwrap_or(b.len());
        if (b[0] == b'0' && int > 1) || (b.get(int) == Some(&b'.') && !b.get(int + 1)?.is_ascii_digit()) {
            return None;
        }
        let (v, len) = decimal_prefix(b)?;
        self.i += len;
        v.is_finite().then_some(v)
    }

    /// `[[vertex, weight], ...]`.
    fn pairs(&mut self) -> Option<Vec<(u64, f64)>> {
        let mut out = Vec::new();
        self.items(b'[', b']', |s| {
            s.eat(b'[')?;
            s.ws();
            let v = s.vertex()?;
            s.ws();
            s.eat(b',')?;
            s.ws();
            let w = s.weight()?;
            s.ws();
            s.eat(b']')?;
            out.push((v, w));
            Some(())
        })?;
        Some(out)
    }

    /// An object's members, `f` reading each value after its name and colon.
    fn members(&mut self, mut f: impl FnMut(&mut Self, &'a str) -> Option<()>) -> Option<()> {
        self.items(b'{', b'}', |s| {
            let k = s.name()?;
            s.ws();
            s.eat(b':')?;
            s.ws();
            f(s, k)
        })
    }

    /// The items of an array or object (`open`, items separated by commas, `close`), each read
    /// by `item` from its first byte.
    #[inline(always)]
    fn items(&mut self, open: u8, close: u8, mut item: impl FnMut(&mut Self) -> Option<()>) -> Option<()> {
        self.eat(open)?;
        self.ws();
        if self.eat(close).is_some() {
            return Some(());
        }
        loop {
            item(self)?;
            self.ws();
            match self.peek()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                c if c == close => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// Any JSON value, as serde_json's raw value (it checks it and finds its end).
    fn raw(&mut self) -> Option<&'a RawValue> {
        let mut it = serde_json::Deserializer::from_slice(&self.b[self.i..]).into_iter::<&RawValue>();
        let v = it.next()?.ok()?;
        self.i += it.byte_offset();
        Some(v)
    }
}

/// Scan a weights file (see the module docs), or `None` when it is outside the shape the
/// scanner reads.
pub(crate) fn scan(bytes: &[u8]) -> Option<RawWeightsFile<'_>> {
    let mut s = Scan { b: bytes, i: 0 };
    let mut out = RawWeightsFile { header: Vec::new(), groups: None };
    // A UTF-8 byte order mark is not JSON: serde refuses it, and so does the scan (`{` expected).
    s.ws();
    s.members(|s, k| {
        if k == "weights" {
            let mut groups = Vec::new();
            s.members(|s, g| {
                groups.push((g.to_string(), s.pairs()?));
                Some(())
            })?;
            out.groups = Some(groups);
        } else {
            let v = s.raw()?;
            match out.header.iter().position(|(h, _)| h == k) {
                Some(at) => out.header[at].1 = v,
                // Many header keys (no writer makes them) would make this search quadratic:
                // serde's path keeps them in a map.
                None if out.header.len() < MAX_HEADER_KEYS => out.header.push((k.to_string(), v)),
                None => return None,
            }
        }
        Some(())
    })?;
    s.ws();
    (s.i == bytes.len()).then_some(out)
}
