//! The command line: flags as a pgbench user expects them, PostgreSQL
//! settings as postgresql.conf writes them, and the commands behind them.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand};

use crate::args::{DirArgs, WorkloadArgs, WorkloadChoice};
use crate::core::database::Database;
use crate::datafiles;
use crate::device_name::{instance_preset, model_device};
use crate::engine::bench;
use crate::engine::sim::SimDevice;
use crate::error::{EXIT_CODES_HELP, exit};
use crate::output::{self, write_json};
use crate::plan::{Disk, EngineChoice, RunPlan, Target};
use crate::report::{RunResult, text};
use crate::stop::Stop;
use crate::workload::Script;

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
    Vacuum(crate::vacuum_cmd::VacuumArgs),
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
    Catchup(crate::catchup_cmd::CatchupArgs),
    /// List the shipped device profiles and the provisioned volume types.
    Devices(DevicesArgs),
    /// List the instance presets for `model --instance`: vCPUs, memory,
    /// volume limits and instance store, with their sources.
    Instances,
    /// Create (or check) the data and WAL files for a scale, without running.
    Prepare(PrepareArgs),
    /// Remove the files pgiosim created in --dir (and --wal-dir, and the
    /// standbys' in --standby-dir), nothing else.
    Cleanup(CleanupArgs),
    /// Measure an I/O engine alone, like fio (used by scripts/bench-engine).
    Iobench(bench::IoBenchArgs),
    /// Probe this disk (about a minute) and write a device profile for
    /// `model --device`: QD1 latencies, IOPS by queue depth, flush cost,
    /// bandwidth.
    Calibrate(crate::calibrate::CalibrateArgs),
    /// Device profiles: built from fio's or YABS's results, or checked (show).
    #[command(subcommand)]
    Profile(crate::calibrate::ProfileCommand),
    /// Workload files: `workload fit-cpu` fits a workload's CPU figures to
    /// real pgbench runs on this host.
    #[command(subcommand)]
    Workload(crate::workload_cmd::WorkloadCommand),
    /// Watch a live PostgreSQL's statistics and write a workload of its shape.
    ///
    /// Reads pg_stat_database, pg_stat_wal, pg_stat_bgwriter or
    /// pg_stat_checkpointer, pg_stat_io (16+) and pg_settings, read-only, at the
    /// start and end of -T, and writes a workload file (-o x.json) with the
    /// observed transaction mix, WAL per transaction and block accesses, plus the
    /// server's settings as x.conf; `run --workload x.json --config x.conf`
    /// replays it. PostgreSQL 13 to 18.
    Capture(crate::capture::CaptureArgs),
    /// Run one workload over a grid of clients, settings and devices.
    Sweep(crate::sweep::SweepArgs),
    /// Print results side by side, with ratios to the first.
    Compare(crate::compare::CompareArgs),
    /// Other tools' results as pgiosim results: `import pgbench` reads a
    /// real pgbench run and the statistics sampled around it.
    #[command(subcommand)]
    Import(crate::import::ImportCommand),
    /// Write one self-contained HTML file with charts of results and sweeps.
    Report(crate::report::html::ReportArgs),
}

/// Flags of `prepare`.
#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// pgbench scale factor: 100,000 accounts rows (about 17 MB) per unit.
    #[arg(short, long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub scale: u64,
    #[command(flatten)]
    pub workload: WorkloadChoice,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Flags of `devices`.
#[derive(Debug, Clone, Args)]
pub struct DevicesArgs {
    /// Also run each profile's fio-like microbenchmarks in the model (QD1
    /// 8 KiB read latency, QD32 read IOPS, QD1 and 4×QD64 write+fdatasync
    /// rates) and print them as a table.
    #[arg(long)]
    pub figures: bool,
    /// Also print where each profile's figures come from (its `source`).
    #[arg(long)]
    pub sources: bool,
}

