//! One reading of the server's cumulative counters, and the difference of two.

use anyhow::{Result, anyhow, bail};
use postgres::Transaction;
use postgres::error::SqlState;
use postgres::types::ToSql;
use serde::Serialize;

use super::queries::{Queries, Query};

/// Run `q` and return its one row; errors say which view was being read and,
/// for a permission error, what the role needs.
pub fn query_one(
    tx: &mut Transaction<'_>,
    q: &Query,
    params: &[&(dyn ToSql + Sync)],
) -> Result<postgres::Row> {
    let mut rows = query(tx, q, params)?;
    match rows.len() {
        1 => Ok(rows.remove(0)),
        n => bail!("reading {}: expected one row, got {n}", q.reads),
    }
}

/// Run `q` and return its rows, with errors as [`query_one`]'s.
pub fn query(
    tx: &mut Transaction<'_>,
    q: &Query,
    params: &[&(dyn ToSql + Sync)],
) -> Result<Vec<postgres::Row>> {
    tx.query(q.sql, params).map_err(|e| query_error(q, &e))
}

/// An error of a statistics query in the user's terms.
pub fn query_error(q: &Query, e: &postgres::Error) -> anyhow::Error {
    match e.as_db_error() {
        Some(db) if *db.code() == SqlState::INSUFFICIENT_PRIVILEGE => anyhow!(
            "missing privileges: permission denied reading {} ({}); capture needs read access to the \
             statistics views: grant the role pg_monitor (or pg_read_all_stats), or SELECT on {}",
            q.reads,
            db.message(),
            q.reads
        ),
        Some(db) => anyhow!(
            "reading {} failed: {}: {}{}",
            q.reads,
            db.severity(),
            db.message(),
            db.hint()
                .map(|h| format!(" (hint: {h})"))
                .unwrap_or_default()
        ),
        None => anyhow!("reading {} failed: {e:#}", q.reads),
    }
}

/// The cumulative counters at one moment.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Sample {
    /// Server clock, seconds since the epoch.
    pub at_s: f64,
    /// Server clock, for people.
    pub at_text: String,
    pub xact_commit: i64,
    pub xact_rollback: i64,
    pub blks_read: i64,
    pub blks_hit: i64,
    pub tup_returned: i64,
    pub tup_fetched: i64,
    pub tup_inserted: i64,
    pub tup_updated: i64,
    pub tup_deleted: i64,
    pub db_size_bytes: i64,
    pub wal_records: Option<i64>,
    pub wal_fpi: Option<i64>,
    /// `pg_stat_wal.wal_bytes` (14+).
    pub wal_bytes: Option<i64>,
    /// The WAL insert position in bytes (every version).
    pub wal_lsn_bytes: i64,
    pub wal_buffers_full: Option<i64>,
    pub wal_writes: Option<i64>,
    pub wal_syncs: Option<i64>,
    pub checkpoints_timed: i64,
    pub checkpoints_requested: i64,
    pub buffers_checkpoint: i64,
    pub buffers_clean: i64,
    pub buffers_backend: Option<i64>,
    /// Client backends' relation I/O from pg_stat_io (16+).
    pub io: Option<IoCounters>,
    /// Per user table counters (`pg_stat_user_tables`).
    pub tables: Vec<TableCounters>,
    /// Other client backends connected to this database.
    pub clients_connected: i64,
    /// Of those, the ones not idle.
    pub clients_active: i64,
}

/// One user table's access counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct TableCounters {
    pub relid: i64,
    pub idx_scan: i64,
    pub idx_tup_fetch: i64,
    pub n_tup_upd: i64,
    pub n_tup_del: i64,
    pub n_tup_hot_upd: i64,
}

/// Client backends' relation I/O (`pg_stat_io`).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct IoCounters {
    pub reads: i64,
    pub writes: i64,
    pub extends: i64,
    pub hits: i64,
    pub evictions: i64,
    pub fsyncs: i64,
}

