//! The vacuum worker: autovacuum's launcher and its one worker, and the
//! one-shot VACUUM of `pgiosim vacuum`, reading through a ring buffer,
//! pruning, logging and writing pages under the cost limit.

use super::*;

impl Database {
    /// A row version in `block` died (an UPDATE or DELETE): count it
    /// against its table (n_dead_tup) for autovacuum.
    pub(super) fn count_dead_tuple(&mut self, block: u64) {
        if let Some(i) = self
            .tables
            .iter()
            .position(|t| block >= t.first && block < t.first + t.pages)
        {
            self.dead[i] += 1;
        }
    }

    /// The autovacuum launcher wakes: start a worker on the first table past
    /// its dead-tuple threshold, if none is running (one worker modelled).
    pub(super) fn autovacuum_launch(&mut self, now: Nanos) {
        if self.vac.is_some() {
            return;
        }
        let Some(i) =
            (0..self.tables.len()).find(|&i| vac::needs_vacuum(self.dead[i], self.tables[i].rows))
        else {
            return;
        };
        let t = self.tables[i].clone();
        let share = vac::dirty_share(self.dead[i], t.pages);
        self.dead[i] = 0;
        let cost = CostBalance::new(
            self.cfg.autovacuum_cost_limit,
            self.cfg.autovacuum_cost_delay,
        );
        self.start_vacuum(now, VacuumJob::new(&t.name, t.first, t.pages, share, cost));
    }

    pub(super) fn start_vacuum(&mut self, now: Nanos, job: VacuumJob) {
        self.stats.counters.vacuum_runs += 1;
        self.vacuums.push(VacuumEvent {
            table: job.table.clone(),
            start: now,
            end: None,
            pages: 0,
        });
        self.vac_phase = (job.phase, now);
        self.vac = Some(job);
        self.vac_wait = VacWait::Running;
        self.vacuum_step(now);
    }

    /// vacuum_cost_page_miss.
    pub(super) fn cost_miss(&self) -> u32 {
        self.cfg.vacuum_cost_page[1]
    }

    /// The counters of the phase being timed.
    pub(super) fn vac_phase_stats(&mut self) -> &mut VacuumPhaseStats {
        &mut self.vac_summary.phases[self.vac_phase.0 as usize]
    }

    /// The job's phase may have changed: close the old one's time.
    pub(super) fn vac_phase_check(&mut self, now: Nanos) {
        let Some(job) = self.vac.as_ref() else { return };
        let (old, since) = self.vac_phase;
        if job.phase != old {
            self.vac_summary.phases[old as usize].time += now.saturating_sub(since);
            self.vac_phase = (job.phase, now);
        }
    }

