//! What `pgiosim capture` does: read a live PostgreSQL's statistics over an
//! interval and turn them into a workload file (and a postgresql.conf) of
//! the same shape, for `run` and `model` to replay on another disk.
//!
//! Read-only: the session sets `default_transaction_read_only`, each sample
//! is a `READ ONLY` transaction, and only statistics views, `pg_settings` and
//! size functions are read. The queries depend on the server's version
//! (`queries.rs`); turning the counters into a workload is pure (`build.rs`).

pub mod build;
pub mod proc_cpu;
pub mod queries;
pub mod sample;
pub mod watchdog;

use std::error::Error as _;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow};
use postgres::config::Host;
use postgres::{Config, NoTls};

use crate::error::UsageError;
use crate::stop::Stop;
use build::{Captured, Figures, INFO_SETTINGS, Observation, ServerSetting, TableSizes};
use queries::{Queries, SETTINGS_QUERY, VERSION_QUERY};
use sample::{Delta, Sample};

fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// An error and its causes on one line.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let s = c.to_string();
        if !text.contains(&s) {
            text.push_str(": ");
            text.push_str(&s);
        }
        cause = c.source();
    }
    text
}

/// Parse the DSN and fill what it leaves out as libpq would. A DSN that does
/// not parse is a usage error naming what is wrong (never echoing a password).
pub fn parse_dsn(dsn: &str) -> Result<Config> {
    let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
    let mut config = if dsn.trim().is_empty() {
        Config::new()
    } else {
        Config::from_str(dsn).map_err(|e| {
            let what = e.source().map_or(e.to_string(), |c| c.to_string());
            usage(format!(
                "--dsn: not a connection string: {what}; write postgres://user@host:port/dbname or key=value pairs such as \"host=/var/run/postgresql dbname=app\""
            ))
        })?
    };
    if config.get_hosts().is_empty() {
        match env("PGHOST") {
            Some(h) => {
                config.host(&h);
            }
            None if Path::new("/var/run/postgresql").is_dir() => {
                config.host_path("/var/run/postgresql");
            }
            None => {
                config.host("localhost");
            }
        }
    }
    if config.get_ports().is_empty()
        && let Some(p) = env("PGPORT")
    {
        let port: u16 = p
            .parse()
            .map_err(|_| usage(format!("PGPORT={p}: not a port number")))?;
        config.port(port);
    }
    if config.get_user().is_none()
        && let Some(u) = env("PGUSER")
    {
        config.user(&u);
    }
    if config.get_dbname().is_none()
        && let Some(d) = env("PGDATABASE")
    {
        config.dbname(&d);
    }
    if config.get_password().is_none()
        && let Some(p) = env("PGPASSWORD")
    {
        config.password(p);
    }
    if config.get_application_name().is_none() {
        config.application_name("pgiosim capture");
    }
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(DEFAULT_CONNECT_TIMEOUT);
    }
    Ok(config)
}

/// Where a config points, for messages: "socket /dir/.s.PGSQL.5432" or
/// "host db.example port 5432".
pub fn describe_target(config: &Config) -> String {
    let ports = config.get_ports();
    let port = |i: usize| ports.get(i).or(ports.first()).copied().unwrap_or(5432);
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .enumerate()
        .map(|(i, h)| match h {
            Host::Tcp(name) => format!("host {name} port {}", port(i)),
            Host::Unix(dir) => format!("socket {}/.s.PGSQL.{}", dir.display(), port(i)),
        })
        .collect();
    hosts.join(" or ")
}

/// The longest a statistics query may take before capture gives up on the
/// server: the session's statement_timeout (30 s, set in [`connect`]) plus
/// ten seconds for the network.
pub const QUERY_TIMEOUT: Duration = Duration::from_secs(40);

