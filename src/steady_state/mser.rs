//! MSER-5 (White 1997, with batches of five): where the warm-up ends.
//! The cut minimises the squared standard error of the mean of the batch
//! means after it.

use super::{MSER_BATCH, MSER_MIN_BATCHES};

/// MSER-5's truncation point, in observations: None when there are fewer
/// than [`MSER_MIN_BATCHES`] batches or the best cut is at the middle.
pub fn mser5(obs: &[f64]) -> Option<usize> {
    let k = obs.len() / MSER_BATCH;
    if k < MSER_MIN_BATCHES {
        return None;
    }
    mser_cut(&mser_statistic(obs), 0, k / 2).map(|d| d * MSER_BATCH)
}

/// MSER-5's statistic at each cut (in batches of [`MSER_BATCH`]): the
/// squared standard error of the mean of the batches after it.
pub(super) fn mser_statistic(obs: &[f64]) -> Vec<f64> {
    let k = obs.len() / MSER_BATCH;
    let z: Vec<f64> = obs
        .chunks_exact(MSER_BATCH)
        .map(|c| c.iter().sum::<f64>() / MSER_BATCH as f64)
        .collect();
    // Suffix sums give every cut's mean and squared deviations in one pass.
    let (mut sum, mut sq) = (0.0, 0.0);
    let mut stat = vec![0.0; k];
    for d in (0..k).rev() {
        sum += z[d];
        sq += z[d] * z[d];
        let m = (k - d) as f64;
        let mean = sum / m;
        stat[d] = ((sq / m - mean * mean).max(0.0)) / m;
    }
    stat
}

/// MSER-5's cut among batches `from..=limit`: None when the statistic is
/// least at `limit` (it still falls: the run is too short to see where
/// the warm-up ends) or the range is empty.
pub(super) fn mser_cut(stat: &[f64], from: usize, limit: usize) -> Option<usize> {
    // Cuts are looked for up to a limit, the half at first: a warm-up
    // longer than half the run cannot be told from a trend. (Searching the
    // whole run and refusing a minimum past the middle, as White 1997
    // does, refuses every run with a slow periodic component, such as
    // autovacuum's dips every two minutes, on chance alone.)
    let range = stat.get(from..=limit.min(stat.len().checked_sub(1)?))?;
    let mut best = (f64::INFINITY, 0);
    for (d, &s) in range.iter().enumerate() {
        if s < best.0 {
            best = (s, d);
        }
    }
    // On a flat series the statistic is near its minimum at many cuts, and
    // which one wins is noise: the earliest within 1% of the minimum keeps
    // the most data and is as good.
    let d = range
        .iter()
        .position(|&s| s <= best.0 * 1.01)
        .unwrap_or(best.1);
    (from + best.1 < limit).then_some(from + d)
}
