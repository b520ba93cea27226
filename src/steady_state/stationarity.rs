//! Whether a window of a run is stationary, and which slow transients are
//! still under way in it.
//!
//! The test is Heidelberger and Welch's (P. Heidelberger and P. D. Welch,
//! "Simulation run length control in the presence of an initial
//! transient", Operations Research 31(6), 1983, 1109–1144), built on
//! Schruben's (L. W. Schruben, "Detecting initialization bias in
//! simulation output", Operations Research 30(3), 1982, 569–590). Under
//! stationarity the scaled cumulative sums of the deviations from the mean,
//! B(t) = S(⌊nt⌋) / √(n·p(0)), tend to a Brownian bridge; a trend bends the
//! bridge away from zero. The statistic is the bridge's Cramér–von Mises
//! integral ∫₀¹ B(t)² dt, refused above 0.461, its 95th percentile
//! (Anderson and Darling, "Asymptotic theory of certain goodness of fit
//! criteria based on stochastic processes", Annals of Mathematical
//! Statistics 23(2), 1952, 193–212, table 1). The variance constant p(0)
//! is estimated from the second half only, as Heidelberger and Welch do:
//! a transient in the first half would widen it and so hide itself.
//!
//! The observations are batch means, as for the interval: with whole
//! checkpoint cycles as batches, the rate's rise and fall within a cycle
//! (full-page images after each checkpoint starts) is not mistaken for a
//! trend, and a trend across cycles stands out against the small spread of
//! cycle means.

/// The Cramér–von Mises statistic of a Brownian bridge that is exceeded
/// with probability 0.05 (Anderson and Darling 1952).
pub const CVM_CRITICAL_5PCT: f64 = 0.461;

/// Fewest batches the test is made on: the variance comes from the second
/// half, which then holds at least two (one degree of freedom).
pub const TEST_MIN_BATCHES: usize = 4;

/// One batch: its mean rate and its length (any unit of time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Batch {
    pub mean: f64,
    pub length: f64,
}

/// The Cramér–von Mises statistic of the batches' bridge, None with fewer
/// than [`TEST_MIN_BATCHES`]. Batches of unequal length (checkpoint cycles)
/// are weighted by it: the bridge's time is the share of the window
/// elapsed, and a batch counts p(0)/length towards the variance.
pub fn cramer_von_mises(batches: &[Batch]) -> Option<f64> {
    let b = batches.len();
    if b < TEST_MIN_BATCHES {
        return None;
    }
    let total: f64 = batches.iter().map(|x| x.length).sum();
    if total <= 0.0 {
        return None;
    }
    let mean = weighted_mean(batches);
    let half = &batches[b / 2..];
    let half_mean = weighted_mean(half);
    let p0 = half
        .iter()
        .map(|x| x.length * (x.mean - half_mean).powi(2))
        .sum::<f64>()
        / (half.len() - 1) as f64;
    let mut sum = 0.0;
    let mut integral = 0.0;
    for x in batches {
        sum += x.length * (x.mean - mean);
        integral += sum * sum * x.length;
    }
    // A flat second half: any deviation at all is a trend.
    let scale = mean.abs().max(1.0);
    if p0 <= 1e-12 * scale * scale * total {
        let flat = integral <= 1e-12 * scale * scale * total * total * total;
        return Some(if flat { 0.0 } else { f64::INFINITY });
    }
    Some(integral / (total * total * p0))
}

fn weighted_mean(batches: &[Batch]) -> f64 {
    let t: f64 = batches.iter().map(|x| x.length).sum();
    batches.iter().map(|x| x.mean * x.length).sum::<f64>() / t
}

/// Relative change that makes a still-moving figure worth naming: half the
/// default precision, so what is named could move an answer by about it.
const MOVING: f64 = 0.01;

