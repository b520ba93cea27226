//! The kernel's writeback of the dirty pages PostgreSQL leaves in the
//! modelled page cache (`--os-cache`): pages written with `write()` by a
//! writer whose `*_flush_after` is 0 (backends and vacuum, by default).
//!
//! Linux keeps such a page dirty in the page cache. Its flusher
//! (fs/fs-writeback.c, `wb_workfn`) wakes every `dirty_writeback_centisecs`
//! and writes back what has been dirty longer than `dirty_expire_centisecs`
//! (`wb_check_old_data_flush`), and once the dirty pages pass the background
//! threshold (`dirty_background_ratio` of the dirtyable memory,
//! `wb_check_background_flush`, woken from `balance_dirty_pages`) it writes
//! the oldest until they are under it again. Where a cgroup v1 throttle
//! caps the server, the flusher's writes are charged to no cgroup
//! (`caps.kernel_writeback_uncapped`).
//!
//! A checkpoint's sync phase fsyncs each data file (`ProcessSyncRequests`),
//! and an fsync writes every page of the file still dirty
//! (`file_write_and_wait_range`) in the caller's context: the checkpointer's
//! cgroup, so under a throttle these writes are capped, and the WAL writes
//! queued behind them wait. Where the throttle holds a cgroup's bios in one
//! queue per direction (blk-throttle), the fsync's writes all enter it at
//! once; otherwise the device's request queue bounds how many are in
//! flight (`fsync_depth`), and the WAL's writes share it.
//!
//! Each pass writes its pages in block order, adjacent ones merged into one
//! request (`write_cache_pages` walks a file's pages in index order and the
//! block layer merges adjacent bios); the device layer splits a long run
//! and counts it against the caps ([`crate::device::block_layer`]).
//!
//! Simplified: a page's age is its own (Linux ages an inode, by its
//! `dirtied_when`, and writes all of an expired inode's pages); a dirty page
//! the page cache's LRU drops stays dirty here until written back; the
//! dirtyable memory is the modelled page cache.

use std::collections::{BTreeMap, VecDeque};

use super::time::Nanos;

/// The kernel's writeback figures, resolved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KernelWriteback {
    /// `vm.dirty_expire_centisecs`: a page dirty this long is written back
    /// at the flusher's next wake-up.
    pub expire: Nanos,
    /// `vm.dirty_writeback_centisecs`: how often the flusher wakes.
    pub interval: Nanos,
    /// Dirty pages (8 KiB) above which the flusher writes in the background
    /// (`vm.dirty_background_ratio` of the page cache).
    pub background_pages: u64,
    /// Pages a background pass writes at least: `MIN_WRITEBACK_PAGES`
    /// (fs/fs-writeback.c, 4 MiB), in 8 KiB pages.
    pub background_chunk: u64,
    /// The fsync's writes in flight at most: None, all at once (a
    /// blk-throttle queue holds them, in order); Some(n), the device's
    /// request queue (`queue/nr_requests`).
    pub fsync_depth: Option<u32>,
}

/// A run of adjacent dirty pages written back as one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Run {
    pub block: u64,
    pub pages: u32,
}

/// What the checkpointer's fsync does after one of its writes completed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsyncStep {
    /// Write this run next (a place in the request queue came free).
    Write(Run),
    /// Wait for the writes in flight.
    Wait,
    /// Every page is written: the flush that ends the fsync goes.
    Done,
}

/// The dirty pages and the flusher: see the module docs.
#[derive(Debug)]
pub struct KernelFlusher {
    cfg: KernelWriteback,
    /// Each dirty page and when it became dirty.
    dirty: BTreeMap<u64, Nanos>,
    /// (when dirtied, block) in the order pages became dirty; an entry whose
    /// page was since written back (or dirtied again later) is stale.
    order: VecDeque<(Nanos, u64)>,
    /// A background pass is asked for and not yet done.
    kicked: bool,
    /// The fsync in progress: its runs not yet written, and those in flight.
    fsync: Option<(VecDeque<Run>, u32)>,
}

