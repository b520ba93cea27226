//! What `pgiosim iobench` runs: a raw microbenchmark of the real engines,
//! without the core, to check that an engine itself is not what limits a
//! run.
//!
//! Two tests, on files prepared by [`crate::datafiles::prepare`] and opened
//! with O_DIRECT:
//! * `randread`: keeps `--qd` uniformly random 8 KiB page reads in flight
//!   (compare with fio `--rw=randread --bs=8k --iodepth=32 --direct=1`);
//! * `walsync`: `--qd` streams (default 1), each a loop of an 8 KiB WAL
//!   write at consecutive offsets (wrapping inside one segment) followed by
//!   an fdatasync, like a WAL commit (compare with fio `--rw=write --bs=8k
//!   --fdatasync=1`).
//!
//! It reports operations per second, latency (mean, p50, p99, max) and the
//! CPU time the process used as a fraction of one core.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::{Context, Result, bail};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use super::Device;
use super::psync::PsyncDevice;
use super::uring::UringDevice;
use crate::core::io::{IoCompletion, IoKind, IoRequest, PAGE_BYTES, WAL_SEGMENT_BYTES};
use crate::core::time::{MS, Nanos, SEC};
use crate::datafiles::{self, DataDir, Layout};
use crate::stop::Stop;

/// Which engine `iobench` drives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchEngine {
    /// io_uring (the default engine of `run`).
    Uring,
    /// Worker threads doing pread/pwrite/fdatasync.
    Psync,
}

/// Which pattern `iobench` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum BenchTest {
    /// Uniformly random 8 KiB page reads, `--qd` in flight.
    Randread,
    /// 8 KiB WAL write then fdatasync, in a loop (`--qd` loops at once).
    Walsync,
}

/// One benchmark, as `iobench`'s flags ask for it.
#[derive(Debug, Clone)]
pub struct Bench {
    /// Directory for the benchmark's files (created if its parent exists).
    pub dir: PathBuf,
    /// Engine to measure.
    pub engine: BenchEngine,
    /// I/O pattern.
    pub test: BenchTest,
    /// Requests in flight [default: 32 for randread, 1 for walsync]; with
    /// psync at most [`super::psync::MAX_THREADS`].
    pub qd: Option<u32>,
    /// Length of the measurement, in seconds.
    pub seconds: u64,
    /// Size of the data file, in MiB, at most [`SIZE_MAX_MIB`].
    pub size_mib: u64,
}

/// What one `iobench` measured.
#[derive(Debug, Clone, Serialize)]
pub struct IoBenchResult {
    /// "randread" or "walsync".
    pub test: &'static str,
    /// "io_uring" or "psync".
    pub engine: &'static str,
    /// Requests (randread) or commit loops (walsync) in flight.
    pub qd: u32,
    /// File the test ran on.
    pub file: String,
    /// Size of the data file, MiB.
    pub size_mib: u64,
    /// Whether the files were reused or written first.
    pub files: &'static str,
    /// Length of the measurement, seconds.
    pub seconds: f64,
    /// Reads (randread) or write+fdatasync commits (walsync) completed.
    pub ops: u64,
    /// `ops` per second: IOPS, or syncs per second.
    pub ops_per_sec: f64,
    /// Mean latency of one read, or of one write+fdatasync, µs.
    pub lat_mean_us: f64,
    /// Median latency, µs.
    pub lat_p50_us: f64,
    /// 99th percentile latency, µs.
    pub lat_p99_us: f64,
    /// Largest latency, µs.
    pub lat_max_us: f64,
    /// User CPU time of the process during the measurement, seconds.
    pub cpu_user_s: f64,
    /// System CPU time of the process during the measurement, seconds.
    pub cpu_sys_s: f64,
    /// (user + system) / wall time: the fraction of one core used.
    pub cpu_cores: f64,
}

/// The largest `--size`: a PiB, far past any disk, and small enough that
/// its count of 8 KiB blocks cannot overflow.
pub const SIZE_MAX_MIB: u64 = 1 << 30;

