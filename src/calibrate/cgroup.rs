//! Whether calibrate runs inside a cgroup v1 blkio throttle on the disk
//! under test: then the caps it measures do not hold back the kernel
//! flusher's writeback (`caps.kernel_writeback_uncapped`).
//!
//! cgroup v1 attributes a bio to the cgroup of the task that submits it,
//! and the flusher threads are in the root cgroup, so buffered data pages
//! written back by the kernel pass the limits ("blkio controller does not
//! account/throttle buffered writes", Red Hat solution 3726711; cgroup
//! writeback, which charges writeback to the page's owner, exists only on
//! the unified hierarchy: Documentation/admin-guide/cgroup-v2.rst,
//! "Writeback"). Measured on this project's VM: real PostgreSQL under a
//! v1 cap of 3,000 IOPS wrote 2.64 requests a transaction to the disk, its
//! cgroup's `blkio.throttle.io_serviced` counted 1.59 (docs/validation.md,
//! 2026-12-07).

use std::path::{Path, PathBuf};

/// The throttle files whose lines name a device's limit.
const LIMIT_FILES: [&str; 4] = [
    "blkio.throttle.read_iops_device",
    "blkio.throttle.write_iops_device",
    "blkio.throttle.read_bps_device",
    "blkio.throttle.write_bps_device",
];

/// Whether this process's cgroup v1 blkio cgroup, or one above it, limits
/// the disk holding `dir`.
pub(super) fn limits_disk_of(dir: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(dir).is_ok_and(|m| v1_throttle(libc::major(m.dev()), libc::minor(m.dev())))
}

/// Whether this process's cgroup v1 blkio cgroup, or one above it, limits
/// the disk `major:minor`.
fn v1_throttle(major: u32, minor: u32) -> bool {
    let (Ok(cgroups), Ok(mounts)) = (
        std::fs::read_to_string("/proc/self/cgroup"),
        std::fs::read_to_string("/proc/self/mountinfo"),
    ) else {
        return false;
    };
    let (Some(path), Some(root)) = (blkio_path(&cgroups), blkio_mount(&mounts)) else {
        return false;
    };
    let device = format!("{major}:{minor} ");
    let mut dir = Some(root.join(path.trim_start_matches('/')));
    while let Some(d) = dir {
        if !d.starts_with(&root) {
            break;
        }
        let limited = LIMIT_FILES.iter().any(|f| {
            std::fs::read_to_string(d.join(f))
                .is_ok_and(|s| s.lines().any(|l| l.starts_with(&device)))
        });
        if limited {
            return true;
        }
        dir = d.parent().map(Path::to_path_buf);
    }
    false
}

/// The blkio cgroup's path in /proc/self/cgroup ("4:blkio:/a/b").
fn blkio_path(cgroups: &str) -> Option<String> {
    cgroups.lines().find_map(|l| {
        let mut f = l.splitn(3, ':');
        let (_, controllers, path) = (f.next()?, f.next()?, f.next()?);
        controllers
            .split(',')
            .any(|c| c == "blkio")
            .then(|| path.to_string())
    })
}

/// Where the v1 blkio hierarchy is mounted, from /proc/self/mountinfo
/// ("... /sys/fs/cgroup/blkio ... - cgroup cgroup rw,blkio").
fn blkio_mount(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|l| {
        let (left, right) = l.split_once(" - ")?;
        let mut r = right.split_whitespace();
        let (fstype, _, options) = (r.next()?, r.next()?, r.next()?);
        (fstype == "cgroup" && options.split(',').any(|o| o == "blkio"))
            .then(|| left.split_whitespace().nth(4).map(PathBuf::from))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_blkio_cgroup_and_its_mount_are_read_from_procfs() {
        let cgroups = "12:cpu,cpuacct:/x\n4:blkio:/pgiosim-cap.1\n0::/init.scope\n";
        assert_eq!(blkio_path(cgroups).as_deref(), Some("/pgiosim-cap.1"));
        assert_eq!(blkio_path("0::/init.scope\n"), None);
        let mounts = "30 25 0:26 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n\
                      31 25 0:27 / /sys/fs/cgroup/blkio rw,nosuid - cgroup cgroup rw,blkio\n";
        assert_eq!(
            blkio_mount(mounts),
            Some(PathBuf::from("/sys/fs/cgroup/blkio"))
        );
        assert_eq!(blkio_mount("1 0 0:1 / / rw - cgroup2 cgroup2 rw\n"), None);
    }
}
