//! The vacuum worker: the pages it reads, prunes and writes, its index
//! passes, readahead, cost-limit pacing and autovacuum's trigger.

use super::*;

pub(super) fn bloated_table(pages: u64) -> Box<dyn Workload> {
    let text = format!(
        r#"{{"name": "bloat", "description": "a bloated table",
          "tables": {{"bloated": {{"rows_per_scale": {rows}, "rows_per_page": 61}}}},
          "transactions": [{{"name": "none", "statements": [{{"sql": "SELECT 1"}}]}}],
          "cpu_us_per_statement": 0, "round_trip_us_per_statement": 0, "full_page_image_bytes": 7977}}"#,
        rows = pages * 61
    );
    let spec = crate::workload::WorkloadSpec::from_json(&text, "test").unwrap();
    Box::new(Script::new(&spec, 1).unwrap())
}

/// No clients, one VACUUM of "bloated" at vacuum_cost_limit's default
/// (200) and no cost delay (vacuum_cost_delay's default).
fn one_shot(shape: Option<crate::core::vacuum::VacuumShape>) -> CoreConfig {
    let mut cfg = config(1, 1024);
    cfg.clients = 0;
    cfg.duration = None;
    cfg.mode = Mode::Vacuum(crate::core::config::OneShotVacuum {
        table: "bloated".into(),
        shape,
        cost_limit: 200,
        cost_delay: 0,
    });
    cfg
}

#[test]
fn vacuum_reads_every_page_once_and_writes_each_dirtied_page_once() {
    let pages = 3000;
    let cfg = one_shot(None);
    let o = simulate_workload(cfg, bloated_table(pages), FAST);
    let c = o.db.stats().counters;
    assert!(o.db.is_finished());
    assert_eq!(c.vacuum_pages, pages);
    assert_eq!(c.vacuum_dirtied, pages, "every bloated page is pruned");
    // Cold cache: every page read exactly once.
    let mut reads = o.reads.clone();
    reads.sort_unstable();
    let before = reads.len();
    reads.dedup();
    assert_eq!(before, reads.len(), "a page was read twice");
    assert_eq!(reads.len() as u64, pages);
    // Each dirtied page written at most once; all but the ring's last few.
    let mut writes = o.writes.clone();
    writes.sort_unstable();
    let before = writes.len();
    writes.dedup();
    assert_eq!(before, writes.len(), "a page was written twice");
    assert!(c.vacuum_writes >= pages - crate::core::vacuum::RING_BUFFERS as u64);
    // First touch after the (initial) checkpoint: one full-page image each.
    assert_eq!(c.full_page_images, pages);
    // The ring, not the whole pool: far fewer buffers than pages were used,
    // and no client needed a backend write.
    assert_eq!(c.backend_writes, 0);
}

/// A bloated heap of `pages` with an index of `index` pages (a table of
/// its own), for the lazy vacuum.
fn bloated_with_index(pages: u64, index: u64) -> Box<dyn Workload> {
    let text = format!(
        r#"{{"name": "bloat", "description": "a bloated table and its index",
          "tables": {{"bloated": {{"rows_per_scale": {rows}, "rows_per_page": 61}},
                      "bloated_pkey": {{"rows_per_scale": {index}, "rows_per_page": 1}}}},
          "transactions": [{{"name": "none", "statements": [{{"sql": "SELECT 1"}}]}}],
          "cpu_us_per_statement": 0, "round_trip_us_per_statement": 0, "full_page_image_bytes": 7977}}"#,
        rows = pages * 61
    );
    let spec = crate::workload::WorkloadSpec::from_json(&text, "test").unwrap();
    Box::new(Script::new(&spec, 1).unwrap())
}

fn lazy_config(all_visible: f64, dead_per_page: f64, read_ahead: u64, mem: u64) -> CoreConfig {
    let mut cfg = one_shot(Some(crate::core::vacuum::VacuumShape {
        index_table: "bloated_pkey".into(),
        all_visible,
        dead_pages: 1.0,
        dead_per_page,
        read_ahead_pages: read_ahead,
    }));
    cfg.maintenance_work_mem = mem;
    cfg
}

