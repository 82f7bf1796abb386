//! Re-resting: give a skeleton a new rest pose and re-bind its skins in it.
//!
//! A re-rest takes a [`Pose`] (world-axis rotations about bone heads, as in [`crate::pose`]),
//! makes the posed skeleton the new rest pose, and then, depending on [`Rebind`]:
//! * [`Rebind::Bake`]: deforms every skinned mesh into that pose by linear blend skinning (normals
//!   turn with it), drops the bind-shape matrix and sets each inverse bind matrix to the new rest's
//!   inverse, so the file's rest pose, its bind pose and its mesh all show the new pose;
//! * [`Rebind::KeepBind`]: moves only the bones; mesh and inverse bind matrices stay, so the
//!   document deforms exactly as the source under any world-space pose (the skinned result at
//!   the new rest is the source posed).
//!
//! Bone translations, scales and lengths are kept, so tails stay attached: only orientations
//! change. Linear blend skinning is not closed under composition, so a baked document posed by
//! `Q` matches the source posed into the new rest and then by `Q` exactly for vertices bound to
//! one bone (or to bones the re-rest turned alike) and to second order elsewhere: the difference
//! is `Σ_{j<k} w_j w_k (A_j − A_k)(G_k − G_j) v`, where `G` are the re-rest's and `A` the later
//! pose's per-bone motions.
//!
//! [`t_pose`] derives the pose from humanoid roles ([`HumanBone`]): upper arms, forearms, hands
//! and the four fingers straight out along the character's left/right axis, thumbs halfway between
//! that axis and forward (VRM 1.0's T-pose), legs straight down, feet keeping their world
//! orientation; the torso, neck, head and shoulders are left as they are. The axes are the
//! document frame's ([`crate::Frame::left`], `up`, `forward`).

use crate::document::{BoneId, Document, Normals, Skeleton, SkeletonId, Transform};
use crate::pose::{posed_worlds, Pose};
use glam::{DMat3, DMat4, DQuat, DVec3};
use std::collections::{BTreeMap, HashMap};

macro_rules! human_bones {
    ($($v:ident => $s:literal),* $(,)?) => {
        /// A humanoid bone role, named as VRM 1.0 and Unity's humanoid name them (camelCase).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum HumanBone { $($v),* }

        impl HumanBone {
            /// Every role, torso first, then head, legs, arms and fingers (left before right).
            pub const ALL: &'static [HumanBone] = &[$(HumanBone::$v),*];

            /// The role's name (`"leftUpperArm"`).
            pub fn name(self) -> &'static str {
                match self { $(HumanBone::$v => $s),* }
            }

            /// The role with this name (exact, case-sensitive).
            pub fn from_name(s: &str) -> Option<Self> {
                match s { $($s => Some(HumanBone::$v),)* _ => None }
            }
        }
    };
}

human_bones! {
    Hips => "hips", Spine => "spine", Chest => "chest", UpperChest => "upperChest", Neck => "neck",
    Head => "head", LeftEye => "leftEye", RightEye => "rightEye", Jaw => "jaw",
    LeftUpperLeg => "leftUpperLeg", LeftLowerLeg => "leftLowerLeg", LeftFoot => "leftFoot", LeftToes => "leftToes",
    RightUpperLeg => "rightUpperLeg", RightLowerLeg => "rightLowerLeg", RightFoot => "rightFoot", RightToes => "rightToes",
    LeftShoulder => "leftShoulder", LeftUpperArm => "leftUpperArm", LeftLowerArm => "leftLowerArm", LeftHand => "leftHand",
    RightShoulder => "rightShoulder", RightUpperArm => "rightUpperArm", RightLowerArm => "rightLowerArm", RightHand => "rightHand",
    LeftThumbMetacarpal => "leftThumbMetacarpal", LeftThumbProximal => "leftThumbProximal", LeftThumbDistal => "leftThumbDistal",
    LeftIndexProximal => "leftIndexProximal", LeftIndexIntermediate => "leftIndexIntermediate", LeftIndexDistal => "leftIndexDistal",
    LeftMiddleProximal => "leftMiddleProximal", LeftMiddleIntermediate => "leftMiddleIntermediate", LeftMiddleDistal => "leftMiddleDistal",
    LeftRingProximal => "leftRingProximal", LeftRingIntermediate => "leftRingIntermediate", LeftRingDistal => "leftRingDistal",
    LeftLittleProximal => "leftLittleProximal", LeftLittleIntermediate => "leftLittleIntermediate", LeftLittleDistal => "leftLittleDistal",
    RightThumbMetacarpal => "rightThumbMetacarpal", RightThumbProximal => "rightThumbProximal", RightThumbDistal => "rightThumbDistal",
    RightIndexProximal => "rightIndexProximal", RightIndexIntermediate => "rightIndexIntermediate", RightIndexDistal => "rightIndexDistal",
    RightMiddleProximal => "rightMiddleProximal", RightMiddleIntermediate => "rightMiddleIntermediate", RightMiddleDistal => "rightMiddleDistal",
    RightRingProximal => "rightRingProximal", RightRingIntermediate => "rightRingIntermediate", RightRingDistal => "rightRingDistal",
    RightLittleProximal => "rightLittleProximal", RightLittleIntermediate => "rightLittleIntermediate", RightLittleDistal => "rightLittleDistal",
}

