//! `validate --target sl`: a `.dae` checked against the SL Collada importer's rules (see
//! docs/formats/sl.md and the corpus's SL-NOTES.md), each violation naming the rule, the place in
//! the file and the joint or vertex at fault.

use crate::collada::{self, Dae, UpAxis};
use crate::skeleton::{SlSkeleton, MAX_INFLUENCES, MAX_JOINTS_PER_SKIN, MIN_WEIGHT};
use serde::Serialize;
use std::collections::BTreeMap;

/// How bad a finding is for an upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The importer refuses the file, or the skin weights cannot be uploaded.
    Error,
    /// Accepted, but not as the author meant (silently bound, clamped, split ...).
    Warning,
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Violation {
    pub level: Level,
    /// The importer's rule, e.g. `UnrecognizedJoint`, `TooManyJoint`, `VertexWeightsCount`.
    pub rule: &'static str,
    /// `file:line:column` and the element, joint or vertex.
    pub location: String,
    pub message: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let lvl = match self.level {
            Level::Error => "error",
            Level::Warning => "warning",
        };
        write!(f, "{}: {lvl} [{}]: {}", self.location, self.rule, self.message)
    }
}

/// At most this many vertices are named per rule; the count says how many there are.
const SHOW: usize = 8;

fn list(v: &[usize]) -> String {
    let s: Vec<String> = v.iter().take(SHOW).map(|x| x.to_string()).collect();
    format!("{}{}", s.join(", "), if v.len() > SHOW { ", …" } else { "" })
}

/// Check `.dae` bytes against the SL importer. A file that cannot be parsed at all gives one error.
pub fn validate_bytes(bytes: &[u8], file: &str, sl: &SlSkeleton) -> Vec<Violation> {
    let parsed = crate::read::decode(bytes, file).and_then(|t| collada::parse(&t, file));
    match parsed {
        Ok(dae) => validate(&dae, file, sl),
        Err(e) => vec![Violation { level: Level::Error, rule: "LoadError", location: file.into(), message: e.to_string() }],
    }
}

