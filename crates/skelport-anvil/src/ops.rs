//! Operations modders need: addon merge and bone add / remove / rename, all keeping every link
//! (parents, mirrors, RootBone, modifier references, modifier owners) right.

use crate::error::{AnvilError, Result};
use crate::generate::{default_mirroring, new_bone_object};
use crate::model::*;
use crate::names::{hash_of_display, hex_name, mirror_name, parse_hex_name, Names};
use crate::pose::{compose, relative, Pose};
use crate::text::Txt;
use skelport_ir::{DQuat, DVec3, Place};
use std::collections::{HashMap, HashSet};

fn bone_item(o: Object) -> Field {
    Field::item(Value::Ptr(Ptr { target: Target::Inline(Box::new(o)), base: false }))
}

impl AnvilSkeleton {
    /// The name shown for bone `i`.
    pub fn display_name(&self, i: usize, names: &Names) -> String {
        let b = self.bone(i);
        names.display(b.bone_hash().unwrap_or(0), b.bone_label())
    }

    /// Find a bone by name (exact case), by `x` + hex hash, or by its label.
    pub fn find_bone(&self, name: &str) -> Option<usize> {
        let h = hash_of_display(name);
        self.find_hash(h).or_else(|| self.bones().position(|b| b.bone_label() == Some(name)))
    }

    fn require_bone(&self, name: &str) -> Result<usize> {
        self.find_bone(name).ok_or_else(|| AnvilError::Edit(format!("no bone named '{name}' in the skeleton")))
    }

    fn global_of(&self, i: usize) -> Pose {
        // Compose from locals when the file lacks a global.
        if let Some((p, q)) = self.bone(i).global_pose() {
            return (p, q.normalize());
        }
        let parents = self.parents();
        let mut chain = vec![i];
        let mut p = parents[i];
        while let Some(x) = p {
            if chain.len() > parents.len() {
                break;
            }
            chain.push(x);
            p = parents[x];
        }
        let mut g: Pose = (DVec3::ZERO, DQuat::IDENTITY);
        for &b in chain.iter().rev() {
            let l = self.bone(b).local_pose().unwrap_or((DVec3::ZERO, DQuat::IDENTITY));
            g = compose(g, (l.0, l.1.normalize()));
        }
        g
    }

    fn list_index_of_id(&self, id: u64) -> Option<usize> {
        self.bones().position(|b| b.id == Some(id))
    }

    /// Add a bone under `parent` (see [`NewBone`]); returns its index. The bone is placed after
    /// the parent's last descendant, gets a fresh ID, the seed's template fields, a mirror found by
    /// Left/Right name (whose own MirrorBone is pointed back when it was self), and both its Global
    /// and Local transforms.
    pub fn add_bone(&mut self, spec: &NewBone, names: &Names) -> Result<usize> {
        let h = hash_of_display(&spec.name);
        if let Some(j) = self.find_hash(h) {
            return Err(AnvilError::Edit(format!("a bone named '{}' already exists (bone {j})", self.display_name(j, names))));
        }
        let pi = self.require_bone(&spec.parent)?;
        let parent_id = self.bone(pi).id.unwrap_or(0);
        let pg = self.global_of(pi);
        let given = (DVec3::from_array(spec.position), DQuat::from_array(spec.rotation).normalize());
        let (global, local) = if spec.global { (given, relative(pg, given)) } else { (compose(pg, given), given) };
        let id = self.max_id() + 1;
        let mirror_idx = match &spec.mirror {
            Some(m) => Some(self.require_bone(m)?),
            None => mirror_name(&spec.name).and_then(|m| self.find_bone(&m)),
        };
        let mirror_id = mirror_idx.and_then(|m| self.bone(m).id).unwrap_or(id);
        let o = new_bone_object(id, &spec.name, Some(parent_id), mirror_id, global, local, default_mirroring(&spec.name, false, false));
        let at = subtree_end(self.bone_items(), pi);
        self.bone_items_mut().insert(at, bone_item(o));
        if let Some(m) = mirror_idx {
            let m = if m >= at { m + 1 } else { m };
            let mb = self.bone_mut(m);
            if mb.bone_mirror() == mb.id || mb.bone_mirror().is_none() {
                mb.set_link(names::MIRROR, Some(id));
            }
        }
        Ok(at)
    }

