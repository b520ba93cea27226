//! `scripts/soak` at small size: a short `run` and a short `model`, their
//! memory sampled and judged; the hour-long soak is the script's default.

mod common;

fn soak_samples_memory_and_timer_lag_and_memory_stays_flat() {
    let dir = common::tmp("soak");
    let data = dir.path().join("data");
    let o = common::script(
        "soak",
        &[
            "--run-seconds",
            "8",
            "--model-seconds",
            "600",
            "--interval",
            "0.5",
            "--dir",
            data.to_str().unwrap(),
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    // Exit 1 would mean something grew; timer lag on a shared host may,
    // memory must not.
    assert!(matches!(o.status.code(), Some(0 | 1)), "{out}{err}");
    let run = out
        .lines()
        .find(|l| l.starts_with("run 8 s"))
        .unwrap_or_else(|| panic!("{out}{err}"));
    assert!(run.contains("at the end (flat)"), "{run}");
    assert!(run.contains("progress lines, exit 0"), "{run}");
    let model = out
        .lines()
        .find(|l| l.starts_with("model 600"))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        model.contains("(flat)") && model.ends_with("exit 0"),
        "{model}"
    );
    // The data set it made is gone.
    assert!(!data.exists());
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        soak_samples_memory_and_timer_lag_and_memory_stays_flat
    ])
}
