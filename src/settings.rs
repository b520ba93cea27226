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

use std::fmt;
use std::path::{Path, PathBuf};
use std::rc::Rc;

use crate::core::archive::ArchiveMode;
use crate::core::replication::{StandbyNames, SynchronousCommit};

/// PostgreSQL's data page size (`BLCKSZ`).
const BLCKSZ_BYTES: u64 = 8192;
/// PostgreSQL's WAL page size (`XLOG_BLCKSZ`).
const XLOG_BLCKSZ_BYTES: u64 = 8192;
/// PostgreSQL's default WAL segment size (`DEFAULT_XLOG_SEG_SIZE`).
const WAL_SEGMENT_BYTES: u64 = 16 * 1024 * 1024;
/// `INT_MAX`: every integer setting is a C `int` in PostgreSQL.
const INT_MAX: i64 = i32::MAX as i64;
const INT_MIN: i64 = i32::MIN as i64;

const KB: u64 = 1024;
const MB: u64 = 1024 * KB;
const GB: u64 = 1024 * MB;
const TB: u64 = 1024 * GB;

/// Memory units, largest first, as in PostgreSQL's `memory_unit_conversion_table`.
const MEMORY_UNITS: [(&str, u64); 5] = [("TB", TB), ("GB", GB), ("MB", MB), ("kB", KB), ("B", 1)];

const US_PER_MS: u64 = 1000;
const US_PER_S: u64 = 1_000_000;
/// Time units in microseconds, largest first, as in PostgreSQL's
/// `time_unit_conversion_table`.
const TIME_UNITS: [(&str, u64); 6] = [
    ("d", 86_400 * US_PER_S),
    ("h", 3_600 * US_PER_S),
    ("min", 60 * US_PER_S),
    ("s", US_PER_S),
    ("ms", US_PER_MS),
    ("us", 1),
];

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
    /// off | on | always (also booleans), default off: WAL archiving with
    /// the target of --archive.
    pub archive_mode: ArchiveMode,
    /// 0..1073741823 s, default 0 (never): force a segment switch after
    /// this long, if WAL was written.
    pub archive_timeout_s: u64,
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
            archive_mode: ArchiveMode::Off,
            archive_timeout_s: 0,
        }
    }
}

/// Why a setting was refused. `Display` is one sentence naming the setting,
/// the value and what is accepted.
#[derive(Debug, Clone, PartialEq)]
pub enum SettingError {
    /// Not a modelled setting. `suggestion` is the nearest modelled name when
    /// the name looks like a typo of it (and not of some other PostgreSQL
    /// setting).
    Unknown {
        name: String,
        suggestion: Option<String>,
    },
    /// The value does not parse for this setting; `expected` says what does.
    BadValue {
        name: String,
        value: String,
        expected: String,
    },
    /// The value parses but lies outside PostgreSQL's range, shown in human
    /// units (`min`/`max` are in the form `SHOW` would print).
    OutOfRange {
        name: String,
        value: String,
        min: String,
        max: String,
    },
    /// `--set` text without `=`.
    NotAssignment { text: String },
}

impl fmt::Display for SettingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SettingError::Unknown { name, suggestion } => {
                let lower = name.to_ascii_lowercase();
                if let Some(suggestion) = suggestion {
                    write!(f, "unknown setting \"{name}\"; did you mean {suggestion}?")
                } else if is_postgres_setting(&lower) {
                    write!(
                        f,
                        "{lower} is a PostgreSQL setting that pgiosim does not model, so it cannot be set"
                    )
                } else if lower.contains('.') {
                    write!(
                        f,
                        "\"{name}\" is an extension setting, which pgiosim does not model, so it cannot be set"
                    )
                } else {
                    write!(
                        f,
                        "unknown setting \"{name}\": it is not a PostgreSQL setting; pgiosim models {}",
                        Settings::NAMES.join(", ")
                    )
                }
            }
            SettingError::BadValue {
                name,
                value,
                expected,
            } => write!(
                f,
                "invalid value for {name}: \"{value}\"; expected {expected}"
            ),
            SettingError::OutOfRange {
                name,
                value,
                min,
                max,
            } => {
                write!(f, "{name} = {value} is out of range")?;
                if let Some(meaning) = bare_number_meaning(name, value) {
                    write!(f, " ({meaning})")?;
                }
                write!(f, "; PostgreSQL accepts {min} .. {max}")
            }
            SettingError::NotAssignment { text } => write!(
                f,
                "\"{text}\" is not a setting assignment; expected name=value, e.g. shared_buffers=16GB"
            ),
        }
    }
}

impl std::error::Error for SettingError {}

