//! The archive target as the user gives it (`--archive`), its named
//! targets with their sources, and the archiving configuration the core
//! gets from it and the settings (archive_mode, archive_timeout).

use anyhow::{Result, bail};

use crate::core::archive::{ArchiveConfig, ArchiveMode, ArchiveTarget};
use crate::core::time::{MS, SEC};
use crate::settings::Settings;
use crate::units::{parse_duration_with_unit, parse_rate_bytes_per_s};

/// The keys a target takes, for messages.
const KEYS: &str = "latency=DURATION (per segment), throughput=RATE (per push, e.g. 50MB/s), \
                    parallel=N (pushes at once)";

/// A named target: its figures and where they come from.
struct Named {
    name: &'static str,
    latency_ms: u64,
    bytes_per_s: f64,
    parallel: u32,
    /// Where each figure comes from; guesses say so.
    source: &'static str,
}

/// Targets with published figures, or marked guesses.
const NAMED: &[Named] = &[
    Named {
        name: "s3",
        // AWS, "Best Practices Design Patterns: Optimizing Amazon S3
        // Performance" (and the S3 performance guidelines): small-object and
        // first-byte latencies of roughly 100-200 ms; 150 ms is the middle,
        // and that a whole PUT's fixed cost is that first-byte figure is a
        // guess.
        latency_ms: 150,
        // The AWS Common Runtime's S3 client (aws-c-s3, source/s3_client.c,
        // s_throughput_per_connection_gbps = 100.0 / 250): 0.4 Gbit/s, 50 MB/s,
        // per connection, the figure it sizes its connection pool by.
        bytes_per_s: 50e6,
        // archive_command: one segment at a time (pgarch.c).
        parallel: 1,
        source: "latency: AWS S3 performance guidelines, first-byte latency 100-200 ms \
                 (150 ms, the middle; a guess that a PUT costs the same); throughput: \
                 aws-c-s3's 0.4 Gbit/s (50 MB/s) per connection; parallel: archive_command's one",
    },
    Named {
        name: "local",
        // A guess: cp of a 16 MiB file to a second local SSD plus its
        // fsync, and the shell archive_command starts.
        latency_ms: 5,
        // A guess: a local SSD's sequential write.
        bytes_per_s: 500e6,
        parallel: 1,
        source: "a guess: cp plus fsync to a second local SSD, 5 ms per segment, 500 MB/s",
    },
];

/// The names `--archive` knows, for messages and --help.
pub fn target_names() -> Vec<&'static str> {
    NAMED.iter().map(|n| n.name).collect()
}

/// The source of a named target's figures ("your figures" for a custom one).
pub fn target_source(name: &str) -> &'static str {
    NAMED
        .iter()
        .find(|n| n.name == name)
        .map_or("as given with --archive", |n| n.source)
}

/// Parses `NAME`, `NAME,key=value,...` (a named target with overrides) or
/// `latency=80ms,throughput=90MB/s,parallel=1`.
pub fn parse_target(text: &str) -> Result<ArchiveTarget> {
    let mut parts = text.split(',').map(str::trim).filter(|p| !p.is_empty());
    let mut t = ArchiveTarget {
        name: "custom".into(),
        latency: 0,
        bytes_per_s: 0.0,
        parallel: 1,
    };
    let mut rest: Vec<&str> = Vec::new();
    match parts.next() {
        None => bail!(
            "empty; give a target name ({}) or {KEYS}",
            target_names().join(", ")
        ),
        Some(first) if !first.contains('=') => {
            let Some(n) = NAMED.iter().find(|n| n.name.eq_ignore_ascii_case(first)) else {
                bail!(
                    "unknown target \"{first}\"; the named ones are {}, or give {KEYS}",
                    target_names().join(", ")
                );
            };
            t = ArchiveTarget {
                name: n.name.into(),
                latency: n.latency_ms * MS,
                bytes_per_s: n.bytes_per_s,
                parallel: n.parallel,
            };
        }
        Some(first) => rest.push(first),
    }
    rest.extend(parts);
    let mut seen: Vec<&str> = Vec::new();
    for part in rest {
        let Some((key, value)) = part.split_once('=') else {
            bail!("\"{part}\" is not key=value; a target takes {KEYS}");
        };
        let value = value.trim();
        // A key given twice is a slip, not "the last wins" (as a
        // provisioned --device refuses it).
        if seen.contains(&key.trim()) {
            bail!("{} given twice", key.trim());
        }
        seen.push(key.trim());
        match key.trim() {
            "latency" => t.latency = parse_duration_with_unit("latency", value, "80ms, 1s")?,
            "throughput" => {
                let Some(b) = parse_rate_bytes_per_s(value) else {
                    bail!("throughput={value}: expected a rate such as 90MB/s");
                };
                t.bytes_per_s = b as f64;
            }
            "parallel" => match value.parse::<u32>() {
                Ok(n) if (1..=256).contains(&n) => t.parallel = n,
                _ => bail!("parallel={value}: expected a whole number of pushes, 1 to 256"),
            },
            other => bail!("unknown key \"{other}\"; a target takes {KEYS}"),
        }
    }
    if t.bytes_per_s <= 0.0 {
        bail!("no throughput=; a target takes {KEYS}");
    }
    Ok(t)
}

