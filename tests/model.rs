//! `pgiosim model`: the core in virtual time against device models, driven
//! through the binary.

use std::path::Path;

use serde_json::Value;

mod common;
use common::{example_device, pgiosim, text};

/// Run `model` with `--json -` and parse the result.
fn model(args: &[&str]) -> Value {
    let mut all = vec!["model", "-q", "--json", "-"];
    all.extend_from_slice(args);
    let o = pgiosim(&all);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    // With --json -, standard output is the JSON alone.
    serde_json::from_slice(&o.stdout).unwrap()
}

fn num(v: &Value, path: &[&str]) -> f64 {
    let mut x = v;
    for p in path {
        x = &x[p];
    }
    x.as_f64().unwrap_or_else(|| panic!("{path:?}: {x}"))
}

/// A profile JSON with these read/flush latencies and IOPS cap.
fn profile(dir: &Path, name: &str, read_us: f64, flush_us: f64, iops: Option<u32>) -> String {
    let caps = match iops {
        Some(n) => format!(r#"{{ "iops": {n}, "op_size_kib": 256 }}"#),
        None => "null".into(),
    };
    let text = format!(
        r#"{{
  "name": "{name}",
  "description": "test device",
  "source": "tests/model.rs",
  "read": {{ "median_us": {read_us}, "p99_us": {p99r} }},
  "write": {{ "median_us": 20, "p99_us": 40 }},
  "flush": {{ "median_us": {flush_us}, "p99_us": {p99f} }},
  "channels": 8,
  "bandwidth_mib_s": 2000,
  "flush_to_media": false,
  "caps": {caps}
}}"#,
        p99r = read_us * 2.0,
        p99f = flush_us * 1.2,
    );
    let path = dir.join(format!("{name}.json"));
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

#[test]
fn same_seed_gives_identical_json() {
    let args = [
        "-s", "20", "-c", "8", "-T", "3", "--device", "gp3", "--seed", "11",
    ];
    let a = model(&args);
    let b = model(&args);
    assert_eq!(a, b);
    let mut other = args.to_vec();
    other[9] = "12";
    assert_ne!(a["summary"], model(&other)["summary"]);
}

#[test]
fn result_is_marked_modelled_with_the_profile() {
    let r = model(&["-s", "1", "-T", "1", "--device", "nvme", "--seed", "1"]);
    assert_eq!(r["run"]["mode"], "model");
    assert_eq!(r["run"]["device"]["name"], "nvme");
    assert_eq!(r["schema"], "pgiosim.result");
    // Virtual time has no late timers to report.
    assert!(r["run"].get("timer_lag").is_none());
}

#[test]
fn littles_law_holds_in_a_closed_loop() {
    let capped = example_device("this-vm-gp3cap");
    for (clients, device) in [("1", "gp3"), ("16", "nvme"), ("32", capped.as_str())] {
        let r = model(&[
            "-s", "50", "-c", clients, "-T", "20", "--device", device, "--seed", "3",
        ]);
        let tps = num(&r, &["summary", "tps"]);
        let lat = num(&r, &["summary", "latency_ms", "average"]) / 1e3;
        let n: f64 = clients.parse().unwrap();
        assert!(
            (tps * lat - n).abs() / n < 0.02,
            "{device} c{clients}: tps×lat = {}",
            tps * lat
        );
    }
}

#[test]
fn more_iops_never_lowers_tps_when_io_bound() {
    let d = tempfile::tempdir().unwrap();
    let mut last = 0.0;
    for iops in [500, 1000, 2000, 4000, 8000, 16000] {
        let p = profile(d.path(), &format!("cap{iops}"), 500.0, 500.0, Some(iops));
        // Scale 200 (3 GB) against 128 MB of shared_buffers: every
        // transaction misses, so the IOPS cap binds.
        let r = model(&[
            "-s", "200", "-c", "32", "-T", "20", "--device", &p, "--seed", "5",
        ]);
        let tps = num(&r, &["summary", "tps"]);
        assert!(tps >= last * 0.99, "{iops} IOPS: {tps} tps after {last}");
        last = tps;
    }
    // And the cap really bound at the low end.
    let p = profile(d.path(), "cap500b", 500.0, 500.0, Some(500));
    let r = model(&[
        "-s", "200", "-c", "32", "-T", "20", "--device", &p, "--seed", "5",
    ]);
    assert!(num(&r, &["summary", "tps"]) < 400.0);
}

