//! `pgiosim catchup` driven as a user would: on a model, on a small file in
//! a temp dir, and with bad input.

mod common;

use common::{pgiosim, text, tmp};
use serde_json::Value;

fn num(v: &Value, key: &str) -> f64 {
    v[key]
        .as_f64()
        .unwrap_or_else(|| panic!("{key} is not a number in {v}"))
}

/// A 64 MB catch-up at scale 2 on the gp3 model, seed 3, as its JSON.
fn model_gp3_64mb() -> Value {
    let o = pgiosim(&[
        "catchup",
        "--backlog",
        "64MB",
        "-s",
        "2",
        "--device",
        "gp3",
        "--seed",
        "3",
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_slice(&o.stdout).expect("--json - is the JSON alone")
}

fn model_replays_the_backlog_and_accounts_for_its_time() {
    let r = model_gp3_64mb();
    assert_eq!(r["schema"], "pgiosim.catchup");
    assert_eq!(r["mode"], "model");
    assert_eq!(num(&r, "backlog_bytes"), 64.0 * 1024.0 * 1024.0);
    assert_eq!(num(&r, "wal_read_bytes"), num(&r, "backlog_bytes"));
    assert_eq!(num(&r, "replayed_bytes"), num(&r, "backlog_bytes"));
    let seconds = num(&r, "seconds");
    assert!(seconds > 0.0);
    // The startup process's time, bucket by bucket, is the catch-up's.
    let b = &r["breakdown"];
    let sum: f64 = ["cpu", "cpu_queue", "page_read", "wal_read", "buffer_wait"]
        .iter()
        .map(|k| num(b, k))
        .sum();
    assert!((sum - seconds).abs() < 0.01 * seconds, "{sum} vs {seconds}");
    assert!(num(&r, "records") > num(&r, "transactions") * 3.0, "{r}");
    assert_eq!(r["settings"]["recovery_prefetch"], "try");
    assert_eq!(r["settings"]["maintenance_io_concurrency"], "10");
    // The same seed, the same catch-up.
    assert_eq!(r["seconds"], model_gp3_64mb()["seconds"]);
}

fn full_page_writes_off_means_reads_and_prefetch_shortens_them() {
    let run = |sets: &[&str]| -> Value {
        let mut args = vec![
            "catchup",
            "--backlog",
            "32MB",
            "-s",
            "20",
            "--device",
            "gp3",
            "--seed",
            "1",
            "--set",
            "shared_buffers=16MB",
            "--os-cache",
            "64MB",
            "--json",
            "-",
            "-q",
        ];
        for s in sets {
            args.extend(["--set", s]);
        }
        let o = pgiosim(&args);
        assert!(o.status.success(), "{}", text(&o));
        serde_json::from_slice(&o.stdout).unwrap()
    };
    let on = run(&["full_page_writes=off"]);
    let off = run(&["full_page_writes=off", "recovery_prefetch=off"]);
    assert!(num(&off, "pages_read") > 1000.0, "{off}");
    assert_eq!(num(&off, "pages_prefetched"), 0.0);
    assert!(num(&on, "pages_prefetched") > 1000.0, "{on}");
    assert!(
        num(&on, "seconds") < num(&off, "seconds"),
        "prefetch {} s, none {} s",
        num(&on, "seconds"),
        num(&off, "seconds")
    );
}

fn on_the_disk_it_reads_the_wal_and_leaves_its_files_for_cleanup() {
    let d = tmp("catchup");
    let dir = d.path().join("data");
    let dir_s = dir.display().to_string();
    let o = pgiosim(&[
        "catchup",
        "--backlog",
        "8MB",
        "-s",
        "1",
        "--dir",
        &dir_s,
        "--seed",
        "1",
        "--json",
        "-",
        "-q",
    ]);
    if text(&o).contains("O_DIRECT") {
        common::skip("the temp dir's filesystem has no O_DIRECT");
    }
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["mode"], "run");
    assert_eq!(num(&r, "wal_read_bytes"), 8.0 * 1024.0 * 1024.0);
    assert!(num(&r, "wal_reads") >= 64.0, "128 kB windows: {r}");
    let c = pgiosim(&["cleanup", "--dir", &dir_s]);
    assert!(c.status.success(), "{}", text(&c));
    assert!(!dir.exists());
}

fn bad_input_names_the_flag_or_setting() {
    for (args, want) in [
        (vec!["--backlog", "5parsecs"], "--backlog 5parsecs"),
        (
            vec!["--backlog", "1GB", "--set", "recovery_prefetch=maybe"],
            "recovery_prefetch",
        ),
        (
            vec![
                "--backlog",
                "1GB",
                "--set",
                "maintenance_io_concurrency=5000",
            ],
            "maintenance_io_concurrency",
        ),
        (
            vec!["--backlog", "1GB", "--read-ahead", "1MBB"],
            "--read-ahead",
        ),
        (vec!["--backlog", "1GB", "-S"], "write no WAL"),
    ] {
        let mut a = vec!["catchup", "--device", "nvme"];
        a.extend(args);
        let o = pgiosim(&a);
        assert_eq!(o.status.code(), Some(2), "{a:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{a:?}: {}", text(&o));
    }
}

/// Interrupted, the headline says how much of the backlog was replayed
/// in the time it gives, not that the whole backlog took that long.
fn an_interrupted_catchup_says_how_much_it_replayed() {
    let child = std::process::Command::new(env!("CARGO_BIN_EXE_pgiosim"))
        .args([
            "catchup",
            "--backlog",
            "100GB",
            "-s",
            "2",
            "--device",
            "nvme",
        ])
        .args(["--seed", "1", "--json", "-"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("start pgiosim");
    std::thread::sleep(std::time::Duration::from_millis(500));
    // SAFETY: a signal to the child we started and have not yet reaped.
    assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
    let o = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("catch-up interrupted after") && err.contains("of the 100GB backlog"),
        "{err}"
    );
    let r: Value = serde_json::from_slice(&o.stdout).expect("the partial JSON");
    assert_eq!(r["partial"], true);
    assert!(num(&r, "replayed_bytes") < num(&r, "backlog_bytes"), "{r}");
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        model_replays_the_backlog_and_accounts_for_its_time,
        full_page_writes_off_means_reads_and_prefetch_shortens_them,
        on_the_disk_it_reads_the_wal_and_leaves_its_files_for_cleanup,
        bad_input_names_the_flag_or_setting,
        an_interrupted_catchup_says_how_much_it_replayed,
    ])
}
