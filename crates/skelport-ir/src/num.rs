//! Number text shared by the text readers (OBJ, Collada).

/// A decimal number's text (`-3.2411`, `1e-5`, what mesh exporters write) as the correctly rounded
/// f64, bit for bit what `str::parse` gives, or `None` when it is not a number. This is the hot
/// loop of the OBJ and Collada readers: fast-float2 (Eisel-Lemire, maintained by the lexical
/// author) is faster than `str::parse` (docs/performance.md) and has no slow-path cliff for
/// exponents or long digit strings.
pub fn fast_decimal(t: &str) -> Option<f64> {
    fast_float2::parse(t).ok()
}

#[cfg(test)]
mod tests {
    use super::fast_decimal;

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

        #[test]
        fn agrees_with_str_parse_on_decimals(t in "[-+]?[0-9]{0,20}(\\.[0-9]{0,20})?([eE][-+]?[0-9]{1,3})?") {
            proptest::prop_assert_eq!(fast_decimal(&t).map(f64::to_bits), t.parse::<f64>().ok().map(f64::to_bits), "{:?}", t);
        }
    }
}
