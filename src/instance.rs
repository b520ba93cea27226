//! Instance presets: a cloud server's vCPUs and memory, the limits its host
//! puts on the network volumes attached to it, and its local instance store.
//!
//! `model --instance m6id.4xlarge` takes the vCPUs for `--cpus` and their
//! threads per core for `--threads-per-core`, the memory
//! for the default page cache (RAM − shared_buffers − [`overhead_bytes`]),
//! applies the instance's own volume limits on top of an EBS volume's (see
//! [`Instance::limit_volume`]), and offers the instance store as
//! `--device instance-store`. Explicit flags win over the preset.
//!
//! Every figure is the provider's, from the page named in [`Instance::source`]:
//!
//! * AWS: threads per core from the EC2 User Guide's "Supported CPU
//!   options" table (default threads per core: 2 for m6i, m6id, r6i, r6id,
//!   c6i, i4i, i3en; 1 for Graviton m6gd and m7g);
//!   vCPUs and memory from the Amazon EC2 User Guide's instance family
//!   pages (<https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/general-purpose-instances.html>,
//!   `memory-optimized-instances.html`, `compute-optimized-instances.html`,
//!   `storage-optimized-instances.html`); EBS limits from its "Amazon
//!   EBS–optimized instances" table
//!   (<https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/ebs-optimized.html>:
//!   baseline and maximum throughput "MB/s, 128 KiB I/O", baseline and
//!   maximum IOPS "16 KiB I/O"; sizes marked with an asterisk "can support
//!   maximum performance for 30 minutes at least once every 24 hours, after
//!   which they revert to their baseline performance"); instance-store IOPS
//!   from the same families' "SSD-based instance store volume I/O
//!   performance" tables ("100% Random Read IOPS" and "Write IOPS", 4,096
//!   byte blocks, at queue depth saturation, all of the instance's store
//!   volumes together). The rows were taken from the guide's archived
//!   source, github.com/awsdocs/amazon-ec2-user-guide (doc_source/, June
//!   2023), which predates m7gd and m8gd: their per-size store IOPS are not
//!   in it, so those families are not here (m6gd, the Graviton family it
//!   has, is).
//! * Azure: Dsv5 sizes, vCPUs, memory and "Uncached Premium SSD" IOPS and
//!   MB/s with their burst figures ("Burst speeds can be maintained for up
//!   to 30 minutes at a time"), from
//!   <https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/dsv5-series>
//!   (MicrosoftDocs/azure-compute-docs). Dsv5 has no local disk.
//! * GCP: n2-standard vCPUs and memory (4 GB per vCPU) from
//!   <https://cloud.google.com/compute/docs/general-purpose-machines>. GCP's
//!   per-VM Persistent Disk and Hyperdisk limits depend on the disk type and
//!   the vCPU count together and are not applied: the pd-* and hyperdisk
//!   profiles carry their per-disk limits only.

use crate::device::profile::{Burst, Profile, fmt_num};

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
}

impl Provider {
    /// The provider's name, and what its volumes are called.
    pub fn name(self) -> &'static str {
        match self {
            Provider::Aws => "AWS",
            Provider::Azure => "Azure",
            Provider::Gcp => "GCP",
        }
    }
}

/// The limits an instance puts on all its network volumes together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct VolumeLimits {
    /// Sustained throughput, MB/s (10^6 bytes).
    pub baseline_mb_s: f64,
    /// Throughput while bursting (equal to the baseline without a burst).
    pub max_mb_s: f64,
    /// Sustained IOPS.
    pub baseline_iops: f64,
    /// IOPS while bursting.
    pub max_iops: f64,
    /// Whether the instance bursts to the maximum (for 30 minutes, AWS: "at
    /// least once every 24 hours"; Azure: "at a time").
    pub bursts: bool,
}

/// How long a burst at the maximum lasts, s: 30 minutes, on both AWS and
/// Azure.
pub const BURST_S: f64 = 1800.0;

/// The instance store: random 4 KiB IOPS at queue depth saturation, all its
/// volumes together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Store {
    pub read_iops: f64,
    pub write_iops: f64,
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
    /// Limits on attached network volumes; None: not published here.
    pub volume_limits: Option<VolumeLimits>,
    /// The local instance store; None: the size has none.
    pub store: Option<Store>,
}

