//! `pgiosim sweep`: the flags checked into a grid, its points run (the grid
//! runner and the knees: `crate::sweep`) with a progress bar, the table
//! and the knees printed, the JSON, CSV and Markdown written.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::{Args, Parser};
use indicatif::{ProgressBar, ProgressStyle};

use crate::args::{DirArgs, WorkloadArgs};
use crate::core::workload::Workload;
use crate::device::name::{instance_preset, model_device};
use crate::error::{Interrupted, usage};
use crate::execute;
use crate::footprint::{Footprint, about};
use crate::output::{self, progress_bar_wanted, write_json};
use crate::plan::{Disk, EngineChoice, RunPlan, resolve_settings};
use crate::report::SCHEMA_VERSION;
use crate::report::sweep::{
    Grid, GridSetting, SWEEP_SCHEMA, SweepDoc, SweepMode, render, table_of,
};
use crate::stop::Stop;
use crate::sweep::jobs::{self, Manifest};
use crate::sweep::{
    Common, DEFAULT_CLIENTS, Point, Ran, join_provisionings, knee_rule, knees, parse_clients,
    parse_sets, plan_point, plan_points, run_grid,
};

/// Flags of `sweep`.
#[derive(Debug, Clone, Args)]
// -c N is the one count N; "0", never a valid count, means it was not given.
#[command(mut_arg("clients", |a| a.hide(true).default_value("0")))]
#[command(mut_arg("progress", |a| a.hide(true)))]
#[command(mut_arg("set", |a| a.help(
    "Set a PostgreSQL setting, with postgresql.conf units; NAME=V1,V2,... sweeps its \
     values, and several such lists multiply the grid (e.g. --set commit_delay=0,10,100 \
     --set shared_buffers=1GB). Repeatable."
)))]
#[command(mut_arg("json", |a| a.help(
    "Write the sweep as JSON to FILE (\"-\" for standard output): the grid, the table, \
     the knees and every point's full result"
)))]
pub struct SweepArgs {
    /// Client counts, comma-separated: 1,2,4,8. "..." continues the
    /// progression before it up to the count after it, as in mathematics:
    /// 1,2,4,...,256 doubles, 10,20,...,100 adds 10
    /// [default: 1,2,4,8,16,32,64; -c N sweeps the one count N].
    #[arg(
        long = "clients",
        value_name = "LIST",
        value_delimiter = ',',
        conflicts_with = "clients"
    )]
    pub client_list: Vec<String>,
    #[command(flatten)]
    pub w: WorkloadArgs,
    /// `model`: the device model, in virtual time; `run`: real files on
    /// this disk, each run lasting -T.
    #[arg(long, value_enum, default_value_t = SweepMode::Model)]
    pub mode: SweepMode,
    /// Device profiles for --mode model, comma-separated: shipped names,
    /// provisioned volumes or profile JSON paths (e.g.
    /// nvme,gp3,gp3:iops=16000,mibps=1000,mydisk.json: a KEY=VALUE after a
    /// TYPE:... belongs to it) [default: nvme].
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub device: Vec<String>,
    /// For --mode model: the cloud server size every point models, as
    /// `model --instance` (vCPUs, page cache, volume limits, instance
    /// store).
    #[arg(long, value_name = "SIZE")]
    pub instance: Option<String>,
    /// For --mode model: the server's limits on its network volumes, as
    /// `model --volume-limits` (a preset's size or iops=N,mbps=N,...).
    #[arg(long, value_name = "SIZE|iops=N,mbps=N,...")]
    pub volume_limits: Option<String>,
    #[command(flatten)]
    pub dirs: DirArgs,
    /// I/O engine for --mode run.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub io_engine: EngineChoice,
    /// For --mode run: use the kernel page cache for data files.
    #[arg(long)]
    pub buffered: bool,
    /// For --mode model: points simulated at once, each on its own core
    /// (every point holds its own buffer pool and page cache in memory)
    /// [default: the cores available]. --mode run runs one point at a
    /// time: they share the disk under test.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub parallel: Option<u32>,
    /// Write the table as CSV to FILE ("-" for standard output), one row
    /// a point, for a spreadsheet.
    #[arg(long, value_name = "FILE")]
    pub csv: Option<PathBuf>,
    /// Write the table as a Markdown table to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Write the points as jobs into DIR instead of running them: DIR/jobs.txt
    /// holds one `pgiosim sweep --jobs-dir DIR --run-index N` line a point, for
    /// GNU parallel, a Kubernetes Indexed Job or a Slurm job array; merge
    /// their results with --merge DIR. With --run-index: run one of DIR's jobs.
    #[arg(long, value_name = "DIR", conflicts_with = "merge")]
    pub jobs_dir: Option<PathBuf>,
    /// With --jobs-dir DIR: run point N of its sweep (0-based, line N+1 of
    /// jobs.txt) and write its result into DIR/points/.
    #[arg(
        long,
        value_name = "N",
        requires = "jobs_dir",
        conflicts_with = "run_index_env"
    )]
    pub run_index: Option<usize>,
    /// With --jobs-dir DIR: run the point whose index the environment variable
    /// VAR holds (JOB_COMPLETION_INDEX in a Kubernetes Indexed Job,
    /// SLURM_ARRAY_TASK_ID in a Slurm job array).
    #[arg(long, value_name = "VAR", requires = "jobs_dir")]
    pub run_index_env: Option<String>,
    /// Assemble the results of DIR's jobs into the sweep's table, knees and
    /// JSON (--json), as the sweep run in one process prints and writes them.
    #[arg(long, value_name = "DIR")]
    pub merge: Option<PathBuf>,
}

