//! A workload's CPU from the server it runs on today: the migration
//! workflow. The source server's measured CPU per transaction (host CPU
//! from /proc, or a console's CPU utilisation times its vCPUs) is split
//! by mechanism: its page reads from the device and its KiB written (data
//! pages and WAL) cost the I/O path's figures (`instance::io_cpu`), and
//! the rest is its statements' CPU. The statements' figures are scaled to
//! that rest, so the file reproduces the source's total, and the file's
//! figures are in EPYC 9454P time: the target's `--cpu-speed` or its
//! preset's CPU class converts them.

use anyhow::{Result, bail};
use serde::Serialize;

use super::WorkloadSpec;
use crate::device::instance::io_cpu;

/// What the source server spent and did per transaction.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ServerCpu {
    /// Host CPU per transaction, µs of the source's vCPU time.
    pub cpu_us_per_tx: f64,
    /// The source's per-core speed relative to the EPYC 9454P.
    pub speed: f64,
    /// Data pages read from the device per transaction.
    pub reads_per_tx: f64,
    /// Data pages written per transaction (backends, bgwriter, checkpointer).
    pub pages_written_per_tx: f64,
    /// WAL bytes per transaction.
    pub wal_bytes_per_tx: f64,
}

/// The split of the source's CPU per transaction, in EPYC 9454P µs.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Split {
    pub total_us: f64,
    pub reads_us: f64,
    pub writes_us: f64,
    pub statements_us: f64,
    /// The factor the workload's statement CPU was scaled by.
    pub statement_scale: f64,
}

/// The workload's statement CPU per transaction, µs, over its mix: every
/// statement's figure with the client's share.
fn statement_cpu_per_tx(spec: &WorkloadSpec) -> f64 {
    let weight: f64 = spec.transactions.iter().map(|t| t.weight).sum();
    spec.transactions
        .iter()
        .map(|t| {
            let per: f64 = t
                .statements
                .iter()
                .map(|s| {
                    s.cpu_us.unwrap_or(spec.cpu_us_per_statement) + spec.client_cpu_us_per_statement
                })
                .sum();
            per * t.weight / weight
        })
        .sum()
}

/// Split `m` and scale `spec`'s statement CPU to its rest. Errors when the
/// figures are not positive numbers or the I/O alone costs more than the
/// measured total.
pub fn apply(spec: &WorkloadSpec, m: &ServerCpu, source: &str) -> Result<(WorkloadSpec, Split)> {
    m.check()?;
    let split = m.split(spec)?;
    let mut out = scaled(spec, split.statement_scale);
    note_sources(&mut out, spec, m, &split, source);
    Ok((out, split))
}

impl ServerCpu {
    /// Refuses figures that are not numbers, a CPU or speed that is not
    /// positive and a count that is negative.
    fn check(&self) -> Result<()> {
        for (what, v) in [
            ("CPU per transaction", self.cpu_us_per_tx),
            ("CPU speed", self.speed),
        ] {
            if !(v.is_finite() && v > 0.0) {
                bail!("{what}: must be a positive number, got {v}");
            }
        }
        for (what, v) in [
            ("reads per transaction", self.reads_per_tx),
            ("pages written per transaction", self.pages_written_per_tx),
            ("WAL bytes per transaction", self.wal_bytes_per_tx),
        ] {
            if !(v.is_finite() && v >= 0.0) {
                bail!("{what}: must be a non-negative number, got {v}");
            }
        }
        Ok(())
    }

    /// KiB written per transaction: data pages and WAL.
    fn kib_written_per_tx(&self) -> f64 {
        self.pages_written_per_tx * 8.0 + self.wal_bytes_per_tx / 1024.0
    }

    /// The CPU per transaction split by mechanism, and the factor that
    /// scales `spec`'s statement CPU to the statements' share.
    fn split(&self, spec: &WorkloadSpec) -> Result<Split> {
        // The source's µs are 1/speed of the 9454P's.
        let total_us = self.cpu_us_per_tx * self.speed;
        let reads_us = self.reads_per_tx * io_cpu::READ_US;
        let writes_us = self.kib_written_per_tx() * io_cpu::KIB_WRITTEN_US;
        let statements_us = total_us - reads_us - writes_us;
        if statements_us <= 0.0 {
            bail!(
                "the I/O alone costs {:.0} us a transaction at the source's speed, more than the {:.0} measured: \
                 check the reads, writes and WAL per transaction, and the source's CPU speed",
                (reads_us + writes_us) / self.speed,
                self.cpu_us_per_tx
            );
        }
        let was = statement_cpu_per_tx(spec);
        if was <= 0.0 {
            bail!("{}: its statements have no CPU to scale", spec.name);
        }
        Ok(Split {
            total_us,
            reads_us,
            writes_us,
            statements_us,
            statement_scale: statements_us / was,
        })
    }
}

