//! Device profiles: what a disk looks like to the device model, as JSON.
//!
//! A profile says how long one operation takes at queue depth 1, how many
//! operations the device works on at once, how fast its medium moves bytes,
//! what a provider caps it at, how far away it is on the network, and what a
//! flush costs. [`super::model::DeviceModel`] turns it into completion times.
//!
//! # Schema
//!
//! Every latency is what fio reports at queue depth 1 for one I/O of
//! `latency_io_kib` KiB (`clat` for reads and writes, the `sync` figure for
//! the fdatasync after one such write): the whole latency the program sees,
//! network round trip and transfer included. So a profile can be written
//! straight from a fio run or from `calibrate`, and the model's own QD1
//! microbenchmark reproduces the figures (see `microbench`).
//!
//! | field | unit | meaning |
//! |---|---|---|
//! | `name` | | short name for `--device` (lowercase letters, digits, `-`, `.` as a decimal point) |
//! | `description` | | one line: what the disk is |
//! | `source` | | where the figures come from |
//! | `latency_io_kib` | KiB | size of the I/O the latencies below were measured with; default 8 |
//! | `read.median_us`, `read.p99_us` | µs | QD1 random read latency, median and 99th percentile |
//! | `write.median_us`, `write.p99_us` | µs | QD1 random write latency (direct, no sync) |
//! | `flush.median_us`, `flush.p99_us` | µs | QD1 fdatasync latency right after one such write |
//! | `channels` | count | operations the device services at once (internal parallelism) |
//! | `contention_us` | µs | added to an operation's service time for each other operation in flight on the device when it starts: a disk that slows per operation under load before its channels run out (a virtualised or network disk); QD n then takes QD1 latency + (n − 1) × this; default 0 |
//! | `bandwidth_mib_s` | MiB/s | the medium's own bandwidth, shared by all channels: an I/O of b bytes holds it for b / bandwidth |
//! | `write_contention_us` | µs | like `contention_us`, what each other write in flight adds to a write (`contention_us` is then the reads' among reads); absent: `contention_us` |
//! | `read_write_contention_us` | µs | what a write in flight adds to a read, and a read to a write; absent: `contention_us` |
//! | `flush_contention_us` | µs | what a flush in flight adds to any other operation, and any other to a flush; absent: `contention_us` |
//! | `write_bandwidth_mib_s` | MiB/s | the medium's bandwidth for writes; absent: `bandwidth_mib_s` |
//! | `flush_us_per_mib` | µs | added to a flush's service time per MiB written since the previous flush; default 0 |
//! | `idle[].gap_us`, `idle[].read_us`, `idle[].write_us` | µs | latency added to a read, or to a write or flush, that finds the device idle for `gap_us`: a piecewise-linear curve from 0 at no gap, flat after its last point; default none |
//! | `network_rtt_us` | µs | fixed round trip of a network volume, added to every operation outside the device; default 0 |
//! | `raid0.members`, `raid0.chunk_kib` | count, KiB | the disk is this many of the profile's, striped at the chunk as Linux md RAID0 does: each keeps its own caps, a request crossing a chunk is split, a flush goes to all; absent: one disk |
//! | `max_request_kib` | KiB | the largest request that reaches the disk: the smaller of `queue/max_sectors_kb` and `queue/max_segments` × 4 KiB in /sys/block/DEV; a larger request is split and each part counts as an I/O against the caps; default: the kernel's own largest, 1024 |
//! | `inode_sync_tick_ms` | ms | an fdatasync also writes the file's inode, one 4 KiB write I/O before its flush, when the file was written in a later tick of the kernel's coarse clock than when its inode was last written (ext4 without a journal: a write that moves mtime dirties the inode, and fdatasync writes it); the tick's length, as `calibrate` measures it; absent: never (a journalled filesystem logs a timestamp change without it) |
//! | `flush_to_media` | bool | `false`: power-loss-protected cache, a flush costs its own service time and flushes run in parallel; `true`: volatile cache, a flush first waits until every earlier write has been destaged to the medium, and flushes run one at a time |
//! | `caps.iops` | I/O per s | provisioned IOPS, reads and writes together; null or absent: no cap |
//! | `caps.read_iops`, `caps.write_iops` | I/O per s | per-direction IOPS caps (cgroup blk-throttle style) |
//! | `caps.mib_s` | MiB/s | provisioned throughput, both directions together |
//! | `caps.read_mib_s`, `caps.write_mib_s` | MiB/s | per-direction throughput caps |
//! | `caps.op_size_kib` | KiB | an I/O up to this size counts as one operation against the IOPS caps, a larger one as ceil(size / this); null: every I/O counts as one |
//! | `caps.limiter` | | how a cap holds back I/O over its rate: `token_bucket` (default) paces it smoothly once the bucket is spent (provider volumes); `blk_throttle` is Linux's cgroup throttle, which grants rate × `bucket_ms` of I/O per window of `bucket_ms` and holds the rest, in order, until the next window, so a saturated cap runs in bursts and stalls; its queue holds a cgroup's writes before they reach the device's request queue, so with a modelled page cache a checkpoint's fsync hands it every dirty page at once and the WAL's writes queue behind them (`token_bucket`: the fsync, and the flusher, keep at most the request queue's 256 in flight and the WAL's share the device) |
//! | `caps.bucket_ms` | ms | `token_bucket`: depth of every cap's bucket, in milliseconds of its rate (after a quiet spell this much work passes at device speed); `blk_throttle`: the window (the kernel's slice, 100 ms on this VM's disk); default 10 |
//! | `caps.burst.size_ios` | I/Os | burst credit bucket (gp2 style): credits held when full; I/O runs at `caps.iops` while credits last |
//! | `caps.burst.baseline_iops` | I/O per s | rate the burst credits refill at, and so the IOPS once they are spent |
//! | `caps.kernel_writeback_uncapped` | bool | data pages whose writeback PostgreSQL leaves to the kernel (writers with `*_flush_after` = 0: backends, by default) pass the caps when the kernel's flusher writes them: cgroup v1 charges the flusher's writeback to no cgroup (a checkpoint's fsync writes the rest in its own cgroup, capped); only with a modelled page cache, which has the flusher; default false |
//! | `caps.flush_counts_as_io` | bool | a flush takes one write I/O from the IOPS caps (cgroup blk-throttle charges the empty pre-flush of each fdatasync, so write + fdatasync costs 2); default false |
//!
//! Loading checks every field: an error names the file, the field and the
//! problem ("gp3.json: read.p99_us: 0.2 is below read.median_us 0.5").
//! Unknown fields are errors, so a typo never silently falls back to a
//! default.

