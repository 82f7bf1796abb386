//! Humanoid maps (VRM bone role → bone name): the built-in ones for the rigs skelport knows, map
//! files, finding a document's humanoid, the VRM hierarchy rules, and turning roles into a
//! retarget map.
//!
//! A humanoid map file (`schemas/humanoid-map.schema.json`) is JSON:
//! `{"name": "...", "description": "...", "strip_prefixes": ["mixamorig:"], "humanoid": {"hips": "pelvis", ...}}`;
//! only `humanoid` is required. Its keys are VRM 1.0 humanoid bone names, its values bone names
//! of the rig (looked up as they are, then with each of `strip_prefixes` removed from the rig's
//! names).

use crate::error::VrmError;
use crate::spec;
use foldhash::{HashMap, HashMapExt};
use serde::{Deserialize, Serialize};
use skelport_ir::rest::{HumanBone, Humanoid};
use skelport_ir::retarget::RetargetMap;
use skelport_ir::{BoneId, Document, Skeleton};
use std::collections::BTreeMap;

/// The IR extension namespace this crate owns.
pub const NAMESPACE: &str = "vrm";

/// A humanoid map: which bone of a rig plays each VRM humanoid role.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HumanoidMap {
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub description: String,
    /// Prefixes removed from the rig's bone names before look-up (`mixamorig:`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strip_prefixes: Vec<String>,
    /// Role → bone name.
    pub humanoid: BTreeMap<HumanBone, String>,
}

/// (name, JSON) of every built-in humanoid map.
pub const BUILT_IN: &[(&str, &str)] = &[
    ("mpfb-default", include_str!("../maps/mpfb-default.json")),
    ("mpfb-game_engine", include_str!("../maps/mpfb-game_engine.json")),
    ("mpfb-cmu_mb", include_str!("../maps/mpfb-cmu_mb.json")),
    ("mixamo", include_str!("../maps/mixamo.json")),
    ("sl-bento", include_str!("../maps/sl-bento.json")),
    ("ac-biped", include_str!("../maps/ac-biped.json")),
];

impl HumanoidMap {
    /// A built-in map by name.
    pub fn built_in(name: &str) -> Option<HumanoidMap> {
        BUILT_IN.iter().find(|(n, _)| *n == name).map(|(_, j)| serde_json::from_str(j).expect("built-in humanoid maps parse"))
    }

    /// Every built-in map.
    pub fn all_built_in() -> Vec<HumanoidMap> {
        BUILT_IN.iter().map(|(_, j)| serde_json::from_str(j).expect("built-in humanoid maps parse")).collect()
    }

    /// Parse a map file's bytes; `file` names it in errors.
    pub fn parse(bytes: &[u8], file: &str) -> Result<HumanoidMap, VrmError> {
        serde_json::from_slice(bytes).map_err(|e| VrmError::MapFile {
            file: file.to_owned(),
            message: format!(
                "line {}, column {}: {e}; a humanoid map is {{\"humanoid\": {{\"hips\": \"<bone>\", ...}}}} with VRM 1.0 bone names as keys (schemas/humanoid-map.schema.json)",
                e.line(),
                e.column()
            ),
        })
    }

    /// Whether JSON bytes look like a humanoid map (an object with a `humanoid` member) rather
    /// than a retarget map, so one `--map FILE` flag can take either.
    pub fn is_humanoid_map(bytes: &[u8]) -> bool {
        #[derive(Deserialize)]
        struct Probe {
            humanoid: Option<serde::de::IgnoredAny>,
        }
        serde_json::from_slice::<Probe>(bytes).is_ok_and(|p| p.humanoid.is_some())
    }

    /// The roles this map finds in `sk`, and the (role, bone name) pairs it names that `sk` lacks.
    ///
    /// A role's bone is the first bone named as the map says, else the first bone whose name is
    /// one of the map's prefixes and then that name. Bones are indexed by name once and each
    /// role looked up with each prefix: a map of every bone's name with every prefix stripped,
    /// for each built-in map, cost 261 M instructions on a 65,535-bone skeleton.
    pub fn resolve(&self, sk: &Skeleton) -> (Humanoid, Vec<(HumanBone, String)>) {
        self.resolve_in(&BoneNames::of(sk))
    }

