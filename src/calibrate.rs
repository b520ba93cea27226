//! `pgiosim calibrate`: probe a real disk with pgiosim's own engine and
//! write a device profile for `pgiosim model --device`.
//!
//! Every probe goes through the same engine `run` uses (io_uring, falling
//! back to psync; O_DIRECT) on pgiosim's own files, so the profile describes
//! the disk as `run` sees it, submission and reaping included. About a
//! minute by default: 14 tests of `--seconds-per-test` (4 s) each, the first
//! tenth of each (at most 0.5 s) a warm-up that is not counted.
//!
//! | test | → profile |
//! |---|---|
//! | QD1 8 KiB random read | `read.median_us`, `read.p99_us` |
//! | QD1 8 KiB random write | `write` |
//! | 8 KiB WAL append + fdatasync, 1 stream | `flush`: the fdatasync alone (that is, the pair less the write) |
//! | the same, 4 streams on 4 WAL files | `flush_to_media`: true if 4 streams do not reach 1.5 × one stream's rate |
//! | random read at QD 2, 4, …, 64, two passes (up, then down) of half a test each, the better kept | the knee, the first QD no deeper one beats by 15%; `channels` from the plateau (Little's law: its IOPS × the profile's mean QD1 read latency) |
//! | random write at QD16, mixed 50/50 at QD32 | a cap: when QD1 already runs far below its own latency's rate (a throttle, not the disk) and the read sweep is flat, `caps.iops` (mixed ≈ read plateau) or `caps.read_iops`/`caps.write_iops` (mixed ≈ twice); `flush_counts_as_io` when write+fdatasync runs at half the write cap |
//! | sequential 1 MiB reads and WAL writes, 4 streams | `bandwidth_mib_s`: the faster of the two |
//!
//! The probe files live in `DIR/pgiosim-calibrate/` and are removed at the
//! end (`--keep` keeps them for the next calibration).

use std::io::IsTerminal;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use hdrhistogram::Histogram;
use rand::rngs::SmallRng;
use rand::{RngExt, SeedableRng};
use serde::Serialize;

use crate::core::io::{IoCompletion, IoKind, IoRequest, PAGE_BYTES, WAL_SEGMENT_BYTES};
use crate::core::time::{MS, Nanos, SEC};
use crate::datafiles::{self, DataDir, Layout};
use crate::device::microbench;
use crate::device::model::{DeviceModel, Op};
use crate::device::profile::{Caps, Latency, Profile};
use crate::engine::Device;
use crate::engine::psync::PsyncDevice;
use crate::engine::uring::{AlignedBuf, UringDevice};
use crate::error::UsageError;

/// Queue depths of the random-read sweep.
pub const SWEEP_QDS: [u32; 7] = [1, 2, 4, 8, 16, 32, 64];
/// Doubling the queue depth adds less than this: the knee.
pub const KNEE_GAIN: f64 = 1.15;
/// Streams of the parallel WAL test, the sequential tests (one WAL file each).
pub const STREAMS: u32 = 4;
/// Size of one sequential I/O.
pub const SEQ_IO_BYTES: u64 = 1 << 20;
/// QD1 runs below this fraction of the rate its own median latency allows:
/// something throttles it (a cap), it is not the disk.
pub const THROTTLED_QD1: f64 = 0.3;
/// A read sweep whose QD64 IOPS are below this multiple of QD1's is flat.
pub const FLAT_SWEEP: f64 = 1.3;
/// Figures that agree within this ratio are "the same" (cap detection).
pub const AGREE: f64 = 1.15;
/// Parallel flushes below this multiple of one stream's rate do not scale.
pub const FLUSH_SCALING_MIN: f64 = 1.5;
/// Smallest data file.
pub const SIZE_MIN_BYTES: u64 = 16 << 20;
/// Name of the subdirectory of --dir the probe files go to.
pub const SUBDIR: &str = "pgiosim-calibrate";
/// Length of all tests, in tests (for the progress bar): the sweep's 12
/// half-length passes count as 6.
const TESTS: u64 = 14;
/// Tests added by `--think-us` (isolated reads and WAL syncs).
const ISOLATED_TESTS: u64 = 2;
/// Default pause between the isolated tests' operations, µs.
pub const THINK_US: f64 = 0.0;
/// Longest pause `--think-us` takes, µs.
const THINK_US_MAX: f64 = 100_000.0;

/// Flags of `calibrate`.
#[derive(Debug, Clone, clap::Args)]
pub struct CalibrateArgs {
    /// Directory on the disk to probe; the probe files go to
    /// DIR/pgiosim-calibrate and are removed at the end.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Where to write the device profile (JSON).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Length of each of the 14 tests (16 with --think-us), seconds
    /// (fractions allowed).
    #[arg(long, value_name = "SECONDS", default_value_t = 4.0)]
    pub seconds_per_test: f64,
    /// Size of the data file random reads go to, with postgresql.conf units
    /// (1GB, 512MB). Larger than the disk's cache gives truer latencies.
    #[arg(long, value_name = "SIZE", default_value = "1GB")]
    pub size: String,
    /// Pause between operations of the tests that give the profile's QD1
    /// latencies, µs; 0 (the default): back to back, as fio runs. A database
    /// issues I/O between stretches of CPU work, and on a virtualised disk an
    /// isolated I/O can be slower than one right after another: on this VM
    /// 200 µs apart, WAL write + fdatasync took +6% to +61% longer in
    /// different runs, reads +6% to +20%. Try 200 to describe the disk as a
    /// lightly loaded database sees it.
    #[arg(long, value_name = "US", default_value_t = THINK_US)]
    pub think_us: f64,
    /// Name of the profile [default: the output file's name without .json].
    #[arg(long)]
    pub name: Option<String>,
    /// Also write every measurement as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Keep the probe files for the next calibration.
    #[arg(long)]
    pub keep: bool,
    /// Print nothing but errors and the table (no progress bar, no notices).
    #[arg(short, long)]
    pub quiet: bool,
}

fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// Latency figures of one kind of operation in one test, µs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct LatencyUs {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p99: f64,
    pub max: f64,
}

/// What one test measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct TestResult {
    pub test: String,
    /// Length of the counted window, seconds.
    pub seconds: f64,
    /// Operations per second (reads+writes, or write+fdatasync pairs).
    pub ops_per_s: f64,
    /// MiB per second moved.
    pub mib_per_s: f64,
    pub read: Option<LatencyUs>,
    pub write: Option<LatencyUs>,
    /// The fdatasync alone.
    pub sync: Option<LatencyUs>,
    /// A WAL write + its fdatasync.
    pub pair: Option<LatencyUs>,
}

/// Everything calibrate measured and derived; `--json` writes it.
#[derive(Clone, Debug, Serialize)]
pub struct Calibration {
    pub dir: String,
    pub device: String,
    pub engine: String,
    pub seconds_per_test: f64,
    pub size_bytes: u64,
    pub tests: Vec<TestResult>,
    /// (queue depth, IOPS) of the random-read sweep.
    pub sweep: Vec<(u32, f64)>,
    /// First queue depth that no deeper one beats by 15%.
    pub knee_qd: u32,
    /// What was concluded, one line each.
    pub findings: Vec<String>,
    /// What the written profile's model gives for the same tests.
    pub model_check: Vec<(String, f64, f64)>,
    pub profile: Profile,
}

