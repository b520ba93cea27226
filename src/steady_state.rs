//! The steady state of a run: where its warm-up ends, and what the rest
//! measures, each figure with a 95% confidence interval.
//!
//! A run starts cold: shared_buffers and the page cache fill, and the first
//! checkpoint brings full-page images. Its whole-run figures, as pgbench
//! counts them, mix that warm-up with what follows. The methods are the
//! simulation literature's:
//! * the warm-up is found by MSER-5 (White, "An effective truncation
//!   heuristic for bias reduction in simulation output", Simulation 69(6),
//!   1997; White, Cobb and Spratt, WSC 2000): the per-second rate is
//!   averaged in batches of 5, and the truncation that minimises the
//!   standard error of the mean of what is left ends the warm-up, provided
//!   it falls in the first half of the run (later, the run is too short);
//! * the interval is by non-overlapping batch means (Alexopoulos and Seila,
//!   "Output data analysis", Handbook of Simulation, 1998, ch. 7): about 20
//!   batches, Student's t with batches − 1 degrees of freedom;
//! * checkpoints make the rate periodic, so where two or more start after
//!   the warm-up the window is cut to whole checkpoint cycles (from one
//!   start to a later one) and a partial cycle does not bias the mean;
//! * the window must pass Heidelberger and Welch's stationarity test
//!   (Operations Research 31(6), 1983; see [`stationarity`]): batch means
//!   that agree with each other say nothing of a rate that climbs slowly
//!   across the window, as WAL-triggered checkpoints spread out over ten
//!   minutes. Where it fails, the cut is looked for further on.
//!
//! Pure: it reads a run's per-second series and the times its caches
//! filled, so `model`'s stopping rule and the result share it.

use statrs::distribution::{ContinuousCDF, StudentsT};

mod mser;
pub mod stationarity;

pub use mser::mser5;
use mser::{mser_cut, mser_statistic};

use stationarity::{
    Batch, CVM_CRITICAL_5PCT, FRESH_DONE_LEFT, cramer_von_mises, halves_differ, still_moving,
};
pub use stationarity::{Cache, Transient};

use crate::core::breakdown::Bucket;
use crate::core::database::Database;
use crate::core::stats::{Merge, Milestones, Second};
use crate::core::time::Nanos;
use crate::core::workload::FreshPages;

/// Observations MSER-5 averages into one batch.
const MSER_BATCH: usize = 5;

/// Fewest MSER batches analysed: with fewer, a warm-up cannot be told from
/// noise (50 one-second observations).
const MSER_MIN_BATCHES: usize = 10;

/// Batches of the confidence interval, and the fewest it is given with.
const CI_BATCHES: usize = 20;
const CI_MIN_BATCHES: usize = 10;

/// Fewest whole autovacuum cycles batched by cycle: each is one batch, and
/// Student's t with 4 degrees of freedom widens the interval for so few.
const CYCLE_MIN_BATCHES: usize = 5;

/// A figure and its 95% confidence interval's half width, in its units.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Estimate {
    pub mean: f64,
    pub half_width: f64,
}

impl Estimate {
    /// The half width as a fraction of the mean (0 for a 0 mean).
    pub fn relative(&self) -> f64 {
        if self.mean == 0.0 {
            0.0
        } else {
            self.half_width / self.mean.abs()
        }
    }
}

/// What ended the warm-up, in a DBA's words.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WarmupEnd {
    /// Nothing to cut: the rate was steady from the first second.
    None,
    /// shared_buffers had filled (victims, and dirty ones, from then on).
    SharedBuffersFull(Nanos),
    /// The page cache had filled (reads evict, and cost more CPU).
    PageCacheFull(Nanos),
    /// The first checkpoint had started (full-page images from then on).
    FirstCheckpoint(Nanos),
    /// No cache or checkpoint event near it: the rate settled.
    RateSettled,
}

/// The steady state of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct SteadyState {
    /// Where the warm-up ends (s from the start) and why.
    pub warmup_s: f64,
    pub warmup_end: WarmupEnd,
    /// The window the figures are over: its start and length (s).
    pub start_s: f64,
    pub length_s: f64,
    /// Whole checkpoint cycles in the window (0: not cut to cycles).
    pub checkpoint_cycles: u32,
    /// Vacuums of a table that started in the window.
    pub vacuums: u32,
    /// Of those, the vacuums of the table whose vacuums cost most (the
    /// rate's slowest recurring cycle).
    pub cycle_vacuums: u32,
    /// Batches of the interval, and whether they are whole autovacuum
    /// cycles (else equal lengths of time).
    pub batches: usize,
    pub batched_by_vacuum: bool,
    pub tps: Estimate,
    pub latency_ms: Estimate,
    /// Mean µs per transaction in each bucket, by `Bucket::index`.
    pub buckets_us: [Estimate; Bucket::COUNT],
    /// What the stationarity test found on the window.
    pub stationarity: Stationarity,
    /// Slow transients still under way, where the run's records show them.
    pub transients: Vec<Transient>,
}

