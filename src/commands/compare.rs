//! `pgiosim compare a.json b.json [...]`: results side by side, with each
//! figure's ratio to the first file's: tps, latency percentiles, every
//! breakdown bucket in ms per transaction, and the I/O behind them.
//!
//! Results are compared only where the comparison means something: files of
//! different schema versions are refused (a field may have changed meaning),
//! and so are different workloads or scales unless `--force` (different
//! transactions or data set sizes make tps and I/O incomparable). Setups that
//! differ in what a user compares (device, clients, settings, mode) are
//! listed above the table.
//!
//! The comparison is built here and rendered by `report::compare`, beside
//! its document.

use std::collections::BTreeSet;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use crate::error::{self, UsageError};
use crate::output;
use crate::report::compare::{
    COMPARE_SCHEMA, Check, CompareDoc, CompareInput, CompareRow, Difference, Verdicts, render,
    render_verdicts, run_label, table_of,
};
use crate::report::load::{self, LoadedResult};
use crate::report::{SCHEMA, SCHEMA_VERSION};

/// Flags of `compare`.
#[derive(Debug, Clone, Args)]
pub struct CompareArgs {
    /// Result files written by `run --json` or `model --json`; ratios are to
    /// the first.
    #[arg(value_name = "RESULT.json", num_args = 2.., required = true)]
    pub files: Vec<PathBuf>,
    /// Compare results of different workloads or scales anyway.
    #[arg(long)]
    pub force: bool,
    /// Write the comparison as JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print no warnings, only the table.
    #[arg(short, long)]
    pub quiet: bool,
    /// Write the table as CSV to FILE ("-" for standard output): a row a
    /// figure, each input's value and its ratio to the first.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the table as a Markdown table to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Check every later file against the first, the reference: tps within
    /// a relative tolerance, each breakdown share within some percentage
    /// points. A missed target exits 3. Shares are compared as PostgreSQL
    /// can measure them: wal_fsync with buffer_wait, cpu with cpu_queue,
    /// other and pgbench's threads (see docs/sweep-compare-report.md).
    /// Without a value: tps=15%,share=5.
    #[arg(long, value_name = "tps=PCT%,share=POINTS", num_args = 0..=1,
          default_missing_value = "tps=15%,share=5", value_parser = parse_tolerance)]
    pub tolerance: Option<Tolerance>,
}

/// Targets of `compare --tolerance`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Tolerance {
    /// tps within this fraction of the reference's (0.15: ±15%).
    pub tps: f64,
    /// Each share within this many percentage points of the reference's.
    pub share_points: f64,
}

/// "tps=15%,share=5" (either part may be left out: 15% and 5 points).
pub fn parse_tolerance(s: &str) -> std::result::Result<Tolerance, String> {
    let mut t = Tolerance {
        tps: 0.15,
        share_points: 5.0,
    };
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((k, v)) = part.split_once('=') else {
            return Err(format!(
                "{part:?}: expected NAME=VALUE, as in tps=15%,share=5"
            ));
        };
        let num = |v: &str| -> std::result::Result<f64, String> {
            match v.trim().parse::<f64>() {
                Ok(n) if n.is_finite() && n >= 0.0 => Ok(n),
                _ => Err(format!("{k}={v}: not a number of 0 or more")),
            }
        };
        match k.trim() {
            "tps" => t.tps = num(v.trim().trim_end_matches('%'))? / 100.0,
            "share" => t.share_points = num(v.trim().trim_end_matches("pts"))?,
            other => {
                return Err(format!(
                    "{other:?}: not a tolerance; there are tps (a percentage) and share (points)"
                ));
            }
        }
    }
    Ok(t)
}

fn refuse(msg: String) -> anyhow::Error {
    UsageError(msg).into()
}

