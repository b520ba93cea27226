//! One conformance suite for every [`Device`]: each case runs the same body
//! on io_uring, psync, the simulated device and the emulating wrapper of
//! `run --emulate` (over each real engine), so what the driver and the core
//! rely on holds whichever device they talk to.
//!
//! Every call of every case, the case's own and the driver's, goes through
//! the tests' checking wrapper ([`Checked`]): the clock never goes back,
//! each request completes once, with its own token, stamped between its
//! submission and the end of the wait, and a wait that brings nothing has
//! reached its deadline.
//!
//! The real engines work on small real files in a temp dir, buffered.
//! A device hands no bytes back (the core never sees page contents), so
//! what is checked of the data is that reads and writes reach the file at
//! the bytes they address: a write changes exactly its bytes, a read of the
//! last block of a file completes and one past its end fails.

use std::fs::OpenOptions;
use std::os::unix::fs::FileExt;
use std::path::PathBuf;

use anyhow::Result;

use super::Device;
use super::checked::{Checked, drive_checked};
use super::driver::Ending;
use super::emulate::EmulatedDevice;
use super::psync::PsyncDevice;
use super::sim::SimDevice;
use super::uring::UringDevice;
use crate::core::database::Database;
use crate::core::io::{IoCompletion, IoKind, IoRequest, PAGE_BYTES, Token, WAL_SEGMENT_BYTES};
use crate::core::time::{MS, Nanos, SEC};
use crate::datafiles::{OpenFiles, data_offset, fill_blocks, wal_offset};
use crate::device::model::DeviceModel;
use crate::device::profile::Profile;
use crate::workload::{Script, WorkloadSpec};

/// Data blocks in the test's data file.
const DATA_BLOCKS: u64 = 64;
/// WAL segment files open.
const WAL_SEGMENTS: u32 = 2;
/// Bytes of each WAL file written up front (the engines address up to a
/// segment's size; the file grows where a write goes past its end).
const WAL_FILE_BYTES: u64 = 8 * PAGE_BYTES;
/// Longest a case waits for completions before it fails.
const PATIENCE: Nanos = 10 * SEC;

/// The devices under test.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Engine {
    Uring,
    Psync,
    Sim,
    EmulatedUring,
    EmulatedPsync,
}

const ENGINES: [Engine; 5] = [
    Engine::Uring,
    Engine::Psync,
    Engine::Sim,
    Engine::EmulatedUring,
    Engine::EmulatedPsync,
];

/// The profile the simulated device models and the wrapper emulates.
fn profile() -> Profile {
    Profile::shipped("nvme").expect("the nvme profile ships")
}

/// A test that cannot run says why; under `CI=true` it fails instead.
fn skip(reason: &str) {
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{reason} (CI=true: a skipped test fails)");
    }
    eprintln!("SKIP: {reason}");
}

/// The real files under a device, in a temp dir removed at the end.
struct Files {
    data: PathBuf,
    wal: Vec<PathBuf>,
    _dir: tempfile::TempDir,
}

/// Writes a data file of [`DATA_BLOCKS`] blocks after a header block and
/// [`WAL_SEGMENTS`] WAL files, all non-zero, and opens them buffered (the
/// data file read-only when `read_only_data`).
fn make_files(read_only_data: bool) -> (Files, OpenFiles) {
    let dir = tempfile::tempdir().expect("a temp dir");
    let data = dir.path().join("pgiosim.data");
    let mut bytes = vec![0u8; ((DATA_BLOCKS + 1) * PAGE_BYTES) as usize];
    fill_blocks(&mut bytes, 0, 0xda7a);
    std::fs::write(&data, &bytes).expect("write the data file");
    let mut wal = Vec::new();
    let mut wal_files = Vec::new();
    for i in 0..WAL_SEGMENTS {
        let path = dir.path().join(format!("pgiosim.wal.{i:03}"));
        let mut bytes = vec![0u8; WAL_FILE_BYTES as usize];
        fill_blocks(&mut bytes, 0, 0x3a1 + u64::from(i));
        std::fs::write(&path, &bytes).expect("write a WAL file");
        let f = OpenOptions::new().read(true).write(true).open(&path);
        wal_files.push(f.expect("open a WAL file"));
        wal.push(path);
    }
    let open = OpenOptions::new()
        .read(true)
        .write(!read_only_data)
        .open(&data)
        .expect("open the data file");
    let files = OpenFiles {
        data: open,
        data_path: data.clone(),
        wal: wal_files,
        wal_paths: wal.clone(),
        direct: false,
        standby_wal: Vec::new(),
        standby_wal_paths: Vec::new(),
    };
    (
        Files {
            data,
            wal,
            _dir: dir,
        },
        files,
    )
}

