//! `cargo xtask bench-compare`: whole-process timings of skelport beside the tools users would
//! pick instead (assimp, Blender) and beside a tokenizer floor, on the same inputs, with
//! hyperfine (medians) and GNU time (peak memory). Writes target/bench-compare.md: the table of
//! medians, ratios and peak RSS, then every target of issue 11 with its measured figure.
//!
//! Big inputs (the 65,535-bone AnvilToolkit skeleton, the 25 MB and 50 MB Collada files, the
//! 1,000-file batch) are generated into a temporary directory at run time, never committed.

use anyhow::{Context, Result};
use skelport_ir::{Bone, BoneId, DVec3, Document, Frame, Skeleton, Transform, WriteOptions};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Floors: the cost of only tokenizing the inputs, whole process. `args` are `KIND FILE` pairs;
/// kinds: `json` (serde_json to Value), `xml` (quick-xml events; UTF-16 is decoded first),
/// `glb` (serde_json to Value of the JSON chunk), `words` (whitespace tokens, for OBJ).
pub fn floor(args: &[String]) -> Result<()> {
    anyhow::ensure!(!args.is_empty() && args.len().is_multiple_of(2), "usage: xtask floor KIND FILE [KIND FILE]…");
    for pair in args.chunks(2) {
        let (kind, file) = (pair[0].as_str(), Path::new(&pair[1]));
        let bytes = std::fs::read(file).with_context(|| format!("{}: cannot read", file.display()))?;
        match kind {
            "json" => {
                let v: serde_json::Value = serde_json::from_slice(&bytes)?;
                std::hint::black_box(v);
            }
            "glb" => {
                anyhow::ensure!(bytes.len() >= 20, "{}: not a GLB", file.display());
                let len = u32::from_le_bytes([bytes[12], bytes[13], bytes[14], bytes[15]]) as usize;
                let json = bytes.get(20..20 + len).context("GLB JSON chunk is truncated")?;
                let v: serde_json::Value = serde_json::from_slice(json)?;
                std::hint::black_box((v, bytes.len()));
            }
            "words" => {
                let n = bytes.split(u8::is_ascii_whitespace).filter(|w| !w.is_empty()).count();
                std::hint::black_box(n);
            }
            "xml" => {
                let text: std::borrow::Cow<'_, [u8]> = match bytes.get(..2) {
                    Some([0xFF, 0xFE]) => encoding_rs::UTF_16LE.decode(&bytes).0.into_owned().into_bytes().into(),
                    Some([0xFE, 0xFF]) => encoding_rs::UTF_16BE.decode(&bytes).0.into_owned().into_bytes().into(),
                    _ => bytes.as_slice().into(),
                };
                let mut r = quick_xml::Reader::from_reader(&*text);
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
            _ => anyhow::bail!("floor kind must be json, glb, words or xml"),
        }
    }
    Ok(())
}

/// One timed command. `key` names it for the targets below.
struct Row {
    case: &'static str,
    key: &'static str,
    name: String,
    cmd: String,
    /// Input bytes, for the peak-memory target.
    input: Option<u64>,
}

#[derive(Clone, Copy, Default)]
struct Figures {
    ms: Option<f64>,
    mib: Option<f64>,
}

fn median_ms(cmd: &str, dir: &Path, runs: u32) -> Option<f64> {
    let json = dir.join("h.json");
    let ok = Command::new("hyperfine")
        .args(["-N", "--warmup", "2", "--min-runs", &runs.to_string(), "--style", "none", "--export-json"])
        .arg(&json)
        .arg(cmd)
        .output()
        .ok()?
        .status
        .success();
    if !ok {
        // Commands with redirections or environment variables need a shell.
        let ok = Command::new("hyperfine")
            .args(["--warmup", "2", "--min-runs", &runs.to_string(), "--style", "none", "--export-json"])
            .arg(&json)
            .arg(cmd)
            .output()
            .ok()?
            .status
            .success();
        if !ok {
            return None;
        }
    }
    let v: serde_json::Value = serde_json::from_slice(&std::fs::read(&json).ok()?).ok()?;
    v["results"][0]["median"].as_f64().map(|s| s * 1000.0)
}

