//! The workload file format (`workloads/*.json`), parsed and validated.
//!
//! A workload names its tables (rows per scale unit, rows per heap page, an
//! optional btree index, or an append-only region), then its transaction
//! types: each a list of statements (point read, range scan, update, insert,
//! delete, or a statement with no page access such as BEGIN), with keys drawn
//! from pgbench's distributions, WAL bytes per record and CPU per statement.
//! Any object may carry a `source` saying where its numbers come from.
//!
//! Errors name the file, the path inside it and the problem.
//!
//! The same structs write a workload (`capture`): a field left at its
//! default is not written, and a statement's fields are in alphabetical
//! order, the order capture has always written them in.

use std::collections::BTreeMap;

use anyhow::{Context, Result, bail};
use serde::{Deserialize, Serialize};

use super::distribution::Distribution;
use crate::units::{CPU_GROWTH_PER_BACKEND_MAX, CPU_US_MAX, QUERY_MODE_CPU_FACTOR_MAX};

/// `cpu_crowding`'s most points, and its largest factor: the measured
/// curve levels off at 1.4 times (docs/cpu-model.md); ten is room for
/// another machine's without an overflowing burst.
const CROWDING_POINTS_MAX: usize = 16;
const CROWDING_FACTOR_MAX: f64 = 10.0;

/// A btree index on a table's key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IndexSpec {
    /// Index entries per leaf page.
    pub items_per_leaf: u64,
    /// Children per internal page.
    pub fanout: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A table.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TableSpec {
    /// Rows per scale unit (0 for tables that start empty and grow).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub rows_per_scale: u64,
    /// Rows that fit in one 8 KiB heap page at the table's fillfactor.
    pub rows_per_page: u64,
    /// Pages reserved for appends (inserts go to the last page and extend
    /// the table; pgiosim wraps around within this region).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub append_pages: u64,
    /// Heap pages are full when loaded (fillfactor 100): the first update of
    /// each page finds no room for the new row version, so it is not HOT:
    /// the version moves to a new page at the end of the table (the append
    /// region) and gets an index entry. Later updates of the page are HOT
    /// (pruning made room) but for the statement's non_hot_fraction.
    #[serde(default, skip_serializing_if = "is_false")]
    pub full_at_load: bool,
    /// A btree on the key, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub index: Option<IndexSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// A key variable, drawn once per transaction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeySpec {
    /// Table whose rows the key ranges over.
    pub table: String,
    /// How it is drawn [default: uniform].
    #[serde(default = "uniform")]
    pub distribution: Distribution,
}

fn uniform() -> Distribution {
    Distribution::Uniform
}

/// What a statement touches, once resolved from its one access field.
#[derive(Debug, Clone, PartialEq)]
pub enum Access {
    /// Look a row up by key: index path, then its heap page.
    Read { table: String, key: String },
    /// Scan `rows` rows from the key on: index path, leaf pages, heap pages.
    Range {
        table: String,
        key: String,
        rows: u64,
    },
    /// Update a row by key: lock it until commit, change its heap page; a
    /// non-HOT share also inserts an index entry.
    Update {
        table: String,
        key: String,
        wal_bytes: u32,
        non_hot_fraction: f64,
    },
    /// Append a row: the table's last page (a new page when it is full).
    Insert { table: String, wal_bytes: u32 },
    /// Delete a row by key: lock it, change its heap page.
    Delete {
        table: String,
        key: String,
        wal_bytes: u32,
    },
}

/// `read`: a row by key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadSpec {
    pub key: String,
    pub table: String,
}

/// `range`: `rows` rows from the key on.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RangeSpec {
    pub key: String,
    pub rows: u64,
    pub table: String,
}

/// `update` or `delete`: a row by key, with the WAL record it logs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChangeSpec {
    pub key: String,
    /// Share of updates that are not HOT (they also insert an index entry)
    /// [default 0]; a delete has none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub non_hot_fraction: Option<f64>,
    pub table: String,
    pub wal_bytes: u32,
}

/// `insert`: an appended row and its WAL record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InsertSpec {
    pub table: String,
    pub wal_bytes: u32,
}

