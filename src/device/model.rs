//! The device model: when would an operation submitted now complete on the
//! disk a [`Profile`] describes?
//!
//! Sans-I/O and deterministic: no clock, no file, no thread. Time comes in
//! with every call, one seeded generator draws every service time, so the
//! same seed and the same calls give the same completion times. Each call is
//! O(log k) for k channels and allocates nothing; memory is fixed at
//! creation (k channel slots), whatever the size of the data or the run.
//! With `contention_us`, add O(log n) and a slot per operation in flight.
//!
//! # Structure
//!
//! FoundationDB's simulated disk admits each operation at
//! `max(now, next_free)` and moves `next_free` by `1/iops + size/bandwidth`.
//! This model takes that shape apart into the pieces a real disk has:
//!
//! ```text
//!  submit ─► caps (token buckets) ─┐
//!        └─► FIFO queue ─► k channels ─► medium (bytes/bandwidth) ─┴─► + round trip ─► done
//! ```
//!
//! * **Caps.** Each cap (IOPS, per-direction IOPS, MiB/s, per-direction
//!   MiB/s, burst credits) is a token bucket whose depth is
//!   `caps.bucket_ms` of its rate. An operation takes its tokens from every
//!   bucket that applies, in submission order, at the first time all of them
//!   hold enough (an operation dearer than a bucket's depth goes when the
//!   bucket is full and leaves it in debt). Reads and writes count
//!   ceil(bytes / `caps.op_size_kib`) operations (at least one); a flush
//!   counts one write operation when `caps.flush_counts_as_io`, else none.
//!   The burst bucket (gp2 style) refills at its baseline rate and starts
//!   full. With `caps.limiter` `blk_throttle`, each cap but the burst bucket
//!   is a window counter instead, as Linux's cgroup throttle counts: every
//!   `bucket_ms` window grants rate × `bucket_ms`; an operation over budget
//!   waits, in order, for the next window.
//! * **Channels.** A FIFO queue in front of k channels: an operation takes
//!   the earliest free channel, no earlier than it was submitted, and holds
//!   it for its work. Its work is its transfer on the medium (bytes /
//!   `bandwidth_mib_s`; the medium is one pipe shared by all channels, used
//!   in the same order) followed by a service time drawn from the op's
//!   log-normal, fitted so that the profile's QD1 median and p99 come out
//!   (stated latency minus round trip and transfer, see
//!   [`Profile::fixed_us`]), plus, for every other operation on the device
//!   (on a channel, not yet complete) when it starts, the contention between
//!   the two kinds ([`Profile::contention_between`]: `contention_us` among
//!   reads, `write_contention_us` among writes, `read_write_contention_us`
//!   between a read and a write, `flush_contention_us` with a flush);
//!   operations a cap holds or that wait for a channel are not on the device
//!   yet. Writes move on the medium at `write_bandwidth_mib_s`.
//! * **Idle and flush size.** An operation that finds nothing in flight
//!   takes the `idle` curve's extra for how long the device has been idle;
//!   a flush takes `flush_us_per_mib` per MiB written since the previous
//!   flush.
//! * **Both.** The operation finishes when the device would have finished it
//!   (queueing for a channel and for the medium) and when its own work has
//!   run after the caps admitted it: `max(device_end, admitted + work)`.
//!   When nothing is capped this is exactly the k-server FIFO queue; when a
//!   cap binds, the cap decides.
//! * **Round trip.** `network_rtt_us` is added to every operation after the
//!   device, outside the channels. Where on the way it sits changes nothing,
//!   as every operation pays the same.
//! * **Flushes.** With `flush_to_media = false` (power-loss-protected
//!   cache) a flush is an ordinary operation: a channel, a service time, no
//!   bytes; flushes run in parallel. With `flush_to_media = true` (volatile
//!   cache) every write is also destaged to the medium after it completes,
//!   one after another at `bandwidth_mib_s`; a flush starts once every write
//!   submitted before it is destaged and the previous flush has finished,
//!   then takes its service time. Flushes then run strictly one at a time and
//!   do not take a channel: that is why parallel fsyncs do not scale on such
//!   disks, and why a flush after a burst of writes waits for all of them.
//!
//! # Where the model is wrong
//!
//! Known divergences from real disks, so nobody mistakes them for findings:
//!
//! * **Load-dependent service time is linear and counted once.** Every
//!   service time is drawn from the QD1 distribution, plus the contention
//!   of each operation on the device when it starts; operations that arrive
//!   while it runs do not slow it further. In a closed loop that is the same
//!   on average; a burst arriving behind a long operation is cheaper than on
//!   a real disk. Every kind of operation slows every other kind alike (this
//!   VM's fdatasync slows by 13–26 µs per read or flush in flight, its reads
//!   by 10–15 µs per read). With `contention_us` 0 only queueing for
//!   channels, the medium and the caps adds to the QD1 figure.
//! * **No read/write interference beyond shared channels and medium.** No
//!   program/erase suspend, no read stalls behind writes inside the flash.
//! * **No garbage collection, write cliff, SLC-cache exhaustion or thermal
//!   throttling.** Sustained writes never get slower.
//! * **No cache capacity on media-flush disks.** Writes are acknowledged at
//!   cache speed however much is dirty; the backlog only shows at the next
//!   flush (which waits for all of it).
//! * **No flush coalescing.** Linux's block layer merges flushes that queue
//!   behind one in flight; the model runs media flushes one after another,
//!   so parallel flush rates on media-flush disks are pessimistic.
//! * **Provider throttles are guesses.** EBS's throttle shape is not
//!   published: `token_bucket` with `bucket_ms` is a guess. The model
//!   delivers exactly the cap in the long run; EBS promises 90% of it 99% of
//!   the time. `blk_throttle` follows the kernel's slices, without its
//!   jiffy rounding.
//! * **Held operations book their channel early.** An operation that a cap
//!   holds is booked on the channels at the time it could have run
//!   uncapped. This keeps reads from waiting for channels that throttled
//!   writes have reserved in the future (per-direction caps), at the price of
//!   making channels look busier early, by at most the held work / k.
//! * **No offsets.** No sequential vs random difference, no merging of small
//!   adjacent I/Os before they are counted against a cap (EBS does merge
//!   them), no read-ahead; the OS page cache is the core's business.
//! * **Independent samples.** Service times are i.i.d.: no slow periods, no
//!   noisy neighbours, no network jitter apart from the log-normal, whose
//!   tail beyond p99 is the log-normal's (real tails are often heavier).
//! * **One medium.** Reads and writes share one pipe (at their own
//!   bandwidths); no interface vs NAND distinction.
//! * **Idle is the device's, not the host's.** The `idle` curve is keyed
//!   on the time the device had nothing in flight; on a VM part of the
//!   slowdown after a pause is the program's thread or the host's I/O thread
//!   waking, which this cannot tell apart.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use rand::SeedableRng;
use rand_distr::{Distribution, LogNormal};

