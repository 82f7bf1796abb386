//! Retargeting by name map: rename bones to another skeleton's names, drop bones the map does
//! not name (their children move to the nearest kept ancestor, keeping their world rest pose),
//! and merge dropped joints' skin weights into that ancestor.
//!
//! Maps are data (`schemas/retarget-map.schema.json`): `{"name", "description", "source",
//! "target", "bones": {"source bone": "target bone", …}}`.

use crate::document::{BoneId, Document, Skeleton, Transform};
use glam::DMat4;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};

/// A bone-name map from one skeleton convention to another.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RetargetMap {
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// What the map reads (e.g. `mpfb game_engine`).
    #[serde(default)]
    pub source: String,
    /// What the map produces (e.g. `sl bento`).
    #[serde(default)]
    pub target: String,
    /// Prefixes removed from source bone names before look-up (e.g. `mixamorig:`), so one map
    /// serves the variants exporters produce.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub strip_prefixes: Vec<String>,
    /// Source bone name → target bone name.
    pub bones: BTreeMap<String, String>,
}

/// Why a map cannot be applied.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum RetargetError {
    #[error("retarget map '{map}': source bones \"{a}\" and \"{b}\" both map to \"{target}\"; a target name may be used once")]
    DuplicateTarget { map: String, a: String, b: String, target: String },
    #[error("retarget map '{map}' matches no bone of skeleton \"{skeleton}\"; is it the right map for this rig?")]
    NothingMatched { map: String, skeleton: String },
}

/// What applying a map did.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RetargetReport {
    /// Source bones kept and renamed.
    pub renamed: usize,
    /// Source bones dropped (no target), with the bone their weights went to (if any).
    pub dropped: Vec<(String, Option<String>)>,
}

impl RetargetMap {
    /// The target name for a source bone name, if the map names it.
    pub fn lookup(&self, name: &str) -> Option<&String> {
        self.bones
            .get(name)
            .or_else(|| self.strip_prefixes.iter().find_map(|p| name.strip_prefix(p.as_str()).and_then(|n| self.bones.get(n))))
    }

    fn check(&self) -> Result<(), RetargetError> {
        let mut seen: HashMap<&str, &str> = HashMap::new();
        for (s, t) in &self.bones {
            if let Some(prev) = seen.insert(t.as_str(), s.as_str()) {
                return Err(RetargetError::DuplicateTarget { map: self.name.clone(), a: prev.into(), b: s.clone(), target: t.clone() });
            }
        }
        Ok(())
    }
}

fn local_from_worlds(parent: &DMat4, child: &DMat4) -> Transform {
    let m = parent.inverse() * *child;
    let (scale, rotation, translation) = m.to_scale_rotation_translation();
    Transform { translation, rotation: rotation.normalize(), scale }
}

