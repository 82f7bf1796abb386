//! The logic of the `skelport merge` and `skelport bone` commands, on the AnvilToolkit model
//! directly (not through the IR), so everything the IR does not hold (modifiers, unknown
//! elements, comments, number text) is kept and untouched parts of a file are written back byte
//! for byte. The CLI parses the arguments, reads and writes the files and prints; this module
//! decides.

use crate::error::Result;
use crate::model::{AnvilSkeleton, Form};
use crate::names::Names;
use crate::ops::{merge, MergeOptions, MergeReport};

/// Parse a skeleton file and check it: dangling links, duplicate IDs or names are errors.
pub fn open(bytes: &[u8], file: &str, names: &Names) -> Result<AnvilSkeleton> {
    let m = AnvilSkeleton::parse(bytes, file)?;
    crate::check::check(&m, names, file)?;
    Ok(m)
}

/// The bone limit of a game generation, told by the form its skeletons are written in: 255 for
/// Schema-Based (before Unity), 65,535 for Standard (Unity and later).
pub fn default_limit(form: Form) -> usize {
    form.dialect().max_bones
}

/// A finished merge.
#[derive(Debug)]
pub struct Merged {
    /// The merged skeleton, written in the form asked for.
    pub bytes: Vec<u8>,
    /// What the merge did, with addons named by their labels.
    pub report: MergeReport,
    /// The bone limit it was held to.
    pub limit: usize,
}

/// Merge `addons` (each with the label messages name it by, its file) into `main` as the engine
/// does, and write the result in `form` (default: the main skeleton's), holding it to `limit`
/// bones (default: the form's, [`default_limit`]).
pub fn merge_labelled(
    main: &AnvilSkeleton,
    addons: &[(String, AnvilSkeleton)],
    form: Option<Form>,
    limit: Option<usize>,
    names: Names,
) -> Result<Merged> {
    let form = form.unwrap_or(main.form);
    let limit = limit.unwrap_or(default_limit(form));
    // Messages name addons by position; name them by their labels instead.
    let labelled = |msg: &str| -> String {
        let mut msg = msg.to_string();
        for (i, (label, _)) in addons.iter().enumerate().rev() {
            msg = msg.replace(&format!("addon {}:", i + 1), &format!("{label}:"));
        }
        msg
    };
    let models: Vec<AnvilSkeleton> = addons.iter().map(|(_, m)| m.clone()).collect();
    let (merged, mut report) = merge(main, &models, &MergeOptions { limit: Some(limit), names })
        // The message as it was, addons relabelled (`Edit` shows its text as it is).
        .map_err(|e| crate::AnvilError::Edit(labelled(&e.to_string())))?;
    report.matched = report.matched.iter().map(|m| labelled(m)).collect();
    let bytes = merged.to_bytes(form)?;
    Ok(Merged { bytes, report, limit })
}

/// One line of `skelport bone list`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BoneRow {
    /// Index in the Bones list.
    pub index: usize,
    /// Display name (the name, or x + 8 hex digits when the hash is unknown).
    pub name: String,
    /// The bone's hash (0 when it has none).
    pub hash: u32,
    /// The bone's object ID (0 when it has none).
    pub id: u64,
    /// The parent's display name, or `-` for a root.
    pub parent: String,
    /// The classes of its modifiers.
    pub modifiers: Vec<String>,
}

/// The rows of `skelport bone list`, in the file's order.
pub fn bone_rows<'a>(m: &'a AnvilSkeleton, names: &'a Names) -> impl Iterator<Item = BoneRow> + 'a {
    let ids = m.id_map();
    m.bones().enumerate().map(move |(i, b)| BoneRow {
        index: i,
        name: m.display_name(i, names),
        hash: b.bone_hash().unwrap_or(0),
        id: b.id.unwrap_or(0),
        parent: b.bone_parent().and_then(|p| ids.get(&p)).map(|&p| m.display_name(p, names)).unwrap_or_else(|| "-".into()),
        modifiers: b.modifiers().map(|o| o.class.to_string()).collect(),
    })
}
