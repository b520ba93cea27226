//! Each provisioned type's caps from the values given, checked against the
//! limits its provider publishes (the table in [`super`]'s header).

use super::*;

/// `iops` may be at most `per_gib` × size when the size is given.
pub(super) fn per_gib(
    v: &Values,
    iops: f64,
    per_gib: f64,
    floor: f64,
    min_gib: f64,
    max_gib: f64,
) -> Result<(), String> {
    if let Some(size) = v.num("size_gib", None, min_gib, max_gib)? {
        let max = (per_gib * size).max(floor);
        if iops > max {
            return Err(format!(
                "{}: iops {} needs a larger volume: at most {} IOPS per GiB, so {} GiB allows {}",
                v.type_name,
                fmt_num(iops),
                fmt_num(per_gib),
                fmt_num(size),
                fmt_num(max)
            ));
        }
    }
    Ok(())
}

/// AWS EBS gp3 (https://docs.aws.amazon.com/ebs/latest/userguide/general-purpose.html):
/// "a consistent baseline IOPS performance of 3,000 IOPS ... additional
/// IOPS (up to a maximum of 16,000) ... at a ratio of 500 IOPS per GiB";
/// "baseline throughput performance of 125 MiB/s ... up to a maximum of
/// 1,000 MiB/s ... at a ratio of 0.25 MiB/s per provisioned IOPS".
pub(super) fn gp3(v: &Values) -> Result<Caps, String> {
    let iops = v.required("iops", 3000.0, 3000.0, 16000.0)?;
    let mib_s = v.required("mibps", 125.0, 125.0, 1000.0)?;
    let max_mib_s = (0.25 * iops).max(125.0);
    if mib_s > max_mib_s {
        return Err(format!(
            "gp3: mibps {} needs more IOPS: at most 0.25 MiB/s per provisioned IOPS, so iops {} \
             allows {} (mibps 1000 needs iops 4000)",
            fmt_num(mib_s),
            fmt_num(iops),
            fmt_num(max_mib_s)
        ));
    }
    per_gib(v, iops, 500.0, 3000.0, 1.0, 16384.0)?;
    Ok(Caps {
        iops,
        mib_s,
        burst: None,
    })
}

/// AWS EBS gp2 (same page): baseline 3 IOPS per GiB between 100 and 16,000;
/// below 1 TiB a burst to 3,000 IOPS on a 5.4 million credit bucket;
/// 128 MiB/s up to 170 GiB, 250 MiB/s above ("can burst to 250" between
/// 170 and 334 GiB: taken as 250).
pub(super) fn gp2(v: &Values) -> Result<Caps, String> {
    let size = v.required("size_gib", 500.0, 1.0, 16384.0)?;
    let baseline = (3.0 * size).clamp(100.0, 16000.0);
    let mib_s = if size <= 170.0 { 128.0 } else { 250.0 };
    Ok(if baseline < 3000.0 {
        Caps {
            iops: 3000.0,
            mib_s,
            burst: Some(Burst {
                size_ios: 5.4e6,
                baseline_iops: baseline,
            }),
        }
    } else {
        Caps {
            iops: baseline,
            mib_s,
            burst: None,
        }
    })
}

/// AWS EBS io1 (https://docs.aws.amazon.com/ebs/latest/userguide/provisioned-iops.html):
/// 100 to 64,000 IOPS, at most 50 per GiB; "up to 32,000 IOPS ... as much
/// as 500 MiB/s"; above, "a linear increase in throughput at a rate of
/// 16 KiB per provisioned IOPS".
pub(super) fn io1(v: &Values) -> Result<Caps, String> {
    let iops = v.required("iops", 3000.0, 100.0, 64000.0)?;
    per_gib(v, iops, 50.0, 0.0, 4.0, 16384.0)?;
    let mib_s = if iops <= 32000.0 {
        500.0
    } else {
        iops * 16.0 / 1024.0
    };
    Ok(Caps {
        iops,
        mib_s,
        burst: None,
    })
}

/// AWS EBS io2 Block Express (same page): "Provisioned IOPS up to 256,000,
/// with an IOPS:GiB ratio of 1,000:1"; "Volume throughput up to 4,000
/// MiB/s. Throughput scales proportionally up to 0.256 MiB/s per
/// provisioned IOPS".
pub(super) fn io2(v: &Values) -> Result<Caps, String> {
    let iops = v.required("iops", 64000.0, 100.0, 256000.0)?;
    per_gib(v, iops, 1000.0, 0.0, 4.0, 65536.0)?;
    Ok(Caps {
        iops,
        mib_s: (0.256 * iops).min(4000.0),
        burst: None,
    })
}

