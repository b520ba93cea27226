//! A real pgbench run read back: pgbench's own report, and the statistics a
//! harness sampled around it (pg_stat_database, pg_stat_wal,
//! pg_stat_activity's wait events, the kernel's schedstat and cpuacct), turned
//! into the shares of pgiosim's breakdown buckets.
//!
//! The mapping is the one `scripts/pgbench-compare` validates the model
//! with; its reasons are PostgreSQL's:
//! * `page_read`: `blk_read_time` (track_io_timing) over the clients' time:
//!   the data-file read syscalls, their CPU included, as pgiosim's bucket.
//! * `wal_fsync`: the commit's wait, from pgbench -r's per-statement
//!   latencies (END's less BEGIN's, a bare round trip), plus the share of
//!   active samples in IO:DataFileWrite (a backend writing a dirty victim
//!   after flushing WAL: pgiosim's buffer_wait). Without statement
//!   latencies, the active samples in IO:WALSync, IO:WALWrite,
//!   LWLock:WALWrite and IO:DataFileWrite.
//! * `lock_wait`: active samples in a heavyweight lock (Lock:*), scaled to
//!   the active time pg_stat_database counts.
//! * `sync_rep`: active samples in IPC:SyncRep.
//! * `cpu`: the backends' and pgbench's threads' time on a CPU or waiting
//!   for one (schedstat), or else their cpuacct time, over the clients'
//!   time. pgbench's own CPU is where a loopback round trip goes.
//!
//! What none of these covers is `unattributed` (sampling error, and waits
//! the statistics do not name). The sources overlap, so the shares can sum
//! above 1 (pgbench's threads run while their backends wait for a lock);
//! `unattributed` is then 0.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use serde::Deserialize;

/// pgbench's report (its standard output), as pgbench 13 to 18 print it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PgbenchReport {
    /// "tpcb-like", "simple-update", "select-only", or the script's text.
    pub workload: String,
    /// What pgbench printed after "transaction type:".
    pub transaction_type: String,
    pub scale: u64,
    pub query_mode: String,
    pub clients: u32,
    pub threads: u32,
    pub duration_s: Option<f64>,
    pub transactions_per_client: Option<u64>,
    pub transactions: u64,
    pub failed: u64,
    pub latency_average_ms: f64,
    pub latency_stddev_ms: Option<f64>,
    pub tps: f64,
    /// `-r`: each command's average latency (ms), in the script's order.
    pub statements: Vec<(String, f64)>,
}

fn field<'a>(text: &'a str, prefix: &str) -> Option<&'a str> {
    text.lines()
        .find_map(|l| l.trim_start().strip_prefix(prefix))
        .map(str::trim)
}

fn number<T: std::str::FromStr>(text: &str, prefix: &str) -> Result<Option<T>> {
    match field(text, prefix) {
        None => Ok(None),
        Some(v) => {
            // "0 (0.000%)", "10 s", "0.747 ms": the first word is the figure.
            let first = v.split_whitespace().next().unwrap_or("");
            figure(first, prefix).map(Some)
        }
    }
}

/// `word`, a figure of pgbench's `prefix` line. Every figure pgbench prints
/// is a finite count, rate or time, never negative: "NaN", "inf" or "-5"
/// is a damaged report (and NaN would be written as JSON null, which
/// `compare` then refuses), so it is refused here, naming the line.
fn figure<T: std::str::FromStr>(word: &str, prefix: &str) -> Result<T> {
    if let Ok(x) = word.parse::<f64>()
        && !(x.is_finite() && x >= 0.0)
    {
        bail!("pgbench's \"{prefix}\" line has {word:?}, not a finite figure of 0 or more");
    }
    match word.parse() {
        Ok(n) => Ok(n),
        Err(_) => bail!("pgbench's \"{prefix}\" line has {word:?}, not a number"),
    }
}

