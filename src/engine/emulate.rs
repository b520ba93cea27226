//! `run --emulate PROFILE`: the real workload on the local disk, every I/O
//! shaped to behave like the profile's disk.
//!
//! [`EmulatedDevice`] wraps a real device. Each request goes to the real
//! disk at once, and the same request is given to a [`DeviceModel`] of the
//! profile, which says when the profile's disk would have completed it (its
//! token-bucket caps, its channels, its latency distribution and round trip).
//! The real completion is held back until that modelled time:
//!
//! ```text
//! delivered = max(real completion, modelled completion)
//! ```
//!
//! So a slower disk than the local one (gp3 on a local NVMe) is emulated
//! exactly as far as the model is right. Where the local disk is *slower*
//! than the profile asks (the real completion comes more than a tolerance
//! after the modelled one), the I/O is delivered late and counted, and the
//! run says so ("local disk slower than the profile for N% of I/Os") rather
//! than pretending to be the faster disk.
//!
//! # Matched service times
//!
//! The model's completion is its queueing and caps plus a service time
//! drawn from the profile's log-normal. Drawn independently of the real
//! disk, a profile as fast as the local disk would be delivered at the
//! later of two independent draws, slower than either, and half its I/Os
//! would count as late. So the draw is replaced, once the real completion
//! is known, by the profile's service time at the same quantile as the real
//! latency among the last [`RANK_WINDOW`] real latencies of that kind:
//! a real I/O slower than most gets a profile service time slower than
//! most. The delivered latencies still follow the profile's distribution
//! (the quantiles are uniform), the local disk's own spread is not added on
//! top, and "late" means the local disk is slower than the profile at that
//! quantile. The first [`RANK_MIN`] I/Os of each kind keep the model's
//! independent draw.
//!
//! # What it does not do
//!
//! * The real I/O is issued at once, not when the profile's caps would let
//!   it through (cgroup blk-throttle holds it back instead). With a closed
//!   loop of clients this changes nothing the core sees, as every request
//!   is delivered at its modelled time; the local disk just gets the work
//!   earlier, which hides its latency behind the cap's wait.
//! * The model books its channels with its own draw, not the matched one:
//!   at channel saturation queueing follows the independent draws.

use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::rc::Rc;

use anyhow::{Result, bail};
use serde::Serialize;

use super::Device;
use crate::core::io::{IoCompletion, IoRequest, Token};
use crate::core::time::{Nanos, US};
use crate::device::model::DeviceModel;
use crate::device::profile::Op;
use crate::device::profile::{Profile, lognormal_sigma};
use crate::device::request::model_op;

/// A real completion later than the modelled one by at most this much, or
/// by at most [`LATE_TOLERANCE_FRACTION`] of the modelled latency, is not
/// counted as the local disk being slower than the profile.
pub const LATE_TOLERANCE: Nanos = 20 * US;
/// See [`LATE_TOLERANCE`].
pub const LATE_TOLERANCE_FRACTION: f64 = 0.10;
/// Above this share of late I/Os the summary says the emulation is not
/// faithful (below it, it is noted only).
pub const LATE_WARN_SHARE: f64 = 0.01;

/// Real latencies a new one is ranked among (per kind of operation).
pub const RANK_WINDOW: usize = 2048;
/// Real latencies needed before service times are matched to them.
pub const RANK_MIN: usize = 64;

/// One request in flight.
#[derive(Clone, Copy, Debug)]
struct Pending {
    op: Op,
    submitted: Nanos,
    /// When the profile's disk would complete it, with the model's draw.
    modelled: Nanos,
    /// The service time the model drew, included once in `modelled`, ns.
    service: f64,
}

/// The last [`RANK_WINDOW`] real latencies of one kind, in arrival order
/// and sorted, to rank a new one.
#[derive(Debug, Default)]
struct Ranks {
    window: VecDeque<Nanos>,
    sorted: Vec<Nanos>,
}

impl Ranks {
    /// Mid-rank quantile of `x` among the window (ties count half), in
    /// (0, 1); None while the window holds fewer than [`RANK_MIN`].
    fn quantile(&self, x: Nanos) -> Option<f64> {
        let n = self.sorted.len();
        if n < RANK_MIN {
            return None;
        }
        let below = self.sorted.partition_point(|&v| v < x);
        let upto = self.sorted.partition_point(|&v| v <= x);
        let rank = (below + upto) as f64 / 2.0;
        Some(((rank + 0.5) / (n as f64 + 1.0)).clamp(1e-6, 1.0 - 1e-6))
    }