/// Heidelberger and Welch's stationarity test on a window's batch means
/// (see [`stationarity`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stationarity {
    /// The Cramér–von Mises statistic of the batch means' bridge; None
    /// with too few batches to test.
    pub statistic: Option<f64>,
    /// Batches it was made on, and whether they are whole checkpoint
    /// cycles (else the interval's batches).
    pub batches: usize,
    pub by_checkpoint_cycles: bool,
    /// Checkpoints that started in the window.
    pub checkpoints_in_window: usize,
    /// The statistic is at most [`stationarity::CVM_CRITICAL_5PCT`].
    pub passed: bool,
}

/// The analysis's answer.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Steady(Box<SteadyState>),
    /// No steady state in the run, and why, as a phrase ("the run is too
    /// short...").
    NotReached(String),
}

/// A run's series, as the analysis reads it.
pub struct Run<'a> {
    /// Whole points only (a trailing partial second left out).
    pub seconds: &'a [Second],
    /// Seconds each point covers.
    pub width_s: u64,
    pub milestones: Milestones,
    /// The caches the data set is larger than, which fill as it is read:
    /// their filling is warm-up, however steady the rate looks before.
    pub fills_shared_buffers: bool,
    pub fills_page_cache: bool,
    /// A page cache is modelled (whether or not the data set is larger).
    pub has_page_cache: bool,
    /// When each checkpoint started.
    pub checkpoint_starts: &'a [Nanos],
    /// When each (auto)vacuum of a table started.
    pub vacuum_starts: &'a [Nanos],
    /// When each vacuum of the table whose vacuums cost most started:
    /// the rate's slowest recurring cycle.
    pub vacuum_cycle_starts: &'a [Nanos],
    /// The first autovacuum still to come of a table not yet vacuumed:
    /// the table and when it is due (ns from the start).
    pub vacuum_due: Option<(&'a str, Nanos)>,
    /// The table loaded full with the most pages not yet updated.
    pub fresh: Option<FreshPages<'a>>,
}

/// Fewest transactions a steady-state rate is claimed from.
const STEADY_MIN_TRANSACTIONS: u64 = 100;

/// Find the warm-up and measure the rest.
///
/// MSER-5 cuts the warm-up within the first half of the run; where the
/// window after that cut fails the stationarity test, the search goes on
/// from a tenth of the run further, as Heidelberger and Welch truncate
/// their series a tenth at a time, and may then look into the third
/// quarter. A cut in the first half leaves at least as much data as it
/// drops; a later one leaves less, too little for a test on batches of
/// equal time to see a slow trend behind the checkpoints' own rise and
/// fall, so it is kept only where the test was made on at least
/// [`TEST_MIN_CYCLES`] whole checkpoint cycles (or the window holds no
/// checkpoint). Where no cut passes, the figures are MSER-5's own, marked
/// as not shown stationary.
pub fn analyse(run: &Run) -> Outcome {
    let n = run.seconds.len();
    let w = run.width_s.max(1) as f64;
    let rates: Vec<f64> = run
        .seconds
        .iter()
        .map(|s| s.transactions as f64 / w)
        .collect();
    let k = n / MSER_BATCH;
    if let Some(why) = too_little(run, &rates, k) {
        return NotReached(why);
    }
    let stat = mser_statistic(&rates);
    let still_moves = || {
        let mut why = format!(
            "the rate still moves in the second half of the run ({:.0} s)",
            n as f64 * w
        );
        for t in transients(run, n / 2, n) {
            why.push_str("; ");
            why.push_str(&t.phrase());
        }
        NotReached(why)
    };
    let after_fill = match caches_filled(run, n, w) {
        Ok(at) => at,
        // MSER-5's refusal comes first: the rate still moving says more.
        Err(why) => {
            return match mser_cut(&stat, 0, k / 2) {
                None => still_moves(),
                Some(_) => NotReached(why),
            };
        }
    };
    match steady_cut(run, &rates, &stat, k, after_fill) {
        Some(Ok(st)) => Outcome::Steady(Box::new(st)),
        Some(Err(why)) => NotReached(why),
        None => still_moves(),
    }
}

