//! A sweep's result document (`pgiosim.sweep`): the grid, the table, the
//! knees and every point's result. `sweep` writes it; `report` reads it back.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use super::RunResult;
use crate::output;

/// Name of the sweep schema (`schema_version` is the result's).
pub const SWEEP_SCHEMA: &str = "pgiosim.sweep";
/// The most entries a list of a sweep's JSON may hold when read: more
/// points than a sweep runs in a day (each list is charged to the input's
/// memory budget as well, see [`crate::json_memory`]).
pub const SWEEP_LIST_MAX: usize = 1 << 16;

/// `run` or `model` underneath the sweep.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SweepMode {
    /// The device model in virtual time (`pgiosim model`): seconds per run.
    Model,
    /// Real files on this disk (`pgiosim run`): each run lasts -T.
    Run,
}

/// The settings a sweep varies (--set with more than one value) and the ones
/// it only passes through.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Grid {
    /// Client counts, ascending.
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub clients: Vec<u32>,
    /// Device profiles (model mode); empty for `run`.
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub devices: Vec<String>,
    /// Settings swept, each with its values in the order given.
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub settings: Vec<GridSetting>,
    /// `--set` assignments with one value, the same for every point.
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub fixed_settings: Vec<String>,
}

/// One swept setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridSetting {
    pub name: String,
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub values: Vec<String>,
}

/// One row of the sweep's table: a point's headline figures.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepRow {
    /// Device and swept settings: the rows of one series differ only in clients.
    pub series: String,
    /// Device profile (model mode).
    pub device: Option<String>,
    /// The swept settings' values at this point.
    #[serde(deserialize_with = "crate::json_memory::map")]
    pub settings: BTreeMap<String, String>,
    pub clients: u32,
    pub tps: f64,
    /// The steady state's tps and its 95% interval's half width; null
    /// where the point's run held none.
    #[serde(default)]
    pub steady_tps: Option<f64>,
    #[serde(default)]
    pub steady_tps_ci95: Option<f64>,
    /// tps growth per doubling of clients since the series' previous row
    /// (0.1 = +10%), of the steady state's tps where both rows have one;
    /// null on a series' first row.
    pub tps_growth_per_doubling: Option<f64>,
    pub latency_avg_ms: f64,
    pub latency_p50_ms: f64,
    pub latency_p99_ms: f64,
    pub commits_per_flush: f64,
    /// Mean ms per transaction in each breakdown bucket.
    #[serde(deserialize_with = "crate::json_memory::map")]
    pub breakdown_ms: BTreeMap<String, f64>,
    pub cpu_utilisation: f64,
    /// The point's run was interrupted.
    pub partial: bool,
}

impl SweepRow {
    /// The point's answer: the steady state's tps, else the whole run's.
    pub fn answer_tps(&self) -> f64 {
        self.steady_tps.unwrap_or(self.tps)
    }
}

/// The knee of one series.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SeriesKnee {
    pub series: String,
    pub device: Option<String>,
    #[serde(deserialize_with = "crate::json_memory::map")]
    pub settings: BTreeMap<String, String>,
    /// Null when the series has none in the clients swept.
    pub knee: Option<Knee>,
    /// One sentence: where the knee is and why, or why there is none.
    pub note: String,
}

/// The point after which more clients stop buying throughput.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Knee {
    pub clients: u32,
    pub tps: f64,
    pub latency_p99_ms: f64,
    pub commits_per_flush: f64,
}

/// A sweep's JSON: the grid, the table, the knees, and every point's full
/// result (`results[i]` is the point of `table[i]`).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SweepDoc {
    pub schema: String,
    pub schema_version: u64,
    pub pgiosim_version: String,
    /// True if the sweep was interrupted: the table holds the points that ran.
    pub partial: bool,
    pub mode: SweepMode,
    pub seed: u64,
    pub grid: Grid,
    pub knee_rule: String,
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub table: Vec<SweepRow>,
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub knees: Vec<SeriesKnee>,
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub results: Vec<RunResult>,
}

