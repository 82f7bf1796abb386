//! One file per subcommand: each takes its arguments (`crate::flags`), calls the `skelport`
//! library and prints. Diagnostics come back as data; this module prints them.

pub mod bone;
pub mod convert;
pub mod demo;
pub mod diff;
pub mod formats;
pub mod inspect;
pub mod maps;
pub mod merge;
pub mod render;
pub mod validate;

use skelport::{Diagnostics, Severity};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};

/// Set by a batch conversion: the first SIGINT or SIGTERM stops it starting files (those in
/// flight finish), rather than ending the process.
pub static BATCH: AtomicBool = AtomicBool::new(false);
/// A batch was asked to stop.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// What SIGINT, SIGTERM and SIGHUP do (ctrlc runs this on a thread of its own, not in the
/// signal handler): in a batch the first stops new files; otherwise every temporary file not yet
/// renamed into place is removed and the process ends with exit code 130. SIGXFSZ (a write past
/// the file size limit, `ulimit -f`) is ignored, so the write fails with an error that removes its
/// temporary instead of killing the process.
pub fn on_signals() {
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to "ignore".
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    let _ = ctrlc::set_handler(|| {
        if BATCH.load(Ordering::SeqCst) && !INTERRUPTED.swap(true, Ordering::SeqCst) {
            return;
        }
        skelport::io::remove_temporaries();
        eprintln!("interrupted: temporary files removed, nothing half-written");
        std::process::exit(130);
    });
}

/// Print diagnostics about `file` on stderr, one line each: `note:`, `warning:` or `loss:`.
pub fn print_diagnostics(file: &str, d: &Diagnostics) {
    for item in &d.items {
        let tag = match item.severity {
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Loss => "loss",
        };
        eprintln!("{tag}: {file}: {}", item.message);
    }
}

/// A file's name for captions: its last component.
pub fn file_label(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}
