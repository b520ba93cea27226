//! `pgiosim catchup`: a physical standby replaying a WAL backlog already in
//! its pg_wal (after an outage, or a paused replay), timed on this disk or
//! on a device model. The replay itself is the core's: the startup process
//! ([`crate::core::recovery`]) over the buffer pool, page cache,
//! checkpointer (restartpoints) and background writer, fed the workload's
//! transactions as records ([`crate::workload::replay`]). Its course is
//! [`crate::execute::one_shot`], its result [`crate::report::catchup`].

use anyhow::Result;
use clap::Args;

use crate::args::{DirArgs, OneShotArgs, WorkloadChoice};
use crate::core::io::PAGE_BYTES;
use crate::error::usage;
use crate::execute::one_shot::{Job, OneShot, one_shot};
use crate::plan::{Mode, RunShape};
use crate::report::catchup::{Backlog, CatchupResult, render};
use crate::settings::Settings;
use crate::stop::Stop;
use crate::workload::Workload;
use crate::workload::replay::{Replay, ReplayShape};
use crate::workload::{Script, Step};

/// Linux's default read_ahead_kb (VM_READAHEAD_PAGES, 128 KiB).
const READ_AHEAD_DEFAULT: &str = "128kB";

/// Flags of `catchup`.
#[derive(Debug, Clone, Args)]
pub struct CatchupArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// WAL to replay (e.g. 10GB), with postgresql.conf's units.
    #[arg(long, value_name = "SIZE")]
    pub backlog: String,
    #[command(flatten)]
    pub workload: WorkloadChoice,
    /// pgbench scale factor of the data set the backlog was written to.
    #[arg(short, long, default_value_t = 10, value_parser = clap::value_parser!(u64).range(1..=1_000_000))]
    pub scale: u64,
    /// The standby's PostgreSQL settings (shared_buffers, max_wal_size,
    /// checkpoint_timeout, checkpoint_completion_target, bgwriter_*,
    /// full_page_writes, recovery_prefetch, maintenance_io_concurrency,
    /// wal_decode_buffer_size). Repeatable.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// WAL between the primary's checkpoints inside the backlog: each
    /// page's first change after one carries a full-page image, which
    /// replay restores without reading the page [default: max_wal_size /
    /// (1 + checkpoint_completion_target), where a busy primary's
    /// checkpoints come from].
    #[arg(long, value_name = "SIZE")]
    pub checkpoint_every: Option<String>,
    /// The standby's page cache [default: room for the data set and the
    /// backlog; it starts empty, as after a restart].
    #[arg(long, value_name = "SIZE")]
    pub os_cache: Option<String>,
    /// The kernel's readahead (read_ahead_kb of the WAL's disk): the WAL is
    /// read in requests of this size, one ahead of the replay.
    #[arg(long, value_name = "SIZE", default_value = READ_AHEAD_DEFAULT)]
    pub read_ahead: String,
    #[command(flatten)]
    pub one: OneShotArgs,
}

/// Parse a size flag: at least one page.
fn size(flag: &str, v: &str) -> Result<u64> {
    crate::units::parse_memory_bytes(v)
        .filter(|b| *b >= PAGE_BYTES)
        .ok_or_else(|| usage(format!("{flag} {v}: not a size of at least 8kB, e.g. 10GB")))
}

/// The largest `--backlog` modelled: 1 TB of WAL. The replay runs through
/// every record of it (a GB takes seconds), and a default page cache sized
/// from 100 TB tripped the core's bound.
pub const BACKLOG_MAX_BYTES: u64 = 1 << 40;

/// `--backlog`: at least a page, at most [`BACKLOG_MAX_BYTES`].
fn backlog_bytes(v: &str) -> Result<u64> {
    let backlog = size("--backlog", v)?;
    if backlog > BACKLOG_MAX_BYTES {
        return Err(usage(format!(
            "--backlog {v}: at most {} is modelled",
            crate::units::format_memory(BACKLOG_MAX_BYTES)
        )));
    }
    Ok(backlog)
}

/// `--read-ahead`: 8kB to 64MB, in whole pages.
fn read_ahead_bytes(v: &str) -> Result<u64> {
    let bytes = crate::units::parse_memory_bytes(v)
        .filter(|b| *b >= PAGE_BYTES && *b <= 64 << 20)
        .ok_or_else(|| {
            usage(format!(
                "--read-ahead {v}: not a size between 8kB and 64MB, e.g. 128kB"
            ))
        })?;
    Ok(bytes / PAGE_BYTES * PAGE_BYTES)
}

