//! One translation from the core's I/O request to the device model's
//! operations, for every engine that models a device (the simulator and
//! the emulator): `model` and `run --emulate` charge the same I/O alike,
//! the kernel's contiguous writeback included.

use super::model::DeviceModel;
use super::profile::Op;
use crate::core::io::{IoKind, PAGE_BYTES};
use crate::core::time::Nanos;

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
        // A copy into the page cache: the device sees it only as the
        // kernel's writeback, later.
        IoKind::CacheWrite { .. } => (Op::Write, PAGE_BYTES, true),
        IoKind::Writeback { pages, flusher, .. } => {
            (Op::Write, u64::from(pages) * PAGE_BYTES, flusher)
        }
        IoKind::WalWrite { len, .. } | IoKind::StandbyWalWrite { len, .. } => {
            (Op::Write, len, false)
        }
        IoKind::WalSync { .. } | IoKind::DataSync | IoKind::StandbyWalSync { .. } => {
            (Op::Flush, 0, false)
        }
    }
}

impl DeviceModel {
    /// `kind` submitted at `now`: when it completes, and the service time
    /// drawn for it ([`DeviceModel::submit_io`]). A page write left to the
    /// kernel's writeback joins the run of the one before it when it
    /// continues it on the disk ([`DeviceModel::submit_writeback`]).
    pub fn submit_request(&mut self, now: Nanos, kind: IoKind) -> (Nanos, f64) {
        if let IoKind::CacheWrite { .. } = kind {
            // The core writes the page back itself (IoKind::Writeback).
            return (now, 0.0);
        }
        let (op, bytes, writeback) = model_op(kind);
        if let Some(s) = &mut self.stripes {
            // Done when its last piece is; the slowest piece's draw is its.
            let (done, drawn) =
                s.raid
                    .split(kind)
                    .into_iter()
                    .fold((now, 0.0), |acc, (m, piece)| {
                        let (done, drawn) = s.members[m].submit_request(now, piece);
                        if done >= acc.0 { (done, drawn) } else { acc }
                    });
            if !self.gated {
                return (done, drawn);
            }
            // And no earlier than the server lets it through.
            let passed = self.admit(now, op, bytes).round() as Nanos;
            return (done.max(passed), drawn);
        }
        if self.inode_first(now, kind) {
            return self.inode_then_flush(now);
        }
        match kind {
            IoKind::WritePage {
                block,
                kernel_writeback: true,
                ..
            } => self.submit_writeback(now, block, bytes),
            IoKind::WritePage { block, batch, .. } if batch != 0 => {
                self.submit_batched(now, batch, block, bytes)
            }
            _ => self.submit_io(now, op, bytes, writeback),
        }
    }
}
