//! The commands, one file each, named for the subcommand. `cli` parses the
//! command line and hands each to its file here.

pub mod calibrate;
pub mod capture;
pub mod catchup;
pub mod cleanup;
pub mod compare;
pub mod cpu_probe;
pub mod cpus;
pub mod devices;
pub mod import;
pub mod instances;
pub mod iobench;
pub mod model;
pub mod prepare;
pub mod profile;
pub mod report;
pub mod run;
pub mod sweep;
pub mod vacuum;
pub mod workload;

use std::path::Path;

use anyhow::Result;

use crate::args::WorkloadArgs;
use crate::error::exit;
use crate::output::{self, write_json};
use crate::plan::RunShape;
use crate::report::{RunResult, text};

/// On this host's disk, this host's CPU: its speed from the CPU probe
/// against the machine of the workload's CPU figures (its `cpu_probe_us`),
/// unless `--cpu-speed` set one or the workload names no such machine;
/// if the probe fails, the figures' own speed with a warning.
/// `command` names the command in the notice, which quiet runs omit.
pub(crate) fn host_cpu(shape: &mut RunShape, command: &str) -> Result<()> {
    let reference = shape.workload.first().and_then(|(w, _)| w.cpu_probe_us);
    if shape.cpu_speed.is_some() || shape.cpu.is_some() || reference.is_none() {
        return Ok(());
    }
    // A host where the probe cannot run (no memfd, no threads) still runs
    // the workload, at the figures' own speed, and says so.
    let probe = match crate::engine::cpu_probe::measure() {
        Ok(p) => p,
        Err(e) => {
            eprintln!(
                "warning: {command}: {e:#}; the workload's CPU figures are taken as this host's (--cpu-speed sets a speed)"
            );
            return Ok(());
        }
    };
    if let Some(speed) = shape.apply_cpu_probe(probe.us_per_round)?
        && !shape.quiet
    {
        eprintln!(
            "{command}: this host's CPU at {speed:.2}x the machine of the workload's CPU figures \
             (pgiosim cpu-probe: {:.2} µs a round here, {:.2} there); --cpu-speed overrides",
            probe.us_per_round,
            reference.unwrap_or(f64::NAN),
        );
    }
    Ok(())
}

/// Print the report, write the JSON; the exit code says whether it is
/// partial (130), or whether it measured nothing: a run that completed no
/// transaction exits 1 with a warning, as its figures answer no question.
pub(crate) fn print_result(result: &RunResult, w: &WorkloadArgs) -> Result<i32> {
    report_and_json(&text::render(result), w.json.as_deref(), result)?;
    if result.partial {
        return Ok(exit::INTERRUPTED.into());
    }
    if result.summary.transactions == 0 {
        eprintln!("{}", no_transactions_warning(result));
        return Ok(exit::FAILURE.into());
    }
    Ok(exit::OK.into())
}

/// A command's text report, and its JSON where `--json` asks (the report
/// goes to stderr when the JSON takes stdout).
pub(crate) fn report_and_json(
    report: &str,
    json: Option<&Path>,
    doc: &impl serde::Serialize,
) -> Result<()> {
    output::report(report, json.is_some_and(output::is_stdout))?;
    if let Some(path) = json {
        write_json(path, doc)?;
    }
    Ok(())
}

/// A one-shot command's (`vacuum`'s, `catchup`'s) report and JSON; exits
/// 130 if it was interrupted.
pub(crate) fn print_one_shot(
    report: &str,
    json: Option<&Path>,
    doc: &impl serde::Serialize,
    partial: bool,
) -> Result<i32> {
    report_and_json(report, json, doc)?;
    Ok(if partial {
        exit::INTERRUPTED.into()
    } else {
        exit::OK.into()
    })
}

/// Why a run may have completed no transaction, in one line: the rate
/// when -R asked for less than one in the run, else the length, the
/// clients or the cores.
fn no_transactions_warning(r: &RunResult) -> String {
    if let Some(rl) = &r.summary.rate_limit
        && rl.requested_tps * r.summary.elapsed_s < 1.0
    {
        return format!(
            "warning: no transaction completed in {:.3} s: at -R {} one transaction is due \
             every {:.0} s; give a higher -R/--rate (exit code 1)",
            r.summary.elapsed_s,
            rl.requested_tps,
            1.0 / rl.requested_tps
        );
    }
    format!(
        "warning: no transaction completed in {:.3} s with {} client(s) on {} CPU(s): the \
         duration is shorter than one transaction takes here; give a longer -T, fewer clients \
         or more --cpus (exit code 1)",
        r.summary.elapsed_s, r.run.clients, r.run.cpus
    )
}

/// With the client on another host (`--client-rtt`), `-j` is pgbench's
/// threads there: nothing of the server's to model, but the result says how
/// many, as pgbench's "number of threads" does.
pub(crate) fn client_host_threads(result: &mut RunResult, w: &WorkloadArgs) {
    if w.client_rtt.is_some()
        && let Some(j) = w.jobs
    {
        result.run.jobs = j;
    }
}