    /// [`HumanoidMap::resolve`] on a skeleton's names indexed once ([`find`] tries every
    /// built-in map on each skeleton: one index, not one per map).
    pub fn resolve_in(&self, names: &BoneNames<'_>) -> (Humanoid, Vec<(HumanBone, String)>) {
        let first = &names.0;
        let mut prefixed = String::new();
        let mut lookup = |name: &str| -> Option<BoneId> {
            let exact = first.get(name).copied();
            let i = exact.or_else(|| {
                self.strip_prefixes
                    .iter()
                    .filter_map(|p| {
                        prefixed.clear();
                        prefixed.push_str(p);
                        prefixed.push_str(name);
                        first.get(prefixed.as_str()).copied()
                    })
                    .min()
            })?;
            Some(BoneId::from_index(i))
        };
        let mut found = Humanoid::new();
        let mut absent = Vec::new();
        for (&role, name) in &self.humanoid {
            match lookup(name.as_str()) {
                Some(id) => {
                    found.insert(role, id);
                }
                None => absent.push((role, name.clone())),
            }
        }
        (found, absent)
    }
}

/// A skeleton's bones by name: the first bone of each name.
pub struct BoneNames<'a>(HashMap<&'a str, usize>);

impl<'a> BoneNames<'a> {
    /// Index `sk`'s bones by name.
    pub fn of(sk: &'a Skeleton) -> Self {
        let mut first: HashMap<&str, usize> = HashMap::with_capacity(sk.bones.len());
        for (i, b) in sk.bones.iter().enumerate() {
            first.entry(b.name.as_str()).or_insert(i);
        }
        BoneNames(first)
    }
}

/// A document's humanoid: the skeleton and which of its bones plays each role.
#[derive(Debug, Clone, PartialEq)]
pub struct Found {
    pub skeleton: skelport_ir::SkeletonId,
    pub humanoid: Humanoid,
    /// Where the roles came from, for messages (`built-in map mpfb-game_engine`).
    pub source: String,
}

fn missing_required(h: &Humanoid) -> Vec<HumanBone> {
    spec::required().filter(|r| !h.contains_key(r)).collect()
}

fn role_list(roles: &[HumanBone]) -> String {
    roles.iter().map(|r| r.name()).collect::<Vec<_>>().join(", ")
}

/// The roles stored on a skeleton by the VRM reader (`ext["vrm"].humanoid`: role → bone name).
pub fn stored_roles(sk: &Skeleton) -> Option<HumanoidMap> {
    let v = sk.ext.raw(NAMESPACE)?.get("humanoid")?;
    let humanoid: BTreeMap<HumanBone, String> = serde_json::from_value(v.clone()).ok()?;
    Some(HumanoidMap { name: "the file's VRM humanoid".into(), humanoid, ..Default::default() })
}

/// Store roles on a skeleton (`ext["vrm"].humanoid`), keeping whatever else the namespace holds.
pub fn store_roles(sk: &mut Skeleton, humanoid: &Humanoid) {
    let names: BTreeMap<&str, &str> = humanoid.iter().map(|(r, b)| (r.name(), sk.bones[b.index()].name.as_str())).collect();
    let mut v = sk.ext.raw(NAMESPACE).cloned().unwrap_or_else(|| serde_json::json!({}));
    if let Some(o) = v.as_object_mut() {
        o.insert("humanoid".into(), serde_json::json!(names));
    }
    sk.ext.set_raw(NAMESPACE, v);
}

