//! A comparison's result document (`pgiosim.compare`): the inputs, the
//! setups that differ and each figure with its ratio to the first input's.
//! `compare` builds and writes it.

use serde::Serialize;

/// Name of the comparison schema (`schema_version` is the result's).
pub const COMPARE_SCHEMA: &str = "pgiosim.compare";

/// The comparison, as `--json` writes it.
#[derive(Debug, Clone, Serialize)]
pub struct CompareDoc {
    pub schema: &'static str,
    pub schema_version: u32,
    pub pgiosim_version: &'static str,
    /// True when --force let different workloads or scales through.
    pub forced: bool,
    /// What the reader should know: partial runs, forced comparisons.
    pub warnings: Vec<String>,
    pub inputs: Vec<CompareInput>,
    /// Setup that differs between the inputs: one value per input.
    pub differences: Vec<Difference>,
    /// The figures, one value per input, and each one's ratio to the first.
    pub rows: Vec<CompareRow>,
    /// With `--tolerance`: each later input checked against the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Verdicts>,
}

/// `compare --tolerance`'s checks and its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Verdicts {
    /// The reference's label ("A").
    pub reference: String,
    /// tps within this fraction of the reference's.
    pub tps_tolerance: f64,
    /// Shares within this many percentage points.
    pub share_points: f64,
    pub checks: Vec<Check>,
    /// True when every check passed.
    pub pass: bool,
}

/// One check of one input against the reference.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The input's label ("B").
    pub input: String,
    /// "tps", or "share page_read" and so on.
    pub check: String,
    pub value: f64,
    pub reference: f64,
    /// tps: value / reference − 1; a share: the difference in points.
    pub error: f64,
    /// Its tolerance, in the error's unit.
    pub tolerance: f64,
    pub pass: bool,
}

/// One input file.
#[derive(Debug, Clone, Serialize)]
pub struct CompareInput {
    /// A, B, C...: the column it is in.
    pub label: String,
    pub file: String,
    /// One line: mode, device, workload, scale, clients, cpus, length, seed.
    pub description: String,
    pub mode: String,
    /// The device model's name, or "disk (engine)" for `run`.
    pub target: String,
    pub workload: String,
    pub scale: u64,
    pub clients: u32,
    pub partial: bool,
}

/// A setup item that differs between inputs.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    /// "device", "clients", "setting shared_buffers", ...
    pub what: String,
    /// Its value in each input (null where absent).
    pub values: Vec<Option<String>>,
}

/// One compared figure.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// "summary", "latency", "breakdown" or "io".
    pub section: String,
    pub metric: String,
    pub unit: String,
    /// The figure in each input (null where the file lacks it).
    pub values: Vec<Option<f64>>,
    /// values[i] / values[0] (null where undefined); ratios[0] is 1.
    pub ratios: Vec<Option<f64>>,
}
