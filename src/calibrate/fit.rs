//! From measurements to a profile: the latencies fitted to the model's
//! log-normal, the caps a throttle shows, flushes, bandwidth and the
//! parallelism the read sweep shows; then the profile's model run on the
//! same tests, to check it.

use anyhow::{Context, Result, anyhow};

use crate::core::io::PAGE_BYTES;
use crate::device::import::fio::sig3;
use crate::device::microbench;
use crate::device::profile::Op;
use crate::device::profile::{Caps, IdlePoint, Latency, Profile};

use super::probe::Measured;
use super::{
    AGREE, DEEP_MIX_QD, DEEP_WRITE_QD, FLAT_SWEEP, FLUSH_SCALING_MIN, KNEE_GAIN, LatencyUs,
    Options, PLATEAU_DEPTHS, PLATEAU_RATIO, STALL_OVER_PACED, STREAMS, THROTTLED_QD1, hostname,
    utc_now,
};

pub(super) fn latency_of(l: Option<LatencyUs>, what: &str) -> Result<LatencyUs> {
    l.ok_or_else(|| anyhow!("calibrate: the {what} test completed no operation"))
}

/// The p99 of the log-normal the model fits (service time = latency less
/// `fixed`) whose mean is the measured `mean`, for a measured `median`.
///
/// The model draws service times from a log-normal through the median and
/// p99; a measured p99 is a poor guide to the mean on a disk with a heavy
/// tail (a shared disk's stalls), and the mean is what sets throughput and
/// every breakdown share. So calibrate states the p99 that gives the
/// measured mean, and records the measured p99 in `source`.
pub fn mean_matching_p99(fixed: f64, median: f64, mean: f64) -> f64 {
    let m = median - fixed;
    let e = mean - fixed;
    if m <= 0.0 || e <= m {
        return median;
    }
    let sigma = (2.0 * (e / m).ln()).sqrt();
    fixed + m * (crate::device::profile::Z99 * sigma).exp()
}

/// A profile latency from measured figures: the median, and the p99 that
/// reproduces the mean (see [`mean_matching_p99`]).
pub(super) fn fitted(l: LatencyUs, fixed: f64) -> Latency {
    let median = sig3(l.p50.max(fixed + 0.1));
    Latency {
        median_us: median,
        p99_us: sig3(mean_matching_p99(fixed, median, l.mean)).max(median),
    }
}

/// Where IOPS stop scaling: the first queue depth that no deeper one beats
/// by [`KNEE_GAIN`] or more (so a single slow measurement does not end the
/// sweep early); the last depth if IOPS keep scaling.
pub fn knee(sweep: &[(u32, f64)]) -> u32 {
    for (i, &(qd, iops)) in sweep.iter().enumerate() {
        let best_after = sweep[i + 1..].iter().map(|s| s.1).fold(0.0, f64::max);
        if best_after < KNEE_GAIN * iops {
            return qd;
        }
    }
    sweep.last().map_or(1, |s| s.0)
}

/// µs each operation in flight adds to the others' latency, fitted to a
/// read sweep (depth, IOPS) as latency(n) = `l1` + c × (n − 1) with equal
/// weight on every depth's relative error; 0 if latency does not grow.
pub fn contention_fit(sweep: &[(u32, f64)], l1: f64) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for &(qd, iops) in sweep {
        if qd < 2 || iops <= 0.0 {
            continue;
        }
        let latency = f64::from(qd) * 1e6 / iops;
        let x = f64::from(qd - 1) / latency;
        num += x * (1.0 - l1 / latency);
        den += x * x;
    }
    if den > 0.0 { (num / den).max(0.0) } else { 0.0 }
}

/// Root mean square relative error of `model` (operations per µs at a
/// depth) over the sweep.
pub(super) fn sweep_error(sweep: &[(u32, f64)], model: impl Fn(f64) -> f64) -> f64 {
    let errs: Vec<f64> = sweep
        .iter()
        .filter(|s| s.1 > 0.0)
        .map(|&(qd, iops)| model(f64::from(qd)) * 1e6 / iops - 1.0)
        .collect();
    (errs.iter().map(|e| e * e).sum::<f64>() / errs.len().max(1) as f64).sqrt()
}

