//! What one `run` or `model` is, typed and checked, between the flags that
//! describe it and the execution that carries it out ([`crate::execute`]).
//!
//! The command line (`cli`) and the grid of `sweep` both build a
//! [`RunPlan`]: a [`RunShape`] (the workload, scale, clients, duration, CPUs,
//! ... as values, each flag already parsed), the PostgreSQL [`Settings`] and
//! a [`Target`] (the device model or the files on this disk). Building the
//! plan checks what only the whole run can check (jobs against clients,
//! shared_buffers against backends, standbys against
//! synchronous_standby_names) and maps the settings to the core's
//! [`CoreConfig`]: that mapping is here, not in `cli`, because every way of
//! making a run goes through it and it needs the workload's compiled CPU
//! figures, not the flags. The one-shot commands (`vacuum`, `catchup`) build
//! their plans the same way, with a [`Mode`] saying what runs instead of the
//! clients.

use std::path::{Path, PathBuf};

use anyhow::Result;
use clap::ValueEnum;

use crate::core::config::{CoreConfig, Mode as CoreMode, OneShotVacuum};
use crate::core::io::PAGE_BYTES;
use crate::core::recovery::RecoveryConfig;
use crate::core::time::{MS, Nanos, SEC, US};
use crate::core::vacuum::VacuumShape;
use crate::core::workload::Workload;
use crate::datafiles::{DataDir, Layout};
use crate::device::instance::{CpuClass, Instance};
use crate::device::profile::Profile;
use crate::error::{bad_input, usage};
use crate::report::CpuProbeInfo;
use crate::settings::Settings;
use crate::standby::StandbyDecl;
use crate::workload::{QueryMode, Script, WorkloadSpec};

/// WAL segment files in the ring (64 MiB): PostgreSQL recycles segments the
/// same way, so the disk sees overwrites of preallocated files.
pub const WAL_SEGMENTS: u32 = 4;

/// Default duration when neither -T nor -t is given (`run`).
pub const DEFAULT_DURATION: Nanos = 10 * SEC;

/// `model`'s precision when neither -T nor -t is given: ±2% at 95%.
pub const DEFAULT_PRECISION: f64 = 0.02;

/// The most simulated time `model` spends looking for its precision: half
/// an hour covers six cycles at PostgreSQL's default checkpoint_timeout
/// (5min), longer than any published pgbench run it is compared with.
pub const SETTLE_CAP: Nanos = 1800 * SEC;

/// The most simulated time a `model` run covers: the most -T takes, where
/// a -t run stops, and above the precision rule's [`SETTLE_CAP`]. A week is
/// longer than any soak or published run, and a model with nothing to do
/// covers it in about a second, where pgbench's -T bound (68 years) took
/// minutes.
pub const MODEL_TIME_MAX: Nanos = 7 * 86_400 * SEC;

const _: () = assert!(SETTLE_CAP * crate::steady_state::VACUUM_CAP_FACTOR <= MODEL_TIME_MAX);

/// `model`'s stopping rule: the precision the steady state's tps must be
/// known to (a fraction, at 95%), and the simulated time after which it
/// stops without it unless whole autovacuum cycles are still to come.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Settle {
    pub precision: f64,
    pub cap: Nanos,
}

/// The largest shared_buffers modelled: 512 GB. PostgreSQL takes up to
/// 8 TB, but the model holds each buffer's descriptor and page-table slots
/// in memory (about 32 bytes a buffer: 2 GB at 512 GB, and 4 TB asked for
/// an allocation of 8 GB at once).
pub const SHARED_BUFFERS_MAX_BYTES: u64 = 512 << 30;

/// The largest page cache modelled: 1 TiB (about 15 bytes a page: 2 GB).
/// 20 TB tripped the page cache's own bound in the core, 10 TB asked for
/// 20 GB. A server whose RAM leaves more is modelled with its first 1 TiB
/// (`os_cache_pages`); `--os-cache` above it is refused.
pub const OS_CACHE_MAX_BYTES: u64 = 1 << 40;