/// One device under test, checked at every call.
struct Subject {
    engine: Engine,
    dev: Checked<dyn Device>,
    /// Dropped after the device (fields drop in order): io_uring drains
    /// its operations before the files go.
    files: Option<Files>,
}

impl Subject {
    /// The device `engine` over fresh files (none for the simulated
    /// device); None, having said why, where the engine cannot run here.
    fn new(engine: Engine, read_only_data: bool) -> Option<Subject> {
        let uring = |files| match UringDevice::new(files, 16) {
            Ok(d) => Some(Box::new(d) as Box<dyn Device>),
            Err(e) => {
                skip(&format!("{engine:?}: io_uring is not available: {e:#}"));
                None
            }
        };
        let psync = |files| Box::new(PsyncDevice::new(files, 3).expect("psync")) as Box<dyn Device>;
        let emulate =
            |inner| Box::new(EmulatedDevice::new(inner, &profile(), 7)) as Box<dyn Device>;
        let (files, dev) = if engine == Engine::Sim {
            let model = DeviceModel::new(&profile(), 1);
            (None, Box::new(SimDevice::new(model)) as Box<dyn Device>)
        } else {
            let (files, open) = make_files(read_only_data);
            let dev = match engine {
                Engine::Uring => uring(open)?,
                Engine::Psync => psync(open),
                Engine::EmulatedUring => emulate(uring(open)?),
                Engine::EmulatedPsync => emulate(psync(open)),
                Engine::Sim => unreachable!(),
            };
            (Some(files), dev)
        };
        let dev = Checked::new(dev);
        // The checks in virtual time are for the simulated device alone.
        assert_eq!(dev.virtual_time(), files.is_none(), "{engine:?}");
        Some(Subject { engine, dev, files })
    }

    fn virtual_time(&self) -> bool {
        self.dev.virtual_time()
    }

    fn now(&self) -> Nanos {
        self.dev.now()
    }

    fn wait(
        &mut self,
        deadline: Option<Nanos>,
        max_block: Nanos,
        out: &mut Vec<IoCompletion>,
    ) -> Result<()> {
        self.dev.wait(deadline, max_block, out)
    }

    /// Waits until `n` completions arrived; an error as the device reported it.
    fn collect(&mut self, n: usize) -> Result<Vec<IoCompletion>> {
        let mut out = Vec::new();
        let limit = self.now() + PATIENCE;
        while out.len() < n {
            assert!(
                self.now() < limit,
                "{:?}: {} of {n} completions after {PATIENCE} ns",
                self.engine,
                out.len()
            );
            self.wait(None, 100 * MS, &mut out)?;
        }
        Ok(out)
    }

    /// Like [`Subject::collect`], for requests that must succeed.
    fn complete(&mut self, n: usize) -> Vec<IoCompletion> {
        let e = self.engine;
        self.collect(n)
            .unwrap_or_else(|err| panic!("{e:?}: {err:#}"))
    }

    /// Submits a request that must be accepted.
    fn ask(&mut self, token: Token, kind: IoKind) {
        let e = self.engine;
        self.dev
            .submit(IoRequest { token, kind })
            .unwrap_or_else(|err| panic!("{e:?}: {kind:?} refused: {err:#}"));
    }

    /// Fails unless the device is idle: nothing comes within 20 ms.
    fn assert_quiet(&mut self) {
        let mut out = Vec::new();
        let end = self.now() + 20 * MS;
        while self.now() < end && out.is_empty() {
            self.wait(Some(end), SEC, &mut out).unwrap();
        }
        assert!(out.is_empty(), "{:?}: unexpected {out:?}", self.engine);
    }
}

/// Runs `case` on every engine that can run here.
fn on_every_engine(case: fn(&mut Subject)) {
    for engine in ENGINES {
        if let Some(mut s) = Subject::new(engine, false) {
            case(&mut s);
        }
    }
}