/// Read the files, refusing those that are not results of one schema version.
fn load_results(files: &[PathBuf]) -> Result<Vec<LoadedResult>> {
    let mut out: Vec<LoadedResult> = Vec::new();
    for path in files {
        let text = load::read_text(path)?;
        let h = load::header(path, &text).map_err(error::bad_input)?;
        if h.schema != SCHEMA {
            return Err(refuse(format!(
                "{}: is a {} file; compare takes results (`run --json`, `model --json`); `pgiosim report` charts sweeps",
                path.display(),
                h.schema
            )));
        }
        if let Some(first) = out.first()
            && u64::from(first.schema_version) != h.schema_version
        {
            return Err(refuse(format!(
                "{} has schema_version {} but {} has {}: fields may mean different things in different versions, so they are not compared; rerun both with one pgiosim",
                first.path.display(),
                first.schema_version,
                path.display(),
                h.schema_version
            )));
        }
        out.push(load::result_from_str(path, &text).map_err(error::bad_input)?);
    }
    Ok(out)
}

/// Why two results are not comparable (different workload or scale).
pub fn incompatibilities(results: &[LoadedResult]) -> Vec<String> {
    let first = &results[0];
    let mut why = Vec::new();
    for r in &results[1..] {
        if r.workload_name() != first.workload_name() {
            why.push(format!(
                "{} ran workload {} but {} ran {}: different transactions, so tps, latency and I/O per transaction are not comparable",
                first.path.display(),
                first.workload_name(),
                r.path.display(),
                r.workload_name()
            ));
        }
        if r.run.scale != first.run.scale {
            why.push(format!(
                "{} is at scale {} but {} at scale {}: a different data set size changes the buffer hit ratio, the reads and the lock contention, so the results are not comparable",
                first.path.display(),
                first.run.scale,
                r.path.display(),
                r.run.scale
            ));
        }
    }
    why
}

fn ratio(v: Option<f64>, base: Option<f64>) -> Option<f64> {
    match (v, base) {
        (Some(v), Some(b)) if b != 0.0 && v.is_finite() && b.is_finite() => Some(v / b),
        _ => None,
    }
}

fn finite(v: f64) -> Option<f64> {
    v.is_finite().then_some(v)
}

type Metric = (&'static str, &'static str, fn(&LoadedResult) -> Option<f64>);

const SUMMARY: &[Metric] = &[
    ("tps", "1/s", |r| Some(r.summary.tps)),
    ("transactions", "count", |r| {
        Some(r.summary.transactions as f64)
    }),
];

const LATENCY: &[Metric] = &[
    ("average", "ms", |r| Some(r.summary.latency_ms.average)),
    // Null where the input does not know it (an imported pgbench run).
    ("stddev", "ms", |r| finite(r.summary.latency_ms.stddev)),
    ("p50", "ms", |r| finite(r.summary.latency_ms.p50)),
    ("p90", "ms", |r| finite(r.summary.latency_ms.p90)),
    ("p99", "ms", |r| finite(r.summary.latency_ms.p99)),
    ("p99.9", "ms", |r| finite(r.summary.latency_ms.p99_9)),
    ("max", "ms", |r| finite(r.summary.latency_ms.max)),
];

const IO: &[Metric] = &[
    ("data reads/s", "1/s", |r| Some(r.io.data_reads_per_s)),
    ("data reads per transaction", "count", |r| {
        Some(r.io.data_reads_per_tx)
    }),
    ("data writes/s", "1/s", |r| Some(r.io.data_writes_per_s)),
    ("WAL MB/s", "MB/s", |r| Some(r.io.wal_mb_per_s)),
    ("WAL bytes per transaction", "bytes", |r| {
        Some(r.io.wal_bytes_per_tx)
    }),
    ("WAL fdatasyncs/s", "1/s", |r| {
        Some(r.io.wal_fdatasyncs_per_s)
    }),
    ("commits per WAL flush", "count", |r| {
        Some(r.io.commits_per_flush)
    }),
    ("buffer hit ratio", "%", |r| {
        Some(r.io.buffer_hit_ratio * 100.0)
    }),
    ("full-page images per transaction", "count", |r| {
        Some(r.io.full_page_images_per_tx)
    }),
    ("checkpoints started", "count", |r| {
        Some(r.io.checkpoints_started as f64)
    }),
    ("modelled CPU utilisation", "%", |r| {
        Some(r.io.cpu_utilisation * 100.0)
    }),
];

fn row(section: &str, metric: &str, unit: &str, values: Vec<Option<f64>>) -> CompareRow {
    let base = values[0];
    CompareRow {
        section: section.into(),
        metric: metric.into(),
        unit: unit.into(),
        ratios: values.iter().map(|v| ratio(*v, base)).collect(),
        values,
    }
}

