//! # skelport-obj — Wavefront OBJ meshes
//!
//! MakeHuman rigs and weights refer to the base mesh's vertices by index, and its joint cubes and
//! helper geometry by face group (`g`). This reader keeps the file's vertex numbering exactly,
//! turns `g` groups into vertex groups (a vertex belongs to the groups of the faces that use it)
//! and keeps texture coordinates (`vt`) and normals (`vn`) with the index each face corner gives
//! them, so a UV seam (one vertex, two `vt`) stays a seam of corners, not of vertices.
//!
//! Hand-written on purpose: OBJ is line-based and we need only `v`, `vt`, `vn`, `f` and `g`,
//! with exact numbering; general crates (tobj) re-index vertices per material or group, and
//! split vertices at UV seams, which would change the numbering rigs and weights refer to.

#![forbid(unsafe_code)]

use skelport_ir::proc::per_vertex_if_uniform;
use skelport_ir::{DVec2, DVec3, Faces, Mesh, Normals, UvSet, Uvs, VertexGroup};
use std::collections::BTreeMap;

/// A face corner's `vt` or `vn` index when the corner gives none.
pub const NO_INDEX: u32 = u32::MAX;

/// Errors reading OBJ, with the line.
#[derive(Debug, thiserror::Error)]
pub enum ObjError {
    #[error("{}", skelport_ir::FormatError::of(self))]
    Line { file: String, line: usize, message: String },
    #[error("{}", skelport_ir::FormatError::of(self))]
    Encoding { file: String, offset: usize },
    /// The mesh asks for more memory than the decode budget allows.
    #[error(transparent)]
    Budget(#[from] skelport_ir::BudgetError),
}

impl skelport_ir::Fault for ObjError {
    fn file(&self) -> Option<&str> {
        match self {
            ObjError::Line { file, .. } | ObjError::Encoding { file, .. } => Some(file),
            ObjError::Budget(e) => e.file(),
        }
    }
    fn place(&self) -> Option<skelport_ir::Place> {
        match self {
            ObjError::Line { line, .. } => Some(skelport_ir::Place::line(*line)),
            ObjError::Encoding { offset, .. } => Some(skelport_ir::Place::Byte(*offset as u64)),
            ObjError::Budget(e) => e.place(),
        }
    }
    fn kind(&self) -> skelport_ir::FaultKind {
        match self {
            // A statement OBJ does not allow there: a line to fix.
            ObjError::Line { .. } => skelport_ir::FaultKind::Syntax,
            ObjError::Encoding { .. } => skelport_ir::FaultKind::Encoding,
            ObjError::Budget(e) => e.kind(),
        }
    }
    fn what(&self) -> String {
        match self {
            ObjError::Line { message, .. } => message.clone(),
            ObjError::Encoding { .. } => "not UTF-8 text".into(),
            ObjError::Budget(e) => e.what(),
        }
    }
    fn fix(&self) -> Option<String> {
        Some(
            match self {
                ObjError::Line { .. } => "fix that line or export the mesh again",
                ObjError::Encoding { .. } => "OBJ files are text: save it as UTF-8 or ASCII, or export the mesh again",
                // The budget error's kind carries its own hint.
                ObjError::Budget(_) => return None,
            }
            .into(),
        )
    }
}

/// A parsed OBJ: positions in file order, polygons, and face groups as vertex sets.
#[derive(Debug, Clone, Default)]
pub struct ObjMesh {
    pub positions: Vec<DVec3>,
    pub faces: Faces,
    /// The `g` group of each face (index into `group_names`), or `None` before any `g`.
    pub face_groups: Vec<Option<u32>>,
    pub group_names: Vec<String>,
    /// `vt` values in file order (`u`, `v`; a third `w` is ignored).
    pub uvs: Vec<DVec2>,
    /// `vn` values in file order.
    pub normals: Vec<DVec3>,
    /// The `vt` (index into `uvs`) of each face corner, in `faces.indices` order, [`NO_INDEX`]
    /// where a corner names none; empty when no corner names one.
    pub corner_uvs: Vec<u32>,
    /// The `vn` (index into `normals`) of each face corner, like `corner_uvs`.
    pub corner_normals: Vec<u32>,
}

impl ObjMesh {
    /// Vertices of each named group (sorted, unique), in first-seen group order.
    pub fn vertex_groups(&self) -> Vec<VertexGroup> {
        // Each vertex's first group, and the (vertex, group) pairs of vertices in more than one
        // (few: a mesh's groups seldom share vertices), sorted: one pass over the vertices then
        // fills every group in vertex order, sorted and unique without sorting the groups. A
        // counting sort of all (vertex, group) pairs cost four times this on MakeHuman's base.
        const NONE: u32 = u32::MAX;
        let mut first = vec![NONE; self.positions.len()];
        let mut more: Vec<(u32, u32)> = Vec::new();
        for (f, g) in self.faces.iter().zip(&self.face_groups) {
            if let Some(g) = *g {
                for &v in f {
                    let slot = &mut first[v as usize];
                    if *slot == NONE {
                        *slot = g;
                    } else if *slot != g {
                        more.push((v, g));
                    }
                }
            }
        }
        more.sort_unstable();
        more.dedup();
        let mut sets: Vec<Vec<u32>> = vec![Vec::new(); self.group_names.len()];
        let mut more = more.into_iter().peekable();
        for (v, &g) in (0u32..).zip(&first) {
            if g != NONE {
                sets[g as usize].push(v);
            }
            while let Some((_, h)) = more.next_if(|&(w, _)| w == v) {
                sets[h as usize].push(v);
            }
        }
        self.group_names.iter().zip(sets).map(|(n, v)| VertexGroup { name: n.clone(), vertices: v, weights: None }).collect()
    }

    /// The mesh as an IR mesh (positions as in the file, groups from `g`, the UV set and
    /// normals of [`ObjMesh::uv_set`] and [`ObjMesh::normal_attribute`]).
    pub fn to_mesh(&self, name: &str) -> Mesh {
        Mesh {
            name: name.into(),
            positions: self.positions.clone(),
            normals: self.normal_attribute(),
            uvs: self.uv_set().into_iter().collect(),
            faces: self.faces.clone(),
            groups: self.vertex_groups(),
            ext: Default::default(),
        }
    }

