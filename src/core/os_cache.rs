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
//! Which pages are dirty, and their writeback, is
//! [`super::kernel_flusher`]'s: a dirty page this LRU drops stays dirty
//! there until written back. Left out: readahead, and the kernel's own
//! memory.

use super::slots;

/// No node (31 bits: the top bit of a link carries a flag).
const NIL: u32 = 0x7fff_ffff;
const LINK: u32 = 0x7fff_ffff;
const FLAG: u32 = 0x8000_0000;

/// No key: an empty slot.
const EMPTY: u32 = u32::MAX;

/// Key space of WAL pages: the top bit set, then the segment's place in
/// the ring and the page. Data blocks are keys below it.
const WAL_KEY: u32 = 1 << 31;

/// WAL pages per segment (16 MiB of 8 KiB pages).
const WAL_PAGES_PER_SEGMENT: u32 = 2048;

/// A cached page: 12 bytes. The node lives in its hash slot, so a lookup
/// reads one cache line and no separate index is kept.
#[derive(Debug, Clone, Copy)]
struct Node {
    key: u32,
    /// Previous (newer) node in its list; top bit: on the active list.
    prev: u32,
    /// Next (older) node in its list; top bit: referenced.
    next: u32,
}

impl Node {
    const EMPTY: Node = Node {
        key: EMPTY,
        prev: NIL,
        next: NIL,
    };

    fn prev(&self) -> u32 {
        self.prev & LINK
    }

    fn next(&self) -> u32 {
        self.next & LINK
    }

    fn active(&self) -> bool {
        self.prev & FLAG != 0
    }

    fn referenced(&self) -> bool {
        self.next & FLAG != 0
    }

    fn set_prev(&mut self, i: u32) {
        self.prev = (self.prev & FLAG) | i;
    }

    fn set_next(&mut self, i: u32) {
        self.next = (self.next & FLAG) | i;
    }

    fn set_referenced(&mut self) {
        self.next |= FLAG;
    }
}

/// A doubly linked list over the slots: head is the most recent.
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

/// Slots per cached page, in quarters: at most four fifths of the slots
/// are used, so 15 bytes a page.
const SLOT_QUARTERS_PER_PAGE: usize = 5;

/// The kernel page cache: an inactive and an active list of page keys,
/// threaded through an open-addressing hash table (linear probing,
/// backward-shift deletion: no tombstones, so it never grows).
#[derive(Debug)]
pub struct OsCache {
    capacity: usize,
    len: usize,
    slots: Vec<Node>,
    inactive: List,
    active: List,
}

impl OsCache {
    /// A cache of `pages` pages (0 disables it).
    pub fn new(pages: usize) -> Self {
        assert!(
            pages < (NIL as usize) * 4 / SLOT_QUARTERS_PER_PAGE,
            "a page cache of {pages} pages: at most {} are modelled",
            (NIL as usize) * 4 / SLOT_QUARTERS_PER_PAGE - 1
        );
        let slots = if pages == 0 {
            Vec::new()
        } else {
            vec![Node::EMPTY; (pages * SLOT_QUARTERS_PER_PAGE).div_ceil(4) + 1]
        };
        OsCache {
            capacity: pages,
            len: 0,
            slots,
            inactive: List::EMPTY,
            active: List::EMPTY,
        }
    }

    /// Bytes a cache of `pages` pages holds.
    pub fn footprint(pages: u64) -> u64 {
        if pages == 0 {
            return 0;
        }
        ((pages * SLOT_QUARTERS_PER_PAGE as u64).div_ceil(4) + 1) * size_of::<Node>() as u64
    }

    /// Whether the cache is enabled.
    pub fn enabled(&self) -> bool {
        self.capacity > 0
    }

    /// Whether the cache is enabled and full: a page brought in now
    /// evicts another.
    pub fn is_full(&self) -> bool {
        self.capacity > 0 && self.len >= self.capacity
    }

    /// Pages held.
    pub fn held(&self) -> usize {
        self.len
    }

    /// A read of data block `block`: true if cached (no I/O needed). A miss
    /// brings the block in.
    pub fn read(&mut self, block: u64) -> bool {
        self.access(data_key(block))
    }

    /// Whether data block `block` is cached (nothing moves).
    pub fn contains(&self, block: u64) -> bool {
        self.capacity > 0 && self.probe(data_key(block)).1
    }

    /// A write of data block `block` leaves it cached.
    pub fn write(&mut self, block: u64) {
        self.written(data_key(block));
    }

    /// Writes of data blocks `first..first + n` in turn, as `write` of
    /// each. Their slots are scattered over the table, so each is fetched
    /// some blocks ahead: a page cache warmed after a load is millions of
    /// these. Changes nothing observable beyond the writes.
    pub fn write_run(&mut self, first: u64, n: u64) {
        const AHEAD: u64 = 16;
        for b in first..first + n {
            if b + AHEAD < first + n {
                self.prefetch(b + AHEAD);
            }
            self.write(b);
        }
    }

