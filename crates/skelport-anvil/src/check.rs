//! Checks of a model (IDs unique, links resolve, parents are bones, names unique) and of a bone
//! hierarchy (parents first, no cycles).

use crate::error::{AnvilError, Result};
use crate::model::*;
use crate::names::Names;
use std::collections::{HashMap, HashSet};

/// Check a model: unique IDs, every link resolves, parents are bones, names resolve uniquely.
/// Returns the display name of every bone.
pub fn check(model: &AnvilSkeleton, names: &Names, file: &str) -> Result<Vec<String>> {
    let mut ids = Vec::new();
    collect_ids(&model.root, &mut ids);
    let mut seen: HashSet<u64, IdHash> = HashSet::with_capacity_and_hasher(ids.len(), IdHash::default());
    for id in &ids {
        if !seen.insert(*id) {
            return Err(AnvilError::Skeleton { file: file.into(), message: format!("two objects have the ID {id}") });
        }
    }
    let n = model.bone_count();
    let mut display = Vec::with_capacity(n);
    let mut by_name: HashMap<String, usize, IdHash> = HashMap::with_capacity_and_hasher(n, IdHash::default());
    for i in 0..n {
        let b = model.bone(i);
        let Some(h) = b.bone_hash() else {
            let (line, column) = model.pos_of(model.bone_items()[i].src);
            return Err(AnvilError::Structure {
                file: file.into(),
                line,
                column,
                message: format!("bone {} (ID {}) has no BoneID/Name hash", i, b.id.unwrap_or(0)),
            });
        };
        let d = names.display(h, b.bone_label());
        if let Some(j) = by_name.insert(d.clone(), i) {
            return Err(AnvilError::Skeleton {
                file: file.into(),
                message: format!("bones {j} and {i} have the same name '{d}' (hash {h})"),
            });
        }
        display.push(d);
    }
    let bone_ids = model.id_map();
    // Every link resolves.
    let mut err: Option<AnvilError> = None;
    let mut check_link = |owner: &str, field: &str, l: &Link, src: Option<SrcRef>| {
        if err.is_some() || l.id == 0 || seen.contains(&l.id) {
            return;
        }
        let (line, column) = model.pos_of(src);
        err = Some(AnvilError::DanglingLink {
            file: file.into(),
            line,
            column,
            message: format!("{owner}: {field} points to ID {}, which no object in this file has", l.id),
        });
    };
    for f in &model.root.fields {
        if f.name() == names::BONES {
            continue;
        }
        let mut single = Object::new("Skeleton", None);
        single.fields.push(f.clone());
        single.for_each_link(&mut |field, l, src| check_link("the skeleton", field, l, src.or(f.src)));
    }
    for (i, item) in model.bone_items().iter().enumerate() {
        let b = model.bone(i);
        let owner = format!("bone '{}'", display[i]);
        b.for_each_link(&mut |field, l, src| check_link(&owner, field, l, src.or(item.src)));
    }
    if let Some(e) = err {
        return Err(e);
    }
    // Parents and mirrors must be bones; RootBone too.
    for (i, item) in model.bone_items().iter().enumerate() {
        let b = model.bone(i);
        for (fname, target) in [(names::FATHER, b.bone_parent()), (names::MIRROR, b.bone_mirror())] {
            if let Some(t) = target {
                if t != 0 && !bone_ids.contains_key(&t) {
                    let (line, column) = model.pos_of(b.field(fname).and_then(|f| f.src).or(item.src));
                    return Err(AnvilError::Structure {
                        file: file.into(),
                        line,
                        column,
                        message: format!("bone '{}': {fname} points to ID {t}, which is not a bone", display[i]),
                    });
                }
            }
        }
    }
    if let Some(r) = model.root_bone() {
        if r != 0 && !bone_ids.contains_key(&r) {
            return Err(AnvilError::Skeleton { file: file.into(), message: format!("RootBone points to ID {r}, which is not a bone") });
        }
    }
    // No bone its own ancestor, as the reader requires (merge and bone edits walk the tree).
    parents_first_or_cycle(&model.parents(), &display, file)?;
    Ok(display)
}

/// Names for a message: the first twelve, then how many more.
pub(crate) fn list(v: &[String]) -> String {
    if v.len() <= 12 {
        v.join(", ")
    } else {
        format!("{}, … and {} more", v[..12].join(", "), v.len() - 12)
    }
}

/// The bones parents first: as they are when they already are, else a depth-first pre-order
/// from the roots (`skelport_ir::proc::parents_first`); `None` when some bones are on a cycle.
pub(crate) fn parents_first_order(parents: &[Option<usize>]) -> Option<Vec<usize>> {
    // Fast path: already parents-first.
    if parents.iter().enumerate().all(|(i, p)| p.map(|p| p < i).unwrap_or(true)) {
        return Some((0..parents.len()).collect());
    }
    skelport_ir::proc::parents_first(parents).ok()
}

/// [`parents_first_order`], or the error that names a bone on a FatherBone cycle (`display`: the
/// bones' names in messages).
pub(crate) fn parents_first_or_cycle(parents: &[Option<usize>], display: &[String], file: &str) -> Result<Vec<usize>> {
    parents_first_order(parents).ok_or_else(|| AnvilError::Skeleton {
        file: file.into(),
        message: format!("bone '{}' is its own ancestor (a FatherBone cycle)", display[cycle_member(parents)]),
    })
}

/// A bone on a FatherBone cycle (one that never reaches a root).
pub(crate) fn cycle_member(parents: &[Option<usize>]) -> usize {
    let n = parents.len();
    let mut reach = vec![false; n];
    for (i, r) in reach.iter_mut().enumerate() {
        let mut p = Some(i);
        let mut steps = 0;
        while let Some(x) = p {
            if steps > n {
                break;
            }
            p = parents[x];
            steps += 1;
        }
        *r = p.is_none();
    }
    reach.iter().position(|r| !r).unwrap_or(0)
}
