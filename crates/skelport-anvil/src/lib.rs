//! # skelport-anvil — AnvilToolkit Skeleton XML
//!
//! Assassin's Creed modders export `.Skeleton` files with AnvilToolkit (ATK) as XML, edit them
//! and import them back. ATK has two exporters and this crate reads and writes both:
//!
//! * **Standard** ([`AnvilFormat`], `anvil`): UTF-16 with BOM (UTF-8 accepted), `type="0"`,
//!   `<Skeleton ID>`, `<Value Name Type>` scalars, `<Vector4>`/`<Quat>` with X/Y/Z/W children,
//!   modifiers with `BlendWeight`/`UseModifiedBoneMatrix` attributes; `Index` and
//!   `ChildBoneCount` are not stored.
//! * **Schema-Based** ([`AnvilSchemaFormat`], `anvil-schema`): UTF-8, `type="1"`,
//!   `<Object Type="Skeleton">`, typed elements (`<Hash32>`, `<Float>`, `<Enum>`), `( x, y, z, w )`
//!   vectors, explicit modifier `Owner` links and `Unsigned8` `Index`/`ChildBoneCount` (so at most
//!   255 bones).
//!
//! ## Lossless by construction
//! A file is parsed into a lossless element tree and a typed [`model`] whose values keep
//! their original text. An unmodified file written back in its own form is byte-identical (BOM,
//! encoding, declaration, attribute order, whitespace, line endings, number text): through the
//! IR, each bone's element travels in its `anvil` extension as its values (attribute values and
//! texts, verbatim) and the text around them in the skeleton's (the elements' shapes, the text
//! between the elements), with a fingerprint of what the IR holds; rebuilt and joined, they are
//! re-emitted when the fingerprint still matches. An edited document is rebuilt, re-parsed and
//! patched: only changed elements are regenerated ([`ir::apply`]), and a bone edited in another
//! tool keeps everything that tool does not hold. Converting between the forms maps every value
//! through the seed's comparison table (and keeps unknown elements verbatim), so Standard →
//! Schema-Based → Standard keeps every value.
//!
//! ## Modules
//! Public: [`model`] (the typed model: objects, fields, values, links, modifier kinds), [`text`]
//! (encodings: UTF-16 LE/BE with or without BOM, UTF-8), [`names`] (CRC-32 bone hashes, the
//! built-in name dictionary, `--names` files), [`dialect`] (the words of each form), [`ir`]
//! (model ↔ IR: checks, generation from other formats, edits applied), [`ops`] (addon [`merge`],
//! bone add / remove / rename with every link kept right), [`commands`] (the CLI's `merge` and
//! `bone`) and [`error`].
//!
//! Private, one concern each: `xml` (the lossless tokenizer and element tree, line/column
//! errors), `parse` (tree → model), `emit` (model → text), `validate` (what XML and the seed make
//! wrong: encodings, control characters, external DTDs, nesting depth, typed values), `read`
//! (text → IR bones, the one reading path), `build` (bones → IR document and its warnings),
//! `check`, `ext` (the `anvil` extension and its fingerprint), `generate`, `apply` and `pose`
//! (the engine's pose math). No two of them import each other.
//!
//! Frame: Z up, metres, right-handed, characters facing −Y ([`ANVIL_FRAME`]); quaternions x, y, z, w.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod apply;
mod build;
mod check;
pub mod commands;
pub mod dialect;
mod emit;
pub mod error;
mod ext;
mod generate;
pub mod ir;
pub mod model;
pub mod names;
pub mod ops;
mod parse;
mod pose;
mod read;
pub mod text;
mod validate;
mod xml;

pub use dialect::{Dialect, DIALECTS};
pub use error::AnvilError;
pub use generate::GenerateOptions;
pub use model::{AnvilSkeleton, Form, ModifierKind};
pub use names::{bone_hash, Names};
pub use ops::{merge, MergeOptions, MergeReport, NewBone};
pub use pose::ANVIL_FRAME;

use skelport_ir::{Diagnostics, Document, Format, FormatError, Holds, Input, InputKind, InputRole, Output, ReadOptions, WriteOptions};

/// The Standard form (`anvil`): UTF-16 with BOM on write, `type="0"`.
pub struct AnvilFormat;
/// The Schema-Based form (`anvil-schema`): UTF-8, `type="1"`.
pub struct AnvilSchemaFormat;

