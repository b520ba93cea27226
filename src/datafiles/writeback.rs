//! PostgreSQL's pending writeback, for the real engines: a writer's batch
//! is remembered page by page and, once its last page is written, the
//! kernel is asked to write it back with one `sync_file_range` per range
//! of adjacent blocks (bufmgr.c's `IssuePendingWritebacks`), so the disk
//! gets the requests PostgreSQL's would. The core names the batches
//! ([`crate::core::writeback`]).

use rustc_hash::FxHashMap as HashMap;

use super::data_offset;
use crate::core::io::{IoKind, PAGE_BYTES};
use crate::core::writeback::{BATCH_CLOSES, writer_of};

/// The writers' open batches: each writer's blocks written so far.
#[derive(Debug, Default)]
pub struct PendingWritebacks {
    pending: HashMap<u64, Vec<u64>>,
}

impl PendingWritebacks {
    /// The data-file ranges (offset, bytes) whose writeback starts once
    /// the write of `kind` is done: a page outside any batch its own, a
    /// batch's all at its last page, none before.
    pub fn after_write(&mut self, kind: IoKind) -> Vec<(u64, u64)> {
        let IoKind::WritePage { block, batch, .. } = kind else {
            return Vec::new();
        };
        if batch == 0 {
            return vec![(data_offset(block), PAGE_BYTES)];
        }
        let blocks = self.pending.entry(writer_of(batch)).or_default();
        blocks.push(block);
        if batch & BATCH_CLOSES == 0 {
            return Vec::new();
        }
        let mut blocks = std::mem::take(blocks);
        blocks.sort_unstable();
        blocks.dedup();
        let mut ranges: Vec<(u64, u64)> = Vec::new();
        let mut start = 0;
        for i in 1..=blocks.len() {
            if i == blocks.len() || blocks[i] != blocks[i - 1] + 1 {
                let pages = (i - start) as u64;
                ranges.push((data_offset(blocks[start]), pages * PAGE_BYTES));
                start = i;
            }
        }
        ranges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(block: u64, batch: u64) -> IoKind {
        IoKind::WritePage {
            block,
            kernel_writeback: false,
            batch,
        }
    }

    #[test]
    fn a_batch_is_written_back_at_its_last_page_one_range_per_run() {
        let mut p = PendingWritebacks::default();
        let b = 1 << 40 | 1;
        assert!(p.after_write(write(12, b)).is_empty());
        assert!(p.after_write(write(10, b)).is_empty());
        // Another writer's batch does not mix in.
        assert!(p.after_write(write(11, 2 << 40 | 1)).is_empty());
        let ranges = p.after_write(write(14, b | BATCH_CLOSES));
        assert_eq!(
            ranges,
            [
                (data_offset(10), PAGE_BYTES),
                (data_offset(12), PAGE_BYTES),
                (data_offset(14), PAGE_BYTES)
            ]
        );
        assert!(p.after_write(write(20, 1 << 40 | 2)).is_empty());
        let ranges = p.after_write(write(21, 1 << 40 | 2 | BATCH_CLOSES));
        assert_eq!(ranges, [(data_offset(20), 2 * PAGE_BYTES)]);
        // Outside any batch: the page alone, at once.
        assert_eq!(p.after_write(write(5, 0)), [(data_offset(5), PAGE_BYTES)]);
    }
}
