//! `validate --target sl`: a `.dae` judged as the Second Life viewer's Collada importer will
//! take it (secondlife/viewer `indra/llprimitive/lldaeloader.cpp`, `llmodelloader.cpp`,
//! `llmodel.cpp`, `indra/llmath/llvolume.cpp`, `indra/newview/llmodelpreview.cpp`; each rule
//! below names the function it comes from, and docs/formats/sl.md lists them). Errors are what
//! the importer refuses or drops (the file, a model, or the skin weights); warnings what it
//! accepts but changes. Each finding names the rule, the place in the file and the joint or
//! vertex at fault.

use crate::collada::{self, Dae, UpAxis};
use crate::importer;
use crate::skeleton::{SlJoint, SlSkeleton, MAX_INFLUENCES, MAX_JOINTS_PER_SKIN, MIN_WEIGHT};
use serde::Serialize;
use skelport_ir::{DMat4, DQuat, DVec3};
use std::collections::{HashMap, VecDeque};

/// How bad a finding is for an upload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The importer refuses the file, drops a model, or cannot upload the skin weights.
    Error,
    /// Accepted, but not as the author meant (rebound, clamped, split, moved ...).
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
    // A .zae is checked as the .dae it holds (the viewer's importer takes .dae files only).
    let unpacked = match crate::zae::unpack_if_zipped(bytes, file) {
        Ok(u) => u,
        Err(e) => return vec![Violation { level: Level::Error, rule: "LoadError", location: file.into(), message: e.to_string() }],
    };
    let (bytes, file) = match &unpacked {
        Some((name, dae)) => (dae.as_slice(), name.as_str()),
        None => (bytes, file),
    };
    let parsed = crate::read::decode(bytes, file).and_then(|t| collada::parse(&t, file));
    match parsed {
        Ok(dae) => validate(&dae, file, sl),
        Err(e) => vec![Violation { level: Level::Error, rule: "LoadError", location: file.into(), message: e.to_string() }],
    }
}

/// The rotation of a matrix without its scale, as `LLSkinningUtil::getUnscaledQuaternion` takes it.
fn unscaled_rotation(m: &DMat4) -> DQuat {
    let c = |v: skelport_ir::DVec4| {
        let v = v.truncate();
        if v.length() > 0.0 {
            v / v.length()
        } else {
            v
        }
    };
    DQuat::from_mat3(&skelport_ir::DMat3::from_cols(c(m.x_axis), c(m.y_axis), c(m.z_axis))).normalize()
}

/// The joint name the importer stores a joint's scene translation under: its joint map's value
/// (`LLModelPreview::getJointAliases`): a bone's own name, a collision volume's name, an
/// attachment point's name as avatar_lad.xml spells it (with spaces).
fn importer_key(sl: &SlSkeleton, j: SlJoint) -> String {
    match j {
        SlJoint::Attachment(i) => sl.attachment_points[i].name.to_string(),
        _ => sl.name(j),
    }
}

/// Breadth-first sid search from `from` over nodes and their transform elements, the node
/// itself first (collada-dom's `daeSIDResolver`, which the importer calls with `./sid`): the
/// node, or the node's transform, that carries `sid` first in that order.
enum Found {
    Node(usize),
    Transform(usize, usize),
}

fn find_sid(dae: &Dae, children: &[Vec<usize>], from: usize, sid: &str) -> Option<Found> {
    let mut queue: VecDeque<Found> = VecDeque::from([Found::Node(from)]);
    while let Some(f) = queue.pop_front() {
        match f {
            Found::Node(n) => {
                if dae.nodes[n].sid.as_deref() == Some(sid) {
                    return Some(Found::Node(n));
                }
                queue.extend((0..dae.nodes[n].transforms.len()).map(|t| Found::Transform(n, t)));
                queue.extend(children[n].iter().map(|&c| Found::Node(c)));
            }
            Found::Transform(n, t) => {
                if dae.nodes[n].transforms[t].sid.as_deref() == Some(sid) {
                    return Some(Found::Transform(n, t));
                }
            }
        }
    }
    None
}

