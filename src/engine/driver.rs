//! The event loop: feeds a device's completions and the clock into the core,
//! and the core's requests into the device. The same loop drives every
//! device; it holds no database logic of its own.

use anyhow::Result;

use super::Device;
use crate::core::database::Database;
use crate::core::io::IoCompletion;
use crate::core::stats::stddev_ns;
use crate::core::time::{MS, Nanos, SEC};
use crate::stop::Stop;

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
    /// Mean lateness of the timers the loop handled over the interval
    /// (µs): zero in virtual time; on the real clock, whether pgiosim's
    /// own loop kept up (a soak's second figure, beside its memory).
    pub timer_lag_us: f64,
}

/// How late the loop handed the core its timers, on the device's clock.
///
/// On the real clock, modelled CPU bursts and round trips stay true only
/// while this stays small: a loop that falls behind (host CPU taken by
/// others, a submission that blocks in the kernel) stretches every timer,
/// and the core books the stretch as queueing. Always zero in virtual time.
#[derive(Debug, Clone)]
pub struct TimerLag {
    /// Timers handled.
    pub timers: u64,
    /// Sum of lateness, nanoseconds.
    pub sum_ns: u128,
    /// Lateness distribution, nanoseconds (a timer on time counts as 1 ns).
    pub hist: hdrhistogram::Histogram<u64>,
    /// Timers on time not yet in `hist`: in virtual time every timer is,
    /// and one histogram record per event was 3% of `model`'s instructions.
    on_time: u64,
}

impl Default for TimerLag {
    fn default() -> Self {
        Self {
            timers: 0,
            sum_ns: 0,
            hist: hdrhistogram::Histogram::new_with_bounds(1, 60 * SEC, 2)
                .expect("valid histogram bounds"),
            on_time: 0,
        }
    }
}

impl TimerLag {
    fn record(&mut self, late_ns: Nanos) {
        self.timers += 1;
        self.sum_ns += late_ns as u128;
        if late_ns == 0 {
            self.on_time += 1;
        } else {
            self.hist.saturating_record(late_ns);
        }
    }

    /// Put the timers on time into the histogram (as n records of 1 ns at
    /// once: the same histogram as one by one).
    fn flush_on_time(&mut self) {
        self.hist
            .saturating_record_n(1, std::mem::take(&mut self.on_time));
    }

    /// Mean lateness, microseconds.
    pub fn mean_us(&self) -> f64 {
        if self.timers == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.timers as f64 / 1e3
        }
    }

    /// Lateness at quantile `q`, microseconds.
    pub fn quantile_us(&self, q: f64) -> f64 {
        if self.timers == 0 {
            0.0
        } else {
            self.hist.value_at_quantile(q) as f64 / 1e3
        }
    }

    /// Largest lateness, microseconds.
    pub fn max_us(&self) -> f64 {
        if self.timers == 0 {
            0.0
        } else {
            self.hist.max() as f64 / 1e3
        }
    }
}

/// How the loop ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// The run reached its duration or transaction count.
    Completed,
    /// Stopped by the stop flag (Ctrl-C, SIGTERM).
    Interrupted,
    /// Stopped by the caller's rule (`drive_until`): `model` knew its
    /// answer to the precision asked.
    Settled,
}

/// Longest a single wait blocks, so the stop flag is seen promptly.
const MAX_BLOCK: Nanos = 50 * MS;

/// Run `db` on `dev` until it finishes or `stop` is raised; every `progress`
/// nanoseconds (if set) `on_progress` gets the last interval's figures.
/// Returns how the run ended and how late its timers were handled.
///
/// Generic over the device so that the simulated one's calls, one or more
/// per event, inline into the loop; `dyn Device` works too.
pub fn drive<D: Device + ?Sized>(
    db: &mut Database,
    dev: &mut D,
    stop: &Stop,
    progress: Option<Nanos>,
    on_progress: &mut dyn FnMut(Progress),
) -> Result<(Ending, TimerLag)> {
    drive_observed(db, dev, stop, progress, on_progress, |_| {})
}

