//! Reading and writing Fox.glb (placeholder until filled in).
fn main() {}
