//! The loop's side of the background processes: how an event reaches each
//! process's component and how what it answers is applied to the shared
//! memory (buffer pool, WAL, CPU, I/O table, timers) and to the processes it
//! wakes. In PostgreSQL's terms, the latches: a process never calls into
//! another's file; it sets a latch, and the loop here delivers it.

use super::checkpointer_proc::{CkptFlushed, CkptStep};
use super::pgbench_threads::ThreadCpu;
use super::*;
use crate::core::kernel_flusher::{FsyncStep, Run};

impl Database {
    /// Backend `c` sent its reply: it waits for pgbench's thread `t` to
    /// read it and send the next statement.
    pub(super) fn thread_reply(&mut self, now: Nanos, t: usize, c: u32) {
        let th = &mut self.threads[t];
        let p = th.proc();
        let core = th.handle_reply(now, c, &mut self.cpu, self.cfg.client_cpu);
        self.thread_core(now, p, core);
    }

    /// pgbench's thread `t` sent its client's next statement, which wakes
    /// the backend. True if its core is dealt with (it goes on to the next
    /// waiting client, there or queued for a core); false if it goes idle
    /// (the caller frees the core).
    pub(super) fn thread_served(&mut self, now: Nanos, t: usize) -> bool {
        let (c, spent) = self.threads[t].handle_served(now);
        // The statement wakes the backend, on another core if one is idle
        // (Linux's select_idle_sibling), else queued behind the thread,
        // which is about to sleep. A wake-up onto an idle virtual CPU
        // costs CPU (docs/validation.md, 2026-12-04, "The reference
        // machine's process figures"), so the calibrated round trip
        // (1-client latency less CPU and waits) is CPU added to the
        // backend's next burst when a core was idle, and nothing when none
        // was.
        self.clients[c as usize].idle_wake = self.cpu.busy() < self.cfg.cpus;
        self.make_ready(c);
        self.stats.counters.client_thread_time.record(spent);
        let th = &mut self.threads[t];
        let p = th.proc();
        let core = th.serve_next(now, &mut self.cpu, self.cfg.client_cpu);
        self.thread_core(now, p, core)
    }

    /// Apply what thread `p`'s core does next: true unless it went idle.
    fn thread_core(&mut self, now: Nanos, p: Proc, core: ThreadCpu) -> bool {
        match core {
            ThreadCpu::Idle => false,
            ThreadCpu::Until(finish) => {
                self.set_timer(finish, Timer::CpuDone(p));
                true
            }
            ThreadCpu::Queued => true,
            ThreadCpu::HandedOn(next) => {
                self.cpu_handed_on(now, next);
                true
            }
        }
    }

    /// bgwriter_delay is over: the background writer plans a round and
    /// starts it, unless its last one is still writing; it sleeps again
    /// either way.
    pub(super) fn bgwriter_wake(&mut self, now: Nanos) {
        let (round, next) = self.bgwriter.handle_timeout(now, &mut self.pool);
        if round {
            self.bgwriter_next(now);
        }
        self.set_timer(next, Timer::BgWriter);
    }

    /// The background writer's next write of its round, if any: it goes
    /// out once the WAL covering it is durable.
    fn bgwriter_next(&mut self, now: Nanos) {
        let Some(w) = self.bgwriter.next_write(&mut self.pool) else {
            return;
        };
        if self.flush_for_write(now, w.lsn, Waiter::BgWriter) {
            self.bgwrite(now, w.buf, w.block);
        } else {
            self.bgwriter.wait_for_wal(w.buf, w.block);
        }
    }

    /// The background writer's write of `buf` (`block`) is done: the next
    /// one goes.
    pub(super) fn bgwrite_done(&mut self, now: Nanos, buf: BufId, block: u64) {
        self.pool.write_done(buf);
        self.os_cache.write(block);
        self.writer_cpu(now, Background::BgWriter);
        self.stats.counters.bgwriter_writes += 1;
        self.bgwriter.handle_write_done(buf);
        self.bgwriter_next(now);
    }

    /// The WAL the background writer waited for is durable: the write it
    /// held back goes out.
    pub(super) fn bgwriter_flushed(&mut self, now: Nanos) {
        let (buf, block) = self.bgwriter.handle_wal_flushed();
        self.bgwrite(now, buf, block);
    }

