//! `pgiosim instances`: the cloud server presets, their sizing rule, CPU
//! classes and sources.

use std::fmt::Write as _;

use anyhow::Result;

use crate::output;

/// The instance presets, their sizing rule and sources.
pub fn instances() -> Result<()> {
    use crate::device::instance::{OVERHEAD_FRACTION, OVERHEAD_MIN_BYTES, sources};
    let mut o = String::new();
    for i in crate::device::instance::instances() {
        let _ = writeln!(o, "{}", i.summary_line());
    }
    let _ = writeln!(
        o,
        "\nmodel --instance SIZE: --cpus = vCPUs; default --os-cache = RAM − shared_buffers − \
         {:.0}% of RAM (at least {}), a guess for the kernel and the backends' own memory; \
         limits apply to the provider's volumes (throughput at the maximum, IOPS bursting for \
         30 minutes where the size bursts); --device instance-store is the size's local NVMe, \
         capped at its read and write IOPS and MB/s (measured: ScyllaDB's iotune figures; \
         derived: AWS's published IOPS, MB/s scaled from a measured size; each store \
         profile's source gives its row or its arithmetic).\nSources:",
        OVERHEAD_FRACTION * 100.0,
        crate::units::format_memory(OVERHEAD_MIN_BYTES)
    );
    for (key, text) in sources() {
        let _ = writeln!(o, "  {key}: {text}");
    }
    let _ = writeln!(
        o,
        "  instance stores: {}",
        crate::device::instance::aws_store::SCYLLA_SOURCE
    );
    let _ = writeln!(
        o,
        "\nCPU classes (CPU KEY ×SPEED above): the speed of one core running one thread, \
         relative to the AMD EPYC 9454P pgiosim's CPU figures were measured on: the geometric \
         mean of four Geekbench 6 single-core workloads (file compression, navigation, clang, \
         text processing), medians over the sizes measured, against the 9454P's; 'not fixed': \
         the provider picks the processor by zone (src/device/instance/cpus.tsv):"
    );
    for c in crate::device::instance::cpu_classes() {
        let _ = writeln!(
            o,
            "  {:<18} ×{:.2}  {} [{}]",
            c.key, c.speed, c.name, c.measured
        );
    }
    let _ = writeln!(o, "Sources:");
    for (key, text) in crate::device::instance::cpu_sources() {
        let _ = writeln!(o, "  {key}: {text}");
    }
    output::stdout(&o)
}
