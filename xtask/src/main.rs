//! Project automation: `cargo xtask <command>`.
//!
//! * `regen-fixtures [--check]` — regenerate every generated file under `testdata/`
//!   deterministically (including the malformed-input suite `testdata/bad/`, see `bad.rs`); with
//!   `--check`, fail when any is stale or missing (or, in `testdata/bad/`, left over from a dropped
//!   case: removed without `--check`). The suite's expected messages are refreshed by
//!   `SKELPORT_BLESS=1 cargo test -p skelport-cli --test bad_inputs`.
//! * `gen-sl-table [--check]` — regenerate the Second Life skeleton table from the corpus's
//!   avatar_skeleton.xml and avatar_lad.xml.

#![forbid(unsafe_code)]
// Project automation reports on the terminal.
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod bad;
mod bench;
mod blender;
mod untrusted;

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

/// The man pages, from the command line's own clap definition (so they cannot drift from
/// `--help`): `docs/man/skelport.1` and, as git does, one page per subcommand
/// (`docs/man/skelport-convert.1`, …), each listed in the main page's SUBCOMMANDS section.
fn man_pages() -> Result<Vec<(PathBuf, Vec<u8>)>> {
    let mut out = Vec::new();
    man_page(skelport_cli::flags::command(), "skelport", "skelport", &mut out)?;
    Ok(out)
}

/// `cmd`'s page as `title` (`skelport-bone`), and its subcommands' pages (`skelport-bone-add`),
/// each page's synopsis naming the command as typed (`usage`, `skelport bone add`).
fn man_page(cmd: clap::Command, title: &str, usage: &str, out: &mut Vec<(PathBuf, Vec<u8>)>) -> Result<()> {
    // clap names take `&'static str`; xtask runs once, so leaking a few short names is fine.
    let name: &'static str = Box::leak(title.to_owned().into_boxed_str());
    let mut cmd = cmd.name(name).bin_name(usage);
    // Built, so that the subcommands' deferred arguments (`#[command(defer = true)]`) are there.
    cmd.build();
    let mut page = Vec::new();
    clap_mangen::Man::new(cmd.clone()).title(title).date("").source(format!("skelport {}", env!("CARGO_PKG_VERSION"))).render(&mut page)?;
    let page = with_synopsis(&String::from_utf8(page)?, &synopsis(&cmd, usage));
    out.push((root().join("docs/man").join(format!("{title}.1")), page.into_bytes()));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set() && s.get_name() != "help") {
        man_page(sub.clone(), &format!("{title}-{}", sub.get_name()), &format!("{usage} {}", sub.get_name()), out)?;
    }
    Ok(())
}

/// A synopsis line in roff with each option's value placeholder (`--from <FMT>`) and `...` after
/// an argument that takes several (`<IN>...`): clap_mangen's own leaves both out.
fn synopsis(cmd: &clap::Command, usage: &str) -> String {
    let esc = |s: &str| s.replace('-', "\\-");
    let value = |a: &clap::Arg| -> String {
        let names: Vec<String> = a.get_value_names().map(|v| v.iter().map(|n| n.to_string()).collect()).unwrap_or_default();
        let many = matches!(a.get_action(), clap::ArgAction::Append) || a.get_num_args().is_some_and(|n| n.max_values() > 1);
        let dots = if many { "..." } else { "" };
        // A flag (`--strict`, `-v`) takes no value, though the derive gives it a value name.
        if !a.get_action().takes_values() {
            return String::new();
        }
        match names.as_slice() {
            [] => format!(" \\fI<{}>\\fR{dots}", esc(&a.get_id().as_str().to_uppercase())),
            _ => format!(" \\fI<{}>\\fR{dots}", esc(&names.join(" "))),
        }
    };
    let mut line = format!("\\fB{}\\fR", esc(usage));
    // Not the `--help` and `--version` clap adds when it builds the command.
    let added = |a: &clap::Arg| matches!(a.get_id().as_str(), "help" | "version");
    for a in cmd.get_arguments().filter(|a| !a.is_hide_set() && !a.is_positional() && !added(a)) {
        let flag = match (a.get_short(), a.get_long()) {
            (Some(s), Some(l)) => format!("\\fB\\-{s}\\fR|\\fB\\-\\-{}\\fR", esc(l)),
            (Some(s), None) => format!("\\fB\\-{s}\\fR"),
            (None, Some(l)) => format!("\\fB\\-\\-{}\\fR", esc(l)),
            (None, None) => continue,
        };
        let (l, r) = if a.is_required_set() { ("", "") } else { ("[", "]") };
        line.push_str(&format!(" {l}{flag}{}{r}", value(a)));
    }
    for a in cmd.get_positionals().filter(|a| !a.is_hide_set()) {
        let name = a.get_value_names().map(|v| v.join(" ")).unwrap_or_else(|| a.get_id().as_str().to_uppercase());
        let many = a.get_num_args().is_some_and(|n| n.max_values() > 1) || matches!(a.get_action(), clap::ArgAction::Append);
        let (l, r) = if a.is_required_set() { ("", "") } else { ("[", "]") };
        line.push_str(&format!(" {l}\\fI<{}>\\fR{}{r}", esc(&name), if many { "..." } else { "" }));
    }
    if cmd.has_subcommands() {
        line.push_str(" \\fI<SUBCOMMAND>\\fR");
    }
    line
}

