//! The result of `pgiosim vacuum`: its JSON document, built from the
//! database after the vacuum, and its text report.

use std::fmt::Write as _;

use super::one_shot::{DiskCounters, OneShotRun};
use crate::core::database::{Database, VacuumPhaseStats};
use crate::core::io::PAGE_BYTES;
use crate::settings::Settings;

/// Name of the vacuum result's schema.
pub const VACUUM_SCHEMA: &str = "pgiosim.vacuum";

/// Version of the vacuum result's schema: 2 added the phases, the index,
/// the visibility map and readahead; `seconds` now covers every phase.
pub const VACUUM_SCHEMA_VERSION: u32 = 2;

/// The bloated table and the kernel's readahead, as the flags described
/// them.
#[derive(Debug, Clone)]
pub struct BloatedTable {
    /// Heap pages, and its primary key's.
    pub pages: u64,
    pub index_pages: u64,
    /// Share of the rows dead.
    pub dead_rows: f64,
    /// Share of the heap's pages all-visible.
    pub all_visible: f64,
    /// Share of the pages not all-visible that hold dead rows.
    pub dead_pages: f64,
    pub read_ahead_bytes: u64,
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

impl PhaseResult {
    /// One phase's figures as the core counted them.
    fn new(p: &VacuumPhaseStats) -> PhaseResult {
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
    }
}

impl VacuumResult {
    /// The result of the vacuum `db` ran, of `table`, with `settings`.
    pub fn from_database(
        db: &Database,
        settings: &Settings,
        run: OneShotRun,
        table: &BloatedTable,
    ) -> VacuumResult {
        let c = db.stats().counters;
        let seconds = db.end_time().unwrap_or(0) as f64 / 1e9;
        let v = db.vacuum_summary().clone();
        let phases = Phases {
            scan_heap: PhaseResult::new(&v.phases[0]),
            vacuum_indexes: PhaseResult::new(&v.phases[1]),
            vacuum_heap: PhaseResult::new(&v.phases[2]),
        };
        let all = [
            &phases.scan_heap,
            &phases.vacuum_indexes,
            &phases.vacuum_heap,
        ];
        VacuumResult {
            schema: VACUUM_SCHEMA,
            schema_version: VACUUM_SCHEMA_VERSION,
            mode: run.mode.into(),
            device: run.device,
            partial: run.partial,
            bloat_bytes: table.pages * PAGE_BYTES,
            pages: table.pages,
            index_bytes: table.index_pages * PAGE_BYTES,
            index_pages: table.index_pages,
            dead_rows: table.dead_rows,
            all_visible: table.all_visible,
            dead_pages: table.dead_pages,
            read_ahead_bytes: table.read_ahead_bytes,
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
            disk: run.disk,
            settings: settings.to_json(),
        }
    }
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
    phase_table(&mut report, r);
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

/// The three phases' figures, a row each.
fn phase_table(o: &mut String, r: &VacuumResult) {
    let _ = writeln!(
        o,
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
            o,
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
}
