//! Coordinate frames and exact conversion between them.
//!
//! A frame names which axis is up, which way a character faces (forward), the handedness, and the
//! length of one unit in metres. The third axis is implied: in a right-handed frame the
//! character's *left* is `up × forward`; in a left-handed frame it is `forward × up`.
//!
//! Converting a document from frame A to frame B uses two maps:
//! * `φ = s·C` on world points, where `C` is the signed permutation matrix taking A's
//!   (forward, up, left) axes to B's and `s = A.metres_per_unit / B.metres_per_unit`;
//! * `ψ = s·P` on bone-local points, with `P = I` when `det C = +1` and `P = diag(-1, 1, 1)` (a
//!   mirror of local X, keeping local +Y head → tail) when the handedness changes.
//!
//! Then roots' world rest `W' = φ W ψ⁻¹`, other bones' local rest `L' = ψ L ψ⁻¹`, inverse bind
//! matrices `IBM' = ψ IBM φ⁻¹`, bind-shape matrices `φ B φ⁻¹`, positions `φ p`, normals `C n`.
//! `C` has entries 0 and ±1, so positions and directions convert without rounding.

use crate::document::{Document, Normals, Transform};
use glam::{DMat3, DMat4, DQuat, DVec3};
use serde::{Deserialize, Serialize};

/// A signed coordinate axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Axis {
    #[serde(rename = "+X")]
    PosX,
    #[serde(rename = "-X")]
    NegX,
    #[serde(rename = "+Y")]
    PosY,
    #[serde(rename = "-Y")]
    NegY,
    #[serde(rename = "+Z")]
    PosZ,
    #[serde(rename = "-Z")]
    NegZ,
}

impl Axis {
    /// The unit vector of this axis.
    pub fn vector(self) -> DVec3 {
        match self {
            Axis::PosX => DVec3::X,
            Axis::NegX => DVec3::NEG_X,
            Axis::PosY => DVec3::Y,
            Axis::NegY => DVec3::NEG_Y,
            Axis::PosZ => DVec3::Z,
            Axis::NegZ => DVec3::NEG_Z,
        }
    }
    fn component(self) -> usize {
        match self {
            Axis::PosX | Axis::NegX => 0,
            Axis::PosY | Axis::NegY => 1,
            Axis::PosZ | Axis::NegZ => 2,
        }
    }
}

/// Right- or left-handed coordinates.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Handedness {
    Right,
    Left,
}

/// A document's coordinate frame. There is no `Default`: a reader names its format's frame.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Frame {
    pub up: Axis,
    pub forward: Axis,
    pub handedness: Handedness,
    pub metres_per_unit: f64,
}

/// Why two axes do not make a frame.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("up axis {up:?} and forward axis {forward:?} must be perpendicular")]
pub struct BadFrame {
    pub up: Axis,
    pub forward: Axis,
}

impl Frame {
    /// glTF 2.0: +Y up, +Z forward, right-handed, metres. Also skelport's report frame.
    pub const GLTF: Frame = Frame { up: Axis::PosY, forward: Axis::PosZ, handedness: Handedness::Right, metres_per_unit: 1.0 };
    /// Blender / MPFB: +Z up, characters face −Y, right-handed, metres.
    pub const BLENDER: Frame = Frame { up: Axis::PosZ, forward: Axis::NegY, handedness: Handedness::Right, metres_per_unit: 1.0 };
    /// Second Life: +Z up, avatars face +X, right-handed, metres.
    pub const SECOND_LIFE: Frame = Frame { up: Axis::PosZ, forward: Axis::PosX, handedness: Handedness::Right, metres_per_unit: 1.0 };
    /// The canonical report frame used by `inspect --json` and `diff` (glTF's).
    pub const REPORT: Frame = Frame::GLTF;

    /// Check that up and forward are perpendicular and the unit is positive and finite.
    pub fn check(&self) -> Result<(), BadFrame> {
        if self.up.component() == self.forward.component() || !(self.metres_per_unit.is_finite() && self.metres_per_unit > 0.0) {
            return Err(BadFrame { up: self.up, forward: self.forward });
        }
        Ok(())
    }

