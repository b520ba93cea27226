//! From observed counter deltas to a workload spec and a postgresql.conf:
//! pure, so every rule here is unit-tested without a server.
//!
//! The shape it writes:
//! * One table, `data`, whose rows at `-s 1` fill the observed database size
//!   (heap at the observed rows per page, plus a btree on the key), and an
//!   append-only `inserted` table when rows were inserted.
//! * Transactions whose statements are the observed rows updated, deleted,
//!   inserted and fetched per transaction (`pg_stat_database`). Averages that
//!   are not whole numbers become a weighted mix of transaction types (for
//!   1.3 updates per transaction: 70% with 1 update, 30% with 2), so the
//!   mean of every kind is the observed one.
//! * WAL bytes per transaction without full-page images (`pg_stat_wal`:
//!   wal_bytes minus wal_fpi full-page images): standard record sizes on the
//!   statements, the rest on the commit. pgiosim adds full-page images
//!   itself, after each of its checkpoints, so they are not in the records.
//! * Keys drawn uniformly, or exponentially skewed when the observed buffer
//!   hit ratio is higher than uniform access over the database could give with
//!   the server's shared_buffers.
//! * A range scan when the observed pages touched per transaction are well
//!   above what the point accesses touch.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde::Serialize;

use super::sample::Delta;
use crate::settings::Settings;
use crate::workload::distribution::Distribution;
use crate::workload::spec::{
    ChangeSpec, IndexSpec, InsertSpec, KeySpec, RangeSpec, ReadSpec, StatementSpec, TableSpec,
    TransactionSpec, extended_cpu_default, prepared_cpu_default, process_wakeup_default,
    replay_cpu_per_fpi_default, replay_cpu_per_record_default, wal_flush_cpu_default,
};
use crate::workload::{Script, WorkloadSpec};

/// pgiosim's data page size, and PostgreSQL's default `BLCKSZ`.
const PAGE: f64 = 8192.0;
/// Average bytes of a full-page image, from tpcb-like.json (8192 minus the
/// page's hole). pg_stat_wal counts images, not their bytes.
pub const FPI_BYTES: u32 = 7977;
/// Index entries per btree leaf (pgbench's measured accounts_pkey: int keys,
/// leaf fillfactor 90) and children per internal page.
const ITEMS_PER_LEAF: u64 = 367;
const FANOUT: u64 = 282;
/// Rows per heap page when the user tables' sizes are not known (pgbench's
/// accounts: 121-byte tuples).
const DEFAULT_ROWS_PER_PAGE: u64 = 61;
/// WAL record sizes measured with pg_walinspect on pgbench (tpcb-like.json):
/// Heap/HOT_UPDATE 72 B, Heap/INSERT 79 B, Transaction/COMMIT 34 B; a
/// Heap/DELETE record is 54 B (24 header + 20 block reference + 8 xl_heap_delete, MAXALIGNed).
const UPDATE_WAL: f64 = 72.0;
const INSERT_WAL: f64 = 79.0;
const DELETE_WAL: f64 = 54.0;
const COMMIT_WAL: f64 = 34.0;
/// Btree/INSERT_LEAF of a non-HOT update.
const INDEX_INSERT_WAL: f64 = 64.0;
/// Fewest WAL bytes a record can average (a 24-byte header, a block reference
/// and some data): the floor when subtracting estimated full-page image
/// bytes leaves less.
const MIN_RECORD_BYTES: f64 = 40.0;
/// CPU and round trip per statement: pgbench's, measured on this project's
/// machine kind (tpcb-like.json); statistics views do not show them.
const CPU_US_PER_STATEMENT: f64 = 53.6;
const ROUND_TRIP_US_PER_STATEMENT: f64 = 19.0;
/// Most statements of one kind per transaction; more are capped (bulk loads).
const MAX_PER_KIND: u64 = 200;
/// Pages reserved for appends, as pgbench_history's (16 MiB, wrapping).
const APPEND_PAGES: u64 = 2048;
/// Largest exponential parameter chosen for skew.
const MAX_SKEW: f64 = 200.0;

/// Settings written to the .conf: pgiosim's modelled ones (as lines) and
/// these others (as comments, for a reader).
pub const INFO_SETTINGS: &[&str] = &[
    "fsync",
    "wal_level",
    "wal_compression",
    "wal_sync_method",
    "wal_log_hints",
    "data_checksums",
    "checkpoint_flush_after",
    "bgwriter_flush_after",
    "backend_flush_after",
    "effective_io_concurrency",
    "io_method",
    "max_connections",
    "block_size",
    "wal_segment_size",
    "server_version",
];

/// A row of `pg_settings`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerSetting {
    pub name: String,
    pub setting: String,
    pub unit: String,
}

/// Rows and sizes of the user tables (`pg_stat_user_tables`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TableSizes {
    pub live_rows: i64,
    pub heap_bytes: i64,
    pub index_bytes: i64,
}

/// Everything one capture observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub version_num: u32,
    /// `server_version`, e.g. "15.18 (Debian 15.18-0+deb12u1)".
    pub version: String,
    pub database: String,
    /// Where the server was reached ("socket /run/x/.s.PGSQL.5432").
    pub server: String,
    /// Server clock at the start of the interval.
    pub started_at: String,
    pub delta: Delta,
    /// Transactions the capture itself committed inside the interval.
    pub own_commits: i64,
    pub db_size_bytes: i64,
    pub sizes: Option<TableSizes>,
    pub settings: Vec<ServerSetting>,
    /// Most other client backends connected to the database at a sample.
    pub clients: i64,
    /// Mean of the non-idle ones over the samples.
    pub active_mean: f64,
    pub wal_io_source: String,
    pub checkpoint_source: String,
    /// Interrupted before the end of -T.
    pub partial: bool,
}

