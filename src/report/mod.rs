//! The result of a run: one serialisable struct is the truth; the text report
//! and the JSON file only render it.
//!
//! JSON schema: `schema` is "pgiosim.result" and `schema_version` counts
//! incompatible changes; the README documents every field.
//!
//! The same structs read results back (`load`): a field added after the
//! first files of its schema version were written is `#[serde(default)]`,
//! so older files read with it zero, empty or absent.

pub mod archive_figures;
pub mod catchup;
pub mod charts;
pub mod compare;
pub mod html;
pub mod load;
pub mod one_shot;
pub mod steady;
pub mod sweep;
pub mod text;
pub mod vacuum;

use serde::{Deserialize, Serialize};

use crate::core::breakdown::Bucket;
use crate::core::checkpointer::Trigger;
use crate::core::database::Database;
use crate::core::stats::{SERIES_MAX_POINTS, Stats, stddev_ns};
use crate::standby::MAX_STANDBYS;

/// Name of the result schema.
pub const SCHEMA: &str = "pgiosim.result";
/// Version of the result schema; bumped on incompatible changes.
pub const SCHEMA_VERSION: u32 = 3;

/// How the run was set up, beyond PostgreSQL's settings.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunInfo {
    /// "run" (real disk) or "model".
    pub mode: String,
    /// Workload name ("tpcb-like", or a mix "tpcb-like@1,select-only@9").
    #[serde(default)]
    pub workload: String,
    /// What pgbench prints as "transaction type".
    #[serde(default)]
    pub transaction_type: String,
    /// Client backends (pgbench -c).
    pub clients: u32,
    /// Logical CPUs modelled (--cpus).
    pub cpus: u32,
    /// Hardware threads per physical core (--threads-per-core).
    #[serde(default)]
    pub threads_per_core: u32,
    /// A thread's speed alone on a core against the machine the workload's
    /// CPU figures were measured on (--cpu-speed).
    #[serde(default)]
    pub cpu_speed: f64,
    /// pgbench's query protocol (-M): "simple", "extended" or "prepared".
    #[serde(default)]
    pub query_mode: String,
    /// pgbench's threads on the database host (-j); 0: none modelled.
    #[serde(default)]
    pub jobs: u32,
    /// The network round trip to a client on another host
    /// (--client-rtt), microseconds; absent: the client is local.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_rtt_us: Option<f64>,
    /// The client's connections talk TLS (`ssl = on`, a client over TCP).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub client_tls: bool,
    /// Requested duration (pgbench -T), seconds.
    #[serde(default)]
    pub duration_s: Option<f64>,
    /// Requested transactions per client (pgbench -t).
    #[serde(default)]
    pub transactions_per_client: Option<u64>,
    /// pgbench scale factor.
    pub scale: u64,
    /// I/O engine: "io_uring" or "psync".
    #[serde(default)]
    pub io_engine: String,
    /// "direct" (O_DIRECT) or "buffered" (kernel page cache).
    #[serde(default)]
    pub data_io: String,
    /// Size of the modelled OS page cache, bytes (0: none).
    #[serde(default)]
    pub os_cache_bytes: u64,
    /// Data directory and WAL directory.
    #[serde(default)]
    pub dir: String,
    #[serde(default)]
    pub wal_dir: String,
    /// Seed of the workload's random generator (and the device model's).
    #[serde(default)]
    pub seed: u64,
    /// The device profile, for modelled runs.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        deserialize_with = "crate::json_memory::opt_value"
    )]
    pub device: Option<serde_json::Value>,
    /// How late pgiosim's own loop handled its timers (`run` only): modelled
    /// CPU and round trips are only as true as this is small.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timer_lag: Option<TimerLagFigures>,
    /// `model`'s precision when it ran until it knew (a percentage).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub precision_pct: Option<f64>,
    /// What ended the run: `duration`, `transactions`, `precision`, `cap`
    /// (the precision, or -t's transactions, not reached in `model`'s time
    /// cap), `transient` (a transient that lasts past twice the cap, so the
    /// precision cannot be reached in it) or `interrupted`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_on: Option<String>,
    /// With `stopped_on` "transient": the transient that outlasts the cap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stopped_because: Option<String>,
    /// Where `cpu_speed` came from when the CPU probe set it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_probe: Option<CpuProbeInfo>,
    /// The CPU class whose speed `cpu_speed` is (`--cpu`, or a preset's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu: Option<String>,
}

