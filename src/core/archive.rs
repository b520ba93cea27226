//! Continuous WAL archiving: PostgreSQL's archiver process (pgarch.c) and
//! the checkpointer's `archive_timeout` (checkpointer.c `CheckArchiveTimeout`).
//!
//! With `archive_mode = on`, `XLogWrite` (xlog.c) fsyncs each segment as
//! soon as its last page is written and calls `XLogArchiveNotifySeg`, which
//! creates `archive_status/<segment>.ready` and wakes the archiver. The
//! archiver (`pgarch_ArchiverCopyLoop`) takes the oldest `.ready` segment
//! (`pgarch_readyXlog`), runs `archive_command` or the `archive_library`'s
//! callback on it (`pgarch_archiveXlog`) and, on success, renames the status
//! file to `.done` (`pgarch_archiveDone`): one segment at a time, in order.
//! A segment is removed or recycled at a checkpoint only once it is `.done`
//! (`XLogArchiveCheckDone`), so a lagging archive makes pg_wal grow.
//! Tools such as pgBackRest (`archive-async` with `process-max`) and WAL-G
//! push several segments at once; `parallel` pushes here stand for them.
//!
//! `archive_timeout`: when that long has passed since the last segment
//! switch and WAL has been written since, the checkpointer requests a
//! switch (`RequestXLogSwitch`); the segment is closed early and the rest
//! of it written as padding, so the archive still receives a whole 16 MiB
//! file.
//!
//! Each segment goes ready → queued → pushing (at most `parallel` at once)
//! → archived. A push takes the target's latency plus the segment's bytes
//! at its per-stream throughput. Sans-I/O like the rest of the core: the
//! database feeds in its WAL flushes and the timers this module asked for;
//! it drains timers and segment switches. The disk-side read of the segment
//! (the `cp` or upload reading pg_wal) is not modelled.

use std::collections::VecDeque;

use super::io::WAL_SEGMENT_BYTES;
use super::stats::{Merge, Series};
use super::time::{Nanos, SEC};
use super::wal::Lsn;

/// `archive_mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ArchiveMode {
    /// No archiving (the default).
    #[default]
    Off,
    /// The primary archives each completed segment.
    On,
    /// Also archive during recovery (a standby archives what it receives).
    /// On a primary the same as `on`; standbys' archivers are not modelled.
    Always,
}

impl ArchiveMode {
    /// The value as `SHOW archive_mode` prints it.
    pub fn name(self) -> &'static str {
        match self {
            ArchiveMode::Off => "off",
            ArchiveMode::On => "on",
            ArchiveMode::Always => "always",
        }
    }
}

/// Where segments go and how fast.
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveTarget {
    /// Its name (`s3`, `local`) or `custom`.
    pub name: String,
    /// Fixed time per segment: the command's start, the request's round
    /// trips, the store's acknowledgement.
    pub latency: Nanos,
    /// Bytes per second of one push.
    pub bytes_per_s: f64,
    /// Segments pushed at once (1: archive_command's one at a time).
    pub parallel: u32,
}

impl ArchiveTarget {
    /// How long one push of `bytes` takes.
    pub fn push_time(&self, bytes: u64) -> Nanos {
        self.latency + (bytes as f64 / self.bytes_per_s * SEC as f64).ceil() as Nanos
    }

    /// Bytes per second the target can take with every push busy, whole
    /// segments end to end.
    pub fn capacity_bytes_per_s(&self) -> f64 {
        self.parallel as f64 * WAL_SEGMENT_BYTES as f64 * SEC as f64
            / self.push_time(WAL_SEGMENT_BYTES) as f64
    }
}

/// Archiving as the core runs it (`archive_mode` not off).
#[derive(Debug, Clone, PartialEq)]
pub struct ArchiveConfig {
    pub mode: ArchiveMode,
    /// `archive_timeout`; 0: never force a switch.
    pub timeout: Nanos,
    pub target: ArchiveTarget,
}

