//! Operations modders need, done on the lossless tree so everything they do not touch stays byte
//! for byte: addon merge as the engine does it, and bone add / remove / rename with every link
//! (parents, MirrorBone, RootBone, modifier references) kept right.

use crate::ir::{self, BoneRec, Encoding, Resolver};
use crate::model::{self, Form};
use crate::names;
use crate::xml::{Doc, Elem, Item};
use crate::AnvilError;
use skelport_ir::{DQuat, DVec3, ReadOptions};
use std::collections::{HashMap, HashSet};

struct Loaded {
    tree: Doc,
    form: Form,
    encoding: Encoding,
    recs: Vec<BoneRec>,
    text: String,
}

fn load(bytes: &[u8], file: &str) -> Result<Loaded, AnvilError> {
    let (text, encoding) = ir::decode(bytes, file)?;
    let tree = Doc::parse(&text).map_err(|e| AnvilError::at(file, &text, e.offset, format!("XML error: {}", e.message)))?;
    let form = ir::form_of(&tree);
    let recs = ir::bone_recs(&tree, form, file, &text)?;
    Ok(Loaded { tree, form, encoding, recs, text })
}

fn finish(mut l: Loaded) -> Vec<u8> {
    recount(&mut l.tree, l.form);
    ir::encode(&l.tree.write(), l.encoding)
}

/// Rewrite every link in `e`'s subtree whose target is a key of `map`.
fn remap_links(e: &mut Elem, form: Form, map: &HashMap<u64, Option<u64>>) {
    let mut stack: Vec<&mut Elem> = vec![e];
    while let Some(x) = stack.pop() {
        if x.child("Link").is_some() {
            if let Ok(Some(t)) = model::link(x, form) {
                if let Some(to) = map.get(&t) {
                    model::set_link(x, form, *to);
                }
            }
            continue;
        }
        stack.extend(x.elems_mut());
    }
}

/// Index = array position, ChildBoneCount = all descendants: set where the form stores them.
fn recount(tree: &mut Doc, form: Form) {
    let Some(list) = model::bones_container_mut(&mut tree.root) else { return };
    let bones: Vec<(u64, Option<u64>)> = list
        .elems()
        .filter(|e| model::is_bone(e, form))
        .filter_map(|e| Some((model::id_of(e)?, e.named(form.parent_field()).and_then(|p| model::link(p, form).ok().flatten()))))
        .collect();
    let pos: HashMap<u64, usize> = bones.iter().enumerate().map(|(i, b)| (b.0, i)).collect();
    let mut desc = vec![0usize; bones.len()];
    // Walk each bone's ancestors (bounded by the bone count, so a cycle cannot hang).
    for (i, b) in bones.iter().enumerate() {
        let mut p = b.1;
        let mut steps = 0;
        while let Some(pi) = p.and_then(|p| pos.get(&p).copied()) {
            if pi == i || steps > bones.len() {
                break;
            }
            desc[pi] += 1;
            p = bones[pi].1;
            steps += 1;
        }
    }
    for (i, e) in list.elems_mut().filter(|e| model::is_bone(e, form)).enumerate() {
        for (field, v) in [("Index", i), ("ChildBoneCount", desc[i])] {
            if let Some(f) = e.named_mut(field) {
                if f.text().parse::<usize>().ok() != Some(v) {
                    f.set_text(&v.to_string());
                }
            }
        }
    }
}

fn find(l: &Loaded, name: &str, file: &str) -> Result<usize, AnvilError> {
    let h = names::hash_of_display(name);
    l.recs
        .iter()
        .position(|r| r.hash == h)
        .ok_or_else(|| AnvilError::Invalid { file: file.into(), message: format!("no bone named {name} (hash {h})") })
}

fn bone_elem_mut(tree: &mut Doc, form: Form, id: u64) -> Option<&mut Elem> {
    model::bones_container_mut(&mut tree.root)?.elems_mut().find(|e| model::is_bone(e, form) && model::id_of(e) == Some(id))
}

