//! `cargo xtask blender-extension`: skelport's Blender add-on (crates/skelport-py/blender/) as
//! `dist/skelport-<version>.zip`, a Blender 4.2+ extension with the abi3 wheel bundled
//! (`blender --command extension install-file dist/skelport-<version>.zip`), and as
//! `dist/skelport-<version>-legacy.zip`, the same add-on for Blender 3.x (Edit > Preferences >
//! Add-ons > Install) with the package unpacked beside it.

use anyhow::{bail, Context, Result};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use zip::write::SimpleFileOptions;

/// The newest `skelport-*.whl` in `dir`, built with maturin when there is none.
fn wheel(root: &Path) -> Result<PathBuf> {
    let dir = root.join("target/wheels");
    let find = || -> Option<PathBuf> {
        let mut found: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(&dir)
            .ok()?
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with("skelport-") && n.ends_with(".whl")))
            .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
            .collect();
        found.sort();
        found.pop().map(|(_, p)| p)
    };
    if let Some(w) = find() {
        return Ok(w);
    }
    eprintln!("no wheel in {}: building it (maturin build --release)", dir.display());
    let status = std::process::Command::new("maturin")
        .args(["build", "--release", "-q", "-m", "crates/skelport-py/Cargo.toml", "-o"])
        .arg(&dir)
        .current_dir(root)
        .status()
        .context("running maturin (pip install maturin)")?;
    if !status.success() {
        bail!("maturin build failed");
    }
    find().context("maturin built no wheel")
}

/// Build both zips; prints their paths.
pub fn extension(root: &Path) -> Result<()> {
    let src = root.join("crates/skelport-py/blender");
    let wheel = wheel(root)?;
    let wheel_name = wheel.file_name().and_then(|n| n.to_str()).context("wheel name")?.to_owned();
    let version = env!("CARGO_PKG_VERSION");
    let manifest = std::fs::read_to_string(src.join("blender_manifest.toml"))?;
    if !manifest.contains(&format!("version = \"{version}\"")) {
        bail!("crates/skelport-py/blender/blender_manifest.toml: its version is not the workspace's {version}");
    }
    let manifest = manifest.replace("wheels = []", &format!("wheels = [\"./wheels/{wheel_name}\"]"));
    let addon = std::fs::read(src.join("__init__.py"))?;
    let wheel_bytes = std::fs::read(&wheel)?;
    let dist = root.join("dist");
    std::fs::create_dir_all(&dist)?;
    let opts = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);

    let ext = dist.join(format!("skelport-{version}.zip"));
    let mut z = zip::ZipWriter::new(std::fs::File::create(&ext)?);
    z.start_file("blender_manifest.toml", opts)?;
    z.write_all(manifest.as_bytes())?;
    z.start_file("__init__.py", opts)?;
    z.write_all(&addon)?;
    // Stored: a wheel is a zip already.
    z.start_file(format!("wheels/{wheel_name}"), SimpleFileOptions::default())?;
    z.write_all(&wheel_bytes)?;
    z.finish()?;

    // Blender 3.x: a folder add-on whose `skelport` package (the wheel's files) sits beside it,
    // put on sys.path by the add-on's first lines.
    let legacy = dist.join(format!("skelport-{version}-legacy.zip"));
    let mut z = zip::ZipWriter::new(std::fs::File::create(&legacy)?);
    let prelude = "import os as _os, sys as _sys\n_here = _os.path.join(_os.path.dirname(__file__), \"site\")\nif _here not in _sys.path:\n    _sys.path.insert(0, _here)\n";
    z.start_file("skelport_blender/__init__.py", opts)?;
    z.write_all(prelude.as_bytes())?;
    z.write_all(&addon)?;
    let mut w = zip::ZipArchive::new(std::io::Cursor::new(&wheel_bytes))?;
    for k in 0..w.len() {
        let mut f = w.by_index(k)?;
        let name = f.name().to_owned();
        if f.is_dir() {
            continue;
        }
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes)?;
        z.start_file(format!("skelport_blender/site/{name}"), opts)?;
        z.write_all(&bytes)?;
    }
    z.finish()?;
    println!("{}\n{}", ext.display(), legacy.display());
    Ok(())
}
