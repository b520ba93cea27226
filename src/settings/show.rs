//! Showing values the way PostgreSQL 15's `SHOW` does (`_ShowOption`,
//! `convert_int_from_base_unit`). Values to text only: which setting shows
//! which way is the table's (table.rs).

use super::unit::{MEMORY_UNITS, TIME_UNITS, Unit};

/// A millisecond setting that may be -1, as SHOW prints it ("2ms", "-1", "0").
pub(super) fn format_with_ms(v: i64) -> String {
    if v <= 0 {
        v.to_string()
    } else {
        format!("{v}ms")
    }
}

pub(super) fn on_off(value: bool) -> String {
    if value { "on" } else { "off" }.to_string()
}

/// The largest unit that divides the value exactly; 0 shows as "0".
pub(super) fn format_in_units(value: u64, table: &[(&str, u64)]) -> String {
    if value == 0 {
        return "0".to_string();
    }
    let (name, size) = table
        .iter()
        .find(|(_, size)| value.is_multiple_of(*size))
        .unwrap_or(&table[table.len() - 1]);
    format!("{}{name}", value / size)
}

pub(super) fn format_bytes(bytes: u64) -> String {
    format_in_units(bytes, &MEMORY_UNITS)
}

pub(super) fn format_micros(micros: u64) -> String {
    format_in_units(micros, &TIME_UNITS)
}

/// A value in a setting's base units as `SHOW` prints it (negative values
/// and commit_delay's microseconds as bare numbers).
pub(super) fn format_base(unit: Unit, value: i64) -> String {
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
pub(super) fn with_approximation(unit: Unit, value: i64) -> String {
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
pub(super) fn format_real(value: f64) -> String {
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

/// A byte count the way PostgreSQL shows memory ("128MB", "16GB").
pub fn format_memory(bytes: u64) -> String {
    format_bytes(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::Settings;
    use crate::settings::table::{Kind, TABLE};
    use crate::settings::test_support::*;
    use crate::settings::unit::*;
    use proptest::prelude::*;

    #[test]
    fn archive_mode_and_timeout_take_postgresqls_values_and_show_only_when_on() {
        use crate::core::archive::ArchiveMode;
        use crate::settings::SettingError;
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
            ("maintenance_work_mem", "64MB"),
            ("vacuum_cost_page_hit", "1"),
            ("vacuum_cost_page_miss", "2"),
            ("vacuum_cost_page_dirty", "20"),
            ("autovacuum_naptime", "1min"),
            ("synchronous_standby_names", ""),
        ];
        let display = Settings::default().to_display();
        let display: Vec<(&str, &str)> = display.iter().map(|(n, v)| (*n, v.as_str())).collect();
        assert_eq!(display, expected);
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
        // archive_mode and archive_timeout show only with archiving on, ssl
        // only when on; recovery's three only in a catch-up's result.
        assert_eq!(object.len(), Settings::NAMES.len() - 2 - 1 - 3);
        assert_eq!(with("ssl", "on").to_json()["ssl"], "on");
        let recovery: Vec<&str> = with("shared_buffers", "16GB")
            .recovery_display()
            .iter()
            .map(|(n, _)| *n)
            .collect();
        assert_eq!(
            recovery,
            [
                "recovery_prefetch",
                "maintenance_io_concurrency",
                "wal_decode_buffer_size"
            ]
        );
        assert_eq!(object["shared_buffers"], "16GB");
        assert_eq!(object["wal_buffers"], "16MB");
        assert_eq!(object["checkpoint_timeout"], "5min");
        assert_eq!(object["synchronous_commit"], "on");
        assert_eq!(object["checkpoint_completion_target"], "0.9");
    }

    /// The modelled integer settings with a unit, and their ranges in base units.
    fn unit_settings() -> Vec<(&'static str, i64, i64)> {
        TABLE
            .iter()
            .filter_map(|row| match row.kind {
                Kind::Int { unit, min, max, .. } if unit != Unit::None => {
                    Some((row.name, min.max(0), max))
                }
                _ => None,
            })
            .collect()
    }

    proptest! {
        /// What `SHOW` prints, `SET` takes back to the same value, for every
        /// memory and time setting over its whole range.
        #[test]
        fn display_round_trips(index in 0usize..18, fraction in 0.0f64..=1.0) {
            let settings_with_units = unit_settings();
            prop_assert_eq!(settings_with_units.len(), 18);
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

    }
}
