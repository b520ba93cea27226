//! The statistics queries `capture` runs, chosen by server version.
//!
//! The views moved between releases (postgres-facts.md section 7):
//! * PostgreSQL 13 has no `pg_stat_wal`: WAL bytes come from the insert
//!   position (`pg_current_wal_lsn()`), and records, full-page images, writes
//!   and syncs are not available.
//! * 14 to 17: `pg_stat_wal` has `wal_records, wal_fpi, wal_bytes,
//!   wal_buffers_full, wal_write, wal_sync`.
//! * 18 removed `wal_write` and `wal_sync` from `pg_stat_wal`; WAL writes and
//!   fsyncs are rows of `pg_stat_io` with `object = 'wal'`.
//! * `pg_stat_io` exists from 16; client backends' relation writes are read
//!   there from 17 on, when `pg_stat_bgwriter` lost `buffers_backend`.
//! * 17 moved the checkpoint figures from `pg_stat_bgwriter` to
//!   `pg_stat_checkpointer` (`num_timed, num_requested, buffers_written`).
//!
//! Every variant of a query returns the same column names (NULL where the
//! version lacks the figure), so the sampler reads them one way.

use anyhow::{Result, bail};

/// Oldest supported release (`server_version_num`).
pub const MIN_VERSION: u32 = 130000;
/// Newest release whose views were checked.
pub const MAX_CHECKED_VERSION: u32 = 189999;

/// One query and the view it reads, named in permission errors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Query {
    /// The views and functions it reads, for error messages.
    pub reads: &'static str,
    pub sql: &'static str,
}

/// The queries for one server version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queries {
    pub version_num: u32,
    /// `pg_stat_database` of the current database, and its size.
    pub database: Query,
    /// WAL: records, fpi, bytes, lsn_bytes, buffers_full, writes, syncs.
    pub wal: Query,
    /// Checkpoints and buffer writes: timed, requested, buffers_checkpoint,
    /// buffers_clean, buffers_backend.
    pub checkpoints: Query,
    /// Client backends' relation I/O from `pg_stat_io` (16+): reads, writes,
    /// extends, hits, evictions, fsyncs.
    pub io: Option<Query>,
    /// Index scans, rows fetched, updates (HOT or not) and deletes per user table.
    pub tables: Query,
    /// Connected and active client backends of this database, other than us.
    pub activity: Query,
    /// Rows and sizes of the user tables and their indexes.
    pub sizes: Query,
    /// 15+: make this session flush its own statistics at its next idle
    /// moment (`pg_stat_force_next_flush()`), so that the capture's own
    /// transactions are counted at known points rather than up to a second
    /// (or ten) later; before 15 the backend sends them to the statistics
    /// collector at most every 500 ms.
    pub force_flush: Option<Query>,
    /// Where WAL writes and syncs come from, for the workload's sources.
    pub wal_io_source: &'static str,
    /// Where checkpoint figures come from.
    pub checkpoint_source: &'static str,
}

/// `pg_stat_database` of the current database (all versions).
const DATABASE: Query = Query {
    reads: "pg_stat_database and pg_database_size()",
    sql: "SELECT xact_commit, xact_rollback, blks_read, blks_hit, tup_returned, tup_fetched, \
          tup_inserted, tup_updated, tup_deleted, pg_database_size(datid) AS size_bytes, \
          extract(epoch FROM clock_timestamp())::float8 AS at_s, \
          to_char(clock_timestamp() AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') || ' UTC' AS at_text \
          FROM pg_stat_database WHERE datname = current_database()",
};

/// The WAL insert position as bytes since 0/0 (the primary's, or what a
/// standby has replayed).
macro_rules! lsn_bytes {
    () => {
        "pg_wal_lsn_diff(CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() \
         ELSE pg_current_wal_lsn() END, '0/0')::bigint"
    };
}

