//! The simulated device: a virtual clock and an event queue in front of a
//! device model. It implements the same `Device` trait as io_uring and
//! psync, so the very same driver loop and core run in virtual time.

use anyhow::Result;

use super::Device;
use crate::core::io::{IoCompletion, IoKind, IoRequest, PAGE_BYTES, Token};
use crate::core::time::Nanos;
use crate::core::timer_queue::TimerQueue;
use crate::device::model::{DeviceModel, Op};

/// A device in virtual time: each request completes when the model says.
/// Standbys' WAL I/O goes to their own device models.
pub struct SimDevice {
    model: DeviceModel,
    standbys: Vec<DeviceModel>,
    now: Nanos,
    pending: TimerQueue<Token>,
    /// The data block after the last write left to the kernel's writeback.
    writeback_end: Option<u64>,
}

impl SimDevice {
    /// A device at virtual time 0.
    pub fn new(model: DeviceModel) -> SimDevice {
        SimDevice {
            model,
            standbys: Vec::new(),
            now: 0,
            pending: TimerQueue::new(),
            writeback_end: None,
        }
    }
}

impl SimDevice {
    /// Adds the next standby's WAL device (standby `n` is the n-th added).
    pub fn add_standby(&mut self, model: DeviceModel) {
        self.standbys.push(model);
    }
}

/// What a request is, in the device model's terms: the operation, its
/// bytes, and whether the kernel starts its writeback.
pub fn model_op(kind: IoKind) -> (Op, u64, bool) {
    match kind {
        IoKind::ReadPage { .. } => (Op::Read, PAGE_BYTES, false),
        IoKind::ReadRun { pages, .. } => (Op::Read, u64::from(pages) * PAGE_BYTES, false),
        IoKind::WalRead { len, .. } => (Op::Read, len, false),
        IoKind::WritePage {
            kernel_writeback, ..
        } => (Op::Write, PAGE_BYTES, kernel_writeback),
        IoKind::WalWrite { len, .. } | IoKind::StandbyWalWrite { len, .. } => {
            (Op::Write, len, false)
        }
        IoKind::WalSync { .. } | IoKind::DataSync | IoKind::StandbyWalSync { .. } => {
            (Op::Flush, 0, false)
        }
    }
}

impl Device for SimDevice {
    fn submit(&mut self, req: IoRequest) -> Result<()> {
        let (op, bytes, writeback) = model_op(req.kind);
        let model = match req.kind.standby() {
            Some(s) => self
                .standbys
                .get_mut(s as usize)
                .ok_or_else(|| anyhow::anyhow!("standby {s} has no device model"))?,
            None => &mut self.model,
        };
        let (done, _) = match req.kind {
            IoKind::WritePage {
                block,
                kernel_writeback: true,
            } => {
                let continues = self.writeback_end == Some(block);
                self.writeback_end = Some(block + 1);
                model.submit_writeback(self.now, bytes, continues)
            }
            _ => model.submit_io(self.now, op, bytes, writeback),
        };
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

    fn name(&self) -> &'static str {
        "model"
    }

    fn timer_spin(&self) -> Nanos {
        // Virtual time never wakes late.
        0
    }
}