const fn ebs(
    baseline_mb_s: f64,
    max_mb_s: f64,
    baseline_iops: f64,
    max_iops: f64,
    bursts: bool,
) -> Option<VolumeLimits> {
    Some(VolumeLimits {
        baseline_mb_s,
        max_mb_s,
        baseline_iops,
        max_iops,
        bursts,
    })
}

const fn store(read_iops: f64, write_iops: f64) -> Store {
    Store {
        read_iops,
        write_iops,
    }
}

/// AWS's default threads per core for the family of `name`: 1 for
/// Graviton (m6gd, m7g), 2 for the x86 families here (EC2 User Guide,
/// "Supported CPU options", default threads per core, every size of
/// m6i, m6id, r6i, r6id, c6i, i4i and i3en).
const fn aws_threads(name: &'static str) -> u32 {
    let b = name.as_bytes();
    // The letter after the generation digit: m7g, m6gd.
    if b.len() > 2 && b[2] == b'g' { 1 } else { 2 }
}

const fn aws(
    name: &'static str,
    vcpus: u32,
    memory_gib: f64,
    volume_limits: Option<VolumeLimits>,
    store: Option<Store>,
) -> Instance {
    Instance {
        name,
        provider: Provider::Aws,
        vcpus,
        threads_per_core: aws_threads(name),
        memory_gib,
        volume_limits,
        store,
    }
}

/// Azure Dsv5: (uncached IOPS, MB/s, burst IOPS, burst MB/s).
const fn azure(
    name: &'static str,
    vcpus: u32,
    memory_gib: f64,
    l: (f64, f64, f64, f64),
) -> Instance {
    Instance {
        name,
        provider: Provider::Azure,
        vcpus,
        // "in a hyper threaded configuration" (the Dsv5 series summary).
        threads_per_core: 2,
        memory_gib,
        volume_limits: Some(VolumeLimits {
            baseline_mb_s: l.1,
            max_mb_s: l.3,
            baseline_iops: l.0,
            max_iops: l.2,
            bursts: l.2 > l.0 || l.3 > l.1,
        }),
        store: None,
    }
}

const fn gcp(name: &'static str, vcpus: u32) -> Instance {
    Instance {
        name,
        provider: Provider::Gcp,
        vcpus,
        // N2: each vCPU is a hyperthread, two to a core (general-purpose
        // machines page).
        threads_per_core: 2,
        memory_gib: 4.0 * vcpus as f64,
        volume_limits: None,
        store: None,
    }
}

