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

use std::collections::VecDeque;

use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};

use super::SimRng;
use super::time::Nanos;
use super::wal::{Lsn, WalIo, flush_ios};

/// The standby's startup process replays WAL at this many bytes per second
/// unless the standby says otherwise. A guess: a cached pgbench-like load
/// replays a 400-byte transaction in about 10 µs.
pub const DEFAULT_REPLAY_BYTES_PER_S: f64 = 40e6;

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

/// How the synchronous standbys are chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SyncMethod {
    /// `FIRST n (...)` (or `n (...)`, or a plain list): the n connected
    /// standbys earliest in the list; a commit waits for all of them.
    Priority,
    /// `ANY n (...)`: a commit waits for any n of the listed standbys.
    Quorum,
}

/// A parsed `synchronous_standby_names` (`SyncRepConfigData`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandbyNames {
    pub method: SyncMethod,
    /// How many standbys a commit waits for (`num_sync`).
    pub num_sync: u32,
    /// The listed names, in order; `*` matches any standby.
    pub members: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Name(String),
    Num(String),
    Any,
    First,
    Comma,
    Open,
    Close,
    Junk(char),
}

/// syncrep_scanner.l: identifiers (letters, digits, `_`, `$`, bytes past
/// ASCII), double-quoted identifiers with `""` for a quote, digit strings,
/// `*`, `,`, `(`, `)`; ANY and FIRST in any case are keywords unless quoted.
/// Tokens come with the text they were read from, for error messages.
fn scan(text: &str) -> Result<Vec<(Token, String)>, String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    let ident_start = |c: char| c.is_ascii_alphabetic() || c == '_' || !c.is_ascii();
    let ident_cont = |c: char| ident_start(c) || c.is_ascii_digit() || c == '$';
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        let token = if matches!(c, ' ' | '\t' | '\n' | '\r' | '\x0c' | '\x0b') {
            i += 1;
            continue;
        } else if c == '"' {
            let mut name = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => return Err("unterminated quoted identifier at end of input".into()),
                    Some('"') if chars.get(i + 1) == Some(&'"') => {
                        name.push('"');
                        i += 2;
                    }
                    Some('"') => {
                        i += 1;
                        break;
                    }
                    Some(&ch) => {
                        name.push(ch);
                        i += 1;
                    }
                }
            }
            Token::Name(name)
        } else if ident_start(c) {
            while i < chars.len() && ident_cont(chars[i]) {
                i += 1;
            }
            let word: String = chars[start..i].iter().collect();
            if word.eq_ignore_ascii_case("any") {
                Token::Any
            } else if word.eq_ignore_ascii_case("first") {
                Token::First
            } else {
                Token::Name(word)
            }
        } else if c.is_ascii_digit() {
            while i < chars.len() && chars[i].is_ascii_digit() {
                i += 1;
            }
            Token::Num(chars[start..i].iter().collect())
        } else {
            i += 1;
            match c {
                '*' => Token::Name("*".into()),
                ',' => Token::Comma,
                '(' => Token::Open,
                ')' => Token::Close,
                other => Token::Junk(other),
            }
        };
        out.push((token, chars[start..i].iter().collect()));
    }
    Ok(out)
}

