//! The background writer's plan for one round (`BgBufferSync`, bufmgr.c):
//! estimate how many buffers backends will need before the next round and
//! clean dirty, not recently used buffers ahead of the clock hand so they do
//! not have to write them themselves.

use super::buffer_pool::{BufId, BufferPool};

/// Background writer state carried between rounds.
#[derive(Debug)]
pub struct BgWriter {
    maxpages: u32,
    multiplier: f64,
    /// Smoothed buffer allocations per round (`smoothed_alloc`).
    smoothed_alloc: f64,
    /// Where the previous round stopped scanning, and the hand pass it was in.
    next_to_clean: Option<(BufId, u64)>,
    /// Minimum buffers scanned per round so the whole pool is visited about
    /// every two minutes (`scan_whole_pool_milliseconds`).
    min_scan: u32,
}

/// `smoothing_samples` in BgBufferSync.
const SMOOTHING_SAMPLES: f64 = 16.0;

impl BgWriter {
    /// From bgwriter_lru_maxpages, bgwriter_lru_multiplier, bgwriter_delay
    /// (ms) and the pool size.
    pub fn new(maxpages: u32, multiplier: f64, delay_ms: u64, nbuffers: u32) -> Self {
        let min_scan = (nbuffers as f64 / (120_000.0 / delay_ms.max(1) as f64)).ceil() as u32;
        BgWriter {
            maxpages,
            multiplier,
            smoothed_alloc: 0.0,
            next_to_clean: None,
            min_scan,
        }
    }

    /// Plan one round: the dirty buffers to write, at most maxpages. Call
    /// once per bgwriter_delay.
    pub fn plan(&mut self, pool: &mut BufferPool, out: &mut Vec<BufId>) {
        out.clear();
        let recent = pool.take_recent_allocs() as f64;
        // Fast attack, slow decline.
        if recent >= self.smoothed_alloc {
            self.smoothed_alloc = recent;
        } else {
            self.smoothed_alloc += (recent - self.smoothed_alloc) / SMOOTHING_SAMPLES;
        }
        if self.maxpages == 0 {
            return;
        }
        let upcoming = (self.smoothed_alloc * self.multiplier).ceil() as u64;
        let n = pool.len() as u64;
        let (hand, passes) = pool.strategy_position();
        let hand_abs = passes * n + hand as u64;
        // Continue from where the last round stopped if still ahead of the hand.
        let start_abs = match self.next_to_clean {
            Some((b, p)) if p * n + b as u64 > hand_abs => p * n + b as u64,
            _ => hand_abs,
        };
        let ahead = start_abs - hand_abs;
        let to_scan = (upcoming.max(self.min_scan as u64)).min(n.saturating_sub(ahead));
        let mut reusable = 0u64;
        let mut pos = start_abs;
        let end = start_abs + to_scan;
        while pos < end && reusable < upcoming.max(1) && out.len() < self.maxpages as usize {
            let b = (pos % n) as BufId;
            match pool.reusable(b) {
                Some(true) => {
                    out.push(b);
                    reusable += 1;
                }
                Some(false) => reusable += 1,
                None => {}
            }
            pos += 1;
        }
        self.next_to_clean = Some(((pos % n) as BufId, pos / n));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn nothing_when_maxpages_is_zero_or_no_demand() {
        let mut p = BufferPool::new(4);
        let mut w = BgWriter::new(0, 2.0, 200, 4);
        let mut out = vec![1];
        w.plan(&mut p, &mut out);
        assert!(out.is_empty());
    }
}
