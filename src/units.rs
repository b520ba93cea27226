//! Sizes and durations, the one place pgiosim reads and writes them.
//!
//! * Reading: PostgreSQL's units, as postgresql.conf takes them ("16GB",
//!   "5min", "250ms"), for settings and for pgiosim's own size and
//!   duration flags alike; the parsing itself is PostgreSQL's
//!   (`settings`' value parser, `parse_int`/`convert_to_base_unit`).
//! * Writing: [`format_memory`] as `SHOW` prints a size ("128MB", exact);
//!   [`pretty_bytes`] for a person reading a report ("1.5 GiB", rounded);
//!   [`fio_size`] in the form fio's job files take ("4k", "1M").

pub use crate::settings::{
    DURATION_MAX_S, DurationError, format_memory, parse_duration, parse_duration_ns,
    parse_memory_bytes,
};

/// The longest duration in a `key=value` list (an archive's latency per
/// segment, a standby's round trip): a day. Longer ones are slips, and
/// overflowed the model's sums (`latency=100000000d` "kept up").
pub const KEY_DURATION_MAX_NS: u64 = 86_400 * 1_000_000_000;

/// A duration in a `key=value` list, in nanoseconds: it must carry a unit
/// ("80ms", "1s") unless it is 0, as a bare number there is a common slip,
/// and be at most [`KEY_DURATION_MAX_NS`]. The error names the key and
/// shows `example`.
pub fn parse_duration_with_unit(key: &str, v: &str, example: &str) -> anyhow::Result<u64> {
    match parse_duration_ns(v) {
        Some(ns) if ns > KEY_DURATION_MAX_NS => {
            anyhow::bail!("{key}={v}: too long; at most 1d")
        }
        Some(ns)
            if v.trim() == "0" || !v.trim().chars().all(|c| c.is_ascii_digit() || c == '.') =>
        {
            Ok(ns)
        }
        _ => anyhow::bail!("{key}={v}: expected a duration with a unit, e.g. {example} or 0"),
    }
}

/// The bounds of `--cpu-speed`, in every command that takes it: below a
/// hundredth of the reference CPU a transaction's CPU time overflows into
/// nonsense (1e-20 made CPU free), and no CPU is a hundred times faster.
pub const CPU_SPEED_RANGE: (f64, f64) = (0.01, 100.0);

/// The bounds of a CPU probe figure (`cpu_probe_us` in a workload file or a
/// profile), µs a round: the probe takes 10-20 µs on the machines measured
/// (docs/cpu-model.md), and a figure a hundred times either side of that
/// gives a speed outside [`CPU_SPEED_RANGE`] against any other.
pub const CPU_PROBE_US_RANGE: (f64, f64) = (0.1, 1000.0);

/// The most CPU one figure of a workload may give, µs: a day, the bound of
/// `workload from-server-cpu --cpu-us-per-tx`, so that every file it
/// writes reads back. It holds for every µs figure a workload file gives
/// (a statement's CPU, the client's, a read's, a WAL flush's...), each a
/// part of a transaction. Past it the model's nanosecond sums overflow
/// (1e17 µs a statement ran faster than 40).
pub const CPU_US_MAX: f64 = 86_400e6;

/// The most a backend's CPU may grow for each active backend
/// (`cpu_growth_per_backend`, `io_cpu_growth_per_backend`): doubling per
/// backend, where measured slopes are 1-2% (docs/validation.md).
pub const CPU_GROWTH_PER_BACKEND_MAX: f64 = 1.0;

/// The most a query mode may multiply a statement's CPU by
/// (`prepared_cpu_factor`, `extended_cpu_factor`; measured 0.65-1.47).
pub const QUERY_MODE_CPU_FACTOR_MAX: f64 = 10.0;

/// The shortest `-P/--progress` interval: shorter ones print more lines
/// than anyone reads, and 1e-300 s rounds to a zero interval that loops.
pub const PROGRESS_MIN_S: f64 = 0.1;