/// Read every counter in one read-only transaction (a fresh statistics
/// snapshot: with `stats_fetch_consistency = cache` a transaction keeps
/// seeing its first reading).
pub fn take(client: &mut postgres::Client, q: &Queries) -> Result<Sample> {
    let mut tx = client
        .build_transaction()
        .read_only(true)
        .start()
        .map_err(|e| anyhow!("cannot start a read-only transaction: {e:#}"))?;
    let d = query_one(&mut tx, &q.database, &[])?;
    let w = query_one(&mut tx, &q.wal, &[])?;
    let c = query_one(&mut tx, &q.checkpoints, &[])?;
    let io = match &q.io {
        Some(query) => Some(io_counters(&mut tx, query)?),
        None => None,
    };
    let tables = table_counters(&mut tx, &q.tables)?;
    let a = query_one(&mut tx, &q.activity, &[])?;
    if let Some(f) = &q.force_flush {
        query(&mut tx, f, &[])?;
    }
    tx.commit()
        .map_err(|e| anyhow!("cannot end the read-only transaction: {e:#}"))?;
    Ok(Sample {
        at_s: d.try_get("at_s")?,
        at_text: d.try_get("at_text")?,
        xact_commit: d.try_get("xact_commit")?,
        xact_rollback: d.try_get("xact_rollback")?,
        blks_read: d.try_get("blks_read")?,
        blks_hit: d.try_get("blks_hit")?,
        tup_returned: d.try_get("tup_returned")?,
        tup_fetched: d.try_get("tup_fetched")?,
        tup_inserted: d.try_get("tup_inserted")?,
        tup_updated: d.try_get("tup_updated")?,
        tup_deleted: d.try_get("tup_deleted")?,
        db_size_bytes: d.try_get("size_bytes")?,
        wal_records: opt(&w, "records")?,
        wal_fpi: opt(&w, "fpi")?,
        wal_bytes: opt(&w, "bytes")?,
        wal_lsn_bytes: w.try_get("lsn_bytes")?,
        wal_buffers_full: opt(&w, "buffers_full")?,
        wal_writes: opt(&w, "writes")?,
        wal_syncs: opt(&w, "syncs")?,
        checkpoints_timed: c.try_get("timed")?,
        checkpoints_requested: c.try_get("requested")?,
        buffers_checkpoint: c.try_get("buffers_checkpoint")?,
        buffers_clean: c.try_get("buffers_clean")?,
        buffers_backend: opt(&c, "buffers_backend")?,
        io,
        tables,
        clients_connected: a.try_get("connected")?,
        clients_active: a.try_get("active")?,
    })
}

/// pg_stat_io's counters, summed.
fn io_counters(tx: &mut Transaction<'_>, query: &Query) -> Result<IoCounters> {
    let r = query_one(tx, query, &[])?;
    Ok(IoCounters {
        reads: opt(&r, "reads")?.unwrap_or(0),
        writes: opt(&r, "writes")?.unwrap_or(0),
        extends: opt(&r, "extends")?.unwrap_or(0),
        hits: opt(&r, "hits")?.unwrap_or(0),
        evictions: opt(&r, "evictions")?.unwrap_or(0),
        fsyncs: opt(&r, "fsyncs")?.unwrap_or(0),
    })
}

/// Each user table's index scans and row changes.
fn table_counters(tx: &mut Transaction<'_>, tables: &Query) -> Result<Vec<TableCounters>> {
    query(tx, tables, &[])?
        .iter()
        .map(|r| {
            Ok(TableCounters {
                relid: r.try_get("relid")?,
                idx_scan: r.try_get("idx_scan")?,
                idx_tup_fetch: r.try_get("idx_tup_fetch")?,
                n_tup_upd: r.try_get("n_tup_upd")?,
                n_tup_del: r.try_get("n_tup_del")?,
                n_tup_hot_upd: r.try_get("n_tup_hot_upd")?,
            })
        })
        .collect()
}

fn opt(row: &postgres::Row, col: &str) -> Result<Option<i64>> {
    Ok(row.try_get::<_, Option<i64>>(col)?)
}

/// Counter increases from one sample to a later one.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct Delta {
    pub seconds: f64,
    pub xact_commit: i64,
    pub xact_rollback: i64,
    pub blks_read: i64,
    pub blks_hit: i64,
    pub tup_returned: i64,
    pub tup_fetched: i64,
    pub tup_inserted: i64,
    pub tup_updated: i64,
    pub tup_deleted: i64,
    pub wal_records: Option<i64>,
    pub wal_fpi: Option<i64>,
    pub wal_bytes: Option<i64>,
    pub wal_lsn_bytes: i64,
    pub wal_buffers_full: Option<i64>,
    pub wal_writes: Option<i64>,
    pub wal_syncs: Option<i64>,
    pub checkpoints_timed: i64,
    pub checkpoints_requested: i64,
    pub buffers_checkpoint: i64,
    pub buffers_clean: i64,
    pub buffers_backend: Option<i64>,
    pub io: Option<IoCounters>,
    /// Updates and HOT updates in user tables.
    pub n_tup_upd: i64,
    pub n_tup_hot_upd: i64,
    /// Index scans of user tables that were not an UPDATE's or DELETE's
    /// (per table: idx_scan less n_tup_upd and n_tup_del), and the rows they
    /// fetched; `None` when not sampled.
    pub index_read_scans: Option<i64>,
    pub index_read_rows: Option<i64>,
}

