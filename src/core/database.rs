//! The simulated PostgreSQL instance: client backends running a workload's
//! transactions over the buffer pool, WAL, row locks and CPU, plus the
//! checkpointer, background writer and WAL writer.
//!
//! Sans-I/O in the quinn-proto style: `handle_completion(now, token)` and
//! `handle_timeout(now)` feed events in, `poll_request()` and
//! `poll_timeout()` drain what the database wants. The real engine and the
//! simulator drive this same code; only the device and the clock differ.
//!
//! This file holds the instance and its event loop (timers, settling until
//! every process waits); each process has a file of its own: `backends`,
//! `checkpointer_proc`, `bgwriter_proc`, `vacuum_worker`, `wal_flush`
//! (the WAL's flushes and the WAL writer) and `pgbench_threads`, with the
//! I/O table in `io_table`, every process's name for the CPU scheduler
//! in `proc`, and when the caches first filled in `warmup`.

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

use rand::SeedableRng;

use super::SimRng;
use super::archive::{ArchiveAction, ArchiveTimer, Archiver};
use super::block_set::BlockSet;
use super::breakdown::{Bucket, TxClock};
use super::buffer_pool::{BufId, BufferPool, Lookup};
use super::checkpointer::Trigger;
use super::config::{CoreConfig, Mode};
use super::cpu::{Cpu, CpuShape};
use super::io::{IoCompletion, IoKind, IoRequest, PAGE_BYTES, Token};
use super::kernel_flusher::KernelFlusher;
use super::locks::{RowId, RowLocks};
use super::os_cache::OsCache;
use super::recovery::{MinRecoveryPoint, PrefetchAction, Recovery};
use super::replication::{ReplAction, ReplTimer, Replication};
use super::stats::Stats;
use super::time::{MS, Nanos};
use super::timer_queue::TimerQueue;
use super::vacuum;
use super::vacuum::{self as vac, CostBalance, VacuumJob};
use super::wal::{Lsn, Waiter, Wal, WalAction, WalCounters, WalIo};
use super::workload::{Step, TableHeap, Workload};
use super::writeback::{WritebackContext, Writer};

mod autovacuum;
mod backends;
mod bgwriter_proc;
mod checkpointer_proc;
mod io_table;
mod pgbench_threads;
mod proc;
mod vacuum_worker;
mod wakeups;
mod wal_flush;
mod walwriter;
mod warmup;
use autovacuum::AutovacuumLauncher;
use backends::{Client, Wait};
use bgwriter_proc::BgWriterProc;
pub use checkpointer_proc::CheckpointEvent;
use checkpointer_proc::CheckpointerProc;
use io_table::{IoTable, Purpose};
use pgbench_threads::PgbenchThread;
use proc::{Background, Proc, WRITERS};
use vacuum_worker::VacuumWorker;
pub use vacuum_worker::{VacuumEvent, VacuumPhaseStats, VacuumSummary};
use wal_flush::WalLeader;
use walwriter::WalWriter;

/// Buffer-pool and page-cache state above which transactions prefetch the
/// lines they will touch: past a core's own cache (L2, 1-2 MB on today's
/// servers). Below it every line is cached and the prefetches only cost.
/// Between that and the shared L3 they still pay: a 4 GB pool (14 MB of
/// state) ran 9% faster with them on an EPYC with 1 MB of L2 a core,
/// though they add 3% of the instructions (callgrind, which does not
/// model the cache misses they hide).
const PREFETCH_ABOVE_BYTES: u64 = 4 << 20;

/// What a timer wakes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// Client `c`'s round trip or retry wait is over.
    Resume(u32),
    /// A rate-limited client's next transaction is due.
    Start(u32),
    /// A process's CPU burst on a core is over.
    CpuDone(Proc),
    /// A round trip ending at `cpu_start`, then a CPU burst (uncontended).
    RoundTripThenCpu {
        client: u32,
        cpu_start: Nanos,
    },
    CommitDelay,
    /// Checkpointer wake-up; stale ones (older generation) are ignored.
    Checkpointer(u64),
    BgWriter,
    WalWriter,
    /// Autovacuum launcher's nap is over.
    Autovacuum,
    /// The autovacuum worker finished a table: on to its next.
    AutovacuumWorkerDone,
    /// Vacuum's cost-delay sleep (or a retry) is over.
    VacuumWake,
    /// Streaming replication's network, walreceivers and replay.
    Repl(ReplTimer),
    /// The archiver's pushes and the archive_timeout check.
    Archive(ArchiveTimer),
    /// The kernel's flusher: its periodic wake-up, or (`kick`) the
    /// background threshold passed.
    KernelFlusher {
        kick: bool,
    },
    End,
}

