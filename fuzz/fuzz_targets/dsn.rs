//! `capture --dsn`: a URL or key=value connection string, as libpq takes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::capture::{describe_target, parse_dsn};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    match parse_dsn(text) {
        Ok(config) => {
            let _ = describe_target(&config);
        }
        Err(e) => {
            let _ = format!("{e:#}");
        }
    }
});
