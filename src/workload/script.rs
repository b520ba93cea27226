//! A workload file compiled at one scale: a generator of transactions as
//! the core's steps, over its tables as `layout` places them in the data
//! file.

use anyhow::{Result, bail};
use rand::RngExt;

use super::QueryMode;
use super::distribution::Sampler;
use super::spec::{Access, WorkloadSpec};
use crate::core::SimRng;
use crate::core::config::ReclaimCpu;
use crate::core::cpu_growth::CpuGrowth;
use crate::core::io::PAGE_BYTES;
use crate::core::locks::RowId;
use crate::core::slots::prefetch;
use crate::core::time::{Nanos, US};
use crate::core::workload::{FreshPages, Step, TableHeap, Workload};

use super::layout::layout;
pub use super::layout::{Btree, DATA_BLOCKS_MAX, Extent, ROWS_MAX, Table};

/// WAL bytes of the Heap/LOCK record logged when an update moves a row to
/// another page (measured 54 B, postgres-facts.md section 2).
const MOVED_ROW_LOCK_WAL_BYTES: u32 = 54;

/// Share of the committing statement's CPU that comes after its commit
/// record is durable. `CommitTransaction` (xact.c) inserts the record and
/// waits in `XLogFlush` about midway: the commit-log update,
/// `ProcArrayEndTransaction`, the resource owners' release (the row and
/// transaction locks, whose waiters it wakes) and the reply to the client
/// come after. So a committer must wake and get a core before its lock
/// waiters can go on, which lengthens every lock chain by one wake-up.
const COMMIT_CPU_AFTER_FLUSH: f64 = 0.5;

#[derive(Debug, Clone, Copy)]
enum Stmt {
    Read {
        table: usize,
        key: usize,
    },
    Range {
        table: usize,
        key: usize,
        rows: u64,
    },
    Update {
        table: usize,
        key: usize,
        wal: u32,
        non_hot: f64,
    },
    Insert {
        table: usize,
        wal: u32,
    },
    Delete {
        table: usize,
        key: usize,
        wal: u32,
    },
}

#[derive(Debug, Clone)]
struct Tx {
    keys: Vec<(usize, Sampler)>,
    statements: Vec<(Nanos, Option<Stmt>)>,
    commit_wal: u32,
}

/// A compiled workload.
#[derive(Debug)]
pub struct Script {
    name: String,
    transaction_type: String,
    scale: u64,
    tables: Vec<Table>,
    txs: Vec<Tx>,
    cumulative_weights: Vec<f64>,
    total_blocks: u64,
    fpi_bytes: u32,
    checkpoint_record_bytes: u32,
    index_insert_wal: u32,
    round_trip: Nanos,
    read_cpu: Nanos,
    write_cpu: Nanos,
    reclaim_cpu: ReclaimCpu,
    cpu_growth: CpuGrowth,
    cpu_crowding: Vec<(f64, f64)>,
    client_cpu: Nanos,
    /// A statement's server CPU for TLS, should its connection use it.
    tls_cpu: Nanos,
    /// Whether the statements' CPU includes `tls_cpu`.
    tls: bool,
    wal_flush_cpu: Nanos,
    process_wakeup: Nanos,
    replay_record_cpu: Nanos,
    replay_fpi_cpu: Nanos,
    /// Whether each statement's CPU includes the client's (no client threads).
    client_cpu_in_statements: bool,
    /// Statement CPU under -M prepared and -M extended, against simple's.
    prepared_cpu_factor: f64,
    extended_cpu_factor: f64,
    query_mode: QueryMode,
    described: serde_json::Value,
    keys: Vec<u64>,
}