use super::block_layer::BlockLayer;
use super::inode_times::{INODE_BYTES, InodeTimes};
use super::profile::{Caps, IdlePoint, Limiter, Op, Profile, idle_extra_us, lognormal_sigma};
use crate::core::SimRng;
use crate::core::io::IoKind;
use crate::core::time::Nanos;

/// The kinds of operation, in their index order.
const OPS: [Op; 3] = [Op::Read, Op::Write, Op::Flush];

/// Indices into [`DeviceModel::buckets`].
const B_IOPS: usize = 0;
const B_READ_IOPS: usize = 1;
const B_WRITE_IOPS: usize = 2;
const B_BURST: usize = 3;
const B_BYTES: usize = 4;
const B_READ_BYTES: usize = 5;
const B_WRITE_BYTES: usize = 6;
const BUCKETS: usize = 7;

const MIB: f64 = 1_048_576.0;

/// A token bucket in virtual scheduling form: `full_at` is when it would be
/// full again if nothing more were taken. Times in ns (f64, exact for any
/// run shorter than a hundred days).
#[derive(Clone, Copy, Debug)]
struct Bucket {
    /// ns per token.
    ns_per_token: f64,
    /// Tokens the bucket holds when full.
    capacity: f64,
    /// ns to refill from empty: capacity × ns_per_token.
    depth_ns: f64,
    /// When the bucket will be full (ns).
    full_at: f64,
}

impl Bucket {
    fn new(rate_per_s: f64, capacity: f64) -> Bucket {
        assert!(rate_per_s > 0.0 && capacity >= 0.0);
        let ns_per_token = 1e9 / rate_per_s;
        Bucket {
            ns_per_token,
            capacity,
            depth_ns: capacity * ns_per_token,
            full_at: 0.0,
        }
    }