/// Why the run is too short, or did too little, for a steady state to be
/// looked for: fewer than MSER-5's batches (`k` of them), no transaction,
/// or too few to know a rate.
fn too_little(run: &Run, rates: &[f64], k: usize) -> Option<String> {
    let n = run.seconds.len();
    let w = run.width_s.max(1) as f64;
    if k < MSER_MIN_BATCHES {
        return Some(format!(
            "the run is too short to tell a warm-up from the rest ({:.0} s; at least {} s)",
            n as f64 * w,
            MSER_BATCH * MSER_MIN_BATCHES * run.width_s as usize
        ));
    }
    // A rate of 0 is known to no precision: "tps = 0.0 ± 0.0%" said it was.
    if rates.iter().all(|&r| r == 0.0) {
        return Some("no transaction completed in the run".into());
    }
    // Nor is a rate from a handful of transactions: a Poisson count of n
    // is known to 1/sqrt(n) at best, 10% at 100, whatever the batch means
    // of mostly empty seconds say.
    let done: u64 = run.seconds.iter().map(|s| s.transactions).sum();
    if done < STEADY_MIN_TRANSACTIONS {
        return Some(format!(
            "only {done} transactions completed, too few to know the rate (at least \
             {STEADY_MIN_TRANSACTIONS})"
        ));
    }
    None
}

/// The steady state after the first warm-up cut MSER-5 finds (from
/// `after_fill` on, of `k` batches) whose window passes the stationarity
/// test and may be kept; else the first cut's figures (or why it has
/// none), None where MSER-5 finds no cut in the first half.
fn steady_cut(
    run: &Run,
    rates: &[f64],
    stat: &[f64],
    k: usize,
    after_fill: usize,
) -> Option<Result<SteadyState, String>> {
    let (mut from, mut limit) = (0, k / 2);
    let mut first: Option<Result<SteadyState, String>> = None;
    loop {
        let Some(d) = mser_cut(stat, from, limit) else {
            // Still falling at the half: look further, once.
            if limit < k * 3 / 4 {
                limit = k * 3 / 4;
                continue;
            }
            break;
        };
        let measured = measure(run, rates, (d * MSER_BATCH).max(after_fill));
        if let Ok(st) = &measured {
            let kept = d < k / 2
                || st.stationarity.by_checkpoint_cycles
                || st.stationarity.checkpoints_in_window == 0;
            if kept && st.stationarity.passed {
                return Some(measured);
            }
        }
        if first.is_none() && d < k / 2 {
            first = Some(measured);
        }
        (from, limit) = (d + (k / 10).max(1), k * 3 / 4);
        if from > limit {
            break;
        }
    }
    first
}

use Outcome::NotReached;

/// Reads per transaction below which their fall is not named: a cache
/// that already holds nearly everything.
const MIN_READS_PER_TX: f64 = 0.01;

/// Fewest whole checkpoint cycles the stationarity test is made on as its
/// batches, the fewest [`CYCLE_MIN_BATCHES`] whole autovacuum cycles the
/// interval is: fewer leave the variance from the second half with one
/// degree of freedom.
const TEST_MIN_CYCLES: usize = CYCLE_MIN_BATCHES;

/// Where the caches the data set is larger than had filled (points), or
/// why there is no steady state yet.
fn caches_filled(run: &Run, n: usize, w: f64) -> Result<usize, String> {
    // A cache still filling changes the rate when it is full (dirty
    // victims, reads that evict): no steady state before.
    let m = run.milestones;
    let pending = [
        (
            run.fills_shared_buffers,
            m.shared_buffers_full,
            m.shared_buffers_grew,
            "shared_buffers",
        ),
        (
            run.fills_page_cache,
            m.os_cache_full,
            m.os_cache_grew,
            "the page cache",
        ),
    ];
    let middle = (n as f64 * w / 2.0 * 1e9) as Nanos;
    let mut filled_at = 0;
    for (fills, full, grew, name) in pending {
        match (fills, full, grew) {
            (true, Some(t), _) => filled_at = filled_at.max(t),
            // The data set is larger than the cache, but the pages the
            // workload touches are not (a table that grows by appends
            // into a region it reuses): the cache stopped growing short
            // of full and holds them all.
            (true, None, Some(t)) if t <= middle => filled_at = filled_at.max(t),
            (true, None, _) => {
                return Err(format!(
                    "{name} is still filling after {:.0} s (the data set is larger)",
                    n as f64 * w
                ));
            }
            _ => {}
        }
    }
    let after_fill = point(filled_at, w);
    if after_fill > n / 2 {
        return Err(format!(
            "the caches filled at {:.0} s, past the middle of the run ({:.0} s)",
            filled_at as f64 / 1e9,
            n as f64 * w
        ));
    }
    Ok(after_fill)
}

