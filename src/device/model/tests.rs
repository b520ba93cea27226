use super::*;
use crate::core::time::{MS, SEC, US};

fn profile(json: serde_json::Value) -> Profile {
    Profile::from_json(&json.to_string(), "test.json").unwrap()
}

/// A disk with constant service times (p99 = median), to check queueing
/// arithmetic exactly.
fn constant(channels: u32, caps: serde_json::Value) -> Profile {
    profile(serde_json::json!({
        "name": "constant",
        "description": "constant service times",
        "source": "test",
        "latency_io_kib": 8,
        "read": { "median_us": 108.0, "p99_us": 108.0 },
        "write": { "median_us": 58.0, "p99_us": 58.0 },
        "flush": { "median_us": 100.0, "p99_us": 100.0 },
        "channels": channels,
        "bandwidth_mib_s": 1000.0,
        "network_rtt_us": 0.0,
        "flush_to_media": false,
        "caps": caps
    }))
}

/// 8 KiB at 1000 MiB/s.
const XFER_8K: f64 = 8192.0 / (1000.0 * MIB) * 1e9;

#[test]
fn qd1_latency_is_the_stated_latency() {
    let p = constant(4, serde_json::json!(null));
    let mut m = DeviceModel::new(&p, 1);
    let done = m.submit(0, Op::Read, 8192);
    assert!((done as f64 - 108_000.0).abs() <= 1.0, "{done}");
    let t = done;
    let done = m.submit(t, Op::Write, 8192);
    assert!(((done - t) as f64 - 58_000.0).abs() <= 1.0);
    let t = done;
    assert_eq!(m.submit(t, Op::Flush, 0) - t, 100 * US);
}

/// `constant`, slowed by `contention_us` per operation in flight.
fn contended(channels: u32, contention_us: f64, caps: serde_json::Value) -> Profile {
    let mut p = constant(channels, caps);
    p.contention_us = contention_us;
    p
}

#[test]
fn contention_slows_each_operation_by_those_already_in_flight() {
    let mut m = DeviceModel::new(&contended(64, 10.0, serde_json::json!(null)), 1);
    // Four at once: each sees the ones submitted before it (and waits
    // for their transfers on the medium).
    for i in 0..4u64 {
        let done = m.submit(0, Op::Read, 8192) as f64;
        let want = (108 * US + i * 10 * US) as f64 + i as f64 * XFER_8K;
        assert!((done - want).abs() <= 1.0, "read {i}: {done}, want {want}");
    }
    // Once they are complete, a flush runs alone again.
    assert_eq!(m.submit(SEC, Op::Flush, 0), SEC + 100 * US);
}

#[test]
fn with_contention_qd_n_takes_qd1_latency_plus_n_minus_1_times_it() {
    for qd in [1u64, 2, 4, 8, 32] {
        let mut m = DeviceModel::new(&contended(64, 13.0, serde_json::json!(null)), 1);
        let mut inflight: BinaryHeap<Reverse<(Nanos, Nanos)>> = (0..qd)
            .map(|_| Reverse((m.submit(0, Op::Read, 8192), 0)))
            .collect();
        let (mut sum, mut n) = (0u64, 0u64);
        for i in 0..20_000 {
            let Reverse((done, submitted)) = inflight.pop().unwrap();
            if i >= 1_000 {
                sum += done - submitted;
                n += 1;
            }
            inflight.push(Reverse((m.submit(done, Op::Read, 8192), done)));
        }
        let mean_us = sum as f64 / n as f64 / 1e3;
        let want = 108.0 + 13.0 * (qd - 1) as f64;
        assert!(
            (mean_us - want).abs() < 0.01,
            "QD{qd}: {mean_us} µs, want {want}"
        );
    }
}

#[test]
fn operations_queued_for_a_channel_do_not_slow_those_being_served() {
    // 2 channels, 10 reads at once: they go two at a time, each beside
    // one other, so 5 rounds of 108 + 10 µs; counting the queue would
    // make the last ones take up to 108 + 9 × 10 µs each.
    let mut m = DeviceModel::new(&contended(2, 10.0, serde_json::json!(null)), 1);
    let last = (0..10).map(|_| m.submit(0, Op::Read, 8192)).max().unwrap();
    assert!(last <= 5 * 118 * US + 10 * US, "{last}");
    assert!(last >= 5 * 108 * US, "{last}");
}