    /// First time the bucket holds `cost` tokens (or is full, for an
    /// operation dearer than the bucket).
    fn ready(&self, cost: f64) -> f64 {
        self.full_at - self.depth_ns + cost.min(self.capacity) * self.ns_per_token
    }

    /// Take `cost` tokens at `at` (≥ `ready(cost)`).
    fn take(&mut self, at: f64, cost: f64) {
        self.full_at = self.full_at.max(at) + cost * self.ns_per_token;
    }
}

/// blk-throttle's accounting of one cap (block/blk-throttle.c,
/// tg_within_iops_limit and tg_within_bps_limit): each window of `slice_ns`
/// grants `budget`; an operation over budget waits for the next window, and
/// operations go in submission order. An operation that arrives after its
/// window ended opens a new one (the kernel starts a new slice); one that
/// waited opens the next window as the last one ends, so under a backlog
/// windows are back to back.
#[derive(Clone, Copy, Debug)]
struct Window {
    slice_ns: f64,
    budget: f64,
    start: f64,
    used: f64,
    /// When the last operation went: none goes before it.
    last: f64,
}

impl Window {
    fn new(rate_per_s: f64, slice_ms: f64) -> Window {
        assert!(rate_per_s > 0.0 && slice_ms > 0.0);
        Window {
            slice_ns: slice_ms * 1e6,
            budget: rate_per_s * slice_ms / 1e3,
            start: f64::NEG_INFINITY,
            used: 0.0,
            last: 0.0,
        }
    }

    /// The window holding time `at`: its start and what it has used.
    fn window(&self, at: f64) -> (f64, f64) {
        if at < self.start + self.slice_ns {
            (self.start, self.used)
        } else {
            (at, 0.0)
        }
    }

    /// First time at or after `at` that an operation of `cost` may go (one
    /// dearer than the whole budget goes alone in a fresh window).
    fn ready(&self, at: f64, cost: f64) -> f64 {
        let at = at.max(self.last);
        let (start, used) = self.window(at);
        if used == 0.0 || used + cost <= self.budget {
            at
        } else {
            start + self.slice_ns
        }
    }

    /// An operation goes at `at` (≥ `ready`).
    fn take(&mut self, at: f64, cost: f64) {
        let (start, used) = self.window(at);
        self.start = start;
        self.used = used + cost;
        self.last = at;
    }
}

/// One cap's limiter.
#[derive(Clone, Copy, Debug)]
enum Limit {
    Bucket(Bucket),
    Window(Window),
}

impl Limit {
    fn ready(&self, at: f64, cost: f64) -> f64 {
        match self {
            Limit::Bucket(b) => at.max(b.ready(cost)),
            Limit::Window(w) => w.ready(at, cost),
        }
    }

    fn take(&mut self, at: f64, cost: f64) {
        match self {
            Limit::Bucket(b) => b.take(at, cost),
            Limit::Window(w) => w.take(at, cost),
        }
    }
}

