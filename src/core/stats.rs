//! Statistics: latency and one HDR histogram per breakdown bucket, I/O
//! counters in PostgreSQL's terms, and a per-second time series.

use hdrhistogram::Histogram;

use super::breakdown::Bucket;
use super::time::{Nanos, SEC};

/// Highest latency a histogram records exactly (one hour); above it values
/// are clamped, so memory is fixed at creation.
const HIST_MAX_NS: u64 = 3_600 * SEC;

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, HIST_MAX_NS, 3).expect("valid histogram bounds")
}

/// I/O and buffer counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counters {
    /// Buffer pool hits (`blks_hit`).
    pub buffer_hits: u64,
    /// Buffer pool misses (`blks_read`): includes those the OS cache model served.
    pub buffer_misses: u64,
    /// Misses served by the modelled OS cache (no I/O).
    pub os_cache_hits: u64,
    /// Data page reads issued to the device.
    pub data_reads: u64,
    /// Dirty victims written by backends (`buffers_backend`).
    pub backend_writes: u64,
    /// Buffers written by the checkpointer (`buffers_checkpoint`).
    pub checkpoint_writes: u64,
    /// Buffers written by the background writer (`buffers_clean`).
    pub bgwriter_writes: u64,
    /// fsyncs of the data file (checkpoint sync phase).
    pub data_syncs: u64,
    /// Dirty page-cache pages the kernel wrote back: its flusher's, and
    /// the checkpoint fsyncs' (modelled page cache only).
    pub kernel_writeback_pages: u64,
    pub fsync_writeback_pages: u64,
    /// Full-page images logged (`wal_fpi`).
    pub full_page_images: u64,
    /// New pages added by relation extension (no read).
    pub extends: u64,
    /// Checkpoints started / completed, and how they were triggered.
    pub checkpoints_started: u64,
    pub checkpoints_done: u64,
    pub checkpoints_timed: u64,
    pub checkpoints_requested: u64,
    /// Transactions committed that waited for a WAL flush.
    pub sync_commits: u64,
    /// Commits that waited for synchronous standbys (IPC:SyncRep).
    pub sync_rep_commits: u64,
    /// WAL write calls handed to the device (pg_stat_wal `wal_write`) and
    /// the bytes they wrote (whole pages, rewrites counted again).
    pub wal_writes: u64,
    pub wal_written_bytes: u64,
    /// WAL fdatasync calls handed to the device (`wal_sync`).
    pub wal_syncs: u64,
    /// Rate-limited runs: transactions skipped for starting later than the
    /// latency limit, and those that finished over it.
    pub skipped: u64,
    pub late: u64,
    /// Vacuum: runs started and finished, heap pages scanned, found in
    /// shared buffers, read, pruned (dirtied), and written by vacuum itself.
    pub vacuum_runs: u64,
    pub vacuum_runs_done: u64,
    pub vacuum_pages: u64,
    pub vacuum_hits: u64,
    pub vacuum_reads: u64,
    pub vacuum_dirtied: u64,
    pub vacuum_writes: u64,
    /// Time vacuum slept for its cost limit, ns.
    pub vacuum_sleep_ns: u64,
    /// Device time (handed out to completed) of data page reads, WAL
    /// writes and WAL fdatasyncs: what `blk_read_time`, `wal_write_time`
    /// and `wal_sync_time` time in PostgreSQL, less the waiting process's
    /// wake-up, which PostgreSQL's timers also count.
    pub read_time: IoTime,
    pub wal_write_time: IoTime,
    pub wal_sync_time: IoTime,
    /// Device time of the dirty victims the backends wrote themselves
    /// (pg_stat_io's client backend writes and write_time).
    pub backend_write_time: IoTime,
    /// The backends' CPU for the blocks they read (the syscall, the 8 KiB
    /// copy), from asking for a core to leaving it: PostgreSQL's
    /// blk_read_time holds it, so the breakdown has it in page_read.
    pub read_cpu_time: IoTime,
    /// pgbench's threads (`-j`): per statement served, the time on a core or
    /// waiting for one (what /proc schedstat counts for them).
    pub client_thread_time: IoTime,
}

/// Completed I/Os of one kind and their summed device time.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IoTime {
    pub count: u64,
    pub sum_ns: u64,
}

impl IoTime {
    /// One more I/O that took `ns`.
    pub fn record(&mut self, ns: Nanos) {
        self.count += 1;
        self.sum_ns += ns;
    }

