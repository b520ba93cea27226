//! Key distributions with pgbench's definitions (`random`,
//! `random_exponential`, `random_gaussian`, `random_zipfian` in pgbench.c).
//! Keys are drawn in `0..n` (pgbench's `1..n` shifted down by one).

use rand::RngExt;
use rand_distr::{Distribution as _, Zipf};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};

use crate::core::SimRng;

/// How a key is chosen among `n` rows.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "lowercase", deny_unknown_fields)]
pub enum Distribution {
    /// Every key equally likely (`random`).
    Uniform,
    /// `random_exponential(1, n, parameter)`: key i has probability
    /// proportional to exp(-parameter·i/n), cut at n.
    Exponential { parameter: f64 },
    /// `random_gaussian(1, n, parameter)`: a normal centred on the middle of
    /// the range, with the range spanning ±parameter standard deviations.
    Gaussian { parameter: f64 },
    /// `random_zipfian(1, n, parameter)`: key i (1-based) has probability
    /// proportional to 1/i^parameter.
    Zipfian { parameter: f64 },
}

/// `{"parameter": p, "type": "exponential"}`: the parameter first, the order
/// capture has always written it in (a derived tagged enum writes the type
/// first).
impl Serialize for Distribution {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (kind, parameter) = match *self {
            Distribution::Uniform => ("uniform", None),
            Distribution::Exponential { parameter } => ("exponential", Some(parameter)),
            Distribution::Gaussian { parameter } => ("gaussian", Some(parameter)),
            Distribution::Zipfian { parameter } => ("zipfian", Some(parameter)),
        };
        let mut m = s.serialize_map(None)?;
        if let Some(p) = parameter {
            m.serialize_entry("parameter", &p)?;
        }
        m.serialize_entry("type", kind)?;
        m.end()
    }
}

/// pgbench's limits on the parameters (MIN_GAUSSIAN_PARAM, MIN_ZIPFIAN_PARAM,
/// MAX_ZIPFIAN_PARAM); exponential needs a positive one.
impl Distribution {
    /// Why the parameter is unacceptable, if it is.
    pub fn check(&self) -> Result<(), String> {
        match *self {
            Distribution::Uniform => Ok(()),
            Distribution::Exponential { parameter }
                if !(parameter > 0.0 && parameter.is_finite()) =>
            {
                Err(format!(
                    "exponential parameter must be greater than 0, got {parameter}"
                ))
            }
            Distribution::Gaussian { parameter } if !(2.0..=f64::MAX).contains(&parameter) => Err(
                format!("gaussian parameter must be at least 2.0, got {parameter}"),
            ),
            Distribution::Zipfian { parameter }
                if !(0.001..=1000.0).contains(&parameter) || parameter == 1.0 =>
            {
                Err(format!(
                    "zipfian parameter must be in [0.001, 1000] and not 1.0, got {parameter}"
                ))
            }
            _ => Ok(()),
        }
    }
}

/// A distribution bound to a key range, ready to sample.
#[derive(Debug, Clone)]
pub enum Sampler {
    Uniform { n: u64 },
    Exponential { n: u64, parameter: f64, cut: f64 },
    Gaussian { n: u64, parameter: f64 },
    Zipfian { zipf: Zipf<f64> },
}

impl Sampler {
    /// Bind `d` to keys `0..n` (n ≥ 1); the parameter must have passed `check`.
    pub fn new(d: Distribution, n: u64) -> Sampler {
        let n = n.max(1);
        match d {
            Distribution::Uniform => Sampler::Uniform { n },
            Distribution::Exponential { parameter } => Sampler::Exponential {
                n,
                parameter,
                cut: (-parameter).exp(),
            },
            Distribution::Gaussian { parameter } => Sampler::Gaussian { n, parameter },
            Distribution::Zipfian { parameter } => Sampler::Zipfian {
                zipf: Zipf::new(n as f64, parameter).expect("checked zipfian parameter"),
            },
        }
    }

