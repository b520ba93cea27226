//! The keys: drawn uniformly, or exponentially skewed when the observed
//! buffer hit ratio is higher than uniform access over the database could
//! give with the server's shared_buffers; and a range scan when the observed
//! pages touched per transaction are well above what the point accesses
//! touch.

use super::mix::Mix;
use super::settings_file::shared_buffers_bytes;
use super::tables::DataTable;
use super::{Figures, Observation, PAGE};
use crate::workload::distribution::Distribution;

/// Largest exponential parameter chosen for skew.
pub(super) const MAX_SKEW: f64 = 200.0;

/// How the replayed transactions draw their keys and what they touch.
pub(super) struct Keys {
    pub distribution: Distribution,
    /// Why that distribution.
    pub note: String,
    /// Rows of the extra range scan making up the pages touched, if any.
    pub range_rows: Option<u64>,
    /// Pages touched per transaction: observed, and by the point accesses.
    pub observed_accesses: f64,
    pub point_accesses: f64,
}

/// The keys' distribution and the extra range scan: the hit ratio of leaf
/// and heap accesses that the observation implies, against the share of the
/// database shared_buffers holds.
pub(super) fn keys(
    obs: &Observation,
    figures: &Figures,
    made: &Mix,
    non_hot: f64,
    read_range_rows: Option<u64>,
    data: &DataTable,
) -> Keys {
    let levels = data.levels;
    let pages_per_row = data.pages_per_row;
    let keyed = made.updates + made.reads + made.deletes;
    let mut model_accesses = keyed * (levels + 1) as f64
        + made.inserts
        + made.updates * non_hot
        + read_range_rows.map_or(0.0, |r| made.reads * r as f64 * pages_per_row);
    let observed_accesses = figures.blks_read_per_tx + figures.blks_hit_per_tx;
    let point_accesses = model_accesses;
    let range_rows = {
        let gap = observed_accesses - point_accesses;
        if gap > 2.0 + 0.5 * model_accesses {
            let rows = ((gap - (levels + 1) as f64) / pages_per_row)
                .ceil()
                .max(1.0) as u64;
            Some(rows.min(data.rows))
        } else {
            None
        }
    };
    if let Some(r) = range_rows {
        model_accesses += (levels + 1) as f64 + r as f64 * pages_per_row;
    }
    let inner = (keyed + range_rows.map_or(0.0, |_| 1.0)) * (levels - 1) as f64;
    let sb = shared_buffers_bytes(obs);
    let cached = (sb as f64 / (data.db_pages * PAGE)).min(1.0);
    let (distribution, note) =
        key_distribution(figures.hit_ratio, model_accesses, inner, cached, levels, sb);
    Keys {
        distribution,
        note,
        range_rows,
        observed_accesses,
        point_accesses,
    }
}

/// The exponential parameter `a` whose first `cached` share of keys draws a
/// `hit` share of accesses: (1 − e^(−a·cached)) / (1 − e^(−a)) = hit.
/// `None` when uniform access already gives that.
pub(super) fn skew_for(cached: f64, hit: f64) -> Option<f64> {
    if !(cached > 0.0 && cached < 1.0) || hit <= cached + 0.01 {
        return None;
    }
    let share = |a: f64| (1.0 - (-a * cached).exp()) / (1.0 - (-a).exp());
    if share(MAX_SKEW) <= hit {
        return Some(MAX_SKEW);
    }
    let (mut lo, mut hi) = (1e-6, MAX_SKEW);
    for _ in 0..200 {
        let mid = (lo + hi) / 2.0;
        if share(mid) < hit {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    // Three significant digits.
    let a = (lo + hi) / 2.0;
    let digits = 10f64.powf(2.0 - a.log10().floor());
    Some((a * digits).round() / digits)
}

/// The keys' distribution: skewed when the observed hit ratio is above
/// what uniform keys give with shared_buffers, and a note on why.
fn key_distribution(
    hit_ratio: Option<f64>,
    model_accesses: f64,
    inner: f64,
    cached: f64,
    levels: u64,
    sb: u64,
) -> (Distribution, String) {
    match hit_ratio {
        Some(h) if model_accesses > inner => {
            let h_leaf = ((h * model_accesses - inner) / (model_accesses - inner)).clamp(0.0, 1.0);
            match skew_for(cached, h_leaf) {
                Some(a) => (
                    Distribution::Exponential { parameter: a },
                    format!(
                        "observed hit ratio {:.2}% (pg_stat_database blks_hit / (blks_hit + blks_read)); with {levels}-level index paths whose upper pages always hit, {:.1}% of leaf and heap accesses must hit, but shared_buffers ({}) holds only {:.1}% of the database: keys are skewed, exponential with parameter {a}, so that the first {:.1}% of keys draw {:.1}% of accesses",
                        h * 100.0,
                        h_leaf * 100.0,
                        crate::units::format_memory(sb),
                        cached * 100.0,
                        cached * 100.0,
                        h_leaf * 100.0
                    ),
                ),
                None => (
                    Distribution::Uniform,
                    format!(
                        "observed hit ratio {:.2}%: uniform keys give it, shared_buffers ({}) holding {:.1}% of the database",
                        h * 100.0,
                        crate::units::format_memory(sb),
                        cached * 100.0
                    ),
                ),
            }
        }
        _ => (
            Distribution::Uniform,
            "no block accesses observed: uniform keys".to_string(),
        ),
    }
}