    /// Mean in µs, 0 with none.
    pub fn mean_us(&self) -> f64 {
        if self.count == 0 {
            0.0
        } else {
            self.sum_ns as f64 / self.count as f64 / 1e3
        }
    }
}

/// Most points a per-second series keeps: 262,144 seconds (three days) at
/// one second each. A longer run's series is coarsened, each point then
/// covering 2, 4, 8... seconds, so that its memory (and the result's
/// `timeseries`) stays bounded whatever `-T`.
pub const SERIES_MAX_POINTS: usize = 1 << 18;

/// A point of a series that two adjacent points can be merged into.
pub trait Merge {
    /// `self` and the point just after it, as one point covering both.
    fn merge(&mut self, next: &Self);
}

/// A time series of one point per second of the run, then per 2, 4...
/// seconds once the run passes [`SERIES_MAX_POINTS`] seconds.
#[derive(Debug, Clone)]
pub struct Series<T> {
    points: Vec<T>,
    /// Seconds each point covers: a power of two.
    width_s: u64,
    /// The last point `at` found and the times it covers, [from, to): most
    /// calls fall in it, and need no division.
    last: (Nanos, Nanos, usize),
}

impl<T> Default for Series<T> {
    fn default() -> Self {
        Series {
            points: Vec::new(),
            width_s: 1,
            last: (0, 0, 0),
        }
    }
}

impl<T: PartialEq> PartialEq for Series<T> {
    /// Same points at the same width (where `at` looked last aside).
    fn eq(&self, other: &Self) -> bool {
        self.points == other.points && self.width_s == other.width_s
    }
}

impl<T> std::ops::Deref for Series<T> {
    type Target = [T];
    fn deref(&self) -> &[T] {
        &self.points
    }
}

impl<'a, T> IntoIterator for &'a Series<T> {
    type Item = &'a T;
    type IntoIter = std::slice::Iter<'a, T>;
    fn into_iter(self) -> Self::IntoIter {
        self.points.iter()
    }
}

impl<T> Series<T> {
    /// The points wholly inside the first `elapsed` ns: a trailing partial
    /// point would show a bogus rate.
    pub fn whole(&self, elapsed: Nanos) -> &[T] {
        let n = (elapsed / SEC / self.width_s) as usize;
        &self.points[..n.min(self.points.len())]
    }
}

impl<T: Merge + Default + Clone> Series<T> {
    /// Seconds each point covers: 1 unless the run passed
    /// [`SERIES_MAX_POINTS`] seconds.
    pub fn width_s(&self) -> u64 {
        self.width_s
    }

    /// The point holding time `now`, coarsening the series first if `now`
    /// is past its last possible point.
    #[inline]
    pub fn at(&mut self, now: Nanos) -> &mut T {
        let (from, to, i) = self.last;
        if (from..to).contains(&now) {
            return &mut self.points[i];
        }
        self.find(now)
    }

    /// `at` past the last point found: once a second or so.
    #[cold]
    #[inline(never)]
    fn find(&mut self, now: Nanos) -> &mut T {
        let mut i = now / SEC / self.width_s;
        while i >= SERIES_MAX_POINTS as u64 {
            self.coarsen();
            i = now / SEC / self.width_s;
        }
        let span = self.width_s * SEC;
        self.last = (i * span, (i + 1).saturating_mul(span), i as usize);
        let i = i as usize;
        if self.points.len() <= i {
            self.points.resize(i + 1, T::default());
        }
        &mut self.points[i]
    }

    /// Halves the resolution: each two adjacent points become one.
    fn coarsen(&mut self) {
        let merged: Vec<T> = self
            .points
            .chunks(2)
            .map(|pair| {
                let mut p = pair[0].clone();
                if let Some(next) = pair.get(1) {
                    p.merge(next);
                }
                p
            })
            .collect();
        self.points = merged;
        self.width_s *= 2;
        self.last = (0, 0, 0);
    }
}

/// One second of the run (or, past [`SERIES_MAX_POINTS`] seconds, of the
/// interval its [`Series`] point covers).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Second {
    /// Transactions finished in this second.
    pub transactions: u64,
    /// Sum of their latencies.
    pub latency_sum_ns: u128,
    /// Sum of their squared latencies in µs² (for stddev).
    pub latency_sq_sum_us2: f64,
    /// Data reads, data writes, WAL bytes inserted, WAL fdatasyncs.
    pub data_reads: u64,
    pub data_writes: u64,
    pub wal_bytes: u64,
    pub wal_syncs: u64,
    /// Checkpoints that started / ended in this second.
    pub checkpoint_starts: u32,
    pub checkpoint_ends: u32,
    /// Time its transactions spent in each bucket (ns), by `Bucket::index`:
    /// the steady state's breakdown is taken over whole seconds.
    pub bucket_sum_ns: [u64; Bucket::COUNT],
}