/// The CPU probe's figures behind a run's `cpu_speed`: `pgiosim
/// cpu-probe` on the host the run describes, and on the machine the
/// workload's CPU figures were measured on.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct CpuProbeInfo {
    /// µs a round on the host: measured by `run` as it starts, or by
    /// `calibrate` into the profile `model` was given.
    pub host_us: f64,
    /// µs a round on the workload's reference machine (its `cpu_probe_us`).
    pub reference_us: f64,
}

/// Lateness of the real-clock loop's timers, microseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TimerLagFigures {
    pub timers: u64,
    pub mean_us: f64,
    pub p99_us: f64,
    pub max_us: f64,
}

impl TimerLagFigures {
    /// A mean lateness above this stretches a 54 µs CPU burst by a fifth or
    /// more: worth a warning.
    pub const WARN_MEAN_US: f64 = 10.0;
}

/// Latency figures in milliseconds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Latency {
    pub average: f64,
    /// Null (NaN in memory) where unknown: an imported pgbench report has
    /// neither stddev without -l nor percentiles.
    #[serde(deserialize_with = "f64_or_nan")]
    pub stddev: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub p50: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub p90: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub p99: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub p99_9: f64,
    #[serde(deserialize_with = "f64_or_nan")]
    pub max: f64,
}

/// A figure that is null where unknown: serde_json writes NaN as null, and
/// this reads null back as NaN.
fn f64_or_nan<'de, D: serde::Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::NAN))
}

/// pgbench's summary figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Summary {
    /// Transactions completed.
    pub transactions: u64,
    /// Seconds the run lasted.
    pub elapsed_s: f64,
    /// Transactions per second.
    pub tps: f64,
    /// Latency (ms).
    pub latency_ms: Latency,
    /// Rate-limited runs only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate_limit: Option<RateFigures>,
}

/// What a rate-limited run (pgbench -R) adds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RateFigures {
    /// Requested transactions per second.
    pub requested_tps: f64,
    /// Schedule lag: actual minus scheduled start (ms).
    pub lag_avg_ms: f64,
    pub lag_max_ms: f64,
    /// pgbench -L, if given.
    pub latency_limit_ms: Option<f64>,
    /// Transactions skipped for starting later than the limit.
    pub skipped: u64,
    /// Transactions that finished over the limit.
    pub late: u64,
}

/// One bucket of the per-transaction breakdown.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BucketFigures {
    /// cpu, cpu_queue, page_read, buffer_wait, lock_wait, wal_fsync, other.
    pub bucket: String,
    /// Mean time per transaction (µs).
    pub mean_us: f64,
    /// Share of mean latency (0..1).
    #[serde(default)]
    pub share: f64,
    /// 99th percentile of the time per transaction (µs).
    /// Null where unknown (an imported run).
    #[serde(default, deserialize_with = "f64_or_nan")]
    pub p99_us: f64,
}

