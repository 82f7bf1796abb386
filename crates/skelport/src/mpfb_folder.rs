//! MPFB as users have it: folders of `rig.<name>.json` beside `weights.<name>.json`, with the base
//! mesh the weights number in the data folder's `3dobjs/base.obj`
//! ([`skelport_mpfb::layout`]). A batch joins each rig to the weights beside it
//! ([`plan_batch`]); reading a rig with weights and no mesh finds the base mesh; a file given
//! in the wrong place is named for what it is.

use crate::{Error, ErrorCode, Front, Opt, Result, Words};
use skelport_ir::{Diagnostics, ReadOptions as ReaderOptions};
use skelport_mpfb::layout;
use std::path::{Path, PathBuf};

pub use skelport_mpfb::layout::{base_mesh_for, weights_beside, FileKind};

/// The MPFB format's name (`skelport_mpfb::NAME`), for callers that branch on it.
pub const FORMAT: &str = skelport_mpfb::NAME;

/// One conversion of a batch: an input and the weights file joined to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchJob {
    /// The input file.
    pub input: PathBuf,
    /// The `weights.<name>.json` beside an MPFB `rig.<name>.json`, joined to it.
    pub weights: Option<PathBuf>,
}

/// What a batch converts: the jobs, the inputs it does not convert (with why), and a note saying
/// once which weights were joined.
#[derive(Debug, Clone, Default)]
pub struct BatchPlan {
    /// The inputs to convert, in the order given.
    pub jobs: Vec<BatchJob>,
    /// MPFB weights files given as inputs whose rig is not in the batch: not converted on their
    /// own; each with the message saying where it goes.
    pub refused: Vec<(PathBuf, String)>,
    /// Weights files given as inputs and joined to their rig (not converted on their own).
    pub consumed: Vec<PathBuf>,
    /// Said once: which rigs were joined to the weights beside them.
    pub note: Option<String>,
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b || matches!((std::fs::canonicalize(a), std::fs::canonicalize(b)), (Ok(x), Ok(y)) if x == y)
}

fn is_json(p: &Path) -> bool {
    p.extension().is_some_and(|e| e.eq_ignore_ascii_case("json"))
}

/// Plan a batch of `inputs`. Each MPFB `rig.<name>.json` is joined to the `weights.<name>.json`
/// beside it, when there is one; MPFB weights files among the inputs are not converted on their
/// own (those whose rig is in the batch are simply joined to it, the others are refused, saying
/// so). `weights` is `--weights`: it joins one rig, so a batch of several inputs with it is
/// refused rather than skinning every rig with the same weights.
pub fn plan_batch(inputs: &[PathBuf], weights: Option<&Path>) -> Result<BatchPlan> {
    // Each JSON input's head is read to tell a weights file: on every core, as it is the batch's
    // one serial pass over the files (17 µs a file here: a thousand files kept the second core
    // idle for 17 ms). The order of the results is the inputs'.
    let is_weights = skelport_ir::map_in_order(inputs.iter().collect(), inputs.len() > 1, |p: &PathBuf| {
        is_json(p) && FileKind::of_file(p) == FileKind::Weights
    });
    let rigs = is_weights.iter().filter(|w| !**w).count();
    if let Some(w) = weights {
        if rigs > 1 {
            let msg = Words::default()
                .opt(Opt::Weights)
                .text(format!(" {} joins one weights file to one rig, but the batch has {rigs} inputs: leave ", w.display()))
                .opt(Opt::Weights)
                .text(" out (each rig.<name>.json is joined to the weights.<name>.json beside it) or convert each rig on its own");
            return Err(Error::new(ErrorCode::Kind, None, msg));
        }
    }
    let mut plan = BatchPlan::default();
    let mut joined = Vec::new();
    for (k, input) in inputs.iter().enumerate() {
        if is_weights[k] {
            let rig = layout::rig_beside(input);
            let in_batch = rig.as_ref().is_some_and(|r| inputs.iter().zip(&is_weights).any(|(i, w)| !*w && same_file(i, r)));
            if in_batch {
                plan.consumed.push(input.clone());
            } else {
                plan.refused.push((input.clone(), weights_given_as_rig(&input.display().to_string(), input).said(Front::Cli)));
            }
            continue;
        }
        let beside = if weights.is_none() && is_json(input) { layout::weights_beside(input) } else { None };
        if let (Some(name), Some(_)) = (layout::rig_name(input), &beside) {
            joined.push(name.to_owned());
        }
        plan.jobs.push(BatchJob { input: input.clone(), weights: beside });
    }
    if !joined.is_empty() {
        plan.note = Some(format!(
            "joined each MPFB rig.<name>.json to the weights.<name>.json beside it ({} rig(s): {}){}",
            joined.len(),
            joined.join(", "),
            if plan.consumed.is_empty() { String::new() } else { "; weights files given as inputs are not converted on their own".into() }
        ));
    }
    Ok(plan)
}

/// The message for an MPFB weights file given where a rig goes (the command line's example
/// only where flags are the words).
fn weights_given_as_rig(name: &str, path: &Path) -> Words {
    let rig = layout::rig_beside(path).filter(|r| r.is_file());
    let words = Words::new(format!("{name}: this is an MPFB weights file, not a rig: it is no input of its own; pass it with "))
        .opt(Opt::Weights)
        .text(" beside its rig.*.json");
    match rig {
        Some(r) => words.text(format!(" ({}", r.display())).text(", ").opt(Opt::Weights).text(format!(" {name})")),
        None => words,
    }
}

