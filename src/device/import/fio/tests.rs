use super::*;

#[test]
fn sizes_parse_like_fio() {
    assert_eq!(parse_size("4k"), Some(4096));
    assert_eq!(parse_size("4K"), Some(4096));
    assert_eq!(parse_size("1M"), Some(1 << 20));
    assert_eq!(parse_size("8192"), Some(8192));
    assert_eq!(parse_size("1mib"), Some(1 << 20));
    assert_eq!(parse_size("x"), None);
    assert_eq!(parse_size("4q"), None);
}

#[test]
fn every_slot_has_a_distinct_label() {
    let labels: std::collections::BTreeSet<String> = Slot::all().iter().map(Slot::label).collect();
    assert_eq!(labels.len(), 16);
}

#[test]
fn classification_by_options() {
    let c = |rw, bs, qd, sync| classify(rw, bs, bs, qd, sync);
    let s = c("randread", 4096, 1, "").unwrap();
    assert_eq!(
        (s.size, s.depth, s.kind),
        (Size::Small, Depth::Qd1, Kind::Read)
    );
    let s = c("randwrite", 4096, 256, "fsync").unwrap();
    assert_eq!(
        (s.size, s.depth, s.kind),
        (Size::Small, Depth::Parallel, Kind::SyncedWrite)
    );
    let s = c("rw", 1 << 20, 64, "").unwrap();
    assert_eq!(
        (s.size, s.depth, s.kind),
        (Size::Large, Depth::Parallel, Kind::Mixed)
    );
    assert!(c("trim", 4096, 1, "").is_err());
    assert!(c("randread", 64 * 1024, 1, "").is_err());
}

#[test]
fn not_fio_json_is_refused() {
    let e = format!("{:#}", FioFile::parse("{\"a\": 1}", "x.json").unwrap_err());
    assert!(e.contains("x.json") && e.contains("fio version"), "{e}");
    let e = format!("{:#}", FioFile::parse("nope", "y.json").unwrap_err());
    assert!(e.contains("y.json: not valid JSON"), "{e}");
    let e = format!(
        "{:#}",
        FioFile::parse(r#"{"fio version": "fio-3.33", "jobs": []}"#, "z.json").unwrap_err()
    );
    assert!(e.contains("z.json: jobs: empty"), "{e}");
}

#[test]
fn more_than_a_fio_output_holds_is_refused_while_read() {
    // Three million empty jobs: 100 MB as values, past the budget.
    let text = format!(
        r#"{{"fio version": "fio-3.33", "jobs": [{}{{}}]}}"#,
        "{},".repeat(3 << 20)
    );
    let e = format!("{:#}", FioFile::parse(&text, "big.json").unwrap_err());
    assert!(
        e.starts_with("big.json: holds more than pgiosim keeps in memory"),
        "{e}"
    );
}

#[test]
fn the_fields_not_read_are_skipped() {
    let v = read_kept(r#"{"jobs": [{"read": {"clat_ns": {"bins": {"1": 2}, "N": 1}}}]}"#).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"jobs": [{"read": {"clat_ns": {"N": 1}}}]})
    );
}

fn job(slot: Slot, read_iops: f64, write_iops: f64) -> FioJob {
    let lat = LatencyNs {
        mean: 600e3,
        p50: Some(550e3),
        p99: Some(1800e3),
    };
    let dir = |iops: f64| DirFigures {
        ios: (iops * 30.0) as u64,
        iops,
        bw_bytes: iops * 4096.0,
        clat: Some(lat),
        lat_mean_ns: Some(lat.mean),
    };
    FioJob {
        origin: "gp3.json".into(),
        index: 0,
        name: slot.label(),
        rw: "randread".into(),
        bs_read: 4096,
        bs_write: 4096,
        iodepth: if slot.depth == Depth::Qd1 { 1 } else { 64 },
        numjobs: if slot.depth == Depth::Qd1 { 1 } else { 8 },
        sync: if slot.kind == Kind::SyncedWrite {
            "fsync".into()
        } else {
            String::new()
        },
        read: dir(read_iops),
        write: dir(write_iops),
        sync_lat: None,
        slot: Ok(slot),
    }
}

#[test]
fn agreeing_parallel_iops_are_a_cap() {
    // A gp3-like battery: every parallel 4k test stops at ~3,000 IOPS.
    let s = |depth, kind| Slot {
        size: Size::Small,
        depth,
        kind,
    };
    let file = FioFile {
        origin: "gp3.json".into(),
        version: "fio-3.33".into(),
        time: String::new(),
        disks: vec![],
        jobs: vec![
            job(s(Depth::Qd1, Kind::Read), 1800.0, 0.0),
            job(s(Depth::Qd1, Kind::Write), 0.0, 1600.0),
            job(s(Depth::Parallel, Kind::Read), 3010.0, 0.0),
            job(s(Depth::Parallel, Kind::Write), 0.0, 2990.0),
            job(s(Depth::Parallel, Kind::Mixed), 1500.0, 1495.0),
        ],
    };
    let base = Profile::shipped("nvme").unwrap();
    let imp = build(&[file], "ebs", &base).unwrap();
    assert_eq!(imp.profile.caps.iops, Some(3000.0));
    assert_eq!(imp.profile.read.median_us, 550.0);
    // Channels are doubled, so the cap, not they, sets the rate.
    let iops = microbench::read_iops(&imp.profile, 512, 1);
    assert!((iops - 3000.0).abs() < 100.0, "{iops}");
    assert!(imp.warning().unwrap().contains("1M read QD1"));
}

#[test]
fn sig3_rounds() {
    assert_eq!(sig3(36.096), 36.1);
    assert_eq!(sig3(92077.0), 92100.0);
    assert_eq!(sig3(0.0), 0.0);
    assert_eq!(sig3(64.60000001), 64.6);
    assert_eq!(sig3(3893.2), 3890.0);
}
