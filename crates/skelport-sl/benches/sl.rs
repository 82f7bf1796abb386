//! The `dae` reader and writer on Linden Lab's Bento reference body (female_2016_08_05.dae,
//! 1.1 MB, 5 skins, 3,958 weighted vertices) and on that body repeated to 25 MB (read on every
//! core, as the CLI reads it); the `sl-skeleton` reader on the viewer's avatar_skeleton.xml; and
//! the tokenizer floors beside them (roxmltree's tree, quick-xml's events). All from the corpus.
//! Names: `<format> read|write <input>`, `<format> floor <tokenizer> <input>`.
#![allow(clippy::print_stdout, clippy::print_stderr)]
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_ir::{Diagnostics, Format, Input, ReadOptions, WriteOptions};
use skelport_sl::{DaeFormat, SlSkeletonFormat};
use std::time::Duration;

/// A bare quick-xml event pass: the reader's own tokenizer, and nothing else.
fn quick_xml_events(text: &str) -> usize {
    let mut r = quick_xml::Reader::from_str(text);
    let mut n = 0usize;
    while !matches!(r.read_event().unwrap(), quick_xml::events::Event::Eof) {
        n += 1;
    }
    n
}

fn read(f: &dyn Format, bytes: &[u8]) -> skelport_ir::Document {
    f.read(Input { path: None, bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap()
}

fn bench(c: &mut Criterion) {
    let Some(root) = skelport_ir::testing::corpus_root() else {
        eprintln!("corpus not found: SL benchmarks skipped");
        return;
    };
    let bytes = std::fs::read(root.join("sl/linden-lab/female_2016_08_05.dae")).expect("female_2016_08_05.dae");
    let text = std::str::from_utf8(&bytes).unwrap();
    let doc = read(&DaeFormat, &bytes);
    c.bench_function("dae floor roxmltree tree Linden female", |b| {
        b.iter(|| roxmltree::Document::parse(text).unwrap().descendants().count())
    });
    c.bench_function("dae floor quick-xml events Linden female", |b| b.iter(|| quick_xml_events(text)));
    c.bench_function("dae read Linden female", |b| b.iter(|| read(&DaeFormat, &bytes)));
    c.bench_function("dae write Linden female", |b| {
        b.iter(|| DaeFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main.len())
    });

    // The same body repeated to 25 MB of Collada (what `cargo xtask gen-big-dae 25` writes).
    let copies = 25_000_000usize.div_ceil(DaeFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main.len());
    let big_doc = skelport_ir::testing::repeated(&doc, copies);
    let big = DaeFormat.write(&big_doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main;
    let big_text = std::str::from_utf8(&big).unwrap();
    let mut g = c.benchmark_group("big inputs");
    g.sample_size(10).measurement_time(Duration::from_secs(5));
    g.bench_function("dae floor quick-xml events 25 MB body", |b| b.iter(|| quick_xml_events(big_text)));
    g.bench_function("dae read 25 MB body", |b| b.iter(|| read(&DaeFormat, &big)));
    g.bench_function("dae write 25 MB body", |b| {
        b.iter(|| DaeFormat.write(&big_doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main.len())
    });
    g.finish();

    let skeleton = std::fs::read(root.join("sl/viewer/avatar_skeleton.xml")).expect("avatar_skeleton.xml");
    c.bench_function("sl-skeleton read avatar_skeleton.xml", |b| b.iter(|| read(&SlSkeletonFormat, &skeleton)));
}

criterion_group!(benches, bench);
criterion_main!(benches);
