//! Integration tests: drive the real binary on small files in a temp dir.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

mod common;
use common::{skip, text, tmp};

fn pgiosim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pgiosim"))
}

fn run(args: &[&str]) -> Output {
    pgiosim().args(args).output().expect("start pgiosim")
}

fn dir_arg(d: &Path) -> String {
    d.join("data").display().to_string()
}

/// Run with JSON output and return the parsed result.
fn run_json(d: &Path, extra: &[&str]) -> Value {
    let json = d.join("result.json");
    let dir = dir_arg(d);
    let mut args = vec!["run", "--dir", &dir, "-s", "1", "-q"];
    let json_s = json.display().to_string();
    args.extend_from_slice(&["--json", &json_s]);
    args.extend_from_slice(extra);
    let o = run(&args);
    assert!(o.status.success(), "{}", text(&o));
    serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap()
}

fn f(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[p];
    }
    x.as_f64()
        .unwrap_or_else(|| panic!("{path:?} not a number: {x}"))
}

fn run_report_is_consistent() {
    let d = tmp("pgiosim-test");
    let r = run_json(d.path(), &["-T", "2", "-c", "4"]);
    assert_eq!(r["schema"], "pgiosim.result");
    assert_eq!(r["schema_version"], 3);
    assert_eq!(r["partial"], false);
    assert_eq!(r["settings"]["shared_buffers"], "128MB");
    let n = f(&r, &["summary", "transactions"]);
    let tps = f(&r, &["summary", "tps"]);
    let elapsed = f(&r, &["summary", "elapsed_s"]);
    assert!(n > 50.0, "{n} transactions");
    assert!(
        (tps * elapsed - n).abs() <= 0.01 * n,
        "tps × duration ≠ transactions"
    );
    assert!((elapsed - 2.0).abs() < 0.01);
    // The breakdown accounts for the whole latency.
    let avg_us = f(&r, &["summary", "latency_ms", "average"]) * 1e3;
    let buckets = r["breakdown"].as_array().unwrap();
    assert_eq!(buckets.len(), 9);
    let sum_us: f64 = buckets.iter().map(|b| b["mean_us"].as_f64().unwrap()).sum();
    let share: f64 = buckets.iter().map(|b| b["share"].as_f64().unwrap()).sum();
    assert!(
        (sum_us - avg_us).abs() < 0.001 * avg_us,
        "{sum_us} vs {avg_us}"
    );
    assert!((share - 1.0).abs() < 1e-6);
    // Closed loop: clients ≈ tps × latency.
    assert!((tps * avg_us / 1e6 - 4.0).abs() < 0.2);
    // I/O figures: every commit of a writing transaction waits for a flush.
    let io = &r["io"];
    assert!(f(io, &["wal_fdatasyncs"]) > 0.0);
    assert!(f(io, &["commits_per_flush"]) >= 1.0);
    assert!(f(io, &["wal_bytes_per_tx"]) > 300.0);
    assert!(
        f(io, &["data_reads"]) > 0.0,
        "O_DIRECT cold start must read"
    );
    // Per-second series covers the run.
    let ts = r["timeseries"].as_array().unwrap();
    assert_eq!(ts.len(), 2);
    let ts_tx: f64 = ts.iter().map(|s| s["tps"].as_f64().unwrap()).sum();
    assert!((ts_tx - n).abs() <= 1.0 + 0.01 * n);
    // The loop's own timer lateness is reported: every transaction has timers.
    let lag = &r["run"]["timer_lag"];
    assert!(f(lag, &["timers"]) >= n, "{lag}");
    assert!(f(lag, &["mean_us"]) >= 0.0 && f(lag, &["max_us"]) >= f(lag, &["p99_us"]));
}