/// The profile, the knee and what was concluded, from the measurements.
///
/// In steps, each adding its findings in turn: a throttle first, as it
/// shapes how every other figure is read (`throttle`); whether flushes
/// scale (`flush_to_media`); bandwidth (`bandwidth`); latencies
/// (`set_latencies`); how the fdatasync grows with the bytes before it
/// (`set_flush_bytes`); what an idle gap adds (`set_idle`); the
/// parallelism the read sweep shows and what writes and flushes in flight
/// add (`set_parallelism`, `set_write_and_flush_contention`); and the
/// profile's `source` (`source`).
pub fn derive(
    m: &Measured,
    name: &str,
    opts: &Options,
    device: &str,
    engine: &str,
) -> Result<(Profile, u32, Vec<String>)> {
    let mut findings = Vec::new();
    let lat = Latencies::of(m)?;
    let knee_qd = knee(&m.sweep);
    let throttle = throttle(m, lat.read, &mut findings);
    let capped = throttle.is_some();
    let (mut caps, capped_pairs) = match throttle {
        Some(t) => (t.caps, t.capped_pairs),
        None => (Caps::default(), None),
    };
    let flush_to_media = flush_to_media(m, capped_pairs, &mut findings);
    let (bandwidth, write_bandwidth) = bandwidth(m, &lat, capped, &mut caps, &mut findings);
    let placeholder = Latency {
        median_us: 1.0,
        p99_us: 1.0,
    };
    let mut p = Profile {
        name: name.to_string(),
        description: String::new(),
        source: String::new(),
        latency_io_kib: (PAGE_BYTES / 1024) as u32,
        read: placeholder,
        write: placeholder,
        flush: placeholder,
        channels: 1,
        contention_us: 0.0,
        write_contention_us: None,
        read_write_contention_us: None,
        flush_contention_us: None,
        bandwidth_mib_s: bandwidth,
        write_bandwidth_mib_s: write_bandwidth,
        flush_us_per_mib: 0.0,
        idle: Vec::new(),
        network_rtt_us: 0.0,
        max_request_kib: None,
        inode_sync_tick_ms: m.inode_sync_tick_ms,
        flush_to_media,
        caps,
        cpu_probe_us: None,
        raid0: None,
    };
    set_latencies(&mut p, &lat, capped, &mut findings);
    set_flush_bytes(&mut p, m, &lat, &mut findings);
    set_idle(&mut p, m, &mut findings);
    set_parallelism(&mut p, m, lat.read, knee_qd, capped, &mut findings);
    if !capped {
        set_write_and_flush_contention(&mut p, m, &mut findings);
    }
    p.description = format!("Calibrated by pgiosim on {}, {device}", hostname());
    p.source = source(m, opts, device, engine, knee_qd, &findings);
    let text = serde_json::to_string(&p)?;
    let p = Profile::from_json(&text, "the calibrated profile")
        .context("calibrate: the measured figures do not make a valid profile")?;
    Ok((p, knee_qd, findings))
}

/// Figures that agree within [`AGREE`].
pub(super) fn agree(a: f64, b: f64) -> bool {
    a.max(b) / a.min(b).max(1e-9) <= AGREE
}

/// The latencies the profile is fitted to: QD1, back to back, as fio
/// runs them. What a pause before an I/O adds is the `idle` curve's.
pub(super) struct Latencies {
    read: LatencyUs,
    write: LatencyUs,
    /// The fdatasync alone, after an 8 KiB WAL write.
    flush: LatencyUs,
    /// The 8 KiB WAL write + fdatasync pair.
    pair: LatencyUs,
    /// The smallest p99 of the other QD1 reads (after pauses) and of the
    /// other fdatasyncs (larger WAL writes, pauses): behind a throttle's
    /// stalls, the tail of the device itself (see [`set_latencies`]).
    least_read_p99: f64,
    least_flush_p99: f64,
}

impl Latencies {
    fn of(m: &Measured) -> Result<Self> {
        Ok(Latencies {
            read: latency_of(m.qd1_read.read, "QD1 read")?,
            write: latency_of(m.qd1_write.write, "QD1 write")?,
            flush: latency_of(m.wal1.sync, "WAL fdatasync")?,
            pair: latency_of(m.wal1.pair, "WAL append + fdatasync")?,
            least_read_p99: least_p99(m.idle.iter().map(|i| i.read.read)),
            least_flush_p99: least_p99(
                m.wal_sizes
                    .iter()
                    .map(|w| w.1.sync)
                    .chain(m.idle.iter().map(|i| i.wal.sync)),
            ),
        })
    }
}

/// What a throttle in front of the disk showed.
pub(super) struct Throttle {
    caps: Caps,
    /// Write+fdatasync pairs per second the caps allow, if a write cap binds.
    capped_pairs: Option<f64>,
}

