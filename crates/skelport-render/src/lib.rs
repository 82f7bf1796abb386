//! # skelport-render — draw skeletons as SVG and PNG
//!
//! [`render_svg`] draws every skeleton of a [`Document`] in orthographic views of skelport's
//! report frame (glTF's: +Y up, +Z forward, right-handed, metres), and [`svg_to_png`] rasterizes
//! that SVG with resvg/tiny-skia (pure Rust, no system libraries, an embedded DejaVu Sans font so
//! text renders the same on every machine).
//!
//! ## Views (see [`project`])
//! * **front** — looking along −Z (the camera stands in front of the character, which faces +Z):
//!   screen right = +X, screen up = +Y. The character's left (+X) is on the viewer's right, as
//!   when facing a person.
//! * **side** — looking along −X (from the character's left side, like Blender's *Right* view):
//!   screen right = −Z, screen up = +Y, so the character faces the viewer's left.
//! * **top** — looking along −Y (from above): screen right = +X, screen up = −Z, so the
//!   character faces the bottom of the picture.
//! * **all** — the three side by side at one common scale.
//!
//! Output is deterministic: no hash-map order reaches the output and every number is written
//! with at most 2 decimals, so golden files can be compared byte for byte.

#![forbid(unsafe_code)]

use skelport_ir::proc::report_skeletons;
use skelport_ir::{DQuat, DVec3, Document, Frame};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::sync::{Arc, OnceLock};

/// Which orthographic view(s) to draw.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum View {
    /// Looking along −Z: +X right, +Y up.
    #[default]
    Front,
    /// Looking along −X: −Z right, +Y up.
    Side,
    /// Looking along −Y: +X right, −Z up.
    Top,
    /// Front, side and top side by side.
    All,
}

impl View {
    /// Parse `front`, `side`, `top` or `all` (as the CLI spells them).
    pub fn parse(s: &str) -> Option<View> {
        match s.to_ascii_lowercase().as_str() {
            "front" => Some(View::Front),
            "side" => Some(View::Side),
            "top" => Some(View::Top),
            "all" => Some(View::All),
            _ => None,
        }
    }

    /// The single views this view is made of, left to right.
    fn panels(self) -> &'static [View] {
        match self {
            View::Front => &[View::Front],
            View::Side => &[View::Side],
            View::Top => &[View::Top],
            View::All => &[View::Front, View::Side, View::Top],
        }
    }

    fn title(self) -> &'static str {
        match self {
            View::Front | View::All => "front (looking −Z)",
            View::Side => "side (looking −X)",
            View::Top => "top (looking −Y)",
        }
    }

    /// Labels of the screen's right and up axes, for the axis gizmo.
    fn axes(self) -> (&'static str, &'static str) {
        match self {
            View::Front | View::All => ("+X", "+Y"),
            View::Side => ("−Z", "+Y"),
            View::Top => ("+X", "−Z"),
        }
    }

    fn name(self) -> &'static str {
        match self {
            View::Front | View::All => "front",
            View::Side => "side",
            View::Top => "top",
        }
    }
}

/// Project a report-frame point (metres) onto a view's picture plane: `[right, up]` in metres.
/// `View::All` projects like `View::Front` (its first panel).
pub fn project(view: View, p: [f64; 3]) -> [f64; 2] {
    match view {
        View::Front | View::All => [p[0], p[1]],
        View::Side => [-p[2], p[1]],
        View::Top => [p[0], -p[2]],
    }
}

/// A second skeleton drawn over the first, matched by bone name (the caller applies any
/// retarget map to it beforehand).
#[derive(Debug, Clone)]
pub struct Overlay {
    pub doc: Document,
    /// Usually the file name.
    pub caption: String,
}

/// What and how to draw.
#[derive(Debug, Clone)]
pub struct RenderOptions {
    pub view: View,
    /// Length of the picture's longest side in pixels ([`MIN_SIZE`]..=[`MAX_SIZE`]).
    pub size: u32,
    /// Name the main bones (only for skeletons of at most [`LABEL_LIMIT`] bones).
    pub labels: bool,
    /// Draw the meshes as a light silhouette behind the bones.
    pub mesh: bool,
    /// Shown under the picture with the bone count; usually the file name.
    pub caption: String,
    pub overlay: Option<Overlay>,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions { view: View::Front, size: 800, labels: false, mesh: true, caption: String::new(), overlay: None }
    }
}

/// Smallest accepted `size`.
pub const MIN_SIZE: u32 = 128;
/// Largest accepted `size` (a 16k × 16k RGBA pixmap is 1 GiB).
pub const MAX_SIZE: u32 = 16384;
/// Skeletons with more bones get no labels even when asked.
pub const LABEL_LIMIT: usize = 200;
/// Skeletons with more bones are drawn as plain lines (one path per colour), without joint
/// dots or per-bone hover titles, to keep the SVG small.
pub const DETAIL_LIMIT: usize = 300;
/// How many of the worst-matching bones an overlay names.
pub const WORST_SHOWN: usize = 5;

/// Why a picture could not be made.
#[derive(Debug, thiserror::Error)]
pub enum RenderError {
    #[error("size {size} px is out of range: give a size between {MIN_SIZE} and {MAX_SIZE} pixels")]
    BadSize { size: u32 },
    #[error("the SVG could not be read for rasterizing: {0} (only SVG made by render_svg is expected here)")]
    Svg(String),
    #[error("could not make the PNG: {0}")]
    Png(String),
}

/// Which side of the body a bone belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Side {
    /// The character's left (+X in the report frame).
    Left,
    Right,
    Centre,
}

impl Side {
    fn colour(self) -> &'static str {
        match self {
            Side::Left => "#1f6fd1",
            Side::Right => "#d1402a",
            Side::Centre => "#2e8b57",
        }
    }
}

/// The side a bone name says, if any: whole tokens `L`/`R`, `left`/`right`, `lf`/`rt`,
/// `lft`/`rgt` (any case) between separators (`.`, `_`, `-`, space, `:` …), or camel-case words
/// `Left`/`Right` (`mCollarLeft`, `LeftUpLeg`). `None` when it says neither or both.
pub fn side_from_name(name: &str) -> Option<Side> {
    let (mut left, mut right) = (false, false);
    for token in name.split(|c: char| !c.is_alphanumeric()).filter(|t| !t.is_empty()) {
        match token.to_ascii_lowercase().as_str() {
            "l" | "left" | "lf" | "lft" => left = true,
            "r" | "right" | "rt" | "rgt" => right = true,
            _ => {
                for w in camel_words(token) {
                    match w {
                        "Left" | "LEFT" => left = true,
                        "Right" | "RIGHT" => right = true,
                        _ => {}
                    }
                }
            }
        }
    }
    match (left, right) {
        (true, false) => Some(Side::Left),
        (false, true) => Some(Side::Right),
        _ => None,
    }
}

