//! Device profiles from vendor specs, provisioned volumes, instance presets
//! and `profile from-yabs`, driven through the binary.

use serde_json::Value;

mod common;
use common::{pgiosim, text};

/// Run `model` with `--json -` and parse the result.
fn model(args: &[&str]) -> Value {
    let mut all = vec!["model", "-q", "--json", "-"];
    all.extend_from_slice(args);
    let o = pgiosim(&all);
    assert!(o.status.success(), "{args:?}: {}", text(&o));
    // With --json -, standard output is the JSON alone.
    serde_json::from_slice(&o.stdout).unwrap()
}

fn fails(args: &[&str], needles: &[&str]) {
    let o = pgiosim(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o));
    let t = text(&o);
    for n in needles {
        assert!(t.contains(n), "{args:?}: {t:?} lacks {n:?}");
    }
}

const SMALL: [&str; 10] = [
    "-s",
    "10",
    "-c",
    "8",
    "-T",
    "2",
    "--seed",
    "5",
    "--set",
    "shared_buffers=128MB",
];

fn with<'a>(extra: &[&'a str]) -> Vec<&'a str> {
    let mut v: Vec<&str> = SMALL.to_vec();
    v.extend_from_slice(extra);
    v
}

/// `model` with [`SMALL`] and `extra` fails with usage exit code 2.
fn model_fails(extra: &[&str], needles: &[&str]) {
    let mut v = vec!["model"];
    v.extend(with(extra));
    fails(&v, needles);
}

const GIB: f64 = 1_073_741_824.0;

#[test]
fn instance_sets_cpus_page_cache_and_its_volume_limits() {
    let r = model(&with(&[
        "--instance",
        "m6id.4xlarge",
        "--device",
        "gp3:iops=16000,mibps=1000",
    ]));
    let run = &r["run"];
    assert_eq!(run["cpus"], 16);
    assert_eq!(run["threads_per_core"], 2);
    // 64 GiB − 128 MiB shared_buffers − 5% of RAM, to the page.
    let expect = 64.0 * GIB - 128.0 * 1_048_576.0 - 0.05 * 64.0 * GIB;
    let got = run["os_cache_bytes"].as_f64().unwrap();
    assert!((got - expect).abs() <= 8192.0, "{got} vs {expect}");
    let dev = &run["device"];
    assert_eq!(dev["name"], "gp3-16000iops-1000mibps-on-m6id-4xlarge");
    // gp3's own caps bind: 16,000 < the instance's 40,000 burst IOPS, and
    // 1,000 MiB/s < its 1,250 MB/s (1,192 MiB/s).
    assert_eq!(dev["caps"]["iops"], 16000.0);
    assert_eq!(dev["caps"]["mib_s"], 1000.0);
    assert!(dev["caps"]["burst"].is_null());
    assert!(
        dev["source"]
            .as_str()
            .unwrap()
            .contains("Instance limits of m6id.4xlarge")
    );
}

#[test]
fn the_instance_caps_a_volume_faster_than_itself() {
    let r = model(&with(&[
        "--instance",
        "m6id.4xlarge",
        "--device",
        "io2:iops=64000",
    ]));
    let caps = &r["run"]["device"]["caps"];
    assert_eq!(caps["iops"], 40000.0);
    assert_eq!(caps["burst"]["baseline_iops"], 20000.0);
    assert_eq!(caps["burst"]["size_ios"], 20000.0 * 1800.0);
    let mib_s = caps["mib_s"].as_f64().unwrap();
    assert!((mib_s - 1250e6 / 1_048_576.0).abs() < 1e-6, "{mib_s}");
}

