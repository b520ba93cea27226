//! A binary min-heap of small `Copy` entries, for the CPU scheduler's run
//! queue and the timer queue's heap: what `BinaryHeap<Reverse<T>>` does,
//! with a pop that walks down along the smaller child picked without a
//! branch (which child is smaller is a coin toss to the branch predictor),
//! then sifts the last entry up from the bottom (Floyd). Entries the core
//! queues never compare equal, so the order they come out in is the same
//! as any other heap's.

/// Entries, the least first out.
#[derive(Debug, Clone)]
pub struct MinHeap<T> {
    h: Vec<T>,
}

impl<T> Default for MinHeap<T> {
    fn default() -> Self {
        MinHeap { h: Vec::new() }
    }
}

impl<T: Ord + Copy> MinHeap<T> {
    /// True with nothing queued.
    pub fn is_empty(&self) -> bool {
        self.h.is_empty()
    }

    /// The least entry.
    pub fn peek(&self) -> Option<&T> {
        self.h.first()
    }

    /// Every entry, in no particular order.
    pub fn iter(&self) -> std::slice::Iter<'_, T> {
        self.h.iter()
    }

    /// Forget every entry.
    pub fn clear(&mut self) {
        self.h.clear();
    }

    /// Queue `e`.
    pub fn push(&mut self, e: T) {
        self.h.push(e);
        let h = self.h.as_mut_slice();
        let mut i = h.len() - 1;
        while i > 0 {
            let parent = (i - 1) / 2;
            if h[parent] <= e {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = e;
    }

    /// Remove and return the least entry.
    pub fn pop(&mut self) -> Option<T> {
        let last = self.h.pop()?;
        let h = self.h.as_mut_slice();
        let n = h.len();
        if n == 0 {
            return Some(last);
        }
        let top = h[0];
        let mut i = 0;
        let mut child = 1;
        while child + 1 < n {
            child += usize::from(h[child + 1] < h[child]);
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
            if h[parent] <= last {
                break;
            }
            h[i] = h[parent];
            i = parent;
        }
        h[i] = last;
        Some(top)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    proptest::proptest! {
        /// Pushes and pops in any mix come out as the standard library's
        /// heap gives them.
        #[test]
        fn pops_what_the_standard_heap_pops(
            ops in proptest::collection::vec(proptest::option::of(0u32..40), 0..400),
        ) {
            let (mut mine, mut std_heap) = (MinHeap::default(), BinaryHeap::new());
            // Unique entries, as the scheduler's are: (value, arrival).
            for (seq, op) in ops.into_iter().enumerate() {
                match op {
                    Some(v) => {
                        mine.push((v, seq));
                        std_heap.push(Reverse((v, seq)));
                    }
                    None => {
                        proptest::prop_assert_eq!(mine.pop(), std_heap.pop().map(|Reverse(e)| e));
                    }
                }
                proptest::prop_assert_eq!(mine.peek().copied(), std_heap.peek().map(|r| r.0));
                proptest::prop_assert_eq!(mine.is_empty(), std_heap.is_empty());
            }
        }
    }
}