/// The observed figures, per transaction where that makes sense.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub server_version: String,
    pub server_version_num: u32,
    pub database: String,
    pub started_at: String,
    pub seconds: f64,
    pub partial: bool,
    pub commits: i64,
    pub rollbacks: i64,
    pub tps: f64,
    pub wal_bytes_per_tx: f64,
    /// "pg_stat_wal.wal_bytes" or "pg_current_wal_lsn()" (13).
    pub wal_bytes_from: String,
    pub wal_fpi_per_tx: Option<f64>,
    pub wal_records_per_tx: Option<f64>,
    pub wal_bytes_without_fpi_per_tx: f64,
    pub wal_writes_per_tx: Option<f64>,
    pub wal_syncs_per_tx: Option<f64>,
    pub wal_buffers_full: Option<i64>,
    pub blks_read_per_tx: f64,
    pub blks_hit_per_tx: f64,
    pub hit_ratio: Option<f64>,
    pub tup_fetched_per_tx: f64,
    pub tup_returned_per_tx: f64,
    pub tup_inserted_per_tx: f64,
    pub tup_updated_per_tx: f64,
    pub tup_deleted_per_tx: f64,
    /// HOT share of updates in user tables.
    pub hot_update_share: Option<f64>,
    pub checkpoints: i64,
    pub buffers_checkpoint_per_tx: f64,
    pub buffers_clean_per_tx: f64,
    pub buffers_backend_per_tx: Option<f64>,
    pub io_reads_per_tx: Option<f64>,
    pub io_writes_per_tx: Option<f64>,
    pub io_extends_per_tx: Option<f64>,
    pub clients: i64,
    pub active_clients_mean: f64,
    pub db_size_bytes: i64,
    /// The server's CPU per transaction, µs, and where it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_tx: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_from: Option<String>,
}

/// What `capture` writes.
#[derive(Debug, Clone)]
pub struct Captured {
    /// The workload file's text (validated).
    pub spec_json: String,
    pub spec: WorkloadSpec,
    /// The postgresql.conf text.
    pub conf: String,
    pub figures: Figures,
    /// The `-s` and `-c` to replay with.
    pub scale: u64,
    pub clients: u64,
}

/// Per-transaction averages of the statement kinds.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Mix {
    updates: f64,
    reads: f64,
    deletes: f64,
    inserts: f64,
}

/// One transaction type of the mix: whole counts and a weight.
#[derive(Debug, Clone, Copy, PartialEq)]
struct TxType {
    updates: u64,
    reads: u64,
    deletes: u64,
    inserts: u64,
    weight: f64,
}

impl TxType {
    fn writes(&self) -> bool {
        self.updates + self.deletes + self.inserts > 0
    }

    fn name(&self) -> String {
        let mut parts = Vec::new();
        for (n, one, many) in [
            (self.updates, "update", "updates"),
            (self.reads, "read", "reads"),
            (self.deletes, "delete", "deletes"),
            (self.inserts, "insert", "inserts"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {}", if n == 1 { one } else { many }));
            }
        }
        if parts.is_empty() {
            "no row access".into()
        } else {
            parts.join(", ")
        }
    }
}

/// A count split into its whole part and the chance of one more. A mean
/// within 10% of a whole number of at least 1 is taken as that number (the
/// per-table counters behind the reads lag the commit count by up to a second,
/// so 0.91 reads per transaction is pgbench's 1), and below 0.02 as none.
fn split(x: f64) -> (u64, f64) {
    let x = x.max(0.0);
    let nearest = x.round();
    if nearest >= 1.0 && (x - nearest).abs() <= 0.1 * nearest {
        return (nearest as u64, 0.0);
    }
    if x < 0.02 {
        return (0, 0.0);
    }
    let lo = x.floor();
    (lo as u64, x - lo)
}

/// The transaction types whose weighted means are `mix`: every combination of
/// each kind's whole part or one more, weighted by the product of chances.
fn tx_types(mix: &Mix) -> Vec<TxType> {
    let kinds = [mix.updates, mix.reads, mix.deletes, mix.inserts].map(split);
    let mut types = vec![TxType {
        updates: 0,
        reads: 0,
        deletes: 0,
        inserts: 0,
        weight: 1.0,
    }];
    for (k, (lo, f)) in kinds.iter().enumerate() {
        let mut next = Vec::new();
        for t in &types {
            for (extra, w) in [(0u64, 1.0 - f), (1, *f)] {
                if w <= 0.0 {
                    continue;
                }
                let mut t = *t;
                let n = (lo + extra).min(MAX_PER_KIND);
                match k {
                    0 => t.updates = n,
                    1 => t.reads = n,
                    2 => t.deletes = n,
                    _ => t.inserts = n,
                }
                t.weight *= w;
                next.push(t);
            }
        }
        types = next;
    }
    types
}

