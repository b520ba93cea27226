//! The human report: pgbench's own summary lines first, then what pgbench
//! cannot tell (percentiles, where the time goes, the I/O behind it).

use std::fmt::Write;

use super::steady::{Interval, SteadyFigures};
use super::{RunResult, TimerLagFigures};

/// Render the report as pgbench-like text.
pub fn render(r: &RunResult) -> String {
    let mut o = String::new();
    header_lines(&mut o, r);
    summary_lines(&mut o, r);
    if let Some(st) = &r.steady_state {
        o.push_str(&steady_block(st));
    }
    let l = &r.summary.latency_ms;
    let _ = writeln!(
        o,
        "\nlatency percentiles: p50 {:.3} ms, p90 {:.3} ms, p99 {:.3} ms, p99.9 {:.3} ms, max {:.3} ms",
        l.p50, l.p90, l.p99, l.p99_9, l.max
    );

    breakdown_table(&mut o, r);

    io_section(&mut o, r);
    o
}

/// What was run, as pgbench's header states it: the partial warning,
/// the transaction type, scale, clients, threads and how long.
fn header_lines(o: &mut String, r: &RunResult) {
    let run = &r.run;
    if r.partial {
        let _ = writeln!(
            o,
            "*** partial result: the run was interrupted after {:.1} s ***",
            r.summary.elapsed_s
        );
    }
    let _ = writeln!(
        o,
        "pgiosim {} ({}): {}",
        r.pgiosim_version,
        run.mode,
        describe_io(r)
    );
    let _ = writeln!(o, "transaction type: {}", run.transaction_type);
    let _ = writeln!(o, "scaling factor: {}", run.scale);
    let _ = writeln!(o, "query mode: {}", run.query_mode);
    let _ = writeln!(o, "number of clients: {}", run.clients);
    let _ = writeln!(o, "number of threads: {}", run.jobs.max(1));
    duration_line(o, r);
}

/// The run's length: pgbench's duration or transactions per client, and
/// why model stopped where it did.
fn duration_line(o: &mut String, r: &RunResult) {
    let run = &r.run;
    match (run.duration_s, run.transactions_per_client) {
        (Some(d), _) => match (run.stopped_on.as_deref(), run.precision_pct) {
            (Some("precision"), Some(p)) => {
                let _ = writeln!(
                    o,
                    "duration: {d:.0} s (simulated until the steady state's tps was known to ±{p}%)"
                );
            }
            (Some("transient"), Some(_)) => {
                let _ = writeln!(
                    o,
                    "duration: {d:.0} s (stopped early: the steady state is out of reach of the cap, as {}; -T runs a fixed length)",
                    run.stopped_because
                        .as_deref()
                        .unwrap_or("a transient lasts past it")
                );
            }
            (Some("cap"), Some(p)) => {
                let _ = writeln!(
                    o,
                    "duration: {d:.0} s (the cap: no window shown stationary had its tps known to ±{p}% by then)"
                );
            }
            _ => {
                let _ = writeln!(o, "duration: {} s", d);
            }
        },
        (None, Some(t)) if run.stopped_on.as_deref() == Some("cap") => {
            let _ = writeln!(
                o,
                "number of transactions per client: {t} (not all done by {:.0} s, the most model simulates)",
                r.summary.elapsed_s
            );
        }
        (None, Some(t)) => {
            let _ = writeln!(o, "number of transactions per client: {t}");
        }
        _ => {}
    }
}

/// pgbench's whole-run figures: transactions, latency, the rate limit's
/// lag and skips, tps.
fn summary_lines(o: &mut String, r: &RunResult) {
    let s = &r.summary;
    let _ = writeln!(
        o,
        "number of transactions actually processed: {}",
        s.transactions
    );
    let _ = writeln!(o, "latency average = {:.3} ms", s.latency_ms.average);
    let _ = writeln!(o, "latency stddev = {:.3} ms", s.latency_ms.stddev);
    if let Some(rl) = &s.rate_limit {
        let _ = writeln!(
            o,
            "rate limit schedule lag: avg {:.3} (max {:.3}) ms",
            rl.lag_avg_ms, rl.lag_max_ms
        );
        if let Some(limit) = rl.latency_limit_ms {
            let all = s.transactions + rl.skipped;
            let pct = |n: u64| {
                if all == 0 {
                    0.0
                } else {
                    n as f64 * 100.0 / all as f64
                }
            };
            let _ = writeln!(
                o,
                "number of transactions skipped: {} ({:.3}%)",
                rl.skipped,
                pct(rl.skipped)
            );
            let _ = writeln!(
                o,
                "number of transactions above the {limit:.1} ms latency limit: {}/{} ({:.3}%)",
                rl.late,
                all,
                pct(rl.late)
            );
        }
    }
    let _ = writeln!(o, "tps = {:.6} (without initial connection time)", s.tps);
}

