//! Pose math as the engine does it: a bone's Global is its parent's Global composed with its
//! Local, rigid (no scale); the frame AnvilToolkit files are in.

use crate::model::{same_number, Object};
use skelport_ir::{Axis, DQuat, DVec3, Frame, Handedness, Skeleton};

/// AnvilNext's frame: Z up, metres (1 world unit = 1 m), right-handed. Characters face −Y, as in
/// 3ds Max (Ubisoft's authoring tool) and Blender; this is an inference, see docs/formats/anvil.md.
pub const ANVIL_FRAME: Frame = Frame { up: Axis::PosZ, forward: Axis::NegY, handedness: Handedness::Right, metres_per_unit: 1.0 };

/// Tolerance for reporting Local ≠ inverse(parent Global) × Global.
pub const LOCAL_GLOBAL_TOLERANCE: f64 = 1e-5;

pub(crate) type Pose = (DVec3, DQuat);

pub(crate) fn compose(parent: Pose, local: Pose) -> Pose {
    (parent.0 + parent.1 * local.0, parent.1 * local.1)
}

pub(crate) fn relative(parent: Pose, global: Pose) -> Pose {
    let inv = parent.1.inverse();
    (inv * (global.0 - parent.0), inv * global.1)
}

pub(crate) fn pose_distance(a: Pose, b: Pose) -> f64 {
    let dp = (a.0 - b.0).abs().max_element();
    // q and -q are the same rotation.
    let dq = (a.1 - b.1).length().min((a.1 + b.1).length());
    dp.max(dq)
}

/// Whether two poses are the same to the engine ([`same_number`] on every component; `q` and
/// `-q` are the same rotation).
pub(crate) fn same_pose(stored: Pose, computed: Pose) -> bool {
    let (a, b) = (stored.0.to_array(), computed.0.to_array());
    let (q, r) = (stored.1.to_array(), computed.1.to_array());
    (0..3).all(|k| same_number(a[k], b[k])) && ((0..4).all(|k| same_number(q[k], r[k])) || (0..4).all(|k| same_number(q[k], -r[k])))
}

pub(crate) fn normalize(q: DQuat) -> DQuat {
    let l = q.length();
    if l > 0.0 && l.is_finite() {
        q / l
    } else {
        DQuat::IDENTITY
    }
}

/// What an AnvilToolkit file holds of each bone of an IR skeleton (already in [`ANVIL_FRAME`]),
/// as the engine composes it: `Global = parent Global ∘ Local`, rigid (no scale).
pub(crate) struct EnginePoses {
    /// Each bone's world translation and rotation (its world scale dropped).
    pub global: Vec<Pose>,
    /// Relative to the parent's Global (roots: their Global). Where the parent's world scale is
    /// exactly 1 this is the IR rest itself, untouched; under a scaled parent it is derived from
    /// the Globals, so every head stays where the source puts it (an unscaled Local would move
    /// the bones below a parent scaled ×100 by metres).
    pub local: Vec<Pose>,
    /// Bones whose world scale is not 1 (beyond float noise such as 0.99999994), and the scale.
    pub scaled: Vec<(usize, DVec3)>,
}

/// A world scale this close to 1 (relative) is float noise, not a scale.
pub const SCALE_NOISE: f64 = 1e-5;

pub(crate) fn engine_poses(sk: &Skeleton) -> EnginePoses {
    let world = sk.world_transforms();
    let global: Vec<Pose> = world.iter().map(|w| (w.translation, normalize(w.rotation))).collect();
    let local = sk
        .bones
        .iter()
        .enumerate()
        .map(|(i, b)| match b.parent {
            Some(p) if world[p.index()].scale != DVec3::ONE => relative(global[p.index()], global[i]),
            Some(_) => (b.rest.translation, normalize(b.rest.rotation)),
            None => global[i],
        })
        .collect();
    let scaled = world
        .iter()
        .enumerate()
        .filter(|(_, w)| (w.scale - DVec3::ONE).abs().max_element() > SCALE_NOISE)
        .map(|(i, w)| (i, w.scale))
        .collect();
    EnginePoses { global, local, scaled }
}

/// A bone's rest transform as the IR holds it: roots their Global, others their Local (or, when a
/// file lacks Local, the one computed from the Globals).
pub(crate) fn bone_rest(b: &Object, is_root: bool, parent_global: Option<Pose>) -> Option<Pose> {
    rest_from(b.global_pose(), b.local_pose(), is_root, parent_global)
}

pub(crate) fn rest_from(global: Option<Pose>, local: Option<Pose>, is_root: bool, parent_global: Option<Pose>) -> Option<Pose> {
    let rest = if is_root {
        global.or(local)
    } else {
        local.or_else(|| match (parent_global, global) {
            (Some(pg), Some(g)) => Some(relative(pg, g)),
            _ => None,
        })
    };
    rest.map(|(p, q)| (p, normalize(q)))
}
