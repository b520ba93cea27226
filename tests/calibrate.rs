//! `calibrate`, `profile from-fio`, `run --emulate` and the three scripts
//! that check them (model-vs-run, calibrate-vs-fio, emulate-vs-cap), driven
//! through the binary at small sizes: they must complete and give sane
//! figures, not meet the full-size targets.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::{pgiosim, skip, text, tmp};

/// The trials that time this machine's disk share it; the one that
/// calibrates behind a cgroup throttle (cap3000) has it alone: the others'
/// unthrottled I/O on the same disk raises its latency until the throttle
/// no longer shows in the probes it is recognised by.
static DISK: std::sync::RwLock<()> = std::sync::RwLock::new(());

fn disk_shared() -> std::sync::RwLockReadGuard<'static, ()> {
    DISK.read().unwrap_or_else(|e| e.into_inner())
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/fio")
        .join(name)
        .display()
        .to_string()
}

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[p];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?}: {x}"))
}

fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

fn fails_with(o: &Output, code: i32, parts: &[&str]) {
    assert_eq!(o.status.code(), Some(code), "{}", text(o));
    let t = text(o);
    for p in parts {
        assert!(t.contains(p), "output lacks {p:?}:\n{t}");
    }
}

// ---- calibrate ---------------------------------------------------------------

fn calibrate_writes_a_valid_profile_and_removes_its_files() {
    let _disk = disk_shared();
    let d = tmp("pgiosim-calibrate-test");
    let dir = d.path().join("disk");
    let out = d.path().join("mydisk.json");
    let json = d.path().join("calibration.json");
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--seconds-per-test",
        "0.1",
        "--size",
        "16MB",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    for part in [
        "QD1 8 KiB random read",
        "knee at QD",
        "profile mydisk written",
    ] {
        assert!(t.contains(part), "{part:?} missing:\n{t}");
    }
    // The probe files are gone, and so is the directory calibrate created.
    assert!(!dir.exists(), "{} left behind", dir.display());
    let p = read_json(&out);
    assert_eq!(p["name"], "mydisk");
    assert!(p["source"].as_str().unwrap().contains("pgiosim calibrate"));
    let read = num(&p, &["read", "median_us"]);
    assert!(read > 1.0 && read < 100_000.0, "{read}");
    assert!(num(&p, &["read", "p99_us"]) >= read);
    assert!(num(&p, &["flush", "median_us"]) > 0.0);
    assert!(num(&p, &["channels"]) >= 1.0);
    assert!(num(&p, &["bandwidth_mib_s"]) > 1.0);
    let cal = read_json(&json);
    assert_eq!(cal["sweep"].as_array().unwrap().len(), 7);
    // 14 tests, three sizes of WAL write, three idle gaps of read and WAL.
    assert_eq!(cal["tests"].as_array().unwrap().len(), 23);
    // Every probe the model can run is checked against it.
    let checks = cal["model_check"].as_array().unwrap();
    assert!(checks.len() >= 20, "{checks:?}");
    assert_eq!(p["idle"].as_array().map(Vec::len), Some(3), "{p}");
    // The disk's largest request, as its queue says (read here with the
    // shell's tools, not the code under test).
    let queue = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "n=/sys/dev/block/$(stat -c '%Hd:%Ld' {0}); n=$(readlink -f $n); \
             q=$n/queue; [ -d $q ] || q=$n/../queue; \
             echo $(cat $q/max_sectors_kb) $(( $(cat $q/max_segments) * 4 ))",
            d.path().display()
        ))
        .output()
        .unwrap();
    let figures: Vec<u64> = String::from_utf8_lossy(&queue.stdout)
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    if let [sectors, segments] = figures[..] {
        assert_eq!(
            p["max_request_kib"].as_u64(),
            Some(sectors.min(segments)),
            "{p}"
        );
    }
    // The profile is usable as it is.
    let o = pgiosim(&[
        "model",
        "--device",
        out.to_str().unwrap(),
        "-T",
        "1",
        "-q",
        "--seed",
        "1",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let o = pgiosim(&["profile", "show", out.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", text(&o));
    let shown: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(num(&shown, &["figures", "qd32_read_iops"]) > 0.0);
}

fn calibrate_refuses_an_unwritable_dir() {
    let d = tmp("pgiosim-calibrate-test");
    let locked = d.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    // As root, permissions do not stop writes; the immutable attribute does.
    let ok = Command::new("chattr")
        .arg("+i")
        .arg(&locked)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip("chattr +i is not available here");
    }
    let dir = locked.display().to_string();
    let out = d.path().join("p.json");
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        &dir,
        "-o",
        out.to_str().unwrap(),
        "--seconds-per-test",
        "0.1",
    ]);
    let _ = Command::new("chattr").arg("-i").arg(&locked).status();
    fails_with(&o, 1, &["--dir", &dir, "not writable"]);
    assert!(!out.exists());
}