/// A throttle, if QD1 reads run far below what their own latency allows
/// and the read sweep is flat: its caps (combined or per direction), and
/// whether each fdatasync counts as a write I/O.
pub(super) fn throttle(
    m: &Measured,
    b2b_read: LatencyUs,
    findings: &mut Vec<String>,
) -> Option<Throttle> {
    let lead = throttle_seen(m, b2b_read)?;
    let mut caps = io_caps(m, &lead, findings);
    limiter(m, &mut caps, findings);
    if m.in_v1_throttle {
        caps.kernel_writeback_uncapped = true;
        findings.push(
            "the caps are this process's cgroup v1 blkio throttle, which the kernel flusher's \
             writeback of buffered pages passes (it is charged to no cgroup): \
             caps.kernel_writeback_uncapped"
                .to_string(),
        );
    }
    let capped_pairs = flush_charge(m, &mut caps, findings);
    Some(Throttle { caps, capped_pairs })
}

/// How the throttle holds back I/O over its rate, from the deep-queue
/// tests' tails. A throttle that paces (a provider's token bucket) gives
/// every I/O at depth about depth ÷ rate. Linux's cgroup throttle
/// (block/blk-throttle.c, `tg_within_iops_limit`) lets a slice's budget
/// through at device speed and holds the rest until the slice ends: at
/// depth the median stays near the device's while the p99 is most of a
/// slice. Which one it is decides how commits group behind the cap (a
/// stall gathers every backend; pacing spaces the flushes evenly), so it is
/// read from the tests, not assumed.
fn limiter(m: &Measured, caps: &mut Caps, findings: &mut Vec<String>) {
    use crate::device::profile::Limiter;
    // Each deep test: what it is, its latency, its depth and its rate.
    let deep = [
        (
            "QD16 writes",
            m.write16.write,
            DEEP_WRITE_QD,
            m.write16.ops_per_s,
        ),
        (
            "QD32 mixed reads",
            m.mixed.read,
            DEEP_MIX_QD,
            m.mixed.ops_per_s,
        ),
        (
            "QD32 mixed writes",
            m.mixed.write,
            DEEP_MIX_QD,
            m.mixed.ops_per_s,
        ),
    ];
    let stalled = deep.iter().find_map(|&(what, l, qd, rate)| {
        let l = l.filter(|_| rate > 0.0)?;
        let paced = paced_us(qd, rate);
        (l.p99 > STALL_OVER_PACED * paced && l.p50 < paced).then_some((what, l, paced))
    });
    match stalled {
        Some((what, l, paced)) => {
            let longest = deep
                .iter()
                .filter_map(|d| d.1)
                .map(|l| l.p99)
                .fold(0.0, f64::max);
            // The kernel's slice: HZ/10 (DFL_THROTL_SLICE_HD), or HZ/50 on
            // a non-rotational disk in a kernel built with
            // BLK_DEV_THROTTLING_LOW; a stall lasts at most one.
            let slice_ms = if longest > SSD_SLICE_MS * 1e3 {
                HD_SLICE_MS
            } else {
                SSD_SLICE_MS
            };
            caps.limiter = Limiter::BlkThrottle;
            caps.bucket_ms = slice_ms;
            findings.push(format!(
                "{what} behind the cap: p50 {:.0} µs, p99 {:.1} ms, where even pacing gives \
                 each about {:.1} ms: I/O runs at device speed, then stalls for the rest of a \
                 window, as Linux's cgroup throttle does: caps.limiter = blk_throttle, the \
                 kernel's {slice_ms:.0} ms slice (the longest deep-test p99 is {:.1} ms)",
                l.p50,
                l.p99 / 1e3,
                paced / 1e3,
                longest / 1e3
            ));
        }
        None => {
            // A pacing throttle: after a quiet spell about a slice of work
            // passes at device speed.
            caps.limiter = Limiter::TokenBucket;
            caps.bucket_ms = HD_SLICE_MS;
            findings.push(paced_finding(m));
        }
    }
}

/// What each I/O of a test at depth `qd` and `rate` a second takes if the
/// throttle spaces them evenly, µs.
fn paced_us(qd: u32, rate: f64) -> f64 {
    f64::from(qd) * 1e6 / rate.max(1e-9)
}

/// The finding for a throttle whose deep tests show no stall.
fn paced_finding(m: &Measured) -> String {
    format!(
        "QD{DEEP_WRITE_QD} writes and the QD{DEEP_MIX_QD} mix behind the cap take about their \
         paced {:.1} and {:.1} ms, without long stalls: caps.limiter = token_bucket, 100 ms deep",
        paced_us(DEEP_WRITE_QD, m.write16.ops_per_s) / 1e3,
        paced_us(DEEP_MIX_QD, m.mixed.ops_per_s) / 1e3
    )
}

