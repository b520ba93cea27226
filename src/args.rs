//! Flag groups that several commands share: where the files go, which
//! workload runs, and the workload's settings and report flags that `run`,
//! `model` and `sweep` take. Each command's own flags live with it; this
//! module depends on none of them, so commands import it and not each other.

use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::core::time::{MS, SEC};
use crate::datafiles::DataDir;
use crate::device::instance::CpuClass;
use crate::device::name::load_profile;
use crate::error::usage;
use crate::plan::{
    DEFAULT_DURATION, DEFAULT_PRECISION, Disk, EngineChoice, Length, MODEL_TIME_MAX, Mode,
    RunShape, SETTLE_CAP, Target, resolve_settings,
};
use crate::settings::Settings;
use crate::workload::{self, QueryMode};

/// Where the files go.
#[derive(Debug, Clone, Args)]
pub struct DirArgs {
    /// Directory of the data file (run and prepare create it if its parent
    /// exists).
    #[arg(long, default_value = "pgiosim-data", value_name = "DIR")]
    pub dir: PathBuf,
    /// Directory for the WAL segment files, like a separate pg_wal volume
    /// [default: DIR/pg_wal].
    #[arg(long, value_name = "DIR")]
    pub wal_dir: Option<PathBuf>,
}

/// The highest `-R`: a transaction started every nanosecond, the model's
/// clock tick; a higher rate rounds to a zero interval.
pub const RATE_MAX: f64 = 1e9;

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

