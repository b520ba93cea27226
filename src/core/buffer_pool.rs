//! Shared buffers: buffer descriptors, the page table and the clock sweep
//! (bufmgr.c, freelist.c).
//!
//! Memory is per buffer, never per data page: a 16 GB pool over a 500 GB
//! table costs two million descriptors and a page table of the same size.

use super::wal::Lsn;

/// Index of a buffer descriptor.
pub type BufId = u32;

/// `BM_MAX_USAGE_COUNT`.
pub const MAX_USAGE_COUNT: u8 = 5;

const NO_BLOCK: u64 = u64::MAX;

/// One buffer descriptor.
#[derive(Debug, Clone, Copy)]
pub struct BufDesc {
    /// Data block held, or none.
    block: u64,
    /// LSN of the last WAL record that modified the page.
    lsn: Lsn,
    usage: u8,
    pins: u16,
    /// Contents valid (the read finished).
    valid: bool,
    dirty: bool,
    /// A write of this buffer is in flight.
    writing: bool,
    /// Dirtied again while its write was in flight (`BM_JUST_DIRTIED`).
    redirtied: bool,
    /// Dirty when the current checkpoint started (`BM_CHECKPOINT_NEEDED`).
    checkpoint_needed: bool,
}

impl BufDesc {
    const EMPTY: BufDesc = BufDesc {
        block: NO_BLOCK,
        lsn: 0,
        usage: 0,
        pins: 0,
        valid: false,
        dirty: false,
        writing: false,
        redirtied: false,
        checkpoint_needed: false,
    };
}

/// Result of looking a block up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lookup {
    /// In the pool and valid: pinned, usage bumped.
    Hit(BufId),
    /// In the pool but its read is still in flight (someone else's).
    ReadInProgress(BufId),
    /// Not in the pool.
    Miss,
}

/// Block → buffer. A direct array when the data set is small next to the
/// pool (at most `DIRECT_PER_BUFFER` blocks a buffer): a lookup is then an
/// index instead of a hash probe (lookups run for every page access). Else,
/// and for blocks past the array, a chained hash table like PostgreSQL's
/// buffer table (buf_table.c): bucket heads, and per buffer the next buffer
/// in its chain and the block it holds. Memory stays per buffer, and with no
/// tombstones it never grows: an open-addressing map fills with deleted
/// markers as pages come and go, and at 2 million buffers doubled to 8
/// million slots (+142 MB) late in a 5-minute run.
#[derive(Debug)]
struct PageTable {
    direct: Vec<BufId>,
    heads: Vec<BufId>,
    next: Vec<BufId>,
    keys: Vec<u64>,
    /// 64 − log2(heads.len()): a multiplicative hash's top bits pick the bucket.
    shift: u32,
}

const DIRECT_PER_BUFFER: u64 = 16;
const NO_BUF: BufId = BufId::MAX;

impl PageTable {
    fn new(nbuffers: u32, blocks: u64) -> Self {
        let direct = if blocks <= nbuffers as u64 * DIRECT_PER_BUFFER {
            vec![NO_BUF; blocks as usize]
        } else {
            Vec::new()
        };
        let buckets = (nbuffers as usize).next_power_of_two().max(2);
        PageTable {
            direct,
            heads: vec![NO_BUF; buckets],
            next: vec![NO_BUF; nbuffers as usize],
            keys: vec![NO_BLOCK; nbuffers as usize],
            shift: 64 - buckets.trailing_zeros(),
        }
    }

