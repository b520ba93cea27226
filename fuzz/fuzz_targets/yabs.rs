//! YABS output, text or JSON, as `profile from-yabs` reads it: the parser
//! alone, and the promises `build` relies on (every disk has a 4k test that
//! ran, every figure finite and in bounds). `build` runs the device model
//! on each of YABS's tests, a second an input under the fuzzer; its
//! properties over the disks `parse` lets through are checked by a
//! property test in src/device/import/yabs.rs instead.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::device::import::yabs::parse;

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
    assert!(!disks.is_empty(), "parse returned no disk and no error");
    for disk in &disks {
        let t4 = disk.test(4).expect("parse checks the 4k test");
        assert!(t4.total_iops() > 0.0 && t4.total_mib_s() > 0.0, "{t4:?}");
        for t in &disk.tests {
            for v in [t.read_iops, t.write_iops, t.read_kib_s, t.write_kib_s] {
                assert!(v.is_finite() && v >= 0.0, "{t:?}");
            }
        }
    }
});
