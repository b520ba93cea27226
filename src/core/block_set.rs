//! A set of data blocks: a bitmap over the data file's blocks, a hash set
//! for any block past it. One bit per block is 7.6 MB for a 500 GB data
//! set, and an insert is a shift and a mask instead of a hash probe (the
//! full-page-image check runs for every page change).

use rustc_hash::FxHashSet as HashSet;

#[derive(Debug, Default)]
pub struct BlockSet {
    bits: Vec<u64>,
    /// Blocks beyond the bitmap (none if the workload keeps to its blocks).
    others: HashSet<u64>,
}

impl BlockSet {
    /// Bytes the bitmap of a set over `blocks` blocks holds.
    pub fn footprint(blocks: u64) -> u64 {
        blocks.div_ceil(64) * size_of::<u64>() as u64
    }

    /// An empty set with a bitmap over blocks `0..blocks`.
    pub fn new(blocks: u64) -> Self {
        BlockSet {
            bits: vec![0; blocks.div_ceil(64) as usize],
            others: HashSet::default(),
        }
    }

    /// Add `block`: true if it was not in the set.
    #[inline]
    pub fn insert(&mut self, block: u64) -> bool {
        match self.bits.get_mut((block / 64) as usize) {
            Some(word) => {
                let bit = 1u64 << (block % 64);
                let new = *word & bit == 0;
                *word |= bit;
                new
            }
            None => self.others.insert(block),
        }
    }

    /// A hint that `block` will be inserted soon. Changes nothing observable.
    #[inline]
    pub fn prefetch(&self, block: u64) {
        if let Some(word) = self.bits.get((block / 64) as usize) {
            super::slots::prefetch(word);
        }
    }

    /// Empty the set.
    pub fn clear(&mut self) {
        self.bits.fill(0);
        self.others.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insert_reports_new_blocks_inside_and_past_the_bitmap() {
        let mut s = BlockSet::new(100);
        assert!(s.insert(0));
        assert!(!s.insert(0));
        assert!(s.insert(99));
        assert!(s.insert(1_000_000));
        assert!(!s.insert(1_000_000));
        s.clear();
        assert!(s.insert(0));
        assert!(s.insert(1_000_000));
    }
}
