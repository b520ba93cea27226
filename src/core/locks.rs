//! Row locks (heavyweight `transactionid` waits, lmgr.c / heapam.c).
//!
//! An UPDATE holds its row until the transaction's commit is durable; a
//! second updater of the same row waits. pgbench_branches has only `scale`
//! rows, so with more clients than branches transactions serialise here and
//! the wait grows with the WAL flush latency.

use std::collections::VecDeque;
use std::collections::hash_map::Entry;

use rustc_hash::FxHashMap as HashMap;

/// A row, identified by relation and key (the workload builds the id).
pub type RowId = u64;

#[derive(Debug)]
struct Row {
    holder: u32,
    waiters: VecDeque<u32>,
}

/// The lock table: one entry per locked row.
#[derive(Debug, Default)]
pub struct RowLocks {
    rows: HashMap<RowId, Row>,
}

impl RowLocks {
    /// An empty lock table.
    pub fn new() -> Self {
        Self::default()
    }

    /// `client` asks for `row`: true if granted now (or already held by it),
    /// false if it must wait for `release_all` to hand it over.
    pub fn acquire(&mut self, row: RowId, client: u32) -> bool {
        // One hash lookup per call (entry API), not a get then an insert.
        match self.rows.entry(row) {
            Entry::Vacant(v) => {
                v.insert(Row {
                    holder: client,
                    waiters: VecDeque::new(),
                });
                true
            }
            Entry::Occupied(o) if o.get().holder == client => true,
            Entry::Occupied(mut o) => {
                o.get_mut().waiters.push_back(client);
                false
            }
        }
    }

    /// `client` commits: each row it holds passes to its first waiter, in
    /// arrival order. The clients granted a row are appended to `granted`.
    pub fn release_all(&mut self, rows: &[RowId], client: u32, granted: &mut Vec<u32>) {
        for &row in rows {
            let Entry::Occupied(mut o) = self.rows.entry(row) else {
                continue;
            };
            let r = o.get_mut();
            if r.holder != client {
                continue;
            }
            match r.waiters.pop_front() {
                Some(next) => {
                    r.holder = next;
                    granted.push(next);
                }
                None => {
                    o.remove();
                }
            }
        }
    }

    /// Number of rows currently locked.
    pub fn locked_rows(&self) -> usize {
        self.rows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn second_updater_waits_until_commit_then_fifo() {
        let mut l = RowLocks::new();
        assert!(l.acquire(7, 0));
        assert!(!l.acquire(7, 1));
        assert!(!l.acquire(7, 2));
        assert!(l.acquire(8, 1));
        let mut g = Vec::new();
        l.release_all(&[7], 0, &mut g);
        assert_eq!(g, vec![1]);
        g.clear();
        l.release_all(&[7, 8], 1, &mut g);
        assert_eq!(g, vec![2]);
        g.clear();
        l.release_all(&[7], 2, &mut g);
        assert!(g.is_empty());
        assert_eq!(l.locked_rows(), 0);
    }

    #[test]
    fn reacquire_by_holder_is_granted() {
        let mut l = RowLocks::new();
        assert!(l.acquire(1, 3));
        assert!(l.acquire(1, 3));
    }
}
