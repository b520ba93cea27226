//! The modelled server's CPU and client: `--cpus` with
//! `--threads-per-core` and `--cpu-speed`, pgbench's `-M` protocol and a
//! client on another host (`--client-rtt`), through `pgiosim model`.

use serde_json::Value;

mod common;
use common::{pgiosim, text};

/// Run `model` with `--json -` and parse the result.
fn model(args: &[&str]) -> Value {
    let mut all = vec!["model", "-q", "--json", "-", "--seed", "5", "-T", "2"];
    all.extend_from_slice(args);
    let o = pgiosim(&all);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    // With --json -, standard output is the JSON alone.
    serde_json::from_slice(&o.stdout).unwrap()
}

fn tps(v: &Value) -> f64 {
    v["summary"]["tps"].as_f64().unwrap()
}

fn bucket(v: &Value, name: &str) -> f64 {
    common::bucket(v, name).unwrap_or_else(|| panic!("no bucket {name}"))["mean_us"]
        .as_f64()
        .unwrap()
}

/// A CPU-bound shape: a cached select-only load with four times the
/// clients of cores.
const CPU_BOUND: &[&str] = &["-b", "select-only", "-s", "5", "-c", "16", "--cpus", "4"];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v = CPU_BOUND.to_vec();
    v.extend_from_slice(extra);
    v
}

#[test]
fn hyperthreads_do_one_point_two_cores_of_work_a_core() {
    let cores = model(&with(&[]));
    let threads = model(&with(&["--threads-per-core", "2"]));
    // 4 vCPUs as 2 cores of 2 threads: 2 x 1.2 = 2.4 cores' work, 0.6 of 4.
    let ratio = tps(&threads) / tps(&cores);
    assert!((ratio - 0.6).abs() < 0.05, "tps ratio {ratio}");
    assert_eq!(threads["run"]["threads_per_core"], 2);
    // A burst sharing a core holds its vCPU longer: the CPU bucket grows.
    assert!(bucket(&threads, "cpu") > 1.5 * bucket(&cores, "cpu"));
}

#[test]
fn a_faster_cpu_finishes_cpu_bound_work_sooner() {
    let base = model(&with(&[]));
    let fast = model(&with(&["--cpu-speed", "2"]));
    let ratio = tps(&fast) / tps(&base);
    assert!((ratio - 2.0).abs() < 0.15, "tps ratio {ratio}");
    let cpu = bucket(&fast, "cpu") / bucket(&base, "cpu");
    assert!((cpu - 0.5).abs() < 0.02, "cpu bucket ratio {cpu}");
    assert_eq!(fast["run"]["cpu_speed"], 2.0);
}

#[test]
fn prepared_statements_cost_less_cpu_and_extended_more() {
    let simple = model(&with(&[]));
    let prepared = model(&with(&["-M", "prepared"]));
    let extended = model(&with(&["--protocol", "extended"]));
    let p = bucket(&prepared, "cpu") / bucket(&simple, "cpu");
    let e = bucket(&extended, "cpu") / bucket(&simple, "cpu");
    // select-only's own factors (workloads/select-only.json): 0.65 and 1.46.
    assert!((p - 0.65).abs() < 0.02, "prepared/simple cpu {p}");
    assert!((e - 1.46).abs() < 0.03, "extended/simple cpu {e}");
    assert!(tps(&prepared) > tps(&simple) && tps(&simple) > tps(&extended));
    assert_eq!(prepared["run"]["query_mode"], "prepared");
    let o = pgiosim(&[
        "model",
        "-q",
        "-b",
        "select-only",
        "-s",
        "2",
        "-T",
        "1",
        "-M",
        "prepared",
    ]);
    assert!(text(&o).contains("query mode: prepared"), "{}", text(&o));
}

#[test]
fn a_client_on_another_host_waits_its_round_trip_and_spends_no_server_cpu() {
    // One client: every statement waits for the network.
    let one = ["-b", "tpcb-like", "-s", "2", "-c", "1", "--cpus", "4"];
    let local = model(&one);
    let mut far_args = one.to_vec();
    far_args.extend_from_slice(&["--client-rtt", "1ms"]);
    let far = model(&far_args);
    // tpcb-like sends 7 statements: at least 7 ms a transaction.
    let lat = far["summary"]["latency_ms"]["average"].as_f64().unwrap();
    assert!(lat >= 7.0, "latency {lat} ms");
    assert_eq!(far["run"]["client_rtt_us"], 1000.0);
    // pgbench's CPU (9.4 us a statement in tpcb-like) is no longer the server's.
    let cut = bucket(&local, "cpu") - bucket(&far, "cpu");
    assert!((cut - 7.0 * 9.4).abs() < 3.0, "server CPU cut by {cut} us");
}

#[test]
fn bad_cpu_flags_are_refused_with_the_reason() {
    for (args, want) in [
        (
            vec!["--cpus", "3", "--threads-per-core", "2"],
            "not a whole number of cores",
        ),
        (vec!["--cpu-speed", "0"], "--cpu-speed"),
        (vec!["--cpu-speed", "nan"], "--cpu-speed"),
        (
            vec!["--client-rtt", "fast"],
            "--client-rtt fast: not a duration",
        ),
        // -j beside --client-rtt is the client host's threads, which
        // pgbench too limits to the clients.
        (
            vec!["--client-rtt", "1ms", "-j", "2"],
            "more threads than the 1 clients",
        ),
        (vec!["-M", "binary"], "invalid value 'binary'"),
    ] {
        let mut all = vec!["model", "-q", "-s", "1", "-T", "1"];
        all.extend_from_slice(&args);
        let o = pgiosim(&all);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
        assert!(text(&o).contains(want), "{args:?}: {}", text(&o));
    }
}
