//! The command line: flags as a pgbench user expects them, PostgreSQL
//! settings as postgresql.conf writes them, and the commands behind them.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::{Context, Result};
use clap::{Args, Parser, Subcommand, ValueEnum};

use crate::core::config::{CoreConfig, WAL_FLUSH_CPU};
use crate::core::database::Database;
use crate::core::io::PAGE_BYTES;
use crate::core::time::{MS, Nanos, SEC, US};
use crate::datafiles::{self, DataDir, Layout, Prepared};
use crate::device::model::DeviceModel;
use crate::device::profile::Profile;
use crate::engine::driver::{self, Ending};
use crate::engine::psync::PsyncDevice;
use crate::engine::sim::SimDevice;
use crate::engine::uring::UringDevice;
use crate::engine::{Device, bench};
use crate::error::{EXIT_CODES_HELP, Interrupted, bad_input, exit, usage};
use crate::output;
use crate::report::{RunInfo, RunResult, TimerLagFigures, text};
use crate::settings::Settings;
use crate::workload::Workload;
use crate::workload::{self, QueryMode, Script};

/// WAL segment files in the ring (64 MiB): PostgreSQL recycles segments the
/// same way, so the disk sees overwrites of preallocated files.
pub const WAL_SEGMENTS: u32 = 4;

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
    /// answers in about a second what `run` would report on that device,
    /// without the disk and without allocating the data set.
    Model(ModelArgs),
    /// Time a one-shot VACUUM of a bloated table, on this disk or a model.
    ///
    /// Every page of --bloat worth of heap has dead tuples: vacuum reads it
    /// through its 256 KiB ring, prunes it (WAL, a full-page image on its
    /// first change after the checkpoint), and writes its dirty ring buffers
    /// itself. Reported in seconds and MB/s, with pages read, dirtied and
    /// written, and the WAL it produced.
    Vacuum(VacuumArgs),
    /// List the shipped device profiles and the provisioned volume types.
    Devices(DevicesArgs),
    /// List the instance presets for `model --instance`: vCPUs, memory,
    /// volume limits and instance store, with their sources.
    Instances,
    /// Create (or check) the data and WAL files for a scale, without running.
    Prepare(PrepareArgs),
    /// Remove the files pgiosim created in --dir (and --wal-dir), nothing else.
    Cleanup(DirArgs),
    /// Measure an I/O engine alone, like fio (used by scripts/bench-engine).
    Iobench(bench::IoBenchArgs),
    /// Probe this disk (about a minute) and write a device profile for
    /// `model --device`: QD1 latencies, IOPS by queue depth, flush cost,
    /// bandwidth.
    Calibrate(crate::calibrate::CalibrateArgs),
    /// Device profiles from other tools' results (fio JSON).
    #[command(subcommand)]
    Profile(crate::calibrate::ProfileCommand),
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
    /// Write one self-contained HTML file with charts of results and sweeps.
    Report(crate::report::html::ReportArgs),
}

/// Where the files go.
#[derive(Debug, Clone, Args)]
pub struct DirArgs {
    /// Directory for the data file; created if its parent exists.
    #[arg(long, default_value = "pgiosim-data", value_name = "DIR")]
    pub dir: PathBuf,
    /// Directory for the WAL segment files, like a separate pg_wal volume
    /// [default: DIR/pg_wal].
    #[arg(long, value_name = "DIR")]
    pub wal_dir: Option<PathBuf>,
}

/// Flags of `prepare`.
#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// pgbench scale factor: 100,000 accounts rows (about 15 MB) per unit.
    #[arg(short, long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub scale: u64,
    #[command(flatten)]
    pub workload: WorkloadChoice,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Which workload runs, the way pgbench chooses its scripts.
#[derive(Debug, Clone, Args)]
pub struct WorkloadChoice {
    /// A built-in workload, optionally weighted, as pgbench's -b: tpcb-like,
    /// simple-update, select-only, large-updates; repeat for a mix
    /// (-b tpcb-like@1 -b select-only@9).
    #[arg(short = 'b', long = "builtin", value_name = "NAME[@WEIGHT]")]
    pub builtin: Vec<String>,
    /// Shorthand for -b simple-update (pgbench -N).
    #[arg(short = 'N', long = "skip-some-updates")]
    pub simple_update: bool,
    /// Shorthand for -b select-only (pgbench -S).
    #[arg(short = 'S', long = "select-only")]
    pub select_only: bool,
    /// A workload file (workloads/*.json schema) or built-in name.
    #[arg(long, value_name = "NAME|FILE", conflicts_with_all = ["builtin", "simple_update", "select_only"])]
    pub workload: Option<String>,
}

impl WorkloadChoice {
    /// The chosen workload(s) with their weights [default: tpcb-like].
    pub fn parts(&self) -> Result<Vec<(workload::WorkloadSpec, f64)>> {
        let mut items = self.builtin.clone();
        if self.simple_update {
            items.push("simple-update".into());
        }
        if self.select_only {
            items.push("select-only".into());
        }
        if let Some(w) = &self.workload {
            // Its own flag in errors: a file's mistake is not a -b mistake.
            let spec = workload::load_spec(w).map_err(|e| usage(format!("--workload: {e:#}")))?;
            let mut parts = workload::parse_mix(&items).map_err(|e| usage(format!("{e:#}")))?;
            parts.push((spec, 1.0));
            return Ok(parts);
        }
        if items.is_empty() {
            items.push("tpcb-like".into());
        }
        workload::parse_mix(&items).map_err(|e| usage(format!("{e:#}")))
    }
}

/// Flags of `vacuum`.
#[derive(Debug, Clone, Args)]
pub struct VacuumArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// Size of the bloated heap to vacuum (e.g. 10GB).
    #[arg(long, value_name = "SIZE", default_value = "1GB")]
    pub bloat: String,
    /// Model it on this device profile instead of running it on the disk.
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// PostgreSQL settings (vacuum_cost_limit, vacuum_cost_delay,
    /// shared_buffers, ...), as for `run`.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Read settings from a postgresql.conf.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// I/O engine (on the disk).
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub io_engine: EngineChoice,
    /// Use the kernel page cache instead of O_DIRECT (on the disk).
    #[arg(long)]
    pub buffered: bool,
    /// Write the result as JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seed of the random choices.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print nothing but the result.
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

