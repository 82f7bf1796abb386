//! A 65,535-deep chain of bones (the most any format here allows) through the IR validator and
//! every writer and reader, by registry name: nothing may recurse over the hierarchy, so nothing
//! may overflow the stack. Formats that cannot hold that many bones must refuse with a message.

use skelport_ir::{Bone, BoneId, DVec3, Diagnostics, Document, Frame, Input, ReadOptions, Skeleton, Transform, WriteOptions};

const N: usize = 65_535;

fn chain() -> Document {
    let mut sk = Skeleton::new("chain");
    for i in 0..N {
        let parent = i.checked_sub(1).map(|p| BoneId::from_index(p));
        sk.push(Bone::new(format!("b{i}"), parent, Transform::from_rt(skelport_ir::DQuat::IDENTITY, DVec3::new(0.0, 0.001, 0.0))));
    }
    let mut d = Document::new(Frame::GLTF);
    d.skeletons.push(sk);
    d
}

#[test]
fn a_65535_deep_chain_survives_the_validator_and_every_writer() {
    let doc = chain();
    assert!(skelport_ir::validate::validate(&doc).is_empty());
    let world = doc.skeletons[0].world_matrices();
    assert!((world[N - 1].w_axis.y - 0.001 * N as f64).abs() < 1e-6);
    // Formats whose bone limit (`Format::holds`) allows the chain must hold it; the others must
    // refuse with a message, not crash.
    let must = |f: &dyn skelport::Format| {
        let h = f.holds();
        h.any_skeleton && !h.humanoid_only && h.max_bones.is_none_or(|m| m >= N)
    };
    for f in skelport::formats().iter().filter(|f| f.can_write()) {
        let opts = WriteOptions { file_stem: "chain".into(), embed: true, ..Default::default() };
        let out = match f.write(&doc, &opts, &mut Diagnostics::default()) {
            Ok(o) => o,
            Err(e) => {
                assert!(!must(*f), "{} refused a 65,535-bone chain: {e}", f.name());
                eprintln!("{}: refused: {e}", f.name());
                continue;
            }
        };
        match f.read(Input { path: None, bytes: &out.main }, &ReadOptions::default(), &mut Diagnostics::default()) {
            Ok(back) => {
                let n = back.skeletons.iter().map(|s| s.bones.len()).max().unwrap_or(0);
                assert!(n >= N, "{} kept {n} of {N} bones", f.name());
                assert!(skelport_ir::validate::validate(&back).is_empty(), "{} read back an invalid chain", f.name());
                eprintln!("{}: {} bytes, {n} bones back", f.name(), out.main.len());
            }
            Err(e) => {
                assert!(!must(*f), "{} could not read its own 65,535-bone chain: {e}", f.name());
                eprintln!("{}: wrote but cannot read back: {e}", f.name());
            }
        }
    }
}
