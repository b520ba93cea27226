use super::keys::{MAX_SKEW, skew_for};
use super::mix::{Mix, TxType, split, tx_types};
use super::reference::reference;
use super::settings_file::{conf_text, conf_value};
use super::*;
use crate::settings::Settings;
use crate::workload::{Step, Workload};
use rand::SeedableRng;

/// pgbench tpcb-like at scale 2 for 6 s, 4 clients (figures of the shape
/// PostgreSQL 15 reports).
fn pgbench_like() -> Observation {
    // The full-page images the build takes them to be.
    let fpi = i64::from(reference().full_page_image_bytes);
    Observation {
        version_num: 150018,
        version: "15.18".into(),
        database: "postgres".into(),
        server: "socket /tmp/x/.s.PGSQL.5439".into(),
        started_at: "2026-01-01 00:00:00 UTC".into(),
        delta: Delta {
            seconds: 6.0,
            xact_commit: 9002,
            xact_rollback: 0,
            blks_read: 900,
            blks_hit: 180_000,
            tup_returned: 20_000,
            tup_fetched: 36_000,
            tup_inserted: 9000,
            tup_updated: 27_000,
            tup_deleted: 0,
            wal_records: Some(56_000),
            wal_fpi: Some(4500),
            wal_bytes: Some(9000 * 403 + 4500 * fpi),
            wal_lsn_bytes: 9000 * 403 + 4500 * fpi,
            wal_buffers_full: Some(0),
            wal_writes: Some(8000),
            wal_syncs: Some(7000),
            n_tup_upd: 27_000,
            n_tup_hot_upd: 26_000,
            ..Delta::default()
        },
        own_commits: 2,
        db_size_bytes: 30 * 1024 * 1024,
        sizes: Some(TableSizes {
            live_rows: 200_022,
            heap_bytes: 3280 * 8192,
            index_bytes: 560 * 8192,
        }),
        settings: [
            ("shared_buffers", "2048", "8kB"),
            ("synchronous_commit", "on", ""),
            ("checkpoint_timeout", "300", "s"),
            ("max_wal_size", "1024", "MB"),
            ("commit_delay", "0", ""),
            ("wal_compression", "off", ""),
        ]
        .into_iter()
        .map(|(name, setting, unit)| ServerSetting {
            name: name.into(),
            setting: setting.into(),
            unit: unit.into(),
        })
        .collect(),
        clients: 4,
        active_mean: 3.5,
        wal_io_source: "pg_stat_wal.wal_write and wal_sync".into(),
        checkpoint_source: "pg_stat_bgwriter".into(),
        partial: false,
    }
}

fn derive_ok(obs: &Observation) -> Captured {
    derive(obs, "mine", "mine.json", "mine.conf").unwrap()
}

#[test]
fn pgbench_shape_becomes_one_transaction_type() {
    let c = derive_ok(&pgbench_like());
    let f = &c.figures;
    assert_eq!(f.commits, 9000);
    assert!((f.tps - 1500.0).abs() < 1e-9);
    assert!((f.wal_bytes_without_fpi_per_tx - 403.0).abs() < 0.01);
    assert_eq!(c.spec.transactions.len(), 1);
    let tx = &c.spec.transactions[0];
    // BEGIN, 3 updates, 1 read, 1 insert, END: pgbench's 7 statements.
    assert_eq!(tx.statements.len(), 7);
    let count = |f: fn(&crate::workload::spec::StatementSpec) -> bool| {
        tx.statements.iter().filter(|s| f(s)).count()
    };
    assert_eq!(count(|s| s.update.is_some()), 3);
    assert_eq!(count(|s| s.read.is_some()), 1);
    assert_eq!(count(|s| s.insert.is_some()), 1);
    assert!(
        c.spec_json
            .contains("\"observed.transactions\": \"1,500.0 tps")
    );
    assert!(c.spec.description.contains("-s 1 -c 4"));
}

/// The compiled workload logs the observed WAL without full-page images.
#[test]
fn replayed_records_carry_the_observed_wal() {
    for obs in [pgbench_like(), {
        let mut o = pgbench_like();
        o.delta.tup_updated = 13_500; // 1.5 updates per tx
        o.delta.tup_fetched = 13_500 + 2700; // 0.3 reads
        o.delta.tup_deleted = 900; // 0.1
        o.delta.tup_fetched += 900;
        o
    }] {
        let c = derive_ok(&obs);
        let mut s = Script::new(&c.spec, 1).unwrap();
        let mut rng = crate::core::SimRng::seed_from_u64(5);
        let mut steps = Vec::new();
        let n = 40_000;
        let (mut wal, mut updates) = (0u64, 0u64);
        for _ in 0..n {
            s.next_transaction(&mut rng, &mut steps);
            for st in &steps {
                match st {
                    Step::Modify { wal_bytes, .. }
                    | Step::Extend { wal_bytes, .. }
                    | Step::Commit { wal_bytes } => wal += *wal_bytes as u64,
                    _ => {}
                }
                if matches!(st, Step::Lock(_)) {
                    updates += 1;
                }
            }
        }
        let per_tx = wal as f64 / n as f64;
        let want = c.figures.wal_bytes_without_fpi_per_tx;
        assert!((per_tx - want).abs() / want < 0.03, "{per_tx} vs {want}");
        let locks_want = c.figures.tup_updated_per_tx + c.figures.tup_deleted_per_tx;
        let locks = updates as f64 / n as f64;
        assert!((locks - locks_want).abs() < 0.03, "{locks} vs {locks_want}");
    }
}

