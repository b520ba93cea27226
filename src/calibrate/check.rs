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

/// Every probe the model can run: measured against the profile's model.
pub(super) fn model_check(p: &Profile, m: &Measured) -> Vec<Check> {
    let mut v = Vec::new();
    let mut push = |probe: String, measured: f64, model: f64| {
        if measured > 0.0 {
            v.push(Check {
                probe,
                measured,
                model,
            });
        }
    };
    let mean = |l: Option<LatencyUs>| l.map_or(0.0, |l| l.mean);
    let (read_mean, _, _) = microbench::qd1_read_latency(p, 1);
    push("QD1 read, mean µs".into(), mean(m.qd1_read.read), read_mean);
    push(
        "QD1 write, mean µs".into(),
        mean(m.qd1_write.write),
        1e6 / microbench::closed_loop_rate(p, Op::Write, PAGE_BYTES, 1, 1),
    );
    for &(qd, iops) in &m.sweep[1..] {
        push(
            format!("QD{qd} read IOPS"),
            iops,
            microbench::read_iops(p, qd, 1),
        );
    }
    push(
        "write+fdatasync, mean µs".into(),
        mean(m.wal1.pair),
        1e6 / microbench::qd1_flush_rate(p, 1),
    );
    for (bytes, t) in &m.wal_sizes {
        push(
            format!(
                "write+fdatasync of {}, mean µs",
                crate::units::format_memory(*bytes)
            ),
            mean(t.pair),
            microbench::gap_latency(p, true, *bytes, 0.0, 1).0,
        );
    }
    for t in &m.idle {
        push(
            format!("read{}, mean µs", apart(t.gap_us)),
            mean(t.read.read),
            microbench::gap_latency(p, false, PAGE_BYTES, t.gap_us, 1).0,
        );
        push(
            format!("write+fdatasync{}, mean µs", apart(t.gap_us)),
            mean(t.wal.pair),
            microbench::gap_latency(p, true, PAGE_BYTES, t.gap_us, 1).0,
        );
    }
    push(
        format!("{STREAMS} × write+fdatasync /s"),
        m.wal4.ops_per_s,
        microbench::parallel_flush_rate(p, STREAMS, 1, 1),
    );
    push(
        "QD16 write IOPS".into(),
        m.write16.ops_per_s,
        microbench::closed_loop_rate(p, Op::Write, PAGE_BYTES, 16, 1),
    );
    push(
        "QD32 50/50 mix IOPS".into(),
        m.mixed.ops_per_s,
        microbench::mixed_iops(p, PAGE_BYTES, 32, 1),
    );
    let mib = |ops: f64| ops * SEQ_IO_BYTES as f64 / 1_048_576.0;
    push(
        format!("{STREAMS} × 1 MiB read MiB/s"),
        m.seq_read.mib_per_s,
        mib(microbench::closed_loop_rate(
            p,
            Op::Read,
            SEQ_IO_BYTES,
            STREAMS,
            1,
        )),
    );
    push(
        format!("{STREAMS} × 1 MiB write MiB/s"),
        m.seq_write.mib_per_s,
        mib(microbench::closed_loop_rate(
            p,
            Op::Write,
            SEQ_IO_BYTES,
            STREAMS,
            1,
        )),
    );
    v
}
