//! `pgiosim vacuum`: a one-shot VACUUM of a bloated table, timed on this
//! disk or on a device model, and what it measured. The vacuum itself (its
//! cost model, ring and pruning) is the core's, in [`crate::core::vacuum`];
//! this is the command around it.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use anyhow::Result;
use clap::Args;

use crate::cli::DirArgs;
use crate::core::database::Database;
use crate::core::io::PAGE_BYTES;
use crate::datafiles;
use crate::device::model::DeviceModel;
use crate::engine::Device;
use crate::engine::driver::{self, Ending};
use crate::engine::sim::SimDevice;
use crate::error::{exit, usage};
use crate::output::{self, progress_bar_wanted, write_json};
use crate::plan::{
    Disk, EngineChoice, RunPlan, Shape, Target, layout_for, load_profile, resolve_settings,
};
use crate::workload::WorkloadSpec;

/// Name of the vacuum result's schema.
pub const VACUUM_SCHEMA: &str = "pgiosim.vacuum";

/// Rows of the bloated table per heap page (pgbench_accounts' 61).
const ROWS_PER_PAGE: u64 = 61;

/// Flags of `vacuum`.
#[derive(Debug, Clone, Args)]
pub struct VacuumArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// Size of the bloated heap to vacuum (e.g. 10GB).
    #[arg(long, value_name = "SIZE", default_value = "1GB")]
    pub bloat: String,
    /// Model it on this device profile instead of running it on the disk.
    #[arg(long, value_name = "NAME|FILE")]
    pub device: Option<String>,
    /// PostgreSQL settings (vacuum_cost_limit, vacuum_cost_delay,
    /// shared_buffers, ...), as for `run`.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Read settings from a postgresql.conf.
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// I/O engine (on the disk).
    #[arg(long, value_enum, default_value_t = EngineChoice::Auto)]
    pub io_engine: EngineChoice,
    /// Use the kernel page cache instead of O_DIRECT (on the disk).
    #[arg(long)]
    pub buffered: bool,
    /// Write the result as JSON to FILE ("-" for standard output).
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Seed of the random choices.
    #[arg(long)]
    pub seed: Option<u64>,
    /// Print nothing but the result.
    #[arg(short, long)]
    pub quiet: bool,
}

/// What `pgiosim vacuum` measured.
#[derive(Debug, Clone, serde::Serialize)]
pub struct VacuumResult {
    pub schema: &'static str,
    pub schema_version: u32,
    /// "run" or "model".
    pub mode: String,
    pub device: String,
    pub partial: bool,
    pub bloat_bytes: u64,
    pub pages: u64,
    pub seconds: f64,
    /// Heap scanned per second.
    pub mb_per_s: f64,
    pub pages_read: u64,
    pub pages_hit: u64,
    pub pages_dirtied: u64,
    pub pages_written: u64,
    pub wal_bytes: u64,
    pub full_page_images: u64,
    pub cost_sleep_s: f64,
    pub settings: serde_json::Value,
}