/// A timer the archiver asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ArchiveTimer {
    /// The push of segment `segment` (its number since the run's start) ends.
    Pushed { segment: u64 },
    /// The checkpointer checks `archive_timeout`.
    Timeout,
}

/// What the archiver asks the database to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveAction {
    /// Call `handle_timer(timer)` at `at`.
    Timer { at: Nanos, timer: ArchiveTimer },
    /// archive_timeout: switch to a new segment now (`RequestXLogSwitch`).
    SwitchSegment,
}

/// One second of the run, for the report.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct ArchiveSecond {
    /// Most segments ready but not yet archived (queued or pushing) at
    /// any moment of the second.
    pub backlog_max: u64,
    /// Of those, most waiting for a free push.
    pub queued_max: u64,
    /// Largest RPO in the second: the age of the oldest WAL not in the
    /// archive.
    pub rpo_max: Nanos,
    /// Segments archived in the second.
    pub archived: u64,
}

impl Merge for ArchiveSecond {
    fn merge(&mut self, next: &ArchiveSecond) {
        self.backlog_max = self.backlog_max.max(next.backlog_max);
        self.queued_max = self.queued_max.max(next.queued_max);
        self.rpo_max = self.rpo_max.max(next.rpo_max);
        self.archived += next.archived;
    }
}

/// Counters over the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ArchiveCounters {
    /// Segments marked `.ready`.
    pub ready: u64,
    /// Segments archived.
    pub archived: u64,
    /// Segment switches archive_timeout forced.
    pub switches: u64,
}

/// The archiver and the archive_timeout check.
#[derive(Debug)]
pub struct Archiver {
    cfg: ArchiveConfig,
    /// When each segment was marked ready, by segment number.
    ready_at: Vec<Nanos>,
    /// `.ready` segments waiting for a push, oldest first.
    queue: VecDeque<u64>,
    /// Pushes in flight.
    pushing: u32,
    /// Per segment: archived.
    archived: Vec<bool>,
    /// Every segment below this one is archived: the archive is complete up
    /// to its start.
    archived_upto: u64,
    /// The last segment switch (a segment completed, or archive_timeout
    /// checked) and where the last completed segment ends
    /// (`XLogCtl->lastSegSwitchTime`, `lastSegSwitchLSN`).
    last_switch: Nanos,
    last_switch_lsn: Lsn,
    /// WAL durable up to here (the last flush reported).
    flushed: Lsn,
    /// Events up to here are in `seconds`.
    observed: Nanos,
    seconds: Series<ArchiveSecond>,
    counters: ArchiveCounters,
    actions: VecDeque<ArchiveAction>,
}

impl Archiver {
    /// The archiver at time 0, nothing ready; with archive_timeout, its
    /// first check is due one timeout in.
    pub fn new(cfg: ArchiveConfig) -> Archiver {
        assert!(cfg.target.parallel > 0, "at least one push at a time");
        assert!(cfg.target.bytes_per_s > 0.0, "a target that moves bytes");
        let mut a = Archiver {
            ready_at: Vec::new(),
            queue: VecDeque::new(),
            pushing: 0,
            archived: Vec::new(),
            archived_upto: 0,
            last_switch: 0,
            last_switch_lsn: 0,
            flushed: 0,
            observed: 0,
            seconds: Series::default(),
            counters: ArchiveCounters::default(),
            actions: VecDeque::new(),
            cfg,
        };
        if a.cfg.timeout > 0 {
            a.actions.push_back(ArchiveAction::Timer {
                at: a.cfg.timeout,
                timer: ArchiveTimer::Timeout,
            });
        }
        a
    }

    /// The configuration.
    pub fn config(&self) -> &ArchiveConfig {
        &self.cfg
    }

    /// Counters so far.
    pub fn counters(&self) -> ArchiveCounters {
        self.counters
    }

    /// Segments ready and not yet archived (queued or pushing).
    pub fn backlog(&self) -> u64 {
        self.counters.ready - self.counters.archived
    }

    /// WAL durable so far (the last flush reported), padding of switched
    /// segments included: what the archive must take in the end.
    pub fn flushed_lsn(&self) -> Lsn {
        self.flushed
    }

