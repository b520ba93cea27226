//! The interface a workload offers the core: the data layout, the CPU and
//! round-trip figures the core's configuration takes, and a generator of
//! transactions as [`Step`]s. The core executes the steps; the workload
//! only decides them. It is defined here, with the core that consumes it,
//! so that the core depends on nothing outside it; `crate::workload`
//! implements it (its `Script` compiles the workload files).

use super::SimRng;
use super::cpu_growth::CpuGrowth;
use super::locks::RowId;
use super::time::Nanos;

/// One thing a transaction does, in order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// One client/server round trip (pgbench sends each statement on its own).
    RoundTrip,
    /// Compute, on a core.
    Cpu(Nanos),
    /// Access a data page without modifying it (pin, read on a miss).
    Read(u64),
    /// Access a data page and modify it with a WAL record of `wal_bytes`
    /// (plus a full-page image on its first change after a checkpoint).
    Modify { block: u64, wal_bytes: u32 },
    /// Add a new page at the end of a relation (no read) and write a record to it.
    Extend { block: u64, wal_bytes: u32 },
    /// Lock a row until commit.
    Lock(RowId),
    /// Write the commit record (`wal_bytes` with any records not tied to a
    /// page) and wait for it to be durable if synchronous_commit is on.
    Commit { wal_bytes: u32 },
    /// Recovery only: the startup process reads the next `bytes` of the WAL
    /// it replays (sequentially, through the kernel's readahead).
    ReadWal { bytes: u32 },
    /// Recovery only: a block a record ahead of the replay will need, for
    /// recovery_prefetch to ask the kernel for (`posix_fadvise(WILLNEED)`).
    Prefetch(u64),
}

/// A table loaded full whose pages are updated for the first time one by
/// one ([`Workload::fresh_pages`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FreshPages<'a> {
    pub table: &'a str,
    /// Its heap pages.
    pub pages: u64,
    /// Those updated at least once so far.
    pub updated: u64,
}

/// A workload: the data layout and a generator of transactions.
pub trait Workload {
    /// Short name ("tpcb-like", or a mix "tpcb-like@1,select-only@9").
    fn name(&self) -> &str;
    /// What pgbench prints as "transaction type".
    fn transaction_type(&self) -> &str;
    /// Data blocks the data file must hold.
    fn data_blocks(&self) -> u64;
    /// Bytes of one full-page image.
    fn full_page_image_bytes(&self) -> u32;
    /// Bytes of a checkpoint record.
    fn checkpoint_record_bytes(&self) -> u32;
    /// Client round trip per statement.
    fn round_trip(&self) -> Nanos;
    /// CPU a backend spends on each data-file read it waits for.
    fn read_cpu(&self) -> Nanos;
    /// CPU a process spends on each data-file write.
    fn write_cpu(&self) -> Nanos;
    /// The I/O path's CPU once the page cache is full (none by default).
    fn reclaim_cpu(&self) -> crate::core::config::ReclaimCpu {
        crate::core::config::ReclaimCpu::default()
    }
    /// The client's CPU per statement.
    fn client_cpu(&self) -> Nanos;
    /// The CPU of one WAL flush (the flusher's write and fdatasync calls).
    fn wal_flush_cpu(&self) -> Nanos;
    /// How long a process sleeping on its latch takes to run once woken.
    fn process_wakeup(&self) -> Nanos;
    /// How a backend's CPU grows with the backends sharing the cores.
    fn cpu_growth(&self) -> CpuGrowth;
    /// How a statement's CPU grows with the backends per logical CPU
    /// (`CoreConfig::cpu_crowding`; none by default).
    fn cpu_crowding(&self) -> Vec<(f64, f64)> {
        Vec::new()
    }
    /// The run models the client's threads, which spend `client_cpu`: it is
    /// no longer part of each statement's CPU.
    fn use_client_threads(&mut self);
    /// The data blocks loading the data set writes last, as (first block,
    /// blocks) runs in the order they are written: what the kernel's page
    /// cache holds right after the load, the most recent last.
    fn written_at_load(&self) -> Vec<(u64, u64)> {
        Vec::new()
    }
    /// The table with the most pages not yet updated since the load, of
    /// those loaded full (fillfactor 100): each page's first update moves
    /// its row to another page, so the rate changes until most are done.
    fn fresh_pages(&self) -> Option<FreshPages<'_>> {
        None
    }
    /// Write the steps of the next transaction into `out` (cleared first).
    fn next_transaction(&mut self, rng: &mut SimRng, out: &mut Vec<Step>);
    /// The workload and where its numbers come from, for reports.
    fn describe(&self) -> serde_json::Value;
    /// Each table's heap: name, first block, pages, rows (for vacuum).
    fn tables(&self) -> Vec<TableHeap>;
}

/// Where a table's heap lies, for vacuum and dead-tuple accounting.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TableHeap {
    pub name: String,
    pub first: u64,
    pub pages: u64,
    pub rows: u64,
}
