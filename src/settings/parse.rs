//! Parsing values, after PostgreSQL 15's guc.c (`parse_int`, `parse_real`,
//! `parse_bool`, `convert_to_base_unit`), and postgresql.conf's quoting; the
//! same parser reads pgiosim's own size and duration flags. Text to values
//! only: which setting takes which parser is the table's (table.rs).

use std::fmt;

use super::unit::{INT_MAX, INT_MIN, MEMORY_UNITS, TIME_UNITS, US_PER_S, Unit};
use crate::core::archive::ArchiveMode;
use crate::core::recovery::RecoveryPrefetch;
use crate::core::replication::SynchronousCommit;

pub(super) enum IntError {
    /// Not a number, or a unit this setting does not take.
    Invalid,
    /// Beyond a C int (PostgreSQL: "Value exceeds integer range").
    Overflow,
}

/// `parse_int`: an integer (decimal, 0x hex or 0 octal, as `strtol` base 0),
/// or a decimal fraction, then an optional unit, rounded half to even to the
/// base unit. Returns the value in base units.
pub(super) fn parse_int(text: &str, unit: Unit) -> Result<i64, IntError> {
    let text = text.trim_start_matches(is_c_space);
    let (mut value, rest) = scan_c_number(text).ok_or(IntError::Invalid)?;
    let rest = rest.trim_start_matches(is_c_space);
    if !rest.is_empty() {
        value = convert_to_base_unit(value, rest, unit).ok_or(IntError::Invalid)?;
    }
    let value = value.round_ties_even();
    if value.is_nan() {
        return Err(IntError::Invalid);
    }
    if value > INT_MAX as f64 || value < INT_MIN as f64 {
        return Err(IntError::Overflow);
    }
    Ok(value as i64)
}

/// `strtol(text, &end, 0)`, falling back to `strtod` where PostgreSQL does
/// (the integer stops at '.', 'e' or 'E', or overflows). Returns the value
/// and the unparsed rest; `None` when no number starts the text.
pub(super) fn scan_c_number(text: &str) -> Option<(f64, &str)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    let negative = bytes.first() == Some(&b'-');
    let (radix, digits_start) = if bytes.get(i) == Some(&b'0')
        && matches!(bytes.get(i + 1), Some(b'x' | b'X'))
        && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
    {
        (16, i + 2)
    } else if bytes.get(i) == Some(&b'0') {
        (8, i)
    } else {
        (10, i)
    };
    let mut end = digits_start;
    while end < bytes.len() && char::from(bytes[end]).is_digit(radix) {
        end += 1;
    }
    let integer = if end > digits_start {
        let magnitude = i64::from_str_radix(&text[digits_start..end], radix).ok();
        magnitude.map(|m| if negative { -m } else { m })
    } else {
        None
    };
    let stop = if end > digits_start { end } else { 0 };
    let needs_float = integer.is_none() && end > digits_start // overflow
        || matches!(bytes.get(stop), Some(b'.' | b'e' | b'E'));
    if needs_float {
        let (value, len) = scan_c_double(text)?;
        return Some((value, &text[len..]));
    }
    Some((integer? as f64, &text[end..]))
}

/// `strtod` for decimal input: [sign] digits [. digits] [e [sign] digits],
/// plus "inf", "infinity" and "nan". Returns the value and the length used.
pub(super) fn scan_c_double(text: &str) -> Option<(f64, usize)> {
    let bytes = text.as_bytes();
    let mut i = 0;
    if matches!(bytes.first(), Some(b'+' | b'-')) {
        i += 1;
    }
    for word in ["infinity", "inf", "nan"] {
        if text[i..]
            .get(..word.len())
            .is_some_and(|w| w.eq_ignore_ascii_case(word))
        {
            let end = i + word.len();
            return text[..end].parse::<f64>().ok().map(|v| (v, end));
        }
    }
    let int_start = i;
    while bytes.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    let mut digits = i - int_start;
    if bytes.get(i) == Some(&b'.') {
        let frac_start = i + 1;
        let mut j = frac_start;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        digits += j - frac_start;
        if digits > 0 {
            i = j;
        }
    }
    if digits == 0 {
        return None;
    }
    if matches!(bytes.get(i), Some(b'e' | b'E')) {
        let mut j = i + 1;
        if matches!(bytes.get(j), Some(b'+' | b'-')) {
            j += 1;
        }
        let exp_start = j;
        while bytes.get(j).is_some_and(u8::is_ascii_digit) {
            j += 1;
        }
        if j > exp_start {
            i = j;
        }
    }
    text[..i].parse::<f64>().ok().map(|v| (v, i))
}