    /// The background writer writes `buf` (`block`), whose WAL is durable.
    fn bgwrite(&mut self, now: Nanos, buf: BufId, block: u64) {
        let kind = self.bgwriter.write(buf, block);
        self.issue(kind, Purpose::BgWrite { buf, block }, now);
    }

    /// The checkpointer's wake-up timer of `generation` fired.
    pub(super) fn checkpointer_wake(&mut self, now: Nanos, generation: u64) {
        if self.checkpointer.handle_wake(generation) {
            self.checkpointer_step(now);
        }
    }

    /// A checkpoint is due that the sleeping checkpointer has not started.
    pub(super) fn checkpoint_due(&self, now: Nanos) -> bool {
        self.checkpointer.is_due(now, self.ckpt_lsn())
    }

    /// The WAL position checkpoints are measured by: the insert position,
    /// or in recovery the replay position (a restartpoint is due after
    /// max_wal_size's share of replayed WAL, as CheckPointSegments counts
    /// it, or after checkpoint_timeout).
    fn ckpt_lsn(&self) -> Lsn {
        match &self.recovery {
            Some(r) => r.replayed(),
            None => self.wal.insert_lsn(),
        }
    }

    /// The checkpointer is free to act at `now`.
    pub(super) fn checkpointer_step(&mut self, now: Nanos) {
        let lsn = self.ckpt_lsn();
        let (started, step) = self.checkpointer.handle_free(now, lsn, &mut self.pool);
        if let Some(trigger) = started {
            // The redo point is the current insert position; every page
            // changed after it gets a full-page image on its first change.
            self.touched.clear();
            let counters = &mut self.stats.counters;
            counters.checkpoints_started += 1;
            match trigger {
                Trigger::Timed => counters.checkpoints_timed += 1,
                Trigger::Wal => counters.checkpoints_requested += 1,
            }
            self.stats.second(now).checkpoint_starts += 1;
        }
        match step {
            CkptStep::Sleep { at, generation } => {
                self.set_timer(at, Timer::Checkpointer(generation))
            }
            CkptStep::Write { buf, block, lsn } => {
                if self.flush_for_write(now, lsn, Waiter::Checkpointer) {
                    self.checkpoint_write(now, buf, block);
                } else {
                    self.checkpointer.wait_for_wal(buf, block);
                }
            }
            CkptStep::Sync => {
                self.stats.counters.data_syncs += 1;
                // The fsync first writes back what the page cache holds
                // dirty, then flushes.
                let runs = self
                    .kernel_flusher
                    .as_mut()
                    .map(|f| f.handle_fsync())
                    .unwrap_or_default();
                if runs.is_empty() {
                    self.issue(IoKind::DataSync, Purpose::DataSync, now);
                }
                for run in runs {
                    self.writeback(now, run, false);
                }
            }
            CkptStep::Wait => {}
        }
    }

    /// The checkpoint's write of `buf` (`block`) is done: it sleeps until
    /// the next write is due on its schedule, or writes on if behind.
    pub(super) fn checkpoint_write_done(&mut self, now: Nanos, buf: BufId, block: u64) {
        self.pool.write_done(buf);
        self.os_cache.write(block);
        self.writer_cpu(now, Background::Checkpointer);
        self.stats.counters.checkpoint_writes += 1;
        match self.checkpointer.handle_write_done(now, self.ckpt_lsn()) {
            Some((at, generation)) => self.set_timer(at, Timer::Checkpointer(generation)),
            None => self.checkpointer_step(now),
        }
    }

    /// The data files are synced: the checkpoint record is logged, and the
    /// checkpointer waits for it to be durable.
    pub(super) fn checkpoint_synced(&mut self, now: Nanos) {
        self.checkpointer.handle_synced();
        let lsn = self
            .wal
            .insert(self.workload.checkpoint_record_bytes() as u64);
        if self.wal.wait_for_flush(lsn, Waiter::Checkpointer) {
            self.checkpoint_done(now);
        }
    }

    /// The checkpoint record is durable: the checkpoint is done, and the
    /// checkpointer acts again.
    fn checkpoint_done(&mut self, now: Nanos) {
        self.checkpointer.handle_record_flushed(now);
        self.stats.counters.checkpoints_done += 1;
        self.stats.second(now).checkpoint_ends += 1;
        self.checkpointer_step(now);
    }

