//! psync engine: the fallback where io_uring is not available.
//!
//! A pool of worker threads takes requests from a shared queue and does each
//! with one blocking call: `pread`/`pwrite` (through `FileExt`), `fdatasync`
//! for a WAL sync (exactly one syscall per request), `fsync` for the data
//! file. Each worker stamps the completion with the time its call returned
//! and sends it back over a channel; `wait` receives with a timeout.

use std::collections::VecDeque;
use std::os::unix::fs::FileExt;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use parking_lot::{Condvar, Mutex};

use super::Device;
use super::uring::AlignedBuf;
use crate::core::io::{IoCompletion, IoKind, IoRequest, PAGE_BYTES, Token};
use crate::core::time::Nanos;
use crate::datafiles::{FileRef, OpenFiles, PendingWritebacks};

/// Most worker threads a device may start.
pub const MAX_THREADS: usize = 1024;

/// One request, mapped to its file, waiting for a worker.
struct Job {
    token: Token,
    kind: IoKind,
    file: FileRef,
    offset: u64,
    len: u64,
    /// The data-file ranges whose writeback starts once this is written
    /// (`OpenFiles::writeback_ranges`).
    writeback: Vec<(u64, u64)>,
}

struct State {
    queue: VecDeque<Job>,
    stop: bool,
}

/// What the device and its workers share.
struct Shared {
    state: Mutex<State>,
    ready: Condvar,
    files: OpenFiles,
    start: Instant,
}

/// The psync device: worker threads doing blocking I/O on real files.
pub struct PsyncDevice {
    shared: Arc<Shared>,
    workers: Vec<JoinHandle<()>>,
    done: Receiver<Result<IoCompletion>>,
    data_blocks: u64,
    /// The writers' batches waiting for their writeback.
    writebacks: PendingWritebacks,
}

impl PsyncDevice {
    /// Starts `threads` workers on `files` (owned from now on). At most
    /// `threads` requests are executed at once; more wait in the queue.
    pub fn new(files: OpenFiles, threads: usize) -> Result<PsyncDevice> {
        if threads == 0 || threads > MAX_THREADS {
            bail!("psync: thread count must be between 1 and {MAX_THREADS}, not {threads}");
        }
        let data_blocks = files.data_blocks()?;
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                stop: false,
            }),
            ready: Condvar::new(),
            files,
            start: Instant::now(),
        });
        let (tx, done) = mpsc::channel();
        let mut device = PsyncDevice {
            shared,
            workers: Vec::with_capacity(threads),
            done,
            data_blocks,
            writebacks: PendingWritebacks::default(),
        };
        for i in 0..threads {
            let shared = Arc::clone(&device.shared);
            let tx = tx.clone();
            let handle = std::thread::Builder::new()
                .name(format!("pgiosim-psync-{i}"))
                .spawn(move || worker(&shared, &tx))
                .context("psync: cannot start a worker thread")?;
            // Pushed one by one so that Drop joins those already started.
            device.workers.push(handle);
        }
        Ok(device)
    }

    /// Moves every completion already received into `out`.
    fn drain(&mut self, out: &mut Vec<IoCompletion>) -> Result<usize> {
        let mut n = 0;
        while let Ok(msg) = self.done.try_recv() {
            out.push(msg?);
            n += 1;
        }
        Ok(n)
    }
}

fn nanos_since(start: Instant) -> Nanos {
    start.elapsed().as_nanos() as Nanos
}

/// One worker: take a job, do it, report it, until told to stop.
fn worker(shared: &Shared, tx: &Sender<Result<IoCompletion>>) {
    // Aligned buffers, as O_DIRECT needs; content non-zero from the start.
    let mut page = AlignedBuf::new(PAGE_BYTES as usize);
    let mut wal = AlignedBuf::new(PAGE_BYTES as usize);
    loop {
        let job = {
            let mut st = shared.state.lock();
            loop {
                if st.stop {
                    return;
                }
                if let Some(job) = st.queue.pop_front() {
                    break job;
                }
                shared.ready.wait(&mut st);
            }
        };
        let result = execute(&shared.files, &job, &mut page, &mut wal).map(|()| IoCompletion {
            token: job.token,
            at: nanos_since(shared.start),
        });
        if tx.send(result).is_err() {
            return; // device gone
        }
    }
}

