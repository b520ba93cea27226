//! What the core's tests and the engines' conformance suite share: a
//! configuration of the core to start from.

use crate::core::config::CoreConfig;
use crate::core::io::PAGE_BYTES;
use crate::core::time::{MS, SEC, US};

/// A two-second pgbench-like run's settings (PostgreSQL's defaults where
/// the tests do not change them): the database's tests and the engines'
/// conformance suite start from it.
pub(crate) fn config(clients: u32, scale_blocks_hint: u32) -> CoreConfig {
    CoreConfig {
        clients,
        cpus: 2,
        duration: Some(2 * SEC),
        transactions_per_client: None,
        seed: 42,
        nbuffers: scale_blocks_hint,
        wal_buffers_bytes: 512 * PAGE_BYTES,
        synchronous_commit: crate::core::replication::SynchronousCommit::On,
        replication: None,
        archive: None,
        commit_delay: 0,
        commit_siblings: 5,
        full_page_writes: true,
        checkpoint_timeout: 300 * SEC,
        checkpoint_completion_target: 0.9,
        checkpoint_segments: 33,
        bgwriter_delay: 200 * MS,
        bgwriter_lru_maxpages: 100,
        bgwriter_lru_multiplier: 2.0,
        wal_writer_delay: 200 * MS,
        wal_writer_flush_after: 1024 * 1024,
        os_cache_pages: 0,
        wal_segments: 4,
        round_trip: 20 * US,
        read_cpu: 0,
        cpu_growth: Default::default(),
        cpu_crowding: Vec::new(),
        write_cpu: 0,
        reclaim_cpu: Default::default(),
        wal_flush_cpu: 0,
        threads_per_core: 1,
        os_cache_after_load: false,
        kernel_writeback: None,
        cpu_speed: 1.0,
        client_threads: 0,
        client_cpu: 0,
        backend_flush_after: 0,
        bgwriter_flush_after: 512 * 1024,
        checkpoint_flush_after: 256 * 1024,
        rate: None,
        latency_limit: None,
        autovacuum: true,
        autovacuum_naptime: 60 * SEC,
        autovacuum_cost_limit: 200,
        autovacuum_cost_delay: 2 * MS,
        mode: crate::core::config::Mode::Bench,
        maintenance_work_mem: 64 << 20,
        vacuum_cost_page: [1, 2, 20],
    }
}

/// A pool of `n` buffers holding blocks 0.., each valid, unpinned and
/// dirty at the LSN `lsn(block)` gives.
pub(crate) fn dirty_pool(n: u32, lsn: impl Fn(u64) -> u64) -> crate::core::buffer_pool::BufferPool {
    let mut p = crate::core::buffer_pool::BufferPool::new(n);
    for blk in 0..u64::from(n) {
        let b = p.clock_sweep().unwrap();
        p.assign(b, blk);
        p.read_done(b);
        p.mark_dirty(b, lsn(blk));
        p.unpin(b);
    }
    p
}
