//! When an fdatasync also writes the file's inode.
//!
//! A write that moves a file's mtime dirties its inode, and the kernel's
//! clock for timestamps is coarse (`current_time`: the jiffy, 4 ms at
//! HZ=250), so only a file's first write in each tick moves it. On ext4
//! without a journal an fdatasync then writes the inode block itself
//! before its flush: one more write I/O, in the caller's cgroup, where a
//! journalled filesystem would log the timestamp and leave the fdatasync
//! alone. Measured by `calibrate` (`inode_sync_tick_ms`); on this
//! project's VM an fdatasync 10 ms after its write always wrote the inode,
//! and back to back one in six or seven did (docs/validation.md,
//! 2026-12-07).

use std::collections::HashMap;

use crate::core::io::IoKind;
use crate::core::time::Nanos;

/// Bytes of the inode write (the filesystem's block).
pub const INODE_BYTES: u64 = 4096;

/// What a request does to a file's timestamps: writes it (its mtime may
/// move) or fdatasyncs it; None if neither.
enum Touch {
    Write(u64),
    Sync(u64),
}

fn touch(kind: IoKind) -> Option<Touch> {
    const DATA: u64 = u64::MAX;
    let standby_file =
        |standby: u8, segment: u32| ((u64::from(standby) + 1) << 32) | u64::from(segment);
    Some(match kind {
        IoKind::WalWrite { segment, .. } => Touch::Write(u64::from(segment)),
        IoKind::WalSync { segment } => Touch::Sync(u64::from(segment)),
        IoKind::StandbyWalWrite {
            standby, segment, ..
        } => Touch::Write(standby_file(standby, segment)),
        IoKind::StandbyWalSync { standby, segment } => Touch::Sync(standby_file(standby, segment)),
        IoKind::WritePage { .. } | IoKind::CacheWrite { .. } => Touch::Write(DATA),
        IoKind::DataSync => Touch::Sync(DATA),
        // The kernel's own writeback and reads move no mtime.
        IoKind::Writeback { .. }
        | IoKind::ReadPage { .. }
        | IoKind::ReadRun { .. }
        | IoKind::WalRead { .. } => return None,
    })
}

/// Each file's last mtime tick, and whether its inode is dirty since.
#[derive(Debug)]
pub struct InodeTimes {
    tick: Nanos,
    files: HashMap<u64, Times>,
}

#[derive(Debug, Clone, Copy)]
struct Times {
    tick: u64,
    dirty: bool,
}

impl InodeTimes {
    /// Timestamps that move once a `tick_ms`.
    pub fn new(tick_ms: f64) -> InodeTimes {
        InodeTimes {
            tick: ((tick_ms * 1e6).round() as Nanos).max(1),
            files: HashMap::new(),
        }
    }

    /// File `file` was written at `now`: its mtime moves if this is a
    /// later tick than its last.
    pub fn written(&mut self, now: Nanos, file: u64) {
        let tick = now / self.tick;
        let t = self
            .files
            .entry(file)
            .or_insert(Times { tick, dirty: true });
        if tick > t.tick {
            *t = Times { tick, dirty: true };
        }
    }

    /// File `file` is fdatasync'd: true if its inode must be written first
    /// (and it is clean after).
    pub fn synced(&mut self, file: u64) -> bool {
        self.files
            .get_mut(&file)
            .is_some_and(|t| std::mem::replace(&mut t.dirty, false))
    }

    /// A request at `now`: true if it is an fdatasync that writes the
    /// inode first.
    pub fn request(&mut self, now: Nanos, kind: IoKind) -> bool {
        match touch(kind) {
            Some(Touch::Sync(file)) => self.synced(file),
            Some(Touch::Write(file)) => {
                self.written(now, file);
                false
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::MS;

    #[test]
    fn only_a_write_in_a_later_tick_makes_the_next_sync_write_the_inode() {
        let mut t = InodeTimes::new(4.0);
        let wal = |segment| IoKind::WalWrite {
            segment,
            offset: 0,
            len: 8192,
        };
        let sync = |segment| IoKind::WalSync { segment };
        // The first write ever moves mtime.
        assert!(!t.request(MS, wal(0)));
        assert!(t.request(MS, sync(0)));
        // Again in the same tick: no inode write.
        assert!(!t.request(2 * MS, wal(0)));
        assert!(!t.request(2 * MS, sync(0)));
        // The next tick moves it again, once, whatever the writes.
        t.request(5 * MS, wal(0));
        t.request(6 * MS, wal(0));
        assert!(t.request(6 * MS, sync(0)));
        assert!(!t.request(6 * MS, sync(0)));
        // Files are apart: another segment's write leaves segment 0 clean.
        t.request(9 * MS, wal(1));
        assert!(!t.request(9 * MS, sync(0)));
        assert!(t.request(9 * MS, sync(1)));
        // A sync of a file never written writes nothing.
        assert!(!t.request(9 * MS, IoKind::DataSync));
    }

    #[test]
    fn syncs_farther_apart_than_a_tick_each_write_the_inode() {
        let mut t = InodeTimes::new(4.0);
        let (mut n, mut now) = (0, 0);
        for _ in 0..100 {
            t.written(now, 7);
            n += u32::from(t.synced(7));
            now += 10 * MS;
        }
        assert_eq!(n, 100);
        // Back to back at 0.5 ms a pair: one in eight.
        let (mut n, mut now) = (0, 0);
        let mut t = InodeTimes::new(4.0);
        for _ in 0..800 {
            t.written(now, 7);
            n += u32::from(t.synced(7));
            now += MS / 2;
        }
        assert_eq!(n, 100);
    }
}