impl StandbyNames {
    /// Parses `synchronous_standby_names` as syncrep_gram.y does:
    ///
    /// ```text
    /// standby_config: standby_list                      (FIRST 1)
    ///               | NUM '(' standby_list ')'          (FIRST NUM)
    ///               | ANY NUM '(' standby_list ')'
    ///               | FIRST NUM '(' standby_list ')'
    /// standby_list:   standby_name [',' standby_name]...
    /// standby_name:   NAME | NUM
    /// ```
    ///
    /// An empty string means no synchronous standbys (`Ok(None)`). Errors
    /// read like PostgreSQL's ("syntax error at or near \"x\"").
    pub fn parse(text: &str) -> Result<Option<StandbyNames>, String> {
        if text.is_empty() {
            return Ok(None);
        }
        let tokens = scan(text)?;
        let mut pos = 0;
        let err_at = |pos: usize| match tokens.get(pos) {
            Some((_, t)) => format!("syntax error at or near \"{t}\""),
            None => "syntax error at end of input".to_string(),
        };
        let list = |pos: &mut usize| -> Result<Vec<String>, String> {
            let mut names = Vec::new();
            loop {
                match tokens.get(*pos) {
                    Some((Token::Name(n), _)) | Some((Token::Num(n), _)) => names.push(n.clone()),
                    _ => return Err(err_at(*pos)),
                }
                *pos += 1;
                if tokens.get(*pos).map(|t| &t.0) == Some(&Token::Comma) {
                    *pos += 1;
                } else {
                    return Ok(names);
                }
            }
        };
        let counted = |pos: &mut usize, num: &str| -> Result<(u32, Vec<String>), String> {
            if tokens.get(*pos).map(|t| &t.0) != Some(&Token::Open) {
                return Err(err_at(*pos));
            }
            *pos += 1;
            let members = list(pos)?;
            if tokens.get(*pos).map(|t| &t.0) != Some(&Token::Close) {
                return Err(err_at(*pos));
            }
            *pos += 1;
            let n = num
                .parse::<u32>()
                .ok()
                .filter(|&n| n <= i32::MAX as u32)
                .ok_or_else(|| format!("number of synchronous standbys ({num}) is out of range"))?;
            Ok((n, members))
        };
        let (method, num_sync, members) = match tokens.first().map(|t| &t.0) {
            Some(Token::Any) | Some(Token::First) => {
                let method = if tokens[0].0 == Token::Any {
                    SyncMethod::Quorum
                } else {
                    SyncMethod::Priority
                };
                pos = 1;
                let Some((Token::Num(num), _)) = tokens.get(pos) else {
                    return Err(err_at(pos));
                };
                pos += 1;
                let (n, members) = counted(&mut pos, num)?;
                (method, n, members)
            }
            Some(Token::Num(num)) if tokens.get(1).map(|t| &t.0) == Some(&Token::Open) => {
                pos = 1;
                let (n, members) = counted(&mut pos, num)?;
                (SyncMethod::Priority, n, members)
            }
            _ => (SyncMethod::Priority, 1, list(&mut pos)?),
        };
        if pos < tokens.len() {
            return Err(err_at(pos));
        }
        if num_sync == 0 {
            // check_synchronous_standby_names
            return Err(format!(
                "number of synchronous standbys ({num_sync}) must be greater than zero"
            ));
        }
        Ok(Some(StandbyNames {
            method,
            num_sync,
            members,
        }))
    }

    /// A standby's sync priority (`SyncRepGetStandbyPriority`): 0 if no
    /// member names it (an asynchronous standby), else the 1-based position
    /// of the first member that does (names compare case-insensitively, `*`
    /// matches any); 1 for every listed standby with ANY.
    pub fn priority(&self, name: &str) -> u32 {
        let Some(i) = self
            .members
            .iter()
            .position(|m| m == "*" || m.eq_ignore_ascii_case(name))
        else {
            return 0;
        };
        match self.method {
            SyncMethod::Priority => i as u32 + 1,
            SyncMethod::Quorum => 1,
        }
    }

    /// The value as PostgreSQL would accept it back.
    pub fn to_text(&self) -> String {
        let method = match self.method {
            SyncMethod::Priority => "FIRST",
            SyncMethod::Quorum => "ANY",
        };
        format!("{method} {} ({})", self.num_sync, self.members.join(", "))
    }
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
    /// How fast its startup process replays WAL.
    pub replay_bytes_per_s: f64,
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
        }
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
        let took = (bytes as f64 * 1e9 / s.cfg.replay_bytes_per_s) as Nanos;
        s.replaying = Some(s.flushed);
        self.actions.push_back(ReplAction::Timer {
            at: now + self.wakeup + took,
            timer: ReplTimer::Replayed(i as u8),
        });
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
mod tests {
    use super::*;
    use crate::core::time::MS;
    use proptest::prelude::*;

    fn names(text: &str) -> StandbyNames {
        StandbyNames::parse(text).unwrap().unwrap()
    }

    #[test]
    fn parses_every_form_of_the_grammar() {
        let n = names("FIRST 2 (s1, s2, s3)");
        assert_eq!(n.method, SyncMethod::Priority);
        assert_eq!(n.num_sync, 2);
        assert_eq!(n.members, ["s1", "s2", "s3"]);
        let n = names("any 1 (s1,s2)");
        assert_eq!((n.method, n.num_sync), (SyncMethod::Quorum, 1));
        let n = names("2 (a, b)");
        assert_eq!((n.method, n.num_sync), (SyncMethod::Priority, 2));
        let n = names("a, b");
        assert_eq!((n.method, n.num_sync), (SyncMethod::Priority, 1));
        assert_eq!(n.members, ["a", "b"]);
        assert_eq!(names("*").members, ["*"]);
        // A bare number is a standby's name; quoted keywords are names.
        assert_eq!(names("2").members, ["2"]);
        assert_eq!(names("\"any\", \"a\"\"b\"").members, ["any", "a\"b"]);
        assert_eq!(names("s$1, _x, é").members, ["s$1", "_x", "é"]);
        assert_eq!(names("ANYONE").members, ["ANYONE"]);
        assert_eq!(StandbyNames::parse("").unwrap(), None);
    }

