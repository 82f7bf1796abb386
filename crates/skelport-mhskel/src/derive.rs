//! Weights for MakeHuman's secondary rigs (`game_engine`, `cmu_mb`, `default_no_toes`, …), which
//! name no weights file: MakeHuman 1.x gives each of their bones the default rig's weights
//! (`default_weights.mhw`) through the bone's reference bones. This module does what its
//! `shared/skeleton.py` does when such a rig is chosen (`autoBuildWeightReferences` against the
//! default rig, then `getVertexWeights`), with the normalisation of `shared/animation.py`
//! (`VertexBoneWeights`):
//!
//! 1. A bone's weight references are its `weights_reference` list when it has one, else its
//!    `reference` list, completed: when a default-rig bone it references has chains of children
//!    down to an end bone that no bone of the rig references, those children are added (so a
//!    `hand` bone referencing only `wrist` also gets the finger weights). The default rig is
//!    walked from its last bone, breadth-first, back to its root, as MakeHuman walks it.
//! 2. A bone gets the (normalised) default weights of every bone it references, summed; a bone
//!    with no references gets the default bone of its own name, if any.
//! 3. Each vertex's weights are normalised to sum 1, weights under 1e-4 dropped, and vertices no
//!    weight names bound to the rig's first root.

use crate::read::{bone_order, RawRig};
use serde_json::Value;
use skelport_ir::Budget;
use std::collections::{HashMap, HashSet};

/// The default rig beside a secondary rig (MakeHuman's `data/rigs/`).
pub const REFERENCE_RIG: &str = "default.mhskel";
/// The default rig's weights beside it.
pub const REFERENCE_WEIGHTS: &str = "default_weights.mhw";
/// MakeHuman's threshold under which a normalised weight is dropped.
const WEIGHT_THRESHOLD: f64 = 1e-4;
/// Work (bones visited, references added) the completion of step 1 may take: MakeHuman's rigs
/// take a few thousand steps; a crafted pair of rigs could make it cubic in their bone counts.
pub const MAX_STEPS: u64 = 20_000_000;

/// One weights group: a bone's name and its (vertex, weight) entries.
pub type Group = (String, Vec<(u64, f64)>);

/// Why weights could not be derived.
#[derive(Debug)]
pub enum DeriveError {
    /// Completing the references would take more than [`MAX_STEPS`].
    TooMuchWork,
    /// The decode budget would be exceeded by the weights built.
    Budget(skelport_ir::BudgetError),
    /// Entry `k` of the default weights' group `group` names vertex `vertex`, past the mesh.
    Vertex { group: String, k: usize, vertex: u64 },
}

/// What was derived: the groups (the rig's bones in MakeHuman's order), and the bones that have
/// references of which none carries weights (MakeHuman warns of them and leaves them unweighted).
pub struct Derived {
    pub groups: Vec<Group>,
    pub unweighted: Vec<String>,
}

/// A bone's `reference` / `weights_reference`: MakeHuman takes a single name as a list of one,
/// and a list as a set (kept here in first-seen order, so the output does not depend on hashing).
fn names(v: Option<&Value>) -> Option<Vec<String>> {
    let mut seen = HashSet::new();
    match v? {
        Value::Null => None,
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(a) => Some(a.iter().filter_map(Value::as_str).filter(|s| seen.insert(*s)).map(String::from).collect()),
        _ => None,
    }
}

