//! The observed figures: the counters' deltas per transaction.

use anyhow::{Result, bail};

use super::reference::reference;
use super::{Figures, Observation, per};

/// Fewest WAL bytes a record can average (a 24-byte header, a block reference
/// and some data): the floor when subtracting estimated full-page image
/// bytes leaves less.
const MIN_RECORD_BYTES: f64 = 40.0;

/// The figures, with what the later steps read beside them.
pub(super) struct Observed {
    pub figures: Figures,
    /// Transactions committed by others than the capture.
    pub commits: f64,
    /// WAL bytes over the interval (from `figures.wal_bytes_from`).
    pub wal_bytes: i64,
    /// HOT share of the user tables' updates, and the share not HOT.
    pub hot_share: Option<f64>,
    pub non_hot: f64,
}

/// The transactions others than the capture committed; an error when the
/// interval was empty or none were.
fn others_commits(obs: &Observation) -> Result<i64> {
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
    Ok(commits)
}

/// WAL bytes per transaction less the full-page images' (at the
/// reference's image size), floored at what the records need.
fn without_fpi(wal_per_tx: f64, fpi_per_tx: Option<f64>, records_per_tx: Option<f64>) -> f64 {
    let floor = records_per_tx.map_or(0.0, |r| r * MIN_RECORD_BYTES);
    let fpi_bytes = reference().full_page_image_bytes as f64;
    (wal_per_tx - fpi_per_tx.unwrap_or(0.0) * fpi_bytes)
        .max(floor)
        .min(wal_per_tx)
        .max(0.0)
}

/// The figures of one observation; an error when nothing was committed.
pub(super) fn observe(obs: &Observation) -> Result<Observed> {
    let d = &obs.delta;
    let commits = others_commits(obs)?;
    let n = commits as f64;
    let tps = n / d.seconds;
    let (wal_bytes, wal_bytes_from) = match d.wal_bytes {
        Some(b) => (b, "pg_stat_wal.wal_bytes"),
        None => (d.wal_lsn_bytes, "pg_current_wal_lsn()"),
    };
    let wal_per_tx = per(wal_bytes, n);
    let fpi_per_tx = d.wal_fpi.map(|f| per(f, n));
    let records_per_tx = d.wal_records.map(|r| per(r, n));
    let wal_records_bytes = without_fpi(wal_per_tx, fpi_per_tx, records_per_tx);
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
    Ok(Observed {
        figures,
        commits: n,
        wal_bytes,
        hot_share,
        non_hot,
    })
}