/// `convert_to_base_unit`: multiply by the unit, rounding a fractional value
/// to the next smaller unit first ("1.5GB" is exactly 1536MB).
pub(super) fn convert_to_base_unit(value: f64, unit_text: &str, unit: Unit) -> Option<f64> {
    let unit_text = unit_text.trim_end_matches(is_c_space);
    let (table, base): (&[(&str, u64)], u64) = match unit {
        Unit::None => return None,
        Unit::Bytes(base) => (&MEMORY_UNITS, base),
        Unit::Micros(base) => (&TIME_UNITS, base),
    };
    let index = table.iter().position(|(name, _)| *name == unit_text)?;
    let multiplier = table[index].1 as f64 / base as f64;
    let mut converted = value * multiplier;
    if let Some((_, smaller)) = table.get(index + 1) {
        let step = *smaller as f64 / base as f64;
        converted = (converted / step).round_ties_even() * step;
    }
    Some(converted)
}

/// A number followed by a unit-like word, for the wrong-case hint.
pub(super) fn split_number_and_unit(text: &str) -> Option<(&str, &str)> {
    let text = text.trim();
    let (_, rest) = scan_c_number(text)?;
    let number = text[..text.len() - rest.len()].trim_end();
    let unit = rest.trim();
    (!unit.is_empty() && unit.chars().all(|c| c.is_ascii_alphabetic())).then_some((number, unit))
}

/// `parse_real`: a decimal number, no unit (none of the modelled reals has one).
pub(super) fn parse_real(text: &str) -> Option<f64> {
    let text = text.trim_start_matches(is_c_space);
    let (value, len) = scan_c_double(text)?;
    if value.is_nan() || !text[len..].trim_start_matches(is_c_space).is_empty() {
        return None;
    }
    Some(value)
}

/// `parse_bool`: true/false/yes/no/on/off (case-insensitive, any unambiguous
/// prefix; "o" alone is ambiguous) and 1/0.
pub(super) fn parse_bool(text: &str) -> Option<bool> {
    let lower = text.to_ascii_lowercase();
    let is_prefix_of = |word: &str, min_len: usize| {
        lower.len() >= min_len && lower.len() <= word.len() && word.starts_with(lower.as_str())
    };
    match lower.as_bytes().first()? {
        b't' if is_prefix_of("true", 1) => Some(true),
        b'f' if is_prefix_of("false", 1) => Some(false),
        b'y' if is_prefix_of("yes", 1) => Some(true),
        b'n' if is_prefix_of("no", 1) => Some(false),
        b'o' if is_prefix_of("on", 2) => Some(true),
        b'o' if is_prefix_of("off", 2) => Some(false),
        b'1' if lower.len() == 1 => Some(true),
        b'0' if lower.len() == 1 => Some(false),
        _ => None,
    }
}

/// `archive_mode_options` (xlog.c): exact names, case-insensitive; the
/// booleans mean on and off.
pub(super) fn parse_archive_mode(text: &str) -> Option<ArchiveMode> {
    const OPTIONS: [(&str, ArchiveMode); 9] = [
        ("always", ArchiveMode::Always),
        ("on", ArchiveMode::On),
        ("off", ArchiveMode::Off),
        ("true", ArchiveMode::On),
        ("false", ArchiveMode::Off),
        ("yes", ArchiveMode::On),
        ("no", ArchiveMode::Off),
        ("1", ArchiveMode::On),
        ("0", ArchiveMode::Off),
    ];
    OPTIONS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .map(|(_, mode)| *mode)
}