    /// The checkpointer writes `buf` (`block`), whose WAL is durable.
    fn checkpoint_write(&mut self, now: Nanos, buf: BufId, block: u64) {
        let kind = self.checkpointer.write(block);
        self.issue(kind, Purpose::CheckpointWrite { buf, block }, now);
    }

    /// The WAL the checkpointer waited for is durable: the write it held
    /// back goes out, or the checkpoint record is safe.
    pub(super) fn checkpointer_flushed(&mut self, now: Nanos) {
        match self.checkpointer.handle_wal_flushed() {
            CkptFlushed::Write { buf, block } => self.checkpoint_write(now, buf, block),
            CkptFlushed::Record => self.checkpoint_done(now),
        }
    }

    /// The autovacuum launcher's nap is over: it may hand the worker a
    /// table to vacuum; it naps again either way.
    pub(super) fn autovacuum_wake(&mut self, now: Nanos) {
        let busy = self.vacuum.job.is_some();
        let (job, next) = self
            .autovacuum
            .handle_timeout(now, busy, &self.tables, &mut self.dead);
        if let Some(job) = job {
            self.start_vacuum(now, job);
        }
        self.set_timer(next, Timer::Autovacuum);
    }

    /// The autovacuum worker finished a table: the next on its list, if
    /// any.
    pub(super) fn autovacuum_worker_done(&mut self, now: Nanos) {
        if self.vacuum.job.is_some() {
            return;
        }
        if let Some(job) = self
            .autovacuum
            .handle_worker_done(&self.tables, &mut self.dead)
        {
            self.start_vacuum(now, job);
        }
    }

    /// A page written with `kind` goes dirty into the modelled page cache
    /// where the core writes the kernel's writeback: the write is a copy,
    /// the flusher or an fsync writes the page later. Other writes as they
    /// are.
    pub(super) fn page_cache_write(&mut self, now: Nanos, kind: IoKind) -> IoKind {
        let (
            Some(f),
            IoKind::WritePage {
                block,
                kernel_writeback: true,
                ..
            },
        ) = (&mut self.kernel_flusher, kind)
        else {
            return kind;
        };
        if f.handle_dirtied(now, block) {
            self.set_timer(now, Timer::KernelFlusher { kick: true });
        }
        IoKind::CacheWrite { block }
    }

    /// The kernel's flusher woke (`kick`: past the background threshold):
    /// it writes back what it chose.
    pub(super) fn kernel_flusher_wake(&mut self, now: Nanos, kick: bool) {
        let Some(f) = &mut self.kernel_flusher else {
            return;
        };
        let runs = if kick {
            f.handle_kick()
        } else {
            let (runs, next) = f.handle_timeout(now);
            self.set_timer(next, Timer::KernelFlusher { kick: false });
            runs
        };
        for run in runs {
            self.writeback(now, run, true);
        }
    }

    /// One run of dirty pages written back, by the flusher or (not
    /// `flusher`) the checkpointer's fsync.
    fn writeback(&mut self, now: Nanos, run: Run, flusher: bool) {
        let kind = IoKind::Writeback {
            block: run.block,
            pages: run.pages,
            flusher,
        };
        let counters = &mut self.stats.counters;
        let pages = u64::from(run.pages);
        if flusher {
            counters.kernel_writeback_pages += pages;
            self.issue(kind, Purpose::KernelWriteback, now);
        } else {
            counters.fsync_writeback_pages += pages;
            self.issue(kind, Purpose::FsyncWriteback, now);
        }
    }

    /// One of the flusher's writes is done: its next goes, if any.
    pub(super) fn flusher_write_done(&mut self, now: Nanos) {
        let f = self
            .kernel_flusher
            .as_mut()
            .expect("a flusher's writeback has a flusher");
        if let Some(run) = f.handle_writeback_done() {
            self.writeback(now, run, true);
        }
    }

    /// One of the checkpoint fsync's writes is done: the next goes, or,
    /// once all are, the flush that ends the fsync.
    pub(super) fn fsync_write_done(&mut self, now: Nanos) {
        let f = self
            .kernel_flusher
            .as_mut()
            .expect("an fsync's writeback has a flusher");
        match f.handle_fsync_write_done() {
            FsyncStep::Write(run) => self.writeback(now, run, false),
            FsyncStep::Wait => {}
            FsyncStep::Done => self.issue(IoKind::DataSync, Purpose::DataSync, now),
        }
    }
}
