//! `scripts/pgbench-compare` at small size: real PostgreSQL + pgbench and
//! `pgiosim run` side by side, scale 1, clients 1 and 4, uncapped disk, 4 s
//! each, the real side twice (--repeat 2). Checks that the script completes
//! and that its JSON figures are sane, not that pgiosim matches PostgreSQL
//! (that is the full matrix's job).
//!
//! A second case runs the capped condition on one cluster reused in place
//! (`--conditions cap3000 --reuse-cluster`): it checks the cap, the device
//! I/O counts of the three sides and that the cluster is reused, then
//! removed.
//!
//! Needs root (cgroups, drop_caches, a system user) and PostgreSQL (`.ci/run`
//! installs it); otherwise it shows as ignored with the reason, or
//! fails under `CI=true`.

use std::path::Path;
use std::process::Command;
use std::time::Instant;

use serde_json::Value;

mod common;
use common::skip;

/// Exit code of the script when this machine cannot run it (not root,
/// PostgreSQL not installable).
const EXIT_CANNOT_RUN_HERE: i32 = 3;

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut cur = v;
    for key in path {
        cur = &cur[*key];
    }
    cur.as_f64()
        .unwrap_or_else(|| panic!("{} is not a number: {cur}", path.join(".")))
}

/// Skips the test where the script cannot run: not root, no python3, no
/// PostgreSQL.
fn needs_root_and_postgres() {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skip("pgbench-compare needs root (cgroups, drop_caches, a system user)");
    }
    if !common::on_path("python3") {
        skip("python3 is not installed");
    }
    // The script would install PostgreSQL with apt-get; a test never
    // installs (`.ci/run` does), and PGIOSIM_NO_INSTALL tells the script so.
    if !common::have_postgres(&["pg_ctl", "pgbench"]) {
        skip("PostgreSQL (pg_ctl, pgbench) is not installed (.ci/run installs it)");
    }
}

/// Runs the script with `args`; asserts it succeeded (skips where it says
/// it cannot run here) and returns its standard output and error.
fn pgbench_compare(args: &[&str]) -> (String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pgbench-compare");
    let started = Instant::now();
    let out = Command::new(&script)
        .args(args)
        .env("PGIOSIM", env!("CARGO_BIN_EXE_pgiosim"))
        .env("PGIOSIM_NO_INSTALL", "1")
        .output()
        .expect("run scripts/pgbench-compare");
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if out.status.code() == Some(EXIT_CANNOT_RUN_HERE) {
        let reason = stderr.lines().last().unwrap_or("cannot run here");
        skip(reason);
    }
    assert!(
        out.status.success(),
        "pgbench-compare failed ({}):\n{stdout}\n{stderr}",
        out.status
    );
    common::note!(
        "pgbench-compare took {:.0} s:\n{stdout}",
        started.elapsed().as_secs_f64()
    );
    (stdout, stderr)
}

