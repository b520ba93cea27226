//! Provisioned volume types: `--device gp3:iops=16000,mibps=1000`.
//!
//! A cloud volume's caps are chosen when it is created (IOPS, throughput,
//! size or tier) within limits its provider publishes. `TYPE:KEY=VALUE,...`
//! builds the profile of one such volume: the shipped profile named `TYPE`
//! (its latencies, channels and round trip, and the caps of its defaults)
//! with the caps the values give, each checked against the type's limits.
//! The bare name is the default provisioning. The limits and formulas, and
//! where they come from:
//!
//! | type | keys (default) | caps | source |
//! |---|---|---|---|
//! | `gp3` | `iops` 3,000–16,000 (3,000), `mibps` 125–1,000 (125), `size_gib` | as given; `mibps` at most 0.25 per IOPS above 125, `iops` at most 500 per GiB | AWS EBS general-purpose docs |
//! | `gp2` | `size_gib` 1–16,384 (500) | baseline 3 IOPS/GiB (100–16,000); under 3,000 a burst to 3,000 on a 5.4 M credit bucket; 128 MiB/s up to 170 GiB, else 250 | AWS EBS general-purpose docs |
//! | `io1` | `iops` 100–64,000 (3,000), `size_gib` | 500 MiB/s up to 32,000 IOPS, then 16 KiB per IOPS; at most 50 IOPS per GiB | AWS EBS provisioned-IOPS docs |
//! | `io2` | `iops` 100–256,000 (64,000), `size_gib` | Block Express: 0.256 MiB/s per IOPS, at most 4,000; at most 1,000 IOPS per GiB | AWS EBS provisioned-IOPS docs |
//! | `azure-premium-ssd` | `tier` p1–p80 (p30) | the tier's IOPS and MB/s; P1–P20 burst to 3,500 IOPS for 30 minutes on credits | Azure managed disk types |
//! | `azure-premium-v2` | `iops` 3,000–80,000 (3,000), `mbps` 125–2,000 (125), `size_gib` | as given; `mbps` at most 0.25 per IOPS above 125, `iops` at most 500 per GiB above 3,000 | Azure managed disk types |
//! | `pd-balanced` | `size_gib` 10–65,536 (500) | 3,000 + 6 IOPS/GiB (≤ 80,000), 140 + 0.28 MiB/s per GiB (≤ 1,200) | GCP Persistent Disk performance |
//! | `pd-ssd` | `size_gib` 10–65,536 (500) | 6,000 + 30 IOPS/GiB (≤ 100,000), 240 + 0.48 MiB/s per GiB (≤ 1,200) | GCP Persistent Disk performance |
//! | `hyperdisk-balanced` | `iops` 3,000–160,000 (3,000), `mibps` 140–2,400 (140) | as given | GCP Hyperdisk Balanced |
//! | `instance-store` | `type` (an instance preset with a store) | the size's read and write IOPS and MB/s | see [`crate::device::instance::aws_store`] |
//!
//! How each provider counts I/O against those caps ([`Counting`]; each
//! type's pages and the phrases quoted from them are in its `source`,
//! which `pgiosim devices --sources` prints):
//!
//! | type | I/O unit | merge | binds first (8 KiB random / 1 MiB sequential, default caps) | burst |
//! |---|---|---|---|---|
//! | `gp3` | 256 KiB | sequential I/Os merged up to 256 KiB, larger split | IOPS below 43 KiB / throughput | none |
//! | `gp2` | 256 KiB | as gp3 | IOPS below 85 KiB / throughput | credits to 3,000 IOPS below 1,000 GiB |
//! | `io1` | 256 KiB | as gp3 | IOPS below 171 KiB / throughput | none |
//! | `io2` | 256 KiB | as gp3 | IOPS below 64 KiB / throughput | none |
//! | `azure-premium-ssd` | 256 KiB | not published | IOPS below 39 KiB (P30) / throughput | P1–P20 credits to 3,500 IOPS, 170 MB/s, 30 min; P30+ on-demand (paid) to 30,000 IOPS, not modelled |
//! | `azure-premium-v2` | 256 KiB ("between 4k and 256k bytes") | not published | IOPS below 41 KiB / throughput | none |
//! | `pd-balanced` | not published (256 KiB assumed) | not published | IOPS below 48 KiB / throughput | none published |
//! | `pd-ssd` | not published (256 KiB assumed) | not published | IOPS below 23 KiB / throughput | none published |
//! | `hyperdisk-balanced` | not published (256 KiB assumed) | not published | IOPS below 48 KiB / throughput | none published |
//!
//! An I/O of s KiB up to the unit costs one of the IOPS and s KiB of the
//! throughput, so IOPS binds below `mibps × 1,024 / iops` KiB. RDS stripes
//! gp3 storage of 400 GiB or more over four volumes ([`RDS_GP3_STRIPING`]),
//! and a server's own limits bind before a faster volume's
//! ([`INSTANCE_LIMITS`]).
//!
//! Each type's page is quoted in its shipped profile's `source`; the rules
//! above are in [`TYPES`]. Errors name the type, the key, the value and the
//! limit ("gp3: iops 20000 is above gp3's maximum of 16,000").