/// Median over `rounds` of (wall time of `a`) / (wall time of `b`), the two run back to back in
/// each round after one warm-up pair, `a` first in even rounds and `b` first in odd ones (so
/// neither always runs on the caches the other left). On a machine whose speed drifts (seen:
/// 40 % within minutes), a ratio of two medians taken minutes apart moves with the drift; the
/// median of paired ratios does not. Commands are run without a shell, as hyperfine `-N` runs
/// them, unless they need one (a glob, a redirection, an environment variable), as the table's
/// rows do.
fn paired_ratio(a: &str, b: &str, rounds: usize) -> Option<f64> {
    let run = |cmd: &str| -> Option<f64> {
        let mut c = if cmd.contains(['*', '>', '=']) {
            let mut c = Command::new("sh");
            c.args(["-c", cmd]);
            c
        } else {
            let mut words = cmd.split_whitespace();
            let mut c = Command::new(words.next()?);
            c.args(words);
            c
        };
        c.stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
        let t = std::time::Instant::now();
        let ok = c.status().ok()?.success();
        ok.then(|| t.elapsed().as_secs_f64())
    };
    run(a)?;
    run(b)?;
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|k| {
            if k % 2 == 0 {
                let ta = run(a)?;
                Some(ta / run(b)?)
            } else {
                let tb = run(b)?;
                Some(run(a)? / tb)
            }
        })
        .collect::<Option<_>>()?;
    ratios.sort_by(f64::total_cmp);
    ratios.get(ratios.len() / 2).copied()
}

fn peak_mib(cmd: &str) -> Option<f64> {
    let out = Command::new("/usr/bin/time").args(["-f", "%M", "sh", "-c", cmd]).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines().last()?.trim().parse::<f64>().ok().map(|kb| kb / 1024.0)
}

fn has(tool: &str) -> bool {
    Command::new("sh").args(["-c", &format!("command -v {tool}")]).output().map(|o| o.status.success()).unwrap_or(false)
}

/// Khronos validator errors in a glTF file, when node and the validator are installed.
fn validator_errors(root: &Path, file: &Path) -> Option<u64> {
    let out = Command::new("node").arg(root.join(".ci/tools/gltf-validate.mjs")).arg(file).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains(" errors, "))?;
    line.rsplit_once(": ")?.1.split(' ').next()?.parse().ok()
}

/// Write `<dir>/<key>.py`, a headless Blender script (a factory-empty scene, `import`: one bpy
/// import call of `input`, then a glTF export to `<dir>/<key>-blender.glb`), and return the command
/// that runs it quietly. Debian's numpy needs `numpy.bool` back for Blender 3.4's glTF add-on.
fn blender_case(dir: &Path, key: &str, import: &str, input: &Path) -> Result<String> {
    let py = dir.join(format!("{key}.py"));
    let out = dir.join(format!("{key}-blender.glb"));
    std::fs::write(
        &py,
        format!(
            "import numpy\nnumpy.bool = bool\nimport bpy\nbpy.ops.wm.read_factory_settings(use_empty=True)\n{import}(filepath={:?})\nbpy.ops.export_scene.gltf(filepath={:?})\n",
            input.display().to_string(),
            out.display().to_string()
        ),
    )?;
    Ok(format!("blender -b --factory-startup -noaudio --python {} >/dev/null 2>&1", py.display()))
}

/// A 65,535-bone binary-tree skeleton (the Unity-era AnvilToolkit limit).
fn big_skeleton() -> Document {
    let mut sk = Skeleton::new("big");
    for i in 0..65_535usize {
        let parent = if i == 0 { None } else { Some(BoneId::from_index((i - 1) / 2)) };
        sk.push(Bone::new(format!("bone_{i}"), parent, Transform::from_rt(Default::default(), DVec3::new(0.0, 0.0, 0.01))));
    }
    let mut d = Document::new(Frame::GLTF);
    d.skeletons.push(sk);
    d
}

