// The build script of every package with tests that read the third-party corpus
// (`include!`d by their build.rs). It sets `cfg(corpus)` when those tests can run: the corpus
// is found where `skelport_ir::testing::corpus_root` looks ($SKELPORT_CORPUS, else
// `../shared/corpus` beside the workspace or one of its parents), or `CI` is set (then a
// missing corpus fails the tests instead of skipping them). Without it the tests are marked
// `#[cfg_attr(not(corpus), ignore = "needs ../shared/corpus")]`, so the test runner counts them
// as ignored instead of passing them having read nothing.

fn corpus_dir() -> Option<std::path::PathBuf> {
    if let Some(p) = std::env::var_os("SKELPORT_CORPUS") {
        let p = std::path::PathBuf::from(p);
        return p.is_dir().then_some(p);
    }
    let mut dir = Some(std::path::PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR")?));
    while let Some(d) = dir {
        let c = d.join("../shared/corpus");
        if c.is_dir() {
            return Some(c);
        }
        dir = d.parent().map(std::path::PathBuf::from);
    }
    None
}

fn main() {
    println!("cargo::rustc-check-cfg=cfg(corpus)");
    println!("cargo::rerun-if-env-changed=SKELPORT_CORPUS");
    println!("cargo::rerun-if-env-changed=CI");
    let found = corpus_dir();
    // Watched when present, so removing it rebuilds. A corpus added later is seen after a
    // change of $SKELPORT_CORPUS or `cargo clean -p <package>` (watching every folder it could
    // appear in would rescan the workspace's parent on every build).
    if let Some(c) = &found {
        println!("cargo::rerun-if-changed={}", c.display());
    }
    if found.is_some() || std::env::var_os("CI").is_some() {
        println!("cargo::rustc-cfg=corpus");
    }
}
