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
    /// Give a workload the CPU that a server running it today spends: the
    /// migration workflow.
    ///
    /// Takes the source server's CPU per transaction (--cpu-us-per-tx, or
    /// a console's --cpu-utilization with --vcpus and --tps), its CPU's
    /// speed relative to the EPYC 9454P (--cpu-speed), and its page reads
    /// from the device, pages written and WAL bytes per transaction
    /// (pg_stat_database, pg_stat_bgwriter, pg_stat_wal deltas over
    /// xact_commit; or --counts-from a pgiosim result of the source's
    /// setup). The reads and KiB written cost the I/O path's measured
    /// figures; the rest becomes the statements' CPU. Then `model
    /// --workload FILE` on the target (its --instance or --cpu-speed)
    /// answers "what do I get if I move".
    FromServerCpu(FromServerCpuArgs),
}

/// Flags of `workload from-server-cpu`.
#[derive(Debug, Clone, Args)]
pub struct FromServerCpuArgs {
    /// The workload the source server runs: a built-in name or a file.
    #[arg(long, value_name = "NAME|FILE", default_value = "tpcb-like")]
    pub workload: String,
    /// The source's host CPU per transaction (all of PostgreSQL's
    /// processes, and the client's if it runs there), e.g. 600us or 0.6ms.
    #[arg(long, value_name = "DURATION", conflicts_with = "cpu_utilization")]
    pub cpu_us_per_tx: Option<String>,
    /// The source's CPU utilisation as its console shows it, percent of
    /// all its vCPUs (with --vcpus and --tps, over the same interval).
    #[arg(long, value_name = "PCT", requires_all = ["vcpus", "tps"])]
    pub cpu_utilization: Option<f64>,
    /// The source's vCPUs.
    #[arg(long, value_name = "N")]
    pub vcpus: Option<u32>,
    /// The source's transactions per second over the same interval.
    #[arg(long, value_name = "TPS")]
    pub tps: Option<f64>,
    /// The source's per-core speed relative to the AMD EPYC 9454P, whose
    /// time the I/O path's figures are in (docs/cpu-model.md) [default: 1,
    /// or the --instance preset's CPU class].
    #[arg(long, value_name = "FACTOR")]
    pub cpu_speed: Option<f64>,
    /// The source server's size (`pgiosim instances`): its CPU class gives
    /// its speed.
    #[arg(long, value_name = "NAME")]
    pub instance: Option<String>,
    /// Take reads, pages written and WAL bytes per transaction from this
    /// pgiosim result (JSON) of the source's setup.
    #[arg(long, value_name = "RESULT.json", conflicts_with_all = ["reads_per_tx", "pages_written_per_tx", "wal_bytes_per_tx"])]
    pub counts_from: Option<PathBuf>,
    /// Data pages read from the device per transaction.
    #[arg(long, value_name = "N")]
    pub reads_per_tx: Option<f64>,
    /// Data pages written per transaction (buffers_backend + buffers_clean
    /// + buffers_checkpoint).
    #[arg(long, value_name = "N")]
    pub pages_written_per_tx: Option<f64>,
    /// WAL bytes per transaction (pg_stat_wal wal_bytes).
    #[arg(long, value_name = "BYTES")]
    pub wal_bytes_per_tx: Option<f64>,
    /// Where to write the workload file.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Write the split as JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
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
pub fn workload(cmd: &WorkloadCommand) -> Result<i32> {
    match cmd {
        WorkloadCommand::FitCpu(a) => fit_cpu(a),
        WorkloadCommand::FromServerCpu(a) => from_server_cpu(a),
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
    // Only a file that reads back is written.
    fitted.validate().map_err(|e| {
        usage(format!(
            "{}: the workload it would write: {e:#}",
            a.measurements.display()
        ))
    })?;
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

fn from_server_cpu(a: &FromServerCpuArgs) -> Result<i32> {
    use crate::workload::server_cpu::{self, ServerCpu};
    let spec =
        crate::workload::load_spec(&a.workload).map_err(|e| usage(format!("--workload: {e:#}")))?;
    let (cpu_us_per_tx, cpu_from) = source_cpu_us(a)?;
    let (reads, written, wal, counts_from) = source_counts(a)?;
    let speed = source_speed(a)?;
    let m = ServerCpu {
        cpu_us_per_tx,
        speed,
        reads_per_tx: reads,
        pages_written_per_tx: written,
        wal_bytes_per_tx: wal,
    };
    let source = format!("{cpu_from} at {speed}x the EPYC 9454P{counts_from}");
    let (out, split) =
        server_cpu::apply(&spec, &m, &source).map_err(|e| usage(format!("{e:#}")))?;
    // Only a file that reads back is written.
    out.validate()
        .map_err(|e| usage(format!("the workload it would write: {e:#}")))?;
    output::write_file(
        "-o",
        &a.output,
        &(serde_json::to_string_pretty(&out)? + "\n"),
    )?;
    let json_to_stdout = a.json.as_deref().is_some_and(output::is_stdout);
    if !a.quiet {
        let r = format!(
            "{}: {:.0} us of CPU a transaction at the source = {:.0} us of EPYC 9454P time: {:.0} reads, {:.0} writes, {:.0} statements (the workload's statement CPU x {:.3})\n",
            a.output.display(),
            cpu_us_per_tx,
            split.total_us,
            split.reads_us,
            split.writes_us,
            split.statements_us,
            split.statement_scale
        );
        output::report(&r, json_to_stdout)?;
    }
    if let Some(path) = &a.json {
        write_json(path, &serde_json::json!({ "source": m, "split": split }))?;
    }
    Ok(crate::error::exit::OK.into())
}

/// The source's CPU per transaction, µs, and where it came from: given,
/// or from a console's utilisation, vCPUs and tps.
fn source_cpu_us(a: &FromServerCpuArgs) -> Result<(f64, String)> {
    Ok(match (&a.cpu_us_per_tx, a.cpu_utilization) {
        (Some(t), _) => {
            let ns = crate::units::parse_duration_ns(t)
                .filter(|ns| *ns <= crate::units::KEY_DURATION_MAX_NS)
                .ok_or_else(|| {
                    usage(format!(
                        "--cpu-us-per-tx: not a duration of at most 1d: {t:?} (e.g. 600us)"
                    ))
                })?;
            (ns as f64 / 1e3, format!("{t} of CPU a transaction"))
        }
        (None, Some(pct)) => {
            let (vcpus, tps) = (a.vcpus.unwrap_or(0), a.tps.unwrap_or(0.0));
            if !(pct.is_finite() && pct > 0.0 && pct <= 100.0)
                || vcpus == 0
                || !(tps.is_finite() && tps > 0.0)
            {
                return Err(usage(
                    "--cpu-utilization, --vcpus, --tps: need a percentage in (0, 100], at least one vCPU and a positive tps",
                ));
            }
            let us = pct / 100.0 * f64::from(vcpus) / tps * 1e6;
            // The same bound as --cpu-us-per-tx: 1e-300 tps or 4294967295
            // vCPUs made years of CPU a transaction.
            if !(us.is_finite() && us <= crate::units::CPU_US_MAX) {
                return Err(usage(format!(
                    "--cpu-utilization {pct:?} with --vcpus {vcpus} and --tps {tps:?}: {us:.3e} us of CPU a transaction, over the 1d a transaction may take; check --vcpus and --tps"
                )));
            }
            (us, format!("{pct}% of {vcpus} vCPUs at {tps} tps"))
        }
        (None, None) => {
            return Err(usage(
                "give the source's CPU: --cpu-us-per-tx, or --cpu-utilization with --vcpus and --tps",
            ));
        }
    })
}

/// The source's reads, pages written and WAL bytes per transaction, and
/// where they came from: given, or a pgiosim result's.
fn source_counts(a: &FromServerCpuArgs) -> Result<(f64, f64, f64, String)> {
    Ok(match &a.counts_from {
        Some(path) => {
            let r = match crate::report::load::load(path)? {
                crate::report::load::Document::Result(r) => r,
                crate::report::load::Document::Sweep(_) => {
                    return Err(usage(format!(
                        "--counts-from {}: a sweep; give one run's result",
                        path.display()
                    )));
                }
            };
            let tx = r.summary.transactions.max(1) as f64;
            (
                r.io.data_reads_per_tx,
                r.io.data_writes as f64 / tx,
                r.io.wal_bytes_per_tx,
                format!(
                    "; reads, writes and WAL per transaction from {}",
                    path.display()
                ),
            )
        }
        None => match (a.reads_per_tx, a.pages_written_per_tx, a.wal_bytes_per_tx) {
            (Some(r), Some(w), Some(b)) => (r, w, b, String::new()),
            _ => {
                return Err(usage(
                    "give the source's I/O: --reads-per-tx, --pages-written-per-tx and --wal-bytes-per-tx, or --counts-from RESULT.json",
                ));
            }
        },
    })
}

/// The source's per-core speed: given, its instance's, or the reference.
fn source_speed(a: &FromServerCpuArgs) -> Result<f64> {
    Ok(match (a.cpu_speed, &a.instance) {
        (Some(s), _) => {
            let (lo, hi) = crate::units::CPU_SPEED_RANGE;
            crate::units::check_f64("--cpu-speed", s, lo, hi, "a factor (1 = the EPYC 9454P)")?
        }
        (None, Some(name)) => {
            crate::device::instance::cpu_class::preset_speed(name).map_err(usage)?
        }
        (None, None) => 1.0,
    })
}