impl Settings {
    /// All modelled names, in a stable order.
    pub const NAMES: &'static [&'static str] = &[
        "shared_buffers",
        "wal_buffers",
        "synchronous_commit",
        "commit_delay",
        "commit_siblings",
        "full_page_writes",
        "checkpoint_timeout",
        "max_wal_size",
        "min_wal_size",
        "checkpoint_completion_target",
        "bgwriter_delay",
        "bgwriter_lru_maxpages",
        "bgwriter_lru_multiplier",
        "wal_writer_delay",
        "wal_writer_flush_after",
        "backend_flush_after",
        "bgwriter_flush_after",
        "checkpoint_flush_after",
        "autovacuum",
        "vacuum_cost_limit",
        "vacuum_cost_delay",
        "autovacuum_vacuum_cost_delay",
        "autovacuum_vacuum_cost_limit",
        "autovacuum_naptime",
        "synchronous_standby_names",
        "archive_mode",
        "archive_timeout",
    ];

    /// Set one setting from its postgresql.conf text, e.g.
    /// `("shared_buffers", "16GB")`. Names are case-insensitive; the value may
    /// be single-quoted (`'16GB'`, with `''` for a quote inside).
    pub fn set(&mut self, name: &str, value: &str) -> Result<(), SettingError> {
        let name = name.trim();
        let Some(spec) = spec_by_name(name) else {
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
                    name: spec.name.to_string(),
                    value: value.to_string(),
                    expected: format!(
                        "a closed quote: a quoted value is '...', with '' for a quote inside ({})",
                        spec.expected()
                    ),
                });
            }
        };
        self.set_text(spec, &text)
    }

    /// Set from an unquoted value.
    fn set_text(&mut self, spec: &Spec, text: &str) -> Result<(), SettingError> {
        let parsed = spec.parse(text)?;
        self.store(spec.id, parsed);
        Ok(())
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

    /// Read a postgresql.conf, following its `include`, `include_if_exists`
    /// and `include_dir` lines as PostgreSQL does (guc-file.l's
    /// ParseConfigFp and ParseConfigDirectory): a relative path is relative
    /// to the directory of the file that names it; `include_if_exists`
    /// skips a missing file; `include_dir` reads the directory's files whose
    /// names end in `.conf` and do not start with `.`, in name order; files
    /// nest at most 10 deep (CONF_FILE_MAX_DEPTH), and a file that includes
    /// itself, directly or not, is refused. Returns the names present that
    /// pgiosim does not model (once each, as first written); the caller
    /// prints one notice line listing them. Errors name the file and line.
    ///
    /// As in PostgreSQL, when a setting appears more than once (in any of the
    /// files) only its last line counts (earlier values are not even
    /// checked), and nothing is applied unless every file is good. Unlike
    /// PostgreSQL, a name that is not a PostgreSQL setting is reported with
    /// the unmodelled ones (configuration files of other PostgreSQL versions
    /// stay readable), unless it looks like a typo of a modelled name, which
    /// is an error.
    pub fn apply_config_file(&mut self, path: &Path) -> anyhow::Result<Vec<String>> {
        let mut entries = Vec::new();
        read_config_tree(path, 0, &mut Vec::new(), &mut entries)?;

        // First every name: report the unmodelled ones, refuse likely typos.
        let mut not_modelled: Vec<String> = Vec::new();
        for entry in &entries {
            let path = &entry.file;
            if spec_by_name(&entry.lower).is_some() {
                // applied below
            } else if let Some(suggestion) = (!entry.lower.contains('.'))
                .then(|| suggest(&entry.lower))
                .flatten()
            {
                anyhow::bail!(
                    "{}:{}: {}",
                    path.display(),
                    entry.line_no,
                    SettingError::Unknown {
                        name: entry.name.clone(),
                        suggestion: Some(suggestion),
                    }
                );
            } else if !not_modelled
                .iter()
                .any(|seen| seen.eq_ignore_ascii_case(&entry.name))
            {
                not_modelled.push(entry.name.clone());
            }
        }

        // Then the modelled settings, each from its last line only.
        let mut updated = self.clone();
        for (index, entry) in entries.iter().enumerate() {
            let Some(spec) = spec_by_name(&entry.lower) else {
                continue;
            };
            if entries[index + 1..]
                .iter()
                .any(|later| later.lower == entry.lower)
            {
                continue;
            }
            updated.set_text(spec, &entry.value).map_err(|err| {
                anyhow::anyhow!("{}:{}: {err}", entry.file.display(), entry.line_no)
            })?;
        }
        *self = updated;
        Ok(not_modelled)
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
    /// "on", "0.9"), in [`Settings::NAMES`] order. wal_buffers shows its
    /// effective size, as `SHOW wal_buffers` does on a running server;
    /// synchronous_commit shows its level (a boolean as on or off).
    pub fn to_display(&self) -> Vec<(&'static str, String)> {
        SPECS
            .iter()
            // Archiving's settings show only when it is on, so results of
            // runs without it read as before.
            .filter(|spec| {
                self.archive_mode != ArchiveMode::Off
                    || !matches!(spec.id, Id::ArchiveMode | Id::ArchiveTimeout)
            })
            .map(|spec| {
                let shown = match spec.id {
                    Id::SharedBuffers => format_bytes(self.shared_buffers_bytes),
                    Id::WalBuffers => format_bytes(self.wal_buffers_effective_bytes()),
                    Id::SynchronousCommit => self.synchronous_commit.name().to_string(),
                    Id::SynchronousStandbyNames => self.synchronous_standby_names.clone(),
                    Id::CommitDelay => self.commit_delay_us.to_string(),
                    Id::CommitSiblings => self.commit_siblings.to_string(),
                    Id::FullPageWrites => on_off(self.full_page_writes),
                    Id::CheckpointTimeout => {
                        format_micros(self.checkpoint_timeout_s.saturating_mul(US_PER_S))
                    }
                    Id::MaxWalSize => format_bytes(self.max_wal_size_bytes),
                    Id::MinWalSize => format_bytes(self.min_wal_size_bytes),
                    Id::CheckpointCompletionTarget => {
                        format_real(self.checkpoint_completion_target)
                    }
                    Id::BgwriterDelay => {
                        format_micros(self.bgwriter_delay_ms.saturating_mul(US_PER_MS))
                    }
                    Id::BgwriterLruMaxpages => self.bgwriter_lru_maxpages.to_string(),
                    Id::BgwriterLruMultiplier => format_real(self.bgwriter_lru_multiplier),
                    Id::WalWriterDelay => {
                        format_micros(self.wal_writer_delay_ms.saturating_mul(US_PER_MS))
                    }
                    Id::WalWriterFlushAfter => format_bytes(self.wal_writer_flush_after_bytes),
                    Id::BackendFlushAfter => format_bytes(self.backend_flush_after_bytes),
                    Id::BgwriterFlushAfter => format_bytes(self.bgwriter_flush_after_bytes),
                    Id::CheckpointFlushAfter => format_bytes(self.checkpoint_flush_after_bytes),
                    Id::Autovacuum => on_off(self.autovacuum),
                    Id::VacuumCostLimit => self.vacuum_cost_limit.to_string(),
                    Id::VacuumCostDelay => format_with_ms(self.vacuum_cost_delay_ms as i64),
                    Id::AutovacuumVacuumCostDelay => {
                        format_with_ms(self.autovacuum_vacuum_cost_delay_ms)
                    }
                    Id::AutovacuumVacuumCostLimit => self.autovacuum_vacuum_cost_limit.to_string(),
                    Id::AutovacuumNaptime => {
                        format_micros(self.autovacuum_naptime_s.saturating_mul(US_PER_S))
                    }
                    Id::ArchiveMode => self.archive_mode.name().to_string(),
                    Id::ArchiveTimeout => {
                        format_micros(self.archive_timeout_s.saturating_mul(US_PER_S))
                    }
                };
                (spec.name, shown)
            })
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

    fn store(&mut self, id: Id, value: Parsed) {
        // Every value reaching here has passed its setting's range check, so
        // the narrowing conversions below cannot fail; `unsigned` keeps that
        // explicit without a panic path.
        fn unsigned(v: i64) -> u64 {
            u64::try_from(v).unwrap_or(0)
        }
        fn small(v: i64) -> u32 {
            u32::try_from(v).unwrap_or(0)
        }
        match (id, value) {
            (Id::SharedBuffers, Parsed::Int(v)) => {
                self.shared_buffers_bytes = unsigned(v) * BLCKSZ_BYTES;
            }
            (Id::WalBuffers, Parsed::Int(v)) => {
                // check_wal_buffers: -1 is automatic; explicit values below
                // 4 pages are silently raised to 4.
                self.wal_buffers_bytes = if v == -1 {
                    None
                } else {
                    Some(unsigned(v.max(4)) * XLOG_BLCKSZ_BYTES)
                };
            }
            (Id::SynchronousCommit, Parsed::SyncCommit(l)) => self.synchronous_commit = l,
            (Id::SynchronousStandbyNames, Parsed::Text(t)) => self.synchronous_standby_names = t,
            (Id::CommitDelay, Parsed::Int(v)) => self.commit_delay_us = unsigned(v),
            (Id::CommitSiblings, Parsed::Int(v)) => self.commit_siblings = small(v),
            (Id::FullPageWrites, Parsed::Bool(b)) => self.full_page_writes = b,
            (Id::CheckpointTimeout, Parsed::Int(v)) => self.checkpoint_timeout_s = unsigned(v),
            (Id::MaxWalSize, Parsed::Int(v)) => self.max_wal_size_bytes = unsigned(v) * MB,
            (Id::MinWalSize, Parsed::Int(v)) => self.min_wal_size_bytes = unsigned(v) * MB,
            (Id::CheckpointCompletionTarget, Parsed::Real(r)) => {
                self.checkpoint_completion_target = r;
            }
            (Id::BgwriterDelay, Parsed::Int(v)) => self.bgwriter_delay_ms = unsigned(v),
            (Id::BgwriterLruMaxpages, Parsed::Int(v)) => self.bgwriter_lru_maxpages = small(v),
            (Id::BgwriterLruMultiplier, Parsed::Real(r)) => self.bgwriter_lru_multiplier = r,
            (Id::WalWriterDelay, Parsed::Int(v)) => self.wal_writer_delay_ms = unsigned(v),
            (Id::WalWriterFlushAfter, Parsed::Int(v)) => {
                self.wal_writer_flush_after_bytes = unsigned(v) * XLOG_BLCKSZ_BYTES;
            }
            (Id::BackendFlushAfter, Parsed::Int(v)) => {
                self.backend_flush_after_bytes = unsigned(v) * BLCKSZ_BYTES;
            }
            (Id::BgwriterFlushAfter, Parsed::Int(v)) => {
                self.bgwriter_flush_after_bytes = unsigned(v) * BLCKSZ_BYTES;
            }
            (Id::CheckpointFlushAfter, Parsed::Int(v)) => {
                self.checkpoint_flush_after_bytes = unsigned(v) * BLCKSZ_BYTES;
            }
            (Id::Autovacuum, Parsed::Bool(b)) => self.autovacuum = b,
            (Id::VacuumCostLimit, Parsed::Int(v)) => self.vacuum_cost_limit = small(v),
            (Id::VacuumCostDelay, Parsed::Int(v)) => self.vacuum_cost_delay_ms = unsigned(v),
            (Id::AutovacuumVacuumCostDelay, Parsed::Int(v)) => {
                self.autovacuum_vacuum_cost_delay_ms = v;
            }
            (Id::AutovacuumVacuumCostLimit, Parsed::Int(v)) => {
                self.autovacuum_vacuum_cost_limit = v;
            }
            (Id::AutovacuumNaptime, Parsed::Int(v)) => self.autovacuum_naptime_s = unsigned(v),
            (Id::ArchiveMode, Parsed::ArchiveMode(m)) => self.archive_mode = m,
            (Id::ArchiveTimeout, Parsed::Int(v)) => self.archive_timeout_s = unsigned(v),
            (id, value) => unreachable!("{id:?} cannot hold {value:?}"),
        }
    }
}

// ---------------------------------------------------------------------------
// The settings table.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Id {
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
    SynchronousStandbyNames,
    ArchiveMode,
    ArchiveTimeout,
}

/// A setting's base unit: what a bare number counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Unit {
    /// No unit (a count).
    None,
    /// Memory, a bare number counting this many bytes (8kB blocks, MB).
    Bytes(u64),
    /// Time, a bare number counting this many microseconds (s, ms, us).
    Micros(u64),
}

#[derive(Debug, Clone, Copy)]
enum Kind {
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
}

#[derive(Debug, Clone, Copy)]
struct Spec {
    id: Id,
    name: &'static str,
    kind: Kind,
}

#[derive(Debug, Clone, PartialEq)]
enum Parsed {
    /// In the setting's base unit.
    Int(i64),
    Real(f64),
    Bool(bool),
    SyncCommit(SynchronousCommit),
    ArchiveMode(ArchiveMode),
    /// A string setting, as written (already checked).
    Text(String),
}

const BLOCKS: Unit = Unit::Bytes(BLCKSZ_BYTES);
/// Upper bound of the *_flush_after settings, in 8kB blocks (2MB).
const WRITEBACK_MAX_PENDING_FLUSHES: i64 = 256;
const WAL_BLOCKS: Unit = Unit::Bytes(XLOG_BLCKSZ_BYTES);
const MEGABYTES: Unit = Unit::Bytes(MB);
const SECONDS: Unit = Unit::Micros(US_PER_S);
const MILLISECONDS: Unit = Unit::Micros(US_PER_MS);
/// pgiosim's own: PostgreSQL gives commit_delay no unit (it has no
/// microsecond unit for integers), but the bare number is microseconds, so
/// taking a time unit as well changes no value PostgreSQL accepts.
const MICROSECONDS: Unit = Unit::Micros(1);

/// Two WAL segments in MB: the least max_wal_size/min_wal_size the server
/// starts with (ReadControlFile: "must be at least twice wal_segment_size").
const MIN_WAL_SIZE_MB: i64 = (2 * WAL_SEGMENT_BYTES / MB) as i64;

/// PostgreSQL 15's definitions (guc.c `ConfigureNames*`), in [`Settings::NAMES`] order.
const SPECS: [Spec; 27] = [
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
];

/// A millisecond setting that may be -1, as SHOW prints it ("2ms", "-1", "0").
fn format_with_ms(v: i64) -> String {
    if v <= 0 {
        v.to_string()
    } else {
        format!("{v}ms")
    }
}

fn spec_by_name(name: &str) -> Option<&'static Spec> {
    SPECS
        .iter()
        .find(|spec| spec.name.eq_ignore_ascii_case(name))
}

