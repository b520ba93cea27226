//! `scripts/fresh-pages`: its usage errors, and a small real run
//! (PostgreSQL 15 at scale 1): the share of pgbench_accounts' updates that
//! are not HOT falls as the pages get their first update, as the model's
//! exp(−updates/pages) says. Needs root and PostgreSQL: otherwise it shows
//! as ignored with the reason, or fails under `CI=true`.

use std::process::Output;

use serde_json::Value;

mod common;
use common::skip;

/// Exit code of the script when this machine cannot run it.
const EXIT_CANNOT_RUN_HERE: i32 = 3;

fn fresh_pages(args: &[&str]) -> Output {
    common::script("fresh-pages", args)
}

fn usage_errors_exit_2() {
    for args in [
        &["--scale", "0"][..],
        &["--duration", "10", "--interval", "6"],
        &["--clients", "x"],
    ] {
        let o = fresh_pages(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!o.stderr.is_empty(), "{args:?}");
    }
}

fn a_small_run_sees_the_moved_rows_thin_out_as_predicted() {
    common::need_root_and_postgres("fresh-pages needs root (a system user)");
    let work = common::tmp("fresh-pages-test");
    let json = work.path().join("out.json");
    let o = fresh_pages(&[
        "--scale",
        "1",
        "--clients",
        "2",
        "--duration",
        "8",
        "--interval",
        "2",
        "--workdir",
        work.path().to_str().unwrap(),
        "--json",
        json.to_str().unwrap(),
    ]);
    let stderr = String::from_utf8_lossy(&o.stderr);
    if o.status.code() == Some(EXIT_CANNOT_RUN_HERE) {
        skip(stderr.lines().last().unwrap_or("cannot run here"));
    }
    assert!(o.status.success(), "{stderr}");
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(doc["schema"], "pgiosim.fresh-pages");
    let rows = doc["rows"].as_array().unwrap();
    assert!(rows.len() >= 2, "{doc}");
    let share = |r: &Value| r["not_hot_share"].as_f64().unwrap();
    // Moved rows thin out, and each interval's share is the prediction's
    // within 0.15 (1,640 pages: a few hundred updates an interval).
    assert!(share(&rows[rows.len() - 1]) < share(&rows[0]), "{doc}");
    for r in rows {
        let predicted = r["predicted_moved_share"].as_f64().unwrap();
        assert!((share(r) - predicted).abs() <= 0.15, "{r}");
    }
    // The cluster's directory is removed.
    let left = common::left_behind(work.path(), &["out.json"]);
    assert!(left.is_empty(), "left behind: {left:?}");
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        usage_errors_exit_2,
        a_small_run_sees_the_moved_rows_thin_out_as_predicted
    ])
}
