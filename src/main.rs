//! `pgiosim`: parse, run, print one clear error, exit with a code that says
//! what happened (see [`pgiosim::error::exit`]).

use std::process::ExitCode;

use clap::Parser;
use pgiosim::cli::{self, Cli};
use pgiosim::stop::Stop;

/// Huge pages for the model's large tables (see `huge_pages`).
#[global_allocator]
static ALLOC: pgiosim::huge_pages::HugePages = pgiosim::huge_pages::HugePages;

fn main() -> ExitCode {
    let cli = Cli::parse();
    // Past a file-size limit (`ulimit -f`) a write fails with EFBIG, which
    // prepare handles (it removes its partial file and says so), instead of
    // SIGXFSZ killing the process part way.
    // SAFETY: setting a signal's disposition to SIG_IGN, before any thread.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
    // Ctrl-C and SIGTERM end the run cleanly; the partial report is still printed.
    let stop = match Stop::on_signals() {
        Ok(stop) => stop,
        Err(e) => {
            eprintln!("Error: cannot install a signal handler: {e}");
            return ExitCode::from(1);
        }
    };
    match cli::execute(cli, &stop) {
        Ok(code) => ExitCode::from(code as u8),
        // A reader that closed the pipe early (`| head`) wanted no more.
        Err(e) if pgiosim::output::is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("Error: {}", pgiosim::error::shorten(&format!("{e:#}")));
            ExitCode::from(pgiosim::error::exit_code(&e))
        }
    }
}
