//! Losses judged from facts one format owns, whatever the target: MPFB placement strategies and
//! constraints, AnvilToolkit bone modifiers, names G4MF forbids. Each owner judges its own facts
//! ([`Format::check_losses`], reading only its own extension namespace) against what the target
//! says it holds ([`Format::holds`]), once per namespace, after the target's writer; losses a
//! writer meets while writing (rest ≠ bind in G4MF, influence and bone limits, SL joint names)
//! stay in the writer.

use crate::registry;
use skelport_ir::{Diagnostics, Document, Format};

/// Add the losses of writing `doc` as `target` that other formats' facts suffer to `diag` (notes
/// where the target keeps a fact only as skelport extras, which other tools ignore).
pub fn check(doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
    let mut seen: Vec<&str> = Vec::new();
    for f in registry::formats() {
        let Some(ns) = f.namespace() else { continue };
        if !seen.contains(&ns) {
            seen.push(ns);
            f.check_losses(doc, target, diag);
        }
    }
}