/// The builtin script's name from pgbench's "transaction type" line.
fn builtin_name(transaction_type: &str) -> Option<&'static str> {
    match transaction_type {
        "<builtin: TPC-B (sort of)>" => Some("tpcb-like"),
        "<builtin: simple update>" => Some("simple-update"),
        "<builtin: select only>" => Some("select-only"),
        _ => None,
    }
}

/// Read pgbench's report. Errors name the line that is missing or wrong.
pub fn parse_report(text: &str) -> Result<PgbenchReport> {
    let need = |v: Option<f64>, what: &str| -> Result<f64> {
        v.ok_or_else(|| {
            anyhow::anyhow!(
                "no \"{what}\" line: is this pgbench's standard output of a finished run?"
            )
        })
    };
    let transaction_type = field(text, "transaction type:").unwrap_or("").to_string();
    let tps_line = text
        .lines()
        .find(|l| l.starts_with("tps = ") && !l.contains("including"))
        .or_else(|| text.lines().find(|l| l.starts_with("tps = ")));
    let tps = match tps_line {
        Some(l) => match l["tps = ".len()..].split_whitespace().next() {
            Some(v) => Some(figure::<f64>(v, "tps =")?),
            None => None,
        },
        None => None,
    };
    let mut statements = Vec::new();
    if let Some(rest) = text.split("statement latencies in milliseconds").nth(1) {
        for line in rest.lines().skip(1) {
            let mut words = line.split_whitespace();
            let Some(ms) = words.next().and_then(|w| w.parse::<f64>().ok()) else {
                break;
            };
            if !(ms.is_finite() && ms >= 0.0) {
                bail!(
                    "pgbench's statement latency line {line:?} has {ms}, not a finite time of 0 or more"
                );
            }
            // pgbench 15+ prints the failures' count after the latency.
            let tail: Vec<&str> = words.collect();
            let tail = match tail.first() {
                Some(w) if w.parse::<u64>().is_ok() && tail.len() > 1 => &tail[1..],
                _ => &tail[..],
            };
            statements.push((tail.join(" "), ms));
        }
    }
    let transactions: Option<u64> = number(text, "number of transactions actually processed:")?;
    let Some(transactions) = transactions else {
        bail!(
            "no \"number of transactions actually processed\" line: is this pgbench's standard output of a finished run?"
        );
    };
    let report = PgbenchReport {
        workload: builtin_name(&transaction_type)
            .map_or_else(|| transaction_type.clone(), str::to_string),
        transaction_type,
        scale: number(text, "scaling factor:")?.unwrap_or(0),
        query_mode: field(text, "query mode:").unwrap_or("simple").to_string(),
        clients: need(number(text, "number of clients:")?, "number of clients")? as u32,
        threads: number(text, "number of threads:")?.unwrap_or(1),
        duration_s: number(text, "duration:")?,
        transactions_per_client: number(text, "number of transactions per client:")?,
        transactions,
        failed: number(text, "number of failed transactions:")?.unwrap_or(0),
        latency_average_ms: need(number(text, "latency average =")?, "latency average")?,
        latency_stddev_ms: number(text, "latency stddev =")?,
        tps: need(tps, "tps =")?,
        statements,
    };
    if report.clients == 0 {
        bail!("pgbench's report says 0 clients");
    }
    Ok(report)
}

/// The statistics file: what a harness sampled around the pgbench run.
/// Every part is optional; what is missing leaves its bucket out.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Statistics {
    /// Differences between snapshots taken before and after the run.
    pub stats_delta: StatsDelta,
    /// pg_stat_activity sampled during the run.
    pub samples: Samples,
    /// cgroup counters of the server's and pgbench's processes.
    pub cgroups: Cgroups,
}

/// pg_stat_* differences over the run (PostgreSQL's column names).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct StatsDelta {
    /// pg_stat_database: active_time, blk_read_time (ms), blks_read...
    pub db: BTreeMap<String, f64>,
    /// pg_stat_wal: wal_bytes, wal_fpi, wal_records, wal_sync, wal_sync_time...
    pub wal: BTreeMap<String, f64>,
    /// pg_stat_bgwriter (15 and before): checkpoints_timed, checkpoints_req,
    /// buffers_checkpoint, buffers_clean, buffers_backend.
    pub bgwriter: BTreeMap<String, f64>,
    /// pg_stat_checkpointer (17+): num_timed, num_requested, buffers_written.
    pub checkpointer: BTreeMap<String, f64>,
}

