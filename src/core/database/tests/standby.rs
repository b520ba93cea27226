//! Standbys: the commit's wait for its synchronous quorum, and a standby's
//! catch-up (replaying a WAL backlog, full-page images, recovery_prefetch).

use super::*;

fn with_standbys(mut cfg: CoreConfig, names: &str, rtts_ms: &[u64]) -> CoreConfig {
    use crate::core::replication::*;
    cfg.replication = Some(ReplicationConfig {
        standbys: rtts_ms
            .iter()
            .enumerate()
            .map(|(i, &ms)| StandbyConfig {
                name: format!("s{}", i + 1),
                rtt: RoundTrip {
                    median: ms * MS,
                    p99: ms * MS,
                },
                // The tests' own rate: they are about the waits, not it.
                replay_bytes_per_s: 40e6,
                replay_cpu_per_image: None,
            })
            .collect(),
        names: StandbyNames::parse(names).unwrap(),
        synchronous_commit: cfg.synchronous_commit,
        wakeup: 0,
        wal_segments: cfg.wal_segments,
        max_write_bytes: cfg.wal_buffers_bytes,
        seed: 1,
    });
    cfg
}

#[test]
fn a_commit_waits_for_its_quorum_after_its_local_flush() {
    use crate::core::replication::SynchronousCommit;
    // One client: each commit flushes (1 ms), then waits for the faster of
    // two standbys 2 ms and 5 ms away (write 50 µs + fdatasync 1 ms there).
    let o = simulate(
        with_standbys(config(1, 4096), "ANY 1 (s1, s2)", &[2, 5]),
        1,
        FAST,
    );
    let s = o.db.stats();
    let per_tx = |b: Bucket| s.bucket_sum_ns[b.index()] as f64 / s.transactions as f64;
    let sync_rep = per_tx(Bucket::SyncRep);
    assert!(
        (3.0e6..3.2e6).contains(&sync_rep),
        "sync_rep {sync_rep} ns per transaction"
    );
    assert!((1.0e6..1.2e6).contains(&per_tx(Bucket::WalFsync)));
    // The last commit may still wait when the run ends.
    assert!(s.counters.sync_commits - s.counters.sync_rep_commits <= 1);
    let sum: u128 = s.bucket_sum_ns.iter().sum();
    assert_eq!(sum, s.latency_sum_ns, "buckets sum to latency");

    // FIRST 1 (s2, s1) waits for the far one; local does not wait at all.
    let far = simulate(
        with_standbys(config(1, 4096), "FIRST 1 (s2, s1)", &[2, 5]),
        1,
        FAST,
    );
    let far_rep = far.db.stats().bucket_sum_ns[Bucket::SyncRep.index()] as f64
        / far.db.stats().transactions as f64;
    assert!((6.0e6..6.2e6).contains(&far_rep), "{far_rep}");
    let mut local = with_standbys(config(1, 4096), "ANY 1 (s1, s2)", &[2, 5]);
    local.synchronous_commit = SynchronousCommit::Local;
    if let Some(r) = &mut local.replication {
        r.synchronous_commit = SynchronousCommit::Local;
    }
    let l = simulate(local, 1, FAST);
    assert_eq!(l.db.stats().bucket_sum_ns[Bucket::SyncRep.index()], 0);
    assert!(l.db.stats().transactions > 2 * o.db.stats().transactions);
}

#[test]
fn row_locks_are_held_through_the_sync_rep_wait() {
    // Scale 1, 8 clients: the branch row serialises them, so with a 3 ms
    // standby each commit holds the row ≥ 3 ms and tps stays under 1/3 ms.
    let o = simulate(with_standbys(config(8, 4096), "s1", &[3]), 1, FAST);
    let s = o.db.stats();
    let tps = s.transactions as f64 / 2.0;
    assert!(tps < 1000.0 / 3.0, "{tps}");
    assert!(s.bucket_sum_ns[Bucket::LockWait.index()] > s.bucket_sum_ns[Bucket::SyncRep.index()]);
}

