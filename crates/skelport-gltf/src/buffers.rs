//! Loading buffers (GLB BIN chunk, data URIs, external files) and decoding accessors.
//!
//! Hand-written rather than `gltf::Gltf`'s accessor iterators because those assume a document
//! that already passed validation and index slices directly: here every offset, stride and count
//! is checked against the bytes actually present before anything is allocated or indexed, so a
//! hostile file gives an error instead of a panic.

use crate::error::GltfError;
use base64::Engine as _;
use gltf_json::accessor::{ComponentType, Type};
use gltf_json::validation::Checked;
use gltf_json::Root;
use skelport_ir::files::{self, FileError};
use skelport_ir::{Budget, FaultKind, Input, ReadOptions};

/// Decoded accessor data as f64 (integers exact; normalized integers mapped to [0, 1]).
pub(crate) struct AccessorData {
    pub count: usize,
    pub components: usize,
    pub values: Vec<f64>,
    pub component_type: ComponentType,
    pub normalized: bool,
}

impl AccessorData {
    /// Element `i` as a slice of `components` values.
    pub fn get(&self, i: usize) -> &[f64] {
        let a = i * self.components;
        self.values.get(a..a + self.components).unwrap_or(&[])
    }
}

/// Load every buffer of `root`. `bin` is the GLB BIN chunk, if any. External files are opened
/// through [`skelport_ir::files::read_referenced`] (inside the input's folder, regular files,
/// counted against the input limit and `budget`); what is copied or decoded here is charged to
/// `budget` before it is allocated.
pub(crate) fn load(
    root: &Root,
    bin: Option<&[u8]>,
    input: &Input<'_>,
    opts: &ReadOptions,
    budget: &Budget,
    file: &str,
) -> Result<Vec<Vec<u8>>, GltfError> {
    let mut out = Vec::with_capacity(root.buffers.len().min(1024));
    for (i, b) in root.buffers.iter().enumerate() {
        let pointer = format!("/buffers/{i}");
        let err = |m: String| GltfError::Buffer { file: file.to_owned(), pointer: pointer.clone(), message: m };
        let data: Vec<u8> = match &b.uri {
            None => match (i, bin) {
                (0, Some(bin)) => {
                    budget.charge(bin.len() as u64, file, &pointer)?;
                    bin.to_vec()
                }
                // No data: only an error if an accessor actually reads from it.
                _ => {
                    out.push(Vec::new());
                    continue;
                }
            },
            Some(uri) if uri.starts_with("data:") => {
                let comma = uri.find(',').ok_or_else(|| err("data URI has no ','".into()))?;
                if !uri[..comma].ends_with(";base64") {
                    return Err(err("data URI is not base64-encoded".into()));
                }
                let text = uri[comma + 1..].trim();
                budget.charge(base64::decoded_len_estimate(text.len()) as u64, file, &pointer)?;
                base64::engine::general_purpose::STANDARD.decode(text).map_err(|e| err(format!("bad base64 in data URI: {e}")))?
            }
            Some(uri) => match files::read_referenced(input, uri, opts, budget) {
                Ok(data) => data,
                Err(FileError::Refused(m)) => return Err(err(m)),
                Err(FileError::Budget(e)) => return Err(e.into()),
            },
        };
        let want = b.byte_length.0;
        if (data.len() as u64) < want {
            let message = format!("byteLength is {want} but only {} bytes are present", data.len());
            // Data that loaded but is short: the buffer and its byteLength disagree (a cut
            // BIN chunk, a short .bin), not a URI to fix.
            return Err(GltfError::of(FaultKind::Structure, file, pointer, message));
        }
        out.push(data);
    }
    Ok(out)
}

fn component_size(c: ComponentType) -> usize {
    match c {
        ComponentType::I8 | ComponentType::U8 => 1,
        ComponentType::I16 | ComponentType::U16 => 2,
        ComponentType::U32 | ComponentType::F32 => 4,
    }
}

fn type_components(t: Type) -> usize {
    match t {
        Type::Scalar => 1,
        Type::Vec2 => 2,
        Type::Vec3 => 3,
        Type::Vec4 | Type::Mat2 => 4,
        Type::Mat3 => 9,
        Type::Mat4 => 16,
    }
}

