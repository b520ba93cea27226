//! When the instance's caches first filled: the events that end a run's
//! warm-up, in the names a DBA gives them.

use super::Database;
use crate::core::time::Nanos;

impl Database {
    /// Note, at `now`, the caches that have filled since the last call.
    /// The driver calls this once a simulated (or real) second; the times
    /// name a warm-up's end in the steady-state analysis.
    pub fn note_milestones(&mut self, now: Nanos) {
        let m = &mut self.stats.milestones;
        if m.shared_buffers_full.is_none() && self.pool.is_full() {
            m.shared_buffers_full = Some(now);
        }
        if m.os_cache_full.is_none() && self.os_cache.is_full() {
            m.os_cache_full = Some(now);
        }
        let used = self.pool.used();
        if used > m.shared_buffers_used {
            m.shared_buffers_used = used;
            m.shared_buffers_grew = Some(now);
        }
        let held = self.os_cache.held();
        if held > m.os_cache_used {
            m.os_cache_used = held;
            m.os_cache_grew = Some(now);
        }
    }
}
