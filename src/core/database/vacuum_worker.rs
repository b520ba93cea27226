//! The vacuum worker: autovacuum's one worker (its launcher is
//! `autovacuum`), and the
//! one-shot VACUUM of `pgiosim vacuum`, reading through a ring buffer,
//! pruning, logging and writing pages under the cost limit.

use super::*;
use crate::core::bounded_events::BoundedEvents;
use crate::core::config::OneShotVacuum;

/// What the vacuum worker is doing between events.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum VacWait {
    /// Ready for its next page (or idle with no job).
    Running,
    /// Sleeping for the cost limit, or retrying.
    Sleeping,
    /// Waiting for WAL to be flushed before writing a ring buffer.
    WalFlush,
    /// A read or a ring write is in flight.
    Io,
}

/// Vacuum's CPU is paid as a pause once this much has added up.
const VACUUM_CPU_SLICE: Nanos = 100 * crate::core::time::US;

/// The vacuum worker's state.
#[derive(Debug)]
pub(super) struct VacuumWorker {
    /// The vacuum under way, if any.
    pub(super) job: Option<VacuumJob>,
    /// What it is doing between events.
    pub(super) wait: VacWait,
    /// A ring buffer being cleaned for vacuum's next read.
    pub(super) victim: Option<BufId>,
    /// The ring buffer and block waiting for a readahead window.
    pub(super) ra_wait: Option<(BufId, u64)>,
    /// Vacuum CPU not yet spent (ns): paid as a pause once it adds up.
    pub(super) cpu: Nanos,
    /// The phase being timed and since when.
    pub(super) phase: (vac::Phase, Nanos),
    /// The one-shot vacuum's totals beyond the counters.
    pub(super) summary: VacuumSummary,
    /// Visibility-map pages dirtied.
    pub(super) vm: Vec<bool>,
    /// Vacuum runs so far, for reports: bounded like the checkpoints'
    /// list, so past its bound the per-table totals count the runs kept.
    pub(super) events: BoundedEvents<VacuumEvent>,
    /// Its pending writeback of ring buffers it writes (backend_flush_after).
    pub(super) writeback: WritebackContext,
}

impl Default for VacuumWorker {
    /// Idle, with no vacuum run yet.
    fn default() -> VacuumWorker {
        VacuumWorker {
            job: None,
            wait: VacWait::Running,
            victim: None,
            ra_wait: None,
            cpu: 0,
            phase: (vac::Phase::ScanHeap, 0),
            summary: VacuumSummary::default(),
            vm: Vec::new(),
            events: BoundedEvents::default(),
            writeback: WritebackContext::new(Writer::Vacuum, 0),
        }
    }
}

/// One phase of the one-shot vacuum, for reports.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct VacuumPhaseStats {
    /// Time spent in it, ns.
    pub time: Nanos,
    /// Pages processed, found in shared buffers, read in, dirtied, and
    /// written by vacuum.
    pub pages: u64,
    pub hits: u64,
    pub misses: u64,
    pub dirtied: u64,
    pub written: u64,
    /// Read requests sent to the device (merged by readahead) and their bytes.
    pub device_reads: u64,
    pub device_read_bytes: u64,
    /// WAL bytes and full-page images it logged.
    pub wal_bytes: u64,
    pub full_page_images: u64,
    /// CPU it spent, ns, and its cost-limit sleeps, ns.
    pub cpu: Nanos,
    pub sleep: Nanos,
}

/// The one-shot vacuum's totals beyond the counters.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VacuumSummary {
    /// Per [`vac::Phase`].
    pub phases: [VacuumPhaseStats; vac::PHASES],
    /// Index passes (PostgreSQL's "index scans").
    pub index_passes: u64,
    /// Heap pages skipped through the visibility map.
    pub skipped: u64,
    /// Heap pages with dead items, and the dead items.
    pub lpdead_pages: u64,
    pub lpdead_items: u64,
    /// Pages set all-visible, and the visibility-map pages that dirtied.
    pub set_all_visible: u64,
    pub vm_pages_dirtied: u64,
}

/// One vacuum run, for reports.
#[derive(Debug, Clone, PartialEq)]
pub struct VacuumEvent {
    pub table: String,
    pub start: Nanos,
    pub end: Option<Nanos>,
    pub pages: u64,
}