/// The simulated database.
pub struct Database {
    cfg: CoreConfig,
    workload: Box<dyn Workload>,
    rng: SimRng,
    fpi_bytes: u64,
    pool: BufferPool,
    wal: Wal,
    /// Walsenders, standbys and the backends waiting for them.
    repl: Option<Replication>,
    /// Backends the standbys just released (reused buffer).
    released: Vec<u32>,
    /// The WAL archiver, with archive_mode on.
    archiver: Option<Archiver>,
    locks: RowLocks,
    cpu: Cpu,
    os_cache: OsCache,
    /// The page cache's dirty pages and the kernel's flusher, where the
    /// core writes them back (`cfg.kernel_writeback`).
    kernel_flusher: Option<KernelFlusher>,
    checkpointer: CheckpointerProc,
    bgwriter: BgWriterProc,
    /// Per `Background` writer: whether its CPU burst is on a core or queued, and the
    /// CPU of writes done since that burst started, to run after it.
    writer_cpu: [(bool, Nanos); WRITERS],
    /// The backend that leads the next WAL flush, while it wakes.
    wal_leader: WalLeader,
    walwriter: WalWriter,
    /// pgbench's worker threads on the database host (`-j`); none when the
    /// client's CPU is part of each statement's.
    threads: Vec<PgbenchThread>,
    stats: Stats,
    tables: Vec<TableHeap>,
    /// Dead tuples per table since its last vacuum (n_dead_tup).
    dead: Vec<u64>,
    /// The vacuum worker (autovacuum's, or the one-shot VACUUM).
    vacuum: VacuumWorker,
    autovacuum: AutovacuumLauncher,
    clients: Vec<Client>,
    ready: VecDeque<u32>,
    /// Clients inside a transaction (not waiting for their scheduled start,
    /// not stopped): the backends whose CPU grows (`CoreConfig::cpu_growth`).
    active: u32,
    /// A statement's CPU by the active backends per CPU (`cpu_crowding`).
    crowding: super::cpu_growth::Crowding,
    timers: TimerQueue<Timer>,
    /// The I/Os issued and not yet completed, by token.
    io: IoTable,
    buf_waiters: HashMap<BufId, Vec<u32>>,
    /// Pages changed since the last checkpoint's redo point: the next change
    /// of any other page logs a full-page image.
    touched: BlockSet,
    woken: Vec<Waiter>,
    granted: Vec<u32>,
    finished: bool,
    end: Option<Nanos>,
    /// Latest event time seen.
    clock: Nanos,
    /// A standby's catch-up: the startup process's WAL stream and prefetcher.
    recovery: Option<Recovery>,
    /// Whether transactions prefetch what they will touch: only when the
    /// buffer pool and the page cache are far larger than the CPU's
    /// caches (else every line is cached and the prefetches only cost).
    prefetching: bool,
}