/// Points of a per-cycle figure looked at: the last five, or at least
/// three where there are fewer (the third checkpoint interval can already
/// show the trend). Five noisy values all in one order come by chance one
/// time in sixty.
const TREND_POINTS: (usize, usize) = (3, 5);

/// A slow transient still under way at the end of the run.
#[derive(Debug, Clone, PartialEq)]
pub enum Transient {
    /// The interval between checkpoints still changes (s): WAL-triggered
    /// checkpoints spread out as fewer full-page images are written, which
    /// spreads them further, until the two agree.
    CheckpointInterval { from_s: f64, to_s: f64 },
    /// WAL bytes per transaction still change (full-page images).
    WalPerTransaction { from: f64, to: f64 },
    /// Device reads per transaction still fall: a cache still fills.
    ReadsPerTransaction { from: f64, to: f64, cache: Cache },
    /// A table's first autovacuum is still to come, due at `due_s` by the
    /// rate its dead tuples have gathered at: the rate before it leaves out
    /// its cost (pgbench_accounts' at scale 100 and 1,000 tps: about 1,900
    /// s in, then every 2,100 s).
    FirstAutovacuum { table: String, due_s: f64 },
    /// A table loaded full (pgbench's fillfactor 100) still has pages that
    /// were never updated: each one's first update moves its row to another
    /// page and inserts index entries, so the rate changes until few are
    /// left. `left` is their share; at the pace so far all but
    /// [`FRESH_DONE_LEFT`] of them are updated by `done_s`.
    FreshPages {
        table: String,
        left: f64,
        done_s: f64,
    },
}

/// The share of a table's freshly loaded pages below which their first
/// updates no longer move the rate: at most a twentieth of updates then
/// move a row.
pub const FRESH_DONE_LEFT: f64 = 0.05;

/// Which cache fills.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cache {
    SharedBuffers,
    PageCache,
}

impl Transient {
    /// In a DBA's words: "the interval between checkpoints still grows
    /// (61 → 66 s)".
    pub fn phrase(&self) -> String {
        let dir = |a: f64, b: f64, up: &str, down: &str| if b > a { up } else { down }.to_string();
        match *self {
            Transient::FirstAutovacuum { ref table, due_s } => format!(
                "the first autovacuum of {table} is still to come (due at about {} s by its dead \
                 tuples so far; the rate before it leaves out its cost)",
                seconds(due_s)
            ),
            Transient::FreshPages {
                ref table,
                left,
                done_s,
            } => format!(
                "{:.0}% of the pages of {table} are still to be updated for the first time \
                 since the load (each such update moves its row to another page); at the pace \
                 so far, {:.0}% are left at about {} s",
                left * 100.0,
                FRESH_DONE_LEFT * 100.0,
                seconds(done_s)
            ),
            Transient::CheckpointInterval { from_s, to_s } => format!(
                "the interval between checkpoints still {} ({} → {} s)",
                dir(from_s, to_s, "grows", "shrinks"),
                seconds(from_s),
                seconds(to_s)
            ),
            Transient::WalPerTransaction { from, to } => format!(
                "WAL per transaction still {} ({from:.0} → {to:.0} bytes: full-page images)",
                dir(from, to, "rises", "falls")
            ),
            Transient::ReadsPerTransaction { from, to, cache } => format!(
                "{} still fills (reads per transaction {from:.2} → {to:.2})",
                match cache {
                    Cache::SharedBuffers => "shared_buffers",
                    Cache::PageCache => "the page cache",
                }
            ),
        }
    }
}

/// Seconds as a DBA reads them: tenths below ten.
fn seconds(s: f64) -> String {
    if s < 10.0 {
        format!("{s:.1}")
    } else {
        format!("{s:.0}")
    }
}