/// Run the vacuum, print its report, write its JSON; exits 130 if
/// interrupted.
pub fn vacuum(args: &VacuumArgs, stop: &Arc<AtomicBool>) -> Result<i32> {
    let settings = resolve_settings(args.config.as_deref(), &args.set, args.quiet)?;
    let (spec, pages) = bloated_table(&args.bloat)?;
    let seed = args.seed.unwrap_or_else(rand::random);
    let target = match &args.device {
        Some(d) => Target::Model(load_profile(d)?),
        None => Target::Disk(Disk {
            data: args.dirs.data_dir(),
            io_engine: args.io_engine,
            buffered: args.buffered,
            emulate: None,
            standby_root: args.dirs.dir.clone(),
        }),
    };
    // The core's configuration of a default run of one client, whose
    // clients the vacuum then replaces.
    let plan = RunPlan::new(Shape::new(vec![(spec, 1.0)], 1, seed), settings, target)?;
    let (settings, workload, mut cfg) = (plan.settings, plan.workload, plan.cfg);
    cfg.clients = 0;
    cfg.duration = None;
    cfg.vacuum_table = Some("bloated".into());
    // The data set's lock (on the disk) is held until the vacuum is done.
    type Chosen = (
        &'static str,
        Box<dyn Device>,
        Option<datafiles::DataSetLock>,
    );
    let (mode, mut dev, _held): Chosen = match &plan.target {
        Target::Model(profile) => (
            "model",
            Box::new(SimDevice::new(DeviceModel::new(profile, seed))),
            None,
        ),
        Target::Disk(disk) => {
            let layout = layout_for(&workload, 1);
            let held = datafiles::lock(&disk.data)?;
            datafiles::prepare_locked(
                &disk.data,
                &layout,
                progress_bar_wanted(args.quiet),
                &held,
                stop,
            )?;
            // The vacuum's ring reads and its writes: a few in flight.
            let dev = crate::execute::open_device(disk, &layout, &[], 8, true)?;
            ("run", dev, Some(held))
        }
    };
    let device = args
        .device
        .clone()
        .unwrap_or_else(|| dev.name().to_string());
    let mut db = Database::new(cfg, Box::new(workload));
    let (ending, _) = driver::drive(&mut db, dev.as_mut(), stop, None, &mut |_| {})?;
    let c = db.stats().counters;
    let seconds = db.end_time().unwrap_or(0) as f64 / 1e9;
    let r = VacuumResult {
        schema: VACUUM_SCHEMA,
        schema_version: 1,
        mode: mode.into(),
        device,
        partial: ending == Ending::Interrupted,
        bloat_bytes: pages * PAGE_BYTES,
        pages,
        seconds,
        mb_per_s: if seconds > 0.0 {
            c.vacuum_pages as f64 * PAGE_BYTES as f64 / 1e6 / seconds
        } else {
            0.0
        },
        pages_read: c.vacuum_reads,
        pages_hit: c.vacuum_hits,
        pages_dirtied: c.vacuum_dirtied,
        pages_written: c.vacuum_writes,
        wal_bytes: db.wal_counters().bytes,
        full_page_images: c.full_page_images,
        cost_sleep_s: c.vacuum_sleep_ns as f64 / 1e9,
        settings: settings.to_json(),
    };
    output::report(
        &render(&r),
        args.json.as_deref().is_some_and(output::is_stdout),
    )?;
    if let Some(path) = &args.json {
        write_json(path, &r)?;
    }
    Ok(if r.partial {
        exit::INTERRUPTED.into()
    } else {
        exit::OK.into()
    })
}

/// The workload of one bloated heap of `bloat` (a size), every page of it
/// holding dead tuples, and its pages.
fn bloated_table(bloat: &str) -> Result<(WorkloadSpec, u64)> {
    let bytes = crate::units::parse_memory_bytes(bloat)
        .filter(|b| *b >= PAGE_BYTES)
        .ok_or_else(|| {
            usage(format!(
                "--bloat {bloat}: not a size of at least 8kB, e.g. 10GB"
            ))
        })?;
    let pages = bytes / PAGE_BYTES;
    let spec_text = format!(
        r#"{{"name": "bloated-table", "description": "a bloated heap for pgiosim vacuum",
          "source": "pgiosim vacuum --bloat {bloat}: every page holds dead tuples",
          "tables": {{"bloated": {{"rows_per_scale": {rows}, "rows_per_page": {ROWS_PER_PAGE}}}}},
          "transactions": [{{"name": "none", "statements": [{{"sql": "VACUUM bloated"}}]}}],
          "cpu_us_per_statement": 0, "round_trip_us_per_statement": 0, "full_page_image_bytes": 7977}}"#,
        rows = pages * ROWS_PER_PAGE
    );
    Ok((
        WorkloadSpec::from_json(&spec_text, "pgiosim vacuum")?,
        pages,
    ))
}

/// The vacuum's text report.
pub fn render(r: &VacuumResult) -> String {
    let mut report = String::new();
    if r.partial {
        let _ = writeln!(
            report,
            "*** partial result: interrupted after {:.1} s ***",
            r.seconds
        );
    }
    let _ = writeln!(
        report,
        "vacuum of {} ({} pages) on {} ({}): {:.1} s, {:.1} MB/s",
        crate::units::format_memory(r.bloat_bytes),
        r.pages,
        r.device,
        r.mode,
        r.seconds,
        r.mb_per_s
    );
    let _ = writeln!(
        report,
        "  pages read {}, found in shared buffers {}, dirtied {}, written by vacuum {}",
        r.pages_read, r.pages_hit, r.pages_dirtied, r.pages_written
    );
    let _ = writeln!(
        report,
        "  WAL {:.1} MB ({} full-page images), cost-delay sleep {:.1} s",
        r.wal_bytes as f64 / 1e6,
        r.full_page_images,
        r.cost_sleep_s
    );
    report
}
