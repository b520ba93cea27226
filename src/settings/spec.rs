//! The settings' table: each modelled setting's name, kind, base unit and
//! range (PostgreSQL 15's `ConfigureNames*` in guc.c), the units themselves,
//! and the defaults.
//!
//! Adding a setting: a variant of [`Id`], its row in [`SPECS`] (which also
//! gives [`Settings::NAMES`]), its field in [`Settings`] with its default
//! below, its arm in `Settings::store` (mod.rs) and in
//! `Settings::to_display` (show.rs). A new kind of value (an enum) also
//! needs a [`Kind`], its parser in parse.rs and its text in
//! [`Spec::expected`].

use super::parse::{parse_int, split_number_and_unit};
use super::show::{format_base, format_real, with_approximation};
use super::{SettingError, Settings};
use crate::core::archive::ArchiveMode;
use crate::core::recovery::RecoveryPrefetch;
use crate::core::replication::SynchronousCommit;

/// PostgreSQL's data page size (`BLCKSZ`).
pub(super) const BLCKSZ_BYTES: u64 = 8192;
/// PostgreSQL's WAL page size (`XLOG_BLCKSZ`).
pub(super) const XLOG_BLCKSZ_BYTES: u64 = 8192;
/// PostgreSQL's default WAL segment size (`DEFAULT_XLOG_SEG_SIZE`).
pub(super) const WAL_SEGMENT_BYTES: u64 = 16 * 1024 * 1024;
/// `INT_MAX`: every integer setting is a C `int` in PostgreSQL.
pub(super) const INT_MAX: i64 = i32::MAX as i64;
pub(super) const INT_MIN: i64 = i32::MIN as i64;

pub(super) const KB: u64 = 1024;
pub(super) const MB: u64 = 1024 * KB;
pub(super) const GB: u64 = 1024 * MB;
pub(super) const TB: u64 = 1024 * GB;

/// Memory units, largest first, as in PostgreSQL's `memory_unit_conversion_table`.
pub(super) const MEMORY_UNITS: [(&str, u64); 5] =
    [("TB", TB), ("GB", GB), ("MB", MB), ("kB", KB), ("B", 1)];

pub(super) const US_PER_MS: u64 = 1000;
pub(super) const US_PER_S: u64 = 1_000_000;
/// Time units in microseconds, largest first, as in PostgreSQL's
/// `time_unit_conversion_table`.
pub(super) const TIME_UNITS: [(&str, u64); 6] = [
    ("d", 86_400 * US_PER_S),
    ("h", 3_600 * US_PER_S),
    ("min", 60 * US_PER_S),
    ("s", US_PER_S),
    ("ms", US_PER_MS),
    ("us", 1),
];