#[test]
fn explicit_flags_win_over_the_preset() {
    let r = model(&with(&[
        "--instance",
        "r6i.2xlarge",
        "--cpus",
        "3",
        "--threads-per-core",
        "1",
        "--os-cache",
        "1GB",
        "--device",
        "gp3",
    ]));
    assert_eq!(r["run"]["cpus"], 3);
    // r6i's two threads a core would not divide 3 vCPUs: given, 1 wins.
    assert_eq!(r["run"]["threads_per_core"], 1);
    assert_eq!(r["run"]["os_cache_bytes"], 1u64 << 30);
    // r6i.2xlarge: 12,000 IOPS baseline, above gp3's 3,000: gp3 binds.
    assert_eq!(r["run"]["device"]["caps"]["iops"], 3000.0);
}

#[test]
fn the_instance_store_is_the_default_device() {
    let r = model(&with(&["--instance", "m6id.4xlarge"]));
    let dev = &r["run"]["device"];
    assert_eq!(dev["name"], "m6id-4xlarge-store");
    assert_eq!(dev["caps"]["read_iops"], 268333.0);
    assert_eq!(dev["caps"]["write_iops"], 134167.0);
    // Its MB/s, derived from m6gd.4xlarge's measured 1,262.31 / 533.94 MB/s
    // by the published IOPS (src/device/instance/aws_store.rs), in MiB/s.
    let mib = |v: &Value| v.as_f64().unwrap() * 1_048_576.0 / 1e6;
    assert!((mib(&dev["caps"]["read_mib_s"]) - 1575.4386).abs() < 1e-3);
    assert!((mib(&dev["caps"]["write_mib_s"]) - 795.9652).abs() < 1e-3);
    for spelling in ["instance-store:type=m6id.4xlarge", "m6id.4xlarge"] {
        let same = model(&with(&["--device", spelling, "--cpus", "16"]));
        assert_eq!(same["run"]["device"], *dev, "{spelling}");
    }
    // Azure's L series: its local NVMe, ScyllaDB's measurement, the whole
    // VM's row (1,098,789 / 439,356 IOPS).
    let az = model(&with(&["--instance", "Standard_L16s_v4"]));
    let dev = &az["run"]["device"];
    assert_eq!(dev["name"], "standard-l16s-v4-store");
    assert_eq!(dev["caps"]["read_iops"], 1098789.0);
    assert_eq!(dev["caps"]["write_iops"], 439356.0);
    assert_eq!(az["run"]["cpus"].as_u64(), Some(16));
    // Graviton: one thread a core.
    let g = model(&with(&["--instance", "m6gd.2xlarge"]));
    assert_eq!(
        (
            g["run"]["cpus"].as_u64(),
            g["run"]["threads_per_core"].as_u64()
        ),
        (Some(8), Some(1))
    );
}

#[test]
fn gcp_local_ssd_by_disk_count() {
    // n2-standard-32 with 8 local SSDs: ScyllaDB's measured row.
    let r = model(&with(&[
        "--instance",
        "n2-standard-32",
        "--device",
        "local-ssd:count=8",
    ]));
    let dev = &r["run"]["device"];
    assert_eq!(dev["name"], "n2-standard-32-local-ssd-8");
    assert_eq!(dev["caps"]["read_iops"], 719943.0);
    assert_eq!(dev["caps"]["write_iops"], 399649.0);
    assert_eq!(r["run"]["cpus"], 32);
    let same = model(&with(&[
        "--cpus",
        "32",
        "--device",
        "local-ssd:count=8,type=n2-standard-32",
    ]));
    assert_eq!(same["run"]["device"], *dev);
    // 4 disks: no measurement, Google's published limits.
    let r = model(&with(&[
        "--instance",
        "n2-standard-32",
        "--device",
        "local-ssd:count=4",
    ]));
    assert_eq!(r["run"]["device"]["caps"]["read_iops"], 680000.0);
    // Too few vCPUs for Google's 24-disk limits: a notice, not a refusal.
    let mut v = vec!["model", "--json", "-"];
    v.extend(with(&[
        "--instance",
        "n2-standard-16",
        "--device",
        "local-ssd:count=24",
    ]));
    let o = pgiosim(&v);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("need 24 or more vCPUs on n2 (n2-standard-16 has 16)"),
        "{err}"
    );
    // A count GCP does not offer, and a type that takes none: one line,
    // exit 2.
    model_fails(
        &["--device", "local-ssd:count=9"],
        &[
            "local-ssd:count=9: count=9: Google publishes Local SSD (NVMe) figures for 1-8, 16, 24 or 32 disks, not 9",
        ],
    );
    model_fails(
        &[
            "--instance",
            "c3-standard-8",
            "--device",
            "local-ssd:count=8",
        ],
        &["c3-standard-N-lssd"],
    );
    // z3 brings its own Titanium SSD: the preset's store.
    let z = model(&with(&["--instance", "z3-highmem-14-standardlssd"]));
    assert_eq!(z["run"]["device"]["caps"]["read_iops"], 750000.0);
    assert_eq!(z["run"]["threads_per_core"], 2);
}