/// Does one job with one blocking call (pread/pwrite may loop on short
/// transfers).
fn execute(
    files: &OpenFiles,
    job: &Job,
    page: &mut AlignedBuf,
    wal: &mut AlignedBuf,
) -> Result<()> {
    let file = files.file(job.file);
    let (op, result) = match job.kind {
        IoKind::ReadPage { .. } => (
            "read",
            file.read_exact_at(&mut page.as_mut_slice()[..job.len as usize], job.offset),
        ),
        IoKind::ReadRun { .. } | IoKind::WalRead { .. } => {
            if wal.len() < job.len as usize {
                *wal = AlignedBuf::new(job.len as usize);
            }
            (
                "read",
                file.read_exact_at(&mut wal.as_mut_slice()[..job.len as usize], job.offset),
            )
        }
        IoKind::WritePage { .. } | IoKind::CacheWrite { .. } => (
            "write",
            file.write_all_at(&page.as_slice()[..job.len as usize], job.offset)
                .and_then(|()| {
                    job.writeback
                        .iter()
                        .try_for_each(|&(at, len)| files.start_writeback(job.file, at, len))
                }),
        ),
        IoKind::WalWrite { .. } | IoKind::StandbyWalWrite { .. } | IoKind::Writeback { .. } => {
            if wal.len() < job.len as usize {
                *wal = AlignedBuf::new(job.len as usize);
            }
            (
                "WAL write",
                file.write_all_at(&wal.as_slice()[..job.len as usize], job.offset),
            )
        }
        IoKind::WalSync { .. } | IoKind::StandbyWalSync { .. } => {
            ("WAL fdatasync", file.sync_data())
        }
        IoKind::DataSync => ("fsync", file.sync_all()),
    };
    result.with_context(|| {
        format!(
            "{op} of {} at offset {} failed",
            files.path(job.file).display(),
            job.offset
        )
    })
}

impl Device for PsyncDevice {
    fn submit(&mut self, req: IoRequest) -> Result<()> {
        let (file, offset, len) = self.shared.files.locate(req.kind, self.data_blocks)?;
        let writeback = self
            .shared
            .files
            .writeback_ranges(&mut self.writebacks, req.kind);
        self.shared.state.lock().queue.push_back(Job {
            token: req.token,
            kind: req.kind,
            file,
            offset,
            len,
            writeback,
        });
        self.shared.ready.notify_one();
        Ok(())
    }

    fn wait(
        &mut self,
        deadline: Option<Nanos>,
        max_block: Nanos,
        out: &mut Vec<IoCompletion>,
    ) -> Result<()> {
        if self.drain(out)? > 0 {
            return Ok(());
        }
        let now = self.now();
        let mut block = max_block;
        if let Some(d) = deadline {
            if d <= now {
                return Ok(());
            }
            block = block.min(d - now);
        }
        match self.done.recv_timeout(Duration::from_nanos(block)) {
            Ok(msg) => {
                out.push(msg?);
                self.drain(out)?;
                Ok(())
            }
            Err(RecvTimeoutError::Timeout) => Ok(()),
            Err(RecvTimeoutError::Disconnected) => bail!("psync: all worker threads have stopped"),
        }
    }

    fn now(&self) -> Nanos {
        nanos_since(self.shared.start)
    }

    fn name(&self) -> &'static str {
        "psync"
    }
}

impl Drop for PsyncDevice {
    /// Stops the workers (each finishes the call it is in) and joins them.
    fn drop(&mut self) {
        self.shared.state.lock().stop = true;
        self.shared.ready.notify_all();
        for handle in self.workers.drain(..) {
            let _ = handle.join();
        }
    }
}
