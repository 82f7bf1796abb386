//! Outputs are all or nothing and never a device (issue 21): a device, a FIFO or a link to one is
//! written through, never renamed over; signals and a file size limit during a write leave no
//! temporary file; a batch checks every path it will write (main and side files) before writing
//! any. Also `inspect` on a very deep chain, and `--allow-outside-uris`.

#![cfg(unix)]

use std::os::unix::fs::FileTypeExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_skelport"))
}

fn demo(name: &str) -> PathBuf {
    skelport_ir::testing::workspace_root().join("testdata/demo").join(name)
}

fn fifo(at: &Path) {
    let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

fn temporaries(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
    v.retain(|n| n.starts_with(".skelport-") && n.ends_with(".tmp"));
    v
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

/// Wait (bounded, against a hang; it measures nothing) until `dir` holds `n` temporaries.
fn wait_for_temporaries(dir: &Path, n: usize, child: &mut std::process::Child) {
    let start = std::time::Instant::now();
    while temporaries(dir).len() < n {
        assert!(child.try_wait().unwrap().is_none(), "skelport ended before writing its temporaries");
        assert!(start.elapsed().as_secs() < 120, "no temporaries appeared");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// `-o` naming a link to /dev/null (and the FIFO cases below): as root a rename would replace
/// /dev/null itself by a regular file; the output is written through and the link stays.
#[test]
fn a_link_to_dev_null_stays_a_link() {
    let t = tempfile::tempdir().unwrap();
    let link = t.path().join("out.glb");
    std::os::unix::fs::symlink("/dev/null", &link).unwrap();
    let o = bin().args(["convert".as_ref(), demo("sample.gltf").as_os_str(), "-o".as_ref(), link.as_os_str()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(std::fs::symlink_metadata(&link).unwrap().file_type().is_symlink(), "the link was replaced");
    assert!(std::fs::metadata("/dev/null").unwrap().file_type().is_char_device());
    assert!(temporaries(t.path()).is_empty());
}

/// A FIFO as output is written through: its reader gets the file.
#[test]
fn a_fifo_output_is_written_through() {
    let t = tempfile::tempdir().unwrap();
    let pipe = t.path().join("out.glb");
    fifo(&pipe);
    let reader = {
        let pipe = pipe.clone();
        std::thread::spawn(move || std::fs::read(pipe).unwrap())
    };
    let o = bin().args(["convert".as_ref(), demo("sample.gltf").as_os_str(), "-o".as_ref(), pipe.as_os_str()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    // Before joining: had the FIFO been renamed over, its reader would wait for ever.
    assert!(std::fs::symlink_metadata(&pipe).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    let got = reader.join().unwrap();
    assert_eq!(&got[..4], b"glTF");
    assert!(temporaries(t.path()).is_empty());
}

/// A signal while a conversion writes: its side file's temporary is written and the main file is
/// a FIFO nobody reads, so skelport waits there with the temporary on disk, every time (no race
/// to win). SIGTERM and SIGINT must remove it; before, it stayed.
#[test]
fn sigterm_and_sigint_during_a_write_leave_no_temporary() {
    for sig in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        let t = tempfile::tempdir().unwrap();
        std::fs::write(t.path().join("out.bin"), b"the old buffer").unwrap();
        let pipe = t.path().join("out.gltf");
        fifo(&pipe);
        let mut child = bin()
            .args(["convert".as_ref(), demo("sample.glb").as_os_str(), "-o".as_ref(), pipe.as_os_str()])
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_for_temporaries(t.path(), 1, &mut child);
        // SAFETY: signalling our own child.
        unsafe { libc::kill(child.id() as i32, sig) };
        let o = child.wait_with_output().unwrap();
        // 128 + the signal's number, as a shell reports it: 143 for SIGTERM, 130 for SIGINT.
        assert_eq!(o.status.code(), Some(128 + sig), "signal {sig}: {}", text(&o));
        assert!(temporaries(t.path()).is_empty(), "signal {sig}: {:?}", temporaries(t.path()));
        assert_eq!(std::fs::read(t.path().join("out.bin")).unwrap(), b"the old buffer", "nothing renamed");
    }
}

/// The same in a batch: the first SIGINT lets the file in flight finish (it waits on its FIFO),
/// the second ends the batch and removes its temporary.
#[test]
fn a_second_sigint_ends_a_batch_and_removes_its_temporaries() {
    let t = tempfile::tempdir().unwrap();
    let out = t.path().join("out");
    std::fs::create_dir(&out).unwrap();
    fifo(&out.join("sample.gltf"));
    let mut child = bin()
        .args(["convert".as_ref(), demo("sample.glb").as_os_str(), "-o".as_ref(), out.as_os_str(), "--to".as_ref(), "gltf".as_ref()])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_temporaries(&out, 1, &mut child);
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(child.try_wait().unwrap().is_none(), "the first SIGINT lets the file in flight finish");
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    assert!(temporaries(&out).is_empty(), "{:?}", temporaries(&out));
    assert!(!out.join("sample.bin").exists());
}

/// A write past the file size limit (`ulimit -f`) raised SIGXFSZ, which killed skelport with its
/// temporary on disk; now the write fails with an error, exit 1, and the temporary is removed.
#[test]
fn a_file_size_limit_fails_the_write_and_leaves_no_temporary() {
    let t = tempfile::tempdir().unwrap();
    let o_path = t.path().join("out.g4tf");
    let mut cmd = bin();
    cmd.args(["convert".as_ref(), demo("sample.glb").as_os_str(), "-o".as_ref(), o_path.as_os_str()]);
    // SAFETY: setrlimit is async-signal-safe.
    unsafe {
        cmd.pre_exec(|| {
            let lim = libc::rlimit { rlim_cur: 2048, rlim_max: 2048 };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let o = cmd.output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{:?}: {}", o.status, text(&o));
    assert!(text(&o).contains("cannot write"), "{}", text(&o));
    assert!(temporaries(t.path()).is_empty(), "{:?}", temporaries(t.path()));
    assert!(!o_path.exists());
}

/// `rig.x.glb` and `x.glb` to MPFB both write `weights.x.json` (their main files differ:
/// `rig.x.json`, `x.json`): the batch said "converted 2 of 2" and one weights file replaced the
/// other. Every path is checked first; both fail, naming each other, and nothing is written.
#[test]
fn a_batch_refuses_inputs_whose_side_files_collide() {
    let t = tempfile::tempdir().unwrap();
    let (a, b) = (t.path().join("rig.x.glb"), t.path().join("x.glb"));
    std::fs::copy(demo("sample.glb"), &a).unwrap();
    std::fs::copy(demo("sample.glb"), &b).unwrap();
    let out = t.path().join("out");
    let o = bin()
        .args(["convert".as_ref(), a.as_os_str(), b.as_os_str(), "-o".as_ref(), out.as_os_str(), "--to".as_ref(), "mpfb".as_ref()])
        .output()
        .unwrap();
    let err = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("converted 0 of 2"), "{err}");
    assert!(err.contains("weights.x.json") && err.contains("rig.x.glb") && err.contains("'") && err.contains("x.glb"), "{err}");
    assert_eq!(std::fs::read_dir(&out).unwrap().count(), 0, "nothing written");
}

/// An output of a batch that is another input of it, reached through a link (`src/y.bin` is
/// `out/x.bin`, which `x.glb`'s glTF buffer would replace while `y.bin` is read): refused
/// before anything is written, naming the input.
#[test]
fn a_batch_refuses_to_overwrite_one_of_its_inputs() {
    let t = tempfile::tempdir().unwrap();
    let (src, out) = (t.path().join("src"), t.path().join("out"));
    std::fs::create_dir(&src).unwrap();
    std::fs::create_dir(&out).unwrap();
    let x = src.join("x.glb");
    std::fs::copy(demo("sample.glb"), &x).unwrap();
    std::fs::write(out.join("x.bin"), b"not a model").unwrap();
    let y = src.join("y.bin");
    std::os::unix::fs::symlink(out.join("x.bin"), &y).unwrap();
    let o = bin()
        .args(["convert".as_ref(), x.as_os_str(), y.as_os_str(), "-o".as_ref(), out.as_os_str(), "--to".as_ref(), "gltf".as_ref()])
        .output()
        .unwrap();
    let err = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("x.bin is the input") && err.contains("y.bin"), "{err}");
    assert_eq!(std::fs::read(out.join("x.bin")).unwrap(), b"not a model");
    assert!(!out.join("x.gltf").exists());
}

/// `inspect` on a 65,535-deep chain (docs/limits.md): it panicked (exit 101) past 32,767 and
/// printed O(depth²) bytes; now the indentation stops at 32 levels and the output is linear.
#[test]
fn inspect_prints_a_65535_deep_chain_in_linear_output() {
    let n = 65_535usize;
    let mut bones = Vec::with_capacity(n);
    for i in 0..n {
        let parent = if i == 0 { String::new() } else { format!(r#""parent":{},"#, i - 1) };
        bones.push(format!(
            r#"{{"name":"b{i}",{parent}"rest":{{"translation":[0,0,0.001],"rotation":[0,0,0,1]}},"length":0.001,"roll":0}}"#
        ));
    }
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("chain.ir.json");
    let mut doc: serde_json::Value = serde_json::from_slice(&std::fs::read(demo("sample.ir.json")).unwrap()).unwrap();
    let sk = &mut doc["skeletons"][0];
    sk["bones"] = serde_json::from_str(&format!("[{}]", bones.join(","))).unwrap();
    doc["skins"] = serde_json::json!([]);
    doc["meshes"] = serde_json::json!([]);
    std::fs::write(&p, serde_json::to_vec(&doc).unwrap()).unwrap();
    let o = bin().args(["inspect".as_ref(), p.as_os_str()]).output().unwrap();
    assert!(o.status.success(), "{:?}: {}", o.status, String::from_utf8_lossy(&o.stderr));
    let lines: Vec<&str> = std::str::from_utf8(&o.stdout).unwrap().lines().collect();
    let widest = lines.iter().map(|l| l.len()).max().unwrap();
    assert!(widest < 200, "a line of {widest} bytes");
    assert!(lines.iter().any(|l| l.contains("[depth 65534] b65534")), "the deepest bone says its depth");
    eprintln!("{} lines, {} bytes", lines.len(), o.stdout.len());
}

/// `--allow-outside-uris` lets a buffer URI climb out of the input's folder (a trusted tree);
/// without it the URI is refused.
#[test]
fn allow_outside_uris_opens_a_buffer_beside_the_folder() {
    let t = tempfile::tempdir().unwrap();
    let sub = t.path().join("models");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(demo("sample.bin"), t.path().join("shared.bin")).unwrap();
    let gltf = std::fs::read_to_string(demo("sample.gltf")).unwrap();
    assert!(gltf.contains("\"sample.bin\""));
    let input = sub.join("m.gltf");
    std::fs::write(&input, gltf.replace("\"sample.bin\"", "\"../shared.bin\"")).unwrap();
    let out = t.path().join("out.glb");
    let refused = bin().args(["convert".as_ref(), input.as_os_str(), "-o".as_ref(), out.as_os_str()]).output().unwrap();
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(text(&refused).contains("leads outside the input's folder"), "{}", text(&refused));
    assert!(!out.exists());
    let allowed = bin()
        .args(["convert".as_ref(), input.as_os_str(), "-o".as_ref(), out.as_os_str(), "--allow-outside-uris".as_ref()])
        .output()
        .unwrap();
    assert!(allowed.status.success(), "{}", text(&allowed));
    assert!(out.exists());
    let inspected = bin().args(["inspect".as_ref(), input.as_os_str(), "--allow-outside-uris".as_ref()]).output().unwrap();
    assert!(inspected.status.success(), "{}", text(&inspected));
}

/// The decode budget is in force on every command that reads a file: the glTF bombs of
/// testdata/untrusted stop with the budget's message, exit 1, through convert, inspect, validate,
/// diff and render.
#[test]
fn every_command_reads_under_the_decode_budget() {
    let t = tempfile::tempdir().unwrap();
    let dir = skelport_ir::testing::workspace_root().join("testdata/untrusted/gltf");
    let out_glb = t.path().join("o.glb");
    let out_svg = t.path().join("o.svg");
    let other = demo("sample.gltf");
    for e in std::fs::read_dir(dir).unwrap() {
        let bomb = e.unwrap().path();
        let b = bomb.as_os_str();
        let runs: [Vec<&std::ffi::OsStr>; 5] = [
            vec!["convert".as_ref(), b, "-o".as_ref(), out_glb.as_os_str()],
            vec!["inspect".as_ref(), b],
            vec!["validate".as_ref(), b],
            vec!["diff".as_ref(), b, other.as_os_str()],
            vec!["render".as_ref(), b, "-o".as_ref(), out_svg.as_os_str()],
        ];
        for args in runs {
            let o = bin().args(&args).output().unwrap();
            assert_eq!(o.status.code(), Some(1), "{args:?}: {}", text(&o));
            assert!(text(&o).contains("budget exceeded"), "{args:?}: {}", text(&o));
        }
        assert!(!out_glb.exists() && !out_svg.exists());
    }
}

/// SIGTERM to a child converting a large generated input (a 640 × 640 grid, 409,600 skinned
/// vertices, to G4MF text): the folder is watched until the child's temporary appears, then the
/// child is signalled. It must leave no temporary and no partial output. A child that finishes before its
/// temporary is seen is tried again (up to 5 times); at least one try must catch it mid-write.
#[test]
fn sigterm_while_converting_a_large_input_leaves_no_temporary() {
    let t = tempfile::tempdir().unwrap();
    let input = t.path().join("big.ir.json");
    let doc = skelport_ir::testing::synthetic_body(skelport_ir::Frame::GLTF, 63, 640, 640);
    std::fs::write(&input, skelport_ir::irjson::to_vec(&doc)).unwrap();
    drop(doc);
    let out_dir = t.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let out = out_dir.join("big.g4tf");
    // The whole output, to tell a complete file from a partial one.
    let reference = t.path().join("reference.g4tf");
    let o = bin().args(["convert".as_ref(), input.as_os_str(), "-o".as_ref(), reference.as_os_str()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let whole = std::fs::read(&reference).unwrap();
    let mut caught = 0;
    for _ in 0..5 {
        let mut child =
            bin().args(["convert".as_ref(), input.as_os_str(), "-o".as_ref(), out.as_os_str()]).stderr(Stdio::piped()).spawn().unwrap();
        let start = std::time::Instant::now();
        let seen = loop {
            if !temporaries(&out_dir).is_empty() {
                break true;
            }
            if child.try_wait().unwrap().is_some() || start.elapsed().as_secs() > 300 {
                break false;
            }
            std::thread::sleep(std::time::Duration::from_micros(200));
        };
        if seen {
            // SAFETY: signalling our own child.
            unsafe { libc::kill(child.id() as i32, libc::SIGTERM) };
        }
        let o = child.wait_with_output().unwrap();
        assert!(temporaries(&out_dir).is_empty(), "{:?}: {}", temporaries(&out_dir), text(&o));
        if seen && o.status.code() == Some(128 + libc::SIGTERM) {
            caught += 1;
            // The signal may come as the rename is made: then the output is whole, never partial.
            assert!(!out.exists() || std::fs::read(&out).unwrap() == whole, "an interrupted conversion left a partial output");
            break;
        }
        let _ = std::fs::remove_file(&out);
    }
    assert!(caught > 0, "the conversion never was caught writing");
}

/// `DIR/x.gltf` whose buffer is `DIR/y.bin` (the demo's), and `DIR/y.glb`.
fn buffer_of_another_name(dir: &Path) -> (PathBuf, PathBuf, PathBuf) {
    let json = std::fs::read_to_string(demo("sample.gltf")).unwrap().replace("\"uri\": \"sample.bin\"", "\"uri\": \"y.bin\"");
    let (x, y_bin, y) = (dir.join("x.gltf"), dir.join("y.bin"), dir.join("y.glb"));
    std::fs::write(&x, json).unwrap();
    std::fs::copy(demo("sample.bin"), &y_bin).unwrap();
    std::fs::copy(demo("sample.glb"), &y).unwrap();
    (x, y_bin, y)
}

/// Issue 38: `convert x.gltf -o y.gltf`, where x's buffer is `y.bin`, wrote `y.bin` over the
/// input's buffer. Every file an input reads is kept from the outputs: refused before anything
/// is written. Converting a file onto itself (its own buffer with it) still works.
#[test]
fn a_conversion_does_not_overwrite_a_file_its_input_reads() {
    let t = tempfile::tempdir().unwrap();
    let (x, y_bin, _) = buffer_of_another_name(t.path());
    let before = std::fs::read(&y_bin).unwrap();
    let out = t.path().join("y.gltf");
    let o = bin().args(["convert".as_ref(), x.as_os_str(), "-o".as_ref(), out.as_os_str()]).output().unwrap();
    let err = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("y.bin") && err.contains("the input was read from"), "{err}");
    assert_eq!(std::fs::read(&y_bin).unwrap(), before);
    assert!(!out.exists());
    let o = bin().args(["convert".as_ref(), x.as_os_str(), "-o".as_ref(), x.as_os_str()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(t.path().join("x.bin").exists());
}

/// Issue 38: a batch of `x.gltf` (buffer `y.bin`) and `y.glb` into their own folder wrote
/// `y.gltf` + `y.bin` over x's buffer. Known before anything is written: `y.glb` fails naming
/// the input that reads `y.bin`, and `x.gltf` converts.
#[test]
fn a_batch_does_not_overwrite_a_file_another_input_reads() {
    let t = tempfile::tempdir().unwrap();
    let (x, y_bin, y) = buffer_of_another_name(t.path());
    let before = std::fs::read(&y_bin).unwrap();
    let o = bin()
        .args(["convert".as_ref(), y.as_os_str(), x.as_os_str(), "-o".as_ref(), t.path().as_os_str(), "--to".as_ref(), "gltf".as_ref()])
        .output()
        .unwrap();
    let err = text(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("converted 1 of 2") && err.contains("y.bin is a file that the input") && err.contains("x.gltf"), "{err}");
    assert_eq!(std::fs::read(&y_bin).unwrap(), before);
}

/// Issue 38: `-o /dev/null --to gltf` created a regular `/dev/null.bin`. A device gets no side
/// file beside it: refused before anything is written. A FIFO sits in a folder of the
/// user's, so its side files go there (the signal tests above write through one).
#[test]
fn no_side_file_beside_a_device() {
    // A device has no folder of its own: refused before anything is written. (Were it not,
    // `/dev/null.bin` would appear: removed again, and the test fails.)
    let o = bin()
        .args(["convert".as_ref(), demo("sample.glb").as_os_str(), "-o".as_ref(), "/dev/null".as_ref(), "--to".as_ref(), "gltf".as_ref()])
        .output()
        .unwrap();
    let err = text(&o);
    let stray = Path::new("/dev/null.bin").exists();
    if stray {
        let _ = std::fs::remove_file("/dev/null.bin");
    }
    assert!(!stray, "a side file was written beside /dev/null");
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("is a device") && err.contains("--embed"), "{err}");
    // Without side files a device is still written through.
    let o = bin()
        .args(["convert".as_ref(), demo("sample.glb").as_os_str(), "-o".as_ref(), "/dev/null".as_ref(), "--to".as_ref(), "glb".as_ref()])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
}

/// Issue 38: an ESC in a bone name reached the terminal raw through `inspect` and warnings.
/// Printed for people it is escaped; `--json` keeps it exact (JSON escapes it its own way).
#[test]
fn control_characters_are_escaped_for_the_terminal() {
    let t = tempfile::tempdir().unwrap();
    let f = t.path().join("esc.ir.json");
    let doc =
        std::fs::read_to_string(demo("sample.ir.json")).unwrap().replacen("\"name\": \"pelvis\"", "\"name\": \"pel\\u001b[31mvis\"", 1);
    std::fs::write(&f, doc).unwrap();
    let o = bin().args(["inspect".as_ref(), f.as_os_str()]).output().unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(out.contains("pel\\u{1b}[31mvis") && !out.contains('\u{1b}'), "{out}");
    let o = bin().args(["inspect".as_ref(), "--json".as_ref(), f.as_os_str()]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v.to_string().contains("pel\\u001b[31mvis"), "{v}");
    // A message naming the bone, on stderr.
    let o = bin().args(["convert".as_ref(), f.as_os_str(), "-o".as_ref(), t.path().join("o.dae").as_os_str()]).output().unwrap();
    assert!(!o.stderr.contains(&0x1b), "{}", String::from_utf8_lossy(&o.stderr));
}
