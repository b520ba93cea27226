//! The CPU probe: `pgiosim cpu-probe`, `run` taking this host's speed from
//! it, and `model` taking a calibrated profile's.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{pgiosim, text, tmp};

/// tpcb-like's file with `cpu_probe_us` set (None: removed), written in `dir`.
fn workload_with_probe(dir: &Path, reference_us: Option<f64>) -> String {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/tpcb-like.json");
    let mut w: Value = serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    let o = w.as_object_mut().unwrap();
    match reference_us {
        Some(r) => o.insert("cpu_probe_us".into(), r.into()),
        None => o.remove("cpu_probe_us"),
    };
    let path = dir.join("w.json");
    std::fs::write(&path, serde_json::to_string(&w).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

/// A calibrated profile (this VM's example) whose host's probe took
/// `host_us`, written in `dir`.
fn profile_with_probe(dir: &Path, host_us: f64) -> String {
    let src = common::example_device("this-vm");
    let mut p: Value = serde_json::from_str(&std::fs::read_to_string(src).unwrap()).unwrap();
    p["cpu_probe_us"] = host_us.into();
    let path = dir.join("p.json");
    std::fs::write(&path, serde_json::to_string(&p).unwrap()).unwrap();
    path.to_str().unwrap().to_string()
}

fn json_of(args: &[&str]) -> Value {
    let o = pgiosim(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn the_probe_gives_the_speed_against_the_workloads_machine() {
    let d = tmp("pgiosim-cpu-probe-");
    let w = workload_with_probe(d.path(), Some(10.0));
    let v = json_of(&["cpu-probe", "--workload", &w, "--json", "-"]);
    let here = v["us_per_round"].as_f64().unwrap();
    assert!(here > 0.0, "{v}");
    assert_eq!(v["windows_us"].as_array().unwrap().len(), 5);
    let speed = v["speed"].as_f64().unwrap();
    assert!((speed - 10.0 / here).abs() < 1e-9, "{v}");
    assert_eq!(v["reference_us"], 10.0);

    // Without the machine's figure there is no speed to give.
    let w = workload_with_probe(d.path(), None);
    let v = json_of(&["cpu-probe", "--workload", &w, "--json", "-"]);
    assert!(v["speed"].is_null() && v["reference_us"].is_null(), "{v}");
}

#[test]
fn a_bad_reference_figure_is_refused() {
    let d = tmp("pgiosim-cpu-probe-");
    for bad in [-1.0, 1e30, 1e-308, 0.01, 5000.0] {
        let w = workload_with_probe(d.path(), Some(bad));
        let o = pgiosim(&["cpu-probe", "--workload", &w]);
        assert_eq!(o.status.code(), Some(2), "{bad}: {}", text(&o));
        assert!(text(&o).contains("cpu_probe_us"), "{}", text(&o));
    }
}

/// Two workloads whose figures come from machines with different probes
/// have no one speed: refused, whichever comes first.
#[test]
fn workloads_from_two_machines_have_no_one_speed() {
    let d = tmp("pgiosim-cpu-probe-");
    let w = workload_with_probe(d.path(), Some(40.0));
    let mixed = format!("{w}@1");
    let w = &mixed;
    let p = profile_with_probe(d.path(), 12.0);
    for args in [
        vec!["cpu-probe", "-b", w, "-b", "select-only@1"],
        vec![
            "model",
            "-T",
            "1",
            "-s",
            "1",
            "--cpus",
            "2",
            "--device",
            &p,
            "-b",
            w,
            "-b",
            "select-only@1",
        ],
    ] {
        let o = pgiosim(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains("different machines"), "{}", text(&o));
    }
    // A probe that gives a speed out of range is refused, not clamped.
    let p = profile_with_probe(d.path(), 999.0);
    let w = workload_with_probe(d.path(), Some(0.2));
    let o = pgiosim(&[
        "model",
        "-T",
        "1",
        "-s",
        "1",
        "--cpus",
        "2",
        "--device",
        &p,
        "--workload",
        &w,
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("outside 0.01-100"), "{}", text(&o));
}

#[test]
fn run_takes_this_hosts_speed_unless_told() {
    let d = tmp("pgiosim-cpu-probe-");
    let w = workload_with_probe(d.path(), Some(12.0));
    let dir = d.path().join("data");
    let dir = dir.to_str().unwrap();
    let common = [
        "run",
        "--dir",
        dir,
        "--workload",
        &w,
        "-s",
        "1",
        "-T",
        "1",
        "-q",
        "--json",
        "-",
    ];
    let v = json_of(&common);
    let probe = &v["run"]["cpu_probe"];
    let host = probe["host_us"].as_f64().unwrap();
    assert_eq!(probe["reference_us"], 12.0);
    let speed = v["run"]["cpu_speed"].as_f64().unwrap();
    assert!((speed - 12.0 / host).abs() < 1e-9, "{v}");

    let mut told = common.to_vec();
    told.extend(["--cpu-speed", "1"]);
    let v = json_of(&told);
    assert_eq!(v["run"]["cpu_speed"], 1.0);
    assert!(v["run"].get("cpu_probe").is_none(), "{v}");

    let w = workload_with_probe(d.path(), None);
    let mut plain = common.to_vec();
    plain[4] = &w;
    let v = json_of(&plain);
    assert_eq!(v["run"]["cpu_speed"], 1.0);
    assert!(v["run"].get("cpu_probe").is_none(), "{v}");
}

#[test]
fn model_runs_at_a_calibrated_profiles_host_speed() {
    let d = tmp("pgiosim-cpu-probe-");
    let w = workload_with_probe(d.path(), Some(20.0));
    // A host whose probe takes twice the reference machine's: half its speed.
    let profile = profile_with_probe(d.path(), 40.0);
    let profile = profile.as_str();
    let args = |extra: &[&str]| {
        let mut a = vec![
            "model",
            "-q",
            "--json",
            "-",
            "--seed",
            "3",
            "-T",
            "2",
            "-s",
            "2",
            "-c",
            "16",
            "--cpus",
            "4",
            "--device",
            profile,
            "--workload",
            &w,
        ];
        a.extend_from_slice(extra);
        json_of(&a)
    };
    let slow = args(&[]);
    assert_eq!(slow["run"]["cpu_speed"], 0.5);
    assert_eq!(slow["run"]["cpu_probe"]["host_us"], 40.0);
    let told = args(&["--cpu-speed", "1"]);
    assert!(told["run"].get("cpu_probe").is_none());
    let cpu = |v: &Value| {
        common::bucket(v, "cpu").unwrap()["mean_us"]
            .as_f64()
            .unwrap()
    };
    let ratio = cpu(&slow) / cpu(&told);
    assert!((ratio - 2.0).abs() < 0.1, "cpu bucket ratio {ratio}");
    assert!(slow["summary"]["tps"].as_f64() < told["summary"]["tps"].as_f64());
}

#[test]
fn a_sweep_point_is_the_model_run_on_a_calibrated_profile() {
    let d = tmp("pgiosim-cpu-probe-");
    let w = workload_with_probe(d.path(), Some(20.0));
    let profile = profile_with_probe(d.path(), 40.0);
    let profile = profile.as_str();
    let common = [
        "-q",
        "--json",
        "-",
        "--seed",
        "3",
        "-T",
        "2",
        "-s",
        "2",
        "--cpus",
        "4",
        "--device",
        profile,
        "--workload",
        &w,
    ];
    let mut sweep = vec!["sweep", "--clients", "2,8"];
    sweep.extend_from_slice(&common);
    let s = json_of(&sweep);
    let mut model = vec!["model", "-c", "8"];
    model.extend_from_slice(&common);
    let m = json_of(&model);
    let point = &s["results"][1];
    assert_eq!(point["run"]["cpu_speed"], 0.5);
    assert_eq!(point["summary"], m["summary"]);
}
