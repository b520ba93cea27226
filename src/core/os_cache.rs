//! A model of the kernel page cache in front of the data file (`--os-cache`).
//!
//! With O_DIRECT the disk sees every buffer-pool miss; real PostgreSQL reads
//! through the kernel cache. This CLOCK cache of block numbers stands in for
//! it: a modelled hit costs no I/O. Memory is per cached page, bounded by the
//! cache size, never per data page.

use rustc_hash::FxHashMap as HashMap;

/// CLOCK cache of data blocks.
#[derive(Debug)]
pub struct OsCache {
    capacity: usize,
    slots: Vec<(u64, bool)>,
    index: HashMap<u64, usize>,
    hand: usize,
}

impl OsCache {
    /// A cache of `pages` pages (0 disables it).
    pub fn new(pages: usize) -> Self {
        OsCache {
            capacity: pages,
            slots: Vec::new(),
            index: HashMap::default(),
            hand: 0,
        }
    }

    /// Whether the cache is enabled.
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// A read of `block`: true if cached (no I/O needed). A miss brings the
    /// block in, evicting with the clock.
    pub fn read(&mut self, block: u64) -> bool {
        if self.capacity == 0 {
            return false;
        }
        if let Some(&i) = self.index.get(&block) {
            self.slots[i].1 = true;
            return true;
        }
        self.insert(block);
        false
    }

    /// A write of `block` leaves it cached.
    pub fn write(&mut self, block: u64) {
        if self.capacity == 0 {
            return;
        }
        match self.index.get(&block) {
            Some(&i) => self.slots[i].1 = true,
            None => self.insert(block),
        }
    }

    fn insert(&mut self, block: u64) {
        if self.slots.len() < self.capacity {
            self.index.insert(block, self.slots.len());
            self.slots.push((block, true));
            return;
        }
        loop {
            let (b, referenced) = self.slots[self.hand];
            if referenced {
                self.slots[self.hand].1 = false;
                self.hand = (self.hand + 1) % self.capacity;
            } else {
                self.index.remove(&b);
                self.index.insert(block, self.hand);
                self.slots[self.hand] = (block, true);
                self.hand = (self.hand + 1) % self.capacity;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disabled_never_hits() {
        let mut c = OsCache::new(0);
        assert!(!c.read(1));
        assert!(!c.read(1));
    }

    #[test]
    fn hits_within_capacity_and_evicts_unreferenced() {
        let mut c = OsCache::new(2);
        assert!(!c.read(1));
        assert!(!c.read(2));
        assert!(c.read(1));
        assert!(!c.read(3)); // evicts one of them
        let hits = [c.read(1), c.read(2)].iter().filter(|h| **h).count();
        assert!(hits <= 1 + 1);
        c.write(9);
        assert!(c.read(9));
    }
}