    /// The character's left axis implied by up, forward and handedness.
    pub fn left(&self) -> DVec3 {
        let (u, f) = (self.up.vector(), self.forward.vector());
        match self.handedness {
            Handedness::Right => u.cross(f),
            Handedness::Left => f.cross(u),
        }
    }

    /// Columns (forward, up, left) in this frame's coordinates.
    fn basis(&self) -> DMat3 {
        DMat3::from_cols(self.forward.vector(), self.up.vector(), self.left())
    }

    /// The signed permutation `C` mapping coordinates in `self` to coordinates in `to`
    /// (without the unit scale).
    pub fn rotation_to(&self, to: &Frame) -> DMat3 {
        // basis is orthonormal with entries 0/±1, so its inverse is its transpose: exact.
        to.basis() * self.basis().transpose()
    }

    /// Metres-per-unit ratio `self / to`: multiply lengths in `self` by this to get `to` units.
    pub fn scale_to(&self, to: &Frame) -> f64 {
        self.metres_per_unit / to.metres_per_unit
    }

    /// The point map `φ = s·C` as a 4×4 matrix.
    pub fn point_map_to(&self, to: &Frame) -> DMat4 {
        DMat4::from_mat3(self.rotation_to(to) * self.scale_to(to))
    }
}

/// The maps of one frame change, precomputed.
#[derive(Debug, Clone, Copy)]
pub struct FrameMap {
    /// Signed permutation C.
    pub c: DMat3,
    /// Unit scale s.
    pub s: f64,
    /// Whether handedness flips (local X is mirrored).
    pub mirror: bool,
}

impl FrameMap {
    /// The maps taking `from` to `to`.
    pub fn new(from: &Frame, to: &Frame) -> Self {
        let c = from.rotation_to(to);
        FrameMap { c, s: from.scale_to(to), mirror: c.determinant() < 0.0 }
    }

    /// True when nothing changes.
    pub fn is_identity(&self) -> bool {
        self.c == DMat3::IDENTITY && self.s == 1.0
    }

    fn p(&self) -> DMat3 {
        if self.mirror {
            DMat3::from_diagonal(DVec3::new(-1.0, 1.0, 1.0))
        } else {
            DMat3::IDENTITY
        }
    }

    /// Map a world point.
    pub fn point(&self, p: DVec3) -> DVec3 {
        self.c * p * self.s
    }
    /// Map a world direction (no scale).
    pub fn direction(&self, d: DVec3) -> DVec3 {
        self.c * d
    }
    /// φ as a matrix.
    pub fn phi(&self) -> DMat4 {
        DMat4::from_mat3(self.c * self.s)
    }
    /// ψ as a matrix.
    pub fn psi(&self) -> DMat4 {
        DMat4::from_mat3(self.p() * self.s)
    }

    /// Root bone rest: `φ W ψ⁻¹`.
    pub fn root_transform(&self, t: &Transform) -> Transform {
        // Rotation part: C R P (P = P⁻¹); scale part: P S P = S for diagonal S.
        let r = DMat3::from_quat(t.rotation);
        let rot = self.c * r * self.p();
        Transform { translation: self.point(t.translation), rotation: quat_from_rotation(&rot), scale: t.scale }
    }

    /// Child bone rest: `ψ L ψ⁻¹`.
    pub fn local_transform(&self, t: &Transform) -> Transform {
        let rotation = if self.mirror {
            // P R P with P = diag(-1,1,1) is the rotation with quaternion (x, -y, -z, w).
            DQuat::from_xyzw(t.rotation.x, -t.rotation.y, -t.rotation.z, t.rotation.w)
        } else {
            t.rotation
        };
        let translation =
            if self.mirror { DVec3::new(-t.translation.x, t.translation.y, t.translation.z) * self.s } else { t.translation * self.s };
        Transform { translation, rotation, scale: t.scale }
    }

    /// Inverse bind matrix: `ψ IBM φ⁻¹`.
    pub fn inverse_bind(&self, m: &DMat4) -> DMat4 {
        self.psi() * *m * self.phi().inverse()
    }

