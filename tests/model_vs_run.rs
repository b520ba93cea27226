//! `pgiosim run` against `pgiosim model` on this disk, at a small size: the
//! disk is calibrated, then each cell runs for real and in the model with
//! the calibrated profile, the same settings and the same seed, and the
//! model must land within this size's tolerances: tps within 35%, every
//! bucket's share of the latency within 20 points. (scripts/model-vs-run's
//! targets at full size, 20 s runs after a 4 s-a-test calibration, are 15%
//! and 5 points. At this size the calibration's 1 s tests and the 5 s runs
//! see the disk a minute apart, and a shared virtual disk moves by more
//! than 15% from one minute to the next; docs/validation.md has the runs.)
//!
//! The cells are the script's `--quick` shapes: scale 1 with the default
//! shared_buffers (every page cached) and scale 4 with shared_buffers=1MB
//! (most pages missed; O_DIRECT, so every miss reads the disk), at 1 and 4
//! clients, for 5 s each, after a 2 s-a-test calibration on 256 MB.
//!
//! `run` measures the host as it is, so the test needs a quiet one: it
//! waits up to 30 s for 2 s of CPU under 40% busy and I/O pressure under
//! 5%, and skips (which fails under CI=true) if none comes. A cell that
//! misses is run once more before the test fails: one disk stall in a 5 s
//! run moves its tps by more than the target. This is its own test binary
//! so that no other test of the suite runs beside it.

use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::Value;

mod common;
use common::{bucket, pgiosim, skip, text, tmp};

/// This size's tolerances (see the top of the file).
const TPS_TARGET: f64 = 0.35;
const SHARE_TARGET_POINTS: f64 = 20.0;
const BUCKETS: [&str; 7] = [
    "cpu",
    "cpu_queue",
    "page_read",
    "buffer_wait",
    "lock_wait",
    "wal_fsync",
    "other",
];

/// Busy share of the CPUs over `interval`, from /proc/stat.
fn cpu_busy(interval: Duration) -> Option<f64> {
    fn snap() -> Option<(u64, u64)> {
        let s = std::fs::read_to_string("/proc/stat").ok()?;
        let v: Vec<u64> = s
            .lines()
            .next()?
            .split_whitespace()
            .skip(1)
            .filter_map(|x| x.parse().ok())
            .collect();
        Some((v.iter().sum(), v.get(3)? + v.get(4)?))
    }
    let (t0, i0) = snap()?;
    std::thread::sleep(interval);
    let (t1, i1) = snap()?;
    Some(1.0 - (i1 - i0) as f64 / (t1 - t0).max(1) as f64)
}

/// The share of the last 10 s some task waited for I/O (PSI), if the
/// kernel reports it.
fn io_pressure() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/pressure/io").ok()?;
    let some = s.lines().find(|l| l.starts_with("some"))?;
    let avg10 = some
        .split_whitespace()
        .find_map(|f| f.strip_prefix("avg10="))?;
    avg10.parse::<f64>().ok().map(|p| p / 100.0)
}

/// Waits up to `limit` for two quiet seconds in a row; the last figures
/// when none came.
fn wait_for_quiet(limit: Duration) -> Result<(), String> {
    let end = Instant::now() + limit;
    let mut quiet = 0;
    let mut last = String::new();
    while Instant::now() < end {
        let cpu = cpu_busy(Duration::from_secs(1)).unwrap_or(0.0);
        let io = io_pressure().unwrap_or(0.0);
        last = format!(
            "CPU {:.0}% busy, I/O pressure {:.0}%",
            100.0 * cpu,
            100.0 * io
        );
        quiet = if cpu < 0.40 && io < 0.05 {
            quiet + 1
        } else {
            0
        };
        if quiet >= 2 {
            return Ok(());
        }
    }
    Err(last)
}

/// Waits, up to `limit`, until two probes in a row of 8 KiB writes, each
/// followed by fdatasync, in `dir` take a median under 1 ms (about 0.1 ms
/// on this project's VMs when their disk is well); says what it saw.
fn wait_for_fast_flushes(dir: &Path, limit: Duration) -> String {
    use std::io::{Seek, Write};
    let path = dir.join("flush-probe");
    let end = Instant::now() + limit;
    let mut fast = 0;
    let mut median = Duration::ZERO;
    while Instant::now() < end && fast < 2 {
        let mut f = std::fs::File::create(&path).expect("flush probe file");
        let mut took: Vec<Duration> = (0..40)
            .map(|_| {
                let t = Instant::now();
                f.rewind().unwrap();
                f.write_all(&[0u8; 8192]).unwrap();
                f.sync_data().unwrap();
                t.elapsed()
            })
            .collect();
        took.sort();
        median = took[took.len() / 2];
        fast = if median < Duration::from_millis(1) {
            fast + 1
        } else {
            std::thread::sleep(Duration::from_secs(2));
            0
        };
    }
    let _ = std::fs::remove_file(&path);
    format!("write+fdatasync median {} µs", median.as_micros())
}