fn instances() {
    use crate::instance::{INSTANCES, OVERHEAD_FRACTION, OVERHEAD_MIN_BYTES, Provider};
    for i in INSTANCES {
        println!("{}", i.summary_line());
    }
    println!(
        "\nmodel --instance SIZE: --cpus = vCPUs; default --os-cache = RAM − shared_buffers − \
         {:.0}% of RAM (at least {}), a guess for the kernel and the backends' own memory; \
         limits apply to the provider's volumes (throughput at the maximum, IOPS bursting for \
         30 minutes where the size bursts).\nSources:",
        OVERHEAD_FRACTION * 100.0,
        crate::units::format_memory(OVERHEAD_MIN_BYTES)
    );
    for p in [Provider::Aws, Provider::Azure, Provider::Gcp] {
        if let Some(i) = INSTANCES.iter().find(|i| i.provider == p) {
            println!("  {}: {}", p.name(), i.source());
        }
    }
}

fn devices(args: &DevicesArgs) {
    let profiles = crate::device::profile::shipped();
    for p in &profiles {
        println!("{}", p.summary_line());
    }
    println!(
        "\nProvisioned volumes, --device TYPE:KEY=VALUE,... (the bare TYPE is the default \
         provisioning; limits from each provider's docs, see src/device/provisioned.rs):"
    );
    for t in crate::device::provisioned::TYPES {
        println!("  {:<19} {:<6} {}", t.name, t.provider, t.help);
    }
    println!(
        "  {:<19} {:<6} type=SIZE: an instance preset's local NVMe (or --instance SIZE \
         --device instance-store; see pgiosim instances)",
        crate::device::profile::INSTANCE_STORE,
        "AWS"
    );
    if args.sources {
        for p in &profiles {
            println!("\n{}: {}", p.name, p.source);
        }
    }
    if !args.figures {
        return;
    }
    println!(
        "\n{:<16} {:>28} {:>14} {:>16} {:>18}",
        "profile",
        "QD1 8K read mean/p50/p99 µs",
        "QD32 read IOPS",
        "QD1 write+sync/s",
        "4×QD64 write+sync/s"
    );
    for p in &profiles {
        let f = crate::device::microbench::figures(p, 1);
        println!(
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
}

/// Which I/O engine carries the requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EngineChoice {
    /// io_uring, falling back to psync when io_uring cannot be set up.
    Auto,
    /// io_uring only.
    IoUring,
    /// Threads doing pread/pwrite/fdatasync.
    Psync,
}

/// The workload, its settings and the report: shared by `run` and `model`.
#[derive(Debug, Clone, Args)]
pub struct WorkloadArgs {
    #[command(flatten)]
    pub choice: WorkloadChoice,
    /// Number of concurrent clients (pgbench -c).
    #[arg(short, long = "client", value_name = "NUM", default_value_t = 1)]
    pub clients: u32,
    /// Duration (pgbench -T): seconds, or with a unit as in postgresql.conf
    /// (30s, 5min) [default: 10 s].
    #[arg(
        short = 'T',
        long = "time",
        value_name = "DURATION",
        conflicts_with = "transactions",
        allow_hyphen_values = true
    )]
    pub time: Option<String>,
    /// Transactions per client, instead of a duration (pgbench -t).
    #[arg(short = 't', long = "transactions", value_name = "NUM")]
    pub transactions: Option<u64>,
    /// pgbench scale factor: 100,000 accounts rows (about 17 MB) per unit.
    #[arg(short, long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub scale: u64,
    /// Rate-limited run (pgbench -R): start TPS transactions per second in
    /// all, on a Poisson schedule; latency counts from the scheduled start and
    /// the schedule lag is reported. Shows the latency an application sees at
    /// its real arrival rate, not at saturation.
    #[arg(
        short = 'R',
        long = "rate",
        value_name = "TPS",
        allow_negative_numbers = true
    )]
    pub rate: Option<f64>,
    /// With -R (pgbench -L): skip transactions that would start more than MS
    /// late, and count those that finish over MS.
    #[arg(
        short = 'L',
        long = "latency-limit",
        value_name = "MS",
        requires = "rate",
        allow_negative_numbers = true
    )]
    pub latency_limit: Option<f64>,
    /// Print a progress line every SECONDS (pgbench -P).
    #[arg(
        short = 'P',
        long = "progress",
        value_name = "SECONDS",
        allow_negative_numbers = true
    )]
    pub progress: Option<f64>,
    /// Set a PostgreSQL setting, with postgresql.conf units
    /// (e.g. --set shared_buffers=16GB --set commit_delay=10). Repeatable.
    /// Modelled: shared_buffers, wal_buffers, synchronous_commit,
    /// commit_delay, commit_siblings, full_page_writes, checkpoint_timeout,
    /// max_wal_size, min_wal_size, checkpoint_completion_target,
    /// bgwriter_delay, bgwriter_lru_maxpages, bgwriter_lru_multiplier,
    /// wal_writer_delay, wal_writer_flush_after, autovacuum,
    /// synchronous_standby_names (with --standby), archive_mode and
    /// archive_timeout (with --archive).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Read settings from a postgresql.conf, following its include,
    /// include_if_exists and include_dir lines as PostgreSQL does (settings
    /// pgiosim does not model are ignored with a one-line notice); --set
    /// wins over the file.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Logical CPUs (vCPUs) of the modelled server; CPU time is modelled,
    /// not burned [default: this machine's count].
    #[arg(long, value_name = "N")]
    pub cpus: Option<u32>,
    /// Hardware threads per physical core of the modelled server: 2 when
    /// its vCPUs are hyperthreads (AWS, Azure and GCP x86 instances), 1
    /// when each is a core (Graviton, or SMT off). With 2, a statement that
    /// starts while more than half the vCPUs are busy shares a core and
    /// runs 2 / 1.2 times as long (two threads do 1.2 cores' work)
    /// [default: 1; with `model --instance`, the preset's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=8))]
    pub threads_per_core: Option<u32>,
    /// Speed of one of the modelled server's threads alone on a core,
    /// relative to the machine the workload's CPU figures were measured on
    /// (see the workload's `sources`): 1.5 runs every burst of CPU in two
    /// thirds of the time.
    #[arg(long, value_name = "FACTOR", default_value_t = 1.0)]
    pub cpu_speed: f64,
    /// pgbench's query protocol (-M): simple sends each statement's text
    /// and PostgreSQL parses and plans it every time; prepared parses it
    /// once per connection and reuses the plan, which costs less CPU per
    /// statement; extended is simple's work in more protocol messages.
    #[arg(short = 'M', long = "protocol", value_enum, default_value_t = QueryMode::Simple)]
    pub protocol: QueryMode,
    /// The client runs on another host, this round trip away (e.g. 150us,
    /// 0.5ms), as in most published benchmarks: each statement waits one
    /// network round trip, and pgbench's CPU is not on the server's cores.
    /// Default: the client on the database host, over a Unix socket.
    #[arg(long, value_name = "DURATION", conflicts_with = "jobs")]
    pub client_rtt: Option<String>,
    /// pgbench's worker threads (pgbench -j) running on the database host:
    /// every statement waits for its client's thread to get a core and spend
    /// the workload's client_cpu_us_per_statement (clients are spread over
    /// the threads as pgbench does). One thread serving many clients delays
    /// them all when it waits for a core. The round trip is then the CPU of
    /// waking the backend, spent only when a core was idle. Default: no
    /// client threads; the client's CPU is part of each statement's and
    /// the round trip is a delay (a client across the network).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<u32>,
    /// Model a kernel page cache of SIZE in front of the data file (e.g. 4GB):
    /// buffer-pool misses it holds cost no I/O. It keeps Linux's inactive
    /// and active lists, and the WAL written through it takes its share of
    /// the room. Default: none, every miss reads from the disk.
    #[arg(long, value_name = "SIZE")]
    pub os_cache: Option<String>,
    /// Start the modelled page cache as `pgbench -i` leaves it (the
    /// primary keys' indexes it built last, up to --os-cache), not empty:
    /// a benchmark run straight after loading its data.
    #[arg(long)]
    pub after_init: bool,
    /// Write the full result (settings, summary, breakdown, I/O, per-second
    /// series) as JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seed of the workload's random generator (and of the device model);
    /// the same seed repeats a `model` run exactly [default: random, printed].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print nothing but the report (no notices, no progress bar).
    #[arg(short, long)]
    pub quiet: bool,
    /// A streaming-replication standby: name=NAME,rtt=DURATION
    /// [,rtt_p99=DURATION][,device=NAME|FILE][,replay=RATE]. Repeatable. It
    /// receives the WAL once flushed locally, over a network round trip of
    /// rtt (log-normal up to rtt_p99), writes it, fdatasyncs it and replies,
    /// and replays it at replay (default 40MB/s, a guess). With
    /// synchronous_standby_names (e.g. --set
    /// "synchronous_standby_names=ANY 1 (s1, s2)") a commit waits after its
    /// local flush for its quorum as synchronous_commit says (remote_write,
    /// on, remote_apply): the sync_rep bucket. device= (model only) is the
    /// standby's WAL disk [default: --device]; in `run` its WAL goes to real
    /// files in --standby-dir.
    #[arg(long = "standby", value_name = "SPEC")]
    pub standbys: Vec<String>,
    /// Read standbys from FILE: one --standby SPEC per line, # comments.
    #[arg(long, value_name = "FILE")]
    pub standby_file: Option<PathBuf>,
    /// The WAL archive, with --set archive_mode=on: a named target (s3:
    /// 150 ms and 50 MB/s per segment push, one at a time as
    /// archive_command does; local: a second local disk, a guess), the
    /// same with overrides (s3,parallel=8, as pgBackRest's async push or
    /// WAL-G do), or latency=DURATION,throughput=RATE[,parallel=N]. Each
    /// completed 16 MiB segment is pushed in order, taking latency plus its
    /// size at throughput; the report says whether archiving keeps up with
    /// the WAL, the backlog over the run (pg_wal grows by it) and the RPO
    /// it implies, and warns when the backlog grows. archive_timeout
    /// (--set archive_timeout=60) forces a switch to a new segment. The
    /// upload is modelled time in `run` too; its read of pg_wal is not
    /// modelled.
    #[arg(long, value_name = "TARGET")]
    pub archive: Option<String>,
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
    /// local NVMe. Explicit flags win over the preset.
    #[arg(long, value_name = "SIZE")]
    pub instance: Option<String>,
}

