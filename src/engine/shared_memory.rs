//! The buffer pool's memory, held for real during a `run --buffered`.
//!
//! pgiosim models shared_buffers instead of allocating it, but PostgreSQL's
//! shared_buffers is real memory: in the same memory cgroup or machine it
//! leaves the kernel page cache that much less room. At scale 100 under a
//! 512 MB memory cgroup, PostgreSQL's cgroup held 140 MB of shared memory
//! and ~300 MB of page cache, pgiosim's ~500 MB of page cache, so pgiosim
//! read 27% fewer blocks from the disk. With --buffered, the run therefore
//! maps and touches shared memory of shared_buffers' size, as the
//! postmaster does, and frees it at the end.

use anyhow::{Result, bail};

/// Memory left to the rest of the machine, bytes: the reservation must not
/// push it into swapping or the OOM killer.
const HEADROOM_BYTES: u64 = 256 << 20;

/// A touched, shared anonymous mapping; unmapped on drop.
pub struct SharedMemory {
    addr: *mut libc::c_void,
    len: usize,
}

impl SharedMemory {
    /// Maps `bytes` of shared anonymous memory and touches every page, so
    /// the kernel charges it now, as PostgreSQL's shared_buffers is.
    /// Refuses, naming the setting, if the machine has not that much
    /// memory available.
    pub fn hold(bytes: u64) -> Result<SharedMemory> {
        if let Some(avail) = mem_available()
            && bytes.saturating_add(HEADROOM_BYTES) > avail
        {
            bail!(
                "shared_buffers={}: --buffered holds the buffer pool's memory as PostgreSQL \
                 does, and this machine has {} MB available; lower shared_buffers or run \
                 without --buffered",
                crate::units::format_memory(bytes),
                avail >> 20
            );
        }
        let len =
            usize::try_from(bytes).map_err(|_| anyhow::anyhow!("shared_buffers too large"))?;
        if len == 0 {
            return Ok(SharedMemory {
                addr: std::ptr::null_mut(),
                len: 0,
            });
        }
        // SAFETY: a fresh anonymous mapping; no existing memory is touched.
        let addr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED | libc::MAP_ANONYMOUS,
                -1,
                0,
            )
        };
        if addr == libc::MAP_FAILED {
            bail!(
                "shared_buffers={}: cannot map that much shared memory: {}",
                crate::units::format_memory(bytes),
                std::io::Error::last_os_error()
            );
        }
        let page = 4096;
        let base = addr.cast::<u8>();
        let mut off = 0;
        while off < len {
            // SAFETY: `off` < `len`, inside the mapping just made writable.
            unsafe { base.add(off).write_volatile(0) };
            off += page;
        }
        Ok(SharedMemory { addr, len })
    }

    /// Bytes held.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        if self.len > 0 {
            // SAFETY: the mapping made in `hold`, unmapped once.
            unsafe { libc::munmap(self.addr, self.len) };
        }
    }
}

/// MemAvailable from /proc/meminfo, bytes; None where there is none.
fn mem_available() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn holds_and_releases_memory() {
        let m = SharedMemory::hold(8 << 20).unwrap();
        assert_eq!(m.len(), 8 << 20);
        drop(m);
        assert!(SharedMemory::hold(0).unwrap().is_empty());
    }

    #[test]
    fn more_than_the_machine_has_is_refused_with_the_setting() {
        let e = SharedMemory::hold(1 << 60).err().unwrap().to_string();
        assert!(
            e.contains("shared_buffers=") && e.contains("available"),
            "{e}"
        );
    }
}
