//! `pgiosim vacuum`: a one-shot VACUUM of a bloated table and its primary
//! key, timed on this disk or on a device model, and what it measured per
//! phase. The vacuum itself (its phases, visibility map, dead-item memory,
//! cost model, ring and the kernel's readahead) is the core's, in
//! [`crate::core::vacuum`]; this is the command around it.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Args;

use crate::args::{DirArgs, OneShotArgs};
use crate::core::database::Database;
use crate::core::io::PAGE_BYTES;
use crate::engine::driver::{self, Ending};
use crate::error::{exit, usage};
use crate::plan::{Mode, RunPlan, Shape, Target, layout_for};
use crate::stop::Stop;
use crate::workload::WorkloadSpec;

/// Name of the vacuum result's schema.
pub const VACUUM_SCHEMA: &str = "pgiosim.vacuum";

/// Rows of the bloated table per heap page (pgbench_accounts' 61).
const ROWS_PER_PAGE: u64 = 61;

/// pgbench_accounts_pkey's pages per heap page: 274 index pages per scale
/// against 1,639.3 heap pages (measured, shared/postgres-facts.md §2).
const INDEX_PER_HEAP: f64 = 274.0 / 1639.3;

/// CPU of one page read or written, µs: the kernel and backend CPU per
/// page I/O measured for pgbench (workloads/tpcb-like.json,
/// cpu_us_per_read and cpu_us_per_write).
const CPU_US_PER_PAGE_IO: f64 = 17.5;

/// Linux's default read_ahead_kb (VM_READAHEAD_PAGES, 128 KiB).
const READ_AHEAD_DEFAULT: &str = "128kB";

/// Version of the vacuum result's schema: 2 added the phases, the index,
/// the visibility map and readahead; `seconds` now covers every phase.
pub const VACUUM_SCHEMA_VERSION: u32 = 2;

/// Flags of `vacuum`.
#[derive(Debug, Clone, Args)]
pub struct VacuumArgs {
    #[command(flatten)]
    pub dirs: DirArgs,
    /// Size of the bloated heap to vacuum (e.g. 10GB).
    #[arg(long, value_name = "SIZE", default_value = "1GB")]
    pub bloat: String,
    /// Size of its primary key, which phase II reads in full [default:
    /// pgbench_accounts_pkey's share, 0.167 of the heap].
    #[arg(long, value_name = "SIZE")]
    pub index: Option<String>,
    /// Share of the heap's rows that are dead (old versions of updated
    /// rows, each with an index entry): 0.2 is where autovacuum starts.
    #[arg(long, value_name = "SHARE", default_value_t = 0.2)]
    pub dead_rows: f64,
    /// Share of the heap's pages all-visible in the visibility map, skipped
    /// in runs of 32 or more [default: the share random updates leave
    /// untouched, e^(-61 × dead-rows)].
    #[arg(long, value_name = "SHARE")]
    pub all_visible: Option<f64>,
    /// Share of the pages not all-visible that hold dead rows [default: 1].
    #[arg(long, value_name = "SHARE")]
    pub dead_pages: Option<f64>,
    /// The kernel's readahead (read_ahead_kb of the disk): sequential reads
    /// reach the disk merged into requests of this size.
    #[arg(long, value_name = "SIZE", default_value = READ_AHEAD_DEFAULT)]
    pub read_ahead: String,
    /// The kernel's page cache the vacuum's reads and writes pass through:
    /// what phase I read is found there by phase III if it fits [default:
    /// room for all of it: the heap, the index and the WAL].
    #[arg(long, value_name = "SIZE")]
    pub os_cache: Option<String>,
    /// PostgreSQL settings (vacuum_cost_limit, vacuum_cost_delay,
    /// shared_buffers, ...), as for `run`.
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    #[command(flatten)]
    pub one: OneShotArgs,
}

