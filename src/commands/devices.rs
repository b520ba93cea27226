//! `pgiosim devices`: the shipped device profiles and provisioned volume
//! types, with their sources and modelled figures on request.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Args;

use crate::output;

/// Flags of `devices`.
#[derive(Debug, Clone, Args)]
pub struct DevicesArgs {
    /// Also run each profile's fio-like microbenchmarks in the model (QD1
    /// 8 KiB read latency, QD32 read IOPS, QD1 and 4×QD64 write+fdatasync
    /// rates) and print them as a table.
    #[arg(long)]
    pub figures: bool,
    /// Also print where each profile's figures come from (its `source`).
    #[arg(long)]
    pub sources: bool,
}

/// The shipped profiles, the provisioned volume types, and on request
/// their sources and microbenchmark figures.
pub fn devices(args: &DevicesArgs) -> Result<()> {
    let mut o = String::new();
    let profiles = crate::device::profile::shipped();
    let width = profiles.iter().map(|p| p.name.len()).max().unwrap_or(0);
    for p in &profiles {
        let _ = writeln!(o, "{}", p.summary_line_in(width));
    }
    let _ = writeln!(
        o,
        "\nProvisioned volumes, --device TYPE:KEY=VALUE,... (the bare TYPE is the default \
         provisioning; limits from each provider's docs, see src/device/provisioned.rs):"
    );
    for t in crate::device::provisioned::TYPES {
        let _ = writeln!(o, "  {:<19} {:<6} {}", t.name, t.provider, t.help);
    }
    let _ = writeln!(
        o,
        "  {:<19} {:<6} type=SIZE: an instance preset's local NVMe (or --instance SIZE \
         --device instance-store; see pgiosim instances)",
        crate::device_name::INSTANCE_STORE,
        "AWS"
    );
    if args.sources {
        for p in &profiles {
            let _ = writeln!(o, "\n{}: {}", p.name, p.source);
        }
    }
    if !args.figures {
        return output::stdout(&o);
    }
    let _ = writeln!(
        o,
        "\n{:<16} {:>28} {:>14} {:>16} {:>18}",
        "profile",
        "QD1 8K read mean/p50/p99 µs",
        "QD32 read IOPS",
        "QD1 write+sync/s",
        "4×QD64 write+sync/s"
    );
    // Each row as its figures are ready: they take a while to measure.
    for p in &profiles {
        output::stdout(&std::mem::take(&mut o))?;
        let f = crate::device::microbench::figures(p, 1);
        let _ = writeln!(
            o,
            "{:<16} {:>28} {:>14.0} {:>16.0} {:>18.0}",
            p.name,
            format!(
                "{:.0} / {:.0} / {:.0}",
                f.qd1_read_mean_us, f.qd1_read_p50_us, f.qd1_read_p99_us
            ),
            f.qd32_read_iops,
            f.qd1_flush_per_s,
            f.parallel_flush_per_s
        );
    }
    output::stdout(&o)
}
