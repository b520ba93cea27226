//! Workloads: what a transaction does, as page accesses, row locks, WAL
//! records and CPU. The core executes the steps; the workload only decides
//! them, so the same workload runs against a real disk and a model. The
//! interface between them, [`Workload`], is the core's
//! ([`crate::core::workload`]); this module implements it.
//!
//! Every workload, the built-in ones included, is a file in `workloads/`
//! in one schema (`spec.rs`); the built-ins are embedded in the binary.

pub mod cpu_fit;
pub mod distribution;
pub mod layout;
pub mod load;
pub mod replay;
pub mod script;
pub mod server_cpu;
pub mod spec;

// The interface these workloads implement is the core's: it consumes it.
pub use crate::core::workload::{Step, TableHeap, Workload};
pub use load::{load_spec, parse_mix};
pub use script::Script;
pub use spec::WorkloadSpec;

/// pgbench's query protocol (`-M`), which changes what a statement costs
/// the server: its parse and plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum QueryMode {
    /// One Query message with the statement's text: parsed and planned
    /// every time.
    #[default]
    Simple,
    /// Parse, Bind, Execute with an unnamed statement: parsed and planned
    /// every time, in more messages.
    Extended,
    /// A named statement prepared once per connection: the plan is reused.
    Prepared,
}

impl QueryMode {
    /// pgbench's name for it.
    pub fn name(self) -> &'static str {
        match self {
            QueryMode::Simple => "simple",
            QueryMode::Extended => "extended",
            QueryMode::Prepared => "prepared",
        }
    }
}

/// The built-in workloads, by pgbench's names.
pub const BUILTIN: &[(&str, &str)] = &[
    ("tpcb-like", include_str!("../../workloads/tpcb-like.json")),
    (
        "simple-update",
        include_str!("../../workloads/simple-update.json"),
    ),
    (
        "select-only",
        include_str!("../../workloads/select-only.json"),
    ),
    (
        "large-updates",
        include_str!("../../workloads/large-updates.json"),
    ),
];