/// Azure Premium SSD sizes (https://learn.microsoft.com/azure/virtual-machines/disks-types,
/// MicrosoftDocs/azure-docs includes/disk-storage-premium-ssd-sizes.md):
/// (tier, base IOPS, base MB/s, credit burst IOPS). P1-P20 burst to 3,500
/// IOPS "Max burst duration 30 min", so their bucket is (3,500 − base) × 1,800
/// s of credits (derived); P30 and up burst only on demand (not modelled).
/// MB/s are 10^6 bytes.
const AZURE_TIERS: &[(&str, f64, f64, Option<f64>)] = &[
    ("p1", 120.0, 25.0, Some(3500.0)),
    ("p2", 120.0, 25.0, Some(3500.0)),
    ("p3", 120.0, 25.0, Some(3500.0)),
    ("p4", 120.0, 25.0, Some(3500.0)),
    ("p6", 240.0, 50.0, Some(3500.0)),
    ("p10", 500.0, 100.0, Some(3500.0)),
    ("p15", 1100.0, 125.0, Some(3500.0)),
    ("p20", 2300.0, 150.0, Some(3500.0)),
    ("p30", 5000.0, 200.0, None),
    ("p40", 7500.0, 250.0, None),
    ("p50", 7500.0, 250.0, None),
    ("p60", 16000.0, 500.0, None),
    ("p70", 18000.0, 750.0, None),
    ("p80", 20000.0, 900.0, None),
];

pub(super) fn azure_premium_ssd(v: &Values) -> Result<Caps, String> {
    let tier = v
        .map
        .get("tier")
        .map_or("p30".to_string(), |t| t.to_ascii_lowercase());
    let Some(&(_, iops, mb_s, burst)) = AZURE_TIERS.iter().find(|t| t.0 == tier) else {
        return Err(format!(
            "azure-premium-ssd: tier {tier:?} is not a Premium SSD tier; tiers: {}",
            AZURE_TIERS
                .iter()
                .map(|t| t.0)
                .collect::<Vec<_>>()
                .join(", ")
        ));
    };
    let mib_s = mb_s * 1e6 / MIB;
    Ok(match burst {
        Some(b) => Caps {
            iops: b,
            mib_s,
            burst: Some(Burst {
                size_ios: (b - iops) * 1800.0,
                baseline_iops: iops,
            }),
        },
        None => Caps {
            iops,
            mib_s,
            burst: None,
        },
    })
}

/// Azure Premium SSD v2 (same page): "a baseline IOPS of 3,000 ... After 6
/// GiB, the maximum IOPS a disk can have increases at a rate of 500 per
/// GiB, up to 80,000"; "a baseline throughput of 125 MB/s ... the maximum
/// throughput that can be set increases by 0.25 MB/s per set IOPS ...
/// 2,000 MB/s is the maximum".
pub(super) fn azure_premium_v2(v: &Values) -> Result<Caps, String> {
    let iops = v.required("iops", 3000.0, 3000.0, 80000.0)?;
    let mb_s = v.required("mbps", 125.0, 125.0, 2000.0)?;
    let max_mb_s = (0.25 * iops).clamp(125.0, 2000.0);
    if mb_s > max_mb_s {
        return Err(format!(
            "azure-premium-v2: mbps {} needs more IOPS: at most 0.25 MB/s per IOPS, so iops {} \
             allows {}",
            fmt_num(mb_s),
            fmt_num(iops),
            fmt_num(max_mb_s)
        ));
    }
    per_gib(v, iops, 500.0, 3000.0, 1.0, 65536.0)?;
    Ok(Caps {
        iops,
        mib_s: mb_s * 1e6 / MIB,
        burst: None,
    })
}

/// GCP pd-balanced (https://cloud.google.com/compute/docs/disks/performance):
/// 6 IOPS and 0.28 MiB/s per GiB over a 3,000 IOPS / 140 MiB/s baseline,
/// at most 80,000 IOPS and 1,200 MiB/s per instance.
pub(super) fn pd_balanced(v: &Values) -> Result<Caps, String> {
    persistent_disk(v, (3000.0, 6.0, 80000.0), (140.0, 0.28, 1200.0))
}

/// GCP pd-ssd (same page): 30 IOPS and 0.48 MiB/s per GiB over a 6,000 IOPS
/// / 240 MiB/s baseline, at most 100,000 IOPS and 1,200 MiB/s per instance.
pub(super) fn pd_ssd(v: &Values) -> Result<Caps, String> {
    persistent_disk(v, (6000.0, 30.0, 100000.0), (240.0, 0.48, 1200.0))
}

/// A Persistent Disk's caps by its `size_gib`: IOPS and MiB/s, each as
/// (baseline, per GiB, most per instance).
fn persistent_disk(
    v: &Values,
    iops: (f64, f64, f64),
    mib_s: (f64, f64, f64),
) -> Result<Caps, String> {
    let size = v.required("size_gib", 500.0, 10.0, 65536.0)?;
    let by_size = |(base, per_gib, most): (f64, f64, f64)| (base + per_gib * size).min(most);
    Ok(Caps {
        iops: by_size(iops),
        mib_s: by_size(mib_s),
        burst: None,
    })
}

/// GCP Hyperdisk Balanced
/// (https://cloud.google.com/compute/docs/disks/hd-types/hyperdisk-balanced):
/// 3,000 IOPS and 140 MiB/s included; "up to 160,000 IOPS and 2,400 MiB/s".
/// The size-dependent limits are not checked.
pub(super) fn hyperdisk_balanced(v: &Values) -> Result<Caps, String> {
    let iops = v.required("iops", 3000.0, 3000.0, 160000.0)?;
    let mib_s = v.required("mibps", 140.0, 140.0, 2400.0)?;
    v.num("size_gib", None, 4.0, 65536.0)?;
    Ok(Caps {
        iops,
        mib_s,
        burst: None,
    })
}