/// The per-transaction breakdown: each bucket's mean, share and p99.
fn breakdown_table(o: &mut String, r: &RunResult) {
    let _ = writeln!(
        o,
        "\nper-transaction breakdown (where each transaction's time goes):"
    );
    let _ = writeln!(
        o,
        "  {:<12} {:>10} {:>7} {:>10}",
        "bucket", "mean µs", "share", "p99 µs"
    );
    let mut total = 0.0;
    for b in &r.breakdown {
        total += b.mean_us;
        // Only runs with pgbench's threads (-j) wait for them.
        if b.bucket == "client" && b.mean_us == 0.0 {
            continue;
        }
        // Only runs with standbys (--standby) can wait for them.
        if b.bucket == "sync_rep" && r.replication.is_empty() {
            continue;
        }
        let _ = writeln!(
            o,
            "  {:<12} {:>10.1} {:>6.1}% {:>10.1}",
            b.bucket,
            b.mean_us,
            b.share * 100.0,
            b.p99_us
        );
    }
    let _ = writeln!(o, "  {:<12} {:>10.1} {:>6.1}%", "total", total, 100.0);
}

/// One row of the I/O section: a label and its value, aligned.
fn row(o: &mut String, name: &str, value: String) {
    let _ = writeln!(o, "  {name:<34} {value}");
}

/// The I/O lines, the archive's and the timer lag's, with their warnings.
fn io_section(o: &mut String, r: &RunResult) {
    let _ = writeln!(o, "\nI/O:");
    data_and_wal_rows(o, r);
    let archive_warnings = match &r.archive {
        Some(a) => {
            let (rows, warnings) = a.text();
            for (label, value) in rows {
                row(o, &label, value);
            }
            warnings
        }
        None => Vec::new(),
    };
    buffer_and_cpu_rows(o, r);
    for w in archive_warnings {
        let _ = writeln!(o, "\n{w}");
    }
    if let Some(lag) = &r.run.timer_lag {
        timer_lag_rows(o, lag);
    }
}

/// The data file's reads and writes, the WAL's, and each standby's.
fn data_and_wal_rows(o: &mut String, r: &RunResult) {
    let io = &r.io;
    row(
        o,
        "data reads/s",
        format!(
            "{:.1} ({:.2} per transaction; mean {:.0} µs; their CPU with its wait for a core {:.0} µs per transaction)",
            io.data_reads_per_s, io.data_reads_per_tx, io.data_read_avg_us, io.read_cpu_us_per_tx
        ),
    );
    row(
        o,
        "data writes/s",
        format!(
            "{:.1} (backend {}, checkpointer {}, bgwriter {})",
            io.data_writes_per_s, io.backend_writes, io.checkpoint_writes, io.bgwriter_writes
        ),
    );
    row(
        o,
        "WAL MB/s",
        format!(
            "{:.2} ({:.0} bytes per transaction)",
            io.wal_mb_per_s, io.wal_bytes_per_tx
        ),
    );
    row(
        o,
        "WAL fdatasyncs/s",
        format!(
            "{:.1} (mean {:.0} µs; write {:.0} µs)",
            io.wal_fdatasyncs_per_s, io.wal_sync_avg_us, io.wal_write_avg_us
        ),
    );
    row(
        o,
        "commits per WAL flush",
        format!("{:.2}", io.commits_per_flush),
    );
    for s in &r.replication {
        let per_s = |n: u64| n as f64 / r.summary.elapsed_s.max(1e-9);
        row(
            o,
            &format!("standby {} ({})", s.name, s.sync_state),
            format!(
                "{:.0} WAL writes/s, {:.0} fdatasyncs/s, {:.2} MB/s",
                per_s(s.wal_writes),
                per_s(s.wal_fdatasyncs),
                per_s(s.wal_written_bytes) / 1e6
            ),
        );
    }
}