/// Apply `map` to every skeleton (and its skins) of `doc`.
pub fn apply(doc: &mut Document, map: &RetargetMap) -> Result<RetargetReport, RetargetError> {
    map.check()?;
    let mut report = RetargetReport::default();
    let skins_by_skeleton = doc.skins_by_skeleton();
    for (si, own_skins) in skins_by_skeleton.into_iter().enumerate() {
        let sk = &doc.skeletons[si];
        if !sk.bones.iter().any(|b| map.lookup(&b.name).is_some()) {
            return Err(RetargetError::NothingMatched { map: map.name.clone(), skeleton: sk.name.clone() });
        }
        let world = sk.world_matrices();
        let n = sk.bones.len();
        // new index of each kept bone; for dropped bones, the new index of the nearest kept ancestor.
        let mut new_of: Vec<Option<u32>> = vec![None; n];
        let mut target_of: Vec<Option<u32>> = vec![None; n];
        let mut old_of_new: Vec<usize> = Vec::new();
        let mut out = Skeleton { name: sk.name.clone(), bones: Vec::new(), ext: sk.ext.clone() };
        for (i, b) in sk.bones.iter().enumerate() {
            let kept_parent = b.parent.filter(|p| p.index() < i).and_then(|p| target_of[p.index()]);
            match map.lookup(&b.name) {
                Some(new_name) => {
                    let mut nb = b.clone();
                    nb.name = new_name.clone();
                    nb.parent = kept_parent.map(BoneId::new);
                    nb.rest = match kept_parent {
                        Some(p) => local_from_worlds(&world[old_of_new[p as usize]], &world[i]),
                        None => local_from_worlds(&DMat4::IDENTITY, &world[i]),
                    };
                    let id = out.bones.len() as u32;
                    out.bones.push(nb);
                    old_of_new.push(i);
                    new_of[i] = Some(id);
                    target_of[i] = Some(id);
                    report.renamed += 1;
                }
                None => {
                    target_of[i] = kept_parent;
                    report.dropped.push((b.name.clone(), kept_parent.map(|p| out.bones[p as usize].name.clone())));
                }
            }
        }
        for b in &mut out.bones {
            b.mirror = b.mirror.and_then(|m| new_of.get(m.index()).copied().flatten()).map(BoneId::new);
        }
        // Skins on this skeleton: joint slots follow their bone's target; slots landing on the
        // same bone merge (weights add up).
        for k in own_skins {
            let s = &mut doc.skins[k];
            let mut joints: Vec<BoneId> = Vec::new();
            let mut ibms: Vec<DMat4> = Vec::new();
            let mut slot_map: Vec<u32> = Vec::with_capacity(s.joints.len());
            let mut orphan_slots = Vec::new();
            // Kept joints first so they keep their own inverse bind matrices.
            let mut order: Vec<usize> = (0..s.joints.len()).collect();
            order.sort_by_key(|&k| new_of.get(s.joints[k].index()).copied().flatten().is_none());
            let mut slot_of_bone: HashMap<u32, u32> = HashMap::new();
            slot_map.resize(s.joints.len(), u32::MAX);
            for k in order {
                let old = s.joints[k].index();
                match target_of.get(old).copied().flatten() {
                    Some(t) => {
                        let slot = *slot_of_bone.entry(t).or_insert_with(|| {
                            joints.push(BoneId::new(t));
                            let own = new_of.get(old).copied().flatten() == Some(t);
                            ibms.push(if own {
                                s.inverse_bind.get(k).copied().unwrap_or(DMat4::IDENTITY)
                            } else {
                                world[old_of_new[t as usize]].inverse()
                            });
                            (joints.len() - 1) as u32
                        });
                        slot_map[k] = slot;
                    }
                    None => orphan_slots.push(k),
                }
            }
            // Joints with no kept ancestor: their weight is dropped (listed in the report).
            for k in orphan_slots {
                s.influences.map_remove_slot(k as u32);
            }
            s.influences.remap_slots(&slot_map);
            s.joints = joints;
            s.inverse_bind = ibms;
        }
        doc.skeletons[si] = out;
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::document::{Bone, Mesh};
    use crate::frame::Frame;
    use crate::skin::{Influences, Skin};
    use glam::{DQuat, DVec3};

    #[test]
    fn drops_unmapped_bones_and_merges_their_weights() {
        let mut sk = Skeleton::new("s");
        sk.push(Bone::new("hips", None, Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 1.0, 0.0))));
        sk.push(Bone::new("twist", Some(BoneId::new(0)), Transform::from_rt(DQuat::from_rotation_z(0.3), DVec3::new(0.0, 0.2, 0.0))));
        sk.push(Bone::new("chest", Some(BoneId::new(1)), Transform::from_rt(DQuat::IDENTITY, DVec3::new(0.0, 0.2, 0.0))));
        let before = sk.world_matrices();
        let mut d = Document::new(Frame::GLTF);
        d.meshes.push(Mesh { name: "m".into(), positions: vec![DVec3::ZERO; 2], ..Default::default() });
        d.skins.push(Skin {
            name: "k".into(),
            skeleton: crate::SkeletonId::new(0),
            mesh: Some(crate::MeshId::new(0)),
            joints: vec![BoneId::new(0), BoneId::new(1), BoneId::new(2)],
            inverse_bind: before.iter().map(|m| m.inverse()).collect(),
            bind_shape: DMat4::IDENTITY,
            influences: Influences::from_lists(vec![vec![(0, 0.5), (1, 0.5)], vec![(2, 1.0)]]),
            ext: Default::default(),
        });
        d.skeletons.push(sk);
        let map = RetargetMap {
            name: "t".into(),
            description: String::new(),
            source: String::new(),
            target: String::new(),
            strip_prefixes: vec![],
            bones: [("hips", "mPelvis"), ("chest", "mChest")].iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
        };
        let r = apply(&mut d, &map).unwrap();
        assert_eq!(r.renamed, 2);
        assert_eq!(r.dropped, vec![("twist".to_string(), Some("mPelvis".to_string()))]);
        let sk = &d.skeletons[0];
        assert_eq!(sk.bones.len(), 2);
        assert_eq!(sk.bones[1].parent, Some(BoneId::new(0)));
        // World rest of the chest is unchanged.
        let after = sk.world_matrices();
        assert!((after[1] - before[2]).to_cols_array().iter().all(|x| x.abs() < 1e-12));
        // Vertex 0's weights merged onto the pelvis.
        assert_eq!(d.skins[0].influences.vertex(0).collect::<Vec<_>>(), vec![(0, 1.0)]);
        assert_eq!(d.skins[0].joints.len(), 2);
        assert!(crate::validate::validate(&d).is_empty());
    }

    #[test]
    fn duplicate_targets_are_refused() {
        let map = RetargetMap {
            name: "bad".into(),
            description: String::new(),
            source: String::new(),
            target: String::new(),
            strip_prefixes: vec![],
            bones: [("a", "X"), ("b", "X")].iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
        };
        let mut d = Document::new(Frame::GLTF);
        assert!(matches!(apply(&mut d, &map), Err(RetargetError::DuplicateTarget { .. })));
    }
}