const WAL_13: Query = Query {
    reads: "pg_current_wal_lsn()",
    sql: concat!(
        "SELECT NULL::bigint AS records, NULL::bigint AS fpi, NULL::bigint AS bytes, ",
        lsn_bytes!(),
        " AS lsn_bytes, NULL::bigint AS buffers_full, NULL::bigint AS writes, NULL::bigint AS syncs"
    ),
};

const WAL_14: Query = Query {
    reads: "pg_stat_wal",
    sql: concat!(
        "SELECT wal_records AS records, wal_fpi AS fpi, wal_bytes::bigint AS bytes, ",
        lsn_bytes!(),
        " AS lsn_bytes, wal_buffers_full AS buffers_full, wal_write AS writes, wal_sync AS syncs \
         FROM pg_stat_wal"
    ),
};

const WAL_18: Query = Query {
    reads: "pg_stat_wal and pg_stat_io",
    sql: concat!(
        "SELECT w.wal_records AS records, w.wal_fpi AS fpi, w.wal_bytes::bigint AS bytes, ",
        lsn_bytes!(),
        " AS lsn_bytes, w.wal_buffers_full AS buffers_full, io.writes, io.syncs \
         FROM pg_stat_wal w, (SELECT sum(writes)::bigint AS writes, sum(fsyncs)::bigint AS syncs \
         FROM pg_stat_io WHERE object = 'wal' AND context = 'normal') io"
    ),
};

const CHECKPOINTS_13: Query = Query {
    reads: "pg_stat_bgwriter",
    sql: "SELECT checkpoints_timed AS timed, checkpoints_req AS requested, \
          buffers_checkpoint, buffers_clean, buffers_backend FROM pg_stat_bgwriter",
};

const CHECKPOINTS_17: Query = Query {
    reads: "pg_stat_checkpointer, pg_stat_bgwriter and pg_stat_io",
    sql: "SELECT c.num_timed AS timed, c.num_requested AS requested, \
          c.buffers_written AS buffers_checkpoint, b.buffers_clean, io.buffers_backend \
          FROM pg_stat_checkpointer c, pg_stat_bgwriter b, \
          (SELECT sum(writes)::bigint AS buffers_backend FROM pg_stat_io \
           WHERE backend_type = 'client backend' AND object = 'relation') io",
};

const IO_16: Query = Query {
    reads: "pg_stat_io",
    sql: "SELECT sum(reads)::bigint AS reads, sum(writes)::bigint AS writes, \
          sum(extends)::bigint AS extends, sum(hits)::bigint AS hits, \
          sum(evictions)::bigint AS evictions, sum(fsyncs)::bigint AS fsyncs \
          FROM pg_stat_io WHERE backend_type = 'client backend' AND object = 'relation'",
};

const TABLES: Query = Query {
    reads: "pg_stat_user_tables",
    sql: "SELECT relid::oid::bigint AS relid, coalesce(idx_scan, 0) AS idx_scan, \
          coalesce(idx_tup_fetch, 0) AS idx_tup_fetch, n_tup_upd, n_tup_del, n_tup_hot_upd \
          FROM pg_stat_user_tables",
};

const ACTIVITY: Query = Query {
    reads: "pg_stat_activity",
    sql: "SELECT count(*) AS connected, count(*) FILTER (WHERE state <> 'idle') AS active \
          FROM pg_stat_activity WHERE backend_type = 'client backend' \
          AND datname = current_database() AND pid <> pg_backend_pid()",
};

const FORCE_FLUSH: Query = Query {
    reads: "pg_stat_force_next_flush()",
    sql: "SELECT pg_stat_force_next_flush()",
};

const SIZES: Query = Query {
    reads: "pg_stat_user_tables, pg_relation_size() and pg_indexes_size()",
    sql: "SELECT coalesce(sum(n_live_tup), 0)::bigint AS live_rows, \
          coalesce(sum(pg_relation_size(relid)), 0)::bigint AS heap_bytes, \
          coalesce(sum(pg_indexes_size(relid)), 0)::bigint AS index_bytes \
          FROM pg_stat_user_tables",
};

