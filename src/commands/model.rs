//! `pgiosim model`: the workload in virtual time on a device model.

use anyhow::Result;
use clap::Args;

use super::{client_host_threads, print_result};
use crate::args::WorkloadArgs;
use crate::core::database::Database;
use crate::device_name::{instance_preset, model_device};
use crate::engine::sim::SimDevice;
use crate::error::usage;
use crate::plan::{RunPlan, Target};
use crate::stop::Stop;

/// Flags of `model`.
#[derive(Debug, Clone, Args)]
pub struct ModelArgs {
    #[command(flatten)]
    pub w: WorkloadArgs,
    /// Device profile: a shipped name (see `pgiosim devices`), a
    /// provisioned volume as TYPE:KEY=VALUE,... (gp3:iops=16000,mibps=1000;
    /// io2:iops=20000; azure-premium-ssd:tier=p40; pd-ssd:size_gib=1000),
    /// instance-store (with --instance) or an instance size with a store
    /// (m6id.4xlarge: its instance store), or a path to a profile JSON
    /// [default: nvme; with --instance, its instance store].
    #[arg(long, value_name = "NAME|TYPE:KEY=VALUE,...|FILE")]
    pub device: Option<String>,
    /// Model this cloud server size (m6id.4xlarge, Standard_D16s_v5,
    /// n2-standard-16; see `pgiosim instances`): --cpus becomes its vCPUs
    /// and --threads-per-core theirs,
    /// the default --os-cache its RAM − shared_buffers − 5% (at least
    /// 1 GiB), a volume of its provider gets the instance's own limits on
    /// top of its caps (m6id.4xlarge: 20,000 IOPS and 625 MB/s, bursting to
    /// 40,000 and 1,250 for 30 minutes), and --device instance-store is its
    /// local NVMe, capped at its read and write IOPS and MB/s. Explicit
    /// flags win over the preset.
    #[arg(long, value_name = "SIZE")]
    pub instance: Option<String>,
    /// The server's limits on all its network volumes together, on top of
    /// each volume's own caps: a preset's size (m6id.4xlarge) or
    /// iops=N,mbps=N[,burst_iops=N,burst_mbps=N] as the provider publishes
    /// them (MB/s of 10^6 bytes; a burst lasts 30 minutes) [default: none;
    /// with --instance, the preset's].
    #[arg(long, value_name = "SIZE|iops=N,mbps=N,...")]
    pub volume_limits: Option<String>,
}

/// `--volume-limits`, parsed; a bad one is a usage error.
pub fn volume_limits(
    spec: Option<&str>,
) -> Result<Option<crate::device::instance::server::HostLimits>> {
    spec.map(|s| crate::device::instance::server::parse_volume_limits(s).map_err(usage))
        .transpose()
}

/// `pgiosim model`: the plan on the device model, its report and exit code.
pub fn model(args: &ModelArgs, stop: &Stop) -> Result<i32> {
    let (mut result, _) = crate::execute::execute(args.plan()?, stop)?;
    client_host_threads(&mut result, &args.w);
    print_result(&result, &args.w)
}

impl ModelArgs {
    /// The model run these flags describe, with the --instance preset filled
    /// in where they did not say (and a line saying so unless quiet).
    pub fn plan(&self) -> Result<RunPlan> {
        let w = &self.w;
        let inst = instance_preset(self.instance.as_deref())?;
        let settings = w.settings()?;
        let mut shape = w.model_shape()?;
        let notice = match inst {
            Some(i) => shape.apply_instance(i, &settings)?,
            None => None,
        };
        if w.cpu_is_host() {
            super::host_cpu(&mut shape, "model")?;
        }
        let limits = volume_limits(self.volume_limits.as_deref())?;
        let profile = model_device(self.device.as_deref(), inst, limits.as_ref(), w.quiet)?;
        // A calibrated profile describes its host's CPU as well as its disk.
        if let Some(host_us) = profile.cpu_probe_us
            && let Some(speed) = shape.apply_cpu_probe(host_us)
            && !w.quiet
        {
            eprintln!(
                "model: {}'s host CPU at {speed:.2}x the machine of the workload's CPU figures \
                 (its CPU probe: {host_us:.2} µs a round); --cpu-speed overrides",
                profile.name
            );
        }
        if inst.is_none()
            && !w.quiet
            && let Some(unknown) = shape.server_unknowns()
        {
            eprintln!("model: {unknown}");
        }
        let plan = RunPlan::new(shape, settings, Target::Model(Box::new(profile)))?;
        if let Some(i) = inst
            && !w.quiet
        {
            eprintln!(
                "model: instance {}: {} vCPUs, {} per core{}",
                i.name,
                plan.cfg.cpus,
                plan.cfg.threads_per_core,
                notice.map(|n| format!(", {n}")).unwrap_or_default()
            );
        }
        Ok(plan)
    }
}

/// What `model` runs, built but not started: the database and its simulated
/// device (for benchmarks of the simulation itself).
pub fn model_parts(args: &ModelArgs) -> Result<(Database, SimDevice)> {
    crate::execute::model_parts(args.plan()?)
}