impl std::fmt::Display for HumanBone {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl serde::Serialize for HumanBone {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> serde::Deserialize<'de> for HumanBone {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        HumanBone::from_name(&s).ok_or_else(|| serde::de::Error::custom(format!("\"{s}\" is not a humanoid bone name")))
    }
}

/// Which rest pose a writer produces (`--rest-pose`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestPose {
    /// The rest pose as read (`as-is`).
    AsIs,
    /// The T-pose made by [`t_pose`] (`t-pose`).
    TPose,
}

impl std::str::FromStr for RestPose {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "as-is" => Ok(RestPose::AsIs),
            "t-pose" => Ok(RestPose::TPose),
            _ => Err(format!("unknown rest pose \"{s}\"; use t-pose or as-is")),
        }
    }
}

/// Which bone of a skeleton plays each humanoid role.
pub type Humanoid = BTreeMap<HumanBone, BoneId>;

/// Where a role's bone should point in the T-pose, and what its direction is measured to.
enum Aim {
    /// Along this character axis; the direction runs from the bone's head to the head of the first
    /// of these roles the skeleton has, else to the bone's own tip.
    Along(DVec3, &'static [HumanBone]),
    /// Keep the bone's world orientation (feet).
    Keep,
}

fn aim(role: HumanBone, left: DVec3, up: DVec3, forward: DVec3) -> Option<Aim> {
    use HumanBone::*;
    let (l, r) = (left, -left);
    let (tl, tr) = ((left + forward).normalize(), (-left + forward).normalize());
    let down = -up;
    Some(match role {
        LeftUpperArm => Aim::Along(l, &[LeftLowerArm]),
        LeftLowerArm => Aim::Along(l, &[LeftHand]),
        LeftHand => Aim::Along(l, &[LeftMiddleProximal, LeftIndexProximal, LeftRingProximal, LeftLittleProximal]),
        LeftIndexProximal => Aim::Along(l, &[LeftIndexIntermediate]),
        LeftIndexIntermediate => Aim::Along(l, &[LeftIndexDistal]),
        LeftMiddleProximal => Aim::Along(l, &[LeftMiddleIntermediate]),
        LeftMiddleIntermediate => Aim::Along(l, &[LeftMiddleDistal]),
        LeftRingProximal => Aim::Along(l, &[LeftRingIntermediate]),
        LeftRingIntermediate => Aim::Along(l, &[LeftRingDistal]),
        LeftLittleProximal => Aim::Along(l, &[LeftLittleIntermediate]),
        LeftLittleIntermediate => Aim::Along(l, &[LeftLittleDistal]),
        LeftIndexDistal | LeftMiddleDistal | LeftRingDistal | LeftLittleDistal => Aim::Along(l, &[]),
        LeftThumbMetacarpal => Aim::Along(tl, &[LeftThumbProximal]),
        LeftThumbProximal => Aim::Along(tl, &[LeftThumbDistal]),
        LeftThumbDistal => Aim::Along(tl, &[]),
        RightUpperArm => Aim::Along(r, &[RightLowerArm]),
        RightLowerArm => Aim::Along(r, &[RightHand]),
        RightHand => Aim::Along(r, &[RightMiddleProximal, RightIndexProximal, RightRingProximal, RightLittleProximal]),
        RightIndexProximal => Aim::Along(r, &[RightIndexIntermediate]),
        RightIndexIntermediate => Aim::Along(r, &[RightIndexDistal]),
        RightMiddleProximal => Aim::Along(r, &[RightMiddleIntermediate]),
        RightMiddleIntermediate => Aim::Along(r, &[RightMiddleDistal]),
        RightRingProximal => Aim::Along(r, &[RightRingIntermediate]),
        RightRingIntermediate => Aim::Along(r, &[RightRingDistal]),
        RightLittleProximal => Aim::Along(r, &[RightLittleIntermediate]),
        RightLittleIntermediate => Aim::Along(r, &[RightLittleDistal]),
        RightIndexDistal | RightMiddleDistal | RightRingDistal | RightLittleDistal => Aim::Along(r, &[]),
        RightThumbMetacarpal => Aim::Along(tr, &[RightThumbProximal]),
        RightThumbProximal => Aim::Along(tr, &[RightThumbDistal]),
        RightThumbDistal => Aim::Along(tr, &[]),
        LeftUpperLeg => Aim::Along(down, &[LeftLowerLeg]),
        LeftLowerLeg => Aim::Along(down, &[LeftFoot]),
        RightUpperLeg => Aim::Along(down, &[RightLowerLeg]),
        RightLowerLeg => Aim::Along(down, &[RightFoot]),
        LeftFoot | RightFoot => Aim::Keep,
        _ => return None,
    })
}

/// Why a skeleton cannot be re-rested.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RestError {
    #[error("skeleton {0} does not exist")]
    NoSkeleton(SkeletonId),
    #[error("bone \"{bone}\": its parent's scale is not uniform, so turning it would shear it (TRS cannot hold that); apply the scale to the rig first")]
    Shear { bone: String },
    #[error("role {role} names bone #{bone}, which skeleton \"{skeleton}\" does not have")]
    BadBone { role: HumanBone, bone: u32, skeleton: String },
}