impl Spec {
    fn parse(&self, text: &str) -> Result<Parsed, SettingError> {
        let bad = || SettingError::BadValue {
            name: self.name.to_string(),
            value: text.to_string(),
            expected: self.expected_for(text),
        };
        match self.kind {
            Kind::Bool => parse_bool(text).map(Parsed::Bool).ok_or_else(bad),
            Kind::SynchronousCommit => parse_synchronous_commit(text)
                .map(Parsed::SyncCommit)
                .ok_or_else(bad),
            Kind::ArchiveMode => parse_archive_mode(text)
                .map(Parsed::ArchiveMode)
                .ok_or_else(bad),
            Kind::StandbyNames => match StandbyNames::parse(text) {
                Ok(_) => Ok(Parsed::Text(text.to_string())),
                Err(why) => Err(SettingError::BadValue {
                    name: self.name.to_string(),
                    value: text.to_string(),
                    expected: format!("{} ({why})", self.expected()),
                }),
            },
            Kind::Real { min, max } => {
                let value = parse_real(text).ok_or_else(bad)?;
                if value < min || value > max {
                    return Err(self.out_of_range(text));
                }
                Ok(Parsed::Real(value))
            }
            Kind::Int { unit, min, max } => {
                let value = match parse_int(text, unit) {
                    Ok(value) => value,
                    Err(IntError::Invalid) => return Err(bad()),
                    Err(IntError::Overflow) => return Err(self.out_of_range(text)),
                };
                if value < min || value > max {
                    return Err(self.out_of_range(text));
                }
                Ok(Parsed::Int(value))
            }
        }
    }

