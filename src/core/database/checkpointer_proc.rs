//! The checkpointer process: it sleeps until a checkpoint is due (by
//! checkpoint_timeout or by WAL volume), writes the dirty buffers in the
//! order and at the pace `core::checkpointer` sets, each after the WAL
//! covering it is durable, syncs the data files and logs the checkpoint
//! record. In recovery the same steps make a restartpoint.
//!
//! It owns its schedule, what it waits for, its wake-up generations, its
//! writeback and its list of checkpoints; the buffer pool is shared and
//! handed in, and the WAL position it measures by is given with each event.
//! It answers with its next step ([`CkptStep`]); the loop (`wakeups`)
//! flushes the WAL, issues its I/O and sets its timers.

use crate::core::bounded_events::BoundedEvents;
use crate::core::buffer_pool::{BufId, BufferPool};
use crate::core::checkpointer::{Checkpointer, Phase, Trigger, WRITE_DELAY};
use crate::core::config::CoreConfig;
use crate::core::io::IoKind;
use crate::core::time::Nanos;
use crate::core::wal::Lsn;
use crate::core::writeback::{WritebackContext, Writer};

/// What the checkpointer process is doing between events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CkptWait {
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
    policy: Checkpointer,
    /// What it is doing between events.
    wait: CkptWait,
    /// Its wake-up timers' generation: a timer of an older one is stale.
    generation: u64,
    /// Checkpoints so far, for reports: bounded, as a run of
    /// max_wal_size=2MB for pgbench's longest -T would start billions.
    events: BoundedEvents<CheckpointEvent>,
    /// Its pending writeback (checkpoint_flush_after).
    writeback: WritebackContext,
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

/// What the checkpointer does next, free to act.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CkptStep {
    /// Nothing is due: it sleeps until `at`, a wake-up of `generation`.
    Sleep { at: Nanos, generation: u64 },
    /// It started writing `buf` (`block`): the write goes out once the
    /// WAL is durable up to `lsn` (`write`), else it waits (`wait_for_wal`).
    Write { buf: BufId, block: u64, lsn: Lsn },
    /// Every buffer is written: the data files are synced.
    Sync,
    /// It waits for an I/O or the WAL: nothing to do.
    Wait,
}