fn result(args: &[&str]) -> Value {
    let o = pgiosim(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    let json = args[args.iter().position(|a| *a == "--json").unwrap() + 1];
    serde_json::from_str(&std::fs::read_to_string(json).unwrap()).unwrap()
}

fn share(r: &Value, name: &str) -> f64 {
    bucket(r, name).map_or(0.0, |b| b["share"].as_f64().unwrap())
}

/// One cell, run and modelled: Ok with a line of figures, or Err with
/// what missed.
fn cell(dir: &Path, profile: &Path, name: &str, common: &[&str]) -> Result<String, String> {
    let rj = dir.join(format!("run-{name}.json"));
    let mj = dir.join(format!("model-{name}.json"));
    let data = dir.join("data");
    let mut run = vec![
        "run",
        "--dir",
        data.to_str().unwrap(),
        "--json",
        rj.to_str().unwrap(),
    ];
    run.extend_from_slice(common);
    let mut model = vec![
        "model",
        "--device",
        profile.to_str().unwrap(),
        "--json",
        mj.to_str().unwrap(),
    ];
    model.extend_from_slice(common);
    let r = result(&run);
    // The run took this host's CPU speed from its own probe, just now; the
    // profile's is calibrate's, and this kind of VM's speed moves between
    // the two (0.52-0.72 of the reference minutes apart, 2026-12-07). Both
    // sides describe the host of this cell, as scripts/model-vs-run does.
    let speed = (!r["run"]["cpu_probe"].is_null())
        .then(|| r["run"]["cpu_speed"].as_f64())
        .flatten()
        .map(|s| format!("{s:.4}"));
    if let Some(s) = &speed {
        model.extend_from_slice(&["--cpu-speed", s]);
    }
    let m = result(&model);
    let (rt, mt) = (
        r["summary"]["tps"].as_f64().unwrap(),
        m["summary"]["tps"].as_f64().unwrap(),
    );
    let tps_diff = mt / rt - 1.0;
    let (worst, points) = BUCKETS
        .iter()
        .map(|b| (*b, 100.0 * (share(&m, b) - share(&r, b))))
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap();
    let line = format!(
        "{name}: run {rt:.0} tps, model {mt:.0} ({:+.1}%); worst share {worst} run {:.1}% model {:.1}% ({points:+.1} points)",
        100.0 * tps_diff,
        100.0 * share(&r, worst),
        100.0 * share(&m, worst),
    );
    if tps_diff.abs() <= TPS_TARGET && points.abs() <= SHARE_TARGET_POINTS {
        Ok(line)
    } else {
        Err(line)
    }
}

fn model_predicts_run_on_this_disk_at_a_small_size() {
    if let Err(busy) = wait_for_quiet(Duration::from_secs(30)) {
        skip(&format!(
            "the host is not quiet enough to measure ({busy}) for 30 s"
        ));
    }
    let d = tmp("pgiosim-model-vs-run-test");
    let profile = d.path().join("calibrated.json");
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        d.path().to_str().unwrap(),
        "-o",
        profile.to_str().unwrap(),
        "--seconds-per-test",
        "2",
        "--size",
        "256MB",
        "--name",
        "calibrated",
        "-q",
    ]);
    assert!(o.status.success(), "calibrate: {}", text(&o));
    let cells: [(&str, &str, &[&str]); 2] = [
        ("cached", "1", &[]),
        ("miss-heavy", "4", &["--set", "shared_buffers=1MB"]),
    ];
    let mut lines = Vec::new();
    let mut misses = Vec::new();
    for (config, scale, extra) in cells {
        for clients in ["1", "4"] {
            let name = format!("{config}-c{clients}");
            let mut common = vec!["-s", scale, "-c", clients, "-T", "5s", "--seed", "1", "-q"];
            common.extend_from_slice(extra);
            let first = cell(d.path(), &profile, &name, &common);
            match first.or_else(|miss| {
                // A miss is measured once more after the disk's flushes are
                // back to normal: a slow spell of the host's disk lasts
                // longer than one cell, and would meet the retry too.
                let disk = wait_for_fast_flushes(d.path(), Duration::from_secs(60));
                lines.push(format!("{miss} (missed; once more, {disk})"));
                cell(d.path(), &profile, &name, &common)
            }) {
                Ok(line) => lines.push(line),
                Err(line) => {
                    lines.push(format!("{line} (MISS)"));
                    misses.push(name);
                }
            }
        }
    }
    eprintln!("{}", lines.join("\n"));
    assert!(
        misses.is_empty(),
        "model vs run outside tps {:.0}% / shares {SHARE_TARGET_POINTS} points in {misses:?}:\n{}",
        100.0 * TPS_TARGET,
        lines.join("\n")
    );
}

fn main() -> std::process::ExitCode {
    common::harness::run_one_at_a_time(common::trials![
        model_predicts_run_on_this_disk_at_a_small_size
    ])
}
