//! The folder fuzz targets read their input from a folder laid out with side files, links, a
//! FIFO and a directory (skelport::fuzzing::read_in_folder): the seeds under testdata/untrusted
//! read there, and each URI case gets the answer skelport_ir::files gives.

use skelport::fuzzing::{folder_targets, SIDE_FILE_SEPARATOR};

fn read_in_folder(format: &str, data: &[u8]) -> Option<Result<skelport::Document, String>> {
    skelport::fuzzing::read_in_folder(skelport::format(format).unwrap(), data)
}

/// The formats whose files name side files have folder targets (the three seeded below among
/// them), and each runs on trivial input. (Called from the one test: the targets share one
/// folder per process, so they must not run on two threads at once.)
fn folder_targets_come_from_the_registry() {
    let names: Vec<&str> = folder_targets().iter().map(|t| t.name.as_str()).collect();
    for want in ["gltf_dir", "g4tf_dir", "g4b_dir"] {
        assert!(names.contains(&want), "{names:?}");
    }
    for t in folder_targets() {
        for input in [&b""[..], b"{", b"\xff"] {
            skelport::fuzzing::run_target(&t.name, input);
        }
    }
}

fn untrusted(rel: &str) -> Vec<u8> {
    std::fs::read(skelport_ir::testing::workspace_root().join("testdata").join(rel)).unwrap()
}

#[test]
fn seeds_read_in_the_folder_and_every_uri_case_is_answered() {
    folder_targets_come_from_the_registry();
    let cases = [
        ("gltf", untrusted("demo/sample.gltf"), "\"uri\": \"sample.bin\""),
        ("g4tf", untrusted("untrusted/g4mf/external-buffer.g4tf"), "\"uri\": \"sample.bin\""),
        ("g4b", untrusted("untrusted/g4mf/external-buffer.g4b"), "\"uri\":\"sample.bin\""),
    ];
    for (fmt, seed, uri) in &cases {
        let doc = read_in_folder(fmt, seed).unwrap().unwrap_or_else(|e| panic!("{fmt}: {e}"));
        assert_eq!(doc.skins.len(), 1, "{fmt}");
        let text = String::from_utf8_lossy(seed).into_owned();
        assert!(text.contains(uri), "{fmt}: the seed names sample.bin");
        for (to, want) in [
            ("sub/sample.bin", None),
            ("inside.bin", None),
            ("link.bin", Some("is not a file in the input's folder")),
            ("../secret.bin", Some("leads outside")),
            ("../trap.bin", Some("leads outside")),
            ("pipe.bin", Some("is not a regular file")),
            ("dir.bin", Some("is not a regular file")),
        ] {
            let edited = text.replace(uri, &uri.replace("sample.bin", to));
            // A .g4b's JSON chunk length is in its header: only same-length edits keep it whole.
            if *fmt == "g4b" && edited.len() != text.len() {
                continue;
            }
            let mut bytes = seed.clone();
            if *fmt == "g4b" {
                let at = seed.windows(uri.len()).position(|w| w == uri.as_bytes()).unwrap();
                let new = uri.replace("sample.bin", to);
                bytes[at..at + new.len()].copy_from_slice(new.as_bytes());
            } else {
                bytes = edited.into_bytes();
            }
            match (read_in_folder(fmt, &bytes).unwrap(), want) {
                (Ok(_), None) => {}
                (Err(e), Some(w)) => assert!(e.contains(w), "{fmt} {to}: {e}"),
                (r, w) => panic!("{fmt} {to}: {:?} (wanted {w:?})", r.map(|_| "read")),
            }
        }
    }
    // A side file carried in the input replaces the demo buffer: a short one is refused.
    let mut short = untrusted("demo/sample.gltf");
    short.extend_from_slice(SIDE_FILE_SEPARATOR);
    short.extend_from_slice(b"tiny");
    assert!(read_in_folder("gltf", &short).unwrap().unwrap_err().contains("only 4 bytes are present"));
}
