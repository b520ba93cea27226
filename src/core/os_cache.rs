//! A model of the kernel page cache in front of the data files and the WAL
//! (`--os-cache`).
//!
//! With O_DIRECT the disk sees every buffer-pool miss; real PostgreSQL reads
//! and writes through the kernel cache. This cache of page keys stands in
//! for it: a modelled hit costs no I/O. Memory is per cached page, bounded
//! by the cache size, never per data page.
//!
//! It keeps Linux's two lists (mm/vmscan.c, mm/swap.c) because which pages
//! survive decides the hit ratio PostgreSQL sees:
//!
//! * A page read for the first time joins the head of the *inactive* list,
//!   marked referenced (`filemap_read` marks what it copies out). Read
//!   again while inactive and referenced, it moves to the head of the
//!   *active* list (`folio_mark_accessed`).
//! * A write does not mark a page accessed (`__filemap_get_folio` with
//!   `FGP_WRITE` only clears its idle flag): a cached page stays where it
//!   is, a new one joins the inactive head unreferenced.
//! * The cache evicts from the tail of the inactive list, referenced or not
//!   (an unmapped page-cache page gets no second chance there).
//! * The active list may not outgrow the inactive one (the inactive:active
//!   target is 1:1 below 1 GiB, `inactive_is_low`): its tail moves back to
//!   the inactive head, unreferenced.
//!
//! WAL passes through the same cache: PostgreSQL writes it with `write()`
//! and the pages stay until evicted, so a commit-heavy workload leaves less
//! of the cache to data pages.
//!
//! Left out: dirty pages are evicted as if clean (the kernel writes them back
//! first), readahead, and the kernel's own memory.

use rustc_hash::FxHashMap as HashMap;

/// No node.
const NIL: u32 = u32::MAX;

/// Key space of WAL pages: the top bit set, then the segment, then the page.
const WAL_KEY: u64 = 1 << 63;

#[derive(Debug, Clone, Copy)]
struct Node {
    key: u64,
    prev: u32,
    next: u32,
    active: bool,
    referenced: bool,
}

/// A doubly linked list over the node arena: head is the most recent.
#[derive(Debug, Clone, Copy)]
struct List {
    head: u32,
    tail: u32,
    len: usize,
}

impl List {
    const EMPTY: List = List {
        head: NIL,
        tail: NIL,
        len: 0,
    };
}

/// The kernel page cache: an inactive and an active list of page keys.
#[derive(Debug)]
pub struct OsCache {
    capacity: usize,
    nodes: Vec<Node>,
    index: HashMap<u64, u32>,
    inactive: List,
    active: List,
}

impl OsCache {
    /// A cache of `pages` pages (0 disables it).
    pub fn new(pages: usize) -> Self {
        OsCache {
            capacity: pages,
            nodes: Vec::new(),
            index: HashMap::default(),
            inactive: List::EMPTY,
            active: List::EMPTY,
        }
    }

    /// Whether the cache is enabled.
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// A read of data block `block`: true if cached (no I/O needed). A miss
    /// brings the block in.
    pub fn read(&mut self, block: u64) -> bool {
        self.access(block & !WAL_KEY)
    }

    /// A write of data block `block` leaves it cached.
    pub fn write(&mut self, block: u64) {
        self.written(block & !WAL_KEY);
    }

    /// A write of WAL page `page` of segment `segment` leaves it cached.
    pub fn write_wal(&mut self, segment: u32, page: u64) {
        self.written(WAL_KEY | (segment as u64) << 32 | (page & 0xffff_ffff));
    }

    /// A write puts a page in the cache if it is not there; it does not
    /// move a cached one.
    fn written(&mut self, key: u64) {
        if self.capacity > 0 && !self.index.contains_key(&key) {
            self.insert(key, false);
        }
    }

    /// Pages cached now, (inactive, active).
    #[cfg(test)]
    fn lists(&self) -> (usize, usize) {
        (self.inactive.len, self.active.len)
    }

    /// Touch page `key`: true if it was cached.
    fn access(&mut self, key: u64) -> bool {
        if self.capacity == 0 {
            return false;
        }
        match self.index.get(&key) {
            Some(&i) => {
                let n = self.nodes[i as usize];
                if n.active {
                    self.nodes[i as usize].referenced = true;
                } else if n.referenced {
                    self.unlink(i);
                    self.push_head(i, true, false);
                } else {
                    self.nodes[i as usize].referenced = true;
                }
                true
            }
            None => {
                self.insert(key, true);
                false
            }
        }
    }

