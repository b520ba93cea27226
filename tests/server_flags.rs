//! One server model whichever way a server is typed: a preset
//! (`--instance`) is shorthand for the flags `instances show` prints, and
//! the model applies the same mechanisms (processor speed, threads per
//! core, the page cache from the RAM, the full cache's reclaim CPU, the
//! volume limits) to both.

mod common;
use common::{pgiosim, text};

/// The flags `instances show SIZE --flags` prints for a preset.
fn flags_of(size: &str) -> Vec<String> {
    let o = pgiosim(&["instances", "show", size, "--flags"]);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout)
        .unwrap()
        .split_whitespace()
        .map(str::to_string)
        .collect()
}

/// Every preset's name and provider, from `pgiosim instances`.
fn presets() -> Vec<(String, String, bool)> {
    let o = pgiosim(&["instances"]);
    assert!(o.status.success(), "{}", text(&o));
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .take_while(|l| !l.trim().is_empty())
        .map(|l| {
            let mut w = l.split_whitespace();
            let name = w.next().unwrap().to_string();
            let provider = w.next().unwrap().to_string();
            (name, provider, l.contains("instance store:"))
        })
        .collect()
}

/// A network volume of `provider`'s, for a preset without a local store.
fn volume_of(provider: &str) -> &'static str {
    match provider {
        "AWS" => "gp3",
        "Azure" => "azure-premium-ssd",
        "GCP" => "pd-ssd",
        _ => "nvme",
    }
}

/// A model run's JSON on stdout.
fn json(args: &[String]) -> String {
    let mut all: Vec<&str> = vec!["model", "-q", "--json", "-"];
    all.extend(["-s", "20", "-c", "8", "-T", "2", "--seed", "5"]);
    all.extend(args.iter().map(String::as_str));
    let o = pgiosim(&all);
    assert!(o.status.success(), "{all:?}: {}", text(&o));
    String::from_utf8(o.stdout).unwrap()
}

#[test]
fn every_tenth_preset_typed_as_flags_gives_the_same_json() {
    let all = presets();
    assert!(all.len() >= 100, "{} presets", all.len());
    let mut checked = 0;
    for (name, provider, store) in all.iter().step_by(10) {
        let device = if *store {
            format!("instance-store:type={name}")
        } else {
            volume_of(provider).to_string()
        };
        let mut by_preset = vec!["--instance".to_string(), name.clone()];
        if !store {
            by_preset.extend(["--device".to_string(), device.clone()]);
        }
        let mut by_flags = flags_of(name);
        by_flags.extend(["--device".to_string(), device]);
        let (a, b) = (json(&by_preset), json(&by_flags));
        assert!(
            a == b,
            "{name}: --instance and {by_flags:?} differ:\n{}",
            first_difference(&a, &b)
        );
        checked += 1;
    }
    assert!(checked >= 10, "{checked} presets checked");
}

fn first_difference(a: &str, b: &str) -> String {
    a.lines()
        .zip(b.lines())
        .find(|(x, y)| x != y)
        .map(|(x, y)| format!("preset: {x}\nflags:  {y}"))
        .unwrap_or_else(|| "one is longer".into())
}

#[test]
fn a_processor_name_is_its_class() {
    let by_key = json(&[
        "--cpus".into(),
        "4".into(),
        "--cpu".into(),
        "xeon-8375c".into(),
    ]);
    let by_name = json(&[
        "--cpus".into(),
        "4".into(),
        "--cpu".into(),
        "Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz".into(),
    ]);
    assert_eq!(by_key, by_name);
    let v: serde_json::Value = serde_json::from_str(&by_key).unwrap();
    assert_eq!(v["run"]["cpu_speed"], 0.84, "{}", v["run"]);
    // --ram gives the page cache a preset's RAM would.
    let ram = json(&["--cpus".into(), "4".into(), "--ram".into(), "16GB".into()]);
    let v: serde_json::Value = serde_json::from_str(&ram).unwrap();
    // 5% of 16 GB is below the least kept for the kernel, 1 GB.
    let want = (16u64 << 30) - (128 << 20) - (1 << 30);
    assert_eq!(v["run"]["os_cache_bytes"], want, "{}", v["run"]);
}

