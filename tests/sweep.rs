//! `pgiosim sweep`, driven through the binary: the grid, the table, the
//! knees, the JSON, and that a point is the very run `model` would make.
//! (The knee rule itself is unit-tested in src/sweep/mod.rs.)

use std::path::Path;

use serde_json::Value;

mod common;
use common::{pgiosim, text};

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn model_sweep_table_knees_and_json() {
    let dir = tempfile::tempdir().unwrap();
    let json = dir.path().join("sweep.json");
    let o = pgiosim(&[
        "sweep",
        "-q",
        "--clients",
        "1,2,4,...,16",
        "--device",
        "nvme,gp3",
        "--set",
        "commit_delay=0,100",
        "--set",
        "shared_buffers=256MB",
        "--cpus",
        "8",
        "-T",
        "2",
        "--seed",
        "7",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    assert!(
        out.contains("commit_delay") && out.contains("clients"),
        "{out}"
    );
    assert!(out.contains("knee: the client count after which tps grows less than 10%"));
    // One knee line per series: device × commit_delay.
    for series in [
        "nvme, commit_delay=0:",
        "nvme, commit_delay=100:",
        "gp3, commit_delay=0:",
        "gp3, commit_delay=100:",
    ] {
        assert!(out.contains(series), "{series} missing:\n{out}");
    }

    let v = read(&json);
    assert_eq!(v["schema"], "pgiosim.sweep");
    assert_eq!(v["schema_version"], 3);
    assert_eq!(v["partial"], false);
    assert_eq!(v["mode"], "model");
    assert_eq!(v["seed"], 7);
    assert_eq!(v["grid"]["clients"], serde_json::json!([1, 2, 4, 8, 16]));
    assert_eq!(v["grid"]["fixed_settings"][0], "shared_buffers=256MB");
    let table = v["table"].as_array().unwrap();
    let results = v["results"].as_array().unwrap();
    assert_eq!(table.len(), 2 * 2 * 5);
    assert_eq!(results.len(), table.len());
    for (row, r) in table.iter().zip(results) {
        // Each point is a full result of the one schema, the row its summary.
        assert_eq!(r["schema"], "pgiosim.result");
        assert_eq!(r["run"]["clients"], row["clients"]);
        assert_eq!(r["run"]["seed"], 7);
        assert_eq!(r["run"]["device"]["name"], row["device"]);
        assert_eq!(
            r["settings"]["commit_delay"],
            row["settings"]["commit_delay"]
        );
        assert_eq!(r["settings"]["shared_buffers"], "256MB");
        assert_eq!(f(&r["summary"]["tps"]), f(&row["tps"]));
        assert_eq!(
            f(&r["summary"]["latency_ms"]["p99"]),
            f(&row["latency_p99_ms"])
        );
        assert_eq!(
            f(&r["io"]["commits_per_flush"]),
            f(&row["commits_per_flush"])
        );
        let wal_us = common::bucket(r, "wal_fsync").unwrap()["mean_us"].clone();
        assert!((f(&wal_us) / 1e3 - f(&row["breakdown_ms"]["wal_fsync"])).abs() < 1e-12);
    }
    // Rows of a series are in client order; growth is null on the first.
    assert!(table[0]["tps_growth_per_doubling"].is_null());
    let g = f(&table[1]["tps_growth_per_doubling"]);
    let expect = f(&table[1]["tps"]) / f(&table[0]["tps"]) - 1.0;
    assert!((g - expect).abs() < 1e-9, "{g} vs {expect}");

    let knees = v["knees"].as_array().unwrap();
    assert_eq!(knees.len(), 4);
    for k in knees {
        assert!(!k["note"].as_str().unwrap().is_empty());
        if let Some(knee) = k["knee"].as_object() {
            // The knee's commits per flush is that row's.
            let row = table
                .iter()
                .find(|r| r["series"] == k["series"] && r["clients"] == knee["clients"])
                .expect("the knee is a row of its series");
            assert_eq!(knee["commits_per_flush"], row["commits_per_flush"]);
        }
    }
}

#[test]
fn a_sweep_point_is_the_run_model_makes() {
    let dir = tempfile::tempdir().unwrap();
    let sweep = dir.path().join("sweep.json");
    let single = dir.path().join("one.json");
    let common = [
        "--device", "gp3", "-T", "2", "--seed", "11", "--cpus", "4", "-s", "5",
    ];
    let mut args = vec!["sweep", "-q", "--clients", "2,8", "--json"];
    args.push(sweep.to_str().unwrap());
    args.extend_from_slice(&common);
    let o = pgiosim(&args);
    assert!(o.status.success(), "{}", text(&o));
    let mut args = vec!["model", "-q", "-c", "8", "--json"];
    args.push(single.to_str().unwrap());
    args.extend_from_slice(&common);
    let o = pgiosim(&args);
    assert!(o.status.success(), "{}", text(&o));
    let s = read(&sweep);
    let one = read(&single);
    let point = &s["results"][1];
    assert_eq!(point["summary"], one["summary"]);
    assert_eq!(point["io"], one["io"]);
    assert_eq!(point["latency_cdf"], one["latency_cdf"]);
}

#[test]
fn points_in_parallel_give_the_serial_table() {
    let dir = tempfile::tempdir().unwrap();
    let mut docs = Vec::new();
    for parallel in ["1", "3"] {
        let json = dir.path().join(format!("sweep-{parallel}.json"));
        let o = pgiosim(&[
            "sweep",
            "-q",
            "--clients",
            "1,2,4,8,16",
            "--device",
            "nvme,gp3",
            "-T",
            "2",
            "--seed",
            "11",
            "--parallel",
            parallel,
            "--json",
            json.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
        docs.push((String::from_utf8(o.stdout).unwrap(), read(&json)));
    }
    // The same rows in grid order, the same results: every point is its
    // own simulation with the sweep's seed.
    assert_eq!(docs[0].0, docs[1].0);
    assert_eq!(docs[0].1["table"], docs[1].1["table"]);
    assert_eq!(docs[0].1["results"], docs[1].1["results"]);
    assert_eq!(docs[0].1["table"].as_array().unwrap().len(), 10);
}

#[test]
fn latency_cdf_is_in_the_result() {
    let o = pgiosim(&[
        "model", "-q", "-c", "4", "-T", "2", "--seed", "3", "--json", "-",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let v: Value = serde_json::from_str(&out).unwrap();
    let cdf = v["latency_cdf"].as_array().unwrap();
    assert!(cdf.len() > 100, "{}", cdf.len());
    assert_eq!(f(&cdf[0]["percentile"]), 0.0);
    assert_eq!(f(&cdf[cdf.len() - 1]["percentile"]), 100.0);
    for w in cdf.windows(2) {
        assert!(f(&w[1]["percentile"]) > f(&w[0]["percentile"]));
        assert!(f(&w[1]["ms"]) >= f(&w[0]["ms"]), "{} {}", w[0], w[1]);
    }
    let at = |p: f64| f(&cdf.iter().find(|x| f(&x["percentile"]) == p).unwrap()["ms"]);
    let l = &v["summary"]["latency_ms"];
    assert_eq!(at(50.0), f(&l["p50"]));
    assert_eq!(at(99.0), f(&l["p99"]));
    assert_eq!(at(99.9), f(&l["p99_9"]));
    assert_eq!(at(100.0), f(&l["max"]));
}

#[test]
fn real_disk_sweep_tiny() {
    // --mode run: two 1-second runs at scale 1 on this disk.
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let json = dir.path().join("sweep.json");
    let o = pgiosim(&[
        "sweep",
        "-q",
        "--mode",
        "run",
        "--clients",
        "1,2",
        "-s",
        "1",
        "-T",
        "1",
        "--seed",
        "5",
        "--dir",
        data.to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let v = read(&json);
    assert_eq!(v["mode"], "run");
    let results = v["results"].as_array().unwrap();
    assert_eq!(results.len(), 2);
    for r in results {
        assert_eq!(r["run"]["mode"], "run");
        assert!(f(&r["summary"]["transactions"]) > 0.0, "{r}");
    }
    assert!(v["table"][0]["device"].is_null());
}

fn assert_usage_error(args: &[&str], needle: &str) {
    let o = pgiosim(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(needle), "{args:?}: {err}");
    // Refused before any run: no table.
    assert!(o.stdout.is_empty(), "{}", text(&o));
}

#[test]
fn bad_grids_are_refused_before_running() {
    assert_usage_error(
        &[
            "sweep",
            "-q",
            "-T",
            "1",
            "--set",
            "commit_delay=0,10,200000",
        ],
        "commit_delay",
    );
    assert_usage_error(
        &["sweep", "-q", "-T", "1", "--device", "nvme,nosuchdisk"],
        "nosuchdisk",
    );
    assert_usage_error(
        &["sweep", "-q", "--mode", "run", "--device", "gp3"],
        "--device: applies to --mode model",
    );
    assert_usage_error(&["sweep", "-q", "--clients", "4,0"], "--clients");
    assert_usage_error(&["sweep", "-q", "--clients", "1,2,..."], "last count");
    // PostgreSQL needs 2 buffers per backend: 20,000 clients do not fit the
    // default 128MB of shared_buffers, and the sweep says so before its first run.
    assert_usage_error(
        &["sweep", "-q", "-T", "1", "--clients", "1,20000"],
        "shared_buffers",
    );
    assert_usage_error(&["sweep", "-q", "-P", "1"], "-P/--progress");
}