/// The workload, its settings and the report: shared by `run` and `model`.
#[derive(Debug, Clone, Args)]
pub struct WorkloadArgs {
    #[command(flatten)]
    pub choice: WorkloadChoice,
    /// Number of concurrent clients (pgbench -c).
    #[arg(
        short,
        long = "client",
        value_name = "NUM",
        default_value_t = 1,
        allow_negative_numbers = true
    )]
    pub clients: u32,
    /// Duration (pgbench -T): seconds, or with a unit as in postgresql.conf
    /// (30s, 5min) [default: `run` 10 s; `model` until it knows its answer,
    /// see --precision].
    #[arg(
        short = 'T',
        long = "time",
        value_name = "DURATION",
        conflicts_with = "transactions",
        allow_hyphen_values = true
    )]
    pub time: Option<String>,
    /// Transactions per client, instead of a duration (pgbench -t).
    #[arg(
        short = 't',
        long = "transactions",
        value_name = "NUM",
        allow_negative_numbers = true
    )]
    pub transactions: Option<u64>,
    /// `model` without -T or -t runs until the steady state's tps is known
    /// to ±PCT at 95% (batch means after the warm-up MSER-5 finds), in a
    /// window Heidelberger and Welch's test finds stationary, over a whole
    /// checkpoint cycle where checkpoints occur, and at most 30 min of
    /// simulated time, or 4 h (and 50 million transactions) where whole
    /// autovacuum cycles of a large table are still to come [default: 2].
    /// `run` lasts -T (default 10 s).
    #[arg(long, value_name = "PCT", conflicts_with_all = ["time", "transactions"], allow_negative_numbers = true)]
    pub precision: Option<f64>,
    /// pgbench scale factor: 100,000 accounts rows (about 17 MB) per unit.
    #[arg(short, long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000), allow_negative_numbers = true)]
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
    #[arg(long, value_name = "N", allow_negative_numbers = true)]
    pub cpus: Option<u32>,
    /// Hardware threads per physical core of the modelled server: 2 when
    /// its vCPUs are hyperthreads (AWS, Azure and GCP x86 instances), 1
    /// when each is a core (Graviton, or SMT off). With 2, a statement that
    /// starts while more than half the vCPUs are busy shares a core and
    /// runs 2 / 1.2 times as long (two threads do 1.2 cores' work)
    /// [default: 1; with `model --instance`, the preset's].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=8), allow_negative_numbers = true)]
    pub threads_per_core: Option<u32>,
    /// The modelled server's processor: a CPU class key (xeon-8375c,
    /// graviton3) or its name as lscpu prints it ("Intel(R) Xeon(R)
    /// Platinum 8375C CPU @ 2.90GHz"); its cores run the workload's CPU
    /// figures at the class's speed (`pgiosim cpus` lists them with their
    /// Geekbench figures), or `host` for this machine's own, from its CPU
    /// probe [default: the EPYC 9454P the figures were
    /// measured on, speed 1; with `model --instance`, the preset's; with
    /// `run`, this host's from its CPU probe].
    #[arg(long, value_name = "NAME", conflicts_with = "cpu_speed")]
    pub cpu: Option<String>,
    /// The modelled server's RAM (e.g. 64GB): the page cache is what it
    /// leaves, RAM − shared_buffers − 5% (at least 1GB) for the kernel and
    /// the backends, as for an `--instance` preset; once that cache is
    /// full, every read from the device and every KiB written costs the
    /// kernel's reclaim CPU (docs/cpu-model.md). --os-cache gives the cache
    /// itself instead.
    #[arg(long, value_name = "SIZE", conflicts_with = "os_cache")]
    pub ram: Option<String>,
    /// Speed of one of the modelled server's threads alone on a core,
    /// relative to the machine the workload's CPU figures were measured on
    /// (the EPYC 9454P for the I/O path's, see docs/cpu-model.md): 1.5 runs
    /// every burst of CPU in two thirds of the time [default: 1; with
    /// `model --instance`, its CPU class's, e.g. 0.84 for m6id's Xeon 8375C].
    #[arg(long, value_name = "FACTOR", allow_negative_numbers = true)]
    pub cpu_speed: Option<f64>,
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
    #[arg(long, value_name = "DURATION", allow_hyphen_values = true)]
    pub client_rtt: Option<String>,
    /// pgbench's worker threads (pgbench -j) running on the database host:
    /// every statement waits for its client's thread to get a core and spend
    /// the workload's client_cpu_us_per_statement (clients are spread over
    /// the threads as pgbench does). One thread serving many clients delays
    /// them all when it waits for a core. The round trip is then the CPU of
    /// waking the backend, spent only when a core was idle. Default: no
    /// client threads; the client's CPU is part of each statement's and
    /// the round trip is a delay (a client across the network).
    /// With --client-rtt, as in published `-c 256 -j 16` runs, they are
    /// pgbench's threads on the client's host: not the server's cores, so
    /// the model is the same as without -j, and the report gives their
    /// number as pgbench does.
    #[arg(
        short = 'j',
        long = "jobs",
        value_name = "N",
        allow_negative_numbers = true
    )]
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
    /// The memory the model may hold (shared_buffers' descriptors and page
    /// table, the page cache's, the per-second series), estimated before
    /// it starts: larger is refused, naming its largest part.
    #[arg(long, value_name = "SIZE", default_value = crate::footprint::DEFAULT_MAX_MEMORY)]
    pub max_memory: String,
    /// Write the full result (settings, summary, breakdown, I/O, per-second
    /// series) as JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seed of the workload's random generator (and of the device model);
    /// the same seed repeats a `model` run exactly [default: random, printed].
    #[arg(long, allow_negative_numbers = true)]
    pub seed: Option<u64>,
    /// Print nothing but the report (no notices, no progress bar).
    #[arg(short, long)]
    pub quiet: bool,
    /// A streaming-replication standby: name=NAME,rtt=DURATION
    /// [,rtt_p99=DURATION][,device=NAME|FILE][,replay=RATE]. Repeatable. It
    /// receives the WAL once flushed locally, over a network round trip of
    /// rtt (log-normal up to rtt_p99), writes it, fdatasyncs it and replies,
    /// and replays it at replay, a full-page image's bytes too [default: the
    /// workload's WAL records over their measured replay CPU, 74MB/s for
    /// tpcb-like, and an image at its own measured restore CPU]. With
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

