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

use super::microbench;
use super::model::Op;
use super::profile::{Caps, Latency, Profile};

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
    let v = crate::json_bound::within(FIO_BUDGET_BYTES, || {
        crate::json_bound::Kept { keep: &keep }.deserialize(&mut de)
    })?;
    de.end()?;
    Ok(v)
}

impl FioFile {
    /// Parses one fio JSON output. `origin` names it in errors. Text before
    /// the JSON object (fio's notes when its output went to a terminal) is
    /// skipped.
    pub fn parse(text: &str, origin: &str) -> Result<FioFile> {
        let value: Value = match read_kept(text) {
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
        };
        let Some(obj) = value.as_object() else {
            bail!("{origin}: not fio JSON output: the top level is not an object");
        };
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
        let globals = options(obj.get("global options"));
        let mut out: Vec<FioJob> = Vec::new();
        let mut problems = Vec::new();
        for (i, j) in jobs.iter().enumerate() {
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
                problems.push(format!("{at} '{name}': error {err}"));
                continue;
            }
            let rw = opt_str(&opts, "rw")
                .or_else(|| opt_str(&opts, "readwrite"))
                .unwrap_or_else(|| "read".into());
            let bs_text = opt_str(&opts, "bs")
                .or_else(|| opt_str(&opts, "blocksize"))
                .unwrap_or_else(|| "4k".into());
            let mut parts = bs_text.split(',');
            let first = parts.next().unwrap_or("4k");
            let Some(bs_read) = parse_size(first) else {
                problems.push(format!(
                    "{at} '{name}': job options.bs: {bs_text:?} is not a block size pgiosim reads"
                ));
                continue;
            };
            let bs_write = match parts.next().filter(|s| !s.is_empty()) {
                Some(w) => match parse_size(w) {
                    Some(b) => b,
                    None => {
                        problems.push(format!(
                            "{at} '{name}': job options.bs: {bs_text:?} is not a block size"
                        ));
                        continue;
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
                            format!(
                                "{at} '{name}': job options.{k}: {s:?} is not a whole number ≥ 1"
                            )
                        }),
                }
            };
            let (iodepth, numjobs) = match (num_opt("iodepth"), num_opt("numjobs")) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(e), _) | (_, Err(e)) => {
                    problems.push(e);
                    continue;
                }
            };
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
            let read = match dir_figures(j.get("read"), &format!("{at}.read")) {
                Ok(d) => d,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            let write = match dir_figures(j.get("write"), &format!("{at}.write")) {
                Ok(d) => d,
                Err(e) => {
                    problems.push(e);
                    continue;
                }
            };
            let sync_lat = j
                .get("sync")
                .and_then(|s| s.get("lat_ns"))
                .and_then(latency);
            // Threads of one job reported one by one: merge into the last.
            if let Some(last) = out.last_mut()
                && last.name == name
                && last.rw == rw
                && last.numjobs == numjobs
                && numjobs > 1
            {
                last.read = merge_dir(&last.read, &read);
                last.write = merge_dir(&last.write, &write);
                last.sync_lat = last.sync_lat.or(sync_lat);
                continue;
            }
            if read.ios == 0 && write.ios == 0 {
                problems.push(format!("{at} '{name}': did no I/O"));
                continue;
            }
            let slot = classify(
                &rw,
                bs_read,
                bs_write,
                u64::from(iodepth) * u64::from(numjobs),
                sync,
            );
            out.push(FioJob {
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
            });
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
        let disks = obj
            .get("disk_util")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|d| d.get("name").and_then(Value::as_str).map(String::from))
                    .collect()
            })
            .unwrap_or_default();
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

/// One line of what the import used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Used {
    pub slot: String,
    /// The fio job, or "default (base profile)".
    pub from: String,
    /// What was read from it ("p50 36 µs, p99 297 µs", "92,077 IOPS").
    pub figure: String,
    /// The profile fields it set.
    pub fields: String,
}