impl KernelFlusher {
    /// A flusher with no dirty pages.
    pub fn new(cfg: KernelWriteback) -> KernelFlusher {
        assert!(cfg.interval > 0, "the flusher wakes at an interval");
        assert!(cfg.fsync_depth != Some(0), "a request queue holds one");
        KernelFlusher {
            cfg,
            dirty: BTreeMap::new(),
            order: VecDeque::new(),
            kicked: false,
            fsync: None,
        }
    }

    /// Bytes the dirty pages of `cfg` hold at most: each in the ordered map
    /// and in the queue by age, up to the background threshold (a pass
    /// starts as soon as they pass it) and a chunk.
    pub fn footprint(cfg: &KernelWriteback) -> u64 {
        // A map entry (key and time, 16 bytes, and its node's slack) and a
        // queue entry (16 bytes, up to twice that as the queue grows).
        const PER_PAGE: u64 = 64;
        (cfg.background_pages + cfg.background_chunk) * PER_PAGE
    }

    /// When the flusher first wakes.
    pub fn first_wake(&self, now: Nanos) -> Nanos {
        now + self.cfg.interval
    }

    /// Pages dirty now.
    pub fn dirty_pages(&self) -> usize {
        self.dirty.len()
    }

    /// `block` was written into the page cache at `now`: dirty from now,
    /// or still from when it became dirty. True if the dirty pages passed
    /// the background threshold and the flusher is to be woken now.
    pub fn handle_dirtied(&mut self, now: Nanos, block: u64) -> bool {
        if let std::collections::btree_map::Entry::Vacant(e) = self.dirty.entry(block) {
            e.insert(now);
            self.order.push_back((now, block));
        }
        let over = self.dirty.len() as u64 > self.cfg.background_pages;
        let kick = over && !self.kicked;
        self.kicked |= kick;
        kick
    }

    /// The flusher's periodic wake-up at `now`: the runs it writes back
    /// (pages dirty for `expire` or longer, and the oldest above the
    /// background threshold), and when it wakes next.
    pub fn handle_timeout(&mut self, now: Nanos) -> (Vec<Run>, Nanos) {
        let mut blocks = Vec::new();
        while let Some(&(at, block)) = self.order.front() {
            if at.saturating_add(self.cfg.expire) > now {
                break;
            }
            self.order.pop_front();
            if self.dirty.get(&block) == Some(&at) {
                self.dirty.remove(&block);
                blocks.push(block);
            }
        }
        self.background(&mut blocks);
        blocks.sort_unstable();
        (runs(&blocks), now + self.cfg.interval)
    }

    /// The flusher woken by the background threshold: the oldest pages
    /// written back, at least a chunk, until the dirty pages are under it.
    pub fn handle_kick(&mut self) -> Vec<Run> {
        self.kicked = false;
        let mut blocks = Vec::new();
        self.background(&mut blocks);
        blocks.sort_unstable();
        runs(&blocks)
    }

    /// Adds to `blocks` the oldest dirty pages (taken off the dirty set)
    /// while the dirty pages are over the background threshold, at least
    /// a chunk once over it.
    fn background(&mut self, blocks: &mut Vec<u64>) {
        let limit = self.cfg.background_pages;
        if self.dirty.len() as u64 <= limit {
            return;
        }
        let target = limit.saturating_sub(self.cfg.background_chunk.min(limit));
        while self.dirty.len() as u64 > target {
            let Some((at, block)) = self.order.pop_front() else {
                break;
            };
            if self.dirty.get(&block) == Some(&at) {
                self.dirty.remove(&block);
                blocks.push(block);
            }
        }
    }