    /// One key in `0..n`.
    pub fn sample(&self, rng: &mut SimRng) -> u64 {
        match *self {
            Sampler::Uniform { n } => rng.random_range(0..n),
            Sampler::Exponential { n, parameter, cut } => {
                // getExponentialRand: u in (0, 1], rand = -log(cut + (1 - cut)·u) / parameter.
                let u: f64 = 1.0 - rng.random::<f64>();
                let r = -(cut + (1.0 - cut) * u).ln() / parameter;
                ((n as f64 * r) as u64).min(n - 1)
            }
            Sampler::Gaussian { n, parameter } => {
                // getGaussianRand: Box-Muller, retried until within ±parameter.
                let stdev = loop {
                    let u1: f64 = 1.0 - rng.random::<f64>();
                    let u2: f64 = rng.random::<f64>();
                    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).sin();
                    if z.abs() < parameter {
                        break z;
                    }
                };
                let r = (stdev + parameter) / (parameter * 2.0);
                ((n as f64 * r) as u64).min(n - 1)
            }
            Sampler::Zipfian { ref zipf } => (zipf.sample(rng) as u64).saturating_sub(1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    fn draws(d: Distribution, n: u64, count: usize) -> Vec<u64> {
        let s = Sampler::new(d, n);
        let mut rng = SimRng::seed_from_u64(17);
        let mut v: Vec<u64> = (0..count).map(|_| s.sample(&mut rng)).collect();
        assert!(v.iter().all(|&k| k < n));
        v.sort_unstable();
        v
    }

    fn mean(v: &[u64]) -> f64 {
        v.iter().sum::<u64>() as f64 / v.len() as f64
    }

    #[test]
    fn uniform_mean_and_median() {
        let v = draws(Distribution::Uniform, 1000, 200_000);
        assert!((mean(&v) - 499.5).abs() < 3.0);
        assert!((v[v.len() / 2] as f64 - 500.0).abs() < 10.0);
    }

    #[test]
    fn exponential_matches_its_truncated_definition() {
        // Density ∝ exp(-a x) on [0, 1): mean = 1/a - 1/(e^a - 1);
        // median solves (1 - e^{-a m}) = (1 - e^{-a}) / 2.
        let a = 5.0;
        let n = 10_000;
        let v = draws(Distribution::Exponential { parameter: a }, n, 200_000);
        let want_mean = (1.0 / a - 1.0 / (a.exp() - 1.0)) * n as f64;
        assert!(
            (mean(&v) - want_mean).abs() / want_mean < 0.02,
            "{} vs {want_mean}",
            mean(&v)
        );
        let m = -(1.0 - (1.0 - (-a).exp()) / 2.0).ln() / a * n as f64;
        let median = v[v.len() / 2] as f64;
        assert!((median - m).abs() / m < 0.03, "{median} vs {m}");
    }

    #[test]
    fn gaussian_is_centred_with_the_right_spread() {
        let p = 4.0;
        let n = 10_000;
        let v = draws(Distribution::Gaussian { parameter: p }, n, 200_000);
        assert!((mean(&v) - n as f64 / 2.0).abs() < 20.0);
        // One standard deviation is n / (2p) keys: ~84.1% fall below mean + sd.
        let q841 = v[(v.len() as f64 * 0.8413) as usize] as f64;
        let want = n as f64 / 2.0 + n as f64 / (2.0 * p);
        assert!((q841 - want).abs() / want < 0.02, "{q841} vs {want}");
    }

    #[test]
    fn zipfian_first_key_share() {
        // P(key 1) = 1 / H(n, s) with H the generalised harmonic number.
        let (n, s) = (1000u64, 1.5);
        let v = draws(Distribution::Zipfian { parameter: s }, n, 200_000);
        let h: f64 = (1..=n).map(|i| 1.0 / (i as f64).powf(s)).sum();
        let share = v.iter().filter(|&&k| k == 0).count() as f64 / v.len() as f64;
        assert!((share - 1.0 / h).abs() < 0.01, "{share} vs {}", 1.0 / h);
        let m: f64 = (1..=n)
            .map(|i| (i - 1) as f64 / (i as f64).powf(s))
            .sum::<f64>()
            / h;
        assert!((mean(&v) - m).abs() / m < 0.05, "{} vs {m}", mean(&v));
    }

    #[test]
    fn parameters_are_checked_like_pgbench() {
        assert!(Distribution::Gaussian { parameter: 1.0 }.check().is_err());
        assert!(
            Distribution::Exponential { parameter: 0.0 }
                .check()
                .is_err()
        );
        assert!(Distribution::Zipfian { parameter: 1.0 }.check().is_err());
        assert!(Distribution::Zipfian { parameter: 2000.0 }.check().is_err());
        assert!(Distribution::Zipfian { parameter: 1.2 }.check().is_ok());
    }
}
