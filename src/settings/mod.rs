//! The PostgreSQL settings pgiosim models, taken the way PostgreSQL takes them.
//!
//! Values are parsed with PostgreSQL 15's own rules (`guc.c`: `parse_int`,
//! `parse_real`, `parse_bool`, `convert_to_base_unit`) and shown the way its
//! `SHOW` shows them (`_ShowOption`, `convert_int_from_base_unit`), so that a
//! value copied from a real `postgresql.conf` or from `SHOW` means here what it
//! means to the server. Defaults, units and ranges are PostgreSQL 15's
//! (checked against `pg_settings` of PostgreSQL 15.18).
//!
//! Where pgiosim deliberately differs from PostgreSQL, the item says so; in
//! short: `commit_delay` also takes a time unit; `--set` values may be quoted;
//! an unquoted fractional value with a unit (`1.5GB`) is accepted in a
//! configuration file (PostgreSQL's lexer wants it quoted); unknown names in a
//! configuration file are reported rather than fatal unless they look like a
//! typo of a modelled name; an `include` cycle is refused by name (PostgreSQL
//! only stops it at the nesting depth limit).
//!
//! The parts, each reading only those after it: `config_file`
//! (postgresql.conf and its includes), `error` ([`SettingError`]), `names`
//! (every PostgreSQL setting name, "did you mean"), `table` (one row per
//! modelled setting: name, kind, unit, range, default, how it is stored and
//! shown, where it applies), `managed` (managed services' defaults, with
//! their sources, for `model --service`), `parse` (values as guc.c parses
//! them, and pgiosim's own size and duration flags) and `show` (values as
//! `SHOW` prints them), `unit` (page sizes and PostgreSQL's unit tables).
//! [`Settings`] itself, its defaults, setting and showing values through
//! the table, and the values derived from several, are here; the table's
//! rows name its fields.

use crate::core::archive::ArchiveMode;
use crate::core::recovery::RecoveryPrefetch;
use crate::core::replication::SynchronousCommit;

use names::suggest;
use parse::unquote;
use table::{Applies, Refused, Row, TABLE, row_by_name};
use unit::{BLCKSZ_BYTES, GB, KB, MB, WAL_SEGMENT_BYTES, XLOG_BLCKSZ_BYTES};

mod config_file;
mod error;
pub mod managed;
mod names;
mod parse;
mod show;
mod table;
mod unit;

pub use error::SettingError;
pub use parse::{
    DURATION_MAX_S, DurationError, parse_duration, parse_duration_ns, parse_memory_bytes,
};
pub use show::format_memory;

