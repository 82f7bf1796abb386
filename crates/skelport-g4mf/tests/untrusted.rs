//! Files made to attack the G4MF reader (issue 21): buffer URIs that lead out of the input's
//! folder or at things that are not files; mesh instances and Zstd chunks that ask for memory
//! out of proportion to the file. Everything is generated here: links and FIFOs cannot be kept
//! in git, and the bombs are built from the demo file in a few lines.

use skelport_g4mf::{container, G4bFormat, G4tfFormat};
use skelport_ir::{Budget, Diagnostics, Document, Format, Input, ReadOptions};
use std::path::{Path, PathBuf};

fn demo(name: &str) -> Vec<u8> {
    std::fs::read(skelport_ir::testing::workspace_root().join("testdata/demo").join(name)).unwrap()
}

fn read_path(path: &Path, opts: &ReadOptions) -> Result<Document, String> {
    let bytes = std::fs::read(path).unwrap();
    G4tfFormat.read(Input { path: Some(path), bytes: &bytes }, opts, &mut Diagnostics::default()).map_err(|e| e.to_string())
}

/// `tmp/in/model.g4tf` whose buffer is the file `uri`, with the demo's buffer bytes as
/// `tmp/secret.bin` (outside `in/`) and `tmp/in/data.bin`.
fn layout(tmp: &Path, uri: &str) -> PathBuf {
    use base64::Engine as _;
    let mut v: serde_json::Value = serde_json::from_slice(&demo("sample.g4tf")).unwrap();
    let data = v["buffers"][0]["uri"].as_str().unwrap().split_once(";base64,").unwrap().1.to_string();
    let bin = base64::engine::general_purpose::STANDARD.decode(data).unwrap();
    std::fs::create_dir_all(tmp.join("in")).unwrap();
    std::fs::write(tmp.join("secret.bin"), &bin).unwrap();
    std::fs::write(tmp.join("in/data.bin"), &bin).unwrap();
    v["buffers"][0]["uri"] = uri.into();
    let model = tmp.join("in/model.g4tf");
    std::fs::write(&model, serde_json::to_vec(&v).unwrap()).unwrap();
    model
}

#[test]
fn a_buffer_file_inside_the_folder_reads() {
    let t = tempfile::tempdir().unwrap();
    let doc = read_path(&layout(t.path(), "data.bin"), &ReadOptions::default()).unwrap();
    assert_eq!(doc.skins.len(), 1);
}

#[test]
fn uris_leading_out_of_the_folder_are_refused() {
    let t = tempfile::tempdir().unwrap();
    let secret = t.path().join("secret.bin").display().to_string();
    for (uri, want) in [
        ("../secret.bin", "leads outside the input's folder"),
        ("%2e%2e/secret.bin", "leads outside the input's folder"),
        ("../../../../../../../../../../etc/passwd", "leads outside the input's folder"),
        ("/etc/passwd", "is an absolute path"),
        (secret.as_str(), "is an absolute path"),
        ("file:///etc/passwd", "does not fetch URIs"),
    ] {
        let e = read_path(&layout(t.path(), uri), &ReadOptions::default()).unwrap_err();
        assert!(e.contains("buffers[0].uri") && e.contains(want), "{uri}: {e}");
        assert!(!e.contains("bytes but only") && !e.contains("No such file"), "{uri}: {e}");
    }
    let opts = ReadOptions { allow_outside_uris: true, ..Default::default() };
    assert!(read_path(&layout(t.path(), "../secret.bin"), &opts).is_ok());
}