/// One phase of the vacuum, as reported.
#[derive(Debug, Clone, serde::Serialize)]
pub struct PhaseResult {
    pub seconds: f64,
    pub pages: u64,
    pub pages_hit: u64,
    pub pages_read: u64,
    pub pages_dirtied: u64,
    pub pages_written: u64,
    /// Read requests the device got (merged by readahead) and their bytes.
    pub device_reads: u64,
    pub device_read_bytes: u64,
    pub wal_bytes: u64,
    pub full_page_images: u64,
    pub cpu_s: f64,
    pub cost_sleep_s: f64,
}

/// The phases, by `pg_stat_progress_vacuum`'s names.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Phases {
    pub scan_heap: PhaseResult,
    pub vacuum_indexes: PhaseResult,
    pub vacuum_heap: PhaseResult,
}

/// /proc/diskstats of the disk under the data file, over the vacuum (on
/// the disk): what reached it, everyone's I/O included.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DiskCounters {
    pub disk: String,
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
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
    pub index_bytes: u64,
    pub index_pages: u64,
    pub dead_rows: f64,
    pub all_visible: f64,
    pub dead_pages: f64,
    pub read_ahead_bytes: u64,
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
    /// Index passes (VACUUM VERBOSE's "index scans").
    pub index_passes: u64,
    pub pages_skipped: u64,
    /// Heap pages with dead items and the items removed.
    pub lpdead_pages: u64,
    pub lpdead_items: u64,
    pub pages_set_all_visible: u64,
    pub vm_pages_dirtied: u64,
    pub device_reads: u64,
    pub device_read_bytes: u64,
    pub cpu_s: f64,
    pub phases: Phases,
    /// On the disk: what reached it (None in the model, or if unreadable).
    pub disk: Option<DiskCounters>,
    pub settings: serde_json::Value,
}