    fn out_of_range(&self, text: &str) -> SettingError {
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
            Kind::Bool | Kind::SynchronousCommit | Kind::StandbyNames | Kind::ArchiveMode => {
                (String::new(), String::new())
            }
        }
    }

    fn expected(&self) -> String {
        match self.kind {
            Kind::Bool => "a boolean: on, off, true, false, yes, no, 1 or 0".to_string(),
            Kind::SynchronousCommit => {
                "one of on, off, local, remote_write, remote_apply (or a boolean: true, false, yes, no, 1, 0)"
                    .to_string()
            }
            Kind::ArchiveMode => {
                "one of off, on, always (or a boolean: true, false, yes, no, 1, 0)".to_string()
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

fn unit_description(unit: Unit) -> &'static str {
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
fn bare_number_meaning(name: &str, value: &str) -> Option<String> {
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

// ---------------------------------------------------------------------------
// Parsing values, after PostgreSQL 15's guc.c.

enum IntError {
    /// Not a number, or a unit this setting does not take.
    Invalid,
    /// Beyond a C int (PostgreSQL: "Value exceeds integer range").
    Overflow,
}

/// `parse_int`: an integer (decimal, 0x hex or 0 octal, as `strtol` base 0),
/// or a decimal fraction, then an optional unit, rounded half to even to the
/// base unit. Returns the value in base units.
fn parse_int(text: &str, unit: Unit) -> Result<i64, IntError> {
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
fn scan_c_number(text: &str) -> Option<(f64, &str)> {
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
fn scan_c_double(text: &str) -> Option<(f64, usize)> {
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
fn convert_to_base_unit(value: f64, unit_text: &str, unit: Unit) -> Option<f64> {
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
fn split_number_and_unit(text: &str) -> Option<(&str, &str)> {
    let text = text.trim();
    let (_, rest) = scan_c_number(text)?;
    let number = text[..text.len() - rest.len()].trim_end();
    let unit = rest.trim();
    (!unit.is_empty() && unit.chars().all(|c| c.is_ascii_alphabetic())).then_some((number, unit))
}

/// `parse_real`: a decimal number, no unit (none of the modelled reals has one).
fn parse_real(text: &str) -> Option<f64> {
    let text = text.trim_start_matches(is_c_space);
    let (value, len) = scan_c_double(text)?;
    if value.is_nan() || !text[len..].trim_start_matches(is_c_space).is_empty() {
        return None;
    }
    Some(value)
}

/// `parse_bool`: true/false/yes/no/on/off (case-insensitive, any unambiguous
/// prefix; "o" alone is ambiguous) and 1/0.
fn parse_bool(text: &str) -> Option<bool> {
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

/// `synchronous_commit_options`: exact names, case-insensitive (enums take no
/// prefixes); the booleans mean on and off.
fn parse_synchronous_commit(text: &str) -> Option<SynchronousCommit> {
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

/// `archive_mode_options` (xlog.c): exact names, case-insensitive; the
/// booleans mean on and off.
fn parse_archive_mode(text: &str) -> Option<ArchiveMode> {
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

/// C's `isspace` in the "C" locale.
fn is_c_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// Strip one level of single quotes, as a postgresql.conf string: `''` and
/// `\'` are a quote, and `\b \f \n \r \t \ooo` escapes are decoded. An
/// unquoted value is returned as it is; `None` for an unclosed quote.
fn unquote(value: &str) -> Option<String> {
    if !value.starts_with('\'') {
        return Some(value.to_string());
    }
    let (text, len) = scan_quoted(value)?;
    (len == value.len()).then_some(text)
}

/// Scan a quoted string at the start of `s` (which starts with `'`):
/// returns the decoded text and the length consumed, or `None` if unclosed.
fn scan_quoted(s: &str) -> Option<(String, usize)> {
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
fn quote(value: &str) -> String {
    format!("'{}'", value.replace('\\', "\\\\").replace('\'', "''"))
}

// ---------------------------------------------------------------------------
// Showing values, after PostgreSQL 15's `_ShowOption`.

fn on_off(value: bool) -> String {
    if value { "on" } else { "off" }.to_string()
}

/// The largest unit that divides the value exactly; 0 shows as "0".
fn format_in_units(value: u64, table: &[(&str, u64)]) -> String {
    if value == 0 {
        return "0".to_string();
    }
    let (name, size) = table
        .iter()
        .find(|(_, size)| value.is_multiple_of(*size))
        .unwrap_or(&table[table.len() - 1]);
    format!("{}{name}", value / size)
}

fn format_bytes(bytes: u64) -> String {
    format_in_units(bytes, &MEMORY_UNITS)
}

fn format_micros(micros: u64) -> String {
    format_in_units(micros, &TIME_UNITS)
}

/// A value in a setting's base units as `SHOW` prints it (negative values
/// and commit_delay's microseconds as bare numbers).
fn format_base(unit: Unit, value: i64) -> String {
    let Ok(magnitude) = u64::try_from(value) else {
        return value.to_string();
    };
    match unit {
        Unit::None => value.to_string(),
        Unit::Bytes(size) => format_bytes(magnitude * size),
        Unit::Micros(size) => format_micros(magnitude * size),
    }
}

/// [`format_base`], with "(about 8TB)" when the exact form is a long number.
fn with_approximation(unit: Unit, value: i64) -> String {
    let exact = format_base(unit, value);
    let Unit::Bytes(size) = unit else {
        return exact;
    };
    let Ok(magnitude) = u64::try_from(value) else {
        return exact;
    };
    let digits = exact.chars().take_while(char::is_ascii_digit).count();
    if digits <= 4 {
        return exact;
    }
    let bytes = (magnitude * size) as f64;
    let (name, unit_bytes) = MEMORY_UNITS
        .iter()
        .find(|(_, unit_bytes)| bytes >= *unit_bytes as f64)
        .unwrap_or(&MEMORY_UNITS[MEMORY_UNITS.len() - 1]);
    format!(
        "{exact} (about {}{name})",
        (bytes / *unit_bytes as f64).round()
    )
}

/// C's `%g`, which `SHOW` uses for real settings: 6 significant digits,
/// trailing zeros dropped, exponent form below 1e-4 and from 1e6.
fn format_real(value: f64) -> String {
    if value == 0.0 {
        return "0".to_string();
    }
    if value.is_nan() {
        return "nan".to_string();
    }
    if value.is_infinite() {
        return if value > 0.0 { "inf" } else { "-inf" }.to_string();
    }
    let scientific = format!("{value:.5e}");
    let (mantissa, exponent) = scientific
        .split_once('e')
        .unwrap_or((scientific.as_str(), "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let trim = |s: &str| -> String {
        if s.contains('.') {
            s.trim_end_matches('0').trim_end_matches('.').to_string()
        } else {
            s.to_string()
        }
    };
    if !(-4..6).contains(&exponent) {
        let sign = if exponent < 0 { '-' } else { '+' };
        format!("{}e{sign}{:02}", trim(mantissa), exponent.abs())
    } else {
        let decimals = usize::try_from(5 - exponent).unwrap_or(0);
        trim(&format!("{value:.decimals$}"))
    }
}

// ---------------------------------------------------------------------------
// postgresql.conf.

const INCLUDE_DIRECTIVES: [&str; 3] = ["include", "include_dir", "include_if_exists"];

/// How deep configuration files may nest (PostgreSQL's CONF_FILE_MAX_DEPTH).
const CONF_FILE_MAX_DEPTH: usize = 10;

struct ConfigEntry {
    name: String,
    lower: String,
    /// Unquoted.
    value: String,
    /// The file the line is in (for errors).
    file: Rc<Path>,
    line_no: usize,
}

/// Appends the settings of `path` and of the files it includes, in the order
/// PostgreSQL reads them. `stack` holds the files being read, outermost
/// first, to refuse a cycle.
fn read_config_tree(
    path: &Path,
    depth: usize,
    stack: &mut Vec<PathBuf>,
    entries: &mut Vec<ConfigEntry>,
) -> anyhow::Result<()> {
    if depth > CONF_FILE_MAX_DEPTH {
        anyhow::bail!(
            "{}: configuration files nest more than {CONF_FILE_MAX_DEPTH} deep (as PostgreSQL, \
             pgiosim stops there)",
            path.display()
        );
    }
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    if let Some(first) = stack.iter().position(|p| *p == canonical) {
        let chain: Vec<String> = stack[first..]
            .iter()
            .chain(std::iter::once(&canonical))
            .map(|p| p.display().to_string())
            .collect();
        anyhow::bail!("include cycle: {}", chain.join(" includes "));
    }
    let bytes = crate::input::read_bytes(
        path,
        "configuration file",
        crate::input::SMALL_FILE_MAX_BYTES,
    )?;
    let text = String::from_utf8_lossy(&bytes);
    let file: Rc<Path> = Rc::from(path);
    let base = path.parent().unwrap_or(Path::new("."));
    stack.push(canonical);
    for (index, line) in text.lines().enumerate() {
        let line_no = index + 1;
        let at = || format!("{}:{line_no}", path.display());
        let (name, value) = match parse_config_line(line) {
            Ok(None) => continue,
            Ok(Some(pair)) => pair,
            Err(message) => anyhow::bail!("{}: {message}", at()),
        };
        let lower = name.to_ascii_lowercase();
        if !INCLUDE_DIRECTIVES.contains(&lower.as_str()) {
            entries.push(ConfigEntry {
                lower,
                name,
                value,
                file: Rc::clone(&file),
                line_no,
            });
            continue;
        }
        if value.is_empty() {
            anyhow::bail!("{}: {lower} needs a file name", at());
        }
        let target = base.join(&value);
        match lower.as_str() {
            "include_if_exists" if !target.exists() => {}
            "include" | "include_if_exists" => {
                if !target.exists() {
                    anyhow::bail!("{}: include {}: no such file", at(), quote(&value));
                }
                read_config_tree(&target, depth + 1, stack, entries)
                    .map_err(|e| e.context(format!("included from {}", at())))?;
            }
            _ => {
                let listing = std::fs::read_dir(&target).map_err(|e| {
                    anyhow::anyhow!(
                        "{}: include_dir {}: cannot read directory {}: {e}",
                        at(),
                        quote(&value),
                        target.display()
                    )
                })?;
                let mut files = Vec::new();
                for item in listing {
                    let item = item.map_err(|e| {
                        anyhow::anyhow!("{}: cannot list {}: {e}", at(), target.display())
                    })?;
                    let name = item.file_name();
                    let name = name.to_string_lossy();
                    // As ParseConfigDirectory: .conf files only, no hidden
                    // ones, no subdirectories.
                    if name.starts_with('.') || !name.ends_with(".conf") {
                        continue;
                    }
                    if std::fs::metadata(item.path()).is_ok_and(|m| m.is_dir()) {
                        continue;
                    }
                    files.push(item.path());
                }
                // strcmp order: bytes, as PostgreSQL sorts them.
                files.sort_by(|a, b| a.as_os_str().cmp(b.as_os_str()));
                for f in files {
                    read_config_tree(&f, depth + 1, stack, entries)
                        .map_err(|e| e.context(format!("included from {}", at())))?;
                }
            }
        }
    }
    stack.pop();
    Ok(())
}

/// One line of a postgresql.conf (guc-file.l): `name [=] value [# comment]`.
/// Returns `None` for a blank or comment line, or an error message.
fn parse_config_line(line: &str) -> Result<Option<(String, String)>, String> {
    let rest = line.trim_start_matches(is_c_space);
    if rest.is_empty() || rest.starts_with('#') {
        return Ok(None);
    }
    let name_len = config_name_len(rest);
    if name_len == 0 {
        return Err(syntax_error(rest));
    }
    let name = &rest[..name_len];
    let mut rest = rest[name_len..].trim_start_matches(is_c_space);
    if let Some(after) = rest.strip_prefix('=') {
        rest = after.trim_start_matches(is_c_space);
    }
    let (value, after) = if rest.starts_with('\'') {
        let (text, len) = scan_quoted(rest)
            .ok_or_else(|| format!("unterminated quoted string in the value of {name}"))?;
        (text, &rest[len..])
    } else {
        let len = rest
            .find(|c: char| is_c_space(c) || c == '#' || c == '\'')
            .unwrap_or(rest.len());
        if len == 0 {
            return Err(format!("missing value for {name}"));
        }
        (rest[..len].to_string(), &rest[len..])
    };
    let after = after.trim_start_matches(is_c_space);
    if !after.is_empty() && !after.starts_with('#') {
        return Err(format!(
            "{} (a value with spaces must be quoted, e.g. {name} = '...')",
            syntax_error(after)
        ));
    }
    Ok(Some((name.to_string(), value)))
}

/// Length of a setting name at the start of `s`: an identifier, optionally
/// `.identifier` (an extension's setting). Non-ASCII counts as a letter.
fn config_name_len(s: &str) -> usize {
    fn ident_len(s: &str) -> usize {
        let mut chars = s.char_indices();
        match chars.next() {
            Some((_, c)) if c.is_ascii_alphabetic() || c == '_' || !c.is_ascii() => {}
            _ => return 0,
        }
        chars
            .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_' || !c.is_ascii()))
            .map_or(s.len(), |(i, _)| i)
    }
    let first = ident_len(s);
    if first > 0 && s[first..].starts_with('.') {
        let second = ident_len(&s[first + 1..]);
        if second > 0 {
            return first + 1 + second;
        }
    }
    first
}

fn syntax_error(near: &str) -> String {
    let token: String = near
        .chars()
        .take_while(|c| !is_c_space(*c))
        .take(40)
        .collect();
    format!("syntax error near \"{token}\"")
}

// ---------------------------------------------------------------------------
// Names.

/// Suggest the modelled name nearest `name`, unless it is not near any, or
/// some PostgreSQL setting pgiosim does not model is as near (then pointing
/// at a modelled one could mislead: "checkpoint" is as near
/// checkpoint_warning as checkpoint_timeout).
fn suggest(name: &str) -> Option<String> {
    let lower = name.to_ascii_lowercase();
    if is_postgres_setting(&lower) {
        return None;
    }
    let score = |candidate: &str| strsim::jaro_winkler(&lower, candidate);
    let (best, best_score) = Settings::NAMES
        .iter()
        .map(|candidate| (*candidate, score(candidate)))
        .max_by(|a, b| a.1.total_cmp(&b.1))?;
    if best_score < SUGGESTION_THRESHOLD {
        return None;
    }
    let other_is_nearer = POSTGRES_SETTING_NAMES
        .iter()
        .filter(|candidate| !Settings::NAMES.contains(candidate))
        .any(|candidate| score(candidate) >= best_score);
    (!other_is_nearer).then(|| best.to_string())
}

/// Jaro-Winkler similarity from which a name counts as a likely typo.
const SUGGESTION_THRESHOLD: f64 = 0.88;

fn is_postgres_setting(lower: &str) -> bool {
    POSTGRES_SETTING_NAMES.binary_search(&lower).is_ok()
}

/// Every setting name of PostgreSQL 15 (`pg_settings` of 15.18 plus the
/// hidden ones), of later releases up to the development branch
/// (`guc_parameters.dat`), and a few removed ones still seen in old files;
/// lower case, sorted.
const POSTGRES_SETTING_NAMES: &[&str] = &[
    "add_missing_from",
    "allow_alter_system",
    "allow_in_place_tablespaces",
    "allow_system_table_mods",
    "application_name",
    "archive_cleanup_command",
    "archive_command",
    "archive_library",
    "archive_mode",
    "archive_timeout",
    "array_nulls",
    "authentication_timeout",
    "autovacuum",
    "autovacuum_analyze_scale_factor",
    "autovacuum_analyze_score_weight",
    "autovacuum_analyze_threshold",
    "autovacuum_freeze_max_age",
    "autovacuum_freeze_score_weight",
    "autovacuum_max_parallel_workers",
    "autovacuum_max_workers",
    "autovacuum_multixact_freeze_max_age",
    "autovacuum_multixact_freeze_score_weight",
    "autovacuum_naptime",
    "autovacuum_vacuum_cost_delay",
    "autovacuum_vacuum_cost_limit",
    "autovacuum_vacuum_insert_scale_factor",
    "autovacuum_vacuum_insert_score_weight",
    "autovacuum_vacuum_insert_threshold",
    "autovacuum_vacuum_max_threshold",
    "autovacuum_vacuum_scale_factor",
    "autovacuum_vacuum_score_weight",
    "autovacuum_vacuum_threshold",
    "autovacuum_work_mem",
    "autovacuum_worker_slots",
    "backend_flush_after",
    "backslash_quote",
    "backtrace_functions",
    "bgwriter_all_maxpages",
    "bgwriter_all_percent",
    "bgwriter_delay",
    "bgwriter_flush_after",
    "bgwriter_lru_maxpages",
    "bgwriter_lru_multiplier",
    "bgwriter_lru_percent",
    "block_size",
    "bonjour",
    "bonjour_name",
    "bytea_output",
    "check_function_bodies",
    "checkpoint_completion_target",
    "checkpoint_flush_after",
    "checkpoint_segments",
    "checkpoint_timeout",
    "checkpoint_warning",
    "client_connection_check_interval",
    "client_encoding",
    "client_min_messages",
    "cluster_name",
    "commit_delay",
    "commit_siblings",
    "commit_timestamp_buffers",
    "compute_query_id",
    "config_file",
    "constraint_exclusion",
    "cpu_index_tuple_cost",
    "cpu_operator_cost",
    "cpu_tuple_cost",
    "createrole_self_grant",
    "cursor_tuple_fraction",
    "custom_variable_classes",
    "data_checksums",
    "data_directory",
    "data_directory_mode",
    "data_sync_retry",
    "datestyle",
    "db_user_namespace",
    "deadlock_timeout",
    "debug_assertions",
    "debug_copy_parse_plan_trees",
    "debug_deadlocks",
    "debug_discard_caches",
    "debug_exec_backend",
    "debug_io_direct",
    "debug_logical_replication_streaming",
    "debug_parallel_query",
    "debug_pretty_print",
    "debug_print_parse",
    "debug_print_plan",
    "debug_print_raw_parse",
    "debug_print_rewritten",
    "debug_raw_expression_coverage_test",
    "debug_write_read_parse_plan_trees",
    "default_statistics_target",
    "default_table_access_method",
    "default_tablespace",
    "default_text_search_config",
    "default_toast_compression",
    "default_transaction_deferrable",
    "default_transaction_isolation",
    "default_transaction_read_only",
    "default_with_oids",
    "dynamic_library_path",
    "dynamic_shared_memory_type",
    "effective_cache_size",
    "effective_io_concurrency",
    "effective_wal_level",
    "enable_async_append",
    "enable_bitmapscan",
    "enable_distinct_reordering",
    "enable_eager_aggregate",
    "enable_gathermerge",
    "enable_group_by_reordering",
    "enable_groupagg",
    "enable_hashagg",
    "enable_hashjoin",
    "enable_incremental_sort",
    "enable_indexonlyscan",
    "enable_indexscan",
    "enable_material",
    "enable_memoize",
    "enable_mergejoin",
    "enable_nestloop",
    "enable_parallel_append",
    "enable_parallel_hash",
    "enable_partition_pruning",
    "enable_partitionwise_aggregate",
    "enable_partitionwise_join",
    "enable_presorted_aggregate",
    "enable_self_join_elimination",
    "enable_seqscan",
    "enable_sort",
    "enable_tidscan",
    "escape_string_warning",
    "event_source",
    "event_triggers",
    "exit_on_error",
    "extension_control_path",
    "extension_destdir",
    "external_pid_file",
    "extra_float_digits",
    "file_copy_method",
    "file_extend_method",
    "force_parallel_mode",
    "from_collapse_limit",
    "fsync",
    "full_page_writes",
    "geqo",
    "geqo_effort",
    "geqo_generations",
    "geqo_pool_size",
    "geqo_seed",
    "geqo_selection_bias",
    "geqo_threshold",
    "gin_fuzzy_search_limit",
    "gin_pending_list_limit",
    "gss_accept_delegation",
    "hash_mem_multiplier",
    "hba_file",
    "hosts_file",
    "hot_standby",
    "hot_standby_feedback",
    "huge_page_size",
    "huge_pages",
    "huge_pages_status",
    "icu_validation_level",
    "ident_file",
    "idle_in_transaction_session_timeout",
    "idle_replication_slot_timeout",
    "idle_session_timeout",
    "ignore_checksum_failure",
    "ignore_invalid_pages",
    "ignore_system_indexes",
    "in_hot_standby",
    "integer_datetimes",
    "intervalstyle",
    "io_combine_limit",
    "io_max_combine_limit",
    "io_max_concurrency",
    "io_max_workers",
    "io_method",
    "io_min_workers",
    "io_worker_idle_timeout",
    "io_worker_launch_interval",
    "io_workers",
    "is_superuser",
    "jit",
    "jit_above_cost",
    "jit_debugging_support",
    "jit_dump_bitcode",
    "jit_expressions",
    "jit_inline_above_cost",
    "jit_optimize_above_cost",
    "jit_profiling_support",
    "jit_provider",
    "jit_tuple_deforming",
    "join_collapse_limit",
    "krb_caseins_users",
    "krb_server_keyfile",
    "krb_srvname",
    "lc_collate",
    "lc_ctype",
    "lc_messages",
    "lc_monetary",
    "lc_numeric",
    "lc_time",
    "listen_addresses",
    "lo_compat_privileges",
    "local_preload_libraries",
    "lock_timeout",
    "log_autoanalyze_min_duration",
    "log_autovacuum_min_duration",
    "log_btree_build_stats",
    "log_checkpoints",
    "log_connections",
    "log_destination",
    "log_directory",
    "log_disconnections",
    "log_duration",
    "log_error_verbosity",
    "log_executor_stats",
    "log_file_mode",
    "log_filename",
    "log_hostname",
    "log_line_prefix",
    "log_lock_failures",
    "log_lock_waits",
    "log_min_duration_sample",
    "log_min_duration_statement",
    "log_min_error_statement",
    "log_min_messages",
    "log_parameter_max_length",
    "log_parameter_max_length_on_error",
    "log_parser_stats",
    "log_planner_stats",
    "log_recovery_conflict_waits",
    "log_replication_commands",
    "log_rotation_age",
    "log_rotation_size",
    "log_startup_progress_interval",
    "log_statement",
    "log_statement_max_length",
    "log_statement_sample_rate",
    "log_statement_stats",
    "log_temp_files",
    "log_timezone",
    "log_transaction_sample_rate",
    "log_truncate_on_rotation",
    "logging_collector",
    "logical_decoding_work_mem",
    "maintenance_io_concurrency",
    "maintenance_work_mem",
    "max_active_replication_origins",
    "max_connections",
    "max_files_per_process",
    "max_fsm_pages",
    "max_fsm_relations",
    "max_function_args",
    "max_identifier_length",
    "max_index_keys",
    "max_locks_per_transaction",
    "max_logical_replication_workers",
    "max_notify_queue_pages",
    "max_parallel_apply_workers_per_subscription",
    "max_parallel_maintenance_workers",
    "max_parallel_workers",
    "max_parallel_workers_per_gather",
    "max_pred_locks_per_page",
    "max_pred_locks_per_relation",
    "max_pred_locks_per_transaction",
    "max_prepared_transactions",
    "max_repack_replication_slots",
    "max_replication_slots",
    "max_slot_wal_keep_size",
    "max_stack_depth",
    "max_standby_archive_delay",
    "max_standby_streaming_delay",
    "max_sync_workers_per_subscription",
    "max_wal_senders",
    "max_wal_size",
    "max_worker_processes",
    "md5_password_warnings",
    "min_dynamic_shared_memory",
    "min_eager_agg_group_size",
    "min_parallel_index_scan_size",
    "min_parallel_relation_size",
    "min_parallel_table_scan_size",
    "min_wal_size",
    "multixact_member_buffers",
    "multixact_offset_buffers",
    "notify_buffers",
    "num_os_semaphores",
    "oauth_validator_libraries",
    "old_snapshot_threshold",
    "operator_precedence_warning",
    "optimize_bounded_sort",
    "parallel_leader_participation",
    "parallel_setup_cost",
    "parallel_tuple_cost",
    "password_encryption",
    "password_expiration_warning_threshold",
    "plan_cache_mode",
    "port",
    "post_auth_delay",
    "pre_auth_delay",
    "primary_conninfo",
    "primary_slot_name",
    "promote_trigger_file",
    "quote_all_identifiers",
    "random_page_cost",
    "recovery_end_command",
    "recovery_init_sync_method",
    "recovery_min_apply_delay",
    "recovery_prefetch",
    "recovery_target",
    "recovery_target_action",
    "recovery_target_inclusive",
    "recovery_target_lsn",
    "recovery_target_name",
    "recovery_target_time",
    "recovery_target_timeline",
    "recovery_target_xid",
    "recursive_worktable_factor",
    "redirect_stderr",
    "regex_flavor",
    "remove_temp_files_after_crash",
    "replacement_sort_tuples",
    "reserved_connections",
    "restart_after_crash",
    "restore_command",
    "restrict_nonsystem_relation_kind",
    "role",
    "row_security",
    "scram_iterations",
    "search_path",
    "seed",
    "segment_size",
    "send_abort_for_crash",
    "send_abort_for_kill",
    "seq_page_cost",
    "serializable_buffers",
    "server_encoding",
    "server_version",
    "server_version_num",
    "session_authorization",
    "session_preload_libraries",
    "session_replication_role",
    "shared_buffers",
    "shared_memory_size",
    "shared_memory_size_in_huge_pages",
    "shared_memory_type",
    "shared_preload_libraries",
    "silent_mode",
    "sql_inheritance",
    "ssl",
    "ssl_ca_file",
    "ssl_cert_file",
    "ssl_ciphers",
    "ssl_crl_dir",
    "ssl_crl_file",
    "ssl_dh_params_file",
    "ssl_ecdh_curve",
    "ssl_groups",
    "ssl_key_file",
    "ssl_library",
    "ssl_max_protocol_version",
    "ssl_min_protocol_version",
    "ssl_passphrase_command",
    "ssl_passphrase_command_supports_reload",
    "ssl_prefer_server_ciphers",
    "ssl_renegotiation_limit",
    "ssl_sni",
    "ssl_tls13_ciphers",
    "standard_conforming_strings",
    "standby_mode",
    "statement_timeout",
    "stats_fetch_consistency",
    "stats_temp_directory",
    "subtransaction_buffers",
    "summarize_wal",
    "superuser_reserved_connections",
    "sync_replication_slots",
    "synchronize_seqscans",
    "synchronized_standby_slots",
    "synchronous_commit",
    "synchronous_standby_names",
    "syslog_facility",
    "syslog_ident",
    "syslog_sequence_numbers",
    "syslog_split_messages",
    "tcp_keepalives_count",
    "tcp_keepalives_idle",
    "tcp_keepalives_interval",
    "tcp_user_timeout",
    "temp_buffers",
    "temp_file_limit",
    "temp_tablespaces",
    "timezone",
    "timezone_abbreviations",
    "timing_clock_source",
    "trace_connection_negotiation",
    "trace_lock_oidmin",
    "trace_lock_table",
    "trace_locks",
    "trace_lwlocks",
    "trace_notify",
    "trace_recovery_messages",
    "trace_sort",
    "trace_syncscan",
    "trace_userlocks",
    "track_activities",
    "track_activity_query_size",
    "track_commit_timestamp",
    "track_cost_delay_timing",
    "track_counts",
    "track_functions",
    "track_io_timing",
    "track_wal_io_timing",
    "transaction_buffers",
    "transaction_deferrable",
    "transaction_isolation",
    "transaction_read_only",
    "transaction_timeout",
    "transform_null_equals",
    "trigger_file",
    "unix_socket_directories",
    "unix_socket_directory",
    "unix_socket_group",
    "unix_socket_permissions",
    "update_process_title",
    "vacuum_buffer_usage_limit",
    "vacuum_cleanup_index_scale_factor",
    "vacuum_cost_delay",
    "vacuum_cost_limit",
    "vacuum_cost_page_dirty",
    "vacuum_cost_page_hit",
    "vacuum_cost_page_miss",
    "vacuum_defer_cleanup_age",
    "vacuum_failsafe_age",
    "vacuum_freeze_min_age",
    "vacuum_freeze_table_age",
    "vacuum_max_eager_freeze_failure_rate",
    "vacuum_multixact_failsafe_age",
    "vacuum_multixact_freeze_min_age",
    "vacuum_multixact_freeze_table_age",
    "vacuum_truncate",
    "wal_block_size",
    "wal_buffers",
    "wal_compression",
    "wal_consistency_checking",
    "wal_debug",
    "wal_decode_buffer_size",
    "wal_init_zero",
    "wal_keep_segments",
    "wal_keep_size",
    "wal_level",
    "wal_log_hints",
    "wal_receiver_create_temp_slot",
    "wal_receiver_status_interval",
    "wal_receiver_timeout",
    "wal_recycle",
    "wal_retrieve_retry_interval",
    "wal_segment_size",
    "wal_sender_shutdown_timeout",
    "wal_sender_timeout",
    "wal_skip_threshold",
    "wal_summary_keep_time",
    "wal_sync_method",
    "wal_writer_delay",
    "wal_writer_flush_after",
    "work_mem",
    "xmlbinary",
    "xmloption",
    "zero_damaged_pages",
];

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

/// A byte count the way PostgreSQL shows memory ("128MB", "16GB").
pub fn format_memory(bytes: u64) -> String {
    format_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn with(name: &str, value: &str) -> Settings {
        let mut settings = Settings::default();
        settings
            .set(name, value)
            .unwrap_or_else(|err| panic!("{name} = {value}: {err}"));
        settings
    }

    fn err(name: &str, value: &str) -> SettingError {
        Settings::default()
            .set(name, value)
            .expect_err(&format!("{name} = {value} should be refused"))
    }

    fn shown(settings: &Settings, name: &str) -> String {
        settings
            .to_display()
            .into_iter()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v)
            .unwrap_or_else(|| panic!("{name} not displayed"))
    }

    fn write_conf(text: &str) -> tempfile::NamedTempFile {
        use std::io::Write as _;
        let mut file = tempfile::NamedTempFile::new().expect("temp file");
        file.write_all(text.as_bytes()).expect("write temp file");
        file
    }

    // --- defaults and the table --------------------------------------------

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
    fn defaults_display_as_postgresql_15_shows_them() {
        // `SHOW` on a fresh PostgreSQL 15.18 cluster.
        let expected = [
            ("shared_buffers", "128MB"),
            ("wal_buffers", "4MB"),
            ("synchronous_commit", "on"),
            ("commit_delay", "0"),
            ("commit_siblings", "5"),
            ("full_page_writes", "on"),
            ("checkpoint_timeout", "5min"),
            ("max_wal_size", "1GB"),
            ("min_wal_size", "80MB"),
            ("checkpoint_completion_target", "0.9"),
            ("bgwriter_delay", "200ms"),
            ("bgwriter_lru_maxpages", "100"),
            ("bgwriter_lru_multiplier", "2"),
            ("wal_writer_delay", "200ms"),
            ("wal_writer_flush_after", "1MB"),
            ("backend_flush_after", "0"),
            ("bgwriter_flush_after", "512kB"),
            ("checkpoint_flush_after", "256kB"),
            ("autovacuum", "on"),
            ("vacuum_cost_limit", "200"),
            ("vacuum_cost_delay", "0"),
            ("autovacuum_vacuum_cost_delay", "2ms"),
            ("autovacuum_vacuum_cost_limit", "-1"),
            ("autovacuum_naptime", "1min"),
            ("synchronous_standby_names", ""),
        ];
        let display = Settings::default().to_display();
        let display: Vec<(&str, &str)> = display.iter().map(|(n, v)| (*n, v.as_str())).collect();
        assert_eq!(display, expected);
    }

    #[test]
    fn names_match_the_table_and_are_postgresql_settings() {
        let table: Vec<&str> = SPECS.iter().map(|spec| spec.name).collect();
        assert_eq!(table, Settings::NAMES);
        for name in Settings::NAMES {
            assert!(is_postgres_setting(name), "{name}");
        }
        let mut sorted = POSTGRES_SETTING_NAMES.to_vec();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted, POSTGRES_SETTING_NAMES, "must be sorted and unique");
        assert!(
            POSTGRES_SETTING_NAMES
                .iter()
                .all(|name| *name == name.to_ascii_lowercase())
        );
    }

    #[test]
    fn every_default_round_trips_through_its_display() {
        let defaults = Settings::default();
        let mut again = Settings {
            wal_buffers_bytes: Some(defaults.wal_buffers_effective_bytes()),
            ..Settings::default()
        };
        for (name, value) in defaults.to_display() {
            again.set(name, &value).unwrap();
        }
        assert_eq!(
            again,
            Settings {
                wal_buffers_bytes: Some(4 * MB),
                ..defaults
            }
        );
    }

    // --- names ---------------------------------------------------------------

    #[test]
    fn names_are_case_insensitive() {
        assert_eq!(with("SHARED_BUFFERS", "1GB").shared_buffers_bytes, GB);
        assert_eq!(with("Shared_Buffers", "1GB").shared_buffers_bytes, GB);
        assert_eq!(with(" wal_writer_delay ", "1s").wal_writer_delay_ms, 1000);
    }

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
    fn reals_display_like_c_percent_g() {
        assert_eq!(format_real(0.9), "0.9");
        assert_eq!(format_real(2.0), "2");
        assert_eq!(format_real(10.0), "10");
        assert_eq!(format_real(0.0), "0");
        assert_eq!(format_real(0.123456789), "0.123457");
        assert_eq!(format_real(0.00001), "1e-05");
        assert_eq!(format_real(0.0001), "0.0001");
        assert_eq!(format_real(1234567.0), "1.23457e+06");
        assert_eq!(format_real(123456.0), "123456");
        assert_eq!(
            shown(
                &with("checkpoint_completion_target", "0.75"),
                "checkpoint_completion_target"
            ),
            "0.75"
        );
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
    fn archive_mode_and_timeout_take_postgresqls_values_and_show_only_when_on() {
        assert_eq!(
            with("archive_mode", "always").archive_mode,
            ArchiveMode::Always
        );
        assert_eq!(with("archive_mode", "ON").archive_mode, ArchiveMode::On);
        assert_eq!(with("archive_mode", "yes").archive_mode, ArchiveMode::On);
        assert_eq!(with("archive_mode", "0").archive_mode, ArchiveMode::Off);
        assert!(
            err("archive_mode", "sometimes")
                .to_string()
                .contains("always")
        );
        assert_eq!(with("archive_timeout", "60").archive_timeout_s, 60);
        assert_eq!(with("archive_timeout", "5min").archive_timeout_s, 300);
        assert!(matches!(
            err("archive_timeout", "-1"),
            SettingError::OutOfRange { .. }
        ));
        let off = Settings::default().to_display();
        assert!(!off.iter().any(|(n, _)| n.starts_with("archive_")));
        let mut on = with("archive_mode", "on");
        on.set("archive_timeout", "1min").unwrap();
        assert_eq!(shown(&on, "archive_mode"), "on");
        assert_eq!(shown(&on, "archive_timeout"), "1min");
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

    // --- display --------------------------------------------------------------

    #[test]
    fn display_uses_the_largest_exact_unit() {
        assert_eq!(
            shown(&with("shared_buffers", "16GB"), "shared_buffers"),
            "16GB"
        );
        assert_eq!(
            shown(&with("shared_buffers", "1.5GB"), "shared_buffers"),
            "1536MB"
        );
        assert_eq!(
            shown(&with("shared_buffers", "16385"), "shared_buffers"),
            "131080kB"
        );
        assert_eq!(
            shown(&with("shared_buffers", "1TB"), "shared_buffers"),
            "1TB"
        );
        assert_eq!(
            shown(&with("checkpoint_timeout", "3600"), "checkpoint_timeout"),
            "1h"
        );
        assert_eq!(
            shown(&with("checkpoint_timeout", "90"), "checkpoint_timeout"),
            "90s"
        );
        assert_eq!(
            shown(&with("checkpoint_timeout", "1d"), "checkpoint_timeout"),
            "1d"
        );
        assert_eq!(
            shown(&with("bgwriter_delay", "1500"), "bgwriter_delay"),
            "1500ms"
        );
        assert_eq!(
            shown(&with("bgwriter_delay", "2000"), "bgwriter_delay"),
            "2s"
        );
        assert_eq!(
            shown(
                &with("wal_writer_flush_after", "0"),
                "wal_writer_flush_after"
            ),
            "0"
        );
        assert_eq!(
            shown(&with("full_page_writes", "no"), "full_page_writes"),
            "off"
        );
    }

    #[test]
    fn display_matches_a_running_postgresql_15() {
        // `SHOW` on PostgreSQL 15.18 started with these `-c` settings.
        let mut settings = Settings::default();
        for assignment in [
            "shared_buffers=100MB",
            "checkpoint_timeout=3600",
            "bgwriter_delay=1500",
            "wal_writer_flush_after=0",
            "checkpoint_completion_target=0.75",
            "bgwriter_lru_multiplier=1e-5",
            "commit_delay=1000",
            "max_wal_size=1.5GB",
            "min_wal_size=33MB",
            "wal_writer_delay=2000",
        ] {
            settings.set_assignment(assignment).unwrap();
        }
        for (name, show) in [
            ("shared_buffers", "100MB"),
            ("wal_buffers", "3200kB"),
            ("checkpoint_timeout", "1h"),
            ("bgwriter_delay", "1500ms"),
            ("wal_writer_flush_after", "0"),
            ("checkpoint_completion_target", "0.75"),
            ("bgwriter_lru_multiplier", "1e-05"),
            ("commit_delay", "1000"),
            ("max_wal_size", "1536MB"),
            ("min_wal_size", "33MB"),
            ("wal_writer_delay", "2s"),
        ] {
            assert_eq!(shown(&settings, name), show, "{name}");
        }
    }

    #[test]
    fn json_is_an_object_of_display_strings() {
        let json = with("shared_buffers", "16GB").to_json();
        let object = json.as_object().expect("an object");
        // archive_mode and archive_timeout show only with archiving on.
        assert_eq!(object.len(), Settings::NAMES.len() - 2);
        assert_eq!(object["shared_buffers"], "16GB");
        assert_eq!(object["wal_buffers"], "16MB");
        assert_eq!(object["checkpoint_timeout"], "5min");
        assert_eq!(object["synchronous_commit"], "on");
        assert_eq!(object["checkpoint_completion_target"], "0.9");
    }

    // --- errors -----------------------------------------------------------------

    #[test]
    fn unknown_names_suggest_the_nearest_modelled_one() {
        for (typo, meant) in [
            ("shared_buffer", "shared_buffers"),
            ("Shared_Bufers", "shared_buffers"),
            ("sharedbuffers", "shared_buffers"),
            ("wal_buffer", "wal_buffers"),
            ("checkpoint_timout", "checkpoint_timeout"),
            ("max_wal_sizes", "max_wal_size"),
            ("walwriter_delay", "wal_writer_delay"),
            ("bgwriter_lru_max_pages", "bgwriter_lru_maxpages"),
            ("synchronous_comit", "synchronous_commit"),
            ("commit_sibling", "commit_siblings"),
            ("checkpoint_completion", "checkpoint_completion_target"),
            ("autovaccum", "autovacuum"),
            ("full_page_write", "full_page_writes"),
        ] {
            assert_eq!(
                err(typo, "1"),
                SettingError::Unknown {
                    name: typo.to_string(),
                    suggestion: Some(meant.to_string()),
                },
                "{typo}"
            );
        }
        assert_eq!(
            err("shared_buffer", "16GB").to_string(),
            "unknown setting \"shared_buffer\"; did you mean shared_buffers?"
        );
    }

    #[test]
    fn no_suggestion_for_names_far_from_any_modelled_one() {
        for name in ["foo", "scale", "clients", "buffers", "checkpoint", "x"] {
            let e = err(name, "1");
            assert_eq!(
                e,
                SettingError::Unknown {
                    name: name.to_string(),
                    suggestion: None
                },
                "{name}"
            );
        }
        let message = err("foo", "1").to_string();
        assert!(message.starts_with("unknown setting \"foo\""), "{message}");
        assert!(message.contains("not a PostgreSQL setting"), "{message}");
        assert!(message.contains("shared_buffers, wal_buffers"), "{message}");
    }

    #[test]
    fn a_postgresql_setting_that_is_not_modelled_is_named_as_such() {
        for name in [
            "work_mem",
            "max_connections",
            "bgwriter_lru_percent",
            "fsync",
            "WORK_MEM",
        ] {
            let e = err(name, "64MB");
            assert_eq!(
                e,
                SettingError::Unknown {
                    name: name.to_string(),
                    suggestion: None
                }
            );
        }
        assert_eq!(
            err("work_mem", "64MB").to_string(),
            "work_mem is a PostgreSQL setting that pgiosim does not model, so it cannot be set"
        );
        // A typo of an unmodelled setting must not point at a modelled one.
        assert_eq!(
            err("bgwriter_lru_percen", "1"),
            SettingError::Unknown {
                name: "bgwriter_lru_percen".to_string(),
                suggestion: None
            }
        );
        assert!(
            err("pg_stat_statements.max", "1")
                .to_string()
                .contains("extension setting")
        );
    }

    #[test]
    fn error_messages() {
        assert_eq!(
            err("synchronous_commit", "maybe").to_string(),
            "invalid value for synchronous_commit: \"maybe\"; expected one of on, off, local, \
             remote_write, remote_apply (or a boolean: true, false, yes, no, 1, 0)"
        );
        assert_eq!(
            err("full_page_writes", "sure").to_string(),
            "invalid value for full_page_writes: \"sure\"; expected a boolean: on, off, true, \
             false, yes, no, 1 or 0"
        );
        assert_eq!(
            err("shared_buffers", "lots").to_string(),
            "invalid value for shared_buffers: \"lots\"; expected a size such as 16GB: a number \
             with one of the units B, kB, MB, GB, TB (case-sensitive); a bare number counts 8kB blocks"
        );
        assert_eq!(
            err("checkpoint_timeout", "soon").to_string(),
            "invalid value for checkpoint_timeout: \"soon\"; expected a duration such as 200ms: a \
             number with one of the units us, ms, s, min, h, d (case-sensitive); a bare number \
             counts seconds"
        );
        assert_eq!(
            err("shared_buffers", "64kB"),
            SettingError::OutOfRange {
                name: "shared_buffers".to_string(),
                value: "64kB".to_string(),
                min: "128kB".to_string(),
                max: "8589934584kB (about 8TB)".to_string(),
            }
        );
        assert_eq!(
            err("shared_buffers", "64kB").to_string(),
            "shared_buffers = 64kB is out of range; PostgreSQL accepts 128kB .. 8589934584kB (about 8TB)"
        );
        assert_eq!(
            err("shared_buffers", "10").to_string(),
            "shared_buffers = 10 is out of range (a bare number counts 8kB blocks, so this is \
             80kB); PostgreSQL accepts 128kB .. 8589934584kB (about 8TB)"
        );
        assert_eq!(
            err("checkpoint_timeout", "10").to_string(),
            "checkpoint_timeout = 10 is out of range (a bare number counts seconds, so this is \
             10s); PostgreSQL accepts 30s .. 1d"
        );
        assert_eq!(
            err("commit_delay", "1s").to_string(),
            "commit_delay = 1s is out of range; PostgreSQL accepts 0 .. 100ms"
        );
        assert_eq!(
            err("max_wal_size", "16MB").to_string(),
            "max_wal_size = 16MB is out of range; PostgreSQL accepts 32MB .. 2147483647MB (about 2048TB)"
        );
        assert_eq!(
            err("checkpoint_completion_target", "2").to_string(),
            "checkpoint_completion_target = 2 is out of range; PostgreSQL accepts 0 .. 1"
        );
        assert_eq!(
            err("wal_buffers", "-2").to_string(),
            "wal_buffers = -2 is out of range; PostgreSQL accepts -1 (automatic: 1/32 of \
             shared_buffers), or 32kB .. 2097144kB (about 2GB)"
        );
        assert_eq!(
            Settings::default().set_assignment("shared_buffers"),
            Err(SettingError::NotAssignment {
                text: "shared_buffers".to_string()
            })
        );
        assert_eq!(
            SettingError::NotAssignment {
                text: "shared_buffers".to_string()
            }
            .to_string(),
            "\"shared_buffers\" is not a setting assignment; expected name=value, e.g. shared_buffers=16GB"
        );
        // Errors are std errors, so they travel in anyhow.
        let boxed: anyhow::Error = err("shared_buffers", "x").into();
        assert!(
            boxed
                .to_string()
                .starts_with("invalid value for shared_buffers")
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

    // --- postgresql.conf ------------------------------------------------------

    #[test]
    fn config_file_with_comments_quotes_and_overrides() {
        let file = write_conf(
            "# PostgreSQL configuration file\n\
             \n\
             shared_buffers = 4GB\t\t# min 128kB\n\
             \t  # an indented comment\n\
             wal_buffers 16MB\n\
             checkpoint_timeout='15min'   # quoted\n\
             max_wal_size = '8GB'\n\
             synchronous_commit = off\n\
             commit_delay = 10\n\
             work_mem = 64MB\n\
             listen_addresses = '*'          # what IP address(es) to listen on\n\
             log_line_prefix = '%m [%p] # not a comment '' still quoted'\n\
             Max_Connections = 200\n\
             shared_preload_libraries = 'pg_stat_statements'\n\
             pg_stat_statements.max = 10000\n\
             shared_buffers = 8GB            # later lines win\n\
             #shared_buffers = 16GB\n\
             COMMIT_DELAY = 20\n\
             work_mem = 128MB\n",
        );
        let mut settings = Settings::default();
        let not_modelled = settings.apply_config_file(file.path()).unwrap();
        assert_eq!(settings.shared_buffers_bytes, 8 * GB);
        assert_eq!(settings.wal_buffers_bytes, Some(16 * MB));
        assert_eq!(settings.checkpoint_timeout_s, 900);
        assert_eq!(settings.max_wal_size_bytes, 8 * GB);
        assert_eq!(settings.synchronous_commit, SynchronousCommit::Off);
        assert_eq!(settings.commit_delay_us, 20);
        assert_eq!(
            not_modelled,
            [
                "work_mem",
                "listen_addresses",
                "log_line_prefix",
                "Max_Connections",
                "shared_preload_libraries",
                "pg_stat_statements.max",
            ]
        );
    }

    #[test]
    fn config_file_keeps_what_it_does_not_set() {
        let file = write_conf("checkpoint_completion_target = 0.5\n");
        let mut settings = with("shared_buffers", "2GB");
        assert!(settings.apply_config_file(file.path()).unwrap().is_empty());
        assert_eq!(settings.shared_buffers_bytes, 2 * GB);
        assert_eq!(settings.checkpoint_completion_target, 0.5);
    }

    #[test]
    fn config_file_includes_are_followed_as_postgresql_does() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        std::fs::create_dir_all(d.join("conf.d")).unwrap();
        std::fs::create_dir_all(d.join("sub")).unwrap();
        std::fs::write(
            d.join("postgresql.conf"),
            "shared_buffers = 1GB\n\
             include 'sub/a.conf'\n\
             include_if_exists 'missing.conf'\n\
             INCLUDE_DIR = 'conf.d'\n\
             fsync = off\n",
        )
        .unwrap();
        // Relative to the including file's directory (sub/), not the cwd.
        std::fs::write(
            d.join("sub/a.conf"),
            "include 'b.conf'\ncommit_delay = 10\n",
        )
        .unwrap();
        std::fs::write(d.join("sub/b.conf"), "max_wal_size = 2GB\n").unwrap();
        // Name order; hidden files and other suffixes skipped.
        std::fs::write(d.join("conf.d/20-late.conf"), "shared_buffers = 4GB\n").unwrap();
        std::fs::write(
            d.join("conf.d/10-early.conf"),
            "shared_buffers = 2GB\nwork_mem = 4MB\n",
        )
        .unwrap();
        std::fs::write(d.join("conf.d/.hidden.conf"), "shared_buffers = 8GB\n").unwrap();
        std::fs::write(d.join("conf.d/99-other.txt"), "shared_buffers = 16GB\n").unwrap();
        let mut settings = Settings::default();
        let reported = settings
            .apply_config_file(&d.join("postgresql.conf"))
            .unwrap();
        assert_eq!(settings.shared_buffers_bytes, 4 << 30);
        assert_eq!(settings.commit_delay_us, 10);
        assert_eq!(settings.max_wal_size_bytes, 2 << 30);
        assert_eq!(reported, ["work_mem", "fsync"]);
    }

    #[test]
    fn config_file_include_errors_cycles_and_depth() {
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        let conf = d.join("main.conf");
        let apply = |path: &Path| {
            let mut settings = Settings::default();
            settings
                .apply_config_file(path)
                .map(|_| settings)
                .map_err(|e| format!("{e:#}"))
        };

        std::fs::write(&conf, "include 'nope.conf'\n").unwrap();
        let e = apply(&conf).unwrap_err();
        assert!(
            e.contains("main.conf:1") && e.contains("no such file"),
            "{e}"
        );

        std::fs::write(&conf, "include_dir 'nodir'\n").unwrap();
        let e = apply(&conf).unwrap_err();
        assert!(e.contains("cannot read directory"), "{e}");

        // A bad value in an included file names that file and its line.
        std::fs::write(d.join("bad.conf"), "\nshared_buffers = lots\n").unwrap();
        std::fs::write(&conf, "include 'bad.conf'\n").unwrap();
        let e = apply(&conf).unwrap_err();
        assert!(e.contains("bad.conf:2"), "{e}");

        std::fs::write(&conf, "include 'loop.conf'\n").unwrap();
        std::fs::write(d.join("loop.conf"), "include 'main.conf'\n").unwrap();
        let e = apply(&conf).unwrap_err();
        assert!(e.contains("include cycle"), "{e}");

        // Eleven files deep (no cycle): PostgreSQL stops at 10.
        for i in 0..12 {
            std::fs::write(
                d.join(format!("n{i}.conf")),
                format!("include 'n{}.conf'\n", i + 1),
            )
            .unwrap();
        }
        std::fs::write(d.join("n12.conf"), "commit_delay = 5\n").unwrap();
        let e = apply(&d.join("n0.conf")).unwrap_err();
        assert!(e.contains("nest more than 10 deep"), "{e}");
        assert_eq!(apply(&d.join("n3.conf")).unwrap().commit_delay_us, 5);
    }

    #[test]
    fn config_file_bad_value_names_file_and_line() {
        let file = write_conf(
            "# comment\n\
             shared_buffers = 1GB\n\
             checkpoint_timeout = 5 min\n",
        );
        let mut settings = Settings::default();
        let message = settings
            .apply_config_file(file.path())
            .unwrap_err()
            .to_string();
        let location = format!("{}:3: ", file.path().display());
        assert!(message.starts_with(&location), "{message}");
        assert!(message.contains("must be quoted"), "{message}");
        assert_eq!(settings, Settings::default(), "nothing applied");

        let file = write_conf("shared_buffers = 1GB\n\n\nwal_writer_delay = '20s'\n");
        let message = settings
            .apply_config_file(file.path())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            format!(
                "{}:4: wal_writer_delay = 20s is out of range; PostgreSQL accepts 1ms .. 10s",
                file.path().display()
            )
        );
        assert_eq!(settings, Settings::default(), "nothing applied");

        let file = write_conf("synchronous_commit = perhaps\n");
        let message = settings
            .apply_config_file(file.path())
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with(&format!(
                "{}:1: invalid value for synchronous_commit: \"perhaps\"",
                file.path().display()
            )),
            "{message}"
        );
    }

    #[test]
    fn config_file_syntax_errors_name_file_and_line() {
        for (text, line) in [
            ("shared_buffers = 1GB\n= 5\n", 2),
            ("shared_buffers = 'unterminated\n", 1),
            ("shared_buffers =\n", 1),
            ("shared_buffers = 1GB\nwork_mem = 4 MB\n", 2),
            ("\n\n9lives = 1\n", 3),
        ] {
            let file = write_conf(text);
            let message = Settings::default()
                .apply_config_file(file.path())
                .unwrap_err()
                .to_string();
            let location = format!("{}:{line}: ", file.path().display());
            assert!(message.starts_with(&location), "{text:?}: {message}");
        }
    }

    #[test]
    fn config_file_overridden_lines_are_not_checked() {
        // As PostgreSQL: only the last assignment of a name is applied.
        let file = write_conf("shared_buffers = lots\nshared_buffers = 1GB\n");
        let mut settings = Settings::default();
        settings.apply_config_file(file.path()).unwrap();
        assert_eq!(settings.shared_buffers_bytes, GB);
    }

    #[test]
    fn config_file_typo_of_a_modelled_name_is_an_error() {
        let file = write_conf("shared_buffer = 16GB\n");
        let message = Settings::default()
            .apply_config_file(file.path())
            .unwrap_err()
            .to_string();
        assert_eq!(
            message,
            format!(
                "{}:1: unknown setting \"shared_buffer\"; did you mean shared_buffers?",
                file.path().display()
            )
        );
        // Names from other PostgreSQL versions, or unknown and far from any
        // modelled name, are only reported.
        let file = write_conf("wal_keep_segments = 64\nio_method = worker\nmy_custom = 1\n");
        assert_eq!(
            Settings::default().apply_config_file(file.path()).unwrap(),
            ["wal_keep_segments", "io_method", "my_custom"]
        );
    }

    #[test]
    fn config_file_that_cannot_be_read_is_named() {
        let message = Settings::default()
            .apply_config_file(Path::new("/nonexistent/postgresql.conf"))
            .unwrap_err()
            .to_string();
        assert!(
            message.starts_with("configuration file /nonexistent/postgresql.conf: cannot open: "),
            "{message}"
        );
    }

    #[test]
    fn config_line_parsing() {
        let line = |s: &str| parse_config_line(s).unwrap();
        let pair = |n: &str, v: &str| Some((n.to_string(), v.to_string()));
        assert_eq!(line(""), None);
        assert_eq!(line("   # comment"), None);
        assert_eq!(line("a = b"), pair("a", "b"));
        assert_eq!(line("a b"), pair("a", "b"));
        assert_eq!(line("a=b#c"), pair("a", "b"));
        assert_eq!(line("a = 'it''s'"), pair("a", "it's"));
        assert_eq!(line(r"a = 'it\'s\tx'"), pair("a", "it's\tx"));
        assert_eq!(line("a = '#1' # c"), pair("a", "#1"));
        assert_eq!(line("a = ''"), pair("a", ""));
        assert_eq!(line("ext.name = 1"), pair("ext.name", "1"));
        assert_eq!(line("a = 1.5GB"), pair("a", "1.5GB"));
        assert!(parse_config_line("a = 'x' y").is_err());
        assert!(parse_config_line("a = b c").is_err());
        assert!(parse_config_line("'a' = 1").is_err());
    }

    // --- round trips --------------------------------------------------------------

    /// The modelled integer settings with a unit, and their ranges in base units.
    fn unit_settings() -> Vec<(&'static str, i64, i64)> {
        SPECS
            .iter()
            .filter_map(|spec| match spec.kind {
                Kind::Int { unit, min, max } if unit != Unit::None => {
                    Some((spec.name, min.max(0), max))
                }
                _ => None,
            })
            .collect()
    }

    proptest! {
        /// What `SHOW` prints, `SET` takes back to the same value, for every
        /// memory and time setting over its whole range.
        #[test]
        fn display_round_trips(index in 0usize..16, fraction in 0.0f64..=1.0) {
            let settings_with_units = unit_settings();
            prop_assert_eq!(settings_with_units.len(), 16);
            let (name, min, max) = settings_with_units[index];
            let base = min + ((max - min) as f64 * fraction) as i64;
            // archive_mode on, so that archive_timeout shows.
            let mut set = with("archive_mode", "on");
            set.set(name, &base.to_string()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let display = shown(&set, name);
            let mut again = with("archive_mode", "on");
            again.set(name, &display).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(&again, &set, "{} = {} shown as {}", name, base, display);
            prop_assert_eq!(shown(&again, name), display);
        }

        /// Same, for values that are whole multiples of a larger unit, which
        /// display in that unit.
        #[test]
        fn display_round_trips_in_large_units(gb in 1u64..1024, minutes in 1u64..=1440) {
            let set = with("shared_buffers", &format!("{gb}GB"));
            prop_assert_eq!(shown(&set, "shared_buffers"), format!("{gb}GB"));
            let set = with("max_wal_size", &format!("{gb}GB"));
            prop_assert_eq!(shown(&set, "max_wal_size"), format!("{gb}GB"));
            let set = with("checkpoint_timeout", &format!("{minutes}min"));
            let display = shown(&set, "checkpoint_timeout");
            let mut again = Settings::default();
            again.set("checkpoint_timeout", &display).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(again.checkpoint_timeout_s, minutes * 60);
        }

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
