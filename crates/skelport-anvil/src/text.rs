//! Text plumbing: cheap shared strings, byte encodings, XML escaping and line/column positions.

use std::borrow::Cow;
use std::fmt;
use std::ops::Deref;
use std::sync::Arc;

/// An immutable string that is either a slice of a parsed file's text (shared, no copy) or owned.
///
/// Every name and value in the [`crate::model`] is a `Txt`, so reading a 65,535-bone file does not
/// allocate a string per number. Equality and hashing are by content.
#[derive(Clone)]
pub struct Txt(Repr);

#[derive(Clone)]
enum Repr {
    Shared { src: Arc<String>, start: u32, end: u32 },
    Owned(Box<str>),
    Static(&'static str),
}

impl Txt {
    /// A slice `start..end` of a shared text. The range must lie on character boundaries.
    pub(crate) fn shared(src: &Arc<String>, start: usize, end: usize) -> Txt {
        debug_assert!(src.is_char_boundary(start) && src.is_char_boundary(end));
        Txt(Repr::Shared { src: Arc::clone(src), start: start as u32, end: end as u32 })
    }
    /// A `'static` string.
    pub const fn from_static(s: &'static str) -> Txt {
        Txt(Repr::Static(s))
    }
    /// The text.
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Shared { src, start, end } => &src[*start as usize..*end as usize],
            Repr::Owned(s) => s,
            Repr::Static(s) => s,
        }
    }
}

impl Deref for Txt {
    type Target = str;
    fn deref(&self) -> &str {
        self.as_str()
    }
}
impl AsRef<str> for Txt {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}
impl PartialEq for Txt {
    fn eq(&self, o: &Txt) -> bool {
        self.as_str() == o.as_str()
    }
}
impl Eq for Txt {}
impl PartialEq<str> for Txt {
    fn eq(&self, o: &str) -> bool {
        self.as_str() == o
    }
}
impl PartialEq<&str> for Txt {
    fn eq(&self, o: &&str) -> bool {
        self.as_str() == *o
    }
}
impl std::hash::Hash for Txt {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.as_str().hash(h)
    }
}
impl fmt::Debug for Txt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}
impl fmt::Display for Txt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
impl From<&str> for Txt {
    fn from(s: &str) -> Txt {
        Txt(Repr::Owned(s.into()))
    }
}
impl From<String> for Txt {
    fn from(s: String) -> Txt {
        Txt(Repr::Owned(s.into_boxed_str()))
    }
}
impl From<Cow<'_, str>> for Txt {
    fn from(s: Cow<'_, str>) -> Txt {
        Txt(Repr::Owned(s.into_owned().into_boxed_str()))
    }
}

/// How a file's text was stored as bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Encoding {
    /// UTF-16 little-endian (what AnvilToolkit's Standard exporter writes).
    Utf16Le,
    /// UTF-16 big-endian (accepted and written back as found).
    Utf16Be,
    /// UTF-8 (the Schema-Based exporter; also accepted for Standard files).
    Utf8,
}

/// The encoding and byte-order mark of a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ByteForm {
    /// The encoding.
    pub encoding: Encoding,
    /// Whether the file starts with a byte-order mark.
    #[serde(deserialize_with = "bool_or_bit")]
    pub bom: bool,
}

/// `true`/`false`, or `1`/`0`: glTF extras that went through Blender come back with integers for
/// booleans (its custom properties, which its importer makes of extras, hold them as integers).
fn bool_or_bit<'de, D: serde::Deserializer<'de>>(d: D) -> Result<bool, D::Error> {
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Flag {
        Bool(bool),
        Bit(u8),
    }
    match <Flag as serde::Deserialize>::deserialize(d)? {
        Flag::Bool(b) => Ok(b),
        Flag::Bit(0) => Ok(false),
        Flag::Bit(1) => Ok(true),
        Flag::Bit(n) => Err(serde::de::Error::custom(format!("bom is {n}, not a boolean"))),
    }
}

/// Why bytes could not be decoded.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DecodeError {
    /// Byte offset of the first bad byte.
    pub offset: usize,
    /// What is wrong.
    pub message: String,
}

