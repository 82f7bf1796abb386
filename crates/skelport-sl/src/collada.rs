//! A lenient, raw model of a rigged Collada 1.4.1 document: what the SL importer (and skelport's
//! reader and validator) look at, with the line and column of every element that can be wrong.
//!
//! Parsed into `crate::xml`'s element tree, built from quick-xml events (roxmltree judges
//! well-formedness whenever the fast path cannot, so DTDs, entity bombs and external entities are
//! refused). The Collada layer is hand-written because the one Rust Collada crate (dae-parser)
//! rejects real Linden Lab files, stores f32 where the IR is f64 and drops `sid`s
//! (docs/architecture.md has the figures); it keeps no more than skinning needs: geometry
//! positions, normals and polygons, skin controllers and the visual scene's node tree. Nothing
//! here applies SL rules; [`crate::read`] and [`crate::validate`] do.

use crate::error::SlError;
use crate::xml;
use foldhash::{HashMap, HashMapExt};
use skelport_ir::num::{self, ints_into, parse_i64, Int};
use skelport_ir::FaultKind;
use skelport_ir::{Budget, DMat4, DVec2, DVec3};

/// A place in the file (1-based line and column; 0 when unknown).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Pos {
    pub line: usize,
    pub column: usize,
}

impl std::fmt::Display for Pos {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// `<up_axis>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpAxis {
    X,
    Y,
    Z,
}

/// Which element a primitive was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum PrimitiveKind {
    #[default]
    Polylist,
    Triangles,
    Polygons,
}

/// A TEXCOORD input of a primitive: the set it names and each corner's index into a
/// [`Geometry::texcoords`] source.
#[derive(Debug, Clone, Default)]
pub struct UvInput {
    /// The input's `set` attribute.
    pub set: Option<u32>,
    /// The input is on `<vertices>` (indexed like the positions), not on the primitive.
    pub on_vertices: bool,
    /// Index into [`Geometry::texcoords`].
    pub source: usize,
    /// Index of every corner's texture coordinate in that source.
    pub index: Vec<u32>,
}

/// A TEXCOORD `<source>`: its (s, t) pairs and the accessor's stride as the file gives it (the
/// SL importer reads pairs whatever the stride).
#[derive(Debug, Clone, Default)]
pub struct TexCoords {
    pub id: String,
    pub values: Vec<DVec2>,
    pub stride: usize,
}

/// One polygon primitive (`<polylist>`, `<triangles>`, `<polygons>`) with its corners resolved.
#[derive(Debug, Clone, Default)]
pub struct Primitive {
    pub kind: PrimitiveKind,
    pub material: Option<String>,
    /// Corners per polygon.
    pub counts: Vec<u32>,
    /// Position index of every corner.
    pub vertex: Vec<u32>,
    /// Normal index of every corner (empty when the primitive has no NORMAL input).
    pub normal: Vec<u32>,
    /// The TEXCOORD inputs, in input order (a TEXCOORD on `<vertices>` first, indexed like the
    /// positions).
    pub uvs: Vec<UvInput>,
    /// The `count` attribute when it disagrees with the polygons found (Avastar writes such files).
    pub count_mismatch: Option<(usize, usize)>,
    pub pos: Pos,
}

/// A `<geometry>` with a `<mesh>`.
#[derive(Debug, Clone, Default)]
pub struct Geometry {
    pub id: String,
    pub name: String,
    pub positions: Vec<DVec3>,
    pub normals: Vec<DVec3>,
    /// Every TEXCOORD source the primitives (or `<vertices>`) use, each once.
    pub texcoords: Vec<TexCoords>,
    pub primitives: Vec<Primitive>,
    pub pos: Pos,
}

/// A `<controller>` holding a `<skin>`.
#[derive(Debug, Clone, Default)]
pub struct Controller {
    pub id: String,
    pub name: String,
    /// The `source` URL of `<skin>` without `#`.
    pub skin_source: String,
    pub bind_shape: DMat4,
    /// Joint names, as written (Name_array) or resolved from IDREF_array.
    pub joints: Vec<String>,
    pub inverse_binds: Vec<DMat4>,
    /// (joints, inverse bind matrices) when the counts differ.
    pub bind_count_mismatch: Option<(usize, usize)>,
    /// `<vertex_weights count>`.
    pub weight_count: usize,
    /// Number of `<vcount>` entries.
    pub vcount_len: usize,
    /// Every (joint index, weight) pair, -1 = the bind shape, vertex after vertex: vertex `v`'s
    /// are `influence_pairs[influence_offsets[v]..influence_offsets[v + 1]]` (one buffer, not
    /// one allocation per vertex).
    pub influence_pairs: Vec<(i64, f64)>,
    /// `vcount + 1` offsets into [`Controller::influence_pairs`].
    pub influence_offsets: Vec<u32>,
    /// `len(<v>)` and what vcount and the inputs require, when they differ.
    pub v_mismatch: Option<(usize, usize)>,
    /// The offsets of the JOINT and WEIGHT inputs of `<vertex_weights>`.
    pub weight_inputs: [Option<usize>; 2],
    /// How many inputs `<vertex_weights>` has.
    pub weight_input_count: usize,
    /// Location of `<vertex_weights>`.
    pub weights_pos: Pos,
    pub joints_pos: Pos,
    pub pos: Pos,
}

/// One instance of a controller in the scene.
#[derive(Debug, Clone, Default)]
pub struct ControllerInstance {
    pub url: String,
    /// `<skeleton>` targets without `#`.
    pub skeletons: Vec<String>,
}

/// A transform element of a node (`matrix`, `translate`, `rotate`, `scale`, `lookat`, `skew`), as
/// the SL importer's sid lookups see it.
#[derive(Debug, Clone, PartialEq)]
pub struct NodeTransform {
    /// The element's name.
    pub kind: &'static str,
    pub sid: Option<String>,
    /// The translation it carries: a `translate`'s vector, a `matrix`'s last column.
    pub translation: Option<DVec3>,
}

/// One scene node.
#[derive(Debug, Clone, Default)]
pub struct Node {
    pub id: Option<String>,
    pub name: Option<String>,
    pub sid: Option<String>,
    /// `type="JOINT"`.
    pub joint: bool,
    pub parent: Option<usize>,
    /// The node's transform elements composed in order.
    pub local: DMat4,
    /// The translation the SL importer takes (child sid `translate`, sid `location`, a
    /// `<translate>`, else the matrix's).
    pub importer_translation: Option<DVec3>,
    /// The transform elements, in document order.
    pub transforms: Vec<NodeTransform>,
    pub controllers: Vec<ControllerInstance>,
    pub geometries: Vec<String>,
    pub pos: Pos,
}

impl Node {
    /// `name`, else `id`, else `sid`.
    pub fn label(&self) -> Option<&str> {
        self.name.as_deref().or(self.id.as_deref()).or(self.sid.as_deref())
    }
}

/// The parts of a Collada document skelport uses.
#[derive(Debug, Clone, Default)]
pub struct Dae {
    pub up_axis: Option<UpAxis>,
    /// `<unit meter>`.
    pub meter: Option<f64>,
    pub geometries: Vec<Geometry>,
    pub controllers: Vec<Controller>,
    /// Nodes of the instanced visual scene, parents before children (document order).
    pub nodes: Vec<Node>,
    pub has_visual_scene: bool,
    /// Number of `<material>`s.
    pub materials: usize,
}

