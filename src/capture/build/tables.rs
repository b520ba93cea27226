//! The tables: one `data` table whose rows at `-s 1` fill the observed
//! database size, with pgbench_accounts' btree, and an append-only
//! `inserted` table when rows were inserted.

use std::collections::BTreeMap;

use super::reference::reference;
use super::{Observation, PAGE, num};
use crate::workload::spec::{IndexSpec, TableSpec};

/// The data table's layout.
pub(super) struct DataTable {
    pub rows_per_page: u64,
    /// Where `rows_per_page` comes from.
    pub rows_per_page_from: String,
    /// The database's size in pages.
    pub db_pages: f64,
    /// Heap and leaf pages per row.
    pub pages_per_row: f64,
    /// Rows at `-s 1`.
    pub rows: u64,
    /// Levels of its btree.
    pub levels: u64,
}

/// The data table that fills the observed database size.
pub(super) fn data_table(obs: &Observation) -> DataTable {
    let (rows_per_page, rows_per_page_from) = rows_per_page(obs);
    let db_pages = (obs.db_size_bytes as f64 / PAGE).max(1.0);
    let pages_per_row = 1.0 / rows_per_page as f64 + 1.0 / reference().items_per_leaf as f64;
    let rows = ((db_pages / pages_per_row).floor() as u64).max(1);
    DataTable {
        rows_per_page,
        rows_per_page_from,
        db_pages,
        pages_per_row,
        rows,
        levels: btree_levels(rows),
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
        _ => {
            let rpp = reference().rows_per_page;
            (
                rpp,
                format!("user table sizes not available: {rpp} rows per page, as pgbench_accounts"),
            )
        }
    }
}

/// Levels of the data table's btree for `rows` keys (as script.rs builds it).
fn btree_levels(rows: u64) -> u64 {
    let r = reference();
    let mut count = rows.div_ceil(r.items_per_leaf).max(1);
    let mut levels = 1;
    while count > 1 {
        count = count.div_ceil(r.fanout);
        levels += 1;
    }
    levels
}

/// The data table (and the append-only `inserted` one when rows were
/// inserted).
pub(super) fn tables(
    obs: &Observation,
    data: &DataTable,
    any_inserts: bool,
) -> BTreeMap<String, TableSpec> {
    let r = reference();
    let rows_per_page = data.rows_per_page;
    let mut tables = BTreeMap::new();
    tables.insert(
        "data".to_string(),
        TableSpec {
            rows_per_scale: data.rows,
            rows_per_page,
            append_pages: 0,
            full_at_load: false,
            index: Some(IndexSpec {
                items_per_leaf: r.items_per_leaf,
                fanout: r.fanout,
                source: Some(format!(
                    "a btree on the key, as pgbench's accounts_pkey ({} int keys per leaf, {} children per internal page)",
                    r.items_per_leaf, r.fanout
                )),
            }),
            source: Some(format!(
                "the database's {} (pg_database_size) as one table at -s 1: {} rows at {rows_per_page} per heap page plus their index; rows per page: {}",
                crate::units::pretty_bytes(obs.db_size_bytes.max(0) as u64),
                num(data.rows as f64, 0),
                data.rows_per_page_from
            )),
        },
    );
    if any_inserts {
        tables.insert(
            "inserted".to_string(),
            TableSpec {
                rows_per_scale: 0,
                rows_per_page,
                append_pages: r.append_pages,
                full_at_load: false,
                index: None,
                source: Some(format!(
                    "inserted rows are appended here (a new page every rows_per_page inserts); {} MiB reserved, pgiosim wraps around",
                    (r.append_pages * PAGE as u64) >> 20
                )),
            },
        );
    }
    tables
}
