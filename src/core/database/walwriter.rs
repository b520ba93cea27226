//! The WAL writer process (walwriter.c): every wal_writer_delay it flushes
//! what asynchronous commits left (`XLogBackgroundFlush`), and an
//! asynchronous commit that fills a page wakes it early
//! (`XLogSetAsyncXactLSN`) once wal_writer_flush_after is unflushed.
//!
//! It owns its two settings and nothing else of the instance: it is told
//! the time and how much WAL no flush covers yet, and answers whether to
//! flush and when it next wakes. The pages it writes without flushing in
//! between go to the kernel's cache and are not modelled.

use crate::core::io::PAGE_BYTES;
use crate::core::time::Nanos;

/// The WAL writer process.
#[derive(Debug, Clone, Copy)]
pub(super) struct WalWriter {
    /// wal_writer_delay: its sleep between rounds.
    delay: Nanos,
    /// wal_writer_flush_after in pages, at least 1 (0 in postgresql.conf
    /// is "always flushed immediately").
    flush_after_pages: u64,
}

impl WalWriter {
    /// From wal_writer_delay and wal_writer_flush_after (bytes).
    pub(super) fn new(delay: Nanos, flush_after_bytes: u64) -> WalWriter {
        let w = WalWriter {
            delay,
            flush_after_pages: (flush_after_bytes / PAGE_BYTES).max(1),
        };
        assert!(w.flush_after_pages >= 1, "a flush needs a page");
        w
    }

    /// Its first wake-up, after one delay from `now`.
    pub(super) fn first_wake(&self, now: Nanos) -> Nanos {
        now + self.delay
    }

    /// wal_writer_delay is over: it flushes what async commits left
    /// (every wake-up does, `XLogBackgroundFlush`), and sleeps until the
    /// time returned.
    pub(super) fn handle_timeout(&self, now: Nanos) -> Nanos {
        let next = now + self.delay;
        assert!(next > now, "the WAL writer sleeps a positive delay");
        next
    }

    /// An asynchronous commit left `unrequested` pages that no flush
    /// covers: true if that wakes it to flush now. The writer is one
    /// process: WAL inserted while its flush runs is judged when it is
    /// done, against what that flush covered.
    pub(super) fn handle_async_commit(&self, unrequested: u64) -> bool {
        unrequested >= self.flush_after_pages
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::MS;

    #[test]
    fn flushes_at_every_wake_and_sleeps_one_delay() {
        let w = WalWriter::new(200 * MS, 1 << 20);
        assert_eq!(w.first_wake(0), 200 * MS);
        assert_eq!(w.handle_timeout(200 * MS), 400 * MS);
    }

    #[test]
    fn an_async_commit_wakes_it_only_past_flush_after() {
        // 1 MB is 128 pages of 8 KiB.
        let w = WalWriter::new(200 * MS, 1 << 20);
        assert!(!w.handle_async_commit(127));
        assert!(w.handle_async_commit(128));
        // 0: every commit that leaves a page unflushed wakes it.
        let w = WalWriter::new(200 * MS, 0);
        assert!(!w.handle_async_commit(0));
        assert!(w.handle_async_commit(1));
    }
}
