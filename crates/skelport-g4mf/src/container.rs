//! The binary container `.g4b`: a 16-byte file header ("G4MF", version 0, total size) and
//! 16-byte-aligned chunks (type FourCC, encoding FourCC, size). Hand-written because it is a
//! fixed-layout header format of a few fields; every size is checked against the bytes present.

use crate::G4mfError;
use skelport_ir::{Budget, BudgetError};

/// Magic number of a `.g4b` file.
pub const MAGIC: &[u8; 4] = b"G4MF";
/// Chunk type of the JSON document.
pub const JSON: [u8; 4] = *b"JSON";
/// Chunk type of binary data.
pub const BLOB: [u8; 4] = *b"BLOB";
/// Plain (unencoded) chunk data.
pub const PLAIN: [u8; 4] = [0; 4];
/// Zstandard-encoded chunk data.
pub const ZSTD: [u8; 4] = *b"Zstd";

/// One chunk, decoded.
#[derive(Debug, Clone)]
pub struct Chunk {
    pub kind: [u8; 4],
    pub encoding: [u8; 4],
    /// The decoded data.
    pub data: Vec<u8>,
}

/// One chunk as it lies in the file: checked, not yet decoded. Readers decode only the chunks
/// they use ([`RawChunk::decode`]), against the conversion's budget.
#[derive(Debug, Clone, Copy)]
pub struct RawChunk<'a> {
    pub kind: [u8; 4],
    pub encoding: [u8; 4],
    /// Byte offset of the chunk's data in the file (for messages).
    pub offset: usize,
    /// The data as stored (Zstd-compressed when `encoding` is [`ZSTD`]).
    pub raw: &'a [u8],
}

/// Largest size a Zstd chunk may decode to (the container caps it; documented in docs/limits.md).
pub const MAX_DECODED: usize = 1 << 30;

fn u64_at(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_le_bytes(a)
}

/// Split a `.g4b` file into chunks and decode them all, against a budget proportional to the
/// file ([`Budget::for_input`]). Readers use [`split`] and decode lazily instead.
pub fn read(bytes: &[u8], file: &str) -> Result<Vec<Chunk>, G4mfError> {
    let budget = Budget::for_input(bytes.len() as u64);
    split(bytes, file)?
        .iter()
        .enumerate()
        .map(|(i, c)| Ok(Chunk { kind: c.kind, encoding: c.encoding, data: c.decode(i, &budget, file)? }))
        .collect()
}

/// Split a `.g4b` file into its chunks, checking the header, every chunk header and size, each
/// encoding and the Zstandard magic number, without decoding anything.
pub fn split<'a>(bytes: &'a [u8], file: &str) -> Result<Vec<RawChunk<'a>>, G4mfError> {
    let bad =
        |offset: usize, message: String| G4mfError::Binary { file: file.into(), offset, message, kind: skelport_ir::FaultKind::Container };
    if bytes.len() < 32 {
        return Err(bad(
            0,
            format!("file is {} bytes; a .g4b file has at least a 16-byte header and one 16-byte chunk header", bytes.len()),
        ));
    }
    if &bytes[0..4] != MAGIC {
        return Err(bad(0, "missing the \"G4MF\" magic number; is this a .g4tf text file?".into()));
    }
    let version = u32::from_le_bytes([bytes[4], bytes[5], bytes[6], bytes[7]]);
    if version != 0 {
        return Err(bad(4, format!("container version {version}; this draft of G4MF defines only version 0")));
    }
    let total = u64_at(bytes, 8);
    if total >> 63 != 0 || total != bytes.len() as u64 {
        return Err(bad(8, format!("header says the file is {total} bytes but it is {} bytes (truncated or padded?)", bytes.len())));
    }
    let mut chunks = Vec::new();
    let mut at = 16usize;
    while at < bytes.len() {
        if at + 16 > bytes.len() {
            return Err(bad(at, "a chunk header runs past the end of the file".into()));
        }
        let mut kind = [0u8; 4];
        kind.copy_from_slice(&bytes[at..at + 4]);
        let mut encoding = [0u8; 4];
        encoding.copy_from_slice(&bytes[at + 4..at + 8]);
        let size = u64_at(bytes, at + 8);
        let start = at + 16;
        if size >> 63 != 0 || size > (bytes.len() - start) as u64 {
            return Err(bad(at + 8, format!("chunk size {size} runs past the end of the file ({} bytes left)", bytes.len() - start)));
        }
        let end = start + size as usize;
        let raw = &bytes[start..end];
        match encoding {
            PLAIN => {}
            ZSTD => {
                if raw.len() < 4 || raw[..4] != [0x28, 0xB5, 0x2F, 0xFD] {
                    return Err(bad(start, "a Zstd chunk does not start with the Zstandard magic number".into()));
                }
            }
            [0xFF, 0xFF, 0xFF, 0xFF] => return Err(bad(at + 4, "chunk encoding FFFFFFFF is reserved and makes the file invalid".into())),
            other => {
                return Err(bad(
                    at + 4,
                    format!("unknown chunk encoding {:?}; skelport reads plain and Zstd chunks", String::from_utf8_lossy(&other)),
                ))
            }
        }
        chunks.push(RawChunk { kind, encoding, offset: start, raw });
        // The next chunk starts on a 16-byte boundary.
        at = end.div_ceil(16) * 16;
    }
    if !chunks.iter().any(|c| c.kind == JSON) {
        return Err(bad(16, "no JSON chunk: a .g4b file needs its document".into()));
    }
    Ok(chunks)
}

