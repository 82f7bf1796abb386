//! Proof by skinning: pose a document with joint rotations and deform its skinned mesh by linear
//! blend skinning, so two documents (e.g. a file and its conversion) can be compared by the
//! vertices they produce rather than by how each format stores bones.
//!
//! A pose gives each bone (by name) a rotation `R` expressed in the *report frame's world axes*,
//! applied about the bone's head: at rest the bone's posed world transform is `R · W`. Deltas
//! compose down the hierarchy. Defined this way, a pose means the same thing to every format,
//! whatever local axes the format gives its bones (Blender's head→tail +Y, SL's axis-aligned
//! joints, glTF's anything): the deformation depends only on heads, bind matrices and weights.

use crate::document::Document;
use crate::frame::Frame;
use glam::{DMat4, DQuat, DVec3};
use std::collections::HashMap;

/// A pose: world-axis rotations by bone name (bones not named keep their rest pose).
pub type Pose = HashMap<String, DQuat>;

/// A deterministic pseudo-random pose for the given bone names: rotations of up to `max_angle`
/// radians about random axes (a small xorshift generator, so tests need no extra crate).
pub fn random_pose<'a>(names: impl IntoIterator<Item = &'a str>, seed: u64, max_angle: f64) -> Pose {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut next = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    names
        .into_iter()
        .map(|n| {
            let axis = DVec3::new(next() * 2.0 - 1.0, next() * 2.0 - 1.0, next() * 2.0 - 1.0);
            let axis = if axis.length() < 1e-6 { DVec3::Y } else { axis.normalize() };
            (n.to_string(), DQuat::from_axis_angle(axis, (next() * 2.0 - 1.0) * max_angle))
        })
        .collect()
}

/// Each bone's posed world matrix (in the skeleton's document frame) under `pose`.
///
/// Posed world: `P_i = P_parent · L_i · D_i` with `D_i = W_i⁻¹ · R_i · W_i` (rotation about the
/// head in world axes). At a root, `P = R about the head · W`.
pub fn posed_worlds(sk: &crate::document::Skeleton, pose: &Pose) -> Vec<DMat4> {
    let world = sk.world_matrices();
    let mut posed: Vec<DMat4> = Vec::with_capacity(sk.bones.len());
    for (i, b) in sk.bones.iter().enumerate() {
        let r = pose.get(&b.name).copied().unwrap_or(DQuat::IDENTITY);
        let w = world[i];
        let head = w.w_axis.truncate();
        let about_head = DMat4::from_translation(head) * DMat4::from_quat(r) * DMat4::from_translation(-head);
        let d_i = w.inverse() * about_head * w;
        let p = match b.parent {
            Some(p) if p.index() < i => posed[p.index()] * b.rest.matrix() * d_i,
            _ => b.rest.matrix() * d_i,
        };
        posed.push(p);
    }
    posed
}

/// Posed joint heads by bone name, in the report frame (metres), over every skeleton: the
/// comparison for skeleton-only files, which have no vertices to skin.
pub fn posed_heads(doc: &Document, pose: &Pose) -> std::collections::BTreeMap<String, DVec3> {
    let d = in_report_frame(doc);
    let mut out = std::collections::BTreeMap::new();
    for sk in &d.skeletons {
        for (b, m) in sk.bones.iter().zip(posed_worlds(sk, pose)) {
            out.insert(b.name.clone(), m.w_axis.truncate());
        }
    }
    out
}

/// Deform skin `skin` of `doc` by `pose`; returns the skinned vertices in the report frame
/// (metres). Vertices without influences stay where the bind shape puts them.
pub fn deform(doc: &Document, skin: usize, pose: &Pose) -> Vec<DVec3> {
    deform_in_place(&in_report_frame(doc), skin, pose)
}

/// [`deform`] for every skin of `doc` (the frame is converted once).
pub fn deform_all(doc: &Document, pose: &Pose) -> Vec<Vec<DVec3>> {
    let d = in_report_frame(doc);
    (0..d.skins.len()).map(|k| deform_in_place(&d, k, pose)).collect()
}