    /// Face corners that name no `vt` in a file where others do (they get UV (0, 0)).
    pub fn corners_without_uv(&self) -> usize {
        self.corner_uvs.iter().filter(|&&i| i == NO_INDEX).count()
    }

    /// Face corners that name no `vn` in a file where others do (the normals are then dropped:
    /// see [`ObjMesh::normal_attribute`]).
    pub fn corners_without_normal(&self) -> usize {
        self.corner_normals.iter().filter(|&&i| i == NO_INDEX).count()
    }

    /// The texture coordinates as an IR UV set: per vertex when every corner of each vertex has
    /// the same value, else per corner (a corner without `vt` gets (0, 0)). `None` when no
    /// corner names a `vt`.
    pub fn uv_set(&self) -> Option<UvSet> {
        if self.corner_uvs.is_empty() {
            return None;
        }
        let values: Vec<DVec2> = self.corner_uvs.iter().map(|&i| self.uvs.get(i as usize).copied().unwrap_or(DVec2::ZERO)).collect();
        let uvs: Uvs = per_vertex_if_uniform(self.positions.len(), &self.faces.indices, values, DVec2::ZERO);
        Some(UvSet { name: String::new(), uvs })
    }

    /// The normals, per vertex when every corner of each vertex has the same one, else per
    /// corner. `None` when no corner names a `vn`, or when some corners do not (a normal cannot
    /// be made up for them).
    pub fn normal_attribute(&self) -> Option<Normals> {
        if self.corner_normals.is_empty() || self.corners_without_normal() > 0 {
            return None;
        }
        let values: Vec<DVec3> = self.corner_normals.iter().map(|&i| self.normals[i as usize]).collect();
        Some(per_vertex_if_uniform(self.positions.len(), &self.faces.indices, values, DVec3::ZERO))
    }
}

/// A decimal, correctly rounded (the shared number parser of the text readers).
fn parse_f64(t: &str) -> Option<f64> {
    skelport_ir::num::fast_decimal(t)
}

/// A `v` statement's words after the `v`: three finite numbers (more are ignored).
fn vertex<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<DVec3> {
    let mut next = || words.next().and_then(parse_f64).filter(|v| v.is_finite());
    Some(DVec3::new(next()?, next()?, next()?))
}

/// Blanks between the words of a line, as the one-pass readers step over them.
#[inline(always)]
fn skip_inline(b: &[u8], i: &mut usize) {
    while matches!(b.get(*i), Some(b' ' | b'\t')) {
        *i += 1;
    }
}

/// Where the next line starts when the line ends at `b[i]` (blanks before it stepped over): after
/// its `\n` or `\r\n`, or at the end of the text. `None` when something else is there.
#[inline(always)]
fn line_end(b: &[u8], mut i: usize) -> Option<usize> {
    skip_inline(b, &mut i);
    end_at(b, i)
}

/// [`line_end`] without the blanks: the line ends right at `b[i]`.
#[inline(always)]
fn end_at(b: &[u8], i: usize) -> Option<usize> {
    match b.get(i) {
        None => Some(i),
        Some(b'\n') => Some(i + 1),
        Some(b'\r') if b.get(i + 1) == Some(&b'\n') => Some(i + 2),
        _ => None,
    }
}

/// The next plain decimal of a line from `b[*i]` (blanks before it stepped over).
#[inline(always)]
fn plain_decimal(b: &[u8], i: &mut usize) -> Option<f64> {
    skip_inline(b, i);
    skelport_ir::num::plain_decimal_at(b, i)
}

/// The `v` line whose words start at `b[i]` (after `v `), read in one pass up to the start of the
/// next line, when it is three plain decimals and nothing else: the point and where the next line
/// starts. `None` for any other line, which the general reader ([`vertex`]) then reads.
#[inline]
fn plain_vertex(b: &[u8], mut i: usize) -> Option<(DVec3, usize)> {
    let mut next = || plain_decimal(b, &mut i);
    let p = DVec3::new(next()?, next()?, next()?);
    Some((p, line_end(b, i)?))
}

/// The `vt` line whose words start at `b[i]`, read as [`plain_vertex`] reads a `v` line: one or
/// two plain decimals and nothing else; `None` for any other, which [`tex_coord`] then reads.
#[inline]
fn plain_tex_coord(b: &[u8], mut i: usize) -> Option<(DVec2, usize)> {
    let u = plain_decimal(b, &mut i)?;
    skip_inline(b, &mut i);
    if let Some(end) = end_at(b, i) {
        return Some((DVec2::new(u, 0.0), end));
    }
    let v = skelport_ir::num::plain_decimal_at(b, &mut i)?;
    Some((DVec2::new(u, v), line_end(b, i)?))
}

/// A `vt` statement's words after the `vt`: `u` and an optional `v` (0 when absent, as OBJ
/// says), finite; a third number (`w`) is ignored.
fn tex_coord<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<DVec2> {
    let u = words.next().and_then(parse_f64).filter(|v| v.is_finite())?;
    let v = match words.next() {
        Some(w) => parse_f64(w).filter(|v| v.is_finite())?,
        None => 0.0,
    };
    Some(DVec2::new(u, v))
}

/// A decimal integer with an optional sign, as `str::parse::<i64>` reads it; the common short
/// case without the standard library's generality (a face line is mostly such numbers).
fn int(b: &[u8]) -> Option<i64> {
    let (neg, digits) = match b.first() {
        Some(b'-') => (true, &b[1..]),
        Some(b'+') => (false, &b[1..]),
        _ => (false, b),
    };
    if digits.is_empty() {
        return None;
    }
    if digits.len() > 18 {
        // May overflow: the standard parser decides.
        return std::str::from_utf8(b).ok()?.parse().ok();
    }
    let mut x = 0i64;
    for &d in digits {
        let k = d.wrapping_sub(b'0');
        if k > 9 {
            return None;
        }
        x = x * 10 + k as i64;
    }
    Some(if neg { -x } else { x })
}

/// An absent `vt` or `vn` in [`corner_numbers`].
const ABSENT: i64 = i64::MIN;

/// The numbers of the face corner at `b[*i..]`, `v[/[vt][/[vn]]]`, each a plain integer of at
/// most 18 digits ([`ABSENT`] for an empty or missing `vt`, `vn`), `*i` left after them; `None`
/// when the corner does not start that way.
#[inline]
fn corner_numbers(b: &[u8], i: &mut usize) -> Option<[i64; 3]> {
    let mut out = [ABSENT; 3];
    for (k, slot) in out.iter_mut().enumerate() {
        if k > 0 {
            // After a number only `/` continues the corner.
            if b.get(*i) != Some(&b'/') {
                break;
            }
            *i += 1;
            // An empty `vt` or `vn` (`1//3`, `1/`).
            match b.get(*i) {
                None | Some(b'/') => continue,
                Some(c) if c.is_ascii_whitespace() => continue,
                _ => {}
            }
        }
        let neg = match b.get(*i) {
            Some(b'-') => {
                *i += 1;
                true
            }
            Some(b'+') => {
                *i += 1;
                false
            }
            _ => false,
        };
        let start = *i;
        let mut x = 0i64;
        while let Some(&c) = b.get(*i) {
            let d = c.wrapping_sub(b'0');
            if d > 9 {
                break;
            }
            // 18 digits cannot overflow; longer numbers go to the careful path.
            if *i - start == 18 {
                return None;
            }
            x = x * 10 + d as i64;
            *i += 1;
        }
        if *i == start {
            return None;
        }
        *slot = if neg { -x } else { x };
    }
    Some(out)
}

/// A face line's corners from `b[i]` (after `f `) when each is `v`, `v/vt`, `v//vn` or
/// `v/vt/vn` with positive indices in range, separated by spaces or tabs, at least three, and
/// nothing else is on the line: appended to `out`, their count and where the next line starts
/// given. `None` for any other line, `out` then left as it was: [`face`] reads it and says what
/// is wrong. One tight pass (no closures or per-field state), because face corners are most of
/// an OBJ file's numbers.
#[inline]
fn plain_face(b: &[u8], mut i: usize, out: &mut Corners<'_>, seen: Seen) -> Option<(u32, usize)> {
    /// A positive 1-based index of at most nine digits at `b[*i..]`, 0-based, when below `count`.
    #[inline(always)]
    fn index(b: &[u8], i: &mut usize, count: usize) -> Option<u32> {
        // The text goes on past the line (the first byte that is not a digit ends the run), so
        // nearly every index is read eight bytes at a time.
        let (len, v) = skelport_ir::num::digit_run(b, i);
        let v = v as usize;
        ((1..=9).contains(&len) && v >= 1 && v <= count).then(|| (v - 1) as u32)
    }
    let before = out.indices.len();
    let mut ok = || -> Option<usize> {
        loop {
            skip_inline(b, &mut i);
            if let Some(end) = end_at(b, i) {
                return Some(end);
            }
            let v = index(b, &mut i, seen.vertices)?;
            let (mut t, mut n) = (NO_INDEX, NO_INDEX);
            if b.get(i) == Some(&b'/') {
                i += 1;
                if b.get(i) != Some(&b'/') {
                    t = index(b, &mut i, seen.uvs)?;
                }
                if b.get(i) == Some(&b'/') {
                    i += 1;
                    n = index(b, &mut i, seen.normals)?;
                }
            }
            // A blank or the line's end (which `end_at` checks) after each corner.
            if !matches!(b.get(i), None | Some(b' ' | b'\t' | b'\r' | b'\n')) {
                return None;
            }
            out.push(v, t, n);
        }
    };
    let end = ok();
    match (end, u32::try_from(out.indices.len() - before)) {
        (Some(end), Ok(count)) if count >= 3 => Some((count, end)),
        _ => {
            out.truncate(before);
            None
        }
    }
}

/// Where a face line's corners go: vertex, `vt` and `vn` indices. The `vt` and `vn` lists are
/// empty until a corner names one (then filled with [`NO_INDEX`] for the corners before it), so
/// that a mesh without them (MakeHuman's has no `vn`) builds no list of absent indices.
struct Corners<'m> {
    indices: &'m mut Vec<u32>,
    uvs: &'m mut Vec<u32>,
    normals: &'m mut Vec<u32>,
}