/// The modelled settings, in the core's units (bytes, nanoseconds).
#[derive(Debug, Clone, PartialEq)]
pub struct Settings {
    /// Default 128MB; base unit 8kB; min 16 blocks (128kB).
    pub shared_buffers_bytes: u64,
    /// `None` is PostgreSQL's -1: shared_buffers/32, clamped to 64kB..16MB
    /// (see [`Settings::wal_buffers_effective_bytes`]). Base unit 8kB; explicit
    /// values below 4 blocks are raised to 4 blocks (32kB), as
    /// `check_wal_buffers` does.
    pub wal_buffers_bytes: Option<u64>,
    /// on | off | local | remote_write | remote_apply, with PostgreSQL's
    /// meaning of each (the remote levels wait for the synchronous standbys
    /// declared with --standby). Also takes booleans.
    pub synchronous_commit: SynchronousCommit,
    /// As written (`ANY 1 (s1, s2)`, `FIRST 2 (...)`, `s1, s2`, `*`);
    /// checked with PostgreSQL's grammar when set. Default empty: no
    /// synchronous standbys.
    pub synchronous_standby_names: String,
    /// 0..100000 microseconds. PostgreSQL takes a bare number only; pgiosim
    /// also takes a time unit (`1ms`).
    pub commit_delay_us: u64,
    /// 0..1000, default 5.
    pub commit_siblings: u32,
    /// Default on.
    pub full_page_writes: bool,
    /// Default off. With it on, a client that connects over TCP
    /// (`--client-rtt`) talks TLS, as libpq's default `sslmode=prefer` does
    /// with such a server; a client on the socket never does.
    pub ssl: bool,
    /// 30s..1d, default 5min, base unit s.
    pub checkpoint_timeout_s: u64,
    /// Default 1GB, base unit MB, at least 2 WAL segments (32MB).
    pub max_wal_size_bytes: u64,
    /// Default 80MB, base unit MB, at least 2 WAL segments (32MB).
    pub min_wal_size_bytes: u64,
    /// 0..1, default 0.9.
    pub checkpoint_completion_target: f64,
    /// 10..10000, default 200ms, base unit ms.
    pub bgwriter_delay_ms: u64,
    /// 0..1073741823, default 100.
    pub bgwriter_lru_maxpages: u32,
    /// 0..10, default 2.0.
    pub bgwriter_lru_multiplier: f64,
    /// 1..10000, default 200ms, base unit ms.
    pub wal_writer_delay_ms: u64,
    /// Default 1MB, base unit 8kB, 0 and up.
    pub wal_writer_flush_after_bytes: u64,
    /// 0..2MB, base unit 8kB, default 0: a backend leaves the writeback of
    /// the pages it writes to the kernel.
    pub backend_flush_after_bytes: u64,
    /// 0..2MB, base unit 8kB, default 512kB (Linux): the bgwriter starts
    /// writeback itself (sync_file_range) after this much.
    pub bgwriter_flush_after_bytes: u64,
    /// 0..2MB, base unit 8kB, default 256kB (Linux): likewise the
    /// checkpointer.
    pub checkpoint_flush_after_bytes: u64,
    /// Default on: an autovacuum worker vacuums tables past their dead-tuple threshold.
    pub autovacuum: bool,
    /// 1..10000, default 200: cost credits between vacuum sleeps.
    pub vacuum_cost_limit: u32,
    /// 0..100 ms, default 0 (manual VACUUM does not sleep). Whole milliseconds here.
    pub vacuum_cost_delay_ms: u64,
    /// -1..100 ms, default 2ms; -1 uses vacuum_cost_delay.
    pub autovacuum_vacuum_cost_delay_ms: i64,
    /// -1..10000, default -1 (use vacuum_cost_limit).
    pub autovacuum_vacuum_cost_limit: i64,
    /// 1s..2147483s, default 1min: how often autovacuum looks for work.
    pub autovacuum_naptime_s: u64,
    /// 1MB..2TB, base unit kB, default 64MB: VACUUM's memory for dead
    /// tuple ids (6 bytes each in PostgreSQL 15); full, it vacuums the
    /// indexes and the heap before scanning on.
    pub maintenance_work_mem_bytes: u64,
    /// 0..10000, default 1: cost of a page found in shared buffers.
    pub vacuum_cost_page_hit: u32,
    /// 0..10000, default 2: cost of a page read in.
    pub vacuum_cost_page_miss: u32,
    /// 0..10000, default 20: cost of dirtying a clean page.
    pub vacuum_cost_page_dirty: u32,
    /// off | on | always (also booleans), default off: WAL archiving with
    /// the target of --archive.
    pub archive_mode: ArchiveMode,
    /// 0..1073741823 s, default 0 (never): force a segment switch after
    /// this long, if WAL was written.
    pub archive_timeout_s: u64,
    /// off | on | try, default try (on, on Linux): a standby's startup
    /// process prefetches the blocks of the WAL ahead (`pgiosim catchup`).
    pub recovery_prefetch: RecoveryPrefetch,
    /// 0..1000, default 10: prefetches in flight during recovery.
    pub maintenance_io_concurrency: u32,
    /// 64kB..1GB, default 512kB: how far ahead of the replay recovery
    /// decodes WAL to prefetch.
    pub wal_decode_buffer_size_bytes: u64,
}

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
            ssl: false,
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

