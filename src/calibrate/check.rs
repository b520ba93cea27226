//! calibrate's check: every probe it ran, measured against the same probe
//! run in the fitted profile's model.

use serde::Serialize;

use crate::core::io::PAGE_BYTES;
use crate::device::microbench;
use crate::device::profile::Op;
use crate::device::profile::Profile;

use super::probe::{Measured, apart};
use super::{LatencyUs, SEQ_IO_BYTES, STREAMS};

/// One probe, measured and run in the profile's model.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Check {
    pub probe: String,
    pub measured: f64,
    pub model: f64,
}

impl Check {
    /// The model's relative error against the measurement.
    pub fn error(&self) -> f64 {
        self.model / self.measured.max(1e-9) - 1.0
    }
}

/// The checks so far: a probe the disk gave no figure for is left out.
struct Checks(Vec<Check>);

impl Checks {
    fn push(&mut self, probe: String, measured: f64, model: f64) {
        if measured > 0.0 {
            self.0.push(Check {
                probe,
                measured,
                model,
            });
        }
    }
}

/// A test's mean latency, 0 if it has none.
fn mean(l: Option<LatencyUs>) -> f64 {
    l.map_or(0.0, |l| l.mean)
}

/// Every probe the model can run: measured against the profile's model.
pub(super) fn model_check(p: &Profile, m: &Measured) -> Vec<Check> {
    let mut v = Checks(Vec::new());
    page_checks(&mut v, p, m);
    wal_checks(&mut v, p, m);
    throughput_checks(&mut v, p, m);
    v.0
}

/// The 8 KiB reads and writes: QD1's latency, the read sweep's IOPS.
fn page_checks(v: &mut Checks, p: &Profile, m: &Measured) {
    let (read_mean, _, _) = microbench::qd1_read_latency(p, 1);
    v.push("QD1 read, mean µs".into(), mean(m.qd1_read.read), read_mean);
    v.push(
        "QD1 write, mean µs".into(),
        mean(m.qd1_write.write),
        1e6 / microbench::closed_loop_rate(p, Op::Write, PAGE_BYTES, 1, 1),
    );
    for &(qd, iops) in &m.sweep[1..] {
        v.push(
            format!("QD{qd} read IOPS"),
            iops,
            microbench::read_iops(p, qd, 1),
        );
    }
}

/// WAL write + fdatasync: one stream, of each size, and after each gap
/// (with the read after the same gap).
fn wal_checks(v: &mut Checks, p: &Profile, m: &Measured) {
    v.push(
        "write+fdatasync, mean µs".into(),
        mean(m.wal1.pair),
        1e6 / microbench::qd1_flush_rate(p, 1),
    );
    for (bytes, t) in &m.wal_sizes {
        v.push(
            format!(
                "write+fdatasync of {}, mean µs",
                crate::units::format_memory(*bytes)
            ),
            mean(t.pair),
            microbench::gap_latency(p, true, *bytes, 0.0, 1).0,
        );
    }
    for t in &m.idle {
        v.push(
            format!("read{}, mean µs", apart(t.gap_us)),
            mean(t.read.read),
            microbench::gap_latency(p, false, PAGE_BYTES, t.gap_us, 1).0,
        );
        v.push(
            format!("write+fdatasync{}, mean µs", apart(t.gap_us)),
            mean(t.wal.pair),
            microbench::gap_latency(p, true, PAGE_BYTES, t.gap_us, 1).0,
        );
    }
}

/// The rates at depth: parallel flushes, QD16 writes, the mix, and the
/// sequential streams.
fn throughput_checks(v: &mut Checks, p: &Profile, m: &Measured) {
    v.push(
        format!("{STREAMS} × write+fdatasync /s"),
        m.wal4.ops_per_s,
        microbench::parallel_flush_rate(p, STREAMS, 1, 1),
    );
    v.push(
        "QD16 write IOPS".into(),
        m.write16.ops_per_s,
        microbench::closed_loop_rate(p, Op::Write, PAGE_BYTES, 16, 1),
    );
    v.push(
        "QD32 50/50 mix IOPS".into(),
        m.mixed.ops_per_s,
        microbench::mixed_iops(p, PAGE_BYTES, 32, 1),
    );
    let mib = |ops: f64| ops * SEQ_IO_BYTES as f64 / 1_048_576.0;
    for (op, measured, name) in [
        (Op::Read, m.seq_read.mib_per_s, "read"),
        (Op::Write, m.seq_write.mib_per_s, "write"),
    ] {
        v.push(
            format!("{STREAMS} × 1 MiB {name} MiB/s"),
            measured,
            mib(microbench::closed_loop_rate(
                p,
                op,
                SEQ_IO_BYTES,
                STREAMS,
                1,
            )),
        );
    }
}
