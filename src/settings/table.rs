//! The settings' table: one row per modelled setting, holding all there is
//! to know about it but its default: PostgreSQL's name, the kind of value
//! it takes (unit and range in base units, or the words it takes), how a
//! parsed value is stored in [`Settings`] and how `SHOW` prints it, and
//! where it applies. Names, units and ranges are PostgreSQL 15's
//! (`ConfigureNames*` in guc.c).
//!
//! Adding a setting: its field in [`Settings`] and its value in `Default`
//! (mod.rs: the defaults are typed there, so the compiler asks for each),
//! and its row in [`TABLE`]. A setting taking words of its own also needs
//! their parser in parse.rs.
//!
//! The table reads the parser (parse.rs), the display (show.rs) and the
//! units (unit.rs); none of those reads the table. A value it refuses comes
//! back as a [`Refused`], which `Settings::set` makes a `SettingError`.

use super::Settings;
use super::parse::{
    IntError, parse_archive_mode, parse_bool, parse_int, parse_real, parse_recovery_prefetch,
    parse_synchronous_commit, split_number_and_unit,
};
use super::show::{
    format_base, format_bytes, format_micros, format_real, format_with_ms, on_off,
    with_approximation,
};
use super::unit::{
    BLCKSZ_BYTES, BLOCKS, BYTES, INT_MAX, KB, KILOBYTES, MB, MEGABYTES, MEMORY_UNITS, MICROSECONDS,
    MILLISECONDS, SECONDS, TIME_UNITS, US_PER_MS, US_PER_S, Unit, WAL_BLOCKS, WAL_SEGMENT_BYTES,
    XLOG_BLCKSZ_BYTES, unit_description,
};
use crate::core::replication::StandbyNames;

/// One modelled setting.
pub(super) struct Row {
    /// PostgreSQL's name.
    pub(super) name: &'static str,
    /// The values it takes, and how one is stored.
    pub(super) kind: Kind,
    /// The value as `SHOW` prints it.
    pub(super) show: fn(&Settings) -> String,
    /// Where the setting applies, which is also where it is shown.
    pub(super) applies: Applies,
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    /// A C `int` in PostgreSQL, with its range in base units; `set` stores
    /// a value in range.
    Int {
        unit: Unit,
        min: i64,
        max: i64,
        /// What a -1 stands for, where it is not a number.
        minus_one: Option<MinusOne>,
        set: fn(&mut Settings, i64),
    },
    Real {
        min: f64,
        max: f64,
        set: fn(&mut Settings, f64),
    },
    Bool {
        set: fn(&mut Settings, bool),
    },
    /// One of a few words (a PostgreSQL enum: exact names, case-insensitive,
    /// no prefixes): `set` stores the word's value, or gives `None` for a
    /// word the setting does not take; `expected` lists the words.
    Words {
        set: fn(&mut Settings, &str) -> Option<()>,
        expected: &'static str,
    },
    /// Text in a grammar of its own: `set` stores it, or says why it does
    /// not parse.
    Text {
        set: fn(&mut Settings, &str) -> Result<(), String>,
        expected: &'static str,
    },
}

/// A -1 that stands for something other than a number (wal_buffers').
#[derive(Debug, Clone, Copy)]
pub(super) struct MinusOne {
    /// What -1 means, in what a refused value says is expected.
    expected: &'static str,
    /// The range's lower end in words, with -1's meaning.
    range_min: &'static str,
}

/// Where a setting applies, which is also where its value is shown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Applies {
    /// The server every command models: shown in every result.
    Server,
    /// The WAL archiver, with archive_mode on: shown only then, so that
    /// results of runs without it read as before.
    Archiving,
    /// TLS on the server's connections: shown only when on, for the same
    /// reason.
    Tls,
    /// A standby's recovery (`pgiosim catchup`): shown in that command's
    /// result (`Settings::recovery_display`), not in those of run and
    /// model, which have no recovery.
    Recovery,
}

/// Why a row refused a value (the caller names the setting and the value).
#[derive(Debug)]
pub(super) enum Refused {
    /// Not a value of the setting's kind; what is, in words.
    BadValue(String),
    /// Of its kind, but outside its range ([`Row::range_text`]).
    OutOfRange,
}