/// The exponential parameter `a` whose first `cached` share of keys draws a
/// `hit` share of accesses: (1 − e^(−a·cached)) / (1 − e^(−a)) = hit.
/// `None` when uniform access already gives that.
pub fn skew_for(cached: f64, hit: f64) -> Option<f64> {
    if !(cached > 0.0 && cached < 1.0) || hit <= cached + 0.01 {
        return None;
    }
    let share = |a: f64| (1.0 - (-a * cached).exp()) / (1.0 - (-a).exp());
    if share(MAX_SKEW) <= hit {
        return Some(MAX_SKEW);
    }
    let (mut lo, mut hi) = (1e-6, MAX_SKEW);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if share(mid) < hit {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Three significant digits.
    let a = (lo + hi) / 2.0;
    let digits = 10f64.powf(2.0 - a.log10().floor());
    Some((a * digits).round() / digits)
}

/// A pg_settings value as postgresql.conf writes it: with its unit, quoted
/// when it is not a number.
pub fn conf_value(setting: &str, unit: &str) -> String {
    let number = setting.parse::<f64>().is_ok();
    if !number {
        return format!("'{}'", setting.replace('\'', "''"));
    }
    match unit {
        "" => setting.to_string(),
        _ if setting.starts_with('-') => setting.to_string(),
        u if u.ends_with("kB") && u.len() > 2 => {
            // "8kB": a count of 8 kB blocks.
            match (u[..u.len() - 2].parse::<i64>(), setting.parse::<i64>()) {
                (Ok(m), Ok(v)) => format!("{}kB", m * v),
                _ => format!("'{setting}{u}'"),
            }
        }
        u if u.ends_with("MB") && u.len() > 2 => {
            match (u[..u.len() - 2].parse::<i64>(), setting.parse::<i64>()) {
                (Ok(m), Ok(v)) => format!("{}MB", m * v),
                _ => format!("'{setting}{u}'"),
            }
        }
        u => format!("{setting}{u}"),
    }
}

/// The postgresql.conf text: pgiosim's modelled settings as the server has
/// them, then the other relevant ones as comments.
pub fn conf_text(obs: &Observation, json_name: &str) -> String {
    let mut out = format!(
        "# Written by pgiosim capture from pg_settings of PostgreSQL {} (database {:?}, {}) at {}.\n\
         # Use it with the workload file: pgiosim run --workload {json_name} --config <this file>\n\n",
        obs.version, obs.database, obs.server, obs.started_at
    );
    let by_name: BTreeMap<&str, &ServerSetting> =
        obs.settings.iter().map(|s| (s.name.as_str(), s)).collect();
    for name in Settings::NAMES {
        let Some(s) = by_name.get(name) else { continue };
        let value = conf_value(&s.setting, &s.unit);
        match Settings::default().set(name, &value) {
            Ok(()) => out.push_str(&format!("{name} = {value}\n")),
            Err(e) => out.push_str(&format!(
                "# {name} = {value}    # not accepted by pgiosim: {e}\n"
            )),
        }
    }
    out.push_str("\n# Observed, not modelled by pgiosim:\n");
    for name in INFO_SETTINGS {
        if let Some(s) = by_name.get(name) {
            out.push_str(&format!("# {name} = {}\n", conf_value(&s.setting, &s.unit)));
        }
    }
    out
}

fn setting<'a>(obs: &'a Observation, name: &str) -> Option<&'a ServerSetting> {
    obs.settings.iter().find(|s| s.name == name)
}

/// shared_buffers in bytes, as pgiosim parses the server's value.
fn shared_buffers_bytes(obs: &Observation) -> u64 {
    let mut s = Settings::default();
    if let Some(sb) = setting(obs, "shared_buffers") {
        let _ = s.set("shared_buffers", &conf_value(&sb.setting, &sb.unit));
    }
    s.shared_buffers_bytes
}

/// Format with thousands separators and `digits` decimals.
fn num(x: f64, digits: usize) -> String {
    let s = format!("{:.*}", digits, x.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i.to_string(), format!(".{f}")),
        None => (s.clone(), String::new()),
    };
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    format!("{}{grouped}{frac}", if x < 0.0 { "-" } else { "" })
}

fn per(x: i64, n: f64) -> f64 {
    x as f64 / n
}

