//! Property tests: random byte mutations of valid files never panic any reader, and everything
//! a reader accepts survives its own writer and reader (the fuzz targets' checks, run on stable).

use proptest::prelude::*;
use skelport_ir::{Diagnostics, Input, ReadOptions};

/// Valid seed files: every generated demo fixture whose format is registered.
fn seeds() -> Vec<(&'static dyn skelport_ir::Format, Vec<u8>)> {
    let dir = skelport_ir::testing::workspace_root().join("testdata/demo");
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.to_string_lossy().ends_with(".inspect.json") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap();
        if let Some(f) = skelport::registry::detect_reader(Some(&p), &bytes[..bytes.len().min(8192)]) {
            out.push((f, bytes));
        }
    }
    out.sort_by_key(|(f, _)| f.name());
    assert!(!out.is_empty());
    out
}

#[derive(Debug, Clone)]
enum Mutation {
    Flip(usize, u8),
    Truncate(usize),
    Insert(usize, u8),
    Delete(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Flip(i, b)),
        any::<usize>().prop_map(Mutation::Truncate),
        (any::<usize>(), any::<u8>()).prop_map(|(i, b)| Mutation::Insert(i, b)),
        (any::<usize>(), 1usize..64).prop_map(|(i, n)| Mutation::Delete(i, n)),
    ]
}

fn apply(mut bytes: Vec<u8>, muts: &[Mutation]) -> Vec<u8> {
    for m in muts {
        let n = bytes.len().max(1);
        match *m {
            Mutation::Flip(i, b) => {
                if !bytes.is_empty() {
                    bytes[i % n] ^= b | 1;
                }
            }
            Mutation::Truncate(i) => bytes.truncate(i % n),
            Mutation::Insert(i, b) => bytes.insert(i % (bytes.len() + 1), b),
            Mutation::Delete(i, k) => {
                let s = i % n;
                let e = (s + k).min(bytes.len());
                if s < e {
                    bytes.drain(s..e);
                }
            }
        }
    }
    bytes
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]
    #[test]
    fn mutated_files_never_panic(muts in proptest::collection::vec(mutation(), 1..8)) {
        for (f, seed) in seeds() {
            let bytes = apply(seed, &muts);
            let _ = f.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default());
            let mut sel = vec![skelport::registry::formats().iter().filter(|g| g.can_read()).position(|g| g.name() == f.name()).unwrap() as u8];
            sel.extend_from_slice(&bytes);
            skelport::fuzzing::roundtrip_selected(&sel);
        }
    }
}

/// Inputs that once crashed a fuzz target stay fixed: `crates/skelport-fuzz/regressions/<target>/`
/// holds inputs of that target (files directly in `regressions/` are `read_any` inputs, whose first
/// byte selects the format); each is replayed through its target and, where a writer exists, the
/// round trip.
#[test]
fn fuzz_regressions_stay_fixed() {
    let dir = skelport_ir::testing::workspace_root().join("crates/skelport-fuzz/regressions");
    let mut n = 0;
    let mut stack = vec![(dir, None::<String>)];
    while let Some((d, target)) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            if e.path().is_dir() {
                stack.push((e.path(), Some(name)));
                continue;
            }
            let bytes = std::fs::read(e.path()).unwrap();
            match target.as_deref() {
                None => {
                    skelport::fuzzing::read_selected(&bytes);
                    skelport::fuzzing::roundtrip_selected(&bytes);
                }
                Some(t) => skelport::fuzzing::run_target(t, &bytes),
            }
            n += 1;
        }
    }
    eprintln!("{n} fuzz regression inputs replayed");
    // A replay of nothing (the folder moved or emptied) would pass having checked nothing.
    assert!(n >= 1, "no fuzz regression input found under crates/skelport-fuzz/regressions");
}

/// Every per-reader fuzz target reaches a registered reader (a renamed format would otherwise
/// leave a target fuzzing nothing), and survives empty and one-byte inputs.
#[test]
fn every_fuzz_target_runs() {
    for (t, _, _) in skelport::fuzzing::targets() {
        for input in [&b""[..], b"{", b"<", b"\xff"] {
            skelport::fuzzing::run_target(t, input);
        }
    }
}

/// The formats with fuzz checks (`Format::fuzz_check`, reached through skelport's `fuzzing`
/// feature) compare their big-file paths with their one-thread paths on the demo as each writes
/// it: Collada its parse on the pool, byte scan and two-thread tree (at least 32 splits join),
/// AnvilToolkit's Standard form its UTF-16 decode and widening, both forms the streaming reader
/// against the tree reader (which it must read). A broken feature chain leaves 0.
#[test]
fn the_fuzz_checks_compare_something() {
    for (name, least) in [("dae", 34), ("anvil", 4), ("anvil-schema", 2)] {
        let f = skelport::format_to_write(name).unwrap();
        let file = f.write(&skelport::demo::sample(), &skelport_ir::WriteOptions::default(), &mut Diagnostics::default()).unwrap();
        let compared = f.fuzz_check(&file.main);
        assert!(compared >= least, "{name}: {compared} comparisons");
    }
    assert_eq!(skelport::fuzzing::write_checks(&skelport::fuzzing::two_mesh_demo()), 2);
}

/// Format detection sniffs every reader over arbitrary bytes (any file with an unclaimed
/// extension): it must not panic (skelport-anvil-lead's sniff did on this PNG).
#[test]
fn detection_never_panics_on_binary_files() {
    let png = skelport_ir::testing::workspace_root().join("testdata/render/biped_front.png");
    let bytes = std::fs::read(png).unwrap();
    let _ = skelport::registry::detect_reader(Some(std::path::Path::new("x.bin")), &bytes[..bytes.len().min(8192)]);
}
