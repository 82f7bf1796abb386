//! XML text for writers: the workspace's one escaping, and what XML 1.0 cannot hold at all.
//!
//! Names come from other formats, which allow any character: a glTF node may be called
//! `"a\u{1}b"`. XML 1.0 has no way to write U+0001 (not even as `&#1;`), nor U+FFFE, U+FFFF;
//! writers replace such characters ([`replace_unholdable`]) and report a loss. What XML can hold
//! is escaped so that a parser gives it back exactly: a raw tab or line break in an attribute
//! would come back as a space (attribute-value normalisation, §3.3.3) and a raw carriage return
//! anywhere as a line feed (§2.11), so those are written as character references.

use std::borrow::Cow;

/// The character writers put in place of one XML cannot hold (U+FFFD REPLACEMENT CHARACTER).
pub const REPLACEMENT: char = '\u{FFFD}';

/// Whether XML 1.0 can hold `c` (its `Char` production, §2.2).
pub fn is_xml_char(c: char) -> bool {
    matches!(c, '\t' | '\n' | '\r' | '\u{20}'..='\u{D7FF}' | '\u{E000}'..='\u{FFFD}' | '\u{10000}'..='\u{10FFFF}')
}

/// `s` with every character XML 1.0 cannot hold replaced by [`REPLACEMENT`]; borrowed when it
/// has none.
pub fn replace_unholdable(s: &str) -> Cow<'_, str> {
    if s.chars().all(is_xml_char) {
        Cow::Borrowed(s)
    } else {
        Cow::Owned(s.chars().map(|c| if is_xml_char(c) { c } else { REPLACEMENT }).collect())
    }
}

fn escape(s: &str, attr: bool) -> Cow<'_, str> {
    let special = |c: char| matches!(c, '&' | '<' | '>' | '\r') || (attr && matches!(c, '"' | '\t' | '\n'));
    if !s.chars().any(special) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '\r' => o.push_str("&#13;"),
            '"' if attr => o.push_str("&quot;"),
            '\t' if attr => o.push_str("&#9;"),
            '\n' if attr => o.push_str("&#10;"),
            c => o.push(c),
        }
    }
    Cow::Owned(o)
}

/// Escape `s` for element content: `&`, `<`, `>` as entities, a carriage return as `&#13;`.
/// Characters XML cannot hold pass through: replace them first ([`replace_unholdable`]).
pub fn escape_text(s: &str) -> Cow<'_, str> {
    escape(s, false)
}

/// Escape `s` for a double-quoted attribute value: as [`escape_text`], plus `"` as `&quot;` and
/// tab and line feed as character references, so they are not read back as spaces.
pub fn escape_attr(s: &str) -> Cow<'_, str> {
    escape(s, true)
}

/// Rename every bone of `skeleton` whose name XML 1.0 cannot hold: its unholdable characters
/// replaced by [`REPLACEMENT`], then `_2`, `_3`, … appended while the result is another bone's
/// name, so names stay unique. Each rename is reported as a loss (`code`) naming the old name
/// (escaped as Rust writes it, so control characters show) and the new one, for writers whose
/// output is XML (`format`, for the message).
pub fn make_names_holdable(skeleton: &mut crate::Skeleton, code: &str, format: &str, diag: &mut crate::Diagnostics) {
    if skeleton.bones.iter().all(|b| b.name.chars().all(is_xml_char)) {
        return;
    }
    let mut taken = crate::names::UniqueNames::new();
    for b in &skeleton.bones {
        taken.insert(b.name.clone());
    }
    for b in &mut skeleton.bones {
        let Cow::Owned(base) = replace_unholdable(&b.name) else { continue };
        let name = taken.unique(&base, crate::names::Suffix::Underscore);
        diag.loss_at(
            code,
            crate::Place::element(format!("bone {:?}", b.name)),
            format!(
                "bone {:?} is written as \"{name}\": {format} is XML, which cannot hold its character(s) {}",
                b.name,
                b.name.chars().filter(|c| !is_xml_char(*c)).map(|c| format!("U+{:04X}", c as u32)).collect::<Vec<_>>().join(", ")
            ),
        );
        b.name = name;
    }
}