/// Derive the figures, the workload and the .conf from one observation.
/// `name` is the workload's name, `json_name` the file it will be written
/// to (named in the .conf and the replay command).
pub fn derive(obs: &Observation, name: &str, json_name: &str, conf_name: &str) -> Result<Captured> {
    let d = &obs.delta;
    if d.seconds <= 0.0 {
        bail!("the capture interval was empty: the server's clock did not advance");
    }
    let commits = d.xact_commit - obs.own_commits.min(d.xact_commit);
    if commits <= 0 {
        bail!(
            "no transaction committed in database {:?} during the {:.1} s capture (pg_stat_database.xact_commit did not grow beyond the capture's own): nothing to reproduce; is the workload running against this database?",
            obs.database,
            d.seconds
        );
    }
    let n = commits as f64;
    let tps = n / d.seconds;
    let (wal_bytes, wal_bytes_from) = match d.wal_bytes {
        Some(b) => (b, "pg_stat_wal.wal_bytes"),
        None => (d.wal_lsn_bytes, "pg_current_wal_lsn()"),
    };
    let wal_per_tx = per(wal_bytes, n);
    let fpi_per_tx = d.wal_fpi.map(|f| per(f, n));
    let records_per_tx = d.wal_records.map(|r| per(r, n));
    let floor = records_per_tx.map_or(0.0, |r| r * MIN_RECORD_BYTES);
    let wal_records_bytes = (wal_per_tx - fpi_per_tx.unwrap_or(0.0) * FPI_BYTES as f64)
        .max(floor)
        .min(wal_per_tx)
        .max(0.0);
    let hot_share = (d.n_tup_upd > 0).then(|| per(d.n_tup_hot_upd, d.n_tup_upd as f64));
    let non_hot = hot_share.map_or(0.0, |h| (1.0 - h).clamp(0.0, 1.0));
    let accesses = d.blks_read + d.blks_hit;
    let hit_ratio = (accesses > 0).then(|| per(d.blks_hit, accesses as f64));
    let figures = Figures {
        server_version: obs.version.clone(),
        server_version_num: obs.version_num,
        database: obs.database.clone(),
        started_at: obs.started_at.clone(),
        seconds: d.seconds,
        partial: obs.partial,
        commits,
        rollbacks: d.xact_rollback,
        tps,
        wal_bytes_per_tx: wal_per_tx,
        wal_bytes_from: wal_bytes_from.into(),
        wal_fpi_per_tx: fpi_per_tx,
        wal_records_per_tx: records_per_tx,
        wal_bytes_without_fpi_per_tx: wal_records_bytes,
        wal_writes_per_tx: d.wal_writes.map(|w| per(w, n)),
        wal_syncs_per_tx: d.wal_syncs.map(|s| per(s, n)),
        wal_buffers_full: d.wal_buffers_full,
        blks_read_per_tx: per(d.blks_read, n),
        blks_hit_per_tx: per(d.blks_hit, n),
        hit_ratio,
        tup_fetched_per_tx: per(d.tup_fetched, n),
        tup_returned_per_tx: per(d.tup_returned, n),
        tup_inserted_per_tx: per(d.tup_inserted, n),
        tup_updated_per_tx: per(d.tup_updated, n),
        tup_deleted_per_tx: per(d.tup_deleted, n),
        hot_update_share: hot_share,
        checkpoints: d.checkpoints_timed + d.checkpoints_requested,
        buffers_checkpoint_per_tx: per(d.buffers_checkpoint, n),
        buffers_clean_per_tx: per(d.buffers_clean, n),
        buffers_backend_per_tx: d.buffers_backend.map(|b| per(b, n)),
        io_reads_per_tx: d.io.as_ref().map(|io| per(io.reads, n)),
        io_writes_per_tx: d.io.as_ref().map(|io| per(io.writes, n)),
        io_extends_per_tx: d.io.as_ref().map(|io| per(io.extends, n)),
        clients: obs.clients,
        active_clients_mean: obs.active_mean,
        db_size_bytes: obs.db_size_bytes,
        cpu_us_per_tx: None,
        cpu_from: None,
    };

    // The statement mix: rows written per transaction, and reads: the
    // user tables' index scans that were not an update's or delete's (rows
    // fetched per such scan above 1.5 make them range scans), or, without
    // per-table figures, rows fetched less rows updated and deleted.
    let (reads, rows_per_read, reads_from) = reads_per_tx(d, n, &figures);
    let read_range_rows = (rows_per_read >= 1.5).then(|| rows_per_read.round() as u64);
    let mix = Mix {
        updates: figures.tup_updated_per_tx,
        deletes: figures.tup_deleted_per_tx,
        inserts: figures.tup_inserted_per_tx,
        reads,
    };
    let types = tx_types(&mix);
    // The means the types make (whole numbers rounded, large counts capped).
    let made = Mix {
        updates: types.iter().map(|t| t.weight * t.updates as f64).sum(),
        reads: types.iter().map(|t| t.weight * t.reads as f64).sum(),
        deletes: types.iter().map(|t| t.weight * t.deletes as f64).sum(),
        inserts: types.iter().map(|t| t.weight * t.inserts as f64).sum(),
    };
    let capped = [mix.updates, mix.reads, mix.deletes, mix.inserts]
        .iter()
        .any(|&x| x > MAX_PER_KIND as f64);

    // The tables.
    let (rows_per_page, rpp_source) = rows_per_page(obs);
    let db_pages = (obs.db_size_bytes as f64 / PAGE).max(1.0);
    let pages_per_row = 1.0 / rows_per_page as f64 + 1.0 / ITEMS_PER_LEAF as f64;
    let data_rows = ((db_pages / pages_per_row).floor() as u64).max(1);
    let any_inserts = types.iter().any(|t| t.inserts > 0);

    // WAL: standard record sizes on the statements, the rest on the commit of
    // the transactions that write (read-only ones log no commit record).
    let p_write: f64 = types.iter().filter(|t| t.writes()).map(|t| t.weight).sum();
    let statement_wal = UPDATE_WAL * made.updates
        + INSERT_WAL * made.inserts
        + DELETE_WAL * made.deletes
        + INDEX_INSERT_WAL * made.updates * non_hot;
    let (scale_records, commit_wal, wal_note) =
        wal_split(p_write, statement_wal, wal_records_bytes);

    // Skew: the hit ratio of leaf and heap accesses that the observation
    // implies, against the share of the database shared_buffers holds.
    let levels = btree_levels(data_rows);
    let keyed = made.updates + made.reads + made.deletes;
    let mut model_accesses = keyed * (levels + 1) as f64
        + made.inserts
        + made.updates * non_hot
        + read_range_rows.map_or(0.0, |r| made.reads * r as f64 * pages_per_row);
    let observed_accesses = figures.blks_read_per_tx + figures.blks_hit_per_tx;
    let point_accesses = model_accesses;
    let range_rows = {
        let gap = observed_accesses - point_accesses;
        if gap > 2.0 + 0.5 * model_accesses {
            let rows = ((gap - (levels + 1) as f64) / pages_per_row)
                .ceil()
                .max(1.0) as u64;
            Some(rows.min(data_rows))
        } else {
            None
        }
    };
    if let Some(r) = range_rows {
        model_accesses += (levels + 1) as f64 + r as f64 * pages_per_row;
    }
    let inner = (keyed + range_rows.map_or(0.0, |_| 1.0)) * (levels - 1) as f64;
    let sb = shared_buffers_bytes(obs);
    let cached = (sb as f64 / (db_pages * PAGE)).min(1.0);
    let (distribution, dist_note) =
        key_distribution(hit_ratio, model_accesses, inner, cached, levels, sb);

    // The transaction types.
    let shape = Shape {
        distribution,
        non_hot,
        scale_records,
        commit_wal,
        read_range_rows,
        range_rows,
        data_rows,
        observed_accesses,
        point_accesses,
    };
    let mut transactions: Vec<TransactionSpec> = types
        .iter()
        .map(|t| transaction(t, types.len(), &shape))
        .collect();
    // Drop types too rare to matter (weights below 0.01%), keeping one.
    transactions.retain(|t| t.weight > 0.0);

    let tables = tables(obs, data_rows, rows_per_page, &rpp_source, any_inserts);

    let clients = obs.clients.max(1) as u64;
    let replay =
        format!("pgiosim run --workload {json_name} --config {conf_name} -s 1 -c {clients}");
    let mut sources = BTreeMap::new();
    let mut src = |k: &str, v: String| {
        sources.insert(k.to_string(), v);
    };
    src(
        "observed.interval",
        format!(
            "{:.2} s from {} (server clock){}",
            d.seconds,
            obs.started_at,
            if obs.partial {
                "; interrupted before the end of -T"
            } else {
                ""
            }
        ),
    );
    src(
        "observed.transactions",
        format!(
            "{} tps: {} commits (pg_stat_database.xact_commit delta {} less the capture's own {}) over {:.2} s; {} rollbacks",
            num(tps, 1),
            num(n, 0),
            num(d.xact_commit as f64, 0),
            obs.own_commits.min(d.xact_commit),
            d.seconds,
            num(d.xact_rollback as f64, 0)
        ),
    );
    src(
        "observed.wal_bytes",
        format!(
            "{} B/tx: {} B ({wal_bytes_from} delta) / {} commits; {} B/tx without full-page images",
            num(wal_per_tx, 1),
            num(wal_bytes as f64, 0),
            num(n, 0),
            num(wal_records_bytes, 1)
        ),
    );
    src(
        "observed.full_page_images",
        match d.wal_fpi {
            Some(f) => format!(
                "{:.3} per transaction: {} (pg_stat_wal.wal_fpi delta), estimated at {FPI_BYTES} B each; pgiosim makes its own after each checkpoint, so they are not in the records below",
                per(f, n),
                num(f as f64, 0)
            ),
            None => format!(
                "unknown: PostgreSQL {} has no pg_stat_wal (new in 14); the WAL bytes above include them, and pgiosim adds its own on top",
                obs.version
            ),
        },
    );
    if let Some(r) = d.wal_records {
        src(
            "observed.wal_records",
            format!(
                "{:.2} per transaction (pg_stat_wal.wal_records delta {})",
                per(r, n),
                num(r as f64, 0)
            ),
        );
    }
    src(
        "observed.wal_writes_syncs",
        match (d.wal_writes, d.wal_syncs) {
            (Some(w), Some(s)) => format!(
                "{:.3} WAL writes and {:.3} WAL syncs per transaction ({}); wal_buffers_full {}",
                per(w, n),
                per(s, n),
                obs.wal_io_source,
                d.wal_buffers_full
                    .map_or("unknown".into(), |b| num(b as f64, 0))
            ),
            _ => obs.wal_io_source.clone(),
        },
    );
    src(
        "observed.blocks",
        format!(
            "{:.2} blocks read and {:.2} hit per transaction (pg_stat_database blks_read, blks_hit); hit ratio {}; a read is a shared-buffer miss, which the OS page cache may have served",
            figures.blks_read_per_tx,
            figures.blks_hit_per_tx,
            hit_ratio.map_or("n/a".into(), |h| format!("{:.2}%", h * 100.0))
        ),
    );
    src(
        "observed.tuples",
        format!(
            "per transaction: {:.3} fetched, {:.3} returned, {:.3} inserted, {:.3} updated, {:.3} deleted (pg_stat_database tup_*); observed statements: {:.3} updates, {:.3} reads{} ({reads_from}), {:.3} deletes, {:.3} inserts; replayed: {:.3} updates, {:.3} reads, {:.3} deletes, {:.3} inserts{}",
            figures.tup_fetched_per_tx,
            figures.tup_returned_per_tx,
            figures.tup_inserted_per_tx,
            figures.tup_updated_per_tx,
            figures.tup_deleted_per_tx,
            mix.updates,
            mix.reads,
            read_range_rows.map_or(String::new(), |r| format!(" of {r} rows each")),
            mix.deletes,
            mix.inserts,
            made.updates,
            made.reads,
            made.deletes,
            made.inserts,
            if capped {
                format!("; capped at {MAX_PER_KIND} statements of a kind per transaction")
            } else {
                String::new()
            }
        ),
    );
    src(
        "observed.hot_updates",
        match hot_share {
            Some(h) => format!(
                "{:.1}% of user-table updates were HOT (pg_stat_user_tables n_tup_hot_upd {} of n_tup_upd {}): non_hot_fraction {:.3}",
                h * 100.0,
                num(d.n_tup_hot_upd as f64, 0),
                num(d.n_tup_upd as f64, 0),
                non_hot
            ),
            None => "no user-table updates".into(),
        },
    );
    src(
        "observed.checkpoints",
        format!(
            "{} timed and {} requested checkpoints; {:.3} buffers written by checkpoints, {:.3} by the bgwriter{} per transaction ({})",
            d.checkpoints_timed,
            d.checkpoints_requested,
            figures.buffers_checkpoint_per_tx,
            figures.buffers_clean_per_tx,
            figures
                .buffers_backend_per_tx
                .map_or(String::new(), |b| format!(" and {b:.3} by backends")),
            obs.checkpoint_source
        ),
    );
    if let Some(io) = &d.io {
        src(
            "observed.pg_stat_io",
            format!(
                "client backends, relations, per transaction: {:.3} reads, {:.3} hits, {:.3} writes, {:.3} extends, {:.3} evictions, {:.3} fsyncs",
                per(io.reads, n),
                per(io.hits, n),
                per(io.writes, n),
                per(io.extends, n),
                per(io.evictions, n),
                per(io.fsyncs, n)
            ),
        );
    }
    src(
        "observed.clients",
        format!(
            "{} client connections to the database at most (pg_stat_activity, the capture's own excluded), {:.1} active on average: replay with -c {clients}",
            obs.clients, obs.active_mean
        ),
    );
    src(
        "observed.database_size",
        format!(
            "{} B (pg_database_size): the data table at -s 1{}",
            num(obs.db_size_bytes as f64, 0),
            obs.sizes.map_or(String::new(), |s| format!(
                "; user tables {} B in heaps and {} B in indexes",
                num(s.heap_bytes as f64, 0),
                num(s.index_bytes as f64, 0)
            ))
        ),
    );
    src(
        "settings",
        format!("pg_settings of the server, written to {conf_name}"),
    );
    src("wal", wal_note);
    src("keys", dist_note);
    src(
        "cpu_us_per_statement",
        "not visible in statistics views: pgbench's measured CPU per statement on this project's machine kind (tpcb-like.json); set it from the server's CPU time per transaction if known".into(),
    );
    src(
        "round_trip_us_per_statement",
        "not visible in statistics views: pgbench's measured local unix-socket round trip (tpcb-like.json)".into(),
    );
    src(
        "full_page_image_bytes",
        format!(
            "pg_stat_wal counts images, not bytes: {FPI_BYTES} B, the average measured on pgbench (8192 B less the page's hole){}",
            setting(obs, "wal_compression")
                .filter(|s| s.setting != "off")
                .map_or(String::new(), |s| format!(
                    "; the server has wal_compression = {}, so its images are smaller",
                    s.setting
                ))
        ),
    );
    src(
        "index_insert_wal_bytes",
        "Btree/INSERT_LEAF of a non-HOT update, as tpcb-like.json".into(),
    );
    src(
        "checkpoint_record_bytes",
        "XLOG/CHECKPOINT_ONLINE record size in PostgreSQL 15".into(),
    );
    if let Some(bs) = setting(obs, "block_size")
        && bs.setting != "8192"
    {
        src(
            "block_size",
            format!(
                "the server uses {} B pages; pgiosim models 8192 B pages",
                bs.setting
            ),
        );
    }

    let out = WorkloadSpec {
        name: name.to_string(),
        description: format!(
            "<captured: database {:?}, PostgreSQL {}, {} tps, {} clients; replay with -s 1 -c {clients}>",
            obs.database,
            crate::capture::queries::version_name(obs.version_num),
            num(tps, 0),
            obs.clients
        ),
        source: Some(format!(
            "pgiosim capture of database {:?} on PostgreSQL {} ({}), {:.1} s from {}: {} tps, {} B WAL/tx, {} blocks read and {} hit per transaction. Replay: {replay} (add -R {:.0} for the observed rate); sources says where each figure comes from",
            obs.database,
            obs.version,
            obs.server,
            d.seconds,
            obs.started_at,
            num(tps, 1),
            num(wal_per_tx, 0),
            num(figures.blks_read_per_tx, 2),
            num(figures.blks_hit_per_tx, 2),
            tps
        )),
        tables,
        transactions,
        cpu_us_per_statement: CPU_US_PER_STATEMENT,
        round_trip_us_per_statement: ROUND_TRIP_US_PER_STATEMENT,
        // Not visible in statistics views: the defaults.
        cpu_us_per_read: 0.0,
        cpu_us_per_write: 0.0,
        reclaim_cpu_us_per_read: 0.0,
        reclaim_cpu_us_per_kib_written: 0.0,
        client_cpu_us_per_statement: 0.0,
        cpu_growth_per_backend: 0.0,
        io_cpu_growth_per_backend: 0.0,
        cpu_growth_above_backends: 0,
        prepared_cpu_factor: prepared_cpu_default(),
        extended_cpu_factor: extended_cpu_default(),
        wal_flush_cpu_us: wal_flush_cpu_default(),
        process_wakeup_us: process_wakeup_default(),
        replay_cpu_us_per_record: replay_cpu_per_record_default(),
        replay_cpu_us_per_fpi: replay_cpu_per_fpi_default(),
        full_page_image_bytes: FPI_BYTES,
        index_insert_wal_bytes: INDEX_INSERT_WAL as u32,
        checkpoint_record_bytes: 114,
        sources,
    };
    let spec_json = serde_json::to_string_pretty(&out)? + "\n";
    let spec = WorkloadSpec::from_json(&spec_json, json_name)?;
    // It must compile too (the same check `run` makes).
    Script::new(&spec, 1)?;
    Ok(Captured {
        spec_json,
        spec,
        conf: conf_text(obs, json_name),
        figures,
        scale: 1,
        clients,
    })
}