/// How long connecting (TCP, startup handshake, authentication, the
/// session's SETs) may take: the DSN's connect_timeout, as libpq takes it.
fn connect_limit(config: &Config) -> Duration {
    config
        .get_connect_timeout()
        .copied()
        .filter(|t| !t.is_zero())
        .unwrap_or(DEFAULT_CONNECT_TIMEOUT)
}

/// When the DSN gives no connect_timeout.
const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Connect, read-only, with errors that say where and why; bounded by the
/// connect timeout (see [`watchdog`]).
pub fn connect(config: &Config) -> Result<postgres::Client> {
    let target = describe_target(config);
    let _deadline = watchdog::arm(format!("connecting to {target}"), connect_limit(config));
    let mut client = config.connect(NoTls).map_err(|e| match e.as_db_error() {
        Some(db) => anyhow!(
            "cannot connect to PostgreSQL at {target}: the server said: {}: {}",
            db.severity(),
            db.message()
        ),
        None => {
            let text = chain(&e);
            let hint = if text.contains("TLS") {
                "; capture connects without TLS: use sslmode=prefer or sslmode=disable"
            } else if text.contains("refused") || text.contains("No such file") {
                "; is the server running and listening there?"
            } else {
                ""
            };
            anyhow!("cannot connect to PostgreSQL at {target}: {text}{hint}")
        }
    })?;
    client
        .batch_execute(
            "SET default_transaction_read_only = on; SET statement_timeout = '30s'; \
             SET lock_timeout = '2s'",
        )
        .map_err(|e| anyhow!("cannot set up the read-only session: {}", chain(&e)))?;
    Ok(client)
}

/// The output's companion .conf path: x.json → x.conf.
pub fn conf_path(output: &Path) -> PathBuf {
    output.with_extension("conf")
}

/// What a capture saw over its interval: the observation, and the server's
/// processes' CPU at its start and end where the server runs on this host.
pub struct Watched {
    pub obs: Observation,
    pub cpu_start: Option<proc_cpu::Reading>,
    pub cpu_end: Option<proc_cpu::Reading>,
}

/// Watch the server `config` points at for `duration`, read-only: its
/// version and settings, its statistics at the start and the end (and every
/// `progress`, printed as a line unless `quiet`), its table sizes; with
/// `local_cpu`, its processes' CPU from /proc when it runs on this host.
/// Ended early by `stop`, the observation is partial.
pub fn watch(
    config: &Config,
    duration: Duration,
    progress: Option<Duration>,
    local_cpu: bool,
    quiet: bool,
    stop: &Stop,
) -> Result<Watched> {
    let target = describe_target(config);
    watchdog::start(stop);
    let mut client = connect(config)?;
    let postmaster = local_cpu.then(|| local_postmaster(&mut client)).flatten();
    let asking = format!("reading statistics from {target}");
    let server = read_server(&mut client, &asking)?;
    let queries = queries::queries_for(server.version_num)
        .with_context(|| format!("the server at {target}"))?;
    if !quiet {
        server.announce(&target, duration);
    }

    let mut own_commits = own_commits_before_start(&mut client, &queries, &asking)?;
    let start = {
        let _deadline = watchdog::arm(&asking, QUERY_TIMEOUT);
        sample::take(&mut client, &queries)?
    };
    let cpu_start = postmaster.map(|pm| proc_cpu::read(Path::new("/proc"), pm));
    let mut interval = Interval {
        client: &mut client,
        queries: &queries,
        asking: &asking,
        start: &start,
        connections: Connections::at_start(&start),
        quiet,
    };
    let (progress_samples, partial) = interval.wait_out(duration, progress, stop)?;
    own_commits += progress_samples;
    let mut connections = interval.connections;
    let _deadline = watchdog::arm(&asking, QUERY_TIMEOUT);
    let end = sample::take(&mut client, &queries)?;
    let cpu_end = postmaster.map(|pm| proc_cpu::read(Path::new("/proc"), pm));
    connections.saw(&end);
    let sizes = sizes_or_pgbench_width(&mut client, &queries, quiet);
    drop(client);
    drop(_deadline);

    let obs = Observation {
        version_num: server.version_num,
        version: server.version.clone(),
        database: server.database,
        server: target,
        started_at: start.at_text.clone(),
        delta: Delta::between(&start, &end)?,
        own_commits,
        db_size_bytes: end.db_size_bytes,
        sizes,
        settings: server.settings,
        clients: connections.most,
        active_mean: connections.active_mean(),
        wal_io_source: queries.wal_io_source.into(),
        checkpoint_source: queries.checkpoint_source.into(),
        partial,
    };
    Ok(Watched {
        obs,
        cpu_start,
        cpu_end,
    })
}