/// The instance presets, their sizing rule and sources.
fn instances() -> Result<()> {
    use crate::instance::{OVERHEAD_FRACTION, OVERHEAD_MIN_BYTES, sources};
    let mut o = String::new();
    for i in crate::instance::instances() {
        let _ = writeln!(o, "{}", i.summary_line());
    }
    let _ = writeln!(
        o,
        "\nmodel --instance SIZE: --cpus = vCPUs; default --os-cache = RAM − shared_buffers − \
         {:.0}% of RAM (at least {}), a guess for the kernel and the backends' own memory; \
         limits apply to the provider's volumes (throughput at the maximum, IOPS bursting for \
         30 minutes where the size bursts); --device instance-store is the size's local NVMe, \
         capped at its read and write IOPS and MB/s (measured: ScyllaDB's iotune figures; \
         derived: AWS's published IOPS, MB/s scaled from a measured size; each store \
         profile's source gives its row or its arithmetic).\nSources:",
        OVERHEAD_FRACTION * 100.0,
        crate::units::format_memory(OVERHEAD_MIN_BYTES)
    );
    for (key, text) in sources() {
        let _ = writeln!(o, "  {key}: {text}");
    }
    let _ = writeln!(
        o,
        "  instance stores: {}",
        crate::instance::aws_store::SCYLLA_SOURCE
    );
    let _ = writeln!(
        o,
        "\nCPU classes (CPU KEY ×SPEED above): the speed of one core running one thread, \
         relative to the AMD EPYC 9454P pgiosim's CPU figures were measured on: the geometric \
         mean of four Geekbench 6 single-core workloads (file compression, navigation, clang, \
         text processing), medians over the sizes measured, against the 9454P's; 'not fixed': \
         the provider picks the processor by zone (src/instance/cpus.tsv):"
    );
    for c in crate::instance::cpu_classes() {
        let _ = writeln!(
            o,
            "  {:<18} ×{:.2}  {} [{}]",
            c.key, c.speed, c.name, c.measured
        );
    }
    let _ = writeln!(o, "Sources:");
    for (key, text) in crate::instance::cpu_sources() {
        let _ = writeln!(o, "  {key}: {text}");
    }
    output::stdout(&o)
}

/// The shipped profiles, the provisioned volume types, and on request
/// their sources and microbenchmark figures.
fn devices(args: &DevicesArgs) -> Result<()> {
    let mut o = String::new();
    let profiles = crate::device::profile::shipped();
    let width = profiles.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &profiles {
        let _ = writeln!(o, "{}", p.summary_line_in(width));
    }
    let _ = writeln!(
        o,
        "\nProvisioned volumes, --device TYPE:KEY=VALUE,... (the bare TYPE is the default \
         provisioning; limits from each provider's docs, see src/device/provisioned.rs):"
    );
    for t in crate::device::provisioned::TYPES {
        let _ = writeln!(o, "  {:<19} {:<6} {}", t.name, t.provider, t.help);
    }
    let _ = writeln!(
        o,
        "  {:<19} {:<6} type=SIZE: an instance preset's local NVMe (or --instance SIZE \
         --device instance-store; see pgiosim instances)",
        crate::device_name::INSTANCE_STORE,
        "AWS"
    );
    if args.sources {
        for p in &profiles {
            let _ = writeln!(o, "\n{}: {}", p.name, p.source);
        }
    }
    if !args.figures {
        return output::stdout(&o);
    }
    let _ = writeln!(
        o,
        "\n{:<16} {:>28} {:>14} {:>16} {:>18}",
        "profile",
        "QD1 8K read mean/p50/p99 µs",
        "QD32 read IOPS",
        "QD1 write+sync/s",
        "4×QD64 write+sync/s"
    );
    // Each row as its figures are ready: they take a while to measure.
    for p in &profiles {
        output::stdout(&std::mem::take(&mut o))?;
        let f = crate::device::microbench::figures(p, 1);
        let _ = writeln!(
            o,
            "{:<16} {:>28} {:>14.0} {:>16.0} {:>18.0}",
            p.name,
            format!(
                "{:.0} / {:.0} / {:.0}",
                f.qd1_read_mean_us, f.qd1_read_p50_us, f.qd1_read_p99_us
            ),
            f.qd32_read_iops,
            f.qd1_flush_per_s,
            f.parallel_flush_per_s
        );
    }
    output::stdout(&o)
}