/// [`drive`], asking `until` once a second (of the device's clock) whether
/// the run has said enough; if it says yes the run stops there, as it
/// would at its duration, and ends [`Ending::Settled`].
pub fn drive_until<D: Device + ?Sized>(
    db: &mut Database,
    dev: &mut D,
    stop: &Stop,
    progress: Option<Nanos>,
    on_progress: &mut dyn FnMut(Progress),
    until: &mut dyn FnMut(&Database, Nanos) -> bool,
) -> Result<(Ending, TimerLag)> {
    drive_inner(db, dev, stop, progress, on_progress, |_| {}, until)
}

/// [`drive`], showing the database to `observe` after every round of
/// events, before its requests go to the device: the core's tests watch
/// its state between events through the very loop that runs it.
pub(crate) fn drive_observed<D: Device + ?Sized>(
    db: &mut Database,
    dev: &mut D,
    stop: &Stop,
    progress: Option<Nanos>,
    on_progress: &mut dyn FnMut(Progress),
    observe: impl FnMut(&Database),
) -> Result<(Ending, TimerLag)> {
    drive_inner(
        db,
        dev,
        stop,
        progress,
        on_progress,
        observe,
        &mut |_, _| false,
    )
}

fn drive_inner<D: Device + ?Sized>(
    db: &mut Database,
    dev: &mut D,
    stop: &Stop,
    progress: Option<Nanos>,
    on_progress: &mut dyn FnMut(Progress),
    mut observe: impl FnMut(&Database),
    until: &mut dyn FnMut(&Database, Nanos) -> bool,
) -> Result<(Ending, TimerLag)> {
    set_precise_timers();
    let mut next_second = SEC;
    let mut lag = TimerLag::default();
    let mut completions: Vec<IoCompletion> = Vec::with_capacity(256);
    let mut ending = Ending::Completed;
    let mut meter = ProgressMeter::new(progress);
    loop {
        observe(db);
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
        if stop.is_set() {
            ending = Ending::Interrupted;
            db.stop(dev.now());
            continue;
        }
        let deadline = match (db.poll_timeout(), meter.next) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        next_events(db, dev, deadline, &mut completions, &mut lag)?;
        let now = fire_until_device(
            db,
            dev,
            stop,
            next_second,
            meter.next,
            &mut observe,
            &mut lag,
        );
        meter.report(db, now, &lag, on_progress);
        if now >= next_second {
            next_second = (now / SEC + 1) * SEC;
            db.note_milestones(now);
            if until(db, now) {
                ending = Ending::Settled;
                db.stop(now);
            }
        }
    }
    lag.flush_on_time();
    Ok((ending, lag))
}

/// In virtual time, the timers due before the device's next completion
/// fire one after another, each as a turn of `drive_inner`'s loop would
/// fire it, without the rest of the turn: until the database has a request
/// to submit, or the second (`next_second`) or progress interval ends.
/// Returns the device's clock.
fn fire_until_device<D: Device + ?Sized>(
    db: &mut Database,
    dev: &mut D,
    stop: &Stop,
    next_second: Nanos,
    next_progress: Option<Nanos>,
    observe: &mut impl FnMut(&Database),
    lag: &mut TimerLag,
) -> Nanos {
    let mut now = dev.now();
    while now < next_second
        && next_progress.is_none_or(|p| now < p)
        && !db.has_requests()
        && !db.is_finished()
        && !stop.is_set()
        && let Some(t) = db.poll_timeout()
        && next_progress.is_none_or(|p| t <= p)
        && dev.skip_to(t)
    {
        observe(db);
        now = dev.now();
        lag.record(now - t);
        db.handle_timeout(now);
    }
    now
}