/// A disk in virtual time. See the module docs.
pub struct DeviceModel {
    /// Service time in ns for read, write, flush.
    service: [LogNormal<f64>; 3],
    rtt_ns: f64,
    /// ns the medium takes per byte read, and per byte written.
    ns_per_byte: f64,
    ns_per_byte_write: f64,
    /// ns a flush's service time grows by per byte written since the
    /// previous flush, and those bytes.
    flush_ns_per_byte: f64,
    bytes_since_flush: u64,
    /// The idle curve ([`Profile::idle`]) and when the device last had
    /// nothing in flight from (ns, device side).
    idle: Vec<IdlePoint>,
    busy_until: f64,
    flush_to_media: bool,
    flush_counts_as_io: bool,
    kernel_writeback_uncapped: bool,
    /// What the kernel makes of requests and what the caps count of them.
    block: BlockLayer,
    /// When an fdatasync writes the inode too (`inode_sync_tick_ms`).
    inodes: Option<InodeTimes>,
    /// The I/Os the next admitted operation is charged instead of its own
    /// count (a page of a merged range).
    next_ios: Option<f64>,
    /// I/Os the caps have counted: reads, and writes (flushes among them
    /// where a flush counts).
    counted: [f64; 2],
    /// Reads and writes the disk got after the block layer, counted by
    /// the caps or not (the kernel's uncapped writeback among them):
    /// what the disk's own statistics (/proc/diskstats) count, flushes
    /// apart.
    disk: [f64; 2],
    /// A striped array's members ([`crate::device::raid0`]): requests go
    /// to them, and this model's own queue stays unused.
    pub(super) stripes: Option<Box<Stripes>>,
    /// An array's own caps are the server's limits on all its volumes
    /// ([`crate::device::raid0::ServerLimits`]): a request completes no
    /// earlier than they let it through.
    pub(super) gated: bool,
    buckets: [Option<Limit>; BUCKETS],
    /// When each channel is next free (a min-heap of k entries).
    channels: BinaryHeap<Reverse<Nanos>>,
    /// When the medium is next free (ns).
    medium_free: f64,
    /// When every write so far will be destaged (media-flush disks), ns.
    destage_done: f64,
    /// When the last media flush ends, ns.
    flush_free: f64,
    /// The `now` of the last call: calls must not go back in time.
    last_now: Nanos,
    rng: SimRng,
    /// ns added to the service time of an operation of one kind (the
    /// first index: read, write, flush) per other operation in flight of
    /// each kind (the second).
    contention_ns: [[f64; 3]; 3],
    /// Whether any kind contends.
    contends: bool,
    /// With contention: when each operation past the caps completes on the
    /// device, with how many of each kind complete then.
    in_flight: BTreeMap<Nanos, Kinds>,
    /// The sum of `in_flight`'s counts: what is on the device once
    /// `advance` has dropped what completed (a sum over the map was most
    /// of a submission's work at 64 clients).
    in_flight_ops: [usize; 3],
    /// With contention: operations not on the device yet (a cap holds
    /// them, or they wait for a channel), (starts, completes).
    held: BTreeMap<(Nanos, Nanos), Kinds>,
    /// The longest any held operation has run from its start to its
    /// completion: one that started longer than this before a time is over
    /// by then, so a scan of `held` need not look further back (a burst of
    /// thousands held behind a cap would otherwise be scanned for each).
    held_span: Nanos,
}

/// Operations of each kind (read, write, flush).
type Kinds = [u32; 3];

/// A striped array: its layout and one model per member.
pub(super) struct Stripes {
    pub(super) raid: crate::device::raid0::Raid0,
    pub(super) members: Vec<DeviceModel>,
}

impl DeviceModel {
    /// A model of `profile`'s disk, idle at time 0, its buckets full, its
    /// service times drawn from a generator seeded with `seed`.
    pub fn new(profile: &Profile, seed: u64) -> DeviceModel {
        if let Some(raid) = profile.raid0 {
            return DeviceModel::array(profile, raid, seed);
        }
        let service = [
            fit(profile, Op::Read),
            fit(profile, Op::Write),
            fit(profile, Op::Flush),
        ];
        let caps = &profile.caps;
        let limit = |rate: Option<f64>| {
            rate.map(|r| match caps.limiter {
                Limiter::TokenBucket => Limit::Bucket(Bucket::new(r, r * caps.bucket_ms / 1e3)),
                Limiter::BlkThrottle => Limit::Window(Window::new(r, caps.bucket_ms)),
            })
        };
        let mut buckets = [None; BUCKETS];
        buckets[B_IOPS] = limit(caps.iops);
        buckets[B_READ_IOPS] = limit(caps.read_iops);
        buckets[B_WRITE_IOPS] = limit(caps.write_iops);
        buckets[B_BURST] = caps
            .burst
            .map(|b| Limit::Bucket(Bucket::new(b.baseline_iops, b.size_ios)));
        buckets[B_BYTES] = limit(caps.mib_s.map(|m| m * MIB));
        buckets[B_READ_BYTES] = limit(caps.read_mib_s.map(|m| m * MIB));
        buckets[B_WRITE_BYTES] = limit(caps.write_mib_s.map(|m| m * MIB));
        let k = profile.channels as usize;
        let mut channels = BinaryHeap::with_capacity(k);
        channels.extend(std::iter::repeat_n(Reverse(0), k));
        DeviceModel {
            service,
            rtt_ns: profile.network_rtt_us * 1e3,
            ns_per_byte: 1e9 / (profile.bandwidth_mib_s * MIB),
            ns_per_byte_write: 1e9 / (profile.bandwidth_for(Op::Write) * MIB),
            flush_ns_per_byte: profile.flush_us_per_mib * 1e3 / MIB,
            bytes_since_flush: 0,
            idle: profile.idle.clone(),
            busy_until: 0.0,
            flush_to_media: profile.flush_to_media,
            flush_counts_as_io: caps.flush_counts_as_io,
            kernel_writeback_uncapped: caps.kernel_writeback_uncapped,
            block: BlockLayer::new(profile),
            inodes: profile.inode_sync_tick_ms.map(InodeTimes::new),
            next_ios: None,
            counted: [0.0; 2],
            disk: [0.0; 2],
            stripes: None,
            gated: false,
            buckets,
            channels,
            medium_free: 0.0,
            destage_done: 0.0,
            flush_free: 0.0,
            last_now: 0,
            rng: SimRng::seed_from_u64(seed),
            contention_ns: OPS
                .map(|op| OPS.map(|other| profile.contention_between(op, other) * 1e3)),
            contends: OPS
                .iter()
                .any(|&op| OPS.iter().any(|&o| profile.contention_between(op, o) > 0.0)),
            in_flight: BTreeMap::new(),
            in_flight_ops: [0; 3],
            held: BTreeMap::new(),
            held_span: 0,
        }
    }