/// Step 1: each bone of `rig` (in MakeHuman's order, as `bone_order` gives it) with its weight
/// references, completed against the default rig `reference`.
pub fn weight_references(rig: &RawRig, reference: &RawRig) -> Result<Vec<(String, Vec<String>)>, DeriveError> {
    let (order, _) = bone_order(&rig.bones);
    let mut refs: Vec<Vec<String>> = Vec::with_capacity(order.len());
    let mut included: Vec<bool> = Vec::with_capacity(order.len());
    for &(i, _) in &order {
        let b = &rig.bones[i].1;
        match names(b.get("weights_reference")) {
            Some(w) => {
                refs.push(w);
                included.push(false);
            }
            None => {
                refs.push(names(b.get("reference")).unwrap_or_default());
                included.push(true);
            }
        }
    }
    // The default rig breadth-first, with each bone's children in that order.
    let (ref_order, _) = bone_order(&reference.bones);
    let pos: HashMap<usize, usize> = ref_order.iter().enumerate().map(|(k, &(i, _))| (i, k)).collect();
    let ref_name: Vec<&str> = ref_order.iter().map(|&(i, _)| reference.bones[i].0.as_str()).collect();
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); ref_order.len()];
    for (k, &(_, p)) in ref_order.iter().enumerate() {
        if let Some(p) = p {
            children[pos[&p]].push(k);
        }
    }
    // Which rig bones reference each default bone.
    let reverse = |refs: &[Vec<String>]| -> HashMap<String, Vec<usize>> {
        let mut m: HashMap<String, Vec<usize>> = HashMap::new();
        for (b, rs) in refs.iter().enumerate() {
            for r in rs {
                m.entry(r.clone()).or_default().push(b);
            }
        }
        m
    };
    let mut referrers = reverse(&refs);
    let mut steps: u64 = 0;
    let mut tail = vec![false; ref_order.len()];
    for r in (0..ref_order.len()).rev() {
        let Some(users) = referrers.get(ref_name[r]) else { continue };
        // r's descendants in pre-order (MakeHuman's _getAllChildren).
        let mut descendants = Vec::new();
        let mut stack: Vec<usize> = children[r].iter().rev().copied().collect();
        while let Some(d) = stack.pop() {
            descendants.push(d);
            stack.extend(children[d].iter().rev());
        }
        steps += descendants.len() as u64 + 1;
        if steps > MAX_STEPS {
            return Err(DeriveError::TooMuchWork);
        }
        // "An unreferenced tail": the bone is referenced by no rig bone, and it is an end bone or
        // one of its children has such a tail. Children before parents: reverse pre-order.
        for &d in descendants.iter().rev() {
            tail[d] = !referrers.contains_key(ref_name[d]) && (children[d].is_empty() || children[d].iter().any(|&c| tail[c]));
        }
        let first = children[r].is_empty() || children[r].iter().any(|&c| tail[c]);
        if !first {
            continue;
        }
        let extra: Vec<&str> = descendants.iter().filter(|&&d| tail[d]).map(|&d| ref_name[d]).collect();
        let users = users.clone();
        let mut changed = false;
        for u in users {
            if included[u] {
                for e in &extra {
                    steps += 1;
                    if !refs[u].iter().any(|x| x == e) {
                        refs[u].push(e.to_string());
                        changed = true;
                    }
                }
            }
        }
        if steps > MAX_STEPS {
            return Err(DeriveError::TooMuchWork);
        }
        if changed {
            steps += refs.iter().map(|r| r.len() as u64).sum::<u64>();
            referrers = reverse(&refs);
        }
    }
    Ok(order.iter().map(|&(i, _)| rig.bones[i].0.clone()).zip(refs).collect())
}

/// MakeHuman's normalisation of a weights table over `vertex_count` vertices: duplicates merged,
/// each vertex's weights divided by their sum, weights under 1e-4 dropped, and vertices no weight
/// names given to `root` with weight 1.
pub fn normalise(groups: Vec<Group>, vertex_count: usize, root: &str) -> Vec<Group> {
    let mut total = vec![0.0f64; vertex_count];
    for (_, g) in &groups {
        for &(v, w) in g {
            if let Some(t) = total.get_mut(v as usize) {
                *t += w;
            }
        }
    }
    let mut out: Vec<Group> = Vec::with_capacity(groups.len() + 1);
    let mut slot: HashMap<String, usize> = HashMap::with_capacity(groups.len());
    for (name, g) in groups {
        if g.is_empty() {
            continue;
        }
        let mut merged: HashMap<u64, f64> = HashMap::with_capacity(g.len());
        for (v, w) in g {
            let t = total.get(v as usize).copied().unwrap_or(0.0);
            // A vertex whose weights sum to 0 divides 0 by 0 in MakeHuman (NaN, then dropped).
            if t != 0.0 {
                *merged.entry(v).or_default() += w / t;
            }
        }
        let mut g: Vec<(u64, f64)> = merged.into_iter().filter(|&(_, w)| w > WEIGHT_THRESHOLD).collect();
        g.sort_unstable_by_key(|p| p.0);
        match slot.get(&name) {
            Some(&k) => out[k].1.extend(g),
            None => {
                slot.insert(name.clone(), out.len());
                out.push((name, g));
            }
        }
    }
    let unweighted: Vec<(u64, f64)> = (0..vertex_count).filter(|&v| total[v] == 0.0).map(|v| (v as u64, 1.0)).collect();
    if !unweighted.is_empty() {
        match slot.get(root) {
            Some(&k) => out[k].1.extend(unweighted),
            None => out.push((root.to_string(), unweighted)),
        }
    }
    out
}

