//! `pgiosim capture`: the flags checked, a live PostgreSQL watched
//! (`crate::capture`, which reads its statistics and builds the workload)
//! and the workload, its .conf and the summary written.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::Result;
use clap::Args;

use crate::capture::build::Captured;
use crate::capture::{
    Watched, build, conf_path, parse_dsn, proc_cpu, server_cpu_into, summary, watch,
};
use crate::error::usage;
use crate::output;
use crate::stop::Stop;

/// Flags of `capture`.
#[derive(Debug, Clone, Args)]
pub struct CaptureArgs {
    /// The server to read: a URL (postgres://user:password@host:port/dbname,
    /// a socket directory as ?host=/var/run/postgresql) or libpq key=value
    /// pairs (host=/var/run/postgresql port=5432 dbname=app). Parts left out
    /// come from PGHOST, PGPORT, PGUSER, PGDATABASE and PGPASSWORD, then
    /// libpq's defaults. Connects without TLS.
    #[arg(long, value_name = "DSN")]
    pub dsn: Option<String>,
    /// How long to watch, in seconds or with a unit (30s, 5min).
    #[arg(
        short = 'T',
        long = "time",
        value_name = "DURATION",
        default_value = "60s"
    )]
    pub time: String,
    /// The workload file to write; the server's settings go beside it with
    /// the extension .conf (x.json and x.conf).
    #[arg(short = 'o', long = "output", value_name = "FILE.json")]
    pub output: PathBuf,
    /// The workload's name [default: the output file's name without extension].
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Print a progress line (tps, WAL per transaction) every SECONDS.
    #[arg(short = 'P', long = "progress", value_name = "SECONDS")]
    pub progress: Option<f64>,
    /// Also write the observed figures as JSON to FILE ("-" for standard
    /// output, instead of the summary).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Print nothing but errors and the summary.
    #[arg(short, long)]
    pub quiet: bool,
    /// The server's CPU utilisation over the capture as its console shows
    /// it, percent of all its vCPUs (with --vcpus): for a managed service.
    /// Without it, a server on this host is read from /proc (the
    /// postmaster and its processes); the workload's CPU figures come from
    /// either (see `workload from-server-cpu`).
    #[arg(long, value_name = "PCT", requires = "vcpus")]
    pub cpu_utilization: Option<f64>,
    /// The server's vCPUs, with --cpu-utilization.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub vcpus: Option<u32>,
    /// The server's size (`pgiosim instances`): its CPU class gives its
    /// cores' speed relative to the EPYC 9454P.
    #[arg(long, value_name = "NAME", conflicts_with = "cpu_speed")]
    pub instance: Option<String>,
    /// The server's per-core speed relative to the EPYC 9454P, whose time
    /// the I/O path's CPU figures are in [default: 1].
    #[arg(long, value_name = "FACTOR")]
    pub cpu_speed: Option<f64>,
}

/// Run `capture`; returns the exit code (130 when interrupted, after writing
/// what was observed).
pub fn capture(args: &CaptureArgs, stop: &Stop) -> Result<i32> {
    if output::is_stdout(&args.output) {
        // capture writes two files, the workload and the .conf beside it.
        return Err(usage(
            "-o -: capture writes a workload and a .conf beside it; name a file",
        ));
    }
    let (duration, progress) = watch_times(args)?;
    let config = parse_dsn(args.dsn.as_deref().unwrap_or(""))?;
    let conf_out = conf_path(&args.output);
    check_output(&args.output)?;
    let name = match &args.name {
        Some(n) => n.clone(),
        None => args
            .output
            .file_stem()
            .map_or("captured".into(), |s| s.to_string_lossy().into_owned()),
    };

    let speed = server_speed(args)?;
    let Watched {
        obs,
        cpu_start,
        cpu_end,
    } = watch(
        &config,
        duration,
        progress,
        args.cpu_utilization.is_none(),
        args.quiet,
        stop,
    )?;
    let json_name = args.output.display().to_string();
    let conf_name = conf_out.display().to_string();
    let mut captured = build::derive(&obs, &name, &json_name, &conf_name)?;
    let cpu_seconds = server_cpu_seconds(args, &captured, &cpu_start, &cpu_end);
    if let Some((secs, from)) = cpu_seconds {
        server_cpu_into(&mut captured, secs, &from, speed, args.quiet)?;
    } else if !args.quiet {
        eprintln!(
            "notice: the server's CPU is not on this host and --cpu-utilization was not given: the workload keeps pgiosim's default CPU figures"
        );
    }
    output::write_file("-o", &args.output, &captured.spec_json)?;
    output::write_file("-o (its .conf)", &conf_out, &captured.conf)?;
    let summary = summary(&captured, &obs, &json_name, &conf_name);
    print_summary(args.json.as_deref(), &captured, &summary)?;
    Ok(if obs.partial { 130 } else { 0 })
}

