//! The command line: `model` and the one-shot commands on the model
//! (`vacuum`, `catchup`, `sweep --mode model`, `devices`, `instances`,
//! `workload from-server-cpu`), each with a set of flags picked from the
//! real ones and values picked from a dictionary of hostile and ordinary
//! ones (or, for most flags, a few bytes of the input), run in-process
//! through the same entry point as the binary. Any outcome but exit 0 to 3
//! is a failure: a panic fails the target, and so does an error whose exit
//! code is another.
//!
//! One execution stays well under a second: `-T` is at most 2 s of
//! simulated time, and the flags whose value sets how much the model holds
//! or does (sizes, clients, CPUs, a sweep's clients) take only dictionary
//! values, which leave out the few accepted ones that would hold
//! gigabytes (shared_buffers 512GB, --os-cache 1TB): those are bounded
//! on purpose, and tests/hardening.rs covers the refusals just past them.
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use clap::Parser;
use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use pgiosim::cli::{self, Cli};

/// What a flag takes.
#[derive(Clone, Copy)]
enum Kind {
    /// Nothing (a switch).
    Switch,
    /// A value from this list only: it sets how much the run holds or does.
    Only(&'static [&'static str]),
    /// A value from this list, or a few bytes of the input.
    Or(&'static [&'static str]),
    /// An output path (in a scratch directory), or `-`.
    Output,
    /// An input file.
    Input,
}
use Kind::*;

