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
//! flight (`queue_depth`), and the WAL's writes share it. The flusher's
//! writes are bounded alike (its thread waits for a free request).
//!
//! Each pass writes its pages in block order, adjacent ones merged into one
//! request (`write_cache_pages` walks a file's pages in index order and the
//! block layer merges adjacent bios); the device layer splits a long run
//! and counts it against the caps ([`crate::device::block_layer`]).
//!
//! Linux ages an inode, not a page: `inode->dirtied_when` is set when a
//! clean inode is first dirtied (`__mark_inode_dirty`), and a periodic
//! pass writes back every dirty page of each inode dirty longer than the
//! expiry (`move_expired_inodes`, then `writeback_sb_inodes` until the
//! inode is clean). So a data file written all the time is written back
//! whole about every `dirty_expire_centisecs`, and an fsync finds only what
//! was dirtied since: here each 1 GiB segment of the data files (RELSEG_SIZE,
//! PostgreSQL's file per segment) is one inode.
//!
//! Simplified: a dirty page the page cache's LRU drops stays dirty here
//! until written back; the dirtyable memory is the modelled page cache.

use std::collections::VecDeque;

use rustc_hash::FxHashMap as HashMap;

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
    /// The flusher's writes in flight at most, and an fsync's: None, all
    /// at once (a blk-throttle queue holds them, in order); Some(n), the
    /// device's request queue (`queue/nr_requests`).
    pub queue_depth: Option<u32>,
}

/// Blocks of one data file: PostgreSQL's RELSEG_SIZE, 1 GiB of 8 KiB
/// blocks (src/include/pg_config.h, the --with-segsize default).
const SEGMENT_BLOCKS: u64 = 131_072;

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
    /// Each dirty page and when it became dirty. A hash map, not an
    /// ordered one: a page is dirtied on every write a backend or vacuum
    /// makes, and a B-tree's search missed the cache at each level; block
    /// order is needed only when pages are written back, which sorts them.
    dirty: HashMap<u64, Nanos>,
    /// Each dirty inode (data file segment) by its number: its
    /// `dirtied_when` (when it went from clean to dirty) and how many of
    /// its pages are dirty.
    inodes: HashMap<u64, Inode>,
    /// (when dirtied, block) in the order pages became dirty; an entry whose
    /// page was since written back (or dirtied again later) is stale.
    order: VecDeque<(Nanos, u64)>,
    /// A background pass is asked for and not yet done.
    kicked: bool,
    /// The flusher's runs written back, and those still to go.
    flushing: Queue,
    /// The fsync in progress, its runs in flight and still to go.
    fsync: Option<Queue>,
}

/// A dirty inode: when it became dirty and its dirty pages.
#[derive(Debug, Clone, Copy)]
struct Inode {
    dirtied_when: Nanos,
    pages: u64,
}

/// Runs written back: those in flight, at most a depth, and those waiting
/// for a place.
#[derive(Debug, Default)]
struct Queue {
    waiting: VecDeque<Run>,
    in_flight: u32,
}

impl Queue {
    /// `runs` join the queue: those that go now.
    fn push(&mut self, runs: Vec<Run>, depth: Option<u32>) -> Vec<Run> {
        self.waiting.extend(runs);
        let room = depth.map_or(usize::MAX, |d| d.saturating_sub(self.in_flight) as usize);
        let n = room.min(self.waiting.len());
        self.in_flight += n as u32;
        self.waiting.drain(..n).collect()
    }

    /// One in flight completed: the next to go, if any.
    fn done(&mut self) -> Option<Run> {
        self.in_flight -= 1;
        let next = self.waiting.pop_front()?;
        self.in_flight += 1;
        Some(next)
    }
}

impl KernelFlusher {
    /// A flusher with no dirty pages.
    pub fn new(cfg: KernelWriteback) -> KernelFlusher {
        assert!(cfg.interval > 0, "the flusher wakes at an interval");
        assert!(cfg.queue_depth != Some(0), "a request queue holds one");
        KernelFlusher {
            cfg,
            dirty: HashMap::default(),
            inodes: HashMap::default(),
            order: VecDeque::new(),
            kicked: false,
            flushing: Queue::default(),
            fsync: None,
        }
    }

