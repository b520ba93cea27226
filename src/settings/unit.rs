//! PostgreSQL's sizes and units: the page sizes, the memory and time unit
//! tables (`memory_unit_conversion_table`, `time_unit_conversion_table` in
//! guc.c), and a setting's base unit. The bottom of `settings`: the parser,
//! the display and the table read it; it reads nothing of theirs.

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

pub(super) const BLOCKS: Unit = Unit::Bytes(BLCKSZ_BYTES);
pub(super) const WAL_BLOCKS: Unit = Unit::Bytes(XLOG_BLCKSZ_BYTES);
pub(super) const MEGABYTES: Unit = Unit::Bytes(MB);
pub(super) const KILOBYTES: Unit = Unit::Bytes(KB);
pub(super) const BYTES: Unit = Unit::Bytes(1);
pub(super) const SECONDS: Unit = Unit::Micros(US_PER_S);
pub(super) const MILLISECONDS: Unit = Unit::Micros(US_PER_MS);
/// pgiosim's own: PostgreSQL gives commit_delay no unit (it has no
/// microsecond unit for integers), but the bare number is microseconds, so
/// taking a time unit as well changes no value PostgreSQL accepts.
pub(super) const MICROSECONDS: Unit = Unit::Micros(1);

/// What a bare number of `unit` counts, in words.
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
