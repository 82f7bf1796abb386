//! An edited IR skeleton applied to the model it was read from: only what changed is rewritten.

use crate::check::parents_first_order;
use crate::error::Result;
use crate::ext::bone_ext_id;
use crate::generate::{default_mirroring, new_bone_object, report_scale, FIRST_LOCAL_ID};
use crate::model::*;
use crate::names::{hash_of_display, hex_name, parse_hex_name, Names};
use crate::ops::{fix_references, subtree_end};
use crate::pose::{bone_rest, compose, engine_poses, normalize, same_pose, Pose};
use skelport_ir::{DQuat, DVec3, Diagnostics, Skeleton};
use std::collections::{HashMap, HashSet};

/// Bring a model in line with an IR skeleton that was read from it and possibly edited: bones
/// matched by their stored ID; renamed, re-parented, moved, added and removed bones are applied
/// with every link kept right; everything else stays as read.
pub fn apply(model: &mut AnvilSkeleton, sk: &Skeleton, names: &Names, diag: &mut Diagnostics) -> Result<()> {
    let ids = model.id_map();
    let n = sk.bones.len();
    let mut claimed: Vec<Option<usize>> = vec![None; n];
    let mut taken = vec![false; model.bone_count()];
    for (i, b) in sk.bones.iter().enumerate() {
        if let Some(&mi) = bone_ext_id(b).and_then(|id| ids.get(&id)) {
            if !taken[mi] {
                taken[mi] = true;
                claimed[i] = Some(mi);
            }
        }
    }
    let mut removed: HashSet<u64> = (0..model.bone_count()).filter(|&mi| !taken[mi]).filter_map(|mi| model.bone(mi).id).collect();
    // A model rebuilt from per-bone fragments lacks the elements of bones removed since the read
    // (and of fragments refused): the links to them that other elements hold are what is left,
    // and those bones are removed too.
    let mut objects = Vec::new();
    collect_ids(&model.root, &mut objects);
    let objects: HashSet<u64> = objects.into_iter().collect();
    model.root.for_each_link(&mut |_, l, _| {
        if l.id != 0 && !objects.contains(&l.id) {
            removed.insert(l.id);
        }
    });
    // Parent globals of the model as read (for "unchanged" decisions).
    let old_parents = model.parents();
    let old_order = parents_first_order(&old_parents).unwrap_or_else(|| (0..old_parents.len()).collect());
    let mut old_globals: Vec<Option<Pose>> = vec![None; model.bone_count()];
    let mut old_rest: Vec<Option<Pose>> = vec![None; model.bone_count()];
    for &i in &old_order {
        let b = model.bone(i);
        let pg = old_parents[i].and_then(|p| old_globals[p]);
        let rest = bone_rest(b, old_parents[i].is_none(), pg);
        old_rest[i] = rest;
        old_globals[i] = b.global_pose().map(|(p, q)| (p, normalize(q))).or_else(|| rest.map(|r| pg.map(|pg| compose(pg, r)).unwrap_or(r)));
    }
    // IDs for every IR bone.
    let mut next = model.max_id().max(FIRST_LOCAL_ID) + 1;
    let mut new_ids = Vec::with_capacity(n);
    let mut reused = HashSet::new();
    // Kept free for those bones.
    let wanted: HashSet<u64> = claimed.iter().zip(&sk.bones).filter(|(c, _)| c.is_none()).filter_map(|(_, b)| bone_ext_id(b)).collect();
    for (c, b) in claimed.iter().zip(&sk.bones) {
        match c {
            Some(mi) => new_ids.push(model.bone(*mi).id.unwrap_or(0)),
            // A bone that kept its ID but whose element is missing (its fragment was refused)
            // is made anew under that ID, so the links to it hold again.
            None => match bone_ext_id(b).filter(|&id| id != 0 && !objects.contains(&id) && !reused.contains(&id)) {
                Some(id) => {
                    reused.insert(id);
                    removed.remove(&id);
                    new_ids.push(id);
                }
                None => {
                    while wanted.contains(&next) {
                        next += 1;
                    }
                    new_ids.push(next);
                    next += 1;
                }
            },
        }
    }
    // Build the new bone list: kept bones in their order, removed ones dropped.
    let mut items: Vec<Field> = std::mem::take(model.bone_items_mut());
    let mut kept: Vec<Option<Field>> = items.drain(..).map(Some).collect();
    let mut list: Vec<Field> = Vec::with_capacity(n);
    let mut pos_of_model: HashMap<usize, usize> = HashMap::new();
    for (mi, f) in kept.iter_mut().enumerate() {
        if taken[mi] {
            pos_of_model.insert(mi, list.len());
            list.push(f.take().expect("once"));
        }
    }
    let mut list_pos: Vec<usize> = vec![usize::MAX; n];
    for (i, c) in claimed.iter().enumerate() {
        if let Some(mi) = c {
            list_pos[i] = pos_of_model[mi];
        }
    }
    let poses = engine_poses(sk);
    report_scale(sk, &poses, diag);
    // New bones: create and insert after their parent's subtree (IR order is parents-first).
    let name_map = sk.name_map();
    for i in 0..n {
        if claimed[i].is_some() {
            continue;
        }
        let b = &sk.bones[i];
        let (g, local) = (poses.global[i], poses.local[i]);
        let mirror = new_ids[crate::generate::mirror_index(b, i, &name_map)];
        let o = new_bone_object(
            new_ids[i],
            &b.name,
            b.parent.map(|p| new_ids[p.index()]),
            mirror,
            g,
            local,
            default_mirroring(&b.name, b.parent.is_none(), false),
        );
        let at = match b.parent {
            Some(p) if list_pos[p.index()] != usize::MAX => subtree_end(&list, list_pos[p.index()]),
            _ => list.len(),
        };
        list.insert(at, Field::item(Value::Ptr(Ptr { target: Target::Inline(Box::new(o)), base: false })));
        for lp in list_pos.iter_mut() {
            if *lp != usize::MAX && *lp >= at {
                *lp += 1;
            }
        }
        list_pos[i] = at;
    }
    *model.bone_items_mut() = list;
    // Names, parents, mirrors, transforms.
    let mut unchanged = vec![false; n];
    let mut new_globals: Vec<Pose> = vec![(DVec3::ZERO, DQuat::IDENTITY); n];
    let mut renamed = 0usize;
    for i in 0..n {
        let b = &sk.bones[i];
        let new_parent = b.parent.map(|p| new_ids[p.index()]);
        let rest = poses.local[i];
        let existing = claimed[i];
        let o = model.bone_mut(list_pos[i]);
        if let Some(mi) = existing {
            // Name.
            // The hash is the name: a name that hashes (or hex-parses) to the bone's hash is the
            // same name however it was displayed (dictionary, --names file, label).
            let cur = names.display(o.bone_hash().unwrap_or(0), o.bone_label());
            if cur != b.name && o.bone_hash() != Some(hash_of_display(&b.name)) {
                let h = hash_of_display(&b.name);
                let label = if parse_hex_name(&b.name).is_some() { hex_name(h) } else { b.name.clone() };
                o.set_bone_hash(h, Some(&label));
                renamed += 1;
            }
            let parent_same = o.bone_parent().filter(|&p| p != 0) == new_parent;
            if !parent_same {
                o.set_link(names::FATHER, new_parent);
            }
            // Mirror: IR None means "self" (or no field).
            let want_mirror = b.mirror.map(|m| new_ids[m.index()]);
            let cur_mirror = o.bone_mirror().filter(|&m| Some(m) != o.id);
            if cur_mirror != want_mirror && !(want_mirror.is_none() && cur_mirror.map(|m| removed.contains(&m)).unwrap_or(false)) {
                let target = want_mirror.or(o.id);
                if o.field(names::MIRROR).is_some() || want_mirror.is_some() {
                    o.set_link(names::MIRROR, target);
                }
            }
            // The same to the engine: a value that went through a float32 format or a frame
            // change on the way keeps the file's text (and sign), and so do the values derived
            // from it.
            let same_rest = old_rest[mi].is_some_and(|r| same_pose(r, rest));
            let parent_unchanged = b.parent.map(|p| unchanged[p.index()]).unwrap_or(true);
            unchanged[i] = parent_same && same_rest && parent_unchanged;
            if unchanged[i] {
                new_globals[i] = old_globals[mi].unwrap_or(rest);
                continue;
            }
        }
        let g = match b.parent {
            Some(p) => compose(new_globals[p.index()], rest),
            None => rest,
        };
        new_globals[i] = g;
        if existing.is_some() {
            o.set_pose(names::GLOBAL_POS, names::GLOBAL_ROT, g.0, g.1);
            if b.parent.is_some() {
                o.set_pose(names::LOCAL_POS, names::LOCAL_ROT, rest.0, rest.1);
            }
        }
    }
    if renamed > 0 {
        diag.info("anvil.renamed", format!("{renamed} bone(s) renamed: their BoneID hashes were recomputed"));
    }
    if !removed.is_empty() {
        let notes = fix_references(model, &removed);
        diag.info("anvil.removed", format!("{} bone(s) removed", removed.len()));
        for (place, m) in notes {
            diag.warn_at("anvil.reference-removed", place, m);
        }
    }
    // RootBone: the first IR root.
    if let Some(r) = (0..n).find(|&i| sk.bones[i].parent.is_none()) {
        let want = new_ids[r];
        if model.root_bone() != Some(want) {
            let cur_ok = model.root_bone().map(|c| (0..n).any(|i| new_ids[i] == c && sk.bones[i].parent.is_none())).unwrap_or(false);
            if !cur_ok {
                model.root.set_link(names::ROOT_BONE, Some(want));
            }
        }
    }
    Ok(())
}