#[test]
fn a_gcp_instance_limits_the_disk_type_given() {
    // n2-standard-16 allows 25,000 IOPS on its pd-ssd disks together, less
    // than a 2,000 GiB pd-ssd's own 66,000; and 1,200 MiB/s.
    let r = model(&with(&[
        "--instance",
        "n2-standard-16",
        "--device",
        "pd-ssd:size_gib=2000",
    ]));
    let dev = &r["run"]["device"];
    assert_eq!(dev["name"], "pd-ssd-2000gib-on-n2-standard-16");
    assert_eq!(dev["caps"]["iops"], 25000.0);
    assert_eq!(dev["caps"]["mib_s"], 1200.0);
    assert!(
        dev["source"]
            .as_str()
            .unwrap()
            .contains("on its pd-ssd disks together: 25,000 IOPS and 1,200 MiB/s"),
        "{}",
        dev["source"]
    );
    // pd-balanced's row is its own: 20,000 IOPS.
    let r = model(&with(&[
        "--instance",
        "n2-standard-16",
        "--device",
        "pd-balanced:size_gib=4000",
    ]));
    assert_eq!(r["run"]["device"]["caps"]["iops"], 20000.0);
    // The same server typed as flags, its limits by name.
    let by_flags = model(&with(&[
        "--cpus",
        "16",
        "--volume-limits",
        "n2-standard-16",
        "--device",
        "pd-balanced:size_gib=4000",
    ]));
    assert_eq!(by_flags["run"]["device"], r["run"]["device"]);
    // Hyperdisk Balanced's per-VM limits were not found: the volume keeps
    // its own caps, and a notice says so.
    let mut v = vec!["model", "--json", "-"];
    v.extend(with(&[
        "--instance",
        "c3-standard-22",
        "--device",
        "hyperdisk-balanced:iops=160000,mibps=2400",
    ]));
    let o = pgiosim(&v);
    assert!(o.status.success(), "{}", text(&o));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("c3-standard-22 has no per-VM limit for hyperdisk-balanced"),
        "{err}"
    );
    let r: Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(r["run"]["device"]["caps"]["iops"], 160000.0);
}

#[test]
fn more_provisioned_iops_lift_an_io_bound_run() {
    // Scale 50 (about 800 MB) with 128 MB of shared_buffers and no page
    // cache: every client waits on reads, and gp3's 3,000 IOPS bind.
    let args = |dev: &'static str| {
        vec![
            "-s",
            "50",
            "-c",
            "32",
            "-T",
            "3",
            "--seed",
            "9",
            "--set",
            "shared_buffers=128MB",
            "--cpus",
            "16",
            "--device",
            dev,
        ]
    };
    let tps = |dev| model(&args(dev))["summary"]["tps"].as_f64().unwrap();
    let (base, provisioned) = (tps("gp3"), tps("gp3:iops=12000,mibps=500"));
    assert!(
        provisioned > base * 2.0,
        "gp3 {base:.0} tps, gp3 at 12,000 IOPS {provisioned:.0}"
    );
}

