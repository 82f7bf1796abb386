//! One file per subcommand: each takes its arguments (`crate::flags`), calls the `skelport`
//! library and prints. Diagnostics come back as data; this module prints them.

/// `println!` for people: control characters escaped ([`skelport_cli::terminal_text`]).
macro_rules! say {
    ($($t:tt)*) => { println!("{}", skelport_cli::terminal_text(&format!($($t)*))) };
}

/// `eprintln!` for people: control characters escaped ([`skelport_cli::terminal_text`]).
macro_rules! tell {
    ($($t:tt)*) => { eprintln!("{}", skelport_cli::terminal_text(&format!($($t)*))) };
}

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
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

/// Set by a batch conversion: the first SIGINT or SIGTERM stops it starting files (those in
/// flight finish), rather than ending the process.
pub static BATCH: AtomicBool = AtomicBool::new(false);
/// A batch was asked to stop.
pub static INTERRUPTED: AtomicBool = AtomicBool::new(false);
/// The exit code of the last stopping signal: 128 + its number (130 SIGINT, 143 SIGTERM, 129
/// SIGHUP), as a shell reports a process the signal ended.
pub static SIGNAL_EXIT: AtomicU8 = AtomicU8::new(130);

/// What SIGINT, SIGTERM and SIGHUP do (on a thread of its own, not in the signal handler): in a
/// batch the first stops new files; otherwise every temporary file not yet renamed into place is
/// removed and the process ends with exit code 128 + the signal's number ([`SIGNAL_EXIT`]).
/// SIGXFSZ (a write past the file size limit, `ulimit -f`) is ignored, so the write fails with an
/// error that removes its temporary instead of killing the process.
pub fn on_signals() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        // SAFETY: setting a signal's disposition to "ignore".
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
        }
        let Ok(mut signals) = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) else { return };
        std::thread::spawn(move || {
            for sig in signals.forever() {
                stop(128 + sig as u8);
            }
        });
    }
    #[cfg(not(unix))]
    let _ = ctrlc::set_handler(|| stop(130));
}

/// A stopping signal arrived (`code` is the exit code it means): stop a batch starting files, or
/// end the process without leaving a temporary behind.
fn stop(code: u8) {
    SIGNAL_EXIT.store(code, Ordering::SeqCst);
    if BATCH.load(Ordering::SeqCst) && !INTERRUPTED.swap(true, Ordering::SeqCst) {
        return;
    }
    skelport::io::remove_temporaries();
    tell!("interrupted: temporary files removed, nothing half-written");
    std::process::exit(code.into());
}

/// Open a file the command was given. The CLI maps big inputs, as linkers do: it owns them
/// for the length of one command, so a file truncated while it is read ending the process with
/// SIGBUS is the hazard docs/limits.md states; a 160 MB input read instead is copied into as
/// much fresh memory first.
pub fn open(path: &Path, opts: &skelport::OpenOptions) -> skelport::Result<skelport::Loaded> {
    // SAFETY: the promise above.
    unsafe { skelport::open_mapped(path, opts) }
}

/// How much to print: 0 quiet (`-q`), 1 normal, 2 verbose (`-v`). Set once in `main`.
static VERBOSITY: AtomicU8 = AtomicU8::new(1);

/// Set how much is printed (`-q`, `-v`).
pub fn set_verbosity(quiet: bool, verbose: bool) {
    VERBOSITY.store(
        if quiet {
            0
        } else if verbose {
            2
        } else {
            1
        },
        Ordering::Relaxed,
    );
}

/// `-q` was given.
pub fn quiet() -> bool {
    VERBOSITY.load(Ordering::Relaxed) == 0
}

/// `-v` was given.
pub fn verbose() -> bool {
    VERBOSITY.load(Ordering::Relaxed) >= 2
}

/// Print diagnostics about `file` on stderr, one line each: `note:`, `warning:` or `loss:`
/// (notes not with `-q`; each line's code with `-v`). A message that names a file itself (the
/// weights or the mesh beside a rig) is printed as it is, so a line names one file. More than
/// [`SUMMARY_FROM`] diagnostics of one code are summarised: the first, then how many more of its
/// kind there are (`-v` lists every one).
pub fn print_diagnostics(file: &str, d: &Diagnostics) {
    let level = VERBOSITY.load(Ordering::Relaxed);
    let mut counts: std::collections::BTreeMap<(Severity, &str), usize> = std::collections::BTreeMap::new();
    for item in &d.items {
        *counts.entry((item.severity, item.code.as_str())).or_default() += 1;
    }
    let mut printed: std::collections::BTreeSet<(Severity, &str)> = std::collections::BTreeSet::new();
    for item in &d.items {
        let tag = match item.severity {
            Severity::Info if level == 0 => continue,
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Loss => "loss",
        };
        let key = (item.severity, item.code.as_str());
        let n = counts[&key];
        let summarised = level < 2 && n > SUMMARY_FROM;
        if summarised && !printed.insert(key) {
            continue;
        }
        let code = if level >= 2 { format!("[{}]", item.code) } else { String::new() };
        let more = if summarised { format!(" (and {} more like it, [{}]; -v lists them)", n - 1, item.code) } else { String::new() };
        if names_a_file(&item.message) {
            tell!("{tag}{code}: {}{more}", item.message);
        } else {
            tell!("{tag}{code}: {file}: {}{more}", item.message);
        }
    }
}

/// What a command that shows or compares a document as read (`inspect`, `diff`) says of one
/// that breaks the IR's rules: how many, and that `skelport validate` lists them. `None` for a
/// sound document.
pub fn broken_rules_warning(doc: &skelport::Document, taken: &str) -> Option<String> {
    let broken = skelport::ir::validate::validate(doc).len();
    (broken > 0).then(|| format!("the document breaks {broken} of the IR's rules (skelport validate lists them); it is {taken} as read"))
}

/// How many diagnostics of one code are printed each before they are summarised.
pub const SUMMARY_FROM: usize = 3;

/// Does the message start with a file's path (`weights.json: 10414 weight entries ...`)?
fn names_a_file(message: &str) -> bool {
    message.split_once(": ").is_some_and(|(first, _)| !first.contains(char::is_whitespace) && Path::new(first).is_file())
}

/// Write `bytes` to `path`, atomically, or to standard output when `path` is `-` (as `convert`
/// does).
pub fn write_file(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    if path.as_os_str() == "-" {
        use std::io::Write;
        let mut out = std::io::stdout().lock();
        out.write_all(bytes).and_then(|()| out.flush()).map_err(|e| anyhow::anyhow!("<stdout>: cannot write: {e}"))?;
        return Ok(());
    }
    Ok(skelport::io::write_atomic(path, bytes)?)
}

/// A file's name for captions: its last component.
pub fn file_label(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| p.display().to_string())
}