/// Waits on `dev` until `deadline` (or for what it completes first) and
/// hands `db` the completions and the timers due, in time order, each
/// timer's lateness recorded in `lag`. Returns the device's time after.
fn next_events<D: Device + ?Sized>(
    db: &mut Database,
    dev: &mut D,
    deadline: Option<Nanos>,
    completions: &mut Vec<IoCompletion>,
    lag: &mut TimerLag,
) -> Result<Nanos> {
    completions.clear();
    let now = dev.now();
    let spin = dev.timer_spin();
    match deadline {
        // Close to a timer: poll without sleeping, because a sleeping
        // thread wakes tens of µs late on a VM and modelled CPU bursts
        // and round trips are only tens of µs long.
        Some(d) if d <= now + spin => dev.wait(Some(now), MAX_BLOCK, completions)?,
        Some(d) => dev.wait(Some(d - spin), MAX_BLOCK, completions)?,
        None => dev.wait(None, MAX_BLOCK, completions)?,
    }
    // Events in time order: timers due before a completion fire first.
    for c in completions.drain(..) {
        if let Some(t) = db.poll_timeout()
            && t < c.at
        {
            lag.record(c.at - t);
            db.handle_timeout(c.at - 1);
        }
        db.handle_completion(c);
    }
    let now = dev.now();
    if let Some(t) = db.poll_timeout()
        && t <= now
    {
        lag.record(now - t);
        db.handle_timeout(now);
    }
    Ok(now)
}

/// The progress lines (-P): every `every` nanoseconds, the figures of the
/// interval since the last one.
struct ProgressMeter {
    every: Option<Nanos>,
    /// When the next line is due.
    next: Option<Nanos>,
    /// Transactions, their latency sum (ns) and sum of squares (µs²) at the
    /// last line.
    last: (u64, u128, f64),
    /// Timers and their lateness sum (ns) at the last line.
    last_lag: (u64, u128),
}

impl ProgressMeter {
    fn new(every: Option<Nanos>) -> ProgressMeter {
        ProgressMeter {
            every,
            next: every,
            last: (0, 0, 0.0),
            last_lag: (0, 0),
        }
    }

    /// Gives `on_progress` the interval's figures if a line is due at `now`.
    fn report(
        &mut self,
        db: &Database,
        now: Nanos,
        lag: &TimerLag,
        on_progress: &mut dyn FnMut(Progress),
    ) {
        let Some(p) = self.next else { return };
        if now < p {
            return;
        }
        let s = db.stats();
        let n = s.transactions - self.last.0;
        let sum = s.latency_sum_ns - self.last.1;
        let sq = s.latency_sq_sum_us2 - self.last.2;
        let interval = self.every.unwrap_or(SEC) as f64 / 1e9;
        on_progress(Progress {
            elapsed_s: p as f64 / 1e9,
            tps: n as f64 / interval,
            latency_ms: if n == 0 {
                0.0
            } else {
                sum as f64 / n as f64 / 1e6
            },
            stddev_ms: stddev_ns(n, sum, sq) / 1e6,
            timer_lag_us: match lag.timers - self.last_lag.0 {
                0 => 0.0,
                t => (lag.sum_ns - self.last_lag.1) as f64 / t as f64 / 1e3,
            },
        });
        self.last = (s.transactions, s.latency_sum_ns, s.latency_sq_sum_us2);
        self.last_lag = (lag.timers, lag.sum_ns);
        self.next = Some(p + self.every.unwrap_or(SEC));
    }
}

/// Modelled CPU bursts and round trips are timers of tens of microseconds;
/// Linux's default 50 µs timer slack would add that much to each one.
fn set_precise_timers() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and touches no memory.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timers_on_time_count_as_one_ns_like_the_late_ones_recorded_one_by_one() {
        let lates = [0, 0, 5_000, 0, 120_000, 0, 0, 1, 0, 9_000_000];
        let mut lag = TimerLag::default();
        let mut one_by_one =
            hdrhistogram::Histogram::<u64>::new_with_bounds(1, 60 * SEC, 2).unwrap();
        for &l in &lates {
            lag.record(l);
            one_by_one.saturating_record(l.max(1));
        }
        lag.flush_on_time();
        assert_eq!(lag.timers, lates.len() as u64);
        assert_eq!(lag.hist.len(), one_by_one.len());
        for q in [0.0, 0.5, 0.6, 0.9, 0.99, 1.0] {
            assert_eq!(
                lag.hist.value_at_quantile(q),
                one_by_one.value_at_quantile(q),
                "q {q}"
            );
        }
        assert_eq!(lag.max_us(), one_by_one.max() as f64 / 1e3);
    }
}
