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
    if !s.chars().any(unsafe_char) {
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
    }
}