impl Database {
    /// A database at time 0, right after a checkpoint, with cold buffers.
    pub fn new(cfg: CoreConfig, workload: Box<dyn Workload>) -> Database {
        assert!(
            (cfg.clients > 0 || matches!(cfg.mode, Mode::Vacuum(_)))
                && cfg.cpus > 0
                && cfg.nbuffers > 0
        );
        assert!(
            !matches!(cfg.mode, Mode::Catchup(_)) || cfg.clients == 1,
            "one startup process replays"
        );
        let mut rng = SimRng::seed_from_u64(cfg.seed);
        let mut workload = workload;
        let clients = (0..cfg.clients)
            .map(|c| {
                let mut steps = Vec::new();
                workload.next_transaction(&mut rng, &mut steps);
                let writeback = WritebackContext::new(Writer::Backend(c), cfg.backend_flush_after);
                Client::new(steps, writeback)
            })
            .collect();
        let mut db = Database {
            fpi_bytes: workload.full_page_image_bytes() as u64,
            pool: BufferPool::with_blocks(cfg.nbuffers, workload.data_blocks()),
            wal: Wal::new(
                cfg.wal_segments,
                cfg.wal_buffers_bytes,
                cfg.commit_delay,
                cfg.commit_siblings,
            ),
            repl: cfg.replication.as_ref().map(Replication::new),
            released: Vec::new(),
            archiver: cfg.archive.clone().map(Archiver::new),
            locks: RowLocks::new(),
            cpu: Cpu::with_shape(CpuShape {
                vcpus: cfg.cpus,
                threads_per_core: cfg.threads_per_core,
                speed: cfg.cpu_speed,
            }),
            os_cache: OsCache::new(cfg.os_cache_pages as usize),
            kernel_flusher: cfg.kernel_writeback.map(KernelFlusher::new),
            checkpointer: CheckpointerProc::new(&cfg),
            bgwriter: BgWriterProc::new(&cfg),
            writer_cpu: [(false, 0); WRITERS],
            wal_leader: WalLeader::default(),
            walwriter: WalWriter::new(cfg.wal_writer_delay, cfg.wal_writer_flush_after),
            threads: (0..cfg.client_threads).map(PgbenchThread::new).collect(),
            stats: Stats::new(),
            tables: workload.tables(),
            dead: vec![0; workload.tables().len()],
            vacuum: VacuumWorker {
                writeback: WritebackContext::new(Writer::Vacuum, cfg.backend_flush_after),
                ..VacuumWorker::default()
            },
            autovacuum: AutovacuumLauncher::new(
                cfg.autovacuum_naptime,
                cfg.autovacuum_cost_limit,
                cfg.autovacuum_cost_delay,
            ),
            clients,
            ready: (0..cfg.clients).collect(),
            timers: TimerQueue::new(),
            io: IoTable::default(),
            buf_waiters: HashMap::default(),
            touched: BlockSet::new(workload.data_blocks()),
            woken: Vec::new(),
            granted: Vec::new(),
            finished: false,
            end: None,
            clock: 0,
            // A buffer's descriptor and page-table share, a cached page's node.
            prefetching: cfg.nbuffers as u64 * 27 + cfg.os_cache_pages * 15 > PREFETCH_ABOVE_BYTES,
            recovery: match &cfg.mode {
                Mode::Catchup(r) => Some(Recovery::new(r.clone())),
                Mode::Bench | Mode::Vacuum(_) => None,
            },
            active: cfg.clients,
            crowding: super::cpu_growth::Crowding::new(&cfg.cpu_crowding, cfg.cpus, cfg.clients),
            workload,
            rng,
            cfg,
        };
        db.free_cores_if_enough();
        if let Some(d) = db.cfg.duration {
            db.set_timer(d, Timer::End);
        }
        if db.cfg.rate.is_some() {
            db.ready.clear();
            for c in 0..db.cfg.clients {
                db.schedule_next(0, c);
                if db.clients[c as usize].wait == Wait::Running {
                    db.ready.push_back(c);
                }
            }
        }
        if db.cfg.os_cache_after_load {
            db.warm_os_cache();
        }
        let (next, generation) = db.checkpointer.first_wake();
        db.set_timer(next, Timer::Checkpointer(generation));
        db.set_timer(db.bgwriter.first_wake(0), Timer::BgWriter);
        db.set_timer(db.walwriter.first_wake(0), Timer::WalWriter);
        if let Some(f) = &db.kernel_flusher {
            db.set_timer(f.first_wake(0), Timer::KernelFlusher { kick: false });
        }
        // A one-shot VACUUM runs alone; a standby has no autovacuum.
        match &db.cfg.mode {
            Mode::Bench if db.cfg.autovacuum => {
                db.set_timer(db.autovacuum.first_wake(0), Timer::Autovacuum);
            }
            Mode::Vacuum(v) => {
                let v = v.clone();
                db.start_one_shot_vacuum(&v);
            }
            Mode::Bench | Mode::Catchup(_) => {}
        }
        db.settle(0);
        db
    }

    /// When the database next wants `handle_timeout`, if ever.
    #[inline]
    pub fn poll_timeout(&self) -> Option<Nanos> {
        if self.finished {
            return None;
        }
        self.timers.peek_time()
    }

