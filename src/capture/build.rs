//! From observed counter deltas to a workload spec and a postgresql.conf:
//! pure, so every rule here is unit-tested without a server.
//!
//! The shape it writes:
//! * One table, `data`, whose rows at `-s 1` fill the observed database size
//!   (heap at the observed rows per page, plus a btree on the key), and an
//!   append-only `inserted` table when rows were inserted.
//! * Transactions whose statements are the observed rows updated, deleted,
//!   inserted and fetched per transaction (`pg_stat_database`). Averages that
//!   are not whole numbers become a weighted mix of transaction types (for
//!   1.3 updates per transaction: 70% with 1 update, 30% with 2), so the
//!   mean of every kind is the observed one.
//! * WAL bytes per transaction without full-page images (`pg_stat_wal`:
//!   wal_bytes minus wal_fpi full-page images): standard record sizes on the
//!   statements, the rest on the commit. pgiosim adds full-page images
//!   itself, after each of its checkpoints, so they are not in the records.
//! * Keys drawn uniformly, or exponentially skewed when the observed buffer
//!   hit ratio is higher than uniform access over the database could give with
//!   the server's shared_buffers.
//! * A range scan when the observed pages touched per transaction are well
//!   above what the point accesses touch.
//!
//! One step a file, in the order `derive` takes them: the observed figures
//! (observed), the statement mix (mix), the data table (tables), the WAL
//! (wal), the keys (keys), the transactions (transactions), the sources
//! (sources), the workload file with its CPU figures (workload) and the
//! settings file (settings_file). What statistics views do not show comes
//! from the built-in tpcb-like workload (reference).

mod keys;
mod mix;
mod observed;
mod reference;
mod settings_file;
mod sources;
mod tables;
mod transactions;
mod wal;
mod workload;

use anyhow::Result;
use serde::Serialize;

use super::sample::Delta;
use crate::workload::{Script, WorkloadSpec};
pub use settings_file::INFO_SETTINGS;
use settings_file::conf_text;
use transactions::StatementParams;
use workload::Parts;

/// pgiosim's data page size, and PostgreSQL's default `BLCKSZ`.
const PAGE: f64 = 8192.0;

/// A row of `pg_settings`.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ServerSetting {
    pub name: String,
    pub setting: String,
    pub unit: String,
}

/// Rows and sizes of the user tables (`pg_stat_user_tables`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct TableSizes {
    pub live_rows: i64,
    pub heap_bytes: i64,
    pub index_bytes: i64,
}

/// Everything one capture observed.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    pub version_num: u32,
    /// `server_version`, e.g. "15.18 (Debian 15.18-0+deb12u1)".
    pub version: String,
    pub database: String,
    /// Where the server was reached ("socket /run/x/.s.PGSQL.5432").
    pub server: String,
    /// Server clock at the start of the interval.
    pub started_at: String,
    pub delta: Delta,
    /// Transactions the capture itself committed inside the interval.
    pub own_commits: i64,
    pub db_size_bytes: i64,
    pub sizes: Option<TableSizes>,
    pub settings: Vec<ServerSetting>,
    /// Most other client backends connected to the database at a sample.
    pub clients: i64,
    /// Mean of the non-idle ones over the samples.
    pub active_mean: f64,
    pub wal_io_source: String,
    pub checkpoint_source: String,
    /// Interrupted before the end of -T.
    pub partial: bool,
}

