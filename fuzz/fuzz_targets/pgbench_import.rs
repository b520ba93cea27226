//! A pgbench report and a statistics file, as `import pgbench` reads them:
//! the input up to its first NUL byte is pgbench's output, the rest the
//! statistics JSON; the report parsed and the buckets' shares mapped.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::import::pgbench::{Statistics, parse_report, shares};

fuzz_target!(|data: &[u8]| {
    let (text, stats) = match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b"{}"[..]),
    };
    let Ok(text) = std::str::from_utf8(text) else {
        return;
    };
    let report = match parse_report(text) {
        Ok(r) => r,
        Err(e) => {
            let _ = format!("{e:#}");
            return;
        }
    };
    let Ok(stats) = serde_json::from_slice::<Statistics>(stats) else {
        return;
    };
    let duration = report.duration_s.unwrap_or(1.0);
    match shares(&report, &stats, duration) {
        Ok(s) => {
            for (_, v) in &s.buckets {
                assert!((0.0..=1.0).contains(v), "a share out of 0..1: {v}");
            }
        }
        Err(e) => {
            let _ = format!("{e:#}");
        }
    }
});
