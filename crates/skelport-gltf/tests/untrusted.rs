//! Files made to attack the reader (issue 21): buffer URIs that lead out of the input's folder
//! or at things that are not files, and small files that ask for huge amounts of memory.
//!
//! The URI cases are laid out in a temporary folder per test (links and FIFOs cannot be kept in
//! git): the input in `in/`, a "secret" beside it that must never be read. The memory bombs are
//! under `testdata/untrusted/gltf/`.

use skelport_gltf::GltfFormat;
use skelport_ir::{Budget, Diagnostics, Document, Format, Input, ReadOptions};
use std::path::{Path, PathBuf};

fn demo() -> (String, Vec<u8>) {
    let root = skelport_ir::testing::workspace_root().join("testdata/demo");
    (std::fs::read_to_string(root.join("sample.gltf")).unwrap(), std::fs::read(root.join("sample.bin")).unwrap())
}

fn read_path(path: &Path, opts: &ReadOptions) -> Result<Document, String> {
    let bytes = std::fs::read(path).unwrap();
    GltfFormat.read(Input { path: Some(path), bytes: &bytes }, opts, &mut Diagnostics::default()).map_err(|e| e.to_string())
}

/// `tmp/in/model.gltf` naming `uri`, with the demo's buffer as `tmp/secret.bin` outside `in/`
/// (and `tmp/in/sample.bin` inside). Returns the model's path.
fn layout(tmp: &Path, uri: &str) -> PathBuf {
    let (json, bin) = demo();
    std::fs::create_dir_all(tmp.join("in")).unwrap();
    std::fs::write(tmp.join("secret.bin"), &bin).unwrap();
    std::fs::write(tmp.join("in/sample.bin"), &bin).unwrap();
    let json = json.replace("\"uri\": \"sample.bin\"", &format!("\"uri\": {}", serde_json::to_string(uri).unwrap()));
    let model = tmp.join("in/model.gltf");
    std::fs::write(&model, json).unwrap();
    model
}

/// Read on another thread, so that a reader that blocks (on a FIFO, before the fix) fails the
/// test instead of hanging it. The bound is a guard against a hang, not a measurement.
fn read_guarded(path: PathBuf, opts: ReadOptions) -> Result<Document, String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(read_path(&path, &opts)).ok());
    rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the read hung (a FIFO opened for reading blocks)")
}

#[test]
fn the_layout_reads_when_the_buffer_is_inside() {
    let t = tempfile::tempdir().unwrap();
    let doc = read_path(&layout(t.path(), "sample.bin"), &ReadOptions::default()).unwrap();
    assert_eq!(doc.skins.len(), 1);
}

#[test]
fn uris_leading_out_of_the_folder_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let secret = t.path().join("secret.bin");
    let cases = [
        ("../secret.bin", "leads outside the input's folder"),
        ("%2e%2e/secret.bin", "leads outside the input's folder"),
        ("%2E%2E%2Fsecret.bin", "leads outside the input's folder"),
        ("../../../../../../../../../../etc/passwd", "leads outside the input's folder"),
        ("/etc/passwd", "is an absolute path"),
        (&secret.display().to_string(), "is an absolute path"),
        ("file:///etc/passwd", "does not fetch URIs"),
        (&format!("file://{}", secret.display()), "does not fetch URIs"),
    ];
    for (uri, want) in cases {
        let model = layout(t.path(), uri);
        let e = read_path(&model, &ReadOptions::default()).unwrap_err();
        assert!(e.contains("/buffers/0") && e.contains(want), "{uri}: {e}");
        // Nothing about the file outside: not its size, not whether it exists.
        assert!(!e.contains("bytes are present") && !e.contains("No such file"), "{uri}: {e}");
    }
    // The same files read when the tree is trusted.
    let model = layout(t.path(), "../secret.bin");
    let opts = ReadOptions { allow_outside_uris: true, ..Default::default() };
    assert_eq!(read_path(&model, &opts).unwrap().skins.len(), 1);
    let model = layout(t.path(), &secret.display().to_string());
    assert_eq!(read_path(&model, &opts).unwrap().skins.len(), 1);
}

#[cfg(unix)]
#[test]
fn a_link_out_of_the_folder_reads_as_missing() {
    let t = tempfile::tempdir().unwrap();
    layout(t.path(), "link.bin");
    std::os::unix::fs::symlink(t.path().join("secret.bin"), t.path().join("in/link.bin")).unwrap();
    std::os::unix::fs::symlink(t.path(), t.path().join("in/up")).unwrap();
    let shown = |uri: &str| {
        let model = layout(t.path(), uri);
        read_path(&model, &ReadOptions::default()).unwrap_err().replace(uri, "URI")
    };
    let missing = shown("missing.bin");
    assert!(missing.contains("is not a file in the input's folder"), "{missing}");
    for uri in ["link.bin", "up/secret.bin", "up/not-there.bin", "up/in/../secret.bin"] {
        assert_eq!(shown(uri), missing, "{uri}");
    }
    // A link that stays inside is followed.
    std::os::unix::fs::symlink("sample.bin", t.path().join("in/inside.bin")).unwrap();
    let model = layout(t.path(), "inside.bin");
    assert!(read_path(&model, &ReadOptions::default()).is_ok());
}

