//! Facts from the VRM 1.0 specification (vrm-c/vrm-specification, `specification/VRMC_vrm-1.0`:
//! `humanoid.md`, `meta.md`, `tpose.md` and the JSON Schemas under `schema/`), compiled into
//! tables. Only facts: names, which are required, parents, allowed values.

use skelport_ir::rest::HumanBone;

/// `extensions.VRMC_vrm.specVersion` of the files skelport writes.
pub const SPEC_VERSION: &str = "1.0";

/// The extension's name (root `extensions` key and `extensionsUsed` entry).
pub const EXTENSION: &str = "VRMC_vrm";

/// `meta.licenseUrl`: VRM 1.0 accepts only the VRM Public License document's URL; the licence
/// terms themselves are the other meta fields.
pub const LICENSE_URL: &str = "https://vrm.dev/licenses/1.0/";

/// One humanoid bone's rules (humanoid.md's tables).
#[derive(Debug, Clone, Copy)]
pub struct BoneRule {
    pub role: HumanBone,
    /// Listed in `humanBones`' `required`.
    pub required: bool,
    /// The parent humanoid bone; when it is not mapped, the rule moves to its parent.
    pub parent: Option<HumanBone>,
    /// "Needs Parent Bone: Yes": mapping this bone requires its parent bone to be mapped too.
    pub needs_parent: bool,
}

const fn r(role: HumanBone, required: bool, parent: Option<HumanBone>, needs_parent: bool) -> BoneRule {
    BoneRule { role, required, parent, needs_parent }
}

use HumanBone::*;

/// Every humanoid bone of VRM 1.0 (55), with whether it is required, its parent and whether that
/// parent must be mapped with it.
pub const BONES: &[BoneRule] = &[
    r(Hips, true, None, false),
    r(Spine, true, Some(Hips), false),
    r(Chest, false, Some(Spine), false),
    r(UpperChest, false, Some(Chest), true),
    r(Neck, false, Some(UpperChest), false),
    r(Head, true, Some(Neck), false),
    r(LeftEye, false, Some(Head), false),
    r(RightEye, false, Some(Head), false),
    r(Jaw, false, Some(Head), false),
    r(LeftUpperLeg, true, Some(Hips), false),
    r(LeftLowerLeg, true, Some(LeftUpperLeg), false),
    r(LeftFoot, true, Some(LeftLowerLeg), false),
    r(LeftToes, false, Some(LeftFoot), false),
    r(RightUpperLeg, true, Some(Hips), false),
    r(RightLowerLeg, true, Some(RightUpperLeg), false),
    r(RightFoot, true, Some(RightLowerLeg), false),
    r(RightToes, false, Some(RightFoot), false),
    r(LeftShoulder, false, Some(UpperChest), false),
    r(LeftUpperArm, true, Some(LeftShoulder), false),
    r(LeftLowerArm, true, Some(LeftUpperArm), false),
    r(LeftHand, true, Some(LeftLowerArm), false),
    r(RightShoulder, false, Some(UpperChest), false),
    r(RightUpperArm, true, Some(RightShoulder), false),
    r(RightLowerArm, true, Some(RightUpperArm), false),
    r(RightHand, true, Some(RightLowerArm), false),
    r(LeftThumbMetacarpal, false, Some(LeftHand), false),
    r(LeftThumbProximal, false, Some(LeftThumbMetacarpal), true),
    r(LeftThumbDistal, false, Some(LeftThumbProximal), true),
    r(LeftIndexProximal, false, Some(LeftHand), false),
    r(LeftIndexIntermediate, false, Some(LeftIndexProximal), true),
    r(LeftIndexDistal, false, Some(LeftIndexIntermediate), true),
    r(LeftMiddleProximal, false, Some(LeftHand), false),
    r(LeftMiddleIntermediate, false, Some(LeftMiddleProximal), true),
    r(LeftMiddleDistal, false, Some(LeftMiddleIntermediate), true),
    r(LeftRingProximal, false, Some(LeftHand), false),
    r(LeftRingIntermediate, false, Some(LeftRingProximal), true),
    r(LeftRingDistal, false, Some(LeftRingIntermediate), true),
    r(LeftLittleProximal, false, Some(LeftHand), false),
    r(LeftLittleIntermediate, false, Some(LeftLittleProximal), true),
    r(LeftLittleDistal, false, Some(LeftLittleIntermediate), true),
    r(RightThumbMetacarpal, false, Some(RightHand), false),
    r(RightThumbProximal, false, Some(RightThumbMetacarpal), true),
    r(RightThumbDistal, false, Some(RightThumbProximal), true),
    r(RightIndexProximal, false, Some(RightHand), false),
    r(RightIndexIntermediate, false, Some(RightIndexProximal), true),
    r(RightIndexDistal, false, Some(RightIndexIntermediate), true),
    r(RightMiddleProximal, false, Some(RightHand), false),
    r(RightMiddleIntermediate, false, Some(RightMiddleProximal), true),
    r(RightMiddleDistal, false, Some(RightMiddleIntermediate), true),
    r(RightRingProximal, false, Some(RightHand), false),
    r(RightRingIntermediate, false, Some(RightRingProximal), true),
    r(RightRingDistal, false, Some(RightRingIntermediate), true),
    r(RightLittleProximal, false, Some(RightHand), false),
    r(RightLittleIntermediate, false, Some(RightLittleProximal), true),
    r(RightLittleDistal, false, Some(RightLittleIntermediate), true),
];

