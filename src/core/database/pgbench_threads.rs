//! pgbench's worker threads on the database host (`-j`): each reads its
//! clients' replies and sends their next statements, one client at a time,
//! on a core of the same CPU as the backends.
//!
//! A thread owns its queue of clients and the client it serves; the CPU
//! scheduler is shared and handed in. It is told of a reply and of the end
//! of its CPU burst, and answers with what its core does next
//! ([`ThreadCpu`]); the loop (`wakeups`) sets the timers and wakes the
//! backend it served.

use std::collections::VecDeque;

use super::proc::Proc;
use crate::core::cpu::Cpu;
use crate::core::time::Nanos;

/// One of pgbench's worker threads on the database host. pgbench's loop
/// reads each ready connection's reply and sends its next statement in
/// turn, so the thread serves its clients one at a time; it needs a core
/// like any process, and keeps it while replies wait, as long as the scheduler
/// lets it (`Cpu::extend`).
#[derive(Debug)]
pub(super) struct PgbenchThread {
    /// Its name for the CPU scheduler.
    proc: Proc,
    /// Clients whose reply waits for the thread, in arrival order.
    waiting: VecDeque<u32>,
    /// The client it serves now (on a core or queued for one).
    serving: Option<u32>,
    /// Since when its time on or waiting for a core is not yet counted.
    since: Nanos,
}

/// What a thread's core does once it has looked for its next client.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum ThreadCpu {
    /// Nobody waits: the thread goes idle (the caller frees a core it held).
    Idle,
    /// Its burst for the next client runs until then.
    Until(Nanos),
    /// It queues for a core it did not hold.
    Queued,
    /// The scheduler gave the core it held to the process returned (if
    /// any), due first, while the thread queues.
    HandedOn(Option<(u32, Nanos)>),
}

impl PgbenchThread {
    /// Thread `t`, idle.
    pub(super) fn new(t: u32) -> PgbenchThread {
        PgbenchThread {
            proc: Proc::PgbenchThread(t),
            waiting: VecDeque::new(),
            serving: None,
            since: 0,
        }
    }

    /// Its name for the CPU scheduler.
    pub(super) fn proc(&self) -> Proc {
        self.proc
    }

    /// Backend `c` sent its reply at `now`: it waits for the thread to read
    /// it and send the next statement, which an idle thread starts on at
    /// once, asking `cpu` for a core for `demand`.
    pub(super) fn handle_reply(
        &mut self,
        now: Nanos,
        c: u32,
        cpu: &mut Cpu,
        demand: Nanos,
    ) -> ThreadCpu {
        assert!(
            self.serving != Some(c) && !self.waiting.contains(&c),
            "client {c} waits for its thread twice"
        );
        self.waiting.push_back(c);
        if self.serving.is_some() {
            return ThreadCpu::Queued;
        }
        self.since = now;
        self.take_client(now, cpu, demand, false)
    }

    /// Its CPU burst is over at `now`: the statement for the client it
    /// served is sent. Returns that client and the time the thread spent
    /// on (or waiting for) a core since it was last counted.
    pub(super) fn handle_served(&mut self, now: Nanos) -> (u32, Nanos) {
        let c = self.serving.take().expect("a client served");
        assert!(self.since <= now, "the thread's time runs forwards");
        let spent = now - self.since;
        self.since = now;
        (c, spent)
    }

    /// The thread, on the core it still holds, takes its next waiting
    /// client, if any, and spends `demand` of CPU for it.
    pub(super) fn serve_next(&mut self, now: Nanos, cpu: &mut Cpu, demand: Nanos) -> ThreadCpu {
        self.take_client(now, cpu, demand, true)
    }

    /// Take the next waiting client, if any, and spend its CPU: on the
    /// core the thread holds (`on_core`), or on one it asks for.
    fn take_client(
        &mut self,
        now: Nanos,
        cpu: &mut Cpu,
        demand: Nanos,
        on_core: bool,
    ) -> ThreadCpu {
        assert!(self.serving.is_none(), "one client at a time");
        let Some(c) = self.waiting.pop_front() else {
            return ThreadCpu::Idle;
        };
        self.serving = Some(c);
        let id = self.proc.into();
        if !on_core {
            return cpu
                .request(now, id, demand)
                .map_or(ThreadCpu::Queued, ThreadCpu::Until);
        }
        match cpu.extend(now, id, demand) {
            Some(finish) => ThreadCpu::Until(finish),
            // The scheduler gives its core to someone due first.
            None => ThreadCpu::HandedOn(cpu.preempt(now, id, demand)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cpu(cores: u32) -> Cpu {
        Cpu::new(cores)
    }

    #[test]
    fn serves_one_client_at_a_time_in_arrival_order() {
        let mut cpu = cpu(4);
        let mut t = PgbenchThread::new(0);
        assert_eq!(t.handle_reply(0, 7, &mut cpu, 10), ThreadCpu::Until(10));
        // A second reply waits behind the first.
        assert_eq!(t.handle_reply(2, 3, &mut cpu, 10), ThreadCpu::Queued);
        assert_eq!(t.handle_served(10), (7, 10));
        // It keeps its core for the next one.
        assert_eq!(t.serve_next(10, &mut cpu, 10), ThreadCpu::Until(20));
        assert_eq!(t.handle_served(20), (3, 10));
        assert_eq!(t.serve_next(20, &mut cpu, 10), ThreadCpu::Idle);
    }

    #[test]
    fn an_idle_thread_queues_for_a_busy_cpu() {
        let mut cpu = cpu(1);
        assert!(cpu.request(0, 0, 100).is_some());
        let mut t = PgbenchThread::new(0);
        assert_eq!(t.handle_reply(5, 1, &mut cpu, 10), ThreadCpu::Queued);
    }
}
