//! Number text shared by the text readers (OBJ, Collada): one decimal parser, used for single
//! words ([`fast_decimal`]) and for whitespace-separated lists ([`decimals_into`], [`ints_into`]).
//!
//! Hand-written because number lists are most of a Collada or OBJ file: a word made of an
//! optional sign and at most 15 digits with at most one dot (what exporters write) is
//! accumulated as it is scanned and finished by Clinger's fast path (below 2^53 and at most 15
//! decimals: one exact division, bit for bit `str::parse`); any other word goes to fast-float2
//! (Eisel-Lemire, maintained by the lexical author: no slow-path cliff for exponents or long
//! digit strings). On CPUs with AVX2 the lists' common words are read a vector at a time
//! (`sse`: the words of a 32-byte window together, each decimal from one 16-byte load), to the
//! same values. The measurements behind each choice are in docs/performance.md.

// The bounded word scan below: 10.04 M -> 8.62 M instructions for the Linden body's 80,891
// decimals (docs/performance.md). Each unchecked read states why it is in bounds.
#![allow(unsafe_code)]

/// Powers of ten as integers, to append a run of digits to a significand.
const POW10_INT: [u64; 16] = [
    1,
    10,
    100,
    1000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
];

/// Powers of ten exact in an f64, for Clinger's fast path.
const POW10: [f64; 16] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];

/// The bytes `split_ascii_whitespace` splits on.
#[inline(always)]
pub fn is_blank(c: u8) -> bool {
    matches!(c, b' ' | b'\n' | b'\r' | b'\t' | b'\x0c')
}

/// Scan the number word that starts at `b[*i]` (not a blank) up to the next blank or the end,
/// leaving `*i` there: its value when the word is a plain decimal (optional sign, 1 to 15
/// digits, at most one dot), `None` for any other word (the caller takes the slow path).
#[inline(always)]
fn clinger_word(b: &[u8], i: &mut usize) -> Option<f64> {
    // SAFETY: not bounded: every read is checked.
    unsafe { word::<false>(b, i) }
}

/// [`clinger_word`], reading with or without bounds checks.
///
/// # Safety
/// When `BOUNDED`, a blank must follow `b[*i]` in `b`: every scan of a word stops at a byte
/// that is not a digit, a sign or a dot, so no read passes that blank. Two of a digit's nine
/// instructions were the bounds check; number lists are most of a Collada file.
#[inline(always)]
unsafe fn word<const BOUNDED: bool>(b: &[u8], i: &mut usize) -> Option<f64> {
    let at = |j: usize| -> Option<u8> {
        if BOUNDED {
            debug_assert!(j < b.len());
            // SAFETY: the caller's blank lies at or after `j` (see above).
            Some(unsafe { *b.get_unchecked(j) })
        } else {
            b.get(j).copied()
        }
    };
    // A local cursor, stored back once: the loops then keep it in a register.
    let mut j = *i;
    let first = at(j)?;
    let neg = first == b'-';
    if neg || first == b'+' {
        j += 1;
    }
    // Past 15 digits the word goes to the slow path: wrapping is harmless.
    let mut m = 0u64;
    let int_start = j;
    while let Some(c) = at(j) {
        let d = c.wrapping_sub(b'0');
        if d >= 10 {
            break;
        }
        m = m.wrapping_mul(10).wrapping_add(u64::from(d));
        j += 1;
    }
    let mut digits = j - int_start;
    let mut frac = 0usize;
    if at(j) == Some(b'.') {
        j += 1;
        // The fraction by `digit_run` (up to seven digits eight bytes at a time): on the Linden
        // body's numbers that is more instructions than a byte loop (its fractions are mostly
        // three digits) but less time at volume (the 50 MB case 3-6 % faster), as the loop's
        // exit is mispredicted wherever lengths vary; MakeHuman's six-digit OBJ numbers take
        // fewer instructions too (docs/performance.md).
        let (len, v) = digit_run(b, &mut j);
        // Past 15 digits the word takes the slow path: any factor will do.
        m = m.wrapping_mul(POW10_INT.get(len).copied().unwrap_or(0)).wrapping_add(v);
        frac = len;
        digits += frac;
    }
    *i = j;
    if at(j).is_none_or(is_blank) && (1..=15).contains(&digits) {
        // v is +0.0 or more; "-0" is -0.0, as `str::parse` gives. `m` is below 10^15, so the
        // signed conversion (one instruction; the unsigned one takes seven) is as exact.
        let v = (m as i64) as f64 / POW10[frac];
        Some(f64::from_bits(v.to_bits() | u64::from(neg) << 63))
    } else {
        None
    }
}

/// The length of `b` without its trailing blanks, and the index of the last blank before that
/// length: the words that start at or before that blank end at a blank at or before it, so a
/// list's scanners read them without bounds checks ([`word`]); only the last word is checked.
/// `None` for the blank index when the text holds one word or none.
#[inline]
fn bounded_region(b: &[u8]) -> (usize, Option<usize>) {
    let mut m = b.len();
    while m > 0 && is_blank(b[m - 1]) {
        m -= 1;
    }
    let mut k = m;
    while k > 0 && !is_blank(b[k - 1]) {
        k -= 1;
    }
    (m, k.checked_sub(1))
}

/// A decimal number's text (`-3.2411`, `1e-5`, what mesh exporters write) as the correctly rounded
/// f64, bit for bit what `str::parse` gives, or `None` when it is not a number.
pub fn fast_decimal(t: &str) -> Option<f64> {
    let b = t.as_bytes();
    let mut i = 0;
    // A word with a blank inside is no number (`str::parse` refuses it): the fast path would stop
    // at the blank, so it is taken only when it consumed the whole word.
    if !b.is_empty() && !is_blank(b[0]) {
        if let Some(v) = clinger_word(b, &mut i) {
            if i == b.len() {
                return Some(v);
            }
        }
    }
    fast_float2::parse(t).ok()
}