use std::path::Path;

use anyhow::{Result, anyhow};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What a device is asked to do.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    /// Read `bytes`.
    Read,
    /// Write `bytes` (completes when the device acknowledges it).
    Write,
    /// fdatasync: make every earlier acknowledged write durable.
    Flush,
}

/// Shortest and longest timestamp tick a profile may state, ms: Linux's
/// jiffy is 1 ms (HZ=1000) to 10 ms (HZ=100).
pub const INODE_TICK_MS_MIN: f64 = 0.1;
pub const INODE_TICK_MS_MAX: f64 = 100.0;
/// Most service channels a profile may declare.
pub const CHANNELS_MAX: u32 = 65_536;
/// Largest latency a profile may state, µs (one minute).
pub const LATENCY_US_MAX: f64 = 60_000_000.0;
/// Largest `latency_io_kib` and `caps.op_size_kib`, KiB (1 GiB).
pub const IO_KIB_MAX: u32 = 1 << 20;
/// The profile fields that only `pgiosim calibrate` measures (fio's
/// battery and YABS run back to back, sync one block at a time and run no
/// mix of reads and writes beside flushes): imported profiles take them
/// from their base profile and say so.
pub const CALIBRATE_ONLY_FIELDS: &str = "idle, flush_us_per_mib, write_contention_us, \
     read_write_contention_us, flush_contention_us";

/// Most points of `idle`.
pub const IDLE_POINTS_MAX: usize = 64;
/// Largest `caps.bucket_ms`.
pub const BUCKET_MS_MAX: f64 = 60_000.0;

const MIB: f64 = 1_048_576.0;

