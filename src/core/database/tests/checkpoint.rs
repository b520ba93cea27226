//! Checkpoints: full-page images after each one starts, and WAL volume
//! (max_wal_size) starting them.

use super::*;

#[test]
fn full_page_images_on_first_touch_only_until_next_checkpoint() {
    let mut cfg = config(4, 8192);
    cfg.duration = Some(3 * SEC);
    let o = simulate(cfg.clone(), 1, FAST);
    let fpi_no_ckpt = o.db.stats().counters.full_page_images;
    // Scale 1: every page touched gets one image, and no more: at most the
    // number of distinct modified pages.
    let w = Script::new(&builtin("tpcb-like").unwrap(), 1).unwrap();
    let a = w.table("pgbench_accounts").unwrap();
    assert!(fpi_no_ckpt <= a.heap.blocks + a.index.as_ref().unwrap().blocks() + 4);
    assert_eq!(o.db.stats().counters.checkpoints_started, 0);

    cfg.checkpoint_timeout = SEC;
    let o = simulate(cfg, 1, FAST);
    let c = o.db.stats().counters;
    assert!(c.checkpoints_started >= 2, "{c:?}");
    assert!(c.checkpoints_done >= 1);
    assert!(
        c.full_page_images > fpi_no_ckpt,
        "images logged again after each checkpoint"
    );
    assert!(c.checkpoint_writes > 0);
    assert!(c.data_syncs >= 1);
}

#[test]
fn wal_volume_triggers_checkpoints() {
    let mut cfg = config(8, 4096);
    cfg.checkpoint_segments = 1; // 16 MiB of WAL
    cfg.duration = Some(4 * SEC);
    let o = simulate(cfg, 20, FAST);
    let c = o.db.stats().counters;
    assert!(c.checkpoints_requested >= 1, "{c:?}");
    assert_eq!(c.checkpoints_timed, 0);
}