/// Like [`on_every_engine`], for the engines with real files.
fn on_every_real_engine(read_only_data: bool, case: fn(&mut Subject, &Files)) {
    for engine in ENGINES.into_iter().filter(|&e| e != Engine::Sim) {
        if let Some(mut s) = Subject::new(engine, read_only_data) {
            let files = s.files.take().expect("real files");
            case(&mut s, &files);
            // The device goes before its files.
            drop(s);
            drop(files);
        }
    }
}

fn read(block: u64) -> IoKind {
    IoKind::ReadPage { block }
}

fn write(block: u64) -> IoKind {
    IoKind::WritePage {
        block,
        kernel_writeback: false,
        batch: 0,
    }
}

/// Every kind of request the core makes.
fn every_kind() -> [IoKind; 7] {
    [
        read(0),
        read(DATA_BLOCKS - 1),
        write(5),
        IoKind::WritePage {
            block: 6,
            kernel_writeback: true,
            batch: 0,
        },
        IoKind::WalWrite {
            segment: 1,
            offset: PAGE_BYTES,
            len: 3 * PAGE_BYTES,
        },
        IoKind::WalSync { segment: 1 },
        IoKind::DataSync,
    ]
}

#[test]
fn every_kind_of_request_completes_once_with_its_own_token() {
    on_every_engine(|s| {
        // Tokens are the caller's: large, sparse, in no order.
        let tokens: Vec<Token> = (0..7u64)
            .map(|i| u64::MAX - i * 1_000_003 - (i % 2) * 77)
            .collect();
        for (&token, kind) in tokens.iter().zip(every_kind()) {
            s.ask(token, kind);
        }
        let mut got: Vec<Token> = s.complete(tokens.len()).iter().map(|c| c.token).collect();
        got.sort_unstable();
        let mut want = tokens.clone();
        want.sort_unstable();
        assert_eq!(got, want, "{:?}", s.engine);
        s.assert_quiet();
    });
}

#[test]
fn many_requests_in_flight_at_once_all_complete() {
    // More than the io_uring's ring (16) and psync's threads (3) hold.
    on_every_engine(|s| {
        let n = 200u64;
        for t in 0..n {
            let block = (t * 37) % DATA_BLOCKS;
            s.ask(
                1000 + t,
                if t % 3 == 0 {
                    write(block)
                } else {
                    read(block)
                },
            );
        }
        assert_eq!(s.dev.in_flight(), n as usize);
        s.complete(n as usize);
        assert_eq!(s.dev.in_flight(), 0);
        s.assert_quiet();
    });
}

#[test]
fn a_flush_after_completed_writes_completes_after_them() {
    // What the core relies on: it issues an fdatasync (or the checkpoint's
    // fsync) once the writes it covers have completed. Operations in flight
    // together complete in any order on every engine (io_uring without
    // IOSQE_IO_LINK, psync's threads, a disk's channels).
    on_every_engine(|s| {
        let mut token = 1;
        for round in 0..3u64 {
            let mut writes = vec![
                IoKind::WalWrite {
                    segment: 0,
                    offset: round * 2 * PAGE_BYTES,
                    len: 2 * PAGE_BYTES,
                },
                write(10 + round),
                write(20 + round),
            ];
            if round == 2 {
                writes.push(IoKind::WalWrite {
                    segment: 1,
                    offset: 0,
                    len: PAGE_BYTES,
                });
            }
            for &k in &writes {
                s.ask(token, k);
                token += 1;
            }
            let last_write = s.complete(writes.len()).iter().map(|c| c.at).max().unwrap();
            let flushes = [IoKind::WalSync { segment: 0 }, IoKind::DataSync];
            for &k in &flushes {
                s.ask(token, k);
                token += 1;
            }
            for c in s.complete(flushes.len()) {
                assert!(
                    c.at >= last_write,
                    "{:?}: {c:?} before {last_write}",
                    s.engine
                );
            }
        }
        s.assert_quiet();
    });
}

