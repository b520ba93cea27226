//! A sweep's points as independent jobs for a scheduler that already
//! exists (GNU parallel, a Kubernetes Indexed Job, a Slurm job array):
//! `sweep --jobs-dir DIR` writes DIR/manifest.json and DIR/jobs.txt, each job
//! runs one point into DIR/points/, and `sweep --merge DIR` assembles the
//! points into the sweep's document.
//!
//! A job plans its point from the sweep's own flags, kept in the manifest,
//! with the code the in-process sweep uses, and checks the plan against a
//! digest the manifest holds; so a merged sweep is the in-process sweep,
//! byte for byte, or a job refuses to run.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use serde::{Deserialize, Serialize};

use super::{Point, Ran, point_label, row};
use crate::error::UsageError;
use crate::input::{LARGE_FILE_MAX_BYTES, read_text};
use crate::json_memory::{INPUT_BUDGET_BYTES, within};
use crate::plan::RunPlan;
use crate::report::RunResult;
use crate::report::sweep::{Grid, SWEEP_LIST_MAX, SweepMode, SweepRow};

/// Schema name of DIR/manifest.json.
pub const MANIFEST_SCHEMA: &str = "pgiosim.sweep-jobs";
/// Schema name of a point's file, DIR/points/NNNN.json.
pub const POINT_SCHEMA: &str = "pgiosim.sweep-point";
const SCHEMA_VERSION: u64 = 1;
const MANIFEST: &str = "manifest.json";
const JOBS: &str = "jobs.txt";
const POINTS: &str = "points";

fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// DIR/manifest.json: what the jobs of one sweep share and what the merge
/// needs to rebuild the sweep's document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    pub schema: String,
    pub schema_version: u64,
    /// The pgiosim that wrote the jobs; a job run by another refuses, as
    /// its results could differ.
    pub pgiosim_version: String,
    /// Names this sweep: a digest of everything else here. Every point's
    /// file carries it, so the merge can tell another sweep's points.
    pub sweep: String,
    /// The sweep's flags as typed, without --jobs-dir: each job plans its
    /// point from them, as the in-process sweep would.
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub args: Vec<String>,
    pub mode: SweepMode,
    pub seed: u64,
    pub grid: Grid,
    /// The points in grid order; a job's index is its place here.
    #[serde(deserialize_with = "crate::json_memory::vec::<_, _, SWEEP_LIST_MAX>")]
    pub points: Vec<JobPoint>,
}

/// One job of the sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JobPoint {
    /// "gp3, commit_delay=10, 8 clients".
    pub label: String,
    /// Its result's file, relative to DIR.
    pub file: String,
    /// A digest of the point's whole plan (settings, workload, device,
    /// seed): a job whose plan differs (a file its flags name changed, or
    /// reads differently on that host) refuses to run.
    pub plan: String,
}

/// DIR/points/NNNN.json: one point's result and the sweep it belongs to.
#[derive(Debug, Serialize, Deserialize)]
struct PointFile {
    schema: String,
    schema_version: u64,
    sweep: String,
    index: usize,
    label: String,
    /// The point's `pgiosim.result`, as the in-process sweep holds it.
    result: RunResult,
}

/// FNV-1a, 64 bits: a digest to tell plans and sweeps apart, not a
/// defence against anyone forging one.
struct Fnv(u64);

