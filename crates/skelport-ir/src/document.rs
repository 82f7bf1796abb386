//! The document model: documents, skeletons, bones, meshes.

use crate::anchor::BoneAnchors;
use crate::ext::Extensions;
use crate::frame::Frame;
use crate::skin::Skin;
use glam::{DMat4, DQuat, DVec2, DVec3};
use serde::{Deserialize, Serialize};

/// An index that does not fit a 32-bit id (more than `u32::MAX` bones, skeletons or meshes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("index {0} does not fit a 32-bit id")]
pub struct IdOverflow(pub usize);

/// Defines a typed `u32` index into one of the document's arrays. The field is private: ids
/// are made with `new` (from a `u32`), `TryFrom<usize>` (checked), or `from_index` (a position
/// in an array that a limit already keeps below `u32::MAX`, see its docs). Serialized as the bare
/// number (`serde(transparent)`), so the IR JSON is the same as with a plain integer.
macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $array:literal) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
        #[serde(transparent)]
        pub struct $name(u32);

        impl $name {
            #[doc = concat!("The id of position `raw` in ", $array, ".")]
            #[inline]
            pub const fn new(raw: u32) -> Self {
                $name(raw)
            }

            #[doc = concat!("The id of position `i` in ", $array, ".")]
            ///
            /// # Panics
            /// When `i > u32::MAX`. Only call it with a position in an array that exists in
            /// memory: every reader makes at least one input byte per element, and inputs are
            /// limited to 1 GiB (`MAX_INPUT_BYTES`, docs/limits.md), far below 2³² elements. For
            /// a count from elsewhere use `TryFrom<usize>`.
            #[inline]
            #[track_caller]
            pub fn from_index(i: usize) -> Self {
                match Self::try_from(i) {
                    Ok(id) => id,
                    Err(e) => panic!("{}: {e}", stringify!($name)),
                }
            }

            #[doc = concat!("The position in ", $array, ".")]
            #[inline]
            pub const fn index(self) -> usize {
                self.0 as usize
            }

            /// The id as its `u32`.
            #[inline]
            pub const fn raw(self) -> u32 {
                self.0
            }
        }

        impl TryFrom<usize> for $name {
            type Error = IdOverflow;
            #[inline]
            fn try_from(i: usize) -> Result<Self, IdOverflow> {
                u32::try_from(i).map($name).map_err(|_| IdOverflow(i))
            }
        }

        impl From<u32> for $name {
            #[inline]
            fn from(raw: u32) -> Self {
                $name(raw)
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                self.0.fmt(f)
            }
        }
    };
}

typed_id!(
    /// A typed index of a bone inside its [`Skeleton`]'s `bones` array.
    BoneId,
    "`Skeleton::bones`"
);
typed_id!(
    /// A typed index of a skeleton in [`Document::skeletons`].
    SkeletonId,
    "`Document::skeletons`"
);
typed_id!(
    /// A typed index of a mesh in [`Document::meshes`].
    MeshId,
    "`Document::meshes`"
);

/// Translation, rotation (unit quaternion x,y,z,w) and scale, applied scale → rotate → translate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Transform {
    pub translation: DVec3,
    pub rotation: DQuat,
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub scale: DVec3,
}

fn one() -> DVec3 {
    DVec3::ONE
}
fn is_one(v: &DVec3) -> bool {
    *v == DVec3::ONE
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    /// The identity transform.
    pub const IDENTITY: Transform = Transform { translation: DVec3::ZERO, rotation: DQuat::IDENTITY, scale: DVec3::ONE };

    /// A transform with only translation and rotation.
    pub fn from_rt(rotation: DQuat, translation: DVec3) -> Self {
        Self { translation, rotation, scale: DVec3::ONE }
    }

    /// The 4×4 matrix of this transform.
    pub fn matrix(&self) -> DMat4 {
        DMat4::from_scale_rotation_translation(self.scale, self.rotation, self.translation)
    }

    /// Decompose an affine matrix. Returns `None` when it has a shear or a negative determinant
    /// (which TRS cannot express) beyond `1e-6` relative error, or is not finite.
    pub fn from_matrix(m: &DMat4) -> Option<Self> {
        if !m.is_finite() {
            return None;
        }
        let (scale, rotation, translation) = m.to_scale_rotation_translation();
        let t = Transform { translation, rotation: rotation.normalize(), scale };
        let back = t.matrix();
        let err = (back - *m).to_cols_array().iter().fold(0.0f64, |a, b| a.max(b.abs()));
        let mag = m.to_cols_array().iter().fold(1.0f64, |a, b| a.max(b.abs()));
        (m.determinant() > 0.0 && err <= 1e-6 * mag).then_some(t)
    }
}