    /// A striped array of `profile`'s disk: a model per member, and this
    /// one gating at the server's limits, if any.
    fn array(profile: &Profile, raid: crate::device::raid0::Raid0, seed: u64) -> DeviceModel {
        let member = Profile {
            raid0: None,
            ..profile.clone()
        };
        let members = (0..u64::from(raid.members))
            .map(|i| DeviceModel::new(&member, seed.wrapping_add(1 + i)))
            .collect();
        let mut gate = member.clone();
        if let Some(l) = raid.server_limits {
            gate.caps = Caps {
                iops: Some(l.iops),
                mib_s: Some(l.mib_s),
                burst: l.burst,
                ..Caps::default()
            };
            gate.caps.op_size_kib = member.caps.op_size_kib;
        }
        let mut top = DeviceModel::new(&gate, seed);
        top.stripes = Some(Box::new(Stripes { raid, members }));
        top.gated = raid.server_limits.is_some();
        top
    }

    /// File `file` was written at `now` (its mtime may move).
    pub fn note_write(&mut self, now: Nanos, file: u64) {
        if let Some(i) = &mut self.inodes {
            i.written(now, file);
        }
    }

    /// An fdatasync of `file` at `now`: when it completes, and the flush's
    /// service time drawn ([`DeviceModel::submit_timed`]). If the file's
    /// inode is dirty the filesystem writes it before its flush: both are
    /// charged to the caps now, and the flush's own time follows the inode
    /// write's.
    pub fn submit_sync(&mut self, now: Nanos, file: u64) -> (Nanos, f64) {
        if self.inodes.as_mut().is_some_and(|i| i.synced(file)) {
            self.inode_then_flush(now)
        } else {
            self.submit_io(now, Op::Flush, 0, false)
        }
    }

    /// A flush at `now` after the file's inode write.
    pub(super) fn inode_then_flush(&mut self, now: Nanos) -> (Nanos, f64) {
        let (written, _) = self.submit_io(now, Op::Write, INODE_BYTES, false);
        let (flushed, drawn) = self.submit_io(now, Op::Flush, 0, false);
        (written + (flushed - now), drawn)
    }

    /// The inode times of a request at `now`: true if it is an fdatasync
    /// that writes the inode first.
    pub(super) fn inode_first(&mut self, now: Nanos, kind: IoKind) -> bool {
        self.inodes.as_mut().is_some_and(|i| i.request(now, kind))
    }

    /// An operation of `bytes` submitted at `now`: the time it completes.
    /// Calls come in non-decreasing `now` order. `bytes` is ignored for a
    /// flush.
    pub fn submit(&mut self, now: Nanos, op: Op, bytes: u64) -> Nanos {
        self.submit_timed(now, op, bytes).0
    }

    /// Like [`DeviceModel::submit`], also returning the service time drawn
    /// for the operation (ns), which the completion time includes once:
    /// `run --emulate` swaps it for one matched to the real disk's.
    pub fn submit_timed(&mut self, now: Nanos, op: Op, bytes: u64) -> (Nanos, f64) {
        self.submit_io(now, op, bytes, false)
    }

