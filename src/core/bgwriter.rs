//! The background writer's plan for one round (`BgBufferSync`, bufmgr.c):
//! estimate how many buffers backends will need before the next round and
//! clean dirty, not recently used buffers ahead of the clock hand so they do
//! not have to write them themselves.
//!
//! It follows PostgreSQL's arithmetic: the density of reusable buffers is
//! learnt from how far the clock hand moved per allocation, the buffers the
//! writer already scanned ahead of the hand count at that density, and a
//! round scans up to a whole lap until it has found enough reusable buffers
//! (or written `bgwriter_lru_maxpages`). Scanning only as many positions as
//! buffers are wanted, as an earlier version did, finds a fraction of them
//! when most buffers were recently used, and leaves the writes to backends.

use super::buffer_pool::{BufId, BufferPool};

/// Background writer state carried between rounds.
#[derive(Debug)]
pub struct BgWriter {
    maxpages: u32,
    multiplier: f64,
    /// Smoothed buffer allocations per round (`smoothed_alloc`).
    smoothed_alloc: f64,
    /// Smoothed buffers the hand passes per allocation (`smoothed_density`).
    smoothed_density: f64,
    /// The clock hand at the previous round (`prev_strategy_buf_id`,
    /// `prev_strategy_passes`); none at start or after a round with
    /// maxpages 0 (`saved_info_valid`).
    prev_strategy: Option<(BufId, u64)>,
    /// Where the writer's scan goes on (`next_to_clean`, `next_passes`).
    next_to_clean: (BufId, u64),
    /// Minimum buffers scanned per round so the whole pool is visited about
    /// every two minutes (`min_scan_buffers`).
    min_scan: u32,
}

/// `smoothing_samples` in BgBufferSync.
const SMOOTHING_SAMPLES: f64 = 16.0;
/// `smoothed_density`'s starting value in BgBufferSync.
const INITIAL_DENSITY: f64 = 10.0;
/// `scan_whole_pool_milliseconds`.
const SCAN_WHOLE_POOL_MS: f64 = 120_000.0;

impl BgWriter {
    /// From bgwriter_lru_maxpages, bgwriter_lru_multiplier, bgwriter_delay
    /// (ms) and the pool size.
    pub fn new(maxpages: u32, multiplier: f64, delay_ms: u64, nbuffers: u32) -> Self {
        let min_scan = (f64::from(nbuffers) / (SCAN_WHOLE_POOL_MS / delay_ms.max(1) as f64)) as u32;
        BgWriter {
            maxpages,
            multiplier,
            smoothed_alloc: 0.0,
            smoothed_density: INITIAL_DENSITY,
            prev_strategy: None,
            next_to_clean: (0, 0),
            min_scan,
        }
    }

