//! `pgiosim calibrate`: the flags checked, the disk probed and a profile
//! fitted (`crate::calibrate`, which describes the tests), the profile and
//! the table written.

use std::path::PathBuf;

use anyhow::{Context, Result};

use crate::calibrate::{
    MISS_WARN, Options, SIZE_MIN_BYTES, probe_and_fit, profile_name, render_table,
};
use crate::device::profile::Profile;
use crate::error::usage;
use crate::output;
use crate::stop::Stop;
use crate::units::parse_memory_bytes;

/// Flags of `calibrate`.
#[derive(Debug, Clone, clap::Args)]
pub struct CalibrateArgs {
    /// Directory on the disk to probe; the probe files go to
    /// DIR/pgiosim-calibrate and are removed at the end.
    #[arg(long, value_name = "DIR")]
    pub dir: PathBuf,
    /// Where to write the device profile (JSON).
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Length of each test, seconds (fractions allowed); the read sweep's
    /// depths, the larger WAL writes and the idle gaps run half as long each.
    #[arg(long, value_name = "SECONDS", default_value_t = 4.0)]
    pub seconds_per_test: f64,
    /// Size of the data file random reads go to, with postgresql.conf units
    /// (1GB, 512MB). Larger than the disk's cache gives truer latencies.
    #[arg(long, value_name = "SIZE", default_value = "1GB")]
    pub size: String,
    /// Name of the profile [default: the output file's name without .json].
    #[arg(long)]
    pub name: Option<String>,
    /// Also write every measurement as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Keep the probe files for the next calibration.
    #[arg(long)]
    pub keep: bool,
    /// Print nothing but errors and the table (no progress bar, no notices).
    #[arg(short, long)]
    pub quiet: bool,
}

/// The flags' bounds: the length of a test, the probe files' size.
/// Returns the size, bytes.
fn checked_size(args: &CalibrateArgs) -> Result<u64> {
    if !(args.seconds_per_test.is_finite() && args.seconds_per_test >= 0.1) {
        return Err(usage(format!(
            "--seconds-per-test: must be at least 0.1, got {}",
            args.seconds_per_test
        )));
    }
    if args.seconds_per_test > 3600.0 {
        return Err(usage("--seconds-per-test: at most 3600"));
    }
    let size = parse_memory_bytes(&args.size).ok_or_else(|| {
        usage(format!(
            "--size {}: not a size; write it as 1GB or 512MB",
            args.size
        ))
    })?;
    if size < SIZE_MIN_BYTES {
        return Err(usage(format!("--size {}: at least 16MB", args.size)));
    }
    Ok(size)
}

/// Runs `pgiosim calibrate`. Returns the exit code (130 if interrupted).
pub fn calibrate(args: &CalibrateArgs, stop: &Stop) -> Result<i32> {
    let size = checked_size(args)?;
    let name = profile_name(args.name.as_deref(), &args.output)?;
    if let Some(parent) = args.output.parent()
        && !parent.as_os_str().is_empty()
        && !parent.is_dir()
    {
        return Err(usage(format!(
            "-o {}: directory {} does not exist",
            args.output.display(),
            parent.display()
        )));
    }

    let opts = Options {
        dir: args.dir.clone(),
        seconds_per_test: args.seconds_per_test,
        size_bytes: size,
        size: args.size.clone(),
        keep: args.keep,
        quiet: args.quiet,
    };
    let Some(cal) = probe_and_fit(&opts, &name, stop)? else {
        eprintln!("calibrate: interrupted; no profile written");
        return Ok(130);
    };
    let text = serde_json::to_string_pretty(&cal.profile)? + "\n";
    // Validated like any profile before it is written.
    Profile::from_json(&text, &args.output.display().to_string())
        .context("calibrate: the measured figures do not make a valid profile")?;
    output::write_file("-o", &args.output, &text)?;
    let report = format!(
        "{}profile {} written to {}\n",
        render_table(&cal),
        cal.profile.name,
        args.output.display()
    );
    let stdout_taken =
        output::is_stdout(&args.output) || args.json.as_deref().is_some_and(output::is_stdout);
    output::report(&report, stdout_taken)?;
    if !cal.misses.is_empty() {
        eprintln!(
            "warning: the profile's model misses {} of calibrate's probes by more than {:.0}%: {}",
            cal.misses.len(),
            100.0 * MISS_WARN,
            cal.misses.join(", ")
        );
    }
    if let Some(path) = &args.json {
        let j = serde_json::to_string_pretty(&cal)? + "\n";
        output::write_file("--json", path, &j)?;
    }
    Ok(0)
}
