//! The command line: flags as a pgbench user expects them, PostgreSQL
//! settings as postgresql.conf writes them, and the commands behind them.

use std::path::PathBuf;

use anyhow::Result;
use clap::{Parser, Subcommand};

pub use crate::commands::cleanup::CleanupArgs;
pub use crate::commands::devices::DevicesArgs;
pub use crate::commands::model::ModelArgs;
pub use crate::commands::prepare::PrepareArgs;
pub use crate::commands::run::RunArgs;
use crate::commands::{
    calibrate, capture, catchup, cleanup, compare, cpu_probe, cpus, devices, import, instances,
    iobench, model, prepare, profile, report, run, sweep, vacuum, workload,
};
use crate::error::EXIT_CODES_HELP;
use crate::output;
use crate::stop::Stop;

/// pgiosim answers storage questions in database terms: it generates
/// PostgreSQL's own I/O pattern against a real file on the disk under test
/// and reports pgbench-style TPS, latency percentiles and where each
/// transaction's time goes.
#[derive(Debug, Parser)]
#[command(name = "pgiosim", version, about, long_about = None, after_help = EXIT_CODES_HELP)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run pgbench's TPC-B-like workload against real files on this disk.
    ///
    /// Prepares the data set in --dir if needed, then runs the workload for
    /// -T seconds (or -t transactions per client) and prints pgbench's summary,
    /// latency percentiles, the per-transaction breakdown and I/O figures.
    ///
    /// Data I/O uses O_DIRECT by default, so the disk sees every buffer-pool
    /// miss: use it to measure the disk. --os-cache SIZE models a kernel page
    /// cache in front of it (a modelled hit costs no I/O), for comparing with a
    /// real server whose data partly fits in RAM. --buffered goes through the
    /// real kernel page cache, as PostgreSQL up to 17 does, and holds
    /// shared_buffers' memory as the postmaster does: use it to compare with a
    /// real PostgreSQL on this same machine.
    Run(RunArgs),
    /// Run the same workload in virtual time against a device model.
    ///
    /// The same core as `run` (buffer pool, WAL, checkpoints, locks, CPU)
    /// driven by a virtual clock and a device profile instead of the disk:
    /// answers in seconds (half a minute for a server-scale NVMe point)
    /// what `run` would report on that device, without the disk and
    /// without allocating the data set.
    Model(ModelArgs),
    /// Time a one-shot VACUUM of a bloated table, on this disk or a model.
    ///
    /// Every page of --bloat worth of heap has dead tuples: vacuum reads it
    /// through its 256 KiB ring, prunes it (WAL, a full-page image on its
    /// first change after the checkpoint), and writes its dirty ring buffers
    /// itself. Reported in seconds and MB/s, with pages read, dirtied and
    /// written, and the WAL it produced.
    Vacuum(vacuum::VacuumArgs),
    /// Time a standby catching up on a WAL backlog, on this disk or a model.
    ///
    /// A physical standby's startup process replays WAL already in its
    /// pg_wal (after an outage, or a paused replay) as PostgreSQL 15 does:
    /// one process reads the WAL in order; a record's page is read unless
    /// the record carries a full-page image (the first change after one of
    /// the primary's checkpoints, every --checkpoint-every of WAL);
    /// recovery_prefetch asks the kernel for the pages of the WAL ahead,
    /// maintenance_io_concurrency at a time; restartpoints and the
    /// background writer write the dirty pages. Reports the time to catch
    /// up, WAL MB/s and where the startup process's time went. Not
    /// modelled: streaming the WAL in during the catch-up (it is in pg_wal
    /// already), hot-standby queries, and logical replication's apply.
    Catchup(catchup::CatchupArgs),
    /// List the shipped device profiles and the provisioned volume types.
    Devices(DevicesArgs),
    /// List the instance presets for `model --instance`: vCPUs, memory,
    /// volume limits and instance store, with their sources; `instances
    /// show SIZE` prints the flags one stands for.
    Instances(instances::InstancesArgs),
    /// List the CPU classes for `--cpu`: each processor's speed per core
    /// against the EPYC 9454P of the workload's CPU figures, with the
    /// Geekbench 6 figures and sources it comes from, and this host's own
    /// from its CPU probe.
    Cpus,
    /// Time this host's CPU at a statement's kind of work (a tenth of a
    /// second): its speed against the machine the workload's CPU figures
    /// were measured on, which `run` applies as --cpu-speed.
    CpuProbe(cpu_probe::CpuProbeArgs),
    /// Create (or check) the data and WAL files for a scale, without running.
    Prepare(PrepareArgs),
    /// Remove the files pgiosim created in --dir (and --wal-dir, and the
    /// standbys' in --standby-dir), nothing else.
    Cleanup(CleanupArgs),
    /// Measure an I/O engine alone, like fio (used by scripts/bench-engine).
    Iobench(iobench::IoBenchArgs),
    /// Probe this disk (about a minute) and write a device profile for
    /// `model --device`: QD1 latencies, IOPS by queue depth, flush cost,
    /// bandwidth.
    Calibrate(calibrate::CalibrateArgs),
    /// Device profiles: built from fio's or YABS's results, or checked (show).
    #[command(subcommand)]
    Profile(profile::ProfileCommand),
    /// Workload files: `workload fit-cpu` fits a workload's CPU figures to
    /// real pgbench runs on this host.
    #[command(subcommand)]
    Workload(workload::WorkloadCommand),
    /// Watch a live PostgreSQL's statistics and write a workload of its shape.
    ///
    /// Reads pg_stat_database, pg_stat_wal, pg_stat_bgwriter or
    /// pg_stat_checkpointer, pg_stat_io (16+) and pg_settings, read-only, at the
    /// start and end of -T, and writes a workload file (-o x.json) with the
    /// observed transaction mix, WAL per transaction and block accesses, plus the
    /// server's settings as x.conf; `run --workload x.json --config x.conf`
    /// replays it. PostgreSQL 13 to 18.
    Capture(capture::CaptureArgs),
    /// Run one workload over a grid of clients, settings and devices.
    Sweep(sweep::SweepArgs),
    /// Print results side by side, with ratios to the first.
    Compare(compare::CompareArgs),
    /// Other tools' results as pgiosim results: `import pgbench` reads a
    /// real pgbench run and the statistics sampled around it.
    #[command(subcommand)]
    Import(import::ImportCommand),
    /// Write one self-contained HTML file with charts of results and sweeps.
    Report(report::ReportArgs),
}

