//! The events of a simulation ordered by (time, insertion order).
//!
//! Same order as `BinaryHeap<Reverse<(Nanos, seq, T)>>` with a unique `seq`,
//! but cheaper: popping that heap was a fifth of `model`'s instructions on a
//! cached data set (callgrind), where every statement is a timer.
//! * Most timers are "now + one of a few delays" (a round trip plus a
//!   statement's CPU burst, one delay for each kind of statement): those of
//!   one delay come due in the order they were set, so each such delay gets
//!   a FIFO lane of its own, at O(1) a push and a pop. A delay gets a lane
//!   when it recurs among the last few that had none; a lane changes hands
//!   by a clock sweep over the lanes, and its entries move to the heap.
//!   Other timers (or any that would put a lane out of order) go to a heap,
//!   which stays small.
//! * (time, seq) is one u128 and the payload is never compared; the
//!   earliest key and where it is are kept, so a peek reads one field.

use std::collections::VecDeque;

use super::min_heap::MinHeap;
use super::time::Nanos;

/// FIFO lanes: enough for the statements of a transaction's script.
const LANES: usize = 8;

/// Delays that went to the heap lately, remembered to spot one that recurs.
const RECENT: usize = 8;

/// Key of an empty lane or heap.
const NONE: u128 = u128::MAX;

/// Where the earliest key is: a lane, or the heap.
const IN_HEAP: usize = LANES;

/// The low bits of a key, below its sequence number: zero in a key; in
/// `fronts`, the lane's index, so the least front says where it is.
const WHERE: u128 = 0xf;
const SEQ_SHIFT: u32 = 4;
const _: () = assert!(IN_HEAP as u128 <= WHERE);

/// Delay of a lane nobody has.
const NO_DELAY: Nanos = Nanos::MAX;

#[derive(Debug, Clone, Copy)]
struct Entry<T> {
    /// Time in the high 64 bits, then the insertion sequence, then
    /// `SEQ_SHIFT` zero bits.
    key: u128,
    item: T,
}

// Keys are unique (the sequence is in them), so entries order by key alone.
impl<T> PartialEq for Entry<T> {
    fn eq(&self, other: &Self) -> bool {
        self.key == other.key
    }
}

impl<T> Eq for Entry<T> {}

impl<T> PartialOrd for Entry<T> {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl<T> Ord for Entry<T> {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key.cmp(&other.key)
    }
}

fn time_of(key: u128) -> Nanos {
    (key >> 64) as Nanos
}

/// Events due at a time; equal times come out in insertion order.
#[derive(Debug, Clone)]
pub struct TimerQueue<T> {
    lanes: [VecDeque<Entry<T>>; LANES],
    /// Each lane's delay (`NO_DELAY` if unused) and front key with the
    /// lane's index in its `WHERE` bits (`NONE` if empty).
    delays: [Nanos; LANES],
    fronts: [u128; LANES],
    /// Lanes pushed to since the clock hand last passed them.
    used: [bool; LANES],
    hand: usize,
    /// The lane of the last push to one: clients that a commit's flush
    /// woke together set their timers one after another with one delay.
    last_lane: usize,
    /// Delays of the last pushes that found no lane, oldest overwritten.
    recent: [Nanos; RECENT],
    recent_at: usize,
    heap: MinHeap<Entry<T>>,
    /// The earliest key queued (`NONE` if nothing is) and where it is.
    min_key: u128,
    min_at: usize,
    len: usize,
    seq: u64,
}

impl<T: Copy> Default for TimerQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T: Copy> TimerQueue<T> {
    /// An empty queue.
    pub fn new() -> Self {
        TimerQueue {
            lanes: std::array::from_fn(|_| VecDeque::new()),
            delays: [NO_DELAY; LANES],
            fronts: [NONE; LANES],
            used: [false; LANES],
            hand: 0,
            last_lane: 0,
            recent: [NO_DELAY; RECENT],
            recent_at: 0,
            heap: MinHeap::default(),
            min_key: NONE,
            min_at: IN_HEAP,
            len: 0,
            seq: 0,
        }
    }

    /// Number of events queued.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True with nothing queued.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Forget every event.
    pub fn clear(&mut self) {
        self.heap.clear();
        for l in &mut self.lanes {
            l.clear();
        }
        self.fronts = [NONE; LANES];
        self.min_key = NONE;
        self.min_at = IN_HEAP;
        self.len = 0;
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        (self.min_key != NONE).then(|| time_of(self.min_key))
    }

    /// The earliest event and its time.
    pub fn peek(&self) -> Option<(Nanos, T)> {
        if self.min_key == NONE {
            return None;
        }
        let e = if self.min_at == IN_HEAP {
            self.heap.peek()
        } else {
            self.lanes[self.min_at].front()
        }?;
        Some((time_of(e.key), e.item))
    }

    fn next_key(&mut self, at: Nanos) -> u128 {
        self.seq += 1;
        ((at as u128) << 64) | ((self.seq as u128) << SEQ_SHIFT)
    }

    /// A new entry with `key` may be the earliest.
    #[inline]
    fn note(&mut self, key: u128, at: usize) {
        self.len += 1;
        if key < self.min_key {
            self.min_key = key;
            self.min_at = at;
        }
    }

