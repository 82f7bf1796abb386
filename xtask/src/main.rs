//! Project automation: `cargo xtask <command>`.
//!
//! * `regen-fixtures [--check]` — regenerate every generated file under `testdata/`
//!   deterministically (including the malformed-input suite `testdata/bad/`, see `bad.rs`); with
//!   `--check`, fail when any is stale or missing (or, in `testdata/bad/`, left over from a dropped
//!   case: removed without `--check`). The suite's expected messages are refreshed by
//!   `SKELPORT_BLESS=1 cargo test -p skelport-cli --test bad_inputs`.
//! * `gen-sl-table [--check]` — regenerate the Second Life skeleton table from the corpus's
//!   avatar_skeleton.xml and avatar_lad.xml.

mod bad;
mod bench;

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
    let mut files: Vec<(PathBuf, Vec<u8>)> = skelport_cli::demo::fixtures().into_iter().map(|(rel, b)| (testdata.join(rel), b)).collect();
    files.extend(skelport_render::sample::golden_fixtures().into_iter().map(|(rel, b)| (testdata.join(rel), b)));
    let anvil = testdata.join("anvil");
    files.extend(skelport_anvil::derived_fixtures(&anvil).into_iter().map(|(rel, b)| (anvil.join(rel), b)));
    files.extend(bad::fixtures().into_iter().map(|(rel, b)| (testdata.join(rel), b)));
    let mut stale = sync(&files, check)?;
    // A case dropped from bad.rs leaves its file (and snapshot) behind: remove them, or with
    // --check report them, so the suite holds exactly what the generator makes.
    let generated: std::collections::HashSet<&Path> = files.iter().map(|(p, _)| p.as_path()).collect();
    for dir in std::fs::read_dir(testdata.join("bad"))?.flatten().map(|e| e.path()).filter(|p| p.is_dir()) {
        for f in std::fs::read_dir(&dir)?.flatten().map(|e| e.path()) {
            let case = f.to_string_lossy().strip_suffix(".expected").map(PathBuf::from).unwrap_or_else(|| f.clone());
            if !generated.contains(case.as_path()) {
                if !check {
                    std::fs::remove_file(&f).with_context(|| format!("removing {}", f.display()))?;
                }
                stale.push(f);
            }
        }
    }
    report("fixtures", &stale, check, files.len())
}

fn matrix() -> Result<()> {
    let corpus = skelport_ir::testing::corpus_root();
    let sources = skelport_cli::matrix::sources(corpus.as_deref());
    let cells = skelport_cli::matrix::run(&sources);
    let rows = skelport_cli::matrix::pose_rows(&sources, corpus.as_deref());
    let md = skelport_cli::matrix::markdown(&cells) + &skelport_cli::matrix::pose_markdown(&rows);
    std::fs::write(root().join("docs/conversion-matrix.md"), md)?;
    let failed = cells.iter().filter(|c| !c.ok).count();
    let over = rows.iter().filter(|r| r.test.as_ref().is_none_or(|t| t.max_deviation > skelport_cli::matrix::POSE_TOLERANCE)).count();
    eprintln!(
        "matrix: {} cells, {failed} failed; pose test: {} rows, {over} over the bar; wrote docs/conversion-matrix.md",
        cells.len(),
        rows.len()
    );
    Ok(())
}

/// The format a seed file belongs to, by the registry's detection; MPFB weights and OBJ (read
/// through `--weights` / `--mesh`, not the registry) by name.
fn seed_format(p: &Path, bytes: &[u8]) -> Option<&'static str> {
    let name = p.file_name()?.to_str()?;
    if name.starts_with("weights") && name.ends_with(".json") {
        return Some("mpfb-weights");
    }
    if name.ends_with(".obj") {
        return Some("obj");
    }
    // Only files with an extension some reader claims (not the render goldens' .png/.svg), and
    // not the malformed suite: seeds should be valid so the fuzzer starts deep in the reader.
    let ext = skelport_cli::registry::extension_of(p)?;
    if p.components().any(|c| c.as_os_str() == "bad")
        || !skelport_cli::registry::formats().iter().any(|f| f.can_read() && f.extensions().contains(&ext.as_str()))
    {
        return None;
    }
    skelport_cli::registry::detect_reader(Some(p), &bytes[..bytes.len().min(8192)]).map(|f| f.name())
}

