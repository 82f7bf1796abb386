//! # skelport-anvil — AnvilToolkit Skeleton XML (Assassin's Creed)
//!
//! AnvilToolkit exports `.Skeleton` resources as XML in two forms: **Standard** (`type="0"`,
//! UTF-16 with BOM) and **Schema-Based** (`type="1"`, UTF-8). Modders edit them and import them
//! back, so this crate is lossless first:
//!
//! * [`xml`] — a tree that keeps every byte (an unmodified file re-exports byte-identical).
//! * [`model`] — bones and fields seen through that tree in either form.
//! * [`convert`] — Standard ↔ Schema-Based, value text carried over unchanged.
//! * [`ir`] — to and from the IR; writing edits the source tree in place.
//! * [`ops`] — addon merge and bone add/remove/rename with every link kept right.
//! * [`names`] — BoneID = CRC-32 of the exact-case name, and the names it resolves to.
//!
//! Space: Z up, metres, characters facing +Y ([`ir::FRAME`]). Quaternions x, y, z, w.

pub mod convert;
pub mod ir;
pub mod model;
pub mod names;
pub mod ops;
pub mod xml;

pub use model::Form;
use skelport_ir::{Diagnostics, Document, Format, FormatError, Input, Output, ReadOptions, WriteOptions};

/// Errors reading or writing AnvilToolkit XML, with the place in the file.
#[derive(Debug, thiserror::Error)]
pub enum AnvilError {
    #[error("{file}:{line}:{column}: {message}")]
    At { file: String, line: usize, column: usize, message: String },
    #[error("{file}: byte {offset}: {message}")]
    Encoding { file: String, offset: usize, message: String },
    #[error("{file}: {message}")]
    Invalid { file: String, message: String },
    #[error("cannot write AnvilToolkit XML: {0}")]
    Write(String),
}

impl AnvilError {
    /// An error at a byte offset of `text`, reported as line and column.
    pub fn at(file: &str, text: &str, offset: usize, message: impl Into<String>) -> AnvilError {
        let offset = offset.min(text.len());
        let before = &text.as_bytes()[..offset];
        let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
        let column = offset - before.iter().rposition(|&b| b == b'\n').map(|p| p + 1).unwrap_or(0) + 1;
        AnvilError::At { file: file.into(), line, column, message: message.into() }
    }
}

/// `anvil`: the Standard form.
pub struct AnvilFormat;
/// `anvil-schema`: the Schema-Based form.
pub struct AnvilSchemaFormat;

/// Recognize AnvilToolkit skeleton XML (either encoding) and its form.
pub fn sniff(head: &[u8]) -> Option<Form> {
    let text = match head {
        [0xFF, 0xFE, rest @ ..] => {
            String::from_utf16_lossy(&rest.chunks_exact(2).map(|c| u16::from_le_bytes([c[0], c[1]])).collect::<Vec<_>>())
        }
        [0xFE, 0xFF, rest @ ..] => {
            String::from_utf16_lossy(&rest.chunks_exact(2).map(|c| u16::from_be_bytes([c[0], c[1]])).collect::<Vec<_>>())
        }
        _ => String::from_utf8_lossy(&head[..head.len().min(4096)]).into_owned(),
    };
    let t = &text[..text.len().min(4096)];
    let anvil = t.contains("tool=\"AnvilToolkit\"") || t.contains("<Skeleton ID=") || t.contains("Type=\"Skeleton\"");
    if !anvil {
        return None;
    }
    if t.contains("type=\"1\"") || t.contains("Type=\"Skeleton\"") {
        Some(Form::Schema)
    } else {
        Some(Form::Standard)
    }
}

fn read(input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
    Ok(ir::read(input.bytes, &input.display_name(), opts, diag)?)
}

impl Format for AnvilFormat {
    fn name(&self) -> &'static str {
        "anvil"
    }
    fn description(&self) -> &'static str {
        "AnvilToolkit Skeleton XML, Standard form (UTF-16, type=\"0\"); lossless re-export"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["xml"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        match sniff(head) {
            Some(Form::Standard) => 100,
            Some(Form::Schema) => 50,
            None => 0,
        }
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        read(input, opts, diag)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Ok(Output::single(ir::write(doc, Form::Standard, opts, diag)?))
    }
}

impl Format for AnvilSchemaFormat {
    fn name(&self) -> &'static str {
        "anvil-schema"
    }
    fn description(&self) -> &'static str {
        "AnvilToolkit Skeleton XML, Schema-Based form (UTF-8, type=\"1\"); lossless re-export"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["xml"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        match sniff(head) {
            Some(Form::Schema) => 100,
            Some(Form::Standard) => 50,
            None => 0,
        }
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
        read(input, opts, diag)
    }
    fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Ok(Output::single(ir::write(doc, Form::Schema, opts, diag)?))
    }
}

/// The fixture variants derived from the hand-written Standard UTF-8 masters in `dir`
/// (testdata/anvil): the same file as UTF-16 with BOM (`.standard.xml`, what AnvilToolkit
/// writes), and skelport's Schema-Based conversion in UTF-8 and UTF-16. Paths relative to `dir`.
pub fn derived_fixtures(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for stem in ["sword_addon", "hidden_blade_addon", "biped"] {
        let Ok(master) = std::fs::read(dir.join(format!("{stem}.standard.utf8.xml"))) else { continue };
        let Ok(text) = String::from_utf8(master.clone()) else { continue };
        out.push((format!("{stem}.standard.xml"), ir::encode(&text, ir::Encoding::Utf16Le)));
        let mut d = Diagnostics::default();
        let Ok(doc) = ir::read(&master, stem, &ReadOptions::default(), &mut d) else { continue };
        let Ok(schema) = ir::write(&doc, Form::Schema, &WriteOptions::default(), &mut d) else { continue };
        let Ok((stext, _)) = ir::decode(&schema, stem) else { continue };
        out.push((format!("{stem}.schema.utf16.xml"), ir::encode(&stext, ir::Encoding::Utf16Le)));
        out.push((format!("{stem}.schema.xml"), schema));
    }
    out
}