/// Reads per transaction, rows fetched per read, and where the figure
/// comes from.
fn reads_per_tx(d: &Delta, n: f64, figures: &Figures) -> (f64, f64, String) {
    match (d.index_read_scans, d.index_read_rows) {
        (Some(scans), Some(rows)) => (
            per(scans, n),
            if scans > 0 {
                rows as f64 / scans as f64
            } else {
                1.0
            },
            format!(
                "{:.3} index scans per transaction that were not an update's or delete's (pg_stat_user_tables, per table: idx_scan less n_tup_upd and n_tup_del), {:.2} rows fetched each",
                per(scans, n),
                if scans > 0 {
                    rows as f64 / scans as f64
                } else {
                    0.0
                }
            ),
        ),
        _ => (
            (figures.tup_fetched_per_tx - figures.tup_updated_per_tx - figures.tup_deleted_per_tx)
                .max(0.0),
            1.0,
            "rows fetched less rows updated and deleted (pg_stat_database)".to_string(),
        ),
    }
}

/// Rows per heap page of the data table, and where the figure comes from.
fn rows_per_page(obs: &Observation) -> (u64, String) {
    match obs.sizes {
        Some(s) if s.live_rows > 0 && s.heap_bytes as f64 >= PAGE => {
            let pages = s.heap_bytes as f64 / PAGE;
            let rpp = ((s.live_rows as f64 / pages).round() as u64).clamp(1, 1000);
            (
                rpp,
                format!(
                    "{} live rows in {} heap pages of the user tables (pg_stat_user_tables.n_live_tup, pg_relation_size): {rpp} rows per page",
                    num(s.live_rows as f64, 0),
                    num(pages, 0)
                ),
            )
        }
        _ => (
            DEFAULT_ROWS_PER_PAGE,
            format!(
                "user table sizes not available: {DEFAULT_ROWS_PER_PAGE} rows per page, as pgbench_accounts"
            ),
        ),
    }
}

