//! `skelport inspect`: a readable tree, or the stable JSON report (schemas/inspect.schema.json).

use super::print_diagnostics;
use crate::flags::InspectArgs;
use anyhow::Result;
use skelport::Document;
use std::fmt::Write;
use std::process::ExitCode;

/// Run `skelport inspect`.
pub fn run(a: InspectArgs) -> Result<ExitCode> {
    let mut opts = a.read.options();
    // A report writes no file: what only writers take from extensions may wait.
    opts.reader.extension_use = skelport::ir::ExtensionUse::Nobody;
    let l = super::open(&a.file, &opts)?;
    // What breaks the IR's rules is shown as read (an influence row that is not one as none):
    // say that the document breaks them, as validate would.
    let mut diagnostics = std::borrow::Cow::Borrowed(&l.diagnostics);
    if let Some(msg) = super::broken_rules_warning(&l.doc, "shown") {
        diagnostics.to_mut().warn("inspect.invalid", msg);
    }
    print_diagnostics(&l.name, &diagnostics);
    if a.json {
        println!("{}", serde_json::to_string_pretty(&skelport::inspect(&l.doc, l.format.name()))?);
    } else {
        print!("{}", skelport_cli::terminal_text(&text(&l.doc, l.format.name(), &l.name)));
    }
    Ok(ExitCode::SUCCESS)
}

/// Depth beyond which the readable tree stops indenting (docs/limits.md).
const MAX_INDENT: usize = 32;

/// The readable tree: one line per bone, indented by depth, with head positions (report frame).
fn text(doc: &Document, format: &str, file: &str) -> String {
    let r = skelport::inspect(doc, format);
    let mut s = String::new();
    let f = doc.frame;
    let _ = writeln!(
        s,
        "{file}: {format}, file frame up {} forward {} {}-handed, {} m/unit; positions below in the report frame (+Y up, +Z forward, right-handed, metres)",
        axis(f.up),
        axis(f.forward),
        if f.handedness == skelport::ir::Handedness::Right { "right" } else { "left" },
        f.metres_per_unit
    );
    for (sk, rsk) in doc.skeletons.iter().zip(&r.skeletons) {
        let depth = sk.depths();
        let deform = sk.bones.iter().filter(|b| b.deform).count();
        let _ = writeln!(
            s,
            "skeleton \"{}\": {} bones ({} deform), depth {}",
            sk.name,
            sk.bones.len(),
            deform,
            depth.iter().max().map_or(0, |d| d + 1)
        );
        for (i, b) in rsk.bones.iter().enumerate() {
            // Indentation stops at MAX_INDENT levels (a bone deeper says its depth), so a
            // 65,535-deep chain prints linear output, not O(depth²) spaces.
            let d = depth[i];
            let deeper = if d > MAX_INDENT { format!("[depth {d}] ") } else { String::new() };
            let _ = writeln!(
                s,
                "  {:indent$}{deeper}{}  head ({:.4}, {:.4}, {:.4})",
                "",
                b.name,
                b.head[0],
                b.head[1],
                b.head[2],
                indent = d.min(MAX_INDENT) * 2
            );
        }
    }
    for (k, m) in doc.meshes.iter().enumerate() {
        let _ = writeln!(s, "mesh {k} \"{}\": {} vertices, {} faces, {} groups", m.name, m.positions.len(), m.faces.len(), m.groups.len());
    }
    for (k, sk) in r.skins.iter().enumerate() {
        let _ = writeln!(
            s,
            "skin {k}: {} joints, {} vertices ({} weighted), up to {} influences per vertex",
            sk.joints.len(),
            sk.vertex_count,
            sk.weighted_vertices,
            sk.max_influences
        );
    }
    s
}

fn axis(a: skelport::ir::Axis) -> &'static str {
    use skelport::ir::Axis::*;
    match a {
        PosX => "+X",
        NegX => "-X",
        PosY => "+Y",
        NegY => "-Y",
        PosZ => "+Z",
        NegZ => "-Z",
    }
}