/// Flags of `run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    #[command(flatten)]
    pub w: WorkloadArgs,
    /// I/O engine.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub io_engine: EngineChoice,
    /// Use the kernel page cache for data files instead of O_DIRECT (as
    /// PostgreSQL up to 17 does); needed on filesystems without O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Shape every I/O like a device profile's disk (a shipped name or a
    /// profile JSON): completions are delivered no earlier than the device
    /// model says, caps included; where this disk is slower than the
    /// profile, the run says so.
    #[arg(long, value_name = "NAME|FILE")]
    pub emulate: Option<String>,
    /// Where standbys keep their WAL segment files: a subdirectory
    /// standby-NAME per standby, made if missing (put it on a second disk
    /// to give the standbys their own) [default: --dir].
    #[arg(long, value_name = "DIR")]
    pub standby_dir: Option<PathBuf>,
}

/// `cleanup`'s flags: the data set's directories, and where its standbys'
/// files went if not in --dir.
#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// The --standby-dir a run with --standby was given: its standby-NAME
    /// directories are cleaned up too [default: DIR].
    #[arg(long, value_name = "DIR")]
    pub standby_dir: Option<PathBuf>,
}

/// Flags of `model`.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    #[command(flatten)]
    pub w: WorkloadArgs,
    /// Device profile: a shipped name (see `pgiosim devices`), a
    /// provisioned volume as TYPE:KEY=VALUE,... (gp3:iops=16000,mibps=1000;
    /// io2:iops=20000; azure-premium-ssd:tier=p40; pd-ssd:size_gib=1000),
    /// instance-store (with --instance) or an instance size with a store
    /// (m6id.4xlarge: its instance store), or a path to a profile JSON
    /// [default: nvme; with --instance, its instance store].
    #[arg(long, value_name = "NAME|TYPE:KEY=VALUE,...|FILE")]
    pub device: Option<String>,
    /// Model this cloud server size (m6id.4xlarge, Standard_D16s_v5,
    /// n2-standard-16; see `pgiosim instances`): --cpus becomes its vCPUs
    /// and --threads-per-core theirs,
    /// the default --os-cache its RAM − shared_buffers − 5% (at least
    /// 1 GiB), a volume of its provider gets the instance's own limits on
    /// top of its caps (m6id.4xlarge: 20,000 IOPS and 625 MB/s, bursting to
    /// 40,000 and 1,250 for 30 minutes), and --device instance-store is its
    /// local NVMe, capped at its read and write IOPS and MB/s. Explicit
    /// flags win over the preset.
    #[arg(long, value_name = "SIZE")]
    pub instance: Option<String>,
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
        Command::Import(crate::import::ImportCommand::Pgbench(a)) => json(&a.json),
        Command::Profile(crate::calibrate::ProfileCommand::FromFio(a)) => {
            v.push(("-o", a.output.clone()));
        }
        Command::Profile(crate::calibrate::ProfileCommand::FromYabs(a)) => {
            v.push(("-o", a.output.clone()));
        }
        Command::Workload(crate::workload_cmd::WorkloadCommand::FitCpu(a)) => {
            json(&a.json);
            v.push(("-o", a.output.clone()));
        }
        Command::Workload(crate::workload_cmd::WorkloadCommand::FromServerCpu(a)) => {
            json(&a.json);
            v.push(("-o", a.output.clone()));
        }
        Command::Profile(crate::calibrate::ProfileCommand::Show(_))
        | Command::Devices(_)
        | Command::Instances
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
        Command::Profile(crate::calibrate::ProfileCommand::FromFio(a)) => a.files.clone(),
        Command::Profile(crate::calibrate::ProfileCommand::FromYabs(a)) => vec![a.file.clone()],
        Command::Import(crate::import::ImportCommand::Pgbench(a)) => {
            let mut v = vec![a.output.clone()];
            v.extend(a.statistics.clone());
            v
        }
        Command::Workload(crate::workload_cmd::WorkloadCommand::FitCpu(a)) => {
            vec![a.measurements.clone()]
        }
        _ => Vec::new(),
    }
}

