//! Streaming replication and synchronous commit: PostgreSQL's walsender
//! (walsender.c), walreceiver (walreceiver.c), the standby's startup process
//! replaying WAL, and the commit wait of syncrep.c.
//!
//! The primary's walsender sends WAL once it is flushed locally (physical
//! replication sends up to `GetFlushRecPtr`). A standby's walreceiver writes
//! what has arrived, replies with its write position, fdatasyncs, replies
//! with its flush position, and wakes the startup process, which replays the
//! flushed WAL and, when asked to (`synchronous_commit = remote_apply` marks
//! its commit records), makes the walreceiver reply once more. A committing
//! backend waits, after its local flush, until the standbys that form its
//! quorum have reported its commit record written, flushed or applied
//! (`SyncRepWaitForLSN`); that wait is wait event IPC:SyncRep.
//!
//! Sans-I/O like the rest of the core: the database feeds in its local
//! flushes, the completions of the standbys' WAL I/O and the timers this
//! module asked for, and drains I/Os, timers and released backends.

mod standby_names;

pub use standby_names::{StandbyNames, SyncMethod};

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};

use super::SimRng;
use super::time::Nanos;
use super::wal::{Lsn, WalIo, flush_ios};

/// `synchronous_commit`: how far a commit waits (the SYNCHRONOUS_COMMIT_*
/// levels of xact.h, in their order).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SynchronousCommit {
    /// Commits do not wait even for the local flush.
    Off,
    /// Wait for the local flush only.
    Local,
    /// Also for the synchronous standbys to have written it (not flushed).
    RemoteWrite,
    /// Also for them to have flushed it (`on`, the default).
    On,
    /// Also for them to have replayed it.
    RemoteApply,
}

impl SynchronousCommit {
    /// The value as `SHOW synchronous_commit` prints it.
    pub fn name(self) -> &'static str {
        match self {
            SynchronousCommit::Off => "off",
            SynchronousCommit::Local => "local",
            SynchronousCommit::RemoteWrite => "remote_write",
            SynchronousCommit::On => "on",
            SynchronousCommit::RemoteApply => "remote_apply",
        }
    }

    /// Whether a commit waits for its WAL to be flushed locally.
    pub fn waits_for_local_flush(self) -> bool {
        self != SynchronousCommit::Off
    }

    /// Which standby position a commit waits for, if any (`SyncRepWaitMode`).
    pub fn wait_mode(self) -> Option<WaitMode> {
        match self {
            SynchronousCommit::Off | SynchronousCommit::Local => None,
            SynchronousCommit::RemoteWrite => Some(WaitMode::Write),
            SynchronousCommit::On => Some(WaitMode::Flush),
            SynchronousCommit::RemoteApply => Some(WaitMode::Apply),
        }
    }
}

/// A standby position a commit can wait for (SYNC_REP_WAIT_WRITE, _FLUSH,
/// _APPLY).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    Write = 0,
    Flush = 1,
    Apply = 2,
}

/// A network round trip: log-normal with this median and 99th percentile
/// (both equal: a fixed delay).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundTrip {
    pub median: Nanos,
    pub p99: Nanos,
}

impl RoundTrip {
    fn sampler(self) -> Option<LogNormal<f64>> {
        if self.p99 <= self.median || self.median == 0 {
            return None;
        }
        let sigma = (self.p99 as f64 / self.median as f64).ln() / 2.326_347_874_040_841;
        LogNormal::new((self.median as f64).ln(), sigma).ok()
    }
}

/// One standby, as the core sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct StandbyConfig {
    /// Its application_name, matched against synchronous_standby_names.
    pub name: String,
    /// The network round trip between primary and standby.
    pub rtt: RoundTrip,
    /// How fast its startup process replays WAL, bytes a second (the
    /// standby's replay=, or the workload's measured replay CPU).
    pub replay_bytes_per_s: f64,
    /// The CPU a full-page image's restore takes, charged instead of its
    /// bytes at `replay_bytes_per_s` (the workload's
    /// `replay_cpu_us_per_fpi`). None: every byte at that rate, as an
    /// explicit replay= asks.
    pub replay_cpu_per_image: Option<Nanos>,
}