/// Refuses a page cache of `pages` larger than [`OS_CACHE_MAX_BYTES`],
/// naming `flag`, before the core is built. `vacuum` and `catchup`, which
/// size their page cache after the plan, call it too.
pub fn check_os_cache(flag: &str, pages: u64) -> Result<()> {
    if pages > OS_CACHE_MAX_BYTES / PAGE_BYTES {
        return Err(usage(format!(
            "{flag} {}: at most {} of page cache is modelled",
            crate::units::format_memory(pages.saturating_mul(PAGE_BYTES)),
            crate::units::format_memory(OS_CACHE_MAX_BYTES)
        )));
    }
    Ok(())
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

/// How long a run lasts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Length {
    /// For this long (pgbench -T).
    Duration(Nanos),
    /// Until each client has run this many transactions (pgbench -t).
    Transactions(u64),
    /// Until the steady state's tps is known to `precision` (a fraction of
    /// it, at 95%), over a whole checkpoint cycle where checkpoints occur;
    /// at most `cap` (`model` without -T).
    Settle { precision: f64, cap: Nanos },
}

/// What a run does: the workload's clients, or a one-shot job on its data set.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// The clients run the workload (`run`, `model`, `sweep`).
    Benchmark,
    /// No clients: one VACUUM of the workload's table `table`, its index
    /// and dead rows as `shape` says (`pgiosim vacuum`). The length, rate
    /// and latency limit do not apply.
    Vacuum { table: String, shape: VacuumShape },
    /// A standby's startup process replays `backlog_bytes` of WAL, read
    /// `read_ahead_bytes` at a time (`pgiosim catchup`). No clients,
    /// standbys, archive or autovacuum; the page cache starts empty.
    Catchup {
        backlog_bytes: u64,
        read_ahead_bytes: u64,
    },
}

/// A run's shape: everything its flags say but the settings and where it
/// runs, each value parsed and checked on its own.
#[derive(Debug, Clone)]
pub struct RunShape {
    /// The workload(s) with their weights.
    pub workload: Vec<(WorkloadSpec, f64)>,
    /// pgbench scale factor.
    pub scale: u64,
    /// Concurrent clients.
    pub clients: u32,
    pub length: Length,
    /// Transactions per second in all (pgbench -R); None: as fast as it goes.
    pub rate: Option<f64>,
    /// With a rate (pgbench -L): skip transactions this late.
    pub latency_limit: Option<Nanos>,
    /// vCPUs of the modelled server; None: this machine's.
    pub cpus: Option<u32>,
    /// Hardware threads per core; None: 1.
    pub threads_per_core: Option<u32>,
    /// Speed of one thread against the machine of the workload's figures.
    pub cpu_speed: Option<f64>,
    /// The server's processor (`--cpu`, or a preset's): its class's speed
    /// where `cpu_speed` is not given.
    pub cpu: Option<&'static CpuClass>,
    /// The probe figures `cpu_speed` came from, if it did (`apply_cpu_probe`).
    pub cpu_probe: Option<CpuProbeInfo>,
    /// The server's RAM (`--ram`, or a preset's): the page cache is what it
    /// leaves where `os_cache_bytes` is not given.
    pub ram_bytes: Option<u64>,
    /// pgbench's query protocol (-M).
    pub protocol: QueryMode,
    /// The client on another host, this round trip away.
    pub client_rtt: Option<Nanos>,
    /// pgbench's worker threads on the database host (-j).
    pub jobs: Option<u32>,
    /// The modelled kernel page cache; None: none.
    pub os_cache_bytes: Option<u64>,
    /// The page cache starts as `pgbench -i` leaves it.
    pub after_init: bool,
    /// A progress line every this long (pgbench -P).
    pub progress: Option<Nanos>,
    /// Seed of the workload's random choices and of the device model.
    pub seed: u64,
    /// Streaming-replication standbys.
    pub standbys: Vec<StandbyDecl>,
    /// The WAL archive's target as given to --archive (read with the
    /// settings: archive_mode must agree).
    pub archive: Option<String>,
    /// Print nothing but the report.
    pub quiet: bool,
    /// The memory the model may hold, bytes (`--max-memory`).
    pub max_memory: u64,
    /// The clients, or a one-shot job.
    pub mode: Mode,
}

impl RunShape {
    /// `workload` at `scale` with every other value at its default, as if
    /// no other flag were given.
    pub fn new(workload: Vec<(WorkloadSpec, f64)>, scale: u64, seed: u64) -> RunShape {
        RunShape {
            workload,
            scale,
            clients: 1,
            length: Length::Duration(DEFAULT_DURATION),
            rate: None,
            latency_limit: None,
            cpus: None,
            threads_per_core: None,
            cpu_speed: None,
            cpu: None,
            cpu_probe: None,
            ram_bytes: None,
            protocol: QueryMode::Simple,
            client_rtt: None,
            jobs: None,
            os_cache_bytes: None,
            after_init: false,
            progress: None,
            seed,
            standbys: Vec::new(),
            archive: None,
            quiet: false,
            max_memory: crate::units::parse_memory_bytes(crate::footprint::DEFAULT_MAX_MEMORY)
                .expect("a size"),
            mode: Mode::Benchmark,
        }
    }

