//! The client backends: each runs its client's transactions step by step
//! (`advance`) over the buffer pool, the WAL, row locks and the CPU, until
//! it has to wait; then an event makes it ready again. In a standby's
//! catch-up, backend 0 is the startup process replaying WAL.

use super::*;

/// What a client backend is waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Wait {
    /// Runnable (in the ready queue or being advanced).
    Running,
    /// A round trip or a retry timer.
    Timer,
    /// On a core or queued for one.
    Cpu,
    /// Its client's thread has to read the last reply and send the next
    /// statement.
    ClientThread,
    /// Its own read of a page into a buffer.
    Read,
    /// Another backend's read of the page it wants.
    BufferIo,
    /// WAL flush up to a dirty victim's LSN.
    VictimFlush,
    /// Its write of a dirty victim.
    VictimWrite,
    /// A row lock.
    Lock,
    /// The commit's WAL flush.
    CommitFlush,
    /// The synchronous standbys' confirmation of its commit (IPC:SyncRep).
    SyncRep,
    /// WAL buffer space (its records would overrun wal_buffers).
    WalSpace,
    /// Rate-limited run: idle until its next transaction's scheduled start.
    Schedule,
    /// Finished its transactions.
    Stopped,
}

/// A client backend: its transaction and where it is in it.
#[derive(Debug)]
pub(super) struct Client {
    pub(super) steps: Vec<Step>,
    pub(super) pc: usize,
    pub(super) clock: TxClock,
    pub(super) locks: Vec<RowId>,
    pub(super) has_xid: bool,
    pub(super) wait: Wait,
    /// A pinned victim buffer being cleaned for this client's miss.
    pub(super) victim: Option<BufId>,
    /// A buffer this client read, valid and pinned, for the step it re-runs.
    pub(super) held: Option<BufId>,
    /// Since when it has been on (or queued for) a core to finish reading a
    /// block: the read syscall's copy is PostgreSQL's read time
    /// (blk_read_time), so it stays in page_read.
    pub(super) read_cpu_from: Option<Nanos>,
    /// Its pgbench thread sent it a statement while a core was idle: the
    /// wake-up costs it the round trip in CPU (see `thread_served`).
    pub(super) idle_wake: bool,
    /// CPU owed for WAL records inserted while the page cache was full
    /// (`ReclaimCpu::per_kib_written`), spent before the commit.
    pub(super) wal_cpu_due: Nanos,
    pub(super) done: u64,
    /// Rate-limited runs: scheduled start of its next transaction.
    pub(super) sched: Nanos,
    /// Where its last commit record ends.
    pub(super) commit_lsn: Lsn,
    /// Its pending writeback of victims it writes (backend_flush_after).
    pub(super) writeback: WritebackContext,
}

impl Client {
    /// A backend about to start `steps`, its first transaction, at time 0.
    pub(super) fn new(steps: Vec<Step>, writeback: WritebackContext) -> Client {
        Client {
            steps,
            pc: 0,
            clock: TxClock::start(0, Bucket::Other),
            locks: Vec::new(),
            has_xid: false,
            wait: Wait::Running,
            victim: None,
            held: None,
            read_cpu_from: None,
            idle_wake: false,
            wal_cpu_due: 0,
            done: 0,
            sched: 0,
            commit_lsn: 0,
            writeback,
        }
    }
}

impl Database {
    /// Client `c` needs `demand` of CPU: it runs, or queues for a core.
    pub(super) fn start_cpu(&mut self, now: Nanos, c: u32, demand: Nanos) {
        let cl = &mut self.clients[c as usize];
        cl.wait = Wait::Cpu;
        // A read's CPU, on a core or queued, stays in page_read.
        let (running, queued) = match cl.read_cpu_from {
            Some(_) => (Bucket::PageRead, Bucket::PageRead),
            None => (Bucket::Cpu, Bucket::CpuQueue),
        };
        let p = Proc::Backend(c);
        match self.cpu.request(now, p.into(), demand) {
            Some(finish) => {
                cl.clock.switch(now, running);
                self.set_timer(finish, Timer::CpuDone(p));
            }
            None => cl.clock.switch(now, queued),
        }
    }