use std::collections::BTreeMap;

use super::profile::{Burst, Profile, fmt_num};

mod caps;
use caps::*;

const MIB: f64 = 1_048_576.0;

/// A provisioned volume type: its keys and how values become caps.
pub struct Type {
    /// The type's name, also the shipped profile it starts from.
    pub name: &'static str,
    /// The keys it takes, in the order the profile's name lists them.
    pub keys: &'static [&'static str],
    /// One line: the keys' ranges and defaults.
    pub help: &'static str,
    /// Whose volumes these are (for `--instance`): "AWS", "Azure", "GCP",
    /// or "" for a local disk.
    pub provider: &'static str,
    /// How the provider counts I/O against the type's caps, and where it
    /// says so.
    pub counting: Counting,
    build: fn(&Values) -> Result<Caps, String>,
}

/// How a provider counts I/O against a volume type's IOPS and throughput
/// caps, in its own documentation's words: the model's `caps.op_size_kib`
/// and burst bucket follow it, and `pgiosim devices` shows it.
pub struct Counting {
    /// The size up to which one I/O counts as one operation against the
    /// IOPS cap (a larger one as several), KiB; None where the provider
    /// does not publish one.
    pub io_unit_kib: Option<u32>,
    /// Whether small sequential I/Os are merged before they are counted.
    pub merge: &'static str,
    /// Which cap binds first, by I/O size, as a rule over the provisioned
    /// values.
    pub binds_first: &'static str,
    /// Burst above the provisioned IOPS or throughput, and whether the
    /// model applies it.
    pub burst: &'static str,
    /// The pages, each URL with the phrases quoted from it.
    pub source: &'static str,
}

/// EBS's I/O characteristics page, which every EBS SSD type counts by.
const EBS_IO: &str = "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html: \
    \"I/O size is capped at 256 KiB for SSD volumes and 1,024 KiB for HDD volumes\"; \"When small \
    I/O operations are physically sequential, Amazon EBS attempts to merge them into a single I/O \
    operation up to the maximum I/O size. Similarly, when I/O operations are larger than the \
    maximum I/O size, Amazon EBS attempts to split them into smaller I/O operations\"; \"if your \
    I/O size is very large, you may experience a smaller number of IOPS than you provisioned \
    because you are hitting the throughput limit of the volume\"";

/// The EBS merge rule, as a line of the table.
const EBS_MERGE: &str = "yes, up to 256 KiB";

/// The rule every type's binding cap follows: an I/O of s KiB (up to the
/// unit) uses s KiB of throughput per IOPS.
const BINDS: &str = "IOPS below mibps x 1,024 / iops KiB an I/O, throughput above; above the \
    unit an I/O counts as several, so IOPS binds at every size when iops x unit is below the \
    throughput cap";

/// GCP's statement of which limit binds (Persistent Disk and Hyperdisk
/// alike: its Hyperdisk pages give no other).
const GCP_BINDS: &str = "https://cloud.google.com/compute/docs/disks/performance: \"For workloads \
    that primarily involve small (from 4 KB to 16 KB) random I/Os, the limiting performance factor \
    is random input/output operations per second (IOPS)\"; \"For workloads that primarily involve \
    sequential or large (256 KB to 1 MB) random I/Os, the limiting performance factor is \
    throughput\". No I/O size up to which one I/O counts as one operation, and no merge rule, is \
    published for Persistent Disk or Hyperdisk in the pages read (performance, \
    optimizing-pd-performance, hyperdisk-performance, optimize-hyperdisk): the model counts \
    256 KiB as one, as EBS and Azure do, a guess.";

/// GCP's rule for the binding cap: its own statement, then the model's.
const GCP_BINDS_RULE: &str = "small (4-16 KB) random I/O: IOPS; sequential or large (256 KB-1 MB): \
    throughput (GCP's words); the crossover as for the others, with the assumed 256 KiB unit";

/// RDS's striping of gp3 storage, which `--device` has no type for.
pub const RDS_GP3_STRIPING: &str = "RDS (not a --device type): gp3 storage of 400 GiB or more \
    for MariaDB, MySQL and PostgreSQL (200 GiB for Oracle) is striped over four volumes, a \
    baseline of 12,000 IOPS and 500 MiB/s, provisionable to 64,000 IOPS and 4,000 MiB/s; up to \
    16,000 IOPS it models as gp3:iops=12000,mibps=500 or more (one volume with the four's caps)";