    #[inline]
    fn bucket(&self, block: u64) -> usize {
        (block.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize
    }

    #[inline]
    fn get(&self, block: u64) -> Option<BufId> {
        match self.direct.get(block as usize) {
            Some(&b) => (b != NO_BUF).then_some(b),
            None => {
                let mut b = self.heads[self.bucket(block)];
                while b != NO_BUF {
                    if self.keys[b as usize] == block {
                        return Some(b);
                    }
                    b = self.next[b as usize];
                }
                None
            }
        }
    }

    /// `b` holds no block in the table when it is given `block`.
    fn insert(&mut self, block: u64, b: BufId) {
        match self.direct.get_mut(block as usize) {
            Some(slot) => *slot = b,
            None => {
                let h = self.bucket(block);
                self.keys[b as usize] = block;
                self.next[b as usize] = self.heads[h];
                self.heads[h] = b;
            }
        }
    }

    fn remove(&mut self, block: u64) {
        match self.direct.get_mut(block as usize) {
            Some(slot) => *slot = NO_BUF,
            None => {
                let h = self.bucket(block);
                let mut prev = NO_BUF;
                let mut b = self.heads[h];
                while b != NO_BUF {
                    let next = self.next[b as usize];
                    if self.keys[b as usize] == block {
                        if prev == NO_BUF {
                            self.heads[h] = next;
                        } else {
                            self.next[prev as usize] = next;
                        }
                        self.next[b as usize] = NO_BUF;
                        self.keys[b as usize] = NO_BLOCK;
                        return;
                    }
                    prev = b;
                    b = next;
                }
            }
        }
    }
}

/// The buffer pool.
#[derive(Debug)]
pub struct BufferPool {
    bufs: Vec<BufDesc>,
    table: PageTable,
    /// Buffers never used yet: the freelist is only non-empty at start.
    free: Vec<BufId>,
    hand: BufId,
    /// Complete passes of the clock hand (`completePasses`).
    passes: u64,
    /// Buffers handed out since the last `take_recent_allocs` (bgwriter).
    pub(super) recent_allocs: u64,
    dirty_count: u64,
}

impl BufferPool {
    /// A pool of `nbuffers` empty buffers.
    pub fn new(nbuffers: u32) -> Self {
        Self::with_blocks(nbuffers, 0)
    }

    /// A pool of `nbuffers` empty buffers over a data set of `blocks`
    /// blocks (which sizes the page table).
    pub fn with_blocks(nbuffers: u32, blocks: u64) -> Self {
        assert!(nbuffers > 0);
        BufferPool {
            bufs: vec![BufDesc::EMPTY; nbuffers as usize],
            table: PageTable::new(nbuffers, blocks),
            free: (0..nbuffers).rev().collect(),
            hand: 0,
            passes: 0,
            recent_allocs: 0,
            dirty_count: 0,
        }
    }

    /// Number of buffers (NBuffers).
    pub fn len(&self) -> u32 {
        self.bufs.len() as u32
    }

    /// Always false: a pool has at least one buffer.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Number of dirty buffers.
    pub fn dirty_count(&self) -> u64 {
        self.dirty_count
    }

    /// Look `block` up; a hit pins the buffer and bumps its usage count.
    pub fn lookup(&mut self, block: u64) -> Lookup {
        match self.table.get(block) {
            None => Lookup::Miss,
            Some(b) => {
                let d = &mut self.bufs[b as usize];
                if d.valid {
                    d.pins += 1;
                    d.usage = (d.usage + 1).min(MAX_USAGE_COUNT);
                    Lookup::Hit(b)
                } else {
                    Lookup::ReadInProgress(b)
                }
            }
        }
    }

    /// Pin `b` for reuse by a buffer ring (`GetBufferFromRing`): only if
    /// nobody has it pinned and it was not used since (usage ≤ 1).
    pub fn pin_for_ring(&mut self, b: BufId) -> bool {
        let d = &mut self.bufs[b as usize];
        if d.pins != 0 || d.usage > 1 || d.writing || !d.valid {
            return false;
        }
        d.pins += 1;
        true
    }

    /// Release one pin.
    pub fn unpin(&mut self, b: BufId) {
        let d = &mut self.bufs[b as usize];
        assert!(d.pins > 0, "unpin of an unpinned buffer {b}");
        d.pins -= 1;
    }

