//! The `inspect --json` report (schemas/inspect.schema.json): a document's skeletons and skins,
//! every number in the report frame (+Y up, metres), so reports of files in any format compare.

use serde::Serialize;
use skelport_ir::proc::{report_skeletons, ReportSkeleton};
use skelport_ir::{Document, Frame};

/// One skin in the report.
#[derive(Debug, Serialize)]
pub struct ReportSkin {
    /// Vertices of the skinned mesh.
    pub vertex_count: usize,
    /// Vertices with at least one influence.
    pub weighted_vertices: usize,
    /// The most influences any vertex has.
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
    /// Every skeleton, bone by bone (head, tail, rotation, parent).
    pub skeletons: Vec<ReportSkeleton>,
    /// Every skin.
    pub skins: Vec<ReportSkin>,
}

/// The report of a document read as `format` (a format's name).
pub fn inspect(doc: &Document, format: &str) -> Report {
    let skins = doc
        .skins
        .iter()
        .map(|s| {
            let sk = doc.get_skeleton(s.skeleton);
            ReportSkin {
                vertex_count: doc.mesh_of(s).map(|m| m.positions.len()).unwrap_or_else(|| s.vertex_count()),
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
