//! The library as the CLI and the Python package use it: inputs in memory give what the same
//! files on disk give (mesh and weights included), errors carry a stable code, the file and the
//! diagnostics reported before them, and a conversion in memory is the bytes `save` writes.

use skelport::ir::{irjson, InMemoryFile};
use skelport::{ConvertOptions, ErrorCode, OpenOptions, Severity};
use std::path::Path;

fn ir(doc: &skelport::Document) -> Vec<u8> {
    irjson::to_vec(doc)
}

/// Read `rig` with `mesh` and `weights` by path, and all three from memory.
fn both_ways(rig: &Path, mesh: Option<&Path>, weights: Option<&Path>) -> (Vec<u8>, Vec<u8>) {
    let by_path = OpenOptions {
        from: None,
        reader: skelport::ir::ReadOptions {
            mesh: mesh.map(Path::to_path_buf),
            weights: weights.map(Path::to_path_buf),
            ..Default::default()
        },
    };
    let a = skelport::open(rig, &by_path).unwrap();
    let mem = |p: &Path| InMemoryFile::new(p.display().to_string(), std::fs::read(p).unwrap());
    let in_memory = OpenOptions {
        from: None,
        reader: skelport::ir::ReadOptions { mesh_data: mesh.map(mem), weights_data: weights.map(mem), ..Default::default() },
    };
    let b = skelport::from_bytes(&rig.display().to_string(), &std::fs::read(rig).unwrap(), &in_memory).unwrap();
    assert_eq!(a.format.name(), b.format.name());
    assert_eq!(a.diagnostics.items, b.diagnostics.items);
    (ir(&a.doc), ir(&b.doc))
}

#[test]
fn a_rig_with_its_weights_in_memory_reads_as_from_files() {
    let demo = skelport::ir::testing::workspace_root().join("testdata/demo");
    let (a, b) = both_ways(&demo.join("rig.sample.json"), None, Some(&demo.join("weights.sample.json")));
    assert!(a == b, "in memory differs from files");
    let skinned = skelport::from_bytes("rig.json", &std::fs::read(demo.join("rig.sample.json")).unwrap(), &OpenOptions::default()).unwrap();
    assert!(skinned.doc.skins.is_empty(), "no weights given, no skin");
}

#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn a_makehuman_rig_on_its_base_mesh_in_memory_reads_as_from_files() {
    let Some(c) = skelport::ir::testing::corpus_root() else { return };
    let rigs = c.join("mpfb/rigs/standard");
    let (a, b) =
        both_ways(&rigs.join("rig.game_engine.json"), Some(&c.join("mpfb/3dobjs/base.obj")), Some(&rigs.join("weights.game_engine.json")));
    assert!(a == b, "in memory differs from files");
}

#[test]
fn a_conversion_in_memory_is_what_save_writes() {
    let demo = skelport::ir::testing::workspace_root().join("testdata/demo");
    let loaded = skelport::open(demo.join("sample.glb"), &OpenOptions::default()).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.gltf");
    let opts = ConvertOptions::default().named_for(&out);
    let borrowed = skelport::convert(&loaded, skelport::format("gltf").unwrap(), &opts).unwrap();
    let owned = skelport::convert(loaded.clone(), skelport::format("gltf").unwrap(), &opts).unwrap();
    assert!(borrowed.output.main == owned.output.main && borrowed.output.side_files == owned.output.side_files);
    assert_eq!(borrowed.output.side_files[0].0, "x.bin");
    let written = borrowed.save(&out).unwrap();
    assert_eq!(written, vec![dir.path().join("x.bin"), out.clone()]);
    assert_eq!(std::fs::read(&out).unwrap(), borrowed.output.main);
    // The output path is given once: saved under another name, the .gltf would name x.bin beside
    // y.gltf. Refused, nothing written; an output without side files goes anywhere.
    let other = dir.path().join("y.gltf");
    let e = borrowed.save(&other).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Output);
    assert!(e.to_string().contains("written for the name 'x' (its side files: x.bin), not 'y'"), "{e}");
    assert!(!other.exists());
    let glb = skelport::convert(&loaded, skelport::format("glb").unwrap(), &ConvertOptions::default()).unwrap();
    assert_eq!(glb.file_stem, "sample");
    assert_eq!(glb.save(dir.path().join("z.glb")).unwrap(), vec![dir.path().join("z.glb")]);
    // Without a name the side files are named after the input.
    assert_eq!(
        skelport::convert(&loaded, skelport::format("gltf").unwrap(), &ConvertOptions::default()).unwrap().output.side_files[0].0,
        "sample.bin"
    );
}