/// Default duration when neither -T nor -t is given.
const DEFAULT_DURATION: u64 = 10 * SEC;

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
        Command::Vacuum(a) => json(&a.json),
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
        Command::Profile(crate::calibrate::ProfileCommand::FromFio(a)) => {
            v.push(("-o", a.output.clone()));
        }
        Command::Profile(crate::calibrate::ProfileCommand::FromYabs(a)) => {
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

/// Run the parsed command; returns the process exit code on success.
pub fn execute(cli: Cli, stop: Arc<AtomicBool>) -> Result<i32> {
    for (flag, path) in outputs(&cli.command) {
        crate::output::check_writable(flag, &path)?;
    }
    match cli.command {
        Command::Run(args) => run(&args, stop),
        Command::Model(args) => model(&args, stop),
        Command::Vacuum(args) => vacuum(&args, stop),
        Command::Devices(args) => {
            devices(&args);
            Ok(0)
        }
        Command::Instances => {
            instances();
            Ok(0)
        }
        Command::Prepare(args) => {
            let workload = Script::mix(&args.workload.parts()?, args.scale)?;
            let dd = DataDir::new(&args.dirs.dir, args.dirs.wal_dir.as_deref());
            let held = datafiles::lock(&dd)?;
            let outcome = datafiles::prepare_locked(
                &dd,
                &layout_for(&workload, args.scale),
                progress_bar_wanted(args.quiet),
                &held,
                &stop,
            )?;
            if !args.quiet {
                eprintln!("{}: {}", dd.dir.display(), prepared_word(outcome));
            }
            Ok(0)
        }
        Command::Cleanup(dirs) => {
            let dd = DataDir::new(&dirs.dir, dirs.wal_dir.as_deref());
            // Standbys' files in their default place first, so that DIR
            // can go if pgiosim made it and nothing else is left.
            let mut removed = Vec::new();
            for sd in default_standby_dirs(&dd.dir) {
                removed.extend(datafiles::cleanup(&sd)?);
            }
            removed.extend(datafiles::cleanup(&dd)?);
            for p in &removed {
                println!("removed {}", p.display());
            }
            if removed.is_empty() {
                println!("nothing of pgiosim's to remove in {}", dd.dir.display());
            }
            Ok(0)
        }
        Command::Calibrate(args) => crate::calibrate::calibrate(&args, stop),
        Command::Profile(cmd) => crate::calibrate::profile_command(&cmd),
        Command::Capture(args) => crate::capture::execute(&args, &stop),
        Command::Iobench(args) => {
            bench::iobench(&args, &stop)?;
            Ok(0)
        }
        Command::Sweep(args) => crate::sweep::sweep(&args, &stop),
        Command::Compare(args) => crate::compare::compare(&args),
        Command::Report(args) => crate::report::html::report(&args),
    }
}

fn prepared_word(p: Prepared) -> &'static str {
    match p {
        Prepared::Reused => "data set already prepared, reused",
        Prepared::Created => "data set prepared",
    }
}