/// `page` with the line after `.SH SYNOPSIS` replaced by `line`.
fn with_synopsis(page: &str, line: &str) -> String {
    let mut out = String::with_capacity(page.len());
    let mut next_is_synopsis = false;
    for l in page.lines() {
        if next_is_synopsis {
            out.push_str(line);
            next_is_synopsis = false;
        } else {
            out.push_str(l);
            next_is_synopsis = l == ".SH SYNOPSIS";
        }
        out.push('\n');
    }
    out
}

fn regen_fixtures(check: bool) -> Result<()> {
    let testdata = root().join("testdata");
    let mut files: Vec<(PathBuf, Vec<u8>)> = skelport::demo::fixtures().into_iter().map(|(rel, b)| (testdata.join(rel), b)).collect();
    files.extend(skelport_render::sample::golden_fixtures().into_iter().map(|(rel, b)| (testdata.join(rel), b)));
    let anvil = testdata.join("anvil");
    files.extend(skelport_anvil::derived_fixtures(&anvil).into_iter().map(|(rel, b)| (anvil.join(rel), b)));
    files.extend(bad::fixtures().into_iter().map(|(rel, b)| (testdata.join(rel), b)));
    files.extend(external_buffer_seeds()?.into_iter().map(|(rel, b)| (testdata.join(rel), b)));
    files.extend(man_pages()?);
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

/// The folder fuzz targets' G4MF seeds (docs/fuzzing.md): the demo as G4MF with its buffer
/// in `sample.bin` beside it (the bytes `Format::fuzz_side_file` gives), as text and binary.
fn external_buffer_seeds() -> Result<Vec<(String, Vec<u8>)>> {
    use skelport_g4mf::container;
    let f: &dyn skelport::ir::Format = &skelport_g4mf::G4bFormat;
    let out = f
        .write(&skelport::demo::sample(), &skelport::ir::WriteOptions::default(), &mut skelport::ir::Diagnostics::default())
        .map_err(|e| anyhow::anyhow!("{e}"))?;
    let chunks = container::read(&out.main, "demo").map_err(|e| anyhow::anyhow!("{e}"))?;
    let json = chunks.iter().find(|c| c.kind == container::JSON).context("the demo .g4b has a JSON chunk")?;
    let mut doc: serde_json::Value = serde_json::from_slice(&json.data)?;
    let buffer = doc["buffers"][0].as_object_mut().context("the demo has a buffer")?;
    buffer.remove("chunk");
    buffer.insert("uri".into(), "sample.bin".into());
    let mut text = serde_json::to_vec_pretty(&doc)?;
    text.push(b'\n');
    let binary =
        container::write(&[container::Chunk { kind: container::JSON, encoding: container::PLAIN, data: serde_json::to_vec(&doc)? }])?;
    Ok(vec![("untrusted/g4mf/external-buffer.g4tf".into(), text), ("untrusted/g4mf/external-buffer.g4b".into(), binary)])
}

fn matrix() -> Result<()> {
    let corpus = skelport_ir::testing::corpus_root();
    let sources = skelport::matrix::sources(corpus.as_deref());
    let cells = skelport::matrix::run(&sources);
    let rows = skelport::matrix::pose_rows(&sources);
    let md = skelport::matrix::markdown(&cells) + &skelport::matrix::pose_markdown(&rows);
    std::fs::write(root().join("docs/conversion-matrix.md"), md)?;
    let refused = cells.iter().filter(|c| skelport::matrix::refusal(c).is_some()).count();
    let failed = cells.iter().filter(|c| !c.ok).count() - refused;
    let over = rows.iter().filter(|r| r.test.as_ref().is_none_or(|t| t.max_deviation > skelport::matrix::POSE_TOLERANCE)).count();
    eprintln!(
        "matrix: {} cells, {refused} refused as they should be, {failed} failed; pose test: {} rows, {over} over the bar; wrote docs/conversion-matrix.md",
        cells.len(),
        rows.len()
    );
    Ok(())
}

/// The reader a seed file under testdata/ belongs to, by the registry's detection: only files
/// with an extension some reader claims (not the render goldens' .png/.svg), and not the
/// malformed suite: seeds should be valid so the fuzzer starts deep in the reader.
fn seed_format(p: &Path, bytes: &[u8]) -> Option<&'static dyn skelport::Format> {
    let ext = skelport::registry::extension_of(p)?;
    if p.components().any(|c| c.as_os_str() == "bad")
        || !skelport::formats().iter().any(|f| f.can_read() && f.extensions().contains(&ext.as_str()))
    {
        return None;
    }
    skelport::registry::detect_reader(Some(p), &bytes[..bytes.len().min(8192)])
}