/// The Linden female body with its meshes and skins repeated until the written Collada is at
/// least `bytes` long: a big real-shaped input for the throughput and scaling targets.
fn big_collada(female: &Path, bytes: usize) -> Result<Vec<u8>> {
    let loaded = skelport::open(female, &Default::default())?;
    let dae: &dyn skelport::ir::Format = &skelport_sl::DaeFormat;
    let one = skelport::render(&loaded.doc, dae, &WriteOptions::default())?.0.main.len();
    let doc = skelport_ir::testing::repeated(&loaded.doc, bytes.div_ceil(one.max(1)));
    Ok(skelport::render(&doc, dae, &WriteOptions::default())?.0.main)
}

/// `xtask gen-big-anvil OUT`: write the generated 65,535-bone AnvilToolkit Standard skeleton of
/// case (d) alone, to profile it or to check that its round trip is byte-identical.
pub fn gen_big_anvil(args: &[String]) -> Result<()> {
    let [out] = args else { anyhow::bail!("usage: xtask gen-big-anvil OUT") };
    std::fs::write(out, skelport::render(&big_skeleton(), &skelport_anvil::AnvilFormat, &WriteOptions::default())?.0.main)?;
    Ok(())
}

/// `xtask gen-big-dae MB OUT`: write the generated Collada input of case (f) alone, to profile it.
pub fn gen_big_dae(args: &[String]) -> Result<()> {
    let [mb, out] = args else { anyhow::bail!("usage: xtask gen-big-dae MB OUT") };
    let mb: usize = mb.parse().context("MB must be a whole number")?;
    let corpus = skelport_ir::testing::corpus_root().context("gen-big-dae needs the corpus")?;
    let female = corpus.join("sl/linden-lab/female_2016_08_05.dae");
    std::fs::write(out, big_collada(&female, mb * 1_000_000)?)?;
    Ok(())
}

/// Instructions a command executes (valgrind's callgrind `Collected`, which does not move with
/// the machine's load), or `None` when valgrind is missing or the command fails. The profile is
/// kept in `out` for `callgrind_annotate`.
fn callgrind_count(cmd: &str, out: &Path) -> Option<u64> {
    let o = Command::new("valgrind")
        .arg("--tool=callgrind")
        .arg(format!("--callgrind-out-file={}", out.display()))
        .args(cmd.split_whitespace())
        .output()
        .ok()?;
    if !o.status.success() {
        return None;
    }
    let err = String::from_utf8_lossy(&o.stderr);
    err.lines().find_map(|l| l.split_once("Collected :").and_then(|(_, n)| n.trim().parse().ok()))
}

