//! Checks on a parsed tree that the tokenizer does not make: what the XML 1.0 rules and the
//! AnvilToolkit syntax (seed 002, ANVIL-NOTES.md) make wrong, as opposed to merely unknown.
//! Unknown elements, value types, enum values and attributes are still kept verbatim; only values
//! of the types the seed defines are checked against those types.
//!
//! Kept apart from the tokenizer ([`crate::xml`]) and the readers so each stays small: this is one
//! linear pass over the element list after parsing.

use crate::error::{AnvilError, Result};
use crate::model::{parse_number, Form};
use crate::parse::vector_kind;
use crate::text::{line_col, unescape, ByteForm, Encoding};
use crate::xml::{Source, NONE};
use std::borrow::Cow;

/// Deepest element nesting accepted. AnvilToolkit skeletons nest about eight levels (root, Bones
/// list, bone, modifier list, modifier, field, link, value); bones are a flat list joined by links,
/// so this is never reached by a real file however many bones it has (docs/limits.md).
pub const MAX_DEPTH: usize = 256;

/// Check the decoded text (`bytes` is how it was stored) before it is parsed: the encoding
/// declaration against the bytes, and characters XML forbids.
pub fn check_text(text: &str, bytes: ByteForm, file: &str) -> Result<()> {
    let at = |offset: usize, message: String| {
        let (line, column) = line_col(text, offset);
        AnvilError::Structure { file: file.to_string(), line, column, message }
    };
    // XML 1.0 §2.2: of the C0 controls only tab, line feed and carriage return are characters.
    if let Some(i) = first_control(text.as_bytes()) {
        return Err(at(
            i,
            format!(
                "control character U+{:04X} is not allowed in XML: the file is damaged (a failed copy or a UTF-16 file read as UTF-8); export it from AnvilToolkit",
                text.as_bytes()[i]
            ),
        ));
    }
    // The declaration is at the start; 1 KiB, cut back to a character boundary (found by fuzzing).
    let mut cut = text.len().min(1024);
    while !text.is_char_boundary(cut) {
        cut -= 1;
    }
    let head = &text[..cut];
    if let Some(d) = head.trim_start().starts_with("<?xml").then(|| head.find("<?xml")).flatten() {
        let decl = &head[d..head[d..].find("?>").map(|e| d + e).unwrap_or(head.len())];
        if let Some(label) = declared_encoding(decl) {
            let label = label.to_ascii_lowercase();
            let says16 = label.starts_with("utf-16") || label == "unicode";
            // .NET (AnvilToolkit) refuses a UTF-16 declaration on bytes without a UTF-16 BOM, and
            // XML 1.0 §4.3.3 requires UTF-16 text to start with a byte-order mark.
            if says16 && bytes.encoding == Encoding::Utf8 {
                return Err(at(
                    d,
                    format!("the declaration says encoding=\"{label}\" but the file is UTF-8; change it to encoding=\"utf-8\" or save the file as UTF-16 with a byte-order mark"),
                ));
            }
            if label == "utf-8" && bytes.encoding != Encoding::Utf8 && !bytes.bom {
                return Err(at(
                    d,
                    "the file is UTF-16 without a byte-order mark but its declaration says encoding=\"utf-8\"; save it as UTF-8, or as UTF-16 with a BOM and encoding=\"utf-16\"".into(),
                ));
            }
        }
    }
    Ok(())
}

/// Where the first C0 control character other than tab, line feed and carriage return is.
///
/// Blocks of 64 bytes are tested without branches (the compiler turns the test into vector
/// compares), and only a block that has one is searched byte by byte: a byte-at-a-time search
/// was a visible part of reading a big file (docs/performance.md, "Measurements behind the code").
pub(crate) fn first_control(b: &[u8]) -> Option<usize> {
    let bad = |x: u8| (x < 0x20) & (x != b'\t') & (x != b'\n') & (x != b'\r');
    let mut blocks = b.chunks_exact(64);
    for (k, block) in (&mut blocks).enumerate() {
        if block.iter().fold(false, |acc, &x| acc | bad(x)) {
            return block.iter().position(|&x| bad(x)).map(|p| k * 64 + p);
        }
    }
    let done = b.len() - blocks.remainder().len();
    blocks.remainder().iter().position(|&x| bad(x)).map(|p| done + p)
}