/// blk-throttle's slice (block/blk-throttle.c): DFL_THROTL_SLICE_HD, HZ/10.
const HD_SLICE_MS: f64 = 100.0;
/// DFL_THROTL_SLICE_SSD, HZ/50: a non-rotational disk's slice in kernels
/// built with BLK_DEV_THROTTLING_LOW.
const SSD_SLICE_MS: f64 = 20.0;

/// Why the read sweep shows a throttle, if it does: QD1 far below its
/// latency's rate with a flat sweep, or the deepest depths on one rate.
fn throttle_seen(m: &Measured, b2b_read: LatencyUs) -> Option<String> {
    let p1 = m.sweep[0].1;
    let natural_qd1 = 1e6 / b2b_read.p50.max(0.1);
    let flat = m.sweep.last().map_or(0.0, |s| s.1) < FLAT_SWEEP * p1;
    let throttled = p1 < THROTTLED_QD1 * natural_qd1;
    let deepest: Vec<f64> = m
        .sweep
        .iter()
        .rev()
        .take(PLATEAU_DEPTHS)
        .map(|s| s.1)
        .collect();
    let plateau = deepest.len() == PLATEAU_DEPTHS
        && deepest.iter().copied().fold(0.0, f64::max)
            <= PLATEAU_RATIO * deepest.iter().copied().fold(f64::INFINITY, f64::min);
    if flat && throttled {
        Some(format!(
            "QD1 reads run at {p1:.0}/s where their {:.1} µs median allows {natural_qd1:.0}/s, \
             and the read sweep is flat: a throttle",
            b2b_read.p50
        ))
    } else if plateau {
        Some(format!(
            "the read sweep's {PLATEAU_DEPTHS} deepest queue depths run within {:.0}% of one \
             rate: a throttle",
            (PLATEAU_RATIO - 1.0) * 100.0
        ))
    } else {
        None
    }
}

/// The throttle's IOPS caps: combined if writes and the mix stop where
/// reads do, per direction if the mix runs at reads' and writes' sum.
fn io_caps(m: &Measured, lead: &str, findings: &mut Vec<String>) -> Caps {
    let write_rate = m.write16.ops_per_s;
    let mixed_rate = m.mixed.ops_per_s;
    let mut caps = Caps::default();
    // The throttle lets bursts through; its rate is the sweep's median.
    let mut rates: Vec<f64> = m.sweep.iter().map(|s| s.1).collect();
    rates.sort_by(f64::total_cmp);
    let cap = sig3(rates[rates.len() / 2]);
    if agree(mixed_rate, cap) && agree(write_rate, cap) {
        caps.iops = Some(cap);
        findings.push(format!(
            "{lead}; reads, writes and the 50/50 mix all stop at ~{cap} IOPS: a combined \
             cap, caps.iops = {cap}"
        ));
    } else if agree(mixed_rate, cap + write_rate) {
        let wcap = sig3(write_rate);
        caps.read_iops = Some(cap);
        caps.write_iops = Some(wcap);
        findings.push(format!(
            "{lead}; reads stop at ~{cap} IOPS, writes at ~{wcap}, the 50/50 mix at their \
             sum: per-direction caps"
        ));
    } else {
        caps.iops = Some(cap);
        findings.push(format!(
            "{lead} of ~{cap} IOPS (writes {write_rate:.0}/s and the mix {mixed_rate:.0}/s \
             do not tell combined from per-direction; taken as combined)"
        ));
    }
    caps
}

/// Whether each fdatasync costs a write I/O under the caps, and the
/// write + fdatasync pairs per second the write cap allows if it binds.
fn flush_charge(m: &Measured, caps: &mut Caps, findings: &mut Vec<String>) -> Option<f64> {
    let qd1_flush = m.wal1.ops_per_s;
    let par_flush = m.wal4.ops_per_s;
    let write_cap = caps.write_iops.or(caps.iops).unwrap_or(f64::INFINITY);
    // Four streams of write + fdatasync saturate the write cap: at half
    // of it, each fdatasync costs a write I/O too.
    if agree(par_flush * 2.0, write_cap) || agree(qd1_flush * 2.0, write_cap) {
        caps.flush_counts_as_io = true;
        findings.push(format!(
            "write + fdatasync runs at {par_flush:.0}/s ({STREAMS} streams), half the write \
             cap: each fdatasync is charged as a write I/O (flush_counts_as_io)"
        ));
        Some(write_cap / 2.0)
    } else if agree(par_flush, write_cap) {
        Some(write_cap)
    } else {
        None
    }
}