/// A mix's name (`a@1,b@2`), its transaction type as pgbench prints it,
/// and its description for the result: the parts and the tables laid out.
fn describe(
    parts: &[(WorkloadSpec, f64)],
    scale: u64,
    next: u64,
    tables: &[Table],
) -> (String, String, serde_json::Value) {
    let name = parts
        .iter()
        .map(|(s, w)| {
            if parts.len() > 1 {
                format!("{}@{w}", s.name)
            } else {
                s.name.clone()
            }
        })
        .collect::<Vec<_>>()
        .join(",");
    let transaction_type = if parts.len() > 1 {
        "multiple scripts".to_string()
    } else {
        parts[0].0.description.clone()
    };
    let described = serde_json::json!({
        "name": name,
        "scale": scale,
        "data_blocks": next,
        "data_bytes": next * PAGE_BYTES,
        "parts": parts.iter().map(|(s, w)| serde_json::json!({
            "name": s.name, "weight": w, "description": s.description,
            "source": s.source, "sources": s.sources,
        })).collect::<Vec<_>>(),
        "tables": tables.iter().map(|t| serde_json::json!({
            "name": t.name, "rows": t.rows, "heap_pages": t.heap.blocks,
            "append_pages": t.append.blocks,
            "index_pages": t.index.as_ref().map(|i| i.blocks()),
            "index_levels": t.index.as_ref().map(|i| i.levels.len()),
        })).collect::<Vec<_>>(),
    });
    (name, transaction_type, described)
}

/// Every transaction of the mix `parts` over `tables`, compiled, and their
/// cumulative weights (pgbench's: a transaction's own times its
/// workload's).
fn transactions(parts: &[(WorkloadSpec, f64)], tables: &[Table]) -> Result<(Vec<Tx>, Vec<f64>)> {
    let table_index = |name: &str| {
        tables
            .iter()
            .position(|t| t.name == name)
            .expect("validated")
    };
    let mut txs = Vec::new();
    let mut cumulative_weights = Vec::new();
    let mut total_weight = 0.0;
    for (spec, mix_weight) in parts {
        for tx in &spec.transactions {
            let key_names: Vec<&String> = tx.keys.keys().collect();
            let keys = tx
                .keys
                .values()
                .map(|k| {
                    let ti = table_index(&k.table);
                    (ti, Sampler::new(k.distribution, tables[ti].rows))
                })
                .collect();
            let key_index = |k: &str| key_names.iter().position(|n| *n == k).expect("validated");
            let mut statements = Vec::new();
            for st in &tx.statements {
                let cpu = (st.cpu_us.unwrap_or(spec.cpu_us_per_statement) * US as f64) as Nanos;
                let access = st.access().map_err(anyhow::Error::msg)?;
                statements.push((cpu, access.map(|a| statement(a, &table_index, &key_index))));
            }
            total_weight += tx.weight * mix_weight;
            cumulative_weights.push(total_weight);
            txs.push(Tx {
                keys,
                statements,
                commit_wal: tx.commit_wal_bytes,
            });
        }
    }
    Ok((txs, cumulative_weights))
}

/// A statement's access with its table and key as indexes into the
/// script's tables and its transaction's keys.
fn statement(
    access: Access,
    table_index: &dyn Fn(&str) -> usize,
    key_index: &dyn Fn(&str) -> usize,
) -> Stmt {
    match access {
        Access::Read { table, key } => Stmt::Read {
            table: table_index(&table),
            key: key_index(&key),
        },
        Access::Range { table, key, rows } => Stmt::Range {
            table: table_index(&table),
            key: key_index(&key),
            rows,
        },
        Access::Update {
            table,
            key,
            wal_bytes,
            non_hot_fraction,
        } => Stmt::Update {
            table: table_index(&table),
            key: key_index(&key),
            wal: wal_bytes,
            non_hot: non_hot_fraction,
        },
        Access::Insert { table, wal_bytes } => Stmt::Insert {
            table: table_index(&table),
            wal: wal_bytes,
        },
        Access::Delete {
            table,
            key,
            wal_bytes,
        } => Stmt::Delete {
            table: table_index(&table),
            key: key_index(&key),
            wal: wal_bytes,
        },
    }
}

impl Script {
    /// Compile one workload at `scale`.
    pub fn new(spec: &WorkloadSpec, scale: u64) -> Result<Script> {
        Script::mix(&[(spec.clone(), 1.0)], scale)
    }