fn pgbench_compare_small_run() {
    needs_root_and_postgres();
    let work = common::tmp("pgbench-compare-test");
    let json_path = work.path().join("result.json");
    let (workdir, json) = (path_arg(work.path()), path_arg(&json_path));
    let (stdout, _) = pgbench_compare(&[
        "--scales",
        "1",
        "--clients",
        "1,4",
        "--conditions",
        "local",
        "--duration",
        "4",
        "--quiet-wait",
        "0",
        "--cpu-calibration",
        "3",
        "--repeat",
        "2",
        "--memory",
        "1GB",
        "--by-minute",
        "--workdir",
        &workdir,
        "--json",
        &json,
    ]);
    assert!(
        stdout.contains("checks vs real"),
        "no table on stdout:\n{stdout}"
    );
    // --by-minute: one table per cell, its first minute with the real and
    // the run side's tps.
    for clients in [1, 4] {
        let head = format!("s1 c{clients} local by minute");
        let table = stdout
            .split_once(&head)
            .unwrap_or_else(|| panic!("no {head:?} table:\n{stdout}"))
            .1;
        let first = table
            .lines()
            .find(|l| l.trim_start().starts_with("1 "))
            .unwrap_or_else(|| panic!("no minute 1 in {head:?}:\n{stdout}"));
        let tps: Vec<f64> = first
            .split_whitespace()
            .skip(1)
            .take(2)
            .map(|v| v.trim().replace(',', "").parse().unwrap_or(0.0))
            .collect();
        assert!(
            tps.len() == 2 && tps.iter().all(|&t| t > 0.0),
            "{head}: minute 1 has no real and run tps: {first:?}"
        );
    }

    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("JSON written"))
            .expect("valid JSON");
    assert_eq!(doc["schema"], "pgiosim.pgbench-compare");
    // This host's CPU was measured and handed to pgiosim.
    let cal = &doc["calibration"];
    assert_eq!(cal["status"], "ok", "{cal}");
    let per_stmt = num(cal, &["cpu_us_per_statement"]);
    assert!((5.0..2000.0).contains(&per_stmt), "{cal}");
    // Two measured windows per client count (8 and 32), the cheaper counts;
    // the cores' time per transaction is at least its CPU time.
    let run8 = &cal["runs"][0];
    for (point, clients) in [(run8, 8), (&run8["high"], 32)] {
        assert_eq!(point["clients"], clients, "{run8}");
        let windows = point["windows_cpu_us_per_tx"].as_array().expect("windows");
        assert_eq!(windows.len(), 2, "{point}");
        let cpu = num(point, &["cpu_us_per_tx"]);
        let least = windows
            .iter()
            .filter_map(Value::as_f64)
            .fold(f64::INFINITY, f64::min);
        assert!((cpu - least).abs() <= 0.1, "{point}");
        let busy = num(point, &["busy_cores"]);
        assert!(
            busy > 0.0 && busy <= num(point, &["cores"]) + 0.1,
            "{point}"
        );
        assert!(num(point, &["core_us_per_tx"]) >= cpu, "{point}");
    }
    // The growth of CPU with the backends went into the workload pgiosim got.
    let growth = &cal["cpu_growth"];
    let workload = &cal["written"];
    for (fitted, field) in [
        ("statement", "cpu_growth_per_backend"),
        ("io", "io_cpu_growth_per_backend"),
    ] {
        let g = num(growth, &[fitted]);
        assert!((0.0..1.0).contains(&g), "{growth}");
        assert!(
            (num(workload, &[field]) - g).abs() < 1e-4,
            "{field}: {growth}"
        );
    }
    assert_eq!(workload["cpu_growth_above_backends"], 8);
    let cells = doc["cells"].as_array().expect("cells");
    assert_eq!(cells.len(), 2, "one cell per client count");
    for cell in cells {
        let tag = format!(
            "s{} c{} {}",
            cell["scale"], cell["clients"], cell["condition"]
        );
        for side in ["real", "run"] {
            assert_eq!(cell[side]["status"], "ok", "{tag} {side}: {}", cell[side]);
            let tps = num(&cell[side], &["derived", "tps"]);
            assert!(tps > 0.0, "{tag} {side}: tps {tps}");
            for share in ["page_read", "wal_fsync", "lock_wait", "cpu"] {
                let v = num(&cell[side], &["derived", "shares", share]);
                assert!(
                    (0.0..=1.0).contains(&v),
                    "{tag} {side}: share {share} = {v}"
                );
            }
        }
        // --repeat 2: both real runs are kept, and the one checked is the
        // median (for two runs, the slower), so a fast outlier cannot flatter
        // pgiosim.
        // --memory 1GB went to each run's cgroup, and the server log was read
        // for checkpoint starts (none are due in 4 s).
        assert_eq!(
            cell["real"]["raw"]["memory_limit_bytes"],
            1u64 << 30,
            "{tag}"
        );
        assert!(
            cell["real"]["raw"]["checkpoint_starts_s"].is_array(),
            "{tag}: {}",
            cell["real"]["raw"]
        );
        let reps = cell["real"]["repeats"].as_array().expect("repeats");
        assert_eq!(reps.len(), 2, "{tag}: {reps:?}");
        let medians: Vec<_> = reps.iter().filter(|r| r["median"] == true).collect();
        assert_eq!(medians.len(), 1, "{tag}: {reps:?}");
        let slowest = reps
            .iter()
            .map(|r| num(r, &["tps"]))
            .fold(f64::INFINITY, f64::min);
        assert_eq!(num(medians[0], &["tps"]), slowest, "{tag}: {reps:?}");
        assert_eq!(
            num(&cell["real"], &["derived", "tps"]),
            slowest,
            "{tag}: the checked run is the median"
        );
        let wal_real = num(&cell["real"], &["derived", "wal_bytes_per_tx"]);
        let wal_run = num(&cell["run"], &["derived", "wal_bytes_per_tx"]);
        assert!(
            wal_real > 0.0 && wal_run > 0.0,
            "{tag}: WAL B/tx real {wal_real}, run {wal_run}"
        );
        let ratio = wal_run / wal_real;
        assert!(
            (1.0 / 3.0..=3.0).contains(&ratio),
            "{tag}: WAL B/tx real {wal_real:.0} vs run {wal_run:.0} differ by more than 3x"
        );
        assert_eq!(
            cell["model"]["status"], "n/a",
            "{tag}: no device profile given"
        );
        // The real run went through `pgiosim import pgbench`, and the
        // verdicts through `pgiosim compare --tolerance`.
        assert!(
            cell["real"]["result_file"]
                .as_str()
                .is_some_and(|f| f.ends_with(".json")),
            "{tag}: {}",
            cell["real"]
        );
        let checks = &cell["checks"];
        for key in [
            "run_tps",
            "run_page_read",
            "run_wal_fsync",
            "run_lock_wait",
            "run_cpu",
        ] {
            let c = &checks[key];
            assert!(c["pass"].is_boolean(), "{tag}: {key}: {checks}");
        }
        assert_eq!(num(&checks["run_tps"], &["reference"]), slowest, "{tag}");
    }
    // Everything the script created is gone.
    let leftovers: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "result.json")
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

fn path_arg(p: &Path) -> String {
    p.to_str().expect("a UTF-8 path").to_string()
}