    /// Remove a bone, as the seed's "How to remove a bone" says: its children are re-parented to
    /// its parent (keeping their Global, recomputing their Local), MirrorBone links to it point
    /// back to their own bone, RootBone moves to the new root, and modifier references to it
    /// (LookAtBone, UpNode, AssociatedBone, Targets …) are removed. Returns what was changed.
    pub fn remove_bone(&mut self, name: &str, names: &Names) -> Result<Vec<String>> {
        let i = self.require_bone(name)?;
        let display = self.display_name(i, names);
        let id = self.bone(i).id.unwrap_or(0);
        let parent = self.bone(i).bone_parent().filter(|&p| p != 0);
        let children: Vec<usize> = (0..self.bone_count()).filter(|&c| self.bone(c).bone_parent() == Some(id)).collect();
        let mut notes = Vec::new();
        match parent {
            Some(pid) => {
                let pi = self
                    .list_index_of_id(pid)
                    .ok_or_else(|| AnvilError::Edit(format!("bone '{display}' has a parent that is not a bone")))?;
                let pg = self.global_of(pi);
                for &c in &children {
                    let g = self.global_of(c);
                    let l = relative(pg, g);
                    let cb = self.bone_mut(c);
                    cb.set_link(names::FATHER, Some(pid));
                    cb.set_pose(names::LOCAL_POS, names::LOCAL_ROT, l.0, l.1);
                }
                if !children.is_empty() {
                    notes.push(format!(
                        "{} child bone(s) of '{display}' re-parented to '{}'",
                        children.len(),
                        self.display_name(pi, names)
                    ));
                }
            }
            None => {
                if children.len() != 1 {
                    return Err(AnvilError::Edit(format!(
                        "cannot remove the root bone '{display}': it has {} children and a skeleton has one root",
                        children.len()
                    )));
                }
                let c = children[0];
                let g = self.global_of(c);
                let cid = self.bone(c).id;
                let cb = self.bone_mut(c);
                cb.set_link(names::FATHER, None);
                cb.set_pose(names::LOCAL_POS, names::LOCAL_ROT, g.0, g.1);
                self.root.set_link(names::ROOT_BONE, cid);
                notes.push(format!("'{}' is the new root bone", self.display_name(c, names)));
            }
        }
        let nmods = self.bone(i).modifiers().count();
        if nmods > 0 {
            notes.push(format!("{nmods} modifier(s) on '{display}' removed with it"));
        }
        self.bone_items_mut().remove(i);
        let removed: HashSet<u64> = [id].into_iter().collect();
        notes.extend(fix_references(self, &removed).into_iter().map(|(_, note)| note));
        Ok(notes)
    }

    /// Rename a bone: its BoneID hash and label change, its ID does not, so every link stays.
    pub fn rename_bone(&mut self, old: &str, new: &str) -> Result<()> {
        let i = self.require_bone(old)?;
        let h = hash_of_display(new);
        if let Some(j) = self.find_hash(h) {
            if j != i {
                return Err(AnvilError::Edit(format!("cannot rename '{old}' to '{new}': bone {j} already has that name")));
            }
        }
        let label = if parse_hex_name(new).is_some() { hex_name(h) } else { new.to_string() };
        self.bone_mut(i).set_bone_hash(h, Some(&label));
        Ok(())
    }
}

/// A bone to add.
#[derive(Debug, Clone)]
pub struct NewBone {
    /// Its name (or `x` + 8 hex digits for a bare hash).
    pub name: String,
    /// The parent's name.
    pub parent: String,
    /// Position: relative to the parent, or global when `global`.
    pub position: [f64; 3],
    /// Rotation quaternion x, y, z, w: relative to the parent, or global when `global`.
    pub rotation: [f64; 4],
    /// Whether position and rotation are global (world) rather than local.
    pub global: bool,
    /// The mirror bone's name; `None` finds one by Left/Right name.
    pub mirror: Option<String>,
}

