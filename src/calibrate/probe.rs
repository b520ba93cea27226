//! The tests on the disk: the probe files, the engine, a closed loop of
//! requests at a given depth, and the whole battery in order.

use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};

use crate::core::io::{IoCompletion, IoKind, IoRequest, PAGE_BYTES, WAL_SEGMENT_BYTES};
use crate::core::time::{MS, Nanos, SEC};
use crate::datafiles::{self, DataDir, Layout};
use crate::engine::Device;
use crate::engine::psync::PsyncDevice;
use crate::engine::uring::{AlignedBuf, UringDevice};
use crate::stop::Stop;

use super::{
    DEEP_MIX_QD, DEEP_WRITE_QD, LatencyUs, Options, SEQ_IO_BYTES, STREAMS, SUBDIR, SWEEP_QDS,
    TestResult,
};

/// Length of all tests, in tests (for the progress bar): the sweep's 12
/// half-length passes count as 6, the WAL sizes' and the idle gaps'
/// half-length tests as half each.
pub(super) const TESTS: u64 = 14 + (WAL_SIZES.len() + 2 * IDLE_GAPS_US.len()) as u64 / 2;
/// Sizes of the WAL writes before an fdatasync whose latency gives
/// `flush_us_per_mib` (besides the 8 KiB of the one-stream test).
pub const WAL_SIZES: [u64; 3] = [64 << 10, 256 << 10, 1 << 20];
/// Idle gaps before a QD1 read, and before a WAL write + fdatasync, that
/// give the profile's `idle` curve, µs.
pub const IDLE_GAPS_US: [f64; 3] = [50.0, 250.0, 1000.0];

/// The probe directory, and what to remove at the end.
pub(super) struct ProbeDir {
    pub(super) path: PathBuf,
    /// --dir was created by calibrate.
    created_parent: Option<PathBuf>,
}

impl ProbeDir {
    pub(super) fn remove(&self, dd: &DataDir) -> Result<()> {
        datafiles::cleanup(dd)?;
        let _ = std::fs::remove_dir(&self.path);
        if let Some(p) = &self.created_parent {
            let _ = std::fs::remove_dir(p);
        }
        Ok(())
    }
}

/// Checks --dir and creates DIR/pgiosim-calibrate; errors name the flag.
pub(super) fn prepare_dir(dir: &Path) -> Result<ProbeDir> {
    let d = dir.display();
    let mut created_parent = None;
    // The rule of every --dir: one on /proc or /sys is bad input (exit 2),
    // said as such, not a failure to create a directory there.
    let existing = if dir.is_dir() {
        dir
    } else {
        dir.parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."))
    };
    crate::datafiles::refuse_virtual_fs(existing)?;
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => {}
        Ok(_) => bail!("--dir {d}: exists and is not a directory"),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            std::fs::create_dir(dir).map_err(|e| match e.kind() {
                std::io::ErrorKind::NotFound => anyhow!(
                    "--dir {d}: does not exist, and neither does its parent; create it first"
                ),
                _ => anyhow!("--dir {d}: cannot create it: {e}"),
            })?;
            created_parent = Some(dir.to_path_buf());
        }
        Err(e) => bail!("--dir {d}: cannot examine it: {e}"),
    }
    let path = dir.join(SUBDIR);
    match std::fs::create_dir(&path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
        Err(e) => {
            if let Some(p) = &created_parent {
                let _ = std::fs::remove_dir(p);
            }
            bail!("--dir {d}: is not writable (cannot create {SUBDIR} in it): {e}");
        }
    }
    Ok(ProbeDir {
        path,
        created_parent,
    })
}

/// "vda 254:0" for the disk holding `dir`, as far as /sys says.
pub(super) fn device_of(dir: &Path) -> String {
    let Ok(m) = std::fs::metadata(dir) else {
        return "unknown device".into();
    };
    let dev = m.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let uevent = std::fs::read_to_string(format!("/sys/dev/block/{major}:{minor}/uevent"))
        .unwrap_or_default();
    let name = uevent
        .lines()
        .find_map(|l| l.strip_prefix("DEVNAME="))
        .unwrap_or("unknown device");
    format!("{name} {major}:{minor}")
}