/// Wait-event samples: "state|type:event" → how many times a backend was
/// seen so ("active|" is on a CPU; "active|Lock:tuple" waits for a lock).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Samples {
    pub events: BTreeMap<String, u64>,
    pub schedstat: Schedstat,
}

/// /proc/PID/schedstat summed over the backends and pgbench's threads.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Schedstat {
    pub backends: u64,
    pub backend_run_ns: f64,
    pub backend_wait_ns: f64,
    pub pgbench_run_ns: f64,
    pub pgbench_wait_ns: f64,
}

/// cgroup counters.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Cgroups {
    pub postgres: BTreeMap<String, f64>,
    pub client: BTreeMap<String, f64>,
}

/// Wait events that are the commit's or a dirty victim's WAL flush.
const WAL_EVENTS: &[&str] = &[
    "IO:WALSync",
    "IO:WALWrite",
    "LWLock:WALWrite",
    "IO:DataFileWrite",
];

/// Each bucket's share of the transactions' time, and where it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct Shares {
    /// (bucket, share of the latency, 0 to 1), pgiosim's bucket names.
    pub buckets: Vec<(&'static str, f64)>,
    /// "statements" or "samples": where wal_fsync came from.
    pub wal_fsync_source: &'static str,
    /// "schedstat" or "cpuacct".
    pub cpu_source: &'static str,
}

/// The wait-event samples ("state|event" counts) of a run, and the share
/// of the clients' time its backends were active.
struct ActiveSamples<'a> {
    events: &'a BTreeMap<String, u64>,
    active_of_time: f64,
}

impl ActiveSamples<'_> {
    /// The share of the clients' time active backends spent in events
    /// `pred` takes: the active time in the proportion sampled.
    fn share(&self, pred: &dyn Fn(&str) -> bool) -> f64 {
        let split = |k: &str| -> (String, String) {
            let (s, e) = k.split_once('|').unwrap_or((k, ""));
            (s.to_string(), e.to_string())
        };
        let active: u64 = self
            .events
            .iter()
            .filter(|(k, _)| split(k).0 == "active")
            .map(|(_, n)| n)
            .sum();
        if active == 0 {
            return 0.0;
        }
        let n: u64 = self
            .events
            .iter()
            .filter(|(k, _)| {
                let (s, e) = split(k);
                s == "active" && pred(&e)
            })
            .map(|(_, n)| n)
            .sum();
        self.active_of_time * n as f64 / active as f64
    }
}

/// The share of the clients' time on a CPU or queued for one, and where it
/// came from: schedstat where the backends were sampled, else cpuacct.
fn cpu_share(stats: &Statistics, clients_ms: f64) -> (f64, &'static str) {
    let ss = &stats.samples.schedstat;
    if ss.backends > 0 {
        (
            (ss.backend_run_ns + ss.backend_wait_ns + ss.pgbench_run_ns + ss.pgbench_wait_ns)
                / 1e6
                / clients_ms,
            "schedstat",
        )
    } else {
        let ns = stats.cgroups.postgres.get("cpu_ns").copied().unwrap_or(0.0)
            + stats.cgroups.client.get("cpu_ns").copied().unwrap_or(0.0);
        (ns / 1e6 / clients_ms, "cpuacct")
    }
}

