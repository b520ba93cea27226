//! Whole-database tests, run by the real driver loop against the simulated
//! device in virtual time, checked at every call (`engine/checked.rs`): a
//! device model of fixed latencies per kind of
//! operation (every operation on a channel of its own), so only the core
//! shapes a run. The tests' only window into the core between events is the
//! driver's observer. This file is their harness; the tests are in tests/,
//! a file a topic.

use std::cell::{Cell, RefCell};
use std::rc::Rc;

use super::*;
use crate::core::config::ReclaimCpu;
use crate::core::cpu_growth::CpuGrowth;
use crate::core::io::IoKind;
use crate::core::test_support::config;
use crate::core::time::{SEC, US};
use crate::device::model::DeviceModel;
use crate::device::profile::Profile;
use crate::engine::checked::{Checked, Event, drive_checked};
use crate::engine::sim::SimDevice;
use crate::workload::{Script, builtin};

mod buffers;
mod checkpoint;
mod cpu;
mod invariants;
mod kernel_writeback;
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
    /// Pages written into the modelled page cache, and the runs the kernel
    /// wrote back (block, pages, by the flusher rather than an fsync).
    cache_writes: Vec<u64>,
    written_back: Vec<(u64, u32, bool)>,
    /// The most fsync writes and flusher writes in flight at once, and the
    /// data-file flushes handed out while fsync writes were.
    max_fsync_in_flight: usize,
    max_flusher_in_flight: usize,
    data_syncs_over_fsync_writes: u64,
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
    cache_writes: Vec<u64>,
    written_back: Vec<(u64, u32, bool)>,
    fsync_in_flight: usize,
    max_fsync_in_flight: usize,
    flusher_in_flight: usize,
    max_flusher_in_flight: usize,
    data_syncs_over_fsync_writes: u64,
}

fn is_wal(kind: IoKind) -> bool {
    matches!(kind, IoKind::WalWrite { .. } | IoKind::WalSync { .. })
}

impl Seen {
    /// Records a request accepted or completed; `leader_waking`, whether
    /// the next flush's leader was waking when the driver last showed the
    /// database to its observer.
    fn record(&mut self, event: Event, leader_waking: bool) {
        let req = match event {
            Event::Submitted(req) => req,
            Event::Completed(kind) => {
                if is_wal(kind) {
                    self.wal_in_flight -= 1;
                }
                match kind {
                    IoKind::Writeback { flusher: false, .. } => self.fsync_in_flight -= 1,
                    IoKind::Writeback { flusher: true, .. } => self.flusher_in_flight -= 1,
                    _ => {}
                }
                return;
            }
        };
        if is_wal(req.kind) && leader_waking {
            self.wal_ios_while_leader_waking += 1;
        }
        match req.kind {
            IoKind::ReadPage { block } => self.reads.push(block),
            IoKind::ReadRun { block, pages } => {
                self.reads.extend(block..block + u64::from(pages));
                self.runs += 1;
            }
            IoKind::WritePage { block, .. } => self.writes.push(block),
            IoKind::CacheWrite { block } => self.cache_writes.push(block),
            IoKind::Writeback {
                block,
                pages,
                flusher,
            } => {
                self.written_back.push((block, pages, flusher));
                if flusher {
                    self.flusher_in_flight += 1;
                    self.max_flusher_in_flight =
                        self.max_flusher_in_flight.max(self.flusher_in_flight);
                } else {
                    self.fsync_in_flight += 1;
                    self.max_fsync_in_flight = self.max_fsync_in_flight.max(self.fsync_in_flight);
                }
            }
            IoKind::DataSync => {
                self.data_syncs_over_fsync_writes += u64::from(self.fsync_in_flight > 0);
            }
            IoKind::WalSync { .. } => self.syncs += 1,
            IoKind::WalRead { len, .. } => self.wal_read_bytes += len,
            IoKind::WalWrite { .. }
            | IoKind::StandbyWalWrite { .. }
            | IoKind::StandbyWalSync { .. } => {}
        }
        if is_wal(req.kind) {
            self.wal_in_flight += 1;
            self.max_wal_in_flight = self.max_wal_in_flight.max(self.wal_in_flight);
        }
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
    // The simulated device, checked, recording what it is asked, with its
    // timers handed over `timer_late` late (a busy real host).
    let mut disk = Checked::new(Box::new(sim))
        .timers_late(lat.timer_late)
        .watch({
            let (seen, leader_waking) = (Rc::clone(&seen), Rc::clone(&leader_waking));
            move |event| seen.borrow_mut().record(event, leader_waking.get())
        });
    let mut leader_waking_seen = 0;
    drive_checked(&mut db, &mut disk, |db| {
        leader_waking.set(db.wal_leader.waking);
        if db.wal_leader.waking {
            leader_waking_seen += 1;
        }
    })
    .unwrap();
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
        cache_writes: seen.cache_writes,
        written_back: seen.written_back,
        max_fsync_in_flight: seen.max_fsync_in_flight,
        max_flusher_in_flight: seen.max_flusher_in_flight,
        data_syncs_over_fsync_writes: seen.data_syncs_over_fsync_writes,
    }
}