/// The point (of `w` s) a time falls in, rounded up.
fn point(t: Nanos, w: f64) -> usize {
    (t as f64 / 1e9 / w).ceil() as usize
}

/// The points where checkpoints started, from `lo` to `hi` inclusive.
fn checkpoint_points(run: &Run, lo: usize, hi: usize, w: f64) -> Vec<usize> {
    run.checkpoint_starts
        .iter()
        .map(|&t| point(t, w))
        .filter(|&i| i >= lo && i <= hi)
        .collect()
}

/// The points where the costliest table's vacuums started, from `lo` to
/// `hi` inclusive.
fn vacuum_cycle_points(run: &Run, lo: usize, hi: usize, w: f64) -> Vec<usize> {
    run.vacuum_cycle_starts
        .iter()
        .map(|&t| point(t, w))
        .filter(|&i| i >= lo && i <= hi)
        .collect()
}

/// The batches of the interval over the window from `lo` to `hi`: whole
/// autovacuum cycles of the table it costs most where there are enough,
/// else equal lengths. Returns the window, as cut to whole vacuum cycles,
/// the batches' bounds from its start, and whether they are vacuum cycles.
fn interval_batches(
    run: &Run,
    lo: usize,
    hi: usize,
    w: f64,
) -> Result<(usize, usize, Vec<usize>, bool), String> {
    // A batch that holds a vacuum's dip and one that does not differ by
    // the dip, which uniform batches would count as noise (an interval ten
    // times too wide); whole cycles do not.
    let mut marks = vacuum_cycle_points(run, lo, hi, w);
    marks.dedup();
    if marks.len() > CYCLE_MIN_BATCHES {
        let cycles = marks.len() - 1;
        let batches = cycles.min(CI_BATCHES);
        let bounds: Vec<usize> = (0..=batches)
            .map(|j| marks[j * cycles / batches] - marks[0])
            .collect();
        return Ok((marks[0], marks[cycles], bounds, true));
    }
    let len = hi - lo;
    let batches = len.min(CI_BATCHES);
    if batches < CI_MIN_BATCHES {
        return Err(format!(
            "{:.0} s after the warm-up is too short for an interval",
            len as f64 * w
        ));
    }
    let bounds: Vec<usize> = (0..=batches).map(|j| j * len / batches).collect();
    Ok((lo, hi, bounds, false))
}

/// The steady state after a warm-up of `cut` points: its window, figures
/// and stationarity.
fn measure(run: &Run, rates: &[f64], cut: usize) -> Result<SteadyState, String> {
    let n = run.seconds.len();
    let w = run.width_s.max(1) as f64;
    let (lo, hi, cycles) = window(run, cut, n, w);
    let (lo, hi, bounds, by_vacuum) = interval_batches(run, lo, hi, w)?;
    let window = &run.seconds[lo..hi];
    let groups: Vec<Second> = bounds
        .windows(2)
        .map(|ab| merged(&window[ab[0]..ab[1]]))
        .collect();
    let sizes: Vec<f64> = bounds
        .windows(2)
        .map(|ab| (ab[1] - ab[0]) as f64 * w)
        .collect();
    let (tps, latency_ms, buckets_us) = figures(&groups, &sizes, window.len() as f64 * w);
    let (from, to) = (
        (lo as f64 * w * 1e9) as Nanos,
        (hi as f64 * w * 1e9) as Nanos,
    );
    let vacuums = run
        .vacuum_starts
        .iter()
        .filter(|&&t| t >= from && t < to)
        .count() as u32;
    // A window of whole cycles ends on a start: it counts (two starts,
    // one whole cycle).
    let cycle_vacuums = vacuum_cycle_points(run, lo, hi, w).len() as u32;
    let warmup_ns = (cut as f64 * w * 1e9) as Nanos;
    let interval_batches: Vec<Batch> = groups
        .iter()
        .zip(&sizes)
        .map(|(g, &s)| Batch {
            mean: g.transactions as f64 / s,
            length: s,
        })
        .collect();
    Ok(SteadyState {
        warmup_s: cut as f64 * w,
        warmup_end: name_warmup_end(warmup_ns, run, w),
        start_s: lo as f64 * w,
        length_s: window.len() as f64 * w,
        checkpoint_cycles: cycles,
        vacuums,
        cycle_vacuums,
        batches: bounds.len() - 1,
        batched_by_vacuum: by_vacuum,
        tps,
        latency_ms,
        buckets_us,
        stationarity: stationarity(run, rates, lo, hi, interval_batches),
        transients: transients(run, lo, hi),
    })
}