    /// Compile a weighted mix of workloads (pgbench's `-b name@weight`) at
    /// `scale`. They must share their tables.
    pub fn mix(parts: &[(WorkloadSpec, f64)], scale: u64) -> Result<Script> {
        if scale == 0 {
            bail!("scale must be at least 1");
        }
        let (first, _) = parts.first().expect("at least one workload");
        for (other, w) in &parts[1..] {
            if other.tables != first.tables {
                bail!(
                    "cannot mix {} and {}: their tables differ (a mix runs on one data set)",
                    first.name,
                    other.name
                );
            }
            if !(w.is_finite() && *w > 0.0) {
                bail!("{}@{w}: a weight must be greater than 0", other.name);
            }
        }
        let (tables, next) = layout(first, scale)?;
        let (mut txs, cumulative_weights) = transactions(parts, &tables)?;
        let (name, transaction_type, described) = describe(parts, scale, next, &tables);
        // Without client threads the client's CPU is part of each statement's.
        let client_cpu = (first.client_cpu_us_per_statement * US as f64) as Nanos;
        for tx in &mut txs {
            for (cpu, _) in &mut tx.statements {
                *cpu += client_cpu;
            }
        }
        Ok(Script {
            name,
            transaction_type,
            scale,
            tables,
            txs,
            cumulative_weights,
            total_blocks: next,
            fpi_bytes: first.full_page_image_bytes,
            checkpoint_record_bytes: first.checkpoint_record_bytes,
            index_insert_wal: first.index_insert_wal_bytes,
            round_trip: (first.round_trip_us_per_statement * US as f64) as Nanos,
            read_cpu: (first.cpu_us_per_read * US as f64) as Nanos,
            write_cpu: (first.cpu_us_per_write * US as f64) as Nanos,
            reclaim_cpu: ReclaimCpu {
                read: (first.reclaim_cpu_us_per_read * US as f64) as Nanos,
                per_kib_written: (first.reclaim_cpu_us_per_kib_written * US as f64) as Nanos,
            },
            cpu_growth: CpuGrowth {
                above: first.cpu_growth_above_backends,
                statement: first.cpu_growth_per_backend,
                io: first.io_cpu_growth_per_backend,
            },
            cpu_crowding: first.cpu_crowding.iter().map(|p| (p[0], p[1])).collect(),
            client_cpu,
            tls_cpu: (first.tls_cpu_us_per_statement * US as f64).round() as Nanos,
            tls: false,
            wal_flush_cpu: (first.wal_flush_cpu_us * US as f64).round() as Nanos,
            process_wakeup: (first.process_wakeup_us * US as f64).round() as Nanos,
            replay_record_cpu: (first.replay_cpu_us_per_record * US as f64).round() as Nanos,
            replay_fpi_cpu: (first.replay_cpu_us_per_fpi * US as f64).round() as Nanos,
            client_cpu_in_statements: true,
            prepared_cpu_factor: first.prepared_cpu_factor,
            extended_cpu_factor: first.extended_cpu_factor,
            query_mode: QueryMode::Simple,
            described,
            keys: Vec::new(),
        })
    }

    /// The startup process's CPU per WAL record it replays, and per
    /// full-page image on top of that.
    pub fn replay_cpu(&self) -> (Nanos, Nanos) {
        (self.replay_record_cpu, self.replay_fpi_cpu)
    }

