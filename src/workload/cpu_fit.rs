//! A workload's CPU figures fitted to real pgbench runs on the host that
//! will run pgiosim: CPU per statement (server and pgbench client), per
//! page read and written, its growth with the backends, and the round trip
//! a statement. `scripts/pgbench-compare` measures the runs (CPU of the
//! server's and pgbench's cgroups, pg_stat_database, pg_stat_wal);
//! `pgiosim workload fit-cpu` turns them into a workload file with these
//! figures and their sources.
//!
//! The model's CPU of a transaction is `statements × cpu_us_per_statement +
//! reads × cpu_us_per_read + writes × cpu_us_per_write`, grown by
//! `(1 + n × growth)` with n backends above `cpu_growth_above_backends`.
//! Each figure below solves that equation for the measured runs.

use serde::{Deserialize, Serialize};

use super::WorkloadSpec;

/// One pgbench run's CPU and page I/O per transaction.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct CpuPoint {
    /// pgbench -c.
    pub clients: u32,
    /// postgres + pgbench CPU (their cgroups) per transaction, µs.
    pub cpu_us_per_tx: f64,
    /// pgbench's part of it, µs.
    pub client_cpu_us_per_tx: f64,
    /// The cores' time per transaction, µs: `cpu_us_per_tx` scaled by
    /// cores / busy cores when the run saturated the cores (pgiosim's
    /// scheduler never idles a core with work queued), else the same.
    pub core_us_per_tx: f64,
    /// pg_stat_database blks_read per transaction.
    pub blocks_read_per_tx: f64,
    /// Data pages written per transaction (backends and bgwriter).
    pub blocks_written_per_tx: f64,
    /// The host's cores, and how many were busy on average.
    #[serde(default)]
    pub cores: u32,
    #[serde(default)]
    pub busy_cores: f64,
    /// Whether the page cache was full while the run was measured (its
    /// memory cgroup reached its limit: `memory.failcnt` grew). The model
    /// then charges the full cache's figures (`ReclaimCpu`) for device
    /// reads and for every KiB written, so the fit takes them out first.
    #[serde(default)]
    pub page_cache_full: bool,
    /// Reads the device served per transaction (the server's cgroup's
    /// blkio or io.stat read count); with `page_cache_full`.
    #[serde(default)]
    pub device_reads_per_tx: f64,
    /// WAL written per transaction, KiB (pg_stat_wal's wal_bytes); with
    /// `page_cache_full`.
    #[serde(default)]
    pub wal_kib_per_tx: f64,
}

/// The page I/O CPU the model charges at one measured point: the
/// per-read and per-write figures on what they apply to, and, when the
/// page cache was full, the reclaim figures in place of them on device
/// reads and data writes and on top of the WAL (as `Database` charges
/// them: `device_read_cpu`, `page_write_cpu`, a record's `wal_cpu`).
#[derive(Debug, Clone, Copy, PartialEq)]
struct IoCharge {
    /// Page I/Os charged at `cpu_us_per_read` or `cpu_us_per_write`.
    reads: f64,
    writes: f64,
    /// The full cache's CPU, µs a transaction; 0 when it was not full.
    full_cache_us: f64,
}

/// The reclaim figures the model charges a full page cache with, µs: the
/// workload file's own, else the public ones (`io_cpu`), as plan.rs picks.
fn reclaim_us(spec: &WorkloadSpec) -> (f64, f64) {
    if spec.reclaim_cpu_us_per_read > 0.0 || spec.reclaim_cpu_us_per_kib_written > 0.0 {
        (
            spec.reclaim_cpu_us_per_read,
            spec.reclaim_cpu_us_per_kib_written,
        )
    } else {
        use crate::device::instance::io_cpu;
        (io_cpu::READ_US, io_cpu::KIB_WRITTEN_US)
    }
}

impl IoCharge {
    fn of(p: &CpuPoint, reclaim: (f64, f64)) -> IoCharge {
        if !p.page_cache_full {
            return IoCharge {
                reads: p.blocks_read_per_tx,
                writes: p.blocks_written_per_tx,
                full_cache_us: 0.0,
            };
        }
        let device = p.device_reads_per_tx.clamp(0.0, p.blocks_read_per_tx);
        let (read_us, kib_us) = reclaim;
        let page_kib = (crate::core::io::PAGE_BYTES / 1024) as f64;
        IoCharge {
            reads: p.blocks_read_per_tx - device,
            writes: 0.0,
            full_cache_us: device * read_us
                + (p.blocks_written_per_tx * page_kib + p.wal_kib_per_tx) * kib_us,
        }
    }

