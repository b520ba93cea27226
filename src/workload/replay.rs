//! A workload's WAL as a standby's startup process replays it: each
//! transaction the primary ran becomes its records, in order, each read
//! from the WAL and applied to its page (`pgiosim catchup`).
//!
//! What replay does with a record (PostgreSQL 15, xlogutils.c
//! `XLogReadBufferForRedoExtended`, xlogrecovery.c `ApplyWalRecord`):
//! * it reads the record's bytes from the WAL ([`Step::ReadWal`]);
//! * a block whose record carries a full-page image is restored from it
//!   without being read (`RestoreBlockImage`): the first change of a page
//!   after a checkpoint *of the primary*, whose checkpoints lie in the
//!   backlog every `checkpoint_every` bytes of WAL;
//! * any other block is read into shared buffers if it is not there, and
//!   changed;
//! * the redo routine's CPU, more for a full-page image;
//! * commit records change no data page; reads, row locks and client round
//!   trips of the primary's transactions leave no WAL and are not replayed.
//!
//! With recovery_prefetch on, the records up to `lookahead_bytes`
//! (wal_decode_buffer_size) beyond the one being replayed are decoded
//! ahead, and their blocks that need a read become [`Step::Prefetch`]es.

use std::collections::VecDeque;

use crate::core::SimRng;
use crate::core::block_set::BlockSet;
use crate::core::cpu_growth::CpuGrowth;
use crate::core::time::Nanos;
use crate::core::workload::{Step, TableHeap, Workload};

/// Transactions decoded ahead in one call at most.
const MAX_DECODED_A_CALL: usize = 4096;

/// How the backlog was written and how the standby replays it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReplayShape {
    /// The startup process's CPU for one record.
    pub record_cpu: Nanos,
    /// Its CPU for restoring a full-page image, on top.
    pub fpi_cpu: Nanos,
    /// WAL between the primary's checkpoints in the backlog, bytes.
    pub checkpoint_every: u64,
    /// The primary's full_page_writes.
    pub full_page_writes: bool,
    /// WAL decoded ahead for recovery_prefetch, bytes (0: no prefetch).
    pub lookahead_bytes: u64,
}

/// What was replayed, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ReplayCounts {
    pub transactions: u64,
    pub records: u64,
    pub full_page_images: u64,
    /// The primary's checkpoint records replayed.
    pub checkpoints: u64,
    /// WAL bytes of the records handed to the replay.
    pub wal_bytes: u64,
}

/// One transaction's records, decoded ahead.
struct Decoded {
    steps: Vec<Step>,
    /// Blocks its records change that need a read (no full-page image).
    reads: Vec<u64>,
    counts: ReplayCounts,
}

/// The workload `inner`'s transactions as replay.
pub struct Replay {
    inner: Box<dyn Workload>,
    shape: ReplayShape,
    fpi_bytes: u32,
    checkpoint_bytes: u32,
    /// Blocks changed since the primary's last checkpoint in the backlog.
    touched: BlockSet,
    since_checkpoint: u64,
    ahead: VecDeque<Decoded>,
    ahead_bytes: u64,
    scratch: Vec<Step>,
    counts: ReplayCounts,
}

impl Replay {
    /// Replay of `inner`'s WAL, shaped by `shape`.
    pub fn new(inner: Box<dyn Workload>, shape: ReplayShape) -> Replay {
        assert!(shape.checkpoint_every > 0, "a checkpoint distance");
        Replay {
            fpi_bytes: inner.full_page_image_bytes(),
            checkpoint_bytes: inner.checkpoint_record_bytes(),
            touched: BlockSet::new(inner.data_blocks()),
            inner,
            shape,
            since_checkpoint: 0,
            ahead: VecDeque::new(),
            ahead_bytes: 0,
            scratch: Vec::new(),
            counts: ReplayCounts::default(),
        }
    }

    /// What has been handed to the replay so far.
    pub fn counts(&self) -> ReplayCounts {
        self.counts
    }

    /// Decode the primary's next transaction into records.
    fn decode(&mut self, rng: &mut SimRng) -> Decoded {
        let mut primary = std::mem::take(&mut self.scratch);
        self.inner.next_transaction(rng, &mut primary);
        let mut d = Decoded {
            steps: Vec::with_capacity(primary.len() * 2),
            reads: Vec::new(),
            counts: ReplayCounts {
                transactions: 1,
                ..ReplayCounts::default()
            },
        };
        for &step in &primary {
            if let Some((bytes, page, cpu)) = self.replayed(step, &mut d) {
                self.push_record(&mut d, bytes, page, cpu);
            }
        }
        self.scratch = primary;
        d
    }

