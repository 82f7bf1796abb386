//! # skelport-obj — Wavefront OBJ meshes
//!
//! MakeHuman rigs and weights refer to the base mesh's vertices by index, and its joint cubes and
//! helper geometry by face group (`g`). This reader keeps the file's vertex numbering exactly and
//! turns `g` groups into vertex groups (a vertex belongs to the groups of the faces that use it).
//!
//! Hand-written on purpose: OBJ is line-based and we need only `v`, `f` and `g`, with exact
//! numbering; general crates (tobj) re-index vertices per material or group.

#![forbid(unsafe_code)]

use skelport_ir::{DVec3, Faces, Mesh, VertexGroup};
use std::collections::BTreeMap;

/// Errors reading OBJ, with the line.
#[derive(Debug, thiserror::Error)]
pub enum ObjError {
    #[error("{file}:{line}: {}", skelport_ir::with_hint(.message, "fix that line or export the mesh again"))]
    Line { file: String, line: usize, message: String },
    #[error("{file}: not UTF-8 text at byte {offset}; OBJ files are text: save it as UTF-8 or ASCII, or export the mesh again")]
    Encoding { file: String, offset: usize },
}

/// A parsed OBJ: positions in file order, polygons, and face groups as vertex sets.
#[derive(Debug, Clone, Default)]
pub struct ObjMesh {
    pub positions: Vec<DVec3>,
    pub faces: Faces,
    /// The `g` group of each face (index into `group_names`), or `None` before any `g`.
    pub face_groups: Vec<Option<u32>>,
    pub group_names: Vec<String>,
}

impl ObjMesh {
    /// Vertices of each named group (sorted, unique), in first-seen group order.
    pub fn vertex_groups(&self) -> Vec<VertexGroup> {
        // (vertex, group) pairs bucketed by vertex, then each group filled in vertex order: sorted
        // and unique without sorting (a vertex's faces are usually in the same group).
        let n = self.positions.len();
        let mut start = vec![0u32; n + 1];
        for (f, g) in self.faces.iter().zip(&self.face_groups) {
            if g.is_some() {
                f.iter().for_each(|&v| start[v as usize + 1] += 1);
            }
        }
        for i in 0..n {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let mut groups_of = vec![0u32; start[n] as usize];
        for (f, g) in self.faces.iter().zip(&self.face_groups) {
            if let Some(g) = g {
                for &v in f {
                    groups_of[fill[v as usize] as usize] = *g;
                    fill[v as usize] += 1;
                }
            }
        }
        let mut sets: Vec<Vec<u32>> = vec![Vec::new(); self.group_names.len()];
        for v in 0..n {
            for &g in &groups_of[start[v] as usize..start[v + 1] as usize] {
                let set = &mut sets[g as usize];
                if set.last() != Some(&(v as u32)) {
                    set.push(v as u32);
                }
            }
        }
        self.group_names.iter().zip(sets).map(|(n, v)| VertexGroup { name: n.clone(), vertices: v, weights: None }).collect()
    }

    /// The mesh as an IR mesh (positions as in the file, groups from `g`).
    pub fn to_mesh(&self, name: &str) -> Mesh {
        Mesh {
            name: name.into(),
            positions: self.positions.clone(),
            normals: None,
            uvs: Vec::new(),
            faces: self.faces.clone(),
            groups: self.vertex_groups(),
            ext: Default::default(),
        }
    }
}

/// A decimal, correctly rounded (the shared number parser of the text readers).
fn parse_f64(t: &str) -> Option<f64> {
    skelport_ir::num::fast_decimal(t)
}

/// The lines of `text` as `str::lines` gives them (split at `\n`, a `\r` before it dropped, no
/// empty last line), found with the memchr crate's SIMD search: `str::lines` was a third of an
/// OBJ read.
fn lines(text: &str) -> impl Iterator<Item = &str> {
    let mut rest = text;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let line = match memchr::memchr(b'\n', rest.as_bytes()) {
            Some(k) => {
                let line = &rest[..k];
                rest = &rest[k + 1..];
                line.strip_suffix('\r').unwrap_or(line)
            }
            // A last line without `\n` keeps a `\r`, as `str::lines` keeps it.
            None => std::mem::take(&mut rest),
        };
        Some(line)
    })
}

/// A `v` statement's words after the `v`: three finite numbers (more are ignored).
fn vertex<'a>(mut words: impl Iterator<Item = &'a str>) -> Option<DVec3> {
    let mut next = || words.next().and_then(parse_f64).filter(|v| v.is_finite());
    Some(DVec3::new(next()?, next()?, next()?))
}

