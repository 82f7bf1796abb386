//! Number text shared by the text readers (OBJ, Collada): the fast path for plain decimals.

/// Powers of ten exactly representable as f64.
const POW10: [f64; 23] =
    [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22];

/// A plain decimal (`-3.2411`, what mesh exporters write) by Clinger's fast path, or `None` when
/// the path does not apply (exponents, more than 15 significant digits, more than 22 decimals,
/// `inf`, anything else): then the caller uses `str::parse`. The digits as an integer below 2^53
/// and a power of ten up to 10^22 are both exact, so one IEEE division gives the correctly
/// rounded value, bit for bit what `str::parse` gives. Hand-written because it is the hot loop of
/// the OBJ and Collada readers (about 3× faster than `str::parse` on base.obj) and small enough to
/// prove; the callers' tests compare it with `str::parse` on hundreds of thousands of inputs.
pub fn fast_decimal(t: &str) -> Option<f64> {
    let (neg, digits) = match t.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    // m: the digits; significant: digits from the first non-zero; frac: digits after the dot.
    let (mut m, mut significant, mut frac, mut any, mut seen_dot) = (0u64, 0u32, 0usize, false, false);
    for &c in digits {
        match c {
            b'0'..=b'9' => {
                m = m * 10 + u64::from(c - b'0');
                significant += u32::from(m != 0);
                frac += usize::from(seen_dot);
                any = true;
                // 15 significant digits stay below 2^53.
                if significant > 15 {
                    return None;
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => return None,
        }
    }
    if !any || frac >= POW10.len() {
        return None;
    }
    let v = m as f64 / POW10[frac];
    Some(if neg { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::fast_decimal;

    #[test]
    fn equals_str_parse_where_it_applies_and_declines_elsewhere() {
        for t in ["0", "-0", "+1.5", "-3.2411", "0.000000000000000000001", "123456789012345", ".5", "5."] {
            assert_eq!(fast_decimal(t).map(f64::to_bits), Some(t.parse::<f64>().unwrap().to_bits()), "{t}");
        }
        for t in ["", "-", ".", "1e5", "1.2.3", "inf", "nan", "1234567890123456", "0.00000000000000000000001", "1,5"] {
            assert_eq!(fast_decimal(t), None, "{t}");
        }
    }
}