    /// Find the earliest key again after it left (or moved). Keys are
    /// unique above their `WHERE` bits, so the least of the fronts tagged
    /// with where they are is the earliest key and its place: no branch.
    #[inline]
    fn find_min(&mut self) {
        let mut k = self.heap.peek().map_or(NONE, |e| e.key | IN_HEAP as u128);
        for &f in &self.fronts {
            k = k.min(f);
        }
        if k == NONE {
            self.min_key = NONE;
            self.min_at = IN_HEAP;
        } else {
            self.min_key = k & !WHERE;
            self.min_at = (k & WHERE) as usize;
        }
    }

    /// Queue `item` at `at`.
    pub fn push(&mut self, at: Nanos, item: T) {
        let key = self.next_key(at);
        self.heap_push(Entry { key, item });
    }

    /// Queue `item` at `at`, set at time `now` (which never goes back).
    /// Same order as `push`, cheaper for timers of a few recurring delays.
    #[inline]
    pub fn push_after(&mut self, now: Nanos, at: Nanos, item: T) {
        let key = self.next_key(at);
        let entry = Entry { key, item };
        if at < now {
            self.heap_push(entry);
            return;
        }
        let delay = at - now;
        let lane = if self.delays[self.last_lane] == delay {
            self.last_lane
        } else {
            match self.delays.iter().position(|&d| d == delay) {
                Some(i) => i,
                None if self.recurs(delay) => self.give_lane(delay),
                None => {
                    self.heap_push(entry);
                    return;
                }
            }
        };
        self.last_lane = lane;
        // A lane stays sorted only if `now` never goes backwards: checked.
        if self.lanes[lane].back().is_some_and(|b| b.key > key) {
            self.heap_push(entry);
            return;
        }
        if self.lanes[lane].is_empty() {
            self.fronts[lane] = key | lane as u128;
        }
        self.lanes[lane].push_back(entry);
        self.used[lane] = true;
        self.note(key, lane);
    }

    /// Whether `delay`, which has no lane, went to the heap lately; if
    /// not, it is remembered.
    fn recurs(&mut self, delay: Nanos) -> bool {
        if self.recent.contains(&delay) {
            return true;
        }
        self.recent[self.recent_at] = delay;
        self.recent_at = (self.recent_at + 1) % RECENT;
        false
    }

    /// A lane for `delay`: the first the clock hand finds unused since it
    /// last passed; what it held moves to the heap.
    #[cold]
    fn give_lane(&mut self, delay: Nanos) -> usize {
        while self.used[self.hand] {
            self.used[self.hand] = false;
            self.hand = (self.hand + 1) % LANES;
        }
        let i = self.hand;
        self.hand = (self.hand + 1) % LANES;
        let moved = self.lanes[i].len();
        if moved > 0 {
            self.len -= moved;
            while let Some(e) = self.lanes[i].pop_front() {
                self.heap_push(e);
            }
            self.fronts[i] = NONE;
            self.find_min();
        }
        self.delays[i] = delay;
        i
    }

    /// Remove and return the earliest event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, T)> {
        if self.min_key == NONE {
            return None;
        }
        let (e, next) = if self.min_at == IN_HEAP {
            let e = self.heap_pop();
            (e, self.heap.peek().map_or(NONE, |f| f.key))
        } else {
            let lane = &mut self.lanes[self.min_at];
            let e = lane.pop_front().expect("the earliest key's lane");
            let next = lane.front().map_or(NONE, |f| f.key);
            self.fronts[self.min_at] = next | self.min_at as u128;
            (e, next)
        };
        self.len -= 1;
        if next == e.key + (1 << SEQ_SHIFT) {
            // Same time and the very next push: nothing can come between
            // (processes woken together, one timer each).
            self.min_key = next;
        } else {
            self.find_min();
        }
        Some((time_of(e.key), e.item))
    }

    fn heap_push(&mut self, e: Entry<T>) {
        self.heap.push(e);
        self.note(e.key, IN_HEAP);
    }

    fn heap_pop(&mut self) -> Entry<T> {
        self.heap.pop().expect("a non-empty heap")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest! {
        /// Pops come out exactly as from a BinaryHeap on (time, seq).
        #[test]
        fn same_order_as_binary_heap(ops in proptest::collection::vec((0u64..50, 0u8..4), 0..300)) {
            let mut q = TimerQueue::new();
            let mut h = BinaryHeap::new();
            let mut seq = 0u64;
            let mut now = 0;
            for (t, op) in ops {
                if op == 0 {
                    let p = q.pop();
                    if let Some((at, _)) = p {
                        now = at;
                    }
                    prop_assert_eq!(p, h.pop().map(|Reverse((t, _, x))| (t, x)));
                    continue;
                }
                seq += 1;
                // Mostly a few fixed delays (lanes), some arbitrary times
                // (the heap), some in the past.
                let at = match op {
                    1 => now + t % 12 * 7,
                    2 => now + t,
                    _ => t,
                };
                if op == 3 && t % 2 == 0 {
                    q.push(at, seq);
                } else {
                    q.push_after(now, at, seq);
                }
                h.push(Reverse((at, seq, seq)));
                prop_assert_eq!(q.peek_time(), h.peek().map(|Reverse((t, _, _))| *t));
                prop_assert_eq!(q.len(), h.len());
            }
            prop_assert_eq!(q.len(), h.len());
            while let Some(Reverse((t, _, x))) = h.pop() {
                prop_assert_eq!(q.pop(), Some((t, x)));
            }
            prop_assert!(q.is_empty());
        }
    }
}
