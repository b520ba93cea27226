//! The figures statistics views do not show, taken from the built-in
//! tpcb-like workload (`workloads/tpcb-like.json`, embedded in the binary),
//! so a captured workload uses the same measurements and cannot drift from
//! them.

use std::sync::LazyLock;

use crate::workload::builtin;
use crate::workload::spec::WorkloadSpec;

/// The workload whose measured figures a capture borrows.
const REFERENCE: &str = "tpcb-like";
/// Its table whose layout the captured data table takes, and its
/// append-only table.
const KEYED_TABLE: &str = "pgbench_accounts";
const APPEND_TABLE: &str = "pgbench_history";

/// The reference workload's figures a capture uses.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Reference {
    /// Average bytes of a full-page image (8192 minus the page's hole).
    pub full_page_image_bytes: u32,
    /// Btree/INSERT_LEAF of a non-HOT update.
    pub index_insert_wal_bytes: u32,
    /// XLOG/CHECKPOINT_ONLINE.
    pub checkpoint_record_bytes: u32,
    /// pgbench's local round trip per statement.
    pub round_trip_us_per_statement: f64,
    /// The CPU, split as measured: the server's and the client's per
    /// statement, per data page read and written, and their growth with
    /// the backends.
    pub cpu_us_per_statement: f64,
    pub client_cpu_us_per_statement: f64,
    pub cpu_us_per_read: f64,
    pub cpu_us_per_write: f64,
    pub cpu_growth_per_backend: f64,
    pub io_cpu_growth_per_backend: f64,
    pub cpu_growth_above_backends: u32,
    /// The CPU probe's figure on the machine those were measured on.
    pub cpu_probe_us: Option<f64>,
    /// Rows per heap page of pgbench_accounts (121-byte tuples).
    pub rows_per_page: u64,
    /// Index entries per leaf of accounts_pkey and children per internal page.
    pub items_per_leaf: u64,
    pub fanout: u64,
    /// Pages reserved for appends, as pgbench_history's.
    pub append_pages: u64,
    /// Heap/HOT_UPDATE of an accounts row and Heap/INSERT of a history row.
    pub update_wal_bytes: u32,
    pub insert_wal_bytes: u32,
}

/// The reference's CPU figures a capture writes as they are, with the
/// reference's sources.
pub(super) const CPU_FIELDS: [&str; 8] = [
    "cpu_us_per_statement",
    "client_cpu_us_per_statement",
    "cpu_us_per_read",
    "cpu_us_per_write",
    "cpu_growth_per_backend",
    "io_cpu_growth_per_backend",
    "cpu_crowding",
    "cpu_probe_us",
];

static SPEC: LazyLock<WorkloadSpec> =
    LazyLock::new(|| builtin(REFERENCE).expect("the reference workload is built in"));
static FIGURES: LazyLock<Reference> = LazyLock::new(|| from_spec(&SPEC));

/// The reference figures.
pub(super) fn reference() -> &'static Reference {
    &FIGURES
}

/// How the reference's statement CPU grows with the backends per CPU.
pub(super) fn crowding() -> Vec<[f64; 2]> {
    SPEC.cpu_crowding.clone()
}

/// Where the reference's figure `field` comes from (its `sources`).
pub(super) fn source(field: &str) -> &'static str {
    SPEC.sources
        .get(field)
        .unwrap_or_else(|| panic!("{REFERENCE} gives the source of {field}"))
}

fn from_spec(spec: &WorkloadSpec) -> Reference {
    let keyed = &spec.tables[KEYED_TABLE];
    let index = keyed.index.as_ref().expect("pgbench_accounts has an index");
    let statements = spec.transactions.iter().flat_map(|t| &t.statements);
    let update = statements
        .clone()
        .find_map(|s| s.update.as_ref().filter(|u| u.table == KEYED_TABLE))
        .expect("tpcb-like updates pgbench_accounts");
    let insert = statements
        .clone()
        .find_map(|s| s.insert.as_ref().filter(|i| i.table == APPEND_TABLE))
        .expect("tpcb-like inserts into pgbench_history");
    Reference {
        full_page_image_bytes: spec.full_page_image_bytes,
        index_insert_wal_bytes: spec.index_insert_wal_bytes,
        checkpoint_record_bytes: spec.checkpoint_record_bytes,
        round_trip_us_per_statement: spec.round_trip_us_per_statement,
        cpu_us_per_statement: spec.cpu_us_per_statement,
        client_cpu_us_per_statement: spec.client_cpu_us_per_statement,
        cpu_us_per_read: spec.cpu_us_per_read,
        cpu_us_per_write: spec.cpu_us_per_write,
        cpu_growth_per_backend: spec.cpu_growth_per_backend,
        io_cpu_growth_per_backend: spec.io_cpu_growth_per_backend,
        cpu_probe_us: spec.cpu_probe_us,
        cpu_growth_above_backends: spec.cpu_growth_above_backends,
        rows_per_page: keyed.rows_per_page,
        items_per_leaf: index.items_per_leaf,
        fanout: index.fanout,
        append_pages: spec.tables[APPEND_TABLE].append_pages,
        update_wal_bytes: update.wal_bytes,
        insert_wal_bytes: insert.wal_bytes,
    }
}