#[test]
fn contention_counts_what_is_on_the_device_when_a_held_operation_starts() {
    // 10 writes per 10 ms window: the 11th waits for the next window,
    // when the first ten are long done, and runs alone.
    let caps =
        serde_json::json!({ "write_iops": 1000, "bucket_ms": 10, "limiter": "blk_throttle" });
    let mut m = DeviceModel::new(&contended(64, 10.0, caps), 1);
    let near = |got: Nanos, want: f64| (got as f64 - want).abs() <= 1.0;
    for i in 0..10u64 {
        let want = (58 * US + i * 10 * US) as f64 + i as f64 * XFER_8K;
        assert!(near(m.submit(0, Op::Write, 8192), want), "write {i}");
    }
    assert_eq!(m.submit(0, Op::Write, 8192), 10 * MS + 58 * US);
    // The 12th starts in the same window as the 11th and sees it.
    assert_eq!(m.submit(0, Op::Write, 8192), 10 * MS + 68 * US);
    // A read, not capped, runs now beside nothing: the held writes are
    // not on the device yet.
    assert_eq!(m.submit(MS, Op::Read, 8192), MS + 108 * US);
}

/// Which `window_ms` window an operation that completed at `done` ran
/// in (its start, service and a shared-medium wait are well under one).
fn window_of(done: Nanos, window_ms: u64) -> u64 {
    done / (window_ms * MS)
}

#[test]
fn blk_throttle_grants_a_budget_per_window_then_stalls() {
    // 1000 write IOPS in 10 ms windows: 10 per window. 25 writes at once:
    // 10 go now, 10 when the next window opens, 5 in the one after.
    let p = constant(
        64,
        serde_json::json!({ "write_iops": 1000, "bucket_ms": 10, "limiter": "blk_throttle" }),
    );
    let mut m = DeviceModel::new(&p, 1);
    let windows: Vec<u64> = (0..25)
        .map(|_| window_of(m.submit(0, Op::Write, 8192), 10))
        .collect();
    let expected: Vec<u64> = (0..25).map(|i| i / 10).collect();
    assert_eq!(windows, expected);
    // Reads have their own (absent) cap.
    assert_eq!(window_of(m.submit(MS, Op::Read, 8192), 10), 0);
    // While the backlog lasts, windows stay back to back: the window
    // that opened at 20 ms has 5 left, then the next opens at 30 ms.
    for _ in 0..5 {
        assert_eq!(window_of(m.submit(21 * MS, Op::Write, 8192), 10), 2);
    }
    assert_eq!(window_of(m.submit(21 * MS, Op::Write, 8192), 10), 3);
    // After a quiet spell a window opens at the first arrival (103 ms):
    // ten go at once, the eleventh at 113 ms.
    let t = 103 * MS;
    for _ in 0..10 {
        assert!(m.submit(t, Op::Write, 8192) < t + MS);
    }
    let late = m.submit(t, Op::Write, 8192);
    assert!((t + 10 * MS..t + 11 * MS).contains(&late), "{late}");
}

#[test]
fn token_bucket_paces_where_blk_throttle_stalls() {
    // Same cap, 30 writes at once: the token bucket sends the 11th at
    // about 1 ms, the 30th at about 20 ms.
    let bucket = constant(
        64,
        serde_json::json!({ "write_iops": 1000, "bucket_ms": 10 }),
    );
    let mut m = DeviceModel::new(&bucket, 1);
    let d: Vec<Nanos> = (0..30).map(|_| m.submit(0, Op::Write, 8192)).collect();
    assert!((MS..2 * MS).contains(&d[10]), "{}", d[10]);
    assert!((20 * MS..21 * MS).contains(&d[29]), "{}", d[29]);
}

