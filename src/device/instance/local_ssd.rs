//! GCP Local SSD: the 375 GiB NVMe disks a user attaches to an n1, n2, n2d
//! or c2 VM when creating it, as a device: `--device local-ssd:count=N`,
//! for the `--instance` type or `type=TYPE`. (z3 types come with their own
//! Titanium SSD: their preset's store, `--device instance-store`.)
//!
//! # Where the figures come from
//!
//! ScyllaDB's `common/gcp_io_params.yaml` ([`SCYLLA_GCP_SOURCE`], rows
//! copied into `scylla_gcp_io.tsv`, whose header quotes how each part was
//! taken) has two tables keyed by the number of disks, and pgiosim reads
//! them as ScyllaDB's setup does:
//!
//! * `measured_local_ssd`: ScyllaDB's measurements per machine type and
//!   disk count, the lowest of its runs (n2-highmem-32 to -128,
//!   n2-standard-32, n2d-highmem-32 to -96, c2-standard-30 and -60). Used
//!   when the type and count have a row: ScyllaDB found the read bandwidth
//!   depends on the type, 6.37 to 10.16 GB/s at 24 disks against Google's
//!   9.81.
//! * `local_ssd_nvme`: Google's published limits for 1-8, 16, 24 and 32
//!   disks, all of them together. Used otherwise. Google's table publishes
//!   no other count, so pgiosim refuses one.
//!
//! Google's limits need enough vCPUs: "To achieve maximum performance on N1
//! machines, select a machine type with 32 or more vCPUs. To achieve
//! maximum performance on N2 and N2D machines, select a machine type with
//! 24 or more vCPUs" (cloud.google.com/compute/docs/disks/local-ssd, of its
//! 16- and 24-disk configurations; ScyllaDB's GcpIoSetup tests say the
//! same, "n2 needs at least 24 vCPUs, n1 needs at least 32", and its
//! `scylla_cloud.py` at f25b2c5 warns below 32 vCPUs at 16 or more disks,
//! whatever the type). [`min_vcpus`] keeps those: from 16 disks, 24 vCPUs
//! on n2 and n2d, 32 on any other type. Below them ScyllaDB runs iotune on
//! the VM; pgiosim cannot, so it uses the limits and says so (a notice,
//! and the profile's source).

use super::aws_store::{
    SCYLLA_GCP_SOURCE, ScyllaRow, Store, StoreFigures, scylla_disk_row, scylla_disk_rows,
};
use super::{Instance, Provider};
use crate::device::profile::{Profile, fmt_num};

/// The `--device` name of GCP's Local SSD.
pub const LOCAL_SSD: &str = "local-ssd";

/// ScyllaDB's key for Google's published limits per disk count.
const PUBLISHED_KEY: &str = "local_ssd_nvme";

/// One Local SSD disk, GiB (Google: "Each Local SSD disk is 375 GiB").
pub const DISK_GIB: u32 = 375;

/// [`DISK_GIB`] in GB, rounded, as [`Store::volume_gb`] counts it
/// (402,653,184,000 bytes).
const DISK_GB: u32 = 403;

/// Where Google's vCPU minimum comes from.
const MIN_VCPUS_SOURCE: &str = "Google: \"To achieve maximum performance on N1 machines, \
     select a machine type with 32 or more vCPUs. To achieve maximum performance on N2 and N2D \
     machines, select a machine type with 24 or more vCPUs\" (cloud.google.com/compute/docs/\
     disks/local-ssd, of 16 and 24 disks; ScyllaDB's setup asks 32 from 16 disks on other types)";

/// `--device local-ssd:count=N[,type=TYPE]` as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request<'a> {
    /// Disks attached.
    pub count: u32,
    /// The machine type, when the argument names one.
    pub machine_type: Option<&'a str>,
}