    /// A write of WAL page `page` of segment `segment` leaves it cached.
    pub fn write_wal(&mut self, segment: u32, page: u64) {
        self.written(wal_key(segment, page));
    }

    /// A hint that WAL page `page` of segment `segment` will be written
    /// soon. Changes nothing observable.
    #[inline]
    pub fn prefetch_wal(&self, segment: u32, page: u64) {
        if !self.slots.is_empty() {
            slots::prefetch(&self.slots[self.home(wal_key(segment, page))]);
        }
    }

    /// A hint that data block `block` may be read soon. Changes nothing
    /// observable.
    #[inline]
    pub fn prefetch(&self, block: u64) {
        if !self.slots.is_empty() {
            slots::prefetch(&self.slots[self.home(data_key(block))]);
        }
    }

    /// A write puts a page in the cache if it is not there; it does not
    /// move a cached one.
    fn written(&mut self, key: u32) {
        if self.capacity > 0 && !self.probe(key).1 {
            self.insert(key, false);
        }
    }

    /// Pages cached now, (inactive, active).
    #[cfg(test)]
    fn lists(&self) -> (usize, usize) {
        (self.inactive.len, self.active.len)
    }

    #[inline]
    fn home(&self, key: u32) -> usize {
        slots::home(key, self.slots.len())
    }

    #[inline]
    fn wrap(&self, i: usize) -> usize {
        slots::next(i, self.slots.len())
    }

    /// The slot holding `key`, or the empty slot ending its probe sequence.
    #[inline]
    fn probe(&self, key: u32) -> (u32, bool) {
        let mut i = self.home(key);
        loop {
            let k = self.slots[i].key;
            if k == key {
                return (i as u32, true);
            }
            if k == EMPTY {
                return (i as u32, false);
            }
            i = self.wrap(i);
        }
    }

    /// Touch page `key`: true if it was cached.
    fn access(&mut self, key: u32) -> bool {
        if self.capacity == 0 {
            return false;
        }
        match self.probe(key) {
            (i, true) => {
                let n = self.slots[i as usize];
                if n.active() || !n.referenced() {
                    self.slots[i as usize].set_referenced();
                } else {
                    self.unlink(i);
                    self.push_head(i, true, false);
                }
                true
            }
            (_, false) => {
                self.insert(key, true);
                false
            }
        }
    }

    /// Caches page `key`, not cached, at the inactive head.
    fn insert(&mut self, key: u32, referenced: bool) {
        if self.len == self.capacity {
            self.evict();
        } else {
            self.len += 1;
        }
        // Eviction may have moved slots: probe again.
        let (i, found) = self.probe(key);
        debug_assert!(!found);
        self.slots[i as usize].key = key;
        self.push_head(i, false, referenced);
    }

    /// Drops the inactive tail. Reclaim first moves the active list's
    /// excess to the inactive one (`shrink_active_list`), so a full cache
    /// always has an inactive tail.
    fn evict(&mut self) {
        self.balance();
        let i = self.inactive.tail;
        debug_assert!(i != NIL, "a full cache with nothing inactive");
        self.unlink(i);
        self.remove_slot(i as usize);
        self.prefetch_before_tail(false);
    }

    /// Pages leave a list's tail in turn, each touching the node before
    /// it: fetch that node one eviction ahead. Changes nothing observable.
    fn prefetch_before_tail(&self, active: bool) {
        let tail = if active {
            self.active.tail
        } else {
            self.inactive.tail
        };
        if tail != NIL {
            let before = self.slots[tail as usize].prev();
            if before != NIL {
                slots::prefetch(&self.slots[before as usize]);
            }
        }
    }

    /// Empties slot `hole` (unlinked), shifting later entries of its probe
    /// run back; a moved node's neighbours and list ends follow it.
    fn remove_slot(&mut self, mut hole: usize) {
        let mut j = hole;
        loop {
            j = self.wrap(j);
            let n = self.slots[j];
            if n.key == EMPTY {
                break;
            }
            if !slots::stays(hole, j, self.home(n.key)) {
                self.slots[hole] = n;
                self.relink(n, hole as u32);
                hole = j;
            }
        }
        self.slots[hole] = Node::EMPTY;
    }

    /// Node `n` now lives in slot `to`: point its neighbours there.
    fn relink(&mut self, n: Node, to: u32) {
        let (prev, next) = (n.prev(), n.next());
        let list = if n.active() {
            &mut self.active
        } else {
            &mut self.inactive
        };
        if prev == NIL {
            list.head = to;
        }
        if next == NIL {
            list.tail = to;
        }
        if prev != NIL {
            self.slots[prev as usize].set_next(to);
        }
        if next != NIL {
            self.slots[next as usize].set_prev(to);
        }
    }