#[test]
fn kernel_writeback_passes_the_caps_only_where_the_profile_says() {
    let caps = |uncapped: bool| {
        constant(
            64,
            serde_json::json!({ "write_iops": 100, "bucket_ms": 0,
                                "kernel_writeback_uncapped": uncapped }),
        )
    };
    let mut m = DeviceModel::new(&caps(true), 1);
    m.submit(0, Op::Write, 8192);
    // The cap is spent, but the kernel's writeback is not charged...
    assert!(m.submit_io(0, Op::Write, 8192, true).0 < MS);
    // ...while a write PostgreSQL starts itself waits 10 ms.
    assert!(m.submit(0, Op::Write, 8192) >= 10 * MS);
    let mut m = DeviceModel::new(&caps(false), 1);
    m.submit(0, Op::Write, 8192);
    assert!(m.submit_io(0, Op::Write, 8192, true).0 >= 10 * MS);
}

#[test]
fn an_fsyncs_writeback_is_capped_and_the_wal_queues_behind_it_the_flushers_is_not() {
    use crate::core::io::IoKind;
    let throttle = constant(
        64,
        serde_json::json!({ "write_iops": 1000, "bucket_ms": 100, "limiter": "blk_throttle",
                            "kernel_writeback_uncapped": true }),
    );
    let wal = IoKind::WalWrite {
        segment: 0,
        offset: 0,
        len: 8192,
    };
    // 500 runs of an fsync's writeback: half a second of the cap, and the
    // WAL write handed out after them goes after them.
    let mut m = DeviceModel::new(&throttle, 1);
    for i in 0..500 {
        let run = IoKind::Writeback {
            block: 10 * i,
            pages: 3,
            flusher: false,
        };
        m.submit_request(0, run);
    }
    let (done, _) = m.submit_request(0, wal);
    assert!(done >= 400 * MS, "{done}");
    // The flusher's are charged to no cgroup: the WAL waits only for the
    // medium to carry them (12 MB at 1,000 MiB/s), not for the cap.
    let mut m = DeviceModel::new(&throttle, 1);
    for i in 0..500 {
        let run = IoKind::Writeback {
            block: 10 * i,
            pages: 3,
            flusher: true,
        };
        m.submit_request(0, run);
    }
    let (done, _) = m.submit_request(0, wal);
    assert!(done < 20 * MS, "{done}");
    // A page copied into the modelled page cache reaches no device.
    assert_eq!(m.submit_request(5, IoKind::CacheWrite { block: 1 }).0, 5);
    assert_eq!(m.counted_ios()[1], 1.0);
    // The disk got them all the same (diskstats counts them): a run of
    // three adjacent pages is one write, and the WAL write its own.
    assert_eq!(m.disk_ios(), [0.0, 501.0]);
}

#[test]
fn uncapped_writeback_leaves_the_next_operation_its_own_count() {
    use crate::core::io::IoKind;
    let throttle = constant(
        64,
        serde_json::json!({ "write_iops": 1000, "bucket_ms": 100, "limiter": "blk_throttle",
                            "kernel_writeback_uncapped": true, "op_size_kib": 256 }),
    );
    let mut m = DeviceModel::new(&throttle, 1);
    // A flusher's run of 64 pages (512 KiB): two I/Os on the disk, none
    // on the cap; then a 1 MiB read, four I/Os of its own.
    let run = IoKind::Writeback {
        block: 0,
        pages: 64,
        flusher: true,
    };
    m.submit_request(0, run);
    m.submit(0, Op::Read, 1 << 20);
    assert_eq!(m.counted_ios(), [4.0, 0.0]);
    assert_eq!(m.disk_ios(), [4.0, 2.0]);
}

#[test]
fn channels_queue_fifo() {
    let p = constant(2, serde_json::json!(null));
    let mut m = DeviceModel::new(&p, 1);
    let d: Vec<Nanos> = (0..4).map(|_| m.submit(0, Op::Flush, 0)).collect();
    assert_eq!(d, vec![100 * US, 100 * US, 200 * US, 200 * US]);
}

#[test]
fn the_medium_is_shared() {
    // 1 MiB at 1000 MiB/s is ~1 ms; two at once on two channels share
    // the medium: the second finishes a transfer later.
    let p = constant(2, serde_json::json!(null));
    let mut m = DeviceModel::new(&p, 1);
    let a = m.submit(0, Op::Read, 1 << 20);
    let b = m.submit(0, Op::Read, 1 << 20);
    let xfer = 1e9 / 1000.0;
    let service = 108_000.0 - XFER_8K;
    assert!((a as f64 - (xfer + service)).abs() < 2.0, "{a}");
    assert!((b as f64 - (2.0 * xfer + service)).abs() < 2.0, "{b}");
}