pub(crate) fn progress_bar_wanted(quiet: bool) -> bool {
    !quiet && std::io::stderr().is_terminal()
}

fn layout_for(workload: &dyn Workload, scale: u64) -> Layout {
    Layout {
        data_blocks: workload.data_blocks(),
        wal_segments: WAL_SEGMENTS,
        // The layout, not the workload's name: pgbench's built-ins and their
        // mixes share one data set.
        description: format!("scale {scale}, {} blocks", workload.data_blocks()),
    }
}

/// Resolve settings: defaults, then --config, then each --set.
pub fn resolve_settings(config: Option<&Path>, sets: &[String], quiet: bool) -> Result<Settings> {
    let mut s = Settings::default();
    if let Some(path) = config {
        let ignored = s.apply_config_file(path).map_err(bad_input)?;
        if !ignored.is_empty() && !quiet {
            eprintln!(
                "notice: {}: ignoring {} setting(s) pgiosim does not model: {}",
                path.display(),
                ignored.len(),
                ignored.join(", ")
            );
        }
    }
    for a in sets {
        s.set_assignment(a)
            .map_err(|e| usage(format!("--set {a}: {e}")))?;
    }
    Ok(s)
}

/// Check the run's shape and build the core's configuration.
fn core_config(
    args: &WorkloadArgs,
    s: &Settings,
    workload: &dyn Workload,
    seed: u64,
) -> Result<CoreConfig> {
    let client_threads = match args.jobs {
        Some(0) => return Err(usage("-j/--jobs: must be at least 1")),
        Some(j) if j > args.clients => {
            return Err(usage(format!(
                "-j/--jobs {j}: more threads than the {} clients (pgbench refuses that too)",
                args.clients
            )));
        }
        Some(j) => j,
        None => 0,
    };
    if args.clients == 0 {
        return Err(usage(
            "-c/--client: the number of clients must be at least 1",
        ));
    }
    let duration = match (&args.time, args.transactions) {
        (Some(t), _) => match crate::units::parse_duration(t) {
            Ok(ns) if ns > 0 => Some(ns),
            Ok(_) => {
                return Err(usage(format!(
                    "-T/--time {t}: the duration must be more than 0, in seconds or with a unit (30s, 5min)"
                )));
            }
            Err(e) => return Err(usage(format!("-T/--time {t}: {e}"))),
        },
        (None, Some(0)) => return Err(usage("-t/--transactions: must be at least 1")),
        (None, Some(_)) => None,
        (None, None) => Some(DEFAULT_DURATION),
    };
    let cpus = match args.cpus {
        Some(0) => return Err(usage("--cpus: must be at least 1")),
        Some(n) => n,
        None => std::thread::available_parallelism().map_or(1, |n| n.get() as u32),
    };
    let threads_per_core = args.threads_per_core.unwrap_or(1);
    if threads_per_core > 1 && !cpus.is_multiple_of(threads_per_core) {
        return Err(usage(format!(
            "--threads-per-core {threads_per_core}: --cpus {cpus} is not a whole number of cores \
             of {threads_per_core} threads"
        )));
    }
    if !(args.cpu_speed.is_finite() && args.cpu_speed > 0.0 && args.cpu_speed <= 100.0) {
        return Err(usage(format!(
            "--cpu-speed: must be a factor between 0 and 100 (1 = the machine the workload's CPU figures come from), got {}",
            args.cpu_speed
        )));
    }
    let nbuffers = (s.shared_buffers_bytes / PAGE_BYTES) as u32;
    // PostgreSQL refuses to start with fewer than 2 buffers per connection
    // (check in postmaster: "shared_buffers must be at least twice max_connections").
    let backends = args.clients as u64 + 3;
    if (nbuffers as u64) < 2 * backends {
        return Err(usage(format!(
            "shared_buffers = {} is too small for {} clients: PostgreSQL needs at least 2 buffers per backend, i.e. {} here",
            crate::units::format_memory(s.shared_buffers_bytes),
            args.clients,
            crate::units::format_memory(2 * backends * PAGE_BYTES)
        )));
    }
    let os_cache_pages = match &args.os_cache {
        None => 0,
        Some(text) => {
            let bytes = crate::units::parse_memory_bytes(text).ok_or_else(|| {
                usage(format!(
                    "--os-cache {text}: not a size; write it as postgresql.conf does, e.g. 512MB or 4GB"
                ))
            })?;
            bytes / PAGE_BYTES
        }
    };
    if args.after_init && os_cache_pages == 0 {
        return Err(usage(
            "--after-init: there is no page cache to start full; give --os-cache SIZE (or, for model, --instance)",
        ));
    }
    if let Some(r) = args.rate
        && !(r.is_finite() && r > 0.0)
    {
        return Err(usage(format!(
            "-R/--rate: must be more than 0 transactions per second, got {r}"
        )));
    }
    let latency_limit = match args.latency_limit {
        None => None,
        Some(ms) if ms.is_finite() && ms > 0.0 => Some((ms * MS as f64) as u64),
        Some(ms) => {
            return Err(usage(format!(
                "-L/--latency-limit: must be more than 0 ms, got {ms}"
            )));
        }
    };
    let autovacuum_cost_limit = match s.autovacuum_vacuum_cost_limit {
        -1 => s.vacuum_cost_limit,
        n => n as u32,
    };
    let autovacuum_cost_delay_ms = match s.autovacuum_vacuum_cost_delay_ms {
        -1 => s.vacuum_cost_delay_ms,
        n => n as u64,
    };
    Ok(CoreConfig {
        rate: args.rate,
        latency_limit,
        autovacuum: s.autovacuum,
        autovacuum_naptime: s.autovacuum_naptime_s * SEC,
        autovacuum_cost_limit,
        autovacuum_cost_delay: autovacuum_cost_delay_ms * MS,
        vacuum_table: None,
        vacuum_cost_limit: s.vacuum_cost_limit,
        vacuum_cost_delay: s.vacuum_cost_delay_ms * MS,
        clients: args.clients,
        cpus,
        threads_per_core,
        cpu_speed: args.cpu_speed,
        duration,
        transactions_per_client: args.transactions,
        seed,
        nbuffers,
        wal_buffers_bytes: s.wal_buffers_effective_bytes(),
        synchronous_commit: s.synchronous_commit,
        replication: crate::standby::replication_config(
            &crate::standby::gather(&args.standbys, args.standby_file.as_deref())
                .map_err(|e| usage(format!("{e:#}")))?,
            s,
            seed,
            WAL_SEGMENTS,
        )
        .map_err(|e| usage(format!("{e:#}")))?,
        archive: crate::archive::archive_config(args.archive.as_deref(), s)
            .map_err(|e| usage(format!("{e:#}")))?,
        commit_delay: s.commit_delay_us * US,
        commit_siblings: s.commit_siblings,
        full_page_writes: s.full_page_writes,
        checkpoint_timeout: s.checkpoint_timeout_s * SEC,
        checkpoint_completion_target: s.checkpoint_completion_target,
        checkpoint_segments: s.checkpoint_segments(),
        bgwriter_delay: s.bgwriter_delay_ms * MS,
        bgwriter_lru_maxpages: s.bgwriter_lru_maxpages,
        bgwriter_lru_multiplier: s.bgwriter_lru_multiplier,
        wal_writer_delay: s.wal_writer_delay_ms * MS,
        os_cache_pages,
        os_cache_after_load: args.after_init,
        wal_segments: WAL_SEGMENTS,
        round_trip: workload.round_trip(),
        read_cpu: workload.read_cpu(),
        write_cpu: workload.write_cpu(),
        cpu_growth: workload.cpu_growth(),
        client_threads,
        client_cpu: workload.client_cpu(),
        wal_flush_cpu: WAL_FLUSH_CPU,
        backend_flush_after: s.backend_flush_after_bytes,
        bgwriter_flush_after: s.bgwriter_flush_after_bytes,
        checkpoint_flush_after: s.checkpoint_flush_after_bytes,
    })
}

