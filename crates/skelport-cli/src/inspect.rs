//! `skelport inspect`: a readable tree, or the stable JSON report (schemas/inspect.schema.json).

use serde::Serialize;
use skelport_ir::proc::{report_skeletons, ReportSkeleton};
use skelport_ir::{Document, Frame};
use std::fmt::Write;

/// One skin in the report.
#[derive(Debug, Serialize)]
pub struct ReportSkin {
    /// Vertices of the skinned mesh.
    pub vertex_count: usize,
    pub weighted_vertices: usize,
    pub max_influences: usize,
    /// Joint names, in the skin's joint order.
    pub joints: Vec<String>,
}

/// The `inspect --json` report.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The format the file was read as.
    pub format: String,
    /// The frame every number in the report is in (always the report frame, glTF's).
    pub frame: Frame,
    /// The document's own frame, as read.
    pub source_frame: Frame,
    pub skeletons: Vec<ReportSkeleton>,
    pub skins: Vec<ReportSkin>,
}

/// Build the report for a document.
pub fn report(doc: &Document, format: &str) -> Report {
    let skins = doc
        .skins
        .iter()
        .map(|s| {
            let sk = doc.skeletons.get(s.skeleton);
            ReportSkin {
                vertex_count: s.mesh.and_then(|m| doc.meshes.get(m)).map(|m| m.positions.len()).unwrap_or_else(|| s.vertex_count()),
                weighted_vertices: s.influences.weighted_vertices(),
                max_influences: s.influences.max_influences(),
                joints: s
                    .joints
                    .iter()
                    .map(|j| sk.and_then(|k| k.bones.get(j.index())).map(|b| b.name.clone()).unwrap_or_default())
                    .collect(),
            }
        })
        .collect();
    Report { format: format.into(), frame: Frame::REPORT, source_frame: doc.frame, skeletons: report_skeletons(doc), skins }
}

/// The readable tree: one line per bone, indented by depth, with head positions (report frame).
pub fn text(doc: &Document, format: &str, file: &str) -> String {
    let r = report(doc, format);
    let mut s = String::new();
    let f = doc.frame;
    let _ = writeln!(
        s,
        "{file}: {format}, frame up {} forward {} {}-handed, {} m/unit",
        axis(f.up),
        axis(f.forward),
        if f.handedness == skelport_ir::Handedness::Right { "right" } else { "left" },
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
            let _ = writeln!(
                s,
                "  {:indent$}{}  head ({:.4}, {:.4}, {:.4})",
                "",
                b.name,
                b.head[0],
                b.head[1],
                b.head[2],
                indent = depth[i] * 2
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

fn axis(a: skelport_ir::Axis) -> &'static str {
    use skelport_ir::Axis::*;
    match a {
        PosX => "+X",
        NegX => "-X",
        PosY => "+Y",
        NegY => "-Y",
        PosZ => "+Z",
        NegZ => "-Z",
    }
}
