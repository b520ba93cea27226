//! The loop's side of the background processes: how an event reaches each
//! process's component and how what it answers is applied to the shared
//! memory (buffer pool, WAL, CPU, I/O table, timers) and to the processes it
//! wakes. In PostgreSQL's terms, the latches: a process never calls into
//! another's file; it sets a latch, and the loop here delivers it.

use super::pgbench_threads::ThreadCpu;
use super::*;

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
}