/// `recovery_prefetch_options` (xlogprefetcher.c): exact names,
/// case-insensitive; the booleans mean on and off.
pub(super) fn parse_recovery_prefetch(text: &str) -> Option<RecoveryPrefetch> {
    const OPTIONS: [(&str, RecoveryPrefetch); 9] = [
        ("off", RecoveryPrefetch::Off),
        ("on", RecoveryPrefetch::On),
        ("try", RecoveryPrefetch::Try),
        ("true", RecoveryPrefetch::On),
        ("false", RecoveryPrefetch::Off),
        ("yes", RecoveryPrefetch::On),
        ("no", RecoveryPrefetch::Off),
        ("1", RecoveryPrefetch::On),
        ("0", RecoveryPrefetch::Off),
    ];
    OPTIONS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .map(|(_, mode)| *mode)
}

/// `synchronous_commit_options`: exact names, case-insensitive (enums take no
/// prefixes); the booleans mean on and off.
pub(super) fn parse_synchronous_commit(text: &str) -> Option<SynchronousCommit> {
    use SynchronousCommit::{Local, Off, On, RemoteApply, RemoteWrite};
    const OPTIONS: [(&str, SynchronousCommit); 11] = [
        ("local", Local),
        ("remote_write", RemoteWrite),
        ("remote_apply", RemoteApply),
        ("on", On),
        ("off", Off),
        ("true", On),
        ("false", Off),
        ("yes", On),
        ("no", Off),
        ("1", On),
        ("0", Off),
    ];
    OPTIONS
        .iter()
        .find(|(name, _)| name.eq_ignore_ascii_case(text))
        .map(|(_, waits)| *waits)
}

/// C's `isspace` in the "C" locale.
pub(super) fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// Strip one level of single quotes, as a postgresql.conf string: `''` and
/// `\'` are a quote, and `\b \f \n \r \t \ooo` escapes are decoded. An
/// unquoted value is returned as it is; `None` for an unclosed quote.
pub(super) fn unquote(value: &str) -> Option<String> {
    if !value.starts_with('\'') {
        return Some(value.to_string());
    }
    let (text, len) = scan_quoted(value)?;
    (len == value.len()).then_some(text)
}

/// Scan a quoted string at the start of `s` (which starts with `'`):
/// returns the decoded text and the length consumed, or `None` if unclosed.
pub(super) fn scan_quoted(s: &str) -> Option<(String, usize)> {
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1).peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            '\'' => {
                if chars.peek().map(|&(_, n)| n) == Some('\'') {
                    chars.next();
                    out.push('\'');
                } else {
                    return Some((out, i + 1));
                }
            }
            '\\' => {
                let (_, escaped) = chars.next()?;
                match escaped {
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'n' => out.push('\n'),
                    'r' => out.push('\r'),
                    't' => out.push('\t'),
                    '0'..='7' => {
                        let mut code = escaped.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            match chars.peek().and_then(|&(_, d)| d.to_digit(8)) {
                                Some(d) => {
                                    code = code * 8 + d;
                                    chars.next();
                                }
                                None => break,
                            }
                        }
                        out.push(char::from_u32(code).unwrap_or(char::REPLACEMENT_CHARACTER));
                    }
                    other => out.push(other),
                }
            }
            '\n' => return None,
            other => out.push(other),
        }
    }
    None
}

/// Quote a value so that [`unquote`] gives it back.
pub(super) fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "''"))
}

/// Parse a memory size as postgresql.conf writes one ("4GB", "512MB",
/// "1.5GB"); a bare number counts bytes. For pgiosim's own size flags.
pub fn parse_memory_bytes(text: &str) -> Option<u64> {
    let text = text.trim();
    let (value, rest) = scan_c_number(text)?;
    let rest = rest.trim();
    let bytes = if rest.is_empty() {
        value
    } else {
        convert_to_base_unit(value, rest, Unit::Bytes(1))?
    };
    (bytes.is_finite() && bytes >= 0.0).then(|| bytes.round() as u64)
}

/// Why a duration flag's value was refused (see [`parse_duration`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DurationError {
    /// Not a number at all.
    NotANumber,
    /// A number followed by something that is not a time unit.
    BadUnit(String),
    /// Less than zero.
    Negative,
    /// More than `max_s` seconds.
    TooLong { max_s: u64 },
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let units = "us, ms, s, min, h, d";
        match self {
            DurationError::NotANumber => {
                write!(
                    f,
                    "not a duration: write seconds or a number with a unit ({units}), e.g. 30s or 5min"
                )
            }
            DurationError::BadUnit(u) => {
                write!(
                    f,
                    "{u:?} is not a time unit; the units are {units} (case-sensitive), as in postgresql.conf"
                )
            }
            DurationError::Negative => write!(f, "a duration cannot be negative"),
            DurationError::TooLong { max_s } => {
                write!(
                    f,
                    "too long: at most {max_s} s (pgbench's -T is a C int of seconds)"
                )
            }
        }
    }
}

