//! Time in the core: plain nanoseconds since the start of a run.
//!
//! The core never reads a clock; every event carries its time as a `Nanos`.
//! The real engine converts `Instant`s, the simulator advances a counter.

/// Nanoseconds since the start of the run.
pub type Nanos = u64;

/// One microsecond in `Nanos`.
pub const US: Nanos = 1_000;
/// One millisecond in `Nanos`.
pub const MS: Nanos = 1_000_000;
/// One second in `Nanos`.
pub const SEC: Nanos = 1_000_000_000;