fn transactions_per_client_and_reuse_of_prepared_files() {
    let d = tmp("pgiosim-test");
    let r = run_json(d.path(), &["-t", "25", "-c", "3"]);
    assert_eq!(f(&r, &["summary", "transactions"]), 75.0);
    // Second run reuses the data set.
    let dir = dir_arg(d.path());
    let o = run(&["run", "--dir", &dir, "-s", "1", "-t", "5"]);
    assert!(o.status.success());
    assert!(text(&o).contains("reused"), "{}", text(&o));
    // A different scale re-prepares pgiosim's own file.
    let o = run(&["run", "--dir", &dir, "-s", "2", "-t", "5"]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("data set prepared"), "{}", text(&o));
}

fn report_text_has_pgbench_lines_and_breakdown() {
    let d = tmp("pgiosim-test");
    let dir = dir_arg(d.path());
    let o = run(&["run", "--dir", &dir, "-s", "1", "-T", "1", "-P", "1"]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for line in [
        "transaction type: <builtin: TPC-B (sort of)>",
        "scaling factor: 1",
        "number of clients: 1",
        "number of transactions actually processed:",
        "latency average =",
        "latency stddev =",
        "tps =",
        "p99.9",
        "wal_fsync",
        "page_read",
        "commits per WAL flush",
        "full-page images per transaction",
    ] {
        assert!(out.contains(line), "missing {line:?} in\n{out}");
    }
    assert!(String::from_utf8_lossy(&o.stderr).contains("progress: 1.0 s"));
}

fn psync_fdatasyncs_match_the_real_syscalls() {
    if Command::new("strace").arg("-V").output().is_err() {
        skip("strace is not installed (.ci/run installs it)");
    }
    let d = tmp("pgiosim-test");
    let dir = dir_arg(d.path());
    let o = run(&["prepare", "--dir", &dir, "-s", "1", "-q"]);
    assert!(o.status.success(), "{}", text(&o));
    let json = d.path().join("r.json");
    let trace = d.path().join("strace.txt");
    let o = Command::new("strace")
        .args(["-f", "-c", "-e", "trace=fdatasync", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_pgiosim"))
        .args([
            "run",
            "--io-engine",
            "psync",
            "--dir",
            &dir,
            "-s",
            "1",
            "-T",
            "2",
            "-c",
            "4",
            "-q",
            "--json",
        ])
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let reported = f(&r, &["io", "wal_fdatasyncs"]) as u64;
    let summary = std::fs::read_to_string(&trace).unwrap();
    let calls: u64 = summary
        .lines()
        .find(|l| l.trim_end().ends_with("fdatasync"))
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("no fdatasync line in\n{summary}"));
    assert!(reported > 10);
    assert_eq!(
        calls, reported,
        "strace counted {calls}, pgiosim reported {reported}"
    );
}

fn checkpoint_runs_and_counts_writes() {
    // Scale 10 keeps nearly every change a first touch, so each transaction
    // logs a full-page image (~8 KB): 3,200 of them pass the 16 MB of WAL
    // that max_wal_size=32MB allows between checkpoints, however fast the disk.
    let d = tmp("pgiosim-test");
    let json = d.path().join("result.json");
    let dir = dir_arg(d.path());
    let o = run(&[
        "run",
        "--dir",
        &dir,
        "-s",
        "10",
        "-q",
        "-c",
        "4",
        "-t",
        "800",
        "--set",
        "max_wal_size=32MB",
        "--json",
        json.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert!(f(&r, &["io", "wal_bytes"]) > 17e6, "{}", r["io"]);
    assert!(
        f(&r, &["io", "checkpoints_requested"]) >= 1.0,
        "{}",
        r["io"]
    );
}

fn config_file_is_read_with_a_notice_for_unmodelled_settings() {
    let d = tmp("pgiosim-test");
    let conf = d.path().join("postgresql.conf");
    std::fs::write(
        &conf,
        "shared_buffers = '64MB'   # comment\nwork_mem = 4MB\ncommit_delay = 10\n",
    )
    .unwrap();
    let dir = dir_arg(d.path());
    let json = d.path().join("r.json");
    let o = pgiosim()
        .args(["run", "--dir", &dir, "-s", "1", "-t", "3", "--config"])
        .arg(&conf)
        .arg("--json")
        .arg(&json)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("work_mem"), "{}", text(&o));
    let r: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    assert_eq!(r["settings"]["shared_buffers"], "64MB");
    assert_eq!(r["settings"]["commit_delay"], "10");

    std::fs::write(&conf, "shared_buffers = lots\n").unwrap();
    let o = pgiosim()
        .args(["run", "--dir", &dir, "-s", "1", "-t", "3", "--config"])
        .arg(&conf)
        .output()
        .unwrap();
    // A bad configuration file is bad input: exit code 2.
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("postgresql.conf:1"), "{}", text(&o));
}

fn interrupt_prints_a_partial_report() {
    let d = tmp("pgiosim-test");
    let dir = dir_arg(d.path());
    let o = run(&["prepare", "--dir", &dir, "-s", "1", "-q"]);
    assert!(o.status.success());
    let child = pgiosim()
        .args(["run", "--dir", &dir, "-s", "1", "-T", "60", "-q"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    // SAFETY: kill(2) with a valid pid and signal number.
    unsafe {
        libc::kill(child.id() as i32, libc::SIGINT);
    }
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(130), "{}", text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("partial result"), "{out}");
    assert!(out.contains("tps ="), "{out}");
}

// ---- bad input: one test each, a clear message and the right exit code ----

fn assert_fails(args: &[&str], code: i32, needle: &str) {
    let o = run(args);
    assert_eq!(o.status.code(), Some(code), "{args:?}: {}", text(&o));
    let t = text(&o);
    assert!(t.contains(needle), "{args:?}: expected {needle:?} in {t}");
    assert!(
        t.lines()
            .any(|l| l.starts_with("Error:") || l.starts_with("error:")),
        "{t}"
    );
}

fn bad_missing_dir() {
    assert_fails(
        &["run", "--dir", "/nonexistent/pgiosim/x", "-t", "1"],
        1,
        "does not exist",
    );
}

fn bad_unwritable_dir() {
    let d = tmp("pgiosim-test");
    let locked = d.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    // As root, permissions do not stop writes; the immutable attribute does.
    let ok = Command::new("chattr")
        .arg("+i")
        .arg(&locked)
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        skip("chattr +i is not available here");
    }
    let dir = locked.display().to_string();
    let o = run(&["run", "--dir", &dir, "-s", "1", "-t", "1"]);
    let _ = Command::new("chattr").arg("-i").arg(&locked).status();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    assert!(text(&o).contains(&dir), "{}", text(&o));
    let t = text(&o).to_lowercase();
    assert!(t.contains("writ") || t.contains("not permitted"), "{t}");
}

fn bad_not_enough_space() {
    let d = tmp("pgiosim-test");
    let small = d.path().join("small");
    std::fs::create_dir(&small).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=4m", "tmpfs"])
        .arg(&small)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        skip("cannot mount a small tmpfs here (needs root)");
    }
    let dir = small.join("data").display().to_string();
    let o = run(&["run", "--dir", &dir, "-s", "1", "-t", "1"]);
    let _ = Command::new("umount").arg(&small).status();
    assert_eq!(o.status.code(), Some(1), "{}", text(&o));
    let t = text(&o);
    assert!(t.contains("needs") && t.contains("free"), "{t}");
}

fn bad_foreign_file_is_never_overwritten() {
    let d = tmp("pgiosim-test");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    let victim = data.join("pgiosim.data");
    std::fs::write(&victim, b"precious user data").unwrap();
    let dir = data.display().to_string();
    assert_fails(
        &["run", "--dir", &dir, "-s", "1", "-t", "1"],
        1,
        "not a pgiosim file",
    );
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious user data");
    // cleanup leaves it too.
    let o = run(&["cleanup", "--dir", &dir]);
    assert!(o.status.success());
    assert_eq!(std::fs::read(&victim).unwrap(), b"precious user data");
}

fn bad_block_device_is_refused() {
    let d = tmp("pgiosim-test");
    let data = d.path().join("data");
    std::fs::create_dir(&data).unwrap();
    // A block device node (loop device 200, normally absent): never written.
    let made = Command::new("mknod")
        .arg(data.join("pgiosim.data"))
        .args(["b", "7", "200"])
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        skip("mknod is not permitted here");
    }
    let dir = data.display().to_string();
    assert_fails(
        &["run", "--dir", &dir, "-s", "1", "-t", "1"],
        1,
        "not a regular file",
    );
}

