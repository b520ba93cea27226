//! A `--device` profile file: parsed, validated, described as `devices`
//! does, and a device model built from it serving a few I/Os.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::device::{summary, DeviceModel, Op, Profile};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let profile = match Profile::from_json(text, "fuzz.json") {
        Ok(profile) => profile,
        Err(e) => {
            let _ = format!("{e:#}");
            return;
        }
    };
    let _ = summary::line(&profile);
    let _ = profile.caps_text();
    let _ = profile.to_json();
    for op in [Op::Read, Op::Write, Op::Flush] {
        let _ = profile.service_us(op);
        let _ = profile.qd1_mean_us(op);
    }
    let mut model = DeviceModel::new(&profile, 1);
    let mut now = 0;
    for (i, op) in [Op::Read, Op::Write, Op::Write, Op::Flush, Op::Read]
        .into_iter()
        .enumerate()
    {
        let done = model.submit(now, op, 8192 << i);
        now = now.max(done.min(now + 1_000_000_000));
    }
});
