//! The `skelport` command line's flags (clap definitions), apart from the binary so that xtask
//! writes the man page from the same definition. Not a library API: the library is `skelport`.

pub mod flags;

/// Text for a terminal: every control character but line feed and tab (ESC, carriage return,
/// backspace, C1 controls, DEL) written as a Rust escape (`\u{1b}`), so that a bone or zip entry
/// name cannot move the cursor, recolour or rewrite what the terminal shows. Every line the CLI
/// prints for people goes through it; JSON output (`--json`) is printed exact (its strings are
/// escaped by JSON itself).
pub fn terminal_text(s: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| c.is_control() && c != '\n' && c != '\t';
    // Bytes that can begin a control character: C0 and DEL, and 0xC2, which leads the C1
    // controls (U+0080-U+009F) and U+00A0-U+00BF alike (the character test tells them apart).
    // 64 bytes a step, which the compiler vectorises: the character test alone took 10 ms of a
    // 65,535-bone `inspect` (docs/performance.md).
    let suspect = |b: u8| (b < 0x20 && b != b'\n' && b != b'\t') | (b == 0x7f) | (b == 0xc2);
    if !s.as_bytes().chunks(64).any(|c| c.iter().fold(false, |a, &b| a | suspect(b))) || !s.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        if unsafe_char(c) {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::terminal_text;

    #[test]
    fn control_characters_are_escaped_for_the_terminal() {
        assert_eq!(terminal_text("Hips\tand\nSpine"), "Hips\tand\nSpine");
        assert_eq!(terminal_text("a\u{1b}[31mred\r\u{9b}\u{7f}"), "a\\u{1b}[31mred\\u{d}\\u{9b}\\u{7f}");
        // Every character of the first 0x800 code points and a few others, alone and after 70
        // plain bytes (past the first 64-byte step): escaped exactly when it is a control other
        // than line feed and tab, and the text borrowed when nothing is.
        for c in (0u32..0x800).chain([0x2028, 0xfeff, 0x1_f600]).filter_map(char::from_u32) {
            for prefix in ["", &"a".repeat(70)] {
                let text = format!("{prefix}{c}x");
                let want = c.is_control() && c != '\n' && c != '\t';
                let got = terminal_text(&text);
                assert_eq!(matches!(got, std::borrow::Cow::Owned(_)), want, "{c:?}");
                let shown = if want { c.escape_unicode().to_string() } else { c.to_string() };
                assert_eq!(got, format!("{prefix}{shown}x"), "{c:?}");
            }
        }
    }
}
