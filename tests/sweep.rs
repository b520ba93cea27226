//! `pgiosim sweep`, driven through the binary: the grid, the table, the
//! knees, the JSON, that a point is the very run `model` would make, and
//! that a sweep run as jobs under a scheduler (GNU parallel here) and merged
//! is the sweep run in one process. (The knee rule itself is unit-tested in
//! src/sweep/mod.rs.)

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

mod common;
use common::{pgiosim, skip, text};

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

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

/// pgiosim run in `dir`, where a sweep's job directory is.
fn pgiosim_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgiosim"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("start pgiosim")
}

/// PATH with the binary's directory first: the `pgiosim` of a job's
/// command line.
fn path_with_pgiosim() -> String {
    let bin = Path::new(env!("CARGO_BIN_EXE_pgiosim")).parent().unwrap();
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// The shell block of docs/sweep-compare-report.md that runs GNU parallel.
fn documented_parallel_block() -> String {
    let page = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/sweep-compare-report.md"),
    )
    .unwrap();
    page.split("```sh\n")
        .skip(1)
        .map(|b| b.split("\n```").next().unwrap())
        .find(|b| b.contains("parallel --jobs"))
        .expect("the page shows the GNU parallel form in a ```sh block")
        .to_string()
}

/// The documented GNU parallel form, run as the page shows it: a 40-point
/// sweep written as jobs, run by parallel two at a time and merged, is the
/// same sweep run in one process, byte for byte: its JSON (every point's
/// result, the table, the knees) and its printed table.
fn forty_jobs_under_gnu_parallel_merge_to_the_in_process_sweep() {
    if Command::new("parallel").arg("--version").output().is_err() {
        skip("GNU parallel is not installed (.ci/run installs it)");
    }
    let block = documented_parallel_block();
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new("sh")
        .args(["-ec", &block])
        .current_dir(dir.path())
        .env("PATH", path_with_pgiosim())
        .output()
        .unwrap();
    assert!(o.status.success(), "{block}\n{}", text(&o));
    // The same sweep in one process: the block's first line without --jobs-dir.
    let first: Vec<&str> = block.lines().next().unwrap().split_whitespace().collect();
    let at = first.iter().position(|a| *a == "--jobs-dir").unwrap();
    let mut args: Vec<&str> = first[1..at].to_vec();
    args.extend(&first[at + 2..]);
    args.extend(["-q", "--json", "one.json"]);
    let one = pgiosim_in(dir.path(), &args);
    assert!(one.status.success(), "{}", text(&one));
    let merged = std::fs::read(dir.path().join("grid.json")).unwrap();
    let in_process = std::fs::read(dir.path().join("one.json")).unwrap();
    let v: Value = serde_json::from_slice(&merged).unwrap();
    assert_eq!(v["results"].as_array().unwrap().len(), 40);
    assert!(
        merged == in_process,
        "the merged sweep differs from the one run in one process"
    );
    let again = pgiosim_in(dir.path(), &["sweep", "--merge", "grid"]);
    assert!(again.status.success(), "{}", text(&again));
    assert_eq!(
        String::from_utf8_lossy(&again.stdout),
        String::from_utf8_lossy(&one.stdout)
    );
}

/// The refusals of the job forms, each one line with exit code 2: a merge
/// with points missing or of another sweep, a directory not ours, flags
/// beside --run-index; and the index read from the environment.
fn sweep_jobs_refuse_what_would_not_merge() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    let sweep = |t: &str, jobs: &str| {
        pgiosim_in(
            d,
            &[
                "sweep",
                "--clients",
                "1,2",
                "--cpus",
                "2",
                "-s",
                "2",
                "-T",
                t,
                "--seed",
                "5",
                "--jobs-dir",
                jobs,
            ],
        )
    };
    let refused = |o: &Output, needle: &str| {
        assert_eq!(o.status.code(), Some(2), "{}", text(o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(needle), "{needle:?} not in {err}");
    };
    assert!(sweep("1", "a").status.success());
    assert!(sweep("2", "b").status.success());
    let o = pgiosim_in(d, &["sweep", "--jobs-dir", "a", "--run-index", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    refused(
        &pgiosim_in(d, &["sweep", "--merge", "a"]),
        "1 of 2 points have no result yet (index 0)",
    );
    let o = Command::new(env!("CARGO_BIN_EXE_pgiosim"))
        .args([
            "sweep",
            "--jobs-dir",
            "b",
            "--run-index-env",
            "JOB_COMPLETION_INDEX",
        ])
        .current_dir(d)
        .env("JOB_COMPLETION_INDEX", "0")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    std::fs::copy(d.join("b/points/0000.json"), d.join("a/points/0000.json")).unwrap();
    refused(
        &pgiosim_in(d, &["sweep", "--merge", "a"]),
        "a point of another sweep",
    );
    // The same sweep written again keeps its points; another is refused.
    let o = sweep("1", "a");
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("2 with a result already"),
        "{}",
        text(&o)
    );
    refused(&sweep("2", "a"), "holds the jobs of another sweep");
    std::fs::create_dir(d.join("mine")).unwrap();
    std::fs::write(d.join("mine/notes.txt"), "keep").unwrap();
    refused(&sweep("1", "mine"), "not empty and holds no sweep's jobs");
    assert_eq!(std::fs::read_dir(d.join("mine")).unwrap().count(), 1);
    refused(
        &pgiosim_in(
            d,
            &["sweep", "--jobs-dir", "a", "--run-index", "0", "-T", "9"],
        ),
        "give only --jobs-dir DIR",
    );
    refused(
        &pgiosim_in(d, &["sweep", "--jobs-dir", "a", "--run-index", "2"]),
        "the sweep has 2 points",
    );
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        model_sweep_table_knees_and_json,
        a_sweep_point_is_the_run_model_makes,
        points_in_parallel_give_the_serial_table,
        latency_cdf_is_in_the_result,
        real_disk_sweep_tiny,
        bad_grids_are_refused_before_running,
        forty_jobs_under_gnu_parallel_merge_to_the_in_process_sweep,
        sweep_jobs_refuse_what_would_not_merge,
    ])
}
