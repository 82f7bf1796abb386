//! Second Life (issue 23): what skelport writes is what the viewer's importer reads, and Linden's
//! own files pass `validate --target sl`.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn skelport(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_skelport")).args(args).output().expect("run skelport")
}

fn text(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn linden(name: &str) -> Option<PathBuf> {
    Some(skelport_ir::testing::corpus_root()?.join("sl/linden-lab").join(name))
}

fn joints(p: &Path) -> Vec<(String, skelport_ir::DVec3)> {
    let d = skelport::open(p, &skelport::OpenOptions::default()).unwrap().doc;
    d.skeletons[0].bones.iter().map(|b| (b.name.clone(), b.rest.translation)).collect()
}

/// `.dae → .dae` of an SL file keeps every joint where it was (1e-6 m), with and without the
/// old `--joint-positions` switch (the default now).
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn little_bear_dae_to_dae_keeps_every_joint() {
    let Some(src) = linden("Little_Bear_90.dae") else { return };
    let dir = tempfile::tempdir().unwrap();
    let before = joints(&src);
    for extra in [&[][..], &["--joint-positions"][..]] {
        let out = dir.path().join("bear.dae");
        let mut args = vec!["convert", src.to_str().unwrap(), "-o", out.to_str().unwrap()];
        args.extend(extra);
        let c = skelport(&args);
        assert!(c.status.success(), "{}", text(&c));
        assert!(!text(&c).contains("loss:"), "{extra:?}: {}", text(&c));
        let after = joints(&out);
        assert_eq!(before.len(), after.len());
        for ((a, p), (b, q)) in before.iter().zip(&after) {
            assert_eq!(a, b);
            assert!((*p - *q).length() < 1e-6, "{extra:?}: {a} {p} → {q}");
        }
    }
}

/// Linden Lab's own files pass `validate --target sl` (exit 0): what the importer degrades
/// (more than 4 influences on Skeleton.Male.dae, a rotated bind shape, weights below 0.001) is a
/// warning, as the importer does not refuse it.
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn linden_files_pass_validate_target_sl() {
    for f in ["female_2016_08_05.dae", "Skeleton.Male.dae", "Little_Bear_90.dae"] {
        let Some(p) = linden(f) else { return };
        let v = skelport(&["validate", p.to_str().unwrap(), "--target", "sl", "--json"]);
        assert_eq!(v.status.code(), Some(0), "{f}: {}", text(&v));
        let r: serde_json::Value = serde_json::from_slice(&v.stdout).unwrap();
        assert_eq!(r["valid"], true, "{f}");
        if f == "Skeleton.Male.dae" {
            let w = r["warnings"].as_array().unwrap();
            assert!(w.iter().any(|w| w.as_str().unwrap().contains("[TooManyInfluences]")), "{w:?}");
        }
    }
}

/// Each warning names the file once, also one about the file as a whole (Linden's
/// Skeleton.Male.dae is Y-up: `[UpAxis]`, whose place is the file itself).
#[test]
#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]
fn validate_target_sl_names_the_file_once_per_warning() {
    let Some(p) = linden("Skeleton.Male.dae") else { return };
    let shown = p.to_str().unwrap();
    let v = skelport(&["validate", shown, "--target", "sl"]);
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
    let t = text(&v);
    let up = t.lines().find(|l| l.contains("[UpAxis]")).unwrap_or_else(|| panic!("no [UpAxis] warning: {t}"));
    assert!(up.starts_with(&format!("warning: {shown}: [UpAxis] not Z_UP")), "{up}");
    for line in t.lines().filter(|l| l.starts_with("warning: ")) {
        assert_eq!(line.matches("Skeleton.Male.dae").count(), 1, "{line}");
    }
}

/// `validate --target sl` and `convert` agree on a rig with no skin: what the converter writes
/// as generic Collada (`dae-not-sl`) is no SL rig to the validator ([NotSlRig], exit 1), and the
/// same rig renamed by `--map humanoid` is one to both.
#[test]
fn an_unskinned_rig_the_converter_calls_generic_is_no_sl_rig_to_validate() {
    let dir = tempfile::tempdir().unwrap();
    let biped = concat!(env!("CARGO_MANIFEST_DIR"), "/../../testdata/anvil/biped.standard.xml");
    let generic = dir.path().join("biped.dae");
    let c = skelport(&["convert", biped, "-o", generic.to_str().unwrap()]);
    assert!(c.status.success() && text(&c).contains("joint names are not SL joint names"), "{}", text(&c));
    let v = skelport(&["validate", generic.to_str().unwrap(), "--target", "sl"]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(text(&v).contains("biped.dae: [NotSlRig] joint names are not SL joint names (e.g. Reference, Hips"), "{}", text(&v));
    // The source itself, checked as the .dae skelport would write of it: the same.
    let v = skelport(&["validate", biped, "--target", "sl"]);
    assert_eq!(v.status.code(), Some(1), "{}", text(&v));
    assert!(text(&v).contains("[NotSlRig]"), "{}", text(&v));

    let sl = dir.path().join("biped_sl.dae");
    let c = skelport(&["convert", biped, "--map", "humanoid", "-o", sl.to_str().unwrap()]);
    assert!(c.status.success() && !text(&c).contains("not SL joint names"), "{}", text(&c));
    let v = skelport(&["validate", sl.to_str().unwrap(), "--target", "sl"]);
    assert_eq!(v.status.code(), Some(0), "{}", text(&v));
}

/// A `.zae` (zipped Collada: assimp's human.zae is one; the corpus keeps only its extracted
/// .dae, so the archive is made here from a .dae skelport writes) is recognised by its content,
/// converts like the .dae it holds, and `validate --target sl` checks that .dae.
#[test]
fn a_zae_converts_like_its_dae() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let s = |p: &Path| p.to_str().unwrap().to_string();
    let demo = skelport(&["demo", &s(d)]);
    assert!(demo.status.success(), "{}", text(&demo));
    let dae = std::fs::read(d.join("sample.dae")).unwrap();
    let mut w = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let opts = zip::write::SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    w.start_file("manifest.xml", opts).unwrap();
    w.write_all(b"<dae_root>./sample.dae</dae_root>").unwrap();
    w.start_file("sample.dae", opts).unwrap();
    w.write_all(&dae).unwrap();
    std::fs::write(d.join("sample.zae"), w.finish().unwrap().into_inner()).unwrap();
    for (input, out) in [("sample.dae", "from-dae.glb"), ("sample.zae", "from-zae.glb")] {
        let c = skelport(&["convert", &s(&d.join(input)), "-o", &s(&d.join(out))]);
        assert!(c.status.success(), "{input}: {}", text(&c));
    }
    assert!(std::fs::read(d.join("from-dae.glb")).unwrap() == std::fs::read(d.join("from-zae.glb")).unwrap());
    let v = skelport(&["validate", &s(&d.join("sample.zae")), "--target", "sl"]);
    // The demo's joints are not SL names: the validator reads the .dae inside and says so, once
    // for the archive, with the places in the member (`sample.dae:LINE:COL`).
    let t = text(&v);
    assert_eq!(v.status.code(), Some(1), "{t}");
    assert!(t.contains("sample.zae: [UnrecognizedJoint]") && t.contains("places: sample.dae:"), "{t}");
}