/// A disk, as the device model sees it. See the module docs for the schema.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Profile {
    /// Short name used with `--device`: lowercase letters, digits, `-` and
    /// `.` (a provisioned volume's fractional figure).
    pub name: String,
    /// One line: what the disk is.
    pub description: String,
    /// Where the figures come from.
    pub source: String,
    /// Size in KiB of the I/O the `read`, `write` and `flush` latencies were
    /// measured with. Default 8 (a PostgreSQL page).
    #[serde(default = "default_latency_io_kib")]
    pub latency_io_kib: u32,
    /// QD1 random read of `latency_io_kib`, as fio sees it.
    pub read: Latency,
    /// QD1 random write of `latency_io_kib` (direct, no sync), as fio sees it.
    pub write: Latency,
    /// QD1 fdatasync right after one write of `latency_io_kib`, as fio sees it.
    pub flush: Latency,
    /// Service channels: how many operations the device works on at once.
    pub channels: u32,
    /// µs added to an operation's service time for every other operation
    /// on the device when it starts (past the caps, on a channel). Default 0.
    /// A virtualised or networked disk slows per operation as soon as a
    /// second one is in flight, long before its channels run out: this
    /// VM's disk reads at 59 µs alone and 145 µs at QD8, and its fdatasync
    /// takes 101 µs alone and 220 µs beside eight reads. With it, QD n
    /// runs at n / (QD1 latency + (n − 1) × `contention_us`).
    #[serde(default)]
    pub contention_us: f64,
    /// µs each other write in flight adds to a write's service time, in
    /// place of `contention_us` (which is then the reads' among reads).
    /// Absent: `contention_us`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_contention_us: Option<f64>,
    /// µs a write in flight adds to a read's service time, and a read in
    /// flight to a write's. Absent: `contention_us`. On a virtual disk whose
    /// host serves reads and writes through one queue, reads slow more
    /// beside writes than beside reads (a mixed load's IOPS fall short of
    /// the read sweep's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_write_contention_us: Option<f64>,
    /// µs a flush in flight adds to any other operation's service time, and
    /// any other operation in flight to a flush's. Absent: `contention_us`.
    /// Concurrent fdatasyncs on one disk scale by this, not by the reads'
    /// figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_contention_us: Option<f64>,
    /// The medium's bandwidth in MiB/s, shared by all channels: an I/O of
    /// b bytes holds the medium for b / bandwidth.
    pub bandwidth_mib_s: f64,
    /// The medium's bandwidth for writes, MiB/s. Absent: `bandwidth_mib_s`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub write_bandwidth_mib_s: Option<f64>,
    /// µs a flush's service time grows by per MiB written since the
    /// previous flush (a WAL group flush after 1 MiB of writes costs more
    /// than one after 8 KiB). Default 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub flush_us_per_mib: f64,
    /// Latency added to an operation that finds the device idle, by how
    /// long it has been idle: points of a piecewise-linear curve, from 0 µs
    /// added at an idle gap of 0, flat after the last point. A virtual disk
    /// (the host's I/O thread goes to sleep) or a power-managed NVMe drive
    /// answers slower after a pause, so a backend doing 300 µs of CPU
    /// between commits sees more than back-to-back I/O does. Empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub idle: Vec<IdlePoint>,
    /// Fixed network round trip in µs, added to every operation outside the
    /// device (0 for a local disk).
    #[serde(default)]
    pub network_rtt_us: f64,
    /// The largest request that reaches the disk, KiB: the smaller of the
    /// block queue's `max_sectors_kb` and `max_segments` pages of 4 KiB
    /// (/sys/block/DEV/queue). A larger request is split, and each part is
    /// an I/O to the caps ([`super::block_layer`]). Absent: the kernel's
    /// own largest, 1 MiB.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_request_kib: Option<u32>,
    /// An fdatasync of a file written in a later tick of the kernel's
    /// coarse clock than its inode was last written writes the inode too
    /// (one more write I/O, before the flush): the tick, ms. Absent: never
    /// ([`super::inode_times`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inode_sync_tick_ms: Option<f64>,
    /// `false`: the write cache is power-loss protected (or there is none),
    /// a flush costs only its own service time, on a channel, in parallel
    /// with other flushes. `true`: a volatile write cache; a flush first
    /// waits until every earlier write has been destaged to the medium (at
    /// `bandwidth_mib_s`), and flushes run one at a time.
    pub flush_to_media: bool,
    /// Provisioned caps; absent or null: none.
    #[serde(default, deserialize_with = "caps_or_null")]
    pub caps: Caps,
    /// The CPU probe (`pgiosim cpu-probe`) on the host this disk was
    /// calibrated on, µs a round: `model` with this profile runs the
    /// workload's CPU at that host's speed. Absent: the workload's machine's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_probe_us: Option<f64>,
    /// This disk `members` times, striped (md RAID0): every figure above is
    /// one member's ([`super::raid0`]). Absent: one disk.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raid0: Option<super::raid0::Raid0>,
}

/// One point of [`Profile::idle`]: after `gap_us` idle, a read takes
/// `read_us` longer and a write or flush `write_us` longer than back to
/// back.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct IdlePoint {
    /// Time the device was idle (nothing in flight) before the operation, µs.
    pub gap_us: f64,
    /// µs added to a read.
    pub read_us: f64,
    /// µs added to a write or a flush.
    pub write_us: f64,
}

/// µs the curve `points` (see [`Profile::idle`]) adds to `op` after
/// `gap_us` idle.
pub fn idle_extra_us(points: &[IdlePoint], op: Op, gap_us: f64) -> f64 {
    let y = |p: &IdlePoint| match op {
        Op::Read => p.read_us,
        Op::Write | Op::Flush => p.write_us,
    };
    if gap_us <= 0.0 || points.is_empty() {
        return 0.0;
    }
    let (mut x0, mut y0) = (0.0, 0.0);
    for p in points {
        if gap_us <= p.gap_us {
            return y0 + (y(p) - y0) * (gap_us - x0) / (p.gap_us - x0);
        }
        (x0, y0) = (p.gap_us, y(p));
    }
    y0
}

fn is_zero(v: &f64) -> bool {
    *v == 0.0
}

/// A latency distribution at queue depth 1, as fio reports it. Fitted as a
/// log-normal (after taking off the profile's fixed part: round trip and
/// transfer time).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Latency {
    /// Median latency, µs.
    pub median_us: f64,
    /// 99th percentile latency, µs.
    pub p99_us: f64,
}