    fn push(&mut self, x: Nanos) {
        if self.window.len() == RANK_WINDOW
            && let Some(old) = self.window.pop_front()
        {
            let i = self.sorted.partition_point(|&v| v < old);
            self.sorted.remove(i);
        }
        self.window.push_back(x);
        let i = self.sorted.partition_point(|&v| v < x);
        self.sorted.insert(i, x);
    }
}

/// The inverse of the standard normal CDF (Acklam's rational
/// approximation, relative error below 1.2e-9).
pub fn probit(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    const LOW: f64 = 0.024_25;
    if p < LOW {
        tail((-2.0 * p.ln()).sqrt())
    } else if p <= 1.0 - LOW {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    } else {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    }
}

/// How the local disk kept up with the profile, per kind of operation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct OpFigures {
    /// Operations completed.
    pub ios: u64,
    /// Operations whose real completion came after the modelled one by more
    /// than the tolerance.
    pub late: u64,
    /// Sum over the late ones of how much later, ns.
    pub late_ns_sum: u64,
    /// Sum of the modelled latencies, ns.
    pub modelled_ns_sum: u64,
    /// Sum of the real latencies, ns.
    pub real_ns_sum: u64,
}

impl OpFigures {
    fn add(&mut self, o: &OpFigures) {
        self.ios += o.ios;
        self.late += o.late;
        self.late_ns_sum += o.late_ns_sum;
        self.modelled_ns_sum += o.modelled_ns_sum;
        self.real_ns_sum += o.real_ns_sum;
    }

    /// Late operations as a fraction of all (0 when none ran).
    pub fn late_share(&self) -> f64 {
        if self.ios == 0 {
            0.0
        } else {
            self.late as f64 / self.ios as f64
        }
    }
}

/// What an emulated run measured about the emulation itself.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct EmulationStats {
    /// Name of the emulated profile.
    pub profile: String,
    /// Reads, writes and flushes (fdatasync and fsync).
    pub read: OpFigures,
    pub write: OpFigures,
    pub flush: OpFigures,
}

impl EmulationStats {
    /// Every operation together.
    pub fn total(&self) -> OpFigures {
        let mut t = OpFigures::default();
        for o in [&self.read, &self.write, &self.flush] {
            t.add(o);
        }
        t
    }

    fn of(&mut self, op: Op) -> &mut OpFigures {
        match op {
            Op::Read => &mut self.read,
            Op::Write => &mut self.write,
            Op::Flush => &mut self.flush,
        }
    }

    /// The one-paragraph summary printed after an emulated run.
    pub fn summary(&self) -> String {
        let t = self.total();
        let pct = |o: &OpFigures| 100.0 * o.late_share();
        let mean_us = |sum: u64, n: u64| {
            if n == 0 {
                0.0
            } else {
                sum as f64 / n as f64 / 1e3
            }
        };
        let mut s = format!(
            "emulation of {}: {} I/Os; local disk slower than the profile for {:.2}% of I/Os \
             (reads {:.2}%, writes {:.2}%, flushes {:.2}%; late means the real completion came \
             more than max({} µs, {:.0}% of the modelled latency) after the modelled one)",
            self.profile,
            t.ios,
            pct(&t),
            pct(&self.read),
            pct(&self.write),
            pct(&self.flush),
            LATE_TOLERANCE / US,
            LATE_TOLERANCE_FRACTION * 100.0,
        );
        for (what, o) in [
            ("read", &self.read),
            ("write", &self.write),
            ("flush", &self.flush),
        ] {
            if o.ios > 0 {
                s.push_str(&format!(
                    "\n  {what:<5}  {:>9} I/Os  modelled mean {:>9.1} µs  local disk mean {:>9.1} µs  late {:>6.2}%",
                    o.ios,
                    mean_us(o.modelled_ns_sum, o.ios),
                    mean_us(o.real_ns_sum, o.ios),
                    pct(o)
                ));
            }
        }
        if t.late_share() > LATE_WARN_SHARE {
            s.push_str(&format!(
                "\nwarning: the local disk is slower than the {} profile for {:.1}% of I/Os: \
                 those were delivered when the local disk finished them, so this run is slower \
                 than the profile's disk would be",
                self.profile,
                pct(&t)
            ));
        }
        s
    }
}

