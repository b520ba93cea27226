//! The result of `pgiosim catchup`: its JSON document, built from the
//! database after the replay, and its text report.

use std::fmt::Write as _;

use super::one_shot::OneShotRun;
use crate::core::breakdown::Bucket;
use crate::core::database::Database;
use crate::core::stats::Stats;
use crate::settings::Settings;
use crate::workload::replay::ReplayCounts;

/// Name of the catch-up result's schema.
pub const CATCHUP_SCHEMA: &str = "pgiosim.catchup";
/// Version of the catch-up result's schema.
pub const CATCHUP_SCHEMA_VERSION: u32 = 1;

/// The backlog and the standby, as the flags described them.
#[derive(Debug, Clone)]
pub struct Backlog {
    /// pgbench scale factor of the data set.
    pub scale: u64,
    /// WAL to replay.
    pub bytes: u64,
    /// WAL between the primary's checkpoints inside it.
    pub checkpoint_every: u64,
    /// The kernel's readahead on the WAL.
    pub read_ahead: u64,
    /// The standby's page cache.
    pub os_cache_bytes: u64,
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

impl CatchupResult {
    /// The result of the replay `db` ran, of `backlog`, with `settings`.
    pub fn from_database(
        db: &Database,
        settings: &Settings,
        run: OneShotRun,
        backlog: &Backlog,
    ) -> CatchupResult {
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
        let breakdown = CatchupBreakdown::of(stats);
        CatchupResult {
            schema: CATCHUP_SCHEMA,
            schema_version: CATCHUP_SCHEMA_VERSION,
            mode: run.mode.into(),
            device: run.device,
            partial: run.partial,
            workload: db.workload().name().to_string(),
            scale: backlog.scale,
            backlog_bytes: backlog.bytes,
            replayed_bytes: backlog.bytes.min(replayed.wal_bytes),
            seconds,
            wal_mb_per_s: if seconds > 0.0 {
                backlog.bytes.min(replayed.wal_bytes) as f64 / 1e6 / seconds
            } else {
                0.0
            },
            transactions: replayed.transactions,
            records: replayed.records,
            full_page_images: replayed.full_page_images,
            primary_checkpoints: replayed.checkpoints,
            checkpoint_every_bytes: backlog.checkpoint_every,
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
            read_ahead_bytes: backlog.read_ahead,
            os_cache_bytes: backlog.os_cache_bytes,
            cpu_s: breakdown.cpu,
            breakdown,
            // Past SERIES_MAX_POINTS seconds a point covers several: its mean.
            replayed_per_second: stats
                .seconds
                .iter()
                .map(|s| s.wal_bytes / stats.seconds.width_s())
                .collect(),
            settings: settings_json(settings),
        }
    }
}

impl CatchupBreakdown {
    /// The startup process's time by bucket, seconds.
    fn of(stats: &Stats) -> CatchupBreakdown {
        let bucket = |b: Bucket| stats.bucket_sum_ns[b.index()] as f64 / 1e9;
        CatchupBreakdown {
            cpu: bucket(Bucket::Cpu),
            cpu_queue: bucket(Bucket::CpuQueue),
            page_read: bucket(Bucket::PageRead),
            wal_read: bucket(Bucket::Other),
            buffer_wait: bucket(Bucket::BufferWait),
        }
    }
}

/// The settings as JSON, the recovery ones as recovery shows them.
fn settings_json(settings: &Settings) -> serde_json::Value {
    let mut s = settings.to_json();
    if let Some(o) = s.as_object_mut() {
        for (k, v) in settings.recovery_display() {
            o.insert(k.into(), serde_json::Value::String(v));
        }
    }
    s
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
    time_breakdown(&mut o, &r.breakdown);
    o
}

/// Where the startup process's time went, seconds and shares.
fn time_breakdown(o: &mut String, b: &CatchupBreakdown) {
    let total = b.cpu + b.cpu_queue + b.page_read + b.wal_read + b.buffer_wait;
    let share = |v: f64| if total > 0.0 { 100.0 * v / total } else { 0.0 };
    let _ = writeln!(o, "  the startup process's time:");
    for (name, v) in [
        ("cpu", b.cpu),
        ("cpu_queue", b.cpu_queue),
        ("page_read", b.page_read),
        ("wal_read", b.wal_read),
        ("buffer_wait", b.buffer_wait),
    ] {
        let _ = writeln!(o, "    {name:<12} {v:>9.2} s {:>6.1}%", share(v));
    }
}