/// -T and -P: how long to watch, at least a second, and how often to print progress.
fn watch_times(args: &CaptureArgs) -> Result<(Duration, Option<Duration>)> {
    let duration = match crate::units::parse_duration(&args.time) {
        Ok(ns) if ns >= 1_000_000_000 => Duration::from_nanos(ns),
        Err(
            e @ (crate::units::DurationError::BadUnit(_)
            | crate::units::DurationError::TooLong { .. }),
        ) => {
            return Err(usage(format!("-T/--time {}: {e}", args.time)));
        }
        _ => {
            return Err(usage(format!(
                "-T/--time: the capture needs at least 1 second, in seconds or with a unit (30s, 5min), got {}",
                args.time
            )));
        }
    };
    let progress = match args.progress {
        None => None,
        Some(p) if p.is_finite() && (0.5..=crate::units::DURATION_MAX_S as f64).contains(&p) => {
            Some(Duration::from_secs_f64(p))
        }
        Some(p) => {
            return Err(usage(format!(
                "-P/--progress: must be at least 0.5 seconds, got {p}"
            )));
        }
    };
    Ok((duration, progress))
}

/// The workload file's name: not a .conf (its companion would overwrite it), in a directory that exists.
fn check_output(output: &Path) -> Result<()> {
    if output.extension().is_some_and(|e| e == "conf") {
        return Err(usage(format!(
            "-o {}: the workload file would be overwritten by its .conf; name it x.json",
            output.display()
        )));
    }
    if let Some(parent) = output.parent()
        && !parent.as_os_str().is_empty()
        && !parent.is_dir()
    {
        anyhow::bail!(
            "-o {}: no such directory {}",
            output.display(),
            parent.display()
        );
    }
    Ok(())
}

/// The server's per-core speed, from --instance or --cpu-speed (after
/// --cpu-utilization is checked).
fn server_speed(args: &CaptureArgs) -> Result<Option<f64>> {
    if let Some(p) = args.cpu_utilization
        && !(p.is_finite() && p > 0.0 && p <= 100.0)
    {
        return Err(usage(format!(
            "--cpu-utilization: a percentage of the server's vCPUs in (0, 100], got {p}"
        )));
    }
    if let Some(f) = args.cpu_speed {
        let (lo, hi) = crate::units::CPU_SPEED_RANGE;
        crate::units::check_f64("--cpu-speed", f, lo, hi, "a factor (1 = the EPYC 9454P)")?;
    }
    Ok(match (&args.instance, args.cpu_speed) {
        (Some(name), _) => {
            Some(crate::device::instance::cpu_class::preset_speed(name).map_err(usage)?)
        }
        (None, f) => f,
    })
}

/// The server's CPU seconds over the capture and where they come from: its
/// console's utilisation, or /proc for a server on this host.
fn server_cpu_seconds(
    args: &CaptureArgs,
    captured: &Captured,
    cpu_start: &Option<proc_cpu::Reading>,
    cpu_end: &Option<proc_cpu::Reading>,
) -> Option<(f64, String)> {
    match (args.cpu_utilization, args.vcpus, cpu_start, cpu_end) {
        (Some(pct), Some(v), _, _) => Some((
            pct / 100.0 * f64::from(v) * captured.figures.seconds,
            format!("{pct}% of {v} vCPUs (the server's console)"),
        )),
        (None, _, Some(a), Some(b)) => Some((
            proc_cpu::spent(a, b),
            format!(
                "/proc: the postmaster (pid {}) and its processes, user + system",
                a.postmaster
            ),
        )),
        _ => None,
    }
}

/// The summary, and the observed figures as JSON with --json (to standard
/// output, the summary then to standard error).
fn print_summary(json: Option<&Path>, captured: &Captured, summary: &str) -> Result<()> {
    match json {
        Some(p) if p == Path::new("-") => {
            output::stdout(&(serde_json::to_string_pretty(&captured.figures)? + "\n"))?;
            eprint!("{summary}");
        }
        Some(p) => {
            output::write_file(
                "--json",
                p,
                &(serde_json::to_string_pretty(&captured.figures)? + "\n"),
            )?;
            output::stdout(summary)?;
        }
        None => output::stdout(summary)?,
    }
    Ok(())
}