/// `arg` as a Local SSD request; None when it does not name `local-ssd`.
pub fn parse(arg: &str) -> Option<Result<Request<'_>, String>> {
    let rest = match arg.strip_prefix(LOCAL_SSD)? {
        "" => "",
        r => r.strip_prefix(':')?,
    };
    Some(parse_keys(rest))
}

fn parse_keys(rest: &str) -> Result<Request<'_>, String> {
    let mut count = None;
    let mut machine_type = None;
    for kv in rest.split(',').filter(|s| !s.is_empty()) {
        match kv.split_once('=') {
            Some(("count", n)) => {
                count = Some(
                    n.trim()
                        .parse::<u32>()
                        .map_err(|_| format!("count={n}: not a whole number of disks"))?,
                )
            }
            Some(("type", t)) => machine_type = Some(t.trim()),
            _ => return Err(format!("{kv:?}: the keys are count=N and type=TYPE")),
        }
    }
    let count = count.ok_or_else(|| {
        format!(
            "give the disks attached, count=N ({}), e.g. {LOCAL_SSD}:count=8",
            counts_text()
        )
    })?;
    Ok(Request {
        count,
        machine_type,
    })
}

/// The disk counts Google publishes limits for, ascending.
pub fn counts() -> Vec<u32> {
    scylla_disk_rows()
        .filter(|r| r.key == PUBLISHED_KEY)
        .filter_map(|r| r.disks)
        .collect()
}

/// [`counts`] as "1-8, 16, 24 or 32".
fn counts_text() -> String {
    let c = counts();
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < c.len() {
        let mut j = i;
        while j + 1 < c.len() && c[j + 1] == c[j] + 1 {
            j += 1;
        }
        parts.push(if j > i + 1 {
            format!("{}-{}", c[i], c[j])
        } else {
            c[i].to_string()
        });
        if j == i + 1 {
            parts.push(c[j].to_string());
        }
        i = j + 1;
    }
    match parts.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => parts.join(""),
    }
}

/// The vCPUs Google says `disks` disks need on the series `series` (n2,
/// n2d, c2, ...) to reach its limits; None where it states no minimum.
pub fn min_vcpus(series: &str, disks: u32) -> Option<u32> {
    match (disks >= 16, series) {
        (false, _) => None,
        (true, "n2" | "n2d") => Some(24),
        (true, _) => Some(32),
    }
}

/// A machine type Local SSD attaches to: its name and vCPUs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Machine<'a> {
    name: &'a str,
    vcpus: u32,
}

impl Machine<'_> {
    /// n2-standard-32 → n2.
    fn series(&self) -> &str {
        self.name.split('-').next().unwrap_or(self.name)
    }
}

/// The machine type `name`: a GCP preset without a store of its own, or a
/// type ScyllaDB measured (its vCPUs are the number its name ends in, as
/// GCP names its predefined types).
fn machine(name: &str) -> Result<Machine<'_>, String> {
    if let Some(inst) = super::lookup(name) {
        return preset_machine(inst);
    }
    let measured = scylla_disk_rows().any(|r| r.measured && r.key.eq_ignore_ascii_case(name));
    let vcpus = name.rsplit('-').next().and_then(|v| v.parse::<u32>().ok());
    match (measured, vcpus) {
        (true, Some(vcpus)) => Ok(Machine { name, vcpus }),
        _ => Err(format!(
            "type={name}: not a GCP preset (see pgiosim instances) nor a type ScyllaDB measured \
             Local SSD on ({})",
            measured_types().join(", ")
        )),
    }
}

/// The machine types of ScyllaDB's measured rows, once each.
fn measured_types() -> Vec<&'static str> {
    let mut t: Vec<&'static str> = scylla_disk_rows()
        .filter(|r| r.measured)
        .map(|r| r.key)
        .collect();
    t.dedup();
    t
}