/// I/O and buffer figures, in PostgreSQL's terms where it has them. A
/// figure an older file lacks reads as 0.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct IoFigures {
    pub data_reads: u64,
    pub data_reads_per_s: f64,
    pub data_reads_per_tx: f64,
    pub data_writes: u64,
    pub data_writes_per_s: f64,
    /// Dirty victims written by backends (pg_stat_bgwriter buffers_backend).
    pub backend_writes: u64,
    /// buffers_checkpoint.
    pub checkpoint_writes: u64,
    /// buffers_clean.
    pub bgwriter_writes: u64,
    /// fsyncs of the data file.
    pub data_fsyncs: u64,
    /// Dirty page-cache pages the kernel wrote back, its flusher's and the
    /// checkpoint fsyncs'; absent where none were (the core models them
    /// with a modelled page cache only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel_writeback_pages: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fsync_writeback_pages: Option<u64>,
    /// pg_stat_wal wal_records / wal_fpi / wal_bytes.
    pub wal_records: u64,
    pub wal_fpi: u64,
    pub wal_bytes: u64,
    pub wal_bytes_per_tx: f64,
    pub wal_mb_per_s: f64,
    /// pg_stat_wal wal_write / wal_sync.
    pub wal_writes: u64,
    pub wal_fdatasyncs: u64,
    pub wal_fdatasyncs_per_s: f64,
    /// Bytes written to WAL files (whole pages, rewrites included).
    pub wal_written_bytes: u64,
    /// Mean device time of a data page read, a WAL write and a WAL
    /// fdatasync, µs (PostgreSQL's blk_read_time / blks_read and pg_stat_wal
    /// wal_write_time / wal_write, wal_sync_time / wal_sync; those also
    /// count the waiting process's wake-up).
    pub data_read_avg_us: f64,
    /// Mean device time of a dirty victim a backend wrote itself, µs
    /// (pg_stat_io's client backend write_time / writes); 0 where none.
    #[serde(default)]
    pub backend_write_avg_us: f64,
    /// The backends' CPU per transaction for the blocks they read, waiting
    /// for a core included, µs: part of page_read, as in PostgreSQL's
    /// blk_read_time, and CPU all the same.
    pub read_cpu_us_per_tx: f64,
    /// pgbench's threads (`-j`) on a core or waiting for one, µs per
    /// transaction (all threads together; 0 without -j).
    pub client_thread_us_per_tx: f64,
    pub wal_write_avg_us: f64,
    pub wal_sync_avg_us: f64,
    /// Commits that waited for a flush, per WAL flush someone waited for
    /// (the WAL writer's background flushes are not counted).
    pub commits_per_flush: f64,
    /// blks_hit / (blks_hit + blks_read).
    pub buffer_hit_ratio: f64,
    pub buffer_hits: u64,
    pub buffer_misses: u64,
    /// Misses served by the modelled OS cache (no I/O).
    pub os_cache_hits: u64,
    pub full_page_images_per_tx: f64,
    pub checkpoints_started: u64,
    pub checkpoints_completed: u64,
    pub checkpoints_timed: u64,
    pub checkpoints_requested: u64,
    /// Modelled CPU busy time over elapsed time × cores (0..1).
    pub cpu_utilisation: f64,
    /// The disk's I/Os as its caps count them, after the block layer has
    /// merged and split requests: what a cgroup's
    /// `blkio.throttle.io_serviced` or a provider's I/O metric shows.
    /// Absent where no device model counts (`run` on a real disk).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device_ios: Option<DeviceIos>,
}

/// I/Os as a disk's caps count them ([`IoFigures::device_ios`]), whole run.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize, PartialEq)]
pub struct DeviceIos {
    pub reads: f64,
    /// Writes, the flushes among them where the disk counts a flush.
    pub writes: f64,
    pub reads_per_tx: f64,
    pub writes_per_tx: f64,
    /// Reads and writes the disk got, whether the caps counted them or not
    /// (the kernel's writeback past a cgroup v1 throttle among them), no
    /// flush: what /proc/diskstats counts in its read and write columns,
    /// less an fdatasync's empty write.
    #[serde(default)]
    pub disk_reads_per_tx: f64,
    #[serde(default)]
    pub disk_writes_per_tx: f64,
}

impl DeviceIos {
    /// `counted` (reads, writes) and the `disk`'s own over a run of `tx`
    /// transactions.
    pub fn new(counted: [f64; 2], disk: [f64; 2], tx: f64) -> DeviceIos {
        DeviceIos {
            reads: counted[0],
            writes: counted[1],
            reads_per_tx: ratio(counted[0], tx),
            writes_per_tx: ratio(counted[1], tx),
            disk_reads_per_tx: ratio(disk[0], tx),
            disk_writes_per_tx: ratio(disk[1], tx),
        }
    }
}

/// One checkpoint.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CheckpointFigures {
    pub start_s: f64,
    #[serde(default)]
    pub end_s: Option<f64>,
    /// "timed" or "wal".
    #[serde(default)]
    pub trigger: String,
    /// Buffers dirty at its start.
    #[serde(default)]
    pub buffers: u64,
}

