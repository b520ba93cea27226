//! Instance presets: a cloud server's vCPUs and memory, the limits its host
//! puts on the network volumes attached to it, and its local instance store.
//!
//! `model --instance m6id.4xlarge` takes the vCPUs for `--cpus` and their
//! threads per core for `--threads-per-core`, the memory
//! for the default page cache (RAM − shared_buffers − [`overhead_bytes`]),
//! applies the instance's own volume limits on top of an EBS volume's (see
//! [`Instance::limit_volume`]; on GCP, the limit for the volume's disk
//! type, [`gcp_vm_limits`]), and offers the instance store as
//! `--device instance-store` (see [`aws_store`]). Explicit flags win over
//! the preset.
//!
//! The presets are data, one row per size, in `presets.tsv` beside this
//! file (read once, at first use, from the binary: `include_str!`). Every
//! row names its source, whose text is in the same file:
//!
//! * AWS `aws-2023`: the EC2 User Guide's archived source,
//!   github.com/awsdocs/amazon-ec2-user-guide (doc_source/, June 2023): the
//!   family pages (vCPUs, memory, instance-store volumes and their published
//!   IOPS), "Supported CPU options" (threads per core: 2 for the x86
//!   families, 1 for Graviton) and the "Amazon EBS–optimized instances"
//!   table (baseline and maximum throughput "MB/s, 128 KiB I/O", baseline
//!   and maximum IOPS "16 KiB I/O"; sizes marked with an asterisk "can
//!   support maximum performance for 30 minutes at least once every 24
//!   hours, after which they revert to their baseline performance").
//! * AWS `aws-2026`: the same tables in the current Amazon EC2 Instance
//!   Types Guide and Amazon EBS User Guide, read 2026-12, for the families
//!   the archive predates or lacked here: c6id, m7gd, m8gd, i7i, and the
//!   EBS-only m7i, r7i, c7i (Xeon 8488C) and m7a, r7a, c7a (EPYC 9R14,
//!   one thread a core: SMT off).
//! * Azure `azure`: Dsv5 sizes, vCPUs, memory and "Uncached Premium SSD"
//!   IOPS and MB/s with their burst figures ("Burst speeds can be
//!   maintained for up to 30 minutes at a time"), from
//!   <https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dsv5-series>.
//!   Dsv5 has no local disk.
//! * Azure `azure-dasv5`, `azure-edsv5`: Dasv5 (no local disk) and Edsv5
//!   (its temp disk, unmeasured, is not modelled) from their size
//!   pages, as Dsv5. `azure-lsv3`, `azure-lasv3`, `azure-lsv4`,
//!   `azure-lasv4`: the storage-optimized L series, from their size pages in
//!   github.com/MicrosoftDocs/azure-compute-docs: vCPUs, memory, uncached
//!   Premium SSD limits with their 30-minute burst, and the local NVMe
//!   disks with Microsoft's IOPS (v3: one "NVMe Disk IOPS" figure; v4:
//!   random read and write IOPS, "best case" at QD 256).
//! * GCP `gcp`: n2-standard vCPUs and memory (4 GB per vCPU) from
//!   <https://cloud.google.com/compute/docs/general-purpose-machines>; `gcp-n2d-c3`:
//!   n2d-standard and c3-standard from the same page, checked against Spare
//!   Cores' dataset. GCP's per-VM disk limits depend on the disk type and the
//!   vCPU count together: they are not columns of `presets.tsv` but rows of
//!   [`gcp_vm_limits`] (Persistent Disk's, from Google's table as its
//!   gcpdiag copies it; Hyperdisk Balanced's were not found), and the
//!   `--device` type picks the row. Local SSD
//!   is optional on n2 and n2d (a count the user picks: `--device
//!   local-ssd:count=N`, [`local_ssd`]) and a separate `-lssd` type on c3
//!   (not modelled). `gcp-z3`: the z3 types, from Spare Cores' records (lscpu,
//!   dmidecode, lsblk), with their Titanium SSD's figures from ScyllaDB's
//!   data, Google's limits rather than measurements; Persistent Disk per-VM
//!   limits for the 88- and 176-vCPU types only (the source predates the
//!   others).
//! * Hetzner `hetzner`: CCX (dedicated vCPUs), CPX and CX (shared), CAX
//!   (Arm). Hetzner publishes no per-type table in the sources read, so
//!   vCPUs, memory and the local disk's size are Spare Cores' record of each
//!   type (lscpu, dmidecode, lsblk). Hetzner publishes no Volume limits, and
//!   no measurement of its local NVMe was found: the presets show the disk
//!   ([`Instance::unmeasured_disk`]) but have no store profile.
//!
//! The local stores' IOPS and MB/s are ScyllaDB's measurements where the
//! size was measured (AWS, Azure), derived from them where not (AWS), and
//! Google's limits as ScyllaDB's data copies them (GCP z3): [`aws_store`].
//!
//! Each row also names the processor the size runs on, a class of
//! [`cpu_class`] with its speed per core relative to the EPYC 9454P that
//! pgiosim's CPU figures were measured on: [`Instance::cpu_class`].

