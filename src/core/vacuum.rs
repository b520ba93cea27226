//! Vacuum's decisions (vacuumlazy.c, `vacuum_delay_point`, autovacuum.c):
//! which table to vacuum, which page comes next, how much cost each page
//! adds and when the cost limit makes vacuum sleep.
//!
//! Modelled, as PostgreSQL 15's lazy vacuum (vacuumlazy.c) does it: phase I,
//! a sequential scan of the heap through a 256 KiB ring (32 buffers,
//! `GetAccessStrategy(BAS_VACUUM)`), skipping runs of all-visible pages
//! (`SKIP_PAGES_THRESHOLD`), pruning the pages with dead tuples (dirtied and
//! WAL-logged, a full-page image on the first change after a checkpoint) and
//! setting the others all-visible, collecting dead item identifiers in
//! maintenance_work_mem; phase II, each index read in full (btree
//! bulk-delete) with the leaves holding dead items dirtied; phase III, the
//! pages with dead items read again, their items freed and the pages set
//! all-visible; an index pass each time maintenance_work_mem fills. The
//! ring's dirty buffers are written by vacuum itself after flushing WAL to
//! their LSN; cost-based sleeps; reads go through the kernel's readahead
//! ([`ReadAhead`]). A table without an index is pruned in one pass.

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

/// Most tuples a heap page can hold (`MaxHeapTuplesPerPage`): phase I
/// stops to vacuum the indexes when fewer free dead-item slots are left.
pub const MAX_HEAP_TUPLES_PER_PAGE: u64 = 291;

/// Bytes of one dead item identifier in maintenance_work_mem
/// (`sizeof(ItemPointerData)`, PostgreSQL 15's `dead_items`).
pub const DEAD_ITEM_BYTES: u64 = 6;

/// Runs of all-visible pages shorter than this are read anyway
/// (`SKIP_PAGES_THRESHOLD`, vacuumlazy.c): skipping a few pages would defeat
/// the kernel's readahead.
pub const SKIP_PAGES_THRESHOLD: u64 = 32;

/// Below this share of pages with dead items, a vacuum with one pass
/// skips index vacuuming (`BYPASS_THRESHOLD_PAGES`, vacuumlazy.c).
pub const BYPASS_THRESHOLD_PAGES: f64 = 0.02;

/// Heap pages one visibility-map page covers: 2 bits per heap page on the
/// page's 8,168 usable bytes (`HEAPBLOCKS_PER_PAGE`, visibilitymap.c).
pub const HEAP_PAGES_PER_VM_PAGE: u64 = (8192 - 24) * 4;

/// WAL of the record that removes a page's dead items in phase III
/// (Heap2/VACUUM: 24 B header, 20 B block reference, 2 B per item).
pub const VACUUM_WAL_BYTES: u64 = 44;
/// WAL of the record that sets a page all-visible (Heap2/VISIBLE with the
/// VM page's and the heap page's block references).
pub const VISIBLE_WAL_BYTES: u64 = 64;
/// WAL of a btree leaf's bulk-delete record (Btree/VACUUM), before 2 B per
/// deleted item.
pub const BTREE_VACUUM_WAL_BYTES: u64 = 50;
/// Bytes a dead heap tuple frees when pruned (pgbench_accounts' 121 B
/// tuples): the page's full-page image is that much smaller.
pub const DEAD_TUPLE_BYTES: u64 = 121;
/// Bytes a deleted btree item frees (an int4 key's 16 B tuple and its 4 B
/// line pointer).
pub const INDEX_ITEM_BYTES: u64 = 20;

/// Which of lazy vacuum's phases a job is in (`pg_stat_progress_vacuum`'s
/// phase).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Phase {
    /// I: the heap scan, pruning and collecting dead item identifiers.
    ScanHeap = 0,
    /// II: every index read in full, dead items' entries deleted.
    VacuumIndexes = 1,
    /// III: the pages with dead items read again, the items freed.
    VacuumHeap = 2,
}

/// Phases, for per-phase counters.
pub const PHASES: usize = 3;

/// What a vacuum works on: the heap, its index and where their dead rows
/// are.
#[derive(Debug, Clone)]
pub struct VacuumTarget {
    /// First heap block and heap pages.
    pub heap_first: u64,
    pub heap_pages: u64,
    /// First index block and index pages (0: no index; the heap is then
    /// vacuumed in one pass, as PostgreSQL does for a table without
    /// indexes).
    pub index_first: u64,
    pub index_pages: u64,
    /// Share of heap pages all-visible in the visibility map.
    pub all_visible: f64,
    /// Share of the other pages that hold dead tuples.
    pub dead_pages: f64,
    /// Dead tuples per page that has some (on average).
    pub dead_per_page: f64,
    /// Dead item identifiers maintenance_work_mem holds.
    pub max_dead_items: u64,
    /// Pages the kernel reads ahead in one request (read_ahead_kb / 8).
    pub read_ahead_pages: u64,
}

