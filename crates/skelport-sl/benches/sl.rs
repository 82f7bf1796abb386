//! Read and write Linden Lab's Bento reference body (female_2016_08_05.dae, 1.1 MB, 5 skins,
//! 3,958 weighted vertices) from the corpus; the parse-only floor beside it.
use criterion::{criterion_group, criterion_main, Criterion};
use skelport_ir::{Diagnostics, Format, Input, ReadOptions, WriteOptions};
use skelport_sl::DaeFormat;

fn bench(c: &mut Criterion) {
    let Some(root) = skelport_ir::testing::corpus_root() else {
        eprintln!("corpus not found: SL benchmarks skipped");
        return;
    };
    let bytes = std::fs::read(root.join("sl/linden-lab/female_2016_08_05.dae")).expect("female_2016_08_05.dae");
    let read = || DaeFormat.read(Input { path: None, bytes: &bytes }, &ReadOptions::default(), &mut Diagnostics::default()).unwrap();
    let doc = read();
    c.bench_function("dae/xml_floor_female", |b| {
        b.iter(|| roxmltree::Document::parse(std::str::from_utf8(&bytes).unwrap()).unwrap().descendants().count())
    });
    // The reader's own tokenizer: a bare quick-xml event pass over the same text.
    c.bench_function("dae/quick_xml_floor_female", |b| {
        b.iter(|| {
            let mut r = quick_xml::Reader::from_str(std::str::from_utf8(&bytes).unwrap());
            let mut n = 0usize;
            while !matches!(r.read_event().unwrap(), quick_xml::events::Event::Eof) {
                n += 1;
            }
            n
        })
    });
    c.bench_function("dae/read_female", |b| b.iter(read));
    c.bench_function("dae/write_female", |b| {
        b.iter(|| DaeFormat.write(&doc, &WriteOptions::default(), &mut Diagnostics::default()).unwrap().main.len())
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
