//! What the core needs to know about a run, in its own units.

use super::archive::ArchiveConfig;
use super::cpu_growth::CpuGrowth;
use super::recovery::RecoveryConfig;
use super::replication::{ReplicationConfig, SynchronousCommit};
use super::time::Nanos;
use super::vacuum::VacuumShape;

/// The core's configuration: PostgreSQL settings already resolved to bytes
/// and nanoseconds, plus the run's shape.
#[derive(Debug, Clone, PartialEq)]
pub struct CoreConfig {
    /// Client backends (pgbench -c).
    pub clients: u32,
    /// Logical CPUs the scheduler shares among backends (--cpus).
    pub cpus: u32,
    /// Hardware threads a physical core runs (--threads-per-core): with 2,
    /// `cpus` are hyperthreads, two to a core.
    pub threads_per_core: u32,
    /// A thread's speed alone on a core, relative to the machine the
    /// workload's CPU figures come from (--cpu-speed).
    pub cpu_speed: f64,
    /// Stop after this much time (pgbench -T), if set.
    pub duration: Option<Nanos>,
    /// Transactions per client (pgbench -t), if set.
    pub transactions_per_client: Option<u64>,
    /// Seed of the workload's random generator.
    pub seed: u64,
    /// shared_buffers in 8 KiB buffers (NBuffers).
    pub nbuffers: u32,
    /// Effective wal_buffers in bytes.
    pub wal_buffers_bytes: u64,
    /// synchronous_commit: off does not wait for the local flush; the
    /// remote levels wait for the synchronous standbys too (`replication`).
    pub synchronous_commit: SynchronousCommit,
    /// Streaming replication to standbys, if any.
    pub replication: Option<ReplicationConfig>,
    /// WAL archiving (archive_mode on or always), if any.
    pub archive: Option<ArchiveConfig>,
    /// commit_delay.
    pub commit_delay: Nanos,
    /// commit_siblings.
    pub commit_siblings: u32,
    /// full_page_writes.
    pub full_page_writes: bool,
    /// checkpoint_timeout.
    pub checkpoint_timeout: Nanos,
    /// checkpoint_completion_target.
    pub checkpoint_completion_target: f64,
    /// CheckPointSegments (from max_wal_size).
    pub checkpoint_segments: u64,
    /// bgwriter_delay.
    pub bgwriter_delay: Nanos,
    /// bgwriter_lru_maxpages.
    pub bgwriter_lru_maxpages: u32,
    /// bgwriter_lru_multiplier.
    pub bgwriter_lru_multiplier: f64,
    /// wal_writer_delay.
    pub wal_writer_delay: Nanos,
    /// wal_writer_flush_after in bytes (0: flush only every
    /// wal_writer_delay): with asynchronous commits, the WAL writer, woken
    /// as they fill pages, flushes once this much WAL is unflushed
    /// (`XLogBackgroundFlush`, xlog.c).
    pub wal_writer_flush_after: u64,
    /// Size of the modelled OS page cache in pages (0: none).
    pub os_cache_pages: u64,
    /// The kernel's writeback of the modelled page cache's dirty pages
    /// ([`super::kernel_flusher`]); None: a page PostgreSQL leaves to the
    /// kernel goes to the device as it is written (no modelled page cache,
    /// or real files, whose kernel does its own).
    pub kernel_writeback: Option<super::kernel_flusher::KernelWriteback>,
    /// The page cache starts as the data set's load left it (what the
    /// workload wrote last), not empty.
    pub os_cache_after_load: bool,
    /// WAL segment files in the ring.
    pub wal_segments: u32,
    /// Client round trip per statement. With pgbench's threads on the host
    /// (`client_threads`), the CPU a backend spends being woken onto an idle
    /// core (nothing when every core is busy); without, a delay (the
    /// network's).
    pub round_trip: Nanos,
    /// CPU a backend spends on each data-file read it waits for.
    pub read_cpu: Nanos,
    /// CPU the writing process spends on each data-file write (a backend's
    /// victim write, the bgwriter's, the checkpointer's, vacuum's).
    pub write_cpu: Nanos,
    /// CPU while the page cache is full, when every page the kernel brings
    /// in costs a reclaimed one (see [`ReclaimCpu`]).
    pub reclaim_cpu: ReclaimCpu,
    /// How statement, read and write CPU grow with the active backends.
    pub cpu_growth: CpuGrowth,
    /// How a statement's CPU grows with the active backends per logical
    /// CPU: (backends per CPU, factor) points, ascending; empty: none
    /// (see [`super::cpu_growth::Crowding`]).
    pub cpu_crowding: Vec<(f64, f64)>,
    /// pgbench's worker threads (-j) on the database host's cores: each
    /// statement's round trip passes through its client's thread, which
    /// needs `client_cpu` on a core. 0: no client threads (the client's CPU,
    /// if any, is already in each statement's).
    pub client_threads: u32,
    /// A client thread's CPU per statement (build and send it, read the reply).
    pub client_cpu: Nanos,
    /// backend_flush_after, bgwriter_flush_after, checkpoint_flush_after
    /// (bytes): 0 leaves the writeback of that writer's pages to the kernel.
    pub backend_flush_after: u64,
    pub bgwriter_flush_after: u64,
    pub checkpoint_flush_after: u64,
    /// CPU the process that flushed the WAL needs once its fdatasync is done
    /// (waking up, releasing WALWriteLock, waking the group) before the next
    /// flush can start (the workload's `wal_flush_cpu_us`).
    pub wal_flush_cpu: Nanos,
    /// Rate-limited (open-loop) run: transactions per second over all
    /// clients, started on a Poisson schedule (pgbench -R).
    pub rate: Option<f64>,
    /// pgbench -L: transactions already this late at their scheduled start
    /// are skipped, and finished ones slower than this are counted late.
    pub latency_limit: Option<Nanos>,
    /// autovacuum on/off, how often it looks for work, and its cost limit
    /// and delay (autovacuum_vacuum_cost_*, resolved).
    pub autovacuum: bool,
    pub autovacuum_naptime: Nanos,
    pub autovacuum_cost_limit: u32,
    pub autovacuum_cost_delay: Nanos,
    /// What runs: the clients, or a one-shot job instead of them.
    pub mode: Mode,
    /// maintenance_work_mem, bytes: the dead item identifiers VACUUM holds.
    pub maintenance_work_mem: u64,
    /// vacuum_cost_page_hit, _miss and _dirty.
    pub vacuum_cost_page: [u32; 3],
}