    /// Client `c` got a block from the kernel (disk or page cache): the
    /// syscall and the 8 KiB copy are its CPU, inside the read as
    /// PostgreSQL times it.
    pub(super) fn start_read_cpu(&mut self, now: Nanos, c: u32, demand: Nanos) {
        self.clients[c as usize].read_cpu_from = Some(now);
        let demand = self.cfg.cpu_growth.io(demand, self.active);
        self.start_cpu(now, c, demand);
    }

    /// Advance client `c` through its steps until it has to wait.
    pub(super) fn advance(&mut self, now: Nanos, c: u32) {
        loop {
            let ci = c as usize;
            if self.clients[ci].wait == Wait::Stopped {
                return;
            }
            let Some(&step) = self.clients[ci].steps.get(self.clients[ci].pc) else {
                self.finish_transaction(now, c);
                if self.clients[ci].wait != Wait::Running {
                    return;
                }
                continue;
            };
            match step {
                Step::RoundTrip if !self.threads.is_empty() => {
                    // pgbench spreads its clients over its threads.
                    let t = ci % self.threads.len();
                    let cl = &mut self.clients[ci];
                    cl.pc += 1;
                    cl.clock.switch(now, Bucket::Client);
                    cl.wait = Wait::ClientThread;
                    self.thread_reply(now, t, c);
                    return;
                }
                Step::RoundTrip => {
                    if self.round_trip(now, c) {
                        return;
                    }
                }
                Step::Cpu(demand) => {
                    let grown = self.statement_cpu(demand);
                    let cl = &mut self.clients[ci];
                    cl.pc += 1;
                    // The statement's CPU, and its wake-up's if that found
                    // an idle core (`thread_served`).
                    let demand = grown
                        + if std::mem::take(&mut cl.idle_wake) {
                            self.cfg.round_trip
                        } else {
                            0
                        };
                    if demand > 0 {
                        if self.prefetching {
                            self.prefetch_buffers(ci);
                        }
                        self.start_cpu(now, c, demand);
                        return;
                    }
                }
                Step::Read(block) => {
                    let Some(b) = self.access(now, c, block, false) else {
                        return;
                    };
                    self.pool.unpin(b);
                    self.clients[ci].pc += 1;
                }
                Step::Modify { block, wal_bytes } | Step::Extend { block, wal_bytes } => {
                    let extend = matches!(step, Step::Extend { .. });
                    if self.modify(now, c, block, wal_bytes, extend) {
                        return;
                    }
                }
                Step::Lock(row) => {
                    let cl = &mut self.clients[ci];
                    cl.pc += 1;
                    cl.locks.push(row);
                    if !self.locks.acquire(row, c) {
                        cl.clock.switch(now, Bucket::LockWait);
                        cl.wait = Wait::Lock;
                        return;
                    }
                }
                Step::Commit { wal_bytes } => {
                    // The CPU of the transaction's WAL written under a full
                    // page cache, before it commits; the step runs again.
                    let due = std::mem::take(&mut self.clients[ci].wal_cpu_due);
                    if due > 0 {
                        let demand = self.cfg.cpu_growth.io(due, self.active);
                        self.start_cpu(now, c, demand);
                        return;
                    }
                    let lsn = self.wal.insert(wal_bytes as u64);
                    self.stats.second(now).wal_bytes += wal_bytes as u64;
                    let cl = &mut self.clients[ci];
                    cl.pc += 1;
                    cl.commit_lsn = lsn;
                    if self.cfg.synchronous_commit.waits_for_local_flush() && cl.has_xid {
                        if !self.wal.wait_for_flush(lsn, Waiter::Client(c)) {
                            cl.clock.switch(now, Bucket::WalFsync);
                            cl.wait = Wait::CommitFlush;
                            self.flush_requested_while_running();
                            return;
                        }
                        if let Some(r) = &mut self.repl
                            && !r.wait(lsn, c)
                        {
                            cl.clock.switch(now, Bucket::SyncRep);
                            cl.wait = Wait::SyncRep;
                            return;
                        }
                    } else if cl.has_xid {
                        self.async_commit_nudge();
                    }
                }
                Step::ReadWal { bytes } => {
                    if self.read_wal(now, c, bytes) {
                        return;
                    }
                }
                Step::Prefetch(block) => {
                    self.clients[ci].pc += 1;
                    self.start_prefetch(now, block);
                }
            }
        }
    }