/// One second of the run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SecondFigures {
    /// End of the second, seconds since the start.
    pub t: u64,
    pub tps: f64,
    #[serde(default)]
    pub latency_ms: f64,
    #[serde(default)]
    pub stddev_ms: f64,
    #[serde(default)]
    pub data_reads: u64,
    #[serde(default)]
    pub data_writes: u64,
    #[serde(default)]
    pub wal_bytes: u64,
    #[serde(default)]
    pub wal_fdatasyncs: u64,
    #[serde(default)]
    pub checkpoint_starts: u32,
    #[serde(default)]
    pub checkpoint_ends: u32,
}

/// One point of the latency distribution: `percentile` (0..100) of the
/// transactions took at most `ms`.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct CdfPoint {
    pub percentile: f64,
    pub ms: f64,
}

/// The percentiles `latency_cdf` reports after the whole ones (0, 1, ..., 99):
/// the tail ever finer, up to the maximum.
pub const CDF_TAIL_PERCENTILES: &[f64] = &[
    99.1, 99.2, 99.3, 99.4, 99.5, 99.6, 99.7, 99.8, 99.9, 99.95, 99.99, 99.995, 99.999, 100.0,
];

/// Everything a run produced.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunResult {
    pub schema: String,
    pub schema_version: u32,
    #[serde(default)]
    pub pgiosim_version: String,
    /// True when the run was interrupted before its end.
    #[serde(default)]
    pub partial: bool,
    pub run: RunInfo,
    /// PostgreSQL settings in effect, as SHOW prints them.
    #[serde(default, deserialize_with = "crate::json_memory::value")]
    pub settings: serde_json::Value,
    /// The workload and its constants, each with its source.
    #[serde(default, deserialize_with = "crate::json_memory::value")]
    pub workload: serde_json::Value,
    pub summary: Summary,
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, 64>")]
    pub breakdown: Vec<BucketFigures>,
    #[serde(default)]
    pub io: IoFigures,
    #[serde(
        default,
        deserialize_with = "crate::json_memory::vec::<_, _, SERIES_MAX_POINTS>"
    )]
    pub checkpoints: Vec<CheckpointFigures>,
    #[serde(
        default,
        deserialize_with = "crate::json_memory::vec::<_, _, SERIES_MAX_POINTS>"
    )]
    pub timeseries: Vec<SecondFigures>,
    /// The latency distribution from the HDR histogram: percentiles 0, 1,
    /// ..., 99, then `CDF_TAIL_PERCENTILES`; empty without transactions.
    #[serde(default, deserialize_with = "crate::json_memory::vec::<_, _, 1024>")]
    pub latency_cdf: Vec<CdfPoint>,
    /// One entry per standby (none without `--standby`).
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::json_memory::vec::<_, _, MAX_STANDBYS>"
    )]
    pub replication: Vec<StandbyFigures>,
    /// WAL archiving (only with archive_mode on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub archive: Option<archive_figures::ArchiveFigures>,
    /// The run after its warm-up, with 95% intervals (none for an imported
    /// pgbench result).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub steady_state: Option<steady::SteadyFigures>,
}

/// One standby's figures, in pg_stat_replication's terms where it has them.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StandbyFigures {
    /// Its application_name.
    pub name: String,
    /// `sync`, `potential`, `quorum` or `async`, as pg_stat_replication's
    /// sync_state.
    pub sync_state: String,
    /// Its walreceiver's WAL writes, bytes written and fdatasyncs.
    pub wal_writes: u64,
    pub wal_written_bytes: u64,
    pub wal_fdatasyncs: u64,
    /// Replies (write/flush/apply positions) that reached the primary.
    pub replies: u64,
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 { 0.0 } else { a / b }
}