/// A profile built from fio results, with what went into it.
#[derive(Clone, Debug)]
pub struct Import {
    pub profile: Profile,
    /// One row per battery slot.
    pub rows: Vec<Used>,
    /// Slots of the battery with no job in the input.
    pub missing: Vec<Slot>,
    /// Profile fields taken from the base profile because their test was
    /// missing (or unusable).
    pub defaulted: Vec<String>,
    /// Jobs that fit no slot, or a slot already taken, and why.
    pub ignored: Vec<String>,
    /// Other remarks (e.g. a detected cap).
    pub notes: Vec<String>,
}

impl Import {
    /// The warning about missing tests, if any.
    pub fn warning(&self) -> Option<String> {
        if self.missing.is_empty() && self.defaulted.is_empty() {
            return None;
        }
        let mut s = String::new();
        if !self.missing.is_empty() {
            s.push_str(&format!(
                "{} of the 16 battery tests are missing from the input: {}",
                self.missing.len(),
                self.missing
                    .iter()
                    .map(Slot::label)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.defaulted.is_empty() {
            if !s.is_empty() {
                s.push_str("; ");
            }
            s.push_str(&format!(
                "taken from the base profile instead: {}",
                self.defaulted.join(", ")
            ));
        }
        Some(s)
    }
}

fn us(ns: f64) -> f64 {
    ns / 1e3
}

/// Round to 3 significant figures: a profile states measurements, not noise.
pub(crate) fn sig3(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    format!("{x:.2e}").parse().unwrap_or(x)
}

/// Median and p99 of a latency, µs, if both are known.
fn pcts(l: Option<LatencyNs>) -> Option<(f64, f64)> {
    let l = l?;
    Some((us(l.p50?), us(l.p99?)))
}

/// Builds a profile named `name` from parsed fio files; fields whose tests
/// are missing come from `base`. The result is validated as any profile is.
pub fn build(files: &[FioFile], name: &str, base: &Profile) -> Result<Import> {
    let (by_slot, ignored) = assign_slots(files)?;
    let mut b = Building::new(by_slot, name, base);
    let qd1_sync = b.get(Size::Small, Depth::Qd1, Kind::SyncedWrite);
    b.qd1_read();
    b.qd1_write();
    b.flush(qd1_sync);
    b.bandwidth();
    let par_read = b.get(Size::Small, Depth::Parallel, Kind::Read);
    b.parallelism_and_caps(par_read);
    b.flush_scaling(qd1_sync);
    b.defaulted.push(format!(
        "{} (the battery does not measure them; only calibrate does)",
        crate::device::profile::CALIBRATE_ONLY_FIELDS
    ));
    let (all_rows, missing) = b.rows_and_missing();
    let mut notes = b.notes;
    let mut p = b.p;
    p.description = format!(
        "Imported from fio results ({} of the 16 battery tests)",
        16 - missing.len()
    );
    p.source = source_text(files, base, &b.defaulted);
    let text = serde_json::to_string(&p)?;
    let profile = Profile::from_json(&text, "the imported profile")
        .context("the fio figures do not make a valid profile")?;
    // Read back what the model makes of the parallel read, as a check.
    if let Some(j) = par_read {
        let qd = (j.iodepth * j.numjobs).min(1024);
        let modelled = microbench::read_iops(&profile, qd, 1);
        notes.push(format!(
            "the profile's model gives {modelled:.0} IOPS at QD{qd} where fio measured {:.0}",
            j.read.iops
        ));
    }
    Ok(Import {
        profile,
        rows: all_rows,
        missing,
        defaulted: b.defaulted,
        ignored,
        notes,
    })
}

/// Each job to its battery slot, the first one of a slot winning; the jobs
/// that fit none (or a taken one), with why. An error if none fits.
fn assign_slots(files: &[FioFile]) -> Result<(BTreeMap<Slot, &FioJob>, Vec<String>)> {
    let mut by_slot: BTreeMap<Slot, &FioJob> = BTreeMap::new();
    let mut ignored = Vec::new();
    for job in files.iter().flat_map(|f| &f.jobs) {
        match &job.slot {
            Err(why) => ignored.push(format!("{}: {why}", job.describe())),
            Ok(slot) => match by_slot.get(slot) {
                Some(first) => ignored.push(format!(
                    "{}: {} already taken by {}",
                    job.describe(),
                    slot.label(),
                    first.describe()
                )),
                None => {
                    by_slot.insert(*slot, job);
                }
            },
        }
    }
    if by_slot.is_empty() {
        bail!(
            "no fio job fits any of the battery's tests (4k/1M × QD1/parallel × read, write, \
             mixed, fsync'd write): {}",
            ignored.join("; ")
        );
    }
    Ok((by_slot, ignored))
}

/// The profile as the battery's slots fill it in, and what went into it.
struct Building<'a> {
    by_slot: BTreeMap<Slot, &'a FioJob>,
    base: &'a Profile,
    p: Profile,
    defaulted: Vec<String>,
    notes: Vec<String>,
    rows: BTreeMap<Slot, Used>,
}

impl<'a> Building<'a> {
    fn new(by_slot: BTreeMap<Slot, &'a FioJob>, name: &str, base: &'a Profile) -> Self {
        let mut p = base.clone();
        p.name = name.to_string();
        Building {
            by_slot,
            base,
            p,
            defaulted: Vec::new(),
            notes: Vec::new(),
            rows: BTreeMap::new(),
        }
    }

    fn get(&self, size: Size, depth: Depth, kind: Kind) -> Option<&'a FioJob> {
        self.by_slot.get(&Slot { size, depth, kind }).copied()
    }

    /// Record that `job`'s `figure` set `fields`.
    fn used(&mut self, job: &FioJob, figure: String, fields: &str) {
        let slot = job.slot.clone().expect("slotted");
        self.rows.insert(
            slot,
            Used {
                slot: slot.label(),
                from: job.describe(),
                figure,
                fields: fields.to_string(),
            },
        );
    }

    /// `read` and `latency_io_kib`, from the QD1 small random read.
    fn qd1_read(&mut self) {
        let qd1_read = self.get(Size::Small, Depth::Qd1, Kind::Read);
        match qd1_read.and_then(|j| pcts(j.read.clat).map(|l| (j, l))) {
            Some((j, (p50, p99))) => {
                self.p.read = Latency {
                    median_us: sig3(p50),
                    p99_us: sig3(p99.max(p50)),
                };
                self.p.latency_io_kib = (j.bs_read / 1024).max(1) as u32;
                self.used(
                    j,
                    format!("clat p50 {p50:.1} µs, p99 {p99:.1} µs"),
                    "read, latency_io_kib",
                );
            }
            None => self
                .defaulted
                .push("read (QD1 small random read)".to_string()),
        }
    }

    /// `write`, from the QD1 small random write.
    fn qd1_write(&mut self) {
        let qd1_write = self.get(Size::Small, Depth::Qd1, Kind::Write);
        match qd1_write.and_then(|j| pcts(j.write.clat).map(|l| (j, l))) {
            Some((j, (p50, p99))) => {
                self.p.write = Latency {
                    median_us: sig3(p50),
                    p99_us: sig3(p99.max(p50)),
                };
                if j.bs_write / 1024 != u64::from(self.p.latency_io_kib) {
                    self.notes.push(format!(
                        "the QD1 write used {} blocks, the read {} KiB: latency_io_kib follows the read",
                        crate::units::fio_size(j.bs_write),
                        self.p.latency_io_kib
                    ));
                }
                self.used(j, format!("clat p50 {p50:.1} µs, p99 {p99:.1} µs"), "write");
            }
            None => self
                .defaulted
                .push("write (QD1 small random write)".to_string()),
        }
    }

    /// `flush`, from the QD1 fsync'd write: its sync latency, or else the
    /// write+sync pair's time less the write's own.
    fn flush(&mut self, qd1_sync: Option<&FioJob>) {
        let mut flush_from = None;
        if let Some(j) = qd1_sync {
            if let Some((p50, p99)) = pcts(j.sync_lat) {
                flush_from = Some((
                    j,
                    p50,
                    p99,
                    format!("{} p50 {p50:.1} µs, p99 {p99:.1} µs", j.sync),
                ));
            } else if j.write.iops > 0.0 {
                // Only the pair is known: per-op time less the write's own.
                let per_op = 1e6 / j.write.iops;
                let write_mean = j.write.clat.map_or(self.p.write.median_us, |c| us(c.mean));
                let mean = (per_op - write_mean).max(1.0);
                let spread = j
                    .write
                    .clat
                    .and_then(|c| Some(c.p99? / c.p50?))
                    .unwrap_or(3.0)
                    .max(1.0);
                flush_from = Some((
                    j,
                    mean,
                    mean * spread,
                    format!(
                        "{:.0} write+{}/s, less the write's {write_mean:.1} µs",
                        j.write.iops, j.sync
                    ),
                ));
            }
        }
        match flush_from {
            Some((j, p50, p99, figure)) => {
                self.p.flush = Latency {
                    median_us: sig3(p50),
                    p99_us: sig3(p99.max(p50)),
                };
                if j.sync == "fsync" {
                    self.notes.push(
                        "flush comes from fsync, which also writes metadata; PostgreSQL's WAL uses \
                         fdatasync, usually cheaper (fio --fdatasync=1 measures that)"
                            .to_string(),
                    );
                }
                self.used(j, figure, "flush");
            }
            None => self
                .defaulted
                .push("flush (QD1 small fsync'd write)".to_string()),
        }
    }

    /// `bandwidth_mib_s`: the best of the large tests.
    fn bandwidth(&mut self) {
        let mut best: Option<(&FioJob, f64)> = None;
        for kind in [Kind::Read, Kind::Write, Kind::Mixed, Kind::SyncedWrite] {
            for depth in [Depth::Qd1, Depth::Parallel] {
                if let Some(j) = self.get(Size::Large, depth, kind) {
                    let mib = (j.read.bw_bytes + j.write.bw_bytes) / 1_048_576.0;
                    if best.is_none_or(|(_, b)| mib > b) {
                        best = Some((j, mib));
                    }
                }
            }
        }
        match best {
            Some((j, mib)) if mib > 0.0 => {
                self.p.bandwidth_mib_s = sig3(mib);
                for kind in [Kind::Read, Kind::Write, Kind::Mixed, Kind::SyncedWrite] {
                    for depth in [Depth::Qd1, Depth::Parallel] {
                        if let Some(o) = self.get(Size::Large, depth, kind) {
                            let m = (o.read.bw_bytes + o.write.bw_bytes) / 1_048_576.0;
                            let fields = if std::ptr::eq(o, j) {
                                "bandwidth_mib_s (the best large test)"
                            } else {
                                "(bandwidth: below the best)"
                            };
                            self.used(o, format!("{m:.0} MiB/s"), fields);
                        }
                    }
                }
            }
            _ => self
                .defaulted
                .push("bandwidth_mib_s (1M sequential tests)".to_string()),
        }
    }

    /// `channels` and `caps`, from the parallel small tests: channels from
    /// the parallel read's IOPS by Little's law, caps where the rates agree.
    fn parallelism_and_caps(&mut self, par_read: Option<&FioJob>) {
        let par_write = self.get(Size::Small, Depth::Parallel, Kind::Write);
        let par_mixed = self.get(Size::Small, Depth::Parallel, Kind::Mixed);
        self.p.caps = Caps::default();
        match par_read.filter(|j| j.read.iops > 0.0) {
            Some(j) => {
                let qd = u64::from(j.iodepth) * u64::from(j.numjobs);
                let mean_s = self.p.qd1_mean_us(Op::Read) / 1e6;
                let k = (j.read.iops * mean_s).round().clamp(1.0, qd as f64);
                self.p.channels = k as u32;
                let rates = [
                    Some(j.read.iops),
                    par_write.map(|w| w.write.iops),
                    par_mixed.map(|m| m.read.iops + m.write.iops),
                ];
                let mut fields = "channels".to_string();
                if let [Some(r), Some(w), Some(m)] = rates {
                    let hi = r.max(w).max(m);
                    let lo = r.min(w).min(m);
                    let dir_hi = r.max(w);
                    let dir_lo = r.min(w);
                    if hi / lo <= CAP_AGREEMENT {
                        let cap = sig3((r + w + m) / 3.0);
                        self.p.caps.iops = Some(cap);
                        self.p.channels =
                            (2.0 * k).min(f64::from(super::profile::CHANNELS_MAX)) as u32;
                        fields = "caps.iops, channels".into();
                        self.notes.push(format!(
                            "parallel read, write and mixed IOPS agree within 10% ({r:.0}, {w:.0}, \
                             {m:.0}): read as a flat cap of {cap} IOPS"
                        ));
                    } else if dir_hi / dir_lo <= CAP_AGREEMENT
                        && (m / (r + w)).clamp(0.0, 2.0) > 1.0 / CAP_AGREEMENT
                    {
                        let cap = sig3((r + w) / 2.0);
                        self.p.caps.read_iops = Some(cap);
                        self.p.caps.write_iops = Some(cap);
                        self.p.channels =
                            (2.0 * k).min(f64::from(super::profile::CHANNELS_MAX)) as u32;
                        fields = "caps.read_iops, caps.write_iops, channels".into();
                        self.notes.push(format!(
                            "parallel read and write IOPS agree ({r:.0}, {w:.0}) and mixed reaches \
                             their sum ({m:.0}): read as per-direction caps of {cap} IOPS"
                        ));
                    }
                }
                self.used(
                    j,
                    format!("{:.0} IOPS at {} × QD{}", j.read.iops, j.numjobs, j.iodepth),
                    &fields,
                );
                for o in [par_write, par_mixed].into_iter().flatten() {
                    self.used(
                        o,
                        format!("{:.0} IOPS", o.read.iops + o.write.iops),
                        if fields == "channels" {
                            "(cap check: no cap)"
                        } else {
                            "(cap check)"
                        },
                    );
                }
            }
            None => {
                self.p.channels = self.base.channels;
                self.p.caps = self.base.caps.clone();
                self.defaulted
                    .push("channels and caps (parallel small random read)".to_string());
            }
        }
    }

    /// `flush_to_media`: do parallel fsync'd writes scale past QD1's?
    fn flush_scaling(&mut self, qd1_sync: Option<&FioJob>) {
        let par_sync = self.get(Size::Small, Depth::Parallel, Kind::SyncedWrite);
        match (qd1_sync, par_sync) {
            (Some(a), Some(b)) if a.write.iops > 0.0 => {
                let ratio = b.write.iops / a.write.iops;
                self.p.flush_to_media = ratio < FLUSH_SCALING_MIN;
                self.used(
                    b,
                    format!(
                        "{:.0} writes+{}/s, {ratio:.1}× QD1's {:.0}",
                        b.write.iops, b.sync, a.write.iops
                    ),
                    "flush_to_media",
                );
            }
            _ => self
                .defaulted
                .push("flush_to_media (parallel fsync'd write)".to_string()),
        }
    }

    /// One row per battery slot, in battery order (jobs the model does not
    /// use and missing slots included), and the missing slots.
    fn rows_and_missing(&mut self) -> (Vec<Used>, Vec<Slot>) {
        for slot in Slot::all() {
            if let Some(j) = self.by_slot.get(&slot)
                && !self.rows.contains_key(&slot)
            {
                self.rows.insert(
                    slot,
                    Used {
                        slot: slot.label(),
                        from: j.describe(),
                        figure: format!("{:.0} IOPS", j.read.iops + j.write.iops),
                        fields: "(not used by the model)".into(),
                    },
                );
            }
        }
        let missing: Vec<Slot> = Slot::all()
            .into_iter()
            .filter(|s| !self.by_slot.contains_key(s))
            .collect();
        let all_rows = Slot::all()
            .into_iter()
            .map(|s| {
                self.rows.remove(&s).unwrap_or_else(|| Used {
                    slot: s.label(),
                    from: "missing".into(),
                    figure: String::new(),
                    fields: String::new(),
                })
            })
            .collect();
        (all_rows, missing)
    }
}

/// The profile's `source`: the files it came from and what the base filled.
fn source_text(files: &[FioFile], base: &Profile, defaulted: &[String]) -> String {
    let sources: Vec<String> = files
        .iter()
        .map(|f| {
            let disks = if f.disks.is_empty() {
                String::new()
            } else {
                format!(" on {}", f.disks.join(", "))
            };
            let file = Path::new(&f.origin)
                .file_name()
                .map_or(f.origin.clone(), |n| n.to_string_lossy().into_owned());
            format!("{file} ({}, {}{disks})", f.version, f.time)
        })
        .collect();
    let mut source = format!(
        "pgiosim profile from-fio: {}. Latencies are fio's clat p50/p99; channels from parallel \
         read IOPS by Little's law",
        sources.join("; ")
    );
    if !defaulted.is_empty() {
        source.push_str(&format!(
            "; from the base profile {}: {}",
            base.name,
            defaulted.join(", ")
        ));
    }
    source.push('.');
    source
}

/// The import as a table, one row per battery test.
pub fn render_table(imp: &Import) -> String {
    let mut s = format!(
        "{:<28} {:<40} {}\n",
        "battery test", "figure", "→ profile field"
    );
    for r in &imp.rows {
        if r.from == "missing" {
            s.push_str(&format!("{:<28} {:<40} {}\n", r.slot, "(missing)", ""));
        } else {
            s.push_str(&format!("{:<28} {:<40} {}\n", r.slot, r.figure, r.fields));
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_like_fio() {
        assert_eq!(parse_size("4k"), Some(4096));
        assert_eq!(parse_size("4K"), Some(4096));
        assert_eq!(parse_size("1M"), Some(1 << 20));
        assert_eq!(parse_size("8192"), Some(8192));
        assert_eq!(parse_size("1mib"), Some(1 << 20));
        assert_eq!(parse_size("x"), None);
        assert_eq!(parse_size("4q"), None);
    }

    #[test]
    fn every_slot_has_a_distinct_label() {
        let labels: std::collections::BTreeSet<String> =
            Slot::all().iter().map(Slot::label).collect();
        assert_eq!(labels.len(), 16);
    }

    #[test]
    fn classification_by_options() {
        let c = |rw, bs, qd, sync| classify(rw, bs, bs, qd, sync);
        let s = c("randread", 4096, 1, "").unwrap();
        assert_eq!(
            (s.size, s.depth, s.kind),
            (Size::Small, Depth::Qd1, Kind::Read)
        );
        let s = c("randwrite", 4096, 256, "fsync").unwrap();
        assert_eq!(
            (s.size, s.depth, s.kind),
            (Size::Small, Depth::Parallel, Kind::SyncedWrite)
        );
        let s = c("rw", 1 << 20, 64, "").unwrap();
        assert_eq!(
            (s.size, s.depth, s.kind),
            (Size::Large, Depth::Parallel, Kind::Mixed)
        );
        assert!(c("trim", 4096, 1, "").is_err());
        assert!(c("randread", 64 * 1024, 1, "").is_err());
    }

    #[test]
    fn not_fio_json_is_refused() {
        let e = format!("{:#}", FioFile::parse("{\"a\": 1}", "x.json").unwrap_err());
        assert!(e.contains("x.json") && e.contains("fio version"), "{e}");
        let e = format!("{:#}", FioFile::parse("nope", "y.json").unwrap_err());
        assert!(e.contains("y.json: not valid JSON"), "{e}");
        let e = format!(
            "{:#}",
            FioFile::parse(r#"{"fio version": "fio-3.33", "jobs": []}"#, "z.json").unwrap_err()
        );
        assert!(e.contains("z.json: jobs: empty"), "{e}");
    }

    #[test]
    fn more_than_a_fio_output_holds_is_refused_while_read() {
        // Three million empty jobs: 100 MB as values, past the budget.
        let text = format!(
            r#"{{"fio version": "fio-3.33", "jobs": [{}{{}}]}}"#,
            "{},".repeat(3 << 20)
        );
        let e = format!("{:#}", FioFile::parse(&text, "big.json").unwrap_err());
        assert!(
            e.starts_with("big.json: holds more than pgiosim keeps in memory"),
            "{e}"
        );
    }

    #[test]
    fn the_fields_not_read_are_skipped() {
        let v =
            read_kept(r#"{"jobs": [{"read": {"clat_ns": {"bins": {"1": 2}, "N": 1}}}]}"#).unwrap();
        assert_eq!(
            v,
            serde_json::json!({"jobs": [{"read": {"clat_ns": {"N": 1}}}]})
        );
    }

    fn job(slot: Slot, read_iops: f64, write_iops: f64) -> FioJob {
        let lat = LatencyNs {
            mean: 600e3,
            p50: Some(550e3),
            p99: Some(1800e3),
        };
        let dir = |iops: f64| DirFigures {
            ios: (iops * 30.0) as u64,
            iops,
            bw_bytes: iops * 4096.0,
            clat: Some(lat),
            lat_mean_ns: Some(lat.mean),
        };
        FioJob {
            origin: "gp3.json".into(),
            index: 0,
            name: slot.label(),
            rw: "randread".into(),
            bs_read: 4096,
            bs_write: 4096,
            iodepth: if slot.depth == Depth::Qd1 { 1 } else { 64 },
            numjobs: if slot.depth == Depth::Qd1 { 1 } else { 8 },
            sync: if slot.kind == Kind::SyncedWrite {
                "fsync".into()
            } else {
                String::new()
            },
            read: dir(read_iops),
            write: dir(write_iops),
            sync_lat: None,
            slot: Ok(slot),
        }
    }

    #[test]
    fn agreeing_parallel_iops_are_a_cap() {
        // A gp3-like battery: every parallel 4k test stops at ~3,000 IOPS.
        let s = |depth, kind| Slot {
            size: Size::Small,
            depth,
            kind,
        };
        let file = FioFile {
            origin: "gp3.json".into(),
            version: "fio-3.33".into(),
            time: String::new(),
            disks: vec![],
            jobs: vec![
                job(s(Depth::Qd1, Kind::Read), 1800.0, 0.0),
                job(s(Depth::Qd1, Kind::Write), 0.0, 1600.0),
                job(s(Depth::Parallel, Kind::Read), 3010.0, 0.0),
                job(s(Depth::Parallel, Kind::Write), 0.0, 2990.0),
                job(s(Depth::Parallel, Kind::Mixed), 1500.0, 1495.0),
            ],
        };
        let base = Profile::shipped("nvme").unwrap();
        let imp = build(&[file], "ebs", &base).unwrap();
        assert_eq!(imp.profile.caps.iops, Some(3000.0));
        assert_eq!(imp.profile.read.median_us, 550.0);
        // Channels are doubled, so the cap, not they, sets the rate.
        let iops = microbench::read_iops(&imp.profile, 512, 1);
        assert!((iops - 3000.0).abs() < 100.0, "{iops}");
        assert!(imp.warning().unwrap().contains("1M read QD1"));
    }

    #[test]
    fn sig3_rounds() {
        assert_eq!(sig3(36.096), 36.1);
        assert_eq!(sig3(92077.0), 92100.0);
        assert_eq!(sig3(0.0), 0.0);
        assert_eq!(sig3(64.60000001), 64.6);
        assert_eq!(sig3(3893.2), 3890.0);
    }
}