/// One bone (joint).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bone {
    pub name: String,
    /// The parent bone; always a smaller index than this bone's own. `None` for roots.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<BoneId>,
    /// Rest transform relative to the parent (roots: relative to the document's space).
    pub rest: Transform,
    /// Distance head → tail along the bone's local +Y, for formats with bone tails.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    /// Blender roll in radians, as the source gave it. Informational: `rest` holds the orientation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roll: Option<f64>,
    /// Whether the bone deforms geometry.
    #[serde(default = "yes", skip_serializing_if = "is_true")]
    pub deform: bool,
    /// The bone's mirror counterpart (left ↔ right).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror: Option<BoneId>,
    /// How head and tail are placed on a mesh (MPFB strategies), for refitting.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchors: Option<BoneAnchors>,
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Extensions,
}

fn yes() -> bool {
    true
}
fn is_true(b: &bool) -> bool {
    *b
}

impl Bone {
    /// A deforming bone with the given name, parent and rest transform.
    pub fn new(name: impl Into<String>, parent: Option<BoneId>, rest: Transform) -> Self {
        Bone {
            name: name.into(),
            parent,
            rest,
            length: None,
            roll: None,
            deform: true,
            mirror: None,
            anchors: None,
            ext: Extensions::default(),
        }
    }
}

/// A skeleton: bones, parents before children.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Skeleton {
    pub name: String,
    pub bones: Vec<Bone>,
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Extensions,
}

impl Skeleton {
    /// An empty skeleton.
    pub fn new(name: impl Into<String>) -> Self {
        Skeleton { name: name.into(), bones: Vec::new(), ext: Extensions::default() }
    }

    /// Append a bone and return its id. The caller keeps parents before children.
    pub fn push(&mut self, bone: Bone) -> BoneId {
        self.bones.push(bone);
        BoneId::from_index(self.bones.len() - 1)
    }

    /// The bone with this id.
    pub fn bone(&self, id: BoneId) -> &Bone {
        &self.bones[id.index()]
    }

    /// Find a bone by exact name (linear scan; build a map for repeated look-ups).
    pub fn find(&self, name: &str) -> Option<BoneId> {
        self.bones.iter().position(|b| b.name == name).map(BoneId::from_index)
    }

    /// Name → id map.
    pub fn name_map(&self) -> std::collections::HashMap<&str, BoneId> {
        self.bones.iter().enumerate().map(|(i, b)| (b.name.as_str(), BoneId::from_index(i))).collect()
    }

    /// World (document-space) rest matrices of every bone, computed in one pass in array order.
    /// Requires parents before children (a validated skeleton); a bad parent is treated as a root.
    pub fn world_matrices(&self) -> Vec<DMat4> {
        let mut out: Vec<DMat4> = Vec::with_capacity(self.bones.len());
        for (i, b) in self.bones.iter().enumerate() {
            let local = b.rest.matrix();
            let m = match b.parent {
                Some(p) if p.index() < i => out[p.index()] * local,
                _ => local,
            };
            out.push(m);
        }
        out
    }

    /// World rest transforms (translation, rotation, scale) of every bone.
    pub fn world_transforms(&self) -> Vec<Transform> {
        let mut out: Vec<Transform> = Vec::with_capacity(self.bones.len());
        for (i, b) in self.bones.iter().enumerate() {
            let t = match b.parent {
                Some(p) if p.index() < i => {
                    let pw = out[p.index()];
                    if pw.scale == DVec3::ONE {
                        Transform {
                            translation: pw.translation + pw.rotation * b.rest.translation,
                            rotation: (pw.rotation * b.rest.rotation).normalize(),
                            scale: b.rest.scale,
                        }
                    } else {
                        Transform::from_matrix(&(pw.matrix() * b.rest.matrix())).unwrap_or_else(|| {
                            let m = pw.matrix() * b.rest.matrix();
                            let (s, r, t) = m.to_scale_rotation_translation();
                            Transform { translation: t, rotation: r, scale: s }
                        })
                    }
                }
                _ => b.rest,
            };
            out.push(t);
        }
        out
    }