/// A shared view of an emulated device's figures, readable after the
/// device has been handed to the driver.
#[derive(Clone, Debug)]
pub struct EmulationHandle(Rc<RefCell<EmulationStats>>);

impl EmulationHandle {
    /// The figures so far.
    pub fn stats(&self) -> EmulationStats {
        self.0.borrow().clone()
    }
}

/// A real device whose completions are delivered no earlier than a device
/// model of a profile says. See the module docs.
pub struct EmulatedDevice {
    inner: Box<dyn Device>,
    model: DeviceModel,
    /// (median ns, σ) of the profile's service-time log-normal, per op.
    service: [(f64, f64); 3],
    ranks: [Ranks; 3],
    name: &'static str,
    pending: HashMap<Token, Pending>,
    /// Standbys' WAL I/O in flight: the standby's disk is not the one
    /// emulated, so these are delivered as they complete.
    unshaped: std::collections::HashSet<Token>,
    /// Real completions waiting for their delivery time: (deliver at, seq, token).
    held: BinaryHeap<Reverse<(Nanos, u64, Token)>>,
    seq: u64,
    scratch: Vec<IoCompletion>,
    stats: Rc<RefCell<EmulationStats>>,
}

impl EmulatedDevice {
    /// Wraps `inner` so that it behaves like `profile`'s disk, the model's
    /// service times drawn from `seed`.
    pub fn new(inner: Box<dyn Device>, profile: &Profile, seed: u64) -> EmulatedDevice {
        // The trait's name is static; one short string per emulated run.
        let name: &'static str =
            Box::leak(format!("{} emulating {}", inner.name(), profile.name).into_boxed_str());
        let stats = EmulationStats {
            profile: profile.name.clone(),
            ..EmulationStats::default()
        };
        let fit = |op| {
            let (median_us, p99_us) = profile.service_us(op);
            (median_us * 1e3, lognormal_sigma(median_us, p99_us))
        };
        EmulatedDevice {
            inner,
            model: DeviceModel::new(profile, seed),
            service: [fit(Op::Read), fit(Op::Write), fit(Op::Flush)],
            ranks: Default::default(),
            name,
            pending: HashMap::new(),
            unshaped: Default::default(),
            held: BinaryHeap::new(),
            seq: 0,
            scratch: Vec::with_capacity(64),
            stats: Rc::new(RefCell::new(stats)),
        }
    }

    /// A handle to read the figures after the run.
    pub fn handle(&self) -> EmulationHandle {
        EmulationHandle(Rc::clone(&self.stats))
    }

    /// A real completion: hold it until its modelled time.
    fn on_real(&mut self, c: IoCompletion) -> Result<()> {
        if self.unshaped.remove(&c.token) {
            self.seq += 1;
            self.held.push(Reverse((c.at, self.seq, c.token)));
            return Ok(());
        }
        let Some(mut p) = self.pending.get(&c.token).copied() else {
            bail!("emulation: completion for unknown token {}", c.token);
        };
        let real = c.at.saturating_sub(p.submitted);
        let drawn = p.modelled;
        let ranks = &mut self.ranks[p.op as usize];
        if let Some(u) = ranks.quantile(real) {
            let (median, sigma) = self.service[p.op as usize];
            let matched = median * (sigma * probit(u)).exp();
            let t = p.modelled as f64 - p.service + matched;
            p.modelled = (t.round() as Nanos).max(p.submitted);
        }
        ranks.push(real);
        let deliver = c.at.max(p.modelled);
        // The model's contention counts the operation until it is delivered.
        self.model.moved(c.at, drawn, deliver);
        let modelled_ns = p.modelled.saturating_sub(p.submitted);
        let tolerance = LATE_TOLERANCE.max((modelled_ns as f64 * LATE_TOLERANCE_FRACTION) as Nanos);
        {
            let mut s = self.stats.borrow_mut();
            let f = s.of(p.op);
            f.ios += 1;
            f.modelled_ns_sum += modelled_ns;
            f.real_ns_sum += c.at.saturating_sub(p.submitted);
            if c.at > p.modelled + tolerance {
                f.late += 1;
                f.late_ns_sum += c.at - p.modelled;
            }
        }
        self.seq += 1;
        self.held.push(Reverse((deliver, self.seq, c.token)));
        Ok(())
    }