/// The settings `capture` reads from `pg_settings`: the ones pgiosim models
/// first, then the ones written down as comments for a reader.
pub const SETTINGS_QUERY: Query = Query {
    reads: "pg_settings",
    sql: "SELECT name, setting, coalesce(unit, '') FROM pg_settings WHERE name = ANY($1)",
};

/// The version, as `server_version_num` and the human form.
pub const VERSION_QUERY: Query = Query {
    reads: "server_version_num",
    sql: "SELECT current_setting('server_version_num')::int, current_setting('server_version'), \
          current_database()",
};

/// The queries for a server of `version_num` (`server_version_num`, e.g.
/// 150018). Refuses releases older than 13; newer than 18 gets 18's queries
/// (the caller prints a notice, see [`checked`]).
pub fn queries_for(version_num: u32) -> Result<Queries> {
    if version_num < MIN_VERSION {
        bail!(
            "PostgreSQL {} is not supported: capture reads the statistics views of PostgreSQL 13 to 18",
            version_name(version_num)
        );
    }
    let major = version_num / 10000;
    let (wal, wal_io_source) = match major {
        13 => (
            WAL_13,
            "not available in PostgreSQL 13 (pg_stat_wal is new in 14); WAL bytes from pg_current_wal_lsn(), full-page images unknown",
        ),
        14..=17 => (WAL_14, "pg_stat_wal.wal_write and wal_sync"),
        _ => (
            WAL_18,
            "pg_stat_io rows with object = 'wal', context = 'normal' (writes, fsyncs): PostgreSQL 18 moved them out of pg_stat_wal",
        ),
    };
    let (checkpoints, checkpoint_source) = if major >= 17 {
        (
            CHECKPOINTS_17,
            "pg_stat_checkpointer (num_timed, num_requested, buffers_written), pg_stat_bgwriter.buffers_clean, client backends' writes from pg_stat_io",
        )
    } else {
        (
            CHECKPOINTS_13,
            "pg_stat_bgwriter (checkpoints_timed, checkpoints_req, buffers_checkpoint, buffers_clean, buffers_backend)",
        )
    };
    Ok(Queries {
        version_num,
        database: DATABASE,
        wal,
        checkpoints,
        io: (major >= 16).then_some(IO_16),
        force_flush: (major >= 15).then_some(FORCE_FLUSH),
        tables: TABLES,
        activity: ACTIVITY,
        sizes: SIZES,
        wal_io_source,
        checkpoint_source,
    })
}

/// Whether the views of this release were checked (13 to 18); a newer one is
/// read with 18's queries after a notice.
pub fn checked(version_num: u32) -> bool {
    (MIN_VERSION..=MAX_CHECKED_VERSION).contains(&version_num)
}

