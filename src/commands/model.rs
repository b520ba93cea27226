//! `pgiosim model`: the workload in virtual time on a device model.

use anyhow::Result;
use clap::Args;

use super::{client_host_threads, print_result};
use crate::args::WorkloadArgs;
use crate::device::instance::Instance;
use crate::device::name::{instance_preset, model_device};
use crate::device::rds_storage;
use crate::error::usage;
use crate::plan::{RunPlan, RunShape, Target, resolve_settings_from};
use crate::settings::Settings;
use crate::settings::managed::{self, Server, Service};
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
    /// (m6id.4xlarge: its instance store), GCP Local SSD as
    /// local-ssd:count=N (1-8, 16, 24 or 32 disks; for --instance's type,
    /// or type=TYPE: ScyllaDB's measurement for the type and count where
    /// there is one, else Google's published limits), or a path to a profile JSON
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
    /// each volume's own caps: a preset's size (m6id.4xlarge; a GCP size's
    /// limit is the one for the --device's disk type) or
    /// iops=N,mbps=N[,burst_iops=N,burst_mbps=N] as the provider publishes
    /// them (MB/s of 10^6 bytes, or mibps= and burst_mibps= for MiB/s as GCP
    /// publishes them; a burst lasts 30 minutes) [default: none; with
    /// --instance, the preset's].
    #[arg(long, value_name = "SIZE|iops=N,mbps=N,...")]
    pub volume_limits: Option<String>,
    /// Start from a managed service's documented defaults where they differ
    /// from PostgreSQL's, computed from --ram or the --instance preset's
    /// (one is needed) and --cpus: rds (RDS for PostgreSQL on gp3, io1,
    /// io2: shared_buffers {DBInstanceClassMemory/32768} 8 kB pages, a
    /// quarter of the RAM; maintenance_work_mem), cloud-sql (Cloud SQL on
    /// pd-ssd, hyperdisk-balanced: shared_buffers 33% of the RAM),
    /// azure-flexible (flexible server on azure-premium-ssd, -v2:
    /// shared_buffers a quarter of the RAM, an eighth up to 2 GiB;
    /// wal_buffers 16MB up to 4 vCPUs, else 128MB; checkpoint_timeout
    /// 10min; max_wal_size by the disk's size). --config and --set win
    /// over them. Not modelled, and named in a notice: TLS's CPU per
    /// statement, RDS's striping of a volume of 400 GiB or more over 4, a
    /// synchronous standby in another zone (--standby approximates it).
    /// Sources: docs/settings.md.
    #[arg(long, value_name = "NAME")]
    pub service: Option<String>,
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
        let (settings, mut shape) = match &self.service {
            None => (w.settings()?, w.shape_for_model()?),
            Some(name) => {
                let shape = w.shape_for_model()?;
                (self.service_settings(name, &shape, inst)?, shape)
            }
        };
        let notice = match inst {
            Some(i) => shape.apply_instance(i, &settings)?,
            None => None,
        };
        if w.cpu_is_host() {
            super::host_cpu(&mut shape, "model")?;
        }
        let limits = volume_limits(self.volume_limits.as_deref())?;
        let device = match self.rds_striping() {
            Some((array, said)) => {
                if !w.quiet {
                    eprintln!("model: {said}");
                }
                Some(array)
            }
            None => self.device.clone(),
        };
        let profile = model_device(device.as_deref(), inst, limits.as_ref(), w.quiet)?;
        // A calibrated profile describes its host's CPU as well as its disk.
        if let Some(host_us) = profile.cpu_probe_us
            && let Some(speed) = shape.apply_cpu_probe(host_us)?
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

impl ModelArgs {
    /// Under `--service rds`, the striped array RDS makes of a large gp3
    /// volume, and a sentence saying so.
    fn rds_striping(&self) -> Option<(String, String)> {
        let rds =
            self.service.as_deref().and_then(|s| Service::parse(s).ok()) == Some(Service::Rds);
        rds.then(|| self.device.as_deref().and_then(rds_storage::striped))
            .flatten()
    }

    /// The settings from `--service NAME`'s defaults for this server, then
    /// --config and --set; a notice names them and what the model leaves out.
    fn service_settings(
        &self,
        name: &str,
        shape: &RunShape,
        inst: Option<&Instance>,
    ) -> Result<Settings> {
        let w = &self.w;
        let service = Service::parse(name).map_err(usage)?;
        let ram_bytes = shape
            .ram_bytes
            .or(inst.map(Instance::memory_bytes))
            .ok_or_else(|| {
                usage(format!(
                    "--service {}: its defaults follow the server's memory; give --ram SIZE \
                     (or --instance SIZE)",
                    service.name()
                ))
            })?;
        let server = Server {
            ram_bytes,
            vcpus: shape.cpus.or(inst.map(|i| i.vcpus)).unwrap_or_else(|| {
                std::thread::available_parallelism().map_or(1, |n| n.get() as u32)
            }),
            disk_gib: self.device.as_deref().and_then(managed::azure_disk_gib),
        };
        let mut base = Settings::default();
        let defaults = service.defaults(&server);
        for d in &defaults {
            base.set(d.name, &d.value)
                .map_err(|e| usage(format!("--service {}: {e}", service.name())))?;
        }
        let settings = resolve_settings_from(base.clone(), w.config.as_deref(), &w.set, w.quiet)?;
        if !w.quiet {
            eprintln!(
                "{}",
                service_notice(service, &server, &defaults, &base, &settings)
            );
            eprintln!(
                "{}",
                not_modelled_notice(service, shape, self.rds_striping().is_some())
            );
        }
        Ok(settings)
    }
}

/// The line saying which of the service's defaults apply, and which the
/// user's settings replaced.
fn service_notice(
    service: Service,
    server: &Server,
    defaults: &[managed::Default],
    base: &Settings,
    settings: &Settings,
) -> String {
    let shown = |s: &Settings, name: &str| {
        s.to_display()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .unwrap_or_default()
    };
    let list = defaults
        .iter()
        .map(|d| {
            let (was, now) = (shown(base, d.name), shown(settings, d.name));
            if was == now {
                format!("{} = {now}", d.name)
            } else {
                format!("{} = {was} (replaced by {now})", d.name)
            }
        })
        .collect::<Vec<_>>()
        .join(", ");
    let rest = service
        .unsourced(server)
        .map(|u| format!("; PostgreSQL's defaults stay for {u}"))
        .unwrap_or_default();
    format!("model: --service {}: {list}{rest}", service.name())
}

/// The line naming what the service does that the model leaves out, with
/// the flag that comes nearest where there is one and it was not given.
fn not_modelled_notice(service: Service, shape: &RunShape, striped: bool) -> String {
    let mut parts: Vec<String> = service
        .not_modelled()
        .iter()
        // A large gp3 volume's striping is modelled (`rds_storage`).
        .filter(|p| !(striped && p.contains("striping")))
        .map(|p| {
            if p.contains("synchronous") && shape.standbys.is_empty() {
                format!("{p} (--standby with synchronous_standby_names approximates it)")
            } else {
                p.to_string()
            }
        })
        .collect();
    if shape.client_rtt.is_none() {
        parts.push(
            "clients reach the service over the network: give their round trip with \
             --client-rtt (their connections then talk TLS, as ssl = on has them)"
                .to_string(),
        );
    }
    format!(
        "model: --service {} is not modelled in full: {}",
        service.name(),
        parts.join("; ")
    )
}