/// The window after a warm-up of `cut` of `n` points: from the warm-up's
/// end to the end, cut to whole checkpoint cycles where two or more starts
/// follow the warm-up, and to whole cycles of the costliest table's vacuum
/// where it recurs; with the whole checkpoint cycles it holds.
fn window(run: &Run, cut: usize, n: usize, w: f64) -> (usize, usize, u32) {
    let starts = checkpoint_points(run, cut, n, w);
    let (lo, hi, cycles) = match (starts.first(), starts.last()) {
        (Some(&a), Some(&b)) if starts.len() >= 2 && b > a => (a, b, starts.len() as u32 - 1),
        _ => (cut, n, 0),
    };
    // Where the costliest table's vacuum recurs, whole cycles of it: the
    // time before its first vacuum gathered its dead tuples from none
    // (warm-up), and a partial cycle at either end weighs its dip wrongly.
    match vacuum_cycle_bounds(run, cut, n, w) {
        Some((a, b)) => {
            let inside = checkpoint_points(run, a, b, w).len();
            (a, b, inside.saturating_sub(1) as u32)
        }
        None => (lo, hi, cycles),
    }
}

/// The first and last start, from `lo` to `hi` (points), of the costliest
/// table's vacuums, where there are two or more.
fn vacuum_cycle_bounds(run: &Run, lo: usize, hi: usize, w: f64) -> Option<(usize, usize)> {
    let marks = vacuum_cycle_points(run, lo, hi, w);
    match (marks.first(), marks.last()) {
        (Some(&a), Some(&b)) if b > a => Some((a, b)),
        _ => None,
    }
}

/// The rate, the latency and its breakdown over a window of `length_s`
/// made of `groups`, each with its interval from the groups (batches) of
/// `sizes` seconds.
fn figures(
    groups: &[Second],
    sizes: &[f64],
    length_s: f64,
) -> (Estimate, Estimate, [Estimate; Bucket::COUNT]) {
    let total = merged(groups);
    let tx = total.transactions as f64;
    let tps = interval(
        tx / length_s,
        groups
            .iter()
            .zip(sizes)
            .map(|(g, &s)| g.transactions as f64 / s),
    );
    let per_tx = |g: &Second, ns: f64| (g.transactions > 0).then(|| ns / g.transactions as f64);
    let latency_ms = interval(
        ratio(total.latency_sum_ns as f64, tx) / 1e6,
        groups
            .iter()
            .filter_map(|g| per_tx(g, g.latency_sum_ns as f64))
            .map(|ns| ns / 1e6),
    );
    let buckets_us = std::array::from_fn(|i| {
        interval(
            ratio(total.bucket_sum_ns[i] as f64, tx) / 1e3,
            groups
                .iter()
                .filter_map(|g| per_tx(g, g.bucket_sum_ns[i] as f64))
                .map(|ns| ns / 1e3),
        )
    });
    (tps, latency_ms, buckets_us)
}

/// The seconds merged into one.
fn merged(seconds: &[Second]) -> Second {
    seconds.iter().fold(Second::default(), |mut acc, s| {
        acc.merge(s);
        acc
    })
}

/// Heidelberger and Welch's test on the window from `lo` to `hi`: on its
/// whole checkpoint cycles where it holds [`TEST_MIN_CYCLES`] or more
/// (grouped into at most [`CI_BATCHES`]), else on the interval's batches.
fn stationarity(
    run: &Run,
    rates: &[f64],
    lo: usize,
    hi: usize,
    interval_batches: Vec<Batch>,
) -> Stationarity {
    let w = run.width_s.max(1) as f64;
    let mut marks = checkpoint_points(run, lo, hi, w);
    marks.dedup();
    let cycles = marks.len().saturating_sub(1);
    let (batches, by_cycles) = if cycles >= TEST_MIN_CYCLES {
        let groups = cycles.min(CI_BATCHES);
        let batches = (0..groups)
            .map(|j| {
                let (a, b) = (marks[j * cycles / groups], marks[(j + 1) * cycles / groups]);
                Batch {
                    mean: rates[a..b].iter().sum::<f64>() / (b - a) as f64,
                    length: (b - a) as f64 * w,
                }
            })
            .collect();
        (batches, true)
    } else {
        (interval_batches, false)
    };
    let statistic = cramer_von_mises(&batches);
    Stationarity {
        statistic,
        batches: batches.len(),
        by_checkpoint_cycles: by_cycles,
        checkpoints_in_window: marks.len(),
        passed: statistic.is_some_and(|s| s <= CVM_CRITICAL_5PCT),
    }
}