    #[test]
    fn rejects_what_postgresql_rejects() {
        for (text, msg) in [
            ("ANY (a)", "syntax error at or near \"(\""),
            ("FIRST 1 a", "syntax error at or near \"a\""),
            ("a b", "syntax error at or near \"b\""),
            ("a,", "syntax error at end of input"),
            ("ANY 1 (a", "syntax error at end of input"),
            (" ", "syntax error at end of input"),
            ("a; b", "syntax error at or near \";\""),
            ("1s", "syntax error at or near \"s\""),
            ("\"a", "unterminated quoted identifier at end of input"),
            (
                "ANY 0 (a)",
                "number of synchronous standbys (0) must be greater than zero",
            ),
            ("any", "syntax error at end of input"),
        ] {
            assert_eq!(StandbyNames::parse(text).unwrap_err(), msg, "{text}");
        }
    }

    #[test]
    fn priorities_follow_the_list_case_insensitively() {
        let n = names("FIRST 1 (S1, *, s3)");
        assert_eq!(n.priority("s1"), 1);
        assert_eq!(n.priority("s3"), 2, "* comes first");
        assert_eq!(n.priority("other"), 2);
        let n = names("ANY 1 (s1, s2)");
        assert_eq!((n.priority("s2"), n.priority("s9")), (1, 0));
        assert_eq!(n.to_text(), "ANY 1 (s1, s2)");
    }

    fn standby(name: &str, rtt_ms: u64) -> StandbyConfig {
        StandbyConfig {
            name: name.into(),
            rtt: RoundTrip {
                median: rtt_ms * MS,
                p99: rtt_ms * MS,
            },
            replay_bytes_per_s: 8192e3,
        }
    }

    fn config(
        names: &str,
        sc: SynchronousCommit,
        standbys: Vec<StandbyConfig>,
    ) -> ReplicationConfig {
        ReplicationConfig {
            standbys,
            names: StandbyNames::parse(names).unwrap(),
            synchronous_commit: sc,
            wakeup: 0,
            wal_segments: 4,
            max_write_bytes: 1 << 20,
            seed: 1,
        }
    }

    /// Runs the replication like a tiny simulator: every standby I/O takes
    /// `io` (writes) or `sync`, timers fire in time order. Returns when the
    /// client is released.
    fn release_time(r: &mut Replication, lsn: Lsn, io: Nanos, sync: Nanos) -> Option<Nanos> {
        let mut events: Vec<(Nanos, Result<ReplTimer, u8>)> = Vec::new();
        let mut now = 0;
        r.handle_local_flush(now, lsn);
        if r.wait(lsn, 7) {
            return Some(now);
        }
        let mut out = Vec::new();
        for _ in 0..10_000 {
            while let Some(a) = r.poll_action() {
                match a {
                    ReplAction::Timer { at, timer } => events.push((at, Ok(timer))),
                    ReplAction::Io { standby, io: w } => {
                        let took = if matches!(w, WalIo::Sync { .. }) {
                            sync
                        } else {
                            io
                        };
                        events.push((now + took, Err(standby)));
                    }
                }
            }
            r.drain_released(&mut out);
            if !out.is_empty() {
                return Some(now);
            }
            events.sort_by_key(|e| std::cmp::Reverse(e.0));
            let (at, e) = events.pop()?;
            now = at;
            match e {
                Ok(t) => r.handle_timer(now, t),
                Err(s) => r.handle_io_done(now, s),
            }
        }
        None
    }

    #[test]
    fn each_synchronous_commit_level_waits_for_its_position() {
        // RTT 2 ms, write 0.1 ms, fdatasync 1 ms, replay of 8 KiB 1 ms.
        let at = |sc| {
            let mut r = Replication::new(&config("s1", sc, vec![standby("s1", 2)]));
            release_time(&mut r, 8192, 100_000, MS)
        };
        assert_eq!(at(SynchronousCommit::Off), Some(0));
        assert_eq!(at(SynchronousCommit::Local), Some(0));
        assert_eq!(at(SynchronousCommit::RemoteWrite), Some(2 * MS + 100_000));
        assert_eq!(at(SynchronousCommit::On), Some(3 * MS + 100_000));
        assert_eq!(at(SynchronousCommit::RemoteApply), Some(4 * MS + 100_000));
    }

    #[test]
    fn no_names_means_asynchronous_standbys() {
        let mut r = Replication::new(&config("", SynchronousCommit::On, vec![standby("s1", 1)]));
        assert!(!r.commits_wait());
        assert!(r.wait(100, 0));
        assert_eq!(r.sync_state(0), "async");
    }

