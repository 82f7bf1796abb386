//! Every example in README.md and docs/cli.md runs (issue 24): each line of their ```sh blocks,
//! in a folder that holds the corpus files under the names the examples use, must exit 0, or
//! the code its `# exits N` comment gives, and print as its last line of output what its
//! `# prints: TEXT` comment shows. The README's set-up lines are checked too: its demo
//! line runs (the binary this test was built with stands in for `cargo run`), its test line is
//! the one `.ci/run` calls, and its Python line is the package `.ci/python` builds and tests.

use std::path::{Path, PathBuf};
use std::process::Command;

/// One example: the command, the exit code it must give, and the line it must print last on
/// stdout when the docs show it (`# prints: TEXT`).
struct Example {
    cmd: String,
    code: i32,
    prints: Option<String>,
}

/// The lines of every ```sh block of `doc`: comments and blank lines dropped, a trailing
/// `# exits N` kept as the expected exit code, a trailing `# prints: TEXT` as the output shown.
fn examples(doc: &Path) -> Vec<Example> {
    let text = std::fs::read_to_string(doc).unwrap();
    let mut out = Vec::new();
    let mut in_sh = false;
    for line in text.lines() {
        let t = line.trim();
        if t.starts_with("```") {
            in_sh = !in_sh && t == "```sh";
            continue;
        }
        if !in_sh || t.is_empty() || t.starts_with('#') {
            continue;
        }
        let (t, prints) = match t.split_once("  # prints: ") {
            Some((c, shown)) => (c.trim_end(), Some(shown.to_owned())),
            None => (t, None),
        };
        let (cmd, code) = match t.split_once("  # exits ") {
            Some((c, rest)) => (c.trim(), rest.split(':').next().unwrap().trim().parse().expect("# exits N")),
            None => (t, 0),
        };
        out.push(Example { cmd: cmd.to_owned(), code, prints });
    }
    out
}

/// A folder with the files the examples name: MPFB's data layout (`rigs/standard` beside
/// `3dobjs`) and copies under the short names, the glTF Fox, a Second Life avatar mesh, and the
/// AnvilToolkit fixtures.
fn sandbox() -> Option<tempfile::TempDir> {
    let c = skelport_ir::testing::corpus_root()?;
    let root = skelport_ir::testing::workspace_root();
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    std::fs::create_dir_all(d.join("rigs/standard")).unwrap();
    std::fs::create_dir_all(d.join("3dobjs")).unwrap();
    let std_dir = c.join("mpfb/rigs/standard");
    for e in std::fs::read_dir(&std_dir).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, d.join("rigs/standard").join(p.file_name().unwrap())).unwrap();
    }
    let copies: [(PathBuf, &str); 9] = [
        (c.join("mpfb/3dobjs/base.obj"), "3dobjs/base.obj"),
        (c.join("mpfb/3dobjs/base.obj"), "base.obj"),
        (std_dir.join("rig.game_engine.json"), "rig.game_engine.json"),
        (std_dir.join("weights.game_engine.json"), "weights.game_engine.json"),
        (std_dir.join("rig.default.json"), "rig.default.json"),
        (c.join("gltf/Fox/Fox.glb"), "Fox.glb"),
        (c.join("sl/linden-lab/female_2016_08_05.dae"), "avatar.dae"),
        (root.join("testdata/anvil/biped.schema.xml"), "biped.schema.xml"),
        (root.join("testdata/anvil/sword_addon.schema.xml"), "sword_addon.schema.xml"),
    ];
    for (from, to) in copies {
        std::fs::copy(&from, d.join(to)).unwrap_or_else(|e| panic!("{}: {e}", from.display()));
    }
    Some(dir)
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn every_readme_and_cli_md_example_runs() {
    let Some(dir) = sandbox() else { return };
    let root = skelport_ir::testing::workspace_root();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_skelport"));
    let path = format!("{}:{}", bin.parent().unwrap().display(), std::env::var("PATH").unwrap_or_default());
    let (mut ran, mut compared) = (0, 0);
    for doc in ["README.md", "docs/cli.md"] {
        for Example { cmd, code, prints } in examples(&root.join(doc)) {
            let cmd = match cmd.strip_prefix("cargo run --release --bin skelport -- ") {
                Some(rest) => format!("skelport {rest}"),
                None => cmd,
            };
            if cmd == "cargo test --workspace" {
                let ci = std::fs::read_to_string(root.join(".ci/run")).unwrap();
                assert!(ci.lines().any(|l| l.trim() == cmd), ".ci/run does not call the README's test command `{cmd}`");
                continue;
            }
            if let Some(pkg) = cmd.strip_prefix("pip install ./") {
                let py = std::fs::read_to_string(root.join(".ci/python")).unwrap();
                assert!(root.join(pkg).join("pyproject.toml").exists() && py.contains(pkg), "{doc}: `{cmd}`");
                continue;
            }
            // The Blender add-on: built as CI builds it (.ci/python, which tests the zip installed as
            // Blender installs an extension), installed from the file that command writes.
            if cmd == "cargo xtask blender-extension" {
                let py = std::fs::read_to_string(root.join(".ci/python")).unwrap();
                assert!(py.lines().any(|l| l.trim() == cmd), "{doc}: .ci/python does not run `{cmd}`");
                continue;
            }
            if let Some(rest) = cmd.strip_prefix("blender --command extension install-file ") {
                let zip = format!("dist/skelport-{}.zip", env!("CARGO_PKG_VERSION"));
                assert!(rest.ends_with(&zip), "{doc}: `{cmd}` does not install {zip}, the zip `cargo xtask blender-extension` writes");
                continue;
            }
            assert!(cmd.starts_with("skelport "), "{doc}: an example this test does not know how to run: `{cmd}`");
            let o = Command::new("sh").arg("-c").arg(&cmd).current_dir(dir.path()).env("PATH", &path).output().unwrap();
            assert_eq!(
                o.status.code(),
                Some(code),
                "{doc}: `{cmd}`\nstdout: {}\nstderr: {}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            if let Some(shown) = prints {
                let stdout = String::from_utf8_lossy(&o.stdout);
                assert_eq!(stdout.lines().last().unwrap_or(""), shown, "{doc}: `{cmd}` prints otherwise than the docs show");
                compared += 1;
            }
            ran += 1;
        }
    }
    // The outputs the docs show were compared.
    assert!(compared >= 7, "{compared} shown outputs compared");
    // Both documents' examples were found and run (a renamed fence must not make this vacuous).
    assert!(ran >= 30, "{ran} examples ran");
    // What the examples say they make is there.
    for made in ["human.glb", "human.dae", "human.vrm", "report.json", "out/default.gltf", "merged.schema.xml", "demo/sample.glb"] {
        assert!(dir.path().join(made).exists(), "{made} was not written");
    }
}
