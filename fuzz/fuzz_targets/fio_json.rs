//! fio's JSON output as `profile from-fio` reads it: parsed, and a profile
//! built from it over the shipped nvme profile, with its table.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::device::Profile;
use pgiosim::device::import::fio::{FioFile, build, render_table};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let file = match FioFile::parse(text, "fuzz.json") {
        Ok(file) => file,
        Err(e) => {
            let _ = format!("{e:#}");
            return;
        }
    };
    let base = Profile::shipped("nvme").expect("a shipped profile");
    match build(&[file], "fuzz", &base) {
        Ok(import) => {
            let _ = render_table(&import);
        }
        Err(e) => {
            let _ = format!("{e:#}");
        }
    }
});