/// The largest request the disk holding `dir` takes, KiB: the smaller of
/// its queue's `max_sectors_kb` and `max_segments` pages of 4 KiB (a
/// partition's are its disk's). None where /sys does not say.
pub(super) fn max_request_kib(dir: &Path) -> Option<u32> {
    let dev = std::fs::metadata(dir).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let node = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    let queue = [node.join("queue"), node.parent()?.join("queue")]
        .into_iter()
        .find(|q| q.is_dir())?;
    let read = |f: &str| -> Option<u32> {
        std::fs::read_to_string(queue.join(f))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    let sectors = read("max_sectors_kb")?;
    let segments = read("max_segments").map_or(u32::MAX, |s| s.saturating_mul(4));
    Some(
        sectors
            .min(segments)
            .clamp(4, crate::device::profile::IO_KIB_MAX),
    )
}

/// What a completion finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Class {
    Read = 0,
    Write = 1,
    Sync = 2,
    Pair = 3,
}

/// One finished operation to record.
#[derive(Clone, Copy, Debug)]
pub(super) struct Rec {
    class: Class,
    latency: Nanos,
    bytes: u64,
    /// Counts as one operation of the test's rate.
    counts: bool,
}

/// A test pattern: `slots` independent chains of requests.
pub(super) trait Pattern {
    fn slots(&self) -> u32;
    /// The slot a request's token belongs to.
    fn slot_of(&self, token: u64) -> u64 {
        token
    }
    fn start(&mut self, dev: &mut dyn Device, slot: u64) -> Result<()>;
    /// Handles a completion (recording into `recs`), continues the chain if
    /// `go_on`; returns whether the slot still has a request in flight.
    fn on_done(
        &mut self,
        dev: &mut dyn Device,
        c: &IoCompletion,
        go_on: bool,
        recs: &mut Vec<Rec>,
    ) -> Result<bool>;
}

/// Random 8 KiB reads and writes, `qd` in flight; token = slot.
pub(super) struct RandIo {
    rng: SmallRng,
    blocks: u64,
    write_share: f64,
    issued: Vec<(Nanos, bool)>,
}

impl RandIo {
    fn new(qd: u32, blocks: u64, write_share: f64, seed: u64) -> RandIo {
        RandIo {
            rng: SmallRng::seed_from_u64(seed),
            blocks,
            write_share,
            issued: vec![(0, false); qd as usize],
        }
    }
}

impl Pattern for RandIo {
    fn slots(&self) -> u32 {
        self.issued.len() as u32
    }

    fn start(&mut self, dev: &mut dyn Device, slot: u64) -> Result<()> {
        let block = self.rng.random_range(0..self.blocks);
        let write = self.write_share > 0.0 && self.rng.random::<f64>() < self.write_share;
        self.issued[slot as usize] = (dev.now(), write);
        let kind = if write {
            IoKind::WritePage {
                block,
                kernel_writeback: false,
                batch: 0,
            }
        } else {
            IoKind::ReadPage { block }
        };
        dev.submit(IoRequest { token: slot, kind })
    }

    fn on_done(
        &mut self,
        dev: &mut dyn Device,
        c: &IoCompletion,
        go_on: bool,
        recs: &mut Vec<Rec>,
    ) -> Result<bool> {
        let (t, write) = self.issued[c.token as usize];
        recs.push(Rec {
            class: if write { Class::Write } else { Class::Read },
            latency: c.at.saturating_sub(t),
            bytes: PAGE_BYTES,
            counts: true,
        });
        if go_on {
            self.start(dev, c.token)?;
        }
        Ok(go_on)
    }
}

/// `streams` loops, each on its own WAL file: write `len` bytes at the next
/// offset (wrapping at the segment's end), then (if `sync`) fdatasync.
/// token = 2 × stream, + 1 for the sync.
pub(super) struct WalLoop {
    len: u64,
    sync: bool,
    segments: u32,
    began: Vec<Nanos>,
    synced_at: Vec<Nanos>,
    offset: Vec<u64>,
}

