use super::*;

/// A valid profile as JSON, to break one field at a time.
fn base() -> Value {
    serde_json::json!({
        "name": "test",
        "description": "a test disk",
        "source": "made up for a test",
        "read": { "median_us": 100.0, "p99_us": 300.0 },
        "write": { "median_us": 50.0, "p99_us": 150.0 },
        "flush": { "median_us": 80.0, "p99_us": 200.0 },
        "channels": 8,
        "bandwidth_mib_s": 1000.0,
        "network_rtt_us": 20.0,
        "flush_to_media": false,
        "caps": { "iops": 3000, "mib_s": 125 }
    })
}

fn with(edit: impl FnOnce(&mut Value)) -> String {
    let mut v = base();
    edit(&mut v);
    match Profile::from_json(&v.to_string(), "test.json") {
        Ok(_) => panic!("expected an error for {v}"),
        Err(e) => format!("{e:#}"),
    }
}

fn expect(err: &str, parts: &[&str]) {
    for p in parts {
        assert!(err.contains(p), "error {err:?} lacks {p:?}");
    }
}

#[test]
fn base_profile_is_valid() {
    let p = Profile::from_json(&base().to_string(), "test.json").unwrap();
    assert_eq!(p.latency_io_kib, 8);
    assert_eq!(p.caps.bucket_ms, 10.0);
    assert!(!p.caps.flush_counts_as_io);
    assert_eq!(p.caps.read_iops, None);
}

#[test]
fn missing_fields_are_named_with_their_path() {
    let e = with(|v| {
        v.as_object_mut().unwrap().remove("channels");
    });
    expect(&e, &["test.json: ", "missing field `channels`"]);
    let e = with(|v| {
        v["read"].as_object_mut().unwrap().remove("p99_us");
    });
    expect(&e, &["test.json: read: ", "missing field `p99_us`"]);
    let e = with(|v| {
        v.as_object_mut().unwrap().remove("flush_to_media");
    });
    expect(&e, &["test.json: ", "`flush_to_media`"]);
}

#[test]
fn unknown_fields_are_errors() {
    let e = with(|v| v["caps"]["iop"] = 5.into());
    expect(&e, &["test.json: caps.iop: ", "unknown field `iop`"]);
    let e = with(|v| v["colour"] = "blue".into());
    expect(&e, &["test.json: ", "unknown field `colour`"]);
}

#[test]
fn wrong_types_name_the_field() {
    let e = with(|v| v["channels"] = (-1).into());
    expect(&e, &["test.json: channels: ", "-1"]);
    let e = with(|v| v["write"]["median_us"] = "fast".into());
    expect(&e, &["test.json: write.median_us: ", "invalid type"]);
    let e = with(|v| v["caps"]["burst"] = serde_json::json!({"size_ios": "x"}));
    expect(&e, &["test.json: caps.burst.size_ios: "]);
}

#[test]
fn latencies_must_be_positive_and_ordered() {
    let e = with(|v| v["read"]["median_us"] = (-3.0).into());
    expect(&e, &["test.json: read.median_us: -3 must be above 0"]);
    let e = with(|v| v["flush"]["p99_us"] = 0.into());
    expect(&e, &["test.json: flush.p99_us: 0 must be above 0"]);
    let e = with(|v| {
        v["network_rtt_us"] = 0.into();
        v["read"] = serde_json::json!({"median_us": 0.5, "p99_us": 0.2});
    });
    expect(
        &e,
        &["test.json: read.p99_us: 0.2 is below read.median_us 0.5"],
    );
}

#[test]
fn latency_must_exceed_round_trip_and_transfer() {
    let e = with(|v| v["write"] = serde_json::json!({"median_us": 25.0, "p99_us": 30.0}));
    expect(
        &e,
        &[
            "test.json: write.median_us: 25 is not above the fixed part",
            "network_rtt_us 20",
        ],
    );
    let e = with(|v| v["flush"] = serde_json::json!({"median_us": 20.0, "p99_us": 30.0}));
    expect(&e, &["test.json: flush.median_us: 20 is not above"]);
}

