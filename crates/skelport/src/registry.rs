//! The format registry: one line per format. Adding a format = one crate + one line here.

use skelport_ir::Format;

/// Every format skelport knows, in the order `--help` lists them.
pub fn formats() -> &'static [&'static dyn Format] {
    static FORMATS: &[&dyn Format] = &[
        &skelport_mpfb::MpfbFormat,
        &skelport_anvil::AnvilFormat,
        &skelport_anvil::AnvilSchemaFormat,
        &skelport_gltf::GltfFormat,
        &skelport_gltf::GlbFormat,
        &skelport_g4mf::G4tfFormat,
        &skelport_g4mf::G4bFormat,
        &skelport_sl::DaeFormat,
        &skelport_ir::irjson::IrJsonFormat,
        &skelport_sl::SlSkeletonFormat,
        // After glb: a GLB whose head names VRMC_vrm sniffs 100 for both, and the last wins.
        &skelport_vrm::VrmFormat,
        &skelport_mhskel::MhskelFormat,
        &skelport_fbx::FbxFormat,
    ];
    FORMATS
}

/// Look a format up by its `--from`/`--to` name.
pub fn by_name(name: &str) -> Option<&'static dyn Format> {
    formats().iter().copied().find(|f| f.name().eq_ignore_ascii_case(name))
}

/// The names of all formats, for messages.
pub fn names(filter: impl Fn(&dyn Format) -> bool) -> String {
    formats().iter().filter(|f| filter(**f)).map(|f| f.name()).collect::<Vec<_>>().join(", ")
}

/// Lower-case extension of a path, treating `x.ir.json` as `ir.json`.
pub fn extension_of(path: &std::path::Path) -> Option<String> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.ends_with(".ir.json") {
        return Some("ir.json".into());
    }
    path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase())
}

/// Pick the reading format for a file: `--from`, else the formats claiming the extension (sniffed
/// when several do), else sniffing every reader.
pub fn detect_reader(path: Option<&std::path::Path>, head: &[u8]) -> Option<&'static dyn Format> {
    let ext = path.and_then(extension_of);
    let readers = formats().iter().copied().filter(|f| f.can_read());
    let claiming: Vec<&'static dyn Format> = match &ext {
        Some(e) => readers.clone().filter(|f| f.extensions().contains(&e.as_str())).collect(),
        None => Vec::new(),
    };
    let best = |cands: &mut dyn Iterator<Item = &'static dyn Format>| {
        cands.map(|f| (f.sniff(head), f)).filter(|(s, _)| *s > 0).max_by_key(|(s, _)| *s).map(|(_, f)| f)
    };
    if claiming.len() == 1 && claiming[0].sniff(head) > 0 {
        return Some(claiming[0]);
    }
    best(&mut claiming.iter().copied()).or_else(|| best(&mut readers.clone())).or_else(|| (claiming.len() == 1).then(|| claiming[0]))
}

/// Pick the writing format for an output path from its extension.
pub fn detect_writer(path: &std::path::Path) -> Option<&'static dyn Format> {
    let ext = extension_of(path)?;
    let mut cands = formats().iter().copied().filter(|f| f.can_write() && f.extensions().contains(&ext.as_str()));
    let first = cands.next()?;
    // Several writers claim `.json` / `.xml`: the first registered is the default (mpfb, anvil).
    Some(first)
}

/// The inputs with each folder among them replaced by the files in it that a reader claims by
/// extension (sorted by name; hidden files and subfolders left out): a folder is a batch, for
/// the command line and for Python alike.
pub fn files_to_read(inputs: &[std::path::PathBuf]) -> crate::Result<Vec<std::path::PathBuf>> {
    use crate::{Error, ErrorCode};
    let mut out = Vec::new();
    for input in inputs {
        if !input.is_dir() {
            out.push(input.clone());
            continue;
        }
        let shown = input.display().to_string();
        let listed = std::fs::read_dir(input)
            .map_err(|e| Error::new(ErrorCode::Input, Some(&shown), format!("{shown}: cannot list the folder: {e}")))?;
        let mut files: Vec<std::path::PathBuf> = listed
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_file() && !p.file_name().is_some_and(|n| n.to_string_lossy().starts_with('.')))
            .filter(|p| extension_of(p).is_some_and(|ext| formats().iter().any(|f| f.can_read() && f.extensions().contains(&ext.as_str()))))
            .collect();
        if files.is_empty() {
            let msg = format!("{shown}: the folder holds no file skelport reads ({})", names(|f| f.can_read()));
            return Err(Error::new(ErrorCode::Input, Some(&shown), msg));
        }
        files.sort();
        out.extend(files);
    }
    Ok(out)
}