/// The buffer cache, full-page images, checkpoints and the modelled CPU.
fn buffer_and_cpu_rows(o: &mut String, r: &RunResult) {
    let io = &r.io;
    row(
        o,
        "buffer hit ratio",
        format!(
            "{:.2}% ({} hits, {} misses)",
            io.buffer_hit_ratio * 100.0,
            io.buffer_hits,
            io.buffer_misses
        ),
    );
    if io.os_cache_hits > 0 || r.run.os_cache_bytes > 0 {
        row(
            o,
            "misses served by modelled OS cache",
            io.os_cache_hits.to_string(),
        );
    }
    row(
        o,
        "full-page images per transaction",
        format!("{:.3}", io.full_page_images_per_tx),
    );
    row(
        o,
        "checkpoints",
        format!(
            "{} started, {} completed ({} timed, {} by WAL volume)",
            io.checkpoints_started,
            io.checkpoints_completed,
            io.checkpoints_timed,
            io.checkpoints_requested
        ),
    );
    row(
        o,
        "modelled CPU utilisation",
        format!(
            "{:.1}% of {}",
            io.cpu_utilisation * 100.0,
            describe_cpus(&r.run)
        ),
    );
    if io.client_thread_us_per_tx > 0.0 {
        row(
            o,
            "pgbench threads (-j) on the cores",
            format!(
                "{:.0} µs per transaction, on a core or waiting for one",
                io.client_thread_us_per_tx
            ),
        );
    }
}

/// How late pgiosim's own loop handled its timers, and a warning when
/// that was late enough to show in the figures.
fn timer_lag_rows(o: &mut String, lag: &TimerLagFigures) {
    row(
        o,
        "timer lag (pgiosim's own loop)",
        format!(
            "mean {:.1} µs, p99 {:.1} µs, max {:.0} µs",
            lag.mean_us, lag.p99_us, lag.max_us
        ),
    );
    if lag.mean_us > TimerLagFigures::WARN_MEAN_US {
        let _ = writeln!(
            o,
            "\nwarning: pgiosim handled its timers {:.0} µs late on average, so modelled \
             CPU and round trips ran long and the excess shows as cpu_queue; the host's \
             CPU was busy, or submitting I/O blocked (a throttled cgroup can do that)",
            lag.mean_us
        );
    }
}

/// An imported result (`pgiosim import`) in a few lines for the terminal.
pub fn render_imported(r: &RunResult) -> String {
    let mut o = String::new();
    let s = &r.summary;
    let _ = writeln!(
        o,
        "pgiosim {} (import pgbench): {}, scale {}, {} clients, {} transactions",
        r.pgiosim_version, r.run.workload, r.run.scale, r.run.clients, s.transactions
    );
    let _ = writeln!(
        o,
        "tps = {:.6}, latency average = {:.3} ms",
        s.tps, s.latency_ms.average
    );
    if r.breakdown.is_empty() {
        let _ = writeln!(o, "no --statistics: no breakdown");
    } else {
        let _ = writeln!(o, "\n  bucket          mean µs   share");
        for b in &r.breakdown {
            let _ = writeln!(
                o,
                "  {:<14}{:>9.1}  {:>5.1}%",
                b.bucket,
                b.mean_us,
                b.share * 100.0
            );
        }
    }
    o
}