/// Decide how bytes are encoded: a BOM, else the `<\0` / `\0<` pattern of BOM-less UTF-16, else UTF-8.
pub fn detect(bytes: &[u8]) -> ByteForm {
    match bytes {
        [0xFF, 0xFE, ..] => ByteForm { encoding: Encoding::Utf16Le, bom: true },
        [0xFE, 0xFF, ..] => ByteForm { encoding: Encoding::Utf16Be, bom: true },
        [0xEF, 0xBB, 0xBF, ..] => ByteForm { encoding: Encoding::Utf8, bom: true },
        [b'<', 0, ..] => ByteForm { encoding: Encoding::Utf16Le, bom: false },
        [0, b'<', ..] => ByteForm { encoding: Encoding::Utf16Be, bom: false },
        _ => ByteForm { encoding: Encoding::Utf8, bom: false },
    }
}

/// Decode a whole file (BOM removed). Invalid sequences are errors, never replaced, so that
/// encoding the text again gives the same bytes.
pub fn decode(bytes: &[u8]) -> Result<(String, ByteForm), DecodeError> {
    let form = detect(bytes);
    let body = match (form.encoding, form.bom) {
        (Encoding::Utf8, true) => &bytes[3..],
        (_, true) => &bytes[2..],
        _ => bytes,
    };
    let text = match form.encoding {
        Encoding::Utf8 => match std::str::from_utf8(body) {
            Ok(s) => s.to_owned(),
            Err(e) => {
                let offset = e.valid_up_to() + if form.bom { 3 } else { 0 };
                return Err(DecodeError { offset, message: "invalid UTF-8".into() });
            }
        },
        Encoding::Utf16Le | Encoding::Utf16Be => {
            if body.len() % 2 != 0 {
                return Err(DecodeError { offset: bytes.len() - 1, message: "UTF-16 text with an odd number of bytes".into() });
            }
            let enc = if form.encoding == Encoding::Utf16Le { encoding_rs::UTF_16LE } else { encoding_rs::UTF_16BE };
            match decode_utf16(enc, body) {
                Some(s) => s,
                None => {
                    // Find the first unpaired surrogate for the message.
                    let units = body.chunks_exact(2).map(|c| {
                        if form.encoding == Encoding::Utf16Le {
                            u16::from_le_bytes([c[0], c[1]])
                        } else {
                            u16::from_be_bytes([c[0], c[1]])
                        }
                    });
                    let mut off = 0usize;
                    for r in char::decode_utf16(units) {
                        match r {
                            Ok(c) => off += c.len_utf16() * 2,
                            Err(_) => break,
                        }
                    }
                    return Err(DecodeError {
                        offset: off + if form.bom { 2 } else { 0 },
                        message: "invalid UTF-16 (unpaired surrogate)".into(),
                    });
                }
            }
        }
    };
    Ok((text, form))
}

/// Encode text back into bytes of the given form (with its BOM when it had one).
pub fn encode(text: &str, form: ByteForm) -> Vec<u8> {
    match form.encoding {
        Encoding::Utf8 => {
            let mut out = Vec::with_capacity(text.len() + 3);
            if form.bom {
                out.extend_from_slice(&[0xEF, 0xBB, 0xBF]);
            }
            out.extend_from_slice(text.as_bytes());
            out
        }
        Encoding::Utf16Le if text.is_ascii() => encode_ascii_le(text.as_bytes(), form.bom),
        Encoding::Utf16Le | Encoding::Utf16Be => {
            let le = form.encoding == Encoding::Utf16Le;
            let mut out = Vec::with_capacity(text.len() * 2 + 2);
            if form.bom {
                out.extend_from_slice(if le { &[0xFF, 0xFE] } else { &[0xFE, 0xFF] });
            }
            let bytes = text.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                // A run of ASCII: widened by the one SWAR loop, eight bytes at a time.
                if le {
                    let run = bytes[i..].iter().position(|&b| b >= 0x80).unwrap_or(bytes.len() - i);
                    if run >= 8 {
                        let at = out.len();
                        out.resize(at + run * 2, 0);
                        widen_ascii(&bytes[i..i + run], &mut out[at..]);
                        i += run;
                        continue;
                    }
                }
                let b = bytes[i];
                if b < 0x80 {
                    if le {
                        out.push(b);
                        out.push(0);
                    } else {
                        out.push(0);
                        out.push(b);
                    }
                    i += 1;
                    continue;
                }
                let c = text[i..].chars().next().unwrap_or('\u{FFFD}');
                let mut buf = [0u16; 2];
                for u in c.encode_utf16(&mut buf) {
                    out.extend_from_slice(&if le { u.to_le_bytes() } else { u.to_be_bytes() });
                }
                i += c.len_utf8();
            }
            out
        }
    }
}

