//! Device profiles from fio's JSON output (`fio --output-format=json`):
//! `pgiosim profile from-fio`.
//!
//! Published disk comparisons usually run one battery of 16 fio tests:
//! 4 KiB random and 1 MiB sequential, at queue depth 1 and in parallel
//! (8 jobs × QD64 for 4 KiB, 4 for fsync'd writes; 4 jobs × QD16 for 1 MiB),
//! each reading, writing, 50/50 mixed and writing with an fsync after every
//! write. Each fio job is classified by its options (`rw`, `bs`, `iodepth`,
//! `numjobs`, `fsync`/`fdatasync`/`sync`, the global options merged in), not
//! by its name, into one of those 16 [`Slot`]s, and the profile is taken
//! from them:
//!
//! | profile field | from |
//! |---|---|
//! | `read` | QD1 small random read: `read.clat_ns` p50 and p99 |
//! | `write` | QD1 small random write: `write.clat_ns` p50 and p99 |
//! | `flush` | QD1 small fsync'd write: the `sync.lat_ns` p50 and p99 (fio 3.x reports the fsync alone); without them, the time per write+fsync less the write |
//! | `latency_io_kib` | block size of the QD1 small read |
//! | `channels` | parallel small read IOPS × the profile's mean QD1 read latency (Little's law at saturation), at most the test's queue depth |
//! | `caps.iops` | when parallel small read, write and mixed IOPS agree within 10%: a flat cap (a network volume), with channels doubled so the cap, not the channels, binds |
//! | `caps.read_iops`, `caps.write_iops` | when parallel read and write agree and mixed is twice them: per-direction caps |
//! | `bandwidth_mib_s` | the highest MiB/s of the 1 MiB tests |
//! | `flush_to_media` | whether parallel fsync'd writes run at least 1.5 times the QD1 rate (they scale: false) or not (true) |
//!
//! Slots missing from the input are filled from a base profile (the
//! shipped `nvme` by default) and listed in a warning. Jobs that fit no
//! slot (trim, odd block sizes) are listed and ignored.
//!
//! No I/O here: the caller reads the files; [`FioFile::parse`] and
//! [`build`] are pure.

use std::collections::BTreeMap;
use std::path::Path;

use anyhow::{Context, Result, anyhow, bail};
use serde::Serialize;
use serde_json::Value;

use crate::device::microbench;
use crate::device::profile::Op;
use crate::device::profile::{Caps, Latency, Profile};

/// Small I/O: up to this many bytes (4 KiB and 8 KiB batteries both fit).
pub const SMALL_MAX_BYTES: u64 = 16 * 1024;
/// Large I/O: at least this many bytes.
pub const LARGE_MIN_BYTES: u64 = 128 * 1024;
/// Parallel IOPS that agree within this ratio look like a cap.
pub const CAP_AGREEMENT: f64 = 1.10;
/// Parallel fsync'd writes faster than QD1 by less than this: flushes do not
/// scale, they go to media one at a time.
pub const FLUSH_SCALING_MIN: f64 = 1.5;

/// Size class of a test's I/O.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Size {
    /// 4 to 16 KiB.
    Small,
    /// 128 KiB and more (1 MiB in the battery).
    Large,
}

/// Queue depth class: one I/O at a time, or more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Depth {
    Qd1,
    Parallel,
}

/// What a test does.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub enum Kind {
    Read,
    Write,
    /// Reads and writes mixed (rw, randrw).
    Mixed,
    /// Writes each followed by fsync or fdatasync (or O_SYNC writes).
    SyncedWrite,
}

/// One of the battery's 16 tests.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Slot {
    pub size: Size,
    pub depth: Depth,
    pub kind: Kind,
}

impl Slot {
    /// All 16, in the battery's usual order.
    pub fn all() -> Vec<Slot> {
        let mut v = Vec::with_capacity(16);
        for size in [Size::Small, Size::Large] {
            for depth in [Depth::Qd1, Depth::Parallel] {
                for kind in [Kind::Read, Kind::Write, Kind::Mixed, Kind::SyncedWrite] {
                    v.push(Slot { size, depth, kind });
                }
            }
        }
        v
    }