#[test]
fn one_ms_flush_bounds_one_client_and_group_commit_lifts_many() {
    let d = tempfile::tempdir().unwrap();
    let p = profile(d.path(), "slowflush", 50.0, 1000.0, None);
    let one = model(&[
        "-s", "100", "-c", "1", "-T", "10", "--device", &p, "--seed", "9",
    ]);
    let tps1 = num(&one, &["summary", "tps"]);
    assert!(tps1 <= 1000.0, "{tps1}");
    assert!((num(&one, &["io", "commits_per_flush"]) - 1.0).abs() < 0.05);
    let many = model(&[
        "-s", "100", "-c", "32", "--cpus", "32", "-T", "10", "--device", &p, "--seed", "9",
    ]);
    let per_flush = num(&many, &["io", "commits_per_flush"]);
    assert!(per_flush > 4.0, "commits per flush {per_flush}");
    assert!(num(&many, &["summary", "tps"]) > 3.0 * tps1);
}

#[test]
fn unknown_device_lists_the_shipped_ones() {
    let o = pgiosim(&["model", "--device", "floppy", "-t", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(
        text(&o).contains("gp3") && text(&o).contains("nvme"),
        "{}",
        text(&o)
    );
}

#[test]
fn bad_profile_names_file_and_field() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("broken.json");
    let good = profile(d.path(), "broken", 50.0, 100.0, None);
    let text_in = std::fs::read_to_string(&good)
        .unwrap()
        .replace(r#""median_us": 50"#, r#""median_us": -5"#);
    std::fs::write(&path, text_in).unwrap();
    let o = pgiosim(&["model", "--device", path.to_str().unwrap(), "-t", "1"]);
    // A bad profile file is bad input, like a bad profile name: exit code 2.
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("broken.json") && t.contains("read.median_us"),
        "{t}"
    );
}

#[test]
fn devices_lists_every_shipped_profile() {
    let o = pgiosim(&["devices"]);
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    for name in ["nvme", "gp3", "gp3-16k", "io2", "network-plp", "budget-ssd"] {
        assert!(
            out.lines().any(|l| l.starts_with(name)),
            "{name} missing in\n{out}"
        );
    }
    // One machine's measured disk is an example file, not a built-in.
    assert!(!out.contains("this-vm"), "{out}");
}

#[test]
fn large_data_set_models_without_the_disk() {
    // 500 GB of accounts and 16 GB of shared_buffers, a few virtual seconds.
    let r = model(&[
        "-s",
        "30000",
        "-c",
        "64",
        "--cpus",
        "16",
        "--set",
        "shared_buffers=16GB",
        "-T",
        "5",
        "--device",
        "gp3",
        "--seed",
        "2",
    ]);
    let data = num(&r, &["workload", "data_bytes"]);
    assert!(data > 450e9, "{data}");
    assert!(num(&r, &["summary", "tps"]) > 100.0);
    assert!(num(&r, &["io", "data_reads_per_tx"]) > 0.5);
}

#[test]
fn rate_below_capacity_is_met_with_little_lag() {
    let r = model(&[
        "-s", "10", "-c", "8", "-T", "30", "-R", "500", "--device", "nvme", "--seed", "4",
    ]);
    let tps = num(&r, &["summary", "tps"]);
    assert!((tps - 500.0).abs() / 500.0 < 0.02, "{tps}");
    let lag = num(&r, &["summary", "rate_limit", "lag_avg_ms"]);
    let lat = num(&r, &["summary", "latency_ms", "average"]);
    assert!(lag < 0.1 * lat, "lag {lag} ms against latency {lat} ms");
}

#[test]
fn rate_above_capacity_grows_lag_and_counts_late_and_skipped() {
    // About 5,300 tps is this config's capacity (2 cores).
    let short = model(&[
        "-s", "10", "-c", "8", "--cpus", "2", "-T", "2", "-R", "20000", "--device", "nvme",
        "--seed", "4",
    ]);
    let long = model(&[
        "-s", "10", "-c", "8", "--cpus", "2", "-T", "6", "-R", "20000", "--device", "nvme",
        "--seed", "4",
    ]);
    let lag = |r: &Value| num(r, &["summary", "rate_limit", "lag_avg_ms"]);
    assert!(
        lag(&long) > 2.0 * lag(&short),
        "lag {} then {}",
        lag(&short),
        lag(&long)
    );
    assert!(num(&long, &["summary", "tps"]) < 7000.0);
    let limited = model(&[
        "-s", "10", "-c", "8", "--cpus", "2", "-T", "5", "-R", "20000", "-L", "5", "--device",
        "nvme", "--seed", "4",
    ]);
    assert!(num(&limited, &["summary", "rate_limit", "skipped"]) > 1000.0);
    assert!(num(&limited, &["summary", "rate_limit", "late"]) > 0.0);
}

#[test]
fn every_builtin_workload_runs_in_the_model() {
    let vm = example_device("this-vm");
    for w in ["tpcb-like", "simple-update", "select-only", "large-updates"] {
        let r = model(&[
            "-s", "5", "-c", "4", "-T", "2", "-b", w, "--device", &vm, "--seed", "1",
        ]);
        assert!(num(&r, &["summary", "tps"]) > 100.0, "{w}");
        assert_eq!(r["run"]["workload"], w);
    }
    let r = model(&[
        "-s", "5", "-c", "4", "-T", "2", "-S", "--device", &vm, "--seed", "1",
    ]);
    assert_eq!(
        num(&r, &["io", "wal_fdatasyncs"]),
        num(&r, &["io", "wal_fdatasyncs"])
    );
    assert_eq!(r["run"]["transaction_type"], "<builtin: select only>");
    // Read-only: no commit waits for a flush.
    let wal_share = r["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["bucket"] == "wal_fsync")
        .unwrap()["share"]
        .as_f64()
        .unwrap();
    assert_eq!(wal_share, 0.0);
}

#[test]
fn every_file_in_workloads_loads_and_runs() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "json") {
            let r = model(&[
                "--workload",
                path.to_str().unwrap(),
                "-s",
                "2",
                "-c",
                "4",
                "-T",
                "1",
                "--device",
                "nvme",
                "--seed",
                "1",
            ]);
            assert!(
                num(&r, &["summary", "transactions"]) > 0.0,
                "{}",
                path.display()
            );
            n += 1;
        }
    }
    assert!(n >= 5);
}

