//! Write the golden pictures to `testdata/` (what `cargo xtask regen-fixtures` does once wired):
//! `cargo run -p skelport-render --example regen_golden`.
#![allow(clippy::print_stdout, clippy::print_stderr)]
fn main() {
    let root = skelport_ir::testing::workspace_root().join("testdata");
    for (rel, bytes) in skelport_render::golden_fixtures() {
        let path = root.join(&rel);
        if let Some(d) = path.parent() {
            std::fs::create_dir_all(d).expect("create testdata dir");
        }
        std::fs::write(&path, bytes).expect("write golden file");
        println!("wrote {}", path.display());
    }
}