/// `cargo xtask bench-compare --callgrind`: the instructions of each small case (a, b with
/// assimp beside it, c), counted by callgrind. Profiles go to `target/callgrind/<key>.out`.
fn callgrind_cases(target: &Path, corpus: &Path) -> Result<()> {
    anyhow::ensure!(has("valgrind"), "--callgrind needs valgrind (apt-get install -y valgrind)");
    let bin = target.join("release/skelport");
    let sk = bin.display();
    let dir = target.join("callgrind");
    std::fs::create_dir_all(&dir)?;
    let td = dir.display();
    let mpfb = corpus.join("mpfb");
    let rigs = mpfb.join("rigs/standard");
    let female = corpus.join("sl/linden-lab/female_2016_08_05.dae");
    let fox = corpus.join("gltf/Fox/Fox.glb");
    let mut cases = vec![
        (
            "a",
            "(a) MPFB game_engine rig + weights + base.obj → .glb",
            format!(
                "{sk} convert {} --weights {} --mesh {} -o {td}/a.glb",
                rigs.join("rig.game_engine.json").display(),
                rigs.join("weights.game_engine.json").display(),
                mpfb.join("3dobjs/base.obj").display()
            ),
        ),
        ("b", "(b) Linden female_2016_08_05.dae → .glb", format!("{sk} convert {} -o {td}/b.glb", female.display())),
    ];
    if has("assimp") {
        cases.push(("b.assimp", "(b) assimp export", format!("assimp export {} {td}/b-assimp.glb", female.display())));
    }
    cases.push(("c.dae", "(c) Fox.glb → .dae", format!("{sk} convert {} -o {td}/c.dae", fox.display())));
    cases.push(("c.g4b", "(c) Fox.glb → .g4b", format!("{sk} convert {} -o {td}/c.g4b", fox.display())));
    let mut md = String::from("| case | instructions (callgrind) |\n|---|---|\n");
    let mut got = HashMap::new();
    for (key, name, cmd) in &cases {
        let n = callgrind_count(cmd, &dir.join(format!("{key}.out")));
        let fig = n.map(|n| format!("{:.2} M", n as f64 / 1e6)).unwrap_or_else(|| "failed".into());
        eprintln!("{name}: {fig}");
        md.push_str(&format!("| {name} | {fig} |\n"));
        if let Some(n) = n {
            got.insert(*key, n as f64);
        }
    }
    if let (Some(a), Some(b)) = (got.get("b.assimp"), got.get("b")) {
        md.push_str(&format!("\n(b) assimp / skelport: {:.2}× the instructions.\n", a / b));
    }
    md.push_str(&format!("\nProfiles: {td}/<case>.out (`callgrind_annotate` reads them).\n"));
    println!("{md}");
    Ok(())
}

