//! Why a setting was refused.

use std::fmt;

use super::names::is_postgres_setting;
use super::table::{NAMES, bare_number_meaning};

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
                        NAMES.join(", ")
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

#[cfg(test)]
mod tests {
    use crate::settings::test_support::*;
    use crate::settings::{SettingError, Settings};

    #[test]
    fn an_invalid_value_says_what_was_expected() {
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
        // Errors are std errors, so they travel in anyhow.
        let boxed: anyhow::Error = err("shared_buffers", "x").into();
        assert!(
            boxed
                .to_string()
                .starts_with("invalid value for shared_buffers")
        );
    }

    #[test]
    fn a_value_out_of_range_gives_postgresql_s_range() {
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
    }

    #[test]
    fn a_text_without_a_value_is_not_an_assignment() {
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
    }
}
