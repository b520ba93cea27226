//! `pgiosim cpu-probe`: this host's CPU against the machine a workload's
//! CPU figures were measured on, as `run` takes it.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;
use serde::Serialize;

use crate::args::WorkloadChoice;
use crate::engine::cpu_probe::{self, ProbeResult};
use crate::output;

/// Flags of `cpu-probe`.
#[derive(Debug, Clone, Args)]
pub struct CpuProbeArgs {
    #[command(flatten)]
    pub choice: WorkloadChoice,
    /// Also write the figures as JSON to this file.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
}

/// The probe's figures and the speed they give.
#[derive(Debug, Serialize)]
struct Report {
    #[serde(flatten)]
    probe: ProbeResult,
    /// The workload whose reference machine the speed is against.
    workload: String,
    /// Its `cpu_probe_us`: the probe on the machine its CPU figures come from.
    reference_us: Option<f64>,
    /// Where that figure comes from (the workload file's sources).
    reference_source: Option<String>,
    /// reference_us / us_per_round: what `run` takes as --cpu-speed.
    speed: Option<f64>,
}

/// `pgiosim cpu-probe`: measure, print, write the JSON.
pub fn cpu_probe(args: &CpuProbeArgs) -> Result<i32> {
    let parts = args.choice.parts()?;
    let spec = &parts[0].0;
    if let Some((other, _)) = parts
        .iter()
        .find(|(w, _)| w.cpu_probe_us != spec.cpu_probe_us)
    {
        return Err(crate::error::usage(format!(
            "the workloads' CPU figures come from different machines (cpu_probe_us {:?} in {}, \
             {:?} in {}): probe one workload at a time",
            spec.cpu_probe_us, spec.name, other.cpu_probe_us, other.name
        )));
    }
    let probe = cpu_probe::measure()?;
    let reference_us = spec.cpu_probe_us;
    let report = Report {
        speed: reference_us.map(|r| probe.speed_against(r)),
        reference_source: reference_us.and(spec.sources.get("cpu_probe_us").cloned()),
        reference_us,
        workload: spec.name.clone(),
        probe,
    };
    let mut o = String::new();
    let windows: Vec<String> = report
        .probe
        .windows_us
        .iter()
        .map(|w| format!("{w:.2}"))
        .collect();
    let _ = writeln!(
        o,
        "CPU probe: {:.2} µs a round (the least of {} windows of {} rounds: {} µs), {:.0} ms",
        report.probe.us_per_round,
        windows.len(),
        report.probe.rounds_per_window,
        windows.join(" "),
        report.probe.wall_ms
    );
    match (report.reference_us, report.speed) {
        (Some(r), Some(s)) => {
            let _ = writeln!(
                o,
                "{}: its CPU figures were measured on a machine whose probe took {r:.2} µs{}",
                report.workload,
                report
                    .reference_source
                    .as_deref()
                    .map(|s| format!(" ({s})"))
                    .unwrap_or_default()
            );
            let _ = writeln!(
                o,
                "speed: {s:.2} (each CPU cost takes {:.2} times as long here); `run` uses it unless --cpu-speed says otherwise",
                1.0 / s
            );
        }
        _ => {
            let _ = writeln!(
                o,
                "{}: its file gives no cpu_probe_us, so its CPU figures are taken as this host's (speed 1)",
                report.workload
            );
        }
    }
    output::report(&o, args.json.as_deref().is_some_and(output::is_stdout))?;
    if let Some(path) = &args.json {
        output::write_json(path, &report)?;
    }
    Ok(0)
}
