//! `scripts/cpu-probe-check`: its usage errors, and `--from-json` on the
//! saved runs of tests/fixtures/cpu-probe-check/ (real `--fit` runs at
//! scale 10), whose stdout it must print again, figure for figure; the
//! quiet run read as a check against the reference probe figure it implies,
//! and without one.
//! The measuring itself needs root and PostgreSQL 15 and is not run here.

use std::path::{Path, PathBuf};
use std::process::Output;

mod common;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cpu-probe-check")
        .join(name)
}

/// The run with the host to itself; the other one shared it with a compile.
const SAVED: &str = "fit-s10-2026-12-05-0006";
const SHARED: &str = "fit-s10-2026-12-05-0001";
/// The second quiet run at scale 10, part of the fit.
const QUIET_AGAIN: &str = "fit-s10-2026-12-05-0008";
/// A run at scale 100 in --fit mode: held out of the fit.
const SCALE_100_FIT: &str = "fit-s100-2026-12-05-0010";
/// A run at scale 100 in check mode against the shipped reference probe.
const SCALE_100_CHECK: &str = "check-s100-2026-12-05-0015";

fn cpu_probe_check(args: &[&str]) -> Output {
    common::script("cpu-probe-check", args)
}

#[test]
fn usage_errors_exit_2_with_one_line() {
    for args in [
        &["--scale", "50"][..],
        &["--scale", "x"],
        &["--duration", "1"],
        &["--clients", "8"],
        &["--clients", "1,8,32"],
        &["--runs", "3"],
        &["--from-json", "saved.json", "--scale", "10"],
        &["--from-json", "saved.json", "--json", "out.json"],
    ] {
        let o = cpu_probe_check(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("cpu-probe-check: "), "{args:?}: {err}");
        assert!(o.stdout.is_empty(), "{args:?}");
    }
}

