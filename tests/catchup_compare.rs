//! `scripts/catchup-compare` at small size: a real PostgreSQL 15 standby
//! replaying a small WAL backlog, cold, uncapped and under the gp3-like
//! blkio cap, next to `pgiosim catchup` on this disk and on the model.
//! Checks that the script completes and cleans up, and that both sides
//! replayed the same backlog of the same shape; the full-size run in
//! docs/validation.md is what holds the time to ±20%.
//!
//! Needs root (drop_caches, a cgroup, a system user), python3, cgroup v1
//! blkio and PostgreSQL; otherwise it shows as ignored with the
//! reason, or fails under `CI=true`.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;

/// Exit code of the script when this machine cannot run it.
const EXIT_CANNOT_RUN_HERE: i32 = 3;

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn catchup_compare_small_run() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        common::skip("catchup-compare needs root (drop_caches, cgroups)");
    }
    if !Path::new("/usr/lib/postgresql/15/bin/postgres").exists() {
        common::skip("PostgreSQL 15 is not installed");
    }
    if !Path::new("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device").exists() {
        common::skip("no cgroup v1 blkio throttling here");
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/catchup-compare");
    let work = tempfile::Builder::new()
        .prefix("catchup-compare-test")
        .tempdir_in("/var/tmp")
        .expect("temp dir in /var/tmp");
    let json_path = work.path().join("result.json");
    let out = Command::new(&script)
        .args(["--scale", "2", "--backlog", "24MB", "--no-published"])
        .arg("--workdir")
        .arg(work.path())
        .arg("--json")
        .arg(&json_path)
        .env("PGIOSIM", env!("CARGO_BIN_EXE_pgiosim"))
        .env("PGIOSIM_NO_INSTALL", "1")
        .output()
        .expect("run scripts/catchup-compare");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(EXIT_CANNOT_RUN_HERE) {
        common::skip(stderr.lines().last().unwrap_or("cannot run here"));
    }
    assert!(
        out.status.success(),
        "catchup-compare failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    common::note!("{stdout}");
    assert!(stdout.contains("pgiosim model"), "no table:\n{stdout}");

    // Everything it made is gone: its work directory and its cgroups.
    let left: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "result.json")
        .collect();
    assert!(left.is_empty(), "left behind: {left:?}");
    let groups: Vec<_> = std::fs::read_dir("/sys/fs/cgroup/blkio")
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("pgbench_compare_")
        })
        .map(|e| e.file_name())
        .collect();
    assert!(groups.is_empty(), "cgroups left: {groups:?}");

    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("JSON written"))
            .expect("valid JSON");
    assert_eq!(doc["schema"], "pgiosim.catchup-compare");
    let cases = doc["cases"].as_array().expect("cases");
    assert_eq!(cases.len(), 2, "local and gp3");
    for case in cases {
        let real = &case["real"];
        let backlog = num(real, "backlog_bytes");
        assert!(backlog >= 24.0 * 1024.0 * 1024.0, "{real}");
        assert!(num(real, "records") > 10_000.0, "{real}");
        assert!(num(real, "seconds") > 0.0);
        for side in ["run", "model"] {
            let s = &case[side];
            assert_eq!(s["schema"], "pgiosim.catchup", "{side}: {s}");
            // The same backlog, to the kilobyte.
            let b = num(s, "backlog_bytes");
            assert!((b - backlog).abs() < 1024.0, "{side}: {b} vs {backlog}");
            // The same shape of WAL: the full-page images (a page's first
            // change after the checkpoint) within a quarter of
            // PostgreSQL's; the records, whose sizes differ from
            // PostgreSQL's (0.65 to 1.24 of its count measured), within a
            // factor of two.
            let fpi = num(s, "full_page_images") / num(real, "full_page_images");
            assert!(
                (0.75..1.25).contains(&fpi),
                "{side}: full-page images {fpi}"
            );
            let ratio = num(s, "records") / num(real, "records");
            assert!((0.5..2.0).contains(&ratio), "{side}: records {ratio}");
            // A sanity bound on the time at this size; the full-size run
            // holds it to its target.
            let t = num(s, "seconds") / num(real, "seconds");
            assert!((0.05..20.0).contains(&t), "{side}: time ratio {t}");
        }
    }
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![catchup_compare_small_run])
}
