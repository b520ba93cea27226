//! `model` with a fixed seed gives the same JSON, to the byte, as the file
//! kept in tests/golden/: a restructuring of the code that changes a
//! figure shows here. When a change is meant to change the model's
//! answers, write the new file with `PGIOSIM_BLESS=1 cargo test --release
//! --test golden` and say in the commit why the figures moved.

use std::path::Path;

mod common;
use common::{pgiosim, text};

/// Each case: the file's name and the flags (the JSON goes to stdout).
const CASES: &[(&str, &[&str])] = &[
    (
        "gp3-commit-delay-os-cache.json",
        &[
            "-s",
            "2",
            "-c",
            "4",
            "-T",
            "2",
            "--seed",
            "7",
            "--device",
            "gp3",
            "--set",
            "commit_delay=10",
            "--os-cache",
            "64MB",
        ],
    ),
    (
        "large-updates-16-vcpus.json",
        &[
            "-b",
            "large-updates",
            "-s",
            "50",
            "-c",
            "32",
            "-T",
            "2",
            "--seed",
            "7",
            "--cpus",
            "16",
            "--threads-per-core",
            "2",
            "--set",
            "shared_buffers=64MB",
            "--os-cache",
            "256MB",
            "--after-init",
            "-M",
            "prepared",
            "--device",
            "nvme",
        ],
    ),
];

#[test]
fn model_json_is_byte_for_byte_the_kept_one() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let bless = std::env::var("PGIOSIM_BLESS").as_deref() == Ok("1");
    let mut changed = Vec::new();
    for (file, flags) in CASES {
        let mut args = vec!["model", "-q", "--json", "-"];
        args.extend_from_slice(flags);
        let o = pgiosim(&args);
        assert!(o.status.success(), "{flags:?}: {}", text(&o));
        let got = String::from_utf8(o.stdout).unwrap();
        let path = dir.join(file);
        if bless {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{}: {e}; write it with PGIOSIM_BLESS=1", path.display()));
        if got != want {
            let line = got
                .lines()
                .zip(want.lines())
                .position(|(a, b)| a != b)
                .map_or(0, |i| i + 1);
            changed.push(format!("{file} (first difference at line {line})"));
        }
    }
    assert!(
        changed.is_empty(),
        "model's JSON changed: {}; if meant, PGIOSIM_BLESS=1 and say why",
        changed.join(", ")
    );
}