    /// Like [`DeviceModel::submit_timed`], for a write whose writeback the
    /// kernel starts on its own when `kernel_writeback` (it passes the caps
    /// if the profile's `caps.kernel_writeback_uncapped` says so).
    pub fn submit_io(
        &mut self,
        now: Nanos,
        op: Op,
        bytes: u64,
        kernel_writeback: bool,
    ) -> (Nanos, f64) {
        assert!(
            now >= self.last_now,
            "device model: submit at {now} ns after a submit at {} ns",
            self.last_now
        );
        self.last_now = now;
        let drawn = self.draw(now, op, bytes);
        let admitted = if kernel_writeback && self.kernel_writeback_uncapped {
            // Past the caps, yet on the disk: its count is its own, not
            // the next admitted operation's.
            let ios = self
                .next_ios
                .take()
                .unwrap_or_else(|| self.block.ios(bytes));
            self.disk[1] += ios;
            now as f64
        } else {
            self.admit(now, op, bytes)
        };
        // Counted when the operation starts on the device (past the caps
        // and, unless it is a media flush, on a channel): in a closed loop
        // at depth n ≤ channels every operation then sees n − 1 others, what
        // the calibration fitted; past the channels, those queued for one
        // do not slow the ones being served.
        let starts = self.contends.then(|| {
            let on_channel = if op == Op::Flush && self.flush_to_media {
                now
            } else {
                self.channels.peek().expect("k ≥ 1 channels").0
            };
            (admitted.round() as Nanos).max(now).max(on_channel)
        });
        let service = match starts {
            Some(at) => drawn + self.on_device(now, at, op),
            None => drawn,
        };
        let done = self.complete(now, op, bytes, admitted, service);
        self.busy_until = self.busy_until.max(done);
        if let Some(starts) = starts {
            let done = done.round() as Nanos;
            if starts > now {
                self.hold(starts, done, op as usize);
            } else {
                self.add_in_flight(done, op as usize, 1);
            }
        }
        ((done + self.rtt_ns).round() as Nanos, drawn)
    }

    /// The service time drawn for `op` submitted at `now` (ns): the
    /// profile's latency, slower on a device found idle, and for a flush
    /// the bytes written since the last one.
    #[inline]
    fn draw(&mut self, now: Nanos, op: Op, bytes: u64) -> f64 {
        let mut drawn = self.service[op as usize].sample(&mut self.rng);
        // A device that finds itself idle answers slower (the idle curve).
        let gap_ns = now as f64 - self.busy_until;
        if gap_ns > 0.0 && !self.idle.is_empty() {
            drawn += 1e3 * idle_extra_us(&self.idle, op, gap_ns / 1e3);
        }
        match op {
            Op::Write => self.bytes_since_flush += bytes,
            Op::Flush => {
                drawn += self.bytes_since_flush as f64 * self.flush_ns_per_byte;
                self.bytes_since_flush = 0;
            }
            Op::Read => {}
        }
        drawn
    }

    /// When `op` (submitted at `now`, past the caps at `admitted`) is done
    /// on the device: a media flush after the writes it destages; else on
    /// the first free channel, its bytes through the medium in turn.
    #[inline]
    fn complete(&mut self, now: Nanos, op: Op, bytes: u64, admitted: f64, service: f64) -> f64 {
        if op == Op::Flush && self.flush_to_media {
            let start = admitted.max(self.destage_done).max(self.flush_free);
            self.flush_free = start + service;
            return self.flush_free;
        }
        let bytes = if op == Op::Flush { 0 } else { bytes };
        let per_byte = if op == Op::Write {
            self.ns_per_byte_write
        } else {
            self.ns_per_byte
        };
        let transfer = bytes as f64 * per_byte;
        let mut channel = self.channels.peek_mut().expect("k ≥ 1 channels");
        let start = now.max(channel.0) as f64;
        let end = if bytes == 0 {
            start + service
        } else {
            let on_medium = start.max(self.medium_free);
            self.medium_free = on_medium + transfer;
            self.medium_free + service
        };
        channel.0 = end.round() as Nanos;
        drop(channel);
        let done = end.max(admitted + transfer + service);
        if op == Op::Write && self.flush_to_media {
            self.destage_done = self.destage_done.max(done) + transfer;
        }
        done
    }