    fn cpu_us(&self, per_read: f64, per_write: f64) -> f64 {
        self.reads * per_read + self.writes * per_write + self.full_cache_us
    }

    fn ios(&self) -> f64 {
        self.reads + self.writes
    }
}

/// A one-client run's latency and its I/O waits, per transaction, µs.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct OneClient {
    pub latency_us: f64,
    /// pg_stat_wal's wal_sync_time per transaction.
    pub wal_sync_us_per_tx: f64,
    /// pg_stat_database's blk_read_time per transaction.
    pub read_us_per_tx: f64,
}

/// The runs at one scale: `low` clients (its fields at the top level, as
/// scripts/pgbench-compare writes them), `high` clients, and one client.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct ScaleRuns {
    pub scale: u64,
    /// Length of each run, s.
    pub duration_s: f64,
    #[serde(flatten)]
    pub low: CpuPoint,
    pub high: CpuPoint,
    #[serde(default)]
    pub one_client: Option<OneClient>,
}

/// What `fit-cpu` reads: the runs at one or two scales, smallest first; the
/// first must have its one-client run.
#[derive(Debug, Clone, Deserialize, Serialize, PartialEq)]
pub struct CpuMeasurements {
    pub runs: Vec<ScaleRuns>,
}

/// How the backends' CPU grows above `above_backends`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Growth {
    pub statement: f64,
    pub io: f64,
    pub above_backends: u32,
    pub how: String,
}

/// The fitted figures, and the workload file's figures they replace.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct CpuFit {
    pub cpu_us_per_statement: f64,
    pub client_cpu_us_per_statement: f64,
    pub cpu_us_per_read: f64,
    pub cpu_us_per_write: f64,
    /// Whether the per-I/O figure was fitted across two scales (else the
    /// workload file's is kept).
    pub per_io_fitted: bool,
    pub round_trip_us_per_statement: f64,
    pub cpu_growth: Growth,
    /// The smallest scale's CPU and the cores' time per transaction, µs.
    pub cpu_us_per_tx: f64,
    pub core_us_per_tx: f64,
    /// The workload file's figures before the fit.
    pub was: Was,
    /// Each figure's source, as the workload file's `sources` gets it.
    #[serde(skip)]
    pub sources: Vec<(&'static str, String)>,
}

/// The workload file's own figures, before the fit.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Was {
    pub cpu_us_per_statement: f64,
    pub cpu_us_per_read: f64,
    pub cpu_us_per_write: f64,
    pub round_trip_us_per_statement: f64,
}

/// Half a page I/O per transaction between the scales is the least lever
/// that gives a per-I/O cost better than the workload's.
const MIN_IO_LEVER: f64 = 0.5;

/// The backends' part of a run's cores' time per transaction.
fn backend_us(p: &CpuPoint) -> f64 {
    let client_part = if p.cpu_us_per_tx > 0.0 {
        p.client_cpu_us_per_tx / p.cpu_us_per_tx
    } else {
        0.0
    };
    p.core_us_per_tx * (1.0 - client_part)
}