/// The longest duration taken: INT_MAX seconds, pgbench's bound for -T.
pub const DURATION_MAX_S: u64 = INT_MAX as u64;

/// [`parse_duration_ns`] that says why a value is refused, and refuses one
/// longer than [`DURATION_MAX_S`] instead of saturating.
pub fn parse_duration(text: &str) -> Result<u64, DurationError> {
    let t = text.trim();
    let Some((value, rest)) = scan_c_number(t) else {
        return Err(DurationError::NotANumber);
    };
    let rest = rest.trim();
    if !rest.is_empty() && !TIME_UNITS.iter().any(|(u, _)| *u == rest) {
        return Err(DurationError::BadUnit(rest.to_string()));
    }
    if value < 0.0 {
        return Err(DurationError::Negative);
    }
    let ns = parse_duration_ns(t).ok_or(DurationError::NotANumber)?;
    if ns > DURATION_MAX_S * 1_000_000_000 {
        return Err(DurationError::TooLong {
            max_s: DURATION_MAX_S,
        });
    }
    Ok(ns)
}

/// Parse a duration as postgresql.conf writes one ("5min", "30s", "250ms");
/// a bare number counts seconds, as pgbench's -T does. Returns nanoseconds
/// (saturating; [`parse_duration`] refuses what does not fit).
pub fn parse_duration_ns(text: &str) -> Option<u64> {
    let text = text.trim();
    let (value, rest) = scan_c_number(text)?;
    let rest = rest.trim();
    let micros = if rest.is_empty() {
        value * US_PER_S as f64
    } else {
        convert_to_base_unit(value, rest, Unit::Micros(1))?
    };
    (micros.is_finite() && micros >= 0.0).then(|| (micros * 1000.0).round() as u64)
}

#[cfg(test)]
mod tests {
    use crate::core::replication::SynchronousCommit;
    use crate::settings::test_support::*;
    use crate::settings::unit::*;
    use crate::settings::{SettingError, Settings};
    use proptest::prelude::*;

    // --- memory --------------------------------------------------------------

    #[test]
    fn each_memory_unit() {
        let flush = |v: &str| with("wal_writer_flush_after", v).wal_writer_flush_after_bytes;
        assert_eq!(flush("8192B"), 8192);
        assert_eq!(flush("8kB"), 8192);
        assert_eq!(flush("2MB"), 2 * MB);
        assert_eq!(flush("3GB"), 3 * GB);
        assert_eq!(flush("1TB"), TB);
        assert_eq!(with("shared_buffers", "16GB").shared_buffers_bytes, 16 * GB);
        assert_eq!(with("shared_buffers", "2TB").shared_buffers_bytes, 2 * TB);
        assert_eq!(with("max_wal_size", "4GB").max_wal_size_bytes, 4 * GB);
        assert_eq!(with("min_wal_size", "65536kB").min_wal_size_bytes, 64 * MB);
    }

    #[test]
    fn a_bare_number_is_in_the_base_unit() {
        // shared_buffers and wal_buffers and wal_writer_flush_after count 8kB pages.
        assert_eq!(
            with("shared_buffers", "16384").shared_buffers_bytes,
            128 * MB
        );
        assert_eq!(with("shared_buffers", "16").shared_buffers_bytes, 128 * KB);
        assert_eq!(with("wal_buffers", "2048").wal_buffers_bytes, Some(16 * MB));
        assert_eq!(
            with("wal_writer_flush_after", "128").wal_writer_flush_after_bytes,
            MB
        );
        // max_wal_size and min_wal_size count megabytes.
        assert_eq!(with("max_wal_size", "2048").max_wal_size_bytes, 2 * GB);
        assert_eq!(with("min_wal_size", "32").min_wal_size_bytes, 32 * MB);
    }