/// `150018` → "15.18"; before 10, "9.6.24".
pub fn version_name(version_num: u32) -> String {
    if version_num >= 100000 {
        format!("{}.{}", version_num / 10000, version_num % 10000)
    } else {
        format!(
            "{}.{}.{}",
            version_num / 10000,
            version_num / 100 % 100,
            version_num % 100
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The column aliases a query returns, in order.
    fn columns(sql: &str) -> Vec<String> {
        let select = sql
            .trim_start_matches("SELECT ")
            .split(" FROM pg_stat_")
            .next()
            .unwrap();
        let mut cols = Vec::new();
        let mut depth = 0;
        let mut item = String::new();
        for ch in select.chars() {
            match ch {
                '(' => depth += 1,
                ')' => depth -= 1,
                ',' if depth == 0 => {
                    cols.push(std::mem::take(&mut item));
                    continue;
                }
                _ => {}
            }
            item.push(ch);
        }
        cols.push(item);
        cols.iter()
            .map(|c| {
                let c = c.trim();
                match c.rsplit_once(" AS ") {
                    Some((_, alias)) => alias.trim().to_string(),
                    None => c.rsplit('.').next().unwrap().to_string(),
                }
            })
            .collect()
    }

    #[test]
    fn versions_before_13_are_refused_with_the_supported_range() {
        for v in [90624, 100023, 120022] {
            let e = format!("{:#}", queries_for(v).unwrap_err());
            assert!(e.contains("not supported") && e.contains("13 to 18"), "{e}");
            assert!(e.contains(&version_name(v)), "{e}");
        }
        assert_eq!(version_name(120022), "12.22");
        assert_eq!(version_name(90624), "9.6.24");
        assert!(queries_for(130000).is_ok());
    }

    #[test]
    fn wal_query_follows_the_version() {
        let q13 = queries_for(130016).unwrap();
        assert!(
            !q13.wal.sql.contains("pg_stat_wal"),
            "13 has no pg_stat_wal"
        );
        assert!(q13.wal.sql.contains("pg_current_wal_lsn()"));
        for v in [140000, 150018, 160010, 170006] {
            let q = queries_for(v).unwrap();
            assert!(q.wal.sql.contains("FROM pg_stat_wal"), "{v}");
            assert!(q.wal.sql.contains("wal_write AS writes"), "{v}");
            assert!(q.wal.sql.contains("wal_sync AS syncs"), "{v}");
            assert!(!q.wal.sql.contains("pg_stat_io"), "{v}");
        }
        let q18 = queries_for(180001).unwrap();
        assert!(
            !q18.wal.sql.contains("wal_write") && !q18.wal.sql.contains("wal_sync"),
            "18 removed wal_write and wal_sync"
        );
        assert!(q18.wal.sql.contains("object = 'wal'"));
        assert!(q18.wal.reads.contains("pg_stat_io"));
    }

    #[test]
    fn checkpoint_query_follows_the_version() {
        for v in [130000, 150018, 160000] {
            let q = queries_for(v).unwrap();
            assert!(q.checkpoints.sql.contains("checkpoints_timed"), "{v}");
            assert!(!q.checkpoints.sql.contains("pg_stat_checkpointer"), "{v}");
        }
        for v in [170000, 180001] {
            let q = queries_for(v).unwrap();
            assert!(q.checkpoints.sql.contains("pg_stat_checkpointer"), "{v}");
            assert!(!q.checkpoints.sql.contains("checkpoints_timed"), "{v}");
            assert!(
                !q.checkpoints
                    .sql
                    .contains("buffers_backend FROM pg_stat_bgwriter")
            );
        }
    }

    #[test]
    fn own_statistics_are_flushed_on_demand_from_15() {
        assert!(queries_for(140000).unwrap().force_flush.is_none());
        assert!(queries_for(150000).unwrap().force_flush.is_some());
        assert!(queries_for(180001).unwrap().force_flush.is_some());
    }

    #[test]
    fn pg_stat_io_only_from_16() {
        assert!(queries_for(150018).unwrap().io.is_none());
        assert!(queries_for(160000).unwrap().io.is_some());
        assert!(queries_for(180001).unwrap().io.is_some());
    }

    #[test]
    fn every_version_returns_the_same_columns() {
        let versions = [130000, 140000, 150018, 160000, 170000, 180001, 190000];
        let first = queries_for(versions[0]).unwrap();
        for v in versions {
            let q = queries_for(v).unwrap();
            assert_eq!(
                columns(q.wal.sql),
                [
                    "records",
                    "fpi",
                    "bytes",
                    "lsn_bytes",
                    "buffers_full",
                    "writes",
                    "syncs"
                ],
                "{v}: {}",
                q.wal.sql
            );
            assert_eq!(
                columns(q.checkpoints.sql),
                columns(first.checkpoints.sql),
                "{v}"
            );
        }
        assert_eq!(
            columns(CHECKPOINTS_13.sql),
            [
                "timed",
                "requested",
                "buffers_checkpoint",
                "buffers_clean",
                "buffers_backend"
            ]
        );
    }

    #[test]
    fn newer_than_18_uses_18s_queries_unchecked() {
        assert!(checked(180001) && checked(130000) && !checked(190000) && !checked(120000));
        assert_eq!(
            queries_for(190000).unwrap().wal,
            queries_for(180001).unwrap().wal
        );
    }
}