/// One statement: a client round trip, CPU, and at most one access.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct StatementSpec {
    /// CPU for this statement in µs [default: the workload's cpu_us_per_statement].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_us: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delete: Option<ChangeSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub insert: Option<InsertSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub range: Option<RangeSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read: Option<ReadSpec>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// The SQL it stands for, for readers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub update: Option<ChangeSpec>,
}

impl StatementSpec {
    /// The statement's access, if any; an error if it names more than one.
    pub fn access(&self) -> std::result::Result<Option<Access>, String> {
        let mut found = Vec::new();
        if let Some(r) = &self.read {
            found.push(Access::Read {
                table: r.table.clone(),
                key: r.key.clone(),
            });
        }
        if let Some(r) = &self.range {
            found.push(Access::Range {
                table: r.table.clone(),
                key: r.key.clone(),
                rows: r.rows,
            });
        }
        if let Some(u) = &self.update {
            found.push(Access::Update {
                table: u.table.clone(),
                key: u.key.clone(),
                wal_bytes: u.wal_bytes,
                non_hot_fraction: u.non_hot_fraction.unwrap_or(0.0),
            });
        }
        if let Some(i) = &self.insert {
            found.push(Access::Insert {
                table: i.table.clone(),
                wal_bytes: i.wal_bytes,
            });
        }
        if let Some(d) = &self.delete {
            found.push(Access::Delete {
                table: d.table.clone(),
                key: d.key.clone(),
                wal_bytes: d.wal_bytes,
            });
        }
        if found.len() > 1 {
            return Err(
                "a statement has at most one of read, range, update, insert, delete".into(),
            );
        }
        Ok(found.pop())
    }
}

/// A transaction type.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TransactionSpec {
    pub name: String,
    /// Relative weight in the mix [default 1].
    #[serde(default = "one")]
    pub weight: f64,
    /// Keys drawn at the start, by name.
    #[serde(default)]
    pub keys: BTreeMap<String, KeySpec>,
    pub statements: Vec<StatementSpec>,
    /// WAL bytes logged at commit: the commit record plus records not tied to
    /// a statement (pruning, locks).
    #[serde(default)]
    pub commit_wal_bytes: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

fn one() -> f64 {
    1.0
}