    #[test]
    fn memory_units_are_case_sensitive_and_hint_at_the_right_case() {
        let e = err("shared_buffers", "16gb");
        let SettingError::BadValue { expected, .. } = &e else {
            panic!("{e:?}");
        };
        assert!(expected.contains("did you mean 16GB?"), "{expected}");
        assert!(matches!(
            err("shared_buffers", "16KB"),
            SettingError::BadValue { .. }
        ));
        assert!(matches!(
            err("shared_buffers", "16mb"),
            SettingError::BadValue { .. }
        ));
        assert!(matches!(
            err("shared_buffers", "16 G"),
            SettingError::BadValue { .. }
        ));
        // A time unit is not a memory unit, and a unit needs a number.
        assert!(matches!(
            err("shared_buffers", "5s"),
            SettingError::BadValue { .. }
        ));
        assert!(matches!(
            err("shared_buffers", "GB"),
            SettingError::BadValue { .. }
        ));
        assert!(matches!(
            err("shared_buffers", ""),
            SettingError::BadValue { .. }
        ));
        assert!(matches!(
            err("shared_buffers", "16GB x"),
            SettingError::BadValue { .. }
        ));
    }

    #[test]
    fn fractional_memory_values_round_as_postgresql_does() {
        // Rounded to the next smaller unit, then to the base unit, half to even.
        assert_eq!(
            with("shared_buffers", "1.5GB").shared_buffers_bytes,
            1536 * MB
        );
        assert_eq!(
            with("shared_buffers", "0.5MB").shared_buffers_bytes,
            512 * KB
        );
        assert_eq!(
            with("shared_buffers", "16384.5").shared_buffers_bytes,
            16384 * 8192
        );
        assert_eq!(
            with("shared_buffers", "16385.5").shared_buffers_bytes,
            16386 * 8192
        );
        assert_eq!(
            with("shared_buffers", "131076kB").shared_buffers_bytes,
            16384 * 8192
        );
        assert_eq!(
            with("shared_buffers", "131084kB").shared_buffers_bytes,
            16386 * 8192
        );
        assert_eq!(with("max_wal_size", "1.5GB").max_wal_size_bytes, 1536 * MB);
        assert_eq!(with("max_wal_size", "32.4MB").max_wal_size_bytes, 32 * MB);
        assert_eq!(
            with("wal_writer_flush_after", "12345B").wal_writer_flush_after_bytes,
            2 * 8192
        );
        assert_eq!(
            with("wal_writer_flush_after", "4kB").wal_writer_flush_after_bytes,
            0,
            "half a page rounds to even, i.e. 0"
        );
        assert_eq!(
            with("shared_buffers", "1e3").shared_buffers_bytes,
            1000 * 8192
        );
        assert_eq!(
            with("shared_buffers", ".5GB").shared_buffers_bytes,
            512 * MB
        );
    }

    #[test]
    fn integers_take_c_notations() {
        // strtol base 0: hex and octal, a sign, spaces between number and unit.
        assert_eq!(
            with("shared_buffers", "0x4000").shared_buffers_bytes,
            128 * MB
        );
        assert_eq!(
            with("shared_buffers", "040000").shared_buffers_bytes,
            128 * MB
        );
        assert_eq!(
            with("shared_buffers", "+16384").shared_buffers_bytes,
            128 * MB
        );
        assert_eq!(
            with("shared_buffers", "16 GB").shared_buffers_bytes,
            16 * GB
        );
        assert_eq!(
            with("shared_buffers", "  16GB  ").shared_buffers_bytes,
            16 * GB
        );
        assert!(matches!(
            err("shared_buffers", "08"),
            SettingError::BadValue { .. }
        ));
    }

    #[test]
    fn values_may_be_quoted() {
        assert_eq!(
            with("shared_buffers", "'16GB'").shared_buffers_bytes,
            16 * GB
        );
        assert_eq!(
            with("shared_buffers", "' 16GB '").shared_buffers_bytes,
            16 * GB
        );
        assert_eq!(
            with("synchronous_commit", "'off'").synchronous_commit,
            SynchronousCommit::Off
        );
        let e = err("shared_buffers", "'16GB");
        assert!(matches!(e, SettingError::BadValue { .. }), "{e:?}");
        assert!(e.to_string().contains("quote"), "{e}");
        assert!(matches!(
            err("shared_buffers", "'16GB' x"),
            SettingError::BadValue { .. }
        ));
    }