/// How skins follow a re-rest.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rebind {
    /// Bake the pose into the meshes; inverse binds become the new rest's (bind pose = rest pose).
    Bake,
    /// Keep meshes and inverse binds (bind pose = the old rest): exact deformation, bones only.
    KeepBind,
}

/// What a re-rest changed.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RestReport {
    /// Bones given a rotation, with the angle in degrees, in bone order.
    pub turned: Vec<(String, f64)>,
    /// Vertices whose position changed by more than a micrometre (baking only).
    pub vertices_moved: usize,
    /// Skins whose weights refer to no mesh in the document (their inverse binds were still
    /// reset; whatever mesh they bind elsewhere no longer matches).
    pub skins_without_mesh: Vec<String>,
}

/// A rigid motion `x ↦ q·x + t` (the motion of a bone's space so far).
#[derive(Clone, Copy)]
struct Rigid {
    q: DQuat,
    t: DVec3,
}

impl Rigid {
    const IDENTITY: Rigid = Rigid { q: DQuat::IDENTITY, t: DVec3::ZERO };
    /// `self ∘ (rotation r about h)`.
    fn then_about(self, r: DQuat, h: DVec3) -> Rigid {
        Rigid { q: (self.q * r).normalize(), t: self.q * (h - r * h) + self.t }
    }
}

/// The bone's tip at rest in world space: its tail (head + local `+Y × length`) when it has a
/// length, else the mean of its children's heads; `None` when neither differs from the head.
fn tip(sk: &Skeleton, world: &[DMat4], children: &[Vec<BoneId>], i: usize) -> Option<DVec3> {
    let head = world[i].w_axis.truncate();
    if let Some(l) = sk.bones[i].length.filter(|l| *l > 0.0 && l.is_finite()) {
        return Some(world[i].transform_point3(DVec3::new(0.0, l, 0.0)));
    }
    let kids = &children[i];
    if kids.is_empty() {
        return None;
    }
    let mean = kids.iter().map(|c| world[c.index()].w_axis.truncate()).sum::<DVec3>() / kids.len() as f64;
    (mean.distance(head) > 1e-9).then_some(mean)
}

/// The T-pose of skeleton `skeleton` of `doc` as a [`Pose`]: each limb role turned (about its
/// head, in world axes, after its ancestors) by the shortest rotation taking its direction to its
/// T-pose axis. Roles not in `humanoid`, and bones that are no role, are not turned themselves
/// (they follow their parents).
pub fn t_pose_pose(doc: &Document, skeleton: SkeletonId, humanoid: &Humanoid) -> Result<Pose, RestError> {
    let sk = doc.get_skeleton(skeleton).ok_or(RestError::NoSkeleton(skeleton))?;
    for (&role, &b) in humanoid {
        if b.index() >= sk.bones.len() {
            return Err(RestError::BadBone { role, bone: b.raw(), skeleton: sk.name.clone() });
        }
    }
    let (left, up, forward) = (doc.frame.left(), doc.frame.up.vector(), doc.frame.forward.vector());
    let world = sk.world_matrices();
    let children = sk.children();
    let role_of: HashMap<BoneId, HumanBone> = humanoid.iter().map(|(&r, &b)| (b, r)).collect();
    let mut g: Vec<Rigid> = Vec::with_capacity(sk.bones.len());
    let mut pose = Pose::new();
    for (i, bone) in sk.bones.iter().enumerate() {
        let gp = bone.parent.filter(|p| p.index() < i).map_or(Rigid::IDENTITY, |p| g[p.index()]);
        let head = world[i].w_axis.truncate();
        let r = match role_of.get(&BoneId::from_index(i)).and_then(|&role| aim(role, left, up, forward)) {
            Some(Aim::Keep) => gp.q.inverse(),
            Some(Aim::Along(axis, next)) => {
                let to = next.iter().find_map(|n| humanoid.get(n)).map(|b| world[b.index()].w_axis.truncate());
                match to.or_else(|| tip(sk, &world, &children, i)) {
                    Some(p) if p.distance(head) > 1e-9 => {
                        let d = (p - head).normalize();
                        // In rest axes: the rotation that, after the parents' motion, points d along axis.
                        DQuat::from_rotation_arc(d, (gp.q.inverse() * axis).normalize())
                    }
                    _ => DQuat::IDENTITY,
                }
            }
            None => DQuat::IDENTITY,
        };
        let r = r.normalize();
        // Skip rotations below float noise, so bones already in place keep their rest bit for bit.
        let turned = r.w.abs() < 1.0 - 1e-15;
        if turned {
            pose.insert(bone.name.clone(), r);
        }
        g.push(if turned { gp.then_about(r, head) } else { gp });
    }
    Ok(pose)
}