/// WAL between the primary's checkpoints: given, or as
/// CheckPointSegments has it (a checkpoint is requested when this much WAL
/// was written since the last one).
fn checkpoint_every(args: &CatchupArgs, settings: &Settings) -> Result<u64> {
    Ok(match &args.checkpoint_every {
        Some(v) => size("--checkpoint-every", v)?,
        None => {
            ((settings.max_wal_size_bytes as f64) / (1.0 + settings.checkpoint_completion_target))
                as u64
        }
    })
}

/// The page cache: given, or room for the data set and the backlog, at
/// most the largest page cache modelled.
fn os_cache_bytes(args: &CatchupArgs, data_bytes: u64, backlog: u64) -> Result<u64> {
    Ok(match &args.os_cache {
        Some(v) => crate::units::parse_memory_bytes(v)
            .ok_or_else(|| usage(format!("--os-cache {v}: not a size, e.g. 16GB")))?,
        None => (data_bytes.saturating_add(backlog)).min(crate::plan::OS_CACHE_MAX_BYTES),
    })
}

/// Replay the backlog, print the report, write its JSON; exits 130 if
/// interrupted.
pub fn catchup(args: &CatchupArgs, stop: &Stop) -> Result<i32> {
    let settings = args.one.settings(&args.set)?;
    let backlog = backlog_bytes(&args.backlog)?;
    let read_ahead = read_ahead_bytes(&args.read_ahead)?;
    let checkpoint_every = checkpoint_every(args, &settings)?;
    let seed = args.one.seed();
    let parts = args.workload.parts()?;
    let probe =
        crate::workload::Script::mix(&parts, args.scale).map_err(crate::error::bad_input)?;
    let target = args.one.target(&args.dirs)?;
    let data_bytes = probe.data_blocks() * PAGE_BYTES;
    let os_cache_bytes = os_cache_bytes(args, data_bytes, backlog)?;
    let shape = RunShape {
        os_cache_bytes: Some(os_cache_bytes),
        mode: Mode::Catchup {
            backlog_bytes: backlog,
            read_ahead_bytes: read_ahead,
        },
        ..RunShape::new(parts, args.scale, seed)
    };
    let o = OneShot {
        shape,
        settings,
        target,
        device: args.one.device.clone(),
        quiet: args.one.quiet,
    };
    let backlog = Backlog {
        scale: args.scale,
        bytes: backlog,
        checkpoint_every,
        read_ahead,
        os_cache_bytes,
    };
    let r = one_shot(
        o,
        stop,
        |script, settings, cfg| {
            if !writes_wal(probe, seed) {
                return Err(usage(format!(
                    "workload {}: its transactions write no WAL, so there is nothing to replay",
                    script.name()
                )));
            }
            let prefetch = matches!(&cfg.mode, crate::core::config::Mode::Catchup(r) if r.prefetch);
            Ok(Job {
                workload: Box::new(replay(script, settings, checkpoint_every, prefetch)),
                // The WAL window, the page read, prefetches, the writers.
                max_in_flight: 4 + settings.maintenance_io_concurrency.min(256),
                // The backlog and the data are read from the disk, as
                // after a restart: nothing of them in the page cache.
                cold_cache: true,
            })
        },
        |db, settings, run| CatchupResult::from_database(db, settings, run, &backlog),
    )?;
    super::print_one_shot(&render(&r), args.one.json.as_deref(), &r, r.partial)
}

/// The workload's transactions as the records the standby replays.
fn replay(script: Script, settings: &Settings, checkpoint_every: u64, prefetch: bool) -> Replay {
    let (record_cpu, fpi_cpu) = script.replay_cpu();
    Replay::new(
        Box::new(script),
        ReplayShape {
            record_cpu,
            fpi_cpu,
            checkpoint_every,
            full_page_writes: settings.full_page_writes,
            lookahead_bytes: if prefetch {
                settings.wal_decode_buffer_size_bytes
            } else {
                0
            },
        },
    )
}

/// Whether the workload's transactions write any WAL (a replay of
/// select-only would never end).
fn writes_wal(mut probe: Script, seed: u64) -> bool {
    use rand::SeedableRng;
    let mut rng = crate::core::SimRng::seed_from_u64(seed);
    let mut steps = Vec::new();
    (0..1000).any(|_| {
        probe.next_transaction(&mut rng, &mut steps);
        steps.iter().any(|s| match *s {
            Step::Modify { wal_bytes, .. }
            | Step::Extend { wal_bytes, .. }
            | Step::Commit { wal_bytes } => wal_bytes > 0,
            _ => false,
        })
    })
}