impl WalLoop {
    fn new(streams: u32, len: u64, sync: bool, segments: u32) -> WalLoop {
        WalLoop {
            len,
            sync,
            segments,
            began: vec![0; streams as usize],
            synced_at: vec![0; streams as usize],
            offset: vec![0; streams as usize],
        }
    }
}

impl Pattern for WalLoop {
    fn slots(&self) -> u32 {
        self.began.len() as u32
    }

    fn slot_of(&self, token: u64) -> u64 {
        token / 2
    }

    fn start(&mut self, dev: &mut dyn Device, slot: u64) -> Result<()> {
        let s = slot as usize;
        let offset = self.offset[s];
        self.offset[s] = (offset + self.len) % (WAL_SEGMENT_BYTES - WAL_SEGMENT_BYTES % self.len);
        self.began[s] = dev.now();
        dev.submit(IoRequest {
            token: slot * 2,
            kind: IoKind::WalWrite {
                segment: (slot % u64::from(self.segments)) as u32,
                offset,
                len: self.len,
            },
        })
    }

    fn on_done(
        &mut self,
        dev: &mut dyn Device,
        c: &IoCompletion,
        go_on: bool,
        recs: &mut Vec<Rec>,
    ) -> Result<bool> {
        let slot = c.token / 2;
        let s = slot as usize;
        if c.token.is_multiple_of(2) {
            recs.push(Rec {
                class: Class::Write,
                latency: c.at.saturating_sub(self.began[s]),
                bytes: self.len,
                counts: !self.sync,
            });
            if self.sync {
                // The write is done: sync it, whatever the time, to end the pair.
                self.synced_at[s] = dev.now();
                dev.submit(IoRequest {
                    token: slot * 2 + 1,
                    kind: IoKind::WalSync {
                        segment: (slot % u64::from(self.segments)) as u32,
                    },
                })?;
                return Ok(true);
            }
        } else {
            recs.push(Rec {
                class: Class::Sync,
                latency: c.at.saturating_sub(self.synced_at[s]),
                bytes: 0,
                counts: false,
            });
            recs.push(Rec {
                class: Class::Pair,
                latency: c.at.saturating_sub(self.began[s]),
                bytes: 0,
                counts: true,
            });
        }
        if go_on {
            self.start(dev, slot)?;
        }
        Ok(go_on)
    }
}

/// How long a test may take to drain after its end.
pub(super) const DRAIN_LIMIT: Nanos = 30 * SEC;
/// Longest single wait (so Ctrl-C and the progress bar are seen).
pub(super) const MAX_BLOCK: Nanos = 100 * MS;

/// Histograms of one test.
pub(super) struct Hists {
    h: [Histogram<u64>; 4],
}

impl Hists {
    fn new() -> Result<Hists> {
        let mk = || Histogram::new_with_bounds(1, 60 * SEC, 3).context("latency histogram");
        Ok(Hists {
            h: [mk()?, mk()?, mk()?, mk()?],
        })
    }

    fn figures(&self, c: Class) -> Option<LatencyUs> {
        let h = &self.h[c as usize];
        if h.is_empty() {
            return None;
        }
        let us = |ns: u64| ns as f64 / 1e3;
        Some(LatencyUs {
            count: h.len(),
            mean: h.mean() / 1e3,
            p50: us(h.value_at_quantile(0.50)),
            p99: us(h.value_at_quantile(0.99)),
            max: us(h.max()),
        })
    }
}

/// What a test counted: its latencies by class, its operations and bytes.
struct Tally {
    hists: Hists,
    ops: u64,
    bytes: u64,
}

impl Tally {
    fn record(&mut self, recs: &[Rec]) {
        for r in recs {
            self.hists.h[r.class as usize].saturating_record(r.latency.max(1));
            self.bytes += r.bytes;
            if r.counts {
                self.ops += 1;
            }
        }
    }

