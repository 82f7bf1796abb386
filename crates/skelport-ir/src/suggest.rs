//! "Did you mean …?": the known name closest to one the user typed (a format, a map, a bone).

/// The candidate closest to `typed`, when one is close enough to be a slip of the keyboard: at
/// most one edit for names of up to four characters, else up to a third of the name's length
/// (Damerau-Levenshtein, so a swapped pair is one edit), compared without case. An exact match
/// without case counts too (`Hips` for `hips`). Ties go to the first candidate.
pub fn closest<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let t = typed.to_lowercase();
    let limit = (t.chars().count() / 3).max(1);
    let mut best: Option<(usize, &'a str)> = None;
    for c in candidates {
        let d = strsim::damerau_levenshtein(&t, &c.to_lowercase());
        if d <= limit && best.is_none_or(|(bd, _)| d < bd) {
            best = Some((d, c));
        }
    }
    best.map(|(_, c)| c)
}

/// `" (did you mean 'x'?)"`, or nothing when no candidate is close ([`closest`]).
pub fn did_you_mean<'a>(typed: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    closest(typed, candidates).map(|c| format!(" (did you mean '{c}'?)")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slips_are_caught_and_strangers_are_not() {
        let formats = ["mpfb", "gltf", "glb", "anvil", "dae", "sl", "vrm", "g4tf", "g4b", "ir-json"];
        assert_eq!(closest("glft", formats), Some("gltf"));
        assert_eq!(closest("s1", formats), Some("sl"));
        assert_eq!(closest("GLB", formats), Some("glb"));
        assert_eq!(closest("irjson", formats), Some("ir-json"));
        assert_eq!(closest("fbx", formats), None);
        assert_eq!(closest("Hipz", ["Spine", "Hips", "Head"]), Some("Hips"));
        assert_eq!(closest("Leftfoot", ["LeftFoot", "RightFoot"]), Some("LeftFoot"));
        assert_eq!(closest("x", ["Spine", "Hips"]), None);
        assert_eq!(did_you_mean("glft", formats), " (did you mean 'gltf'?)");
        assert_eq!(did_you_mean("zzzz", formats), "");
    }
}
