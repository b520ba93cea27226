//! Hostile and mistaken input, signals, full disks, a second pgiosim on the
//! same files: each gets a clear message, the exit code of the one rule
//! (2 bad input, 1 disk or server failure, 130 interrupted), and leaves no
//! file a later run would trust.

use std::io::{BufRead, BufReader};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::Path;
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::{pgiosim, text, tmp};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pgiosim"))
}

fn code(o: &Output) -> i32 {
    o.status.code().unwrap_or(-1)
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

fn signal(child: &Child, sig: libc::c_int) {
    // SAFETY: kill(2) on the pid of a child this test started and has not reaped.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, sig) }, 0);
}

/// Waits until `path` holds more than `bytes`, or fails after 60 s.
fn wait_for_size(path: &Path, bytes: u64) {
    let start = Instant::now();
    while std::fs::metadata(path).map_or(0, |m| m.len()) <= bytes {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "{} never grew past {bytes} bytes",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Sends `sig` once the data file is being written; returns the output and
/// how long the process took to exit after the signal.
fn interrupt_prepare(args: &[&str], data: &Path, sig: libc::c_int) -> (Output, Duration) {
    let child = bin()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait_for_size(data, 32 << 20);
    signal(&child, sig);
    let sent = Instant::now();
    let out = child.wait_with_output().unwrap();
    (out, sent.elapsed())
}

// --- 1: signals during prepare ------------------------------------------------

#[test]
fn sigint_during_prepare_stops_removes_the_partial_file_and_exits_130() {
    let d = tmp("pgiosim-harden");
    let dir = d.path().join("data");
    let data = dir.join("pgiosim.data");
    // Scale 300 is a 4.5 GB file: far more than is written before the signal.
    let (out, took) = interrupt_prepare(
        &["prepare", "--dir", &s(&dir), "-s", "300", "-q"],
        &data,
        libc::SIGINT,
    );
    assert_eq!(code(&out), 130, "{}", text(&out));
    assert!(
        took < Duration::from_secs(5),
        "took {took:?} to stop after SIGINT"
    );
    assert!(text(&out).contains("interrupted"), "{}", text(&out));
    assert!(
        !data.exists(),
        "the partial data file is still there: {}",
        text(&out)
    );
    eprintln!("prepare stopped {took:?} after SIGINT");
}

#[test]
fn sigterm_during_runs_prepare_exits_130_without_a_report() {
    let d = tmp("pgiosim-harden");
    let dir = d.path().join("data");
    let data = dir.join("pgiosim.data");
    let (out, took) = interrupt_prepare(
        &["run", "--dir", &s(&dir), "-s", "300", "-T", "1", "-q"],
        &data,
        libc::SIGTERM,
    );
    assert_eq!(code(&out), 130, "{}", text(&out));
    assert!(took < Duration::from_secs(5), "took {took:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        !stdout.contains("tps"),
        "a report of a run that never started: {stdout}"
    );
    assert!(!data.exists());
}

// --- 11: the disk fills during prepare ------------------------------------------

#[test]
fn a_write_failure_during_prepare_removes_the_partial_file() {
    let d = tmp("pgiosim-harden");
    let dir = d.path().join("data");
    let mut cmd = bin();
    cmd.args(["prepare", "--dir", &s(&dir), "-s", "1", "-q"]);
    // A file-size limit makes the data file's write fail part way (EFBIG),
    // as a full disk does (ENOSPC), after the free-space check passed.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let lim = libc::rlimit {
                rlim_cur: 4 << 20,
                rlim_max: 4 << 20,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &lim) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let out = cmd.output().unwrap();
    let t = text(&out);
    assert_eq!(code(&out), 1, "{t}");
    assert!(t.contains("File too large"), "{t}");
    assert!(t.contains("removed the partial"), "{t}");
    assert!(!dir.join("pgiosim.data").exists(), "{t}");
}

#[test]
fn prepare_under_ulimit_f_removes_the_partial_file_and_says_so() {
    // The shell's limit, with SIGXFSZ at its default (it kills the process):
    // pgiosim ignores it, so the write fails with EFBIG instead.
    let d = tmp("pgiosim-harden");
    let dir = d.path().join("data");
    let script = format!(
        "ulimit -f 4096 && exec \"$0\" prepare --dir '{}' -s 1 -q",
        s(&dir)
    );
    let out = Command::new("sh")
        .args(["-c", &script, env!("CARGO_BIN_EXE_pgiosim")])
        .output()
        .unwrap();
    let t = text(&out);
    assert_eq!(out.status.signal(), None, "killed by a signal: {t}");
    assert_eq!(code(&out), 1, "{t}");
    assert!(t.contains("File too large"), "{t}");
    assert!(t.contains("removed the partial"), "{t}");
    assert_eq!(t.trim_end().lines().count(), 1, "{t}");
    assert!(!dir.join("pgiosim.data").exists(), "{t}");
}

/// Waits for `child` and returns its exit code and peak resident memory
/// in kB (its own, whatever other tests run meanwhile).
fn wait_with_peak_rss(child: &Child) -> (i32, i64) {
    let mut status = 0;
    // SAFETY: an all-zero rusage is valid; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: wait4 on the pid of a child this test started and has not reaped.
    let pid = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as libc::pid_t);
    (libc::WEXITSTATUS(status), usage.ru_maxrss)
}

#[test]
fn a_model_run_of_its_longest_duration_stays_small_and_stops_at_sigterm() {
    // The longest -T model takes (7d) with a transaction every 10^6 s: the
    // per-second series merges its points as it goes (at -T 2147483647 it
    // once grew to 14.4 GB in a minute), and the run ends, idle, in about
    // a second; 10 s is the bound for a machine under load.
    let start = Instant::now();
    // Reaped by wait4, which also gives its peak memory.
    #[allow(clippy::zombie_processes)]
    let child = bin()
        // Seeded: at -R 0.000001 a week holds 0.6 transactions on average,
        // and seed 1 draws none.
        .args([
            "model", "-T", "7d", "-s", "1", "-R", "0.000001", "-q", "--seed", "1",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let (rc, peak_kb) = wait_with_peak_rss(&child);
    let took = start.elapsed();
    assert_eq!(rc, 1, "no transaction is due in 7d at -R 0.000001");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert!(peak_kb < 200 << 10, "{peak_kb} kB resident at its peak");
    // A busy one of that length takes minutes; SIGTERM ends it at once.
    let child = bin()
        .args(["model", "-T", "7d", "-s", "1"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_secs(2));
    signal(&child, libc::SIGTERM);
    let sent = Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert_eq!(code(&out), 130, "{}", text(&out));
    assert!(took < Duration::from_secs(1), "took {took:?} after SIGTERM");
}

// --- 13: one pgiosim per data set ---------------------------------------------------

/// `pgiosim run ARGS` in the background, once its "data set prepared" line
/// says the run has started; the rest of its stderr, kept open so that it
/// can go on writing.
fn started_run(args: &[&str]) -> (Child, std::io::Lines<BufReader<std::process::ChildStderr>>) {
    let mut child = bin()
        .arg("run")
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    assert!(
        lines
            .by_ref()
            .map_while(Result::ok)
            .any(|l| l.contains("data set")),
        "the run never started: {args:?}"
    );
    (child, lines)
}

#[test]
fn a_second_pgiosim_on_the_same_data_set_is_refused() {
    let d = tmp("pgiosim-harden");
    let dir = s(&d.path().join("data"));
    let (mut first, _stderr) = started_run(&["--dir", &dir, "-s", "1", "-T", "20"]);
    // Its WAL directory is taken too, though it is inside its --dir: a
    // second data set naming it as --wal-dir would share its segments.
    let other = s(&d.path().join("other"));
    let wal = s(&d.path().join("data/pg_wal"));
    for args in [
        vec!["run", "--dir", &dir, "-s", "1", "-T", "1"],
        vec!["prepare", "--dir", &dir, "-s", "1"],
        vec!["cleanup", "--dir", &dir],
        vec![
            "run",
            "--dir",
            &other,
            "--wal-dir",
            &wal,
            "-s",
            "1",
            "-T",
            "1",
        ],
        vec!["cleanup", "--dir", &other, "--wal-dir", &wal],
    ] {
        let out = pgiosim(&args);
        let t = text(&out);
        assert_eq!(code(&out), 1, "{args:?}: {t}");
        assert!(t.contains("another pgiosim is using"), "{args:?}: {t}");
        assert!(t.contains("pgiosim.lock"), "{args:?}: {t}");
    }
    signal(&first, libc::SIGINT);
    assert_eq!(first.wait().unwrap().code(), Some(130));
    let _ = pgiosim(&["cleanup", "--dir", &other]);
    // Once it is gone, the data set is free again.
    let out = pgiosim(&["cleanup", "--dir", &dir]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(!Path::new(&dir).exists(), "{}", text(&out));
}

#[test]
fn a_running_standbys_directory_is_locked() {
    let d = tmp("pgiosim-harden");
    let dir = s(&d.path().join("data"));
    let sdir = s(&d.path().join("standbys"));
    std::fs::create_dir(&sdir).unwrap();
    let (mut first, _stderr) = started_run(&[
        "--dir",
        &dir,
        "-s",
        "1",
        "-T",
        "20",
        "--standby",
        "name=s1",
        "--standby-dir",
        &sdir,
    ]);
    // Wait for the standby's files: they are prepared after the primary's.
    let wal = d.path().join("standbys/standby-s1/pg_wal/pgiosim.wal.000");
    let t0 = Instant::now();
    while !wal.exists() && t0.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let standby = s(&d.path().join("standbys/standby-s1"));
    let other = s(&d.path().join("other"));
    for args in [
        vec!["cleanup", "--dir", &other, "--standby-dir", &sdir],
        vec!["prepare", "--dir", &standby, "-s", "1"],
        vec![
            "run",
            "--dir",
            &other,
            "-s",
            "1",
            "-T",
            "1",
            "--standby",
            "name=s1",
            "--standby-dir",
            &sdir,
        ],
    ] {
        let out = pgiosim(&args);
        let t = text(&out);
        assert_eq!(code(&out), 1, "{args:?}: {t}");
        assert!(t.contains("another pgiosim is using"), "{args:?}: {t}");
    }
    assert!(wal.exists());
    signal(&first, libc::SIGINT);
    assert_eq!(first.wait().unwrap().code(), Some(130));
    let out = pgiosim(&["cleanup", "--dir", &dir, "--standby-dir", &sdir]);
    assert!(out.status.success(), "{}", text(&out));
    let _ = pgiosim(&["cleanup", "--dir", &other]);
    assert!(!wal.exists());
}

// --- 6: a directory on a virtual file system -------------------------------------

#[test]
fn dir_on_proc_says_it_is_a_virtual_file_system() {
    for dir in ["/proc", "/proc/x", "/sys/kernel"] {
        let out = pgiosim(&["prepare", "--dir", dir, "-s", "1"]);
        let t = text(&out);
        assert_eq!(code(&out), 2, "{dir}: {t}");
        assert!(t.contains("virtual file system"), "{dir}: {t}");
        assert!(!t.contains("does not exist"), "{dir}: {t}");
    }
}

// --- 2: capture against a server that never answers ----------------------------

/// A TCP server on loopback that accepts and never says a word.
fn silent_server() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for conn in listener.incoming() {
            held.push(conn);
        }
    });
    port
}

/// Runs capture against `dsn`; kills it (and fails) if it is still running
/// after 20 s. Sends SIGINT after `interrupt_after` if given.
fn capture_against(dsn: &str, interrupt_after: Option<Duration>) -> (Output, Duration) {
    let d = tmp("pgiosim-harden");
    let out = d.path().join("x.json");
    let mut child = bin()
        .args(["capture", "--dsn", dsn, "-T", "2", "-o", &s(&out)])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    if let Some(after) = interrupt_after {
        std::thread::sleep(after);
        signal(&child, libc::SIGINT);
    }
    while child.try_wait().unwrap().is_none() {
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            panic!("capture still hangs after 20 s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let took = start.elapsed();
    (child.wait_with_output().unwrap(), took)
}

#[test]
fn capture_gives_up_on_a_silent_server_after_connect_timeout() {
    let port = silent_server();
    let dsn = format!("host=127.0.0.1 port={port} user=u dbname=d connect_timeout=1");
    let (out, took) = capture_against(&dsn, None);
    let t = text(&out);
    assert_eq!(code(&out), 1, "{t}");
    assert!(t.contains("no answer from the server within 1 s"), "{t}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
}

#[test]
fn capture_waiting_for_a_silent_server_honours_sigint() {
    let port = silent_server();
    // No connect_timeout: the default (10 s) would still be running.
    let dsn = format!("host=127.0.0.1 port={port} user=u dbname=d");
    let (out, took) = capture_against(&dsn, Some(Duration::from_millis(300)));
    let t = text(&out);
    assert_eq!(code(&out), 130, "{t}");
    assert!(t.contains("interrupted while connecting"), "{t}");
    assert!(took < Duration::from_secs(5), "took {took:?}");
}

// --- 3, 4, 5, 7, 8, 9, 12: bad input, one exit code --------------------------------

/// Runs pgiosim with `args`; checks the exit code and that the output holds
/// every one of `wanted` and none of `unwanted`.
fn expect(args: &[&str], want_code: i32, wanted: &[&str], unwanted: &[&str]) {
    let start = Instant::now();
    let out = pgiosim(args);
    let t = text(&out);
    assert_eq!(code(&out), want_code, "{args:?}: {t}");
    for w in wanted {
        assert!(t.contains(w), "{args:?}: wanted {w:?} in: {t}");
    }
    for u in unwanted {
        assert!(!t.contains(u), "{args:?}: did not want {u:?} in: {t}");
    }
    assert!(
        start.elapsed() < Duration::from_secs(20),
        "{args:?} took {:?}",
        start.elapsed()
    );
}

#[test]
fn bad_input_of_every_kind_exits_2_with_a_clear_message() {
    let d = tmp("pgiosim-harden");
    let p = |name: &str| s(&d.path().join(name));
    std::fs::write(p("bad.conf"), "shared_buffers = lots\n").unwrap();
    std::fs::write(p("bad-profile.json"), "{\"name\": \"x\"}\n").unwrap();
    std::fs::write(p("bad-workload.json"), "{\n").unwrap();
    std::fs::write(p("not-json.json"), "nope\n").unwrap();
    // A sparse 17 MB "workload": past the bound, refused without reading it.
    std::fs::File::create(p("huge.json"))
        .unwrap()
        .set_len(17 << 20)
        .unwrap();
    let fifo = std::ffi::CString::new(p("fifo.conf")).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);

    let cases: &[(&[&str], &[&str])] = &[
        (
            &["model", "--set", "shared_buffers=lots"],
            &["--set shared_buffers=lots"],
        ),
        (&["model", "--device", "nvmee"], &["did you mean \"nvme\"?"]),
        // A negative number names its flag, not "unexpected argument".
        (&["model", "-s", "-1"], &["'-1' for '--scale"]),
        (&["model", "-c", "-1"], &["'-1' for '--client"]),
        (&["model", "-j", "-2"], &["'-2' for '--jobs"]),
        (&["model", "--seed", "-3"], &["'-3' for '--seed"]),
        (&["model", "--client-rtt", "-1ms"], &["--client-rtt -1ms"]),
        (&["model", "--cpu-speed", "-1"], &["--cpu-speed"]),
        (
            &["model", "--device", &p("bad-profile.json")],
            &["bad-profile.json"],
        ),
        (&["model", "--config", &p("bad.conf")], &["bad.conf:1"]),
        (
            &["model", "--config", &p("missing.conf")],
            &["missing.conf", "cannot open"],
        ),
        (
            &["model", "--config", "/dev/zero"],
            &["/dev/zero", "not a regular file"],
        ),
        (
            &["model", "--config", &p("fifo.conf")],
            &["fifo.conf", "not a regular file"],
        ),
        (&["model", "--config", "/tmp"], &["is a directory"]),
        (
            &["model", "--workload", "/dev/zero"],
            &["not a regular file"],
        ),
        (
            &["model", "--workload", &p("huge.json")],
            &["larger than the 16 MiB"],
        ),
        (
            &["model", "--workload", &p("bad-workload.json")],
            &["--workload: "],
        ),
        (&["model", "--device", "/dev/zero"], &["not a regular file"]),
        (
            &["compare", "/dev/zero", "/dev/zero"],
            &["not a regular file"],
        ),
        (
            &["profile", "from-yabs", "/dev/zero", "-o", &p("y.json")],
            &["YABS output /dev/zero", "not a regular file"],
        ),
        (
            &["compare", &p("not-json.json"), &p("not-json.json")],
            &["not JSON"],
        ),
        (
            &["report", "-o", &p("r.html"), &p("not-json.json")],
            &["not JSON"],
        ),
        (
            &["model", "-T", "99999999999999999999"],
            &["too long: at most 2147483647 s"],
        ),
        (
            &["model", "-T", "5parsecs"],
            &["\"parsecs\" is not a time unit"],
        ),
        (&["model", "-R", "-1"], &["-R/--rate: must be more than 0"]),
        (
            &["model", "-b", "tpcb-lik"],
            &["did you mean \"tpcb-like\"?"],
        ),
    ];
    for (args, wanted) in cases {
        let unwanted: &[&str] = if args.contains(&"--workload") {
            &["-b "]
        } else {
            &["panicked"]
        };
        expect(args, 2, wanted, unwanted);
    }
}

#[test]
fn every_output_path_is_checked_before_the_work_starts() {
    let d = tmp("pgiosim-harden");
    let dir = s(&d.path().join("data"));
    let missing = "/nonexistent/dir/x.json";
    let cases: &[&[&str]] = &[
        &[
            "run", "--dir", &dir, "-s", "1", "-T", "60", "--json", missing,
        ],
        &["model", "-T", "1", "--json", missing],
        &["model", "-T", "1", "--json", "/tmp"],
        &["vacuum", "--device", "nvme", "--json", missing],
        &["sweep", "--mode", "model", "--json", missing],
        &["compare", "--json", missing, "a.json", "b.json"],
        &["report", "-o", "/nonexistent/dir/r.html", "a.json"],
        &["capture", "--dsn", "host=127.0.0.1 port=1", "-o", missing],
        &["calibrate", "--dir", &dir, "-o", missing],
        &["profile", "from-fio", "-o", missing, "a.json"],
    ];
    for args in cases {
        expect(args, 2, &["/"], &["panicked"]);
        let t = text(&pgiosim(args));
        assert!(
            t.contains("does not exist") || t.contains("is a directory"),
            "{args:?}: {t}"
        );
    }
    assert!(
        !Path::new(&dir).exists(),
        "a data set was prepared before the check"
    );
}

#[test]
fn a_run_that_completes_no_transaction_says_so_and_exits_1() {
    expect(
        &["model", "-T", "1ms", "-q"],
        1,
        &["warning: no transaction completed", "actually processed: 0"],
        &[],
    );
    // A run that completes some exits 0 without the warning.
    expect(
        &["model", "-T", "1s", "-q"],
        0,
        &[],
        &["no transaction completed"],
    );
}

#[test]
fn config_includes_reach_the_run() {
    let d = tmp("pgiosim-harden");
    std::fs::create_dir(d.path().join("conf.d")).unwrap();
    std::fs::write(
        d.path().join("postgresql.conf"),
        "include_dir 'conf.d'\ninclude_if_exists 'absent.conf'\n",
    )
    .unwrap();
    std::fs::write(
        d.path().join("conf.d/memory.conf"),
        "shared_buffers = 256MB\n",
    )
    .unwrap();
    let conf = s(&d.path().join("postgresql.conf"));
    let out = pgiosim(&["model", "-T", "1", "-q", "--config", &conf, "--json", "-"]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("\"shared_buffers\": \"256MB\""), "{stdout}");
    assert!(!text(&out).contains("does not model"), "{}", text(&out));
}

#[test]
fn help_states_the_exit_codes() {
    let out = pgiosim(&["--help"]);
    let t = text(&out);
    for w in [
        "Exit codes:",
        "1 the disk",
        "2 bad input",
        "130 interrupted",
    ] {
        assert!(t.contains(w), "{t}");
    }
}

// --- 10: tests never install packages ----------------------------------------------

#[test]
fn no_test_or_script_it_runs_installs_packages() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    // Written in pieces so that this file does not match itself.
    let installers = [
        ["apt-get", "\""].concat(),
        ["\"pip", "\""].concat(),
        ["\"npm", "\""].concat(),
    ];
    let mut all_tests = String::new();
    for entry in std::fs::read_dir(root.join("tests")).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let src = std::fs::read_to_string(&path).unwrap();
        all_tests.push_str(&src);
        for i in &installers {
            assert!(
                !src.contains(&format!("Command::new({i}"))
                    && !src.contains(&format!("Command::new(\"{i}")),
                "{} runs an installer ({i}); tests never install, .ci/run does",
                path.display()
            );
        }
    }
    // Scripts the tests run that would install something must honour
    // PGIOSIM_NO_INSTALL (the tests set it); only .ci/run's installer is exempt.
    for entry in std::fs::read_dir(root.join("scripts")).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            continue; // __pycache__ after a script ran
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let src = std::fs::read_to_string(&path).unwrap();
        let installs = ["\"apt-get\", \"install\"", "apt-get install", "pip install"]
            .iter()
            .any(|i| src.contains(i));
        let run_by_tests = all_tests.contains(&format!("\"{name}\""))
            || all_tests.contains(&format!("scripts/{name}\""));
        if installs && run_by_tests && name != "install-postgres-releases" {
            assert!(
                src.contains("PGIOSIM_NO_INSTALL"),
                "scripts/{name} installs packages without honouring PGIOSIM_NO_INSTALL"
            );
        }
    }
}

// --- issue 37: hostile inputs, round two ---------------------------------------------

/// Runs pgiosim with `args`, `stdin` on its standard input; kills it and
/// fails if it has not exited within 20 s, so that a case that would block
/// (in `open()` of a FIFO, say) fails the test instead of hanging it.
fn run_bounded(args: &[String], stdin: Option<&[u8]>) -> Output {
    use std::io::{Read, Write};
    let mut child = bin()
        .args(args)
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    if let Some(bytes) = stdin {
        // A write error means the child stopped reading: that is its answer.
        let _ = child.stdin.take().unwrap().write_all(bytes);
    }
    // Drain both pipes on threads: a child that fills one must not block.
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut v = Vec::new();
            let _ = r.read_to_end(&mut v);
            v
        })
    };
    let out = drain(Box::new(child.stdout.take().unwrap()));
    let err = drain(Box::new(child.stderr.take().unwrap()));
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > Duration::from_secs(20) {
            child.kill().unwrap();
            child.wait().unwrap();
            panic!("{args:?}: still running after 20 s (blocked?)");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// One hostile input of issue 37: the arguments, what goes to standard
/// input, the exit code wanted and phrases the output must hold.
struct Case {
    args: Vec<String>,
    stdin: Option<Vec<u8>>,
    code: i32,
    wanted: Vec<&'static str>,
}

fn case(args: &[&str], code: i32, wanted: &[&'static str]) -> Case {
    Case {
        args: args.iter().map(|a| a.to_string()).collect(),
        stdin: None,
        code,
        wanted: wanted.to_vec(),
    }
}

/// The files the cases use, in `dir`: a FIFO, a result, YABS outputs,
/// pgbench reports, workloads and a device profile, each damaged one way.
fn hostile_fixtures(dir: &Path) {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let fifo = std::ffi::CString::new(s(&dir.join("fifo"))).unwrap();
    // SAFETY: a NUL-terminated path that outlives the call.
    assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
    std::fs::copy(fixtures.join("result-v1.json"), dir.join("r1.json")).unwrap();
    let yabs = |v: f64| {
        let tests: Vec<serde_json::Value> = ["4k", "64k", "512k", "1m"]
            .iter()
            .map(|bs| {
                serde_json::json!({"bs": bs, "speed_r": v, "speed_w": v, "iops_r": v,
                                   "iops_w": v, "speed_units": "KBps"})
            })
            .collect();
        serde_json::json!({ "fio": tests }).to_string()
    };
    std::fs::write(dir.join("yabs-0.json"), yabs(0.0)).unwrap();
    std::fs::write(dir.join("yabs-1e308.json"), yabs(1e308)).unwrap();
    let pgbench = std::fs::read_to_string(fixtures.join("pgbench/pg15-tpcb-c4.out")).unwrap();
    let tps_line = pgbench
        .lines()
        .find(|l| l.starts_with("tps = "))
        .unwrap()
        .to_string();
    for (name, tps) in [("pgbench-nan.out", "NaN"), ("pgbench-neg.out", "-5")] {
        let line = format!("tps = {tps} (without initial connection time)");
        std::fs::write(dir.join(name), pgbench.replace(&tps_line, &line)).unwrap();
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tpcb: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("workloads/tpcb-like.json")).unwrap(),
    )
    .unwrap();
    for (name, field, v) in [
        (
            "w-rows.json",
            "rows_per_scale",
            serde_json::json!(1_000_000_000_000_000_000u64),
        ),
        (
            "w-append.json",
            "append_pages",
            serde_json::json!(1u64 << 40),
        ),
    ] {
        let mut w = tpcb.clone();
        w["tables"]["pgbench_accounts"][field] = v;
        std::fs::write(dir.join(name), w.to_string()).unwrap();
    }
    let mut nvme: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("src/device/profiles/nvme.json")).unwrap(),
    )
    .unwrap();
    nvme["name"] = "capped".into();
    nvme["caps"] = serde_json::json!({ "iops": 1e-300 });
    std::fs::write(dir.join("capped.json"), nvme.to_string()).unwrap();
    // A config tree whose files include one 5 MB file four times: each file
    // is under the bound of one, the tree is over the budget of all.
    std::fs::create_dir_all(dir.join("conf.d")).unwrap();
    std::fs::write(
        dir.join("big.inc"),
        "# padding padding padding padding padding padding\n".repeat(100_000),
    )
    .unwrap();
    std::fs::write(
        dir.join("conf.d/a.conf"),
        "include '../big.inc'\n".repeat(4),
    )
    .unwrap();
    std::fs::write(dir.join("tree.conf"), "include_dir 'conf.d'\n").unwrap();
    // Twelve files, each including the next: past PostgreSQL's depth of 10.
    for i in 0..12 {
        let next = format!("include 'nest{}.conf'\n", i + 1);
        std::fs::write(dir.join(format!("nest{i}.conf")), next).unwrap();
    }
    std::fs::write(dir.join("nest12.conf"), "commit_delay = 5\n").unwrap();
    // 100,000 standbys (it took 22.7 s to refuse, the square of the lines).
    let standbys: String = (0..100_000)
        .map(|i| format!("name=s{i},rtt=1ms\n"))
        .collect();
    std::fs::write(dir.join("standbys"), standbys).unwrap();
}