    /// Segments waiting for a free push.
    pub fn queued(&self) -> u64 {
        self.queue.len() as u64
    }

    /// The age at `now` of the oldest WAL not in the archive: what a crash
    /// of the server (and its pg_wal) at `now` would lose. The WAL after the
    /// archive's end started at the completion of the segment before it
    /// (or the run's start).
    pub fn rpo(&self, now: Nanos) -> Nanos {
        let since = match self.archived_upto {
            0 => 0,
            k => self.ready_at[k as usize - 1],
        };
        now.saturating_sub(since)
    }

    /// WAL is durable up to `flushed`: every segment it completes is marked
    /// ready (`XLogArchiveNotifySeg`) and pushed if a push is free.
    /// PostgreSQL notifies right after each segment's fsync, inside the
    /// flush; the database reports whole flushes, so a segment is ready
    /// up to one flush later here.
    pub fn handle_flushed(&mut self, now: Nanos, flushed: Lsn) {
        self.flushed = self.flushed.max(flushed);
        let complete = flushed / WAL_SEGMENT_BYTES;
        if complete <= self.counters.ready {
            return;
        }
        self.observe(now);
        while self.counters.ready < complete {
            let seg = self.counters.ready;
            self.ready_at.push(now);
            self.archived.push(false);
            self.queue.push_back(seg);
            self.counters.ready += 1;
        }
        self.last_switch = now;
        self.last_switch_lsn = complete * WAL_SEGMENT_BYTES;
        self.start_pushes(now);
        self.note(now);
    }

    /// A timer this module asked for is due. `insert` is the WAL insert
    /// position (archive_timeout switches only if WAL was written since the
    /// last switch, as `GetLastImportantRecPtr` > `lastSegSwitchLSN`).
    pub fn handle_timer(&mut self, now: Nanos, timer: ArchiveTimer, insert: Lsn) {
        self.observe(now);
        match timer {
            ArchiveTimer::Pushed { segment } => {
                self.pushing -= 1;
                self.archived[segment as usize] = true;
                self.counters.archived += 1;
                self.second(now).archived += 1;
                while (self.archived_upto as usize) < self.archived.len()
                    && self.archived[self.archived_upto as usize]
                {
                    self.archived_upto += 1;
                }
                self.start_pushes(now);
            }
            ArchiveTimer::Timeout => {
                let due = self.last_switch + self.cfg.timeout;
                if now >= due {
                    // CheckArchiveTimeout: switch if anything was written,
                    // and count the check as a switch either way.
                    if insert > self.last_switch_lsn && !insert.is_multiple_of(WAL_SEGMENT_BYTES) {
                        self.counters.switches += 1;
                        self.actions.push_back(ArchiveAction::SwitchSegment);
                    }
                    self.last_switch = now;
                }
                self.actions.push_back(ArchiveAction::Timer {
                    at: self.last_switch + self.cfg.timeout,
                    timer: ArchiveTimer::Timeout,
                });
            }
        }
        self.note(now);
    }

    /// The next thing to do, if any.
    pub fn poll_action(&mut self) -> Option<ArchiveAction> {
        self.actions.pop_front()
    }

    /// The run ended at `end`: the per-second series up to it. Pushes still
    /// in flight never finish.
    pub fn finish(&mut self, end: Nanos) {
        self.observe(end);
        self.note(end);
    }

    /// One entry per second of the run so far (the last may be partial);
    /// per [`Series::width_s`] seconds past
    /// [`SERIES_MAX_POINTS`](super::stats::SERIES_MAX_POINTS) seconds.
    pub fn seconds(&self) -> &Series<ArchiveSecond> {
        &self.seconds
    }

    /// Hand queued segments to free pushes, oldest first.
    fn start_pushes(&mut self, now: Nanos) {
        while self.pushing < self.cfg.target.parallel {
            let Some(segment) = self.queue.pop_front() else {
                break;
            };
            self.pushing += 1;
            self.actions.push_back(ArchiveAction::Timer {
                at: now + self.cfg.target.push_time(WAL_SEGMENT_BYTES),
                timer: ArchiveTimer::Pushed { segment },
            });
        }
    }

