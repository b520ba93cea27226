//! The checkpointer process: it sleeps until a checkpoint is due (by
//! checkpoint_timeout or by WAL volume), writes the dirty buffers in the
//! order and at the pace `core::checkpointer` sets, each after the WAL
//! covering it is durable, syncs the data files and logs the checkpoint
//! record. In recovery the same steps make a restartpoint.

use super::*;
use crate::core::thinned::Thinned;

/// What the checkpointer process is doing between events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CkptWait {
    /// Asleep until a timer (idle, or paced between writes).
    Sleeping,
    /// Waiting for WAL to be flushed before writing a buffer.
    WalFlush { buf: BufId, block: u64 },
    /// A write or the data-file sync is in flight.
    Io,
    /// Waiting for the checkpoint record to be durable.
    Record,
}

/// The checkpointer process's state.
pub(super) struct CheckpointerProc {
    /// When checkpoints are due and the buffers the one in progress writes.
    pub(super) policy: Checkpointer,
    /// What it is doing between events.
    pub(super) wait: CkptWait,
    /// Its wake-up timers' generation: a timer of an older one is stale.
    pub(super) generation: u64,
    /// Checkpoints so far, for reports: bounded, as a run of
    /// max_wal_size=2MB for pgbench's longest -T would start billions.
    pub(super) events: Thinned<CheckpointEvent>,
    /// Its pending writeback (checkpoint_flush_after).
    pub(super) writeback: WritebackContext,
}

impl CheckpointerProc {
    /// Asleep, right after a checkpoint at time 0.
    pub(super) fn new(cfg: &CoreConfig) -> CheckpointerProc {
        CheckpointerProc {
            policy: Checkpointer::new(
                cfg.checkpoint_timeout,
                cfg.checkpoint_completion_target,
                cfg.checkpoint_segments,
            ),
            wait: CkptWait::Sleeping,
            generation: 0,
            events: Thinned::default(),
            writeback: WritebackContext::new(Writer::Checkpointer, cfg.checkpoint_flush_after),
        }
    }
}

/// One checkpoint, for reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CheckpointEvent {
    /// When it started and (if it did) finished.
    pub start: Nanos,
    pub end: Option<Nanos>,
    /// Timed or requested by WAL volume.
    pub trigger: Trigger,
    /// Buffers dirty at its start.
    pub buffers: u64,
}

impl Database {
    /// Its wake-up timer of `generation` fired: it acts unless a newer
    /// timer replaced that one or it waits for something else.
    pub(super) fn checkpointer_wake(&mut self, now: Nanos, generation: u64) {
        if generation == self.checkpointer.generation
            && self.checkpointer.wait == CkptWait::Sleeping
        {
            self.checkpointer_step(now);
        }
    }

    /// A checkpoint is due and the checkpointer, idle and asleep, has not
    /// started it: WAL volume reached its trigger between its wake-ups.
    pub(super) fn checkpoint_due(&self, now: Nanos) -> bool {
        self.checkpointer.wait == CkptWait::Sleeping
            && self.checkpointer.policy.phase() == &Phase::Idle
            && self.checkpointer.policy.due(now, self.ckpt_lsn()).is_some()
    }

