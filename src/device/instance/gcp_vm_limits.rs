//! GCP's per-VM limits on its network disks: by machine series, vCPU count
//! and disk type.
//!
//! On AWS and Azure a server has one set of limits on all its volumes
//! together. On GCP the limit depends on the disk type as well: Persistent
//! Disk "performance is shared between volumes of the same type", and the
//! figures differ by type (an n2-standard-16 allows 20,000 IOPS on its
//! pd-balanced disks, 25,000 on its pd-ssd ones). So a GCP preset's limits
//! are one row per disk type, and the `--device` type picks the row
//! ([`super::server::Limits::PerType`]).
//!
//! The figures are data, one row per series, type and vCPU range, in
//! `gcp_vm_limits.tsv` beside this file, each row naming its source, whose
//! text is in the same file: Google's Persistent Disk table as Google's own
//! gcpdiag copies it. Hyperdisk Balanced's per-VM limits were not found in a
//! readable source: a VM has none in the model ([`NOT_FOUND`]).

use std::sync::LazyLock;

use super::{ThroughputUnit, Tsv, VolumeLimits, at_line, read_tsv};

/// The disk types whose per-VM limit GCP publishes by machine series and
/// vCPUs, in the order `pgiosim instances` lists them.
pub const DISK_TYPES: &[&str] = &["pd-balanced", "pd-ssd", "hyperdisk-balanced"];

/// Why a disk type has no row for a machine: no source with the figure was
/// readable (Hyperdisk Balanced's tables; the z3 types the source predates).
pub const NOT_FOUND: &str = "Google's per-VM limit for it was not found in the sources read \
    (src/device/instance/gcp_vm_limits.tsv)";

/// One row: the limit a VM of `series` with `vcpus` puts on all its disks
/// of `disk_type` together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DiskLimit {
    pub series: &'static str,
    pub disk_type: &'static str,
    /// The vCPU counts the row covers: from, and to (None: or more).
    pub vcpus: (u32, Option<u32>),
    /// Read and write IOPS (equal in every row: the model has one cap).
    pub iops: f64,
    /// Read and write throughput, MiB/s.
    pub mib_s: f64,
    /// The key of the row's source line.
    pub source_key: &'static str,
}

impl DiskLimit {
    /// As a server's limits on its volumes: one rate, no burst, in MiB/s.
    pub fn volume_limits(&self) -> VolumeLimits {
        VolumeLimits {
            baseline_throughput: self.mib_s,
            max_throughput: self.mib_s,
            unit: ThroughputUnit::MiBps,
            baseline_iops: self.iops,
            max_iops: self.iops,
            bursts: false,
        }
    }

    /// The text of the row's source.
    pub fn source(&self) -> &'static str {
        TABLE
            .sources
            .iter()
            .find(|(k, _)| *k == self.source_key)
            .map(|(_, t)| *t)
            .expect("every row's source has a text: checked when the table is read")
    }

    fn covers(&self, vcpus: u32) -> bool {
        vcpus >= self.vcpus.0 && self.vcpus.1.is_none_or(|to| vcpus <= to)
    }
}

/// The table, one row per series, disk type and vCPU range: see its header.
const TSV: &str = include_str!("gcp_vm_limits.tsv");

struct Table {
    rows: Vec<DiskLimit>,
    /// (series, disk type, source key): the series does not take the type.
    unsupported: Vec<(&'static str, &'static str, &'static str)>,
    sources: Vec<(&'static str, &'static str)>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    parse(TSV).unwrap_or_else(|e| panic!("src/device/instance/gcp_vm_limits.tsv: {e}"))
});

/// The limit a VM of machine series `series` (n2, c3) with `vcpus` puts on
/// its disks of `disk_type`; None where none was found.
pub fn lookup(series: &str, vcpus: u32, disk_type: &str) -> Option<&'static DiskLimit> {
    TABLE
        .rows
        .iter()
        .find(|r| r.series == series && r.disk_type == disk_type && r.covers(vcpus))
}

/// Whether the series does not take `disk_type` at all (C4, N4, C4A take
/// Hyperdisk only), and Google's words for it.
pub fn unsupported(series: &str, disk_type: &str) -> Option<&'static str> {
    TABLE
        .unsupported
        .iter()
        .find(|(s, t, _)| *s == series && *t == disk_type)
        .and_then(|(_, _, k)| TABLE.sources.iter().find(|(key, _)| key == k))
        .map(|(_, text)| *text)
}

/// Every disk type's limit for a VM of `series` with `vcpus`, in
/// [`DISK_TYPES`] order; the types without one are left out.
pub fn for_machine(series: &str, vcpus: u32) -> Vec<&'static DiskLimit> {
    DISK_TYPES
        .iter()
        .filter_map(|t| lookup(series, vcpus, t))
        .collect()
}