const DURATIONS_SHORT: &[&str] = &["1", "2", "0.5", "200ms", "100ms", "1ms", "1us", "0", "-1"];
const DURATIONS: &[&str] = &[
    "0",
    "1",
    "1ms",
    "10ms",
    "1s",
    "5min",
    "1d",
    "2d",
    "-1ms",
    "1e308",
    "NaN",
    "inf",
    "100parsecs",
    "2147483648",
    "0.000001us",
    "1us",
    "1e-300",
    "",
];
const NUMS: &[&str] = &[
    "0",
    "1",
    "2",
    "16",
    "1000",
    "-1",
    "-0",
    "1e308",
    "1e-300",
    "NaN",
    "inf",
    "-inf",
    "0.0001",
    "4294967296",
    "2147483647",
    "18446744073709551616",
    "1.5",
    "abc",
    "",
    "0x10",
];
const COUNTS: &[&str] = &[
    "1",
    "2",
    "4",
    "16",
    "64",
    "0",
    "-1",
    "100000",
    "4294967296",
    "1e308",
    "x",
];
const SIZES: &[&str] = &[
    "0",
    "1",
    "8kB",
    "1MB",
    "16MB",
    "64MB",
    "128MB",
    "1GB",
    "2TB",
    "100TB",
    "1e308",
    "NaN",
    "-1",
    "inf",
    "-1MB",
    "18446744073709551615",
    "1.5GB",
    "99999999999TB",
    "8",
    "",
    "1 GB",
    "1XB",
    "1e3MB",
];
/// Sizes of work (a vacuum's heap and index, a catch-up's backlog): what
/// is accepted stays small, as a model of a GB takes a second or more here.
const WORK_SIZES: &[&str] = &[
    "0",
    "1",
    "8kB",
    "1MB",
    "16MB",
    "64MB",
    "2TB",
    "100TB",
    "1e308",
    "NaN",
    "-1",
    "inf",
    "-1MB",
    "18446744073709551615",
    "99999999999TB",
    "8",
    "",
    "1 MB",
    "1XB",
    "1e1MB",
];
const SCALES: &[&str] = &[
    "1", "10", "100", "1000000", "1000001", "0", "-1", "1e308", "NaN",
];
const SHARES: &[&str] = &["0", "0.5", "1", "1.5", "-0.1", "NaN", "1e308", "inf", "x"];
const PCTS: &[&str] = &[
    "1", "2", "50", "100", "0", "-1", "101", "NaN", "1e-300", "1e308",
];
const WORKLOADS: &[&str] = &[
    "tpcb-like",
    "simple-update",
    "select-only",
    "nope",
    "",
    "-",
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../workloads/large-updates.json"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../workloads/example-orders.json"
    ),
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../src/device/profiles/gp3.json"
    ),
    "/dev/null",
    "/nonexistent.json",
];
const BUILTINS: &[&str] = &[
    "tpcb-like",
    "simple-update",
    "select-only",
    "tpcb-like@1",
    "select-only@9",
    "tpcb-like@1e308",
    "select-only@0",
    "tpcb-like@-1",
    "tpcb-like@NaN",
    "tpcb-like@2147483648",
    "tpcb",
    "nope@1",
    "@1",
    "tpcb-like@",
];
const DEVICES: &[&str] = &[
    "nvme",
    "gp3",
    "gp2",
    "io2",
    "ceph-rbd",
    "hetzner-volume",
    "azure-premium-v2",
    "gp3:iops=20000",
    "gp3:iops=1,iops=2",
    "gp3:throughput=1e308",
    "gp3:iops=NaN",
    "io2:iops=0",
    "gp3:iops=16000,throughput=1000",
    "nvmee",
    "",
    "instance-store",
    "m6id.4xlarge",
    "/dev/null",
    "/nonexistent.json",
    concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../examples/devices/this-vm.json"
    ),
    concat!(env!("CARGO_MANIFEST_DIR"), "/../workloads/tpcb-like.json"),
];
const DEVICE_LISTS: &[&str] = &["nvme", "nvme,gp3", "gp3,gp3", "nvme,", ",", "nvmee,gp3"];
const INSTANCES: &[&str] = &[
    "m6id.4xlarge",
    "m6id.large",
    "i4i.xlarge",
    "nope",
    "",
    "m6id.4xlarge:gp3",
];
const SETS: &[&str] = &[
    "shared_buffers=16MB",
    "shared_buffers=1GB",
    "shared_buffers=600GB",
    "shared_buffers=lots",
    "shared_buffers=0",
    "shared_buffers=-1",
    "synchronous_commit=off",
    "synchronous_commit=remote_apply",
    "commit_delay=10",
    "commit_delay=100000",
    "commit_siblings=0",
    "checkpoint_timeout=30s",
    "checkpoint_timeout=1",
    "checkpoint_timeout=1d",
    "max_wal_size=2MB",
    "max_wal_size=1TB",
    "min_wal_size=1TB",
    "wal_buffers=-1",
    "wal_buffers=1TB",
    "archive_mode=on",
    "archive_timeout=1",
    "autovacuum=off",
    "autovacuum_naptime=1",
    "fsync=off",
    "full_page_writes=off",
    "wal_writer_delay=1ms",
    "bgwriter_lru_maxpages=0",
    "bgwriter_delay=10ms",
    "checkpoint_completion_target=0",
    "checkpoint_completion_target=NaN",
    "work_mem=1e308",
    "maintenance_work_mem=1MB",
    "effective_io_concurrency=1000",
    "maintenance_io_concurrency=0",
    "recovery_prefetch=on",
    "synchronous_standby_names=ANY 1 (s1)",
    "synchronous_standby_names=s1",
    "max_connections=1",
    "NaN=1",
    "=",
    "x",
    "shared_buffers",
    "shared_buffers==1",
    "wal_segment_size=1GB",
    "huge_pages=on",
    "io_method=io_uring",
    "wal_compression=on",
    "data_checksums=on",
];
const SWEEP_SETS: &[&str] = &[
    "commit_delay=0,5,10",
    "shared_buffers=16MB,32MB",
    "synchronous_commit=on,off",
    "commit_delay=0,,5",
    "commit_delay=",
    "commit_delay=0,NaN",
    "shared_buffers=16MB,600GB",
];
const STANDBYS: &[&str] = &[
    "name=s1,rtt=1ms,device=nvme",
    "name=s2,rtt=1ms,rtt_p99=3ms,device=nvme",
    "name=s1",
    "name=s1,rtt=1ms,rtt=2ms",
    "name=s1,rtt=1e308",
    "name=s1,rtt=NaN",
    "name=,rtt=1ms",
    "rtt=1ms",
    "name=s1,device=nvmee",
    "name=s1,rtt=-1ms",
    "name=s1,rtt=1d",
    "name=s1,rtt=2d",
    "name=s1,device=gp3:iops=1",
    "",
    ",",
    "name=s1,name=s2",
];
const ARCHIVES: &[&str] = &[
    "s3",
    "s3,parallel=4",
    "latency=80ms,throughput=90MB/s,parallel=1",
    "latency=100000000d",
    "parallel=0",
    "latency=1ms,latency=2ms",
    "throughput=NaN",
    "",
    "s3,parallel=1e308",
    "throughput=0",
    "throughput=1TB/s",
    "latency=0",
    "s3,s3",
    "nope",
];
const PROTOCOLS: &[&str] = &["simple", "extended", "prepared", "bogus", ""];
const CLIENT_LISTS: &[&str] = &[
    "1",
    "1,2",
    "8,2",
    "1,2,4",
    "1,2,...,4",
    "1...1000000",
    "1,2,4,...,4294967296",
    "0",
    "-1",
    "1,,2",
    "",
    "4294967296",
    "2,1,2",
    "1,2,...,1",
    "1,...",
    "...",
    "1,2,4,...,64",
];
const CPU_DURATIONS: &[&str] = &[
    "100us", "1ms", "0", "-1us", "1d", "2d", "NaN", "1e308us", "x",
];