/// The slow transients still under way at the end of the run that its
/// records show, looked for in the window from `lo` to `hi` (points).
///
/// Where the run checkpoints, figures are compared cycle by cycle (whole
/// checkpoint cycles, the last few): within a cycle, WAL and reads per
/// transaction fall as the full-page images after its start thin out,
/// which halves of a short window would take for a trend. Without
/// checkpoints in the window, its two halves are compared.
fn transients(run: &Run, lo: usize, hi: usize) -> Vec<Transient> {
    let w = run.width_s.max(1) as f64;
    let n = run.seconds.len();
    let mut found = Vec::new();
    // Every checkpoint interval up to the end: the trend is in the last.
    let starts: Vec<f64> = run
        .checkpoint_starts
        .iter()
        .filter(|&&t| point(t, w) <= n)
        .map(|&t| t as f64 / 1e9)
        .collect();
    let gaps: Vec<f64> = starts.windows(2).map(|p| p[1] - p[0]).collect();
    if let Some((from_s, to_s)) = still_moving(&gaps) {
        found.push(Transient::CheckpointInterval { from_s, to_s });
    }
    let periods = compared_periods(run, lo, hi);
    let trend = |f: &dyn Fn(&Second) -> u64| {
        let v: Vec<f64> = periods
            .iter()
            .map(|s| ratio(f(s) as f64, s.transactions as f64))
            .collect();
        match v.as_slice() {
            [a, b] => halves_differ(*a, *b),
            _ => still_moving(&v),
        }
    };
    if let Some((from, to)) = trend(&|s| s.wal_bytes) {
        found.push(Transient::WalPerTransaction { from, to });
    }
    // Reads per transaction fall while a cache not yet full takes in more
    // of the data set.
    let m = run.milestones;
    let filling = if run.has_page_cache && m.os_cache_full.is_none() {
        Some(Cache::PageCache)
    } else if m.shared_buffers_full.is_none() {
        Some(Cache::SharedBuffers)
    } else {
        None
    };
    if let Some(cache) = filling
        && let Some((from, to)) = trend(&|s| s.data_reads)
        && to < from
        && from >= MIN_READS_PER_TX
    {
        found.push(Transient::ReadsPerTransaction { from, to, cache });
    }
    // A table's first autovacuum within the horizon holds the answer: the
    // long-run rate pays for it. One due much later is the user's to ask
    // for with -T; the answer is for a horizon of a few times its run.
    if let Some((table, due)) = run.vacuum_due
        && (due as f64 / 1e9) <= VACUUM_HORIZON * n as f64 * w
    {
        found.push(Transient::FirstAutovacuum {
            table: table.to_string(),
            due_s: due as f64 / 1e9,
        });
    }
    found.extend(fresh_pages(run.fresh, n as f64 * w));
    found
}

/// The first updates of a table loaded full, while more than
/// [`FRESH_DONE_LEFT`] of its pages have had none, `elapsed_s` into the
/// run: uniform updates leave a share exp(−t/τ) of the pages untouched, so
/// the share `left` now reaches the threshold at elapsed · ln(threshold) /
/// ln(left). A table never updated (a read-only workload) has none, nor
/// one whose first updates are still too few to give a pace
/// ([`FRESH_PACE_MIN_PAGES`]).
fn fresh_pages(fresh: Option<FreshPages>, elapsed_s: f64) -> Option<Transient> {
    let f = fresh.filter(|f| f.updated >= FRESH_PACE_MIN_PAGES && f.pages > 0)?;
    let left = (f.pages - f.updated.min(f.pages)) as f64 / f.pages as f64;
    (left > FRESH_DONE_LEFT).then(|| Transient::FreshPages {
        table: f.table.to_string(),
        left,
        done_s: elapsed_s * FRESH_DONE_LEFT.ln() / left.ln(),
    })
}

