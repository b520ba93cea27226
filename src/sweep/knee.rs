//! The knee of a series: the client count after which adding clients
//! stops buying throughput while p99 keeps rising.

use crate::report::sweep::{Knee, SeriesKnee, SweepRow};

/// Growth of tps per doubling of clients below which the knee is passed.
pub const KNEE_GROWTH: f64 = 0.10;

/// Growth of tps per doubling of clients from (c0, t0) to (c1, t1).
pub fn growth_per_doubling(c0: u32, t0: f64, c1: u32, t1: f64) -> f64 {
    let doublings = (c1 as f64 / c0 as f64).log2();
    if doublings <= 0.0 || t0 <= 0.0 {
        return f64::NAN;
    }
    (t1 / t0).powf(1.0 / doublings) - 1.0
}

/// What the knee rule looks at in a series' point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KneeInput {
    pub clients: u32,
    pub tps: f64,
    pub p99_ms: f64,
}

/// The knee of a series sorted by clients: the first point after which every
/// step grows tps by less than `KNEE_GROWTH` per doubling and raises p99.
/// None if no such point has a step after it.
pub fn find_knee(points: &[KneeInput]) -> Option<usize> {
    let flat = |j: usize| {
        let (a, b) = (points[j], points[j + 1]);
        let g = growth_per_doubling(a.clients, a.tps, b.clients, b.tps);
        g < KNEE_GROWTH && b.p99_ms > a.p99_ms
    };
    let n = points.len();
    (0..n.saturating_sub(1)).find(|&i| (i..n - 1).all(flat))
}

/// Build the knees of a table whose series' rows are in client order;
/// interrupted (partial) points are left out.
pub fn knees(table: &[SweepRow]) -> Vec<SeriesKnee> {
    let mut order: Vec<&str> = Vec::new();
    for r in table {
        if !order.contains(&r.series.as_str()) {
            order.push(&r.series);
        }
    }
    order
        .into_iter()
        .map(|name| {
            // An interrupted point's figures cover a shorter run: left out.
            let rows: Vec<&SweepRow> = table
                .iter()
                .filter(|r| r.series == name && !r.partial)
                .collect();
            let first = rows
                .first()
                .copied()
                .unwrap_or_else(|| table.iter().find(|r| r.series == name).expect("a row"));
            let (knee, note) = if rows.is_empty() {
                (None, "none: no point of this series ran to its end".into())
            } else {
                series_knee(&rows)
            };
            SeriesKnee {
                series: name.to_string(),
                device: first.device.clone(),
                settings: first.settings.clone(),
                knee,
                note,
            }
        })
        .collect()
}

/// The knee of one series' finished points (at least one), and a note
/// saying where it is and what follows it, or why there is none.
fn series_knee(rows: &[&SweepRow]) -> (Option<Knee>, String) {
    let input: Vec<KneeInput> = rows
        .iter()
        .map(|r| KneeInput {
            clients: r.clients,
            tps: r.answer_tps(),
            p99_ms: r.latency_p99_ms,
        })
        .collect();
    let last = rows[rows.len() - 1];
    match find_knee(&input) {
        Some(i) => {
            let k = rows[i];
            let steps: Vec<String> = rows[i + 1..]
                .iter()
                .map(|r| {
                    format!(
                        "{:+.0}% at {}",
                        r.tps_growth_per_doubling.unwrap_or(f64::NAN) * 100.0,
                        r.clients
                    )
                })
                .collect();
            (
                Some(Knee {
                    clients: k.clients,
                    tps: k.answer_tps(),
                    latency_p99_ms: k.latency_p99_ms,
                    commits_per_flush: k.commits_per_flush,
                }),
                format!(
                    "{} clients: {:.0} tps, p99 {:.2} ms, {:.2} commits per WAL flush; beyond it tps per doubling {} while p99 rises to {:.2} ms",
                    k.clients,
                    k.answer_tps(),
                    k.latency_p99_ms,
                    k.commits_per_flush,
                    steps.join(", "),
                    last.latency_p99_ms
                ),
            )
        }
        None if rows.len() < 2 => (
            None,
            format!("none: one client count ({}) is no curve", rows[0].clients),
        ),
        None => {
            let g = last.tps_growth_per_doubling.unwrap_or(f64::NAN);
            let why = if g >= KNEE_GROWTH {
                format!(
                    "tps still grows {:+.0}% per doubling at {} clients",
                    g * 100.0,
                    last.clients
                )
            } else {
                "tps flattens but p99 does not keep rising".to_string()
            };
            (None, format!("none up to {} clients: {why}", last.clients))
        }
    }
}

/// The rule, in words, as the JSON carries it.
pub fn knee_rule() -> String {
    format!(
        "the client count after which tps grows less than {:.0}% per doubling of clients while p99 keeps rising",
        KNEE_GROWTH * 100.0
    )
}