    /// The host's speed from its CPU probe (`host_us` a round, measured
    /// by `run` or in a calibrated profile) against the probe on the machine
    /// the workload's CPU figures come from, where no flag or preset set
    /// the speed and the workload says that machine's figure. Returns the
    /// speed it set.
    ///
    /// A speed outside `--cpu-speed`'s range, or a mix of workloads whose
    /// figures come from machines with different probes, is refused: there
    /// is no one speed to take.
    pub fn apply_cpu_probe(&mut self, host_us: f64) -> Result<Option<f64>> {
        if self.cpu_speed.is_some() || self.cpu.is_some() {
            return Ok(None);
        }
        let Some(reference_us) = self.workload.first().and_then(|w| w.0.cpu_probe_us) else {
            return Ok(None);
        };
        if let Some((other, _)) = self
            .workload
            .iter()
            .find(|(w, _)| w.cpu_probe_us != Some(reference_us))
        {
            return Err(usage(format!(
                "the workloads' CPU figures come from different machines (cpu_probe_us {} in {}, \
                 {} in {}): give --cpu-speed or --cpu",
                reference_us,
                self.workload[0].0.name,
                other
                    .cpu_probe_us
                    .map_or("none".to_string(), |p| p.to_string()),
                other.name
            )));
        }
        let speed = reference_us / host_us;
        let (lo, hi) = crate::units::CPU_SPEED_RANGE;
        if !(lo..=hi).contains(&speed) {
            return Err(usage(format!(
                "the CPU probe gives a speed of {speed:.3e} ({host_us} µs a round here, \
                 {reference_us} on the workload's machine), outside {lo}-{hi}: check the \
                 cpu_probe_us figures, or give --cpu-speed"
            )));
        }
        self.cpu_speed = Some(speed);
        self.cpu_probe = Some(CpuProbeInfo {
            host_us,
            reference_us,
        });
        Ok(Some(speed))
    }

    /// Fill in what a cloud server size gives where the flags did not say:
    /// its vCPUs and threads per core, its processor and its RAM. The preset
    /// is shorthand for those flags (`pgiosim instances show SIZE` prints
    /// them): what follows from them (the cores' speed, the page cache, the
    /// I/O path's CPU once it is full) is worked out the same way for every
    /// server, in [`core_config`]. Returns what it filled in, for a notice.
    pub fn apply_instance(&mut self, i: &Instance, settings: &Settings) -> Result<Option<String>> {
        self.cpus.get_or_insert(i.vcpus);
        self.threads_per_core.get_or_insert(i.threads_per_core);
        let mut notes = Vec::new();
        if self.cpu_speed.is_none()
            && self.cpu.is_none()
            && let Some(class) = i.cpu_class()
        {
            self.cpu = Some(class);
            notes.push(format!(
                "cores at {:.2}x the EPYC 9454P ({}, Geekbench 6 single-core)",
                class.speed, class.name
            ));
        }
        if self.os_cache_bytes.is_none() && self.ram_bytes.is_none() {
            let bytes = i
                .page_cache_bytes(settings.shared_buffers_bytes)
                .map_err(usage)?;
            self.ram_bytes = Some(i.memory_bytes());
            let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
            notes.push(format!(
                "page cache {} (RAM {} − shared_buffers {} − {} for the kernel and backends)",
                gib(bytes),
                gib(i.memory_bytes()),
                gib(settings.shared_buffers_bytes),
                gib(crate::device::instance::overhead_bytes(i.memory_bytes()))
            ));
        }
        Ok((!notes.is_empty()).then(|| notes.join(", ")))
    }

    /// What the flags leave the model to assume about the server, for a
    /// notice: the processor and the RAM, which only the user knows.
    pub fn server_unknowns(&self) -> Option<String> {
        let mut v = Vec::new();
        if self.cpus.is_some() && self.cpu.is_none() && self.cpu_speed.is_none() {
            v.push(format!(
                "cores taken as the EPYC 9454P's, {}; name the processor with --cpu (see \
                 `pgiosim cpus`) and its --threads-per-core",
                match self.threads_per_core.unwrap_or(1) {
                    1 => "one thread each".to_string(),
                    n => format!("{n} threads each"),
                }
            ));
        }
        if self.cpus.is_some() && self.os_cache_bytes.is_none() && self.ram_bytes.is_none() {
            v.push(
                "no page cache: every buffer miss reads the device; give the server's --ram"
                    .to_string(),
            );
        }
        (!v.is_empty()).then(|| v.join("; "))
    }
}