/// A whole workload file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorkloadSpec {
    pub name: String,
    pub description: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub tables: BTreeMap<String, TableSpec>,
    pub transactions: Vec<TransactionSpec>,
    /// Default CPU per statement, µs.
    pub cpu_us_per_statement: f64,
    /// Client round trip per statement, µs: with pgbench's threads on the
    /// database host (`-j`), CPU spent waking a backend onto an idle core;
    /// without, the network's delay.
    pub round_trip_us_per_statement: f64,
    /// CPU a backend spends on each data-file read it waits for (the read
    /// syscall, the kernel's block I/O and completion), µs; default 0.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub cpu_us_per_read: f64,
    /// CPU a process spends on each data-file write (the write syscall
    /// copying the page to the kernel, the buffer's bookkeeping), µs: a
    /// backend's eviction of a dirty buffer, the bgwriter's, the
    /// checkpointer's and vacuum's writes; default 0.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub cpu_us_per_write: f64,
    /// CPU per data-file read the device serves while the page cache is
    /// full (the kernel reclaims a page for each page it brings in), µs,
    /// in place of `cpu_us_per_read`; default 0: `cpu_us_per_read` always.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub reclaim_cpu_us_per_read: f64,
    /// CPU per KiB written while the page cache is full, data pages and WAL
    /// alike (the write, its writeback, the pages reclaimed for it), µs: a
    /// data page costs 8 KiB of it in place of `cpu_us_per_write`, a
    /// backend's WAL record (its full-page image included) its size;
    /// default 0.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub reclaim_cpu_us_per_kib_written: f64,
    /// The client's CPU per statement (pgbench: build and send it, read the
    /// reply), µs; default 0. Added to each statement's CPU, unless the run
    /// models the client's threads (`-j`), which then spend it.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub client_cpu_us_per_statement: f64,
    /// A backend's CPU grows with the backends sharing the cores: by this
    /// fraction of a statement's CPU per active backend above
    /// `cpu_growth_above_backends`; default 0 (no growth).
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub cpu_growth_per_backend: f64,
    /// The same for the CPU per read and per write; default 0.
    #[serde(default, skip_serializing_if = "is_zero_f64")]
    pub io_cpu_growth_per_backend: f64,
    /// Active backends up to which CPU does not grow; default 0.
    #[serde(default, skip_serializing_if = "is_zero_u32")]
    pub cpu_growth_above_backends: u32,
    /// How a statement's CPU grows with the backends running per logical
    /// CPU: `[backends per CPU, factor]` points, ascending, the factor on
    /// `cpu_us_per_statement` (linear in the logarithm of the backends per
    /// CPU between two points, the end points' beyond them); default
    /// none. A core switching among more backends than its caches hold
    /// refills them for each (docs/cpu-model.md, "CPU against the clients").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub cpu_crowding: Vec<[f64; 2]>,
    /// A statement's CPU (the client's included) under `-M prepared`, as a
    /// fraction of its CPU under `-M simple`.
    #[serde(
        default = "prepared_cpu_default",
        skip_serializing_if = "is_prepared_cpu_default"
    )]
    pub prepared_cpu_factor: f64,
    /// The same under `-M extended`.
    #[serde(
        default = "extended_cpu_default",
        skip_serializing_if = "is_extended_cpu_default"
    )]
    pub extended_cpu_factor: f64,
    /// CPU of one WAL flush (the flushing process's write and fdatasync
    /// syscalls), µs: on a saturated server the flusher waits for a core
    /// like every backend, so flushes end later and more commits join each.
    #[serde(
        default = "wal_flush_cpu_default",
        skip_serializing_if = "is_wal_flush_cpu_default"
    )]
    pub wal_flush_cpu_us: f64,
    /// A statement's server CPU on top of its own when its connection talks
    /// TLS (`ssl = on` and a client over TCP): reading the query from TLS
    /// records and writing the reply into them, µs.
    #[serde(
        default = "tls_cpu_default",
        skip_serializing_if = "is_tls_cpu_default"
    )]
    pub tls_cpu_us_per_statement: f64,
    /// How long a process sleeping on its latch (walsender, walreceiver,
    /// the startup process) takes to run once woken, µs.
    #[serde(
        default = "process_wakeup_default",
        skip_serializing_if = "is_process_wakeup_default"
    )]
    pub process_wakeup_us: f64,
    /// The CPU probe's time per round (`pgiosim cpu-probe`), µs, on the
    /// machine this file's CPU figures were measured on: `run` and a
    /// calibrated profile's `model` take this host's speed as this over
    /// their own probe's. Absent: the figures are taken as this host's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_probe_us: Option<f64>,
    /// The startup process's CPU per WAL record it replays, µs.
    #[serde(
        default = "replay_cpu_per_record_default",
        skip_serializing_if = "is_replay_cpu_per_record_default"
    )]
    pub replay_cpu_us_per_record: f64,
    /// Its CPU for restoring a full-page image, on top of the record's, µs.
    #[serde(
        default = "replay_cpu_per_fpi_default",
        skip_serializing_if = "is_replay_cpu_per_fpi_default"
    )]
    pub replay_cpu_us_per_fpi: f64,
    /// Bytes of a full-page image.
    pub full_page_image_bytes: u32,
    /// WAL bytes of an index insert (non-HOT updates, inserts into indexed tables).
    #[serde(default = "index_insert_default")]
    pub index_insert_wal_bytes: u32,
    /// Bytes of a checkpoint record.
    #[serde(default = "checkpoint_record_default")]
    pub checkpoint_record_bytes: u32,
    /// Where each number above comes from.
    #[serde(default)]
    pub sources: BTreeMap<String, String>,
}

/// Statement CPU under -M prepared against -M simple: tpcb-like's
/// measured ratio, as its statements are what the write workloads are made
/// of (a workload file may set its own, as select-only would). The runs:
/// docs/validation.md, "what pgbench's query protocol costs in CPU".
pub(crate) fn prepared_cpu_default() -> f64 {
    0.78
}

/// The same for -M extended, from the same runs.
pub(crate) fn extended_cpu_default() -> f64 {
    1.47
}