/// How the observed WAL records per transaction split between the
/// statements and the commit: the factor scaling every record, the commit's
/// bytes, and a note on how.
fn wal_split(p_write: f64, statement_wal: f64, wal_records_bytes: f64) -> (f64, f64, String) {
    if p_write <= 0.0 {
        (
            1.0,
            0.0,
            format!(
                "no rows were written, so no transaction logs a commit record; the {} B/tx of WAL observed (vacuum, hint bits, other databases) is not replayed",
                num(wal_records_bytes, 1)
            ),
        )
    } else {
        let rest = wal_records_bytes - statement_wal - COMMIT_WAL * p_write;
        if rest >= 0.0 {
            let commit = COMMIT_WAL + rest / p_write;
            (
                1.0,
                commit,
                format!(
                    "statements log standard records (update 72 B, insert 79 B, delete 54 B, 64 B index entry per non-HOT update: {} B/tx); the commit logs the 34 B commit record plus the rest of the observed {} B/tx ({} B per writing transaction, {:.0}% of transactions write)",
                    num(statement_wal, 1),
                    num(wal_records_bytes, 1),
                    num(commit - COMMIT_WAL, 1),
                    p_write * 100.0
                ),
            )
        } else {
            let s = (wal_records_bytes / (statement_wal + COMMIT_WAL * p_write)).max(0.01);
            (
                s,
                COMMIT_WAL * s,
                format!(
                    "the observed {} B/tx is less than standard record sizes give ({} B/tx): every record is scaled by {s:.2}",
                    num(wal_records_bytes, 1),
                    num(statement_wal + COMMIT_WAL * p_write, 1)
                ),
            )
        }
    }
}