/// Provisioned limits, enforced as token buckets. Every cap is optional:
/// null or absent means no cap.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Caps {
    /// IOPS, reads and writes together (I/O per second).
    #[serde(default)]
    pub iops: Option<f64>,
    /// Read IOPS (I/O per second).
    #[serde(default)]
    pub read_iops: Option<f64>,
    /// Write IOPS (I/O per second); flushes count here when
    /// `flush_counts_as_io`.
    #[serde(default)]
    pub write_iops: Option<f64>,
    /// Throughput, both directions together (MiB/s).
    #[serde(default)]
    pub mib_s: Option<f64>,
    /// Read throughput (MiB/s).
    #[serde(default)]
    pub read_mib_s: Option<f64>,
    /// Write throughput (MiB/s).
    #[serde(default)]
    pub write_mib_s: Option<f64>,
    /// KiB: an I/O up to this size counts as one operation against the IOPS
    /// caps, a larger one as ceil(size / op_size). EBS SSD volumes: 256.
    /// Null: every I/O counts as one.
    #[serde(default)]
    pub op_size_kib: Option<u32>,
    /// Depth of each cap's token bucket in ms of its rate: after a quiet
    /// spell this much work passes at device speed. Default 10.
    #[serde(default = "default_bucket_ms")]
    pub bucket_ms: f64,
    /// A burst credit bucket (gp2 style). Needs `iops`, the burst rate.
    #[serde(default)]
    pub burst: Option<Burst>,
    /// Whether a flush takes one write I/O from the IOPS caps. cgroup
    /// blk-throttle charges the empty pre-flush of every fdatasync, so a
    /// write + fdatasync costs 2 write I/Os there. Unknown for EBS.
    #[serde(default)]
    pub flush_counts_as_io: bool,
    /// How the caps (all but `burst`) hold back I/O over their rate.
    #[serde(default)]
    pub limiter: Limiter,
    /// Whether data pages whose writeback PostgreSQL leaves to the kernel
    /// pass the caps. cgroup v1 blk-throttle charges the kernel flusher's
    /// writeback to no cgroup, so a backend's evicted pages (its
    /// backend_flush_after is 0) escape a cgroup v1 cap, while the
    /// checkpointer's and bgwriter's, whose writeback they start themselves
    /// (sync_file_range), are charged.
    #[serde(default)]
    pub kernel_writeback_uncapped: bool,
}

/// How a cap holds back I/O over its rate.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Limiter {
    /// A token bucket `bucket_ms` deep: once it is spent, I/O is paced
    /// evenly at the rate. What provider volumes are usually described as.
    #[default]
    TokenBucket,
    /// Linux blk-throttle (cgroup v1 `blkio.throttle.*`, v2 `io.max`): each
    /// window of `bucket_ms` grants rate × `bucket_ms` of I/O; the rest waits,
    /// in order, for the next window (block/blk-throttle.c,
    /// tg_within_iops_limit). A saturated cap so runs I/O at device speed
    /// early in each window and stalls for the rest of it.
    BlkThrottle,
}

/// A burst credit bucket: the volume runs at `caps.iops` while it has
/// credits, and at `baseline_iops` once they are spent.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Burst {
    /// Credits (I/Os) the bucket holds when full. It starts full.
    pub size_ios: f64,
    /// Credits earned per second: the IOPS once the credits are spent.
    pub baseline_iops: f64,
}

fn default_latency_io_kib() -> u32 {
    8
}

/// `"caps": null` means no caps, like leaving the field out.
fn caps_or_null<'de, D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Caps, D::Error> {
    Ok(Option::<Caps>::deserialize(d)?.unwrap_or_default())
}

fn default_bucket_ms() -> f64 {
    10.0
}

impl Default for Caps {
    fn default() -> Caps {
        Caps {
            iops: None,
            read_iops: None,
            write_iops: None,
            mib_s: None,
            read_mib_s: None,
            write_mib_s: None,
            op_size_kib: None,
            bucket_ms: default_bucket_ms(),
            burst: None,
            flush_counts_as_io: false,
            limiter: Limiter::TokenBucket,
            kernel_writeback_uncapped: false,
        }
    }
}

/// The profiles that ship with pgiosim, by name.
const SHIPPED: &[(&str, &str)] = &[
    ("nvme", include_str!("profiles/nvme.json")),
    ("gp3", include_str!("profiles/gp3.json")),
    ("gp3-16k", include_str!("profiles/gp3-16k.json")),
    ("io2", include_str!("profiles/io2.json")),
    ("gp2", include_str!("profiles/gp2.json")),
    ("io1", include_str!("profiles/io1.json")),
    (
        "azure-premium-ssd",
        include_str!("profiles/azure-premium-ssd.json"),
    ),
    (
        "azure-premium-v2",
        include_str!("profiles/azure-premium-v2.json"),
    ),
    ("pd-balanced", include_str!("profiles/pd-balanced.json")),
    ("pd-ssd", include_str!("profiles/pd-ssd.json")),
    (
        "hyperdisk-balanced",
        include_str!("profiles/hyperdisk-balanced.json"),
    ),
    ("hetzner-nvme", include_str!("profiles/hetzner-nvme.json")),
    (
        "hetzner-volume",
        include_str!("profiles/hetzner-volume.json"),
    ),
    ("ceph-rbd", include_str!("profiles/ceph-rbd.json")),
    ("network-plp", include_str!("profiles/network-plp.json")),
    (
        "network-plp-budget",
        include_str!("profiles/network-plp-budget.json"),
    ),
    ("budget-ssd", include_str!("profiles/budget-ssd.json")),
];