/// The WAL flusher's CPU: with none, a saturated server flushed every
/// commit alone, where PostgreSQL's flusher waits for a core like every
/// backend and more commits join each flush. 10 µs is about what
/// PostgreSQL's mean WAL sync time adds to fio's fdatasync on the
/// reference VM's disk, halved, as part of that gap is the kernel's
/// writeback. The measurements of this and the three below:
/// docs/validation.md, "The reference machine's process figures".
pub(crate) fn wal_flush_cpu_default() -> f64 {
    10.0
}

/// A process's wake-up, µs: half the median round trip of a pipe ping-pong
/// between two processes sleeping in epoll 2 ms apart, so the cores go
/// idle as between commits, on the reference VM
/// (`scripts/syncrep-compare --measure-wakeup`).
pub(crate) fn process_wakeup_default() -> f64 {
    15.0
}

/// The startup process's CPU a record, µs: PostgreSQL 15 replaying a cached
/// tpcb-like backlog with full_page_writes off, so that the replay is CPU
/// alone, on the reference VM (`scripts/catchup-compare --measure-cpu`).
pub(crate) fn replay_cpu_per_record_default() -> f64 {
    1.08
}

/// Its CPU for an image: the same with full_page_writes on, less the
/// records' share.
pub(crate) fn replay_cpu_per_fpi_default() -> f64 {
    3.94
}

/// TLS's server CPU a statement, µs: PostgreSQL 15 on the reference VM,
/// tpcb-like prepared from pgbench over 127.0.0.1 with sslmode=require
/// against sslmode=disable (TLS 1.3, AES-256-GCM), the server's CPU a
/// transaction apart over its 7 statements, carried to the reference CPU
/// by the CPU probe (`scripts/cpu-vs-clients --connections tcp,tls`;
/// docs/cpu-model.md, "What TLS costs").
pub(crate) fn tls_cpu_default() -> f64 {
    8.2
}

fn is_tls_cpu_default(v: &f64) -> bool {
    *v == tls_cpu_default()
}

fn is_wal_flush_cpu_default(v: &f64) -> bool {
    *v == wal_flush_cpu_default()
}

fn is_process_wakeup_default(v: &f64) -> bool {
    *v == process_wakeup_default()
}

fn is_replay_cpu_per_record_default(v: &f64) -> bool {
    *v == replay_cpu_per_record_default()
}

fn is_replay_cpu_per_fpi_default(v: &f64) -> bool {
    *v == replay_cpu_per_fpi_default()
}

fn is_prepared_cpu_default(v: &f64) -> bool {
    *v == prepared_cpu_default()
}

