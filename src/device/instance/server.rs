//! What a server is, whichever way it is described: its RAM's page cache
//! and the limits it puts on its network volumes. A preset
//! (`--instance`) and the flags (`--ram`, `--volume-limits`) both come here,
//! so the two give the same model.

use super::{BURST_S, MIB, VolumeLimits, lookup, overhead_bytes};
use crate::device::profile::{Burst, Profile, fmt_num};

/// The page cache a server of `ram` bytes leaves PostgreSQL's data files:
/// RAM − shared_buffers − [`overhead_bytes`]; None when nothing is left.
pub fn page_cache_bytes(ram: u64, shared_buffers: u64) -> Option<u64> {
    ram.checked_sub(shared_buffers)
        .and_then(|r| r.checked_sub(overhead_bytes(ram)))
        .filter(|&b| b > 0)
}

/// A server's limits on all its network volumes together, with who set
/// them: a preset's, or figures given on the command line.
#[derive(Clone, Debug, PartialEq)]
pub struct HostLimits {
    pub limits: VolumeLimits,
    /// The server, as a profile name part (m6id-4xlarge; "server" for figures).
    pub tag: String,
    /// As the user would name it (m6id.4xlarge; "the server").
    pub host: String,
    /// Where the figures come from.
    pub source: String,
}

/// `--volume-limits`: a preset's size (m6id.4xlarge) or
/// iops=N,mbps=N[,burst_iops=N,burst_mbps=N] (MB/s is 10^6 bytes, as the
/// providers publish it).
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
    let mut v = [None::<f64>; 4];
    const KEYS: [&str; 4] = ["iops", "mbps", "burst_iops", "burst_mbps"];
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
    let (Some(iops), Some(mbps)) = (v[0], v[1]) else {
        return Err(format!("{flag}: give both iops= and mbps="));
    };
    let max_iops = v[2].unwrap_or(iops);
    let max_mb_s = v[3].unwrap_or(mbps);
    if max_iops < iops || max_mb_s < mbps {
        return Err(format!("{flag}: a burst figure below its baseline"));
    }
    Ok(HostLimits {
        limits: VolumeLimits {
            baseline_mb_s: mbps,
            max_mb_s,
            baseline_iops: iops,
            max_iops,
            bursts: max_iops > iops || max_mb_s > mbps,
        },
        tag: "server".into(),
        host: "the server".into(),
        source: "given with --volume-limits".into(),
    })
}

/// `volume` (a network volume) as attached to a server with limits `h`: the
/// server's limits on top of the volume's own caps.
///
/// Throughput: the lower of the volume's cap and the server's maximum
/// (its burst figure: runs are shorter than the 30-minute burst, and the
/// model has no burst bucket for bytes). IOPS: the lower of the two
/// rates; a server that bursts adds a burst bucket of (maximum −
/// baseline) × 30 minutes that refills at its baseline, so a run longer
/// than the burst falls to the baseline. When the volume bursts too
/// (gp2, Azure P20 and below) the two buckets are merged into one, the
/// lower baseline and the smaller bucket: an approximation, stated.
pub fn limit_volume(h: &HostLimits, volume: &Profile) -> Profile {
    let l = h.limits;
    let mut p = volume.clone();
    let max_mib_s = l.max_mb_s * 1e6 / MIB;
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
        return p;
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
        volume.source, h.host, h.source
    );
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_preset_and_its_figures_limit_a_volume_alike() {
        let by_name = parse_volume_limits("m6id.4xlarge").unwrap();
        let by_figures =
            parse_volume_limits("iops=20000,mbps=625,burst_iops=40000,burst_mbps=1250").unwrap();
        assert_eq!(by_name.limits, by_figures.limits);
        let io2 = Profile::shipped("io2").unwrap();
        let (a, b) = (
            limit_volume(&by_name, &io2),
            limit_volume(&by_figures, &io2),
        );
        assert_eq!(a.caps, b.caps);
        assert_eq!(a.name, "io2-on-m6id-4xlarge");
        assert_eq!(b.name, "io2-on-server");
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
            ("n2-standard-16", "publishes no volume limits"),
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