/// Where [`RDS_GP3_STRIPING`] comes from.
pub const RDS_GP3_SOURCE: &str = "https://docs.aws.amazon.com/AmazonRDS/latest/UserGuide/CHAP_Storage.html \
    (archived as awsdocs/amazon-rds-user-guide doc_source/CHAP_Storage.md): \"For every RDS DB \
    engine except RDS for SQL Server, when the storage size for gp3 volumes reaches a certain \
    threshold, the baseline storage performance increases to 12,000 IOPS and 500 MiBps. This is \
    because of volume striping, where the storage uses four logical volumes instead of one\"; its \
    gp3 table: \"MariaDB, MySQL, and PostgreSQL | 400 GiB and higher | 12,000 IOPS/500 MiBps | \
    12,000-64,000 IOPS | 500-4,000 MiBps\".";

/// The server's own limits on its volumes, which bind before a faster
/// volume's (`--instance`, `--volume-limits`).
pub const INSTANCE_LIMITS: &str = "Servers: the server's own limits on all its volumes together \
    bind before a faster volume's; --instance SIZE or --volume-limits applies them (AWS: the \
    EBS-optimized baseline and maximum, 30 minutes of burst a day on smaller sizes; Azure: the VM \
    size's uncached disk IOPS and MB/s with its 30-minute burst; GCP: the per-VM limit for the \
    --device's disk type, by machine series and vCPUs, on all the VM's disks of that type \
    together: pd-balanced and pd-ssd on n2, n2d, c3 and z3 at 88 and 176 vCPUs; Hyperdisk \
    Balanced's was not found, and is not applied)";

/// Where [`INSTANCE_LIMITS`] comes from.
pub const INSTANCE_LIMITS_SOURCE: &str = "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-optimized.html \
    (sizes that \"can support maximum performance for 30 minutes at least once every 24 hours, \
    after which they revert to their baseline performance\"); Azure's VM size pages (\"Uncached \
    Premium SSD\" IOPS and MB/s, \"Burst speeds can be maintained for up to 30 minutes at a \
    time\"); https://cloud.google.com/compute/docs/disks/performance (\"There are throughput and \
    IOPS limits per GiB and per instance\"; its \"Performance limits by machine type and vCPU \
    count\" as Google's gcpdiag copies them, github.com/GoogleCloudPlatform/gcpdiag \
    gcpdiag/runbook/gce/disk_performance_benchmark/, commit \
    9f84bc0ab7fdc376a57fc8d6082317d064bdf1ec, read 2026-12-07) and \
    https://cloud.google.com/compute/docs/disks/hyperdisks (\"With Hyperdisk, you get dedicated \
    IOPS and throughput with each volume, as compared to Persistent Disk where performance is \
    shared between volumes of the same type\"). The presets and their sources: \
    src/device/instance/mod.rs; GCP's per-VM rows: src/device/instance/gcp_vm_limits.tsv.";

/// The caps a provisioning gives.
struct Caps {
    iops: f64,
    mib_s: f64,
    burst: Option<Burst>,
}

/// The values given, by key.
pub struct Values {
    type_name: &'static str,
    map: BTreeMap<String, String>,
}

impl Values {
    fn num(
        &self,
        key: &str,
        default: Option<f64>,
        min: f64,
        max: f64,
    ) -> Result<Option<f64>, String> {
        let Some(text) = self.map.get(key) else {
            return Ok(default);
        };
        let v: f64 = text
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite())
            .ok_or_else(|| format!("{}: {key}={text} is not a number", self.type_name))?;
        if v < min {
            return Err(format!(
                "{}: {key} {text} is below {}'s minimum of {}",
                self.type_name,
                self.type_name,
                fmt_num(min)
            ));
        }
        if v > max {
            return Err(format!(
                "{}: {key} {text} is above {}'s maximum of {}",
                self.type_name,
                self.type_name,
                fmt_num(max)
            ));
        }
        Ok(Some(v))
    }

    fn required(&self, key: &str, default: f64, min: f64, max: f64) -> Result<f64, String> {
        Ok(self.num(key, Some(default), min, max)?.expect("a default"))
    }
}