/// The translation the importer reads from joint node `n`: the element with sid `translate`,
/// else sid `location` (each only if it is a `<translate>`), else the first child
/// `<translate>`, else the `<matrix>` with sid `matrix_sid` (`transform` under a `<skeleton>`,
/// `matrix` without one), with the node that element belongs to (a sid lookup searches the
/// node's descendants too); `None` when there is none (the importer then takes (0, 0, 0)).
fn importer_translation(dae: &Dae, children: &[Vec<usize>], n: usize, matrix_sid: &str) -> Option<(DVec3, usize)> {
    let by_sid = |sid: &str, kind: &str| match find_sid(dae, children, n, sid) {
        Some(Found::Transform(m, t)) if dae.nodes[m].transforms[t].kind == kind => dae.nodes[m].transforms[t].translation.map(|v| (v, m)),
        _ => None,
    };
    by_sid("translate", "translate")
        .or_else(|| by_sid("location", "translate"))
        .or_else(|| dae.nodes[n].transforms.iter().find(|t| t.kind == "translate").and_then(|t| t.translation).map(|v| (v, n)))
        .or_else(|| by_sid(matrix_sid, "matrix"))
}

/// A joint node the importer finds, and the translation it reads for it with the node that
/// carries it (`None`: no translation, (0, 0, 0)).
type SceneJoint = (usize, Option<(DVec3, usize)>);

/// Where the importer finds each joint's scene translation (`LLDAELoader::processDomModel`):
/// with `<skeleton>` elements, every legal name is looked up by sid below each skeleton root
/// (later roots and names win); without, every scene node whose `name` is a legal name
/// (`LLDAELoader::processJointNode`), stored under that name as written. The map is keyed as the
/// importer keys it; `None` means found without a translation.
fn scene_joints(dae: &Dae, sl: &SlSkeleton) -> (bool, HashMap<String, SceneJoint>) {
    let mut children = vec![Vec::new(); dae.nodes.len()];
    for (i, n) in dae.nodes.iter().enumerate() {
        if let Some(p) = n.parent {
            children[p].push(i);
        }
    }
    let by_id: HashMap<&str, usize> = dae.nodes.iter().enumerate().filter_map(|(i, n)| n.id.as_deref().map(|id| (id, i))).collect();
    let roots: Vec<usize> =
        dae.nodes.iter().flat_map(|n| &n.controllers).flat_map(|c| &c.skeletons).filter_map(|s| by_id.get(s.as_str()).copied()).collect();
    let mut out = HashMap::new();
    if roots.is_empty() {
        for (i, n) in dae.nodes.iter().enumerate() {
            if let Some(name) = n.name.as_deref().filter(|l| sl.resolve(l).is_some()) {
                out.insert(name.to_string(), (i, importer_translation(dae, &children, i, "matrix")));
            }
        }
        return (false, out);
    }
    let mut names = sl.legal_names();
    // The importer walks its joint map in key order.
    names.sort_unstable();
    for &r in &roots {
        for name in &names {
            if let Some(Found::Node(n)) = find_sid(dae, &children, r, name) {
                let j = sl.resolve(name).expect("a legal name");
                out.insert(importer_key(sl, j), (n, importer_translation(dae, &children, n, "transform")));
            }
        }
    }
    (true, out)
}

