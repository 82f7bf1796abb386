//! Bone-name hashes: the CRC-32 the engine identifies bones by, and the names we can show for them.
//!
//! A bone's `BoneID` is the CRC-32 (IEEE polynomial, as zlib's `crc32`) of its exact-case name:
//! `"Hips"` is 3738240529. The file's `HashName`/`HashValue` attribute is only a label; the
//! number rules. A hash no dictionary knows is shown as `x` + eight upper-case hex digits
//! (`x2BA0BB9F`), which this crate also accepts back as that exact hash.

use crate::error::{AnvilError, Result};
use std::collections::HashMap;
use std::path::Path;
use std::sync::OnceLock;

/// CRC-32 (IEEE, zlib) of a name's UTF-8 bytes.
pub fn bone_hash(name: &str) -> u32 {
    crc32fast::hash(name.as_bytes())
}

/// `x` + eight upper-case hex digits.
pub fn hex_name(hash: u32) -> String {
    format!("x{hash:08X}")
}

/// The hash a display name stands for: `x2BA0BB9F` is that hash, any other name its CRC-32.
pub fn hash_of_display(name: &str) -> u32 {
    parse_hex_name(name).unwrap_or_else(|| bone_hash(name))
}

/// `Some(hash)` for a name of the form `x` + eight hex digits.
pub fn parse_hex_name(name: &str) -> Option<u32> {
    let h = name.strip_prefix('x')?;
    if h.len() == 8 && h.bytes().all(|b| b.is_ascii_hexdigit()) {
        u32::from_str_radix(h, 16).ok()
    } else {
        None
    }
}

/// The built-in dictionary.
///
/// Why these names: each is a fact established by its hash, not copied text. The standard
/// AnvilNext biped (Reference → Hips/Spine chains, HumanIK-style limb and finger names) is named
/// in NameTaken3125/ACUFixes' ACU track table (reversed hash names whose CRC-32 match),
/// in the Ghost Recon Wildlands AnvilNext documentation (name + hash pairs) and in the GRB bone
/// name list; the remaining biped, helper (`O_`, `L_`), skirt (`H_`/`I_`), prop and attachment
/// (`A_`/`P_`) names were confirmed by their hash being present in ACU's bone hierarchy
/// (gentlegiantJGC/ACExplorer). `A_Hidden_Blade`, `A_Hidden_Blade2` and `P_Sword_Tag` are the
/// new bones of the hidden-blade and sword addons in the AnvilToolkit wiki's Skeleton page, whose
/// hashes it prints. Names whose hash nothing public confirms are left out: they would mislabel.
pub const BUILTIN_NAMES: &[&str] = &[
    // Root and spine.
    "Reference",
    "Root",
    "Hips",
    "Pelvis",
    "Spine",
    "Spine1",
    "Spine2",
    "Neck",
    "Neck1",
    "Neck2",
    "Head",
    "Jaw",
    "LeftEye",
    "RightEye",
    // Legs.
    "LeftUpLeg",
    "LeftLeg",
    "LeftFoot",
    "LeftToeBase",
    "LeftFootThumb1",
    "LeftFootIndex1",
    "RightUpLeg",
    "RightLeg",
    "RightFoot",
    "RightToeBase",
    "RightFootThumb1",
    "RightFootIndex1",
    // Arms.
    "LeftClavicle",
    "LeftShoulder",
    "LeftArm",
    "LeftForeArm",
    "LeftHand",
    "LeftHand_Weapon_Ref",
    "RightClavicle",
    "RightShoulder",
    "RightArm",
    "RightForeArm",
    "RightHand",
    "RightHand_Weapon_Ref",
    // Fingers.
    "LeftHandThumb1",
    "LeftHandThumb2",
    "LeftHandThumb3",
    "LeftHandIndex1",
    "LeftHandIndex2",
    "LeftHandIndex3",
    "LeftHandMiddle1",
    "LeftHandMiddle2",
    "LeftHandMiddle3",
    "LeftHandRing1",
    "LeftHandRing2",
    "LeftHandRing3",
    "LeftHandPinky1",
    "LeftHandPinky2",
    "LeftHandPinky3",
    "RightHandThumb1",
    "RightHandThumb2",
    "RightHandThumb3",
    "RightHandIndex1",
    "RightHandIndex2",
    "RightHandIndex3",
    "RightHandMiddle1",
    "RightHandMiddle2",
    "RightHandMiddle3",
    "RightHandRing1",
    "RightHandRing2",
    "RightHandRing3",
    "RightHandPinky1",
    "RightHandPinky2",
    "RightHandPinky3",
    // Helper and twist bones.
    "O_LeftArm",
    "O_LeftForeArm",
    "O_LeftElbow",
    "O_LeftLeg",
    "O_RightArm",
    "O_RightForeArm",
    "O_RightElbow",
    "O_RightLeg",
    "L_LeftArm",
    "L_LeftForeArm",
    "L_LeftArmNoRoll",
    "L_RightArm",
    "L_RightForeArm",
    "L_RightArmNoRoll",
    // Skirt and flap physics bones.
    "H_LB_Skirt",
    "H_LB2_Skirt",
    "H_LF2_Skirt",
    "H_RB_Skirt",
    "H_RB2_Skirt",
    "H_RF2_Skirt",
    "H_LB_Flaps",
    "H_RB_Flaps",
    "I_LB_Skirt",
    "I_RB_Skirt",
    // Attachment, prop and effect bones.
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
    "A_Hidden_Blade",
    "A_Hidden_Blade2",
    "P_Sword_Tag",
    "P_LeftWaist_Tag",
    "P_Generic_Object_01",
    "P_Generic_Object_02",
    "P_Generic_Object_03",
    "P_Generic_Object_04",
    "P_Generic_Object_05",
    "Prop_LeftHand",
    "Prop_LeftHand2",
    "Prop_LeftHand3",
    "Prop_LeftHand4",
    "Prop_RightHand",
    "Prop_RightHand2",
    "Prop_RightHand3",
    "Prop_RightHand4",
    "BJ_DrumBone",
    "Fake_gunroot",
    "FakeGunRoot_Gameplay",
];

