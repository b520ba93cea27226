//! A standby's startup process catching up on a WAL backlog: PostgreSQL
//! 15's recovery (xlogrecovery.c `PerformWalRecovery`), one process that
//! reads the WAL in order and replays each record.
//!
//! The records come from the workload's transactions turned into replay
//! steps (`crate::workload::Replay`): [`Step::ReadWal`] for the bytes of
//! each record, the page it changes (`XLogReadBufferForRedoExtended`: a
//! block whose record carries a full-page image is restored without being
//! read, any other is read into shared buffers if it is not there), and the
//! replay's CPU. This module keeps what the database needs beyond its
//! buffer pool, page cache and writers, which recovery uses as the primary
//! does:
//! * the WAL stream: the kernel's readahead reads the WAL in windows of
//!   `read_ahead_bytes`, one window ahead of the replay; the startup process
//!   waits when it reaches WAL not yet read;
//! * `recovery_prefetch` (xlogprefetcher.c): blocks referenced up to
//!   `wal_decode_buffer_size` ahead that are neither in shared buffers nor
//!   full-page images are asked of the kernel (`posix_fadvise(WILLNEED)`),
//!   at most `maintenance_io_concurrency` at a time; the replay then finds
//!   them in the page cache, or waits for the read already under way.
//!
//! [`Step::ReadWal`]: super::workload::Step::ReadWal

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use super::buffer_pool::BufId;
use super::io::{PAGE_BYTES, WAL_SEGMENT_BYTES};
use super::wal::Waiter;

/// recovery_prefetch (PostgreSQL 15): `try` prefetches where the system
/// has `posix_fadvise`, which Linux has, so it is `on` here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum RecoveryPrefetch {
    Off,
    On,
    #[default]
    Try,
}

impl RecoveryPrefetch {
    /// PostgreSQL's name for it.
    pub fn name(self) -> &'static str {
        match self {
            RecoveryPrefetch::Off => "off",
            RecoveryPrefetch::On => "on",
            RecoveryPrefetch::Try => "try",
        }
    }

    /// Whether the startup process prefetches (on Linux).
    pub fn enabled(self) -> bool {
        self != RecoveryPrefetch::Off
    }
}

/// What the catch-up replays and how.
#[derive(Debug, Clone, PartialEq)]
pub struct RecoveryConfig {
    /// WAL to replay, bytes.
    pub backlog_bytes: u64,
    /// The kernel's readahead window for the WAL (read_ahead_kb).
    pub read_ahead_bytes: u64,
    /// recovery_prefetch: ask the kernel for blocks ahead of the replay.
    pub prefetch: bool,
    /// maintenance_io_concurrency: prefetches in flight at most.
    pub io_concurrency: u32,
}

/// The WAL window to read next: `len` bytes from backlog position `start`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalWindow {
    pub start: u64,
    pub len: u64,
}

impl WalWindow {
    /// Where it lies in a ring of `segments` WAL segment files.
    pub fn place(&self, segments: u32) -> (u32, u64) {
        let seg = (self.start / WAL_SEGMENT_BYTES) % u64::from(segments.max(1));
        (seg as u32, self.start % WAL_SEGMENT_BYTES)
    }
}

/// What the startup process does about the WAL it needs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WalNeed {
    /// A readahead window to issue now.
    pub issue: Option<WalWindow>,
    /// The WAL it needs is not read yet: wait for the window in flight.
    pub wait: bool,
}

/// Whether a data page may be written now (recovery's `XLogFlush`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MinRecoveryPoint {
    /// minRecoveryPoint covers its changes: write it.
    Covered,
    /// Start a control file update (write + fsync), then write it.
    Update,
    /// An update is under way: wait for it.
    Wait,
}

/// What to do with a block a record ahead will need.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrefetchAction {
    /// Read it into the page cache now.
    Issue,
    /// Queued until a prefetch completes.
    Queued,
    /// Prefetch is off, or the block is already being read.
    Skip,
}

/// The counters a catch-up reports beyond the database's own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RecoveryCounters {
    /// WAL windows read from the device and their bytes.
    pub wal_reads: u64,
    pub wal_read_bytes: u64,
    /// Blocks asked of the kernel ahead of the replay, and of those the
    /// replay had to wait for (still in flight when it got there).
    pub prefetches: u64,
    pub prefetch_waits: u64,
    /// Control file updates for minRecoveryPoint (IO:ControlFileSyncUpdate).
    pub control_updates: u64,
}

/// The startup process's WAL stream and prefetcher.
#[derive(Debug)]
pub struct Recovery {
    cfg: RecoveryConfig,
    /// WAL replayed so far (the replay position), bytes.
    replayed: u64,
    /// WAL read into memory so far (the windows done), bytes.
    fetched: u64,
    /// The window being read, if any (one at a time, in order).
    in_flight: Option<WalWindow>,
    /// Blocks waiting for a prefetch slot, oldest first.
    queued: VecDeque<u64>,
    /// Blocks being prefetched, with the replay's buffer waiting for one.
    prefetching: HashMap<u64, Option<BufId>>,
    /// minRecoveryPoint: every data page written must have its changes
    /// replayed at or before it.
    min_recovery_point: u64,
    /// The point a control file update in flight will set.
    control_in_flight: Option<u64>,
    /// Writers waiting for that update before they write their page.
    control_waiters: Vec<Waiter>,
    counters: RecoveryCounters,
}

