// Sets `cfg(corpus)` for the tests that read the corpus (build/corpus_cfg.rs).
include!("../../build/corpus_cfg.rs");