/// Run the parsed command; returns the process exit code on success.
pub fn execute(cli: Cli, stop: &Stop) -> Result<i32> {
    crate::output::check_outputs(&outputs(&cli.command), &inputs(&cli.command))?;
    if let Command::Capture(a) = &cli.command
        && output::is_stdout(&a.output)
    {
        // capture writes two files, the workload and the .conf beside it.
        return Err(crate::error::UsageError(
            "-o -: capture writes a workload and a .conf beside it; name a file".into(),
        )
        .into());
    }
    match cli.command {
        Command::Run(args) => run(&args, stop),
        Command::Model(args) => model(&args, stop),
        Command::Vacuum(args) => crate::vacuum_cmd::vacuum(&args, stop),
        Command::Catchup(args) => crate::catchup_cmd::catchup(&args, stop),
        Command::Devices(args) => devices(&args).map(|()| 0),
        Command::Instances => instances().map(|()| 0),
        Command::Prepare(args) => {
            let workload = Script::mix(&args.workload.parts()?, args.scale)?;
            let dd = args.dirs.data_dir();
            let outcome = crate::execute::prepare(&dd, &workload, args.scale, args.quiet, stop)?;
            if !args.quiet {
                eprintln!(
                    "{}: {}",
                    dd.dir.display(),
                    crate::execute::prepared_word(outcome)
                );
            }
            Ok(0)
        }
        Command::Cleanup(args) => {
            let dd = args.dirs.data_dir();
            // Standbys' files first (in --standby-dir, else their default
            // place in DIR), so that DIR can go if pgiosim made it and
            // nothing else is left.
            let mut removed = Vec::new();
            let root = args.standby_dir.as_ref().unwrap_or(&dd.dir);
            for sd in crate::execute::default_standby_dirs(root) {
                removed.extend(datafiles::cleanup(&sd)?);
            }
            removed.extend(datafiles::cleanup(&dd)?);
            let mut o = String::new();
            for p in &removed {
                let _ = writeln!(o, "removed {}", p.display());
            }
            if removed.is_empty() {
                let _ = writeln!(o, "nothing of pgiosim's to remove in {}", dd.dir.display());
            }
            output::stdout(&o).map(|()| 0)
        }
        Command::Calibrate(args) => crate::calibrate::calibrate(&args, stop),
        Command::Profile(cmd) => crate::calibrate::profile_command(&cmd),
        Command::Workload(cmd) => crate::workload_cmd::workload_command(&cmd),
        Command::Capture(args) => crate::capture::execute(&args, stop),
        Command::Iobench(args) => {
            bench::iobench(&args, stop)?;
            Ok(0)
        }
        Command::Sweep(args) => crate::sweep::sweep(&args, stop),
        Command::Compare(args) => crate::compare::compare(&args),
        Command::Import(cmd) => crate::import::import(&cmd),
        Command::Report(args) => crate::report::html::report(&args),
    }
}