/// The core's archiving: None when archive_mode is off (then `--archive`
/// is refused, as it would do nothing); with archive_mode on, `--archive`
/// is required.
pub fn archive_config(target: Option<&str>, s: &Settings) -> Result<Option<ArchiveConfig>> {
    match (s.archive_mode, target) {
        (ArchiveMode::Off, None) => Ok(None),
        (ArchiveMode::Off, Some(t)) => {
            bail!("--archive {t}: archive_mode is off; add --set archive_mode=on to archive WAL")
        }
        (_, None) => bail!(
            "archive_mode = {}: give the archive's target with --archive ({} or {KEYS})",
            s.archive_mode.name(),
            target_names().join(", ")
        ),
        (mode, Some(t)) => Ok(Some(ArchiveConfig {
            mode,
            timeout: s.archive_timeout_s * SEC,
            target: parse_target(t).map_err(|e| anyhow::anyhow!("--archive {t}: {e}"))?,
        })),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_named_target_takes_overrides() {
        let t = parse_target("s3").unwrap();
        assert_eq!((t.latency, t.bytes_per_s, t.parallel), (150 * MS, 50e6, 1));
        let t = parse_target("S3, parallel=8").unwrap();
        assert_eq!((t.name.as_str(), t.parallel), ("s3", 8));
        assert!(target_source("s3").contains("aws-c-s3"));
        assert!(target_source("local").contains("guess"));
    }

    #[test]
    fn a_custom_target_needs_a_throughput() {
        let t = parse_target("latency=80ms,throughput=90MB/s,parallel=2").unwrap();
        assert_eq!(t.name, "custom");
        assert_eq!(t.latency, 80 * MS);
        assert_eq!(t.bytes_per_s, 90.0 * 1024.0 * 1024.0);
        assert_eq!(t.parallel, 2);
        for (bad, why) in [
            ("latency=80ms", "no throughput"),
            ("latency=80,throughput=1MB/s", "with a unit"),
            ("throughput=fast", "a rate"),
            ("throughput=1MB/s,parallel=0", "1 to 256"),
            ("gcs", "unknown target"),
            ("throughput=1MB/s,colour=red", "unknown key"),
            ("", "empty"),
        ] {
            let e = parse_target(bad).unwrap_err().to_string();
            assert!(e.contains(why), "{bad}: {e}");
        }
    }

    #[test]
    fn archive_mode_and_the_flag_go_together() {
        let off = Settings::default();
        assert_eq!(archive_config(None, &off).unwrap(), None);
        assert!(
            archive_config(Some("s3"), &off)
                .unwrap_err()
                .to_string()
                .contains("archive_mode=on")
        );
        let mut on = Settings::default();
        on.set("archive_mode", "on").unwrap();
        on.set("archive_timeout", "60").unwrap();
        assert!(archive_config(None, &on).is_err());
        let c = archive_config(Some("local"), &on).unwrap().unwrap();
        assert_eq!(c.timeout, 60 * SEC);
        assert_eq!(c.target.name, "local");
    }
}