/// Run every case and write the table; with `--callgrind`, count the small cases' instructions
/// instead (see [`callgrind_cases`]).
pub fn compare(root: &Path, args: &[String]) -> Result<()> {
    let st = Command::new("cargo").args(["build", "--release", "-p", "skelport-cli", "-p", "xtask"]).current_dir(root).status()?;
    anyhow::ensure!(st.success(), "release build failed");
    let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
    let bin = target.join("release/skelport");
    let xt = target.join("release/xtask");
    let corpus = skelport_ir::testing::corpus_root().context("bench-compare needs the corpus")?;
    if args.iter().any(|a| a == "--callgrind") {
        return callgrind_cases(&target, &corpus);
    }
    let quick = std::env::var_os("BENCH_QUICK").is_some();
    // Inputs generated and outputs written in memory (tmpfs) where the machine has one, for every
    // tool alike: this machine's virtual disk (ext4 mounted with `discard`) makes each output that
    // replaces another wait on the journal, noise that belongs to the disk, not to a converter.
    let shm = Path::new("/dev/shm");
    let tmp = match shm.is_dir().then(|| tempfile::tempdir_in(shm)) {
        Some(Ok(d)) => d,
        _ => tempfile::tempdir()?,
    };
    let in_memory = tmp.path().starts_with(shm);
    let t = tmp.path();
    let td = t.display();
    let sk = bin.display();
    let xf = xt.display();
    let mpfb = corpus.join("mpfb");
    let rigs = mpfb.join("rigs/standard");
    let female = corpus.join("sl/linden-lab/female_2016_08_05.dae");
    let fox = corpus.join("gltf/Fox/Fox.glb");
    let size = |p: &Path| std::fs::metadata(p).map(|m| m.len()).ok();
    let mut rows: Vec<Row> = Vec::new();
    let mut row = |case, key, name: &str, cmd: String, input| rows.push(Row { case, key, name: name.into(), cmd, input });

    // (a) the MPFB path; Blender's own OBJ import + glTF export is the lower bound of Blender+MPFB.
    let (rig, weights, obj) = (rigs.join("rig.game_engine.json"), rigs.join("weights.game_engine.json"), mpfb.join("3dobjs/base.obj"));
    let a_in = [size(&rig), size(&weights), size(&obj)].iter().flatten().sum::<u64>();
    const A: &str = "(a) MPFB game_engine rig + weights + base.obj → .glb";
    row(
        A,
        "a",
        "skelport",
        format!("{sk} convert {} --weights {} --mesh {} -o {td}/a.glb", rig.display(), weights.display(), obj.display()),
        Some(a_in),
    );
    row(
        A,
        "a.floor",
        "floor: serde_json Value (rig, weights) + OBJ words",
        format!("{xf} floor json {} json {} words {}", rig.display(), weights.display(), obj.display()),
        None,
    );
    let blender = has("blender");
    if blender {
        row(
            A,
            "a.blender",
            "Blender 3.4 headless (OBJ import + glTF export only)",
            blender_case(t, "a", "bpy.ops.import_scene.obj", &obj)?,
            None,
        );
    }

    // (b) the Linden body, beside assimp and Blender.
    const B: &str = "(b) Linden female_2016_08_05.dae → .glb";
    row(B, "b", "skelport", format!("{sk} convert {} -o {td}/b.glb", female.display()), size(&female));
    row(B, "b.floor", "floor: quick-xml events", format!("{xf} floor xml {}", female.display()), None);
    if has("assimp") {
        row(B, "b.assimp", "assimp export", format!("assimp export {} {td}/b-assimp.glb", female.display()), None);
    }
    if blender {
        row(B, "b.blender", "Blender 3.4 headless", blender_case(t, "b", "bpy.ops.wm.collada_import", &female)?, None);
    }

    // (c) Fox.
    const C: &str = "(c) Fox.glb → .dae and → .g4b";
    row(C, "c.dae", "skelport → dae", format!("{sk} convert {} -o {td}/c.dae", fox.display()), size(&fox));
    row(C, "c.g4b", "skelport → g4b", format!("{sk} convert {} -o {td}/c.g4b", fox.display()), size(&fox));
    row(C, "c.floor", "floor: serde_json Value of the GLB JSON chunk", format!("{xf} floor glb {}", fox.display()), None);

    // (d) a generated 65,535-bone AnvilToolkit skeleton, read and written back by the CLI.
    const D: &str = "(d) 65,535-bone AnvilToolkit Standard skeleton round trip";
    let anvil_in = t.join("big-anvil.xml");
    match skelport::render(&big_skeleton(), &skelport_anvil::AnvilFormat, &WriteOptions::default()) {
        Ok((out, _)) => {
            std::fs::write(&anvil_in, &out.main)?;
            row(D, "d", "skelport anvil → anvil", format!("{sk} convert {} --to anvil -o {td}/d.xml", anvil_in.display()), size(&anvil_in));
            row(D, "d.floor", "floor: quick-xml events (after UTF-16 decode)", format!("{xf} floor xml {}", anvil_in.display()), None);
        }
        Err(e) => eprintln!("(d) skipped: cannot generate the skeleton: {e:#}"),
    }

    // (e) batch of 1,000 small generated files: 2 cores vs 1; when the rest is timed in memory,
    // the same batch on disk too, for the record (there each of the 1,000 creates and
    // renames-over waits on the file system's journal, which two threads cannot share).
    let disk = if in_memory { Some(tempfile::tempdir()?) } else { None };
    let mut batch_dirs = vec![(t.to_path_buf(), if in_memory { "in memory (tmpfs)" } else { "on disk" })];
    if let Some(d) = &disk {
        batch_dirs.push((d.path().to_path_buf(), "on disk"));
    }
    let bytes = skelport_ir::irjson::to_vec(&skelport::demo::sample());
    const E: &str = "(e) batch of 1,000 demo files → .glb";
    for (k, (dir, place)) in batch_dirs.iter().enumerate() {
        let batch = dir.join("batch");
        std::fs::create_dir_all(&batch)?;
        for i in 0..1000 {
            std::fs::write(batch.join(format!("f{i:04}.ir.json")), &bytes)?;
        }
        let files = format!("{}/*.ir.json", batch.display());
        let d = dir.display();
        let (k2, k1) = if k == 0 { ("e.2", "e.1") } else { ("e.disk.2", "e.disk.1") };
        row(
            E,
            k2,
            &format!("2 threads, {place}"),
            format!("RAYON_NUM_THREADS=2 {sk} convert {files} --to glb -o {d}/out2/ 2>/dev/null"),
            None,
        );
        row(
            E,
            k1,
            &format!("1 thread, {place}"),
            format!("RAYON_NUM_THREADS=1 {sk} convert {files} --to glb -o {d}/out1/ 2>/dev/null"),
            None,
        );
    }

    // (f) throughput and scaling: the Linden body repeated to 25 MB and 50 MB of Collada.
    const F: &str = "(f) generated Collada → .glb (throughput, scaling)";
    if !quick {
        for (key, fkey, mb) in [("f25", "f25.floor", 25usize), ("f50", "f50.floor", 50)] {
            let p = t.join(format!("big{mb}.dae"));
            std::fs::write(&p, big_collada(&female, mb * 1_000_000)?)?;
            let label = format!("skelport, {:.1} MB", size(&p).unwrap_or(0) as f64 / 1e6);
            row(F, key, &label, format!("{sk} convert {} -o {td}/{key}.glb", p.display()), size(&p));
            row(F, fkey, &format!("floor: quick-xml events, {mb} MB"), format!("{xf} floor xml {}", p.display()), None);
        }
    }

    let mut got: HashMap<&str, Figures> = HashMap::new();
    let mut md = String::from("| case | command | median (ms) | ratio to skelport | peak RSS (MiB) |\n|---|---|---|---|---|\n");
    let mut base: HashMap<&str, f64> = HashMap::new();
    for r in &rows {
        // Runs per case: Blender takes seconds a run; the batch a third of a second; the big
        // inputs a tenth to a half (15 runs: a machine whose speed drifts moved 3-run medians
        // of one case by 40 %); everything else 20.
        let runs = if r.key.contains("blender") {
            3
        } else if r.key.starts_with('e') {
            5
        } else if r.key.starts_with('f') || r.key.starts_with('d') {
            15
        } else {
            20
        };
        let fig = Figures { ms: median_ms(&r.cmd, t, runs), mib: peak_mib(&r.cmd) };
        got.insert(r.key, fig);
        let f = |v: Option<f64>| v.map(|x| format!("{x:.1}")).unwrap_or_else(|| "failed".into());
        if !r.key.contains('.') || r.key == "c.dae" {
            if let Some(ms) = fig.ms {
                base.insert(r.case, ms);
            }
        }
        let ratio = match (fig.ms, base.get(r.case)) {
            (Some(ms), Some(b)) => format!("{:.2}×", ms / b),
            _ => String::new(),
        };
        md.push_str(&format!("| {} | {} | {} | {ratio} | {} |\n", r.case, r.name, f(fig.ms), f(fig.mib)));
        eprintln!("{} / {}: {} ms, {} MiB", r.case, r.name, f(fig.ms), f(fig.mib));
    }

    // The targets, each with its figure.
    let ms = |k: &str| got.get(k).and_then(|f| f.ms);
    let mut tg = String::from("\n| target | figure | met |\n|---|---|---|\n");
    let mut check = |what: String, fig: Option<f64>, unit: &str, ok: fn(f64) -> bool| {
        let (v, m) = match fig {
            Some(x) => (format!("{x:.2}{unit}"), if ok(x) { "yes" } else { "**no**" }),
            None => ("not measured".into(), "—"),
        };
        tg.push_str(&format!("| {what} | {v} | {m} |\n"));
    };
    let ratio = |a: &str, b: &str| Some(ms(a)? / ms(b)?);
    let cmd_of = |k: &str| rows.iter().find(|r| r.key == k).map(|r| r.cmd.as_str());
    // Ratios between tools (or thread counts) are judged on paired runs (see `paired_ratio`), the
    // ratio of the table's medians shown beside each: in a noisy phase the medians, taken
    // minutes apart, moved (b)'s ratio to assimp by a quarter.
    let paired = |a: &str, b: &str, rounds: usize| -> (Option<f64>, String) {
        let p = cmd_of(a).zip(cmd_of(b)).and_then(|(x, y)| paired_ratio(x, y, rounds));
        let of_medians = ratio(a, b).map(|x| format!(" (ratio of medians {x:.2}×)")).unwrap_or_default();
        (p, format!(", median of {rounds} paired runs{of_medians}"))
    };
    check("(a) whole process < 25 ms".into(), ms("a"), " ms", |x| x < 25.0);
    if got.contains_key("b.assimp") {
        let (p, how) = paired("b.assimp", "b", 41);
        check(format!("(b) assimp / skelport ≥ 3{how}"), p, "×", |x| x >= 3.0);
        check("(b) assimp / skelport ≥ 4 (issue 35), the same runs".into(), p, "×", |x| x >= 4.0);
    }
    check("(b) Blender / skelport ≥ 100".into(), ratio("b.blender", "b"), "×", |x| x >= 100.0);
    let errs = validator_errors(root, &t.join("b.glb")).map(|e| e as f64);
    check("(b) skelport's .glb: Khronos validator errors = 0".into(), errs, "", |x| x == 0.0);
    if got.contains_key("b.assimp") {
        let errs = validator_errors(root, &t.join("b-assimp.glb")).map(|e| e as f64);
        check("(b) for reference: assimp's .glb validator errors".into(), errs, "", |_| true);
    }
    for (k, f) in [
        ("a", "a.floor"),
        ("b", "b.floor"),
        ("c.dae", "c.floor"),
        ("c.g4b", "c.floor"),
        ("d", "d.floor"),
        ("f25", "f25.floor"),
        ("f50", "f50.floor"),
    ] {
        // (d) takes 0.8 s a round: 9 rounds. The 25 and 50 MB cases take a tenth of that, and
        // their ratio sits near issue 35's line: 21 rounds, as for the small cases.
        let rounds = if k == "d" { 9 } else { 21 };
        let (p, how) = paired(k, f, rounds);
        check(format!("{k}: skelport / tokenizer floor ≤ 3{how}"), p, "×", |x| x <= 3.0);
        if k == "b" || k == "f50" {
            check(format!("{k}: skelport / tokenizer floor ≤ 2 (issue 35), the same runs"), p, "×", |x| x <= 2.0);
        }
    }
    check("50 MB / 25 MB input time ≤ 2.2 (2× input)".into(), ratio("f50", "f25"), "×", |x| x <= 2.2);
    let (p, how) = paired("e.1", "e.2", 9);
    check(format!("(e) batch: 1 thread / 2 threads ≥ 1.8{how}"), p, "×", |x| x >= 1.8);
    check("(e) batch: 1 thread / 2 threads ≥ 1.9 (issue 35), the same runs".into(), p, "×", |x| x >= 1.9);
    if got.contains_key("e.disk.2") {
        let (p, how) = paired("e.disk.1", "e.disk.2", 9);
        check(format!("(e) for the record: the same batch on disk, 1 thread / 2 threads{how}"), p, "×", |_| true);
    }
    for r in &rows {
        if let (Some(input), Some(mib)) = (r.input, got.get(r.key).and_then(|f| f.mib)) {
            let limit = 3.0 * input as f64 / 1048576.0 + 20.0;
            let what = format!("{}: peak RSS ≤ 3 × input + 20 MiB ({limit:.1} MiB)", r.key);
            tg.push_str(&format!("| {what} | {mib:.1} MiB | {} |\n", if mib <= limit { "yes" } else { "**no**" }));
        }
    }
    md.push_str(&tg);
    md.push_str(&format!(
        "\nGenerated inputs and every tool's outputs were in {} ({}).\n",
        if in_memory { "memory" } else { "the temporary directory on disk" },
        t.display()
    ));

    let out: PathBuf = target.join("bench-compare.md");
    std::fs::write(&out, &md)?;
    println!("{md}");
    eprintln!("wrote {}", out.display());
    Ok(())
}
