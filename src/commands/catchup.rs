//! `pgiosim catchup`: a physical standby replaying a WAL backlog already in
//! its pg_wal (after an outage, or a paused replay), timed on this disk or
//! on a device model. The replay itself is the core's: the startup process
//! ([`crate::core::recovery`]) over the buffer pool, page cache,
//! checkpointer (restartpoints) and background writer, fed the workload's
//! transactions as records ([`crate::workload::replay`]).

use std::fmt::Write as _;

use anyhow::Result;
use clap::Args;

use crate::args::{DirArgs, OneShotArgs, WorkloadChoice};
use crate::core::breakdown::Bucket;
use crate::core::database::Database;
use crate::core::io::PAGE_BYTES;
use crate::datafiles;
use crate::engine::driver::{self, Ending};
use crate::error::{exit, usage};
use crate::plan::{Mode, RunPlan, Shape, layout_for};
use crate::stop::Stop;
use crate::workload::Workload;
use crate::workload::replay::{Replay, ReplayCounts, ReplayShape};

/// Name of the catch-up result's schema.
pub const CATCHUP_SCHEMA: &str = "pgiosim.catchup";
/// Version of the catch-up result's schema.
pub const CATCHUP_SCHEMA_VERSION: u32 = 1;

/// Linux's default read_ahead_kb (VM_READAHEAD_PAGES, 128 KiB).
const READ_AHEAD_DEFAULT: &str = "128kB";

/// Flags of `catchup`.
#[derive(Debug, Clone, Args)]
pub struct CatchupArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// WAL to replay (e.g. 10GB), with postgresql.conf's units.
    #[arg(long, value_name = "SIZE")]
    pub backlog: String,
    #[command(flatten)]
    pub workload: WorkloadChoice,
    /// pgbench scale factor of the data set the backlog was written to.
    #[arg(short, long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub scale: u64,
    /// The standby's PostgreSQL settings (shared_buffers, max_wal_size,
    /// checkpoint_timeout, checkpoint_completion_target, bgwriter_*,
    /// full_page_writes, recovery_prefetch, maintenance_io_concurrency,
    /// wal_decode_buffer_size). Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// WAL between the primary's checkpoints inside the backlog: each
    /// page's first change after one carries a full-page image, which
    /// replay restores without reading the page [default: max_wal_size /
    /// (1 + checkpoint_completion_target), where a busy primary's
    /// checkpoints come from].
    #[arg(long, value_name = "SIZE")]
    pub checkpoint_every: Option<String>,
    /// The standby's page cache [default: room for the data set and the
    /// backlog; it starts empty, as after a restart].
    #[arg(long, value_name = "SIZE")]
    pub os_cache: Option<String>,
    /// The kernel's readahead (read_ahead_kb of the WAL's disk): the WAL is
    /// read in requests of this size, one ahead of the replay.
    #[arg(long, value_name = "SIZE", default_value = READ_AHEAD_DEFAULT)]
    pub read_ahead: String,
    #[command(flatten)]
    pub one: OneShotArgs,
}

/// Where the startup process's time went, seconds.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CatchupBreakdown {
    pub cpu: f64,
    pub cpu_queue: f64,
    pub page_read: f64,
    pub wal_read: f64,
    pub buffer_wait: f64,
}

/// What `pgiosim catchup` measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct CatchupResult {
    pub schema: &'static str,
    pub schema_version: u32,
    /// "run" or "model".
    pub mode: String,
    pub device: String,
    pub partial: bool,
    pub workload: String,
    pub scale: u64,
    pub backlog_bytes: u64,
    /// WAL replayed: the backlog, or less if interrupted.
    pub replayed_bytes: u64,
    /// Time to replay the backlog (or, interrupted, what was replayed).
    pub seconds: f64,
    pub wal_mb_per_s: f64,
    pub transactions: u64,
    pub records: u64,
    pub full_page_images: u64,
    /// The primary's checkpoints replayed, and the WAL between them.
    pub primary_checkpoints: u64,
    pub checkpoint_every_bytes: u64,
    /// Data pages the replay found in shared buffers, in the page cache,
    /// and read from the device itself.
    pub pages_hit: u64,
    pub pages_os_cache: u64,
    pub pages_read: u64,
    /// Pages recovery_prefetch asked of the kernel, and of those the
    /// replay reached while still being read.
    pub pages_prefetched: u64,
    pub prefetch_waits: u64,
    /// Data pages written by the startup process, the checkpointer and
    /// the background writer.
    pub pages_written: u64,
    pub restartpoints: u64,
    /// Control file updates before a page write (minRecoveryPoint,
    /// IO:ControlFileSyncUpdate).
    pub control_file_updates: u64,
    pub wal_reads: u64,
    pub wal_read_bytes: u64,
    pub read_ahead_bytes: u64,
    pub os_cache_bytes: u64,
    /// The startup process's CPU, seconds.
    pub cpu_s: f64,
    pub breakdown: CatchupBreakdown,
    /// WAL replayed in each second, bytes.
    pub replayed_per_second: Vec<u64>,
    pub settings: serde_json::Value,
}

