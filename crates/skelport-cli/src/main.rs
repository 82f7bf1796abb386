//! `skelport`: convert character skeletons and skin weights between formats.
//!
//! This binary only parses arguments (`flags`) and hands each subcommand to its file in `cmd/`,
//! which calls the `skelport` library and prints; the work lives in the library.

// Printing is what a command line tool is for; the library crates may not (workspace lints).
#![allow(clippy::print_stdout, clippy::print_stderr)]

mod cmd;

use skelport_cli::flags::{self, Command};
use std::process::ExitCode;

/// glibc's malloc gives every block of 128 KiB or more its own fresh mapping and unmaps it when
/// freed, so each big buffer of a conversion (the number lists read, the meshes, the glTF buffer)
/// is new memory the kernel must fault in and zero page by page. Served from the heap instead (up
/// to 32 MiB, glibc's own upper bound for its adaptive threshold), freed blocks are reused by the
/// next ones; a heap top of up to 64 MiB is kept rather than trimmed after each file of a batch.
/// Bigger blocks (a 160 MB skeleton's text) still get their own mappings. docs/performance.md has
/// the figures.
fn tune_malloc() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only sets allocator parameters; called at start-up, before any threads.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 32 << 20);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 64 << 20);
        libc::mallopt(libc::M_TOP_PAD, 4 << 20);
    }
}

fn main() -> ExitCode {
    skelport::ir::trace::phase("start");
    // Like other Unix tools, end quietly when stdout is a closed pipe (`skelport ... | head`)
    // instead of panicking in println!.
    #[cfg(unix)]
    // SAFETY: resetting a signal disposition to its default at start-up, before any threads.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    tune_malloc();
    cmd::on_signals();
    match run(flags::parse()) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", skelport_cli::terminal_text(&format!("{e:#}")));
            ExitCode::from(1)
        }
    }
}

/// Run one subcommand; its exit code, or the error to print.
fn run(cli: flags::Cli) -> anyhow::Result<ExitCode> {
    cmd::set_verbosity(cli.quiet, cli.verbose);
    match cli.command {
        Command::Convert(a) => cmd::convert::run(a),
        Command::Inspect(a) => cmd::inspect::run(a),
        Command::Validate(a) => cmd::validate::run(a),
        Command::Diff(a) => cmd::diff::run(a),
        Command::Demo(a) => cmd::demo::run(a),
        Command::Render(a) => cmd::render::run(a),
        Command::Formats(a) => cmd::formats::run(a.json),
        Command::Maps(a) => cmd::maps::run(a.json),
        Command::Merge(a) => cmd::merge::run(a),
        Command::Bone(a) => cmd::bone::run(a),
        Command::Completions(a) => {
            clap_complete::generate(a.shell, &mut flags::command(), "skelport", &mut std::io::stdout());
            Ok(ExitCode::SUCCESS)
        }
    }
}
