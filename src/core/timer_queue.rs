//! The events of a simulation ordered by (time, insertion order).
//!
//! Same order as `BinaryHeap<Reverse<(Nanos, seq, T)>>` with a unique `seq`,
//! but cheaper: popping that heap was a fifth of `model`'s instructions on a
//! cached data set (callgrind), where every statement is a timer.
//! * Most timers are "now + the same delay" (a round trip plus a CPU
//!   burst): those come due in the order they were set, so they go to a
//!   FIFO lane at O(1). The lane takes a delay once it comes up for
//!   `STREAK` heap pushes in a row (its old entries move to the heap).
//!   Other timers (or any that would put the lane out of order) go to a
//!   heap, which stays small.
//! * (time, seq) is one u128 and the payload is never compared.

use std::collections::VecDeque;

use super::time::Nanos;

/// Pushes in a row with one delay that give the lane to that delay.
const STREAK: u32 = 4;

/// Key of an empty lane or heap.
const NONE: u128 = u128::MAX;

#[derive(Debug, Clone, Copy)]
struct Entry<T> {
    /// Time in the high 64 bits, insertion sequence in the low 64 bits.
    key: u128,
    item: T,
}

fn time_of(key: u128) -> Nanos {
    (key >> 64) as Nanos
}

/// Events due at a time; equal times come out in insertion order.
#[derive(Debug, Clone)]
pub struct TimerQueue<T> {
    lane: VecDeque<Entry<T>>,
    lane_delay: Nanos,
    /// The delay of the last heap push, and how many in a row had it.
    candidate: Nanos,
    streak: u32,
    heap: Vec<Entry<T>>,
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
            lane: VecDeque::new(),
            lane_delay: Nanos::MAX,
            candidate: Nanos::MAX,
            streak: 0,
            heap: Vec::new(),
            seq: 0,
        }
    }

    /// Number of events queued.
    pub fn len(&self) -> usize {
        self.lane.len() + self.heap.len()
    }

    /// True with nothing queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Forget every event.
    pub fn clear(&mut self) {
        self.heap.clear();
        self.lane.clear();
    }

    #[inline]
    fn lane_key(&self) -> u128 {
        self.lane.front().map_or(NONE, |e| e.key)
    }

    #[inline]
    fn heap_key(&self) -> u128 {
        self.heap.first().map_or(NONE, |e| e.key)
    }

    /// Time of the earliest event.
    #[inline]
    pub fn peek_time(&self) -> Option<Nanos> {
        let k = self.lane_key().min(self.heap_key());
        (k != NONE).then(|| time_of(k))
    }

    /// The earliest event and its time.
    pub fn peek(&self) -> Option<(Nanos, T)> {
        let e = if self.lane_key() < self.heap_key() {
            self.lane.front()
        } else {
            self.heap.first()
        }?;
        Some((time_of(e.key), e.item))
    }

    fn next_key(&mut self, at: Nanos) -> u128 {
        self.seq += 1;
        ((at as u128) << 64) | self.seq as u128
    }

    /// Queue `item` at `at`.
    pub fn push(&mut self, at: Nanos, item: T) {
        let key = self.next_key(at);
        self.heap_push(Entry { key, item });
    }

    /// Queue `item` at `at`, set at time `now` (which never goes back).
    /// Same order as `push`, cheaper for timers of one recurring delay.
    #[inline]
    pub fn push_after(&mut self, now: Nanos, at: Nanos, item: T) {
        let key = self.next_key(at);
        let entry = Entry { key, item };
        if at < now {
            self.heap_push(entry);
            return;
        }
        let delay = at - now;
        // The lane stays sorted only if `now` never goes backwards: checked.
        if delay == self.lane_delay && self.lane.back().is_none_or(|b| b.key < key) {
            self.lane.push_back(entry);
            return;
        }
        if delay == self.candidate {
            self.streak += 1;
        } else {
            self.candidate = delay;
            self.streak = 1;
        }
        if self.streak >= STREAK && delay != self.lane_delay {
            while let Some(e) = self.lane.pop_front() {
                self.heap_push(e);
            }
            self.lane_delay = delay;
            self.streak = 0;
            self.lane.push_back(entry);
            return;
        }
        self.heap_push(entry);
    }

    /// Remove and return the earliest event with its time.
    #[inline]
    pub fn pop(&mut self) -> Option<(Nanos, T)> {
        let e = if self.lane_key() < self.heap_key() {
            self.lane.pop_front()
        } else if self.heap.is_empty() {
            None
        } else {
            Some(self.heap_pop())
        }?;
        Some((time_of(e.key), e.item))
    }

    fn heap_push(&mut self, e: Entry<T>) {
        let h = &mut self.heap;
        h.push(e);
        // Sift up with a hole: parents move down until the slot is found.
        let mut i = h.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent].key <= e.key {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    fn heap_pop(&mut self) -> Entry<T> {
        let h = &mut self.heap;
        let last = h.pop().expect("a non-empty heap");
        if h.is_empty() {
            return last;
        }
        let top = h[0];
        // Floyd's bottom-up pop: walk the hole down along the smaller child
        // to a leaf (one comparison a level), then sift `last` up from there;
        // `last` came from the bottom, so it rarely climbs far.
        let n = h.len();
        let mut i = 0;
        let mut child = 1;
        while child + 1 < n {
            if h[child + 1].key < h[child].key {
                child += 1;
            }
            h[i] = h[child];
            i = child;
            child = 2 * i + 1;
        }
        if child < n {
            h[i] = h[child];
            i = child;
        }
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent].key <= last.key {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = last;
        top
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
                    1 => now + t % 3 * 7,
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
