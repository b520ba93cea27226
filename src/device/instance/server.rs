//! What a server is, whichever way it is described: its RAM's page cache
//! and the limits it puts on its network volumes. A preset
//! (`--instance`) and the flags (`--ram`, `--volume-limits`) both come here,
//! so the two give the same model.

use super::{BURST_S, ThroughputUnit, VolumeLimits, lookup, overhead_bytes};
use crate::device::profile::{Burst, Profile, fmt_num};

/// The page cache a server of `ram` bytes leaves PostgreSQL's data files:
/// RAM − shared_buffers − [`overhead_bytes`]; None when nothing is left.
pub fn page_cache_bytes(ram: u64, shared_buffers: u64) -> Option<u64> {
    ram.checked_sub(shared_buffers)
        .and_then(|r| r.checked_sub(overhead_bytes(ram)))
        .filter(|&b| b > 0)
}

/// A server's limits on its network volumes, with who set them: a
/// preset's, or figures given on the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct HostLimits {
    pub limits: Limits,
    /// The server, as a profile name part (m6id-4xlarge; "server" for figures).
    pub tag: String,
    /// As the user would name it (m6id.4xlarge; "the server").
    pub host: String,
}

/// What a server limits: all its volumes together, or (GCP) its disks of
/// each type together.
#[derive(Clone, Debug, PartialEq)]
pub enum Limits {
    /// One set on all its network volumes together, whatever their type
    /// (AWS, Azure, figures given with --volume-limits), and where they
    /// come from.
    All(VolumeLimits, String),
    /// One set per disk type, each on all the server's disks of that type
    /// together (GCP: "performance is shared between volumes of the same
    /// type", [`super::gcp_vm_limits`]); a type not listed has none found.
    PerType(Vec<TypeLimits>),
}

/// A server's limits on its disks of one type.
#[derive(Clone, Debug, PartialEq)]
pub struct TypeLimits {
    /// The --device type they bind: pd-balanced, pd-ssd.
    pub disk_type: &'static str,
    pub limits: VolumeLimits,
    /// Where they come from.
    pub source: &'static str,
}

impl HostLimits {
    /// The limits that bind a volume of `disk_type` (the --device type:
    /// gp3, pd-ssd) and where they come from; None where the server has
    /// none for that type.
    pub fn for_type(&self, disk_type: &str) -> Option<(&VolumeLimits, &str)> {
        match &self.limits {
            Limits::All(l, source) => Some((l, source.as_str())),
            Limits::PerType(v) => v
                .iter()
                .find(|t| t.disk_type == disk_type)
                .map(|t| (&t.limits, t.source)),
        }
    }
}

/// `--volume-limits`: a preset's size (m6id.4xlarge, n2-standard-16) or
/// iops=N,mbps=N[,burst_iops=N,burst_mbps=N] (MB/s is 10^6 bytes, as AWS
/// and Azure publish it), or the same with mibps= and burst_mibps= (MiB/s,
/// as GCP publishes it).
pub fn parse_volume_limits(spec: &str) -> Result<HostLimits, String> {
    let flag = format!("--volume-limits {spec}");
    if !spec.contains('=') {
        let i = lookup(spec).ok_or_else(|| {
            format!("{flag}: no such preset (see `pgiosim instances`), nor iops=N,mbps=N")
        })?;
        return i
            .host_limits()
            .ok_or_else(|| format!("{flag}: the preset publishes no volume limits"));
    }
    let mut v = [None::<f64>; 6];
    const KEYS: [&str; 6] = [
        "iops",
        "mbps",
        "burst_iops",
        "burst_mbps",
        "mibps",
        "burst_mibps",
    ];
    for item in spec.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (k, val) = item
            .split_once('=')
            .ok_or_else(|| format!("{flag}: {item:?} is not KEY=VALUE"))?;
        let at = KEYS
            .iter()
            .position(|x| x.eq_ignore_ascii_case(k.trim()))
            .ok_or_else(|| format!("{flag}: no key {k:?}; the keys are {}", KEYS.join(", ")))?;
        let n: f64 = val
            .trim()
            .parse()
            .ok()
            .filter(|n: &f64| n.is_finite() && *n > 0.0 && *n < 1e9)
            .ok_or_else(|| format!("{flag}: {k}={val} is not a number above 0"))?;
        if v[at].replace(n).is_some() {
            return Err(format!("{flag}: {k} given twice"));
        }
    }
    let mb = v[1].is_some() || v[3].is_some();
    let mib = v[4].is_some() || v[5].is_some();
    if mb && mib {
        return Err(format!(
            "{flag}: give the throughput in MB/s (mbps, burst_mbps) or in MiB/s (mibps, \
             burst_mibps), not both"
        ));
    }
    let (unit, rate, burst_rate) = if mib {
        (ThroughputUnit::MiBps, v[4], v[5])
    } else {
        (ThroughputUnit::MBps, v[1], v[3])
    };
    let (Some(iops), Some(rate)) = (v[0], rate) else {
        return Err(format!("{flag}: give both iops= and mbps= (or mibps=)"));
    };
    let max_iops = v[2].unwrap_or(iops);
    let max_rate = burst_rate.unwrap_or(rate);
    if max_iops < iops || max_rate < rate {
        return Err(format!("{flag}: a burst figure below its baseline"));
    }
    Ok(HostLimits {
        limits: Limits::All(
            VolumeLimits {
                baseline_throughput: rate,
                max_throughput: max_rate,
                unit,
                baseline_iops: iops,
                max_iops,
                bursts: max_iops > iops || max_rate > rate,
            },
            "given with --volume-limits".into(),
        ),
        tag: "server".into(),
        host: "the server".into(),
    })
}