impl Database {
    /// `pgiosim vacuum`'s VACUUM of its table: plain, or lazy over the
    /// shape of its heap and index.
    pub(super) fn start_one_shot_vacuum(&mut self, v: &OneShotVacuum) {
        let t = self
            .tables
            .iter()
            .find(|t| t.name == v.table)
            .expect("one-shot vacuum of a known table")
            .clone();
        let cost = CostBalance::new(v.cost_limit, v.cost_delay);
        let job = match v.shape.clone() {
            None => VacuumJob::new(&t.name, t.first, t.pages, 1.0, cost),
            Some(shape) => {
                let ix = self
                    .tables
                    .iter()
                    .find(|x| x.name == shape.index_table)
                    .expect("one-shot vacuum's index is a known table")
                    .clone();
                let target = vac::VacuumTarget {
                    heap_first: t.first,
                    heap_pages: t.pages,
                    index_first: ix.first,
                    index_pages: ix.pages,
                    all_visible: shape.all_visible,
                    dead_pages: shape.dead_pages,
                    dead_per_page: shape.dead_per_page,
                    max_dead_items: vac::VacuumTarget::max_items(
                        self.cfg.maintenance_work_mem,
                        t.pages,
                    ),
                    read_ahead_pages: shape.read_ahead_pages,
                };
                self.vacuum.vm =
                    vec![false; t.pages.div_ceil(vac::HEAP_PAGES_PER_VM_PAGE) as usize];
                VacuumJob::lazy(&t.name, target, cost, &mut self.rng)
            }
        };
        self.start_vacuum(0, job);
    }

    /// Its cost-delay sleep (or retry) is over.
    pub(super) fn vacuum_wake(&mut self, now: Nanos) {
        if self.vacuum.wait == VacWait::Sleeping {
            self.vacuum.wait = VacWait::Running;
            self.vacuum_step(now);
        }
    }

    /// The page vacuum waited for is in `buf`: wake whoever else waited
    /// for it, and vacuum goes on with it.
    pub(super) fn vacuum_read_in(&mut self, now: Nanos, buf: BufId) {
        self.pool.read_done(buf);
        self.vacuum.wait = VacWait::Running;
        if let Some(ws) = self.buf_waiters.remove(&buf) {
            for w in ws {
                self.make_ready(w);
            }
        }
        self.stats.counters.vacuum_reads += 1;
        let miss = self.cost_miss();
        if !self.vacuum_page(now, buf, miss) {
            self.vacuum_step(now);
        }
    }

    /// A readahead window from `start` is in the page cache: the read that
    /// waited for it, if any, goes on.
    pub(super) fn vacuum_readahead_done(&mut self, now: Nanos, start: u64) {
        let Some(job) = self.vacuum.job.as_mut() else {
            return;
        };
        job.ra.done(start);
        if let Some((buf, block)) = self.vacuum.ra_wait
            && job.ra.lookup(block) == vac::Ahead::Cached
        {
            self.vacuum.ra_wait = None;
            self.vacuum_read_in(now, buf);
        }
    }

    /// Its ring write of `buf` (`block`) is done: it goes on.
    pub(super) fn vacuum_write_done(&mut self, now: Nanos, buf: BufId, block: u64) {
        self.pool.write_done(buf);
        self.os_cache.write(block);
        // A lazy vacuum's write is in its page's one CPU charge.
        if !self.vacuum.job.as_ref().is_some_and(|j| j.two_pass()) {
            self.writer_cpu(now, Background::Vacuum);
        }
        self.vacuum.wait = VacWait::Running;
        self.vacuum_step(now);
    }

    /// Start `job` at `now`: the worker runs until it has to wait.
    pub(super) fn start_vacuum(&mut self, now: Nanos, job: VacuumJob) {
        self.stats.counters.vacuum_runs += 1;
        self.vacuum.events.push(VacuumEvent {
            table: job.table.clone(),
            start: now,
            end: None,
            pages: 0,
        });
        self.vacuum.phase = (job.phase, now);
        self.vacuum.job = Some(job);
        self.vacuum.wait = VacWait::Running;
        self.vacuum_step(now);
    }

    /// vacuum_cost_page_miss.
    pub(super) fn cost_miss(&self) -> u32 {
        self.cfg.vacuum_cost_page[1]
    }

