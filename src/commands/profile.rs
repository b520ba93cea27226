//! `pgiosim profile`: device profiles from fio's and YABS's results, and
//! `profile show` (the importers themselves: `device::import`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::calibrate;
use crate::device::microbench;
use crate::device::profile::Profile;
use crate::error::usage;
use crate::output;

/// `pgiosim profile ...`: device profiles from other tools' results.
#[derive(Debug, Clone, clap::Subcommand)]
pub enum ProfileCommand {
    /// Build a device profile from fio JSON results (fio --output-format=json).
    ///
    /// Reads the common 16-test battery (4k random and 1M sequential, QD1 and
    /// parallel, read, write, 50/50 mixed and fsync'd write) from one or more
    /// files, classifying each job by its options. Tests missing from the
    /// input are filled from --base and listed in a warning.
    FromFio(FromFioArgs),
    /// Build a device profile from YABS's disk test (text or JSON output).
    ///
    /// YABS runs fio randrw 50/50 with 2 jobs x QD64 at 4k, 64k, 512k and
    /// 1m. The 4k rate becomes a cap (or more channels), the best of 512k
    /// and 1m the bandwidth; QD1 latencies, fsync latency and whether
    /// flushes scale, which YABS does not measure, come from --base and the
    /// profile's source says so. Prints YABS's figures beside what the model
    /// makes of the profile.
    FromYabs(FromYabsArgs),
    /// Check a device profile and show what the device model makes of it:
    /// QD1 read latency, QD32 read IOPS, QD1 and parallel write+fdatasync rates.
    Show(ShowArgs),
}