/// Every provisioned type, in `pgiosim devices` order.
pub const TYPES: &[Type] = &[
    Type {
        name: "gp3",
        keys: &["iops", "mibps", "size_gib"],
        help: "iops 3,000-16,000 (3,000), mibps 125-1,000 (125, at most 0.25 per IOPS), size_gib (at most 500 IOPS per GiB)",
        provider: "AWS",
        counting: Counting {
            io_unit_kib: Some(256),
            merge: EBS_MERGE,
            binds_first: BINDS,
            burst: "none",
            source: EBS_IO,
        },
        build: gp3,
    },
    Type {
        name: "gp2",
        keys: &["size_gib"],
        help: "size_gib 1-16,384 (500): 3 IOPS per GiB, bursts to 3,000 on credits below 1 TiB",
        provider: "AWS",
        counting: Counting {
            io_unit_kib: Some(256),
            merge: EBS_MERGE,
            binds_first: BINDS,
            burst: "credits to 3,000 IOPS below 1,000 GiB (modelled)",
            source: "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html \
                (as gp3); https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html: \
                a 5.4 million credit bucket, \"enough to sustain the maximum burst performance of \
                3,000 IOPS for at least 30 minutes\"; volumes of 1,000 GiB and more have a baseline \
                of 3,000 IOPS or more and do not burst",
        },
        build: gp2,
    },
    Type {
        name: "io1",
        keys: &["iops", "size_gib"],
        help: "iops 100-64,000 (3,000), size_gib (at most 50 IOPS per GiB)",
        provider: "AWS",
        counting: Counting {
            io_unit_kib: Some(256),
            merge: EBS_MERGE,
            binds_first: BINDS,
            burst: "none",
            source: "https://docs.aws.amazon.com/ebs/latest/userguide/ebs-io-characteristics.html \
                (as gp3); https://docs.aws.amazon.com/ebs/latest/userguide/provisioned-iops.html: \
                \"Volumes provisioned with up to 32,000 IOPS support a maximum I/O size of 256 KiB \
                and yield as much as 500 MiB/s\"",
        },
        build: io1,
    },
    Type {
        name: "io2",
        keys: &["iops", "size_gib"],
        help: "iops 100-256,000 (64,000), size_gib (at most 1,000 IOPS per GiB); Block Express",
        provider: "AWS",
        counting: Counting {
            io_unit_kib: Some(256),
            merge: EBS_MERGE,
            binds_first: BINDS,
            burst: "none",
            source: EBS_IO,
        },
        build: io2,
    },
    Type {
        name: "azure-premium-ssd",
        keys: &["tier"],
        help: "tier p1-p80 (p30)",
        provider: "Azure",
        counting: Counting {
            io_unit_kib: Some(256),
            merge: "not published",
            binds_first: BINDS,
            burst: "P1-P20: credits to 3,500 IOPS for 30 min (modelled); P30+: paid on-demand (not modelled)",
            source: "https://learn.microsoft.com/azure/virtual-machines/disks-types (Premium SSD \
                transactions): \"For Premium SSDs, each I/O operation less than or equal to 256 KiB \
                of throughput is considered a single I/O operation. I/O operations larger than 256 \
                KiB of throughput are considered multiple I/Os of size 256 KiB\"; \
                https://learn.microsoft.com/azure/virtual-machines/disk-bursting: \"Credit-based \
                bursting is only available for Premium SSD managed disks 512 GiB and smaller\", \
                \"On-demand bursting is only available for Premium SSDs larger than 512 GiB\"; the \
                Premium SSD sizes table: \"Max burst IOPS per disk\" 3,500 (P1-P20) and 30,000* \
                (P30-P80), \"Max burst throughput per disk\" 170 MB/s and 1,000 MB/s*, \"Max burst \
                duration\" 30 min and Unlimited*, \"*Applies only to disks with on-demand bursting \
                enabled\". No merge rule is published.",
        },
        build: azure_premium_ssd,
    },
    Type {
        name: "azure-premium-v2",
        keys: &["iops", "mbps", "size_gib"],
        help: "iops 3,000-80,000 (3,000), mbps 125-2,000 (125, at most 0.25 per IOPS), size_gib (at most 500 IOPS per GiB)",
        provider: "Azure",
        counting: Counting {
            io_unit_kib: Some(256),
            merge: "not published",
            binds_first: BINDS,
            burst: "none",
            source: "Azure Compute REST API, Disks (https://learn.microsoft.com/rest/api/compute/disks/create-or-update), \
                diskIOPSReadWrite: \"The number of IOPS allowed for this disk; only settable for \
                UltraSSD disks. One operation can transfer between 4k and 256k bytes\" (the azurerm \
                Terraform provider's disk_iops_read_write gives the same sentence for \"UltraSSD \
                disks and PremiumV2 disks\"); \
                https://learn.microsoft.com/azure/virtual-machines/disk-bursting: \"Currently, \
                there are two managed disk types that can burst, Premium SSD managed disks, and \
                Standard SSDs\". No merge rule is published.",
        },
        build: azure_premium_v2,
    },
    Type {
        name: "pd-balanced",
        keys: &["size_gib"],
        help: "size_gib 10-65,536 (500): 3,000 + 6 IOPS and 140 + 0.28 MiB/s per GiB",
        provider: "GCP",
        counting: Counting {
            io_unit_kib: None,
            merge: "not published",
            binds_first: GCP_BINDS_RULE,
            burst: "none published",
            source: GCP_BINDS,
        },
        build: pd_balanced,
    },
    Type {
        name: "pd-ssd",
        keys: &["size_gib"],
        help: "size_gib 10-65,536 (500): 6,000 + 30 IOPS and 240 + 0.48 MiB/s per GiB",
        provider: "GCP",
        counting: Counting {
            io_unit_kib: None,
            merge: "not published",
            binds_first: GCP_BINDS_RULE,
            burst: "none published",
            source: GCP_BINDS,
        },
        build: pd_ssd,
    },
    Type {
        name: "hyperdisk-balanced",
        keys: &["iops", "mibps", "size_gib"],
        help: "iops 3,000-160,000 (3,000), mibps 140-2,400 (140)",
        provider: "GCP",
        counting: Counting {
            io_unit_kib: None,
            merge: "not published",
            binds_first: GCP_BINDS_RULE,
            burst: "none published",
            source: GCP_BINDS,
        },
        build: hyperdisk_balanced,
    },
];