    /// Client `c`'s round trip to pgbench: true when it now waits (a timer,
    /// or the round trip and the CPU burst after it as one).
    fn round_trip(&mut self, now: Nanos, c: u32) -> bool {
        let writers_cpu = self.writes_cost_cpu();
        let ci = c as usize;
        let cl = &mut self.clients[ci];
        cl.pc += 1;
        let rt = self.cfg.round_trip;
        // With a core for every client (and for the WAL flush leaders)
        // the CPU never queues, so a round trip and the CPU burst
        // after it are one timer: same result, half the events
        // (this is most of `model`'s work on a cached data set).
        // Each background writer has at most one burst of its own.
        if let Some(&Step::Cpu(demand)) = cl.steps.get(cl.pc)
            && self.cfg.cpus
                >= self.cfg.clients
                    + if self.cfg.wal_flush_cpu > 0 { 2 } else { 0 }
                    + if writers_cpu { WRITERS as u32 } else { 0 }
            && demand > 0
        {
            cl.pc += 1;
            cl.clock.switch(now, Bucket::Other);
            cl.wait = Wait::Cpu;
            let demand = self.statement_cpu(demand);
            let p = Proc::Backend(c).into();
            let mut cpu_start = now + rt;
            let mut finish = self
                .cpu
                .request(cpu_start, p, demand)
                .expect("a free core for every client");
            // A statement that touches nothing after its CPU (BEGIN) ends
            // where the next one's round trip starts: no event of its own.
            while self.chains_statements()
                && let [Step::RoundTrip, Step::Cpu(next), ..] =
                    self.clients[ci].steps[self.clients[ci].pc..]
                && next > 0
            {
                let next = self.statement_cpu(next);
                let handed = self.cpu.release(finish, p);
                debug_assert!(handed.is_none(), "CPU queued with a core per client");
                let cl = &mut self.clients[ci];
                cl.pc += 2;
                cl.clock.switch(cpu_start, Bucket::Cpu);
                cl.clock.switch(finish, Bucket::Other);
                cpu_start = finish + rt;
                finish = self
                    .cpu
                    .request(cpu_start, p, next)
                    .expect("a free core for every client");
            }
            if self.prefetching {
                self.prefetch_buffers(ci);
            }
            self.set_timer(
                finish,
                Timer::RoundTripThenCpu {
                    client: c,
                    cpu_start,
                },
            );
            return true;
        }
        if rt > 0 {
            cl.clock.switch(now, Bucket::Other);
            cl.wait = Wait::Timer;
            self.set_timer(now + rt, Timer::Resume(c));
            return true;
        }
        false
    }

    /// Whether a client with a core of its own runs a statement that
    /// touches nothing shared straight on into the next round trip and
    /// burst, booking both bursts at once. Only where nothing between
    /// could tell: no hyperthread sibling whose load sets a burst's length,
    /// and a fixed number of active backends (no rate limit, no
    /// transaction count), which sets each burst's CPU growth.
    fn chains_statements(&self) -> bool {
        self.cfg.threads_per_core <= 1
            && self.cfg.rate.is_none()
            && self.cfg.transactions_per_client.is_none()
    }

