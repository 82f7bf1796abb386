//! Zipped Collada (`.zae`, Collada 1.5's archive form; assimp and the Collada DOM read it): a
//! zip holding the `.dae` and a `manifest.xml` whose `<dae_root>` names it. Read through the
//! `zip` crate (zip-rs: the maintained Rust zip library), its one `.dae` decompressed into
//! memory under a bound checked before any memory is taken: a zip bomb is an error, not an
//! allocation. Nothing else in the archive (textures) is read.

use crate::error::SlError;
use std::io::Read;

/// The zip local-file signature every `.zae` starts with.
pub const ZIP_MAGIC: &[u8] = b"PK\x03\x04";

/// The decompressed `.dae` may be at most this many times the archive's size (Collada text
/// deflates 4–5×: Linden's bodies, assimp's human), never below [`MIN_BOUND`] and never above
/// [`MAX_BOUND`].
pub const RATIO: u64 = 100;
/// The bound for small archives.
pub const MIN_BOUND: u64 = 16 << 20;
/// The bound whatever the archive's size: the input-file limit (docs/limits.md).
pub const MAX_BOUND: u64 = 1 << 30;

/// The most a `.dae` in an archive of `archive_len` bytes may decompress to.
pub fn bound(archive_len: usize) -> u64 {
    (archive_len as u64).saturating_mul(RATIO).clamp(MIN_BOUND, MAX_BOUND)
}

/// Whether `head` (the first bytes of a file) looks like a zipped Collada file: a zip whose
/// first entries name a manifest or a `.dae`.
pub fn looks_like(head: &[u8]) -> bool {
    head.starts_with(ZIP_MAGIC) && {
        let h = &head[..head.len().min(4096)];
        memchr::memmem::find(h, b"manifest.xml").is_some() || memchr::memmem::find(h, b".dae").is_some()
    }
}

/// The `.dae` of a `.zae` archive: its entry name and its bytes. `file` names the archive in
/// errors.
pub fn unpack(bytes: &[u8], file: &str) -> Result<(String, Vec<u8>), SlError> {
    let bad = |m: String| SlError::invalid(file, 0, 0, m);
    let mut zip = zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| {
        bad(format!("not a readable zip archive ({e}); a .zae is a zip holding the .dae: repack it, or unzip it and convert the .dae"))
    })?;
    let limit = bound(bytes.len());
    let names: Vec<String> = zip.file_names().map(str::to_string).collect();
    let entry = match names.iter().find(|n| n.eq_ignore_ascii_case("manifest.xml")) {
        Some(m) => {
            let text = read_entry(&mut zip, m, 1 << 20, file)?;
            let text = String::from_utf8(text).map_err(|_| bad("manifest.xml is not UTF-8 text".into()))?;
            let doc = roxmltree::Document::parse(&text).map_err(|e| bad(format!("manifest.xml: {e}; fix it or unzip the archive")))?;
            let root = doc
                .descendants()
                .find(|n| n.has_tag_name("dae_root"))
                .and_then(|n| n.text())
                .map(str::trim)
                .ok_or_else(|| bad("manifest.xml has no <dae_root> naming the .dae; add one or unzip the archive".into()))?;
            let wanted = root.trim_start_matches("./").trim_start_matches('/');
            names
                .iter()
                .find(|n| n.as_str() == wanted)
                .cloned()
                .ok_or_else(|| bad(format!("manifest.xml names \"{root}\", which is not in the archive ({})", names.join(", "))))?
        }
        None => {
            let daes: Vec<&String> = names.iter().filter(|n| n.to_ascii_lowercase().ends_with(".dae")).collect();
            match daes.as_slice() {
                [one] => (*one).clone(),
                [] => return Err(bad("the archive holds no manifest.xml and no .dae; it is not a zipped Collada file".into())),
                _ => {
                    return Err(bad(format!(
                        "the archive holds no manifest.xml and {} .dae files ({}); add a manifest naming one, or unzip it and convert the one you want",
                        daes.len(),
                        daes.iter().map(|s| s.as_str()).collect::<Vec<_>>().join(", ")
                    )))
                }
            }
        }
    };
    let dae = read_entry(&mut zip, &entry, limit, file)?;
    Ok((entry, dae))
}

/// Decompress one entry of at most `limit` bytes: the size the archive declares is checked
/// first, and no more than `limit + 1` bytes are ever decompressed (a declared size can lie).
fn read_entry(zip: &mut zip::ZipArchive<std::io::Cursor<&[u8]>>, name: &str, limit: u64, file: &str) -> Result<Vec<u8>, SlError> {
    let bad = |m: String| SlError::invalid(file, 0, 0, m);
    let too_big = |size: String| {
        bad(format!(
            "\"{name}\" decompresses to {size}, over the limit of {limit} bytes for this archive ({RATIO} times its size, at least {MIN_BOUND}, at most {MAX_BOUND}): a zip bomb; if it is none, unzip it and convert the .dae"
        ))
    };
    let entry = zip.by_name(name).map_err(|e| bad(format!("cannot open \"{name}\" in the archive: {e}")))?;
    if entry.size() > limit {
        return Err(too_big(format!("{} bytes", entry.size())));
    }
    let mut out = Vec::with_capacity(entry.size() as usize);
    entry.take(limit + 1).read_to_end(&mut out).map_err(|e| bad(format!("cannot decompress \"{name}\": {e}; the archive is damaged")))?;
    if out.len() as u64 > limit {
        return Err(too_big(format!("more than {limit} bytes (it declares fewer)")));
    }
    Ok(out)
}

/// [`unpack`] when `bytes` are a zip: the `.dae` (named `archive/entry` for messages) and its
/// bytes; `None` for anything else.
pub fn unpack_if_zipped(bytes: &[u8], file: &str) -> Result<Option<(String, Vec<u8>)>, SlError> {
    if !bytes.starts_with(ZIP_MAGIC) {
        return Ok(None);
    }
    let (entry, dae) = unpack(bytes, file)?;
    Ok(Some((format!("{file}/{entry}"), dae)))
}