/// Flags of `profile from-fio`.
#[derive(Debug, Clone, clap::Args)]
pub struct FromFioArgs {
    /// fio result files, JSON (fio --output-format=json).
    #[arg(required = true, value_name = "FIO_JSON")]
    pub files: Vec<PathBuf>,
    /// Where to write the profile.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Name of the profile [default: the output file's name without .json].
    #[arg(long)]
    pub name: Option<String>,
    /// Profile whose figures fill the tests missing from the input.
    #[arg(long, value_name = "NAME|FILE", default_value = "nvme")]
    pub base: String,
    /// Print nothing but errors and warnings.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Flags of `profile from-yabs`.
#[derive(Debug, Clone, clap::Args)]
pub struct FromYabsArgs {
    /// YABS output: the text it prints, or its JSON (yabs.sh -j / -w).
    #[arg(value_name = "YABS_OUTPUT")]
    pub file: PathBuf,
    /// Which disk, when the file holds several results: its number (1, 2,
    /// ...) or the partition YABS names (/dev/sdb).
    #[arg(long, value_name = "N|PARTITION")]
    pub disk: Option<String>,
    /// Where to write the profile.
    #[arg(short, long, value_name = "FILE")]
    pub output: PathBuf,
    /// Name of the profile [default: the output file's name without .json].
    #[arg(long)]
    pub name: Option<String>,
    /// Profile whose QD1 latencies, flush and round trip fill what YABS
    /// does not measure.
    #[arg(long, value_name = "NAME|FILE", default_value = "nvme")]
    pub base: String,
    /// Print nothing but errors.
    #[arg(short, long)]
    pub quiet: bool,
}

/// Flags of `profile show`.
#[derive(Debug, Clone, clap::Args)]
pub struct ShowArgs {
    /// A shipped profile's name or a profile JSON file.
    #[arg(value_name = "NAME|FILE")]
    pub profile: String,
    /// Print the profile and its figures as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `pgiosim profile ...`.
pub fn profile(cmd: &ProfileCommand) -> Result<i32> {
    match cmd {
        ProfileCommand::FromFio(a) => from_fio(a),
        ProfileCommand::FromYabs(a) => from_yabs(a),
        ProfileCommand::Show(a) => show(a),
    }
}

/// The profile's name: --name, or the output file's; checked.
fn profile_name(name: Option<&String>, output: &Path) -> Result<String> {
    if name.is_none() && output::is_stdout(output) {
        // "-" names no file to take the profile's name from.
        return Err(usage(
            "-o -: the profile goes to standard output; give it a --name",
        ));
    }
    calibrate::profile_name(name.map(String::as_str), output)
}

fn from_yabs(a: &FromYabsArgs) -> Result<i32> {
    let name = profile_name(a.name.as_ref(), &a.output)?;
    let base = crate::device::name::resolve("--base", &a.base)?;
    let disks = crate::device::import::yabs::load(&a.file)?;
    let file = a.file.display().to_string();
    // The first ten: 3,000 disks made a 53 kB line.
    let list = || {
        let mut shown: Vec<String> = disks
            .iter()
            .take(10)
            .enumerate()
            .map(|(i, d)| format!("{} ({})", i + 1, d.label))
            .collect();
        if disks.len() > 10 {
            shown.push(format!("and {} more", disks.len() - 10));
        }
        shown.join(", ")
    };
    let disk = match &a.disk {
        None if disks.len() == 1 => &disks[0],
        None => {
            return Err(usage(format!(
                "{file}: holds {} disks' results, {}; choose one with --disk",
                disks.len(),
                list()
            )));
        }
        Some(d) => {
            let by_number = d.parse::<usize>().ok().and_then(|n| n.checked_sub(1));
            by_number
                .and_then(|i| disks.get(i))
                .or_else(|| disks.iter().find(|x| x.label == *d))
                .ok_or_else(|| {
                    usage(format!("--disk {d}: not in {file}, which holds {}", list()))
                })?
        }
    };
    let imp = crate::device::import::yabs::build(disk, &name, &base, &file)?;
    let text = serde_json::to_string_pretty(&imp.profile)? + "\n";
    output::write_file("-o", &a.output, &text)?;
    if !a.quiet {
        let mut out = format!(
            "YABS {} ({}), at 128 I/Os in flight, 50/50 read/write:\n",
            file, disk.label
        );
        out.push_str(&crate::device::import::yabs::render_table(&imp));
        for n in &imp.notes {
            let _ = writeln!(out, "* {n}");
        }
        let _ = writeln!(
            out,
            "* not measured by YABS, from {}: QD1 read/write latency, fsync latency, whether \
             flushes scale, round trip",
            base.name
        );
        let _ = writeln!(out, "\n{}", crate::device::summary::line(&imp.profile));
        let _ = writeln!(
            out,
            "profile {} written to {}",
            imp.profile.name,
            a.output.display()
        );
        // With `-o -` the profile has standard output to itself.
        output::report(&out, output::is_stdout(&a.output))?;
    }
    Ok(0)
}

fn from_fio(a: &FromFioArgs) -> Result<i32> {
    let name = profile_name(a.name.as_ref(), &a.output)?;
    let base = crate::device::name::resolve("--base", &a.base)?;
    let files = a
        .files
        .iter()
        .map(|p| {
            let text =
                crate::input::read_text(p, "fio result", crate::input::LARGE_FILE_MAX_BYTES)?;
            crate::device::import::fio::FioFile::parse(&text, &p.display().to_string())
                .map_err(crate::error::bad_input)
        })
        .collect::<Result<Vec<_>>>()?;
    let imp =
        crate::device::import::fio::build(&files, &name, &base).map_err(crate::error::bad_input)?;
    let text = serde_json::to_string_pretty(&imp.profile)? + "\n";
    Profile::from_json(&text, &a.output.display().to_string())?;
    output::write_file("-o", &a.output, &text)?;
    if let Some(w) = imp.warning() {
        eprintln!("warning: {w}");
    }
    if !a.quiet {
        for i in &imp.ignored {
            eprintln!("notice: ignored {i}");
        }
        let mut out = crate::device::import::fio::render_table(&imp);
        for n in &imp.notes {
            let _ = writeln!(out, "* {n}");
        }
        let _ = writeln!(out, "\n{}", crate::device::summary::line(&imp.profile));
        let _ = writeln!(
            out,
            "profile {} written to {}",
            imp.profile.name,
            a.output.display()
        );
        // With `-o -` the profile has standard output to itself.
        output::report(&out, output::is_stdout(&a.output))?;
    }
    Ok(0)
}

fn show(a: &ShowArgs) -> Result<i32> {
    let p = crate::device::name::resolve("profile show", &a.profile)?;
    let f = microbench::figures(&p, 1);
    if a.json {
        let v = serde_json::json!({ "profile": p.to_json(), "figures": f });
        output::stdout(&(serde_json::to_string_pretty(&v)? + "\n"))?;
    } else {
        // The microbenchmarks drive one disk: an array's figures are a member's.
        let whose = match p.raid0 {
            Some(r) => format!(" (one member of {})", r.members),
            None => String::new(),
        };
        output::stdout(&format!(
            "{}\nmodel{whose}: QD1 8 KiB read mean {:.1} µs, p50 {:.1} µs, p99 {:.1} µs; QD32 read {:.0} IOPS; \
             write+fdatasync QD1 {:.0}/s, 4 × QD64 {:.0}/s\n",
            crate::device::summary::line(&p),
            f.qd1_read_mean_us,
            f.qd1_read_p50_us,
            f.qd1_read_p99_us,
            f.qd32_read_iops,
            f.qd1_flush_per_s,
            f.parallel_flush_per_s
        ))?;
    }
    Ok(0)
}
