//! The I/O table: every I/O the database issues gets a token that says what
//! it is for and when it was issued; the driver takes the requests in
//! order (`poll_request`) and hands back their completions by token
//! (`handle_completion`), which this file dispatches to the process that
//! waits for each.

use super::*;

/// Why an I/O was issued.
#[derive(Debug, Clone, Copy)]
pub(super) enum Purpose {
    Read {
        client: u32,
        buf: BufId,
    },
    VictimWrite {
        client: u32,
        buf: BufId,
        block: u64,
    },
    CheckpointWrite {
        buf: BufId,
        block: u64,
    },
    BgWrite {
        buf: BufId,
        block: u64,
    },
    /// A WAL write or (`sync`) the fdatasync that ends a flush.
    Wal {
        sync: bool,
    },
    DataSync,
    /// The kernel flusher's writeback of a run of dirty pages.
    KernelWriteback,
    /// The checkpointer's fsync writing back a run of dirty pages.
    FsyncWriteback,
    /// A standby's walreceiver's WAL write or fdatasync.
    Standby {
        standby: u8,
    },
    VacuumRead {
        buf: BufId,
    },
    /// The kernel's writeback of a page vacuum wrote into the page cache.
    VacuumWriteback {
        block: u64,
    },
    /// A readahead window of vacuum's sequential stream, from `start`.
    VacuumReadAhead {
        start: u64,
    },
    VacuumWrite {
        buf: BufId,
        block: u64,
    },
    /// A readahead window of the WAL the startup process replays.
    WalRead {
        client: u32,
    },
    /// recovery_prefetch's read of `block` into the page cache.
    Prefetch {
        block: u64,
    },
    /// A control file update for minRecoveryPoint: its write, then
    /// (`sync`) its fsync.
    ControlFile {
        sync: bool,
    },
}

/// The I/Os issued and not yet completed.
#[derive(Debug, Default)]
pub(super) struct IoTable {
    /// Issued, not yet handed to the driver, in issue order.
    pub(super) queue: VecDeque<IoRequest>,
    /// Per token: what its I/O is for and when it was issued.
    slots: Vec<Option<(Purpose, Nanos)>>,
    /// Tokens of completed I/Os, the last freed reused first.
    free: Vec<Token>,
    /// Handed to the driver and not yet completed.
    pub(super) outstanding: usize,
}

impl IoTable {
    /// A token for an I/O for `purpose` issued at `now`: the last one
    /// freed, or a new one.
    fn token(&mut self, purpose: Purpose, now: Nanos) -> Token {
        match self.free.pop() {
            Some(t) => {
                self.slots[t as usize] = Some((purpose, now));
                t
            }
            None => {
                self.slots.push(Some((purpose, now)));
                (self.slots.len() - 1) as Token
            }
        }
    }

    /// The next request for the driver, now outstanding.
    fn hand_out(&mut self) -> Option<IoRequest> {
        let r = self.queue.pop_front()?;
        self.outstanding += 1;
        Some(r)
    }

    /// The I/O of `token` completed: what it was for and when it was
    /// issued; its token is free again.
    fn complete(&mut self, token: Token) -> (Purpose, Nanos) {
        let done = self.slots[token as usize]
            .take()
            .expect("completion for an unknown token");
        self.free.push(token);
        self.outstanding -= 1;
        done
    }

    /// Requests never handed out will never complete: forget them.
    pub(super) fn forget_unsent(&mut self) {
        while let Some(r) = self.queue.pop_front() {
            self.slots[r.token as usize] = None;
            self.free.push(r.token);
        }
    }
}

impl Database {
    /// True if an I/O waits to be submitted (`poll_request`).
    #[inline]
    pub fn has_requests(&self) -> bool {
        !self.io.queue.is_empty()
    }

    /// The next I/O to submit, if any.
    pub fn poll_request(&mut self) -> Option<IoRequest> {
        let r = self.io.hand_out()?;
        // Counted when handed out: what the device is asked to do, exactly.
        let c = &mut self.stats.counters;
        match r.kind {
            IoKind::WalWrite { len, .. } => {
                c.wal_writes += 1;
                c.wal_written_bytes += len;
            }
            IoKind::WalSync { .. } => c.wal_syncs += 1,
            _ => {}
        }
        Some(r)
    }