/// Decode accessor `index`. `pointer` names the referring property for messages. Accessors
/// without a buffer view are all zeros (glTF 2.0 §3.6.2.3). The decoded values are charged to
/// `budget` before they are allocated.
pub(crate) fn read_accessor(
    root: &Root,
    buffers: &[Vec<u8>],
    index: usize,
    pointer: &str,
    file: &str,
    budget: &Budget,
) -> Result<AccessorData, GltfError> {
    let ap = format!("/accessors/{index}");
    let acc = root
        .accessors
        .get(index)
        .ok_or_else(|| GltfError::of(FaultKind::Reference, file, pointer, format!("accessor {index} does not exist")))?;
    let ct = match acc.component_type {
        Checked::Valid(g) => g.0,
        Checked::Invalid => return Err(GltfError::invalid(file, format!("{ap}/componentType"), "unknown component type")),
    };
    let ty = match acc.type_ {
        Checked::Valid(t) => t,
        Checked::Invalid => return Err(GltfError::invalid(file, format!("{ap}/type"), "unknown accessor type")),
    };
    let comps = type_components(ty);
    let csize = component_size(ct);
    let elem = comps * csize;
    let count = usize::try_from(acc.count.0).map_err(|_| GltfError::invalid(file, format!("{ap}/count"), "count too large"))?;
    let Some(view_idx) = acc.buffer_view else {
        // Zeros, but never allocate more than a sane bound for a count nothing backs.
        if count.saturating_mul(comps) > 1 << 24 {
            return Err(GltfError::invalid(file, format!("{ap}/count"), "count too large for an accessor without bufferView"));
        }
        budget.charge_items::<f64>(count * comps, file, &ap)?;
        let mut values = vec![0.0; count * comps];
        apply_sparse(root, buffers, acc, &ap, file, ct, comps, &mut values)?;
        return Ok(AccessorData { count, components: comps, values, component_type: ct, normalized: acc.normalized });
    };
    let (view, buf, v_off, v_len) = view_bytes(root, buffers, view_idx.value(), &format!("{ap}/bufferView"), file)?;
    let vp = format!("/bufferViews/{}", view_idx.value());
    let stride = match view.byte_stride {
        Some(s) => {
            if s.0 < elem {
                return Err(GltfError::invalid(
                    file,
                    format!("{vp}/byteStride"),
                    format!("byteStride {} is smaller than the element size {elem}", s.0),
                ));
            }
            s.0
        }
        None => elem,
    };
    let a_off = acc.byte_offset.map(|o| o.0).unwrap_or(0) as usize;
    if !fits(count, elem, stride, a_off, v_len) {
        return Err(GltfError::of(
            FaultKind::Structure,
            file,
            &ap,
            format!(
                "{count} elements of {elem} bytes (stride {stride}, offset {a_off}) do not fit in buffer view {} ({v_len} bytes)",
                view_idx.value()
            ),
        ));
    }
    if a_off % csize != 0 {
        return Err(GltfError::invalid(file, format!("{ap}/byteOffset"), "byteOffset is not a multiple of the component size"));
    }
    let base = v_off as usize + a_off;
    budget.charge_items::<f64>(count * comps, file, &ap)?;
    let mut values = Vec::with_capacity(count * comps);
    decode_into(&buf[base..], count, stride, ct, comps, acc.normalized, &mut values);
    apply_sparse(root, buffers, acc, &ap, file, ct, comps, &mut values)?;
    Ok(AccessorData { count, components: comps, values, component_type: ct, normalized: acc.normalized })
}

/// Whether `count` elements of `elem` bytes, `stride` apart from `offset`, fit in `view_len` bytes.
fn fits(count: usize, elem: usize, stride: usize, offset: usize, view_len: u64) -> bool {
    count == 0
        || (count - 1)
            .checked_mul(stride)
            .and_then(|x| x.checked_add(elem))
            .and_then(|x| x.checked_add(offset))
            .is_some_and(|n| n as u64 <= view_len)
}