pub mod aws_store;
pub mod cpu_class;
pub mod cpu_name;
pub mod gcp_vm_limits;
pub mod io_cpu;
pub mod local_ssd;
mod presets_table;
pub mod server;

use presets_table::parse_table;
use presets_table::{Row, Tsv, at_line, read_tsv};

use std::sync::LazyLock;

use crate::device::profile::{Profile, fmt_num};

pub use aws_store::{Store, StoreFigures};
pub use cpu_class::{CpuClass, cpu_class, cpu_classes, cpu_sources};

const MIB: f64 = 1_048_576.0;
const GIB: f64 = 1_073_741_824.0;

/// The part of RAM neither shared_buffers nor the page cache gets: the
/// kernel, page tables, the backends' private memory (work_mem, catalog
/// caches) and the rest of the system. A guess, stated: 5% of RAM, at least
/// [`OVERHEAD_MIN_BYTES`].
pub const OVERHEAD_FRACTION: f64 = 0.05;
/// Least overhead, whatever the RAM (see [`OVERHEAD_FRACTION`]).
pub const OVERHEAD_MIN_BYTES: u64 = 1 << 30;

/// Who sells the instance: which volumes its limits apply to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Provider {
    Aws,
    Azure,
    Gcp,
    Hetzner,
}

impl Provider {
    /// The provider's name, and what its volumes are called.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Aws => "AWS",
            Provider::Azure => "Azure",
            Provider::Gcp => "GCP",
            Provider::Hetzner => "Hetzner",
        }
    }

    fn parse(s: &str) -> Option<Provider> {
        [
            Provider::Aws,
            Provider::Azure,
            Provider::Gcp,
            Provider::Hetzner,
        ]
        .into_iter()
        .find(|p| p.name() == s)
    }
}

/// The unit a provider publishes a server's throughput limit in, kept as
/// published and converted once, where the limit is applied.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThroughputUnit {
    /// MB/s, 10^6 bytes a second (AWS, Azure).
    MBps,
    /// MiB/s, 2^20 bytes a second (GCP).
    MiBps,
}

impl ThroughputUnit {
    /// `v` of this unit in MiB/s.
    pub fn mib_s(self, v: f64) -> f64 {
        match self {
            ThroughputUnit::MBps => v * 1e6 / MIB,
            ThroughputUnit::MiBps => v,
        }
    }

    /// "MB/s" or "MiB/s".
    pub fn label(self) -> &'static str {
        match self {
            ThroughputUnit::MBps => "MB/s",
            ThroughputUnit::MiBps => "MiB/s",
        }
    }

    /// Its key in `--volume-limits iops=N,mbps=N` ("mbps", "mibps").
    pub fn key(self) -> &'static str {
        match self {
            ThroughputUnit::MBps => "mbps",
            ThroughputUnit::MiBps => "mibps",
        }
    }
}

/// The limits an instance puts on its network volumes together (on GCP,
/// on its disks of one type: [`gcp_vm_limits`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeLimits {
    /// Sustained throughput, in `unit`.
    pub baseline_throughput: f64,
    /// Throughput while bursting (equal to the baseline without a burst).
    pub max_throughput: f64,
    /// MB/s (AWS, Azure) or MiB/s (GCP), as the provider publishes it.
    pub unit: ThroughputUnit,
    /// Sustained IOPS.
    pub baseline_iops: f64,
    /// IOPS while bursting.
    pub max_iops: f64,
    /// Whether the instance bursts to the maximum (for 30 minutes, AWS: "at
    /// least once every 24 hours"; Azure: "at a time"): whether either
    /// maximum is above its baseline.
    pub bursts: bool,
}

/// How long a burst at the maximum lasts, s: 30 minutes, on both AWS and
/// Azure.
pub const BURST_S: f64 = 1800.0;

/// Local disk volumes without figures: how many, and each one's size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalDisk {
    pub volumes: u32,
    /// GB (10^9 bytes).
    pub volume_gb: u32,
}

/// A cloud server size.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Instance {
    /// As the provider writes it: m6id.4xlarge, Standard_D16s_v5, n2-standard-16.
    pub name: &'static str,
    pub provider: Provider,
    pub vcpus: u32,
    /// Hardware threads per physical core: 2 where the vCPUs are
    /// hyperthreads, 1 where each is a core (Graviton).
    pub threads_per_core: u32,
    /// GiB as the provider states it (AWS and Azure: GiB; GCP: GB, taken as GiB).
    pub memory_gib: f64,
    /// Limits on attached network volumes; None: not published here, or
    /// (GCP) set per disk type instead ([`Instance::host_limits`]).
    pub volume_limits: Option<VolumeLimits>,
    /// The local instance store; None: the size has none, or its local
    /// disk has no measurement ([`Instance::unmeasured_disk`]).
    pub store: Option<Store>,
    /// A local NVMe disk known to exist but never measured (Hetzner):
    /// shown by `pgiosim instances`, with no store profile.
    pub unmeasured_disk: Option<LocalDisk>,
    /// The source key of the preset's row (`aws-2023`, `azure-lsv4`,
    /// `gcp`, `hetzner`, ...); its text: [`Instance::source`].
    pub source_key: &'static str,
    /// The key of the CPU class the size runs on (`xeon-8375c`,
    /// `graviton3`); None where the provider does not fix the processor
    /// (GCP n2, Hetzner CX). The class: [`Instance::cpu_class`].
    pub cpu_key: Option<&'static str>,
}

