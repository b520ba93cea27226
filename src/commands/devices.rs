//! `pgiosim devices`: the shipped device profiles and provisioned volume
//! types, with their sources and modelled figures on request.

use std::fmt::Write as _;

use anyhow::Result;
use clap::Args;

use crate::device::profile::Profile;
use crate::device::provisioned::{self, Counting};
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
        let _ = writeln!(o, "{}", crate::device::summary::line_in(p, width));
    }
    provisioned_types(&mut o);
    counting(&mut o);
    if args.sources {
        sources(&mut o, &profiles);
    }
    if !args.figures {
        return output::stdout(&o);
    }
    figures(o, &profiles)
}

/// A type's I/O unit as the table shows it.
fn unit(c: &Counting) -> String {
    c.io_unit_kib
        .map_or_else(|| "not published*".to_string(), |u| format!("{u} KiB"))
}

/// The table of how each provider counts I/O against a type's caps, at
/// its default provisioning, then RDS's striping and the server's limits.
fn counting(o: &mut String) {
    let _ = writeln!(
        o,
        "\nHow each provider counts I/O against those caps, at the default provisioning \
         (--sources quotes each provider):"
    );
    let _ = writeln!(
        o,
        "  {:<19} {:<15} {:<20} {:<17} {:<12} burst",
        "type", "I/O unit", "merges sequential", "IOPS binds below", "1 MiB binds"
    );
    for t in provisioned::TYPES {
        let c = &t.counting;
        let p = Profile::shipped(t.name).unwrap_or_else(|| panic!("{} is shipped", t.name));
        let guess = if c.io_unit_kib.is_some() { "" } else { "*" };
        let (below, large) = match provisioned::binds_first(&p) {
            Some((kib, iops)) => (
                format!("{kib:.0} KiB{guess}"),
                format!("{}{guess}", if iops { "IOPS" } else { "throughput" }),
            ),
            None => ("-".into(), "-".into()),
        };
        let _ = writeln!(
            o,
            "  {:<19} {:<15} {:<20} {:<17} {:<12} {}",
            t.name,
            unit(c),
            c.merge,
            below,
            large,
            c.burst
        );
    }
    for line in [
        "* GCP publishes no unit: the model counts up to 256 KiB as one I/O, a guess. GCP says \
         IOPS bind small random I/O (4 to 16 KB), throughput sequential or large I/O (256 KB \
         to 1 MB).",
        provisioned::RDS_GP3_STRIPING,
        provisioned::INSTANCE_LIMITS,
    ] {
        wrap(o, line, 100);
    }
}

/// `text` as lines of at most `width` characters, the first indented by
/// two spaces and the rest by four.
fn wrap(o: &mut String, text: &str, width: usize) {
    let mut line = String::from("  ");
    for word in text.split_whitespace() {
        if !line.trim().is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            let _ = writeln!(o, "{line}");
            line = String::from("    ");
        }
        if !line.trim().is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    let _ = writeln!(o, "{line}");
}

/// The provisioned volume types, the instance stores, local SSDs and RAID0.
fn provisioned_types(o: &mut String) {
    let _ = writeln!(
        o,
        "\nProvisioned volumes, --device TYPE:KEY=VALUE,... (the bare TYPE is the default \
         provisioning; limits from each provider's docs, see src/device/provisioned.rs):"
    );
    for t in provisioned::TYPES {
        let _ = writeln!(o, "  {:<19} {:<6} {}", t.name, t.provider, t.help);
    }
    let _ = writeln!(
        o,
        "  {:<19} {:<6} type=SIZE: an instance preset's local NVMe (or --instance SIZE \
         --device instance-store; see pgiosim instances)",
        crate::device::name::INSTANCE_STORE,
        "any"
    );
    let _ = writeln!(
        o,
        "  {:<19} {:<6} count=N (1-8, 16, 24, 32),type=TYPE: N local SSDs of 375 GiB on an n2, n2d \
         or c2 VM (or --instance TYPE): ScyllaDB's measurement for the type and count, else \
         Google's published limits",
        crate::device::instance::local_ssd::LOCAL_SSD,
        "GCP"
    );
    let _ = writeln!(
        o,
        "  {:<19} {:<6} n=N,chunk=SIZE (512k),member=DEVICE: N of any device above, striped as \
         md RAID0 (each keeps its caps; a flush goes to all)",
        "raid0", ""
    );
}

/// Where each profile's figures come from, and how each type counts I/O.
fn sources(o: &mut String, profiles: &[Profile]) {
    for p in profiles {
        let _ = writeln!(o, "\n{}: {}", p.name, p.source);
    }
    let _ = writeln!(o, "\nHow each type counts I/O, in its provider's words:");
    for t in provisioned::TYPES {
        let c = &t.counting;
        let _ = writeln!(
            o,
            "\n{} counting: I/O unit {}; merge {}; binds first: {}; burst {}. Source: {}",
            t.name,
            unit(c),
            c.merge,
            c.binds_first,
            c.burst,
            c.source
        );
    }
    let _ = writeln!(o, "\nRDS striping: {}", provisioned::RDS_GP3_SOURCE);
    let _ = writeln!(
        o,
        "\nServer limits: {}",
        provisioned::INSTANCE_LIMITS_SOURCE
    );
}

/// The profiles' microbenchmark figures in the model, a row as each is ready.
fn figures(mut o: String, profiles: &[Profile]) -> Result<()> {
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
    for p in profiles {
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