    /// Direct children of each bone.
    pub fn children(&self) -> Vec<Vec<BoneId>> {
        let mut ch = vec![Vec::new(); self.bones.len()];
        for (i, b) in self.bones.iter().enumerate() {
            if let Some(p) = b.parent {
                if p.index() < self.bones.len() {
                    ch[p.index()].push(BoneId::from_index(i));
                }
            }
        }
        ch
    }

    /// Depth of each bone (roots 0).
    pub fn depths(&self) -> Vec<usize> {
        let mut d = vec![0usize; self.bones.len()];
        for (i, b) in self.bones.iter().enumerate() {
            if let Some(p) = b.parent {
                if p.index() < i {
                    d[i] = d[p.index()] + 1;
                }
            }
        }
        d
    }

    /// Number of all descendants of each bone (not only direct children).
    pub fn descendant_counts(&self) -> Vec<usize> {
        let mut c = vec![0usize; self.bones.len()];
        for i in (0..self.bones.len()).rev() {
            if let Some(p) = self.bones[i].parent {
                if p.index() < i {
                    c[p.index()] += c[i] + 1;
                }
            }
        }
        c
    }

    /// Reorder bones so parents come before children (stable otherwise), remapping parent and
    /// mirror ids. Returns the permutation `new_index → old_index`, or `Err(bone name)` when the
    /// parent links contain a cycle.
    pub fn sort_parents_first(&mut self) -> Result<Vec<usize>, String> {
        let n = self.bones.len();
        let parents: Vec<Option<usize>> = self.bones.iter().map(|b| b.parent.map(|p| p.index())).collect();
        let order = crate::proc::parents_first(&parents).map_err(|bad| self.bones[bad].name.clone())?;
        let mut new_of_old = vec![0u32; n];
        for (new, &old) in order.iter().enumerate() {
            new_of_old[old] = new as u32;
        }
        let mut old = std::mem::take(&mut self.bones);
        let mut bones: Vec<Bone> = Vec::with_capacity(n);
        for &o in &order {
            let mut b = std::mem::replace(&mut old[o], Bone::new("", None, Transform::IDENTITY));
            b.parent = b.parent.filter(|p| p.index() < n).map(|p| BoneId::new(new_of_old[p.index()]));
            b.mirror = b.mirror.filter(|p| p.index() < n).map(|p| BoneId::new(new_of_old[p.index()]));
            bones.push(b);
        }
        self.bones = bones;
        Ok(order)
    }
}

/// Polygons as a flat index list with a vertex count per face.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Faces {
    /// Number of corners of each face.
    pub counts: Vec<u32>,
    /// Vertex indices, `counts.iter().sum()` of them.
    pub indices: Vec<u32>,
}

impl Faces {
    /// Iterate faces as slices of vertex indices.
    pub fn iter(&self) -> impl Iterator<Item = &[u32]> {
        let mut start = 0usize;
        self.counts.iter().map(move |&c| {
            let s = start;
            start += c as usize;
            &self.indices[s.min(self.indices.len())..start.min(self.indices.len())]
        })
    }

    /// Fan-triangulate every polygon; returns a flat triangle index list.
    pub fn triangulate(&self) -> Vec<u32> {
        let mut out = Vec::with_capacity(self.indices.len() * 2);
        for f in self.iter() {
            for k in 1..f.len().saturating_sub(1) {
                out.extend_from_slice(&[f[0], f[k], f[k + 1]]);
            }
        }
        out
    }

    /// Fan-triangulate every polygon as [`Faces::triangulate`] does, giving each triangle
    /// corner's *corner* number (its position in `indices`) instead of its vertex: per-corner
    /// attributes are read through it.
    pub fn triangulated_corners(&self) -> Vec<u32> {
        // Only triangles (most meshes written for games and avatars): the corners in order, by
        // a loop that vectorises (37 instructions a triangle the general way).
        if self.counts.len().checked_mul(3) == Some(self.indices.len()) && self.counts.iter().fold(true, |all, &c| all & (c == 3)) {
            return (0..self.indices.len() as u32).collect();
        }
        let mut out = Vec::with_capacity(self.indices.len() * 2);
        let mut start = 0u32;
        for &c in &self.counts {
            // Faces past the end of `indices` (an invalid document) give no triangles.
            let n = c.min((self.indices.len() as u32).saturating_sub(start));
            for k in 1..n.saturating_sub(1) {
                out.extend_from_slice(&[start, start + k, start + k + 1]);
            }
            start = start.saturating_add(c);
        }
        out
    }

