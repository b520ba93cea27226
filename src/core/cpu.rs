//! The CPU scheduler: N cores shared by all backends, first come first served.
//!
//! CPU is modelled, not burned: a backend asks for its compute time and gets
//! a finish time; in `run` the wait is a timer. Time spent queued for a core
//! is `cpu_queue` in the breakdown.

use std::collections::VecDeque;

use super::time::Nanos;

/// N cores and a run queue.
#[derive(Debug)]
pub struct Cpu {
    cores: u32,
    busy: u32,
    queue: VecDeque<(u32, Nanos)>,
    busy_ns: u128,
}

impl Cpu {
    /// A scheduler over `cores` cores (at least one).
    pub fn new(cores: u32) -> Self {
        assert!(cores > 0);
        Cpu {
            cores,
            busy: 0,
            queue: VecDeque::new(),
            busy_ns: 0,
        }
    }

    /// `client` needs `demand` of CPU at `now`: the time it finishes if a
    /// core is free, or None if it queues (it is started by `release`).
    pub fn request(&mut self, now: Nanos, client: u32, demand: Nanos) -> Option<Nanos> {
        if self.busy < self.cores {
            self.busy += 1;
            self.busy_ns += demand as u128;
            Some(now + demand)
        } else {
            self.queue.push_back((client, demand));
            None
        }
    }

    /// Like `request`, but ahead of everyone queued.
    pub fn request_first(&mut self, now: Nanos, client: u32, demand: Nanos) -> Option<Nanos> {
        if self.busy < self.cores {
            self.request(now, client, demand)
        } else {
            self.queue.push_front((client, demand));
            None
        }
    }

    /// A burst finished at `now` and its core is free: the next queued
    /// client, if any, starts; returns it with its finish time.
    pub fn release(&mut self, now: Nanos) -> Option<(u32, Nanos)> {
        assert!(self.busy > 0, "release of an idle core");
        match self.queue.pop_front() {
            Some((client, demand)) => {
                self.busy_ns += demand as u128;
                Some((client, now + demand))
            }
            None => {
                self.busy -= 1;
                None
            }
        }
    }

    /// The burst on a core ends at `now` and its process keeps the core for
    /// `demand` more (pgbench's thread with more replies to read does not
    /// yield): its new finish time.
    pub fn extend(&mut self, now: Nanos, demand: Nanos) -> Nanos {
        assert!(self.busy > 0, "extend on an idle core");
        self.busy_ns += demand as u128;
        now + demand
    }

    /// Cores busy now.
    pub fn busy(&self) -> u32 {
        self.busy
    }

    /// Total CPU time granted so far (nanoseconds).
    pub fn busy_ns(&self) -> u128 {
        self.busy_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queues_beyond_core_count_fifo() {
        let mut c = Cpu::new(2);
        assert_eq!(c.request(0, 0, 10), Some(10));
        assert_eq!(c.request(0, 1, 10), Some(10));
        assert_eq!(c.request(1, 2, 5), None);
        assert_eq!(c.request(2, 3, 5), None);
        assert_eq!(c.release(10), Some((2, 15)));
        assert_eq!(c.release(10), Some((3, 15)));
        assert_eq!(c.release(15), None);
        assert_eq!(c.release(15), None);
        assert_eq!(c.busy(), 0);
        assert_eq!(c.busy_ns(), 30);
    }

    #[test]
    fn request_first_goes_ahead_of_the_queue_but_takes_a_free_core_at_once() {
        let mut c = Cpu::new(1);
        assert_eq!(c.request_first(0, 0, 10), Some(10));
        assert_eq!(c.request(1, 1, 5), None);
        assert_eq!(c.request(2, 2, 5), None);
        assert_eq!(c.request_first(3, 3, 1), None);
        assert_eq!(c.release(10), Some((3, 11)));
        assert_eq!(c.release(11), Some((1, 16)));
        assert_eq!(c.release(16), Some((2, 21)));
        assert_eq!(c.release(21), None);
        assert_eq!(c.busy_ns(), 21);
    }
}