/// What the server is, read once before the start sample.
struct ServerIdentity {
    version_num: u32,
    version: String,
    database: String,
    settings: Vec<ServerSetting>,
}

impl ServerIdentity {
    /// The line that says what is being watched, after a notice for a
    /// release newer than the views pgiosim knows.
    fn announce(&self, target: &str, duration: Duration) {
        let version = &self.version;
        if !queries::checked(self.version_num) {
            eprintln!(
                "notice: PostgreSQL {version} is newer than 18; reading its statistics views as 18's"
            );
        }
        eprintln!(
            "capture: database {:?} on PostgreSQL {version} at {target}, for {:.0} s",
            self.database,
            duration.as_secs_f64()
        );
    }
}

/// The user tables' sizes, or none (with a notice unless `quiet`) for
/// pgbench's row width to stand in.
fn sizes_or_pgbench_width(
    client: &mut postgres::Client,
    queries: &Queries,
    quiet: bool,
) -> Option<TableSizes> {
    match read_sizes(client, queries) {
        Ok(s) => Some(s),
        Err(e) => {
            if !quiet {
                eprintln!("notice: table sizes not read ({e:#}); assuming pgbench's row width");
            }
            None
        }
    }
}

/// A server on this host: its postmaster, whose processes' CPU /proc shows.
fn local_postmaster(client: &mut postgres::Client) -> Option<u32> {
    client
        .query_one("SELECT pg_backend_pid()", &[])
        .ok()
        .and_then(|r| r.try_get::<_, i32>(0).ok())
        .and_then(|pid| proc_cpu::local_postmaster(Path::new("/proc"), pid as u32))
}

/// The server's version, database and the settings pgiosim reads, in one
/// read-only transaction.
fn read_server(client: &mut postgres::Client, asking: &str) -> Result<ServerIdentity> {
    let _deadline = watchdog::arm(asking, QUERY_TIMEOUT);
    let mut tx = client
        .build_transaction()
        .read_only(true)
        .start()
        .map_err(|e| anyhow!("cannot start a read-only transaction: {}", chain(&e)))?;
    let row = sample::query_one(&mut tx, &VERSION_QUERY, &[])?;
    let version_num: i32 = row.try_get(0)?;
    let version: String = row.try_get(1)?;
    let database: String = row.try_get(2)?;
    let names: Vec<&str> = crate::settings::Settings::NAMES
        .iter()
        .chain(INFO_SETTINGS)
        .copied()
        .collect();
    let settings = sample::query(&mut tx, &SETTINGS_QUERY, &[&names])?
        .iter()
        .map(|r| {
            Ok(ServerSetting {
                name: r.try_get(0)?,
                setting: r.try_get(1)?,
                unit: r.try_get(2)?,
            })
        })
        .collect::<Result<Vec<_>>>()?;
    tx.commit()?;
    Ok(ServerIdentity {
        version_num: version_num as u32,
        version,
        database,
        settings,
    })
}