    /// A transaction's WAL records on average, without full-page images,
    /// as the standby's replay counts them (`replay`: a change or commit
    /// that logs bytes is a record): (records, bytes). A non-HOT update's
    /// index entry counts at its share; the row an update moves off a
    /// freshly loaded page (`full_at_load`) does not: it moves once a
    /// page, then never again.
    pub fn mean_wal_records(&self) -> (f64, f64) {
        let (mut records, mut bytes) = (0.0, 0.0);
        let mut below = 0.0;
        for (tx, &cumulative) in self.txs.iter().zip(&self.cumulative_weights) {
            let (mut r, mut b) = (0.0, 0.0);
            let mut log = |share: f64, wal: u32| {
                if wal > 0 {
                    r += share;
                    b += share * f64::from(wal);
                }
            };
            for stmt in tx.statements.iter().filter_map(|(_, s)| s.as_ref()) {
                match *stmt {
                    Stmt::Read { .. } | Stmt::Range { .. } => {}
                    Stmt::Update {
                        table,
                        wal,
                        non_hot,
                        ..
                    } => {
                        log(1.0, wal);
                        if self.tables[table].index.is_some() && non_hot > 0.0 {
                            log(non_hot, self.index_insert_wal);
                        }
                    }
                    Stmt::Delete { wal, .. } => log(1.0, wal),
                    Stmt::Insert { table, wal } => {
                        log(1.0, wal);
                        if self.tables[table].index.is_some() {
                            log(1.0, self.index_insert_wal);
                        }
                    }
                }
            }
            log(1.0, tx.commit_wal);
            let weight = cumulative - below;
            below = cumulative;
            records += weight * r;
            bytes += weight * b;
        }
        let total = below;
        (records / total, bytes / total)
    }

    /// How fast a streaming standby's startup process replays this
    /// workload's WAL, bytes a second, for a `--standby` without replay=:
    /// a transaction's record bytes over the CPU their replay takes at
    /// `replay_cpu_us_per_record`, the figure `catchup` charges a record
    /// (the built-ins' rates: docs/validation.md, "a standby's replay rate
    /// from the workload's replay CPU"). A full-page image's bytes are not
    /// charged at this rate: the standby restores one for
    /// `replay_cpu_us_per_fpi` (`replay_cpu`), from where the primary
    /// logged its images. Infinite when the transactions log nothing or
    /// replay costs no CPU.
    pub fn replay_bytes_per_s(&self) -> f64 {
        let (records, bytes) = self.mean_wal_records();
        let cpu_s = records * self.replay_record_cpu as f64 / 1e9;
        if cpu_s > 0.0 {
            bytes / cpu_s
        } else {
            f64::INFINITY
        }
    }

    /// Statements sent with pgbench's `mode` (-M): their CPU, the
    /// client's included, scaled by the workload's factor for it. Call
    /// once, before `use_client_threads` or `client_elsewhere`.
    pub fn use_query_mode(&mut self, mode: QueryMode) {
        assert_eq!(self.query_mode, QueryMode::Simple, "query mode set twice");
        let f = match mode {
            QueryMode::Simple => return,
            QueryMode::Extended => self.extended_cpu_factor,
            QueryMode::Prepared => self.prepared_cpu_factor,
        };
        let scale = |n: Nanos| (n as f64 * f).round() as Nanos;
        for tx in &mut self.txs {
            for (cpu, _) in &mut tx.statements {
                *cpu = scale(*cpu);
            }
        }
        self.client_cpu = scale(self.client_cpu);
        self.query_mode = mode;
    }

    /// The longest CPU a statement asks for (its query mode's and the
    /// client's included) and the longest a data-file read or write
    /// costs, before they grow with the backends.
    pub fn longest_cpu(&self) -> (Nanos, Nanos) {
        let statement = self
            .txs
            .iter()
            .flat_map(|t| &t.statements)
            .map(|s| s.0)
            .max()
            .unwrap_or(0);
        let io = [
            self.read_cpu,
            self.write_cpu,
            self.reclaim_cpu.read,
            self.reclaim_cpu.per_kib_written.saturating_mul(8),
        ]
        .into_iter()
        .max()
        .unwrap_or(0);
        (statement, io)
    }

    /// The query protocol the statements' CPU is for.
    pub fn query_mode(&self) -> QueryMode {
        self.query_mode
    }

    /// The client runs on another host, `rtt` away: each statement's
    /// round trip is the network's, and the client's CPU is spent there,
    /// not on the server's cores.
    pub fn client_elsewhere(&mut self, rtt: Nanos) {
        // The client's CPU leaves the statements, as with -j, and nobody
        // on the server spends it.
        self.use_client_threads();
        self.client_cpu = 0;
        self.round_trip = rtt;
    }