/// Check the flags and build the grid.
fn grid_of(args: &SweepArgs) -> Result<Grid> {
    let w = &args.w;
    if w.progress.is_some() {
        return Err(usage(
            "-P/--progress: sweep shows a progress bar on a terminal instead",
        ));
    }
    let clients = if !args.client_list.is_empty() {
        parse_clients(&args.client_list)?
    } else if w.clients > 0 {
        vec![w.clients]
    } else {
        DEFAULT_CLIENTS.to_vec()
    };
    if args.volume_limits.is_some() && args.mode == SweepMode::Run {
        return Err(usage(
            "--volume-limits: applies to --mode model; --mode run measures this machine",
        ));
    }
    if args.instance.is_some() && args.mode == SweepMode::Run {
        return Err(usage(
            "--instance: applies to --mode model; --mode run measures this machine",
        ));
    }
    let devices = match args.mode {
        SweepMode::Model if args.device.is_empty() => {
            vec![
                if args.instance.is_some() {
                    "instance-store"
                } else {
                    "nvme"
                }
                .to_string(),
            ]
        }
        SweepMode::Model => join_provisionings(&args.device),
        SweepMode::Run if args.device.is_empty() => Vec::new(),
        SweepMode::Run => {
            return Err(usage(
                "--device: applies to --mode model; --mode run measures the disk under --dir",
            ));
        }
    };
    let mut settings = Vec::new();
    let mut fixed_settings = Vec::new();
    for d in parse_sets(&w.set)? {
        if d.values.len() == 1 {
            fixed_settings.push(format!("{}={}", d.name, d.values[0]));
        } else {
            if settings.iter().any(|s: &GridSetting| s.name == d.name) {
                return Err(usage(format!(
                    "--set {}: swept twice; give all its values in one list",
                    d.name
                )));
            }
            settings.push(GridSetting {
                name: d.name,
                values: d.values,
            });
        }
    }
    check_grid_size(clients.len(), &devices, &settings)?;
    Ok(Grid {
        clients,
        devices,
        settings,
        fixed_settings,
    })
}

/// Most devices one sweep compares: more than every shipped and
/// provisioned type, and each is a profile read and held.
const SWEEP_DEVICES_MAX: usize = 100;

/// Most points one sweep runs: each is a run, and every point is planned
/// (about a second for 10,000) and its result kept before the table is
/// printed; a 100×100×100 grid took 5.8 GB before the first ran.
const SWEEP_POINTS_MAX: u64 = 10_000;

/// The grid's size within its bounds, counted before a point is planned.
fn check_grid_size(clients: usize, devices: &[String], settings: &[GridSetting]) -> Result<()> {
    if devices.len() > SWEEP_DEVICES_MAX {
        return Err(usage(format!(
            "--device: {} devices, at most {SWEEP_DEVICES_MAX} in one sweep",
            devices.len()
        )));
    }
    let points = settings
        .iter()
        .map(|s| s.values.len() as u64)
        .chain([clients as u64, devices.len().max(1) as u64])
        .fold(1u64, u64::saturating_mul);
    if points > SWEEP_POINTS_MAX {
        let dims: Vec<String> = settings
            .iter()
            .map(|s| format!("{} {}", s.values.len(), s.name))
            .chain([format!("{clients} client counts")])
            .chain((devices.len() > 1).then(|| format!("{} devices", devices.len())))
            .collect();
        return Err(usage(format!(
            "the grid has {points} points ({}), at most {SWEEP_POINTS_MAX}; sweep fewer values",
            dims.join(" × ")
        )));
    }
    Ok(())
}

