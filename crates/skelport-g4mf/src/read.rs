//! G4MF → IR.

use crate::{accessor, container, quat_from_rotor, G4mfError};
use base64::Engine;
use serde_json::Value;
use skelport_ir::files::{self, FileError};
use skelport_ir::{
    Bone, BoneId, DMat3, DMat4, DVec2, DVec3, Diagnostics, Document, Faces, Frame, Influences, Mesh, ReadOptions, Skeleton, Skin,
    Transform, UvSet,
};
use skelport_ir::{Budget, FaultKind, Input, Place};
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

/// The extension namespace of this format.
pub const NAMESPACE: &str = "g4mf";

struct Ctx<'a> {
    file: &'a str,
    root: &'a Value,
    buffers: Vec<Option<Rc<Vec<u8>>>>,
    /// The conversion's decode budget: decoded accessors and every mesh instance's copy are
    /// charged before they are allocated.
    budget: Budget,
    /// Accessors decoded so far: instances of one mesh, and meshes sharing accessors, decode once.
    accessors: RefCell<HashMap<usize, Rc<Decoded>>>,
}

/// A decoded accessor: its components as f64, its vectorSize and its component type.
type Decoded = (Vec<f64>, usize, String);

/// A value that breaks a rule of G4MF (its type, its range), at `path`.
fn err(file: &str, path: impl Into<String>, message: impl Into<String>) -> G4mfError {
    err_of(FaultKind::Value, file, path, message)
}

/// A fault of `kind` at `path`: [`FaultKind::Reference`] for an index naming nothing,
/// [`FaultKind::Structure`] for items that do not fit together.
fn err_of(kind: FaultKind, file: &str, path: impl Into<String>, message: impl Into<String>) -> G4mfError {
    G4mfError::Json { file: file.into(), path: path.into(), message: message.into(), kind }
}

fn array<'v>(v: &'v Value, key: &str) -> &'v [Value] {
    v.get(key).and_then(Value::as_array).map(Vec::as_slice).unwrap_or(&[])
}

fn index(v: &Value, key: &str, len: usize, path: &str, file: &str) -> Result<Option<usize>, G4mfError> {
    match v.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(x) => match x.as_u64() {
            Some(i) if (i as usize) < len => Ok(Some(i as usize)),
            _ => Err(err_of(FaultKind::Reference, file, format!("{path}.{key}"), format!("{x} is not an index in range (0..{len})"))),
        },
    }
}

fn numbers(v: &Value, path: &str, file: &str) -> Result<Vec<f64>, G4mfError> {
    let a = v.as_array().ok_or_else(|| err(file, path, "expected an array of numbers"))?;
    a.iter()
        .enumerate()
        .map(|(i, x)| x.as_f64().filter(|f| f.is_finite()).ok_or_else(|| err(file, format!("{path}[{i}]"), "expected a finite number")))
        .collect()
}