/// Every source the rows cite, (key, text), in file order.
pub fn sources() -> &'static [(&'static str, &'static str)] {
    &TABLE.sources
}

/// A machine type's series: n2-standard-16 → n2, z3-highmem-88-highlssd → z3.
pub fn series_of(machine_type: &str) -> &str {
    machine_type.split('-').next().unwrap_or(machine_type)
}

const COLUMNS: usize = 8;

fn parse(text: &'static str) -> Result<Table, String> {
    let Tsv {
        sources,
        rows: lines,
    } = read_tsv(text, COLUMNS)?;
    let mut rows: Vec<DiskLimit> = Vec::new();
    let mut unsupported = Vec::new();
    for (n, c) in lines {
        let at = |e: String| at_line(n, e);
        if c[2] == "*" {
            if !c[3..7].iter().all(|v| *v == "-") {
                return Err(at(
                    "a '*' row says the series does not take the type: its figures are '-'".into(),
                ));
            }
            let t = disk_type(c[1]).map_err(at)?;
            unsupported.push((c[0], t, c[7]));
            continue;
        }
        let row = parse_row(&c).map_err(at)?;
        if let Some(other) = rows.iter().find(|r| {
            r.series == row.series && r.disk_type == row.disk_type && overlap(r.vcpus, row.vcpus)
        }) {
            return Err(at(format!(
                "{} {}: its vCPUs overlap another row's ({}-{:?})",
                row.series, row.disk_type, other.vcpus.0, other.vcpus.1
            )));
        }
        rows.push(row);
    }
    if let Some(r) = rows
        .iter()
        .find(|r| !sources.iter().any(|(k, _)| *k == r.source_key))
    {
        return Err(format!(
            "{} {}: source {:?} has no @ line",
            r.series, r.disk_type, r.source_key
        ));
    }
    if let Some((s, t, k)) = unsupported.iter().find(|(s, t, k)| {
        !sources.iter().any(|(key, _)| key == k)
            || rows.iter().any(|r| r.series == *s && r.disk_type == *t)
    }) {
        return Err(format!(
            "{s} {t}: a '*' row needs a source with an @ line ({k:?}) and no figures for the type"
        ));
    }
    Ok(Table {
        rows,
        unsupported,
        sources,
    })
}

fn overlap(a: (u32, Option<u32>), b: (u32, Option<u32>)) -> bool {
    let end = |v: (u32, Option<u32>)| v.1.unwrap_or(u32::MAX);
    a.0 <= end(b) && b.0 <= end(a)
}

fn disk_type(s: &str) -> Result<&'static str, String> {
    DISK_TYPES
        .iter()
        .copied()
        .find(|t| *t == s)
        .ok_or_else(|| format!("disk type {s:?} is not one of {}", DISK_TYPES.join(", ")))
}

fn parse_row(c: &[&'static str]) -> Result<DiskLimit, String> {
    let disk_type = disk_type(c[1])?;
    let num = |i: usize, what: &str| {
        c[i].parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| format!("{what}: {:?} is not a number above 0", c[i]))
    };
    let (read_iops, write_iops) = (num(3, "read_iops")?, num(4, "write_iops")?);
    let (read_mib_s, write_mib_s) = (num(5, "read_mib_s")?, num(6, "write_mib_s")?);
    if read_iops != write_iops || read_mib_s != write_mib_s {
        return Err(format!(
            "{} {} {}: read and write limits differ, and the model has one IOPS and one \
             throughput cap",
            c[0], c[1], c[2]
        ));
    }
    Ok(DiskLimit {
        series: c[0],
        disk_type,
        vcpus: vcpus(c[2])?,
        iops: read_iops,
        mib_s: read_mib_s,
        source_key: c[7],
    })
}

