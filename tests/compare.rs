//! `pgiosim compare`, driven through the binary: ratios to the first file,
//! and the refusals (schema versions, workloads, scales) with their reasons.

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{pgiosim, text};

/// A modelled result written to `dir/name.json`.
fn model(dir: &Path, name: &str, extra: &[&str]) -> PathBuf {
    let path = dir.join(format!("{name}.json"));
    let mut args = vec![
        "model", "-q", "-T", "2", "--seed", "4", "--cpus", "8", "--json",
    ];
    args.push(path.to_str().unwrap());
    args.extend_from_slice(extra);
    let o = pgiosim(&args);
    assert!(o.status.success(), "{}", text(&o));
    path
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Write `v` with `edit` applied to a new file beside `path`.
fn edited(path: &Path, name: &str, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut v = read(path);
    edit(&mut v);
    let out = path.with_file_name(format!("{name}.json"));
    std::fs::write(&out, serde_json::to_string(&v).unwrap()).unwrap();
    out
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn row<'a>(doc: &'a Value, section: &str, metric: &str) -> &'a Value {
    doc["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["section"] == section && r["metric"] == metric)
        .unwrap_or_else(|| panic!("no row {section}/{metric}"))
}

#[test]
fn ratios_are_to_the_first_result() {
    let dir = tempfile::tempdir().unwrap();
    let a = model(dir.path(), "nvme", &["-c", "8", "--device", "nvme"]);
    let b = model(dir.path(), "gp3", &["-c", "8", "--device", "gp3"]);
    let c = model(
        dir.path(),
        "gp3-delay",
        &["-c", "8", "--device", "gp3", "--set", "commit_delay=200"],
    );
    let out = dir.path().join("cmp.json");
    let o = pgiosim(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        c.to_str().unwrap(),
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let table = String::from_utf8(o.stdout).unwrap();
    for needle in [
        "B/A",
        "C/A",
        "tps",
        "p99.9",
        "wal_fsync",
        "commits per WAL flush",
    ] {
        assert!(table.contains(needle), "{needle}:\n{table}");
    }
    let (ra, rb, rc) = (read(&a), read(&b), read(&c));
    let doc = read(&out);
    assert_eq!(doc["schema"], "pgiosim.compare");
    assert_eq!(doc["schema_version"], 3);
    assert_eq!(doc["forced"], false);
    assert_eq!(doc["inputs"][1]["target"], "gp3");

    let tps = row(&doc, "summary", "tps");
    assert_eq!(f(&tps["values"][0]), f(&ra["summary"]["tps"]));
    assert_eq!(f(&tps["ratios"][0]), 1.0);
    let expect = f(&rb["summary"]["tps"]) / f(&ra["summary"]["tps"]);
    assert!((f(&tps["ratios"][1]) - expect).abs() < 1e-12);
    assert!(f(&tps["ratios"][1]) < 1.0, "gp3 is slower than nvme");

    let p99 = row(&doc, "latency", "p99");
    let expect = f(&rc["summary"]["latency_ms"]["p99"]) / f(&ra["summary"]["latency_ms"]["p99"]);
    assert!((f(&p99["ratios"][2]) - expect).abs() < 1e-12);

    // Breakdown buckets in ms per transaction.
    let bucket_us = |r: &Value, b: &str| {
        f(&r["breakdown"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["bucket"] == b)
            .unwrap()["mean_us"])
    };
    let wal = row(&doc, "breakdown", "wal_fsync");
    assert_eq!(wal["unit"], "ms per transaction");
    assert!((f(&wal["values"][1]) - bucket_us(&rb, "wal_fsync") / 1e3).abs() < 1e-12);
    let expect = bucket_us(&rb, "wal_fsync") / bucket_us(&ra, "wal_fsync");
    assert!((f(&wal["ratios"][1]) - expect).abs() < 1e-9);
    // A bucket that is zero in the first file has no ratio.
    let queue = row(&doc, "breakdown", "cpu_queue");
    if f(&queue["values"][0]) == 0.0 {
        assert!(queue["ratios"][1].is_null());
    }

    let flushes = row(&doc, "io", "WAL fdatasyncs/s");
    assert_eq!(
        f(&flushes["values"][2]),
        f(&rc["io"]["wal_fdatasyncs_per_s"])
    );

    // What differs is listed: the device and commit_delay, not the seed.
    let diffs: Vec<&str> = doc["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["what"].as_str().unwrap())
        .collect();
    assert!(diffs.contains(&"device"), "{diffs:?}");
    assert!(diffs.contains(&"setting commit_delay"), "{diffs:?}");
    assert!(!diffs.contains(&"clients"), "{diffs:?}");
}

fn refused(args: &[&str], needles: &[&str]) {
    let o = pgiosim(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    for n in needles {
        assert!(err.contains(n), "{n:?} not in: {err}");
    }
    assert!(
        o.stdout.is_empty(),
        "no table for refused inputs: {}",
        text(&o)
    );
}

#[test]
fn incompatible_results_are_refused_with_the_reason() {
    let dir = tempfile::tempdir().unwrap();
    let a = model(dir.path(), "s10", &[]);
    let s5 = model(dir.path(), "s5", &["-s", "5"]);
    let (a, s5) = (a.to_str().unwrap(), s5.to_str().unwrap());

    // Different scales: refused, unless --force.
    refused(
        &["compare", a, s5],
        &["scale 10", "scale 5", "data set size", "--force"],
    );
    let o = pgiosim(&["compare", "--force", a, s5, "--json", "-"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stderr).contains("warning: compared under --force"));
    let out = String::from_utf8(o.stdout).unwrap();
    let doc: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(doc["forced"], true);
    assert!(!doc["warnings"].as_array().unwrap().is_empty());

    // A different workload.
    let other = edited(Path::new(a), "other-workload", |v| {
        v["run"]["workload"] = "select-only".into();
        v["workload"]["name"] = "select-only".into();
    });
    refused(
        &["compare", a, other.to_str().unwrap()],
        &[
            "tpcb-like",
            "select-only",
            "different transactions",
            "--force",
        ],
    );

    // Different schema versions are refused even with --force.
    let old = edited(Path::new(a), "old", |v| v["schema_version"] = 1.into());
    refused(
        &["compare", "--force", a, old.to_str().unwrap()],
        &["schema_version 3", "has 1", "not compared"],
    );
    // A newer version than this pgiosim reads.
    let newer = edited(Path::new(a), "newer", |v| v["schema_version"] = 4.into());
    refused(
        &["compare", a, newer.to_str().unwrap()],
        &["schema_version 4 is newer than this pgiosim reads (3)"],
    );

    // A sweep is not a result.
    let sweep = dir.path().join("sweep.json");
    let o = pgiosim(&[
        "sweep",
        "-q",
        "--clients",
        "1,2",
        "-T",
        "1",
        "--json",
        sweep.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    refused(
        &["compare", a, sweep.to_str().unwrap()],
        &["pgiosim.sweep", "compare takes results"],
    );

    // Not JSON at all: bad input (exit code 2) naming the file.
    let junk = dir.path().join("junk.json");
    std::fs::write(&junk, "not json").unwrap();
    let o = pgiosim(&["compare", a, junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("junk.json: not JSON"), "{}", text(&o));
}