/// Where a run's I/O goes.
#[derive(Debug, Clone)]
pub enum Target {
    /// The device model, in virtual time (`model`).
    Model(Box<Profile>),
    /// Real files on this disk (`run`).
    Disk(Disk),
}

/// The files on this disk a `run` uses and how it reaches them.
#[derive(Debug, Clone)]
pub struct Disk {
    /// The data file and WAL segments.
    pub data: DataDir,
    pub io_engine: EngineChoice,
    /// Through the kernel page cache instead of O_DIRECT.
    pub buffered: bool,
    /// Shape every I/O like this device profile's disk (`--emulate`,
    /// resolved while planning).
    pub emulate: Option<Box<Profile>>,
    /// Where each standby's directory is made.
    pub standby_root: PathBuf,
}

/// One run, ready to execute: the settings, the compiled workload, the
/// core's configuration and where it runs, all checked.
#[derive(Debug)]
pub struct RunPlan {
    pub settings: Settings,
    pub workload: Script,
    pub cfg: CoreConfig,
    /// A progress line every this long.
    pub progress: Option<Nanos>,
    pub scale: u64,
    pub protocol: QueryMode,
    /// The client's round trip was given (--client-rtt).
    pub client_elsewhere: bool,
    pub standbys: Vec<StandbyDecl>,
    pub quiet: bool,
    pub target: Target,
    /// Stop once the steady state's tps is known to this fraction
    /// (`Length::Settle`), by its cap (the core's duration is the longer
    /// cap that whole autovacuum cycles may take).
    pub settle: Option<Settle>,
    /// The probe figures behind the CPU speed, if they set it.
    pub cpu_probe: Option<CpuProbeInfo>,
    /// The CPU class whose speed the cores run at, if one set it.
    pub cpu: Option<&'static str>,
}

impl RunPlan {
    /// Compile the workload, check the run as a whole and build the core's
    /// configuration.
    pub fn new(shape: RunShape, settings: Settings, mut target: Target) -> Result<RunPlan> {
        // The workload and the scale are the user's: a mix that cannot be
        // built (tables too large to model, tables that differ) is bad input.
        let mut workload = Script::mix(&shape.workload, shape.scale).map_err(bad_input)?;
        workload.use_query_mode(shape.protocol);
        if let Some(rtt) = shape.client_rtt {
            workload.client_elsewhere(rtt);
            // libpq's default sslmode (prefer) takes TLS when the server
            // offers it; over the socket (no --client-rtt) it never does.
            if settings.ssl {
                workload.use_tls();
            }
        }
        // With the client on another host, -j's threads run there, not on
        // the modelled server's cores.
        if shape.jobs.is_some() && shape.client_rtt.is_none() {
            workload.use_client_threads();
        }
        if let Target::Disk(_) = target
            && let Some(d) = shape.standbys.iter().find(|d| d.device.is_some())
        {
            return Err(usage(format!(
                "standby {}: device= is for `model`; in `run` a standby's WAL goes to real files \
                 in --standby-dir (put that on the disk the standby should have)",
                d.name
            )));
        }
        let mut cfg = core_config(&shape, &settings, &workload)?;
        check_cpu_growth(&cfg, &workload)?;
        // A -t run in virtual time stops at the cap if its clients have
        // not finished by then (a transaction's CPU of a day, a tiny cap).
        if matches!(target, Target::Model(_)) && cfg.transactions_per_client.is_some() {
            cfg.duration = Some(MODEL_TIME_MAX);
        }
        // The modelled page cache's dirty pages are the core's to write
        // back; real files have a kernel of their own.
        if let Target::Model(p) = &mut target {
            cfg.kernel_writeback = kernel_writeback(p, cfg.os_cache_pages);
            // Without a page cache every write is its writer's own, as
            // `run`'s O_DIRECT writes are: no kernel flusher writes it
            // past a cgroup's caps.
            if cfg.kernel_writeback.is_none() {
                p.caps.kernel_writeback_uncapped = false;
            }
        }
        crate::footprint::Footprint::of(&cfg, workload.data_blocks()).check(shape.max_memory)?;
        Ok(RunPlan {
            settings,
            workload,
            cfg,
            progress: shape.progress,
            scale: shape.scale,
            protocol: shape.protocol,
            client_elsewhere: shape.client_rtt.is_some(),
            standbys: shape.standbys,
            quiet: shape.quiet,
            target,
            settle: match shape.length {
                Length::Settle { precision, cap } => Some(Settle { precision, cap }),
                _ => None,
            },
            cpu_probe: shape.cpu_probe,
            cpu: match (shape.cpu_speed, shape.cpu) {
                (None, Some(c)) => Some(c.key),
                _ => None,
            },
        })
    }
}