fn calibrate_refuses_a_dir_with_too_little_room() {
    let d = tmp("pgiosim-calibrate-test");
    let dir = d.path().join("disk");
    let out = d.path().join("p.json");
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        dir.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--size",
        "1000000TB",
    ]);
    fails_with(&o, 1, &["--dir", "not enough free space", "needs"]);
    assert!(!out.exists());
    assert!(!dir.exists(), "calibrate left {} behind", dir.display());
}

fn calibrate_refuses_bad_flags() {
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        "/nonexistent/pgiosim/x",
        "-o",
        "/tmp/p.json",
    ]);
    fails_with(&o, 1, &["--dir /nonexistent/pgiosim/x", "does not exist"]);
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        "/var/tmp",
        "-o",
        "/tmp/p.json",
        "--size",
        "lots",
    ]);
    fails_with(&o, 2, &["--size lots"]);
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        "/var/tmp",
        "-o",
        "/tmp/p.json",
        "--seconds-per-test",
        "0",
    ]);
    fails_with(&o, 2, &["--seconds-per-test"]);
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        "/var/tmp",
        "-o",
        "/tmp/p.json",
        "--size",
        "1MB",
    ]);
    fails_with(&o, 2, &["--size 1MB", "at least 16MB"]);
    let o = pgiosim(&[
        "calibrate",
        "--dir",
        "/var/tmp",
        "-o",
        "/nonexistent/dir/p.json",
    ]);
    fails_with(&o, 2, &["-o /nonexistent/dir/p.json"]);
}

// ---- profile from-fio ------------------------------------------------------