/// The rule of one role.
pub fn rule(role: HumanBone) -> &'static BoneRule {
    BONES.iter().find(|b| b.role == role).expect("every role has a rule")
}

/// The required roles, in table order.
pub fn required() -> impl Iterator<Item = HumanBone> {
    BONES.iter().filter(|b| b.required).map(|b| b.role)
}

/// `meta.avatarPermission` values, most restrictive first.
pub const AVATAR_PERMISSION: &[&str] = &["onlyAuthor", "onlySeparatelyLicensedPerson", "everyone"];
/// `meta.commercialUsage` values, most restrictive first.
pub const COMMERCIAL_USAGE: &[&str] = &["personalNonProfit", "personalProfit", "corporation"];
/// `meta.creditNotation` values, most restrictive first.
pub const CREDIT_NOTATION: &[&str] = &["required", "unnecessary"];
/// `meta.modification` values, most restrictive first.
pub const MODIFICATION: &[&str] = &["prohibited", "allowModification", "allowModificationRedistribution"];
/// The boolean permissions of `meta`; each is `false` (not allowed) unless set.
pub const ALLOW_FLAGS: &[&str] = &[
    "allowExcessivelyViolentUsage",
    "allowExcessivelySexualUsage",
    "allowPoliticalOrReligiousUsage",
    "allowAntisocialOrHateUsage",
    "allowRedistribution",
];

/// VRM 0.x humanoid bone names that differ from 1.0's (the thumb was renamed one joint down).
pub fn role_from_v0(name: &str) -> Option<HumanBone> {
    Some(match name {
        "leftThumbProximal" => LeftThumbMetacarpal,
        "leftThumbIntermediate" => LeftThumbProximal,
        "leftThumbDistal" => LeftThumbDistal,
        "rightThumbProximal" => RightThumbMetacarpal,
        "rightThumbIntermediate" => RightThumbProximal,
        "rightThumbDistal" => RightThumbDistal,
        other => return HumanBone::from_name(other),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_covers_every_role_once_in_order_with_parents_first() {
        assert_eq!(BONES.len(), HumanBone::ALL.len());
        for (k, b) in BONES.iter().enumerate() {
            assert_eq!(b.role, HumanBone::ALL[k]);
            if let Some(p) = b.parent {
                assert!(BONES[..k].iter().any(|x| x.role == p), "{} before its parent {p}", b.role);
            }
        }
        assert_eq!(required().count(), 15);
    }
}