/// The word of `b` at `*i` when it is a plain decimal (what [`decimals_into`] takes its fast path
/// for: an optional sign, 1 to 15 digits, at most one dot) ended by a blank or the end of `b`,
/// with `*i` left at that end; `None` at the end of `b`, at a blank or for any other word, `*i`
/// then somewhere in it: the caller reads the text again its own way. For readers that parse a
/// statement in place (OBJ's `v 1 2 3`), where splitting it into words first read every byte
/// twice.
#[inline]
pub fn plain_decimal_at(b: &[u8], i: &mut usize) -> Option<f64> {
    if *i >= b.len() {
        return None;
    }
    clinger_word(b, i)
}

/// The longest decimal number at the start of `b` (fast-float2's grammar: an optional sign,
/// digits, a dot, an exponent; also `inf` and `nan`) as the correctly rounded f64 and the bytes it
/// took, or `None` when `b` does not start with one. For scanners of a stricter grammar (JSON),
/// which check the text taken: parsing straight from the bytes saves a second scan of the word.
pub fn decimal_prefix(b: &[u8]) -> Option<(f64, usize)> {
    fast_float2::parse_partial(b).ok()
}

/// Append the numbers of a whitespace-separated list (words as `split_ascii_whitespace` gives
/// them) to `out`, or give the index and text of the first word that is not a number. Plain
/// decimals take the fast path of [`fast_decimal`]; any other word goes to `slow` (a format's
/// full parser: [`fast_decimal`] plus the spellings it accepts for non-finite values).
///
/// Fused (each word scanned once, in tight loops: blanks, then sign, digits, dot, digits)
/// because splitting the words first and parsing each again read every byte twice; a loop per
/// part of a word because one loop with a branch per byte and state flags cost half as much
/// again. Digits are counted, not significant digits (a word with more than 15, leading zeros
/// included, takes the slow path), and the sign is a bit, not a branch.
pub fn decimals_into<'t>(text: &'t str, out: &mut Vec<f64>, slow: fn(&str) -> Option<f64>) -> Result<(), (usize, &'t str)> {
    #[cfg(target_arch = "x86_64")]
    if crate::has_avx2() {
        // SAFETY: the CPU has the features, checked above.
        return unsafe { decimals_into_avx2(text, out, slow) };
    }
    decimals_into_in::<false>(text, out, slow)
}

/// [`decimals_into`] compiled for the CPUs that have AVX2 and BMI2 (since 2013), reading its
/// words a 32-byte window at a time ([`sse::decimal_window`]); the words left to the scalar loop
/// get three-operand instructions and shifts that need no count register (5 % fewer
/// instructions for that loop; docs/performance.md).
///
/// # Safety
/// The CPU must have AVX2, BMI1 and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
unsafe fn decimals_into_avx2<'t>(text: &'t str, out: &mut Vec<f64>, slow: fn(&str) -> Option<f64>) -> Result<(), (usize, &'t str)> {
    decimals_into_in::<true>(text, out, slow)
}

/// The list loop; `SSE`: words read a 32-byte window at a time by [`sse::decimal_window`]
/// (only in [`decimals_into_avx2`], whose caller has checked the CPU).
#[inline(always)]
fn decimals_into_in<'t, const SSE: bool>(text: &'t str, out: &mut Vec<f64>, slow: fn(&str) -> Option<f64>) -> Result<(), (usize, &'t str)> {
    let b = text.as_bytes();
    let (m, last_blank) = bounded_region(b);
    let mut i = 0;
    if let Some(last) = last_blank {
        // Invariants: `b[last]` is a blank and `b[m - 1]` is not (m > last + 1), so a scan for a
        // blank from `i <= last` stops at `last` or before, and one past blanks from `i < m` stops
        // before `m`.
        loop {
            // SAFETY: `i < m` (see above): the loop stops before `m`.
            while is_blank(unsafe { *b.get_unchecked(i) }) {
                i += 1;
            }
            if i > last {
                break;
            }
            #[cfg(target_arch = "x86_64")]
            if SSE && i + 50 <= b.len() {
                // SAFETY: `SSE` is set only where the CPU has AVX2, BMI1 and BMI2, and 50 bytes
                // from `i` are in `b`.
                let j = unsafe { sse::decimal_window(b, i, last, out) };
                if j != i {
                    i = j;
                    continue;
                }
            }
            let start = i;
            // SAFETY: `i <= last` and `b[last]` is a blank.
            match unsafe { word::<true>(b, &mut i) } {
                // The word ended at a blank: step over it without testing it again.
                Some(v) => {
                    out.push(v);
                    i += 1;
                }
                None => {
                    while !is_blank(b[i]) {
                        i += 1;
                    }
                    slow_word(text, start, i, slow, out)?;
                }
            }
        }
    }
    // The last word (or the only one), with every read checked, after any leading blanks.
    while i < m && is_blank(b[i]) {
        i += 1;
    }
    if i < m {
        let start = i;
        match clinger_word(&b[..m], &mut i) {
            Some(v) => out.push(v),
            None => slow_word(text, start, m, slow, out)?,
        }
    }
    Ok(())
}

/// Number words a vector at a time, for the AVX2 copies of [`decimals_into`] and [`ints_into`]:
/// words the scalar loops take too (a decimal: an optional `-`, 1 to 15 digits, at most one dot,
/// a blank after; an index: 1 to 8 digits, a blank after), to bit for bit the same values (the
/// same significand and the same division), in fewer instructions (on the Linden body about 85
/// against 105 a decimal, 38 against 59 an index). A
/// decimal word: one mask of its digit bytes gives its parts (no loop per digit), two shuffles
/// close the dot's gap and right-align the digits, three multiply-adds combine them (as
/// simdjson and fast_float do). Index words: masks of digits and blanks for 32 bytes give every
/// word that ends there.
// The standard library's intrinsics: unsafe to call under the workspace's minimum Rust (1.85).
#[cfg(target_arch = "x86_64")]
#[allow(unused_unsafe)]
mod sse {
    use super::{Int, POW10};
    use std::arch::x86_64::*;

