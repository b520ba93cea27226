//! The one checking wrapper of the tests: any [`Device`] (the simulated one
//! for the database's tests, every engine for the conformance suite),
//! held to what the driver and the core rely on at every call, whoever
//! makes it (a test's own calls or the driver loop):
//!
//! - the clock never goes back;
//! - a token is handed out only while not in flight, and each completion
//!   is of a token in flight (so none comes twice), stamped no earlier than
//!   its submission and no later than the end of its wait;
//! - a wait that brings nothing has reached its deadline, or else blocked
//!   for `max_block`;
//! - in virtual time (a device whose `timer_spin` is zero, as the trait
//!   says of one), a deadline is never overrun, and a wait with no deadline
//!   has something in flight and brings something: one with nothing would
//!   never end (a real device blocks `max_block` instead, which is allowed);
//! - the clock stays under an hour (a run that ran away).
//!
//! [`drive_checked`] runs the core on one through the driver and checks, at
//! every round, that the core's count of outstanding I/O is the device's,
//! and at the end that everything submitted completed.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::rc::Rc;

use anyhow::Result;

use super::Device;
use super::driver::{Ending, drive_observed};
use crate::core::database::Database;
use crate::core::io::{IoCompletion, IoKind, IoRequest, Token};
use crate::core::time::{Nanos, SEC};
use crate::stop::Stop;

/// Past this on its clock a test's run has run away.
const RUNAWAY: Nanos = 3_600 * SEC;

/// What a checked device has been asked and has answered, shared with the
/// driver's observer (the device itself is borrowed by the driver).
#[derive(Default)]
struct Ledger {
    /// Requests submitted and not completed yet: when, and what.
    in_flight: HashMap<Token, (Nanos, IoKind)>,
    submitted: u64,
    /// Completions, and requests failed (see [`Checked::failed`]).
    completed: u64,
}

impl Ledger {
    /// Requests in flight.
    fn in_flight(&self) -> usize {
        self.in_flight.len()
    }
}

/// A request accepted or a completion handed back, shown to the test's
/// watcher (once checked).
pub(crate) enum Event<'a> {
    Submitted(&'a IoRequest),
    /// A completion, of a request of this kind.
    Completed(IoKind),
}

/// What a test watches a checked device with.
type Watch = Box<dyn FnMut(Event)>;

/// A device, checked at every call (see the module's comment).
pub(crate) struct Checked<D: ?Sized> {
    dev: Box<D>,
    virtual_time: bool,
    /// How late each deadline goes to the device: a busy real host handing
    /// the core its timers late, in virtual time.
    late: Nanos,
    /// The device's clock when last read.
    last_now: Cell<Nanos>,
    ledger: Rc<RefCell<Ledger>>,
    watch: Option<Watch>,
}

impl<D: Device + ?Sized> Checked<D> {
    /// Boxed, so that a `Box<dyn Device>` may be checked too.
    pub(crate) fn new(dev: Box<D>) -> Checked<D> {
        Checked {
            virtual_time: dev.timer_spin() == 0,
            last_now: Cell::new(dev.now()),
            dev,
            late: 0,
            ledger: Rc::default(),
            watch: None,
        }
    }

    /// Each deadline handed to the device `late` later than asked; the
    /// checks hold the device to the deadline it was handed.
    pub(crate) fn timers_late(mut self, late: Nanos) -> Checked<D> {
        self.late = late;
        self
    }

    /// `watch` sees every request accepted and every completion, after the
    /// checks.
    pub(crate) fn watch(mut self, watch: impl FnMut(Event) + 'static) -> Checked<D> {
        self.watch = Some(Box::new(watch));
        self
    }

    /// The ledger, for the driver's observer.
    fn ledger(&self) -> Rc<RefCell<Ledger>> {
        Rc::clone(&self.ledger)
    }

    pub(crate) fn in_flight(&self) -> usize {
        self.ledger.borrow().in_flight()
    }

    pub(crate) fn virtual_time(&self) -> bool {
        self.virtual_time
    }

    /// A request the device failed: its error came back from `wait`, in
    /// place of its completion.
    pub(crate) fn failed(&mut self, token: Token) {
        let mut l = self.ledger.borrow_mut();
        assert!(
            l.in_flight.remove(&token).is_some(),
            "{}: token {token} failed while not in flight",
            self.dev.name()
        );
        l.completed += 1;
    }
}

