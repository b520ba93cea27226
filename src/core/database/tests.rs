//! Whole-database tests, run by the real driver loop against the simulated
//! device in virtual time: a device model of fixed latencies per kind of
//! operation (every operation on a channel of its own), so only the core
//! shapes a run. The tests' only window into the core between events is the
//! driver's observer.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use super::*;
use crate::core::config::ReclaimCpu;
use crate::core::cpu::CpuGrowth;
use crate::core::io::{IoKind, IoRequest, PAGE_BYTES};
use crate::core::time::{SEC, US};
use crate::device::model::DeviceModel;
use crate::device::profile::Profile;
use crate::engine::Device;
use crate::engine::driver::drive_observed;
use crate::engine::sim::SimDevice;
use crate::workload::{Script, builtin};

mod invariants;
mod pgbench_threads;
mod standby;
mod vacuum;
use vacuum::bloated_table;

/// Device latencies for the fake disk.
#[derive(Clone, Copy)]
struct Lat {
    read: Nanos,
    write: Nanos,
    sync: Nanos,
    /// How late the loop hands the core its timers (a busy real host).
    timer_late: Nanos,
}

const FAST: Lat = Lat {
    read: 100 * US,
    write: 50 * US,
    sync: 1_000 * US,
    timer_late: 0,
};

/// A device that takes 1 µs for everything: only CPU and locks shape a run.
const INSTANT: Lat = Lat {
    read: US,
    write: US,
    sync: US,
    timer_late: 0,
};

/// A two-second pgbench-like run's settings (PostgreSQL's defaults where
/// the tests do not change them); also used by the engines' conformance suite.
pub(crate) fn config(clients: u32, scale_blocks_hint: u32) -> CoreConfig {
    CoreConfig {
        clients,
        cpus: 2,
        duration: Some(2 * SEC),
        transactions_per_client: None,
        seed: 42,
        nbuffers: scale_blocks_hint,
        wal_buffers_bytes: 512 * PAGE_BYTES,
        synchronous_commit: crate::core::replication::SynchronousCommit::On,
        replication: None,
        archive: None,
        commit_delay: 0,
        commit_siblings: 5,
        full_page_writes: true,
        checkpoint_timeout: 300 * SEC,
        checkpoint_completion_target: 0.9,
        checkpoint_segments: 33,
        bgwriter_delay: 200 * MS,
        bgwriter_lru_maxpages: 100,
        bgwriter_lru_multiplier: 2.0,
        wal_writer_delay: 200 * MS,
        wal_writer_flush_after: 1024 * 1024,
        os_cache_pages: 0,
        wal_segments: 4,
        round_trip: 20 * US,
        read_cpu: 0,
        cpu_growth: Default::default(),
        write_cpu: 0,
        reclaim_cpu: Default::default(),
        wal_flush_cpu: 0,
        threads_per_core: 1,
        os_cache_after_load: false,
        cpu_speed: 1.0,
        client_threads: 0,
        client_cpu: 0,
        backend_flush_after: 0,
        bgwriter_flush_after: 512 * 1024,
        checkpoint_flush_after: 256 * 1024,
        rate: None,
        latency_limit: None,
        autovacuum: true,
        autovacuum_naptime: 60 * SEC,
        autovacuum_cost_limit: 200,
        autovacuum_cost_delay: 2 * MS,
        vacuum_table: None,
        vacuum_shape: None,
        recovery: None,
        maintenance_work_mem: 64 << 20,
        vacuum_cost_page: [1, 2, 20],
        vacuum_cost_limit: 200,
        vacuum_cost_delay: 0,
    }
}

struct Outcome {
    db: Database,
    syncs: u64,
    max_wal_in_flight: usize,
    /// Events after which the next flush's leader was still waking, and WAL
    /// I/Os handed out while it was.
    leader_waking_seen: u64,
    wal_ios_while_leader_waking: u64,
    reads: Vec<u64>,
    writes: Vec<u64>,
    /// Merged reads (readahead windows) among the reads.
    runs: u64,
    /// WAL bytes read (a standby's catch-up).
    wal_read_bytes: u64,
}