impl Controller {
    /// Each vertex-weights entry's (joint index, weight) pairs.
    pub fn influences(&self) -> impl ExactSizeIterator<Item = &[(i64, f64)]> + '_ {
        self.influence_offsets.windows(2).map(|w| &self.influence_pairs[w[0] as usize..w[1] as usize])
    }
}

impl Dae {
    pub fn geometry(&self, id: &str) -> Option<usize> {
        self.geometries.iter().position(|g| g.id == id)
    }
    pub fn controller(&self, id: &str) -> Option<usize> {
        self.controllers.iter().position(|c| c.id == id)
    }
}

/// Fail with the place of `node`.
struct Ctx<'a> {
    file: &'a str,
    /// Charged for every number list before it is parsed.
    budget: &'a Budget,
}

impl Ctx<'_> {
    fn pos(&self, n: xml::Node<'_, '_>) -> Pos {
        let (line, column) = n.line_column();
        Pos { line, column }
    }
    fn err(&self, n: xml::Node<'_, '_>, msg: impl Into<String>) -> SlError {
        let p = self.pos(n);
        SlError::invalid(self.file, p.line, p.column, msg)
    }
    /// Charge the budget for the values a list of `text` may hold (one a blank and a digit), at
    /// `T`'s size, before they are parsed.
    fn charge<T>(&self, n: xml::Node<'_, '_>, text: &str) -> Result<(), SlError> {
        let element = || {
            let (line, column) = n.line_column();
            format!("<{}> at {line}:{column}", n.name())
        };
        Ok(self.budget.charge_items_named::<T>(text.len() / 2 + 1, self.file, element)?)
    }
    fn floats(&self, n: xml::Node<'_, '_>) -> Result<Vec<f64>, SlError> {
        let text = n.text().unwrap_or("");
        self.charge::<f64>(n, text)?;
        // Sized by the array's `count` (which `check_count` holds it to) when the budget charged
        // for that many: growing by doubling copied a list up to three times (weights are words
        // of one to three bytes, far below the guess of eight).
        let charged = text.len() / 2 + 1;
        let count = n.attribute("count").and_then(|c| c.trim().parse::<usize>().ok()).filter(|&c| c <= charged);
        let mut out = Vec::with_capacity(count.unwrap_or(text.len() / 8));
        floats_into(text, &mut out)
            .map_err(|(i, t)| self.err(n, format!("value {} \"{t}\" is not a number", i + 1)).with_kind(FaultKind::Value))?;
        Ok(out)
    }
    /// An array's `count` attribute against the values it holds (Collada: count is "the number
    /// of values in the array"); a mismatch means a cut or hand-edited list.
    fn check_count(&self, n: xml::Node<'_, '_>, found: usize) -> Result<(), SlError> {
        match n.attribute("count") {
            Some(c) if c.trim().parse::<usize>().ok() != Some(found) => Err(self.err(
                n,
                format!("<{}> count=\"{c}\" but it holds {found} values; set count=\"{found}\" or restore the missing values", n.name()),
            )),
            _ => Ok(()),
        }
    }
    fn ints(&self, n: xml::Node<'_, '_>) -> Result<Vec<i64>, SlError> {
        let text = n.text().unwrap_or("");
        self.charge::<i64>(n, text)?;
        let mut out = Vec::with_capacity(text.len() / 3);
        ints_into(text, &mut out).map_err(|(i, t)| self.not_integer(n, i, t))?;
        Ok(out)
    }
    /// An index list as `T`, or `None` when it holds an integer `T` cannot (a negative or huge
    /// index, which the caller then reads as `i64` to name it).
    fn indices<T: Int>(&self, n: xml::Node<'_, '_>) -> Result<Option<Vec<T>>, SlError> {
        let text = n.text().unwrap_or("");
        self.charge::<T>(n, text)?;
        let mut out = Vec::with_capacity(text.len() / 3);
        match ints_into(text, &mut out) {
            Ok(()) => Ok(Some(out)),
            Err((_, t)) if parse_i64(t).is_some() => Ok(None),
            Err((i, t)) => Err(self.not_integer(n, i, t)),
        }
    }
    fn not_integer(&self, n: xml::Node<'_, '_>, i: usize, t: &str) -> SlError {
        self.err(n, format!("value {} \"{t}\" is not an integer", i + 1)).with_kind(FaultKind::Value)
    }
}

/// Collada numbers: decimal floats, plus the spellings some exporters write for non-finite values
/// (which are parsed so the validator can name them).
fn parse_f64(t: &str) -> Option<f64> {
    if let Some(v) = skelport_ir::num::fast_decimal(t) {
        return Some(v);
    }
    match t.parse::<f64>() {
        Ok(v) => Some(v),
        Err(_) => match t.to_ascii_lowercase().as_str() {
            "nan" | "-nan" | "1.#qnan" | "-1.#ind" => Some(f64::NAN),
            "inf" | "1.#inf" => Some(f64::INFINITY),
            "-inf" | "-1.#inf" => Some(f64::NEG_INFINITY),
            _ => None,
        },
    }
}

/// A Collada float list: the shared decimal scanner, with [`parse_f64`] for the words off its
/// fast path.
fn floats_into<'t>(text: &'t str, out: &mut Vec<f64>) -> Result<(), (usize, &'t str)> {
    num::decimals_into(text, out, parse_f64)
}

fn child<'a, 'i>(n: xml::Node<'a, 'i>, name: &str) -> Option<xml::Node<'a, 'i>> {
    n.children().find(|c| c.name() == name)
}

fn children<'a, 'i: 'a>(n: xml::Node<'a, 'i>, name: &'a str) -> impl Iterator<Item = xml::Node<'a, 'i>> + 'a {
    n.children().filter(move |c| c.name() == name)
}

fn url(s: &str) -> &str {
    s.strip_prefix('#').unwrap_or(s)
}

/// A `<source>`: its numbers or names and the accessor stride.
enum SourceData {
    Floats(Vec<f64>, usize),
    Names(Vec<String>),
}

/// Number of text bytes from which geometries and skins are read in parallel: below it, starting
/// threads costs more than it saves (the measurements are in docs/performance.md).
const PARALLEL_FROM: usize = 4 << 20;

/// `<source>` lookups by URL.
struct Sources<'c, 'd, 'a> {
    cx: &'c Ctx<'c>,
    ids: &'c HashMap<&'a str, xml::Node<'d, 'a>>,
}