fn from_fio_reads_the_16_test_battery() {
    let d = tmp("pgiosim-calibrate-test");
    let out = d.path().join("vm.json");
    let o = pgiosim(&[
        "profile",
        "from-fio",
        &fixture("battery-16.json"),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(!t.contains("missing from the input"), "{t}");
    assert!(t.contains("4k randread parallel"), "{t}");
    let p = read_json(&out);
    assert_eq!(p["name"], "vm");
    // The fixture's QD1 4k randread: clat p50 36.096 µs, p99 296.96 µs.
    assert_eq!(num(&p, &["read", "median_us"]), 36.1);
    assert_eq!(num(&p, &["read", "p99_us"]), 297.0);
    assert_eq!(num(&p, &["latency_io_kib"]), 4.0);
    // fsync latency from fio's sync section (p50 264.192 µs).
    assert_eq!(num(&p, &["flush", "median_us"]), 264.0);
    // 92,077 IOPS at 8 × QD64 on a disk with ~57 µs mean QD1 reads.
    let ch = num(&p, &["channels"]);
    assert!((2.0..=16.0).contains(&ch), "{ch}");
    assert!(
        p["caps"]["iops"].is_null(),
        "read/write/mixed differ: no cap"
    );
    // Best 1M test: 1M sequential write QD1, 2,278 MiB/s.
    assert!((num(&p, &["bandwidth_mib_s"]) - 2280.0).abs() < 1.0);
    // Parallel fsync'd writes ran 12× the QD1 rate: flushes scale.
    assert_eq!(p["flush_to_media"], false);
}

fn from_fio_merges_files_fills_missing_tests_and_says_so() {
    let d = tmp("pgiosim-calibrate-test");
    let out = d.path().join("part.json");
    let o = pgiosim(&[
        "profile",
        "from-fio",
        &fixture("qd1-randread-8k.json"),
        &fixture("randread-8k-4x16-per-job.json"),
        &fixture("qd1-fdatasync-8k.json"),
        &fixture("qd1-randwrite-8k.json"),
        &fixture("seqread-1m-4x16.json"),
        "-o",
        out.to_str().unwrap(),
        "--name",
        "partial",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("warning: 11 of the 16 battery tests are missing"),
        "{err}"
    );
    assert!(err.contains("1M write parallel"), "{err}");
    assert!(err.contains("flush_to_media"), "{err}");
    let p = read_json(&out);
    assert_eq!(p["name"], "partial");
    assert_eq!(num(&p, &["latency_io_kib"]), 8.0);
    // fdatasync latency from the sync section (p50 107.008 µs).
    assert_eq!(num(&p, &["flush", "median_us"]), 107.0);
    // Four threads reported one by one (no group_reporting) are summed.
    let t = text(&o);
    assert!(t.contains("71069 IOPS at 4 × QD16"), "{t}");
    assert!(p["source"].as_str().unwrap().contains("base profile nvme"));
}

fn from_fio_refuses_what_is_not_fio_output() {
    let d = tmp("pgiosim-calibrate-test");
    let out = d.path().join("x.json");
    let o_arg = out.to_str().unwrap();
    let f = fixture("not-fio-a-profile.json");
    // Not fio output: bad input, exit code 2.
    let o = pgiosim(&["profile", "from-fio", &f, "-o", o_arg]);
    fails_with(
        &o,
        2,
        &[&f, "\"fio version\": missing", "not fio JSON output"],
    );
    let f = fixture("job-error.json");
    let o = pgiosim(&["profile", "from-fio", &f, "-o", o_arg]);
    fails_with(&o, 2, &[&f, "jobs: no usable jobs", "error 1"]);
    let f = fixture("battery.fio");
    let o = pgiosim(&["profile", "from-fio", &f, "-o", o_arg]);
    fails_with(&o, 2, &[&f, "not valid JSON"]);
    let empty = d.path().join("empty-jobs.json");
    std::fs::write(&empty, r#"{"fio version": "fio-3.33", "jobs": []}"#).unwrap();
    let o = pgiosim(&["profile", "from-fio", empty.to_str().unwrap(), "-o", o_arg]);
    fails_with(&o, 2, &["empty-jobs.json: jobs: empty"]);
    let o = pgiosim(&["profile", "from-fio", "/nonexistent.json", "-o", o_arg]);
    fails_with(&o, 2, &["/nonexistent.json: cannot open"]);
    assert!(!out.exists());
}

// ---- bad profiles, wherever a profile is read -------------------------------

fn bad_profile(dir: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v: Value =
        serde_json::from_str(include_str!("../examples/devices/this-vm.json")).unwrap();
    edit(&mut v);
    let p = dir.join(name);
    std::fs::write(&p, v.to_string()).unwrap();
    p
}

fn bad_profiles_name_the_file_and_the_field() {
    let d = tmp("pgiosim-calibrate-test");
    let cases: Vec<(PathBuf, &str)> = vec![
        (
            bad_profile(d.path(), "negative.json", |v| {
                v["read"]["median_us"] = (-3.0).into()
            }),
            "read.median_us: -3 must be above 0",
        ),
        (
            bad_profile(d.path(), "zero-iops.json", |v| {
                v["caps"] = serde_json::json!({"iops": 0})
            }),
            "caps.iops: 0 must be above 0",
        ),
        (
            bad_profile(d.path(), "missing.json", |v| {
                v.as_object_mut().unwrap().remove("flush");
            }),
            "missing field `flush`",
        ),
        (
            bad_profile(d.path(), "p99.json", |v| v["write"]["p99_us"] = 1.into()),
            "write.p99_us: 1 is below write.median_us 40",
        ),
        (
            bad_profile(d.path(), "typo.json", |v| v["chanels"] = 4.into()),
            "unknown field `chanels`",
        ),
    ];
    for (path, msg) in &cases {
        let p = path.to_str().unwrap();
        for args in [
            vec!["profile", "show", p],
            vec!["model", "--device", p, "-T", "1", "-q"],
        ] {
            let o = pgiosim(&args);
            // A bad profile is bad input: exit code 2.
            assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
            let t = text(&o);
            assert!(t.contains(p) && t.contains(msg), "{args:?}: {t}");
        }
    }
    // run --emulate checks the profile before touching any file.
    let (path, msg) = &cases[0];
    let data = d.path().join("data");
    let o = pgiosim(&[
        "run",
        "--dir",
        data.to_str().unwrap(),
        "-s",
        "1",
        "-T",
        "1",
        "--emulate",
        path.to_str().unwrap(),
    ]);
    fails_with(&o, 2, &["--emulate", path.to_str().unwrap(), msg]);
    let o = pgiosim(&[
        "run",
        "--dir",
        data.to_str().unwrap(),
        "-s",
        "1",
        "-T",
        "1",
        "--emulate",
        "floppy",
    ]);
    fails_with(&o, 2, &["--emulate floppy", "gp3"]);
}

// ---- run --emulate ---------------------------------------------------------

fn emulated_run_is_shaped_like_the_profile() {
    let _disk = disk_shared();
    let d = tmp("pgiosim-calibrate-test");
    let data = d.path().join("data");
    let json = d.path().join("r.json");
    // gp3 at QD1: ~0.55 ms reads and ~0.8 ms write+flush per commit, far
    // slower than any local disk, so the profile sets the pace.
    let o = pgiosim(&[
        "run",
        "--dir",
        data.to_str().unwrap(),
        "-s",
        "1",
        "-T",
        "2",
        "--seed",
        "3",
        "--emulate",
        "gp3",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("emulation of gp3:"), "{err}");
    assert!(
        err.contains("local disk slower than the profile for"),
        "{err}"
    );
    let r = read_json(&json);
    assert_eq!(r["run"]["io_engine"], "io_uring emulating gp3");
    assert_eq!(r["run"]["device"]["name"], "gp3");
    let tps = num(&r, &["summary", "tps"]);
    // Each transaction waits at least one gp3 commit (write + flush).
    // Upper bound only matters: a busy shared disk can make it far slower.
    assert!(tps > 5.0 && tps < 1300.0, "{tps}");
    let page_read = common::bucket(&r, "page_read").unwrap()["mean_us"]
        .as_f64()
        .unwrap();
    let reads = num(&r, &["io", "data_reads_per_tx"]);
    if reads > 0.1 {
        let per_read = page_read / reads;
        assert!(per_read > 400.0, "gp3 reads took {per_read} µs");
    }
    let _ = pgiosim(&["cleanup", "--dir", data.to_str().unwrap()]);
}

// ---- the scripts, at small size --------------------------------------------

fn have(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn script(name: &str, args: &[&str]) -> Output {
    Command::new(
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("scripts")
            .join(name),
    )
    .args(args)
    .env("PGIOSIM", env!("CARGO_BIN_EXE_pgiosim"))
    .env("PGIOSIM_NO_INSTALL", "1")
    .output()
    .expect("start script")
}

fn script_model_vs_run_quick() {
    let _disk = disk_shared();
    if !have("python3") {
        skip("python3 is not installed");
    }
    let d = tmp("pgiosim-calibrate-test");
    let dir = d.path().join("mvr");
    let json = d.path().join("mvr.json");
    let o = script(
        "model-vs-run",
        &[
            "--quick",
            "--dir",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("run tps") && t.contains("model tps"), "{t}");
    let v = read_json(&json);
    let cells = v["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 4, "2 configs × 2 client counts");
    for c in cells {
        for side in ["run", "model"] {
            assert!(num(c, &[side, "tps"]) > 10.0, "{c}");
            let sum: f64 = c[side]["shares"]
                .as_object()
                .unwrap()
                .values()
                .map(|x| x.as_f64().unwrap())
                .sum();
            assert!((sum - 1.0).abs() < 0.01, "{side} shares sum to {sum}");
        }
    }
    // The miss-heavy config really misses.
    let miss = cells.iter().find(|c| c["config"] == "miss-heavy").unwrap();
    assert!(
        num(miss, &["run", "io", "data_reads_per_tx"]) > 0.5,
        "{miss}"
    );
    assert!(!dir.exists(), "the script left {} behind", dir.display());
}

/// `--disk ram` and `--disk cap3000`: the script makes the disk, calibrates
/// and runs on it, and removes the loop device, the tmpfs file and the
/// cgroup it made.
fn script_model_vs_run_on_other_disks() {
    let _disk = DISK.write().unwrap_or_else(|e| e.into_inner());
    if !have("python3") {
        skip("python3 is not installed");
    }
    if !Path::new("/sys/fs/cgroup/blkio").is_dir() || !have("losetup") || !is_root() {
        skip("needs root, losetup and cgroup v1 blkio");
    }
    let loops = || {
        std::fs::read_dir("/sys/block")
            .unwrap()
            .filter(|e| {
                e.as_ref()
                    .unwrap()
                    .path()
                    .join("loop/backing_file")
                    .exists()
            })
            .count()
    };
    let loops_before = loops();
    for disk in ["ram", "cap3000"] {
        let d = tmp("pgiosim-calibrate-test");
        let json = d.path().join("mvr.json");
        // The throttle shows in calibrate's tests from 1 s on (its windows
        // are 100 ms, and a test's first tenth is not counted).
        let spt = if disk == "ram" { "0.2" } else { "1" };
        let o = script(
            "model-vs-run",
            &[
                "--quick",
                "--seconds-per-test",
                spt,
                "--disk",
                disk,
                "--dir",
                d.path().join("mvr").to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ],
        );
        assert!(o.status.success(), "{disk}: {}", text(&o));
        let v = read_json(&json);
        assert_eq!(v["disk"], disk);
        assert_eq!(v["cells"].as_array().unwrap().len(), 4);
        if disk == "cap3000" {
            // The calibration found the throttle.
            let caps = &v["profile"]["caps"];
            let read = caps["read_iops"].as_f64().or(caps["iops"].as_f64());
            assert!(read.is_some_and(|r| (r - 3000.0).abs() < 600.0), "{caps}");
        }
    }
    let cgroups: Vec<_> = std::fs::read_dir("/sys/fs/cgroup/blkio")
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("pgiosim-model-vs-run")
        })
        .map(|e| e.path())
        .collect();
    assert!(cgroups.is_empty(), "cgroups left behind: {cgroups:?}");
    assert_eq!(loops_before, loops(), "a loop device was left behind");
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

fn script_calibrate_vs_fio_quick() {
    let _disk = disk_shared();
    if !have("python3") {
        skip("python3 is not installed");
    }
    if !have("fio") {
        skip("fio is not installed (.ci/run installs it)");
    }
    let d = tmp("pgiosim-calibrate-test");
    let dir = d.path().join("cvf");
    let json = d.path().join("cvf.json");
    let o = script(
        "calibrate-vs-fio",
        &[
            "--quick",
            "--dir",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    assert!(o.status.success(), "{}", text(&o));
    let v = read_json(&json);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for r in rows {
        for col in ["profile", "measured", "fio"] {
            assert!(num(r, &[col]) > 0.0, "{r}");
        }
    }
    assert!(!dir.exists(), "the script left {} behind", dir.display());
}

fn script_emulate_vs_cap_quick() {
    let _disk = disk_shared();
    if !have("python3") {
        skip("python3 is not installed");
    }
    let d = tmp("pgiosim-calibrate-test");
    let dir = d.path().join("evc");
    let json = d.path().join("evc.json");
    let o = script(
        "emulate-vs-cap",
        &[
            "--quick",
            "--dir",
            dir.to_str().unwrap(),
            "--json",
            json.to_str().unwrap(),
        ],
    );
    if o.status.code() == Some(3) {
        assert!(text(&o).contains("SKIP:"), "{}", text(&o));
        skip(text(&o).trim().trim_start_matches("SKIP: "));
    }
    assert!(o.status.success(), "{}", text(&o));
    let v = read_json(&json);
    let rows = v["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        assert!(num(r, &["capped", "tps"]) > 10.0, "{r}");
        assert!(num(r, &["emulated", "tps"]) > 10.0, "{r}");
        assert!(
            r["emulated"]["io_engine"]
                .as_str()
                .unwrap()
                .contains("emulating calibrated-cap"),
            "{r}"
        );
        // Both ran under a 3,000 IOPS cap each way: neither exceeds it.
        for side in ["capped", "emulated"] {
            assert!(num(r, &[side, "io", "data_reads_per_s"]) < 3300.0, "{r}");
        }
    }
    assert!(!dir.exists(), "the script left {} behind", dir.display());
    // The cgroup is gone.
    let left: Vec<_> = std::fs::read_dir("/sys/fs/cgroup/blkio")
        .map(|r| {
            r.flatten()
                .filter(|e| {
                    // Named after the script's pid: one whose script still
                    // runs belongs to another, concurrent run, not a leak.
                    let name = e.file_name().to_string_lossy().into_owned();
                    let pid = name.rsplit('-').next().unwrap_or("");
                    name.starts_with("pgiosim-emulate-vs-cap")
                        && !std::path::Path::new("/proc").join(pid).exists()
                })
                .collect()
        })
        .unwrap_or_default();
    assert!(left.is_empty(), "cgroups left behind: {left:?}");
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        calibrate_writes_a_valid_profile_and_removes_its_files,
        calibrate_refuses_an_unwritable_dir,
        calibrate_refuses_a_dir_with_too_little_room,
        calibrate_refuses_bad_flags,
        from_fio_reads_the_16_test_battery,
        from_fio_merges_files_fills_missing_tests_and_says_so,
        from_fio_refuses_what_is_not_fio_output,
        bad_profiles_name_the_file_and_the_field,
        emulated_run_is_shaped_like_the_profile,
        script_model_vs_run_quick,
        script_model_vs_run_on_other_disks,
        script_calibrate_vs_fio_quick,
        script_emulate_vs_cap_quick,
    ])
}