/// The buckets' shares of a run of `clients` clients for `duration_s`.
pub fn shares(report: &PgbenchReport, stats: &Statistics, duration_s: f64) -> Result<Shares> {
    let clients_ms = f64::from(report.clients) * duration_s * 1000.0;
    if clients_ms <= 0.0 {
        bail!("the run's length is 0: the shares need the clients' time (--duration)");
    }
    let db = &stats.stats_delta.db;
    let active_of_time = db.get("active_time").copied().unwrap_or(0.0) / clients_ms;
    let samples = ActiveSamples {
        events: &stats.samples.events,
        active_of_time,
    };
    let active_share = |pred: &dyn Fn(&str) -> bool| samples.share(pred);
    let (cpu, cpu_source) = cpu_share(stats, clients_ms);
    let stmt = |prefix: &str| {
        report
            .statements
            .iter()
            .find(|(c, _)| c.to_ascii_uppercase().starts_with(prefix))
            .map(|(_, ms)| *ms)
    };
    let lat = report.latency_average_ms;
    let evict = active_share(&|e| e == "IO:DataFileWrite");
    let (wal_fsync, wal_fsync_source) = match (stmt("BEGIN"), stmt("END")) {
        (Some(b), Some(e)) if lat > 0.0 => ((e - b) / lat + evict, "statements"),
        _ => (active_share(&|e| WAL_EVENTS.contains(&e)), "samples"),
    };
    let mut buckets = vec![
        (
            "page_read",
            db.get("blk_read_time").copied().unwrap_or(0.0) / clients_ms,
        ),
        ("wal_fsync", wal_fsync),
        ("lock_wait", active_share(&|e| e.starts_with("Lock:"))),
    ];
    let sync_rep = active_share(&|e| e == "IPC:SyncRep");
    if sync_rep > 0.0 {
        buckets.push(("sync_rep", sync_rep));
    }
    buckets.push(("cpu", cpu));
    for (_, v) in &mut buckets {
        *v = v.clamp(0.0, 1.0);
    }
    let sum: f64 = buckets.iter().map(|(_, v)| v).sum();
    buckets.push(("unattributed", (1.0 - sum).max(0.0)));
    Ok(Shares {
        buckets,
        wal_fsync_source,
        cpu_source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const PG15: &str = "\
pgbench (15.18 (Debian 15.18-0+deb12u1))
transaction type: <builtin: TPC-B (sort of)>
scaling factor: 10
query mode: simple
number of clients: 8
number of threads: 2
maximum number of tries: 1
duration: 30 s
number of transactions actually processed: 60000
number of failed transactions: 0 (0.000%)
latency average = 4.000 ms
latency stddev = 1.500 ms
initial connection time = 12.345 ms
tps = 2000.123456 (without initial connection time)
statement latencies in milliseconds and failures:
         0.002           0  \\set aid random(1, 100000 * :scale)
         0.100           0  BEGIN;
         0.400           0  UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid;
         1.100           0  END;
";

    #[test]
    fn reads_pgbench_15s_report() {
        let r = parse_report(PG15).unwrap();
        assert_eq!(r.workload, "tpcb-like");
        assert_eq!(r.scale, 10);
        assert_eq!((r.clients, r.threads), (8, 2));
        assert_eq!(r.duration_s, Some(30.0));
        assert_eq!(r.transactions, 60000);
        assert_eq!(r.latency_average_ms, 4.0);
        assert_eq!(r.latency_stddev_ms, Some(1.5));
        assert!((r.tps - 2000.123456).abs() < 1e-9);
        assert_eq!(r.statements.len(), 4);
        assert_eq!(r.statements[1], ("BEGIN;".to_string(), 0.1));
        assert_eq!(r.statements[3], ("END;".to_string(), 1.1));
    }

    #[test]
    fn reads_a_report_without_failures_column() {
        let text = PG15.replace("           0  ", "  ");
        let r = parse_report(&text).unwrap();
        assert_eq!(r.statements[3], ("END;".to_string(), 1.1));
    }

    #[test]
    fn refuses_what_is_not_a_finished_report() {
        let e = parse_report("pgbench: error: connection refused\n").unwrap_err();
        assert!(
            e.to_string().contains("transactions actually processed"),
            "{e}"
        );
        let e = parse_report(&PG15.replace("latency average = 4.000 ms", "latency average = x ms"))
            .unwrap_err();
        assert!(e.to_string().contains("latency average"), "{e}");
    }

    fn stats() -> Statistics {
        serde_json::from_str(
            r#"{
              "stats_delta": {"db": {"active_time": 120000.0, "blk_read_time": 24000.0}},
              "samples": {"events": {"active|": 600, "active|Lock:transactionid": 300,
                                     "active|IO:DataFileWrite": 100, "idle|Client:ClientRead": 50},
                          "schedstat": {"backends": 8, "backend_run_ns": 6.0e10, "backend_wait_ns": 1.2e10,
                                        "pgbench_run_ns": 0.0, "pgbench_wait_ns": 0.0}},
              "cgroups": {"postgres": {"cpu_ns": 1.0}, "client": {"cpu_ns": 1.0}}
            }"#,
        )
        .unwrap()
    }

    fn share(s: &Shares, b: &str) -> f64 {
        s.buckets
            .iter()
            .find(|(n, _)| *n == b)
            .map(|(_, v)| *v)
            .unwrap()
    }

    #[test]
    fn maps_the_statistics_to_buckets() {
        let r = parse_report(PG15).unwrap();
        let s = shares(&r, &stats(), 30.0).unwrap();
        // 8 clients × 30 s = 240,000 ms of clients' time.
        assert!((share(&s, "page_read") - 0.1).abs() < 1e-12);
        // Active is half the clients' time: Lock is 30% of active samples.
        assert!((share(&s, "lock_wait") - 0.15).abs() < 1e-12);
        // END − BEGIN = 1.0 ms of 4.0, plus 10% of active writing victims.
        assert!((share(&s, "wal_fsync") - (0.25 + 0.05)).abs() < 1e-12);
        assert_eq!(s.wal_fsync_source, "statements");
        // (60 + 12) s of schedstat over 240 s.
        assert!((share(&s, "cpu") - 0.3).abs() < 1e-12);
        assert_eq!(s.cpu_source, "schedstat");
        let sum: f64 = s.buckets.iter().map(|(_, v)| v).sum();
        assert!((sum - 1.0).abs() < 1e-12);
        assert!(s.buckets.iter().all(|(n, _)| *n != "sync_rep"));
    }

    #[test]
    fn without_statement_latencies_wal_comes_from_samples() {
        let mut r = parse_report(PG15).unwrap();
        r.statements.clear();
        let mut st = stats();
        st.samples.events.insert("active|IO:WALSync".into(), 200);
        st.samples.events.insert("active|IPC:SyncRep".into(), 100);
        let s = shares(&r, &st, 30.0).unwrap();
        assert_eq!(s.wal_fsync_source, "samples");
        // 1,300 active samples, 300 in WAL events: half the time × 3/13.
        assert!((share(&s, "wal_fsync") - 0.5 * 300.0 / 1300.0).abs() < 1e-12);
        assert!((share(&s, "sync_rep") - 0.5 * 100.0 / 1300.0).abs() < 1e-12);
    }

    #[test]
    fn cpuacct_when_there_is_no_schedstat() {
        let r = parse_report(PG15).unwrap();
        let mut st = stats();
        st.samples.schedstat = Schedstat::default();
        st.cgroups.postgres.insert("cpu_ns".into(), 4.8e10);
        st.cgroups.client.insert("cpu_ns".into(), 2.4e10);
        let s = shares(&r, &st, 30.0).unwrap();
        assert_eq!(s.cpu_source, "cpuacct");
        assert!((share(&s, "cpu") - 0.3).abs() < 1e-9);
    }

    #[test]
    fn shares_stay_within_zero_and_one() {
        let r = parse_report(PG15).unwrap();
        let mut st = stats();
        st.stats_delta.db.insert("blk_read_time".into(), 1e9);
        let s = shares(&r, &st, 30.0).unwrap();
        assert!(s.buckets.iter().all(|(_, v)| (0.0..=1.0).contains(v)));
        assert_eq!(share(&s, "page_read"), 1.0);
        assert_eq!(share(&s, "unattributed"), 0.0);
    }
}