/// Find the humanoid of `doc`: with `map`, the skeleton where it finds the most roles (every
/// required role must be found); without, the roles a VRM source stored, else the built-in map
/// that finds every required role and the most roles overall. The error names the missing
/// required bones.
pub fn find(doc: &Document, map: Option<&HumanoidMap>) -> Result<Found, VrmError> {
    if doc.skeletons.is_empty() {
        return Err(VrmError::Humanoid("the document has no skeleton; VRM needs a humanoid rig".into()));
    }
    if let Some(map) = map {
        let (si, (h, absent)) = doc
            .skeletons
            .iter()
            .map(|sk| map.resolve(sk))
            .enumerate()
            .max_by_key(|(i, (h, _))| (h.len(), usize::MAX - i))
            .expect("a skeleton");
        let missing = missing_required(&h);
        if !missing.is_empty() {
            let named: Vec<String> = missing
                .iter()
                .map(|r| match absent.iter().find(|(a, _)| a == r) {
                    Some((_, name)) => format!("{r} (\"{name}\" is no bone of skeleton \"{}\")", doc.skeletons[si].name),
                    None => format!("{r} (not in the map)"),
                })
                .collect();
            return Err(VrmError::Humanoid(format!(
                "humanoid map '{}' lacks required VRM bones: {}; add them to the map",
                if map.name.is_empty() { "(file)" } else { &map.name },
                named.join(", ")
            )));
        }
        return Ok(Found {
            skeleton: skelport_ir::SkeletonId::from_index(si),
            humanoid: h,
            source: format!("humanoid map {}", if map.name.is_empty() { "(file)" } else { &map.name }),
        });
    }
    let names: Vec<BoneNames<'_>> = doc.skeletons.iter().map(BoneNames::of).collect();
    for (si, sk) in doc.skeletons.iter().enumerate() {
        if let Some(m) = stored_roles(sk) {
            let (h, _) = m.resolve_in(&names[si]);
            if missing_required(&h).is_empty() {
                return Ok(Found { skeleton: skelport_ir::SkeletonId::from_index(si), humanoid: h, source: m.name });
            }
        }
    }
    // (matched roles, share of the map's names found, skeleton, map)
    let mut best: Option<(usize, f64, usize, HumanoidMap, Humanoid)> = None;
    let mut closest: Option<(usize, usize, HumanoidMap, Humanoid)> = None;
    for (si, names) in names.iter().enumerate() {
        for m in HumanoidMap::all_built_in() {
            let (h, _) = m.resolve_in(names);
            let required_found = spec::required().filter(|r| h.contains_key(r)).count();
            if missing_required(&h).is_empty() {
                let share = h.len() as f64 / m.humanoid.len() as f64;
                if best.as_ref().is_none_or(|b| (h.len(), share) > (b.0, b.1)) {
                    best = Some((h.len(), share, si, m, h));
                }
            } else if closest.as_ref().is_none_or(|c| (required_found, h.len()) > (c.0, c.3.len())) {
                closest = Some((required_found, si, m, h));
            }
        }
    }
    if let Some((_, _, si, m, h)) = best {
        return Ok(Found {
            skeleton: skelport_ir::SkeletonId::from_index(si),
            humanoid: h,
            source: format!("built-in humanoid map {}", m.name),
        });
    }
    let (_, si, m, h) = closest.expect("at least one map was tried");
    Err(VrmError::Humanoid(format!(
        "skeleton \"{}\" is not a humanoid skelport knows: it lacks the required VRM bones {} (the closest built-in map, {}, finds {} of 15); \
         give a humanoid map with --map FILE ({{\"humanoid\": {{\"hips\": \"<bone>\", ...}}}}, docs/formats/vrm.md)",
        doc.skeletons[si].name,
        role_list(&missing_required(&h)),
        m.name,
        15 - missing_required(&h).len()
    )))
}

/// Check VRM 1.0's humanoid hierarchy on `sk`: roles on distinct bones; each role's nearest role
/// ancestor is its parent role (or, when that is not mapped and may be skipped, the next one up);
/// bones that need their parent role have it.
pub fn check_hierarchy(sk: &Skeleton, h: &Humanoid) -> Result<(), VrmError> {
    let mut role_of: HashMap<BoneId, HumanBone> = HashMap::new();
    for (&r, &b) in h {
        if let Some(other) = role_of.insert(b, r) {
            return Err(VrmError::Humanoid(format!(
                "bone \"{}\" is mapped to both {other} and {r}; each humanoid bone needs a bone of its own",
                sk.bones[b.index()].name
            )));
        }
    }
    let bone_name = |b: BoneId| sk.bones[b.index()].name.as_str();
    for (&r, &b) in h {
        let rule = spec::rule(r);
        if rule.needs_parent {
            if let Some(p) = rule.parent.filter(|p| !h.contains_key(p)) {
                return Err(VrmError::Humanoid(format!(
                    "{r} (\"{}\") is mapped but {p} is not; VRM allows {r} only together with {p}: map {p} or drop {r}",
                    bone_name(b)
                )));
            }
        }
        let mut want = rule.parent;
        while let Some(p) = want.filter(|p| !h.contains_key(p)) {
            want = spec::rule(p).parent;
        }
        let mut up = sk.bones[b.index()].parent;
        let mut got = None;
        while let Some(a) = up {
            if let Some(&ar) = role_of.get(&a) {
                got = Some(ar);
                break;
            }
            up = sk.bones[a.index()].parent;
        }
        if got != want {
            let want_s = want.map_or("no humanoid bone (hips is the top one)".to_string(), |w| format!("{w} (\"{}\")", bone_name(h[&w])));
            let got_s = got.map_or("none".to_string(), |g| format!("{g} (\"{}\")", bone_name(h[&g])));
            return Err(VrmError::Humanoid(format!(
                "{r} (\"{}\") must be below {want_s}, but the nearest humanoid bone above it is {got_s}; VRM fixes each humanoid bone's parent: fix the rig's hierarchy or the humanoid map",
                bone_name(b)
            )));
        }
    }
    Ok(())
}