/// The steady state after pgbench's whole-run lines: the warm-up cut,
/// tps and latency with their 95% intervals, and the buckets'.
fn steady_block(st: &SteadyFigures) -> String {
    let mut o = String::new();
    let (Some(tps), Some(lat)) = (st.tps, st.latency_ms) else {
        let _ = writeln!(
            o,
            "\nsteady state: not reached: {}",
            st.why_not.as_deref().unwrap_or("no figures")
        );
        return o;
    };
    let pct = |i: Interval| {
        if i.mean == 0.0 {
            0.0
        } else {
            i.ci95 / i.mean * 100.0
        }
    };
    let cycles = match st.checkpoint_cycles {
        Some(0) | None => String::new(),
        Some(1) => ", one whole checkpoint cycle".into(),
        Some(n) => format!(", {n} whole checkpoint cycles"),
    };
    let cycles = match st.vacuums {
        Some(0) | None => cycles,
        Some(1) => format!("{cycles}, one vacuum"),
        Some(n) => format!("{cycles}, {n} vacuums"),
    };
    let _ = writeln!(
        o,
        "\nsteady state, after a warm-up of {:.0} s ({}): {:.0} s from {:.0} s{cycles}, 95% intervals from {} batch means{}:",
        st.warmup_s.unwrap_or(0.0),
        st.warmup_phrase(),
        st.length_s.unwrap_or(0.0),
        st.start_s.unwrap_or(0.0),
        st.batches.unwrap_or(0),
        if st.batched_by.as_deref() == Some("vacuum_cycles") {
            " (whole autovacuum cycles)"
        } else {
            ""
        },
    );
    let _ = writeln!(o, "  tps = {:.1} ± {:.1}%", tps.mean, pct(tps));
    let _ = writeln!(
        o,
        "  latency average = {:.3} ms ± {:.1}%",
        lat.mean,
        pct(lat)
    );
    let buckets: Vec<String> = st
        .breakdown
        .iter()
        .filter(|b| b.mean_us > 0.0)
        .map(|b| format!("{} {:.1} ± {:.1}", b.bucket, b.mean_us, b.ci95_us))
        .collect();
    if !buckets.is_empty() {
        let _ = writeln!(o, "  µs per transaction: {}", buckets.join(", "));
    }
    if let Some(t) = &st.stationarity {
        let _ = writeln!(o, "  stationary: {}", t.phrase());
    }
    if !st.transients.is_empty() {
        let _ = writeln!(o, "  still moving: {}", st.transients.join("; "));
    }
    o
}

fn describe_io(r: &RunResult) -> String {
    let run = &r.run;
    if run.mode == "run" {
        format!(
            "{} engine, {} data I/O, data in {}",
            run.io_engine, run.data_io, run.dir
        )
    } else {
        run.io_engine.clone()
    }
}

/// One pgbench-style progress line.
pub fn progress_line(p: &crate::engine::driver::Progress) -> String {
    let mut line = format!(
        "progress: {:.1} s, {:.1} tps, lat {:.3} ms stddev {:.3}",
        p.elapsed_s, p.tps, p.latency_ms, p.stddev_ms
    );
    // Only the real clock's timers are ever late.
    if p.timer_lag_us > 0.0 {
        let _ = write!(line, ", timer lag {:.1} us", p.timer_lag_us);
    }
    line
}

/// The modelled CPUs: "16 cores", or "16 vCPUs (8 cores x 2 threads) at
/// 1.3x"; the client's place if it is elsewhere.
fn describe_cpus(run: &super::RunInfo) -> String {
    let mut d = if run.threads_per_core > 1 {
        format!(
            "{} vCPUs ({} cores x {} threads)",
            run.cpus,
            run.cpus / run.threads_per_core,
            run.threads_per_core
        )
    } else {
        format!("{} cores", run.cpus)
    };
    if let Some(p) = run.cpu_probe {
        let _ = write!(
            d,
            " at {:.2}x the workload's reference CPU (CPU probe {:.2} µs here, {:.2} there)",
            run.cpu_speed, p.host_us, p.reference_us
        );
    } else if let Some(class) = &run.cpu {
        let _ = write!(d, " at {}x the EPYC 9454P ({class})", run.cpu_speed);
    } else if run.cpu_speed != 1.0 {
        let _ = write!(d, " at {}x the reference CPU (EPYC 9454P)", run.cpu_speed);
    }
    if let Some(rtt) = run.client_rtt_us {
        let _ = write!(d, "; client on another host, {rtt:.0} us away");
        if run.client_tls {
            let _ = write!(d, ", over TLS");
        }
    }
    d
}