/// Whether `db`'s run, `elapsed` ns in, cannot settle within `cap` ns: a
/// transient whose end the run can foresee (the first updates of a table
/// loaded full) lasts past twice the cap. Then running on to the cap buys
/// no answer, only time; the transient is returned, for the report. Not
/// before [`EARLY_STOP_MIN_S`], so that the pace is the run's, not its
/// first moments'.
pub fn beyond_cap(db: &Database, elapsed: Nanos, cap: Nanos) -> Option<Transient> {
    let elapsed_s = elapsed as f64 / 1e9;
    if elapsed_s < EARLY_STOP_MIN_S {
        return None;
    }
    fresh_pages(db.workload().fresh_pages(), elapsed_s).filter(|t| match t {
        Transient::FreshPages { done_s, .. } => *done_s > 2.0 * cap as f64 / 1e9,
        _ => false,
    })
}

/// First updates a pace is read from: their count is Poisson, so 100 put
/// the time constant within about ±10%.
const FRESH_PACE_MIN_PAGES: u64 = 100;

/// The least simulated time before [`beyond_cap`] may stop a run.
const EARLY_STOP_MIN_S: f64 = 60.0;

/// The periods whose figures per transaction [`transients`] compares:
/// whole checkpoint cycles where the run checkpoints, else the two halves
/// of the window from `lo` to `hi` if it holds no checkpoint.
fn compared_periods(run: &Run, lo: usize, hi: usize) -> Vec<Second> {
    let w = run.width_s.max(1) as f64;
    let n = run.seconds.len();
    let mut marks = checkpoint_points(run, 0, n, w);
    marks.dedup();
    if marks.len() >= 2 {
        marks
            .windows(2)
            .map(|p| merged(&run.seconds[p[0]..p[1]]))
            .collect()
    } else if hi >= lo + 2 && checkpoint_points(run, lo, hi, w).is_empty() {
        let mid = lo + (hi - lo) / 2;
        vec![merged(&run.seconds[lo..mid]), merged(&run.seconds[mid..hi])]
    } else {
        Vec::new()
    }
}

/// How many times the run so far a table's first autovacuum may still be
/// away and hold the answer: the coverage check (scripts/steady-coverage)
/// compares each answer with runs four times as long.
const VACUUM_HORIZON: f64 = 4.0;

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 { 0.0 } else { a / b }
}

/// A point estimate and the 95% half width from its batches' values.
fn interval(mean: f64, batches: impl Iterator<Item = f64>) -> Estimate {
    let v: Vec<f64> = batches.collect();
    let b = v.len();
    if b < 2 {
        return Estimate {
            mean,
            half_width: 0.0,
        };
    }
    let avg = v.iter().sum::<f64>() / b as f64;
    let var = v.iter().map(|x| (x - avg) * (x - avg)).sum::<f64>() / (b - 1) as f64;
    let t = StudentsT::new(0.0, 1.0, (b - 1) as f64)
        .expect("a t distribution with positive degrees of freedom")
        .inverse_cdf(0.975);
    Estimate {
        mean,
        half_width: t * (var / b as f64).sqrt(),
    }
}

/// The latest cache or checkpoint event at or before the warm-up's end
/// (give or take one MSER batch), else that the rate settled.
fn name_warmup_end(end: Nanos, run: &Run, w: f64) -> WarmupEnd {
    if end == 0 {
        return WarmupEnd::None;
    }
    let slack = (MSER_BATCH as f64 * w * 1e9) as Nanos;
    let m = run.milestones;
    [
        m.shared_buffers_full.map(WarmupEnd::SharedBuffersFull),
        m.os_cache_full.map(WarmupEnd::PageCacheFull),
        run.checkpoint_starts
            .first()
            .copied()
            .map(WarmupEnd::FirstCheckpoint),
    ]
    .into_iter()
    .flatten()
    .filter(|e| at(e) <= end + slack)
    .max_by_key(at)
    .unwrap_or(WarmupEnd::RateSettled)
}

fn at(e: &WarmupEnd) -> Nanos {
    match e {
        WarmupEnd::SharedBuffersFull(t) | WarmupEnd::PageCacheFull(t) => *t,
        WarmupEnd::FirstCheckpoint(t) => *t,
        WarmupEnd::None | WarmupEnd::RateSettled => 0,
    }
}

/// What a run has shown it does, which its steady state must then hold.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Recurring {
    /// It writes WAL: it checkpoints, by max_wal_size or at
    /// checkpoint_timeout at the latest.
    pub writes_wal: bool,
    /// An autovacuum has run: it recurs as dead rows build up again.
    pub vacuums: bool,
}