/// A device name is resolved while the run is planned: a typo in
/// `--emulate` or a standby's `device=` costs no data set (scale 50 is an
/// 867 MB data file) and is refused at once.
fn bad_device_name_is_refused_before_any_file() {
    for (flag, value, needle) in [
        (
            "--emulate",
            "gp3-typo",
            "--emulate gp3-typo: no such shipped profile or file",
        ),
        (
            "--standby",
            "name=s1,device=typo",
            "device=typo: no such shipped profile or file",
        ),
    ] {
        let d = tmp("pgiosim-test");
        let dir = dir_arg(d.path());
        let start = std::time::Instant::now();
        let o = run(&["run", "--dir", &dir, "-s", "50", "-T", "1", flag, value]);
        let took = start.elapsed();
        assert_eq!(o.status.code(), Some(2), "{flag} {value}: {}", text(&o));
        assert!(text(&o).contains(needle), "{flag} {value}: {}", text(&o));
        assert!(
            took < Duration::from_secs(5),
            "{flag} {value}: refused after {took:?}"
        );
        assert!(
            !Path::new(&dir).join("pgiosim.data").exists(),
            "{flag} {value}: a data file was written"
        );
    }
}

fn bad_unknown_setting_suggests() {
    assert_fails(
        &["run", "--set", "shared_buffer=1GB", "-t", "1"],
        2,
        "shared_buffers",
    );
}

