//! What `pgiosim calibrate` does: probe a real disk with pgiosim's own
//! engine and fit a device profile for `pgiosim model --device` to it.
//!
//! Every probe goes through the same engine `run` uses (io_uring, falling
//! back to psync; O_DIRECT) on pgiosim's own files, so the profile describes
//! the disk as `run` sees it, submission and reaping included. About a
//! minute and a half by default: 14 tests of `--seconds-per-test` (4 s)
//! each and nine of half that, the first tenth of each (at most 0.5 s) a
//! warm-up that is not counted.
//!
//! | test | → profile |
//! |---|---|
//! | QD1 8 KiB random read | `read.median_us`, `read.p99_us` |
//! | QD1 8 KiB random write | `write` |
//! | 8 KiB WAL append + fdatasync, 1 stream | `flush`: the fdatasync alone (that is, the pair less the write) |
//! | 64 KiB, 256 KiB and 1 MiB WAL appends + fdatasync, 1 stream | `flush_us_per_mib`: how the fdatasync grows with the bytes written before it |
//! | QD1 read, and 8 KiB WAL append + fdatasync, 50, 250 and 1000 µs apart | `idle`: what a pause before an I/O adds to it |
//! | the 8 KiB WAL test, 4 streams on 4 WAL files | `flush_to_media`: true if 4 streams do not reach 1.5 × one stream's rate; else `flush_contention_us`, so that the model's 4 streams run at the measured rate |
//! | random read at QD 2, 4, …, 64, two passes (up, then down) of half a test each, the better kept | the knee, the first QD no deeper one beats by 15%; `contention_us` or `channels` (Little's law: the plateau's IOPS × the profile's mean QD1 read latency), whichever fits the sweep better |
//! | random write at QD16, mixed 50/50 at QD32 | `write_contention_us`, so that the model's mix runs at the measured rate; or a cap: when QD1 already runs far below its own latency's rate (a throttle, not the disk) and the read sweep is flat, `caps.iops` (mixed ≈ read plateau) or `caps.read_iops`/`caps.write_iops` (mixed ≈ twice); `flush_counts_as_io` when write+fdatasync runs at half the write cap |
//! | sequential 1 MiB reads and WAL writes, 4 streams | `bandwidth_mib_s` and `write_bandwidth_mib_s` |
//!
//! Then the profile's model runs every test in virtual time, and the table
//! shows measured against modelled; a test the model misses by more than a
//! quarter is named in a warning and in the profile's description.
//!
//! The probe files live in `DIR/pgiosim-calibrate/` and are removed at the
//! end (`--keep` keeps them for the next calibration).
//!
//! The parts: `probe` runs the tests on the disk, `fit` turns what they
//! measured into a profile and checks it against the model, `render` writes
//! the table.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::Serialize;

use crate::core::io::{PAGE_BYTES, WAL_SEGMENT_BYTES};
use crate::datafiles::{self, DataDir, Layout};
use crate::device::profile::Profile;
use crate::stop::Stop;

use probe::Probed;

mod cgroup;
mod check;
mod fit;
mod inode;
pub(crate) mod probe;
mod render;

pub use check::Check;
pub use fit::{contention_fit, derive, knee, mean_matching_p99};
pub use probe::Measured;
pub use render::render_table;

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
/// A read sweep whose deepest [`PLATEAU_DEPTHS`] queue depths all run
/// within this ratio of each other stops at a rate, not at a device's
/// knee: a disk still gains a little from each doubling of the queue, a
/// throttle hands out the same budget at every depth (cgroup v1 blkio at
/// 16,000 IOPS: 16,000 to 16,004 from QD2 to QD64, where QD1 runs at
/// 12,000 and does not look throttled).
pub const PLATEAU_RATIO: f64 = 1.01;
/// How many of the deepest queue depths [`PLATEAU_RATIO`] looks at.
pub const PLATEAU_DEPTHS: usize = 4;
/// Queue depth of the deep random-write test.
pub const DEEP_WRITE_QD: u32 = 16;
/// Queue depth of the 50/50 read/write test.
pub const DEEP_MIX_QD: u32 = 32;
/// A throttle whose deep writes or mix have a p99 this many times what
/// even pacing gives each (depth ÷ rate), with a median below it, runs in
/// bursts and stalls (Linux's cgroup throttle): a pacing throttle's p99
/// stays within about twice its paced latency.
pub const STALL_OVER_PACED: f64 = 4.0;
/// Figures that agree within this ratio are "the same" (cap detection).
pub const AGREE: f64 = 1.15;
/// Parallel flushes below this multiple of one stream's rate do not scale.
pub const FLUSH_SCALING_MIN: f64 = 1.5;
/// Smallest data file.
pub const SIZE_MIN_BYTES: u64 = 16 << 20;
/// Name of the subdirectory of --dir the probe files go to.
pub const SUBDIR: &str = "pgiosim-calibrate";

/// A probe the profile's model misses by more than this is named in the
/// profile's description and in a warning.
pub const MISS_WARN: f64 = 0.25;