/// Render the sweep's table and knees as text.
/// The sweep's table for export: a row a point, the swept settings and
/// the breakdown's buckets as columns of their own.
pub fn table_of(doc: &SweepDoc) -> output::Table {
    let settings: Vec<String> = doc
        .table
        .iter()
        .flat_map(|r| r.settings.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let buckets: Vec<String> = doc
        .table
        .iter()
        .flat_map(|r| r.breakdown_ms.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut headers: Vec<String> = vec!["series".into(), "device".into()];
    headers.extend(settings.iter().cloned());
    headers.extend(
        [
            "clients",
            "tps",
            "steady_tps",
            "steady_tps_ci95",
            "tps_growth_per_doubling",
            "latency_avg_ms",
            "latency_p50_ms",
            "latency_p99_ms",
            "commits_per_flush",
        ]
        .map(String::from),
    );
    headers.extend(buckets.iter().map(|b| format!("{b}_ms")));
    headers.extend(["cpu_utilisation".to_string(), "partial".to_string()]);
    let rows = doc
        .table
        .iter()
        .map(|r| {
            let mut row = vec![r.series.clone(), r.device.clone().unwrap_or_default()];
            row.extend(
                settings
                    .iter()
                    .map(|k| r.settings.get(k).cloned().unwrap_or_default()),
            );
            row.push(r.clients.to_string());
            row.push(output::cell(Some(r.tps), 1));
            row.push(output::cell(r.steady_tps, 1));
            row.push(output::cell(r.steady_tps_ci95, 1));
            row.push(output::cell(r.tps_growth_per_doubling, 3));
            row.push(output::cell(Some(r.latency_avg_ms), 3));
            row.push(output::cell(Some(r.latency_p50_ms), 3));
            row.push(output::cell(Some(r.latency_p99_ms), 3));
            row.push(output::cell(Some(r.commits_per_flush), 2));
            row.extend(
                buckets
                    .iter()
                    .map(|b| output::cell(r.breakdown_ms.get(b).copied(), 3)),
            );
            row.push(output::cell(Some(r.cpu_utilisation), 3));
            row.push(r.partial.to_string());
            row
        })
        .collect();
    output::Table { headers, rows }
}

/// The sweep as text: its heading, a row a point (a blank line between
/// series, knees marked), and what each column means.
pub fn render(doc: &SweepDoc) -> String {
    let mut o = String::new();
    if doc.partial {
        let _ = writeln!(
            o,
            "*** partial sweep: interrupted after {} of its runs ***",
            doc.table.len()
        );
    }
    let g = &doc.grid;
    let _ = writeln!(
        o,
        "pgiosim {} sweep ({}), seed {}{}",
        doc.pgiosim_version,
        match doc.mode {
            SweepMode::Model => "model",
            SweepMode::Run => "run",
        },
        doc.seed,
        if g.fixed_settings.is_empty() {
            String::new()
        } else {
            format!(", {}", g.fixed_settings.join(" "))
        }
    );
    let show_device = !g.devices.is_empty();
    let _ = writeln!(o, "{}", table_head(g, show_device));
    let mut last_series: Option<&str> = None;
    for r in &doc.table {
        if last_series.is_some_and(|s| s != r.series) {
            let _ = writeln!(o);
        }
        last_series = Some(&r.series);
        let _ = writeln!(o, "{}", table_line(doc, r, show_device));
    }
    let _ = writeln!(
        o,
        "\ntps: the whole run's, as pgbench counts; steady tps: after the warm-up, with its 95% \
         interval (- where the run held no steady state); tps/2×: growth per doubling of clients \
         (steady where both points have it); c/flush: commits per WAL flush; \
         cpu, page_read, lock_wait, wal_fsync: ms per transaction"
    );
    let _ = writeln!(o, "knee: {}", doc.knee_rule);
    for k in &doc.knees {
        let _ = writeln!(o, "  {}: {}", k.series, k.note);
    }
    o
}

/// The table's column heads: the device, each swept setting, the figures.
fn table_head(g: &Grid, show_device: bool) -> String {
    let mut head = String::new();
    if show_device {
        let _ = write!(head, "{:<14} ", "device");
    }
    for s in &g.settings {
        let _ = write!(head, "{:>w$} ", s.name, w = s.name.len().max(8));
    }
    let _ = write!(
        head,
        "{:>7} {:>10} {:>14} {:>8} {:>8} {:>8} {:>8} {:>7} {:>7} {:>9} {:>9} {:>9} {:>5}",
        "clients",
        "tps",
        "steady tps",
        "tps/2×",
        "avg ms",
        "p50 ms",
        "p99 ms",
        "c/flush",
        "cpu ms",
        "page_read",
        "lock_wait",
        "wal_fsync",
        "cpu%"
    );
    head
}

/// One point's row: its device and settings, then its figures.
fn table_line(doc: &SweepDoc, r: &SweepRow, show_device: bool) -> String {
    let g = &doc.grid;
    let mut line = String::new();
    if show_device {
        let _ = write!(line, "{:<14} ", r.device.as_deref().unwrap_or(""));
    }
    for s in &g.settings {
        let v = r.settings.get(&s.name).map_or("", String::as_str);
        let _ = write!(line, "{:>w$} ", v, w = s.name.len().max(8));
    }
    let ms = |b: &str| r.breakdown_ms.get(b).copied().unwrap_or(0.0);
    let growth = r
        .tps_growth_per_doubling
        .filter(|g| g.is_finite())
        .map_or("".to_string(), |g| format!("{:+.0}%", g * 100.0));
    let steady = match (r.steady_tps, r.steady_tps_ci95) {
        (Some(t), Some(h)) if t > 0.0 => format!("{t:.0} ±{:.1}%", h / t * 100.0),
        _ => "-".to_string(),
    };
    let is_knee = doc
        .knees
        .iter()
        .any(|k| k.series == r.series && k.knee.as_ref().is_some_and(|k| k.clients == r.clients));
    let _ = write!(
        line,
        "{:>7} {:>10.0} {:>14} {:>8} {:>8.3} {:>8.3} {:>8.3} {:>7.2} {:>7.3} {:>9.3} {:>9.3} {:>9.3} {:>4.0}%",
        r.clients,
        r.tps,
        steady,
        growth,
        r.latency_avg_ms,
        r.latency_p50_ms,
        r.latency_p99_ms,
        r.commits_per_flush,
        ms("cpu") + ms("cpu_queue"),
        ms("page_read"),
        ms("lock_wait"),
        ms("wal_fsync"),
        r.cpu_utilisation * 100.0
    );
    if is_knee {
        line.push_str("  ◀ knee");
    }
    if r.partial {
        line.push_str("  (partial)");
    }
    line
}