    /// Moves every held completion due at `now` to `out`, stamped `now`.
    fn deliver_due(&mut self, now: Nanos, out: &mut Vec<IoCompletion>) {
        while let Some(&Reverse((at, _, token))) = self.held.peek() {
            if at > now {
                break;
            }
            self.held.pop();
            self.pending.remove(&token);
            out.push(IoCompletion { token, at: now });
        }
    }
}

impl Device for EmulatedDevice {
    fn submit(&mut self, req: IoRequest) -> Result<()> {
        let now = self.inner.now();
        if req.kind.standby().is_some() {
            self.inner.submit(req)?;
            self.unshaped.insert(req.token);
            return Ok(());
        }
        let (op, _, _) = model_op(req.kind);
        let (modelled, service) = self.model.submit_request(now, req.kind);
        if self.pending.contains_key(&req.token) {
            bail!("emulation: token {} is already in flight", req.token);
        }
        self.inner.submit(req)?;
        self.pending.insert(
            req.token,
            Pending {
                op,
                submitted: now,
                modelled,
                service,
            },
        );
        Ok(())
    }

    fn wait(
        &mut self,
        deadline: Option<Nanos>,
        max_block: Nanos,
        out: &mut Vec<IoCompletion>,
    ) -> Result<()> {
        let start = self.inner.now();
        let until = deadline.map_or(start.saturating_add(max_block), |d| {
            d.min(start.saturating_add(max_block))
        });
        let spin = self.inner.timer_spin();
        // `out` may hold completions from before: only new ones end the wait.
        let first = out.len();
        loop {
            let now = self.inner.now();
            // Wake for the caller's deadline, or a little before the next
            // held completion is due and poll from there: a sleeping thread
            // wakes late, and the delivery time is what is being emulated.
            let wake = match self.held.peek() {
                Some(&Reverse((at, _, _))) => until.min(at.saturating_sub(spin)),
                None => until,
            };
            self.scratch.clear();
            let mut scratch = std::mem::take(&mut self.scratch);
            let r = self
                .inner
                .wait(Some(wake.max(now)), max_block, &mut scratch);
            for c in scratch.drain(..) {
                self.on_real(c)?;
            }
            self.scratch = scratch;
            r?;
            let now = self.inner.now();
            self.deliver_due(now, out);
            if out.len() > first || now >= until {
                return Ok(());
            }
        }
    }

    fn now(&self) -> Nanos {
        self.inner.now()
    }

    fn name(&self) -> &'static str {
        self.name
    }

    fn timer_spin(&self) -> Nanos {
        self.inner.timer_spin()
    }

    fn counted_ios(&self) -> Option<[f64; 2]> {
        Some(self.model.counted_ios())
    }

    fn disk_ios(&self) -> Option<[f64; 2]> {
        Some(self.model.disk_ios())
    }
}