    /// Find a victim with the clock sweep (`StrategyGetBuffer`): the freelist
    /// first, then the hand advances, skipping pinned buffers and buffers
    /// being written, decrementing usage counts, until it finds one with
    /// usage 0. The victim is pinned and returned; it may be dirty. None when
    /// every buffer stayed pinned for a whole sweep.
    pub fn clock_sweep(&mut self) -> Option<BufId> {
        self.recent_allocs += 1;
        if let Some(b) = self.free.pop() {
            self.bufs[b as usize].pins += 1;
            return Some(b);
        }
        let n = self.bufs.len() as u64;
        // Usage counts are at most 5, so 6 laps always find an unpinned one.
        let mut tries = n * (MAX_USAGE_COUNT as u64 + 1);
        while tries > 0 {
            let b = self.hand;
            self.hand += 1;
            if self.hand as u64 == n {
                self.hand = 0;
                self.passes += 1;
            }
            let d = &mut self.bufs[b as usize];
            if d.pins == 0 && !d.writing && d.valid {
                if d.usage > 0 {
                    d.usage -= 1;
                } else {
                    d.pins += 1;
                    return Some(b);
                }
            }
            tries -= 1;
        }
        None
    }

    /// Give the pinned, clean victim `b` a new identity: it now holds
    /// `block`, whose read the caller issues. Returns false (and leaves `b`
    /// untouched) if the victim cannot be taken: someone else pinned or
    /// dirtied it meanwhile, or `block` got loaded by someone else.
    pub fn assign(&mut self, b: BufId, block: u64) -> bool {
        let d = self.bufs[b as usize];
        if d.pins != 1 || d.dirty || d.writing || self.table.get(block).is_some() {
            return false;
        }
        if d.block != NO_BLOCK {
            self.table.remove(d.block);
        }
        self.table.insert(block, b);
        self.bufs[b as usize] = BufDesc {
            block,
            usage: 1,
            pins: 1,
            ..BufDesc::EMPTY
        };
        true
    }

    /// Like `assign`, but the page is new (relation extension): valid at once,
    /// no read.
    pub fn assign_new_page(&mut self, b: BufId, block: u64) -> bool {
        if !self.assign(b, block) {
            return false;
        }
        self.bufs[b as usize].valid = true;
        true
    }

    /// The read into `b` finished.
    pub fn read_done(&mut self, b: BufId) {
        let d = &mut self.bufs[b as usize];
        assert!(!d.valid && d.block != NO_BLOCK);
        d.valid = true;
    }

    /// A WAL record ending at `lsn` modified the page in `b`.
    pub fn mark_dirty(&mut self, b: BufId, lsn: Lsn) {
        let d = &mut self.bufs[b as usize];
        assert!(d.valid, "dirtying a buffer that is not valid");
        if !d.dirty {
            d.dirty = true;
            self.dirty_count += 1;
        }
        if d.writing {
            d.redirtied = true;
        }
        d.lsn = d.lsn.max(lsn);
    }

    /// Whether `b` can be written now: valid, dirty, not already being written.
    pub fn can_write(&self, b: BufId) -> bool {
        let d = &self.bufs[b as usize];
        d.valid && d.dirty && !d.writing
    }

    /// Start writing `b`; returns its block and the LSN WAL must be flushed
    /// to first. The caller must have checked `can_write`.
    pub fn start_write(&mut self, b: BufId) -> (u64, Lsn) {
        let d = &mut self.bufs[b as usize];
        assert!(d.valid && d.dirty && !d.writing, "bad write start on {b}");
        d.writing = true;
        d.redirtied = false;
        (d.block, d.lsn)
    }

    /// The write of `b` finished: it is clean unless dirtied again meanwhile.
    pub fn write_done(&mut self, b: BufId) {
        let d = &mut self.bufs[b as usize];
        assert!(d.writing);
        d.writing = false;
        d.checkpoint_needed = false;
        if !d.redirtied {
            d.dirty = false;
            self.dirty_count -= 1;
        }
        d.redirtied = false;
    }

    /// Block held by `b`, if any.
    pub fn block(&self, b: BufId) -> Option<u64> {
        let d = &self.bufs[b as usize];
        (d.block != NO_BLOCK).then_some(d.block)
    }