    fn result(&self, name: &str, secs: f64) -> TestResult {
        TestResult {
            test: name.to_string(),
            seconds: secs,
            ops_per_s: self.ops as f64 / secs,
            mib_per_s: self.bytes as f64 / secs / 1_048_576.0,
            read: self.hists.figures(Class::Read),
            write: self.hists.figures(Class::Write),
            sync: self.hists.figures(Class::Sync),
            pair: self.hists.figures(Class::Pair),
        }
    }
}

/// Slots pausing, with when they go on (pauses are all the same length,
/// so the queue stays in order).
type Resting = std::collections::VecDeque<(Nanos, u64)>;

/// Until when to wait for completions: `wake`, the next pause's end or the
/// test's. A pause ends the way `run` ends a modelled CPU burst: asleep
/// until just before it, then polling (see `Device::timer_spin`), so that
/// what a pause does to the next I/O is what `run` sees.
fn wait_until(dev: &dyn Device, now: Nanos, wake: Nanos, resting: &Resting) -> Option<Nanos> {
    let spin = if resting.is_empty() {
        0
    } else {
        dev.timer_spin()
    };
    if now >= wake {
        None
    } else if wake <= now + spin {
        Some(now)
    } else {
        Some(wake - spin)
    }
}

/// Hands a completion to its pattern: the chain goes on if `go_on`, or
/// with a `think` the slot pauses first. True if the slot is done.
fn on_completion(
    p: &mut dyn Pattern,
    dev: &mut dyn Device,
    c: &IoCompletion,
    (think, go_on): (Nanos, bool),
    recs: &mut Vec<Rec>,
    resting: &mut Resting,
) -> Result<bool> {
    if think == 0 {
        return Ok(!p.on_done(dev, c, go_on, recs)?);
    }
    // The chain ends here; the slot starts the next one later.
    if p.on_done(dev, c, false, recs)? {
        return Ok(false);
    }
    if go_on {
        resting.push_back((c.at + think, p.slot_of(c.token)));
        return Ok(false);
    }
    Ok(true)
}

/// Runs a pattern for `length` (the first `ramp` not counted), each slot
/// pausing `think` between one chain of requests and the next. None if
/// stopped.
pub(super) fn closed_loop(
    name: &str,
    dev: &mut dyn Device,
    p: &mut dyn Pattern,
    length: Nanos,
    think: Nanos,
    stop: &Stop,
    bar: &indicatif::ProgressBar,
) -> Result<Option<TestResult>> {
    let ramp = (length / 10).min(500 * MS);
    let mut tally = Tally {
        hists: Hists::new()?,
        ops: 0,
        bytes: 0,
    };
    let t0 = dev.now();
    let from = t0 + ramp;
    let end = t0 + length;
    let base_pos = bar.position();
    for slot in 0..u64::from(p.slots()) {
        p.start(dev, slot)?;
    }
    let mut busy = p.slots();
    let mut out = Vec::with_capacity(p.slots() as usize * 2);
    let mut recs = Vec::with_capacity(8);
    let mut stopped = false;
    let mut resting = Resting::new();
    while busy > 0 {
        let now = dev.now();
        if now > end + DRAIN_LIMIT {
            bail!("{name}: {busy} requests did not finish within 30 s");
        }
        if stop.is_set() {
            stopped = true;
        }
        while let Some(&(at, slot)) = resting.front()
            && at <= now
        {
            resting.pop_front();
            if now < end && !stopped {
                p.start(dev, slot)?;
            } else {
                busy -= 1;
            }
        }
        bar.set_position(base_pos + (now.min(end) - t0) / MS);
        out.clear();
        let wake = resting.front().map_or(end, |r| r.0.min(end));
        dev.wait(wait_until(dev, now, wake, &resting), MAX_BLOCK, &mut out)?;
        let go_on = dev.now() < end && !stopped;
        for c in &out {
            recs.clear();
            if on_completion(p, dev, c, (think, go_on), &mut recs, &mut resting)? {
                busy -= 1;
            }
            if (from..=end).contains(&c.at) {
                tally.record(&recs);
            }
        }
    }
    bar.set_position(base_pos + length / MS);
    if stopped {
        return Ok(None);
    }
    Ok(Some(tally.result(name, (end - from) as f64 / 1e9)))
}