    /// The connections talk TLS: each statement's query and reply pass
    /// through TLS records, which costs the server `tls_cpu_us_per_statement`
    /// on top of the statement's own CPU (the same under every query mode:
    /// the records are small either way).
    pub fn use_tls(&mut self) {
        if self.tls {
            return;
        }
        for tx in &mut self.txs {
            for (cpu, _) in &mut tx.statements {
                *cpu += self.tls_cpu;
            }
        }
        self.tls = true;
    }

    /// Whether the connections talk TLS ([`Script::use_tls`]).
    pub fn uses_tls(&self) -> bool {
        self.tls
    }

    /// Every table, in the workload file's order.
    pub fn tables(&self) -> &[Table] {
        &self.tables
    }

    /// A table by name.
    pub fn table(&self, name: &str) -> Option<&Table> {
        self.tables.iter().find(|t| t.name == name)
    }

    /// The pgbench scale factor.
    pub fn scale(&self) -> u64 {
        self.scale
    }

    /// The part of a committing statement's `cpu` run after the commit
    /// record is durable.
    fn after_commit(cpu: Nanos) -> Nanos {
        (cpu as f64 * COMMIT_CPU_AFTER_FLUSH) as Nanos
    }

    fn row_id(table: usize, key: u64) -> RowId {
        ((table as u64 + 1) << 56) | key
    }
}

impl Script {
    /// Which transaction of the script runs next (pgbench's weights).
    fn choose(&self, rng: &mut SimRng) -> usize {
        if self.txs.len() == 1 {
            return 0;
        }
        let total = *self.cumulative_weights.last().unwrap();
        let x = rng.random::<f64>() * total;
        self.cumulative_weights
            .iter()
            .position(|&c| x < c)
            .unwrap_or(self.txs.len() - 1)
    }

    /// Start fetching the memory the next transaction's generation will
    /// read: over a table of hundreds of GB its updated-page bit is a
    /// cache miss nearly every time, and it is read right after the key
    /// is drawn. The next keys are drawn here from a copy of the generator,
    /// so they are right unless something else draws from it first (then
    /// the hint is merely wasted). Changes nothing observable.
    fn speculate(&mut self, rng: &SimRng) {
        if !self.tables.iter().any(|t| t.updated.is_some()) {
            return;
        }
        let mut rng = rng.clone();
        let ti = self.choose(&mut rng);
        let tx = &self.txs[ti];
        self.keys.clear();
        for (_, sampler) in &tx.keys {
            self.keys.push(sampler.sample(&mut rng));
        }
        for (_, stmt) in &tx.statements {
            if let Some(Stmt::Update { table, key, .. }) = stmt {
                let t = &self.tables[*table];
                if let Some(bits) = &t.updated {
                    let i = (t.heap_block(self.keys[*key]) - t.heap.first) as usize / 64;
                    if let Some(word) = bits.get(i) {
                        prefetch(word);
                    }
                }
            }
        }
    }

    /// The pages one statement reads, locks and modifies, with the keys
    /// its transaction drew.
    fn statement_steps(&mut self, stmt: Stmt, rng: &mut SimRng, out: &mut Vec<Step>) {
        match stmt {
            Stmt::Read { table, key } => {
                let (t, k) = (&self.tables[table], self.keys[key]);
                if let Some(ix) = &t.index {
                    ix.read_path(k, out);
                }
                out.push(Step::Read(t.heap_block(k)));
            }
            Stmt::Range { table, key, rows } => {
                let (t, k) = (&self.tables[table], self.keys[key]);
                let last = (k + rows - 1).min(t.rows.saturating_sub(1));
                if let Some(ix) = &t.index {
                    ix.read_path(k, out);
                    out.extend((ix.leaf(k) + 1..=ix.leaf(last)).map(Step::Read));
                }
                out.extend((t.heap_block(k)..=t.heap_block(last)).map(Step::Read));
            }
            Stmt::Update {
                table,
                key,
                wal,
                non_hot,
            } => self.update_steps(table, self.keys[key], wal, non_hot, rng, out),
            Stmt::Delete { table, key, wal } => {
                let (t, k) = (&self.tables[table], self.keys[key]);
                if let Some(ix) = &t.index {
                    ix.read_path(k, out);
                }
                out.push(Step::Lock(Self::row_id(table, k)));
                out.push(Step::Modify {
                    block: t.heap_block(k),
                    wal_bytes: wal,
                });
            }
            Stmt::Insert { table, wal } => self.insert_steps(table, wal, out),
        }
    }