    /// The state held unchanged from the last event to `now`: each second
    /// boundary on the way sees the backlog as it was and the RPO grown.
    fn observe(&mut self, now: Nanos) {
        let backlog = self.backlog();
        let queued = self.queued();
        let mut t = self.observed;
        while t < now {
            // To the end of t's point (a second, or more in a long run).
            let width = self.seconds.width_s() * SEC;
            let end = ((t / width).saturating_add(1).saturating_mul(width)).min(now);
            let rpo = self.rpo(end);
            let s = self.second(t);
            s.backlog_max = s.backlog_max.max(backlog);
            s.queued_max = s.queued_max.max(queued);
            s.rpo_max = s.rpo_max.max(rpo);
            t = end;
        }
        self.observed = self.observed.max(now);
    }

    /// The state just after an event at `now`.
    fn note(&mut self, now: Nanos) {
        let backlog = self.backlog();
        let queued = self.queued();
        let rpo = self.rpo(now);
        let s = self.second(now);
        s.backlog_max = s.backlog_max.max(backlog);
        s.queued_max = s.queued_max.max(queued);
        s.rpo_max = s.rpo_max.max(rpo);
    }

    fn second(&mut self, at: Nanos) -> &mut ArchiveSecond {
        self.seconds.at(at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::MS;
    use proptest::prelude::*;

    const SEG: u64 = WAL_SEGMENT_BYTES;

    fn target(latency: Nanos, mb_per_s: f64, parallel: u32) -> ArchiveTarget {
        ArchiveTarget {
            name: "test".into(),
            latency,
            bytes_per_s: mb_per_s * 1e6,
            parallel,
        }
    }

    fn archiver(t: ArchiveTarget, timeout: Nanos) -> Archiver {
        Archiver::new(ArchiveConfig {
            mode: ArchiveMode::On,
            timeout,
            target: t,
        })
    }

    fn drain(a: &mut Archiver) -> Vec<ArchiveAction> {
        std::iter::from_fn(|| a.poll_action()).collect()
    }

    /// Run the archiver to `end`: the WAL reaches segment end k at
    /// `flushes[k]`; timers fire in time order. Returns the switches asked.
    fn drive(a: &mut Archiver, flushes: &[Nanos], end: Nanos) -> u64 {
        let mut timers: Vec<(Nanos, ArchiveTimer)> = Vec::new();
        let mut switches = 0;
        let mut next_flush = 0;
        let mut insert = 0;
        loop {
            for act in drain(a) {
                match act {
                    ArchiveAction::Timer { at, timer } => timers.push((at, timer)),
                    ArchiveAction::SwitchSegment => switches += 1,
                }
            }
            timers.sort();
            let t_timer = timers.first().map(|t| t.0).unwrap_or(Nanos::MAX);
            let t_flush = flushes.get(next_flush).copied().unwrap_or(Nanos::MAX);
            let now = t_timer.min(t_flush);
            if now > end {
                break;
            }
            if t_flush <= t_timer {
                next_flush += 1;
                insert = next_flush as u64 * SEG + 100;
                a.handle_flushed(now, next_flush as u64 * SEG);
            } else {
                let (_, timer) = timers.remove(0);
                a.handle_timer(now, timer, insert);
            }
        }
        a.finish(end);
        switches
    }

    #[test]
    fn push_time_is_latency_plus_bytes_over_throughput() {
        let t = target(100 * MS, 16.777216, 1);
        assert_eq!(t.push_time(SEG), 1100 * MS);
        let cap = target(0, 50.0, 4).capacity_bytes_per_s();
        assert!((cap - 200e6).abs() < 1.0, "{cap}");
    }

    #[test]
    fn a_completed_segment_is_pushed_at_once_and_archived_after_its_push() {
        let mut a = archiver(target(100 * MS, 16.777216, 1), 0);
        a.handle_flushed(2 * SEC, SEG + 5);
        assert_eq!(a.backlog(), 1);
        assert_eq!(
            drain(&mut a),
            vec![ArchiveAction::Timer {
                at: 2 * SEC + 1100 * MS,
                timer: ArchiveTimer::Pushed { segment: 0 }
            }]
        );
        // Before the push ends, everything since the start is at risk.
        assert_eq!(a.rpo(3 * SEC), 3 * SEC);
        a.handle_timer(
            2 * SEC + 1100 * MS,
            ArchiveTimer::Pushed { segment: 0 },
            SEG + 5,
        );
        assert_eq!(a.backlog(), 0);
        assert_eq!(a.counters().archived, 1);
        // Now only the WAL since segment 0 completed is at risk.
        assert_eq!(a.rpo(4 * SEC), 2 * SEC);
    }

    #[test]
    fn one_push_at_a_time_archives_in_order() {
        let mut a = archiver(target(0, 16.777216, 1), 0);
        a.handle_flushed(0, 3 * SEG);
        let acts = drain(&mut a);
        assert_eq!(acts.len(), 1, "only one push at a time: {acts:?}");
        assert_eq!(a.queued(), 2);
        a.handle_timer(SEC, ArchiveTimer::Pushed { segment: 0 }, 3 * SEG);
        assert_eq!(
            drain(&mut a),
            vec![ArchiveAction::Timer {
                at: 2 * SEC,
                timer: ArchiveTimer::Pushed { segment: 1 }
            }]
        );
    }

    #[test]
    fn parallel_pushes_finishing_out_of_order_keep_the_archive_contiguous() {
        let mut a = archiver(target(0, 16.777216, 2), 0);
        a.handle_flushed(0, 2 * SEG);
        assert_eq!(drain(&mut a).len(), 2);
        a.handle_timer(SEC, ArchiveTimer::Pushed { segment: 1 }, 2 * SEG);
        // Segment 0 is still missing: the archive cannot restore past it.
        assert_eq!(a.rpo(SEC), SEC);
        a.handle_timer(SEC, ArchiveTimer::Pushed { segment: 0 }, 2 * SEG);
        assert_eq!(a.rpo(SEC), SEC, "WAL since segment 1 completed at 0");
        assert_eq!(a.backlog(), 0);
    }

    #[test]
    fn archive_timeout_switches_only_after_activity() {
        let mut a = archiver(target(0, 1000.0, 1), 60 * SEC);
        assert_eq!(
            drain(&mut a),
            vec![ArchiveAction::Timer {
                at: 60 * SEC,
                timer: ArchiveTimer::Timeout
            }]
        );
        // WAL written: a switch.
        a.handle_timer(60 * SEC, ArchiveTimer::Timeout, 500);
        assert_eq!(
            drain(&mut a),
            vec![
                ArchiveAction::SwitchSegment,
                ArchiveAction::Timer {
                    at: 120 * SEC,
                    timer: ArchiveTimer::Timeout
                }
            ]
        );
        // The switch completes the segment.
        a.handle_flushed(60 * SEC + MS, SEG);
        drain(&mut a);
        // Nothing written since: no switch, the next check a timeout later.
        a.handle_timer(120 * SEC, ArchiveTimer::Timeout, SEG);
        assert_eq!(
            drain(&mut a),
            vec![ArchiveAction::Timer {
                at: 120 * SEC + MS,
                timer: ArchiveTimer::Timeout
            }]
        );
        a.handle_timer(120 * SEC + MS, ArchiveTimer::Timeout, SEG);
        assert_eq!(
            drain(&mut a),
            vec![ArchiveAction::Timer {
                at: 180 * SEC + MS,
                timer: ArchiveTimer::Timeout
            }]
        );
        assert_eq!(a.counters().switches, 1);
    }

    #[test]
    fn a_segment_completing_naturally_postpones_the_timeout() {
        let mut a = archiver(target(0, 1000.0, 1), 10 * SEC);
        drain(&mut a);
        a.handle_flushed(8 * SEC, SEG);
        drain(&mut a);
        a.handle_timer(10 * SEC, ArchiveTimer::Timeout, SEG + 100);
        assert_eq!(
            drain(&mut a),
            vec![ArchiveAction::Timer {
                at: 18 * SEC,
                timer: ArchiveTimer::Timeout
            }]
        );
    }

    #[test]
    fn seconds_record_backlog_and_the_growing_rpo() {
        let mut a = archiver(target(0, 16.777216 / 3.0, 1), 0);
        // Segments every second, each taking 3 s to push: the backlog grows.
        let flushes: Vec<Nanos> = (1..=9).map(|k| k * SEC).collect();
        drive(&mut a, &flushes, 10 * SEC);
        let s = a.seconds();
        assert!(s.len() >= 10, "{}", s.len());
        assert!(s[9].backlog_max > s[3].backlog_max, "{s:?}");
        assert!(s[9].queued_max > 0);
        // Segment 0 archived at 4 s, 1 at 7 s, 2 at 10 s: at 10 s the
        // archive ends at segment 3, which started when 2 completed (3 s).
        assert_eq!(a.counters().archived, 3);
        assert_eq!(a.rpo(10 * SEC), 7 * SEC);
        assert_eq!(s[0].rpo_max, SEC);
        assert_eq!(s[9].rpo_max, 8 * SEC, "just before 10 s: WAL since 2 s");
    }

    #[test]
    fn a_run_of_pgbenchs_longest_duration_keeps_a_bounded_series() {
        use crate::core::stats::SERIES_MAX_POINTS;
        let mut a = archiver(target(0, 100.0, 1), 0);
        // Two segments, the second after 2^31 s: the series is coarsened
        // as it goes, not grown to a point a second.
        let end = 2_147_483_647 * SEC;
        drive(&mut a, &[SEC, end - 10 * SEC], end);
        let s = a.seconds();
        assert!(s.len() <= SERIES_MAX_POINTS, "{}", s.len());
        assert_eq!(s.width_s(), 8192);
        assert_eq!(s.iter().map(|x| x.archived).sum::<u64>(), 2);
        // The RPO grew over the whole gap, and the maxima survive merging.
        let rpo_max = s.iter().map(|x| x.rpo_max).max().unwrap();
        assert!(rpo_max > end - 20 * SEC, "{rpo_max}");
    }

    proptest! {
        /// Whatever the target and the WAL, the archive holds no more than
        /// was ready, pushes never exceed `parallel`, segments are archived
        /// in order with one push, and the RPO is never more than the run.
        #[test]
        fn archive_invariants(
            gaps in proptest::collection::vec(1u64..3_000, 1..40),
            latency_ms in 0u64..2_000,
            mb_per_s in 1.0f64..500.0,
            parallel in 1u32..6,
            timeout_s in 0u64..30,
        ) {
            let mut a = archiver(target(latency_ms * MS, mb_per_s, parallel), timeout_s * SEC);
            let mut t = 0;
            let flushes: Vec<Nanos> = gaps.iter().map(|g| { t += g * MS; t }).collect();
            let end = t + 5 * SEC;
            drive(&mut a, &flushes, end);
            let c = a.counters();
            prop_assert_eq!(c.ready, flushes.len() as u64);
            prop_assert!(c.archived <= c.ready);
            prop_assert!(a.pushing <= parallel);
            prop_assert_eq!(a.backlog(), a.queued() + a.pushing as u64);
            if parallel == 1 {
                prop_assert_eq!(a.archived_upto, c.archived);
            }
            prop_assert!(a.archived_upto <= c.archived);
            for s in a.seconds() {
                prop_assert!(s.rpo_max <= end);
                prop_assert!(s.queued_max <= s.backlog_max);
            }
            let per_push = target(latency_ms * MS, mb_per_s, parallel).push_time(SEG);
            // Enough time after the last segment to push everything left.
            if per_push * c.ready.div_ceil(parallel as u64) <= 5 * SEC {
                prop_assert_eq!(c.archived, c.ready);
            }
        }
    }
}