/// The keys' distribution: skewed when the observed hit ratio is above
/// what uniform keys give with shared_buffers, and a note on why.
fn key_distribution(
    hit_ratio: Option<f64>,
    model_accesses: f64,
    inner: f64,
    cached: f64,
    levels: u64,
    sb: u64,
) -> (Distribution, String) {
    match hit_ratio {
        Some(h) if model_accesses > inner => {
            let h_leaf = ((h * model_accesses - inner) / (model_accesses - inner)).clamp(0.0, 1.0);
            match skew_for(cached, h_leaf) {
                Some(a) => (
                    Distribution::Exponential { parameter: a },
                    format!(
                        "observed hit ratio {:.2}% (pg_stat_database blks_hit / (blks_hit + blks_read)); with {levels}-level index paths whose upper pages always hit, {:.1}% of leaf and heap accesses must hit, but shared_buffers ({}) holds only {:.1}% of the database: keys are skewed, exponential with parameter {a}, so that the first {:.1}% of keys draw {:.1}% of accesses",
                        h * 100.0,
                        h_leaf * 100.0,
                        crate::units::format_memory(sb),
                        cached * 100.0,
                        cached * 100.0,
                        h_leaf * 100.0
                    ),
                ),
                None => (
                    Distribution::Uniform,
                    format!(
                        "observed hit ratio {:.2}%: uniform keys give it, shared_buffers ({}) holding {:.1}% of the database",
                        h * 100.0,
                        crate::units::format_memory(sb),
                        cached * 100.0
                    ),
                ),
            }
        }
        _ => (
            Distribution::Uniform,
            "no block accesses observed: uniform keys".to_string(),
        ),
    }
}

/// The data table (and the append-only `inserted` one when rows were
/// inserted).
fn tables(
    obs: &Observation,
    data_rows: u64,
    rows_per_page: u64,
    rpp_source: &str,
    any_inserts: bool,
) -> BTreeMap<String, TableSpec> {
    let mut tables = BTreeMap::new();
    tables.insert(
    "data".to_string(),
    TableSpec {
        rows_per_scale: data_rows,
        rows_per_page,
        append_pages: 0,
        full_at_load: false,
        index: Some(IndexSpec {
            items_per_leaf: ITEMS_PER_LEAF,
            fanout: FANOUT,
            source: Some("a btree on the key, as pgbench's accounts_pkey (367 int keys per leaf, 282 children per internal page)".into()),
        }),
        source: Some(format!(
            "the database's {} (pg_database_size) as one table at -s 1: {} rows at {rows_per_page} per heap page plus their index; rows per page: {rpp_source}",
            crate::units::pretty_bytes(obs.db_size_bytes.max(0) as u64),
            num(data_rows as f64, 0)
        )),
    },
);
    if any_inserts {
        tables.insert(
        "inserted".to_string(),
        TableSpec {
            rows_per_scale: 0,
            rows_per_page,
            append_pages: APPEND_PAGES,
            full_at_load: false,
            index: None,
            source: Some("inserted rows are appended here (a new page every rows_per_page inserts); 16 MiB reserved, pgiosim wraps around".into()),
        },
    );
    }
    tables
}