/// The provider whose volume a `--device` value names ("gp3",
/// "gp3:iops=6000", "gp3-16k"), if it is one of the provisioned types or a
/// shipped variant of one.
pub fn provider_of(arg: &str) -> Option<&'static str> {
    type_of(arg).map(|t| t.provider)
}

/// The provisioned type a `--device` value names ("pd-ssd:size_gib=1000" →
/// pd-ssd, "gp3-16k" → gp3, an array → its members' type), if it is one: a
/// server's limits can depend on it (GCP).
pub fn type_of(arg: &str) -> Option<&'static Type> {
    // An array of volumes is its members' type.
    if let Some((_, member)) = arg
        .strip_prefix("raid0:")
        .and_then(|r| r.split_once("member="))
    {
        return type_of(member);
    }
    let name = arg.split(':').next().unwrap_or(arg);
    let name = if name == "gp3-16k" { "gp3" } else { name };
    TYPES.iter().find(|t| t.name == name)
}

/// `TYPE:KEY=VALUE,...` as a profile, or None when `arg` has no `:` (a bare
/// name or a path: the caller looks those up). `base` finds a shipped
/// profile by name.
pub fn parse(arg: &str, base: impl Fn(&str) -> Option<Profile>) -> Option<Result<Profile, String>> {
    let (type_name, rest) = arg.split_once(':')?;
    if type_name.contains('/') || type_name.ends_with(".json") {
        return None;
    }
    Some(build(type_name, rest, base))
}

fn build(
    type_name: &str,
    rest: &str,
    base: impl Fn(&str) -> Option<Profile>,
) -> Result<Profile, String> {
    let Some(t) = TYPES.iter().find(|t| t.name == type_name) else {
        return Err(format!(
            "{type_name}: not a provisioned volume type; the types are {} (and \
             instance-store:type=SIZE)",
            TYPES.iter().map(|t| t.name).collect::<Vec<_>>().join(", ")
        ));
    };
    let mut map = BTreeMap::new();
    for item in rest.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let Some((k, v)) = item.split_once('=') else {
            return Err(format!(
                "{type_name}: {item:?} is not KEY=VALUE; {type_name} takes {}",
                t.help
            ));
        };
        let k = k.trim().to_ascii_lowercase();
        if !t.keys.contains(&k.as_str()) {
            return Err(format!(
                "{type_name}: no key {k:?}; {type_name} takes {}",
                t.keys.join(", ")
            ));
        }
        if map.insert(k.clone(), v.trim().to_string()).is_some() {
            return Err(format!("{type_name}: {k} given twice"));
        }
    }
    let values = Values {
        type_name: t.name,
        map,
    };
    let caps = (t.build)(&values)?;
    let mut p = base(t.name).unwrap_or_else(|| panic!("{} is a shipped profile", t.name));
    let label = caps_label(&caps);
    p.caps.iops = Some(caps.iops);
    p.caps.mib_s = Some(caps.mib_s);
    p.caps.burst = caps.burst;
    let parts: Vec<String> = t
        .keys
        .iter()
        .filter_map(|k| values.map.get(*k).map(|v| name_part(k, v)))
        .collect();
    if !parts.is_empty() {
        p.name = format!("{}-{}", t.name, parts.join("-"));
    }
    p.description = format!("{} ({type_name}:{rest})", type_description(t.name));
    p.source = format!(
        "{} Provisioned as {type_name}:{rest}: {label}, by the type's rules (src/device/provisioned.rs: {}).",
        p.source, t.help
    );
    Profile::from_json(
        &p.to_json().to_string(),
        &format!("--device {type_name}:{rest}"),
    )
    .map_err(|e| format!("{e:#}"))
}

