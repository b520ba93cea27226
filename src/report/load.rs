//! Reading pgiosim's JSON files back, for `compare` and `report`: results
//! (`pgiosim.result`) and sweeps (`pgiosim.sweep`).
//!
//! The structs that write them read them: fields added later within a
//! schema version are `#[serde(default)]` and unknown fields are ignored,
//! so the additive changes a schema version allows keep older and newer
//! files of the same version readable. A file of a newer schema
//! version than this pgiosim writes is refused: its fields may mean
//! something else.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::sweep::{SWEEP_SCHEMA, SweepDoc};
use super::{RunResult, SCHEMA, SCHEMA_VERSION};
use crate::error::UsageError;

/// What a pgiosim JSON file holds.
#[derive(Debug)]
pub enum Document {
    /// One run (`run`, `model`).
    Result(Box<LoadedResult>),
    /// A sweep: its table, knees and every point's result.
    Sweep(Box<SweepDoc>),
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
            let doc: SweepDoc = serde_json::from_value(v)
                .with_context(|| format!("{}: malformed {SWEEP_SCHEMA}", path.display()))?;
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
    let result: RunResult = serde_json::from_value(v)
        .with_context(|| format!("{}: malformed {SCHEMA}", path.display()))?;
    Ok(LoadedResult {
        path: path.to_path_buf(),
        result,
    })
}

/// A `pgiosim.result` read back, and the file it came from.
#[derive(Debug, Clone)]
pub struct LoadedResult {
    /// The file it came from.
    pub path: PathBuf,
    pub result: RunResult,
}

/// A loaded result reads as its result (`r.summary`, `r.describe()`).
impl std::ops::Deref for LoadedResult {
    type Target = RunResult;
    fn deref(&self) -> &RunResult {
        &self.result
    }
}

impl RunResult {
    /// The workload's name ("tpcb-like"), or "?" if the file has none.
    pub fn workload_name(&self) -> &str {
        Some(self.run.workload.as_str())
            .filter(|w| !w.is_empty())
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A result of schema version 1: without the fields added since
    /// (latency_cdf, replication, the CPU and client flags in `run`, some
    /// `io` figures).
    const V1: &str = include_str!("../../tests/fixtures/result-v1.json");

    #[test]
    fn an_older_result_reads_with_its_later_fields_defaulted() {
        let r = result_from_value(Path::new("v1.json"), serde_json::from_str(V1).unwrap()).unwrap();
        assert_eq!(r.schema_version, 1);
        assert!(r.latency_cdf.is_empty() && r.replication.is_empty());
        // The workload's name is only in `workload.name` there.
        assert_eq!(r.workload_name(), "tpcb-like");
        assert_eq!(r.run.query_mode, "");
        assert_eq!(r.io.read_cpu_us_per_tx, 0.0);
        assert!(r.io.data_reads_per_s > 0.0);
        assert!(
            r.describe()
                .starts_with("model on nvme, tpcb-like scale 10")
        );
    }

    #[test]
    fn a_result_with_only_the_required_fields_reads() {
        let v = serde_json::json!({
            "schema": SCHEMA, "schema_version": 2,
            "run": {"mode": "model", "clients": 1, "cpus": 8, "scale": 10},
            "summary": {"transactions": 10, "elapsed_s": 1.0, "tps": 10.0,
                "latency_ms": {"average": 1.0, "stddev": 0.0, "p50": 1.0, "p90": 1.0,
                    "p99": 1.0, "p99_9": 1.0, "max": 1.0}},
            "breakdown": [{"bucket": "cpu", "mean_us": 1000.0}],
        });
        let r = result_from_value(Path::new("m.json"), v).unwrap();
        assert_eq!(r.workload_name(), "?");
        assert_eq!(r.bucket_ms("cpu"), Some(1.0));
        assert_eq!(r.setting("shared_buffers"), None);
        assert!(r.timeseries.is_empty());
    }

    #[test]
    fn a_result_reads_back_as_it_was_written() {
        let r = result_from_value(Path::new("v1.json"), serde_json::from_str(V1).unwrap()).unwrap();
        let again: RunResult =
            serde_json::from_str(&serde_json::to_string(&r.result).unwrap()).unwrap();
        assert_eq!(
            serde_json::to_value(&again).unwrap(),
            serde_json::to_value(&r.result).unwrap()
        );
    }
}
