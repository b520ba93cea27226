//! Reading pgiosim's JSON files back, for `compare` and `report`: results
//! (`pgiosim.result`) and sweeps (`pgiosim.sweep`).
//!
//! Only the fields those commands use are read and unknown fields are
//! ignored, so the additive changes a schema version allows keep older and
//! newer files of the same version readable. A file of a newer schema
//! version than this pgiosim writes is refused: its fields may mean
//! something else.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde::Deserialize;
use serde_json::{Map, Value};

use super::sweep::{SWEEP_SCHEMA, SweepDoc};
use super::{SCHEMA, SCHEMA_VERSION};
use crate::error::UsageError;

/// What a pgiosim JSON file holds.
#[derive(Debug)]
pub enum Document {
    /// One run (`run`, `model`).
    Result(Box<LoadedResult>),
    /// A sweep: its table, knees and every point's result.
    Sweep(Box<SweepDoc<LoadedResult>>),
}

/// The schema name and version of a pgiosim JSON file, checked before its
/// body is read.
#[derive(Debug, Clone)]
pub struct Header {
    pub schema: String,
    pub schema_version: u64,
}

/// Read the schema header of a parsed file.
pub fn header(path: &Path, v: &Value) -> Result<Header> {
    let schema = v
        .get("schema")
        .and_then(Value::as_str)
        .with_context(|| {
            format!(
                "{}: not a pgiosim JSON file (no \"schema\" field)",
                path.display()
            )
        })?
        .to_string();
    let schema_version = v
        .get("schema_version")
        .and_then(Value::as_u64)
        .with_context(|| format!("{}: no \"schema_version\" field", path.display()))?;
    if schema_version > SCHEMA_VERSION as u64 {
        return Err(UsageError(format!(
            "{}: schema_version {schema_version} is newer than this pgiosim reads ({SCHEMA_VERSION}); use the pgiosim that wrote it",
            path.display()
        ))
        .into());
    }
    Ok(Header {
        schema,
        schema_version,
    })
}

/// Read a file as JSON.
pub fn read_json(path: &Path) -> Result<Value> {
    let text = crate::input::read_text(path, "result file", crate::input::LARGE_FILE_MAX_BYTES)?;
    serde_json::from_str(&text)
        .map_err(|e| UsageError(format!("{}: not JSON: {e}", path.display())).into())
}

/// Read a result or sweep file.
pub fn load(path: &Path) -> Result<Document> {
    document_from_value(path, read_json(path)?)
}

/// Read a result or sweep from its parsed JSON; `path` names it in errors.
pub fn document_from_value(path: &Path, v: Value) -> Result<Document> {
    let h = header(path, &v)?;
    match h.schema.as_str() {
        SCHEMA => Ok(Document::Result(Box::new(result_from_value(path, v)?))),
        SWEEP_SCHEMA => {
            let mut doc: SweepDoc<LoadedResult> = serde_json::from_value(v)
                .with_context(|| format!("{}: malformed {SWEEP_SCHEMA}", path.display()))?;
            for (i, r) in doc.results.iter_mut().enumerate() {
                r.path = path.to_path_buf();
                r.point = Some(i);
            }
            Ok(Document::Sweep(Box::new(doc)))
        }
        other => bail!(
            "{}: schema \"{other}\" is not a pgiosim result or sweep",
            path.display()
        ),
    }
}

/// Read one result from its parsed JSON.
pub fn result_from_value(path: &Path, v: Value) -> Result<LoadedResult> {
    let mut r: LoadedResult = serde_json::from_value(v)
        .with_context(|| format!("{}: malformed {SCHEMA}", path.display()))?;
    r.path = path.to_path_buf();
    Ok(r)
}

/// A `pgiosim.result`, as read back.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadedResult {
    /// The file it came from.
    #[serde(skip)]
    pub path: PathBuf,
    /// Its index in a sweep's `results`, for a sweep's point.
    #[serde(skip)]
    pub point: Option<usize>,
    pub schema_version: u64,
    #[serde(default)]
    pub pgiosim_version: String,
    #[serde(default)]
    pub partial: bool,
    pub run: LoadedRun,
    #[serde(default)]
    pub settings: Map<String, Value>,
    #[serde(default)]
    pub workload: Value,
    pub summary: LoadedSummary,
    pub breakdown: Vec<LoadedBucket>,
    #[serde(default)]
    pub io: Map<String, Value>,
    #[serde(default)]
    pub checkpoints: Vec<LoadedCheckpoint>,
    #[serde(default)]
    pub timeseries: Vec<LoadedSecond>,
    /// Absent in files written before it was added.
    #[serde(default)]
    pub latency_cdf: Vec<LoadedCdfPoint>,
}