/// `spec` with its statement and client CPU scaled by `k` (to 0.1 µs) and
/// the I/O path's reclaim figures.
fn scaled(spec: &WorkloadSpec, k: f64) -> WorkloadSpec {
    let mut out = spec.clone();
    let r = |v: f64| (v * k * 10.0).round() / 10.0;
    out.cpu_us_per_statement = r(spec.cpu_us_per_statement);
    // EPYC 9454P time now, whose probe figure nobody has measured.
    out.cpu_probe_us = None;
    out.sources.remove("cpu_probe_us");
    out.client_cpu_us_per_statement = r(spec.client_cpu_us_per_statement);
    for t in &mut out.transactions {
        for s in &mut t.statements {
            if let Some(c) = s.cpu_us {
                s.cpu_us = Some(r(c));
            }
        }
    }
    out.reclaim_cpu_us_per_read = io_cpu::READ_US;
    out.reclaim_cpu_us_per_kib_written = io_cpu::KIB_WRITTEN_US;
    out
}

/// The sources of the figures `apply` changed in `out`: how the split of
/// `m` (from `source`) scaled `spec`'s.
fn note_sources(
    out: &mut WorkloadSpec,
    spec: &WorkloadSpec,
    m: &ServerCpu,
    split: &Split,
    source: &str,
) {
    let k = split.statement_scale;
    let how = format!(
        "from the source server: {source}; {:.0} us of its CPU a transaction at {:.2}x the EPYC 9454P's speed = {:.0} us of 9454P time, \
         less {:.2} device reads x {} us and {:.1} KiB written (data pages and WAL) x {} us: {:.0} us of statements, \
         the workload's {:.1} us scaled by {:.3}",
        m.cpu_us_per_tx,
        m.speed,
        split.total_us,
        m.reads_per_tx,
        io_cpu::READ_US,
        m.kib_written_per_tx(),
        io_cpu::KIB_WRITTEN_US,
        split.statements_us,
        statement_cpu_per_tx(spec),
        k
    );
    out.sources.insert("cpu_us_per_statement".into(), how);
    if spec.client_cpu_us_per_statement > 0.0 {
        // Scaled with the server's share, so no longer the figure its source measured.
        out.sources.insert(
            "client_cpu_us_per_statement".into(),
            format!(
                "the workload's {} us scaled by {k:.3} with the statements' CPU (see cpu_us_per_statement)",
                spec.client_cpu_us_per_statement
            ),
        );
    }
    out.sources
        .insert("reclaim_cpu_us_per_read".into(), io_cpu::SOURCE.into());
    out.sources.insert(
        "reclaim_cpu_us_per_kib_written".into(),
        io_cpu::SOURCE.into(),
    );
    out.sources.insert(
        "cpu_speed".into(),
        "every CPU figure here is EPYC 9454P time: model with the target's --cpu-speed relative to it, or its --instance preset's CPU class".into(),
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::builtin;

    fn source(cpu: f64) -> ServerCpu {
        ServerCpu {
            cpu_us_per_tx: cpu,
            speed: 0.8,
            reads_per_tx: 1.5,
            pages_written_per_tx: 1.6,
            wal_bytes_per_tx: 15_700.0,
        }
    }

    #[test]
    fn the_scaled_file_reproduces_the_measured_total() {
        let spec = builtin("large-updates").unwrap();
        let (out, split) = apply(&spec, &source(600.0), "test").unwrap();
        // Statements + I/O at the 9454P = the source's total at its speed.
        let stmts = statement_cpu_per_tx(&out);
        let io = split.reads_us + split.writes_us;
        assert!((stmts + io - 600.0 * 0.8).abs() < 1.0, "{stmts} + {io}");
        assert!((split.statement_scale - stmts / statement_cpu_per_tx(&spec)).abs() < 0.01);
        assert_eq!(out.reclaim_cpu_us_per_read, io_cpu::READ_US);
        assert!(out.sources["cpu_us_per_statement"].contains("test"));
    }

    #[test]
    fn a_total_below_the_io_alone_is_refused() {
        let spec = builtin("large-updates").unwrap();
        let e = apply(&spec, &source(100.0), "test")
            .unwrap_err()
            .to_string();
        assert!(e.contains("the I/O alone"), "{e}");
        let mut bad = source(600.0);
        bad.speed = f64::NAN;
        assert!(apply(&spec, &bad, "test").is_err());
    }
}
