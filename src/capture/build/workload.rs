//! The workload file: the tables, transactions and sources the other steps
//! derived, and the figures statistics views do not show (CPU, round trip,
//! record sizes).

use std::collections::BTreeMap;

use super::reference::reference;
use super::{Figures, Observation, num};
use crate::workload::WorkloadSpec;
use crate::workload::spec::{
    TableSpec, TransactionSpec, extended_cpu_default, prepared_cpu_default, process_wakeup_default,
    replay_cpu_per_fpi_default, replay_cpu_per_record_default, tls_cpu_default,
    wal_flush_cpu_default,
};

/// What the workload file holds.
pub(super) struct Parts {
    pub tables: BTreeMap<String, TableSpec>,
    pub transactions: Vec<TransactionSpec>,
    pub sources: BTreeMap<String, String>,
    /// The `-c` to replay with, and the replay command.
    pub clients: u64,
    pub replay: String,
}

/// The workload named `name` of one observation.
pub(super) fn workload(
    name: &str,
    obs: &Observation,
    figures: &Figures,
    parts: Parts,
) -> WorkloadSpec {
    let r = reference();
    let d = &obs.delta;
    let tps = figures.tps;
    let wal_per_tx = figures.wal_bytes_per_tx;
    let Parts {
        tables,
        transactions,
        sources,
        clients,
        replay,
    } = parts;
    WorkloadSpec {
        name: name.to_string(),
        description: format!(
            "<captured: database {:?}, PostgreSQL {}, {} tps, {} clients; replay with -s 1 -c {clients}>",
            obs.database,
            crate::capture::queries::version_name(obs.version_num),
            num(tps, 0),
            obs.clients
        ),
        source: Some(format!(
            "pgiosim capture of database {:?} on PostgreSQL {} ({}), {:.1} s from {}: {} tps, {} B WAL/tx, {} blocks read and {} hit per transaction. Replay: {replay} (add -R {:.0} for the observed rate); sources says where each figure comes from",
            obs.database,
            obs.version,
            obs.server,
            d.seconds,
            obs.started_at,
            num(tps, 1),
            num(wal_per_tx, 0),
            num(figures.blks_read_per_tx, 2),
            num(figures.blks_hit_per_tx, 2),
            tps
        )),
        tables,
        transactions,
        // Not visible in statistics views: the reference's measured CPU,
        // split as it splits it, until the server's own CPU (from /proc or
        // --cpu-utilization) replaces the statements' share.
        cpu_us_per_statement: r.cpu_us_per_statement,
        client_cpu_us_per_statement: r.client_cpu_us_per_statement,
        cpu_us_per_read: r.cpu_us_per_read,
        cpu_us_per_write: r.cpu_us_per_write,
        cpu_growth_per_backend: r.cpu_growth_per_backend,
        io_cpu_growth_per_backend: r.io_cpu_growth_per_backend,
        cpu_growth_above_backends: r.cpu_growth_above_backends,
        cpu_crowding: super::reference::crowding(),
        round_trip_us_per_statement: r.round_trip_us_per_statement,
        // The machine those figures were measured on.
        cpu_probe_us: r.cpu_probe_us,
        // Not visible in statistics views either: the defaults.
        reclaim_cpu_us_per_read: 0.0,
        reclaim_cpu_us_per_kib_written: 0.0,
        prepared_cpu_factor: prepared_cpu_default(),
        extended_cpu_factor: extended_cpu_default(),
        wal_flush_cpu_us: wal_flush_cpu_default(),
        tls_cpu_us_per_statement: tls_cpu_default(),
        process_wakeup_us: process_wakeup_default(),
        replay_cpu_us_per_record: replay_cpu_per_record_default(),
        replay_cpu_us_per_fpi: replay_cpu_per_fpi_default(),
        full_page_image_bytes: r.full_page_image_bytes,
        index_insert_wal_bytes: r.index_insert_wal_bytes,
        checkpoint_record_bytes: r.checkpoint_record_bytes,
        sources,
    }
}