/// Upper bound of the *_flush_after settings, in 8kB blocks (2MB).
const WRITEBACK_MAX_PENDING_FLUSHES: i64 = 256;

/// Two WAL segments in MB: the least max_wal_size/min_wal_size the server
/// starts with (ReadControlFile: "must be at least twice wal_segment_size").
const MIN_WAL_SIZE_MB: i64 = (2 * WAL_SEGMENT_BYTES / MB) as i64;

/// An integer setting without a special -1.
const fn int(unit: Unit, min: i64, max: i64, set: fn(&mut Settings, i64)) -> Kind {
    Kind::Int {
        unit,
        min,
        max,
        minus_one: None,
        set,
    }
}

// Every value a row stores has passed its range check, so the narrowing
// conversions below cannot fail; these keep that explicit without a panic
// path.
fn unsigned(v: i64) -> u64 {
    u64::try_from(v).unwrap_or(0)
}
fn small(v: i64) -> u32 {
    u32::try_from(v).unwrap_or(0)
}

/// PostgreSQL 15's definitions, in [`Settings::NAMES`] order.
pub(super) const TABLE: &[Row] = &[
    Row {
        name: "shared_buffers",
        kind: int(BLOCKS, 16, INT_MAX / 2, |s, v| {
            s.shared_buffers_bytes = unsigned(v) * BLCKSZ_BYTES;
        }),
        show: |s| format_bytes(s.shared_buffers_bytes),
        applies: Applies::Server,
    },
    Row {
        name: "wal_buffers",
        kind: Kind::Int {
            unit: WAL_BLOCKS,
            min: -1,
            max: INT_MAX / XLOG_BLCKSZ_BYTES as i64,
            minus_one: Some(MinusOne {
                expected: "automatic (1/32 of shared_buffers)",
                range_min: "-1 (automatic: 1/32 of shared_buffers), or 32kB",
            }),
            // check_wal_buffers: -1 is automatic; explicit values below 4
            // pages are silently raised to 4.
            set: |s, v| {
                s.wal_buffers_bytes = if v == -1 {
                    None
                } else {
                    Some(unsigned(v.max(4)) * XLOG_BLCKSZ_BYTES)
                };
            },
        },
        // The effective size, as `SHOW wal_buffers` shows it on a running server.
        show: |s| format_bytes(s.wal_buffers_effective_bytes()),
        applies: Applies::Server,
    },
    Row {
        name: "synchronous_commit",
        kind: Kind::Words {
            set: |s, t| {
                s.synchronous_commit = parse_synchronous_commit(t)?;
                Some(())
            },
            expected: "one of on, off, local, remote_write, remote_apply (or a boolean: true, false, yes, no, 1, 0)",
        },
        // The level; a boolean as on or off.
        show: |s| s.synchronous_commit.name().to_string(),
        applies: Applies::Server,
    },
    Row {
        name: "commit_delay",
        kind: int(MICROSECONDS, 0, 100_000, |s, v| {
            s.commit_delay_us = unsigned(v);
        }),
        show: |s| s.commit_delay_us.to_string(),
        applies: Applies::Server,
    },
    Row {
        name: "commit_siblings",
        kind: int(Unit::None, 0, 1000, |s, v| s.commit_siblings = small(v)),
        show: |s| s.commit_siblings.to_string(),
        applies: Applies::Server,
    },
    Row {
        name: "full_page_writes",
        kind: Kind::Bool {
            set: |s, b| s.full_page_writes = b,
        },
        show: |s| on_off(s.full_page_writes),
        applies: Applies::Server,
    },
    Row {
        name: "ssl",
        kind: Kind::Bool {
            set: |s, b| s.ssl = b,
        },
        show: |s| on_off(s.ssl),
        applies: Applies::Tls,
    },
    Row {
        name: "checkpoint_timeout",
        kind: int(SECONDS, 30, 86_400, |s, v| {
            s.checkpoint_timeout_s = unsigned(v);
        }),
        show: |s| format_micros(s.checkpoint_timeout_s.saturating_mul(US_PER_S)),
        applies: Applies::Server,
    },
    Row {
        name: "max_wal_size",
        kind: int(MEGABYTES, MIN_WAL_SIZE_MB, INT_MAX, |s, v| {
            s.max_wal_size_bytes = unsigned(v) * MB;
        }),
        show: |s| format_bytes(s.max_wal_size_bytes),
        applies: Applies::Server,
    },
    Row {
        name: "min_wal_size",
        kind: int(MEGABYTES, MIN_WAL_SIZE_MB, INT_MAX, |s, v| {
            s.min_wal_size_bytes = unsigned(v) * MB;
        }),
        show: |s| format_bytes(s.min_wal_size_bytes),
        applies: Applies::Server,
    },
    Row {
        name: "checkpoint_completion_target",
        kind: Kind::Real {
            min: 0.0,
            max: 1.0,
            set: |s, r| s.checkpoint_completion_target = r,
        },
        show: |s| format_real(s.checkpoint_completion_target),
        applies: Applies::Server,
    },
    Row {
        name: "bgwriter_delay",
        kind: int(MILLISECONDS, 10, 10_000, |s, v| {
            s.bgwriter_delay_ms = unsigned(v);
        }),
        show: |s| format_micros(s.bgwriter_delay_ms.saturating_mul(US_PER_MS)),
        applies: Applies::Server,
    },
    Row {
        name: "bgwriter_lru_maxpages",
        kind: int(Unit::None, 0, INT_MAX / 2, |s, v| {
            s.bgwriter_lru_maxpages = small(v);
        }),
        show: |s| s.bgwriter_lru_maxpages.to_string(),
        applies: Applies::Server,
    },
    Row {
        name: "bgwriter_lru_multiplier",
        kind: Kind::Real {
            min: 0.0,
            max: 10.0,
            set: |s, r| s.bgwriter_lru_multiplier = r,
        },
        show: |s| format_real(s.bgwriter_lru_multiplier),
        applies: Applies::Server,
    },
    Row {
        name: "wal_writer_delay",
        kind: int(MILLISECONDS, 1, 10_000, |s, v| {
            s.wal_writer_delay_ms = unsigned(v);
        }),
        show: |s| format_micros(s.wal_writer_delay_ms.saturating_mul(US_PER_MS)),
        applies: Applies::Server,
    },
    Row {
        name: "wal_writer_flush_after",
        kind: int(WAL_BLOCKS, 0, INT_MAX, |s, v| {
            s.wal_writer_flush_after_bytes = unsigned(v) * XLOG_BLCKSZ_BYTES;
        }),
        show: |s| format_bytes(s.wal_writer_flush_after_bytes),
        applies: Applies::Server,
    },
    Row {
        name: "backend_flush_after",
        kind: int(BLOCKS, 0, WRITEBACK_MAX_PENDING_FLUSHES, |s, v| {
            s.backend_flush_after_bytes = unsigned(v) * BLCKSZ_BYTES;
        }),
        show: |s| format_bytes(s.backend_flush_after_bytes),
        applies: Applies::Server,
    },
    Row {
        name: "bgwriter_flush_after",
        kind: int(BLOCKS, 0, WRITEBACK_MAX_PENDING_FLUSHES, |s, v| {
            s.bgwriter_flush_after_bytes = unsigned(v) * BLCKSZ_BYTES;
        }),
        show: |s| format_bytes(s.bgwriter_flush_after_bytes),
        applies: Applies::Server,
    },
    Row {
        name: "checkpoint_flush_after",
        kind: int(BLOCKS, 0, WRITEBACK_MAX_PENDING_FLUSHES, |s, v| {
            s.checkpoint_flush_after_bytes = unsigned(v) * BLCKSZ_BYTES;
        }),
        show: |s| format_bytes(s.checkpoint_flush_after_bytes),
        applies: Applies::Server,
    },
    Row {
        name: "autovacuum",
        kind: Kind::Bool {
            set: |s, b| s.autovacuum = b,
        },
        show: |s| on_off(s.autovacuum),
        applies: Applies::Server,
    },
    Row {
        name: "vacuum_cost_limit",
        kind: int(Unit::None, 1, 10_000, |s, v| s.vacuum_cost_limit = small(v)),
        show: |s| s.vacuum_cost_limit.to_string(),
        applies: Applies::Server,
    },
    // PostgreSQL's cost delays are reals in ms; pgiosim keeps whole ms.
    Row {
        name: "vacuum_cost_delay",
        kind: int(MILLISECONDS, 0, 100, |s, v| {
            s.vacuum_cost_delay_ms = unsigned(v);
        }),
        show: |s| format_with_ms(s.vacuum_cost_delay_ms as i64),
        applies: Applies::Server,
    },
    Row {
        name: "autovacuum_vacuum_cost_delay",
        kind: int(MILLISECONDS, -1, 100, |s, v| {
            s.autovacuum_vacuum_cost_delay_ms = v;
        }),
        show: |s| format_with_ms(s.autovacuum_vacuum_cost_delay_ms),
        applies: Applies::Server,
    },
    Row {
        name: "autovacuum_vacuum_cost_limit",
        kind: int(Unit::None, -1, 10_000, |s, v| {
            s.autovacuum_vacuum_cost_limit = v;
        }),
        show: |s| s.autovacuum_vacuum_cost_limit.to_string(),
        applies: Applies::Server,
    },
    // maintenance_work_mem: 1MB..2147483647kB, base unit kB (guc_tables.c).
    Row {
        name: "maintenance_work_mem",
        kind: int(KILOBYTES, 1024, 2_147_483_647, |s, v| {
            s.maintenance_work_mem_bytes = unsigned(v) * KB;
        }),
        show: |s| format_bytes(s.maintenance_work_mem_bytes),
        applies: Applies::Server,
    },
    Row {
        name: "vacuum_cost_page_hit",
        kind: int(Unit::None, 0, 10_000, |s, v| {
            s.vacuum_cost_page_hit = small(v);
        }),
        show: |s| s.vacuum_cost_page_hit.to_string(),
        applies: Applies::Server,
    },
    Row {
        name: "vacuum_cost_page_miss",
        kind: int(Unit::None, 0, 10_000, |s, v| {
            s.vacuum_cost_page_miss = small(v);
        }),
        show: |s| s.vacuum_cost_page_miss.to_string(),
        applies: Applies::Server,
    },
    Row {
        name: "vacuum_cost_page_dirty",
        kind: int(Unit::None, 0, 10_000, |s, v| {
            s.vacuum_cost_page_dirty = small(v);
        }),
        show: |s| s.vacuum_cost_page_dirty.to_string(),
        applies: Applies::Server,
    },
    Row {
        name: "autovacuum_naptime",
        kind: int(SECONDS, 1, INT_MAX / 1000, |s, v| {
            s.autovacuum_naptime_s = unsigned(v);
        }),
        show: |s| format_micros(s.autovacuum_naptime_s.saturating_mul(US_PER_S)),
        applies: Applies::Server,
    },
    Row {
        name: "synchronous_standby_names",
        kind: Kind::Text {
            // syncrep_gram.y's grammar; kept as written.
            set: |s, t| {
                StandbyNames::parse(t).map_err(|why| why.to_string())?;
                s.synchronous_standby_names = t.to_string();
                Ok(())
            },
            expected: "a list of standby names as PostgreSQL takes it: \
                 'ANY 1 (s1, s2)', 'FIRST 2 (s1, s2, s3)', '2 (s1, s2)', 's1, s2' or '*'",
        },
        show: |s| s.synchronous_standby_names.clone(),
        applies: Applies::Server,
    },
    Row {
        name: "archive_mode",
        kind: Kind::Words {
            set: |s, t| {
                s.archive_mode = parse_archive_mode(t)?;
                Some(())
            },
            expected: "one of off, on, always (or a boolean: true, false, yes, no, 1, 0)",
        },
        show: |s| s.archive_mode.name().to_string(),
        applies: Applies::Archiving,
    },
    Row {
        name: "archive_timeout",
        kind: int(SECONDS, 0, INT_MAX / 2, |s, v| {
            s.archive_timeout_s = unsigned(v);
        }),
        show: |s| format_micros(s.archive_timeout_s.saturating_mul(US_PER_S)),
        applies: Applies::Archiving,
    },
    Row {
        name: "recovery_prefetch",
        kind: Kind::Words {
            set: |s, t| {
                s.recovery_prefetch = parse_recovery_prefetch(t)?;
                Some(())
            },
            expected: "one of off, on, try (or a boolean: true, false, yes, no, 1, 0)",
        },
        show: |s| s.recovery_prefetch.name().to_string(),
        applies: Applies::Recovery,
    },
    Row {
        name: "maintenance_io_concurrency",
        // MAX_IO_CONCURRENCY.
        kind: int(Unit::None, 0, 1000, |s, v| {
            s.maintenance_io_concurrency = small(v);
        }),
        show: |s| s.maintenance_io_concurrency.to_string(),
        applies: Applies::Recovery,
    },
    Row {
        name: "wal_decode_buffer_size",
        // MaxAllocSize.
        kind: int(BYTES, 64 * KB as i64, 0x3fff_ffff, |s, v| {
            s.wal_decode_buffer_size_bytes = unsigned(v);
        }),
        show: |s| format_bytes(s.wal_decode_buffer_size_bytes),
        applies: Applies::Recovery,
    },
];