fn is_extended_cpu_default(v: &f64) -> bool {
    *v == extended_cpu_default()
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

fn is_zero_u32(v: &u32) -> bool {
    *v == 0
}

fn is_zero_f64(v: &f64) -> bool {
    *v == 0.0
}

fn is_false(v: &bool) -> bool {
    !*v
}

fn index_insert_default() -> u32 {
    64
}

fn checkpoint_record_default() -> u32 {
    114
}

impl WorkloadSpec {
    /// Parse and validate a workload file's text; `origin` names it in errors.
    pub fn from_json(text: &str, origin: &str) -> Result<WorkloadSpec> {
        let spec: WorkloadSpec = serde_json::from_str(text)
            .with_context(|| format!("{origin}: not a valid workload file"))?;
        spec.validate().with_context(|| origin.to_string())?;
        Ok(spec)
    }

    /// Every reference resolves and every number makes sense: what a
    /// workload file must pass, and what pgiosim checks before writing one.
    pub(crate) fn validate(&self) -> Result<()> {
        self.validate_tables()?;
        if self.transactions.is_empty() {
            bail!("transactions: at least one transaction type is needed");
        }
        self.validate_cpu_figures()?;
        self.validate_transactions()
    }

    /// Each table can hold its rows and its index can be built.
    fn validate_tables(&self) -> Result<()> {
        if self.tables.is_empty() {
            bail!("tables: at least one table is needed");
        }
        for (name, t) in &self.tables {
            let at = format!("tables.{name}");
            if t.rows_per_page == 0 {
                bail!("{at}.rows_per_page: must be at least 1");
            }
            if t.rows_per_scale == 0 && t.append_pages == 0 {
                bail!(
                    "{at}: a table needs rows_per_scale (rows it starts with) or append_pages (room to grow)"
                );
            }
            if let Some(i) = &t.index {
                if i.items_per_leaf == 0 {
                    bail!("{at}.index.items_per_leaf: must be at least 1");
                }
                if i.fanout < 2 {
                    bail!("{at}.index.fanout: must be at least 2, got {}", i.fanout);
                }
            }
        }
        Ok(())
    }

    /// The CPU figures are numbers in their range.
    fn validate_cpu_figures(&self) -> Result<()> {
        for (what, v) in [
            ("cpu_us_per_statement", self.cpu_us_per_statement),
            (
                "round_trip_us_per_statement",
                self.round_trip_us_per_statement,
            ),
            ("cpu_us_per_read", self.cpu_us_per_read),
            ("cpu_us_per_write", self.cpu_us_per_write),
            ("reclaim_cpu_us_per_read", self.reclaim_cpu_us_per_read),
            (
                "reclaim_cpu_us_per_kib_written",
                self.reclaim_cpu_us_per_kib_written,
            ),
            (
                "client_cpu_us_per_statement",
                self.client_cpu_us_per_statement,
            ),
            ("wal_flush_cpu_us", self.wal_flush_cpu_us),
            ("tls_cpu_us_per_statement", self.tls_cpu_us_per_statement),
            ("process_wakeup_us", self.process_wakeup_us),
            ("replay_cpu_us_per_record", self.replay_cpu_us_per_record),
            ("replay_cpu_us_per_fpi", self.replay_cpu_us_per_fpi),
        ] {
            check_cpu_us(what, v)?;
        }
        let (lo, hi) = crate::units::CPU_PROBE_US_RANGE;
        if let Some(p) = self.cpu_probe_us
            && !(p.is_finite() && (lo..=hi).contains(&p))
        {
            bail!("cpu_probe_us: must be between {lo} and {hi} microseconds a round, got {p}");
        }
        for (what, v) in [
            ("prepared_cpu_factor", self.prepared_cpu_factor),
            ("extended_cpu_factor", self.extended_cpu_factor),
        ] {
            if !(v.is_finite() && v > 0.0 && v <= QUERY_MODE_CPU_FACTOR_MAX) {
                bail!(
                    "{what}: must be a positive fraction of a statement's CPU under -M simple (0.8 is 20% less), at most {QUERY_MODE_CPU_FACTOR_MAX}, got {v}"
                );
            }
        }
        for (what, v) in [
            ("cpu_growth_per_backend", self.cpu_growth_per_backend),
            ("io_cpu_growth_per_backend", self.io_cpu_growth_per_backend),
        ] {
            if !(v.is_finite() && (0.0..=CPU_GROWTH_PER_BACKEND_MAX).contains(&v)) {
                bail!(
                    "{what}: must be a fraction per backend from 0 to {CPU_GROWTH_PER_BACKEND_MAX} (0.01 is 1% more CPU per backend), got {v}"
                );
            }
        }
        self.validate_crowding()
    }

    /// `cpu_crowding`'s points: a few, ascending, factors in range.
    fn validate_crowding(&self) -> Result<()> {
        let points = &self.cpu_crowding;
        if points.len() > CROWDING_POINTS_MAX {
            bail!(
                "cpu_crowding: at most {CROWDING_POINTS_MAX} points, got {}",
                points.len()
            );
        }
        for (i, [per_cpu, factor]) in points.iter().copied().enumerate() {
            if !(per_cpu.is_finite() && per_cpu > 0.0) {
                bail!("cpu_crowding[{i}]: backends per CPU must be above 0, got {per_cpu}");
            }
            if !(factor.is_finite() && factor > 0.0 && factor <= CROWDING_FACTOR_MAX) {
                bail!(
                    "cpu_crowding[{i}]: the factor on a statement's CPU must be above 0 and at most {CROWDING_FACTOR_MAX}, got {factor}"
                );
            }
            if i > 0 && per_cpu <= points[i - 1][0] {
                bail!(
                    "cpu_crowding[{i}]: backends per CPU must ascend ({per_cpu} after {})",
                    points[i - 1][0]
                );
            }
        }
        Ok(())
    }

    /// Each transaction's keys and statements name tables and keys that
    /// exist, with values in range.
    fn validate_transactions(&self) -> Result<()> {
        for (ti, tx) in self.transactions.iter().enumerate() {
            let at = format!("transactions[{ti}] ({})", tx.name);
            if !(tx.weight.is_finite() && tx.weight > 0.0) {
                bail!("{at}.weight: must be greater than 0, got {}", tx.weight);
            }
            if tx.statements.is_empty() {
                bail!("{at}.statements: at least one statement is needed");
            }
            for (k, key) in &tx.keys {
                let t = self.tables.get(&key.table).with_context(|| {
                    format!("{at}.keys.{k}.table: no table named {:?}", key.table)
                })?;
                if t.rows_per_scale == 0 {
                    bail!(
                        "{at}.keys.{k}.table: {:?} has no rows to draw keys from (rows_per_scale is 0)",
                        key.table
                    );
                }
                key.distribution
                    .check()
                    .map_err(|e| anyhow::anyhow!("{at}.keys.{k}.distribution: {e}"))?;
            }
            for (si, st) in tx.statements.iter().enumerate() {
                self.validate_statement(tx, &format!("{at}.statements[{si}]"), st)?;
            }
        }
        Ok(())
    }

    /// Statement `st` of `tx`, named `at`: its CPU in range, and a table
    /// and key that exist and agree, with room for the rows it adds.
    fn validate_statement(&self, tx: &TransactionSpec, at: &str, st: &StatementSpec) -> Result<()> {
        if let Some(c) = st.cpu_us {
            check_cpu_us(&format!("{at}.cpu_us"), c)?;
        }
        let access = st.access().map_err(|e| anyhow::anyhow!("{at}: {e}"))?;
        let Some(a) = &access else { return Ok(()) };
        let (kind, table, key) = match a {
            Access::Read { table, key } => ("read", table, Some(key)),
            Access::Range {
                table, key, rows, ..
            } => {
                if *rows == 0 {
                    bail!("{at}.range.rows: must be at least 1");
                }
                ("range", table, Some(key))
            }
            Access::Update {
                table,
                key,
                non_hot_fraction,
                ..
            } => {
                if !(0.0..=1.0).contains(non_hot_fraction) {
                    bail!(
                        "{at}.update.non_hot_fraction: must be between 0 and 1, got {non_hot_fraction}"
                    );
                }
                ("update", table, Some(key))
            }
            Access::Insert { table, .. } => ("insert", table, None),
            Access::Delete { table, key, .. } => ("delete", table, Some(key)),
        };
        let t = self
            .tables
            .get(table)
            .with_context(|| format!("{at}.{kind}.table: no table named {table:?}"))?;
        if let Some(key) = key {
            let k = tx.keys.get(key).with_context(|| {
                format!("{at}.{kind}.key: no key named {key:?} in {}.keys", tx.name)
            })?;
            if &k.table != table {
                bail!(
                    "{at}.{kind}.key: {key:?} ranges over {:?}, not {table:?}",
                    k.table
                );
            }
        }
        if kind == "update" && t.full_at_load && t.append_pages == 0 {
            bail!(
                "{at}.update.table: {table:?} is full_at_load but has no append_pages for moved rows"
            );
        }
        if kind == "insert" && t.append_pages == 0 {
            bail!("{at}.insert.table: {table:?} has no append_pages to insert into");
        }
        Ok(())
    }
}

/// A workload's µs figure `v`, named `what`: a number from 0 to
/// [`CPU_US_MAX`], as the command line takes one.
fn check_cpu_us(what: &str, v: f64) -> Result<()> {
    if !(v.is_finite() && (0.0..=CPU_US_MAX).contains(&v)) {
        bail!("{what}: must be a number of microseconds from 0 to {CPU_US_MAX:.0} (1d), got {v}");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_workload_reads_back_as_it_writes() {
        for (name, _) in crate::workload::BUILTIN {
            let spec = crate::workload::builtin(name).unwrap();
            let text = serde_json::to_string_pretty(&spec).unwrap();
            let again = WorkloadSpec::from_json(&text, name).unwrap();
            assert_eq!(again, spec, "{name}");
        }
    }

    const GOOD: &str = r#"{
      "name": "t", "description": "d",
      "tables": {
        "a": {"rows_per_scale": 1000, "rows_per_page": 50, "index": {"items_per_leaf": 300, "fanout": 200}},
        "h": {"rows_per_page": 100, "append_pages": 64}
      },
      "transactions": [{"name": "x", "keys": {"k": {"table": "a", "distribution": {"type": "zipfian", "parameter": 1.1}}},
        "statements": [{"sql": "BEGIN"},
                       {"update": {"table": "a", "key": "k", "wal_bytes": 72, "non_hot_fraction": 0.1}},
                       {"insert": {"table": "h", "wal_bytes": 79}}],
        "commit_wal_bytes": 34}],
      "cpu_us_per_statement": 40, "round_trip_us_per_statement": 20, "full_page_image_bytes": 8000
    }"#;

    fn err(text: &str) -> String {
        format!("{:#}", WorkloadSpec::from_json(text, "w.json").unwrap_err())
    }

    #[test]
    fn good_file_parses() {
        let s = WorkloadSpec::from_json(GOOD, "w.json").unwrap();
        assert_eq!(s.transactions[0].statements.len(), 3);
        assert_eq!(s.index_insert_wal_bytes, 64);
    }

    #[test]
    fn each_error_names_file_path_and_problem() {
        let cases = [
            (
                GOOD.replace("\"rows_per_page\": 50", "\"rows_per_page\": 0"),
                "tables.a.rows_per_page",
            ),
            (
                GOOD.replace("\"fanout\": 200", "\"fanout\": 1"),
                "tables.a.index.fanout",
            ),
            (
                GOOD.replace("\"table\": \"a\", \"key\"", "\"table\": \"zz\", \"key\""),
                "statements[1].update.table",
            ),
            (
                GOOD.replace("\"key\": \"k\"", "\"key\": \"nope\""),
                "statements[1].update.key",
            ),
            (
                GOOD.replace("\"parameter\": 1.1", "\"parameter\": 1.0"),
                "keys.k.distribution",
            ),
            (
                GOOD.replace("\"non_hot_fraction\": 0.1", "\"non_hot_fraction\": 2"),
                "non_hot_fraction",
            ),
            (
                GOOD.replace("\"append_pages\": 64", "\"rows_per_scale\": 5"),
                "insert.table",
            ),
            (
                GOOD.replace(
                    "\"cpu_us_per_statement\": 40",
                    "\"cpu_us_per_statement\": -1",
                ),
                "cpu_us_per_statement",
            ),
            (
                GOOD.replace(
                    "\"cpu_us_per_statement\": 40",
                    "\"cpu_us_per_statement\": 40, \"io_cpu_growth_per_backend\": -0.01",
                ),
                "io_cpu_growth_per_backend",
            ),
            (
                GOOD.replace(
                    "\"cpu_us_per_statement\": 40",
                    "\"cpu_us_per_statement\": 40, \"cpu_crowding\": [[32, 1.1], [16, 1.2]]",
                ),
                "cpu_crowding[1]: backends per CPU must ascend",
            ),
            (
                GOOD.replace(
                    "\"cpu_us_per_statement\": 40",
                    "\"cpu_us_per_statement\": 40, \"cpu_crowding\": [[16, 1e9]]",
                ),
                "cpu_crowding[0]: the factor",
            ),
            (
                GOOD.replace(
                    "\"statements\": [{\"sql\": \"BEGIN\"},",
                    "\"weight\": 0, \"statements\": [{\"sql\": \"BEGIN\"},",
                ),
                "weight",
            ),
            (
                GOOD.replace(
                    "\"table\": \"a\", \"distribution\"",
                    "\"table\": \"h\", \"distribution\"",
                ),
                "keys.k.table",
            ),
        ];
        for (text, needle) in cases {
            let e = err(&text);
            assert!(e.starts_with("w.json"), "{e}");
            assert!(e.contains(needle), "expected {needle:?} in {e}");
        }
    }

    #[test]
    fn unknown_fields_and_bad_json_are_refused() {
        let e = err(&GOOD.replace("\"description\"", "\"descriptoin\""));
        assert!(e.contains("w.json") && e.contains("descriptoin"), "{e}");
        let e = err("{ not json");
        assert!(e.contains("w.json"), "{e}");
        let e = err(&GOOD.replace("\"type\": \"zipfian\"", "\"type\": \"pareto\""));
        assert!(e.contains("pareto"), "{e}");
    }
}