/// Resolve settings: defaults, then the config file, then each `--set`
/// assignment.
pub fn resolve_settings(config: Option<&Path>, sets: &[String], quiet: bool) -> Result<Settings> {
    resolve_settings_from(Settings::default(), config, sets, quiet)
}

/// [`resolve_settings`] from `base` instead of PostgreSQL's defaults (a
/// managed service's, `model --service`): the file and each `--set` win
/// over it.
pub fn resolve_settings_from(
    base: Settings,
    config: Option<&Path>,
    sets: &[String],
    quiet: bool,
) -> Result<Settings> {
    let mut s = base;
    if let Some(path) = config {
        let ignored = s.apply_config_file(path).map_err(bad_input)?;
        if !ignored.is_empty() && !quiet {
            let line = format!(
                "notice: {}: ignoring {} setting(s) pgiosim does not model: {}",
                path.display(),
                ignored.len(),
                ignored.join(", ")
            );
            eprintln!("{}", crate::error::shorten(&line));
        }
    }
    for a in sets {
        s.set_assignment(a)
            .map_err(|e| usage(format!("--set {a}: {e}")))?;
    }
    Ok(s)
}

/// The files a workload at `scale` needs.
pub fn layout_for(workload: &dyn Workload, scale: u64) -> Layout {
    Layout {
        data_blocks: workload.data_blocks(),
        wal_segments: WAL_SEGMENTS,
        // The layout, not the workload's name: pgbench's built-ins and their
        // mixes share one data set.
        description: format!("scale {scale}, {} blocks", workload.data_blocks()),
    }
}

/// autovacuum's cost limit and delay (ms): its own settings, or VACUUM's
/// where they are -1, as PostgreSQL takes them.
fn autovacuum_cost(s: &Settings) -> (u32, u64) {
    let limit = match s.autovacuum_vacuum_cost_limit {
        -1 => s.vacuum_cost_limit,
        n => n as u32,
    };
    let delay_ms = match s.autovacuum_vacuum_cost_delay_ms {
        -1 => s.vacuum_cost_delay_ms,
        n => n as u64,
    };
    (limit, delay_ms)
}

/// The modelled server's vCPUs (this machine's by default) and threads per
/// core, checked to make whole cores.
/// The longest CPU burst a run may ask for, µs: a hundred times what one
/// figure may give ([`crate::units::CPU_US_MAX`], a day), room for a
/// statement's figures added up and its query mode's factor, and a
/// thousandth of what the core's nanoseconds hold at the slowest
/// --cpu-speed.
const CPU_BURST_MAX_US: f64 = 100.0 * crate::units::CPU_US_MAX;

/// The longest CPU burst, grown with every client active, stays within
/// [`CPU_BURST_MAX_US`]: a day of CPU grown by 1 + growth × 10,000,000
/// clients overflowed the core's sums.
fn check_cpu_growth(cfg: &CoreConfig, workload: &Script) -> Result<()> {
    let (statement, io) = workload.longest_cpu();
    let g = cfg.cpu_growth;
    let over = f64::from(cfg.clients.saturating_sub(g.above));
    let crowding = cfg.cpu_crowding.iter().map(|p| p.1).fold(1.0, f64::max);
    for (what, demand, per, most) in [
        ("cpu_growth_per_backend", statement, g.statement, crowding),
        ("io_cpu_growth_per_backend", io, g.io, 1.0),
    ] {
        let grown_us = demand as f64 / US as f64 * (1.0 + per * over) * most;
        if grown_us > CPU_BURST_MAX_US {
            return Err(usage(format!(
                "-c/--client {}: the workload's {what} {per} grows a burst of {:.0} us of CPU to {grown_us:.3e} us, over the 100d one may take; give fewer clients or a workload with less growth",
                cfg.clients,
                demand as f64 / US as f64
            )));
        }
    }
    Ok(())
}

fn cores(shape: &RunShape) -> Result<(u32, u32)> {
    let cpus = shape
        .cpus
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get() as u32));
    let threads_per_core = shape.threads_per_core.unwrap_or(1);
    if threads_per_core > 1 && !cpus.is_multiple_of(threads_per_core) {
        return Err(usage(format!(
            "--threads-per-core {threads_per_core}: --cpus {cpus} is not a whole number of cores \
             of {threads_per_core} threads"
        )));
    }
    Ok((cpus, threads_per_core))
}

