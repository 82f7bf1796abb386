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

#[cfg(test)]
mod tests {
    use super::*;

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