    /// The checkpointer is free to act at `now`.
    pub(super) fn checkpointer_step(&mut self, now: Nanos) {
        if self.checkpointer.policy.phase() == &Phase::Idle {
            let Some(trigger) = self.checkpointer.policy.due(now, self.ckpt_lsn()) else {
                self.checkpointer.generation += 1;
                self.set_timer(
                    self.checkpointer.policy.next_timed(),
                    Timer::Checkpointer(self.checkpointer.generation),
                );
                return;
            };
            // The redo point is the current insert position; every page
            // changed after it gets a full-page image on its first change.
            let redo = self.ckpt_lsn();
            self.touched.clear();
            self.checkpointer.policy.start(now, redo, &mut self.pool);
            let counters = &mut self.stats.counters;
            counters.checkpoints_started += 1;
            match trigger {
                Trigger::Timed => counters.checkpoints_timed += 1,
                Trigger::Wal => counters.checkpoints_requested += 1,
            }
            self.stats.second(now).checkpoint_starts += 1;
            self.checkpointer.events.push(CheckpointEvent {
                start: now,
                end: None,
                trigger,
                buffers: self.checkpointer.policy.to_write() as u64,
            });
        }
        if self.checkpointer.policy.phase() != &Phase::Writing {
            return;
        }
        match self.checkpointer.policy.next_write(&self.pool) {
            Some(buf) => {
                let (block, lsn) = self.pool.start_write(buf);
                if self.flush_for_write(now, lsn, Waiter::Checkpointer) {
                    self.checkpoint_write(now, buf, block);
                } else {
                    self.checkpointer.wait = CkptWait::WalFlush { buf, block };
                }
            }
            None => {
                self.checkpointer.wait = CkptWait::Io;
                self.stats.counters.data_syncs += 1;
                self.issue(IoKind::DataSync, Purpose::DataSync, now);
            }
        }
    }

    /// The WAL position checkpoints are measured by: the insert position,
    /// or in recovery the replay position (a restartpoint is due after
    /// max_wal_size's share of replayed WAL, as CheckPointSegments counts
    /// it, or after checkpoint_timeout).
    pub(super) fn ckpt_lsn(&self) -> Lsn {
        match &self.recovery {
            Some(r) => r.replayed(),
            None => self.wal.insert_lsn(),
        }
    }

    pub(super) fn checkpoint_done(&mut self, now: Nanos) {
        self.checkpointer.policy.finished();
        self.checkpointer.wait = CkptWait::Sleeping;
        self.stats.counters.checkpoints_done += 1;
        self.stats.second(now).checkpoint_ends += 1;
        if let Some(e) = self.checkpointer.events.last_mut() {
            e.end = Some(now);
        }
        self.checkpointer_step(now);
    }

    /// The checkpoint's write of `buf` (`block`) is done: it sleeps until the
    /// next write is due on its schedule, or writes on if behind.
    pub(super) fn checkpoint_write_done(&mut self, now: Nanos, buf: BufId, block: u64) {
        self.pool.write_done(buf);
        self.os_cache.write(block);
        self.writer_cpu(now, Background::Checkpointer);
        self.stats.counters.checkpoint_writes += 1;
        self.checkpointer.wait = CkptWait::Sleeping;
        if self.checkpointer.policy.on_schedule(now, self.ckpt_lsn()) {
            self.checkpointer.generation += 1;
            self.set_timer(
                now + WRITE_DELAY,
                Timer::Checkpointer(self.checkpointer.generation),
            );
        } else {
            self.checkpointer_step(now);
        }
    }

    /// The data files are synced: it logs the checkpoint record and waits
    /// for it to be durable.
    pub(super) fn checkpoint_synced(&mut self, now: Nanos) {
        self.checkpointer.policy.synced();
        let lsn = self
            .wal
            .insert(self.workload.checkpoint_record_bytes() as u64);
        self.checkpointer.wait = CkptWait::Record;
        if self.wal.wait_for_flush(lsn, Waiter::Checkpointer) {
            self.checkpoint_done(now);
        }
    }

    /// Write `buf` (`block`), whose WAL is durable; it waits for the write.
    fn checkpoint_write(&mut self, now: Nanos, buf: BufId, block: u64) {
        self.checkpointer.wait = CkptWait::Io;
        let kind = self.checkpointer.writeback.write_page(block);
        self.issue(kind, Purpose::CheckpointWrite { buf, block }, now);
    }

    /// The WAL it waited for is durable: the write it held back goes out,
    /// or the checkpoint record is safe and the checkpoint is done.
    pub(super) fn checkpointer_flushed(&mut self, now: Nanos) {
        match self.checkpointer.wait {
            CkptWait::WalFlush { buf, block } => self.checkpoint_write(now, buf, block),
            CkptWait::Record => self.checkpoint_done(now),
            other => panic!("checkpointer woken by WAL flush while {other:?}"),
        }
    }
}
