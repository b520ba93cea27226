//! WAL insertion and group commit (PostgreSQL's `XLogInsert` / `XLogFlush` /
//! `XLogWrite`, xlog.c).
//!
//! Records are appended at the insert position; a process that needs WAL
//! durable up to some LSN waits. Only one flush (write + fdatasync) is in
//! flight at a time, as with `WALWriteLock`: whoever starts the flush writes
//! and syncs everything inserted so far, so waiters that arrived meanwhile
//! ride along. That is group commit. With `commit_delay` the leader first
//! sleeps, holding the lock, if enough siblings are active.

use super::io::{PAGE_BYTES, WAL_SEGMENT_BYTES};
use super::time::Nanos;

/// A WAL position in bytes since the start of the run (page headers included).
pub type Lsn = u64;

/// Size of a WAL page header (`SizeOfXLogShortPHD`).
const SHORT_PAGE_HEADER: u64 = 24;
/// Size of the header of a segment's first page (`SizeOfXLogLongPHD`).
const LONG_PAGE_HEADER: u64 = 40;
/// An XLOG_SWITCH record: a bare record header (`SizeOfXLogRecord`).
const SWITCH_RECORD_BYTES: u64 = 24;

/// Who waits for a WAL flush. The core maps these back to its processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Waiter {
    /// A client backend, by index.
    Client(u32),
    /// The checkpointer (dirty buffer write or checkpoint record).
    Checkpointer,
    /// The background writer.
    BgWriter,
    /// A vacuum worker (a dirty ring buffer's write).
    Vacuum,
}

/// One I/O the WAL wants done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalIo {
    /// Write `len` bytes at `offset` in segment file `segment` (8 KiB pages).
    Write { segment: u32, offset: u64, len: u64 },
    /// fdatasync segment file `segment`.
    Sync { segment: u32 },
}

/// What the WAL asks the caller to do next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WalAction {
    /// Issue this I/O and report its completion with `handle_io_done`.
    Io(WalIo),
    /// The flush leader sleeps for `commit_delay`; call `handle_delay_done`
    /// at this time.
    DelayUntil(Nanos),
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum FlushState {
    Idle,
    /// The leader is sleeping for commit_delay.
    Delaying,
    /// The flush is decided; `pending` holds its I/Os in order, `in_flight`
    /// whether one has been handed out and not completed.
    Flushing {
        target: Lsn,
        pending: Vec<WalIo>,
        in_flight: bool,
    },
}

/// Counters in pg_stat_wal's terms. Write and sync calls are counted by the
/// database when it hands them to the device (`Counters` in stats.rs), so a
/// call planned but never issued at the end of a run is not counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WalCounters {
    /// Records inserted (`wal_records`).
    pub records: u64,
    /// Bytes of records inserted (`wal_bytes`; page headers excluded).
    pub bytes: u64,
    /// Completed flushes (a write run followed by its sync).
    pub flushes: u64,
    /// Of those, flushes started with nobody waiting (the WAL writer's).
    pub background_flushes: u64,
}

/// The WAL: insert position, flush position and the group-commit flush.
#[derive(Debug)]
pub struct Wal {
    insert: Lsn,
    flushed: Lsn,
    segments: u32,
    max_write_bytes: u64,
    commit_delay: Nanos,
    commit_siblings: u32,
    state: FlushState,
    /// Processes waiting for the flush position to reach an LSN.
    waiters: Vec<(Lsn, Waiter)>,
    /// A background flush (WAL writer) was asked for with no waiter.
    background_target: Lsn,
    counters: WalCounters,
}

impl Wal {
    /// A WAL over a ring of `segments` 16 MiB segment files, writing at most
    /// `wal_buffers` bytes per write call, with `commit_delay` and
    /// `commit_siblings` as in postgresql.conf.
    pub fn new(segments: u32, wal_buffers: u64, commit_delay: Nanos, commit_siblings: u32) -> Self {
        assert!(segments > 0, "at least one WAL segment");
        Wal {
            insert: 0,
            flushed: 0,
            segments,
            max_write_bytes: wal_buffers.max(PAGE_BYTES) / PAGE_BYTES * PAGE_BYTES,
            commit_delay,
            commit_siblings,
            state: FlushState::Idle,
            waiters: Vec::new(),
            background_target: 0,
            counters: WalCounters::default(),
        }
    }

