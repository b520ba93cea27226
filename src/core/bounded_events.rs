//! A list of a run's events kept bounded however long the run: past
//! [`SERIES_MAX_POINTS`] entries it keeps every other one and from then on
//! records every second event (then every fourth, ...), so it still spans
//! the whole run, as the per-second series does past the same bound.

use super::stats::SERIES_MAX_POINTS;

/// Events, at most `max` of them, evenly spaced over the run: every
/// `stride`-th one, the stride doubling each time the list is full.
#[derive(Debug, Clone)]
pub struct BoundedEvents<T> {
    items: Vec<T>,
    max: usize,
    /// Every `stride`-th event is recorded.
    stride: u64,
    /// Events offered so far.
    seen: u64,
    /// Whether the last event offered was recorded (and may be updated).
    last_kept: bool,
}

impl<T> Default for BoundedEvents<T> {
    fn default() -> Self {
        BoundedEvents::with_max(SERIES_MAX_POINTS)
    }
}

impl<T> BoundedEvents<T> {
    /// At most `max` (at least 2) events.
    pub fn with_max(max: usize) -> Self {
        BoundedEvents {
            items: Vec::new(),
            max: max.max(2),
            stride: 1,
            seen: 0,
            last_kept: false,
        }
    }

    /// Offers the next event: recorded if it falls on the stride.
    pub fn push(&mut self, x: T) {
        self.last_kept = self.seen.is_multiple_of(self.stride);
        self.seen += 1;
        if !self.last_kept {
            return;
        }
        if self.items.len() == self.max {
            // Keep events 0, 2, 4, ...: recorded every `stride`, they are
            // now every `2 * stride`, as the next ones will be.
            let mut i = 0;
            self.items.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.stride *= 2;
            self.last_kept = (self.seen - 1).is_multiple_of(self.stride);
            if !self.last_kept {
                return;
            }
        }
        self.items.push(x);
    }

    /// The last event offered, if it was recorded.
    pub fn last_mut(&mut self) -> Option<&mut T> {
        if self.last_kept {
            self.items.last_mut()
        } else {
            None
        }
    }

    /// The events recorded, in order.
    pub fn as_slice(&self) -> &[T] {
        &self.items
    }

    /// Every how many events one is recorded.
    pub fn stride(&self) -> u64 {
        self.stride
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_run_keeps_at_most_max_events_spread_over_all_of_it() {
        let mut t = BoundedEvents::with_max(8);
        for i in 0..1000u64 {
            t.push(i);
        }
        let kept = t.as_slice();
        assert!(kept.len() <= 8, "{kept:?}");
        assert_eq!(kept[0], 0);
        // Evenly spaced by the stride, up to the last stride of the run.
        assert!(
            kept.windows(2).all(|w| w[1] - w[0] == t.stride()),
            "{kept:?}"
        );
        assert!(*kept.last().unwrap() >= 1000 - t.stride(), "{kept:?}");
    }

    #[test]
    fn only_a_recorded_event_can_be_updated() {
        let mut t = BoundedEvents::with_max(2);
        t.push((0, false));
        t.push((1, false));
        t.push((2, false)); // halves to [0], stride 2: 2 is recorded
        t.last_mut().unwrap().1 = true;
        t.push((3, false)); // not on the stride
        assert!(t.last_mut().is_none());
        assert_eq!(t.as_slice(), &[(0, false), (2, true)]);
    }

    #[test]
    fn the_default_bound_is_the_series_bound() {
        let mut t = BoundedEvents::default();
        for i in 0..(SERIES_MAX_POINTS as u64 * 3) {
            t.push(i);
        }
        assert!(t.as_slice().len() <= SERIES_MAX_POINTS);
        assert_eq!(t.stride(), 4);
    }
}