impl RawChunk<'_> {
    /// The chunk's data, decoded: a copy of a plain chunk, the decompressed bytes of a Zstd one.
    /// Either is charged to `budget` before it is allocated (a Zstd chunk as it grows, as
    /// "decompression"); `index` names the chunk in messages.
    pub fn decode(&self, index: usize, budget: &Budget, file: &str) -> Result<Vec<u8>, G4mfError> {
        let element = format!("chunk {index} (byte {})", self.offset);
        if self.encoding != ZSTD {
            budget.charge(self.raw.len() as u64, file, &element)?;
            return Ok(self.raw.to_vec());
        }
        let bad = |message: String| G4mfError::Binary {
            file: file.into(),
            offset: self.offset,
            message,
            kind: skelport_ir::FaultKind::Container,
        };
        decode_zstd(self.raw, budget, file, &element).map_err(|e| match e {
            ZstdError::Budget(b) => G4mfError::Budget(b),
            ZstdError::Io(e) => bad(format!("cannot decode the Zstd chunk: {e}")),
            ZstdError::TooLarge => bad(format!("the Zstd chunk decodes to more than {MAX_DECODED} bytes, the most a chunk may hold")),
        })
    }
}

enum ZstdError {
    Io(std::io::Error),
    Budget(BudgetError),
    TooLarge,
}

/// Decompress a Zstd chunk, charging `budget` for every byte of capacity before it is taken.
/// The frame's declared size, when it has one, sizes the buffer at once (and is charged at
/// once, so a frame claiming gigabytes is refused before anything is decoded); a frame that
/// lies about it, or has none, grows the buffer by doubling, each step charged first.
fn decode_zstd(raw: &[u8], budget: &Budget, file: &str, element: &str) -> Result<Vec<u8>, ZstdError> {
    use std::io::Read;
    let declared = zstd::zstd_safe::get_frame_content_size(raw).ok().flatten();
    let mut out: Vec<u8> = Vec::new();
    if let Some(n) = declared {
        if n > MAX_DECODED as u64 {
            return Err(ZstdError::TooLarge);
        }
        budget.charge_decompressed(n, file, element).map_err(ZstdError::Budget)?;
        out.reserve_exact(n as usize);
    }
    let mut dec = zstd::stream::read::Decoder::with_buffer(raw).map_err(ZstdError::Io)?;
    let mut block = vec![0u8; 1 << 16];
    loop {
        let n = match dec.read(&mut block) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(ZstdError::Io(e)),
        };
        if out.len() + n > MAX_DECODED {
            return Err(ZstdError::TooLarge);
        }
        if out.len() + n > out.capacity() {
            let grown = (out.capacity() * 2).max(out.len() + n).clamp(1 << 16, MAX_DECODED);
            budget.charge_decompressed((grown - out.capacity()) as u64, file, element).map_err(ZstdError::Budget)?;
            out.reserve_exact(grown - out.len());
        }
        out.extend_from_slice(&block[..n]);
    }
    Ok(out)
}

/// Assemble chunks into a `.g4b` file, encoding those whose `encoding` is Zstd.
pub fn write(chunks: &[Chunk]) -> std::io::Result<Vec<u8>> {
    let mut out = vec![0u8; 16];
    out[..4].copy_from_slice(MAGIC);
    for (i, c) in chunks.iter().enumerate() {
        let data = if c.encoding == ZSTD { zstd::bulk::compress(&c.data, 19)? } else { c.data.clone() };
        out.extend_from_slice(&c.kind);
        out.extend_from_slice(&c.encoding);
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(&data);
        if i + 1 < chunks.len() {
            let pad = if c.kind == JSON && c.encoding == PLAIN { b' ' } else { 0 };
            while out.len() % 16 != 0 {
                out.push(pad);
            }
        }
    }
    let total = out.len() as u64;
    out[8..16].copy_from_slice(&total.to_le_bytes());
    Ok(out)
}