/// Append `x` to a `vt` or `vn` list of [`Corners`] as the corner `corner`'s (0-based).
#[inline(always)]
fn push_sparse(list: &mut Vec<u32>, x: u32, corner: usize) {
    if !list.is_empty() {
        list.push(x);
    } else if x != NO_INDEX {
        list.resize(corner, NO_INDEX);
        list.push(x);
    }
}

impl<'m> Corners<'m> {
    /// Append a corner.
    #[inline(always)]
    fn push(&mut self, v: u32, t: u32, n: u32) {
        let corner = self.indices.len();
        self.indices.push(v);
        push_sparse(self.uvs, t, corner);
        push_sparse(self.normals, n, corner);
    }

    /// Drop the corners from `len` on (a face line that turned out bad).
    fn truncate(&mut self, len: usize) {
        self.indices.truncate(len);
        self.uvs.truncate(len);
        self.normals.truncate(len);
    }

    /// Where the next face line's corners go in `m` (and the per-corner lists beside it), with
    /// the statements seen so far. Made for face lines only: building it for every line cost
    /// more than half a million instructions on MakeHuman's base mesh.
    fn of(m: &'m mut ObjMesh, uvs: &'m mut Vec<u32>, normals: &'m mut Vec<u32>) -> (Corners<'m>, Seen) {
        let seen = Seen { vertices: m.positions.len(), uvs: m.uvs.len(), normals: m.normals.len() };
        (Corners { indices: &mut m.faces.indices, uvs, normals }, seen)
    }
}

/// How many `v`, `vt` and `vn` statements precede a face (relative indices count back from them).
#[derive(Clone, Copy)]
struct Seen {
    vertices: usize,
    uvs: usize,
    normals: usize,
}

/// An OBJ index (1-based, or negative counting back from the last of `n`) as 0-based, or the
/// message for one out of range.
fn resolve(i: i64, n: usize, what: &str) -> Result<u32, String> {
    let n = n as i64;
    let abs = if i > 0 { i - 1 } else { n + i };
    if abs < 0 || abs >= n {
        let kind = match what {
            "vertex" => "vertices",
            "normal" => "normals",
            _ => "texture coordinates",
        };
        return Err(format!("face refers to {what} {i}, but only {n} {kind} precede it"));
    }
    Ok(abs as u32)
}

