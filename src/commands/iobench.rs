//! `pgiosim iobench`: an I/O engine measured alone, like fio (the
//! benchmark itself: `engine::bench`).

use std::path::PathBuf;

use anyhow::Result;

use crate::engine::bench::{self, Bench, BenchEngine, BenchTest, SIZE_MAX_MIB, render_text};
use crate::engine::psync::MAX_THREADS;
use crate::error::usage;
use crate::output;
use crate::stop::Stop;

/// Measure an I/O engine alone, like fio: random 8 KiB reads, or a WAL
/// write+fdatasync loop, on O_DIRECT files in --dir.
#[derive(Debug, Clone, clap::Args)]
pub struct IoBenchArgs {
    /// Directory for the benchmark's files (created if its parent exists).
    #[arg(long)]
    pub dir: PathBuf,
    /// Engine to measure.
    #[arg(long, value_enum, default_value_t = BenchEngine::Uring)]
    pub io_engine: BenchEngine,
    /// I/O pattern.
    #[arg(long, value_enum, default_value_t = BenchTest::Randread)]
    pub test: BenchTest,
    /// Requests in flight [default: 32 for randread, 1 for walsync].
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=4096))]
    pub qd: Option<u32>,
    /// Length of the measurement, in seconds.
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=86400))]
    pub seconds: u64,
    /// Size of the data file, in MiB.
    #[arg(long, default_value_t = 1024, value_parser = clap::value_parser!(u64).range(1..))]
    pub size: u64,
    /// Print the result as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// Runs `pgiosim iobench`: prepares the files, runs the test and prints the
/// result (text, or JSON with `--json`).
pub fn iobench(args: &IoBenchArgs, stop: &Stop) -> Result<i32> {
    // The flags are checked before the lock and the prepare: a value no
    // engine can take is bad input (exit 2), not a failure of the disk.
    if args.size > SIZE_MAX_MIB {
        return Err(usage(format!(
            "--size {}: at most {SIZE_MAX_MIB} MiB (1 PiB)",
            args.size
        )));
    }
    if args.io_engine == BenchEngine::Psync
        && let Some(qd) = args.qd
        && qd as usize > MAX_THREADS
    {
        return Err(usage(format!(
            "--qd {qd}: --io-engine psync runs a thread for each request in flight, at most {MAX_THREADS}"
        )));
    }
    let r = bench::run(
        &Bench {
            dir: args.dir.clone(),
            engine: args.io_engine,
            test: args.test,
            qd: args.qd,
            seconds: args.seconds,
            size_mib: args.size,
        },
        stop,
    )?;
    if args.json {
        output::stdout(&(serde_json::to_string(&r)? + "\n"))?;
    } else {
        output::stdout(&render_text(&r))?;
    }
    Ok(0)
}
