//! Whether an fdatasync on this disk's filesystem also writes the file's
//! inode after a write that moved its mtime, and the tick of the clock
//! that moves it (`inode_sync_tick_ms`, [`crate::device::inode_times`]).
//!
//! Counted from the block device's own write requests
//! (/sys/dev/block/MAJ:MIN/stat), so it needs the disk as quiet as the
//! other probes do: pairs of an 8 KiB write and its fdatasync, first far
//! apart (every pair in a new tick), then back to back (the inode only at
//! each new tick). Beyond the page, a far-apart pair has e_s more write
//! requests and a back-to-back one e_b: a write every sync (a journal
//! commit, or a flush a device counts as a write, as a loop device does)
//! adds to both alike; the inode written once a tick adds one to e_s and
//! the pair's time over the tick to e_b. So the inode is written when
//! e_s − e_b is clearly above 0, and the tick is the back-to-back time
//! over its inode writes. (Checked on ext4 over a loop device: with a
//! journal e_s = e_b = 1.0; without, e_s = 2.0 and e_b = 1.2.)

use std::fs::OpenOptions;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use crate::device::profile::{INODE_TICK_MS_MAX, INODE_TICK_MS_MIN};

const PROBE_FILE: &str = "pgiosim-inode-probe";
/// Pairs far apart, and how far.
const SPACED_PAIRS: u64 = 40;
const SPACING: Duration = Duration::from_millis(25);
/// How long the pairs run back to back.
const BACK_TO_BACK: Duration = Duration::from_millis(600);
/// Above this many more extra write requests a spaced pair than a
/// back-to-back one, the inode is written once a tick (a busy disk adds
/// some noise to both).
const TICK_SIGNAL: f64 = 0.3;

/// The tick in ms if an fdatasync writes the inode on the filesystem
/// holding `dir`; None if it does not, or if /sys does not count the
/// disk's requests.
pub(super) fn measure(dir: &Path) -> Result<Option<f64>> {
    let dev = std::fs::metadata(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .dev();
    let stat = format!(
        "/sys/dev/block/{}:{}/stat",
        libc::major(dev),
        libc::minor(dev)
    );
    if write_requests(&stat).is_none() {
        return Ok(None);
    }
    let path = dir.join(PROBE_FILE);
    let result = probe(&path, &stat);
    let removed = std::fs::remove_file(&path);
    let tick = result?;
    removed.with_context(|| format!("removing {}", path.display()))?;
    Ok(tick)
}

fn probe(path: &Path, stat: &str) -> Result<Option<f64>> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(path)
        .with_context(|| format!("creating {}", path.display()))?;
    let page = vec![0x5au8; 8192];
    for i in 0..64 {
        f.write_at(&page, i * 8192)?;
    }
    f.sync_all()?;
    let pair = |i: u64| -> Result<()> {
        f.write_at(&page, (i % 64) * 8192)?;
        f.sync_data()?;
        Ok(())
    };
    let before = writes(stat)?;
    for i in 0..SPACED_PAIRS {
        std::thread::sleep(SPACING);
        pair(i)?;
    }
    let spaced = (writes(stat)? - before) as f64 / SPACED_PAIRS as f64 - 1.0;
    std::thread::sleep(SPACING);
    let before = writes(stat)?;
    let start = Instant::now();
    let mut pairs = 0;
    while start.elapsed() < BACK_TO_BACK {
        pair(pairs)?;
        pairs += 1;
    }
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    let back_to_back = (writes(stat)? - before) as f64 / pairs as f64 - 1.0;
    Ok(tick(spaced, back_to_back, pairs, elapsed))
}

/// The tick, from the extra write requests a pair far apart (`spaced`)
/// and back to back (`back_to_back`, `pairs` of them in `elapsed_ms`).
fn tick(spaced: f64, back_to_back: f64, pairs: u64, elapsed_ms: f64) -> Option<f64> {
    if spaced - back_to_back < TICK_SIGNAL {
        return None;
    }
    // A write every sync, whatever the tick, is in both.
    let every_sync = (spaced - 1.0).max(0.0).round();
    let inodes = ((back_to_back - every_sync) * pairs as f64)
        .round()
        .max(1.0);
    Some(tick_ms(elapsed_ms, inodes as u64))
}

/// The tick from `inodes` inode writes over `elapsed_ms` back to back, to
/// 0.1 ms and inside a profile's bounds.
fn tick_ms(elapsed_ms: f64, inodes: u64) -> f64 {
    ((elapsed_ms / inodes as f64) * 10.0)
        .round()
        .clamp(INODE_TICK_MS_MIN * 10.0, INODE_TICK_MS_MAX * 10.0)
        / 10.0
}

fn writes(stat: &str) -> Result<u64> {
    write_requests(stat).with_context(|| format!("reading {stat}"))
}

/// Writes completed, the fifth field of a block device's stat file.
fn write_requests(stat: &str) -> Option<u64> {
    let text = std::fs::read_to_string(stat).ok()?;
    text.split_whitespace().nth(4)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_difference_between_spaced_and_back_to_back_pairs_is_a_tick() {
        // ext4 on a loop device with a journal: one more request every sync.
        assert_eq!(tick(1.02, 1.015, 7000, 600.0), None);
        // Without a journal: the inode at every spaced sync, one in five
        // back to back (a pair of 0.8 ms, a tick of 4 ms).
        assert_eq!(tick(2.02, 1.2, 750, 600.0), Some(4.0));
        // This VM's disk: no write every sync, the same inode writes.
        assert_eq!(tick(1.0, 0.2, 750, 600.0), Some(4.0));
        // Nothing more than the page.
        assert_eq!(tick(0.0, 0.0, 750, 600.0), None);
    }

    #[test]
    fn the_tick_is_the_time_over_the_inode_writes_within_bounds() {
        assert_eq!(tick_ms(600.0, 150), 4.0);
        assert_eq!(tick_ms(600.0, 1_000_000), INODE_TICK_MS_MIN);
        assert_eq!(tick_ms(600.0, 1), INODE_TICK_MS_MAX);
    }
}