impl Sources<'_, '_, '_> {
    /// A `<source>`'s numbers or names.
    fn read(&self, s: xml::Node<'_, '_>) -> Result<SourceData, SlError> {
        let (cx, ids) = (self.cx, self.ids);
        let stride = child(s, "technique_common")
            .and_then(|t| child(t, "accessor"))
            .and_then(|a| a.attribute("stride"))
            .and_then(|v| v.trim().parse::<usize>().ok())
            .unwrap_or(1)
            .max(1);
        if let Some(fa) = child(s, "float_array") {
            let v = cx.floats(fa)?;
            cx.check_count(fa, v.len())?;
            return Ok(SourceData::Floats(v, stride));
        }
        if let Some(na) = child(s, "Name_array") {
            let v: Vec<String> = na.text().unwrap_or("").split_ascii_whitespace().map(str::to_string).collect();
            cx.check_count(na, v.len())?;
            return Ok(SourceData::Names(v));
        }
        if let Some(ia) = child(s, "IDREF_array") {
            let names = ia
                .text()
                .unwrap_or("")
                .split_ascii_whitespace()
                .map(|id| {
                    // An IDREF names a node by id; the importer uses that node's name.
                    ids.get(id).and_then(|n| n.attribute("name")).unwrap_or(id).to_string()
                })
                .collect();
            return Ok(SourceData::Names(names));
        }
        Err(cx.err(s, "a <source> without float_array, Name_array or IDREF_array"))
    }

    /// The `<source>` a URL (`#id`) names; `from` is blamed when it is not in the file.
    fn at(&self, u: &str, from: xml::Node<'_, '_>) -> Result<SourceData, SlError> {
        let s = self.ids.get(url(u)).copied().ok_or_else(|| self.cx.err(from, format!("source \"{u}\" is not in the file")))?;
        self.read(s)
    }
}

/// One `<geometry>`: `None` when it holds no `<mesh>`.
fn geometry(sources: &Sources<'_, '_, '_>, g: xml::Node<'_, '_>) -> Result<Option<Geometry>, SlError> {
    let cx = sources.cx;
    let Some(mesh) = child(g, "mesh") else { return Ok(None) };
    let mut geo = Geometry {
        id: g.attribute("id").unwrap_or("").to_string(),
        name: g.attribute("name").or(g.attribute("id")).unwrap_or("mesh").to_string(),
        pos: cx.pos(g),
        ..Default::default()
    };
    let vertices = child(mesh, "vertices").ok_or_else(|| cx.err(mesh, "a <mesh> without <vertices>"))?;
    let vid = vertices.attribute("id").unwrap_or("");
    let pos_in = children(vertices, "input")
        .find(|i| i.attribute("semantic") == Some("POSITION"))
        .ok_or_else(|| cx.err(vertices, "<vertices> has no POSITION input"))?;
    geo.positions = vec3s(cx, pos_in, sources.at(pos_in.attribute("source").unwrap_or(""), pos_in)?)?;
    let mut vertex_normals = false;
    if let Some(n_in) = children(vertices, "input").find(|i| i.attribute("semantic") == Some("NORMAL")) {
        geo.normals = vec3s(cx, n_in, sources.at(n_in.attribute("source").unwrap_or(""), n_in)?)?;
        vertex_normals = true;
    }
    let mut normal_source: Option<String> = vertex_normals.then(|| String::from("<vertices>"));
    // TEXCOORD sources by id, each read once however many primitives use it.
    let mut uv_sources: HashMap<String, usize> = HashMap::new();
    let mut uv_source = |geo: &mut Geometry, i: xml::Node<'_, '_>| -> Result<usize, SlError> {
        let src = url(i.attribute("source").unwrap_or(""));
        if let Some(&k) = uv_sources.get(src) {
            return Ok(k);
        }
        let (values, stride) = vec2s(cx, i, sources.at(src, i)?)?;
        geo.texcoords.push(TexCoords { id: src.to_string(), values, stride });
        uv_sources.insert(src.to_string(), geo.texcoords.len() - 1);
        Ok(geo.texcoords.len() - 1)
    };
    let set_of = |i: xml::Node<'_, '_>| i.attribute("set").and_then(|s| s.trim().parse::<u32>().ok());
    // (offset, set, source): a TEXCOORD on <vertices> has no offset (it is indexed like POSITION).
    let mut vertex_uvs: Vec<(Option<usize>, Option<u32>, usize)> = Vec::new();
    for i in children(vertices, "input").filter(|i| i.attribute("semantic") == Some("TEXCOORD")) {
        vertex_uvs.push((None, set_of(i), uv_source(&mut geo, i)?));
    }
    for p in mesh.children() {
        let kind = p.name();
        let prim_kind = match kind {
            "polylist" => PrimitiveKind::Polylist,
            "triangles" => PrimitiveKind::Triangles,
            "polygons" => PrimitiveKind::Polygons,
            _ => continue,
        };
        let mut prim =
            Primitive { kind: prim_kind, material: p.attribute("material").map(str::to_string), pos: cx.pos(p), ..Default::default() };
        let inputs: Vec<xml::Node<'_, '_>> = children(p, "input").collect();
        let mut stride = 0usize;
        let mut v_off = None;
        let mut n_off = None;
        let mut uv = vertex_uvs.clone();
        for i in &inputs {
            let off: usize =
                i.attribute("offset").and_then(|o| o.trim().parse().ok()).ok_or_else(|| cx.err(*i, "an <input> without a valid offset"))?;
            stride = stride.max(off + 1);
            match i.attribute("semantic") {
                Some("VERTEX") => {
                    if url(i.attribute("source").unwrap_or("")) != vid {
                        return Err(cx.err(
                            *i,
                            format!("VERTEX input points to \"{}\", not to <vertices id=\"{vid}\">", i.attribute("source").unwrap_or("")),
                        ));
                    }
                    v_off = Some(off)
                }
                Some("NORMAL") if !vertex_normals => {
                    let src = i.attribute("source").unwrap_or("");
                    match &normal_source {
                        None => {
                            geo.normals = vec3s(cx, *i, sources.at(src, *i)?)?;
                            normal_source = Some(src.to_string());
                        }
                        Some(s) if s == src => {}
                        Some(_) => {
                            // Different normal sources per primitive: append, indices shift.
                            let base = geo.normals.len() as i64;
                            geo.normals.extend(vec3s(cx, *i, sources.at(src, *i)?)?);
                            n_off = Some((off, base));
                            continue;
                        }
                    }
                    n_off = Some((off, 0));
                }
                Some("TEXCOORD") => uv.push((Some(off), set_of(*i), uv_source(&mut geo, *i)?)),
                _ => {}
            }
        }
        let v_off = v_off.ok_or_else(|| cx.err(p, format!("<{kind}> has no VERTEX input")))?;
        // Indices read as u32 (what every exporter writes); a list with a negative or huge one
        // is read again as i64, so that the message can name it.
        let shape = Shape { kind, stride, v_off, n_off, vertex_normals, uv: &uv };
        if !corners::<u32>(cx, p, &shape, &geo, &mut prim)? {
            corners::<i64>(cx, p, &shape, &geo, &mut prim)?;
        }
        geo.primitives.push(prim);
    }
    Ok(Some(geo))
}

/// How a primitive's index lists are laid out: its element name, inputs per corner, the VERTEX
/// input's offset, the NORMAL input's (with the shift of its appended source), whether the
/// normals are the vertices' own (a NORMAL input on `<vertices>`), and the TEXCOORD inputs
/// (offset, or `None` for one on `<vertices>`; set; source in [`Geometry::texcoords`]).
struct Shape<'k> {
    kind: &'k str,
    stride: usize,
    v_off: usize,
    n_off: Option<(usize, i64)>,
    vertex_normals: bool,
    uv: &'k [(Option<usize>, Option<u32>, usize)],
}