#[test]
fn errors_carry_a_code_the_file_and_what_was_reported_before() {
    let e = skelport::format("fbxx").unwrap_err();
    assert_eq!(e.code(), ErrorCode::UnknownFormat);
    assert_eq!(e.code().as_str(), "format.unknown");
    let e = skelport::format_to_write("sl-skeleton").unwrap_err();
    assert_eq!(e.code(), ErrorCode::Unsupported);
    let e = skelport::from_bytes("broken.gltf", b"{\"asset\": {\"version\": \"2.0\"}, \"nodes\": [", &OpenOptions::default()).unwrap_err();
    assert_eq!((e.code(), e.file()), (ErrorCode::Read, Some("broken.gltf")));
    assert!(e.message().starts_with("broken.gltf:1:40: cannot read as gltf: "), "{e}");
    let e = skelport::from_bytes("noise.bin", b"\x00\x01", &OpenOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Undetected);
    // --strict: the losses that made it fail come with the error.
    let demo = skelport::ir::testing::workspace_root().join("testdata/demo");
    let loaded = skelport::open(demo.join("sample.glb"), &OpenOptions::default()).unwrap();
    let strict = ConvertOptions { strict: true, ..Default::default() };
    let e = skelport::convert(&loaded, skelport::format("anvil").unwrap(), &strict).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Strict);
    assert!(e.diagnostics().of(Severity::Loss).any(|d| d.code == "anvil.geometry"), "{:?}", e.diagnostics());
    // An unknown map: its code, and the reader's diagnostics kept.
    let e = skelport::convert(
        &loaded,
        skelport::format("glb").unwrap(),
        &ConvertOptions { map: Some("no-such-map".into()), ..Default::default() },
    )
    .unwrap_err();
    assert_eq!(e.code(), ErrorCode::Map);
    assert!(e.message().contains("no built-in map has that name"), "{e}");
}

#[test]
fn a_read_error_names_the_file_at_fault_and_the_place() {
    let demo = skelport::ir::testing::workspace_root().join("testdata/demo");
    let rig = std::fs::read(demo.join("rig.sample.json")).unwrap();
    // The input itself: the line and column the JSON parser gives.
    let e = skelport::from_bytes("rig.json", b"{\n  \"bones\": [\n", &OpenOptions::default()).unwrap_err();
    assert_eq!((e.file(), e.place().as_deref()), (Some("rig.json"), Some("line 3, column 0")), "{e}");
    assert_eq!(e.location(), Some(&skelport::ir::Place::text(3, 0)));
    assert_eq!(e.fault(), Some(skelport::ir::FaultKind::Syntax));
    // Its weights, given in memory: the weights file is at fault, not the rig.
    let reader = skelport::ir::ReadOptions {
        weights_data: Some(InMemoryFile::new("w.json", &b"{\"weights\": {\"pelvis\": 7}}"[..])),
        ..Default::default()
    };
    let e = skelport::from_bytes("rig.json", &rig, &OpenOptions { from: None, reader }).unwrap_err();
    assert_eq!((e.code(), e.file()), (ErrorCode::Read, Some("w.json")), "{e}");
    assert!(e.place().is_some_and(|p| p.starts_with("line 1, column ")), "{e}");
    assert!(e.message().starts_with("rig.json: cannot read as mpfb: w.json:1:"), "{e}");
    // A JSON path.
    let e = skelport::from_bytes("r.json", b"{\"bones\": {\"a\": 3}}", &OpenOptions { from: Some("mpfb".into()), ..Default::default() })
        .unwrap_err();
    assert_eq!(e.place().as_deref(), Some("$.bones.a"), "{e}");
    assert_eq!(e.fault(), Some(skelport::ir::FaultKind::Value));
    // A document that breaks the IR's rules: the first broken rule's place.
    let mut doc = skelport::open(demo.join("sample.ir.json"), &OpenOptions::default()).unwrap();
    doc.doc.skeletons[0].bones[1].name.clear();
    let e = skelport::convert(&doc, skelport::format("glb").unwrap(), &ConvertOptions::default()).unwrap_err();
    assert_eq!(e.code(), ErrorCode::Invalid);
    assert!(e.place().is_some_and(|p| p.starts_with("skeletons[0].bones[1]")), "{:?}", e.place());
}

