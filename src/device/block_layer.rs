//! The block layer between PostgreSQL and the volume: what the kernel makes
//! of the core's requests before a volume's caps count them.
//!
//! * **Split.** The kernel builds a request of at most `BIO_MAX_VECS` (256)
//!   pages, 1 MiB, and splits one larger than the disk takes
//!   (`queue/max_sectors_kb`, and `queue/max_segments` pages;
//!   `__bio_split_to_limits` in block/blk-merge.c). Each part is an I/O to
//!   the caps: blk-throttle charges split bios since Linux 5.18
//!   (`blk_throtl_charge_bio_split`), and a provider sees the parts.
//! * **Merge.** Adjacent pages reach the disk as one request where the
//!   writer asks for them at once: a PostgreSQL writer's writeback batch
//!   (`IssuePendingWritebacks` sorts a batch and calls `sync_file_range`
//!   once per range of adjacent blocks, see [`crate::core::writeback`]), and
//!   the kernel flusher's writeback of pages it finds contiguous.
//! * **Count.** A volume that counts I/Os of up to `caps.op_size_kib` as one
//!   (EBS: 256 KiB on SSD volumes, and "when small I/O operations are
//!   physically sequential, Amazon EBS attempts to merge them",
//!   <https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html>)
//!   charges each request ceil(bytes / unit); without a unit, one a request.
//!
//! Sans-I/O and deterministic, like the device model it feeds.

use rustc_hash::FxHashMap as HashMap;

use super::profile::Profile;
use crate::core::writeback;

/// The largest request the kernel builds from pages: BIO_MAX_VECS = 256
/// pages of 4 KiB.
const BIO_MAX_BYTES: u64 = 1 << 20;
/// Bytes of a data page.
const PAGE: u64 = crate::core::io::PAGE_BYTES;

/// What the kernel makes of requests, and what a volume counts of them.
#[derive(Clone, Debug)]
pub struct BlockLayer {
    counting: Counting,
    /// The kernel flusher's current contiguous run: its bytes, and the
    /// block after its last page.
    writeback_run: u64,
    writeback_end: Option<u64>,
    /// Each writer's open writeback batch (by the batch id's writer half).
    batches: HashMap<u64, Batch>,
}

/// How a contiguous request becomes I/Os against the caps.
#[derive(Clone, Copy, Debug)]
struct Counting {
    /// The largest request that reaches the disk, bytes.
    max_request: u64,
    /// Bytes counted as one I/O against the caps; None: one a request.
    unit: Option<u64>,
}

impl Counting {
    fn ios(self, bytes: u64) -> f64 {
        let per_part = |b: u64| self.unit.map_or(1, |u| b.div_ceil(u).max(1));
        let (full, rest) = (bytes / self.max_request, bytes % self.max_request);
        let n = full * per_part(self.max_request) + if rest > 0 { per_part(rest) } else { 0 };
        n.max(1) as f64
    }

    /// What a range of `pages` adjacent pages counts (0 for none).
    fn range(self, pages: u64) -> f64 {
        if pages == 0 {
            0.0
        } else {
            self.ios(pages * PAGE)
        }
    }
}

/// A writeback batch so far.
#[derive(Clone, Debug, Default)]
struct Batch {
    id: u64,
    /// Its blocks, sorted.
    blocks: Vec<u64>,
    /// I/Os charged for it beyond what its ranges now count (a page that
    /// joined two ranges made one I/O fewer): taken off its next charges.
    credit: f64,
}

impl BlockLayer {
    /// The block layer in front of `profile`'s disk.
    pub fn new(profile: &Profile) -> BlockLayer {
        let limit = profile.max_request_kib.map(|k| u64::from(k) * 1024);
        BlockLayer {
            counting: Counting {
                max_request: limit.map_or(BIO_MAX_BYTES, |l| l.min(BIO_MAX_BYTES)),
                unit: profile.caps.op_size_kib.map(|k| u64::from(k) * 1024),
            },
            writeback_run: 0,
            writeback_end: None,
            batches: HashMap::default(),
        }
    }

    /// I/Os one contiguous request of `bytes` counts as against the caps:
    /// split into requests of at most the largest the disk takes, each
    /// counted by the volume's unit (at least one).
    pub fn ios(&self, bytes: u64) -> f64 {
        self.counting.ios(bytes)
    }

    /// I/Os a page write left to the kernel's flusher adds: none while it
    /// continues the flusher's run on the disk within a request, else the
    /// run's next.
    pub fn kernel_writeback(&mut self, block: u64, bytes: u64) -> f64 {
        let continues = self.writeback_end == Some(block);
        self.writeback_end = Some(block + 1);
        let run = if continues { self.writeback_run } else { 0 };
        self.writeback_run = run + bytes;
        let c = self.counting;
        c.ios(run + bytes) - if run == 0 { 0.0 } else { c.ios(run) }
    }