/// Build the comparison of loaded, compatible results.
pub fn build(results: &[LoadedResult], forced: bool, warnings: Vec<String>) -> CompareDoc {
    let mut rows = Vec::new();
    let each = |f: fn(&LoadedResult) -> Option<f64>| results.iter().map(f).collect::<Vec<_>>();
    for (m, u, f) in SUMMARY {
        rows.push(row("summary", m, u, each(*f)));
    }
    for (m, u, f) in LATENCY {
        rows.push(row("latency", m, u, each(*f)));
    }
    // Buckets in the first file's order, then any only later files have.
    let mut buckets: Vec<String> = Vec::new();
    for r in results {
        for b in &r.breakdown {
            if !buckets.contains(&b.bucket) {
                buckets.push(b.bucket.clone());
            }
        }
    }
    for b in &buckets {
        let values = results.iter().map(|r| r.bucket_ms(b)).collect();
        rows.push(row("breakdown", b, "ms per transaction", values));
    }
    let totals = results
        .iter()
        .map(|r| Some(r.breakdown.iter().map(|b| b.mean_us / 1e3).sum::<f64>()))
        .collect();
    rows.push(row("breakdown", "total", "ms per transaction", totals));
    for (m, u, f) in IO {
        rows.push(row("io", m, u, each(*f)));
    }
    CompareDoc {
        schema: COMPARE_SCHEMA,
        schema_version: SCHEMA_VERSION,
        pgiosim_version: env!("CARGO_PKG_VERSION"),
        forced,
        warnings,
        inputs: results
            .iter()
            .enumerate()
            .map(|(i, r)| CompareInput {
                label: run_label(i),
                file: r.path.display().to_string(),
                description: r.describe(),
                mode: r.run.mode.clone(),
                target: r.target(),
                workload: r.workload_name().to_string(),
                scale: r.run.scale,
                clients: r.run.clients,
                partial: r.partial,
            })
            .collect(),
        differences: differences(results),
        rows,
        tolerance: None,
    }
}

/// The setup items whose values are not all equal.
fn differences(results: &[LoadedResult]) -> Vec<Difference> {
    let item = |what: &str, value: &dyn Fn(&LoadedResult) -> Option<String>| {
        (what.to_string(), results.iter().map(value).collect())
    };
    let mut items: Vec<(String, Vec<Option<String>>)> = vec![
        item("mode", &|r| Some(r.run.mode.clone())),
        item("device", &|r| Some(r.target())),
        item("workload", &|r| Some(r.workload_name().to_string())),
        item("scale", &|r| Some(r.run.scale.to_string())),
        item("clients", &|r| Some(r.run.clients.to_string())),
        item("cpus", &|r| Some(r.run.cpus.to_string())),
        item("duration", &|r| r.run.duration_s.map(|d| format!("{d} s"))),
        item("rate (-R), tps", &|r| {
            r.summary
                .rate_limit
                .as_ref()
                // As the file writes it (100.0, not 100).
                .map(|x| serde_json::Value::from(x.requested_tps).to_string())
        }),
        item("data I/O", &|r| Some(r.run.data_io.clone())),
    ];
    let names: BTreeSet<&String> = results
        .iter()
        .filter_map(|r| r.settings.as_object())
        .flat_map(|m| m.keys())
        .collect();
    for n in names {
        items.push((
            format!("setting {n}"),
            results.iter().map(|r| r.setting(n)).collect(),
        ));
    }
    items
        .into_iter()
        .filter(|(_, v)| v.iter().any(|x| x != &v[0]))
        .map(|(what, values)| Difference { what, values })
        .collect()
}

/// A share as PostgreSQL's statistics can measure it, and the pgiosim
/// buckets it holds: a backend writing a dirty victim waits in
/// IO:DataFileWrite, which the commit's wait absorbs; schedstat counts the
/// backends' time queued for a core as theirs, and pgbench's threads (where
/// a loopback round trip goes).
const SHARE_GROUPS: &[(&str, &[&str])] = &[
    ("page_read", &["page_read"]),
    ("wal_fsync", &["wal_fsync", "buffer_wait"]),
    ("lock_wait", &["lock_wait"]),
    ("sync_rep", &["sync_rep"]),
    ("cpu", &["cpu", "cpu_queue", "other"]),
];