#[cfg(unix)]
#[test]
fn fifos_and_directories_are_refused_at_once() {
    let t = tempfile::tempdir().unwrap();
    let fifo = t.path().join("in/pipe.bin");
    let model = layout(t.path(), "pipe.bin");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc_mkfifo(c.as_ptr(), 0o600) }, 0);
    let e = read_guarded(model, ReadOptions::default()).unwrap_err();
    assert!(e.contains("is not a regular file"), "{e}");
    std::fs::create_dir(t.path().join("in/dir.bin")).unwrap();
    let e = read_guarded(layout(t.path(), "dir.bin"), ReadOptions::default()).unwrap_err();
    assert!(e.contains("is not a regular file"), "{e}");
    let opts = ReadOptions { allow_outside_uris: true, ..Default::default() };
    for dev in ["/dev/zero", "/dev/urandom"] {
        let e = read_guarded(layout(t.path(), dev), opts.clone()).unwrap_err();
        assert!(e.contains("is not a regular file"), "{dev}: {e}");
    }
}

#[cfg(unix)]
extern "C" {
    #[link_name = "mkfifo"]
    fn libc_mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
}

/// The writer's side-file URI is percent-encoded: `my model#1.bin` would otherwise read as a
/// fragment in other loaders, and `a%41.bin` would decode to `aA.bin`.
#[test]
fn side_file_uris_are_percent_encoded_and_read_back() {
    let t = tempfile::tempdir().unwrap();
    let (json, bin) = demo();
    std::fs::write(t.path().join("sample.bin"), &bin).unwrap();
    std::fs::write(t.path().join("sample.gltf"), &json).unwrap();
    let doc = read_path(&t.path().join("sample.gltf"), &ReadOptions::default()).unwrap();
    for (stem, uri) in [("my model#1", "my%20model%231.bin"), ("a%41", "a%2541.bin"), ("x?y:z", "x%3Fy%3Az.bin")] {
        let opts = skelport_ir::WriteOptions { file_stem: stem.into(), ..Default::default() };
        let out = GltfFormat.write(&doc, &opts, &mut Diagnostics::default()).unwrap();
        let v: serde_json::Value = serde_json::from_slice(&out.main).unwrap();
        assert_eq!(v["buffers"][0]["uri"], uri, "{stem}");
        assert_eq!(out.side_files[0].0, format!("{stem}.bin"));
        let main = t.path().join(format!("{stem}.gltf"));
        std::fs::write(&main, &out.main).unwrap();
        std::fs::write(t.path().join(&out.side_files[0].0), &out.side_files[0].1).unwrap();
        let back = read_path(&main, &ReadOptions::default()).unwrap_or_else(|e| panic!("{stem}: {e}"));
        assert_eq!(back.meshes[0].positions, doc.meshes[0].positions, "{stem}");
    }
}

fn untrusted(name: &str) -> PathBuf {
    skelport_ir::testing::workspace_root().join("testdata/untrusted/gltf").join(name)
}

/// Read with a budget of our own, to see what was charged when the read stopped.
fn read_budgeted(path: &Path) -> (Result<Document, String>, Budget) {
    let bytes = std::fs::read(path).unwrap();
    let budget = Budget::for_input(bytes.len() as u64);
    let opts = ReadOptions { budget: Some(budget.clone()), ..Default::default() };
    let r = GltfFormat.read(Input { path: Some(path), bytes: &bytes }, &opts, &mut Diagnostics::default()).map_err(|e| e.to_string());
    (r, budget)
}

/// 789 bytes: eight primitives over accessors of 4 million zeros (no bufferView). Before the
/// budget the conversion took 3.3 GB; now the first accessor is refused before it is allocated.
#[test]
fn zero_accessors_are_charged_before_they_are_allocated() {
    let (r, budget) = read_budgeted(&untrusted("zero-accessor-bomb.gltf"));
    let e = r.unwrap_err();
    assert!(e.contains("/accessors/0: decode budget exceeded: it needs 96000000 more bytes"), "{e}");
    assert!(e.contains("zero-accessor-bomb.gltf"), "{e}");
    // Only the typed model's charge (a few kilobytes for this file) was taken before it.
    assert!(budget.used() < 64 << 10, "{} bytes taken before the refusal", budget.used());
}

