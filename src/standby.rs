//! Standbys as the user declares them (`--standby`, `--standby-file`), and
//! the replication configuration the core gets from them and the settings.

use std::path::Path;

use anyhow::{Result, bail};

use crate::units::{parse_duration_with_unit, parse_rate_bytes_per_s};

use crate::core::replication::{ReplicationConfig, RoundTrip, StandbyConfig, StandbyNames};
use crate::core::time::Nanos;
use crate::device::name::resolve_as;
use crate::device::profile::Profile;
use crate::settings::Settings;

/// The keys a standby declaration takes, for messages.
const KEYS: &str = "name=NAME (required), rtt=DURATION, rtt_p99=DURATION, device=NAME|FILE, \
                    replay=RATE (e.g. 40MB/s)";

/// One declared standby.
#[derive(Debug, Clone, PartialEq)]
pub struct StandbyDecl {
    /// Its application_name, as synchronous_standby_names lists it.
    pub name: String,
    /// Network round trip to it.
    pub rtt: RoundTrip,
    /// Device profile of its WAL disk (`model`), resolved as it is read;
    /// None: the primary's.
    pub device: Option<Profile>,
    /// Replay speed of its startup process, every byte (a full-page
    /// image's too) at this rate; None: the workload's, from its measured
    /// replay CPU (`Script::replay_bytes_per_s`, an image at its own
    /// `replay_cpu_us_per_fpi`).
    pub replay_bytes_per_s: Option<f64>,
}

/// Parses `name=s1,rtt=1ms[,rtt_p99=3ms][,device=nvme][,replay=40MB/s]`.
pub fn parse_decl(text: &str) -> Result<StandbyDecl> {
    let mut name = None;
    let mut rtt = 0;
    let mut p99 = None;
    let mut device = None;
    let mut replay = None;
    let mut seen: Vec<&str> = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let Some((key, value)) = part.split_once('=') else {
            bail!("\"{part}\" is not key=value; a standby takes {KEYS}");
        };
        let value = value.trim();
        // A key given twice is a slip, not "the last wins" (as a
        // provisioned --device refuses it).
        if seen.contains(&key.trim()) {
            bail!("{} given twice", key.trim());
        }
        seen.push(key.trim());
        match key.trim() {
            "name" => {
                // A name synchronous_standby_names can list unquoted.
                if StandbyNames::parse(value)
                    .ok()
                    .flatten()
                    .is_none_or(|n| n.members != [value] || value == "*")
                {
                    bail!(
                        "name={value}: a standby's name must be a plain identifier \
                         (letters, digits, _), as application_name is listed"
                    );
                }
                name = Some(value.to_string());
            }
            "rtt" => rtt = parse_duration_with_unit("rtt", value, "1ms, 500us")?,
            "rtt_p99" => p99 = Some(parse_duration_with_unit("rtt_p99", value, "1ms, 500us")?),
            // Resolved here, so a plan holds the profile and a bad name is
            // refused with the other keys' mistakes.
            "device" => device = Some(resolve_as(value, &format!("device={value}"), "device=")?),
            "replay" => {
                let Some(b) = parse_rate_bytes_per_s(value) else {
                    bail!("replay={value}: expected a rate such as 40MB/s");
                };
                replay = Some(b as f64);
            }
            other => bail!("unknown key \"{other}\"; a standby takes {KEYS}"),
        }
    }
    let Some(name) = name else {
        bail!("no name=; a standby takes {KEYS}");
    };
    let p99 = p99.unwrap_or(rtt);
    if p99 < rtt {
        bail!("rtt_p99 is below rtt (the median) for standby {name}");
    }
    Ok(StandbyDecl {
        name,
        rtt: RoundTrip { median: rtt, p99 },
        device,
        replay_bytes_per_s: replay,
    })
}

/// How many standbys pgiosim models (a standby's index is a `u8`).
pub const MAX_STANDBYS: usize = u8::MAX as usize;

/// Reads a standby file: one declaration per line as `--standby` takes it;
/// blank lines and `#` comments are skipped. Stops at the first declaration
/// past [`MAX_STANDBYS`], naming its line.
pub fn load_file(path: &Path) -> Result<Vec<StandbyDecl>> {
    let text = crate::input::read_text(path, "standby file", crate::input::SMALL_FILE_MAX_BYTES)?;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        if out.len() == MAX_STANDBYS {
            bail!(
                "{}:{}: more than {MAX_STANDBYS} standbys declared; at most {MAX_STANDBYS}",
                path.display(),
                i + 1
            );
        }
        match parse_decl(line) {
            Ok(d) => out.push(d),
            Err(e) => bail!("{}:{}: {e}", path.display(), i + 1),
        }
    }
    Ok(out)
}