/// Fit `spec`'s CPU figures to `m`. Errors say what the measurements lack.
pub fn fit(spec: &WorkloadSpec, m: &CpuMeasurements) -> Result<CpuFit, String> {
    let statements = spec
        .transactions
        .first()
        .map(|t| t.statements.len())
        .filter(|n| *n > 0)
        .ok_or("the workload has no statements")? as f64;
    let (lo, hi, one) = checked_runs(m)?;
    let was = Was {
        cpu_us_per_statement: spec.cpu_us_per_statement,
        cpu_us_per_read: spec.cpu_us_per_read,
        cpu_us_per_write: spec.cpu_us_per_write,
        round_trip_us_per_statement: spec.round_trip_us_per_statement,
    };
    let reclaim = reclaim_us(spec);
    let mut fitting = Fitting {
        lo,
        statements,
        reclaim,
        run: format!(
            "pgbench -b {} -c {} -j 2 -T {}",
            spec.name, lo.low.clients, lo.duration_s
        ),
        was: &was,
        sources: Vec::new(),
    };
    let (per_read, per_write, per_io_fitted) = fitting.per_io(hi);
    let (per_stmt, client_stmt) = fitting.per_statement(per_read, per_write);
    let growth = fit_growth(
        &m.runs,
        statements,
        per_stmt,
        (per_read, per_write),
        reclaim,
    );
    fitting.growth_sources(&growth);
    let rt = fitting.round_trip(one);
    let sources = fitting.sources;
    let l = &lo.low;
    Ok(CpuFit {
        cpu_us_per_statement: per_stmt,
        client_cpu_us_per_statement: client_stmt,
        cpu_us_per_read: per_read,
        cpu_us_per_write: per_write,
        per_io_fitted,
        round_trip_us_per_statement: rt,
        cpu_growth: growth,
        cpu_us_per_tx: l.cpu_us_per_tx,
        core_us_per_tx: l.core_us_per_tx,
        was,
        sources,
    })
}

/// The smallest scale's runs, the largest's if there are two, and the
/// smallest's one-client run; an error for figures the fit cannot use.
fn checked_runs(
    m: &CpuMeasurements,
) -> Result<(&ScaleRuns, Option<&ScaleRuns>, &OneClient), String> {
    let lo = m.runs.first().ok_or("no runs: \"runs\" is empty")?;
    if m.runs.len() > 2 {
        return Err(format!(
            "{} runs: give one scale or two (the smallest and the largest)",
            m.runs.len()
        ));
    }
    let hi = m.runs.get(1);
    let one = lo
        .one_client
        .as_ref()
        .ok_or_else(|| format!("the scale {} runs have no \"one_client\" run", lo.scale))?;
    for r in &m.runs {
        for p in [&r.low, &r.high] {
            let figures = [
                p.cpu_us_per_tx,
                p.client_cpu_us_per_tx,
                p.core_us_per_tx,
                p.blocks_read_per_tx,
                p.blocks_written_per_tx,
            ];
            if figures.iter().any(|x| !x.is_finite() || *x < 0.0) || p.core_us_per_tx <= 0.0 {
                return Err(format!(
                    "scale {} with {} clients: CPU and block figures must be finite, not negative, and the cores' time more than 0",
                    r.scale, p.clients
                ));
            }
        }
        if r.high.clients <= r.low.clients {
            return Err(format!(
                "scale {}: \"high\" has {} clients, not more than the {} of the run it is compared with",
                r.scale, r.high.clients, r.low.clients
            ));
        }
    }
    Ok((lo, hi, one))
}

/// One fit's inputs, and the sources of the figures fitted so far.
struct Fitting<'a> {
    /// The smallest scale's runs.
    lo: &'a ScaleRuns,
    statements: f64,
    /// The full page cache's figures, µs a device read and a KiB written.
    reclaim: (f64, f64),
    /// The low-client pgbench command, for the sources.
    run: String,
    was: &'a Was,
    sources: Vec<(&'static str, String)>,
}