/// `inst` as a machine Local SSD attaches to, or why it is not one.
fn preset_machine(inst: &'static Instance) -> Result<Machine<'static>, String> {
    if inst.provider != Provider::Gcp {
        return Err(format!(
            "{} is an {} server; {LOCAL_SSD} is GCP's Local SSD (its local disk: --device \
             instance-store)",
            inst.name,
            inst.provider.name()
        ));
    }
    if inst.store.is_some() {
        return Err(format!(
            "{} comes with its own Titanium SSD: --device instance-store",
            inst.name
        ));
    }
    // Google: "For C3 and C3D, Local SSD storage is available only with
    // certain machine types, such as c3-standard-88-lssd"
    // (cloud.google.com/compute/docs/disks/add-local-ssd).
    if inst.name.starts_with("c3-") {
        return Err(format!(
            "{} takes no Local SSD: GCP sells c3's only as the c3-standard-N-lssd types, which \
             have no figures here",
            inst.name
        ));
    }
    Ok(Machine {
        name: inst.name,
        vcpus: inst.vcpus,
    })
}

/// Local SSD as modelled: the disks' figures, and a notice when the VM has
/// fewer vCPUs than Google says its limits need.
#[derive(Clone, Debug, PartialEq)]
pub struct LocalSsd {
    pub store: Store,
    /// The machine type, when given.
    pub machine_type: Option<&'static str>,
    /// Why the figures may not be reached, in one line.
    pub notice: Option<String>,
}

/// `count` disks on `machine_type` (a GCP preset or a type ScyllaDB
/// measured; None: unknown): ScyllaDB's measurement for the type and
/// count where there is one, else Google's published limits.
pub fn local_ssd(count: u32, machine_type: Option<&str>) -> Result<LocalSsd, String> {
    let published = scylla_disk_row(PUBLISHED_KEY, count).ok_or_else(|| {
        format!(
            "count={count}: Google publishes Local SSD (NVMe) figures for {} disks, not {count}",
            counts_text()
        )
    })?;
    let m = machine_type.map(machine).transpose()?;
    let measured = m.and_then(|m| {
        scylla_disk_rows()
            .find(|r| r.measured && r.disks == Some(count) && r.key.eq_ignore_ascii_case(m.name))
    });
    let row = measured.unwrap_or(published);
    let notice = match (m, measured) {
        (Some(m), None) => min_vcpus(m.series(), count)
            .filter(|need| m.vcpus < *need)
            .map(|need| {
                format!(
                    "Google's limits for {count} Local SSD disks need {need} or more vCPUs on {} \
                     ({} has {}); ScyllaDB measures such a VM instead. They are used as given: \
                     the VM may not reach them",
                    m.series(),
                    m.name,
                    m.vcpus
                )
            }),
        _ => None,
    };
    Ok(LocalSsd {
        store: store_of(row, count),
        machine_type: m.map(|m| static_name(m.name)),
        notice,
    })
}

/// `name` as the `'static` key it equals: a preset's name or a measured
/// row's key.
fn static_name(name: &str) -> &'static str {
    super::lookup(name).map(|i| i.name).unwrap_or_else(|| {
        scylla_disk_rows()
            .map(|r| r.key)
            .find(|k| k.eq_ignore_ascii_case(name))
            .expect("machine() accepted only presets and measured types")
    })
}

/// `row` as the store of `count` disks.
fn store_of(row: &'static ScyllaRow, count: u32) -> Store {
    Store {
        volumes: count,
        volume_gb: DISK_GB,
        read_iops: row.read_iops,
        write_iops: row.write_iops,
        read_mb_s: row.read_bandwidth / 1e6,
        write_mb_s: row.write_bandwidth / 1e6,
        published_read_iops: None,
        published_write_iops: None,
        provider: Provider::Gcp,
        figures: if row.measured {
            StoreFigures::Measured { row }
        } else {
            StoreFigures::Published { row }
        },
    }
}

