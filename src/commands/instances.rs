//! `pgiosim instances`: the cloud server presets, their sizing rule, CPU
//! classes and sources.

use std::fmt::Write as _;

use anyhow::Result;
use clap::{Args, Subcommand};

use crate::device::instance::server::Limits;
use crate::device::instance::{Instance, VolumeLimits};
use crate::error::usage;
use crate::output;

/// Flags of `instances`.
#[derive(Debug, Clone, Args)]
pub struct InstancesArgs {
    #[command(subcommand)]
    pub show: Option<InstancesCommand>,
}

/// `instances show`.
#[derive(Debug, Clone, Subcommand)]
pub enum InstancesCommand {
    /// Print the flags a preset stands for: `model --instance SIZE` is
    /// `model` with these, and gives the same answer.
    Show(ShowArgs),
}

/// Flags of `instances show`.
#[derive(Debug, Clone, Args)]
pub struct ShowArgs {
    /// The preset (m6id.4xlarge, Standard_D16s_v5; see `pgiosim instances`).
    pub size: String,
    /// Print only the flags, on one line, for a script.
    #[arg(long)]
    pub flags: bool,
}

/// `pgiosim instances [show SIZE]`.
pub fn run(args: &InstancesArgs) -> Result<()> {
    match &args.show {
        None => instances(),
        Some(InstancesCommand::Show(a)) => show(a),
    }
}

/// The server flags `--instance i` stands for: its vCPUs, threads per
/// core, processor, RAM and volume limits. The device is not among them:
/// `--instance` picks its store by default, or limits the volume given.
pub fn server_flags(i: &Instance) -> Vec<String> {
    let mut v = vec![
        "--cpus".to_string(),
        i.vcpus.to_string(),
        "--threads-per-core".into(),
        i.threads_per_core.to_string(),
    ];
    if let Some(c) = i.cpu_class() {
        v.extend(["--cpu".into(), c.key.to_string()]);
    }
    v.extend(["--ram".into(), ram_text(i.memory_bytes())]);
    if i.host_limits().is_some() {
        v.extend(["--volume-limits".into(), i.name.to_string()]);
    }
    v
}

/// RAM as postgresql.conf writes a size: whole GB where it is, else MB.
fn ram_text(bytes: u64) -> String {
    if bytes.is_multiple_of(1 << 30) {
        format!("{}GB", bytes >> 30)
    } else {
        format!("{}MB", bytes >> 20)
    }
}

/// `pgiosim instances show SIZE`.
fn show(a: &ShowArgs) -> Result<()> {
    let i = crate::device::instance::lookup(&a.size).ok_or_else(|| {
        usage(format!(
            "instances show {}: not a preset; see `pgiosim instances`",
            a.size
        ))
    })?;
    let flags = server_flags(i).join(" ");
    if a.flags {
        return output::stdout(&format!("{flags}\n"));
    }
    let mut o = String::new();
    let _ = writeln!(o, "{}", i.summary_line());
    let _ = writeln!(o, "\nmodel --instance {} is model with:\n  {flags}", i.name);
    if i.store.is_some() {
        let _ = writeln!(
            o,
            "and its instance store as the default device:\n  --device instance-store:type={}",
            i.name
        );
    } else {
        let volume = match i.provider {
            crate::device::instance::Provider::Aws => "an EBS volume such as gp3",
            crate::device::instance::Provider::Azure => {
                "an Azure volume such as azure-premium-ssd:tier=p30"
            }
            crate::device::instance::Provider::Gcp => {
                "a GCP volume such as pd-balanced, or local-ssd:count=N for N local SSDs on n2 \
                 and n2d"
            }
            crate::device::instance::Provider::Hetzner => {
                "hetzner-volume, hetzner-nvme or a calibrated profile"
            }
        };
        let _ = writeln!(
            o,
            "and no default device: it has no measured instance store (give --device: {volume})"
        );
    }
    if let Some(h) = i.host_limits() {
        match &h.limits {
            Limits::All(l, _) => {
                let _ = writeln!(o, "--volume-limits {} is {}", i.name, figures(l));
            }
            Limits::PerType(v) => {
                let _ = writeln!(
                    o,
                    "--volume-limits {} is, on each disk type (the --device's picks it):",
                    i.name
                );
                for t in v {
                    let _ = writeln!(o, "  {}: {}", t.disk_type, figures(&t.limits));
                }
                for t in crate::device::instance::gcp_vm_limits::DISK_TYPES {
                    if !v.iter().any(|x| x.disk_type == *t) {
                        let _ = writeln!(o, "  {t}: none (not found in the sources read)");
                    }
                }
                let _ = writeln!(o, "limits source: {}", v[0].source);
            }
        }
    } else if i.provider == crate::device::instance::Provider::Gcp {
        let _ = writeln!(
            o,
            "no per-VM disk limits: {}",
            crate::device::instance::gcp_vm_limits::NOT_FOUND
        );
    }
    let _ = writeln!(o, "source: {}", i.source());
    output::stdout(&o)
}

/// Limits as `--volume-limits` figures: iops=N,mbps=N[,burst_...] (or
/// mibps= where the provider publishes MiB/s).
fn figures(l: &VolumeLimits) -> String {
    let key = l.unit.key();
    format!(
        "iops={},{key}={}{}",
        l.baseline_iops,
        l.baseline_throughput,
        if l.bursts {
            format!(
                ",burst_iops={},burst_{key}={}",
                l.max_iops, l.max_throughput
            )
        } else {
            String::new()
        }
    )
}

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
         30 minutes where the size bursts; GCP's are per VM and disk type, on all the VM's \
         disks of that type together, and the --device type picks them: 'not found' where no \
         source with the figure was readable, and nothing is applied); --device \
         instance-store is the size's local NVMe, capped at its read and write IOPS and MB/s \
         (measured: ScyllaDB's iotune figures; derived: AWS's published IOPS, MB/s scaled \
         from a measured size; published limits: Google's, as ScyllaDB's data copies them; \
         each store profile's source gives its row or its arithmetic); on GCP n2 and n2d, --device local-ssd:count=N is N attached local \
         SSDs (see pgiosim devices).\nSources:",
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
        "  GCP local SSD: {}",
        crate::device::instance::aws_store::SCYLLA_GCP_SOURCE
    );
    for (key, text) in crate::device::instance::gcp_vm_limits::sources() {
        let _ = writeln!(o, "  GCP per-VM disk limits, {key}: {text}");
    }
    // The classes, their figures and sources are `pgiosim cpus`'s, once.
    let _ = writeln!(
        o,
        "\nCPU classes (CPU KEY ×SPEED above; 'not fixed': the provider picks the processor, \
         by zone or by type): `pgiosim cpus` lists each with the figures its speed comes from \
         and their sources."
    );
    output::stdout(&o)
}