/// An `f` statement after the `f`: corners separated by ASCII blanks, each `v`, `v/vt`,
/// `v//vn` or `v/vt/vn` (an empty `vt` or `vn` is none), each index 1-based or counting back from
/// the last of its kind read so far, appended to `out` (a corner without `vt` or `vn` gets
/// [`NO_INDEX`] there); the corner count. On a bad face `out` is left as it was and the message
/// says why. Scanned byte by byte: the words and the `/` fields of a face line are most of an
/// OBJ read, and the standard splitters cost twice this.
fn face(rest: &str, out: &mut Corners<'_>, seen: Seen) -> Result<u32, String> {
    let before = out.indices.len();
    let corner = |tok: &[u8], out: &mut Corners<'_>| -> Result<(), String> {
        let shown = || String::from_utf8_lossy(tok).into_owned();
        // The `/`-separated fields: vertex, then `vt`, then `vn`.
        let mut f = [&tok[..0]; 3];
        let (mut k, mut start) = (0usize, 0usize);
        for (i, &c) in tok.iter().enumerate() {
            if c == b'/' {
                if k == 2 {
                    return Err(format!("face corner \"{}\" is not v, v/vt, v//vn or v/vt/vn", shown()));
                }
                f[k] = &tok[start..i];
                k += 1;
                start = i + 1;
            }
        }
        f[k] = &tok[start..];
        let Some(i) = int(f[0]) else { return Err(format!("face corner \"{}\" is not a vertex index", shown())) };
        let v = resolve(i, seen.vertices, "vertex")?;
        let other = |s: &[u8], count: usize, what: &str| -> Result<u32, String> {
            if s.is_empty() {
                return Ok(NO_INDEX);
            }
            let Some(i) = int(s) else {
                return Err(format!("face corner \"{}\": \"{}\" is not a {what} index", shown(), String::from_utf8_lossy(s)));
            };
            resolve(i, count, what)
        };
        let t = other(f[1], seen.uvs, "texture coordinate")?;
        let n = other(f[2], seen.normals, "normal")?;
        out.push(v, t, n);
        Ok(())
    };
    let bad = |out: &mut Corners<'_>, message: String| {
        out.truncate(before);
        Err(message)
    };
    let b = rest.as_bytes();
    let idx = |i: i64, count: usize| -> Option<u32> {
        let count = count as i64;
        let abs = if i > 0 { i - 1 } else { count + i };
        (abs >= 0 && abs < count).then_some(abs as u32)
    };
    let opt = |i: i64, count: usize| if i == ABSENT { Some(NO_INDEX) } else { idx(i, count) };
    let mut i = 0;
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i == b.len() {
            break;
        }
        // The usual corner (short numbers, in range) read in place, in one pass; anything else,
        // and every error, by `corner`, which says what is wrong.
        let start = i;
        let fast = corner_numbers(b, &mut i)
            .filter(|_| i == b.len() || b[i].is_ascii_whitespace())
            .and_then(|[v, t, n]| Some((idx(v, seen.vertices)?, opt(t, seen.uvs)?, opt(n, seen.normals)?)));
        match fast {
            Some((v, t, n)) => out.push(v, t, n),
            None => {
                i = start;
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                if let Err(m) = corner(&b[start..i], out) {
                    return bad(out, m);
                }
            }
        }
    }
    let count = out.indices.len() - before;
    if count < 3 {
        return bad(out, format!("a face needs at least 3 corners, found {count}"));
    }
    u32::try_from(count).or_else(|_| bad(out, format!("a face of {count} corners is more than skelport reads")))
}

/// Bytes charged per byte of OBJ text: what the reader builds from it at most. The densest
/// statement is a face corner (`f 1 2 3 …`: 2 bytes a corner) holding a vertex, a `vt` and a
/// `vn` index (12 bytes), with a vector's spare capacity, and the mesh made from it (positions
/// as `v 0 0 0`, 8 bytes for 24, likewise): 16 covers both.
pub const BUDGET_PER_BYTE: u64 = 16;

/// Parse OBJ text. `file` names the source in errors. The decode budget is that of a file of
/// its size ([`skelport_ir::Budget::for_input`]).
pub fn parse(bytes: &[u8], file: &str) -> Result<ObjMesh, ObjError> {
    parse_budgeted(bytes, file, &skelport_ir::Budget::for_input(bytes.len() as u64))
}