/// Parse a size flag: at least one page.
fn size(flag: &str, v: &str) -> Result<u64> {
    crate::units::parse_memory_bytes(v)
        .filter(|b| *b >= PAGE_BYTES)
        .ok_or_else(|| usage(format!("{flag} {v}: not a size of at least 8kB, e.g. 10GB")))
}

/// The largest `--backlog` modelled: 1 TB of WAL. The replay runs through
/// every record of it (a GB takes seconds), and a default page cache sized
/// from 100 TB tripped the core's bound.
pub const BACKLOG_MAX_BYTES: u64 = 1 << 40;

/// Replay the backlog, print the report, write its JSON; exits 130 if
/// interrupted.
pub fn catchup(args: &CatchupArgs, stop: &Stop) -> Result<i32> {
    let settings = args.one.settings(&args.set)?;
    let backlog = size("--backlog", &args.backlog)?;
    if backlog > BACKLOG_MAX_BYTES {
        return Err(usage(format!(
            "--backlog {}: at most {} is modelled",
            args.backlog,
            crate::units::format_memory(BACKLOG_MAX_BYTES)
        )));
    }
    let read_ahead = crate::units::parse_memory_bytes(&args.read_ahead)
        .filter(|b| *b >= PAGE_BYTES && *b <= 64 << 20)
        .ok_or_else(|| {
            usage(format!(
                "--read-ahead {}: not a size between 8kB and 64MB, e.g. 128kB",
                args.read_ahead
            ))
        })?
        / PAGE_BYTES
        * PAGE_BYTES;
    let checkpoint_every = match &args.checkpoint_every {
        Some(v) => size("--checkpoint-every", v)?,
        // CheckPointSegments: a checkpoint is requested when this much WAL
        // was written since the last one.
        None => {
            ((settings.max_wal_size_bytes as f64) / (1.0 + settings.checkpoint_completion_target))
                as u64
        }
    };
    let seed = args.one.seed();
    let parts = args.workload.parts()?;
    let probe =
        crate::workload::Script::mix(&parts, args.scale).map_err(crate::error::bad_input)?;
    let target = args.one.target(&args.dirs)?;
    let data_bytes = probe.data_blocks() * PAGE_BYTES;
    let os_cache_bytes = match &args.os_cache {
        Some(v) => crate::units::parse_memory_bytes(v)
            .ok_or_else(|| usage(format!("--os-cache {v}: not a size, e.g. 16GB")))?,
        // Room for the data set and the backlog, at most the largest
        // page cache modelled.
        None => (data_bytes.saturating_add(backlog)).min(crate::plan::OS_CACHE_MAX_BYTES),
    };
    let shape = Shape {
        os_cache_bytes: Some(os_cache_bytes),
        mode: Mode::Catchup {
            backlog_bytes: backlog,
            read_ahead_bytes: read_ahead,
        },
        ..Shape::new(parts, args.scale, seed)
    };
    let plan = RunPlan::new(shape, settings, target)?;
    let (settings, script, cfg) = (plan.settings, plan.workload, plan.cfg);
    if !writes_wal(probe, seed) {
        return Err(usage(format!(
            "workload {}: its transactions write no WAL, so there is nothing to replay",
            script.name()
        )));
    }
    let prefetch = matches!(&cfg.mode, crate::core::config::Mode::Catchup(r) if r.prefetch);
    let (record_cpu, fpi_cpu) = script.replay_cpu();
    let replay = Replay::new(
        Box::new(script),
        ReplayShape {
            record_cpu,
            fpi_cpu,
            checkpoint_every,
            full_page_writes: settings.full_page_writes,
            lookahead_bytes: if prefetch {
                settings.wal_decode_buffer_size_bytes
            } else {
                0
            },
        },
    );
    // The data set's lock (on the disk) is held until the replay is done.
    // Its I/Os: the WAL window, the page read, prefetches, the writers.
    let layout = layout_for(&replay, args.scale);
    let crate::execute::OneShotDevice {
        mode,
        mut dev,
        held: _held,
    } = crate::execute::one_shot_device(
        &plan.target,
        &layout,
        seed,
        4 + settings.maintenance_io_concurrency.min(256),
        args.one.quiet,
        stop,
        |disk| {
            if disk.buffered {
                // The backlog and the data are read from the disk, as after
                // a restart: nothing of them in the page cache.
                datafiles::drop_from_page_cache(&disk.data, &layout);
            }
        },
    )?;
    let device = args
        .one
        .device
        .clone()
        .unwrap_or_else(|| dev.name().to_string());
    let mut db = Database::new(cfg, Box::new(replay));
    let (ending, _) = driver::drive(&mut db, dev.as_mut(), stop, None, &mut |_| {})?;
    let r = result(
        &db,
        &settings,
        Facts {
            mode,
            device,
            partial: ending == Ending::Interrupted,
            scale: args.scale,
            backlog,
            checkpoint_every,
            read_ahead,
            os_cache_bytes,
        },
    );
    super::report_and_json(&render(&r), args.one.json.as_deref(), &r)?;
    Ok(if r.partial {
        exit::INTERRUPTED.into()
    } else {
        exit::OK.into()
    })
}