/// What one pass over an XML text's bytes finds: for readers that parse with a fast,
/// non-validating tokenizer and must know beforehand how big its tree may grow and whether the
/// text needs the validating parser.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteScan {
    /// A byte that may start a character XML 1.0 forbids: a C0 control other than tab, line
    /// feed and carriage return, or 0xEF (which begins U+FFFE and U+FFFF; also every BOM).
    pub unusual: bool,
    /// Line feeds.
    pub newlines: u64,
    /// `<` bytes: a bound on the elements.
    pub lt: u64,
    /// `=` bytes: a bound on the attributes.
    pub eq: u64,
}

impl ByteScan {
    fn add(&mut self, o: ByteScan) {
        self.unusual |= o.unusual;
        self.newlines += o.newlines;
        self.lt += o.lt;
        self.eq += o.eq;
    }
}

/// [`ByteScan`] of `b`, in one pass. On AVX2 machines (found at run time) 32 bytes a step:
/// 0.55 instructions a byte, where the baseline build's SSE2 test of unusual bytes alone took
/// 0.95 and a count by `memchr` 0.26 for each byte counted (docs/performance.md).
pub fn scan_bytes(b: &[u8]) -> ByteScan {
    #[cfg(target_arch = "x86_64")]
    if crate::has_avx2() {
        // SAFETY: the CPU has AVX2, checked above.
        #[allow(unsafe_code)]
        return unsafe { avx2::scan(b) };
    }
    scan_plain(b)
}

/// What a budget charges an XML element tree for, counted in one pass: `<` that do not begin an
/// end tag (`</`), each the start of at most one element, comment or declaration; and `=`, each
/// the start of at most one attribute.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TagCounts {
    /// `<` not followed by `/`.
    pub starts: u64,
    /// `=` bytes.
    pub eq: u64,
}

/// [`TagCounts`] of `b`. On AVX2 machines (found at run time) 32 bytes a step, the byte after
/// each `<` read by a second load one byte on: memchr's two counts and its search for `</` took
/// 45 ms of a 65,535-bone AnvilToolkit read (80 MB of text).
pub fn tag_counts(b: &[u8]) -> TagCounts {
    #[cfg(target_arch = "x86_64")]
    if crate::has_avx2() {
        // SAFETY: the CPU has AVX2, checked above.
        #[allow(unsafe_code)]
        return unsafe { avx2::tags(b) };
    }
    tags_plain_from(b, 0)
}

/// [`tag_counts`] a byte at a time, from byte `from` (the bytes before it only tell whether a
/// `<` precedes it).
fn tags_plain_from(b: &[u8], from: usize) -> TagCounts {
    let mut r = TagCounts::default();
    for (k, &x) in b.iter().enumerate().skip(from) {
        r.starts += u64::from(x == b'<' && b.get(k + 1) != Some(&b'/'));
        r.eq += u64::from(x == b'=');
    }
    r
}

/// [`scan_bytes`] without SIMD of its own: byte-wide counters over runs of 255 bytes, which the
/// compiler vectorises.
fn scan_plain(b: &[u8]) -> ByteScan {
    let mut r = ByteScan::default();
    for c in b.chunks(255) {
        let (mut odd, mut nl, mut lt, mut eq) = (0u8, 0u8, 0u8, 0u8);
        for &x in c {
            odd |= u8::from(((x < 0x20) & (x != b'\t') & (x != b'\n') & (x != b'\r')) | (x == 0xEF));
            nl += u8::from(x == b'\n');
            lt += u8::from(x == b'<');
            eq += u8::from(x == b'=');
        }
        r.add(ByteScan { unusual: odd != 0, newlines: nl.into(), lt: lt.into(), eq: eq.into() });
    }
    r
}

