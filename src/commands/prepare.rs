//! `pgiosim prepare`: the data files made (or checked) ahead of a run.

use anyhow::Result;
use clap::Args;

use crate::args::{DirArgs, WorkloadChoice};
use crate::stop::Stop;
use crate::workload::Script;

/// Flags of `prepare`.
#[derive(Debug, Clone, Args)]
pub struct PrepareArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// pgbench scale factor: 100,000 accounts rows (about 17 MB) per unit.
    #[arg(short, long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub scale: u64,
    #[command(flatten)]
    pub workload: WorkloadChoice,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// `pgiosim prepare`: make the data set, or say it is already there.
pub fn prepare(args: &PrepareArgs, stop: &Stop) -> Result<i32> {
    let workload = Script::mix(&args.workload.parts()?, args.scale)?;
    let dd = args.dirs.data_dir();
    let outcome = crate::execute::prepare(&dd, &workload, args.scale, args.quiet, stop)?;
    if !args.quiet {
        eprintln!(
            "{}: {}",
            dd.dir.display(),
            crate::execute::prepared_word(outcome)
        );
    }
    Ok(0)
}