/// `volume` (a network volume of type `disk_type`, the --device type) as
/// attached to a server with limits `h`: the server's limits on top of the
/// volume's own caps; an error saying why when the server has none for
/// that type (GCP's Hyperdisk Balanced): the caller models the volume alone.
///
/// Throughput: the lower of the volume's cap and the server's maximum
/// (its burst figure: runs are shorter than the 30-minute burst, and the
/// model has no burst bucket for bytes). IOPS: the lower of the two
/// rates; a server that bursts adds a burst bucket of (maximum −
/// baseline) × 30 minutes that refills at its baseline, so a run longer
/// than the burst falls to the baseline. When the volume bursts too
/// (gp2, Azure P20 and below) the two buckets are merged into one, the
/// lower baseline and the smaller bucket: an approximation, stated.
pub fn limit_volume(h: &HostLimits, disk_type: &str, volume: &Profile) -> Result<Profile, String> {
    let Some((l, source)) = h.for_type(disk_type) else {
        return Err(format!(
            "{} has no per-VM limit for {disk_type} in the model: {}",
            h.host,
            super::gcp_vm_limits::NOT_FOUND
        ));
    };
    let l = *l;
    let mut p = volume.clone();
    let max_mib_s = l.unit.mib_s(l.max_throughput);
    if let Some(raid) = &mut p.raid0 {
        // The server's limits bind the array as a whole; each member keeps
        // its own caps.
        let inst_bucket = (l.max_iops - l.baseline_iops) * BURST_S;
        let bursts = l.bursts && inst_bucket > 0.0;
        raid.server_limits = Some(crate::device::raid0::ServerLimits {
            iops: if bursts { l.max_iops } else { l.baseline_iops },
            mib_s: max_mib_s,
            burst: bursts.then_some(Burst {
                size_ios: inst_bucket,
                baseline_iops: l.baseline_iops,
            }),
        });
        p.name = format!("{}-on-{}", volume.name, h.tag);
        p.description = format!("{}, attached to {}", volume.description, h.host);
        return Ok(p);
    }
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
    p.name = format!("{}-on-{}", volume.name, h.tag);
    p.description = format!("{}, attached to {}", volume.description, h.host);
    let unit = l.unit.label();
    let limits = if l.bursts {
        format!(
            "baseline {} IOPS and {} {unit}, maximum {} IOPS and {} {unit} for 30 minutes",
            fmt_num(l.baseline_iops),
            fmt_num(l.baseline_throughput),
            fmt_num(l.max_iops),
            fmt_num(l.max_throughput)
        )
    } else {
        format!(
            "{} IOPS and {} {unit}",
            fmt_num(l.baseline_iops),
            fmt_num(l.baseline_throughput)
        )
    };
    let on = match h.limits {
        Limits::All(..) => "its volumes".to_string(),
        Limits::PerType(_) => format!("its {disk_type} disks together"),
    };
    p.source = format!(
        "{} Instance limits of {} on {on}: {limits} ({source}); throughput capped at the \
         maximum, IOPS at the lower rate with the instance's burst as a credit bucket.",
        volume.source, h.host
    );
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn provisioned(arg: &str) -> Profile {
        crate::device::provisioned::parse(arg, Profile::shipped)
            .unwrap()
            .unwrap()
    }

    #[test]
    fn a_preset_and_its_figures_limit_a_volume_alike() {
        let by_name = parse_volume_limits("m6id.4xlarge").unwrap();
        let by_figures =
            parse_volume_limits("iops=20000,mbps=625,burst_iops=40000,burst_mbps=1250").unwrap();
        assert_eq!(
            by_name.for_type("io2").unwrap().0,
            by_figures.for_type("io2").unwrap().0
        );
        let io2 = Profile::shipped("io2").unwrap();
        let (a, b) = (
            limit_volume(&by_name, "io2", &io2).unwrap(),
            limit_volume(&by_figures, "io2", &io2).unwrap(),
        );
        assert_eq!(a.caps, b.caps);
        assert_eq!(a.name, "io2-on-m6id-4xlarge");
        assert_eq!(b.name, "io2-on-server");
    }

    #[test]
    fn a_gcp_preset_limits_each_disk_type_by_its_own_row() {
        // n2-standard-16: 20,000 IOPS on pd-balanced, 25,000 on pd-ssd,
        // 1,200 MiB/s on both; Hyperdisk Balanced's was not found.
        let h = parse_volume_limits("n2-standard-16").unwrap();
        let ssd = provisioned("pd-ssd:size_gib=2000");
        let p = limit_volume(&h, "pd-ssd", &ssd).unwrap();
        assert_eq!((p.caps.iops, p.caps.mib_s), (Some(25000.0), Some(1200.0)));
        assert!(p.caps.burst.is_none());
        assert!(
            p.source
                .contains("on its pd-ssd disks together: 25,000 IOPS and 1,200 MiB/s")
                && p.source.contains("gcpdiag"),
            "{}",
            p.source
        );
        let bal = provisioned("pd-balanced:size_gib=4000");
        let p = limit_volume(&h, "pd-balanced", &bal).unwrap();
        assert_eq!((p.caps.iops, p.caps.mib_s), (Some(20000.0), Some(1200.0)));
        let hd = Profile::shipped("hyperdisk-balanced").unwrap();
        let e = limit_volume(&h, "hyperdisk-balanced", &hd).unwrap_err();
        assert!(e.contains("no per-VM limit for hyperdisk-balanced"), "{e}");
        // The same figures given as MiB/s bind a pd-ssd alike.
        let f = parse_volume_limits("iops=25000,mibps=1200").unwrap();
        assert_eq!(
            limit_volume(&f, "pd-ssd", &ssd).unwrap().caps,
            limit_volume(&h, "pd-ssd", &ssd).unwrap().caps
        );
    }

    #[test]
    fn bad_limits_are_one_line() {
        for (spec, want) in [
            ("m9x.huge", "no such preset"),
            ("iops=100", "give both iops= and mbps="),
            ("iops=100,mbps=0", "is not a number above 0"),
            ("iops=100,mbps=10,speed=3", "no key"),
            ("iops=100,mbps=10,burst_iops=50", "below its baseline"),
            ("iops=1,iops=2,mbps=3", "given twice"),
            ("iops=100,mbps=10,mibps=10", "not both"),
            ("iops=100,mibps=10,burst_mibps=5", "below its baseline"),
            ("z3-highmem-8-highlssd", "publishes no volume limits"),
        ] {
            let e = parse_volume_limits(spec).unwrap_err();
            assert!(e.contains(want) && !e.contains('\n'), "{spec}: {e}");
        }
    }

    #[test]
    fn the_page_cache_is_what_ram_leaves() {
        let gib = 1u64 << 30;
        assert_eq!(
            page_cache_bytes(64 * gib, 16 * gib),
            Some(64 * gib - 16 * gib - (0.05 * (64 * gib) as f64) as u64)
        );
        assert_eq!(page_cache_bytes(4 * gib, 3 * gib), None);
    }
}