/// A built-in workload's spec by name.
pub fn builtin(name: &str) -> Option<WorkloadSpec> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(n, text)| {
        WorkloadSpec::from_json(text, &format!("workloads/{n}.json (built in)"))
            .expect("built-in workloads are valid")
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::SimRng;
    use crate::core::time::Nanos;
    use rand::SeedableRng;

    fn tpcb(scale: u64) -> Script {
        Script::new(&builtin("tpcb-like").unwrap(), scale).unwrap()
    }

    #[test]
    fn every_builtin_loads_and_compiles() {
        for (name, _) in BUILTIN {
            let s = builtin(name).unwrap();
            let mut w = Script::new(&s, 2).unwrap();
            let mut rng = SimRng::seed_from_u64(1);
            let mut steps = Vec::new();
            w.next_transaction(&mut rng, &mut steps);
            // The commit comes last, but for the CPU after it.
            let commit = steps
                .iter()
                .rposition(|s| matches!(s, Step::Commit { .. }))
                .unwrap_or_else(|| panic!("{name}: no commit"));
            assert!(
                steps[commit + 1..]
                    .iter()
                    .all(|s| matches!(s, Step::Cpu(_))),
                "{name}: {:?}",
                &steps[commit..]
            );
        }
    }

    #[test]
    fn pgbench_layout_matches_measured_sizes() {
        let t = tpcb(100);
        let a = t.table("pgbench_accounts").unwrap();
        // 163,935 heap pages measured at scale 100.
        assert!(
            (a.heap.blocks as i64 - 163_935).abs() < 100,
            "{}",
            a.heap.blocks
        );
        assert_eq!(t.table("pgbench_tellers").unwrap().heap.blocks, 6);
        assert_eq!(t.table("pgbench_branches").unwrap().heap.blocks, 1);
        // Three index levels at scale 10 and 100, two at scale 1.
        let ix = a.index.as_ref().unwrap();
        assert_eq!(ix.levels.len(), 3);
        assert!(
            (ix.levels[1].blocks as i64 - 97).abs() <= 1,
            "root has ~97 children"
        );
        let levels = |s| {
            tpcb(s)
                .table("pgbench_accounts")
                .unwrap()
                .index
                .as_ref()
                .unwrap()
                .levels
                .len()
        };
        assert_eq!(levels(10), 3);
        assert_eq!(levels(1), 2);
    }

    #[test]
    fn tpcb_transaction_shape_and_wal_bytes() {
        // Scale 1: 1,640 accounts pages, so most pages see their first
        // update (the row moves) early, and later updates are HOT.
        let mut t = tpcb(1);
        let mut rng = SimRng::seed_from_u64(1);
        let mut steps = Vec::new();
        let (mut moved_early, mut moved_late) = (0, 0);
        let n = 30_000;
        for i in 0..n {
            t.next_transaction(&mut rng, &mut steps);
            assert_eq!(steps.iter().filter(|s| **s == Step::RoundTrip).count(), 7);
            assert_eq!(
                steps.iter().filter(|s| matches!(s, Step::Lock(_))).count(),
                3
            );
            let modifies = steps
                .iter()
                .filter(|s| matches!(s, Step::Modify { .. } | Step::Extend { .. }))
                .count();
            let wal: u32 = steps
                .iter()
                .map(|s| match s {
                    Step::Modify { wal_bytes, .. }
                    | Step::Extend { wal_bytes, .. }
                    | Step::Commit { wal_bytes } => *wal_bytes,
                    _ => 0,
                })
                .sum();
            match modifies {
                // HOT: 3 updates, the insert, the commit: 401 B, about the
                // 403.5 B/tx measured without full-page images.
                4 => assert_eq!(wal, 3 * 72 + 79 + 106),
                // A later non-HOT update: an index entry too.
                5 => assert_eq!(wal, 3 * 72 + 79 + 106 + 64),
                // First update of the page: tuple lock, new page, index entry.
                6 => {
                    assert_eq!(wal, 3 * 72 + 54 + 79 + 106 + 64);
                    if i < 1000 {
                        moved_early += 1;
                    } else if i >= n - 1000 {
                        moved_late += 1;
                    }
                }
                m => panic!("{m} modified pages"),
            }
            for s in &steps {
                if let Step::Read(b)
                | Step::Modify { block: b, .. }
                | Step::Extend { block: b, .. } = s
                {
                    assert!(*b < t.data_blocks());
                }
            }
        }
        assert!(moved_early > 700, "{moved_early} of the first 1000 moved");
        assert!(moved_late < 10, "{moved_late} of the last 1000 moved");
    }

    #[test]
    fn replay_rate_is_the_records_bytes_over_their_measured_cpu() {
        use crate::workload::replay::{Replay, ReplayShape};
        // tpcb-like: three 72 B updates (0.1% non-HOT, with a 64 B index
        // entry), the 79 B insert and the 106 B commit, 1.08 µs a record.
        let t = tpcb(1);
        let (records, bytes) = t.mean_wal_records();
        assert!((records - 5.001).abs() < 1e-9, "{records}");
        assert!((bytes - 401.064).abs() < 1e-9, "{bytes}");
        let rate = t.replay_bytes_per_s();
        assert!((rate - 401.064 / (5.001 * 1.08e-6)).abs() < 1.0, "{rate}");
        // The records the replay itself counts, once every accounts page
        // has had its first update (which moves the row once).
        let mut r = Replay::new(
            Box::new(tpcb(1)),
            ReplayShape {
                record_cpu: 0,
                fpi_cpu: 0,
                checkpoint_every: u64::MAX,
                full_page_writes: false,
                lookahead_bytes: 0,
            },
        );
        let mut rng = SimRng::seed_from_u64(5);
        let mut steps = Vec::new();
        for _ in 0..30_000 {
            r.next_transaction(&mut rng, &mut steps);
        }
        let before = r.counts();
        let n = 50_000;
        for _ in 0..n {
            r.next_transaction(&mut rng, &mut steps);
        }
        let after = r.counts();
        let per_tx = |a: u64, b: u64| (a - b) as f64 / n as f64;
        let replayed = per_tx(after.records, before.records);
        assert!((replayed - records).abs() / records < 1e-3, "{replayed}");
        let replayed = per_tx(after.wal_bytes, before.wal_bytes);
        assert!((replayed - bytes).abs() / bytes < 1e-3, "{replayed}");
        // select-only logs nothing: nothing to replay, no time.
        let s = Script::new(&builtin("select-only").unwrap(), 1).unwrap();
        assert_eq!(s.replay_bytes_per_s(), f64::INFINITY);
    }

    #[test]
    fn commit_splits_its_statements_cpu_around_the_flush() {
        // 7 statements of 47 µs: all of it is spent, and half of END's
        // comes after the commit record, before the locks are released.
        let mut t = tpcb(1);
        let mut rng = SimRng::seed_from_u64(3);
        let mut steps = Vec::new();
        t.next_transaction(&mut rng, &mut steps);
        let cpu = |s: &[Step]| -> Nanos {
            s.iter()
                .map(|s| if let Step::Cpu(n) = s { *n } else { 0 })
                .sum()
        };
        assert_eq!(cpu(&steps), 7 * 47 * crate::core::time::US);
        let commit = steps
            .iter()
            .position(|s| matches!(s, Step::Commit { .. }))
            .unwrap();
        let half = Step::Cpu(47 * crate::core::time::US / 2);
        assert_eq!(steps[commit + 1..], [half]);
        assert_eq!(steps[commit - 1], half);
    }

    #[test]
    fn client_threads_take_the_clients_cpu_out_of_each_statement() {
        let mut w = Script::new(&builtin("tpcb-like").unwrap(), 1).unwrap();
        let mut rng = SimRng::seed_from_u64(5);
        let mut steps = Vec::new();
        let cpu = |s: &[Step]| -> Nanos {
            s.iter()
                .map(|s| if let Step::Cpu(n) = s { *n } else { 0 })
                .sum()
        };
        w.next_transaction(&mut rng, &mut steps);
        let with_client = cpu(&steps);
        w.use_client_threads();
        w.next_transaction(&mut rng, &mut steps);
        assert_eq!(with_client - cpu(&steps), 7 * w.client_cpu());
        assert!(w.client_cpu() > 0);
    }

    #[test]
    fn tls_adds_its_cpu_to_every_statement_once_whatever_the_query_mode() {
        let cpu = |w: &mut Script| -> Nanos {
            let (mut rng, mut steps) = (SimRng::seed_from_u64(5), Vec::new());
            w.next_transaction(&mut rng, &mut steps);
            steps
                .iter()
                .map(|s| if let Step::Cpu(n) = s { *n } else { 0 })
                .sum()
        };
        let spec = builtin("tpcb-like").unwrap();
        let tls = (spec.tls_cpu_us_per_statement * 1e3).round() as Nanos;
        assert!(tls > 0);
        for mode in [QueryMode::Simple, QueryMode::Prepared] {
            let mut w = Script::new(&spec, 1).unwrap();
            w.use_query_mode(mode);
            w.client_elsewhere(150_000);
            let plain = cpu(&mut w);
            assert!(!w.uses_tls());
            w.use_tls();
            w.use_tls();
            assert!(w.uses_tls());
            // Seven statements, each with the same TLS CPU, not scaled by -M.
            assert_eq!(cpu(&mut w) - plain, 7 * tls);
        }
    }

    #[test]
    fn fresh_pages_count_each_loaded_page_once_at_its_first_update() {
        let mut w = Script::new(&builtin("tpcb-like").unwrap(), 1).unwrap();
        let (mut rng, mut steps) = (SimRng::seed_from_u64(9), Vec::new());
        let f = w.fresh_pages().expect("pgbench_accounts is loaded full");
        assert_eq!((f.table, f.updated), ("pgbench_accounts", 0));
        let pages = f.pages;
        let mut last = 0;
        for _ in 0..20 * pages {
            w.next_transaction(&mut rng, &mut steps);
            let now = w.fresh_pages().unwrap().updated;
            assert!(
                now == last || now == last + 1,
                "one page at most a transaction"
            );
            last = now;
        }
        // Uniform updates leave exp(-20) of the pages: none of 1,640.
        assert_eq!(last, pages);
        // select-only updates nothing, and its tables are loaded full too.
        let mut s = Script::new(&builtin("select-only").unwrap(), 1).unwrap();
        s.next_transaction(&mut rng, &mut steps);
        assert_eq!(s.fresh_pages().map(|f| f.updated), Some(0));
    }

    #[test]
    fn select_only_is_read_only_and_simple_update_skips_hot_rows() {
        let mut rng = SimRng::seed_from_u64(3);
        let mut steps = Vec::new();
        let mut s = Script::new(&builtin("select-only").unwrap(), 5).unwrap();
        s.next_transaction(&mut rng, &mut steps);
        assert!(
            steps
                .iter()
                .all(|s| !matches!(s, Step::Modify { .. } | Step::Lock(_)))
        );
        assert_eq!(steps.iter().filter(|s| **s == Step::RoundTrip).count(), 1);
        let mut s = Script::new(&builtin("simple-update").unwrap(), 5).unwrap();
        s.next_transaction(&mut rng, &mut steps);
        assert_eq!(
            steps.iter().filter(|s| matches!(s, Step::Lock(_))).count(),
            1
        );
        assert_eq!(steps.iter().filter(|s| **s == Step::RoundTrip).count(), 5);
    }

    #[test]
    fn history_appends_extend_every_156_rows() {
        let mut t = tpcb(1);
        let h = t.table("pgbench_history").unwrap().append;
        let mut rng = SimRng::seed_from_u64(1);
        let mut steps = Vec::new();
        let mut extends = 0;
        for _ in 0..156 * 3 {
            t.next_transaction(&mut rng, &mut steps);
            extends += steps
                .iter()
                .filter(|s| matches!(s, Step::Extend { block, .. } if *block >= h.first && *block < h.first + h.blocks))
                .count();
        }
        assert_eq!(extends, 3);
    }

    #[test]
    fn mixes_follow_their_weights_and_need_shared_tables() {
        let parts = parse_mix(&["tpcb-like@1".into(), "select-only@3".into()]).unwrap();
        let mut m = Script::mix(&parts, 2).unwrap();
        assert_eq!(m.name(), "tpcb-like@1,select-only@3");
        let mut rng = SimRng::seed_from_u64(4);
        let mut steps = Vec::new();
        let n = 20_000;
        let mut reads_only = 0;
        for _ in 0..n {
            m.next_transaction(&mut rng, &mut steps);
            if !steps.iter().any(|s| matches!(s, Step::Lock(_))) {
                reads_only += 1;
            }
        }
        let share = reads_only as f64 / n as f64;
        assert!((share - 0.75).abs() < 0.02, "{share}");
        assert!(parse_mix(&["tpcb-like@0".into()]).is_err());
        assert!(parse_mix(&["nosuch".into()]).is_err());
    }

    #[test]
    fn the_load_leaves_the_largest_heap_then_its_index_newest_root_last() {
        let w = tpcb(100);
        let runs = w.written_at_load();
        let accounts = w.table("pgbench_accounts").unwrap().index.as_ref().unwrap();
        let levels = &accounts.levels;
        // The last runs are accounts' index, bottom level up to the root.
        let tail = &runs[runs.len() - levels.len()..];
        for (run, level) in tail.iter().zip(levels.iter().rev()) {
            assert_eq!(*run, (level.first, level.blocks));
        }
        assert_eq!(tail.last().unwrap().1, 1, "the root is written last");
        // Before it, accounts' heap, which its index build read last.
        let heap = &w.table("pgbench_accounts").unwrap().heap;
        assert_eq!(
            runs[runs.len() - levels.len() - 1],
            (heap.first, heap.blocks)
        );
        // Every heap and every index is there, once.
        let pages: u64 = w
            .tables()
            .iter()
            .map(|t| t.heap.blocks + t.index.as_ref().map_or(0, |b| b.blocks()))
            .sum();
        assert_eq!(runs.iter().map(|r| r.1).sum::<u64>(), pages);
    }
}