/// How sure we are that `head` is an AnvilToolkit skeleton, and in which form.
pub fn sniff_form(head: &[u8]) -> Option<(Form, u8)> {
    let text = text::decode_head(&head[..head.len().min(8192)]);
    let t = text.trim_start_matches('\u{FEFF}');
    if let Some(p) = t.find("<?info") {
        let end = t[p..].find("?>").map(|e| p + e).unwrap_or(t.len());
        let pi = &t[p..end];
        if pi.contains("AnvilToolkit") {
            let Some(form) = parse::info_attr(&t[p..], "type").and_then(|v| Dialect::by_type_attr(&v)).map(|d| d.form) else {
                // No usable type: the root's marker tells.
                return DIALECTS.into_iter().find(|d| t.contains(d.root_marker)).map(|d| (d.form, 60));
            };
            // Any ATK export: a skeleton if the root says so.
            let is_skeleton = DIALECTS.into_iter().any(|d| t.contains(d.root_marker)) || !t[end..].contains('<');
            return is_skeleton.then_some((form, 100));
        }
    }
    // No <?info?> line: a root element that looks like a skeleton. A structural difference: the
    // Standard root is the class itself with an ID, the Schema-Based one a generic <Object> whose
    // Type says Skeleton.
    let body = t.trim_start();
    let root = body.match_indices('<').map(|(i, _)| &body[i..]).find(|s| !s.starts_with("<?") && !s.starts_with("<!")).unwrap_or("");
    if root.starts_with("<Skeleton ") && root.contains("ID=") {
        return Some((Form::Standard, 70));
    }
    if root.starts_with("<Object ") && root[..root.find('>').unwrap_or(root.len())].contains("Type=\"Skeleton\"") {
        return Some((Form::Schema, 70));
    }
    None
}

fn sniff_for(head: &[u8], form: Form) -> u8 {
    match sniff_form(head) {
        Some((f, score)) if f == form => score,
        // The other form's reader can read it too, but should lose to the right one.
        Some((_, score)) => score / 3,
        None => 0,
    }
}

fn load_names(opts: &ReadOptions) -> Result<Names, AnvilError> {
    match &opts.names {
        Some(p) => Names::with_file(p),
        None => Ok(Names::builtin()),
    }
}

