//! `pgiosim capture` against a real PostgreSQL started by the test: pgbench
//! runs while capture watches, and the captured figures are checked against
//! PostgreSQL's own counters and pgbench's report; the workload must then
//! replay in `model`. Also the errors: bad DSN, refused connection, missing
//! privileges, an idle database.
//!
//! Needs PostgreSQL's server binaries (Debian's `postgresql` package,
//! /usr/lib/postgresql/*/bin); without them the test shows as ignored with
//! the reason (fails under `CI=true`). The same checks then run on every other release that
//! `scripts/install-postgres-releases` put in /opt/pgiosim/postgresql (13,
//! 14, 16, 17, 18: the releases whose statistics views differ from 15's),
//! with Debian's psql and pgbench where a release has none of its own.
//! As root, the server runs as the system user `pgiosim_pg`
//! (created if missing); it listens only on a unix socket in a temporary
//! directory and is stopped by its pid at the end, also when a check fails.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

mod common;
use common::skip;

/// Debian's release listens here; another release on 5440 + its major.
const PORT: u16 = 5439;
const PG_USER: &str = "pgiosim_pg";

fn pgiosim() -> Command {
    Command::new(env!("CARGO_BIN_EXE_pgiosim"))
}

/// PostgreSQL server installs under `dir` (`dir/MAJOR/bin`), by major
/// release.
fn releases_in(dir: &str) -> Vec<(u32, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(u32, PathBuf)> = entries
        .filter_map(|e| {
            let e = e.ok()?;
            let v: u32 = e.file_name().to_str()?.parse().ok()?;
            let bin = e.path().join("bin");
            ["initdb", "postgres"]
                .iter()
                .all(|b| bin.join(b).exists())
                .then_some((v, bin))
        })
        .collect();
    found.sort();
    found
}

/// The newest of Debian's PostgreSQL server binaries, if any.
fn pg_bin() -> Option<PathBuf> {
    releases_in("/usr/lib/postgresql").pop().map(|(_, b)| b)
}

/// Where `program` (psql, pgbench) is for a server in `bin`: beside it, or
/// else Debian's newest (a server-only build, as the one of 13; the client
/// programs speak the same protocol to every release).
fn client_program(bin: &Path, program: &str) -> PathBuf {
    let own = bin.join(program);
    if own.exists() {
        return own;
    }
    releases_in("/usr/lib/postgresql")
        .into_iter()
        .rev()
        .map(|(_, b)| b.join(program))
        .find(|p| p.exists())
        .unwrap_or(own)
}

/// The releases scripts/install-postgres-releases installed, but for those
/// Debian's packages provide.
fn other_releases() -> Vec<(u32, PathBuf)> {
    let dir = std::env::var("PGIOSIM_PG_RELEASES")
        .unwrap_or_else(|_| "/opt/pgiosim/postgresql".to_string());
    let debian: Vec<u32> = releases_in("/usr/lib/postgresql")
        .into_iter()
        .map(|(v, _)| v)
        .collect();
    releases_in(&dir)
        .into_iter()
        .filter(|(v, _)| !debian.contains(v))
        .collect()
}