/// What a run is: the clients' benchmark, or a one-shot job that replaces
/// them and ends the run when it is done.
#[derive(Debug, Clone, PartialEq)]
pub enum Mode {
    /// The clients run the workload, autovacuum (if on) beside them.
    Bench,
    /// No clients: one VACUUM (`pgiosim vacuum`).
    Vacuum(OneShotVacuum),
    /// A standby catching up on a WAL backlog: client 0 is its startup
    /// process, replaying the workload's transactions (`pgiosim catchup`).
    Catchup(RecoveryConfig),
}

/// A one-shot VACUUM of one table's whole heap, every page bloated. Its
/// cost limit and delay are vacuum_cost_limit / vacuum_cost_delay, which
/// autovacuum does not use (it has its own, in [`CoreConfig`]).
#[derive(Debug, Clone, PartialEq)]
pub struct OneShotVacuum {
    /// The table vacuumed.
    pub table: String,
    /// Its index, visibility map and dead rows; None: a heap without an
    /// index, every page pruned in one pass.
    pub shape: Option<VacuumShape>,
    /// vacuum_cost_limit.
    pub cost_limit: u32,
    /// vacuum_cost_delay.
    pub cost_delay: Nanos,
}

/// The I/O path's CPU on a server whose page cache is full: each page read
/// from the device or written makes the kernel reclaim another, and each
/// written page is written back. Measured as one figure per device read
/// and one per KiB written (data pages and WAL alike); zero leaves
/// `read_cpu` and `write_cpu` in force at every fill of the cache.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReclaimCpu {
    /// A data-file read the device serves, instead of `read_cpu`.
    pub read: Nanos,
    /// Per KiB written: a data page's write costs 8 of them instead of
    /// `write_cpu`, and a backend's WAL record its share.
    pub per_kib_written: Nanos,
}

impl ReclaimCpu {
    /// Whether any figure is set.
    pub fn is_set(&self) -> bool {
        self.read > 0 || self.per_kib_written > 0
    }
}