    /// A write whose writeback the kernel does (`kernel_writeback`), which
    /// continues the previous one on the disk (`block` follows its last): the kernel's flusher sends
    /// contiguous dirty pages as one request, and a volume that counts
    /// I/Os up to `op_size_kib` (EBS: "When small I/O operations are
    /// physically sequential, Amazon EBS attempts to merge them into a
    /// single I/O operation up to the maximum I/O size", 256 KiB for SSD
    /// volumes, https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html)
    /// charges the run an I/O per op_size, not one per page.
    pub fn submit_writeback(&mut self, now: Nanos, block: u64, bytes: u64) -> (Nanos, f64) {
        self.next_ios = Some(self.block.kernel_writeback(block, bytes));
        self.submit_io(now, Op::Write, bytes, true)
    }

    /// A page write of a PostgreSQL writer's writeback batch `batch`
    /// ([`crate::core::writeback`]): adjacent pages of one batch reach the
    /// disk as one request, so a page that extends a range costs the caps
    /// no I/O of its own ([`BlockLayer::batched`]).
    pub fn submit_batched(
        &mut self,
        now: Nanos,
        batch: u64,
        block: u64,
        bytes: u64,
    ) -> (Nanos, f64) {
        self.next_ios = Some(self.block.batched(batch, block));
        self.submit_io(now, Op::Write, bytes, false)
    }

    /// I/Os the caps have counted so far: reads, and writes (flushes among
    /// them where the profile counts a flush). What a cgroup's
    /// `blkio.throttle.io_serviced`, or a provider's I/O metric, counts.
    pub fn counted_ios(&self) -> [f64; 2] {
        self.summed(|m| m.counted)
    }

    /// `own` of this model, or summed over an array's members.
    fn summed(&self, own: fn(&DeviceModel) -> [f64; 2]) -> [f64; 2] {
        match &self.stripes {
            Some(s) => s.members.iter().fold([0.0; 2], |acc, m| {
                let c = m.summed(own);
                [acc[0] + c[0], acc[1] + c[1]]
            }),
            None => own(self),
        }
    }

    /// Reads and writes the disk got after the block layer, whether the
    /// caps counted them or not (flushes apart): what /proc/diskstats
    /// counts.
    pub fn disk_ios(&self) -> [f64; 2] {
        self.summed(|m| m.disk)
    }

    /// An operation this model said completes at `modelled` (as
    /// [`DeviceModel::submit`] returned it) is delivered at `delivered`
    /// instead: `run --emulate` moves completions to match the real disk.
    /// With `contention_us`, the operation counts as in flight until then.
    pub fn moved(&mut self, now: Nanos, modelled: Nanos, delivered: Nanos) {
        // An array's pieces are not told apart afterwards: left as modelled.
        if !self.contends || modelled == delivered || self.stripes.is_some() {
            return;
        }
        let rtt = self.rtt_ns.round() as Nanos;
        let (old, new) = (modelled.saturating_sub(rtt), delivered.saturating_sub(rtt));
        self.advance(now);
        if let Some(kind) = take_one(&mut self.in_flight, &old) {
            self.in_flight_ops[kind] -= 1;
            self.add_in_flight(new, kind, 1);
        } else if let Some(&key) = self.held.keys().find(|k| k.1 == old) {
            let kind = take_one(&mut self.held, &key).expect("the key is there");
            self.hold(key.0, new.max(key.0), kind);
        } else if new > now {
            // Already complete in the model, still running for real; its
            // kind is not known here: counted as a read.
            self.add_in_flight(new, Op::Read as usize, 1);
        }
    }

    /// One more operation of `kind` held until `starts`, completing at
    /// `done`.
    fn hold(&mut self, starts: Nanos, done: Nanos, kind: usize) {
        self.held_span = self.held_span.max(done - starts);
        self.held.entry((starts, done)).or_default()[kind] += 1;
    }

    /// `n` more operations of `kind` on the device, completing at `done`.
    fn add_in_flight(&mut self, done: Nanos, kind: usize, n: u32) {
        self.in_flight.entry(done).or_default()[kind] += n;
        self.in_flight_ops[kind] += n as usize;
    }

