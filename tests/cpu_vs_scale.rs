//! `scripts/cpu-vs-scale`: its usage errors, and `--from-json` on the saved
//! run of docs/cpu-model.md's last section (tests/fixtures/cpu-vs-scale/),
//! whose table and derived figures it must print again. The measuring
//! itself needs root and PostgreSQL 15 and is not run here.

use std::path::Path;
use std::process::Output;

mod common;

fn cpu_vs_scale(args: &[&str]) -> Output {
    common::script("cpu-vs-scale", args)
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["--regime", "100"][..],
        &["--regime", "100:lots"],
        &["--regime", "0:128MB"],
        &["--clients", "2,8"],
        &["--regime", "100:128MB", "--workloads", "insert"],
        &["--regime", "100:128MB", "--clients", "x"],
    ] {
        let o = cpu_vs_scale(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!o.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn a_missing_json_file_exits_1() {
    let o = cpu_vs_scale(&["--from-json", "/nonexistent/pgiosim-no-such.json"]);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn the_saved_run_gives_the_documented_figures() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpu-vs-scale");
    let f = |name: &str| dir.join(name).to_str().unwrap().to_string();
    let (json, io, stderr) = (
        f("regimes-2026-12-04.json"),
        f("io-samples-2026-12-04.log"),
        f("run-2026-12-04.stderr"),
    );
    let o = cpu_vs_scale(&[
        "--from-json",
        &json,
        "--io-log",
        &io,
        &stderr,
        "--page-cache-read-us",
        "0",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    // docs/cpu-model.md, "Measured here: the server's memory regime".
    for want in [
        "| 2700 | 16GB | update | 8 | 1,533 | 329 (354, 310, 334) |",
        "| 0.82 | 0.00 | 1.60 | 33.7 | 15,072 | 1.90 | 5.6 |",
        "| 100 | 128MB | update | 8 | 5,000 | 193 (197, 190, 190) |",
        "all to page-cache reads -0.5 µs/read",
        "+40.3 µs CPU",
        "all to writes 42.9 µs/page",
        "+95.6 µs CPU, +0.98 device reads",
        "all to device reads 97.6 µs/read",
        "all to device reads 82.8 µs/read",
        "+136.6 µs CPU, +0.81 device reads",
        "with 97.6 µs/device read: 95.5 µs/page written, 2.88 µs/KiB written",
    ] {
        assert!(out.contains(want), "no {want:?} in\n{out}");
    }
}