/// The sequential readers' shared plan: each stream reads its own part of
/// the data file over and over, counting the reads done between the ramp
/// and the end.
struct SeqReaders<'a> {
    file: &'a std::fs::File,
    chunk_blocks: u64,
    per_stream: u64,
    start: Instant,
    ramp: Duration,
    length: Duration,
    stop: &'a Stop,
    counted: AtomicU64,
}

impl SeqReaders<'_> {
    /// Stream `i`'s reads until the end or a stop.
    fn stream(&self, i: u64) -> Result<()> {
        let mut buf = AlignedBuf::new(SEQ_IO_BYTES as usize);
        let first = i * self.per_stream;
        let mut b = 0;
        loop {
            let now = self.start.elapsed();
            if now >= self.length || self.stop.is_set() {
                return Ok(());
            }
            let off = datafiles::data_offset(first + b);
            let n = self
                .file
                .read_at(buf.as_mut_slice(), off)
                .with_context(|| format!("sequential read at offset {off}"))?;
            if n as u64 != SEQ_IO_BYTES {
                bail!("short sequential read at offset {off}: {n} bytes");
            }
            let done = self.start.elapsed();
            if done >= self.ramp && done <= self.length {
                self.counted.fetch_add(1, Ordering::Relaxed);
            }
            b = (b + self.chunk_blocks) % self.per_stream;
        }
    }
}

/// `STREAMS` threads reading 1 MiB at a time, each through its own part of
/// the data file, with O_DIRECT pread. None if stopped.
pub(super) fn seq_read(
    file: &std::fs::File,
    blocks: u64,
    length: Nanos,
    stop: &Stop,
    bar: &indicatif::ProgressBar,
) -> Result<Option<TestResult>> {
    let chunk_blocks = SEQ_IO_BYTES / PAGE_BYTES;
    let per_stream = blocks / u64::from(STREAMS) / chunk_blocks * chunk_blocks;
    if per_stream < chunk_blocks {
        bail!("the data file is too small for 1 MiB sequential reads");
    }
    let readers = SeqReaders {
        file,
        chunk_blocks,
        per_stream,
        start: Instant::now(),
        ramp: Duration::from_nanos((length / 10).min(500 * MS)),
        length: Duration::from_nanos(length),
        stop,
        counted: AtomicU64::new(0),
    };
    let (start, length_d) = (readers.start, readers.length);
    let base_pos = bar.position();
    let errors: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..u64::from(STREAMS))
            .map(|i| {
                let readers = &readers;
                s.spawn(move || readers.stream(i))
            })
            .collect();
        while start.elapsed() < length_d && !stop.is_set() {
            std::thread::sleep(Duration::from_millis(100));
            bar.set_position(base_pos + (start.elapsed().min(length_d).as_millis() as u64));
        }
        handles
            .into_iter()
            .map(|h| {
                h.join()
                    .unwrap_or_else(|_| Err(anyhow!("reader thread panicked")))
            })
            .collect()
    });
    for e in errors {
        e?;
    }
    bar.set_position(base_pos + length / MS);
    if stop.is_set() {
        return Ok(None);
    }
    let secs = (length_d - readers.ramp).as_secs_f64();
    let n = readers.counted.load(Ordering::Relaxed);
    Ok(Some(TestResult {
        test: format!("sequential 1 MiB read, {STREAMS} streams"),
        seconds: secs,
        ops_per_s: n as f64 / secs,
        mib_per_s: n as f64 * SEQ_IO_BYTES as f64 / secs / 1_048_576.0,
        ..TestResult::default()
    }))
}

