//! `pgiosim report`: the result and sweep files read, and the HTML page
//! with their charts written (the page itself: `report::html`).

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::output;
use crate::report::html::{read_inputs, render};

/// Flags of `report`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Result files (`run`/`model --json`) and sweep files (`sweep --json`).
    #[arg(value_name = "FILE.json", required = true)]
    pub files: Vec<PathBuf>,
    /// The HTML file to write ("-" for standard output).
    #[arg(short, long, value_name = "FILE", default_value = "report.html")]
    pub output: PathBuf,
    /// Title of the page.
    #[arg(long, default_value = "pgiosim report")]
    pub title: String,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Run `report`.
pub fn report(args: &ReportArgs) -> Result<i32> {
    let inputs = read_inputs(&args.files)?;
    let page = render(&args.title, &inputs)?;
    if output::is_stdout(&args.output) {
        output::stdout(&page)?;
    } else {
        output::write_file("-o", &args.output, &page)?;
        if !args.quiet {
            eprintln!(
                "wrote {} ({} run(s), {} sweep(s), {} charts, {} KB)",
                args.output.display(),
                inputs.results.len(),
                inputs.sweeps.len(),
                page.matches("<svg").count(),
                page.len() / 1024
            );
        }
    }
    Ok(0)
}
