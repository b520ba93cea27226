//! The stop flag: SIGINT and SIGTERM raise it, and long work (a run, a
//! prepare, a probe, a capture) checks it between steps to end cleanly,
//! with a partial report where there is one.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A flag raised once, seen by every clone of it.
#[derive(Debug, Clone, Default)]
pub struct Stop(Arc<AtomicBool>);

impl Stop {
    /// A flag not raised, which only [`Stop::set`] raises (tests, and work
    /// nothing interrupts).
    pub fn new() -> Stop {
        Stop::default()
    }

    /// A flag SIGINT (Ctrl-C) and SIGTERM raise instead of ending the
    /// process.
    pub fn on_signals() -> std::io::Result<Stop> {
        let stop = Stop::new();
        for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
            signal_hook::flag::register(signal, Arc::clone(&stop.0))?;
        }
        Ok(stop)
    }

    /// Whether the flag was raised.
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }

    /// Raise the flag.
    pub fn set(&self) {
        self.0.store(true, Ordering::Relaxed);
    }
}