// The standard library's intrinsics: unsafe to call under the workspace's minimum Rust (1.85).
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code, unused_unsafe)]
mod avx2 {
    use super::ByteScan;
    use std::arch::x86_64::*;

    /// [`super::scan_bytes`] 32 bytes a step: per byte lane, counters of line feeds, `<` and
    /// `=` (summed every 255 steps, before a lane can wrap) and a mask of unusual bytes.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn scan(b: &[u8]) -> ByteScan {
        let steps = b.len() / 32;
        let mut r = ByteScan::default();
        unsafe {
            let byte = |c: u8| _mm256_set1_epi8(c as i8);
            let (nl, lt, eq, tab, cr, ef, c1f) = (byte(b'\n'), byte(b'<'), byte(b'='), byte(b'\t'), byte(b'\r'), byte(0xEF), byte(0x1F));
            let zero = _mm256_setzero_si256();
            let mut odd = zero;
            let mut k = 0;
            while k < steps {
                let end = steps.min(k + 255);
                let (mut n_nl, mut n_lt, mut n_eq) = (zero, zero, zero);
                while k < end {
                    // SAFETY: `k < steps`: the 32 bytes from `32 k` lie in `b`.
                    let x = _mm256_loadu_si256(b.as_ptr().add(32 * k).cast());
                    let is_nl = _mm256_cmpeq_epi8(x, nl);
                    // A match is -1 in its lane: subtracting it counts.
                    n_nl = _mm256_sub_epi8(n_nl, is_nl);
                    n_lt = _mm256_sub_epi8(n_lt, _mm256_cmpeq_epi8(x, lt));
                    n_eq = _mm256_sub_epi8(n_eq, _mm256_cmpeq_epi8(x, eq));
                    // Below 0x20 (unsigned) where min(x, 0x1F) is x; tab, LF and CR allowed.
                    let control = _mm256_cmpeq_epi8(_mm256_min_epu8(x, c1f), x);
                    let allowed = _mm256_or_si256(_mm256_or_si256(_mm256_cmpeq_epi8(x, tab), _mm256_cmpeq_epi8(x, cr)), is_nl);
                    odd = _mm256_or_si256(odd, _mm256_or_si256(_mm256_andnot_si256(allowed, control), _mm256_cmpeq_epi8(x, ef)));
                    k += 1;
                }
                r.newlines += sum(n_nl);
                r.lt += sum(n_lt);
                r.eq += sum(n_eq);
            }
            r.unusual = _mm256_movemask_epi8(odd) != 0;
        }
        r.add(super::scan_plain(&b[32 * steps..]));
        r
    }

    /// [`super::tag_counts`] 32 bytes a step: per byte lane, counters of `<`, of `<` followed by
    /// `/` (the byte after each lane from a load one byte on) and of `=`, summed every 255 steps.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn tags(b: &[u8]) -> super::TagCounts {
        // Whole steps whose load one byte on stays in `b`: 32 k + 33 ≤ len.
        let steps = b.len().saturating_sub(1) / 32;
        let (mut lt_all, mut ends, mut eq_all) = (0u64, 0u64, 0u64);
        unsafe {
            let byte = |c: u8| _mm256_set1_epi8(c as i8);
            let (lt, slash, eq) = (byte(b'<'), byte(b'/'), byte(b'='));
            let zero = _mm256_setzero_si256();
            let mut k = 0;
            while k < steps {
                let end = steps.min(k + 255);
                let (mut n_lt, mut n_end, mut n_eq) = (zero, zero, zero);
                while k < end {
                    // SAFETY: `k < steps`: the 33 bytes from `32 k` lie in `b`.
                    let x = _mm256_loadu_si256(b.as_ptr().add(32 * k).cast());
                    let next = _mm256_loadu_si256(b.as_ptr().add(32 * k + 1).cast());
                    let is_lt = _mm256_cmpeq_epi8(x, lt);
                    // A match is -1 in its lane: subtracting it counts.
                    n_lt = _mm256_sub_epi8(n_lt, is_lt);
                    n_end = _mm256_sub_epi8(n_end, _mm256_and_si256(is_lt, _mm256_cmpeq_epi8(next, slash)));
                    n_eq = _mm256_sub_epi8(n_eq, _mm256_cmpeq_epi8(x, eq));
                    k += 1;
                }
                lt_all += sum(n_lt);
                ends += sum(n_end);
                eq_all += sum(n_eq);
            }
        }
        let tail = super::tags_plain_from(b, 32 * steps);
        super::TagCounts { starts: lt_all - ends + tail.starts, eq: eq_all + tail.eq }
    }

    /// The sum of the 32 byte lanes.
    #[target_feature(enable = "avx2")]
    unsafe fn sum(v: __m256i) -> u64 {
        unsafe {
            let s = _mm256_sad_epu8(v, _mm256_setzero_si256());
            (_mm256_extract_epi64::<0>(s) + _mm256_extract_epi64::<1>(s) + _mm256_extract_epi64::<2>(s) + _mm256_extract_epi64::<3>(s))
                as u64
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [`ByteScan`] byte by byte, as the definition reads.
    fn scan_naive(b: &[u8]) -> ByteScan {
        let count = |c: u8| b.iter().filter(|&&x| x == c).count() as u64;
        let unusual = b.iter().any(|&x| (x < 0x20 && !matches!(x, b'\t' | b'\n' | b'\r')) || x == 0xEF);
        ByteScan { unusual, newlines: count(b'\n'), lt: count(b'<'), eq: count(b'=') }
    }

    /// Both scans (the AVX2 one where the machine has it, and the plain one) count every byte
    /// and flag every unusual one: texts past the 255 steps after which the AVX2 counters are
    /// summed, each unusual byte alone at every offset of a step and in the tail.
    #[test]
    fn byte_scans_count_and_flag_every_byte() {
        let mut next = crate::testing::xorshift(0x0005_ca9b_17e5_u64);
        let alphabet = b"<<==\n\n\t\r ab09<>/\"\x01\x1f\x0b\xef\xbb\xc3\xa9 ";
        for len in [0usize, 1, 31, 32, 33, 255 * 32 - 1, 255 * 32, 255 * 32 + 1, 255 * 32 * 2 + 77, 20_000] {
            for _ in 0..4 {
                let b: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
                assert_eq!(scan_bytes(&b), scan_naive(&b), "len {len}");
                assert_eq!(scan_plain(&b), scan_naive(&b), "len {len}");
            }
        }
        // Texts of one counted byte: every lane counts at every step, so a counter summed a step
        // too late wraps.
        for c in [b'\n', b'<', b'='] {
            for len in [255 * 32, 256 * 32, 600 * 32 + 5] {
                assert_eq!(scan_bytes(&vec![c; len]), scan_naive(&vec![c; len]), "{c} × {len}");
                assert_eq!(scan_plain(&vec![c; len]), scan_naive(&vec![c; len]), "{c} × {len}");
            }
        }
        // One unusual byte in plain text, at every place of two steps and a tail.
        for bad in [0u8, 0x08, 0x0b, 0x0c, 0x0e, 0x1f, 0xef] {
            for at in 0..70 {
                let mut b = vec![b'a'; 70];
                b[at] = bad;
                assert!(scan_bytes(&b).unusual && scan_plain(&b).unusual, "{bad:#x} at {at}");
            }
        }
        for ok in [b'\t', b'\n', b'\r', b' ', 0x7f, 0x80, 0xee, 0xf0, 0xff] {
            assert!(!scan_bytes(&[ok; 70]).unusual && !scan_plain(&[ok; 70]).unusual, "{ok:#x}");
        }
    }

    /// Both tag counts (the AVX2 one where the machine has it, and the plain one) count every
    /// `<` that begins no end tag and every `=`: a `/` after a `<` across each step's end, texts
    /// past the 255 steps after which the AVX2 counters are summed, and every tail length.
    #[test]
    fn tag_counts_count_starts_and_equals() {
        let naive = |b: &[u8]| TagCounts {
            starts: b.windows(2).filter(|w| w[0] == b'<' && w[1] != b'/').count() as u64 + u64::from(b.last() == Some(&b'<')),
            eq: b.iter().filter(|&&x| x == b'=').count() as u64,
        };
        let mut next = crate::testing::xorshift(0x0007_a9c0_u64);
        let alphabet = b"<<//==a <\n";
        for len in (0usize..70).chain([255 * 32, 255 * 32 + 1, 255 * 32 + 2, 600 * 32 + 5, 20_001]) {
            for _ in 0..6 {
                let b: Vec<u8> = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
                assert_eq!(tag_counts(&b), naive(&b), "len {len}");
                assert_eq!(tags_plain_from(&b, 0), naive(&b), "len {len}");
            }
        }
        // `<` then `/` at every place of three steps, each lane wrapping if summed late.
        for at in 0..96 {
            let mut b = vec![b'a'; 97];
            b[at] = b'<';
            b[at + 1] = b'/';
            assert_eq!(tag_counts(&b), TagCounts { starts: 0, eq: 0 }, "</ at {at}");
            b[at + 1] = b'=';
            assert_eq!(tag_counts(&b), TagCounts { starts: 1, eq: 1 }, "<= at {at}");
        }
        for (text, want) in [(&b"<"[..], 1), (b"</", 0), (b"<<", 2), (b"<</", 1)] {
            for len in [255 * 32 + 1, 256 * 32] {
                let b: Vec<u8> = text.iter().copied().cycle().take(len * text.len()).collect();
                assert_eq!(tag_counts(&b), naive(&b), "{:?} × {len}", std::str::from_utf8(text));
                assert_eq!(tag_counts(&b).starts > 0, want > 0);
            }
        }
    }

    #[test]
    fn escapes_and_replacements() {
        assert!(matches!(escape_text("plain é 😀"), Cow::Borrowed(_)));
        assert_eq!(escape_text("a<b>&c\"\t\n\r"), "a&lt;b&gt;&amp;c\"\t\n&#13;");
        assert_eq!(escape_attr("a<b>&c\"\t\n\r'"), "a&lt;b&gt;&amp;c&quot;&#9;&#10;&#13;'");
        assert_eq!(replace_unholdable("a\u{1}b\u{fffe}\u{ffff}\u{7f}\u{10ffff}"), "a\u{fffd}b\u{fffd}\u{fffd}\u{7f}\u{10ffff}");
        assert!(matches!(replace_unholdable("ok\t\n\r"), Cow::Borrowed(_)));
        assert!(!is_xml_char('\u{0}') && !is_xml_char('\u{1f}') && is_xml_char('\u{85}') && is_xml_char('\u{e000}'));
    }

    #[test]
    fn names_are_made_holdable_and_stay_unique() {
        use crate::{Bone, BoneId, Diagnostics, Severity, Skeleton, Transform};
        let mut sk = Skeleton::new("s");
        for (i, n) in ["a\u{1}", "a\u{2}", "a\u{fffd}", "ok"].iter().enumerate() {
            sk.push(Bone::new(*n, (i > 0).then_some(BoneId::new(0)), Transform::IDENTITY));
        }
        let mut d = Diagnostics::default();
        make_names_holdable(&mut sk, "x.name", "X", &mut d);
        let names: Vec<&str> = sk.bones.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names, ["a\u{fffd}_2", "a\u{fffd}_3", "a\u{fffd}", "ok"]);
        let losses: Vec<&str> = d.of(Severity::Loss).map(|l| l.message.as_str()).collect();
        assert_eq!(losses.len(), 2);
        assert_eq!(losses[0], "bone \"a\\u{1}\" is written as \"a\u{fffd}_2\": X is XML, which cannot hold its character(s) U+0001");
    }
}