/// Run the vacuum, print its report, write its JSON; exits 130 if
/// interrupted.
pub fn vacuum(args: &VacuumArgs, stop: &Stop) -> Result<i32> {
    let settings = args.one.settings(&args.set)?;
    let b = Bloat::from_args(args)?;
    let spec = bloated_table(&b)?;
    let pages = b.pages;
    let seed = args.one.seed();
    let target = args.one.target(&args.dirs)?;
    // Checked as a default run of one client, which the vacuum replaces.
    let shape = Shape {
        os_cache_bytes: Some(b.os_cache_pages * PAGE_BYTES),
        mode: Mode::Vacuum {
            table: "bloated".into(),
            shape: crate::core::vacuum::VacuumShape {
                index_table: "bloated_pkey".into(),
                all_visible: b.all_visible,
                dead_pages: b.dead_pages,
                dead_per_page: b.dead_per_page(),
                read_ahead_pages: (b.read_ahead_bytes / PAGE_BYTES).max(1),
            },
        },
        ..Shape::new(vec![(spec, 1.0)], 1, seed)
    };
    let plan = RunPlan::new(shape, settings, target)?;
    let (settings, workload, cfg) = (plan.settings, plan.workload, plan.cfg);
    // The data set's lock (on the disk) is held until the vacuum is done.
    // The vacuum's ring reads and its writes: a few in flight.
    let crate::execute::OneShotDevice {
        mode,
        mut dev,
        held: _held,
    } = crate::execute::one_shot_device(
        &plan.target,
        &layout_for(&workload, 1),
        seed,
        8,
        args.one.quiet,
        stop,
        |_| {},
    )?;
    let device = args
        .one
        .device
        .clone()
        .unwrap_or_else(|| dev.name().to_string());
    let disk_before = match &plan.target {
        Target::Disk(disk) => disk_counters(&disk.data.data_path()),
        Target::Model(_) => None,
    };
    let mut db = Database::new(cfg, Box::new(workload));
    let (ending, _) = driver::drive(&mut db, dev.as_mut(), stop, None, &mut |_| {})?;
    let disk = match (&plan.target, disk_before) {
        (Target::Disk(d), Some(before)) => {
            disk_counters(&d.data.data_path()).map(|after| DiskCounters {
                disk: after.disk.clone(),
                reads: after.reads.saturating_sub(before.reads),
                read_bytes: after.read_bytes.saturating_sub(before.read_bytes),
                writes: after.writes.saturating_sub(before.writes),
                write_bytes: after.write_bytes.saturating_sub(before.write_bytes),
            })
        }
        _ => None,
    };
    let c = db.stats().counters;
    let seconds = db.end_time().unwrap_or(0) as f64 / 1e9;
    let v = db.vacuum_summary().clone();
    let phase = |i: usize| {
        let p = &v.phases[i];
        PhaseResult {
            seconds: p.time as f64 / 1e9,
            pages: p.pages,
            pages_hit: p.hits,
            pages_read: p.misses,
            pages_dirtied: p.dirtied,
            pages_written: p.written,
            device_reads: p.device_reads,
            device_read_bytes: p.device_read_bytes,
            wal_bytes: p.wal_bytes,
            full_page_images: p.full_page_images,
            cpu_s: p.cpu as f64 / 1e9,
            cost_sleep_s: p.sleep as f64 / 1e9,
        }
    };
    let phases = Phases {
        scan_heap: phase(0),
        vacuum_indexes: phase(1),
        vacuum_heap: phase(2),
    };
    let all = [
        &phases.scan_heap,
        &phases.vacuum_indexes,
        &phases.vacuum_heap,
    ];
    let r = VacuumResult {
        schema: VACUUM_SCHEMA,
        schema_version: VACUUM_SCHEMA_VERSION,
        mode: mode.into(),
        device,
        partial: ending == Ending::Interrupted,
        bloat_bytes: pages * PAGE_BYTES,
        pages,
        index_bytes: b.index_pages * PAGE_BYTES,
        index_pages: b.index_pages,
        dead_rows: b.dead_rows,
        all_visible: b.all_visible,
        dead_pages: b.dead_pages,
        read_ahead_bytes: b.read_ahead_bytes,
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
        index_passes: v.index_passes,
        pages_skipped: v.skipped,
        lpdead_pages: v.lpdead_pages,
        lpdead_items: v.lpdead_items,
        pages_set_all_visible: v.set_all_visible,
        vm_pages_dirtied: v.vm_pages_dirtied,
        device_reads: all.iter().map(|p| p.device_reads).sum(),
        device_read_bytes: all.iter().map(|p| p.device_read_bytes).sum(),
        cpu_s: all.iter().map(|p| p.cpu_s).sum(),
        phases,
        disk,
        settings: settings.to_json(),
    };
    super::report_and_json(&render(&r), args.one.json.as_deref(), &r)?;
    Ok(if r.partial {
        exit::INTERRUPTED.into()
    } else {
        exit::OK.into()
    })
}

/// The largest `--bloat` and `--index` modelled: 1 TB each. The page
/// cache and the vacuum's sets grow with them (`--index 1TB` took 5.9 GB
/// before the page cache was bounded; 10 TB tripped the core's bound).
pub const TABLE_MAX_BYTES: u64 = 1 << 40;

/// The bloated table as the flags describe it.
struct Bloat {
    pages: u64,
    index_pages: u64,
    dead_rows: f64,
    all_visible: f64,
    dead_pages: f64,
    read_ahead_bytes: u64,
    os_cache_pages: u64,
}

