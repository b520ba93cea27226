//! The kernel's writeback of the modelled page cache: backends' pages go
//! dirty into it, the flusher and the checkpoint's fsync write them back.

use std::collections::HashMap;

use super::*;
use crate::core::kernel_flusher::KernelWriteback;

/// Backends that write victims (a small pool), checkpoints every 3 s
/// and a flusher that expires pages after 1 s.
fn dirtying(queue_depth: Option<u32>) -> CoreConfig {
    let mut cfg = config(8, 256);
    cfg.duration = Some(8 * SEC);
    cfg.checkpoint_timeout = 3 * SEC;
    cfg.os_cache_pages = 1 << 16;
    cfg.kernel_writeback = Some(KernelWriteback {
        expire: SEC,
        interval: 500 * MS,
        background_pages: 1 << 20,
        background_chunk: 4,
        queue_depth,
    });
    cfg
}

#[test]
fn dirty_pages_are_written_back_by_the_flusher_or_the_fsync_before_its_flush() {
    let o = simulate(dirtying(Some(3)), 10, FAST);
    assert!(!o.cache_writes.is_empty(), "backends wrote victims");
    let mut written: HashMap<u64, u64> = HashMap::new();
    for &b in &o.cache_writes {
        *written.entry(b).or_default() += 1;
    }
    let (mut by_flusher, mut by_fsync) = (0, 0);
    for &(block, pages, flusher) in &o.written_back {
        for b in block..block + u64::from(pages) {
            let left = written.get_mut(&b).expect("written back, never written");
            assert!(*left > 0, "block {b} written back more often than written");
            *left -= 1;
        }
        if flusher {
            by_flusher += pages;
        } else {
            by_fsync += pages;
        }
    }
    assert!(by_flusher > 0 && by_fsync > 0, "{by_flusher} {by_fsync}");
    let c = o.db.stats().counters;
    assert_eq!(c.kernel_writeback_pages, u64::from(by_flusher));
    assert_eq!(c.fsync_writeback_pages, u64::from(by_fsync));
    // Each flush waits for its fsync's writes, at most the depth at once.
    assert_eq!(o.data_syncs_over_fsync_writes, 0);
    assert_eq!(o.max_fsync_in_flight, 3);
    assert!((1..=3).contains(&o.max_flusher_in_flight));
    // None of those pages went to the device as they were written.
    assert!(
        o.writes.len() < o.cache_writes.len(),
        "only the checkpointer's and bgwriter's writes are direct"
    );
}

#[test]
fn under_a_throttle_queue_the_fsync_writes_all_at_once() {
    let o = simulate(dirtying(None), 10, FAST);
    assert!(o.max_fsync_in_flight > 3, "{}", o.max_fsync_in_flight);
    assert_eq!(o.data_syncs_over_fsync_writes, 0);
}

#[test]
fn without_a_modelled_writeback_pages_go_to_the_device_as_written() {
    let mut cfg = dirtying(None);
    cfg.kernel_writeback = None;
    let o = simulate(cfg, 10, FAST);
    assert!(o.cache_writes.is_empty() && o.written_back.is_empty());
    assert!(o.db.stats().counters.backend_writes > 0);
}