    /// The block vacuum works on next, switching phases as PostgreSQL
    /// does; None when the vacuum is over.
    pub(super) fn vacuum_next_block(&mut self, now: Nanos) -> Option<u64> {
        loop {
            let job = self.vac.as_mut()?;
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
            if self.vac_wait != VacWait::Running || self.vac.is_none() {
                return;
            }
            let Some(block) = self.vacuum_next_block(now) else {
                self.vacuum_done(now);
                return;
            };
            if self.vac_victim.is_none() {
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
                        self.vac_wait = VacWait::Sleeping;
                        self.set_timer(now + MS, Timer::VacuumWake);
                        return;
                    }
                    Lookup::Miss => {}
                }
            }
            let v = match self.vac_victim.take() {
                Some(v) => v,
                None => match self.ring_buffer() {
                    Some(v) => v,
                    None => {
                        self.vac_wait = VacWait::Sleeping;
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
                self.vac_victim = Some(v);
                if self.wal.wait_for_flush(lsn, Waiter::Vacuum) {
                    self.vacuum_write(now);
                } else {
                    self.vac_wait = VacWait::WalFlush;
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
        let job = self.vac.as_mut().expect("a vacuum job");
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
                self.vac_wait = VacWait::Io;
                self.issue(
                    IoKind::ReadPage { block },
                    Purpose::VacuumRead { buf: v },
                    now,
                );
                return false;
            }
        }
        self.vac_ra_wait = Some((v, block));
        self.vac_wait = VacWait::Io;
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
        let job = self.vac.as_mut()?;
        let slot = job.next_slot();
        if let Some(b) = job.ring[slot]
            && self.pool.pin_for_ring(b)
        {
            return Some(b);
        }
        let v = self.pool.clock_sweep()?;
        self.vac.as_mut()?.ring[slot] = Some(v);
        Some(v)
    }

    /// Vacuum's write of its dirty ring buffer, WAL being flushed.
    pub(super) fn vacuum_write(&mut self, now: Nanos) {
        let Some(v) = self.vac_victim else { return };
        if !self.pool.can_write(v) {
            self.vac_wait = VacWait::Running;
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
        if buffered && self.vac.as_ref().is_some_and(|j| j.two_pass()) {
            // A write into the page cache: the buffer is clean once copied,
            // the disk gets the page when the kernel writes it back, and the
            // backend goes on. Its CPU is in the page's one charge
            // (read_cpu, see `vacuum_page`).
            self.pool.write_done(v);
            self.issue(
                IoKind::WritePage {
                    block,
                    kernel_writeback: true,
                },
                Purpose::VacuumWriteback { block },
                now,
            );
            self.vac_wait = VacWait::Running;
            self.vacuum_step(now);
            return;
        }
        self.vac_wait = VacWait::Io;
        self.issue(
            IoKind::WritePage {
                block,
                kernel_writeback: self.cfg.backend_flush_after == 0,
            },
            Purpose::VacuumWrite { buf: v, block },
            now,
        );
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
        self.vac_summary.set_all_visible += 1;
        if let Some(job) = self.vac.as_ref() {
            let i = ((block - job.target.heap_first) / vac::HEAP_PAGES_PER_VM_PAGE) as usize;
            if let Some(d) = self.vac_vm.get_mut(i)
                && !*d
            {
                *d = true;
                self.vac_summary.vm_pages_dirtied += 1;
            }
        }
    }

    /// Process the pinned page in `b` as the job's phase does, then move
    /// on. Returns true if vacuum now waits (its cost-limit sleep, or the
    /// CPU it owes).
    pub(super) fn vacuum_page(&mut self, now: Nanos, b: BufId, cost: u32) -> bool {
        let Some(job) = self.vac.as_mut() else {
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
            self.vac_cpu += self.cfg.read_cpu;
            self.vac_phase_stats().cpu += self.cfg.read_cpu;
        }
        if let Some((start, pages)) = ahead {
            self.vacuum_issue_window(now, start, pages);
        }
        let job = self.vac.as_mut().expect("job");
        match phase {
            vac::Phase::ScanHeap => {
                let (all_visible, dead) = job.page_state(block);
                if dead > 0 {
                    // Pruned: the dead tuples become dead items for phase III.
                    let fpi = fpi_bytes.saturating_sub(dead * vac::DEAD_TUPLE_BYTES);
                    self.vacuum_log(now, b, block, vac::PRUNE_WAL_BYTES + 2 * dead, fpi);
                    cost += dirty_cost;
                    self.vac_summary.lpdead_pages += 1;
                    self.vac_summary.lpdead_items += dead;
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
                self.vac.as_mut().expect("job").advance(dead);
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
                self.vac.as_mut().expect("job").pass_advance();
            }
            vac::Phase::VacuumHeap => {
                let items = job.pass_items();
                let fpi = fpi_bytes.saturating_sub(items * vac::DEAD_TUPLE_BYTES);
                self.vacuum_log(now, b, block, vac::VACUUM_WAL_BYTES + 2 * items, fpi);
                self.vacuum_set_visible(now, block);
                cost += dirty_cost + hit;
                self.stats.counters.vacuum_hits += 1;
                self.vac_phase_stats().hits += 1;
                self.vac.as_mut().expect("job").pass_advance();
            }
        }
        self.pool.unpin(b);
        self.stats.counters.vacuum_pages += 1;
        self.vac_phase_stats().pages += 1;
        self.vac_phase_check(now);
        let job = self.vac.as_mut().expect("job");
        let mut pause = 0;
        if let Some(sleep) = job.cost.charge(cost) {
            self.stats.counters.vacuum_sleep_ns += sleep;
            self.vac_phase_stats().sleep += sleep;
            pause += sleep;
        }
        // CPU is paid in slices, not per page: fewer events, same total.
        if self.vac_cpu >= VACUUM_CPU_SLICE {
            pause += std::mem::take(&mut self.vac_cpu);
        }
        if pause > 0 {
            self.vac_wait = VacWait::Sleeping;
            self.set_timer(now + pause, Timer::VacuumWake);
            return true;
        }
        false
    }

    /// A table without an index: prune the page with the job's
    /// probability, in one pass.
    pub(super) fn vacuum_page_one_pass(&mut self, now: Nanos, b: BufId, cost: u32) -> bool {
        let job = self.vac.as_mut().expect("job");
        let block = job.current().expect("a page in progress");
        let mut cost = cost;
        let prune = job.dirty_fraction >= 1.0
            || (job.dirty_fraction > 0.0
                && rand::RngExt::random_bool(&mut self.rng, job.dirty_fraction));
        if prune {
            let mut bytes = vac::PRUNE_WAL_BYTES;
            if self.touched.insert(block) && self.cfg.full_page_writes {
                bytes += self.fpi_bytes;
                self.stats.counters.full_page_images += 1;
            }
            let lsn = self.wal.insert(bytes);
            self.stats.second(now).wal_bytes += bytes;
            self.pool.mark_dirty(b, lsn);
            self.stats.counters.vacuum_dirtied += 1;
            cost += self.cfg.vacuum_cost_page[2];
        }
        self.pool.unpin(b);
        self.stats.counters.vacuum_pages += 1;
        let job = self.vac.as_mut().expect("job");
        job.advance(0);
        if let Some(sleep) = job.cost.charge(cost) {
            self.stats.counters.vacuum_sleep_ns += sleep;
            self.vac_wait = VacWait::Sleeping;
            self.set_timer(now + sleep, Timer::VacuumWake);
            return true;
        }
        false
    }

    pub(super) fn vacuum_done(&mut self, now: Nanos) {
        let Some(job) = self.vac.take() else { return };
        let (phase, since) = self.vac_phase;
        self.vac_summary.phases[phase as usize].time += now.saturating_sub(since);
        self.vac_summary.index_passes = job.index_passes;
        self.vac_summary.skipped = job.skipped;
        // The ring's buffers go back to the pool as they are: dirty ones are
        // written later by the checkpointer, the bgwriter or a backend.
        drop(job);
        self.stats.counters.vacuum_runs_done += 1;
        if let Some(e) = self.vacuums.last_mut() {
            e.end = Some(now);
            e.pages = self.stats.counters.vacuum_pages;
        }
        if self.cfg.vacuum_table.is_some() {
            self.finish(now);
        }
    }

    /// The one-shot vacuum's phases and totals.
    pub fn vacuum_summary(&self) -> &VacuumSummary {
        &self.vac_summary
    }

    /// Vacuum runs so far.
    pub fn vacuums(&self) -> &[VacuumEvent] {
        &self.vacuums
    }
}