/// Check a parsed Collada document against the SL importer's rules.
pub fn validate(dae: &Dae, file: &str, sl: &SlSkeleton) -> Vec<Violation> {
    let mut out = Vec::new();
    let mut push = |level, rule, location: String, message: String| out.push(Violation { level, rule, location, message });
    // LLDAELoader::OpenFile: "ParsingErrorNoScene".
    if !dae.has_visual_scene {
        push(Level::Error, "NoVisualScene", file.into(), "the file has no <visual_scene>; the importer refuses it".into());
    }
    let meshes = dae.geometries.len().max(1);
    for g in &dae.geometries {
        let at = format!("{file}:{}: geometry \"{}\"", g.pos, g.id);
        // load_face_from_dom_*: "ParsingErrorPositionInvalidModel".
        if g.positions.is_empty() {
            push(Level::Error, "NoPositions", at.clone(), "the geometry has no positions".into());
        }
        // load_face_from_dom_polylist: "PositionNaN", "NormalsNaN".
        let bad: Vec<usize> = (0..g.positions.len()).filter(|&i| !g.positions[i].is_finite()).collect();
        if !bad.is_empty() {
            push(Level::Error, "NaNPosition", at.clone(), format!("{} position(s) are NaN or infinite (vertex {})", bad.len(), list(&bad)));
        }
        let bad: Vec<usize> = (0..g.normals.len()).filter(|&i| !g.normals[i].is_finite()).collect();
        if !bad.is_empty() {
            push(Level::Error, "NaNNormal", at.clone(), format!("{} normal(s) are NaN or infinite (normal {})", bad.len(), list(&bad)));
        }
        for p in &g.primitives {
            // Polylist `count` is not read by the importer (load_face_from_dom_polylist walks vcount).
            if let Some((declared, found)) = p.count_mismatch {
                push(
                    Level::Warning,
                    "PolygonCount",
                    format!("{file}:{}: geometry \"{}\"", p.pos, g.id),
                    format!("count=\"{declared}\" but {found} polygons: the importer uses the polygons (it does not check count)"),
                );
            }
            // get_dom_sources / load_face_from_dom_*: texture coordinates are read as pairs,
            // tc[2i] and tc[2i + 1], whatever the accessor says.
            for u in p.uvs.iter().filter(|u| !u.on_vertices) {
                let t = &g.texcoords[u.source];
                if t.stride > 2 {
                    push(
                        Level::Warning,
                        "TexCoordStride",
                        format!("{file}:{}: geometry \"{}\"", p.pos, g.id),
                        format!("TEXCOORD source \"{}\" has stride {}: the importer reads (s, t) pairs packed two by two, so its texture coordinates come out scrambled; write stride 2", t.id, t.stride),
                    );
                }
            }
        }
        // The importer's faces (lldaeloader.cpp load_face_from_dom_*, loadModelsFromDomMesh).
        let f = importer::faces(g);
        if let Some(&(p, poly, corner)) = f.inside_polygon.first() {
            push(
                Level::Error,
                "PolygonSplit",
                format!("{file}:{}: geometry \"{}\"", g.primitives[p].pos, g.id),
                format!(
                    "the importer closes a face after 65,532 indices inside polygon {poly} (after its corner {corner}) and builds the rest of that polygon from the closed face's vertices: the model is dropped or drawn wrong ({} such place(s)); write <triangles>, or <polylist>s of at most 21,844 triangles each (skelport convert does)",
                    f.inside_polygon.len()
                ),
            );
        }
        for &p in &f.vertex_overflow {
            push(
                Level::Error,
                "VertexOverflow",
                format!("{file}:{}: geometry \"{}\"", g.primitives[p].pos, g.id),
                "a face of this primitive reaches 65,535 vertices (VERTEX_NUMBER_OVERFLOW): the importer drops the model; split the primitive".into(),
            );
        }
        for &p in &f.index_wrap {
            push(
                Level::Error,
                "IndexWrap",
                format!("{file}:{}: geometry \"{}\"", g.primitives[p].pos, g.id),
                "a <polygons> element is one face, never split, and this one has 65,535 distinct vertices or more: its 16-bit indices wrap and the mesh is drawn wrong; write <polylist> or <triangles>".into(),
            );
        }
        for &p in &f.no_triangle {
            push(
                Level::Error,
                "NoTriangles",
                format!("{file}:{}: geometry \"{}\"", g.primitives[p].pos, g.id),
                "this primitive makes a face without a triangle (only polygons of fewer than 3 corners): the importer drops the whole model (validate_model)".into(),
            );
        }
        let limit = (importer::MODEL_LIMIT / meshes + 1) * importer::FACES_PER_MODEL;
        if f.faces > limit {
            push(
                Level::Error,
                "FacesDropped",
                at.clone(),
                format!("{} faces: with {meshes} mesh(es) the importer keeps {limit} per mesh and drops the rest", f.faces),
            );
        } else if f.faces > importer::FACES_PER_MODEL {
            push(
                Level::Warning,
                "ModelSplit",
                at.clone(),
                format!(
                    "{} faces: the importer puts {} in a model and makes {} models of this mesh",
                    f.faces,
                    importer::FACES_PER_MODEL,
                    f.models()
                ),
            );
        }
    }
    let skinned = !dae.controllers.is_empty();
    // Rigged data (bind shape, inverse binds, joint positions) is taken as Z-up metres: <up_axis>
    // and <unit> go into the instance transform only (LLDAELoader::OpenFile mTransform,
    // processDomModel).
    if skinned && dae.up_axis.unwrap_or(UpAxis::Y) != UpAxis::Z {
        push(
            Level::Warning,
            "UpAxis",
            file.into(),
            "not Z_UP: the importer applies <up_axis> only to unrigged placement, so bind shape, inverse bind matrices and joint positions must already be Z-up".into(),
        );
    }
    if skinned && dae.meter.is_some_and(|m| m != 1.0) {
        push(
            Level::Warning,
            "Unit",
            file.into(),
            format!(
                "<unit meter=\"{}\">: the importer ignores it for rigged data (bind shape, inverse binds, joint positions are taken as metres)",
                dae.meter.unwrap_or(1.0)
            ),
        );
    }
    let (with_skeleton, scene) = scene_joints(dae, sl);
    for c in &dae.controllers {
        let at = format!("{file}:{}: controller \"{}\"", c.pos, c.id);
        // LLDAELoader::verifyController: the skin's source must resolve; the position count,
        // the <vertex_weights> count and the number of <vcount> entries must agree; <v> must
        // hold sum(vcount) × inputs numbers. Any failure: "ParsingErrorBadElement".
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
        // processDomModel reads <v> as (joint, weight) pairs whatever the inputs' offsets say.
        if c.weight_inputs != [Some(0), Some(1)] || c.weight_input_count != 2 {
            push(
                Level::Warning,
                "VertexWeightsOffsets",
                wat.clone(),
                format!(
                    "{} input(s), JOINT at offset {}, WEIGHT at offset {}: the importer reads <v> as joint, weight pairs in that order, ignoring the offsets; write JOINT at 0 and WEIGHT at 1 and no other input",
                    c.weight_input_count,
                    c.weight_inputs[0].map_or("none".into(), |o| o.to_string()),
                    c.weight_inputs[1].map_or("none".into(), |o| o.to_string())
                ),
            );
        }
        let jat = format!("{file}:{}: controller \"{}\" joints", c.joints_pos, c.id);
        // LLModelLoader::determineRigLegacyFlags: "UnrecognizedJoint", then "TooManyJoint"
        // (LLSkinningUtil::getMaxJointCount, 110): the skin weights are not uploaded.
        for n in &c.joints {
            if sl.resolve(n).is_none() {
                push(
                    Level::Error,
                    "UnrecognizedJoint",
                    format!("{jat}, joint \"{n}\""),
                    // The joint is in the location: one message for every such joint, so that
                    // `validate` prints them as one line with their count.
                    "not an SL joint name (bones, aliases, collision volumes, attachment points; case-sensitive; not mRoot or mScreen): the skin weights cannot be uploaded; rename it to one (a retarget map to SL does)".to_string(),
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
        // LLModelPreview::rebuildUploadData: "non-identity bind shape rot" (0.01).
        let q = unscaled_rotation(&c.bind_shape);
        if c.bind_shape.is_finite() && !(q.abs_diff_eq(DQuat::IDENTITY, 0.01) || q.abs_diff_eq(-DQuat::IDENTITY, 0.01)) {
            let (axis, angle) = q.to_axis_angle();
            let (axis, angle) = if angle > std::f64::consts::PI { (-axis, std::f64::consts::TAU - angle) } else { (axis, angle) };
            push(
                Level::Warning,
                "BindShapeRotation",
                format!("{file}:{}: controller \"{}\" <bind_shape_matrix>", c.pos, c.id),
                format!(
                    "the bind shape matrix turns the mesh by {:.1}° about ({:.3}, {:.3}, {:.3}); the importer warns of a bind shape not in the standard X-forward orientation",
                    angle.to_degrees(),
                    axis.x,
                    axis.y,
                    axis.z
                ),
            );
        }
        // processDomModel: influences sorted, the 4 largest positive kept and renormalized; an
        // entry left empty binds to the skin's joint 0 once uploaded (llvolume.cpp
        // LLVolume::unpackVolumeFacesInternal gives it weight 0.999 on joint 0), which decodes every weight into
        // [0.001, 0.999].
        let mut over = Vec::new();
        let mut unweighted = Vec::new();
        let mut tiny = 0usize;
        let mut kept = Vec::with_capacity(c.weight_count);
        for (v, l) in c.influences().enumerate() {
            let real: Vec<f64> = l.iter().filter(|(j, w)| *j >= 0 && *w > 0.0).map(|e| e.1).collect();
            if real.is_empty() {
                unweighted.push(v);
            }
            if real.len() > MAX_INFLUENCES {
                over.push(v);
            }
            let k = importer::kept_influences(l);
            tiny += k.iter().filter(|e| e.1 < MIN_WEIGHT).count();
            kept.push(k);
        }
        if !over.is_empty() {
            push(
                Level::Warning,
                "TooManyInfluences",
                wat.clone(),
                format!(
                    "{} vertex(es) have more than {MAX_INFLUENCES} influences (vertex {}); the importer keeps the {MAX_INFLUENCES} largest and renormalizes",
                    over.len(),
                    list(&over)
                ),
            );
        }
        if !unweighted.is_empty() {
            push(
                Level::Warning,
                "UnweightedVertex",
                wat.clone(),
                format!(
                    "{} vertex(es) have no weights (vertex {}); once uploaded they are bound to joint 0 (\"{}\")",
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
                format!("{tiny} kept weight(s) below {MIN_WEIGHT}: the viewer raises them to {MIN_WEIGHT} when it decodes the upload"),
            );
        }
        // LLModel::getJointInfluences: weights are keyed by position.
        if c.weight_count == g.positions.len() {
            let lost = importer::shared_position_losses(&g.positions, &kept);
            if !lost.is_empty() {
                push(
                    Level::Warning,
                    "SharedPosition",
                    wat.clone(),
                    format!(
                        "{} vertex(es) share a position (within 1e-5 of the mesh's size) with a vertex weighted otherwise (vertex {}); the importer keys weights by position and gives them that vertex's weights",
                        lost.len(),
                        list(&lost)
                    ),
                );
            }
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
    // processDomModel: with "Include joint positions" each skin joint's position is the scene
    // translation found for it, (0, 0, 0) when none is. Once per joint, not per skin.
    let mut missing: Vec<String> = Vec::new();
    let mut at_origin: Vec<usize> = Vec::new();
    let mut elsewhere: Vec<(usize, usize)> = Vec::new();
    for c in &dae.controllers {
        for n in &c.joints {
            let Some(j) = sl.resolve(n) else { continue };
            match scene.get(&importer_key(sl, j)) {
                None if !missing.contains(n) => missing.push(n.clone()),
                Some((node, None)) if !at_origin.contains(node) => at_origin.push(*node),
                Some((node, Some((_, from)))) if from != node && !elsewhere.contains(&(*node, *from)) => elsewhere.push((*node, *from)),
                _ => {}
            }
        }
    }
    if !missing.is_empty() {
        let how = if with_skeleton {
            "a node with the joint's name (or another name of it) as sid below a <skeleton> root"
        } else {
            "a scene node whose name attribute is the joint's own name (without <skeleton> the importer finds joints by name only, aliases not rewritten)"
        };
        let shown: Vec<&str> = missing.iter().take(SHOW).map(String::as_str).collect();
        push(
            Level::Warning,
            "JointNotFound",
            file.into(),
            format!(
                "{} skin joint(s) have no scene node the importer finds ({}{}); it looks for {how}: uploaded with \"Include joint positions\" each is put at (0, 0, 0) from its parent",
                missing.len(),
                shown.join(", "),
                if missing.len() > SHOW { ", …" } else { "" }
            ),
        );
    }
    for (node, from) in elsewhere {
        let (n, m) = (&dae.nodes[node], &dae.nodes[from]);
        push(
            Level::Warning,
            "JointTranslationElsewhere",
            format!("{file}:{}: node \"{}\"", n.pos, n.label().unwrap_or("?")),
            format!(
                "this joint node has no translation the importer reads, and its sid lookup goes on into the nodes below: it takes the translation of node \"{}\" ({}) instead; give the node its own <matrix sid=\"transform\"> or <translate sid=\"translate\">",
                m.label().unwrap_or("?"),
                m.pos
            ),
        );
    }
    for node in at_origin {
        let wants = if with_skeleton { "<matrix sid=\"transform\">" } else { "<matrix sid=\"matrix\">" };
        let n = &dae.nodes[node];
        push(
            Level::Warning,
            "JointAtOrigin",
            format!("{file}:{}: node \"{}\"", n.pos, n.label().unwrap_or("?")),
            format!("the importer reads no translation from this joint node (it takes sid \"translate\", sid \"location\", a <translate>, or {wants}): uploaded with \"Include joint positions\" the joint is put at (0, 0, 0) from its parent"),
        );
    }
    out.sort_by_key(|v| v.level != Level::Error);
    out
}

/// What `validate --target sl` found: errors as problems, warnings as lines.
#[derive(Debug, Clone, Default)]
pub struct TargetReport {
    pub problems: Vec<skelport_ir::validate::Problem>,
    pub warnings: Vec<String>,
}

/// `validate --target sl` for a document read from `file`: a `.dae` (the document's
/// `source_format`) is checked as it is on disk; anything else, or a `.dae` read from stdin, as
/// the `.dae` skelport would write of it (the writer's refusal is a problem, its losses
/// warnings). `sl_skeleton` is another avatar_skeleton.xml (`--sl-skeleton`).
pub fn validate_target(
    doc: &skelport_ir::Document,
    file: &std::path::Path,
    sl_skeleton: Option<&std::path::Path>,
) -> Result<TargetReport, crate::SlError> {
    use skelport_ir::validate::Problem;
    let owned;
    let sl = match sl_skeleton {
        Some(p) => {
            owned = SlSkeleton::from_file(p)?;
            &owned
        }
        None => SlSkeleton::builtin(),
    };
    let name = file.display().to_string();
    let mut report = TargetReport::default();
    let on_disk = doc.source_format.as_deref() == Some("dae") && file.as_os_str() != "-";
    let bytes = if on_disk {
        // Through the checked reader, as every input is: a regular file within the input limit
        // (the path may have been replaced by a FIFO or a device since it was read).
        skelport_ir::files::read_user_file(file, None)
            .map_err(|e| crate::SlError::invalid(&name, 0, 0, format!("cannot read it again to check it: {e}")))?
    } else {
        if doc.source_format.as_deref() == Some("dae") {
            report.warnings.push("read from stdin: checked as the .dae skelport would write of it".into());
        }
        // The writer relies on the IR's rules; the caller reports the broken ones.
        if !skelport_ir::validate::validate(doc).is_empty() {
            report.warnings.push("target sl not checked: its rules are checked on the .dae skelport would write, and writers take only a document that keeps the IR's rules".into());
            return Ok(report);
        }
        let opts = skelport_ir::WriteOptions {
            file_stem: file.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default(),
            sl_skeleton: sl_skeleton.map(std::path::Path::to_path_buf),
            ..Default::default()
        };
        let mut diag = skelport_ir::Diagnostics::default();
        match crate::write::write(doc, &opts, sl, &mut diag) {
            Err(e) => {
                report.problems.push(Problem { location: "target sl".into(), message: e.to_string() });
                return Ok(report);
            }
            Ok(text) => {
                report.warnings.extend(diag.of(skelport_ir::Severity::Loss).map(|d| format!("as .dae: {}", d.message)));
                text.into_bytes()
            }
        }
    };
    // Whether a skin's joints were refused as not SL joints (then `NotSlRig` would repeat it).
    let mut unrecognized = false;
    for v in validate_bytes(&bytes, &name, sl) {
        unrecognized |= v.level == Level::Error && v.rule == "UnrecognizedJoint";
        // The report names the file once; each problem's location is the place in it.
        let location = match v.location.strip_prefix(name.as_str()) {
            Some("") => "file".to_owned(),
            // A .zae's member follows its name after a '/': the place starts with the member.
            Some(rest) => rest.trim_start_matches([':', '/']).trim_start().to_owned(),
            None => v.location.clone(),
        };
        match v.level {
            Level::Error => report.problems.push(Problem { location, message: format!("[{}] {}", v.rule, v.message) }),
            // Named once: `f.dae:114:9: controller … [Rule] …`, or `f.dae: [Rule] …` when the
            // place is the file as a whole.
            Level::Warning if location == "file" => report.warnings.push(format!("{name}: [{}] {}", v.rule, v.message)),
            Level::Warning => report.warnings.push(format!("{} [{}] {}", v.location, v.rule, v.message)),
        }
    }
    // What the writer calls generic Collada (`dae-not-sl`) is no SL rig here either: joints that
    // are not SL joints with no skin the importer would refuse for them (the controller's
    // `UnrecognizedJoint` says it for a skin's joints).
    let not_sl = crate::write::not_sl_joints(doc, sl);
    if !not_sl.is_empty() && !unrecognized {
        let shown: Vec<&str> = not_sl.iter().copied().take(8).collect();
        report.problems.push(Problem {
            location: "file".into(),
            message: format!(
                "[NotSlRig] joint names are not SL joint names (e.g. {}): generic Collada, which the SL importer does not take as a rig; rename them to SL joints (a retarget map to SL does)",
                shown.join(", ")
            ),
        });
    }
    Ok(report)
}
