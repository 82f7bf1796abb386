//! `ir-json`: the IR serialized as JSON, lossless (floats round-trip exactly), with a version
//! key. Its JSON Schema is `schemas/ir-json.schema.json`.

use crate::document::Document;
use crate::format::{Diagnostics, Format, FormatError, Input, Output, ReadOptions, WriteOptions};
use serde::{Deserialize, Serialize};

/// The ir-json format version this build reads and writes.
pub const IR_JSON_VERSION: u32 = 1;

/// Errors reading ir-json.
#[derive(Debug, thiserror::Error)]
pub enum IrJsonError {
    #[error("{file}:{line}:{column}: {message}")]
    Syntax { file: String, line: usize, column: usize, message: String },
    #[error("{file}: ir-json version {found} is newer than this skelport reads ({IR_JSON_VERSION}); upgrade skelport")]
    Version { file: String, found: u32 },
}

#[derive(Serialize, Deserialize)]
struct Envelope {
    skelport_ir: u32,
    #[serde(flatten)]
    document: Document,
}

#[derive(Serialize)]
struct EnvelopeRef<'a> {
    skelport_ir: u32,
    #[serde(flatten)]
    document: &'a Document,
}

/// Parse ir-json bytes; `file` names the source in errors.
pub fn from_slice(bytes: &[u8], file: &str) -> Result<Document, IrJsonError> {
    let env: Envelope = serde_json::from_slice(bytes).map_err(|e| IrJsonError::Syntax {
        file: file.into(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e),
    })?;
    if env.skelport_ir > IR_JSON_VERSION {
        return Err(IrJsonError::Version { file: file.into(), found: env.skelport_ir });
    }
    Ok(env.document)
}

/// serde_json's message without its trailing " at line L column C" (the error shows it already).
fn strip_position(e: &serde_json::Error) -> String {
    let s = e.to_string();
    match s.rfind(" at line ") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

/// Serialize a document as pretty ir-json with a trailing newline.
pub fn to_vec(doc: &Document) -> Vec<u8> {
    let mut v = serde_json::to_vec_pretty(&EnvelopeRef { skelport_ir: IR_JSON_VERSION, document: doc }).unwrap_or_default();
    v.push(b'\n');
    v
}

/// The ir-json [`Format`].
pub struct IrJsonFormat;

impl Format for IrJsonFormat {
    fn name(&self) -> &'static str {
        "ir-json"
    }
    fn description(&self) -> &'static str {
        "skelport's IR as lossless JSON"
    }
    fn extensions(&self) -> &'static [&'static str] {
        &["ir.json", "irjson"]
    }
    fn sniff(&self, head: &[u8]) -> u8 {
        let s = String::from_utf8_lossy(&head[..head.len().min(256)]);
        if s.trim_start().starts_with('{') && s.contains("\"skelport_ir\"") {
            100
        } else {
            0
        }
    }
    fn read(&self, input: Input<'_>, _opts: &ReadOptions, _diag: &mut Diagnostics) -> Result<Document, FormatError> {
        Ok(from_slice(input.bytes, &input.display_name())?)
    }
    fn write(&self, doc: &Document, _opts: &WriteOptions, _diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Ok(Output::single(to_vec(doc)))
    }
}
