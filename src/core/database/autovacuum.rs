//! The autovacuum launcher (autovacuum.c): every autovacuum_naptime, if
//! its one worker is free, it starts it on the database. The worker
//! (do_autovacuum) lists every table past its threshold
//! (`relation_needs_vacanalyze`, `core::vacuum::needs_vacuum`) and vacuums
//! each in turn, rechecking each before it starts
//! (`table_recheck_autovac`): a small table that passes its threshold
//! every minute does not keep the others waiting.
//!
//! It owns its nap and the cost settings it gives a worker; the tables and
//! their dead-tuple counts are shared (pgstat) and handed in. It answers
//! with the job to start, if any, and when it next wakes; the loop
//! (`wakeups`) starts the worker.

use crate::core::time::Nanos;
use crate::core::vacuum::{self as vac, CostBalance, VacuumJob};
use crate::core::workload::TableHeap;

/// The autovacuum launcher process, and its worker's list of tables.
#[derive(Debug, Clone)]
pub(super) struct AutovacuumLauncher {
    /// autovacuum_naptime.
    naptime: Nanos,
    /// autovacuum_vacuum_cost_limit and _delay, for the worker it starts.
    cost_limit: u32,
    cost_delay: Nanos,
    /// The tables the worker listed as past their thresholds and has not
    /// reached yet, in its order.
    todo: Vec<usize>,
}

impl AutovacuumLauncher {
    /// From autovacuum_naptime and the worker's cost limit and delay.
    pub(super) fn new(naptime: Nanos, cost_limit: u32, cost_delay: Nanos) -> Self {
        AutovacuumLauncher {
            naptime,
            cost_limit,
            cost_delay,
            todo: Vec::new(),
        }
    }

    /// Its first wake-up, one nap after `now`.
    pub(super) fn first_wake(&self, now: Nanos) -> Nanos {
        now + self.naptime
    }

    /// Its nap is over at `now`: unless the worker is busy
    /// (`worker_busy`), the worker starts, lists every one of `tables`
    /// past its threshold of `dead` tuples and vacuums the first (whose
    /// count goes back to 0). Returns that job, if any, and when it wakes
    /// next.
    pub(super) fn handle_timeout(
        &mut self,
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
        self.todo = (0..tables.len())
            .filter(|&i| vac::needs_vacuum(dead[i], tables[i].rows))
            .collect();
        (self.next_job(tables, dead), next)
    }

    /// The worker finished a table: the next on its list still past its
    /// threshold, if any (its count goes back to 0).
    pub(super) fn handle_worker_done(
        &mut self,
        tables: &[TableHeap],
        dead: &mut [u64],
    ) -> Option<VacuumJob> {
        self.next_job(tables, dead)
    }

    fn next_job(&mut self, tables: &[TableHeap], dead: &mut [u64]) -> Option<VacuumJob> {
        while !self.todo.is_empty() {
            let i = self.todo.remove(0);
            if !vac::needs_vacuum(dead[i], tables[i].rows) {
                continue;
            }
            let t = &tables[i];
            let share = vac::dirty_share(dead[i], t.pages);
            assert!((0.0..=1.0).contains(&share), "a share of pages: {share}");
            dead[i] = 0;
            let cost = CostBalance::new(self.cost_limit, self.cost_delay);
            return Some(VacuumJob::new(&t.name, t.first, t.pages, share, cost));
        }
        None
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
        let mut l = AutovacuumLauncher::new(60 * SEC, 200, 2 * MS);
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
        let mut l = AutovacuumLauncher::new(60 * SEC, 200, 2 * MS);
        let mut dead = vec![1_000_000, 0];
        let (job, _) = l.handle_timeout(60 * SEC, true, &tables(), &mut dead);
        assert!(job.is_none());
        assert_eq!(dead[0], 1_000_000, "counted on until a worker is free");
    }

    #[test]
    fn the_worker_vacuums_every_table_on_its_list_in_turn_rechecking_each() {
        // Both past their thresholds: a first, then b once a is done,
        // however often a passes its threshold again meanwhile; a table
        // no longer past it when its turn comes is skipped.
        let mut l = AutovacuumLauncher::new(60 * SEC, 200, 2 * MS);
        let tables = tables();
        let mut dead = vec![3_000, 300];
        let (job, _) = l.handle_timeout(60 * SEC, false, &tables, &mut dead);
        assert_eq!(job.expect("a first").table, "a");
        dead[0] = 5_000;
        let job = l.handle_worker_done(&tables, &mut dead);
        assert_eq!(job.expect("then b").table, "b");
        assert_eq!(dead, vec![5_000, 0]);
        assert!(l.handle_worker_done(&tables, &mut dead).is_none());
        let (job, _) = l.handle_timeout(120 * SEC, false, &tables, &mut dead);
        assert_eq!(job.expect("a at the next nap").table, "a");
        dead[1] = 300;
        let mut l2 = l.clone();
        l2.todo = vec![1];
        dead[1] = 10;
        assert!(
            l2.handle_worker_done(&tables, &mut dead).is_none(),
            "rechecked"
        );
    }
}