impl WorkloadArgs {
    /// `model`'s length: without -T or -t it runs until it knows the
    /// steady state (`--precision`, default ±2%).
    pub fn shape_for_model(&self) -> Result<RunShape> {
        let mut shape = self.shape()?;
        if self.time.is_none() && self.transactions.is_none() && self.precision.is_none() {
            shape.length = Length::Settle {
                precision: DEFAULT_PRECISION,
                cap: SETTLE_CAP,
            };
        }
        self.check_model_time(&shape)?;
        Ok(shape)
    }

    /// `model`'s -T, and -t at a -R, within [`MODEL_TIME_MAX`] of simulated
    /// time: a model with little to do still steps through every second.
    fn check_model_time(&self, shape: &RunShape) -> Result<()> {
        let max_s = MODEL_TIME_MAX / SEC;
        match (shape.length, shape.rate) {
            (Length::Duration(d), _) if d > MODEL_TIME_MAX => Err(usage(format!(
                "-T/--time {}: model simulates at most 7d ({max_s} s); give a shorter -T",
                self.time.as_deref().unwrap_or_default()
            ))),
            (Length::Transactions(n), Some(rate)) => {
                // -R is the rate of all the clients together, as in pgbench.
                let s = n as f64 * f64::from(shape.clients) / rate;
                if s > max_s as f64 {
                    return Err(usage(format!(
                        "-t/--transactions {n} at -R/--rate {rate}: about {s:.3e} s of simulated \
                         time, over the 7d ({max_s} s) model simulates; give a higher -R or a \
                         smaller -t"
                    )));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// `run`'s length: -T, -t or 10 s; a real disk is not run to a
    /// precision.
    pub fn shape_for_run(&self) -> Result<RunShape> {
        if self.precision.is_some() {
            return Err(usage(
                "--precision: only `model` stops on precision; `run` lasts -T (default 10 s)",
            ));
        }
        self.shape()
    }

    /// The run's shape these flags give, each value checked on its own.
    pub fn shape(&self) -> Result<RunShape> {
        let workload = self.choice.parts()?;
        let client_rtt = self.client_rtt()?;
        if self.jobs == Some(0) {
            return Err(usage("-j/--jobs: must be at least 1"));
        }
        let length = self.length()?;
        self.check_cpus()?;
        let (cpu, ram_bytes) = self.server()?;
        let (os_cache_bytes, max_memory) = self.memory()?;
        self.check_rate()?;
        let latency_limit = self.latency_limit_ns()?;
        let standbys = crate::standby::gather(&self.standbys, self.standby_file.as_deref())
            .map_err(|e| usage(format!("{e:#}")))?;
        let progress = self.progress_ns()?;
        Ok(RunShape {
            workload,
            scale: self.scale,
            clients: self.clients,
            length,
            rate: self.rate,
            latency_limit,
            cpus: self.cpus,
            threads_per_core: self.threads_per_core,
            cpu_speed: self.cpu_speed,
            cpu,
            cpu_probe: None,
            ram_bytes,
            protocol: self.protocol,
            client_rtt,
            jobs: self.jobs,
            os_cache_bytes,
            after_init: self.after_init,
            progress,
            seed: self.seed.unwrap_or_else(rand::random),
            standbys,
            archive: self.archive.clone(),
            quiet: self.quiet,
            max_memory,
            mode: Mode::Benchmark,
        })
    }

    /// How long the run lasts: -T, -t, the precision to reach or the
    /// default duration, with --precision refused beside -T or -t.
    fn length(&self) -> Result<Length> {
        let length = match (&self.time, self.transactions) {
            (Some(t), _) => match crate::units::parse_duration(t) {
                Ok(ns) if ns > 0 => Length::Duration(ns),
                Ok(_) => {
                    return Err(usage(format!(
                        "-T/--time {t}: the duration must be more than 0, in seconds or with a unit (30s, 5min)"
                    )));
                }
                Err(e) => return Err(usage(format!("-T/--time {t}: {e}"))),
            },
            (None, Some(0)) => return Err(usage("-t/--transactions: must be at least 1")),
            (None, Some(n)) => Length::Transactions(n),
            (None, None) => match self.precision {
                None => Length::Duration(DEFAULT_DURATION),
                Some(pct) => Length::Settle {
                    precision: pct / 100.0,
                    cap: SETTLE_CAP,
                },
            },
        };
        if let Some(pct) = self.precision {
            if self.time.is_some() || self.transactions.is_some() {
                return Err(usage(
                    "--precision: -T or -t fixes how long the run lasts; give one or the other",
                ));
            }
            crate::units::check_f64(
                "--precision",
                pct,
                0.1,
                50.0,
                "a percentage of the steady state's tps, e.g. 2 for ±2%",
            )?;
        }
        Ok(length)
    }

    /// Checks --cpus and --cpu-speed.
    fn check_cpus(&self) -> Result<()> {
        if self.cpus == Some(0) {
            return Err(usage("--cpus: must be at least 1"));
        }
        if let Some(speed) = self.cpu_speed {
            let (lo, hi) = crate::units::CPU_SPEED_RANGE;
            crate::units::check_f64(
                "--cpu-speed",
                speed,
                lo,
                hi,
                "a factor (1 = the machine the workload's CPU figures come from)",
            )?;
        }
        Ok(())
    }

    /// The page cache asked for (--os-cache) and the memory the model may
    /// take (--max-memory), in bytes.
    fn memory(&self) -> Result<(Option<u64>, u64)> {
        let os_cache_bytes = match &self.os_cache {
            None => None,
            Some(text) => Some(crate::units::parse_memory_bytes(text).ok_or_else(|| {
                usage(format!(
                    "--os-cache {text}: not a size; write it as postgresql.conf does, e.g. 512MB or 4GB"
                ))
            })?),
        };
        let max_memory = crate::units::parse_memory_bytes(&self.max_memory).ok_or_else(|| {
            usage(format!(
                "--max-memory {}: not a size; write it as postgresql.conf does, e.g. 8GB",
                self.max_memory
            ))
        })?;
        Ok((os_cache_bytes, max_memory))
    }

    /// Checks -R: more than 0, and at most [`RATE_MAX`].
    fn check_rate(&self) -> Result<()> {
        if let Some(r) = self.rate
            && !(r.is_finite() && r > 0.0)
        {
            return Err(usage(format!(
                "-R/--rate: must be more than 0 transactions per second, got {r}"
            )));
        }
        if let Some(r) = self.rate
            && r > RATE_MAX
        {
            return Err(usage(format!(
                "-R/--rate: at most {RATE_MAX:e} transactions per second (one a nanosecond, \
                 the model's clock tick), got {r:?}"
            )));
        }
        Ok(())
    }

    /// -L in nanoseconds.
    fn latency_limit_ns(&self) -> Result<Option<u64>> {
        match self.latency_limit {
            None => Ok(None),
            Some(ms) if ms.is_finite() && ms > 0.0 => {
                // From a microsecond (below it the limit rounds to nothing)
                // to -T's own bound.
                let ms = crate::units::check_f64(
                    "-L/--latency-limit",
                    ms,
                    0.001,
                    crate::units::DURATION_MAX_S as f64 * 1e3,
                    "a time in ms",
                )?;
                Ok(Some((ms * MS as f64) as u64))
            }
            Some(ms) => Err(usage(format!(
                "-L/--latency-limit: must be more than 0 ms, got {ms}"
            ))),
        }
    }

    /// -P's interval in nanoseconds.
    fn progress_ns(&self) -> Result<Option<u64>> {
        match self.progress {
            None => Ok(None),
            Some(p) => {
                let p = crate::units::check_f64(
                    "-P/--progress",
                    p,
                    crate::units::PROGRESS_MIN_S,
                    crate::units::DURATION_MAX_S as f64,
                    "an interval in seconds",
                )?;
                Ok(Some((p * SEC as f64) as u64))
            }
        }
    }

    /// The server's processor (`--cpu`; None for `host`, which the command
    /// probes) and RAM (`--ram`), each checked.
    fn server(&self) -> Result<(Option<&'static CpuClass>, Option<u64>)> {
        let cpu = match &self.cpu {
            // This host's own speed, from its CPU probe: the command probes it.
            Some(_) if self.cpu_is_host() => None,
            None => None,
            Some(name) => {
                let (class, by_name) = crate::device::instance::cpu_name::resolve(name)
                    .ok_or_else(|| usage(crate::device::instance::cpu_name::unknown(name)))?;
                if by_name && !self.quiet {
                    eprintln!(
                        "notice: --cpu {name}: taken as {} ({}), the one class whose processor \
                         has that name; another chip of the same core may run at another speed",
                        class.key, class.name
                    );
                }
                Some(class)
            }
        };
        let ram_bytes = match &self.ram {
            None => None,
            Some(text) => Some(
                crate::units::parse_memory_bytes(text)
                    .filter(|&b| b > 0)
                    .ok_or_else(|| {
                        usage(format!(
                            "--ram {text}: not a size; write it as postgresql.conf does, e.g. 64GB"
                        ))
                    })?,
            ),
        };
        Ok((cpu, ram_bytes))
    }

    /// `--client-rtt`, parsed.
    fn client_rtt(&self) -> Result<Option<u64>> {
        self.client_rtt
            .as_deref()
            .map(|text| {
                crate::units::parse_duration_ns(text).ok_or_else(|| {
                    usage(format!(
                        "--client-rtt {text}: not a duration; write it with a unit, e.g. 150us \
                         or 0.5ms"
                    ))
                })
            })
            .transpose()
    }

    /// `--cpu host`: this host's processor, at the speed its CPU probe
    /// measures (as `run` takes it by default).
    pub fn cpu_is_host(&self) -> bool {
        self.cpu
            .as_deref()
            .is_some_and(|c| c.trim().eq_ignore_ascii_case("host"))
    }

    /// The settings these flags give: defaults, --config, each --set.
    pub fn settings(&self) -> Result<Settings> {
        resolve_settings(self.config.as_deref(), &self.set, self.quiet)
    }
}

impl DirArgs {
    /// The data file's and WAL's directories.
    pub fn data_dir(&self) -> DataDir {
        DataDir::new(&self.dir, self.wal_dir.as_deref())
    }
}

/// The flags a one-shot command (`vacuum`, `catchup`) shares: on a model
/// or on the disk, its settings file, its engine and its output.
#[derive(Debug, Clone, Args)]
pub struct OneShotArgs {
    /// Model it on this device profile instead of running it on the disk.
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// Read settings from a postgresql.conf (--set wins over it).
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

impl OneShotArgs {
    /// The settings: defaults, --config, then each of `sets`.
    pub fn settings(&self, sets: &[String]) -> Result<Settings> {
        resolve_settings(self.config.as_deref(), sets, self.quiet)
    }

    /// The device profile's model, or the disk under `dirs`.
    pub fn target(&self, dirs: &DirArgs) -> Result<Target> {
        Ok(match &self.device {
            Some(d) => Target::Model(Box::new(load_profile(d)?)),
            None => Target::Disk(Disk {
                data: dirs.data_dir(),
                io_engine: self.io_engine,
                buffered: self.buffered,
                emulate: None,
                standby_root: dirs.dir.clone(),
            }),
        })
    }

    /// The seed given, or a random one.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or_else(rand::random)
    }
}