/// When `model` has said enough: a window that passes the stationarity
/// test (a rate still climbing can look settled to an interval that only
/// sees its own window's spread) with no slow transient still named, its
/// tps within
/// `precision` (a fraction) at 95%, over at least one whole checkpoint
/// cycle if the run writes WAL, and over two vacuums of the table whose
/// vacuums cost most if it vacuums (one whole cycle of each: a rate
/// measured between them misses their cost, and the small tables' vacuums
/// every minute are not the cycle a large table's sets).
pub fn settled(outcome: &Outcome, precision: f64, recurring: Recurring) -> bool {
    match outcome {
        Outcome::Steady(s) => {
            s.stationarity.passed
                && s.transients.is_empty()
                && s.tps.mean > 0.0
                && s.tps.relative() <= precision
                && (!recurring.writes_wal || s.checkpoint_cycles >= 1)
                && (!recurring.vacuums || s.cycle_vacuums >= 2)
        }
        Outcome::NotReached(_) => false,
    }
}

/// The steady state of `db`'s run over its first `elapsed` ns.
pub fn of_database(db: &Database, elapsed: Nanos) -> Outcome {
    let s = db.stats();
    let width_s = s.seconds.width_s();
    let starts: Vec<Nanos> = db.checkpoints().iter().map(|c| c.start).collect();
    let vacuums: Vec<Nanos> = db.vacuums().iter().map(|v| v.start).collect();
    let cycle = vacuum_cycle_starts(db);
    let cfg = db.config();
    let blocks = db.workload().data_blocks();
    analyse(&Run {
        seconds: s.seconds.whole(elapsed),
        width_s,
        milestones: s.milestones,
        fills_shared_buffers: blocks > cfg.nbuffers as u64,
        fills_page_cache: cfg.os_cache_pages > 0 && blocks > cfg.os_cache_pages,
        has_page_cache: cfg.os_cache_pages > 0,
        checkpoint_starts: &starts,
        vacuum_starts: &vacuums,
        vacuum_cycle_starts: &cycle,
        vacuum_due: db.first_autovacuum_due(elapsed),
        fresh: db.workload().fresh_pages(),
    })
}

/// When each vacuum of the costliest table vacuumed so far started: the
/// largest heap, as a vacuum scans it (the pages a vacuum under way has
/// done are not known until it ends, and the first vacuum of the largest
/// table sets the slowest cycle from its start).
fn vacuum_cycle_starts(db: &Database) -> Vec<Nanos> {
    let dominant = db
        .vacuums()
        .iter()
        .map(|v| v.table.as_str())
        .max_by_key(|t| db.table_pages(t));
    db.vacuums()
        .iter()
        .filter(|v| Some(v.table.as_str()) == dominant)
        .map(|v| v.start)
        .collect()
}

/// How many times the precision rule's cap `model` may run on to hold
/// whole autovacuum cycles (see [`vacuum_cycles_end`]): 4 hours past a
/// 30-minute cap.
pub const VACUUM_CAP_FACTOR: u64 = 8;

/// A cycle foretold from the dead tuples' pace is stretched by this much
/// for the vacuum's own time and the checkpoint the window ends on.
const CYCLE_SLACK: f64 = 1.15;

/// When `db`'s run, `now` ns in, will hold the whole autovacuum cycles an
/// interval is batched by ([`CYCLE_MIN_BATCHES`] of them, so one more
/// start) of the table that sets its slowest cycle: None if it vacuums nothing and has no first autovacuum coming.
///
/// A table's first autovacuum still to come is the one to wait for (its
/// dead tuples start the run at 0, so its due time is its cycle too);
/// else the cycle is the costliest table's mean gap between vacuums, or
/// its first start after one.
pub fn vacuum_cycles_end(db: &Database, now: Nanos) -> Option<Nanos> {
    let batches = CYCLE_MIN_BATCHES as f64;
    let end = if let Some((_, due)) = db.first_autovacuum_due(now) {
        let d = due as f64;
        d + batches * d * CYCLE_SLACK
    } else {
        let starts = vacuum_cycle_starts(db);
        let (first, last) = (*starts.first()? as f64, *starts.last()? as f64);
        let gap = if starts.len() >= 2 {
            (last - first) / (starts.len() - 1) as f64
        } else {
            first
        } * CYCLE_SLACK;
        first + batches * gap
    };
    Some(end.min(u64::MAX as f64 / 2.0) as Nanos)
}

/// What `db`'s run has shown it does so far.
pub fn recurring(db: &Database) -> Recurring {
    Recurring {
        writes_wal: db.wal_counters().bytes > 0,
        vacuums: !db.vacuums().is_empty(),
    }
}

#[cfg(test)]
mod tests;