impl NewBone {
    /// A bone at the parent's origin.
    pub fn new(name: &str, parent: &str) -> NewBone {
        NewBone {
            name: name.into(),
            parent: parent.into(),
            position: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
            global: false,
            mirror: None,
        }
    }
}

/// After bones with these IDs were removed: MirrorBone links to them point back to their own
/// bone, and other links to them are removed (list items dropped, single links set to null).
/// Returns one note per reference removed, with the bone that held it (`None`: the skeleton's
/// RootBone).
pub fn fix_references(model: &mut AnvilSkeleton, removed: &HashSet<u64>) -> Vec<(Option<Place>, String)> {
    let mut notes = Vec::new();
    let names = Names::builtin();
    for i in 0..model.bone_count() {
        let display = model.display_name(i, &names);
        let b = model.bone_mut(i);
        if b.bone_mirror().map(|m| removed.contains(&m)).unwrap_or(false) {
            let own = b.id;
            b.set_link(names::MIRROR, own);
            notes.push((
                Some(Place::single_quoted("bone", &display)),
                format!("bone '{display}': MirrorBone pointed to a removed bone; now points to itself"),
            ));
        }
        for f in &mut b.fields {
            if f.name() == names::FATHER || f.name() == names::MIRROR {
                continue;
            }
            let path = f.name().to_string();
            strip_links(&mut f.value, &path, removed, &mut |what: String| {
                notes.push((Some(Place::single_quoted("bone", &display)), format!("bone '{display}': {what}")))
            });
        }
    }
    if model.root_bone().map(|r| removed.contains(&r)).unwrap_or(false) {
        let first_root = model.bones().find(|b| b.bone_parent().filter(|&p| p != 0).is_none()).and_then(|b| b.id);
        model.root.set_link(names::ROOT_BONE, first_root);
        notes.push((None, "RootBone pointed to a removed bone; now points to the first root".into()));
    }
    notes
}

/// Remove links to `removed` inside a value at `path` (`Class.Field` …); `note` gets a
/// description of each.
fn strip_links(v: &mut Value, path: &str, removed: &HashSet<u64>, note: &mut dyn FnMut(String)) {
    match v {
        Value::Ptr(p) => match &mut p.target {
            Target::Link(l) if removed.contains(&l.id) => {
                p.target = Target::Null;
                note(format!("{path} pointed to the removed bone; set to null"));
            }
            Target::Inline(o) => strip_object(o, removed, note),
            _ => {}
        },
        Value::Object(o) => strip_object(o, removed, note),
        Value::List(l) => {
            let before = l.items.len();
            l.items.retain(|it| !matches!(&it.value, Value::Ptr(Ptr { target: Target::Link(x), .. }) if removed.contains(&x.id)));
            if l.items.len() != before {
                note(format!("{path} listed the removed bone; entry removed"));
            }
            for it in &mut l.items {
                strip_links(&mut it.value, path, removed, note);
            }
        }
        _ => {}
    }
}

fn strip_object(o: &mut Object, removed: &HashSet<u64>, note: &mut dyn FnMut(String)) {
    let class = o.class.to_string();
    for f in &mut o.fields {
        let path = format!("{class}.{}", f.name());
        strip_links(&mut f.value, &path, removed, note);
    }
}

/// Options for [`merge`].
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// The bone limit after de-duplication; default 255 for a Schema-Based main skeleton
    /// (pre-Unity games) and 65535 for a Standard one.
    pub limit: Option<usize>,
    /// Names for messages.
    pub names: Names,
}

