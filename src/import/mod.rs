//! Results of other tools as `pgiosim.result` files, so that `compare` and
//! `report` put a real PostgreSQL run beside `run` and `model`: what
//! `pgiosim import` reads (`pgbench`) and the result built from it.

pub mod pgbench;

use std::path::Path;

use anyhow::Result;

use crate::error::UsageError;
use crate::report::{
    BucketFigures, IoFigures, Latency, RunInfo, RunResult, SCHEMA, SCHEMA_VERSION, Summary,
};

/// The result of a real run, in pgiosim's schema: its pgbench report, read
/// from `output`, and the statistics sampled around it, read from
/// `statistics` (the paths go into the result's provenance).
pub fn build(
    report: &pgbench::PgbenchReport,
    stats: Option<&pgbench::Statistics>,
    cpus: u32,
    output: &Path,
    statistics: Option<&Path>,
) -> Result<RunResult> {
    let x = report.transactions as f64;
    let elapsed = report.duration_s.unwrap_or(if report.tps > 0.0 {
        x / report.tps
    } else {
        0.0
    });
    let lat_us = report.latency_average_ms * 1e3;
    let mut breakdown = Vec::new();
    let mut provenance = serde_json::Map::new();
    provenance.insert("pgbench_output".into(), output.display().to_string().into());
    let mut io = IoFigures::default();
    if let Some(st) = stats {
        let shares =
            pgbench::shares(report, st, elapsed).map_err(|e| UsageError(format!("{e:#}")))?;
        for (bucket, share) in &shares.buckets {
            breakdown.push(BucketFigures {
                bucket: (*bucket).to_string(),
                mean_us: share * lat_us,
                share: *share,
                p99_us: f64::NAN,
            });
        }
        provenance.insert(
            "statistics".into(),
            statistics.map(|p| p.display().to_string()).into(),
        );
        provenance.insert("wal_fsync_source".into(), shares.wal_fsync_source.into());
        provenance.insert("cpu_source".into(), shares.cpu_source.into());
        io = io_figures(report, st, elapsed);
    }
    let mut workload = serde_json::Map::new();
    workload.insert("name".into(), report.workload.clone().into());
    workload.insert("imported_from".into(), provenance.into());
    Ok(RunResult {
        schema: SCHEMA.into(),
        schema_version: SCHEMA_VERSION,
        pgiosim_version: env!("CARGO_PKG_VERSION").into(),
        partial: false,
        run: run_info(report, cpus),
        settings: serde_json::Value::Object(Default::default()),
        workload: workload.into(),
        summary: summary(report, elapsed),
        breakdown,
        io,
        checkpoints: Vec::new(),
        timeseries: Vec::new(),
        latency_cdf: Vec::new(),
        replication: Vec::new(),
        archive: None,
        steady_state: None,
    })
}

/// pgbench's whole-run figures; the latency percentiles are unknown (NaN).
fn summary(report: &pgbench::PgbenchReport, elapsed: f64) -> Summary {
    Summary {
        transactions: report.transactions,
        elapsed_s: elapsed,
        tps: report.tps,
        latency_ms: Latency {
            average: report.latency_average_ms,
            stddev: report.latency_stddev_ms.unwrap_or(f64::NAN),
            p50: f64::NAN,
            p90: f64::NAN,
            p99: f64::NAN,
            p99_9: f64::NAN,
            max: f64::NAN,
        },
        rate_limit: None,
    }
}

/// What was run, as the pgbench report says: no pgiosim engine, device or
/// seed.
fn run_info(report: &pgbench::PgbenchReport, cpus: u32) -> RunInfo {
    RunInfo {
        cpu_probe: None,
        cpu: None,
        mode: "postgres".into(),
        workload: report.workload.clone(),
        transaction_type: report.transaction_type.clone(),
        clients: report.clients,
        cpus,
        threads_per_core: 0,
        cpu_speed: 0.0,
        query_mode: report.query_mode.clone(),
        jobs: report.threads,
        client_rtt_us: None,
        client_tls: false,
        duration_s: report.duration_s,
        transactions_per_client: report.transactions_per_client,
        scale: report.scale,
        io_engine: String::new(),
        data_io: String::new(),
        os_cache_bytes: 0,
        dir: String::new(),
        wal_dir: String::new(),
        seed: 0,
        device: None,
        timer_lag: None,
        precision_pct: None,
        stopped_on: None,
        stopped_because: None,
    }
}

/// The I/O figures PostgreSQL's statistics give.
fn io_figures(r: &pgbench::PgbenchReport, st: &pgbench::Statistics, elapsed: f64) -> IoFigures {
    let get =
        |m: &std::collections::BTreeMap<String, f64>, k: &str| m.get(k).copied().unwrap_or(0.0);
    let (db, wal) = (&st.stats_delta.db, &st.stats_delta.wal);
    let (bg, ck) = (&st.stats_delta.bgwriter, &st.stats_delta.checkpointer);
    let x = (r.transactions as f64).max(1.0);
    let per_s = |v: f64| if elapsed > 0.0 { v / elapsed } else { 0.0 };
    let (hits, misses) = (get(db, "blks_hit"), get(db, "blks_read"));
    let syncs = get(wal, "wal_sync");
    let timed = get(bg, "checkpoints_timed") + get(ck, "num_timed");
    let requested = get(bg, "checkpoints_req") + get(ck, "num_requested");
    let disk_reads = get(&st.cgroups.postgres, "io_read_ios");
    IoFigures {
        data_reads: disk_reads as u64,
        data_reads_per_s: per_s(disk_reads),
        data_reads_per_tx: disk_reads / x,
        checkpoint_writes: (get(bg, "buffers_checkpoint") + get(ck, "buffers_written")) as u64,
        bgwriter_writes: get(bg, "buffers_clean") as u64,
        backend_writes: get(bg, "buffers_backend") as u64,
        wal_records: get(wal, "wal_records") as u64,
        wal_fpi: get(wal, "wal_fpi") as u64,
        wal_bytes: get(wal, "wal_bytes") as u64,
        wal_bytes_per_tx: get(wal, "wal_bytes") / x,
        wal_mb_per_s: per_s(get(wal, "wal_bytes")) / 1e6,
        wal_writes: get(wal, "wal_write") as u64,
        wal_fdatasyncs: syncs as u64,
        wal_fdatasyncs_per_s: per_s(syncs),
        wal_sync_avg_us: if syncs > 0.0 {
            get(wal, "wal_sync_time") / syncs * 1e3
        } else {
            0.0
        },
        commits_per_flush: if syncs > 0.0 { x / syncs } else { 0.0 },
        buffer_hits: hits as u64,
        buffer_misses: misses as u64,
        buffer_hit_ratio: if hits + misses > 0.0 {
            hits / (hits + misses)
        } else {
            0.0
        },
        full_page_images_per_tx: get(wal, "wal_fpi") / x,
        checkpoints_started: (timed + requested) as u64,
        checkpoints_timed: timed as u64,
        checkpoints_requested: requested as u64,
        ..IoFigures::default()
    }
}