/// Streaming replication for one run.
#[derive(Debug, Clone, PartialEq)]
pub struct ReplicationConfig {
    pub standbys: Vec<StandbyConfig>,
    /// synchronous_standby_names, parsed; None: no synchronous standby
    /// (every standby is asynchronous).
    pub names: Option<StandbyNames>,
    /// synchronous_commit.
    pub synchronous_commit: SynchronousCommit,
    /// A woken walsender, walreceiver or startup process runs this much
    /// later (the workload's `process_wakeup`).
    pub wakeup: Nanos,
    /// The WAL ring's segment count and the largest write (as the primary's).
    pub wal_segments: u32,
    pub max_write_bytes: u64,
    /// Seed of the network's delays.
    pub seed: u64,
}

impl ReplicationConfig {
    /// Why commits could never be released, if that is so: fewer declared
    /// standbys match synchronous_standby_names than it asks for.
    /// PostgreSQL would accept this and make every commit wait forever.
    pub fn check(&self) -> Result<(), String> {
        let Some(names) = &self.names else {
            return Ok(());
        };
        let matching = self
            .standbys
            .iter()
            .filter(|s| names.priority(&s.name) > 0)
            .count() as u32;
        if matching < names.num_sync {
            let declared: Vec<&str> = self.standbys.iter().map(|s| s.name.as_str()).collect();
            return Err(format!(
                "synchronous_standby_names = '{}' waits for {} standby(s), but {} of the declared \
                 standbys ({}) match it; every commit would wait forever",
                names.to_text(),
                names.num_sync,
                matching,
                if declared.is_empty() {
                    "none".to_string()
                } else {
                    declared.join(", ")
                }
            ));
        }
        Ok(())
    }
}

/// What the replication wants from the database.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplAction {
    /// Issue this WAL I/O on standby `standby`'s device; report its
    /// completion with `handle_io_done(now, standby)`.
    Io { standby: u8, io: WalIo },
    /// Call `handle_timer(at, timer)` at `at`.
    Timer { at: Nanos, timer: ReplTimer },
}

/// The timers the replication sets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ReplTimer {
    /// WAL sent to standby `0` arrives (the next message in its queue).
    Arrive(u8),
    /// A reply from standby `0` arrives at the primary.
    Reply(u8),
    /// Standby `0`'s startup process finished its replay.
    Replayed(u8),
}

/// A reply (`XLogWalRcvSendReply`): write, flush and apply positions.
type Positions = [Lsn; 3];

/// The walreceiver's state.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Receiver {
    Idle,
    /// Writing and syncing up to `target`; the I/Os still to issue, and
    /// whether one is in flight.
    Busy {
        target: Lsn,
        pending: VecDeque<WalIo>,
        in_flight: bool,
        write_reply_sent: bool,
    },
}

/// Counters of one standby.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StandbyCounters {
    pub wal_writes: u64,
    pub wal_written_bytes: u64,
    pub wal_fdatasyncs: u64,
    /// Replies that reached the primary.
    pub replies: u64,
}

#[derive(Debug)]
struct Standby {
    cfg: StandbyConfig,
    rtt: Option<LogNormal<f64>>,
    /// Its sync priority (0: asynchronous).
    priority: u32,
    /// Walsender: sent up to here.
    sent: Lsn,
    /// Messages on their way to it: (arrival, end LSN), FIFO as TCP is.
    to_standby: VecDeque<(Nanos, Lsn)>,
    /// Replies on their way back.
    to_primary: VecDeque<(Nanos, Positions)>,
    received: Lsn,
    written: Lsn,
    flushed: Lsn,
    applied: Lsn,
    receiver: Receiver,
    /// The startup process replays up to here (None: idle).
    replaying: Option<Lsn>,
    /// What the primary last heard (the walsender's write/flush/apply).
    reported: Positions,
    counters: StandbyCounters,
}

/// Full-page images inserted up to a WAL position: cumulative over the run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct ImageMark {
    /// End of the last record with an image counted here.
    end: Lsn,
    images: u64,
    bytes: u64,
}

