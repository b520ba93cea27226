//! The statement mix: the observed rows updated, deleted, inserted and read
//! per transaction as a weighted mix of transaction types of whole counts.

use super::{Figures, per};
use crate::capture::sample::Delta;

/// Most statements of one kind per transaction; more are capped (bulk loads).
pub(super) const MAX_PER_KIND: u64 = 200;

/// Per-transaction averages of the statement kinds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Mix {
    pub updates: f64,
    pub reads: f64,
    pub deletes: f64,
    pub inserts: f64,
}

/// One transaction type of the mix: whole counts and a weight.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct TxType {
    pub updates: u64,
    pub reads: u64,
    pub deletes: u64,
    pub inserts: u64,
    pub weight: f64,
}

impl TxType {
    pub(super) fn writes(&self) -> bool {
        self.updates + self.deletes + self.inserts > 0
    }

    pub(super) fn name(&self) -> String {
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
pub(super) fn split(x: f64) -> (u64, f64) {
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
pub(super) fn tx_types(mix: &Mix) -> Vec<TxType> {
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

/// The mix observed and the one replayed.
pub(super) struct StatementMix {
    /// The observed means.
    pub observed: Mix,
    /// The transaction types, and the means they make (whole numbers
    /// rounded, large counts capped).
    pub types: Vec<TxType>,
    pub made: Mix,
    /// Whether a kind was above `MAX_PER_KIND`.
    pub capped: bool,
    /// Rows per read when reads are range scans.
    pub read_range_rows: Option<u64>,
    /// Where the reads per transaction come from.
    pub reads_from: String,
}

/// The statement mix: rows written per transaction, and reads: the user
/// tables' index scans that were not an update's or delete's (rows fetched
/// per such scan above 1.5 make them range scans), or, without per-table
/// figures, rows fetched less rows updated and deleted.
pub(super) fn statement_mix(d: &Delta, n: f64, figures: &Figures) -> StatementMix {
    let (reads, rows_per_read, reads_from) = reads_per_tx(d, n, figures);
    let read_range_rows = (rows_per_read >= 1.5).then(|| rows_per_read.round() as u64);
    let mix = Mix {
        updates: figures.tup_updated_per_tx,
        deletes: figures.tup_deleted_per_tx,
        inserts: figures.tup_inserted_per_tx,
        reads,
    };
    let types = tx_types(&mix);
    let made = Mix {
        updates: types.iter().map(|t| t.weight * t.updates as f64).sum(),
        reads: types.iter().map(|t| t.weight * t.reads as f64).sum(),
        deletes: types.iter().map(|t| t.weight * t.deletes as f64).sum(),
        inserts: types.iter().map(|t| t.weight * t.inserts as f64).sum(),
    };
    let capped = [mix.updates, mix.reads, mix.deletes, mix.inserts]
        .iter()
        .any(|&x| x > MAX_PER_KIND as f64);
    StatementMix {
        observed: mix,
        types,
        made,
        capped,
        read_range_rows,
        reads_from,
    }
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