/// Step 2 and 3: the rig's weights from the default rig's `reference_weights` (as read from
/// `default_weights.mhw`), over `vertex_count` vertices (the base mesh's, else one past the
/// largest vertex the weights name).
pub fn derive(
    rig: &RawRig,
    reference: &RawRig,
    reference_weights: Vec<Group>,
    vertex_count: Option<usize>,
    budget: &Budget,
    file: &str,
) -> Result<Derived, DeriveError> {
    let refs = weight_references(rig, reference)?;
    // The rig's first root: the first bone in MakeHuman's order.
    let root = refs.first().map_or_else(String::new, |(name, _)| name.clone());
    let (ref_order, _) = bone_order(&reference.bones);
    let ref_root = ref_order.first().map_or("root", |&(i, _)| reference.bones[i].0.as_str());
    let count =
        vertex_count.unwrap_or_else(|| reference_weights.iter().flat_map(|(_, g)| g.iter().map(|p| p.0 as usize + 1)).max().unwrap_or(0));
    budget.charge_items::<f64>(count, file, "$.weights").map_err(DeriveError::Budget)?;
    for (group, g) in &reference_weights {
        if let Some(k) = g.iter().position(|p| p.0 >= count as u64) {
            return Err(DeriveError::Vertex { group: group.clone(), k, vertex: g[k].0 });
        }
    }
    let base: HashMap<String, Vec<(u64, f64)>> = normalise(reference_weights, count, ref_root).into_iter().collect();
    let mut groups = Vec::with_capacity(refs.len());
    let mut unweighted = Vec::new();
    for (bone, rs) in refs {
        let sources: Vec<&Vec<(u64, f64)>> = if rs.is_empty() {
            base.get(&bone).into_iter().collect()
        } else {
            let found: Vec<_> = rs.iter().filter_map(|r| base.get(r)).collect();
            if found.is_empty() {
                unweighted.push(bone.clone());
            }
            found
        };
        let n: usize = sources.iter().map(|g| g.len()).sum();
        budget.charge_items::<(u64, f64)>(n, file, &format!("$.bones.{bone}.weights_reference")).map_err(DeriveError::Budget)?;
        let mut g = Vec::with_capacity(n);
        for s in sources {
            g.extend_from_slice(s);
        }
        if !g.is_empty() {
            groups.push((bone, g));
        }
    }
    Ok(Derived { groups: normalise(groups, count, &root), unweighted })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::read::parse;

    fn rig(bones: serde_json::Value) -> RawRig {
        parse(serde_json::json!({ "bones": bones }).to_string().as_bytes(), "t.mhskel").unwrap()
    }

    /// A rig whose one bone references every bone of a long chain would make the completion
    /// quadratic in the chain (each referenced bone walks the chain below it): it stops at
    /// MAX_STEPS instead.
    #[test]
    fn completion_work_is_bounded() {
        let n = 7000;
        let mut chain = serde_json::Map::new();
        for i in 0..n {
            let parent = if i == 0 { serde_json::Value::Null } else { format!("b{}", i - 1).into() };
            chain.insert(format!("b{i}"), serde_json::json!({"head": "h", "tail": "t", "parent": parent}));
        }
        let names: Vec<String> = (0..n).map(|i| format!("b{i}")).collect();
        let secondary = rig(serde_json::json!({"x": {"head": "h", "tail": "t", "reference": names}}));
        assert!(matches!(weight_references(&secondary, &rig(chain.clone().into())), Err(DeriveError::TooMuchWork)));
        // A short chain is completed: `y` references the chain's root alone and takes the rest.
        let short: serde_json::Map<String, serde_json::Value> = chain.into_iter().take(5).collect();
        let secondary = rig(serde_json::json!({"y": {"head": "h", "tail": "t", "reference": ["b0"]}}));
        let refs = weight_references(&secondary, &rig(short.into())).ok().unwrap();
        assert_eq!(refs, vec![("y".to_string(), vec!["b0", "b1", "b2", "b3", "b4"].into_iter().map(String::from).collect())]);
    }

    /// Duplicates merge, vertices normalise, small weights drop, the unweighted go to the root.
    #[test]
    fn normalise_is_makehumans() {
        let groups = vec![("a".to_string(), vec![(0, 1.0), (0, 1.0), (1, 0.00001)]), ("b".to_string(), vec![(0, 2.0), (1, 1.0)])];
        let out = normalise(groups, 3, "root");
        assert_eq!(
            out,
            vec![("a".into(), vec![(0, 0.5)]), ("b".into(), vec![(0, 0.5), (1, 1.0 / 1.00001)]), ("root".into(), vec![(2, 1.0)])]
        );
    }
}
