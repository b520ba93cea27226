//! The settings file: the server's pg_settings as a postgresql.conf that
//! pgiosim reads, and single settings of the observation.

use std::collections::BTreeMap;

use super::{Observation, ServerSetting};
use crate::settings::Settings;

/// Settings written to the .conf: pgiosim's modelled ones (as lines) and
/// these others (as comments, for a reader).
pub const INFO_SETTINGS: &[&str] = &[
    "fsync",
    "wal_level",
    "wal_compression",
    "wal_sync_method",
    "wal_log_hints",
    "data_checksums",
    "checkpoint_flush_after",
    "bgwriter_flush_after",
    "backend_flush_after",
    "effective_io_concurrency",
    "io_method",
    "max_connections",
    "block_size",
    "wal_segment_size",
    "server_version",
];

/// A pg_settings value as postgresql.conf writes it: with its unit, quoted
/// when it is not a number.
pub(super) fn conf_value(setting: &str, unit: &str) -> String {
    let number = setting.parse::<f64>().is_ok();
    if !number {
        return format!("'{}'", setting.replace('\'', "''"));
    }
    match unit {
        "" => setting.to_string(),
        _ if setting.starts_with('-') => setting.to_string(),
        u if u.ends_with("kB") && u.len() > 2 => {
            // "8kB": a count of 8 kB blocks.
            match (u[..u.len() - 2].parse::<i64>(), setting.parse::<i64>()) {
                (Ok(m), Ok(v)) => format!("{}kB", m * v),
                _ => format!("'{setting}{u}'"),
            }
        }
        u if u.ends_with("MB") && u.len() > 2 => {
            match (u[..u.len() - 2].parse::<i64>(), setting.parse::<i64>()) {
                (Ok(m), Ok(v)) => format!("{}MB", m * v),
                _ => format!("'{setting}{u}'"),
            }
        }
        u => format!("{setting}{u}"),
    }
}

/// The postgresql.conf text: pgiosim's modelled settings as the server has
/// them, then the other relevant ones as comments.
pub(super) fn conf_text(obs: &Observation, json_name: &str) -> String {
    let mut out = format!(
        "# Written by pgiosim capture from pg_settings of PostgreSQL {} (database {:?}, {}) at {}.\n\
         # Use it with the workload file: pgiosim run --workload {json_name} --config <this file>\n\n",
        obs.version, obs.database, obs.server, obs.started_at
    );
    let by_name: BTreeMap<&str, &ServerSetting> =
        obs.settings.iter().map(|s| (s.name.as_str(), s)).collect();
    for name in Settings::NAMES {
        let Some(s) = by_name.get(name) else { continue };
        let value = conf_value(&s.setting, &s.unit);
        match Settings::default().set(name, &value) {
            Ok(()) => out.push_str(&format!("{name} = {value}\n")),
            Err(e) => out.push_str(&format!(
                "# {name} = {value}    # not accepted by pgiosim: {e}\n"
            )),
        }
    }
    out.push_str("\n# Observed, not modelled by pgiosim:\n");
    for name in INFO_SETTINGS {
        if let Some(s) = by_name.get(name) {
            out.push_str(&format!("# {name} = {}\n", conf_value(&s.setting, &s.unit)));
        }
    }
    out
}

pub(super) fn setting<'a>(obs: &'a Observation, name: &str) -> Option<&'a ServerSetting> {
    obs.settings.iter().find(|s| s.name == name)
}

/// shared_buffers in bytes, as pgiosim parses the server's value.
pub(super) fn shared_buffers_bytes(obs: &Observation) -> u64 {
    let mut s = Settings::default();
    if let Some(sb) = setting(obs, "shared_buffers") {
        let _ = s.set("shared_buffers", &conf_value(&sb.setting, &sb.unit));
    }
    s.shared_buffers_bytes
}