/// The files a command will write, with the flag that names each.
fn outputs(command: &Command) -> Vec<(&'static str, PathBuf)> {
    let mut v: Vec<(&'static str, PathBuf)> = Vec::new();
    let mut json = |p: &Option<PathBuf>| {
        if let Some(p) = p {
            v.push(("--json", p.clone()));
        }
    };
    match command {
        Command::Run(a) => json(&a.w.json),
        Command::Model(a) => json(&a.w.json),
        Command::Vacuum(a) => json(&a.one.json),
        Command::Catchup(a) => json(&a.one.json),
        Command::Sweep(a) => {
            json(&a.w.json);
            v.extend(a.csv.iter().map(|p| ("--csv", p.clone())));
            v.extend(a.markdown.iter().map(|p| ("--markdown", p.clone())));
        }
        Command::Compare(a) => {
            json(&a.json);
            v.extend(a.csv.iter().map(|p| ("--csv", p.clone())));
            v.extend(a.markdown.iter().map(|p| ("--markdown", p.clone())));
        }
        Command::CpuProbe(a) => json(&a.json),
        Command::Calibrate(a) => {
            json(&a.json);
            v.push(("-o", a.output.clone()));
        }
        Command::Capture(a) => {
            json(&a.json);
            v.push(("-o", a.output.clone()));
            v.push(("-o (its .conf)", crate::capture::conf_path(&a.output)));
        }
        Command::Report(a) => v.push(("-o", a.output.clone())),
        Command::Import(import::ImportCommand::Pgbench(a)) => json(&a.json),
        Command::Profile(profile::ProfileCommand::FromFio(a)) => {
            v.push(("-o", a.output.clone()));
        }
        Command::Profile(profile::ProfileCommand::FromYabs(a)) => {
            v.push(("-o", a.output.clone()));
        }
        Command::Workload(workload::WorkloadCommand::FitCpu(a)) => {
            json(&a.json);
            v.push(("-o", a.output.clone()));
        }
        Command::Workload(workload::WorkloadCommand::FromServerCpu(a)) => {
            json(&a.json);
            v.push(("-o", a.output.clone()));
        }
        Command::Profile(profile::ProfileCommand::Show(_))
        | Command::Devices(_)
        | Command::Instances(_)
        | Command::Cpus
        | Command::Prepare(_)
        | Command::Cleanup(_)
        | Command::Iobench(_) => {}
    }
    v
}

/// The files a command reads because the user named them as its subject,
/// which none of its outputs may overwrite.
fn inputs(command: &Command) -> Vec<PathBuf> {
    match command {
        Command::Compare(a) => a.files.clone(),
        Command::Report(a) => a.files.clone(),
        Command::Profile(profile::ProfileCommand::FromFio(a)) => a.files.clone(),
        Command::Profile(profile::ProfileCommand::FromYabs(a)) => {
            vec![a.file.clone()]
        }
        Command::Import(import::ImportCommand::Pgbench(a)) => {
            let mut v = vec![a.output.clone()];
            v.extend(a.statistics.clone());
            v
        }
        Command::Workload(workload::WorkloadCommand::FitCpu(a)) => {
            vec![a.measurements.clone()]
        }
        _ => Vec::new(),
    }
}

/// Run the parsed command; returns the process exit code on success.
pub fn execute(cli: Cli, stop: &Stop) -> Result<i32> {
    output::check_outputs(&outputs(&cli.command), &inputs(&cli.command))?;
    match cli.command {
        Command::Run(args) => run::run(&args, stop),
        Command::Model(args) => model::model(&args, stop),
        Command::Vacuum(args) => vacuum::vacuum(&args, stop),
        Command::Catchup(args) => catchup::catchup(&args, stop),
        Command::Devices(args) => devices::devices(&args).map(|()| 0),
        Command::Instances(args) => instances::run(&args).map(|()| 0),
        Command::Cpus => cpus::cpus().map(|()| 0),
        Command::CpuProbe(args) => cpu_probe::cpu_probe(&args),
        Command::Prepare(args) => prepare::prepare(&args, stop),
        Command::Cleanup(args) => cleanup::cleanup(&args),
        Command::Calibrate(args) => calibrate::calibrate(&args, stop),
        Command::Profile(cmd) => profile::profile(&cmd),
        Command::Workload(cmd) => workload::workload(&cmd),
        Command::Capture(args) => capture::capture(&args, stop),
        Command::Iobench(args) => iobench::iobench(&args, stop),
        Command::Sweep(args) => sweep::sweep(&args, stop),
        Command::Compare(args) => compare::compare(&args),
        Command::Import(cmd) => import::import(&cmd),
        Command::Report(args) => report::report(&args),
    }
}