/// `doc` in the report frame: borrowed when it already is (so callers posing one document many
/// times convert it once, up front), else a converted copy.
pub fn in_report_frame(doc: &Document) -> std::borrow::Cow<'_, Document> {
    if doc.frame == Frame::REPORT {
        return std::borrow::Cow::Borrowed(doc);
    }
    let mut d = doc.clone();
    d.convert_frame(Frame::REPORT);
    std::borrow::Cow::Owned(d)
}

fn deform_in_place(d: &Document, skin: usize, pose: &Pose) -> Vec<DVec3> {
    let Some(s) = d.skins.get(skin) else { return Vec::new() };
    let Some(sk) = d.get_skeleton(s.skeleton) else { return Vec::new() };
    let posed = posed_worlds(sk, pose);
    let joint_mats: Vec<DMat4> =
        s.joints.iter().zip(&s.inverse_bind).map(|(j, ibm)| posed.get(j.index()).copied().unwrap_or(DMat4::IDENTITY) * *ibm).collect();
    let positions: Vec<DVec3> = match d.mesh_of(s) {
        Some(m) => m.positions.clone(),
        None => return Vec::new(),
    };
    positions
        .iter()
        .enumerate()
        .map(|(v, p)| {
            let bound = s.bind_shape.transform_point3(*p);
            if v >= s.influences.vertex_count() {
                return bound;
            }
            let mut acc = DVec3::ZERO;
            let mut total = 0.0;
            for (j, w) in s.influences.vertex(v) {
                if let Some(m) = joint_mats.get(j as usize) {
                    acc += m.transform_point3(bound) * w;
                    total += w;
                }
            }
            if total > 0.0 {
                acc / total
            } else {
                bound
            }
        })
        .collect()
}

/// The largest distance between corresponding vertices (metres); `None` when counts differ.
pub fn max_deviation(a: &[DVec3], b: &[DVec3]) -> Option<f64> {
    (a.len() == b.len()).then(|| a.iter().zip(b).map(|(x, y)| x.distance(*y)).fold(0.0, f64::max))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Bone, BoneId, Mesh, Skeleton, Transform};
    use crate::skin::{Influences, Skin};

    fn two_bone(frame: Frame, local_twist: DQuat) -> Document {
        // A vertical chain; the second bone's local axes are twisted differently per variant.
        let mut sk = Skeleton::new("s");
        sk.push(Bone::new("a", None, Transform::from_rt(local_twist, DVec3::ZERO)));
        sk.push(Bone::new(
            "b",
            Some(BoneId::new(0)),
            Transform::from_rt(DQuat::IDENTITY, local_twist.inverse() * DVec3::new(0.0, 1.0, 0.0)),
        ));
        let w = sk.world_matrices();
        let mut d = Document::new(frame);
        d.meshes.push(Mesh {
            name: "m".into(),
            positions: vec![DVec3::new(0.2, 0.5, 0.0), DVec3::new(0.0, 1.5, 0.1)],
            ..Default::default()
        });
        d.skins.push(Skin {
            name: "k".into(),
            skeleton: crate::SkeletonId::new(0),
            mesh: Some(crate::MeshId::new(0)),
            joints: vec![BoneId::new(0), BoneId::new(1)],
            inverse_bind: w.iter().map(|m| m.inverse()).collect(),
            bind_shape: DMat4::IDENTITY,
            influences: Influences::from_lists(vec![vec![(0, 1.0)], vec![(0, 0.3), (1, 0.7)]]),
            ext: Default::default(),
        });
        d.skeletons.push(sk);
        d
    }

    #[test]
    fn pose_is_independent_of_local_axes_and_frame() {
        let a = two_bone(Frame::GLTF, DQuat::IDENTITY);
        let b = two_bone(Frame::GLTF, DQuat::from_rotation_z(0.7));
        let mut c = a.clone();
        c.convert_frame(Frame::SECOND_LIFE);
        for seed in 0..5 {
            let pose = random_pose(["a", "b"], seed, 1.0);
            let da = deform(&a, 0, &pose);
            assert!(max_deviation(&da, &deform(&b, 0, &pose)).unwrap() < 1e-12);
            assert!(max_deviation(&da, &deform(&c, 0, &pose)).unwrap() < 1e-12);
        }
        // And a pose really moves vertices.
        let pose = random_pose(["a", "b"], 1, 1.0);
        assert!(max_deviation(&deform(&a, 0, &pose), &deform(&a, 0, &Pose::new())).unwrap() > 1e-3);
    }
}
