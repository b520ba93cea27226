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

/// The two fields of the header, each read only if it is small.
#[derive(serde::Deserialize)]
struct RawHeader {
    #[serde(default, deserialize_with = "crate::json_memory::opt_value")]
    schema: Option<Value>,
    #[serde(default, deserialize_with = "crate::json_memory::opt_value")]
    schema_version: Option<Value>,
}

/// Read the schema header of a file's text. The rest of the document is
/// checked to be JSON but not kept.
pub fn header(path: &Path, text: &str) -> Result<Header> {
    let raw: RawHeader =
        match crate::json_memory::within(HEADER_BUDGET_BYTES, || serde_json::from_str(text)) {
            Ok(raw) => raw,
            Err(e) if e.is_data() => RawHeader {
                schema: None,
                schema_version: None,
            },
            Err(e) => {
                return Err(UsageError(format!("{}: not JSON: {e}", path.display())).into());
            }
        };
    let schema = raw
        .schema
        .as_ref()
        .and_then(Value::as_str)
        .with_context(|| {
            format!(
                "{}: not a pgiosim JSON file (no \"schema\" field)",
                path.display()
            )
        })?
        .to_string();
    let schema_version = raw
        .schema_version
        .as_ref()
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

/// What the header's two fields may hold (a schema name is a few bytes).
const HEADER_BUDGET_BYTES: usize = 1 << 20;

/// Read a result or sweep file's text, within the bound on inputs.
pub fn read_text(path: &Path) -> Result<String> {
    crate::input::read_text(path, "result file", crate::input::LARGE_FILE_MAX_BYTES)
}

/// Read a result or sweep file.
pub fn load(path: &Path) -> Result<Document> {
    document_from_str(path, &read_text(path)?)
}

/// Read a result or sweep from its text; `path` names it in errors. It is
/// deserialized straight into its structs, within the memory budget of one
/// input ([`crate::json_memory`]): a `serde_json::Value` of the whole file
/// would take 20 times its size.
pub fn document_from_str(path: &Path, text: &str) -> Result<Document> {
    let h = header(path, text)?;
    match h.schema.as_str() {
        SCHEMA => Ok(Document::Result(Box::new(result_from_str(path, text)?))),
        SWEEP_SCHEMA => {
            let doc: SweepDoc =
                crate::json_memory::within(crate::json_memory::INPUT_BUDGET_BYTES, || {
                    serde_json::from_str(text)
                })
                .with_context(|| format!("{}: malformed {SWEEP_SCHEMA}", path.display()))?;
            Ok(Document::Sweep(Box::new(doc)))
        }
        other => bail!(
            "{}: schema \"{other}\" is not a pgiosim result or sweep",
            path.display()
        ),
    }
}

/// Read one result from its text.
pub fn result_from_str(path: &Path, text: &str) -> Result<LoadedResult> {
    let result: RunResult =
        crate::json_memory::within(crate::json_memory::INPUT_BUDGET_BYTES, || {
            serde_json::from_str(text)
        })
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
    pub fn device_profile_name(&self) -> Option<&str> {
        self.run
            .device
            .as_ref()
            .and_then(|d| d.get("name"))
            .and_then(Value::as_str)
    }

    /// Where the run ran: the device model's name, or "disk (engine)".
    pub fn target(&self) -> String {
        match self.device_profile_name() {
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
        let r = result_from_str(Path::new("v1.json"), V1).unwrap();
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
    fn a_series_longer_than_pgiosim_writes_is_refused_while_read() {
        let mut v: serde_json::Value = serde_json::from_str(V1).unwrap();
        let point = v["timeseries"][0].clone();
        let n = crate::core::stats::SERIES_MAX_POINTS + 1;
        v["timeseries"] = serde_json::Value::Array(vec![point; n]);
        let e = result_from_str(Path::new("long.json"), &v.to_string())
            .err()
            .unwrap();
        let e = format!("{e:#}");
        assert!(
            e.contains("long.json") && e.contains("more than 262144 entries"),
            "{e}"
        );
    }

    #[test]
    fn settings_past_the_memory_budget_are_refused_while_read() {
        let mut v: serde_json::Value = serde_json::from_str(V1).unwrap();
        // 10 million entries: 400 MB as a Value, past the 256 MiB budget.
        let entries = crate::json_memory::INPUT_BUDGET_BYTES / 24;
        let settings = format!("{{{}\"x\":1}}", "\"x\":1,".repeat(entries));
        v["settings"] = serde_json::Value::Null;
        let text = v
            .to_string()
            .replace("\"settings\":null", &format!("\"settings\":{settings}"));
        let e = format!(
            "{:#}",
            result_from_str(Path::new("big.json"), &text).err().unwrap()
        );
        assert!(
            e.contains("big.json") && e.contains("keeps in memory"),
            "{e}"
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
        let r = result_from_str(Path::new("m.json"), &v.to_string()).unwrap();
        assert_eq!(r.workload_name(), "?");
        assert_eq!(r.bucket_ms("cpu"), Some(1.0));
        assert_eq!(r.setting("shared_buffers"), None);
        assert!(r.timeseries.is_empty());
    }

    #[test]
    fn a_result_reads_back_as_it_was_written() {
        let r = result_from_str(Path::new("v1.json"), V1).unwrap();
        let again: RunResult =
            serde_json::from_str(&serde_json::to_string(&r.result).unwrap()).unwrap();
        assert_eq!(
            serde_json::to_value(&again).unwrap(),
            serde_json::to_value(&r.result).unwrap()
        );
    }
}