/// Points a model sweep runs at once: `--parallel`, or as many as the
/// cores; either way the whole sweep within --max-memory. Every point's
/// result (its per-second series) is kept for the table and --json, and
/// each point running holds its whole model: at worst the largest ones at
/// once. Without --parallel, fewer run at once where the cores' worth
/// would not fit.
fn model_jobs(parallel: Option<u32>, plans: &[RunPlan], limit: u64) -> Result<usize> {
    let feet: Vec<Footprint> = plans
        .iter()
        .map(|p| Footprint::of(&p.cfg, p.workload.data_blocks()))
        .collect();
    let results: u64 = feet.iter().map(|f| f.part("-T")).sum();
    let mut running: Vec<u64> = feet.iter().map(|f| f.total() - f.part("-T")).collect();
    running.sort_unstable_by(|a, b| b.cmp(a));
    let need = |jobs: usize| results + running.iter().take(jobs).sum::<u64>();
    let jobs = match parallel {
        Some(j) => j as usize,
        None => {
            let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
            let mut j = cores.min(plans.len()).max(1);
            while j > 1 && need(j) > limit {
                j -= 1;
            }
            j
        }
    };
    if need(jobs) > limit {
        return Err(usage(format!(
            "the sweep would hold about {} of memory ({} points' results, {jobs} point(s) at once \
             of up to {} each), over --max-memory {}; lower --parallel, sweep fewer points or \
             raise --max-memory",
            about(need(jobs)),
            plans.len(),
            about(running.first().copied().unwrap_or(0)),
            crate::units::format_memory(limit)
        )));
    }
    Ok(jobs)
}

/// The sweep planned: its grid, its points, and their runs (all of them,
/// or the one a job runs).
struct Planned {
    grid: Grid,
    points: Vec<Point>,
    plans: Vec<RunPlan>,
    seed: u64,
    disk: Disk,
    /// --max-memory, for the whole sweep.
    max_memory: u64,
}

/// Check the flags and plan the sweep's runs, every point's, or only point
/// `only`'s (a job's).
fn plan_sweep(args: &SweepArgs, only: Option<usize>) -> Result<Planned> {
    let grid = grid_of(args)?;
    let quiet = args.w.quiet;
    // The config file's notice, once; every point is quiet.
    let settings = resolve_settings(args.w.config.as_deref(), &grid.fixed_settings, quiet)?;
    let instance = instance_preset(args.instance.as_deref())?;
    let limits = super::model::volume_limits(args.volume_limits.as_deref())?;
    let profiles = grid
        .devices
        .iter()
        .map(|d| model_device(Some(d), instance, limits.as_ref(), true))
        .collect::<Result<Vec<_>>>()?;
    let mut shape = match args.mode {
        SweepMode::Model => {
            let mut shape = args.w.shape_for_model()?;
            if args.w.cpu_is_host() {
                super::host_cpu(&mut shape, "sweep")?;
            }
            shape
        }
        SweepMode::Run => {
            let mut shape = args.w.shape_for_run()?;
            super::host_cpu(&mut shape, "sweep")?;
            shape
        }
    };
    shape.quiet = true;
    let seed = shape.seed;
    let common = Common {
        shape,
        settings,
        disk: Disk {
            data: args.dirs.data_dir(),
            io_engine: args.io_engine,
            buffered: args.buffered,
            emulate: None,
            standby_root: args.dirs.dir.clone(),
        },
        profiles,
        instance,
        grid: &grid,
    };
    let (points, plans) = match only {
        None => plan_points(&common)?,
        Some(i) => {
            let (p, plan) = plan_point(&common, i)?;
            (vec![p], vec![plan])
        }
    };
    let max_memory = common.shape.max_memory;
    let Common { disk, .. } = common;
    Ok(Planned {
        grid,
        points,
        plans,
        seed,
        disk,
        max_memory,
    })
}