    /// `DOT_OUT[q]` closes the gap of a dot at byte `q`: bytes after it move down one (`q` = 16:
    /// no dot, nothing moves). The last byte is zeroed (past the window).
    static DOT_OUT: [[u8; 16]; 17] = {
        let mut t = [[0u8; 16]; 17];
        let mut q = 0;
        while q < 17 {
            let mut k = 0;
            while k < 16 {
                t[q][k] = if k < q {
                    k as u8
                } else if k < 15 {
                    k as u8 + 1
                } else {
                    0x80
                };
                k += 1;
            }
            q += 1;
        }
        t
    };

    /// Sixteen bytes from `n` are the shuffle that moves the first `n` bytes to the top and zeroes
    /// those below them (a shuffle index with the high bit set gives zero).
    static ALIGN: [u8; 32] = {
        let mut t = [0x80u8; 32];
        let mut k = 16;
        while k < 32 {
            t[k] = (k - 16) as u8;
            k += 1;
        }
        t
    };

    /// The decimal words that start at or after `b[i]` (a word's first byte) and end, at a blank
    /// at or before `b[last]`, within the 32 bytes from `i`: appended to `out` while each is a
    /// plain decimal of at most 16 bytes after its sign ([`plain`]); returns the next word's
    /// first byte, or the window's end when blanks end it, or the first word it could not read
    /// (`i` when that is the first). The words' bounds come from one blank mask for the window,
    /// so the next window's address waits on that mask alone and the parses of a window's words
    /// overlap in the CPU. (Word after word, each word's end found by its own parse, took 30 %
    /// fewer instructions and more time: the chain from one word's parse to the next word's
    /// address was the loop's critical path. docs/performance.md.)
    ///
    /// # Safety
    /// The CPU must have AVX2, BMI1 and BMI2, and `i + 50 <= b.len()`.
    #[inline]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    pub(super) unsafe fn decimal_window(b: &[u8], i: usize, last: usize, out: &mut Vec<f64>) -> usize {
        debug_assert!(i + 50 <= b.len());
        unsafe {
            // SAFETY: the 32 bytes from `i` are in `b` (the caller's bound).
            let v = _mm256_loadu_si256(b.as_ptr().add(i).cast());
            let blank = blanks(v);
            let word = !blank;
            // Bit k: byte k ends a word and byte k + 1 is a blank at or before `last`.
            let Some(room) = last.checked_sub(i + 1) else { return i };
            let ends = word & (blank >> 1) & !u32::MAX.checked_shl((room + 1).min(32) as u32).unwrap_or(0);
            if ends == 0 {
                return i;
            }
            let upto_last = (2u32 << (31 - ends.leading_zeros())).wrapping_sub(1);
            let (mut starts, mut ends) = (word & !(word << 1) & upto_last, ends);
            room_for_window(out, ends);
            let (len0, dst) = (out.len(), out.as_mut_ptr());
            let mut k = 0;
            while starts != 0 {
                let s = starts.trailing_zeros() as usize;
                let len = ends.trailing_zeros() as usize + 1 - s;
                // SAFETY: `s + 18 <= 50`: the bytes `plain` reads are in `b`.
                let Some(x) = plain(b.as_ptr().add(i + s), len) else {
                    // SAFETY: the `k` values after `len0` are written.
                    out.set_len(len0 + k);
                    return i + s;
                };
                // SAFETY: below the capacity reserved for the window's words (`k` counts them).
                dst.add(len0 + k).write(x);
                k += 1;
                starts &= starts - 1;
                ends &= ends - 1;
            }
            // SAFETY: as above.
            out.set_len(len0 + k);
            i + (word & !upto_last).trailing_zeros() as usize
        }
    }

    /// The plain decimal word of `len` bytes at `w` (a blank after it), read as the scalar
    /// [`super::word`] reads it: an optional `-` (a `+` is left to the scalar loop), 1 to 15
    /// digits with at most one dot, at most 16 bytes after the sign. `None` for any other word.
    ///
    /// # Safety
    /// The CPU must have AVX2, BMI1 and BMI2, and the 18 bytes from `w` must be readable.
    #[inline]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    unsafe fn plain(w: *const u8, len: usize) -> Option<f64> {
        unsafe {
            let neg = *w == b'-';
            let body = len - usize::from(neg);
            let p = w.add(usize::from(neg));
            let d = _mm_sub_epi8(_mm_loadu_si128(p.cast()), _mm_set1_epi8(b'0' as i8));
            let digit = _mm_movemask_epi8(_mm_cmpeq_epi8(_mm_min_epu8(d, _mm_set1_epi8(9)), d)) as u32;
            let int_len = (!digit).trailing_zeros() as usize;
            let (frac, dot) = if int_len == body {
                (0, 16)
            } else {
                // The rest: a dot, then digits up to the end of the word.
                let frac = body.wrapping_sub(int_len + 1);
                // (`int_len <= 16`, the sixteen bytes' mask: the byte read is one of the 18 from
                // `w`. A longer word fails the tests below.)
                if *p.add(int_len) != b'.' || (!(digit >> (int_len + 1))).trailing_zeros() as usize != frac {
                    return None;
                }
                (frac, int_len)
            };
            let n = int_len + frac;
            if body > 16 || n == 0 || n > 15 {
                return None;
            }
            let x = _mm_shuffle_epi8(d, _mm_loadu_si128(DOT_OUT.as_ptr().add(dot).cast()));
            let x = _mm_shuffle_epi8(x, _mm_loadu_si128(ALIGN.as_ptr().add(n).cast()));
            let x = _mm_maddubs_epi16(x, _mm_set1_epi16(0x010A));
            let x = _mm_madd_epi16(x, _mm_set1_epi32(0x0001_0064));
            let x = _mm_packus_epi32(x, x);
            let x = _mm_madd_epi16(x, _mm_set1_epi32(0x0001_2710));
            let r = _mm_cvtsi128_si64(x) as u64;
            let m = (r & 0xFFFF_FFFF) * 100_000_000 + (r >> 32);
            let v = (m as i64) as f64 / POW10[frac];
            Some(f64::from_bits(v.to_bits() | u64::from(neg) << 63))
        }
    }

    /// The integer words of `b` from `i` (a word's first byte) that end, at a blank, within the
    /// 32 bytes from `i` and before any byte that is neither a digit nor a blank, while each has
    /// 1 to 8 digits: appended to `out`; returns where the caller goes on (the next word's first
    /// byte, or the window's end), or `i` when the window starts with no such word (the caller
    /// then reads one word its own way). For a polygon's index list
    /// (`57 0 0  47 1 1`): a mask of digits and one of blanks per window, no loop per byte, and
    /// the window's words stored without `Vec::push`'s length updates.
    ///
    /// # Safety
    /// The CPU must have AVX2, BMI1 and BMI2, and `i + 40 <= b.len()`.
    #[inline]
    #[target_feature(enable = "avx2,bmi1,bmi2")]
    pub(super) unsafe fn int_words<T: Int>(b: &[u8], i: usize, out: &mut Vec<T>) -> usize {
        debug_assert!(i + 40 <= b.len());
        unsafe {
            // SAFETY: the 32 bytes from `i` are in `b` (the caller's bound).
            let v = _mm256_loadu_si256(b.as_ptr().add(i).cast());
            let d = _mm256_sub_epi8(v, _mm256_set1_epi8(b'0' as i8));
            let digit = _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_min_epu8(d, _mm256_set1_epi8(9)), d)) as u32;
            let blank = blanks(v);
            // Bit k: byte k is a word's last digit and byte k + 1 (in the window) a blank, before
            // the first byte that is neither (a sign, a letter: the scalar loop reads that word).
            let other = !(digit | blank);
            let ends = digit & (blank >> 1) & !u32::MAX.checked_shl(other.trailing_zeros()).unwrap_or(0);
            if ends == 0 {
                return i;
            }
            let last = 31 - ends.leading_zeros();
            // The bytes up to the last word's last digit: digits and blanks only.
            let upto_last = (2u32 << last).wrapping_sub(1);
            let mut starts = digit & !(digit << 1) & upto_last;
            room_for_window(out, starts);
            let (len0, dst) = (out.len(), out.as_mut_ptr());
            let mut k = 0;
            while starts != 0 {
                let s = starts.trailing_zeros() as usize;
                let len = (!(digit >> s)).trailing_zeros() as usize;
                // SAFETY: `s <= 30` and `i + 40 <= b.len()`: the eight bytes are in `b`.
                let x = u64::from_le_bytes(*b.as_ptr().add(i + s).cast::<[u8; 8]>()).wrapping_sub(0x3030_3030_3030_3030);
                // (No closure here: it would not inherit this function's target features, and
                // so not be inlined.)
                let t = if len <= 8 { T::narrow(super::digits_value(x, len) as i64) } else { None };
                let Some(t) = t else {
                    // SAFETY: the `k` values after `len0` are written.
                    out.set_len(len0 + k);
                    return i + s;
                };
                // SAFETY: below the capacity reserved for the window's words (`k` counts them).
                dst.add(len0 + k).write(t);
                k += 1;
                starts &= starts - 1;
            }
            // SAFETY: as above.
            out.set_len(len0 + k);
            // On at the next word (the first byte after the last word that is not a blank), or
            // past the window when blanks end it.
            i + (!blank & !upto_last).trailing_zeros() as usize
        }
    }

    /// Bit k set where byte k of `v` is a blank ([`super::is_blank`]'s five), found by their low
    /// four bits: the table holds each blank at its own low bits (and 0xFF elsewhere, which no
    /// byte with those low bits equals); a byte with the high bit set looks up zero, which it
    /// is not.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[inline]
    #[target_feature(enable = "avx2")]
    unsafe fn blanks(v: __m256i) -> u32 {
        unsafe {
            _mm256_movemask_epi8(_mm256_cmpeq_epi8(_mm256_shuffle_epi8(_mm256_loadu_si256(BLANK_AT_LOW_BITS.as_ptr().cast()), v), v)) as u32
        }
    }

    /// Room in `out` for a window's words (one bit of `words` each; at most 16 in 32 bytes),
    /// asked for only when less than 16 is left: a list sized by its `count` must not grow (a
    /// doubling copy) for room it will never use.
    #[inline(always)]
    fn room_for_window<T>(out: &mut Vec<T>, words: u32) {
        if out.capacity() - out.len() < 16 {
            out.reserve(words.count_ones() as usize);
        }
    }

    /// Each blank byte at the index of its low four bits, twice (one per 128-bit lane of a
    /// shuffle); 0xFF at the others.
    static BLANK_AT_LOW_BITS: [u8; 32] = {
        let mut t = [0xFFu8; 32];
        let mut k = 0;
        while k < 2 {
            t[16 * k] = b' ';
            t[16 * k + 9] = b'\t';
            t[16 * k + 10] = b'\n';
            t[16 * k + 12] = 0x0C;
            t[16 * k + 13] = b'\r';
            k += 1;
        }
        t
    };
}

