//! What `pgiosim sweep` runs: one workload over a grid of client counts,
//! settings and devices, in `model` (default) or `run` mode underneath,
//! each point a RunPlan; the table's rows and the knee of each series.
//!
//! The knee answers the commit-concurrency question: up to how many clients
//! does adding clients buy throughput? It is the client count after which tps
//! grows less than 10% per doubling of clients while p99 latency keeps
//! rising; the table also gives the commits per WAL flush there, which says
//! how much group commit was doing at that point.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::{Context, Result};
use indicatif::ProgressBar;
use parking_lot::Mutex;

use crate::device::instance::Instance;
use crate::device::profile::Profile;
use crate::error::UsageError;
use crate::execute;
use crate::plan::{Disk, RunPlan, RunShape, Target};
use crate::report::RunResult;
use crate::report::sweep::{Grid, SweepRow};
use crate::settings::Settings;
use crate::stop::Stop;

pub mod jobs;
mod knee;
pub use knee::{KNEE_GROWTH, KneeInput, find_knee, growth_per_doubling, knee_rule, knees};

/// Client counts swept when neither --clients nor -c is given.
pub const DEFAULT_CLIENTS: &[u32] = &[1, 2, 4, 8, 16, 32, 64];

fn usage(msg: impl Into<String>) -> anyhow::Error {
    UsageError(msg.into()).into()
}

/// Most client counts one "..." may make: each is a run of the sweep, and
/// 1,2,...,4294967295 would otherwise fill memory before the first.
const MAX_CLIENT_COUNTS: usize = 1000;

/// Parse a client list ("1,2,4,...,64" split at the commas).
pub fn parse_clients(items: &[String]) -> Result<Vec<u32>> {
    let mut out: Vec<u32> = Vec::new();
    let mut iter = items.iter().map(|s| s.trim()).peekable();
    while let Some(item) = iter.next() {
        if item == "..." {
            // As in mathematics: 1,2,4,...,64 doubles (three terms with a
            // common ratio), 10,20,...,50 or 1,2,...,8 adds a common step.
            let (a, b) = match out.as_slice() {
                [.., a, b] if b > a => (*a, *b),
                [.., a, b] => {
                    return Err(usage(format!(
                        "--clients: \"...\" continues a rising progression, but {a},{b} does not rise"
                    )));
                }
                _ => {
                    return Err(usage(
                        "--clients: \"...\" needs two counts before it (10,20,...,100 or 1,2,4,...,64)",
                    ));
                }
            };
            // A whole ratio of at least 2, so every count is a whole number.
            let geometric = matches!(out.as_slice(), [.., x, y, z]
                if y % x == 0 && z % y == 0 && y / x == z / y && y / x >= 2);
            let end: u32 = match iter.next() {
                Some(e) => parse_count(e)?,
                None => return Err(usage("--clients: \"...\" needs a last count after it")),
            };
            let next = |x: u32| {
                if geometric {
                    x.checked_mul(b / a)
                } else {
                    x.checked_add(b - a)
                }
            };
            let mut x = b;
            while let Some(n) = next(x).filter(|n| *n < end) {
                if out.len() >= MAX_CLIENT_COUNTS {
                    return Err(too_many_counts());
                }
                out.push(n);
                x = n;
            }
            if end > x {
                out.push(end);
            }
            continue;
        }
        out.push(parse_count(item)?);
    }
    out.sort_unstable();
    out.dedup();
    if out.len() > MAX_CLIENT_COUNTS {
        return Err(too_many_counts());
    }
    if out.is_empty() {
        return Err(usage("--clients: give at least one client count"));
    }
    Ok(out)
}

fn too_many_counts() -> anyhow::Error {
    usage(format!(
        "--clients: more than {MAX_CLIENT_COUNTS} client counts, each a run of the sweep; take a larger step (10,20,...,1000) or double (1,2,4,...,1024)"
    ))
}

fn parse_count(s: &str) -> Result<u32> {
    match s.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(usage(format!(
            "--clients: {s:?} is not a client count (a whole number of at least 1)"
        ))),
    }
}

