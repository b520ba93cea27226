//! io_uring engine: the default real device.
//!
//! Each request becomes one SQE tagged with the request's token as
//! `user_data`: a page read or write of 8 KiB, a WAL write of the requested
//! length, or an fsync (`IORING_FSYNC_DATASYNC` for WAL, full for the data
//! file). Buffers are 4096-aligned (O_DIRECT needs it), taken from a free
//! list and owned by the in-flight table until the CQE of their operation is
//! reaped. Completions are only collected in the reap loop and handed back;
//! nothing runs inside it.

use std::alloc::{self, Layout as AllocLayout};
use std::collections::HashMap;
use std::io;
use std::marker::PhantomData;
use std::os::fd::AsRawFd;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, anyhow, bail};
use io_uring::{IoUring, opcode, squeue, types};

use super::Device;
use crate::core::io::{IoCompletion, IoKind, IoRequest, PAGE_BYTES, Token};
use crate::core::time::Nanos;
use crate::datafiles::{FileRef, OpenFiles, PendingWritebacks, fill_blocks};

/// Alignment of every I/O buffer (enough for O_DIRECT on 4Kn devices).
const BUF_ALIGN: usize = 4096;
/// Most spare WAL buffers kept for reuse.
const MAX_FREE_WAL_BUFS: usize = 16;
/// Largest ring asked for, whatever the requested depth.
const MAX_RING_ENTRIES: u32 = 4096;
/// How long dropping the device waits for operations still in flight.
const DROP_DRAIN_LIMIT: Duration = Duration::from_secs(30);

/// A heap buffer aligned to 4096 bytes, its length a multiple of 4096, its
/// content non-zero (a stamped pattern) from the start.
pub(crate) struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
}

// SAFETY: the buffer owns its allocation exclusively (like a Box<[u8]>).
unsafe impl Send for AlignedBuf {}

impl AlignedBuf {
    /// A buffer of at least `len` bytes (rounded up to 4096, at least 4096).
    pub(crate) fn new(len: usize) -> Self {
        let len = len.max(1).next_multiple_of(BUF_ALIGN);
        let layout = AllocLayout::from_size_align(len, BUF_ALIGN).expect("buffer layout");
        // SAFETY: `layout` has a non-zero size.
        let raw = unsafe { alloc::alloc_zeroed(layout) };
        let ptr = NonNull::new(raw).unwrap_or_else(|| alloc::handle_alloc_error(layout));
        let mut buf = AlignedBuf { ptr, len };
        fill_blocks(buf.as_mut_slice(), 0, 0xb0f_u64);
        buf
    }

    /// Length in bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: `ptr` points to `len` initialised bytes owned by `self`.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    /// The bytes, writable.
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: `ptr` points to `len` initialised bytes owned by `self`,
        // borrowed mutably here.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in `new` with exactly this layout.
        unsafe {
            alloc::dealloc(
                self.ptr.as_ptr(),
                AllocLayout::from_size_align_unchecked(self.len, BUF_ALIGN),
            )
        }
    }
}

/// One submitted operation, kept until its CQE is reaped.
struct InFlight {
    /// The buffer the kernel reads from or writes into (none for fsync).
    /// Must not be freed or reused before the CQE arrives.
    buf: Option<AlignedBuf>,
    file: FileRef,
    op: &'static str,
    offset: u64,
    /// Bytes expected to move (0 for fsync).
    len: u64,
    /// The data-file ranges whose writeback starts once this is written
    /// (`OpenFiles::writeback_ranges`): PostgreSQL's batch at its last page.
    writeback: Vec<(u64, u64)>,
}