/// The names in the table's order: [`Settings::NAMES`].
pub(super) const NAMES: [&str; TABLE.len()] = {
    let mut names = [""; TABLE.len()];
    let mut i = 0;
    while i < TABLE.len() {
        names[i] = TABLE[i].name;
        i += 1;
    }
    names
};

/// The row of a name, case-insensitive.
pub(super) fn row_by_name(name: &str) -> Option<&'static Row> {
    TABLE.iter().find(|row| row.name.eq_ignore_ascii_case(name))
}

impl Row {
    /// Parse `text` (unquoted) as PostgreSQL would and store it; a refused
    /// value changes nothing.
    pub(super) fn set(&self, settings: &mut Settings, text: &str) -> Result<(), Refused> {
        let bad = || Refused::BadValue(self.expected_for(text));
        match self.kind {
            Kind::Bool { set } => set(settings, parse_bool(text).ok_or_else(bad)?),
            Kind::Words { set, .. } => set(settings, text).ok_or_else(bad)?,
            Kind::Text { set, .. } => set(settings, text)
                .map_err(|why| Refused::BadValue(format!("{} ({why})", self.expected())))?,
            Kind::Real { min, max, set } => {
                let value = parse_real(text).ok_or_else(bad)?;
                if value < min || value > max {
                    return Err(Refused::OutOfRange);
                }
                set(settings, value);
            }
            Kind::Int {
                unit,
                min,
                max,
                set,
                ..
            } => {
                let value = match parse_int(text, unit) {
                    Ok(value) => value,
                    Err(IntError::Invalid) => return Err(bad()),
                    Err(IntError::Overflow) => return Err(Refused::OutOfRange),
                };
                if value < min || value > max {
                    return Err(Refused::OutOfRange);
                }
                set(settings, value);
            }
        }
        Ok(())
    }

