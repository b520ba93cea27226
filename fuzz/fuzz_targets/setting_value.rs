//! A setting's value as `--set` and postgresql.conf give it: units, bools,
//! enums, reals, quoting; and pgiosim's own size and duration flags.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::settings::{Settings, parse_duration_ns, parse_memory_bytes};

fuzz_target!(|data: &[u8]| {
    // The first byte picks the setting, the rest is its value.
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let value = String::from_utf8_lossy(rest);
    let name = Settings::NAMES[pick as usize % Settings::NAMES.len()];
    let mut settings = Settings::default();
    match settings.set(name, &value) {
        Ok(()) => {
            let _ = settings.to_display();
            let _ = settings.to_json();
            let _ = settings.wal_buffers_effective_bytes();
            let _ = settings.checkpoint_segments();
        }
        Err(e) => {
            let _ = e.to_string();
        }
    }
    // The whole input as `--set NAME=VALUE`.
    if let Err(e) = Settings::default().set_assignment(&value) {
        let _ = e.to_string();
    }
    let _ = parse_memory_bytes(&value);
    let _ = parse_duration_ns(&value);
});