/// Opens the engine `run` would use: io_uring, else psync.
pub(super) fn open_engine(dd: &DataDir, layout: &Layout, quiet: bool) -> Result<Box<dyn Device>> {
    let in_flight = 64 + 2 * STREAMS;
    let files = datafiles::open(dd, layout, true)?;
    match UringDevice::new(files, in_flight) {
        Ok(d) => Ok(Box::new(d)),
        Err(e) => {
            if !quiet {
                eprintln!("notice: io_uring is not available ({e:#}); using the psync engine");
            }
            let files = datafiles::open(dd, layout, true)?;
            Ok(Box::new(PsyncDevice::new(files, in_flight as usize)?))
        }
    }
}

/// What the tests gave.
pub(super) struct Probed {
    /// The tests the profile is derived from.
    pub(super) measured: Measured,
    /// Every test, in the order run (the sweep's depths once, the better
    /// pass each): the table and `--json`.
    pub(super) tests: Vec<TestResult>,
    /// The engine they ran on.
    pub(super) engine: String,
}

/// calibrate's progress bar over its tests, hidden without `progress`.
fn progress_bar(progress: bool, length: Nanos) -> indicatif::ProgressBar {
    if !progress {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(TESTS * length / MS);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "calibrate [{bar:30}] {percent:>3}% ETA {eta} {msg}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// The read sweep past QD1 in two passes of half a test each, up then
/// down, keeping the better of the two at each depth: on a shared disk
/// another tenant's burst only ever makes a pass slower, and rarely both.
/// Each depth's best, in depth order; None if interrupted.
fn read_sweep(
    dev: &mut dyn Device,
    blocks: u64,
    length: Nanos,
    stop: &Stop,
    bar: &indicatif::ProgressBar,
) -> Result<Option<Vec<(u32, TestResult)>>> {
    let mut passes: Vec<TestResult> = Vec::new();
    let order = SWEEP_QDS[1..].iter().chain(SWEEP_QDS[1..].iter().rev());
    for (i, &qd) in order.enumerate() {
        let name = format!("QD{qd} 8 KiB random read");
        bar.set_message(name.clone());
        let mut p = RandIo::new(qd, blocks, 0.0, u64::from(qd) + 100 * i as u64);
        match closed_loop(&name, dev, &mut p, length / 2, 0, stop, bar)? {
            Some(r) => passes.push(r),
            None => return Ok(None),
        }
    }
    let best = SWEEP_QDS[1..]
        .iter()
        .map(|&qd| {
            let name = format!("QD{qd} 8 KiB random read");
            let best = passes
                .iter()
                .filter(|r| r.test == name)
                .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s))
                .expect("two passes per depth")
                .clone();
            (qd, best)
        })
        .collect();
    Ok(Some(best))
}

/// The tests run one after another on one engine, each kept in order.
struct Bench<'a> {
    dev: Box<dyn Device>,
    blocks: u64,
    length: Nanos,
    stop: &'a Stop,
    bar: &'a indicatif::ProgressBar,
    tests: Vec<TestResult>,
}

/// A test's result, or `Ok(None)` from the enclosing function if the test
/// was interrupted.
macro_rules! or_stopped {
    ($test:expr) => {
        match $test? {
            Some(r) => r,
            None => return Ok(None),
        }
    };
}