/// Whether the workload's transactions write any WAL (a replay of
/// select-only would never end).
fn writes_wal(mut probe: crate::workload::Script, seed: u64) -> bool {
    use crate::workload::Step;
    use rand::SeedableRng;
    let mut rng = crate::core::SimRng::seed_from_u64(seed);
    let mut steps = Vec::new();
    (0..1000).any(|_| {
        probe.next_transaction(&mut rng, &mut steps);
        steps.iter().any(|s| match *s {
            Step::Modify { wal_bytes, .. }
            | Step::Extend { wal_bytes, .. }
            | Step::Commit { wal_bytes } => wal_bytes > 0,
            _ => false,
        })
    })
}

/// What the result says beyond the database's figures.
struct Facts {
    mode: &'static str,
    device: String,
    partial: bool,
    scale: u64,
    backlog: u64,
    checkpoint_every: u64,
    read_ahead: u64,
    os_cache_bytes: u64,
}

fn result(db: &Database, settings: &crate::settings::Settings, f: Facts) -> CatchupResult {
    let stats = db.stats();
    let c = &stats.counters;
    let rec = db.recovery().map(|r| r.counters()).unwrap_or_default();
    let replayed: ReplayCounts = db
        .workload()
        .describe()
        .get("replayed")
        .and_then(|v| serde_json::from_value(v.clone()).ok())
        .unwrap_or_default();
    let seconds = db.end_time().unwrap_or(0) as f64 / 1e9;
    let bucket = |b: Bucket| stats.bucket_sum_ns[b.index()] as f64 / 1e9;
    let mut s = settings.to_json();
    if let Some(o) = s.as_object_mut() {
        for (k, v) in settings.recovery_display() {
            o.insert(k.into(), serde_json::Value::String(v));
        }
    }
    CatchupResult {
        schema: CATCHUP_SCHEMA,
        schema_version: CATCHUP_SCHEMA_VERSION,
        mode: f.mode.into(),
        device: f.device,
        partial: f.partial,
        workload: db.workload().name().to_string(),
        scale: f.scale,
        backlog_bytes: f.backlog,
        replayed_bytes: f.backlog.min(replayed.wal_bytes),
        seconds,
        wal_mb_per_s: if seconds > 0.0 {
            f.backlog.min(replayed.wal_bytes) as f64 / 1e6 / seconds
        } else {
            0.0
        },
        transactions: replayed.transactions,
        records: replayed.records,
        full_page_images: replayed.full_page_images,
        primary_checkpoints: replayed.checkpoints,
        checkpoint_every_bytes: f.checkpoint_every,
        pages_hit: c.buffer_hits,
        pages_os_cache: c.os_cache_hits,
        pages_read: c.data_reads,
        pages_prefetched: rec.prefetches,
        prefetch_waits: rec.prefetch_waits,
        pages_written: c.backend_writes + c.checkpoint_writes + c.bgwriter_writes,
        restartpoints: c.checkpoints_done,
        control_file_updates: rec.control_updates,
        wal_reads: rec.wal_reads,
        wal_read_bytes: rec.wal_read_bytes,
        read_ahead_bytes: f.read_ahead,
        os_cache_bytes: f.os_cache_bytes,
        cpu_s: bucket(Bucket::Cpu),
        breakdown: CatchupBreakdown {
            cpu: bucket(Bucket::Cpu),
            cpu_queue: bucket(Bucket::CpuQueue),
            page_read: bucket(Bucket::PageRead),
            wal_read: bucket(Bucket::Other),
            buffer_wait: bucket(Bucket::BufferWait),
        },
        // Past SERIES_MAX_POINTS seconds a point covers several: its mean.
        replayed_per_second: stats
            .seconds
            .iter()
            .map(|s| s.wal_bytes / stats.seconds.width_s())
            .collect(),
        settings: s,
    }
}

