//! `cargo xtask bench-compare`: whole-process timings of skelport beside the tools users would
//! pick instead (assimp, Blender) and beside a tokenizer floor, on the same inputs, with
//! hyperfine (medians) and GNU time (peak memory). Writes target/bench-compare.md.

use anyhow::{Context, Result};
use std::path::{Path, PathBuf};
use std::process::Command;

/// Floors: the cost of only tokenizing the input, whole process.
pub fn floor(kind: &str, file: &Path) -> Result<()> {
    let bytes = std::fs::read(file)?;
    match kind {
        "json" => {
            let v: serde_json::Value = serde_json::from_slice(&bytes)?;
            std::hint::black_box(v);
        }
        "xml" => {
            let mut r = quick_xml::Reader::from_reader(bytes.as_slice());
            let mut buf = Vec::new();
            let mut n = 0u64;
            loop {
                match r.read_event_into(&mut buf)? {
                    quick_xml::events::Event::Eof => break,
                    _ => n += 1,
                }
                buf.clear();
            }
            std::hint::black_box(n);
        }
        _ => anyhow::bail!("floor kind must be json or xml"),
    }
    Ok(())
}

struct Case {
    label: &'static str,
    commands: Vec<(String, String)>,
}

fn median_ms(cmd: &str, dir: &Path) -> Option<f64> {
    let json = dir.join("h.json");
    let ok = Command::new("hyperfine")
        .args(["--warmup", "2", "--min-runs", "10", "--style", "none", "--export-json"])
        .arg(&json)
        .arg(cmd)
        .output()
        .ok()?
        .status
        .success();
    if !ok {
        return None;
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).ok()?).ok()?;
    v["results"][0]["median"].as_f64().map(|s| s * 1000.0)
}

fn peak_mib(cmd: &str) -> Option<f64> {
    let out = Command::new("/usr/bin/time").args(["-f", "%M", "sh", "-c", cmd]).output().ok()?;
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines().last()?.trim().parse::<f64>().ok().map(|kb| kb / 1024.0)
}

/// Run every case and write the table.
pub fn compare(root: &Path) -> Result<()> {
    let st = Command::new("cargo").args(["build", "--release", "-p", "skelport-cli", "-p", "xtask"]).current_dir(root).status()?;
    anyhow::ensure!(st.success(), "release build failed");
    let bin = root.join("target/release/skelport");
    let xt = root.join("target/release/xtask");
    let corpus = skelport_ir::testing::corpus_root().context("bench-compare needs the corpus")?;
    let tmp = tempfile::tempdir()?;
    let t = tmp.path();
    let sk = bin.display();
    let mpfb = corpus.join("mpfb");
    let rigs = mpfb.join("rigs/standard");
    let female = corpus.join("sl/linden-lab/female_2016_08_05.dae");
    let fox = corpus.join("gltf/Fox/Fox.glb");
    let has =
        |tool: &str| Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().map(|o| o.status.success()).unwrap_or(false);
    let mut cases = vec![
        Case {
            label: "(a) MPFB game_engine rig + weights + base.obj → .glb",
            commands: vec![
                (
                    "skelport".into(),
                    format!(
                        "{sk} convert {} --weights {} --mesh {} -o {}/a.glb",
                        rigs.join("rig.game_engine.json").display(),
                        rigs.join("weights.game_engine.json").display(),
                        mpfb.join("3dobjs/base.obj").display(),
                        t.display()
                    ),
                ),
                (
                    "floor: serde_json Value of the rig + weights".into(),
                    format!("{} floor json {}", xt.display(), rigs.join("weights.game_engine.json").display()),
                ),
            ],
        },
        Case {
            label: "(b) Linden female_2016_08_05.dae → .glb",
            commands: vec![
                ("skelport".into(), format!("{sk} convert {} -o {}/b.glb", female.display(), t.display())),
                ("floor: quick-xml events".into(), format!("{} floor xml {}", xt.display(), female.display())),
            ],
        },
        Case {
            label: "(c) Fox.glb → .dae and → .g4b",
            commands: vec![
                ("skelport → dae".into(), format!("{sk} convert {} -o {}/c.dae", fox.display(), t.display())),
                ("skelport → g4b".into(), format!("{sk} convert {} -o {}/c.g4b", fox.display(), t.display())),
            ],
        },
    ];
    if has("assimp") {
        cases[1].commands.push(("assimp export".into(), format!("assimp export {} {}/b-assimp.glb", female.display(), t.display())));
    }
    if has("blender") {
        let py = t.join("b.py");
        std::fs::write(
            &py,
            format!(
                "import numpy\nnumpy.bool = bool\nimport bpy\nbpy.ops.wm.read_factory_settings(use_empty=True)\nbpy.ops.wm.collada_import(filepath={:?})\nbpy.ops.export_scene.gltf(filepath={:?})\n",
                female.display().to_string(),
                t.join("b-blender.glb").display().to_string()
            ),
        )?;
        cases[1].commands.push((
            "Blender 3.4 headless".into(),
            format!("blender -b --factory-startup -noaudio --python {} >/dev/null 2>&1", py.display()),
        ));
    }
    // (e) batch of 1,000 small generated files: 2 cores vs 1.
    let batch = t.join("batch");
    std::fs::create_dir_all(&batch)?;
    let demo = skelport_cli::demo::sample();
    let bytes = skelport_ir::irjson::to_vec(&demo);
    for i in 0..1000 {
        std::fs::write(batch.join(format!("f{i:04}.ir.json")), &bytes)?;
    }
    let files = format!("{}/*.ir.json", batch.display());
    cases.push(Case {
        label: "(e) batch of 1,000 demo files → .glb",
        commands: vec![
            ("2 threads".into(), format!("RAYON_NUM_THREADS=2 {sk} convert {files} --to glb -o {}/out2/ 2>/dev/null", t.display())),
            ("1 thread".into(), format!("RAYON_NUM_THREADS=1 {sk} convert {files} --to glb -o {}/out1/ 2>/dev/null", t.display())),
        ],
    });

    let mut md = String::from("| case | command | median (ms) | peak RSS (MiB) |\n|---|---|---|---|\n");
    for c in &cases {
        for (name, cmd) in &c.commands {
            let ms = median_ms(cmd, t);
            let mem = peak_mib(cmd);
            let f = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "failed".into());
            md.push_str(&format!("| {} | {} | {} | {} |\n", c.label, name, f(ms), f(mem)));
            eprintln!("{} / {name}: {} ms, {} MiB", c.label, f(ms), f(mem));
        }
    }
    let out: PathBuf = root.join("target/bench-compare.md");
    std::fs::write(&out, &md)?;
    println!("{md}");
    eprintln!("wrote {}", out.display());
    Ok(())
}