/// Seed a fuzz corpus from every valid file under testdata/ the target's reader recognises (for
/// `read_any`/`roundtrip`: every recognised file, prefixed with the byte that selects its format,
/// see skelport_cli::fuzzing), then run the target for `seconds`.
fn fuzz(name: &str, seconds: u64) -> Result<()> {
    let want = skelport_cli::fuzzing::TARGETS.iter().find(|(t, _)| *t == name).map(|(_, f)| *f);
    if want.is_none() && name != "read_any" && name != "roundtrip" {
        let all: Vec<&str> = skelport_cli::fuzzing::TARGETS.iter().map(|(t, _)| *t).collect();
        bail!("unknown fuzz target {name}; targets: read_any, roundtrip, {}", all.join(", "));
    }
    let dir = root().join("crates/skelport-fuzz/corpus").join(name);
    std::fs::create_dir_all(&dir)?;
    let mut stack = vec![root().join("testdata")];
    let mut seeded = 0;
    let mut seed = |bytes: Vec<u8>| -> Result<()> {
        std::fs::write(dir.join(format!("seed-{seeded:04}")), bytes)?;
        seeded += 1;
        Ok(())
    };
    if want == Some("obj") {
        // No OBJ under testdata/: a small quad mesh with groups and negative indices.
        seed(b"# skelport seed\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\ng body\nf 1/1 2/2 3/3 4/4\ng joint-a\nf -4 -3 -2\n".to_vec())?;
    }
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d)?.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let bytes = std::fs::read(&p)?;
            if bytes.len() > 1 << 20 {
                continue;
            }
            let Some(f) = seed_format(&p, &bytes) else { continue };
            match want {
                Some(w) if w == f => seed(bytes)?,
                Some(_) => {}
                None => {
                    if let Some(i) = skelport_cli::fuzzing::selector(f) {
                        let mut s = vec![i];
                        s.extend_from_slice(&bytes);
                        seed(s)?;
                    }
                }
            }
        }
    }
    eprintln!("fuzz: {seeded} seeds in {}", dir.display());
    let status = std::process::Command::new("cargo")
        .env("RUSTC_BOOTSTRAP", "1")
        // Sanitizer builds in a directory of their own, so they never invalidate the main build.
        .env("CARGO_TARGET_DIR", root().join("target/fuzz"))
        .args(["fuzz", "run", "--fuzz-dir", "crates/skelport-fuzz", "-O", name])
        .arg(&dir)
        .args([
            "--",
            &format!("-max_total_time={seconds}"),
            "-rss_limit_mb=2048",
            "-malloc_limit_mb=1024",
            "-timeout=10",
            "-print_final_stats=1",
        ])
        .current_dir(root())
        .status()
        .context("running cargo fuzz (install it with `cargo install cargo-fuzz`)")?;
    if !status.success() {
        bail!("fuzzing found a problem: see crates/skelport-fuzz/artifacts/{name}/; copy the input to crates/skelport-fuzz/regressions/{name}/ and fix it");
    }
    Ok(())
}

/// Regenerate `crates/skelport-sl/src/sl_table.rs` from the corpus's viewer files.
fn gen_sl_table(check: bool) -> Result<()> {
    let corpus = std::env::var_os("SKELPORT_CORPUS").map(PathBuf::from).unwrap_or_else(|| root().join("../shared/corpus"));
    let dir = corpus.join("sl/viewer");
    let sk = std::fs::read_to_string(dir.join("avatar_skeleton.xml"))
        .with_context(|| format!("reading {}/avatar_skeleton.xml", dir.display()))?;
    let lad = std::fs::read_to_string(dir.join("avatar_lad.xml")).with_context(|| format!("reading {}/avatar_lad.xml", dir.display()))?;
    let table = skelport_sl::generate_table(&sk, &lad)?;
    let files = [(root().join("crates/skelport-sl/src/sl_table.rs"), table.into_bytes())];
    let stale = sync(&files, check)?;
    report("SL tables", &stale, check, files.len())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let check = args.iter().any(|a| a == "--check");
    match args.first().map(String::as_str) {
        Some("regen-fixtures") => regen_fixtures(check),
        Some("gen-sl-table") => gen_sl_table(check),
        Some("matrix") => matrix(),
        Some("bench-compare") => bench::compare(&root()),
        Some("floor") => bench::floor(&args[1..]),
        Some("gen-big-dae") => bench::gen_big_dae(&args[1..]),
        Some("fuzz") => {
            let name = args.get(1).map(String::as_str).unwrap_or("read_any");
            let secs = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(60);
            fuzz(name, secs)
        }
        _ => bail!("usage: cargo xtask regen-fixtures [--check] | gen-sl-table [--check] | matrix | bench-compare | floor KIND FILE… | gen-big-dae MB OUT | fuzz TARGET [SECONDS] (targets: see docs/fuzzing.md)"),
    }
}