/// The slow path of [`decimals_into`] and [`ints_into`]: the word `text[start..end]` through the
/// full parser, or its index and text when it is not a number.
#[cold]
fn slow_word<'t, T>(
    text: &'t str,
    start: usize,
    end: usize,
    parse: fn(&str) -> Option<T>,
    out: &mut Vec<T>,
) -> Result<(), (usize, &'t str)> {
    let t = text.get(start..end).unwrap_or("");
    out.push(parse(t).ok_or((out.len(), t))?);
    Ok(())
}

/// The integer type a list is read as: `i64` holds every integer [`parse_i64`] gives; `u32` (for
/// index lists: half the memory of `i64`, and the type the IR keeps them in) only those that fit.
pub trait Int: Copy + Send + Into<i64> {
    /// `v` as this type, when it fits.
    fn narrow(v: i64) -> Option<Self>;
}

impl Int for i64 {
    #[inline(always)]
    fn narrow(v: i64) -> Option<Self> {
        Some(v)
    }
}

impl Int for u32 {
    #[inline(always)]
    fn narrow(v: i64) -> Option<Self> {
        u32::try_from(v).ok()
    }
}

/// [`parse_i64`] into `T`: `None` for a word that is not an integer or does not fit.
fn parse_int<T: Int>(t: &str) -> Option<T> {
    parse_i64(t).and_then(T::narrow)
}