/// Read primitive `p`'s polygons and corners into `prim` with index lists of type `T`: `false`
/// (and `prim` left to be filled again) when a list holds an integer `T` cannot.
fn corners<T: Int>(cx: &Ctx<'_>, p: xml::Node<'_, '_>, shape: &Shape<'_>, geo: &Geometry, prim: &mut Primitive) -> Result<bool, SlError> {
    let Shape { kind, stride, v_off, n_off, vertex_normals, uv } = *shape;
    prim.counts.clear();
    prim.vertex.clear();
    prim.normal.clear();
    prim.uvs.clear();
    prim.count_mismatch = None;
    let declared: Option<usize> = p.attribute("count").and_then(|c| c.trim().parse().ok());
    // Index lists (with the node to blame) and polygons as ranges into them: one
    // allocation per <p>, not one per polygon.
    let mut lists: Vec<(Vec<T>, xml::Node<'_, '_>)> = Vec::new();
    let mut polys: Vec<(usize, std::ops::Range<usize>)> = Vec::new();
    match kind {
        "polylist" => {
            let vc: Vec<T> = match child(p, "vcount") {
                Some(n) => match cx.indices(n)? {
                    Some(v) => v,
                    None => return Ok(false),
                },
                None => Vec::new(),
            };
            let pn = child(p, "p").ok_or_else(|| cx.err(p, "<polylist> without <p>"))?;
            let Some(idx) = cx.indices::<T>(pn)? else { return Ok(false) };
            let need: usize = vc.iter().map(|&c| c.into().max(0) as usize).sum::<usize>() * stride;
            if idx.len() < need {
                return Err(cx
                    .err(pn, format!("<p> has {} indices but <vcount> and {stride} input(s) need {need}", idx.len()))
                    .with_kind(FaultKind::Value));
            }
            let mut at = 0;
            polys.reserve(vc.len());
            for &c in &vc {
                let c: i64 = c.into();
                if c < 0 {
                    return Err(cx.err(p, format!("a <vcount> entry must not be negative: {c}")).with_kind(FaultKind::Value));
                }
                let n = c as usize * stride;
                polys.push((0, at..at + n));
                at += n;
            }
            lists.push((idx, pn));
            if let Some(d) = declared {
                if d != vc.len() {
                    prim.count_mismatch = Some((d, vc.len()));
                }
            }
        }
        "triangles" => {
            let mut all = Vec::new();
            for pn in children(p, "p") {
                let Some(idx) = cx.indices::<T>(pn)? else { return Ok(false) };
                all.extend(idx);
            }
            let per = 3 * stride;
            if all.len() % per != 0 {
                return Err(cx.err(p, format!("<triangles> has {} indices, not a multiple of 3 × {stride} inputs", all.len())));
            }
            polys.extend((0..all.len() / per).map(|k| (0, k * per..(k + 1) * per)));
            lists.push((all, p));
            if let Some(d) = declared {
                if d != polys.len() {
                    prim.count_mismatch = Some((d, polys.len()));
                }
            }
        }
        _ => {
            for pn in children(p, "p").chain(children(p, "ph").filter_map(|ph| child(ph, "p"))) {
                let Some(idx) = cx.indices::<T>(pn)? else { return Ok(false) };
                if idx.len() % stride != 0 {
                    return Err(cx.err(pn, format!("<p> has {} indices, not a multiple of {stride} inputs", idx.len())));
                }
                polys.push((lists.len(), 0..idx.len()));
                lists.push((idx, pn));
            }
        }
    }
    let corners_total: usize = polys.iter().map(|(_, r)| r.len() / stride).sum();
    prim.counts.reserve(polys.len());
    prim.vertex.reserve(corners_total);
    if vertex_normals || n_off.is_some() {
        prim.normal.reserve(corners_total);
    }
    prim.uvs = uv
        .iter()
        .map(|&(off, set, source)| UvInput { set, source, on_vertices: off.is_none(), index: Vec::with_capacity(corners_total) })
        .collect();
    prim.counts.extend(polys.iter().map(|(_, r)| (r.len() / stride) as u32));
    // A list's polygons are consecutive ranges of it (built so above): their corners are read
    // as one run. Every index is checked in a tight pass and then copied by a sized `extend` (a
    // push per corner, with its checks between: 2.43 M against 1.56 M instructions on the Linden
    // body); a run with an index out of range is read again corner by corner, which finds the
    // first bad index in the order the corners come, for the message.
    let mut runs: Vec<(usize, std::ops::Range<usize>)> = Vec::with_capacity(lists.len());
    for (list, range) in &polys {
        match runs.last_mut() {
            Some((l, run)) if l == list && run.end == range.start => run.end = range.end,
            _ => runs.push((*list, range.clone())),
        }
    }
    let (n_pos, n_normals) = (geo.positions.len(), geo.normals.len());
    let in_range = |v: i64, n: usize| v >= 0 && (v as usize) < n;
    for (list, range) in &runs {
        let (all, at) = (&lists[*list].0, lists[*list].1);
        let run = &all[range.clone()];
        let column = |off: usize, base: i64| run.chunks_exact(stride).map(move |c| c[off].into() + base);
        let normals = n_off.filter(|_| !vertex_normals);
        let fine =
            column(v_off, 0).all(|v| in_range(v, n_pos)) && normals.is_none_or(|(o, base)| column(o, base).all(|n| in_range(n, n_normals)));
        if !fine {
            for c in run.chunks_exact(stride) {
                let v: i64 = c[v_off].into();
                if !in_range(v, n_pos) {
                    return Err(cx
                        .err(at, format!("vertex index {v} refers to none of the {n_pos} positions of geometry \"{}\"", geo.id))
                        .with_kind(FaultKind::Reference));
                }
                if let Some((o, base)) = normals {
                    let n = c[o].into() + base;
                    if !in_range(n, n_normals) {
                        return Err(cx
                            .err(at, format!("normal index {n} refers to none of the {n_normals} normals"))
                            .with_kind(FaultKind::Reference));
                    }
                }
            }
        }
        let first = prim.vertex.len();
        prim.vertex.extend(column(v_off, 0).map(|v| v as u32));
        if vertex_normals {
            prim.normal.extend_from_slice(&prim.vertex[first..]);
        } else if let Some((o, base)) = normals {
            prim.normal.extend(column(o, base).map(|n| n as u32));
        }
    }
    // Texture coordinates in passes of their own: the loop above stays as tight without them.
    for (k, &(off, _, source)) in uv.iter().enumerate() {
        let n_uv = geo.texcoords[source].values.len();
        let out = &mut prim.uvs[k].index;
        match off {
            // On <vertices>: indexed like the positions, which are checked.
            None => out.extend_from_slice(&prim.vertex),
            Some(o) => {
                for (list, range) in &runs {
                    let (all, at) = (&lists[*list].0, lists[*list].1);
                    let column = || all[range.clone()].chunks_exact(stride).map(|c| c[o].into());
                    if let Some(t) = column().find(|&t| !in_range(t, n_uv)) {
                        return Err(cx.err(
                            at,
                            format!(
                                "texture coordinate index {t} is outside the {n_uv} texture coordinates of source \"{}\"",
                                geo.texcoords[source].id
                            ),
                        ));
                    }
                    out.extend(column().map(|t| t as u32));
                }
            }
        }
    }
    Ok(true)
}