/// `model`'s flags (and, with `--clients`, `--mode` and the outputs,
/// most of `sweep`'s).
const RUN_FLAGS: &[(&str, Kind)] = &[
    ("-b", Or(BUILTINS)),
    ("-N", Switch),
    ("-S", Switch),
    ("--workload", Or(WORKLOADS)),
    ("-c", Only(COUNTS)),
    ("--precision", Or(PCTS)),
    ("-s", Only(SCALES)),
    ("-R", Or(NUMS)),
    ("-L", Or(NUMS)),
    ("--set", Only(SETS)),
    ("--set", Only(SETS)),
    ("--config", Input),
    ("--cpus", Only(COUNTS)),
    ("--threads-per-core", Only(COUNTS)),
    ("--cpu-speed", Or(NUMS)),
    ("-M", Or(PROTOCOLS)),
    ("--client-rtt", Or(DURATIONS)),
    ("-j", Only(COUNTS)),
    ("--os-cache", Only(SIZES)),
    ("--after-init", Switch),
    ("--json", Output),
    ("--seed", Or(NUMS)),
    ("-q", Switch),
    ("--standby", Or(STANDBYS)),
    ("--standby", Or(STANDBYS)),
    ("--standby-file", Input),
    ("--archive", Or(ARCHIVES)),
    ("--instance", Or(INSTANCES)),
];
const MODEL_ONLY: &[(&str, Kind)] = &[("-P", Or(DURATIONS)), ("--device", Or(DEVICES))];
const SWEEP_ONLY: &[(&str, Kind)] = &[
    ("--set", Only(SWEEP_SETS)),
    ("--device", Only(DEVICE_LISTS)),
    ("--parallel", Only(COUNTS)),
    ("--csv", Output),
    ("--markdown", Output),
];
const VACUUM_FLAGS: &[(&str, Kind)] = &[
    ("--bloat", Only(WORK_SIZES)),
    ("--index", Only(WORK_SIZES)),
    ("--dead-rows", Or(SHARES)),
    ("--all-visible", Or(SHARES)),
    ("--dead-pages", Or(SHARES)),
    ("--read-ahead", Only(SIZES)),
    ("--os-cache", Only(SIZES)),
    ("--set", Only(SETS)),
    ("--config", Input),
    ("--json", Output),
    ("--seed", Or(NUMS)),
    ("-q", Switch),
];
const CATCHUP_FLAGS: &[(&str, Kind)] = &[
    ("-b", Or(BUILTINS)),
    ("-N", Switch),
    ("-S", Switch),
    ("--workload", Or(WORKLOADS)),
    ("-s", Only(SCALES)),
    ("--set", Only(SETS)),
    ("--checkpoint-every", Only(WORK_SIZES)),
    ("--os-cache", Only(SIZES)),
    ("--read-ahead", Only(SIZES)),
    ("--config", Input),
    ("--json", Output),
    ("--seed", Or(NUMS)),
    ("-q", Switch),
];
/// Not `--figures`: it models every shipped device, takes no input, and
/// takes 10 s here.
const DEVICES_FLAGS: &[(&str, Kind)] = &[("--sources", Switch)];
const FROM_SERVER_CPU_FLAGS: &[(&str, Kind)] = &[
    ("--workload", Or(WORKLOADS)),
    ("--cpu-us-per-tx", Or(CPU_DURATIONS)),
    ("--cpu-utilization", Or(PCTS)),
    ("--vcpus", Only(COUNTS)),
    ("--tps", Or(NUMS)),
    ("--cpu-speed", Or(NUMS)),
    ("--instance", Or(INSTANCES)),
    ("--counts-from", Input),
    ("--reads-per-tx", Or(NUMS)),
    ("--pages-written-per-tx", Or(NUMS)),
    ("--wal-bytes-per-tx", Or(NUMS)),
    ("--json", Output),
    ("-q", Switch),
];