/// Print the report, write the JSON; the exit code says whether it is
/// partial (130), or whether it measured nothing: a run that completed no
/// transaction exits 1 with a warning, as its figures answer no question.
fn print_result(result: &RunResult, w: &WorkloadArgs) -> Result<i32> {
    let json_on_stdout = w.json.as_deref().is_some_and(output::is_stdout);
    output::report(&text::render(result), json_on_stdout)?;
    if let Some(path) = &w.json {
        write_json(path, result)?;
    }
    if result.partial {
        return Ok(exit::INTERRUPTED.into());
    }
    if result.summary.transactions == 0 {
        eprintln!("{}", no_transactions_warning(result));
        return Ok(exit::FAILURE.into());
    }
    Ok(exit::OK.into())
}

/// Why a run may have completed no transaction, in one line.
fn no_transactions_warning(r: &RunResult) -> String {
    format!(
        "warning: no transaction completed in {:.3} s with {} client(s) on {} CPU(s): the \
         duration is shorter than one transaction takes here; give a longer -T, fewer clients \
         or more --cpus (exit code 1)",
        r.summary.elapsed_s, r.run.clients, r.run.cpus
    )
}

/// With the client on another host (`--client-rtt`), `-j` is pgbench's
/// threads there: nothing of the server's to model, but the result says how
/// many, as pgbench's "number of threads" does.
fn client_host_threads(result: &mut RunResult, w: &WorkloadArgs) {
    if w.client_rtt.is_some()
        && let Some(j) = w.jobs
    {
        result.run.jobs = j;
    }
}

/// `pgiosim run`: the plan on this disk, its report and exit code.
fn run(args: &RunArgs, stop: &Stop) -> Result<i32> {
    let (mut result, emulation) = crate::execute::execute(args.plan()?, stop)?;
    client_host_threads(&mut result, &args.w);
    let code = print_result(&result, &args.w)
        .with_context(|| format!("run in {}", args.dirs.dir.display()))?;
    if let Some(summary) = emulation {
        eprintln!("{summary}");
    }
    Ok(code)
}

/// `pgiosim model`: the plan on the device model, its report and exit code.
fn model(args: &ModelArgs, stop: &Stop) -> Result<i32> {
    let (mut result, _) = crate::execute::execute(args.plan()?, stop)?;
    client_host_threads(&mut result, &args.w);
    print_result(&result, &args.w)
}

impl RunArgs {
    /// The run these flags describe.
    pub fn plan(&self) -> Result<RunPlan> {
        let settings = self.w.settings()?;
        let disk = Disk {
            data: self.dirs.data_dir(),
            io_engine: self.io_engine,
            buffered: self.buffered,
            emulate: self.emulate.clone(),
            standby_root: self.standby_dir.clone().unwrap_or(self.dirs.dir.clone()),
        };
        RunPlan::new(self.w.run_shape()?, settings, Target::Disk(disk))
    }
}

impl ModelArgs {
    /// The model run these flags describe, with the --instance preset filled
    /// in where they did not say (and a line saying so unless quiet).
    pub fn plan(&self) -> Result<RunPlan> {
        let w = &self.w;
        let inst = instance_preset(self.instance.as_deref())?;
        let settings = w.settings()?;
        let mut shape = w.model_shape()?;
        let notice = match inst {
            Some(i) => shape.apply_instance(i, &settings)?,
            None => None,
        };
        let profile = model_device(self.device.as_deref(), inst, w.quiet)?;
        let plan = RunPlan::new(shape, settings, Target::Model(Box::new(profile)))?;
        if let Some(i) = inst
            && !w.quiet
        {
            eprintln!(
                "model: instance {}: {} vCPUs, {} per core{}",
                i.name,
                plan.cfg.cpus,
                plan.cfg.threads_per_core,
                notice.map(|n| format!(", {n}")).unwrap_or_default()
            );
        }
        Ok(plan)
    }
}

/// What `model` runs, built but not started: the database and its simulated
/// device (for benchmarks of the simulation itself).
pub fn model_parts(args: &ModelArgs) -> Result<(Database, SimDevice)> {
    crate::execute::model_parts(args.plan()?)
}