/// Integers as [`decimals_into`] reads decimals: a word of an optional sign and at most 18 digits
/// (no overflow) is accumulated as it is scanned; any other word goes to [`parse_i64`]. A word
/// that is an integer `T` cannot hold is refused like one that is not an integer.
pub fn ints_into<'t, T: Int>(text: &'t str, out: &mut Vec<T>) -> Result<(), (usize, &'t str)> {
    #[cfg(target_arch = "x86_64")]
    if crate::has_avx2() {
        // SAFETY: the CPU has the features, checked above.
        return unsafe { ints_into_avx2(text, out) };
    }
    ints_into_in::<T, false>(text, out)
}

/// [`ints_into`] with words read a window at a time ([`sse::int_words`]).
///
/// # Safety
/// The CPU must have AVX2, BMI1 and BMI2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,bmi1,bmi2")]
unsafe fn ints_into_avx2<'t, T: Int>(text: &'t str, out: &mut Vec<T>) -> Result<(), (usize, &'t str)> {
    ints_into_in::<T, true>(text, out)
}

/// The list loop of [`ints_into`]; `SSE`: the windows of [`sse::int_words`] first (only in
/// [`ints_into_avx2`], whose caller has checked the CPU).
#[inline(always)]
fn ints_into_in<'t, T: Int, const SSE: bool>(text: &'t str, out: &mut Vec<T>) -> Result<(), (usize, &'t str)> {
    let b = text.as_bytes();
    let n = b.len();
    let mut i = 0;
    loop {
        while i < n && is_blank(b[i]) {
            i += 1;
        }
        if i >= n {
            return Ok(());
        }
        #[cfg(target_arch = "x86_64")]
        if SSE && i + 40 <= n {
            // SAFETY: `SSE` is set only where the CPU has AVX2, and 40 bytes from `i` are in `b`.
            let j = unsafe { sse::int_words(b, i, out) };
            if j != i {
                i = j;
                continue;
            }
        }
        let start = i;
        // Most index words are 1 to 8 digits and a blank: all eight bytes at once, without a
        // branch per digit (the loop below mispredicts its exit on every change of length).
        if let Some((len, v)) = short_digits(&b[i..]) {
            if b.get(i + len).is_some_and(|&c| is_blank(c)) {
                if let Some(x) = T::narrow(v as i64) {
                    out.push(x);
                    i += len + 1;
                    if len == 1 {
                        i = one_digit_words(b, i, out);
                    }
                    continue;
                }
            }
        }
        let neg = b[i] == b'-';
        if neg || b[i] == b'+' {
            i += 1;
        }
        let digits_start = i;
        let mut v = 0i64;
        while i < n {
            let d = b[i].wrapping_sub(b'0');
            if d >= 10 {
                break;
            }
            v = v.wrapping_mul(10).wrapping_add(i64::from(d));
            i += 1;
        }
        let fast = (i == n || is_blank(b[i])) && (1..=18).contains(&(i - digits_start));
        match fast.then(|| T::narrow(if neg { -v } else { v })).flatten() {
            Some(x) => out.push(x),
            None => {
                while i < n && !is_blank(b[i]) {
                    i += 1;
                }
                slow_word(text, start, i, parse_int::<T>, out)?;
            }
        }
    }
}

/// After a one-digit word and a space: the words of the run of one-digit words each followed by
/// one space that starts at `b[i]` (`3 3 3 3 `: a polylist's `<vcount>` of triangles), four to an
/// eight-byte load, appended to `out`; returns where the run stopped (at once when `b[i..]` does
/// not start with four such words). A word a load cannot vouch for is left to the caller's
/// loop. The 11,688 counts of the Linden body took 50 instructions each one at a time.
#[inline]
fn one_digit_words<T: Int>(b: &[u8], mut i: usize, out: &mut Vec<T>) -> usize {
    while let Some(w) = b.get(i..).and_then(|r| r.first_chunk::<8>()) {
        let w = u64::from_le_bytes(*w);
        // Spaces at the odd bytes; at the even ones digits (the test of `short_digits`, per
        // 16-bit lane: a lane's borrow only reaches lanes above one that fails).
        let x = (w & 0x00FF_00FF_00FF_00FF).wrapping_sub(0x0030_0030_0030_0030);
        let digits = (x | x.wrapping_add(0x0076_0076_0076_0076)) & 0x0080_0080_0080_0080 == 0;
        if w & 0xFF00_FF00_FF00_FF00 != 0x2000_2000_2000_2000 || !digits {
            break;
        }
        for k in 0..4 {
            // One digit: every `T` holds it.
            if let Some(d) = T::narrow(((x >> (16 * k)) & 0xF) as i64) {
                out.push(d);
            }
        }
        i += 8;
    }
    i
}

