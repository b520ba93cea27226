//! The event loop: feeds a device's completions and the clock into the core,
//! and the core's requests into the device. The same loop drives every
//! device; it holds no database logic of its own.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::Result;

use super::Device;
use crate::core::database::Database;
use crate::core::io::IoCompletion;
use crate::core::stats::stddev_ns;
use crate::core::time::{MS, Nanos, SEC};

/// One pgbench-style progress report.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Progress {
    /// Seconds since the start.
    pub elapsed_s: f64,
    /// Transactions per second over the interval.
    pub tps: f64,
    /// Mean and standard deviation of latency over the interval (ms).
    pub latency_ms: f64,
    pub stddev_ms: f64,
}

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The run reached its duration or transaction count.
    Completed,
    /// Stopped by the stop flag (Ctrl-C, SIGTERM).
    Interrupted,
}

/// Longest a single wait blocks, so the stop flag is seen promptly.
const MAX_BLOCK: Nanos = 50 * MS;

/// Run `db` on `dev` until it finishes or `stop` is raised; every `progress`
/// nanoseconds (if set) `on_progress` gets the last interval's figures.
pub fn drive(
    db: &mut Database,
    dev: &mut dyn Device,
    stop: &Arc<AtomicBool>,
    progress: Option<Nanos>,
    on_progress: &mut dyn FnMut(Progress),
) -> Result<Ending> {
    set_precise_timers();
    let mut completions: Vec<IoCompletion> = Vec::with_capacity(256);
    let mut ending = Ending::Completed;
    let mut next_progress = progress;
    let mut last = (0u64, 0u128, 0f64);
    loop {
        while let Some(req) = db.poll_request() {
            dev.submit(req)?;
        }
        if db.is_finished() {
            if db.outstanding() == 0 {
                break;
            }
            // Reap what is still in flight before buffers are dropped.
            completions.clear();
            dev.wait(None, MAX_BLOCK, &mut completions)?;
            for c in completions.drain(..) {
                db.handle_completion(c);
            }
            continue;
        }
        if stop.load(Ordering::Relaxed) {
            ending = Ending::Interrupted;
            db.stop(dev.now());
            continue;
        }
        let deadline = match (db.poll_timeout(), next_progress) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        completions.clear();
        let now = dev.now();
        let spin = dev.timer_spin();
        match deadline {
            // Close to a timer: poll without sleeping, because a sleeping
            // thread wakes tens of µs late on a VM and modelled CPU bursts
            // and round trips are only tens of µs long.
            Some(d) if d <= now + spin => dev.wait(Some(now), MAX_BLOCK, &mut completions)?,
            Some(d) => dev.wait(Some(d - spin), MAX_BLOCK, &mut completions)?,
            None => dev.wait(None, MAX_BLOCK, &mut completions)?,
        }
        for c in completions.drain(..) {
            db.handle_completion(c);
        }
        let now = dev.now();
        if db.poll_timeout().is_some_and(|t| t <= now) {
            db.handle_timeout(now);
        }
        if let Some(p) = next_progress
            && now >= p
        {
            let s = db.stats();
            let n = s.transactions - last.0;
            let sum = s.latency_sum_ns - last.1;
            let sq = s.latency_sq_sum_us2 - last.2;
            let interval = progress.unwrap_or(SEC) as f64 / 1e9;
            on_progress(Progress {
                elapsed_s: p as f64 / 1e9,
                tps: n as f64 / interval,
                latency_ms: if n == 0 {
                    0.0
                } else {
                    sum as f64 / n as f64 / 1e6
                },
                stddev_ms: stddev_ns(n, sum, sq) / 1e6,
            });
            last = (s.transactions, s.latency_sum_ns, s.latency_sq_sum_us2);
            next_progress = Some(p + progress.unwrap_or(SEC));
        }
    }
    Ok(ending)
}

/// Modelled CPU bursts and round trips are timers of tens of microseconds;
/// Linux's default 50 µs timer slack would add that much to each one.
fn set_precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}