/// Parse `.g4tf` bytes. Buffer URIs are resolved against the input's folder.
pub fn read_text(input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, G4mfError> {
    let (bytes, file) = (input.bytes, input.display_name());
    let file = file.as_str();
    let text = std::str::from_utf8(bytes).map_err(|e| G4mfError::Binary {
        file: file.into(),
        offset: e.valid_up_to(),
        message: "not UTF-8; .g4tf files are UTF-8 JSON".into(),
        kind: FaultKind::Encoding,
    })?;
    if text.starts_with('\u{feff}') {
        diag.warn("g4mf.bom", ".g4tf files must not start with a byte-order mark");
    }
    let budget = opts.budget_for(&input);
    budget.charge_json(text.as_bytes(), file, "the JSON (its value tree)")?;
    let root: Value = serde_json::from_str(text.trim_start_matches('\u{feff}')).map_err(|e| G4mfError::Syntax {
        file: file.into(),
        part: None,
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    let opts = ReadOptions { budget: Some(budget), ..opts.clone() };
    read_document(&root, &input, &[], &opts, diag)
}

/// Parse `.g4b` bytes. Only the JSON chunk and the chunks a buffer refers to are decoded.
pub fn read_binary(input: Input<'_>, opts: &ReadOptions, diag: &mut Diagnostics) -> Result<Document, G4mfError> {
    let file = input.display_name();
    let file = file.as_str();
    let chunks = container::split(input.bytes, file)?;
    let budget = opts.budget_for(&input);
    let json = match chunks.iter().position(|c| c.kind == container::JSON) {
        Some(i) => chunks[i].decode(i, &budget, file)?,
        None => Vec::new(),
    };
    budget.charge_json(&json, file, "the JSON chunk (its value tree)")?;
    let root: Value = serde_json::from_slice(&json).map_err(|e| G4mfError::Syntax {
        file: file.into(),
        part: Some("JSON chunk"),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
    })?;
    drop(json);
    let opts = ReadOptions { budget: Some(budget), ..opts.clone() };
    read_document(&root, &input, &chunks, &opts, diag)
}

/// Every buffer's bytes: a chunk (decoded on first use, shared by the buffers naming it), a
/// data URI, or a file beside the document (through [`files::read_referenced`]).
fn load_buffers(
    root: &Value,
    input: &Input<'_>,
    chunks: &[container::RawChunk<'_>],
    opts: &ReadOptions,
    budget: &Budget,
) -> Result<Vec<Option<Rc<Vec<u8>>>>, G4mfError> {
    let file = input.display_name();
    let file = file.as_str();
    let mut decoded: HashMap<usize, Rc<Vec<u8>>> = HashMap::new();
    let mut out = Vec::new();
    for (i, b) in array(root, "buffers").iter().enumerate() {
        let path = format!("buffers[{i}]");
        let len = b.get("byteLength").and_then(Value::as_u64).ok_or_else(|| err(file, &path, "byteLength is required"))? as usize;
        let data = if let Some(c) = b.get("chunk") {
            let ci = c.as_u64().map(|c| c as usize).filter(|&c| c < chunks.len()).ok_or_else(|| {
                err_of(
                    FaultKind::Reference,
                    file,
                    format!("{path}.chunk"),
                    format!("{c} is not a chunk of this file ({} chunks)", chunks.len()),
                )
            })?;
            let chunk = &chunks[ci];
            let enc = b.get("encoding").and_then(Value::as_str).unwrap_or("");
            let chunk_enc = if chunk.encoding == container::ZSTD { "Zstd" } else { "" };
            if enc != chunk_enc {
                return Err(err(
                    file,
                    format!("{path}.encoding"),
                    format!("buffer says encoding \"{enc}\" but its chunk is \"{chunk_enc}\""),
                ));
            }
            match decoded.get(&ci) {
                Some(d) => d.clone(),
                None => {
                    let d = Rc::new(chunk.decode(ci, budget, file)?);
                    decoded.insert(ci, d.clone());
                    d
                }
            }
        } else if let Some(uri) = b.get("uri").and_then(Value::as_str) {
            if let Some(rest) = uri.strip_prefix("data:") {
                let b64 = rest.split_once(";base64,").map(|x| x.1).ok_or_else(|| {
                    err_of(
                        FaultKind::Buffer,
                        file,
                        format!("{path}.uri"),
                        "data URIs must be base64 (`data:application/octet-stream;base64,...`)",
                    )
                })?;
                budget.charge(base64::decoded_len_estimate(b64.len()) as u64, file, &format!("{path}.uri"))?;
                Rc::new(
                    base64::engine::general_purpose::STANDARD
                        .decode(b64)
                        .map_err(|e| err_of(FaultKind::Buffer, file, format!("{path}.uri"), format!("bad base64: {e}")))?,
                )
            } else {
                match files::read_referenced(input, uri, opts, budget) {
                    Ok(d) => Rc::new(d),
                    Err(FileError::Refused(m)) => return Err(err(file, format!("{path}.uri"), m)),
                    Err(FileError::Budget(e)) => return Err(e.into()),
                }
            }
        } else {
            out.push(None);
            continue;
        };
        if data.len() < len {
            return Err(err_of(
                FaultKind::Structure,
                file,
                format!("{path}.byteLength"),
                format!("buffer declares {len} bytes but only {} exist", data.len()),
            ));
        }
        out.push(Some(data));
    }
    Ok(out)
}

/// The code of every structure-check finding (one of [`STRUCTURAL`](crate::STRUCTURAL)).
pub const STRUCTURE: &str = "g4mf.structure";

/// The spec's rules on buffers, buffer views, accessors and extensions, checked on every item
/// whether or not a skeleton or mesh uses it: what is used is checked again, as an error, when it
/// is decoded, so a broken item nobody uses only warns here (and `validate` calls the file
/// invalid, through the format's structural codes). One linear pass over the arrays.
fn check_structure(root: &Value, diag: &mut Diagnostics) {
    let buffers = array(root, "buffers");
    let views = array(root, "bufferViews");
    let u64_of = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
    for (i, v) in views.iter().enumerate() {
        let path = format!("bufferViews[{i}]");
        let Some(bi) = Some(u64_of(v, "buffer").unwrap_or(0) as usize).filter(|&b| b < buffers.len()) else {
            diag.warn_at(
                STRUCTURE,
                Place::path(format!("{path}.buffer")),
                format!("{path}.buffer: must name one of the {} buffers", buffers.len()),
            );
            continue;
        };
        let Some(len) = u64_of(v, "byteLength") else {
            diag.warn_at(STRUCTURE, Place::path(&path), format!("{path}: byteLength is required"));
            continue;
        };
        let off = u64_of(v, "byteOffset").unwrap_or(0);
        let declared = u64_of(&buffers[bi], "byteLength").unwrap_or(0);
        // "The declared byte offset plus the declared byte length MUST NOT exceed the buffer's
        // byte length."
        if off.checked_add(len).is_none_or(|end| end > declared) {
            diag.warn_at(
                STRUCTURE,
                Place::path(&path),
                format!("{path}: bytes {off}..{} run past the end of buffer {bi} ({declared} bytes)", off as u128 + len as u128),
            );
        }
    }
    for (i, a) in array(root, "accessors").iter().enumerate() {
        let path = format!("accessors[{i}]");
        let Some(vi) = u64_of(a, "bufferView").map(|b| b as usize).filter(|&b| b < views.len()) else {
            diag.warn_at(
                STRUCTURE,
                Place::path(format!("{path}.bufferView")),
                format!("{path}.bufferView: must name one of the {} buffer views", views.len()),
            );
            continue;
        };
        let Some(t) = a.get("componentType").and_then(Value::as_str) else {
            diag.warn_at(STRUCTURE, Place::path(&path), format!("{path}: componentType is required"));
            continue;
        };
        let vs = u64_of(a, "vectorSize").unwrap_or(1);
        // Component types this reader does not know may come from an extension: not judged.
        let Some(cs) = accessor::component_size(t) else { continue };
        let (off, len) = (u64_of(&views[vi], "byteOffset").unwrap_or(0), u64_of(&views[vi], "byteLength").unwrap_or(0));
        let elem = cs as u64 * vs;
        if vs == 0 || len % elem != 0 {
            diag.warn_at(
                STRUCTURE,
                Place::path(&path),
                format!("{path}: its buffer view's {len} bytes are not a whole number of {t} × {vs} elements"),
            );
        } else if off % cs as u64 != 0 {
            diag.warn_at(
                STRUCTURE,
                Place::path(&path),
                format!("{path}: its buffer view's byteOffset {off} is not a multiple of the {t} size {cs}"),
            );
        }
    }
    let names = |k: &str| array(root, k).iter().filter_map(Value::as_str).collect::<Vec<_>>();
    let used = names("extensionsUsed");
    for (i, r) in names("extensionsRequired").iter().enumerate() {
        if !used.contains(r) {
            diag.warn_at(
                STRUCTURE,
                Place::path(format!("extensionsRequired[{i}]")),
                format!("extensionsRequired[{i}]: \"{r}\" must also be listed in extensionsUsed"),
            );
        }
    }
}

impl Ctx<'_> {
    /// Accessor `i` decoded as f64 components, with its vectorSize and component type; decoded
    /// once however many meshes and instances use it.
    fn accessor(&self, i: usize, what: &str) -> Result<Rc<Decoded>, G4mfError> {
        if let Some(d) = self.accessors.borrow().get(&i) {
            return Ok(d.clone());
        }
        let d = Rc::new(self.decode_accessor(i, what)?);
        self.accessors.borrow_mut().insert(i, d.clone());
        Ok(d)
    }

    /// Charge the budget for `count` values of `T` built for `what`, before they are.
    fn charge<T>(&self, count: usize, what: &str) -> Result<(), G4mfError> {
        Ok(self.budget.charge_items::<T>(count, self.file, what)?)
    }

    fn decode_accessor(&self, i: usize, what: &str) -> Result<Decoded, G4mfError> {
        let file = self.file;
        let accs = array(self.root, "accessors");
        let a = accs
            .get(i)
            .ok_or_else(|| err_of(FaultKind::Reference, file, what, format!("accessor {i} does not exist ({} accessors)", accs.len())))?;
        let apath = format!("accessors[{i}]");
        let t = a.get("componentType").and_then(Value::as_str).ok_or_else(|| err(file, &apath, "componentType is required"))?.to_string();
        let vs = a.get("vectorSize").and_then(Value::as_u64).unwrap_or(1) as usize;
        if vs == 0 {
            return Err(err(file, format!("{apath}.vectorSize"), "must be at least 1"));
        }
        let views = array(self.root, "bufferViews");
        let vi = index(a, "bufferView", views.len(), &apath, file)?.ok_or_else(|| err(file, &apath, "bufferView is required"))?;
        let v = &views[vi];
        let vpath = format!("bufferViews[{vi}]");
        let bi = v.get("buffer").and_then(Value::as_u64).unwrap_or(0) as usize;
        let off = v.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let len = v.get("byteLength").and_then(Value::as_u64).ok_or_else(|| err(file, &vpath, "byteLength is required"))? as usize;
        let data = self.buffers.get(bi).and_then(|b| b.as_ref()).ok_or_else(|| {
            err_of(FaultKind::Reference, file, format!("{vpath}.buffer"), format!("buffer {bi} does not exist or has no data"))
        })?;
        let end = off.checked_add(len).filter(|&e| e <= data.len()).ok_or_else(|| {
            err_of(
                FaultKind::Structure,
                file,
                &vpath,
                format!("bytes {off}..{} run past the end of buffer {bi} ({} bytes)", off as u128 + len as u128, data.len()),
            )
        })?;
        let cs = accessor::component_size(&t).ok_or_else(|| {
            err_of(
                FaultKind::Unsupported,
                file,
                format!("{apath}.componentType"),
                format!("\"{t}\" is not a component type skelport reads"),
            )
        })?;
        if len % (cs * vs) != 0 {
            return Err(err_of(
                FaultKind::Structure,
                file,
                &vpath,
                format!("byteLength {len} is not a multiple of the element size {} ({t} × {vs})", cs * vs),
            ));
        }
        if off % cs != 0 {
            return Err(err_of(
                FaultKind::Structure,
                file,
                &vpath,
                format!("byteOffset {off} is not a multiple of the component size {cs}"),
            ));
        }
        self.charge::<f64>(len / cs, &apath)?;
        let vals = accessor::decode(&t, &data[off..end], &apath, file)?;
        Ok((vals, vs, t))
    }
}

/// A node's local transform: TRS when written with position/rotor/scale (kept bit-exact), or the
/// matrix when written with a basis.
#[derive(Clone, Copy)]
enum Local {
    Trs(Transform),
    Matrix(DMat4),
}

impl Local {
    fn matrix(&self) -> DMat4 {
        match self {
            Local::Trs(t) => t.matrix(),
            Local::Matrix(m) => *m,
        }
    }
}

fn local_matrix(n: &Value, path: &str, file: &str) -> Result<Local, G4mfError> {
    let pos = match n.get("position") {
        Some(p) => {
            let v = numbers(p, &format!("{path}.position"), file)?;
            if v.len() != 3 {
                return Err(err(file, format!("{path}.position"), format!("has {} numbers; 3 in 3D", v.len())));
            }
            DVec3::new(v[0], v[1], v[2])
        }
        None => DVec3::ZERO,
    };
    if let Some(b) = n.get("basis") {
        if n.get("rotor").is_some() || n.get("scale").is_some() {
            return Err(err(file, path, "basis must not appear together with rotor or scale"));
        }
        let v = numbers(b, &format!("{path}.basis"), file)?;
        if v.len() != 9 {
            return Err(err(file, format!("{path}.basis"), format!("has {} numbers; 9 in 3D (column-major)", v.len())));
        }
        let m = DMat3::from_cols(DVec3::new(v[0], v[1], v[2]), DVec3::new(v[3], v[4], v[5]), DVec3::new(v[6], v[7], v[8]));
        let mut out = DMat4::from_mat3(m);
        out.w_axis = pos.extend(1.0);
        return Ok(Local::Matrix(out));
    }
    let rot = match n.get("rotor") {
        Some(r) => {
            let v = numbers(r, &format!("{path}.rotor"), file)?;
            if v.len() != 4 {
                return Err(err(file, format!("{path}.rotor"), format!("has {} numbers; 4 in 3D ([s, xy, xz, yz])", v.len())));
            }
            let q = quat_from_rotor([v[0], v[1], v[2], v[3]]);
            if q.length() < 1e-12 {
                return Err(err(file, format!("{path}.rotor"), "is zero; a rotor must be normalized"));
            }
            // Keep unit rotors bit-exact; normalize the others.
            if (q.length() - 1.0).abs() > 1e-14 {
                q.normalize()
            } else {
                q
            }
        }
        None => skelport_ir::DQuat::IDENTITY,
    };
    let scale = match n.get("scale") {
        Some(s) => {
            let v = numbers(s, &format!("{path}.scale"), file)?;
            let s = match v.len() {
                1 => DVec3::splat(v[0]),
                3 => DVec3::new(v[0], v[1], v[2]),
                k => return Err(err(file, format!("{path}.scale"), format!("has {k} numbers; 1 or 3 in 3D"))),
            };
            if s.min_element() <= 0.0 {
                return Err(err(file, format!("{path}.scale"), "scale must be strictly positive (use basis for flips)"));
            }
            s
        }
        None => DVec3::ONE,
    };
    Ok(Local::Trs(Transform { translation: pos, rotation: rot, scale }))
}

fn to_transform(m: &DMat4, what: &str, diag: &mut Diagnostics) -> Transform {
    Transform::from_matrix(m).unwrap_or_else(|| {
        diag.loss_at(
            "g4mf.shear",
            Place::path(what),
            format!("{what}: its transform has shear or a flip, which the IR's TRS cannot hold; the nearest TRS is its rest pose (skins bind the exact transform)"),
        );
        nearest_trs(m)
    })
}

/// The TRS nearest an affine matrix that has shear or a flip.
fn nearest_trs(m: &DMat4) -> Transform {
    let (s, r, t) = m.to_scale_rotation_translation();
    Transform { translation: t, rotation: r.normalize(), scale: s.abs() }
}

/// A rest transform from skelport's extras, if it is one the IR can hold (finite, a rotation
/// that normalizes, a positive scale); the rotation normalized.
fn usable_rest(t: Transform) -> Option<Transform> {
    let ok = t.translation.is_finite() && t.scale.is_finite() && t.scale.min_element() > 0.0 && t.rotation.is_finite();
    let len = t.rotation.length();
    // A unit rotation stays bit-exact (the writer's own); others are normalized.
    let rotation = if (len - 1.0).abs() > 1e-14 { t.rotation / len } else { t.rotation };
    (ok && (len - 1.0).abs() < 1e-6).then_some(Transform { rotation, ..t })
}

/// Extras written by skelport's G4MF writer so other formats round-trip through G4MF.
fn skelport_extras(n: &Value) -> Option<&Value> {
    n.get("extras").and_then(|e| e.get("skelport"))
}

fn read_document(
    root: &Value,
    input: &Input<'_>,
    chunks: &[container::RawChunk<'_>],
    opts: &ReadOptions,
    diag: &mut Diagnostics,
) -> Result<Document, G4mfError> {
    let file = input.display_name();
    let file = file.as_str();
    if !root.is_object() {
        return Err(err(file, "$", "a G4MF document must be a JSON object"));
    }
    // The top-level arrays: a wrong type would otherwise read as an empty array (`array` below).
    for key in ["nodes", "meshes", "accessors", "bufferViews", "buffers", "materials", "shapes"] {
        if let Some(v) = root.get(key).filter(|v| !v.is_array()) {
            let kind = match v {
                Value::Object(_) => "an object",
                Value::String(_) => "a string",
                Value::Number(_) => "a number",
                Value::Bool(_) => "a boolean",
                _ => "null",
            };
            return Err(err(file, key, format!("{key} is {kind}, but it must be an array; write [ ... ] or omit it")));
        }
    }
    let dim = root
        .get("asset")
        .and_then(|a| a.get("dimension"))
        .and_then(Value::as_u64)
        .ok_or_else(|| err(file, "asset.dimension", "asset.dimension is required and must be an integer"))?;
    let nodes = array(root, "nodes");
    let mut doc = Document::new(Frame::GLTF);
    doc.source_format = Some("g4tf".into());
    if let Some(x) = root.get("extras").and_then(|e| e.get("skelport")).and_then(|s| s.get("ext")) {
        if let Ok(ext) = serde_json::from_value(x.clone()) {
            doc.ext = ext;
        }
    }
    if dim != 3 {
        let has_rig = nodes.iter().any(|n| n.get("skeleton").is_some() || n.get("bone").is_some()) || !array(root, "meshes").is_empty();
        if has_rig {
            return Err(err_of(FaultKind::Unsupported,
                file,
                "asset.dimension",
                format!("this is a {dim}D G4MF file with skeletons or meshes, and skelport's IR holds 3D only; convert it to 3D first (or fix the dimension if it is wrong)"),
            ));
        }
        diag.warn(
            "g4mf.dimension",
            format!("a {dim}D file with {} node(s) and no skeleton or mesh: nothing for the IR to hold", nodes.len()),
        );
        return Ok(doc);
    }
    if nodes
        .first()
        .is_some_and(|n| n.get("position").is_some() || n.get("rotor").is_some() || n.get("scale").is_some() || n.get("basis").is_some())
    {
        diag.warn_at("g4mf.root-transform", Place::numbered("node", 0), "node 0 must not have a transform");
    }
    let budget = opts.budget_for(input);
    let buffers = load_buffers(root, input, chunks, opts, &budget)?;
    check_structure(root, diag);
    let ctx = Ctx { file, root, buffers, budget, accessors: RefCell::new(HashMap::new()) };

    // Parents from children lists; world matrices by an explicit stack walk (no recursion).
    let n = nodes.len();
    let mut parent: Vec<Option<usize>> = vec![None; n];
    for (i, node) in nodes.iter().enumerate() {
        if node.get("children").and_then(Value::as_array).is_some_and(|c| c.is_empty()) {
            diag.warn_at(
                "g4mf.empty-children",
                Place::path(format!("nodes[{i}].children")),
                format!("nodes[{i}].children is empty; omit it instead"),
            );
        }
        for (k, c) in array(node, "children").iter().enumerate() {
            let ci = c.as_u64().map(|c| c as usize).filter(|&c| c < n && c != 0).ok_or_else(|| {
                err_of(FaultKind::Reference, file, format!("nodes[{i}].children[{k}]"), format!("{c} is not a node index in 1..{n}"))
            })?;
            if parent[ci].is_some() {
                return Err(err_of(
                    FaultKind::Structure,
                    file,
                    format!("nodes[{i}].children[{k}]"),
                    format!("node {ci} already has a parent; a node has at most one"),
                ));
            }
            parent[ci] = Some(i);
        }
    }
    let mut local = Vec::with_capacity(n);
    for (i, node) in nodes.iter().enumerate() {
        local.push(local_matrix(node, &format!("nodes[{i}]"), file)?);
    }
    let mut world = vec![None::<DMat4>; n];
    let mut order = Vec::with_capacity(n);
    if n > 0 {
        let mut stack = vec![0usize];
        while let Some(i) = stack.pop() {
            if world[i].is_some() {
                return Err(err_of(FaultKind::Structure, file, format!("nodes[{i}]"), "the node tree has a cycle"));
            }
            world[i] = Some(match parent[i] {
                Some(p) => world[p].unwrap_or(DMat4::IDENTITY) * local[i].matrix(),
                None => local[i].matrix(),
            });
            order.push(i);
            for c in array(&nodes[i], "children").iter().rev() {
                if let Some(c) = c.as_u64() {
                    stack.push(c as usize);
                }
            }
        }
    }
    let world_of = |i: usize| world[i].unwrap_or_else(|| local[i].matrix());

    let meshes = array(root, "meshes");
    let mut used_names: HashMap<String, usize> = HashMap::new();
    for (i, node) in nodes.iter().enumerate() {
        if let Some(name) = node.get("name").and_then(Value::as_str).filter(|s| !s.is_empty()) {
            if !crate::name_is_legal(name) {
                diag.warn("g4mf.name", format!("nodes[{i}] name \"{name}\" has characters G4MF forbids"));
            }
            // G4MF: a non-empty name is unique across the whole file (SPEC-NOTES "name").
            if let Some(prev) = used_names.insert(name.to_string(), i) {
                return Err(err(
                    file,
                    format!("nodes[{i}].name"),
                    format!("nodes[{i}] and nodes[{prev}] are both named \"{name}\", but G4MF names must be unique; rename one"),
                ));
            }
        }
    }

    // Mesh-instance nodes read as skins above; every other one is a plain mesh below.
    let mut skinned_nodes = std::collections::HashSet::new();
    for &si in order.iter().filter(|&&i| nodes[i].get("skeleton").is_some()) {
        let snode = &nodes[si];
        let spath = format!("nodes[{si}]");
        let sw = world_of(si);
        let mut sk = Skeleton::new(snode.get("name").and_then(Value::as_str).unwrap_or("skeleton"));
        if let Some(x) = skelport_extras(snode).and_then(|s| s.get("ext")) {
            if let Ok(ext) = serde_json::from_value(x.clone()) {
                sk.ext = ext;
            }
        }
        if let Some(name) = skelport_extras(snode).and_then(|s| s.get("name")).and_then(Value::as_str) {
            sk.name = name.to_string();
        }
        // Bones: pre-order walk from the skeleton through bone-only chains.
        let mut bone_of_node: HashMap<usize, BoneId> = HashMap::new();
        let mut stack: Vec<usize> = array(snode, "children").iter().rev().filter_map(Value::as_u64).map(|c| c as usize).collect();
        let mut names_seen: HashMap<String, u32> = HashMap::new();
        let mut explicit_deform = std::collections::HashSet::new();
        // Rest poses skelport kept in extras where they differ from the stored (bind) pose.
        let mut rest_of: Vec<(usize, Transform)> = Vec::new();
        // Each bone's node, and whether its stored pose is one TRS cannot hold (its own
        // transform or an ancestor's).
        let mut bind_node: Vec<(usize, bool)> = Vec::new();
        while let Some(ni) = stack.pop() {
            let node = &nodes[ni];
            let Some(bone) = node.get("bone") else { continue };
            let bpath = format!("nodes[{ni}]");
            let p = parent[ni].and_then(|p| bone_of_node.get(&p).copied());
            let ex = skelport_extras(node);
            // A transform TRS cannot hold (shear, from a non-uniform scale above a rotation)
            // becomes the nearest TRS as the rest pose, a loss unless skelport kept the rest in
            // extras; the skin binds the node's exact transform either way (below).
            let kept_rest = ex.is_some_and(|e| e.get("rest").is_some());
            let as_rest = |m: &DMat4, diag: &mut Diagnostics| match Transform::from_matrix(m) {
                Some(t) => (t, false),
                None if kept_rest => (nearest_trs(m), true),
                None => (to_transform(m, &bpath, diag), true),
            };
            let (rest, inexact) = match (p, local[ni]) {
                (Some(_), Local::Trs(t)) => (t, false),
                (None, Local::Trs(t)) if sw == DMat4::IDENTITY => (t, false),
                (Some(_), Local::Matrix(m)) => as_rest(&m, diag),
                (None, l) => as_rest(&(sw * l.matrix()), diag),
            };
            bind_node.push((ni, inexact || p.is_some_and(|p| bind_node[p.index()].1)));
            let mut name = ex
                .and_then(|e| e.get("name"))
                .and_then(Value::as_str)
                .or_else(|| node.get("name").and_then(Value::as_str))
                .unwrap_or("")
                .to_string();
            if name.is_empty() {
                name = format!("bone{ni}");
            }
            let count = names_seen.entry(name.clone()).or_insert(0);
            *count += 1;
            if *count > 1 {
                let renamed = format!("{name}_{count}");
                diag.warn_at(
                    "g4mf.duplicate-name",
                    Place::path(&bpath),
                    format!("{bpath}: bone name \"{name}\" repeats; renamed \"{renamed}\""),
                );
                name = renamed;
            }
            let mut b = Bone::new(name, p, rest);
            if let Some(l) = bone.get("length") {
                let l = l
                    .as_f64()
                    .filter(|l| l.is_finite() && *l >= 0.0)
                    .ok_or_else(|| err(file, format!("{bpath}.bone.length"), "must be a number ≥ 0"))?;
                b.length = Some(l);
            }
            let mut own = serde_json::Map::new();
            for k in ["mass", "shape"] {
                if let Some(v) = bone.get(k) {
                    own.insert(k.into(), v.clone());
                }
            }
            if let Some(e) = ex {
                if let Some(r) = e.get("rest") {
                    match serde_json::from_value::<Transform>(r.clone()).ok().and_then(usable_rest) {
                        Some(t) => rest_of.push((sk.bones.len(), t)),
                        None => diag.warn(
                            "g4mf.rest-extra",
                            format!("{bpath}.extras.skelport.rest is not a usable transform (finite, a rotation, a positive scale); the stored pose is used"),
                        ),
                    }
                }
                b.roll = e.get("roll").and_then(Value::as_f64);
                if let Some(d) = e.get("deform").and_then(Value::as_bool) {
                    b.deform = d;
                    explicit_deform.insert(sk.bones.len());
                }
                if let Some(a) = e.get("anchors") {
                    b.anchors = serde_json::from_value(a.clone()).ok();
                }
                if let Some(x) = e.get("ext") {
                    if let Ok(ext) = serde_json::from_value(x.clone()) {
                        b.ext = ext;
                    }
                }
            }
            if !own.is_empty() {
                b.ext.set_raw(NAMESPACE, Value::Object(own));
            }
            let id = sk.push(b);
            bone_of_node.insert(ni, id);
            stack.extend(array(node, "children").iter().rev().filter_map(Value::as_u64).map(|c| c as usize));
        }
        // Joint slots.
        let joints_v = snode.get("skeleton").map(|s| array(s, "joints")).unwrap_or(&[]);
        let mut slot_bone: Vec<Option<BoneId>> = Vec::with_capacity(joints_v.len());
        let mut last: i64 = -1;
        for (k, j) in joints_v.iter().enumerate() {
            let ji = j.as_i64().unwrap_or(-2);
            // -1 (no bone) or a node index; anything else is a broken reference, not a bone of
            // another skeleton (which is only warned about below).
            if ji != -1 && !(0..nodes.len() as i64).contains(&ji) {
                return Err(err_of(
                    FaultKind::Reference,
                    file,
                    format!("{spath}.skeleton.joints[{k}]"),
                    format!("{j} is neither a node index (the file has {} nodes) nor -1; write the index of a bone node", nodes.len()),
                ));
            }
            if ji == -1 {
                slot_bone.push(None);
                continue;
            }
            match usize::try_from(ji).ok().and_then(|u| bone_of_node.get(&u)) {
                Some(&b) => slot_bone.push(Some(b)),
                None => {
                    diag.warn(
                        "g4mf.joint",
                        format!("{spath}.skeleton.joints[{k}] = {j} is not a bone of this skeleton; its influences are ignored"),
                    );
                    slot_bone.push(None);
                }
            }
            // A repeat is tolerated: the spec lets a bone be listed several times to merge joints
            // (SPEC-NOTES §11.4), against its own "strictly increasing".
            if ji < last {
                diag.warn("g4mf.joint-order", format!("{spath}.skeleton.joints is not in increasing node order at [{k}]"));
            }
            last = ji;
        }
        let sk_index = doc.skeletons.len();
        // Deform defaults: joints deform, other bones do not, when the skeleton skins something;
        // the writer records exceptions in extras.
        let has_skin = array(snode, "children").iter().filter_map(Value::as_u64).any(|c| {
            nodes
                .get(c as usize)
                .and_then(|n| n.get("meshInstance"))
                .and_then(|m| m.get("mesh"))
                .and_then(Value::as_u64)
                .and_then(|m| meshes.get(m as usize))
                .is_some_and(|m| m.get("skin").is_some())
        });
        if has_skin {
            let joint_set: std::collections::HashSet<usize> = slot_bone.iter().flatten().map(|b| b.index()).collect();
            for (i, b) in sk.bones.iter_mut().enumerate() {
                if !explicit_deform.contains(&i) {
                    b.deform = joint_set.contains(&i);
                }
            }
        }
        // The stored pose is the bind pose: the inverse binds come from it, then the rest pose
        // skelport kept (if any) replaces it.
        let mut worlds = sk.world_matrices();
        for (w, &(ni, inexact)) in worlds.iter_mut().zip(&bind_node) {
            if inexact {
                *w = world_of(ni);
            }
        }
        for (i, t) in rest_of {
            sk.bones[i].rest = t;
        }
        // Skinned meshes: mesh instances that are direct children of the skeleton node.
        for c in array(snode, "children").iter().filter_map(Value::as_u64).map(|c| c as usize) {
            let Some(mi) = nodes[c].get("meshInstance") else { continue };
            let mpath = format!("nodes[{c}].meshInstance");
            let Some(mesh_i) = index(mi, "mesh", meshes.len(), &mpath, file)? else { continue };
            let mesh = &meshes[mesh_i];
            let Some(skin) = mesh.get("skin") else { continue };
            let to_doc = sw * local[c].matrix();
            skinned_nodes.insert(c);
            let (im, sk_) = read_skinned_mesh(&ctx, mesh, mesh_i, skin, &to_doc, &slot_bone, &worlds, sk_index, diag)?;
            doc.meshes.push(im);
            let mut sk_ = sk_;
            sk_.mesh = Some(skelport_ir::MeshId::from_index(doc.meshes.len() - 1));
            doc.skins.push(sk_);
        }
        doc.skeletons.push(sk);
    }
    // Plain meshes: every other mesh instance, where its node puts it (a skin on an instance no
    // skeleton owns skins nothing, as the spec says).
    for &c in order.iter().filter(|c| !skinned_nodes.contains(*c)) {
        let Some(mi) = nodes[c].get("meshInstance") else { continue };
        let Some(mesh_i) = index(mi, "mesh", meshes.len(), &format!("nodes[{c}].meshInstance"), file)? else { continue };
        doc.meshes.push(read_geometry(&ctx, &meshes[mesh_i], mesh_i, &world_of(c), diag)?);
    }
    Ok(doc)
}

/// The per-corner values (`width` numbers each, in corner order) of a surface binding over
/// `corners` triangle corners: indexed per corner (`simplexes`) or per triangle (`perSimplex`).
/// `None`, with a warning, for a binding only `geometry` (polytope) indices reach, which
/// skelport does not read. Values must be floats with at least `width` components (extra ones,
/// a texture map's `w`, are a loss) and finite; indices must name a value.
fn read_binding(
    ctx: &Ctx<'_>,
    b: &Value,
    path: &str,
    corners: usize,
    width: usize,
    diag: &mut Diagnostics,
) -> Result<Option<Vec<f64>>, G4mfError> {
    let file = ctx.file;
    let vi = b.get("values").and_then(Value::as_u64).ok_or_else(|| err(file, path, "values is required"))? as usize;
    let vpath = format!("{path}.values");
    let decoded = ctx.accessor(vi, &vpath)?;
    let (values, vs, t) = (&decoded.0, decoded.1, &decoded.2);
    if !accessor::is_float(t) || vs < width {
        return Err(err(file, &vpath, format!("must be a float accessor with vectorSize {width} or more (found {t} × {vs})")));
    }
    if let Some(k) = values.iter().position(|x| !x.is_finite()) {
        return Err(err(file, &vpath, format!("element {} is not a finite number", k / vs)));
    }
    if vs > width {
        diag.loss_at(
            "g4mf.binding-width",
            Place::path(&vpath),
            format!("{vpath}: {vs} components per value; skelport keeps the first {width}"),
        );
    }
    let count = values.len() / vs;
    let (key, per) = if b.get("simplexes").is_some() {
        ("simplexes", 3)
    } else if b.get("perSimplex").is_some() {
        ("perSimplex", 1)
    } else {
        diag.warn_at(
            "g4mf.binding",
            Place::path(path),
            format!("{path}: no simplexes or perSimplex index (polytope geometry bindings are not read); ignored"),
        );
        return Ok(None);
    };
    let ipath = format!("{path}.{key}");
    let ii = b.get(key).and_then(Value::as_u64).ok_or_else(|| err(file, &ipath, "must be an accessor index"))? as usize;
    let decoded_index = ctx.accessor(ii, &ipath)?;
    let (idx, ivs, it) = (&decoded_index.0, decoded_index.1, &decoded_index.2);
    if accessor::is_float(it) || ivs != per || idx.len() * 3 / per != corners {
        return Err(err(
            file,
            &ipath,
            format!("must be an integer accessor with vectorSize {per} and one element per triangle (found {it} × {ivs}, {} elements for {} triangles)", idx.len() / ivs, corners / 3),
        ));
    }
    ctx.charge::<f64>(corners.saturating_mul(width), &ipath)?;
    let mut out = Vec::with_capacity(corners * width);
    for (j, &i) in idx.iter().enumerate() {
        if i < 0.0 || i as usize >= count {
            return Err(err_of(
                FaultKind::Reference,
                file,
                &ipath,
                format!("element {} refers to value {i}, but there are {count}", j / per),
            ));
        }
        let v = &values[i as usize * vs..i as usize * vs + width];
        for _ in 0..3 / per {
            out.extend_from_slice(v);
        }
    }
    Ok(Some(out))
}

/// The geometry of `meshes[mesh_i]` in document space (`to_doc`): positions, triangles, normals
/// and texture coordinates.
fn read_geometry(ctx: &Ctx<'_>, mesh: &Value, mesh_i: usize, to_doc: &DMat4, diag: &mut Diagnostics) -> Result<Mesh, G4mfError> {
    let file = ctx.file;
    let mpath = format!("meshes[{mesh_i}]");
    let vi = mesh.get("vertices").and_then(Value::as_u64).ok_or_else(|| err(file, &mpath, "vertices is required"))? as usize;
    let decoded = ctx.accessor(vi, &format!("{mpath}.vertices"))?;
    let (pos, vs) = (&decoded.0, decoded.1);
    if vs != 3 {
        return Err(err(file, format!("{mpath}.vertices"), format!("vectorSize {vs}; 3D positions need 3")));
    }
    // Each instance of a mesh is a copy in the IR (its own transform baked in): charged before
    // it is made, so a hundred instances of one big mesh stop at the budget.
    ctx.charge::<DVec3>(pos.len() / 3, &mpath)?;
    let positions: Vec<DVec3> = pos.chunks_exact(3).map(|c| to_doc.transform_point3(DVec3::new(c[0], c[1], c[2]))).collect();
    let nv = positions.len();
    let mut faces = Faces::default();
    // Per-corner normals and UVs, surface by surface: a surface without a normals binding is
    // flat-shaded (the spec's default), one without a texture map gets (0, 0).
    let normal_m = DMat3::from_mat4(*to_doc).inverse().transpose();
    let (mut normals, mut uvs): (Vec<DVec3>, Vec<DVec2>) = (Vec::new(), Vec::new());
    let (mut flat, mut with_uv, mut without_uv) = (0usize, 0usize, 0usize);
    let mut uv_name = String::new();
    for (k, s) in array(mesh, "surfaces").iter().enumerate() {
        let Some(si) = s.get("simplexes").and_then(Value::as_u64) else { continue };
        let spath = format!("{mpath}.surfaces[{k}].simplexes");
        let decoded = ctx.accessor(si as usize, &spath)?;
        let (idx, vs, t) = (&decoded.0, decoded.1, &decoded.2);
        if vs != 3 || accessor::is_float(t) {
            return Err(err(file, &spath, format!("simplexes must be an integer accessor with vectorSize 3 in 3D (found {t} × {vs})")));
        }
        for (j, &v) in idx.iter().enumerate() {
            if v < 0.0 || v as usize >= nv {
                return Err(err_of(
                    FaultKind::Reference,
                    file,
                    &spath,
                    format!("element {} refers to vertex {v}, but the mesh has {nv}", j / 3),
                ));
            }
        }
        let first = faces.indices.len();
        ctx.charge::<u32>(idx.len() / 3 * 4, &spath)?;
        faces.counts.extend(std::iter::repeat_n(3u32, idx.len() / 3));
        faces.indices.extend(idx.iter().map(|&v| v as u32));
        let bpath = format!("{mpath}.surfaces[{k}]");
        let given = s.get("normals").map(|b| read_binding(ctx, b, &format!("{bpath}.normals"), idx.len(), 3, diag)).transpose()?.flatten();
        match given {
            Some(v) => normals.extend(v.chunks_exact(3).map(|c| normal_m * DVec3::new(c[0], c[1], c[2]))),
            None => {
                flat += 1;
                let surface = Faces { counts: vec![3; idx.len() / 3], indices: faces.indices[first..].to_vec() };
                normals.extend(skelport_ir::proc::flat_corner_normals(&positions, &surface));
            }
        }
        match s.get("textureMap").map(|b| read_binding(ctx, b, &format!("{bpath}.textureMap"), idx.len(), 2, diag)).transpose()?.flatten() {
            Some(v) => {
                with_uv += 1;
                // G4MF's texture y runs down from the top; the IR's v up from the bottom.
                uvs.extend(v.chunks_exact(2).map(|c| DVec2::new(c[0], 1.0 - c[1])));
                if let Some(n) =
                    s["textureMap"].get("extras").and_then(|e| e.get("skelport")).and_then(|e| e.get("name")).and_then(Value::as_str)
                {
                    uv_name = n.to_string();
                }
            }
            None => {
                without_uv += 1;
                uvs.resize(faces.indices.len(), DVec2::ZERO);
            }
        }
    }
    if flat > 0 && !faces.is_empty() {
        diag.info_at(
            "g4mf.flat-normals",
            Place::path(&mpath),
            format!("{mpath}: {flat} surface(s) without normals are flat-shaded, as G4MF says: each corner has its face's normal"),
        );
    }
    if with_uv > 0 && without_uv > 0 {
        diag.warn_at(
            "g4mf.partial-uvs",
            Place::path(&mpath),
            format!("{mpath}: {without_uv} surface(s) have no texture map where others do; their corners get UV (0, 0)"),
        );
    }
    let name = mesh.get("name").and_then(Value::as_str).unwrap_or("mesh").to_string();
    let normals = (!faces.is_empty()).then(|| skelport_ir::proc::per_vertex_if_uniform(nv, &faces.indices, normals, DVec3::ZERO));
    let uvs = if with_uv > 0 {
        vec![UvSet { name: uv_name, uvs: skelport_ir::proc::per_vertex_if_uniform(nv, &faces.indices, uvs, DVec2::ZERO) }]
    } else {
        Vec::new()
    };
    Ok(Mesh { name, positions, normals, uvs, faces, groups: Vec::new(), ext: Default::default() })
}

#[allow(clippy::too_many_arguments)]
fn read_skinned_mesh(
    ctx: &Ctx<'_>,
    mesh: &Value,
    mesh_i: usize,
    skin: &Value,
    to_doc: &DMat4,
    slot_bone: &[Option<BoneId>],
    worlds: &[DMat4],
    skeleton: usize,
    diag: &mut Diagnostics,
) -> Result<(Mesh, Skin), G4mfError> {
    let file = ctx.file;
    let mpath = format!("meshes[{mesh_i}]");
    let m = read_geometry(ctx, mesh, mesh_i, to_doc, diag)?;
    let nv = m.positions.len();
    let kpath = format!("{mpath}.skin");
    let get =
        |k: &str| skin.get(k).and_then(Value::as_u64).map(|v| v as usize).ok_or_else(|| err(file, &kpath, format!("{k} is required")));
    let (dv, dg, dw) = (
        ctx.accessor(get("vertices")?, &format!("{kpath}.vertices"))?,
        ctx.accessor(get("groups")?, &format!("{kpath}.groups"))?,
        ctx.accessor(get("weights")?, &format!("{kpath}.weights"))?,
    );
    let ((vv, vvs, vt), (gv, gvs, gt), (wv, wvs, wt)) = ((&dv.0, dv.1, &dv.2), (&dg.0, dg.1, &dg.2), (&dw.0, dw.1, &dw.2));
    if vvs != 1 || gvs != 1 || wvs != 1 || !accessor::is_unsigned(vt) || !accessor::is_unsigned(gt) || !accessor::is_float(wt) {
        return Err(err(
            file,
            &kpath,
            "skin vertices and groups must be unsigned integer accessors and weights a float accessor, all with vectorSize 1",
        ));
    }
    if vv.len() != gv.len() || vv.len() != wv.len() {
        return Err(err(
            file,
            &kpath,
            format!("vertices, groups and weights have {}, {} and {} elements; they must be equal", vv.len(), gv.len(), wv.len()),
        ));
    }
    let names = array(skin, "groupNames");
    let mut seen = std::collections::HashSet::new();
    for (k, nm) in names.iter().enumerate() {
        let s = nm.as_str().unwrap_or("");
        if s.is_empty() || !seen.insert(s) {
            diag.warn("g4mf.group-names", format!("{kpath}.groupNames[{k}] is empty or repeated"));
        }
    }
    // IR joint slots: the valid skeleton slots, in order.
    let mut slot_of_group: Vec<Option<u32>> = Vec::with_capacity(slot_bone.len());
    let mut joints = Vec::new();
    for b in slot_bone {
        match b {
            Some(b) => {
                slot_of_group.push(Some(joints.len() as u32));
                joints.push(*b);
            }
            None => slot_of_group.push(None),
        }
    }
    // The skin's own joints, in its order, when skelport wrote them: G4MF's groups number the
    // skeleton's joints, which every skin of it shares.
    if let Some(own) = skelport_extras(skin).and_then(|e| e.get("joints")).and_then(Value::as_array) {
        let mut listed = vec![false; slot_bone.len()];
        let mut list = Vec::with_capacity(own.len().min(slot_bone.len()));
        let mut ok = true;
        for g in own {
            match g.as_u64().map(|g| g as usize).filter(|&g| slot_bone.get(g).is_some_and(Option::is_some)) {
                Some(g) if !listed[g] => {
                    listed[g] = true;
                    list.push(g);
                }
                _ => ok = false,
            }
        }
        // Every weighted group of a joint must be listed, or a weight would be lost.
        let outside = gv
            .iter()
            .zip(wv.iter())
            .any(|(&g, &w)| w > 0.0 && slot_bone.get(g as usize).is_some_and(Option::is_some) && !listed[g as usize]);
        if ok && !outside {
            slot_of_group = vec![None; slot_bone.len()];
            joints = Vec::with_capacity(list.len());
            for (k, g) in list.into_iter().enumerate() {
                slot_of_group[g] = Some(k as u32);
                joints.extend(slot_bone[g]);
            }
        } else {
            diag.warn(
                "g4mf.skin-joints",
                format!("{kpath}.extras.skelport.joints is not a list of distinct joint slots holding every weighted group; the skeleton's joints are used"),
            );
        }
    }
    // The triples, then the influences built from them (a row per vertex, an entry per triple).
    ctx.charge::<(u32, u32, f64)>(vv.len(), &kpath)?;
    ctx.charge::<(u32, f64)>(vv.len(), &kpath)?;
    ctx.charge::<u32>(nv, &kpath)?;
    let mut triples = Vec::with_capacity(vv.len());
    let mut prev_v = 0usize;
    let mut prev_w = f64::INFINITY;
    let mut order_warned = false;
    for k in 0..vv.len() {
        let v = vv[k] as usize;
        if v >= nv {
            return Err(err_of(
                FaultKind::Reference,
                file,
                format!("{kpath}.vertices"),
                format!("element {k} refers to vertex {v}, but the mesh has {nv}"),
            ));
        }
        if v < prev_v && !order_warned {
            diag.warn("g4mf.skin-order", format!("{kpath}.vertices is not ascending at element {k}"));
            order_warned = true;
        }
        if v != prev_v {
            prev_w = f64::INFINITY;
        }
        if wv[k] > prev_w + 1e-12 && !order_warned {
            diag.warn_at("g4mf.skin-order", Place::path(&kpath), format!("{kpath}: weights of vertex {v} do not descend"));
            order_warned = true;
        }
        prev_v = v;
        prev_w = wv[k];
        let g = gv[k] as usize;
        if let Some(Some(slot)) = slot_of_group.get(g) {
            if !wv[k].is_finite() || wv[k] < 0.0 {
                return Err(err(file, format!("{kpath}.weights"), format!("element {k} is {}; weights must be finite and ≥ 0", wv[k])));
            }
            triples.push((v as u32, *slot, wv[k]));
        }
    }
    let influences = Influences::from_triples(nv, triples);
    let inverse_bind = joints.iter().map(|j| worlds[j.index()].inverse()).collect();
    let s = Skin {
        name: m.name.clone(),
        skeleton: skelport_ir::SkeletonId::from_index(skeleton),
        mesh: None,
        joints,
        inverse_bind,
        bind_shape: DMat4::IDENTITY,
        influences,
        ext: Default::default(),
    };
    Ok((m, s))
}