    /// The counters of the phase being timed.
    pub(super) fn vac_phase_stats(&mut self) -> &mut VacuumPhaseStats {
        &mut self.vacuum.summary.phases[self.vacuum.phase.0 as usize]
    }

    /// The job's phase may have changed: close the old one's time.
    pub(super) fn vac_phase_check(&mut self, now: Nanos) {
        let Some(job) = self.vacuum.job.as_ref() else {
            return;
        };
        let (old, since) = self.vacuum.phase;
        if job.phase != old {
            self.vacuum.summary.phases[old as usize].time += now.saturating_sub(since);
            self.vacuum.phase = (job.phase, now);
        }
    }

    /// The block vacuum works on next, switching phases as PostgreSQL
    /// does; None when the vacuum is over.
    pub(super) fn vacuum_next_block(&mut self, now: Nanos) -> Option<u64> {
        loop {
            let job = self.vacuum.job.as_mut()?;
            match job.phase {
                vac::Phase::ScanHeap => {
                    if job.memory_full() {
                        job.start_index_pass();
                    } else if let Some(b) = job.current() {
                        return Some(b);
                    } else if job.needs_index_pass() {
                        job.start_index_pass();
                    } else {
                        return None;
                    }
                    self.vac_phase_check(now);
                }
                _ => match job.pass_block() {
                    Some(b) => return Some(b),
                    None => {
                        job.pass_advance();
                        self.vac_phase_check(now);
                    }
                },
            }
        }
    }

    /// The vacuum worker is free to act: process pages until it has to wait.
    pub(super) fn vacuum_step(&mut self, now: Nanos) {
        loop {
            if self.vacuum.wait != VacWait::Running || self.vacuum.job.is_none() {
                return;
            }
            let Some(block) = self.vacuum_next_block(now) else {
                self.vacuum_done(now);
                return;
            };
            if self.vacuum.victim.is_none() {
                match self.pool.lookup(block) {
                    Lookup::Hit(b) => {
                        self.stats.counters.vacuum_hits += 1;
                        self.vac_phase_stats().hits += 1;
                        if self.vacuum_page(now, b, self.cfg.vacuum_cost_page[0]) {
                            return;
                        }
                        continue;
                    }
                    Lookup::ReadInProgress(_) => {
                        // A backend is reading it: look again shortly.
                        self.vacuum.wait = VacWait::Sleeping;
                        self.set_timer(now + MS, Timer::VacuumWake);
                        return;
                    }
                    Lookup::Miss => {}
                }
            }
            let v = match self.vacuum.victim.take() {
                Some(v) => v,
                None => match self.ring_buffer() {
                    Some(v) => v,
                    None => {
                        self.vacuum.wait = VacWait::Sleeping;
                        self.set_timer(now + MS, Timer::VacuumWake);
                        return;
                    }
                },
            };
            if self.pool.assign(v, block) {
                if self.os_cache.read(block) || self.vacuum_read(now, v, block) {
                    self.pool.read_done(v);
                    self.stats.counters.vacuum_reads += 1;
                    if self.vacuum_page(now, v, self.cost_miss()) {
                        return;
                    }
                    continue;
                }
                return;
            }
            if self.pool.can_write(v) {
                // A dirty ring buffer: WAL first, then vacuum writes it.
                let lsn = self.pool.lsn(v);
                self.vacuum.victim = Some(v);
                if self.wal.wait_for_flush(lsn, Waiter::Vacuum) {
                    self.vacuum_write(now);
                } else {
                    self.vacuum.wait = VacWait::WalFlush;
                }
                return;
            }
            // Taken by someone else meanwhile, or the block got loaded.
            self.pool.unpin(v);
        }
    }

    /// Read `block` into ring buffer `v` through the kernel's readahead:
    /// true if it is in the page cache already (a copy), else the read or
    /// the window it waits for is in flight and vacuum waits.
    pub(super) fn vacuum_read(&mut self, now: Nanos, v: BufId, block: u64) -> bool {
        let job = self.vacuum.job.as_mut().expect("a vacuum job");
        let end = job.stream_end();
        let sequential = job.ra.window > 1 && job.pass_sequential();
        match job.ra.lookup(block) {
            vac::Ahead::Cached => return true,
            vac::Ahead::InFlight => {}
            vac::Ahead::Absent if sequential => {
                let (start, pages) = job.ra.start(block, end).expect("a block before the end");
                self.vacuum_issue_window(now, start, pages);
            }
            vac::Ahead::Absent => {
                let p = self.vac_phase_stats();
                p.device_reads += 1;
                p.device_read_bytes += PAGE_BYTES;
                self.vacuum.wait = VacWait::Io;
                self.issue(
                    IoKind::ReadPage { block },
                    Purpose::VacuumRead { buf: v },
                    now,
                );
                return false;
            }
        }
        self.vacuum.ra_wait = Some((v, block));
        self.vacuum.wait = VacWait::Io;
        false
    }

