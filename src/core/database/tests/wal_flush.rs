//! WAL flushes and group commit: one flush in flight, commit_delay,
//! synchronous_commit off and the WAL writer, who leads the next flush.

use super::*;

#[test]
fn one_client_flushes_once_per_commit() {
    let o = simulate(config(1, 4096), 1, FAST);
    let s = o.db.stats();
    assert!(s.transactions > 100, "{}", s.transactions);
    let w = o.db.wal_counters();
    // One commit flush each, plus a few WAL writer flushes.
    assert!(
        w.flushes >= s.transactions,
        "{} flushes {} tx",
        w.flushes,
        s.transactions
    );
    assert!(w.flushes <= s.transactions + 20);
    assert_eq!(o.syncs, o.db.stats().counters.wal_syncs);
}

#[test]
fn group_commit_many_clients_fewer_flushes_than_commits_one_in_flight() {
    let o = simulate(config(32, 8192), 40, FAST);
    let s = o.db.stats();
    let w = o.db.wal_counters();
    assert!(s.transactions > 1000);
    assert!(
        (w.flushes as f64) < 0.5 * s.transactions as f64,
        "{} flushes for {} commits",
        w.flushes,
        s.transactions
    );
    assert_eq!(o.max_wal_in_flight, 1, "exactly one WAL I/O in flight");
}

#[test]
fn one_ms_flush_caps_a_single_client_near_1000_tps() {
    let o = simulate(config(1, 4096), 1, FAST);
    let tps = o.db.stats().transactions as f64 / 2.0;
    assert!(tps < 1000.0, "{tps}");
    assert!(tps > 500.0, "{tps}");
}

#[test]
fn commit_delay_batches_more_commits_per_flush() {
    let base = simulate(config(16, 8192), 50, FAST);
    let mut cfg = config(16, 8192);
    cfg.commit_delay = 500 * US;
    cfg.commit_siblings = 2;
    let delayed = simulate(cfg, 50, FAST);
    let per_flush =
        |o: &Outcome| o.db.stats().transactions as f64 / o.db.wal_counters().flushes as f64;
    assert!(
        per_flush(&delayed) > per_flush(&base),
        "{} vs {}",
        per_flush(&delayed),
        per_flush(&base)
    );
}

#[test]
fn synchronous_commit_off_does_not_wait_for_fsync() {
    let mut cfg = config(1, 4096);
    cfg.synchronous_commit = crate::core::replication::SynchronousCommit::Off;
    let o = simulate(cfg, 1, FAST);
    let s = o.db.stats();
    assert_eq!(s.bucket_sum_ns[Bucket::WalFsync.index()], 0);
    // The WAL writer flushes every 200 ms and whenever 1 MB is unflushed:
    // about 10 syncs in 2 s, plus one a MB of WAL.
    let syncs = o.db.stats().counters.wal_syncs;
    let mb = o.db.wal_counters().bytes / (1024 * 1024);
    assert!(syncs <= 12 + mb, "{syncs} syncs for {mb} MB");
    assert!(syncs + 2 >= mb, "{syncs} syncs for {mb} MB");
    assert!(s.transactions > 2000);
}

#[test]
fn wal_writer_flush_after_bounds_the_unflushed_wal_of_asynchronous_commits() {
    let run = |flush_after: u64, delay: Nanos| {
        let mut cfg = config(4, 4096);
        cfg.synchronous_commit = crate::core::replication::SynchronousCommit::Off;
        cfg.wal_writer_flush_after = flush_after;
        cfg.wal_writer_delay = delay;
        let o = simulate(cfg, 1, FAST);
        (
            o.db.stats().counters.wal_syncs,
            o.db.wal_counters().bytes,
            o.db.stats().bucket_sum_ns[Bucket::WalFsync.index()],
        )
    };
    // A long delay leaves flush_after alone to decide: one flush per
    // flush_after of WAL, give or take the last.
    let (syncs, bytes, waited) = run(256 * 1024, 10 * SEC);
    let expect = bytes / (256 * 1024);
    assert!(
        syncs + 2 >= expect && syncs <= expect + 2,
        "{syncs} syncs for {bytes} bytes"
    );
    assert_eq!(waited, 0, "asynchronous commits never wait for a flush");
    // 0: every page an asynchronous commit fills is flushed, far more often.
    let (every, _, _) = run(0, 10 * SEC);
    assert!(every > 4 * syncs, "{every} vs {syncs}");
}

#[test]
fn a_flusher_waiting_for_a_busy_core_lets_more_commits_join_the_next_flush() {
    let lat = Lat {
        read: US,
        write: 20 * US,
        sync: 80 * US,
        timer_late: 0,
    };
    let per_flush =
        |o: &Outcome| o.db.stats().transactions as f64 / o.db.wal_counters().flushes as f64;
    let run = |flush_cpu: Nanos| {
        let mut cfg = config(8, 8192);
        cfg.cpus = 2;
        cfg.wal_flush_cpu = flush_cpu;
        simulate(cfg, 20, lat)
    };
    let free = run(0);
    let queued = run(10 * US);
    // The flusher's CPU is real CPU: utilisation includes it.
    assert!(queued.db.stats().transactions > 0);
    assert!(
        per_flush(&queued) > 1.1 * per_flush(&free),
        "{} vs {}",
        per_flush(&queued),
        per_flush(&free)
    );
    // Each flush still completes: one WAL I/O in flight, every commit durable.
    assert_eq!(queued.max_wal_in_flight, 1);
    // (A commit made durable just before the end may not have finished
    // its transaction: at most one per client.)
    let s = queued.db.stats();
    assert!(
        (s.transactions..=s.transactions + 8).contains(&s.counters.sync_commits),
        "{} durable commits, {} transactions",
        s.counters.sync_commits,
        s.transactions
    );
}

#[test]
fn the_next_flush_waits_for_a_waiting_backend_to_wake_unless_a_running_one_asks() {
    let lat = Lat {
        read: US,
        write: 20 * US,
        sync: 80 * US,
        timer_late: 0,
    };
    let mut cfg = config(8, 8192);
    cfg.cpus = 2;
    cfg.wal_flush_cpu = 10 * US;
    let o = simulate(cfg, 20, lat);
    // Flushes ended with backends still waiting, and no WAL I/O started
    // before one of them woke (or a running backend took WALWriteLock).
    assert!(o.leader_waking_seen > 100, "{}", o.leader_waking_seen);
    assert_eq!(o.wal_ios_while_leader_waking, 0);
    assert_eq!(o.max_wal_in_flight, 1);
    // Everyone's commit still ends up durable.
    let s = o.db.stats();
    assert!(s.transactions > 1_000, "{}", s.transactions);
    assert!(
        (s.transactions..=s.transactions + 8).contains(&s.counters.sync_commits),
        "{} durable commits, {} transactions",
        s.counters.sync_commits,
        s.transactions
    );
}