/// What a merge did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MergeReport {
    /// Addon bones matched to main bones (the root and path bones), as `addon: name`.
    pub matched: Vec<String>,
    /// Bones added, as `name (under parent)`.
    pub added: Vec<String>,
    /// Modifiers applied from matched addon bones to main bones.
    pub modifiers_applied: usize,
    /// Modifiers of matched addon bones that the main bone has already (the same class and
    /// values): not applied again, so merging what is already merged changes nothing.
    pub modifiers_present: usize,
    /// Bone count after the merge.
    pub bone_count: usize,
}

/// A modifier as a merge compares it: its objects' IDs numbered from 1 in order (links among
/// them following), its owner and its links' path labels left out, and what differs only by the
/// form it was read from made one (see [`form_free`]). The same modifier merged twice, or already
/// in the main skeleton, compares equal whatever IDs it was given and whichever form (Standard or
/// Schema-Based) each copy came from.
fn canonical_modifier(m: &Object) -> Object {
    let mut c = m.clone();
    let (mut next, mut objmap) = (1, HashMap::new());
    renumber(&mut c, &mut next, &mut objmap);
    c.fields.retain(|f| f.name() != names::OWNER);
    c.for_each_link_mut(&mut |_, l| {
        if let Some(&n) = objmap.get(&l.id) {
            l.id = n;
        }
        l.label = None;
    });
    form_free(&mut c);
    c
}

/// Make `o` (recursively) the same whichever form it was read from: the Standard form writes
/// booleans `true`/`false` and the Schema-Based form `True`/`False`; elements kept as written
/// (`Value::Raw`) differ in line endings and indentation; labels (hash names, enum value names,
/// list item types, element attributes) are for humans or for one form's syntax. The numbers
/// and hashes that rule stay as they are.
fn form_free(o: &mut Object) {
    o.attrs.clear();
    o.src = None;
    for f in &mut o.fields {
        f.src = None;
        form_free_value(&mut f.value);
    }
}

fn form_free_value(v: &mut Value) {
    match v {
        Value::Scalar(s) => {
            if s.ty.eq_ignore_ascii_case("bool") {
                s.text = Txt::from(s.text.to_ascii_lowercase());
            }
            s.attrs.clear();
        }
        Value::Hash(h) => h.label = None,
        Value::Enum(e) => e.value_name = None,
        Value::Ptr(Ptr { target: Target::Inline(o), .. }) | Value::Object(o) => form_free(o),
        Value::Ptr(_) | Value::Vector(_) => {}
        Value::List(l) => {
            l.item_type = None;
            for it in &mut l.items {
                it.src = None;
                form_free_value(&mut it.value);
            }
        }
        // Tokens between tags: whitespace and line endings are the form's layout, not data.
        Value::Raw(t) => {
            let flat: Vec<&str> = t.split(['<', '>']).map(str::trim).collect();
            *t = Txt::from(flat.join("|"));
        }
    }
}

