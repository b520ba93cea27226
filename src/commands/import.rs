//! `pgiosim import`: other tools' results read and written as
//! `pgiosim.result` files (the reading and the result: `crate::import`).

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::error::UsageError;
use crate::import::{build, pgbench};
use crate::input::{self, SMALL_FILE_MAX_BYTES};
use crate::output;
use crate::report::text::render_imported;

/// What `import` reads.
#[derive(Debug, Clone, Subcommand)]
pub enum ImportCommand {
    /// A real pgbench run: its report, and optionally the statistics sampled
    /// around it, as a result `compare` and `report` take.
    ///
    /// PGBENCH_OUTPUT is pgbench's standard output (run it with -r for
    /// per-statement latencies, which give the commit's wait). With
    /// --statistics (the JSON `scripts/pgbench-compare` keeps for each real
    /// run; its fields are in docs/json.md) the result also has the
    /// breakdown: page_read from blk_read_time, wal_fsync from END's latency
    /// less BEGIN's, lock_wait and sync_rep from pg_stat_activity's wait
    /// events, cpu from schedstat or cpuacct; what they leave is
    /// `unattributed`. Percentiles are not in pgbench's report and are null.
    ///
    /// Example: pgiosim import pgbench pgbench.out --statistics stats.json --json real.json
    Pgbench(PgbenchArgs),
}

/// Flags of `import pgbench`.
#[derive(Debug, Clone, Args)]
pub struct PgbenchArgs {
    /// pgbench's standard output ("-" for standard input).
    #[arg(value_name = "PGBENCH_OUTPUT")]
    pub output: PathBuf,
    /// The statistics sampled around the run (JSON: stats_delta, samples,
    /// cgroups; docs/json.md).
    #[arg(long, value_name = "FILE")]
    pub statistics: Option<PathBuf>,
    /// The server's CPUs, for the result's description [default: this
    /// machine's].
    #[arg(long, value_name = "N")]
    pub cpus: Option<u32>,
    /// Write the result as JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Run `import`.
pub fn import(cmd: &ImportCommand) -> Result<i32> {
    match cmd {
        ImportCommand::Pgbench(a) => import_pgbench(a),
    }
}

fn read_input(path: &Path, what: &str) -> Result<String> {
    if output::is_stdout(path) {
        return input::read_stdin_text(what, SMALL_FILE_MAX_BYTES);
    }
    input::read_text(path, what, SMALL_FILE_MAX_BYTES)
}

fn import_pgbench(a: &PgbenchArgs) -> Result<i32> {
    let text = read_input(&a.output, "pgbench output")?;
    let report = pgbench::parse_report(&text)
        .map_err(|e| UsageError(format!("{}: {e:#}", a.output.display())))?;
    let stats = match &a.statistics {
        None => None,
        Some(p) => {
            let bytes = input::read_bytes(p, "--statistics", SMALL_FILE_MAX_BYTES)?;
            let de = &mut serde_json::Deserializer::from_slice(&bytes);
            let s: pgbench::Statistics = serde_path_to_error::deserialize(de)
                .map_err(|e| UsageError(format!("--statistics {}: {e}", p.display())))?;
            Some(s)
        }
    };
    let cpus = a
        .cpus
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let result = build(
        &report,
        stats.as_ref(),
        cpus,
        &a.output,
        a.statistics.as_deref(),
    )?;
    let json_on_stdout = a.json.as_deref().is_some_and(output::is_stdout);
    if !a.quiet {
        output::report(&render_imported(&result), json_on_stdout)?;
    }
    if let Some(path) = &a.json {
        output::write_json(path, &result)?;
    }
    Ok(0)
}