/// Rename a bone: its hash and label change; links are by ID, so they stay right.
pub fn rename(bytes: &[u8], file: &str, old: &str, new: &str) -> Result<Vec<u8>, AnvilError> {
    let mut l = load(bytes, file)?;
    let i = find(&l, old, file)?;
    if l.recs.iter().any(|r| r.hash == names::hash_of_display(new)) {
        return Err(AnvilError::Invalid { file: file.into(), message: format!("a bone named {new} already exists") });
    }
    let (id, form) = (l.recs[i].id, l.form);
    if let Some(e) = bone_elem_mut(&mut l.tree, form, id) {
        model::set_name(e, form, names::hash_of_display(new), new);
    }
    Ok(finish(l))
}

/// Remove a bone: children move to its parent, links to it are cleared (MirrorBone becomes a
/// self link, modifier references become null), RootBone moves to its first child.
pub fn remove(bytes: &[u8], file: &str, name: &str) -> Result<Vec<u8>, AnvilError> {
    let mut l = load(bytes, file)?;
    let i = find(&l, name, file)?;
    let (id, parent, form) = (l.recs[i].id, l.recs[i].parent, l.form);
    let first_child = l.recs.iter().find(|r| r.parent == Some(id)).map(|r| r.id);
    let list = model::bones_container_mut(&mut l.tree.root).expect("read found bones");
    // Drop the element and the whitespace before it.
    let at = list
        .children
        .iter()
        .position(|c| matches!(c, Item::Elem(e) if model::is_bone(e, form) && model::id_of(e) == Some(id)))
        .expect("found");
    list.children.remove(at);
    if at > 0 && matches!(list.children.get(at - 1), Some(Item::Raw(r)) if r.trim().is_empty()) {
        list.children.remove(at - 1);
    }
    for e in list.elems_mut().filter(|e| model::is_bone(e, form)) {
        let own = model::id_of(e);
        if let Some(p) = e.named_mut(form.parent_field()) {
            if model::link(p, form).ok().flatten() == Some(id) {
                model::set_link(p, form, parent);
            }
        }
        if let Some(m) = e.named_mut("MirrorBone") {
            if model::link(m, form).ok().flatten() == Some(id) {
                model::set_link(m, form, own);
            }
        }
        let mods = form.modifiers_field();
        if let Some(ms) = e.named_mut(mods) {
            remap_links(ms, form, &HashMap::from([(id, None)]));
        }
    }
    if let Some(r) = l.tree.root.named_mut("RootBone") {
        if model::link(r, form).ok().flatten() == Some(id) {
            model::set_link(r, form, parent.or(first_child));
        }
    }
    Ok(finish(l))
}

/// Add a bone under `parent` at `local` (metres, parent space), identity rotation, with a fresh ID.
pub fn add(bytes: &[u8], file: &str, name: &str, parent: &str, local: [f64; 3]) -> Result<Vec<u8>, AnvilError> {
    let mut l = load(bytes, file)?;
    if l.recs.iter().any(|r| r.hash == names::hash_of_display(name)) {
        return Err(AnvilError::Invalid { file: file.into(), message: format!("a bone named {name} already exists") });
    }
    let pi = find(&l, parent, file)?;
    let p = &l.recs[pi];
    let id = l.recs.iter().map(|r| r.id).max().unwrap_or(0) + 1;
    let (gp, gq) = match (p.global_pos, p.global_rot) {
        (Some(a), Some(q)) => (DVec3::new(a[0], a[1], a[2]), DQuat::from_xyzw(q[0], q[1], q[2], q[3]).normalize()),
        _ => (DVec3::ZERO, DQuat::IDENTITY),
    };
    let lp = DVec3::from_array(local);
    let g = gp + gq * lp;
    let form = l.form;
    let pid = p.id;
    let list = model::bones_container_mut(&mut l.tree.root).expect("read found bones");
    let indent = bone_indent(list, form);
    let mut e = ir::new_bone_elem(form, id, names::hash_of_display(name), name, &indent);
    if let Some(f) = e.named_mut(form.parent_field()) {
        model::set_link(f, form, Some(pid));
    }
    for (field, v) in
        [("GlobalPosition", [g.x, g.y, g.z, 0.0]), ("GlobalRotation", [gq.x, gq.y, gq.z, gq.w]), ("LocalPosition", [lp.x, lp.y, lp.z, 0.0])]
    {
        if let Some(f) = e.named_mut(field) {
            model::set_vec4(f, form, v);
        }
    }
    insert_bone(list, e, &indent);
    Ok(finish(l))
}

