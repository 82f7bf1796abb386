//! `EXT_meshopt_compression` (what `gltfpack` writes): buffer views whose bytes are compressed by
//! meshoptimizer's codecs. Each one is decoded into the bytes its (fallback) buffer would hold,
//! so every accessor is then read as from an uncompressed file.
//!
//! The codecs are meshoptimizer's own C++ (the `meshopt` crate's bindings), called through its
//! raw functions because the crate wraps neither the filters nor byte buffers of a stride given
//! at run time. Every size those functions assert on is checked here first; the decoders
//! themselves check the compressed bytes (meshoptimizer documents them as safe on untrusted
//! input, returning an error code for malformed data).

use crate::error::GltfError;
use serde::Deserialize;
use skelport_ir::Budget;
use std::os::raw::c_void;

/// The extension's name (in `extensionsUsed`, `extensionsRequired` and on buffer views).
pub(crate) const EXTENSION: &str = "EXT_meshopt_compression";

#[derive(Deserialize)]
struct Probe {
    #[serde(default, rename = "bufferViews")]
    views: Vec<ProbeView>,
    #[serde(default)]
    buffers: Vec<ProbeBuffer>,
}

#[derive(Deserialize)]
struct ProbeView {
    #[serde(default)]
    extensions: Option<ViewExtensions>,
    #[serde(default)]
    buffer: usize,
    #[serde(default, rename = "byteOffset")]
    byte_offset: u64,
    #[serde(default, rename = "byteLength")]
    byte_length: u64,
}

#[derive(Deserialize)]
struct ProbeBuffer {
    #[serde(default, rename = "byteLength")]
    byte_length: u64,
}

#[derive(Deserialize)]
struct ViewExtensions {
    #[serde(rename = "EXT_meshopt_compression")]
    meshopt: Option<Compressed>,
}

/// `bufferView.extensions.EXT_meshopt_compression` (the extension's schema).
#[derive(Deserialize)]
struct Compressed {
    buffer: usize,
    #[serde(default, rename = "byteOffset")]
    byte_offset: u64,
    #[serde(rename = "byteLength")]
    byte_length: u64,
    #[serde(rename = "byteStride")]
    byte_stride: usize,
    count: usize,
    mode: String,
    #[serde(default)]
    filter: Option<String>,
}

/// Decode every compressed buffer view of the glTF JSON `json` into `buffers` (the loaded
/// buffers, by index): the decoded bytes go where the view points in its buffer, which is grown
/// to its declared `byteLength` when the file left it empty (a fallback buffer without data).
/// The decoded bytes are charged to `budget`. Returns how many views were decoded.
pub(crate) fn decode(json: &[u8], buffers: &mut [Vec<u8>], budget: &Budget, file: &str) -> Result<usize, GltfError> {
    let probe: Probe = serde_json::from_slice(json).map_err(|e| GltfError::Json {
        file: file.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e.to_string(),
        data: e.is_data(),
    })?;
    let mut decoded = 0;
    for (i, view) in probe.views.iter().enumerate() {
        let Some(c) = view.extensions.as_ref().and_then(|x| x.meshopt.as_ref()) else { continue };
        let at = format!("/bufferViews/{i}/extensions/{EXTENSION}");
        let err = |m: String| GltfError::invalid(file, &at, m);
        let source = buffers
            .get(c.buffer)
            .and_then(|b| {
                let start = usize::try_from(c.byte_offset).ok()?;
                b.get(start..start.checked_add(usize::try_from(c.byte_length).ok()?)?)
            })
            .ok_or_else(|| {
                err(format!(
                    "the compressed bytes (buffer {}, byteOffset {}, byteLength {}) are not in the file's data; export the file again",
                    c.buffer, c.byte_offset, c.byte_length
                ))
            })?;
        let size =
            c.count.checked_mul(c.byte_stride).ok_or_else(|| err(format!("count {} × byteStride {} overflows", c.count, c.byte_stride)))?;
        if size as u64 > view.byte_length {
            return Err(err(format!(
                "count {} × byteStride {} = {size} bytes decoded, more than the buffer view's byteLength {}; export the file again",
                c.count, c.byte_stride, view.byte_length
            )));
        }
        budget.charge(size as u64, file, &at)?;
        let bytes = decode_one(source, c).map_err(err)?;
        let target_len = probe.buffers.get(view.buffer).map_or(0, |b| b.byte_length);
        let end = view.byte_offset.checked_add(size as u64).filter(|&e| e <= target_len).ok_or_else(|| {
            GltfError::invalid(
                file,
                format!("/bufferViews/{i}"),
                format!("byteOffset {} + {size} decoded bytes exceeds buffer {}'s byteLength {target_len}", view.byte_offset, view.buffer),
            )
        })?;
        let target = buffers.get_mut(view.buffer).ok_or_else(|| {
            GltfError::of(
                skelport_ir::FaultKind::Reference,
                file,
                format!("/bufferViews/{i}/buffer"),
                format!("buffer {} does not exist", view.buffer),
            )
        })?;
        if (target.len() as u64) < end {
            budget.charge(target_len - target.len() as u64, file, &format!("/buffers/{}", view.buffer))?;
            target.resize(target_len as usize, 0);
        }
        target[view.byte_offset as usize..end as usize].copy_from_slice(&bytes);
        decoded += 1;
    }
    Ok(decoded)
}

