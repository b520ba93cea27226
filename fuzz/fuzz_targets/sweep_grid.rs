//! `sweep --clients 1,2,4,...,64` and `sweep --set NAME=V1,V2`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::sweep::{parse_clients, parse_sets};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // As clap gives them: split at the commas; each line one `--set`.
    let items: Vec<String> = text.split(',').map(str::to_string).collect();
    if let Err(e) = parse_clients(&items) {
        let _ = format!("{e:#}");
    }
    let sets: Vec<String> = text.lines().map(str::to_string).collect();
    if let Err(e) = parse_sets(&sets) {
        let _ = format!("{e:#}");
    }
});
