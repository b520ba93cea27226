//! The autovacuum launcher (autovacuum.c): every autovacuum_naptime it
//! looks at each table's dead tuples (n_dead_tup) and, if its one worker
//! is free, hands it a vacuum of the first table past its threshold
//! (`core::vacuum::needs_vacuum`).
//!
//! It owns its nap and the cost settings it gives a worker; the tables and
//! their dead-tuple counts are shared (pgstat) and handed in. It answers
//! with the job to start, if any, and when it next wakes; the loop
//! (`wakeups`) starts the worker.

use crate::core::time::Nanos;
use crate::core::vacuum::{self as vac, CostBalance, VacuumJob};
use crate::core::workload::TableHeap;

/// The autovacuum launcher process.
#[derive(Debug, Clone, Copy)]
pub(super) struct AutovacuumLauncher {
    /// autovacuum_naptime.
    naptime: Nanos,
    /// autovacuum_vacuum_cost_limit and _delay, for the worker it starts.
    cost_limit: u32,
    cost_delay: Nanos,
}

impl AutovacuumLauncher {
    /// From autovacuum_naptime and the worker's cost limit and delay.
    pub(super) fn new(naptime: Nanos, cost_limit: u32, cost_delay: Nanos) -> Self {
        AutovacuumLauncher {
            naptime,
            cost_limit,
            cost_delay,
        }
    }

    /// Its first wake-up, one nap after `now`.
    pub(super) fn first_wake(&self, now: Nanos) -> Nanos {
        now + self.naptime
    }

    /// Its nap is over at `now`: unless the worker is busy
    /// (`worker_busy`), the vacuum of the first of `tables` past its
    /// threshold of `dead` tuples, whose count goes back to 0. Returns that
    /// job, if any, and when it wakes next.
    pub(super) fn handle_timeout(
        &self,
        now: Nanos,
        worker_busy: bool,
        tables: &[TableHeap],
        dead: &mut [u64],
    ) -> (Option<VacuumJob>, Nanos) {
        assert_eq!(tables.len(), dead.len(), "a dead-tuple count a table");
        let next = now + self.naptime;
        if worker_busy {
            return (None, next);
        }
        let Some(i) = (0..tables.len()).find(|&i| vac::needs_vacuum(dead[i], tables[i].rows))
        else {
            return (None, next);
        };
        let t = &tables[i];
        let share = vac::dirty_share(dead[i], t.pages);
        assert!((0.0..=1.0).contains(&share), "a share of pages: {share}");
        dead[i] = 0;
        let cost = CostBalance::new(self.cost_limit, self.cost_delay);
        let job = VacuumJob::new(&t.name, t.first, t.pages, share, cost);
        (Some(job), next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::{MS, SEC};

    fn tables() -> Vec<TableHeap> {
        let t = |name: &str, first, pages, rows| TableHeap {
            name: name.to_string(),
            first,
            pages,
            rows,
        };
        vec![t("a", 0, 100, 10_000), t("b", 100, 10, 1_000)]
    }

    #[test]
    fn starts_the_first_table_past_its_threshold_and_resets_its_count() {
        let l = AutovacuumLauncher::new(60 * SEC, 200, 2 * MS);
        assert_eq!(l.first_wake(0), 60 * SEC);
        let tables = tables();
        // a: 50 + 0.2 × 10,000 = 2,050 dead tuples; b: 250.
        let mut dead = vec![2_000, 251];
        let (job, next) = l.handle_timeout(60 * SEC, false, &tables, &mut dead);
        assert_eq!(next, 120 * SEC);
        assert_eq!(job.expect("b is past its threshold").table, "b");
        assert_eq!(dead, vec![2_000, 0]);
        // Nothing past a threshold now.
        assert!(
            l.handle_timeout(120 * SEC, false, &tables, &mut dead)
                .0
                .is_none()
        );
    }

    #[test]
    fn a_busy_worker_takes_no_new_job() {
        let l = AutovacuumLauncher::new(60 * SEC, 200, 2 * MS);
        let mut dead = vec![1_000_000, 0];
        let (job, _) = l.handle_timeout(60 * SEC, true, &tables(), &mut dead);
        assert!(job.is_none());
        assert_eq!(dead[0], 1_000_000, "counted on until a worker is free");
    }
}