    /// An update of row `k`: in place (HOT, or with a new index entry at
    /// `non_hot`'s odds), or moved off a full-at-load page on its first
    /// update.
    fn update_steps(
        &mut self,
        table: usize,
        k: u64,
        wal: u32,
        non_hot: f64,
        rng: &mut SimRng,
        out: &mut Vec<Step>,
    ) {
        let t = &mut self.tables[table];
        if let Some(ix) = &t.index {
            ix.read_path(k, out);
        }
        out.push(Step::Lock(Self::row_id(table, k)));
        let block = t.heap_block(k);
        if t.first_update(block) {
            // No room on the full page: the new version goes to
            // a page at the end of the table, a tuple lock is
            // logged on the old one, and the index gets an entry.
            out.push(Step::Modify {
                block,
                wal_bytes: wal + MOVED_ROW_LOCK_WAL_BYTES,
            });
            let (new_block, new_page) = t.append();
            out.push(if new_page {
                Step::Extend {
                    block: new_block,
                    wal_bytes: 0,
                }
            } else {
                Step::Modify {
                    block: new_block,
                    wal_bytes: 0,
                }
            });
            if let Some(ix) = &t.index {
                out.push(Step::Modify {
                    block: ix.leaf(k),
                    wal_bytes: self.index_insert_wal,
                });
            }
        } else {
            out.push(Step::Modify {
                block,
                wal_bytes: wal,
            });
            if let Some(ix) = &t.index
                && non_hot > 0.0
                && rng.random_bool(non_hot)
            {
                // A non-HOT update puts a new index entry in the leaf.
                out.push(Step::Modify {
                    block: ix.leaf(k),
                    wal_bytes: self.index_insert_wal,
                });
            }
        }
    }

    /// An appended row: its heap page (a new one every `rows_per_page`)
    /// and its index leaf.
    fn insert_steps(&mut self, table: usize, wal: u32, out: &mut Vec<Step>) {
        let t = &mut self.tables[table];
        let n = t.appended;
        let (block, new_page) = t.append();
        if new_page {
            out.push(Step::Extend {
                block,
                wal_bytes: wal,
            });
        } else {
            out.push(Step::Modify {
                block,
                wal_bytes: wal,
            });
        }
        if let Some(ix) = &t.index {
            out.push(Step::Modify {
                block: ix.leaf(t.rows + n),
                wal_bytes: self.index_insert_wal,
            });
        }
    }
}

impl Workload for Script {
    fn name(&self) -> &str {
        &self.name
    }

