//! Vacuum's decisions (vacuumlazy.c, `vacuum_delay_point`, autovacuum.c):
//! which table to vacuum, which page comes next, how much cost each page
//! adds and when the cost limit makes vacuum sleep.
//!
//! Modelled: phase I, a sequential scan of the heap through a 256 KiB ring
//! (32 buffers, `GetAccessStrategy(BAS_VACUUM)` in PostgreSQL 15), pruning a
//! share of the pages (dirtied and WAL-logged, a full-page image on the first
//! change after a checkpoint), the ring's dirty buffers written by vacuum
//! itself after flushing WAL to their LSN, and cost-based sleeps. Not
//! modelled: the index scans of phase II, phase III's second heap pass, the
//! visibility map, read-ahead (each page is its own 8 KiB read).

use super::time::{MS, Nanos};

/// Buffers in the vacuum ring: 256 KiB of 8 KiB pages.
pub const RING_BUFFERS: usize = 32;

/// Cost of a page found in shared buffers (`vacuum_cost_page_hit`).
pub const COST_HIT: u32 = 1;
/// Cost of a page read in (`vacuum_cost_page_miss`, 2 since PostgreSQL 14).
pub const COST_MISS: u32 = 2;
/// Cost of dirtying a page (`vacuum_cost_page_dirty`).
pub const COST_DIRTY: u32 = 20;

/// WAL bytes of the record that prunes a page (Heap2/PRUNE, measured ~64 B).
pub const PRUNE_WAL_BYTES: u64 = 64;

/// Cost-based delay (`vacuum_delay_point`).
#[derive(Debug, Clone)]
pub struct CostBalance {
    limit: u32,
    delay: Nanos,
    balance: u32,
}

impl CostBalance {
    /// From the cost limit and the delay (0: never sleep).
    pub fn new(limit: u32, delay: Nanos) -> Self {
        CostBalance {
            limit: limit.max(1),
            delay,
            balance: 0,
        }
    }

    /// Add `cost`; when the balance reaches the limit, vacuum sleeps
    /// delay × balance / limit, at most 4 × delay, and the balance resets.
    pub fn charge(&mut self, cost: u32) -> Option<Nanos> {
        self.balance += cost;
        if self.delay == 0 || self.balance < self.limit {
            return None;
        }
        let sleep = (self.delay as u128 * self.balance as u128 / self.limit as u128) as Nanos;
        self.balance = 0;
        Some(sleep.min(4 * self.delay))
    }
}

/// One vacuum of a range of heap pages.
#[derive(Debug, Clone)]
pub struct VacuumJob {
    /// Table name, for reports.
    pub table: String,
    next: u64,
    end: u64,
    /// Share of pages with dead tuples to prune (dirtied and WAL-logged).
    pub dirty_fraction: f64,
    /// Cost accounting.
    pub cost: CostBalance,
    /// Ring slots: the buffers this vacuum cycles through.
    pub ring: [Option<u32>; RING_BUFFERS],
    /// Next ring slot to reuse.
    pub cursor: usize,
}

impl VacuumJob {
    /// Vacuum `pages` pages from block `first`.
    pub fn new(
        table: &str,
        first: u64,
        pages: u64,
        dirty_fraction: f64,
        cost: CostBalance,
    ) -> Self {
        VacuumJob {
            table: table.to_string(),
            next: first,
            end: first + pages,
            dirty_fraction: dirty_fraction.clamp(0.0, 1.0),
            cost,
            ring: [None; RING_BUFFERS],
            cursor: 0,
        }
    }

    /// The page to process next, or None when the scan is over.
    pub fn current(&self) -> Option<u64> {
        (self.next < self.end).then_some(self.next)
    }

    /// The current page is done.
    pub fn advance(&mut self) {
        self.next += 1;
    }

    /// The next ring slot to use, and move the cursor on.
    pub fn next_slot(&mut self) -> usize {
        let s = self.cursor;
        self.cursor = (self.cursor + 1) % RING_BUFFERS;
        s
    }
}

/// Autovacuum's trigger (`relation_needs_vacanalyze`): dead tuples over
/// autovacuum_vacuum_threshold (50) + autovacuum_vacuum_scale_factor (0.2) ×
/// reltuples.
pub fn needs_vacuum(dead_tuples: u64, reltuples: u64) -> bool {
    dead_tuples as f64 > 50.0 + 0.2 * reltuples as f64
}

/// Share of `pages` holding at least one of `dead_tuples` dead tuples
/// spread at random: the pages vacuum will prune.
pub fn dirty_share(dead_tuples: u64, pages: u64) -> f64 {
    if pages == 0 {
        return 0.0;
    }
    1.0 - (-(dead_tuples as f64) / pages as f64).exp()
}

/// autovacuum_vacuum_cost_delay's default, 2 ms.
pub const AUTOVACUUM_DELAY_DEFAULT: Nanos = 2 * MS;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_limit_makes_vacuum_sleep_in_proportion() {
        let mut c = CostBalance::new(200, 2 * MS);
        // 9 dirtied pages: 180, no sleep yet; the 10th reaches 200.
        for _ in 0..9 {
            assert_eq!(c.charge(COST_DIRTY), None);
        }
        assert_eq!(c.charge(COST_DIRTY), Some(2 * MS));
        // A single huge charge is capped at 4 × delay.
        assert_eq!(c.charge(5000), Some(8 * MS));
        // No delay: never sleeps.
        let mut c = CostBalance::new(200, 0);
        assert_eq!(c.charge(10_000), None);
    }

    #[test]
    fn autovacuum_threshold_and_dirty_share() {
        assert!(!needs_vacuum(250, 1000));
        assert!(needs_vacuum(251, 1000));
        assert!((dirty_share(1000, 1000) - 0.632).abs() < 0.001);
        assert_eq!(dirty_share(0, 10), 0.0);
    }

    #[test]
    fn job_walks_its_range_once_and_ring_cycles() {
        let mut j = VacuumJob::new("t", 10, 3, 1.0, CostBalance::new(200, 0));
        let mut seen = Vec::new();
        while let Some(b) = j.current() {
            seen.push(b);
            j.advance();
        }
        assert_eq!(seen, vec![10, 11, 12]);
        let slots: Vec<usize> = (0..RING_BUFFERS + 2).map(|_| j.next_slot()).collect();
        assert_eq!(slots[RING_BUFFERS], 0);
        assert_eq!(slots[RING_BUFFERS + 1], 1);
    }
}