impl Bench<'_> {
    /// Random 8 KiB I/O at depth `qd` for the whole length, back to back
    /// (see [`RandIo`]).
    fn random(
        &mut self,
        name: &str,
        qd: u32,
        write_share: f64,
        seed: u64,
    ) -> Result<Option<TestResult>> {
        let p = RandIo::new(qd, self.blocks, write_share, seed);
        self.run_for(name.to_string(), p, 0, self.length)
    }

    /// `streams` WAL loops of `bytes` writes for the whole length, back to
    /// back (see [`WalLoop`]).
    fn wal(
        &mut self,
        name: &str,
        streams: u32,
        bytes: u64,
        sync: bool,
    ) -> Result<Option<TestResult>> {
        let p = WalLoop::new(streams, bytes, sync, STREAMS);
        self.run_for(name.to_string(), p, 0, self.length)
    }

    /// One test of `length`, each chain `think` apart. None if interrupted.
    fn run_for(
        &mut self,
        name: String,
        mut p: impl Pattern,
        think: Nanos,
        length: Nanos,
    ) -> Result<Option<TestResult>> {
        self.bar.set_message(name.clone());
        let r = closed_loop(
            &name,
            self.dev.as_mut(),
            &mut p,
            length,
            think,
            self.stop,
            self.bar,
        )?;
        if let Some(r) = &r {
            self.tests.push(r.clone());
        }
        Ok(r)
    }

    /// The last test, sequential reads through the files themselves
    /// (see [`seq_read`]) with the engine closed: its result, and every
    /// test's in order. None if interrupted.
    fn sequential_read(
        self,
        dd: &DataDir,
        layout: &Layout,
    ) -> Result<Option<(TestResult, Vec<TestResult>)>> {
        let Bench { dev, mut tests, .. } = self;
        drop(dev);
        self.bar
            .set_message(format!("sequential 1 MiB read, {STREAMS} streams"));
        let files = datafiles::open(dd, layout, true)?;
        let r = or_stopped!(seq_read(
            &files.data,
            self.blocks,
            self.length,
            self.stop,
            self.bar
        ));
        tests.push(r.clone());
        Ok(Some((r, tests)))
    }

    /// WAL appends of each of [`WAL_SIZES`] before an fdatasync.
    fn wal_sizes(&mut self) -> Result<Option<Vec<(u64, TestResult)>>> {
        let mut wal_sizes = Vec::new();
        for &bytes in &WAL_SIZES {
            let name = format!(
                "{} WAL append + fdatasync, 1 stream",
                crate::units::format_memory(bytes)
            );
            let p = WalLoop::new(1, bytes, true, STREAMS);
            wal_sizes.push((
                bytes,
                or_stopped!(self.run_for(name, p, 0, self.length / 2)),
            ));
        }
        Ok(Some(wal_sizes))
    }

    /// I/O after a pause, as a database issues it between stretches of CPU.
    fn idle(&mut self) -> Result<Option<Vec<Idle>>> {
        let (blocks, half) = (self.blocks, self.length / 2);
        let mut idle = Vec::new();
        for (i, &gap) in IDLE_GAPS_US.iter().enumerate() {
            let think = (gap * 1e3).round() as Nanos;
            let read = or_stopped!(self.run_for(
                format!("QD1 8 KiB random read{}", apart(gap)),
                RandIo::new(1, blocks, 0.0, 3 + i as u64),
                think,
                half
            ));
            let wal = or_stopped!(self.run_for(
                format!("8 KiB WAL append + fdatasync, 1 stream{}", apart(gap)),
                WalLoop::new(1, PAGE_BYTES, true, STREAMS),
                think,
                half
            ));
            idle.push(Idle {
                gap_us: gap,
                read,
                wal,
            });
        }
        Ok(Some(idle))
    }

    /// The read sweep past QD1 (see [`read_sweep`]): each depth's rate,
    /// QD1's first.
    fn sweep(&mut self, qd1_read: &TestResult) -> Result<Option<Vec<(u32, f64)>>> {
        let best = or_stopped!(read_sweep(
            self.dev.as_mut(),
            self.blocks,
            self.length,
            self.stop,
            self.bar
        ));
        let mut sweep = vec![(1u32, qd1_read.ops_per_s)];
        for r in best {
            sweep.push((r.0, r.1.ops_per_s));
            self.tests.push(r.1);
        }
        Ok(Some(sweep))
    }
}

