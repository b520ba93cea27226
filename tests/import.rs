//! `pgiosim import pgbench` and `compare --tolerance`, driven through the
//! binary on a real PostgreSQL 15 run's files (tests/fixtures/pgbench: its
//! pgbench report and the statistics `scripts/pgbench-compare` sampled
//! around it, and the `run` result of the same cell).

use std::path::{Path, PathBuf};

use serde_json::Value;

mod common;
use common::{bucket, pgiosim, text, tmp};

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/pgbench")
        .join(name)
        .display()
        .to_string()
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The fixture's real run imported into `dir/real.json`.
fn imported(dir: &Path) -> PathBuf {
    let out = dir.join("real.json");
    let o = pgiosim(&[
        "import",
        "pgbench",
        &fixture("pg15-tpcb-c4.out"),
        "--statistics",
        &fixture("pg15-tpcb-c4.statistics.json"),
        "--cpus",
        "2",
        "--json",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    out
}

#[test]
fn a_real_run_becomes_a_result() {
    let dir = tmp("import");
    let r = read(&imported(dir.path()));
    assert_eq!(r["schema"], "pgiosim.result");
    assert_eq!(r["run"]["mode"], "postgres");
    assert_eq!(r["run"]["workload"], "tpcb-like");
    assert_eq!(r["run"]["clients"], 4);
    assert_eq!(r["run"]["scale"], 1);
    // pgbench's own figures, as it printed them.
    let report = std::fs::read_to_string(fixture("pg15-tpcb-c4.out")).unwrap();
    let tps = r["summary"]["tps"].as_f64().unwrap();
    assert!(report.contains(&format!("tps = {tps:.6}")), "{tps}");
    // pgbench does not print percentiles: null, not a made-up figure.
    assert!(r["summary"]["latency_ms"]["p99"].is_null());
    // Every bucket's share is within 0..1, unattributed is what the others
    // leave (their sources overlap, so they may sum above 1: pgbench's CPU
    // runs while backends wait), and mean µs is the share of the average
    // latency.
    let lat_us = r["summary"]["latency_ms"]["average"].as_f64().unwrap() * 1e3;
    let mut sum = 0.0;
    for name in ["page_read", "wal_fsync", "lock_wait", "cpu"] {
        let b = bucket(&r, name).unwrap_or_else(|| panic!("no {name}: {r}"));
        let share = b["share"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&share), "{name} {share}");
        let mean = b["mean_us"].as_f64().unwrap();
        assert!((mean - share * lat_us).abs() < 1e-6 * lat_us, "{name}");
        sum += share;
    }
    let left = bucket(&r, "unattributed").expect("unattributed")["share"]
        .as_f64()
        .unwrap();
    assert!(
        (left - (1.0 - sum).max(0.0)).abs() < 1e-12,
        "{left} after {sum}"
    );
    // The I/O figures from pg_stat_wal.
    assert!(
        r["io"]["wal_bytes_per_tx"].as_f64().unwrap() > 1000.0,
        "{}",
        r["io"]
    );
    assert_eq!(
        r["workload"]["imported_from"]["wal_fsync_source"],
        "statements"
    );
    // `compare` and `report` take it.
    let o = pgiosim(&[
        "compare",
        dir.path().join("real.json").to_str().unwrap(),
        &fixture("run-tpcb-c4.json"),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("postgres on postgres"), "{}", text(&o));
    let html = dir.path().join("r.html");
    let o = pgiosim(&[
        "report",
        dir.path().join("real.json").to_str().unwrap(),
        "-o",
        html.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
}

#[test]
fn without_statistics_there_is_no_breakdown() {
    // pgbench -T without -P prints no stddev: null.
    let o = pgiosim(&[
        "import",
        "pgbench",
        &fixture("pg15-tpcb-c2-no-stddev.out"),
        "--json",
        "-",
        "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON alone");
    assert_eq!(r["breakdown"], serde_json::json!([]));
    assert!(r["summary"]["latency_ms"]["stddev"].is_null());
    assert_eq!(r["summary"]["transactions"], 5893);
    assert_eq!(r["run"]["clients"], 2);
}

#[test]
fn what_is_not_a_pgbench_report_is_refused_by_name() {
    let o = pgiosim(&["import", "pgbench", &fixture("run-tpcb-c4.json")]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("run-tpcb-c4.json"), "{}", text(&o));
    assert!(
        text(&o).contains("transactions actually processed"),
        "{}",
        text(&o)
    );
    let dir = tmp("import-bad");
    let bad = dir.path().join("stats.json");
    std::fs::write(&bad, r#"{"samples": {"events": {"active|": "many"}}}"#).unwrap();
    let o = pgiosim(&[
        "import",
        "pgbench",
        &fixture("pg15-tpcb-c4.out"),
        "--statistics",
        bad.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("samples.events"), "{}", text(&o));
}

#[test]
fn tolerance_passes_and_fails_with_its_exit_code() {
    let dir = tmp("tolerance");
    let real = imported(dir.path());
    let real = real.to_str().unwrap();
    let run = fixture("run-tpcb-c4.json");
    // The run's tps is 32% below the real one's: out of ±15%, exit 3.
    let o = pgiosim(&["compare", real, &run, "--tolerance", "--json", "-", "-q"]);
    assert_eq!(o.status.code(), Some(3), "{}", text(&o));
    let doc: Value = serde_json::from_slice(&o.stdout).expect("stdout is the JSON alone");
    let v = &doc["tolerance"];
    assert_eq!(v["pass"], false);
    assert_eq!(v["tps_tolerance"], 0.15);
    assert_eq!(v["share_points"], 5.0);
    let tps = &v["checks"][0];
    assert_eq!(tps["check"], "tps");
    assert_eq!(tps["pass"], false);
    let err = tps["error"].as_f64().unwrap();
    let want = tps["value"].as_f64().unwrap() / tps["reference"].as_f64().unwrap() - 1.0;
    assert!((err - want).abs() < 1e-12);
    // The shares as PostgreSQL measures them: the run's wal_fsync with its
    // buffer_wait.
    let runv = read(Path::new(&run));
    let b = |n: &str| bucket(&runv, n).map_or(0.0, |b| b["share"].as_f64().unwrap());
    let wal = v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["check"] == "share wal_fsync")
        .expect("a wal_fsync check");
    assert!((wal["value"].as_f64().unwrap() - (b("wal_fsync") + b("buffer_wait"))).abs() < 1e-12);
    let o = pgiosim(&["compare", real, &run, "--tolerance"]);
    assert_eq!(o.status.code(), Some(3));
    assert!(
        text(&o).contains("MISS") && text(&o).contains("FAIL:"),
        "{}",
        text(&o)
    );
    // Wide enough targets pass, exit 0.
    let o = pgiosim(&["compare", real, &run, "--tolerance", "tps=40%,share=50"]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o));
    assert!(text(&o).contains("PASS:"), "{}", text(&o));
    // Without --tolerance the document has no verdict.
    let o = pgiosim(&["compare", real, &run, "--json", "-", "-q"]);
    assert_eq!(o.status.code(), Some(0));
    let doc: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(doc.get("tolerance").is_none());
}

#[test]
fn a_bad_tolerance_is_refused() {
    let run = fixture("run-tpcb-c4.json");
    for (spec, says) in [
        ("tps", "NAME=VALUE"),
        ("tps=x%", "not a number"),
        ("p99=5", "not a tolerance"),
    ] {
        let o = pgiosim(&["compare", &run, &run, "--tolerance", spec]);
        assert_eq!(o.status.code(), Some(2), "{spec}: {}", text(&o));
        assert!(text(&o).contains(says), "{spec}: {}", text(&o));
    }
}