impl VacuumTarget {
    /// The dead item identifiers `maintenance_work_mem` holds, as
    /// `dead_items_max_items` computes them (PostgreSQL 15: 6 bytes each,
    /// at most 1 GB, at most what the heap can hold).
    pub fn max_items(maintenance_work_mem: u64, heap_pages: u64) -> u64 {
        let bytes = maintenance_work_mem.min((1 << 30) - 1);
        (bytes / DEAD_ITEM_BYTES)
            .min(heap_pages.max(1) * MAX_HEAP_TUPLES_PER_PAGE)
            .max(MAX_HEAP_TUPLES_PER_PAGE)
    }
}

/// A one-shot vacuum's shape beyond its heap: its index, the visibility
/// map and its dead rows.
#[derive(Debug, Clone, PartialEq)]
pub struct VacuumShape {
    /// The workload table whose pages are the heap's index.
    pub index_table: String,
    /// Share of heap pages all-visible in the visibility map.
    pub all_visible: f64,
    /// Share of the other pages that hold dead tuples.
    pub dead_pages: f64,
    /// Dead tuples per page that has some (on average).
    pub dead_per_page: f64,
    /// Pages the kernel reads ahead in one request (read_ahead_kb / 8).
    pub read_ahead_pages: u64,
}

/// One lazy vacuum of a heap and its index.
#[derive(Debug, Clone)]
pub struct VacuumJob {
    /// Table name, for reports.
    pub table: String,
    pub target: VacuumTarget,
    /// Phase I's next heap block (a block number).
    next: u64,
    end: u64,
    /// Share of pages with dead tuples to prune, for a job without an
    /// index ([`VacuumJob::new`]).
    pub dirty_fraction: f64,
    /// Per heap page (index from the heap's first block): all-visible, has
    /// dead tuples.
    all_visible: Vec<bool>,
    has_dead: Vec<bool>,
    /// Dead items collected since the last index pass, and their pages.
    pub dead_items: u64,
    pending: Vec<u64>,
    /// Fractional dead tuples carried from page to page.
    dead_carry: f64,
    /// The phase, and (phases II and III) the position in it.
    pub phase: Phase,
    cursor: usize,
    /// Index passes done (`index_vacuum_count`).
    pub index_passes: u64,
    /// Pages with dead items found in phase I, over the whole heap.
    pub lpdead_pages: u64,
    /// Pages skipped through the visibility map.
    pub skipped: u64,
    /// Cost accounting.
    pub cost: CostBalance,
    /// Ring slots: the buffers this vacuum cycles through.
    pub ring: [Option<u32>; RING_BUFFERS],
    /// Next ring slot to reuse.
    pub ring_cursor: usize,
    /// The kernel's readahead windows for the current sequential stream.
    pub ra: ReadAhead,
}

impl VacuumJob {
    /// Vacuum `pages` pages from block `first`, a share `dirty_fraction` of
    /// them holding dead tuples, pruned in one pass (no index).
    pub fn new(
        table: &str,
        first: u64,
        pages: u64,
        dirty_fraction: f64,
        cost: CostBalance,
    ) -> Self {
        let target = VacuumTarget {
            heap_first: first,
            heap_pages: pages,
            index_first: 0,
            index_pages: 0,
            all_visible: 0.0,
            dead_pages: dirty_fraction.clamp(0.0, 1.0),
            dead_per_page: 0.0,
            max_dead_items: u64::MAX,
            read_ahead_pages: 1,
        };
        VacuumJob {
            table: table.to_string(),
            next: first,
            end: first + pages,
            dirty_fraction: dirty_fraction.clamp(0.0, 1.0),
            all_visible: Vec::new(),
            has_dead: Vec::new(),
            dead_items: 0,
            pending: Vec::new(),
            dead_carry: 0.0,
            phase: Phase::ScanHeap,
            cursor: 0,
            index_passes: 0,
            lpdead_pages: 0,
            skipped: 0,
            cost,
            ring: [None; RING_BUFFERS],
            ring_cursor: 0,
            ra: ReadAhead::new(1),
            target,
        }
    }

