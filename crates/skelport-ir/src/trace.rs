//! Phase timings for profiling a conversion: with `SKELPORT_TRACE` set in the environment, each
//! [`phase`] prints to standard error the milliseconds since the first one (the CLI calls it as
//! `main` starts) and what just finished. Unset, a phase costs one load of a cached flag.
//! Wall-clock marks show which steps of one conversion are sequential and how long each takes,
//! which a sampling profiler spread over threads does not (docs/performance.md uses them).

use std::sync::OnceLock;
use std::time::Instant;

/// `Some(start)` when tracing is on.
fn start() -> Option<Instant> {
    static START: OnceLock<Option<Instant>> = OnceLock::new();
    *START.get_or_init(|| std::env::var_os("SKELPORT_TRACE").map(|_| Instant::now()))
}

/// Mark the end of a phase named `what`.
#[inline]
#[allow(clippy::print_stderr, reason = "tracing is printing, asked for with SKELPORT_TRACE")]
pub fn phase(what: &str) {
    if let Some(t0) = start() {
        eprintln!("[trace] {:8.2} ms  {what}", t0.elapsed().as_secs_f64() * 1000.0);
    }
}