/// Re-rest skeleton `skeleton` of `doc` into the T-pose ([`t_pose_pose`], then [`re_rest`]).
pub fn t_pose(doc: &mut Document, skeleton: SkeletonId, humanoid: &Humanoid, rebind: Rebind) -> Result<RestReport, RestError> {
    let pose = t_pose_pose(doc, skeleton, humanoid)?;
    re_rest(doc, skeleton, &pose, rebind)
}

/// Relative spread of scale below which a bone's scale counts as uniform: files from other tools
/// carry float noise such as (1, 0.9999982, 1.0000156), which must not stop a re-rest.
const NEAR_UNIFORM: f64 = 1e-4;

/// The world rotation (unit quaternion) and uniform scale of an affine matrix's linear part, when
/// it is a uniform scale times a rotation (within [`NEAR_UNIFORM`]).
fn uniform(m: &DMat4) -> Option<(DQuat, f64)> {
    let l = DMat3::from_mat4(*m);
    let s = l.determinant().cbrt();
    if !(s.is_finite() && s > 0.0) {
        return None;
    }
    let q = l * (1.0 / s);
    let err = (q.transpose() * q - DMat3::IDENTITY).to_cols_array().iter().fold(0.0f64, |a, b| a.max(b.abs()));
    (err < NEAR_UNIFORM).then(|| (DQuat::from_mat3(&q).normalize(), s))
}