/// The first and last of the last [`TREND_POINTS`] values when each step
/// goes the same way and together they move by [`MOVING`] or more.
pub fn still_moving(values: &[f64]) -> Option<(f64, f64)> {
    let (fewest, most) = TREND_POINTS;
    if values.len() < fewest {
        return None;
    }
    let tail = &values[values.len() - values.len().min(most)..];
    let up = tail.windows(2).all(|p| p[1] > p[0]);
    let down = tail.windows(2).all(|p| p[1] < p[0]);
    let (first, last) = (tail[0], tail[tail.len() - 1]);
    ((up || down) && first != 0.0 && (last / first - 1.0).abs() >= MOVING).then_some((first, last))
}

/// Whether a figure moved by [`MOVING`] or more from the first half of a
/// window to its second, where there are no cycles to compare.
pub fn halves_differ(first: f64, second: f64) -> Option<(f64, f64)> {
    (first != 0.0 && (second / first - 1.0).abs() >= MOVING).then_some((first, second))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A deterministic standard normal sequence (Box–Muller on splitmix64):
    /// tests are exact.
    fn normals(seed: u64, n: usize) -> Vec<f64> {
        let mut state = seed;
        let mut next = || {
            state = state.wrapping_add(0x9e3779b97f4a7c15);
            let mut x = state;
            x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
            x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
            x ^= x >> 31;
            ((x >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        (0..n)
            .map(|_| {
                let (u, v) = (next(), next());
                (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
            })
            .collect()
    }

    /// An AR(1) series around `mean`: x(t) = mean + phi (x(t-1) - mean) + e.
    fn ar1(seed: u64, n: usize, mean: f64, phi: f64, sd: f64) -> Vec<f64> {
        let mut x = mean;
        normals(seed, n)
            .into_iter()
            .map(|e| {
                x = mean + phi * (x - mean) + sd * e;
                x
            })
            .collect()
    }

    /// Equal batches of `per` observations.
    fn batch(obs: &[f64], per: usize) -> Vec<Batch> {
        obs.chunks_exact(per)
            .map(|c| Batch {
                mean: c.iter().sum::<f64>() / per as f64,
                length: per as f64,
            })
            .collect()
    }

    fn cvm(obs: &[f64], batches: usize) -> f64 {
        cramer_von_mises(&batch(obs, obs.len() / batches)).expect("enough batches")
    }

    #[test]
    fn a_stationary_ar1_series_passes() {
        // 1,000 tps, strongly autocorrelated second to second; batches of
        // 50 s are far longer than its memory (1 / (1 - 0.7) s).
        let x = ar1(7, 1000, 1000.0, 0.7, 20.0);
        let s = cvm(&x, 20);
        assert!(s <= CVM_CRITICAL_5PCT, "{s}");
    }

    #[test]
    fn a_slow_linear_drift_is_rejected() {
        // The same noise with a rise of 3% over the window: about three
        // standard deviations of a batch mean from end to end.
        let x: Vec<f64> = ar1(7, 1000, 1000.0, 0.7, 20.0)
            .iter()
            .enumerate()
            .map(|(i, v)| v + 30.0 * i as f64 / 1000.0)
            .collect();
        let s = cvm(&x, 20);
        assert!(s > CVM_CRITICAL_5PCT, "{s}");
    }

    #[test]
    fn an_exponential_approach_is_rejected() {
        // The gp3 case's shape: a deficit of 10% decaying over 300 s,
        // looked at from 100 s to 1,000 s.
        let x: Vec<f64> = ar1(11, 900, 1030.0, 0.5, 14.0)
            .iter()
            .enumerate()
            .map(|(i, v)| v - 103.0 * (-((i + 100) as f64) / 300.0).exp())
            .collect();
        let s = cvm(&x, 20);
        assert!(s > CVM_CRITICAL_5PCT, "{s}");
    }

    #[test]
    fn whole_cycles_of_unequal_length_with_one_mean_pass() {
        let b: Vec<Batch> = [61.0, 63.0, 66.0, 68.0, 71.0, 73.0]
            .iter()
            .map(|&l| Batch {
                mean: 1000.0,
                length: l,
            })
            .collect();
        assert_eq!(cramer_von_mises(&b), Some(0.0));
        // A first cycle slower than a flat second half: a trend.
        let mut rising = b.clone();
        rising[0].mean = 990.0;
        assert_eq!(cramer_von_mises(&rising), Some(f64::INFINITY));
    }

    #[test]
    fn too_few_batches_are_not_tested() {
        let b = batch(&[1.0, 2.0, 3.0], 1);
        assert_eq!(cramer_von_mises(&b), None);
    }

    #[test]
    fn a_figure_still_moving_is_named_and_noise_is_not() {
        // The gp3 case's first checkpoint intervals.
        let grows = [61.0, 63.2, 65.8];
        assert_eq!(still_moving(&grows), Some((61.0, 65.8)));
        let t = Transient::CheckpointInterval {
            from_s: 61.0,
            to_s: 65.8,
        };
        assert_eq!(
            t.phrase(),
            "the interval between checkpoints still grows (61 → 66 s)"
        );
        // Converged: the last steps are under 1% in all.
        assert_eq!(still_moving(&[78.7, 78.8, 79.2, 79.3]), None);
        // One way, then back: noise.
        assert_eq!(still_moving(&[60.0, 66.0, 61.0]), None);
        assert_eq!(still_moving(&[3.4, 3.6, 3.5, 3.4, 3.3]), None);
        assert_eq!(still_moving(&[60.0, 66.0]), None);
        // Shrinking, and short intervals in tenths.
        assert_eq!(still_moving(&[3.6, 3.5, 3.4, 3.3, 3.2]), Some((3.6, 3.2)));
        let t = Transient::CheckpointInterval {
            from_s: 3.6,
            to_s: 3.2,
        };
        assert_eq!(
            t.phrase(),
            "the interval between checkpoints still shrinks (3.6 → 3.2 s)"
        );
    }

    /// The test's false alarms on stationary series, over many seeds: the
    /// variance from the second half has few degrees of freedom, which
    /// Heidelberger and Welch accept for its power; the rate must stay
    /// near the nominal 5%.
    #[test]
    fn false_alarms_on_white_noise_stay_near_the_nominal_rate() {
        let trials: u64 = 400;
        let rejected = (0..trials)
            .filter(|&s| cvm(&normals(1000 + s, 20), 20) > CVM_CRITICAL_5PCT)
            .count();
        // 20 batches, 9 degrees of freedom for the variance: about 9%.
        assert!((rejected as u64) < trials / 7, "{rejected} of {trials}");
    }

    proptest! {
        /// Shifting or scaling the rate changes nothing: the statistic is
        /// a ratio of the bridge to its own spread.
        #[test]
        fn the_statistic_is_affine_invariant(
            seed in 0u64..1000,
            shift in -1e4f64..1e4,
            scale in 0.01f64..100.0,
        ) {
            let x = ar1(seed, 400, 500.0, 0.5, 10.0);
            let y: Vec<f64> = x.iter().map(|v| shift + scale * v).collect();
            let (a, b) = (cvm(&x, 20), cvm(&y, 20));
            prop_assert!((a - b).abs() <= 1e-6 * a.max(1.0), "{a} vs {b}");
        }

        /// A drift much larger than the noise is always refused, whatever
        /// its direction or the noise's seed.
        #[test]
        fn a_drift_far_above_the_noise_is_always_rejected(
            seed in 0u64..1000,
            drift in prop_oneof![-0.2f64..-0.05, 0.05f64..0.2],
        ) {
            let x: Vec<f64> = ar1(seed, 600, 1000.0, 0.5, 10.0)
                .iter()
                .enumerate()
                .map(|(i, v)| v * (1.0 + drift * i as f64 / 600.0))
                .collect();
            let s = cvm(&x, 20);
            prop_assert!(s > CVM_CRITICAL_5PCT, "{}", s);
        }
    }
}