/// Prefix of a standby's directory under --standby-dir (or --dir).
const STANDBY_DIR_PREFIX: &str = "standby-";

/// Each standby's directory: `<standby-dir>/standby-<name>` (standby-dir
/// defaults to --dir), its WAL in `pg_wal` there.
fn standby_dirs(args: &RunArgs, decls: &[crate::standby::StandbyDecl]) -> Vec<DataDir> {
    let root = args.standby_dir.as_deref().unwrap_or(&args.dirs.dir);
    decls
        .iter()
        .map(|d| DataDir::new(&root.join(format!("{STANDBY_DIR_PREFIX}{}", d.name)), None))
        .collect()
}

/// The standby directories `run` made in `dir` by default (for cleanup).
fn default_standby_dirs(dir: &Path) -> Vec<DataDir> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut dirs: Vec<DataDir> = entries
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with(STANDBY_DIR_PREFIX)
                && e.file_type().is_ok_and(|t| t.is_dir())
        })
        .map(|e| DataDir::new(&e.path(), None))
        .collect();
    dirs.sort_by(|a, b| a.dir.cmp(&b.dir));
    dirs
}

/// A standby's files: WAL segments like the primary's (and an empty data
/// file, only a header: the standby's data pages are not modelled).
fn standby_layout() -> Layout {
    Layout {
        data_blocks: 0,
        wal_segments: WAL_SEGMENTS,
        description: "standby WAL".into(),
    }
}

/// Open the files (the primary's, then each standby's WAL) and build the
/// device the user asked for.
fn open_device(
    args: &RunArgs,
    dd: &DataDir,
    layout: &Layout,
    standbys: &[DataDir],
    max_in_flight: u32,
) -> Result<Box<dyn Device>> {
    let open = || -> Result<datafiles::OpenFiles> {
        let mut files = datafiles::open(dd, layout, !args.buffered)?;
        for sd in standbys {
            files.attach_standby(datafiles::open(sd, &standby_layout(), !args.buffered)?);
        }
        Ok(files)
    };
    let files = open()?;
    // One psync thread per possible outstanding I/O: every client, plus the
    // checkpointer, bgwriter and the WAL flush.
    let threads = max_in_flight as usize;
    match args.io_engine {
        EngineChoice::Psync => Ok(Box::new(PsyncDevice::new(files, threads)?)),
        EngineChoice::IoUring => Ok(Box::new(
            UringDevice::new(files, max_in_flight).context("--io-engine io-uring")?,
        )),
        EngineChoice::Auto => match UringDevice::new(files, max_in_flight) {
            Ok(d) => Ok(Box::new(d)),
            Err(e) => {
                if !args.w.quiet {
                    eprintln!("notice: io_uring is not available ({e:#}); using the psync engine");
                }
                Ok(Box::new(PsyncDevice::new(open()?, threads)?))
            }
        },
    }
}

/// What `run` and `model` share: the settings, the workload and the core's
/// configuration, checked.
struct Plan {
    settings: Settings,
    workload: Script,
    cfg: CoreConfig,
    progress: Option<Nanos>,
}

fn plan(w: &WorkloadArgs) -> Result<Plan> {
    let settings = resolve_settings(w.config.as_deref(), &w.set, w.quiet)?;
    let mut workload = Script::mix(&w.choice.parts()?, w.scale)?;
    workload.use_query_mode(w.protocol);
    if let Some(text) = &w.client_rtt {
        let rtt = crate::units::parse_duration_ns(text).ok_or_else(|| {
            usage(format!(
                "--client-rtt {text}: not a duration; write it with a unit, e.g. 150us or 0.5ms"
            ))
        })?;
        workload.client_elsewhere(rtt);
    }
    if w.jobs.is_some() {
        workload.use_client_threads();
    }
    let seed = w.seed.unwrap_or_else(rand::random);
    let cfg = core_config(w, &settings, &workload, seed)?;
    let progress = match w.progress {
        None => None,
        Some(p) if p.is_finite() && p > 0.0 => Some((p * SEC as f64) as u64),
        Some(p) => {
            return Err(usage(format!(
                "-P/--progress: must be more than 0 seconds, got {p}"
            )));
        }
    };
    Ok(Plan {
        settings,
        workload,
        cfg,
        progress,
    })
}