/// The standbys of `--standby-file` then of each `--standby`, checked: at
/// most 255, names unique (case-insensitively, as PostgreSQL matches them).
pub fn gather(flags: &[String], file: Option<&Path>) -> Result<Vec<StandbyDecl>> {
    let mut out = match file {
        Some(p) => load_file(p)?,
        None => Vec::new(),
    };
    for f in flags {
        out.push(parse_decl(f).map_err(|e| anyhow::anyhow!("--standby {f}: {e}"))?);
    }
    // One pass with a set: a declaration list can be long.
    let mut names = std::collections::HashSet::new();
    for d in &out {
        if !names.insert(d.name.to_ascii_lowercase()) {
            bail!("standby {} is declared twice", d.name);
        }
    }
    if out.len() > MAX_STANDBYS {
        bail!("{} standbys declared; at most {MAX_STANDBYS}", out.len());
    }
    Ok(out)
}

/// The core's replication for these standbys and settings; None without
/// standbys. A standby without replay= replays at `replay_bytes_per_s`,
/// the workload's, and restores a full-page image in
/// `replay_cpu_per_image` (its bytes not charged at the rate); one with
/// replay= replays every byte at its rate. Refuses what would make every commit wait forever.
pub fn replication_config(
    decls: &[StandbyDecl],
    s: &Settings,
    seed: u64,
    wal_segments: u32,
    wakeup: Nanos,
    replay_bytes_per_s: f64,
    replay_cpu_per_image: Nanos,
) -> Result<Option<ReplicationConfig>> {
    let names = StandbyNames::parse(&s.synchronous_standby_names)
        .map_err(|e| anyhow::anyhow!("synchronous_standby_names: {e}"))?;
    let waits = s.synchronous_commit.wait_mode().is_some();
    if decls.is_empty() {
        if let Some(n) = names
            && waits
        {
            bail!(
                "synchronous_standby_names = '{}' but no standby is declared (--standby \
                 name=s1,rtt=1ms); every commit would wait forever",
                n.to_text()
            );
        }
        return Ok(None);
    }
    let cfg = ReplicationConfig {
        standbys: decls
            .iter()
            .map(|d| StandbyConfig {
                name: d.name.clone(),
                rtt: d.rtt,
                replay_bytes_per_s: d.replay_bytes_per_s.unwrap_or(replay_bytes_per_s),
                replay_cpu_per_image: d
                    .replay_bytes_per_s
                    .is_none()
                    .then_some(replay_cpu_per_image),
            })
            .collect(),
        names,
        synchronous_commit: s.synchronous_commit,
        wakeup,
        wal_segments,
        max_write_bytes: s.wal_buffers_effective_bytes(),
        seed,
    };
    if waits {
        cfg.check().map_err(|e| anyhow::anyhow!(e))?;
    }
    Ok(Some(cfg))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::time::{MS, US};

    #[test]
    fn declarations_parse_and_name_their_mistakes() {
        let d = parse_decl("name=s1, rtt=1ms, rtt_p99=3ms, device=gp3, replay=20MB/s").unwrap();
        assert_eq!(d.name, "s1");
        assert_eq!(
            d.rtt,
            RoundTrip {
                median: MS,
                p99: 3 * MS
            }
        );
        assert_eq!(d.device.map(|p| p.name).as_deref(), Some("gp3"));
        assert_eq!(d.replay_bytes_per_s, Some(20.0 * 1024.0 * 1024.0));
        let d = parse_decl("name=s2").unwrap();
        assert_eq!(d.rtt, RoundTrip { median: 0, p99: 0 });
        assert_eq!(d.replay_bytes_per_s, None, "the workload's");
        assert_eq!(parse_decl("name=a,rtt=500us").unwrap().rtt.median, 500 * US);
        for (bad, says) in [
            ("rtt=1ms", "no name="),
            ("name=s1,rtt=1", "rtt=1: expected a duration with a unit"),
            ("name=s1,speed=3", "unknown key \"speed\""),
            ("name=s1,rtt=2ms,rtt_p99=1ms", "rtt_p99 is below rtt"),
            ("name=a b", "plain identifier"),
            ("name=*", "plain identifier"),
            ("name=s1,replay=fast", "replay=fast"),
            ("name", "not key=value"),
        ] {
            let e = parse_decl(bad).unwrap_err().to_string();
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn gather_refuses_duplicates_and_names_the_file_line() {
        let e = gather(&["name=s1".into(), "name=S1".into()], None).unwrap_err();
        assert_eq!(e.to_string(), "standby S1 is declared twice");
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("standbys");
        std::fs::write(&f, "# two standbys\nname=s1,rtt=1ms\n\nname=s2,rtt=x\n").unwrap();
        let e = gather(&[], Some(&f)).unwrap_err().to_string();
        assert!(
            e.ends_with("standbys:4: rtt=x: expected a duration with a unit, e.g. 1ms, 500us or 0"),
            "{e}"
        );
        std::fs::write(&f, "name=s1,rtt=1ms # near\nname=s2\n").unwrap();
        let d = gather(&["name=s3".into()], Some(&f)).unwrap();
        assert_eq!(
            d.iter().map(|d| d.name.as_str()).collect::<Vec<_>>(),
            ["s1", "s2", "s3"]
        );
    }

    #[test]
    fn gather_stops_at_the_standby_past_the_bound() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("standbys");
        let lines =
            |n: usize| -> String { (0..n).map(|i| format!("name=s{i},rtt=1ms\n")).collect() };
        std::fs::write(&f, format!("# header\n{}", lines(MAX_STANDBYS))).unwrap();
        assert_eq!(gather(&[], Some(&f)).unwrap().len(), MAX_STANDBYS);
        let e = gather(&["name=x".into()], Some(&f)).unwrap_err();
        assert_eq!(e.to_string(), "256 standbys declared; at most 255");
        // A long file is refused at its 256th declaration, without reading on.
        std::fs::write(&f, format!("# header\n{}", lines(100_000))).unwrap();
        let e = gather(&[], Some(&f)).unwrap_err().to_string();
        assert!(
            e.ends_with("standbys:257: more than 255 standbys declared; at most 255"),
            "{e}"
        );
        // Duplicates are found in one pass, the second one named.
        let mut text = lines(200);
        text.push_str("name=S7\n");
        std::fs::write(&f, text).unwrap();
        let e = gather(&[], Some(&f)).unwrap_err();
        assert_eq!(e.to_string(), "standby S7 is declared twice");
    }

    #[test]
    fn commits_that_would_wait_forever_are_refused() {
        let mut s = Settings::default();
        s.set("synchronous_standby_names", "ANY 1 (s1, s2)")
            .unwrap();
        let e = replication_config(&[], &s, 1, 4, 0, 1e6, 0)
            .unwrap_err()
            .to_string();
        assert!(e.contains("no standby is declared"), "{e}");
        s.set("synchronous_commit", "local").unwrap();
        assert_eq!(replication_config(&[], &s, 1, 4, 0, 1e6, 0).unwrap(), None);
        s.set("synchronous_commit", "on").unwrap();
        let d = [parse_decl("name=s3").unwrap()];
        let e = replication_config(&d, &s, 1, 4, 0, 1e6, 0)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("0 of the declared standbys (s3) match it"),
            "{e}"
        );
        let d = [parse_decl("name=s2").unwrap()];
        assert!(
            replication_config(&d, &s, 1, 4, 0, 1e6, 0)
                .unwrap()
                .is_some()
        );
    }

    #[test]
    fn a_standby_without_replay_replays_at_the_workloads_rate() {
        let s = Settings::default();
        let d = [
            parse_decl("name=s1").unwrap(),
            parse_decl("name=s2,replay=20MB/s").unwrap(),
        ];
        let r = replication_config(&d, &s, 1, 4, 0, 74e6, 3940)
            .unwrap()
            .unwrap();
        assert_eq!(r.standbys[0].replay_bytes_per_s, 74e6);
        assert_eq!(r.standbys[0].replay_cpu_per_image, Some(3940));
        assert_eq!(r.standbys[1].replay_bytes_per_s, 20.0 * 1024.0 * 1024.0);
        // An explicit rate is every byte's, an image's too.
        assert_eq!(r.standbys[1].replay_cpu_per_image, None);
    }
}