/// The device `count` Local SSD disks on `machine_type` make, with `base`'s
/// latencies (Google publishes none), and the notice [`local_ssd`] gives.
pub fn profile(
    base: &Profile,
    count: u32,
    machine_type: Option<&str>,
) -> Result<(Profile, Option<String>), String> {
    let l = local_ssd(count, machine_type)?;
    let on = l
        .machine_type
        .map(|t| format!(" on {t}"))
        .unwrap_or_default();
    let name = match l.machine_type {
        Some(t) => format!("{}-{LOCAL_SSD}-{count}", t.to_ascii_lowercase()),
        None => format!("{LOCAL_SSD}-{count}"),
    };
    let what = format!("GCP Local SSD, {count} × {DISK_GIB} GiB NVMe{on}");
    let notice = l
        .notice
        .as_ref()
        .map(|n| format!(" {n} ({MIN_VCPUS_SOURCE})."))
        .unwrap_or_default();
    let head = format!("{what}: {}.{notice}", l.store.figures_source());
    Ok((l.store.profile(base, name, &what, &head), l.notice))
}

impl Store {
    /// Where a GCP store's figures come from, with the row; None for
    /// another provider's.
    pub(super) fn gcp_figures_source(&self) -> Option<String> {
        if self.provider != Provider::Gcp {
            return None;
        }
        let bytes = |r: &ScyllaRow| {
            format!(
                "{} / {} IOPS, {} / {} bytes/s",
                fmt_num(r.read_iops),
                fmt_num(r.write_iops),
                fmt_num(r.read_bandwidth),
                fmt_num(r.write_bandwidth)
            )
        };
        let text = match self.figures {
            StoreFigures::Measured { row } => {
                let google = scylla_disk_row(PUBLISHED_KEY, self.volumes)
                    .map(|g| format!(" Google's published limits for as many disks: {}", bytes(g)))
                    .unwrap_or_default();
                format!(
                    "{}: {SCYLLA_GCP_SOURCE}, row {} at {} disks: {}, the whole VM's, the lowest \
                     of ScyllaDB's runs on that machine type.{google}; the measurement is used",
                    self.figures_text(),
                    row.key,
                    self.volumes,
                    bytes(row)
                )
            }
            StoreFigures::Published { row } if row.disks.is_some() => format!(
                "{}: Google's published limits for {} Local SSD (NVMe) disks, all together \
                 (cloud.google.com/compute/docs/disks/local-ssd#local-ssd-perf-nvme, MiB/s as \
                 bytes/s), as {SCYLLA_GCP_SOURCE} copies them, row {PUBLISHED_KEY} {}: {}. Not a \
                 measurement: ScyllaDB measured less read bandwidth on some types (24 disks: \
                 6.37 GB/s on n2-highmem-32 against these 9.81)",
                self.figures_text(),
                self.volumes,
                self.volumes,
                bytes(row)
            ),
            StoreFigures::Published { row } => {
                let per = |v: f64| fmt_num(v / f64::from(self.volumes));
                format!(
                    "{}: {SCYLLA_GCP_SOURCE}, row {}: {}, the whole VM's: {} Titanium SSD \
                     disks × {} / {} IOPS, {} / {} bytes/s each, round figures ScyllaDB does \
                     not say it measured, read as Google's limits; they are used",
                    self.figures_text(),
                    row.key,
                    bytes(row),
                    self.volumes,
                    per(row.read_iops),
                    per(row.write_iops),
                    per(row.read_bandwidth),
                    per(row.write_bandwidth)
                )
            }
            StoreFigures::Derived { .. } => return None,
        };
        Some(text)
    }
}

#[cfg(test)]
mod tests {
    use super::super::{MIB, instances, lookup};
    use super::*;

    fn nvme() -> Profile {
        Profile::shipped("nvme").unwrap()
    }

    fn mb_s(mib_s: Option<f64>) -> f64 {
        mib_s.unwrap() * MIB / 1e6
    }