    /// Fire every timer due at or before `now`, in time order, each at its
    /// due time (or at the last event already handled, if that is later).
    ///
    /// A real event loop that wakes late thus catches up instead of
    /// stretching modelled CPU bursts and round trips, which stand for work
    /// of PostgreSQL and pgbench, not of pgiosim's loop. The driver reports
    /// the loop's lateness separately. In virtual time both are the same.
    pub fn handle_timeout(&mut self, now: Nanos) {
        while let Some(due) = self.timers.peek_time() {
            if due > now || self.finished {
                break;
            }
            let at = self.advance_clock(due);
            while let Some(t) = self.timers.peek_time() {
                if t > at || self.finished {
                    break;
                }
                let (_, timer) = self.timers.pop().expect("peeked");
                self.fire(at, timer);
            }
            self.settle(at);
        }
    }

    /// Event times never go backwards inside the core, even if a device
    /// stamps a completion slightly before a timer already handled.
    fn advance_clock(&mut self, at: Nanos) -> Nanos {
        self.clock = self.clock.max(at);
        self.clock
    }

    /// The catch-up's WAL stream and prefetcher, in recovery.
    pub fn recovery(&self) -> Option<&Recovery> {
        self.recovery.as_ref()
    }

    /// A core was handed to `next` (from the run queue), if anyone: its
    /// burst runs until `finish`.
    fn cpu_handed_on(&mut self, now: Nanos, next: Option<(u32, Nanos)>) {
        let Some((next, finish)) = next else {
            return;
        };
        let next = Proc::decode(next);
        if let Proc::Backend(c) = next {
            let cl = &mut self.clients[c as usize];
            if cl.read_cpu_from.is_none() {
                cl.clock.switch(now, Bucket::Cpu);
            }
        }
        self.set_timer(finish, Timer::CpuDone(next));
    }

    /// A statement's CPU with the backends active now: grown above the
    /// workload's threshold, then by the backends per CPU.
    fn statement_cpu(&self, demand: Nanos) -> Nanos {
        self.crowding.grow(
            self.cfg.cpu_growth.statement(demand, self.active),
            self.active,
        )
    }

    /// The CPU of a read the device served: the reclaim figure once the
    /// page cache is full, else the read's own.
    fn device_read_cpu(&self) -> Nanos {
        if self.cfg.reclaim_cpu.read > 0 && self.os_cache.is_full() {
            self.cfg.reclaim_cpu.read
        } else {
            self.cfg.read_cpu
        }
    }

    /// The CPU of writing one data page: 8 KiB at the reclaim figure once
    /// the page cache is full, else the write's own.
    fn page_write_cpu(&self) -> Nanos {
        if self.cfg.reclaim_cpu.per_kib_written > 0 && self.os_cache.is_full() {
            self.cfg.reclaim_cpu.per_kib_written * (PAGE_BYTES / 1024)
        } else {
            self.cfg.write_cpu
        }
    }

    /// Each backend, the WAL flush's two and each writer holds at most one
    /// burst at a time; with a core for each, nobody ever waits for one and
    /// the scheduler keeps no virtual runtimes (pgbench's threads `extend`
    /// their bursts: not then).
    fn free_cores_if_enough(&mut self) {
        if !self.threads.is_empty() {
            return;
        }
        let procs = self.clients.len() as u32
            + if self.cfg.wal_flush_cpu > 0 { 2 } else { 0 }
            + if self.writes_cost_cpu() {
                WRITERS as u32
            } else {
                0
            };
        self.cpu.never_short(procs);
    }

    /// Whether any data-page write may cost CPU.
    fn writes_cost_cpu(&self) -> bool {
        self.cfg.write_cpu > 0 || self.cfg.reclaim_cpu.per_kib_written > 0
    }

    /// A background process wrote a data page: its CPU for that write
    /// (CoreConfig::write_cpu) takes a core, without holding up the writer's
    /// next write (its pacing is the bgwriter's rounds or the checkpoint's
    /// schedule, not its CPU). One process is on one core at a time: CPU of
    /// writes done while its burst runs or queues follows in the next burst.
    fn writer_cpu(&mut self, now: Nanos, w: Background) {
        let demand = self.page_write_cpu();
        if demand == 0 {
            return;
        }
        let demand = self.cfg.cpu_growth.io(demand, self.active);
        let (busy, pending) = &mut self.writer_cpu[w as usize];
        *pending += demand;
        if !*busy {
            self.writer_burst(now, w);
        }
    }