    /// Plan one round: the dirty buffers to write, at most maxpages. Call
    /// once per bgwriter_delay.
    pub fn plan(&mut self, pool: &mut BufferPool, out: &mut Vec<BufId>) {
        out.clear();
        let (hand, passes) = pool.strategy_position();
        let recent = pool.take_recent_allocs() as f64;
        if self.maxpages == 0 {
            self.prev_strategy = None;
            return;
        }
        let n = i64::from(pool.len());
        let abs = |(b, p): (BufId, u64)| p as i64 * n + i64::from(b);
        let (strategy_delta, bufs_to_lap) = match self.prev_strategy {
            Some(prev) => {
                let delta = abs((hand, passes)) - abs(prev);
                let (next, next_passes) = self.next_to_clean;
                let lap = if next_passes > passes {
                    // A pass ahead of the hand.
                    i64::from(hand) - i64::from(next)
                } else if next_passes == passes && next >= hand {
                    n - (i64::from(next) - i64::from(hand))
                } else {
                    // Behind: skip forward to the hand.
                    self.next_to_clean = (hand, passes);
                    n
                };
                (delta, lap)
            }
            None => {
                self.next_to_clean = (hand, passes);
                (0, n)
            }
        };
        self.prev_strategy = Some((hand, passes));
        if strategy_delta > 0 && recent > 0.0 {
            let scans_per_alloc = strategy_delta as f64 / recent;
            self.smoothed_density += (scans_per_alloc - self.smoothed_density) / SMOOTHING_SAMPLES;
        }
        let bufs_ahead = (n - bufs_to_lap) as f64;
        let reusable_est = bufs_ahead / self.smoothed_density;
        // Fast attack, slow decline.
        if self.smoothed_alloc <= recent {
            self.smoothed_alloc = recent;
        } else {
            self.smoothed_alloc += (recent - self.smoothed_alloc) / SMOOTHING_SAMPLES;
        }
        let mut upcoming = (self.smoothed_alloc * self.multiplier).trunc();
        if upcoming == 0.0 {
            self.smoothed_alloc = 0.0;
        }
        let floor = f64::from(self.min_scan) + reusable_est;
        if upcoming < floor {
            upcoming = floor;
        }
        let mut to_scan = bufs_to_lap;
        let mut reusable = reusable_est;
        while to_scan > 0 && reusable < upcoming {
            let (b, p) = self.next_to_clean;
            self.next_to_clean = if i64::from(b) + 1 >= n {
                (0, p + 1)
            } else {
                (b + 1, p)
            };
            to_scan -= 1;
            match pool.reusable(b) {
                Some(true) => {
                    out.push(b);
                    reusable += 1.0;
                    if out.len() >= self.maxpages as usize {
                        break;
                    }
                }
                Some(false) => reusable += 1.0,
                None => {}
            }
        }
        assert!(
            (0..=n).contains(&(abs(self.next_to_clean) - abs((hand, passes)))),
            "the writer's scan is neither behind the clock hand nor a lap ahead of it"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::buffer_pool::Lookup;

    #[test]
    fn cleans_dirty_usage_zero_buffers_up_to_maxpages() {
        let mut p = BufferPool::new(8);
        for blk in 0..8 {
            let b = p.clock_sweep().unwrap();
            p.assign(b, blk);
            p.read_done(b);
            p.mark_dirty(b, 1);
            p.unpin(b);
        }
        // Age every buffer to usage 0 with a full sweep that takes one victim.
        let v = p.clock_sweep().unwrap();
        p.unpin(v);
        let mut w = BgWriter::new(3, 2.0, 200, 8);
        let mut out = Vec::new();
        w.plan(&mut p, &mut out);
        assert_eq!(out.len(), 3, "capped at maxpages");
        for b in &out {
            assert_eq!(p.reusable(*b), Some(true));
        }
    }

    /// A pool of `n` valid buffers, every `every`-th dirty with usage 0
    /// and the rest recently used (usage 1), the hand at buffer 0, after
    /// `allocs` allocations.
    fn sparse_pool(n: u32, every: u32, allocs: u64) -> BufferPool {
        let mut p = crate::core::test_support::dirty_pool(n, |_| 1);
        // A sweep that takes one victim ages every buffer to usage 0 ...
        let v = p.clock_sweep().unwrap();
        p.unpin(v);
        // ... then all but every `every`-th are used again.
        for blk in 0..u64::from(n) {
            if blk % u64::from(every) != 0
                && let Lookup::Hit(b) = p.lookup(blk)
            {
                p.unpin(b);
            }
        }
        p.recent_allocs = allocs;
        p
    }

    #[test]
    fn scans_past_recently_used_buffers_until_enough_are_reusable() {
        // 1 buffer in 10 is reusable; 20 allocations per round, × 2.0: the
        // writer wants 40 reusable buffers and must scan ~400 to find them.
        // (BgBufferSync scans up to a lap; scanning only 40 positions would
        // clean 4.)
        let mut p = sparse_pool(1000, 10, 20);
        let mut w = BgWriter::new(100, 2.0, 200, 1000);
        let mut out = Vec::new();
        w.plan(&mut p, &mut out);
        assert!((39..=41).contains(&out.len()), "{}", out.len());
        assert!(out.iter().all(|&b| p.reusable(b) == Some(true)));
        // Capped at maxpages.
        let mut p = sparse_pool(1000, 10, 200);
        let mut w = BgWriter::new(100, 2.0, 200, 1000);
        w.plan(&mut p, &mut out);
        assert_eq!(out.len(), 100);
    }

    #[test]
    fn a_writer_ahead_of_the_hand_counts_what_it_already_cleaned() {
        let mut p = sparse_pool(1000, 10, 20);
        let mut w = BgWriter::new(100, 2.0, 200, 1000);
        let mut out = Vec::new();
        w.plan(&mut p, &mut out);
        let first = out.len();
        for &b in &out {
            let _ = p.start_write(b);
            p.write_done(b);
        }
        // No allocations since: the hand has not moved, the writer is ~400
        // buffers ahead, worth ~40 reusable at the learnt density, which
        // covers the demand; only the two-minute minimum scan goes on.
        w.plan(&mut p, &mut out);
        assert!(
            first >= 39 && out.len() < first / 2,
            "{first} then {}",
            out.len()
        );
    }

    #[test]
    fn rounds_without_allocations_never_lap_the_clock_hand() {
        // No allocations between rounds: the hand stands still, and each
        // round scans on from where the last stopped, never a lap past it.
        let mut p = sparse_pool(100, 1, 100);
        let mut w = BgWriter::new(1000, 2.0, 200, 100);
        let mut out = Vec::new();
        let (hand, passes) = p.strategy_position();
        let at = |(b, q): (BufId, u64)| q as i64 * 100 + i64::from(b);
        for _ in 0..10 {
            w.plan(&mut p, &mut out);
            for &b in &out {
                let _ = p.start_write(b);
                p.write_done(b);
            }
            let ahead = at(w.next_to_clean) - at((hand, passes));
            assert!((0..=100).contains(&ahead), "{ahead}");
        }
    }

    #[test]
    fn nothing_when_maxpages_is_zero_or_no_demand() {
        let mut p = BufferPool::new(4);
        let mut w = BgWriter::new(0, 2.0, 200, 4);
        let mut out = vec![1];
        w.plan(&mut p, &mut out);
        assert!(out.is_empty());
    }
}