/// [`parse`], charging `budget` [`BUDGET_PER_BYTE`] × the text's bytes before anything is built.
pub fn parse_budgeted(bytes: &[u8], file: &str, budget: &skelport_ir::Budget) -> Result<ObjMesh, ObjError> {
    budget.charge((bytes.len() as u64).saturating_mul(BUDGET_PER_BYTE), file, "the mesh (its vertices, faces and groups)")?;
    // simdutf8 vouches for valid text faster than std (SIMD); std's error gives the place.
    let text = match simdutf8::basic::from_utf8(bytes) {
        Ok(text) => text,
        Err(_) => std::str::from_utf8(bytes).map_err(|e| ObjError::Encoding { file: file.into(), offset: e.valid_up_to() })?,
    };
    // NUL is valid UTF-8 but never OBJ text: UTF-16 (every other byte 0) or a damaged file, whose
    // lines would otherwise be skipped as unknown statements and read as an empty mesh.
    if let Some(i) = memchr::memchr(0, bytes) {
        return Err(ObjError::Line {
            file: file.into(),
            line: bytes[..i].iter().filter(|&&b| b == b'\n').count() + 1,
            message: format!("NUL byte at offset {i}: the file is UTF-16 or damaged, and OBJ is plain text; save it as UTF-8 (or ASCII)"),
        });
    }
    let mut m = ObjMesh::default();
    let mut group_index: BTreeMap<String, u32> = BTreeMap::new();
    let mut current: Option<u32> = None;
    // Per corner while reading; dropped at the end when no corner names one.
    let (mut corner_uvs, mut corner_normals) = (Vec::new(), Vec::new());
    let bytes = text.as_bytes();
    let (mut at, mut line) = (0, 0);
    while at < bytes.len() {
        line += 1;
        // The common lines (`v`, `vt`, `f` of plain numbers, nothing else on the line) read in
        // one pass from the cursor to the next line's start, without looking for the line's end
        // first (a SIMD search per line cost more than the reading of a `v` line).
        match &bytes[at..] {
            [b'v', b' ', ..] => {
                if let Some((p, next)) = plain_vertex(bytes, at + 2) {
                    m.positions.push(p);
                    at = next;
                    continue;
                }
            }
            [b'v', b't', b' ', ..] => {
                if let Some((t, next)) = plain_tex_coord(bytes, at + 3) {
                    m.uvs.push(t);
                    at = next;
                    continue;
                }
            }
            [b'f', b' ', ..] => {
                let (mut out, seen) = Corners::of(&mut m, &mut corner_uvs, &mut corner_normals);
                if let Some((count, next)) = plain_face(bytes, at + 2, &mut out, seen) {
                    m.faces.counts.push(count);
                    m.face_groups.push(current);
                    at = next;
                    continue;
                }
            }
            _ => {}
        }
        // Any other line as `str::lines` gives it.
        let raw = match memchr::memchr(b'\n', &bytes[at..]) {
            Some(k) => {
                let raw = &text[at..at + k];
                at += k + 1;
                raw.strip_suffix('\r').unwrap_or(raw)
            }
            // A last line without `\n` keeps a `\r`, as `str::lines` keeps it.
            None => {
                let raw = &text[at..];
                at = bytes.len();
                raw
            }
        };
        // The common statements the one-pass readers did not take (more words, other numbers)
        // read without trimming (Unicode-aware) or splitting the line first, any other
        // one-word-longer statement skipped. Anything these do not take (a leading blank, a bad
        // number, a trailing Unicode space) is read by the general code below with the same
        // `vertex`/`face`, which gives the error.
        match raw.as_bytes() {
            [b'v', b' ', ..] => {
                if let Some(p) = vertex(raw[2..].split_ascii_whitespace()) {
                    m.positions.push(p);
                    continue;
                }
            }
            [b'v', b't', b' ', ..] => {
                if let Some(t) = tex_coord(raw[3..].split_ascii_whitespace()) {
                    m.uvs.push(t);
                    continue;
                }
            }
            [b'v', b'n', b' ', ..] => {
                if let Some(n) = vertex(raw[3..].split_ascii_whitespace()) {
                    m.normals.push(n);
                    continue;
                }
            }
            [b'f', b' ', ..] => {
                let (mut out, seen) = Corners::of(&mut m, &mut corner_uvs, &mut corner_normals);
                if let Ok(count) = face(&raw[2..], &mut out, seen) {
                    m.faces.counts.push(count);
                    m.face_groups.push(current);
                    continue;
                }
            }
            // Any other first word of two or more characters ("#", "usemtl", "vp"...) is none of
            // `v`, `vt`, `vn`, `f`, `g`: skipped, as below, without splitting the line into words.
            [b'v', b't' | b'n', ..] => {}
            [a, b, ..] if a.is_ascii_graphic() && b.is_ascii_graphic() => continue,
            _ => {}
        }
        let l = raw.trim();
        let mut it = l.split_ascii_whitespace();
        match it.next() {
            Some("v") => {
                let p =
                    vertex(it).ok_or_else(|| ObjError::Line { file: file.into(), line, message: "v needs three finite numbers".into() })?;
                m.positions.push(p);
            }
            Some("vt") => {
                let t = tex_coord(it).ok_or_else(|| ObjError::Line {
                    file: file.into(),
                    line,
                    message: "vt needs one or two finite numbers (u, v)".into(),
                })?;
                m.uvs.push(t);
            }
            Some("vn") => {
                let n = vertex(it).ok_or_else(|| ObjError::Line {
                    file: file.into(),
                    line,
                    message: "vn needs three finite numbers".into(),
                })?;
                m.normals.push(n);
            }
            Some("f") => {
                let (mut out, seen) = Corners::of(&mut m, &mut corner_uvs, &mut corner_normals);
                let count = face(&l[1..], &mut out, seen).map_err(|message| ObjError::Line { file: file.into(), line, message })?;
                m.faces.counts.push(count);
                m.face_groups.push(current);
            }
            Some("g") => {
                let name = l[1..].trim().to_string();
                let next = group_index.len() as u32;
                let id = *group_index.entry(name.clone()).or_insert_with(|| {
                    m.group_names.push(name);
                    next
                });
                current = Some(id);
            }
            _ => {}
        }
    }
    if m.positions.is_empty() {
        return Err(ObjError::Line {
            file: file.into(),
            line: text.lines().count().max(1),
            message: "the file has no vertex (`v`) lines, so it is empty, cut short or not an OBJ mesh; export the mesh again".into(),
        });
    }
    // A list that a bad face line began and then dropped holds only absent indices.
    if corner_uvs.iter().any(|&i| i != NO_INDEX) {
        m.corner_uvs = corner_uvs;
    }
    if corner_normals.iter().any(|&i| i != NO_INDEX) {
        m.corner_normals = corner_normals;
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 38: what the mesh builds is charged before it is built. Faces of one-digit corners
    /// (`f 1 1 1 …`) are the densest OBJ; under a budget of the file's size times less than
    /// [`BUDGET_PER_BYTE`] it stops naming the mesh, and reads within 64 times its size.
    #[test]
    fn the_mesh_is_charged_before_it_is_built() {
        let text = format!("v 0 0 0\n{}", "f 1 1 1 1 1 1 1 1\n".repeat(100_000));
        let budget = skelport_ir::Budget::with_limit(8 * text.len() as u64);
        let e = parse_budgeted(text.as_bytes(), "crafted.obj", &budget).unwrap_err().to_string();
        assert!(e.starts_with("crafted.obj: the mesh (its vertices, faces and groups): decode budget exceeded"), "{e}");
        let budget = skelport_ir::Budget::with_limit(64 * text.len() as u64);
        let m = parse_budgeted(text.as_bytes(), "crafted.obj", &budget).unwrap();
        assert_eq!(m.faces.counts.len(), 100_000);
    }

    /// The groups' vertex lists equal the plain rule's: each group's vertices are those of its
    /// faces, sorted and unique (here from a `BTreeSet`), whatever groups share vertices.
    #[test]
    fn vertex_groups_equal_the_plain_rule() {
        let mut next = skelport_ir::testing::xorshift(0x7a3c_11d0_5e9f_2b41);
        for round in 0..300 {
            let (vertices, groups) = (1 + next() as usize % 40, 1 + next() as usize % 5);
            let mut m = ObjMesh { positions: vec![DVec3::ZERO; vertices], ..Default::default() };
            m.group_names = (0..groups).map(|g| format!("g{g}")).collect();
            for _ in 0..next() % 60 {
                let corners = 3 + next() as u32 % 3;
                m.faces.counts.push(corners);
                m.faces.indices.extend((0..corners).map(|_| (next() % vertices as u64) as u32));
                // Neighbouring faces mostly in one group, as in exported meshes; some in none.
                let g = next() % (groups as u64 + 1);
                m.face_groups.push((g < groups as u64).then_some(if round % 2 == 0 { g as u32 } else { 0 }));
            }
            let mut want = vec![std::collections::BTreeSet::new(); groups];
            for (f, g) in m.faces.iter().zip(&m.face_groups) {
                if let Some(g) = g {
                    want[*g as usize].extend(f.iter().copied());
                }
            }
            let got: Vec<Vec<u32>> = m.vertex_groups().into_iter().map(|g| g.vertices).collect();
            let want: Vec<Vec<u32>> = want.into_iter().map(|s| s.into_iter().collect()).collect();
            assert_eq!(got, want, "round {round}");
        }
    }

    #[test]
    fn groups_numbering_and_errors() {
        let src = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nvt 0 0\nvt 1 0\nvt 1 1\nvt 0 1\ng body\nf 1/1 2/2 3/3 4/4\ng joint-a\nf -4 -3 -2\ng body\nf 2 3 4\n";
        let m = parse(src, "t.obj").unwrap();
        assert_eq!(m.positions.len(), 4);
        assert_eq!(m.faces.counts, vec![4, 3, 3]);
        let g = m.vertex_groups();
        assert_eq!(g[0].name, "body");
        assert_eq!(g[0].vertices, vec![0, 1, 2, 3]);
        assert_eq!(g[1].vertices, vec![0, 1, 2]);
        let e = parse(b"v 0 0 0\nf 1 2 3\n", "bad.obj").unwrap_err().to_string();
        assert!(e.starts_with("bad.obj:2:") && e.contains("vertex 2"), "{e}");
        let e = parse(b"v 0 nan 0\n", "bad.obj").unwrap_err().to_string();
        assert!(e.contains("bad.obj:1"), "{e}");
        // A `vt` index past the `vt` lines is an error at its line, as a vertex index is.
        let e = parse(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nf 1/1 2/2 3/1\n", "bad.obj").unwrap_err().to_string();
        assert!(e.starts_with("bad.obj:5:") && e.contains("texture coordinate 2, but only 1 texture coordinates"), "{e}");
        let e = parse(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nf 1//1 2//1 3//1\n", "bad.obj").unwrap_err().to_string();
        assert!(e.starts_with("bad.obj:4:") && e.contains("normal 1, but only 0 normals"), "{e}");
        let e = parse(b"v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0 0\nf 1/1/1/1 2 3\n", "bad.obj").unwrap_err().to_string();
        assert!(e.contains("not v, v/vt, v//vn or v/vt/vn"), "{e}");
        let e = parse(b"v 0 0 0\nvt 0 x\n", "bad.obj").unwrap_err().to_string();
        assert!(e.starts_with("bad.obj:2:") && e.contains("vt needs"), "{e}");
        // Lines are counted as `str::lines` counts them, across lines read in one pass (CRLF,
        // empty, trailing blanks) and lines read whole.
        let e = parse(b"v 0 0 0\r\n\r\n\nv 1 0 0 \r\n# c\nvt 0\t\nv 0 1 0\nf 1 2 3\nf 1 2 4\n", "bad.obj").unwrap_err().to_string();
        assert!(e.starts_with("bad.obj:9:") && e.contains("vertex 4"), "{e}");
    }

    /// Two quads sharing the edge 2–3, their UVs split along it (a seam): the corners keep
    /// their own `vt`; the shared vertices are not split. Relative indices count back per kind.
    #[test]
    fn uvs_and_normals_per_corner_with_seams() {
        let src = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 1 2 0\nv 0 2 0\n\
vt 0 0\nvt 1 0\nvt 1 0.5\nvt 0 0.5\nvt 0 0.6\nvt 1 0.6\nvt 1 1\nvt 0 1\nvn 0 0 1\n\
f 1/1/1 2/2/1 3/3/1 4/4/1\nf -3/-3/-1 -4/-4/-1 -2/-2/-1 -1/-1/-1\n";
        let m = parse(src, "t.obj").unwrap();
        assert_eq!((m.positions.len(), m.uvs.len(), m.normals.len()), (6, 8, 1));
        assert_eq!(m.corner_uvs, vec![0, 1, 2, 3, 5, 4, 6, 7]);
        assert_eq!(m.corner_normals, vec![0; 8]);
        let mesh = m.to_mesh("t");
        match &mesh.uvs[0].uvs {
            Uvs::PerCorner(c) => {
                assert_eq!(c.len(), 8);
                // Vertex 2 (index 2) has v = 0.5 in the first quad and 0.6 in the second.
                assert_eq!((c[2], c[4]), (DVec2::new(1.0, 0.5), DVec2::new(1.0, 0.6)));
            }
            other => panic!("a seam must stay per corner: {other:?}"),
        }
        // One normal for every corner: stored per vertex (unused vertices get zero).
        assert_eq!(mesh.normals, Some(Normals::PerVertex(vec![DVec3::Z; 6])));
        assert_eq!(m.corners_without_uv(), 0);
        // Without the seam (the second quad reusing the first's vt 3 and 4) the UVs are per vertex.
        let src2 = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 1 2 0\nv 0 2 0\nvt 0 0\nvt 1 0\nvt 1 .5\nvt 0 .5\nvt 1 1\nvt 0 1\n\
f 1/1 2/2 3/3 4/4\nf 4/4 3/3 5/5 6/6\n";
        let m2 = parse(src2, "t.obj").unwrap();
        assert!(m2.corner_normals.is_empty() && m2.normal_attribute().is_none());
        match m2.uv_set().unwrap().uvs {
            Uvs::PerVertex(v) => assert_eq!(v[4], DVec2::new(1.0, 1.0)),
            other => panic!("no seam, per vertex: {other:?}"),
        }
        // A face without `vt` among faces with: its corners get (0, 0) and are counted; a face
        // without `vn` drops the normals.
        let src3 = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nvt 0.5 0.5\nvn 0 0 1\nf 1/1/1 2/1/1 3/1/1\nf 1 2 3\n";
        let m3 = parse(src3, "t.obj").unwrap();
        assert_eq!((m3.corners_without_uv(), m3.corners_without_normal()), (3, 3));
        assert!(m3.normal_attribute().is_none());
        assert_eq!(
            m3.uv_set().unwrap().uvs,
            Uvs::PerCorner(vec![DVec2::splat(0.5), DVec2::splat(0.5), DVec2::splat(0.5), DVec2::ZERO, DVec2::ZERO, DVec2::ZERO])
        );
    }

    #[test]
    fn int_equals_std_parse() {
        for t in [
            "0",
            "1",
            "-1",
            "+7",
            "",
            "-",
            "+",
            "1.0",
            "12a",
            "٣",
            "999999999999999999",
            "9999999999999999999",
            "-9223372036854775808",
            " 1",
            "1 ",
        ] {
            assert_eq!(int(t.as_bytes()), t.parse::<i64>().ok(), "{t:?}");
        }
    }

    /// The byte-level reading of common lines must give what the general reader gives: the same
    /// mesh or the same error. A leading blank sends every line to the general reader.
    #[test]
    fn plain_lines_read_as_the_general_reader_reads_them() {
        let lines = [
            "v 1 2 3",
            "v -0.3492 7.3299 1.4076",
            "v  1   2\t3",
            "v 1.5 -2 3e2 1",
            "v 1 nan 2",
            "v 1 2",
            "v 1 2 3\u{a0}",
            "v 1 2 x",
            "vt 0.1 0.2",
            "vt 0.1",
            "vt 0.1 0.2 0.3",
            "vt 1 nan",
            "vt",
            "vn 0 0 1",
            "vn 0 1",
            "vn 0 0 1\u{a0}",
            "vp 1 2",
            "f 1 2 3",
            "f 1/1/1 2/1/1 -1/-1/-1",
            "f 1//1 2//1 3//1",
            "f 1/1/1/1 2 3",
            "f 1/x 2 3",
            "f 1/1 2/2 3/3",
            "f 1/ 2/ 3/",
            "f 1/1/ 2/1/ 3/1/",
            "f 1/-1 2/-1 3/-1",
            "f 1/- 2 3",
            "f 1/1//1 2 3",
            "f 12345678901234567890 1 2",
            "f 1/1 2/2 3/3 4/4",
            "f 4849/1 1/2 2/3",
            "f -1 -2 -3",
            "f 1 2",
            "f 0 1 2",
            "f 1 x 3",
            "f 1 2 3\u{3000}",
            "f 1// 2//5 +3",
            "f 99 1 2",
            "g body",
            "g",
            "gx",
            "# comment",
            "s off",
            "usemtl skin",
            "",
            "\tv 1 2 3",
        ];
        let mut next = skelport_ir::testing::xorshift(0x51ed_2701_9e37_79b9);
        for _ in 0..4_000 {
            let x = next();
            // Some vertices first, so that most faces can be valid.
            let mut text = "v 0 0 0\nv 1 0 0\n".repeat((x % 4) as usize);
            for _ in 0..(x % 16) {
                let x = next();
                text.push_str(lines[(x >> 7) as usize % lines.len()]);
                text.push_str(if x & 1 == 0 { "\n" } else { "\r\n" });
            }
            let spaced: String = text.split_inclusive('\n').map(|l| format!(" {l}")).collect();
            let show = |r: Result<ObjMesh, ObjError>| match r {
                Ok(m) => format!("{m:?}"),
                Err(e) => e.to_string(),
            };
            assert_eq!(show(parse(text.as_bytes(), "t.obj")), show(parse(spaced.as_bytes(), "t.obj")), "{text:?}");
        }
    }

    #[test]
    fn fast_decimals_equal_std_parse() {
        let cases = [
            "0",
            "-0",
            "-0.0000",
            "3.2411",
            "-3.2411",
            "+1.5",
            "7.",
            ".5",
            "-.5",
            "123456789012345",
            "1234567890123456",
            "0.1234567890123456789",
            "0.0000000000000000000001",
            "1e5",
            "-2.5E-3",
            "inf",
            "nan",
            "",
            "-",
            ".",
            "1.2.3",
            "0x10",
            "9007199254740993",
            "0.30000000000000004",
            "17.976931348623157",
        ];
        for c in cases {
            let (a, b) = (parse_f64(c), c.parse::<f64>().ok());
            assert_eq!(a.map(f64::to_bits), b.map(f64::to_bits), "{c}");
        }
        // Every 4-decimal value MakeHuman writes, both signs.
        for i in 0..200_000u32 {
            let t = format!("{}.{:04}", i / 10_000, i % 10_000);
            assert_eq!(parse_f64(&t).map(f64::to_bits), t.parse::<f64>().ok().map(f64::to_bits), "{t}");
            let t = format!("-{t}");
            assert_eq!(parse_f64(&t).map(f64::to_bits), t.parse::<f64>().ok().map(f64::to_bits), "{t}");
        }
    }

    #[test]
    #[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
    fn base_mesh_reads_with_its_numbering() {
        let Some(p) = skelport_ir::testing::corpus_file("mpfb/3dobjs/base.obj") else { return };
        let m = parse(&std::fs::read(p).unwrap(), "base.obj").unwrap();
        assert_eq!(m.positions.len(), 19158);
        let groups = m.vertex_groups();
        let body = groups.iter().find(|g| g.name == "body").unwrap();
        assert_eq!(body.vertices.len(), 13380);
        // 21,334 `vt` for 19,158 vertices: the UV seams stay per corner, every corner has one.
        assert_eq!(m.uvs.len(), 21334);
        assert_eq!(m.corner_uvs.len(), m.faces.indices.len());
        assert_eq!(m.corners_without_uv(), 0);
        assert!(m.uv_set().unwrap().uvs.is_per_corner());
        assert!(m.normals.is_empty() && m.normal_attribute().is_none());
        assert!(groups.iter().filter(|g| g.name.starts_with("joint-")).count() > 100);
    }

    /// The general readers of a face line: its corners (vertex, vt, vn), or `None` for an error.
    fn general_face(rest: &str, seen: Seen) -> Option<Vec<(u32, u32, u32)>> {
        let (mut i, mut t, mut n) = (Vec::new(), Vec::new(), Vec::new());
        face(rest, &mut Corners { indices: &mut i, uvs: &mut t, normals: &mut n }, seen).ok()?;
        Some(corners_of(&i, &t, &n))
    }

    /// Corners as (vertex, vt, vn), from lists that [`Corners`] left empty while no corner had
    /// a `vt` or `vn`.
    fn corners_of(i: &[u32], t: &[u32], n: &[u32]) -> Vec<(u32, u32, u32)> {
        let at = |l: &[u32], k: usize| if l.is_empty() { NO_INDEX } else { l[k] };
        (0..i.len()).map(|k| (i[k], at(t, k), at(n, k))).collect()
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(5000))]
        /// A face line the one-pass reader takes gives the corners the general reader gives, and
        /// it leaves the output as it was when it does not take one; the usual corners (in range,
        /// `v`, `v/vt`, `v//vn`, `v/vt/vn`, one blank between) it always takes.
        #[test]
        fn the_plain_face_reader_agrees_with_the_general_one(
            rest in "[ \t]?([0-9]{1,3}(/[0-9]{0,3}){0,2}|-1|\\+2|1/-1|x|1e2|[0-9]{9,25})([ \t\r]{1,2}([0-9]{1,3}(/[0-9]{0,3}){0,2}|-1|x)){0,5}[ \t\r]?",
            usual in proptest::collection::vec((1u32..=50, 0u32..=50, 0u32..=50, 0usize..4), 3..7),
        ) {
            let seen = Seen { vertices: 50, uvs: 40, normals: 30 };
            // The line in a file, as the one-pass reader sees it (`f ` and the next line around
            // it) and as the general reader does (`str::lines` drops a `\r` before the `\n`).
            let text = format!("f {rest}\nv 1 2 3\n");
            let general = general_face(rest.strip_suffix('\r').unwrap_or(&rest), seen);
            let mut got = (vec![7u32], vec![7u32], vec![7u32]);
            let plain = plain_face(text.as_bytes(), 2, &mut Corners { indices: &mut got.0, uvs: &mut got.1, normals: &mut got.2 }, seen);
            match plain {
                Some((count, next)) => {
                    let corners: Vec<(u32, u32, u32)> = got.0[1..].iter().zip(&got.1[1..]).zip(&got.2[1..]).map(|((a, b), c)| (*a, *b, *c)).collect();
                    proptest::prop_assert_eq!(count as usize, corners.len());
                    proptest::prop_assert_eq!(next, rest.len() + 3, "{:?}", rest);
                    proptest::prop_assert_eq!(Some(corners), general, "{:?}", rest);
                }
                None => proptest::prop_assert_eq!(got, (vec![7u32], vec![7u32], vec![7u32]), "{:?}", rest),
            }
            let line: Vec<String> = usual
                .iter()
                .map(|&(v, t, n, shape)| match shape {
                    0 => format!("{v}"),
                    1 => format!("{v}/{}", t.clamp(1, 40)),
                    2 => format!("{v}//{}", n.clamp(1, 30)),
                    _ => format!("{v}/{}/{}", t.clamp(1, 40), n.clamp(1, 30)),
                })
                .collect();
            let line = line.join(" ");
            let mut got = (Vec::new(), Vec::new(), Vec::new());
            let text = format!("f {line}\r\n");
            let plain = plain_face(text.as_bytes(), 2, &mut Corners { indices: &mut got.0, uvs: &mut got.1, normals: &mut got.2 }, seen);
            proptest::prop_assert_eq!(plain.map(|(c, next)| (c as usize, next)), Some((usual.len(), text.len())), "{}", line);
            proptest::prop_assert_eq!(Some(corners_of(&got.0, &got.1, &got.2)), general_face(&line, seen));
        }

        /// `v` and `vt` lines the one-pass readers take give the general readers' values, bit for
        /// bit; plain decimals they always take.
        #[test]
        fn the_plain_number_readers_agree_with_the_general_ones(
            words in proptest::collection::vec("(-?[0-9]{1,4}(\\.[0-9]{0,9})?|\\+1|1e-3|\\.5|-\\.5|nan|inf|x|[0-9]{16,18}\\.5)", 0..5),
            blank in "[ \t]{1,2}",
            plain in proptest::collection::vec("-?[0-9]{1,4}\\.[0-9]{1,9}", 3),
        ) {
            let rest = words.join(&blank);
            let bits = |v: Option<DVec3>| v.map(|p| [p.x, p.y, p.z].map(f64::to_bits));
            let bits2 = |v: Option<DVec2>| v.map(|p| [p.x, p.y].map(f64::to_bits));
            // Each line followed by another, as in a file: the readers stop at its end.
            let v_line = format!("v {rest}\nv 1 2 3");
            if let Some((p, next)) = plain_vertex(v_line.as_bytes(), 2) {
                proptest::prop_assert_eq!(next, rest.len() + 3);
                proptest::prop_assert_eq!(bits(Some(p)), bits(vertex(rest.split_ascii_whitespace())), "{:?}", v_line);
            }
            let vt_line = format!("vt {rest}\nv 1 2 3");
            if let Some((t, next)) = plain_tex_coord(vt_line.as_bytes(), 3) {
                proptest::prop_assert_eq!(next, rest.len() + 4);
                proptest::prop_assert_eq!(bits2(Some(t)), bits2(tex_coord(rest.split_ascii_whitespace())), "{:?}", vt_line);
            }
            let rest = plain.join(&blank);
            let v_line = format!("v {rest}{blank}\r\n");
            let p = plain_vertex(v_line.as_bytes(), 2);
            proptest::prop_assert_eq!(p.map(|(_, next)| next), Some(v_line.len()));
            proptest::prop_assert_eq!(bits(p.map(|(p, _)| p)), bits(vertex(rest.split_ascii_whitespace())));
            let vt_line = format!("vt {}", plain[..2].join(&blank));
            let t = plain_tex_coord(vt_line.as_bytes(), 3);
            proptest::prop_assert_eq!(t.map(|(_, next)| next), Some(vt_line.len()));
            proptest::prop_assert_eq!(bits2(t.map(|(t, _)| t)), bits2(tex_coord(plain[..2].iter().map(String::as_str))));
        }
    }
}
