//! The WAL's flushes as processes do them: the WAL writes and fdatasyncs
//! `core::wal` asks for, the process that wakes from each flush and the
//! backend that leads the next one, and the flush a data-page write waits
//! for (`XLogFlush`, or minRecoveryPoint in recovery). Shared memory
//! (xlog.c's part of it), not a process: every process calls it.

use super::*;

/// The backend that leads the next WAL flush, while it wakes.
#[derive(Debug, Default)]
pub(super) struct WalLeader {
    /// A flush just ended with backends still waiting for theirs. In
    /// PostgreSQL they sleep on WALWriteLock, and the next flush starts when
    /// one of them wakes, gets a core and takes the lock (XLogFlush), unless
    /// a backend that is running meanwhile asks for a flush first and takes
    /// the free lock itself. Commits inserted until then join that flush.
    pub(super) waking: bool,
    /// The waking leader's CPU burst is on a core or queued: a flush that
    /// ends meanwhile is served by that same wake-up, not a second one.
    pub(super) on_cpu: bool,
}

impl Database {
    /// A WAL write or (`sync`) fdatasync returned. The flusher must get a
    /// core before anyone learns a flush is done (CoreConfig::wal_flush_cpu).
    pub(super) fn wal_io_returned(&mut self, now: Nanos, sync: bool) {
        if sync && self.cfg.wal_flush_cpu > 0 {
            let flusher = Proc::Flusher;
            if let Some(finish) = self
                .cpu
                .request(now, flusher.into(), self.cfg.wal_flush_cpu)
            {
                self.set_timer(finish, Timer::CpuDone(flusher));
            }
        } else {
            self.wal_io_done(now);
        }
    }

    /// Hand the WAL's writes and fdatasyncs to the device and its
    /// commit_delay sleeps to the timers; none while a waking leader is
    /// to start the next flush.
    pub(super) fn pump_wal(&mut self, now: Nanos) {
        if self.wal_leader.waking && !self.wal.flush_in_progress() {
            return;
        }
        let siblings = if self.cfg.commit_delay > 0 {
            let active = self
                .clients
                .iter()
                .filter(|c| c.has_xid && c.wait != Wait::Lock)
                .count() as u32;
            active.saturating_sub(1)
        } else {
            0
        };
        while let Some(action) = self.wal.poll_action(now, siblings) {
            match action {
                WalAction::Io(WalIo::Write {
                    segment,
                    offset,
                    len,
                }) => {
                    // write() leaves the WAL pages in the kernel's cache.
                    if self.os_cache.enabled() {
                        let pages = offset / PAGE_BYTES..(offset + len).div_ceil(PAGE_BYTES);
                        // Consecutive pages hash to scattered slots: fetch
                        // them all at once rather than one after the other.
                        for page in pages.clone() {
                            self.os_cache.prefetch_wal(segment, page);
                        }
                        for page in pages {
                            self.os_cache.write_wal(segment, page);
                        }
                    }
                    self.issue(
                        IoKind::WalWrite {
                            segment,
                            offset,
                            len,
                        },
                        Purpose::Wal { sync: false },
                        now,
                    )
                }
                WalAction::Io(WalIo::Sync { segment }) => self.issue(
                    IoKind::WalSync { segment },
                    Purpose::Wal { sync: true },
                    now,
                ),
                WalAction::DelayUntil(t) => self.set_timer(t, Timer::CommitDelay),
            }
        }
    }

    /// The WAL I/O in flight is done (and its flusher awake).
    pub(super) fn wal_io_done(&mut self, now: Nanos) {
        let mut woken = std::mem::take(&mut self.woken);
        self.wal.handle_io_done(&mut woken);
        let flush_ended = !self.wal.flush_in_progress();
        if flush_ended && let Some(r) = &mut self.repl {
            // XLogFlush wakes the walsenders (WalSndWakeupProcessRequests).
            r.handle_local_flush(now, self.wal.flushed_lsn());
        }
        if flush_ended && let Some(a) = &mut self.archiver {
            a.handle_flushed(now, self.wal.flushed_lsn());
        }
        for w in woken.drain(..) {
            self.wal_flushed_for(now, w);
        }
        self.woken = woken;
        if flush_ended && self.wal.waiting() > 0 && self.cfg.wal_flush_cpu > 0 {
            self.wal_leader.waking = true;
            if !self.wal_leader.on_cpu {
                self.wal_leader.on_cpu = true;
                // LWLockRelease wakes every waiter at once; the first of
                // those the flush did not cover to get a core takes the
                // lock. It queues like any waker: EEVDF gives no credit for
                // time asleep (a woken task keeps the lag it had, and its
                // deadline is a slice from now), so it runs after those
                // already queued, the commits just woken among them. Ahead
                // of the queue, the model grouped fewer commits per flush
                // than PostgreSQL (1.16 against 1.38 at 8 clients, scale 10).
                let leader = Proc::Leader;
                if let Some(finish) = self.cpu.request(now, leader.into(), self.cfg.wal_flush_cpu) {
                    self.set_timer(finish, Timer::CpuDone(leader));
                }
            }
        }
    }

    /// Before a data page changed at `lsn` is written: the WAL must be
    /// durable up to it (`XLogFlush`), or in recovery minRecoveryPoint must
    /// cover it (`UpdateMinRecoveryPoint`: a control file write and fsync,
    /// IO:ControlFileSyncUpdate). True if the write can go now; otherwise
    /// `who` is woken through `wal_flushed_for`.
    pub(super) fn flush_for_write(&mut self, now: Nanos, lsn: Lsn, who: Waiter) -> bool {
        let Some(rec) = self.recovery.as_mut() else {
            return self.wal.wait_for_flush(lsn, who);
        };
        match rec.min_recovery_point_for(lsn, who) {
            MinRecoveryPoint::Covered => true,
            MinRecoveryPoint::Wait => false,
            MinRecoveryPoint::Update => {
                let segment = self.control_segment();
                self.issue(
                    IoKind::WalWrite {
                        segment,
                        offset: 0,
                        len: PAGE_BYTES,
                    },
                    Purpose::ControlFile { sync: false },
                    now,
                );
                false
            }
        }
    }

    /// The file standing for pg_control in recovery: the WAL ring's last
    /// segment (a page write and an fsync of a small file either way).
    pub(super) fn control_segment(&self) -> u32 {
        self.cfg.wal_segments.saturating_sub(1)
    }

    /// An asynchronous commit sets the WAL writer's latch when it fills a
    /// page (`XLogSetAsyncXactLSN`); the writer decides whether that is
    /// enough to flush now, otherwise its wal_writer_delay timer does.
    pub(super) fn async_commit_nudge(&mut self) {
        if self
            .walwriter
            .handle_async_commit(self.wal.pages_not_requested())
        {
            self.wal.request_background_flush();
        }
    }

    /// A running backend asks for a WAL flush: if the waiting leader has not
    /// woken yet, this one takes WALWriteLock first.
    pub(super) fn flush_requested_while_running(&mut self) {
        self.wal_leader.waking = false;
    }
}