impl<D: Device + ?Sized> Device for Checked<D> {
    fn submit(&mut self, req: IoRequest) -> Result<()> {
        let at = self.now();
        assert!(
            !self.ledger.borrow().in_flight.contains_key(&req.token),
            "{}: token {} handed out while in flight",
            self.dev.name(),
            req.token
        );
        // A request refused is not in flight.
        self.dev.submit(req)?;
        let mut l = self.ledger.borrow_mut();
        l.in_flight.insert(req.token, (at, req.kind));
        l.submitted += 1;
        drop(l);
        if let Some(watch) = &mut self.watch {
            watch(Event::Submitted(&req));
        }
        Ok(())
    }

    fn wait(
        &mut self,
        deadline: Option<Nanos>,
        max_block: Nanos,
        out: &mut Vec<IoCompletion>,
    ) -> Result<()> {
        let name = self.dev.name();
        let deadline = deadline.map(|d| d + self.late);
        let before = self.now();
        assert!(
            !self.virtual_time || deadline.is_some() || self.in_flight() > 0,
            "{name}: no I/O in flight and no timer: the wait would never end"
        );
        let first = out.len();
        let result = self.dev.wait(deadline, max_block, out);
        let after = self.now();
        for c in &out[first..] {
            let mut l = self.ledger.borrow_mut();
            let Some((submitted, kind)) = l.in_flight.remove(&c.token) else {
                panic!("{name}: completion for token {}, not in flight", c.token);
            };
            l.completed += 1;
            drop(l);
            assert!(
                (submitted..=after).contains(&c.at),
                "{name}: token {} submitted at {submitted} stamped {} (wait ended at {after})",
                c.token,
                c.at
            );
            if let Some(watch) = &mut self.watch {
                watch(Event::Completed(kind));
            }
        }
        let in_flight = self.in_flight();
        if self.virtual_time
            && let Some(d) = deadline
        {
            assert!(after <= d.max(before), "{name}: waited to {after} past {d}");
        }
        if result.is_ok() && out.len() == first {
            let reached = match deadline {
                Some(d) => after >= d.min(before + max_block),
                None if self.virtual_time => in_flight == 0,
                None => after >= before + max_block,
            };
            assert!(
                reached,
                "{name}: a wait from {before} (deadline {deadline:?}, max_block {max_block}) \
                 returned nothing at {after}"
            );
        }
        assert!(
            after < RUNAWAY,
            "{name}: the run ran away (clock at {after})"
        );
        result
    }

    /// The device's clock, checked never to go back.
    fn now(&self) -> Nanos {
        let now = self.dev.now();
        let last = self.last_now.replace(now);
        assert!(
            now >= last,
            "{}: the clock went back from {last} to {now}",
            self.dev.name()
        );
        now
    }

    fn name(&self) -> &'static str {
        self.dev.name()
    }

    fn timer_spin(&self) -> Nanos {
        self.dev.timer_spin()
    }
}

/// Runs `db` to its end on `dev` through the driver, showing it to
/// `observe` after every round as [`drive_observed`] does. Checks at every
/// round, before its requests go out, that what the core has handed out is
/// on the device and nothing else is; and, once the run has ended, that
/// nothing is outstanding and everything submitted completed.
pub(crate) fn drive_checked<D: Device + ?Sized>(
    db: &mut Database,
    dev: &mut Checked<D>,
    mut observe: impl FnMut(&Database),
) -> Result<Ending> {
    let ledger = dev.ledger();
    // Collected, not asserted at once: the first few are reported together.
    let mut mismatches = Vec::new();
    let stop = Stop::new();
    let (ending, _) = drive_observed(db, dev, &stop, None, &mut |_| {}, |db| {
        let (core, device) = (db.outstanding(), ledger.borrow().in_flight());
        if core != device {
            mismatches.push((core, device));
        }
        observe(db);
    })?;
    let name = dev.name();
    assert!(
        mismatches.is_empty(),
        "{name}: outstanding (core, device): {:?}",
        &mismatches[..mismatches.len().min(5)]
    );
    assert_eq!(db.outstanding(), 0, "{name}: outstanding at the end");
    let l = ledger.borrow();
    assert!(
        l.in_flight.is_empty(),
        "{name}: {} tokens never completed",
        l.in_flight.len()
    );
    assert_eq!(l.submitted, l.completed, "{name}");
    Ok(ending)
}