    #[test]
    fn a_z3_size_is_scylladbs_row_exactly() {
        // gcp_io_params.yaml z3-highmem-16-highlssd: 1,500,000 / 6,442,450,944
        // read, 1,000,000 / 5,368,709,120 write; 2 Titanium SSD disks.
        let i = lookup("z3-highmem-16-highlssd").unwrap();
        let s = i.store.unwrap();
        assert_eq!((s.volumes, s.volume_gb), (2, 3221));
        assert_eq!((s.read_iops, s.write_iops), (1500000.0, 1000000.0));
        assert_eq!((s.read_mb_s, s.write_mb_s), (6442.450944, 5368.70912));
        let StoreFigures::Published { row } = s.figures else {
            panic!("z3's rows are limits, not measurements")
        };
        assert_eq!((row.key, row.disks), ("z3-highmem-16-highlssd", None));
        let p = i.store_profile(&nvme()).unwrap();
        assert_eq!(p.caps.read_iops, Some(1500000.0));
        assert_eq!(p.caps.write_iops, Some(1000000.0));
        assert!((mb_s(p.caps.read_mib_s) - 6442.450944).abs() < 1e-6);
        assert!((mb_s(p.caps.write_mib_s) - 5368.70912).abs() < 1e-6);
        for part in [
            "054c771a6bcefea2394419b97da63b84d908c511",
            "row z3-highmem-16-highlssd: 1,500,000 / 1,000,000 IOPS",
            "2 Titanium SSD disks × 750,000 / 500,000 IOPS, 3,221,225,472 / 2,684,354,560",
            "GCP publishes none for local SSDs",
        ] {
            assert!(p.source.contains(part), "{part:?} not in {}", p.source);
        }
        assert!(
            i.summary_line().contains("(published limits)"),
            "{}",
            i.summary_line()
        );
        assert_eq!(i.cpu_key, Some("xeon-8481c"));
    }

    #[test]
    fn every_z3_row_is_its_disks_times_one_disks_limits() {
        // The header's reading of the z3 rows: N disks × the same per-disk
        // figures, N from Spare Cores' lsblk, on all 11 types.
        let mut n = 0;
        for i in instances().iter().filter(|i| i.name.starts_with("z3-")) {
            let s = i.store.unwrap();
            let v = f64::from(s.volumes);
            assert_eq!(s.read_iops / v, 750000.0, "{}", i.name);
            assert_eq!(s.write_iops / v, 500000.0, "{}", i.name);
            assert_eq!(s.read_mb_s * 1e6 / v, 3.0 * 1024.0 * MIB, "{}", i.name);
            assert_eq!(s.write_mb_s * 1e6 / v, 2.5 * 1024.0 * MIB, "{}", i.name);
            assert_eq!(i.memory_gib, 8.0 * f64::from(i.vcpus), "{}", i.name);
            n += 1;
        }
        assert_eq!(n, 11);
    }

    #[test]
    fn n2_standard_32_with_8_disks_takes_the_measured_row() {
        let (p, notice) = profile(&nvme(), 8, Some("n2-standard-32")).unwrap();
        assert_eq!(notice, None);
        assert_eq!(p.caps.read_iops, Some(719943.0));
        assert_eq!(p.caps.write_iops, Some(399649.0));
        assert!((mb_s(p.caps.read_mib_s) - 2949.060608).abs() < 1e-6);
        assert!((mb_s(p.caps.write_mib_s) - 1648.710016).abs() < 1e-6);
        assert_eq!(p.name, "n2-standard-32-local-ssd-8");
        assert_eq!(p.channels, nvme().channels * 8);
        for part in [
            "row n2-standard-32 at 8 disks: 719,943 / 399,649 IOPS",
            "the lowest of ScyllaDB's runs",
            "Google's published limits for as many disks: 680,000 / 360,000 IOPS",
            "the measurement is used",
        ] {
            assert!(p.source.contains(part), "{part:?} not in {}", p.source);
        }
        // A measured type that is not a preset, by its row's key.
        let l = local_ssd(24, Some("n2d-highmem-64")).unwrap();
        assert_eq!(l.store.read_iops, 2520702.0);
    }