/// The capture's own transactions before the start (the session's SETs,
/// the version and settings): they must be counted before the start sample,
/// so that only the samples themselves need subtracting.
fn own_commits_before_start(
    client: &mut postgres::Client,
    queries: &Queries,
    asking: &str,
) -> Result<i64> {
    Ok(match &queries.force_flush {
        Some(q) => {
            let _deadline = watchdog::arm(asking, QUERY_TIMEOUT);
            let mut tx = client.build_transaction().read_only(true).start()?;
            sample::query(&mut tx, q, &[])?;
            tx.commit()?;
            1
        }
        None => {
            // Before 15, a backend reports at most every 500 ms: the two
            // earlier transactions go with the start sample's report.
            std::thread::sleep(Duration::from_millis(600));
            3
        }
    })
}

/// The client connections the samples saw: the most at once, and the
/// active ones summed for their mean.
struct Connections {
    most: i64,
    active_sum: f64,
    samples: u32,
}

impl Connections {
    fn at_start(start: &Sample) -> Self {
        Self {
            most: start.clients_connected,
            active_sum: start.clients_active as f64,
            samples: 1,
        }
    }

    fn saw(&mut self, s: &Sample) {
        self.most = self.most.max(s.clients_connected);
        self.active_sum += s.clients_active as f64;
        self.samples += 1;
    }

    fn active_mean(&self) -> f64 {
        self.active_sum / self.samples as f64
    }
}

/// The capture's interval between its start and end samples.
struct Interval<'a> {
    client: &'a mut postgres::Client,
    queries: &'a Queries,
    asking: &'a str,
    start: &'a Sample,
    connections: Connections,
    quiet: bool,
}

impl Interval<'_> {
    /// Wait out `duration`, sampling every `progress` (a line each unless
    /// quiet): the progress samples taken, and whether `stop` ended it early.
    fn wait_out(
        &mut self,
        duration: Duration,
        progress: Option<Duration>,
        stop: &Stop,
    ) -> Result<(i64, bool)> {
        let started = Instant::now();
        let mut last = self.start.clone();
        let mut next_progress = progress.map(|p| started + p);
        let mut taken = 0;
        loop {
            let now = Instant::now();
            if now >= started + duration {
                return Ok((taken, false));
            }
            if stop.is_set() {
                return Ok((taken, true));
            }
            if let Some(at) = next_progress
                && now >= at
            {
                let s = {
                    let _deadline = watchdog::arm(self.asking, QUERY_TIMEOUT);
                    sample::take(self.client, self.queries)?
                };
                taken += 1;
                self.connections.saw(&s);
                if !self.quiet {
                    eprintln!("{}", progress_line(self.start, &last, &s));
                }
                last = s;
                next_progress = Some(at + progress.unwrap());
                continue;
            }
            let until = next_progress
                .unwrap_or(started + duration)
                .min(started + duration);
            std::thread::sleep(
                until
                    .saturating_duration_since(now)
                    .min(Duration::from_millis(100)),
            );
        }
    }
}

/// The server's CPU over the capture into the workload's figures
/// (`workload::server_cpu`), and into the observed figures.
pub fn server_cpu_into(
    c: &mut Captured,
    seconds: f64,
    from: &str,
    speed: Option<f64>,
    quiet: bool,
) -> Result<()> {
    let f = c.figures.clone();
    let commits = f.commits.max(1) as f64;
    let m = crate::workload::server_cpu::ServerCpu {
        cpu_us_per_tx: seconds / commits * 1e6,
        speed: speed.unwrap_or(1.0),
        reads_per_tx: f.blks_read_per_tx,
        pages_written_per_tx: f.buffers_checkpoint_per_tx
            + f.buffers_clean_per_tx
            + f.buffers_backend_per_tx.unwrap_or(0.0),
        wal_bytes_per_tx: f.wal_bytes_per_tx,
    };
    c.figures.cpu_us_per_tx = Some(m.cpu_us_per_tx);
    c.figures.cpu_from = Some(from.to_string());
    let source = format!(
        "captured: {:.0} us a transaction ({from}) over {:.0} s, pg_stat_database blks_read, pg_stat_bgwriter buffers and pg_stat_wal wal_bytes per transaction{}",
        m.cpu_us_per_tx,
        f.seconds,
        if speed.is_none() {
            "; the server's CPU speed not given (--instance or --cpu-speed): taken as the EPYC 9454P's"
        } else {
            ""
        }
    );
    match crate::workload::server_cpu::apply(&c.spec, &m, &source) {
        Ok((spec, _)) => {
            c.spec_json = serde_json::to_string_pretty(&spec)? + "\n";
            c.spec = spec;
        }
        Err(e) => {
            if !quiet {
                eprintln!(
                    "notice: the server's CPU ({:.0} us a transaction) not used: {e:#}; the workload keeps pgiosim's default CPU figures",
                    m.cpu_us_per_tx
                );
            }
        }
    }
    Ok(())
}

