//! The buffer pool's memory, held for real during a `run --buffered`.
//!
//! pgiosim models shared_buffers instead of allocating it, but PostgreSQL's
//! shared_buffers is real memory: in the same memory cgroup or machine it
//! leaves the kernel page cache that much less room. At scale 100 under a
//! 512 MB memory cgroup, PostgreSQL's cgroup held 140 MB of shared memory
//! and ~300 MB of page cache, pgiosim's ~500 MB of page cache, so pgiosim
//! read 27% fewer blocks from the disk. With --buffered, the run therefore
//! maps shared memory of shared_buffers' size, as the postmaster does.
//!
//! The postmaster maps the segment and touches only what it initializes
//! (the descriptors, a few MB); a buffer's 8 KiB is first touched when a
//! backend reads a page into it (`BufferManagerShmemInit` does not clear
//! the blocks). So the memory is charged as the pool fills, and the page
//! cache has more room while it does. The run does the same: a thread
//! touches the buffers the modelled pool has used so far, off the engine's
//! loop, as PostgreSQL's backends pay each first touch in parallel. Touching
//! it all up front took 88 s of system CPU for 16 GB on this project's VM
//! (docs/validation.md, 2026-12-07).

use anyhow::{Result, bail};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

/// Memory left to the rest of the machine, bytes: the reservation must not
/// push it into swapping or the OOM killer.
const HEADROOM_BYTES: u64 = 256 << 20;

/// One shared buffer, bytes.
const BUFFER_BYTES: usize = 8192;

/// Bytes the toucher touches between looks at its stop flag.
const TOUCH_CHUNK: usize = 2 << 20;

/// How often the toucher looks for newly used buffers: the driver reports
/// them once a second.
const TOUCH_POLL: Duration = Duration::from_millis(20);

/// A shared anonymous mapping, touched buffer by buffer as the pool
/// fills; unmapped on drop.
pub struct SharedMemory {
    addr: *mut libc::c_void,
    len: usize,
    /// Buffers the pool has used: the toucher touches up to here.
    target: Arc<AtomicUsize>,
    /// Bytes touched so far.
    touched: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    toucher: Option<JoinHandle<()>>,
}

/// The mapping's address and length, for the toucher thread.
struct Region(usize, usize);

impl Region {
    /// Touch each 4 KiB page of bytes `from..to`; `to` is at most the
    /// mapping's length.
    fn touch(&self, from: usize, to: usize) {
        debug_assert!(to <= self.1);
        for off in (from.next_multiple_of(4096)..to).step_by(4096) {
            // SAFETY: `off` < the mapping's length; the mapping outlives the
            // toucher, which `SharedMemory::drop` joins before unmapping.
            unsafe { (self.0 as *mut u8).add(off).write_volatile(0) };
        }
    }
}

impl SharedMemory {
    /// Maps `bytes` of shared anonymous memory, charged as
    /// [`SharedMemory::buffers_used`] says the pool fills. Refuses, naming
    /// the setting, if the machine has not that much memory available.
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
        let mut held = SharedMemory {
            addr: std::ptr::null_mut(),
            len: 0,
            target: Arc::new(AtomicUsize::new(0)),
            touched: Arc::new(AtomicUsize::new(0)),
            stop: Arc::new(AtomicBool::new(false)),
            toucher: None,
        };
        if len == 0 {
            return Ok(held);
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
        held.addr = addr;
        held.len = len;
        let region = Region(addr as usize, len);
        let (target, touched, stop) =
            (held.target.clone(), held.touched.clone(), held.stop.clone());
        let toucher = std::thread::Builder::new()
            .name("shared_buffers".into())
            .spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let want = target.load(Ordering::Relaxed).saturating_mul(BUFFER_BYTES);
                    let done = touched.load(Ordering::Relaxed);
                    if want > done {
                        // A chunk at a time, so that a stop is not kept
                        // waiting behind a large pool's first touches.
                        let to = want.min(region.1).min(done + TOUCH_CHUNK);
                        region.touch(done, to);
                        touched.store(to, Ordering::Relaxed);
                    } else {
                        std::thread::sleep(TOUCH_POLL);
                    }
                }
            })?;
        held.toucher = Some(toucher);
        Ok(held)
    }

    /// The pool has used `buffers` buffers so far: their memory is charged
    /// (touched) soon after, off the caller's thread.
    pub fn buffers_used(&self, buffers: usize) {
        self.target.fetch_max(buffers, Ordering::Relaxed);
    }

    /// Bytes mapped.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is mapped.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes touched so far.
    pub fn touched(&self) -> usize {
        self.touched.load(Ordering::Relaxed)
    }
}

impl Drop for SharedMemory {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.toucher.take() {
            let _ = t.join();
        }
        if self.len > 0 {
            // SAFETY: the mapping made in `hold`, unmapped once, after the
            // toucher that writes to it has ended.
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

    /// Resident pages of the mapping, from mincore(2).
    fn resident(m: &SharedMemory) -> usize {
        let pages = m.len.div_ceil(4096);
        let mut v = vec![0u8; pages];
        // SAFETY: the mapping is live and `v` has one byte per page.
        let rc = unsafe { libc::mincore(m.addr, m.len, v.as_mut_ptr()) };
        assert_eq!(rc, 0);
        v.iter().filter(|&&b| b & 1 == 1).count()
    }

    #[test]
    fn memory_is_charged_as_the_pool_fills_not_up_front() {
        let m = SharedMemory::hold(16 << 20).unwrap();
        std::thread::sleep(TOUCH_POLL * 3);
        assert_eq!(
            resident(&m),
            0,
            "nothing touched before the pool uses a buffer"
        );
        m.buffers_used(256); // 2 MiB of 16
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while m.touched() < 256 * BUFFER_BYTES && std::time::Instant::now() < deadline {
            std::thread::sleep(TOUCH_POLL);
        }
        assert_eq!(m.touched(), 256 * BUFFER_BYTES);
        assert_eq!(
            resident(&m),
            512,
            "the 256 buffers' 4 KiB pages, and no more"
        );
        // More than the pool has: stops at the mapping's end.
        m.buffers_used(1 << 20);
        while m.touched() < m.len() && std::time::Instant::now() < deadline {
            std::thread::sleep(TOUCH_POLL);
        }
        assert_eq!(resident(&m), 4096);
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