    /// "4k randread QD1", "1M write parallel"...
    pub fn label(&self) -> String {
        let (size, rnd) = match self.size {
            Size::Small => ("4k", "rand"),
            Size::Large => ("1M", ""),
        };
        let kind = match self.kind {
            Kind::Read => format!("{rnd}read"),
            Kind::Write => format!("{rnd}write"),
            Kind::Mixed => format!("{rnd}rw 50/50"),
            Kind::SyncedWrite => format!("{rnd}write+fsync"),
        };
        let depth = match self.depth {
            Depth::Qd1 => "QD1",
            Depth::Parallel => "parallel",
        };
        format!("{size} {kind} {depth}")
    }
}

/// Latency figures of one direction of one job, ns.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct LatencyNs {
    pub mean: f64,
    pub p50: Option<f64>,
    pub p99: Option<f64>,
}

/// One direction (read or write) of a job.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DirFigures {
    /// I/Os done.
    pub ios: u64,
    /// I/Os per second, summed over the job's threads.
    pub iops: f64,
    /// Bytes per second, summed over the job's threads.
    pub bw_bytes: f64,
    /// Completion latency (fio's `clat_ns`; `lat_ns` if clat has no
    /// percentiles).
    pub clat: Option<LatencyNs>,
    /// Total latency (`lat_ns`: submission + completion) mean, ns.
    pub lat_mean_ns: Option<f64>,
}

/// One fio job (all its threads, when fio reported them one by one).
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FioJob {
    /// File it came from.
    pub origin: String,
    /// Index of its first entry in the file's `jobs` array.
    pub index: usize,
    pub name: String,
    /// fio's `rw`.
    pub rw: String,
    pub bs_read: u64,
    pub bs_write: u64,
    pub iodepth: u32,
    pub numjobs: u32,
    /// "fsync", "fdatasync", "sync" (O_SYNC) or "" (none).
    pub sync: String,
    pub read: DirFigures,
    pub write: DirFigures,
    /// The fsync/fdatasync latencies alone (fio 3.x `sync.lat_ns`).
    pub sync_lat: Option<LatencyNs>,
    /// The battery test it fits, if any; else why not.
    pub slot: std::result::Result<Slot, String>,
}

impl FioJob {
    /// "file.json: job 3 'name' (randread, bs 4k, 8 × QD64)".
    pub fn describe(&self) -> String {
        let bs = if self.bs_read == self.bs_write {
            crate::units::fio_size(self.bs_read)
        } else {
            format!(
                "{},{}",
                crate::units::fio_size(self.bs_read),
                crate::units::fio_size(self.bs_write)
            )
        };
        let sync = if self.sync.is_empty() {
            String::new()
        } else {
            format!(", {}=1", self.sync)
        };
        format!(
            "{}: job {} '{}' ({}, bs {bs}, {} × QD{}{sync})",
            self.origin, self.index, self.name, self.rw, self.numjobs, self.iodepth
        )
    }
}

/// One fio JSON file, parsed.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FioFile {
    pub origin: String,
    /// fio's `fio version`.
    pub version: String,
    /// fio's `time` (when it ran).
    pub time: String,
    /// Devices fio saw busy (`disk_util[].name`).
    pub disks: Vec<String>,
    pub jobs: Vec<FioJob>,
}

fn opt_str(opts: &BTreeMap<String, String>, key: &str) -> Option<String> {
    opts.get(key).cloned()
}

/// "4k" → 4096, "1M" → 1 MiB, "8192" → 8192; fio's units are powers of 2
/// (its default kb_base=1024).
pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().ok()?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "" | "b" => 1,
        "k" | "kb" | "kib" => 1 << 10,
        "m" | "mb" | "mib" => 1 << 20,
        "g" | "gb" | "gib" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(mult)
}

/// Options as strings, whatever JSON type fio gave them.
fn options(v: Option<&Value>) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    if let Some(Value::Object(o)) = v {
        for (k, v) in o {
            let s = match v {
                Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            m.insert(k.clone(), s);
        }
    }
    m
}

fn latency(v: &Value) -> Option<LatencyNs> {
    let n = v.get("N").and_then(Value::as_u64).unwrap_or(1);
    let mean = v.get("mean").and_then(Value::as_f64)?;
    if n == 0 {
        return None;
    }
    let pct = |q: &str| {
        v.get("percentile")
            .and_then(|p| p.get(q))
            .and_then(Value::as_f64)
            .filter(|x| *x > 0.0)
    };
    Some(LatencyNs {
        mean,
        p50: pct("50.000000"),
        p99: pct("99.000000"),
    })
}

