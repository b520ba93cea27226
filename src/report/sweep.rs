//! A sweep's result document (`pgiosim.sweep`): the grid, the table, the
//! knees and every point's result. `sweep` writes it; `report` reads it back.

use std::collections::BTreeMap;

use clap::ValueEnum;
use serde::{Deserialize, Serialize};

use super::RunResult;

/// Name of the sweep schema (`schema_version` is the result's).
pub const SWEEP_SCHEMA: &str = "pgiosim.sweep";

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
    pub clients: Vec<u32>,
    /// Device profiles (model mode); empty for `run`.
    pub devices: Vec<String>,
    /// Settings swept, each with its values in the order given.
    pub settings: Vec<GridSetting>,
    /// `--set` assignments with one value, the same for every point.
    pub fixed_settings: Vec<String>,
}

/// One swept setting.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct GridSetting {
    pub name: String,
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
    pub table: Vec<SweepRow>,
    pub knees: Vec<SeriesKnee>,
    pub results: Vec<RunResult>,
}