    /// An I/O handed out by `poll_request` finished.
    pub fn handle_completion(&mut self, c: IoCompletion) {
        let (purpose, issued) = self.io.complete(c.token);
        if self.finished {
            return;
        }
        let took = c.at.saturating_sub(issued);
        let counters = &mut self.stats.counters;
        match purpose {
            Purpose::Read { .. } | Purpose::VacuumRead { .. } => counters.read_time.record(took),
            Purpose::Wal { sync: false } => counters.wal_write_time.record(took),
            Purpose::Wal { sync: true } => counters.wal_sync_time.record(took),
            Purpose::VictimWrite { .. } => counters.backend_write_time.record(took),
            _ => {}
        }
        let now = self.advance_clock(c.at);
        match purpose {
            Purpose::Read { client, buf } => {
                self.pool.read_done(buf);
                self.clients[client as usize].held = Some(buf);
                let demand = self.device_read_cpu();
                if demand > 0 {
                    self.start_read_cpu(now, client, demand);
                } else {
                    self.make_ready(client);
                }
                if let Some(ws) = self.buf_waiters.remove(&buf) {
                    for w in ws {
                        self.make_ready(w);
                    }
                }
            }
            Purpose::VictimWrite { client, buf, block } => {
                self.pool.write_done(buf);
                self.os_cache.write(block);
                let demand = self.page_write_cpu();
                if demand > 0 {
                    // The write syscall copying the page is the backend's CPU.
                    let demand = self.cfg.cpu_growth.io(demand, self.active);
                    self.start_cpu(now, client, demand);
                } else {
                    self.make_ready(client);
                }
            }
            Purpose::CheckpointWrite { buf, block } => self.checkpoint_write_done(now, buf, block),
            Purpose::BgWrite { buf, block } => self.bgwrite_done(now, buf, block),
            Purpose::Wal { sync } => self.wal_io_returned(now, sync),
            Purpose::VacuumRead { buf } => {
                self.vacuum_read_in(now, buf);
            }
            Purpose::VacuumWriteback { block } => self.os_cache.write(block),
            Purpose::VacuumReadAhead { start } => self.vacuum_readahead_done(now, start),
            Purpose::VacuumWrite { buf, block } => self.vacuum_write_done(now, buf, block),
            Purpose::Standby { standby } => {
                if let Some(r) = &mut self.repl {
                    r.handle_io_done(now, standby);
                }
            }
            Purpose::WalRead { client } => {
                if let Some(r) = &mut self.recovery {
                    r.wal_read_done();
                }
                // Wake the startup process if it waits for this WAL, not
                // for a page it reads meanwhile.
                let cl = &self.clients[client as usize];
                if cl.wait == Wait::Read
                    && matches!(cl.steps.get(cl.pc), Some(Step::ReadWal { .. }))
                {
                    self.make_ready(client);
                }
            }
            Purpose::Prefetch { block } => self.prefetch_done(now, block),
            Purpose::ControlFile { sync: false } => {
                let segment = self.control_segment();
                self.issue(
                    IoKind::WalSync { segment },
                    Purpose::ControlFile { sync: true },
                    now,
                );
            }
            Purpose::ControlFile { sync: true } => {
                let waiters = self
                    .recovery
                    .as_mut()
                    .map(Recovery::control_updated)
                    .unwrap_or_default();
                for w in waiters {
                    self.wal_flushed_for(now, w);
                }
            }
            Purpose::DataSync => self.checkpoint_synced(now),
            Purpose::KernelWriteback => self.flusher_write_done(now),
            Purpose::FsyncWriteback => self.fsync_write_done(now),
        }
        self.settle(now);
    }

    /// Queue an I/O of `kind` for `purpose`, issued at `now`, for the
    /// driver to take (`poll_request`).
    pub(super) fn issue(&mut self, kind: IoKind, purpose: Purpose, now: Nanos) {
        let kind = self.page_cache_write(now, kind);
        let token = self.io.token(purpose, now);
        let s = self.stats.second(now);
        match kind {
            IoKind::ReadPage { .. } | IoKind::ReadRun { .. } => s.data_reads += 1,
            IoKind::WritePage { block, .. } | IoKind::CacheWrite { block } => {
                s.data_writes += 1;
                // Its completion puts the page in the page cache.
                self.os_cache.prefetch(block);
            }
            IoKind::WalSync { .. } => s.wal_syncs += 1,
            _ => {}
        }
        self.io.queue.push_back(IoRequest { token, kind });
    }
}