/// Which cap binds first on a profile's caps: the I/O size below which
/// its IOPS cap binds (KiB), and whether the IOPS cap still binds for
/// 1 MiB I/Os, each counted as ceil(1,024 / `op_size_kib`) operations.
/// None without both an IOPS and a throughput cap.
pub fn binds_first(p: &Profile) -> Option<(f64, bool)> {
    let iops = p.caps.iops?;
    let mib_s = p.caps.mib_s?;
    let per_mib = p
        .caps
        .op_size_kib
        .map_or(1.0, |u| (1024.0 / f64::from(u)).ceil());
    Some((mib_s * 1024.0 / iops, iops / per_mib < mib_s))
}

fn type_description(name: &str) -> &'static str {
    match name {
        "gp3" => "AWS EBS gp3",
        "gp2" => "AWS EBS gp2",
        "io1" => "AWS EBS io1",
        "io2" => "AWS EBS io2 Block Express",
        "azure-premium-ssd" => "Azure Premium SSD",
        "azure-premium-v2" => "Azure Premium SSD v2",
        "pd-balanced" => "GCP balanced Persistent Disk",
        "pd-ssd" => "GCP SSD Persistent Disk",
        "hyperdisk-balanced" => "GCP Hyperdisk Balanced",
        _ => "provisioned volume",
    }
}

/// "iops", "16000" → "16000iops"; "iops", "3000.5" → "3000.5iops" (a
/// number as parsed, its point kept: dropping it made "30005iops");
/// "tier", "P30" → "p30".
fn name_part(key: &str, value: &str) -> String {
    let v: String = match value.trim().parse::<f64>() {
        Ok(n) if key != "tier" && n.is_finite() => format!("{n}"),
        _ => value
            .to_ascii_lowercase()
            .chars()
            .filter(|c| c.is_ascii_alphanumeric())
            .collect(),
    };
    match key {
        "tier" => v,
        "size_gib" => format!("{v}gib"),
        _ => format!("{v}{key}"),
    }
}