    /// Send a readahead window to the device.
    pub(super) fn vacuum_issue_window(&mut self, now: Nanos, start: u64, pages: u64) {
        let p = self.vac_phase_stats();
        p.device_reads += 1;
        p.device_read_bytes += pages * PAGE_BYTES;
        self.issue(
            IoKind::ReadRun {
                block: start,
                pages: pages as u32,
            },
            Purpose::VacuumReadAhead { start },
            now,
        );
    }

    /// A buffer from the ring for vacuum's next read: the slot's own buffer
    /// if nobody used it since, else one from the clock sweep that joins the
    /// ring (`GetBufferFromRing` / `AddBufferToRing`). Pinned.
    pub(super) fn ring_buffer(&mut self) -> Option<BufId> {
        let job = self.vacuum.job.as_mut()?;
        let slot = job.next_slot();
        if let Some(b) = job.ring[slot]
            && self.pool.pin_for_ring(b)
        {
            return Some(b);
        }
        let v = self.pool.clock_sweep()?;
        self.vacuum.job.as_mut()?.ring[slot] = Some(v);
        Some(v)
    }

    /// Vacuum's write of its dirty ring buffer, WAL being flushed.
    pub(super) fn vacuum_write(&mut self, now: Nanos) {
        let Some(v) = self.vacuum.victim else { return };
        if !self.pool.can_write(v) {
            self.vacuum.wait = VacWait::Running;
            self.vacuum_step(now);
            return;
        }
        let (block, lsn) = self.pool.start_write(v);
        assert!(
            self.wal.flushed_lsn() >= lsn,
            "ring buffer written before its WAL"
        );
        self.stats.counters.vacuum_writes += 1;
        self.vac_phase_stats().written += 1;
        let buffered = self.cfg.backend_flush_after == 0;
        if buffered && self.vacuum.job.as_ref().is_some_and(|j| j.two_pass()) {
            // A write into the page cache: the buffer is clean once copied,
            // the disk gets the page when the kernel writes it back, and the
            // backend goes on. Its CPU is in the page's one charge
            // (read_cpu, see `vacuum_page`).
            self.pool.write_done(v);
            self.issue(
                IoKind::WritePage {
                    block,
                    kernel_writeback: true,
                    batch: 0,
                },
                Purpose::VacuumWriteback { block },
                now,
            );
            self.vacuum.wait = VacWait::Running;
            self.vacuum_step(now);
            return;
        }
        self.vacuum.wait = VacWait::Io;
        let kind = self.vacuum.writeback.write_page(block);
        self.issue(kind, Purpose::VacuumWrite { buf: v, block }, now);
    }

    /// Log `bytes` of WAL for vacuum's change of the page in `b` (block
    /// `block`), a full-page image of `fpi` bytes first if it is the page's
    /// first change since the checkpoint, and dirty it.
    pub(super) fn vacuum_log(&mut self, now: Nanos, b: BufId, block: u64, bytes: u64, fpi: u64) {
        let mut bytes = bytes;
        let mut image = false;
        if self.touched.insert(block) && self.cfg.full_page_writes {
            bytes += fpi;
            image = true;
            self.stats.counters.full_page_images += 1;
        }
        let lsn = self.wal.insert(bytes);
        if image {
            self.log_image(lsn, fpi);
        }
        self.stats.second(now).wal_bytes += bytes;
        self.pool.mark_dirty(b, lsn);
        self.stats.counters.vacuum_dirtied += 1;
        let p = self.vac_phase_stats();
        p.dirtied += 1;
        p.wal_bytes += bytes;
        p.full_page_images += u64::from(image);
    }

