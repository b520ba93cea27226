//! Row locks: a hot row serialises its writers, and a lock is held
//! through the whole commit.

use super::*;

#[test]
fn hot_branch_row_serialises_and_shows_lock_wait() {
    // Scale 1: one branch row for 8 clients.
    let o = simulate(config(8, 4096), 1, FAST);
    let s = o.db.stats();
    let lock = s.bucket_sum_ns[Bucket::LockWait.index()];
    assert!(
        lock as f64 > 0.3 * s.latency_sum_ns as f64,
        "lock share {}",
        lock as f64 / s.latency_sum_ns as f64
    );
}

#[test]
fn a_row_lock_is_held_through_the_whole_commit() {
    // Two clients update the same row; END costs 1 ms of CPU, half of it
    // after the commit record is durable. The row lock is held through all
    // of it, so transactions pass the row one at a time every ~1 ms even
    // with a core each; released at the flush, they would overlap (~2,000/s).
    let text = r#"{"name": "hot-row", "description": "one row everyone updates",
      "tables": {"t": {"rows_per_scale": 1, "rows_per_page": 61}},
      "transactions": [{"name": "bump",
        "keys": {"k": {"table": "t", "distribution": {"type": "uniform"}}},
        "statements": [
          {"sql": "BEGIN", "cpu_us": 0},
          {"update": {"table": "t", "key": "k", "wal_bytes": 72}, "cpu_us": 0},
          {"sql": "END", "cpu_us": 1000}],
        "commit_wal_bytes": 34}],
      "cpu_us_per_statement": 0, "round_trip_us_per_statement": 0, "full_page_image_bytes": 7977}"#;
    let spec = crate::workload::WorkloadSpec::from_json(text, "test").unwrap();
    let mut cfg = config(2, 1024);
    cfg.cpus = 2;
    cfg.round_trip = 0;
    let o = simulate_workload(cfg, Box::new(Script::new(&spec, 1).unwrap()), INSTANT);
    let s = o.db.stats();
    let tps = s.transactions as f64 / 2.0;
    assert!((900.0..1_100.0).contains(&tps), "{tps} tps");
    assert!(s.bucket_sum_ns[Bucket::LockWait.index()] > 0);
}