#[cfg(unix)]
#[test]
fn links_out_fifos_and_directories_are_refused() {
    let t = tempfile::tempdir().unwrap();
    layout(t.path(), "x");
    std::os::unix::fs::symlink(t.path().join("secret.bin"), t.path().join("in/link.bin")).unwrap();
    let shown = |uri: &str| read_path(&layout(t.path(), uri), &ReadOptions::default()).unwrap_err().replace(uri, "URI");
    assert_eq!(shown("link.bin"), shown("missing.bin"));
    assert!(shown("missing.bin").contains("is not a file in the input's folder"));
    std::fs::create_dir(t.path().join("in/dir.bin")).unwrap();
    assert!(shown("dir.bin").contains("is not a regular file"));
    let fifo = t.path().join("in/pipe.bin");
    let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { mkfifo(c.as_ptr(), 0o600) }, 0);
    // On another thread: before the fix the read waited for a writer forever.
    let model = layout(t.path(), "pipe.bin");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(read_path(&model, &ReadOptions::default())).ok());
    let e = rx.recv_timeout(std::time::Duration::from_secs(60)).expect("the read hung on a FIFO").unwrap_err();
    assert!(e.contains("is not a regular file"), "{e}");
}

#[cfg(unix)]
extern "C" {
    fn mkfifo(path: *const std::ffi::c_char, mode: u32) -> i32;
}

/// A `.g4tf` of the synthetic MakeHuman-sized body with its mesh instanced `n` times under the
/// skeleton.
fn instanced(n: usize) -> Vec<u8> {
    let doc = skelport_ir::testing::synthetic_body(skelport_ir::Frame::GLTF, 163, 124, 154);
    let out = G4tfFormat.write(&doc, &Default::default(), &mut Diagnostics::default()).unwrap();
    let mut v: serde_json::Value = serde_json::from_slice(&out.main).unwrap();
    let nodes = v["nodes"].as_array_mut().unwrap();
    let skeleton = nodes.iter().position(|n| n.get("skeleton").is_some()).unwrap();
    let instance = nodes.iter().position(|n| n.get("meshInstance").is_some()).unwrap();
    let template = nodes[instance].clone();
    for k in 1..n {
        let mut node = template.clone();
        node["name"] = format!("copy{k}").into();
        let at = nodes.len();
        nodes.push(node);
        nodes[skeleton]["children"].as_array_mut().unwrap().push(at.into());
    }
    serde_json::to_vec(&v).unwrap()
}

/// With `SKELPORT_DUMP_UNTRUSTED=<dir>`, the generated bombs are written there too, to try them
/// on other builds (the figures "before" in this file were taken so).
fn dump(name: &str, bytes: &[u8]) {
    if let Some(d) = std::env::var_os("SKELPORT_DUMP_UNTRUSTED") {
        std::fs::write(Path::new(&d).join(name), bytes).unwrap();
    }
}

fn read_budgeted(f: &dyn Format, bytes: &[u8]) -> (Result<Document, String>, Budget) {
    let budget = Budget::for_input(bytes.len() as u64);
    let opts = ReadOptions { budget: Some(budget.clone()), ..Default::default() };
    let r = f.read(Input { path: None, bytes }, &opts, &mut Diagnostics::default()).map_err(|e| e.to_string());
    (r, budget)
}

/// A hundred instances of one mesh (the issue's 1.4 MB file took 583 MB): each instance is a copy
/// in the IR, charged before it is made, so the read stops at the budget. The accessors
/// themselves are decoded once.
#[test]
fn mesh_instances_stop_at_the_budget_and_share_one_decode() {
    let bytes = instanced(100);
    dump("instances-100.g4tf", &bytes);
    let (r, budget) = read_budgeted(&G4tfFormat, &bytes);
    let e = r.unwrap_err();
    assert!(e.contains("decode budget exceeded") && e.contains("meshes[0]"), "{e}");
    assert!(budget.used() <= budget.limit() && budget.limit() == 64 * bytes.len() as u64, "{} of {}", budget.used(), budget.limit());
    // Two instances cost less than twice one: the second decodes nothing.
    let used = |n: usize| {
        let (r, b) = read_budgeted(&G4tfFormat, &instanced(n));
        assert_eq!(r.unwrap().meshes.len(), n);
        b.used()
    };
    let (one, two) = (used(1), used(2));
    assert!(two < 2 * one, "one instance {one}, two {two}");
}