    /// The checkpointer fsyncs the data files: every dirty page is taken
    /// to be written in block order. The runs to write now (none: nothing
    /// was dirty, the flush goes at once).
    pub fn handle_fsync(&mut self) -> Vec<Run> {
        assert!(self.fsync.is_none(), "one fsync at a time");
        let blocks: Vec<u64> = std::mem::take(&mut self.dirty).into_keys().collect();
        self.order.clear();
        let mut queue: VecDeque<Run> = runs(&blocks).into();
        if queue.is_empty() {
            return Vec::new();
        }
        let now = match self.cfg.fsync_depth {
            None => queue.len(),
            Some(d) => queue.len().min(d as usize),
        };
        let first: Vec<Run> = queue.drain(..now).collect();
        self.fsync = Some((queue, first.len() as u32));
        first
    }

    /// One of the fsync's writes completed.
    pub fn handle_fsync_write_done(&mut self) -> FsyncStep {
        let (queue, in_flight) = self.fsync.as_mut().expect("an fsync in progress");
        *in_flight -= 1;
        if let Some(run) = queue.pop_front() {
            *in_flight += 1;
            return FsyncStep::Write(run);
        }
        if *in_flight > 0 {
            return FsyncStep::Wait;
        }
        self.fsync = None;
        FsyncStep::Done
    }
}