fn dir_figures(v: Option<&Value>, field: &str) -> std::result::Result<DirFigures, String> {
    let Some(v) = v else {
        return Err(format!("{field}: missing"));
    };
    let num = |k: &str| v.get(k).and_then(Value::as_f64);
    let ios = v
        .get("total_ios")
        .and_then(Value::as_u64)
        .or_else(|| v.get("io_bytes").and_then(Value::as_u64).map(|b| b.min(1)))
        .ok_or_else(|| format!("{field}.total_ios: missing or not a number"))?;
    let iops = num("iops").ok_or_else(|| format!("{field}.iops: missing or not a number"))?;
    let clat_ns = v.get("clat_ns").and_then(latency);
    let lat_ns = v.get("lat_ns").and_then(latency);
    // Old fio (2.x) reports µs in clat/lat.
    let clat_us = v.get("clat").and_then(latency).map(|l| LatencyNs {
        mean: l.mean * 1e3,
        p50: l.p50.map(|x| x * 1e3),
        p99: l.p99.map(|x| x * 1e3),
    });
    let clat = match (clat_ns, lat_ns, clat_us) {
        (Some(c), _, _) if c.p50.is_some() => Some(c),
        (_, Some(l), _) if l.p50.is_some() => Some(l),
        (_, _, Some(c)) => Some(c),
        (c, l, _) => c.or(l),
    };
    Ok(DirFigures {
        ios,
        iops,
        bw_bytes: num("bw_bytes").unwrap_or_else(|| num("bw").unwrap_or(0.0) * 1024.0),
        clat,
        lat_mean_ns: lat_ns.map(|l| l.mean),
    })
}

/// Merge the threads of one job reported one by one (no group_reporting):
/// rates add up, latencies are weighted by I/Os.
fn merge_dir(a: &DirFigures, b: &DirFigures) -> DirFigures {
    let w = |x: f64, y: f64| {
        let n = (a.ios + b.ios) as f64;
        if n == 0.0 {
            x
        } else {
            (x * a.ios as f64 + y * b.ios as f64) / n
        }
    };
    let wo = |x: Option<f64>, y: Option<f64>| match (x, y) {
        (Some(x), Some(y)) => Some(w(x, y)),
        (x, y) => x.or(y),
    };
    DirFigures {
        ios: a.ios + b.ios,
        iops: a.iops + b.iops,
        bw_bytes: a.bw_bytes + b.bw_bytes,
        clat: match (a.clat, b.clat) {
            (Some(x), Some(y)) => Some(LatencyNs {
                mean: w(x.mean, y.mean),
                p50: wo(x.p50, y.p50),
                p99: wo(x.p99, y.p99),
            }),
            (x, y) => x.or(y),
        },
        lat_mean_ns: wo(a.lat_mean_ns, b.lat_mean_ns),
    }
}

fn classify(
    rw: &str,
    bs_read: u64,
    bs_write: u64,
    qd_total: u64,
    sync: &str,
) -> std::result::Result<Slot, String> {
    let base = rw.split(':').next().unwrap_or(rw);
    let (kind, bs) = match base {
        "read" | "randread" => (Kind::Read, bs_read),
        "write" | "randwrite" if !sync.is_empty() => (Kind::SyncedWrite, bs_write),
        "write" | "randwrite" => (Kind::Write, bs_write),
        "rw" | "readwrite" | "randrw" => (Kind::Mixed, bs_read.max(bs_write)),
        other => return Err(format!("rw={other} is not one of the battery's tests")),
    };
    let size = if bs <= SMALL_MAX_BYTES {
        Size::Small
    } else if bs >= LARGE_MIN_BYTES {
        Size::Large
    } else {
        return Err(format!(
            "block size {} is neither small (≤ 16k) nor large (≥ 128k)",
            crate::units::fio_size(bs)
        ));
    };
    let depth = if qd_total <= 1 {
        Depth::Qd1
    } else {
        Depth::Parallel
    };
    Ok(Slot { size, depth, kind })
}

/// The fields of fio's output that [`FioFile::parse`] reads, at any depth;
/// the rest (latency histograms' `bins`, `iodepth_level`, `latency_us`,
/// most options) is skipped unread: a json+ output's histograms are most of
/// its size.
const FIO_FIELDS: &[&str] = &[
    "fio version",
    "time",
    "global options",
    "client_stats",
    "jobs",
    "disk_util",
    "name",
    "jobname",
    "job options",
    "error",
    "read",
    "write",
    "sync",
    "total_ios",
    "io_bytes",
    "iops",
    "bw_bytes",
    "bw",
    "clat_ns",
    "lat_ns",
    "clat",
    "N",
    "mean",
    "percentile",
    "50.000000",
    "99.000000",
    "rw",
    "readwrite",
    "bs",
    "blocksize",
    "iodepth",
    "numjobs",
    "fdatasync",
    "fsync",
];