/// The observed figures, per transaction where that makes sense.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Figures {
    pub server_version: String,
    pub server_version_num: u32,
    pub database: String,
    pub started_at: String,
    pub seconds: f64,
    pub partial: bool,
    pub commits: i64,
    pub rollbacks: i64,
    pub tps: f64,
    pub wal_bytes_per_tx: f64,
    /// "pg_stat_wal.wal_bytes" or "pg_current_wal_lsn()" (13).
    pub wal_bytes_from: String,
    pub wal_fpi_per_tx: Option<f64>,
    pub wal_records_per_tx: Option<f64>,
    pub wal_bytes_without_fpi_per_tx: f64,
    pub wal_writes_per_tx: Option<f64>,
    pub wal_syncs_per_tx: Option<f64>,
    pub wal_buffers_full: Option<i64>,
    pub blks_read_per_tx: f64,
    pub blks_hit_per_tx: f64,
    pub hit_ratio: Option<f64>,
    pub tup_fetched_per_tx: f64,
    pub tup_returned_per_tx: f64,
    pub tup_inserted_per_tx: f64,
    pub tup_updated_per_tx: f64,
    pub tup_deleted_per_tx: f64,
    /// HOT share of updates in user tables.
    pub hot_update_share: Option<f64>,
    pub checkpoints: i64,
    pub buffers_checkpoint_per_tx: f64,
    pub buffers_clean_per_tx: f64,
    pub buffers_backend_per_tx: Option<f64>,
    pub io_reads_per_tx: Option<f64>,
    pub io_writes_per_tx: Option<f64>,
    pub io_extends_per_tx: Option<f64>,
    pub clients: i64,
    pub active_clients_mean: f64,
    pub db_size_bytes: i64,
    /// The server's CPU per transaction, µs, and where it was read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_us_per_tx: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_from: Option<String>,
}

/// What `capture` writes.
#[derive(Debug, Clone)]
pub struct Captured {
    /// The workload file's text (validated).
    pub spec_json: String,
    pub spec: WorkloadSpec,
    /// The postgresql.conf text.
    pub conf: String,
    pub figures: Figures,
    /// The `-s` and `-c` to replay with.
    pub scale: u64,
    pub clients: u64,
}

/// Format with thousands separators and `digits` decimals.
fn num(x: f64, digits: usize) -> String {
    let s = format!("{:.*}", digits, x.abs());
    let (int, frac) = match s.split_once('.') {
        Some((i, f)) => (i.to_string(), format!(".{f}")),
        None => (s.clone(), String::new()),
    };
    let mut grouped = String::new();
    for (i, ch) in int.chars().enumerate() {
        if i > 0 && (int.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(ch);
    }
    format!("{}{grouped}{frac}", if x < 0.0 { "-" } else { "" })
}

fn per(x: i64, n: f64) -> f64 {
    x as f64 / n
}

/// Derive the figures, the workload and the .conf from one observation.
/// `name` is the workload's name, `json_name` the file it will be written
/// to (named in the .conf and the replay command).
pub fn derive(obs: &Observation, name: &str, json_name: &str, conf_name: &str) -> Result<Captured> {
    let observed = observed::observe(obs)?;
    let figures = &observed.figures;
    let mix = mix::statement_mix(&obs.delta, observed.commits, figures);
    let data = tables::data_table(obs);
    let wal = wal::wal(
        &mix.types,
        &mix.made,
        observed.non_hot,
        figures.wal_bytes_without_fpi_per_tx,
    );
    let keys = keys::keys(
        obs,
        figures,
        &mix.made,
        observed.non_hot,
        mix.read_range_rows,
        &data,
    );
    let params = StatementParams {
        distribution: keys.distribution,
        non_hot: observed.non_hot,
        scale_records: wal.scale_records,
        commit_wal: wal.commit,
        read_range_rows: mix.read_range_rows,
        range_rows: keys.range_rows,
        data_rows: data.rows,
        observed_accesses: keys.observed_accesses,
        point_accesses: keys.point_accesses,
    };
    let transactions = transactions::transactions(&mix.types, &params);
    let any_inserts = mix.types.iter().any(|t| t.inserts > 0);
    let tables = tables::tables(obs, &data, any_inserts);

    let clients = obs.clients.max(1) as u64;
    let replay =
        format!("pgiosim run --workload {json_name} --config {conf_name} -s 1 -c {clients}");
    let sources = sources::sources(
        obs, &observed, &mix, &wal.note, &keys.note, clients, conf_name,
    );
    let out = workload::workload(
        name,
        obs,
        figures,
        Parts {
            tables,
            transactions,
            sources,
            clients,
            replay,
        },
    );
    let spec_json = serde_json::to_string_pretty(&out)? + "\n";
    let spec = WorkloadSpec::from_json(&spec_json, json_name)?;
    // It must compile too (the same check `run` makes).
    Script::new(&spec, 1)?;
    Ok(Captured {
        spec_json,
        spec,
        conf: conf_text(obs, json_name),
        figures: observed.figures,
        scale: 1,
        clients,
    })
}

#[cfg(test)]
mod tests;
