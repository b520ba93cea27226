//! Whole-database tests, run by the real driver loop against the simulated
//! device in virtual time: a device model of fixed latencies per kind of
//! operation (every operation on a channel of its own), so only the core
//! shapes a run. The tests' only window into the core between events is the
//! driver's observer. This file is their harness; the tests are in tests/,
//! a file a topic.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use super::*;
use crate::core::config::ReclaimCpu;
use crate::core::cpu::CpuGrowth;
use crate::core::io::{IoKind, IoRequest};
use crate::core::test_support::config;
use crate::core::time::{SEC, US};
use crate::device::model::DeviceModel;
use crate::device::profile::Profile;
use crate::engine::Device;
use crate::engine::driver::drive_observed;
use crate::engine::sim::SimDevice;
use crate::stop::Stop;
use crate::workload::{Script, builtin};

mod buffers;
mod checkpoint;
mod cpu;
mod invariants;
mod locks;
mod pgbench_threads;
mod standby;
mod vacuum;
mod wal_flush;
mod whole_run;
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
    let stop = Stop::new();
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