/// One view's bytes, decoded and unfiltered.
fn decode_one(source: &[u8], c: &Compressed) -> Result<Vec<u8>, String> {
    let (count, stride) = (c.count, c.byte_stride);
    let size = count * stride;
    // Four-byte words, so the filters see aligned 16- and 32-bit values.
    let mut words = vec![0u32; size.div_ceil(4)];
    let out = words.as_mut_ptr().cast::<c_void>();
    let code = match c.mode.as_str() {
        "ATTRIBUTES" => {
            if !(stride > 0 && stride <= 256 && stride % 4 == 0) {
                return Err(format!("byteStride {stride}: ATTRIBUTES needs a multiple of 4 up to 256"));
            }
            // SAFETY: `out` holds `count * stride` bytes; the sizes meshoptimizer asserts on are checked above.
            unsafe { meshopt::ffi::meshopt_decodeVertexBuffer(out, count, stride, source.as_ptr(), source.len()) }
        }
        "TRIANGLES" | "INDICES" => {
            if stride != 2 && stride != 4 {
                return Err(format!("byteStride {stride}: {} needs 2 or 4", c.mode));
            }
            if c.mode == "TRIANGLES" {
                if count % 3 != 0 {
                    return Err(format!("count {count}: TRIANGLES needs a multiple of 3"));
                }
                // SAFETY: as above; the index count is a multiple of 3 and the index size 2 or 4.
                unsafe { meshopt::ffi::meshopt_decodeIndexBuffer(out, count, stride, source.as_ptr(), source.len()) }
            } else {
                // SAFETY: as above; the index size is 2 or 4.
                unsafe { meshopt::ffi::meshopt_decodeIndexSequence(out, count, stride, source.as_ptr(), source.len()) }
            }
        }
        other => return Err(format!("mode \"{other}\" is not ATTRIBUTES, TRIANGLES or INDICES")),
    };
    if code != 0 {
        return Err(format!("the compressed data does not decode (meshoptimizer error {code}); the file is damaged: export it again"));
    }
    match c.filter.as_deref().unwrap_or("NONE") {
        "NONE" => {}
        filter => {
            let ok = c.mode == "ATTRIBUTES"
                && match filter {
                    "OCTAHEDRAL" => stride == 4 || stride == 8,
                    "QUATERNION" => stride == 8,
                    "EXPONENTIAL" => stride % 4 == 0,
                    _ => return Err(format!("filter \"{filter}\" is not NONE, OCTAHEDRAL, QUATERNION or EXPONENTIAL")),
                };
            if !ok {
                return Err(format!("filter {filter} does not fit mode {} with byteStride {stride}", c.mode));
            }
            // SAFETY: `out` holds `count * stride` decoded bytes, 4-aligned; each filter's stride rule is checked above.
            unsafe {
                match filter {
                    "OCTAHEDRAL" => meshopt::ffi::meshopt_decodeFilterOct(out, count, stride),
                    "QUATERNION" => meshopt::ffi::meshopt_decodeFilterQuat(out, count, stride),
                    _ => meshopt::ffi::meshopt_decodeFilterExp(out, count, stride),
                }
            }
        }
    }
    let mut bytes: Vec<u8> = words.iter().flat_map(|w| w.to_ne_bytes()).collect();
    bytes.truncate(size);
    Ok(bytes)
}
