//! `scripts/vacuum-compare` at small size: a real PostgreSQL 15 VACUUM
//! (VERBOSE) of a pgbench_accounts of scale 5 with every 10th row updated,
//! cold, uncapped and under the gp3-like blkio cap, next to `pgiosim vacuum`
//! on this disk and on the model. Checks that the script completes and
//! cleans up, that both sides agree on the work (heap, index, dead items,
//! one index pass) and that the times are in range; the full-size run in
//! docs/validation.md is what holds it to ±20%.
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
/// Exit code when a cell is outside the tolerance (allowed at this size).
const EXIT_MISS: i32 = 1;

fn have_postgres() -> bool {
    Path::new("/usr/lib/postgresql/15/bin/postgres").exists()
}

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

fn vacuum_compare_small_run() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        common::skip("vacuum-compare needs root (drop_caches, cgroups)");
    }
    if !have_postgres() {
        common::skip("PostgreSQL 15 is not installed");
    }
    if !Path::new("/sys/fs/cgroup/blkio/blkio.throttle.read_iops_device").exists() {
        common::skip("no cgroup v1 blkio throttling here");
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/vacuum-compare");
    let work = tempfile::Builder::new()
        .prefix("vacuum-compare-test")
        .tempdir_in("/var/tmp")
        .expect("temp dir in /var/tmp");
    let json_path = work.path().join("result.json");
    let out = Command::new(&script)
        .args(["--scale", "5", "--no-published"])
        .arg("--workdir")
        .arg(work.path())
        .arg("--json")
        .arg(&json_path)
        .env("PGIOSIM", env!("CARGO_BIN_EXE_pgiosim"))
        .env("PGIOSIM_NO_INSTALL", "1")
        .output()
        .expect("run scripts/vacuum-compare");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    if out.status.code() == Some(EXIT_CANNOT_RUN_HERE) {
        common::skip(stdout.lines().last().unwrap_or("cannot run here"));
    }
    assert!(
        out.status.success() || out.status.code() == Some(EXIT_MISS),
        "vacuum-compare failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    common::note!("{stdout}");
    assert!(
        stdout.contains("| gp3 | pgiosim model |"),
        "no table:\n{stdout}"
    );

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
                .starts_with("vacuum-compare_")
        })
        .map(|e| e.file_name())
        .collect();
    assert!(groups.is_empty(), "cgroups left: {groups:?}");

    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("JSON written"))
            .expect("valid JSON");
    assert_eq!(doc["schema"], "pgiosim.vacuum-compare");
    let table = &doc["table"];
    assert_eq!(num(table, "dead_rows"), 50_000.0, "{table}");
    for cell in doc["cells"].as_array().expect("cells") {
        let real = &cell["real"];
        let verbose = &real["verbose"];
        // PostgreSQL removed every updated row's old version in one index pass.
        assert_eq!(num(verbose, "lpdead_items"), 50_000.0, "{verbose}");
        assert_eq!(num(verbose, "index_scans"), 1.0, "{verbose}");
        for side in ["disk", "model"] {
            let s = &cell[side];
            assert_eq!(s["schema"], "pgiosim.vacuum", "{s}");
            assert_eq!(num(s, "index_passes"), 1.0, "{side}: {s}");
            // The same heap pages with dead items, the same index read.
            let lp = num(s, "lpdead_pages");
            let want = num(verbose, "lpdead_pages");
            assert!((lp - want).abs() <= 0.02 * want, "{side}: {lp} vs {want}");
            assert_eq!(
                num(&s["phases"]["vacuum_indexes"], "pages"),
                num(table, "index_bytes") / 8192.0,
                "{side}: {s}"
            );
            // Sub-second vacuums on a shared host swing by factors: only a
            // sanity bound on the time; the work above is what must match.
            let ratio = num(&cell["ratio"], side);
            assert!((0.1..10.0).contains(&ratio), "{side}: ratio {ratio}");
        }
    }
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![vacuum_compare_small_run])
}
