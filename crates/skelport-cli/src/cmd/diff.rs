//! `skelport diff`: two files compared bone by bone (any formats), or one with the SL skeleton.

use crate::flags::DiffArgs;
use anyhow::Result;
use skelport::{diff, Diagnostics, OpenOptions};
use std::process::ExitCode;

/// Run `skelport diff`.
pub fn run(a: DiffArgs) -> Result<ExitCode> {
    let reader = skelport::ir::ReadOptions {
        mesh: a.mesh.clone(),
        weights: a.weights.clone(),
        sl_skeleton: a.sl_skeleton.clone(),
        ..Default::default()
    };
    let opts = OpenOptions { from: None, reader };
    // A document that breaks the IR's rules is compared as read (an influence row that is not
    // one as none): say so, as inspect does.
    let warn_if_broken = |l: &skelport::Loaded| {
        if let Some(msg) = super::broken_rules_warning(&l.doc, "compared") {
            let mut d = Diagnostics::default();
            d.warn("diff.invalid", msg);
            super::print_diagnostics(&l.name, &d);
        }
    };
    let mut la = super::open(&a.a, &opts)?;
    warn_if_broken(&la);
    let (b, b_format) = match &a.b {
        Some(b) => {
            let lb = super::open(b, &opts)?;
            warn_if_broken(&lb);
            (lb.doc, Some(lb.format))
        }
        None => (diff::sl_avatar(a.sl_skeleton.as_deref())?, None),
    };
    // B in another format is what a conversion of A to it gave: compare A as that conversion
    // starts (the same --map, the writer's rest pose, what the format keeps).
    let mut tol = diff::Tolerance { metres: a.tolerance, degrees: a.angle_tolerance, ..Default::default() };
    let seen_as = diff::prepare_a(&mut la, b_format, a.map.as_deref())?;
    if let Some(done) = &seen_as {
        tol.orientations = done.orientations;
    }
    let mut r = diff::diff(&la.doc, &b, tol);
    r.compared_as = seen_as.clone();
    if a.pose_test {
        let p = diff::pose_test(&la.doc, &b, a.poses, 1)?;
        if p.max_deviation > a.tolerance {
            r.same = false;
        }
        r.pose_test = Some(p);
    }
    if a.json {
        println!("{}", serde_json::to_string_pretty(&r)?);
    } else {
        let c = &r.compared;
        say!(
            "compared: parents, heads and orientations of {} bone(s); tails of {} (those whose length both files store); {} skin(s); {} mesh(es)",
            c.bones,
            c.tails,
            c.skins,
            c.meshes
        );
        if let Some(p) = &r.pose_test {
            let mut over = Vec::new();
            if p.vertices > 0 {
                over.push(format!("{} vertices", p.vertices));
            }
            if p.matrices > 0 {
                over.push(format!("the skinning matrices of {} joints", p.matrices));
            }
            if p.joints > 0 {
                over.push(format!("{} joints", p.joints));
            }
            say!("pose test: {} poses over {}, max deviation {:.3e} m", p.poses, over.join(" and "), p.max_deviation);
        }
        for n in &r.removed {
            say!("- {n}");
        }
        for n in &r.added {
            say!("+ {n}");
        }
        for p in &r.reparented {
            say!("~ {}: parent {} → {}", p.bone, p.from.as_deref().unwrap_or("(root)"), p.to.as_deref().unwrap_or("(root)"));
        }
        for m in &r.moved {
            match m.tail {
                Some(t) => say!("~ {}: moved head {:.6} m, tail {:.6} m", m.bone, m.head, t),
                None => say!("~ {}: moved head {:.6} m", m.bone, m.head),
            }
        }
        for m in &r.rotated {
            say!("~ {}: rotated {:.4}°", m.bone, m.degrees);
        }
        for s in r.skins.iter().chain(&r.meshes) {
            say!("~ {s}");
        }
        for n in &r.notes {
            say!("note: {n}");
        }
        let verdict = if r.same { "same" } else { "different" };
        match &seen_as {
            Some(done) => say!("{verdict} ({})", done.describe()),
            None => say!("{verdict}"),
        }
    }
    Ok(if r.same { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