#[test]
fn a_striped_array_of_volumes_adds_their_caps_and_counts_its_ios() {
    // The same read-bound case as above: four gp3 volumes striped give
    // nearly four times one's IOPS to random page reads, and the I/Os the
    // members' caps counted are reported.
    let args = |dev: &'static str| {
        vec![
            "-s",
            "50",
            "-c",
            "32",
            "-T",
            "3",
            "--seed",
            "9",
            "--set",
            "shared_buffers=128MB",
            "--cpus",
            "16",
            "--device",
            dev,
        ]
    };
    let one = model(&args("gp3"));
    let four = model(&args("raid0:n=4,chunk=256k,member=gp3"));
    let tps = |v: &Value| v["summary"]["tps"].as_f64().unwrap();
    assert!(
        tps(&four) > 3.0 * tps(&one) && tps(&four) < 4.5 * tps(&one),
        "gp3 {:.0} tps, four striped {:.0}",
        tps(&one),
        tps(&four)
    );
    assert_eq!(four["run"]["device"]["name"], "raid0-4x256k-gp3");
    let reads = |v: &Value| v["io"]["device_ios"]["reads_per_tx"].as_f64().unwrap();
    let data_reads = |v: &Value| v["io"]["data_reads_per_tx"].as_f64().unwrap();
    assert!(
        (reads(&four) - data_reads(&four)).abs() < 1e-9,
        "page reads never span members"
    );
    assert!((reads(&one) - data_reads(&one)).abs() < 1e-9);
    // The server's limits bind the array as a whole: striping four
    // volumes behind a 3,000 IOPS server gets no more than one volume.
    let behind = |dev: &'static str| {
        let mut a = args(dev);
        a.extend(["--volume-limits", "iops=3000,mbps=500"]);
        tps(&model(&a))
    };
    let (one_limited, four_limited) = (behind("gp3"), behind("raid0:n=4,chunk=256k,member=gp3"));
    assert!(
        (four_limited / one_limited - 1.0).abs() < 0.1,
        "behind a 3,000 IOPS server: one gp3 {one_limited:.0} tps, four striped {four_limited:.0}"
    );
    fails(
        &[
            "model",
            "-s",
            "1",
            "-T",
            "1",
            "--device",
            "raid0:n=4,chunk=12k,member=gp3",
        ],
        &["raid0.chunk_kib: 12 must be a multiple of 8"],
    );
    fails(
        &[
            "model",
            "-s",
            "1",
            "-T",
            "1",
            "--device",
            "raid0:n=4,member=gp4",
        ],
        &["member=gp4"],
    );
}

#[test]
fn bad_presets_and_provisionings_are_refused_clearly() {
    model_fails(
        &["--instance", "m9.huge"],
        &["--instance m9.huge: not a preset", "pgiosim instances"],
    );
    model_fails(
        &["--instance", "m6i.4xlarge"],
        &["m6i.4xlarge: has no instance store", "--device"],
    );
    model_fails(
        &["--instance", "m6id.4xlarge", "--device", "azure-premium-v2"],
        &["azure-premium-v2 is an Azure volume", "AWS server"],
    );
    model_fails(
        &["--device", "gp3:iops=20000"],
        &["gp3: iops 20000 is above gp3's maximum of 16,000"],
    );
    model_fails(
        &["--device", "gp3:iops=3000,mibps=1000"],
        &["at most 0.25 MiB/s per provisioned IOPS"],
    );
    model_fails(
        &["--device", "instance-store"],
        &["instance-store is the instance's own disk", "--instance"],
    );
    model_fails(
        &["--device", "instance-store:type=c6i.large"],
        &["c6i.large has no instance store"],
    );
    // Hetzner's local NVMe exists but was never measured: said, not modelled.
    model_fails(
        &["--instance", "ccx33"],
        &[
            "ccx33's local NVMe (1 × 246 GB) has no measurement",
            "hetzner-nvme",
        ],
    );
    fails(&["run", "--instance", "m6id.4xlarge"], &["--instance"]);
    // shared_buffers larger than the instance's RAM leaves no page cache.
    fails(
        &[
            "model",
            "-s",
            "10",
            "-T",
            "1",
            "--instance",
            "m6i.large",
            "--device",
            "gp3",
            "--set",
            "shared_buffers=8GB",
        ],
        &["leaves no page cache"],
    );
}