/// Flushes: do four streams go faster than one? Behind a write cap that
/// both rates hit (`capped_pairs`), they cannot, whatever the disk does.
pub(super) fn flush_to_media(
    m: &Measured,
    capped_pairs: Option<f64>,
    findings: &mut Vec<String>,
) -> bool {
    let qd1_flush = m.wal1.ops_per_s;
    let par_flush = m.wal4.ops_per_s;
    match capped_pairs {
        Some(limit) if agree(par_flush, limit) => {
            findings.push(format!(
                "{STREAMS} streams of WAL append + fdatasync: {par_flush:.0}/s, the write cap's \
                 limit: whether flushes scale does not show behind it, flush_to_media = false"
            ));
            false
        }
        _ => {
            let serial = par_flush < FLUSH_SCALING_MIN * qd1_flush;
            findings.push(format!(
                "{STREAMS} streams of WAL append + fdatasync: {par_flush:.0}/s against one \
                 stream's {qd1_flush:.0}/s ({:.1}×): {}",
                par_flush / qd1_flush.max(1e-9),
                if serial {
                    "flushes do not scale, flush_to_media = true"
                } else {
                    "flushes scale, flush_to_media = false"
                }
            ));
            serial
        }
    }
}

/// `bandwidth_mib_s` and `write_bandwidth_mib_s`. The sequential tests see
/// the medium or a throughput cap, whichever is lower. Behind a throttle it
/// is the cap (set in `caps`); and the medium must never take more than
/// half the fastest median to move one 8 KiB page.
pub(super) fn bandwidth(
    m: &Measured,
    lat: &Latencies,
    capped: bool,
    caps: &mut Caps,
    findings: &mut Vec<String>,
) -> (f64, Option<f64>) {
    let floor_mib_s =
        2.0 * PAGE_BYTES as f64 / 1_048_576.0 / (lat.read.p50.min(lat.write.p50).max(0.1) / 1e6);
    let (r, w) = (sig3(m.seq_read.mib_per_s), sig3(m.seq_write.mib_per_s));
    if capped {
        if caps.iops.is_some() {
            caps.mib_s = Some(r.max(w).max(1.0));
        } else {
            caps.read_mib_s = Some(r.max(1.0));
            caps.write_mib_s = Some(w.max(1.0));
        }
        findings.push(format!(
            "sequential 1 MiB reads {r} MiB/s and writes {w} MiB/s behind the throttle: taken as \
             its throughput caps; bandwidth_mib_s is set so it does not bind"
        ));
        (sig3((10.0 * r.max(w)).max(floor_mib_s)), None)
    } else {
        let (read_bw, write_bw) = (sig3(r.max(floor_mib_s)), sig3(w.max(floor_mib_s)));
        findings.push(format!(
            "sequential 1 MiB reads {r} MiB/s, writes {w} MiB/s ({STREAMS} streams): \
             bandwidth_mib_s {read_bw}, write_bandwidth_mib_s {write_bw}"
        ));
        (read_bw, Some(write_bw))
    }
}

/// The smallest p99 of some tests' latencies (infinite for none).
fn least_p99(tests: impl Iterator<Item = Option<LatencyUs>>) -> f64 {
    tests.flatten().map(|l| l.p99).fold(f64::INFINITY, f64::min)
}

