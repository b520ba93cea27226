//! The checkpointer's decisions (checkpointer.c, `BufferSync` in bufmgr.c):
//! when a checkpoint starts, which buffers it writes in what order, and
//! whether it is ahead of schedule (and so sleeps) after each write.

use super::buffer_pool::{BufId, BufferPool};
use super::io::WAL_SEGMENT_BYTES;
use super::time::{MS, Nanos, SEC};
use super::wal::Lsn;

/// How many buffers ahead of the write the checkpointer's page-table
/// lookups are prefetched.
const PREFETCH_AHEAD: usize = 8;

/// Why a checkpoint started.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trigger {
    /// checkpoint_timeout elapsed.
    Timed,
    /// WAL since the last checkpoint reached the max_wal_size share.
    Wal,
}

/// `CheckpointWriteDelay` sleeps this long when ahead of schedule.
pub const WRITE_DELAY: Nanos = 100 * MS;

/// Where the checkpointer is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the next trigger.
    Idle,
    /// Writing the buffers dirty at the start, in block order.
    Writing,
    /// fsync of the data file.
    Syncing,
    /// Flushing the checkpoint record.
    Finishing,
}

/// Checkpoint scheduling.
#[derive(Debug)]
pub struct Checkpointer {
    timeout: Nanos,
    completion_target: f64,
    wal_trigger_bytes: u64,
    phase: Phase,
    last_start: Nanos,
    redo: Lsn,
    /// Blocks dirty at the start, sorted.
    list: Vec<u32>,
    next: usize,
}

impl Checkpointer {
    /// From checkpoint_timeout, checkpoint_completion_target and
    /// CheckPointSegments (WAL segments between checkpoints).
    pub fn new(timeout: Nanos, completion_target: f64, checkpoint_segments: u64) -> Self {
        Checkpointer {
            timeout: timeout.max(SEC),
            completion_target,
            wal_trigger_bytes: checkpoint_segments.max(1) * WAL_SEGMENT_BYTES,
            phase: Phase::Idle,
            last_start: 0,
            redo: 0,
            list: Vec::new(),
            next: 0,
        }
    }

    /// Current phase.
    pub fn phase(&self) -> &Phase {
        &self.phase
    }

    /// Redo pointer of the latest checkpoint: a page whose LSN is at or
    /// below it gets a full-page image on its next change.
    pub fn redo(&self) -> Lsn {
        self.redo
    }

    /// When the next timed checkpoint is due.
    pub fn next_timed(&self) -> Nanos {
        self.last_start + self.timeout
    }

    /// Should a checkpoint start now? (`CheckpointerMain` timeout, and
    /// `XLogWrite`'s `XLogCheckpointNeeded` at segment switches.)
    pub fn due(&self, now: Nanos, insert: Lsn) -> Option<Trigger> {
        if self.phase != Phase::Idle {
            return None;
        }
        if now >= self.next_timed() {
            Some(Trigger::Timed)
        } else if insert.saturating_sub(self.redo) >= self.wal_trigger_bytes {
            Some(Trigger::Wal)
        } else {
            None
        }
    }

    /// Start a checkpoint at `now` with redo pointer `redo`: every buffer
    /// dirty now is flagged and queued, sorted by block.
    pub fn start(&mut self, now: Nanos, redo: Lsn, pool: &mut BufferPool) {
        assert_eq!(self.phase, Phase::Idle);
        self.phase = Phase::Writing;
        self.last_start = now;
        self.redo = redo;
        self.list = pool.mark_checkpoint();
        self.next = 0;
    }

    /// Buffers queued at the start of this checkpoint.
    pub fn to_write(&self) -> usize {
        self.list.len()
    }

    /// The next buffer to write, skipping those someone else already cleaned
    /// or that are being written right now. None when the write phase is over
    /// (the phase moves to Syncing).
    pub fn next_write(&mut self, pool: &BufferPool) -> Option<BufId> {
        while self.next < self.list.len() {
            // Blocks come in file order but their page-table slots and
            // buffers are scattered: fetch the slot two strides ahead, and
            // the buffer one stride ahead (its slot is cached by then).
            if let Some(&ahead) = self.list.get(self.next + 2 * PREFETCH_AHEAD) {
                pool.prefetch(ahead as u64);
            }
            if let Some(&ahead) = self.list.get(self.next + PREFETCH_AHEAD) {
                let _ = pool.prefetch_buffer(ahead as u64);
            }
            let block = self.list[self.next];
            self.next += 1;
            if let Some(b) = pool.checkpoint_buffer(block)
                && pool.can_write(b)
            {
                return Some(b);
            }
        }
        self.phase = Phase::Syncing;
        None
    }