    /// Heap page `block` becomes all-visible: the VISIBLE record, and its
    /// visibility-map page dirtied.
    pub(super) fn vacuum_set_visible(&mut self, now: Nanos, block: u64) {
        let lsn = self.wal.insert(vac::VISIBLE_WAL_BYTES);
        self.stats.second(now).wal_bytes += vac::VISIBLE_WAL_BYTES;
        self.vac_phase_stats().wal_bytes += vac::VISIBLE_WAL_BYTES;
        let _ = lsn;
        self.vacuum.summary.set_all_visible += 1;
        if let Some(job) = self.vacuum.job.as_ref() {
            let i = ((block - job.target.heap_first) / vac::HEAP_PAGES_PER_VM_PAGE) as usize;
            if let Some(d) = self.vacuum.vm.get_mut(i)
                && !*d
            {
                *d = true;
                self.vacuum.summary.vm_pages_dirtied += 1;
            }
        }
    }

    /// Process the pinned page in `b` as the job's phase does, then move
    /// on. Returns true if vacuum now waits (its cost-limit sleep, or the
    /// CPU it owes).
    pub(super) fn vacuum_page(&mut self, now: Nanos, b: BufId, cost: u32) -> bool {
        let Some(job) = self.vacuum.job.as_mut() else {
            self.pool.unpin(b);
            return false;
        };
        if !job.two_pass() {
            return self.vacuum_page_one_pass(now, b, cost);
        }
        let [hit, miss, dirty_cost] = self.cfg.vacuum_cost_page;
        let mut cost = cost;
        let fpi_bytes = self.fpi_bytes;
        let phase = job.phase;
        let end = job.stream_end();
        let block = match phase {
            vac::Phase::ScanHeap => job.scan_position(),
            _ => job.pass_block().expect("a page in progress"),
        };
        // The kernel reads the next window when the reader reaches this one.
        let ahead = job.ra.next_async(block, end);
        // One CPU charge per page read in: vacuum reads, changes and
        // writes back each page it reads, and the measured CPU per page
        // I/O (read_cpu) cannot be split between reads and writes.
        if cost == miss {
            self.vac_phase_stats().misses += 1;
            self.vacuum.cpu += self.cfg.read_cpu;
            self.vac_phase_stats().cpu += self.cfg.read_cpu;
        }
        if let Some((start, pages)) = ahead {
            self.vacuum_issue_window(now, start, pages);
        }
        let job = self.vacuum.job.as_mut().expect("job");
        match phase {
            vac::Phase::ScanHeap => {
                let (all_visible, dead) = job.page_state(block);
                if dead > 0 {
                    // Pruned: the dead tuples become dead items for phase III.
                    let fpi = fpi_bytes.saturating_sub(dead * vac::DEAD_TUPLE_BYTES);
                    self.vacuum_log(now, b, block, vac::PRUNE_WAL_BYTES + 2 * dead, fpi);
                    cost += dirty_cost;
                    self.vacuum.summary.lpdead_pages += 1;
                    self.vacuum.summary.lpdead_items += dead;
                } else if !all_visible {
                    // Nothing to remove: set all-visible (PD_ALL_VISIBLE
                    // dirties the page, without an image: no checksums),
                    // and record its free space (an FSM page, a hit).
                    let lsn = self.wal.insert(0);
                    self.pool.mark_dirty(b, lsn);
                    self.stats.counters.vacuum_dirtied += 1;
                    self.vac_phase_stats().dirtied += 1;
                    self.vacuum_set_visible(now, block);
                    cost += dirty_cost + hit;
                    self.stats.counters.vacuum_hits += 1;
                    self.vac_phase_stats().hits += 1;
                }
                self.vacuum.job.as_mut().expect("job").advance(dead);
            }
            vac::Phase::VacuumIndexes => {
                let (per_page, share) = job.index_dead();
                let dirty = share >= 1.0
                    || (share > 0.0 && rand::RngExt::random_bool(&mut self.rng, share));
                if dirty {
                    let items = per_page.round().max(1.0) as u64;
                    let fpi = fpi_bytes.saturating_sub(items * vac::INDEX_ITEM_BYTES);
                    self.vacuum_log(now, b, block, vac::BTREE_VACUUM_WAL_BYTES + 2 * items, fpi);
                    cost += dirty_cost;
                }
                self.vacuum.job.as_mut().expect("job").pass_advance();
            }
            vac::Phase::VacuumHeap => {
                let items = job.pass_items();
                let fpi = fpi_bytes.saturating_sub(items * vac::DEAD_TUPLE_BYTES);
                self.vacuum_log(now, b, block, vac::VACUUM_WAL_BYTES + 2 * items, fpi);
                self.vacuum_set_visible(now, block);
                cost += dirty_cost + hit;
                self.stats.counters.vacuum_hits += 1;
                self.vac_phase_stats().hits += 1;
                self.vacuum.job.as_mut().expect("job").pass_advance();
            }
        }
        self.pool.unpin(b);
        self.stats.counters.vacuum_pages += 1;
        self.vac_phase_stats().pages += 1;
        self.vac_phase_check(now);
        let job = self.vacuum.job.as_mut().expect("job");
        let mut pause = 0;
        if let Some(sleep) = job.cost.charge(cost) {
            self.stats.counters.vacuum_sleep_ns += sleep;
            self.vac_phase_stats().sleep += sleep;
            pause += sleep;
        }
        // CPU is paid in slices, not per page: fewer events, same total.
        if self.vacuum.cpu >= VACUUM_CPU_SLICE {
            pause += std::mem::take(&mut self.vacuum.cpu);
        }
        if pause > 0 {
            self.vacuum.wait = VacWait::Sleeping;
            self.set_timer(now + pause, Timer::VacuumWake);
            return true;
        }
        false
    }

