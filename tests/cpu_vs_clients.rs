//! `scripts/cpu-vs-clients`: its usage errors; `--from-json` on the saved
//! measurements of docs/cpu-model.md ("CPU against the clients",
//! tests/fixtures/cpu-vs-clients/), whose tables it must print again; and a
//! tiny real run (scale 1, 2 active clients, one point with idle
//! connections, each over the socket and over TLS, 2 s windows), which
//! needs root, PostgreSQL and cgroup v1's
//! cpuacct: otherwise it shows as ignored with the reason, or fails under
//! `CI=true`.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

mod common;
use common::skip;

/// Exit code of the script when this machine cannot run it.
const EXIT_CANNOT_RUN_HERE: i32 = 3;

fn cpu_vs_clients(args: &[&str]) -> Output {
    common::script("cpu-vs-clients", args)
}

fn usage_errors_exit_2() {
    for args in [
        &["--clients", "x"][..],
        &["--clients", "0"],
        &["--idle", "-1"],
        &["--scale", "10", "--branches", "5"],
        &["--duration", "1"],
        &["--shared-buffers", "lots"],
        &["--set", "nonsense"],
        &["--clients", "2000"],
        &["--connections", "ssh"],
    ] {
        let o = cpu_vs_clients(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!o.stderr.is_empty(), "{args:?}");
    }
}

fn a_missing_json_file_exits_1() {
    let o = cpu_vs_clients(&["--from-json", "/nonexistent/pgiosim-no-such.json"]);
    assert_eq!(o.status.code(), Some(1));
}

fn the_saved_runs_give_the_documented_tables() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/cpu-vs-clients");
    // docs/cpu-model.md, "CPU against the clients": rows of both tables.
    for (file, rows) in [
        ("clients-2026-12-07.json", TWO_CPUS),
        ("one-cpu-2026-12-07.json", ONE_CPU),
        ("tls-2026-12-07.json", TLS),
    ] {
        let json = dir.join(file);
        let o = cpu_vs_clients(&["--from-json", json.to_str().unwrap()]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let out = String::from_utf8_lossy(&o.stdout);
        for want in rows {
            assert!(out.contains(want), "{file}: no {want:?} in\n{out}");
        }
    }
}

/// Rows of docs/cpu-model.md's tables that the saved runs print again.
const TWO_CPUS: &[&str] = &[
    "| 8 | 0 | 2,457 | 302 (363, 331, 307, 293, 264, 253) | 111 (141, 147, 106, 96, 86, 89) | 413 | 1.00 |",
    "| 256 | 0 | 2,063 | 514 (560, 481, 502) | 86 (90, 82, 86) | 600 | 1.45 |",
    "| 8 | 248 | 2,590 | 268 (310, 251, 243) | 101 (128, 89, 87) | 369 | 0.89 |",
    "| 397 | 0.96 | 295 |",
];
const ONE_CPU: &[&str] = &[
    "| 8 | 0 | 2,602 | 277 (273, 280) | 62 (63, 61) | 339 | 1.00 |",
    "| 64 | 0 | 1,703 | 490 (468, 511) | 73 (70, 76) | 562 | 1.66 |",
    "| 256 | 0 | 1,648 | 516 (517, 514) | 79 (80, 78) | 595 | 1.76 |",
];

/// docs/cpu-model.md, "What TLS costs": the rows of the socket, TCP and TLS.
const TLS: &[&str] = &[
    "| 8 | 0 | tcp | 3,209 | 290 (294, 268, 308) | 112 (109, 115, 111) |",
    "| 8 | 0 | tls | 2,517 | 370 (388, 374, 348) | 163 (166, 167, 155) |",
    "| 32 | 0 | tcp | 3,251 | 373 (397, 311, 411) | 116 (119, 107, 122) |",
    "| 32 | 0 | tls | 2,556 | 462 (493, 432, 462) | 156 (164, 150, 155) |",
];

fn a_tiny_run_measures_every_point() {
    common::need_root_and_postgres("cpu-vs-clients needs root (cgroups, a system user)");
    let work = common::tmp("cpu-vs-clients-test");
    let json = work.path().join("out.json");
    let o = cpu_vs_clients(&[
        "--scale",
        "1",
        "--branches",
        "4",
        "--clients",
        "2",
        "--idle",
        "6",
        "--idle-active",
        "2",
        "--duration",
        "2",
        "--warmup",
        "1",
        "--runs",
        "1",
        "--shared-buffers",
        "64MB",
        "--workdir",
        work.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
        "--connections",
        "unix,tls",
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(EXIT_CANNOT_RUN_HERE) {
        skip(stderr.lines().last().unwrap_or("cannot run here"));
    }
    assert!(o.status.success(), "{stderr}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "pgiosim.cpu-vs-clients");
    let runs = doc["real"]["runs"].as_array().unwrap();
    let points: Vec<(u64, u64, &str)> = runs
        .iter()
        .map(|r| {
            let conn = r["connection"].as_str().unwrap();
            (
                r["active"].as_u64().unwrap(),
                r["idle"].as_u64().unwrap(),
                conn,
            )
        })
        .collect();
    assert_eq!(
        points,
        [(2, 0, "unix"), (2, 0, "tls"), (2, 6, "unix"), (2, 6, "tls")]
    );
    for r in runs {
        // The TLS points' two clients encrypt (pg_stat_ssl); over the socket
        // nothing does.
        let encrypted = r["encrypted_backends"][0].as_u64().unwrap();
        match r["connection"].as_str().unwrap() {
            "tls" => assert!(encrypted >= 2, "{r}"),
            _ => assert_eq!(encrypted, 0, "{r}"),
        }
        let tx = r["transactions"].as_f64().unwrap();
        let server = r["server_cpu_us_per_tx"].as_f64().unwrap();
        let client = r["client_cpu_us_per_tx"].as_f64().unwrap();
        // A transaction of 7 statements costs tens of µs at least, and far
        // less than the window's whole CPU.
        assert!(tx > 0.0 && server > 10.0 && client > 1.0, "{r}");
        assert!(server * tx < 2.0 * 1e6 * 64.0, "{r}");
    }
    // The model ran at the same point, on this host's CPU.
    let model = &doc["model"][0];
    assert_eq!(model["active"], 2);
    assert!(model["cpu_us_per_tx"].as_f64().unwrap() > 10.0, "{model}");
    // Nothing is left behind: the cluster's directory is removed.
    let left = common::left_behind(work.path(), &["out.json"]);
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        usage_errors_exit_2,
        a_missing_json_file_exits_1,
        the_saved_runs_give_the_documented_tables,
        a_tiny_run_measures_every_point
    ])
}
