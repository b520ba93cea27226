//! How a backend's CPU grows with the backends sharing the cores: linearly
//! in the backends running above a threshold (`CpuGrowth`), and by the
//! backends running per logical CPU (`Crowding`). The scheduler
//! ([`super::cpu`]) serves the grown bursts; the database charges them.

use super::time::Nanos;

/// How a burst's CPU grows with the backends sharing the cores.
///
/// The same instructions run slower as more processes' working sets cycle
/// through the caches, and the kernel's wake-ups, the lock manager's hash
/// tables and the page cache's work grow more. Which part grows how much
/// depends on the workload and the machine, so the slopes are a workload
/// file's, measured on a host (scripts/pgbench-compare; the reference
/// VM's figures in docs/validation.md, 2026-12-04, "The reference
/// machine's process figures").
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuGrowth {
    /// Active backends up to which nothing grows.
    pub above: u32,
    /// Fraction a statement's CPU grows per active backend above `above`.
    pub statement: f64,
    /// The same for the CPU of a data-file read or write.
    pub io: f64,
}

impl CpuGrowth {
    /// `demand` grown by `per` for each of `active` backends above `above`.
    fn grown(&self, demand: Nanos, per: f64, active: u32) -> Nanos {
        let over = active.saturating_sub(self.above);
        if over == 0 || per <= 0.0 {
            return demand;
        }
        (demand as f64 * (1.0 + per * over as f64)).round() as Nanos
    }

    /// A statement's CPU with `active` backends.
    pub fn statement(&self, demand: Nanos, active: u32) -> Nanos {
        self.grown(demand, self.statement, active)
    }

    /// A data-file read's or write's CPU with `active` backends.
    pub fn io(&self, demand: Nanos, active: u32) -> Nanos {
        self.grown(demand, self.io, active)
    }
}

/// How a statement's CPU grows with the backends running per logical CPU,
/// past the crowding its figure was measured at: a core that switches
/// among more backends than its caches hold refills them for each, so the
/// same statement takes longer, until nothing of a backend is left in them
/// when it runs again (docs/cpu-model.md, "CPU against the clients").
/// The points are a workload file's (`cpu_crowding`); the factor at each
/// count of active backends is worked out once, so a statement pays one
/// lookup.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Crowding {
    /// The factor with n active backends, for n up to the clients; empty:
    /// no crowding.
    factor: Vec<f64>,
}

impl Crowding {
    /// `points` are (active backends per logical CPU, factor), ascending;
    /// between two, the factor is linear in the logarithm of the backends
    /// per CPU; below the first and above the last it is theirs.
    pub fn new(points: &[(f64, f64)], cpus: u32, clients: u32) -> Crowding {
        if points.is_empty() || cpus == 0 || points.iter().all(|p| p.1 == 1.0) {
            return Crowding::default();
        }
        let at = |per_cpu: f64| -> f64 {
            let (first, last) = (points[0], points[points.len() - 1]);
            if per_cpu <= first.0 {
                return first.1;
            }
            if per_cpu >= last.0 {
                return last.1;
            }
            let i = points.partition_point(|p| p.0 <= per_cpu);
            let (a, b) = (points[i - 1], points[i]);
            let t = (per_cpu.ln() - a.0.ln()) / (b.0.ln() - a.0.ln());
            a.1 + t * (b.1 - a.1)
        };
        Crowding {
            factor: (0..=clients)
                .map(|n| at(f64::from(n) / f64::from(cpus)))
                .collect(),
        }
    }

    /// `demand` with `active` backends running.
    pub fn grow(&self, demand: Nanos, active: u32) -> Nanos {
        match self.factor.get(active as usize) {
            Some(&f) if f != 1.0 => (demand as f64 * f).round() as Nanos,
            _ => demand,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::time::US;
    use super::*;

    #[test]
    fn growth_starts_above_the_threshold_and_is_linear() {
        let g = CpuGrowth {
            above: 8,
            statement: 0.015,
            io: 0.05,
        };
        assert_eq!(g.statement(40 * US, 1), 40 * US);
        assert_eq!(g.statement(40 * US, 8), 40 * US);
        // 24 backends over: +36% and +120%.
        assert_eq!(g.statement(40 * US, 32), 54_400);
        assert_eq!(g.io(10 * US, 32), 22 * US);
        // Twice as far over, twice the growth.
        let d16 = g.statement(1_000_000, 16) - 1_000_000;
        let d24 = g.statement(1_000_000, 24) - 1_000_000;
        assert_eq!(d24, 2 * d16);
    }

    #[test]
    fn crowding_is_by_backends_per_cpu_and_levels_off() {
        let points = [(16.0, 1.0), (32.0, 1.12), (64.0, 1.34), (256.0, 1.43)];
        let c = Crowding::new(&points, 2, 600);
        // Up to 16 a CPU the figure holds.
        assert_eq!(c.grow(100_000, 8), 100_000);
        assert_eq!(c.grow(100_000, 32), 100_000);
        // At a point, its factor; per CPU, not per backend.
        assert_eq!(c.grow(100_000, 64), 112_000);
        assert_eq!(Crowding::new(&points, 4, 600).grow(100_000, 128), 112_000);
        // Halfway in the logarithm between two points: halfway between them.
        let mid = c.grow(1_000_000, (2.0 * 32.0 * 2f64.sqrt()).round() as u32);
        assert!((mid as f64 / 1e6 - 1.23).abs() < 0.002, "{mid}");
        // Beyond the last point, the last factor.
        assert_eq!(c.grow(100_000, 600), 143_000);
        // Non-decreasing points never give a smaller factor to more backends.
        let mut last = 0;
        for n in 0..=600 {
            let g = c.grow(1_000_000, n);
            assert!(g >= last, "{n}");
            last = g;
        }
    }

    #[test]
    fn no_crowding_changes_nothing() {
        for c in [
            Crowding::default(),
            Crowding::new(&[], 2, 100),
            Crowding::new(&[(4.0, 1.0), (64.0, 1.0)], 2, 100),
        ] {
            for active in [0, 1, 8, 100, 1000] {
                assert_eq!(c.grow(123_456, active), 123_456);
            }
        }
    }

    #[test]
    fn no_growth_configured_changes_nothing() {
        let g = CpuGrowth::default();
        for active in [0, 1, 8, 1000] {
            assert_eq!(g.statement(123_456, active), 123_456);
            assert_eq!(g.io(7, active), 7);
        }
    }
}