impl Bloat {
    fn from_args(a: &VacuumArgs) -> Result<Bloat> {
        let size = |flag: &str, v: &str| {
            crate::units::parse_memory_bytes(v)
                .filter(|b| *b >= PAGE_BYTES)
                .ok_or_else(|| usage(format!("{flag} {v}: not a size of at least 8kB, e.g. 10GB")))
        };
        let share = |flag: &str, v: f64| {
            if (0.0..=1.0).contains(&v) {
                Ok(v)
            } else {
                Err(usage(format!("{flag} {v}: not a share between 0 and 1")))
            }
        };
        // Bounded before anything is sized from them: the model holds the
        // table's pages in its page cache and its sets.
        let bounded = |flag: &str, v: &str| -> Result<u64> {
            let b = size(flag, v)?;
            if b > TABLE_MAX_BYTES {
                return Err(usage(format!(
                    "{flag} {v}: at most {} is modelled",
                    crate::units::format_memory(TABLE_MAX_BYTES)
                )));
            }
            Ok(b)
        };
        let pages = bounded("--bloat", &a.bloat)? / PAGE_BYTES;
        let index_pages = match &a.index {
            Some(v) => bounded("--index", v)? / PAGE_BYTES,
            None => ((pages as f64 * INDEX_PER_HEAP).round() as u64).max(1),
        };
        let dead_rows = share("--dead-rows", a.dead_rows)?;
        // Updates landing at random leave a page untouched with
        // probability e^(-updates per page).
        let all_visible = match a.all_visible {
            Some(v) => share("--all-visible", v)?,
            None => (-(ROWS_PER_PAGE as f64) * dead_rows).exp(),
        };
        let dead_pages = match a.dead_pages {
            Some(v) => share("--dead-pages", v)?,
            None => 1.0,
        };
        let read_ahead_bytes = crate::units::parse_memory_bytes(&a.read_ahead)
            .filter(|b| *b >= PAGE_BYTES && *b <= 64 << 20)
            .ok_or_else(|| {
                usage(format!(
                    "--read-ahead {}: not a size between 8kB and 64MB, e.g. 128kB",
                    a.read_ahead
                ))
            })?;
        let os_cache_pages = match &a.os_cache {
            Some(v) => {
                crate::units::parse_memory_bytes(v)
                    .ok_or_else(|| usage(format!("--os-cache {v}: not a size, e.g. 16GB")))?
                    / PAGE_BYTES
            }
            // Room for the heap, the index and the WAL the vacuum writes
            // (about a full-page image per page): each is cached as read
            // or written; at most the largest page cache modelled.
            None => (3 * (pages + index_pages)).min(crate::plan::OS_CACHE_MAX_BYTES / PAGE_BYTES),
        };
        crate::plan::check_os_cache("--os-cache", os_cache_pages)?;
        Ok(Bloat {
            os_cache_pages,
            pages,
            index_pages,
            dead_rows,
            all_visible,
            dead_pages,
            read_ahead_bytes,
        })
    }

    /// Dead rows per page that has some.
    fn dead_per_page(&self) -> f64 {
        let with_dead = self.pages as f64 * (1.0 - self.all_visible) * self.dead_pages;
        if with_dead < 1.0 {
            return 0.0;
        }
        self.dead_rows * (self.pages * ROWS_PER_PAGE) as f64 / with_dead
    }
}

/// The workload of one bloated heap and its primary key (a table of the
/// index's pages, so that both have their blocks in the data file).
fn bloated_table(b: &Bloat) -> Result<WorkloadSpec> {
    let spec_text = format!(
        r#"{{"name": "bloated-table", "description": "a bloated heap and its primary key for pgiosim vacuum",
          "source": "pgiosim vacuum: {pages} heap pages, {index} index pages",
          "tables": {{"bloated": {{"rows_per_scale": {rows}, "rows_per_page": {ROWS_PER_PAGE}}},
                      "bloated_pkey": {{"rows_per_scale": {index}, "rows_per_page": 1}}}},
          "transactions": [{{"name": "none", "statements": [{{"sql": "VACUUM bloated"}}]}}],
          "cpu_us_per_statement": 0, "round_trip_us_per_statement": 0,
          "cpu_us_per_read": {CPU_US_PER_PAGE_IO}, "cpu_us_per_write": {CPU_US_PER_PAGE_IO},
          "full_page_image_bytes": 7977}}"#,
        pages = b.pages,
        index = b.index_pages,
        rows = b.pages * ROWS_PER_PAGE
    );
    WorkloadSpec::from_json(&spec_text, "pgiosim vacuum")
}

