//! `pgiosim cpus`: the CPU classes `--cpu` takes, each with the figures its
//! speed comes from, and this host's own speed from its CPU probe.

use std::fmt::Write as _;

use anyhow::Result;

use crate::device::instance::{cpu_classes, cpu_sources};
use crate::output;

/// The classes, their figures and sources, and the host's probe.
pub fn cpus() -> Result<()> {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "CPU classes for --cpu KEY (or the processor's name as lscpu prints it): the speed of \
         one core running one thread against the AMD EPYC 9454P the workload's CPU figures \
         were measured on, the geometric mean of four Geekbench 6 single-core workloads (file \
         compression, navigation, clang, text processing), medians over the servers measured, \
         against the 9454P's. The threads per core are the server's (--threads-per-core): the \
         model shares a core between its threads itself.\n"
    );
    let _ = writeln!(
        o,
        "  {:<18} {:>5}  {:>6} {:>6} {:>6} {:>6}  {:>6}  processor [measured on]",
        "key", "speed", "compr", "navig", "clang", "text", "GB6"
    );
    for c in cpu_classes() {
        let w = c.workloads;
        let _ = writeln!(
            o,
            "  {:<18} {:>5.2}  {:>6} {:>6} {:>6} {:>6}  {:>6}  {} [{}]",
            c.key, c.speed, w[0], w[1], w[2], w[3], c.gb6_score, c.name, c.measured
        );
    }
    // The host: what `run` applies by default and `--cpu host` names.
    let reference = crate::workload::builtin("tpcb-like").and_then(|w| w.cpu_probe_us);
    match (crate::engine::cpu_probe::measure(), reference) {
        (Ok(p), Some(r)) => {
            let _ = writeln!(
                o,
                "  {:<18} {:>5.2}  this machine, by its CPU probe: {:.2} µs a round here, {r:.2} \
                 on the machine of the workload's figures (`pgiosim cpu-probe`)",
                "host",
                p.speed_against(r),
                p.us_per_round
            );
        }
        (Err(e), _) => {
            let _ = writeln!(o, "  host: the CPU probe could not run: {e:#}");
        }
        (_, None) => {}
    }
    let _ = writeln!(o, "\nSources:");
    for (key, text) in cpu_sources() {
        let _ = writeln!(o, "  {key}: {text}");
    }
    output::stdout(&o)
}