#[test]
fn hostile_inputs_of_issue_37_exit_2_naming_the_input() {
    let d = tmp("pgiosim-harden");
    hostile_fixtures(d.path());
    let p = |name: &str| s(&d.path().join(name));
    let fixture = |name: &str| format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    let (fifo, r1, data) = (p("fifo"), p("r1.json"), p("data"));
    let yabs = fixture("yabs-noris.txt");
    let fio = fixture("fio/qd1-randread-8k.json");
    let fifo_refused: &[&str] = &["is a FIFO, not a regular file"];
    // Inputs that would take gigabytes as JSON values: a series longer
    // than pgiosim writes, and fio output of three million empty jobs.
    let mut long: serde_json::Value =
        serde_json::from_slice(&std::fs::read(fixture("result-v1.json")).unwrap()).unwrap();
    long["timeseries"] =
        serde_json::Value::Array(vec![long["timeseries"][0].clone(); (1 << 18) + 1]);
    std::fs::write(p("long.json"), long.to_string()).unwrap();
    let jobs = format!(
        r#"{{"fio version": "fio-3.33", "jobs": [{}{{}}]}}"#,
        "{},".repeat(3 << 20)
    );
    std::fs::write(p("jobs.json"), jobs).unwrap();
    let (long, jobs) = (p("long.json"), p("jobs.json"));
    let mut cases = vec![
        // 1. Outputs: a FIFO or a device is refused, never opened to block.
        case(&["model", "-T", "1", "--json", &fifo], 2, fifo_refused),
        case(&["report", &r1, "-o", &fifo], 2, &["-o ", "is a FIFO"]),
        case(&["profile", "from-fio", &fio, "-o", &fifo], 2, fifo_refused),
        case(
            &["profile", "from-yabs", &yabs, "--disk", "1", "-o", &fifo],
            2,
            fifo_refused,
        ),
        case(
            &["sweep", "--mode", "model", "--csv", &fifo],
            2,
            &["--csv ", "is a FIFO"],
        ),
        case(
            &["sweep", "--mode", "model", "--json", &fifo],
            2,
            fifo_refused,
        ),
        case(
            &["compare", &r1, &r1, "--markdown", &fifo],
            2,
            &["--markdown ", "is a FIFO"],
        ),
        case(&["compare", &r1, &r1, "--json", &fifo], 2, fifo_refused),
        case(
            &["vacuum", "--device", "nvme", "--json", &fifo],
            2,
            fifo_refused,
        ),
        case(
            &["workload", "fit-cpu", &p("absent.json"), "-o", &fifo],
            2,
            fifo_refused,
        ),
        case(
            &["capture", "--dsn", "host=127.0.0.1 port=1", "-o", &fifo],
            2,
            fifo_refused,
        ),
        case(
            &[
                "import",
                "pgbench",
                &fixture("pgbench/pg15-tpcb-c4.out"),
                "--json",
                &fifo,
            ],
            2,
            fifo_refused,
        ),
        case(
            &["model", "-T", "1", "--json", "/dev/null"],
            2,
            &["/dev/null", "not a regular file"],
        ),
        case(&["report", &r1, "-o", &r1], 2, &["is the input"]),
        case(
            &["profile", "from-yabs", &yabs, "--disk", "1", "-o", "-"],
            2,
            &["-o -", "--name"],
        ),
        case(
            &["sweep", "--mode", "model", "--csv", "-", "--json", "-"],
            2,
            &["only one output can be standard output"],
        ),
        case(
            &["compare", &r1, &r1, "--json", "-", "--csv", "-"],
            2,
            &["only one output can be standard output"],
        ),
        case(&["capture", "-o", "-"], 2, &["-o -"]),
        // 2. Floats: finite and in range where they are parsed.
        case(
            &["model", "--cpu-speed", "1e-20"],
            2,
            &["--cpu-speed", "0.01"],
        ),
        case(&["model", "-P", "1e-300"], 2, &["-P/--progress", "0.1"]),
        case(
            &["model", "-T", "1", "--device", &p("capped.json")],
            2,
            &["caps.iops", "below the least cap modelled"],
        ),
        case(
            &["model", "-b", "tpcb-like@1e308", "-b", "select-only@1e308"],
            2,
            &["-b tpcb-like@1e308", "at most 2147483647"],
        ),
        case(
            &["import", "pgbench", &p("pgbench-nan.out")],
            2,
            &["\"tps =\" line", "NaN"],
        ),
        case(
            &["import", "pgbench", &p("pgbench-neg.out")],
            2,
            &["\"tps =\" line", "-5"],
        ),
        case(
            &[
                "model",
                "-T",
                "1",
                "--set",
                "archive_mode=on",
                "--archive",
                "latency=100000000d,throughput=90MB/s",
            ],
            2,
            &["latency=100000000d", "at most 1d"],
        ),
        case(&["model", "-R", "1e10"], 2, &["-R/--rate", "at most 1e9"]),
        case(
            &["model", "-R", "100", "-L", "1e-300"],
            2,
            &["-L/--latency-limit", "0.001"],
        ),
        case(
            &[
                "workload",
                "from-server-cpu",
                "--cpu-us-per-tx",
                "1e300s",
                "--reads-per-tx",
                "1",
                "--pages-written-per-tx",
                "1",
                "--wal-bytes-per-tx",
                "1",
                "-o",
                &p("w.json"),
            ],
            2,
            &["--cpu-us-per-tx", "at most 1d"],
        ),
        // 3. Bad input is exit 2, not 1.
        case(
            &[
                "profile",
                "from-yabs",
                &p("yabs-0.json"),
                "-o",
                &p("y.json"),
            ],
            2,
            &["yabs-0.json", "did not run"],
        ),
        case(
            &[
                "profile",
                "from-yabs",
                &p("yabs-1e308.json"),
                "-o",
                &p("y.json"),
            ],
            2,
            &["yabs-1e308.json", "damaged output"],
        ),
        case(
            &["iobench", "--dir", &data, "--size", "18446744073709551615"],
            2,
            &["--size 18446744073709551615"],
        ),
        case(
            &[
                "iobench",
                "--dir",
                &data,
                "--test",
                "walsync",
                "--qd",
                "4096",
                "--io-engine",
                "psync",
            ],
            2,
            &["--qd 4096", "psync"],
        ),
        case(
            &["calibrate", "--dir", "/proc", "-o", &p("c.json")],
            2,
            &["/proc", "virtual file system"],
        ),
        case(
            &[
                "model",
                "-T",
                "1",
                "--set",
                "archive_mode=on",
                "--archive",
                "latency=1ms,latency=2ms,throughput=90MB/s",
            ],
            2,
            &["latency given twice"],
        ),
        case(
            &["model", "-T", "1", "--standby", "name=s1,rtt=1ms,rtt=2ms"],
            2,
            &["rtt given twice"],
        ),
        // 4. Sizes past what the model holds: refused before the core.
        case(
            &["model", "-T", "2", "-s", "1", "--os-cache", "20TB"],
            2,
            &["--os-cache 20TB", "at most 1TB"],
        ),
        case(
            &["model", "-T", "1", "--workload", &p("w-rows.json")],
            2,
            &["rows_per_scale", "rows a table may have"],
        ),
        case(
            &["model", "-T", "1", "--workload", &p("w-append.json")],
            2,
            &["append_pages", "blocks"],
        ),
        case(
            &["catchup", "--backlog", "100TB"],
            2,
            &["--backlog 100TB", "at most 1TB"],
        ),
        case(
            &["vacuum", "--device", "nvme", "--bloat", "10TB"],
            2,
            &["--bloat 10TB", "at most 1TB"],
        ),
        case(
            &["model", "-T", "1", "--set", "shared_buffers=4TB"],
            2,
            &["shared_buffers = 4TB", "at most 512GB"],
        ),
        // 5. One input budget for a config and its includes; PostgreSQL's
        //    nesting depth; a standby file refused at its 256th line.
        case(
            &["model", "-T", "1", "--config", &p("tree.conf")],
            2,
            &["a.conf:4", "big.inc", "16 MiB pgiosim reads in all"],
        ),
        case(
            &["model", "-T", "1", "--config", &p("nest0.conf")],
            2,
            &["nest11.conf\": maximum nesting depth exceeded"],
        ),
        case(
            &["model", "-T", "1", "--standby-file", &p("standbys")],
            2,
            &["standbys:256", "at most 255"],
        ),
        // 6. Large inputs: refused while read, before the memory is taken.
        case(
            &["compare", &long, &r1],
            2,
            &["long.json", "more than 262144 entries"],
        ),
        case(
            &["report", &long, "-o", &p("long.html")],
            2,
            &["long.json", "more than 262144 entries"],
        ),
        case(
            &["profile", "from-fio", &jobs, "-o", &p("jobs-profile.json")],
            2,
            &["jobs.json", "more than pgiosim keeps in memory"],
        ),
        // 7. A sweep's setting given twice: the header showed one, the grid ran the other.
        case(
            &[
                "sweep",
                "--mode",
                "model",
                "-T",
                "1",
                "--clients",
                "1",
                "--set",
                "commit_delay=0",
                "--set",
                "commit_delay=5,10",
            ],
            2,
            &[
                "--set commit_delay=5,10",
                "already set by --set commit_delay=0",
            ],
        ),
    ];
    cases.push(Case {
        stdin: Some((0..=255u8).cycle().take(4096).collect()),
        ..case(
            &["import", "pgbench", "-"],
            2,
            &["standard input", "not UTF-8"],
        )
    });
    for c in &cases {
        let out = run_bounded(&c.args, c.stdin.as_deref());
        let t = text(&out);
        assert_eq!(code(&out), c.code, "{:?}: {t}", c.args);
        for w in &c.wanted {
            assert!(t.contains(w), "{:?}: wanted {w:?} in: {t}", c.args);
        }
        assert!(!t.contains("panicked"), "{:?}: {t}", c.args);
        // One line: the error, nothing more.
        assert_eq!(t.trim_end().lines().count(), 1, "{:?}: {t}", c.args);
    }
    // Nothing was prepared, and no file named "-" was made.
    assert!(!Path::new(&data).exists());
    assert!(!Path::new("-").exists() && !d.path().join("-").exists());
    // The result `report` refused to overwrite is intact.
    let before = std::fs::read(fixture("result-v1.json")).unwrap();
    assert_eq!(std::fs::read(&r1).unwrap(), before);
}