/// Check a parsed Collada document against the SL importer's rules.
pub fn validate(dae: &Dae, file: &str, sl: &SlSkeleton) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut push = |level, rule, location: String, message: String| out.push(Violation { level, rule, location, message });
    if !dae.has_visual_scene {
        push(Level::Error, "NoVisualScene", file.into(), "the file has no <visual_scene>; the importer refuses it".into());
    }
    for g in &dae.geometries {
        let at = format!("{file}:{}: geometry \"{}\"", g.pos, g.id);
        if g.positions.is_empty() {
            push(Level::Error, "NoPositions", at.clone(), "the geometry has no positions".into());
        }
        let bad: Vec<usize> = (0..g.positions.len()).filter(|&i| !g.positions[i].is_finite()).collect();
        if !bad.is_empty() {
            push(Level::Error, "NaNPosition", at.clone(), format!("{} position(s) are NaN or infinite (vertex {})", bad.len(), list(&bad)));
        }
        let bad: Vec<usize> = (0..g.normals.len()).filter(|&i| !g.normals[i].is_finite()).collect();
        if !bad.is_empty() {
            push(Level::Error, "NaNNormal", at.clone(), format!("{} normal(s) are NaN or infinite (normal {})", bad.len(), list(&bad)));
        }
        for p in &g.primitives {
            if let Some((declared, found)) = p.count_mismatch {
                push(
                    Level::Warning,
                    "PolygonCount",
                    format!("{file}:{}: geometry \"{}\"", p.pos, g.id),
                    format!("count=\"{declared}\" but {found} polygons: the importer uses the polygons (it does not check count)"),
                );
            }
        }
        if g.positions.len() > 65535 {
            push(
                Level::Warning,
                "TooManyVertices",
                at,
                format!("{} positions: the importer splits faces past 65,535 vertices", g.positions.len()),
            );
        }
    }
    if dae.materials > 8 {
        push(Level::Warning, "TooManyMaterials", file.into(), format!("{} materials: the importer splits models past 8", dae.materials));
    }
    let skinned = !dae.controllers.is_empty();
    if skinned && dae.up_axis.unwrap_or(UpAxis::Y) != UpAxis::Z {
        push(
            Level::Warning,
            "UpAxis",
            file.into(),
            "not Z_UP: the importer applies <up_axis> only to unrigged placement, so bind shape, inverse bind matrices and joint positions must already be Z-up".into(),
        );
    }
    for c in &dae.controllers {
        let at = format!("{file}:{}: controller \"{}\"", c.pos, c.id);
        let Some(gi) = dae.geometry(&c.skin_source) else {
            push(Level::Error, "SkinSource", at, format!("the skin's source \"#{}\" is not a geometry in the file", c.skin_source));
            continue;
        };
        let g = &dae.geometries[gi];
        let wat = format!("{file}:{}: controller \"{}\" <vertex_weights>", c.weights_pos, c.id);
        if c.weight_count != g.positions.len() {
            push(
                Level::Error,
                "VertexWeightsCount",
                wat.clone(),
                format!("count=\"{}\" but geometry \"{}\" has {} positions; they must be equal", c.weight_count, g.id, g.positions.len()),
            );
        }
        if c.vcount_len != c.weight_count {
            push(
                Level::Error,
                "VcountLength",
                wat.clone(),
                format!("<vcount> has {} entries but count=\"{}\"", c.vcount_len, c.weight_count),
            );
        }
        if let Some((have, need)) = c.v_mismatch {
            push(Level::Error, "VLength", wat.clone(), format!("<v> has {have} numbers but sum(vcount) × inputs = {need}"));
        }
        let jat = format!("{file}:{}: controller \"{}\" joints", c.joints_pos, c.id);
        for n in &c.joints {
            if sl.resolve(n).is_none() {
                push(
                    Level::Error,
                    "UnrecognizedJoint",
                    format!("{jat}, joint \"{n}\""),
                    format!("\"{n}\" is not an SL joint name (bones, aliases, collision volumes, attachment points; case-sensitive; not mRoot or mScreen): the skin weights cannot be uploaded"),
                );
            }
        }
        if let Some((j, m)) = c.bind_count_mismatch {
            push(Level::Error, "InvBindMatrixCount", jat.clone(), format!("{j} joints but {m} inverse bind matrices"));
        }
        if c.joints.len() > MAX_JOINTS_PER_SKIN {
            push(
                Level::Error,
                "TooManyJoint",
                jat.clone(),
                format!("{} joints in one skin; the importer takes at most {MAX_JOINTS_PER_SKIN}", c.joints.len()),
            );
        }
        let mut over = Vec::new();
        let mut unweighted = Vec::new();
        let mut tiny = 0usize;
        for (v, l) in c.influences().enumerate() {
            let real: Vec<f64> = l.iter().filter(|(j, w)| *j >= 0 && *w > 0.0).map(|e| e.1).collect();
            if real.is_empty() {
                unweighted.push(v);
            }
            if real.len() > MAX_INFLUENCES {
                over.push(v);
            }
            tiny += real.iter().filter(|&&w| w < MIN_WEIGHT).count();
        }
        if !over.is_empty() {
            push(
                Level::Error,
                "TooManyInfluences",
                wat.clone(),
                format!(
                    "{} vertex(es) have more than {MAX_INFLUENCES} influences (vertex {}); the importer keeps the {MAX_INFLUENCES} largest and renormalizes: limit them (skelport convert does)",
                    over.len(),
                    list(&over)
                ),
            );
        }
        if !unweighted.is_empty() {
            push(
                Level::Error,
                "UnweightedVertex",
                wat.clone(),
                format!(
                    "{} vertex(es) have no weights (vertex {}); the importer binds them to joint 0 (\"{}\") silently",
                    unweighted.len(),
                    list(&unweighted),
                    c.joints.first().map(String::as_str).unwrap_or("?")
                ),
            );
        }
        if tiny > 0 {
            push(
                Level::Warning,
                "SmallWeight",
                wat.clone(),
                format!("{tiny} weight(s) below {MIN_WEIGHT}: the upload clamps them up to {MIN_WEIGHT}"),
            );
        }
        for (k, m) in c.inverse_binds.iter().enumerate() {
            if !m.is_finite() {
                push(
                    Level::Error,
                    "NaNBindMatrix",
                    jat.clone(),
                    format!(
                        "the inverse bind matrix of joint {k} (\"{}\") is not finite",
                        c.joints.get(k).map(String::as_str).unwrap_or("?")
                    ),
                );
            }
        }
    }
    // Scene joints: the importer finds a skin joint's node by name, and with <skeleton> elements by sid.
    let mut scene: BTreeMap<&str, &collada::Node> = BTreeMap::new();
    for n in &dae.nodes {
        if let Some(l) = n.label() {
            if sl.resolve(l).is_some() {
                scene.entry(l).or_insert(n);
            }
        }
    }
    let uses_skeleton = dae.nodes.iter().any(|n| n.controllers.iter().any(|c| !c.skeletons.is_empty()));
    for (name, n) in &scene {
        if uses_skeleton && n.sid.as_deref() != Some(name) {
            push(
                Level::Warning,
                "JointSid",
                format!("{file}:{}: node \"{name}\"", n.pos),
                format!("with <skeleton> elements the importer finds joints by sid; this node's sid is {:?}, not \"{name}\"", n.sid),
            );
        }
    }
    for c in &dae.controllers {
        for n in &c.joints {
            if sl.resolve(n).is_some() && !scene.contains_key(n.as_str()) {
                push(
                    Level::Warning,
                    "MissingJointNode",
                    format!("{file}: controller \"{}\", joint \"{n}\"", c.id),
                    "no scene node for this skin joint: with joint positions it would be placed at (0, 0, 0)".into(),
                );
            }
        }
    }
    out.sort_by_key(|v| v.level != Level::Error);
    out
}