/// Prepares the files, runs the test, returns what was measured.
pub fn run(b: &Bench, stop: &Stop) -> Result<IoBenchResult> {
    let blocks = b.size_mib * ((1 << 20) / PAGE_BYTES);
    let layout = Layout {
        data_blocks: blocks,
        wal_segments: 1,
        description: "iobench".to_string(),
    };
    let dd = DataDir::new(&b.dir, None);
    let _held = datafiles::lock(&dd)?;
    let prepared =
        datafiles::prepare_locked(&dd, &layout, std::io::stderr().is_terminal(), &_held, stop)?;
    let files = datafiles::open(&dd, &layout, true)?;
    let file = match b.test {
        BenchTest::Randread => files.data_path.display().to_string(),
        BenchTest::Walsync => files.wal_paths[0].display().to_string(),
    };
    let qd = b.qd.unwrap_or(match b.test {
        BenchTest::Randread => 32,
        BenchTest::Walsync => 1,
    });
    let mut dev: Box<dyn Device> = match b.engine {
        BenchEngine::Uring => Box::new(UringDevice::new(files, qd)?),
        BenchEngine::Psync => Box::new(PsyncDevice::new(files, qd as usize)?),
    };
    let duration = b.seconds * SEC;
    let mut pattern: Box<dyn Pattern> = match b.test {
        BenchTest::Randread => Box::new(RandRead {
            rng: SmallRng::seed_from_u64(0x10_be4c),
            blocks,
            issued: vec![0; qd as usize],
        }),
        BenchTest::Walsync => Box::new(WalSync {
            began: vec![0; qd as usize],
            next_offset: 0,
        }),
    };
    let m = drive(dev.as_mut(), pattern.as_mut(), duration)?;
    let wall_s = m.wall as f64 / SEC as f64;
    let us = |ns: u64| ns as f64 / 1000.0;
    Ok(IoBenchResult {
        test: match b.test {
            BenchTest::Randread => "randread",
            BenchTest::Walsync => "walsync",
        },
        engine: dev.name(),
        qd,
        file,
        size_mib: b.size_mib,
        files: match prepared {
            datafiles::Prepared::Reused => "reused",
            datafiles::Prepared::Created => "created",
        },
        seconds: duration as f64 / SEC as f64,
        ops: m.ops,
        ops_per_sec: m.ops as f64 / (duration as f64 / SEC as f64),
        lat_mean_us: m.hist.mean() / 1000.0,
        lat_p50_us: us(m.hist.value_at_quantile(0.50)),
        lat_p99_us: us(m.hist.value_at_quantile(0.99)),
        lat_max_us: us(m.hist.max()),
        cpu_user_s: m.cpu_user_s,
        cpu_sys_s: m.cpu_sys_s,
        cpu_cores: (m.cpu_user_s + m.cpu_sys_s) / wall_s,
    })
}

/// The result as text, one figure per line.
pub fn render_text(r: &IoBenchResult) -> String {
    let (rate, what) = match r.test {
        "walsync" => ("syncs/s", "write+fdatasync"),
        _ => ("IOPS", "read"),
    };
    format!(
        "iobench {}: {}, QD {}, {:.0} s on {} (O_DIRECT, data file {} MiB, files {})\n\
         \x20 {:>10.0} {rate}\n\
         \x20 latency of one {what}: mean {:.1} µs, p50 {:.1} µs, p99 {:.1} µs, max {:.1} µs\n\
         \x20 CPU: {:.2} of one core (user {:.2} s, system {:.2} s)\n",
        r.test,
        r.engine,
        r.qd,
        r.seconds,
        r.file,
        r.size_mib,
        r.files,
        r.ops_per_sec,
        r.lat_mean_us,
        r.lat_p50_us,
        r.lat_p99_us,
        r.lat_max_us,
        r.cpu_cores,
        r.cpu_user_s,
        r.cpu_sys_s,
    )
}

/// Raw figures of one measurement.
struct Measured {
    ops: u64,
    hist: Histogram<u64>,
    /// Wall time the CPU figures cover, ns.
    wall: Nanos,
    cpu_user_s: f64,
    cpu_sys_s: f64,
}

/// User and system CPU seconds used by this process so far (all threads).
fn cpu_times() -> Result<(f64, f64)> {
    // SAFETY: `ru` is a plain struct the call fills in; it outlives the call.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) } != 0 {
        return Err(std::io::Error::last_os_error()).context("getrusage failed");
    }
    let s = |tv: libc::timeval| tv.tv_sec as f64 + tv.tv_usec as f64 / 1e6;
    Ok((s(ru.ru_utime), s(ru.ru_stime)))
}

fn new_histogram() -> Result<Histogram<u64>> {
    Histogram::new_with_bounds(1, 60 * SEC, 3).context("cannot create latency histogram")
}

/// Waits at most this long per `wait` call, like the driver does.
const MAX_BLOCK: Nanos = 100 * MS;
/// How long to wait for stragglers after the measurement.
const DRAIN_LIMIT: Nanos = 30 * SEC;

/// What a test did with one completion.
struct Step {
    /// Latency of the read or commit this completion finished, if it
    /// finished one.
    finished: Option<Nanos>,
    /// Whether the slot has a request in flight again.
    busy: bool,
}