fn bad_unit() {
    assert_fails(
        &["run", "--set", "shared_buffers=16XB", "-t", "1"],
        2,
        "shared_buffers",
    );
}

fn bad_out_of_range() {
    assert_fails(
        &["run", "--set", "checkpoint_completion_target=2", "-t", "1"],
        2,
        "checkpoint_completion_target",
    );
}

fn bad_zero_clients() {
    assert_fails(&["run", "-c", "0", "-t", "1"], 2, "clients");
}

fn bad_duration() {
    assert_fails(&["run", "-T", "0"], 2, "-T/--time");
    assert_fails(&["run", "--time=-5"], 2, "-T/--time");
}

fn bad_shared_buffers_too_small_for_clients() {
    assert_fails(
        &["run", "-c", "200", "--set", "shared_buffers=1MB", "-t", "1"],
        2,
        "too small for 200 clients",
    );
}

fn bad_os_cache_size() {
    assert_fails(&["run", "--os-cache", "lots", "-t", "1"], 2, "--os-cache");
}

fn bad_o_direct_unsupported_suggests_buffered() {
    // ramfs has no O_DIRECT (tmpfs gained it in Linux 6.6).
    let d = tmp("pgiosim-test");
    let ram = d.path().join("ram");
    std::fs::create_dir(&ram).unwrap();
    let mounted = Command::new("mount")
        .args(["-t", "ramfs", "ramfs"])
        .arg(&ram)
        .status()
        .is_ok_and(|s| s.success());
    if !mounted {
        skip("cannot mount ramfs here (needs root)");
    }
    let dir = ram.join("data").display().to_string();
    let refused = run(&["run", "--dir", &dir, "-s", "1", "-t", "1"]);
    // And --buffered works there.
    let buffered = run(&[
        "run",
        "--dir",
        &dir,
        "-s",
        "1",
        "-t",
        "3",
        "--buffered",
        "-q",
    ]);
    let _ = Command::new("umount").arg(&ram).status();
    assert_eq!(refused.status.code(), Some(1), "{}", text(&refused));
    assert!(text(&refused).contains("--buffered"), "{}", text(&refused));
    assert!(buffered.status.success(), "{}", text(&buffered));
}