#[test]
fn a_missing_json_file_exits_1() {
    let o = cpu_probe_check(&["--from-json", "/nonexistent/pgiosim-no-such.json"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
}

fn reprint(name: &str) -> String {
    let json = fixture(&format!("{name}.json"));
    let o = cpu_probe_check(&["--from-json", json.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    // The run's own stdout, as it printed it.
    let saved = std::fs::read_to_string(fixture(&format!("{name}.stdout"))).unwrap();
    assert_eq!(out, saved, "{name}");
    out
}

#[test]
fn the_saved_runs_print_their_figures_again() {
    let out = reprint(SAVED);
    // Their figures (tests/fixtures/cpu-probe-check/README.md).
    for want in [
        "| 1 | 8 | 3,513 | 0.351 | 0.082 | 0.433 | 1.52 | 0.37 | 0 | yes |",
        "| 3 | 8 | 3,848 | 0.371 | 0.086 | 0.457 | 1.75 | 0.08 | 0 | no |",
        "| 4 | 32 | 3,581 | 0.413 | 0.079 | 0.492 | 1.76 | 0.06 | 0 | yes |",
        "CPU probe here: 14.851 µs a round",
        "| 8 | 0.433 | 0.309 | 14.851 | 10.602 |",
        "| 32 | 0.492 | 0.356 | 14.851 | 10.747 |",
        "implied reference probe: 10.674 µs a round",
    ] {
        assert!(out.contains(want), "no {want:?} in\n{out}");
    }
    let out = reprint(SHARED);
    for want in [
        "| 3 | 8 | 2,426 | 0.365 | 0.100 | 0.465 | 1.12 | 0.88 | 0 | yes |",
        "CPU probe here: 14.677 µs a round",
        "| 8 | 0.465 | 0.309 | 14.677 | 9.758 |",
        "| 32 | 0.592 | 0.356 | 14.677 | 8.823 |",
        "implied reference probe: 9.279 µs a round",
    ] {
        assert!(out.contains(want), "no {want:?} in\n{out}");
    }
}

/// The saved run with its mode and its probe's reference_us replaced, in a
/// file of its own.
fn as_check(reference_us: &str, name: &str) -> PathBuf {
    let text = std::fs::read_to_string(fixture(&format!("{SAVED}.json"))).unwrap();
    assert!(text.contains("\"mode\": \"fit\""));
    assert!(text.contains("\"reference_us\": null"));
    let text = text
        .replace("\"mode\": \"fit\"", "\"mode\": \"check\"")
        .replace(
            "\"reference_us\": null",
            &format!("\"reference_us\": {reference_us}"),
        );
    let path = std::env::temp_dir().join(format!(
        "pgiosim-cpu-probe-check-{}-{name}.json",
        std::process::id()
    ));
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_check_predicts_from_the_reference_probe() {
    let path = as_check("10.674", "check");
    let o = cpu_probe_check(&["--from-json", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    // 0.309 ms × 14.851 / 10.674 = 0.430 against 0.433 measured; 0.356 ms → 0.495 against 0.492.
    for want in [
        "reference probe: 10.674 µs a round",
        "speed 0.719",
        "| 8 | 0.433 | 0.430 | -0.7% |",
        "| 32 | 0.492 | 0.495 | +0.7% |",
    ] {
        assert!(out.contains(want), "no {want:?} in\n{out}");
    }
    assert!(!out.contains("implied reference probe"), "{out}");
}

#[test]
fn a_check_without_a_reference_probe_prints_the_measurements_and_exits_1() {
    let path = as_check("null", "null");
    let o = cpu_probe_check(&["--from-json", path.to_str().unwrap()]);
    std::fs::remove_file(&path).unwrap();
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("| 1 | 8 | 3,513 | 0.351 |"), "{out}");
    assert!(out.contains("CPU probe here: 14.851 µs a round"), "{out}");
    assert!(
        out.contains("reference_us (the workload's cpu_probe_us) is null"),
        "{out}"
    );
}

/// The workloads' `cpu_probe_us` is the fit of the two quiet scale-10 runs
/// (the geometric mean of the four client counts' implied figures), rounded
/// to 0.01 µs; the shared-host run is not part of it.
#[test]
fn the_shipped_reference_probe_is_the_quiet_runs_fit() {
    let mut logs = Vec::new();
    for name in [SAVED, QUIET_AGAIN] {
        let text = std::fs::read_to_string(fixture(&format!("{name}.json"))).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        for r in v["results"].as_array().unwrap() {
            logs.push(r["implied_reference_probe_us"].as_f64().unwrap().ln());
        }
    }
    assert_eq!(logs.len(), 4);
    let fit = (logs.iter().sum::<f64>() / 4.0).exp();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    for w in ["tpcb-like", "simple-update", "select-only", "large-updates"] {
        let text = std::fs::read_to_string(root.join(format!("workloads/{w}.json"))).unwrap();
        let v: serde_json::Value = serde_json::from_str(&text).unwrap();
        let shipped = v["cpu_probe_us"].as_f64().unwrap();
        assert!(
            (shipped - fit).abs() < 0.005,
            "{w}: {shipped} against the fit {fit:.3}"
        );
    }
    let out = reprint(QUIET_AGAIN);
    assert!(
        out.contains("implied reference probe: 10.802 µs a round"),
        "{out}"
    );
}

/// The held-out check: scale 100, whose CPU goes more to page I/O, read
/// against the shipped reference probe.
#[test]
fn scale_100_is_the_check() {
    let out = reprint(SCALE_100_FIT);
    assert!(
        out.contains("| 8 | 0.515 | 0.389 | 14.826 | 11.200 |"),
        "{out}"
    );
    assert!(
        out.contains("| 32 | 0.560 | 0.370 | 14.826 | 9.804 |"),
        "{out}"
    );
    let out = reprint(SCALE_100_CHECK);
    assert!(out.contains("this host 14.899 µs: speed 0.721"), "{out}");
    assert!(out.contains("| 8 | 0.516 | 0.540 | +4.5% |"), "{out}");
    assert!(out.contains("| 32 | 0.509 | 0.513 | +0.8% |"), "{out}");
}