/// Run the sweep: check every point first, run them with a progress bar,
/// print the table and the knees, write the JSON. With --jobs-dir or --merge,
/// write the points as jobs, run one, or merge their results instead.
pub fn sweep(args: &SweepArgs, stop: &Stop) -> Result<i32> {
    if let Some(dir) = &args.merge {
        return merge(args, dir);
    }
    if let Some(dir) = &args.jobs_dir {
        return if args.run_index.is_some() || args.run_index_env.is_some() {
            run_job(args, dir, stop)
        } else {
            write_jobs(args, dir)
        };
    }
    let quiet = args.w.quiet;
    let Planned {
        grid,
        points,
        plans,
        seed,
        disk,
        max_memory,
    } = plan_sweep(args, None)?;
    let jobs = match args.mode {
        SweepMode::Run => 1,
        SweepMode::Model => model_jobs(args.parallel, &plans, max_memory)?,
    };
    if args.mode == SweepMode::Run {
        let first = &plans[0];
        execute::prepare(&disk.data, &first.workload, first.scale, quiet, stop)?;
    }
    if !quiet {
        eprintln!(
            "sweep: {} runs ({}); seed {seed}",
            points.len(),
            match args.mode {
                SweepMode::Model => "model",
                SweepMode::Run => "run",
            }
        );
    }
    let bar = if progress_bar_wanted(quiet) {
        let b = ProgressBar::new(points.len() as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} sweep {pos}/{len} [{bar:25}] {elapsed_precise}, ETA {eta}  {msg}",
            )
            .expect("valid template")
            .progress_chars("=> "),
        );
        b.enable_steady_tick(Duration::from_millis(200));
        b
    } else {
        ProgressBar::hidden()
    };
    let ran = run_grid(&grid, &points, plans, jobs, stop, &bar)?;
    let interrupted = ran.interrupted;
    emit(args, &sweep_doc(args.mode, seed, grid, ran))?;
    Ok(if interrupted { 130 } else { 0 })
}

/// The sweep's document from what its points gave.
fn sweep_doc(mode: SweepMode, seed: u64, grid: Grid, ran: Ran) -> SweepDoc {
    let Ran {
        results,
        table,
        interrupted,
    } = ran;
    let knees = knees(&table);
    SweepDoc {
        schema: SWEEP_SCHEMA.to_string(),
        schema_version: SCHEMA_VERSION as u64,
        pgiosim_version: env!("CARGO_PKG_VERSION").to_string(),
        partial: interrupted,
        mode,
        seed,
        grid,
        knee_rule: knee_rule(),
        table,
        knees,
        results,
    }
}

/// Print the table and the knees; write the JSON, CSV and Markdown.
fn emit(args: &SweepArgs, doc: &SweepDoc) -> Result<()> {
    let exports = [&args.w.json, &args.csv, &args.markdown];
    let stdout_taken = exports
        .iter()
        .any(|p| p.as_deref().is_some_and(output::is_stdout));
    output::report(&render(doc), stdout_taken)?;
    if let Some(path) = &args.w.json {
        write_json(path, doc)?;
    }
    if let Some(path) = &args.csv {
        output::write_file("--csv", path, &table_of(doc).to_csv())?;
    }
    if let Some(path) = &args.markdown {
        output::write_file("--markdown", path, &table_of(doc).to_markdown())?;
    }
    Ok(())
}

/// `sweep`'s flags parsed on their own: a job reads them back from the
/// manifest.
#[derive(Debug, Parser)]
#[command(name = "pgiosim sweep")]
struct Reparse {
    #[command(flatten)]
    a: SweepArgs,
}

/// The sweep's flags `argv` (without `pgiosim sweep`) as clap reads them.
fn reparse(argv: &[String]) -> Result<SweepArgs> {
    Reparse::try_parse_from(std::iter::once("pgiosim sweep").chain(argv.iter().map(String::as_str)))
        .map(|r| r.a)
        .map_err(|e| {
            let first = e.to_string();
            let first = first
                .lines()
                .next()
                .unwrap_or("")
                .trim_start_matches("error: ");
            usage(format!(
                "the sweep's flags in the manifest no longer parse: {first}"
            ))
        })
}

/// Refuses every sweep flag but those `keep` copies over, for the forms
/// that take the sweep from DIR's manifest (`form`, the flag naming it).
fn only_flags(
    args: &SweepArgs,
    form: &str,
    allowed: &str,
    keep: impl Fn(&mut SweepArgs, &SweepArgs),
) -> Result<()> {
    let mut bare = reparse(&[])?;
    keep(&mut bare, args);
    if format!("{bare:?}") != format!("{args:?}") {
        return Err(usage(format!(
            "{form}: the sweep's flags come from the manifest in DIR; give only {allowed}"
        )));
    }
    Ok(())
}

/// The sweep's flags as typed (after `sweep`), without --jobs-dir and its
/// directory: what every job plans its point from.
fn sweep_argv() -> Result<Vec<String>> {
    let all = std::env::args_os()
        .map(|a| a.into_string())
        .collect::<std::result::Result<Vec<String>, _>>()
        .map_err(|a| {
            usage(format!(
                "--jobs-dir: the flags go into the manifest, and {a:?} is not UTF-8"
            ))
        })?;
    let start = all
        .iter()
        .position(|a| a == "sweep")
        .map_or(all.len(), |i| i + 1);
    let mut out = Vec::new();
    let mut it = all[start..].iter();
    while let Some(a) = it.next() {
        if a == "--jobs-dir" {
            it.next();
        } else if !a.starts_with("--jobs-dir=") {
            out.push(a.clone());
        }
    }
    Ok(out)
}