fn bucket_share(r: &LoadedResult, bucket: &str) -> Option<f64> {
    r.breakdown
        .iter()
        .find(|b| b.bucket == bucket)
        .map(|b| b.share)
}

/// A result's share of a group, None if it has none of its buckets.
fn group_share(r: &LoadedResult, group: &str, buckets: &[&str]) -> Option<f64> {
    if r.run.mode == "postgres" {
        return bucket_share(r, group);
    }
    let present: Vec<f64> = buckets.iter().filter_map(|b| bucket_share(r, b)).collect();
    if present.is_empty() {
        return None;
    }
    let mut share: f64 = present.iter().sum();
    let lat_us = r.summary.latency_ms.average * 1e3;
    if group == "cpu" && lat_us > 0.0 {
        // page_read holds the read syscall's CPU as blk_read_time does,
        // and schedstat counts it as CPU too; pgbench's threads (-j) are
        // in schedstat's figure.
        share += (r.io.read_cpu_us_per_tx + r.io.client_thread_us_per_tx) / lat_us;
    }
    Some(share)
}

/// Every later input against the first.
pub fn verdicts(results: &[LoadedResult], t: Tolerance) -> Verdicts {
    let reference = &results[0];
    let mut checks = Vec::new();
    for (i, r) in results.iter().enumerate().skip(1) {
        let input = run_label(i);
        let want = reference.summary.tps;
        let got = r.summary.tps;
        let error = if want > 0.0 {
            got / want - 1.0
        } else {
            f64::INFINITY
        };
        checks.push(Check {
            input: input.clone(),
            check: "tps".into(),
            value: got,
            reference: want,
            error,
            tolerance: t.tps,
            pass: error.abs() <= t.tps,
        });
        for (group, buckets) in SHARE_GROUPS {
            let Some(want) = group_share(reference, group, buckets) else {
                continue;
            };
            let got = group_share(r, group, buckets).unwrap_or(0.0);
            let error = (got - want) * 100.0;
            checks.push(Check {
                input: input.clone(),
                check: format!("share {group}"),
                value: got,
                reference: want,
                error,
                tolerance: t.share_points,
                pass: error.abs() <= t.share_points + 1e-9,
            });
        }
    }
    Verdicts {
        reference: run_label(0),
        tps_tolerance: t.tps,
        share_points: t.share_points,
        pass: checks.iter().all(|c| c.pass),
        checks,
    }
}

/// Run `compare`.
pub fn compare(args: &CompareArgs) -> Result<i32> {
    let results = load_results(&args.files)?;
    let why = incompatibilities(&results);
    if !why.is_empty() && !args.force {
        return Err(refuse(format!(
            "not comparable: {}; pass --force to compare anyway",
            why.join("; ")
        )));
    }
    let mut warnings: Vec<String> = why
        .iter()
        .map(|w| format!("compared under --force: {w}"))
        .collect();
    for r in &results {
        if r.partial {
            warnings.push(format!(
                "{}: a partial result (the run was interrupted after {:.1} s)",
                r.path.display(),
                r.summary.elapsed_s
            ));
        }
    }
    if !args.quiet {
        for w in &warnings {
            eprintln!("warning: {w}");
        }
    }
    let mut doc = build(&results, args.force && !why.is_empty(), warnings);
    doc.tolerance = args.tolerance.map(|t| verdicts(&results, t));
    let exports = [&args.json, &args.csv, &args.markdown];
    let stdout_taken = exports
        .iter()
        .any(|p| p.as_deref().is_some_and(output::is_stdout));
    let mut text = render(&doc);
    if let Some(v) = &doc.tolerance {
        text.push_str(&render_verdicts(v));
    }
    output::report(&text, stdout_taken)?;
    if let Some(path) = &args.json {
        output::write_json(path, &doc)?;
    }
    if let Some(path) = &args.csv {
        output::write_file("--csv", path, &table_of(&doc).to_csv())?;
    }
    if let Some(path) = &args.markdown {
        output::write_file("--markdown", path, &table_of(&doc).to_markdown())?;
    }
    match &doc.tolerance {
        Some(v) if !v.pass => Ok(i32::from(error::exit::OUT_OF_TOLERANCE)),
        _ => Ok(0),
    }
}