/// "8", "8-15" or "64+".
fn vcpus(s: &str) -> Result<(u32, Option<u32>), String> {
    let count = |v: &str| {
        v.parse::<u32>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("vcpus {s:?}: not N, N-M or N+"))
    };
    if let Some(from) = s.strip_suffix('+') {
        return Ok((count(from)?, None));
    }
    match s.split_once('-') {
        Some((a, b)) => {
            let (from, to) = (count(a)?, count(b)?);
            if to < from {
                return Err(format!("vcpus {s:?}: the range ends below its start"));
            }
            Ok((from, Some(to)))
        }
        None => {
            let n = count(s)?;
            Ok((n, Some(n)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_sizes_read_back_as_google_publishes_them() {
        // N2, by range: 2-7, 8-15, 16-31, 32-63 and 64 or more vCPUs.
        let at = |s: &str, v: u32, t: &str| {
            let r = lookup(s, v, t).unwrap_or_else(|| panic!("{s} {v} {t}"));
            (r.iops, r.mib_s)
        };
        assert_eq!(at("n2", 2, "pd-balanced"), (15000.0, 240.0));
        assert_eq!(at("n2", 8, "pd-balanced"), (15000.0, 800.0));
        assert_eq!(at("n2", 16, "pd-balanced"), (20000.0, 1200.0));
        assert_eq!(at("n2", 48, "pd-ssd"), (60000.0, 1200.0));
        assert_eq!(at("n2", 80, "pd-ssd"), (100000.0, 1200.0));
        assert_eq!(at("n2d", 224, "pd-balanced"), (80000.0, 1200.0));
        // C3 and Z3, by size.
        assert_eq!(at("c3", 22, "pd-ssd"), (25000.0, 800.0));
        assert_eq!(at("c3", 176, "pd-ssd"), (80000.0, 1200.0));
        assert_eq!(at("z3", 88, "pd-ssd"), (100000.0, 1200.0));
        // C3 has no 16-vCPU size; the z3 types the source predates have none.
        assert!(lookup("c3", 16, "pd-ssd").is_none());
        assert!(lookup("z3", 8, "pd-balanced").is_none());
        assert!(lookup("n4", 16, "pd-balanced").is_none());
        // C4, N4 and C4A take Hyperdisk only.
        assert!(unsupported("c4", "pd-ssd").is_some_and(|s| s.contains("C4 doesn't support")));
        assert!(unsupported("n4", "pd-balanced").is_some());
        assert!(unsupported("c4a", "hyperdisk-balanced").is_none());
        assert!(unsupported("n2", "pd-ssd").is_none());
    }

    #[test]
    fn the_disk_type_picks_the_limit() {
        // An n2-standard-16 allows 20,000 IOPS on pd-balanced, 25,000 on
        // pd-ssd, and no Hyperdisk Balanced figure was found.
        let pd = lookup("n2", 16, "pd-balanced").unwrap();
        let ssd = lookup("n2", 16, "pd-ssd").unwrap();
        assert_eq!((pd.iops, ssd.iops), (20000.0, 25000.0));
        assert!(lookup("n2", 16, "hyperdisk-balanced").is_none());
        let all: Vec<_> = for_machine("n2", 16).iter().map(|r| r.disk_type).collect();
        assert_eq!(all, ["pd-balanced", "pd-ssd"]);
        let l = ssd.volume_limits();
        assert_eq!(l.unit, ThroughputUnit::MiBps);
        assert_eq!(
            (l.max_iops, l.max_throughput, l.bursts),
            (25000.0, 1200.0, false)
        );
        assert!(ssd.source().contains("GoogleCloudPlatform/gcpdiag"));
        assert_eq!(series_of("z3-highmem-88-highlssd"), "z3");
    }

    #[test]
    fn a_broken_table_names_its_line() {
        let e = parse("@s\tx\nn2\tpd-ssd\t8\t1\t1\t1\t1\n").err().unwrap();
        assert!(e.starts_with("line 2: 7 columns"), "{e}");
        let e = parse("@s\tx\nn2\tpd-extreme\t8\t1\t1\t1\t1\ts\n")
            .err()
            .unwrap();
        assert!(e.contains("disk type \"pd-extreme\""), "{e}");
        let e = parse("@s\tx\nn2\tpd-ssd\t8\t2\t1\t1\t1\ts\n")
            .err()
            .unwrap();
        assert!(e.contains("read and write limits differ"), "{e}");
        let e = parse("n2\tpd-ssd\t8-4\t1\t1\t1\t1\ts\n").err().unwrap();
        assert!(e.contains("ends below its start"), "{e}");
        let two = "@s\tx\nn2\tpd-ssd\t8-15\t1\t1\t1\t1\ts\nn2\tpd-ssd\t12+\t1\t1\t1\t1\ts\n";
        let e = parse(two).err().unwrap();
        assert!(e.starts_with("line 3:") && e.contains("overlap"), "{e}");
        let e = parse("@s\tx\nc4\tpd-ssd\t*\t1\t-\t-\t-\ts\n")
            .err()
            .unwrap();
        assert!(e.contains("its figures are '-'"), "{e}");
        let e = parse("n2\tpd-ssd\t8\t1\t1\t1\t1\tnone\n").err().unwrap();
        assert!(e.contains("source \"none\" has no @ line"), "{e}");
        assert!(!sources().is_empty() && !TABLE.rows.is_empty());
    }
}