/// A scratch directory for the outputs, and the input files the flags name.
struct Files {
    dir: PathBuf,
    inputs: Vec<String>,
}

fn files() -> &'static Files {
    static FILES: OnceLock<Files> = OnceLock::new();
    FILES.get_or_init(|| {
        let dir = std::env::var_os("PGIOSIM_FUZZ_TMP")
            .map(PathBuf::from)
            .unwrap_or_else(std::env::temp_dir)
            .join(format!("cli-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        let write = |name: &str, text: &str| {
            let p = dir.join(name);
            std::fs::write(&p, text).expect("a scratch file");
            p.display().to_string()
        };
        let inputs = vec![
            write("small.conf", "shared_buffers = 16MB\ncommit_delay = 10\n"),
            write("bad.conf", "shared_buffers = lots\n"),
            write(
                "include.conf",
                "include 'small.conf'\ninclude_if_exists 'missing.conf'\n",
            ),
            write("loop.conf", "include 'loop.conf'\n"),
            write(
                "standbys.txt",
                "name=s1,rtt=1ms,device=nvme\nname=s2,rtt=2ms\n",
            ),
            write("standbys-dup.txt", "name=s1,rtt=1ms\nname=s1,rtt=2ms\n"),
            write("empty.json", ""),
            write(
                "result.json",
                "{\"schema\": \"pgiosim.result\", \"schema_version\": 3}",
            ),
            concat!(
                env!("CARGO_MANIFEST_DIR"),
                "/../tests/fixtures/result-v1.json"
            )
            .into(),
            concat!(env!("CARGO_MANIFEST_DIR"), "/../workloads/tpcb-like.json").into(),
            "/dev/null".into(),
            "/nonexistent".into(),
            dir.display().to_string(),
        ];
        // Standard output goes nowhere: the commands' reports would drown
        // libFuzzer's own lines (on standard error).
        if let Ok(null) = std::fs::OpenOptions::new().write(true).open("/dev/null") {
            use std::os::fd::AsRawFd;
            // SAFETY: dup2 onto standard output, of a file open for writing.
            unsafe { libc::dup2(null.as_raw_fd(), 1) };
        }
        Files { dir, inputs }
    })
}