/// 64 primitives over one accessor of 200,000 vertices (3,978 bytes; 1.4 GB before): the
/// accessor is decoded once, and the copies each primitive adds to the merged mesh are charged
/// before they are made, so the read stops at the budget.
#[test]
fn primitives_sharing_an_accessor_stop_at_the_budget() {
    let (r, budget) = read_budgeted(&untrusted("primitives-share-one-accessor.gltf"));
    let e = r.unwrap_err();
    assert!(e.contains("decode budget exceeded") && e.contains("/meshes/0/primitives/"), "{e}");
    assert!(budget.used() <= budget.limit());
    // The refusal came within the first few primitives, not after 64 copies.
    let k: usize = e.split("/meshes/0/primitives/").nth(1).and_then(|s| s.split('/').next()).and_then(|s| s.parse().ok()).unwrap();
    assert!(k < 3, "{e}");
    let (r, _) = read_budgeted(&untrusted("skins-share-one-mesh.gltf"));
    assert!(r.unwrap_err().contains("decode budget exceeded"));
}

/// Sharing is decoded once: two primitives over one accessor charge less than two primitives
/// over two equal accessors (the second decode is not made).
#[test]
fn a_shared_accessor_is_decoded_once() {
    let make = |shared: bool| {
        let second = if shared { 0 } else { 3 };
        format!(
            r#"{{"asset":{{"version":"2.0"}},"nodes":[{{"name":"root","children":[1]}},{{"name":"bone"}},{{"mesh":0,"skin":0}}],"skins":[{{"joints":[0,1]}}],
            "meshes":[{{"primitives":[{{"attributes":{{"POSITION":0,"JOINTS_0":1,"WEIGHTS_0":2}}}},{{"attributes":{{"POSITION":{second},"JOINTS_0":1,"WEIGHTS_0":2}}}}]}}],
            "accessors":[{{"componentType":5126,"count":1000,"type":"VEC3"}},{{"componentType":5121,"count":1000,"type":"VEC4"}},{{"componentType":5126,"count":1000,"type":"VEC4"}},{{"componentType":5126,"count":1000,"type":"VEC3"}}]}}"#
        )
    };
    let used = |json: String| {
        let budget = Budget::unlimited();
        let opts = ReadOptions { budget: Some(budget.clone()), ..Default::default() };
        let doc = GltfFormat.read(Input { path: None, bytes: json.as_bytes() }, &opts, &mut Diagnostics::default()).unwrap();
        assert_eq!(doc.meshes[0].positions.len(), 2000);
        budget.used()
    };
    let (shared, separate) = (used(make(true)), used(make(false)));
    assert_eq!(separate - shared, 1000 * 3 * 8, "one VEC3 accessor of 1000 less decoded");
}

fn read_bytes_budgeted(bytes: &[u8]) -> (Result<Document, String>, Budget) {
    let budget = Budget::for_input(bytes.len() as u64);
    let opts = ReadOptions { budget: Some(budget.clone()), ..Default::default() };
    let r = GltfFormat.read(Input { path: None, bytes }, &opts, &mut Diagnostics::default()).map_err(|e| e.to_string());
    (r, budget)
}