fn caps_label(c: &Caps) -> String {
    let mut s = format!("{} IOPS, {} MiB/s", fmt_num(c.iops), fmt_num(c.mib_s));
    if let Some(b) = c.burst {
        s += &format!(
            ", baseline {} IOPS with a {} I/O burst bucket",
            fmt_num(b.baseline_iops),
            fmt_num(b.size_ios)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_ok(arg: &str) -> Profile {
        parse(arg, Profile::shipped).expect("has a ':'").unwrap()
    }

    fn parse_err(arg: &str) -> String {
        match parse(arg, Profile::shipped).expect("has a ':'") {
            Ok(p) => panic!(
                "{arg}: expected an error, got {}",
                crate::device::summary::line(&p)
            ),
            Err(e) => e,
        }
    }

    #[test]
    fn gp3_at_16000_is_the_shipped_gp3_16k() {
        let p = parse_ok("gp3:iops=16000,mibps=1000");
        let shipped = Profile::shipped("gp3-16k").unwrap();
        assert_eq!(p.caps, shipped.caps);
        assert_eq!(
            (p.read, p.write, p.flush),
            (shipped.read, shipped.write, shipped.flush)
        );
        assert_eq!(p.name, "gp3-16000iops-1000mibps");
        assert!(
            p.source
                .contains("Provisioned as gp3:iops=16000,mibps=1000")
        );
    }

    #[test]
    fn every_default_provisioning_is_its_shipped_profile() {
        for t in TYPES {
            let p = parse_ok(&format!("{}:", t.name));
            let shipped = Profile::shipped(t.name).unwrap();
            assert_eq!(p.caps.iops, shipped.caps.iops, "{}", t.name);
            let (a, b) = (p.caps.mib_s.unwrap(), shipped.caps.mib_s.unwrap());
            assert!((a - b).abs() < 1e-9, "{}: {a} vs {b}", t.name);
            assert_eq!(p.caps.burst, shipped.caps.burst, "{}", t.name);
            assert_eq!(p.name, t.name);
        }
    }

    #[test]
    fn limits_are_enforced_with_the_limit_in_the_message() {
        let e = parse_err("gp3:iops=20000");
        assert!(
            e.contains("gp3: iops 20000 is above gp3's maximum of 16,000"),
            "{e}"
        );
        let e = parse_err("gp3:iops=2000");
        assert!(e.contains("below gp3's minimum of 3,000"), "{e}");
        let e = parse_err("gp3:iops=3000,mibps=1000");
        assert!(
            e.contains("at most 0.25 MiB/s per provisioned IOPS") && e.contains("allows 750"),
            "{e}"
        );
        let e = parse_err("gp3:iops=16000,size_gib=20");
        assert!(e.contains("20 GiB allows 10,000"), "{e}");
        let e = parse_err("gp3:iopz=5000");
        assert!(
            e.contains("no key \"iopz\"") && e.contains("iops, mibps, size_gib"),
            "{e}"
        );
        let e = parse_err("gp3:iops=lots");
        assert!(e.contains("iops=lots is not a number"), "{e}");
        let e = parse_err("gp3:iops=4000,iops=5000");
        assert!(e.contains("iops given twice"), "{e}");
        let e = parse_err("gp3:4000");
        assert!(e.contains("is not KEY=VALUE"), "{e}");
        let e = parse_err("floppy:iops=3");
        assert!(
            e.contains("floppy: not a provisioned volume type") && e.contains("gp3"),
            "{e}"
        );
        let e = parse_err("io1:iops=64000,size_gib=100");
        assert!(e.contains("100 GiB allows 5,000"), "{e}");
        let e = parse_err("io2:iops=300000");
        assert!(e.contains("maximum of 256,000"), "{e}");
        let e = parse_err("azure-premium-ssd:tier=p5");
        assert!(
            e.contains("not a Premium SSD tier") && e.contains("p30"),
            "{e}"
        );
        let e = parse_err("azure-premium-v2:iops=3000,mbps=1000");
        assert!(e.contains("allows 750"), "{e}");
        let e = parse_err("pd-ssd:size_gib=5");
        assert!(e.contains("minimum of 10"), "{e}");
        assert!(parse("mine.json", Profile::shipped).is_none());
        assert!(parse("./dir:x/p.json", Profile::shipped).is_none());
        assert!(parse("gp3", Profile::shipped).is_none());
    }

    #[test]
    fn size_scaled_types_follow_their_formulas() {
        let gp2 = parse_ok("gp2:size_gib=100");
        assert_eq!(gp2.caps.iops, Some(3000.0));
        assert_eq!(gp2.caps.burst.unwrap().baseline_iops, 300.0);
        assert_eq!(gp2.caps.mib_s, Some(128.0));
        let big = parse_ok("gp2:size_gib=2000");
        assert_eq!((big.caps.iops, big.caps.burst), (Some(6000.0), None));
        let tiny = parse_ok("gp2:size_gib=10");
        assert_eq!(tiny.caps.burst.unwrap().baseline_iops, 100.0);
        let io1 = parse_ok("io1:iops=64000");
        assert_eq!(io1.caps.mib_s, Some(1000.0));
        let io2 = parse_ok("io2:iops=10000");
        assert!((io2.caps.mib_s.unwrap() - 2560.0).abs() < 1e-9);
        let p20 = parse_ok("azure-premium-ssd:tier=P20");
        assert_eq!(p20.caps.iops, Some(3500.0));
        let b = p20.caps.burst.unwrap();
        assert_eq!((b.baseline_iops, b.size_ios), (2300.0, 1200.0 * 1800.0));
        assert_eq!(p20.name, "azure-premium-ssd-p20");
        let pd = parse_ok("pd-ssd:size_gib=4000");
        assert_eq!(pd.caps.iops, Some(100000.0));
        assert_eq!(pd.caps.mib_s, Some(1200.0));
        let v2 = parse_ok("azure-premium-v2:iops=80000,mbps=2000,size_gib=200");
        assert_eq!(v2.caps.iops, Some(80000.0));
        let hd = parse_ok("hyperdisk-balanced:iops=160000,mibps=2400");
        assert_eq!(hd.name, "hyperdisk-balanced-160000iops-2400mibps");
    }

    proptest::proptest! {
        /// Any gp3 provisioning within AWS's limits builds a valid profile
        /// whose caps are exactly what was asked; any beyond them is refused.
        #[test]
        fn gp3_within_limits_is_exact_and_beyond_is_refused(
            iops in 1000u32..20000,
            mibps in 50u32..1200,
        ) {
            let arg = format!("gp3:iops={iops},mibps={mibps}");
            let ok = (3000..=16000).contains(&iops)
                && (125..=1000).contains(&mibps)
                && f64::from(mibps) <= (0.25 * f64::from(iops)).max(125.0);
            match parse(&arg, Profile::shipped).unwrap() {
                Ok(p) => {
                    proptest::prop_assert!(ok, "{arg} accepted");
                    proptest::prop_assert_eq!(p.caps.iops, Some(f64::from(iops)));
                    proptest::prop_assert_eq!(p.caps.mib_s, Some(f64::from(mibps)));
                }
                Err(e) => {
                    proptest::prop_assert!(!ok, "{arg} refused: {e}");
                    proptest::prop_assert!(e.starts_with("gp3: "), "{e}");
                }
            }
        }

        /// gp2's caps follow its size: baseline 3 IOPS per GiB, a burst
        /// below 3,000, never a profile the validator refuses.
        #[test]
        fn gp2_follows_its_size(size in 1u32..16384) {
            let p = parse(&format!("gp2:size_gib={size}"), Profile::shipped).unwrap().unwrap();
            let baseline = (3.0 * f64::from(size)).clamp(100.0, 16000.0);
            match p.caps.burst {
                Some(b) => {
                    proptest::prop_assert!(baseline < 3000.0);
                    proptest::prop_assert_eq!(b.baseline_iops, baseline);
                    proptest::prop_assert_eq!(p.caps.iops, Some(3000.0));
                }
                None => proptest::prop_assert_eq!(p.caps.iops, Some(baseline)),
            }
        }
    }

    #[test]
    fn each_type_counts_io_as_its_provider_says() {
        for t in TYPES {
            let c = &t.counting;
            let p = Profile::shipped(t.name).unwrap();
            assert!(c.source.contains("https://"), "{}: no URL", t.name);
            assert!(c.source.contains('"'), "{}: no quoted phrase", t.name);
            match c.io_unit_kib {
                // The model counts by the published unit.
                Some(u) => assert_eq!(p.caps.op_size_kib, Some(u), "{}", t.name),
                // Where none is published the profile says its unit is a guess.
                None => {
                    assert!(p.source.contains("a guess"), "{}: {}", t.name, p.source);
                    assert!(c.source.contains("published"), "{}", t.name);
                }
            }
            // A burst in the default profile is one the table says is
            // modelled (Azure's P1-P20 burst is, though its default P30 has
            // none).
            let modelled = c.burst.contains("(modelled)");
            assert!(p.caps.burst.is_none() || modelled, "{}", t.name);
            assert!(modelled || !c.burst.contains("credits"), "{}", t.name);
        }
        let unit = |name: &str| {
            TYPES
                .iter()
                .find(|t| t.name == name)
                .unwrap()
                .counting
                .io_unit_kib
        };
        assert_eq!(unit("gp3"), Some(256));
        assert_eq!(unit("azure-premium-ssd"), Some(256));
        assert_eq!(unit("azure-premium-v2"), Some(256));
        assert_eq!(unit("pd-ssd"), None);
        assert_eq!(unit("hyperdisk-balanced"), None);
    }

    #[test]
    fn iops_binds_below_the_crossover_and_throughput_above() {
        let kib = |arg: &str| {
            let p = match parse(arg, Profile::shipped) {
                Some(r) => r.unwrap(),
                None => Profile::shipped(arg).unwrap(),
            };
            binds_first(&p).unwrap()
        };
        // gp3 at 3,000 IOPS and 125 MiB/s: 125 × 1,024 / 3,000 = 42.7 KiB;
        // 1 MiB I/Os (4 operations each) are bound by throughput.
        let (below, large_iops) = kib("gp3");
        assert!((below - 42.67).abs() < 0.01, "{below}");
        assert!(!large_iops);
        assert_eq!(kib("gp3:iops=16000,mibps=1000").0, 64.0);
        // io1 at 100 IOPS: 25 MiB/s of 256 KiB I/Os, under its 500 MiB/s.
        assert!(kib("io1:iops=100").1);
        // The module doc's table, at each default.
        for (name, want) in [
            ("gp2", 85.0),
            ("io1", 171.0),
            ("io2", 64.0),
            ("azure-premium-ssd", 39.0),
            ("azure-premium-v2", 41.0),
            ("pd-balanced", 48.0),
            ("pd-ssd", 23.0),
            ("hyperdisk-balanced", 48.0),
        ] {
            let (below, large_iops) = kib(name);
            assert_eq!(below.round(), want, "{name}");
            assert!(!large_iops, "{name}");
        }
    }

    #[test]
    fn providers_are_known_for_volumes_only() {
        assert_eq!(provider_of("gp3:iops=6000"), Some("AWS"));
        assert_eq!(provider_of("gp3-16k"), Some("AWS"));
        assert_eq!(provider_of("azure-premium-v2"), Some("Azure"));
        assert_eq!(provider_of("pd-ssd"), Some("GCP"));
        assert_eq!(provider_of("nvme"), None);
        assert_eq!(provider_of("mine.json"), None);
        let name = |arg: &str| type_of(arg).map(|t| t.name);
        assert_eq!(name("pd-ssd:size_gib=1000"), Some("pd-ssd"));
        assert_eq!(name("raid0:n=4,member=pd-balanced"), Some("pd-balanced"));
        assert_eq!(name("gp3-16k"), Some("gp3"));
        assert_eq!(name("nvme"), None);
    }
}