    /// Page LSN of `b`.
    pub fn lsn(&self, b: BufId) -> Lsn {
        self.bufs[b as usize].lsn
    }

    /// True if `b` is dirty.
    pub fn is_dirty(&self, b: BufId) -> bool {
        self.bufs[b as usize].dirty
    }

    /// Usage count of `b`.
    pub fn usage(&self, b: BufId) -> u8 {
        self.bufs[b as usize].usage
    }

    /// Checkpoint start (`BufferSync`): flag every dirty buffer and return
    /// them as (block, buffer), sorted by block so the writes go in file
    /// order.
    pub fn mark_checkpoint(&mut self) -> Vec<(u64, BufId)> {
        let mut list = Vec::with_capacity(self.dirty_count as usize);
        for (i, d) in self.bufs.iter_mut().enumerate() {
            if d.dirty && d.valid {
                d.checkpoint_needed = true;
                list.push((d.block, i as BufId));
            }
        }
        list.sort_unstable();
        list
    }

    /// True if `b` still holds `block` and still needs writing for the
    /// current checkpoint.
    pub fn checkpoint_needed(&self, b: BufId, block: u64) -> bool {
        let d = &self.bufs[b as usize];
        d.block == block && d.checkpoint_needed && d.dirty
    }

    /// Clock hand position and complete passes (`StrategySyncStart`).
    pub fn strategy_position(&self) -> (BufId, u64) {
        (self.hand, self.passes)
    }

    /// Allocations since the last call (`StrategySyncStart`'s num_buf_alloc).
    pub fn take_recent_allocs(&mut self) -> u64 {
        std::mem::take(&mut self.recent_allocs)
    }

