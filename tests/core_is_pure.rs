//! The core is sans-I/O: no clock, no files, no io_uring, no async, no
//! unseeded randomness. This test keeps it that way without anyone having
//! to remember.

use std::path::Path;

const FORBIDDEN: &[&str] = &[
    "std::time",
    "Instant",
    "SystemTime",
    "std::fs",
    "std::net",
    "std::thread",
    "io_uring",
    "tokio",
    "libc::",
    "thread_rng",
    "rand::rng(",
    "rand::random",
    "from_entropy",
    "from_os_rng",
    "parking_lot",
    "Mutex",
];

fn scan(dir: &Path, hits: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            scan(&path, hits);
        } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("workload/load.rs")
        {
            // workload/load.rs reads workload files once at start-up.
            let text = std::fs::read_to_string(&path).unwrap();
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                for word in FORBIDDEN {
                    if code.contains(word) {
                        hits.push(format!("{}:{}: {word}", path.display(), n + 1));
                    }
                }
            }
        }
    }
}

#[test]
fn core_and_workloads_touch_no_clock_file_or_unseeded_rng() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut hits = Vec::new();
    scan(&root.join("core"), &mut hits);
    scan(&root.join("workload"), &mut hits);
    assert!(
        hits.is_empty(),
        "the core must stay sans-I/O:\n{}",
        hits.join("\n")
    );
}