/// shared_buffers in buffers, checked against the model's bound and
/// PostgreSQL's two buffers a backend.
fn buffers(shape: &RunShape, s: &Settings) -> Result<u32> {
    if s.shared_buffers_bytes > SHARED_BUFFERS_MAX_BYTES {
        return Err(usage(format!(
            "shared_buffers = {}: at most {} is modelled (the model keeps every buffer in \
             memory, about 32 bytes each)",
            crate::units::format_memory(s.shared_buffers_bytes),
            crate::units::format_memory(SHARED_BUFFERS_MAX_BYTES)
        )));
    }
    let nbuffers = (s.shared_buffers_bytes / PAGE_BYTES) as u32;
    // PostgreSQL refuses to start with fewer than 2 buffers per connection
    // (check in postmaster: "shared_buffers must be at least twice max_connections").
    let backends = shape.clients as u64 + 3;
    if (nbuffers as u64) < 2 * backends {
        return Err(usage(format!(
            "shared_buffers = {} is too small for {} clients: PostgreSQL needs at least 2 buffers per backend, i.e. {} here",
            crate::units::format_memory(s.shared_buffers_bytes),
            shape.clients,
            crate::units::format_memory(2 * backends * PAGE_BYTES)
        )));
    }
    Ok(nbuffers)
}

/// The modelled page cache: `--os-cache`, else what the server's RAM
/// leaves (`--ram` or a preset's), else none.
fn page_cache_bytes(shape: &RunShape, s: &Settings) -> Result<u64> {
    Ok(match (shape.os_cache_bytes, shape.ram_bytes) {
        (Some(b), _) => b,
        (None, Some(ram)) => {
            crate::device::instance::server::page_cache_bytes(ram, s.shared_buffers_bytes)
                .ok_or_else(|| {
                    usage(format!(
                        "--ram {}: shared_buffers = {} leaves no page cache ({} kept for the \
                         kernel and the backends)",
                        crate::units::format_memory(ram),
                        crate::units::format_memory(s.shared_buffers_bytes),
                        crate::units::format_memory(crate::device::instance::overhead_bytes(ram))
                    ))
                })?
        }
        (None, None) => 0,
    })
}

/// Linux's writeback defaults (Documentation/admin-guide/sysctl/vm.rst;
/// mm/page-writeback.c: `dirty_expire_interval = 30 * 100`,
/// `dirty_writeback_interval = 5 * 100`, `dirty_background_ratio = 10`).
const DIRTY_EXPIRE_CENTISECS: u64 = 3000;
const DIRTY_WRITEBACK_CENTISECS: u64 = 500;
const DIRTY_BACKGROUND_RATIO: u64 = 10;
/// `MIN_WRITEBACK_PAGES` (fs/fs-writeback.c): 4 MiB, the least a
/// background pass writes.
const MIN_WRITEBACK_BYTES: u64 = 4 << 20;
/// `queue/nr_requests` of a device with an I/O scheduler and a queue depth
/// of 128 or more: `2 * min(queue_depth, BLKDEV_DEFAULT_RQ)`, 256
/// (block/blk-mq-sched.c `blk_mq_init_sched`, include/linux/blkdev.h).
const NR_REQUESTS: u32 = 256;

/// The kernel's writeback of a page cache of `os_cache_pages` in front of
/// `profile`'s disk (none without one). Under blk-throttle a cgroup's bios
/// wait in one queue per direction before they get a request, so an
/// fsync's writes enter it all at once and the WAL's queue behind them;
/// otherwise the request queue bounds what an fsync has in flight.
fn kernel_writeback(
    profile: &Profile,
    os_cache_pages: u64,
) -> Option<crate::core::kernel_flusher::KernelWriteback> {
    use crate::device::profile::Limiter;
    (os_cache_pages > 0).then(|| crate::core::kernel_flusher::KernelWriteback {
        expire: DIRTY_EXPIRE_CENTISECS * 10 * MS,
        interval: DIRTY_WRITEBACK_CENTISECS * 10 * MS,
        background_pages: os_cache_pages * DIRTY_BACKGROUND_RATIO / 100,
        background_chunk: MIN_WRITEBACK_BYTES / PAGE_BYTES,
        queue_depth: match profile.caps.limiter {
            Limiter::BlkThrottle => None,
            Limiter::TokenBucket => Some(NR_REQUESTS),
        },
    })
}