    #[test]
    fn any_waits_for_the_fastest_first_for_the_listed_order() {
        let sbs = || vec![standby("s1", 10), standby("s2", 1), standby("s3", 5)];
        let t = |names: &str| {
            let mut r = Replication::new(&config(names, SynchronousCommit::On, sbs()));
            release_time(&mut r, 100, 0, 0).unwrap()
        };
        assert_eq!(t("ANY 1 (s1, s2, s3)"), MS);
        assert_eq!(t("ANY 2 (s1, s2, s3)"), 5 * MS);
        assert_eq!(t("ANY 3 (s1, s2, s3)"), 10 * MS);
        assert_eq!(t("FIRST 1 (s1, s2, s3)"), 10 * MS);
        assert_eq!(t("FIRST 1 (s3, s1)"), 5 * MS);
        assert_eq!(t("2 (s2, s3, s1)"), 5 * MS);
        assert_eq!(t("s2, s1"), MS);
        assert_eq!(t("*"), 10 * MS, "* ties go to the first declared");
        // s9 is not declared: FIRST 1 falls to the next listed standby.
        assert_eq!(t("FIRST 1 (s9, s2)"), MS);
        let r = Replication::new(&config("FIRST 1 (s3, s1)", SynchronousCommit::On, sbs()));
        assert_eq!(
            (r.sync_state(0), r.sync_state(1), r.sync_state(2)),
            ("potential", "async", "sync")
        );
    }

    #[test]
    fn too_few_matching_standbys_is_refused() {
        let c = config(
            "ANY 2 (s1, s9)",
            SynchronousCommit::On,
            vec![standby("s1", 1)],
        );
        let e = c.check().unwrap_err();
        assert!(
            e.contains("waits for 2 standby(s), but 1 of the declared standbys (s1)"),
            "{e}"
        );
        assert!(
            config(
                "ANY 1 (s1, s9)",
                SynchronousCommit::On,
                vec![standby("s1", 1)]
            )
            .check()
            .is_ok()
        );
    }

    #[test]
    fn walreceiver_writes_then_replies_then_syncs_then_replies() {
        let mut r = Replication::new(&config("s1", SynchronousCommit::On, vec![standby("s1", 0)]));
        r.handle_local_flush(0, 20_000);
        assert!(!r.wait(20_000, 1));
        let Some(ReplAction::Timer { at: 0, timer }) = r.poll_action() else {
            panic!()
        };
        r.handle_timer(0, timer);
        let mut ios = Vec::new();
        let mut replies = 0;
        loop {
            match r.poll_action() {
                Some(ReplAction::Io { io, .. }) => {
                    ios.push(io);
                    r.handle_io_done(0, 0);
                }
                Some(ReplAction::Timer {
                    timer: ReplTimer::Reply(0),
                    ..
                }) => {
                    replies += 1;
                    r.handle_timer(0, ReplTimer::Reply(0));
                }
                Some(ReplAction::Timer { timer, .. }) => r.handle_timer(0, timer),
                None => break,
            }
        }
        assert_eq!(
            ios,
            [
                WalIo::Write {
                    segment: 0,
                    offset: 0,
                    len: 24576
                },
                WalIo::Sync { segment: 0 }
            ]
        );
        assert_eq!(replies, 2, "one after the write, one after the flush");
        let mut out = Vec::new();
        r.drain_released(&mut out);
        assert_eq!(out, [1]);
    }

    proptest! {
        /// Whatever the delays, a commit is released only once its quorum has
        /// confirmed it: never before the k-th fastest standby's round trip
        /// plus its write and fdatasync, and it is released in the end.
        #[test]
        fn released_after_the_quorum_and_only_then(
            rtts in proptest::collection::vec(0u64..20, 1..5),
            k in 1u32..5,
            first in any::<bool>(),
            lsn in 1u64..200_000,
        ) {
            let n = rtts.len() as u32;
            let k = k.min(n);
            let list: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
            let text = format!("{} {k} ({})", if first { "FIRST" } else { "ANY" }, list.join(","));
            let sbs = rtts.iter().enumerate().map(|(i, &ms)| standby(&format!("s{i}"), ms)).collect();
            let mut r = Replication::new(&config(&text, SynchronousCommit::On, sbs));
            let t = release_time(&mut r, lsn, 1_000, 10_000).expect("released");
            let mut cost: Vec<u64> = rtts.iter().map(|ms| ms * MS + 11_000).collect();
            let expect = if first {
                cost[..k as usize].iter().copied().max().unwrap()
            } else {
                cost.sort_unstable();
                cost[k as usize - 1]
            };
            // Writes past 1 MiB or a segment end take more than one I/O.
            prop_assert!(t >= expect, "released at {t}, quorum at {expect}");
            prop_assert!(t <= expect + 40_000, "released at {t}, quorum at {expect}");
        }
    }
}