#[test]
fn a_wait_returns_by_its_deadline_and_not_before_it() {
    on_every_engine(|s| {
        let mut out = Vec::new();
        // Nothing in flight: successive deadlines are reached in turn.
        let t0 = s.now();
        for i in 1..=3 {
            let d = t0 + i * 5 * MS;
            s.wait(Some(d), SEC, &mut out).unwrap();
            assert!(out.is_empty());
            let now = s.now();
            if s.virtual_time() {
                assert_eq!(now, d, "{:?}", s.engine);
            } else {
                assert!(now < d + SEC, "{:?}: {now} for {d}", s.engine);
            }
        }
        // A deadline already passed (the driver's poll near a timer) and
        // max_block stop a wait with nothing to bring.
        let now = s.now();
        s.wait(Some(now), 10 * SEC, &mut out).unwrap();
        assert!(s.now() < now + SEC, "{:?}: a poll blocked", s.engine);
        if !s.virtual_time() {
            s.wait(None, 10 * MS, &mut out).unwrap();
        }
        // With a read in flight, a deadline before the read completes.
        s.ask(1, read(3));
        let d = s.now() + 1_000;
        s.wait(Some(d), SEC, &mut out).unwrap();
        if s.virtual_time() {
            // The modelled read takes tens of µs.
            assert!(out.is_empty(), "{:?}: {out:?}", s.engine);
            assert_eq!(s.now(), d);
        }
        if out.is_empty() {
            out = s.complete(1);
        }
        assert_eq!(out[0].token, 1);
        assert!(out[0].at >= d || !s.virtual_time());
    });
}

#[test]
fn writes_change_exactly_the_bytes_they_address() {
    on_every_real_engine(false, |s, f| {
        let zeros = vec![0u8; PAGE_BYTES as usize];
        let data = OpenOptions::new().write(true).open(&f.data).unwrap();
        for b in 20..=22 {
            data.write_all_at(&zeros, data_offset(b)).unwrap();
        }
        let wal = OpenOptions::new().write(true).open(&f.wal[1]).unwrap();
        for p in 0..4 {
            wal.write_all_at(&zeros, wal_offset(p * PAGE_BYTES))
                .unwrap();
        }
        s.ask(1, write(21));
        s.ask(
            2,
            IoKind::WalWrite {
                segment: 1,
                offset: PAGE_BYTES,
                len: 2 * PAGE_BYTES,
            },
        );
        s.complete(2);
        let page_at = |path: &PathBuf, offset: u64| {
            let mut buf = vec![0u8; PAGE_BYTES as usize];
            let file = std::fs::File::open(path).unwrap();
            file.read_exact_at(&mut buf, offset).unwrap();
            buf.iter().any(|&b| b != 0)
        };
        let e = s.engine;
        assert!(
            page_at(&f.data, data_offset(21)),
            "{e:?}: block 21 unwritten"
        );
        assert!(
            !page_at(&f.data, data_offset(20)),
            "{e:?}: block 20 written"
        );
        assert!(
            !page_at(&f.data, data_offset(22)),
            "{e:?}: block 22 written"
        );
        let wal_pages: Vec<bool> = (0..4)
            .map(|p| page_at(&f.wal[1], wal_offset(p * PAGE_BYTES)))
            .collect();
        assert_eq!(wal_pages, [false, true, true, false], "{e:?}");
    });
}

#[test]
fn a_read_past_the_end_of_the_file_is_reported_with_file_and_offset() {
    on_every_real_engine(false, |s, f| {
        // The file shrinks under the device: block 10 is its last.
        let data = OpenOptions::new().write(true).open(&f.data).unwrap();
        data.set_len(data_offset(11)).unwrap();
        s.ask(1, read(10));
        s.complete(1);
        s.ask(2, read(11));
        let e = s.engine;
        let err = format!("{:#}", s.collect(1).unwrap_err());
        assert!(err.contains("read of"), "{e:?}: {err}");
        assert!(err.contains(&f.data.display().to_string()), "{e:?}: {err}");
        assert!(
            err.contains(&format!("offset {}", data_offset(11))),
            "{e:?}: {err}"
        );
        // Reported, not wedged: the device goes on.
        s.dev.failed(2);
        s.ask(3, read(4));
        s.complete(1);
    });
}