/// `--jobs-dir DIR`: plan every point, then write them as jobs for a scheduler.
fn write_jobs(args: &SweepArgs, dir: &Path) -> Result<i32> {
    if args.mode == SweepMode::Run {
        return Err(usage(
            "--jobs-dir: applies to --mode model; --mode run measures this machine's disk, a point at a time",
        ));
    }
    for (flag, given) in [
        ("--json", args.w.json.is_some()),
        ("--csv", args.csv.is_some()),
        ("--markdown", args.markdown.is_some()),
    ] {
        if given {
            return Err(usage(format!(
                "{flag}: with --jobs-dir, give it to `sweep --merge DIR`, which writes the sweep's results"
            )));
        }
    }
    if args.parallel.is_some() {
        return Err(usage(
            "--parallel: with --jobs-dir, the scheduler decides how many points run at once",
        ));
    }
    let argv = sweep_argv()?;
    // What a job will read back must be these very flags.
    let mut same = reparse(&argv)?;
    same.jobs_dir.clone_from(&args.jobs_dir);
    if format!("{same:?}") != format!("{args:?}") {
        return Err(usage(
            "--jobs-dir: the sweep's flags do not read back the same from the manifest; give --jobs-dir DIR on its own",
        ));
    }
    let Planned {
        grid,
        points,
        plans,
        seed,
        ..
    } = plan_sweep(args, None)?;
    let m = Manifest::new(argv, args.mode, seed, &grid, &points, &plans);
    let w = jobs::write_jobs(dir, &m)?;
    let d = dir.display();
    println!(
        "sweep: {} points as jobs in {}, one a line{}; run them with a scheduler, then `pgiosim sweep --merge {d}`",
        m.points.len(),
        w.jobs.display(),
        if w.done > 0 {
            format!(" ({} with a result already)", w.done)
        } else {
            String::new()
        }
    );
    Ok(0)
}

/// `--jobs-dir DIR --run-index N`: run one point of DIR's sweep and write its
/// result there.
fn run_job(args: &SweepArgs, dir: &Path, stop: &Stop) -> Result<i32> {
    only_flags(
        args,
        "--run-index",
        "--jobs-dir DIR, --run-index N or --run-index-env VAR, and -q",
        |b, a| {
            b.jobs_dir.clone_from(&a.jobs_dir);
            b.run_index = a.run_index;
            b.run_index_env.clone_from(&a.run_index_env);
            b.w.quiet = a.w.quiet;
        },
    )?;
    let m = jobs::read_manifest(dir)?;
    let i = jobs::job_index(args.run_index, args.run_index_env.as_deref(), &m)?;
    let mut sweep_args = reparse(&m.args)?;
    // Notices were the sweep's to print when its jobs were written.
    sweep_args.w.quiet = true;
    let Planned { mut plans, .. } = plan_sweep(&sweep_args, Some(i))?;
    let plan = plans.pop().expect("one point planned");
    jobs::check_plan(&m, i, &plan)?;
    let (result, _) = execute::execute(plan, stop)?;
    let label = &m.points[i].label;
    if result.partial || stop.is_set() {
        return Err(Interrupted(format!(
            "--run-index {i} ({label}): interrupted; no result written"
        ))
        .into());
    }
    let path = jobs::write_point(dir, &m, i, result)?;
    if !args.w.quiet {
        println!(
            "sweep: point {i} of {} ({label}): {}",
            m.points.len(),
            path.display()
        );
    }
    Ok(0)
}

/// `--merge DIR`: the sweep's table, knees and JSON from its jobs' results,
/// as the sweep run here would have printed and written them.
fn merge(args: &SweepArgs, dir: &Path) -> Result<i32> {
    only_flags(
        args,
        "--merge",
        "--json, --csv, --markdown and -q",
        |b, a| {
            b.merge.clone_from(&a.merge);
            b.w.json.clone_from(&a.w.json);
            b.csv.clone_from(&a.csv);
            b.markdown.clone_from(&a.markdown);
            b.w.quiet = a.w.quiet;
        },
    )?;
    let m = jobs::read_manifest(dir)?;
    let ran = jobs::merge(dir, &m)?;
    emit(args, &sweep_doc(m.mode, m.seed, m.grid, ran))?;
    Ok(0)
}