/// A `.g4b` container from raw chunks (kind, encoding, bytes as stored).
fn container(chunks: &[([u8; 4], [u8; 4], Vec<u8>)]) -> Vec<u8> {
    let mut out = vec![0u8; 16];
    out[..4].copy_from_slice(b"G4MF");
    for (i, (kind, enc, data)) in chunks.iter().enumerate() {
        out.extend_from_slice(kind);
        out.extend_from_slice(enc);
        out.extend_from_slice(&(data.len() as u64).to_le_bytes());
        out.extend_from_slice(data);
        if i + 1 < chunks.len() {
            out.resize(out.len().div_ceil(16) * 16, if *kind == container::JSON { b' ' } else { 0 });
        }
    }
    let n = out.len() as u64;
    out[8..16].copy_from_slice(&n.to_le_bytes());
    out
}

/// A Zstd frame of `size` zero bytes, compressed as it streams (never held whole), with the
/// size in its header or without.
fn zeros_frame(size: u64, declared: bool) -> Vec<u8> {
    use std::io::Write;
    let mut enc = zstd::stream::write::Encoder::new(Vec::new(), 1).unwrap();
    enc.include_contentsize(declared).unwrap();
    if declared {
        enc.set_pledged_src_size(Some(size)).unwrap();
    }
    let block = vec![0u8; 1 << 20];
    let mut left = size;
    while left > 0 {
        let n = left.min(block.len() as u64) as usize;
        enc.write_all(&block[..n]).unwrap();
        left -= n as u64;
    }
    enc.finish().unwrap()
}

/// The demo `.g4b` with `extra` chunks appended and, when `point` is set, its buffer 0 moved to
/// chunk `point`.
fn g4b_with(extra: &[([u8; 4], [u8; 4], Vec<u8>)], point: Option<(usize, &str)>) -> Vec<u8> {
    let chunks = container::read(&demo("sample.g4b"), "demo").unwrap();
    let mut json: serde_json::Value = serde_json::from_slice(&chunks[0].data).unwrap();
    if let Some((k, enc)) = point {
        json["buffers"][0]["chunk"] = k.into();
        json["buffers"][0]["encoding"] = enc.into();
        if enc.is_empty() {
            json["buffers"][0].as_object_mut().unwrap().remove("encoding");
        }
    }
    let mut raw: Vec<([u8; 4], [u8; 4], Vec<u8>)> = vec![(container::JSON, container::PLAIN, serde_json::to_vec(&json).unwrap())];
    raw.extend(chunks[1..].iter().map(|c| (c.kind, c.encoding, c.data.clone())));
    raw.extend_from_slice(extra);
    container(&raw)
}

/// Four Zstd chunks of 1 GiB of zeros that no buffer refers to (the issue's 112 KB file that
/// took over 4 GiB): not decoded at all.
#[test]
fn zstd_chunks_no_buffer_refers_to_are_not_decoded() {
    let gib = zeros_frame(1 << 30, true);
    let bomb = g4b_with(&vec![(container::BLOB, container::ZSTD, gib); 4], None);
    assert!(bomb.len() < 200_000, "{}", bomb.len());
    dump("unreferenced-zstd-4gib.g4b", &bomb);
    let (r, budget) = read_budgeted(&G4bFormat, &bomb);
    assert_eq!(r.unwrap().skins.len(), 1);
    assert!(budget.used() < 1 << 20, "{} bytes charged", budget.used());
}

