//! Bone-name hashes: BoneID = CRC-32 (IEEE, as zlib) of the exact-case name, and the names
//! skelport can resolve a hash back to.

use std::collections::HashMap;
use std::sync::OnceLock;

/// The BoneID of a name.
pub fn hash(name: &str) -> u32 {
    crc32fast::hash(name.as_bytes())
}

/// How an unknown hash is shown (and accepted back as a name): `x` + 8 upper-case hex digits.
pub fn unknown_name(h: u32) -> String {
    format!("x{h:08X}")
}

/// The hash a displayed name stands for: an `xXXXXXXXX` placeholder is its own hash.
pub fn hash_of_display(name: &str) -> u32 {
    if name.len() == 9 && name.starts_with('x') && name[1..].bytes().all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b)) {
        if let Ok(h) = u32::from_str_radix(&name[1..], 16) {
            return h;
        }
    }
    hash(name)
}

/// Names shipped with skelport: the AnvilNext biped, hand, twist, prop and attachment bones seen
/// in public AC skeleton tables (each one's CRC matches a hash found in a real skeleton), and the
/// bones named in the AnvilToolkit skeleton tutorial's examples.
pub const BUILTIN: &[&str] = &[
    "A_BloodFX",
    "A_Blunderbuss_Align",
    "A_ChainBlade",
    "A_HeavySword_Align",
    "A_HeavyWeapon_Align",
    "A_HiddenBlade_Master",
    "A_Knife_L_Tag",
    "A_LongWeapon_Bottom_Align",
    "A_Musket_Bottom_Align",
    "A_Pistol_L_Tag",
    "A_Pistol_R_Tag",
    "A_SmallWeapon_Tag",
    "BJ_DrumBone",
    "Fake_gunroot",
    "FakeGunRoot_Gameplay",
    "H_LB2_Skirt",
    "H_LB_Flaps",
    "H_LB_Skirt",
    "H_LF2_Skirt",
    "H_RB2_Skirt",
    "H_RB_Flaps",
    "H_RB_Skirt",
    "H_RF2_Skirt",
    "Head",
    "Hips",
    "I_LB_Skirt",
    "I_RB_Skirt",
    "Jaw",
    "L_LeftArm",
    "L_LeftArmNoRoll",
    "L_LeftForeArm",
    "L_RightArm",
    "L_RightArmNoRoll",
    "L_RightForeArm",
    "LeftArm",
    "LeftClavicle",
    "LeftEye",
    "LeftFoot",
    "LeftFootIndex1",
    "LeftFootThumb1",
    "LeftForeArm",
    "LeftHand",
    "LeftHand_Weapon_Ref",
    "LeftHandIndex1",
    "LeftHandIndex2",
    "LeftHandIndex3",
    "LeftHandMiddle1",
    "LeftHandMiddle2",
    "LeftHandMiddle3",
    "LeftHandPinky1",
    "LeftHandPinky2",
    "LeftHandPinky3",
    "LeftHandRing1",
    "LeftHandRing2",
    "LeftHandRing3",
    "LeftHandThumb1",
    "LeftHandThumb2",
    "LeftHandThumb3",
    "LeftLeg",
    "LeftShoulder",
    "LeftToeBase",
    "LeftUpLeg",
    "Neck",
    "Neck1",
    "Neck2",
    "O_LeftArm",
    "O_LeftElbow",
    "O_LeftForeArm",
    "O_LeftLeg",
    "O_RightArm",
    "O_RightElbow",
    "O_RightForeArm",
    "O_RightLeg",
    "P_Generic_Object_01",
    "P_Generic_Object_02",
    "P_Generic_Object_03",
    "P_Generic_Object_04",
    "P_Generic_Object_05",
    "P_LeftWaist_Tag",
    "Pelvis",
    "Prop_LeftHand",
    "Prop_LeftHand2",
    "Prop_LeftHand3",
    "Prop_LeftHand4",
    "Prop_RightHand",
    "Prop_RightHand2",
    "Prop_RightHand3",
    "Prop_RightHand4",
    "Reference",
    "RightArm",
    "RightClavicle",
    "RightEye",
    "RightFoot",
    "RightFootIndex1",
    "RightFootThumb1",
    "RightForeArm",
    "RightHand",
    "RightHand_Weapon_Ref",
    "RightHandIndex1",
    "RightHandIndex2",
    "RightHandIndex3",
    "RightHandMiddle1",
    "RightHandMiddle2",
    "RightHandMiddle3",
    "RightHandPinky1",
    "RightHandPinky2",
    "RightHandPinky3",
    "RightHandRing1",
    "RightHandRing2",
    "RightHandRing3",
    "RightHandThumb1",
    "RightHandThumb2",
    "RightHandThumb3",
    "RightLeg",
    "RightShoulder",
    "RightToeBase",
    "RightUpLeg",
    "Root",
    "Spine",
    "Spine1",
    "Spine2",
    "P_Sword_Tag",
    "A_Hidden_Blade",
    "A_Hidden_Blade2",
    "LeftEye",
    "RightEye",
];

/// hash → name for the built-in names.
pub fn builtin() -> &'static HashMap<u32, &'static str> {
    static CELL: OnceLock<HashMap<u32, &'static str>> = OnceLock::new();
    CELL.get_or_init(|| BUILTIN.iter().map(|n| (hash(n), *n)).collect())
}

/// More names from a `--names` file: one name a line, or a TSV whose first column is the name
/// (`#` comments and a `name` header skipped).
pub fn parse_names(text: &str) -> HashMap<u32, String> {
    text.lines()
        .filter(|l| !l.trim_start().starts_with('#'))
        .filter_map(|l| l.split('\t').next())
        .map(str::trim)
        .filter(|n| !n.is_empty() && *n != "name")
        .map(|n| (hash(n), n.to_string()))
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn hips_hash() {
        assert_eq!(super::hash("Hips"), 3738240529);
        assert_eq!(super::hash("Spine"), 1393476043);
        assert_eq!(super::hash("P_Sword_Tag"), 3055624953);
        assert_eq!(super::hash_of_display("x2BA0BB9F"), 0x2BA0BB9F);
        assert_eq!(super::unknown_name(0x2BA0BB9F), "x2BA0BB9F");
    }
}
