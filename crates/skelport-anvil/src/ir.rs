//! Model ↔ IR: checks on read, the IR document, writing an IR document back (verbatim when
//! unchanged, patched when edited, generated when it comes from another format). This module
//! gathers the public entry points; the work is in private modules by concern (bones → IR,
//! checks, the extension and its fingerprint, generation, applying edits, pose math).

use crate::error::Result;
use crate::model::AnvilSkeleton;
use crate::names::Names;
use skelport_ir::{Diagnostics, Document};

pub use crate::apply::apply;
pub use crate::check::check;
pub use crate::ext::{bone_ext_id, fingerprint, NAMESPACE};
pub use crate::generate::{default_mirroring, generate, new_bone_object, GenerateOptions, FIRST_LOCAL_ID};
pub use crate::model::IdHash;
pub use crate::pose::{ANVIL_FRAME, LOCAL_GLOBAL_TOLERANCE, SCALE_NOISE};

/// Build the IR document of a model (checked with [`check`]). Warnings go to `diag`; `stem`
/// names the skeleton.
///
/// There is one reading path into the IR: the model is written as text in its own form (its
/// source byte for byte when unedited, the edits included when not) and read by the reader the
/// `Format` impls use, so a model and a file give the same document.
pub fn to_document(model: AnvilSkeleton, names: &Names, file: &str, stem: &str, diag: &mut Diagnostics) -> Result<Document> {
    check(&model, names, file)?;
    let text = model.to_text(model.form)?;
    crate::read::read_decoded(text, model.bytes, names, file, stem, false, diag)
}