#[test]
fn devices_and_instances_list_types_and_sources() {
    let o = pgiosim(&["devices", "--sources"]);
    assert!(o.status.success());
    let t = text(&o);
    for part in [
        "gp2 ",
        "io1 ",
        "azure-premium-ssd",
        "pd-balanced",
        "hyperdisk-balanced",
        "ceph-rbd",
        "hetzner-volume",
        "Provisioned volumes, --device TYPE:KEY=VALUE",
        "instance-store",
        "local-ssd",
        "gp3: shared/reference/device-facts.md",
    ] {
        assert!(t.contains(part), "devices lacks {part:?}");
    }
    let o = pgiosim(&["instances"]);
    assert!(o.status.success());
    let t = text(&o);
    for part in [
        "m6id.4xlarge",
        "268,333 read / 134,167 write IOPS, 1,575 / 796 MB/s (derived)",
        "237,196 read / 98,884 write IOPS, 1,262 / 534 MB/s (measured)",
        "m8gd.4xlarge",
        "aws_io_params.yaml",
        "20,000 IOPS, 625 MB/s (burst 40,000 IOPS, 1,250 MB/s for 30 min)",
        "Standard_D16s_v5",
        "n2-standard-16",
        "ebs-optimized.html",
        "| CPU xeon-8375c ×0.84 |",
        "| CPU graviton4 ×0.95 |",
        "m7i.4xlarge",
        "| CPU xeon-8488c ×0.95 |",
        "r7a.4xlarge",
        "| CPU epyc-9r14 ×0.96 |",
        "| CPU not fixed |",
        "Standard_L16s_v4",
        "1,098,789 read / 439,356 write IOPS, 5,994 / 2,997 MB/s (measured)",
        "azure_io_params.yaml",
        "n2d-standard-16",
        "| CPU xeon-8481c ×0.83 |",
        "z3-highmem-88-highlssd",
        "9,000,000 read / 6,000,000 write IOPS, 38,655 / 32,212 MB/s (published limits)",
        "gcp_io_params.yaml at commit 054c771a6bcefea2394419b97da63b84d908c511",
        "per-VM disk limits: pd-balanced 20,000 IOPS, 1,200 MiB/s; pd-ssd 25,000 IOPS, 1,200 \
         MiB/s; hyperdisk-balanced not found",
        "GoogleCloudPlatform/gcpdiag",
        "| CPU xeon-8581c ×1.07 | per-VM disk limits: pd-balanced not supported; pd-ssd not \
         supported; hyperdisk-balanced not found",
        "ccx33",
        "local NVMe 1 × 246 GB: not measured, no store profile",
        "volume limits: none published",
        "`pgiosim cpus` lists each",
    ] {
        assert!(t.contains(part), "instances lacks {part:?}");
    }
    // The CPU classes the presets name, with their speeds and sources.
    let o = pgiosim(&["cpus"]);
    assert!(o.status.success());
    let t = text(&o);
    let line = |key: &str| {
        t.lines()
            .find(|l| l.trim_start().starts_with(&format!("{key} ")))
            .unwrap_or_else(|| panic!("cpus lacks {key}: {t}"))
            .to_string()
    };
    assert!(line("neoverse-n1-cax").contains(" 0.57 "), "{t}");
    assert!(line("epyc-9454p").contains(" 1.00 "), "{t}");
    assert!(line("epyc-9454p").contains("AMD EPYC 9454P"), "{t}");
    assert!(
        t.contains("SpareCores/sc-inspector-data"),
        "cpus lacks its source"
    );
}