/// Wraps `dev` in an emulation of `profile` (the plan's `--emulate`,
/// resolved); returns the device and a handle to its figures.
pub fn wrap(
    dev: Box<dyn Device>,
    profile: &Profile,
    seed: u64,
) -> (Box<dyn Device>, EmulationHandle) {
    let emu = EmulatedDevice::new(dev, profile, seed);
    let handle = emu.handle();
    (Box::new(emu), handle)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::io::IoKind;
    use crate::core::time::{MS, SEC};
    use crate::engine::sim::SimDevice;

    /// A device in virtual time whose every operation takes `lat`, for
    /// checking the wrapper's arithmetic without a disk.
    struct Fixed {
        now: Nanos,
        lat: Nanos,
        pending: Vec<(Nanos, Token)>,
    }

    impl Device for Fixed {
        fn submit(&mut self, req: IoRequest) -> Result<()> {
            self.pending.push((self.now + self.lat, req.token));
            Ok(())
        }
        fn wait(&mut self, d: Option<Nanos>, _: Nanos, out: &mut Vec<IoCompletion>) -> Result<()> {
            self.pending.sort();
            let next = self.pending.first().map(|p| p.0);
            match (next, d) {
                (Some(t), d) if d.is_none_or(|d| t <= d) => self.now = self.now.max(t),
                (_, Some(d)) => self.now = self.now.max(d),
                _ => {}
            }
            let now = self.now;
            self.pending.retain(|&(t, token)| {
                if t <= now {
                    out.push(IoCompletion { token, at: t });
                    false
                } else {
                    true
                }
            });
            Ok(())
        }
        fn now(&self) -> Nanos {
            self.now
        }
        fn name(&self) -> &'static str {
            "fixed"
        }
        fn timer_spin(&self) -> Nanos {
            0
        }
    }

    fn constant_profile(read_us: f64, iops: Option<f64>) -> Profile {
        let caps = match iops {
            Some(n) => serde_json::json!({ "iops": n, "bucket_ms": 0 }),
            None => serde_json::Value::Null,
        };
        let v = serde_json::json!({
            "name": "slow",
            "description": "constant",
            "source": "test",
            "read": { "median_us": read_us, "p99_us": read_us },
            "write": { "median_us": read_us, "p99_us": read_us },
            "flush": { "median_us": read_us, "p99_us": read_us },
            "channels": 64,
            "bandwidth_mib_s": 1e6,
            "flush_to_media": false,
            "caps": caps
        });
        Profile::from_json(&v.to_string(), "test.json").unwrap()
    }

    fn read(token: Token) -> IoRequest {
        IoRequest {
            token,
            kind: IoKind::ReadPage { block: token },
        }
    }

    fn run_qd1(dev: &mut dyn Device, n: u64) -> Nanos {
        let mut out = Vec::new();
        for i in 0..n {
            dev.submit(read(i)).unwrap();
            out.clear();
            while out.is_empty() {
                dev.wait(None, SEC, &mut out).unwrap();
            }
            assert_eq!(out[0].token, i);
        }
        dev.now()
    }

    /// Every completion of `reqs`, submitted at once, as (token, time).
    fn completions(dev: &mut dyn Device, reqs: &[IoRequest]) -> Vec<(Token, Nanos)> {
        for &r in reqs {
            dev.submit(r).unwrap();
        }
        let mut out = Vec::new();
        while out.len() < reqs.len() {
            dev.wait(None, SEC, &mut out).unwrap();
        }
        let mut done: Vec<_> = out.iter().map(|c| (c.token, c.at)).collect();
        done.sort();
        done
    }

    #[test]
    fn the_emulator_charges_the_kernels_writeback_as_the_simulator_does() {
        // Under an IOPS cap a contiguous run of pages the kernel writes
        // back costs an I/O per bio, not one per page: 64 pages, then a
        // page elsewhere, then a read.
        let profile = constant_profile(100.0, Some(1000.0));
        let mut reqs: Vec<IoRequest> = (0..64)
            .map(|i| IoRequest {
                token: i,
                kind: IoKind::WritePage {
                    block: 1000 + i,
                    kernel_writeback: true,
                    batch: 0,
                },
            })
            .collect();
        reqs.push(IoRequest {
            token: 64,
            kind: IoKind::WritePage {
                block: 5,
                kernel_writeback: true,
                batch: 0,
            },
        });
        reqs.push(read(65));
        let mut sim = SimDevice::new(DeviceModel::new(&profile, 3));
        let inner = Fixed {
            now: 0,
            lat: US,
            pending: Vec::new(),
        };
        let mut emulated = EmulatedDevice::new(Box::new(inner), &profile, 3);
        let by_sim = completions(&mut sim, &reqs);
        assert_eq!(completions(&mut emulated, &reqs), by_sim);
        // Merged: all 66 are done well before 66 I/Os at 1,000 IOPS.
        assert!(by_sim.iter().all(|&(_, at)| at < 20 * MS), "{by_sim:?}");
    }

    #[test]
    fn a_slower_profile_sets_the_pace() {
        let inner = Fixed {
            now: 0,
            lat: 10 * US,
            pending: Vec::new(),
        };
        let mut dev = EmulatedDevice::new(Box::new(inner), &constant_profile(500.0, None), 1);
        assert_eq!(dev.name(), "fixed emulating slow");
        let end = run_qd1(&mut dev, 100);
        // 100 reads at 500 µs each.
        assert!(end.abs_diff(50 * MS) < 10 * US, "{end}");
        let s = dev.handle().stats();
        assert_eq!(s.read.ios, 100);
        assert_eq!(s.read.late, 0);
        assert!(
            s.summary()
                .contains("slower than the profile for 0.00% of I/Os")
        );
    }

    #[test]
    fn a_faster_profile_is_counted_not_pretended() {
        let inner = Fixed {
            now: 0,
            lat: 300 * US,
            pending: Vec::new(),
        };
        let mut dev = EmulatedDevice::new(Box::new(inner), &constant_profile(50.0, None), 1);
        let end = run_qd1(&mut dev, 100);
        // Delivered when the real disk finished: 300 µs each, not 50.
        assert!(end.abs_diff(30 * MS) < 10 * US, "{end}");
        let s = dev.handle().stats();
        assert_eq!(s.read.late, 100);
        let text = s.summary();
        assert!(text.contains("100.00% of I/Os"), "{text}");
        assert!(text.contains("warning: the local disk is slower"), "{text}");
    }

    #[test]
    fn caps_come_from_the_model() {
        // A 1,000 IOPS cap on a fast disk: 200 reads at QD 8 take ~0.2 s.
        let inner = Fixed {
            now: 0,
            lat: 10 * US,
            pending: Vec::new(),
        };
        let mut dev =
            EmulatedDevice::new(Box::new(inner), &constant_profile(20.0, Some(1000.0)), 1);
        let mut out = Vec::new();
        let mut next = 0;
        for _ in 0..8 {
            dev.submit(read(next)).unwrap();
            next += 1;
        }
        let mut done = 0;
        while done < 200 {
            out.clear();
            dev.wait(None, SEC, &mut out).unwrap();
            for _ in &out {
                done += 1;
                if next < 200 {
                    dev.submit(read(next)).unwrap();
                    next += 1;
                }
            }
        }
        let secs = dev.now() as f64 / 1e9;
        assert!((secs - 0.2).abs() < 0.005, "{secs}");
        assert_eq!(dev.handle().stats().read.late, 0);
    }

    #[test]
    fn wait_honours_the_deadline() {
        let inner = SimDevice::new(DeviceModel::new(&constant_profile(10.0, None), 1));
        let mut dev = EmulatedDevice::new(Box::new(inner), &constant_profile(1000.0, None), 1);
        dev.submit(read(1)).unwrap();
        let mut out = Vec::new();
        dev.wait(Some(300 * US), SEC, &mut out).unwrap();
        assert!(out.is_empty());
        assert_eq!(dev.now(), 300 * US);
        dev.wait(None, SEC, &mut out).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].at, 1000 * US);
    }

    #[test]
    fn probit_inverts_the_normal_cdf() {
        assert!(probit(0.5).abs() < 1e-9);
        assert!((probit(0.99) - crate::device::profile::Z99).abs() < 1e-6);
        assert!((probit(0.01) + crate::device::profile::Z99).abs() < 1e-6);
        assert!((probit(0.001) + 3.090_232).abs() < 1e-5);
    }

    #[test]
    fn ranks_are_mid_ranks_in_a_sliding_window() {
        let mut r = Ranks::default();
        assert_eq!(r.quantile(5), None);
        for i in 0..RANK_WINDOW as u64 + 100 {
            r.push(i);
        }
        assert_eq!(r.sorted.len(), RANK_WINDOW);
        assert_eq!(r.sorted[0], 100);
        let mid = r.quantile(100 + RANK_WINDOW as u64 / 2).unwrap();
        assert!((mid - 0.5).abs() < 0.01, "{mid}");
        assert!(r.quantile(0).unwrap() < 0.001);
    }

    #[test]
    fn a_profile_like_the_local_disk_is_delivered_like_it() {
        // The "local disk" is the model of a profile; emulate that same
        // profile: matched draws neither slow it down nor count it late.
        let p = Profile::from_json(
            include_str!("../../examples/devices/this-vm.json"),
            "this-vm.json",
        )
        .unwrap();
        let inner = SimDevice::new(DeviceModel::new(&p, 1));
        let mut dev = EmulatedDevice::new(Box::new(inner), &p, 2);
        let n = 20_000;
        let end = run_qd1(&mut dev, n);
        let mean_us = end as f64 / n as f64 / 1e3;
        let want = p.qd1_mean_us(Op::Read);
        assert!((mean_us / want - 1.0).abs() < 0.03, "{mean_us} vs {want}");
        let s = dev.handle().stats();
        assert!(s.read.late_share() < 0.02, "{}", s.summary());
    }
}
