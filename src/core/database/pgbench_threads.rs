//! pgbench's worker threads on the database host (`-j`): each reads its
//! clients' replies and sends their next statements, one client at a time,
//! on a core of the same CPU as the backends.

use super::*;

/// One of pgbench's worker threads on the database host. pgbench's loop
/// reads each ready connection's reply and sends its next statement in
/// turn, so the thread serves its clients one at a time; it needs a core
/// like any process, and keeps it while replies wait, as long as the scheduler
/// lets it (`Cpu::extend`).
#[derive(Debug, Default)]
pub(super) struct PgbenchThread {
    /// Clients whose reply waits for the thread, in arrival order.
    waiting: VecDeque<u32>,
    /// The client it serves now (on a core or queued for one).
    serving: Option<u32>,
    /// Since when its time on or waiting for a core is not yet counted.
    since: Nanos,
}

impl Database {
    /// Backend `c` sent its reply: it waits for thread `t` to read it and
    /// send the next statement, which an idle thread starts on at once.
    pub(super) fn thread_reply(&mut self, now: Nanos, t: usize, c: u32) {
        self.threads[t].waiting.push_back(c);
        if self.threads[t].serving.is_none() {
            self.thread_next(now, t);
        }
    }

    /// Idle thread `t` takes its next waiting client, if any, and asks for a
    /// core to serve it.
    fn thread_next(&mut self, now: Nanos, t: usize) {
        self.threads[t].since = now;
        self.thread_take(now, t, false);
    }

    /// Thread `t` takes its next waiting client, if any, and spends its CPU
    /// for it: on the core it holds (`on_core`), or on one it asks for. True
    /// if the core it held is dealt with (kept, or handed on by the
    /// scheduler while the thread queues); false if nobody is waiting (the
    /// caller frees the core).
    fn thread_take(&mut self, now: Nanos, t: usize, on_core: bool) -> bool {
        let th = &mut self.threads[t];
        let Some(c) = th.waiting.pop_front() else {
            return false;
        };
        th.serving = Some(c);
        let p = Proc::PgbenchThread(t as u32);
        let demand = self.cfg.client_cpu;
        let finish = if on_core {
            match self.cpu.extend(now, p.into(), demand) {
                Some(finish) => Some(finish),
                None => {
                    // The scheduler gives its core to someone due first.
                    let next = self.cpu.preempt(now, p.into(), demand);
                    self.cpu_handed_on(now, next);
                    return true;
                }
            }
        } else {
            self.cpu.request(now, p.into(), demand)
        };
        if let Some(finish) = finish {
            self.set_timer(finish, Timer::CpuDone(p));
        }
        on_core
    }

    /// Thread `t` sent its client's next statement, which wakes the
    /// backend. True if its core is dealt with (it goes
    /// on to the next waiting client, there or queued for a core); false if
    /// it goes idle (the caller frees the core).
    pub(super) fn thread_served(&mut self, now: Nanos, t: usize) -> bool {
        let c = self.threads[t].serving.take().expect("a client served");
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
        let th = &mut self.threads[t];
        self.stats
            .counters
            .client_thread_time
            .record(now - th.since);
        th.since = now;
        self.thread_take(now, t, true)
    }
}
