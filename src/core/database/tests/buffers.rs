//! Shared buffers: misses, dirty victims written by their backends, and
//! the CPU of data-file writes.

use super::*;

#[test]
fn small_pool_forces_misses_and_backend_writes_of_dirty_victims() {
    // Scale 5 is ~9,000 pages; a 256-buffer pool misses constantly.
    let o = simulate(config(4, 256), 5, FAST);
    let c = o.db.stats().counters;
    assert!(c.buffer_misses > 1000);
    assert!(c.data_reads > 1000);
    assert!(c.backend_writes + c.bgwriter_writes > 100, "{c:?}");
    let s = o.db.stats();
    let page_read = s.bucket_sum_ns[Bucket::PageRead.index()];
    assert!(page_read > 0);
}

#[test]
fn data_file_writes_cost_their_writers_cpu() {
    // Same run with and without 50 µs of CPU per data-file write: the CPU
    // granted per transaction grows by 50 µs per write, and a backend's own
    // victim writes show in its CPU time.
    let base = simulate(config(4, 256), 5, FAST);
    let mut cfg = config(4, 256);
    cfg.write_cpu = 50 * US;
    let o = simulate(cfg, 5, FAST);
    let tx = |o: &Outcome| o.db.stats().transactions as f64;
    let busy_tx = |o: &Outcome| o.db.cpu_busy_ns() as f64 / tx(o);
    let cpu_tx = |o: &Outcome| o.db.stats().bucket_sum_ns[Bucket::Cpu.index()] as f64 / tx(o);
    let writes_tx = o.writes.len() as f64 / tx(&o);
    let victims_tx = o.db.stats().counters.backend_writes as f64 / tx(&o);
    assert!(
        writes_tx > 0.2 && victims_tx > 0.05,
        "{writes_tx} {victims_tx}"
    );
    let grew = busy_tx(&o) - busy_tx(&base);
    let want = 50_000.0 * writes_tx;
    assert!(
        (grew - want).abs() < 0.1 * want,
        "{grew} ns per tx, want {want}"
    );
    let backend_grew = cpu_tx(&o) - cpu_tx(&base);
    let backend_want = 50_000.0 * victims_tx;
    assert!(
        (backend_grew - backend_want).abs() < 0.15 * backend_want,
        "{backend_grew} ns per tx, want {backend_want}"
    );
}
