//! `pgiosim run`: the workload on this disk's real files.

use std::path::PathBuf;

use anyhow::{Context, Result};
use clap::Args;

use super::{client_host_threads, print_result};
use crate::args::{DirArgs, WorkloadArgs};
use crate::device::name::resolve;
use crate::plan::{Disk, EngineChoice, RunPlan, Target};
use crate::stop::Stop;

/// Flags of `run`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    #[command(flatten)]
    pub w: WorkloadArgs,
    /// I/O engine.
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub io_engine: EngineChoice,
    /// Use the kernel page cache for data files instead of O_DIRECT (as
    /// PostgreSQL up to 17 does); needed on filesystems without O_DIRECT.
    #[arg(long)]
    pub buffered: bool,
    /// Shape every I/O like a device profile's disk (a shipped name or a
    /// profile JSON): completions are delivered no earlier than the device
    /// model says, caps included; where this disk is slower than the
    /// profile, the run says so.
    #[arg(long, value_name = "NAME|FILE")]
    pub emulate: Option<String>,
    /// Where standbys keep their WAL segment files: a subdirectory
    /// standby-NAME per standby, made if missing (put it on a second disk
    /// to give the standbys their own) [default: --dir].
    #[arg(long, value_name = "DIR")]
    pub standby_dir: Option<PathBuf>,
}

/// `pgiosim run`: the plan on this disk, its report and exit code.
pub fn run(args: &RunArgs, stop: &Stop) -> Result<i32> {
    let (mut result, emulation) = crate::execute::execute(args.plan()?, stop)?;
    client_host_threads(&mut result, &args.w);
    let code = print_result(&result, &args.w)
        .with_context(|| format!("run in {}", args.dirs.dir.display()))?;
    if let Some(summary) = emulation {
        eprintln!("{summary}");
    }
    Ok(code)
}

impl RunArgs {
    /// The run these flags describe.
    pub fn plan(&self) -> Result<RunPlan> {
        let settings = self.w.settings()?;
        let disk = Disk {
            data: self.dirs.data_dir(),
            io_engine: self.io_engine,
            buffered: self.buffered,
            // Resolved before anything is locked or written: a typo costs
            // no data set.
            emulate: self
                .emulate
                .as_deref()
                .map(|arg| resolve("--emulate", arg).map(Box::new))
                .transpose()?,
            standby_root: self.standby_dir.clone().unwrap_or(self.dirs.dir.clone()),
        };
        let mut shape = self.w.shape_for_run()?;
        super::host_cpu(&mut shape, "run")?;
        RunPlan::new(shape, settings, Target::Disk(disk))
    }
}