impl Recovery {
    /// Nothing replayed or read yet.
    pub fn new(cfg: RecoveryConfig) -> Recovery {
        assert!(
            cfg.read_ahead_bytes >= PAGE_BYTES && cfg.read_ahead_bytes.is_multiple_of(PAGE_BYTES)
        );
        Recovery {
            cfg,
            replayed: 0,
            fetched: 0,
            in_flight: None,
            queued: VecDeque::new(),
            prefetching: HashMap::default(),
            min_recovery_point: 0,
            control_in_flight: None,
            control_waiters: Vec::new(),
            counters: RecoveryCounters::default(),
        }
    }

    /// `who` is about to write a data page last changed at replay position
    /// `lsn` (`XLogFlush` in recovery → `UpdateMinRecoveryPoint`). True if
    /// minRecoveryPoint covers it; otherwise `who` waits for a control file
    /// update, and the result says whether to start one now (none in
    /// flight): it will set minRecoveryPoint to the replay position, not
    /// just to `lsn`, so that few writes need one.
    pub fn min_recovery_point_for(&mut self, lsn: u64, who: Waiter) -> MinRecoveryPoint {
        if lsn <= self.min_recovery_point {
            return MinRecoveryPoint::Covered;
        }
        self.control_waiters.push(who);
        // An update under way that will not cover `lsn` still comes first:
        // one control file write at a time (ControlFileLock).
        match self.control_in_flight {
            Some(_) => MinRecoveryPoint::Wait,
            None => {
                self.control_in_flight = Some(self.replayed);
                self.counters.control_updates += 1;
                MinRecoveryPoint::Update
            }
        }
    }

    /// The control file update is durable: minRecoveryPoint moves, and the
    /// writers that waited go on (they check again).
    pub fn control_updated(&mut self) -> Vec<Waiter> {
        let point = self
            .control_in_flight
            .take()
            .expect("a control file update");
        self.min_recovery_point = self.min_recovery_point.max(point);
        std::mem::take(&mut self.control_waiters)
    }

    /// WAL replayed so far, bytes.
    pub fn replayed(&self) -> u64 {
        self.replayed
    }

    /// Whether the whole backlog is replayed.
    pub fn caught_up(&self) -> bool {
        self.replayed >= self.cfg.backlog_bytes
    }

    /// Counters so far.
    pub fn counters(&self) -> RecoveryCounters {
        self.counters
    }

    /// The WAL a page read may have to wait for is read whole pages at a
    /// time, never past the backlog's last page.
    fn end_of_wal(&self) -> u64 {
        self.cfg.backlog_bytes.next_multiple_of(PAGE_BYTES)
    }

    /// The startup process needs the next `bytes` of WAL. Keeps one
    /// readahead window ahead of the replay (the kernel's asynchronous
    /// readahead); the replay waits only for WAL not read yet.
    pub fn need_wal(&self, bytes: u64) -> WalNeed {
        let end = (self.replayed + bytes).min(self.end_of_wal());
        let issue = if self.in_flight.is_none()
            && self.fetched < self.end_of_wal()
            && self.fetched < end + self.cfg.read_ahead_bytes
        {
            let start = self.fetched;
            // A window never crosses a segment file's end.
            let len = self
                .cfg
                .read_ahead_bytes
                .min(WAL_SEGMENT_BYTES - start % WAL_SEGMENT_BYTES)
                .min(self.end_of_wal() - start);
            Some(WalWindow { start, len })
        } else {
            None
        };
        WalNeed {
            issue,
            wait: end > self.fetched,
        }
    }

    /// `window` (from [`Recovery::need_wal`]) was handed to the device.
    pub fn wal_issued(&mut self, window: WalWindow) {
        debug_assert!(self.in_flight.is_none() && window.start == self.fetched);
        self.in_flight = Some(window);
        self.counters.wal_reads += 1;
        self.counters.wal_read_bytes += window.len;
    }

    /// The window in flight is read.
    pub fn wal_read_done(&mut self) {
        let w = self.in_flight.take().expect("a WAL window in flight");
        self.fetched = w.start + w.len;
    }

    /// The startup process replayed the next `bytes` of WAL (after
    /// [`Recovery::need_wal`] said it need not wait).
    pub fn replay(&mut self, bytes: u64) {
        self.replayed += bytes;
        debug_assert!(self.replayed.min(self.end_of_wal()) <= self.fetched);
    }

    /// A block not in shared buffers nor in the page cache that a record
    /// ahead needs.
    pub fn prefetch(&mut self, block: u64) -> PrefetchAction {
        if !self.cfg.prefetch || self.prefetching.contains_key(&block) {
            return PrefetchAction::Skip;
        }
        if self.prefetching.len() < self.cfg.io_concurrency as usize {
            self.prefetching.insert(block, None);
            self.counters.prefetches += 1;
            PrefetchAction::Issue
        } else {
            if !self.queued.contains(&block) {
                self.queued.push_back(block);
            }
            PrefetchAction::Queued
        }
    }