/// Bytes from which a text is widened to, or decoded from, UTF-16 in two halves on two threads.
const PARALLEL_FROM: usize = 1 << 20;

/// ASCII text → UTF-16 LE (with a BOM when asked), into a buffer of the exact size. A big text
/// ([`PARALLEL_FROM`]) is widened in two halves on two threads: most of the time of writing a big
/// file is the kernel handing out its fresh pages, and two threads fault them in side by side.
fn encode_ascii_le(src: &[u8], bom: bool) -> Vec<u8> {
    encode_ascii_le_from(src, bom, PARALLEL_FROM)
}

/// [`encode_ascii_le`] in two halves from `parallel_from` bytes.
fn encode_ascii_le_from(src: &[u8], bom: bool, parallel_from: usize) -> Vec<u8> {
    let start = if bom { 2 } else { 0 };
    // Zeroed by the allocator: fresh pages that only the widening writes.
    let mut out = vec![0u8; start + src.len() * 2];
    out[..start].copy_from_slice(&[0xFF, 0xFE][..start]);
    let body = &mut out[start..];
    if src.len() >= parallel_from {
        let split = src.len() / 2;
        let (sa, sb) = src.split_at(split);
        let (da, db) = body.split_at_mut(split * 2);
        rayon::join(|| widen_ascii(sa, da), || widen_ascii(sb, db));
    } else {
        widen_ascii(src, body);
    }
    out
}

/// ASCII bytes → UTF-16 LE code units in `dst` (twice as long, zeroed).
fn widen_ascii(src: &[u8], dst: &mut [u8]) {
    let mut chunks = src.chunks_exact(8);
    for (c, d) in (&mut chunks).zip(dst.chunks_exact_mut(16)) {
        let x = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        d[..8].copy_from_slice(&spread(x & 0xFFFF_FFFF).to_le_bytes());
        d[8..].copy_from_slice(&spread(x >> 32).to_le_bytes());
    }
    let done = src.len() - chunks.remainder().len();
    for (k, &b) in chunks.remainder().iter().enumerate() {
        dst[(done + k) * 2] = b;
    }
}

/// Four bytes `abcd` (low 32 bits) → `a0b0c0d0`.
fn spread(x: u64) -> u64 {
    (x & 0xFF) | ((x & 0xFF00) << 8) | ((x & 0xFF_0000) << 16) | ((x & 0xFF00_0000) << 24)
}

/// UTF-16 → UTF-8 with encoding_rs (as the developers' guide asks: a well-kept library, fast on
/// ASCII, and it checks surrogates itself). `None` on an unpaired surrogate.
///
/// A big file is decoded in two halves on two threads, straight into the two halves of one
/// buffer sized for all-ASCII text (what AnvilToolkit writes: its names are hashes' ASCII
/// labels): most of the time of decoding a big file is the kernel handing out the fresh pages
/// the text lands in, and two threads fault them in side by side. Text that is not all
/// ASCII overflows its half and is decoded again in one piece.
fn decode_utf16(enc: &'static encoding_rs::Encoding, body: &[u8]) -> Option<String> {
    decode_utf16_from(enc, body, PARALLEL_FROM)
}

/// [`decode_utf16`], trying the two halves from `parallel_from` bytes.
fn decode_utf16_from(enc: &'static encoding_rs::Encoding, body: &[u8], parallel_from: usize) -> Option<String> {
    if body.len() >= parallel_from {
        if let Some(s) = decode_utf16_ascii_halves(enc, body) {
            return Some(s);
        }
    }
    let mut d = enc.new_decoder_without_bom_handling();
    let mut out = String::with_capacity(body.len() / 2 + 16);
    let mut rest = body;
    loop {
        let (r, read) = d.decode_to_string_without_replacement(rest, &mut out, true);
        rest = &rest[read..];
        match r {
            encoding_rs::DecoderResult::InputEmpty => return Some(out),
            encoding_rs::DecoderResult::OutputFull => {
                // Non-ASCII text: room for the rest at worst-case growth.
                out.reserve(d.max_utf8_buffer_length_without_replacement(rest.len()).unwrap_or(rest.len() * 3 / 2 + 16));
            }
            encoding_rs::DecoderResult::Malformed(..) => return None,
        }
    }
}