/// The preset table, one row per size: see its header.
const PRESETS_TSV: &str = include_str!("presets.tsv");

/// The presets and their sources, parsed once.
struct Table {
    instances: Vec<Instance>,
    /// (key, text) of every source line, in file order.
    sources: Vec<(&'static str, &'static str)>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    parse_table(PRESETS_TSV).unwrap_or_else(|e| panic!("src/device/instance/presets.tsv: {e}"))
});

/// Every preset, AWS first, by family and size.
pub fn instances() -> &'static [Instance] {
    &TABLE.instances
}

/// The preset named `name` (case-insensitive, as providers' consoles accept it).
pub fn lookup(name: &str) -> Option<&'static Instance> {
    instances()
        .iter()
        .find(|i| i.name.eq_ignore_ascii_case(name))
}

/// The names of every preset, for error messages and `pgiosim instances`.
pub fn names() -> Vec<&'static str> {
    instances().iter().map(|i| i.name).collect()
}

/// Every source the presets cite, (key, text), in the table's order.
pub fn sources() -> &'static [(&'static str, &'static str)] {
    &TABLE.sources
}

/// [`OVERHEAD_FRACTION`] of `memory_bytes`, at least [`OVERHEAD_MIN_BYTES`].
pub fn overhead_bytes(memory_bytes: u64) -> u64 {
    ((memory_bytes as f64 * OVERHEAD_FRACTION) as u64).max(OVERHEAD_MIN_BYTES)
}

impl Instance {
    /// RAM in bytes.
    pub fn memory_bytes(&self) -> u64 {
        (self.memory_gib * GIB) as u64
    }

    /// The default page cache: RAM − shared_buffers − [`overhead_bytes`];
    /// an error when shared_buffers leaves none.
    pub fn page_cache_bytes(&self, shared_buffers: u64) -> Result<u64, String> {
        let ram = self.memory_bytes();
        server::page_cache_bytes(ram, shared_buffers).ok_or_else(|| {
            format!(
                "--instance {}: shared_buffers = {:.1} GiB leaves no page cache in its {} GiB \
                 of RAM ({:.1} GiB kept for the kernel and the backends)",
                self.name,
                shared_buffers as f64 / GIB,
                self.memory_gib,
                overhead_bytes(ram) as f64 / GIB
            )
        })
    }

