//! The sources: where each figure of the captured workload comes from, in
//! the workload file's `sources`.

use std::collections::BTreeMap;

use super::mix::{MAX_PER_KIND, StatementMix};
use super::observed::Observed;
use super::reference::{CPU_FIELDS, reference, source as reference_source};
use super::settings_file::setting;
use super::{Figures, Observation, num, per};

/// The notes, by figure: what was observed and how it became the workload.
/// `wal_note` and `keys_note` say how the WAL and the keys were chosen.
/// The notes, by figure: what was observed and how it became the workload.
/// `wal_note` and `keys_note` say how the WAL and the keys were chosen.
pub(super) fn sources(
    obs: &Observation,
    observed: &Observed,
    statement_mix: &StatementMix,
    wal_note: &str,
    keys_note: &str,
    clients: u64,
    conf_name: &str,
) -> BTreeMap<String, String> {
    let mut notes = Notes::default();
    note_activity(&mut notes, obs, observed, clients);
    note_wal(&mut notes, obs, observed);
    note_pages_and_rows(&mut notes, obs, observed, statement_mix);
    notes.add(
        "settings",
        format!("pg_settings of the server, written to {conf_name}"),
    );
    notes.add("wal", wal_note.to_string());
    notes.add("keys", keys_note.to_string());
    note_unobserved(&mut notes, obs);
    notes.0
}

/// The notes by figure name; sorted, so the order they are added in does not show.
#[derive(Default)]
struct Notes(BTreeMap<String, String>);

impl Notes {
    fn add(&mut self, figure: &str, note: String) {
        self.0.insert(figure.to_string(), note);
    }
}

/// The interval, the transactions, the clients and the database's size.
fn note_activity(notes: &mut Notes, obs: &Observation, observed: &Observed, clients: u64) {
    let d = &obs.delta;
    let n = observed.commits;
    let tps = observed.figures.tps;
    notes.add(
        "observed.interval",
        format!(
            "{:.2} s from {} (server clock){}",
            d.seconds,
            obs.started_at,
            if obs.partial {
                "; interrupted before the end of -T"
            } else {
                ""
            }
        ),
    );
    notes.add(
        "observed.transactions",
        format!(
            "{} tps: {} commits (pg_stat_database.xact_commit delta {} less the capture's own {}) over {:.2} s; {} rollbacks",
            num(tps, 1),
            num(n, 0),
            num(d.xact_commit as f64, 0),
            obs.own_commits.min(d.xact_commit),
            d.seconds,
            num(d.xact_rollback as f64, 0)
        ),
    );
    notes.add(
        "observed.clients",
        format!(
            "{} client connections to the database at most (pg_stat_activity, the capture's own excluded), {:.1} active on average: replay with -c {clients}",
            obs.clients, obs.active_mean
        ),
    );
    notes.add(
        "observed.database_size",
        format!(
            "{} B (pg_database_size): the data table at -s 1{}",
            num(obs.db_size_bytes as f64, 0),
            obs.sizes.map_or(String::new(), |s| format!(
                "; user tables {} B in heaps and {} B in indexes",
                num(s.heap_bytes as f64, 0),
                num(s.index_bytes as f64, 0)
            ))
        ),
    );
}

/// The WAL: its bytes, full-page images, records, writes and syncs.
fn note_wal(notes: &mut Notes, obs: &Observation, observed: &Observed) {
    let d = &obs.delta;
    let figures = &observed.figures;
    let n = observed.commits;
    let wal_bytes = observed.wal_bytes;
    let wal_bytes_from = &figures.wal_bytes_from;
    let wal_per_tx = figures.wal_bytes_per_tx;
    let wal_records_bytes = figures.wal_bytes_without_fpi_per_tx;
    let fpi_bytes = reference().full_page_image_bytes;
    notes.add(
        "observed.wal_bytes",
        format!(
            "{} B/tx: {} B ({wal_bytes_from} delta) / {} commits; {} B/tx without full-page images",
            num(wal_per_tx, 1),
            num(wal_bytes as f64, 0),
            num(n, 0),
            num(wal_records_bytes, 1)
        ),
    );
    notes.add(
        "observed.full_page_images",
        match d.wal_fpi {
            Some(f) => format!(
                "{:.3} per transaction: {} (pg_stat_wal.wal_fpi delta), estimated at {fpi_bytes} B each; pgiosim makes its own after each checkpoint, so they are not in the records below",
                per(f, n),
                num(f as f64, 0)
            ),
            None => format!(
                "unknown: PostgreSQL {} has no pg_stat_wal (new in 14); the WAL bytes above include them, and pgiosim adds its own on top",
                obs.version
            ),
        },
    );
    if let Some(r) = d.wal_records {
        notes.add(
            "observed.wal_records",
            format!(
                "{:.2} per transaction (pg_stat_wal.wal_records delta {})",
                per(r, n),
                num(r as f64, 0)
            ),
        );
    }
    notes.add(
        "observed.wal_writes_syncs",
        match (d.wal_writes, d.wal_syncs) {
            (Some(w), Some(s)) => format!(
                "{:.3} WAL writes and {:.3} WAL syncs per transaction ({}); wal_buffers_full {}",
                per(w, n),
                per(s, n),
                obs.wal_io_source,
                d.wal_buffers_full
                    .map_or("unknown".into(), |b| num(b as f64, 0))
            ),
            _ => obs.wal_io_source.clone(),
        },
    );
}