/// How many image marks the queue keeps before it folds new ones into the
/// newest (24 B each: 1.5 MB). A standby that falls this far behind has the
/// images of its newest ranges counted a range late, none lost.
pub const MAX_IMAGE_MARKS: usize = 1 << 16;

/// Where the WAL not yet replayed everywhere carries full-page images, for
/// the standbys that charge an image its own CPU: a mark per record with
/// images, popped once every such standby has replayed past it.
#[derive(Debug, Default)]
struct ImageMarks {
    /// Marks past `base.end`, in LSN order.
    marks: VecDeque<ImageMark>,
    /// The totals up to the newest popped mark.
    base: ImageMark,
}

impl ImageMarks {
    /// A record ending at `end` carries `images` images of `bytes` bytes.
    fn push(&mut self, end: Lsn, images: u64, bytes: u64) {
        let last = self.marks.back().copied().unwrap_or(self.base);
        let mark = ImageMark {
            end: end.max(last.end),
            images: last.images + images,
            bytes: last.bytes + bytes,
        };
        let full = self.marks.len() >= MAX_IMAGE_MARKS;
        match self.marks.back_mut() {
            Some(b) if b.end == mark.end || full => *b = mark,
            _ => self.marks.push_back(mark),
        }
    }

    /// The totals of the images in records ending at or before `lsn`.
    fn upto(&self, lsn: Lsn) -> (u64, u64) {
        let n = self.marks.partition_point(|m| m.end <= lsn);
        let m = if n == 0 { self.base } else { self.marks[n - 1] };
        (m.images, m.bytes)
    }

    /// Forget the marks at or before `lsn`.
    fn pop_upto(&mut self, lsn: Lsn) {
        while let Some(&m) = self.marks.front()
            && m.end <= lsn
        {
            self.base = m;
            self.marks.pop_front();
        }
    }
}

/// The walsenders, the standbys and the backends waiting in SyncRep.
#[derive(Debug)]
pub struct Replication {
    names: Option<StandbyNames>,
    mode: Option<WaitMode>,
    wakeup: Nanos,
    segments: u32,
    max_write_bytes: u64,
    rng: SimRng,
    standbys: Vec<Standby>,
    /// `WalSndCtl->lsn[mode]`: released up to here, per mode.
    released: Positions,
    /// Backends waiting: (commit LSN, client).
    waiters: Vec<(Lsn, u32)>,
    actions: VecDeque<ReplAction>,
    woken: Vec<u32>,
    ios: Vec<WalIo>,
    /// Where the images are; kept only if a standby charges them apart.
    images: Option<ImageMarks>,
}

impl Replication {
    /// Streaming replication with every standby connected and caught up at
    /// LSN 0.
    pub fn new(cfg: &ReplicationConfig) -> Replication {
        assert!(cfg.standbys.len() <= u8::MAX as usize);
        let standbys = cfg
            .standbys
            .iter()
            .map(|s| Standby {
                rtt: s.rtt.sampler(),
                priority: cfg.names.as_ref().map_or(0, |n| n.priority(&s.name)),
                cfg: s.clone(),
                sent: 0,
                to_standby: VecDeque::new(),
                to_primary: VecDeque::new(),
                received: 0,
                written: 0,
                flushed: 0,
                applied: 0,
                receiver: Receiver::Idle,
                replaying: None,
                reported: [0; 3],
                counters: StandbyCounters::default(),
            })
            .collect();
        Replication {
            names: cfg.names.clone(),
            mode: cfg.synchronous_commit.wait_mode(),
            wakeup: cfg.wakeup,
            segments: cfg.wal_segments,
            max_write_bytes: cfg.max_write_bytes,
            rng: SimRng::seed_from_u64(cfg.seed ^ 0x5e9c_0a11_0000_0017),
            standbys,
            released: [0; 3],
            waiters: Vec::new(),
            actions: VecDeque::new(),
            woken: Vec::new(),
            ios: Vec::new(),
            images: cfg
                .standbys
                .iter()
                .any(|s| s.replay_cpu_per_image.is_some())
                .then(ImageMarks::default),
        }
    }