fn run_info(
    mode: &str,
    w: &WorkloadArgs,
    cfg: &CoreConfig,
    plan_workload_name: (&str, &str),
) -> RunInfo {
    RunInfo {
        mode: mode.into(),
        workload: plan_workload_name.0.into(),
        transaction_type: plan_workload_name.1.into(),
        clients: cfg.clients,
        cpus: cfg.cpus,
        threads_per_core: cfg.threads_per_core,
        cpu_speed: cfg.cpu_speed,
        query_mode: w.protocol.name().into(),
        jobs: cfg.client_threads,
        client_rtt_us: w.client_rtt.as_ref().map(|_| cfg.round_trip as f64 / 1e3),
        duration_s: cfg.duration.map(|d| d as f64 / 1e9),
        transactions_per_client: cfg.transactions_per_client,
        scale: w.scale,
        io_engine: String::new(),
        data_io: String::new(),
        os_cache_bytes: cfg.os_cache_pages * PAGE_BYTES,
        dir: String::new(),
        wal_dir: String::new(),
        seed: cfg.seed,
        device: None,
        timer_lag: None,
    }
}

/// Check the flags of one run (settings, workload, shape) without running it.
pub(crate) fn check_plan(w: &WorkloadArgs) -> Result<()> {
    plan(w).map(drop)
}

/// Drive the database on `dev` and build the result; prints only -P lines.
fn execute_plan<D: Device + ?Sized>(
    plan: Plan,
    info: RunInfo,
    dev: &mut D,
    stop: &Arc<AtomicBool>,
) -> Result<RunResult> {
    let mut info = info;
    let mut db = Database::new(plan.cfg, Box::new(plan.workload));
    let (ending, lag) = driver::drive(&mut db, dev, stop, plan.progress, &mut |p| {
        eprintln!("{}", text::progress_line(&p));
    })?;
    if info.mode == "run" {
        info.timer_lag = Some(TimerLagFigures {
            timers: lag.timers,
            mean_us: lag.mean_us(),
            p99_us: lag.quantile_us(0.99),
            max_us: lag.max_us(),
        });
    }
    let partial = ending == Ending::Interrupted;
    Ok(RunResult::from_database(
        &db,
        info,
        plan.settings.to_json(),
        partial,
    ))
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

fn run(args: &RunArgs, stop: Arc<AtomicBool>) -> Result<i32> {
    let (result, emulation) = run_result(args, &stop)?;
    let code = print_result(&result, &args.w)
        .with_context(|| format!("run in {}", args.dirs.dir.display()))?;
    if let Some(summary) = emulation {
        eprintln!("{summary}");
    }
    Ok(code)
}

/// Prepare (or check) the data set `run` with these flags needs; for `sweep`.
pub(crate) fn prepare_run(args: &RunArgs, stop: &AtomicBool) -> Result<()> {
    let workload = Script::mix(&args.w.choice.parts()?, args.w.scale)?;
    let dd = DataDir::new(&args.dirs.dir, args.dirs.wal_dir.as_deref());
    let layout = layout_for(&workload, args.w.scale);
    let held = datafiles::lock(&dd)?;
    datafiles::prepare_locked(&dd, &layout, progress_bar_wanted(args.w.quiet), &held, stop)?;
    Ok(())
}

/// `run` without the report (also for `sweep`): the result, and with
/// --emulate the emulation's summary line.
pub(crate) fn run_result(
    args: &RunArgs,
    stop: &Arc<AtomicBool>,
) -> Result<(RunResult, Option<String>)> {
    let w = &args.w;
    let plan = plan(w)?;
    let dd = DataDir::new(&args.dirs.dir, args.dirs.wal_dir.as_deref());
    let layout = layout_for(&plan.workload, w.scale);
    // Held to the end of the run: a second pgiosim on these files is refused.
    let _held = datafiles::lock(&dd)?;
    let prepared =
        datafiles::prepare_locked(&dd, &layout, progress_bar_wanted(w.quiet), &_held, stop)?;
    if stop.load(std::sync::atomic::Ordering::Relaxed) {
        return Err(
            Interrupted("interrupted after preparing the data set, before the run".into()).into(),
        );
    }
    if !w.quiet {
        eprintln!(
            "{}: {} (scale {}, {:.0} MB); seed {}",
            dd.dir.display(),
            prepared_word(prepared),
            w.scale,
            (layout.data_blocks * PAGE_BYTES) as f64 / 1e6,
            plan.cfg.seed
        );
    }
    // Through the page cache, shared_buffers' memory must be taken from it
    // as the postmaster takes it (see engine::shared_memory).
    let _shared_buffers = if args.buffered {
        let held =
            crate::engine::shared_memory::SharedMemory::hold(plan.settings.shared_buffers_bytes)?;
        if !w.quiet {
            eprintln!(
                "holding {} of shared memory for shared_buffers, as PostgreSQL does, so the \
                 page cache has the room it would have",
                crate::units::format_memory(held.len() as u64)
            );
        }
        Some(held)
    } else {
        None
    };
    let decls = crate::standby::gather(&w.standbys, w.standby_file.as_deref())?;
    if let Some(d) = decls.iter().find(|d| d.device.is_some()) {
        return Err(usage(format!(
            "standby {}: device= is for `model`; in `run` a standby's WAL goes to real files \
             in --standby-dir (put that on the disk the standby should have)",
            d.name
        )));
    }
    let standby_dirs = standby_dirs(args, &decls);
    for sd in &standby_dirs {
        datafiles::prepare(sd, &standby_layout(), progress_bar_wanted(w.quiet))?;
    }
    // Each standby has one WAL I/O in flight at most.
    let max_in_flight = w.clients + 4 + decls.len() as u32;
    let mut dev = open_device(args, &dd, &layout, &standby_dirs, max_in_flight)?;
    let mut emulation = None;
    if let Some(arg) = &args.emulate {
        let (d, handle, profile) = crate::engine::emulate::wrap(dev, arg, plan.cfg.seed)?;
        dev = d;
        emulation = Some((handle, profile));
    }
    let names = (
        plan.workload.name().to_string(),
        plan.workload.transaction_type().to_string(),
    );
    let mut info = run_info("run", w, &plan.cfg, (&names.0, &names.1));
    info.io_engine = dev.name().into();
    info.data_io = if args.buffered { "buffered" } else { "direct" }.into();
    info.dir = dd.dir.display().to_string();
    info.wal_dir = dd.wal_dir.display().to_string();
    info.device = emulation.as_ref().map(|(_, p)| p.to_json());
    let result = execute_plan(plan, info, dev.as_mut(), stop)
        .with_context(|| format!("run in {}", dd.dir.display()))?;
    Ok((result, emulation.map(|(h, _)| h.stats().summary())))
}

fn model(args: &ModelArgs, stop: Arc<AtomicBool>) -> Result<i32> {
    let result = model_result(args, &stop)?;
    print_result(&result, &args.w)
}

/// The preset `--instance NAME` names.
fn instance_arg(name: Option<&str>) -> Result<Option<&'static crate::instance::Instance>> {
    match name {
        None => Ok(None),
        Some(name) => Ok(Some(crate::instance::lookup(name).ok_or_else(|| {
            usage(format!(
                "--instance {name}: not a preset; see `pgiosim instances` (e.g. m6id.4xlarge, \
                 r6i.2xlarge, Standard_D16s_v5, n2-standard-16)"
            ))
        })?)),
    }
}

