//! Faces as the glTF writer triangulates them: triangles that name a missing vertex are dropped
//! and said, the others keep their vertices in order.

use skelport_gltf::GlbFormat;
use skelport_ir::{DVec3, Diagnostics, Document, Format, Frame, Input, Mesh, ReadOptions, Severity, WriteOptions};

/// A triangle naming a vertex the mesh lacks (a document no reader validated) is dropped with a
/// loss line; the other triangles keep their vertices, in order, either side of it.
#[test]
fn triangles_naming_missing_vertices_are_dropped_and_said() {
    let mut doc = Document::new(Frame::GLTF);
    let mut m = Mesh { name: "body".into(), positions: vec![DVec3::ZERO, DVec3::X, DVec3::Y, DVec3::ONE], ..Default::default() };
    m.faces.counts = vec![4, 3, 3];
    doc.meshes.push(m);
    for (indices, dropped) in [(vec![0, 1, 2, 3, 0, 9, 2, 1, 2, 3], true), (vec![0, 1, 2, 3, 0, 3, 2, 1, 2, 3], false)] {
        doc.meshes[0].faces.indices = indices;
        let mut diag = Diagnostics::default();
        let out = GlbFormat.write(&doc, &WriteOptions::default(), &mut diag).unwrap();
        let said = diag.of(Severity::Loss).any(|d| d.message.contains("1 triangles refer to missing vertices"));
        assert_eq!(said, dropped, "{:?}", diag.items);
        let back = GlbFormat.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
        let want: &[u32] = if dropped { &[0, 1, 2, 0, 2, 3, 1, 2, 3] } else { &[0, 1, 2, 0, 2, 3, 0, 3, 2, 1, 2, 3] };
        assert_eq!(back.meshes[0].faces.indices, want);
    }
}