/// The io_uring device: real files, real clock.
///
/// Not `Send`: create it on the thread that will drive it (the ring is set
/// up with `IORING_SETUP_SINGLE_ISSUER` where the kernel has it).
pub struct UringDevice {
    ring: IoUring,
    files: OpenFiles,
    /// The writers' batches waiting for their writeback.
    writebacks: PendingWritebacks,
    data_blocks: u64,
    start: Instant,
    in_flight: HashMap<Token, InFlight>,
    free_pages: Vec<AlignedBuf>,
    free_wal: Vec<AlignedBuf>,
    /// Most spare page buffers kept (the ring's depth).
    max_free_pages: usize,
    /// Completions reaped while making room to submit, handed out at the
    /// next `wait`.
    backlog: Vec<IoCompletion>,
    /// Whether `submit` only queues (one io_uring_enter per `wait` for the
    /// whole batch) instead of handing each request to the kernel at once.
    batch_submit: bool,
    /// Scratch space for (user_data, result) of reaped CQEs.
    reaped: Vec<(Token, i32)>,
    /// The ring is bound to the thread that created it (`SINGLE_ISSUER`):
    /// the device must not move to another thread.
    _not_send: PhantomData<*const ()>,
    /// The driving thread's CPU affinity before [`share_one_cpu`] pinned
    /// it, restored on drop.
    affinity: Option<libc::cpu_set_t>,
}

/// Pins the calling thread, and the ring's io-wq workers (which run what
/// cannot be issued inline: every fdatasync, buffered writes), to the CPU
/// the thread is on; returns the thread's affinity before.
///
/// PostgreSQL calls fdatasync in the backend itself. Through io_uring the
/// call is handed to a worker thread, and on a VM a worker woken on another
/// vCPU that is idle waits for that vCPU to be woken: tens of µs per
/// fdatasync that PostgreSQL never pays, and more after the driver has
/// been polling near a timer (docs/validation.md). On one CPU the worker
/// runs as soon as the driver waits or yields ([`UringDevice::wait`]).
/// Best effort: where the kernel refuses, nothing changes.
fn share_one_cpu(ring: &IoUring) -> Option<libc::cpu_set_t> {
    // SAFETY: sched_getcpu, sched_getaffinity and sched_setaffinity are
    // given a zeroed cpu_set_t of the size they are told; CPU_SET is given
    // an index within it.
    unsafe {
        let cpu = libc::sched_getcpu();
        if cpu < 0 || cpu as usize >= libc::CPU_SETSIZE as usize {
            return None;
        }
        let size = std::mem::size_of::<libc::cpu_set_t>();
        let mut before: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, size, &mut before) != 0 {
            return None;
        }
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut one);
        if ring.submitter().register_iowq_aff(&one).is_err() {
            return None;
        }
        if libc::sched_setaffinity(0, size, &one) != 0 {
            let _ = ring.submitter().unregister_iowq_aff();
            return None;
        }
        Some(before)
    }
}

fn is_errno(e: &io::Error, errno: i32) -> bool {
    e.raw_os_error() == Some(errno)
}

/// A ring of `entries` entries, with the setup flags fio also uses where the
/// kernel has them (6.1+): completions are processed when this thread asks
/// for them (`DEFER_TASKRUN`, which needs `SINGLE_ISSUER`) rather than by
/// interrupting it. On the development machine, WAL write+fdatasync loops
/// ran about 8 % faster on average than with a plain ring (a noisy figure;
/// random reads showed no difference). Older kernels get a plain ring.
fn build_ring(entries: u32) -> io::Result<IoUring> {
    let deferred = IoUring::builder()
        .setup_coop_taskrun()
        .setup_single_issuer()
        .setup_defer_taskrun()
        // Without it the kernel never sets IORING_SQ_TASKRUN, so polling near a
        // timer never reaps finished I/O: completions wait for a blocking wait.
        .setup_taskrun_flag()
        .build(entries);
    match deferred {
        Err(e) if is_errno(&e, libc::EINVAL) => IoUring::new(entries),
        other => other,
    }
}

