//! `pgiosim vacuum`: a one-shot VACUUM of a bloated table and its primary
//! key, timed on this disk or on a device model, and what it measured per
//! phase. The vacuum itself (its phases, visibility map, dead-item memory,
//! cost model, ring and the kernel's readahead) is the core's, in
//! [`crate::core::vacuum`]; its course is [`crate::execute::one_shot`], its
//! result [`crate::report::vacuum`].

use anyhow::Result;
use clap::Args;

use crate::args::{DirArgs, OneShotArgs};
use crate::core::io::PAGE_BYTES;
use crate::error::usage;
use crate::execute::one_shot::{Job, OneShot, one_shot};
use crate::plan::{Mode, RunShape};
use crate::report::vacuum::{BloatedTable, VacuumResult, render};
use crate::stop::Stop;
use crate::workload::WorkloadSpec;

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

/// Run the vacuum, print its report, write its JSON; exits 130 if
/// interrupted.
pub fn vacuum(args: &VacuumArgs, stop: &Stop) -> Result<i32> {
    let settings = args.one.settings(&args.set)?;
    let b = Bloat::from_args(args)?;
    let spec = bloated_table(&b.table)?;
    let seed = args.one.seed();
    let target = args.one.target(&args.dirs)?;
    let t = &b.table;
    // Checked as a default run of one client, which the vacuum replaces.
    let shape = RunShape {
        os_cache_bytes: Some(b.os_cache_pages * PAGE_BYTES),
        mode: Mode::Vacuum {
            table: "bloated".into(),
            shape: crate::core::vacuum::VacuumShape {
                index_table: "bloated_pkey".into(),
                all_visible: t.all_visible,
                dead_pages: t.dead_pages,
                dead_per_page: dead_per_page(t),
                read_ahead_pages: (t.read_ahead_bytes / PAGE_BYTES).max(1),
            },
        },
        ..RunShape::new(vec![(spec, 1.0)], 1, seed)
    };
    let o = OneShot {
        shape,
        settings,
        target,
        device: args.one.device.clone(),
        quiet: args.one.quiet,
    };
    let r = one_shot(
        o,
        stop,
        |script, _, _| {
            Ok(Job {
                workload: Box::new(script),
                // The vacuum's ring reads and its writes: a few in flight.
                max_in_flight: 8,
                cold_cache: false,
            })
        },
        |db, settings, run| VacuumResult::from_database(db, settings, run, t),
    )?;
    super::print_one_shot(&render(&r), args.one.json.as_deref(), &r, r.partial)
}

/// The largest `--bloat` and `--index` modelled: 1 TB each. The page
/// cache and the vacuum's sets grow with them (`--index 1TB` took 5.9 GB
/// before the page cache was bounded; 10 TB tripped the core's bound).
pub const TABLE_MAX_BYTES: u64 = 1 << 40;

/// The bloated table as the flags describe it, and the page cache.
struct Bloat {
    table: BloatedTable,
    os_cache_pages: u64,
}

/// A table's size from `flag`: at least a page, and bounded before
/// anything is sized from it (the model holds the table's pages in its
/// page cache and its sets).
fn table_bytes(flag: &str, v: &str) -> Result<u64> {
    let b = crate::units::parse_memory_bytes(v)
        .filter(|b| *b >= PAGE_BYTES)
        .ok_or_else(|| usage(format!("{flag} {v}: not a size of at least 8kB, e.g. 10GB")))?;
    if b > TABLE_MAX_BYTES {
        return Err(usage(format!(
            "{flag} {v}: at most {} is modelled",
            crate::units::format_memory(TABLE_MAX_BYTES)
        )));
    }
    Ok(b)
}

/// A share from `flag`, between 0 and 1.
fn share(flag: &str, v: f64) -> Result<f64> {
    if (0.0..=1.0).contains(&v) {
        Ok(v)
    } else {
        Err(usage(format!("{flag} {v}: not a share between 0 and 1")))
    }
}

impl Bloat {
    fn from_args(a: &VacuumArgs) -> Result<Bloat> {
        let pages = table_bytes("--bloat", &a.bloat)? / PAGE_BYTES;
        let index_pages = match &a.index {
            Some(v) => table_bytes("--index", v)? / PAGE_BYTES,
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
            table: BloatedTable {
                pages,
                index_pages,
                dead_rows,
                all_visible,
                dead_pages,
                read_ahead_bytes,
            },
            os_cache_pages,
        })
    }
}

/// Dead rows per page that has some.
fn dead_per_page(t: &BloatedTable) -> f64 {
    let with_dead = t.pages as f64 * (1.0 - t.all_visible) * t.dead_pages;
    if with_dead < 1.0 {
        return 0.0;
    }
    t.dead_rows * (t.pages * ROWS_PER_PAGE) as f64 / with_dead
}

/// The workload of one bloated heap and its primary key (a table of the
/// index's pages, so that both have their blocks in the data file).
fn bloated_table(b: &BloatedTable) -> Result<WorkloadSpec> {
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