/// Every shipped profile, in a fixed order (fastest local disk first).
pub fn shipped() -> Vec<Profile> {
    SHIPPED
        .iter()
        .map(|(name, text)| parse_shipped(name, text))
        .collect()
}

/// Names of the shipped profiles, in the order of [`shipped`].
pub fn shipped_names() -> Vec<&'static str> {
    SHIPPED.iter().map(|(name, _)| *name).collect()
}

/// `, did you mean "nvme"?` when `arg` is one or two typos away from a
/// shipped profile's name; else the empty string.
pub fn did_you_mean(arg: &str) -> String {
    crate::error::nearest(arg, &shipped_names())
        .map(|n| format!("; did you mean {n:?}?"))
        .unwrap_or_default()
}

fn parse_shipped(name: &str, text: &str) -> Profile {
    // A shipped profile that does not load is a build bug; the tests load
    // every one of them.
    Profile::from_json(text, &format!("{name}.json"))
        .unwrap_or_else(|e| panic!("shipped device profile: {e:#}"))
}

impl Profile {
    /// Parse and validate a profile. `origin` names it in errors (a file
    /// name, or "--device").
    pub fn from_json(text: &str, origin: &str) -> Result<Profile> {
        let value: Value =
            serde_json::from_str(text).map_err(|e| anyhow!("{origin}: not valid JSON: {e}"))?;
        // serde names a missing or unknown field but not where it sits,
        // and a wrongly typed value not at all: the path says which.
        let profile: Profile = match serde_path_to_error::deserialize(&value) {
            Ok(p) => p,
            Err(e) => {
                let path = e.path().to_string();
                let msg = e.inner().to_string();
                return Err(if path == "." {
                    anyhow!("{origin}: {msg}")
                } else {
                    anyhow!("{origin}: {path}: {msg}")
                });
            }
        };
        profile
            .validate()
            .map_err(|problem| anyhow!("{origin}: {problem}"))?;
        Ok(profile)
    }

    /// Read a profile from a JSON file. The only function of the device
    /// model that touches the file system.
    pub fn load(path: &Path) -> Result<Profile> {
        let text =
            crate::input::read_text(path, "device profile", crate::input::SMALL_FILE_MAX_BYTES)?;
        Profile::from_json(&text, &path.display().to_string()).map_err(crate::error::bad_input)
    }