    /// A world-space-to-world-space matrix (bind shape): `φ B φ⁻¹`.
    pub fn world_matrix(&self, m: &DMat4) -> DMat4 {
        self.phi() * *m * self.phi().inverse()
    }
}

/// Quaternion of a proper rotation matrix, exact for the signed permutations frames produce.
pub fn quat_from_rotation(m: &DMat3) -> DQuat {
    DQuat::from_mat3(m).normalize()
}

impl Document {
    /// This document in frame `to`: itself when it is already there, else a converted copy. A
    /// writer that works in one frame takes its input this way, so a caller that converted the
    /// document first (see [`crate::Format::write_frame`]) spares it a copy of every mesh.
    pub fn in_frame(&self, to: Frame) -> std::borrow::Cow<'_, Document> {
        if self.frame == to {
            std::borrow::Cow::Borrowed(self)
        } else {
            let mut d = self.clone();
            d.convert_frame(to);
            std::borrow::Cow::Owned(d)
        }
    }

    /// Convert every position, rotation and matrix into `to`, exactly (see the module docs of
    /// [`crate::frame`]). Extension data is not touched: it belongs to the source format.
    pub fn convert_frame(&mut self, to: Frame) {
        let map = FrameMap::new(&self.frame, &to);
        self.frame = to;
        if map.is_identity() {
            return;
        }
        for sk in &mut self.skeletons {
            for b in &mut sk.bones {
                b.rest = if b.parent.is_some() { map.local_transform(&b.rest) } else { map.root_transform(&b.rest) };
                if let Some(l) = b.length.as_mut() {
                    *l *= map.s;
                }
                if let Some(a) = b.anchors.as_mut() {
                    for end in [&mut a.head, &mut a.tail] {
                        end.offset = map.point(end.offset);
                        if let Some(d) = end.default_position.as_mut() {
                            *d = map.point(*d);
                        }
                    }
                }
            }
        }
        // Meshes hold most of a big document: turned on every core.
        let big = crate::mesh_work(&self.meshes) >= crate::PARALLEL_FROM;
        let turn = |m: &mut crate::Mesh| {
            for p in &mut m.positions {
                *p = map.point(*p);
            }
            match &mut m.normals {
                Some(Normals::PerVertex(n)) | Some(Normals::PerCorner(n)) => {
                    for v in n {
                        *v = map.direction(*v);
                    }
                }
                None => {}
            }
            if map.mirror {
                // A mirror flips winding: reverse each face to keep outward normals outward, and
                // every per-corner attribute with it so each value stays on its corner.
                let mut corner_lists: Vec<&mut [DVec3]> = Vec::new();
                if let Some(Normals::PerCorner(n)) = &mut m.normals {
                    corner_lists.push(n);
                }
                let mut uv_lists: Vec<&mut [glam::DVec2]> =
                    m.uvs.iter_mut().filter(|s| s.uvs.is_per_corner()).map(|s| s.uvs.values_mut().as_mut_slice()).collect();
                let mut start = 0usize;
                for &c in &m.faces.counts {
                    let end = (start + c as usize).min(m.faces.indices.len());
                    m.faces.indices[start..end].reverse();
                    for l in &mut corner_lists {
                        if end <= l.len() {
                            l[start..end].reverse();
                        }
                    }
                    for l in &mut uv_lists {
                        if end <= l.len() {
                            l[start..end].reverse();
                        }
                    }
                    start = end;
                }
            }
        };
        crate::map_in_order(self.meshes.iter_mut().collect(), big, turn);
        for s in &mut self.skins {
            for ibm in &mut s.inverse_bind {
                *ibm = map.inverse_bind(ibm);
            }
            s.bind_shape = map.world_matrix(&s.bind_shape);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A document big enough to turn its meshes on every core gives each mesh what turning it
    /// alone gives.
    #[test]
    fn meshes_turned_in_parallel_equal_meshes_turned_alone() {
        let mesh = |k: usize, n: usize| {
            let mut m = crate::Mesh { name: format!("m{k}"), ..Default::default() };
            m.positions = (0..n).map(|i| DVec3::new(i as f64, k as f64, 0.5 * i as f64)).collect();
            m.normals = Some(Normals::PerVertex(vec![DVec3::Z; n]));
            m.faces.counts = vec![3; n / 3];
            m.faces.indices = (0..(n / 3 * 3) as u32).collect();
            m
        };
        let mut big = Document::new(Frame::BLENDER);
        let per = crate::PARALLEL_FROM / 4;
        big.meshes = (0..4).map(|k| mesh(k, per)).collect();
        let mut to = Frame::GLTF;
        to.handedness = Handedness::Left;
        big.convert_frame(to);
        for k in 0..4 {
            let mut alone = Document::new(Frame::BLENDER);
            alone.meshes.push(mesh(k, per));
            alone.convert_frame(to);
            assert!(alone.meshes[0] == big.meshes[k], "mesh {k}");
        }
    }

    /// A mirroring change of frame reverses each face's winding; every per-corner attribute
    /// must be reversed with it, so each corner keeps its own normal and texture coordinate.
    #[test]
    fn a_mirror_keeps_per_corner_values_on_their_corners() {
        let mut d = Document::new(Frame::BLENDER);
        let mut m = crate::Mesh { name: "m".into(), ..Default::default() };
        m.positions = (0..5).map(|i| DVec3::new(i as f64, (i * i) as f64, 1.0)).collect();
        m.faces.counts = vec![3, 4];
        m.faces.indices = vec![0, 1, 2, 1, 2, 3, 4];
        // Each corner's value names its vertex, so after the mirror it must still match.
        m.normals = Some(Normals::PerCorner(m.faces.indices.iter().map(|&v| DVec3::new(0.0, 0.0, v as f64 + 1.0)).collect()));
        m.uvs.push(crate::UvSet {
            name: String::new(),
            uvs: crate::Uvs::PerCorner(m.faces.indices.iter().map(|&v| glam::DVec2::new(v as f64, 0.5)).collect()),
        });
        d.meshes.push(m);
        let mut to = Frame::GLTF;
        to.handedness = Handedness::Left;
        d.convert_frame(to);
        let m = &d.meshes[0];
        assert_eq!(m.faces.indices, vec![2, 1, 0, 4, 3, 2, 1]);
        let uv = m.uvs[0].uvs.values();
        let n = m.normals.as_ref().unwrap().values();
        for (c, &v) in m.faces.indices.iter().enumerate() {
            assert_eq!(uv[c].x, v as f64, "uv of corner {c}");
            assert!((n[c].length() - (v as f64 + 1.0)).abs() < 1e-12, "normal of corner {c}");
        }
    }

    #[test]
    fn blender_to_gltf_is_the_usual_swizzle() {
        let c = Frame::BLENDER.rotation_to(&Frame::GLTF);
        // Blender (x, y, z) → glTF (x, z, -y)
        assert_eq!(c * DVec3::new(1.0, 2.0, 3.0), DVec3::new(1.0, 3.0, -2.0));
    }

    #[test]
    fn sl_to_gltf() {
        let c = Frame::SECOND_LIFE.rotation_to(&Frame::GLTF);
        // SL forward +X → glTF +Z; SL left +Y → glTF +X; up Z → Y.
        assert_eq!(c * DVec3::X, DVec3::Z);
        assert_eq!(c * DVec3::Y, DVec3::X);
        assert_eq!(c * DVec3::Z, DVec3::Y);
    }

    #[test]
    fn round_trip_is_identity() {
        for a in [Frame::GLTF, Frame::BLENDER, Frame::SECOND_LIFE] {
            for b in [Frame::GLTF, Frame::BLENDER, Frame::SECOND_LIFE] {
                let c = a.rotation_to(&b) * b.rotation_to(&a);
                assert_eq!(c, DMat3::IDENTITY);
            }
        }
    }

    #[test]
    fn bad_frame_is_refused() {
        let f = Frame { up: Axis::PosY, forward: Axis::NegY, ..Frame::GLTF };
        assert!(f.check().is_err());
    }
}
