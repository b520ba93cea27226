//! `model --service`: a managed service's documented defaults, applied
//! before --config and --set, from the server's memory.

mod common;
use common::{pgiosim, text};

/// `pgiosim model -q --json -` with `base` then `extra` flags: its JSON.
fn model_json(base: &[&str], extra: &[&str]) -> serde_json::Value {
    let args = [&["model", "-q", "--json", "-"][..], base, extra].concat();
    let o = pgiosim(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    serde_json::from_slice(&o.stdout).expect("JSON")
}

/// A second of scale 2, seed 3.
const SHORT: &[&str] = &["-s", "2", "-T", "1", "--seed", "3"];

/// A short model run's JSON `settings` with `extra` flags.
fn settings(extra: &[&str]) -> serde_json::Value {
    model_json(SHORT, extra)["settings"].clone()
}

/// The one line a refused command printed, with its exit code 2.
fn refused(extra: &[&str]) -> String {
    let mut args = vec!["model", "-s", "2", "-T", "1", "--seed", "3"];
    args.extend(extra);
    let o = pgiosim(&args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    let err = String::from_utf8(o.stderr).unwrap();
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    err
}

#[test]
fn rds_on_m6i_xlarge_gets_a_quarter_of_its_memory_as_shared_buffers() {
    let s = settings(&[
        "--service",
        "rds",
        "--instance",
        "m6i.xlarge",
        "--device",
        "gp3",
    ]);
    // {DBInstanceClassMemory/32768} pages of 8 kB, with the class's 16 GiB
    // standing for DBInstanceClassMemory: 524288 pages.
    assert_eq!(s["shared_buffers"], "4GB", "{s}");
    // GREATEST({DBInstanceClassMemory/63963136*1024}, 65536) kB: 268 × 1024.
    assert_eq!(s["maintenance_work_mem"], "268MB", "{s}");
    // No source states RDS's max_wal_size: PostgreSQL's stays.
    assert_eq!(s["max_wal_size"], "1GB", "{s}");
}

#[test]
fn set_and_config_win_over_the_service() {
    let s = settings(&[
        "--service",
        "rds",
        "--instance",
        "m6i.xlarge",
        "--device",
        "gp3",
        "--set",
        "shared_buffers=1GB",
    ]);
    assert_eq!(s["shared_buffers"], "1GB", "{s}");
    assert_eq!(s["maintenance_work_mem"], "268MB", "{s}");

    let dir = common::tmp("pgiosim-service");
    let conf = dir.path().join("postgresql.conf");
    std::fs::write(&conf, "shared_buffers = 2GB\n").unwrap();
    let s = settings(&[
        "--service",
        "rds",
        "--ram",
        "16GB",
        "--cpus",
        "4",
        "--config",
        conf.to_str().unwrap(),
    ]);
    assert_eq!(s["shared_buffers"], "2GB", "{s}");
}

#[test]
fn azure_follows_the_vcpus_and_the_disk() {
    let s = settings(&[
        "--service",
        "azure-flexible",
        "--ram",
        "32GB",
        "--cpus",
        "8",
        "--device",
        "azure-premium-ssd:tier=p20",
    ]);
    assert_eq!(s["shared_buffers"], "8GB", "{s}");
    assert_eq!(s["wal_buffers"], "128MB", "{s}");
    assert_eq!(s["checkpoint_timeout"], "10min", "{s}");
    // P20 is 512 GiB: 25600 MB.
    assert_eq!(s["max_wal_size"], "25GB", "{s}");
}

#[test]
fn the_notices_name_the_defaults_and_what_is_not_modelled() {
    let o = pgiosim(&[
        "model",
        "-s",
        "2",
        "-T",
        "1",
        "--seed",
        "3",
        "--service",
        "rds",
        "--instance",
        "m6i.xlarge",
        "--device",
        "gp3",
        "--set",
        "shared_buffers=1GB",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("shared_buffers = 4GB (replaced by 1GB)"),
        "{err}"
    );
    assert!(
        err.contains("ssl = on") && err.contains("--standby") && err.contains("--client-rtt"),
        "{err}"
    );
}

#[test]
fn a_bad_service_or_no_memory_is_one_line() {
    let e = refused(&["--service", "oracle-cloud"]);
    assert!(
        e.contains("--service oracle-cloud") && e.contains("rds, cloud-sql, azure-flexible"),
        "{e}"
    );
    let e = refused(&["--service", "aurora"]);
    assert!(e.contains("Aurora"), "{e}");
    let e = refused(&["--service", "cloud-sql", "--cpus", "4"]);
    assert!(e.contains("--ram"), "{e}");
}

/// A model run's JSON with `extra` flags: tpcb-like on 2 CPUs.
fn result(extra: &[&str]) -> serde_json::Value {
    let base = [
        "-s", "2", "-c", "4", "-T", "5", "--seed", "3", "--cpus", "2", "--device", "nvme",
    ];
    model_json(&base, extra)
}

fn cpu_us(v: &serde_json::Value) -> f64 {
    let b = v["breakdown"].as_array().unwrap();
    b.iter().find(|b| b["bucket"] == "cpu").unwrap()["mean_us"]
        .as_f64()
        .unwrap()
}

#[test]
fn ssl_costs_the_server_cpu_only_for_a_client_over_the_network() {
    let remote = result(&["--client-rtt", "200us"]);
    let tls = result(&["--client-rtt", "200us", "--set", "ssl=on"]);
    let local_ssl = result(&["--set", "ssl=on"]);
    let local = result(&[]);
    assert_eq!(tls["run"]["client_tls"], true);
    assert!(remote["run"].get("client_tls").is_none());
    assert!(local_ssl["run"].get("client_tls").is_none());
    assert_eq!(tls["settings"]["ssl"], "on");
    // Seven statements of tpcb-like, each with the workload's TLS CPU.
    let extra = cpu_us(&tls) - cpu_us(&remote);
    assert!((40.0..80.0).contains(&extra), "{extra}");
    // Over the socket, ssl = on changes nothing.
    assert_eq!(cpu_us(&local_ssl), cpu_us(&local));
    assert_eq!(local_ssl["summary"], local["summary"]);
}

#[test]
fn rds_stripes_a_gp3_volume_of_400_gib_and_more_over_four() {
    let device = |flags: &[&str]| -> String {
        let v = model_json(SHORT, &[&["--instance", "m6i.xlarge"][..], flags].concat());
        v["run"]["device"]["name"].as_str().unwrap().to_string()
    };
    let rds = |d| device(&["--service", "rds", "--device", d]);
    let striped = rds("gp3:size_gib=1000,iops=16000,mibps=500");
    assert!(
        striped.starts_with("raid0-4x512k-gp3-4000iops-125mibps-250gib"),
        "{striped}"
    );
    // Under 400 GiB, or with no size, one volume.
    for d in ["gp3:size_gib=300", "gp3:iops=12000"] {
        let one = rds(d);
        assert!(one.starts_with("gp3"), "{d}: {one}");
    }
    // Without --service rds, a large gp3 volume is one volume.
    let one = device(&["--device", "gp3:size_gib=1000"]);
    assert!(one.starts_with("gp3"), "{one}");
}
