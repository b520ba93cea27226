//! The memory a modelled run will hold, estimated before it starts from the
//! sizes of the core's own tables, so that a run too large for this
//! machine is refused with its cause named instead of failing part-way
//! (`--max-memory`).

use anyhow::Result;

use crate::core::block_set::BlockSet;
use crate::core::buffer_pool::BufferPool;
use crate::core::config::CoreConfig;
use crate::core::kernel_flusher::KernelFlusher;
use crate::core::os_cache::OsCache;
use crate::core::stats::Stats;
use crate::core::time::SEC;
use crate::error::usage;
use crate::units::format_memory;

/// About `bytes`, in postgresql.conf's units (1.9GB, 640MB).
pub(crate) fn about(bytes: u64) -> String {
    if bytes >= 1 << 30 {
        format!("{:.1}GB", bytes as f64 / (1u64 << 30) as f64)
    } else {
        format!("{}MB", bytes.div_ceil(1 << 20))
    }
}

/// `--max-memory`'s default: well inside a laptop's memory, and more than
/// 128GB of shared_buffers with a 1TB page cache need.
pub const DEFAULT_MAX_MEMORY: &str = "4GB";

/// What the core holds for each client, bytes: its backend's state, its
/// transaction's steps, its task in the CPU scheduler and its places in
/// the queues. Measured at 880 bytes a tpcb-like client (docs/validation.md,
/// "hostile inputs, round three"), rounded up for workloads with more
/// statements.
const CLIENT_BYTES: u64 = 1024;

/// The estimate, by what holds it, largest first.
#[derive(Debug, Clone, PartialEq)]
pub struct Footprint {
    pub parts: Vec<(&'static str, u64)>,
}

impl Footprint {
    /// The estimate for `cfg` over a data set of `data_blocks` blocks.
    /// Tables the core caps itself at a few MB (the standbys' full-page
    /// image marks, `replication::MAX_IMAGE_MARKS`) are left out.
    pub fn of(cfg: &CoreConfig, data_blocks: u64) -> Footprint {
        let seconds = cfg.duration.map(|d| d.div_ceil(SEC));
        let mut parts = vec![
            (
                "shared_buffers",
                BufferPool::footprint(cfg.nbuffers, data_blocks),
            ),
            ("--os-cache", OsCache::footprint(cfg.os_cache_pages)),
            (
                "--os-cache's dirty pages",
                cfg.kernel_writeback
                    .as_ref()
                    .map_or(0, |k| KernelFlusher::footprint(k, data_blocks)),
            ),
            ("the data set (-s)", BlockSet::footprint(data_blocks)),
            ("-T", Stats::series_footprint(seconds)),
            ("-c", u64::from(cfg.clients) * CLIENT_BYTES),
        ];
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        Footprint { parts }
    }

    /// Bytes `what` holds ("-T": the per-second series a result keeps).
    pub fn part(&self, what: &str) -> u64 {
        self.parts.iter().filter(|p| p.0 == what).map(|p| p.1).sum()
    }

    /// Bytes in all.
    pub fn total(&self) -> u64 {
        self.parts.iter().map(|p| p.1).sum()
    }

    /// Refused (exit 2) above `limit` bytes, naming the largest part.
    pub fn check(&self, limit: u64) -> Result<()> {
        let total = self.total();
        if total <= limit {
            return Ok(());
        }
        let (what, bytes) = self.parts[0];
        Err(usage(format!(
            "the model would hold about {} of memory, {} of it for {what}, over --max-memory {}; \
             make {what} smaller or raise --max-memory",
            about(total),
            about(bytes),
            format_memory(limit)
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::io::PAGE_BYTES;

    #[test]
    fn the_pool_and_the_page_cache_dominate_and_the_largest_is_named() {
        let mut cfg = crate::core::test_support::config(1, 100);
        cfg.nbuffers = (512u64 << 30).div_ceil(PAGE_BYTES) as u32;
        cfg.os_cache_pages = (1u64 << 40) / PAGE_BYTES;
        cfg.duration = Some(60 * SEC);
        let f = Footprint::of(&cfg, 60_000_000);
        assert_eq!(f.parts[0].0, "--os-cache");
        // 15 bytes a cached page, 32 or so a buffer.
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        assert!((1.8..2.0).contains(&gib(f.parts[0].1)), "{f:?}");
        assert!((1.5..2.6).contains(&gib(f.parts[1].1)), "{f:?}");
        let e = f.check(2 << 30).unwrap_err().to_string();
        assert!(
            e.contains("--os-cache") && e.contains("--max-memory 2GB"),
            "{e}"
        );
        assert!(f.check(8 << 30).is_ok());
    }
}