/// Every preset, AWS first, by family and size.
pub const INSTANCES: &[Instance] = &[
    aws(
        "m6i.large",
        2,
        8.0,
        ebs(81.25, 1250.0, 3600.0, 40000.0, true),
        None,
    ),
    aws(
        "m6i.xlarge",
        4,
        16.0,
        ebs(156.25, 1250.0, 6000.0, 40000.0, true),
        None,
    ),
    aws(
        "m6i.2xlarge",
        8,
        32.0,
        ebs(312.5, 1250.0, 12000.0, 40000.0, true),
        None,
    ),
    aws(
        "m6i.4xlarge",
        16,
        64.0,
        ebs(625.0, 1250.0, 20000.0, 40000.0, true),
        None,
    ),
    aws(
        "m6i.8xlarge",
        32,
        128.0,
        ebs(1250.0, 1250.0, 40000.0, 40000.0, false),
        None,
    ),
    aws(
        "m6i.12xlarge",
        48,
        192.0,
        ebs(1875.0, 1875.0, 60000.0, 60000.0, false),
        None,
    ),
    aws(
        "m6i.16xlarge",
        64,
        256.0,
        ebs(2500.0, 2500.0, 80000.0, 80000.0, false),
        None,
    ),
    aws(
        "m6i.24xlarge",
        96,
        384.0,
        ebs(3750.0, 3750.0, 120000.0, 120000.0, false),
        None,
    ),
    aws(
        "m6i.32xlarge",
        128,
        512.0,
        ebs(5000.0, 5000.0, 160000.0, 160000.0, false),
        None,
    ),
    aws(
        "m6id.large",
        2,
        8.0,
        ebs(81.25, 1250.0, 3600.0, 40000.0, true),
        Some(store(33542.0, 16771.0)),
    ),
    aws(
        "m6id.xlarge",
        4,
        16.0,
        ebs(156.25, 1250.0, 6000.0, 40000.0, true),
        Some(store(67083.0, 33542.0)),
    ),
    aws(
        "m6id.2xlarge",
        8,
        32.0,
        ebs(312.5, 1250.0, 12000.0, 40000.0, true),
        Some(store(134167.0, 67084.0)),
    ),
    aws(
        "m6id.4xlarge",
        16,
        64.0,
        ebs(625.0, 1250.0, 20000.0, 40000.0, true),
        Some(store(268333.0, 134167.0)),
    ),
    aws(
        "m6id.8xlarge",
        32,
        128.0,
        ebs(1250.0, 1250.0, 40000.0, 40000.0, false),
        Some(store(536666.0, 268334.0)),
    ),
    aws(
        "m6id.12xlarge",
        48,
        192.0,
        ebs(1875.0, 1875.0, 60000.0, 60000.0, false),
        Some(store(804999.0, 402501.0)),
    ),
    aws(
        "m6id.16xlarge",
        64,
        256.0,
        ebs(2500.0, 2500.0, 80000.0, 80000.0, false),
        Some(store(1073332.0, 536668.0)),
    ),
    aws(
        "m6id.24xlarge",
        96,
        384.0,
        ebs(3750.0, 3750.0, 120000.0, 120000.0, false),
        Some(store(1609998.0, 805002.0)),
    ),
    aws(
        "m6id.32xlarge",
        128,
        512.0,
        ebs(5000.0, 5000.0, 160000.0, 160000.0, false),
        Some(store(2146664.0, 1073336.0)),
    ),
    aws(
        "m6gd.large",
        2,
        8.0,
        ebs(78.75, 593.75, 3600.0, 20000.0, true),
        Some(store(26875.0, 11250.0)),
    ),
    aws(
        "m6gd.xlarge",
        4,
        16.0,
        ebs(148.5, 593.75, 6000.0, 20000.0, true),
        Some(store(53750.0, 22500.0)),
    ),
    aws(
        "m6gd.2xlarge",
        8,
        32.0,
        ebs(296.88, 593.75, 12000.0, 20000.0, true),
        Some(store(107500.0, 45000.0)),
    ),
    aws(
        "m6gd.4xlarge",
        16,
        64.0,
        ebs(593.75, 593.75, 20000.0, 20000.0, false),
        Some(store(215000.0, 90000.0)),
    ),
    aws(
        "m6gd.8xlarge",
        32,
        128.0,
        ebs(1187.5, 1187.5, 40000.0, 40000.0, false),
        Some(store(430000.0, 180000.0)),
    ),
    aws(
        "m6gd.12xlarge",
        48,
        192.0,
        ebs(1781.25, 1781.25, 50000.0, 50000.0, false),
        Some(store(645000.0, 270000.0)),
    ),
    aws(
        "m6gd.16xlarge",
        64,
        256.0,
        ebs(2375.0, 2375.0, 80000.0, 80000.0, false),
        Some(store(860000.0, 360000.0)),
    ),
    aws(
        "m7g.large",
        2,
        8.0,
        ebs(78.75, 1250.0, 3600.0, 40000.0, true),
        None,
    ),
    aws(
        "m7g.xlarge",
        4,
        16.0,
        ebs(156.25, 1250.0, 6000.0, 40000.0, true),
        None,
    ),
    aws(
        "m7g.2xlarge",
        8,
        32.0,
        ebs(312.5, 1250.0, 12000.0, 40000.0, true),
        None,
    ),
    aws(
        "m7g.4xlarge",
        16,
        64.0,
        ebs(625.0, 1250.0, 20000.0, 40000.0, true),
        None,
    ),
    aws(
        "m7g.8xlarge",
        32,
        128.0,
        ebs(1250.0, 1250.0, 40000.0, 40000.0, false),
        None,
    ),
    aws(
        "m7g.12xlarge",
        48,
        192.0,
        ebs(1875.0, 1875.0, 60000.0, 60000.0, false),
        None,
    ),
    aws(
        "m7g.16xlarge",
        64,
        256.0,
        ebs(2500.0, 2500.0, 80000.0, 80000.0, false),
        None,
    ),
    aws(
        "r6i.large",
        2,
        16.0,
        ebs(81.25, 1250.0, 3600.0, 40000.0, true),
        None,
    ),
    aws(
        "r6i.xlarge",
        4,
        32.0,
        ebs(156.25, 1250.0, 6000.0, 40000.0, true),
        None,
    ),
    aws(
        "r6i.2xlarge",
        8,
        64.0,
        ebs(312.5, 1250.0, 12000.0, 40000.0, true),
        None,
    ),
    aws(
        "r6i.4xlarge",
        16,
        128.0,
        ebs(625.0, 1250.0, 20000.0, 40000.0, true),
        None,
    ),
    aws(
        "r6i.8xlarge",
        32,
        256.0,
        ebs(1250.0, 1250.0, 40000.0, 40000.0, false),
        None,
    ),
    aws(
        "r6i.12xlarge",
        48,
        384.0,
        ebs(1875.0, 1875.0, 60000.0, 60000.0, false),
        None,
    ),
    aws(
        "r6i.16xlarge",
        64,
        512.0,
        ebs(2500.0, 2500.0, 80000.0, 80000.0, false),
        None,
    ),
    aws(
        "r6i.24xlarge",
        96,
        768.0,
        ebs(3750.0, 3750.0, 120000.0, 120000.0, false),
        None,
    ),
    aws(
        "r6i.32xlarge",
        128,
        1024.0,
        ebs(5000.0, 5000.0, 160000.0, 160000.0, false),
        None,
    ),
    aws(
        "r6id.large",
        2,
        16.0,
        ebs(81.25, 1250.0, 3600.0, 40000.0, true),
        Some(store(33542.0, 16771.0)),
    ),
    aws(
        "r6id.xlarge",
        4,
        32.0,
        ebs(156.25, 1250.0, 6000.0, 40000.0, true),
        Some(store(67083.0, 33542.0)),
    ),
    aws(
        "r6id.2xlarge",
        8,
        64.0,
        ebs(312.5, 1250.0, 12000.0, 40000.0, true),
        Some(store(134167.0, 67084.0)),
    ),
    aws(
        "r6id.4xlarge",
        16,
        128.0,
        ebs(625.0, 1250.0, 20000.0, 40000.0, true),
        Some(store(268333.0, 134167.0)),
    ),
    aws(
        "r6id.8xlarge",
        32,
        256.0,
        ebs(1250.0, 1250.0, 40000.0, 40000.0, false),
        Some(store(536666.0, 268334.0)),
    ),
    aws(
        "r6id.12xlarge",
        48,
        384.0,
        ebs(1875.0, 1875.0, 60000.0, 60000.0, false),
        Some(store(804999.0, 402501.0)),
    ),
    aws(
        "r6id.16xlarge",
        64,
        512.0,
        ebs(2500.0, 2500.0, 80000.0, 80000.0, false),
        Some(store(1073332.0, 536668.0)),
    ),
    aws(
        "r6id.24xlarge",
        96,
        768.0,
        ebs(3750.0, 3750.0, 120000.0, 120000.0, false),
        Some(store(1609998.0, 805002.0)),
    ),
    aws(
        "r6id.32xlarge",
        128,
        1024.0,
        ebs(5000.0, 5000.0, 160000.0, 160000.0, false),
        Some(store(2146664.0, 1073336.0)),
    ),
    aws(
        "c6i.large",
        2,
        4.0,
        ebs(81.25, 1250.0, 3600.0, 40000.0, true),
        None,
    ),
    aws(
        "c6i.xlarge",
        4,
        8.0,
        ebs(156.25, 1250.0, 6000.0, 40000.0, true),
        None,
    ),
    aws(
        "c6i.2xlarge",
        8,
        16.0,
        ebs(312.5, 1250.0, 12000.0, 40000.0, true),
        None,
    ),
    aws(
        "c6i.4xlarge",
        16,
        32.0,
        ebs(625.0, 1250.0, 20000.0, 40000.0, true),
        None,
    ),
    aws(
        "c6i.8xlarge",
        32,
        64.0,
        ebs(1250.0, 1250.0, 40000.0, 40000.0, false),
        None,
    ),
    aws(
        "c6i.12xlarge",
        48,
        96.0,
        ebs(1875.0, 1875.0, 60000.0, 60000.0, false),
        None,
    ),
    aws(
        "c6i.16xlarge",
        64,
        128.0,
        ebs(2500.0, 2500.0, 80000.0, 80000.0, false),
        None,
    ),
    aws(
        "c6i.24xlarge",
        96,
        192.0,
        ebs(3750.0, 3750.0, 120000.0, 120000.0, false),
        None,
    ),
    aws(
        "c6i.32xlarge",
        128,
        256.0,
        ebs(5000.0, 5000.0, 160000.0, 160000.0, false),
        None,
    ),
    aws(
        "i4i.large",
        2,
        16.0,
        ebs(78.12, 1250.0, 2500.0, 40000.0, true),
        Some(store(50000.0, 27500.0)),
    ),
    aws(
        "i4i.xlarge",
        4,
        32.0,
        ebs(156.25, 1250.0, 5000.0, 40000.0, true),
        Some(store(100000.0, 55000.0)),
    ),
    aws(
        "i4i.2xlarge",
        8,
        64.0,
        ebs(312.5, 1250.0, 10000.0, 40000.0, true),
        Some(store(200000.0, 110000.0)),
    ),
    aws(
        "i4i.4xlarge",
        16,
        128.0,
        ebs(625.0, 1250.0, 20000.0, 40000.0, true),
        Some(store(400000.0, 220000.0)),
    ),
    aws(
        "i4i.8xlarge",
        32,
        256.0,
        ebs(1250.0, 1250.0, 40000.0, 40000.0, false),
        Some(store(800000.0, 440000.0)),
    ),
    aws(
        "i4i.16xlarge",
        64,
        512.0,
        ebs(2500.0, 2500.0, 80000.0, 80000.0, false),
        Some(store(1600000.0, 880000.0)),
    ),
    aws(
        "i4i.32xlarge",
        128,
        1024.0,
        ebs(5000.0, 5000.0, 160000.0, 160000.0, false),
        Some(store(3200000.0, 1760000.0)),
    ),
    aws(
        "i3en.large",
        2,
        16.0,
        ebs(72.1, 593.75, 3000.0, 20000.0, true),
        Some(store(42500.0, 32500.0)),
    ),
    aws(
        "i3en.xlarge",
        4,
        32.0,
        ebs(144.2, 593.75, 6000.0, 20000.0, true),
        Some(store(85000.0, 65000.0)),
    ),
    aws(
        "i3en.2xlarge",
        8,
        64.0,
        ebs(288.39, 593.75, 12000.0, 20000.0, true),
        Some(store(170000.0, 130000.0)),
    ),
    aws(
        "i3en.3xlarge",
        12,
        96.0,
        ebs(475.0, 593.75, 15000.0, 20000.0, true),
        Some(store(250000.0, 200000.0)),
    ),
    aws(
        "i3en.6xlarge",
        24,
        192.0,
        ebs(593.75, 593.75, 20000.0, 20000.0, false),
        Some(store(500000.0, 400000.0)),
    ),
    aws(
        "i3en.12xlarge",
        48,
        384.0,
        ebs(1187.5, 1187.5, 40000.0, 40000.0, false),
        Some(store(1000000.0, 800000.0)),
    ),
    aws(
        "i3en.24xlarge",
        96,
        768.0,
        ebs(2375.0, 2375.0, 80000.0, 80000.0, false),
        Some(store(2000000.0, 1600000.0)),
    ),
    azure("Standard_D2s_v5", 2, 8.0, (3750.0, 85.0, 10000.0, 1200.0)),
    azure("Standard_D4s_v5", 4, 16.0, (6400.0, 145.0, 20000.0, 1200.0)),
    azure(
        "Standard_D8s_v5",
        8,
        32.0,
        (12800.0, 290.0, 20000.0, 1200.0),
    ),
    azure(
        "Standard_D16s_v5",
        16,
        64.0,
        (25600.0, 600.0, 40000.0, 1200.0),
    ),
    azure(
        "Standard_D32s_v5",
        32,
        128.0,
        (51200.0, 865.0, 80000.0, 2000.0),
    ),
    azure(
        "Standard_D48s_v5",
        48,
        192.0,
        (76800.0, 1315.0, 80000.0, 3000.0),
    ),
    azure(
        "Standard_D64s_v5",
        64,
        256.0,
        (80000.0, 1735.0, 80000.0, 3000.0),
    ),
    azure(
        "Standard_D96s_v5",
        96,
        384.0,
        (80000.0, 2600.0, 80000.0, 4000.0),
    ),
    gcp("n2-standard-2", 2),
    gcp("n2-standard-4", 4),
    gcp("n2-standard-8", 8),
    gcp("n2-standard-16", 16),
    gcp("n2-standard-32", 32),
    gcp("n2-standard-48", 48),
    gcp("n2-standard-64", 64),
    gcp("n2-standard-80", 80),
];