impl Settings {
    /// All modelled names, in a stable order (the table's).
    pub const NAMES: &'static [&'static str] = &table::NAMES;

    /// Set one setting from its postgresql.conf text, e.g.
    /// `("shared_buffers", "16GB")`. Names are case-insensitive; the value may
    /// be single-quoted (`'16GB'`, with `''` for a quote inside).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        let name = name.trim();
        let Some(row) = row_by_name(name) else {
            return Err(SettingError::Unknown {
                name: name.to_string(),
                suggestion: suggest(name),
            });
        };
        let value = value.trim();
        let text = match unquote(value) {
            Some(text) => text,
            None => {
                return Err(SettingError::BadValue {
                    name: row.name.to_string(),
                    value: value.to_string(),
                    expected: format!(
                        "a closed quote: a quoted value is '...', with '' for a quote inside ({})",
                        row.expected()
                    ),
                });
            }
        };
        self.set_text(row, &text)
    }

    /// Set from an unquoted value.
    fn set_text(&mut self, row: &Row, text: &str) -> Result<(), SettingError> {
        row.set(self, text).map_err(|refused| match refused {
            Refused::BadValue(expected) => SettingError::BadValue {
                name: row.name.to_string(),
                value: text.to_string(),
                expected,
            },
            Refused::OutOfRange => {
                let (min, max) = row.range_text();
                SettingError::OutOfRange {
                    name: row.name.to_string(),
                    value: text.to_string(),
                    min,
                    max,
                }
            }
        })
    }

    /// Parse `name=value` as given to `--set` (or PostgreSQL's `-c`).
    pub fn set_assignment(&mut self, assignment: &str) -> Result<(), SettingError> {
        match assignment.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => self.set(name, value),
            _ => Err(SettingError::NotAssignment {
                text: assignment.to_string(),
            }),
        }
    }

    /// Effective wal_buffers in bytes, resolving -1 the way
    /// `XLOGChooseNumBuffers` does: shared_buffers/32, at least 8 pages (64kB),
    /// at most one WAL segment (16MB).
    pub fn wal_buffers_effective_bytes(&self) -> u64 {
        match self.wal_buffers_bytes {
            Some(bytes) => bytes,
            None => {
                let nbuffers = self.shared_buffers_bytes / BLCKSZ_BYTES;
                let pages = (nbuffers / 32).clamp(8, WAL_SEGMENT_BYTES / XLOG_BLCKSZ_BYTES);
                pages * XLOG_BLCKSZ_BYTES
            }
        }
    }

    /// CheckPointSegments: floor(max_wal_size in 16MB segments /
    /// (1 + checkpoint_completion_target)), at least 1
    /// (`CalculateCheckpointSegments` in xlog.c). 33 at the defaults.
    pub fn checkpoint_segments(&self) -> u64 {
        let segments = (self.max_wal_size_bytes / MB) / (WAL_SEGMENT_BYTES / MB);
        let target = segments as f64 / (1.0 + self.checkpoint_completion_target);
        // `as` truncates toward zero like C's (int) cast, and saturates.
        (target as u64).max(1)
    }

    /// Each setting as PostgreSQL's `SHOW` would print it ("128MB", "5min",
    /// "on", "0.9"), in [`Settings::NAMES`] order: those that apply to the
    /// server (archiving's only when archive_mode is on, ssl only when on;
    /// recovery's not).
    pub fn to_display(&self) -> Vec<(&'static str, String)> {
        self.display_where(|applies| match applies {
            Applies::Server => true,
            Applies::Archiving => self.archive_mode != ArchiveMode::Off,
            Applies::Tls => self.ssl,
            Applies::Recovery => false,
        })
    }

    /// Recovery's settings as SHOW prints them, for `catchup`'s result.
    pub fn recovery_display(&self) -> Vec<(&'static str, String)> {
        self.display_where(|applies| applies == Applies::Recovery)
    }

    fn display_where(&self, shown: impl Fn(Applies) -> bool) -> Vec<(&'static str, String)> {
        TABLE
            .iter()
            .filter(|row| shown(row.applies))
            .map(|row| (row.name, (row.show)(self)))
            .collect()
    }

    /// An object of name -> display string (see [`Settings::to_display`]).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.to_display()
                .into_iter()
                .map(|(name, shown)| (name.to_string(), serde_json::Value::String(shown)))
                .collect(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::replication::SynchronousCommit;
    use crate::settings::test_support::*;
    use crate::settings::{SettingError, Settings};

    // --- names ---------------------------------------------------------------

    #[test]
    fn names_are_case_insensitive() {
        assert_eq!(with("SHARED_BUFFERS", "1GB").shared_buffers_bytes, GB);
        assert_eq!(with("Shared_Buffers", "1GB").shared_buffers_bytes, GB);
        assert_eq!(with(" wal_writer_delay ", "1s").wal_writer_delay_ms, 1000);
    }

    // --- wal_buffers ----------------------------------------------------------

    #[test]
    fn wal_buffers_minus_one_is_automatic() {
        let auto = with("wal_buffers", "-1");
        assert_eq!(auto.wal_buffers_bytes, None);
        assert_eq!(auto.wal_buffers_effective_bytes(), 4 * MB);
        // -8kB is -1 page, as in PostgreSQL.
        assert_eq!(with("wal_buffers", "-8kB").wal_buffers_bytes, None);
    }

    #[test]
    fn wal_buffers_auto_follows_shared_buffers() {
        let auto = |shared: &str| {
            let settings = with("shared_buffers", shared);
            (
                settings.wal_buffers_effective_bytes(),
                shown(&settings, "wal_buffers"),
            )
        };
        assert_eq!(auto("128MB"), (4 * MB, "4MB".to_string()));
        assert_eq!(auto("16GB"), (16 * MB, "16MB".to_string()));
        assert_eq!(auto("1MB"), (64 * KB, "64kB".to_string()));
        assert_eq!(auto("128kB"), (64 * KB, "64kB".to_string()));
        assert_eq!(auto("512MB"), (16 * MB, "16MB".to_string()));
        assert_eq!(auto("100MB"), (3200 * KB, "3200kB".to_string()));
    }

    #[test]
    fn explicit_wal_buffers() {
        assert_eq!(with("wal_buffers", "16MB").wal_buffers_bytes, Some(16 * MB));
        assert_eq!(
            with("wal_buffers", "64MB").wal_buffers_effective_bytes(),
            64 * MB
        );
        // Below 4 pages is raised to 4 pages (check_wal_buffers), not refused.
        assert_eq!(with("wal_buffers", "0").wal_buffers_bytes, Some(32 * KB));
        assert_eq!(with("wal_buffers", "3").wal_buffers_bytes, Some(32 * KB));
        assert_eq!(with("wal_buffers", "8kB").wal_buffers_bytes, Some(32 * KB));
        assert_eq!(with("wal_buffers", "32kB").wal_buffers_bytes, Some(32 * KB));
        assert!(matches!(
            err("wal_buffers", "-2"),
            SettingError::OutOfRange { .. }
        ));
        assert!(matches!(
            err("wal_buffers", "2GB"),
            SettingError::OutOfRange { .. }
        ));
        assert_eq!(
            with("wal_buffers", "2097144kB").wal_buffers_bytes,
            Some(262_143 * 8192)
        );
    }

    // --- derived values -------------------------------------------------------

    #[test]
    fn checkpoint_segments_as_xlog_c_computes_it() {
        assert_eq!(Settings::default().checkpoint_segments(), 33);
        assert_eq!(with("max_wal_size", "32MB").checkpoint_segments(), 1);
        assert_eq!(with("max_wal_size", "16GB").checkpoint_segments(), 538);
        assert_eq!(
            with("checkpoint_completion_target", "0").checkpoint_segments(),
            64
        );
        assert_eq!(
            with("checkpoint_completion_target", "1").checkpoint_segments(),
            32
        );
        // Whole segments only: 47MB is 2 segments.
        assert_eq!(
            Settings {
                max_wal_size_bytes: 47 * MB,
                checkpoint_completion_target: 0.0,
                ..Settings::default()
            }
            .checkpoint_segments(),
            2
        );
    }

    #[test]
    fn set_assignment_splits_at_the_first_equals_sign() {
        let mut settings = Settings::default();
        settings.set_assignment("shared_buffers=16GB").unwrap();
        settings
            .set_assignment(" checkpoint_timeout = 15min ")
            .unwrap();
        settings.set_assignment("synchronous_commit='off'").unwrap();
        assert_eq!(settings.shared_buffers_bytes, 16 * GB);
        assert_eq!(settings.checkpoint_timeout_s, 900);
        assert_eq!(settings.synchronous_commit, SynchronousCommit::Off);
        for bad in ["", "=16GB", " = 1", "shared_buffers 16GB"] {
            assert_eq!(
                settings.set_assignment(bad),
                Err(SettingError::NotAssignment {
                    text: bad.to_string()
                }),
                "{bad:?}"
            );
        }
        assert!(matches!(
            settings.set_assignment("shared_buffers="),
            Err(SettingError::BadValue { .. })
        ));
        assert!(matches!(
            settings.set_assignment("shared_buffers=1=2"),
            Err(SettingError::BadValue { .. })
        ));
    }

    #[test]
    fn a_refused_value_changes_nothing() {
        let mut settings = with("shared_buffers", "1GB");
        let before = settings.clone();
        assert!(settings.set("shared_buffers", "1XB").is_err());
        assert!(settings.set("shared_buffers", "1kB").is_err());
        assert!(settings.set("shared_bufer", "2GB").is_err());
        assert_eq!(settings, before);
    }
}

#[cfg(test)]
mod test_support {
    //! Helpers the tests of every part share.
    use super::*;

    pub(super) fn with(name: &str, value: &str) -> Settings {
        let mut settings = Settings::default();
        settings
            .set(name, value)
            .unwrap_or_else(|err| panic!("{name} = {value}: {err}"));
        settings
    }

    pub(super) fn err(name: &str, value: &str) -> SettingError {
        Settings::default()
            .set(name, value)
            .expect_err(&format!("{name} = {value} should be refused"))
    }

    pub(super) fn shown(settings: &Settings, name: &str) -> String {
        settings
            .to_display()
            .into_iter()
            .chain(settings.recovery_display())
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("{name} not displayed"))
    }

    pub(super) fn write_conf(text: &str) -> tempfile::NamedTempFile {
        use std::io::Write as _;
        let mut file = tempfile::NamedTempFile::new().expect("temp file");
        file.write_all(text.as_bytes()).expect("write temp file");
        file
    }
}