/// An `f` statement's words after the `f`: each corner's vertex number (before any `/`), 1-based
/// or counting back from the last of the `vertices` read so far, appended to `indices`; the
/// corner count. On a bad face `indices` is left as it was and the message says why.
fn face<'a>(words: impl Iterator<Item = &'a str>, indices: &mut Vec<u32>, vertices: usize) -> Result<u32, String> {
    let before = indices.len();
    let n = vertices as i64;
    let bad = |indices: &mut Vec<u32>, message: String| {
        indices.truncate(before);
        Err(message)
    };
    for tok in words {
        let idx = tok.as_bytes().iter().position(|&c| c == b'/').map_or(tok, |k| &tok[..k]);
        let Ok(i) = idx.parse::<i64>() else {
            return bad(indices, format!("face corner \"{tok}\" is not a vertex index"));
        };
        let abs = if i > 0 { i - 1 } else { n + i };
        if abs < 0 || abs >= n {
            return bad(indices, format!("face refers to vertex {i}, but only {n} vertices precede it"));
        }
        indices.push(abs as u32);
    }
    let count = indices.len() - before;
    if count < 3 {
        return bad(indices, format!("a face needs at least 3 corners, found {count}"));
    }
    u32::try_from(count).or_else(|_| bad(indices, format!("a face of {count} corners is more than skelport reads")))
}

/// Parse OBJ text. `file` names the source in errors.
pub fn parse(bytes: &[u8], file: &str) -> Result<ObjMesh, ObjError> {
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
    for (ln, raw) in lines(text).enumerate() {
        let line = ln + 1;
        // The common lines read without trimming (Unicode-aware) or splitting: `v`/`f` straight
        // from their words, any other one-word-longer statement skipped. Anything these do not
        // take (a leading blank, a bad number, a trailing Unicode space) is read by the general
        // code below with the same `vertex`/`face`, which gives the error.
        match raw.as_bytes() {
            [b'v', b' ', ..] => {
                if let Some(p) = vertex(raw[2..].split_ascii_whitespace()) {
                    m.positions.push(p);
                    continue;
                }
            }
            [b'f', b' ', ..] => {
                if let Ok(count) = face(raw[2..].split_ascii_whitespace(), &mut m.faces.indices, m.positions.len()) {
                    m.faces.counts.push(count);
                    m.face_groups.push(current);
                    continue;
                }
            }
            // A first word of two or more characters ("vt", "vn", "#", "usemtl"...) is none of
            // `v`, `f`, `g`: skipped, as below, without splitting the line into words.
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
            Some("f") => {
                let count = face(it, &mut m.faces.indices, m.positions.len()).map_err(|message| ObjError::Line {
                    file: file.into(),
                    line,
                    message,
                })?;
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
            line: lines(text).count().max(1),
            message: "the file has no vertex (`v`) lines, so it is empty, cut short or not an OBJ mesh; export the mesh again".into(),
        });
    }
    Ok(m)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_numbering_and_errors() {
        let src = b"v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\ng body\nf 1/1 2/2 3/3 4/4\ng joint-a\nf -4 -3 -2\ng body\nf 2 3 4\n";
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
    }

    /// `lines` splits as `str::lines` does, `\r` and empty lines included.
    #[test]
    fn lines_equal_str_lines() {
        let parts = ["v 1 2 3", "", "\r", "\n", "\r\n", "f", "\n\n", "x\r", "\r\r\n", "é"];
        let mut next = skelport_ir::testing::xorshift(0x0123_4567_89ab_cdef);
        for _ in 0..5_000 {
            let x = next();
            let text: String = (0..x % 9).map(|k| parts[((x >> (k * 5)) % parts.len() as u64) as usize]).collect();
            assert_eq!(lines(&text).collect::<Vec<_>>(), text.lines().collect::<Vec<_>>(), "{text:?}");
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
            "vn 0 0 1",
            "f 1 2 3",
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
    fn base_mesh_reads_with_its_numbering() {
        let Some(p) = skelport_ir::testing::corpus_file("mpfb/3dobjs/base.obj") else { return };
        let m = parse(&std::fs::read(p).unwrap(), "base.obj").unwrap();
        assert_eq!(m.positions.len(), 19158);
        let groups = m.vertex_groups();
        let body = groups.iter().find(|g| g.name == "body").unwrap();
        assert_eq!(body.vertices.len(), 13380);
        assert!(groups.iter().filter(|g| g.name.starts_with("joint-")).count() > 100);
    }
}
