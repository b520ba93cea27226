//! The test harness of the test binaries that can find, once running, that
//! they cannot run here (no PostgreSQL, not root, no strace...): libtest's
//! own harness has no way for a test to say so, and counts it as passed.
//! Those binaries set `harness = false` in Cargo.toml and end with
//!
//! ```ignore
//! fn main() -> std::process::ExitCode {
//!     common::harness::run(common::trials![test_a, test_b])
//! }
//! ```
//!
//! Each test is a plain `fn()` listed in `trials!`; a `#[test]` attribute
//! there would make it vanish without a word (those binaries are not built
//! with `--test`). Each runs as a libtest-mimic trial with libtest's
//! command line (`--list`, a name filter, `--exact`, `--skip`,
//! `--test-threads`...). A test that calls [`super::skip`] stops there and
//! shows as `ignored (reason)`; under `CI=true`, where every test must run,
//! it fails with the reason instead.
//!
//! Like libtest, a trial's output is captured: what it prints with
//! [`note!`](crate::common::note) and its panic message are shown under
//! `failures:` if it fails, and not at all if it passes (`--show-output`
//! prints them after it passes, `--nocapture` as they come). Plain
//! `println!`/`eprintln!` and child processes' output are not captured.
#![allow(dead_code)]

use std::any::Any;
use std::cell::RefCell;
use std::fmt::Write as _;
use std::panic::{self, AssertUnwindSafe};
use std::process::ExitCode;
use std::sync::{Mutex, Once};

use libtest_mimic::{Arguments, Completion, Failed, Trial};

/// The payload [`super::skip`] unwinds with: why the test cannot run here.
pub struct Skip(pub String);

thread_local! {
    /// The running trial's captured output; `None` outside a trial or under
    /// `--nocapture`.
    static CAPTURED: RefCell<Option<String>> = const { RefCell::new(None) };
}

/// Appends a line to the running trial's captured output, or prints it when
/// there is none (outside a trial, `--nocapture`). Use [`note!`].
pub fn note_line(line: &str) {
    let printed = CAPTURED.with_borrow_mut(|c| match c {
        Some(out) => {
            out.push_str(line);
            out.push('\n');
            false
        }
        None => true,
    });
    if printed {
        println!("{line}");
    }
}

/// `println!` into the running trial's captured output (see the module doc).
#[allow(unused_macros)]
macro_rules! note {
    ($($arg:tt)*) => {
        $crate::common::harness::note_line(&format!($($arg)*))
    };
}
#[allow(unused_imports)]
pub(crate) use note;

/// The list of test functions for [`run`], each named as written.
#[allow(unused_macros)]
macro_rules! trials {
    ($($test:ident),* $(,)?) => {
        vec![$((stringify!($test), $test as fn())),*]
    };
}
#[allow(unused_imports)]
pub(crate) use trials;

/// Runs `tests` as libtest would, several at a time (`--test-threads`, by
/// default one per CPU).
pub fn run(tests: Vec<(&'static str, fn())>) -> ExitCode {
    run_with(tests, false)
}

/// Runs `tests` one at a time whatever `--test-threads` says, for tests that
/// measure this machine and must have it to themselves.
pub fn run_one_at_a_time(tests: Vec<(&'static str, fn())>) -> ExitCode {
    run_with(tests, true)
}

fn run_with(tests: Vec<(&'static str, fn())>, alone: bool) -> ExitCode {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let args = Arguments::from_args();
    install_panic_hook();
    let ci = std::env::var("CI").as_deref() == Ok("true");
    let capture = !args.nocapture;
    let show_output = args.show_output;
    let trials = tests
        .into_iter()
        .map(|(name, test)| {
            Trial::ignorable_test(name, move || {
                // A poisoned lock only says an earlier trial failed.
                let _alone = alone.then(|| ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner()));
                run_trial(name, test, ci, capture, show_output)
            })
        })
        .collect();
    libtest_mimic::run(&args, trials).exit_code()
}

fn run_trial(
    name: &str,
    test: fn(),
    ci: bool,
    capture: bool,
    show_output: bool,
) -> Result<Completion, Failed> {
    if capture {
        CAPTURED.set(Some(String::new()));
    }
    let result = panic::catch_unwind(AssertUnwindSafe(test));
    let mut out = CAPTURED.take().unwrap_or_default();
    match result {
        Ok(()) => {
            if show_output && !out.is_empty() {
                println!("---- {name} stdout ----\n{out}");
            }
            Ok(Completion::Completed)
        }
        Err(payload) => match payload.downcast::<Skip>() {
            Ok(skip) if ci => {
                let _ = write!(out, "SKIP is a failure under CI=true: {}", skip.0);
                Err(out.into())
            }
            Ok(skip) => Ok(Completion::ignored_with(skip.0)),
            Err(payload) => {
                // The panic hook has written the message and where it was
                // raised when capturing; add it when it could not.
                if !capture {
                    let _ = write!(out, "test panicked: {}", message(&*payload));
                }
                Err(out.trim_end().to_string().into())
            }
        },
    }
}

/// A panic's message, as the default hook prints it.
fn message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("Box<dyn Any>")
}

/// Panics inside a capturing trial go to its captured output, with where
/// they were raised and the backtrace if RUST_BACKTRACE asks for one; any
/// other panic (a thread a test started, `--nocapture`) to the default hook.
fn install_panic_hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            let capturing = CAPTURED.with_borrow(Option::is_some);
            if !capturing {
                return default(info);
            }
            let thread = std::thread::current();
            let mut text = format!(
                "thread '{}' panicked at {}:\n{}\n",
                thread.name().unwrap_or("<unnamed>"),
                info.location()
                    .map_or_else(|| "?".to_string(), ToString::to_string),
                message(info.payload()),
            );
            let backtrace = std::backtrace::Backtrace::capture();
            if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
                let _ = writeln!(text, "stack backtrace:\n{backtrace}");
            }
            CAPTURED.with_borrow_mut(|c| c.get_or_insert_default().push_str(&text));
        }));
    });
}