impl Default for Settings {
    /// PostgreSQL 15's defaults.
    fn default() -> Self {
        Settings {
            shared_buffers_bytes: 128 * MB,
            wal_buffers_bytes: None,
            synchronous_commit: SynchronousCommit::On,
            synchronous_standby_names: String::new(),
            commit_delay_us: 0,
            commit_siblings: 5,
            full_page_writes: true,
            checkpoint_timeout_s: 300,
            max_wal_size_bytes: GB,
            min_wal_size_bytes: 80 * MB,
            checkpoint_completion_target: 0.9,
            bgwriter_delay_ms: 200,
            bgwriter_lru_maxpages: 100,
            bgwriter_lru_multiplier: 2.0,
            wal_writer_delay_ms: 200,
            wal_writer_flush_after_bytes: MB,
            backend_flush_after_bytes: 0,
            bgwriter_flush_after_bytes: 512 * KB,
            checkpoint_flush_after_bytes: 256 * KB,
            autovacuum: true,
            vacuum_cost_limit: 200,
            vacuum_cost_delay_ms: 0,
            autovacuum_vacuum_cost_delay_ms: 2,
            autovacuum_vacuum_cost_limit: -1,
            autovacuum_naptime_s: 60,
            maintenance_work_mem_bytes: 64 * MB,
            vacuum_cost_page_hit: 1,
            vacuum_cost_page_miss: 2,
            vacuum_cost_page_dirty: 20,
            archive_mode: ArchiveMode::Off,
            archive_timeout_s: 0,
            recovery_prefetch: RecoveryPrefetch::Try,
            maintenance_io_concurrency: 10,
            wal_decode_buffer_size_bytes: 512 * KB,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Id {
    SharedBuffers,
    WalBuffers,
    SynchronousCommit,
    CommitDelay,
    CommitSiblings,
    FullPageWrites,
    CheckpointTimeout,
    MaxWalSize,
    MinWalSize,
    CheckpointCompletionTarget,
    BgwriterDelay,
    BgwriterLruMaxpages,
    BgwriterLruMultiplier,
    WalWriterDelay,
    WalWriterFlushAfter,
    BackendFlushAfter,
    BgwriterFlushAfter,
    CheckpointFlushAfter,
    Autovacuum,
    VacuumCostLimit,
    VacuumCostDelay,
    AutovacuumVacuumCostDelay,
    AutovacuumVacuumCostLimit,
    AutovacuumNaptime,
    MaintenanceWorkMem,
    VacuumCostPageHit,
    VacuumCostPageMiss,
    VacuumCostPageDirty,
    SynchronousStandbyNames,
    ArchiveMode,
    ArchiveTimeout,
    RecoveryPrefetch,
    MaintenanceIoConcurrency,
    WalDecodeBufferSize,
}

/// A setting's base unit: what a bare number counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Unit {
    /// No unit (a count).
    None,
    /// Memory, a bare number counting this many bytes (8kB blocks, MB).
    Bytes(u64),
    /// Time, a bare number counting this many microseconds (s, ms, us).
    Micros(u64),
}

#[derive(Debug, Clone, Copy)]
pub(super) enum Kind {
    /// A C `int` in PostgreSQL, with its range in base units.
    Int {
        unit: Unit,
        min: i64,
        max: i64,
    },
    Real {
        min: f64,
        max: f64,
    },
    Bool,
    SynchronousCommit,
    /// synchronous_standby_names: syncrep_gram.y's grammar.
    StandbyNames,
    /// archive_mode: off, on, always.
    ArchiveMode,
    /// recovery_prefetch: off, on, try.
    RecoveryPrefetch,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Spec {
    pub(super) id: Id,
    pub(super) name: &'static str,
    pub(super) kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Parsed {
    /// In the setting's base unit.
    Int(i64),
    Real(f64),
    Bool(bool),
    SyncCommit(SynchronousCommit),
    ArchiveMode(ArchiveMode),
    RecoveryPrefetch(RecoveryPrefetch),
    /// A string setting, as written (already checked).
    Text(String),
}

pub(super) const BLOCKS: Unit = Unit::Bytes(BLCKSZ_BYTES);
/// Upper bound of the *_flush_after settings, in 8kB blocks (2MB).
pub(super) const WRITEBACK_MAX_PENDING_FLUSHES: i64 = 256;
pub(super) const WAL_BLOCKS: Unit = Unit::Bytes(XLOG_BLCKSZ_BYTES);
pub(super) const MEGABYTES: Unit = Unit::Bytes(MB);
pub(super) const KILOBYTES: Unit = Unit::Bytes(KB);
pub(super) const SECONDS: Unit = Unit::Micros(US_PER_S);
pub(super) const MILLISECONDS: Unit = Unit::Micros(US_PER_MS);
/// pgiosim's own: PostgreSQL gives commit_delay no unit (it has no
/// microsecond unit for integers), but the bare number is microseconds, so
/// taking a time unit as well changes no value PostgreSQL accepts.
pub(super) const MICROSECONDS: Unit = Unit::Micros(1);

/// Two WAL segments in MB: the least max_wal_size/min_wal_size the server
/// starts with (ReadControlFile: "must be at least twice wal_segment_size").
pub(super) const MIN_WAL_SIZE_MB: i64 = (2 * WAL_SEGMENT_BYTES / MB) as i64;

/// PostgreSQL 15's definitions (guc.c `ConfigureNames*`), in [`Settings::NAMES`] order.
pub(super) const SPECS: &[Spec] = &[
    Spec {
        id: Id::SharedBuffers,
        name: "shared_buffers",
        kind: Kind::Int {
            unit: BLOCKS,
            min: 16,
            max: INT_MAX / 2,
        },
    },
    Spec {
        id: Id::WalBuffers,
        name: "wal_buffers",
        kind: Kind::Int {
            unit: WAL_BLOCKS,
            min: -1,
            max: INT_MAX / XLOG_BLCKSZ_BYTES as i64,
        },
    },
    Spec {
        id: Id::SynchronousCommit,
        name: "synchronous_commit",
        kind: Kind::SynchronousCommit,
    },
    Spec {
        id: Id::CommitDelay,
        name: "commit_delay",
        kind: Kind::Int {
            unit: MICROSECONDS,
            min: 0,
            max: 100_000,
        },
    },
    Spec {
        id: Id::CommitSiblings,
        name: "commit_siblings",
        kind: Kind::Int {
            unit: Unit::None,
            min: 0,
            max: 1000,
        },
    },
    Spec {
        id: Id::FullPageWrites,
        name: "full_page_writes",
        kind: Kind::Bool,
    },
    Spec {
        id: Id::CheckpointTimeout,
        name: "checkpoint_timeout",
        kind: Kind::Int {
            unit: SECONDS,
            min: 30,
            max: 86_400,
        },
    },
    Spec {
        id: Id::MaxWalSize,
        name: "max_wal_size",
        kind: Kind::Int {
            unit: MEGABYTES,
            min: MIN_WAL_SIZE_MB,
            max: INT_MAX,
        },
    },
    Spec {
        id: Id::MinWalSize,
        name: "min_wal_size",
        kind: Kind::Int {
            unit: MEGABYTES,
            min: MIN_WAL_SIZE_MB,
            max: INT_MAX,
        },
    },
    Spec {
        id: Id::CheckpointCompletionTarget,
        name: "checkpoint_completion_target",
        kind: Kind::Real { min: 0.0, max: 1.0 },
    },
    Spec {
        id: Id::BgwriterDelay,
        name: "bgwriter_delay",
        kind: Kind::Int {
            unit: MILLISECONDS,
            min: 10,
            max: 10_000,
        },
    },
    Spec {
        id: Id::BgwriterLruMaxpages,
        name: "bgwriter_lru_maxpages",
        kind: Kind::Int {
            unit: Unit::None,
            min: 0,
            max: INT_MAX / 2,
        },
    },
    Spec {
        id: Id::BgwriterLruMultiplier,
        name: "bgwriter_lru_multiplier",
        kind: Kind::Real {
            min: 0.0,
            max: 10.0,
        },
    },
    Spec {
        id: Id::WalWriterDelay,
        name: "wal_writer_delay",
        kind: Kind::Int {
            unit: MILLISECONDS,
            min: 1,
            max: 10_000,
        },
    },
    Spec {
        id: Id::WalWriterFlushAfter,
        name: "wal_writer_flush_after",
        kind: Kind::Int {
            unit: WAL_BLOCKS,
            min: 0,
            max: INT_MAX,
        },
    },
    Spec {
        id: Id::BackendFlushAfter,
        name: "backend_flush_after",
        kind: Kind::Int {
            unit: BLOCKS,
            min: 0,
            max: WRITEBACK_MAX_PENDING_FLUSHES,
        },
    },
    Spec {
        id: Id::BgwriterFlushAfter,
        name: "bgwriter_flush_after",
        kind: Kind::Int {
            unit: BLOCKS,
            min: 0,
            max: WRITEBACK_MAX_PENDING_FLUSHES,
        },
    },
    Spec {
        id: Id::CheckpointFlushAfter,
        name: "checkpoint_flush_after",
        kind: Kind::Int {
            unit: BLOCKS,
            min: 0,
            max: WRITEBACK_MAX_PENDING_FLUSHES,
        },
    },
    Spec {
        id: Id::Autovacuum,
        name: "autovacuum",
        kind: Kind::Bool,
    },
    Spec {
        id: Id::VacuumCostLimit,
        name: "vacuum_cost_limit",
        kind: Kind::Int {
            unit: Unit::None,
            min: 1,
            max: 10_000,
        },
    },
    // PostgreSQL's cost delays are reals in ms; pgiosim keeps whole ms.
    Spec {
        id: Id::VacuumCostDelay,
        name: "vacuum_cost_delay",
        kind: Kind::Int {
            unit: MILLISECONDS,
            min: 0,
            max: 100,
        },
    },
    Spec {
        id: Id::AutovacuumVacuumCostDelay,
        name: "autovacuum_vacuum_cost_delay",
        kind: Kind::Int {
            unit: MILLISECONDS,
            min: -1,
            max: 100,
        },
    },
    Spec {
        id: Id::AutovacuumVacuumCostLimit,
        name: "autovacuum_vacuum_cost_limit",
        kind: Kind::Int {
            unit: Unit::None,
            min: -1,
            max: 10_000,
        },
    },
    // maintenance_work_mem: 1MB..2147483647kB, base unit kB (guc_tables.c).
    Spec {
        id: Id::MaintenanceWorkMem,
        name: "maintenance_work_mem",
        kind: Kind::Int {
            unit: KILOBYTES,
            min: 1024,
            max: 2_147_483_647,
        },
    },
    Spec {
        id: Id::VacuumCostPageHit,
        name: "vacuum_cost_page_hit",
        kind: Kind::Int {
            unit: Unit::None,
            min: 0,
            max: 10_000,
        },
    },
    Spec {
        id: Id::VacuumCostPageMiss,
        name: "vacuum_cost_page_miss",
        kind: Kind::Int {
            unit: Unit::None,
            min: 0,
            max: 10_000,
        },
    },
    Spec {
        id: Id::VacuumCostPageDirty,
        name: "vacuum_cost_page_dirty",
        kind: Kind::Int {
            unit: Unit::None,
            min: 0,
            max: 10_000,
        },
    },
    Spec {
        id: Id::AutovacuumNaptime,
        name: "autovacuum_naptime",
        kind: Kind::Int {
            unit: SECONDS,
            min: 1,
            max: INT_MAX / 1000,
        },
    },
    Spec {
        id: Id::SynchronousStandbyNames,
        name: "synchronous_standby_names",
        kind: Kind::StandbyNames,
    },
    Spec {
        id: Id::ArchiveMode,
        name: "archive_mode",
        kind: Kind::ArchiveMode,
    },
    Spec {
        id: Id::ArchiveTimeout,
        name: "archive_timeout",
        kind: Kind::Int {
            unit: SECONDS,
            min: 0,
            max: INT_MAX / 2,
        },
    },
    Spec {
        id: Id::RecoveryPrefetch,
        name: "recovery_prefetch",
        kind: Kind::RecoveryPrefetch,
    },
    Spec {
        id: Id::MaintenanceIoConcurrency,
        name: "maintenance_io_concurrency",
        kind: Kind::Int {
            unit: Unit::None,
            min: 0,
            // MAX_IO_CONCURRENCY.
            max: 1000,
        },
    },
    Spec {
        id: Id::WalDecodeBufferSize,
        name: "wal_decode_buffer_size",
        kind: Kind::Int {
            unit: Unit::Bytes(1),
            min: 64 * KB as i64,
            // MaxAllocSize.
            max: 0x3fff_ffff,
        },
    },
];

/// The names in the table's order: [`Settings::NAMES`].
pub(super) const SPEC_NAMES: [&str; SPECS.len()] = {
    let mut names = [""; SPECS.len()];
    let mut i = 0;
    while i < SPECS.len() {
        names[i] = SPECS[i].name;
        i += 1;
    }
    names
};

pub(super) fn spec_by_name(name: &str) -> Option<&'static Spec> {
    SPECS
        .iter()
        .find(|spec| spec.name.eq_ignore_ascii_case(name))
}

impl Spec {
    pub(super) fn out_of_range(&self, text: &str) -> SettingError {
        let (min, max) = self.range_text();
        SettingError::OutOfRange {
            name: self.name.to_string(),
            value: text.to_string(),
            min,
            max,
        }
    }

    /// The range in the form `SHOW` prints values, with an approximation
    /// where the exact figure is hard to read.
    fn range_text(&self) -> (String, String) {
        match self.kind {
            Kind::Real { min, max } => (format_real(min), format_real(max)),
            Kind::Int { unit, min, max } => {
                let min_text = if self.id == Id::WalBuffers {
                    "-1 (automatic: 1/32 of shared_buffers), or 32kB".to_string()
                } else {
                    format_base(unit, min)
                };
                (min_text, with_approximation(unit, max))
            }
            Kind::Bool
            | Kind::SynchronousCommit
            | Kind::StandbyNames
            | Kind::ArchiveMode
            | Kind::RecoveryPrefetch => (String::new(), String::new()),
        }
    }

    pub(super) fn expected(&self) -> String {
        match self.kind {
            Kind::Bool => "a boolean: on, off, true, false, yes, no, 1 or 0".to_string(),
            Kind::SynchronousCommit => {
                "one of on, off, local, remote_write, remote_apply (or a boolean: true, false, yes, no, 1, 0)"
                    .to_string()
            }
            Kind::ArchiveMode => {
                "one of off, on, always (or a boolean: true, false, yes, no, 1, 0)".to_string()
            }
            Kind::RecoveryPrefetch => {
                "one of off, on, try (or a boolean: true, false, yes, no, 1, 0)".to_string()
            }
            Kind::StandbyNames => "a list of standby names as PostgreSQL takes it: \
                 'ANY 1 (s1, s2)', 'FIRST 2 (s1, s2, s3)', '2 (s1, s2)', 's1, s2' or '*'"
                .to_string(),
            Kind::Real { .. } => "a number such as 0.9".to_string(),
            Kind::Int { unit, .. } => {
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
                if self.id == Id::WalBuffers {
                    format!("{base}, or -1 for automatic (1/32 of shared_buffers)")
                } else {
                    base
                }
            }
        }
    }

    /// [`Spec::expected`], plus a hint when the unit was only wrongly cased.
    pub(super) fn expected_for(&self, text: &str) -> String {
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

pub(super) fn unit_description(unit: Unit) -> &'static str {
    match unit {
        Unit::Bytes(BLCKSZ_BYTES) => "8kB blocks",
        Unit::Bytes(MB) => "megabytes",
        Unit::Bytes(_) => "bytes",
        Unit::Micros(US_PER_S) => "seconds",
        Unit::Micros(US_PER_MS) => "milliseconds",
        Unit::Micros(_) => "microseconds",
        Unit::None => "",
    }
}

/// For a bare number given to a setting with a unit, what it meant, so that
/// "shared_buffers = 10" explains itself ("10 8kB blocks = 80kB").
pub(super) fn bare_number_meaning(name: &str, value: &str) -> Option<String> {
    let spec = spec_by_name(name)?;
    let Kind::Int { unit, .. } = spec.kind else {
        return None;
    };
    if unit == Unit::None || spec.id == Id::CommitDelay {
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