/// Split at lower→upper and digit→upper transitions: `mCollarLeft` → `m`, `Collar`, `Left`.
fn camel_words(token: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let mut prev: Option<char> = None;
    for (i, c) in token.char_indices() {
        if let Some(p) = prev {
            if c.is_uppercase() && (p.is_lowercase() || p.is_ascii_digit()) {
                out.push(&token[start..i]);
                start = i;
            }
        }
        prev = Some(c);
    }
    out.push(&token[start..]);
    out
}

/// Whether a bone is one of the "main" bones worth a label in a big rig (trunk and limbs, not
/// fingers, face or helper bones).
fn is_main_bone(name: &str) -> bool {
    const MAIN: &[&str] = &[
        "root", "hip", "pelvis", "spine", "chest", "torso", "neck", "head", "clavicle", "shoulder", "collar", "arm", "elbow", "hand",
        "wrist", "thigh", "leg", "knee", "shin", "calf", "foot", "ankle",
    ];
    const NOT: &[&str] = &[
        "finger",
        "thumb",
        "index",
        "middle",
        "ring",
        "pinky",
        "little",
        "twist",
        "eye",
        "lid",
        "jaw",
        "lip",
        "brow",
        "cheek",
        "tongue",
        "teeth",
        "nose",
        "ear",
        "face",
        "ik",
        "pole",
        "target",
        "ctrl",
        "metacarpal",
        "toe",
        "wing",
        "tail",
        "hind",
        "groin",
        "hair",
        "nub",
        "end",
    ];
    let n = name.to_ascii_lowercase();
    MAIN.iter().any(|k| n.contains(k)) && !NOT.iter().any(|k| n.contains(k))
}

/// One bone ready to draw, in the report frame.
struct DrawBone {
    name: String,
    head: DVec3,
    tail: DVec3,
    rotation: DQuat,
    side: Side,
    descendants: usize,
    /// The parent's index in the same list.
    parent: Option<usize>,
}

/// All bones of all skeletons of a document, in the report frame, with their sides.
fn collect_bones(doc: &Document) -> Vec<DrawBone> {
    let mut out = Vec::new();
    for (rs, sk) in report_skeletons(doc).into_iter().zip(&doc.skeletons) {
        let desc = sk.descendant_counts();
        let first = out.len();
        for (i, b) in rs.bones.into_iter().enumerate() {
            let r = b.rotation;
            out.push(DrawBone {
                side: side_from_name(&b.name).unwrap_or(Side::Centre),
                name: b.name,
                head: DVec3::from_array(b.head),
                tail: DVec3::from_array(b.tail),
                rotation: DQuat::from_xyzw(r[0], r[1], r[2], r[3]),
                descendants: desc.get(i).copied().unwrap_or(0),
                parent: sk.bones.get(i).and_then(|src| src.parent).map(|p| first + p.index()),
            });
        }
        cap_inferred_lengths(&mut out[first..], sk);
        // Bones whose name says nothing: by position relative to the skeleton's centre line,
        // with a dead band of 1 % of its largest extent. The centre line is the mean head of the
        // roots whose names say no side (a body's root or pelvis), else midway between the mean
        // heads of the bones named left and right, else the middle of the heads' X range: a
        // prop in one hand or more helper bones on one side must not move it.
        let bones = &mut out[first..];
        let heads = bones.iter().map(|b| b.head).filter(|h| h.is_finite());
        let (lo, hi) = heads.fold((DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY)), |(lo, hi), h| (lo.min(h), hi.max(h)));
        let mean_x = |side: Side| {
            let xs: Vec<f64> = bones.iter().filter(|b| b.side == side && b.head.x.is_finite()).map(|b| b.head.x).collect();
            (!xs.is_empty()).then(|| xs.iter().sum::<f64>() / xs.len() as f64)
        };
        let roots: Vec<f64> = sk
            .bones
            .iter()
            .zip(bones.iter())
            .filter(|(src, b)| src.parent.is_none() && side_from_name(&src.name).is_none() && b.head.x.is_finite())
            .map(|(_, b)| b.head.x)
            .collect();
        let root_centre = (!roots.is_empty()).then(|| roots.iter().sum::<f64>() / roots.len() as f64);
        let named_centre = match (mean_x(Side::Left), mean_x(Side::Right)) {
            (Some(l), Some(r)) => Some((l + r) / 2.0),
            _ => None,
        };
        if lo.x.is_finite() {
            let centre = root_centre.or(named_centre).unwrap_or((lo.x + hi.x) / 2.0);
            let band = ((hi - lo).max_element() * 0.01).max(1e-6);
            for (b, named) in bones.iter_mut().zip(sk.bones.iter().map(|b| side_from_name(&b.name).is_some())) {
                if !named && b.head.is_finite() {
                    b.side = if b.head.x > centre + band {
                        Side::Left
                    } else if b.head.x < centre - band {
                        Side::Right
                    } else {
                        Side::Centre
                    };
                }
            }
        }
    }
    out
}

/// Bones without a stored length get a tail inferred from their children or parent
/// (`proc::tails`): a root at the origin reaches its pelvis a metre up, and its octahedron
/// dominates the side and top views. For drawing only, an inferred length is capped at the
/// median length of the skeleton's bones (stored and inferred); the direction is kept.
fn cap_inferred_lengths(bones: &mut [DrawBone], sk: &skelport_ir::Skeleton) {
    let mut lengths: Vec<f64> = bones.iter().map(|b| b.head.distance(b.tail)).filter(|l| l.is_finite() && *l > 0.0).collect();
    if lengths.is_empty() {
        return;
    }
    lengths.sort_by(f64::total_cmp);
    let median = lengths[lengths.len() / 2];
    for (b, src) in bones.iter_mut().zip(&sk.bones) {
        let len = b.head.distance(b.tail);
        if src.length.is_none() && len > median {
            b.tail = b.head + (b.tail - b.head) * (median / len);
        }
    }
}