/// The device `model --device D --instance I` runs on (for `sweep`'s
/// checks).
pub(crate) fn model_device_for(
    device: Option<&str>,
    instance: Option<&str>,
    quiet: bool,
) -> Result<Profile> {
    model_device(device, instance_arg(instance)?, quiet)
}

/// `model`'s plan and device: the flags with the --instance preset filled in
/// where they were not given.
fn model_setup(args: &ModelArgs) -> Result<(Plan, Profile)> {
    let inst = instance_arg(args.instance.as_deref())?;
    let mut w = args.w.clone();
    let mut notice = None;
    if let Some(i) = inst {
        if w.cpus.is_none() {
            w.cpus = Some(i.vcpus);
        }
        if w.threads_per_core.is_none() {
            w.threads_per_core = Some(i.threads_per_core);
        }
        if w.os_cache.is_none() {
            let s = resolve_settings(w.config.as_deref(), &w.set, true)?;
            let bytes = i.page_cache_bytes(s.shared_buffers_bytes).map_err(usage)?;
            w.os_cache = Some(format!("{}kB", bytes / 1024));
            let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
            notice = Some(format!(
                "page cache {} (RAM {} − shared_buffers {} − {} for the kernel and backends)",
                gib(bytes),
                gib(i.memory_bytes()),
                gib(s.shared_buffers_bytes),
                gib(crate::instance::overhead_bytes(i.memory_bytes()))
            ));
        }
    }
    let plan = plan(&w)?;
    let profile = model_device(args.device.as_deref(), inst, w.quiet)?;
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
    Ok((plan, profile))
}

/// The device `model` runs on: --device, resolved against --instance.
fn model_device(
    device: Option<&str>,
    inst: Option<&'static crate::instance::Instance>,
    quiet: bool,
) -> Result<Profile> {
    use crate::device::profile::INSTANCE_STORE;
    let Some(i) = inst else {
        return load_profile(device.unwrap_or("nvme"));
    };
    let store = || {
        let base = Profile::shipped("nvme").expect("nvme is shipped");
        i.store_profile(&base).ok_or_else(|| {
            usage(format!(
                "--instance {}: has no instance store; give --device, e.g. gp3 or \
                 gp3:iops=6000,mibps=250 for an EBS volume",
                i.name
            ))
        })
    };
    match device {
        None | Some(INSTANCE_STORE) => store(),
        // Another size's store, or the store named by its size: no volume
        // limits apply to a local disk.
        Some(d) if d.starts_with("instance-store:") || crate::instance::lookup(d).is_some() => {
            load_profile(d)
        }
        Some(d) => {
            let p = load_profile(d)?;
            match crate::device::provisioned::provider_of(d) {
                Some(prov) if prov == i.provider.name() => Ok(i.limit_volume(&p)),
                Some(prov) => Err(usage(format!(
                    "--device {d} is an {prov} volume, --instance {} a {} server: choose a \
                     volume of the same provider",
                    i.name,
                    i.provider.name()
                ))),
                None => {
                    if !quiet {
                        eprintln!(
                            "notice: --device {d} is not one of {}'s volume types: the \
                             instance's volume limits are not applied to it",
                            i.provider.name()
                        );
                    }
                    Ok(p)
                }
            }
        }
    }
}

/// `model` without the report: the result of one run (also for `sweep`).
pub(crate) fn model_result(args: &ModelArgs, stop: &Arc<AtomicBool>) -> Result<RunResult> {
    let w = &args.w;
    let (plan, profile) = model_setup(args)?;
    if !w.quiet {
        eprintln!("model: device {}; seed {}", profile.name, plan.cfg.seed);
    }
    let mut dev = sim_device(&profile, &plan.cfg, w)?;
    let names = (
        plan.workload.name().to_string(),
        plan.workload.transaction_type().to_string(),
    );
    let mut info = run_info("model", w, &plan.cfg, (&names.0, &names.1));
    info.io_engine = format!("device model {}", profile.name);
    info.data_io = "modelled".into();
    info.device = Some(profile.to_json());
    execute_plan(plan, info, &mut dev, stop)
}

/// What `model` runs, built but not started: the database and its simulated
/// device (for benchmarks of the simulation itself).
pub fn model_parts(args: &ModelArgs) -> Result<(Database, SimDevice)> {
    let (plan, profile) = model_setup(args)?;
    let dev = sim_device(&profile, &plan.cfg, &args.w)?;
    Ok((Database::new(plan.cfg, Box::new(plan.workload)), dev))
}

/// The simulated device of `model`: the primary's, and each standby's
/// WAL device (its device=, else the primary's profile), each seeded apart.
fn sim_device(profile: &Profile, cfg: &CoreConfig, w: &WorkloadArgs) -> Result<SimDevice> {
    let mut dev = SimDevice::new(DeviceModel::new(profile, cfg.seed));
    let decls = crate::standby::gather(&w.standbys, w.standby_file.as_deref())?;
    for (i, d) in decls.iter().enumerate() {
        let p = match &d.device {
            Some(name) => {
                load_profile(name).with_context(|| format!("standby {}: device={name}", d.name))?
            }
            None => profile.clone(),
        };
        dev.add_standby(DeviceModel::new(&p, cfg.seed.wrapping_add(1 + i as u64)));
    }
    Ok(dev)
}

/// A shipped profile by name, or a profile JSON by path.
pub(crate) fn load_profile(name_or_path: &str) -> Result<Profile> {
    if let Some(p) = Profile::lookup(name_or_path) {
        return p.map_err(|e| usage(format!("--device {name_or_path}: {e}")));
    }
    let path = Path::new(name_or_path);
    if path.exists() {
        return Profile::load(path);
    }
    let names: Vec<String> = crate::device::profile::shipped()
        .into_iter()
        .map(|p| p.name)
        .collect();
    Err(usage(format!(
        "--device {name_or_path}: no such shipped profile or file; shipped: {}{}",
        names.join(", "),
        crate::device::profile::did_you_mean(name_or_path)
    )))
}