/// Seeds for a mesh or weights input: what the format's reader is given back beside the demo
/// sample it writes (MPFB's weights file), or for a mesh with none, a small quad mesh (OBJ,
/// groups and negative indices).
fn companion_seeds(format: &dyn skelport::Format, role: skelport::ir::InputRole) -> Vec<Vec<u8>> {
    use skelport::ir::InputRole;
    let opts = skelport::WriteOptions { file_stem: "sample".into(), ..Default::default() };
    let back = format
        .write(&skelport::demo::sample(), &opts, &mut skelport::Diagnostics::default())
        .map(|o| format.read_back(&o))
        .unwrap_or_default();
    let given = match role {
        InputRole::Mesh => back.mesh_data,
        InputRole::Weights => back.weights_data,
        InputRole::Main => None,
    };
    match (given, role) {
        (Some(f), _) => vec![f.bytes.to_vec()],
        (None, InputRole::Mesh) => {
            vec![b"# skelport seed\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\ng body\nf 1/1 2/2 3/3 4/4\ng joint-a\nf -4 -3 -2\n".to_vec()]
        }
        (None, _) => vec![],
    }
}

/// Seed a fuzz corpus and run the target for `seconds`. A format's main-file target is seeded
/// from every valid file under testdata/ its reader recognises, its bad-input suite and, when its
/// format writes, the two-mesh demo as it writes it; a mesh or weights target by
/// [`companion_seeds`]; `read_any`/`roundtrip` from every recognised file, prefixed with the byte
/// that selects its format (see skelport::fuzzing). The per-input targets are one fuzz binary,
/// `input`, told which by `SKELPORT_FUZZ_TARGET`, with a corpus and artifacts of their own.
fn fuzz(name: &str, seconds: u64) -> Result<()> {
    use skelport::fuzzing::{READ_ANY, ROUNDTRIP};
    let target = skelport::fuzzing::targets().find(|(t, _, _)| *t == name);
    let folder = skelport::fuzzing::folder_target(name);
    if target.is_none() && folder.is_none() && name != READ_ANY && name != ROUNDTRIP {
        let mut all: Vec<&str> = skelport::fuzzing::targets().map(|(t, _, _)| t).collect();
        all.extend(skelport::fuzzing::folder_targets().iter().map(|t| t.name.as_str()));
        bail!("unknown fuzz target {name}; targets: {READ_ANY}, {ROUNDTRIP}, {}", all.join(", "));
    }
    let dir = root().join("crates/skelport-fuzz/corpus").join(name);
    std::fs::create_dir_all(&dir)?;
    let mut seeded = 0;
    let mut seed = |bytes: Vec<u8>| -> Result<()> {
        std::fs::write(dir.join(format!("seed-{seeded:04}")), bytes)?;
        seeded += 1;
        Ok(())
    };
    match target {
        Some((_, format, kind)) if kind.role != skelport::ir::InputRole::Main => {
            for s in companion_seeds(format, kind.role) {
                seed(s)?;
            }
        }
        _ => {
            let mut stack = vec![root().join("testdata")];
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
                    match target.map(|t| t.1).or(folder.map(|t| t.format)) {
                        Some(want) if want.name() == f.name() => seed(bytes)?,
                        Some(_) => {}
                        None => {
                            if let Some(i) = skelport::fuzzing::selector(f.name()) {
                                let mut s = vec![i];
                                s.extend_from_slice(&bytes);
                                seed(s)?;
                            }
                        }
                    }
                }
            }
        }
    }
    // A main-file target also starts from its format's bad-input suite (files one flaw away
    // from valid, deep in the reader), and FBX, which testdata/ holds no valid file of, from
    // skelport's built-in FBX scene, binary and ASCII.
    if let Some((_, format, kind)) = target.filter(|t| t.2.role == skelport::ir::InputRole::Main) {
        let bad = root().join("testdata/bad").join(kind.suite);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&bad).into_iter().flatten().flatten().map(|e| e.path()).collect();
        files.sort();
        for p in files.into_iter().filter(|p| p.is_file() && !p.to_string_lossy().ends_with(".expected")) {
            seed(std::fs::read(&p)?)?;
        }
        // The writers' checks (skelport::fuzzing::write_checks) compare something only on a
        // document of two meshes, which nothing under testdata/ is. Buffers embedded: the byte
        // targets read without a folder, so a side file would never be found.
        if format.can_write() {
            let two = skelport::fuzzing::two_mesh_demo();
            let opts = skelport::ir::WriteOptions { embed: true, ..Default::default() };
            if let Ok(out) = format.write(&two, &opts, &mut Default::default()) {
                seed(out.main)?;
            }
        }
        if format.name() == "fbx" {
            let scene = skelport_fbx::sample::scene();
            seed(skelport_fbx::sample::binary(&scene))?;
            seed(skelport_fbx::sample::ascii(&scene).into_bytes())?;
            seed(skelport_fbx::sample::binary(&skelport_fbx::sample::with_second_mesh(&scene)))?;
        }
    }
    eprintln!("fuzz: {seeded} seeds in {}", dir.display());
    // libFuzzer refuses an -artifact_prefix folder that does not exist.
    std::fs::create_dir_all(root().join("crates/skelport-fuzz/artifacts").join(name))?;
    let bin = if target.is_some() || folder.is_some() { skelport::fuzzing::INPUT_BIN } else { name };
    let status = std::process::Command::new("cargo")
        .env("RUSTC_BOOTSTRAP", "1")
        .env(skelport::fuzzing::TARGET_VAR, name)
        // Sanitizer builds in a directory of their own, so they never invalidate the main build.
        .env("CARGO_TARGET_DIR", root().join("target/fuzz"))
        .args(["fuzz", "run", "--fuzz-dir", "crates/skelport-fuzz", "-O", bin])
        .arg(&dir)
        .args([
            "--",
            &format!("-artifact_prefix={}/", root().join("crates/skelport-fuzz/artifacts").join(name).display()),
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
        Some("blender-extension") => blender::extension(&root()),
        Some("bench-compare") => bench::compare(&root(), &args[1..]),
        Some("floor") => bench::floor(&args[1..]),
        Some("gen-big-dae") => bench::gen_big_dae(&args[1..]),
        Some("gen-big-anvil") => bench::gen_big_anvil(&args[1..]),
        Some("gen-untrusted") => untrusted::gen(&args[1..]),
        Some("fuzz") => {
            let name = args.get(1).map(String::as_str).unwrap_or(skelport::fuzzing::READ_ANY);
            let secs = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(60);
            fuzz(name, secs)
        }
        _ => bail!("usage: cargo xtask regen-fixtures [--check] | gen-sl-table [--check] | matrix | blender-extension | bench-compare [--callgrind] | floor KIND FILE… | gen-big-dae MB OUT | gen-big-anvil OUT | gen-untrusted DIR | fuzz TARGET [SECONDS] (targets: see docs/fuzzing.md)"),
    }
}