    /// Caches page `key`, not cached, at the inactive head.
    fn insert(&mut self, key: u64, referenced: bool) {
        let i = if self.index.len() < self.capacity {
            self.nodes.push(Node {
                key,
                prev: NIL,
                next: NIL,
                active: false,
                referenced: false,
            });
            (self.nodes.len() - 1) as u32
        } else {
            let victim = self.evict();
            self.nodes[victim as usize].key = key;
            victim
        };
        self.index.insert(key, i);
        self.push_head(i, false, referenced);
    }

    /// Frees the inactive tail and returns its node. Reclaim first moves
    /// the active list's excess to the inactive one (`shrink_active_list`),
    /// so a full cache always has an inactive tail.
    fn evict(&mut self) -> u32 {
        self.balance();
        let i = self.inactive.tail;
        debug_assert!(i != NIL, "a full cache with nothing inactive");
        self.unlink(i);
        self.index.remove(&self.nodes[i as usize].key);
        i
    }

    /// Keeps the active list no longer than the inactive one.
    fn balance(&mut self) {
        while self.active.len > self.inactive.len {
            let i = self.active.tail;
            self.unlink(i);
            self.push_head(i, false, false);
        }
    }

    fn list(&mut self, active: bool) -> &mut List {
        if active {
            &mut self.active
        } else {
            &mut self.inactive
        }
    }

    fn push_head(&mut self, i: u32, active: bool, referenced: bool) {
        let list = *self.list(active);
        let n = &mut self.nodes[i as usize];
        n.active = active;
        n.referenced = referenced;
        n.prev = NIL;
        n.next = list.head;
        if list.head != NIL {
            self.nodes[list.head as usize].prev = i;
        }
        let l = self.list(active);
        l.head = i;
        if l.tail == NIL {
            l.tail = i;
        }
        l.len += 1;
    }

    fn unlink(&mut self, i: u32) {
        let Node {
            prev, next, active, ..
        } = self.nodes[i as usize];
        if prev != NIL {
            self.nodes[prev as usize].next = next;
        }
        if next != NIL {
            self.nodes[next as usize].prev = prev;
        }
        let l = self.list(active);
        if l.head == i {
            l.head = next;
        }
        if l.tail == i {
            l.tail = prev;
        }
        l.len -= 1;
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
    fn a_page_touched_twice_outlives_pages_touched_once() {
        let mut c = OsCache::new(4);
        assert!(!c.read(1));
        assert!(c.read(1)); // read again: active
        assert_eq!(c.lists(), (0, 1));
        for b in 2..=10 {
            assert!(!c.read(b));
        }
        // Four pages fit; the active one stayed, the oldest read-once went.
        assert!(c.read(1));
        assert!(c.read(10));
        assert!(!c.read(2));
    }

    #[test]
    fn reclaim_keeps_the_active_list_no_longer_than_the_inactive_one() {
        let mut c = OsCache::new(8);
        for b in 0..8 {
            c.read(b);
            c.read(b);
        }
        // Nothing was reclaimed yet: all active.
        assert_eq!(c.lists(), (0, 8));
        c.read(100);
        // Reclaim moved the four oldest back and evicted the oldest of them.
        assert_eq!(c.lists(), (4, 4));
        assert!(c.read(7));
        assert!(c.read(3));
        assert!(!c.read(0));
    }

    #[test]
    fn a_write_neither_activates_nor_moves_a_cached_page() {
        let mut c = OsCache::new(3);
        c.read(1);
        c.write(1);
        assert_eq!(c.lists(), (1, 0));
        c.read(2);
        c.read(3);
        c.write(1); // still the oldest: the next miss evicts it
        c.read(4);
        assert!(c.read(2) && c.read(3) && c.read(4));
        assert!(!c.read(1));
    }

    #[test]
    fn wal_pages_take_room_from_data_pages() {
        let mut c = OsCache::new(4);
        for b in 0..4 {
            c.read(b);
        }
        for p in 0..4 {
            c.write_wal(7, p);
        }
        assert!((0..4).all(|b| !c.read(b)));
        // The same numbers as data blocks and as WAL pages are different pages.
        let mut c = OsCache::new(4);
        c.write_wal(0, 3);
        assert!(!c.read(3));
    }

    #[test]
    fn never_holds_more_than_its_capacity_and_stays_consistent() {
        let mut c = OsCache::new(16);
        let mut x: u64 = 1;
        for _ in 0..10_000 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            let b = (x >> 33) % 40;
            match x % 3 {
                0 => {
                    c.read(b);
                }
                1 => c.write(b),
                _ => c.write_wal(1, b),
            }
            let (i, a) = c.lists();
            assert_eq!(i + a, c.index.len());
            assert!(c.index.len() <= 16);
        }
    }
}