/// The two-thread decode of all-ASCII UTF-16 (see [`decode_utf16`]); `None` when the text is not
/// all ASCII or not valid, which the one-piece decode then sorts out.
fn decode_utf16_ascii_halves(enc: &'static encoding_rs::Encoding, body: &[u8]) -> Option<String> {
    let units = body.len() / 2;
    // Zeroed by the allocator (fresh pages, not written until the decoder writes them).
    let mut out = vec![0u8; units];
    let split = units / 2;
    let (a, b) = out.split_at_mut(split);
    let (ia, ib) = body.split_at(split * 2);
    // Each half must decode to exactly one byte per code unit: a non-ASCII character needs more
    // room than its half has (OutputFull), a malformed one stops it.
    let half = |input: &[u8], dst: &mut [u8]| {
        let mut d = enc.new_decoder_without_bom_handling();
        let (r, read, written) = d.decode_to_utf8_without_replacement(input, dst, true);
        matches!(r, encoding_rs::DecoderResult::InputEmpty) && read == input.len() && written == dst.len()
    };
    let (ok_a, ok_b) = rayon::join(|| half(ia, a), || half(ib, b));
    if !(ok_a && ok_b) {
        return None;
    }
    // Valid UTF-8 by construction (encoding_rs wrote every byte, one ASCII byte per unit); the
    // check is a fast ASCII scan.
    String::from_utf8(out).ok()
}

/// Part of the AnvilToolkit formats' `Format::fuzz_check`: the two-thread UTF-16 decode and ASCII
/// widening, which only files of [`PARALLEL_FROM`] bytes and more take, run on a fuzz input and
/// compared with the one-thread ones (the decode when the input is UTF-16, the widening when its
/// text is then ASCII). Panics on a difference; returns how many comparisons were made.
#[cfg(feature = "fuzzing")]
pub(crate) fn fuzz_halves(data: &[u8]) -> usize {
    let form = detect(data);
    let enc = match form.encoding {
        Encoding::Utf16Le => encoding_rs::UTF_16LE,
        Encoding::Utf16Be => encoding_rs::UTF_16BE,
        Encoding::Utf8 => return 0,
    };
    let body = &data[if form.bom { 2 } else { 0 }..];
    let one = decode_utf16_from(enc, body, usize::MAX);
    assert_eq!(decode_utf16_from(enc, body, 0), one, "the UTF-16 decode in halves differs from the decode in one piece");
    let Some(text) = one.filter(|t| t.is_ascii()) else { return 1 };
    let wide = encode_ascii_le_from(text.as_bytes(), form.bom, usize::MAX);
    assert_eq!(encode_ascii_le_from(text.as_bytes(), form.bom, 0), wide, "the widening in halves differs from the widening in one piece");
    2
}

/// Decode the first bytes of a file for sniffing (lossy, tolerant of a cut-off end).
pub fn decode_head(head: &[u8]) -> String {
    let form = detect(head);
    match form.encoding {
        Encoding::Utf8 => String::from_utf8_lossy(if form.bom { &head[3..] } else { head }).into_owned(),
        Encoding::Utf16Le | Encoding::Utf16Be => {
            let body = if form.bom { &head[2..] } else { head };
            let units = body.chunks_exact(2).map(|c| {
                if form.encoding == Encoding::Utf16Le {
                    u16::from_le_bytes([c[0], c[1]])
                } else {
                    u16::from_be_bytes([c[0], c[1]])
                }
            });
            char::decode_utf16(units).map(|r| r.unwrap_or('\u{FFFD}')).collect()
        }
    }
}

