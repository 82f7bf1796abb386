//! Project automation: `cargo xtask <command>`.
//!
//! * `regen-fixtures [--check]` — regenerate every generated file under `testdata/`
//!   deterministically; with `--check`, fail when any is stale or missing.
//! * `gen-sl-table [--check]` — regenerate the Second Life skeleton table from the corpus's
//!   avatar_skeleton.xml and avatar_lad.xml.

use anyhow::{bail, Context, Result};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().map(Path::to_path_buf).unwrap_or_default()
}

/// Write or check a set of generated files; returns the stale ones.
fn sync(files: &[(PathBuf, Vec<u8>)], check: bool) -> Result<Vec<PathBuf>> {
    let mut stale = Vec::new();
    for (path, bytes) in files {
        let current = std::fs::read(path).ok();
        if current.as_deref() != Some(bytes.as_slice()) {
            stale.push(path.clone());
            if !check {
                if let Some(d) = path.parent() {
                    std::fs::create_dir_all(d)?;
                }
                std::fs::write(path, bytes).with_context(|| format!("writing {}", path.display()))?;
            }
        }
    }
    Ok(stale)
}

fn report(what: &str, stale: &[PathBuf], check: bool, total: usize) -> Result<()> {
    if check && !stale.is_empty() {
        for s in stale {
            eprintln!("stale: {}", s.display());
        }
        bail!(
            "{} of {total} {what} are stale; run `cargo xtask {}`",
            stale.len(),
            if what == "fixtures" { "regen-fixtures" } else { "gen-sl-table" }
        );
    }
    eprintln!("{what}: {total} checked, {} {}", stale.len(), if check { "stale" } else { "rewritten" });
    Ok(())
}

fn regen_fixtures(check: bool) -> Result<()> {
    let testdata = root().join("testdata");
    let files: Vec<(PathBuf, Vec<u8>)> = skelport_cli::demo::fixtures().into_iter().map(|(rel, b)| (testdata.join(rel), b)).collect();
    let stale = sync(&files, check)?;
    report("fixtures", &stale, check, files.len())
}

fn matrix() -> Result<()> {
    let corpus = skelport_ir::testing::corpus_root();
    let sources = skelport_cli::matrix::sources(corpus.as_deref());
    let cells = skelport_cli::matrix::run(&sources);
    let md = skelport_cli::matrix::markdown(&cells);
    std::fs::write(root().join("docs/conversion-matrix.md"), md)?;
    let failed = cells.iter().filter(|c| !c.ok).count();
    eprintln!("matrix: {} cells, {failed} failed; wrote docs/conversion-matrix.md", cells.len());
    Ok(())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    match args.first().map(String::as_str) {
        Some("regen-fixtures") => regen_fixtures(check),
        Some("matrix") => matrix(),
        _ => bail!("usage: cargo xtask regen-fixtures [--check] | matrix"),
    }
}