/// One `<controller>`: `None` when it holds no `<skin>`.
fn controller(sources: &Sources<'_, '_, '_>, c: xml::Node<'_, '_>) -> Result<Option<Controller>, SlError> {
    let cx = sources.cx;
    let Some(skin) = child(c, "skin") else { return Ok(None) };
    let mut ctl = Controller {
        id: c.attribute("id").unwrap_or("").to_string(),
        name: c.attribute("name").unwrap_or("").to_string(),
        skin_source: url(skin.attribute("source").unwrap_or("")).to_string(),
        bind_shape: DMat4::IDENTITY,
        pos: cx.pos(c),
        ..Default::default()
    };
    if let Some(b) = child(skin, "bind_shape_matrix") {
        let v = cx.floats(b)?;
        if v.len() != 16 {
            return Err(cx.err(b, format!("<bind_shape_matrix> has {} numbers, not 16", v.len())).with_kind(FaultKind::Value));
        }
        ctl.bind_shape = matrix_from_row_major(&v);
    }
    let joints = child(skin, "joints").ok_or_else(|| cx.err(skin, "<skin> without <joints>"))?;
    ctl.joints_pos = cx.pos(joints);
    let mut joint_src = None;
    for i in children(joints, "input") {
        let src = i.attribute("source").unwrap_or("");
        match i.attribute("semantic") {
            Some("JOINT") => match sources.at(src, i)? {
                SourceData::Names(n) => {
                    ctl.joints = n;
                    joint_src = Some(url(src).to_string());
                }
                SourceData::Floats(..) => return Err(cx.err(i, "the JOINT source holds numbers, not names")),
            },
            Some("INV_BIND_MATRIX") => match sources.at(src, i)? {
                SourceData::Floats(v, _) => {
                    if v.len() % 16 != 0 {
                        return Err(cx.err(i, format!("INV_BIND_MATRIX source has {} numbers, not a multiple of 16", v.len())));
                    }
                    ctl.inverse_binds = v.chunks(16).map(matrix_from_row_major).collect();
                }
                SourceData::Names(_) => return Err(cx.err(i, "the INV_BIND_MATRIX source holds names, not numbers")),
            },
            _ => {}
        }
    }
    if joint_src.is_none() {
        return Err(cx.err(joints, "<joints> has no JOINT input"));
    }
    if ctl.inverse_binds.is_empty() {
        ctl.inverse_binds = vec![DMat4::IDENTITY; ctl.joints.len()];
    }
    if ctl.inverse_binds.len() != ctl.joints.len() {
        ctl.bind_count_mismatch = Some((ctl.joints.len(), ctl.inverse_binds.len()));
    }
    let vw = child(skin, "vertex_weights").ok_or_else(|| cx.err(skin, "<skin> without <vertex_weights>"))?;
    ctl.weights_pos = cx.pos(vw);
    ctl.weight_count =
        vw.attribute("count").and_then(|v| v.trim().parse().ok()).ok_or_else(|| cx.err(vw, "<vertex_weights> without a valid count"))?;
    let mut stride = 0usize;
    let mut j_off = None;
    let mut w = None;
    for i in children(vw, "input") {
        let off: usize =
            i.attribute("offset").and_then(|o| o.trim().parse().ok()).ok_or_else(|| cx.err(i, "an <input> without a valid offset"))?;
        stride = stride.max(off + 1);
        match i.attribute("semantic") {
            Some("JOINT") => {
                let src = i.attribute("source").unwrap_or("");
                if !sources.ids.contains_key(url(src)) {
                    return Err(cx.err(i, format!("source \"{src}\" is not in the file; point it at the <joints> JOINT source")));
                }
                j_off = Some(off)
            }
            Some("WEIGHT") => match sources.at(i.attribute("source").unwrap_or(""), i)? {
                SourceData::Floats(v, _) => w = Some((off, v)),
                SourceData::Names(_) => return Err(cx.err(i, "the WEIGHT source holds names, not numbers")),
            },
            _ => {}
        }
    }
    let j_off = j_off.ok_or_else(|| cx.err(vw, "<vertex_weights> has no JOINT input"))?;
    let (w_off, weights) = w.ok_or_else(|| cx.err(vw, "<vertex_weights> has no WEIGHT input"))?;
    ctl.weight_inputs = [Some(j_off), Some(w_off)];
    ctl.weight_input_count = children(vw, "input").count();
    let vcount = child(vw, "vcount").map(|n| cx.ints(n)).transpose()?.unwrap_or_default();
    let v = child(vw, "v").map(|n| cx.ints(n)).transpose()?.unwrap_or_default();
    ctl.vcount_len = vcount.len();
    if vcount.iter().any(|&c| c < 0) {
        return Err(cx.err(vw, "a <vcount> entry must not be negative").with_kind(FaultKind::Value));
    }
    let need: usize = vcount.iter().map(|&c| c as usize).sum::<usize>().saturating_mul(stride);
    if v.len() != need {
        ctl.v_mismatch = Some((v.len(), need));
    }
    let mut at = 0usize;
    // Never reserve more than the entries <v> holds (the counts come from the file).
    ctl.influence_pairs.reserve(v.len() / stride.max(1));
    ctl.influence_offsets.reserve(vcount.len() + 1);
    ctl.influence_offsets.push(0);
    for (vi, &n) in vcount.iter().enumerate() {
        for _ in 0..n {
            if at + stride > v.len() {
                break;
            }
            let j = v[at + j_off];
            let wi = v[at + w_off];
            let wv = usize::try_from(wi).ok().and_then(|i| weights.get(i).copied()).ok_or_else(|| {
                cx.err(vw, format!("vertex {vi}: weight index {wi} refers to none of the {} weights", weights.len()))
                    .with_kind(FaultKind::Reference)
            })?;
            if j < -1 || j >= ctl.joints.len() as i64 {
                return Err(cx
                    .err(vw, format!("vertex {vi}: joint index {j} refers to none of the {} joints", ctl.joints.len()))
                    .with_kind(FaultKind::Reference));
            }
            ctl.influence_pairs.push((j, wv));
            at += stride;
        }
        ctl.influence_offsets.push(ctl.influence_pairs.len() as u32);
    }
    Ok(Some(ctl))
}

/// Row-major Collada matrix → glam.
pub fn matrix_from_row_major(v: &[f64]) -> DMat4 {
    let mut a = [0.0; 16];
    a.copy_from_slice(&v[..16]);
    DMat4::from_cols_array(&a).transpose()
}

/// Parse a Collada document. `file` names it in errors. The decode budget is that of a file of
/// `text`'s size ([`Budget::for_input`]).
pub fn parse(text: &str, file: &str) -> Result<Dae, SlError> {
    parse_budgeted(text, file, &Budget::for_input(text.len() as u64))
}

/// [`parse`] charging `budget` for the element tree and the number lists it builds, before it
/// builds them.
pub fn parse_budgeted(text: &str, file: &str, budget: &Budget) -> Result<Dae, SlError> {
    parse_with(text, file, PARALLEL_FROM, budget)
}

/// [`crate::DaeFormat`]'s `Format::fuzz_check`: what only texts of [`PARALLEL_FROM`] bytes and
/// more take, run on a fuzz input and compared with the one-thread paths: geometries and skins
/// read on the pool (the whole parse, result or error), then the text's byte scan and tree
/// (`xml::fuzz_split`). Panics on a difference; returns how many comparisons were made.
#[cfg(feature = "fuzzing")]
pub(crate) fn fuzz_check(data: &[u8]) -> usize {
    let Ok(text) = crate::read::decode(data, "fuzz") else { return 0 };
    // A budget each: a read charges its own.
    let read = |parallel_from| format!("{:?}", parse_with(&text, "fuzz.dae", parallel_from, &Budget::for_input(text.len() as u64)));
    assert_eq!(read(0), read(usize::MAX), "geometries and skins read on the pool differ from those read in turn");
    1 + crate::xml::fuzz_split(&text)
}

