//! A whole run's accounting: the breakdown sums to the latency, Little's
//! law, determinism, per-client transaction counts, device time per kind.

use super::*;

#[test]
fn breakdown_sums_to_latency_and_littles_law_holds() {
    let o = simulate(config(8, 4096), 2, FAST);
    let s = o.db.stats();
    let total: u128 = s.bucket_sum_ns.iter().sum();
    assert_eq!(total, s.latency_sum_ns);
    // Closed loop: clients = tps × mean latency (within 2%, edge effects).
    let tps = s.transactions as f64 / 2.0;
    let l = s.mean_latency_ns() / 1e9;
    assert!((tps * l - 8.0).abs() / 8.0 < 0.02, "{}", tps * l);
}

#[test]
fn same_seed_same_run() {
    let a = simulate(config(8, 2048), 3, FAST);
    let b = simulate(config(8, 2048), 3, FAST);
    assert_eq!(a.db.stats().transactions, b.db.stats().transactions);
    assert_eq!(a.db.stats().counters, b.db.stats().counters);
    assert_eq!(a.db.wal_counters(), b.db.wal_counters());
    let mut c = config(8, 2048);
    c.seed = 7;
    let c = simulate(c, 3, FAST);
    assert_ne!(a.db.stats().counters, c.db.stats().counters);
}

#[test]
fn transactions_per_client_mode_stops_when_all_done() {
    let mut cfg = config(3, 2048);
    cfg.duration = None;
    cfg.transactions_per_client = Some(50);
    let o = simulate(cfg, 2, FAST);
    assert_eq!(o.db.stats().transactions, 150);
    assert!(o.db.is_finished());
}

#[test]
fn device_time_is_counted_per_kind_from_hand_out_to_completion() {
    // The fake device takes exactly FAST's latencies; a data set larger
    // than shared buffers makes reads.
    let o = simulate(config(4, 1024), 20, FAST);
    let c = &o.db.stats().counters;
    assert!(c.read_time.count > 100, "{}", c.read_time.count);
    assert_eq!(c.read_time.mean_us(), 100.0);
    assert!(c.wal_write_time.count > 100, "{}", c.wal_write_time.count);
    assert_eq!(c.wal_write_time.mean_us(), 50.0);
    assert!(c.wal_sync_time.count > 100, "{}", c.wal_sync_time.count);
    assert_eq!(c.wal_sync_time.mean_us(), 1_000.0);
    // Every sync handed out and completed before the end is counted once.
    assert!(c.wal_sync_time.count <= c.wal_syncs);
    assert!(c.wal_sync_time.count + 1 >= c.wal_syncs);
}
