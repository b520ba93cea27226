//! The I/O path's CPU on a server whose page cache is full: what a page
//! read from the device and a KiB written cost the host's cores, from the
//! one public data set that measures them on a server.
//!
//! Mark Callaghan's sysbench runs of PostgreSQL 18.1 on a Hetzner ax162s
//! (AMD EPYC 9454P, 48 cores, SMT off, two NVMe SSDs in md RAID 1), data
//! several times the 128 GB of RAM (github.com/mdcallag/mytools, commit
//! e1ba3d9edff258d867ef6430353cb4dc60e5eca4, `bench/arc/`): host CPU
//! (vmstat us + sy) per statement, IO-bound minus cached. `scripts/cpu-fit`
//! fits both figures and docs/cpu-model.md gives the rows, the held-out
//! residuals and what the data cannot separate. None of pgiosim's checks
//! uses this data set.
//!
//! The figures are the 9454P's; a preset's CPU class gives its cores'
//! speed relative to it, and the scheduler divides every burst by that
//! speed.

use crate::core::config::ReclaimCpu;
use crate::core::time::Nanos;

/// CPU per 8 KiB page read from the device, µs, on the EPYC 9454P: the
/// point query and the 10-, 100- and 1,000-key IN lists
/// (`dec25.hetz.sb.pg.io` minus `nov25.sb.pg/dop40`), held out over 26
/// rows of other runs: rms 20%.
pub const READ_US: f64 = 84.7;

/// CPU per KiB written, data files and WAL alike (iostat's wKB of the one
/// device holding both), µs, on the EPYC 9454P: update-index,
/// update-nonindex and update-zipf, less `READ_US` per page read; it
/// carries the write, the kernel's writeback and the WAL's full-page
/// images. Held out over 21 rows: rms 10%.
pub const KIB_WRITTEN_US: f64 = 8.78;

/// Where the figures come from, for notices and `sources`.
pub const SOURCE: &str = "Callaghan's sysbench runs of PostgreSQL 18.1 on an AMD EPYC 9454P server \
     (github.com/mdcallag/mytools bench/arc, IO-bound minus cached host CPU; scripts/cpu-fit, \
     docs/cpu-model.md): 84.7 us per page read from the device, 8.78 us per KiB written";

/// The figures in the core's units, in EPYC 9454P time.
pub fn reclaim_cpu() -> ReclaimCpu {
    let ns = |us: f64| (us * 1_000.0).round() as Nanos;
    ReclaimCpu {
        read: ns(READ_US),
        per_kib_written: ns(KIB_WRITTEN_US),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_figures_reach_the_core_in_nanoseconds() {
        let r = reclaim_cpu();
        assert_eq!((r.read, r.per_kib_written), (84_700, 8_780));
        assert!(r.is_set());
    }
}