/// Read a document (either form; the content decides).
pub fn read_document(input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, AnvilError> {
    let file = input.display_name();
    let names = load_names(opts)?;
    let budget = opts.budget_for(&input);
    // The decoded text, before it is made.
    budget.charge(input.bytes.len() as u64, &file, "the decoded text")?;
    let (text, bytes) =
        text::decode(input.bytes).map_err(|e| AnvilError::Encoding { file: file.clone(), offset: e.offset, message: e.message })?;
    read::charge_tree(&text, &budget, &file)?;
    let stem = input.path.and_then(|p| p.file_stem()).and_then(|s| s.to_str()).unwrap_or("Skeleton").to_string();
    validate::check_text(&text, bytes, &file)?;
    read::read_decoded(text, bytes, &names, &file, &stem, opts.extension_use.defers(ext::NAMESPACE), diag)
}

/// Write a document in `form`. A document read from AnvilToolkit XML and not edited is written
/// back verbatim in its own form; an edited one is patched; any other is generated.
pub fn write_document(doc: &Document, form: Form, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Vec<u8>, AnvilError> {
    // The first skeleton with bones: an empty one holds nothing to write.
    let Some(sk0) = doc.skeletons.iter().find(|s| !s.bones.is_empty()) else {
        let has = match (doc.skeletons.len(), doc.meshes.len()) {
            (0, 0) => "it is empty".to_string(),
            (s, 0) => format!("it has {s} empty skeleton(s)"),
            (0, m) => format!("it has {m} mesh(es) and no skeleton"),
            (s, m) => format!("it has {s} empty skeleton(s) and {m} mesh(es)"),
        };
        return Err(AnvilError::Write(format!(
            "nothing to write: the document has no bones ({has}), and an AnvilToolkit Skeleton file is its bones"
        )));
    };
    let others = doc.skeletons.iter().filter(|s| !s.bones.is_empty()).count() - 1;
    if others > 0 {
        diag.loss("anvil.skeletons", format!("an AnvilToolkit file holds one skeleton; {others} more not written"));
    }
    // Only what there is to lose: an empty skin (weights that matched no bone) loses nothing.
    if doc.meshes.iter().any(|m| !m.positions.is_empty()) || doc.skins.iter().any(|s| s.influences.weighted_vertices() > 0) {
        diag.loss(
            "anvil.geometry",
            "a Skeleton file holds no meshes (positions, faces, UVs, normals) or skin weights; they are not written",
        );
    }
    let converted;
    let holdable = sk0.bones.iter().all(|b| b.name.chars().all(skelport_ir::xml::is_xml_char));
    let sk = if doc.frame != ANVIL_FRAME || !holdable {
        let mut d = Document::new(doc.frame);
        d.skeletons.push(sk0.clone());
        d.convert_frame(ANVIL_FRAME);
        let mut sk = d.skeletons.pop().expect("pushed");
        // Names other formats allow and XML cannot hold (control characters): replaced, with a
        // loss line, rather than written into a file no XML reader accepts.
        skelport_ir::xml::make_names_holdable(&mut sk, "anvil.name", "AnvilToolkit Skeleton XML", diag);
        converted = sk;
        &converted
    } else {
        sk0
    };
    let ext = sk.ext.raw(ext::NAMESPACE);
    let read_form: Option<Form> = ext.and_then(|e| e.get("form")).and_then(|f| serde_json::from_value(f.clone()).ok());
    let read_bytes: Option<text::ByteForm> = ext.and_then(|e| e.get("bytes")).and_then(|f| serde_json::from_value(f.clone()).ok());
    let fp = ext.and_then(|e| e.get("fingerprint")).and_then(|s| s.as_str());
    let fp_now = ext::fingerprint(sk);
    let unedited = read_form == Some(form) && fp == Some(fp_now.as_str());
    // The values the reader deferred, made when the text read is not written back as it is:
    // on a copy, after the count the model's would refuse (the same bones), so a skeleton too
    // big for the form is refused before it is copied.
    let completed;
    let sk = if ext::is_deferred(sk) && !(unedited && sk.ext.raw(ext::RUN_LOCAL_SOURCE).is_some()) {
        emit::check_bone_count(sk.bones.len(), form, opts.bone_limit)?;
        let mut c = sk.clone();
        ext::complete(&mut c);
        completed = c;
        &completed
    } else {
        sk
    };
    let ext = sk.ext.raw(ext::NAMESPACE);
    let source = match (ext, read_form, read_bytes) {
        (Some(e), Some(rf), Some(rb)) => match sk.ext.raw(ext::RUN_LOCAL_SOURCE).and_then(|s| s.as_str()) {
            // The text this run read, unedited since: no elements to rebuild and check.
            Some(src) if unedited => Some((src.into(), true)),
            _ => read_source(e, sk, rf, rb, diag),
        },
        _ => None,
    };
    let model = match (source, read_bytes) {
        (Some((src, whole)), Some(rb)) => {
            if whole && unedited {
                emit::check_bone_count(sk.bones.len(), form, opts.bone_limit)?;
                return Ok(text::encode(&src, rb));
            }
            match AnvilSkeleton::parse_text(src.into_owned(), rb, "<anvil extension>") {
                Ok(mut m) => {
                    apply::apply(&mut m, sk, &Names::builtin(), diag)?;
                    m
                }
                Err(e) => {
                    diag.warn(
                        "anvil.extension",
                        format!("the skeleton's AnvilToolkit data does not make a skeleton file ({e}); written from the bones alone"),
                    );
                    generate::generate(sk, form, &GenerateOptions::default(), diag)?
                }
            }
        }
        _ => generate::generate(sk, form, &GenerateOptions::default(), diag)?,
    };
    model.check_limit(form, opts.bone_limit)?;
    model.to_bytes(form)
}

/// The text a skeleton was read from, as far as its `anvil` extension still holds it, and whether
/// it is whole (every bone's element present): a `source` string (the whole text, which a
/// document may carry instead of per-bone values), or the layout with the elements of the bones
/// that have values, rebuilt from their shapes, in file order. Values that do not make one
/// element of a bone with the bone's ID, or of an ID an earlier bone took, are left out (the bone
/// is then made anew); extension data that holds no layout or shapes, or a layout whose pieces
/// are not a skeleton file around its Bones list, gives `None` (the skeleton is generated).
fn read_source<'a>(
    e: &'a serde_json::Value,
    sk: &'a skelport_ir::Skeleton,
    form: Form,
    bytes: text::ByteForm,
    diag: &mut Diagnostics,
) -> Option<(std::borrow::Cow<'a, str>, bool)> {
    if let Some(src) = e.get("source").and_then(|s| s.as_str()).filter(|s| !s.is_empty()) {
        return Some((src.into(), true));
    }
    let Some(layout) = ext::Layout::from_ext(e).filter(|l| l.is_frame(form, bytes)) else {
        diag.warn(
            "anvil.extension",
            "the skeleton's AnvilToolkit data has no layout, or one whose pieces make no skeleton file; the file is generated from the bones alone",
        );
        return None;
    };
    let Some(shapes) = ext::Shapes::from_ext(e) else {
        diag.warn(
            "anvil.extension",
            "the skeleton's AnvilToolkit data has no bone shapes, or malformed ones; the file is generated from the bones alone",
        );
        return None;
    };
    // Pieces and separators are repeated for every bone: data a hostile file made small could
    // rebuild into far more text. As the readers' decode budget, at most 64 × the data (at
    // least 64 MiB); a real skeleton rebuilds to a few times its data.
    let parts: Vec<_> = sk.bones.iter().map(ext::bone_parts).collect();
    let data = layout.data_len()
        + shapes.data_len()
        + parts.iter().flatten().map(|(_, v)| v.iter().map(|v| v.len() + 1).sum::<usize>() + 1).sum::<usize>();
    let elements = parts.iter().flatten().filter_map(|(k, v)| shapes.element_len(*k, v)).fold(0usize, usize::saturating_add);
    let text_len = layout.joined_len(sk.bones.len(), elements);
    if text_len > (64 * data).max(64 << 20) {
        diag.warn(
            "anvil.extension",
            format!("the skeleton's AnvilToolkit data ({data} bytes) would make {text_len} bytes of text, more than 64 times its size; the file is generated from the bones alone"),
        );
        return None;
    }
    let mut whole = true;
    let mut refused = Vec::new();
    let mut ids = std::collections::HashSet::with_capacity_and_hasher(sk.bones.len(), model::IdHash::default());
    let mut fragments = Vec::with_capacity(sk.bones.len());
    for (b, parts) in sk.bones.iter().zip(&parts) {
        let xml = parts.as_ref().and_then(|(k, v)| shapes.element(*k, v)).map(std::sync::Arc::new);
        match (ext::bone_ext_id(b), xml) {
            (Some(id), Some(xml)) if ext::is_bone_element(&xml, form, id) && ids.insert(id) => fragments.push((id, xml)),
            _ => {
                whole = false;
                if ext::has_bone_values(b) {
                    refused.push(b.name.clone());
                }
            }
        }
    }
    if !refused.is_empty() {
        diag.warn(
            "anvil.fragment",
            format!(
                "{} bone(s) whose AnvilToolkit values in the extension do not make one bone element with the bone's ID, or repeat an earlier bone's (made anew): {}",
                refused.len(),
                check::list(&refused)
            ),
        );
    }
    layout.file_order(&mut fragments);
    Some((layout.join(fragments.iter().map(|(_, xml)| xml.as_str())).into(), whole))
}

/// The reader's diagnostic codes for a file that breaks the AnvilToolkit model's rules
/// (ANVIL-NOTES.md §3–4) the reader goes past: stored Index/ChildBoneCount that disagree with the
/// hierarchy, modifier Owner links that point elsewhere, a HashName that is not the hash's name,
/// and a Local that is not inverse(parent Global) × Global. `validate` calls such a file invalid.
pub const STRUCTURAL: &[&str] = &["anvil.index", "anvil.owner", "anvil.hash-label", "anvil.local-global-mismatch"];

/// The AnvilToolkit formats' `Format::fuzz_check`: what only big files take, run on a fuzz input
/// and compared with the one-thread paths: the UTF-16 decode and widening in halves
/// ([`text::fuzz_halves`]), then the streaming reader, in one piece and in two halves, against the
/// tree reader (it gives up or gives the tree reader's bones). Panics on a difference; returns how
/// many comparisons were made.
#[cfg(feature = "fuzzing")]
fn fuzz_check(data: &[u8]) -> usize {
    let halves = text::fuzz_halves(data);
    let Ok((text, _)) = text::decode(data) else { return halves };
    let (streamed, _) = read::streaming_agrees(std::sync::Arc::new(text), "fuzz.xml");
    halves + 1 + usize::from(streamed)
}

/// The `Format` of one dialect: the two impls differ only in the [`Dialect`] they read.
macro_rules! dialect_format {
    ($ty:ty, $d:expr) => {
        impl Format for $ty {
            fn name(&self) -> &'static str {
                $d.format_name
            }
            fn description(&self) -> &'static str {
                $d.description
            }
            fn extensions(&self) -> &'static [&'static str] {
                &["xml"]
            }
            fn sniff(&self, head: &[u8]) -> u8 {
                sniff_for(head, $d.form)
            }
            fn read(&self, input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, FormatError> {
                Ok(read_document(input, opts, diag)?)
            }
            fn write(&self, doc: &Document, opts: &WriteOptions, diag: &mut Diagnostics) -> Result<Output, FormatError> {
                Ok(Output::single(write_document(doc, $d.form, opts, diag)?))
            }
            fn holds(&self) -> Holds {
                Holds { any_skeleton: true, orientations: true, max_bones: Some($d.max_bones), ..Holds::NOTHING }
            }
            #[cfg(feature = "fuzzing")]
            fn fuzz_check(&self, data: &[u8]) -> usize {
                crate::fuzz_check(data)
            }
            fn inputs(&self) -> &'static [InputKind] {
                const INPUTS: &[InputKind] = &[InputKind { role: InputRole::Main, suite: $d.suite, fuzz_target: $d.fuzz_target }];
                INPUTS
            }
            fn namespace(&self) -> Option<&'static str> {
                Some(ext::NAMESPACE)
            }
            fn check_losses(&self, doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
                check_losses(doc, target, diag)
            }
            fn deferred(&self, doc: &Document) -> bool {
                doc.skeletons.iter().any(ext::is_deferred)
            }
            fn complete(&self, doc: &mut Document) {
                doc.skeletons.iter_mut().for_each(ext::complete)
            }
            fn humanoid_names(&self) -> Option<&'static str> {
                Some("ac-biped")
            }
            fn structural(&self) -> &'static [&'static str] {
                STRUCTURAL
            }
        }
    };
}

