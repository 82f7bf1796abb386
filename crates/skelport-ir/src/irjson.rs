//! `ir-json`: the IR serialized as JSON, lossless (floats round-trip exactly), with a version
//! key. Its JSON Schema is `schemas/ir-json.schema.json`.

use crate::document::Document;
use crate::format::{Diagnostics, Fault, FaultKind, Format, FormatError, Input, Output, Place, ReadOptions, WriteOptions};
use crate::jsonskip::JsonSkip;
use serde::{Deserialize, Serialize};

/// The fix of every ir-json syntax or schema fault: the schema says what the reader expects.
const FIX: &str = "fix the JSON there (schemas/ir-json.schema.json describes it) or write the file again with skelport";

impl Fault for IrJsonError {
    fn file(&self) -> Option<&str> {
        match self {
            IrJsonError::Syntax { file, .. } | IrJsonError::Version { file, .. } => Some(file),
            IrJsonError::Budget(e) => e.file(),
        }
    }
    fn place(&self) -> Option<Place> {
        match self {
            IrJsonError::Syntax { line, column, .. } => Some(Place::text(*line, *column)),
            IrJsonError::Version { .. } => Some(Place::Path("/skelport_ir".into())),
            IrJsonError::Budget(e) => e.place(),
        }
    }
    fn kind(&self) -> FaultKind {
        match self {
            IrJsonError::Syntax { kind, .. } => *kind,
            IrJsonError::Version { .. } => FaultKind::Unsupported,
            IrJsonError::Budget(e) => e.kind(),
        }
    }
    fn what(&self) -> String {
        match self {
            IrJsonError::Syntax { message, .. } => message.clone(),
            IrJsonError::Version { found, .. } => {
                format!("ir-json version {found} is newer than this skelport reads ({IR_JSON_VERSION}); upgrade skelport")
            }
            IrJsonError::Budget(e) => e.what(),
        }
    }
    fn fix(&self) -> Option<String> {
        match self {
            IrJsonError::Syntax { .. } => Some(FIX.to_owned()),
            IrJsonError::Budget(e) => e.fix(),
            IrJsonError::Version { .. } => None,
        }
    }
}

/// The ir-json format version this build reads and writes.
pub const IR_JSON_VERSION: u32 = 1;

/// Errors reading ir-json.
#[derive(Debug, thiserror::Error)]
pub enum IrJsonError {
    #[error("{}", FormatError::of(self))]
    Syntax { file: String, line: usize, column: usize, message: String, kind: FaultKind },
    #[error("{}", FormatError::of(self))]
    Version { file: String, found: u32 },
    /// The document's value tree would take more than the decode budget allows.
    #[error(transparent)]
    Budget(#[from] crate::BudgetError),
}

/// The version key alone, read in its own pass that skips everything else without allocating
/// (but with the nesting cap: [`JsonSkip`]). A `#[serde(flatten)]` envelope would buffer the
/// whole document into serde's generic content tree first (a large share of the read time,
/// docs/performance.md), and error places would point at the end of the file.
struct Version(u32);

impl<'de> Deserialize<'de> for Version {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> serde::de::Visitor<'de> for V {
            type Value = Version;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an ir-json object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Version, A::Error> {
                let mut version = None;
                while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                    if key == "skelport_ir" {
                        version = Some(map.next_value::<u32>()?);
                    } else {
                        map.next_value::<JsonSkip>()?;
                    }
                }
                version.map(Version).ok_or_else(|| serde::de::Error::missing_field("skelport_ir"))
            }
        }
        d.deserialize_map(V)
    }
}

#[derive(Serialize)]
struct EnvelopeRef<'a> {
    skelport_ir: u32,
    #[serde(flatten)]
    document: &'a Document,
}

/// Parse ir-json bytes; `file` names the source in errors. The document is charged to a decode
/// budget of its own ([`from_slice_in`]).
pub fn from_slice(bytes: &[u8], file: &str) -> Result<Document, IrJsonError> {
    from_slice_in(bytes, file, &crate::Budget::for_input(bytes.len() as u64))
}

/// [`from_slice`], charging what the document may take to `budget` before it is parsed
/// ([`crate::budget::json_tree_bytes`]).
pub fn from_slice_in(bytes: &[u8], file: &str, budget: &crate::Budget) -> Result<Document, IrJsonError> {
    let syntax = |e: serde_json::Error| IrJsonError::Syntax {
        file: file.into(),
        line: e.line(),
        column: e.column(),
        message: strip_position(&e),
        // A well-formed value of the wrong shape is a value to fix, not damaged text.
        kind: if e.is_data() { FaultKind::Value } else { FaultKind::Syntax },
    };
    let version: Version = serde_json::from_slice(bytes).map_err(syntax)?;
    if version.0 > IR_JSON_VERSION {
        return Err(IrJsonError::Version { file: file.into(), found: version.0 });
    }
    budget.charge_json(bytes, file, "the document (its value tree)")?;
    // Document does not deny unknown fields, so the version key is simply skipped here.
    serde_json::from_slice(bytes).map_err(syntax)
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
        let s = crate::format::head_text(&head[..head.len().min(256)]);
        if s.trim_start().starts_with('{') && s.contains("\"skelport_ir\"") {
            100
        } else {
            0
        }
    }
    fn read(&self, input: Input<'_>, opts: &ReadOptions, _diag: &mut Diagnostics) -> Result<Document, FormatError> {
        Ok(from_slice_in(input.bytes, &input.display_name(), &opts.budget_for(&input))?)
    }
    fn write(&self, doc: &Document, _opts: &WriteOptions, _diag: &mut Diagnostics) -> Result<Output, FormatError> {
        Ok(Output::single(to_vec(doc)))
    }
    fn holds(&self) -> crate::Holds {
        crate::Holds::EVERYTHING
    }
    fn inputs(&self) -> &'static [crate::InputKind] {
        &[crate::InputKind { role: crate::InputRole::Main, suite: "ir-json", fuzz_target: "ir_json" }]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 38: a document's value tree is charged before it is parsed; `ext` data padded with
    /// small objects (up to 210× the input, carried to the writer) stops at the budget.
    #[test]
    fn a_padded_document_stops_at_the_budget() {
        let doc = String::from_utf8(to_vec(&Document::new(crate::Frame::GLTF))).unwrap();
        let pad = format!("[{}]", vec![r#"{"":0}"#; 300_000].join(","));
        let padded = doc.replacen('{', &format!("{{\"ext\": {{\"x\": {pad}}},"), 1);
        let e = from_slice(padded.as_bytes(), "p.ir.json").unwrap_err().to_string();
        assert!(e.contains("p.ir.json: the document (its value tree): decode budget exceeded"), "{e}");
        let small = doc.replacen('{', "{\"ext\": {\"x\": [{\"\":0}]},", 1);
        assert!(from_slice(small.as_bytes(), "p.ir.json").is_ok());
    }
}