    /// Client `c` changes `block` (a new page when `extend`), logging
    /// `wal_bytes`: true when it now waits (for the page, or for WAL space).
    fn modify(&mut self, now: Nanos, c: u32, block: u64, wal_bytes: u32, extend: bool) -> bool {
        let ci = c as usize;
        let Some(b) = self.access(now, c, block, extend) else {
            return true;
        };
        if self.recovery.is_some() {
            // Redo writes no WAL: the page's LSN is its
            // record's, the replay position, which writing it
            // must see covered by minRecoveryPoint.
            let lsn = self.recovery.as_ref().map_or(0, Recovery::replayed);
            self.pool.mark_dirty(b, lsn);
            self.pool.unpin(b);
            self.clients[ci].pc += 1;
            return false;
        }
        // First change since the redo point: log the whole page
        // (a new page is initialised by its record instead).
        if !extend {
            self.count_dead_tuple(block);
        }
        let first_touch = self.touched.insert(block);
        let mut bytes = wal_bytes as u64;
        let image = first_touch && !extend && self.cfg.full_page_writes;
        if image {
            bytes += self.fpi_bytes;
            self.stats.counters.full_page_images += 1;
        }
        // A page changed by another page's record (the new home
        // of a moved row) takes that record's LSN: no record of its own.
        let lsn = if bytes == 0 {
            self.wal.insert_lsn()
        } else {
            self.wal.insert(bytes)
        };
        if image {
            self.log_image(lsn, self.fpi_bytes);
        }
        self.stats.second(now).wal_bytes += bytes;
        self.pool.mark_dirty(b, lsn);
        self.pool.unpin(b);
        let wal_cpu = if self.cfg.reclaim_cpu.per_kib_written > 0 && self.os_cache.is_full() {
            bytes * self.cfg.reclaim_cpu.per_kib_written / 1024
        } else {
            0
        };
        let cl = &mut self.clients[ci];
        cl.wal_cpu_due += wal_cpu;
        cl.has_xid = true;
        cl.pc += 1;
        if !self.wal_space(now, c) {
            return true;
        }
        false
    }

    /// The startup process (client `c`) replays `bytes` of WAL, reading
    /// ahead: true when it now waits for the read.
    fn read_wal(&mut self, now: Nanos, c: u32, bytes: u32) -> bool {
        let ci = c as usize;
        let Some(rec) = self.recovery.as_mut() else {
            self.clients[ci].pc += 1;
            return false;
        };
        let need = rec.need_wal(u64::from(bytes));
        if let Some(w) = need.issue {
            rec.wal_issued(w);
            let (segment, offset) = w.place(self.cfg.wal_segments);
            self.issue(
                IoKind::WalRead {
                    segment,
                    offset,
                    len: w.len,
                },
                Purpose::WalRead { client: c },
                now,
            );
        }
        if need.wait {
            // The WAL read's wait: `other` in the breakdown,
            // which has no client round trip in recovery.
            let cl = &mut self.clients[ci];
            cl.clock.switch(now, Bucket::Other);
            cl.wait = Wait::Read;
            return true;
        }
        if let Some(rec) = self.recovery.as_mut() {
            rec.replay(u64::from(bytes));
        }
        self.stats.second(now).wal_bytes += u64::from(bytes);
        self.clients[ci].pc += 1;
        false
    }

    /// Get `block` into a pinned, valid buffer for client `c`; None if the
    /// client has to wait (it re-runs the step when woken).
    #[inline]
    pub(super) fn access(&mut self, now: Nanos, c: u32, block: u64, extend: bool) -> Option<BufId> {
        let ci = c as usize;
        if let Some(b) = self.clients[ci].held.take() {
            debug_assert_eq!(self.pool.block(b), Some(block));
            return Some(b);
        }
        // The hit is the common case and stays inline; the rest is not.
        let found = self.pool.lookup(block);
        if let Lookup::Hit(b) = found {
            self.stats.counters.buffer_hits += 1;
            if let Some(v) = self.clients[ci].victim.take() {
                self.pool.unpin(v);
            }
            return Some(b);
        }
        self.access_slow(now, c, block, extend, found)
    }

