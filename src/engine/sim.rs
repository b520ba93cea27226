//! The simulated device: a virtual clock and an event queue in front of a
//! device model. It implements the same `Device` trait as io_uring and
//! psync, so the very same driver loop and core run in virtual time.

use anyhow::Result;

use super::Device;
use crate::core::io::{IoCompletion, IoRequest, Token};
use crate::core::time::Nanos;
use crate::core::timer_queue::TimerQueue;
use crate::device::model::DeviceModel;

/// A device in virtual time: each request completes when the model says.
/// Standbys' WAL I/O goes to their own device models.
pub struct SimDevice {
    model: DeviceModel,
    standbys: Vec<DeviceModel>,
    now: Nanos,
    pending: TimerQueue<Token>,
}

impl SimDevice {
    /// A device at virtual time 0.
    pub fn new(model: DeviceModel) -> SimDevice {
        SimDevice {
            model,
            standbys: Vec::new(),
            now: 0,
            pending: TimerQueue::new(),
        }
    }
}

impl SimDevice {
    /// Adds the next standby's WAL device (standby `n` is the n-th added).
    pub fn add_standby(&mut self, model: DeviceModel) {
        self.standbys.push(model);
    }
}

impl Device for SimDevice {
    fn submit(&mut self, req: IoRequest) -> Result<()> {
        let model = match req.kind.standby() {
            Some(s) => self
                .standbys
                .get_mut(s as usize)
                .ok_or_else(|| anyhow::anyhow!("standby {s} has no device model"))?,
            None => &mut self.model,
        };
        let (done, _) = model.submit_request(self.now, req.kind);
        self.pending.push(done.max(self.now), req.token);
        Ok(())
    }

    fn wait(
        &mut self,
        deadline: Option<Nanos>,
        _max_block: Nanos,
        out: &mut Vec<IoCompletion>,
    ) -> Result<()> {
        match self.pending.peek_time() {
            Some(t) if deadline.is_none_or(|d| t <= d) => {
                self.now = self.now.max(t);
                while let Some((t2, token)) = self.pending.peek() {
                    if t2 > self.now {
                        break;
                    }
                    self.pending.pop();
                    out.push(IoCompletion {
                        token,
                        at: self.now,
                    });
                }
            }
            _ => {
                if let Some(d) = deadline {
                    self.now = self.now.max(d);
                }
            }
        }
        Ok(())
    }

    fn now(&self) -> Nanos {
        self.now
    }

    #[inline]
    fn skip_to(&mut self, at: Nanos) -> bool {
        if self.pending.peek_time().is_some_and(|t| t <= at) {
            return false;
        }
        self.now = self.now.max(at);
        true
    }

    fn name(&self) -> &'static str {
        "model"
    }

    fn timer_spin(&self) -> Nanos {
        // Virtual time never wakes late.
        0
    }

    fn counted_ios(&self) -> Option<[f64; 2]> {
        Some(self.model.counted_ios())
    }

    fn disk_ios(&self) -> Option<[f64; 2]> {
        Some(self.model.disk_ios())
    }
}