/// One `--set`: a name and one or more values.
#[derive(Debug, Clone, PartialEq)]
pub struct SetDim {
    pub name: String,
    pub values: Vec<String>,
}

/// Split each `--set NAME=V1,V2` into its values. A name set twice is
/// refused: the grid would run one of the two while the sweep's header
/// shows the other.
pub fn parse_sets(sets: &[String]) -> Result<Vec<SetDim>> {
    let dims: Vec<SetDim> = sets
        .iter()
        .map(|a| {
            let (name, value) = a.split_once('=').ok_or_else(|| {
                usage(format!(
                    "--set {a}: write NAME=VALUE, or NAME=V1,V2,... to sweep values"
                ))
            })?;
            let values: Vec<String> = value.split(',').map(|v| v.trim().to_string()).collect();
            if values.iter().any(String::is_empty) {
                return Err(usage(format!("--set {a}: an empty value in the list")));
            }
            Ok(SetDim {
                name: name.trim().to_string(),
                values,
            })
        })
        .collect::<Result<_>>()?;
    // Setting names are case-insensitive, as in PostgreSQL.
    let mut seen = std::collections::HashMap::new();
    for (d, a) in dims.iter().zip(sets) {
        if let Some(first) = seen.insert(d.name.to_ascii_lowercase(), a) {
            return Err(usage(format!(
                "--set {a}: {} is already set by --set {first}; give its values in one --set",
                d.name
            )));
        }
    }
    Ok(dims)
}

/// One point of the grid: device (model mode), swept settings' values, clients.
#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    device: Option<String>,
    /// Values of `Grid::settings`, in order.
    values: Vec<String>,
    clients: u32,
}

impl Grid {
    /// Every point: devices outermost, then settings, clients innermost.
    fn points(&self) -> Vec<Point> {
        let devices: Vec<Option<String>> = if self.devices.is_empty() {
            vec![None]
        } else {
            self.devices.iter().cloned().map(Some).collect()
        };
        let mut combos: Vec<Vec<String>> = vec![Vec::new()];
        for s in &self.settings {
            combos = combos
                .iter()
                .flat_map(|c| {
                    s.values.iter().map(move |v| {
                        let mut c = c.clone();
                        c.push(v.clone());
                        c
                    })
                })
                .collect();
        }
        let mut out = Vec::new();
        for d in &devices {
            for c in &combos {
                for &n in &self.clients {
                    out.push(Point {
                        device: d.clone(),
                        values: c.clone(),
                        clients: n,
                    });
                }
            }
        }
        out
    }

    /// The swept settings of a point as NAME → value.
    fn settings_of(&self, p: &Point) -> BTreeMap<String, String> {
        self.settings
            .iter()
            .zip(&p.values)
            .map(|(s, v)| (s.name.clone(), v.clone()))
            .collect()
    }
}

/// The name of a series: everything but the client count ("disk" stands
/// for the device of `--mode run`).
fn series_name(device: Option<&str>, settings: &BTreeMap<String, String>) -> String {
    let mut parts = vec![device.unwrap_or("disk").to_string()];
    parts.extend(settings.iter().map(|(k, v)| format!("{k}={v}")));
    parts.join(", ")
}

/// A table row from a point's result.
fn row(grid: &Grid, p: &Point, r: &RunResult, prev: Option<&SweepRow>) -> SweepRow {
    let settings = grid.settings_of(p);
    let series = series_name(p.device.as_deref(), &settings);
    let steady = r
        .steady_state
        .as_ref()
        .and_then(|s| s.tps)
        .map(|t| (t.mean, t.ci95));
    let growth = prev.filter(|q| q.series == series).map(|q| {
        // Like with like: both steady, or both whole-run.
        let (t0, t1) = match (q.steady_tps, steady) {
            (Some(a), Some((b, _))) => (a, b),
            _ => (q.tps, r.summary.tps),
        };
        growth_per_doubling(q.clients, t0, p.clients, t1)
    });
    let l = &r.summary.latency_ms;
    SweepRow {
        series,
        device: p.device.clone(),
        settings,
        clients: p.clients,
        tps: r.summary.tps,
        steady_tps: steady.map(|s| s.0),
        steady_tps_ci95: steady.map(|s| s.1),
        tps_growth_per_doubling: growth,
        latency_avg_ms: l.average,
        latency_p50_ms: l.p50,
        latency_p99_ms: l.p99,
        commits_per_flush: r.io.commits_per_flush,
        breakdown_ms: r
            .breakdown
            .iter()
            .map(|b| (b.bucket.clone(), b.mean_us / 1e3))
            .collect(),
        cpu_utilisation: r.io.cpu_utilisation,
        partial: r.partial,
    }
}