#[test]
fn lazy_vacuum_scans_heap_then_index_then_dead_pages() {
    let (pages, index) = (3000, 500);
    let o = simulate_workload(
        lazy_config(0.0, 6.0, 1, 64 << 20),
        bloated_with_index(pages, index),
        FAST,
    );
    assert!(o.db.is_finished());
    let v = o.db.vacuum_summary();
    assert_eq!(v.index_passes, 1);
    assert_eq!(v.lpdead_pages, pages);
    assert_eq!(v.lpdead_items, 6 * pages);
    let [heap, ix, second] = v.phases;
    assert_eq!(heap.pages, pages);
    assert_eq!(ix.pages, index, "the index read in full");
    assert_eq!(second.pages, pages, "every page with dead items again");
    assert!(heap.time > 0 && ix.time > 0 && second.time > 0);
    // Without a page cache each phase reads from the device: heap, index,
    // then the heap again, block by block without readahead.
    assert_eq!(o.reads.len() as u64, 2 * pages + index);
    assert_eq!(o.runs, 0);
    // A full-page image the first time each heap and index page changes.
    assert_eq!(o.db.stats().counters.full_page_images, pages + index);
    assert_eq!(v.set_all_visible, pages);
}

#[test]
fn maintenance_work_mem_full_means_an_index_pass_per_fill() {
    let (pages, index) = (3000, 200);
    // 1 MB holds 174,762 dead items: 6 per page fill it after 29,127 pages;
    // 100 per page after 1,747 pages, so 3,000 pages take two passes.
    let mem = 1 << 20;
    let o = simulate_workload(
        lazy_config(0.0, 100.0, 1, mem),
        bloated_with_index(pages, index),
        FAST,
    );
    let v = o.db.vacuum_summary();
    let per_fill = (mem / 6 - crate::core::vacuum::MAX_HEAP_TUPLES_PER_PAGE) / 100 + 1;
    assert_eq!(v.index_passes, pages.div_ceil(per_fill));
    assert_eq!(v.index_passes, 2);
    assert_eq!(v.phases[1].pages, 2 * index, "the whole index each pass");
    assert_eq!(v.phases[2].pages, pages);
}

#[test]
fn all_visible_runs_are_skipped_and_short_ones_read() {
    let (pages, index) = (4000, 100);
    let all = simulate_workload(
        lazy_config(1.0, 6.0, 1, 64 << 20),
        bloated_with_index(pages, index),
        FAST,
    );
    let v = all.db.vacuum_summary();
    assert_eq!(v.skipped, pages, "one run of all-visible pages, skipped");
    assert_eq!(v.index_passes, 0, "no dead items: no index pass");
    assert!(all.reads.is_empty());
    // Half of them at random: runs of 32 are rare, so nearly all are read.
    let half = simulate_workload(
        lazy_config(0.5, 6.0, 1, 64 << 20),
        bloated_with_index(pages, index),
        FAST,
    );
    let v = half.db.vacuum_summary();
    assert!(v.skipped < pages / 100, "{v:?}");
    assert!((v.lpdead_pages as f64 - pages as f64 / 2.0).abs() < pages as f64 * 0.05);
}

#[test]
fn readahead_merges_sequential_reads_into_windows() {
    let (pages, index) = (4096, 512);
    let o = simulate_workload(
        lazy_config(0.0, 6.0, 16, 64 << 20),
        bloated_with_index(pages, index),
        FAST,
    );
    let v = o.db.vacuum_summary();
    // 128 KiB windows: 16 pages a request in phases I and II.
    assert_eq!(v.phases[0].device_reads, pages / 16);
    assert_eq!(v.phases[1].device_reads, index / 16);
    assert_eq!(o.runs, (pages + index) / 16 + v.phases[2].device_reads);
    assert_eq!(v.phases[0].device_read_bytes, pages * 8192);
}