/// The run of ASCII digits at `b[*i..]` (it may be empty), `*i` left after it, and its value
/// when it has at most 19 digits (a longer run's value has wrapped: callers refuse it by its
/// length). Up to seven digits are read eight bytes at a time ([`short_digits`]); a longer run,
/// or one in the last seven bytes of `b`, a digit at a time. For scanners of integer fields (OBJ
/// face indices, JSON vertex numbers).
#[inline(always)]
pub fn digit_run(b: &[u8], i: &mut usize) -> (usize, u64) {
    if let Some((len, v)) = b.get(*i..).and_then(short_digits) {
        if len < 8 {
            *i += len;
            return (len, v);
        }
    }
    let (start, mut v) = (*i, 0u64);
    while let Some(d) = b.get(*i).map(|c| c.wrapping_sub(b'0')).filter(|&d| d < 10) {
        v = v.wrapping_mul(10).wrapping_add(u64::from(d));
        *i += 1;
    }
    (*i - start, v)
}

/// The leading run of ASCII digits in the first eight bytes of `b`, when it is not empty: its
/// length (8 when all eight are digits: the caller checks what follows) and value, found eight
/// bytes at a time (a mask of the bytes that are not digits, and the digits combined in three
/// multiplications). `None` also when `b` is shorter than eight bytes.
#[inline(always)]
pub fn short_digits(b: &[u8]) -> Option<(usize, u64)> {
    let w = *b.first_chunk::<8>()?;
    // Bytes in reading order from the lowest. A byte below '0' borrows from the bytes above it
    // and one past 0x89 carries into them: both only change bytes past the first non-digit.
    let x = u64::from_le_bytes(w).wrapping_sub(0x3030_3030_3030_3030);
    let not_digit = (x.wrapping_add(0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080;
    let len = (not_digit.trailing_zeros() / 8) as usize;
    if len == 0 {
        return None;
    }
    Some((len, digits_value(x, len)))
}

/// The value of the `len` (1 to 8) digits in the low bytes of `x`, each already less `'0'`,
/// the first in the lowest byte; the bytes above them are ignored.
#[inline(always)]
fn digits_value(x: u64, len: usize) -> u64 {
    debug_assert!((1..=8).contains(&len));
    if len <= 4 {
        // Most index words are one to four digits: the same steps in 32 bits, pairs then fours.
        let d = (x as u32) << (8 * (4 - len));
        let d = d.wrapping_mul(10).wrapping_add(d >> 8);
        return u64::from((d & 0xFF) * 100 + ((d >> 16) & 0xFF));
    }
    // The digits moved to the top, zeros (leading zeros) below them; then pairs, fours, eights.
    let d = x << (8 * (8 - len));
    let d = d.wrapping_mul(10).wrapping_add(d >> 8);
    (d & 0x0000_00FF_0000_00FF)
        .wrapping_mul(100 + (1_000_000 << 32))
        .wrapping_add(((d >> 16) & 0x0000_00FF_0000_00FF).wrapping_mul(1 + (10_000 << 32)))
        >> 32
}

/// An integer word (optional sign, digits) as `str::parse::<i64>` reads it: a plain digit loop
/// (what `str::parse` does after its sign and radix checks) with overflow caught, so that the
/// common case costs a few instructions per digit.
pub fn parse_i64(t: &str) -> Option<i64> {
    let (neg, digits) = match t.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    if digits.is_empty() || digits.len() > 18 {
        return t.parse().ok();
    }
    let mut v: i64 = 0;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (d - b'0') as i64;
    }
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::{decimals_into, digit_run, fast_decimal, ints_into};

    /// `digit_run` gives the run's length, the cursor after it and (up to 19 digits) its value,
    /// wherever the run sits: short or long, at the end of the text or before other bytes.
    #[test]
    fn digit_runs_equal_the_plain_reading() {
        let mut next = crate::testing::xorshift(0x3c6e_f372_fe94_f82b);
        for _ in 0..20_000 {
            let x = next();
            let digits: String = (0..x % 23).map(|k| char::from(b'0' + ((x >> (k % 13 * 4)) % 10) as u8)).collect();
            // Short tails leave fewer than eight bytes (the byte loop); long ones take the
            // eight-byte step whatever the run's length.
            let tail = ["", " ", "/", "a", "\n7", " 1 2 3 4 5", "/9/9/9/9"][(x >> 58) as usize % 7];
            let text = format!("x{digits}{tail}");
            let mut i = 1;
            let (len, v) = digit_run(text.as_bytes(), &mut i);
            assert_eq!((len, i), (digits.len(), 1 + digits.len()), "{text:?}");
            if len <= 19 {
                assert_eq!(v, digits.parse::<u64>().unwrap_or(0), "{text:?}");
            }
        }
    }

    #[test]
    fn equals_str_parse_bit_for_bit_and_refuses_what_it_refuses() {
        for t in [
            "0",
            "-0",
            "+1.5",
            "-3.2411",
            "0.000000000000000000001",
            "123456789012345",
            ".5",
            "5.",
            "1e5",
            "1234567890123456789",
            "0.1000000000000000055511151231257827",
            "2.2250738585072011e-308",
            "1e400",
            "inf",
        ] {
            assert_eq!(fast_decimal(t).map(f64::to_bits), Some(t.parse::<f64>().unwrap().to_bits()), "{t}");
        }
        for t in ["", "-", ".", "1.2.3", "1,5", "0x10", "1 2"] {
            assert!(t.parse::<f64>().is_err(), "{t}");
            assert_eq!(fast_decimal(t), None, "{t}");
        }
        assert!(fast_decimal("nan").is_some_and(f64::is_nan));
    }

    /// The shapes at the edges of the bounded scan: blanks before, after and only; one word; the
    /// last word plain or not; a word that is no number before and at the end.
    #[test]
    fn lists_at_the_edges_of_the_bounded_scan() {
        type Want = Result<&'static [f64], (usize, &'static str)>;
        let cases: [(&str, Want); 14] = [
            ("", Ok(&[])),
            ("  \n\t ", Ok(&[])),
            ("1", Ok(&[1.0])),
            ("  -1.5", Ok(&[-1.5])),
            ("2.25 \n", Ok(&[2.25])),
            ("1 2", Ok(&[1.0, 2.0])),
            ("1  2\r\n", Ok(&[1.0, 2.0])),
            (" 1e3 2", Ok(&[1000.0, 2.0])),
            ("1 2e-1", Ok(&[1.0, 0.2])),
            ("0.5 1234567890123456789", Ok(&[0.5, 1234567890123456789.0])),
            ("1 x 3", Err((1, "x"))),
            ("1 2 3.", Ok(&[1.0, 2.0, 3.0])),
            ("1 2 -", Err((2, "-"))),
            ("1.2.3 4", Err((0, "1.2.3"))),
        ];
        for (text, want) in cases {
            let mut got = Vec::new();
            assert_eq!(decimals_into(text, &mut got, fast_decimal).map(|()| got), want.map(<[f64]>::to_vec), "{text:?}");
        }
    }

    /// Integer lists through the 32-byte windows (`sse::int_words`) and the scalar loop: words
    /// of 1 to 10 digits (past the window's eight, and past what `u32` holds), leading zeros,
    /// signs and words that are not integers, between runs of each blank, so that windows start
    /// and end at every place in a word; lists of every length around the 40 bytes a window
    /// needs. Each read as `u32` and `i64` by `ints_into` (the AVX2 copy where the machine has
    /// it) and the scalar loop, against splitting and `str::parse`.
    #[test]
    fn integer_lists_through_the_windows() {
        let shapes = [
            "7",
            "0",
            "42",
            "905",
            "1234",
            "3",
            "61",
            "00017",
            "123456",
            "9999999",
            "12345678",
            "123456789",
            "4294967295",
            "4294967296",
            "-3",
            "+8",
            "-0",
            "x",
            "3x",
            "1.5",
        ];
        let blanks = [" ", " ", " ", "  ", "     ", "\n", "\t", "\r\n", "\x0c"];
        let mut next = crate::testing::xorshift(0x01d5_7a11_e5e5);
        let mut long = 0;
        for _ in 0..30_000 {
            let x = next();
            let mut t = String::from(if x & 1 == 0 { "" } else { " " });
            for _ in 0..(x >> 1) % 24 {
                let r = next();
                // Mostly the short plain words of index lists, now and then any shape.
                let shape = if r % 8 == 0 { (r >> 3) as usize % shapes.len() } else { (r >> 3) as usize % 7 };
                t.push_str(shapes[shape]);
                t.push_str(blanks[(r >> 16) as usize % blanks.len()]);
            }
            if x >> 60 == 0 {
                t.pop();
            }
            long += usize::from(t.len() >= 40);
            let split: Vec<&str> = t.split_ascii_whitespace().collect();
            // An index list reads integers as `i64` and refuses those `u32` cannot hold ("-0" is 0).
            let want: Result<Vec<u32>, (usize, &str)> =
                split.iter().enumerate().map(|(k, w)| w.parse::<i64>().ok().and_then(|v| u32::try_from(v).ok()).ok_or((k, *w))).collect();
            let (mut a, mut b) = (Vec::<u32>::new(), Vec::<u32>::new());
            assert_eq!(ints_into(&t, &mut a).map(|()| a), want, "{t:?}");
            assert_eq!(super::ints_into_in::<u32, false>(&t, &mut b).map(|()| b), want, "{t:?}");
            let want: Result<Vec<i64>, (usize, &str)> =
                split.iter().enumerate().map(|(k, w)| w.parse::<i64>().map_err(|_| (k, *w))).collect();
            let (mut a, mut b) = (Vec::<i64>::new(), Vec::<i64>::new());
            assert_eq!(ints_into(&t, &mut a).map(|()| a), want, "{t:?}");
            assert_eq!(super::ints_into_in::<i64, false>(&t, &mut b).map(|()| b), want, "{t:?}");
        }
        // Most lists are long enough for windows.
        assert!(long > 15_000, "{long}");
    }

    /// Every shape of word the vector reader (`sse::decimal_window`, `sse::plain`) takes or
    /// hands back: no sign, `-` or `+`; 0 to 16 digits before a dot and 0 to 16 after one (or no
    /// dot: past the sixteen bytes a word may have); each blank after it and bytes that are not
    /// one; at the start of a window and after one or two other words in it; in lists long
    /// enough for windows and too short for them. `decimals_into` (the AVX2 copy where the
    /// machine has it) and the scalar loop both give what splitting and `str::parse` give, bit
    /// for bit.
    #[test]
    fn decimal_words_at_the_edges_of_the_sixteen_byte_window() {
        let runs = ["9081726354453627189", "0000000000000000451", "1000000000000000000"];
        let mut cases = 0;
        for sign in ["", "-", "+"] {
            for run in runs {
                for int in 0..=16 {
                    for frac in (0..=17usize).map(|f| f.checked_sub(1)) {
                        let word = match frac {
                            None => format!("{sign}{}", &run[..int]),
                            Some(f) => format!("{sign}{}.{}", &run[..int], &run[19 - f..]),
                        };
                        for end in [" ", "\t", "\n", "\r", "\x0c", "x", ".", "e5", ",", "-1"] {
                            for (head, tail) in [
                                ("", ""),
                                ("", " 1"),
                                ("", " 1 2 3 4 5 6 7 8 9 10 11 12"),
                                ("", " 0.25 -1.5 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19"),
                                ("7.5 ", " 0.25 -1.5 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19"),
                                ("-0.125  3 ", " 0.25 -1.5 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19"),
                                ("-0.125  3 ", " 1"),
                            ] {
                                let text = format!("{head}{word}{end}{tail}");
                                let want: Result<Vec<u64>, (usize, &str)> = text
                                    .split_ascii_whitespace()
                                    .enumerate()
                                    .map(|(k, t)| t.parse::<f64>().map(f64::to_bits).map_err(|_| (k, t)))
                                    .collect();
                                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<u64>>();
                                let (mut simd, mut scalar) = (Vec::new(), Vec::new());
                                let got = decimals_into(&text, &mut simd, fast_decimal).map(|()| bits(&simd));
                                assert_eq!(got, want, "{text:?}");
                                let got = super::decimals_into_in::<false>(&text, &mut scalar, fast_decimal).map(|()| bits(&scalar));
                                assert_eq!(got, want, "{text:?}");
                                cases += 1;
                            }
                        }
                    }
                }
            }
        }
        assert_eq!(cases, 3 * 3 * 17 * 18 * 10 * 7);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]
        /// Any short text made of the characters numbers and their look-alikes are written with:
        /// accepted and refused alike, and the same value bit for bit.
        #[test]
        fn agrees_with_str_parse_on_number_like_text(t in "[-+0-9.eEinfatyINFATY_ x]{0,12}") {
            let ours = fast_decimal(&t);
            let std = t.parse::<f64>().ok();
            proptest::prop_assert_eq!(ours.map(|v| (v.is_nan(), if v.is_nan() { 0 } else { v.to_bits() })), std.map(|v| (v.is_nan(), if v.is_nan() { 0 } else { v.to_bits() })), "{:?}", t);
        }

        /// The list scanners: what splitting on ASCII whitespace and `str::parse` give, the first
        /// word that is not a number named by its index.
        #[test]
        fn lists_agree_with_split_and_str_parse(t in "[-+0-9. \t\nxe]{0,40}") {
            let words: Vec<&str> = t.split_ascii_whitespace().collect();
            let mut got = Vec::new();
            let want: Result<Vec<u64>, (usize, &str)> =
                words.iter().enumerate().map(|(k, w)| w.parse::<f64>().map(f64::to_bits).map_err(|_| (k, *w))).collect();
            proptest::prop_assert_eq!(decimals_into(&t, &mut got, fast_decimal).map(|_| got.iter().map(|v| v.to_bits()).collect()), want);
            let mut got: Vec<i64> = Vec::new();
            let want: Result<Vec<i64>, (usize, &str)> = words.iter().enumerate().map(|(k, w)| w.parse::<i64>().map_err(|_| (k, *w))).collect();
            proptest::prop_assert_eq!(ints_into(&t, &mut got).map(|_| got), want);
        }

        /// Lists that are all numbers, so that every value is compared (a list with a word that
        /// is not one compares only the error): integers of every length below 2^63 and plain
        /// decimals, between runs of every blank.
        #[test]
        fn number_lists_read_every_value(words in proptest::collection::vec((0u64..u64::MAX, 0u32..20, 0usize..9, 0usize..4, "[ \t\n\r]{1,3}"), 0..40)) {
            let mut ints = String::new();
            let mut decimals = String::new();
            let mut want_ints = Vec::new();
            let mut want_decimals = Vec::new();
            for (x, digits, frac, sign, blank) in words {
                // Up to 18 digits, or any integer below 2^63 (19 digits: the slow path).
                let v = if digits > 18 { x >> 1 } else { (x >> 1) % 10u64.pow(digits) };
                let sign = ["", "-", "+", ""][sign];
                ints.push_str(&format!("{sign}{v}{blank}"));
                want_ints.push(format!("{sign}{v}").parse::<i64>().unwrap());
                let d = if frac == 0 { format!("{sign}{v}") } else { format!("{sign}{}.{:0frac$}", v / 1000, v % 10u64.pow(frac as u32)) };
                decimals.push_str(&d);
                decimals.push_str(&blank);
                want_decimals.push(d.parse::<f64>().unwrap().to_bits());
            }
            let mut got: Vec<i64> = Vec::new();
            proptest::prop_assert_eq!(ints_into(&ints, &mut got).map(|_| got), Ok(want_ints), "{:?}", ints);
            let mut got = Vec::new();
            proptest::prop_assert_eq!(decimals_into(&decimals, &mut got, fast_decimal).map(|_| got.iter().map(|v| v.to_bits()).collect::<Vec<_>>()), Ok(want_decimals), "{:?}", decimals);
        }

        /// Runs of one-digit words (polygon counts: `3 3 3 `), read four at a time, broken by
        /// what may follow or interrupt them: longer and signed words, other blanks, a word that
        /// is not a number (`/` and `:` are the bytes either side of the digits), the end of the
        /// text. Read as `u32` and `i64` alike.
        #[test]
        fn runs_of_one_digit_words(words in proptest::collection::vec(("[0-9]|[0-9]|[0-9]|[0-9]|[0-9]|[0-9][0-9]|-[0-9]|\\+[0-9]|[/:x]|[0-9]x", " | | | | | |  |\t|\n"), 0..60), last in "|[0-9]| ") {
            let mut t: String = words.iter().map(|(w, b)| format!("{w}{b}")).collect();
            t.push_str(&last);
            let split: Vec<&str> = t.split_ascii_whitespace().collect();
            let mut got: Vec<u32> = Vec::new();
            // An index list reads integers as `i64` and refuses those `u32` cannot hold ("-0" is 0).
            let want: Result<Vec<u32>, (usize, &str)> =
                split.iter().enumerate().map(|(k, w)| w.parse::<i64>().ok().and_then(|v| u32::try_from(v).ok()).ok_or((k, *w))).collect();
            proptest::prop_assert_eq!(ints_into(&t, &mut got).map(|_| got), want, "{:?}", t);
            let mut got: Vec<i64> = Vec::new();
            let want: Result<Vec<i64>, (usize, &str)> = split.iter().enumerate().map(|(k, w)| w.parse::<i64>().map_err(|_| (k, *w))).collect();
            proptest::prop_assert_eq!(ints_into(&t, &mut got).map(|_| got), want, "{:?}", t);
        }

        #[test]
        fn agrees_with_str_parse_on_decimals(t in "[-+]?[0-9]{0,20}(\\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?") {
            proptest::prop_assert_eq!(fast_decimal(&t).map(f64::to_bits), t.parse::<f64>().ok().map(f64::to_bits), "{:?}", t);
        }
    }
}