fn pick<'a>(u: &mut Unstructured, from: &'a [&'a str]) -> Result<&'a str> {
    Ok(from[u.choose_index(from.len())?])
}

/// A value for a flag of this kind.
fn value(u: &mut Unstructured, kind: Kind, f: &Files) -> Result<Option<String>> {
    Ok(Some(match kind {
        Switch => return Ok(None),
        Only(list) => pick(u, list)?.to_string(),
        Or(list) => {
            if u.ratio(1, 4)? {
                // A few bytes of the input, as text: what no list foresaw.
                let len = u.int_in_range(0..=12)?;
                String::from_utf8_lossy(u.bytes(len)?).replace('\0', "")
            } else {
                pick(u, list)?.to_string()
            }
        }
        Output => match u.int_in_range(0..=5)? {
            0 => "-".into(),
            1 => f.dir.join("nodir/out").display().to_string(),
            2 => f.dir.display().to_string(),
            3 => "/dev/null".into(),
            4 => f.dir.join("out.csv").display().to_string(),
            _ => f.dir.join("out.json").display().to_string(),
        },
        Input => f.inputs[u.choose_index(f.inputs.len())?].clone(),
    }))
}

/// Up to 8 flags from `table`, each with its value.
fn flags(
    u: &mut Unstructured,
    table: &[&[(&str, Kind)]],
    f: &Files,
    out: &mut Vec<String>,
) -> Result<()> {
    let all: Vec<&(&str, Kind)> = table.iter().flat_map(|t| t.iter()).collect();
    for _ in 0..u.int_in_range(0..=8)? {
        let (flag, kind) = all[u.choose_index(all.len())?];
        let v = value(u, *kind, f)?;
        match v {
            // `--flag=value` as well as `--flag value`: clap takes both,
            // and a value starting with '-' only the first way.
            Some(v) if flag.starts_with("--") && u.ratio(1, 3)? => out.push(format!("{flag}={v}")),
            Some(v) => {
                out.push(flag.to_string());
                out.push(v);
            }
            None => out.push(flag.to_string()),
        }
    }
    Ok(())
}

fn command_line(u: &mut Unstructured) -> Result<Vec<String>> {
    let f = files();
    let mut args: Vec<String> = vec!["pgiosim".into()];
    let push = |a: &mut Vec<String>, xs: &[&str]| a.extend(xs.iter().map(|s| s.to_string()));
    match u.int_in_range(0..=6)? {
        0 | 1 => {
            let t = pick(u, DURATIONS_SHORT)?;
            push(&mut args, &["model", "-T", t]);
            flags(u, &[RUN_FLAGS, MODEL_ONLY], f, &mut args)?;
        }
        2 => {
            let t = pick(u, DURATIONS_SHORT)?;
            let c = pick(u, CLIENT_LISTS)?;
            push(
                &mut args,
                &["sweep", "--mode", "model", "-T", t, "--clients", c],
            );
            flags(u, &[RUN_FLAGS, SWEEP_ONLY], f, &mut args)?;
        }
        3 => {
            let d = pick(u, DEVICES)?;
            push(&mut args, &["vacuum", "--device", d]);
            flags(u, &[VACUUM_FLAGS], f, &mut args)?;
        }
        4 => {
            let d = pick(u, DEVICES)?;
            let b = pick(u, WORK_SIZES)?;
            push(&mut args, &["catchup", "--device", d, "--backlog", b]);
            flags(u, &[CATCHUP_FLAGS], f, &mut args)?;
        }
        5 => {
            let o = f.dir.join("workload.json").display().to_string();
            push(&mut args, &["workload", "from-server-cpu", "-o", &o]);
            flags(u, &[FROM_SERVER_CPU_FLAGS], f, &mut args)?;
        }
        _ => {
            if u.ratio(1, 2)? {
                push(&mut args, &["instances"]);
            } else {
                push(&mut args, &["devices"]);
                flags(u, &[DEVICES_FLAGS], f, &mut args)?;
            }
        }
    }
    Ok(args)
}

fuzz_target!(|data: &[u8]| {
    let mut u = Unstructured::new(data);
    let Ok(args) = command_line(&mut u) else {
        return;
    };
    // To see what an input runs: PGIOSIM_FUZZ_SHOW=1 cargo fuzz run cli FILE.
    if std::env::var_os("PGIOSIM_FUZZ_SHOW").is_some() {
        eprintln!("{args:?}");
    }
    let cli = match Cli::try_parse_from(&args) {
        Ok(cli) => cli,
        // clap's refusals (exit 2) and --help (exit 0).
        Err(e) => {
            assert!(
                matches!(e.exit_code(), 0 | 2),
                "{args:?}: clap exit {}",
                e.exit_code()
            );
            return;
        }
    };
    let code = match cli::execute(cli, &pgiosim::stop::Stop::new()) {
        Ok(code) => code,
        Err(e) if pgiosim::output::is_broken_pipe(&e) => 0,
        Err(e) => {
            // Rendered as main does, so a panic in a Display is found too.
            let _ = format!("{e:#}");
            i32::from(pgiosim::error::exit_code(&e))
        }
    };
    assert!((0..=3).contains(&code), "{args:?}: exit {code}");
});