impl Merge for Second {
    fn merge(&mut self, next: &Second) {
        self.transactions += next.transactions;
        self.latency_sum_ns += next.latency_sum_ns;
        self.latency_sq_sum_us2 += next.latency_sq_sum_us2;
        self.data_reads += next.data_reads;
        self.data_writes += next.data_writes;
        self.wal_bytes += next.wal_bytes;
        self.wal_syncs += next.wal_syncs;
        self.checkpoint_starts = self
            .checkpoint_starts
            .saturating_add(next.checkpoint_starts);
        self.checkpoint_ends = self.checkpoint_ends.saturating_add(next.checkpoint_ends);
        for (a, b) in self.bucket_sum_ns.iter_mut().zip(next.bucket_sum_ns) {
            *a = a.saturating_add(b);
        }
    }
}

/// Everything measured in one run.
#[derive(Debug, Clone)]
pub struct Stats {
    /// Transaction latency (ns).
    pub latency: Histogram<u64>,
    /// Time per transaction in each bucket (ns), indexed by `Bucket::index`,
    /// except the zeros (see `bucket_histogram`).
    buckets: Vec<Histogram<u64>>,
    /// Zeros per bucket, not yet in `buckets`: most buckets of most
    /// transactions are 0, and counting them here is far cheaper than
    /// recording them (HDR recording was 5% of `model`'s instructions).
    bucket_zeros: [u64; Bucket::COUNT],
    /// Exact totals per bucket (ns), for means.
    pub bucket_sum_ns: [u128; Bucket::COUNT],
    /// Exact latency total and sum of squares (for mean and stddev).
    pub latency_sum_ns: u128,
    pub latency_sq_sum_us2: f64,
    /// Transactions completed.
    pub transactions: u64,
    /// I/O and buffer counters.
    pub counters: Counters,
    /// Per-second series (coarser past [`SERIES_MAX_POINTS`] seconds).
    pub seconds: Series<Second>,
    /// Rate-limited runs: schedule lag (actual minus scheduled start), total
    /// and largest, in ns.
    pub lag_sum_ns: u128,
    pub lag_max_ns: u64,
    /// When the caches first filled: what ends a run's warm-up.
    pub milestones: Milestones,
}

/// When the run's caches first filled, as the driver saw them once a
/// second: the names a warm-up's end is given.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Milestones {
    /// shared_buffers had no never-used buffer left.
    pub shared_buffers_full: Option<Nanos>,
    /// The modelled OS page cache was full (a read now evicts a page).
    pub os_cache_full: Option<Nanos>,
    /// The last second shared_buffers held more pages than the second
    /// before, and how many it held: a pool that stopped growing short of
    /// full holds all the pages the workload touches.
    pub shared_buffers_grew: Option<Nanos>,
    pub shared_buffers_used: usize,
    /// The same for the modelled OS page cache.
    pub os_cache_grew: Option<Nanos>,
    pub os_cache_used: usize,
}

impl Default for Stats {
    fn default() -> Self {
        Self::new()
    }
}

impl Stats {
    /// Bytes the per-second series of a run of `seconds` hold at most
    /// (None: as long as a run can be).
    pub fn series_footprint(seconds: Option<u64>) -> u64 {
        let points = seconds.map_or(SERIES_MAX_POINTS as u64, |s| {
            s.min(SERIES_MAX_POINTS as u64)
        });
        points * size_of::<Second>() as u64
    }

    /// Empty statistics.
    pub fn new() -> Self {
        Stats {
            latency: histogram(),
            buckets: (0..Bucket::ALL.len()).map(|_| histogram()).collect(),
            bucket_zeros: [0; Bucket::COUNT],
            bucket_sum_ns: [0; Bucket::COUNT],
            latency_sum_ns: 0,
            latency_sq_sum_us2: 0.0,
            transactions: 0,
            counters: Counters::default(),
            seconds: Series::default(),
            lag_sum_ns: 0,
            lag_max_ns: 0,
            milestones: Milestones::default(),
        }
    }

    /// The per-second slot for time `now`.
    #[inline]
    pub fn second(&mut self, now: Nanos) -> &mut Second {
        self.seconds.at(now)
    }