#[test]
fn a_batch_refuses_inputs_whose_outputs_would_collide() {
    let inputs: Vec<std::path::PathBuf> = ["a/rig.json", "b/rig.glb", "c/other.xml"].iter().map(Into::into).collect();
    let plan = skelport::batch_outputs(&inputs, Path::new("out"), skelport::format("glb").unwrap(), &skelport::WriteOptions::default());
    assert_eq!((plan[2].main.as_path(), plan[2].conflict.as_deref()), (Path::new("out/other.glb"), None));
    for (k, other) in [(0, "b/rig.glb"), (1, "a/rig.json")] {
        let why = plan[k].conflict.as_deref().unwrap();
        assert!(why.contains("out/rig.glb") && why.contains(other), "{why}");
    }
}

/// A batch refuses an output that is one of its inputs, or a buffer an input names, and lets a
/// file rewrite itself (with its own buffer) in place; the real paths are found on every core.
#[test]
fn a_batch_refuses_outputs_over_its_inputs_and_their_buffers() {
    let demo = skelport::ir::testing::workspace_root().join("testdata/demo");
    let t = tempfile::tempdir().unwrap();
    let (inp, out) = (t.path().join("in"), t.path().join("out"));
    std::fs::create_dir_all(&inp).unwrap();
    std::fs::create_dir_all(&out).unwrap();
    // a.gltf reads its buffer from out/b.bin, which b.glb's conversion to .gltf would write.
    let gltf = std::fs::read_to_string(demo.join("sample.gltf")).unwrap().replace("\"sample.bin\"", "\"../out/b.bin\"");
    std::fs::write(inp.join("a.gltf"), gltf).unwrap();
    std::fs::copy(demo.join("sample.bin"), out.join("b.bin")).unwrap();
    std::fs::copy(demo.join("sample.glb"), inp.join("b.glb")).unwrap();
    // out/c.gltf would be rewritten by its own conversion: in place, with its own buffer.
    std::fs::copy(demo.join("sample.gltf"), out.join("c.gltf")).unwrap();
    std::fs::copy(demo.join("sample.bin"), out.join("sample.bin")).unwrap();
    // out/d.glb's output is out/d.gltf, the input e.gltf is in out/ too.
    std::fs::copy(demo.join("sample.glb"), inp.join("e.glb")).unwrap();
    std::fs::copy(demo.join("sample.gltf"), out.join("e.gltf")).unwrap();
    let inputs = [inp.join("a.gltf"), inp.join("b.glb"), out.join("c.gltf"), inp.join("e.glb"), out.join("e.gltf")];
    let plan = skelport::batch_outputs(&inputs, &out, skelport::format("gltf").unwrap(), &skelport::WriteOptions::default());
    let why: Vec<Option<&str>> = plan.iter().map(|p| p.conflict.as_deref()).collect();
    assert_eq!(why[0], None);
    assert!(why[1].is_some_and(|w| w.contains("b.bin") && w.contains("a.gltf") && w.contains("a buffer it names")), "{why:?}");
    assert_eq!(why[2], None, "a file rewriting itself in place");
    for k in [3, 4] {
        assert!(why[k].is_some_and(|w| w.contains("e.gltf")), "{why:?}");
    }
    assert!(why[3].is_some_and(|w| w.contains("would also be written") || w.contains("which it would overwrite")), "{why:?}");
    // Through a link: h.glb's output out/h.gltf is the file the input link.gltf is.
    #[cfg(unix)]
    {
        std::fs::copy(demo.join("sample.gltf"), out.join("h.gltf")).unwrap();
        std::os::unix::fs::symlink(out.join("h.gltf"), inp.join("link.gltf")).unwrap();
        std::fs::copy(demo.join("sample.bin"), inp.join("sample.bin")).unwrap();
        let inputs = [inp.join("link.gltf"), inp.join("h.glb")];
        let plan = skelport::batch_outputs(&inputs, &out, skelport::format("gltf").unwrap(), &skelport::WriteOptions::default());
        assert_eq!(plan[0].conflict, None);
        let why = plan[1].conflict.as_deref().unwrap_or_default();
        assert!(why.contains("is the input") && why.contains("link.gltf"), "{why}");
    }
}

