//! The built-in sample: a small humanoid skeleton with a skinned box mesh, authored here (no
//! third-party data). It is in Blender's frame (Z up, facing −Y, metres), like a MakeHuman rig,
//! so converting it exercises frame conversion.

use skelport_ir::proc::bone_from_head_tail;
use skelport_ir::{Bone, BoneId, DMat4, DQuat, DVec3, Document, Faces, Frame, Influences, Mesh, Skeleton, Skin, Transform, VertexGroup};

struct Spec {
    name: &'static str,
    parent: Option<&'static str>,
    head: [f64; 3],
    tail: [f64; 3],
    half_width: f64,
}

const fn b(name: &'static str, parent: Option<&'static str>, head: [f64; 3], tail: [f64; 3], half_width: f64) -> Spec {
    Spec { name, parent, head, tail, half_width }
}

/// Bones of one side (left, +X); the right side mirrors x.
const LEFT: &[Spec] = &[
    b("clavicle_l", Some("spine_03"), [0.03, 0.0, 1.45], [0.18, 0.01, 1.47], 0.05),
    b("upperarm_l", Some("clavicle_l"), [0.18, 0.01, 1.47], [0.45, 0.02, 1.45], 0.045),
    b("lowerarm_l", Some("upperarm_l"), [0.45, 0.02, 1.45], [0.7, -0.02, 1.44], 0.04),
    b("hand_l", Some("lowerarm_l"), [0.7, -0.02, 1.44], [0.8, -0.03, 1.43], 0.035),
    b("thigh_l", Some("pelvis"), [0.1, 0.0, 0.95], [0.1, -0.01, 0.52], 0.07),
    b("calf_l", Some("thigh_l"), [0.1, -0.01, 0.52], [0.1, 0.02, 0.1], 0.055),
    b("foot_l", Some("calf_l"), [0.1, 0.02, 0.1], [0.1, -0.12, 0.03], 0.045),
    b("toes_l", Some("foot_l"), [0.1, -0.12, 0.03], [0.1, -0.18, 0.03], 0.04),
];

const CENTRE: &[Spec] = &[
    b("root", None, [0.0, 0.0, 0.0], [0.0, -0.1, 0.0], 0.0),
    b("pelvis", Some("root"), [0.0, 0.0, 0.95], [0.0, 0.0, 1.05], 0.13),
    b("spine_01", Some("pelvis"), [0.0, 0.0, 1.05], [0.0, 0.01, 1.2], 0.12),
    b("spine_02", Some("spine_01"), [0.0, 0.01, 1.2], [0.0, 0.01, 1.35], 0.12),
    b("spine_03", Some("spine_02"), [0.0, 0.01, 1.35], [0.0, 0.0, 1.5], 0.13),
    b("neck", Some("spine_03"), [0.0, 0.0, 1.5], [0.0, -0.01, 1.6], 0.045),
    b("head", Some("neck"), [0.0, -0.01, 1.6], [0.0, -0.01, 1.8], 0.09),
];