/// What the kept fields of one fio output may take in memory: fio runs at
/// most 4,096 jobs at once (its `max_jobs`), each about 5 kB kept here, so
/// a real output needs at most 20 MiB.
const FIO_BUDGET_BYTES: usize = 64 << 20;

/// fio's output as JSON, only [`FIO_FIELDS`] kept, within
/// [`FIO_BUDGET_BYTES`].
fn read_kept(text: &str) -> serde_json::Result<Value> {
    use serde::de::DeserializeSeed;
    let keep = |k: &str| FIO_FIELDS.contains(&k);
    let mut de = serde_json::Deserializer::from_str(text);
    let v = crate::json_memory::within(FIO_BUDGET_BYTES, || {
        crate::json_memory::Kept { keep: &keep }.deserialize(&mut de)
    })?;
    de.end()?;
    Ok(v)
}

impl FioFile {
    /// Parses one fio JSON output. `origin` names it in errors. Text before
    /// the JSON object (fio's notes when its output went to a terminal) is
    /// skipped.
    pub fn parse(text: &str, origin: &str) -> Result<FioFile> {
        let value = fio_json(text, origin)?;
        let Some(obj) = value.as_object() else {
            bail!("{origin}: not fio JSON output: the top level is not an object");
        };
        let (version, jobs) = version_and_jobs(obj, origin)?;
        let globals = options(obj.get("global options"));
        let mut out: Vec<FioJob> = Vec::new();
        let mut problems = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
            let job = match FioJob::read(j, i, origin, &globals) {
                Ok(job) => job,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            // Threads of one job reported one by one: merge into the last.
            if let Some(last) = out.last_mut()
                && last.name == job.name
                && last.rw == job.rw
                && last.numjobs == job.numjobs
                && job.numjobs > 1
            {
                last.read = merge_dir(&last.read, &job.read);
                last.write = merge_dir(&last.write, &job.write);
                last.sync_lat = last.sync_lat.or(job.sync_lat);
                continue;
            }
            if job.read.ios == 0 && job.write.ios == 0 {
                problems.push(format!("jobs[{i}] '{}': did no I/O", job.name));
                continue;
            }
            out.push(job);
        }
        if out.is_empty() {
            bail!(
                "{origin}: jobs: no usable jobs ({})",
                if problems.is_empty() {
                    "none did any I/O".to_string()
                } else {
                    problems.join("; ")
                }
            );
        }
        let disks = disk_names(obj);
        Ok(FioFile {
            origin: origin.to_string(),
            version,
            time: obj
                .get("time")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            disks,
            jobs: out,
        })
    }
}

/// The fio version and the jobs of a fio output's top-level object,
/// refusing client/server output and an output with no jobs.
fn version_and_jobs<'a>(
    obj: &'a serde_json::Map<String, Value>,
    origin: &str,
) -> Result<(String, &'a Vec<Value>)> {
    if obj.contains_key("client_stats") && !obj.contains_key("jobs") {
        bail!(
            "{origin}: client_stats: fio client/server output is not supported; \
             run fio locally with --output-format=json"
        );
    }
    let version = obj.get("fio version").and_then(Value::as_str);
    let jobs = obj.get("jobs").and_then(Value::as_array);
    let (version, jobs) = match (version, jobs) {
        (Some(v), Some(j)) => (v.to_string(), j),
        (None, _) => bail!(
            "{origin}: \"fio version\": missing, so this is not fio JSON output; \
             produce it with fio --output-format=json"
        ),
        (Some(_), None) => bail!("{origin}: jobs: missing or not an array"),
    };
    if jobs.is_empty() {
        bail!("{origin}: jobs: empty, no usable jobs");
    }
    Ok((version, jobs))
}