    /// A shipped profile by name.
    pub fn shipped(name: &str) -> Option<Profile> {
        SHIPPED
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(n, text)| parse_shipped(n, text))
    }

    /// The profile as JSON, every field present (caps that are not set are
    /// null), for embedding in a result.
    pub fn to_json(&self) -> Value {
        serde_json::to_value(self).expect("a profile always serialises")
    }

    /// The caps in words ("3000 IOPS, 125 MiB/s"), or "none".
    pub fn caps_text(&self) -> String {
        let c = &self.caps;
        let mut parts = Vec::new();
        if let Some(v) = c.iops {
            parts.push(format!("{} IOPS", fmt_num(v)));
        }
        if let Some(v) = c.read_iops {
            parts.push(format!("{} read IOPS", fmt_num(v)));
        }
        if let Some(v) = c.write_iops {
            parts.push(format!("{} write IOPS", fmt_num(v)));
        }
        if let Some(v) = c.mib_s {
            parts.push(format!("{} MiB/s", fmt_num(v)));
        }
        if let Some(v) = c.read_mib_s {
            parts.push(format!("{} MiB/s read", fmt_num(v)));
        }
        if let Some(v) = c.write_mib_s {
            parts.push(format!("{} MiB/s write", fmt_num(v)));
        }
        if let Some(b) = c.burst {
            parts.push(format!(
                "burst credits {} I/Os, baseline {} IOPS",
                fmt_num(b.size_ios),
                fmt_num(b.baseline_iops)
            ));
        }
        if parts.is_empty() {
            return "none".to_string();
        }
        if c.flush_counts_as_io {
            parts.push("flush counts as a write I/O".to_string());
        }
        if c.limiter == Limiter::BlkThrottle {
            parts.push(format!("blk-throttle {} ms windows", fmt_num(c.bucket_ms)));
        }
        if c.kernel_writeback_uncapped {
            parts.push("kernel writeback uncapped".to_string());
        }
        parts.join(", ")
    }

    /// The QD1 latency a profile states for `op`.
    pub fn latency(&self, op: Op) -> Latency {
        match op {
            Op::Read => self.read,
            Op::Write => self.write,
            Op::Flush => self.flush,
        }
    }

    /// Bytes of the I/O the latencies were measured with.
    pub fn latency_io_bytes(&self) -> u64 {
        u64::from(self.latency_io_kib) * 1024
    }

    /// µs added to `op` when it finds the device idle for `gap_us`: the
    /// `idle` curve, linear between its points, 0 at no gap, flat after
    /// the last point.
    pub fn idle_extra_us(&self, op: Op, gap_us: f64) -> f64 {
        idle_extra_us(&self.idle, op, gap_us)
    }

    /// µs an operation of kind `other` in flight adds to the service time
    /// of one of kind `op`.
    pub fn contention_between(&self, op: Op, other: Op) -> f64 {
        let or_base = |v: Option<f64>| v.unwrap_or(self.contention_us);
        match (op, other) {
            (Op::Flush, _) | (_, Op::Flush) => or_base(self.flush_contention_us),
            (Op::Read, Op::Read) => self.contention_us,
            (Op::Write, Op::Write) => or_base(self.write_contention_us),
            (Op::Read, Op::Write) | (Op::Write, Op::Read) => or_base(self.read_write_contention_us),
        }
    }

    /// The medium's bandwidth for `op`, MiB/s.
    pub fn bandwidth_for(&self, op: Op) -> f64 {
        match op {
            Op::Write => self.write_bandwidth_mib_s.unwrap_or(self.bandwidth_mib_s),
            Op::Read | Op::Flush => self.bandwidth_mib_s,
        }
    }

    /// Time the medium takes to move `bytes`, µs.
    pub fn transfer_us(&self, bytes: u64) -> f64 {
        bytes as f64 / (self.bandwidth_mib_s * MIB) * 1e6
    }

    /// The part of a QD1 `op`'s latency (at `latency_io_kib`) that is not
    /// service time: the network round trip, plus the medium transfer of the
    /// I/O for reads and writes, plus for a media flush whatever part of
    /// destaging the write before it the round trip did not hide. Service
    /// time = stated latency − this.
    pub fn fixed_us(&self, op: Op) -> f64 {
        let rtt = self.network_rtt_us;
        let bytes = self.latency_io_bytes() as f64;
        let transfer = bytes / (self.bandwidth_for(Op::Write) * MIB) * 1e6;
        match op {
            Op::Read => rtt + self.transfer_us(self.latency_io_bytes()),
            Op::Write => rtt + transfer,
            Op::Flush if self.flush_to_media => rtt + (transfer - rtt).max(0.0),
            Op::Flush => rtt,
        }
    }

    /// Median and p99 of `op`'s service time, µs: the log-normal the model
    /// samples from.
    pub fn service_us(&self, op: Op) -> (f64, f64) {
        let l = self.latency(op);
        let fixed = self.fixed_us(op);
        (l.median_us - fixed, l.p99_us - fixed)
    }

    /// Mean QD1 latency of `op` at `latency_io_kib`, µs, as the model
    /// produces it: the fixed part plus the mean of the fitted log-normal.
    pub fn qd1_mean_us(&self, op: Op) -> f64 {
        let (median, p99) = self.service_us(op);
        let sigma = lognormal_sigma(median, p99);
        self.fixed_us(op) + median * (sigma * sigma / 2.0).exp()
    }

    /// The first problem with the profile, as "field: problem".
    fn validate(&self) -> std::result::Result<(), String> {
        self.validate_text()?;
        self.validate_figures()?;
        self.validate_idle()?;
        let (lo, hi) = crate::units::CPU_PROBE_US_RANGE;
        if let Some(p) = self.cpu_probe_us
            && !(p.is_finite() && (lo..=hi).contains(&p))
        {
            return Err(format!(
                "cpu_probe_us: {p} must be between {lo} and {hi} µs a round"
            ));
        }
        if !(self.network_rtt_us >= 0.0 && self.network_rtt_us <= LATENCY_US_MAX) {
            return Err(format!(
                "network_rtt_us: {} must be between 0 and {LATENCY_US_MAX}",
                self.network_rtt_us
            ));
        }
        for (field, op) in [
            ("read", Op::Read),
            ("write", Op::Write),
            ("flush", Op::Flush),
        ] {
            self.validate_latency(field, op)?;
        }
        self.validate_caps()
    }

    /// The name, description and source: what the profile is and where its
    /// figures come from.
    fn validate_text(&self) -> std::result::Result<(), String> {
        if self.name.is_empty() {
            return Err("name: is empty".into());
        }
        if !self
            .name
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '.')
            || self.name.ends_with(".json")
        {
            return Err(format!(
                "name: {:?} may hold only lowercase letters, digits, '-' and '.', and not end in .json",
                self.name
            ));
        }
        if self.description.trim().is_empty() || self.description.contains('\n') {
            return Err("description: must be one line of text".into());
        }
        if self.source.trim().is_empty() {
            return Err("source: is empty; say where the figures come from".into());
        }
        Ok(())
    }

    /// The device's sizes, channels, bandwidth and contention figures.
    fn validate_figures(&self) -> std::result::Result<(), String> {
        if self.latency_io_kib == 0 || self.latency_io_kib > IO_KIB_MAX {
            return Err(format!(
                "latency_io_kib: {} must be between 1 and {IO_KIB_MAX}",
                self.latency_io_kib
            ));
        }
        if self.channels == 0 || self.channels > CHANNELS_MAX {
            return Err(format!(
                "channels: {} must be between 1 and {CHANNELS_MAX}",
                self.channels
            ));
        }
        positive("bandwidth_mib_s", self.bandwidth_mib_s)?;
        if !(self.contention_us >= 0.0 && self.contention_us <= LATENCY_US_MAX) {
            return Err(format!(
                "contention_us: {} must be between 0 and {LATENCY_US_MAX}",
                self.contention_us
            ));
        }
        for (field, v) in [
            ("write_contention_us", self.write_contention_us),
            ("read_write_contention_us", self.read_write_contention_us),
            ("flush_contention_us", self.flush_contention_us),
        ] {
            if let Some(v) = v
                && !(0.0..=LATENCY_US_MAX).contains(&v)
            {
                return Err(format!(
                    "{field}: {v} must be between 0 and {LATENCY_US_MAX}"
                ));
            }
        }
        if let Some(w) = self.write_bandwidth_mib_s {
            positive("write_bandwidth_mib_s", w)?;
        }
        if !(self.flush_us_per_mib >= 0.0 && self.flush_us_per_mib <= LATENCY_US_MAX) {
            return Err(format!(
                "flush_us_per_mib: {} must be between 0 and {LATENCY_US_MAX}",
                self.flush_us_per_mib
            ));
        }
        Ok(())
    }

    /// The idle curve: gaps rising, latencies in bounds, not too many points.
    fn validate_idle(&self) -> std::result::Result<(), String> {
        let mut last_gap = 0.0;
        for (i, pt) in self.idle.iter().enumerate() {
            if !(pt.gap_us > last_gap && pt.gap_us <= LATENCY_US_MAX) {
                return Err(format!(
                    "idle[{i}].gap_us: {} must be above the previous point's ({last_gap}) and at most {LATENCY_US_MAX}",
                    pt.gap_us
                ));
            }
            last_gap = pt.gap_us;
            for (name, v) in [("read_us", pt.read_us), ("write_us", pt.write_us)] {
                if !(0.0..=LATENCY_US_MAX).contains(&v) {
                    return Err(format!(
                        "idle[{i}].{name}: {v} must be between 0 and {LATENCY_US_MAX}"
                    ));
                }
            }
        }
        if self.idle.len() > IDLE_POINTS_MAX {
            return Err(format!(
                "idle: {} points, at most {IDLE_POINTS_MAX}",
                self.idle.len()
            ));
        }
        Ok(())
    }

    fn validate_latency(&self, field: &str, op: Op) -> std::result::Result<(), String> {
        let l = self.latency(op);
        for (name, v) in [("median_us", l.median_us), ("p99_us", l.p99_us)] {
            positive(&format!("{field}.{name}"), v)?;
            if v > LATENCY_US_MAX {
                return Err(format!(
                    "{field}.{name}: {v} is above the limit of {LATENCY_US_MAX} µs"
                ));
            }
        }
        if l.p99_us < l.median_us {
            return Err(format!(
                "{field}.p99_us: {} is below {field}.median_us {}",
                l.p99_us, l.median_us
            ));
        }
        let fixed = self.fixed_us(op);
        if l.median_us <= fixed {
            let what = match op {
                Op::Read | Op::Write => format!(
                    "network_rtt_us {} + {} KiB at bandwidth_mib_s {}",
                    self.network_rtt_us, self.latency_io_kib, self.bandwidth_mib_s
                ),
                Op::Flush if self.flush_to_media => format!(
                    "network_rtt_us {} + destaging {} KiB at bandwidth_mib_s {}",
                    self.network_rtt_us, self.latency_io_kib, self.bandwidth_mib_s
                ),
                Op::Flush => format!("network_rtt_us {}", self.network_rtt_us),
            };
            return Err(format!(
                "{field}.median_us: {} is not above the fixed part of a QD1 {field}, \
                 {fixed:.2} µs ({what}); median_us is the whole latency fio sees at QD1",
                l.median_us
            ));
        }
        Ok(())
    }

    fn validate_caps(&self) -> std::result::Result<(), String> {
        let c = &self.caps;
        validate_cap_rates(c)?;
        if let Some(r) = &self.raid0 {
            r.validate()?;
        }
        if let Some(ms) = self.inode_sync_tick_ms
            && !(INODE_TICK_MS_MIN..=INODE_TICK_MS_MAX).contains(&ms)
        {
            return Err(format!(
                "inode_sync_tick_ms: {ms} must be between {INODE_TICK_MS_MIN} and \
                 {INODE_TICK_MS_MAX} ms (absent means an fdatasync never writes the inode)"
            ));
        }
        if let Some(kib) = self.max_request_kib
            && !(4..=IO_KIB_MAX).contains(&kib)
        {
            return Err(format!(
                "max_request_kib: {kib} must be between 4 and {IO_KIB_MAX} \
                 (absent means the kernel's own largest, 1024)"
            ));
        }
        if let Some(kib) = c.op_size_kib
            && (kib == 0 || kib > IO_KIB_MAX)
        {
            return Err(format!(
                "caps.op_size_kib: {kib} must be between 1 and {IO_KIB_MAX} \
                 (null means every I/O counts as one)"
            ));
        }
        if !(c.bucket_ms >= 0.0 && c.bucket_ms <= BUCKET_MS_MAX) {
            return Err(format!(
                "caps.bucket_ms: {} must be between 0 and {BUCKET_MS_MAX}",
                c.bucket_ms
            ));
        }
        if c.limiter == Limiter::BlkThrottle && c.bucket_ms <= 0.0 {
            return Err(format!(
                "caps.bucket_ms: {} must be above 0 with caps.limiter blk_throttle \
                 (it is the throttle's window)",
                c.bucket_ms
            ));
        }
        validate_burst(c)
    }
}