    /// The primary inserted a record ending at `end` that carries `images`
    /// full-page images of `bytes` bytes in all.
    pub fn log_images(&mut self, end: Lsn, images: u64, bytes: u64) {
        if let Some(m) = &mut self.images {
            m.push(end, images, bytes);
        }
    }

    /// How many image marks are kept (at most [`MAX_IMAGE_MARKS`]).
    pub fn image_marks(&self) -> usize {
        self.images.as_ref().map_or(0, |m| m.marks.len())
    }

    /// Whether commits wait for standbys at all (`SyncRepRequested` and
    /// `sync_standbys_defined`).
    pub fn commits_wait(&self) -> bool {
        self.mode.is_some() && self.names.is_some() && !self.standbys.is_empty()
    }

    /// The standbys' names, in declaration order.
    pub fn standby_names(&self) -> impl Iterator<Item = &str> {
        self.standbys.iter().map(|s| s.cfg.name.as_str())
    }

    /// Standby `i`'s counters.
    pub fn counters(&self, i: usize) -> StandbyCounters {
        self.standbys[i].counters
    }

    /// Standby `i`'s `sync_state` as pg_stat_replication shows it while all
    /// are streaming: `sync`, `potential` (a listed standby beyond the first
    /// n), `quorum` or `async`.
    pub fn sync_state(&self, i: usize) -> &'static str {
        let Some(names) = &self.names else {
            return "async";
        };
        let s = &self.standbys[i];
        if s.priority == 0 {
            return "async";
        }
        match names.method {
            SyncMethod::Quorum => "quorum",
            SyncMethod::Priority => {
                if self.sync_set().contains(&i) {
                    "sync"
                } else {
                    "potential"
                }
            }
        }
    }

    /// Backends waiting in SyncRep.
    pub fn waiting(&self) -> usize {
        self.waiters.len()
    }

    fn sample_half_rtt(&mut self, i: usize) -> Nanos {
        let s = &self.standbys[i];
        match s.rtt {
            Some(d) => (d.sample(&mut self.rng) / 2.0) as Nanos,
            None => s.cfg.rtt.median / 2,
        }
    }

    /// The primary's WAL is durable up to `flushed`: each walsender, woken,
    /// sends what it has not sent yet.
    pub fn handle_local_flush(&mut self, now: Nanos, flushed: Lsn) {
        for i in 0..self.standbys.len() {
            if flushed <= self.standbys[i].sent {
                continue;
            }
            // The walsender wakes, sends; the walreceiver wakes on arrival.
            let delay = 2 * self.wakeup + self.sample_half_rtt(i);
            let s = &mut self.standbys[i];
            s.sent = flushed;
            let at = s
                .to_standby
                .back()
                .map_or(now + delay, |&(t, _)| t.max(now + delay));
            s.to_standby.push_back((at, flushed));
            self.actions.push_back(ReplAction::Timer {
                at,
                timer: ReplTimer::Arrive(i as u8),
            });
        }
    }

    /// Backend `client` committed with its commit record ending at `lsn`,
    /// flushed locally. Returns true if it need not wait (no synchronous
    /// standby, or the quorum has already confirmed `lsn`); otherwise it
    /// waits and is returned by `drain_released` later.
    pub fn wait(&mut self, lsn: Lsn, client: u32) -> bool {
        let Some(mode) = self.mode else {
            return true;
        };
        if !self.commits_wait() || lsn <= self.released[mode as usize] {
            return true;
        }
        self.waiters.push((lsn, client));
        false
    }

    /// Backends released since the last call.
    pub fn drain_released(&mut self, out: &mut Vec<u32>) {
        out.append(&mut self.woken);
    }

    /// The next thing to do, if any.
    pub fn poll_action(&mut self) -> Option<ReplAction> {
        self.actions.pop_front()
    }

    /// A timer set by a `ReplAction::Timer` is due.
    pub fn handle_timer(&mut self, now: Nanos, timer: ReplTimer) {
        match timer {
            ReplTimer::Arrive(i) => {
                let i = i as usize;
                let (_, upto) = self.standbys[i]
                    .to_standby
                    .pop_front()
                    .expect("an arrival for a message sent");
                let s = &mut self.standbys[i];
                s.received = s.received.max(upto);
                if s.receiver == Receiver::Idle {
                    self.start_write(i);
                }
            }
            ReplTimer::Reply(i) => {
                let i = i as usize;
                let (_, pos) = self.standbys[i]
                    .to_primary
                    .pop_front()
                    .expect("a reply for a reply sent");
                let s = &mut self.standbys[i];
                s.counters.replies += 1;
                for (r, p) in s.reported.iter_mut().zip(pos) {
                    *r = (*r).max(p);
                }
                self.release();
            }
            ReplTimer::Replayed(i) => {
                let i = i as usize;
                let s = &mut self.standbys[i];
                s.applied = s.replaying.take().expect("a replay in progress");
                self.forget_replayed_images();
                // A commit record written under remote_apply asks for a
                // reply once replayed (XACT_COMPLETION_APPLY_FEEDBACK).
                if self.mode == Some(WaitMode::Apply) {
                    self.reply(now, i);
                }
                self.start_replay(now, i);
            }
        }
        self.issue_next();
    }

    /// Standby `standby`'s WAL I/O in flight finished at `now`.
    pub fn handle_io_done(&mut self, now: Nanos, standby: u8) {
        let i = standby as usize;
        let Receiver::Busy {
            target,
            pending,
            in_flight,
            write_reply_sent,
        } = &mut self.standbys[i].receiver
        else {
            panic!("standby I/O completed while its walreceiver is idle");
        };
        assert!(*in_flight, "standby I/O completed that was not issued");
        *in_flight = false;
        let target = *target;
        // Written, not yet flushed: XLogWalRcvSendReply after the writes.
        let writes_done = pending.iter().all(|io| matches!(io, WalIo::Sync { .. }));
        let send_write_reply = writes_done && !*write_reply_sent;
        if send_write_reply {
            *write_reply_sent = true;
        }
        let all_done = pending.is_empty();
        if send_write_reply {
            self.standbys[i].written = target;
            self.reply(now, i);
        }
        if all_done {
            // XLogWalRcvFlush: flushed, the startup process is woken, and
            // the primary told.
            let s = &mut self.standbys[i];
            s.written = target;
            s.flushed = target;
            s.receiver = Receiver::Idle;
            self.reply(now, i);
            self.start_replay(now, i);
            if self.standbys[i].received > self.standbys[i].written {
                self.start_write(i);
            }
        }
        self.issue_next();
    }

    /// The walreceiver writes everything received and not written yet.
    fn start_write(&mut self, i: usize) {
        let s = &mut self.standbys[i];
        let mut ios = std::mem::take(&mut self.ios);
        ios.clear();
        flush_ios(
            s.written,
            s.received,
            self.segments,
            self.max_write_bytes,
            &mut ios,
        );
        if ios.is_empty() {
            s.written = s.received;
            self.ios = ios;
            return;
        }
        s.receiver = Receiver::Busy {
            target: s.received,
            pending: ios.drain(..).collect(),
            in_flight: false,
            write_reply_sent: false,
        };
        self.ios = ios;
    }

    /// Hand out the next I/O of every walreceiver that has none in flight.
    fn issue_next(&mut self) {
        for (i, s) in self.standbys.iter_mut().enumerate() {
            if let Receiver::Busy {
                pending, in_flight, ..
            } = &mut s.receiver
                && !*in_flight
                && let Some(io) = pending.pop_front()
            {
                *in_flight = true;
                match io {
                    WalIo::Write { len, .. } => {
                        s.counters.wal_writes += 1;
                        s.counters.wal_written_bytes += len;
                    }
                    WalIo::Sync { .. } => s.counters.wal_fdatasyncs += 1,
                }
                self.actions.push_back(ReplAction::Io {
                    standby: i as u8,
                    io,
                });
            }
        }
    }

    fn start_replay(&mut self, now: Nanos, i: usize) {
        let s = &mut self.standbys[i];
        if s.replaying.is_some() || s.flushed <= s.applied {
            return;
        }
        let bytes = s.flushed - s.applied;
        let took = match (s.cfg.replay_cpu_per_image, &self.images) {
            (Some(per_image), Some(m)) => {
                // The records' bytes at the rate, each image at its own CPU.
                let (i0, b0) = m.upto(s.applied);
                let (i1, b1) = m.upto(s.flushed);
                let records = bytes.saturating_sub(b1 - b0);
                (records as f64 * 1e9 / s.cfg.replay_bytes_per_s) as Nanos + (i1 - i0) * per_image
            }
            _ => (bytes as f64 * 1e9 / s.cfg.replay_bytes_per_s) as Nanos,
        };
        s.replaying = Some(s.flushed);
        self.actions.push_back(ReplAction::Timer {
            at: now + self.wakeup + took,
            timer: ReplTimer::Replayed(i as u8),
        });
    }

    /// Drop the image marks every standby that charges images has replayed.
    fn forget_replayed_images(&mut self) {
        let Some(m) = &mut self.images else {
            return;
        };
        let applied = self
            .standbys
            .iter()
            .filter(|s| s.cfg.replay_cpu_per_image.is_some())
            .map(|s| s.applied)
            .min();
        if let Some(a) = applied {
            m.pop_upto(a);
        }
    }

    /// The walreceiver sends its positions to the primary, where its
    /// walsender wakes to read them.
    fn reply(&mut self, now: Nanos, i: usize) {
        let delay = self.wakeup + self.sample_half_rtt(i);
        let s = &mut self.standbys[i];
        let pos = [s.written, s.flushed, s.applied];
        let at = s
            .to_primary
            .back()
            .map_or(now + delay, |&(t, _)| t.max(now + delay));
        s.to_primary.push_back((at, pos));
        self.actions.push_back(ReplAction::Timer {
            at,
            timer: ReplTimer::Reply(i as u8),
        });
    }

    /// The synchronous standbys under FIRST: the `num_sync` listed ones
    /// with the highest priority (lowest number), ties to the earlier
    /// declared (`SyncRepGetCandidateStandbys`).
    fn sync_set(&self) -> Vec<usize> {
        let Some(names) = &self.names else {
            return Vec::new();
        };
        let mut c: Vec<usize> = (0..self.standbys.len())
            .filter(|&i| self.standbys[i].priority > 0)
            .collect();
        if names.method == SyncMethod::Priority {
            c.sort_by_key(|&i| (self.standbys[i].priority, i));
            c.truncate(names.num_sync as usize);
        }
        c
    }

    /// `SyncRepGetSyncRecPtr`: the positions the synchronous standbys have
    /// all reached (FIRST: the minimum over the chosen ones; ANY: per
    /// position, the n-th largest), or None if too few standbys count.
    fn sync_positions(&self) -> Option<Positions> {
        let names = self.names.as_ref()?;
        let set = self.sync_set();
        let n = names.num_sync as usize;
        if set.len() < n {
            return None;
        }
        let mut out = [0; 3];
        for (k, o) in out.iter_mut().enumerate() {
            let mut v: Vec<Lsn> = set.iter().map(|&i| self.standbys[i].reported[k]).collect();
            *o = match names.method {
                SyncMethod::Priority => v.into_iter().min().unwrap_or(0),
                SyncMethod::Quorum => {
                    v.sort_unstable_by(|a, b| b.cmp(a));
                    v[n - 1]
                }
            };
        }
        Some(out)
    }

    /// `SyncRepReleaseWaiters` / `SyncRepWakeQueue`.
    fn release(&mut self) {
        let Some(mode) = self.mode else {
            return;
        };
        let Some(pos) = self.sync_positions() else {
            return;
        };
        for (r, p) in self.released.iter_mut().zip(pos) {
            *r = (*r).max(p);
        }
        let upto = self.released[mode as usize];
        let woken = &mut self.woken;
        self.waiters.retain(|&(lsn, c)| {
            if lsn <= upto {
                woken.push(c);
                false
            } else {
                true
            }
        });
    }
}

#[cfg(test)]
mod tests;
