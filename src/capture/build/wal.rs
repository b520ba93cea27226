//! WAL bytes per transaction without full-page images (`pg_stat_wal`:
//! wal_bytes minus wal_fpi full-page images): standard record sizes on the
//! statements, the rest on the commit. pgiosim adds full-page images itself,
//! after each of its checkpoints, so they are not in the records.

use super::mix::{Mix, TxType};
use super::num;
use super::reference::reference;

/// Heap/DELETE: 24 header + 20 block reference + 8 xl_heap_delete, MAXALIGNed
/// (tpcb-like deletes nothing).
pub(super) const DELETE_WAL: f64 = 54.0;
/// Transaction/COMMIT without subtransactions or invalidations: a record
/// size of PostgreSQL's, not of a machine (pg_walinspect on pgbench, the
/// measurement tpcb-like.json's commit source names). Not tpcb-like's
/// `commit_wal_bytes`, which adds the pruning and locking of its commit.
const COMMIT_WAL: f64 = 34.0;

/// Heap/HOT_UPDATE and Heap/INSERT, as tpcb-like logs them.
pub(super) fn update_wal() -> f64 {
    reference().update_wal_bytes as f64
}

pub(super) fn insert_wal() -> f64 {
    reference().insert_wal_bytes as f64
}

/// Btree/INSERT_LEAF of a non-HOT update.
pub(super) fn index_insert_wal() -> f64 {
    reference().index_insert_wal_bytes as f64
}

/// The WAL the replayed transactions log.
pub(super) struct Wal {
    /// The factor scaling every record.
    pub scale_records: f64,
    /// The commit's bytes.
    pub commit: f64,
    /// How the observed bytes were split.
    pub note: String,
}

/// The observed WAL records per transaction on the statements of `types`
/// (whose means are `made`) and on the commit of the transactions that
/// write (read-only ones log no commit record).
pub(super) fn wal(types: &[TxType], made: &Mix, non_hot: f64, wal_records_bytes: f64) -> Wal {
    let p_write: f64 = types.iter().filter(|t| t.writes()).map(|t| t.weight).sum();
    let statement_wal = update_wal() * made.updates
        + insert_wal() * made.inserts
        + DELETE_WAL * made.deletes
        + index_insert_wal() * made.updates * non_hot;
    let (scale_records, commit, note) = wal_split(p_write, statement_wal, wal_records_bytes);
    Wal {
        scale_records,
        commit,
        note,
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
                    "statements log standard records (update {} B, insert {} B, delete {DELETE_WAL} B, {} B index entry per non-HOT update: {} B/tx); the commit logs the {COMMIT_WAL} B commit record plus the rest of the observed {} B/tx ({} B per writing transaction, {:.0}% of transactions write)",
                    update_wal(),
                    insert_wal(),
                    index_insert_wal(),
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