#[test]
fn a_failed_operation_is_reported_with_file_operation_and_offset() {
    // The data file open read-only: its writes fail in the kernel (EBADF).
    on_every_real_engine(true, |s, f| {
        s.ask(1, write(5));
        let e = s.engine;
        let err = format!("{:#}", s.collect(1).unwrap_err());
        assert!(err.contains("write of"), "{e:?}: {err}");
        assert!(err.contains(&f.data.display().to_string()), "{e:?}: {err}");
        assert!(
            err.contains(&format!("offset {}", data_offset(5))),
            "{e:?}: {err}"
        );
        s.dev.failed(1);
        s.ask(2, read(5));
        s.complete(1);
    });
}

#[test]
fn requests_outside_the_files_are_refused_at_submit() {
    on_every_real_engine(false, |s, f| {
        let e = s.engine;
        let outside = [
            (read(DATA_BLOCKS), f.data.display().to_string()),
            (write(DATA_BLOCKS), f.data.display().to_string()),
            (
                IoKind::WalWrite {
                    segment: WAL_SEGMENTS,
                    offset: 0,
                    len: PAGE_BYTES,
                },
                format!("WAL segment {WAL_SEGMENTS}"),
            ),
            (
                IoKind::WalSync {
                    segment: WAL_SEGMENTS,
                },
                format!("WAL segment {WAL_SEGMENTS}"),
            ),
            (
                IoKind::WalWrite {
                    segment: 0,
                    offset: WAL_SEGMENT_BYTES - PAGE_BYTES,
                    len: 2 * PAGE_BYTES,
                },
                "past the end of segment 0".to_string(),
            ),
        ];
        for (i, (kind, names)) in outside.into_iter().enumerate() {
            let err = s
                .dev
                .submit(IoRequest {
                    token: i as Token,
                    kind,
                })
                .expect_err(&format!("{e:?}: {kind:?} accepted"));
            let msg = format!("{err:#}");
            assert!(msg.contains(&names), "{e:?}: {kind:?}: {msg}");
        }
        // Nothing of them is in flight, and the device goes on.
        s.ask(100, read(DATA_BLOCKS - 1));
        s.complete(1);
        s.assert_quiet();
    });
}

#[test]
fn the_core_runs_to_its_end_through_the_driver() {
    // Two clients updating rows of a 40-page table through 16 buffers:
    // reads, victim writes, WAL writes and fdatasyncs on every engine.
    const SPEC: &str = r#"{"name": "rows", "description": "updates of random rows",
      "tables": {"t": {"rows_per_scale": 2440, "rows_per_page": 61}},
      "transactions": [{"name": "bump",
        "keys": {"k": {"table": "t", "distribution": {"type": "uniform"}}},
        "statements": [
          {"sql": "BEGIN", "cpu_us": 0},
          {"update": {"table": "t", "key": "k", "wal_bytes": 72}, "cpu_us": 5},
          {"sql": "END", "cpu_us": 5}],
        "commit_wal_bytes": 34}],
      "cpu_us_per_statement": 0, "round_trip_us_per_statement": 0,
      "full_page_image_bytes": 7977}"#;
    on_every_engine(|s| {
        let spec = WorkloadSpec::from_json(SPEC, "test").unwrap();
        let w = Script::new(&spec, 1).unwrap();
        assert!(crate::core::workload::Workload::data_blocks(&w) <= DATA_BLOCKS);
        let mut cfg = crate::core::test_support::config(2, 16);
        cfg.duration = None;
        cfg.transactions_per_client = Some(30);
        cfg.wal_segments = WAL_SEGMENTS;
        let mut db = Database::new(cfg, Box::new(w));
        let e = s.engine;
        let ending = drive_checked(&mut db, &mut s.dev, |_| {})
            .unwrap_or_else(|err| panic!("{e:?}: {err:#}"));
        assert_eq!(ending, Ending::Completed, "{e:?}");
        let st = db.stats();
        assert_eq!(st.transactions, 60, "{e:?}");
        assert_eq!(
            st.bucket_sum_ns.iter().sum::<u128>(),
            st.latency_sum_ns,
            "{e:?}"
        );
        let c = &st.counters;
        assert!(c.data_reads > 0 && c.wal_syncs > 0, "{e:?}: {c:?}");
        assert!(c.backend_writes + c.bgwriter_writes > 0, "{e:?}: {c:?}");
        s.assert_quiet();
    });
}