/// Make `pose` (applied to skeleton `skeleton` of `doc`) its new rest pose; skins follow as
/// `rebind` says (see the module docs). Bone translations, scales and lengths are kept.
pub fn re_rest(doc: &mut Document, skeleton: SkeletonId, pose: &Pose, rebind: Rebind) -> Result<RestReport, RestError> {
    let sk = doc.get_skeleton(skeleton).ok_or(RestError::NoSkeleton(skeleton))?;
    let world = sk.world_matrices();
    let new_world = posed_worlds(sk, pose);
    let mut report = RestReport::default();
    let mut rests: Vec<Transform> = Vec::with_capacity(sk.bones.len());
    for (i, b) in sk.bones.iter().enumerate() {
        let Some(&r) = pose.get(&b.name) else {
            rests.push(b.rest);
            continue;
        };
        report.turned.push((b.name.clone(), r.angle_between(DQuat::IDENTITY).to_degrees()));
        let ls = b.rest.scale;
        let rest = match uniform(&world[i]) {
            // The local delta Q⁻¹·R·Q (Q the world rotation) is a pure rotation about the local
            // origin: translation and scale are kept exactly.
            Some((q, _)) if (ls.x - ls.y).abs() <= NEAR_UNIFORM * ls.x.abs() && (ls.x - ls.z).abs() <= NEAR_UNIFORM * ls.x.abs() => {
                Transform { rotation: (b.rest.rotation * (q.inverse() * r * q)).normalize(), ..b.rest }
            }
            _ => {
                let local = match b.parent {
                    Some(p) if p.index() < i => new_world[p.index()].inverse() * new_world[i],
                    _ => new_world[i],
                };
                Transform::from_matrix(&local).ok_or_else(|| RestError::Shear { bone: b.name.clone() })?
            }
        };
        rests.push(rest);
    }
    // The motion of each bone's space, to carry anchors (MPFB placement points) along.
    let motion: Vec<DMat4> = world.iter().zip(&new_world).map(|(w, n)| *n * w.inverse()).collect();
    let sk = &mut doc.skeletons[skeleton.index()];
    for (i, (b, rest)) in sk.bones.iter_mut().zip(rests).enumerate() {
        b.rest = rest;
        if let (Some(a), true) = (b.anchors.as_mut(), pose.contains_key(&b.name) || motion[i] != DMat4::IDENTITY) {
            for end in [&mut a.head, &mut a.tail] {
                end.offset = motion[i].transform_vector3(end.offset);
                if let Some(d) = end.default_position.as_mut() {
                    *d = motion[i].transform_point3(*d);
                }
            }
        }
    }
    if rebind == Rebind::KeepBind {
        return Ok(report);
    }
    let mut baked = vec![false; doc.meshes.len()];
    for s in doc.skins.iter_mut().filter(|s| s.skeleton == skeleton) {
        // Skinning matrices of the pose: new world · inverse bind.
        let k: Vec<DMat4> = s
            .joints
            .iter()
            .enumerate()
            .map(|(slot, j)| {
                new_world.get(j.index()).copied().unwrap_or(DMat4::IDENTITY) * s.inverse_bind.get(slot).copied().unwrap_or(DMat4::IDENTITY)
            })
            .collect();
        match s.mesh.map(|m| m.index()).filter(|&m| m < doc.meshes.len()) {
            Some(m) if !baked[m] => {
                baked[m] = true;
                let mesh = &mut doc.meshes[m];
                let nv = mesh.positions.len();
                // Per vertex: the blended matrix (bind shape included), used for the position and
                // (inverse transpose) for the normals.
                let blended: Vec<Option<DMat4>> = (0..nv).map(|v| s.blend_matrix(v, &k).map(|m| m * s.bind_shape)).collect();
                let bind = s.bind_shape;
                for (v, p) in mesh.positions.iter_mut().enumerate() {
                    let np = match blended[v] {
                        Some(m) => m.transform_point3(*p),
                        None => bind.transform_point3(*p),
                    };
                    if np.distance(*p) > 1e-6 {
                        report.vertices_moved += 1;
                    }
                    *p = np;
                }
                let normal_of = |v: usize, n: DVec3| {
                    let m = blended.get(v).copied().flatten().unwrap_or(bind);
                    let t = DMat3::from_mat4(m).inverse().transpose();
                    let out = (t * n).normalize_or_zero();
                    if out == DVec3::ZERO || !out.is_finite() {
                        n
                    } else {
                        out
                    }
                };
                match &mut mesh.normals {
                    Some(Normals::PerVertex(ns)) => {
                        for (v, n) in ns.iter_mut().enumerate() {
                            *n = normal_of(v, *n);
                        }
                    }
                    Some(Normals::PerCorner(ns)) => {
                        for (c, n) in ns.iter_mut().enumerate() {
                            if let Some(&v) = mesh.faces.indices.get(c) {
                                *n = normal_of(v as usize, *n);
                            }
                        }
                    }
                    None => {}
                }
            }
            Some(_) => {}
            None => {
                if s.influences.weighted_vertices() > 0 {
                    report.skins_without_mesh.push(s.name.clone());
                }
            }
        }
        s.bind_shape = DMat4::IDENTITY;
        for (slot, j) in s.joints.iter().enumerate() {
            if let (Some(ibm), Some(w)) = (s.inverse_bind.get_mut(slot), new_world.get(j.index())) {
                *ibm = w.inverse();
            }
        }
    }
    Ok(report)
}

/// The pose that takes `sk` from its rest pose to the world matrices `worlds` (one per bone), for
/// targets that differ from the rest by rigid motions: bone `i` gets the rotation part of
/// `G_parent⁻¹ · G_i` with `G = target · rest⁻¹`. Posing `sk` with it ([`posed_worlds`]) gives
/// `worlds` back.
pub fn pose_matching(sk: &Skeleton, worlds: &[DMat4]) -> Pose {
    let rest = sk.world_matrices();
    let g: Vec<DMat4> = rest.iter().zip(worlds).map(|(w, t)| *t * w.inverse()).collect();
    let mut pose = Pose::new();
    for (i, b) in sk.bones.iter().enumerate().take(g.len()) {
        let gp = b.parent.filter(|p| p.index() < i).map_or(DMat4::IDENTITY, |p| g[p.index()]);
        let d = DMat3::from_mat4(gp.inverse() * g[i]);
        let q = DQuat::from_mat3(&d).normalize();
        if q.w.abs() < 1.0 - 1e-15 {
            pose.insert(b.name.clone(), q);
        }
    }
    pose
}