#[test]
fn zero_caps_channels_and_bandwidth_are_errors() {
    let e = with(|v| v["caps"]["iops"] = 0.into());
    expect(&e, &["test.json: caps.iops: 0 must be above 0", "null"]);
    let e = with(|v| v["caps"]["write_mib_s"] = (-5.0).into());
    expect(&e, &["test.json: caps.write_mib_s: -5 must be above 0"]);
    let e = with(|v| v["channels"] = 0.into());
    expect(&e, &["test.json: channels: 0 must be between 1"]);
    let e = with(|v| v["bandwidth_mib_s"] = 0.into());
    expect(&e, &["test.json: bandwidth_mib_s: 0 must be above 0"]);
    let e = with(|v| v["network_rtt_us"] = (-1.0).into());
    expect(&e, &["test.json: network_rtt_us: -1"]);
    let e = with(|v| v["contention_us"] = (-2.0).into());
    expect(&e, &["test.json: contention_us: -2 must be between 0"]);
    let e = with(|v| v["contention_us"] = "lots".into());
    expect(&e, &["test.json: contention_us"]);
    let e = with(|v| v["caps"]["op_size_kib"] = 0.into());
    expect(&e, &["test.json: caps.op_size_kib: 0"]);
    let e = with(|v| v["latency_io_kib"] = 0.into());
    expect(&e, &["test.json: latency_io_kib: 0"]);
    let e = with(|v| v["caps"]["bucket_ms"] = (-1.0).into());
    expect(&e, &["test.json: caps.bucket_ms: -1"]);
}

#[test]
fn null_cap_means_no_cap() {
    let mut v = base();
    v["caps"]["iops"] = Value::Null;
    let p = Profile::from_json(&v.to_string(), "t.json").unwrap();
    assert_eq!(p.caps.iops, None);
    assert_eq!(p.caps.mib_s, Some(125.0));
    v.as_object_mut().unwrap().remove("caps");
    let p = Profile::from_json(&v.to_string(), "t.json").unwrap();
    assert_eq!(p.caps, Caps::default());
    assert_eq!(p.caps_text(), "none");
}

#[test]
fn burst_needs_a_rate_above_its_baseline() {
    let e = with(|v| {
        v["caps"] = serde_json::json!({"burst": {"size_ios": 1000, "baseline_iops": 100}})
    });
    expect(&e, &["test.json: caps.burst: needs caps.iops"]);
    let e =
        with(|v| v["caps"]["burst"] = serde_json::json!({"size_ios": 1000, "baseline_iops": 3000}));
    expect(
        &e,
        &["test.json: caps.burst.baseline_iops: 3000 must be below caps.iops 3000"],
    );
    let e = with(|v| v["caps"]["burst"] = serde_json::json!({"size_ios": 0, "baseline_iops": 300}));
    expect(&e, &["test.json: caps.burst.size_ios: 0 must be above 0"]);
}

#[test]
fn names_descriptions_and_sources_are_checked() {
    let e = with(|v| v["name"] = "My Disk".into());
    expect(&e, &["test.json: name: ", "lowercase"]);
    let e = with(|v| v["description"] = "two\nlines".into());
    expect(&e, &["test.json: description: "]);
    let e = with(|v| v["source"] = "".into());
    expect(&e, &["test.json: source: is empty"]);
}

#[test]
fn bad_json_names_the_origin() {
    let e = format!("{:#}", Profile::from_json("{ nope", "x.json").unwrap_err());
    expect(&e, &["x.json: not valid JSON"]);
}

#[test]
fn load_names_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mine.json");
    let mut v = base();
    v["read"]["p99_us"] = 1.into();
    std::fs::write(&path, v.to_string()).unwrap();
    let e = format!("{:#}", Profile::load(&path).unwrap_err());
    expect(
        &e,
        &["mine.json: read.p99_us: 1 is below read.median_us 100"],
    );
    let e = format!(
        "{:#}",
        Profile::load(&dir.path().join("absent.json")).unwrap_err()
    );
    expect(&e, &["device profile ", "absent.json: cannot open"]);
    v["read"]["p99_us"] = 300.into();
    std::fs::write(&path, v.to_string()).unwrap();
    let p = Profile::load(&path).unwrap();
    assert_eq!(p.name, "test");
}

#[test]
fn every_shipped_profile_loads_and_round_trips() {
    let all = shipped();
    assert_eq!(all.len(), SHIPPED.len());
    for p in &all {
        assert_eq!(Profile::shipped(&p.name).as_ref(), Some(p));
        assert!(!p.source.is_empty());
        let again = Profile::from_json(&p.to_json().to_string(), "again").unwrap();
        assert_eq!(&again, p);
    }
    assert!(Profile::shipped("floppy").is_none());
}

#[test]
fn fmt_num_groups_thousands_and_keeps_two_decimals() {
    assert_eq!(fmt_num(200_000.0), "200,000");
    assert_eq!(fmt_num(62.5), "62.5");
    assert_eq!(fmt_num(999.0), "999");
    assert_eq!(fmt_num(1e6), "1,000,000");
    assert_eq!(fmt_num(190.73486328125), "190.73");
}

#[test]
fn to_json_shows_absent_caps_as_null() {
    let p = Profile::shipped("nvme").unwrap();
    let v = p.to_json();
    assert!(v["caps"]["iops"].is_null());
    assert_eq!(v["name"], "nvme");
}