/// The caps' rates: each above 0 and at least the least one modelled.
fn validate_cap_rates(c: &Caps) -> std::result::Result<(), String> {
    // The least cap modelled: the limiter's interval between two I/Os
    // is 1/cap, and a cap such as 1e-300 overflows it to a cap that
    // never holds an I/O back.
    for (name, v, min, unit) in [
        ("iops", c.iops, CAP_IOPS_MIN, "I/O per s"),
        ("read_iops", c.read_iops, CAP_IOPS_MIN, "I/O per s"),
        ("write_iops", c.write_iops, CAP_IOPS_MIN, "I/O per s"),
        ("mib_s", c.mib_s, CAP_MIB_S_MIN, "MiB/s"),
        ("read_mib_s", c.read_mib_s, CAP_MIB_S_MIN, "MiB/s"),
        ("write_mib_s", c.write_mib_s, CAP_MIB_S_MIN, "MiB/s"),
    ] {
        if let Some(v) = v {
            if !(v > 0.0 && v.is_finite()) {
                return Err(format!(
                    "caps.{name}: {v} must be above 0 (null or absent means no cap)"
                ));
            }
            if v < min {
                return Err(format!(
                    "caps.{name}: {v:?} is below the least cap modelled, {min} {unit} \
                     (null or absent means no cap)"
                ));
            }
        }
    }
    Ok(())
}

