//! Deadlines for the talk with the server. The synchronous client blocks in
//! connect, the startup handshake and each query with no limit of its own
//! (tokio-postgres's `connect_timeout` covers only the TCP connect), and a
//! blocked call does not see SIGINT. A watchdog thread watches the one call
//! in progress: past its deadline it ends the process with exit code 1 and a
//! message naming what hung; after SIGINT or SIGTERM it gives the call
//! [`STOP_GRACE`] to return (so a normal interrupted capture still writes
//! what it saw) and then ends it with 130.

use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use crate::error::exit;
use crate::stop::Stop;

/// How long a call may go on after SIGINT or SIGTERM.
pub const STOP_GRACE: Duration = Duration::from_secs(1);
/// How often the watchdog looks.
const TICK: Duration = Duration::from_millis(50);

struct Armed {
    what: String,
    limit: Duration,
    deadline: Instant,
}

fn slot() -> &'static Mutex<Option<Armed>> {
    static SLOT: OnceLock<Mutex<Option<Armed>>> = OnceLock::new();
    SLOT.get_or_init(|| Mutex::new(None))
}

/// Starts the watchdog thread (once per process), watching `stop`.
pub fn start(stop: &Stop) {
    static STARTED: OnceLock<()> = OnceLock::new();
    let stop = stop.clone();
    STARTED.get_or_init(|| {
        std::thread::spawn(move || watch(&stop));
    });
}

fn watch(stop: &Stop) {
    let mut stopped_at: Option<Instant> = None;
    loop {
        std::thread::sleep(TICK);
        let now = Instant::now();
        if stop.is_set() {
            stopped_at.get_or_insert(now);
        }
        let guard = slot().lock().unwrap_or_else(|e| e.into_inner());
        let Some(armed) = guard.as_ref() else {
            continue;
        };
        if now >= armed.deadline {
            eprintln!(
                "Error: {}: no answer from the server within {} s (connect_timeout in the DSN \
                 sets the limit for connecting)",
                armed.what,
                armed.limit.as_secs_f64()
            );
            std::process::exit(exit::FAILURE.into());
        }
        if stopped_at.is_some_and(|t| now >= t + STOP_GRACE) {
            eprintln!(
                "Error: interrupted while {} (the server did not answer)",
                armed.what
            );
            std::process::exit(exit::INTERRUPTED.into());
        }
    }
}

/// While alive, the call in progress: `what` ("connecting to ...") must
/// finish within `limit`.
#[must_use = "the deadline holds only while the guard lives"]
pub struct Deadline(());

/// Arms the deadline for one call (or a few quick ones in a row).
pub fn arm(what: impl Into<String>, limit: Duration) -> Deadline {
    let mut guard = slot().lock().unwrap_or_else(|e| e.into_inner());
    *guard = Some(Armed {
        what: what.into(),
        limit,
        deadline: Instant::now() + limit,
    });
    Deadline(())
}

impl Drop for Deadline {
    fn drop(&mut self) {
        *slot().lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}
