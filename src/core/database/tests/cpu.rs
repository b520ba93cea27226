//! The modelled CPU: a late loop does not stretch it, few cores bound a
//! run, statement and I/O CPU growing with the backends, a read's CPU, and
//! reclaim once the page cache is full.

use super::*;

#[test]
fn a_late_loop_does_not_stretch_modelled_cpu_or_round_trips() {
    let lat = |timer_late| Lat {
        read: 50 * US,
        write: 20 * US,
        sync: 80 * US,
        timer_late,
    };
    let per_tx = |o: &Outcome, b: Bucket| {
        let s = o.db.stats();
        s.bucket_sum_ns[b.index()] as f64 / s.transactions as f64
    };
    let on_time = simulate(config(1, 8192), 20, lat(0));
    let late = simulate(config(1, 8192), 20, lat(150 * US));
    // Timers fire at their due time: CPU and round trips are what the
    // workload says, however late the loop handles them.
    for b in [Bucket::Cpu, Bucket::Other] {
        let (a, l) = (per_tx(&on_time, b), per_tx(&late, b));
        assert!((l - a).abs() <= 0.01 * a, "{b:?}: {l} vs {a}");
    }
    assert_eq!(per_tx(&late, Bucket::CpuQueue), 0.0);
    // The lateness lands on the I/O issued after a late timer.
    assert!(late.db.stats().transactions < on_time.db.stats().transactions);
}

#[test]
fn cpu_bound_when_cores_are_few() {
    let mut cfg = config(16, 8192);
    cfg.cpus = 1;
    let o = simulate(cfg, 20, INSTANT);
    let s = o.db.stats();
    // 7 × 47 = 329 µs of CPU per transaction on one core: at most ~3,040 tps.
    let tps = s.transactions as f64 / 2.0;
    assert!(tps < 3_050.0 && tps > 2_300.0, "{tps}");
    assert!(s.bucket_sum_ns[Bucket::CpuQueue.index()] > 0);
}

#[test]
fn statement_cpu_grows_with_the_backends_above_the_threshold() {
    let cpu_per_tx = |growth: CpuGrowth| {
        let mut cfg = config(16, 8192);
        cfg.cpus = 1;
        cfg.cpu_growth = growth;
        let o = simulate(cfg, 20, INSTANT);
        o.db.cpu_busy_ns() as f64 / o.db.stats().transactions as f64
    };
    let flat = cpu_per_tx(CpuGrowth::default());
    // 16 backends, 8 over the threshold at 2% each: 16% more CPU.
    let grown = cpu_per_tx(CpuGrowth {
        above: 8,
        statement: 0.02,
        io: 0.0,
    });
    let ratio = grown / flat;
    assert!((1.15..1.17).contains(&ratio), "{ratio}");
    // At or under the threshold nothing changes.
    let under = cpu_per_tx(CpuGrowth {
        above: 16,
        statement: 0.02,
        io: 0.0,
    });
    assert!((under / flat - 1.0).abs() < 0.005, "{under} vs {flat}");
}

#[test]
fn io_cpu_grows_only_with_backends_inside_a_transaction() {
    let growth = CpuGrowth {
        above: 2,
        statement: 0.0,
        io: 0.5,
    };
    // Four backends always busy, two over the threshold: each read's 30 µs
    // of CPU becomes 60.
    let mut cfg = config(4, 1024);
    cfg.cpus = 64;
    cfg.read_cpu = 30 * US;
    cfg.cpu_growth = growth;
    let o = simulate(cfg.clone(), 20, FAST);
    let c = &o.db.stats().counters;
    assert!(c.read_cpu_time.count > 100, "{}", c.read_cpu_time.count);
    assert_eq!(c.read_cpu_time.mean_us(), 60.0);
    // At 50 transactions a second the four are rarely in a transaction at
    // once (each lasts well under a millisecond): reads cost about 30 µs.
    cfg.rate = Some(50.0);
    let o = simulate(cfg, 20, FAST);
    let c = &o.db.stats().counters;
    assert!(c.read_cpu_time.count > 20, "{}", c.read_cpu_time.count);
    let mean = c.read_cpu_time.mean_us();
    assert!((30.0..33.0).contains(&mean), "{mean}");
}