/// The sample document: 23 bones (root does not deform), 22 boxes of 8 vertices skinned to them.
pub fn sample() -> Document {
    let mut specs: Vec<(String, Option<String>, DVec3, DVec3, f64)> = Vec::new();
    for s in CENTRE {
        specs.push((s.name.into(), s.parent.map(Into::into), DVec3::from_array(s.head), DVec3::from_array(s.tail), s.half_width));
    }
    for s in LEFT {
        specs.push((s.name.into(), s.parent.map(Into::into), DVec3::from_array(s.head), DVec3::from_array(s.tail), s.half_width));
    }
    for s in LEFT {
        let m = |v: [f64; 3]| DVec3::new(-v[0], v[1], v[2]);
        let name = s.name.replace("_l", "_r");
        let parent = s.parent.map(|p| if p.ends_with("_l") { p.replace("_l", "_r") } else { p.to_string() });
        specs.push((name, parent, m(s.head), m(s.tail), s.half_width));
    }

    let mut sk = Skeleton::new("sample_humanoid");
    let mut world: Vec<(DQuat, DVec3)> = Vec::new();
    for (name, parent, head, tail, _) in &specs {
        let (q, len) = bone_from_head_tail(*head, *tail, 0.0);
        let parent_id = parent.as_ref().and_then(|p| sk.find(p));
        let rest = match parent_id {
            Some(p) => {
                let (pq, ph) = world[p.index()];
                Transform::from_rt((pq.inverse() * q).normalize(), pq.inverse() * (*head - ph))
            }
            None => Transform::from_rt(q, *head),
        };
        let mut bone = Bone::new(name.clone(), parent_id, rest);
        bone.length = Some(len);
        bone.roll = Some(0.0);
        bone.deform = name != "root";
        sk.push(bone);
        world.push((q, *head));
    }
    for i in 0..sk.bones.len() {
        let n = sk.bones[i].name.clone();
        let other = if n.ends_with("_l") {
            n.replace("_l", "_r")
        } else if n.ends_with("_r") {
            n.replace("_r", "_l")
        } else {
            continue;
        };
        sk.bones[i].mirror = sk.find(&other);
    }

    // One box per deforming bone, its head ring shared half with the parent.
    let joints: Vec<BoneId> = (0..sk.bones.len()).filter(|&i| sk.bones[i].deform).map(BoneId::from_index).collect();
    let slot_of = |id: BoneId| joints.iter().position(|&j| j == id).map(|s| s as u32);
    let mut positions = Vec::new();
    let mut faces = Faces::default();
    let mut lists: Vec<Vec<(u32, f64)>> = Vec::new();
    let mut groups = Vec::new();
    for &j in &joints {
        let i = j.index();
        let (q, head) = world[i];
        let (_, _, _, tail, w) = &specs[i];
        let (x, z) = (q * DVec3::X * *w, q * DVec3::Z * *w);
        let base = positions.len() as u32;
        let self_slot = slot_of(j).unwrap_or(0);
        let parent_slot = sk.bones[i].parent.and_then(slot_of);
        for (ring, centre) in [head, *tail].into_iter().enumerate() {
            for (sx, sz) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                positions.push(centre + x * sx + z * sz);
                lists.push(match (ring, parent_slot) {
                    (0, Some(p)) => vec![(self_slot, 0.5), (p, 0.5)],
                    _ => vec![(self_slot, 1.0)],
                });
            }
        }
        for quad in [[0, 3, 2, 1], [4, 5, 6, 7], [0, 1, 5, 4], [1, 2, 6, 5], [2, 3, 7, 6], [3, 0, 4, 7]] {
            faces.counts.push(4);
            faces.indices.extend(quad.iter().map(|k| base + k));
        }
        groups.push(VertexGroup { name: sk.bones[i].name.clone(), vertices: (base..base + 8).collect(), weights: None });
    }
    let worlds = sk.world_matrices();
    let inverse_bind: Vec<DMat4> = joints.iter().map(|j| worlds[j.index()].inverse()).collect();

    let mut doc = Document::new(Frame::BLENDER);
    doc.source_format = Some("demo".into());
    doc.meshes.push(Mesh { name: "sample_body".into(), positions, normals: None, uvs: Vec::new(), faces, groups, ext: Default::default() });
    doc.skins.push(Skin {
        name: "sample_skin".into(),
        skeleton: skelport_ir::SkeletonId::new(0),
        mesh: Some(skelport_ir::MeshId::new(0)),
        joints,
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences: Influences::from_lists(lists),
        ext: Default::default(),
    });
    doc.skeletons.push(sk);
    doc
}

/// File name for the sample in a format: the format's own convention for it
/// ([`Format::conventional_name`](skelport_ir::Format::conventional_name)), else `sample.<ext>`,
/// or `sample.<name>.<ext>` when several writers share the extension.
pub fn file_name(f: &dyn skelport_ir::Format) -> String {
    if let Some(name) = f.conventional_name("sample") {
        return name;
    }
    let ext = f.extensions().first().copied().unwrap_or("out");
    let shared = crate::registry::formats().iter().filter(|g| g.can_write() && g.extensions().contains(&ext)).count() > 1;
    if shared {
        format!("sample.{}.{ext}", f.name())
    } else {
        format!("sample.{ext}")
    }
}

/// The generated fixtures under `testdata/demo/`: (relative path, bytes), deterministic.
/// Formats whose writer fails are skipped here (the demo command reports them).
pub fn fixtures() -> Vec<(String, Vec<u8>)> {
    let doc = sample();
    let mut out = Vec::new();
    for f in crate::registry::formats().iter().filter(|f| f.can_write()) {
        let name = file_name(*f);
        let opts = skelport_ir::WriteOptions { file_stem: crate::stem_of(std::path::Path::new(&name)), ..Default::default() };
        let mut d = skelport_ir::Diagnostics::default();
        if let Ok(o) = f.write(&doc, &opts, &mut d) {
            for (side, bytes) in o.side_files {
                out.push((format!("demo/{side}"), bytes));
            }
            out.push((format!("demo/{name}"), o.main));
        }
    }
    let report = crate::inspect::inspect(&doc, "demo");
    let mut json = serde_json::to_vec_pretty(&report).unwrap_or_default();
    json.push(b'\n');
    out.push(("demo/sample.inspect.json".into(), json));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sample_is_valid() {
        let d = sample();
        let problems = skelport_ir::validate::validate(&d);
        assert!(problems.is_empty(), "{problems:?}");
        assert_eq!(d.skeletons[0].bones.len(), 23);
        assert_eq!(d.meshes[0].positions.len(), 22 * 8);
        // Heads land where the table puts them.
        let w = d.skeletons[0].world_transforms();
        let hand = d.skeletons[0].find("hand_r").unwrap();
        assert!((w[hand.index()].translation - DVec3::new(-0.7, -0.02, 1.44)).length() < 1e-12);
    }
}