/// Sorted, distinct `blocks` as runs of adjacent ones.
fn runs(blocks: &[u64]) -> Vec<Run> {
    let mut out: Vec<Run> = Vec::new();
    for &b in blocks {
        match out.last_mut() {
            Some(r) if r.block + u64::from(r.pages) == b && r.pages < u32::MAX => r.pages += 1,
            _ => out.push(Run { block: b, pages: 1 }),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::SEC;

    fn cfg(background_pages: u64, fsync_depth: Option<u32>) -> KernelWriteback {
        KernelWriteback {
            expire: 30 * SEC,
            interval: 5 * SEC,
            background_pages,
            background_chunk: 4,
            fsync_depth,
        }
    }

    fn pages(runs: &[Run]) -> Vec<u64> {
        runs.iter()
            .flat_map(|r| r.block..r.block + u64::from(r.pages))
            .collect()
    }

    #[test]
    fn a_page_is_written_back_once_it_has_been_dirty_for_the_expiry() {
        let mut f = KernelFlusher::new(cfg(1000, None));
        f.handle_dirtied(0, 7);
        f.handle_dirtied(SEC, 8);
        f.handle_dirtied(2 * SEC, 20);
        // Dirtied again: still dirty from its first write.
        f.handle_dirtied(26 * SEC, 7);
        let (w, next) = f.handle_timeout(25 * SEC);
        assert!(w.is_empty());
        assert_eq!(next, 30 * SEC);
        // At 31 s the first two are 30 s old, and adjacent: one run.
        let (w, _) = f.handle_timeout(31 * SEC);
        assert_eq!(w, vec![Run { block: 7, pages: 2 }]);
        assert_eq!(f.dirty_pages(), 1);
        // Written back, then dirtied again: a new age.
        f.handle_dirtied(33 * SEC, 7);
        let (w, _) = f.handle_timeout(36 * SEC);
        assert_eq!(
            w,
            vec![Run {
                block: 20,
                pages: 1
            }]
        );
        let (w, _) = f.handle_timeout(63 * SEC);
        assert_eq!(w, vec![Run { block: 7, pages: 1 }]);
    }

    #[test]
    fn past_the_background_threshold_the_oldest_go_a_chunk_at_least() {
        let mut f = KernelFlusher::new(cfg(10, None));
        let kicks: Vec<bool> = (0..12)
            .map(|b| f.handle_dirtied(b * SEC, 100 - b))
            .collect();
        // The 11th page passes 10: one kick until the flusher ran.
        assert_eq!(kicks.iter().filter(|&&k| k).count(), 1);
        assert!(kicks[10]);
        let w = f.handle_kick();
        // Down to 10 − 4 = 6: the six oldest, in block order.
        assert_eq!(pages(&w), vec![95, 96, 97, 98, 99, 100]);
        assert_eq!(f.dirty_pages(), 6);
        assert!(!f.handle_dirtied(20 * SEC, 500));
    }

    #[test]
    fn an_fsync_writes_every_dirty_page_in_block_order_within_its_depth() {
        let mut f = KernelFlusher::new(cfg(1000, Some(2)));
        for (i, b) in [9u64, 3, 4, 5, 40, 41, 70].iter().enumerate() {
            f.handle_dirtied(i as u64, *b);
        }
        let first = f.handle_fsync();
        assert_eq!(
            first,
            vec![Run { block: 3, pages: 3 }, Run { block: 9, pages: 1 }]
        );
        assert_eq!(f.dirty_pages(), 0);
        // Dirtied during the fsync: left for the flusher.
        f.handle_dirtied(10, 3);
        assert_eq!(
            f.handle_fsync_write_done(),
            FsyncStep::Write(Run {
                block: 40,
                pages: 2
            })
        );
        assert_eq!(
            f.handle_fsync_write_done(),
            FsyncStep::Write(Run {
                block: 70,
                pages: 1
            })
        );
        assert_eq!(f.handle_fsync_write_done(), FsyncStep::Wait);
        assert_eq!(f.handle_fsync_write_done(), FsyncStep::Done);
        assert_eq!(f.dirty_pages(), 1);
        // Nothing dirty: nothing to write, and no fsync left open.
        let mut g = KernelFlusher::new(cfg(1000, None));
        assert!(g.handle_fsync().is_empty());
        assert!(g.handle_fsync().is_empty());
    }

    proptest::proptest! {
        /// Every page dirtied is written back exactly once each time it
        /// became dirty, by the flusher or an fsync, in runs of adjacent
        /// distinct pages in block order; the periodic pass writes no page
        /// younger than the expiry unless the dirty pages are over the
        /// background threshold.
        #[test]
        fn every_dirty_page_is_written_once(
            events in proptest::collection::vec((0u64..200, 0u8..10), 1..400),
            depth in proptest::option::of(1u32..8),
            background in 5u64..300,
        ) {
            let mut f = KernelFlusher::new(cfg(background, depth));
            // Each dirty page and when it became dirty.
            let mut dirty: BTreeMap<u64, Nanos> = BTreeMap::new();
            let mut now = 0;
            for (block, what) in events {
                now += SEC / 2;
                // Takes the written pages off `dirty`: their dirtied times.
                let check = |w: &[Run], dirty: &mut BTreeMap<u64, Nanos>| {
                    let p = pages(w);
                    proptest::prop_assert!(p.windows(2).all(|x| x[0] < x[1]), "{p:?}");
                    proptest::prop_assert!(w
                        .windows(2)
                        .all(|x| x[0].block + u64::from(x[0].pages) < x[1].block));
                    let mut times = Vec::new();
                    for b in p {
                        let t = dirty.remove(&b);
                        proptest::prop_assert!(t.is_some(), "{b} written but not dirty");
                        times.extend(t);
                    }
                    Ok(times)
                };
                match what {
                    0 => {
                        let over = f.dirty_pages() as u64 > background;
                        let (w, _) = f.handle_timeout(now);
                        let times = check(&w, &mut dirty)?;
                        if !over {
                            proptest::prop_assert!(times.iter().all(|&t| t + 30 * SEC <= now));
                        }
                        // Nothing expired is left behind.
                        proptest::prop_assert!(dirty.values().all(|&t| t + 30 * SEC > now));
                    }
                    1 => {
                        check(&f.handle_kick(), &mut dirty)?;
                    }
                    2 => {
                        let mut all = f.handle_fsync();
                        let mut open = !all.is_empty();
                        while open {
                            match f.handle_fsync_write_done() {
                                FsyncStep::Write(r) => all.push(r),
                                FsyncStep::Wait => {}
                                FsyncStep::Done => open = false,
                            }
                        }
                        all.sort_by_key(|r| r.block);
                        check(&all, &mut dirty)?;
                        proptest::prop_assert!(dirty.is_empty());
                    }
                    _ => {
                        f.handle_dirtied(now, block);
                        dirty.entry(block).or_insert(now);
                    }
                }
                proptest::prop_assert_eq!(f.dirty_pages(), dirty.len());
            }
        }
    }
}