/// Mesh positions in the report frame and triangles as index triples. A skinned mesh is drawn
/// where its skin puts it at the rest pose (`Σ w · rest · IBM · v`), which is not its stored
/// positions when the rest pose differs from the bind pose or joints carry a parent transform.
fn collect_meshes(doc: &Document) -> Vec<(Vec<DVec3>, Vec<u32>)> {
    let mut d = Document { meshes: doc.meshes.clone(), ..Document::new(doc.frame) };
    d.convert_frame(Frame::REPORT);
    // Every skin at rest, computed once (each call would otherwise copy the document).
    let rest = if doc.skins.is_empty() { Vec::new() } else { skelport_ir::pose::deform_all(doc, &skelport_ir::pose::Pose::new()) };
    d.meshes
        .into_iter()
        .enumerate()
        .map(|(mi, m)| {
            let tris = m.faces.triangulate();
            let skinned = doc
                .skins
                .iter()
                .position(|s| s.mesh.map(skelport_ir::MeshId::index) == Some(mi))
                .and_then(|k| rest.get(k).cloned())
                .filter(|p| p.len() == m.positions.len());
            (skinned.unwrap_or(m.positions), tris)
        })
        .collect()
}

/// One panel of the picture: a view and where its picture-plane box lands in pixels.
struct Panel {
    view: View,
    umin: f64,
    vmax: f64,
    /// Left/top pixel of the panel's drawing box.
    x0: f64,
    y0: f64,
    w: f64,
    h: f64,
    /// Pixels per metre.
    s: f64,
    /// Offsets that centre the content inside the box.
    dx: f64,
    dy: f64,
}

impl Panel {
    fn px(&self, p: DVec3) -> (f64, f64) {
        let [u, v] = project(self.view, p.to_array());
        (self.x0 + self.dx + (u - self.umin) * self.s, self.y0 + self.dy + (self.vmax - v) * self.s)
    }
}

/// Write a number with at most 2 decimals and no trailing zeros (`-0` becomes `0`).
fn num(out: &mut String, v: f64) {
    let v = if v.is_finite() { v } else { 0.0 };
    let c = (v * 100.0).round() as i64;
    if c < 0 {
        out.push('-');
    }
    let a = c.unsigned_abs();
    let _ = write!(out, "{}", a / 100);
    let f = a % 100;
    if f != 0 {
        if f % 10 == 0 {
            let _ = write!(out, ".{}", f / 10);
        } else {
            let _ = write!(out, ".{f:02}");
        }
    }
}

fn n(v: f64) -> String {
    let mut s = String::new();
    num(&mut s, v);
    s
}

/// Escape text for SVG (XML): line breaks and tabs become spaces (a caption is one line), the
/// characters XML 1.0 cannot hold U+FFFD, the rest escaped by the workspace's one XML escaping.
fn esc(s: &str) -> String {
    let flat: String = s.chars().map(|c| if matches!(c, '\t' | '\n' | '\r') { ' ' } else { c }).collect();
    skelport_ir::xml::escape_attr(&skelport_ir::xml::replace_unholdable(&flat)).into_owned()
}

/// Shorten long captions so they fit a line.
fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// A human length: mm below 1 cm, cm below 1 m, else m.
fn length_text(m: f64) -> String {
    if m < 0.01 {
        format!("{} mm", n(m * 1000.0))
    } else if m < 1.0 {
        format!("{} cm", n(m * 100.0))
    } else {
        format!("{} m", n(m))
    }
}

/// Builds one SVG path of line segments, joining chains and dropping sub-pixel steps so that
/// 65,535-bone chains stay small.
struct Polyline {
    d: String,
    pen: (f64, f64),
    last: Option<(f64, f64)>,
    pending: bool,
}

/// Steps shorter than this (px) are merged into the next one.
const STEP_PX: f64 = 0.5;

impl Polyline {
    fn new() -> Self {
        Polyline { d: String::new(), pen: (0.0, 0.0), last: None, pending: false }
    }
    fn flush(&mut self) {
        if self.pending {
            if let Some(l) = self.last {
                self.to('L', l);
            }
            self.pending = false;
        }
    }
    fn to(&mut self, c: char, p: (f64, f64)) {
        self.d.push(c);
        num(&mut self.d, p.0);
        self.d.push(' ');
        num(&mut self.d, p.1);
        self.pen = p;
    }
    fn segment(&mut self, h: (f64, f64), t: (f64, f64)) {
        let cont = self.last.is_some_and(|l| dist(l, h) < 1e-6 || dist(self.pen, h) < STEP_PX);
        if !cont {
            self.flush();
            self.to('M', h);
        }
        self.last = Some(t);
        if dist(self.pen, t) >= STEP_PX {
            self.to('L', t);
            self.pending = false;
        } else {
            self.pending = true;
        }
    }
    fn finish(mut self) -> String {
        self.flush();
        self.d
    }
}

fn dist(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// Convex hull (Andrew's monotone chain) of a few points, counter-clockwise.
fn hull(mut pts: Vec<(f64, f64)>) -> Vec<(f64, f64)> {
    pts.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.total_cmp(&b.1)));
    pts.dedup();
    if pts.len() < 3 {
        return pts;
    }
    let cross = |o: (f64, f64), a: (f64, f64), b: (f64, f64)| (a.0 - o.0) * (b.1 - o.1) - (a.1 - o.1) * (b.0 - o.0);
    let mut lower: Vec<(f64, f64)> = Vec::new();
    for &p in &pts {
        while lower.len() >= 2 && cross(lower[lower.len() - 2], lower[lower.len() - 1], p) <= 0.0 {
            lower.pop();
        }
        lower.push(p);
    }
    let mut upper: Vec<(f64, f64)> = Vec::new();
    for &p in pts.iter().rev() {
        while upper.len() >= 2 && cross(upper[upper.len() - 2], upper[upper.len() - 1], p) <= 0.0 {
            upper.pop();
        }
        upper.push(p);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    lower
}