impl FioJob {
    /// The `i`th entry `j` of `origin`'s jobs, its options over `globals`;
    /// an error (fio's own, or an option or figure pgiosim cannot read)
    /// says why the entry is not used.
    fn read(
        j: &Value,
        i: usize,
        origin: &str,
        globals: &BTreeMap<String, String>,
    ) -> std::result::Result<FioJob, String> {
        let at = format!("jobs[{i}]");
        let name = j
            .get("jobname")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let mut opts = globals.clone();
        opts.extend(options(j.get("job options")));
        if let Some(err) = j.get("error").and_then(Value::as_i64)
            && err != 0
        {
            return Err(format!("{at} '{name}': error {err}"));
        }
        let JobOptions {
            rw,
            bs_read,
            bs_write,
            iodepth,
            numjobs,
            sync,
        } = job_options(&at, &name, &opts)?;
        let read = dir_figures(j.get("read"), &format!("{at}.read"))?;
        let write = dir_figures(j.get("write"), &format!("{at}.write"))?;
        let sync_lat = j
            .get("sync")
            .and_then(|s| s.get("lat_ns"))
            .and_then(latency);
        let qd_total = u64::from(iodepth) * u64::from(numjobs);
        let slot = classify(&rw, bs_read, bs_write, qd_total, sync);
        Ok(FioJob {
            origin: origin.to_string(),
            index: i,
            name,
            rw,
            bs_read,
            bs_write,
            iodepth,
            numjobs,
            sync: sync.to_string(),
            read,
            write,
            sync_lat,
            slot,
        })
    }
}

/// The JSON object of a fio output, skipping text before it (fio's notes
/// when its output went to a terminal).
fn fio_json(text: &str, origin: &str) -> Result<Value> {
    Ok(match read_kept(text) {
        Ok(v) => v,
        // Valid JSON, but more of it than a fio output holds.
        Err(e) if e.is_data() => bail!("{origin}: {e}"),
        Err(first) => match text.find("\n{") {
            Some(i) => read_kept(&text[i + 1..])
                .map_err(|_| anyhow!("{origin}: not valid JSON: {first}"))?,
            None => bail!(
                "{origin}: not valid JSON: {first}; expected the output of \
                 fio --output-format=json"
            ),
        },
    })
}

/// The disks fio's `disk_util` names.
fn disk_names(obj: &serde_json::Map<String, Value>) -> Vec<String> {
    obj.get("disk_util")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|d| d.get("name").and_then(Value::as_str).map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// A job's options as pgiosim reads them.
struct JobOptions {
    rw: String,
    bs_read: u64,
    bs_write: u64,
    iodepth: u32,
    numjobs: u32,
    sync: &'static str,
}

/// The options of job `at` (`name`) that say what it measured; an error
/// names the option and its value.
fn job_options(
    at: &str,
    name: &str,
    opts: &BTreeMap<String, String>,
) -> std::result::Result<JobOptions, String> {
    let rw = opt_str(opts, "rw")
        .or_else(|| opt_str(opts, "readwrite"))
        .unwrap_or_else(|| "read".into());
    let bs_text = opt_str(opts, "bs")
        .or_else(|| opt_str(opts, "blocksize"))
        .unwrap_or_else(|| "4k".into());
    let mut parts = bs_text.split(',');
    let first = parts.next().unwrap_or("4k");
    let Some(bs_read) = parse_size(first) else {
        return Err(format!(
            "{at} '{name}': job options.bs: {bs_text:?} is not a block size pgiosim reads"
        ));
    };
    let bs_write = match parts.next().filter(|s| !s.is_empty()) {
        Some(w) => match parse_size(w) {
            Some(b) => b,
            None => {
                return Err(format!(
                    "{at} '{name}': job options.bs: {bs_text:?} is not a block size"
                ));
            }
        },
        None => bs_read,
    };
    let num_opt = |k: &str| -> std::result::Result<u32, String> {
        match opts.get(k) {
            None => Ok(1),
            Some(s) => s
                .trim()
                .parse::<u32>()
                .ok()
                .filter(|&n| n >= 1)
                .ok_or_else(|| {
                    format!("{at} '{name}': job options.{k}: {s:?} is not a whole number ≥ 1")
                }),
        }
    };
    let (iodepth, numjobs) = (num_opt("iodepth")?, num_opt("numjobs")?);
    let set = |k: &str| opts.get(k).is_some_and(|v| v != "0");
    let sync = if set("fdatasync") {
        "fdatasync"
    } else if set("fsync") {
        "fsync"
    } else if set("sync") && opts.get("sync").is_some_and(|v| v != "none") {
        "sync"
    } else {
        ""
    };
    Ok(JobOptions {
        rw,
        bs_read,
        bs_write,
        iodepth,
        numjobs,
        sync,
    })
}

mod build;
pub(crate) use build::sig3;
pub use build::{Import, Used, build, render_table};

#[cfg(test)]
mod tests;