    /// For the background writer: classify `b` (`SyncOneBuffer` with
    /// skip_recently_used): `Some(true)` dirty and reusable (write it),
    /// `Some(false)` clean and reusable, `None` in use or recently used.
    pub fn reusable(&self, b: BufId) -> Option<bool> {
        let d = &self.bufs[b as usize];
        if d.pins != 0 || d.usage != 0 || d.writing {
            return None;
        }
        Some(d.dirty && d.valid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chained_page_table_agrees_with_a_map_under_churn() {
        // 64 buffers over a large data set: every block goes to the chains.
        let n = 64u32;
        let mut t = PageTable::new(n, 1 << 40);
        assert!(t.direct.is_empty());
        let mut reference = std::collections::HashMap::new();
        let mut held: Vec<Option<u64>> = vec![None; n as usize];
        let mut x = 12345u64;
        for i in 0..200_000u64 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let b = (x >> 33) as u32 % n;
            let block = (x >> 7) % 5_000;
            if let Some(old) = held[b as usize].take() {
                t.remove(old);
                reference.remove(&old);
            }
            if t.get(block).is_none() {
                t.insert(block, b);
                reference.insert(block, b);
                held[b as usize] = Some(block);
            }
            let probe = (x >> 20) % 5_000;
            assert_eq!(t.get(probe), reference.get(&probe).copied(), "step {i}");
        }
        // The table's memory is what it was: three arrays sized by the pool.
        assert_eq!(t.next.len(), n as usize);
        assert_eq!(t.heads.len(), n as usize);
    }

    /// Fill a pool of n buffers with blocks 0..n, unpinned, clean.
    fn filled(n: u32) -> BufferPool {
        let mut p = BufferPool::new(n);
        for blk in 0..n as u64 {
            let b = p.clock_sweep().unwrap();
            assert!(p.assign(b, blk));
            p.read_done(b);
            p.unpin(b);
        }
        p
    }

    #[test]
    fn freelist_first_then_sweep() {
        let mut p = BufferPool::new(3);
        let a = p.clock_sweep().unwrap();
        let b = p.clock_sweep().unwrap();
        assert_ne!(a, b);
        assert_eq!(p.lookup(99), Lookup::Miss);
    }

    #[test]
    fn clock_sweep_evicts_the_first_usage_zero_buffer_after_decrementing() {
        let mut p = filled(4);
        // All start with usage 1. Bump block 0 to 3 and block 1 to 2.
        for _ in 0..2 {
            let Lookup::Hit(b) = p.lookup(0) else {
                panic!()
            };
            p.unpin(b);
        }
        let Lookup::Hit(b) = p.lookup(1) else {
            panic!()
        };
        p.unpin(b);
        // Usage: [3, 2, 1, 1]. First lap: all decremented to [2,1,0,0];
        // second lap: 0 → 1, 1 → 0, 2 is usage 0: victim is buffer 2.
        let v = p.clock_sweep().unwrap();
        assert_eq!(p.block(v), Some(2));
        assert_eq!(p.usage(0), 1);
        assert_eq!(p.usage(1), 0);
    }

    #[test]
    fn pinned_buffers_are_skipped() {
        let mut p = filled(3);
        for blk in 0..3 {
            let _ = p.lookup(blk); // pinned, not released
        }
        assert_eq!(p.clock_sweep(), None, "all pinned: no victim");
        p.unpin(1);
        let v = p.clock_sweep().unwrap();
        assert_eq!(p.block(v), Some(1));
    }

    #[test]
    fn usage_count_caps_at_five() {
        let mut p = filled(1);
        for _ in 0..20 {
            let Lookup::Hit(b) = p.lookup(0) else {
                panic!()
            };
            p.unpin(b);
        }
        assert_eq!(p.usage(0), MAX_USAGE_COUNT);
    }

    #[test]
    fn dirty_victim_must_be_written_before_reuse() {
        let mut p = filled(1);
        let Lookup::Hit(b) = p.lookup(0) else {
            panic!()
        };
        p.mark_dirty(b, 500);
        p.unpin(b);
        let v = p.clock_sweep().unwrap();
        assert!(!p.assign(v, 7), "dirty victim taken without a write");
        assert!(p.can_write(v));
        let (blk, lsn) = p.start_write(v);
        assert_eq!((blk, lsn), (0, 500));
        p.write_done(v);
        assert!(p.assign(v, 7));
        assert_eq!(p.lookup(0), Lookup::Miss);
        assert_eq!(p.lookup(7), Lookup::ReadInProgress(v));
    }

    #[test]
    fn redirtied_during_write_stays_dirty() {
        let mut p = filled(1);
        let Lookup::Hit(b) = p.lookup(0) else {
            panic!()
        };
        p.mark_dirty(b, 1);
        p.start_write(b);
        p.mark_dirty(b, 2);
        p.write_done(b);
        assert!(p.is_dirty(b));
        assert_eq!(p.dirty_count(), 1);
    }

    #[test]
    fn checkpoint_marks_only_dirty_buffers_sorted_by_block() {
        let mut p = BufferPool::new(4);
        for blk in [40u64, 10, 30, 20] {
            let b = p.clock_sweep().unwrap();
            p.assign(b, blk);
            p.read_done(b);
            if blk != 30 {
                p.mark_dirty(b, blk);
            }
            p.unpin(b);
        }
        let list = p.mark_checkpoint();
        let blocks: Vec<u64> = list.iter().map(|x| x.0).collect();
        assert_eq!(blocks, vec![10, 20, 40]);
        for &(blk, b) in &list {
            assert!(p.checkpoint_needed(b, blk));
            p.start_write(b);
            p.write_done(b);
            assert!(!p.checkpoint_needed(b, blk));
        }
        assert_eq!(p.dirty_count(), 0);
    }

    #[test]
    fn assign_refuses_a_block_already_loaded() {
        let mut p = filled(2);
        let Lookup::Hit(b) = p.lookup(0) else {
            panic!()
        };
        p.unpin(b);
        for _ in 0..3 {
            if let Some(v) = p.clock_sweep() {
                assert!(!p.assign(v, 1), "block 1 already in the pool");
                p.unpin(v);
            }
        }
    }
}