/// Why accessor `index` does not fit in its buffer view, from the JSON alone (no buffer data):
/// the whole-file check of accessors nobody uses (what is used is checked again, as an error,
/// when [`read_accessor`] decodes it). `None` when it fits, has no buffer view, or its type or
/// view is unknown (those are refused where used).
pub(crate) fn accessor_misfit(root: &Root, index: usize) -> Option<String> {
    let acc = root.accessors.get(index)?;
    let (Checked::Valid(ct), Checked::Valid(ty)) = (acc.component_type, acc.type_) else { return None };
    let vi = acc.buffer_view?.value();
    let view = root.buffer_views.get(vi)?;
    let elem = type_components(ty) * component_size(ct.0);
    let stride = view.byte_stride.map_or(elem, |s| s.0.max(elem));
    let count = usize::try_from(acc.count.0).unwrap_or(usize::MAX);
    let off = acc.byte_offset.map(|o| o.0).unwrap_or(0) as usize;
    (!fits(count, elem, stride, off, view.byte_length.0)).then(|| {
        format!(
            "{count} elements of {elem} bytes (stride {stride}, offset {off}) do not fit in buffer view {vi} ({} bytes)",
            view.byte_length.0
        )
    })
}

/// A buffer view, the bytes of its buffer, and its offset and length, checked to lie inside the
/// buffer. `pointer` names the referring property for messages.
fn view_bytes<'a>(
    root: &'a Root,
    buffers: &'a [Vec<u8>],
    index: usize,
    pointer: &str,
    file: &str,
) -> Result<(&'a gltf_json::buffer::View, &'a [u8], u64, u64), GltfError> {
    let vp = format!("/bufferViews/{index}");
    let view = root
        .buffer_views
        .get(index)
        .ok_or_else(|| GltfError::of(FaultKind::Reference, file, pointer, format!("buffer view {index} does not exist")))?;
    let buf = buffers.get(view.buffer.value()).ok_or_else(|| {
        GltfError::of(FaultKind::Reference, file, format!("{vp}/buffer"), format!("buffer {} does not exist", view.buffer.value()))
    })?;
    let declared = root.buffers.get(view.buffer.value()).map(|b| b.byte_length.0).unwrap_or(0);
    if buf.is_empty() && declared > 0 {
        return Err(GltfError::invalid(
            file,
            format!("/buffers/{}", view.buffer.value()),
            "buffer has no data: it has no uri and is not the GLB BIN chunk",
        ));
    }
    let v_off = view.byte_offset.map(|o| o.0).unwrap_or(0);
    let v_len = view.byte_length.0;
    if v_off.checked_add(v_len).is_none_or(|end| end > declared || end > buf.len() as u64) {
        return Err(GltfError::of(
            FaultKind::Structure,
            file,
            &vp,
            format!("byteOffset {v_off} + byteLength {v_len} exceeds the buffer's {declared} bytes"),
        ));
    }
    Ok((view, buf, v_off, v_len))
}

