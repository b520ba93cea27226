//! The database's invariants over random settings and device latencies, by
//! the real driver loop against the simulated device: every I/O handed out
//! is completed exactly once, nothing is outstanding at the end, each
//! transaction's breakdown sums to its latency, and Little's law holds in
//! the closed loop. Seeded, so every run tries the same cases.

use proptest::prelude::*;
use proptest::test_runner::{Config as ProptestConfig, RngSeed};

use super::*;
use crate::core::replication::SynchronousCommit;

/// Run length in virtual time: long enough for a checkpoint or more (the
/// timeout is 100-900 ms) and commit batching, short enough that 32 cases
/// take a few seconds in release.
const DURATION: Nanos = 2 * SEC;

/// A disk with these QD1 latencies (µs), the p99 `spread` times the
/// median, `channels` at once and `contention_us` per operation in flight.
fn disk(read: f64, write: f64, flush: f64, spread: f64, channels: u32, contention: f64) -> Profile {
    let op = |us: f64| serde_json::json!({ "median_us": us, "p99_us": us * spread });
    let v = serde_json::json!({
        "name": "random",
        "description": "random latencies",
        "source": "test",
        "read": op(read),
        "write": op(write),
        "flush": op(flush),
        "channels": channels,
        "contention_us": contention,
        "bandwidth_mib_s": 2000,
        "network_rtt_us": 0,
        "flush_to_media": false,
        "caps": null
    });
    Profile::from_json(&v.to_string(), "random disk").unwrap()
}

fn synchronous_commit() -> impl Strategy<Value = SynchronousCommit> {
    prop_oneof![
        Just(SynchronousCommit::Off),
        Just(SynchronousCommit::Local),
        Just(SynchronousCommit::On),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 32,
        rng_seed: RngSeed::Fixed(24),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn every_io_completes_once_the_breakdown_is_the_latency_and_littles_law_holds(
        clients in 1u32..=16,
        cpus in 1u32..=4,
        scale in 1u64..=2,
        shared_buffers in 16u32..=4096,
        os_cache_pages in prop_oneof![Just(0u64), 1u64..=8192],
        sync in synchronous_commit(),
        commit_delay_us in prop_oneof![Just(0u64), 1u64..=1000],
        commit_siblings in 1u32..=8,
        full_page_writes in any::<bool>(),
        checkpoint_timeout_ms in 100u64..=900,
        checkpoint_completion_target in 0.1f64..=0.9,
        checkpoint_segments in 1u64..=8,
        read_us in 10.0f64..=1000.0,
        write_us in 10.0f64..=500.0,
        flush_us in 20.0f64..=2000.0,
        spread in 1.0f64..=3.0,
        channels in 1u32..=64,
        contention_us in 0.0f64..=20.0,
        seed in 0u64..1000,
    ) {
        let mut cfg = config(clients, shared_buffers);
        cfg.cpus = cpus;
        cfg.duration = Some(DURATION);
        cfg.seed = seed;
        cfg.os_cache_pages = os_cache_pages;
        cfg.synchronous_commit = sync;
        cfg.commit_delay = commit_delay_us * US;
        cfg.commit_siblings = commit_siblings;
        cfg.full_page_writes = full_page_writes;
        cfg.checkpoint_timeout = checkpoint_timeout_ms * MS;
        cfg.checkpoint_completion_target = checkpoint_completion_target;
        cfg.checkpoint_segments = checkpoint_segments;
        let profile = disk(read_us, write_us, flush_us, spread, channels, contention_us);
        let w = Script::new(&builtin("tpcb-like").unwrap(), scale).unwrap();
        let mut db = Database::new(cfg, Box::new(w));
        // Every I/O handed out completes exactly once, and before each
        // round's requests go out, everything the core has handed out is on
        // the device and nothing else is (the checked device's own checks).
        let mut dev = Checked::new(Box::new(SimDevice::new(DeviceModel::new(
            &profile, seed,
        ))));
        drive_checked(&mut db, &mut dev, |_| {}).unwrap();

        let s = db.stats();
        prop_assert!(s.transactions > 0);
        prop_assert_eq!(s.latency.len(), s.transactions);
        // Every nanosecond of every transaction is in exactly one bucket.
        let buckets: u128 = s.bucket_sum_ns.iter().sum();
        prop_assert_eq!(buckets, s.latency_sum_ns);

        // Little's law, closed loop: the clients are busy the whole run,
        // so the completed transactions' latencies sum to clients ×
        // duration less what each client's unfinished last transaction had
        // run when the run ended, which is under the longest latency. So
        // tps × mean latency is at most the clients (0.1% for rounding)
        // and at least clients × (1 − longest / duration), less 2% for the
        // clients' staggered first transactions.
        let n = clients as f64;
        let t = DURATION as f64 / 1e9;
        let tps = s.transactions as f64 / t;
        let mean = s.mean_latency_ns() / 1e9;
        let longest = s.latency.max() as f64 / 1e9 * 1.01;
        let l_obs = tps * mean;
        prop_assert!(l_obs <= n * 1.001, "tps × latency {l_obs} > {n} clients");
        let floor = n * (1.0 - longest / t) - 0.02 * n;
        prop_assert!(
            l_obs >= floor,
            "tps × latency {l_obs} < {floor} ({n} clients, longest {longest} s, {} tx)",
            s.transactions
        );
    }
}