    /// The range in the form `SHOW` prints values, with an approximation
    /// where the exact figure is hard to read.
    pub(super) fn range_text(&self) -> (String, String) {
        match self.kind {
            Kind::Real { min, max, .. } => (format_real(min), format_real(max)),
            Kind::Int {
                unit,
                min,
                max,
                minus_one,
                ..
            } => {
                let min_text = match minus_one {
                    Some(minus_one) => minus_one.range_min.to_string(),
                    None => format_base(unit, min),
                };
                (min_text, with_approximation(unit, max))
            }
            Kind::Bool { .. } | Kind::Words { .. } | Kind::Text { .. } => {
                (String::new(), String::new())
            }
        }
    }

    /// What the setting takes, in words.
    pub(super) fn expected(&self) -> String {
        match self.kind {
            Kind::Bool { .. } => "a boolean: on, off, true, false, yes, no, 1 or 0".to_string(),
            Kind::Words { expected, .. } | Kind::Text { expected, .. } => expected.to_string(),
            Kind::Real { .. } => "a number such as 0.9".to_string(),
            Kind::Int {
                unit, minus_one, ..
            } => {
                let base = match unit {
                    Unit::None => return "a whole number such as 100, without a unit".to_string(),
                    Unit::Bytes(_) => format!(
                        "a size such as 16GB: a number with one of the units B, kB, MB, GB, TB \
                         (case-sensitive); a bare number counts {}",
                        unit_description(unit)
                    ),
                    Unit::Micros(1) => "a number of microseconds such as 1000, or a duration \
                         with one of the units us, ms, s, min, h, d (e.g. 1ms)"
                        .to_string(),
                    Unit::Micros(_) => format!(
                        "a duration such as 200ms: a number with one of the units us, ms, s, \
                         min, h, d (case-sensitive); a bare number counts {}",
                        unit_description(unit)
                    ),
                };
                match minus_one {
                    Some(minus_one) => format!("{base}, or -1 for {}", minus_one.expected),
                    None => base,
                }
            }
        }
    }