    // --- time ------------------------------------------------------------------

    #[test]
    fn each_time_unit() {
        let timeout = |v: &str| with("checkpoint_timeout", v).checkpoint_timeout_s;
        assert_eq!(timeout("30000000us"), 30);
        assert_eq!(timeout("30000ms"), 30);
        assert_eq!(timeout("45s"), 45);
        assert_eq!(timeout("5min"), 300);
        assert_eq!(timeout("2h"), 7200);
        assert_eq!(timeout("1d"), 86_400);
        assert_eq!(timeout("0.5min"), 30);
        assert_eq!(timeout("1.5h"), 5400);
        let delay = |v: &str| with("bgwriter_delay", v).bgwriter_delay_ms;
        assert_eq!(delay("10000us"), 10);
        assert_eq!(delay("50ms"), 50);
        assert_eq!(delay("1s"), 1000);
        assert_eq!(delay("0.1min"), 6000);
        let writer = |v: &str| with("wal_writer_delay", v).wal_writer_delay_ms;
        assert_eq!(writer("1500us"), 2, "1.5ms rounds half to even");
        assert_eq!(writer("2500us"), 2, "2.5ms rounds half to even");
        assert_eq!(writer("1.2s"), 1200);
    }

    #[test]
    fn a_bare_time_is_in_the_base_unit() {
        assert_eq!(with("checkpoint_timeout", "300").checkpoint_timeout_s, 300);
        assert_eq!(with("bgwriter_delay", "100").bgwriter_delay_ms, 100);
        assert_eq!(with("wal_writer_delay", "10").wal_writer_delay_ms, 10);
    }

    #[test]
    fn time_units_are_case_sensitive_and_minutes_are_min() {
        assert!(matches!(
            err("checkpoint_timeout", "5m"),
            SettingError::BadValue { .. }
        ));
        assert!(matches!(
            err("checkpoint_timeout", "5 mins"),
            SettingError::BadValue { .. }
        ));
        let e = err("checkpoint_timeout", "5MIN");
        assert!(e.to_string().contains("did you mean 5min?"), "{e}");
        assert!(matches!(
            err("checkpoint_timeout", "1GB"),
            SettingError::BadValue { .. }
        ));
    }