    /// A two-pass lazy vacuum of `target` (a heap with an index), its pages'
    /// visibility and dead tuples drawn from `rng`.
    pub fn lazy(
        table: &str,
        target: VacuumTarget,
        cost: CostBalance,
        rng: &mut super::SimRng,
    ) -> Self {
        use rand::RngExt;
        let mut j = VacuumJob::new(table, target.heap_first, target.heap_pages, 0.0, cost);
        let n = target.heap_pages as usize;
        j.all_visible = (0..n)
            .map(|_| target.all_visible > 0.0 && rng.random_bool(target.all_visible.min(1.0)))
            .collect();
        j.has_dead = j
            .all_visible
            .iter()
            .map(|&av| {
                !av && target.dead_pages > 0.0 && rng.random_bool(target.dead_pages.min(1.0))
            })
            .collect();
        j.ra = ReadAhead::new(target.read_ahead_pages);
        j.target = target;
        j
    }

    /// Whether this job vacuums an index in two passes.
    pub fn two_pass(&self) -> bool {
        self.target.index_pages > 0
    }

    /// The page to process next in phase I, or None when the heap scan is
    /// over. Runs of at least [`SKIP_PAGES_THRESHOLD`] all-visible pages
    /// are skipped (counted in `skipped`).
    pub fn current(&mut self) -> Option<u64> {
        if self.next < self.end && !self.all_visible.is_empty() {
            let i = (self.next - self.target.heap_first) as usize;
            if self.all_visible[i] {
                let run = self.all_visible[i..].iter().take_while(|&&v| v).count() as u64;
                if run >= SKIP_PAGES_THRESHOLD {
                    self.next += run;
                    self.skipped += run;
                }
            }
        }
        (self.next < self.end).then_some(self.next)
    }

    /// What phase I finds on heap page `block`: whether it is all-visible
    /// already, and its dead tuples (0: none).
    pub fn page_state(&mut self, block: u64) -> (bool, u64) {
        if self.all_visible.is_empty() {
            return (false, 0);
        }
        let i = (block - self.target.heap_first) as usize;
        if !self.has_dead[i] {
            return (self.all_visible[i], 0);
        }
        let want = self.dead_carry + self.target.dead_per_page;
        let n = (want.floor() as u64).max(1);
        self.dead_carry = (want - n as f64).max(0.0);
        (false, n)
    }

    /// Phase I's current page is done; it left `dead` dead items.
    pub fn advance(&mut self, dead: u64) {
        if dead > 0 {
            self.dead_items += dead;
            self.lpdead_pages += 1;
            if self.two_pass() {
                self.pending.push(self.next);
            }
        }
        self.next += 1;
    }

    /// Whether phase I must stop for an index pass before its next page:
    /// maintenance_work_mem has no room for another page's dead items.
    pub fn memory_full(&self) -> bool {
        self.two_pass()
            && self.dead_items > 0
            && self.target.max_dead_items.saturating_sub(self.dead_items) < MAX_HEAP_TUPLES_PER_PAGE
    }

    /// At the end of the heap scan: whether the dead items left go through
    /// index vacuuming, or the bypass applies (one pass, fewer than 2% of
    /// the pages with dead items).
    pub fn needs_index_pass(&self) -> bool {
        if !self.two_pass() || self.dead_items == 0 {
            return false;
        }
        self.index_passes > 0
            || self.lpdead_pages as f64 >= BYPASS_THRESHOLD_PAGES * self.target.heap_pages as f64
    }

    /// Start phase II over the dead items collected so far.
    pub fn start_index_pass(&mut self) {
        self.phase = Phase::VacuumIndexes;
        self.cursor = 0;
        self.ra.reset();
    }

    /// Phase II's or III's next block, or None at its end.
    pub fn pass_block(&self) -> Option<u64> {
        match self.phase {
            Phase::ScanHeap => None,
            Phase::VacuumIndexes => ((self.cursor as u64) < self.target.index_pages)
                .then(|| self.target.index_first + self.cursor as u64),
            Phase::VacuumHeap => self.pending.get(self.cursor).copied(),
        }
    }

    /// Whether phase III's next page after the current one is the next
    /// block: the access is sequential and the kernel reads ahead.
    pub fn pass_sequential(&self) -> bool {
        match self.phase {
            Phase::VacuumHeap => {
                matches!((self.pending.get(self.cursor), self.pending.get(self.cursor + 1)),
                    (Some(a), Some(b)) if *b == a + 1)
            }
            _ => true,
        }
    }

    /// The end of the current sequential stream: readahead stops there.
    pub fn stream_end(&self) -> u64 {
        match self.phase {
            Phase::VacuumIndexes => self.target.index_first + self.target.index_pages,
            _ => self.end,
        }
    }

    /// Dead items per index page in this pass, and the share of index
    /// pages holding at least one (the ones the pass dirties).
    pub fn index_dead(&self) -> (f64, f64) {
        let pages = self.target.index_pages.max(1);
        (
            self.dead_items as f64 / pages as f64,
            dirty_share(self.dead_items, pages),
        )
    }