/// The angle in degrees between bone `bone`'s direction (head → `to`, world) and the plane
/// perpendicular to `up`: 0 for a horizontal bone. For checks and reports.
pub fn elevation_degrees(head: DVec3, to: DVec3, up: DVec3) -> f64 {
    let d = (to - head).normalize_or_zero();
    d.dot(up.normalize()).clamp(-1.0, 1.0).asin().to_degrees()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Bone, Mesh};
    use crate::pose::{deform, max_deviation, random_pose};
    use crate::skin::{Influences, Skin};
    use crate::Frame;

    /// A small humanoid in an A-pose in `frame`'s axes (built in glTF axes, then converted):
    /// hips, spine, head, arms hanging 45° down and bent forward, legs apart, feet forward, one
    /// finger per hand; a mesh of points along every bone, weighted to one or two bones.
    fn a_pose(frame: Frame) -> (Document, Humanoid) {
        let mut sk = Skeleton::new("body");
        // Heads in glTF axes (left = +X, up = +Y, forward = +Z).
        let heads: &[(&str, Option<usize>, [f64; 3])] = &[
            ("root", None, [0.0, 0.0, 0.0]),
            ("hips", Some(0), [0.0, 1.0, 0.0]),
            ("spine", Some(1), [0.0, 1.2, 0.0]),
            ("head", Some(2), [0.0, 1.6, 0.0]),
            ("clav.L", Some(2), [0.05, 1.45, 0.0]),
            ("arm.L", Some(4), [0.2, 1.45, 0.0]),
            ("fore.L", Some(5), [0.4, 1.25, 0.02]),
            ("hand.L", Some(6), [0.55, 1.1, 0.12]),
            ("finger.L", Some(7), [0.62, 1.03, 0.15]),
            ("clav.R", Some(2), [-0.05, 1.45, 0.0]),
            ("arm.R", Some(9), [-0.2, 1.45, 0.0]),
            ("fore.R", Some(10), [-0.4, 1.25, 0.02]),
            ("hand.R", Some(11), [-0.55, 1.1, 0.12]),
            ("finger.R", Some(12), [-0.62, 1.03, 0.15]),
            ("thigh.L", Some(1), [0.1, 0.95, 0.0]),
            ("shin.L", Some(14), [0.14, 0.5, 0.02]),
            ("foot.L", Some(15), [0.18, 0.08, 0.0]),
            ("toe.L", Some(16), [0.19, 0.02, 0.12]),
            ("thigh.R", Some(1), [-0.1, 0.95, 0.0]),
            ("shin.R", Some(18), [-0.14, 0.5, 0.02]),
            ("foot.R", Some(19), [-0.18, 0.08, 0.0]),
            ("toe.R", Some(20), [-0.19, 0.02, 0.12]),
        ];
        let (mut world_heads, mut world_rot): (Vec<DVec3>, Vec<DQuat>) = (Vec::new(), Vec::new());
        for (k, (name, parent, h)) in heads.iter().enumerate() {
            let h = DVec3::from_array(*h);
            // Each bone with its own local twist, so the result cannot depend on local axes.
            let twist = DQuat::from_axis_angle(DVec3::new(0.3, 1.0, -0.2).normalize(), 0.2 * (k + 1) as f64);
            let rest = match parent {
                Some(p) => Transform::from_rt(world_rot[*p].inverse() * twist, world_rot[*p].inverse() * (h - world_heads[*p])),
                None => Transform::from_rt(twist, h),
            };
            let mut b = Bone::new(*name, parent.map(BoneId::from_index), rest);
            b.length = Some(0.05);
            world_heads.push(h);
            world_rot.push(twist);
            sk.push(b);
        }
        let mut doc = Document::new(Frame::GLTF);
        let world = sk.world_matrices();
        // Points along each bone towards its first child (or its tail), weighted to the bone, or
        // blended with the parent near the head.
        let children = sk.children();
        let mut positions = Vec::new();
        let mut lists = Vec::new();
        for (i, _) in sk.bones.iter().enumerate() {
            let head = world[i].w_axis.truncate();
            let end = children[i]
                .first()
                .map_or_else(|| world[i].transform_point3(DVec3::new(0.0, 0.05, 0.0)), |c| world[c.index()].w_axis.truncate());
            for k in 0..5 {
                let t = k as f64 / 4.0;
                positions.push(head.lerp(end, t) + DVec3::new(0.01, 0.013, -0.007));
                match (k, sk.bones[i].parent) {
                    (0, Some(p)) => lists.push(vec![(p.raw(), 0.5), (i as u32, 0.5)]),
                    _ => lists.push(vec![(i as u32, 1.0)]),
                }
            }
        }
        let normals = positions.iter().enumerate().map(|(k, _)| DVec3::new(1.0, k as f64 * 0.1, 0.5).normalize()).collect();
        doc.meshes.push(Mesh { name: "m".into(), positions, normals: Some(Normals::PerVertex(normals)), ..Default::default() });
        doc.skins.push(Skin {
            name: "k".into(),
            skeleton: crate::SkeletonId::new(0),
            mesh: Some(crate::MeshId::new(0)),
            joints: (0..sk.bones.len()).map(BoneId::from_index).collect(),
            inverse_bind: world.iter().map(|m| m.inverse()).collect(),
            bind_shape: DMat4::IDENTITY,
            influences: Influences::from_lists(lists),
            ext: Default::default(),
        });
        doc.skeletons.push(sk);
        let id = |n: &str| doc.skeletons[0].find(n).unwrap();
        use HumanBone::*;
        let humanoid: Humanoid = [
            (Hips, "hips"),
            (Spine, "spine"),
            (Head, "head"),
            (LeftShoulder, "clav.L"),
            (LeftUpperArm, "arm.L"),
            (LeftLowerArm, "fore.L"),
            (LeftHand, "hand.L"),
            (LeftIndexProximal, "finger.L"),
            (RightShoulder, "clav.R"),
            (RightUpperArm, "arm.R"),
            (RightLowerArm, "fore.R"),
            (RightHand, "hand.R"),
            (RightIndexProximal, "finger.R"),
            (LeftUpperLeg, "thigh.L"),
            (LeftLowerLeg, "shin.L"),
            (LeftFoot, "foot.L"),
            (LeftToes, "toe.L"),
            (RightUpperLeg, "thigh.R"),
            (RightLowerLeg, "shin.R"),
            (RightFoot, "foot.R"),
            (RightToes, "toe.R"),
        ]
        .into_iter()
        .map(|(r, n)| (r, id(n)))
        .collect();
        if frame != Frame::GLTF {
            doc.convert_frame(frame);
        }
        (doc, humanoid)
    }

    fn head(doc: &Document, name: &str) -> DVec3 {
        let sk = &doc.skeletons[0];
        sk.world_matrices()[sk.find(name).unwrap().index()].w_axis.truncate()
    }

    /// Arms, hands and fingers end up along ±left, legs along −up, feet keep their world
    /// orientation, untouched bones keep their rest exactly, and lengths and translations stay:
    /// in every frame (the axes come from the frame).
    #[test]
    fn t_pose_straightens_limbs_in_any_frame() {
        for frame in [Frame::GLTF, Frame::BLENDER, Frame::SECOND_LIFE] {
            let (src, humanoid) = a_pose(frame);
            let mut doc = src.clone();
            let report = t_pose(&mut doc, SkeletonId::new(0), &humanoid, Rebind::Bake).unwrap();
            let (left, up) = (frame.left(), frame.up.vector());
            let dir = |a: &str, b: &str| (head(&doc, b) - head(&doc, a)).normalize();
            for (a, b, want) in [
                ("arm.L", "fore.L", left),
                ("fore.L", "hand.L", left),
                ("hand.L", "finger.L", left),
                ("arm.R", "fore.R", -left),
                ("fore.R", "hand.R", -left),
                ("hand.R", "finger.R", -left),
                ("thigh.L", "shin.L", -up),
                ("shin.L", "foot.L", -up),
                ("thigh.R", "shin.R", -up),
                ("shin.R", "foot.R", -up),
            ] {
                assert!(dir(a, b).angle_between(want) < 1e-9, "{frame:?} {a}: {}", dir(a, b).angle_between(want));
            }
            assert!(elevation_degrees(head(&doc, "arm.L"), head(&doc, "fore.L"), up).abs() < 1e-7);
            // Feet keep their world orientation; the spine and head are not turned.
            let (ws, wd) = (src.skeletons[0].world_transforms(), doc.skeletons[0].world_transforms());
            for name in ["foot.L", "foot.R", "toe.L", "hips", "spine", "head", "clav.L"] {
                let i = doc.skeletons[0].find(name).unwrap().index();
                assert!(ws[i].rotation.angle_between(wd[i].rotation) < 1e-9, "{name}");
            }
            for name in ["root", "hips", "spine", "head", "clav.L", "clav.R"] {
                let i = doc.skeletons[0].find(name).unwrap().index();
                assert_eq!(src.skeletons[0].bones[i].rest, doc.skeletons[0].bones[i].rest, "{name}");
            }
            for (a, b) in src.skeletons[0].bones.iter().zip(&doc.skeletons[0].bones) {
                assert_eq!(a.length, b.length);
                assert!(a.rest.translation.distance(b.rest.translation) < 1e-12, "{}", a.name);
            }
            assert!(report.turned.iter().any(|(n, deg)| n == "arm.L" && *deg > 30.0), "{:?}", report.turned);
            assert!(report.vertices_moved > 0);
            // Re-resting an already re-rested document changes nothing more.
            let again = t_pose_pose(&doc, SkeletonId::new(0), &humanoid).unwrap();
            assert!(again.values().all(|q| q.angle_between(DQuat::IDENTITY) < 1e-7), "{again:?}");
        }
    }

    /// The baked document at rest is the source posed into the T-pose, exactly; the bind-kept
    /// document is the source under every world-space pose, exactly; the baked one matches it
    /// exactly on single-bone vertices and to second order on blended ones.
    #[test]
    fn baked_skin_deforms_like_the_source() {
        let (src, humanoid) = a_pose(Frame::BLENDER);
        let pose = t_pose_pose(&src, SkeletonId::new(0), &humanoid).unwrap();
        let mut baked = src.clone();
        re_rest(&mut baked, SkeletonId::new(0), &pose, Rebind::Bake).unwrap();
        let mut kept = src.clone();
        re_rest(&mut kept, SkeletonId::new(0), &pose, Rebind::KeepBind).unwrap();
        let rest = deform(&baked, 0, &Pose::new());
        // (A pose's rotations are in world axes of the frame it was made in: the report frame's here.)
        let pose_r = t_pose_pose(&crate::pose::in_report_frame(&src), SkeletonId::new(0), &humanoid).unwrap();
        assert!(max_deviation(&rest, &deform(&src, 0, &pose_r)).unwrap() < 1e-12);
        assert!(max_deviation(&rest, &deform(&kept, 0, &Pose::new())).unwrap() < 1e-12);
        let names: Vec<String> = src.skeletons[0].bones.iter().map(|b| b.name.clone()).collect();
        let single: Vec<usize> = (0..src.skins[0].vertex_count()).filter(|&v| src.skins[0].influences.vertex(v).count() == 1).collect();
        let mut worst = 0.0f64;
        for seed in 0..10 {
            let q = random_pose(names.iter().map(String::as_str), seed, 0.6);
            let (a, b) = (deform(&kept, 0, &q), deform(&baked, 0, &q));
            // The bind-kept document is the source posed by the matching world-space pose.
            let src_r = crate::pose::in_report_frame(&src);
            let matching = pose_matching(&src_r.skeletons[0], &posed_worlds(&crate::pose::in_report_frame(&kept).skeletons[0], &q));
            let via_source = deform(&src_r, 0, &matching);
            assert!(max_deviation(&a, &via_source).unwrap() < 1e-9);
            for &v in &single {
                assert!(a[v].distance(b[v]) < 1e-9, "vertex {v}");
            }
            worst = worst.max(max_deviation(&a, &b).unwrap());
        }
        // Blended vertices differ by a second-order term (a few mm on this 1.7 m figure).
        assert!(worst > 1e-6 && worst < 0.02, "{worst}");
    }

    /// Normals turn with the skin: a single-bone vertex's normal turns by its bone's rotation.
    #[test]
    fn normals_turn_with_the_skin() {
        let (src, humanoid) = a_pose(Frame::GLTF);
        let mut doc = src.clone();
        t_pose(&mut doc, SkeletonId::new(0), &humanoid, Rebind::Bake).unwrap();
        let sk = &src.skeletons[0];
        let i = sk.find("arm.L").unwrap().index();
        let (w0, w1) = (sk.world_transforms()[i].rotation, doc.skeletons[0].world_transforms()[i].rotation);
        let turn = w1 * w0.inverse();
        let v = (0..src.skins[0].vertex_count())
            .find(|&v| src.skins[0].influences.vertex(v).collect::<Vec<_>>() == vec![(i as u32, 1.0)])
            .unwrap();
        let (n0, n1) = (src.meshes[0].normals.as_ref().unwrap().values()[v], doc.meshes[0].normals.as_ref().unwrap().values()[v]);
        assert!((turn * n0).distance(n1) < 1e-12);
        assert!(turn.angle_between(DQuat::IDENTITY) > 0.5);
    }

    #[test]
    fn role_names_round_trip() {
        assert_eq!(HumanBone::ALL.len(), 55);
        for &r in HumanBone::ALL {
            assert_eq!(HumanBone::from_name(r.name()), Some(r));
            let j = serde_json::to_string(&r).unwrap();
            assert_eq!(serde_json::from_str::<HumanBone>(&j).unwrap(), r);
        }
        assert!(serde_json::from_str::<HumanBone>("\"LeftUpperArm\"").is_err());
    }
}