    #[test]
    fn commit_delay_is_microseconds_and_also_takes_a_time_unit() {
        let delay = |v: &str| with("commit_delay", v).commit_delay_us;
        assert_eq!(delay("1000"), 1000);
        assert_eq!(delay("1ms"), 1000);
        assert_eq!(delay("0.5ms"), 500);
        assert_eq!(delay("250us"), 250);
        assert_eq!(delay("0.1s"), 100_000);
        assert!(matches!(
            err("commit_delay", "101ms"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("commit_delay", "100001"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("commit_delay", "-1"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("commit_delay", "1kB"),
            SettingError::BadValue { .. }
        ));
        assert_eq!(shown(&with("commit_delay", "1ms"), "commit_delay"), "1000");
    }

    // --- counts, reals, booleans ---------------------------------------------

    #[test]
    fn plain_integers() {
        assert_eq!(with("commit_siblings", "0").commit_siblings, 0);
        assert_eq!(with("commit_siblings", "1000").commit_siblings, 1000);
        assert_eq!(
            with("commit_siblings", "1.5").commit_siblings,
            2,
            "PostgreSQL rounds"
        );
        assert!(matches!(
            err("commit_siblings", "1001"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("commit_siblings", "5MB"),
            SettingError::BadValue { .. }
        ));
        assert!(matches!(
            err("commit_siblings", "five"),
            SettingError::BadValue { .. }
        ));
        assert_eq!(
            with("bgwriter_lru_maxpages", "1073741823").bgwriter_lru_maxpages,
            1_073_741_823
        );
        assert_eq!(with("bgwriter_lru_maxpages", "0").bgwriter_lru_maxpages, 0);
        assert!(matches!(
            err("bgwriter_lru_maxpages", "1073741824"),
            SettingError::OutOfRange { .. }
        ));
    }

    #[test]
    fn reals() {
        let cct = |v: &str| with("checkpoint_completion_target", v).checkpoint_completion_target;
        assert_eq!(cct("0.5"), 0.5);
        assert_eq!(cct("1"), 1.0);
        assert_eq!(cct("0"), 0.0);
        assert_eq!(cct(".9"), 0.9);
        assert_eq!(cct("9e-1"), 0.9);
        assert_eq!(cct("'0.7'"), 0.7);
        assert!(matches!(
            err("checkpoint_completion_target", "1.1"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("checkpoint_completion_target", "-0.1"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("checkpoint_completion_target", "inf"),
            SettingError::OutOfRange { .. }
        ));
        for bad in ["abc", "nan", "0.9s", "", "0.9.1"] {
            assert!(
                matches!(
                    err("checkpoint_completion_target", bad),
                    SettingError::BadValue { .. }
                ),
                "{bad}"
            );
        }
        assert_eq!(
            with("bgwriter_lru_multiplier", "10").bgwriter_lru_multiplier,
            10.0
        );
        assert!(matches!(
            err("bgwriter_lru_multiplier", "10.5"),
            SettingError::OutOfRange { .. }
        ));
    }

    #[test]
    fn booleans_and_their_prefixes() {
        let fpw = |v: &str| with("full_page_writes", v).full_page_writes;
        for yes in ["on", "ON", "true", "TRUE", "t", "tr", "yes", "y", "Ye", "1"] {
            assert!(fpw(yes), "{yes}");
            assert!(with("autovacuum", yes).autovacuum, "{yes}");
        }
        for no in ["off", "OFF", "of", "false", "f", "fal", "no", "n", "0"] {
            assert!(!fpw(no), "{no}");
        }
        for bad in ["o", "onn", "offf", "truee", "2", "", "enabled", "01", "-1"] {
            let e = err("full_page_writes", bad);
            assert!(matches!(e, SettingError::BadValue { .. }), "{bad}: {e:?}");
        }
    }

    #[test]
    fn synchronous_commit_levels() {
        use SynchronousCommit::*;
        let sync = |v: &str| with("synchronous_commit", v).synchronous_commit;
        for (text, level) in [
            ("on", On),
            ("local", Local),
            ("remote_write", RemoteWrite),
            ("remote_apply", RemoteApply),
            ("REMOTE_APPLY", RemoteApply),
            ("true", On),
            ("yes", On),
            ("1", On),
            ("off", Off),
            ("OFF", Off),
            ("false", Off),
            ("no", Off),
            ("0", Off),
        ] {
            assert_eq!(sync(text), level, "{text}");
        }
        // An enum: exact names only, no prefixes.
        for bad in ["tr", "of", "remote", "maybe", ""] {
            let e = err("synchronous_commit", bad);
            assert!(matches!(e, SettingError::BadValue { .. }), "{bad}: {e:?}");
        }
        for (text, shows) in [("local", "local"), ("no", "off"), ("yes", "on")] {
            assert_eq!(
                shown(&with("synchronous_commit", text), "synchronous_commit"),
                shows
            );
        }
    }

    #[test]
    fn synchronous_standby_names_takes_postgresqls_grammar() {
        let s = with("synchronous_standby_names", "'ANY 1 (s1, s2)'");
        assert_eq!(s.synchronous_standby_names, "ANY 1 (s1, s2)");
        assert_eq!(shown(&s, "synchronous_standby_names"), "ANY 1 (s1, s2)");
        assert_eq!(shown(&Settings::default(), "synchronous_standby_names"), "");
        let e = err("synchronous_standby_names", "ANY (s1)").to_string();
        assert!(
            e.starts_with(
                "invalid value for synchronous_standby_names: \"ANY (s1)\"; expected a list"
            ) && e.ends_with("(syntax error at or near \"(\")"),
            "{e}"
        );
    }

    proptest! {
        /// Any text at all: set never panics, and a refusal changes nothing.
        #[test]
        fn set_never_panics(index in 0usize..16, value in "\\PC{0,12}") {
            let name = Settings::NAMES[index];
            let mut settings = Settings::default();
            if settings.set(name, &value).is_err() {
                prop_assert_eq!(settings, Settings::default());
            }
        }
    }
}
