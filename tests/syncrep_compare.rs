//! `scripts/syncrep-compare` at small size: a real PostgreSQL primary with
//! two synchronous standbys (`ANY 1 (s1, s2)`) 1 ms away, pgbench with one
//! client for 4 s at scale 1 (no wait for a quiet host), next to `pgiosim run` and `model` with the
//! same standbys. Checks that the script completes, cleans up, and that the
//! comparison is sane: commits wait for the standbys on both sides, and
//! `run` is in the same range as PostgreSQL (the full matrix, in
//! docs/validation.md, is what holds it to the targets).
//!
//! Needs root (a network namespace, a system user), ip(8), python3 and
//! PostgreSQL (or apt-get to install it); otherwise it shows as
//! ignored with the reason, or fails when CI=true.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

mod common;
use common::skip;

/// Exit code of the script when this machine cannot run it.
const EXIT_CANNOT_RUN_HERE: i32 = 3;

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn syncrep_compare_small_run() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skip("syncrep-compare needs root (a network namespace, a system user)");
    }
    for p in ["python3", "ip"] {
        if !common::on_path(p) {
            skip(&format!("{p} is not installed"));
        }
    }
    if !common::have_postgres(&["pg_basebackup", "pgbench"]) && !common::on_path("apt-get") {
        skip("PostgreSQL is not installed and there is no apt-get to install it");
    }
    let first = attempt();
    let (run, real) = (&first["run"], &first["real"]);
    if run_is_near_real(run) {
        return;
    }
    // One comparison of 4 s on each side: a disk hiccup on one side alone
    // (on 2026-12-07 the real side's fdatasync p99 was 2.7 ms, ten times
    // its usual) moves its tps by more than the range. Measured once more
    // before the test fails, as tests/model_vs_run.rs does a cell.
    common::note!("run {run} vs real {real}: outside the range; once more");
    let second = attempt();
    let (run, real) = (&second["run"], &second["real"]);
    assert!(run_is_near_real(run), "run {run} vs real {real}, twice");
}

/// `run` in the same range as PostgreSQL: tps within a factor of two, the
/// share of a transaction in SyncRep within 20 points.
fn run_is_near_real(run: &Value) -> bool {
    let ratio = num(&run["checks"], "tps_ratio");
    let points = num(&run["checks"], "share_points").abs();
    (0.5..2.0).contains(&ratio) && points < 0.2
}

/// One run of the script: it completes, cleans up, and its comparison is
/// sane. Returns its one case.
fn attempt() -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/syncrep-compare");
    let work = tempfile::Builder::new()
        .prefix("syncrep-compare-test")
        .tempdir_in("/var/tmp")
        .expect("temp dir in /var/tmp");
    let json_path = work.path().join("result.json");
    let out = Command::new(&script)
        .args([
            "--clients",
            "1",
            "--rtts",
            "1",
            "--duration",
            "4",
            "--scale",
            "1",
            "--quiet-wait",
            "0",
        ])
        .arg("--workdir")
        .arg(work.path())
        .arg("--json")
        .arg(&json_path)
        .env("PGIOSIM", env!("CARGO_BIN_EXE_pgiosim"))
        .output()
        .expect("run scripts/syncrep-compare");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(EXIT_CANNOT_RUN_HERE) {
        skip(stderr.lines().last().unwrap_or("cannot run here"));
    }
    assert!(
        out.status.success(),
        "syncrep-compare failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    common::note!("{stdout}");
    assert!(stdout.contains("checks vs real"), "no table:\n{stdout}");

    // Everything it made is gone: its temporary directory and namespace.
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "result.json")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let ns = Command::new("ip").args(["netns", "list"]).output().unwrap();
    let ns = String::from_utf8_lossy(&ns.stdout);
    assert!(
        !ns.lines().any(|l| l.starts_with("pgsr")),
        "namespace left: {ns}"
    );

    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("JSON written"))
            .expect("valid JSON");
    assert_eq!(doc["schema"], "pgiosim.syncrep-compare");
    assert_eq!(doc["synchronous_commit"], "on");
    let case = &doc["cases"][0];
    // The round trip pgiosim got was measured over the path: at least the
    // millisecond asked for, less what the measurement's own wake-ups took.
    let rtt = num(&case["rtt"], "rtt_us");
    assert!((800.0..20_000.0).contains(&rtt), "{}", case["rtt"]);
    let real = &case["real"];
    assert!(num(real, "tps") > 10.0, "{real}");
    assert!(num(real, "samples") > 20.0, "{real}");
    // One client, a standby 1 ms away: a good part of each commit waits in
    // SyncRep, on PostgreSQL and in pgiosim alike.
    let real_share = num(real, "sync_rep_share");
    for side in ["run", "model"] {
        let s = &case[side];
        let share = num(s, "sync_rep_share");
        assert!(share > 0.15, "{side}: {s}");
        assert!(num(s, "sync_rep_p99_us") >= rtt * 0.9, "{side}: {s}");
        let checks = &s["checks"];
        assert!(
            checks["tps_ratio"].is_f64() && checks["share_points"].is_f64(),
            "{s}"
        );
    }
    assert!(real_share > 0.15, "{real}");
    case.clone()
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![syncrep_compare_small_run])
}