    /// Bytes the dirty pages of `cfg` hold at most over `data_blocks`
    /// blocks: each in the ordered map and in the queue by age, up to the
    /// background threshold (a pass starts as soon as they pass it) and a
    /// chunk, and never more than the blocks there are.
    pub fn footprint(cfg: &KernelWriteback, data_blocks: u64) -> u64 {
        // A map entry (key and time, 16 bytes, and a control byte, in a
        // table at most 7/8 full that doubles as it grows: up to 39 bytes)
        // and a queue entry (16 bytes, up to twice that as the queue grows).
        const PER_PAGE: u64 = 72;
        (cfg.background_pages + cfg.background_chunk).min(data_blocks) * PER_PAGE
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
        if let std::collections::hash_map::Entry::Vacant(e) = self.dirty.entry(block) {
            e.insert(now);
            self.order.push_back((now, block));
            self.inodes
                .entry(block / SEGMENT_BLOCKS)
                .or_insert(Inode {
                    dirtied_when: now,
                    pages: 0,
                })
                .pages += 1;
        }
        let over = self.dirty.len() as u64 > self.cfg.background_pages;
        let kick = over && !self.kicked;
        self.kicked |= kick;
        kick
    }

    /// The flusher's periodic wake-up at `now`: the runs it writes back
    /// now (pages dirty for `expire` or longer, and the oldest above the
    /// background threshold, after those it still has to write), and when
    /// it wakes next.
    pub fn handle_timeout(&mut self, now: Nanos) -> (Vec<Run>, Nanos) {
        let mut blocks = Vec::new();
        let expire = self.cfg.expire;
        let before = self.inodes.len();
        self.inodes
            .retain(|_, i| i.dirtied_when.saturating_add(expire) > now);
        if self.inodes.len() < before {
            // Every page of an expired inode: one pass over the dirty pages
            // (a few hundred thousand at most, once per wake-up at most).
            let inodes = &self.inodes;
            self.dirty.retain(|&b, _| {
                let keep = inodes.contains_key(&(b / SEGMENT_BLOCKS));
                if !keep {
                    blocks.push(b);
                }
                keep
            });
        }
        // Every page dirty longer than the expiry was in an expired inode:
        // what is left at the front of the age queue is stale.
        while let Some(&(at, block)) = self.order.front() {
            if at.saturating_add(self.cfg.expire) > now && self.dirty.get(&block) == Some(&at) {
                break;
            }
            self.order.pop_front();
        }
        self.background(&mut blocks);
        blocks.sort_unstable();
        let go = self.flushing.push(runs(&blocks), self.cfg.queue_depth);
        (go, now + self.cfg.interval)
    }

    /// One of the flusher's writes completed: its next, if any.
    pub fn handle_writeback_done(&mut self) -> Option<Run> {
        self.flushing.done()
    }