/// What the WAL the checkpointer waited for lets it do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum CkptFlushed {
    /// Write the buffer it held back.
    Write { buf: BufId, block: u64 },
    /// The checkpoint record is durable: the checkpoint is done.
    Record,
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
            events: BoundedEvents::default(),
            writeback: WritebackContext::new(Writer::Checkpointer, cfg.checkpoint_flush_after),
        }
    }

    /// Its first wake-up: the first timed checkpoint, of generation 0.
    pub(super) fn first_wake(&self) -> (Nanos, u64) {
        (self.policy.next_timed(), self.generation)
    }

    /// Checkpoints so far (past `SERIES_MAX_POINTS`, evenly spaced ones:
    /// `BoundedEvents`).
    pub(super) fn events(&self) -> &[CheckpointEvent] {
        self.events.as_slice()
    }

    /// Its wake-up timer of `generation` fired: true if it acts (no newer
    /// timer replaced that one, and it waits for nothing else).
    pub(super) fn handle_wake(&self, generation: u64) -> bool {
        assert!(generation <= self.generation, "a wake-up from the future");
        generation == self.generation && self.wait == CkptWait::Sleeping
    }

    /// A checkpoint is due at `now` with the WAL at `lsn` and the
    /// checkpointer, idle and asleep, has not started it (WAL volume
    /// reached its trigger between its wake-ups).
    pub(super) fn is_due(&self, now: Nanos, lsn: Lsn) -> bool {
        self.wait == CkptWait::Sleeping
            && self.policy.phase() == &Phase::Idle
            && self.policy.due(now, lsn).is_some()
    }

    /// Free to act at `now`, the WAL at `lsn`: it starts a checkpoint if
    /// one is due (returned, for the loop to count; its redo point is
    /// `lsn`), and says what it does next.
    pub(super) fn handle_free(
        &mut self,
        now: Nanos,
        lsn: Lsn,
        pool: &mut BufferPool,
    ) -> (Option<Trigger>, CkptStep) {
        self.check();
        let mut started = None;
        if self.policy.phase() == &Phase::Idle {
            let Some(trigger) = self.policy.due(now, lsn) else {
                self.generation += 1;
                let at = self.policy.next_timed();
                return (
                    None,
                    CkptStep::Sleep {
                        at,
                        generation: self.generation,
                    },
                );
            };
            self.policy.start(now, lsn, pool);
            self.events.push(CheckpointEvent {
                start: now,
                end: None,
                trigger,
                buffers: self.policy.to_write() as u64,
            });
            started = Some(trigger);
        }
        if self.policy.phase() != &Phase::Writing {
            return (started, CkptStep::Wait);
        }
        let step = match self.policy.next_write(pool) {
            Some(buf) => {
                let (block, lsn) = pool.start_write(buf);
                CkptStep::Write { buf, block, lsn }
            }
            None => {
                self.wait = CkptWait::Io;
                CkptStep::Sync
            }
        };
        self.check();
        (started, step)
    }

    /// It waits for the WAL to be durable before writing `buf` (`block`).
    pub(super) fn wait_for_wal(&mut self, buf: BufId, block: u64) {
        self.wait = CkptWait::WalFlush { buf, block };
        self.check();
    }

    /// It writes `buf` (`block`), whose WAL is durable, and waits for the
    /// write: the request to issue.
    pub(super) fn write(&mut self, block: u64) -> IoKind {
        self.wait = CkptWait::Io;
        self.check();
        self.writeback.write_page(block)
    }

    /// Its write is done at `now`, the WAL at `lsn`: ahead of schedule it
    /// sleeps until the time returned, a wake-up of the generation
    /// returned; behind, it writes on (None: the loop hands it `handle_free`).
    pub(super) fn handle_write_done(&mut self, now: Nanos, lsn: Lsn) -> Option<(Nanos, u64)> {
        assert_eq!(self.wait, CkptWait::Io, "a write it did not issue");
        self.wait = CkptWait::Sleeping;
        if !self.policy.on_schedule(now, lsn) {
            return None;
        }
        self.generation += 1;
        Some((now + WRITE_DELAY, self.generation))
    }

    /// The data files are synced: it logs the checkpoint record (the loop
    /// inserts it) and waits for it to be durable.
    pub(super) fn handle_synced(&mut self) {
        assert_eq!(self.wait, CkptWait::Io, "a sync it did not issue");
        self.policy.synced();
        self.wait = CkptWait::Record;
        self.check();
    }

    /// The checkpoint record is durable at `now`: the checkpoint is done
    /// (the loop then hands it `handle_free`).
    pub(super) fn handle_record_flushed(&mut self, now: Nanos) {
        assert_eq!(self.wait, CkptWait::Record);
        self.policy.finished();
        self.wait = CkptWait::Sleeping;
        if let Some(e) = self.events.last_mut() {
            e.end = Some(now);
        }
        self.check();
    }

    /// The WAL it waited for is durable: what that lets it do.
    pub(super) fn handle_wal_flushed(&self) -> CkptFlushed {
        match self.wait {
            CkptWait::WalFlush { buf, block } => CkptFlushed::Write { buf, block },
            CkptWait::Record => CkptFlushed::Record,
            other => panic!("checkpointer woken by WAL flush while {other:?}"),
        }
    }

    /// Its invariants: what it waits for matches its checkpoint's phase.
    fn check(&self) {
        let phase = self.policy.phase();
        let ok = match self.wait {
            CkptWait::Sleeping => matches!(phase, Phase::Idle | Phase::Writing),
            CkptWait::WalFlush { .. } => phase == &Phase::Writing,
            CkptWait::Io => matches!(phase, Phase::Writing | Phase::Syncing),
            CkptWait::Record => phase == &Phase::Finishing,
        };
        assert!(ok, "checkpointer waits {:?} in {phase:?}", self.wait);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::test_support::config;
    use crate::core::time::SEC;

    /// A pool of `n` buffers holding blocks 0.., all dirty at LSN 10.
    fn dirty_pool(n: u32) -> BufferPool {
        crate::core::test_support::dirty_pool(n, |_| 10)
    }

    #[test]
    fn sleeps_until_timed_then_writes_syncs_and_logs_its_record() {
        let cfg = config(1, 4);
        let mut pool = dirty_pool(4);
        let mut c = CheckpointerProc::new(&cfg);
        let (first, g0) = c.first_wake();
        assert_eq!(first, cfg.checkpoint_timeout);
        // Too early: it sleeps, and the older wake-up is stale.
        let (started, step) = c.handle_free(SEC, 0, &mut pool);
        assert_eq!(started, None);
        assert_eq!(
            step,
            CkptStep::Sleep {
                at: first,
                generation: g0 + 1
            }
        );
        assert!(!c.handle_wake(g0));
        assert!(c.handle_wake(g0 + 1));
        // Due: it starts and writes the dirty buffers one by one.
        let (started, mut step) = c.handle_free(first, 100, &mut pool);
        assert_eq!(started, Some(Trigger::Timed));
        let mut written = 0;
        while let CkptStep::Write { buf, block, lsn } = step {
            assert_eq!(lsn, 10);
            c.wait_for_wal(buf, block);
            assert_eq!(c.handle_wal_flushed(), CkptFlushed::Write { buf, block });
            let _ = c.write(block);
            pool.write_done(buf);
            written += 1;
            // Far behind its schedule: it writes on at once.
            assert_eq!(c.handle_write_done(first + 100 * SEC, 1 << 40), None);
            step = c.handle_free(first + 100 * SEC, 1 << 40, &mut pool).1;
        }
        assert_eq!(written, 4);
        assert_eq!(step, CkptStep::Sync);
        c.handle_synced();
        assert_eq!(c.handle_wal_flushed(), CkptFlushed::Record);
        c.handle_record_flushed(first + 101 * SEC);
        assert_eq!(c.events().len(), 1);
        assert_eq!(c.events()[0].end, Some(first + 101 * SEC));
        assert_eq!(c.events()[0].buffers, 4);
    }

    #[test]
    fn ahead_of_schedule_it_sleeps_a_write_delay_of_a_new_generation() {
        let cfg = config(1, 4);
        let mut pool = dirty_pool(4);
        let mut c = CheckpointerProc::new(&cfg);
        let (first, _) = c.first_wake();
        let (_, step) = c.handle_free(first, 0, &mut pool);
        let CkptStep::Write { buf, block, .. } = step else {
            panic!("{step:?}")
        };
        let _ = c.write(block);
        pool.write_done(buf);
        let (at, generation) = c.handle_write_done(first, 0).expect("ahead");
        assert_eq!(at, first + WRITE_DELAY);
        assert!(c.handle_wake(generation));
    }
}