/// 1-based line and column (in characters) of a byte offset in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(text.len());
    let mut off = offset;
    while !text.is_char_boundary(off) {
        off -= 1;
    }
    let before = &text.as_bytes()[..off];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before.iter().rposition(|&b| b == b'\n').map(|p| p + 1).unwrap_or(0);
    let column = text[line_start..off].chars().count() + 1;
    (line, column)
}

/// Escape text for element content and for double-quoted attribute values: the workspace's one
/// XML escaping ([`skelport_ir::xml`]).
pub use skelport_ir::xml::{escape_attr, escape_text};

/// Resolve the five predefined entities and character references. `None` when a reference is
/// malformed (the tokenizer has already rejected such files, so this is a safety net).
pub fn unescape(s: &str) -> Option<Cow<'_, str>> {
    if !s.contains('&') {
        return Some(Cow::Borrowed(s));
    }
    let mut o = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(p) = rest.find('&') {
        o.push_str(&rest[..p]);
        let after = &rest[p + 1..];
        let semi = after.find(';')?;
        let ent = &after[..semi];
        o.push(entity_char(ent)?);
        rest = &after[semi + 1..];
    }
    o.push_str(rest);
    Some(Cow::Owned(o))
}

/// The character an entity or character reference (without `&` and `;`) stands for.
pub fn entity_char(ent: &str) -> Option<char> {
    match ent {
        "lt" => Some('<'),
        "gt" => Some('>'),
        "amp" => Some('&'),
        "quot" => Some('"'),
        "apos" => Some('\''),
        _ => {
            let code = if let Some(h) = ent.strip_prefix("#x").or_else(|| ent.strip_prefix("#X")) {
                u32::from_str_radix(h, 16).ok()?
            } else if let Some(d) = ent.strip_prefix('#') {
                d.parse::<u32>().ok()?
            } else {
                return None;
            };
            char::from_u32(code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_round_trip() {
        let s = "<?xml version=\"1.0\" encoding=\"utf-16\"?>\r\n<a>é😀</a>";
        for enc in [Encoding::Utf16Le, Encoding::Utf16Be, Encoding::Utf8] {
            for bom in [true, false] {
                let f = ByteForm { encoding: enc, bom };
                let b = encode(s, f);
                let (t, g) = decode(&b).unwrap();
                assert_eq!(t, s);
                assert_eq!(g, f);
            }
        }
    }

    #[test]
    fn utf16_long_non_ascii_and_bad_surrogates() {
        // Longer than the ASCII-sized first buffer: the decoder must grow it.
        let s = format!("<a>{}</a>", "é😀ä".repeat(2000));
        for enc in [Encoding::Utf16Le, Encoding::Utf16Be] {
            let f = ByteForm { encoding: enc, bom: true };
            assert_eq!(decode(&encode(&s, f)).unwrap(), (s.clone(), f));
        }
        // An unpaired low surrogate after "<a" (BOM + 2 units): offset 6.
        let bad = [0xFF, 0xFE, b'<', 0, b'a', 0, 0x00, 0xDC, b'>', 0];
        assert_eq!(decode(&bad).unwrap_err().offset, 6);
    }

    #[test]
    fn utf16_of_ascii_runs_between_other_characters_is_each_code_unit() {
        // ASCII runs of every length from 0 to 20 (the widening loop takes eight bytes at a
        // time and the rest one by one) between characters of two, three and four UTF-8 bytes.
        let mut s = String::new();
        for n in 0..=20 {
            s.extend((0..n).map(|i| b"<a b=\"1\"/>xyz"[i % 13] as char));
            s.push(['é', '漢', '😀'][n % 3]);
        }
        for (enc, le) in [(Encoding::Utf16Le, true), (Encoding::Utf16Be, false)] {
            let want: Vec<u8> = s.encode_utf16().flat_map(|u| if le { u.to_le_bytes() } else { u.to_be_bytes() }).collect();
            assert_eq!(encode(&s, ByteForm { encoding: enc, bom: false }), want, "{enc:?}");
        }
    }

    #[test]
    fn positions_and_entities() {
        assert_eq!(line_col("ab\ncd", 4), (2, 2));
        assert_eq!(unescape("a&lt;b&#x41;&#66;").unwrap(), "a<bAB");
        assert!(unescape("a&bogus;").is_none());
    }
}