/// The preset named `name` (case-insensitive, as providers' consoles accept it).
pub fn lookup(name: &str) -> Option<&'static Instance> {
    INSTANCES.iter().find(|i| i.name.eq_ignore_ascii_case(name))
}

/// The names of every preset, for error messages and `pgiosim instances`.
pub fn names() -> Vec<&'static str> {
    INSTANCES.iter().map(|i| i.name).collect()
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
        let overhead = overhead_bytes(ram);
        ram.checked_sub(shared_buffers)
            .and_then(|r| r.checked_sub(overhead))
            .filter(|&b| b > 0)
            .ok_or_else(|| {
                format!(
                    "--instance {}: shared_buffers = {:.1} GiB leaves no page cache in its {} GiB \
                     of RAM ({:.1} GiB kept for the kernel and the backends)",
                    self.name,
                    shared_buffers as f64 / GIB,
                    self.memory_gib,
                    overhead as f64 / GIB
                )
            })
    }

    /// Where the figures come from.
    pub fn source(&self) -> &'static str {
        match self.provider {
            Provider::Aws => {
                "Amazon EC2 User Guide: the family's page (vCPUs, memory, 'SSD-based instance \
                 store volume I/O performance'), https://docs.aws.amazon.com/AWSEC2/latest/\
                 UserGuide/ebs-optimized.html (EBS baseline/maximum MB/s at 128 KiB and IOPS at \
                 16 KiB; sizes with an asterisk burst to the maximum for 30 minutes at least once \
                 every 24 hours); rows from github.com/awsdocs/amazon-ec2-user-guide, June 2023"
            }
            Provider::Azure => {
                "https://learn.microsoft.com/azure/virtual-machines/sizes/general-purpose/\
                 dsv5-series: vCPUs, memory, uncached Premium SSD IOPS and MB/s and their burst \
                 (up to 30 minutes at a time)"
            }
            Provider::Gcp => {
                "https://cloud.google.com/compute/docs/general-purpose-machines: n2-standard, \
                 4 GB per vCPU; per-VM disk limits not applied"
            }
        }
    }

    /// One line for `pgiosim instances`.
    pub fn summary_line(&self) -> String {
        let limits = match self.volume_limits {
            None => "volume limits: not applied".to_string(),
            Some(l) if l.bursts => format!(
                "volumes: {} IOPS, {} MB/s (burst {} IOPS, {} MB/s for 30 min)",
                fmt_num(l.baseline_iops),
                fmt_num(l.baseline_mb_s),
                fmt_num(l.max_iops),
                fmt_num(l.max_mb_s)
            ),
            Some(l) => format!(
                "volumes: {} IOPS, {} MB/s",
                fmt_num(l.baseline_iops),
                fmt_num(l.baseline_mb_s)
            ),
        };
        let store = match self.store {
            None => String::new(),
            Some(s) => format!(
                " | instance store: {} read / {} write IOPS",
                fmt_num(s.read_iops),
                fmt_num(s.write_iops)
            ),
        };
        format!(
            "{:<18} {:<5} {:>3} vCPUs ({} per core) {:>6} GiB | {limits}{store}",
            self.name,
            self.provider.name(),
            self.vcpus,
            self.threads_per_core,
            fmt_num(self.memory_gib)
        )
    }

    /// `volume` (one of this provider's network volumes) as attached to this
    /// instance: the instance's limits on top of the volume's own caps.
    ///
    /// Throughput: the lower of the volume's cap and the instance's maximum
    /// (its burst figure: runs are shorter than the 30-minute burst, and the
    /// model has no burst bucket for bytes). IOPS: the lower of the two
    /// rates; an instance that bursts adds a burst bucket of (maximum −
    /// baseline) × 30 minutes that refills at its baseline, so a run longer
    /// than the burst falls to the baseline. When the volume bursts too
    /// (gp2, Azure P20 and below) the two buckets are merged into one, the
    /// lower baseline and the smaller bucket: an approximation, stated.
    pub fn limit_volume(&self, volume: &Profile) -> Profile {
        let mut p = volume.clone();
        let Some(l) = self.volume_limits else {
            return p;
        };
        let max_mib_s = l.max_mb_s * 1e6 / MIB;
        p.caps.mib_s = Some(p.caps.mib_s.map_or(max_mib_s, |v| v.min(max_mib_s)));
        let vol_rate = p.caps.iops.unwrap_or(f64::INFINITY);
        let inst_bucket = (l.max_iops - l.baseline_iops) * BURST_S;
        if vol_rate > l.baseline_iops {
            let rate = vol_rate.min(l.max_iops);
            p.caps.iops = Some(rate);
            p.caps.burst = match (p.caps.burst, l.bursts && inst_bucket > 0.0) {
                (None, true) => Some(Burst {
                    size_ios: inst_bucket,
                    baseline_iops: l.baseline_iops,
                }),
                (Some(b), true) => Some(Burst {
                    size_ios: b.size_ios.min(inst_bucket),
                    baseline_iops: b.baseline_iops.min(l.baseline_iops),
                }),
                (b, false) => b.filter(|b| b.baseline_iops < rate),
            };
        }
        let tag = self.name.to_ascii_lowercase().replace(['.', '_'], "-");
        p.name = format!("{}-on-{tag}", volume.name);
        p.description = format!("{}, attached to {}", volume.description, self.name);
        let limits = if l.bursts {
            format!(
                "baseline {} IOPS and {} MB/s, maximum {} IOPS and {} MB/s for 30 minutes",
                fmt_num(l.baseline_iops),
                fmt_num(l.baseline_mb_s),
                fmt_num(l.max_iops),
                fmt_num(l.max_mb_s)
            )
        } else {
            format!(
                "{} IOPS and {} MB/s",
                fmt_num(l.baseline_iops),
                fmt_num(l.baseline_mb_s)
            )
        };
        p.source = format!(
            "{} Instance limits of {} on its volumes: {limits} ({}); throughput capped at the \
             maximum, IOPS at the lower rate with the instance's burst as a credit bucket.",
            volume.source,
            self.name,
            self.source()
        );
        p
    }

    /// The instance store as a device: `base`'s latencies (AWS publishes
    /// none for instance stores) with the size's published read and write
    /// IOPS as per-direction caps. None when the size has no store.
    pub fn store_profile(&self, base: &Profile) -> Option<Profile> {
        let s = self.store?;
        let mut p = base.clone();
        let tag = self.name.to_ascii_lowercase().replace(['.', '_'], "-");
        p.name = format!("{tag}-store");
        p.description = format!(
            "Instance-store NVMe of an {}: {} read / {} write IOPS at 4 KiB",
            self.name,
            fmt_num(s.read_iops),
            fmt_num(s.write_iops)
        );
        p.caps.read_iops = Some(s.read_iops);
        p.caps.write_iops = Some(s.write_iops);
        p.caps.op_size_kib = None;
        p.source = format!(
            "IOPS: {} ({}: '100% Random Read IOPS' {} and 'Write IOPS' {}, 4,096-byte blocks at \
             queue depth saturation, all store volumes together), enforced as per-direction \
             token buckets: AWS does not say how a size's share of the drive is paced, nor \
             whether reads and writes share one budget (a guess: separate), nor how an 8 KiB \
             I/O counts (a guess: one operation). Latencies, flush, channels and bandwidth are \
             the {} profile's, as AWS publishes none for instance stores: {}",
            self.name,
            self.source(),
            fmt_num(s.read_iops),
            fmt_num(s.write_iops),
            base.name,
            base.source
        );
        Some(p)
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
        assert_eq!(lookup("i3en.large").unwrap().threads_per_core, 2);
        let l = i.volume_limits.unwrap();
        assert_eq!(
            (
                l.baseline_iops,
                l.max_iops,
                l.baseline_mb_s,
                l.max_mb_s,
                l.bursts
            ),
            (20000.0, 40000.0, 625.0, 1250.0, true)
        );
        assert_eq!(i.store, Some(store(268333.0, 134167.0)));
        assert!(lookup("m6id.5xlarge").is_none());
        assert!(names().contains(&"Standard_D16s_v5"));
    }

    #[test]
    fn every_preset_is_consistent() {
        let nvme = shipped("nvme");
        for i in INSTANCES {
            assert!(i.vcpus >= 2 && i.memory_gib >= 4.0, "{}", i.name);
            assert_eq!(i.vcpus % i.threads_per_core, 0, "{}", i.name);
            if let Some(l) = i.volume_limits {
                assert!(
                    l.max_iops >= l.baseline_iops && l.max_mb_s >= l.baseline_mb_s,
                    "{}",
                    i.name
                );
                assert_eq!(
                    l.bursts,
                    l.max_iops > l.baseline_iops || l.max_mb_s > l.baseline_mb_s,
                    "{}",
                    i.name
                );
            }
            // Every store builds a valid profile.
            if let Some(p) = i.store_profile(&nvme) {
                let again = Profile::from_json(&p.to_json().to_string(), i.name).unwrap();
                assert_eq!(again, p);
            }
        }
        let names = names();
        let mut unique = names.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), names.len(), "duplicate preset names");
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
        let p = i.limit_volume(&gp3);
        assert_eq!(p.caps.iops, Some(3000.0));
        assert_eq!(p.caps.mib_s, Some(125.0));
        assert!(p.caps.burst.is_none());
        assert_eq!(p.name, "gp3-on-m6id-4xlarge");
    }

    #[test]
    fn a_faster_volume_gets_the_instance_burst() {
        let i = lookup("m6id.4xlarge").unwrap();
        let io2 = shipped("io2");
        let p = i.limit_volume(&io2);
        assert_eq!(p.caps.iops, Some(40000.0));
        let b = p.caps.burst.unwrap();
        assert_eq!((b.baseline_iops, b.size_ios), (20000.0, 20000.0 * BURST_S));
        // An instance that does not burst caps at its one rate.
        let big = lookup("m6id.8xlarge").unwrap();
        let p = big.limit_volume(&io2);
        assert_eq!((p.caps.iops, p.caps.burst), (Some(40000.0), None));
        // The profile stays valid.
        Profile::from_json(&p.to_json().to_string(), "p").unwrap();
    }

    #[test]
    fn two_bursts_merge_into_the_lower_baseline_and_smaller_bucket() {
        // i4i.large: 2,500 IOPS baseline, 40,000 burst; gp2 500 GiB: 1,500
        // baseline, 3,000 burst on 5.4 M credits.
        let i = lookup("i4i.large").unwrap();
        let p = i.limit_volume(&shipped("gp2"));
        assert_eq!(p.caps.iops, Some(3000.0));
        let b = p.caps.burst.unwrap();
        assert_eq!((b.baseline_iops, b.size_ios), (1500.0, 5.4e6));
        Profile::from_json(&p.to_json().to_string(), "p").unwrap();
    }

    #[test]
    fn gcp_presets_carry_no_volume_limits() {
        let i = lookup("n2-standard-16").unwrap();
        assert_eq!((i.vcpus, i.memory_gib), (16, 64.0));
        let pd = shipped("pd-ssd");
        let p = i.limit_volume(&pd);
        assert_eq!(p.caps, pd.caps);
    }
}