impl UringDevice {
    /// Sets up a ring for up to `max_in_flight` concurrent operations on
    /// `files` (owned from now on). Fails cleanly when io_uring is not
    /// available (old kernel, ENOSYS, EPERM under seccomp), so the caller can
    /// fall back to psync.
    pub fn new(files: OpenFiles, max_in_flight: u32) -> Result<UringDevice> {
        let entries = max_in_flight.clamp(8, MAX_RING_ENTRIES).next_power_of_two();
        let mut ring = build_ring(entries)
            .map_err(|e| anyhow!(e))
            .context("io_uring is not available (io_uring_setup failed)")?;

        let mut probe = io_uring::Probe::new();
        ring.submitter()
            .register_probe(&mut probe)
            .map_err(|e| anyhow!(e))
            .context("io_uring is not usable (cannot probe supported operations)")?;
        for (code, name) in [
            (opcode::Read::CODE, "READ"),
            (opcode::Write::CODE, "WRITE"),
            (opcode::Fsync::CODE, "FSYNC"),
        ] {
            if !probe.is_supported(code) {
                bail!("io_uring: this kernel does not support IORING_OP_{name}");
            }
        }

        // One no-op round trip: io_uring_enter may be forbidden even where
        // io_uring_setup is allowed.
        let nop = opcode::Nop::new().build().user_data(0);
        // SAFETY: a NOP references no memory.
        unsafe { ring.submission().push(&nop) }.map_err(|_| anyhow!("io_uring: queue full"))?;
        loop {
            match ring.submit_and_wait(1) {
                Ok(_) => break,
                Err(e) if is_errno(&e, libc::EINTR) => continue,
                Err(e) => {
                    return Err(anyhow!(e))
                        .context("io_uring is not usable (io_uring_enter failed)");
                }
            }
        }
        let nop_done = ring.completion().next();
        if nop_done.is_none_or(|c| c.result() < 0) {
            bail!("io_uring is not usable (no-op request failed)");
        }

        let data_blocks = files.data_blocks()?;
        let affinity = share_one_cpu(&ring);
        Ok(UringDevice {
            affinity,
            ring,
            files,
            writebacks: PendingWritebacks::default(),
            data_blocks,
            start: Instant::now(),
            in_flight: HashMap::with_capacity(entries as usize),
            free_pages: Vec::new(),
            free_wal: Vec::new(),
            max_free_pages: entries as usize,
            backlog: Vec::new(),
            reaped: Vec::with_capacity(entries as usize),
            _not_send: PhantomData,
            batch_submit: false,
        })
    }

    /// Chooses between handing each request to the kernel as soon as it is
    /// submitted (the default) and queuing requests until the next `wait`,
    /// which then submits them all with one syscall.
    ///
    /// Immediate submission is the default because it is what PostgreSQL
    /// does (every backend issues its own pread/pwrite) and what fio does:
    /// on the virtio disk of the development machine, batching 32 random
    /// reads per syscall made the device complete them in lock-step bursts
    /// and cut throughput by about 20 % against fio, while immediate
    /// submission matched fio (at the cost of one syscall per request).
    pub fn set_batch_submit(&mut self, batch: bool) {
        self.batch_submit = batch;
    }

    fn page_buf(&mut self) -> AlignedBuf {
        self.free_pages
            .pop()
            .unwrap_or_else(|| AlignedBuf::new(PAGE_BYTES as usize))
    }

    fn wal_buf(&mut self, len: usize) -> AlignedBuf {
        match self.free_wal.iter().position(|b| b.len() >= len) {
            Some(i) => self.free_wal.swap_remove(i),
            None => AlignedBuf::new(len),
        }
    }

    /// Puts the buffer of a finished operation on `file` back on its free
    /// list (or frees it if the list is full).
    fn recycle(&mut self, file: FileRef, buf: AlignedBuf) {
        match file {
            FileRef::Data if self.free_pages.len() < self.max_free_pages => {
                self.free_pages.push(buf)
            }
            FileRef::Wal(_) | FileRef::StandbyWal(..)
                if self.free_wal.len() < MAX_FREE_WAL_BUFS =>
            {
                self.free_wal.push(buf)
            }
            _ => {}
        }
    }

    /// Hands queued SQEs to the kernel. When the kernel refuses more work
    /// until completions are reaped (EBUSY), reaps into the backlog.
    fn submit_queued(&mut self) -> Result<()> {
        // io_uring_enter with nothing to submit costs a syscall, and the
        // driver polls this in its spin near a timer: skip it unless the
        // kernel has completions to post (deferred task work, flagged with
        // IORING_SQ_TASKRUN) or held back for lack of room.
        {
            let sq = self.ring.submission();
            if sq.is_empty() && !sq.cq_overflow() && !sq.taskrun() {
                return Ok(());
            }
        }
        loop {
            match self.ring.submit() {
                Ok(_) => return Ok(()),
                Err(e) if is_errno(&e, libc::EINTR) => continue,
                Err(e) if is_errno(&e, libc::EBUSY) || is_errno(&e, libc::EAGAIN) => {
                    let mut backlog = std::mem::take(&mut self.backlog);
                    let reaped = self.reap(&mut backlog);
                    self.backlog = backlog;
                    if reaped? == 0 {
                        // Nothing to reap yet: let the kernel finish some work.
                        std::thread::yield_now();
                    }
                }
                Err(e) => return Err(anyhow!(e)).context("io_uring submit failed"),
            }
        }
    }