/// Write a JSON document to `path` ("-": standard output), for every `--json`.
pub(crate) fn write_json(path: &Path, result: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(result)? + "\n";
    output::write_file("--json", path, &text)
}

/// What `pgiosim vacuum` measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VacuumResult {
    pub schema: &'static str,
    pub schema_version: u32,
    /// "run" or "model".
    pub mode: String,
    pub device: String,
    pub partial: bool,
    pub bloat_bytes: u64,
    pub pages: u64,
    pub seconds: f64,
    /// Heap scanned per second.
    pub mb_per_s: f64,
    pub pages_read: u64,
    pub pages_hit: u64,
    pub pages_dirtied: u64,
    pub pages_written: u64,
    pub wal_bytes: u64,
    pub full_page_images: u64,
    pub cost_sleep_s: f64,
    pub settings: serde_json::Value,
}

fn vacuum(args: &VacuumArgs, stop: Arc<AtomicBool>) -> Result<i32> {
    let settings = resolve_settings(args.config.as_deref(), &args.set, args.quiet)?;
    let bytes = crate::units::parse_memory_bytes(&args.bloat)
        .filter(|b| *b >= PAGE_BYTES)
        .ok_or_else(|| {
            usage(format!(
                "--bloat {}: not a size of at least 8kB, e.g. 10GB",
                args.bloat
            ))
        })?;
    let pages = bytes / PAGE_BYTES;
    let spec_text = format!(
        r#"{{"name": "bloated-table", "description": "a bloated heap for pgiosim vacuum",
          "source": "pgiosim vacuum --bloat {bloat}: every page holds dead tuples",
          "tables": {{"bloated": {{"rows_per_scale": {rows}, "rows_per_page": 61}}}},
          "transactions": [{{"name": "none", "statements": [{{"sql": "VACUUM bloated"}}]}}],
          "cpu_us_per_statement": 0, "round_trip_us_per_statement": 0, "full_page_image_bytes": 7977}}"#,
        bloat = args.bloat,
        rows = pages * 61
    );
    let spec = workload::WorkloadSpec::from_json(&spec_text, "pgiosim vacuum")?;
    let workload = Script::new(&spec, 1)?;
    let mut wargs = WorkloadArgs::parse_defaults();
    wargs.seed = args.seed;
    let seed = args.seed.unwrap_or_else(rand::random);
    let mut cfg = core_config(&wargs, &settings, &workload, seed)?;
    cfg.clients = 0;
    cfg.duration = None;
    cfg.vacuum_table = Some("bloated".into());
    // The data set's lock (on the disk) is held until the vacuum is done.
    type Chosen = (
        &'static str,
        Box<dyn Device>,
        Option<datafiles::DataSetLock>,
    );
    let (mode, mut dev, _held): Chosen = match &args.device {
        Some(d) => {
            let profile = load_profile(d)?;
            (
                "model",
                Box::new(SimDevice::new(DeviceModel::new(&profile, seed))),
                None,
            )
        }
        None => {
            let dd = DataDir::new(&args.dirs.dir, args.dirs.wal_dir.as_deref());
            let layout = layout_for(&workload, 1);
            let held = datafiles::lock(&dd)?;
            datafiles::prepare_locked(&dd, &layout, progress_bar_wanted(args.quiet), &held, &stop)?;
            let files = datafiles::open(&dd, &layout, !args.buffered)?;
            let dev: Box<dyn Device> = match (args.io_engine, UringDevice::new(files, 8)) {
                (EngineChoice::Psync, _) | (EngineChoice::Auto, Err(_)) => Box::new(
                    PsyncDevice::new(datafiles::open(&dd, &layout, !args.buffered)?, 8)?,
                ),
                (_, Ok(d)) => Box::new(d),
                (EngineChoice::IoUring, Err(e)) => return Err(e.context("--io-engine io-uring")),
            };
            ("run", dev, Some(held))
        }
    };
    let device = args
        .device
        .clone()
        .unwrap_or_else(|| dev.name().to_string());
    let mut db = Database::new(cfg, Box::new(workload));
    let (ending, _) = driver::drive(&mut db, dev.as_mut(), &stop, None, &mut |_| {})?;
    let c = db.stats().counters;
    let seconds = db.end_time().unwrap_or(0) as f64 / 1e9;
    let r = VacuumResult {
        schema: "pgiosim.vacuum",
        schema_version: 1,
        mode: mode.into(),
        device,
        partial: ending == Ending::Interrupted,
        bloat_bytes: pages * PAGE_BYTES,
        pages,
        seconds,
        mb_per_s: if seconds > 0.0 {
            c.vacuum_pages as f64 * PAGE_BYTES as f64 / 1e6 / seconds
        } else {
            0.0
        },
        pages_read: c.vacuum_reads,
        pages_hit: c.vacuum_hits,
        pages_dirtied: c.vacuum_dirtied,
        pages_written: c.vacuum_writes,
        wal_bytes: db.wal_counters().bytes,
        full_page_images: c.full_page_images,
        cost_sleep_s: c.vacuum_sleep_ns as f64 / 1e9,
        settings: settings.to_json(),
    };
    use std::fmt::Write as _;
    let mut report = String::new();
    if r.partial {
        let _ = writeln!(
            report,
            "*** partial result: interrupted after {:.1} s ***",
            r.seconds
        );
    }
    let _ = writeln!(
        report,
        "vacuum of {} ({} pages) on {} ({}): {:.1} s, {:.1} MB/s",
        crate::units::format_memory(r.bloat_bytes),
        r.pages,
        r.device,
        r.mode,
        r.seconds,
        r.mb_per_s
    );
    let _ = writeln!(
        report,
        "  pages read {}, found in shared buffers {}, dirtied {}, written by vacuum {}",
        r.pages_read, r.pages_hit, r.pages_dirtied, r.pages_written
    );
    let _ = writeln!(
        report,
        "  WAL {:.1} MB ({} full-page images), cost-delay sleep {:.1} s",
        r.wal_bytes as f64 / 1e6,
        r.full_page_images,
        r.cost_sleep_s
    );
    output::report(&report, args.json.as_deref().is_some_and(output::is_stdout))?;
    if let Some(path) = &args.json {
        write_json(path, &r)?;
    }
    Ok(if r.partial { 130 } else { 0 })
}

impl WorkloadArgs {
    /// The defaults, as if no flag were given.
    fn parse_defaults() -> WorkloadArgs {
        #[derive(Parser)]
        struct Only {
            #[command(flatten)]
            w: WorkloadArgs,
        }
        Only::parse_from(["pgiosim"]).w
    }
}
