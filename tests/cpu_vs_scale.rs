//! `scripts/cpu-vs-scale`: its usage errors, and `--from-json` on the saved
//! run of docs/cpu-model.md's last section (tests/fixtures/cpu-vs-scale/),
//! whose table and derived figures it must print again. The measuring
//! itself needs root and PostgreSQL 15 and is not run here.

use std::path::Path;
use std::process::{Command, Output};

fn cpu_vs_scale(args: &[&str]) -> Option<Output> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if Command::new("python3").arg("--version").output().is_err() {
        eprintln!("skipped: python3 is not installed");
        return None;
    }
    Some(
        Command::new("python3")
            .arg(root.join("scripts/cpu-vs-scale"))
            .args(args)
            .output()
            .unwrap(),
    )
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
        let Some(o) = cpu_vs_scale(args) else { return };
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(!o.stderr.is_empty(), "{args:?}");
    }
}

#[test]
fn a_missing_json_file_exits_1() {
    let Some(o) = cpu_vs_scale(&["--from-json", "/nonexistent/pgiosim-no-such.json"]) else {
        return;
    };
    assert_eq!(o.status.code(), Some(1));
}
