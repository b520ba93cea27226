//! WAL archiving through the command line: `model` with a slow archive
//! falls behind and warns, a fast one keeps up, archive_mode=off changes
//! nothing, and a short `run` archives on a small data set.

mod common;
use common::{pgiosim, text, tmp};

use serde_json::Value;

/// `model`'s JSON for these flags (a WAL-heavy start: every first change of
/// a page after the checkpoint logs its full image).
fn model(extra: &[&str]) -> (Value, String) {
    let mut args = vec![
        "model", "--json", "-", "-s", "10", "-c", "8", "-T", "60", "--seed", "5", "--device",
        "nvme",
    ];
    args.extend_from_slice(extra);
    let o = pgiosim(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    let json = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    (json, String::from_utf8_lossy(&o.stderr).into_owned())
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} missing: {v}"))
}

#[test]
fn a_slow_archive_falls_behind_and_warns() {
    // 9 s of latency per segment: about 0.1 segment per second against the
    // WAL's 0.3.
    let (r, report) = model(&[
        "--set",
        "archive_mode=on",
        "--archive",
        "latency=9s,throughput=4MB/s",
    ]);
    let a = &r["archive"];
    assert_eq!(a["target"], "custom");
    assert_eq!(a["keeps_up"], false, "{a}");
    assert_eq!(a["backlog_grows"], true, "{a}");
    assert!(num(a, "capacity_mb_per_s") < num(a, "wal_mb_per_s"), "{a}");
    let ready = num(a, "segments_ready");
    let archived = num(a, "segments_archived");
    assert!(ready >= 10.0 && archived < ready / 2.0, "{a}");
    assert_eq!(num(a, "backlog_end_segments"), ready - archived);
    assert!(
        num(a, "backlog_max_bytes") >= 10.0 * 16.0 * 1048576.0,
        "{a}"
    );
    // The archive ends a few segments in: most of the run is at risk.
    assert!(num(a, "rpo_max_s") > 40.0, "{a}");
    let seconds = a["seconds"].as_array().unwrap();
    assert_eq!(seconds.len(), 60);
    let backlog = |i: usize| seconds[i]["backlog_segments"].as_u64().unwrap();
    assert!(backlog(59) > backlog(10), "{a}");
    assert!(
        report.contains("warning: the WAL archive falls behind"),
        "{report}"
    );
    assert!(report.contains("grew through the run"), "{report}");
    assert!(report.contains("RPO (WAL not yet archived)"), "{report}");
    assert_eq!(r["settings"]["archive_mode"], "on");
    assert_eq!(r["settings"]["archive_timeout"], "0");
}

#[test]
fn a_fast_archive_keeps_up() {
    let (r, report) = model(&["--set", "archive_mode=on", "--archive", "local"]);
    let a = &r["archive"];
    assert_eq!(a["keeps_up"], true, "{a}");
    assert_eq!(a["backlog_grows"], false, "{a}");
    assert!(num(a, "backlog_max_segments") <= 1.0, "{a}");
    assert!(num(a, "segments_archived") >= num(a, "segments_ready") - 1.0);
    assert!(
        a["target_source"].as_str().unwrap().contains("guess"),
        "{a}"
    );
    assert!(!report.contains("falls behind"), "{report}");
    assert!(report.contains("keeps up"), "{report}");
}

#[test]
fn parallel_pushes_catch_up_where_one_falls_behind() {
    let one = model(&["--set", "archive_mode=on", "--archive", "s3,latency=4s"]).0;
    let eight = model(&[
        "--set",
        "archive_mode=on",
        "--archive",
        "s3,latency=4s,parallel=8",
    ])
    .0;
    assert_eq!(one["archive"]["keeps_up"], false, "{}", one["archive"]);
    assert_eq!(eight["archive"]["keeps_up"], true, "{}", eight["archive"]);
    assert!(num(&eight["archive"], "rpo_max_s") < num(&one["archive"], "rpo_max_s"));
}

#[test]
fn archive_timeout_bounds_the_rpo_of_a_quiet_load() {
    // A rate-limited load writes a segment in minutes: without
    // archive_timeout the RPO is the whole run; with it, about the timeout.
    let quiet = ["-R", "10", "--set", "archive_mode=on", "--archive", "s3"];
    let without = model(&quiet).0;
    let mut with = quiet.to_vec();
    with.extend_from_slice(&["--set", "archive_timeout=10"]);
    let (with, _) = model(&with);
    let (a, b) = (&without["archive"], &with["archive"]);
    assert_eq!(num(a, "segments_switched"), 0.0);
    assert!(num(b, "segments_switched") >= 4.0, "{b}");
    assert!(num(a, "rpo_max_s") > 50.0, "{a}");
    assert!(num(b, "rpo_max_s") < 12.0, "{b}");
    // Every switched segment still ships whole: the WAL the archive takes
    // is far more than the records written.
    assert!(
        num(b, "wal_mb_per_s") > 3.0 * num(&with["io"], "wal_mb_per_s"),
        "{b}"
    );
}

#[test]
fn archive_mode_off_changes_nothing() {
    let (plain, _) = model(&[]);
    let (off, _) = model(&["--set", "archive_mode=off"]);
    assert_eq!(plain, off);
    assert!(plain.get("archive").is_none());
    assert!(plain["settings"].get("archive_mode").is_none());
}

#[test]
fn the_flag_and_the_setting_go_together() {
    for (args, msg) in [
        (&["--archive", "s3"][..], "archive_mode is off"),
        (&["--set", "archive_mode=on"][..], "--archive"),
        (
            &["--set", "archive_mode=on", "--archive", "gcs"][..],
            "unknown target",
        ),
        (
            &["--set", "archive_mode=sometimes", "--archive", "s3"][..],
            "always",
        ),
    ] {
        let mut all = vec!["model", "-s", "1", "-T", "1"];
        all.extend_from_slice(args);
        let o = pgiosim(&all);
        assert_eq!(o.status.code(), Some(2), "{all:?}: {}", text(&o));
        assert!(text(&o).contains(msg), "{all:?}: {}", text(&o));
    }
}

#[test]
fn help_teaches_the_archive_flag() {
    let o = pgiosim(&["model", "--help"]);
    let t = text(&o);
    assert!(t.contains("--archive <TARGET>"), "{t}");
    assert!(t.contains("latency=DURATION,throughput=RATE"), "{t}");
    assert!(t.contains("archive_timeout"), "{t}");
}

#[test]
fn a_short_run_archives_its_segments() {
    let d = tmp("pgiosim-archive-test");
    let data = d.path().join("data");
    let json = d.path().join("r.json");
    // archive_timeout=1 switches a segment every second, so a short run on
    // a small data set completes some.
    let o = pgiosim(&[
        "run",
        "--dir",
        data.to_str().unwrap(),
        "-s",
        "1",
        "-c",
        "2",
        "-T",
        "3",
        "--seed",
        "3",
        "--set",
        "archive_mode=on",
        "--set",
        "archive_timeout=1",
        "--archive",
        "local",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_slice(&std::fs::read(&json).unwrap()).unwrap();
    let a = &r["archive"];
    assert!(num(a, "segments_ready") >= 1.0, "{a}");
    assert!(num(a, "segments_switched") >= 1.0, "{a}");
    assert!(num(a, "segments_archived") >= 1.0, "{a}");
    assert_eq!(a["seconds"].as_array().unwrap().len(), 3, "{a}");
    assert!(text(&o).contains("WAL archiving (local)"), "{}", text(&o));
    let o = pgiosim(&["cleanup", "--dir", data.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
}