    /// `IsCheckpointOnSchedule`: after processing `next` of the list, is the
    /// checkpoint ahead of both the time and the WAL schedule? If so the
    /// checkpointer sleeps `WRITE_DELAY` before the next write.
    pub fn on_schedule(&self, now: Nanos, insert: Lsn) -> bool {
        if self.list.is_empty() {
            return true;
        }
        let progress = self.next as f64 / self.list.len() as f64 * self.completion_target;
        let elapsed_wal = insert.saturating_sub(self.redo) as f64 / self.wal_trigger_bytes as f64;
        let elapsed_time = now.saturating_sub(self.last_start) as f64 / self.timeout as f64;
        progress >= elapsed_wal && progress >= elapsed_time
    }

    /// The data file fsync finished; the checkpoint record comes next.
    pub fn synced(&mut self) {
        assert_eq!(self.phase, Phase::Syncing);
        self.phase = Phase::Finishing;
    }

    /// The checkpoint record is durable: the checkpoint is complete.
    pub fn finished(&mut self) {
        assert_eq!(self.phase, Phase::Finishing);
        self.phase = Phase::Idle;
        self.list = Vec::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::buffer_pool::Lookup;

    fn pool_with_dirty(blocks: &[u64], dirty: &[u64]) -> BufferPool {
        let mut p = BufferPool::new(blocks.len() as u32 + 2);
        for &blk in blocks {
            let b = p.clock_sweep().unwrap();
            p.assign(b, blk);
            p.read_done(b);
            if dirty.contains(&blk) {
                p.mark_dirty(b, 10);
            }
            p.unpin(b);
        }
        p
    }

    #[test]
    fn triggers_on_timeout_and_on_wal() {
        let c = Checkpointer::new(300 * SEC, 0.9, 33);
        assert_eq!(c.due(299 * SEC, 0), None);
        assert_eq!(c.due(300 * SEC, 0), Some(Trigger::Timed));
        assert_eq!(c.due(SEC, 33 * WAL_SEGMENT_BYTES), Some(Trigger::Wal));
        assert_eq!(c.due(SEC, 33 * WAL_SEGMENT_BYTES - 1), None);
    }

    #[test]
    fn writes_every_buffer_dirty_at_start_in_block_order_and_not_later_ones() {
        let mut p = pool_with_dirty(&[50, 10, 30, 20], &[50, 10, 30]);
        let mut c = Checkpointer::new(300 * SEC, 0.9, 33);
        c.start(0, 0, &mut p);
        // Dirtied after the start: not part of this checkpoint.
        let Lookup::Hit(b20) = p.lookup(20) else {
            panic!()
        };
        p.mark_dirty(b20, 11);
        p.unpin(b20);
        let mut written = Vec::new();
        while let Some(b) = c.next_write(&p) {
            let (blk, _) = p.start_write(b);
            p.write_done(b);
            written.push(blk);
        }
        assert_eq!(written, vec![10, 30, 50]);
        assert_eq!(c.phase(), &Phase::Syncing);
        c.synced();
        c.finished();
        assert_eq!(c.due(1, 0), None);
        assert_eq!(c.next_timed(), 300 * SEC);
    }

    #[test]
    fn skips_buffers_already_cleaned() {
        let mut p = pool_with_dirty(&[1, 2], &[1, 2]);
        let mut c = Checkpointer::new(300 * SEC, 0.9, 33);
        c.start(0, 0, &mut p);
        // Someone else writes block 1 first.
        let Lookup::Hit(b1) = p.lookup(1) else {
            panic!()
        };
        p.unpin(b1);
        p.start_write(b1);
        p.write_done(b1);
        let b = c.next_write(&p).unwrap();
        assert_eq!(p.block(b), Some(2));
        assert_eq!(c.next_write(&p), None);
    }

    #[test]
    fn schedule_paces_to_completion_target() {
        let mut p = pool_with_dirty(&[1, 2, 3, 4], &[1, 2, 3, 4]);
        let mut c = Checkpointer::new(100 * SEC, 0.5, 1000);
        c.start(0, 0, &mut p);
        c.next_write(&p).unwrap();
        // 1/4 done × 0.5 = 0.125 of the interval: ahead at 10 s, behind at 20 s.
        assert!(c.on_schedule(10 * SEC, 0));
        assert!(!c.on_schedule(20 * SEC, 0));
        // WAL schedule counts too.
        assert!(!c.on_schedule(SEC, 200 * WAL_SEGMENT_BYTES));
    }
}
