//! The sans-I/O core: state machines that take events stamped with a time and
//! return requests. Nothing here reads a clock, sleeps or touches a file; a
//! test (`tests/core_is_pure.rs`) keeps it that way.

pub mod archive;
pub mod bgwriter;
pub mod block_set;
pub mod bounded_events;
pub mod breakdown;
pub mod buffer_pool;
pub mod checkpointer;
pub mod config;
pub mod cpu;
pub mod cpu_growth;
pub mod database;
pub mod io;
pub mod kernel_flusher;
pub mod locks;
pub mod min_heap;
pub mod os_cache;
pub mod recovery;
pub mod replication;
pub mod slots;
pub mod stats;
#[cfg(test)]
pub(crate) mod test_support;
pub mod time;
pub mod timer_queue;
pub mod vacuum;
pub mod wal;
pub mod workload;
pub mod writeback;

/// The one random generator of the core: seeded, so a run repeats exactly.
pub type SimRng = rand::rngs::Xoshiro256PlusPlus;