/// A calibration as `calibrate`'s flags ask for it.
#[derive(Debug, Clone)]
pub struct Options {
    /// Directory on the disk to probe; the probe files go to
    /// DIR/pgiosim-calibrate.
    pub dir: PathBuf,
    /// Length of each test, seconds.
    pub seconds_per_test: f64,
    /// Size of the data file random reads go to, bytes.
    pub size_bytes: u64,
    /// The same size as --size gave it (1GB), for messages.
    pub size: String,
    /// Keep the probe files for the next calibration.
    pub keep: bool,
    /// No progress bar, no notices.
    pub quiet: bool,
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
    pub model_check: Vec<Check>,
    /// The probes the model misses by more than [`MISS_WARN`].
    pub misses: Vec<String>,
    pub profile: Profile,
}

/// Probes the disk under `opts.dir` and fits a profile named `name` to
/// what the probes measured, checked against its model; None if
/// interrupted. The probe files are removed at the end unless `opts.keep`.
pub fn probe_and_fit(opts: &Options, name: &str, stop: &Stop) -> Result<Option<Calibration>> {
    let probe_dir = probe::prepare_dir(&opts.dir)?;
    let dd = DataDir::new(&probe_dir.path, None);
    let blocks = opts.size_bytes / PAGE_BYTES;
    let layout = Layout {
        data_blocks: blocks,
        wal_segments: STREAMS,
        description: "pgiosim calibrate".to_string(),
    };
    let progress = !opts.quiet && std::io::stderr().is_terminal();
    let result = (|| -> Result<Option<Calibration>> {
        // Released before the probe files are removed (cleanup takes it too).
        let held = datafiles::lock(&dd)?;
        datafiles::prepare_locked(&dd, &layout, progress, &held, stop).with_context(|| {
            format!(
                "--dir {}: cannot prepare the probe files (--size {} plus {} MiB of WAL)",
                opts.dir.display(),
                opts.size,
                (u64::from(STREAMS) * WAL_SEGMENT_BYTES) >> 20
            )
        })?;
        probe::measure(opts, &dd, &layout, progress, stop)?
            .map(|probed| calibration(opts, &dd, name, probed))
            .transpose()
    })();
    let cleanup = if opts.keep {
        Ok(())
    } else {
        probe_dir.remove(&dd)
    };
    let cal = result?;
    cleanup?;
    Ok(cal)
}

/// The profile fitted to what the probes measured, with everything
/// `--json` records. Before the probe files go: the device is found from
/// their directory.
fn calibration(opts: &Options, dd: &DataDir, name: &str, probed: Probed) -> Result<Calibration> {
    let Probed {
        measured: m,
        tests,
        engine,
    } = probed;
    let device = probe::device_of(&dd.dir);
    let (mut profile, knee_qd, findings) = derive(&m, name, opts, &device, &engine)?;
    // What the block layer splits at, as this disk's queue says.
    profile.max_request_kib = probe::max_request_kib(&dd.dir);
    // The host's CPU too: `model` with this profile describes this host.
    match crate::engine::cpu_probe::measure() {
        Ok(cpu) => {
            profile.cpu_probe_us = Some((cpu.us_per_round * 100.0).round() / 100.0);
            profile.source = format!(
                "{}; this host's CPU probe (pgiosim cpu-probe): {:.2} µs a round",
                profile.source, cpu.us_per_round
            );
        }
        Err(e) => {
            eprintln!("warning: calibrate: {e:#}; the profile says nothing of this host's CPU")
        }
    }
    let model_check = check::model_check(&profile, &m);
    let misses: Vec<String> = model_check
        .iter()
        .filter(|c| c.error().abs() > MISS_WARN)
        .map(|c| format!("{} by {:+.0}%", c.probe, 100.0 * c.error()))
        .collect();
    if !misses.is_empty() {
        profile.description = format!(
            "{}; its model misses {} of its probes by more than {:.0}%: {}",
            profile.description,
            misses.len(),
            100.0 * MISS_WARN,
            misses.join(", ")
        );
    }
    Ok(Calibration {
        dir: opts.dir.display().to_string(),
        device,
        engine,
        seconds_per_test: opts.seconds_per_test,
        size_bytes: m.size_bytes,
        tests,
        sweep: m.sweep.clone(),
        knee_qd,
        findings,
        model_check,
        misses,
        profile,
    })
}

/// A profile's name as `calibrate` and `profile` take it: --name, or else
/// the output file's (see [`name_from_path`]); refused (exit 2) unless it
/// holds only lowercase letters, digits and '-', as `--device NAME` finds
/// shipped profiles.
pub fn profile_name(name: Option<&str>, output: &Path) -> Result<String> {
    let name = name.map_or_else(|| name_from_path(output), str::to_owned);
    if name.is_empty()
        || !name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
    {
        return Err(crate::error::usage(format!(
            "--name {name:?}: may hold only lowercase letters, digits and '-'"
        )));
    }
    Ok(name)
}

/// A profile's name from the file it is written to, for `calibrate` and
/// `profile` without --name: "mydisk.json" → "mydisk"; anything else
/// becomes '-'.
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

#[cfg(test)]
mod tests {
    use super::*;

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
}