/// One test pattern: `slots` independent request chains.
trait Pattern {
    /// Number of chains (each has one request in flight at a time).
    fn slots(&self) -> u32;
    /// Starts chain `slot`.
    fn start(&mut self, dev: &mut dyn Device, slot: u64) -> Result<()>;
    /// Handles one completion; continues the chain if `go_on`.
    fn on_done(&mut self, dev: &mut dyn Device, c: &IoCompletion, go_on: bool) -> Result<Step>;
}

/// Runs a pattern: finished operations are counted until `duration` has
/// passed; then no new work starts and what is in flight is let finish,
/// uncounted. CPU time covers the counted period.
fn drive(dev: &mut dyn Device, p: &mut dyn Pattern, duration: Nanos) -> Result<Measured> {
    let mut hist = new_histogram()?;
    let slots = p.slots();
    let (u0, s0) = cpu_times()?;
    let t0 = dev.now();
    let end = t0 + duration;
    for slot in 0..u64::from(slots) {
        p.start(dev, slot)?;
    }
    let mut busy = slots;
    let mut out = Vec::with_capacity(slots as usize * 2);
    let mut ops = 0u64;
    let mut stopped: Option<(Nanos, f64, f64)> = None;
    while busy > 0 {
        let now = dev.now();
        if stopped.is_none() && now >= end {
            let (u1, s1) = cpu_times()?;
            stopped = Some((now, u1, s1));
        }
        if stopped.is_some_and(|(t, _, _)| now - t > DRAIN_LIMIT) {
            bail!("{busy} requests did not finish within 30 s");
        }
        out.clear();
        dev.wait(stopped.is_none().then_some(end), MAX_BLOCK, &mut out)?;
        let go_on = dev.now() < end;
        for c in &out {
            let step = p.on_done(dev, c, go_on)?;
            if let Some(lat) = step.finished
                && c.at <= end
            {
                ops += 1;
                hist.saturating_record(lat.max(1));
            }
            if !step.busy {
                busy -= 1;
            }
        }
    }
    let (t1, u1, s1) = match stopped {
        Some(s) => s,
        None => {
            let (u1, s1) = cpu_times()?;
            (dev.now(), u1, s1)
        }
    };
    Ok(Measured {
        ops,
        hist,
        wall: t1 - t0,
        cpu_user_s: u1 - u0,
        cpu_sys_s: s1 - s0,
    })
}

/// `qd` uniformly random page reads in flight; token = slot.
struct RandRead {
    rng: SmallRng,
    blocks: u64,
    issued: Vec<Nanos>,
}

impl Pattern for RandRead {
    fn slots(&self) -> u32 {
        self.issued.len() as u32
    }

    fn start(&mut self, dev: &mut dyn Device, slot: u64) -> Result<()> {
        self.issued[slot as usize] = dev.now();
        dev.submit(IoRequest {
            token: slot,
            kind: IoKind::ReadPage {
                block: self.rng.random_range(0..self.blocks),
            },
        })
    }

    fn on_done(&mut self, dev: &mut dyn Device, c: &IoCompletion, go_on: bool) -> Result<Step> {
        let lat = c.at.saturating_sub(self.issued[c.token as usize]);
        if go_on {
            self.start(dev, c.token)?;
        }
        Ok(Step {
            finished: Some(lat),
            busy: go_on,
        })
    }
}

/// `qd` loops of "write the next 8 KiB of WAL (wrapping inside the segment),
/// fdatasync"; token = 2 × loop, + 1 for the sync.
struct WalSync {
    began: Vec<Nanos>,
    next_offset: u64,
}

impl Pattern for WalSync {
    fn slots(&self) -> u32 {
        self.began.len() as u32
    }

    fn start(&mut self, dev: &mut dyn Device, slot: u64) -> Result<()> {
        let offset = self.next_offset;
        self.next_offset = (self.next_offset + PAGE_BYTES) % WAL_SEGMENT_BYTES;
        self.began[slot as usize] = dev.now();
        dev.submit(IoRequest {
            token: slot * 2,
            kind: IoKind::WalWrite {
                segment: 0,
                offset,
                len: PAGE_BYTES,
            },
        })
    }

    fn on_done(&mut self, dev: &mut dyn Device, c: &IoCompletion, go_on: bool) -> Result<Step> {
        let slot = c.token / 2;
        if c.token.is_multiple_of(2) {
            // The write is done: sync it, whatever the time, to end the commit.
            dev.submit(IoRequest {
                token: slot * 2 + 1,
                kind: IoKind::WalSync { segment: 0 },
            })?;
            return Ok(Step {
                finished: None,
                busy: true,
            });
        }
        let lat = c.at.saturating_sub(self.began[slot as usize]);
        if go_on {
            self.start(dev, slot)?;
        }
        Ok(Step {
            finished: Some(lat),
            busy: go_on,
        })
    }
}
