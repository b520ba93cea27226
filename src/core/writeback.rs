//! A writer's pending writeback, as PostgreSQL keeps it
//! (`WritebackContext` in bufmgr.c).
//!
//! A writer whose `*_flush_after` is not 0 remembers each page it writes
//! (`ScheduleBufferTagForWriteback`); once it has `flush_after` of them it
//! sorts them and asks the kernel to write them back, one
//! `sync_file_range` per run of adjacent blocks (`IssuePendingWritebacks`).
//! So the pages of one batch that lie next to each other reach the disk as
//! one request, whatever order they were written in. The core names the
//! batch each page write belongs to; what a batch becomes on the disk is
//! the device layer's business ([`crate::device::block_layer`]).

use super::io::{IoKind, PAGE_BYTES};

/// Set in a batch id on the batch's last page: the writer asks for its
/// writeback now (`IssuePendingWritebacks` once `nr_pending` reaches
/// `max_pending`).
pub const BATCH_CLOSES: u64 = 1 << 63;

/// The batch a batch id names, without [`BATCH_CLOSES`].
pub fn batch_of(id: u64) -> u64 {
    id & !BATCH_CLOSES
}

/// The writer a batch id belongs to: batches of one writer follow each
/// other, so a writer has one open batch at a time.
pub fn writer_of(id: u64) -> u64 {
    batch_of(id) >> 40
}

/// Which writer a context belongs to: batches of different writers never
/// merge, as each writer issues its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writer {
    Checkpointer,
    BgWriter,
    /// A client's backend, by client number.
    Backend(u32),
    Vacuum,
}

impl Writer {
    /// A number no other writer has, for the batch id's high half.
    fn id(self) -> u64 {
        match self {
            Writer::Checkpointer => 1,
            Writer::BgWriter => 2,
            Writer::Vacuum => 3,
            Writer::Backend(c) => 4 + u64::from(c),
        }
    }
}

/// One writer's writeback context.
#[derive(Clone, Debug)]
pub struct WritebackContext {
    writer: Writer,
    /// Pages a batch holds (`*_flush_after` / BLCKSZ); 0: the writer leaves
    /// writeback to the kernel.
    max_pending: u64,
    /// Pages in the current batch.
    pending: u64,
    /// Batches this writer has started.
    batches: u64,
}

impl WritebackContext {
    /// The context of `writer`, whose `*_flush_after` is `flush_after`
    /// bytes (0: no writeback of its own).
    pub fn new(writer: Writer, flush_after: u64) -> WritebackContext {
        WritebackContext {
            writer,
            max_pending: flush_after / PAGE_BYTES,
            pending: 0,
            batches: 0,
        }
    }

    /// Whether the writer leaves writeback to the kernel's flusher.
    pub fn kernel(&self) -> bool {
        self.max_pending == 0
    }

    /// The request that writes `block` now, in its batch.
    pub fn write_page(&mut self, block: u64) -> IoKind {
        IoKind::WritePage {
            block,
            kernel_writeback: self.kernel(),
            batch: self.schedule(),
        }
    }

    /// The batch the page written now joins: a non-zero id shared by the
    /// batch's pages and no other's, with [`BATCH_CLOSES`] set on its last;
    /// 0 when the kernel writes it back.
    pub fn schedule(&mut self) -> u64 {
        if self.kernel() {
            return 0;
        }
        if self.pending == 0 {
            self.batches += 1;
        }
        self.pending += 1;
        let id = self.writer.id() << 40 | (self.batches & ((1 << 40) - 1));
        if self.pending == self.max_pending {
            self.pending = 0;
            return id | BATCH_CLOSES;
        }
        id
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_holds_flush_after_pages_then_a_new_one_starts() {
        // checkpoint_flush_after = 256kB: 32 pages a batch.
        let mut c = WritebackContext::new(Writer::Checkpointer, 256 * 1024);
        let ids: Vec<u64> = (0..70).map(|_| c.schedule()).collect();
        // The 32nd page closes the batch.
        assert_eq!(ids[31], ids[0] | BATCH_CLOSES);
        assert_eq!(ids[63], ids[32] | BATCH_CLOSES);
        let ids: Vec<u64> = ids.into_iter().map(batch_of).collect();
        assert!(ids[..32].iter().all(|&i| i == ids[0]));
        assert!(ids[32..64].iter().all(|&i| i == ids[32]));
        assert_ne!(ids[0], ids[32]);
        assert_ne!(ids[32], ids[64]);
        assert!(ids.iter().all(|&i| i != 0));
    }

    #[test]
    fn writers_never_share_a_batch_and_flush_after_zero_is_the_kernels() {
        let mut a = WritebackContext::new(Writer::Checkpointer, 8192);
        let mut b = WritebackContext::new(Writer::BgWriter, 8192);
        let mut c = WritebackContext::new(Writer::Backend(0), 8192);
        let mut d = WritebackContext::new(Writer::Backend(1), 8192);
        let ids = [a.schedule(), b.schedule(), c.schedule(), d.schedule()];
        for (i, x) in ids.iter().enumerate() {
            assert!(ids[i + 1..].iter().all(|y| y != x), "{ids:?}");
        }
        let mut k = WritebackContext::new(Writer::Backend(3), 0);
        assert!(k.kernel());
        assert_eq!(k.schedule(), 0);
    }
}