fn builtin() -> &'static HashMap<u32, &'static str> {
    static MAP: OnceLock<HashMap<u32, &'static str>> = OnceLock::new();
    MAP.get_or_init(|| BUILTIN_NAMES.iter().map(|n| (bone_hash(n), *n)).collect())
}

/// A hash → name dictionary: the built-in names plus any loaded from a file.
#[derive(Debug, Clone, Default)]
pub struct Names {
    extra: HashMap<u32, String>,
}

impl Names {
    /// The built-in names only.
    pub fn builtin() -> Names {
        Names::default()
    }

    /// The built-in names plus a file (`--names`): one name a line, or a TSV whose first column is
    /// the name; blank lines and `#` comments are skipped, and a `name` header is ignored.
    pub fn with_file(path: &Path) -> Result<Names> {
        let io = |message: String| AnvilError::Io { file: path.display().to_string(), message };
        // Through the checked reader: a regular file within the size limit, a FIFO refused.
        let bytes = skelport_ir::files::read_user_file(path, None).map_err(|e| io(e.to_string()))?;
        let text = String::from_utf8(bytes)
            .map_err(|e| io(format!("not UTF-8 at byte {}; a names file is UTF-8 text", e.utf8_error().valid_up_to())))?;
        let mut n = Names::default();
        n.add_list(&text);
        Ok(n)
    }

    /// Add names from text in the `--names` format.
    pub fn add_list(&mut self, text: &str) {
        for line in text.lines() {
            let line = line.trim_end_matches('\r');
            if line.trim().is_empty() || line.trim_start().starts_with('#') {
                continue;
            }
            let name = line.split('\t').next().unwrap_or("").trim();
            if name.is_empty() || name == "name" {
                continue;
            }
            self.add(name);
        }
    }

    /// Add one name.
    pub fn add(&mut self, name: &str) {
        self.extra.insert(bone_hash(name), name.to_string());
    }

    /// The name for a hash, if known.
    pub fn resolve(&self, hash: u32) -> Option<&str> {
        self.extra.get(&hash).map(String::as_str).or_else(|| builtin().get(&hash).copied())
    }

    /// The name to show for a bone: the dictionary's, else the file's label when its CRC-32 is the
    /// hash, else `x` + hex.
    pub fn display(&self, hash: u32, label: Option<&str>) -> String {
        if let Some(n) = self.resolve(hash) {
            return n.to_string();
        }
        match label {
            Some(l) if bone_hash(l) == hash => l.to_string(),
            _ => hex_name(hash),
        }
    }
}

/// The left/right counterpart of a name (`LeftArm` ↔ `RightArm`, `L_LeftArm` ↔ `L_RightArm`,
/// `A_Pistol_L_Tag` ↔ `A_Pistol_R_Tag`), if it has one.
pub fn mirror_name(name: &str) -> Option<String> {
    if name.contains("Left") {
        return Some(name.replacen("Left", "Right", 1));
    }
    if name.contains("Right") {
        return Some(name.replacen("Right", "Left", 1));
    }
    for (a, b) in [("_L_", "_R_"), ("_R_", "_L_")] {
        if name.contains(a) {
            return Some(name.replacen(a, b, 1));
        }
    }
    for (a, b) in [("_L", "_R"), ("_R", "_L"), (".L", ".R"), (".R", ".L")] {
        if let Some(stem) = name.strip_suffix(a) {
            return Some(format!("{stem}{b}"));
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crc_of_hips() {
        assert_eq!(bone_hash("Hips"), 3_738_240_529);
        assert_eq!(bone_hash("Spine"), 1_393_476_043);
        assert_eq!(bone_hash("P_Sword_Tag"), 3_055_624_953);
        assert_eq!(bone_hash("P_LeftWaist_Tag"), 981_686_566);
    }

    #[test]
    fn display_and_hex() {
        let n = Names::builtin();
        assert_eq!(n.display(3_738_240_529, None), "Hips");
        assert_eq!(n.display(0x2BA0_BB9F, Some("wrong")), "x2BA0BB9F");
        assert_eq!(parse_hex_name("x2BA0BB9F"), Some(0x2BA0_BB9F));
        assert_eq!(hash_of_display("x2BA0BB9F"), 0x2BA0_BB9F);
        assert_eq!(mirror_name("LeftHandIndex1").as_deref(), Some("RightHandIndex1"));
        assert_eq!(mirror_name("Spine"), None);
    }

    #[test]
    fn builtin_has_no_duplicates() {
        let mut v: Vec<&str> = BUILTIN_NAMES.to_vec();
        v.sort();
        v.dedup();
        assert_eq!(v.len(), BUILTIN_NAMES.len());
    }
}
