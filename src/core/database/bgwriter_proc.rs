//! The background writer process: every bgwriter_delay it estimates the
//! buffers backends will soon need (`core::bgwriter`, BgBufferSync) and
//! writes the dirty ones among them, one at a time, each after the WAL
//! covering it is durable.
//!
//! It owns its round and its writeback; the buffer pool is shared and
//! handed in. It is told when it wakes, when its write is done and when the
//! WAL it waits for is durable, and answers with the write it starts next;
//! the loop (`wakeups`) flushes the WAL for it and issues the write.

use crate::core::bgwriter::BgWriter;
use crate::core::buffer_pool::{BufId, BufferPool};
use crate::core::config::CoreConfig;
use crate::core::io::IoKind;
use crate::core::time::{MS, Nanos};
use crate::core::wal::Lsn;
use crate::core::writeback::{WritebackContext, Writer};

/// The background writer process's state.
pub(super) struct BgWriterProc {
    /// How many buffers a round cleans, from the recent allocations.
    policy: BgWriter,
    /// bgwriter_delay: its sleep between rounds.
    delay: Nanos,
    /// The round's buffers still to write, the next one last.
    queue: Vec<BufId>,
    /// A round is under way (its writes go one after the other).
    busy: bool,
    /// The buffer and block it holds back until the WAL is durable.
    flush_wait: Option<(BufId, u64)>,
    /// The buffer whose write is in flight.
    writing: Option<BufId>,
    /// Its pending writeback (bgwriter_flush_after).
    writeback: WritebackContext,
}

/// A write the background writer starts: `buf` holds `block`, and the WAL
/// must be durable up to `lsn` before the write goes out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct BgWrite {
    pub(super) buf: BufId,
    pub(super) block: u64,
    pub(super) lsn: Lsn,
}

impl BgWriterProc {
    /// Asleep, with no round planned.
    pub(super) fn new(cfg: &CoreConfig) -> BgWriterProc {
        BgWriterProc {
            policy: BgWriter::new(
                cfg.bgwriter_lru_maxpages,
                cfg.bgwriter_lru_multiplier,
                cfg.bgwriter_delay / MS,
                cfg.nbuffers,
            ),
            delay: cfg.bgwriter_delay,
            queue: Vec::new(),
            busy: false,
            flush_wait: None,
            writing: None,
            writeback: WritebackContext::new(Writer::BgWriter, cfg.bgwriter_flush_after),
        }
    }

    /// Its first wake-up, one delay after `now`.
    pub(super) fn first_wake(&self, now: Nanos) -> Nanos {
        now + self.delay
    }

    /// bgwriter_delay is over at `now`: unless its last round is still
    /// writing, it plans a round over `pool` and starts it (true: the loop
    /// asks for its first write, `next_write`). It sleeps until `next` either way.
    pub(super) fn handle_timeout(&mut self, now: Nanos, pool: &mut BufferPool) -> (bool, Nanos) {
        self.check();
        let next = now + self.delay;
        if self.busy {
            return (false, next);
        }
        let mut q = std::mem::take(&mut self.queue);
        self.policy.plan(pool, &mut q);
        q.reverse();
        self.queue = q;
        self.busy = true;
        (true, next)
    }

    /// The next write of its round, the buffer's write started in `pool`;
    /// None when the round is over.
    pub(super) fn next_write(&mut self, pool: &mut BufferPool) -> Option<BgWrite> {
        assert!(self.busy && self.flush_wait.is_none() && self.writing.is_none());
        while let Some(buf) = self.queue.pop() {
            if pool.reusable(buf) != Some(true) {
                continue;
            }
            let (block, lsn) = pool.start_write(buf);
            return Some(BgWrite { buf, block, lsn });
        }
        self.busy = false;
        self.check();
        None
    }

    /// It waits for the WAL to be durable before writing `buf` (`block`).
    pub(super) fn wait_for_wal(&mut self, buf: BufId, block: u64) {
        assert!(self.busy && self.writing.is_none());
        self.flush_wait = Some((buf, block));
        self.check();
    }

    /// The WAL it waited for is durable: the write it held back goes out.
    pub(super) fn handle_wal_flushed(&mut self) -> (BufId, u64) {
        self.flush_wait.take().expect("bgwriter flush wait")
    }

    /// Its write of `buf` (`block`), whose WAL is durable, goes out: the
    /// request to issue.
    pub(super) fn write(&mut self, buf: BufId, block: u64) -> IoKind {
        assert!(self.busy && self.flush_wait.is_none());
        assert!(self.writing.is_none(), "one write at a time");
        self.writing = Some(buf);
        self.writeback.write_page(block)
    }

    /// Its write of `buf` is done: the loop asks for the next
    /// (`next_write`).
    pub(super) fn handle_write_done(&mut self, buf: BufId) {
        assert_eq!(self.writing, Some(buf), "the write it issued");
        self.writing = None;
        self.check();
    }

    /// Its invariants: it writes or waits only inside a round, one buffer
    /// at a time.
    fn check(&self) {
        assert!(
            !(self.flush_wait.is_some() && self.writing.is_some()),
            "the bgwriter both waits for WAL and writes"
        );
        assert!(
            self.busy
                || (self.queue.is_empty() && self.flush_wait.is_none() && self.writing.is_none()),
            "the bgwriter writes outside a round"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::test_support::config;

    /// A pool of `n` buffers, every one valid, dirty and not recently used.
    fn dirty_pool(n: u32) -> BufferPool {
        let mut p = crate::core::test_support::dirty_pool(n, |blk| 1 + blk);
        // A sweep that takes one victim ages every buffer to usage 0.
        let v = p.clock_sweep().unwrap();
        p.unpin(v);
        p
    }

    #[test]
    fn a_round_writes_one_buffer_at_a_time_and_skips_a_wake_while_busy() {
        let mut cfg = config(1, 16);
        cfg.bgwriter_lru_maxpages = 3;
        let mut pool = dirty_pool(16);
        let mut w = BgWriterProc::new(&cfg);
        let (round, next) = w.handle_timeout(0, &mut pool);
        assert!(round);
        assert_eq!(next, cfg.bgwriter_delay);
        let first = w.next_write(&mut pool).expect("a dirty buffer");
        assert_eq!(pool.block(first.buf), Some(first.block));
        assert_eq!(first.lsn, 1 + first.block);
        w.wait_for_wal(first.buf, first.block);
        // Still busy: the next wake-up plans nothing.
        assert_eq!(w.handle_timeout(next, &mut pool), (false, 2 * next));
        assert_eq!(w.handle_wal_flushed(), (first.buf, first.block));
        let _ = w.write(first.buf, first.block);
        pool.write_done(first.buf);
        w.handle_write_done(first.buf);
        let mut written = 1;
        while let Some(b) = w.next_write(&mut pool) {
            let _ = w.write(b.buf, b.block);
            pool.write_done(b.buf);
            w.handle_write_done(b.buf);
            written += 1;
        }
        assert_eq!(written, 3, "capped at bgwriter_lru_maxpages");
        // The round is over: the next wake-up plans another.
        assert!(w.handle_timeout(3 * next, &mut pool).0);
    }
}