    /// [`Row::expected`], plus a hint when the unit was only wrongly cased.
    fn expected_for(&self, text: &str) -> String {
        let expected = self.expected();
        let Kind::Int {
            unit: unit @ (Unit::Bytes(_) | Unit::Micros(_)),
            ..
        } = self.kind
        else {
            return expected;
        };
        let Some((number, given)) = split_number_and_unit(text) else {
            return expected;
        };
        let units: Vec<&str> = match unit {
            Unit::Bytes(_) => MEMORY_UNITS.iter().map(|(u, _)| *u).collect(),
            _ => TIME_UNITS.iter().map(|(u, _)| *u).collect(),
        };
        match units
            .iter()
            .find(|u| u.eq_ignore_ascii_case(given) && **u != given)
        {
            Some(right) => format!("{expected} (did you mean {number}{right}?)"),
            None => expected,
        }
    }
}

/// For a bare number given to a setting with a unit, what it meant, so that
/// "shared_buffers = 10" explains itself ("10 8kB blocks = 80kB"). Not for
/// commit_delay, whose bare number of microseconds is PostgreSQL's own.
pub(super) fn bare_number_meaning(name: &str, value: &str) -> Option<String> {
    let row = row_by_name(name)?;
    let Kind::Int { unit, .. } = row.kind else {
        return None;
    };
    if unit == Unit::None || unit == MICROSECONDS {
        return None;
    }
    let trimmed = value.trim();
    if !trimmed.ends_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let base = parse_int(trimmed, unit).ok()?;
    if base <= 0 {
        return None;
    }
    Some(format!(
        "a bare number counts {}, so this is {}",
        unit_description(unit),
        format_base(unit, base)
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::replication::SynchronousCommit;
    use crate::settings::test_support::*;
    use crate::settings::{SettingError, Settings};

    #[test]
    fn defaults_are_postgresql_15s() {
        let d = Settings::default();
        assert_eq!(d.shared_buffers_bytes, 16384 * 8192);
        assert_eq!(d.wal_buffers_bytes, None);
        assert_eq!(d.synchronous_commit, SynchronousCommit::On);
        assert_eq!(d.commit_delay_us, 0);
        assert_eq!(d.commit_siblings, 5);
        assert!(d.full_page_writes);
        assert_eq!(d.checkpoint_timeout_s, 300);
        assert_eq!(d.max_wal_size_bytes, 1024 * MB);
        assert_eq!(d.min_wal_size_bytes, 80 * MB);
        assert_eq!(d.checkpoint_completion_target, 0.9);
        assert_eq!(d.bgwriter_delay_ms, 200);
        assert_eq!(d.bgwriter_lru_maxpages, 100);
        assert_eq!(d.bgwriter_lru_multiplier, 2.0);
        assert_eq!(d.wal_writer_delay_ms, 200);
        assert_eq!(d.wal_writer_flush_after_bytes, 128 * 8192);
        assert!(d.autovacuum);
    }

    #[test]
    fn memory_ranges() {
        assert!(matches!(
            err("shared_buffers", "64kB"),
            SettingError::OutOfRange { .. }
        ));
        assert_eq!(
            with("shared_buffers", "128kB").shared_buffers_bytes,
            128 * KB
        );
        assert!(matches!(
            err("shared_buffers", "8TB"),
            SettingError::OutOfRange { .. }
        ));
        assert_eq!(
            with("shared_buffers", "8589934584kB").shared_buffers_bytes,
            1_073_741_823 * 8192
        );
        assert!(matches!(
            err("max_wal_size", "31MB"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("min_wal_size", "16MB"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("max_wal_size", "3000TB"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("wal_writer_flush_after", "-1"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("shared_buffers", "99999999999999"),
            SettingError::OutOfRange { .. }
        ));
    }

    #[test]
    fn time_ranges() {
        assert!(matches!(
            err("checkpoint_timeout", "29s"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("checkpoint_timeout", "25h"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("bgwriter_delay", "9ms"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("bgwriter_delay", "11s"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("wal_writer_delay", "0"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("wal_writer_delay", "400us"),
            SettingError::OutOfRange { .. }
        ));
    }
}