    /// A transaction finished at `now` with this latency and breakdown.
    pub fn record_transaction(
        &mut self,
        now: Nanos,
        latency: Nanos,
        spent: &[Nanos; Bucket::COUNT],
    ) {
        debug_assert_eq!(spent.iter().sum::<u64>(), latency);
        self.transactions += 1;
        self.latency.saturating_record(latency.max(1));
        self.latency_sum_ns += latency as u128;
        let us = latency as f64 / 1e3;
        self.latency_sq_sum_us2 += us * us;
        for (i, &ns) in spent.iter().enumerate() {
            self.bucket_sum_ns[i] += ns as u128;
            if ns == 0 {
                self.bucket_zeros[i] += 1;
            } else {
                self.buckets[i].saturating_record(ns);
            }
        }
        let s = self.second(now);
        s.transactions += 1;
        s.latency_sum_ns += latency as u128;
        s.latency_sq_sum_us2 += us * us;
        for (a, &ns) in s.bucket_sum_ns.iter_mut().zip(spent) {
            *a = a.saturating_add(ns);
        }
    }

    /// Time per transaction in bucket `i` (`Bucket::index`), zeros included.
    pub fn bucket_histogram(&self, i: usize) -> Histogram<u64> {
        let mut h = self.buckets[i].clone();
        // Recording n zeros at once is the same as recording them one by one.
        h.saturating_record_n(0, self.bucket_zeros[i]);
        h
    }

    /// A rate-limited transaction started `lag` after its scheduled time.
    pub fn record_lag(&mut self, lag: Nanos) {
        self.lag_sum_ns += lag as u128;
        self.lag_max_ns = self.lag_max_ns.max(lag);
    }

    /// Mean latency in ns (0 with no transactions).
    pub fn mean_latency_ns(&self) -> f64 {
        if self.transactions == 0 {
            0.0
        } else {
            self.latency_sum_ns as f64 / self.transactions as f64
        }
    }

    /// Latency standard deviation in ns (population, as pgbench prints it).
    pub fn stddev_latency_ns(&self) -> f64 {
        stddev_ns(
            self.transactions,
            self.latency_sum_ns,
            self.latency_sq_sum_us2,
        )
    }
}

/// Standard deviation in ns from a count, a sum in ns and a sum of squares in µs².
pub fn stddev_ns(n: u64, sum_ns: u128, sq_sum_us2: f64) -> f64 {
    if n == 0 {
        return 0.0;
    }
    let mean_us = sum_ns as f64 / 1e3 / n as f64;
    let var = (sq_sum_us2 / n as f64 - mean_us * mean_us).max(0.0);
    var.sqrt() * 1e3
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_stddev() {
        let mut s = Stats::new();
        let mut spent = [0; Bucket::COUNT];
        spent[0] = 1_000;
        s.record_transaction(0, 1_000, &spent);
        spent[0] = 3_000;
        s.record_transaction(SEC + 1, 3_000, &spent);
        assert_eq!(s.transactions, 2);
        assert!((s.mean_latency_ns() - 2_000.0).abs() < 1e-6);
        assert!((s.stddev_latency_ns() - 1_000.0).abs() < 1e-3);
        assert_eq!(s.seconds.len(), 2);
        assert_eq!(s.bucket_sum_ns[0], 4_000);
    }

    #[test]
    fn a_long_series_is_coarsened_not_grown() {
        let mut s = Stats::new();
        let spent = [0; Bucket::COUNT];
        let max = SERIES_MAX_POINTS as u64;
        s.record_transaction(0, 0, &spent);
        s.record_transaction(SEC, 0, &spent);
        s.record_transaction((max - 1) * SEC, 0, &spent);
        assert_eq!((s.seconds.len(), s.seconds.width_s()), (max as usize, 1));
        // A second past the bound: every two seconds become one point.
        s.record_transaction(max * SEC + 5, 0, &spent);
        assert_eq!(s.seconds.width_s(), 2);
        assert_eq!(s.seconds.len(), max as usize / 2 + 1);
        assert_eq!(s.seconds[0].transactions, 2);
        assert_eq!(s.seconds[max as usize / 2 - 1].transactions, 1);
        assert_eq!(s.seconds[max as usize / 2].transactions, 1);
        // pgbench's longest -T: still at most the bound, nothing lost.
        s.record_transaction(2_147_483_647 * SEC, 0, &spent);
        assert!(s.seconds.len() <= SERIES_MAX_POINTS);
        assert_eq!(s.seconds.width_s(), 8192);
        let total: u64 = s.seconds.iter().map(|x| x.transactions).sum();
        assert_eq!(total, 5);
    }
}