/// Check a parsed file: external DTDs, nesting depth and the values of the types the format
/// defines.
pub fn check(src: &Source, form: Form, file: &str) -> Result<()> {
    check_prolog(src, file)?;
    let at = |offset: usize, message: String| {
        let (line, column) = line_col(&src.text, offset);
        AnvilError::Structure { file: file.to_string(), line, column, message }
    };
    // Depth: nodes are in document order, so a parent's depth is known before its children's.
    let mut depth = vec![0u16; src.nodes.len()];
    for i in 0..src.nodes.len() {
        let p = src.nodes[i].parent;
        let d = if p == NONE { 1 } else { depth[p as usize] as usize + 1 };
        if d > MAX_DEPTH {
            return Err(at(
                src.nodes[i].start as usize,
                format!("elements nested more than {MAX_DEPTH} deep: an AnvilToolkit skeleton nests about 8 deep, so the file is damaged or not a skeleton; remove the extra elements or export it from AnvilToolkit again"),
            ));
        }
        depth[i] = d as u16;
    }
    for n in 0..src.nodes.len() as u32 {
        check_value(src, n, form).map_err(|m| at(src.node(n).start as usize, m))?;
    }
    Ok(())
}

/// An external DTD in the prolog is an error: skelport never loads one.
pub(crate) fn check_prolog(src: &Source, file: &str) -> Result<()> {
    let prolog = src.prolog();
    if let Some(d) = prolog.find("<!DOCTYPE").or_else(|| prolog.find("<!doctype")) {
        let head = &prolog[d..prolog[d..].find(['[', '>']).map(|e| d + e).unwrap_or(prolog.len())];
        if head.split_ascii_whitespace().any(|w| w == "SYSTEM" || w == "PUBLIC") {
            let (line, column) = line_col(&src.text, d);
            return Err(AnvilError::Structure {
                file: file.to_string(),
                line,
                column,
                message: "the DOCTYPE names an external DTD, which skelport never loads (it could read local files or the network); delete the <!DOCTYPE ...> line; AnvilToolkit does not write one".into(),
            });
        }
    }
    Ok(())
}

/// The `encoding="…"` pseudo-attribute of an XML declaration.
fn declared_encoding(decl: &str) -> Option<&str> {
    let k = decl.find("encoding")?;
    let rest = decl[k + 8..].trim_start().strip_prefix('=')?.trim_start();
    let q = rest.chars().next().filter(|c| *c == '"' || *c == '\'')?;
    let v = &rest[1..];
    Some(&v[..v.find(q)?])
}

/// A leaf's text with references resolved and surrounding blanks removed.
fn leaf(src: &Source, n: u32) -> Option<Cow<'_, str>> {
    if src.has_children(n) {
        return None;
    }
    let c = src.content(n).trim();
    if !c.contains('&') {
        return Some(Cow::Borrowed(c));
    }
    Some(Cow::Owned(unescape(c).map(|u| u.trim().to_string()).unwrap_or_else(|| c.to_string())))
}

/// `Err` when a vector component is not a finite number.
fn component(name: &str, c: &str) -> std::result::Result<(), String> {
    match parse_number(c) {
        Some(_) => Ok(()),
        None => Err(format!("<{name}> component '{c}' is not a finite number; write a decimal number such as 0 or -0.25")),
    }
}

/// An integer type's range as (min, max).
fn int_range(ty: &str) -> Option<(i128, i128)> {
    Some(match ty {
        "Byte" | "Unsigned8" | "UInt8" => (0, u8::MAX as i128),
        "UInt16" | "Unsigned16" => (0, u16::MAX as i128),
        "UInt32" | "Unsigned32" => (0, u32::MAX as i128),
        "UInt64" | "Unsigned64" => (0, u64::MAX as i128),
        "SByte" | "Int8" | "Signed8" => (i8::MIN as i128, i8::MAX as i128),
        "Int16" | "Signed16" => (i16::MIN as i128, i16::MAX as i128),
        "Int32" | "Signed32" => (i32::MIN as i128, i32::MAX as i128),
        "Int64" | "Signed64" => (i64::MIN as i128, i64::MAX as i128),
        _ => return None,
    })
}