    /// Whether `block` is being prefetched.
    pub fn is_prefetching(&self, block: u64) -> bool {
        self.prefetching.contains_key(&block)
    }

    /// The replay reached `block` while its prefetch is in flight: it
    /// waits for that read with `buf`, the buffer it took for the block.
    pub fn wait_for_prefetch(&mut self, block: u64, buf: BufId) {
        let slot = self
            .prefetching
            .get_mut(&block)
            .expect("waiting for a block being prefetched");
        debug_assert!(slot.is_none(), "one process replays");
        *slot = Some(buf);
        self.counters.prefetch_waits += 1;
    }

    /// The replay reached a queued block first and reads it itself.
    pub fn unqueue(&mut self, block: u64) {
        self.queued.retain(|b| *b != block);
    }

    /// The prefetch of `block` is done: returns the buffer the replay waits
    /// for it with, if any, and the next queued block to prefetch.
    pub fn prefetch_done(&mut self, block: u64) -> (Option<BufId>, Option<u64>) {
        let waiting = self
            .prefetching
            .remove(&block)
            .expect("a prefetch in flight");
        let next = self.queued.pop_front();
        if let Some(b) = next {
            self.prefetching.insert(b, None);
            self.counters.prefetches += 1;
        }
        (waiting, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(backlog: u64, ra: u64, prefetch: bool, n: u32) -> Recovery {
        Recovery::new(RecoveryConfig {
            backlog_bytes: backlog,
            read_ahead_bytes: ra,
            prefetch,
            io_concurrency: n,
        })
    }

    /// Replays `records` of `bytes` each, completing every window at once:
    /// returns the windows read.
    fn stream(r: &mut Recovery, bytes: u64) -> Vec<WalWindow> {
        let mut windows = Vec::new();
        while !r.caught_up() {
            loop {
                let need = r.need_wal(bytes);
                if let Some(w) = need.issue {
                    r.wal_issued(w);
                    windows.push(w);
                }
                if !need.wait {
                    break;
                }
                r.wal_read_done();
            }
            r.replay(bytes);
        }
        windows
    }

    #[test]
    fn the_wal_is_read_once_in_order_in_windows_that_stay_in_their_segment() {
        let mut r = rec(40 << 20, 128 << 10, false, 10);
        let windows = stream(&mut r, 300);
        let mut at = 0;
        for w in &windows {
            assert_eq!(w.start, at, "in order, no gap, no overlap");
            assert!(w.len <= 128 << 10 && w.len % PAGE_BYTES == 0);
            assert_eq!(
                w.start / WAL_SEGMENT_BYTES,
                (w.start + w.len - 1) / WAL_SEGMENT_BYTES,
                "{w:?} crosses a segment"
            );
            at += w.len;
        }
        assert_eq!(at, 40 << 20, "all of the backlog, nothing past it");
        assert_eq!(r.counters().wal_read_bytes, 40 << 20);
        let (seg, off) = windows.last().unwrap().place(4);
        assert_eq!(
            seg, 2,
            "40 MB in 16 MB segments ends in the third, ring of 4"
        );
        assert!(off < WAL_SEGMENT_BYTES);
    }

    #[test]
    fn readahead_keeps_one_window_ahead_so_the_replay_seldom_waits() {
        let mut r = rec(1 << 20, 64 << 10, false, 10);
        let mut waits = 0;
        while !r.caught_up() {
            let need = r.need_wal(100);
            if let Some(w) = need.issue {
                r.wal_issued(w);
                // The window completes while the replay works through
                // what it has, unless it has nothing.
                if !need.wait {
                    r.wal_read_done();
                }
            }
            if need.wait {
                waits += 1;
                if r.in_flight.is_some() {
                    r.wal_read_done();
                }
                continue;
            }
            r.replay(100);
        }
        assert_eq!(waits, 1, "only the first record waits for the WAL");
    }

    #[test]
    fn prefetches_are_bounded_and_the_queue_drains_in_order() {
        let mut r = rec(1 << 20, 8192, true, 2);
        assert_eq!(r.prefetch(10), PrefetchAction::Issue);
        assert_eq!(r.prefetch(10), PrefetchAction::Skip, "already in flight");
        assert_eq!(r.prefetch(11), PrefetchAction::Issue);
        assert_eq!(r.prefetch(12), PrefetchAction::Queued);
        assert_eq!(r.prefetch(13), PrefetchAction::Queued);
        r.unqueue(13);
        r.wait_for_prefetch(11, 7);
        assert_eq!(r.prefetch_done(10), (None, Some(12)));
        assert_eq!(r.prefetch_done(11), (Some(7), None));
        assert!(r.is_prefetching(12));
        assert_eq!(r.prefetch_done(12), (None, None));
        assert_eq!(r.counters().prefetches, 3);
        assert_eq!(r.counters().prefetch_waits, 1);
        let mut off = rec(1 << 20, 8192, false, 2);
        assert_eq!(off.prefetch(10), PrefetchAction::Skip);
    }
}