/// `batch_outputs` knows every file a batch writes: for each writable format, the side files a
/// real conversion of the demo writes are among those it names, and two inputs whose side files
/// meet (`rig.x.glb` and `x.glb` to MPFB: `weights.x.json`) are both refused, naming each other.
#[test]
fn batch_outputs_names_every_side_file_a_conversion_writes() {
    let dir = std::path::Path::new("out");
    for &f in skelport::formats().iter().filter(|f| f.can_write()) {
        for stem in ["rig.x", "x", "my model#1"] {
            let input = std::path::PathBuf::from(format!("{stem}.glb"));
            let planned = skelport::batch_outputs(std::slice::from_ref(&input), dir, f, &skelport::WriteOptions::default());
            let loaded = skelport::Loaded::from_document(skelport::demo::sample(), input.display().to_string());
            let opts = skelport::ConvertOptions { ..Default::default() }.named_for(&planned[0].main);
            let Ok(converted) = skelport::convert(&loaded, f, &opts) else { continue };
            for (side, _) in &converted.output.side_files {
                assert!(planned[0].side_files.contains(&dir.join(side)), "{}: {side} not in {:?}", f.name(), planned[0].side_files);
            }
        }
    }
    let inputs = [std::path::PathBuf::from("a/rig.x.glb"), std::path::PathBuf::from("b/x.glb")];
    let planned = skelport::batch_outputs(&inputs, dir, skelport::format("mpfb").unwrap(), &skelport::WriteOptions::default());
    assert_ne!(planned[0].main, planned[1].main);
    for (k, p) in planned.iter().enumerate() {
        let c = p.conflict.as_deref().unwrap_or_else(|| panic!("{} not refused", inputs[k].display()));
        assert!(c.contains("weights.x.json") && c.contains(&inputs[1 - k].display().to_string()), "{c}");
    }
}

