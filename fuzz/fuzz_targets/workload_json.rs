//! A `--workload` file: parsed, validated, compiled at a small scale as `run`
//! and `model` do, and a few of its transactions generated.
#![no_main]

use libfuzzer_sys::fuzz_target;
use pgiosim::core::SimRng;
use pgiosim::workload::{Script, Workload, WorkloadSpec};
use rand::SeedableRng;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let spec = match WorkloadSpec::from_json(text, "fuzz.json") {
        Ok(spec) => spec,
        Err(e) => {
            let _ = format!("{e:#}");
            return;
        }
    };
    let mut script = match Script::new(&spec, 1) {
        Ok(script) => script,
        Err(e) => {
            let _ = format!("{e:#}");
            return;
        }
    };
    let _ = script.describe();
    let _ = script.tables();
    let mut rng = SimRng::seed_from_u64(1);
    let mut steps = Vec::new();
    for _ in 0..16 {
        script.next_transaction(&mut rng, &mut steps);
    }
});