    /// What the primary's `step` replays as: its record's WAL bytes, the
    /// page it changes (an Extend when a full-page image restores it, so
    /// nothing is read) and the startup process's CPU for it; None for a
    /// step that logs nothing.
    fn replayed(&mut self, step: Step, d: &mut Decoded) -> Option<(u32, Option<Step>, Nanos)> {
        let s = self.shape;
        Some(match step {
            Step::Modify { block, wal_bytes } => {
                let fpi = self.touched.insert(block) && s.full_page_writes;
                if fpi {
                    d.counts.full_page_images += 1;
                    (
                        wal_bytes + self.fpi_bytes,
                        Some(Step::Extend {
                            block,
                            wal_bytes: 0,
                        }),
                        s.record_cpu + s.fpi_cpu,
                    )
                } else {
                    d.reads.push(block);
                    (
                        wal_bytes,
                        Some(Step::Modify {
                            block,
                            wal_bytes: 0,
                        }),
                        s.record_cpu,
                    )
                }
            }
            Step::Extend { block, wal_bytes } => {
                // A new page is initialised by its record: no read.
                self.touched.insert(block);
                (
                    wal_bytes,
                    Some(Step::Extend {
                        block,
                        wal_bytes: 0,
                    }),
                    s.record_cpu,
                )
            }
            Step::Commit { wal_bytes } => (wal_bytes, None, s.record_cpu),
            Step::RoundTrip
            | Step::Cpu(_)
            | Step::Read(_)
            | Step::Lock(_)
            | Step::ReadWal { .. }
            | Step::Prefetch(_) => return None,
        })
    }

    /// Adds one record of `bytes` to `d`: its WAL read, its `page` and its
    /// `cpu`, then the primary's checkpoint record once a checkpoint's
    /// worth of WAL has passed.
    fn push_record(&mut self, d: &mut Decoded, bytes: u32, page: Option<Step>, cpu: Nanos) {
        if bytes > 0 {
            d.steps.push(Step::ReadWal { bytes });
            d.counts.records += 1;
            d.counts.wal_bytes += u64::from(bytes);
            self.since_checkpoint += u64::from(bytes);
        }
        if let Some(p) = page {
            d.steps.push(p);
        }
        if bytes > 0 && cpu > 0 {
            d.steps.push(Step::Cpu(cpu));
        }
        if self.since_checkpoint >= self.shape.checkpoint_every {
            // The primary's checkpoint: every page's next change after
            // it carries a full-page image.
            self.touched.clear();
            self.since_checkpoint = 0;
            d.steps.push(Step::ReadWal {
                bytes: self.checkpoint_bytes,
            });
            d.counts.records += 1;
            d.counts.checkpoints += 1;
            d.counts.wal_bytes += u64::from(self.checkpoint_bytes);
        }
    }
}

impl Workload for Replay {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn transaction_type(&self) -> &str {
        self.inner.transaction_type()
    }
    fn data_blocks(&self) -> u64 {
        self.inner.data_blocks()
    }
    fn full_page_image_bytes(&self) -> u32 {
        self.fpi_bytes
    }
    fn checkpoint_record_bytes(&self) -> u32 {
        self.checkpoint_bytes
    }
    /// Replay has no client.
    fn round_trip(&self) -> Nanos {
        0
    }
    fn read_cpu(&self) -> Nanos {
        self.inner.read_cpu()
    }
    fn write_cpu(&self) -> Nanos {
        self.inner.write_cpu()
    }
    fn reclaim_cpu(&self) -> crate::core::config::ReclaimCpu {
        self.inner.reclaim_cpu()
    }
    fn client_cpu(&self) -> Nanos {
        0
    }
    fn wal_flush_cpu(&self) -> Nanos {
        self.inner.wal_flush_cpu()
    }
    fn process_wakeup(&self) -> Nanos {
        self.inner.process_wakeup()
    }
    /// One process replays: nothing grows with backends.
    fn cpu_growth(&self) -> CpuGrowth {
        CpuGrowth::default()
    }
    fn use_client_threads(&mut self) {}
    fn written_at_load(&self) -> Vec<(u64, u64)> {
        self.inner.written_at_load()
    }
    fn next_transaction(&mut self, rng: &mut SimRng, out: &mut Vec<Step>) {
        out.clear();
        if self.ahead.is_empty() {
            let d = self.decode(rng);
            self.ahead_bytes += d.counts.wal_bytes;
            self.ahead.push_back(d);
        }
        let d = self.ahead.pop_front().expect("decoded");
        self.ahead_bytes -= d.counts.wal_bytes;
        // The prefetcher decodes up to lookahead_bytes past the replay:
        // the transactions entering that window are asked for now.
        // (A bounded number a call: transactions that write no WAL do
        // not fill the window.)
        let mut decoded = 0;
        while self.shape.lookahead_bytes > 0
            && self.ahead_bytes < self.shape.lookahead_bytes
            && decoded < MAX_DECODED_A_CALL
        {
            decoded += 1;
            let next = self.decode(rng);
            out.extend(next.reads.iter().map(|&b| Step::Prefetch(b)));
            self.ahead_bytes += next.counts.wal_bytes;
            self.ahead.push_back(next);
        }
        out.extend_from_slice(&d.steps);
        let c = &mut self.counts;
        c.transactions += 1;
        c.records += d.counts.records;
        c.full_page_images += d.counts.full_page_images;
        c.checkpoints += d.counts.checkpoints;
        c.wal_bytes += d.counts.wal_bytes;
    }
    fn describe(&self) -> serde_json::Value {
        let mut v = self.inner.describe();
        if let Some(o) = v.as_object_mut() {
            o.insert(
                "replayed".into(),
                serde_json::to_value(self.counts).unwrap_or_default(),
            );
        }
        v
    }
    fn tables(&self) -> Vec<TableHeap> {
        self.inner.tables()
    }
}