/// [`parse`], reading geometries and skins in parallel when the text has `parallel_from` bytes.
fn parse_with(text: &str, file: &str, parallel_from: usize, budget: &Budget) -> Result<Dae, SlError> {
    let doc = xml::parse(text, file, budget)?;
    skelport_ir::trace::phase("dae: element tree");
    let cx = Ctx { file, budget };
    let root = doc.root();
    if root.name() != "COLLADA" {
        return Err(cx.err(root, format!("the root element is <{}>, not <COLLADA>: this is not a Collada file; export it as Collada (.dae), or read it as the format it is", root.name())));
    }
    // Collada 1.4.1 schema: <COLLADA> holds only these. (Deeper down unknown elements are
    // ignored, as exporters' own ones are; nesting itself is not capped, since a 65,535-bone
    // chain nests as deep.)
    if let Some(n) = root.children().find(|n| {
        let t = n.name();
        !(t.starts_with("library_") || matches!(t, "asset" | "scene" | "extra"))
    }) {
        return Err(cx.err(
            n,
            format!("<{}> cannot be a child of <COLLADA> (only <asset>, <library_*>, <scene> and <extra>); remove it or move it into an <extra>", n.name()),
        ));
    }
    let mut dae = Dae::default();
    if let Some(asset) = child(root, "asset") {
        if let Some(u) = child(asset, "unit") {
            if let Some(m) = u.attribute("meter") {
                let v = parse_f64(m.trim()).filter(|v| v.is_finite() && *v > 0.0);
                dae.meter = Some(v.ok_or_else(|| cx.err(u, format!("<unit meter=\"{m}\"> must be a positive number")))?);
            }
        }
        if let Some(u) = child(asset, "up_axis") {
            dae.up_axis = Some(match u.text().unwrap_or("").trim() {
                "X_UP" => UpAxis::X,
                "Y_UP" => UpAxis::Y,
                "Z_UP" => UpAxis::Z,
                other => return Err(cx.err(u, format!("<up_axis> is \"{other}\"; Collada allows X_UP, Y_UP or Z_UP"))),
            });
        }
    }
    // Every element with an id, for URL lookups.
    let mut ids: HashMap<&str, xml::Node<'_, '_>> = HashMap::new();
    for n in root.descendants() {
        if let Some(id) = n.attribute("id") {
            // Collada ids are xs:ID, unique in the document; a second one makes every URL to it ambiguous.
            if let Some(first) = ids.insert(id, n) {
                return Err(cx.err(n, format!("id \"{id}\" is also used at {}; ids must be unique; rename one", cx.pos(first))));
            }
        }
    }
    dae.materials = root
        .descendants()
        .filter(|n| n.has_tag_name("material") && n.parent().is_some_and(|p| p.has_tag_name("library_materials")))
        .count();
    let sources = Sources { cx: &cx, ids: &ids };
    skelport_ir::trace::phase("dae: ids");
    let geometries: Vec<xml::Node<'_, '_>> = root.descendants().filter(|n| n.has_tag_name("geometry")).collect();
    let controllers: Vec<xml::Node<'_, '_>> = root.descendants().filter(|n| n.has_tag_name("controller")).collect();
    // Geometries and skins are independent and hold most of the numbers: on a big file they are
    // read on every core. Results are kept in document order and the first error in that order
    // is the one returned, so messages do not depend on the thread count.
    let parallel = text.len() >= parallel_from;
    // One map for both, so that neither waits for the other's slowest item.
    let parts = geometries.into_iter().map(Part::Geometry).chain(controllers.into_iter().map(Part::Controller)).collect();
    let read = skelport_ir::map_in_order(parts, parallel, |part| match part {
        Part::Geometry(g) => geometry(&sources, g).map(Read::Geometry),
        Part::Controller(c) => controller(&sources, c).map(|c| Read::Controller(c.map(Box::new))),
    });
    skelport_ir::trace::phase("dae: geometries and controllers");
    for r in read {
        match r? {
            Read::Geometry(g) => dae.geometries.extend(g),
            Read::Controller(c) => dae.controllers.extend(c.map(|c| *c)),
        }
    }
    // The visual scene: the instanced one, else the first.
    let scenes: Vec<xml::Node<'_, '_>> = root.descendants().filter(|n| n.has_tag_name("visual_scene")).collect();
    let instanced = child(root, "scene")
        .and_then(|s| child(s, "instance_visual_scene"))
        .and_then(|i| i.attribute("url"))
        .and_then(|u| scenes.iter().find(|s| s.attribute("id") == Some(url(u))).copied());
    if let Some(scene) = instanced.or(scenes.first().copied()) {
        dae.has_visual_scene = true;
        // Iterative walk so a deeply nested file cannot overflow the stack.
        let mut stack: Vec<(xml::Node<'_, '_>, Option<usize>)> = children(scene, "node").map(|n| (n, None)).collect();
        stack.reverse();
        while let Some((n, parent)) = stack.pop() {
            let idx = dae.nodes.len();
            dae.nodes.push(node(&cx, n, parent)?);
            let mut kids: Vec<(xml::Node<'_, '_>, Option<usize>)> = children(n, "node").map(|c| (c, Some(idx))).collect();
            kids.reverse();
            stack.extend(kids);
        }
    }
    Ok(dae)
}

/// A `<geometry>` or `<controller>` to read.
enum Part<'d, 'a> {
    Geometry(xml::Node<'d, 'a>),
    Controller(xml::Node<'d, 'a>),
}

/// What a [`Part`] read to (`None`: not a mesh, not a skin).
enum Read {
    Geometry(Option<Geometry>),
    Controller(Option<Box<Controller>>),
}

/// A TEXCOORD source's (s, t) pairs: the first two numbers of each accessor group (a stride-3
/// STP source drops P), and the stride as declared.
fn vec2s(cx: &Ctx<'_>, at: xml::Node<'_, '_>, s: SourceData) -> Result<(Vec<DVec2>, usize), SlError> {
    match s {
        SourceData::Floats(mut v, stride) => {
            // Packed u v (what exporters write): the numbers' own buffer becomes the vectors', as
            // in `vec3s`.
            if stride <= 2 && v.len() % 2 == 0 {
                if v.capacity() % 2 != 0 {
                    v.shrink_to_fit();
                }
                match bytemuck::allocation::try_cast_vec::<f64, DVec2>(v) {
                    Ok(v2) => return Ok((v2, stride)),
                    Err((_, back)) => v = back,
                }
            }
            let step = stride.max(2);
            Ok((v.chunks_exact(step).map(|c| DVec2::new(c[0], c[1])).collect(), stride))
        }
        SourceData::Names(_) => Err(cx.err(at, "expected a float source for texture coordinates, found names")),
    }
}