/// The --device list as clap split it at every comma, with the KEY=VALUE
/// items that follow a provisioned `TYPE:KEY=VALUE` joined back to it:
/// "gp3:iops=16000", "mibps=1000" is one device.
pub fn join_provisionings(items: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for item in items.iter().map(|d| d.trim()) {
        match out.last_mut() {
            Some(last) if last.contains(':') && item.contains('=') && !item.contains(':') => {
                last.push(',');
                last.push_str(item);
            }
            _ => out.push(item.to_string()),
        }
    }
    out
}

/// What every point of the sweep shares: the flags' shape (quiet, the
/// sweep's seed), the settings of --config and the one-valued --set, the
/// disk of --mode run and each device's profile of --mode model.
pub struct Common<'a> {
    pub shape: RunShape,
    pub settings: Settings,
    pub disk: Disk,
    /// The profile of each of the grid's devices, in its order.
    pub profiles: Vec<Profile>,
    pub instance: Option<&'static Instance>,
    pub grid: &'a Grid,
}

impl Common<'_> {
    /// One point's run: the common shape with its clients, the settings
    /// with its swept values, on its device.
    fn plan(&self, p: &Point) -> Result<RunPlan> {
        let mut shape = self.shape.clone();
        shape.clients = p.clients;
        let mut settings = self.settings.clone();
        for (s, v) in self.grid.settings.iter().zip(&p.values) {
            settings
                .set(&s.name, v)
                .map_err(|e| usage(format!("--set {}={v}: {e}", s.name)))?;
        }
        let target = match &p.device {
            Some(d) => {
                let i = self.grid.devices.iter().position(|x| x == d);
                let profile = &self.profiles[i.expect("a point's device is one of the grid's")];
                if let Some(inst) = self.instance {
                    shape.apply_instance(inst, &settings)?;
                }
                // A calibrated profile's host CPU, as `model` takes it.
                if let Some(host_us) = profile.cpu_probe_us {
                    shape.apply_cpu_probe(host_us)?;
                }
                Target::Model(Box::new(profile.clone()))
            }
            None => Target::Disk(self.disk.clone()),
        };
        RunPlan::new(shape, settings, target)
    }
}

/// Every point of the grid in order, devices outermost, each with its run
/// planned (and so checked) before any runs.
pub fn plan_points(common: &Common) -> Result<(Vec<Point>, Vec<RunPlan>)> {
    let grid = common.grid;
    let points = grid.points();
    let plans = points
        .iter()
        .map(|p| common.plan(p).with_context(|| point_label(p, grid)))
        .collect::<Result<Vec<_>>>()?;
    Ok((points, plans))
}

/// Point `i` of the grid and its run planned, alone: a job of a sweep run
/// by a scheduler (see [`jobs`]) plans only its own point.
pub fn plan_point(common: &Common, i: usize) -> Result<(Point, RunPlan)> {
    let grid = common.grid;
    let p = grid
        .points()
        .into_iter()
        .nth(i)
        .ok_or_else(|| usage(format!("point {i}: the grid has no such point")))?;
    let plan = common.plan(&p).with_context(|| point_label(&p, grid))?;
    Ok((p, plan))
}

/// What the points gave, in grid order.
pub struct Ran {
    /// Each point's full result.
    pub results: Vec<RunResult>,
    /// Each point's row of the sweep's table.
    pub table: Vec<SweepRow>,
    /// The sweep stopped before its last point: interrupted, or a point
    /// cut short.
    pub interrupted: bool,
}