fn cleanup_removes_only_its_files() {
    let d = tmp("pgiosim-test");
    let dir = dir_arg(d.path());
    assert!(
        run(&["prepare", "--dir", &dir, "-s", "1", "-q"])
            .status
            .success()
    );
    std::fs::write(d.path().join("data").join("notes.txt"), "mine").unwrap();
    let o = run(&["cleanup", "--dir", &dir]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("pgiosim.data"));
    assert!(!d.path().join("data/pgiosim.data").exists());
    assert!(d.path().join("data/notes.txt").exists());
}

fn run_with_standbys_writes_their_wal_to_real_files_and_cleanup_removes_them() {
    let d = tmp("pgiosim-test");
    let sdir = d.path().join("standbys");
    std::fs::create_dir(&sdir).unwrap();
    let sdir_s = sdir.display().to_string();
    let r = run_json(
        d.path(),
        &[
            "-T",
            "2",
            "-c",
            "2",
            "--standby",
            "name=s1,rtt=2ms",
            "--standby",
            "name=s2,rtt=0",
            "--standby-dir",
            &sdir_s,
            "--set",
            "synchronous_standby_names=FIRST 1 (s1, s2)",
        ],
    );
    // FIRST 1 (s1, s2): every commit waits for s1, 2 ms away (a timer).
    let b = r["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bucket"] == "sync_rep")
        .unwrap();
    assert!(f(b, &["mean_us"]) > 2000.0, "{b}");
    assert!(f(b, &["p99_us"]) >= f(b, &["mean_us"]), "{b}");
    assert_eq!(r["replication"][0]["sync_state"], "sync");
    assert_eq!(r["replication"][1]["sync_state"], "potential");
    for s in ["s1", "s2"] {
        let wal = sdir.join(format!("standby-{s}/pg_wal/pgiosim.wal.000"));
        assert!(wal.exists(), "{}", wal.display());
    }
    assert!(f(&r["replication"][1], &["wal_fdatasyncs"]) > 10.0);
    // device= belongs to model.
    let dir = dir_arg(d.path());
    let o = run(&[
        "run",
        "--dir",
        &dir,
        "-s",
        "1",
        "-T",
        "1",
        "-q",
        "--standby",
        "name=s1,device=nvme",
    ]);
    assert!(!o.status.success());
    assert!(text(&o).contains("device= is for `model`"), "{}", text(&o));
    // Standbys in their default place (--dir) are cleaned up with the data.
    let _ = run_json(d.path(), &["-T", "1", "--standby", "name=s9"]);
    assert!(d.path().join("data/standby-s9/pg_wal").exists());
    let o = run(&["cleanup", "--dir", &dir]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(!d.path().join("data/standby-s9").exists(), "{}", text(&o));
    // Standbys in a --standby-dir outside --dir: cleanup takes it too,
    // removes their files and leaves the directory it did not make.
    let o = run(&["cleanup", "--dir", &dir, "--standby-dir", &sdir_s]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("standby-s1/pg_wal/pgiosim.wal.000"),
        "{}",
        text(&o)
    );
    assert!(!sdir.join("standby-s1").exists(), "{}", text(&o));
    assert!(sdir.exists());
}

/// docs/settings.md lists exactly the settings pgiosim accepts, each in a
/// table row of its own, so the guide cannot fall behind the settings table.
fn settings_guide_lists_every_setting_and_no_other() {
    let page =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/settings.md"))
            .expect("read docs/settings.md");
    let mut listed: Vec<&str> = page
        .lines()
        .filter_map(|l| l.strip_prefix("| `"))
        .filter_map(|l| l.split_once("` |").map(|(name, _)| name))
        .collect();
    listed.sort_unstable();
    let mut accepted: Vec<&str> = pgiosim::settings::Settings::NAMES.to_vec();
    accepted.sort_unstable();
    assert_eq!(listed, accepted, "docs/settings.md against Settings::NAMES");
}