/// The I/O figures of a finished run: its counters, per second over
/// `elapsed_ns` and per transaction over `tx`.
fn io_figures(db: &Database, elapsed_ns: u64, tx: f64) -> IoFigures {
    let c = db.stats().counters;
    let w = db.wal_counters();
    let elapsed = elapsed_ns as f64 / 1e9;
    let data_writes = c.backend_writes + c.checkpoint_writes + c.bgwriter_writes;
    IoFigures {
        data_reads: c.data_reads,
        data_reads_per_s: c.data_reads as f64 / elapsed,
        data_reads_per_tx: ratio(c.data_reads as f64, tx),
        data_writes,
        data_writes_per_s: data_writes as f64 / elapsed,
        backend_writes: c.backend_writes,
        checkpoint_writes: c.checkpoint_writes,
        bgwriter_writes: c.bgwriter_writes,
        data_fsyncs: c.data_syncs,
        kernel_writeback_pages: (c.kernel_writeback_pages > 0).then_some(c.kernel_writeback_pages),
        fsync_writeback_pages: (c.fsync_writeback_pages > 0).then_some(c.fsync_writeback_pages),
        wal_records: w.records,
        wal_fpi: c.full_page_images,
        wal_bytes: w.bytes,
        wal_bytes_per_tx: ratio(w.bytes as f64, tx),
        wal_mb_per_s: w.bytes as f64 / elapsed / 1e6,
        wal_writes: c.wal_writes,
        wal_fdatasyncs: c.wal_syncs,
        wal_fdatasyncs_per_s: c.wal_syncs as f64 / elapsed,
        wal_written_bytes: c.wal_written_bytes,
        data_read_avg_us: c.read_time.mean_us(),
        backend_write_avg_us: c.backend_write_time.mean_us(),
        read_cpu_us_per_tx: ratio(c.read_cpu_time.sum_ns as f64 / 1e3, tx),
        client_thread_us_per_tx: ratio(c.client_thread_time.sum_ns as f64 / 1e3, tx),
        wal_write_avg_us: c.wal_write_time.mean_us(),
        wal_sync_avg_us: c.wal_sync_time.mean_us(),
        commits_per_flush: ratio(
            c.sync_commits as f64,
            (w.flushes - w.background_flushes) as f64,
        ),
        buffer_hit_ratio: ratio(
            c.buffer_hits as f64,
            (c.buffer_hits + c.buffer_misses) as f64,
        ),
        buffer_hits: c.buffer_hits,
        buffer_misses: c.buffer_misses,
        os_cache_hits: c.os_cache_hits,
        full_page_images_per_tx: ratio(c.full_page_images as f64, tx),
        checkpoints_started: c.checkpoints_started,
        checkpoints_completed: c.checkpoints_done,
        checkpoints_timed: c.checkpoints_timed,
        checkpoints_requested: c.checkpoints_requested,
        cpu_utilisation: ratio(
            db.cpu_busy_ns() as f64,
            elapsed_ns as f64 * db.config().cpus as f64,
        )
        .min(1.0),
        device_ios: None,
    }
}

impl RunResult {
    /// Build the result from a finished (or stopped) database.
    pub fn from_database(
        db: &Database,
        run: RunInfo,
        settings: serde_json::Value,
        partial: bool,
    ) -> RunResult {
        let s = db.stats();
        let elapsed_ns = db.end_time().unwrap_or(0).max(1);
        let tx = s.transactions as f64;
        RunResult {
            schema: SCHEMA.to_string(),
            schema_version: SCHEMA_VERSION,
            pgiosim_version: env!("CARGO_PKG_VERSION").to_string(),
            partial,
            run,
            settings,
            workload: db.workload().describe(),
            summary: summary(db, elapsed_ns),
            breakdown: breakdown_figures(s),
            io: io_figures(db, elapsed_ns, tx),
            checkpoints: checkpoint_figures(db),
            timeseries: timeseries(s, elapsed_ns),
            latency_cdf: latency_cdf(s),
            steady_state: Some(steady::SteadyFigures::new(
                &crate::steady_state::of_database(db, elapsed_ns),
            )),
            archive: db
                .archiver()
                .map(|a| archive_figures::ArchiveFigures::new(a, elapsed_ns)),
            replication: standby_figures(db),
        }
    }
}