/// A buffer on a Zstd chunk of 1 GiB: refused from the frame's declared size before anything is
/// decoded; without a declared size, refused as the output grows, at the budget.
#[test]
fn a_zstd_chunk_past_the_budget_is_refused_before_it_is_decoded() {
    let declared = g4b_with(&[(container::BLOB, container::ZSTD, zeros_frame(1 << 30, true))], Some((2, "Zstd")));
    dump("referenced-zstd-1gib.g4b", &declared);
    let (r, budget) = read_budgeted(&G4bFormat, &declared);
    let e = r.unwrap_err();
    assert!(e.contains("chunk 2") && e.contains("decompression budget exceeded: it needs 1073741824 more bytes"), "{e}");
    assert!(budget.used() < 1 << 20, "{} bytes charged", budget.used());
    let undeclared = g4b_with(&[(container::BLOB, container::ZSTD, zeros_frame(256 << 20, false))], Some((2, "Zstd")));
    let (r, budget) = read_budgeted(&G4bFormat, &undeclared);
    let e = r.unwrap_err();
    assert!(e.contains("chunk 2") && e.contains("decompression budget exceeded"), "{e}");
    assert!(budget.used() <= budget.limit());
    // A chunk within the budget still reads, and one referred to twice is decoded once.
    let chunks = container::read(&demo("sample.g4b"), "demo").unwrap();
    let data = zstd::bulk::compress(&chunks[1].data, 3).unwrap();
    let ok = g4b_with(&[(container::BLOB, container::ZSTD, data)], Some((2, "Zstd")));
    let (r, _) = read_budgeted(&G4bFormat, &ok);
    assert_eq!(r.unwrap().skins.len(), 1);
}

/// `n` copies of `{"":0}` (7 bytes each, about 450 as a `serde_json::Value`) as JSON text.
fn empty_objects(n: usize) -> String {
    format!("[{}]", vec![r#"{"":0}"#; n].join(","))
}

/// The demo `.g4tf` with `pad` under an unknown top-level key.
fn g4tf_padded(pad: &str) -> Vec<u8> {
    let text = String::from_utf8(demo("sample.g4tf")).unwrap();
    let at = text.find('{').unwrap() + 1;
    format!("{}\"padding\":{pad},{}", &text[..at], &text[at..]).into_bytes()
}

/// A value tree is charged before it is built (issue 38): a `.g4b` whose JSON chunk is Zstd
/// (the issue's 11 KB file took 6.78 GB) and a `.g4tf` padded with small objects (129×) stop
/// at the budget, naming the JSON; the same files without the padding read.
#[test]
fn json_value_trees_are_charged_before_they_are_built() {
    let chunks = container::read(&demo("sample.g4b"), "demo").unwrap();
    let mut json: serde_json::Value = serde_json::from_slice(&chunks[0].data).unwrap();
    let pad: serde_json::Value = serde_json::from_str(&empty_objects(2_000_000)).unwrap();
    json["padding"] = pad;
    let text = serde_json::to_vec(&json).unwrap();
    let mut raw: Vec<([u8; 4], [u8; 4], Vec<u8>)> = vec![(container::JSON, container::ZSTD, zstd::bulk::compress(&text, 19).unwrap())];
    raw.extend(chunks[1..].iter().map(|c| (c.kind, c.encoding, c.data.clone())));
    let bomb = container(&raw);
    assert!(bomb.len() < 100_000, "{}", bomb.len());
    dump("zstd-json-tree.g4b", &bomb);
    let (r, budget) = read_budgeted(&G4bFormat, &bomb);
    let e = r.unwrap_err();
    assert!(e.contains("the JSON chunk (its value tree): decode budget exceeded"), "{e}");
    assert!(budget.used() <= budget.limit());

    let padded = g4tf_padded(&empty_objects(300_000));
    dump("padded-tree.g4tf", &padded);
    let (r, _) = read_budgeted(&G4tfFormat, &padded);
    let e = r.unwrap_err();
    assert!(e.contains("the JSON (its value tree): decode budget exceeded"), "{e}");
    let (r, _) = read_budgeted(&G4tfFormat, &g4tf_padded("0"));
    assert_eq!(r.unwrap().skins.len(), 1);
}