/// The six corners of Blender's octahedral bone: head, tail and a square of half-width
/// 0.1 × length at 0.1 × length from the head, oriented by the bone's local X/Z.
fn octahedron(b: &DrawBone) -> Option<[DVec3; 6]> {
    let d = b.tail - b.head;
    let len = d.length();
    if !(len > 1e-9 && len.is_finite()) {
        return None;
    }
    let dir = d / len;
    let mut a = b.rotation * DVec3::X;
    a -= dir * a.dot(dir);
    if a.length() < 1e-6 {
        let pick = if dir.x.abs() < 0.9 { DVec3::X } else { DVec3::Y };
        a = pick - dir * pick.dot(dir);
    }
    let a = a.normalize() * 0.1 * len;
    let c = dir.cross(a);
    let m = b.head + d * 0.1;
    Some([b.head, m + a, m + c, b.tail, m - a, m - c])
}

/// Colour ramp green → yellow → red for `t` in 0..=1.
fn heat(t: f64) -> String {
    let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 1.0 };
    let (a, b, u) = if t < 0.5 {
        ((44.0, 160.0, 44.0), (240.0, 190.0, 0.0), t * 2.0)
    } else {
        ((240.0, 190.0, 0.0), (214.0, 39.0, 40.0), t * 2.0 - 1.0)
    };
    let c = |x: f64, y: f64| (x + (y - x) * u).round() as u8;
    format!("#{:02x}{:02x}{:02x}", c(a.0, b.0), c(a.1, b.1), c(a.2, b.2))
}

const OVERLAY_COLOUR: &str = "#8e44ad";
const UNMATCHED_COLOUR: &str = "#9a9a9a";
/// The links that show the hierarchy where a bone and its parent do not meet.
const LINK_COLOUR: &str = "#b4b4b4";
const MESH_COLOUR: &str = "#dfe3ea";

/// The overlay's matching: per base bone the matched overlay bone's head distance (metres).
struct Matching {
    dist: Vec<Option<f64>>,
    dmax: f64,
    matched: usize,
    worst: Vec<(f64, String)>,
    mean: f64,
}

fn match_overlay(base: &[DrawBone], other: &[DrawBone]) -> Matching {
    let mut by_name: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, b) in other.iter().enumerate() {
        by_name.entry(b.name.as_str()).or_insert(i);
    }
    let dist: Vec<Option<f64>> = base.iter().map(|b| by_name.get(b.name.as_str()).map(|&j| b.head.distance(other[j].head))).collect();
    let found: Vec<(f64, &str)> = dist.iter().zip(base).filter_map(|(d, b)| d.map(|d| (d, b.name.as_str()))).collect();
    let worst_d = found.iter().map(|x| x.0).filter(|d| d.is_finite()).fold(0.0f64, f64::max);
    let mean = if found.is_empty() { 0.0 } else { found.iter().map(|x| x.0).sum::<f64>() / found.len() as f64 };
    let mut sorted = found.clone();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(b.1)));
    let worst = sorted.into_iter().filter(|x| x.0 > 0.0).take(WORST_SHOWN).map(|(d, s)| (d, s.to_string())).collect();
    // A centimetre at least, so sub-millimetre noise does not look red.
    Matching { dist, dmax: worst_d.max(0.01), matched: found.len(), worst, mean }
}