/// The whole run's figures as pgbench prints them.
fn summary(db: &Database, elapsed_ns: u64) -> Summary {
    let s = db.stats();
    let c = s.counters;
    let tx = s.transactions as f64;
    let pct = |q: f64| s.latency.value_at_quantile(q) as f64 / 1e6;
    Summary {
        transactions: s.transactions,
        elapsed_s: elapsed_ns as f64 / 1e9,
        tps: tx / (elapsed_ns as f64 / 1e9),
        latency_ms: Latency {
            average: s.mean_latency_ns() / 1e6,
            stddev: s.stddev_latency_ns() / 1e6,
            p50: pct(0.5),
            p90: pct(0.9),
            p99: pct(0.99),
            p99_9: pct(0.999),
            max: s.latency.max() as f64 / 1e6,
        },
        rate_limit: db.config().rate.map(|r| RateFigures {
            requested_tps: r,
            lag_avg_ms: ratio(s.lag_sum_ns as f64, tx) / 1e6,
            lag_max_ms: s.lag_max_ns as f64 / 1e6,
            latency_limit_ms: db.config().latency_limit.map(|l| l as f64 / 1e6),
            skipped: c.skipped,
            late: c.late,
        }),
    }
}

/// Each bucket's mean per transaction, its share of the latency, its p99.
fn breakdown_figures(s: &Stats) -> Vec<BucketFigures> {
    let tx = s.transactions as f64;
    let mean_lat_ns = s.mean_latency_ns();
    Bucket::ALL
        .iter()
        .map(|b| {
            let sum = s.bucket_sum_ns[b.index()] as f64;
            BucketFigures {
                bucket: b.name().to_string(),
                mean_us: ratio(sum, tx) / 1e3,
                share: ratio(ratio(sum, tx), mean_lat_ns),
                p99_us: s.bucket_histogram(b.index()).value_at_quantile(0.99) as f64 / 1e3,
            }
        })
        .collect()
}

/// Every checkpoint: when it started and ended, why, how many buffers.
fn checkpoint_figures(db: &Database) -> Vec<CheckpointFigures> {
    db.checkpoints()
        .iter()
        .map(|e| CheckpointFigures {
            start_s: e.start as f64 / 1e9,
            end_s: e.end.map(|t| t as f64 / 1e9),
            trigger: match e.trigger {
                Trigger::Timed => "timed",
                Trigger::Wal => "wal",
            }
            .to_string(),
            buffers: e.buffers,
        })
        .collect()
}

/// The per-second series.
fn timeseries(s: &Stats, elapsed_ns: u64) -> Vec<SecondFigures> {
    // Whole seconds only: a trailing fraction would show a bogus rate.
    // Past SERIES_MAX_POINTS seconds each point covers `width` seconds:
    // `t` is its end, `tps` its mean rate, the counts its totals.
    let width = s.seconds.width_s();
    s.seconds
        .whole(elapsed_ns)
        .iter()
        .enumerate()
        .map(|(i, x)| SecondFigures {
            t: (i as u64 + 1) * width,
            tps: x.transactions as f64 / width as f64,
            latency_ms: ratio(x.latency_sum_ns as f64, x.transactions as f64) / 1e6,
            stddev_ms: stddev_ns(x.transactions, x.latency_sum_ns, x.latency_sq_sum_us2) / 1e6,
            data_reads: x.data_reads,
            data_writes: x.data_writes,
            wal_bytes: x.wal_bytes,
            wal_fdatasyncs: x.wal_syncs,
            checkpoint_starts: x.checkpoint_starts,
            checkpoint_ends: x.checkpoint_ends,
        })
        .collect()
}

/// The latency at every whole percentile and at the tail's.
fn latency_cdf(s: &Stats) -> Vec<CdfPoint> {
    if s.transactions == 0 {
        return Vec::new();
    }
    (0..100)
        .map(f64::from)
        .chain(CDF_TAIL_PERCENTILES.iter().copied())
        .map(|p| CdfPoint {
            percentile: p,
            ms: s.latency.value_at_quantile(p / 100.0) as f64 / 1e6,
        })
        .collect()
}

/// What each standby received and flushed.
fn standby_figures(db: &Database) -> Vec<StandbyFigures> {
    db.replication().map_or_else(Vec::new, |r| {
        r.standby_names()
            .enumerate()
            .map(|(i, name)| {
                let k = r.counters(i);
                StandbyFigures {
                    name: name.to_string(),
                    sync_state: r.sync_state(i).to_string(),
                    wal_writes: k.wal_writes,
                    wal_written_bytes: k.wal_written_bytes,
                    wal_fdatasyncs: k.wal_fdatasyncs,
                    replies: k.replies,
                }
            })
            .collect()
    })
}