/// Check the run as a whole and map the settings, the shape and the
/// workload's figures to the core's configuration. A one-shot mode is
/// checked as a run of its shape's clients, then replaces them.
fn core_config(shape: &RunShape, s: &Settings, workload: &Script) -> Result<CoreConfig> {
    let benchmark = benchmark_config(shape, s, workload)?;
    Ok(match &shape.mode {
        Mode::Benchmark => benchmark,
        Mode::Vacuum { table, shape } => CoreConfig {
            clients: 0,
            duration: None,
            mode: CoreMode::Vacuum(OneShotVacuum {
                table: table.clone(),
                shape: Some(shape.clone()),
                cost_limit: s.vacuum_cost_limit,
                cost_delay: s.vacuum_cost_delay_ms * MS,
            }),
            ..benchmark
        },
        // The core runs no autovacuum on a standby.
        Mode::Catchup {
            backlog_bytes,
            read_ahead_bytes,
        } => CoreConfig {
            clients: 1,
            duration: None,
            transactions_per_client: None,
            rate: None,
            latency_limit: None,
            replication: None,
            archive: None,
            client_threads: 0,
            round_trip: 0,
            os_cache_after_load: false,
            mode: CoreMode::Catchup(RecoveryConfig {
                backlog_bytes: *backlog_bytes,
                read_ahead_bytes: *read_ahead_bytes,
                prefetch: s.recovery_prefetch.enabled() && s.maintenance_io_concurrency > 0,
                io_concurrency: s.maintenance_io_concurrency,
            }),
            ..benchmark
        },
    })
}

/// The pgbench client threads of `shape` (0: the clients share no thread),
/// refusing more threads than clients, as pgbench does, and no clients.
fn client_threads(shape: &RunShape) -> Result<u32> {
    let threads = match shape.jobs {
        Some(j) if j > shape.clients => {
            return Err(usage(format!(
                "-j/--jobs {j}: more threads than the {} clients (pgbench refuses that too)",
                shape.clients
            )));
        }
        Some(_) if shape.client_rtt.is_some() => 0,
        Some(j) => j,
        None => 0,
    };
    if shape.clients == 0 {
        return Err(usage(
            "-c/--client: the number of clients must be at least 1",
        ));
    }
    Ok(threads)
}

/// The pages of page cache the run models, refusing more than the model
/// holds and `--after-init` with none to start full.
fn os_cache_pages(shape: &RunShape, s: &Settings) -> Result<u64> {
    let mut os_cache_pages = page_cache_bytes(shape, s)? / PAGE_BYTES;
    let max = OS_CACHE_MAX_BYTES / PAGE_BYTES;
    if shape.os_cache_bytes.is_none() && os_cache_pages > max {
        // What a server's RAM leaves (a preset's or --ram's) past the
        // model's bound: a page cache larger than the data files is never
        // full, so its first 1 TiB answers the same for any data set below
        // that. Only an explicit --os-cache is refused.
        if !shape.quiet {
            let gib = |b: u64| format!("{:.1} GiB", b as f64 / (1u64 << 30) as f64);
            eprintln!(
                "notice: a page cache of {} is modelled as its first {}, the most the model holds: \
                 the same answer for a data set below that",
                gib(os_cache_pages * PAGE_BYTES),
                gib(OS_CACHE_MAX_BYTES)
            );
        }
        os_cache_pages = max;
    }
    check_os_cache("--os-cache", os_cache_pages)?;
    if shape.after_init && os_cache_pages == 0 {
        return Err(usage(
            "--after-init: there is no page cache to start full; give --ram SIZE or --os-cache SIZE (or, for model, --instance)",
        ));
    }
    Ok(os_cache_pages)
}

/// The standbys' replication, from their declarations, the settings and
/// the workload's recovery figures.
fn replication(
    shape: &RunShape,
    s: &Settings,
    workload: &Script,
) -> Result<Option<crate::core::replication::ReplicationConfig>> {
    crate::standby::replication_config(
        &shape.standbys,
        s,
        shape.seed,
        WAL_SEGMENTS,
        workload.process_wakeup(),
        workload.replay_bytes_per_s(),
        workload.replay_cpu().1,
    )
    .map_err(|e| usage(format!("{e:#}")))
}