/// `run` of a result.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadedRun {
    pub mode: String,
    /// The workload's name (a mix: "tpcb-like@1,select-only@9"); older
    /// files have it only in `workload.name`.
    #[serde(default)]
    pub workload: Option<String>,
    pub clients: u32,
    pub cpus: u32,
    #[serde(default)]
    pub duration_s: Option<f64>,
    #[serde(default)]
    pub transactions_per_client: Option<u64>,
    pub scale: u64,
    #[serde(default)]
    pub io_engine: String,
    #[serde(default)]
    pub data_io: String,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub device: Option<Value>,
}

/// `summary` of a result.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadedSummary {
    /// Rate-limited runs (-R) only.
    #[serde(default)]
    pub rate_limit: Option<Value>,
    pub transactions: u64,
    pub elapsed_s: f64,
    pub tps: f64,
    pub latency_ms: LoadedLatency,
}

/// `summary.latency_ms` of a result.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadedLatency {
    pub average: f64,
    pub stddev: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub p99_9: f64,
    pub max: f64,
}

/// One entry of `breakdown`.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadedBucket {
    pub bucket: String,
    pub mean_us: f64,
    #[serde(default)]
    pub share: f64,
    #[serde(default)]
    pub p99_us: f64,
}

/// One entry of `checkpoints`.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadedCheckpoint {
    pub start_s: f64,
    #[serde(default)]
    pub end_s: Option<f64>,
    #[serde(default)]
    pub trigger: String,
}

/// One entry of `timeseries`.
#[derive(Debug, Clone, Deserialize)]
pub struct LoadedSecond {
    pub t: u64,
    pub tps: f64,
    #[serde(default)]
    pub latency_ms: f64,
}

/// One entry of `latency_cdf`.
#[derive(Debug, Clone, Copy, Deserialize)]
pub struct LoadedCdfPoint {
    pub percentile: f64,
    pub ms: f64,
}

impl LoadedResult {
    /// The workload's name ("tpcb-like"), or "?" if the file has none.
    pub fn workload_name(&self) -> &str {
        self.run
            .workload
            .as_deref()
            .or_else(|| self.workload.get("name").and_then(Value::as_str))
            .unwrap_or("?")
    }

    /// The device profile's name for a modelled run.
    pub fn device_name(&self) -> Option<&str> {
        self.run
            .device
            .as_ref()
            .and_then(|d| d.get("name"))
            .and_then(Value::as_str)
    }

    /// Where the run ran: the device model's name, or "disk (engine)".
    pub fn target(&self) -> String {
        match self.device_name() {
            Some(d) => d.to_string(),
            None if self.run.mode == "run" => format!("disk ({})", self.run.io_engine),
            None => self.run.mode.clone(),
        }
    }

    /// A number from `io`.
    pub fn io(&self, key: &str) -> Option<f64> {
        self.io.get(key).and_then(Value::as_f64)
    }

    /// Mean milliseconds per transaction in a breakdown bucket.
    pub fn bucket_ms(&self, bucket: &str) -> Option<f64> {
        self.breakdown
            .iter()
            .find(|b| b.bucket == bucket)
            .map(|b| b.mean_us / 1e3)
    }

    /// A setting as SHOW prints it.
    pub fn setting(&self, name: &str) -> Option<String> {
        self.settings.get(name).map(|v| match v {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
    }

    /// One line: what ran, where, how.
    pub fn describe(&self) -> String {
        let r = &self.run;
        let length = match (r.duration_s, r.transactions_per_client) {
            (Some(d), _) => format!("{d} s"),
            (None, Some(t)) => format!("{t} tx/client"),
            _ => String::new(),
        };
        format!(
            "{} on {}, {} scale {}, {} clients, {} cpus, {}, seed {}{}",
            r.mode,
            self.target(),
            self.workload_name(),
            r.scale,
            r.clients,
            r.cpus,
            length,
            r.seed,
            if self.partial { " (partial)" } else { "" }
        )
    }
}