/// A retarget map renaming the humanoid bones of `doc` (found as [`find`] does, without a map) to
/// the bones `target` gives the same roles; bones with no role in both are left out (a retarget
/// drops them, merging their weights up). What `--map humanoid` applies, with the target format's
/// `Format::humanoid_names` map: VRM → SL with `sl-bento`, VRM → AnvilToolkit with `ac-biped`.
pub fn retarget_map(doc: &Document, target: &HumanoidMap) -> Result<RetargetMap, VrmError> {
    let found = find(doc, None)?;
    let sk = doc.skeleton(found.skeleton);
    let bones =
        found.humanoid.iter().filter_map(|(r, b)| target.humanoid.get(r).map(|t| (sk.bones[b.index()].name.clone(), t.clone()))).collect();
    Ok(RetargetMap {
        name: "humanoid".into(),
        description: format!(
            "humanoid roles ({}) to {}",
            found.source,
            if target.name.is_empty() { "the target map" } else { &target.name }
        ),
        source: found.source,
        target: target.name.clone(),
        strip_prefixes: Vec::new(),
        bones,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use skelport_ir::{Bone, Transform};

    #[test]
    fn built_in_maps_parse_and_name_valid_roles() {
        let all = HumanoidMap::all_built_in();
        assert_eq!(all.len(), BUILT_IN.len());
        for m in &all {
            assert!(spec::required().all(|r| m.humanoid.contains_key(&r)), "{} lacks a required role", m.name);
            let mut names: Vec<&String> = m.humanoid.values().collect();
            names.sort();
            names.dedup();
            assert_eq!(names.len(), m.humanoid.len(), "{}: a bone is named twice", m.name);
        }
    }

    #[test]
    fn map_files_are_told_from_retarget_maps() {
        assert!(HumanoidMap::is_humanoid_map(br#"{"humanoid": {"hips": "pelvis"}}"#));
        assert!(!HumanoidMap::is_humanoid_map(br#"{"name": "x", "bones": {"a": "b"}}"#));
        let e = HumanoidMap::parse(br#"{"humanoid": {"Hips": "pelvis"}}"#, "m.json").unwrap_err().to_string();
        assert!(e.contains("m.json") && e.contains("\"Hips\" is not a humanoid bone name"), "{e}");
    }

    fn chain(names: &[(&str, Option<usize>)]) -> Skeleton {
        let mut sk = Skeleton::new("s");
        for (n, p) in names {
            sk.push(Bone::new(*n, p.map(BoneId::from_index), Transform::IDENTITY));
        }
        sk
    }

    /// The roles [`HumanoidMap::resolve`] finds equal those of the rule it implements, written
    /// out plainly (every bone's name, then every bone's name with each prefix stripped, first
    /// one kept), on random rigs whose names repeat, carry one or two prefixes, or both.
    #[test]
    fn resolve_equals_the_plain_rule() {
        let plain = |m: &HumanoidMap, sk: &Skeleton| -> Humanoid {
            let mut by_name: std::collections::HashMap<&str, BoneId> = std::collections::HashMap::new();
            for (i, b) in sk.bones.iter().enumerate() {
                by_name.entry(b.name.as_str()).or_insert(BoneId::from_index(i));
            }
            for (i, b) in sk.bones.iter().enumerate() {
                for p in &m.strip_prefixes {
                    if let Some(rest) = b.name.strip_prefix(p.as_str()) {
                        by_name.entry(rest).or_insert(BoneId::from_index(i));
                    }
                }
            }
            m.humanoid.iter().filter_map(|(&r, n)| by_name.get(n.as_str()).map(|&id| (r, id))).collect()
        };
        let mut next = skelport_ir::testing::xorshift(0x5eed_0000_4a11u64);
        let roles = ["hips", "spine", "head", "Hips", "mixamorig:Spine"];
        let prefixes = ["mixamorig:", "mixamorig:mixamorig:", "", "Character1_"];
        let mut compared = 0;
        for _ in 0..2000 {
            let mut m = HumanoidMap::default();
            for (k, role) in [HumanBone::Hips, HumanBone::Spine, HumanBone::Head].into_iter().enumerate() {
                m.humanoid.insert(role, roles[(next() as usize + k) % roles.len()].to_string());
            }
            m.strip_prefixes = (0..next() % 3).map(|_| prefixes[next() as usize % prefixes.len()].to_string()).collect();
            let names: Vec<String> = (0..next() % 8)
                .map(|_| {
                    format!(
                        "{}{}",
                        ["", "mixamorig:", "Character1_", "mixamorig:mixamorig:"][next() as usize % 4],
                        roles[next() as usize % roles.len()]
                    )
                })
                .collect();
            let sk = chain(&names.iter().map(|n| (n.as_str(), None)).collect::<Vec<_>>());
            let want = plain(&m, &sk);
            compared += want.len();
            assert_eq!(m.resolve(&sk).0, want, "{names:?} {:?} {:?}", m.strip_prefixes, m.humanoid);
        }
        assert!(compared > 1000, "roles were found and compared: {compared}");
    }

    #[test]
    fn humanik_characters_are_found_by_the_mixamo_map() {
        // Maya's and MotionBuilder's HumanIK names, as in ufbx's maya_character files.
        let mut names: Vec<(String, Option<usize>)> = vec![("Character1_Hips".into(), None), ("Character1_Spine".into(), Some(0))];
        names.push(("Character1_Neck".into(), Some(1)));
        names.push(("Character1_Head".into(), Some(2)));
        for side in ["Left", "Right"] {
            let arm = names.len();
            for (k, n) in ["Shoulder", "Arm", "ForeArm", "Hand"].iter().enumerate() {
                names.push((format!("Character1_{side}{n}"), Some(if k == 0 { 1 } else { arm + k - 1 })));
            }
            let leg = names.len();
            for (k, n) in ["UpLeg", "Leg", "Foot", "ToeBase"].iter().enumerate() {
                names.push((format!("Character1_{side}{n}"), Some(if k == 0 { 0 } else { leg + k - 1 })));
            }
        }
        let borrowed: Vec<(&str, Option<usize>)> = names.iter().map(|(n, p)| (n.as_str(), *p)).collect();
        let sk = chain(&borrowed);
        let (h, _) = HumanoidMap::built_in("mixamo").unwrap().resolve(&sk);
        assert!(missing_required(&h).is_empty(), "missing {:?}", missing_required(&h));
        assert_eq!(h.len(), names.len(), "every HumanIK bone here has a role");
        assert_eq!(h[&HumanBone::LeftLowerArm], sk.find("Character1_LeftForeArm").unwrap());
        check_hierarchy(&sk, &h).unwrap();
    }

    #[test]
    fn hierarchy_rules() {
        use HumanBone::*;
        // hips(0) spine(1) head(2) armL(3) foreL(4) handL(5) under spine; a helper between.
        let sk = chain(&[
            ("hips", None),
            ("spine", Some(0)),
            ("head", Some(1)),
            ("helper", Some(1)),
            ("armL", Some(3)),
            ("foreL", Some(4)),
            ("handL", Some(5)),
            ("thumb2", Some(6)),
            ("handX", Some(4)),
        ]);
        let h = |pairs: &[(HumanBone, usize)]| pairs.iter().map(|&(r, b)| (r, BoneId::from_index(b))).collect::<Humanoid>();
        // Skipped optional parents (neck, chest, shoulder) and a non-role bone between are fine.
        check_hierarchy(&sk, &h(&[(Hips, 0), (Spine, 1), (Head, 2), (LeftUpperArm, 4), (LeftLowerArm, 5), (LeftHand, 6)])).unwrap();
        // A hand below the upper arm directly (the lower arm elsewhere) is refused, naming both.
        let e = check_hierarchy(&sk, &h(&[(Hips, 0), (Spine, 1), (LeftUpperArm, 4), (LeftLowerArm, 5), (LeftHand, 8)])).unwrap_err();
        assert!(
            e.to_string().contains("leftHand (\"handX\") must be below leftLowerArm (\"foreL\"), but the nearest humanoid bone above it is leftUpperArm (\"armL\")"),
            "{e}"
        );
        // A proximal thumb needs its metacarpal.
        let e = check_hierarchy(&sk, &h(&[(Hips, 0), (LeftHand, 6), (LeftThumbProximal, 7)])).unwrap_err();
        assert!(e.to_string().contains("leftThumbProximal (\"thumb2\") is mapped but leftThumbMetacarpal is not"), "{e}");
        // One bone, two roles.
        let e = check_hierarchy(&sk, &h(&[(Hips, 0), (Spine, 0)])).unwrap_err();
        assert!(e.to_string().contains("mapped to both"), "{e}");
    }
}