/// What a read from the device and a KiB written cost once the page cache
/// is full (the core applies it only then): the kernel's reclaim and
/// writeback on any Linux server, not a property of one provider's
/// (docs/cpu-model.md measured it on this project's VM too). A workload
/// file may carry its own.
fn reclaim_cpu(workload: &Script) -> crate::core::config::ReclaimCpu {
    if workload.reclaim_cpu().is_set() {
        workload.reclaim_cpu()
    } else {
        crate::device::instance::io_cpu::reclaim_cpu()
    }
}

/// The core's duration and transactions per client for a run's length:
/// a precision run's duration is the longer cap whole autovacuum cycles
/// may take (the precision rule's own cap is the driver's).
fn core_length(length: Length) -> (Option<Nanos>, Option<u64>) {
    match length {
        Length::Duration(d) => (Some(d), None),
        Length::Transactions(t) => (None, Some(t)),
        Length::Settle { cap, .. } => (
            Some(cap.saturating_mul(crate::steady_state::VACUUM_CAP_FACTOR)),
            None,
        ),
    }
}

/// The core's configuration for the benchmark itself: the clients of
/// `shape` running `workload` under the settings `s`.
fn benchmark_config(shape: &RunShape, s: &Settings, workload: &Script) -> Result<CoreConfig> {
    let client_threads = client_threads(shape)?;
    let (duration, transactions_per_client) = core_length(shape.length);
    let (cpus, threads_per_core) = cores(shape)?;
    let nbuffers = buffers(shape, s)?;
    let os_cache_pages = os_cache_pages(shape, s)?;
    let (autovacuum_cost_limit, autovacuum_cost_delay_ms) = autovacuum_cost(s);
    let replication = replication(shape, s, workload)?;
    let archive = crate::archive_target::archive_config(shape.archive.as_deref(), s)
        .map_err(|e| usage(format!("{e:#}")))?;
    let cpu_speed = shape.cpu_speed.or(shape.cpu.map(|c| c.speed));
    Ok(CoreConfig {
        rate: shape.rate,
        latency_limit: shape.latency_limit,
        autovacuum: s.autovacuum,
        autovacuum_naptime: s.autovacuum_naptime_s * SEC,
        autovacuum_cost_limit,
        autovacuum_cost_delay: autovacuum_cost_delay_ms * MS,
        mode: CoreMode::Bench,
        maintenance_work_mem: s.maintenance_work_mem_bytes,
        vacuum_cost_page: [
            s.vacuum_cost_page_hit,
            s.vacuum_cost_page_miss,
            s.vacuum_cost_page_dirty,
        ],
        clients: shape.clients,
        cpus,
        threads_per_core,
        cpu_speed: cpu_speed.unwrap_or(1.0),
        duration,
        transactions_per_client,
        seed: shape.seed,
        nbuffers,
        wal_buffers_bytes: s.wal_buffers_effective_bytes(),
        synchronous_commit: s.synchronous_commit,
        replication,
        archive,
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
        wal_writer_flush_after: s.wal_writer_flush_after_bytes,
        os_cache_pages,
        os_cache_after_load: shape.after_init,
        kernel_writeback: None,
        wal_segments: WAL_SEGMENTS,
        round_trip: workload.round_trip(),
        read_cpu: workload.read_cpu(),
        write_cpu: workload.write_cpu(),
        reclaim_cpu: reclaim_cpu(workload),
        cpu_growth: workload.cpu_growth(),
        cpu_crowding: workload.cpu_crowding(),
        client_threads,
        client_cpu: workload.client_cpu(),
        wal_flush_cpu: workload.wal_flush_cpu(),
        backend_flush_after: s.backend_flush_after_bytes,
        bgwriter_flush_after: s.bgwriter_flush_after_bytes,
        checkpoint_flush_after: s.checkpoint_flush_after_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A server's RAM past the model's bound is modelled with its first
    /// 1 TiB; an explicit --os-cache past it is refused.
    #[test]
    fn a_page_cache_past_the_bound_is_clamped_unless_given() {
        let s = Settings::default();
        let mut shape = RunShape::new(Vec::new(), 1, 1);
        shape.quiet = true;
        shape.ram_bytes = Some(1536 << 30);
        assert_eq!(
            os_cache_pages(&shape, &s).unwrap(),
            OS_CACHE_MAX_BYTES / PAGE_BYTES
        );
        shape.ram_bytes = Some(64 << 30);
        let below = os_cache_pages(&shape, &s).unwrap();
        assert!(below > 0 && below < OS_CACHE_MAX_BYTES / PAGE_BYTES);
        shape.os_cache_bytes = Some(2 << 40);
        assert!(os_cache_pages(&shape, &s).is_err());
    }
}