/// Merge addon skeletons into a main skeleton as the engine does when it loads them: each addon's
/// root is matched by hash to a main bone; the addon's path bones are matched (not duplicated) and
/// must have exactly the main skeleton's parent chain, else the merge fails naming the bone (the
/// game would crash); modifiers on matched bones are applied to the main bones; only new bones are
/// added, under the right parents. The bone count after de-duplication is checked against
/// `opts.limit`.
pub fn merge(main: &AnvilSkeleton, addons: &[AnvilSkeleton], opts: &MergeOptions) -> Result<(AnvilSkeleton, MergeReport)> {
    let names = &opts.names;
    let mut out = main.clone();
    let mut report = MergeReport::default();
    for (ai, addon) in addons.iter().enumerate() {
        let tag = format!("addon {}", ai + 1);
        let an = addon.bone_count();
        if an == 0 {
            continue;
        }
        let a_parents = addon.parents();
        let root = match addon.root_bone().and_then(|r| addon.list_index_of_id(r)) {
            Some(r) => r,
            None => {
                let roots: Vec<usize> = (0..an).filter(|&i| a_parents[i].is_none()).collect();
                match roots.as_slice() {
                    [r] => *r,
                    _ => return Err(AnvilError::Merge(format!("{tag}: no RootBone and {} bones without a parent", roots.len()))),
                }
            }
        };
        let root_name = addon.display_name(root, names);
        let root_hash = addon.bone(root).bone_hash().unwrap_or(0);
        let Some(mroot) = out.find_hash(root_hash) else {
            return Err(AnvilError::Merge(format!(
                "{tag}: its root bone '{root_name}' is not in the main skeleton (an addon's root must share a bone's name)"
            )));
        };
        // Pre-order from the addon root.
        let order = skelport_ir::proc::preorder_from(&skelport_ir::proc::children_of(&a_parents), [root]);
        if order.len() != an {
            let stray = (0..an).find(|i| !order.contains(i)).unwrap_or(0);
            return Err(AnvilError::Merge(format!(
                "{tag}: bone '{}' is not under the addon's root bone '{root_name}'",
                addon.display_name(stray, names)
            )));
        }
        let mut hash_idx: HashMap<u32, usize> = out.bones().enumerate().filter_map(|(i, b)| b.bone_hash().map(|h| (h, i))).collect();
        let mut next = out.max_id().max(addon.max_id()) + 1;
        let mut map: HashMap<u64, u64> = HashMap::new(); // addon bone ID → main bone ID
        let mut new_bones: Vec<usize> = Vec::new();
        let mroot_id = out.bone(mroot).id.unwrap_or(0);
        map.insert(addon.bone(root).id.unwrap_or(0), mroot_id);
        report.matched.push(format!("{tag}: {root_name} (root)"));
        for &a in order.iter().skip(1) {
            let ab = addon.bone(a);
            let name = addon.display_name(a, names);
            let parent_main = map[&addon.bone(a_parents[a].expect("non-root")).id.unwrap_or(0)];
            let h = ab.bone_hash().unwrap_or(0);
            match hash_idx.get(&h) {
                Some(&mi) => {
                    let mb = out.bone(mi);
                    if mb.bone_parent() != Some(parent_main) {
                        let addon_parent = addon.display_name(a_parents[a].expect("non-root"), names);
                        let main_parent = match mb.bone_parent().and_then(|p| out.list_index_of_id(p)) {
                            Some(p) => format!("'{}'", out.display_name(p, names)),
                            None => "no parent".into(),
                        };
                        return Err(AnvilError::Merge(format!(
                            "{tag}: bone '{name}' is a child of '{addon_parent}' in the addon but has {main_parent} in the main skeleton; \
                             an addon's path must mirror the main hierarchy exactly (the game would crash). Add new bones as extra \
                             children instead of inserting them into the chain"
                        )));
                    }
                    map.insert(ab.id.unwrap_or(0), mb.id.unwrap_or(0));
                    report.matched.push(format!("{tag}: {name}"));
                }
                None => {
                    map.insert(ab.id.unwrap_or(0), next);
                    next += 1;
                    new_bones.push(a);
                }
            }
        }
        // Objects inside copied bones/modifiers get fresh IDs; links are remapped.
        let remap = |o: &mut Object, objmap: &HashMap<u64, u64>, map: &HashMap<u64, u64>| -> Result<()> {
            let mut bad = None;
            o.for_each_link_mut(&mut |field, l| {
                if let Some(&m) = map.get(&l.id).or_else(|| objmap.get(&l.id)) {
                    l.id = m;
                    l.label = None;
                } else if l.id != 0 && bad.is_none() {
                    bad = Some(format!("{field} → ID {}", l.id));
                }
            });
            match bad {
                Some(b) => Err(AnvilError::Merge(format!("{tag}: a link that points outside the addon's bones: {b}"))),
                None => Ok(()),
            }
        };
        // Modifiers on matched bones (root and path) go to the main bones.
        for &a in &order {
            let ab = addon.bone(a);
            if new_bones.contains(&a) {
                continue;
            }
            let target = map[&ab.id.unwrap_or(0)];
            let mods: Vec<Object> = ab.modifiers().cloned().collect();
            if mods.is_empty() {
                continue;
            }
            let mi = out.list_index_of_id(target).expect("matched bone");
            for mut m in mods {
                let mut objmap = HashMap::new();
                renumber(&mut m, &mut next, &mut objmap);
                m.fields.retain(|f| f.name() != names::OWNER);
                remap(&mut m, &objmap, &map)?;
                let same = canonical_modifier(&m);
                if out.bone(mi).modifiers().any(|have| canonical_modifier(have) == same) {
                    report.modifiers_present += 1;
                    continue;
                }
                out.bone_mut(mi).modifier_items_mut().push(bone_item(m));
                report.modifiers_applied += 1;
            }
        }
        // New bones, in pre-order, each after its parent's subtree.
        for &a in &new_bones {
            let mut o = addon.bone(a).clone();
            let old_id = o.id.unwrap_or(0);
            let new_id = map[&old_id];
            let mut objmap = HashMap::new();
            renumber(&mut o, &mut next, &mut objmap);
            o.id = Some(new_id);
            // Modifiers get owners regenerated.
            if let Some(Value::List(l)) = o.field_mut(names::MODIFIERS).map(|f| &mut f.value) {
                for it in &mut l.items {
                    if let Value::Ptr(Ptr { target: Target::Inline(m), .. }) = &mut it.value {
                        m.fields.retain(|f| f.name() != names::OWNER);
                    }
                }
            }
            // A mirror outside the addon becomes "self".
            if let Some(mid) = o.bone_mirror() {
                if !map.contains_key(&mid) {
                    o.set_link(names::MIRROR, Some(old_id));
                }
            }
            objmap.insert(old_id, new_id);
            remap(&mut o, &objmap, &map)?;
            let parent_id = o.bone_parent().unwrap_or(0);
            let pi = out.list_index_of_id(parent_id).expect("parent already placed");
            let at = subtree_end(out.bone_items(), pi);
            let name = addon.display_name(a, names);
            report.added.push(format!("{name} (under {})", out.display_name(pi, names)));
            // The addon's Global was relative to the addon's own placement; the engine places the
            // bone by its Local under the main parent, so Global = parent Global × Local (and the
            // merged file re-reads without a Local/Global mismatch).
            if let Some(local) = o.local_pose() {
                let g = compose(out.global_of(pi), (local.0, local.1.normalize()));
                o.set_pose(names::GLOBAL_POS, names::GLOBAL_ROT, g.0, g.1);
            }
            out.bone_items_mut().insert(at, bone_item(o));
            hash_idx = out.bones().enumerate().filter_map(|(i, b)| b.bone_hash().map(|h| (h, i))).collect();
        }
    }
    let limit = opts.limit.unwrap_or(main.form.dialect().max_bones);
    report.bone_count = out.bone_count();
    if out.bone_count() > limit {
        return Err(AnvilError::Limit(format!(
            "{} bones after merging (matched bones counted once) exceed the limit of {limit}{}",
            out.bone_count(),
            if limit == 255 { " (pre-Unity games store bone indices in one byte; use --limit 65535 for Unity and later)" } else { "" }
        )));
    }
    Ok((out, report))
}

/// The list position just after bone `p`'s last descendant (by list order).
pub(crate) fn subtree_end(list: &[Field], p: usize) -> usize {
    let id_of = |f: &Field| match &f.value {
        Value::Ptr(Ptr { target: Target::Inline(o), .. }) => (o.id, o.bone_parent()),
        _ => (None, None),
    };
    let mut inside: HashSet<u64> = HashSet::new();
    if let (Some(id), _) = id_of(&list[p]) {
        inside.insert(id);
    }
    let mut end = p + 1;
    for (k, f) in list.iter().enumerate().skip(p + 1) {
        let (id, parent) = id_of(f);
        match parent {
            Some(par) if inside.contains(&par) => {
                if let Some(id) = id {
                    inside.insert(id);
                }
                end = k + 1;
            }
            _ => {}
        }
    }
    end
}