/// The catch-up's text report.
pub fn render(r: &CatchupResult) -> String {
    let mut o = String::new();
    if r.partial {
        let _ = writeln!(
            o,
            "*** partial result: interrupted after {:.1} s ***",
            r.seconds
        );
    }
    let mb = |b: u64| b as f64 / 1e6;
    // Interrupted, the time is that of what was replayed, not the backlog.
    let what = if r.partial {
        format!(
            "catch-up interrupted after {:.0}MB of the {} backlog",
            r.replayed_bytes as f64 / (1u64 << 20) as f64,
            crate::units::format_memory(r.backlog_bytes)
        )
    } else {
        format!(
            "catch-up of {}",
            crate::units::format_memory(r.backlog_bytes)
        )
    };
    let _ = writeln!(
        o,
        "{what} of {} WAL (scale {}) on {} ({}): {:.1} s, {:.1} MB/s of WAL",
        r.workload, r.scale, r.device, r.mode, r.seconds, r.wal_mb_per_s
    );
    let _ = writeln!(
        o,
        "  {} transactions, {} records ({} full-page images), {} of the primary's checkpoints (every {:.0} MB of WAL)",
        r.transactions,
        r.records,
        r.full_page_images,
        r.primary_checkpoints,
        mb(r.checkpoint_every_bytes)
    );
    let _ = writeln!(
        o,
        "  data pages: {} hit in shared buffers, {} from the page cache, {} read by the startup process; {} prefetched ({} waited for); {} written; {} restartpoints; {} control file updates",
        r.pages_hit,
        r.pages_os_cache,
        r.pages_read,
        r.pages_prefetched,
        r.prefetch_waits,
        r.pages_written,
        r.restartpoints,
        r.control_file_updates
    );
    let _ = writeln!(
        o,
        "  WAL read: {} requests, {:.0} MB (readahead {})",
        r.wal_reads,
        mb(r.wal_read_bytes),
        crate::units::format_memory(r.read_ahead_bytes)
    );
    let total = r.breakdown.cpu
        + r.breakdown.cpu_queue
        + r.breakdown.page_read
        + r.breakdown.wal_read
        + r.breakdown.buffer_wait;
    let share = |v: f64| if total > 0.0 { 100.0 * v / total } else { 0.0 };
    let _ = writeln!(o, "  the startup process's time:");
    for (name, v) in [
        ("cpu", r.breakdown.cpu),
        ("cpu_queue", r.breakdown.cpu_queue),
        ("page_read", r.breakdown.page_read),
        ("wal_read", r.breakdown.wal_read),
        ("buffer_wait", r.breakdown.buffer_wait),
    ] {
        let _ = writeln!(o, "    {name:<12} {v:>9.2} s {:>6.1}%", share(v));
    }
    o
}