/// The sparse substitution of an accessor (glTF 2.0 §3.6.2.3): `sparse.count` element indices
/// (strictly increasing, below the accessor's count) and as many replacement elements, tightly
/// packed in their buffer views.
#[allow(clippy::too_many_arguments)]
fn apply_sparse(
    root: &Root,
    buffers: &[Vec<u8>],
    acc: &gltf_json::Accessor,
    ap: &str,
    file: &str,
    ct: ComponentType,
    comps: usize,
    values: &mut [f64],
) -> Result<(), GltfError> {
    let Some(sp) = &acc.sparse else { return Ok(()) };
    let count = values.len() / comps.max(1);
    let n = usize::try_from(sp.count.0).ok().filter(|&n| n >= 1 && n <= count).ok_or_else(|| {
        GltfError::invalid(file, format!("{ap}/sparse/count"), format!("{} is not between 1 and the accessor's count {count}", sp.count.0))
    })?;
    let ict = match sp.indices.component_type {
        Checked::Valid(c) if matches!(c.0, ComponentType::U8 | ComponentType::U16 | ComponentType::U32) => c.0,
        _ => {
            return Err(GltfError::invalid(
                file,
                format!("{ap}/sparse/indices/componentType"),
                "sparse indices must be unsigned byte, short or int",
            ))
        }
    };
    // Both lists must fit in their views; read as tightly packed elements.
    let part = |view: usize, offset: u64, elem: usize, what: &str| -> Result<&[u8], GltfError> {
        let p = format!("{ap}/sparse/{what}");
        let (_, buf, v_off, v_len) = view_bytes(root, buffers, view, &format!("{p}/bufferView"), file)?;
        let need = (n as u64).checked_mul(elem as u64).and_then(|x| x.checked_add(offset));
        if need.is_none_or(|x| x > v_len) {
            return Err(GltfError::of(
                FaultKind::Structure,
                file,
                p,
                format!("{n} elements of {elem} bytes at offset {offset} do not fit in buffer view {view} ({v_len} bytes)"),
            ));
        }
        let start = (v_off + offset) as usize;
        Ok(&buf[start..start + n * elem])
    };
    let isize_ = component_size(ict);
    let ib = part(sp.indices.buffer_view.value(), sp.indices.byte_offset.0, isize_, "indices")?;
    let mut idx = Vec::with_capacity(n);
    decode_into(ib, n, isize_, ict, 1, false, &mut idx);
    let vb = part(sp.values.buffer_view.value(), sp.values.byte_offset.0, comps * component_size(ct), "values")?;
    let mut repl = Vec::with_capacity(n * comps);
    decode_into(vb, n, comps * component_size(ct), ct, comps, acc.normalized, &mut repl);
    let mut prev: Option<usize> = None;
    for (k, &i) in idx.iter().enumerate() {
        let i = i as usize;
        if i >= count || prev.is_some_and(|p| i <= p) {
            return Err(GltfError::of(
                FaultKind::Structure,
                file,
                format!("{ap}/sparse/indices"),
                format!("index {k} is {i}: sparse indices must increase strictly and stay below the accessor's count {count}"),
            ));
        }
        prev = Some(i);
        values[i * comps..(i + 1) * comps].copy_from_slice(&repl[k * comps..(k + 1) * comps]);
    }
    Ok(())
}

/// Decode `count` elements of `comps` components of type `ct`, `stride` bytes apart, from the
/// start of `bytes` (which must hold them), appending to `values`.
fn decode_into(bytes: &[u8], count: usize, stride: usize, ct: ComponentType, comps: usize, norm: bool, values: &mut Vec<f64>) {
    let csize = component_size(ct);
    let elem = comps * csize;
    for i in 0..count {
        let e = &bytes[i * stride..i * stride + elem];
        for c in 0..comps {
            let b = &e[c * csize..(c + 1) * csize];
            let v = match ct {
                ComponentType::I8 => {
                    let x = b[0] as i8 as f64;
                    if norm {
                        (x / 127.0).max(-1.0)
                    } else {
                        x
                    }
                }
                ComponentType::U8 => {
                    let x = b[0] as f64;
                    if norm {
                        x / 255.0
                    } else {
                        x
                    }
                }
                ComponentType::I16 => {
                    let x = i16::from_le_bytes([b[0], b[1]]) as f64;
                    if norm {
                        (x / 32767.0).max(-1.0)
                    } else {
                        x
                    }
                }
                ComponentType::U16 => {
                    let x = u16::from_le_bytes([b[0], b[1]]) as f64;
                    if norm {
                        x / 65535.0
                    } else {
                        x
                    }
                }
                ComponentType::U32 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
                ComponentType::F32 => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
            };
            values.push(v);
        }
    }
}

/// The buffer view of an accessor and the byte stride declared on it, if any (IBM accessors
/// must have none).
pub(crate) fn view_stride(root: &Root, accessor: usize) -> Option<(usize, usize)> {
    let acc = root.accessors.get(accessor)?;
    let vi = acc.buffer_view?.value();
    let view = root.buffer_views.get(vi)?;
    view.byte_stride.map(|s| (vi, s.0))
}