impl Fitting<'_> {
    /// The page I/O CPU: the growth of the cores' time between the scales
    /// over the growth of their page I/Os, read or written alike; the
    /// workload file's figures without a second scale whose I/O differs enough.
    fn per_io(&mut self, hi: Option<&ScaleRuns>) -> (f64, f64, bool) {
        let (lo, was, run) = (self.lo, self.was, &self.run);
        let Some(h) = hi else {
            return (was.cpu_us_per_read, was.cpu_us_per_write, false);
        };
        let (cl, ch) = (
            IoCharge::of(&lo.low, self.reclaim),
            IoCharge::of(&h.low, self.reclaim),
        );
        if ch.ios() - cl.ios() < MIN_IO_LEVER {
            return (was.cpu_us_per_read, was.cpu_us_per_write, false);
        }
        let per_io = ((h.low.core_us_per_tx - ch.full_cache_us)
            - (lo.low.core_us_per_tx - cl.full_cache_us))
            / (ch.ios() - cl.ios());
        let per_io = per_io.max(0.0);
        let src = format!(
            "measured by pgiosim workload fit-cpu from scripts/pgbench-compare's runs on this host, {run} at two scales: the growth of the cores' time per transaction between scale {} ({:.0} us, {:.2} page I/Os) and scale {} ({:.0} us, {:.2} page I/Os), per page I/O, read or written alike, less a full page cache's reclaim CPU where the runs had one (the workload file says {} per read and {} per write)",
            lo.scale,
            lo.low.core_us_per_tx - cl.full_cache_us,
            cl.ios(),
            h.scale,
            h.low.core_us_per_tx - ch.full_cache_us,
            ch.ios(),
            was.cpu_us_per_read,
            was.cpu_us_per_write
        );
        self.sources.push(("cpu_us_per_read", src.clone()));
        self.sources.push(("cpu_us_per_write", src));
        (per_io, per_io, true)
    }

    /// The statements' CPU and pgbench's: pgbench's share of the cores' time
    /// is its threads'; the rest, less the page I/O CPU, is the statements'.
    fn per_statement(&mut self, per_read: f64, per_write: f64) -> (f64, f64) {
        let (lo, was, run, statements) = (self.lo, self.was, &self.run, self.statements);
        let l = &lo.low;
        let client_part = if l.cpu_us_per_tx > 0.0 {
            l.client_cpu_us_per_tx / l.cpu_us_per_tx
        } else {
            0.0
        };
        let client_stmt = l.core_us_per_tx * client_part / statements;
        let charge = IoCharge::of(l, self.reclaim);
        let per_stmt = ((l.core_us_per_tx * (1.0 - client_part)
            - charge.cpu_us(per_read, per_write))
            / statements)
            .max(1.0);
        let full = if l.page_cache_full {
            format!(
                ", and the full page cache's {:.0} us ({:.2} device reads at {:.1} us, {:.2} data pages and {:.1} KiB of WAL written at {:.2} us a KiB: what the model charges for them)",
                charge.full_cache_us,
                l.device_reads_per_tx,
                self.reclaim.0,
                l.blocks_written_per_tx,
                l.wal_kib_per_tx,
                self.reclaim.1
            )
        } else {
            String::new()
        };
        self.sources.push((
            "cpu_us_per_statement",
            format!(
                "measured by pgiosim workload fit-cpu from scripts/pgbench-compare's runs on this host: {run} at scale {} used {:.0} us of postgres + pgbench CPU per transaction while {:.2} of {} cores were busy, so {:.0} us of the cores' time; postgres's {:.0}% of it, less {:.2} blocks read at {per_read:.1} us and {:.2} written at {per_write:.1} us{full}, over {statements} statements (the workload file says {})",
                lo.scale,
                l.cpu_us_per_tx,
                l.busy_cores,
                l.cores,
                l.core_us_per_tx,
                100.0 * (1.0 - client_part),
                charge.reads,
                charge.writes,
                was.cpu_us_per_statement
            ),
        ));
        self.sources.push((
            "client_cpu_us_per_statement",
            format!(
                "measured by pgiosim workload fit-cpu from scripts/pgbench-compare's runs on this host: in the same run pgbench's threads spent {:.0}% of the CPU ({:.0} us per transaction), {client_stmt:.1} us of the cores' time per statement",
                100.0 * client_part,
                l.client_cpu_us_per_tx
            ),
        ));
        (per_stmt, client_stmt)
    }

    /// The growth figures' one source.
    fn growth_sources(&mut self, growth: &Growth) {
        let (low, high) = (self.lo.low.clients, self.lo.high.clients);
        let growth_src = format!(
            "measured by pgiosim workload fit-cpu from scripts/pgbench-compare's runs on this host: the backends' CPU per transaction with {high} clients against {low} ({})",
            growth.how
        );
        for k in [
            "cpu_growth_per_backend",
            "io_cpu_growth_per_backend",
            "cpu_growth_above_backends",
        ] {
            self.sources.push((k, growth_src.clone()));
        }
    }

    /// The round trip: the one-client latency less its CPU and I/O waits.
    fn round_trip(&mut self, one: &OneClient) -> f64 {
        let (lo, was, statements) = (self.lo, self.was, self.statements);
        let l = &lo.low;
        let rt =
            ((one.latency_us - l.core_us_per_tx - one.wal_sync_us_per_tx - one.read_us_per_tx)
                / statements)
                .max(1.0);
        self.sources.push((
            "round_trip_us_per_statement",
            format!(
                "measured by pgiosim workload fit-cpu from scripts/pgbench-compare's runs on this host: with 1 client at scale {} a transaction took {:.0} us, of which {:.0} us of the cores' time (as above), {:.0} us WAL sync (pg_stat_wal) and {:.0} us data-file reads (blk_read_time): the rest over {statements} statements (the workload file says {})",
                lo.scale,
                one.latency_us,
                l.core_us_per_tx,
                one.wal_sync_us_per_tx,
                one.read_us_per_tx,
                was.round_trip_us_per_statement
            ),
        ));
        rt
    }
}