#[test]
fn a_bad_workload_file_is_refused_with_file_and_path() {
    let d = tempfile::tempdir().unwrap();
    let path = d.path().join("mine.json");
    let body = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("workloads/example-orders.json"),
    )
    .unwrap()
    .replace(
        r#""table": "orders", "key": "o", "rows": 50"#,
        r#""table": "order", "key": "o", "rows": 50"#,
    );
    std::fs::write(&path, body).unwrap();
    let o = pgiosim(&["model", "--workload", path.to_str().unwrap(), "-t", "1"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("mine.json") && t.contains("transactions[1]") && t.contains("range.table"),
        "{t}"
    );
}

#[test]
fn vacuum_command_reports_seconds_and_rate() {
    let o = pgiosim(&[
        "vacuum", "--bloat", "64MB", "--device", "gp3", "--json", "-", "--seed", "1",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let out = String::from_utf8(o.stdout).unwrap();
    let r: Value = serde_json::from_str(&out[out.find('{').unwrap()..]).unwrap();
    assert_eq!(num(&r, &["pages"]), 8192.0);
    assert_eq!(num(&r, &["schema_version"]), 2.0);
    assert!(num(&r, &["seconds"]) > 0.0 && num(&r, &["mb_per_s"]) > 0.0);
    // Phase I reads the heap, phase II the whole index (pgbench's 0.167 of
    // the heap), phase III every page with dead rows again (20% of rows
    // dead: every page), from the page cache.
    let index = num(&r, &["index_pages"]);
    assert_eq!(index, (8192.0f64 * 274.0 / 1639.3).round());
    assert_eq!(num(&r, &["phases", "scan_heap", "pages_read"]), 8192.0);
    assert_eq!(num(&r, &["phases", "vacuum_indexes", "pages_read"]), index);
    assert_eq!(num(&r, &["phases", "vacuum_heap", "pages"]), 8192.0);
    assert_eq!(num(&r, &["phases", "vacuum_heap", "device_reads"]), 0.0);
    assert_eq!(num(&r, &["index_passes"]), 1.0);
    // Readahead: 128 KiB a request, so 16 pages count one I/O on gp3.
    let reads = num(&r, &["device_reads"]);
    assert_eq!(reads, (8192.0f64 / 16.0) + (index / 16.0).ceil());
    // gp3's 125 MiB/s bounds it: the heap and index read, the WAL written.
    let bytes = num(&r, &["device_read_bytes"]) + num(&r, &["wal_bytes"]);
    let floor = bytes / (125.0 * 1048576.0);
    assert!(
        num(&r, &["seconds"]) > floor,
        "{} vs {floor}",
        num(&r, &["seconds"])
    );
}

#[test]
fn pgbench_threads_on_the_cores_hold_clients_in_the_client_bucket() {
    // 32 clients on 2 cores: with -j 2 each statement waits for its
    // client's thread, which has to get a core like the backends.
    let base = [
        "-s", "10", "-c", "32", "-T", "5", "--cpus", "2", "--device", "nvme", "--seed", "4",
    ];
    let bucket = |r: &Value, name: &str| {
        common::bucket(r, name).map_or(0.0, |b| b["share"].as_f64().unwrap())
    };
    let without = model(&base);
    assert_eq!(bucket(&without, "client"), 0.0);
    assert_eq!(num(&without, &["io", "client_thread_us_per_tx"]), 0.0);
    let mut args = base.to_vec();
    args.extend_from_slice(&["-j", "2"]);
    let with = model(&args);
    assert!(bucket(&with, "client") > 0.05, "{}", with["breakdown"]);
    // The threads spend at least the workload's client CPU per statement
    // (tpcb-like: 7 statements).
    let per_tx = num(&with, &["io", "client_thread_us_per_tx"]);
    assert!(per_tx >= 7.0 * 9.0, "{per_tx}");
    // Bad counts are refused as pgbench refuses them.
    for (j, c) in [("0", "4"), ("5", "4")] {
        let o = pgiosim(&[
            "model", "-s", "1", "-c", c, "-j", j, "-T", "1", "--device", "nvme",
        ]);
        assert!(!o.status.success());
        assert!(text(&o).contains("-j/--jobs"), "{}", text(&o));
    }
}

#[test]
fn standbys_add_a_sync_rep_wait_that_follows_their_round_trip() {
    let sync_rep = |r: &Value| {
        r["breakdown"]
            .as_array()
            .unwrap()
            .iter()
            .find(|b| b["bucket"] == "sync_rep")
            .map(|b| num(b, &["mean_us"]))
            .unwrap()
    };
    let base = ["-c", "1", "-T", "2", "--device", "nvme", "--seed", "3"];
    let with = |extra: &[&str]| {
        let mut a = base.to_vec();
        a.extend_from_slice(extra);
        model(&a)
    };
    let names = "synchronous_standby_names=ANY 1 (s1, s2)";
    let none = model(&base);
    assert_eq!(sync_rep(&none), 0.0);
    assert!(none.get("replication").is_none());
    let near = with(&[
        "--standby",
        "name=s1,rtt=1ms",
        "--standby",
        "name=s2,rtt=3ms",
        "--set",
        names,
    ]);
    let far = with(&[
        "--standby",
        "name=s1,rtt=5ms",
        "--standby",
        "name=s2,rtt=3ms",
        "--set",
        names,
    ]);
    // ANY 1: the nearer standby answers; its round trip plus its write and
    // fdatasync on nvme, and the processes' wake-ups.
    let (n, f) = (sync_rep(&near), sync_rep(&far));
    assert!((1000.0..1300.0).contains(&n), "{n}");
    assert!((3000.0..3300.0).contains(&f), "{f}");
    assert!(num(&near, &["summary", "tps"]) > 1.5 * num(&far, &["summary", "tps"]));
    assert_eq!(near["replication"][0]["name"], "s1");
    assert_eq!(near["replication"][0]["sync_state"], "quorum");
    assert!(num(&near["replication"][1], &["wal_fdatasyncs"]) > 100.0);
    assert_eq!(
        near["settings"]["synchronous_standby_names"],
        "ANY 1 (s1, s2)"
    );
    // remote_write does not wait for the standby's fdatasync; local not at all.
    let write = with(&[
        "--standby",
        "name=s1,rtt=1ms,device=gp3",
        "--set",
        "synchronous_standby_names=s1",
        "--set",
        "synchronous_commit=remote_write",
    ]);
    let flush = with(&[
        "--standby",
        "name=s1,rtt=1ms,device=gp3",
        "--set",
        "synchronous_standby_names=s1",
    ]);
    assert!(
        sync_rep(&write) + 150.0 < sync_rep(&flush),
        "{} {}",
        sync_rep(&write),
        sync_rep(&flush)
    );
    let local = with(&[
        "--standby",
        "name=s1,rtt=1ms",
        "--set",
        "synchronous_standby_names=s1",
        "--set",
        "synchronous_commit=local",
    ]);
    assert_eq!(sync_rep(&local), 0.0);
    assert_eq!(local["settings"]["synchronous_commit"], "local");
}

#[test]
fn standby_mistakes_are_refused_with_what_is_wrong() {
    for (args, says) in [
        (
            vec![
                "--set",
                "synchronous_standby_names=ANY 2 (s1, s2)",
                "--standby",
                "name=s1",
            ],
            "waits for 2 standby(s), but 1 of the declared standbys (s1) match it",
        ),
        (
            vec!["--set", "synchronous_standby_names=s1"],
            "no standby is declared",
        ),
        (
            vec!["--standby", "name=s1,rtt=3"],
            "rtt=3: expected a duration with a unit",
        ),
        (
            vec!["--set", "synchronous_standby_names=FIRST (s1)"],
            "invalid value for synchronous_standby_names: \"FIRST (s1)\"",
        ),
        (
            vec!["--standby", "name=s1,device=nope"],
            "--standby name=s1,device=nope: device=nope: no such shipped profile or file",
        ),
    ] {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_pgiosim"))
            .args(["model", "-T", "1", "-q"])
            .args(&args)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(!o.status.success(), "{args:?} accepted");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

#[test]
fn after_init_starts_the_page_cache_with_the_index_pgbench_built_last() {
    // 16 MiB of buffers, a 64 MiB page cache, scale 200 (about 3 GB heap,
    // 430 MiB of accounts index): cold, the cache holds only what the run
    // read; after pgbench -i, the index's last 64 MiB, root and upper
    // levels included, so more of the index reads hit it.
    let args = [
        "-b",
        "select-only",
        "-s",
        "200",
        "-c",
        "4",
        "-T",
        "2",
        "--seed",
        "3",
        "--set",
        "shared_buffers=16MB",
        "--os-cache",
        "64MB",
        "--device",
        "gp3",
    ];
    let cold = model(&args);
    let mut warm_args = args.to_vec();
    warm_args.push("--after-init");
    let warm = model(&warm_args);
    let hits = |v: &Value| num(v, &["io", "os_cache_hits"]);
    assert!(
        hits(&warm) > 1.5 * hits(&cold),
        "{} vs {}",
        hits(&warm),
        hits(&cold)
    );
    assert!(num(&warm, &["summary", "tps"]) > num(&cold, &["summary", "tps"]));
    // It needs a page cache to start.
    let o = pgiosim(&["model", "-q", "-s", "1", "-T", "1", "--after-init"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("--os-cache"), "{}", text(&o));
}

#[test]
fn without_t_model_runs_until_it_knows_the_steady_state() {
    // 100 MB of data over 16 MB of shared_buffers: the pool fills, then
    // dirty victims cost writes under gp3's cap (the warm-up).
    let args = [
        "-s",
        "6",
        "-c",
        "8",
        "--device",
        "gp3",
        "--seed",
        "3",
        "--set",
        "shared_buffers=16MB",
    ];
    let r = model(&args);
    assert_eq!(r["run"]["stopped_on"], "precision", "{}", r["run"]);
    assert_eq!(num(&r, &["run", "precision_pct"]), 2.0);
    let st = &r["steady_state"];
    assert_eq!(st["reached"], true, "{st}");
    assert_eq!(st["warmup_end"], "shared_buffers_full", "{st}");
    let (mean, ci) = (num(st, &["tps", "mean"]), num(st, &["tps", "ci95"]));
    assert!(ci > 0.0 && ci <= 0.02 * mean, "{mean} ± {ci}");
    // The run was long enough for MSER-5 (50 s) and no longer than the cap.
    let d = num(&r, &["run", "duration_s"]);
    assert!((50.0..=1800.0).contains(&d), "{d} s");
    assert!(num(st, &["warmup_s"]) >= num(st, &["warmup_event_s"]) - 5.0);
    // The buckets' steady means add up to the steady latency.
    let sum: f64 = st["breakdown"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["mean_us"].as_f64().unwrap())
        .sum();
    let lat_us = num(st, &["latency_ms", "mean"]) * 1e3;
    assert!((sum - lat_us).abs() <= 1e-6 * lat_us, "{sum} vs {lat_us}");
    // The seed fixes where it stops, and so every figure.
    assert_eq!(model(&args), r);
}

#[test]
fn without_t_a_transient_far_past_the_cap_stops_the_run_early() {
    // 8.2 M pages of pgbench_accounts, loaded full, at a few hundred tps on
    // gp3: their first updates go on for hours, past twice the 30-minute
    // cap, so the run stops at a minute and says why.
    let args = ["-s", "5000", "-c", "4", "--device", "gp3", "--seed", "3"];
    let r = model(&args);
    assert_eq!(r["run"]["stopped_on"], "transient", "{}", r["run"]);
    let why = r["run"]["stopped_because"].as_str().unwrap();
    assert!(
        why.contains("of the pages of pgbench_accounts are still to be updated"),
        "{why}"
    );
    let d = num(&r, &["run", "duration_s"]);
    assert!((60.0..=61.0).contains(&d), "{d} s");
    // The text says it too, on the duration line.
    let o = pgiosim(&[&["model"][..], &args].concat());
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("(stopped early: the steady state is out of reach of the cap"));
}

#[test]
fn a_run_too_short_for_a_steady_state_says_so() {
    let o = pgiosim(&[
        "model", "-s", "2", "-T", "5", "--device", "nvme", "--seed", "1",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        text(&o).contains("steady state: not reached: the run is too short"),
        "{}",
        text(&o)
    );
}

#[test]
fn precision_is_refused_beside_a_fixed_length_and_in_run() {
    for args in [
        &["model", "-T", "10", "--precision", "2"][..],
        &["model", "--precision", "0"],
        &["model", "--precision", "NaN"],
        &["run", "--precision", "2"],
    ] {
        let o = pgiosim(args);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    }
}

/// A cgroup v1 throttle lets the kernel flusher's writeback past its caps,
/// but only a page cache has a flusher: with none (`--os-cache` 0, as
/// `run`'s O_DIRECT writes) every write is its writer's own and capped.
#[test]
fn kernel_writeback_passes_the_caps_only_with_a_page_cache() {
    let d = common::tmp("model-uncapped-writeback");
    let p = d.path().join("throttled.json");
    std::fs::write(
        &p,
        r#"{
  "name": "throttled", "description": "test device", "source": "tests/model.rs",
  "read": { "median_us": 60, "p99_us": 120 },
  "write": { "median_us": 60, "p99_us": 120 },
  "flush": { "median_us": 60, "p99_us": 120 },
  "channels": 8, "bandwidth_mib_s": 2000, "flush_to_media": false,
  "caps": { "read_iops": 3000, "write_iops": 3000, "limiter": "blk_throttle",
            "bucket_ms": 100, "kernel_writeback_uncapped": true }
}"#,
    )
    .unwrap();
    let p = p.display().to_string();
    let args = [
        "-s", "20", "-c", "8", "-T", "2", "--seed", "3", "--device", &p,
    ];
    let uncapped = |v: &Value| v["run"]["device"]["caps"]["kernel_writeback_uncapped"].clone();
    let direct = model(&[&args[..], &["--os-cache", "0"]].concat());
    assert_eq!(uncapped(&direct), Value::Bool(false));
    let cached = model(&[&args[..], &["--os-cache", "64MB"]].concat());
    assert_eq!(uncapped(&cached), Value::Bool(true));
}