/// A standby catching up on `backlog` bytes of tpcb-like's WAL at `scale`,
/// with `nbuffers` shared buffers and no page cache unless `os_cache`.
fn catchup(
    backlog: u64,
    scale: u64,
    nbuffers: u32,
    os_cache: u64,
    fpw: bool,
    prefetch: bool,
    lat: Lat,
) -> Outcome {
    use crate::core::recovery::RecoveryConfig;
    use crate::workload::replay::{Replay, ReplayShape};
    let mut cfg = config(1, nbuffers);
    cfg.duration = None;
    cfg.autovacuum = false;
    cfg.round_trip = 0;
    cfg.os_cache_pages = os_cache;
    cfg.mode = Mode::Catchup(RecoveryConfig {
        backlog_bytes: backlog,
        read_ahead_bytes: 128 * 1024,
        prefetch,
        io_concurrency: 10,
    });
    let w = Script::new(&builtin("tpcb-like").unwrap(), scale).unwrap();
    let replay = Replay::new(
        Box::new(w),
        ReplayShape {
            record_cpu: 5 * US,
            fpi_cpu: 2 * US,
            checkpoint_every: 1 << 40,
            full_page_writes: fpw,
            lookahead_bytes: if prefetch { 512 * 1024 } else { 0 },
        },
    );
    simulate_workload(cfg, Box::new(replay), lat)
}

#[test]
fn catchup_replays_the_backlog_once_reading_every_byte_of_it() {
    let backlog = 20 << 20;
    let o = catchup(backlog, 2, 4096, 0, true, false, FAST);
    let rec = o.db.recovery().unwrap();
    assert!(o.db.is_finished());
    // It stops at the first transaction boundary past the backlog.
    assert!(rec.replayed() >= backlog && rec.replayed() < backlog + 64 * 1024);
    assert_eq!(o.wal_read_bytes, backlog, "the WAL read once, in full");
    assert_eq!(rec.counters().wal_read_bytes, backlog);
    // No client: no WAL written but the restartpoints' ends.
    assert!(o.db.wal_counters().records <= o.db.stats().counters.checkpoints_done);
    let s = o.db.stats();
    assert_eq!(
        s.bucket_sum_ns.iter().sum::<u128>(),
        s.latency_sum_ns,
        "the startup process's time, bucket by bucket"
    );
}

#[test]
fn full_page_images_spare_the_reads_of_pages_first_changed_after_a_checkpoint() {
    // Every page fits in shared buffers: a page is read only if its first
    // change in the backlog carries no full-page image.
    let with = catchup(8 << 20, 2, 8192, 0, true, false, FAST);
    assert!(
        with.reads.is_empty(),
        "{} reads with images",
        with.reads.len()
    );
    let without = catchup(8 << 20, 2, 8192, 0, false, false, FAST);
    assert!(
        without.reads.len() > 500,
        "{} reads without",
        without.reads.len()
    );
    // Each read once: the pool keeps what it read.
    let mut r = without.reads.clone();
    r.sort_unstable();
    r.dedup();
    assert_eq!(r.len(), without.reads.len());
}

#[test]
fn recovery_prefetch_hides_read_latency_from_the_replay() {
    // No full-page images and a pool too small: every change reads.
    let slow = Lat {
        read: 2_000 * US,
        write: 50 * US,
        sync: 1_000 * US,
        timer_late: 0,
    };
    let cache = 1 << 20;
    let off = catchup(4 << 20, 20, 256, cache, false, false, slow);
    let on = catchup(4 << 20, 20, 256, cache, false, true, slow);
    let t = |o: &Outcome| o.db.end_time().unwrap();
    assert!(
        t(&on) * 2 < t(&off),
        "prefetch {} ms, none {} ms",
        t(&on) / 1_000_000,
        t(&off) / 1_000_000
    );
    let rec = on.db.recovery().unwrap().counters();
    assert!(rec.prefetches > 100, "{rec:?}");
    assert_eq!(off.db.recovery().unwrap().counters().prefetches, 0);
    // The same backlog either way.
    assert_eq!(on.wal_read_bytes, off.wal_read_bytes);
}

#[test]
fn a_catchup_is_repeatable() {
    let a = catchup(4 << 20, 5, 512, 4096, true, true, FAST);
    let b = catchup(4 << 20, 5, 512, 4096, true, true, FAST);
    assert_eq!(a.db.end_time(), b.db.end_time());
    assert_eq!(a.reads, b.reads);
    assert_eq!(a.writes, b.writes);
}