/// One element's value against its declared type: `Err(message)` when the type is one the
/// format defines and the text is not a value of it.
pub(crate) fn check_value(src: &Source, n: u32, form: Form) -> std::result::Result<(), String> {
    let name = src.name(n);
    // Vectors: the seed writes `<X>…</X>…` children (Standard) or `( x, y, z, w )` (Schema-Based).
    if let Some(kind) = vector_kind(name, form) {
        // Structural (see crate::dialect): `<X>…</X>` children against `( x, y, z )` text.
        match form {
            Form::Standard => {
                const AXES: [&str; 4] = ["X", "Y", "Z", "W"];
                let mut count = 0;
                for (i, k) in src.children(n).enumerate() {
                    let want = AXES.get(i).filter(|_| i < kind.len()).copied().unwrap_or("no more components");
                    if src.name(k) != want {
                        return Err(format!(
                            "<{name}> has <{}> where <{want}> belongs; write its {} components as <X>…</X><Y>…</Y>… in that order",
                            src.name(k),
                            kind.len()
                        ));
                    }
                    component(name, &leaf(src, k).unwrap_or_default())?;
                    count += 1;
                }
                if count != kind.len() {
                    return Err(format!("<{name}> has {count} components, not {}; add the missing <{}>", kind.len(), AXES[count.min(3)]));
                }
            }
            Form::Schema => {
                let Some(t) = leaf(src, n) else { return Ok(()) };
                let Some(inner) = t.strip_prefix('(').and_then(|t| t.strip_suffix(')')) else {
                    return Err(format!("<{name}> holds '{t}', not ( x, y, … ); write its {} numbers in parentheses", kind.len()));
                };
                let count = inner.split(',').count();
                if count != kind.len() {
                    return Err(format!(
                        "<{name}> has {count} components, not {}; write ( {} )",
                        kind.len(),
                        ["x", "y", "z", "w"][..kind.len()].join(", ")
                    ));
                }
                for c in inner.split(',') {
                    component(name, c.trim())?;
                }
            }
        }
        return Ok(());
    }
    // Structural (see crate::dialect): the type is a `Type` attribute of `<Value>`, or the tag itself.
    let ty = match form {
        Form::Standard if name == "Value" => match src.attr(n, "Type") {
            Some(t) => t,
            None => return Ok(()),
        },
        Form::Standard => return Ok(()),
        Form::Schema => {
            if name == "ObjectPtr" {
                if let Some(pt) = src.attr(n, "PointerType") {
                    if !matches!(pt, "Null" | "Link" | "Inlined") {
                        return Err(format!("PointerType \"{pt}\" is not Null, Link or Inlined; write one of those"));
                    }
                }
                return Ok(());
            }
            name
        }
    };
    let Some(v) = leaf(src, n) else { return Ok(()) };
    if let Some((lo, hi)) = int_range(ty) {
        match v.parse::<i128>() {
            Ok(x) if (lo..=hi).contains(&x) => {}
            _ => return Err(format!("{ty} value '{v}' is not a whole number from {lo} to {hi}; write one in that range")),
        }
    } else if matches!(ty, "Single" | "Double" | "Float") {
        if parse_number(&v).is_none() {
            return Err(format!("{ty} value '{v}' is not a finite number; write a decimal number such as 0 or 0.5"));
        }
    } else if ty == "Bool" && form.dialect().bool_words && !matches!(&*v, "True" | "False") {
        return Err(format!("Bool value '{v}' is not True or False; write one of those"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_control_finds_the_first_in_any_block() {
        let mut t = vec![b'a'; 300];
        t[10] = b'\t';
        t[70] = b'\n';
        t[71] = b'\r';
        assert_eq!(first_control(&t), None);
        for at in [0, 63, 64, 130, 299] {
            let mut u = t.clone();
            u[at] = 0x01;
            u[299 - (at % 7)] = 0x1F;
            assert_eq!(first_control(&u), Some(at.min(299 - at % 7)), "{at}");
        }
    }
}
