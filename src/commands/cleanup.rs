//! `pgiosim cleanup`: pgiosim's files removed, and only pgiosim's.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;
use clap::Args;

use crate::args::DirArgs;
use crate::datafiles;
use crate::output;

/// `cleanup`'s flags: the data set's directories, and where its standbys'
/// files went if not in --dir.
#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// The --standby-dir a run with --standby was given: its standby-NAME
    /// directories are cleaned up too [default: DIR].
    #[arg(long, value_name = "DIR")]
    pub standby_dir: Option<PathBuf>,
}

/// `pgiosim cleanup`: remove the data set's and its standbys' files.
pub fn cleanup(args: &CleanupArgs) -> Result<i32> {
    let dd = args.dirs.data_dir();
    // Standbys' files first (in --standby-dir, else their default
    // place in DIR), so that DIR can go if pgiosim made it and
    // nothing else is left.
    let mut removed = Vec::new();
    let root = args.standby_dir.as_ref().unwrap_or(&dd.dir);
    for sd in crate::execute::default_standby_dirs(root) {
        removed.extend(datafiles::cleanup(&sd)?);
    }
    removed.extend(datafiles::cleanup(&dd)?);
    let mut o = String::new();
    for p in &removed {
        let _ = writeln!(o, "removed {}", p.display());
    }
    if removed.is_empty() {
        let _ = writeln!(o, "nothing of pgiosim's to remove in {}", dd.dir.display());
    }
    output::stdout(&o).map(|()| 0)
}
