//! The background writer process: every bgwriter_delay it estimates the
//! buffers backends will soon need (`core::bgwriter`, BgBufferSync) and
//! writes the dirty ones among them, one at a time, each after the WAL
//! covering it is durable.

use super::*;

/// The background writer process's state.
pub(super) struct BgWriterProc {
    /// How many buffers a round cleans, from the recent allocations.
    pub(super) policy: BgWriter,
    /// The round's buffers still to write, the next one last.
    pub(super) queue: Vec<BufId>,
    /// A round is under way (its writes go one after the other).
    pub(super) busy: bool,
    /// The buffer and block it holds back until the WAL is durable.
    pub(super) flush_wait: Option<(BufId, u64)>,
    /// Its pending writeback (bgwriter_flush_after).
    pub(super) writeback: WritebackContext,
}

impl BgWriterProc {
    /// Asleep, with no round planned.
    pub(super) fn new(cfg: &CoreConfig) -> BgWriterProc {
        BgWriterProc {
            policy: BgWriter::new(
                cfg.bgwriter_lru_maxpages,
                cfg.bgwriter_lru_multiplier,
                cfg.bgwriter_delay / MS,
                cfg.nbuffers,
            ),
            queue: Vec::new(),
            busy: false,
            flush_wait: None,
            writeback: WritebackContext::new(Writer::BgWriter, cfg.bgwriter_flush_after),
        }
    }
}

impl Database {
    /// bgwriter_delay is over: unless its last round is still writing, it
    /// plans a round and starts it; it sleeps again either way.
    pub(super) fn bgwriter_wake(&mut self, now: Nanos) {
        if !self.bgwriter.busy {
            let mut q = std::mem::take(&mut self.bgwriter.queue);
            self.bgwriter.policy.plan(&mut self.pool, &mut q);
            q.reverse();
            self.bgwriter.queue = q;
            self.bgwriter.busy = true;
            self.bgwriter_next(now);
        }
        self.set_timer(now + self.cfg.bgwriter_delay, Timer::BgWriter);
    }

    /// Write the next buffer of the background writer's round, if any.
    pub(super) fn bgwriter_next(&mut self, now: Nanos) {
        while let Some(buf) = self.bgwriter.queue.pop() {
            if self.pool.reusable(buf) != Some(true) {
                continue;
            }
            let (block, lsn) = self.pool.start_write(buf);
            if self.flush_for_write(now, lsn, Waiter::BgWriter) {
                self.bgwrite(now, buf, block);
            } else {
                self.bgwriter.flush_wait = Some((buf, block));
            }
            return;
        }
        self.bgwriter.busy = false;
    }

    /// Its write of `buf` (`block`) is done: the next one goes.
    pub(super) fn bgwrite_done(&mut self, now: Nanos, buf: BufId, block: u64) {
        self.pool.write_done(buf);
        self.os_cache.write(block);
        self.writer_cpu(now, Background::BgWriter);
        self.stats.counters.bgwriter_writes += 1;
        self.bgwriter_next(now);
    }

    /// The WAL it waited for is durable: the write it held back goes out.
    pub(super) fn bgwriter_flushed(&mut self, now: Nanos) {
        let (buf, block) = self
            .bgwriter
            .flush_wait
            .take()
            .expect("bgwriter flush wait");
        self.bgwrite(now, buf, block);
    }

    /// Write `buf` (`block`), whose WAL is durable.
    fn bgwrite(&mut self, now: Nanos, buf: BufId, block: u64) {
        let kind = self.bgwriter.writeback.write_page(block);
        self.issue(kind, Purpose::BgWrite { buf, block }, now);
    }
}
