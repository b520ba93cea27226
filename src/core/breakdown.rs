//! The per-transaction breakdown: every nanosecond of a transaction's latency
//! is charged to exactly one bucket.

use super::time::Nanos;

/// Where a transaction's time goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Bucket {
    /// Running on a core.
    Cpu,
    /// Runnable, waiting for a core.
    CpuQueue,
    /// Waiting for a data page read (its own or another backend's),
    /// including its own read syscall's CPU, as blk_read_time times it.
    PageRead,
    /// Evicting a dirty victim: the WAL flush it needs and its write; also
    /// waiting for WAL buffer space.
    BufferWait,
    /// Waiting for a row lock held by another transaction.
    LockWait,
    /// Waiting for the commit's WAL flush, its own or the group's.
    WalFsync,
    /// After the local flush, waiting for the synchronous standbys to
    /// confirm the commit (wait event IPC:SyncRep).
    SyncRep,
    /// Client round trips and anything else.
    Other,
    /// Waiting for the client: its thread (pgbench -j on the database host)
    /// to get a core, read the last reply and send the next statement, one
    /// of its clients at a time.
    Client,
}

impl Bucket {
    /// All buckets, in report order.
    pub const ALL: [Bucket; Bucket::COUNT] = [
        Bucket::Cpu,
        Bucket::CpuQueue,
        Bucket::PageRead,
        Bucket::BufferWait,
        Bucket::LockWait,
        Bucket::WalFsync,
        Bucket::SyncRep,
        Bucket::Other,
        Bucket::Client,
    ];

    /// How many buckets there are.
    pub const COUNT: usize = 9;

    /// Name used in reports and JSON.
    pub fn name(self) -> &'static str {
        match self {
            Bucket::Cpu => "cpu",
            Bucket::CpuQueue => "cpu_queue",
            Bucket::PageRead => "page_read",
            Bucket::BufferWait => "buffer_wait",
            Bucket::LockWait => "lock_wait",
            Bucket::WalFsync => "wal_fsync",
            Bucket::SyncRep => "sync_rep",
            Bucket::Other => "other",
            Bucket::Client => "client",
        }
    }

    /// Index into `ALL`.
    pub fn index(self) -> usize {
        self as usize
    }
}

/// A transaction's running account: the bucket it is in now, since when,
/// and the time charged so far. Switching buckets closes the current span,
/// so the buckets always sum to `now - start`.
#[derive(Debug, Clone, Copy)]
pub struct TxClock {
    start: Nanos,
    current: Bucket,
    since: Nanos,
    spent: [Nanos; Bucket::COUNT],
}

impl TxClock {
    /// A transaction starting at `now` in bucket `first`.
    pub fn start(now: Nanos, first: Bucket) -> Self {
        TxClock {
            start: now,
            current: first,
            since: now,
            spent: [0; Bucket::COUNT],
        }
    }

    /// From `now` on, time goes to `bucket`.
    pub fn switch(&mut self, now: Nanos, bucket: Bucket) {
        debug_assert!(now >= self.since, "time went backwards");
        self.spent[self.current.index()] += now - self.since;
        self.current = bucket;
        self.since = now;
    }

    /// Close the account at `now`: (latency, time per bucket).
    pub fn finish(mut self, now: Nanos) -> (Nanos, [Nanos; Bucket::COUNT]) {
        self.switch(now, Bucket::Other);
        (now - self.start, self.spent)
    }

    /// When the transaction started.
    pub fn started(&self) -> Nanos {
        self.start
    }

    /// The bucket time goes to now.
    pub fn current(&self) -> Bucket {
        self.current
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Whatever the sequence of switches, the buckets sum to the latency.
        #[test]
        fn buckets_sum_to_latency(start in 0u64..1_000_000, steps in proptest::collection::vec((0u64..10_000, 0usize..7), 0..50)) {
            let mut clock = TxClock::start(start, Bucket::Other);
            let mut now = start;
            for (dt, b) in steps {
                now += dt;
                clock.switch(now, Bucket::ALL[b]);
            }
            let (lat, spent) = clock.finish(now + 3);
            prop_assert_eq!(lat, now + 3 - start);
            prop_assert_eq!(spent.iter().sum::<u64>(), lat);
        }
    }
}
