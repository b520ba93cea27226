//! The transactions: each type of the mix as a workload transaction whose
//! statements are its rows updated, read, deleted and inserted.

use std::collections::BTreeMap;

use super::mix::TxType;
use super::num;
use super::wal::{DELETE_WAL, insert_wal, update_wal};
use crate::workload::distribution::Distribution;
use crate::workload::spec::{
    ChangeSpec, InsertSpec, KeySpec, RangeSpec, ReadSpec, StatementSpec, TransactionSpec,
};

/// The parameters every transaction type's statements are built with.
pub(super) struct StatementParams {
    pub distribution: Distribution,
    /// Share of updates that are not HOT.
    pub non_hot: f64,
    /// The factor scaling every WAL record (`wal_split`).
    pub scale_records: f64,
    pub commit_wal: f64,
    /// Rows per read when reads are range scans.
    pub read_range_rows: Option<u64>,
    /// Rows of the extra range scan making up the pages touched, if any.
    pub range_rows: Option<u64>,
    pub data_rows: u64,
    pub observed_accesses: f64,
    pub point_accesses: f64,
}

impl StatementParams {
    /// A record of `bytes` standard size, scaled.
    fn wal_of(&self, bytes: f64) -> u32 {
        ((bytes * self.scale_records).round() as u32).max(1)
    }
}

/// The workload transactions of `types`, less those too rare to matter
/// (weights below 0.01%).
pub(super) fn transactions(types: &[TxType], params: &StatementParams) -> Vec<TransactionSpec> {
    let mut transactions: Vec<TransactionSpec> = types
        .iter()
        .map(|t| transaction(t, types.len(), params))
        .collect();
    transactions.retain(|t| t.weight > 0.0);
    transactions
}

/// One transaction type of `n_types` as a workload transaction: its keys,
/// its statements and its commit.
fn transaction(t: &TxType, n_types: usize, params: &StatementParams) -> TransactionSpec {
    let mut keys = BTreeMap::new();
    let mut statements = Vec::new();
    for _ in 0..t.updates {
        statements.push(update(new_key(&mut keys, params), params));
    }
    for _ in 0..t.reads {
        statements.push(read(new_key(&mut keys, params), params));
    }
    for _ in 0..t.deletes {
        statements.push(delete(new_key(&mut keys, params), params));
    }
    for _ in 0..t.inserts {
        statements.push(insert(params));
    }
    if let Some(rows) = params.range_rows {
        statements.push(range_fill(new_key(&mut keys, params), rows, params));
    }
    if statements.len() > 1 {
        statements.insert(0, sql_only("BEGIN"));
        statements.push(sql_only("END"));
    } else if statements.is_empty() {
        statements.push(sql_only("SELECT (no row access observed)"));
    }
    let commit = if t.writes() {
        (params.commit_wal.round() as u32).max(1)
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

/// The next key of the transaction, k1, k2, …, on the data table.
fn new_key(keys: &mut BTreeMap<String, KeySpec>, params: &StatementParams) -> String {
    let k = format!("k{}", keys.len() + 1);
    keys.insert(
        k.clone(),
        KeySpec {
            table: "data".into(),
            distribution: params.distribution,
        },
    );
    k
}

/// An update of the row at key `k`.
fn update(k: String, params: &StatementParams) -> StatementSpec {
    StatementSpec {
        sql: Some(format!("UPDATE data SET ... WHERE key = :{k}")),
        update: Some(ChangeSpec {
            key: k,
            non_hot_fraction: Some((params.non_hot * 1000.0).round() / 1000.0),
            table: "data".into(),
            wal_bytes: params.wal_of(update_wal()),
        }),
        ..StatementSpec::default()
    }
}

/// A read at key `k`: of one row, or a range scan when reads are.
fn read(k: String, params: &StatementParams) -> StatementSpec {
    match params.read_range_rows {
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
                rows: rows.min(params.data_rows),
                table: "data".into(),
            }),
            ..StatementSpec::default()
        },
    }
}

/// A delete of the row at key `k`.
fn delete(k: String, params: &StatementParams) -> StatementSpec {
    StatementSpec {
        sql: Some(format!("DELETE FROM data WHERE key = :{k}")),
        delete: Some(ChangeSpec {
            key: k,
            non_hot_fraction: None,
            table: "data".into(),
            wal_bytes: params.wal_of(DELETE_WAL),
        }),
        ..StatementSpec::default()
    }
}

/// An insert into the append-only table.
fn insert(params: &StatementParams) -> StatementSpec {
    StatementSpec {
        sql: Some("INSERT INTO inserted VALUES (...)".into()),
        insert: Some(InsertSpec {
            table: "inserted".into(),
            wal_bytes: params.wal_of(insert_wal()),
        }),
        ..StatementSpec::default()
    }
}

/// The range scan from key `k` of `rows` rows that makes up the pages
/// touched beyond what the point accesses touch.
fn range_fill(k: String, rows: u64, params: &StatementParams) -> StatementSpec {
    StatementSpec {
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
            num(params.observed_accesses, 1),
            num(params.observed_accesses - params.point_accesses, 1)
        )),
        ..StatementSpec::default()
    }
}

/// A statement with no page access (BEGIN, END).
fn sql_only(sql: &str) -> StatementSpec {
    StatementSpec {
        sql: Some(sql.into()),
        ..StatementSpec::default()
    }
}