/// What every transaction type's statements share.
struct Shape {
    distribution: Distribution,
    /// Share of updates that are not HOT.
    non_hot: f64,
    /// The factor scaling every WAL record (`wal_split`).
    scale_records: f64,
    commit_wal: f64,
    /// Rows per read when reads are range scans.
    read_range_rows: Option<u64>,
    /// Rows of the extra range scan making up the pages touched, if any.
    range_rows: Option<u64>,
    data_rows: u64,
    observed_accesses: f64,
    point_accesses: f64,
}

impl Shape {
    /// A record of `bytes` standard size, scaled.
    fn wal_of(&self, bytes: f64) -> u32 {
        ((bytes * self.scale_records).round() as u32).max(1)
    }
}

/// One transaction type of `n_types` as a workload transaction: its keys,
/// its statements and its commit.
fn transaction(t: &TxType, n_types: usize, shape: &Shape) -> TransactionSpec {
    let mut keys = BTreeMap::new();
    let mut statements = Vec::new();
    let key = |keys: &mut BTreeMap<String, KeySpec>| {
        let k = format!("k{}", keys.len() + 1);
        keys.insert(
            k.clone(),
            KeySpec {
                table: "data".into(),
                distribution: shape.distribution,
            },
        );
        k
    };
    for _ in 0..t.updates {
        let k = key(&mut keys);
        statements.push(StatementSpec {
            sql: Some(format!("UPDATE data SET ... WHERE key = :{k}")),
            update: Some(ChangeSpec {
                key: k,
                non_hot_fraction: Some((shape.non_hot * 1000.0).round() / 1000.0),
                table: "data".into(),
                wal_bytes: shape.wal_of(UPDATE_WAL),
            }),
            ..StatementSpec::default()
        });
    }
    for _ in 0..t.reads {
        let k = key(&mut keys);
        statements.push(match shape.read_range_rows {
            None => StatementSpec {
                sql: Some(format!("SELECT ... FROM data WHERE key = :{k}")),
                read: Some(ReadSpec {
                    key: k,
                    table: "data".into(),
                }),
                ..StatementSpec::default()
            },
            Some(rows) => StatementSpec {
                sql: Some(format!(
                    "SELECT ... FROM data WHERE key >= :{k} LIMIT {rows}"
                )),
                range: Some(RangeSpec {
                    key: k,
                    rows: rows.min(shape.data_rows),
                    table: "data".into(),
                }),
                ..StatementSpec::default()
            },
        });
    }
    for _ in 0..t.deletes {
        let k = key(&mut keys);
        statements.push(StatementSpec {
            sql: Some(format!("DELETE FROM data WHERE key = :{k}")),
            delete: Some(ChangeSpec {
                key: k,
                non_hot_fraction: None,
                table: "data".into(),
                wal_bytes: shape.wal_of(DELETE_WAL),
            }),
            ..StatementSpec::default()
        });
    }
    for _ in 0..t.inserts {
        statements.push(StatementSpec {
            sql: Some("INSERT INTO inserted VALUES (...)".into()),
            insert: Some(InsertSpec {
                table: "inserted".into(),
                wal_bytes: shape.wal_of(INSERT_WAL),
            }),
            ..StatementSpec::default()
        });
    }
    if let Some(rows) = shape.range_rows {
        let k = key(&mut keys);
        statements.push(StatementSpec {
            sql: Some(format!(
                "SELECT ... FROM data WHERE key >= :{k} LIMIT {rows}"
            )),
            range: Some(RangeSpec {
                key: k,
                rows,
                table: "data".into(),
            }),
            source: Some(format!(
                "observed {} pages touched per transaction (blks_read + blks_hit), {} more than the point accesses touch: a range scan of {rows} rows makes up the difference",
                num(shape.observed_accesses, 1),
                num(shape.observed_accesses - shape.point_accesses, 1)
            )),
            ..StatementSpec::default()
        });
    }
    if statements.len() > 1 {
        statements.insert(0, sql_only("BEGIN"));
        statements.push(sql_only("END"));
    } else if statements.is_empty() {
        statements.push(sql_only("SELECT (no row access observed)"));
    }
    let commit = if t.writes() {
        (shape.commit_wal.round() as u32).max(1)
    } else {
        0
    };
    TransactionSpec {
        name: if n_types == 1 {
            "captured".into()
        } else {
            t.name()
        },
        weight: (t.weight * 10000.0).round() / 10000.0,
        keys,
        statements,
        commit_wal_bytes: commit,
        source: Some(if n_types == 1 {
            format!("{}: the observed mix per transaction", t.name())
        } else {
            format!(
                "{}: {:.2}% of transactions; the weighted mix of the {} types has the observed means",
                t.name(),
                t.weight * 100.0,
                n_types
            )
        }),
    }
}

/// A statement with no page access (BEGIN, END).
fn sql_only(sql: &str) -> StatementSpec {
    StatementSpec {
        sql: Some(sql.into()),
        ..StatementSpec::default()
    }
}

/// Levels of the data table's btree for `rows` keys (as script.rs builds it).
fn btree_levels(rows: u64) -> u64 {
    let mut count = rows.div_ceil(ITEMS_PER_LEAF).max(1);
    let mut levels = 1;
    while count > 1 {
        count = count.div_ceil(FANOUT);
        levels += 1;
    }
    levels
}

#[cfg(test)]
mod tests;