/// Before reading `name` (at `path`, its first bytes `head`) as `format`: a file of another kind
/// than a rig is refused naming what it is, and so are an OBJ given as `--weights` and a JSON
/// file given as `--mesh`; an MPFB rig read with weights and no mesh gets MakeHuman's base mesh
/// from MPFB's data folder (a note says which file), so the skin has the vertices its numbers
/// mean. Returns the reader options to use when they change.
pub(crate) fn before_read(
    format: Option<&str>,
    path: Option<&Path>,
    name: &str,
    head: &[u8],
    reader: &ReaderOptions,
    diags: &mut Diagnostics,
) -> Result<Option<ReaderOptions>> {
    let kind = FileKind::of(head);
    // MakeHuman 1.x's own files, which look like MPFB's to a glance at the JSON.
    if format == Some(skelport_mpfb::NAME) && skelport_mhskel::sniff(head) > 0 {
        let msg = Words::new(format!(
            "{name}: this is a MakeHuman 1.x skeleton (.mhskel: bones name joints of the base mesh), not an MPFB rig: read it with "
        ))
        .opt(Opt::From)
        .text(format!(" {} (or leave ", skelport_mhskel::NAME))
        .opt(Opt::From)
        .text(" out: skelport recognises it)");
        return Err(Error::new(ErrorCode::Kind, Some(name), msg));
    }
    let is_mhw = path.and_then(|p| p.extension()).is_some_and(|e| e.eq_ignore_ascii_case("mhw"));
    if format.is_none() && is_mhw && kind == FileKind::Weights {
        let msg = Words::new(format!(
            "{name}: this is a MakeHuman 1.x weights file (.mhw), not a rig: it is no input of its own; convert the .mhskel that names it (its weights_file, read from beside it), or give it with "
        ))
        .opt(Opt::Weights);
        return Err(Error::new(ErrorCode::Kind, Some(name), msg));
    }
    if matches!(format, None | Some(skelport_mpfb::NAME)) && kind == FileKind::Weights {
        return Err(Error::new(ErrorCode::Kind, Some(name), weights_given_as_rig(name, path.unwrap_or(Path::new(name)))));
    }
    if format.is_none() && kind == FileKind::Obj {
        let msg = Words::new(format!("{name}: this is an OBJ mesh, which holds no skeleton: pass it with "))
            .opt(Opt::Mesh)
            .text(" beside the rig (rig.<name>.json, with ")
            .opt(Opt::Weights)
            .text(" weights.<name>.json and ")
            .opt(Opt::Mesh)
            .text(format!(" {name})"));
        return Err(Error::new(ErrorCode::Kind, Some(name), msg));
    }
    if format != Some(skelport_mpfb::NAME) {
        return Ok(None);
    }
    if let Some(w) = &reader.weights {
        let wn = w.display();
        match FileKind::of_file(w) {
            FileKind::Obj => {
                let msg = Words::new(format!("{wn}: this is an OBJ mesh, not an MPFB weights file: pass it with "))
                    .opt(Opt::Mesh)
                    .text(format!(", and the weights.<name>.json beside {name} with "))
                    .opt(Opt::Weights);
                return Err(Error::new(ErrorCode::Kind, Some(&wn.to_string()), msg));
            }
            FileKind::Rig => {
                let msg =
                    Words::new(format!("{wn}: this is an MPFB rig, not a weights file: pass the weights.<name>.json beside the rig with "))
                        .opt(Opt::Weights);
                return Err(Error::new(ErrorCode::Kind, Some(&wn.to_string()), msg));
            }
            _ => {}
        }
    }
    if let Some(m) = &reader.mesh {
        let what = match FileKind::of_file(m) {
            FileKind::Weights => Some(Words::new("an MPFB weights file: pass it with ").opt(Opt::Weights)),
            FileKind::Rig => Some(Words::new("an MPFB rig: convert it as the input")),
            _ => None,
        };
        if let Some(what) = what {
            let mn = m.display().to_string();
            let msg =
                Words::new(format!("{mn}: this is ")).then(what).text(", and ").opt(Opt::Mesh).text(" takes an OBJ (MakeHuman's base.obj)");
            return Err(Error::new(ErrorCode::Kind, Some(&mn), msg));
        }
    }
    if reader.mesh.is_some() || reader.mesh_data.is_some() {
        return Ok(None);
    }
    // No mesh: look where MPFB keeps the base mesh, beside `rigs/` (from the weights file, else
    // the rig). With weights it is the body they number; a rig alone is placed on it too, as its
    // siblings with weights are, so a batch over the folder puts every rig on the ground alike,
    // and the body is not written.
    let has_weights = reader.weights.is_some() || reader.weights_data.is_some();
    let found = reader.weights.as_deref().and_then(layout::base_mesh_for).or_else(|| path.and_then(layout::base_mesh_for));
    let Some(mesh) = found else { return Ok(None) };
    let (verb, then) = if has_weights {
        ("using", ", whose vertices the weights number; give --mesh to use another body")
    } else {
        ("bones placed on", ", as the rigs with weights are; the body is not written (give --mesh to write it)")
    };
    diags.info(
        "mpfb.base-mesh",
        format!("no --mesh given: {verb} MakeHuman's base mesh {} (MPFB's data folder, beside rigs/){then}", mesh.display()),
    );
    Ok(Some(ReaderOptions { mesh: Some(mesh), mesh_for_placement: true, ..reader.clone() }))
}