    /// Where the figures come from: the text of the row's source.
    pub fn source(&self) -> &'static str {
        sources()
            .iter()
            .find(|(k, _)| *k == self.source_key)
            .map(|(_, t)| *t)
            .expect("every row's source has a text: checked when the table is read")
    }

    /// The CPU class the size runs on, with its speed per core relative to
    /// the EPYC 9454P; None where the provider does not fix the processor.
    pub fn cpu_class(&self) -> Option<&'static CpuClass> {
        self.cpu_key.and_then(cpu_class)
    }

    /// One line for `pgiosim instances`.
    pub fn summary_line(&self) -> String {
        let limits = match self.volume_limits {
            None if self.provider == Provider::Gcp => self.gcp_limits_text(),
            None if self.provider == Provider::Hetzner => {
                "volume limits: none published".to_string()
            }
            None => "volume limits: not applied".to_string(),
            Some(l) if l.bursts => format!(
                "volumes: {} IOPS, {} {unit} (burst {} IOPS, {} {unit} for 30 min)",
                fmt_num(l.baseline_iops),
                fmt_num(l.baseline_throughput),
                fmt_num(l.max_iops),
                fmt_num(l.max_throughput),
                unit = l.unit.label()
            ),
            Some(l) => format!(
                "volumes: {} IOPS, {} {}",
                fmt_num(l.baseline_iops),
                fmt_num(l.baseline_throughput),
                l.unit.label()
            ),
        };
        let store = match self.store {
            None => String::new(),
            Some(s) => format!(
                " | {}: {} read / {} write IOPS, {} / {} MB/s ({})",
                if self.provider == Provider::Aws {
                    "instance store"
                } else {
                    "local NVMe"
                },
                fmt_num(s.read_iops),
                fmt_num(s.write_iops),
                fmt_num(s.read_mb_s.round()),
                fmt_num(s.write_mb_s.round()),
                match s.figures {
                    StoreFigures::Measured { .. } => "measured",
                    StoreFigures::Published { .. } => "published limits",
                    StoreFigures::Derived { .. } => "derived",
                }
            ),
        };
        let store = match self.unmeasured_disk {
            Some(d) => format!(
                "{store} | local NVMe {} × {} GB: not measured, no store profile",
                d.volumes,
                fmt_num(f64::from(d.volume_gb))
            ),
            None => store,
        };
        // The key, not the full name: the line is long already, and the
        // CPU classes are listed in full below the presets.
        let cpu = match self.cpu_class() {
            Some(c) => format!("CPU {} ×{:.2}", c.key, c.speed),
            None => "CPU not fixed".to_string(),
        };
        format!(
            "{:<27} {:<7} {:>3} vCPUs ({} per core) {:>6} GiB | {cpu} | {limits}{store}",
            self.name,
            self.provider.name(),
            self.vcpus,
            self.threads_per_core,
            fmt_num(self.memory_gib)
        )
    }

    /// `volume` (one of this provider's network volumes, of `--device`
    /// type `disk_type`) as attached to this instance: the instance's limits
    /// on top of the volume's own caps ([`server::limit_volume`]);
    /// unchanged where it has none for that type.
    pub fn limit_volume(&self, disk_type: &str, volume: &Profile) -> Profile {
        self.host_limits()
            .and_then(|h| server::limit_volume(&h, disk_type, volume).ok())
            .unwrap_or_else(|| volume.clone())
    }

    /// Its limits on its network volumes, as `--volume-limits SIZE` gives
    /// them: one set on them all (AWS, Azure), or one per disk type (GCP,
    /// [`gcp_vm_limits`]); None where none is published or found.
    pub fn host_limits(&self) -> Option<server::HostLimits> {
        let limits = match self.provider {
            Provider::Gcp => {
                let rows = self.gcp_limits();
                if rows.is_empty() {
                    return None;
                }
                server::Limits::PerType(
                    rows.iter()
                        .map(|r| server::TypeLimits {
                            disk_type: r.disk_type,
                            limits: r.volume_limits(),
                            source: r.source(),
                        })
                        .collect(),
                )
            }
            _ => server::Limits::All(self.volume_limits?, self.source().to_string()),
        };
        Some(server::HostLimits {
            limits,
            tag: self.tag(),
            host: self.name.to_string(),
        })
    }

    /// GCP: its per-VM limit for each disk type that has one
    /// ([`gcp_vm_limits`]); empty elsewhere.
    pub fn gcp_limits(&self) -> Vec<&'static gcp_vm_limits::DiskLimit> {
        if self.provider != Provider::Gcp {
            return Vec::new();
        }
        gcp_vm_limits::for_machine(gcp_vm_limits::series_of(self.name), self.vcpus)
    }

    /// GCP's limits as `pgiosim instances` shows them: each disk type's,
    /// or that none was found.
    fn gcp_limits_text(&self) -> String {
        let rows = self.gcp_limits();
        let parts: Vec<String> = gcp_vm_limits::DISK_TYPES
            .iter()
            .map(|t| match rows.iter().find(|r| r.disk_type == *t) {
                Some(r) => format!("{t} {} IOPS, {} MiB/s", fmt_num(r.iops), fmt_num(r.mib_s)),
                None if gcp_vm_limits::unsupported(gcp_vm_limits::series_of(self.name), t)
                    .is_some() =>
                {
                    format!("{t} not supported")
                }
                None => format!("{t} not found"),
            })
            .collect();
        format!("per-VM disk limits: {}", parts.join("; "))
    }

    /// The family, for messages that list sizes: m6id.4xlarge → m6id,
    /// Standard_L16s_v3 → Lsv3, n2d-standard-16 → n2d-standard,
    /// z3-highmem-8-highlssd → z3-highmem-highlssd, ccx33 → ccx.
    pub fn family(&self) -> String {
        match self.provider {
            Provider::Aws => self.name.split('.').next().unwrap_or(self.name).into(),
            Provider::Azure => {
                // Standard_L64as_v4: the letters, the size's digits, the rest.
                let s = self.name.trim_start_matches("Standard_");
                let digits = s.find(|c: char| c.is_ascii_digit()).unwrap_or(s.len());
                let rest = s[digits..].trim_start_matches(|c: char| c.is_ascii_digit());
                format!("{}{}", &s[..digits], rest.replace('_', ""))
            }
            // Without the vCPU count: z3-highmem-8-highlssd → z3-highmem-highlssd.
            Provider::Gcp => self
                .name
                .split('-')
                .filter(|p| !p.bytes().all(|b| b.is_ascii_digit()))
                .collect::<Vec<_>>()
                .join("-"),
            Provider::Hetzner => self
                .name
                .trim_end_matches(|c: char| c.is_ascii_digit())
                .into(),
        }
    }

    /// The name as a profile name part: m6id.4xlarge → m6id-4xlarge.
    fn tag(&self) -> String {
        self.name.to_ascii_lowercase().replace(['.', '_'], "-")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shipped(name: &str) -> Profile {
        Profile::shipped(name).unwrap()
    }

    #[test]
    fn the_published_m6id_4xlarge() {
        let i = lookup("M6ID.4XLARGE").unwrap();
        assert_eq!((i.vcpus, i.threads_per_core, i.memory_gib), (16, 2, 64.0));
        assert_eq!(lookup("m7g.4xlarge").unwrap().threads_per_core, 1);
        assert_eq!(lookup("m6gd.large").unwrap().threads_per_core, 1);
        assert_eq!(lookup("m8gd.4xlarge").unwrap().threads_per_core, 1);
        assert_eq!(lookup("i3en.large").unwrap().threads_per_core, 2);
        let l = i.volume_limits.unwrap();
        assert_eq!(
            (
                l.baseline_iops,
                l.max_iops,
                l.baseline_throughput,
                l.max_throughput,
                l.bursts
            ),
            (20000.0, 40000.0, 625.0, 1250.0, true)
        );
        let s = i.store.unwrap();
        assert_eq!((s.read_iops, s.write_iops), (268333.0, 134167.0));
        assert!(lookup("m6id.5xlarge").is_none());
        assert!(names().contains(&"Standard_D16s_v5"));
        assert!(i.source().contains("ebs-optimized.html"), "{}", i.source());
    }

    #[test]
    fn the_families_users_buy_now_are_there() {
        // Local-disk families, then those without one: every size has EBS
        // limits, and a store where it should.
        let with_store = ["m7gd", "m8gd", "c6id", "r6id", "i4i", "i7i"];
        let without = [
            "m6g", "r6g", "c6g", "r7g", "c7g", "m8g", "r8g", "c8g", "m7i", "r7i", "c7i", "m7a",
            "r7a", "c7a",
        ];
        let families = with_store.iter().map(|f| (f, true));
        for (family, store) in families.chain(without.iter().map(|f| (f, false))) {
            // Not every local-disk family has a 12xlarge.
            let twelve = (!store).then_some("12xlarge");
            let sizes = [
                "large", "xlarge", "2xlarge", "4xlarge", "8xlarge", "16xlarge",
            ];
            for size in sizes.into_iter().chain(twelve) {
                let name = format!("{family}.{size}");
                let i = lookup(&name).unwrap_or_else(|| panic!("{name} is not a preset"));
                assert_eq!(i.store.is_some(), store, "{name}: store");
                assert!(i.volume_limits.is_some(), "{name} has no EBS limits");
            }
        }
        // vCPUs and memory per size, from the Instance Types Guide.
        let c = lookup("c6id.4xlarge").unwrap();
        assert_eq!((c.vcpus, c.memory_gib, c.threads_per_core), (16, 32.0, 2));
        let g = lookup("m8gd.48xlarge").unwrap();
        assert_eq!((g.vcpus, g.memory_gib, g.threads_per_core), (192, 768.0, 1));
        let i7 = lookup("i7i.24xlarge").unwrap();
        assert_eq!((i7.vcpus, i7.memory_gib), (96, 768.0));
        assert_eq!(i7.store.unwrap().volumes, 6);
        let r = lookup("r8g.4xlarge").unwrap();
        assert_eq!((r.vcpus, r.memory_gib, r.threads_per_core), (16, 128.0, 1));
        assert_eq!(r.cpu_key, Some("graviton4"));
        let l = r.volume_limits.unwrap();
        assert_eq!((l.baseline_throughput, l.max_throughput), (625.0, 1250.0));
        assert_eq!((l.baseline_iops, l.max_iops), (20_000.0, 40_000.0));
        let c = lookup("c6g.large").unwrap();
        assert_eq!(
            (c.vcpus, c.memory_gib, c.cpu_key),
            (2, 4.0, Some("graviton2"))
        );
        let r = lookup("r8g.24xlarge").unwrap();
        assert_eq!((r.vcpus, r.memory_gib), (96, 768.0));
        let m7i = lookup("m7i.4xlarge").unwrap();
        assert_eq!(
            (m7i.vcpus, m7i.memory_gib, m7i.threads_per_core),
            (16, 64.0, 2)
        );
        let l = m7i.volume_limits.unwrap();
        assert_eq!(
            (
                l.baseline_throughput,
                l.max_throughput,
                l.baseline_iops,
                l.max_iops
            ),
            (625.0, 1250.0, 20000.0, 40000.0)
        );
        // AMD's 9R14 runs one thread a core: 16 vCPUs are 16 cores.
        let r7a = lookup("r7a.4xlarge").unwrap();
        assert_eq!(
            (r7a.vcpus, r7a.memory_gib, r7a.threads_per_core),
            (16, 128.0, 1)
        );
        let c7i = lookup("c7i.48xlarge").unwrap();
        assert_eq!((c7i.vcpus, c7i.memory_gib), (192, 384.0));
        assert_eq!(c7i.volume_limits.unwrap().max_iops, 240000.0);
    }

    #[test]
    fn every_preset_is_consistent() {
        for i in instances() {
            // At least 2 vCPUs and 4 GB (Hetzner's 4 GB: 4,000 MiB).
            assert!(i.vcpus >= 2 && i.memory_gib >= 3.9, "{}", i.name);
            assert_eq!(i.vcpus % i.threads_per_core, 0, "{}", i.name);
            // x86 two threads a core, Graviton (the "g" after the
            // generation digit: m6gd, m7g, m8gd) one, and the EPYC 9R14
            // families (m7a, r7a, c7a: SMT off) one.
            if i.provider == Provider::Aws {
                let graviton = i.name.as_bytes()[2] == b'g';
                let smt_off = i.cpu_key == Some("epyc-9r14");
                assert_eq!(
                    i.threads_per_core,
                    if graviton || smt_off { 1 } else { 2 },
                    "{}",
                    i.name
                );
            }
            if let Some(l) = i.volume_limits {
                assert!(
                    l.max_iops >= l.baseline_iops && l.max_throughput >= l.baseline_throughput,
                    "{}",
                    i.name
                );
            }
            // The provider's memory per vCPU is one of its ratios
            // (Hetzner's "4 GB" is 4,000 MiB in the VM's DMI table).
            let per_vcpu = i.memory_gib / f64::from(i.vcpus);
            let unit = if i.provider == Provider::Hetzner {
                1000.0 / 1024.0
            } else {
                1.0
            };
            // Azure's Standard_E96ds_v5 (672 GB) and GCP's c4-standard
            // (3.75 GB a vCPU, 7 GB at 2) are the exceptions.
            let c4 = i.name.starts_with("c4-standard-")
                && (per_vcpu == 3.75 || (i.vcpus == 2 && per_vcpu == 3.5));
            assert!(
                [2.0, 4.0, 8.0].iter().any(|r| r * unit == per_vcpu)
                    || (i.name == "Standard_E96ds_v5" && per_vcpu == 7.0)
                    || c4,
                "{}",
                i.name
            );
            // A measured or derived store where one is sold: AWS's "d"
            // families (m6id, m6gd) and storage-optimized "i" ones, Azure's
            // L series. Hetzner's local disks: shown, never measured.
            let family = i.family();
            let sold = match i.provider {
                Provider::Aws => family.contains('d') || family.starts_with('i'),
                // Edsv5's temp disk (unmeasured) is not modelled.
                Provider::Azure => family.starts_with('L'),
                // z3 comes with Titanium SSD; n2 and n2d attach Local SSD
                // on request (--device local-ssd), c3 sells it as -lssd types.
                Provider::Gcp => family.starts_with("z3"),
                Provider::Hetzner => false,
            };
            assert_eq!(i.store.is_some(), sold, "{}", i.name);
            assert_eq!(
                i.unmeasured_disk.is_some(),
                i.provider == Provider::Hetzner,
                "{}",
                i.name
            );
            assert!(!i.source().is_empty());
        }
        let names = names();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "duplicate preset names");
    }

    #[test]
    fn a_broken_table_names_its_line() {
        let e = parse_table("@a\tx\nm6i.large\tAWS\t2\n").err().unwrap();
        assert!(e.starts_with("line 2: 3 columns"), "{e}");
        let row = "m6i.large\tAWS\t2\t2\t8\t-\t-\t-\t-\t-\t-\t-\t-\tnone\t-\n";
        let e = parse_table(row).err().unwrap();
        assert!(e.contains("source \"none\" has no @ line"), "{e}");
        let text = format!("@none\tx\n{}", row.replace("AWS", "Aws"));
        let e = parse_table(Box::leak(text.into_boxed_str())).err().unwrap();
        assert!(e.contains("provider \"Aws\""), "{e}");
        let text = format!("@none\tx\n{}", row.replace("\t-\n", "\txeon-9999\n"));
        let e = parse_table(Box::leak(text.into_boxed_str())).err().unwrap();
        assert!(
            e.contains("cpu \"xeon-9999\" is not a key of cpus.tsv"),
            "{e}"
        );
    }

    #[test]
    fn page_cache_is_ram_less_shared_buffers_and_overhead() {
        let i = lookup("m6id.4xlarge").unwrap();
        let sb = 16u64 << 30;
        let got = i.page_cache_bytes(sb).unwrap();
        let expect = (64u64 << 30) - sb - (0.05 * (64u64 << 30) as f64) as u64;
        assert_eq!(got, expect);
        // Small machines keep at least 1 GiB.
        let small = lookup("c6i.large").unwrap();
        assert_eq!(overhead_bytes(small.memory_bytes()), OVERHEAD_MIN_BYTES);
        let e = small.page_cache_bytes(3u64 << 30).unwrap_err();
        assert!(e.contains("leaves no page cache"), "{e}");
    }

    #[test]
    fn a_slower_volume_is_left_alone_but_for_the_throughput() {
        let i = lookup("m6id.4xlarge").unwrap();
        let gp3 = shipped("gp3");
        let p = i.limit_volume("gp3", &gp3);
        assert_eq!(p.caps.iops, Some(3000.0));
        assert_eq!(p.caps.mib_s, Some(125.0));
        assert!(p.caps.burst.is_none());
        assert_eq!(p.name, "gp3-on-m6id-4xlarge");
    }

    #[test]
    fn a_faster_volume_gets_the_instance_burst() {
        let i = lookup("m6id.4xlarge").unwrap();
        let io2 = shipped("io2");
        let p = i.limit_volume("io2", &io2);
        assert_eq!(p.caps.iops, Some(40000.0));
        let b = p.caps.burst.unwrap();
        assert_eq!((b.baseline_iops, b.size_ios), (20000.0, 20000.0 * BURST_S));
        // An instance that does not burst caps at its one rate.
        let big = lookup("m6id.8xlarge").unwrap();
        let p = big.limit_volume("io2", &io2);
        assert_eq!((p.caps.iops, p.caps.burst), (Some(40000.0), None));
        // The profile stays valid.
        Profile::from_json(&p.to_json().to_string(), "p").unwrap();
    }

    #[test]
    fn two_bursts_merge_into_the_lower_baseline_and_smaller_bucket() {
        // i4i.large: 2,500 IOPS baseline, 40,000 burst; gp2 500 GiB: 1,500
        // baseline, 3,000 burst on 5.4 M credits.
        let i = lookup("i4i.large").unwrap();
        let p = i.limit_volume("gp2", &shipped("gp2"));
        assert_eq!(p.caps.iops, Some(3000.0));
        let b = p.caps.burst.unwrap();
        assert_eq!((b.baseline_iops, b.size_ios), (1500.0, 5.4e6));
        Profile::from_json(&p.to_json().to_string(), "p").unwrap();
    }

    #[test]
    fn azure_l_series_from_the_size_pages() {
        // Lsv4 page: 16 vCPUs, 128 GiB, 25,600 IOPS and 848 MB/s uncached,
        // 40,000 and 1,250 burst; 4 × 960 GB, 1,100,000 / 440,000 IOPS.
        let i = lookup("standard_l16s_v4").unwrap();
        assert_eq!(
            (i.provider, i.vcpus, i.threads_per_core, i.memory_gib),
            (Provider::Azure, 16, 2, 128.0)
        );
        let l = i.volume_limits.unwrap();
        assert_eq!(
            (
                l.baseline_iops,
                l.baseline_throughput,
                l.max_iops,
                l.max_throughput
            ),
            (25600.0, 848.0, 40000.0, 1250.0)
        );
        let s = i.store.unwrap();
        assert_eq!((s.volumes, s.volume_gb), (4, 960));
        assert_eq!(
            (s.published_read_iops, s.published_write_iops),
            (Some(1_100_000.0), Some(440_000.0))
        );
        // Lsv3 publishes one IOPS figure, and no write IOPS.
        let s = lookup("Standard_L8s_v3").unwrap().store.unwrap();
        assert_eq!(
            (s.volumes, s.published_read_iops, s.published_write_iops),
            (1, Some(400_000.0), None)
        );
        let i = lookup("Standard_L64as_v4").unwrap();
        assert_eq!(i.cpu_key, Some("epyc-9v74"));
        assert_eq!(i.family(), "Lasv4");
        assert!(i.source().contains("lasv4-series.md"), "{}", i.source());
    }

    #[test]
    fn hetzner_from_public_data_without_a_store() {
        let i = lookup("CCX33").unwrap();
        assert_eq!(
            (i.provider, i.vcpus, i.threads_per_core, i.memory_gib),
            (Provider::Hetzner, 8, 2, 31.25)
        );
        assert!(i.volume_limits.is_none() && i.store.is_none());
        assert_eq!(
            i.unmeasured_disk,
            Some(LocalDisk {
                volumes: 1,
                volume_gb: 246
            })
        );
        assert!(
            i.summary_line()
                .contains("local NVMe 1 × 246 GB: not measured, no store profile"),
            "{}",
            i.summary_line()
        );
        assert!(i.store_profile(&shipped("nvme")).is_none());
        // Arm, and the shared vCPUs as lscpu shows them: one thread a core.
        assert_eq!(lookup("cax41").unwrap().threads_per_core, 1);
        assert_eq!(lookup("cpx62").unwrap().threads_per_core, 1);
        assert_eq!(lookup("cx53").unwrap().cpu_key, None);
        assert_eq!(i.family(), "ccx");
        assert!(i.source().contains("sc-inspector-data"), "{}", i.source());
        // Volumes given without figures are a disk; IOPS without figures
        // say nothing of their source and are refused.
        let row = "x1\tHetzner\t2\t1\t4\t-\t-\t-\t-\t1x40\t1000\t-\t-\ts\t-\n";
        let text = format!("@s\tx\n{row}");
        let e = parse_table(Box::leak(text.into_boxed_str())).err().unwrap();
        assert!(e.contains("store IOPS without store_figures"), "{e}");
    }

    #[test]
    fn gcp_c4_n4_c4a_from_googles_page_and_spare_cores() {
        let c4 = lookup("c4-standard-16").unwrap();
        assert_eq!(
            (c4.vcpus, c4.threads_per_core, c4.memory_gib),
            (16, 2, 60.0)
        );
        assert_eq!(lookup("c4-standard-2").unwrap().memory_gib, 7.0);
        assert_eq!(
            lookup("c4-standard-192").unwrap().cpu_key,
            Some("xeon-8581c")
        );
        // Granite Rapids sizes are left out.
        assert!(lookup("c4-standard-144").is_none());
        let n4 = lookup("n4-standard-80").unwrap();
        assert_eq!(
            (n4.vcpus, n4.threads_per_core, n4.memory_gib),
            (80, 2, 320.0)
        );
        let a = lookup("c4a-standard-72").unwrap();
        assert_eq!((a.vcpus, a.threads_per_core, a.memory_gib), (72, 1, 288.0));
        assert!(a.cpu_class().is_none(), "no Geekbench run: CPU not fixed");
        // Hyperdisk only, and Hyperdisk Balanced's per-VM limits were not
        // found: no limits, and the line says so.
        for i in [c4, n4, a] {
            assert!(i.host_limits().is_none() && i.store.is_none(), "{}", i.name);
            assert!(
                i.summary_line().contains(
                    "per-VM disk limits: pd-balanced not supported; pd-ssd not supported; \
                     hyperdisk-balanced not found"
                ),
                "{}",
                i.summary_line()
            );
        }
        assert!(a.summary_line().contains("CPU not fixed"));
    }

    #[test]
    fn gcp_presets_limit_each_disk_type_by_series_and_vcpus() {
        let i = lookup("n2-standard-16").unwrap();
        assert_eq!((i.vcpus, i.memory_gib), (16, 64.0));
        assert!(i.volume_limits.is_none(), "GCP's limits are by disk type");
        // pd-ssd at 2,000 GiB allows 66,000 IOPS and 1,200 MiB/s; the
        // n2-standard-16 allows 25,000 IOPS on its pd-ssd disks.
        let pd = crate::device::provisioned::parse("pd-ssd:size_gib=2000", Profile::shipped)
            .unwrap()
            .unwrap();
        let p = i.limit_volume("pd-ssd", &pd);
        assert_eq!((p.caps.iops, p.caps.mib_s), (Some(25000.0), Some(1200.0)));
        assert_eq!(p.name, "pd-ssd-2000gib-on-n2-standard-16");
        // pd-balanced's row, and none for Hyperdisk Balanced: unchanged.
        let p = i.limit_volume("pd-balanced", &shipped("pd-balanced"));
        assert_eq!(p.caps.iops, Some(6000.0), "below the VM's 20,000");
        let hd = shipped("hyperdisk-balanced");
        assert_eq!(i.limit_volume("hyperdisk-balanced", &hd), hd);
        // A faster disk than a small VM allows: the VM binds.
        let small = lookup("n2d-standard-4").unwrap();
        let p = small.limit_volume("pd-ssd", &shipped("pd-ssd"));
        assert_eq!((p.caps.iops, p.caps.mib_s), (Some(15000.0), Some(240.0)));
        let line = i.summary_line();
        assert!(
            line.contains(
                "per-VM disk limits: pd-balanced 20,000 IOPS, 1,200 MiB/s; pd-ssd 25,000 IOPS, \
                 1,200 MiB/s; hyperdisk-balanced not found"
            ),
            "{line}"
        );
        // C3 by size; the z3 types the source predates have none.
        let c3 = lookup("c3-standard-22").unwrap();
        assert_eq!(c3.gcp_limits()[1].iops, 25000.0);
        let z3 = lookup("z3-highmem-8-highlssd").unwrap();
        assert!(z3.gcp_limits().is_empty() && z3.host_limits().is_none());
        assert!(
            z3.summary_line()
                .contains("pd-balanced not found; pd-ssd not found"),
            "{}",
            z3.summary_line()
        );
        assert_eq!(
            lookup("z3-highmem-88-highlssd").unwrap().gcp_limits().len(),
            2
        );
        // Every n2, n2d and c3 preset has both Persistent Disk rows.
        for i in instances() {
            if ["n2", "n2d", "c3"].contains(&gcp_vm_limits::series_of(i.name)) {
                assert_eq!(i.gcp_limits().len(), 2, "{}", i.name);
            }
        }
        for name in ["n2d-standard-224", "c3-standard-22"] {
            let i = lookup(name).unwrap();
            assert!(i.volume_limits.is_none() && i.store.is_none(), "{name}");
            assert_eq!(i.memory_gib, 4.0 * f64::from(i.vcpus), "{name}");
        }
        assert_eq!(lookup("c3-standard-22").unwrap().family(), "c3-standard");
        assert_eq!(
            lookup("z3-highmem-8-highlssd").unwrap().family(),
            "z3-highmem-highlssd"
        );
    }
}