// --- issue 49: hostile inputs, round three ------------------------------------------

/// The files the round-three cases use, in `dir`: workloads with CPU
/// figures past their bound, one at the bound, a postgresql.conf with a
/// 1 MB value and YABS output of 3,000 disks.
fn hostile_fixtures_49(dir: &Path) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let tpcb: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("workloads/tpcb-like.json")).unwrap(),
    )
    .unwrap();
    for (name, field, v) in [
        ("w-cpu.json", "cpu_us_per_statement", 1e17),
        ("w-client.json", "client_cpu_us_per_statement", 1e18),
        ("w-flush.json", "wal_flush_cpu_us", 1e18),
        ("w-growth.json", "cpu_growth_per_backend", 1e18),
        ("w-day.json", "cpu_us_per_statement", 86_400e6),
    ] {
        let mut w = tpcb.clone();
        w[field] = v.into();
        std::fs::write(dir.join(name), w.to_string()).unwrap();
    }
    let mut w = tpcb.clone();
    w["transactions"][0]["statements"][0]["cpu_us"] = 1e300.into();
    std::fs::write(dir.join("w-stmt.json"), w.to_string()).unwrap();
    let mut w = tpcb.clone();
    w["cpu_us_per_statement"] = 1e9.into();
    w["cpu_growth_per_backend"] = 1.0.into();
    std::fs::write(dir.join("w-grows.json"), w.to_string()).unwrap();
    std::fs::write(
        dir.join("big-value.conf"),
        format!("shared_buffers = '{}'\n", "x".repeat(1 << 20)),
    )
    .unwrap();
    // One disk's block of the published fixture, 3,000 times.
    let yabs = std::fs::read_to_string(root.join("tests/fixtures/yabs-noris.txt")).unwrap();
    let from = yabs.find("fio Disk Speed Tests").unwrap();
    let to = from + yabs[from..].find("\n\n").unwrap();
    let block = &yabs[from..to];
    let many: String = (0..3000)
        .map(|i| block.replace("/dev/sda1", &format!("/dev/vd{i}")) + "\n\n")
        .collect();
    std::fs::write(dir.join("yabs-3000.txt"), many).unwrap();
}