/// All the tests. None if interrupted.
pub(super) fn measure(
    opts: &Options,
    dd: &DataDir,
    layout: &Layout,
    progress: bool,
    stop: &Stop,
) -> Result<Option<Probed>> {
    let length = (opts.seconds_per_test * 1e9) as Nanos;
    let blocks = layout.data_blocks;
    let bar = progress_bar(progress, length);
    let dev = open_engine(dd, layout, opts.quiet)?;
    let engine = dev.name().to_string();
    let mut b = Bench {
        dev,
        blocks,
        length,
        stop,
        bar: &bar,
        tests: Vec::new(),
    };
    let qd1_read = or_stopped!(b.random("QD1 8 KiB random read", 1, 0.0, 1));
    let qd1_write = or_stopped!(b.random("QD1 8 KiB random write", 1, 1.0, 2));
    let wal1 = or_stopped!(b.wal(
        "8 KiB WAL append + fdatasync, 1 stream",
        1,
        PAGE_BYTES,
        true
    ));
    let wal_sizes = or_stopped!(b.wal_sizes());
    let idle = or_stopped!(b.idle());
    let wal4 = or_stopped!(b.wal(
        &format!("8 KiB WAL append + fdatasync, {STREAMS} streams"),
        STREAMS,
        PAGE_BYTES,
        true
    ));
    let sweep = or_stopped!(b.sweep(&qd1_read));
    let write16 = or_stopped!(b.random("QD16 8 KiB random write", DEEP_WRITE_QD, 1.0, 16));
    let mixed = or_stopped!(b.random("QD32 8 KiB random 50/50 read/write", DEEP_MIX_QD, 0.5, 32));
    let seq_write = or_stopped!(b.wal(
        &format!("sequential 1 MiB write, {STREAMS} streams"),
        STREAMS,
        SEQ_IO_BYTES,
        false
    ));
    let Some((seq_read, tests)) = b.sequential_read(dd, layout)? else {
        return Ok(None);
    };
    bar.finish_and_clear();
    let m = Measured {
        qd1_read,
        qd1_write,
        wal1,
        wal_sizes,
        idle,
        wal4,
        sweep,
        write16,
        mixed,
        seq_write,
        seq_read,
        size_bytes: blocks * PAGE_BYTES,
        inode_sync_tick_ms: super::inode::measure(&dd.dir)?,
        in_v1_throttle: super::cgroup::limits_disk_of(&dd.dir),
    };
    Ok(Some(Probed {
        measured: m,
        tests,
        engine,
    }))
}

/// The tests the profile is derived from.
#[derive(Clone, Debug)]
pub struct Measured {
    /// QD1 reads back to back (the sweep's first depth): the profile's `read`.
    pub qd1_read: TestResult,
    /// QD1 writes back to back: the profile's `write`.
    pub qd1_write: TestResult,
    /// 8 KiB WAL append + fdatasync back to back: the one-stream rate, and
    /// the profile's `flush`.
    pub wal1: TestResult,
    /// WAL appends of more bytes before each fdatasync ([`WAL_SIZES`]):
    /// `flush_us_per_mib`.
    pub wal_sizes: Vec<(u64, TestResult)>,
    /// QD1 reads and WAL append + fdatasync after a pause: `idle`.
    pub idle: Vec<Idle>,
    pub wal4: TestResult,
    pub sweep: Vec<(u32, f64)>,
    pub write16: TestResult,
    pub mixed: TestResult,
    pub seq_write: TestResult,
    pub seq_read: TestResult,
    /// Size of the data file the random I/O went to.
    pub size_bytes: u64,
    /// The timestamp tick after which an fdatasync writes the inode too
    /// (`super::inode`), ms; None: it never does.
    pub inode_sync_tick_ms: Option<f64>,
    /// calibrate ran inside a cgroup v1 blkio throttle on the disk: the
    /// kernel flusher's writeback passes it ([`super::cgroup`]).
    pub in_v1_throttle: bool,
}

/// The idle-gap tests of one gap.
#[derive(Clone, Debug)]
pub struct Idle {
    /// The pause before each operation (a read, or a WAL write and its
    /// fdatasync), µs.
    pub gap_us: f64,
    pub read: TestResult,
    pub wal: TestResult,
}

/// ", N µs apart" for the idle-gap tests.
pub(super) fn apart(gap_us: f64) -> String {
    format!(", {gap_us} µs apart")
}