/// `v`, the value of the float flag `flag`, checked finite and within
/// `lo..=hi` where it is parsed; the usage error (exit 2) names the flag,
/// the range and what the value means (`meaning`), so that NaN, infinities
/// and values that overflow or underflow what is computed from them never
/// reach the model.
pub fn check_f64(flag: &str, v: f64, lo: f64, hi: f64, meaning: &str) -> anyhow::Result<f64> {
    if v.is_finite() && (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(crate::error::UsageError(format!(
            "{flag}: must be {meaning} from {lo} to {hi}, got {v:?}"
        ))
        .into())
    }
}

/// A rate such as "90MB/s" in bytes a second (more than 0), or None.
pub fn parse_rate_bytes_per_s(v: &str) -> Option<u64> {
    v.trim()
        .strip_suffix("/s")
        .and_then(parse_memory_bytes)
        .filter(|&b| b > 0)
}

/// `n` bytes for people, in binary units: "512 bytes", "200 MiB",
/// "1.5 GiB" (one decimal below 100 unless it is whole).
pub fn pretty_bytes(n: u64) -> String {
    const UNITS: [&str; 6] = ["bytes", "KiB", "MiB", "GiB", "TiB", "PiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} bytes")
    } else if v >= 100.0 || v.fract() < 0.05 {
        format!("{v:.0} {}", UNITS[u])
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// A block size as fio writes one: "1M", "64k", or bytes.
pub fn fio_size(b: u64) -> String {
    if b >= 1 << 20 && b.is_multiple_of(1 << 20) {
        format!("{}M", b >> 20)
    } else if b >= 1 << 10 && b.is_multiple_of(1 << 10) {
        format!("{}k", b >> 10)
    } else {
        format!("{b}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_are_checked_finite_and_in_range() {
        assert_eq!(check_f64("--x", 1.5, 0.01, 100.0, "a factor").unwrap(), 1.5);
        for bad in [1e-20, 101.0, f64::NAN, f64::INFINITY, -1.0] {
            let e = check_f64("--x", bad, 0.01, 100.0, "a factor").unwrap_err();
            assert!(e.downcast_ref::<crate::error::UsageError>().is_some());
            assert!(
                e.to_string()
                    .contains("--x: must be a factor from 0.01 to 100"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_duration_in_a_list_is_at_most_a_day() {
        assert_eq!(
            parse_duration_with_unit("latency", "1d", "80ms").unwrap(),
            KEY_DURATION_MAX_NS
        );
        let e = parse_duration_with_unit("latency", "100000000d", "80ms").unwrap_err();
        assert!(e.to_string().contains("at most 1d"), "{e}");
    }

    #[test]
    fn pretty_bytes_rounds_for_people() {
        assert_eq!(pretty_bytes(1536 << 20), "1.5 GiB");
        assert_eq!(pretty_bytes(200 << 20), "200 MiB");
        assert_eq!(pretty_bytes(512), "512 bytes");
        assert_eq!(pretty_bytes(41_000_000), "39.1 MiB");
        assert_eq!(pretty_bytes(3 << 40), "3 TiB");
    }

    #[test]
    fn fio_sizes_are_fio_s() {
        assert_eq!(fio_size(4096), "4k");
        assert_eq!(fio_size(1 << 20), "1M");
        assert_eq!(fio_size(1000), "1000");
    }

    #[test]
    fn sizes_and_durations_read_as_postgresql_conf_writes_them() {
        assert_eq!(parse_memory_bytes("16GB"), Some(16 << 30));
        assert_eq!(parse_memory_bytes("1.5MB"), Some(1536 << 10));
        assert_eq!(parse_duration_ns("250ms"), Some(250_000_000));
        assert_eq!(parse_duration_ns("5min"), Some(300_000_000_000));
        assert_eq!(parse_rate_bytes_per_s("90MB/s"), Some(90 << 20));
        assert_eq!(parse_rate_bytes_per_s("0MB/s"), None);
        assert_eq!(parse_rate_bytes_per_s("90MB"), None);
        assert_eq!(
            parse_duration_with_unit("rtt", "1ms", "1ms").unwrap(),
            1_000_000
        );
        assert_eq!(parse_duration_with_unit("rtt", "0", "1ms").unwrap(), 0);
        assert!(parse_duration_with_unit("rtt", "5", "1ms").is_err());
        assert_eq!(format_memory(128 << 20), "128MB");
    }
}