    /// Number of faces.
    pub fn len(&self) -> usize {
        self.counts.len()
    }

    /// True when there are no faces.
    pub fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

/// A mesh attribute stored per vertex or per face corner. Per-corner values follow
/// `Faces::indices` (one value per corner, in corner order): sources that index attributes
/// separately from positions (OBJ `vt`/`vn`, Collada inputs) keep their seams that way, and
/// writers whose format is per vertex (glTF, G4MF) split vertices where corners differ.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "values", rename_all = "snake_case")]
pub enum Attribute<T> {
    PerVertex(Vec<T>),
    PerCorner(Vec<T>),
}

impl<T> Attribute<T> {
    /// The values, whichever way they are stored.
    pub fn values(&self) -> &[T] {
        match self {
            Attribute::PerVertex(v) | Attribute::PerCorner(v) => v,
        }
    }
    /// The values, mutably.
    pub fn values_mut(&mut self) -> &mut Vec<T> {
        match self {
            Attribute::PerVertex(v) | Attribute::PerCorner(v) => v,
        }
    }
    /// True for per-corner storage.
    pub fn is_per_corner(&self) -> bool {
        matches!(self, Attribute::PerCorner(_))
    }
}

/// Normals, per vertex or per face corner (Collada and OBJ index them per corner).
pub type Normals = Attribute<DVec3>;

/// Texture coordinates, per vertex or per face corner.
pub type Uvs = Attribute<DVec2>;

/// One set of texture coordinates. The origin is the texture's bottom left and `v` runs up
/// (OBJ's, Collada's and Blender's convention); glTF and G4MF, whose `v` runs down, flip it in
/// their reader and writer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UvSet {
    /// The set's name where the source names one (a Collada `<input set>`, a glTF `TEXCOORD_n`
    /// has none); may be empty.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    pub uvs: Uvs,
}

/// A named set of vertices (with optional weights: `None` means 1 each).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct VertexGroup {
    pub name: String,
    pub vertices: Vec<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub weights: Option<Vec<f64>>,
}

/// Optional mesh geometry.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Mesh {
    pub name: String,
    pub positions: Vec<DVec3>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normals: Option<Normals>,
    /// Texture coordinate sets, the first being the one formats with a single set use.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uvs: Vec<UvSet>,
    #[serde(default)]
    pub faces: Faces,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub groups: Vec<VertexGroup>,
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Extensions,
}

/// A whole document: what a reader produces and a writer consumes.
///
/// There is no `Default`: a document's frame says how to read every number in it, so whoever
/// makes one names it ([`Document::new`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Document {
    /// The coordinate frame of every position, rotation and matrix in the document.
    pub frame: Frame,
    #[serde(default)]
    pub skeletons: Vec<Skeleton>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub meshes: Vec<Mesh>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skins: Vec<Skin>,
    /// The format the document was read from (`"mpfb"`, `"gltf"` …), if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source_format: Option<String>,
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Extensions,
}

impl Document {
    /// An empty document in the given frame.
    pub fn new(frame: Frame) -> Self {
        Document { frame, skeletons: Vec::new(), meshes: Vec::new(), skins: Vec::new(), source_format: None, ext: Extensions::default() }
    }

    /// The skeleton with this id. Panics when it is out of range (a document that
    /// [`crate::validate::validate`] accepted has every skin's skeleton in range).
    pub fn skeleton(&self, id: SkeletonId) -> &Skeleton {
        &self.skeletons[id.index()]
    }

    /// The skeleton with this id, or `None` when it is out of range.
    pub fn get_skeleton(&self, id: SkeletonId) -> Option<&Skeleton> {
        self.skeletons.get(id.index())
    }

    /// The skeleton with this id, mutably. Panics when it is out of range.
    pub fn skeleton_mut(&mut self, id: SkeletonId) -> &mut Skeleton {
        &mut self.skeletons[id.index()]
    }

    /// The mesh with this id. Panics when it is out of range (as for skeletons).
    pub fn mesh(&self, id: MeshId) -> &Mesh {
        &self.meshes[id.index()]
    }