#[test]
fn hostile_inputs_of_issue_49_exit_2_on_one_short_line() {
    let d = tmp("pgiosim-harden49");
    hostile_fixtures_49(d.path());
    let p = |name: &str| s(&d.path().join(name));
    let list = |n: u32| (1..=n).map(|i| i.to_string()).collect::<Vec<_>>().join(",");
    let (l1000, l100) = (list(1000), list(100));
    let devices = vec!["nvme"; 20_000].join(",");
    let from_server = |extra: &[&str]| -> Vec<String> {
        let mut a = vec!["workload", "from-server-cpu", "--cpu-utilization", "50"];
        a.extend_from_slice(extra);
        a.extend_from_slice(&["--reads-per-tx", "1", "--pages-written-per-tx", "1"]);
        a.extend_from_slice(&["--wal-bytes-per-tx", "100", "-o"]);
        a.iter()
            .map(|x| x.to_string())
            .chain([p("ws.json")])
            .collect()
    };
    let mut cases = vec![
        // 2. A workload's CPU figures: one bound, a day, as on the command line.
        case(
            &["model", "-T", "1", "--workload", &p("w-cpu.json")],
            2,
            &["cpu_us_per_statement", "from 0 to 86400000000 (1d)"],
        ),
        case(
            &["model", "-T", "1", "--workload", &p("w-client.json")],
            2,
            &["client_cpu_us_per_statement", "(1d)"],
        ),
        case(
            &["model", "-T", "1", "--workload", &p("w-flush.json")],
            2,
            &["wal_flush_cpu_us", "(1d)"],
        ),
        case(
            &["model", "-T", "1", "--workload", &p("w-growth.json")],
            2,
            &["cpu_growth_per_backend", "from 0 to 1"],
        ),
        case(
            &["model", "-T", "1", "--workload", &p("w-stmt.json")],
            2,
            &["statements[0].cpu_us", "(1d)"],
        ),
        case(
            &[
                "model",
                "-T",
                "1",
                "-c",
                "100000",
                "--set",
                "shared_buffers=2GB",
                "--workload",
                &p("w-grows.json"),
            ],
            2,
            &["-c/--client 100000", "cpu_growth_per_backend 1", "100d"],
        ),
        // 3. One simulated-time cap for -T and -t.
        case(
            &["model", "-s", "1", "-t", "2", "-R", "0.000000001"],
            2,
            &["-t/--transactions 2", "-R/--rate", "7d"],
        ),
        case(
            &["model", "-T", "2147483647", "-s", "1", "-R", "0.000001"],
            2,
            &["-T/--time 2147483647", "at most 7d"],
        ),
        // 5. --max-memory counts the clients, and a whole sweep.
        case(
            &["model", "-c", "10000000", "--set", "shared_buffers=200GB"],
            2,
            &["of it for -c", "--max-memory 4GB"],
        ),
        case(
            &[
                "sweep",
                "--mode",
                "model",
                "-T",
                "1",
                "--clients",
                "1",
                "--device",
                "nvme,gp3",
                "--parallel",
                "2",
                "--os-cache",
                "700GB",
                "--max-memory",
                "1.5GB",
            ],
            2,
            &["the sweep would hold about 2.6GB", "lower --parallel"],
        ),
        // 6. Sweep grids bounded before a point is planned.
        case(
            &[
                "sweep",
                "--mode",
                "model",
                "--clients",
                &l1000,
                "--set",
                &format!("commit_delay={l1000}"),
            ],
            2,
            &["1000000 points", "at most 10000"],
        ),
        case(
            &[
                "sweep",
                "--mode",
                "model",
                "--set",
                &format!("commit_delay={l100}"),
                "--set",
                &format!("vacuum_cost_limit={l100}"),
                "--set",
                &format!("commit_siblings={l100}"),
            ],
            2,
            &["7000000 points", "at most 10000"],
        ),
        case(
            &["sweep", "--mode", "model", "--device", &devices],
            2,
            &["--device: 20000 devices", "at most 100"],
        ),
        // 8. Errors cut what they repeat.
        case(
            &["model", "-T", "1", "--config", &p("big-value.conf")],
            2,
            &["big-value.conf:1", "xxx…"],
        ),
        case(
            &[
                "profile",
                "from-yabs",
                &p("yabs-3000.txt"),
                "-o",
                &p("y.json"),
            ],
            2,
            &["holds 3000 disks", "and 2990 more"],
        ),
    ];
    for (extra, wanted) in [
        (["--vcpus", "4", "--tps", "1e-300"], "--tps 1e-300"),
        (
            ["--vcpus", "4294967295", "--tps", "1"],
            "--vcpus 4294967295",
        ),
    ] {
        cases.push(Case {
            args: from_server(&extra),
            stdin: None,
            code: 2,
            wanted: vec![wanted, "over the 1d a transaction may take"],
        });
    }
    for c in &cases {
        let start = Instant::now();
        let out = run_bounded(&c.args, c.stdin.as_deref());
        let t = text(&out);
        let took = start.elapsed();
        let args: Vec<String> = c
            .args
            .iter()
            .map(|a| a.chars().take(80).collect())
            .collect();
        assert_eq!(code(&out), c.code, "{args:?}: {t}");
        for w in &c.wanted {
            assert!(t.contains(w), "{args:?}: wanted {w:?} in: {t}");
        }
        assert_eq!(t.trim_end().lines().count(), 1, "{args:?}: {t}");
        assert!(t.chars().count() < 2100, "{args:?}: {} chars", t.len());
        // Refused before any work: well under the 10 s a case may take.
        assert!(took < Duration::from_secs(10), "{args:?}: took {took:?}");
    }
    assert!(!d.path().join("ws.json").exists());
}