impl Fnv {
    fn new() -> Fnv {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
    fn hex(&self) -> String {
        format!("{:016x}", self.0)
    }
}

impl std::fmt::Write for Fnv {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        for b in s.bytes() {
            self.0 = (self.0 ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        Ok(())
    }
}

/// The digest of a point's plan: of everything the run is made of, as its
/// `Debug` form spells it (streamed, never held as one string). A plan
/// holds no std `HashMap`, whose order would differ from one process to
/// the next; the jobs of tests/sweep.rs would then refuse to run.
fn plan_digest(plan: &RunPlan) -> String {
    let mut h = Fnv::new();
    write!(h, "{plan:?}").expect("hashing cannot fail");
    h.hex()
}

impl Manifest {
    /// The manifest of a planned sweep.
    pub fn new(
        args: Vec<String>,
        mode: SweepMode,
        seed: u64,
        grid: &Grid,
        points: &[Point],
        plans: &[RunPlan],
    ) -> Manifest {
        let width = index_width(points.len());
        let points = points
            .iter()
            .zip(plans)
            .enumerate()
            .map(|(i, (p, plan))| JobPoint {
                label: point_label(p, grid),
                file: format!("{POINTS}/{i:0width$}.json"),
                plan: plan_digest(plan),
            })
            .collect();
        let mut m = Manifest {
            schema: MANIFEST_SCHEMA.to_string(),
            schema_version: SCHEMA_VERSION,
            pgiosim_version: env!("CARGO_PKG_VERSION").to_string(),
            sweep: String::new(),
            args,
            mode,
            seed,
            grid: grid.clone(),
            points,
        };
        let mut h = Fnv::new();
        let text = serde_json::to_string(&m).expect("a manifest serializes");
        h.write_str(&text).expect("hashing cannot fail");
        m.sweep = h.hex();
        m
    }