    /// Moves every available CQE into `out`, stamped with the time now.
    /// Returns how many. A failed or short operation is an error naming the
    /// file, the operation and the offset.
    fn reap(&mut self, out: &mut Vec<IoCompletion>) -> Result<usize> {
        let at = self.now();
        let mut n = 0;
        let mut done = std::mem::take(&mut self.reaped);
        done.clear();
        done.extend(self.ring.completion().map(|c| (c.user_data(), c.result())));
        // Every reaped operation is accounted for (its buffer recycled)
        // before an error is returned, so none is left in the table.
        let mut first_err = None;
        for &(token, res) in &done {
            let Some(op) = self.in_flight.remove(&token) else {
                first_err.get_or_insert_with(|| {
                    anyhow!("io_uring: completion for unknown token {token}")
                });
                continue;
            };
            if let Some(buf) = op.buf {
                self.recycle(op.file, buf);
            }
            let path = self.files.path(op.file).display();
            if res < 0 {
                let err = io::Error::from_raw_os_error(-res);
                first_err.get_or_insert_with(|| {
                    anyhow!("{} of {path} at offset {} failed: {err}", op.op, op.offset)
                });
            } else if res as u64 != op.len {
                first_err.get_or_insert_with(|| {
                    anyhow!(
                        "short {} of {path} at offset {}: {res} of {} bytes",
                        op.op,
                        op.offset,
                        op.len
                    )
                });
            } else {
                if let Some((at, err)) = op.writeback.iter().find_map(|&(at, len)| {
                    self.files
                        .start_writeback(op.file, at, len)
                        .err()
                        .map(|e| (at, e))
                }) {
                    first_err.get_or_insert_with(|| {
                        anyhow!("sync_file_range of {path} at offset {at} failed: {err}")
                    });
                    continue;
                }
                out.push(IoCompletion { token, at });
                n += 1;
            }
        }
        self.reaped = done;
        match first_err {
            Some(e) => Err(e),
            None => Ok(n),
        }
    }

    fn push(&mut self, entry: &squeue::Entry) -> Result<()> {
        loop {
            // SAFETY: the buffer `entry` points to (if any) is owned by
            // `self.in_flight` under the entry's token and is neither freed
            // nor reused until its CQE is reaped (`reap`), or is leaked if
            // the device is dropped before that (`Drop`). The file descriptor
            // belongs to `self.files`, open as long as `self`.
            if unsafe { self.ring.submission().push(entry) }.is_ok() {
                return Ok(());
            }
            // Submission queue full: hand it to the kernel and retry.
            self.submit_queued()?;
        }
    }
}

impl Device for UringDevice {
    fn submit(&mut self, req: IoRequest) -> Result<()> {
        let (file, offset, len) = self.files.locate(req.kind, self.data_blocks)?;
        if self.in_flight.contains_key(&req.token) {
            bail!("io_uring: token {} is already in flight", req.token);
        }
        let fd = types::Fd(self.files.file(file).as_raw_fd());
        let (entry, buf, op) = match req.kind {
            IoKind::ReadPage { .. } => {
                let mut buf = self.page_buf();
                let e = opcode::Read::new(fd, buf.as_mut_slice().as_mut_ptr(), len as u32)
                    .offset(offset)
                    .build();
                (e, Some(buf), "read")
            }
            IoKind::WritePage { .. } | IoKind::CacheWrite { .. } => {
                let buf = self.page_buf();
                let e = opcode::Write::new(fd, buf.as_slice().as_ptr(), len as u32)
                    .offset(offset)
                    .build();
                (e, Some(buf), "write")
            }
            IoKind::ReadRun { .. } | IoKind::WalRead { .. } => {
                let mut buf = self.wal_buf(len as usize);
                let e = opcode::Read::new(fd, buf.as_mut_slice().as_mut_ptr(), len as u32)
                    .offset(offset)
                    .build();
                (e, Some(buf), "read")
            }
            IoKind::WalWrite { .. } | IoKind::StandbyWalWrite { .. } | IoKind::Writeback { .. } => {
                let buf = self.wal_buf(len as usize);
                let e = opcode::Write::new(fd, buf.as_slice().as_ptr(), len as u32)
                    .offset(offset)
                    .build();
                (e, Some(buf), "WAL write")
            }
            IoKind::WalSync { .. } | IoKind::StandbyWalSync { .. } => {
                let e = opcode::Fsync::new(fd)
                    .flags(types::FsyncFlags::DATASYNC)
                    .build();
                (e, None, "WAL fdatasync")
            }
            IoKind::DataSync => (opcode::Fsync::new(fd).build(), None, "fsync"),
        };
        // The heap memory of `buf` does not move when `buf` moves into the
        // table: the pointers in `entry` stay valid.
        self.in_flight.insert(
            req.token,
            InFlight {
                buf,
                file,
                op,
                offset,
                len,
                writeback: self.files.writeback_ranges(&mut self.writebacks, req.kind),
            },
        );
        self.push(&entry.user_data(req.token))?;
        if !self.batch_submit {
            self.submit_queued()?;
        }
        Ok(())
    }