/// Draw the document as an SVG picture (see the crate docs for the views).
pub fn render_svg(doc: &Document, opts: &RenderOptions) -> Result<String, RenderError> {
    if !(MIN_SIZE..=MAX_SIZE).contains(&opts.size) {
        return Err(RenderError::BadSize { size: opts.size });
    }
    let size = opts.size as f64;
    let bones = collect_bones(doc);
    let meshes = if opts.mesh { collect_meshes(doc) } else { Vec::new() };
    let other = opts.overlay.as_ref().map(|o| collect_bones(&o.doc));
    let matching = other.as_ref().map(|o| match_overlay(&bones, o));
    let count = bones.len();
    let detailed = count <= DETAIL_LIMIT;

    // Sizes that scale with the picture.
    let pad = (size * 0.03).round().max(8.0);
    let font = (size / 55.0).clamp(9.0, 16.0).round();
    let line = (font * 1.5).round();
    let title_h = line;
    let footer_lines = 2 + matching.as_ref().map_or(0, |m| 2 + m.worst.len());
    let footer_h = line * footer_lines as f64;
    let skeletons = doc.skeletons.len();
    let mut cap = format!("{} — {} bone{}", clip(&opts.caption, 80), count, if count == 1 { "" } else { "s" });
    if skeletons > 1 {
        let _ = write!(cap, " in {skeletons} skeletons");
    }
    let verts: usize = meshes.iter().map(|m| m.0.len()).sum();
    if verts > 0 {
        let _ = write!(cap, ", mesh {verts} vertices");
    }

    // 3-D bounds of everything drawn (non-finite points are skipped).
    let mut lo = DVec3::splat(f64::INFINITY);
    let mut hi = DVec3::splat(f64::NEG_INFINITY);
    let mut grow = |p: DVec3| {
        if p.is_finite() {
            lo = lo.min(p);
            hi = hi.max(p);
        }
    };
    for b in bones.iter().chain(other.iter().flatten()) {
        grow(b.head);
        grow(b.tail);
    }
    for (pos, _) in &meshes {
        pos.iter().for_each(|&p| grow(p));
    }
    if !lo.x.is_finite() {
        lo = DVec3::splat(-0.5);
        hi = DVec3::splat(0.5);
    }
    // Never a zero-size box: at least 5 % of the largest extent, and 10 cm.
    let min_ext = ((hi - lo).max_element() * 0.05).max(0.1);
    let centre = (lo + hi) / 2.0;
    let ext = (hi - lo).max(DVec3::splat(min_ext));
    let (lo, hi) = (centre - ext / 2.0, centre + ext / 2.0);

    let views = opts.view.panels();
    let boxes: Vec<(f64, f64, f64, f64)> = views
        .iter()
        .map(|&v| {
            let corners = [lo, hi, DVec3::new(lo.x, lo.y, hi.z), DVec3::new(hi.x, hi.y, lo.z)].map(|c| project(v, c.to_array()));
            let umin = corners.iter().map(|c| c[0]).fold(f64::INFINITY, f64::min);
            let umax = corners.iter().map(|c| c[0]).fold(f64::NEG_INFINITY, f64::max);
            let vmin = corners.iter().map(|c| c[1]).fold(f64::INFINITY, f64::min);
            let vmax = corners.iter().map(|c| c[1]).fold(f64::NEG_INFINITY, f64::max);
            (umin, umax, vmin, vmax)
        })
        .collect();
    let sum_w: f64 = boxes.iter().map(|b| b.1 - b.0).sum();
    let max_h = boxes.iter().map(|b| b.3 - b.2).fold(0.0, f64::max);
    let k = views.len() as f64;
    let fixed_w = 2.0 * pad + (k - 1.0) * pad;
    let fixed_h = 2.0 * pad + title_h + footer_h;
    // Each panel is at least as wide as its title; solve the scale with that widening (it only
    // grows as the scale shrinks, so a few rounds settle it).
    let mut min_w: Vec<f64> = views.iter().map(|v| font * 0.62 * v.title().chars().count() as f64).collect();
    // In tiny pictures the titles may not fit: give them at most 70 % of the width.
    let room = 0.7 * (size - fixed_w);
    let total: f64 = min_w.iter().sum();
    if total > room {
        min_w.iter_mut().for_each(|m| *m *= room / total);
    }
    let widen = |s: f64| -> f64 { boxes.iter().zip(&min_w).map(|(b, m)| (m - (b.1 - b.0) * s).max(0.0)).sum() };
    let mut s = ((size - fixed_w) / sum_w).min((size - fixed_h) / max_h);
    for _ in 0..4 {
        s = s.min((size - fixed_w - widen(s)) / sum_w);
    }
    if !(s.is_finite() && s > 0.0) {
        return Err(RenderError::BadSize { size: opts.size });
    }
    // Wide enough for the footer's text (caption, legend, overlay lines; estimated like the
    // titles), and never narrower than half the size.
    let content_w = sum_w * s + widen(s);
    let width = (fixed_w + content_w)
        .max(size * 0.5)
        .max(footer_width(&cap, opts, matching.as_ref(), other.as_ref().map_or(0, Vec::len), count, font, pad))
        .min(size)
        .ceil();
    let height = (fixed_h + max_h * s).min(size).ceil();
    let extra_w = (width - fixed_w - content_w).max(0.0) / k;
    let mut panels = Vec::new();
    let mut x = pad;
    for ((&v, b), m) in views.iter().zip(&boxes).zip(&min_w) {
        let bw = (b.1 - b.0) * s;
        let w = bw.max(*m) + extra_w;
        let h = max_h * s;
        panels.push(Panel {
            view: v,
            umin: b.0,
            vmax: b.3,
            x0: x,
            y0: pad + title_h,
            w,
            h,
            s,
            dx: (w - bw) / 2.0,
            dy: (h - (b.3 - b.2) * s) / 2.0,
        });
        x += w + pad;
    }

    // Stroke widths: thinner for big skeletons.
    let k_px = size / 800.0;
    let sw = k_px
        * if count <= DETAIL_LIMIT {
            1.2
        } else if count <= 2000 {
            1.5
        } else if count <= 10000 {
            1.0
        } else {
            0.6
        };

    let mut o = String::with_capacity(4096 + count * if detailed { 400 } else { 40 });
    let (wt, ht) = (n(width), n(height));
    let _ = writeln!(
        o,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{wt}" height="{ht}" viewBox="0 0 {wt} {ht}" font-family="DejaVu Sans, sans-serif" font-size="{}">"#,
        n(font)
    );
    let _ = writeln!(o, r##"<rect width="{wt}" height="{ht}" fill="#ffffff"/>"##);

    for p in &panels {
        let _ = writeln!(o, r#"<g data-view="{}">"#, p.view.name());
        let _ = writeln!(o, r##"<text x="{}" y="{}" fill="#444">{}</text>"##, n(p.x0), n(pad + font), p.view.title());
        let _ =
            writeln!(o, r##"<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#e2e2e2"/>"##, n(p.x0), n(p.y0), n(p.w), n(p.h));
        // Axis gizmo in the bottom-left corner: which report axes point right and up.
        let (ax, ay) = p.view.axes();
        let (gx, gy, gl) = (p.x0 + font * 0.6, p.y0 + p.h - font * 0.6, font * 2.0);
        let _ = writeln!(
            o,
            r##"<path d="M{x} {y}h{l}m-{a} -{a}l{a} {a}l-{a} {a}M{x} {y}v-{l}m-{a} {a}l{a} -{a}l{a} {a}" fill="none" stroke="#888"/><text x="{tx}" y="{ty}" font-size="{f}" fill="#888">{ax}</text><text x="{ux}" y="{uy}" font-size="{f}" fill="#888">{ay}</text>"##,
            x = n(gx),
            y = n(gy),
            l = n(gl),
            a = n(font * 0.25),
            tx = n(gx + gl + font * 0.2),
            ty = n(gy + font * 0.3),
            ux = n(gx + font * 0.3),
            uy = n(gy - gl + font * 0.2),
            f = n(font * 0.75),
        );
        // Ground (Y = 0) in the views where up is +Y, when it is inside the box.
        if p.view != View::Top && lo.y <= 0.0 && hi.y >= 0.0 {
            let (_, gy) = p.px(DVec3::ZERO);
            let _ = writeln!(o, r##"<path d="M{} {}h{}" stroke="#c8c8c8" stroke-dasharray="4 3"/>"##, n(p.x0), n(gy), n(p.w));
        }
        if !meshes.is_empty() {
            draw_mesh(&mut o, p, &meshes, size);
        }
        draw_bones(&mut o, p, &bones, matching.as_ref(), sw, detailed);
        if let Some(other) = &other {
            draw_overlay(&mut o, p, other, sw);
        }
        if opts.labels && count <= LABEL_LIMIT {
            draw_labels(&mut o, p, &bones, font * 0.8, count);
        }
        o.push_str("</g>\n");
    }

    // Footer: caption, then scale bar and legend, then (overlay) the worst bones.
    let mut y = height - pad - footer_h + line * 0.75;
    let _ = writeln!(o, r##"<text x="{}" y="{}" fill="#222">{}</text>"##, n(pad), n(y), esc(&cap));
    y += line;
    // Scale bar: the largest 1/2/5 × 10ⁿ metres that fits a quarter of the width.
    let target = width * 0.25 / s;
    let mut bar = 10f64.powf(target.log10().floor());
    for m in [5.0, 2.0] {
        if bar * m <= target {
            bar *= m;
            break;
        }
    }
    let bar_px = bar * s;
    let _ = writeln!(
        o,
        r##"<path d="M{x} {y0}v{t}h{w}v-{t}" fill="none" stroke="#222" stroke-width="{sw}"/><text x="{tx}" y="{y}" fill="#222">{label}</text>"##,
        x = n(pad),
        y0 = n(y - font * 0.6),
        t = n(font * 0.5),
        w = n(bar_px),
        sw = n(k_px.max(1.0)),
        tx = n(pad + bar_px + font * 0.5),
        y = n(y),
        label = length_text(bar)
    );
    let mut lx = pad + bar_px + font * 6.0;
    match (&matching, &opts.overlay) {
        (Some(m), Some(ov)) => {
            // Heat legend: ten steps from 0 to dmax.
            let step = font * 1.2;
            let _ = write!(o, r##"<text x="{}" y="{}" fill="#222">0</text>"##, n(lx), n(y));
            lx += font;
            for i in 0..10 {
                let _ = write!(
                    o,
                    r#"<rect x="{}" y="{}" width="{}" height="{}" fill="{}"/>"#,
                    n(lx + i as f64 * step),
                    n(y - font * 0.8),
                    n(step),
                    n(font * 0.8),
                    heat((i as f64 + 0.5) / 10.0)
                );
            }
            lx += step * 10.0 + font * 0.4;
            let _ = writeln!(o, r##"<text x="{}" y="{}" fill="#222">≥ {} head distance</text>"##, n(lx), n(y), length_text(m.dmax));
            y += line;
            let other_count = other.as_ref().map_or(0, Vec::len);
            let [what, matched] = overlay_lines(&ov.caption, other_count, m, count);
            let _ = writeln!(o, r##"<text x="{}" y="{}" fill="{OVERLAY_COLOUR}">{}</text>"##, n(pad), n(y), esc(&what));
            y += line;
            let _ = write!(o, r##"<text x="{}" y="{}" fill="{OVERLAY_COLOUR}">{}</text>"##, n(pad), n(y), esc(&matched));
            // What the other marks are, after the matching line (the heat legend's line has no
            // room left in a narrow picture): grey bones have no match, violet diamonds are the
            // overlay's joints.
            let mut kx = pad + font * (1.0 + 0.62 * matched.chars().count() as f64);
            let _ = write!(o, r#"<circle cx="{}" cy="{}" r="{}" fill="{UNMATCHED_COLOUR}"/>"#, n(kx), n(y - font * 0.35), n(font * 0.35));
            let _ = write!(o, r##"<text x="{}" y="{}" fill="#222">no match</text>"##, n(kx + font * 0.6), n(y));
            kx += font * (1.2 + 0.62 * 8.0);
            let r = font * 0.35;
            let _ = write!(
                o,
                r#"<path d="M{} {}l{r} -{r}l{r} {r}l-{r} {r}z" fill="none" stroke="{OVERLAY_COLOUR}"/>"#,
                n(kx - r),
                n(y - r),
                r = n(r)
            );
            let _ = writeln!(o, r##"<text x="{}" y="{}" fill="#222">overlay joint</text>"##, n(kx + font * 0.6), n(y));
            y += line;
            y -= line;
            for (d, name) in &m.worst {
                y += line;
                let _ = writeln!(
                    o,
                    r##"<text x="{}" y="{}" fill="{}">{}  {}</text>"##,
                    n(pad + font),
                    n(y),
                    heat(d / m.dmax),
                    length_text(*d),
                    esc(&clip(name, 60))
                );
            }
        }
        _ => {
            for (side, label) in [(Side::Left, "left (+X)"), (Side::Right, "right"), (Side::Centre, "centre")] {
                let _ =
                    write!(o, r#"<circle cx="{}" cy="{}" r="{}" fill="{}"/>"#, n(lx), n(y - font * 0.35), n(font * 0.35), side.colour());
                let _ = write!(o, r##"<text x="{}" y="{}" fill="#222">{label}</text>"##, n(lx + font * 0.6), n(y));
                lx += font * (1.2 + 0.62 * label.chars().count() as f64);
            }
            o.push('\n');
        }
    }
    o.push_str("</svg>\n");
    Ok(o)
}

/// The overlay's two caption lines: what was drawn, then how it matched.
fn overlay_lines(caption: &str, other_count: usize, m: &Matching, count: usize) -> [String; 2] {
    [
        format!("overlay (violet): {} — {} bones", clip(caption, 60), other_count),
        format!("matched by name {} of {}; mean {}", m.matched, count, length_text(m.mean)),
    ]
}

/// The width the footer's text needs, estimated at 0.62 em a character (as the titles are).
/// The scale bar takes at most a quarter of the width, so the legend line needs 4/3 of the rest.
fn footer_width(caption: &str, opts: &RenderOptions, m: Option<&Matching>, other_count: usize, count: usize, font: f64, pad: f64) -> f64 {
    let chars = |t: &str| font * 0.62 * t.chars().count() as f64;
    let mut widest = chars(caption);
    let legend_text = match (m, &opts.overlay) {
        (Some(m), Some(ov)) => {
            let [what, matched] = overlay_lines(&ov.caption, other_count, m, count);
            // The matching line ends with the "no match" and "overlay joint" marks.
            widest = widest.max(chars(&what)).max(chars(&matched) + font * 3.4 + chars("no matchoverlay joint"));
            for (d, name) in &m.worst {
                widest = widest.max(font + chars(&format!("{}  {}", length_text(*d), clip(name, 60))));
            }
            // "0", ten heat steps, "≥ d head distance".
            font * 13.4 + chars(&format!("≥ {} head distance", length_text(m.dmax)))
        }
        _ => font * 3.6 + chars("left (+X)rightcentre"),
    };
    let legend = (font * 6.0 + legend_text + chars("50 cm")) * 4.0 / 3.0;
    widest.max(legend) + 2.0 * pad
}

/// The meshes as a silhouette: triangles and vertices rasterized into a coarse grid whose
/// occupied runs become one path (far smaller than one shape per triangle).
fn draw_mesh(o: &mut String, p: &Panel, meshes: &[(Vec<DVec3>, Vec<u32>)], size: f64) {
    let cell = (size / 450.0).max(1.0);
    let gw = (p.w / cell).ceil().max(1.0) as usize;
    let gh = (p.h / cell).ceil().max(1.0) as usize;
    let mut grid = vec![false; gw * gh];
    let to_cell = |q: (f64, f64)| ((q.0 - p.x0) / cell, (q.1 - p.y0) / cell);
    let mark = |cx: f64, cy: f64, grid: &mut Vec<bool>| {
        if cx >= 0.0 && cy >= 0.0 && (cx as usize) < gw && (cy as usize) < gh {
            grid[cy as usize * gw + cx as usize] = true;
        }
    };
    for (pos, tris) in meshes {
        let pts: Vec<Option<(f64, f64)>> = pos.iter().map(|&q| q.is_finite().then(|| to_cell(p.px(q)))).collect();
        for q in pts.iter().flatten() {
            mark(q.0, q.1, &mut grid);
        }
        for t in tris.chunks_exact(3) {
            let get = |i: u32| pts.get(i as usize).copied().flatten();
            let (Some(a), Some(b), Some(c)) = (get(t[0]), get(t[1]), get(t[2])) else { continue };
            let area = (b.0 - a.0) * (c.1 - a.1) - (b.1 - a.1) * (c.0 - a.0);
            if area.abs() < 1e-12 {
                continue;
            }
            let x0 = a.0.min(b.0).min(c.0).floor().max(0.0) as usize;
            let x1 = (a.0.max(b.0).max(c.0).ceil().max(0.0) as usize).min(gw);
            let y0 = a.1.min(b.1).min(c.1).floor().max(0.0) as usize;
            let y1 = (a.1.max(b.1).max(c.1).ceil().max(0.0) as usize).min(gh);
            for gy in y0..y1 {
                for gx in x0..x1 {
                    let q = (gx as f64 + 0.5, gy as f64 + 0.5);
                    let e = |u: (f64, f64), v: (f64, f64)| ((v.0 - u.0) * (q.1 - u.1) - (v.1 - u.1) * (q.0 - u.0)) * area.signum();
                    if e(a, b) >= 0.0 && e(b, c) >= 0.0 && e(c, a) >= 0.0 {
                        grid[gy * gw + gx] = true;
                    }
                }
            }
        }
    }
    let mut d = String::new();
    for gy in 0..gh {
        let mut gx = 0;
        while gx < gw {
            if grid[gy * gw + gx] {
                let start = gx;
                while gx < gw && grid[gy * gw + gx] {
                    gx += 1;
                }
                d.push('M');
                num(&mut d, p.x0 + start as f64 * cell);
                d.push(' ');
                num(&mut d, p.y0 + gy as f64 * cell);
                d.push('h');
                num(&mut d, (gx - start) as f64 * cell);
                d.push('v');
                num(&mut d, cell);
                d.push('h');
                num(&mut d, -((gx - start) as f64 * cell));
                d.push('z');
            }
            gx += 1;
        }
    }
    if !d.is_empty() {
        let _ = writeln!(o, r#"<path d="{d}" fill="{MESH_COLOUR}"/>"#);
    }
}

fn bone_colour(i: usize, b: &DrawBone, m: Option<&Matching>) -> String {
    match m {
        Some(m) => match m.dist.get(i).copied().flatten() {
            Some(d) => heat(d / m.dmax),
            None => UNMATCHED_COLOUR.to_string(),
        },
        None => b.side.colour().to_string(),
    }
}

/// Thin grey links from each bone's head to its parent's tail where they do not meet (joints
/// drawn with an inferred, capped length: a Second Life `.dae`'s), so the hierarchy shows
/// instead of disconnected stubs. One path for all.
fn draw_links(o: &mut String, p: &Panel, bones: &[DrawBone], sw: f64) {
    let mut pl = Polyline::new();
    for b in bones {
        let Some(parent) = b.parent.and_then(|i| bones.get(i)) else { continue };
        if !(b.head.is_finite() && parent.tail.is_finite()) {
            continue;
        }
        let (h, t) = (p.px(b.head), p.px(parent.tail));
        // Only a gap a reader can see (half a stroke or more).
        if dist(h, t) >= sw * 0.5 {
            pl.segment(t, h);
        }
    }
    let d = pl.finish();
    if !d.is_empty() {
        let _ = writeln!(o, r#"<path d="{d}" fill="none" stroke="{LINK_COLOUR}" stroke-width="{}" stroke-linecap="round"/>"#, n(sw * 0.6));
    }
}

fn draw_bones(o: &mut String, p: &Panel, bones: &[DrawBone], m: Option<&Matching>, sw: f64, detailed: bool) {
    draw_links(o, p, bones, sw);
    if detailed {
        let r = (sw * 2.2).max(1.5);
        // Draw far bones first so near ones cover them (depth = distance along the view).
        let mut order: Vec<usize> = (0..bones.len()).collect();
        let depth = |b: &DrawBone| match p.view {
            View::Front | View::All => b.head.z,
            View::Side => b.head.x,
            View::Top => b.head.y,
        };
        order.sort_by(|&a, &b| depth(&bones[a]).total_cmp(&depth(&bones[b])).then(a.cmp(&b)));
        for i in order {
            let b = &bones[i];
            if !b.head.is_finite() || !b.tail.is_finite() {
                continue;
            }
            let col = bone_colour(i, b, m);
            let _ = write!(o, "<g><title>{}</title>", esc(&b.name));
            if let Some(corners) = octahedron(b) {
                let h = hull(corners.iter().map(|&c| p.px(c)).collect());
                if h.len() >= 2 {
                    o.push_str("<path d=\"");
                    for (k, q) in h.iter().enumerate() {
                        o.push(if k == 0 { 'M' } else { 'L' });
                        num(o, q.0);
                        o.push(' ');
                        num(o, q.1);
                    }
                    let _ = write!(
                        o,
                        "Z\" fill=\"{col}\" fill-opacity=\"0.3\" stroke=\"{col}\" stroke-width=\"{}\" stroke-linejoin=\"round\"/>",
                        n(sw)
                    );
                }
            }
            let (hx, hy) = p.px(b.head);
            let _ = writeln!(o, r#"<circle cx="{}" cy="{}" r="{}" fill="{col}"/></g>"#, n(hx), n(hy), n(r));
        }
    } else {
        // One path per colour; BTreeMap keeps the output order fixed.
        let mut paths: BTreeMap<String, Polyline> = BTreeMap::new();
        for (i, b) in bones.iter().enumerate() {
            if !b.head.is_finite() || !b.tail.is_finite() {
                continue;
            }
            let col = match m {
                // Quantize the heat so the number of paths stays small.
                Some(mm) => match mm.dist.get(i).copied().flatten() {
                    Some(d) => heat(((d / mm.dmax) * 10.0).round() / 10.0),
                    None => UNMATCHED_COLOUR.to_string(),
                },
                None => b.side.colour().to_string(),
            };
            paths.entry(col).or_insert_with(Polyline::new).segment(p.px(b.head), p.px(b.tail));
        }
        for (col, pl) in paths {
            let _ = writeln!(
                o,
                r#"<path d="{}" fill="none" stroke="{col}" stroke-width="{}" stroke-linecap="round" stroke-linejoin="round"/>"#,
                pl.finish(),
                n(sw)
            );
        }
    }
}

fn draw_overlay(o: &mut String, p: &Panel, other: &[DrawBone], sw: f64) {
    let mut pl = Polyline::new();
    for b in other.iter().filter(|b| b.head.is_finite() && b.tail.is_finite()) {
        pl.segment(p.px(b.head), p.px(b.tail));
    }
    let _ = writeln!(
        o,
        r#"<path d="{}" fill="none" stroke="{OVERLAY_COLOUR}" stroke-width="{}" stroke-opacity="0.8" stroke-linecap="round"/>"#,
        pl.finish(),
        n(sw)
    );
    if other.len() <= DETAIL_LIMIT {
        let r = (sw * 2.5).max(2.0);
        let mut d = String::new();
        for b in other.iter().filter(|b| b.head.is_finite()) {
            // A small hollow diamond at each overlay joint (one path for all).
            let (x, y) = p.px(b.head);
            d.push('M');
            num(&mut d, x - r);
            d.push(' ');
            num(&mut d, y);
            let _ = write!(d, "l{r} -{r}l{r} {r}l-{r} {r}z", r = n(r));
        }
        let _ = writeln!(o, r#"<path d="{d}" fill="none" stroke="{OVERLAY_COLOUR}" stroke-width="{}"/>"#, n(sw * 0.8));
    }
}

fn draw_labels(o: &mut String, p: &Panel, bones: &[DrawBone], font: f64, count: usize) {
    let mut cand: Vec<usize> = (0..bones.len()).filter(|&i| count <= 40 || is_main_bone(&bones[i].name)).collect();
    // Bigger sub-trees first: they are the main bones; ties by order.
    cand.sort_by(|&a, &b| bones[b].descendants.cmp(&bones[a].descendants).then(a.cmp(&b)));
    let mut placed: Vec<(f64, f64, f64, f64)> = Vec::new();
    let _ = writeln!(o, r##"<g font-size="{}" fill="#111">"##, n(font));
    let mut out: Vec<(usize, String)> = Vec::new();
    for i in cand {
        let b = &bones[i];
        if !b.head.is_finite() || !b.tail.is_finite() {
            continue;
        }
        let (hx, hy) = p.px(b.head);
        let (tx, ty) = p.px(b.tail);
        let (mx, my) = ((hx + tx) / 2.0, (hy + ty) / 2.0);
        let name = clip(&b.name, 32);
        let w = font * 0.6 * name.chars().count() as f64;
        // Right-side bones are on the viewer's left in front/top views: label them leftwards.
        let mut leftwards = b.side == Side::Right && p.view != View::Side;
        // Flip a label that would leave the panel.
        if !leftwards && mx + font * 0.4 + w > p.x0 + p.w + 2.0 {
            leftwards = true;
        } else if leftwards && mx - font * 0.4 - w < p.x0 - 2.0 {
            leftwards = false;
        }
        let x = if leftwards { mx - font * 0.4 } else { mx + font * 0.4 };
        let rect = if leftwards { (x - w, my - font * 0.5, x, my + font * 0.5) } else { (x, my - font * 0.5, x + w, my + font * 0.5) };
        if rect.0 < p.x0 - 2.0 || rect.2 > p.x0 + p.w + 2.0 {
            continue;
        }
        if placed.iter().any(|r| r.0 < rect.2 && rect.0 < r.2 && r.1 < rect.3 && rect.1 < r.3) {
            continue;
        }
        placed.push(rect);
        let anchor = if leftwards { r#" text-anchor="end""# } else { "" };
        out.push((i, format!(r#"<text x="{}" y="{}"{anchor}>{}</text>"#, n(x), n(my + font * 0.35), esc(&name))));
    }
    // Output in bone order so the SVG reads naturally.
    out.sort_by_key(|x| x.0);
    for (_, t) in out {
        o.push_str(&t);
        o.push('\n');
    }
    o.push_str("</g>\n");
}

/// The font database for rasterizing: DejaVu Sans, embedded, never the system's fonts (so a PNG
/// is the same on every machine).
fn fontdb() -> Arc<resvg::usvg::fontdb::Database> {
    static DB: OnceLock<Arc<resvg::usvg::fontdb::Database>> = OnceLock::new();
    DB.get_or_init(|| {
        let mut db = resvg::usvg::fontdb::Database::new();
        db.load_font_data(dejavu::sans::regular().to_vec());
        db.set_sans_serif_family("DejaVu Sans");
        Arc::new(db)
    })
    .clone()
}

/// Rasterize an SVG made by [`render_svg`] to PNG bytes at its own pixel size.
pub fn svg_to_png(svg: &str) -> Result<Vec<u8>, RenderError> {
    let opt = resvg::usvg::Options { font_family: "DejaVu Sans".to_string(), fontdb: fontdb(), ..Default::default() };
    let tree = resvg::usvg::Tree::from_str(svg, &opt).map_err(|e| RenderError::Svg(e.to_string()))?;
    let sz = tree.size().to_int_size();
    if sz.width() > MAX_SIZE || sz.height() > MAX_SIZE {
        return Err(RenderError::Png(format!("{}×{} px is larger than {MAX_SIZE} px", sz.width(), sz.height())));
    }
    let mut pixmap = resvg::tiny_skia::Pixmap::new(sz.width(), sz.height())
        .ok_or_else(|| RenderError::Png(format!("cannot allocate a {}×{} picture", sz.width(), sz.height())))?;
    pixmap.fill(resvg::tiny_skia::Color::WHITE);
    resvg::render(&tree, resvg::tiny_skia::Transform::identity(), &mut pixmap.as_mut());
    pixmap.encode_png().map_err(|e| RenderError::Png(e.to_string()))
}

pub mod sample;
pub use sample::{golden_fixtures, sample_biped, sample_biped_moved};