    /// Current insert position.
    pub fn insert_lsn(&self) -> Lsn {
        self.insert
    }

    /// WAL is durable up to here.
    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed
    }

    /// Counters so far.
    pub fn counters(&self) -> WalCounters {
        self.counters
    }

    /// True while a flush (or the leader's commit_delay) is in progress.
    pub fn flush_in_progress(&self) -> bool {
        self.state != FlushState::Idle
    }

    /// Number of processes waiting for a flush.
    pub fn waiting(&self) -> usize {
        self.waiters.len()
    }

    /// Append a record of `len` bytes; returns the LSN of its end. Records
    /// are MAXALIGNed and page headers are skipped over, as `XLogInsert`
    /// lays them out.
    pub fn insert(&mut self, len: u64) -> Lsn {
        self.counters.records += 1;
        self.counters.bytes += len;
        let mut remaining = len.div_ceil(8) * 8;
        while remaining > 0 {
            let in_page = self.insert % PAGE_BYTES;
            if in_page == 0 {
                self.insert += if self.insert.is_multiple_of(WAL_SEGMENT_BYTES) {
                    LONG_PAGE_HEADER
                } else {
                    SHORT_PAGE_HEADER
                };
                continue;
            }
            let take = (PAGE_BYTES - in_page).min(remaining);
            self.insert += take;
            remaining -= take;
        }
        self.insert
    }

    /// Close the current segment early (`RequestXLogSwitch`, for
    /// archive_timeout): an XLOG_SWITCH record, then the insert position
    /// jumps to the next segment's start, so the next flush writes the rest
    /// of the segment as padding pages (`XLogInsertRecord`'s switch
    /// handling). Nothing when the insert position is already at a segment
    /// start. Returns the new insert position.
    pub fn switch_segment(&mut self) -> Lsn {
        if self.insert.is_multiple_of(WAL_SEGMENT_BYTES) {
            return self.insert;
        }
        self.insert(SWITCH_RECORD_BYTES);
        self.insert = self.insert.next_multiple_of(WAL_SEGMENT_BYTES);
        self.insert
    }

    /// `who` needs WAL durable up to `lsn`. Returns true if it already is;
    /// otherwise `who` waits and will be returned by `handle_io_done` once a
    /// flush covers `lsn`. Call `poll_action` afterwards.
    pub fn wait_for_flush(&mut self, lsn: Lsn, who: Waiter) -> bool {
        if lsn <= self.flushed {
            return true;
        }
        self.waiters.push((lsn.min(self.insert), who));
        false
    }

    /// WAL pages inserted beyond both the flush position and the last
    /// background flush asked for: what the WAL writer has not yet been
    /// asked to flush.
    pub fn pages_not_requested(&self) -> u64 {
        (self.insert / PAGE_BYTES)
            .saturating_sub(self.flushed.max(self.background_target) / PAGE_BYTES)
    }

    /// Ask for everything inserted so far to be flushed without anyone
    /// waiting (the WAL writer's `XLogBackgroundFlush`).
    pub fn request_background_flush(&mut self) {
        self.background_target = self.insert;
    }

    /// What to do next, if anything: the next I/O of the flush in progress,
    /// or the start of a new flush when someone waits and none is in flight.
    /// `active_siblings` is the number of other backends in a transaction
    /// with an xid and not blocked on a lock (`MinimumActiveBackends`).
    pub fn poll_action(&mut self, now: Nanos, active_siblings: u32) -> Option<WalAction> {
        match &mut self.state {
            FlushState::Idle => {
                let wanted = self.waiters.iter().map(|w| w.0).max().unwrap_or(0);
                if wanted <= self.flushed && self.background_target <= self.flushed {
                    return None;
                }
                let leader_waits = wanted > self.flushed;
                if leader_waits && self.commit_delay > 0 && active_siblings >= self.commit_siblings
                {
                    // The leader sleeps holding WALWriteLock, then writes
                    // whatever was inserted meanwhile (XLogFlush).
                    self.state = FlushState::Delaying;
                    return Some(WalAction::DelayUntil(now + self.commit_delay));
                }
                self.start_flush();
                self.poll_action(now, active_siblings)
            }
            FlushState::Delaying => None,
            FlushState::Flushing {
                pending, in_flight, ..
            } => {
                if *in_flight || pending.is_empty() {
                    return None;
                }
                *in_flight = true;
                Some(WalAction::Io(pending.remove(0)))
            }
        }
    }

    /// The leader's commit_delay is over: flush everything inserted by now.
    pub fn handle_delay_done(&mut self) {
        if self.state == FlushState::Delaying {
            self.start_flush();
        }
    }

    /// The WAL I/O handed out by `poll_action` finished. When it was the
    /// flush's last one, the flush position advances and the processes whose
    /// LSN is now durable are appended to `woken`.
    pub fn handle_io_done(&mut self, woken: &mut Vec<Waiter>) {
        let FlushState::Flushing {
            target,
            pending,
            in_flight,
        } = &mut self.state
        else {
            panic!("WAL I/O completed with no flush in progress");
        };
        assert!(*in_flight, "WAL I/O completed that was not issued");
        *in_flight = false;
        if !pending.is_empty() {
            return;
        }
        self.flushed = *target;
        self.counters.flushes += 1;
        self.state = FlushState::Idle;
        let flushed = self.flushed;
        self.waiters.retain(|&(lsn, who)| {
            if lsn <= flushed {
                woken.push(who);
                false
            } else {
                true
            }
        });
    }

    /// Plan the writes and syncs that make everything inserted so far
    /// durable: whole 8 KiB pages from the page holding the flush position
    /// (the last partial page is written again) to the page holding the
    /// insert position, split at segment ends and at `wal_buffers`.
    fn start_flush(&mut self) {
        if self.waiters.is_empty() {
            self.counters.background_flushes += 1;
        }
        let target = self.insert;
        let mut pending = Vec::new();
        flush_ios(
            self.flushed,
            target,
            self.segments,
            self.max_write_bytes,
            &mut pending,
        );
        if pending.is_empty() {
            // Nothing new to write (the target was already durable).
            self.state = FlushState::Idle;
            self.flushed = self.flushed.max(target);
            return;
        }
        self.state = FlushState::Flushing {
            target,
            pending,
            in_flight: false,
        };
    }
}