fn vec3s(cx: &Ctx<'_>, at: xml::Node<'_, '_>, s: SourceData) -> Result<Vec<DVec3>, SlError> {
    match s {
        SourceData::Floats(mut v, stride) => {
            // Packed x y z (what exporters write): the numbers' own buffer becomes the vectors',
            // no copy (a big file's positions and normals are most of its memory).
            if stride <= 3 && v.len() % 3 == 0 {
                if v.capacity() % 3 != 0 {
                    v.shrink_to_fit();
                }
                match bytemuck::allocation::try_cast_vec::<f64, DVec3>(v) {
                    Ok(v3) => return Ok(v3),
                    Err((_, back)) => v = back,
                }
            }
            let stride = stride.max(3);
            Ok(v.chunks_exact(stride).map(|c| DVec3::new(c[0], c[1], c[2])).collect())
        }
        SourceData::Names(_) => Err(cx.err(at, "expected a float source for 3D vectors, found names")),
    }
}

fn node(cx: &Ctx<'_>, n: xml::Node<'_, '_>, parent: Option<usize>) -> Result<Node, SlError> {
    let mut out = Node {
        id: n.attribute("id").map(str::to_string),
        name: n.attribute("name").map(str::to_string),
        sid: n.attribute("sid").map(str::to_string),
        joint: n.attribute("type") == Some("JOINT"),
        parent,
        local: DMat4::IDENTITY,
        pos: cx.pos(n),
        ..Default::default()
    };
    let mut by_sid: [Option<DVec3>; 2] = [None, None];
    let mut first_translate = None;
    let mut matrix_t = None;
    for t in n.children() {
        let kind = t.name();
        let (kind, need): (&'static str, usize) = match kind {
            "matrix" => ("matrix", 16),
            "translate" => ("translate", 3),
            "scale" => ("scale", 3),
            "rotate" => ("rotate", 4),
            "lookat" => ("lookat", 9),
            "skew" => ("skew", 7),
            "instance_controller" => {
                out.controllers.push(ControllerInstance {
                    url: url(t.attribute("url").unwrap_or("")).to_string(),
                    skeletons: children(t, "skeleton").filter_map(|s| s.text()).map(|s| url(s.trim()).to_string()).collect(),
                });
                continue;
            }
            "instance_geometry" => {
                out.geometries.push(url(t.attribute("url").unwrap_or("")).to_string());
                continue;
            }
            _ => continue,
        };
        let v = cx.floats(t)?;
        if v.len() != need {
            return Err(cx.err(t, format!("<{kind}> has {} numbers, not {need}", v.len())).with_kind(FaultKind::Value));
        }
        let translation = match kind {
            "matrix" => Some(DVec3::new(v[3], v[7], v[11])),
            "translate" => Some(DVec3::new(v[0], v[1], v[2])),
            _ => None,
        };
        out.transforms.push(NodeTransform { kind, sid: t.attribute("sid").map(str::to_string), translation });
        let m = match kind {
            "matrix" => {
                let m = matrix_from_row_major(&v);
                matrix_t = matrix_t.or(Some(m.w_axis.truncate()));
                m
            }
            "translate" => {
                let d = DVec3::new(v[0], v[1], v[2]);
                match t.attribute("sid") {
                    Some("translate") => by_sid[0] = by_sid[0].or(Some(d)),
                    Some("location") => by_sid[1] = by_sid[1].or(Some(d)),
                    _ => {}
                }
                first_translate = first_translate.or(Some(d));
                DMat4::from_translation(d)
            }
            "scale" => DMat4::from_scale(DVec3::new(v[0], v[1], v[2])),
            "rotate" => {
                let axis = DVec3::new(v[0], v[1], v[2]);
                if axis.length_squared() == 0.0 {
                    DMat4::IDENTITY
                } else {
                    DMat4::from_axis_angle(axis.normalize(), v[3].to_radians())
                }
            }
            // lookat and skew: rare in rigs; they are composed as identity (the importer ignores them too).
            _ => DMat4::IDENTITY,
        };
        out.local *= m;
    }
    out.importer_translation = by_sid[0].or(by_sid[1]).or(first_translate).or(matrix_t);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::{floats_into, ints_into, parse_f64, parse_i64, parse_with, Budget};

    /// Geometries and skins read in parallel give the same document, and the same first error,
    /// as read one after another: every project .dae (the malformed suite holds errors in
    /// geometries and skins both).
    #[test]
    fn parallel_and_sequential_reads_agree() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../testdata");
        let mut texts: Vec<(String, String)> = Vec::new();
        let mut files = vec![root.join("demo/sample.dae")];
        let mut bad: Vec<_> =
            std::fs::read_dir(root.join("bad/dae")).expect("testdata/bad/dae").map(|e| e.expect("entry").path()).collect();
        bad.sort();
        files.extend(bad.into_iter().filter(|p| p.extension().is_some_and(|e| e == "dae")));
        assert!(files.len() > 40, "the malformed suite is missing");
        for f in &files {
            let bytes = std::fs::read(f).expect("readable");
            if let Ok(text) = String::from_utf8(bytes) {
                texts.push((f.display().to_string(), text));
            }
        }
        // The demo with its mesh and skin four times over, whole and with a bad number in the
        // third geometry, in the second skin, and in both (the geometry's error comes first).
        let many = repeated_demo(&root.join("demo/sample.dae"), 4);
        assert_eq!(many.matches("<geometry ").count(), 4);
        let spoil = |t: &str, marker: &str, nth: usize| {
            let at = t.match_indices(marker).nth(nth).expect("marker").0;
            let gt = at + t[at..].find('>').expect("tag end") + 1;
            format!("{}oops {}", &t[..gt], &t[gt..])
        };
        let geo_bad = spoil(&many, "-positions-array\"", 2);
        let skin_bad = spoil(&many, "<v>", 1);
        let both = spoil(&geo_bad, "<v>", 0);
        for (name, t) in [("4 meshes", &many), ("bad geometry", &geo_bad), ("bad skin", &skin_bad), ("both", &both)] {
            texts.push((name.to_string(), t.clone()));
        }
        let (mut ok, mut failed) = (0, 0);
        for (name, text) in &texts {
            let seq = format!("{:?}", parse_with(text, "x.dae", usize::MAX, &Budget::unlimited()));
            let par = format!("{:?}", parse_with(text, "x.dae", 0, &Budget::unlimited()));
            assert_eq!(seq, par, "{name}");
            if seq.starts_with("Ok") {
                ok += 1
            } else {
                failed += 1
            }
        }
        assert!(ok >= 2 && failed >= 20, "{ok} read, {failed} refused");
        let err = |t: &str| parse_with(t, "x.dae", 0, &Budget::unlimited()).expect_err("refused").to_string();
        assert!(err(&both).contains("is not a number"), "{}", err(&both));
        assert!(err(&skin_bad).contains("is not an integer"), "{}", err(&skin_bad));
    }

    /// [`ints_into`] as `i64` and as `u32` gives what splitting on ASCII whitespace and parsing
    /// each word gives (a word `u32` cannot hold refused like one that is not an integer).
    fn ints_equal_split_and_parse(text: &str) {
        let split: Vec<&str> = text.split_ascii_whitespace().collect();
        let mut got = Vec::new();
        let want: Result<Vec<i64>, (usize, &str)> = split.iter().enumerate().map(|(k, t)| parse_i64(t).ok_or((k, *t))).collect();
        assert_eq!(ints_into(text, &mut got).map(|_| got.clone()), want, "{text:?}");
        let mut got = Vec::new();
        let want: Result<Vec<u32>, (usize, &str)> =
            split.iter().enumerate().map(|(k, t)| parse_i64(t).and_then(|v| u32::try_from(v).ok()).ok_or((k, *t))).collect();
        assert_eq!(ints_into(text, &mut got).map(|_| got.clone()), want, "{text:?}");
    }

    /// `file`'s meshes and skins `n` times over (renamed), written as Collada.
    fn repeated_demo(file: &std::path::Path, n: usize) -> String {
        let bytes = std::fs::read(file).expect("demo");
        let mut diag = Default::default();
        let doc = crate::read::read(&bytes, "demo.dae", &Default::default(), &mut diag).expect("demo reads");
        let many = skelport_ir::testing::repeated(&doc, n);
        crate::write::write(&many, &Default::default(), crate::SlSkeleton::builtin(), &mut diag).expect("writes")
    }

    /// The fast paths must give bit-for-bit what `str::parse` gives (golden files depend on it).
    #[test]
    fn fast_numbers_equal_str_parse() {
        let mut cases: Vec<String> = [
            "0",
            "-0",
            "-0.0",
            "+1.5",
            "1.",
            ".5",
            "0.1",
            "0.2",
            "0.3",
            "123456789012345",
            "1234567890123456",
            "9007199254740993",
            "0.000000000000000000001",
            "0.0000000000000000000000001",
            "1e3",
            "-2.5E-3",
            "3.14159265358979",
            "-1.0000000000000002",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        // A deterministic spread of the decimals exporters write.
        let mut x = 0x2545F4914F6CDD1Du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = f64::from_bits(x) % 1000.0;
            if v.is_finite() {
                cases.push(format!("{v:.6}"));
                cases.push(format!("{v}"));
                cases.push(format!("{:.9}", v / 1000.0));
            }
        }
        for c in &cases {
            assert_eq!(parse_f64(c).map(f64::to_bits), c.parse::<f64>().ok().map(f64::to_bits), "{c}");
        }
        for bad in ["", "-", ".", "1..2", "1.2.3", "abc", "1-2"] {
            assert_eq!(parse_f64(bad).is_some(), bad.parse::<f64>().is_ok(), "{bad}");
        }
        for c in ["0", "-0", "+7", "42", "-123456789012345678", "9223372036854775807", "99999999999999999999", "", "-", "1a", "--1"] {
            assert_eq!(parse_i64(c), c.parse::<i64>().ok(), "{c}");
        }
    }

    /// The list loops must give what splitting on ASCII whitespace and parsing each word gives,
    /// and name the first bad word by its index.
    #[test]
    fn list_loops_equal_split_and_parse() {
        let words = [
            "0",
            "-0",
            "+7",
            "42",
            "-1",
            "007",
            "123456789012345678",
            "-123456789012345678",
            "1234567890123456789",
            "9223372036854775807",
            "99999999999999999999",
            "-",
            "+",
            "1a",
            "--1",
            "1.5",
            "-2.25e3",
            "nan",
            "1.#INF",
            "x",
            "é",
            "0.1",
            "-.5",
            "5.",
            "3.14159265358979",
            "1234567890123456",
            "0.0000000000000000000000001",
            "-0.000001",
            "1.2.3",
            "+-1",
            "1-",
        ];
        let seps = [" ", "  ", "\t", "\n", "\r\n", " \x0c "];
        let mut x = 0x9E3779B97F4A7C15u64;
        for _ in 0..5_000 {
            // Stepped here too: a text of no words would leave x, and every later text, unchanged.
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let mut text = String::new();
            for _ in 0..(x % 7) {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                text.push_str(seps[(x % 6) as usize]);
                text.push_str(words[(x >> 8) as usize % words.len()]);
            }
            if x & 1 == 0 {
                text.push_str(seps[(x >> 3) as usize % 6]);
            }
            let split: Vec<&str> = text.split_ascii_whitespace().collect();
            ints_equal_split_and_parse(&text);
            let mut got = Vec::new();
            let want: Result<Vec<u64>, (usize, &str)> =
                split.iter().enumerate().map(|(k, t)| parse_f64(t).map(f64::to_bits).ok_or((k, *t))).collect();
            assert_eq!(floats_into(&text, &mut got).map(|_| got.iter().map(|v| v.to_bits()).collect()), want, "{text:?}");
        }
    }
    /// Numbers of every digit count (0 to 10) before and after the dot, in long lists, signed
    /// and not, with and without exponents: the same bits as splitting and parsing.
    #[test]
    fn every_digit_count_equals_split_and_parse() {
        let mut next = skelport_ir::testing::xorshift(0x1234_5678_9abc_def1u64);
        for _ in 0..2_000 {
            let mut text = String::new();
            let mut int_text = String::new();
            for _ in 0..(next() % 40) {
                let sign = ["", "-", "+"][(next() % 3) as usize];
                let digits = |n: u64, r: u64| -> String { (0..n).map(|k| char::from(b'0' + ((r >> (k * 3 % 60)) % 10) as u8)).collect() };
                let (a, f) = (next() % 11, next() % 11);
                let int_part = digits(a, next());
                let word = match next() % 3 {
                    0 => int_part.clone(),
                    1 => format!("{int_part}.{}", digits(f, next())),
                    _ => format!("{int_part}.{}e-{}", digits(f, next()), next() % 3),
                };
                let sep = [" ", "\n", "  ", "\r\n\t"][(next() % 4) as usize];
                text.push_str(&format!("{sign}{word}{sep}"));
                int_text.push_str(&format!("{sign}{int_part}{sep}"));
            }
            let split: Vec<&str> = text.split_ascii_whitespace().collect();
            let mut got = Vec::new();
            let want: Result<Vec<u64>, (usize, &str)> =
                split.iter().enumerate().map(|(k, t)| parse_f64(t).map(f64::to_bits).ok_or((k, *t))).collect();
            assert_eq!(floats_into(&text, &mut got).map(|_| got.iter().map(|v| v.to_bits()).collect()), want, "{text:?}");
            ints_equal_split_and_parse(&int_text);
        }
    }
    /// Random texts of digits, dots, signs, blanks and other bytes, at every alignment, through
    /// the list loops: the same numbers and errors as splitting and parsing.
    #[test]
    fn list_loops_equal_split_and_parse_on_random_text() {
        // With the bytes just outside the digits ('/' and ':'), where a byte-wise digit test errs.
        let alphabet: Vec<char> = "0123456789012345678901234567890123456789..--+  \n\t\re,xé/:".chars().collect();
        let mut next = skelport_ir::testing::xorshift(0x2545_F491_4F6C_DD1Du64);
        for _ in 0..40_000 {
            let len = (next() % 48) as usize;
            let text: String = (0..len).map(|_| alphabet[(next() % alphabet.len() as u64) as usize]).collect();
            let split: Vec<&str> = text.split_ascii_whitespace().collect();
            ints_equal_split_and_parse(&text);
            let mut got = Vec::new();
            let want: Result<Vec<u64>, (usize, &str)> =
                split.iter().enumerate().map(|(k, t)| parse_f64(t).map(f64::to_bits).ok_or((k, *t))).collect();
            assert_eq!(floats_into(&text, &mut got).map(|_| got.iter().map(|v| v.to_bits()).collect()), want, "{text:?}");
        }
    }
}