/// Per-table sums: (updates, HOT updates, read scans, rows they fetched),
/// over the tables present in both samples whose counters did not go back.
fn table_sums(start: &[TableCounters], end: &[TableCounters]) -> (i64, i64, i64, i64) {
    let before: std::collections::HashMap<i64, &TableCounters> =
        start.iter().map(|t| (t.relid, t)).collect();
    let (mut upd, mut hot, mut scans, mut rows) = (0, 0, 0, 0);
    for b in end {
        let Some(a) = before.get(&b.relid) else {
            continue;
        };
        let d = TableCounters {
            relid: b.relid,
            idx_scan: b.idx_scan - a.idx_scan,
            idx_tup_fetch: b.idx_tup_fetch - a.idx_tup_fetch,
            n_tup_upd: b.n_tup_upd - a.n_tup_upd,
            n_tup_del: b.n_tup_del - a.n_tup_del,
            n_tup_hot_upd: b.n_tup_hot_upd - a.n_tup_hot_upd,
        };
        if d.idx_scan < 0 || d.idx_tup_fetch < 0 || d.n_tup_upd < 0 || d.n_tup_del < 0 {
            continue; // this table's counters were reset
        }
        upd += d.n_tup_upd;
        hot += d.n_tup_hot_upd.max(0);
        // An UPDATE or DELETE by key scans the index once and fetches its row;
        // one by sequential scan does neither, hence the floor at 0.
        let writes = d.n_tup_upd + d.n_tup_del;
        scans += (d.idx_scan - writes).max(0);
        rows += (d.idx_tup_fetch - writes).max(0);
    }
    (upd, hot, scans, rows)
}