    /// `access` when the block is not in a valid buffer.
    #[inline(never)]
    pub(super) fn access_slow(
        &mut self,
        now: Nanos,
        c: u32,
        block: u64,
        extend: bool,
        found: Lookup,
    ) -> Option<BufId> {
        let ci = c as usize;
        match found {
            Lookup::Hit(_) => unreachable!("access handles hits"),
            Lookup::ReadInProgress(b) => {
                if let Some(v) = self.clients[ci].victim.take() {
                    self.pool.unpin(v);
                }
                self.buf_waiters.entry(b).or_default().push(c);
                let cl = &mut self.clients[ci];
                cl.clock.switch(now, Bucket::PageRead);
                cl.wait = Wait::BufferIo;
                return None;
            }
            Lookup::Miss => {}
        }
        loop {
            let v = match self.clients[ci].victim.take() {
                Some(v) => v,
                None => match self.pool.clock_sweep() {
                    Some(v) => v,
                    None => {
                        // Every buffer pinned: PostgreSQL would error out; wait
                        // a little and retry rather than abort the run.
                        let cl = &mut self.clients[ci];
                        cl.clock.switch(now, Bucket::BufferWait);
                        cl.wait = Wait::Timer;
                        self.set_timer(now + MS, Timer::Resume(c));
                        return None;
                    }
                },
            };
            let assigned = if extend {
                self.pool.assign_new_page(v, block)
            } else {
                self.pool.assign(v, block)
            };
            if assigned {
                if extend {
                    self.stats.counters.extends += 1;
                    return Some(v);
                }
                self.stats.counters.buffer_misses += 1;
                if let Some(rec) = &mut self.recovery {
                    // recovery_prefetch asked for it: wait for that read.
                    if rec.is_prefetching(block) {
                        rec.wait_for_prefetch(block, v);
                        let cl = &mut self.clients[ci];
                        cl.clock.switch(now, Bucket::PageRead);
                        cl.wait = Wait::Read;
                        return None;
                    }
                    rec.unqueue(block);
                }
                if self.os_cache.read(block) {
                    self.stats.counters.os_cache_hits += 1;
                    self.pool.read_done(v);
                    if self.cfg.read_cpu == 0 {
                        return Some(v);
                    }
                    // A page-cache hit is still a read syscall and a copy.
                    self.clients[ci].held = Some(v);
                    self.start_read_cpu(now, c, self.cfg.read_cpu);
                    return None;
                }
                self.stats.counters.data_reads += 1;
                self.issue(
                    IoKind::ReadPage { block },
                    Purpose::Read { client: c, buf: v },
                    now,
                );
                let cl = &mut self.clients[ci];
                cl.clock.switch(now, Bucket::PageRead);
                cl.wait = Wait::Read;
                return None;
            }
            if self.pool.can_write(v) {
                // A dirty victim: WAL up to its LSN must be durable, then the
                // backend writes it itself (GetVictimBuffer → FlushBuffer).
                let lsn = self.pool.lsn(v);
                let cl = &mut self.clients[ci];
                cl.victim = Some(v);
                cl.clock.switch(now, Bucket::BufferWait);
                if self.flush_for_write(now, lsn, Waiter::Client(c)) {
                    self.start_victim_write(now, c);
                } else {
                    self.clients[ci].wait = Wait::VictimFlush;
                    self.flush_requested_while_running();
                }
                return None;
            }
            // Being written by someone else, or pinned meanwhile: next one.
            self.pool.unpin(v);
        }
    }

    /// Client `c` writes its dirty victim itself, once the WAL covering the
    /// page is durable (or retries the step if someone else cleaned it).
    pub(super) fn start_victim_write(&mut self, now: Nanos, c: u32) {
        let v = self.clients[c as usize].victim.expect("victim to write");
        if !self.pool.can_write(v) {
            // Cleaned by someone else meanwhile: just retry the step.
            self.make_ready(c);
            return;
        }
        // Changed again while its WAL was flushed: FlushBuffer flushes WAL up
        // to the LSN the page has when it is written.
        let lsn = self.pool.lsn(v);
        if !self.flush_for_write(now, lsn, Waiter::Client(c)) {
            self.clients[c as usize].wait = Wait::VictimFlush;
            return;
        }
        let (block, lsn) = self.pool.start_write(v);
        assert!(
            self.recovery.is_some() || self.wal.flushed_lsn() >= lsn,
            "dirty victim written before its WAL"
        );
        self.stats.counters.backend_writes += 1;
        self.clients[c as usize].wait = Wait::VictimWrite;
        let kind = self.clients[c as usize].writeback.write_page(block);
        self.issue(
            kind,
            Purpose::VictimWrite {
                client: c,
                buf: v,
                block,
            },
            now,
        );
    }