/// The advice of an error names the options of the interface in use: the command line's flags
/// (`Display`, `Front::Cli`), Python's keywords (`Front::Python`), never the other's.
#[test]
fn errors_give_their_advice_in_the_words_of_the_front_end() {
    use skelport::Front;
    let undetected = skelport::from_bytes("noise.bin", b"\x00\x01", &OpenOptions::default()).unwrap_err();
    assert!(undetected.to_string().contains("name it with --from ("), "{undetected}");
    let py = undetected.said(Front::Python);
    assert!(py.contains("name it with format= (") && !py.contains("--"), "{py}");
    // A weights file given as the rig: where it goes.
    let demo = skelport::ir::testing::workspace_root().join("testdata/demo");
    let weights = std::fs::read(demo.join("weights.sample.json")).unwrap();
    let kind = skelport::from_bytes("weights.sample.json", &weights, &OpenOptions::default()).unwrap_err();
    assert_eq!(kind.code(), ErrorCode::Kind);
    assert!(kind.to_string().contains("pass it with --weights"), "{kind}");
    let py = kind.said(Front::Python);
    assert!(py.contains("pass it with weights=") && !py.contains("--"), "{py}");
    // strict: the option named as Python spells it.
    let loaded = skelport::open(demo.join("sample.glb"), &OpenOptions::default()).unwrap();
    let strict =
        skelport::convert(&loaded, skelport::format("anvil").unwrap(), &ConvertOptions { strict: true, ..Default::default() }).unwrap_err();
    assert!(strict.to_string().contains(": --strict: "), "{strict}");
    let py = strict.said(Front::Python);
    assert!(py.contains(": strict=True: ") && !py.contains("--"), "{py}");
    assert_eq!(strict.words().options().collect::<Vec<_>>(), vec![skelport::Opt::Strict]);
}

/// A glTF index that names nothing: the file, the JSON pointer and the kind come as data, and the
/// hint is the one for references (not the one for any value).
#[test]
fn a_reader_error_keeps_its_kind_and_its_hint_follows_it() {
    let json = br#"{"asset": {"version": "2.0"}, "scene": 0, "scenes": [{"nodes": [5]}], "nodes": [{"name": "a"}]}"#;
    let e = skelport::from_bytes("r.gltf", json, &OpenOptions::default()).unwrap_err();
    assert_eq!(e.fault(), Some(skelport::ir::FaultKind::Reference), "{e}");
    assert_eq!(e.place().as_deref(), Some("/scenes/0/nodes/0"), "{e}");
    let hint = skelport::ir::FaultKind::Reference.hint().unwrap();
    assert_eq!(e.to_string(), format!("r.gltf: cannot read as gltf: /scenes/0/nodes/0: node 5 does not exist; {hint}"));
}

/// Names the user typed get the closest known one, and each list holds what the option takes:
/// `--to` no read-only format, `validate --target` the SL importer's rules too.
#[test]
fn mistyped_names_get_the_closest_known_one() {
    let e = skelport::format_to_write("glft").unwrap_err();
    assert!(e.to_string().starts_with("unknown format 'glft': did you mean 'gltf'? writable formats: "), "{e}");
    assert!(!e.to_string().contains("sl-skeleton"), "a read-only format offered for --to: {e}");
    let e = skelport::format_to_read("glft").unwrap_err();
    assert!(e.to_string().contains("readable formats: ") && e.to_string().contains("sl-skeleton"), "{e}");
    let e = skelport::format_to_write("fbxx").unwrap_err();
    assert!(e.to_string().starts_with("unknown format 'fbxx'; writable formats: "), "{e}");
    let demo = skelport::ir::testing::workspace_root().join("testdata/demo");
    let path = demo.join("sample.glb");
    let loaded = skelport::open(&path, &OpenOptions::default()).unwrap();
    let e = skelport::validate(&path, &loaded, Some("s1"), None).unwrap_err();
    assert!(e.to_string().starts_with("unknown target 's1': did you mean 'sl'? targets: sl (the Second Life importer's rules), "), "{e}");
    let e =
        skelport::convert(&loaded, skelport::format("glb").unwrap(), &ConvertOptions { map: Some("humanoi".into()), ..Default::default() })
            .unwrap_err();
    assert!(e.to_string().contains("(did you mean 'humanoid'?)"), "{e}");
}

