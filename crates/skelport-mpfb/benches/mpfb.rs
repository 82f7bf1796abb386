//! Read the default rig + base.obj and the game_engine rig + weights + base.obj, and write them
//! (as read, and stripped of strategies so the writer picks them on base.obj).
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_ir::{Diagnostics, Format, Input, ReadOptions, WriteOptions};
use skelport_mpfb::MpfbFormat;

fn bench(c: &mut Criterion) {
    let Some(root) = skelport_ir::testing::corpus_root() else { return };
    let rigs = root.join("mpfb/rigs/standard");
    for (rig, weights) in [("rig.default.json", None), ("rig.game_engine.json", Some("weights.game_engine.json"))] {
        let bytes = std::fs::read(rigs.join(rig)).unwrap();
        let opts =
            ReadOptions { mesh: Some(root.join("mpfb/3dobjs/base.obj")), weights: weights.map(|w| rigs.join(w)), ..Default::default() };
        let read = || MpfbFormat.read(Input { path: None, bytes: &bytes }, &opts, &mut Diagnostics::default()).unwrap();
        c.bench_function(&format!("mpfb read {rig} + weights + base.obj"), |b| b.iter(read));
        let doc = read();
        let w = WriteOptions { file_stem: rig.trim_end_matches(".json").into(), ..Default::default() };
        c.bench_function(&format!("mpfb write {rig}"), |b| b.iter(|| MpfbFormat.write(&doc, &w, &mut Diagnostics::default()).unwrap()));
        // The same bones with no strategies (as from another format): picked on base.obj.
        let mut bare = doc.clone();
        for b in &mut bare.skeletons[0].bones {
            b.anchors = None;
            b.ext = Default::default();
        }
        bare.skeletons[0].ext = Default::default();
        let wm = WriteOptions { mesh: opts.mesh.clone(), ..w.clone() };
        c.bench_function(&format!("mpfb write {rig} picking strategies on base.obj"), |b| {
            b.iter(|| MpfbFormat.write(&bare, &wm, &mut Diagnostics::default()).unwrap())
        });
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
