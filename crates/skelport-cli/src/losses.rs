//! Losses judged from what a target format can store, for facts several formats carry: MPFB
//! placement strategies and constraints, AnvilToolkit bone modifiers, and names the target
//! forbids. They are checked here, once, rather than in every writer, because the fact belongs
//! to the source format and the verdict only to the target's name. Losses a writer meets while
//! writing (rest ≠ bind in G4MF, influence and bone limits, SL joint names) stay in the writer.

use skelport_ir::{Diagnostics, Document, Format};

/// Formats that keep other formats' facts as skelport extras (glTF/G4MF `extras`, ir-json).
const KEEP_AS_EXTRAS: &[&str] = &["gltf", "glb", "vrm", "g4tf", "g4b", "ir-json"];

/// Add the shared losses of writing `doc` as `target` to `diag` (notes where the target keeps the
/// fact only as skelport extras, which other tools ignore).
pub fn check(doc: &Document, target: &dyn Format, diag: &mut Diagnostics) {
    let name = target.name();
    let extras = KEEP_AS_EXTRAS.contains(&name);
    // MPFB: placement strategies (anchors) and the rig's own bone data (constraints, roll
    // strategies) kept under the "mpfb" extension.
    if name != "mpfb" {
        let n = doc.skeletons.iter().flat_map(|s| &s.bones).filter(|b| b.anchors.is_some() || b.ext.raw("mpfb").is_some()).count();
        if n > 0 && extras {
            diag.info(
                "mpfb.extras-only",
                format!("{n} bone(s) carry MPFB placement strategies/constraints: kept only as skelport extras in {name}; other tools ignore them"),
            );
        } else if n > 0 {
            diag.loss(
                "mpfb.rig-data",
                format!("{n} bone(s) carry MPFB placement strategies/constraints, which {name} cannot store: dropped (the rig will not refit to other bodies)"),
            );
        }
    }
    // AnvilToolkit bone modifiers, as the anvil reader counted them.
    if !name.starts_with("anvil") {
        let n = skelport_anvil::modifier_count(doc);
        if n > 0 && extras {
            diag.info(
                "anvil.extras-only",
                format!("{n} AnvilToolkit bone modifier(s): kept only as skelport extras in {name}; other tools ignore them"),
            );
        } else if n > 0 {
            diag.loss(
                "anvil.modifiers",
                format!("{n} AnvilToolkit bone modifier(s) (hinge, stretch, …): {name} has no bone modifiers; dropped"),
            );
        }
    }
    // G4MF forbids some characters in names; the writer replaces them with '_'.
    if name == "g4tf" || name == "g4b" {
        let bad: Vec<&str> =
            doc.skeletons.iter().flat_map(|s| &s.bones).map(|b| b.name.as_str()).filter(|n| !skelport_g4mf::name_is_legal(n)).collect();
        if !bad.is_empty() {
            diag.loss(
                "g4mf.names",
                format!(
                    "{} bone name(s) have characters G4MF forbids (e.g. {}): written with '_' instead (the original is kept in skelport extras)",
                    bad.len(),
                    bad.iter().take(5).copied().collect::<Vec<_>>().join(", ")
                ),
            );
        }
    }
}