    /// Moves operations the caps have let through by `now` onto the device
    /// and drops those complete by `now`.
    fn advance(&mut self, now: Nanos) {
        while let Some(entry) = self.held.first_entry() {
            let (admitted, done) = *entry.key();
            if admitted > now {
                break;
            }
            let n = entry.remove();
            for (kind, &k) in n.iter().enumerate() {
                self.add_in_flight(done, kind, k);
            }
        }
        while let Some(entry) = self.in_flight.first_entry() {
            if *entry.key() > now {
                break;
            }
            for (total, k) in self.in_flight_ops.iter_mut().zip(entry.remove()) {
                *total -= k as usize;
            }
        }
    }

    /// The contention (ns) of the operations that will be on the device
    /// at `at` (≥ `now`) as far as is known at `now`: past the caps, not
    /// yet complete, each weighted by its kind's contention. A later time
    /// than `now` (an operation a cap holds) costs a scan of those held
    /// that started within `held_span` before it.
    fn on_device(&mut self, now: Nanos, at: Nanos, op: Op) -> f64 {
        self.advance(now);
        let row = self.contention_ns[op as usize];
        let weigh = |n: [usize; 3]| -> f64 { n.iter().zip(row).map(|(&k, c)| k as f64 * c).sum() };
        if at == now {
            // Everything left completes after `now`.
            return weigh(self.in_flight_ops);
        }
        let mut n = [0usize; 3];
        let running = self.in_flight.range(at + 1..).map(|(_, k)| k);
        let since = at.saturating_sub(self.held_span);
        let admitted = self
            .held
            .range((since, 0)..=(at, Nanos::MAX))
            .filter(|(k, _)| k.1 > at)
            .map(|(_, k)| k);
        for k in running.chain(admitted) {
            for (total, &x) in n.iter_mut().zip(k) {
                *total += x as usize;
            }
        }
        weigh(n)
    }

    /// When the caps let an operation through, taking its tokens (ns).
    pub(super) fn admit(&mut self, now: Nanos, op: Op, bytes: u64) -> f64 {
        let (ios, byte_cost) = match op {
            Op::Read | Op::Write => (
                self.next_ios
                    .take()
                    .unwrap_or_else(|| self.block.ios(bytes)),
                bytes as f64,
            ),
            Op::Flush if self.flush_counts_as_io => (1.0, 0.0),
            Op::Flush => (0.0, 0.0),
        };
        let (dir_iops, dir_bytes) = match op {
            Op::Read => (B_READ_IOPS, B_READ_BYTES),
            Op::Write | Op::Flush => (B_WRITE_IOPS, B_WRITE_BYTES),
        };
        self.counted[usize::from(op != Op::Read)] += ios;
        if op != Op::Flush {
            self.disk[usize::from(op != Op::Read)] += ios;
        }
        let costs = [
            (B_IOPS, ios),
            (dir_iops, ios),
            (B_BURST, ios),
            (B_BYTES, byte_cost),
            (dir_bytes, byte_cost),
        ];
        // The first time every cap lets it through: waiting for one cap can
        // move the operation into another cap's spent window.
        let mut at = now as f64;
        loop {
            let mut next = at;
            for &(i, cost) in &costs {
                if let Some(b) = &self.buckets[i]
                    && cost > 0.0
                {
                    next = next.max(b.ready(at, cost));
                }
            }
            if next == at {
                break;
            }
            at = next;
        }
        for &(i, cost) in &costs {
            if let Some(b) = &mut self.buckets[i]
                && cost > 0.0
            {
                b.take(at, cost);
            }
        }
        at
    }
}

/// Removes one operation at `key`, of the first kind there; its kind, or
/// None if there is none.
fn take_one<K: Ord>(m: &mut BTreeMap<K, Kinds>, key: &K) -> Option<usize> {
    let n = m.get_mut(key)?;
    let kind = n.iter().position(|&k| k > 0)?;
    n[kind] -= 1;
    if n.iter().all(|&k| k == 0) {
        m.remove(key);
    }
    Some(kind)
}

/// The log-normal (in ns) of `op`'s service time: median and p99 are the
/// profile's QD1 figures less the fixed part.
fn fit(profile: &Profile, op: Op) -> LogNormal<f64> {
    let (median_us, p99_us) = profile.service_us(op);
    assert!(median_us > 0.0 && p99_us >= median_us, "validated profile");
    let sigma = lognormal_sigma(median_us, p99_us);
    LogNormal::new((median_us * 1e3).ln(), sigma).expect("finite σ ≥ 0")
}

#[cfg(test)]
mod tests;