/// How much a backend's CPU grows per backend from the low to the high
/// client count, as pgiosim models it (`CpuGrowth`): with n backends above
/// the low count, statement CPU × (1 + n g_s) and page I/O CPU ×
/// (1 + n g_i). Each scale gives one equation, the backends' time at the
/// high count less what the base figures give:
/// `excess = n (g_s × statement CPU + g_i × page I/O CPU)`. Two scales
/// (whose page I/Os differ) give g_s and g_i; one, or a negative solution
/// (noise), gives one common g. Growth is never negative.
fn fit_growth(
    runs: &[ScaleRuns],
    statements: f64,
    per_stmt: f64,
    (per_read, per_write): (f64, f64),
    reclaim: (f64, f64),
) -> Growth {
    let low = runs[0].low.clients;
    let n = f64::from(runs[0].high.clients - low);
    // (statement µs, page I/O µs, excess µs) at the high count, per scale.
    let rows: Vec<(f64, f64, f64)> = runs
        .iter()
        .map(|r| {
            let h = &r.high;
            let st = statements * per_stmt;
            let io = IoCharge::of(h, reclaim).cpu_us(per_read, per_write);
            (st, io, backend_us(h) - st - io)
        })
        .collect();
    let mut solved = None;
    if let [(s1, i1, r1), (s2, i2, r2)] = rows[..] {
        let (a1, b1, a2, b2) = (n * s1, n * i1, n * s2, n * i2);
        let det = a1 * b2 - a2 * b1;
        // The page I/O CPU must differ between the scales by more than a
        // tenth of the statements' for the two to be told apart.
        if det.abs() > 0.1 * (a1 * a2).abs() {
            let (gs, gi) = ((r1 * b2 - r2 * b1) / det, (a1 * r2 - a2 * r1) / det);
            if gs >= 0.0 && gi >= 0.0 {
                solved = Some((gs, gi));
            }
        }
    }
    let per_scale = runs
        .iter()
        .map(|r| {
            format!(
                "scale {}: {:.0} us with {}, {:.0} with {}",
                r.scale,
                backend_us(&r.low),
                r.low.clients,
                backend_us(&r.high),
                r.high.clients
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    let (statement, io, how) = match solved {
        Some((gs, gi)) => (gs, gi, "statement and page I/O CPU fitted across scales"),
        None => {
            let total: f64 = rows.iter().map(|(s, i, _)| n * (s + i)).sum();
            let excess: f64 = rows.iter().map(|r| r.2).sum();
            let g = if total > 0.0 {
                (excess / total).max(0.0)
            } else {
                0.0
            };
            (g, g, "one growth for statement and page I/O CPU")
        }
    };
    Growth {
        statement,
        io,
        above_backends: low,
        how: format!("{per_scale}; {how}"),
    }
}

/// `spec` with the fitted figures and their sources (rounded as a person
/// would write them: 0.1 µs, growth to 5 decimals).
pub fn apply(spec: &WorkloadSpec, f: &CpuFit) -> WorkloadSpec {
    let r1 = |x: f64| (x * 10.0).round() / 10.0;
    let r5 = |x: f64| (x * 1e5).round() / 1e5;
    let mut s = spec.clone();
    s.cpu_us_per_statement = r1(f.cpu_us_per_statement);
    s.client_cpu_us_per_statement = r1(f.client_cpu_us_per_statement);
    s.cpu_us_per_read = r1(f.cpu_us_per_read);
    s.cpu_us_per_write = r1(f.cpu_us_per_write);
    s.round_trip_us_per_statement = r1(f.round_trip_us_per_statement);
    s.cpu_growth_per_backend = r5(f.cpu_growth.statement);
    s.io_cpu_growth_per_backend = r5(f.cpu_growth.io);
    s.cpu_growth_above_backends = f.cpu_growth.above_backends;
    // The figures are the measuring host's own: no probe scales them there.
    s.cpu_probe_us = None;
    for (k, v) in &f.sources {
        s.sources.insert((*k).to_string(), v.clone());
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// pgbench's CPU per transaction, the same at every scale.
    const CLIENT_US: f64 = 70.0;

    fn point(clients: u32, core: f64, reads: f64, writes: f64) -> CpuPoint {
        CpuPoint {
            clients,
            cpu_us_per_tx: core,
            client_cpu_us_per_tx: CLIENT_US,
            core_us_per_tx: core,
            blocks_read_per_tx: reads,
            blocks_written_per_tx: writes,
            cores: 2,
            busy_cores: 1.9,
            page_cache_full: false,
            device_reads_per_tx: 0.0,
            wal_kib_per_tx: 0.0,
        }
    }

    /// Runs made by the model's own equation from known figures: the fit
    /// must give those figures back.
    fn synthetic(stmt: f64, per_io: f64, gs: f64, gi: f64) -> CpuMeasurements {
        let statements = 7.0;
        let tx = |reads: f64, writes: f64, n: f64| {
            statements * stmt * (1.0 + n * gs)
                + (reads + writes) * per_io * (1.0 + n * gi)
                + CLIENT_US
        };
        let run = |scale: u64, reads: f64, writes: f64| ScaleRuns {
            scale,
            duration_s: 10.0,
            low: point(8, tx(reads, writes, 0.0), reads, writes),
            high: point(32, tx(reads, writes, 24.0), reads, writes),
            one_client: Some(OneClient {
                latency_us: tx(reads, writes, 0.0) + 7.0 * 20.0 + 100.0 + 50.0,
                wal_sync_us_per_tx: 100.0,
                read_us_per_tx: 50.0,
            }),
        };
        CpuMeasurements {
            runs: vec![run(10, 0.3, 0.2), run(100, 1.7, 1.4)],
        }
    }

    #[test]
    fn the_fit_gives_back_the_figures_that_made_the_runs() {
        let spec = crate::workload::builtin("tpcb-like").unwrap();
        let f = fit(&spec, &synthetic(40.0, 17.5, 0.004, 0.01)).unwrap();
        assert!((f.cpu_us_per_statement - 40.0).abs() < 1e-6, "{f:?}");
        assert!((f.cpu_us_per_read - 17.5).abs() < 1e-6 && f.per_io_fitted);
        assert!((f.cpu_growth.statement - 0.004).abs() < 1e-9, "{f:?}");
        assert!((f.cpu_growth.io - 0.01).abs() < 1e-9, "{f:?}");
        assert_eq!(f.cpu_growth.above_backends, 8);
        assert!((f.round_trip_us_per_statement - 20.0).abs() < 1e-6, "{f:?}");
        // pgbench's part of the cores' time, over 7 statements.
        assert!((f.client_cpu_us_per_statement - CLIENT_US / 7.0).abs() < 1e-9);
    }

    /// Runs whose page cache was full cost what the model charges then:
    /// the reclaim figures on device reads, data writes and WAL, on top of
    /// the statements'. The fit gives back the statements' CPU, so that a
    /// model of the measured run spends what the run spent.
    #[test]
    fn a_full_page_cache_is_taken_out_as_the_model_charges_it() {
        let spec = crate::workload::builtin("tpcb-like").unwrap();
        let (read_us, kib_us) = reclaim_us(&spec);
        let (stmt, per_read) = (40.0, spec.cpu_us_per_read);
        let (reads, device, writes, wal_kib) = (1.7, 1.1, 1.5, 3.0);
        let full = device * read_us + (writes * 8.0 + wal_kib) * kib_us;
        let core = 7.0 * stmt + (reads - device) * per_read + full + CLIENT_US;
        let mut p = point(8, core, reads, writes);
        (p.page_cache_full, p.device_reads_per_tx, p.wal_kib_per_tx) = (true, device, wal_kib);
        let mut high = p.clone();
        high.clients = 32;
        let m = CpuMeasurements {
            runs: vec![ScaleRuns {
                scale: 100,
                duration_s: 10.0,
                low: p.clone(),
                high,
                one_client: Some(OneClient {
                    latency_us: core + 200.0,
                    wal_sync_us_per_tx: 100.0,
                    read_us_per_tx: 50.0,
                }),
            }],
        };
        let f = fit(&spec, &m).unwrap();
        assert!((f.cpu_us_per_statement - stmt).abs() < 1e-6, "{f:?}");
        assert_eq!(f.cpu_growth.statement, 0.0);
        assert!(
            f.sources
                .iter()
                .any(|(k, v)| *k == "cpu_us_per_statement" && v.contains("full page cache"))
        );
        // Without the flag the same run is all statements and page I/O.
        p.page_cache_full = false;
        let mut m2 = m.clone();
        m2.runs[0].low = p;
        let f2 = fit(&spec, &m2).unwrap();
        assert!(f2.cpu_us_per_statement > stmt + 20.0, "{f2:?}");
    }

    #[test]
    fn one_scale_keeps_the_files_io_cpu_and_fits_one_growth() {
        let spec = crate::workload::builtin("tpcb-like").unwrap();
        let mut m = synthetic(40.0, spec.cpu_us_per_read, 0.005, 0.005);
        m.runs.truncate(1);
        let f = fit(&spec, &m).unwrap();
        assert!(!f.per_io_fitted);
        assert_eq!(f.cpu_us_per_read, spec.cpu_us_per_read);
        assert!((f.cpu_growth.statement - 0.005).abs() < 1e-9, "{f:?}");
        assert_eq!(f.cpu_growth.statement, f.cpu_growth.io);
    }

    #[test]
    fn shrinking_cpu_is_noise_not_negative_growth() {
        let spec = crate::workload::builtin("tpcb-like").unwrap();
        let f = fit(&spec, &synthetic(40.0, 17.5, -0.004, -0.004)).unwrap();
        assert_eq!(f.cpu_growth.statement, 0.0);
        assert_eq!(f.cpu_growth.io, 0.0);
    }

    #[test]
    fn applied_figures_are_rounded_and_sourced() {
        let spec = crate::workload::builtin("tpcb-like").unwrap();
        let f = fit(&spec, &synthetic(40.04, 17.5, 0.004, 0.01)).unwrap();
        let s = apply(&spec, &f);
        assert_eq!(s.cpu_us_per_statement, 40.0);
        assert_eq!(s.cpu_growth_above_backends, 8);
        for k in [
            "cpu_us_per_statement",
            "client_cpu_us_per_statement",
            "cpu_us_per_read",
            "round_trip_us_per_statement",
            "cpu_growth_per_backend",
        ] {
            assert!(
                s.sources[k].starts_with("measured by pgiosim workload fit-cpu"),
                "{k}: {}",
                s.sources[k]
            );
        }
        // The result is a workload pgiosim loads.
        let text = serde_json::to_string(&s).unwrap();
        WorkloadSpec::from_json(&text, "fitted").unwrap();
    }

    #[test]
    fn measurements_without_what_the_fit_needs_are_refused() {
        let spec = crate::workload::builtin("tpcb-like").unwrap();
        let empty = CpuMeasurements { runs: vec![] };
        assert!(fit(&spec, &empty).unwrap_err().contains("no runs"));
        let mut m = synthetic(40.0, 17.5, 0.0, 0.0);
        m.runs[0].one_client = None;
        assert!(fit(&spec, &m).unwrap_err().contains("one_client"));
        let mut m = synthetic(40.0, 17.5, 0.0, 0.0);
        m.runs[1].high.clients = 4;
        assert!(fit(&spec, &m).unwrap_err().contains("clients"));
        let mut m = synthetic(40.0, 17.5, 0.0, 0.0);
        m.runs[0].low.core_us_per_tx = f64::NAN;
        assert!(fit(&spec, &m).unwrap_err().contains("finite"));
    }
}