/// A disk whose every operation of a kind takes the same time: the model of
/// a profile with constant latencies, as many channels as a profile may
/// have, no round trip and no bandwidth to speak of.
fn fixed_latency_profile(lat: Lat) -> Profile {
    let us = |ns: Nanos| ns as f64 / US as f64;
    let op = |ns: Nanos| serde_json::json!({ "median_us": us(ns), "p99_us": us(ns) });
    let v = serde_json::json!({
        "name": "fixed",
        "description": "fixed latencies per kind of operation",
        "source": "test",
        "read": op(lat.read),
        "write": op(lat.write),
        "flush": op(lat.sync),
        "channels": crate::device::profile::CHANNELS_MAX,
        "bandwidth_mib_s": 1e12,
        "network_rtt_us": 0,
        "flush_to_media": false,
        "caps": null
    });
    Profile::from_json(&v.to_string(), "test").unwrap()
}

/// What the test disk saw.
#[derive(Default)]
struct Seen {
    syncs: u64,
    wal_in_flight: usize,
    max_wal_in_flight: usize,
    wal_ios_while_leader_waking: u64,
    reads: Vec<u64>,
    writes: Vec<u64>,
    runs: u64,
    wal_read_bytes: u64,
}

/// The simulated device, recording what it is asked, with its timers
/// handed over `timer_late` late (a busy real host).
struct TestDisk {
    sim: SimDevice,
    timer_late: Nanos,
    /// Tokens in flight, and whether each is a WAL I/O.
    in_flight: HashMap<Token, bool>,
    seen: Rc<RefCell<Seen>>,
    /// Whether the next flush's leader was waking when the driver last
    /// showed the database to its observer.
    leader_waking: Rc<Cell<bool>>,
}

impl Device for TestDisk {
    fn submit(&mut self, req: IoRequest) -> anyhow::Result<()> {
        let mut seen = self.seen.borrow_mut();
        let is_wal = matches!(req.kind, IoKind::WalWrite { .. } | IoKind::WalSync { .. });
        if is_wal && self.leader_waking.get() {
            seen.wal_ios_while_leader_waking += 1;
        }
        match req.kind {
            IoKind::ReadPage { block } => seen.reads.push(block),
            IoKind::ReadRun { block, pages } => {
                seen.reads.extend(block..block + u64::from(pages));
                seen.runs += 1;
            }
            IoKind::WritePage { block, .. } => seen.writes.push(block),
            IoKind::WalSync { .. } => seen.syncs += 1,
            IoKind::WalRead { len, .. } => seen.wal_read_bytes += len,
            IoKind::WalWrite { .. }
            | IoKind::DataSync
            | IoKind::StandbyWalWrite { .. }
            | IoKind::StandbyWalSync { .. } => {}
        }
        if is_wal {
            seen.wal_in_flight += 1;
            seen.max_wal_in_flight = seen.max_wal_in_flight.max(seen.wal_in_flight);
        }
        self.in_flight.insert(req.token, is_wal);
        self.sim.submit(req)
    }

    fn wait(
        &mut self,
        deadline: Option<Nanos>,
        max_block: Nanos,
        out: &mut Vec<IoCompletion>,
    ) -> anyhow::Result<()> {
        assert!(
            deadline.is_some() || !self.in_flight.is_empty(),
            "no I/O in flight and no timer: the run would never end"
        );
        let first = out.len();
        self.sim
            .wait(deadline.map(|d| d + self.timer_late), max_block, out)?;
        for c in &out[first..] {
            if self.in_flight.remove(&c.token).expect("a token in flight") {
                self.seen.borrow_mut().wal_in_flight -= 1;
            }
        }
        assert!(self.sim.now() < 3_600 * SEC, "simulation ran away");
        Ok(())
    }

    fn now(&self) -> Nanos {
        self.sim.now()
    }

    fn name(&self) -> &'static str {
        "test disk"
    }

    fn timer_spin(&self) -> Nanos {
        self.sim.timer_spin()
    }
}