    /// If unwritten WAL exceeds wal_buffers, the inserting backend must wait
    /// for it to be written (`AdvanceXLInsertBuffer`). Returns true if it can
    /// go on.
    pub(super) fn wal_space(&mut self, now: Nanos, c: u32) -> bool {
        let unflushed = self.wal.insert_lsn() - self.wal.flushed_lsn();
        if unflushed <= self.cfg.wal_buffers_bytes {
            return true;
        }
        let need = self.wal.insert_lsn() - self.cfg.wal_buffers_bytes;
        if self.wal.wait_for_flush(need, Waiter::Client(c)) {
            return true;
        }
        let cl = &mut self.clients[c as usize];
        cl.clock.switch(now, Bucket::BufferWait);
        cl.wait = Wait::WalSpace;
        false
    }

    /// Client `c`'s commit is durable locally: with synchronous standbys it
    /// now waits for them (`SyncRepWaitForLSN`); otherwise it goes on.
    pub(super) fn commit_flushed(&mut self, now: Nanos, c: u32) {
        let lsn = self.clients[c as usize].commit_lsn;
        if let Some(r) = &mut self.repl
            && !r.wait(lsn, c)
        {
            let cl = &mut self.clients[c as usize];
            cl.clock.switch(now, Bucket::SyncRep);
            cl.wait = Wait::SyncRep;
            return;
        }
        self.make_ready(c);
    }

    /// Client `c` ran its transaction's last step: its locks go, its
    /// latency is recorded, and it stops or takes its next transaction.
    pub(super) fn finish_transaction(&mut self, now: Nanos, c: u32) {
        let ci = c as usize;
        let mut granted = std::mem::take(&mut self.granted);
        {
            let cl = &mut self.clients[ci];
            self.locks.release_all(&cl.locks, c, &mut granted);
            cl.locks.clear();
            cl.has_xid = false;
            let (latency, spent) = cl.clock.finish(now);
            cl.done += 1;
            self.stats.record_transaction(now, latency, &spent);
            if self.cfg.latency_limit.is_some_and(|l| latency > l) {
                self.stats.counters.late += 1;
            }
        }
        for g in granted.drain(..) {
            self.make_ready(g);
        }
        self.granted = granted;
        let caught_up = self.recovery.as_ref().is_some_and(Recovery::caught_up);
        let cl = &mut self.clients[ci];
        if caught_up
            || self
                .cfg
                .transactions_per_client
                .is_some_and(|n| cl.done >= n)
        {
            cl.wait = Wait::Stopped;
            self.active -= 1;
            if self.clients.iter().all(|c| c.wait == Wait::Stopped) {
                self.finish(now);
            }
            return;
        }
        let mut steps = std::mem::take(&mut cl.steps);
        self.workload.next_transaction(&mut self.rng, &mut steps);
        if self.prefetching {
            self.prefetch(&steps);
        }
        let cl = &mut self.clients[ci];
        cl.steps = steps;
        cl.pc = 0;
        if self.cfg.rate.is_some() {
            self.schedule_next(now, c);
        } else {
            cl.clock = TxClock::start(now, Bucket::Other);
            cl.wait = Wait::Running;
        }
    }