    /// I/Os the write of `block` in writeback batch `batch` adds to the
    /// batch's count: its ranges of adjacent blocks, each one request (or
    /// more, see [`BlockLayer::ios`]). A page that joins a range adds none;
    /// one that joins two makes one fewer, taken off the batch's next.
    pub fn batched(&mut self, batch: u64, block: u64) -> f64 {
        let c = self.counting;
        let batch = writeback::batch_of(batch);
        let b = self.batches.entry(writeback::writer_of(batch)).or_default();
        if b.id != batch {
            *b = Batch {
                id: batch,
                ..Batch::default()
            };
        }
        let Err(at) = b.blocks.binary_search(&block) else {
            return 0.0; // written twice in one batch: one page on the disk
        };
        let before = |i: usize| {
            let mut n = 0;
            while n < i && b.blocks[i - 1 - n] == block - 1 - n as u64 {
                n += 1;
            }
            n as u64
        };
        let after = |i: usize| {
            let mut n = 0;
            while i + n < b.blocks.len() && b.blocks[i + n] == block + 1 + n as u64 {
                n += 1;
            }
            n as u64
        };
        let (left, right) = (before(at), after(at));
        let delta = c.range(left + 1 + right) - c.range(left) - c.range(right);
        b.blocks.insert(at, block);
        let charge = (delta - b.credit).max(0.0);
        b.credit = (b.credit - delta).max(0.0);
        charge
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layer(max_request_kib: Option<u32>, unit_kib: Option<u32>) -> BlockLayer {
        let mut p = Profile::shipped("nvme").expect("shipped");
        p.max_request_kib = max_request_kib;
        p.caps.op_size_kib = unit_kib;
        BlockLayer::new(&p)
    }

    #[test]
    fn a_request_splits_at_the_disks_limit_and_counts_by_the_unit() {
        // virtio: 254 segments of 4 KiB, 1,016 KiB: a 1 MiB write is two.
        let virtio = layer(Some(1016), None);
        assert_eq!(virtio.ios(1 << 20), 2.0);
        assert_eq!(virtio.ios(8192), 1.0);
        // No limit: the kernel's own 1 MiB.
        assert_eq!(layer(None, None).ios(3 << 20), 3.0);
        assert_eq!(layer(None, None).ios(1 << 20), 1.0);
        // EBS: 256 KiB a unit, 1 MiB counts 4.
        assert_eq!(layer(None, Some(256)).ios(1 << 20), 4.0);
        assert_eq!(layer(None, Some(256)).ios(8192), 1.0);
    }

    #[test]
    fn adjacent_pages_of_a_batch_are_one_request_in_any_order() {
        let mut l = layer(None, None);
        let batch = 1 << 40 | 1;
        // 10, 12, 11: two ranges, then one.
        let charged: f64 = [10, 12, 11].iter().map(|&b| l.batched(batch, b)).sum();
        assert_eq!(charged, 2.0, "one charged twice, refund pending");
        // The refund goes to the batch's next range.
        assert_eq!(l.batched(batch, 50), 0.0);
        assert_eq!(l.batched(batch, 60), 1.0);
        // A new batch of the same writer starts afresh.
        assert_eq!(l.batched(1 << 40 | 2, 13), 1.0);
        // Another writer's batch never merges with it.
        assert_eq!(l.batched(2 << 40 | 1, 14), 1.0);
    }

    #[test]
    fn a_long_range_counts_a_unit_at_a_time() {
        // 64 adjacent pages (512 KiB) in 256 KiB units: two.
        let mut l = layer(None, Some(256));
        let batch = 2 << 40 | 7;
        let total: f64 = (0..64).map(|b| l.batched(batch, 1000 + b)).sum();
        assert_eq!(total, 2.0);
        // Kernel writeback: the same.
        let mut k = layer(None, Some(256));
        let total: f64 = (0..64).map(|b| k.kernel_writeback(1000 + b, PAGE)).sum();
        assert_eq!(total, 2.0);
    }

    proptest::proptest! {
        /// Whatever the order of a batch's pages, what it is charged is
        /// what its sorted ranges count.
        #[test]
        fn a_batch_is_charged_its_ranges(
            blocks in proptest::collection::btree_set(0u64..200, 1..64),
            seed in 0u64..1000,
        ) {
            use rand::seq::SliceRandom;
            use rand::SeedableRng;
            let sorted: Vec<u64> = blocks.iter().copied().collect();
            let mut order = sorted.clone();
            order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(seed));
            let mut l = layer(Some(64), Some(32));
            let batch = 3 << 40 | 1;
            let charged: f64 = order.iter().map(|&b| l.batched(batch, b)).sum();
            let mut expected = 0.0;
            let mut run = 1u64;
            for w in sorted.windows(2) {
                if w[1] == w[0] + 1 { run += 1 } else { expected += l.ios(run * PAGE); run = 1 }
            }
            expected += l.ios(run * PAGE);
            // Refunds only ever lower a later charge, never below zero.
            proptest::prop_assert!(charged >= expected, "{charged} < {expected}");
            proptest::prop_assert!(charged <= expected + sorted.len() as f64);
        }
    }
}