/// The profile's read, write and flush latencies: behind a throttle the
/// measured percentiles, else the median and the p99 that gives the mean.
///
/// A throttle that stalls (blk-throttle's slices) holds one I/O in every
/// window's budget for most of the slice: under a cgroup cap of 1,000
/// IOPS, 50 write + fdatasync pairs share a window and the fdatasync's p99
/// was 93.7 ms, the stall, which the model's caps make themselves. So the
/// read's and the flush's tails are the smallest p99 among their QD1 tests
/// (the fdatasync 50 µs after its write had 187 µs): some test's p99
/// misses the stalls.
pub(super) fn set_latencies(
    p: &mut Profile,
    lat: &Latencies,
    capped: bool,
    findings: &mut Vec<String>,
) {
    let (read_m, write_m, flush_m) = (lat.read, lat.write, lat.flush);
    if capped {
        // The means include the throttle's stalls, which the model's caps
        // make themselves: state the measured percentiles.
        let measured = |l: LatencyUs| {
            let median = sig3(l.p50.max(0.1));
            Latency {
                median_us: median,
                p99_us: sig3(l.p99).max(median),
            }
        };
        let least = |l: LatencyUs, other: f64| LatencyUs {
            p99: l.p99.min(other),
            ..l
        };
        p.read = measured(least(read_m, lat.least_read_p99));
        p.write = measured(write_m);
        // As without a throttle, the flush is what the WAL pair takes
        // beyond the write, here in medians: behind a throttle too, a WAL
        // append can be much faster than a random write, and the two
        // measured alone made the model's pairs slow (docs/validation.md,
        // "a WAL append behind a throttle").
        let flush = least(flush_m, lat.least_flush_p99);
        let median = flush_beyond_write(p, lat.pair.p50, write_m.p50, flush.p50);
        p.flush = measured(scaled(flush, median / flush.p50.max(1e-9)));
        findings.push(format!(
            "latencies are the measured p50 and p99 (the means include the throttle's stalls); \
             the flush's median is the WAL pair's {:.1} µs less the write's {:.1} ({} µs; the \
             fdatasync alone took {:.1})",
            lat.pair.p50, write_m.p50, p.flush.median_us, flush.p50
        ));
    } else {
        p.read = fitted(read_m, p.fixed_us(Op::Read));
        p.write = fitted(write_m, p.fixed_us(Op::Write));
        // The flush is what the WAL pair takes beyond the profile's write
        // (a WAL append may be faster or slower than a random write), with
        // the spread the fdatasync alone showed.
        let mean = flush_beyond_write(p, lat.pair.mean, write_m.mean, flush_m.mean);
        let ratio = mean / flush_m.mean.max(1e-9);
        let shifted = LatencyUs {
            mean,
            ..scaled(flush_m, ratio)
        };
        p.flush = fitted(shifted, p.fixed_us(Op::Flush));
        findings.push(format!(
            "p99_us of read, write and flush ({}, {}, {} µs) are the log-normal p99s that give \
             the measured means ({:.1}, {:.1} µs; the flush {:.1} µs, the WAL pair's {:.1} less \
             the write, the fdatasync alone took {:.1}); measured p99s {:.0}, {:.0}, {:.0} µs",
            p.read.p99_us,
            p.write.p99_us,
            p.flush.p99_us,
            read_m.mean,
            write_m.mean,
            lat.pair.mean - write_m.mean,
            lat.pair.mean,
            flush_m.mean,
            read_m.p99,
            write_m.p99,
            flush_m.p99
        ));
    }
}

/// What a WAL pair of `pair` µs takes beyond a write of `write` µs (the
/// same statistic of each: means, or medians): the flush the model adds to
/// the write. Where an fdatasync also writes the inode (once a tick: each
/// sync when pairs take longer), that write is in the pair too, at about
/// the WAL append's own write time. At least 1 µs (or the fdatasync alone's
/// `flush` if less): a write that takes as long as the whole pair leaves
/// the flush next to nothing.
fn flush_beyond_write(p: &Profile, pair: f64, write: f64, flush: f64) -> f64 {
    let inode_share = p
        .inode_sync_tick_ms
        .map_or(0.0, |tick| (pair / 1e3 / tick).min(1.0));
    let append = (pair - flush).clamp(0.0, write);
    (pair - write - inode_share * append).max(flush.min(1.0))
}

/// `l` with every figure `ratio` times as long: its shape kept.
fn scaled(l: LatencyUs, ratio: f64) -> LatencyUs {
    LatencyUs {
        mean: l.mean * ratio,
        p50: l.p50 * ratio,
        p99: l.p99 * ratio,
        ..l
    }
}

/// `channels` and `contention_us`, from the read sweep (after the
/// latencies are set: both use the profile's QD1 read mean).
pub(super) fn set_parallelism(
    p: &mut Profile,
    m: &Measured,
    b2b_read: LatencyUs,
    knee_qd: u32,
    capped: bool,
    findings: &mut Vec<String>,
) {
    let plateau = m.sweep.iter().map(|s| s.1).fold(0.0, f64::max);
    if capped {
        // Behind a cap the device's own parallelism does not show: enough
        // channels that the cap, not they, binds.
        p.channels = ((2.0 * plateau * p.qd1_mean_us(Op::Read) / 1e6).ceil() as u32).max(4);
        findings.push(format!(
            "channels {}: hidden behind the cap, set so that the cap binds",
            p.channels
        ));
        return;
    }
    // Two shapes of parallelism; the sweep says which this disk has.
    // Channels: Little's law where IOPS stop scaling, the plateau's
    // IOPS × the time one operation takes; latency stays flat until
    // they are all busy (a local SSD). Contention: every operation in
    // flight slows the others from the second one on (a virtualised or
    // networked disk); latency grows by the same step per depth.
    // Both shapes from the back-to-back QD1 latency, as the sweep ran.
    let l1 = b2b_read.mean;
    // Channels so that the model, with the profile's latency, reaches
    // the plateau.
    let k = (plateau * p.qd1_mean_us(Op::Read) / 1e6)
        .round()
        .clamp(1.0, 64.0);
    let c = contention_fit(&m.sweep, l1);
    let max_qd = m.sweep.iter().map(|s| s.0).max().unwrap_or(1);
    let channels_err = sweep_error(&m.sweep, |n| n.min(k) / l1);
    let contention_err = sweep_error(&m.sweep, |n| n / (l1 + c * (n - 1.0)));
    let describe = |err: f64| format!("{:.0}%", 100.0 * err);
    if c > 0.0 && contention_err < channels_err {
        p.contention_us = sig3(c);
        p.channels = max_qd.max(1);
        findings.push(format!(
            "random-read latency grows by {c:.1} µs per operation in flight from QD1 on \
             (mean {l1:.1} µs at QD1): contention_us = {}, channels {} so that they never \
             bind below QD{max_qd}; this fits the sweep to {} rms, {} channels with no \
             contention to {}",
            p.contention_us,
            p.channels,
            describe(contention_err),
            k,
            describe(channels_err)
        ));
    } else {
        p.channels = k as u32;
        findings.push(format!(
            "random-read IOPS stop scaling at QD{knee_qd} (no deeper queue gives {:.0}% more); \
             plateau {plateau:.0} IOPS × the profile's mean QD1 read latency {:.1} µs = {} \
             channels; this fits the sweep to {} rms, a contention of {c:.1} µs per \
             operation in flight to {}",
            (KNEE_GAIN - 1.0) * 100.0,
            p.qd1_mean_us(Op::Read),
            p.channels,
            describe(channels_err),
            describe(contention_err)
        ));
    }
}

