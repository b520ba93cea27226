//! YABS output, text or JSON, as `profile from-yabs` reads it: parsed, and
//! a profile built from each disk over the shipped nvme profile (which runs
//! the model on YABS's own tests), with its table.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::device::Profile;
use pgiosim::device::yabs::{build, parse, render_table};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let disks = match parse(text, "fuzz.txt") {
        Ok(disks) => disks,
        Err(e) => {
            let _ = format!("{e:#}");
            return;
        }
    };
    let base = Profile::shipped("nvme").expect("a shipped profile");
    for disk in &disks {
        match build(disk, "fuzz", &base, "fuzz.txt") {
            Ok(import) => {
                let _ = render_table(&import);
            }
            Err(e) => {
                let _ = format!("{e:#}");
            }
        }
    }
});