fn bone_indent(list: &Elem, form: Form) -> String {
    let mut last = None;
    for c in &list.children {
        match c {
            Item::Raw(r) => last = Some(r.clone()),
            Item::Elem(e) if model::is_bone(e, form) => return last.unwrap_or_else(|| "\n    ".into()),
            _ => {}
        }
    }
    "\r\n    ".into()
}

/// Append a bone element after the list's last element, keeping the closing whitespace last.
fn insert_bone(list: &mut Elem, e: Elem, indent: &str) {
    let trailing = match list.children.last() {
        Some(Item::Raw(r)) if r.trim().is_empty() => list.children.pop(),
        _ => None,
    };
    list.push_raw(indent);
    list.push(e);
    match trailing {
        Some(Item::Raw(r)) => list.push_raw(&r),
        _ => {
            let close = indent.trim_end_matches(' ').to_string()
                + &" ".repeat(indent.len().saturating_sub(indent.trim_end_matches(' ').len()).saturating_sub(2));
            list.push_raw(&close);
        }
    }
}

/// What a merge did.
#[derive(Debug, Clone)]
pub struct Merged {
    pub bytes: Vec<u8>,
    /// Names of the bones added.
    pub added: Vec<String>,
    /// Names of the main bones that received an addon's modifiers.
    pub modified: Vec<String>,
    pub bone_count: usize,
}