/// The disk under `file` and its /proc/diskstats counters (Linux; None
/// where they cannot be read).
fn disk_counters(file: &std::path::Path) -> Option<DiskCounters> {
    use std::os::unix::fs::MetadataExt;
    let dev = std::fs::metadata(file).ok()?.dev();
    let (major, minor) = (libc::major(dev), libc::minor(dev));
    let mut sys = std::fs::canonicalize(format!("/sys/dev/block/{major}:{minor}")).ok()?;
    if sys.join("partition").exists() {
        sys.pop();
    }
    let name = sys.file_name()?.to_str()?.to_string();
    let stats = std::fs::read_to_string("/proc/diskstats").ok()?;
    stats.lines().find_map(|l| {
        let f: Vec<&str> = l.split_whitespace().collect();
        (f.len() > 9 && f[2] == name).then(|| DiskCounters {
            disk: name.clone(),
            reads: f[3].parse().unwrap_or(0),
            read_bytes: f[5].parse::<u64>().unwrap_or(0) * 512,
            writes: f[7].parse().unwrap_or(0),
            write_bytes: f[9].parse::<u64>().unwrap_or(0) * 512,
        })
    })
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
        "vacuum of {} ({} pages) and its {} index on {} ({}): {:.1} s, {:.1} MB/s of heap",
        crate::units::format_memory(r.bloat_bytes),
        r.pages,
        crate::units::format_memory(r.index_bytes),
        r.device,
        r.mode,
        r.seconds,
        r.mb_per_s
    );
    let _ = writeln!(
        report,
        "  {:.0}% of rows dead on {} pages ({} dead items), {:.0}% all-visible: {} pages skipped; {} index pass(es); readahead {}",
        r.dead_rows * 100.0,
        r.lpdead_pages,
        r.lpdead_items,
        r.all_visible * 100.0,
        r.pages_skipped,
        r.index_passes,
        crate::units::format_memory(r.read_ahead_bytes)
    );
    let _ = writeln!(
        report,
        "  {:<15} {:>8} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8} {:>7} {:>7}",
        "phase",
        "s",
        "pages",
        "hit",
        "read",
        "dirtied",
        "written",
        "dev reads",
        "dev MB",
        "WAL MB",
        "CPU s"
    );
    for (name, p) in [
        ("I scan heap", &r.phases.scan_heap),
        ("II indexes", &r.phases.vacuum_indexes),
        ("III heap", &r.phases.vacuum_heap),
    ] {
        let _ = writeln!(
            report,
            "  {:<15} {:>8.1} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9} {:>8.0} {:>7.0} {:>7.1}",
            name,
            p.seconds,
            p.pages,
            p.pages_hit,
            p.pages_read,
            p.pages_dirtied,
            p.pages_written,
            p.device_reads,
            p.device_read_bytes as f64 / 1e6,
            p.wal_bytes as f64 / 1e6,
            p.cpu_s
        );
    }
    let _ = writeln!(
        report,
        "  WAL {:.1} MB ({} full-page images), cost-delay sleep {:.1} s, {} pages set all-visible ({} VM pages dirtied)",
        r.wal_bytes as f64 / 1e6,
        r.full_page_images,
        r.cost_sleep_s,
        r.pages_set_all_visible,
        r.vm_pages_dirtied
    );
    if let Some(d) = &r.disk {
        let _ = writeln!(
            report,
            "  reached the disk ({}): {} reads, {:.0} MB; {} writes, {:.0} MB",
            d.disk,
            d.reads,
            d.read_bytes as f64 / 1e6,
            d.writes,
            d.write_bytes as f64 / 1e6
        );
    }
    report
}
