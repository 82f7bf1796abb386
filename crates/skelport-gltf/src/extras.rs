//! What skelport keeps in glTF `extras.skelport` (things glTF cannot hold natively), so that
//! X → glTF → X keeps them while other importers see a plain glTF.

use serde::{Deserialize, Serialize};
use skelport_ir::{BoneAnchors, Extensions};
use std::borrow::Cow;

/// `nodes[i].extras.skelport` for a bone. The writer borrows the bone's anchors and extension
/// data (they are only serialized); the reader owns what it parsed.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct BoneExtras<'a> {
    /// Bone length (head → tail along local +Y).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length: Option<f64>,
    /// Blender roll in radians, as the source gave it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roll: Option<f64>,
    /// MPFB placement anchors.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub anchors: Option<Cow<'a, BoneAnchors>>,
    /// The mirror bone's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mirror: Option<String>,
    /// Written only when it differs from "is a skin joint".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deform: Option<bool>,
    /// Other formats' extension data on the bone.
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Cow<'a, Extensions>,
    /// Marks the identity node skelport adds above a skeleton with several roots (glTF needs
    /// one common root for a skin's joints); the reader drops it again.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub synthetic_root: bool,
    /// The bone's name when the node's had to differ (node names are unique in a written file).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// The IR skeleton's extension data, on the skeleton's root node: importers that keep a
    /// node's extras drop a skin's (Blender's does).
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub skeleton_ext: Cow<'a, Extensions>,
}

/// `skins[i].extras.skelport`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct SkinExtras {
    /// The IR skeleton's name (glTF has no skeleton object).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub skeleton: Option<String>,
    /// The IR skeleton's extension data, as files written before it moved to the skeleton's root
    /// node ([`BoneExtras::skeleton_ext`]) hold it: read, not written.
    #[serde(default, skip_serializing)]
    pub skeleton_ext: Extensions,
    /// The IR skin's extension data.
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Extensions,
}

/// `meshes[i].extras.skelport`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct MeshExtras {
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Extensions,
    /// The vertices the writer appended where per-corner normals or UVs differ at a vertex
    /// (seams): vertex `n + k` of the primitive is a copy of vertex `split_from[k]`, the first `n`
    /// being the IR mesh's own. The reader folds the copies back into per-corner values, so the
    /// vertex numbering that rigs and weight files refer to comes back unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub split_from: Vec<u32>,
    /// The IR's UV set names (`TEXCOORD_n` has none), when any is not empty.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub uv_names: Vec<String>,
}

/// Top-level `extras.skelport`.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub(crate) struct DocExtras {
    #[serde(default, skip_serializing_if = "Extensions::is_empty")]
    pub ext: Extensions,
}