    /// Keeps the active list no longer than the inactive one.
    fn balance(&mut self) {
        while self.active.len > self.inactive.len {
            let i = self.active.tail;
            self.unlink(i);
            self.push_head(i, false, false);
            self.prefetch_before_tail(true);
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
        let n = &mut self.slots[i as usize];
        n.prev = NIL | if active { FLAG } else { 0 };
        n.next = list.head | if referenced { FLAG } else { 0 };
        if list.head != NIL {
            self.slots[list.head as usize].set_prev(i);
        }
        let l = self.list(active);
        l.head = i;
        if l.tail == NIL {
            l.tail = i;
        }
        l.len += 1;
    }

    fn unlink(&mut self, i: u32) {
        let n = self.slots[i as usize];
        let (prev, next) = (n.prev(), n.next());
        if prev != NIL {
            self.slots[prev as usize].set_next(next);
        }
        if next != NIL {
            self.slots[next as usize].set_prev(prev);
        }
        let l = self.list(n.active());
        if l.head == i {
            l.head = next;
        }
        if l.tail == i {
            l.tail = prev;
        }
        l.len -= 1;
    }
}

/// The key of WAL page `page` of segment `segment`.
fn wal_key(segment: u32, page: u64) -> u32 {
    debug_assert!(page < WAL_PAGES_PER_SEGMENT as u64);
    let key = segment
        .checked_mul(WAL_PAGES_PER_SEGMENT)
        .and_then(|k| k.checked_add(page as u32))
        .filter(|&k| k < WAL_KEY)
        .expect("a WAL segment ring the page cache can key");
    WAL_KEY | key
}

/// The key of data block `block`.
fn data_key(block: u64) -> u32 {
    assert!(
        block < WAL_KEY as u64,
        "data block {block} past what the page cache model keys"
    );
    block as u32
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
    fn a_run_of_writes_is_the_writes_one_by_one() {
        let (mut run, mut each) = (OsCache::new(100), OsCache::new(100));
        for c in [&mut run, &mut each] {
            for b in [3, 500, 7] {
                c.read(b);
            }
        }
        run.write_run(0, 150);
        for b in 0..150 {
            each.write(b);
        }
        assert_eq!(run.lists(), each.lists());
        for b in 0..600 {
            assert_eq!(run.read(b), each.read(b), "block {b}");
        }
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
            assert_eq!(i + a, c.len);
            assert!(c.len <= 16);
            assert_eq!(c.slots.iter().filter(|n| n.key != EMPTY).count(), c.len);
        }
    }
}

#[cfg(test)]
mod reference {
    //! The two lists kept the plain way, as the behaviour to match.
    use super::OsCache;
    use proptest::prelude::*;

    #[derive(Default)]
    struct Plain {
        capacity: usize,
        /// (key, referenced), most recent first.
        inactive: Vec<(u64, bool)>,
        active: Vec<(u64, bool)>,
    }

    impl Plain {
        fn find(&self, key: u64) -> Option<(bool, usize)> {
            if let Some(i) = self.active.iter().position(|e| e.0 == key) {
                return Some((true, i));
            }
            self.inactive
                .iter()
                .position(|e| e.0 == key)
                .map(|i| (false, i))
        }

        fn insert(&mut self, key: u64, referenced: bool) {
            if self.active.len() + self.inactive.len() == self.capacity {
                while self.active.len() > self.inactive.len() {
                    let (k, _) = self.active.pop().unwrap();
                    self.inactive.insert(0, (k, false));
                }
                self.inactive.pop();
            }
            self.inactive.insert(0, (key, referenced));
        }

        fn read(&mut self, key: u64) -> bool {
            match self.find(key) {
                Some((true, i)) => {
                    self.active[i].1 = true;
                    true
                }
                Some((false, i)) if self.inactive[i].1 => {
                    self.inactive.remove(i);
                    self.active.insert(0, (key, false));
                    true
                }
                Some((false, i)) => {
                    self.inactive[i].1 = true;
                    true
                }
                None => {
                    self.insert(key, true);
                    false
                }
            }
        }

        fn write(&mut self, key: u64) {
            if self.find(key).is_none() {
                self.insert(key, false);
            }
        }
    }

    proptest! {
        /// Hits, and the pages held in each list in order, match the plain
        /// lists after any sequence of reads and writes, with the table's
        /// probe runs wrapping around and shifting.
        #[test]
        fn same_hits_and_lists_as_plain_lists(
            capacity in 1usize..24,
            ops in proptest::collection::vec((0u64..60, 0u8..3), 0..400),
        ) {
            let mut c = OsCache::new(capacity);
            let mut p = Plain { capacity, ..Plain::default() };
            for (key, op) in ops {
                match op {
                    0 | 1 => prop_assert_eq!(c.read(key), p.read(key)),
                    _ => {
                        c.write(key);
                        p.write(key);
                    }
                }
                for (list, plain) in [(c.inactive, &p.inactive), (c.active, &p.active)] {
                    let mut keys = Vec::new();
                    let mut i = list.head;
                    while i != super::NIL {
                        let n = c.slots[i as usize];
                        keys.push((n.key as u64, n.referenced()));
                        i = n.next();
                    }
                    prop_assert_eq!(&keys, plain);
                    prop_assert_eq!(list.len, plain.len());
                }
            }
        }
    }
}