    /// Checks that a job or merge run by this pgiosim may use the manifest.
    fn check_version(&self, dir: &Path) -> Result<()> {
        let ours = env!("CARGO_PKG_VERSION");
        if self.pgiosim_version != ours {
            return Err(usage(format!(
                "{}: written by pgiosim {}, and this is pgiosim {ours}, whose points could differ; write the jobs again with this one",
                dir.join(MANIFEST).display(),
                self.pgiosim_version
            )));
        }
        Ok(())
    }
}

/// Digits of a point's number in its file's name: at least 4, so that the
/// files list in order.
fn index_width(n: usize) -> usize {
    n.saturating_sub(1).to_string().len().max(4)
}

/// `s` quoted for a POSIX shell, unless it needs no quoting.
fn sh_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// What [`write_jobs`] found and wrote.
pub struct Written {
    /// DIR/jobs.txt.
    pub jobs: PathBuf,
    /// Points whose result DIR already held (the same sweep written again).
    pub done: usize,
}

/// Writes the manifest, DIR/jobs.txt (one `pgiosim sweep --jobs-dir DIR
/// --run-index N` line a point, DIR as given) and DIR/points/. DIR must be
/// new, empty, or hold this very sweep's jobs: pgiosim writes into no
/// directory it did not make, and never over another sweep's points.
pub fn write_jobs(dir: &Path, m: &Manifest) -> Result<Written> {
    let shown = dir.display();
    let dir_arg = dir.to_str().ok_or_else(|| {
        usage(format!(
            "--jobs-dir {shown}: give a directory name in UTF-8"
        ))
    })?;
    let done = match std::fs::read_dir(dir).map(|mut e| e.next().is_none()) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => 0,
        Err(e) => return Err(usage(format!("--jobs-dir {shown}: cannot read: {e}"))),
        Ok(true) => 0,
        Ok(false) => same_sweep_again(dir, m)?,
    };
    let points = dir.join(POINTS);
    std::fs::create_dir_all(&points)
        .with_context(|| format!("--jobs-dir {}: cannot create", points.display()))?;
    let text = serde_json::to_string_pretty(m)? + "\n";
    write_atomically(&dir.join(MANIFEST), &text)?;
    let q = sh_quote(dir_arg);
    let lines: String = (0..m.points.len())
        .map(|i| format!("pgiosim sweep --jobs-dir {q} --run-index {i}\n"))
        .collect();
    let jobs = dir.join(JOBS);
    write_atomically(&jobs, &lines)?;
    Ok(Written { jobs, done })
}

/// A non-empty DIR given to --jobs-dir: allowed only if it holds this sweep's
/// manifest; how many of its points have a result already.
fn same_sweep_again(dir: &Path, m: &Manifest) -> Result<usize> {
    let shown = dir.display();
    if !dir.join(MANIFEST).is_file() {
        return Err(usage(format!(
            "--jobs-dir {shown}: not empty and holds no sweep's jobs; give a new or empty directory"
        )));
    }
    let old = read_manifest(dir)?;
    if old.sweep != m.sweep {
        return Err(usage(format!(
            "--jobs-dir {shown}: holds the jobs of another sweep ({}); give a new or empty directory",
            old.sweep
        )));
    }
    Ok((0..m.points.len())
        .filter(|&i| dir.join(&m.points[i].file).is_file())
        .count())
}

/// Writes `text` to `path` through a temporary file beside it, so that a
/// reader (the merge, another job) never sees half a file.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let name = path
        .file_name()
        .map_or_else(|| "out".into(), |n| n.to_string_lossy().into_owned());
    // Two tries of one job may run at once, on two hosts of a shared file
    // system: the process id alone could be the same on both.
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let tmp = path.with_file_name(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    std::fs::write(&tmp, text)
        .and_then(|()| std::fs::rename(&tmp, path))
        .with_context(|| format!("{}: cannot write", path.display()))
}

/// DIR/manifest.json, read and checked.
pub fn read_manifest(dir: &Path) -> Result<Manifest> {
    let path = dir.join(MANIFEST);
    if !path.is_file() {
        return Err(usage(format!(
            "{}: no such sweep manifest; write the jobs first (sweep ... --jobs-dir {})",
            path.display(),
            dir.display()
        )));
    }
    let text = read_text(&path, "sweep manifest", LARGE_FILE_MAX_BYTES)?;
    let m: Manifest = within(INPUT_BUDGET_BYTES, || serde_json::from_str(&text)).map_err(|e| {
        usage(format!(
            "{}: malformed {MANIFEST_SCHEMA}: {e}",
            path.display()
        ))
    })?;
    if m.schema != MANIFEST_SCHEMA || m.schema_version != SCHEMA_VERSION {
        return Err(usage(format!(
            "{}: schema {} version {} is not {MANIFEST_SCHEMA} version {SCHEMA_VERSION}",
            path.display(),
            m.schema,
            m.schema_version
        )));
    }
    m.check_version(dir)?;
    Ok(m)
}

/// The index a job runs: `--run-index N`, or the environment variable
/// `--run-index-env VAR` names (JOB_COMPLETION_INDEX, SLURM_ARRAY_TASK_ID),
/// checked against the sweep's points.
pub fn job_index(given: Option<usize>, env: Option<&str>, m: &Manifest) -> Result<usize> {
    let i = match (given, env) {
        (Some(i), _) => i,
        (None, Some(var)) => {
            let v = std::env::var(var).map_err(|_| {
                usage(format!(
                    "--run-index-env {var}: the variable is not set (or not UTF-8)"
                ))
            })?;
            v.trim().parse().map_err(|_| {
                usage(format!(
                    "--run-index-env {var}: {v:?} is not a point's index"
                ))
            })?
        }
        (None, None) => {
            return Err(usage(
                "--jobs-dir: a job needs --run-index N or --run-index-env VAR",
            ));
        }
    };
    if i >= m.points.len() {
        return Err(usage(format!(
            "--run-index {i}: the sweep has {} points, 0 to {}",
            m.points.len(),
            m.points.len().saturating_sub(1)
        )));
    }
    Ok(i)
}

/// Checks that the job's plan of point `i` is the one the jobs were
/// written with.
pub fn check_plan(m: &Manifest, i: usize, plan: &RunPlan) -> Result<()> {
    let digest = plan_digest(plan);
    if digest != m.points[i].plan {
        return Err(usage(format!(
            "--run-index {i} ({}): the point plans differently here than when its jobs were written: a file its flags name changed or differs on this host, or the host's cores differ (give --cpus); write the jobs again",
            m.points[i].label
        )));
    }
    Ok(())
}

/// Writes point `i`'s result to its file in DIR.
pub fn write_point(dir: &Path, m: &Manifest, i: usize, result: RunResult) -> Result<PathBuf> {
    let file = PointFile {
        schema: POINT_SCHEMA.to_string(),
        schema_version: SCHEMA_VERSION,
        sweep: m.sweep.clone(),
        index: i,
        label: m.points[i].label.clone(),
        result,
    };
    let path = dir.join(&m.points[i].file);
    write_atomically(&path, &(serde_json::to_string_pretty(&file)? + "\n"))?;
    Ok(path)
}

/// "3,7-9,12": indices as a Slurm `--array` takes them.
fn ranges(indices: &[usize]) -> String {
    let mut out = String::new();
    let mut i = 0;
    while i < indices.len() {
        let mut j = i;
        while j + 1 < indices.len() && indices[j + 1] == indices[j] + 1 {
            j += 1;
        }
        if !out.is_empty() {
            out.push(',');
        }
        let _ = match j - i {
            0 => write!(out, "{}", indices[i]),
            1 => write!(out, "{},{}", indices[i], indices[j]),
            _ => write!(out, "{}-{}", indices[i], indices[j]),
        };
        i = j + 1;
    }
    out
}

/// Reads every point's result from DIR, in grid order, and builds the
/// sweep's table from them as the in-process sweep does. Refuses a sweep
/// with points missing, naming them, and a point of another sweep.
pub fn merge(dir: &Path, m: &Manifest) -> Result<Ran> {
    let mut results = Vec::with_capacity(m.points.len());
    let mut missing = Vec::new();
    for (i, jp) in m.points.iter().enumerate() {
        let path = dir.join(&jp.file);
        if !path.is_file() {
            missing.push(i);
            continue;
        }
        results.push(read_point(dir, &path, m, i)?);
    }
    if !missing.is_empty() {
        return Err(usage(format!(
            "--merge {}: {} of {} points have no result yet ({} {}); run their jobs (--run-index N) and merge again",
            dir.display(),
            missing.len(),
            m.points.len(),
            if missing.len() == 1 {
                "index"
            } else {
                "indices"
            },
            ranges(&missing)
        )));
    }
    let points = m.grid.points();
    if points.len() != results.len() {
        return Err(usage(format!(
            "{}: its grid has {} points and its list {}",
            dir.join(MANIFEST).display(),
            points.len(),
            results.len()
        )));
    }
    let mut table: Vec<SweepRow> = Vec::with_capacity(points.len());
    for (p, r) in points.iter().zip(&results) {
        table.push(row(&m.grid, p, r, table.last()));
    }
    Ok(Ran {
        results,
        table,
        interrupted: false,
    })
}

/// One point's result, checked to be point `i` of this sweep.
fn read_point(dir: &Path, path: &Path, m: &Manifest, i: usize) -> Result<RunResult> {
    let shown = path.display();
    let text = read_text(path, "sweep point", LARGE_FILE_MAX_BYTES)?;
    let f: PointFile = within(INPUT_BUDGET_BYTES, || serde_json::from_str(&text))
        .map_err(|e| usage(format!("{shown}: malformed {POINT_SCHEMA}: {e}")))?;
    if f.schema != POINT_SCHEMA || f.sweep != m.sweep {
        return Err(usage(format!(
            "{shown}: a point of another sweep ({}), not of {} ({}); write the jobs into a new directory or run the point again",
            f.sweep,
            dir.display(),
            m.sweep
        )));
    }
    if f.index != i || f.result.partial {
        return Err(usage(format!(
            "{shown}: holds {} point {} of the sweep, not point {i}; run the point again",
            if f.result.partial {
                "an interrupted"
            } else {
                "the"
            },
            f.index
        )));
    }
    Ok(f.result)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_indices_read_as_slurm_ranges() {
        assert_eq!(ranges(&[3]), "3");
        assert_eq!(ranges(&[0, 1]), "0,1");
        assert_eq!(ranges(&[3, 7, 8, 9, 12]), "3,7-9,12");
        assert_eq!(ranges(&[]), "");
    }

    #[test]
    fn a_directory_is_quoted_only_when_the_shell_needs_it() {
        assert_eq!(sh_quote("sweep-jobs/a_1"), "sweep-jobs/a_1");
        assert_eq!(sh_quote("my jobs"), "'my jobs'");
        assert_eq!(sh_quote("it's"), r"'it'\''s'");
        assert_eq!(sh_quote(""), "''");
    }

    #[test]
    fn point_files_list_in_order() {
        assert_eq!(index_width(40), 4);
        assert_eq!(index_width(10_000), 4);
        assert_eq!(index_width(10_001), 5);
    }
}