fn read_sizes(client: &mut postgres::Client, q: &Queries) -> Result<TableSizes> {
    let mut tx = client.build_transaction().read_only(true).start()?;
    let r = sample::query_one(&mut tx, &q.sizes, &[])?;
    let sizes = TableSizes {
        live_rows: r.try_get("live_rows")?,
        heap_bytes: r.try_get("heap_bytes")?,
        index_bytes: r.try_get("index_bytes")?,
    };
    tx.commit()?;
    Ok(sizes)
}

/// A pgbench-style progress line over the last interval.
fn progress_line(start: &Sample, last: &Sample, now: &Sample) -> String {
    let dt = (now.at_s - last.at_s).max(1e-3);
    // Less the previous sample's own commit.
    let tx = (now.xact_commit - last.xact_commit - 1).max(0) as f64;
    let wal = match (now.wal_bytes, last.wal_bytes) {
        (Some(a), Some(b)) => a - b,
        _ => now.wal_lsn_bytes - last.wal_lsn_bytes,
    };
    let reads = (now.blks_read - last.blks_read) as f64;
    format!(
        "progress: {:.1} s, {:.1} tps, {:.0} B WAL/tx, {:.2} blocks read/tx, {} clients",
        now.at_s - start.at_s,
        tx / dt,
        if tx > 0.0 { wal as f64 / tx } else { 0.0 },
        if tx > 0.0 { reads / tx } else { 0.0 },
        now.clients_connected
    )
}

/// What capture prints: the observed shape and how to replay it.
pub fn summary(c: &Captured, obs: &Observation, json_name: &str, conf_name: &str) -> String {
    let f = &c.figures;
    let mut s = format!(
        "captured {:.1} s of database {:?} on PostgreSQL {} ({}){}\n",
        f.seconds,
        f.database,
        obs.version,
        obs.server,
        if f.partial {
            ", interrupted before the end"
        } else {
            ""
        }
    );
    s.push_str(&activity_lines(f));
    s.push_str(&page_lines(f));
    s.push_str(&format!(
        "wrote {json_name} ({} transaction type{}) and {conf_name}\n",
        c.spec.transactions.len(),
        if c.spec.transactions.len() == 1 {
            ""
        } else {
            "s"
        }
    ));
    s.push_str(&format!(
        "replay: pgiosim run --workload {json_name} --config {conf_name} -s {} -c {}   (add -R {:.0} for the observed rate; `model` takes the same flags)\n",
        c.scale, c.clients, f.tps
    ));
    s
}

/// One line of the summary: the figure's name in a column, then its value.
fn line(s: &mut String, k: &str, v: String) {
    s.push_str(&format!("  {k:<18}{v}\n"));
}