/// A document read for AnvilToolkit's writer alone (`ExtensionUse::Owner`: its bones' values
/// deferred) that goes to another format after all is completed first: every format gets what
/// it gets from a full read, the AnvilToolkit data in glTF extras and IR JSON included.
#[test]
fn a_read_deferred_for_one_writer_converts_to_any_as_a_full_read_does() {
    let file = skelport::ir::testing::workspace_root().join("testdata/anvil/biped.standard.xml");
    let open = |use_| {
        let opts = OpenOptions { from: None, reader: skelport::ir::ReadOptions { extension_use: use_, ..Default::default() } };
        skelport::open(&file, &opts).unwrap()
    };
    let (full, lazy) = (open(skelport::ir::ExtensionUse::Everyone), open(skelport::ir::ExtensionUse::Owner("anvil")));
    assert!(lazy.format.deferred(&lazy.doc) && !full.format.deferred(&full.doc));
    let mut compared = 0;
    for to in skelport::formats().iter().filter(|f| f.can_write()) {
        let (a, b) = (skelport::convert(&full, *to, &ConvertOptions::default()), skelport::convert(&lazy, *to, &ConvertOptions::default()));
        match (a, b) {
            (Ok(a), Ok(b)) => {
                assert!(a.output.main == b.output.main, "{}: the main file differs", to.name());
                assert_eq!(a.output.side_files, b.output.side_files, "{}", to.name());
                compared += 1;
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{}", to.name()),
            (a, b) => panic!("{}: {:?} against {:?}", to.name(), a.err(), b.err()),
        }
    }
    assert!(compared >= 8, "{compared} formats written");
}

/// A writer given `main_in_pieces` (as `convert_file` gives it) makes the bytes it makes
/// without, and what is saved, in pieces or whole, is those bytes: for every writable format, from
/// the demo's GLB and Collada files and, with the corpus, the Linden body.
#[test]
fn a_main_file_left_in_pieces_is_saved_as_the_whole_file() {
    let demo = skelport::ir::testing::workspace_root().join("testdata/demo");
    let mut inputs = vec![demo.join("sample.glb"), demo.join("sample.dae")];
    inputs.extend(skelport::ir::testing::corpus_root().map(|c| c.join("sl/linden-lab/female_2016_08_05.dae")));
    let dir = tempfile::tempdir().unwrap();
    let (mut compared, mut in_pieces) = (0, 0);
    for input in &inputs {
        let loaded = skelport::open(input, &OpenOptions::default()).unwrap();
        for to in skelport::formats().iter().filter(|f| f.can_write()) {
            let out = dir.path().join(format!("out.{}", to.extensions()[0]));
            let whole = ConvertOptions::default().named_for(&out);
            let mut pieces = whole.clone();
            pieces.write.main_in_pieces = true;
            let (Ok(a), Ok(b)) = (skelport::convert(&loaded, *to, &whole), skelport::convert(&loaded, *to, &pieces)) else { continue };
            assert!(a.output.main_pieces.is_empty(), "{}: pieces not asked for", to.name());
            in_pieces += usize::from(!b.output.main_pieces.is_empty());
            assert_eq!(a.output.side_files, b.output.side_files, "{}", to.name());
            let want = a.output.main.clone();
            assert!(b.output.clone().into_main() == want, "{} from {}: the pieces differ", to.name(), input.display());
            b.save(&out).unwrap();
            assert!(std::fs::read(&out).unwrap() == want, "{} from {}: saved differs", to.name(), input.display());
            // What the command line's conversion writes.
            let o = skelport::convert_file(
                input,
                &out,
                |p| skelport::open(p, &OpenOptions::default()),
                Some(*to),
                &ConvertOptions::default(),
                || true,
            )
            .unwrap();
            o.result.unwrap();
            assert!(std::fs::read(&out).unwrap() == want, "{} from {}: convert_file wrote other bytes", to.name(), input.display());
            compared += 1;
        }
    }
    assert!(compared >= 16 && in_pieces >= 4, "{compared} outputs compared, {in_pieces} in pieces");
}