/// The capped condition on one cluster used in place: a first run builds
/// it in --reuse-cluster DIR and keeps it (--keep), a second reuses it
/// without loading, runs every real cell before `run`, removes it
/// (--remove-cluster-after-real) and reports each side's device I/Os a
/// transaction; `model` gets a profile calibrated under the cap.
fn pgbench_compare_reused_cluster_under_a_cap() {
    needs_root_and_postgres();
    let work = common::tmp("pgbench-compare-cap-test");
    let cluster = work.path().join("cluster");
    let json_path = work.path().join("result.json");
    let (workdir, json, cluster_arg) = (
        path_arg(work.path()),
        path_arg(&json_path),
        path_arg(&cluster),
    );
    let common_args = [
        "--scales",
        "1",
        "--quiet-wait",
        "0",
        "--cpu-calibration",
        "0",
        "--memory",
        "1GB",
        "--workdir",
        &workdir,
        "--reuse-cluster",
        &cluster_arg,
    ];
    let (_, first) = pgbench_compare(
        &[
            &common_args[..],
            &[
                "--clients",
                "1",
                "--conditions",
                "local",
                "--duration",
                "2",
                "--keep",
            ],
        ]
        .concat(),
    );
    assert!(first.contains("pgbench -i -s 1 -I dtgvp"), "{first}");
    assert!(
        cluster.join("PG_VERSION").exists(),
        "--keep kept the cluster"
    );

    let (stdout, second) = pgbench_compare(
        &[
            &common_args[..],
            &[
                "--clients",
                "2",
                "--conditions",
                "cap3000",
                "--duration",
                "3",
                "--calibrate-device",
                "--calibrate-seconds",
                "0.2",
                "--calibrate-size",
                "32MB",
                "--remove-cluster-after-real",
                "--json",
                &json,
            ],
        ]
        .concat(),
    );
    assert!(second.contains("reusing the cluster"), "{second}");
    assert!(!second.contains("pgbench -i"), "loaded again:\n{second}");
    assert!(
        stdout.contains("device I/Os a transaction"),
        "no device table:\n{stdout}"
    );
    assert!(!cluster.exists(), "the cluster was not removed");

    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(&json_path).expect("JSON written"))
            .expect("valid JSON");
    assert_eq!(doc["params"]["caps"]["cap3000"]["iops"], 3000);
    // calibrate ran under the cap and `model` got its profile.
    let profile = doc["params"]["device_profiles"]["cap3000"]
        .as_str()
        .expect("a calibrated profile");
    assert!(profile.ends_with("device-cap3000.json"), "{profile}");
    assert_eq!(
        doc["params"]["device_calibration"]["cap3000"]["profile"]["name"],
        "calibrated-cap3000"
    );
    assert!(doc["params"]["caps"]["cap3000"]["bps"].is_null());
    let cell = &doc["cells"][0];
    assert_eq!(cell["condition"], "cap3000", "{cell}");
    assert_eq!(
        cell["real"]["raw"]["in_place"], true,
        "ran on the cluster itself"
    );
    for side in ["real", "run", "model"] {
        assert_eq!(cell[side]["status"], "ok", "{side}: {}", cell[side]);
        let dev = &cell[side]["derived"]["device_io"];
        // Every commit writes WAL: the disk and the cgroup saw writes.
        assert!(num(dev, &["writes_per_tx"]) > 0.0, "{side}: {dev}");
        assert!(num(dev, &["reads_per_tx"]) >= 0.0, "{side}: {dev}");
        assert!(
            num(dev, &["io_serviced", "writes_per_tx"]) > 0.0,
            "{side}: {dev}"
        );
    }
    // The cap held the server's own I/Os: io_serviced a second, each
    // direction, at most 3,000 (a quarter more for blk-throttle's first
    // slice).
    let real = &cell["real"]["derived"];
    let tps = num(real, &["tps"]);
    for dir in ["reads_per_tx", "writes_per_tx"] {
        let iops = num(&real["device_io"]["io_serviced"], &[dir]) * tps;
        assert!(
            iops <= 3000.0 * 1.25,
            "{dir}: {iops:.0} IOPS under a 3,000 cap"
        );
    }
    // The capN targets: model tps at 15%, device reads and writes checked.
    let checks = &cell["checks"];
    assert!(
        (num(&checks["model_tps"], &["tolerance"]) - 0.15).abs() < 1e-9,
        "{checks}"
    );
    for key in ["run_device_writes", "model_device_writes"] {
        assert!(checks[key]["pass"].is_boolean(), "{key}: {checks}");
    }
    // --from-json prints the tables again from the JSON, running nothing.
    let (again, _) = pgbench_compare(&["--from-json", &json]);
    assert!(
        again.contains("device I/Os a transaction") && again.contains("cap3000"),
        "{again}"
    );
    let leftovers: Vec<_> = std::fs::read_dir(work.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| n != "result.json" && !n.to_string_lossy().starts_with("run-"))
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        pgbench_compare_small_run,
        pgbench_compare_reused_cluster_under_a_cap
    ])
}