    /// Rate-limited runs (pgbench -R): each client starts transactions on its
    /// own Poisson schedule of rate/clients per second. Latency counts from
    /// the scheduled start, so a saturated server shows its queueing instead
    /// of hiding it (no coordinated omission). With a latency limit, a
    /// transaction already later than the limit when its client is free is
    /// skipped, as pgbench does.
    pub(super) fn schedule_next(&mut self, now: Nanos, c: u32) {
        let rate = self.cfg.rate.expect("rate-limited run");
        let mean_gap = self.cfg.clients as f64 / rate * 1e9;
        let cl = &mut self.clients[c as usize];
        loop {
            let u: f64 = rand::RngExt::random(&mut self.rng);
            cl.sched += (-(1.0 - u).ln() * mean_gap) as Nanos;
            match self.cfg.latency_limit {
                Some(limit) if now > cl.sched + limit => self.stats.counters.skipped += 1,
                _ => break,
            }
        }
        if cl.sched > now {
            cl.wait = Wait::Schedule;
            self.active -= 1;
            let at = cl.sched;
            self.set_timer(at, Timer::Start(c));
        } else {
            cl.clock = TxClock::start(cl.sched, Bucket::Other);
            cl.wait = Wait::Running;
            let lag = now - cl.sched;
            self.stats.record_lag(lag);
        }
    }

    /// Start fetching the memory a new transaction's page accesses will
    /// read: over a data set far larger than the CPU caches nearly every
    /// lookup misses them, and the transaction runs only after its round
    /// trip and CPU, other clients' events in between. Changes nothing
    /// observable.
    pub(super) fn prefetch(&self, steps: &[Step]) {
        for s in steps {
            match *s {
                Step::Read(block) => self.pool.prefetch(block),
                Step::Modify { block, .. } | Step::Extend { block, .. } => {
                    self.pool.prefetch(block);
                    self.touched.prefetch(block);
                }
                _ => {}
            }
        }
    }

    /// Client `ci` is about to spend a statement's CPU: start fetching the
    /// buffer descriptors of the pages the statement then reads, or for a
    /// page not in the pool its page-cache slot. Their page-table slots
    /// were fetched when the transaction was generated (`prefetch`), so
    /// finding each buffer is a cache hit now. Changes nothing observable.
    pub(super) fn prefetch_buffers(&self, ci: usize) {
        let cl = &self.clients[ci];
        for s in cl.steps.iter().skip(cl.pc) {
            match *s {
                Step::Read(block) | Step::Modify { block, .. } => {
                    let in_pool = self.pool.prefetch_buffer(block);
                    if !in_pool {
                        self.os_cache.prefetch(block);
                    }
                }
                Step::Extend { block, .. } => {
                    let _ = self.pool.prefetch_buffer(block);
                }
                Step::RoundTrip | Step::Commit { .. } => break,
                _ => {}
            }
        }
    }

    /// recovery_prefetch: a record ahead will change `block`; unless it is
    /// in shared buffers or the page cache, ask the kernel for it
    /// (`XLogPrefetcherNextBlock` → `PrefetchSharedBuffer`).
    pub(super) fn start_prefetch(&mut self, now: Nanos, block: u64) {
        if self.pool.contains(block) || self.os_cache.contains(block) {
            return;
        }
        let Some(rec) = self.recovery.as_mut() else {
            return;
        };
        if rec.prefetch(block) == PrefetchAction::Issue {
            self.issue(IoKind::ReadPage { block }, Purpose::Prefetch { block }, now);
        }
    }

    /// A prefetch read is done: the page is in the page cache; the replay,
    /// if it waited for it, has it; the next queued block goes out.
    pub(super) fn prefetch_done(&mut self, now: Nanos, block: u64) {
        self.os_cache.read(block);
        let Some(rec) = self.recovery.as_mut() else {
            return;
        };
        let (waiting, next) = rec.prefetch_done(block);
        if let Some(buf) = waiting {
            // One startup process: client 0.
            self.pool.read_done(buf);
            self.clients[0].held = Some(buf);
            if self.cfg.read_cpu > 0 {
                self.start_read_cpu(now, 0, self.cfg.read_cpu);
            } else {
                self.make_ready(0);
            }
            if let Some(ws) = self.buf_waiters.remove(&buf) {
                for w in ws {
                    self.make_ready(w);
                }
            }
        }
        if let Some(b) = next {
            self.issue(
                IoKind::ReadPage { block: b },
                Purpose::Prefetch { block: b },
                now,
            );
        }
    }
}