/// Runs `pgiosim calibrate`. Returns the exit code (130 if interrupted).
pub fn calibrate(args: &CalibrateArgs, stop: Arc<AtomicBool>) -> Result<i32> {
    if !(args.seconds_per_test.is_finite() && args.seconds_per_test >= 0.1) {
        return Err(usage(format!(
            "--seconds-per-test: must be at least 0.1, got {}",
            args.seconds_per_test
        )));
    }
    if args.seconds_per_test > 3600.0 {
        return Err(usage("--seconds-per-test: at most 3600"));
    }
    if !(args.think_us >= 0.0 && args.think_us <= THINK_US_MAX) {
        return Err(usage(format!(
            "--think-us: must be between 0 and {THINK_US_MAX}, got {}",
            args.think_us
        )));
    }
    let size = crate::units::parse_memory_bytes(&args.size).ok_or_else(|| {
        usage(format!(
            "--size {}: not a size; write it as 1GB or 512MB",
            args.size
        ))
    })?;
    if size < SIZE_MIN_BYTES {
        return Err(usage(format!("--size {}: at least 16MB", args.size)));
    }
    let name = match &args.name {
        Some(n) => n.clone(),
        None => name_from_path(&args.output),
    };
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(usage(format!(
            "--name {name:?}: may hold only lowercase letters, digits and '-'"
        )));
    }
    if let Some(parent) = args.output.parent()
        && !parent.as_os_str().is_empty()
        && !parent.is_dir()
    {
        return Err(usage(format!(
            "-o {}: directory {} does not exist",
            args.output.display(),
            parent.display()
        )));
    }

    let probe_dir = prepare_dir(&args.dir)?;
    let dd = DataDir::new(&probe_dir.path, None);
    let blocks = size / PAGE_BYTES;
    let layout = Layout {
        data_blocks: blocks,
        wal_segments: STREAMS,
        description: "pgiosim calibrate".to_string(),
    };
    let progress = !args.quiet && std::io::stderr().is_terminal();
    let result = (|| -> Result<Option<Calibration>> {
        // Released before the probe files are removed (cleanup takes it too).
        let held = datafiles::lock(&dd)?;
        datafiles::prepare_locked(&dd, &layout, progress, &held, &stop).with_context(|| {
            format!(
                "--dir {}: cannot prepare the probe files (--size {} plus {} MiB of WAL)",
                args.dir.display(),
                args.size,
                (u64::from(STREAMS) * WAL_SEGMENT_BYTES) >> 20
            )
        })?;
        measure(args, &dd, &layout, &name, progress, &stop)
    })();
    let cleanup = if args.keep {
        Ok(())
    } else {
        probe_dir.remove(&dd)
    };
    let Some(cal) = result? else {
        cleanup?;
        eprintln!("calibrate: interrupted; no profile written");
        return Ok(130);
    };
    cleanup?;
    let text = serde_json::to_string_pretty(&cal.profile)? + "\n";
    // Validated like any profile before it is written.
    Profile::from_json(&text, &args.output.display().to_string())
        .context("calibrate: the measured figures do not make a valid profile")?;
    std::fs::write(&args.output, &text)
        .with_context(|| format!("-o {}: cannot write the profile", args.output.display()))?;
    print!("{}", render_table(&cal));
    println!(
        "profile {} written to {}",
        cal.profile.name,
        args.output.display()
    );
    if let Some(path) = &args.json {
        let j = serde_json::to_string_pretty(&cal)? + "\n";
        std::fs::write(path, j)
            .with_context(|| format!("--json {}: cannot write", path.display()))?;
    }
    Ok(0)
}

/// "mydisk.json" → "mydisk"; anything else becomes '-'.
fn name_from_path(p: &Path) -> String {
    let stem = p
        .file_stem()
        .map(|s| s.to_string_lossy().to_lowercase())
        .unwrap_or_default();
    let mut out: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_lowercase() || c.is_ascii_digit() {
                c
            } else {
                '-'
            }
        })
        .collect();
    out = out.trim_matches('-').to_string();
    if out.is_empty() {
        "calibrated".to_string()
    } else {
        out
    }
}

/// The probe directory, and what to remove at the end.
struct ProbeDir {
    path: PathBuf,
    /// --dir was created by calibrate.
    created_parent: Option<PathBuf>,
}

impl ProbeDir {
    fn remove(&self, dd: &DataDir) -> Result<()> {
        datafiles::cleanup(dd)?;
        let _ = std::fs::remove_dir(&self.path);
        if let Some(p) = &self.created_parent {
            let _ = std::fs::remove_dir(p);
        }
        Ok(())
    }
}

/// Checks --dir and creates DIR/pgiosim-calibrate; errors name the flag.
fn prepare_dir(dir: &Path) -> Result<ProbeDir> {
    let d = dir.display();
    let mut created_parent = None;
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
fn device_of(dir: &Path) -> String {
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

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "this machine".into())
}

/// Now as "2026-11-30 01:47 UTC".
fn utc_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs()) as i64;
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02} {:02}:{:02} UTC",
        rem / 3600,
        (rem % 3600) / 60
    )
}

// ---- the closed-loop probe driver -----------------------------------------

/// What a completion finished.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Class {
    Read = 0,
    Write = 1,
    Sync = 2,
    Pair = 3,
}

/// One finished operation to record.
#[derive(Clone, Copy, Debug)]
struct Rec {
    class: Class,
    latency: Nanos,
    bytes: u64,
    /// Counts as one operation of the test's rate.
    counts: bool,
}

