//! `pgiosim workload`: commands on workload files. `fit-cpu` fits a
//! workload's CPU figures to real pgbench runs on this host (see
//! [`crate::workload::cpu_fit`]) and writes the fitted copy.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::error::usage;
use crate::output::{self, write_json};
use crate::workload::cpu_fit::{self, CpuMeasurements};

/// Subcommands of `workload`.
#[derive(Debug, Subcommand)]
pub enum WorkloadCommand {
    /// Fit a workload's CPU figures to real pgbench runs on this host.
    ///
    /// Reads the runs' measurements (a JSON object {"runs": [...]}: one or
    /// two scales, smallest first, each with CPU per transaction at a low
    /// and a high client count, blocks read and written per transaction,
    /// and for the smallest a one-client run's latency, WAL sync and read
    /// time; scripts/pgbench-compare writes them) and writes a copy of the
    /// workload with CPU per statement (server and pgbench), per page I/O,
    /// its growth with the backends and the round trip a statement, each
    /// with its source. `run --workload` and `model --workload` take it.
    FitCpu(FitCpuArgs),
}

/// Flags of `workload fit-cpu`.
#[derive(Debug, Clone, Args)]
pub struct FitCpuArgs {
    /// The runs' measurements (JSON).
    #[arg(value_name = "MEASUREMENTS.json")]
    pub measurements: PathBuf,
    /// The workload whose figures are fitted: a built-in name or a file.
    #[arg(long, value_name = "NAME|FILE", default_value = "tpcb-like")]
    pub workload: String,
    /// Where to write the fitted workload file.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Write the fitted figures, and the file's figures they replace, as
    /// JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Run a `workload` subcommand.
pub fn workload_command(cmd: &WorkloadCommand) -> Result<i32> {
    match cmd {
        WorkloadCommand::FitCpu(a) => fit_cpu(a),
    }
}

fn fit_cpu(a: &FitCpuArgs) -> Result<i32> {
    let spec =
        crate::workload::load_spec(&a.workload).map_err(|e| usage(format!("--workload: {e:#}")))?;
    let text = crate::input::read_text(
        &a.measurements,
        "measurements file",
        crate::input::SMALL_FILE_MAX_BYTES,
    )
    .map_err(crate::error::bad_input)?;
    let m: CpuMeasurements = serde_json::from_str(&text).map_err(|e| {
        usage(format!(
            "{}: not CPU measurements: {e}",
            a.measurements.display()
        ))
    })?;
    let fit =
        cpu_fit::fit(&spec, &m).map_err(|e| usage(format!("{}: {e}", a.measurements.display())))?;
    let fitted = cpu_fit::apply(&spec, &fit);
    output::write_file(
        "-o",
        &a.output,
        &(serde_json::to_string_pretty(&fitted)? + "\n"),
    )?;
    let json_to_stdout = a.json.as_deref().is_some_and(output::is_stdout);
    if !a.quiet {
        let mut r = String::new();
        let _ = writeln!(
            r,
            "{}: {:.1} us per statement (and {:.1} in pgbench's threads), {:.1} us per block read and {:.1} written ({}), round trip {:.1} us a statement; above {} backends {:.2}% more statement CPU and {:.2}% more page I/O CPU per backend",
            a.output.display(),
            fit.cpu_us_per_statement,
            fit.client_cpu_us_per_statement,
            fit.cpu_us_per_read,
            fit.cpu_us_per_write,
            if fit.per_io_fitted {
                "fitted across scales"
            } else {
                "the workload file's"
            },
            fit.round_trip_us_per_statement,
            fit.cpu_growth.above_backends,
            100.0 * fit.cpu_growth.statement,
            100.0 * fit.cpu_growth.io
        );
        output::report(&r, json_to_stdout)?;
    }
    if let Some(path) = &a.json {
        write_json(path, &fit)?;
    }
    Ok(crate::error::exit::OK.into())
}