/// `flush_us_per_mib`: how much longer a WAL write + fdatasync of 64 KiB to
/// 1 MiB takes than the profile's write of those bytes and its 8 KiB flush
/// explain, per MiB: least squares through the 8 KiB point.
///
/// Fitted on the pair, not on the fdatasync alone: the device charges a
/// write its own latency and the flush the rest of the pair, and how a disk
/// splits the pair between the two calls (a virtio disk acknowledges an
/// O_DIRECT write early and pays at the flush) is not what a committing
/// backend waits for; the pair is. A slope that would be negative (the
/// write's bandwidth already explains the pair) is 0.
pub(super) fn set_flush_bytes(
    p: &mut Profile,
    m: &Measured,
    lat: &Latencies,
    findings: &mut Vec<String>,
) {
    p.flush_us_per_mib = 0.0;
    let excess =
        |bytes: u64, measured: f64| measured - microbench::gap_latency(p, true, bytes, 0.0, 1).0;
    let base = excess(PAGE_BYTES, lat.pair.mean);
    let (mut num, mut den) = (0.0, 0.0);
    let mut points = vec![format!("8 KiB {:.0} µs", lat.pair.mean)];
    for (bytes, t) in &m.wal_sizes {
        let Some(pair) = t.pair else { continue };
        let x = (*bytes - PAGE_BYTES) as f64 / 1_048_576.0;
        num += x * (excess(*bytes, pair.mean) - base);
        den += x * x;
        points.push(format!(
            "{} {:.0} µs",
            crate::units::format_memory(*bytes),
            pair.mean
        ));
    }
    let slope = if den > 0.0 { (num / den).max(0.0) } else { 0.0 };
    p.flush_us_per_mib = sig3(slope);
    findings.push(format!(
        "WAL write + fdatasync of {}: beyond the write's latency and bandwidth, \
         flush_us_per_mib = {}",
        points.join(", "),
        p.flush_us_per_mib
    ));
}

/// The `idle` curve: at each gap, what the measured mean read and mean WAL
/// write + fdatasync take beyond what the profile without the curve gives
/// at that gap (its caps included: behind a throttle, back-to-back
/// operations wait for the budget that a paused one finds).
pub(super) fn set_idle(p: &mut Profile, m: &Measured, findings: &mut Vec<String>) {
    p.idle.clear();
    let mut words = Vec::new();
    let mut points = Vec::new();
    for t in &m.idle {
        let (Some(read), Some(pair)) = (t.read.read, t.wal.pair) else {
            continue;
        };
        let model_read = microbench::gap_latency(p, false, PAGE_BYTES, t.gap_us, 1).0;
        let model_pair = microbench::gap_latency(p, true, PAGE_BYTES, t.gap_us, 1).0;
        let point = IdlePoint {
            gap_us: t.gap_us,
            read_us: sig3((read.mean - model_read).max(0.0)),
            write_us: sig3((pair.mean - model_pair).max(0.0)),
        };
        words.push(format!(
            "{} µs: read {:.1} µs against {model_read:.1} (+{}), write + fdatasync {:.1} \
             against {model_pair:.1} (+{})",
            point.gap_us, read.mean, point.read_us, pair.mean, point.write_us
        ));
        points.push(point);
    }
    p.idle = points;
    findings.push(format!(
        "after a pause, measured against the profile without an idle curve: {}",
        words.join("; ")
    ));
}