/// The README stays a newcomer's page: at most 300 lines, every command of
/// `--help` in its table.
fn readme_is_short_and_names_every_command() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).expect("read README.md");
    let lines = readme.lines().count();
    assert!(lines <= 300, "README.md has {lines} lines, more than 300");
    let help = String::from_utf8_lossy(&run(&["--help"]).stdout).into_owned();
    let commands: Vec<&str> = help
        .lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        // A command's line; a wrapped description is indented further.
        .filter(|l| !l[2..].starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .collect();
    assert!(commands.len() > 10, "commands from --help: {commands:?}");
    for c in commands {
        assert!(
            readme.contains(&format!("`pgiosim {c}")),
            "README.md's command table lacks `pgiosim {c}`"
        );
    }
}

/// pgbench's published `-c N -j M` with the client on another host: `-j`
/// beside `--client-rtt` is accepted as the client host's threads, which
/// leave the modelled server as it is (the same run as without `-j`) and
/// are reported as pgbench reports them; more threads than clients is
/// refused, as pgbench refuses it.
fn jobs_with_client_rtt_are_the_client_hosts_threads() {
    let model = |extra: &[&str]| -> Value {
        let mut args = vec![
            "model",
            "--device",
            "nvme",
            "-c",
            "8",
            "--cpus",
            "2",
            "-T",
            "2",
            "--seed",
            "3",
            "--client-rtt",
            "150us",
            "-q",
            "--json",
            "-",
        ];
        args.extend_from_slice(extra);
        let o = run(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        serde_json::from_slice(&o.stdout).expect("--json - is the JSON alone")
    };
    let without = model(&[]);
    let with = model(&["-j", "4"]);
    assert_eq!(with["run"]["jobs"], 4, "{}", with["run"]);
    assert_eq!(without["run"]["jobs"], 0);
    assert_eq!(with["run"]["client_rtt_us"], 150.0);
    assert_eq!(with["summary"], without["summary"]);
    assert_eq!(with["breakdown"], without["breakdown"]);
    // On the database host (no --client-rtt) -j's threads take the
    // server's cores: another run.
    let o = run(&[
        "model", "--device", "nvme", "-c", "8", "--cpus", "2", "-T", "2", "--seed", "3", "-q",
        "--json", "-", "-j", "4",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let local: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_ne!(local["summary"], with["summary"]);
    // The text report says the threads, as pgbench does.
    let o = run(&[
        "model",
        "--device",
        "nvme",
        "-c",
        "8",
        "-j",
        "4",
        "--client-rtt",
        "150us",
        "-T",
        "1",
        "--seed",
        "3",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("number of threads: 4"), "{}", text(&o));
    let o = run(&[
        "model",
        "--device",
        "nvme",
        "-c",
        "8",
        "-j",
        "16",
        "--client-rtt",
        "150us",
        "-T",
        "1",
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("more threads than the 8 clients"),
        "{}",
        text(&o)
    );
}

/// `workload fit-cpu` turns pgbench-compare's measurements into a workload
/// file `model` runs, with every fitted figure sourced; bad input exits 2.
fn workload_fit_cpu_writes_a_workload_model_runs() {
    let d = tmp("fit-cpu");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/cpu/pgbench-compare-measurements.json");
    let out = d.path().join("tpcb-like-this-host.json");
    let o = run(&[
        "workload",
        "fit-cpu",
        fixture.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let fit: Value = serde_json::from_slice(&o.stdout).expect("--json - is the JSON alone");
    assert!(fit["per_io_fitted"].as_bool().unwrap());
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let per_stmt = spec["cpu_us_per_statement"].as_f64().unwrap();
    assert!((per_stmt - fit["cpu_us_per_statement"].as_f64().unwrap()).abs() < 0.051);
    assert!(
        spec["sources"]["cpu_us_per_statement"]
            .as_str()
            .unwrap()
            .contains("fit-cpu")
    );
    let m = run(&[
        "model",
        "--workload",
        out.to_str().unwrap(),
        "-T",
        "1",
        "-q",
    ]);
    assert!(m.status.success(), "{}", text(&m));

    let bad = d.path().join("bad.json");
    std::fs::write(&bad, r#"{"runs": []}"#).unwrap();
    let o = run(&[
        "workload",
        "fit-cpu",
        bad.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("no runs"), "{}", text(&o));
}

/// `workload from-server-cpu` (the migration workflow) splits a source
/// server's CPU by mechanism and writes a workload `model` runs; the file
/// reproduces the measured total; bad input exits 2.
fn workload_from_server_cpu_writes_a_workload_model_runs() {
    let d = tmp("server-cpu");
    let out = d.path().join("from-source.json");
    let o = run(&[
        "workload",
        "from-server-cpu",
        "--workload",
        "large-updates",
        "--cpu-utilization",
        "6.5",
        "--vcpus",
        "16",
        "--tps",
        "1734",
        "--instance",
        "m6id.4xlarge",
        "--reads-per-tx",
        "1.4",
        "--pages-written-per-tx",
        "0.05",
        "--wal-bytes-per-tx",
        "16000",
        "-o",
        out.to_str().unwrap(),
        "--json",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let j: Value = serde_json::from_slice(&o.stdout).expect("--json - is the JSON alone");
    // 6.5% of 16 vCPUs at 1,734 tps, at the Xeon 8375C's 0.84.
    let total = 0.065 * 16.0 / 1734.0 * 1e6 * 0.84;
    let split = &j["split"];
    assert!(
        (split["total_us"].as_f64().unwrap() - total).abs() < 0.5,
        "{j}"
    );
    let parts = ["reads_us", "writes_us", "statements_us"]
        .iter()
        .map(|k| split[k].as_f64().unwrap())
        .sum::<f64>();
    assert!((parts - total).abs() < 0.5, "{j}");
    let spec: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    assert!(
        spec["sources"]["cpu_us_per_statement"]
            .as_str()
            .unwrap()
            .contains("6.5% of 16 vCPUs")
    );
    let m = run(&[
        "model",
        "--workload",
        out.to_str().unwrap(),
        "-T",
        "1",
        "-q",
    ]);
    assert!(m.status.success(), "{}", text(&m));

    // CPU below what its I/O alone costs: refused with the reason.
    let o = run(&[
        "workload",
        "from-server-cpu",
        "--workload",
        "large-updates",
        "--cpu-us-per-tx",
        "50us",
        "--reads-per-tx",
        "1.4",
        "--pages-written-per-tx",
        "1",
        "--wal-bytes-per-tx",
        "16000",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("the I/O alone"), "{}", text(&o));
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        run_report_is_consistent,
        transactions_per_client_and_reuse_of_prepared_files,
        report_text_has_pgbench_lines_and_breakdown,
        psync_fdatasyncs_match_the_real_syscalls,
        checkpoint_runs_and_counts_writes,
        config_file_is_read_with_a_notice_for_unmodelled_settings,
        interrupt_prints_a_partial_report,
        bad_missing_dir,
        bad_unwritable_dir,
        bad_not_enough_space,
        bad_foreign_file_is_never_overwritten,
        bad_block_device_is_refused,
        bad_device_name_is_refused_before_any_file,
        bad_unknown_setting_suggests,
        bad_unit,
        bad_out_of_range,
        bad_zero_clients,
        bad_duration,
        bad_shared_buffers_too_small_for_clients,
        bad_os_cache_size,
        bad_o_direct_unsupported_suggests_buffered,
        cleanup_removes_only_its_files,
        run_with_standbys_writes_their_wal_to_real_files_and_cleanup_removes_them,
        settings_guide_lists_every_setting_and_no_other,
        readme_is_short_and_names_every_command,
        workload_fit_cpu_writes_a_workload_model_runs,
        workload_from_server_cpu_writes_a_workload_model_runs,
        jobs_with_client_rtt_are_the_client_hosts_threads,
    ])
}