/// Drive `db` to the end against a fake device with fixed latencies.
fn simulate(cfg: CoreConfig, scale: u64, lat: Lat) -> Outcome {
    let w = Script::new(&builtin("tpcb-like").unwrap(), scale).unwrap();
    simulate_workload(cfg, Box::new(w), lat)
}

fn simulate_workload(cfg: CoreConfig, w: Box<dyn Workload>, lat: Lat) -> Outcome {
    // Each standby's WAL device: the same fixed latencies.
    let mut sim = SimDevice::new(DeviceModel::new(&fixed_latency_profile(lat), 1));
    for i in 0..cfg.replication.as_ref().map_or(0, |r| r.standbys.len()) {
        sim.add_standby(DeviceModel::new(&fixed_latency_profile(lat), 2 + i as u64));
    }
    let mut db = Database::new(cfg, w);
    let seen = Rc::new(RefCell::new(Seen::default()));
    let leader_waking = Rc::new(Cell::new(false));
    let mut disk = TestDisk {
        sim,
        timer_late: lat.timer_late,
        in_flight: HashMap::new(),
        seen: Rc::clone(&seen),
        leader_waking: Rc::clone(&leader_waking),
    };
    let mut leader_waking_seen = 0;
    let stop = Arc::new(AtomicBool::new(false));
    drive_observed(&mut db, &mut disk, &stop, None, &mut |_| {}, |db| {
        leader_waking.set(db.wal_leader.waking);
        if db.wal_leader.waking {
            leader_waking_seen += 1;
        }
    })
    .unwrap();
    assert!(disk.in_flight.is_empty());
    drop(disk);
    let seen = Rc::into_inner(seen).unwrap().into_inner();
    Outcome {
        db,
        syncs: seen.syncs,
        max_wal_in_flight: seen.max_wal_in_flight,
        leader_waking_seen,
        wal_ios_while_leader_waking: seen.wal_ios_while_leader_waking,
        reads: seen.reads,
        writes: seen.writes,
        runs: seen.runs,
        wal_read_bytes: seen.wal_read_bytes,
    }
}

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

#[test]
fn full_page_images_on_first_touch_only_until_next_checkpoint() {
    let mut cfg = config(4, 8192);
    cfg.duration = Some(3 * SEC);
    let o = simulate(cfg.clone(), 1, FAST);
    let fpi_no_ckpt = o.db.stats().counters.full_page_images;
    // Scale 1: every page touched gets one image, and no more: at most the
    // number of distinct modified pages.
    let w = Script::new(&builtin("tpcb-like").unwrap(), 1).unwrap();
    let a = w.table("pgbench_accounts").unwrap();
    assert!(fpi_no_ckpt <= a.heap.blocks + a.index.as_ref().unwrap().blocks() + 4);
    assert_eq!(o.db.stats().counters.checkpoints_started, 0);

    cfg.checkpoint_timeout = SEC;
    let o = simulate(cfg, 1, FAST);
    let c = o.db.stats().counters;
    assert!(c.checkpoints_started >= 2, "{c:?}");
    assert!(c.checkpoints_done >= 1);
    assert!(
        c.full_page_images > fpi_no_ckpt,
        "images logged again after each checkpoint"
    );
    assert!(c.checkpoint_writes > 0);
    assert!(c.data_syncs >= 1);
}

#[test]
fn wal_volume_triggers_checkpoints() {
    let mut cfg = config(8, 4096);
    cfg.checkpoint_segments = 1; // 16 MiB of WAL
    cfg.duration = Some(4 * SEC);
    let o = simulate(cfg, 20, FAST);
    let c = o.db.stats().counters;
    assert!(c.checkpoints_requested >= 1, "{c:?}");
    assert_eq!(c.checkpoints_timed, 0);
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
fn transactions_per_client_mode_stops_when_all_done() {
    let mut cfg = config(3, 2048);
    cfg.duration = None;
    cfg.transactions_per_client = Some(50);
    let o = simulate(cfg, 2, FAST);
    assert_eq!(o.db.stats().transactions, 150);
    assert!(o.db.is_finished());
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