    /// Writer `w`'s pending CPU, if any, goes to the scheduler as one burst.
    fn writer_burst(&mut self, now: Nanos, w: Background) {
        let (busy, pending) = &mut self.writer_cpu[w as usize];
        let demand = std::mem::take(pending);
        *busy = demand > 0;
        let p = Proc::Writer(w);
        if demand > 0
            && let Some(finish) = self.cpu.request(now, p.into(), demand)
        {
            self.set_timer(finish, Timer::CpuDone(p));
        }
    }

    /// Stop now (Ctrl-C): no new work; the run is over at `now`.
    pub fn stop(&mut self, now: Nanos) {
        let now = self.advance_clock(now);
        self.finish(now);
    }

    /// True once the run is over (duration reached, every client done, or stopped).
    pub fn is_finished(&self) -> bool {
        self.finished
    }

    /// I/Os handed out and not yet completed. After the run is over the
    /// driver keeps reaping until this is 0, so no buffer is freed under
    /// an in-flight I/O.
    pub fn outstanding(&self) -> usize {
        self.io.outstanding
    }

    /// When the run ended, if it has.
    pub fn end_time(&self) -> Option<Nanos> {
        self.end
    }

    /// Statistics so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// WAL counters so far.
    pub fn wal_counters(&self) -> WalCounters {
        self.wal.counters()
    }

    /// Streaming replication, if the run has standbys.
    pub fn replication(&self) -> Option<&Replication> {
        self.repl.as_ref()
    }

    /// A record ending at `end` carries a full-page image of `bytes`: the
    /// standbys' replay restores it for its own CPU.
    fn log_image(&mut self, end: Lsn, bytes: u64) {
        if let Some(r) = &mut self.repl {
            r.log_images(end, 1, bytes);
        }
    }

    /// Checkpoints so far; past `SERIES_MAX_POINTS` of them, every
    /// second (fourth, ...) one, spread over the whole run.
    pub fn checkpoints(&self) -> &[CheckpointEvent] {
        self.checkpointer.events()
    }

    /// The first autovacuum still to come of a table not yet vacuumed in
    /// this run, as its dead tuples so far foretell it: the table and when
    /// its n_dead_tup, which starts the run at 0 and grows at the rate it
    /// has grown, passes autovacuum's threshold. None without autovacuum
    /// or where no such table gathers dead tuples. A rate measured before
    /// that vacuum leaves out its cost, however steady it looks.
    ///
    /// A table already past its threshold waits for the worker (which may
    /// be busy with another table for a long time); it is due now. It is
    /// named only when no table's vacuum is still ahead of its threshold,
    /// and then the largest, so that the small tables waiting out their
    /// first nap at the start are not taken for the large one to come.
    pub fn first_autovacuum_due(&self, now: Nanos) -> Option<(&str, Nanos)> {
        if !(matches!(self.cfg.mode, Mode::Bench) && self.cfg.autovacuum) || now == 0 {
            return None;
        }
        let vacuumed = self.vacuums();
        let never: Vec<(&TableHeap, u64)> = self
            .tables
            .iter()
            .zip(&self.dead)
            .filter(|&(t, &dead)| dead > 0 && !vacuumed.iter().any(|v| v.table == t.name))
            .map(|(t, &dead)| (t, dead))
            .collect();
        let ahead = never
            .iter()
            .filter(|&&(t, dead)| !vacuum::needs_vacuum(dead, t.rows))
            .map(|&(t, dead)| {
                let at = now as f64 * vacuum::vacuum_threshold(t.rows) / dead as f64;
                (
                    t.name.as_str(),
                    (at.min(u64::MAX as f64 / 2.0) as Nanos).max(now),
                )
            })
            .min_by_key(|&(_, at)| at);
        ahead.or_else(|| {
            never
                .iter()
                .max_by_key(|&&(t, _)| t.rows)
                .map(|&(t, _)| (t.name.as_str(), now))
        })
    }

    /// A table's heap pages as the workload laid them out (0 for a table
    /// it does not have).
    pub fn table_pages(&self, table: &str) -> u64 {
        self.tables
            .iter()
            .find(|t| t.name == table)
            .map_or(0, |t| t.pages)
    }