/// A burst: under caps.iops, at a rate the limiter can hold.
fn validate_burst(c: &Caps) -> std::result::Result<(), String> {
    if let Some(b) = c.burst {
        let Some(iops) = c.iops else {
            return Err("caps.burst: needs caps.iops, the rate a burst runs at".into());
        };
        positive("caps.burst.size_ios", b.size_ios)?;
        positive("caps.burst.baseline_iops", b.baseline_iops)?;
        if b.baseline_iops < CAP_IOPS_MIN {
            return Err(format!(
                "caps.burst.baseline_iops: {:?} is below the least rate modelled, \
                 {CAP_IOPS_MIN} I/O per s",
                b.baseline_iops
            ));
        }
        if b.baseline_iops >= iops {
            return Err(format!(
                "caps.burst.baseline_iops: {} must be below caps.iops {iops}, \
                 the burst rate",
                b.baseline_iops
            ));
        }
    }
    Ok(())
}

/// The least IOPS cap (and burst baseline) a profile may set: one I/O a
/// second. Below it the limiter's spacing overflows and the cap is lost.
pub const CAP_IOPS_MIN: f64 = 1.0;

/// The least MiB/s cap a profile may set (10 KiB/s), for the same reason.
pub const CAP_MIB_S_MIN: f64 = 0.01;

/// σ of a log-normal whose median and p99 are given.
pub(crate) fn lognormal_sigma(median: f64, p99: f64) -> f64 {
    (p99 / median).ln() / Z99
}

/// z with P(Z ≤ z) = 0.99 for a standard normal variable.
pub(crate) const Z99: f64 = 2.326_347_874_040_841;

fn positive(field: &str, v: f64) -> std::result::Result<(), String> {
    if v > 0.0 && v.is_finite() {
        Ok(())
    } else {
        Err(format!("{field}: {v} must be above 0"))
    }
}

/// 3000 → "3,000"; fractions to two decimals at most ("62.5", "190.73").
pub(crate) fn fmt_num(v: f64) -> String {
    let whole = v.trunc();
    let digits = format!("{:.0}", whole.abs());
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    if v < 0.0 {
        out.insert(0, '-');
    }
    if v.fract() != 0.0 {
        // Two decimals at most: a cap converted from MB/s has many.
        let frac = format!("{:.2}", v.fract().abs());
        out.push_str(frac.trim_start_matches('0').trim_end_matches('0'));
    }
    out
}

#[cfg(test)]
mod tests;
