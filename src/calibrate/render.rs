//! The table `calibrate` prints.

use super::{Calibration, KNEE_GAIN, LatencyUs, MISS_WARN};

pub(super) fn fmt_lat(l: Option<LatencyUs>) -> String {
    match l {
        Some(l) => format!("p50 {:.1} µs, p99 {:.1} µs", l.p50, l.p99),
        None => "-".into(),
    }
}

/// The table `calibrate` prints.
pub fn render_table(c: &Calibration) -> String {
    let mut s = format!(
        "calibrate: {} on {}, {} engine, O_DIRECT, {} s per test\n\n",
        c.dir, c.device, c.engine, c.seconds_per_test
    );
    s.push_str(&format!("{:<44} {:>12}  {}\n", "test", "rate", "latency"));
    for t in &c.tests {
        let (rate, lat) = if t.test.starts_with("sequential") {
            (format!("{:.0} MiB/s", t.mib_per_s), String::new())
        } else if t.test.contains("fdatasync") {
            (
                format!("{:.0}/s", t.ops_per_s),
                format!("pair {}; fdatasync {}", fmt_lat(t.pair), fmt_lat(t.sync)),
            )
        } else {
            let l = match (t.read, t.write) {
                (Some(r), Some(w)) => {
                    format!("read {}; write {}", fmt_lat(Some(r)), fmt_lat(Some(w)))
                }
                (r, w) => fmt_lat(r.or(w)),
            };
            (format!("{:.0} IOPS", t.ops_per_s), l)
        };
        s.push_str(&format!("{:<44} {:>12}  {}\n", t.test, rate, lat));
    }
    s.push_str("\nrandom-read IOPS by queue depth:\n  QD   ");
    for (q, _) in &c.sweep {
        s.push_str(&format!("{q:>8}"));
    }
    s.push_str("\n  IOPS ");
    for (_, r) in &c.sweep {
        s.push_str(&format!("{r:>8.0}"));
    }
    s.push_str(&format!(
        "\n  knee at QD{}: no deeper queue gives {:.0}% more\n\n",
        c.knee_qd,
        (KNEE_GAIN - 1.0) * 100.0
    ));
    for f in &c.findings {
        s.push_str(&format!("* {f}\n"));
    }
    s.push_str(&format!(
        "\n{:<44} {:>12} {:>14} {:>7}\n",
        "check", "measured", "profile model", "error"
    ));
    for k in &c.model_check {
        let flag = if k.error().abs() > MISS_WARN {
            "  miss"
        } else {
            ""
        };
        s.push_str(&format!(
            "{:<44} {:>12.1} {:>14.1} {:>+6.0}%{flag}\n",
            k.probe,
            k.measured,
            k.model,
            100.0 * k.error()
        ));
    }
    s.push_str(&format!("\n{}\n", crate::device::summary::line(&c.profile)));
    s
}