/// The summary's transactions and WAL lines.
fn activity_lines(f: &Figures) -> String {
    let mut s = String::new();
    line(
        &mut s,
        "transactions",
        format!(
            "{:.1} tps ({} commits, {} rollbacks), {} clients connected, {:.1} active",
            f.tps, f.commits, f.rollbacks, f.clients, f.active_clients_mean
        ),
    );
    line(
        &mut s,
        "WAL",
        format!(
            "{:.0} B/tx ({}){}; {:.0} B/tx without images",
            f.wal_bytes_per_tx,
            f.wal_bytes_from,
            match (f.wal_fpi_per_tx, f.wal_records_per_tx) {
                (Some(fpi), Some(r)) =>
                    format!(", {fpi:.3} full-page images and {r:.2} records per tx"),
                _ => ", full-page images not counted before PostgreSQL 14".into(),
            },
            f.wal_bytes_without_fpi_per_tx
        ),
    );
    if let (Some(w), Some(y)) = (f.wal_writes_per_tx, f.wal_syncs_per_tx) {
        line(
            &mut s,
            "WAL writes/syncs",
            format!("{w:.3} writes, {y:.3} syncs per transaction"),
        );
    }
    s
}

/// The summary's lines on pages: blocks, rows, checkpoints and the database's size.
fn page_lines(f: &Figures) -> String {
    let mut s = String::new();
    line(
        &mut s,
        "blocks",
        format!(
            "{:.2} read, {:.2} hit per transaction{}",
            f.blks_read_per_tx,
            f.blks_hit_per_tx,
            f.hit_ratio
                .map_or(String::new(), |h| format!(" ({:.2}% hits)", h * 100.0))
        ),
    );
    line(
        &mut s,
        "rows",
        format!(
            "{:.2} updated, {:.2} inserted, {:.2} deleted, {:.2} fetched per transaction{}",
            f.tup_updated_per_tx,
            f.tup_inserted_per_tx,
            f.tup_deleted_per_tx,
            f.tup_fetched_per_tx,
            f.hot_update_share.map_or(String::new(), |h| format!(
                " ({:.1}% HOT updates)",
                h * 100.0
            ))
        ),
    );
    line(
        &mut s,
        "checkpoints",
        format!(
            "{} ({:.3} buffers written by checkpoints, {:.3} by the bgwriter per transaction)",
            f.checkpoints, f.buffers_checkpoint_per_tx, f.buffers_clean_per_tx
        ),
    );
    line(
        &mut s,
        "database",
        format!(
            "{} (the data table at -s 1)",
            crate::units::pretty_bytes(f.db_size_bytes.max(0) as u64)
        ),
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage_message(dsn: &str) -> String {
        let e = parse_dsn(dsn).unwrap_err();
        assert!(e.downcast_ref::<UsageError>().is_some(), "{e:#}");
        format!("{e:#}")
    }

    #[test]
    fn bad_dsns_are_usage_errors_naming_the_problem() {
        let e = usage_message("postgres://u:secret@host:notaport/db");
        assert!(e.contains("port"), "{e}");
        assert!(!e.contains("secret"), "{e}");
        let e = usage_message("host=/tmp port=5432 nonsense_option=1");
        assert!(e.contains("nonsense_option"), "{e}");
        let e = usage_message("mysql://x");
        assert!(e.contains("--dsn"), "{e}");
    }

    #[test]
    fn targets_name_the_socket_or_the_host_and_port() {
        let c = parse_dsn("host=/tmp/sockdir port=5439 dbname=x").unwrap();
        assert_eq!(describe_target(&c), "socket /tmp/sockdir/.s.PGSQL.5439");
        let c = parse_dsn("postgres://me@db.example:6543/app").unwrap();
        assert_eq!(describe_target(&c), "host db.example port 6543");
        assert_eq!(c.get_application_name(), Some("pgiosim capture"));
        let c = parse_dsn("postgres://me@db.example/app?application_name=mine").unwrap();
        assert_eq!(c.get_application_name(), Some("mine"));
        assert_eq!(describe_target(&c), "host db.example port 5432");
    }

    #[test]
    fn conf_goes_beside_the_workload() {
        assert_eq!(conf_path(Path::new("a/x.json")), Path::new("a/x.conf"));
        assert_eq!(conf_path(Path::new("x")), Path::new("x.conf"));
    }
}