    fn wait(
        &mut self,
        deadline: Option<Nanos>,
        max_block: Nanos,
        out: &mut Vec<IoCompletion>,
    ) -> Result<()> {
        let had_backlog = !self.backlog.is_empty();
        out.append(&mut self.backlog);
        let now = self.now();
        let block_end = now.saturating_add(max_block);
        let end = deadline.map_or(block_end, |d| d.min(block_end));
        if had_backlog || now >= end || !self.ring.completion().is_empty() {
            self.submit_queued()?;
            let reaped = self.reap(out)?;
            // Polling (the driver near a timer) with I/O in flight: let an
            // io-wq worker on this CPU run (see `share_one_cpu`).
            if reaped == 0 && !had_backlog && self.affinity.is_some() && !self.in_flight.is_empty()
            {
                std::thread::yield_now();
            }
            return Ok(());
        }
        // Nothing ready: submit what is queued and wait, in one syscall.
        loop {
            let now = self.now();
            if now >= end {
                break;
            }
            let ts = types::Timespec::from(Duration::from_nanos(end - now));
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => break,
                Err(e) if is_errno(&e, libc::ETIME) => break,
                Err(e) if is_errno(&e, libc::EINTR) => continue,
                // CQ overflow waiting to be flushed: reaping below does it.
                Err(e) if is_errno(&e, libc::EBUSY) => break,
                Err(e) => return Err(anyhow!(e)).context("io_uring wait failed"),
            }
        }
        if !self.ring.submission().is_empty() {
            self.submit_queued()?;
        }
        self.reap(out)?;
        Ok(())
    }

    fn now(&self) -> Nanos {
        self.start.elapsed().as_nanos() as Nanos
    }

    fn name(&self) -> &'static str {
        "io_uring"
    }
}

impl Drop for UringDevice {
    /// Waits for operations still in flight, since the kernel may still be
    /// writing into their buffers; leaks the buffers of any that do not
    /// finish in time rather than free memory the kernel may touch.
    fn drop(&mut self) {
        let limit = Instant::now() + DROP_DRAIN_LIMIT;
        while !self.in_flight.is_empty() && Instant::now() < limit {
            let ts = types::Timespec::from(Duration::from_millis(100));
            let args = types::SubmitArgs::new().timespec(&ts);
            match self.ring.submitter().submit_with_args(1, &args) {
                Ok(_) => {}
                Err(e)
                    if is_errno(&e, libc::ETIME)
                        || is_errno(&e, libc::EINTR)
                        || is_errno(&e, libc::EBUSY) => {}
                Err(_) => break,
            }
            let tokens: Vec<Token> = self.ring.completion().map(|c| c.user_data()).collect();
            for t in tokens {
                self.in_flight.remove(&t);
            }
        }
        for (_, op) in self.in_flight.drain() {
            std::mem::forget(op.buf);
        }
        if let Some(before) = &self.affinity {
            // SAFETY: a cpu_set_t that sched_getaffinity filled.
            unsafe {
                libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), before);
            }
        }
    }
}