/// The writes and syncs that make WAL from `from` to `to` durable, appended
/// to `out`: whole 8 KiB pages from the page holding `from` (a partial page
/// is written again) to the page holding `to`, split at segment ends and at
/// `max_write_bytes`, each finished segment synced as soon as its last page
/// is written (XLogWrite) and the last one at the end. Nothing when `to`
/// is not past `from`'s page.
pub fn flush_ios(from: Lsn, to: Lsn, segments: u32, max_write_bytes: u64, out: &mut Vec<WalIo>) {
    let mut pos = from / PAGE_BYTES * PAGE_BYTES;
    let end = to.div_ceil(PAGE_BYTES) * PAGE_BYTES;
    let mut last_segment = None;
    while pos < end {
        let seg_no = pos / WAL_SEGMENT_BYTES;
        let segment = (seg_no % segments as u64) as u32;
        let seg_end = (seg_no + 1) * WAL_SEGMENT_BYTES;
        let len = (end.min(seg_end) - pos).min(max_write_bytes);
        out.push(WalIo::Write {
            segment,
            offset: pos % WAL_SEGMENT_BYTES,
            len,
        });
        pos += len;
        if pos == seg_end && pos < end {
            out.push(WalIo::Sync { segment });
        }
        last_segment = Some(segment);
    }
    if let Some(segment) = last_segment {
        out.push(WalIo::Sync { segment });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wal() -> Wal {
        Wal::new(4, 4 << 20, 0, 5)
    }

    /// Run every I/O the WAL asks for to completion; returns (ios, woken).
    fn drain(w: &mut Wal, now: Nanos, siblings: u32) -> (Vec<WalIo>, Vec<Waiter>) {
        let mut ios = Vec::new();
        let mut woken = Vec::new();
        while let Some(a) = w.poll_action(now, siblings) {
            match a {
                WalAction::Io(io) => {
                    assert!(
                        w.poll_action(now, siblings).is_none(),
                        "two WAL I/Os in flight"
                    );
                    ios.push(io);
                    w.handle_io_done(&mut woken);
                }
                WalAction::DelayUntil(_) => w.handle_delay_done(),
            }
        }
        (ios, woken)
    }

    #[test]
    fn insert_skips_page_headers_and_aligns() {
        let mut w = wal();
        assert_eq!(w.insert(34), 40 + 40); // long header at LSN 0, 34 → 40
        let mut w = wal();
        // Fill the first page exactly, then one more byte moves past a short header.
        let first = PAGE_BYTES - LONG_PAGE_HEADER;
        assert_eq!(w.insert(first), PAGE_BYTES);
        assert_eq!(w.insert(1), PAGE_BYTES + SHORT_PAGE_HEADER + 8);
        assert_eq!(w.counters().bytes, first + 1);
        assert_eq!(w.counters().records, 2);
    }

    #[test]
    fn single_commit_writes_one_page_and_syncs() {
        let mut w = wal();
        let lsn = w.insert(100);
        assert!(!w.wait_for_flush(lsn, Waiter::Client(0)));
        let (ios, woken) = drain(&mut w, 0, 0);
        assert_eq!(
            ios,
            vec![
                WalIo::Write {
                    segment: 0,
                    offset: 0,
                    len: PAGE_BYTES
                },
                WalIo::Sync { segment: 0 }
            ]
        );
        assert_eq!(woken, vec![Waiter::Client(0)]);
        assert!(w.wait_for_flush(lsn, Waiter::Client(0)));
    }

    #[test]
    fn group_commit_one_flush_in_flight_and_followers_ride_along() {
        let mut w = wal();
        let l0 = w.insert(100);
        assert!(!w.wait_for_flush(l0, Waiter::Client(0)));
        // The leader's write is issued...
        let Some(WalAction::Io(first)) = w.poll_action(0, 0) else {
            panic!()
        };
        assert!(matches!(first, WalIo::Write { .. }));
        // ...while 7 more commit: they wait, no second flush starts.
        for c in 1..8 {
            let l = w.insert(100);
            assert!(!w.wait_for_flush(l, Waiter::Client(c)));
            assert_eq!(
                w.poll_action(0, 0),
                None,
                "second flush while one in flight"
            );
        }
        let mut woken = Vec::new();
        w.handle_io_done(&mut woken);
        let Some(WalAction::Io(WalIo::Sync { .. })) = w.poll_action(0, 0) else {
            panic!()
        };
        w.handle_io_done(&mut woken);
        assert_eq!(woken, vec![Waiter::Client(0)]);
        // One more flush covers all 7 followers.
        let (ios, woken) = drain(&mut w, 0, 0);
        assert_eq!(woken.len(), 7);
        assert_eq!(
            ios.iter()
                .filter(|i| matches!(i, WalIo::Sync { .. }))
                .count(),
            1
        );
        assert_eq!(w.counters().flushes, 2);
        assert!(w.counters().flushes < 8);
    }

    #[test]
    fn partial_last_page_is_rewritten() {
        let mut w = wal();
        let l = w.insert(100);
        w.wait_for_flush(l, Waiter::Client(0));
        drain(&mut w, 0, 0);
        let l = w.insert(100);
        w.wait_for_flush(l, Waiter::Client(0));
        let (ios, _) = drain(&mut w, 0, 0);
        assert_eq!(
            ios[0],
            WalIo::Write {
                segment: 0,
                offset: 0,
                len: PAGE_BYTES
            }
        );
    }

    #[test]
    fn commit_delay_only_with_enough_siblings() {
        let mut w = Wal::new(4, 4 << 20, 10_000, 5);
        let l = w.insert(100);
        w.wait_for_flush(l, Waiter::Client(0));
        // 4 siblings < commit_siblings 5: no delay.
        assert!(matches!(w.poll_action(0, 4), Some(WalAction::Io(_))));

        let mut w = Wal::new(4, 4 << 20, 10_000, 5);
        let l = w.insert(100);
        w.wait_for_flush(l, Waiter::Client(0));
        assert_eq!(w.poll_action(7, 5), Some(WalAction::DelayUntil(10_007)));
        // During the delay others insert and wait; nothing is issued.
        let l2 = w.insert(100);
        w.wait_for_flush(l2, Waiter::Client(1));
        assert_eq!(w.poll_action(8, 5), None);
        w.handle_delay_done();
        let (ios, woken) = drain(&mut w, 10_007, 5);
        assert_eq!(woken.len(), 2, "the delayed flush covers the later commit");
        assert_eq!(ios.len(), 2);
    }

    #[test]
    fn flush_splits_at_segment_end_and_syncs_each_segment() {
        let mut w = Wal::new(2, 64 << 20, 0, 5);
        // Insert just over one segment.
        let mut l = 0;
        while l < WAL_SEGMENT_BYTES + 100 {
            l = w.insert(4000);
        }
        w.wait_for_flush(l, Waiter::Checkpointer);
        let (ios, woken) = drain(&mut w, 0, 0);
        assert_eq!(woken, vec![Waiter::Checkpointer]);
        assert_eq!(
            ios,
            vec![
                WalIo::Write {
                    segment: 0,
                    offset: 0,
                    len: WAL_SEGMENT_BYTES
                },
                WalIo::Sync { segment: 0 },
                WalIo::Write {
                    segment: 1,
                    offset: 0,
                    len: l.div_ceil(PAGE_BYTES) * PAGE_BYTES - WAL_SEGMENT_BYTES
                },
                WalIo::Sync { segment: 1 },
            ]
        );
    }

    #[test]
    fn writes_are_capped_at_wal_buffers() {
        let mut w = Wal::new(4, 64 * 1024, 0, 5);
        let l = w.insert(200_000);
        w.background_target = 0;
        w.wait_for_flush(l, Waiter::BgWriter);
        let (ios, _) = drain(&mut w, 0, 0);
        let writes: Vec<_> = ios
            .iter()
            .filter(|i| matches!(i, WalIo::Write { .. }))
            .collect();
        assert_eq!(writes.len(), 4); // 25 pages in chunks of 8
        for io in &ios {
            if let WalIo::Write { len, .. } = io {
                assert!(*len <= 64 * 1024);
            }
        }
    }

    #[test]
    fn background_flush_needs_no_waiter() {
        let mut w = wal();
        let l = w.insert(100);
        w.request_background_flush();
        let (ios, woken) = drain(&mut w, 0, 0);
        assert!(woken.is_empty());
        assert_eq!(ios.len(), 2);
        assert_eq!(w.counters().background_flushes, 1);
        assert_eq!(w.flushed_lsn(), l);
        // Nothing left to do.
        w.request_background_flush();
        assert_eq!(w.poll_action(0, 0), None);
    }

    #[test]
    fn segments_wrap_around_the_ring() {
        let mut w = Wal::new(2, 64 << 20, 0, 5);
        let mut l = 0;
        while l < 2 * WAL_SEGMENT_BYTES + 10 {
            l = w.insert(8000);
        }
        w.wait_for_flush(l, Waiter::Client(3));
        let (ios, _) = drain(&mut w, 0, 0);
        assert_eq!(*ios.last().unwrap(), WalIo::Sync { segment: 0 });
    }

    #[test]
    fn a_segment_switch_pads_the_segment_and_syncs_it() {
        let mut w = Wal::new(4, 1 << 20, 0, 5);
        w.insert(100);
        let end = w.switch_segment();
        assert_eq!(end, WAL_SEGMENT_BYTES);
        assert_eq!(w.switch_segment(), end, "nothing at a segment start");
        w.request_background_flush();
        let mut written = 0;
        let mut woken = Vec::new();
        while let Some(WalAction::Io(io)) = w.poll_action(0, 0) {
            if let WalIo::Write { len, .. } = io {
                written += len;
            }
            w.handle_io_done(&mut woken);
        }
        assert_eq!(
            written, WAL_SEGMENT_BYTES,
            "the whole segment, padding included"
        );
        assert_eq!(w.flushed_lsn(), WAL_SEGMENT_BYTES);
        assert_eq!(w.insert(8), WAL_SEGMENT_BYTES + 40 + 8);
    }
}