    #[test]
    fn a_count_without_a_measurement_takes_googles_limits() {
        // n2-standard-32 has a row for 8 disks only: 4 disks are Google's.
        let l = local_ssd(4, Some("n2-standard-32")).unwrap();
        assert_eq!(
            (l.store.read_iops, l.store.write_iops),
            (680000.0, 360000.0)
        );
        assert_eq!(l.store.read_mb_s, 2778.7264);
        assert_eq!(l.notice, None);
        // No type: Google's limits for the count.
        let (p, _) = profile(&nvme(), 24, None).unwrap();
        assert_eq!(p.caps.read_iops, Some(2400000.0));
        assert!((mb_s(p.caps.read_mib_s) - 9814.67136).abs() < 1e-6);
        assert_eq!(p.name, "local-ssd-24");
        assert!(
            p.source
                .contains("row local_ssd_nvme 24: 2,400,000 / 1,200,000 IOPS")
                && p.source.contains("Not a measurement"),
            "{}",
            p.source
        );
        // Google's table gives MiB/s: every row is a whole number of them.
        for r in scylla_disk_rows().filter(|r| r.key == PUBLISHED_KEY) {
            assert_eq!(r.read_bandwidth % MIB, 0.0, "{:?}", r.disks);
            assert_eq!(r.write_bandwidth % MIB, 0.0, "{:?}", r.disks);
        }
    }

    #[test]
    fn too_few_vcpus_for_googles_limits_is_said() {
        let (p, notice) = profile(&nvme(), 24, Some("n2-standard-16")).unwrap();
        let notice = notice.expect("16 vCPUs < 24");
        assert!(
            notice.contains("need 24 or more vCPUs on n2 (n2-standard-16 has 16)"),
            "{notice}"
        );
        assert!(p.source.contains(&notice), "{}", p.source);
        assert_eq!(p.caps.read_iops, Some(2400000.0));
        // Enough vCPUs, or few disks: nothing to say.
        assert_eq!(local_ssd(24, Some("n2-standard-32")).unwrap().notice, None);
        assert_eq!(local_ssd(8, Some("n2-standard-2")).unwrap().notice, None);
        assert_eq!(min_vcpus("n1", 16), Some(32));
        assert_eq!(min_vcpus("n2d", 24), Some(24));
    }

    #[test]
    fn counts_and_machines_gcp_does_not_offer_are_refused() {
        assert_eq!(counts(), vec![1, 2, 3, 4, 5, 6, 7, 8, 16, 24, 32]);
        for n in [0, 9, 12, 33] {
            let e = local_ssd(n, None).unwrap_err();
            assert!(e.contains("for 1-8, 16, 24 or 32 disks, not"), "{n}: {e}");
        }
        let e = local_ssd(8, Some("c3-standard-8")).unwrap_err();
        assert!(e.contains("c3-standard-N-lssd"), "{e}");
        let e = local_ssd(8, Some("m6id.4xlarge")).unwrap_err();
        assert!(e.contains("an AWS server"), "{e}");
        let e = local_ssd(1, Some("z3-highmem-8-highlssd")).unwrap_err();
        assert!(e.contains("instance-store"), "{e}");
        let e = local_ssd(8, Some("e2-standard-8")).unwrap_err();
        assert!(
            e.contains("n2-standard-32") && e.contains("c2-standard-60"),
            "{e}"
        );
    }

    #[test]
    fn the_argument() {
        assert_eq!(parse("nvme"), None);
        assert_eq!(parse("local-ssdx"), None);
        assert_eq!(
            parse("local-ssd:count=8,type=n2-standard-32"),
            Some(Ok(Request {
                count: 8,
                machine_type: Some("n2-standard-32")
            }))
        );
        let e = parse("local-ssd").unwrap().unwrap_err();
        assert!(e.contains("count=N (1-8, 16, 24 or 32)"), "{e}");
        assert!(parse("local-ssd:count=x").unwrap().is_err());
        assert!(parse("local-ssd:size=8").unwrap().is_err());
    }
}