/// Blocks read and hit, tuples and statements, HOT updates, buffers written and pg_stat_io.
fn note_pages_and_rows(
    notes: &mut Notes,
    obs: &Observation,
    observed: &Observed,
    statement_mix: &StatementMix,
) {
    let d = &obs.delta;
    let figures = &observed.figures;
    let n = observed.commits;
    let hit_ratio = figures.hit_ratio;
    let (hot_share, non_hot) = (observed.hot_share, observed.non_hot);
    notes.add(
        "observed.blocks",
        format!(
            "{:.2} blocks read and {:.2} hit per transaction (pg_stat_database blks_read, blks_hit); hit ratio {}; a read is a shared-buffer miss, which the OS page cache may have served",
            figures.blks_read_per_tx,
            figures.blks_hit_per_tx,
            hit_ratio.map_or("n/a".into(), |h| format!("{:.2}%", h * 100.0))
        ),
    );
    notes.add("observed.tuples", tuples_note(figures, statement_mix));
    notes.add(
        "observed.hot_updates",
        match hot_share {
            Some(h) => format!(
                "{:.1}% of user-table updates were HOT (pg_stat_user_tables n_tup_hot_upd {} of n_tup_upd {}): non_hot_fraction {:.3}",
                h * 100.0,
                num(d.n_tup_hot_upd as f64, 0),
                num(d.n_tup_upd as f64, 0),
                non_hot
            ),
            None => "no user-table updates".into(),
        },
    );
    notes.add(
        "observed.checkpoints",
        format!(
            "{} timed and {} requested checkpoints; {:.3} buffers written by checkpoints, {:.3} by the bgwriter{} per transaction ({})",
            d.checkpoints_timed,
            d.checkpoints_requested,
            figures.buffers_checkpoint_per_tx,
            figures.buffers_clean_per_tx,
            figures
                .buffers_backend_per_tx
                .map_or(String::new(), |b| format!(" and {b:.3} by backends")),
            obs.checkpoint_source
        ),
    );
    if let Some(io) = &d.io {
        notes.add(
            "observed.pg_stat_io",
            format!(
                "client backends, relations, per transaction: {:.3} reads, {:.3} hits, {:.3} writes, {:.3} extends, {:.3} evictions, {:.3} fsyncs",
                per(io.reads, n),
                per(io.hits, n),
                per(io.writes, n),
                per(io.extends, n),
                per(io.evictions, n),
                per(io.fsyncs, n)
            ),
        );
    }
}

/// The tuples per transaction, the statements observed and the statements replayed.
fn tuples_note(figures: &Figures, statement_mix: &StatementMix) -> String {
    let StatementMix {
        observed: mix,
        made,
        capped,
        read_range_rows,
        reads_from,
        ..
    } = statement_mix;
    format!(
        "per transaction: {:.3} fetched, {:.3} returned, {:.3} inserted, {:.3} updated, {:.3} deleted (pg_stat_database tup_*); observed statements: {:.3} updates, {:.3} reads{} ({reads_from}), {:.3} deletes, {:.3} inserts; replayed: {:.3} updates, {:.3} reads, {:.3} deletes, {:.3} inserts{}",
        figures.tup_fetched_per_tx,
        figures.tup_returned_per_tx,
        figures.tup_inserted_per_tx,
        figures.tup_updated_per_tx,
        figures.tup_deleted_per_tx,
        mix.updates,
        mix.reads,
        read_range_rows.map_or(String::new(), |r| format!(" of {r} rows each")),
        mix.deletes,
        mix.inserts,
        made.updates,
        made.reads,
        made.deletes,
        made.inserts,
        if *capped {
            format!("; capped at {MAX_PER_KIND} statements of a kind per transaction")
        } else {
            String::new()
        }
    )
}

/// The figures statistics views do not show: taken from tpcb-like.json or PostgreSQL's own sizes.
fn note_unobserved(notes: &mut Notes, obs: &Observation) {
    let fpi_bytes = reference().full_page_image_bytes;
    // The CPU as tpcb-like.json splits it; capture replaces the statements'
    // share with the server's own CPU where it can read it.
    for field in CPU_FIELDS {
        let replaced = if field == "cpu_us_per_statement" {
            "; set it from the server's CPU time per transaction if known"
        } else {
            ""
        };
        notes.add(
            field,
            format!(
                "not visible in statistics views: as tpcb-like.json, {}{replaced}",
                reference_source(field)
            ),
        );
    }
    notes.add(
        "round_trip_us_per_statement",
        "not visible in statistics views: pgbench's measured local unix-socket round trip (tpcb-like.json)".into(),
    );
    notes.add(
        "full_page_image_bytes",
        format!(
            "pg_stat_wal counts images, not bytes: {fpi_bytes} B, the average measured on pgbench (8192 B less the page's hole){}",
            setting(obs, "wal_compression")
                .filter(|s| s.setting != "off")
                .map_or(String::new(), |s| format!(
                    "; the server has wal_compression = {}, so its images are smaller",
                    s.setting
                ))
        ),
    );
    notes.add(
        "index_insert_wal_bytes",
        "Btree/INSERT_LEAF of a non-HOT update, as tpcb-like.json".into(),
    );
    notes.add(
        "checkpoint_record_bytes",
        "XLOG/CHECKPOINT_ONLINE record size in PostgreSQL 15".into(),
    );
    if let Some(bs) = setting(obs, "block_size")
        && bs.setting != "8192"
    {
        notes.add(
            "block_size",
            format!(
                "the server uses {} B pages; pgiosim models 8192 B pages",
                bs.setting
            ),
        );
    }
}