    /// The workload being run.
    pub fn workload(&self) -> &dyn Workload {
        self.workload.as_ref()
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// CPU time granted so far, in ns.
    pub fn cpu_busy_ns(&self) -> u128 {
        self.cpu.busy_ns()
    }

    fn finish(&mut self, now: Nanos) {
        if self.finished {
            return;
        }
        self.finished = true;
        self.end = Some(now);
        if let Some(a) = &mut self.archiver {
            a.finish(now);
        }
        self.io.forget_unsent();
        self.timers.clear();
    }

    /// Fill the page cache with the last of what the load wrote, oldest
    /// first, so the most recent pages are the last to be evicted.
    fn warm_os_cache(&mut self) {
        let runs = self.workload.written_at_load();
        let mut room = self.cfg.os_cache_pages;
        // Keep the newest `room` pages: walk back from the end.
        let mut keep = Vec::new();
        for &(first, blocks) in runs.iter().rev() {
            if room == 0 {
                break;
            }
            let n = blocks.min(room);
            keep.push((first + blocks - n, n));
            room -= n;
        }
        for &(first, n) in keep.iter().rev() {
            self.os_cache.write_run(first, n);
        }
    }

    fn set_timer(&mut self, at: Nanos, timer: Timer) {
        // `clock` is the current event's time: most timers are set with
        // one recurring delay, which the queue serves from a FIFO lane.
        self.timers.push_after(self.clock, at, timer);
    }

    fn fire(&mut self, now: Nanos, timer: Timer) {
        match timer {
            Timer::Resume(c) => self.make_ready(c),
            Timer::Start(c) => {
                self.active += 1;
                let cl = &mut self.clients[c as usize];
                // The clock starts at the scheduled time: a late wake-up is lag.
                cl.clock = TxClock::start(cl.sched, Bucket::Other);
                self.stats.record_lag(now - cl.sched);
                self.make_ready(c);
            }
            Timer::CpuDone(p) => {
                if let Proc::PgbenchThread(t) = p
                    && self.thread_served(now, t as usize)
                {
                    return;
                }
                let next = self.cpu.release(now, p.into());
                if matches!(p, Proc::Flusher | Proc::Leader) {
                    self.cpu.forget(p.into());
                }
                self.cpu_handed_on(now, next);
                if let Proc::Backend(c) = p
                    && let Some(from) = self.clients[c as usize].read_cpu_from.take()
                {
                    self.stats.counters.read_cpu_time.record(now - from);
                }
                match p {
                    Proc::Flusher => self.wal_io_done(now),
                    Proc::Leader => self.wal_leader = WalLeader::default(),
                    Proc::Writer(w) => self.writer_burst(now, w),
                    Proc::Backend(c) => self.make_ready(c),
                    // A pgbench thread that went idle: nothing more.
                    Proc::PgbenchThread(_) => {}
                }
            }
            Timer::RoundTripThenCpu { client, cpu_start } => {
                self.clients[client as usize]
                    .clock
                    .switch(cpu_start.min(now), Bucket::Cpu);
                let next = self.cpu.release(now, Proc::Backend(client).into());
                debug_assert!(next.is_none(), "CPU queued with a core per client");
                self.make_ready(client);
            }
            Timer::CommitDelay => self.wal.handle_delay_done(),
            Timer::Checkpointer(generation) => self.checkpointer_wake(now, generation),
            Timer::BgWriter => self.bgwriter_wake(now),
            Timer::WalWriter => {
                let next = self.walwriter.handle_timeout(now);
                self.wal.request_background_flush();
                self.set_timer(next, Timer::WalWriter);
            }
            Timer::Autovacuum => self.autovacuum_wake(now),
            Timer::AutovacuumWorkerDone => self.autovacuum_worker_done(now),
            Timer::VacuumWake => self.vacuum_wake(now),
            Timer::Repl(t) => {
                if let Some(r) = &mut self.repl {
                    r.handle_timer(now, t);
                }
            }
            Timer::Archive(t) => {
                if let Some(a) = &mut self.archiver {
                    a.handle_timer(now, t, self.wal.insert_lsn());
                }
            }
            Timer::KernelFlusher { kick } => self.kernel_flusher_wake(now, kick),
            Timer::End => self.finish(now),
        }
    }

    /// Run everything runnable at `now` until all processes wait.
    fn settle(&mut self, now: Nanos) {
        loop {
            while let Some(c) = self.ready.pop_front() {
                if self.finished {
                    self.ready.clear();
                    return;
                }
                self.advance(now, c);
            }
            if self.finished {
                return;
            }
            if self.checkpoint_due(now) {
                self.checkpointer_step(now);
            }
            self.pump_archive();
            self.pump_wal(now);
            self.pump_replication(now);
            if self.ready.is_empty() {
                return;
            }
        }
    }

    /// Client `c` can go on (its latch is set): it joins the ready queue,
    /// unless it stopped.
    fn make_ready(&mut self, c: u32) {
        let cl = &mut self.clients[c as usize];
        if cl.wait != Wait::Stopped {
            cl.wait = Wait::Running;
            self.ready.push_back(c);
        }
    }

    /// WAL became durable far enough for `w`: the process that waited for
    /// it wakes.
    fn wal_flushed_for(&mut self, now: Nanos, w: Waiter) {
        match w {
            Waiter::Client(c) => {
                let cl = &self.clients[c as usize];
                match cl.wait {
                    Wait::CommitFlush => {
                        // The committer wakes and goes on with what follows
                        // its commit record (the rest of the commit's CPU;
                        // then the transaction ends and its locks go).
                        self.stats.counters.sync_commits += 1;
                        self.commit_flushed(now, c);
                    }
                    Wait::VictimFlush => self.start_victim_write(now, c),
                    Wait::WalSpace => self.make_ready(c),
                    other => panic!("client {c} woken by WAL flush while in {other:?}"),
                }
            }
            Waiter::Checkpointer => self.checkpointer_flushed(now),
            Waiter::Vacuum => self.vacuum_write(now),
            Waiter::BgWriter => self.bgwriter_flushed(now),
        }
    }

    /// A row version in `block` died (an UPDATE or DELETE): count it
    /// against its table (n_dead_tup) for autovacuum.
    fn count_dead_tuple(&mut self, block: u64) {
        if let Some(i) = self
            .tables
            .iter()
            .position(|t| block >= t.first && block < t.first + t.pages)
        {
            self.dead[i] += 1;
        }
    }

    /// Hand the archiver's timers to the queue; a segment switch for
    /// archive_timeout is inserted and flushed by the checkpointer
    /// (`RequestXLogSwitch`), here as a background flush.
    fn pump_archive(&mut self) {
        let Some(a) = &mut self.archiver else {
            return;
        };
        let mut switch = false;
        let mut timers = Vec::new();
        while let Some(act) = a.poll_action() {
            match act {
                ArchiveAction::Timer { at, timer } => timers.push((at, timer)),
                ArchiveAction::SwitchSegment => switch = true,
            }
        }
        for (at, timer) in timers {
            self.set_timer(at, Timer::Archive(timer));
        }
        if switch {
            self.wal.switch_segment();
            self.wal.request_background_flush();
        }
    }

    /// The WAL archiver, with archive_mode on.
    pub fn archiver(&self) -> Option<&Archiver> {
        self.archiver.as_ref()
    }

    /// Hand the replication's I/Os to the device and its timers to the
    /// queue; the backends it released go on with their commit.
    fn pump_replication(&mut self, now: Nanos) {
        let Some(r) = &mut self.repl else {
            return;
        };
        let mut actions = Vec::new();
        while let Some(a) = r.poll_action() {
            actions.push(a);
        }
        let mut released = std::mem::take(&mut self.released);
        r.drain_released(&mut released);
        for a in actions {
            match a {
                ReplAction::Io { standby, io } => {
                    let kind = match io {
                        WalIo::Write {
                            segment,
                            offset,
                            len,
                        } => IoKind::StandbyWalWrite {
                            standby,
                            segment,
                            offset,
                            len,
                        },
                        WalIo::Sync { segment } => IoKind::StandbyWalSync { standby, segment },
                    };
                    self.issue(kind, Purpose::Standby { standby }, now);
                }
                ReplAction::Timer { at, timer } => self.set_timer(at, Timer::Repl(timer)),
            }
        }
        for c in released.drain(..) {
            debug_assert_eq!(self.clients[c as usize].wait, Wait::SyncRep);
            self.stats.counters.sync_rep_commits += 1;
            self.make_ready(c);
        }
        self.released = released;
    }
}

#[cfg(test)]
mod tests;