#[test]
fn fractional_mixes_become_weighted_types() {
    let types = tx_types(&Mix {
        updates: 1.5,
        reads: 0.25,
        deletes: 0.0,
        inserts: 1.0,
    });
    assert_eq!(types.len(), 4);
    let total: f64 = types.iter().map(|t| t.weight).sum();
    assert!((total - 1.0).abs() < 1e-12);
    let mean = |f: fn(&TxType) -> u64| types.iter().map(|t| f(t) as f64 * t.weight).sum::<f64>();
    assert!((mean(|t| t.updates) - 1.5).abs() < 1e-12);
    assert!((mean(|t| t.reads) - 0.25).abs() < 1e-12);
    assert!((mean(|t| t.inserts) - 1.0).abs() < 1e-12);
    // Nearly whole numbers are rounded.
    assert_eq!(split(2.99), (3, 0.0));
    assert_eq!(split(3.01), (3, 0.0));
    assert_eq!(split(0.91), (1, 0.0));
    assert_eq!(split(10.6), (11, 0.0));
    assert_eq!(split(0.015), (0, 0.0));
    assert_eq!(split(0.5), (0, 0.5));
    assert_eq!(split(1.5), (1, 0.5));
    assert_eq!(
        tx_types(&Mix {
            updates: 3.0,
            reads: 1.0,
            deletes: 0.0,
            inserts: 1.0
        })
        .len(),
        1
    );
}

#[test]
fn read_only_transactions_log_no_commit_record() {
    let mut o = pgbench_like();
    // select-only: 1 fetch per transaction, nothing written.
    o.delta.tup_updated = 0;
    o.delta.tup_inserted = 0;
    o.delta.tup_fetched = 9000;
    o.delta.n_tup_upd = 0;
    o.delta.n_tup_hot_upd = 0;
    o.delta.wal_bytes = Some(0);
    o.delta.wal_fpi = Some(0);
    o.delta.wal_records = Some(0);
    o.delta.blks_hit = 9000 * 4;
    o.delta.blks_read = 0;
    let c = derive_ok(&o);
    assert_eq!(c.spec.transactions.len(), 1);
    let tx = &c.spec.transactions[0];
    assert_eq!(tx.commit_wal_bytes, 0);
    assert_eq!(tx.statements.len(), 1, "autocommit, no BEGIN/END");
    assert!(tx.statements[0].read.is_some());
    assert!(!c.spec.tables.contains_key("inserted"));
}

#[test]
fn data_table_covers_the_database_at_scale_1() {
    let o = pgbench_like();
    let c = derive_ok(&o);
    let s = Script::new(&c.spec, 1).unwrap();
    let t = s.table("data").unwrap();
    let blocks = t.heap.blocks + t.index.as_ref().unwrap().blocks();
    let want = o.db_size_bytes as f64 / 8192.0;
    assert!(
        (blocks as f64 - want).abs() / want < 0.01,
        "{blocks} vs {want}"
    );
    // 200,022 rows in 3,280 pages: 61 per page.
    assert_eq!(c.spec.tables["data"].rows_per_page, 61);
    assert!(s.data_blocks() >= blocks);
}

#[test]
fn a_high_hit_ratio_skews_the_keys() {
    let mut o = pgbench_like();
    // 1 GB database, 128 MB of shared_buffers, 99% hits.
    o.db_size_bytes = 1 << 30;
    o.settings[0].setting = "16384".into();
    o.delta.blks_read = 1800;
    o.delta.blks_hit = 178_200;
    let c = derive_ok(&o);
    let text = &c.spec_json;
    assert!(text.contains("\"exponential\""), "{text}");
    assert!(c.spec.sources["keys"].contains("skewed"));
    // The same observation with most blocks read stays uniform.
    o.delta.blks_read = 120_000;
    o.delta.blks_hit = 60_000;
    let c = derive_ok(&o);
    assert!(c.spec_json.contains("\"uniform\""));
}

#[test]
fn skew_solves_its_equation() {
    assert_eq!(skew_for(0.5, 0.5), None);
    assert_eq!(skew_for(1.0, 0.99), None);
    let a = skew_for(0.125, 0.9).unwrap();
    let share = (1.0 - (-a * 0.125f64).exp()) / (1.0 - (-a).exp());
    assert!((share - 0.9).abs() < 0.005, "{a} {share}");
    assert_eq!(skew_for(0.001, 0.99999), Some(MAX_SKEW));
}