/// A test pattern: `slots` independent chains of requests.
trait Pattern {
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
struct RandIo {
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
struct WalLoop {
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
const DRAIN_LIMIT: Nanos = 30 * SEC;
/// Longest single wait (so Ctrl-C and the progress bar are seen).
const MAX_BLOCK: Nanos = 100 * MS;

/// Histograms of one test.
struct Hists {
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

/// Runs a pattern for `length` (the first `ramp` not counted), each slot
/// pausing `think` between one chain of requests and the next. None if
/// stopped.
fn closed_loop(
    name: &str,
    dev: &mut dyn Device,
    p: &mut dyn Pattern,
    length: Nanos,
    think: Nanos,
    stop: &AtomicBool,
    bar: &indicatif::ProgressBar,
) -> Result<Option<TestResult>> {
    let ramp = (length / 10).min(500 * MS);
    let mut hists = Hists::new()?;
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
    let (mut ops, mut bytes) = (0u64, 0u64);
    let mut stopped = false;
    // Slots pausing, with when they go on (pauses are all the same length,
    // so the queue stays in order).
    let mut resting: std::collections::VecDeque<(Nanos, u64)> = Default::default();
    while busy > 0 {
        let now = dev.now();
        if now > end + DRAIN_LIMIT {
            bail!("{name}: {busy} requests did not finish within 30 s");
        }
        if stop.load(Ordering::Relaxed) {
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
        dev.wait((now < wake).then_some(wake), MAX_BLOCK, &mut out)?;
        let go_on = dev.now() < end && !stopped;
        for c in &out {
            recs.clear();
            if think > 0 {
                // The chain ends here; the slot starts the next one later.
                if !p.on_done(dev, c, false, &mut recs)? {
                    if go_on {
                        resting.push_back((c.at + think, p.slot_of(c.token)));
                    } else {
                        busy -= 1;
                    }
                }
            } else if !p.on_done(dev, c, go_on, &mut recs)? {
                busy -= 1;
            }
            if c.at < from || c.at > end {
                continue;
            }
            for r in &recs {
                hists.h[r.class as usize].saturating_record(r.latency.max(1));
                bytes += r.bytes;
                if r.counts {
                    ops += 1;
                }
            }
        }
    }
    bar.set_position(base_pos + length / MS);
    if stopped {
        return Ok(None);
    }
    let secs = (end - from) as f64 / 1e9;
    Ok(Some(TestResult {
        test: name.to_string(),
        seconds: secs,
        ops_per_s: ops as f64 / secs,
        mib_per_s: bytes as f64 / secs / 1_048_576.0,
        read: hists.figures(Class::Read),
        write: hists.figures(Class::Write),
        sync: hists.figures(Class::Sync),
        pair: hists.figures(Class::Pair),
    }))
}

/// `STREAMS` threads reading 1 MiB at a time, each through its own part of
/// the data file, with O_DIRECT pread. None if stopped.
fn seq_read(
    file: &std::fs::File,
    blocks: u64,
    length: Nanos,
    stop: &AtomicBool,
    bar: &indicatif::ProgressBar,
) -> Result<Option<TestResult>> {
    let ramp = Duration::from_nanos((length / 10).min(500 * MS));
    let length_d = Duration::from_nanos(length);
    let chunk_blocks = SEQ_IO_BYTES / PAGE_BYTES;
    let per_stream = blocks / u64::from(STREAMS) / chunk_blocks * chunk_blocks;
    if per_stream < chunk_blocks {
        bail!("the data file is too small for 1 MiB sequential reads");
    }
    let counted = AtomicU64::new(0);
    let start = Instant::now();
    let base_pos = bar.position();
    let errors: Vec<Result<()>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..u64::from(STREAMS))
            .map(|i| {
                let counted = &counted;
                s.spawn(move || -> Result<()> {
                    let mut buf = AlignedBuf::new(SEQ_IO_BYTES as usize);
                    let first = i * per_stream;
                    let mut b = 0;
                    loop {
                        let now = start.elapsed();
                        if now >= length_d || stop.load(Ordering::Relaxed) {
                            return Ok(());
                        }
                        let off = datafiles::data_offset(first + b);
                        let n = file
                            .read_at(buf.as_mut_slice(), off)
                            .with_context(|| format!("sequential read at offset {off}"))?;
                        if n as u64 != SEQ_IO_BYTES {
                            bail!("short sequential read at offset {off}: {n} bytes");
                        }
                        let done = start.elapsed();
                        if done >= ramp && done <= length_d {
                            counted.fetch_add(1, Ordering::Relaxed);
                        }
                        b = (b + chunk_blocks) % per_stream;
                    }
                })
            })
            .collect();
        while start.elapsed() < length_d && !stop.load(Ordering::Relaxed) {
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
    if stop.load(Ordering::Relaxed) {
        return Ok(None);
    }
    let secs = (length_d - ramp).as_secs_f64();
    let n = counted.load(Ordering::Relaxed);
    Ok(Some(TestResult {
        test: format!("sequential 1 MiB read, {STREAMS} streams"),
        seconds: secs,
        ops_per_s: n as f64 / secs,
        mib_per_s: n as f64 * SEQ_IO_BYTES as f64 / secs / 1_048_576.0,
        ..TestResult::default()
    }))
}

/// Opens the engine `run` would use: io_uring, else psync.
fn open_engine(dd: &DataDir, layout: &Layout, quiet: bool) -> Result<Box<dyn Device>> {
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

/// All the tests, then the profile. None if interrupted.
fn measure(
    args: &CalibrateArgs,
    dd: &DataDir,
    layout: &Layout,
    name: &str,
    progress: bool,
    stop: &AtomicBool,
) -> Result<Option<Calibration>> {
    let length = (args.seconds_per_test * 1e9) as Nanos;
    let blocks = layout.data_blocks;
    let bar = if progress {
        let tests = TESTS
            + if args.think_us > 0.0 {
                ISOLATED_TESTS
            } else {
                0
            };
        let bar = indicatif::ProgressBar::new(tests * length / MS);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "calibrate [{bar:30}] {percent:>3}% ETA {eta} {msg}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    let mut dev = open_engine(dd, layout, args.quiet)?;
    let engine = dev.name().to_string();
    let mut tests: Vec<TestResult> = Vec::new();
    let think = (args.think_us * 1e3).round() as Nanos;
    macro_rules! run {
        ($name:expr, $pattern:expr) => {
            run!($name, $pattern, 0)
        };
        ($name:expr, $pattern:expr, $think:expr) => {{
            let name: String = $name;
            bar.set_message(name.clone());
            let mut p = $pattern;
            match closed_loop(&name, dev.as_mut(), &mut p, length, $think, stop, &bar)? {
                Some(r) => {
                    tests.push(r.clone());
                    r
                }
                None => return Ok(None),
            }
        }};
    }
    let qd1_read = run!(
        "QD1 8 KiB random read".into(),
        RandIo::new(1, blocks, 0.0, 1)
    );
    // With no pause, the back-to-back tests are the isolated ones too.
    let iso_read = if think > 0 {
        run!(
            format!("QD1 8 KiB random read{}", apart(args.think_us)),
            RandIo::new(1, blocks, 0.0, 3),
            think
        )
    } else {
        qd1_read.clone()
    };
    let qd1_write = run!(
        format!("QD1 8 KiB random write{}", apart(args.think_us)),
        RandIo::new(1, blocks, 1.0, 2),
        think
    );
    let wal1 = run!(
        "8 KiB WAL append + fdatasync, 1 stream".into(),
        WalLoop::new(1, PAGE_BYTES, true, STREAMS)
    );
    let iso_wal = if think > 0 {
        run!(
            format!(
                "8 KiB WAL append + fdatasync, 1 stream{}",
                apart(args.think_us)
            ),
            WalLoop::new(1, PAGE_BYTES, true, STREAMS),
            think
        )
    } else {
        wal1.clone()
    };
    let wal4 = run!(
        format!("8 KiB WAL append + fdatasync, {STREAMS} streams"),
        WalLoop::new(STREAMS, PAGE_BYTES, true, STREAMS)
    );
    // The sweep in two passes of half a test each, up then down, keeping
    // the better of the two at each depth: on a shared disk another
    // tenant's burst only ever makes a pass slower, and rarely both.
    let mut passes: Vec<TestResult> = Vec::new();
    let order = SWEEP_QDS[1..].iter().chain(SWEEP_QDS[1..].iter().rev());
    for (i, &qd) in order.enumerate() {
        let name = format!("QD{qd} 8 KiB random read");
        bar.set_message(name.clone());
        let mut p = RandIo::new(qd, blocks, 0.0, u64::from(qd) + 100 * i as u64);
        match closed_loop(&name, dev.as_mut(), &mut p, length / 2, 0, stop, &bar)? {
            Some(r) => passes.push(r),
            None => return Ok(None),
        }
    }
    let mut sweep = vec![(1u32, qd1_read.ops_per_s)];
    for &qd in &SWEEP_QDS[1..] {
        let name = format!("QD{qd} 8 KiB random read");
        let best = passes
            .iter()
            .filter(|r| r.test == name)
            .max_by(|a, b| a.ops_per_s.total_cmp(&b.ops_per_s))
            .expect("two passes per depth")
            .clone();
        sweep.push((qd, best.ops_per_s));
        tests.push(best);
    }
    let write16 = run!(
        "QD16 8 KiB random write".into(),
        RandIo::new(16, blocks, 1.0, 16)
    );
    let mixed = run!(
        "QD32 8 KiB random 50/50 read/write".into(),
        RandIo::new(32, blocks, 0.5, 32)
    );
    let seq_write = run!(
        format!("sequential 1 MiB write, {STREAMS} streams"),
        WalLoop::new(STREAMS, SEQ_IO_BYTES, false, STREAMS)
    );
    drop(dev);
    bar.set_message(format!("sequential 1 MiB read, {STREAMS} streams"));
    let files = datafiles::open(dd, layout, true)?;
    let Some(seq_read) = seq_read(&files.data, blocks, length, stop, &bar)? else {
        return Ok(None);
    };
    tests.push(seq_read.clone());
    bar.finish_and_clear();

    let m = Measured {
        qd1_read,
        iso_read,
        qd1_write,
        wal1,
        iso_wal,
        think_us: args.think_us,
        wal4,
        sweep,
        write16,
        mixed,
        seq_write,
        seq_read,
        size_bytes: blocks * PAGE_BYTES,
    };
    let device = device_of(&dd.dir);
    let (profile, knee_qd, findings) = derive(&m, name, args, &device, &engine)?;
    let model_check = model_check(&profile, &m);
    Ok(Some(Calibration {
        dir: args.dir.display().to_string(),
        device,
        engine,
        seconds_per_test: args.seconds_per_test,
        size_bytes: blocks * PAGE_BYTES,
        tests,
        sweep: m.sweep.clone(),
        knee_qd,
        findings,
        model_check,
        profile,
    }))
}

/// The tests the profile is derived from.
#[derive(Clone, Debug)]
pub struct Measured {
    /// QD1 reads back to back (the sweep's first depth).
    pub qd1_read: TestResult,
    /// QD1 reads `think_us` apart: the profile's `read`.
    pub iso_read: TestResult,
    /// QD1 writes `think_us` apart: the profile's `write`.
    pub qd1_write: TestResult,
    /// WAL append + fdatasync back to back: the one-stream rate.
    pub wal1: TestResult,
    /// WAL append + fdatasync `think_us` apart: the profile's `flush`.
    pub iso_wal: TestResult,
    /// The pause of the isolated tests, µs.
    pub think_us: f64,
    pub wal4: TestResult,
    pub sweep: Vec<(u32, f64)>,
    pub write16: TestResult,
    pub mixed: TestResult,
    pub seq_write: TestResult,
    pub seq_read: TestResult,
    /// Size of the data file the random I/O went to.
    pub size_bytes: u64,
}

use crate::device::fio::sig3;

fn latency_of(l: Option<LatencyUs>, what: &str) -> Result<LatencyUs> {
    l.ok_or_else(|| anyhow!("calibrate: the {what} test completed no operation"))
}

/// The p99 of the log-normal the model fits (service time = latency less
/// `fixed`) whose mean is the measured `mean`, for a measured `median`.
///
/// The model draws service times from a log-normal through the median and
/// p99; a measured p99 is a poor guide to the mean on a disk with a heavy
/// tail (a shared disk's stalls), and the mean is what sets throughput and
/// every breakdown share. So calibrate states the p99 that gives the
/// measured mean, and records the measured p99 in `source`.
pub fn mean_matching_p99(fixed: f64, median: f64, mean: f64) -> f64 {
    let m = median - fixed;
    let e = mean - fixed;
    if m <= 0.0 || e <= m {
        return median;
    }
    let sigma = (2.0 * (e / m).ln()).sqrt();
    fixed + m * (crate::device::profile::Z99 * sigma).exp()
}

/// A profile latency from measured figures: the median, and the p99 that
/// reproduces the mean (see [`mean_matching_p99`]).
fn fitted(l: LatencyUs, fixed: f64) -> Latency {
    let median = sig3(l.p50.max(fixed + 0.1));
    Latency {
        median_us: median,
        p99_us: sig3(mean_matching_p99(fixed, median, l.mean)).max(median),
    }
}

/// Where IOPS stop scaling: the first queue depth that no deeper one beats
/// by [`KNEE_GAIN`] or more (so a single slow measurement does not end the
/// sweep early); the last depth if IOPS keep scaling.
pub fn knee(sweep: &[(u32, f64)]) -> u32 {
    for (i, &(qd, iops)) in sweep.iter().enumerate() {
        let best_after = sweep[i + 1..].iter().map(|s| s.1).fold(0.0, f64::max);
        if best_after < KNEE_GAIN * iops {
            return qd;
        }
    }
    sweep.last().map_or(1, |s| s.0)
}

/// µs each operation in flight adds to the others' latency, fitted to a
/// read sweep (depth, IOPS) as latency(n) = `l1` + c × (n − 1) with equal
/// weight on every depth's relative error; 0 if latency does not grow.
pub fn contention_fit(sweep: &[(u32, f64)], l1: f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for &(qd, iops) in sweep {
        if qd < 2 || iops <= 0.0 {
            continue;
        }
        let latency = f64::from(qd) * 1e6 / iops;
        let x = f64::from(qd - 1) / latency;
        num += x * (1.0 - l1 / latency);
        den += x * x;
    }
    if den > 0.0 { (num / den).max(0.0) } else { 0.0 }
}

/// Root mean square relative error of `model` (operations per µs at a
/// depth) over the sweep.
fn sweep_error(sweep: &[(u32, f64)], model: impl Fn(f64) -> f64) -> f64 {
    let errs: Vec<f64> = sweep
        .iter()
        .filter(|s| s.1 > 0.0)
        .map(|&(qd, iops)| model(f64::from(qd)) * 1e6 / iops - 1.0)
        .collect();
    (errs.iter().map(|e| e * e).sum::<f64>() / errs.len().max(1) as f64).sqrt()
}

/// The profile, the knee and what was concluded, from the measurements.
pub fn derive(
    m: &Measured,
    name: &str,
    args: &CalibrateArgs,
    device: &str,
    engine: &str,
) -> Result<(Profile, u32, Vec<String>)> {
    let mut findings = Vec::new();
    // The profile's latencies are those of isolated I/O (see --think-us);
    // rates and the throttle test use the back-to-back runs.
    let read_m = latency_of(m.iso_read.read, "isolated QD1 read")?;
    let b2b_read = latency_of(m.qd1_read.read, "QD1 read")?;
    let write_m = latency_of(m.qd1_write.write, "QD1 write")?;
    let flush_m = latency_of(m.iso_wal.sync, "isolated WAL fdatasync")?;
    let bandwidth = sig3(m.seq_read.mib_per_s.max(m.seq_write.mib_per_s).max(1.0));
    let qd1_flush = m.wal1.ops_per_s;
    let par_flush = m.wal4.ops_per_s;
    let agree = |a: f64, b: f64| a.max(b) / a.min(b).max(1e-9) <= AGREE;

    // A throttle first: it shapes how every other figure is read.
    let knee_qd = knee(&m.sweep);
    let plateau = m.sweep.iter().map(|s| s.1).fold(0.0, f64::max);
    let p1 = m.sweep[0].1;
    let natural_qd1 = 1e6 / b2b_read.p50.max(0.1);
    let flat = m.sweep.last().map_or(0.0, |s| s.1) < FLAT_SWEEP * p1;
    let throttled = p1 < THROTTLED_QD1 * natural_qd1;
    let write_rate = m.write16.ops_per_s;
    let mixed_rate = m.mixed.ops_per_s;
    let mut caps = Caps::default();
    // Write+fdatasync pairs per second the caps allow, if a write cap binds.
    let mut capped_pairs = None;
    if flat && throttled {
        // blk-throttle-like: I/O within budget runs at device speed, the
        // rest stalls for the slice: 100 ms buckets.
        caps.bucket_ms = 100.0;
        // The throttle lets bursts through; its rate is the sweep's median.
        let mut rates: Vec<f64> = m.sweep.iter().map(|s| s.1).collect();
        rates.sort_by(f64::total_cmp);
        let cap = sig3(rates[rates.len() / 2]);
        let lead = format!(
            "QD1 reads run at {p1:.0}/s where their {:.1} µs median allows {natural_qd1:.0}/s, and \
             the read sweep is flat: a throttle",
            b2b_read.p50
        );
        if agree(mixed_rate, cap) && agree(write_rate, cap) {
            caps.iops = Some(cap);
            findings.push(format!(
                "{lead}; reads, writes and the 50/50 mix all stop at ~{cap} IOPS: a combined \
                 cap, caps.iops = {cap}"
            ));
        } else if agree(mixed_rate, cap + write_rate) {
            let wcap = sig3(write_rate);
            caps.read_iops = Some(cap);
            caps.write_iops = Some(wcap);
            findings.push(format!(
                "{lead}; reads stop at ~{cap} IOPS, writes at ~{wcap}, the 50/50 mix at their \
                 sum: per-direction caps"
            ));
        } else {
            caps.iops = Some(cap);
            findings.push(format!(
                "{lead} of ~{cap} IOPS (writes {write_rate:.0}/s and the mix {mixed_rate:.0}/s \
                 do not tell combined from per-direction; taken as combined)"
            ));
        }
        let write_cap = caps.write_iops.or(caps.iops).unwrap_or(f64::INFINITY);
        // Four streams of write + fdatasync saturate the write cap: at half
        // of it, each fdatasync costs a write I/O too.
        if agree(par_flush * 2.0, write_cap) || agree(qd1_flush * 2.0, write_cap) {
            caps.flush_counts_as_io = true;
            findings.push(format!(
                "write + fdatasync runs at {par_flush:.0}/s ({STREAMS} streams), half the write \
                 cap: each fdatasync is charged as a write I/O (flush_counts_as_io)"
            ));
            capped_pairs = Some(write_cap / 2.0);
        } else if agree(par_flush, write_cap) {
            capped_pairs = Some(write_cap);
        }
    }
    let capped = flat && throttled;

    // Flushes: do four streams go faster than one? Behind a write cap that
    // both rates hit, they cannot, whatever the disk does.
    let flush_to_media = match capped_pairs {
        Some(limit) if agree(par_flush, limit) => {
            findings.push(format!(
                "{STREAMS} streams of WAL append + fdatasync: {par_flush:.0}/s, the write cap's \
                 limit: whether flushes scale does not show behind it, flush_to_media = false"
            ));
            false
        }
        _ => {
            let serial = par_flush < FLUSH_SCALING_MIN * qd1_flush;
            findings.push(format!(
                "{STREAMS} streams of WAL append + fdatasync: {par_flush:.0}/s against one \
                 stream's {qd1_flush:.0}/s ({:.1}×): {}",
                par_flush / qd1_flush.max(1e-9),
                if serial {
                    "flushes do not scale, flush_to_media = true"
                } else {
                    "flushes scale, flush_to_media = false"
                }
            ));
            serial
        }
    };

    // The sequential tests see the medium or a throughput cap, whichever
    // is lower. Behind a throttle it is the cap; and the medium must never
    // take more than half the fastest median to move one 8 KiB page.
    let floor_mib_s =
        2.0 * PAGE_BYTES as f64 / 1_048_576.0 / (read_m.p50.min(write_m.p50).max(0.1) / 1e6);
    let bandwidth = if capped {
        let (r, w) = (sig3(m.seq_read.mib_per_s), sig3(m.seq_write.mib_per_s));
        if caps.iops.is_some() {
            caps.mib_s = Some(r.max(w).max(1.0));
        } else {
            caps.read_mib_s = Some(r.max(1.0));
            caps.write_mib_s = Some(w.max(1.0));
        }
        findings.push(format!(
            "sequential 1 MiB reads {r} MiB/s and writes {w} MiB/s behind the throttle: taken as \
             its throughput caps; bandwidth_mib_s is set so it does not bind"
        ));
        sig3((10.0 * r.max(w)).max(floor_mib_s))
    } else {
        sig3(bandwidth.max(floor_mib_s))
    };
    let placeholder = Latency {
        median_us: 1.0,
        p99_us: 1.0,
    };
    let mut p = Profile {
        name: name.to_string(),
        description: String::new(),
        source: String::new(),
        latency_io_kib: (PAGE_BYTES / 1024) as u32,
        read: placeholder,
        write: placeholder,
        flush: placeholder,
        channels: 1,
        contention_us: 0.0,
        bandwidth_mib_s: bandwidth,
        network_rtt_us: 0.0,
        flush_to_media,
        caps,
    };
    if capped {
        // The means include the throttle's stalls, which the model's caps
        // make themselves: state the measured percentiles.
        let measured = |l: LatencyUs| {
            let median = sig3(l.p50.max(0.1));
            Latency {
                median_us: median,
                p99_us: sig3(l.p99).max(median),
            }
        };
        p.read = measured(read_m);
        p.write = measured(write_m);
        p.flush = measured(flush_m);
        findings.push(
            "latencies are the measured p50 and p99 (the means include the throttle's stalls)"
                .to_string(),
        );
    } else {
        p.read = fitted(read_m, p.fixed_us(Op::Read));
        p.write = fitted(write_m, p.fixed_us(Op::Write));
        p.flush = fitted(flush_m, p.fixed_us(Op::Flush));
        findings.push(format!(
            "p99_us of read, write and flush ({}, {}, {} µs) are the log-normal p99s that give \
             the measured means ({:.1}, {:.1}, {:.1} µs); measured p99s {:.0}, {:.0}, {:.0} µs",
            p.read.p99_us,
            p.write.p99_us,
            p.flush.p99_us,
            read_m.mean,
            write_m.mean,
            flush_m.mean,
            read_m.p99,
            write_m.p99,
            flush_m.p99
        ));
    }

    if capped {
        // Behind a cap the device's own parallelism does not show: enough
        // channels that the cap, not they, binds.
        p.channels = ((2.0 * plateau * p.qd1_mean_us(Op::Read) / 1e6).ceil() as u32).max(4);
        findings.push(format!(
            "channels {}: hidden behind the cap, set so that the cap binds",
            p.channels
        ));
    } else {
        // Two shapes of parallelism; the sweep says which this disk has.
        // Channels: Little's law where IOPS stop scaling, the plateau's
        // IOPS × the time one operation takes; latency stays flat until
        // they are all busy (a local SSD). Contention: every operation in
        // flight slows the others from the second one on (a virtualised or
        // networked disk); latency grows by the same step per depth.
        // Both shapes from the back-to-back QD1 latency, as the sweep ran.
        let l1 = b2b_read.mean;
        // Channels so that the model, with the profile's latency, reaches
        // the plateau.
        let k = (plateau * p.qd1_mean_us(Op::Read) / 1e6)
            .round()
            .clamp(1.0, 64.0);
        let c = contention_fit(&m.sweep, l1);
        let max_qd = m.sweep.iter().map(|s| s.0).max().unwrap_or(1);
        let channels_err = sweep_error(&m.sweep, |n| n.min(k) / l1);
        let contention_err = sweep_error(&m.sweep, |n| n / (l1 + c * (n - 1.0)));
        let describe = |err: f64| format!("{:.0}%", 100.0 * err);
        if c > 0.0 && contention_err < channels_err {
            p.contention_us = sig3(c);
            p.channels = max_qd.max(1);
            findings.push(format!(
                "random-read latency grows by {c:.1} µs per operation in flight from QD1 on \
                 (mean {l1:.1} µs at QD1): contention_us = {}, channels {} so that they never \
                 bind below QD{max_qd}; this fits the sweep to {} rms, {} channels with no \
                 contention to {}",
                p.contention_us,
                p.channels,
                describe(contention_err),
                k,
                describe(channels_err)
            ));
        } else {
            p.channels = k as u32;
            findings.push(format!(
                "random-read IOPS stop scaling at QD{knee_qd} (no deeper queue gives {:.0}% more); \
                 plateau {plateau:.0} IOPS × the profile's mean QD1 read latency {:.1} µs = {} \
                 channels; this fits the sweep to {} rms, a contention of {c:.1} µs per \
                 operation in flight to {}",
                (KNEE_GAIN - 1.0) * 100.0,
                p.qd1_mean_us(Op::Read),
                p.channels,
                describe(channels_err),
                describe(contention_err)
            ));
        }
    }
    if m.think_us > 0.0
        && let (Some(iso), Some(pair)) = (m.iso_wal.pair, m.wal1.pair)
    {
        findings.push(format!(
            "I/O {} µs apart, as a database issues it between stretches of CPU work, is what \
             read, write and flush describe: a read takes {:.1} µs on average against {:.1} µs \
             back to back ({:+.0}%), WAL append + fdatasync {:.1} µs against {:.1} µs ({:+.0}%)",
            m.think_us,
            read_m.mean,
            b2b_read.mean,
            100.0 * (read_m.mean / b2b_read.mean.max(1e-9) - 1.0),
            iso.mean,
            pair.mean,
            100.0 * (iso.mean / pair.mean.max(1e-9) - 1.0)
        ));
    }
    p.description = format!("Calibrated by pgiosim on {}, {device}", hostname());
    let sweep_text: Vec<String> = m
        .sweep
        .iter()
        .map(|(q, r)| format!("QD{q} {r:.0}"))
        .collect();
    p.source = format!(
        "pgiosim calibrate {} in {} on {}, {device}, {engine}, O_DIRECT, data file {}, {} s per \
         test: QD1 8 KiB random read p50 {:.1} µs p99 {:.1} µs (pause{think}; back to back p50 \
         {:.1} µs); QD1 8 KiB random write p50 {:.1} µs p99 {:.1} µs (pause{think}); 8 KiB \
         WAL append + fdatasync {:.0}/s back to back, the fdatasync alone p50 {:.1} µs p99 {:.1} \
         µs (pause{think}), {STREAMS} streams {:.0}/s; random-read IOPS {} (knee QD{knee_qd}); QD16 \
         random write {:.0} IOPS; QD32 50/50 mix {:.0} IOPS; sequential 1 MiB read {:.0} MiB/s, \
         write {:.0} MiB/s. {}",
        utc_now(),
        args.dir.display(),
        hostname(),
        crate::units::format_memory(m.size_bytes),
        args.seconds_per_test,
        read_m.p50,
        read_m.p99,
        b2b_read.p50,
        m.qd1_write.write.map_or(0.0, |l| l.p50),
        m.qd1_write.write.map_or(0.0, |l| l.p99),
        qd1_flush,
        flush_m.p50,
        flush_m.p99,
        par_flush,
        sweep_text.join(", "),
        m.write16.ops_per_s,
        m.mixed.ops_per_s,
        m.seq_read.mib_per_s,
        m.seq_write.mib_per_s,
        findings.join("; "),
        think = if m.think_us > 0.0 {
            format!(" {} µs", m.think_us)
        } else {
            " none".to_string()
        }
    );
    let text = serde_json::to_string(&p)?;
    let p = Profile::from_json(&text, "the calibrated profile")
        .context("calibrate: the measured figures do not make a valid profile")?;
    Ok((p, knee_qd, findings))
}

/// 8 KiB random reads and writes mixed `write_share`, closed loop at `qd`,
/// in the model: operations per second.
fn model_mixed_iops(p: &Profile, qd: u32, write_share: f64) -> f64 {
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;
    let mut m = DeviceModel::new(p, 7);
    let mut rng = SmallRng::seed_from_u64(7);
    let mut op = || {
        if rng.random::<f64>() < write_share {
            Op::Write
        } else {
            Op::Read
        }
    };
    let mut inflight: BinaryHeap<Reverse<Nanos>> = (0..qd)
        .map(|_| Reverse(m.submit(0, op(), PAGE_BYTES)))
        .collect();
    let n = 100_000u64;
    let (mut first, mut last) = (0, 0);
    for i in 0..n + n / 10 {
        let Reverse(t) = inflight.pop().expect("qd ≥ 1");
        if i == n / 10 {
            first = t;
        }
        last = t;
        inflight.push(Reverse(m.submit(t, op(), PAGE_BYTES)));
    }
    n as f64 / ((last - first) as f64 / 1e9)
}

/// ", N µs apart" for isolated tests, "" for back to back.
fn apart(think_us: f64) -> String {
    if think_us > 0.0 {
        format!(", {think_us} µs apart")
    } else {
        String::new()
    }
}

/// (figure, measured, the profile's model) for the tests the model can run.
fn model_check(p: &Profile, m: &Measured) -> Vec<(String, f64, f64)> {
    let (_, p50, _) = microbench::qd1_read_latency(p, 1);
    let mut v = vec![(
        format!("QD1 read p50{}, µs", apart(m.think_us)),
        m.iso_read.read.map_or(0.0, |l| l.p50),
        p50,
    )];
    for &(qd, iops) in &m.sweep {
        if qd == 1 || qd == 8 || qd == 32 || qd == 64 {
            let back = if qd == 1 { ", back to back" } else { "" };
            v.push((
                format!("QD{qd} read IOPS{back}"),
                iops,
                microbench::read_iops(p, qd, 1),
            ));
        }
    }
    v.push((
        format!("write+fdatasync{}, µs", apart(m.think_us)),
        m.iso_wal.pair.map_or(0.0, |l| l.mean),
        1e6 / microbench::qd1_flush_rate(p, 1),
    ));
    v.push((
        format!("{STREAMS} × write+fdatasync /s"),
        m.wal4.ops_per_s,
        microbench::parallel_flush_rate(p, STREAMS, 1, 1),
    ));
    v.push((
        "QD32 50/50 mix IOPS".into(),
        m.mixed.ops_per_s,
        model_mixed_iops(p, 32, 0.5),
    ));
    v
}

fn fmt_lat(l: Option<LatencyUs>) -> String {
    match l {
        Some(l) => format!("p50 {:.1} µs, p99 {:.1} µs", l.p50, l.p99),
        None => "-".into(),
    }
}

/// The table `calibrate` prints.
pub fn render_table(c: &Calibration) -> String {
    let mut s = format!(
        "calibrate: {} on {}, {} engine, O_DIRECT, {} s per test\n\n",
        c.dir, c.device, c.engine, c.seconds_per_test
    );
    s.push_str(&format!("{:<44} {:>12}  {}\n", "test", "rate", "latency"));
    for t in &c.tests {
        let (rate, lat) = if t.test.starts_with("sequential") {
            (format!("{:.0} MiB/s", t.mib_per_s), String::new())
        } else if t.test.contains("fdatasync") {
            (
                format!("{:.0}/s", t.ops_per_s),
                format!("pair {}; fdatasync {}", fmt_lat(t.pair), fmt_lat(t.sync)),
            )
        } else {
            let l = match (t.read, t.write) {
                (Some(r), Some(w)) => {
                    format!("read {}; write {}", fmt_lat(Some(r)), fmt_lat(Some(w)))
                }
                (r, w) => fmt_lat(r.or(w)),
            };
            (format!("{:.0} IOPS", t.ops_per_s), l)
        };
        s.push_str(&format!("{:<44} {:>12}  {}\n", t.test, rate, lat));
    }
    s.push_str("\nrandom-read IOPS by queue depth:\n  QD   ");
    for (q, _) in &c.sweep {
        s.push_str(&format!("{q:>8}"));
    }
    s.push_str("\n  IOPS ");
    for (_, r) in &c.sweep {
        s.push_str(&format!("{r:>8.0}"));
    }
    s.push_str(&format!(
        "\n  knee at QD{}: no deeper queue gives {:.0}% more\n\n",
        c.knee_qd,
        (KNEE_GAIN - 1.0) * 100.0
    ));
    for f in &c.findings {
        s.push_str(&format!("* {f}\n"));
    }
    s.push_str(&format!(
        "\n{:<28} {:>12} {:>14}\n",
        "check", "measured", "profile model"
    ));
    for (what, meas, model) in &c.model_check {
        s.push_str(&format!("{what:<28} {meas:>12.1} {model:>14.1}\n"));
    }
    s.push_str(&format!("\n{}\n", c.profile.summary_line()));
    s
}

// ---- `pgiosim profile` ------------------------------------------------------

/// `pgiosim profile ...`: device profiles from other tools' results.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ProfileCommand {
    /// Build a device profile from fio JSON results (fio --output-format=json).
    ///
    /// Reads the common 16-test battery (4k random and 1M sequential, QD1 and
    /// parallel, read, write, 50/50 mixed and fsync'd write) from one or more
    /// files, classifying each job by its options. Tests missing from the
    /// input are filled from --base and listed in a warning.
    FromFio(FromFioArgs),
    /// Build a device profile from YABS's disk test (text or JSON output).
    ///
    /// YABS runs fio randrw 50/50 with 2 jobs x QD64 at 4k, 64k, 512k and
    /// 1m. The 4k rate becomes a cap (or more channels), the best of 512k
    /// and 1m the bandwidth; QD1 latencies, fsync latency and whether
    /// flushes scale, which YABS does not measure, come from --base and the
    /// profile's source says so. Prints YABS's figures beside what the model
    /// makes of the profile.
    FromYabs(FromYabsArgs),
    /// Check a device profile and show what the device model makes of it:
    /// QD1 read latency, QD32 read IOPS, QD1 and parallel write+fdatasync rates.
    Show(ShowArgs),
}

/// Flags of `profile from-fio`.
#[derive(Debug, Clone, clap::Args)]
pub struct FromFioArgs {
    /// fio result files, JSON (fio --output-format=json).
    #[arg(required = true, value_name = "FIO_JSON")]
    pub files: Vec<PathBuf>,
    /// Where to write the profile.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Name of the profile [default: the output file's name without .json].
    #[arg(long)]
    pub name: Option<String>,
    /// Profile whose figures fill the tests missing from the input.
    #[arg(long, value_name = "NAME|FILE", default_value = "nvme")]
    pub base: String,
    /// Print nothing but errors and warnings.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Flags of `profile from-yabs`.
#[derive(Debug, Clone, clap::Args)]
pub struct FromYabsArgs {
    /// YABS output: the text it prints, or its JSON (yabs.sh -j / -w).
    #[arg(value_name = "YABS_OUTPUT")]
    pub file: PathBuf,
    /// Which disk, when the file holds several results: its number (1, 2,
    /// ...) or the partition YABS names (/dev/sdb).
    #[arg(long, value_name = "N|PARTITION")]
    pub disk: Option<String>,
    /// Where to write the profile.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Name of the profile [default: the output file's name without .json].
    #[arg(long)]
    pub name: Option<String>,
    /// Profile whose QD1 latencies, flush and round trip fill what YABS
    /// does not measure.
    #[arg(long, value_name = "NAME|FILE", default_value = "nvme")]
    pub base: String,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Flags of `profile show`.
#[derive(Debug, Clone, clap::Args)]
pub struct ShowArgs {
    /// A shipped profile's name or a profile JSON file.
    #[arg(value_name = "NAME|FILE")]
    pub profile: String,
    /// Print the profile and its figures as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// A shipped profile by name, or a profile file; errors name `flag`.
fn profile_arg(flag: &str, arg: &str) -> Result<Profile> {
    if let Some(p) = Profile::lookup(arg) {
        return p.map_err(|e| usage(format!("{flag} {arg}: {e}")));
    }
    let path = Path::new(arg);
    if path.exists() {
        return Profile::load(path);
    }
    Err(usage(format!(
        "{flag} {arg}: no such shipped profile or file; shipped: {}",
        crate::device::profile::shipped_names().join(", ")
    )))
}

/// Runs `pgiosim profile ...`.
pub fn profile_command(cmd: &ProfileCommand) -> Result<i32> {
    match cmd {
        ProfileCommand::FromFio(a) => from_fio(a),
        ProfileCommand::FromYabs(a) => from_yabs(a),
        ProfileCommand::Show(a) => show(a),
    }
}

/// The profile's name: --name, or the output file's; checked.
fn profile_name(name: Option<&String>, output: &Path) -> Result<String> {
    let name = name.cloned().unwrap_or_else(|| name_from_path(output));
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(usage(format!(
            "--name {name:?}: may hold only lowercase letters, digits and '-'"
        )));
    }
    Ok(name)
}

fn from_yabs(a: &FromYabsArgs) -> Result<i32> {
    let name = profile_name(a.name.as_ref(), &a.output)?;
    let base = profile_arg("--base", &a.base)?;
    let disks = crate::device::yabs::load(&a.file)?;
    let file = a.file.display().to_string();
    let list = || {
        disks
            .iter()
            .enumerate()
            .map(|(i, d)| format!("{} ({})", i + 1, d.label))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let disk = match &a.disk {
        None if disks.len() == 1 => &disks[0],
        None => {
            return Err(usage(format!(
                "{file}: holds {} disks' results, {}; choose one with --disk",
                disks.len(),
                list()
            )));
        }
        Some(d) => {
            let by_number = d.parse::<usize>().ok().and_then(|n| n.checked_sub(1));
            by_number
                .and_then(|i| disks.get(i))
                .or_else(|| disks.iter().find(|x| x.label == *d))
                .ok_or_else(|| {
                    usage(format!("--disk {d}: not in {file}, which holds {}", list()))
                })?
        }
    };
    let imp = crate::device::yabs::build(disk, &name, &base, &file)?;
    let text = serde_json::to_string_pretty(&imp.profile)? + "\n";
    std::fs::write(&a.output, &text)
        .with_context(|| format!("-o {}: cannot write the profile", a.output.display()))?;
    if !a.quiet {
        println!(
            "YABS {} ({}), at 128 I/Os in flight, 50/50 read/write:",
            file, disk.label
        );
        print!("{}", crate::device::yabs::render_table(&imp));
        for n in &imp.notes {
            println!("* {n}");
        }
        println!(
            "* not measured by YABS, from {}: QD1 read/write latency, fsync latency, whether \
             flushes scale, round trip",
            base.name
        );
        println!("\n{}", imp.profile.summary_line());
        println!(
            "profile {} written to {}",
            imp.profile.name,
            a.output.display()
        );
    }
    Ok(0)
}

fn from_fio(a: &FromFioArgs) -> Result<i32> {
    let name = profile_name(a.name.as_ref(), &a.output)?;
    let base = profile_arg("--base", &a.base)?;
    let files = a
        .files
        .iter()
        .map(|p| {
            let text =
                crate::input::read_text(p, "fio result", crate::input::LARGE_FILE_MAX_BYTES)?;
            crate::device::fio::FioFile::parse(&text, &p.display().to_string())
                .map_err(crate::error::bad_input)
        })
        .collect::<Result<Vec<_>>>()?;
    let imp = crate::device::fio::build(&files, &name, &base).map_err(crate::error::bad_input)?;
    let text = serde_json::to_string_pretty(&imp.profile)? + "\n";
    Profile::from_json(&text, &a.output.display().to_string())?;
    std::fs::write(&a.output, &text)
        .with_context(|| format!("-o {}: cannot write the profile", a.output.display()))?;
    if let Some(w) = imp.warning() {
        eprintln!("warning: {w}");
    }
    if !a.quiet {
        for i in &imp.ignored {
            eprintln!("notice: ignored {i}");
        }
        print!("{}", crate::device::fio::render_table(&imp));
        for n in &imp.notes {
            println!("* {n}");
        }
        println!("\n{}", imp.profile.summary_line());
        println!(
            "profile {} written to {}",
            imp.profile.name,
            a.output.display()
        );
    }
    Ok(0)
}

fn show(a: &ShowArgs) -> Result<i32> {
    let p = profile_arg("profile show", &a.profile)?;
    let f = microbench::figures(&p, 1);
    if a.json {
        let v = serde_json::json!({ "profile": p.to_json(), "figures": f });
        println!("{}", serde_json::to_string_pretty(&v)?);
    } else {
        println!("{}", p.summary_line());
        println!(
            "model: QD1 8 KiB read mean {:.1} µs, p50 {:.1} µs, p99 {:.1} µs; QD32 read {:.0} IOPS; \
             write+fdatasync QD1 {:.0}/s, 4 × QD64 {:.0}/s",
            f.qd1_read_mean_us,
            f.qd1_read_p50_us,
            f.qd1_read_p99_us,
            f.qd32_read_iops,
            f.qd1_flush_per_s,
            f.parallel_flush_per_s
        );
    }
    Ok(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knee_is_where_doubling_stops_paying() {
        let s = [
            (1, 20e3),
            (2, 39e3),
            (4, 70e3),
            (8, 85e3),
            (16, 90e3),
            (32, 91e3),
            (64, 90e3),
        ];
        // 70k → 85k is still +21%; nothing beats 85k by 15%.
        assert_eq!(knee(&s), 8);
        // A slow QD2 does not end the sweep.
        let dip = [(1, 13.3), (2, 11.8), (4, 15.5), (8, 18.3), (16, 29.9)];
        assert_eq!(knee(&dip), 16);
        let flat = [(1, 3000.0), (2, 3000.0), (4, 3010.0)];
        assert_eq!(knee(&flat), 1);
        let scaling = [(1, 1.0), (2, 2.0), (4, 4.0)];
        assert_eq!(knee(&scaling), 4);
    }

    #[test]
    fn names_come_from_the_output_file() {
        assert_eq!(name_from_path(Path::new("/x/MyDisk.json")), "mydisk");
        assert_eq!(name_from_path(Path::new("a b_c.json")), "a-b-c");
        assert_eq!(name_from_path(Path::new("___.json")), "calibrated");
    }

    #[test]
    fn utc_dates_are_civil() {
        let s = utc_now();
        assert!(s.ends_with(" UTC") && s.len() == 20, "{s}");
        assert!(s.starts_with("20"), "{s}");
    }

    fn lat(p50: f64, mean: f64, p99: f64) -> Option<LatencyUs> {
        Some(LatencyUs {
            count: 1000,
            mean,
            p50,
            p99,
            max: p99 * 3.0,
        })
    }

    fn test(ops: f64, read: Option<LatencyUs>, write: Option<LatencyUs>) -> TestResult {
        TestResult {
            test: "t".into(),
            seconds: 1.0,
            ops_per_s: ops,
            mib_per_s: 0.0,
            read,
            write,
            sync: None,
            pair: None,
        }
    }

    fn wal(pairs: f64, sync: Option<LatencyUs>) -> TestResult {
        TestResult {
            sync,
            ..test(pairs, None, None)
        }
    }

    fn seq(mib: f64) -> TestResult {
        TestResult {
            mib_per_s: mib,
            ..test(mib, None, None)
        }
    }

    fn args() -> CalibrateArgs {
        CalibrateArgs {
            dir: PathBuf::from("/mnt/disk"),
            output: PathBuf::from("disk.json"),
            seconds_per_test: 4.0,
            think_us: THINK_US,
            size: "1GB".into(),
            name: None,
            json: None,
            keep: false,
            quiet: true,
        }
    }

    /// This VM's disk, as calibrate measured it on a quiet host.
    fn this_vm() -> Measured {
        Measured {
            qd1_read: test(14_320.0, lat(64.6, 69.6, 131.7), None),
            iso_read: test(1_750.0, lat(64.6, 69.6, 131.7), None),
            qd1_write: test(11_700.0, None, lat(77.1, 85.4, 188.2)),
            wal1: wal(7744.0, lat(54.8, 64.1, 165.6)),
            iso_wal: wal(1_600.0, lat(54.8, 64.1, 165.6)),
            think_us: 500.0,
            wal4: wal(14_261.0, lat(60.0, 70.0, 200.0)),
            sweep: vec![
                (1, 14_320.0),
                (2, 16_573.0),
                (4, 27_341.0),
                (8, 45_537.0),
                (16, 47_904.0),
                (32, 57_676.0),
                (64, 68_241.0),
            ],
            write16: test(55_322.0, None, lat(280.0, 290.0, 600.0)),
            mixed: test(61_820.0, lat(500.0, 520.0, 900.0), lat(510.0, 530.0, 950.0)),
            seq_write: seq(2724.0),
            seq_read: seq(1532.0),
            size_bytes: 1 << 30,
        }
    }

    #[test]
    fn a_disk_slowing_from_qd2_gets_contention() {
        let (p, knee_qd, findings) =
            derive(&this_vm(), "vm", &args(), "vda 254:0", "io_uring").expect("a valid profile");
        // 57,676 at QD32 is 15% below QD64's 68,241: still scaling.
        assert_eq!(knee_qd, 64);
        // Latency grows from QD2 on: 5 channels (the plateau × the mean)
        // would run QD4 at twice the measured IOPS.
        assert_eq!(p.channels, 64, "{findings:?}");
        assert_eq!(p.contention_us, 15.8, "{findings:?}");
        assert_eq!(p.caps, Caps::default());
        assert!(!p.flush_to_media, "{findings:?}");
        assert_eq!(p.read.median_us, 64.6);
        assert_eq!(p.bandwidth_mib_s, 2720.0);
        // The p99 is fitted so that the model's mean is the measured one.
        assert!((p.qd1_mean_us(Op::Read) - 69.6).abs() < 0.5);
        assert!((p.qd1_mean_us(Op::Flush) - 64.1).abs() < 0.5);
        assert!(p.source.contains("QD8 45537"), "{}", p.source);
    }

    #[test]
    fn a_disk_flat_until_its_channels_are_busy_gets_channels() {
        // A local SSD: 69.6 µs until eight are in flight, then a plateau.
        let mut m = this_vm();
        m.sweep = [1u32, 2, 4, 8, 16, 32, 64]
            .iter()
            .map(|&qd| {
                (
                    qd,
                    f64::from(qd.min(8)) * 1e6 / 69.6 * if qd > 8 { 1.02 } else { 1.0 },
                )
            })
            .collect();
        let (p, _, findings) =
            derive(&m, "ssd", &args(), "nvme0n1 259:0", "io_uring").expect("a valid profile");
        assert_eq!(p.contention_us, 0.0, "{findings:?}");
        assert_eq!(p.channels, 8, "{findings:?}");
    }

    #[test]
    fn contention_fit_recovers_a_linear_slowdown() {
        let sweep: Vec<(u32, f64)> = [1u32, 2, 4, 8, 16, 32, 64]
            .iter()
            .map(|&qd| (qd, f64::from(qd) * 1e6 / (59.0 + 13.5 * f64::from(qd - 1))))
            .collect();
        assert!((contention_fit(&sweep, 59.0) - 13.5).abs() < 1e-9);
        // Latency that does not grow: no contention.
        let flat: Vec<(u32, f64)> = [1u32, 2, 4]
            .iter()
            .map(|&q| (q, f64::from(q) * 1e4))
            .collect();
        assert_eq!(contention_fit(&flat, 100.0), 0.0);
    }

    #[test]
    fn flushes_that_do_not_scale_go_to_media() {
        let mut m = this_vm();
        m.wal4 = wal(8_100.0, lat(250.0, 260.0, 500.0));
        let (p, _, _) = derive(&m, "vm", &args(), "vda", "io_uring").unwrap();
        assert!(p.flush_to_media);
    }

    #[test]
    fn a_blkio_throttle_becomes_caps() {
        // What calibrate measured inside the cgroup v1 blkio cap of
        // design.md (3,000 read and write IOPS, 125 MiB/s each way).
        let m = Measured {
            qd1_read: test(3000.0, lat(70.5, 333.0, 104.0), None),
            iso_read: test(1_700.0, lat(70.5, 80.0, 104.0), None),
            qd1_write: test(3000.0, None, lat(62.0, 337.0, 2742.0)),
            wal1: wal(1476.7, lat(64.0, 640.0, 3942.0)),
            iso_wal: wal(1_300.0, lat(64.0, 100.0, 3942.0)),
            think_us: 500.0,
            wal4: wal(1440.0, lat(70.0, 700.0, 4000.0)),
            sweep: vec![
                (1, 3000.0),
                (2, 3000.0),
                (4, 3004.0),
                (8, 2939.0),
                (16, 3053.0),
                (32, 2782.0),
                (64, 3120.0),
            ],
            write16: test(3000.0, None, lat(5000.0, 5300.0, 80_000.0)),
            mixed: test(
                6000.0,
                lat(5000.0, 5300.0, 80_000.0),
                lat(5000.0, 5300.0, 80_000.0),
            ),
            seq_write: seq(124.0),
            seq_read: seq(126.0),
            size_bytes: 256 << 20,
        };
        let (p, knee_qd, findings) = derive(&m, "cap", &args(), "vda", "io_uring").unwrap();
        assert_eq!(knee_qd, 1);
        assert_eq!(p.caps.read_iops, Some(3000.0), "{findings:?}");
        assert_eq!(p.caps.write_iops, Some(3000.0));
        assert_eq!(p.caps.iops, None);
        assert!(p.caps.flush_counts_as_io, "{findings:?}");
        assert_eq!(p.caps.read_mib_s, Some(126.0));
        assert_eq!(p.caps.write_mib_s, Some(124.0));
        assert_eq!(p.caps.bucket_ms, 100.0);
        // The four streams hit the cap: that says nothing about flushes.
        assert!(!p.flush_to_media, "{findings:?}");
        // Measured percentiles, not the stall-inflated means.
        assert_eq!(p.read.median_us, 70.5);
        assert_eq!(p.read.p99_us, 104.0);
        assert!(p.bandwidth_mib_s > 1000.0);
        // The model of the profile runs at the cap.
        let iops = microbench::read_iops(&p, 32, 1);
        assert!((iops - 3000.0).abs() < 60.0, "{iops}");
        let pairs = microbench::qd1_flush_rate(&p, 1);
        assert!((pairs - 1500.0).abs() < 30.0, "{pairs}");
    }

    #[test]
    fn mean_matching_p99_gives_the_mean() {
        let p99 = mean_matching_p99(2.0, 60.0, 80.0);
        let sigma = crate::device::profile::lognormal_sigma(58.0, p99 - 2.0);
        let mean = 2.0 + 58.0 * (sigma * sigma / 2.0).exp();
        assert!((mean - 80.0).abs() < 1e-6, "{mean}");
        // A mean at or below the median: no spread.
        assert_eq!(mean_matching_p99(2.0, 60.0, 50.0), 60.0);
    }
}