/// The full page cache's CPU applies without a preset: the same run with
/// a workload whose reclaim figures are all but zero spends less CPU a
/// transaction.
#[test]
fn a_full_page_cache_costs_its_reclaim_cpu_on_every_path() {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/workloads/tpcb-like.json"
    ))
    .unwrap();
    let mut w: serde_json::Value = serde_json::from_str(&base).unwrap();
    w["name"] = "tpcb-no-reclaim".into();
    w["reclaim_cpu_us_per_read"] = 0.001.into();
    w["reclaim_cpu_us_per_kib_written"] = 0.001.into();
    let path = dir.path().join("w.json");
    std::fs::write(&path, w.to_string()).unwrap();
    let cpu_us = |extra: &[&str]| -> f64 {
        let mut args = vec![
            "model",
            "-q",
            "--json",
            "-",
            "-s",
            "20",
            "-c",
            "4",
            "-T",
            "3",
            "--seed",
            "3",
            "--cpus",
            "4",
            "--os-cache",
            "64MB",
            "--device",
            "nvme",
        ];
        args.extend_from_slice(extra);
        let o = pgiosim(&args);
        assert!(o.status.success(), "{}", text(&o));
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        v["breakdown"]
            .as_array()
            .and_then(|b| b.iter().find(|x| x["bucket"] == "cpu"))
            .and_then(|x| x["mean_us"].as_f64())
            .unwrap_or_else(|| panic!("{}", v["breakdown"]))
    };
    let with = cpu_us(&[]);
    let without = cpu_us(&["--workload", path.to_str().unwrap()]);
    // About a device read a transaction at 84.7 µs, and its WAL's KiB.
    assert!(with > without + 60.0, "{with} against {without}");
}

#[test]
fn what_the_flags_leave_unsaid_is_named_and_bad_values_are_one_line() {
    let o = pgiosim(&["model", "-T", "1", "-s", "2", "--seed", "1", "--cpus", "4"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("cores taken as the EPYC 9454P's, one thread each"),
        "{t}"
    );
    assert!(t.contains("give the server's --ram"), "{t}");
    for (args, want) in [
        (vec!["--cpu", "z80"], "--cpu z80: no such CPU class"),
        (vec!["--ram", "lots"], "--ram lots: not a size"),
        (
            vec!["--ram", "1GB", "--set", "shared_buffers=1GB"],
            "leaves no page cache",
        ),
        (
            vec!["--volume-limits", "iops=5"],
            "give both iops= and mbps=",
        ),
        (
            vec!["--cpu", "graviton3", "--cpu-speed", "1.2"],
            "cannot be used with",
        ),
    ] {
        let mut all = vec!["model", "-T", "1", "-s", "2", "--cpus", "4"];
        all.extend(&args);
        let o = pgiosim(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
    let o = pgiosim(&["instances", "show", "m9.huge"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
}

#[test]
fn volume_limits_by_size_are_the_presets() {
    // On a faster volume than the server allows, the server's limit binds.
    let by_preset = json(&[
        "--instance".into(),
        "m6i.xlarge".into(),
        "--device".into(),
        "io2".into(),
    ]);
    let by_flags = json(
        &[
            flags_of("m6i.xlarge"),
            vec!["--device".into(), "io2".into()],
        ]
        .concat(),
    );
    assert_eq!(by_preset, by_flags);
    let v: serde_json::Value = serde_json::from_str(&by_preset).unwrap();
    assert!(
        v.to_string().contains("io2-on-m6i-xlarge"),
        "the limited volume is named for its server"
    );
}

#[test]
fn cpus_lists_the_classes_and_the_host() {
    let o = pgiosim(&["cpus"]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    for want in [
        "epyc-9454p",
        "xeon-8375c",
        "graviton3",
        "host",
        "Sources:",
        "sparecores",
    ] {
        assert!(t.contains(want), "{want}: {t}");
    }
}