/// The names of the counters that went backwards, in the order compared.
struct Backwards(Vec<&'static str>);

impl Backwards {
    /// `b − a`, noting `name` if it went backwards.
    fn d(&mut self, name: &'static str, a: i64, b: i64) -> i64 {
        if b < a {
            self.0.push(name);
        }
        b - a
    }

    /// `b − a` where both samples have the counter, else None.
    fn both(&mut self, name: &'static str, a: Option<i64>, b: Option<i64>) -> Option<i64> {
        match (a, b) {
            (Some(a), Some(b)) => Some(self.d(name, a, b)),
            _ => None,
        }
    }

    /// pg_stat_io's increases, where both samples have them.
    fn io(&mut self, a: &Option<IoCounters>, b: &Option<IoCounters>) -> Option<IoCounters> {
        let (Some(a), Some(b)) = (a, b) else {
            return None;
        };
        Some(IoCounters {
            reads: self.d("pg_stat_io reads", a.reads, b.reads),
            writes: self.d("pg_stat_io writes", a.writes, b.writes),
            extends: self.d("pg_stat_io extends", a.extends, b.extends),
            hits: self.d("pg_stat_io hits", a.hits, b.hits),
            evictions: self.d("pg_stat_io evictions", a.evictions, b.evictions),
            fsyncs: self.d("pg_stat_io fsyncs", a.fsyncs, b.fsyncs),
        })
    }
}

impl Delta {
    /// `end − start`; an error if a counter went backwards (statistics reset).
    pub fn between(start: &Sample, end: &Sample) -> Result<Delta> {
        let mut back = Backwards(Vec::new());
        let delta = Delta::of_every_version(start, end, &mut back);
        let (upd, hot, scans, rows) = table_sums(&start.tables, &end.tables);
        let delta = Delta {
            wal_records: back.both("wal_records", start.wal_records, end.wal_records),
            wal_fpi: back.both("wal_fpi", start.wal_fpi, end.wal_fpi),
            wal_bytes: back.both("wal_bytes", start.wal_bytes, end.wal_bytes),
            wal_buffers_full: back.both(
                "wal_buffers_full",
                start.wal_buffers_full,
                end.wal_buffers_full,
            ),
            wal_writes: back.both("WAL writes", start.wal_writes, end.wal_writes),
            wal_syncs: back.both("WAL syncs", start.wal_syncs, end.wal_syncs),
            buffers_backend: back.both(
                "backend writes",
                start.buffers_backend,
                end.buffers_backend,
            ),
            io: back.io(&start.io, &end.io),
            n_tup_upd: upd,
            n_tup_hot_upd: hot,
            index_read_scans: Some(scans),
            index_read_rows: Some(rows),
            ..delta
        };
        if !back.0.is_empty() {
            bail!(
                "the server's statistics went backwards during the capture ({}): they were reset \
                 (pg_stat_reset*) or the server restarted; capture again",
                back.0.join(", ")
            );
        }
        Ok(delta)
    }

    /// The increases of the counters every supported version has; the rest
    /// None or 0.
    fn of_every_version(start: &Sample, end: &Sample, back: &mut Backwards) -> Delta {
        let mut d = |name: &'static str, a: i64, b: i64| back.d(name, a, b);
        Delta {
            seconds: end.at_s - start.at_s,
            xact_commit: d("xact_commit", start.xact_commit, end.xact_commit),
            xact_rollback: d("xact_rollback", start.xact_rollback, end.xact_rollback),
            blks_read: d("blks_read", start.blks_read, end.blks_read),
            blks_hit: d("blks_hit", start.blks_hit, end.blks_hit),
            tup_returned: d("tup_returned", start.tup_returned, end.tup_returned),
            tup_fetched: d("tup_fetched", start.tup_fetched, end.tup_fetched),
            tup_inserted: d("tup_inserted", start.tup_inserted, end.tup_inserted),
            tup_updated: d("tup_updated", start.tup_updated, end.tup_updated),
            tup_deleted: d("tup_deleted", start.tup_deleted, end.tup_deleted),
            wal_records: None,
            wal_fpi: None,
            wal_bytes: None,
            wal_lsn_bytes: d("WAL position", start.wal_lsn_bytes, end.wal_lsn_bytes),
            wal_buffers_full: None,
            wal_writes: None,
            wal_syncs: None,
            checkpoints_timed: d(
                "checkpoints timed",
                start.checkpoints_timed,
                end.checkpoints_timed,
            ),
            checkpoints_requested: d(
                "checkpoints requested",
                start.checkpoints_requested,
                end.checkpoints_requested,
            ),
            buffers_checkpoint: d(
                "buffers_checkpoint",
                start.buffers_checkpoint,
                end.buffers_checkpoint,
            ),
            buffers_clean: d("buffers_clean", start.buffers_clean, end.buffers_clean),
            buffers_backend: None,
            io: None,
            n_tup_upd: 0,
            n_tup_hot_upd: 0,
            index_read_scans: None,
            index_read_rows: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn delta_subtracts_and_keeps_missing_figures_missing() {
        let a = Sample {
            at_s: 10.0,
            xact_commit: 100,
            wal_bytes: None,
            wal_lsn_bytes: 1000,
            wal_fpi: Some(5),
            ..Sample::default()
        };
        let b = Sample {
            at_s: 16.0,
            xact_commit: 700,
            wal_bytes: None,
            wal_lsn_bytes: 61000,
            wal_fpi: Some(9),
            ..Sample::default()
        };
        let d = Delta::between(&a, &b).unwrap();
        assert_eq!(d.seconds, 6.0);
        assert_eq!(d.xact_commit, 600);
        assert_eq!(d.wal_lsn_bytes, 60000);
        assert_eq!(d.wal_fpi, Some(4));
        assert_eq!(d.wal_bytes, None);
    }

    #[test]
    fn index_reads_exclude_updates_by_key_and_ignore_seq_scan_updates() {
        let t = |relid, idx_scan, idx_tup_fetch, n_tup_upd| TableCounters {
            relid,
            idx_scan,
            idx_tup_fetch,
            n_tup_upd,
            n_tup_hot_upd: n_tup_upd,
            n_tup_del: 0,
        };
        // pgbench at a small scale: accounts updated and read by key
        // (2 scans per transaction), tellers updated by sequential scan.
        let a = Sample {
            tables: vec![t(1, 0, 0, 0), t(2, 0, 0, 0), t(3, 5, 5, 0)],
            ..Sample::default()
        };
        let b = Sample {
            tables: vec![t(1, 200, 200, 100), t(2, 0, 0, 100), t(4, 9, 9, 9)],
            ..Sample::default()
        };
        let d = Delta::between(&a, &b).unwrap();
        assert_eq!(d.index_read_scans, Some(100));
        assert_eq!(d.index_read_rows, Some(100));
        assert_eq!(d.n_tup_upd, 200);
    }

    #[test]
    fn a_reset_is_reported() {
        let a = Sample {
            xact_commit: 100,
            ..Sample::default()
        };
        let b = Sample::default();
        let e = format!("{:#}", Delta::between(&a, &b).unwrap_err());
        assert!(e.contains("xact_commit") && e.contains("reset"), "{e}");
    }
}