#[test]
fn vacuum_cost_delay_paces_it() {
    let pages = 2000;
    let mut cfg = one_shot(None);
    let fast = simulate_workload(cfg.clone(), bloated_table(pages), FAST);
    if let Mode::Vacuum(v) = &mut cfg.mode {
        v.cost_delay = 2 * MS;
    }
    let slow = simulate_workload(cfg, bloated_table(pages), FAST);
    // Each page costs 2 (miss) + 20 (dirty) = 22: 200 credits per 2 ms sleep.
    let expected_sleep = pages as f64 * 22.0 / 200.0 * 2e-3;
    let slept = slow.db.stats().counters.vacuum_sleep_ns as f64 / 1e9;
    assert!(
        (slept - expected_sleep).abs() / expected_sleep < 0.05,
        "{slept} vs {expected_sleep}"
    );
    let t = |o: &Outcome| o.db.end_time().unwrap() as f64 / 1e9;
    assert!(t(&slow) > t(&fast) + 0.9 * expected_sleep);
}

#[test]
fn autovacuum_starts_when_dead_tuples_pass_the_threshold() {
    // Scale 1: tellers have 10 rows, so 52 updates pass 50 + 0.2 × 10.
    let mut cfg = config(4, 4096);
    cfg.autovacuum_naptime = SEC / 2;
    let o = simulate(cfg.clone(), 1, FAST);
    let c = o.db.stats().counters;
    assert!(c.vacuum_runs >= 1, "{c:?}");
    assert!(
        o.db.vacuums()
            .iter()
            .any(|v| v.table == "pgbench_tellers" || v.table == "pgbench_branches")
    );
    cfg.autovacuum = false;
    let o = simulate(cfg, 1, FAST);
    assert_eq!(o.db.stats().counters.vacuum_runs, 0);
}

#[test]
fn the_first_autovacuum_to_come_is_foretold_from_the_dead_tuples_rate() {
    // Scale 1: pgbench_accounts' 100,000 rows pass their threshold at
    // 20,050 dead tuples, far past this short run; its dead tuples so far
    // foretell when, at the rate they gathered. The small tables are
    // vacuumed (or waiting for the worker) and are not named.
    let mut cfg = config(4, 4096);
    cfg.autovacuum_naptime = SEC / 2;
    let o = simulate(cfg.clone(), 1, FAST);
    let end = o.db.end_time().unwrap();
    let dead = o.db.dead[o
        .db
        .tables
        .iter()
        .position(|t| t.name == "pgbench_accounts")
        .unwrap()];
    assert!(dead > 0 && dead < 20_050, "{dead}");
    let (table, due) = o.db.first_autovacuum_due(end).expect("one to come");
    assert_eq!(table, "pgbench_accounts");
    let expected = end as f64 * 20_050.0 / dead as f64;
    assert!(
        (due as f64 - expected).abs() <= 1e-6 * expected,
        "{due} vs {expected}"
    );
    cfg.autovacuum = false;
    let o = simulate(cfg, 1, FAST);
    assert_eq!(o.db.first_autovacuum_due(o.db.end_time().unwrap()), None);
}

#[test]
fn the_worker_vacuums_every_small_table_past_its_threshold_not_only_the_first() {
    // Scale 1: branches (1 row) and tellers (10 rows) both pass their
    // thresholds within a nap; the worker lists both and vacuums each.
    let mut cfg = config(4, 4096);
    cfg.autovacuum_naptime = SEC / 2;
    let o = simulate(cfg, 1, FAST);
    let vacuumed = |name: &str| o.db.vacuums().iter().filter(|v| v.table == name).count();
    assert!(vacuumed("pgbench_branches") >= 1, "{:?}", o.db.vacuums());
    assert!(vacuumed("pgbench_tellers") >= 1, "{:?}", o.db.vacuums());
}
