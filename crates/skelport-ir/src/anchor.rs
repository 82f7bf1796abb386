//! MPFB-style placement anchors: how a bone's head or tail is found on a mesh, so a rig can be
//! refit to another body with the same vertex numbering. Positions and offsets are in the
//! document's frame and units.

use glam::DVec3;
use serde::{Deserialize, Serialize};

/// How one bone end is placed on a mesh.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "strategy", rename_all = "SCREAMING_SNAKE_CASE")]
pub enum AnchorStrategy {
    /// Mean of the vertices of a named vertex group (a MakeHuman "joint cube").
    Cube { group: String },
    /// One vertex.
    Vertex { index: u32 },
    /// Mean of the listed vertices (duplicates count again).
    Mean { indices: Vec<u32> },
    /// x of the first vertex, y of the second, z of the third (in the mesh's original axes,
    /// as the owning format defines them).
    Xyz { indices: Vec<u32> },
    /// No mesh rule: the default position is used.
    Default,
}

/// One placed bone end.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Anchor {
    #[serde(flatten)]
    pub strategy: AnchorStrategy,
    /// Added to the evaluated position.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub offset: DVec3,
    /// Where the end sits when the strategy cannot be evaluated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_position: Option<DVec3>,
}

fn is_zero(v: &DVec3) -> bool {
    *v == DVec3::ZERO
}

/// Anchors for both ends of a bone.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoneAnchors {
    pub head: Anchor,
    pub tail: Anchor,
}
