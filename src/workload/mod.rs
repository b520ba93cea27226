//! Workloads: what a transaction does, as page accesses, row locks, WAL
//! records and CPU. The core executes the steps; the workload only decides
//! them, so the same workload runs against a real disk and a model.

pub mod pgbench;

use crate::core::SimRng;
use crate::core::locks::RowId;
use crate::core::time::Nanos;

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
}

/// A workload: the data layout and a generator of transactions.
pub trait Workload {
    /// Short name ("tpcb-like").
    fn name(&self) -> &str;
    /// Data blocks the data file must hold.
    fn data_blocks(&self) -> u64;
    /// Bytes of one full-page image.
    fn full_page_image_bytes(&self) -> u32;
    /// Bytes of a checkpoint record.
    fn checkpoint_record_bytes(&self) -> u32;
    /// Write the steps of the next transaction into `out` (cleared first).
    fn next_transaction(&mut self, rng: &mut SimRng, out: &mut Vec<Step>);
    /// The constants in use, with their sources, for reports.
    fn describe(&self) -> serde_json::Value;
}