#[test]
fn iops_cap_paces_after_the_bucket_is_spent() {
    // 1000 IOPS, bucket 10 ms = 10 tokens: ten go at once, then one per ms.
    let p = constant(64, serde_json::json!({ "iops": 1000, "bucket_ms": 10 }));
    let mut m = DeviceModel::new(&p, 1);
    let d: Vec<Nanos> = (0..30).map(|_| m.submit(0, Op::Flush, 0)).collect();
    // Flushes do not count by default.
    assert!(d.iter().all(|&t| t == 100 * US));
    let d: Vec<Nanos> = (0..30).map(|_| m.submit(0, Op::Write, 8192)).collect();
    let w = 58 * US;
    // The first ten share the medium (8 KiB each), so they trickle out
    // a transfer apart, but none waits for the cap.
    assert!(d[..10].iter().all(|&t| t < 200 * US), "{d:?}");
    for (i, &t) in d[10..].iter().enumerate() {
        let want = (i as u64 + 1) * MS + w;
        assert!(t.abs_diff(want) <= 1, "op {}: {t} vs {want}", i + 10);
    }
}

#[test]
fn large_io_counts_as_several_operations() {
    // op_size 256 KiB: 1 MiB counts 4, 256 KiB counts 1, 257 KiB 2.
    let p = constant(
        64,
        serde_json::json!({ "iops": 1000, "op_size_kib": 256, "bucket_ms": 0 }),
    );
    let mut m = DeviceModel::new(&p, 1);
    let mut t = 0;
    for (bytes, ios) in [
        (1 << 20, 4.0),
        (256 << 10, 1.0),
        ((256 << 10) + 1, 2.0),
        (8192, 1.0),
    ] {
        let before = m.counted_ios()[1];
        t = m.submit(t, Op::Write, bytes);
        assert_eq!(m.counted_ios()[1] - before, ios, "{bytes} bytes");
    }
    // No unit: a request is one, up to the kernel's 1 MiB.
    let p = constant(64, serde_json::json!({ "iops": 1000, "bucket_ms": 0 }));
    let mut m = DeviceModel::new(&p, 1);
    m.submit(0, Op::Write, 1 << 20);
    assert_eq!(m.counted_ios(), [0.0, 1.0]);
    m.submit(0, Op::Read, 2 << 20);
    assert_eq!(m.counted_ios(), [2.0, 1.0]);
}

#[test]
fn flush_counts_as_a_write_io_when_asked() {
    let p = constant(
        64,
        serde_json::json!({ "write_iops": 1000, "bucket_ms": 0, "flush_counts_as_io": true }),
    );
    let mut m = DeviceModel::new(&p, 1);
    // write+flush pairs at QD1: two write I/Os each, so 500 per second.
    let mut t = 0;
    for _ in 0..1000 {
        t = m.submit(t, Op::Write, 8192);
        t = m.submit(t, Op::Flush, 0);
    }
    let rate = 1000.0 / (t as f64 / 1e9);
    assert!((rate - 500.0).abs() < 5.0, "{rate}");
    // Reads have their own direction: uncapped.
    let t2 = m.submit(t, Op::Read, 8192);
    assert!((t2 - t).abs_diff(108 * US) <= 1);
}

#[test]
fn bytes_cap_paces_by_size() {
    // 100 MiB/s, no bucket: 1 MiB reads go at 100 per second.
    let p = constant(64, serde_json::json!({ "mib_s": 100, "bucket_ms": 0 }));
    let mut m = DeviceModel::new(&p, 1);
    let last = (0..200).map(|_| m.submit(0, Op::Read, 1 << 20)).last();
    let secs = last.unwrap() as f64 / 1e9;
    assert!((secs - 2.0).abs() < 0.02, "{secs}");
}