/// Merge addon skeletons into a main skeleton as the engine does: each addon's root is matched
/// by hash to a main bone; path bones are matched, not duplicated, and their modifiers move onto
/// the main bones; only new bones are added, under the right parents. `limit` defaults to 255 for
/// the Schema-Based form and 65535 for the Standard form.
pub fn merge(main: &[u8], addons: &[(&[u8], &str)], main_file: &str, limit: Option<usize>) -> Result<Merged, AnvilError> {
    let mut l = load(main, main_file)?;
    let resolver = Resolver::new(&ReadOptions::default())?;
    let form = l.form;
    let mut added = Vec::new();
    let mut modified = Vec::new();
    let mut used_ids: HashSet<u64> = HashSet::new();
    // All IDs in the main file (bones and modifiers) so new ones do not collide.
    let mut stack = vec![&l.tree.root];
    while let Some(e) = stack.pop() {
        if let Some(id) = model::id_of(e) {
            used_ids.insert(id);
        }
        stack.extend(e.elems());
    }
    let mut next_id = used_ids.iter().copied().max().unwrap_or(0) + 1;
    let _ = &l.text;
    for (bytes, file) in addons {
        let a = load(bytes, file)?;
        let a_tree = crate::convert::convert(&a.tree, a.form, form);
        let a_recs = ir::bone_recs(&a_tree, form, file, &a.text)?;
        let main_by_hash: HashMap<u32, (u64, Option<u64>)> = l.recs.iter().map(|r| (r.hash, (r.id, r.parent))).collect();
        let a_by_id: HashMap<u64, &BoneRec> = a_recs.iter().map(|r| (r.id, r)).collect();
        let root = a_recs
            .iter()
            .find(|r| r.parent.is_none())
            .ok_or_else(|| AnvilError::Invalid { file: file.to_string(), message: "the addon has no root bone".into() })?;
        let nm = |r: &BoneRec| resolver.name(r.hash, r.label.as_deref());
        if !main_by_hash.contains_key(&root.hash) {
            return Err(AnvilError::Invalid {
                file: file.to_string(),
                message: format!("the addon's root bone {} is not a bone of {main_file}; an addon attaches by its root's name", nm(root)),
            });
        }
        // addon ID → main ID.
        let mut map: HashMap<u64, Option<u64>> = HashMap::new();
        // Parents first: process in depth order.
        let mut order: Vec<&BoneRec> = Vec::new();
        let mut todo: Vec<&BoneRec> = vec![root];
        while let Some(r) = todo.pop() {
            order.push(r);
            let kids: Vec<&BoneRec> = a_recs.iter().filter(|c| c.parent == Some(r.id)).collect();
            todo.extend(kids.into_iter().rev());
        }
        let _ = a_by_id;
        let a_elems: HashMap<u64, Elem> = model::bones_container(&a_tree.root)
            .map(|c| c.elems().filter(|e| model::is_bone(e, form)).filter_map(|e| Some((model::id_of(e)?, e.clone()))).collect())
            .unwrap_or_default();
        let mut pending_new: Vec<(u64, Elem)> = Vec::new();
        let mut pending_mods: Vec<(u64, Vec<Elem>)> = Vec::new();
        for r in &order {
            let main_parent = r.parent.and_then(|p| map.get(&p).copied().flatten());
            match main_by_hash.get(&r.hash) {
                Some(&(mid, mparent)) => {
                    if r.parent.is_some() && mparent != main_parent {
                        return Err(AnvilError::Invalid {
                            file: file.to_string(),
                            message: format!(
                                "bone {}: its parent in the addon is not its parent in {main_file}; a path bone must mirror the main hierarchy exactly (the game would crash): add new bones as extra children instead of inserting them",
                                nm(r)
                            ),
                        });
                    }
                    map.insert(r.id, Some(mid));
                    let mods: Vec<Elem> = a_elems
                        .get(&r.id)
                        .and_then(|e| e.named(form.modifiers_field()))
                        .map(|m| m.elems().cloned().collect())
                        .unwrap_or_default();
                    if !mods.is_empty() {
                        pending_mods.push((mid, mods));
                        modified.push(nm(r));
                    }
                }
                None => {
                    let id = if used_ids.contains(&r.id) {
                        next_id += 1;
                        next_id - 1
                    } else {
                        r.id
                    };
                    used_ids.insert(id);
                    map.insert(r.id, Some(id));
                    let mut e = a_elems
                        .get(&r.id)
                        .cloned()
                        .ok_or_else(|| AnvilError::Invalid { file: file.to_string(), message: format!("bone {} vanished", r.id) })?;
                    e.set_attr("ID", &id.to_string());
                    pending_new.push((r.id, e));
                    added.push(nm(r));
                }
            }
        }
        // Re-ID modifiers that collide, then point every link at main IDs.
        let mut fix = |e: &mut Elem, owner: u64| {
            let mut st: Vec<&mut Elem> = vec![&mut *e];
            while let Some(x) = st.pop() {
                if x.attr("ID").is_some() && !model::is_bone(x, form) {
                    if let Some(old) = model::id_of(x) {
                        if used_ids.contains(&old) {
                            x.set_attr("ID", &next_id.to_string());
                            used_ids.insert(next_id);
                            next_id += 1;
                        } else {
                            used_ids.insert(old);
                        }
                    }
                }
                st.extend(x.elems_mut());
            }
            remap_links(e, form, &map);
            if form == Form::Schema {
                let mut st: Vec<&mut Elem> = vec![e];
                while let Some(x) = st.pop() {
                    if x.attr("Name") == Some("Owner") {
                        model::set_link(x, form, Some(owner));
                        continue;
                    }
                    st.extend(x.elems_mut());
                }
            }
        };
        let list = model::bones_container_mut(&mut l.tree.root).expect("read found bones");
        let indent = bone_indent(list, form);
        for (mid, mods) in pending_mods {
            let Some(b) = list.elems_mut().find(|e| model::is_bone(e, form) && model::id_of(e) == Some(mid)) else { continue };
            let Some(ml) = b.named_mut(form.modifiers_field()) else { continue };
            let mi = format!("{indent}    ");
            for mut m in mods {
                fix(&mut m, mid);
                insert_bone(ml, m, &mi);
            }
        }
        for (_, mut e) in pending_new {
            let own = model::id_of(&e).unwrap_or(0);
            remap_links(&mut e, form, &map);
            if let Some(m) = e.named_mut(form.modifiers_field()) {
                for x in m.elems_mut() {
                    fix(x, own);
                }
            }
            insert_bone(list, e, &indent);
        }
        let text = l.tree.write();
        l.recs = ir::bone_recs(&l.tree, form, main_file, &text)?;
    }
    let limit = limit.unwrap_or(match form {
        Form::Schema => 255,
        Form::Standard => 65535,
    });
    if l.recs.len() > limit {
        return Err(AnvilError::Invalid {
            file: main_file.into(),
            message: format!(
                "{} bones after merging (matched bones counted once); the limit is {limit}: drop an addon or bones",
                l.recs.len()
            ),
        });
    }
    let bone_count = l.recs.len();
    Ok(Merged { bytes: finish(l), added, modified, bone_count })
}