    fn fresh_pages(&self) -> Option<FreshPages<'_>> {
        self.tables
            .iter()
            .filter(|t| t.updated.is_some())
            .map(|t| FreshPages {
                table: &t.name,
                pages: t.heap.blocks,
                updated: t.updated_pages,
            })
            .max_by_key(|f| f.pages - f.updated)
    }

    fn transaction_type(&self) -> &str {
        &self.transaction_type
    }

    fn data_blocks(&self) -> u64 {
        self.total_blocks
    }

    fn full_page_image_bytes(&self) -> u32 {
        self.fpi_bytes
    }

    fn checkpoint_record_bytes(&self) -> u32 {
        self.checkpoint_record_bytes
    }

    fn round_trip(&self) -> Nanos {
        self.round_trip
    }

    fn read_cpu(&self) -> Nanos {
        self.read_cpu
    }

    fn write_cpu(&self) -> Nanos {
        self.write_cpu
    }

    fn reclaim_cpu(&self) -> ReclaimCpu {
        self.reclaim_cpu
    }

    fn wal_flush_cpu(&self) -> Nanos {
        self.wal_flush_cpu
    }

    fn process_wakeup(&self) -> Nanos {
        self.process_wakeup
    }

    fn client_cpu(&self) -> Nanos {
        self.client_cpu
    }

    fn cpu_growth(&self) -> CpuGrowth {
        self.cpu_growth
    }

    fn cpu_crowding(&self) -> Vec<(f64, f64)> {
        self.cpu_crowding.clone()
    }

    /// `pgbench -i` loads every table, vacuums them, then builds each
    /// primary key: it scans the heap, sorts it and writes the index's
    /// leaves in order, then each level above them up to the root. The
    /// indexes are built smallest first (pgbench_branches,
    /// pgbench_tellers, pgbench_accounts). Every page read or written goes
    /// through the kernel's page cache and stays there until reclaimed, so
    /// the cache ends up holding, newest last: the heaps without an index
    /// (last read by the vacuum), then each indexed table's heap (read by
    /// its index build) and its index, upper levels last. Where the cache
    /// is smaller than that, the newest pages are the ones kept: the large
    /// table's index and the end of its heap. (The sort's temporary files
    /// are deleted when the build ends, freeing their pages.)
    fn written_at_load(&self) -> Vec<(u64, u64)> {
        let mut runs: Vec<(u64, u64)> = self
            .tables
            .iter()
            .filter(|t| t.index.is_none() && t.heap.blocks > 0)
            .map(|t| (t.heap.first, t.heap.blocks))
            .collect();
        let mut indexed: Vec<&Table> = self.tables.iter().filter(|t| t.index.is_some()).collect();
        indexed.sort_by_key(|t| t.index.as_ref().map_or(0, Btree::blocks));
        for t in indexed {
            if t.heap.blocks > 0 {
                runs.push((t.heap.first, t.heap.blocks));
            }
            for level in t.index.iter().flat_map(|b| b.levels.iter().rev()) {
                runs.push((level.first, level.blocks));
            }
        }
        runs
    }

    fn use_client_threads(&mut self) {
        if !self.client_cpu_in_statements {
            return;
        }
        for tx in &mut self.txs {
            for (cpu, _) in &mut tx.statements {
                *cpu -= self.client_cpu;
            }
        }
        self.client_cpu_in_statements = false;
    }

    fn next_transaction(&mut self, rng: &mut SimRng, out: &mut Vec<Step>) {
        out.clear();
        let ti = self.choose(rng);
        self.keys.clear();
        for (_, sampler) in &self.txs[ti].keys {
            self.keys.push(sampler.sample(rng));
        }
        let count = self.txs[ti].statements.len();
        for i in 0..count {
            let (cpu, stmt) = self.txs[ti].statements[i];
            out.push(Step::RoundTrip);
            // The last statement commits: part of its CPU comes after the
            // commit record is durable (see COMMIT_CPU_AFTER_FLUSH).
            let cpu = if i + 1 == count {
                cpu - Self::after_commit(cpu)
            } else {
                cpu
            };
            out.push(Step::Cpu(cpu));
            if let Some(stmt) = stmt {
                self.statement_steps(stmt, rng, out);
            }
        }
        let tx = &self.txs[ti];
        out.push(Step::Commit {
            wal_bytes: tx.commit_wal,
        });
        let after = tx
            .statements
            .last()
            .map_or(0, |(cpu, _)| Self::after_commit(*cpu));
        if after > 0 {
            out.push(Step::Cpu(after));
        }
        self.speculate(rng);
    }

    fn describe(&self) -> serde_json::Value {
        self.described.clone()
    }

    fn tables(&self) -> Vec<TableHeap> {
        self.tables
            .iter()
            .map(|t| TableHeap {
                name: t.name.clone(),
                first: t.heap.first,
                pages: t.heap.blocks,
                rows: t.rows,
            })
            .collect()
    }
}