dialect_format!(AnvilFormat, dialect::STANDARD);
dialect_format!(AnvilSchemaFormat, dialect::SCHEMA);

/// What writing `doc` as a format other than AnvilToolkit loses: the bone modifiers the reader
/// counted (kept for skelport only by a target that keeps extras: a note).
fn check_losses(doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
    let n = modifier_count(doc);
    if n == 0 || target.namespace() == Some(ext::NAMESPACE) {
        return;
    }
    let name = target.name();
    if target.holds().extras {
        diag.info(
            "anvil.extras-only",
            format!("{n} AnvilToolkit bone modifier(s): kept only as skelport extras in {name}; other tools ignore them"),
        );
    } else {
        diag.loss(
            "anvil.modifiers",
            format!("{n} AnvilToolkit bone modifier(s) (hinge, stretch, …): {name} has no bone modifiers; dropped"),
        );
    }
}

/// How many bone modifiers the AnvilToolkit skeletons of `doc` had when they were read (0 for
/// documents from other formats): what a target without bone modifiers loses.
pub fn modifier_count(doc: &Document) -> usize {
    doc.skeletons.iter().filter_map(|s| s.ext.raw(ext::NAMESPACE)?.get("modifiers")?.as_u64()).map(|n| n as usize).sum()
}

/// The fixture stems in `testdata/anvil/`: the seed's biped (every modifier kind), its sword addon
/// and its hidden-blade addon.
pub const FIXTURE_STEMS: &[&str] = &["biped", "sword_addon", "hidden_blade_addon"];

/// The UTF-16 fixtures derived from the hand-written UTF-8 masters in `dir` (`testdata/anvil`),
/// paths relative to `dir`: `STEM.standard.xml` from `STEM.standard.utf8.xml` and
/// `STEM.schema.utf16.xml` from `STEM.schema.xml`, each as AnvilToolkit writes UTF-16 (LE with
/// BOM, CRLF, `encoding="utf-16"` in the declaration). Masters that are missing are skipped.
pub fn derived_fixtures(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out = Vec::new();
    for stem in FIXTURE_STEMS {
        for (master, derived) in [("standard.utf8.xml", "standard.xml"), ("schema.xml", "schema.utf16.xml")] {
            let Ok(text) = std::fs::read_to_string(dir.join(format!("{stem}.{master}"))) else { continue };
            let text = text.replacen("encoding=\"utf-8\"", "encoding=\"utf-16\"", 1).replace("\r\n", "\n").replace('\n', "\r\n");
            let form = text::ByteForm { encoding: text::Encoding::Utf16Le, bom: true };
            out.push((format!("{stem}.{derived}"), text::encode(&text, form)));
        }
    }
    out
}