/// The uid and gid to run PostgreSQL as: ours, or pgiosim_pg's when root
/// (PostgreSQL refuses to run as root).
///
/// Tests run in parallel threads: two `useradd`s at once can leave the user
/// renumbered under a server just started with the old uid, and `getpwnam`
/// returns a shared buffer. One lock serializes lookup and creation.
fn pg_ids() -> Result<(u32, u32), String> {
    if unsafe { libc::geteuid() } != 0 {
        return Ok(unsafe { (libc::getuid(), libc::getgid()) });
    }
    static USERADD: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _serial = USERADD.lock().unwrap_or_else(|e| e.into_inner());
    let lookup = || {
        let name = std::ffi::CString::new(PG_USER).unwrap();
        let pw = unsafe { libc::getpwnam(name.as_ptr()) };
        (!pw.is_null()).then(|| unsafe { ((*pw).pw_uid, (*pw).pw_gid) })
    };
    if let Some(ids) = lookup() {
        return Ok(ids);
    }
    let out = Command::new("useradd")
        .args([
            "--system",
            "--user-group",
            "--no-create-home",
            "--shell",
            "/usr/sbin/nologin",
            PG_USER,
        ])
        .output()
        .map_err(|e| format!("cannot run useradd: {e}"))?;
    // Another test may have created it meanwhile: look again either way.
    lookup().ok_or_else(|| {
        format!(
            "useradd {PG_USER} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

/// A child process killed by its pid when dropped (pgbench on a failed check).
struct KillOnDrop(Option<Child>);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        if let Some(mut c) = self.0.take() {
            unsafe { libc::kill(c.id() as i32, libc::SIGTERM) };
            let _ = c.wait();
        }
    }
}

/// A throwaway PostgreSQL cluster; stopped by its pid and removed on drop.
struct Pg {
    bin: PathBuf,
    port: u16,
    uid: u32,
    gid: u32,
    sock: PathBuf,
    server: Option<Child>,
    // Last: removed after the server has stopped.
    base: tempfile::TempDir,
}

impl Pg {
    fn command(&self, program: &str) -> Command {
        let mut c = Command::new(client_program(&self.bin, program));
        c.uid(self.uid)
            .gid(self.gid)
            .current_dir(self.base.path())
            .env("HOME", self.base.path())
            .env_remove("PGHOST")
            .env_remove("PGPORT")
            .env_remove("PGUSER")
            .env_remove("PGDATABASE");
        c
    }

    /// initdb, start on a private socket, wait until it accepts connections.
    fn start(bin: PathBuf, port: u16) -> Result<Pg, String> {
        let (uid, gid) = pg_ids()?;
        let base = tempfile::Builder::new()
            .prefix("pgiosim-capture-")
            .tempdir()
            .map_err(|e| e.to_string())?;
        let sock = base.path().join("sock");
        fs::create_dir(&sock).map_err(|e| e.to_string())?;
        for p in [base.path(), sock.as_path()] {
            let c = std::ffi::CString::new(p.as_os_str().as_encoded_bytes()).unwrap();
            if unsafe { libc::chown(c.as_ptr(), uid, gid) } != 0 {
                return Err(format!("cannot chown {}", p.display()));
            }
            fs::set_permissions(p, fs::Permissions::from_mode(0o700)).unwrap();
        }
        let mut pg = Pg {
            bin,
            port,
            uid,
            gid,
            sock,
            server: None,
            base,
        };
        let data = pg.base.path().join("data");
        let out = pg
            .command("initdb")
            .args([
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--no-sync",
                "-D",
            ])
            .arg(&data)
            .output()
            .map_err(|e| format!("cannot run initdb: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "initdb failed: {}",
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let log = fs::File::create(pg.base.path().join("server.log")).unwrap();
        let child = pg
            .command("postgres")
            .arg("-D")
            .arg(&data)
            .arg("-k")
            .arg(&pg.sock)
            .args(["-p", &pg.port.to_string()])
            .args([
                "-c",
                "listen_addresses=",
                "-c",
                "shared_buffers=16MB",
                "-c",
                "max_connections=20",
                // Small and light on the shared disk: no fsyncs, no autovacuum noise.
                "-c",
                "fsync=off",
                "-c",
                "autovacuum=off",
            ])
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .map_err(|e| format!("cannot start postgres: {e}"))?;
        pg.server = Some(child);
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ok = pg
                .psql("postgres", "SELECT 1")
                .is_ok_and(|o| o.status.success());
            if ok {
                return Ok(pg);
            }
            if let Some(status) = pg.server.as_mut().unwrap().try_wait().unwrap() {
                return Err(format!("postgres exited ({status}): {}", pg.log_tail()));
            }
            if Instant::now() > deadline {
                return Err(format!("postgres did not start: {}", pg.log_tail()));
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    fn log_tail(&self) -> String {
        let log = fs::read_to_string(self.base.path().join("server.log")).unwrap_or_default();
        log.lines().rev().take(15).collect::<Vec<_>>().join("\n")
    }

    fn conn_args(&self) -> Vec<String> {
        vec![
            "-h".into(),
            self.sock.display().to_string(),
            "-p".into(),
            self.port.to_string(),
            "-U".into(),
            "postgres".into(),
        ]
    }

    fn psql(&self, db: &str, sql: &str) -> std::io::Result<Output> {
        self.command("psql")
            .args(self.conn_args())
            .args(["-XAtq", "-v", "ON_ERROR_STOP=1", "-d", db, "-c", sql])
            .output()
    }

    fn sql(&self, sql: &str) -> String {
        let out = self.psql("postgres", sql).unwrap();
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    }

    /// The server's major release (server_version_num / 10000).
    fn major(&self) -> u32 {
        let v: u32 = self.sql("SHOW server_version_num").parse().unwrap();
        v / 10_000
    }

    fn dsn(&self, user: &str) -> String {
        format!(
            "host={} port={} user={user} dbname=postgres",
            self.sock.display(),
            self.port
        )
    }
}

impl Drop for Pg {
    fn drop(&mut self) {
        if let Some(mut child) = self.server.take() {
            // SIGINT: fast shutdown; SIGQUIT if it does not stop in time.
            unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
            let deadline = Instant::now() + Duration::from_secs(20);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            unsafe { libc::kill(child.id() as i32, libc::SIGQUIT) };
            let _ = child.wait();
        }
    }
}

/// pg_stat_wal.wal_bytes (13: the insert position, pg_stat_wal is new in
/// 14) and xact_commit of the postgres database, now.
fn wal_and_commits(pg: &Pg) -> (f64, f64) {
    let wal = if pg.major() >= 14 {
        "(SELECT wal_bytes FROM pg_stat_wal)"
    } else {
        "pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')"
    };
    let row = pg.sql(&format!(
        "SELECT {wal}, xact_commit FROM pg_stat_database WHERE datname = 'postgres'"
    ));
    let mut it = row.split('|').map(|v| v.parse::<f64>().unwrap());
    (it.next().unwrap(), it.next().unwrap())
}

fn within(what: &str, got: f64, want: f64, tolerance: f64) {
    assert!(
        want > 0.0 && (got - want).abs() <= tolerance * want,
        "{what}: captured {got:.1}, expected {want:.1} ±{:.0}%",
        tolerance * 100.0
    );
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn capture_of_pgbench_matches_postgresql_and_replays() {
    let Some(bin) = pg_bin() else {
        skip(
            "no PostgreSQL server binaries in /usr/lib/postgresql/*/bin (.ci/run installs Debian's postgresql)",
        );
    };
    let pg = match Pg::start(bin, PORT) {
        Ok(pg) => pg,
        Err(e) => {
            skip(&format!("cannot start PostgreSQL: {e}"));
        }
    };
    capture_matches_postgresql_and_replays(&pg);
}

/// The same on PostgreSQL 13, 14, 16, 17 and 18, where installed: their
/// statistics views differ (no pg_stat_wal in 13, pg_stat_io from 16,
/// pg_stat_checkpointer from 17, WAL write and sync counts only in
/// pg_stat_io from 18).
fn capture_works_on_every_installed_release() {
    let releases = other_releases();
    if releases.is_empty() {
        skip(
            "no other PostgreSQL release installed (.ci/run runs scripts/install-postgres-releases)",
        );
    }
    for (major, bin) in releases {
        common::note!("== PostgreSQL {major}");
        // A release that is installed must start: a failure here is real.
        let pg = Pg::start(bin, 5440 + major as u16)
            .unwrap_or_else(|e| panic!("PostgreSQL {major}: {e}"));
        let version = pg.sql("SHOW server_version_num");
        assert!(version.starts_with(&major.to_string()), "{version}");
        capture_matches_postgresql_and_replays(&pg);
    }
}

/// pgbench runs while capture watches; the captured figures match
/// PostgreSQL's counters and pgbench's report, the workload replays in
/// `model`, and an idle database and missing privileges are clear errors.
fn capture_matches_postgresql_and_replays(pg: &Pg) {
    let out = pg
        .command("pgbench")
        .args(pg.conn_args())
        .args(["-i", "-s", "2", "-q", "postgres"])
        .output()
        .unwrap();
    assert!(out.status.success(), "pgbench -i: {}", stderr(&out));

    // pgbench for 10 s; capture 6 s of it, from 1 s in. The capture reads
    // the server's CPU from its processes at its start and end, and a
    // backend that exits first takes its CPU with it: pgbench must
    // outlast the capture even when a loaded host starts it late.
    let pgbench = pg
        .command("pgbench")
        .args(pg.conn_args())
        .args(["-c", "4", "-j", "2", "-T", "10", "postgres"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pgbench = KillOnDrop(Some(pgbench));
    std::thread::sleep(Duration::from_secs(1));
    let dir = pg.base.path();
    let json = dir.join("mine.json");
    let figures_path = dir.join("figures.json");
    let before = wal_and_commits(pg);
    let out = pgiosim()
        .args([
            "capture",
            "--dsn",
            &pg.dsn("postgres"),
            "-T",
            "6s",
            "-P",
            "2",
            "-o",
        ])
        .arg(&json)
        .arg("--json")
        .arg(&figures_path)
        .output()
        .unwrap();
    let after = wal_and_commits(pg);
    assert!(
        out.status.success(),
        "capture failed: {}\n{}",
        stderr(&out),
        pg.log_tail()
    );
    let summary = String::from_utf8_lossy(&out.stdout).into_owned();
    common::note!("{}{summary}", stderr(&out));
    let bench = pgbench.0.take().unwrap().wait_with_output().unwrap();
    let bench_out = String::from_utf8_lossy(&bench.stdout).into_owned();
    assert!(bench.status.success(), "pgbench: {}", stderr(&bench));
    let pgbench_tps: f64 = bench_out
        .lines()
        .find_map(|l| l.strip_prefix("tps = "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no tps in pgbench's output:\n{bench_out}"));

    let figures: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&figures_path).unwrap()).unwrap();
    let f = |k: &str| {
        figures[k]
            .as_f64()
            .unwrap_or_else(|| panic!("{k} missing: {figures}"))
    };
    common::note!("pgbench: tps {pgbench_tps:.1}");
    within("tps against pgbench's", f("tps"), pgbench_tps, 0.25);
    let wal_per_tx = (after.0 - before.0) / (after.1 - before.1);
    common::note!(
        "WAL around the capture (pg_stat_wal; 13: the insert position): {wal_per_tx:.1} B/tx; captured {:.1} B/tx",
        f("wal_bytes_per_tx")
    );
    within(
        "WAL bytes per transaction against pg_stat_wal",
        f("wal_bytes_per_tx"),
        wal_per_tx,
        0.25,
    );
    // TPC-B: 3 updates, 1 insert and 4 fetched rows per transaction.
    within("updates per transaction", f("tup_updated_per_tx"), 3.0, 0.1);
    within(
        "inserts per transaction",
        f("tup_inserted_per_tx"),
        1.0,
        0.1,
    );
    assert_eq!(f("clients"), 4.0, "{figures}");
    // The server runs on this host: its CPU comes from /proc, and the
    // workload's statement CPU from it.
    assert!(
        figures["cpu_from"].as_str().unwrap_or("").contains("/proc"),
        "{figures}"
    );
    // Some CPU, and no more than the host's cores could give in the
    // capture's seconds (plus a clock tick a process).
    let cpu_s = f("cpu_us_per_tx") * f("commits") / 1e6;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    assert!(
        cpu_s > 0.0 && cpu_s <= cores * f("seconds") + 0.5,
        "{cpu_s} CPU seconds: {figures}"
    );
    if pg.major() >= 14 {
        // fsync=off here, so WAL writes but no syncs.
        assert!(f("wal_writes_per_tx") > 0.0, "{figures}");
    } else {
        // 13 counts no WAL writes; its WAL bytes come from the LSN.
        assert!(figures["wal_writes_per_tx"].is_null(), "{figures}");
        assert_eq!(
            figures["wal_bytes_from"], "pg_current_wal_lsn()",
            "{figures}"
        );
    }
    // pgbench's SELECT by key: one index read per transaction besides the
    // updates (tellers and branches are updated by sequential scans here).
    let spec_reads = fs::read_to_string(&json)
        .unwrap()
        .matches("\"read\": {")
        .count();
    assert_eq!(spec_reads, 1);

    // The workload file and its .conf.
    let spec_text = fs::read_to_string(&json).unwrap();
    common::note!("{spec_text}");
    let conf = dir.join("mine.conf");
    let conf_text = fs::read_to_string(&conf).unwrap();
    common::note!("{conf_text}");
    assert!(
        conf_text.contains("shared_buffers = 16384kB"),
        "{conf_text}"
    );
    assert!(conf_text.contains("# fsync = 'off'"), "{conf_text}");
    let spec: serde_json::Value = serde_json::from_str(&spec_text).unwrap();
    assert!(
        spec["sources"]["cpu_us_per_statement"]
            .as_str()
            .unwrap_or("")
            .contains("captured"),
        "{spec_text}"
    );
    assert!(
        spec["sources"]["observed.transactions"]
            .as_str()
            .unwrap()
            .contains("xact_commit")
    );
    assert!(
        summary.contains("replay: pgiosim run --workload"),
        "{summary}"
    );

    // It replays in model, with the captured settings.
    let model_json = dir.join("model.json");
    let out = pgiosim()
        .args(["model", "--workload"])
        .arg(&json)
        .arg("--config")
        .arg(&conf)
        .args([
            "-s", "1", "-c", "4", "-T", "5", "-q", "--seed", "1", "--json",
        ])
        .arg(&model_json)
        .output()
        .unwrap();
    assert!(out.status.success(), "model: {}", stderr(&out));
    common::note!("{}", String::from_utf8_lossy(&out.stdout));
    let result: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&model_json).unwrap()).unwrap();
    assert!(result["summary"]["tps"].as_f64().unwrap() > 0.0);
    let model_wal = result["io"]["wal_bytes_per_tx"].as_f64().unwrap();
    common::note!(
        "model WAL {model_wal:.0} B/tx; captured {:.0} B/tx ({:.0} without full-page images)",
        f("wal_bytes_per_tx"),
        f("wal_bytes_without_fpi_per_tx")
    );
    // The records (without images) are replayed as observed; images come on top.
    assert!(
        model_wal >= 0.9 * f("wal_bytes_without_fpi_per_tx"),
        "model {model_wal} B/tx"
    );

    // An idle database: nothing to reproduce.
    let out = pgiosim()
        .args([
            "capture",
            "--dsn",
            &pg.dsn("postgres"),
            "-T",
            "1",
            "-q",
            "-o",
        ])
        .arg(dir.join("idle.json"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{}",
        stderr(&out),
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr(&out).contains("no transaction committed"),
        "{}",
        stderr(&out)
    );
    assert!(!dir.join("idle.json").exists());

    // Missing privileges: a role that may not read pg_stat_wal (13, which
    // has none: pg_stat_bgwriter, where its checkpoint figures are).
    let view = if pg.major() >= 14 {
        "pg_stat_wal"
    } else {
        "pg_stat_bgwriter"
    };
    pg.sql("CREATE ROLE nopriv LOGIN");
    pg.sql(&format!("REVOKE SELECT ON {view} FROM PUBLIC"));
    let out = pgiosim()
        .args(["capture", "--dsn", &pg.dsn("nopriv"), "-T", "1", "-q", "-o"])
        .arg(dir.join("nopriv.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains("missing privileges") && e.contains(view) && e.contains("pg_monitor"),
        "{e}"
    );
    common::note!("{e}");
}

fn bad_dsn_is_a_usage_error() {
    let out = pgiosim()
        .args([
            "capture",
            "--dsn",
            "host=/nonexistent-dir-for-pgiosim port=1",
            "-T",
            "1",
            "-o",
            "/nonexistent-dir-for-pgiosim/x.json",
        ])
        .output()
        .unwrap();
    // The output's directory is checked first: bad input, exit code 2.
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("/nonexistent-dir-for-pgiosim does not exist"),
        "{}",
        stderr(&out)
    );
    let tmp = tempfile::tempdir().unwrap();
    let out = pgiosim()
        .args([
            "capture",
            "--dsn",
            "postgres://u:hunter2@localhost:notaport/db",
            "-T",
            "1",
            "-o",
        ])
        .arg(tmp.path().join("x.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(e.contains("--dsn") && e.contains("port"), "{e}");
    assert!(!e.contains("hunter2"), "the password is not echoed: {e}");
}

fn refused_connections_name_the_socket_or_host_and_port() {
    let tmp = tempfile::tempdir().unwrap();
    let sockdir = tmp.path().join("nosocket");
    fs::create_dir(&sockdir).unwrap();
    let out = pgiosim()
        .args(["capture", "-T", "1", "--dsn"])
        .arg(format!(
            "host={} port=5999 user=x dbname=x",
            sockdir.display()
        ))
        .arg("-o")
        .arg(tmp.path().join("x.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = stderr(&out);
    let socket = format!("socket {}/.s.PGSQL.5999", sockdir.display());
    assert!(e.contains("cannot connect") && e.contains(&socket), "{e}");

    // A TCP port on the loopback where nothing listens.
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let out = pgiosim()
        .args(["capture", "-T", "1", "--dsn"])
        .arg(format!("postgres://x@127.0.0.1:{port}/x"))
        .arg("-o")
        .arg(tmp.path().join("x.json"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let e = stderr(&out);
    assert!(
        e.contains(&format!("host 127.0.0.1 port {port}")) && e.contains("refused"),
        "{e}"
    );
    assert!(!tmp.path().join("x.json").exists());
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        capture_of_pgbench_matches_postgresql_and_replays,
        capture_works_on_every_installed_release,
        bad_dsn_is_a_usage_error,
        refused_connections_name_the_socket_or_host_and_port,
    ])
}
