//! Accessors: typed, tightly packed little-endian arrays spanning a whole buffer view.

use crate::G4mfError;

/// Byte size of a component type, or `None` when unknown.
pub fn component_size(t: &str) -> Option<usize> {
    Some(match t {
        "float8" | "int8" | "uint8" => 1,
        "float16" | "int16" | "uint16" => 2,
        "float32" | "int32" | "uint32" => 4,
        "float64" | "int64" | "uint64" => 8,
        "float128" | "int128" | "uint128" => 16,
        _ => return None,
    })
}

/// Whether the component type is an unsigned integer.
pub fn is_unsigned(t: &str) -> bool {
    t.starts_with("uint")
}

/// Whether the component type is a float.
pub fn is_float(t: &str) -> bool {
    t.starts_with("float")
}

fn f16_to_f64(h: u16) -> f64 {
    let sign = if h & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = ((h >> 10) & 0x1f) as i32;
    let man = (h & 0x3ff) as f64;
    match exp {
        0 => sign * man * 2f64.powi(-24),
        31 => {
            if man == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => sign * (1.0 + man / 1024.0) * 2f64.powi(e - 15),
    }
}

/// G4MF's float8: 1 sign, 4 exponent (bias 7), 3 mantissa bits, IEEE-like.
fn f8_to_f64(b: u8) -> f64 {
    let sign = if b & 0x80 != 0 { -1.0 } else { 1.0 };
    let exp = ((b >> 3) & 0x0f) as i32;
    let man = (b & 0x07) as f64;
    match exp {
        0 => sign * man * 2f64.powi(-9),
        15 => {
            if man == 0.0 {
                sign * f64::INFINITY
            } else {
                f64::NAN
            }
        }
        e => sign * (1.0 + man / 8.0) * 2f64.powi(e - 7),
    }
}

/// Decode every component of `data` as f64. `what` names the accessor in errors.
pub fn decode(t: &str, data: &[u8], what: &str, file: &str) -> Result<Vec<f64>, G4mfError> {
    let size = component_size(t).ok_or_else(|| G4mfError::Json {
        file: file.into(),
        path: what.into(),
        message: format!("component type \"{t}\" is not one skelport reads (float8..64, int8..128, uint8..128)"),
        kind: skelport_ir::FaultKind::Unsupported,
    })?;
    let mut out = Vec::with_capacity(data.len() / size);
    for c in data.chunks_exact(size) {
        let v = match t {
            "float8" => f8_to_f64(c[0]),
            "float16" => f16_to_f64(u16::from_le_bytes([c[0], c[1]])),
            "float32" => f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
            "float64" => f64::from_le_bytes(c.try_into().unwrap_or([0; 8])),
            "int8" => c[0] as i8 as f64,
            "uint8" => c[0] as f64,
            "int16" => i16::from_le_bytes([c[0], c[1]]) as f64,
            "uint16" => u16::from_le_bytes([c[0], c[1]]) as f64,
            "int32" => i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
            "uint32" => u32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64,
            "int64" => i64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            "uint64" => u64::from_le_bytes(c.try_into().unwrap_or([0; 8])) as f64,
            "int128" => i128::from_le_bytes(c.try_into().unwrap_or([0; 16])) as f64,
            "uint128" => u128::from_le_bytes(c.try_into().unwrap_or([0; 16])) as f64,
            _ => {
                return Err(G4mfError::Json {
                    file: file.into(),
                    path: what.into(),
                    message: "float128 accessors are not supported; re-export with float64".into(),
                    kind: skelport_ir::FaultKind::Unsupported,
                })
            }
        };
        out.push(v);
    }
    Ok(out)
}

/// The smallest unsigned type holding `max`.
pub fn uint_type_for(max: u64) -> &'static str {
    if max <= u8::MAX as u64 {
        "uint8"
    } else if max <= u16::MAX as u64 {
        "uint16"
    } else {
        "uint32"
    }
}

/// Encode unsigned integers with a component type from [`uint_type_for`].
pub fn encode_uint(t: &str, values: impl Iterator<Item = u64>, out: &mut Vec<u8>) {
    for v in values {
        match t {
            "uint8" => out.push(v as u8),
            "uint16" => out.extend_from_slice(&(v as u16).to_le_bytes()),
            _ => out.extend_from_slice(&(v as u32).to_le_bytes()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_floats_decode() {
        // float8 bits: sign | exponent (4, bias 7) | mantissa (3).
        assert_eq!(f16_to_f64(0x3c00), 1.0);
        assert_eq!(f16_to_f64(0xc000), -2.0);
        assert_eq!(f8_to_f64(0b0011_1000), 1.0);
        assert_eq!(f8_to_f64(0b0111_0111), 240.0);
        assert!(f8_to_f64(0b0111_1000).is_infinite());
    }

    #[test]
    fn uint_round_trip() {
        let mut b = Vec::new();
        encode_uint("uint16", [1u64, 300, 65535].into_iter(), &mut b);
        assert_eq!(decode("uint16", &b, "a", "f").unwrap(), vec![1.0, 300.0, 65535.0]);
    }
}