/// Round three's cases that run: each finishes within 10 s (a generous
/// bound: they take well under a second here) and says what it did.
#[test]
fn hostile_runs_of_issue_49_finish_and_say_why() {
    let d = tmp("pgiosim-harden49-runs");
    hostile_fixtures_49(d.path());
    let day = s(&d.path().join("w-day.json"));
    let sweep_fits = [
        "sweep",
        "--mode",
        "model",
        "-T",
        "1",
        "--clients",
        "1",
        "--device",
        "nvme,gp3",
        "--os-cache",
        "700GB",
        "--max-memory",
        "1.5GB",
    ];
    // The arguments, the exit code, phrases wanted and phrases not.
    type Run<'a> = (&'a [&'a str], i32, &'a [&'a str], &'a [&'a str]);
    let runs: [Run; 4] = [
        // 4. No transaction: no precision claimed, and -R named.
        (
            &["model", "-s", "1", "-R", "0.000001"],
            1,
            &[
                "not reached: no transaction completed",
                "at -R 0.000001 one transaction is due every 1000000 s",
            ],
            &["± 0.0%"],
        ),
        // 2 and 3. A statement's CPU of a day: -t stops at the cap.
        (
            &["model", "-s", "1", "-t", "1", "--workload", &day],
            1,
            &["not all done by 604800 s"],
            &[],
        ),
        // 7. A fractional figure keeps its point in the name.
        (
            &[
                "model",
                "-s",
                "1",
                "-T",
                "1",
                "--device",
                "gp3:iops=3000.5,mibps=125.9",
            ],
            0,
            &["gp3-3000.5iops-125.9mibps"],
            &["30005iops"],
        ),
        // 5. Without --parallel, a sweep runs as many points at once as fit.
        (&sweep_fits, 0, &["gp3"], &[]),
    ];
    for (args, want, wanted, unwanted) in runs {
        let args: Vec<String> = args.iter().map(|a| a.to_string()).collect();
        let start = Instant::now();
        let out = run_bounded(&args, None);
        let took = start.elapsed();
        let t = text(&out);
        assert_eq!(code(&out), want, "{args:?}: {t}");
        assert!(took < Duration::from_secs(10), "{args:?}: took {took:?}");
        for w in wanted {
            assert!(t.contains(w), "{args:?}: wanted {w:?} in: {t}");
        }
        for w in unwanted {
            assert!(!t.contains(w), "{args:?}: {w:?} in: {t}");
        }
    }
}

/// 6. SIGTERM while a sweep plans its largest grid: it stops at once.
#[test]
fn sigterm_while_a_sweep_plans_its_largest_grid_exits_130() {
    let child = bin()
        .args([
            "sweep",
            "--mode",
            "model",
            "-T",
            "1",
            "--clients",
            "1,2,...,1000",
        ])
        .args(["--set", "commit_delay=0,1,2,3,4,5,6,7,8,9"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    signal(&child, libc::SIGTERM);
    let sent = Instant::now();
    let out = child.wait_with_output().unwrap();
    let took = sent.elapsed();
    assert_eq!(code(&out), 130, "{}", text(&out));
    // Planning 10,000 points takes about a second here.
    assert!(
        took < Duration::from_secs(10),
        "took {took:?} after SIGTERM"
    );
}

#[test]
fn a_profile_to_standard_output_is_the_profile_alone() {
    let yabs = format!(
        "{}/tests/fixtures/yabs-noris.txt",
        env!("CARGO_MANIFEST_DIR")
    );
    let args: Vec<String> = [
        "profile",
        "from-yabs",
        &yabs,
        "--disk",
        "1",
        "-o",
        "-",
        "--name",
        "x",
    ]
    .iter()
    .map(|a| a.to_string())
    .collect();
    let out = run_bounded(&args, None);
    assert_eq!(code(&out), 0, "{}", text(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("stdout is the profile");
    assert_eq!(v["name"], "x");
    // The table went to standard error.
    assert!(String::from_utf8_lossy(&out.stderr).contains("YABS"));
}

// --- memory of large inputs ----------------------------------------------------

/// scripts/bench-input-memory at a tiny size: the inputs it builds still
/// parse as what they mimic, and compare, report and from-fio answer
/// them (exit 0 or 2) under its RSS target. The full size is a benchmark
/// (docs/validation.md, 2026-12-04).
#[test]
fn bench_input_memory_runs_at_a_tiny_size() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/bench-input-memory");
    let out = Command::new(&script)
        .args(["--size-mb", "1", "--target-mb", "200"])
        .args(["--bin", env!("CARGO_BIN_EXE_pgiosim")])
        .output()
        .expect("run scripts/bench-input-memory");
    let t = text(&out);
    assert_eq!(code(&out), 0, "{t}");
    for input in [
        "result-series.json",
        "result-settings.json",
        "fio-bins.json",
        "fio-jobs.json",
    ] {
        assert!(t.contains(input), "{input} missing:\n{t}");
    }
    assert!(t.contains("worst peak RSS"), "{t}");
}
