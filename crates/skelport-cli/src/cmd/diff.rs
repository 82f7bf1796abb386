//! `skelport diff`: two files compared bone by bone (any formats), or one with the SL skeleton.

use crate::flags::DiffArgs;
use anyhow::Result;
use skelport::{diff, Diagnostics, ReadOptions};
use std::process::ExitCode;

/// Run `skelport diff`.
pub fn run(a: DiffArgs) -> Result<ExitCode> {
    let reader = skelport::ir::ReadOptions {
        mesh: a.mesh.clone(),
        weights: a.weights.clone(),
        sl_skeleton: a.sl_skeleton.clone(),
        ..Default::default()
    };
    let opts = ReadOptions { from: None, reader };
    let mut la = skelport::open(&a.a, &opts)?;
    let (b, b_format) = match &a.b {
        Some(b) => {
            let lb = skelport::open(b, &opts)?;
            (lb.doc, Some(lb.format))
        }
        None => (diff::sl_avatar(a.sl_skeleton.as_deref())?, None),
    };
    // B in another format is what a conversion of A to it gave: compare A as that conversion
    // starts (the same --map, the writer's rest pose, what the format keeps).
    let mut tol = diff::Tolerance { metres: a.tolerance, degrees: a.angle_tolerance, ..Default::default() };
    let mut seen_as = None;
    match b_format.filter(|f| f.name() != la.format.name()) {
        Some(target) => {
            let done = diff::as_converted(&mut la.doc, target, a.map.as_deref(), &mut Diagnostics::default())?;
            tol.orientations = done.orientations;
            seen_as = Some(done);
        }
        None => {
            if let Some(m) = &a.map {
                let map = skelport::maps::load(m)?;
                skelport::retarget(&mut la.doc, &map, &mut Diagnostics::default())?;
            }
        }
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
        if let Some(p) = &r.pose_test {
            let over = if p.vertices > 0 { format!("{} vertices", p.vertices) } else { format!("{} joints", p.joints) };
            println!("pose test: {} poses over {over}, max deviation {:.3e} m", p.poses, p.max_deviation);
        }
        for n in &r.removed {
            println!("- {n}");
        }
        for n in &r.added {
            println!("+ {n}");
        }
        for p in &r.reparented {
            println!("~ {}: parent {} → {}", p.bone, p.from.as_deref().unwrap_or("(root)"), p.to.as_deref().unwrap_or("(root)"));
        }
        for m in &r.moved {
            println!("~ {}: moved head {:.6} m, tail {:.6} m", m.bone, m.head, m.tail);
        }
        for m in &r.rotated {
            println!("~ {}: rotated {:.4}°", m.bone, m.degrees);
        }
        for s in &r.skins {
            println!("~ {s}");
        }
        let verdict = if r.same { "same" } else { "different" };
        match &seen_as {
            Some(done) => println!("{verdict} ({})", done.describe()),
            None => println!("{verdict}"),
        }
    }
    Ok(if r.same { ExitCode::SUCCESS } else { ExitCode::from(1) })
}