/// `write_contention_us` so that the model's QD16 writes run at the
/// measured rate, `read_write_contention_us` so that its QD32 50/50 mix
/// does, then `flush_contention_us` so that its four streams of write +
/// fdatasync do (on a disk whose flushes go to media, the serial flushes
/// decide that rate instead).
pub(super) fn set_write_and_flush_contention(
    p: &mut Profile,
    m: &Measured,
    findings: &mut Vec<String>,
) {
    let reads = p.contention_us;
    let ww = sig3(fit_monotone(m.write16.ops_per_s, |c| {
        let mut q = p.clone();
        q.write_contention_us = Some(c);
        microbench::closed_loop_rate(&q, Op::Write, PAGE_BYTES, 16, 1)
    }));
    p.write_contention_us = Some(ww);
    let rw = sig3(fit_monotone(m.mixed.ops_per_s, |c| {
        let mut q = p.clone();
        q.read_write_contention_us = Some(c);
        microbench::mixed_iops(&q, PAGE_BYTES, 32, 1)
    }));
    p.read_write_contention_us = Some(rw);
    findings.push(format!(
        "QD16 writes {:.0} IOPS and the QD32 50/50 mix {:.0} IOPS: each write in flight adds \
         {ww} µs to a write (write_contention_us), {rw} µs to a read \
         (read_write_contention_us), against a read's {reads} µs to a read",
        m.write16.ops_per_s, m.mixed.ops_per_s,
    ));
    if p.flush_to_media {
        return;
    }
    let fitted = sig3(fit_monotone(m.wal4.ops_per_s, |c| {
        let mut q = p.clone();
        q.flush_contention_us = Some(c);
        microbench::parallel_flush_rate(&q, STREAMS, 1, 1)
    }));
    p.flush_contention_us = Some(fitted);
    findings.push(format!(
        "{STREAMS} streams of WAL append + fdatasync {:.0}/s: flush_contention_us = {fitted}",
        m.wal4.ops_per_s,
    ));
}

/// The contention c ≥ 0 at which `rate(c)`, falling as c grows, meets
/// `target`: 0 if even no contention is too slow, by bisection.
fn fit_monotone(target: f64, rate: impl Fn(f64) -> f64) -> f64 {
    if target.is_nan() || target <= 0.0 || rate(0.0) <= target {
        return 0.0;
    }
    let mut hi = 10.0;
    while rate(hi) > target {
        hi *= 2.0;
        if hi > 1e6 {
            return hi;
        }
    }
    let mut lo = 0.0;
    for _ in 0..16 {
        let mid = (lo + hi) / 2.0;
        if rate(mid) > target {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The profile's `source`: where, when and how it was measured, every
/// figure, and the findings.
pub(super) fn source(
    m: &Measured,
    opts: &Options,
    device: &str,
    engine: &str,
    knee_qd: u32,
    findings: &[String],
) -> String {
    let sweep_text: Vec<String> = m
        .sweep
        .iter()
        .map(|(q, r)| format!("QD{q} {r:.0}"))
        .collect();
    let lat = |l: Option<LatencyUs>| l.map_or(0.0, |l| l.p50);
    format!(
        "pgiosim calibrate {} in {} on {}, {device}, {engine}, O_DIRECT, data file {}, {} s per \
         test: QD1 8 KiB random read p50 {:.1} µs; QD1 8 KiB random write p50 {:.1} µs; 8 KiB \
         WAL append + fdatasync {:.0}/s, the fdatasync alone p50 {:.1} µs, {STREAMS} streams \
         {:.0}/s; random-read IOPS {} (knee QD{knee_qd}); QD16 random write {:.0} IOPS; QD32 \
         50/50 mix {:.0} IOPS; sequential 1 MiB read {:.0} MiB/s, write {:.0} MiB/s. {}",
        utc_now(),
        opts.dir.display(),
        hostname(),
        crate::units::format_memory(m.size_bytes),
        opts.seconds_per_test,
        lat(m.qd1_read.read),
        lat(m.qd1_write.write),
        m.wal1.ops_per_s,
        lat(m.wal1.sync),
        m.wal4.ops_per_s,
        sweep_text.join(", "),
        m.write16.ops_per_s,
        m.mixed.ops_per_s,
        m.seq_read.mib_per_s,
        m.seq_write.mib_per_s,
        findings.join("; "),
    )
}

#[cfg(test)]
mod tests;