/// Run the points, `jobs` at a time, with `bar` counting them; the rows
/// go up to the first point that failed (its error, naming the point),
/// was cut short or never ran.
pub fn run_grid(
    grid: &Grid,
    points: &[Point],
    plans: Vec<RunPlan>,
    jobs: usize,
    stop: &Stop,
    bar: &ProgressBar,
) -> Result<Ran> {
    let outcomes = run_points(grid, points, plans, jobs, stop, bar);
    // Rows in grid order, up to the first point that failed, was cut short
    // or never ran (an interrupt, or an earlier point's failure).
    let mut results: Vec<RunResult> = Vec::new();
    let mut table: Vec<SweepRow> = Vec::new();
    let mut interrupted = false;
    for (p, outcome) in points.iter().zip(outcomes) {
        let r = match outcome {
            Some(Ok(r)) => r,
            Some(Err(e)) => {
                bar.finish_and_clear();
                return Err(e.context(point_label(p, grid)));
            }
            None => {
                interrupted = true;
                break;
            }
        };
        table.push(row(grid, p, &r, table.last()));
        let partial = r.partial;
        results.push(r);
        if partial {
            interrupted = true;
            break;
        }
    }
    interrupted |= stop.is_set();
    bar.finish_and_clear();
    Ok(Ran {
        results,
        table,
        interrupted,
    })
}

/// Run every point, `jobs` at a time, each taking the next point not yet
/// started; the outcome of each point in grid order, None for those not
/// run (after an interrupt, a point cut short or a failure). Points are
/// independent simulations with the same seed, so their results do not
/// depend on how many run at once or in which order they finish.
fn run_points(
    grid: &Grid,
    points: &[Point],
    plans: Vec<RunPlan>,
    jobs: usize,
    stop: &Stop,
    bar: &ProgressBar,
) -> Vec<Option<Result<RunResult>>> {
    let next = AtomicUsize::new(0);
    let halt = AtomicBool::new(false);
    let outcomes: Vec<Mutex<Option<Result<RunResult>>>> =
        points.iter().map(|_| Mutex::new(None)).collect();
    let plans: Vec<Mutex<Option<RunPlan>>> =
        plans.into_iter().map(|p| Mutex::new(Some(p))).collect();
    let worker = || {
        loop {
            if halt.load(Ordering::Relaxed) || stop.is_set() {
                return;
            }
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(p) = points.get(i) else { return };
            bar.set_message(point_label(p, grid));
            let plan = plans[i].lock().take().expect("each point runs once");
            let r = execute::execute(plan, stop).map(|(r, _)| r);
            if r.as_ref().map_or(true, |r| r.partial) {
                halt.store(true, Ordering::Relaxed);
            }
            *outcomes[i].lock() = Some(r);
            bar.inc(1);
        }
    };
    let jobs = jobs.clamp(1, points.len().max(1));
    if jobs == 1 {
        worker();
    } else {
        std::thread::scope(|s| {
            for _ in 0..jobs {
                s.spawn(worker);
            }
        });
    }
    outcomes.into_iter().map(Mutex::into_inner).collect()
}

