//! Engines: what carries the core's requests to a device and brings back
//! completions. The real engines (io_uring, psync) touch real files with a
//! real clock; the simulated device runs in virtual time against a device
//! model. The driver loop is shared by all of them.

use crate::core::io::{IoCompletion, IoRequest};
use crate::core::time::Nanos;

pub mod bench;
#[cfg(test)]
pub(crate) mod checked;
#[cfg(test)]
mod conformance;
pub mod cpu_probe;
pub mod driver;
pub mod emulate;
pub mod psync;
pub mod shared_memory;
pub mod sim;
pub mod uring;

/// A device that executes the core's I/O requests.
///
/// One operation, two engines: io_uring and psync implement this the same
/// way, so the driver never knows which one it talks to. Operations in
/// flight together may complete in any order (io_uring without linked
/// requests, psync's threads and a disk's channels all reorder): the core
/// issues a sync once the writes it covers have completed. The conformance
/// suite (`conformance.rs`) runs the same cases on every implementation,
/// each device held to this contract by the tests' checking wrapper
/// (`checked.rs`).
pub trait Device {
    /// Queue one request. It may be submitted lazily, at the next `wait`.
    fn submit(&mut self, req: IoRequest) -> anyhow::Result<()>;
    /// Submit everything queued, then block until at least one completion is
    /// available or the clock reaches `deadline` (if given), whichever is
    /// first, appending completions to `out`. Returns early (possibly with
    /// nothing) after at most `max_block` nanoseconds so the caller can check
    /// for Ctrl-C. An I/O error is returned with the file and operation named.
    fn wait(
        &mut self,
        deadline: Option<Nanos>,
        max_block: Nanos,
        out: &mut Vec<IoCompletion>,
    ) -> anyhow::Result<()>;
    /// Current time in nanoseconds since the device was created.
    fn now(&self) -> Nanos;
    /// Short name for reports ("io_uring", "psync").
    fn name(&self) -> &'static str;
    /// How close to a timer the driver stops sleeping and polls instead: a
    /// thread that sleeps on a VM wakes tens of µs late, and modelled CPU
    /// bursts and round trips are only tens of µs long. Zero for devices in
    /// virtual time.
    fn timer_spin(&self) -> Nanos {
        40 * crate::core::time::US
    }
    /// In virtual time: move the clock to `at` and return true if no
    /// completion is due by then, as `wait(Some(at), ..)` would, returning
    /// none. Otherwise, and on a real clock, false and nothing moves.
    fn skip_to(&mut self, _at: Nanos) -> bool {
        false
    }
    /// The I/Os (reads, writes) a device model's caps have counted, where
    /// one counts ([`crate::device::DeviceModel::counted_ios`]); None for a
    /// real disk.
    fn counted_ios(&self) -> Option<[f64; 2]> {
        None
    }
    /// The reads and writes a device model's disk got, counted by its caps
    /// or not ([`crate::device::DeviceModel::disk_ios`]); None for a real
    /// disk.
    fn disk_ios(&self) -> Option<[f64; 2]> {
        None
    }
}