    /// The mesh with this id, or `None` when it is out of range.
    pub fn get_mesh(&self, id: MeshId) -> Option<&Mesh> {
        self.meshes.get(id.index())
    }

    /// A skin's mesh: `None` when the skin has none or its id is out of range.
    pub fn mesh_of(&self, skin: &Skin) -> Option<&Mesh> {
        skin.mesh.and_then(|m| self.get_mesh(m))
    }

    /// The ids of every skeleton, in order.
    pub fn skeleton_ids(&self) -> impl Iterator<Item = SkeletonId> + '_ {
        (0..self.skeletons.len()).map(SkeletonId::from_index)
    }

    /// The skins bound to skeleton `id`.
    pub fn skins_of(&self, id: SkeletonId) -> impl Iterator<Item = &Skin> + '_ {
        self.skins.iter().filter(move |s| s.skeleton == id)
    }

    /// For each skeleton, the indices of the skins bound to it, in order: one pass over the
    /// skins, for code that visits every skeleton's skins (calling [`Document::skins_of`] per
    /// skeleton is quadratic in a file with many skeletons). A skin naming no skeleton is left out.
    pub fn skins_by_skeleton(&self) -> Vec<Vec<usize>> {
        let mut out = vec![Vec::new(); self.skeletons.len()];
        for (k, s) in self.skins.iter().enumerate() {
            if let Some(v) = out.get_mut(s.skeleton.index()) {
                v.push(k);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_checked_and_serialize_as_bare_numbers() {
        assert_eq!(BoneId::try_from(7usize), Ok(BoneId::new(7)));
        assert_eq!(SkeletonId::from_index(3).index(), 3);
        assert_eq!(MeshId::new(u32::MAX).raw(), u32::MAX);
        #[cfg(target_pointer_width = "64")]
        assert_eq!(BoneId::try_from(1usize << 32), Err(IdOverflow(1 << 32)), "no silent truncation to 0");
        // The IR JSON holds plain integers, as it did when these were `usize`/`u32`.
        assert_eq!(serde_json::to_string(&(BoneId::new(5), SkeletonId::new(1), Some(MeshId::new(2)))).unwrap(), "[5,1,2]");
        let back: (BoneId, SkeletonId, MeshId) = serde_json::from_str("[5,1,2]").unwrap();
        assert_eq!(back, (BoneId::new(5), SkeletonId::new(1), MeshId::new(2)));
        assert!(serde_json::from_str::<SkeletonId>("4294967296").is_err());
    }

    #[test]
    #[should_panic(expected = "MeshId")]
    #[cfg(target_pointer_width = "64")]
    fn from_index_panics_past_u32() {
        let _ = MeshId::from_index(1usize << 32);
    }

    #[test]
    fn accessors_follow_the_ids() {
        let mut d = Document::new(crate::Frame::BLENDER);
        d.skeletons.push(Skeleton::new("a"));
        d.skeletons.push(Skeleton::new("b"));
        d.meshes.push(Mesh { name: "m".into(), ..Default::default() });
        let skin = Skin {
            name: "s".into(),
            skeleton: SkeletonId::new(1),
            mesh: Some(MeshId::new(0)),
            joints: Vec::new(),
            inverse_bind: Vec::new(),
            bind_shape: DMat4::IDENTITY,
            influences: Default::default(),
            ext: Default::default(),
        };
        d.skins.push(skin.clone());
        assert_eq!(d.skeleton(skin.skeleton).name, "b");
        assert_eq!(d.mesh_of(&skin).map(|m| m.name.as_str()), Some("m"));
        assert!(d.get_skeleton(SkeletonId::new(2)).is_none() && d.get_mesh(MeshId::new(1)).is_none());
        assert_eq!(d.skins_of(SkeletonId::new(1)).count(), 1);
        assert_eq!(d.skins_of(SkeletonId::new(0)).count(), 0);
        let by = d.skins_by_skeleton();
        assert_eq!(by.len(), d.skeletons.len());
        for (si, ks) in by.iter().enumerate() {
            assert_eq!(ks.len(), d.skins_of(SkeletonId::from_index(si)).count());
        }
        assert_eq!(d.skeleton_ids().collect::<Vec<_>>(), [SkeletonId::new(0), SkeletonId::new(1)]);
    }
}