#[test]
fn burst_credits_run_out_to_baseline() {
    // Burst at 1000 IOPS for 2000 credits, baseline 100 IOPS.
    let p = constant(
        64,
        serde_json::json!({ "iops": 1000, "bucket_ms": 0,
            "burst": { "size_ios": 2000, "baseline_iops": 100 } }),
    );
    let mut m = DeviceModel::new(&p, 1);
    // Closed loop at QD 16 for 6 s of virtual time.
    let mut inflight: BinaryHeap<Reverse<Nanos>> = (0..16)
        .map(|_| Reverse(m.submit(0, Op::Read, 8192)))
        .collect();
    let mut per_second = [0u32; 6];
    while let Some(Reverse(t)) = inflight.pop() {
        if t >= 6 * SEC {
            break;
        }
        per_second[(t / SEC) as usize] += 1;
        inflight.push(Reverse(m.submit(t, Op::Read, 8192)));
    }
    // Credits: 2000 at start + 100/s refill, spent at 1000/s: ~2.2 s of burst.
    assert!(
        per_second[0] >= 990 && per_second[1] >= 990,
        "{per_second:?}"
    );
    assert!(
        per_second[4] <= 110 && per_second[5] <= 110,
        "{per_second:?}"
    );
}

#[test]
fn media_flushes_are_serial_and_wait_for_writes() {
    let mut p = constant(8, serde_json::json!(null));
    p.flush_to_media = true;
    p.flush = crate::device::profile::Latency {
        median_us: 1000.0,
        p99_us: 1000.0,
    };
    let mut m = DeviceModel::new(&p, 1);
    // Four flushes at once: one after another.
    let d: Vec<Nanos> = (0..4).map(|_| m.submit(0, Op::Flush, 0)).collect();
    let service = 1_000_000.0 - XFER_8K;
    for (i, &t) in d.iter().enumerate() {
        let want = (i + 1) as f64 * service;
        assert!((t as f64 - want).abs() <= 4.0, "{t} vs {want}");
    }
    // A flush after 100 MiB of writes waits for them to be destaged
    // (~100 ms at 1000 MiB/s).
    let t0 = d[3];
    let mut t = t0;
    for _ in 0..100 {
        t = t.max(m.submit(t0, Op::Write, 1 << 20));
    }
    let f = m.submit(t0, Op::Flush, 0);
    assert!(f >= t0 + 100 * MS, "{} ms", (f - t0) as f64 / 1e6);
}

#[test]
fn cheap_flushes_run_in_parallel() {
    let p = constant(8, serde_json::json!(null));
    let mut m = DeviceModel::new(&p, 1);
    let d: Vec<Nanos> = (0..8).map(|_| m.submit(0, Op::Flush, 0)).collect();
    assert!(d.iter().all(|&t| t == 100 * US));
}

#[test]
fn round_trip_is_added_outside_the_channels() {
    let mut p = constant(1, serde_json::json!(null));
    p.network_rtt_us = 50.0;
    p.read.median_us = 158.0;
    p.read.p99_us = 158.0;
    let mut m = DeviceModel::new(&p, 1);
    let a = m.submit(0, Op::Read, 8192);
    let b = m.submit(0, Op::Read, 8192);
    // One channel: the second waits for the first's service, not its trip.
    assert!(a.abs_diff(158 * US) <= 1, "{a}");
    assert!(b.abs_diff(158 * US + 108 * US) <= 2, "{b}");
}

#[test]
fn same_seed_same_completions() {
    let p = Profile::shipped("gp3").unwrap();
    let run = |seed| {
        let mut m = DeviceModel::new(&p, seed);
        let mut out = Vec::new();
        let mut now = 0;
        for i in 0..10_000u64 {
            let op = [Op::Read, Op::Write, Op::Flush][(i % 3) as usize];
            let bytes = 8192 << (i % 8);
            out.push(m.submit(now, op, bytes));
            now += (i * 7919) % (200 * US);
        }
        out
    };
    assert_eq!(run(42), run(42));
    assert_ne!(run(42), run(43));
}

#[test]
#[should_panic(expected = "device model: submit at")]
fn time_must_not_go_back() {
    let p = Profile::shipped("nvme").unwrap();
    let mut m = DeviceModel::new(&p, 1);
    m.submit(10, Op::Read, 8192);
    m.submit(9, Op::Read, 8192);
}