#[test]
fn a_reads_cpu_is_page_read_time_and_page_cache_hits_pay_it_too() {
    // A core for everyone: the read's CPU never queues, so it is exact.
    let mut cfg = config(4, 1024);
    cfg.cpus = 64;
    cfg.read_cpu = 30 * US;
    let o = simulate(cfg.clone(), 20, FAST);
    let s = o.db.stats();
    let c = &s.counters;
    assert!(c.read_time.count > 100, "{}", c.read_time.count);
    assert_eq!(c.read_cpu_time.mean_us(), 30.0);
    assert!(c.read_cpu_time.count.abs_diff(c.read_time.count) <= 4);
    // page_read holds the device's 100 µs and the syscall's 30 µs (and the
    // odd wait for another backend's read of the same page), as PostgreSQL's
    // blk_read_time times a read.
    let per_read = s.bucket_sum_ns[Bucket::PageRead.index()] as f64 / c.read_time.count as f64;
    assert!((129_000.0..136_000.0).contains(&per_read), "{per_read}");

    // A kernel page cache holding everything: after the first touch, reads
    // are hits, which cost no device time but still a syscall and a copy.
    cfg.os_cache_pages = 1 << 20;
    let o = simulate(cfg, 20, FAST);
    let c = &o.db.stats().counters;
    assert!(c.os_cache_hits > 100, "{}", c.os_cache_hits);
    assert!(
        c.read_cpu_time
            .count
            .abs_diff(c.read_time.count + c.os_cache_hits)
            <= 4
    );
    assert_eq!(c.read_cpu_time.mean_us(), 30.0);
}

#[test]
fn reclaim_cpu_applies_once_the_page_cache_is_full() {
    // A core for everyone, so CPU never queues and the figures are exact.
    let mut cfg = config(4, 1024);
    cfg.cpus = 64;
    cfg.read_cpu = 30 * US;
    cfg.reclaim_cpu = ReclaimCpu {
        read: 80 * US,
        per_kib_written: 0,
    };
    // A page cache far smaller than the data: full after its first pages,
    // so nearly every device read pays the reclaim figure.
    cfg.os_cache_pages = 64;
    let o = simulate(cfg.clone(), 20, FAST);
    let c = &o.db.stats().counters;
    assert!(c.read_time.count > 100, "{}", c.read_time.count);
    let mean = c.read_cpu_time.mean_us();
    assert!((75.0..=80.0).contains(&mean), "{mean}");

    // A page cache that holds everything never reclaims: reads and hits
    // cost the read's own figure.
    cfg.os_cache_pages = 1 << 20;
    let o = simulate(cfg.clone(), 20, FAST);
    assert_eq!(o.db.stats().counters.read_cpu_time.mean_us(), 30.0);

    // Writes under a full cache: each KiB of WAL a transaction inserts costs
    // CPU before its commit, and each page a backend evicts costs 8 KiB of
    // it: the cpu bucket grows by both.
    let cpu_per_tx = |cfg: CoreConfig| {
        let o = simulate(cfg, 20, FAST);
        let s = o.db.stats();
        let tx = s.transactions as f64;
        let wal = s.seconds.iter().map(|x| x.wal_bytes).sum::<u64>() as f64 / tx;
        let victims = s.counters.backend_writes as f64 / tx;
        let cpu = s.bucket_sum_ns[Bucket::Cpu.index()] as f64 / tx;
        (cpu, wal, victims)
    };
    cfg.os_cache_pages = 64;
    cfg.reclaim_cpu = ReclaimCpu::default();
    let (base, _, _) = cpu_per_tx(cfg.clone());
    cfg.reclaim_cpu.per_kib_written = 10 * US;
    let (with, wal, victims) = cpu_per_tx(cfg);
    // Commit records are not charged (a few dozen bytes): the bound below.
    let expect = (wal / 1024.0 + victims * 8.0) * 10_000.0;
    assert!(
        with - base > 0.95 * expect && with - base <= expect,
        "{base} -> {with} ns/tx, {wal} WAL bytes and {victims} victim writes a tx"
    );
}