/// "clients 16, nvme, commit_delay=10": one point, for messages.
fn point_label(p: &Point, grid: &Grid) -> String {
    let s = series_name(p.device.as_deref(), &grid.settings_of(p));
    format!("{s}, {} clients", p.clients)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::sweep::GridSetting;

    fn pt(clients: u32, tps: f64, p99_ms: f64) -> KneeInput {
        KneeInput {
            clients,
            tps,
            p99_ms,
        }
    }

    #[test]
    fn provisionings_split_at_commas_are_joined_back() {
        let items: Vec<String> = ["nvme", "gp3:iops=16000", "mibps=1000", "gp2", "mine.json"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        assert_eq!(
            join_provisionings(&items),
            ["nvme", "gp3:iops=16000,mibps=1000", "gp2", "mine.json"]
        );
    }

    #[test]
    fn knee_is_the_last_point_that_still_paid() {
        // tps: +90%, +80%, +50%, +20%, then +5%, +2%, -3% per doubling, p99
        // rising all along: the knee is 16 clients.
        let table = [
            pt(1, 1000.0, 1.0),
            pt(2, 1900.0, 1.1),
            pt(4, 3420.0, 1.3),
            pt(8, 5130.0, 1.8),
            pt(16, 6156.0, 2.9),
            pt(32, 6464.0, 5.5),
            pt(64, 6593.0, 11.0),
            pt(128, 6395.0, 23.0),
        ];
        assert_eq!(find_knee(&table), Some(4));
    }

    #[test]
    fn a_late_jump_moves_the_knee_past_it() {
        // Flat at 4→8, but 8→16 still gains 15%: the knee is after that.
        let table = [
            pt(1, 1000.0, 1.0),
            pt(2, 1800.0, 1.1),
            pt(4, 3000.0, 1.3),
            pt(8, 3100.0, 2.5),
            pt(16, 3565.0, 4.4),
            pt(32, 3600.0, 8.8),
        ];
        assert_eq!(find_knee(&table), Some(4));
    }

    #[test]
    fn no_knee_while_tps_grows_or_p99_does_not_rise() {
        let growing = [pt(1, 100.0, 1.0), pt(2, 190.0, 1.0), pt(4, 360.0, 1.1)];
        assert_eq!(find_knee(&growing), None);
        // Flat tps with flat p99 (an open-loop-like plateau) is no knee.
        let flat_p99 = [pt(1, 100.0, 1.0), pt(2, 101.0, 1.0), pt(4, 102.0, 1.0)];
        assert_eq!(find_knee(&flat_p99), None);
        assert_eq!(find_knee(&[pt(8, 100.0, 1.0)]), None);
        assert_eq!(find_knee(&[]), None);
    }

    #[test]
    fn growth_is_per_doubling_across_uneven_steps() {
        // 4× the clients for 21% more tps is 10% per doubling.
        let g = growth_per_doubling(4, 1000.0, 16, 1210.0);
        assert!((g - 0.10).abs() < 1e-9, "{g}");
        // Just under 10% per doubling over a tripling of clients.
        let g = growth_per_doubling(10, 1000.0, 30, 1160.0);
        assert!(g < KNEE_GROWTH && g > 0.09, "{g}");
    }

    #[test]
    fn knees_of_a_table_name_the_point_and_its_commits_per_flush() {
        let mk =
            |series: &str, clients: u32, tps: f64, p99: f64, cpf: f64, prev: Option<(u32, f64)>| {
                SweepRow {
                    series: series.into(),
                    device: Some(series.into()),
                    settings: BTreeMap::new(),
                    clients,
                    tps,
                    steady_tps: None,
                    steady_tps_ci95: None,
                    tps_growth_per_doubling: prev
                        .map(|(c, t)| growth_per_doubling(c, t, clients, tps)),
                    latency_avg_ms: 0.0,
                    latency_p50_ms: 0.0,
                    latency_p99_ms: p99,
                    commits_per_flush: cpf,
                    breakdown_ms: BTreeMap::new(),
                    cpu_utilisation: 0.0,
                    partial: false,
                }
            };
        let table = vec![
            mk("gp3", 1, 400.0, 4.0, 1.0, None),
            mk("gp3", 2, 780.0, 4.2, 1.6, Some((1, 400.0))),
            mk("gp3", 4, 800.0, 8.0, 3.1, Some((2, 780.0))),
            mk("gp3", 8, 810.0, 16.0, 6.0, Some((4, 800.0))),
            mk("nvme", 1, 1000.0, 1.0, 1.0, None),
            mk("nvme", 2, 1950.0, 1.0, 1.2, Some((1, 1000.0))),
        ];
        let k = knees(&table);
        assert_eq!(k.len(), 2);
        let gp3 = k[0].knee.as_ref().expect("gp3 has a knee");
        assert_eq!(gp3.clients, 2);
        assert_eq!(gp3.commits_per_flush, 1.6);
        assert!(k[0].note.starts_with("2 clients"), "{}", k[0].note);
        assert!(k[1].knee.is_none());
        assert!(k[1].note.contains("still grows"), "{}", k[1].note);
        // An interrupted last point (low tps) does not make a knee.
        let mut cut = table[4..].to_vec();
        cut.push(mk("nvme", 4, 2000.0, 1.5, 1.3, Some((2, 1950.0))));
        cut[2].partial = true;
        assert!(knees(&cut)[0].knee.is_none());
        cut[2].partial = false;
        assert_eq!(knees(&cut)[0].knee.as_ref().map(|k| k.clients), Some(2));
    }

    #[test]
    fn client_lists_continue_progressions() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(
            parse_clients(&s(&["1", "2", "4", "...", "64"])).unwrap(),
            vec![1, 2, 4, 8, 16, 32, 64]
        );
        assert_eq!(
            parse_clients(&s(&["10", "20", "...", "50"])).unwrap(),
            vec![10, 20, 30, 40, 50]
        );
        assert_eq!(
            parse_clients(&s(&["1", "2", "...", "5"])).unwrap(),
            vec![1, 2, 3, 4, 5]
        );
        assert_eq!(
            parse_clients(&s(&["1", "2", "4", "...", "100"])).unwrap(),
            vec![1, 2, 4, 8, 16, 32, 64, 100]
        );
        assert_eq!(
            parse_clients(&s(&["1", "3", "9", "...", "81"])).unwrap(),
            vec![1, 3, 9, 27, 81]
        );
        assert_eq!(parse_clients(&s(&["8", "1", "8"])).unwrap(), vec![1, 8]);
        // 4,6,9 has ratio 1.5: no whole geometric progression, so arithmetic (+3).
        assert_eq!(
            parse_clients(&s(&["4", "6", "9", "...", "15"])).unwrap(),
            vec![4, 6, 9, 12, 15]
        );
        assert!(parse_clients(&s(&["0"])).is_err());
        assert!(parse_clients(&s(&["4", "..."])).is_err());
        assert!(parse_clients(&s(&["4", "2", "...", "8"])).is_err());
    }

    /// Found by fuzzing (fuzz/ sweep_grid): the progression was expanded
    /// before anything bounded it, 16 GB for 1,2,...,4294967295.
    #[test]
    fn a_progression_of_too_many_counts_is_refused() {
        let s = |v: &[&str]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let e = parse_clients(&s(&["1", "2", "...", "4294967295"])).unwrap_err();
        assert!(
            e.to_string().contains("more than 1000 client counts"),
            "{e}"
        );
        assert_eq!(
            parse_clients(&s(&["1", "2", "...", "1000"])).unwrap().len(),
            1000
        );
        assert!(parse_clients(&s(&["1", "2", "...", "1001"])).is_err());
    }

    #[test]
    fn sets_with_lists_multiply_the_grid() {
        let sets = parse_sets(&[
            "commit_delay=0,10,100".to_string(),
            "shared_buffers=1GB".to_string(),
            "synchronous_commit=on,off".to_string(),
        ])
        .unwrap();
        assert_eq!(sets[0].values, vec!["0", "10", "100"]);
        let grid = Grid {
            clients: vec![1, 2],
            devices: vec!["nvme".into(), "gp3".into()],
            settings: sets
                .iter()
                .filter(|d| d.values.len() > 1)
                .map(|d| GridSetting {
                    name: d.name.clone(),
                    values: d.values.clone(),
                })
                .collect(),
            fixed_settings: vec!["shared_buffers=1GB".into()],
        };
        let points = grid.points();
        assert_eq!(points.len(), 2 * 3 * 2 * 2);
        assert_eq!(
            grid.settings_of(&points[1]),
            BTreeMap::from([
                ("commit_delay".to_string(), "0".to_string()),
                ("synchronous_commit".to_string(), "on".to_string())
            ])
        );
        assert!(parse_sets(&["commit_delay".to_string()]).is_err());
        assert!(parse_sets(&["commit_delay=0,,10".to_string()]).is_err());
        let e = parse_sets(&[
            "commit_delay=0".to_string(),
            "Commit_Delay=5,10".to_string(),
        ])
        .unwrap_err()
        .to_string();
        assert!(e.contains("already set by --set commit_delay=0"), "{e}");
    }
}