    /// A table without an index: prune the page with the job's
    /// probability, in one pass.
    pub(super) fn vacuum_page_one_pass(&mut self, now: Nanos, b: BufId, cost: u32) -> bool {
        let job = self.vacuum.job.as_mut().expect("job");
        let block = job.current().expect("a page in progress");
        let mut cost = cost;
        let prune = job.dirty_fraction >= 1.0
            || (job.dirty_fraction > 0.0
                && rand::RngExt::random_bool(&mut self.rng, job.dirty_fraction));
        if prune {
            let mut bytes = vac::PRUNE_WAL_BYTES;
            let image = self.touched.insert(block) && self.cfg.full_page_writes;
            if image {
                bytes += self.fpi_bytes;
                self.stats.counters.full_page_images += 1;
            }
            let lsn = self.wal.insert(bytes);
            if image {
                self.log_image(lsn, self.fpi_bytes);
            }
            self.stats.second(now).wal_bytes += bytes;
            self.pool.mark_dirty(b, lsn);
            self.stats.counters.vacuum_dirtied += 1;
            cost += self.cfg.vacuum_cost_page[2];
        }
        self.pool.unpin(b);
        self.stats.counters.vacuum_pages += 1;
        let job = self.vacuum.job.as_mut().expect("job");
        job.advance(0);
        if let Some(sleep) = job.cost.charge(cost) {
            self.stats.counters.vacuum_sleep_ns += sleep;
            self.vacuum.wait = VacWait::Sleeping;
            self.set_timer(now + sleep, Timer::VacuumWake);
            return true;
        }
        false
    }

    pub(super) fn vacuum_done(&mut self, now: Nanos) {
        let Some(job) = self.vacuum.job.take() else {
            return;
        };
        let (phase, since) = self.vacuum.phase;
        self.vacuum.summary.phases[phase as usize].time += now.saturating_sub(since);
        self.vacuum.summary.index_passes = job.index_passes;
        self.vacuum.summary.skipped = job.skipped;
        // The ring's buffers go back to the pool as they are: dirty ones are
        // written later by the checkpointer, the bgwriter or a backend.
        drop(job);
        self.stats.counters.vacuum_runs_done += 1;
        if let Some(e) = self.vacuum.events.last_mut() {
            e.end = Some(now);
            e.pages = self.stats.counters.vacuum_pages;
        }
        match self.cfg.mode {
            Mode::Vacuum(_) => self.finish(now),
            // The worker goes on down its list (the loop hands it on).
            Mode::Bench if self.cfg.autovacuum => {
                self.set_timer(now, Timer::AutovacuumWorkerDone);
            }
            Mode::Bench | Mode::Catchup(_) => {}
        }
    }

    /// The one-shot vacuum's phases and totals.
    pub fn vacuum_summary(&self) -> &VacuumSummary {
        &self.vacuum.summary
    }

    /// Vacuum runs so far; past `SERIES_MAX_POINTS` of them, every
    /// other one, then every fourth, and so on (`BoundedEvents`).
    pub fn vacuums(&self) -> &[VacuumEvent] {
        self.vacuum.events.as_slice()
    }
}
