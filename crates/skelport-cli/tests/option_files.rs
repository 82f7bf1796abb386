//! Files named in options (`--mesh`, `--weights`, `--names`, `--sl-skeleton`, `--map`, `--vrm-meta`) go through the
//! checked reader (skelport_ir::files::read_user_file): a FIFO or a directory is refused at
//! once with a message naming it, never waited on (issue 21).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn demo(name: &str) -> PathBuf {
    skelport_ir::testing::workspace_root().join("testdata/demo").join(name)
}

/// Run skelport; a run still going after a minute is a hang (a FIFO opened for reading blocks
/// until a writer comes), killed and reported. The bound guards against a hang; it measures
/// nothing.
fn run(args: &[&std::ffi::OsStr]) -> (i32, String) {
    let mut child =
        Command::new(env!("CARGO_BIN_EXE_skelport")).args(args).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("run skelport");
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            return (status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned());
        }
        if start.elapsed() > std::time::Duration::from_secs(60) {
            child.kill().ok();
            child.wait().ok();
            panic!("skelport {args:?} hung");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[cfg(unix)]
fn fifo(at: &Path) {
    extern "C" {
        fn mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
    }
    let c = std::ffi::CString::new(at.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[cfg(unix)]
#[test]
fn fifos_and_directories_named_in_options_are_refused_at_once() {
    let t = tempfile::tempdir().unwrap();
    let pipe = t.path().join("pipe");
    fifo(&pipe);
    let dir = t.path().join("dir");
    std::fs::create_dir(&dir).unwrap();
    let out = t.path().join("out");
    // --map and --vrm-meta were read with std::fs::read: a FIFO hung them.
    let cases: [(&str, PathBuf, &str); 6] = [
        ("--mesh", demo("rig.sample.json"), "glb"),
        ("--weights", demo("rig.sample.json"), "glb"),
        ("--names", demo("sample.anvil.xml"), "glb"),
        ("--sl-skeleton", demo("sample.glb"), "dae"),
        ("--map", demo("sample.glb"), "glb"),
        ("--vrm-meta", demo("sample.glb"), "vrm"),
    ];
    for (flag, input, ext) in &cases {
        for bad in [&pipe, &dir] {
            let o = out.with_extension(ext);
            let (code, err) = run(&["convert".as_ref(), input.as_os_str(), flag.as_ref(), bad.as_os_str(), "-o".as_ref(), o.as_os_str()]);
            assert_eq!(code, 1, "{flag} {}: {err}", bad.display());
            assert!(err.contains(&bad.display().to_string()) && err.contains("is not a regular file"), "{flag} {}: {err}", bad.display());
            assert!(!o.exists());
        }
    }
}