#[test]
fn devices_shows_how_each_provider_counts_io_with_sources() {
    let o = pgiosim(&["devices"]);
    assert!(o.status.success());
    let t = text(&o);
    let row = |name: &str| {
        let head = "How each provider counts I/O";
        let block = &t[t
            .find(head)
            .unwrap_or_else(|| panic!("no counting table: {t}"))..];
        block
            .lines()
            .find(|l| l.trim_start().starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("counting table lacks {name}: {block}"))
            .to_string()
    };
    // Each provider's unit, or that it publishes none.
    for name in [
        "gp3",
        "gp2",
        "io1",
        "io2",
        "azure-premium-ssd",
        "azure-premium-v2",
    ] {
        assert!(row(name).contains(" 256 KiB "), "{}", row(name));
    }
    for name in ["pd-balanced", "pd-ssd", "hyperdisk-balanced"] {
        assert!(row(name).contains("not published*"), "{}", row(name));
    }
    assert!(row("gp3").contains("yes, up to 256 KiB"), "{}", row("gp3"));
    assert!(row("gp3").contains(" 43 KiB "), "{}", row("gp3"));
    assert!(
        row("gp2").contains("credits to 3,000 IOPS"),
        "{}",
        row("gp2")
    );
    assert!(row("azure-premium-ssd").contains("P1-P20"));
    assert!(t.contains("striped over four volumes"), "{t}");
    assert!(t.contains("--volume-limits"), "{t}");

    // Every row's source: a URL and a quoted phrase.
    let o = pgiosim(&["devices", "--sources"]);
    assert!(o.status.success());
    let t = text(&o);
    for name in [
        "gp3",
        "gp2",
        "io1",
        "io2",
        "azure-premium-ssd",
        "azure-premium-v2",
        "pd-balanced",
        "pd-ssd",
        "hyperdisk-balanced",
    ] {
        let line = t
            .lines()
            .find(|l| l.starts_with(&format!("{name} counting: ")))
            .unwrap_or_else(|| panic!("--sources lacks {name}'s counting: {t}"));
        assert!(
            line.contains("Source: ") && line.contains("https://"),
            "{line}"
        );
        assert!(line.contains('"'), "{line}");
    }
    for (part, url) in [
        ("RDS striping: ", "CHAP_Storage.html"),
        ("Server limits: ", "ebs-optimized.html"),
    ] {
        let line = t
            .lines()
            .find(|l| l.starts_with(part))
            .unwrap_or_else(|| panic!("{t}"));
        assert!(line.contains(url), "{line}");
    }
    assert!(t.contains("ebs-io-characteristics.html"), "{t}");
    assert!(t.contains("One operation can transfer between 4k and 256k bytes"));
    assert!(t.contains("each I/O operation less than or equal to 256 KiB"));
}

#[test]
fn from_yabs_builds_a_profile_model_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/yabs-noris.txt");
    let out = dir.path().join("rbd.json");
    let o = pgiosim(&[
        "profile",
        "from-yabs",
        fixture,
        "--disk",
        "/dev/sdb",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let t = text(&o);
    assert!(
        t.contains("caps.iops 3247") && t.contains("fsync latency"),
        "{t}"
    );
    let r = model(&with(&["--device", out.to_str().unwrap()]));
    assert_eq!(r["run"]["device"]["name"], "rbd");
    assert_eq!(r["run"]["device"]["caps"]["iops"], 3247.0);
    // Three disks in the file: which one must be said.
    fails(
        &["profile", "from-yabs", fixture, "-o", out.to_str().unwrap()],
        &["holds 3 disks' results", "2 (/dev/sdb)", "--disk"],
    );
    fails(
        &[
            "profile",
            "from-yabs",
            fixture,
            "--disk",
            "7",
            "-o",
            out.to_str().unwrap(),
        ],
        &["--disk 7: not in"],
    );
}