#[test]
fn many_pages_per_transaction_add_a_range_scan() {
    let mut o = pgbench_like();
    o.delta.blks_hit = 9000 * 400;
    let c = derive_ok(&o);
    let tx = &c.spec.transactions[0];
    let range = tx.statements.iter().find_map(|s| s.range.as_ref()).unwrap();
    // About 380 extra pages at 61 rows per heap page plus leaves.
    assert!(range.rows > 15_000 && range.rows < 25_000, "{}", range.rows);
    // pgbench's own shape gets none.
    let c = derive_ok(&pgbench_like());
    assert!(
        c.spec.transactions[0]
            .statements
            .iter()
            .all(|s| s.range.is_none())
    );
}

#[test]
fn index_scans_of_many_rows_become_range_reads() {
    let mut o = pgbench_like();
    o.delta.index_read_scans = Some(9000 * 2);
    o.delta.index_read_rows = Some(9000 * 2 * 50);
    let c = derive_ok(&o);
    let tx = &c.spec.transactions[0];
    let ranges: Vec<u64> = tx
        .statements
        .iter()
        .filter_map(|s| s.range.as_ref().map(|r| r.rows))
        .collect();
    assert_eq!(ranges, [50, 50]);
    assert!(tx.statements.iter().all(|s| s.read.is_none()));
    // One row per scan: point reads.
    o.delta.index_read_rows = Some(9000 * 2);
    let c = derive_ok(&o);
    let reads = c.spec.transactions[0]
        .statements
        .iter()
        .filter(|s| s.read.is_some());
    assert_eq!(reads.count(), 2);
}

#[test]
fn nothing_committed_is_an_error() {
    let mut o = pgbench_like();
    o.delta.xact_commit = 2;
    let e = format!("{:#}", derive(&o, "m", "m.json", "m.conf").unwrap_err());
    assert!(e.contains("no transaction committed"), "{e}");
}

#[test]
fn postgres_13_has_no_fpi_count() {
    let mut o = pgbench_like();
    o.version_num = 130016;
    o.delta.wal_fpi = None;
    o.delta.wal_records = None;
    o.delta.wal_bytes = None;
    let c = derive_ok(&o);
    assert_eq!(c.figures.wal_bytes_from, "pg_current_wal_lsn()");
    assert_eq!(c.figures.wal_fpi_per_tx, None);
    assert!(c.spec.sources["observed.full_page_images"].contains("no pg_stat_wal"));
}

#[test]
fn conf_values_keep_their_units_and_pgiosim_reads_them() {
    assert_eq!(conf_value("16384", "8kB"), "131072kB");
    assert_eq!(conf_value("1024", "MB"), "1024MB");
    assert_eq!(conf_value("300", "s"), "300s");
    assert_eq!(conf_value("200", "ms"), "200ms");
    assert_eq!(conf_value("on", ""), "'on'");
    assert_eq!(conf_value("-1", "8kB"), "-1");
    assert_eq!(conf_value("0.9", ""), "0.9");
    let o = pgbench_like();
    let text = conf_text(&o, "mine.json");
    assert!(text.contains("shared_buffers = 16384kB\n"), "{text}");
    assert!(text.contains("# wal_compression = 'off'"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.conf");
    std::fs::write(&path, &text).unwrap();
    let mut s = Settings::default();
    let ignored = s.apply_config_file(&path).unwrap();
    assert!(ignored.is_empty(), "{ignored:?}");
    assert_eq!(s.shared_buffers_bytes, 16 << 20);
}

/// The CPU is tpcb-like's, split as it splits it, and the server's own CPU
/// (capture's /proc or --cpu-utilization) replaces the statements' share,
/// the client's included, so the statements cost what the server measured.
#[test]
fn the_cpu_is_the_references_until_the_servers_replaces_it() {
    let c = derive_ok(&pgbench_like());
    let r = reference();
    let s = &c.spec;
    assert_eq!(
        (s.cpu_us_per_statement, s.client_cpu_us_per_statement),
        (r.cpu_us_per_statement, r.client_cpu_us_per_statement)
    );
    assert_eq!(
        (s.cpu_us_per_read, s.cpu_us_per_write),
        (r.cpu_us_per_read, r.cpu_us_per_write)
    );
    assert!(s.sources["client_cpu_us_per_statement"].contains("as tpcb-like.json"));
    let m = crate::workload::server_cpu::ServerCpu {
        cpu_us_per_tx: 600.0,
        speed: 1.0,
        reads_per_tx: 0.15,
        pages_written_per_tx: 0.2,
        wal_bytes_per_tx: 1200.0,
    };
    let (out, split) = crate::workload::server_cpu::apply(s, &m, "captured: test").unwrap();
    // pgbench's 7 statements, each figure rounded to 0.1 us.
    let per_tx = 7.0 * (out.cpu_us_per_statement + out.client_cpu_us_per_statement);
    assert!(
        (per_tx - split.statements_us).abs() <= 7.0 * 0.1,
        "{per_tx} against {}",
        split.statements_us
    );
    let share = |w: &crate::workload::WorkloadSpec| {
        w.client_cpu_us_per_statement / (w.cpu_us_per_statement + w.client_cpu_us_per_statement)
    };
    assert!((share(&out) - share(s)).abs() < 0.01);
    assert!(out.sources["cpu_us_per_statement"].contains("captured: test"));
    assert!(out.sources["client_cpu_us_per_statement"].contains("scaled"));
}