    /// The flusher woken by the background threshold: the oldest pages
    /// written back, at least a chunk, until the dirty pages are under it.
    pub fn handle_kick(&mut self) -> Vec<Run> {
        self.kicked = false;
        let mut blocks = Vec::new();
        self.background(&mut blocks);
        blocks.sort_unstable();
        self.flushing.push(runs(&blocks), self.cfg.queue_depth)
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
                self.clean_if_written(block / SEGMENT_BLOCKS);
            }
        }
    }

    /// One page of inode `seg` was written back: after its last dirty
    /// page, the inode is clean.
    fn clean_if_written(&mut self, seg: u64) {
        let i = self.inodes.get_mut(&seg).expect("a dirty page's inode");
        i.pages -= 1;
        if i.pages == 0 {
            self.inodes.remove(&seg);
        }
    }

    /// The checkpointer fsyncs the data files: every dirty page is taken
    /// to be written in block order. The runs to write now (none: nothing
    /// was dirty, the flush goes at once).
    pub fn handle_fsync(&mut self) -> Vec<Run> {
        assert!(self.fsync.is_none(), "one fsync at a time");
        let mut blocks: Vec<u64> = self.dirty.drain().map(|(b, _)| b).collect();
        blocks.sort_unstable();
        self.order.clear();
        self.inodes.clear();
        let runs = runs(&blocks);
        if runs.is_empty() {
            return Vec::new();
        }
        let mut q = Queue::default();
        let go = q.push(runs, self.cfg.queue_depth);
        self.fsync = Some(q);
        go
    }

    /// One of the fsync's writes completed.
    pub fn handle_fsync_write_done(&mut self) -> FsyncStep {
        let q = self.fsync.as_mut().expect("an fsync in progress");
        if let Some(run) = q.done() {
            return FsyncStep::Write(run);
        }
        if q.in_flight > 0 {
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
    use std::collections::BTreeMap;

    fn cfg(background_pages: u64, queue_depth: Option<u32>) -> KernelWriteback {
        KernelWriteback {
            expire: 30 * SEC,
            interval: 5 * SEC,
            background_pages,
            background_chunk: 4,
            queue_depth,
        }
    }

    fn pages(runs: &[Run]) -> Vec<u64> {
        runs.iter()
            .flat_map(|r| r.block..r.block + u64::from(r.pages))
            .collect()
    }

    #[test]
    fn an_inode_dirty_for_the_expiry_is_written_back_whole() {
        let mut f = KernelFlusher::new(cfg(1000, None));
        let other = SEGMENT_BLOCKS + 5;
        f.handle_dirtied(0, 7);
        f.handle_dirtied(SEC, other);
        // A young page of a file dirty since 0 s.
        f.handle_dirtied(20 * SEC, 8);
        // Dirtied again: the file is still dirty from its first write.
        f.handle_dirtied(26 * SEC, 7);
        let (w, next) = f.handle_timeout(25 * SEC);
        assert!(w.is_empty());
        assert_eq!(next, 30 * SEC);
        // At 30 s the first file has been dirty 30 s: every page of it
        // goes, the 10-s-old one too, adjacent ones as one run; the other
        // file, dirty since 1 s, waits.
        let (w, _) = f.handle_timeout(30 * SEC);
        assert_eq!(w, vec![Run { block: 7, pages: 2 }]);
        assert_eq!(f.dirty_pages(), 1);
        // Written back, the first file is clean: dirtied again, it ages
        // from then.
        f.handle_dirtied(32 * SEC, 9);
        let (w, _) = f.handle_timeout(35 * SEC);
        assert_eq!(
            w,
            vec![Run {
                block: other,
                pages: 1
            }]
        );
        let (w, _) = f.handle_timeout(61 * SEC);
        assert!(w.is_empty());
        let (w, _) = f.handle_timeout(62 * SEC);
        assert_eq!(w, vec![Run { block: 9, pages: 1 }]);
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

    /// The flusher's writes `first` and those it hands back as each
    /// completes, in block order; never more than `depth` in flight.
    fn drain(f: &mut KernelFlusher, first: Vec<Run>, depth: Option<u32>) -> Vec<Run> {
        let mut in_flight = first.len();
        assert!(depth.is_none_or(|d| in_flight <= d as usize));
        let mut all = first;
        while in_flight > 0 {
            in_flight -= 1;
            if let Some(r) = f.handle_writeback_done() {
                all.push(r);
                in_flight += 1;
            }
        }
        all.sort_by_key(|r| r.block);
        all
    }

    #[test]
    fn the_flushers_writes_keep_within_the_queue_depth() {
        let mut f = KernelFlusher::new(cfg(1000, Some(2)));
        for b in [1, 5, 9, 13, 17] {
            f.handle_dirtied(0, b);
        }
        let (first, _) = f.handle_timeout(30 * SEC);
        assert_eq!(pages(&first), vec![1, 5]);
        // Pages expired at the next wake-up queue behind those left.
        f.handle_dirtied(SEC, 3);
        let (more, _) = f.handle_timeout(31 * SEC);
        assert!(more.is_empty());
        let next: Vec<Option<Run>> = (0..5).map(|_| f.handle_writeback_done()).collect();
        let blocks: Vec<Option<u64>> = next.iter().map(|r| r.map(|r| r.block)).collect();
        assert_eq!(blocks, vec![Some(9), Some(13), Some(17), Some(3), None]);
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
            // Each dirty inode (segment) and when it went from clean to
            // dirty.
            let mut inodes: BTreeMap<u64, Nanos> = BTreeMap::new();
            let mut now = 0;
            for (block, what) in events {
                // Blocks in two data files.
                let block = if block < 100 { block } else { SEGMENT_BLOCKS + block };
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
                        let w = drain(&mut f, w, depth);
                        let written = pages(&w);
                        check(&w, &mut dirty)?;
                        if !over {
                            // Only pages of an inode dirty for the expiry.
                            proptest::prop_assert!(written.iter().all(|b| inodes
                                .get(&(b / SEGMENT_BLOCKS))
                                .is_some_and(|&t| t + 30 * SEC <= now)));
                        }
                        inodes.retain(|&seg, _| dirty.keys().any(|b| b / SEGMENT_BLOCKS == seg));
                        // No expired inode is left dirty.
                        proptest::prop_assert!(inodes.values().all(|&t| t + 30 * SEC > now));
                    }
                    1 => {
                        let w = f.handle_kick();
                        let w = drain(&mut f, w, depth);
                        check(&w, &mut dirty)?;
                        inodes.retain(|&seg, _| dirty.keys().any(|b| b / SEGMENT_BLOCKS == seg));
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
                        inodes.clear();
                    }
                    _ => {
                        f.handle_dirtied(now, block);
                        dirty.entry(block).or_insert(now);
                        inodes.entry(block / SEGMENT_BLOCKS).or_insert(now);
                    }
                }
                proptest::prop_assert_eq!(f.dirty_pages(), dirty.len());
            }
        }
    }
}