    /// Phase II's or III's current block is done. At the end of phase II,
    /// phase III starts; at the end of phase III, phase I goes on.
    pub fn pass_advance(&mut self) {
        self.cursor += 1;
        if self.pass_block().is_some() {
            return;
        }
        self.cursor = 0;
        self.ra.reset();
        match self.phase {
            Phase::VacuumIndexes => self.phase = Phase::VacuumHeap,
            Phase::VacuumHeap => {
                self.phase = Phase::ScanHeap;
                self.index_passes += 1;
                self.dead_items = 0;
                self.pending.clear();
            }
            Phase::ScanHeap => {}
        }
    }

    /// Dead items on phase III's current page (the pages' average).
    pub fn pass_items(&self) -> u64 {
        (self.target.dead_per_page.round() as u64).max(1)
    }

    /// Phase I's next block, as far as it has come (for the readahead of a
    /// scan resumed after an index pass).
    pub fn scan_position(&self) -> u64 {
        self.next
    }

    /// The next ring slot to use, and move the cursor on.
    pub fn next_slot(&mut self) -> usize {
        let s = self.ring_cursor;
        self.ring_cursor = (self.ring_cursor + 1) % RING_BUFFERS;
        s
    }
}

/// Where a block stands in the kernel's readahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ahead {
    /// Read into the page cache: a copy, no I/O.
    Cached,
    /// Its window is being read.
    InFlight,
    /// Not read ahead.
    Absent,
}

/// The kernel's readahead for one sequential reader (mm/readahead.c,
/// buffered I/O): a read that misses the page cache reads a window of
/// `read_ahead_kb` from there, and when the reader reaches a window's first
/// page the next window is read asynchronously, so one window is always
/// ahead. The ramp-up of the first windows (they start small and double)
/// is not modelled.
#[derive(Debug, Clone)]
pub struct ReadAhead {
    /// Pages per window.
    pub window: u64,
    /// Windows, oldest first: [start, end) and whether read.
    windows: std::collections::VecDeque<(u64, u64, bool)>,
}

impl ReadAhead {
    /// Windows of `window` pages (at least 1).
    pub fn new(window: u64) -> Self {
        ReadAhead {
            window: window.max(1),
            windows: std::collections::VecDeque::new(),
        }
    }

    /// Forget the stream (a new one starts).
    pub fn reset(&mut self) {
        self.windows.clear();
    }

    /// Where `block` stands; windows wholly before it are dropped.
    pub fn lookup(&mut self, block: u64) -> Ahead {
        while self.windows.front().is_some_and(|w| w.1 <= block) {
            self.windows.pop_front();
        }
        match self.windows.iter().find(|w| w.0 <= block && block < w.1) {
            Some(&(_, _, true)) => Ahead::Cached,
            Some(_) => Ahead::InFlight,
            None => {
                // A jump (a skipped run): the old windows are of no use.
                self.windows.clear();
                Ahead::Absent
            }
        }
    }

    /// A window from `block`, at most up to `end`: its first block and
    /// pages, now in flight.
    pub fn start(&mut self, block: u64, end: u64) -> Option<(u64, u64)> {
        let to = (block + self.window).min(end);
        if to <= block {
            return None;
        }
        self.windows.push_back((block, to, false));
        Some((block, to - block))
    }

    /// If `block` is the first page of the newest window, the next window
    /// (up to `end`) to read asynchronously.
    pub fn next_async(&mut self, block: u64, end: u64) -> Option<(u64, u64)> {
        let &(start, to, _) = self.windows.back()?;
        if start != block || self.window == 1 {
            return None;
        }
        self.start(to, end)
    }

    /// The window starting at `block` has been read.
    pub fn done(&mut self, block: u64) {
        if let Some(w) = self.windows.iter_mut().find(|w| w.0 == block) {
            w.2 = true;
        }
    }
}

/// Autovacuum's trigger (`relation_needs_vacanalyze`): dead tuples over
/// autovacuum_vacuum_threshold (50) + autovacuum_vacuum_scale_factor (0.2) ×
/// reltuples.
pub fn needs_vacuum(dead_tuples: u64, reltuples: u64) -> bool {
    dead_tuples as f64 > vacuum_threshold(reltuples)
}

/// The dead tuples past which autovacuum vacuums a table of `reltuples`
/// rows ([`needs_vacuum`]).
pub fn vacuum_threshold(reltuples: u64) -> f64 {
    50.0 + 0.2 * reltuples as f64
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
            j.advance(0);
        }
        assert_eq!(seen, vec![10, 11, 12]);
        let slots: Vec<usize> = (0..RING_BUFFERS + 2).map(|_| j.next_slot()).collect();
        assert_eq!(slots[RING_BUFFERS], 0);
        assert_eq!(slots[RING_BUFFERS + 1], 1);
    }
}