/// Issue 38: an empty node `{}` took about 600 bytes (206× the input) and nothing was charged
/// for it. The typed model is charged before it is built, so a file of two million empty nodes
/// stops at the budget, naming the JSON; a file as big with real nodes reads.
#[test]
fn nodes_are_charged_before_they_are_built() {
    let nodes = vec!["{}"; 2_000_000].join(",");
    let bomb = format!(r#"{{"asset":{{"version":"2.0"}},"nodes":[{nodes}]}}"#);
    let (r, budget) = read_bytes_budgeted(bomb.as_bytes());
    let e = r.unwrap_err();
    assert!(e.contains("the JSON (the objects read from it): decode budget exceeded"), "{e}");
    assert_eq!(budget.used(), 0, "refused before anything was taken");
    // The same shape at a size real files have is read, and what it charged is counted.
    let nodes = vec![r#"{"name":"b","translation":[0,0.1,0]}"#; 1000].join(",");
    let small = format!(r#"{{"asset":{{"version":"2.0"}},"nodes":[{nodes}]}}"#);
    let (r, budget) = read_bytes_budgeted(small.as_bytes());
    r.unwrap();
    assert!(budget.used() > 1000 * 384, "{}", budget.used());
}

/// `n` nodes named alike, children of one root, all joints of one skin.
fn same_names(n: usize) -> Vec<u8> {
    let kids: Vec<String> = (1..=n).map(|k| k.to_string()).collect();
    let joints: Vec<String> = (0..=n).map(|k| k.to_string()).collect();
    let nodes = std::iter::once(format!(r#"{{"name":"root","children":[{}]}}"#, kids.join(",")))
        .chain((0..n).map(|_| r#"{"name":"j"}"#.to_string()))
        .collect::<Vec<_>>()
        .join(",");
    format!(r#"{{"asset":{{"version":"2.0"}},"nodes":[{nodes}],"skins":[{{"joints":[{}]}}]}}"#, joints.join(",")).into_bytes()
}

/// Issue 38: renaming repeated node names tried `.001`, `.002`, … from the start for each
/// (40,000 alike took over a minute). The work counted for twice the nodes is about twice,
/// not four times; and the names are still unique.
#[test]
fn repeated_names_take_linear_work() {
    let work = |n: usize| {
        let before = skelport_ir::names::work();
        let doc =
            GltfFormat.read(Input { path: None, bytes: &same_names(n) }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
        let names: std::collections::HashSet<&str> = doc.skeletons[0].bones.iter().map(|b| b.name.as_str()).collect();
        assert_eq!(names.len(), n + 1);
        assert!(names.contains("j.001") && names.contains(format!("j.{:03}", n - 1).as_str()));
        skelport_ir::names::work() - before
    };
    let (one, two) = (work(2000), work(4000));
    assert!(two <= 2 * one + 100, "{one} then {two}");
    assert!(one >= 2000, "work was counted: {one}");
}

/// Issue 38: each skin re-read the extras of every joint of the skeleton it shares, and looked
/// at every node for its meshes. A thousand skins over one skeleton whose nodes carry extras
/// read, sharing one skeleton, with work in proportion to the skins.
#[test]
fn many_skins_over_one_skeleton_take_linear_work() {
    let file = |skins: usize| {
        let extras = format!(r#"{{"pad":"{}"}}"#, "x".repeat(10_000));
        let nodes = format!(
            r#"{{"name":"root","children":[1,2],"extras":{extras}}},{{"name":"a","extras":{extras}}},{{"name":"b","extras":{extras}}}"#
        );
        let skin = r#"{"joints":[0,1,2]}"#;
        format!(r#"{{"asset":{{"version":"2.0"}},"nodes":[{nodes}],"skins":[{}]}}"#, vec![skin; skins].join(","))
    };
    let work = |skins: usize| {
        let before = skelport_ir::names::work();
        let doc = GltfFormat
            .read(Input { path: None, bytes: file(skins).as_bytes() }, &ReadOptions::default(), &mut Diagnostics::default())
            .unwrap();
        assert_eq!((doc.skeletons.len(), doc.skins.len()), (1, skins));
        skelport_ir::names::work() - before
    };
    let (one, two) = (work(500), work(1000));
    assert!(two <= 2 * one + 100, "{one} then {two}");
}

/// Issue 38: `padded.gltf` (extras padded with millions of `{"":0}` under a key of their own)
/// was read into a value tree to find skelport's key, uncharged: 1.8 GB for 28 MB. Other
/// members are skipped without being built; skelport's own member is charged before it is
/// parsed, and past the budget the read stops naming the extras.
#[test]
fn extras_are_skipped_or_charged_never_built_uncharged() {
    let pad = vec![r#"{"":0}"#; 200_000].join(",");
    let file = |extras: &str| {
        format!(
            r#"{{"asset":{{"version":"2.0"}},"nodes":[{{"name":"armature","children":[1],"extras":{extras}}},{{"name":"a","extras":{extras}}}],"skins":[{{"joints":[1]}}]}}"#
        )
    };
    // Under a key of their own: skipped, so the read costs about what the same file without them does.
    let padded = file(&format!(r#"{{"padding":[{pad}]}}"#));
    let (r, budget) = read_bytes_budgeted(padded.as_bytes());
    r.unwrap();
    let plain = file("{}");
    let (r, plain_budget) = read_bytes_budgeted(plain.as_bytes());
    r.unwrap();
    // The typed model's charge (4 × the text) is all the padding costs.
    assert!(
        budget.used() - plain_budget.used() <= 5 * (padded.len() - plain.len()) as u64,
        "{} against {}",
        budget.used(),
        plain_budget.used()
    );
    // Under skelport's key they are kept (bone ext), so charged as a tree: over the floor here.
    let own = file(&format!(r#"{{"{}":{{"ext":{{"x":[{pad}]}}}}}}"#, skelport_gltf::EXTRAS_KEY));
    let budget = Budget::with_limit(64 << 20);
    let opts = ReadOptions { budget: Some(budget), ..Default::default() };
    let e = GltfFormat.read(Input { path: None, bytes: own.as_bytes() }, &opts, &mut Diagnostics::default()).unwrap_err().to_string();
    assert!(e.contains("/extras") && e.contains("decode budget exceeded"), "{e}");
}
