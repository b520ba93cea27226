use super::*;
use crate::core::time::MS;
use proptest::prelude::*;

fn names(text: &str) -> StandbyNames {
    StandbyNames::parse(text).unwrap().unwrap()
}

#[test]
fn parses_every_form_of_the_grammar() {
    let n = names("FIRST 2 (s1, s2, s3)");
    assert_eq!(n.method, SyncMethod::Priority);
    assert_eq!(n.num_sync, 2);
    assert_eq!(n.members, ["s1", "s2", "s3"]);
    let n = names("any 1 (s1,s2)");
    assert_eq!((n.method, n.num_sync), (SyncMethod::Quorum, 1));
    let n = names("2 (a, b)");
    assert_eq!((n.method, n.num_sync), (SyncMethod::Priority, 2));
    let n = names("a, b");
    assert_eq!((n.method, n.num_sync), (SyncMethod::Priority, 1));
    assert_eq!(n.members, ["a", "b"]);
    assert_eq!(names("*").members, ["*"]);
    // A bare number is a standby's name; quoted keywords are names.
    assert_eq!(names("2").members, ["2"]);
    assert_eq!(names("\"any\", \"a\"\"b\"").members, ["any", "a\"b"]);
    assert_eq!(names("s$1, _x, é").members, ["s$1", "_x", "é"]);
    assert_eq!(names("ANYONE").members, ["ANYONE"]);
    assert_eq!(StandbyNames::parse("").unwrap(), None);
}

#[test]
fn rejects_what_postgresql_rejects() {
    for (text, msg) in [
        ("ANY (a)", "syntax error at or near \"(\""),
        ("FIRST 1 a", "syntax error at or near \"a\""),
        ("a b", "syntax error at or near \"b\""),
        ("a,", "syntax error at end of input"),
        ("ANY 1 (a", "syntax error at end of input"),
        (" ", "syntax error at end of input"),
        ("a; b", "syntax error at or near \";\""),
        ("1s", "syntax error at or near \"s\""),
        ("\"a", "unterminated quoted identifier at end of input"),
        (
            "ANY 0 (a)",
            "number of synchronous standbys (0) must be greater than zero",
        ),
        ("any", "syntax error at end of input"),
    ] {
        assert_eq!(StandbyNames::parse(text).unwrap_err(), msg, "{text}");
    }
}

#[test]
fn priorities_follow_the_list_case_insensitively() {
    let n = names("FIRST 1 (S1, *, s3)");
    assert_eq!(n.priority("s1"), 1);
    assert_eq!(n.priority("s3"), 2, "* comes first");
    assert_eq!(n.priority("other"), 2);
    let n = names("ANY 1 (s1, s2)");
    assert_eq!((n.priority("s2"), n.priority("s9")), (1, 0));
    assert_eq!(n.to_text(), "ANY 1 (s1, s2)");
}

fn standby(name: &str, rtt_ms: u64) -> StandbyConfig {
    StandbyConfig {
        name: name.into(),
        rtt: RoundTrip {
            median: rtt_ms * MS,
            p99: rtt_ms * MS,
        },
        replay_bytes_per_s: 8192e3,
        replay_cpu_per_image: None,
    }
}

fn config(names: &str, sc: SynchronousCommit, standbys: Vec<StandbyConfig>) -> ReplicationConfig {
    ReplicationConfig {
        standbys,
        names: StandbyNames::parse(names).unwrap(),
        synchronous_commit: sc,
        wakeup: 0,
        wal_segments: 4,
        max_write_bytes: 1 << 20,
        seed: 1,
    }
}

/// Runs the replication like a tiny simulator: every standby I/O takes
/// `io` (writes) or `sync`, timers fire in time order. Returns when the
/// client is released.
fn release_time(r: &mut Replication, lsn: Lsn, io: Nanos, sync: Nanos) -> Option<Nanos> {
    let mut events: Vec<(Nanos, Result<ReplTimer, u8>)> = Vec::new();
    let mut now = 0;
    r.handle_local_flush(now, lsn);
    if r.wait(lsn, 7) {
        return Some(now);
    }
    let mut out = Vec::new();
    for _ in 0..10_000 {
        while let Some(a) = r.poll_action() {
            match a {
                ReplAction::Timer { at, timer } => events.push((at, Ok(timer))),
                ReplAction::Io { standby, io: w } => {
                    let took = if matches!(w, WalIo::Sync { .. }) {
                        sync
                    } else {
                        io
                    };
                    events.push((now + took, Err(standby)));
                }
            }
        }
        r.drain_released(&mut out);
        if !out.is_empty() {
            return Some(now);
        }
        events.sort_by_key(|e| std::cmp::Reverse(e.0));
        let (at, e) = events.pop()?;
        now = at;
        match e {
            Ok(t) => r.handle_timer(now, t),
            Err(s) => r.handle_io_done(now, s),
        }
    }
    None
}

#[test]
fn each_synchronous_commit_level_waits_for_its_position() {
    // RTT 2 ms, write 0.1 ms, fdatasync 1 ms, replay of 8 KiB 1 ms.
    let at = |sc| {
        let mut r = Replication::new(&config("s1", sc, vec![standby("s1", 2)]));
        release_time(&mut r, 8192, 100_000, MS)
    };
    assert_eq!(at(SynchronousCommit::Off), Some(0));
    assert_eq!(at(SynchronousCommit::Local), Some(0));
    assert_eq!(at(SynchronousCommit::RemoteWrite), Some(2 * MS + 100_000));
    assert_eq!(at(SynchronousCommit::On), Some(3 * MS + 100_000));
    assert_eq!(at(SynchronousCommit::RemoteApply), Some(4 * MS + 100_000));
}

#[test]
fn an_image_replays_in_its_own_cpu_not_at_the_byte_rate() {
    // 20 000 B flushed at 8.192 MB/s, a record ending at 10 000 carrying
    // an 8192 B image: 2.44 ms at the byte rate; the 11 808 B of records
    // 1.44 ms, plus 3.94 µs for the image when it is charged apart.
    let at = |per_image| {
        let mut s = standby("s1", 0);
        s.replay_cpu_per_image = per_image;
        let mut r = Replication::new(&config("s1", SynchronousCommit::RemoteApply, vec![s]));
        r.log_images(10_000, 1, 8192);
        let t = release_time(&mut r, 20_000, 0, 0);
        (t, r.image_marks())
    };
    assert_eq!(at(None), (Some(2_441_406), 0));
    assert_eq!(
        at(Some(3_940)),
        (Some(1_441_406 + 3_940), 0),
        "popped once replayed"
    );
}

#[test]
fn image_marks_stay_bounded_and_keep_their_totals() {
    let mut m = ImageMarks::default();
    for k in 1..=MAX_IMAGE_MARKS as u64 + 10 {
        m.push(k * 100, 1, 8000);
    }
    assert_eq!(m.marks.len(), MAX_IMAGE_MARKS);
    let end = (MAX_IMAGE_MARKS as u64 + 10) * 100;
    assert_eq!(
        m.upto(end),
        (
            MAX_IMAGE_MARKS as u64 + 10,
            8000 * (MAX_IMAGE_MARKS as u64 + 10)
        )
    );
    assert_eq!(m.upto(250), (2, 16_000));
    m.pop_upto(250);
    assert_eq!(
        (m.marks.len(), m.upto(250)),
        (MAX_IMAGE_MARKS - 2, (2, 16_000))
    );
    assert_eq!(m.upto(300), (3, 24_000));
}

#[test]
fn no_names_means_asynchronous_standbys() {
    let mut r = Replication::new(&config("", SynchronousCommit::On, vec![standby("s1", 1)]));
    assert!(!r.commits_wait());
    assert!(r.wait(100, 0));
    assert_eq!(r.sync_state(0), "async");
}

#[test]
fn any_waits_for_the_fastest_first_for_the_listed_order() {
    let sbs = || vec![standby("s1", 10), standby("s2", 1), standby("s3", 5)];
    let t = |names: &str| {
        let mut r = Replication::new(&config(names, SynchronousCommit::On, sbs()));
        release_time(&mut r, 100, 0, 0).unwrap()
    };
    assert_eq!(t("ANY 1 (s1, s2, s3)"), MS);
    assert_eq!(t("ANY 2 (s1, s2, s3)"), 5 * MS);
    assert_eq!(t("ANY 3 (s1, s2, s3)"), 10 * MS);
    assert_eq!(t("FIRST 1 (s1, s2, s3)"), 10 * MS);
    assert_eq!(t("FIRST 1 (s3, s1)"), 5 * MS);
    assert_eq!(t("2 (s2, s3, s1)"), 5 * MS);
    assert_eq!(t("s2, s1"), MS);
    assert_eq!(t("*"), 10 * MS, "* ties go to the first declared");
    // s9 is not declared: FIRST 1 falls to the next listed standby.
    assert_eq!(t("FIRST 1 (s9, s2)"), MS);
    let r = Replication::new(&config("FIRST 1 (s3, s1)", SynchronousCommit::On, sbs()));
    assert_eq!(
        (r.sync_state(0), r.sync_state(1), r.sync_state(2)),
        ("potential", "async", "sync")
    );
}

#[test]
fn too_few_matching_standbys_is_refused() {
    let c = config(
        "ANY 2 (s1, s9)",
        SynchronousCommit::On,
        vec![standby("s1", 1)],
    );
    let e = c.check().unwrap_err();
    assert!(
        e.contains("waits for 2 standby(s), but 1 of the declared standbys (s1)"),
        "{e}"
    );
    assert!(
        config(
            "ANY 1 (s1, s9)",
            SynchronousCommit::On,
            vec![standby("s1", 1)]
        )
        .check()
        .is_ok()
    );
}

#[test]
fn walreceiver_writes_then_replies_then_syncs_then_replies() {
    let mut r = Replication::new(&config("s1", SynchronousCommit::On, vec![standby("s1", 0)]));
    r.handle_local_flush(0, 20_000);
    assert!(!r.wait(20_000, 1));
    let Some(ReplAction::Timer { at: 0, timer }) = r.poll_action() else {
        panic!()
    };
    r.handle_timer(0, timer);
    let mut ios = Vec::new();
    let mut replies = 0;
    loop {
        match r.poll_action() {
            Some(ReplAction::Io { io, .. }) => {
                ios.push(io);
                r.handle_io_done(0, 0);
            }
            Some(ReplAction::Timer {
                timer: ReplTimer::Reply(0),
                ..
            }) => {
                replies += 1;
                r.handle_timer(0, ReplTimer::Reply(0));
            }
            Some(ReplAction::Timer { timer, .. }) => r.handle_timer(0, timer),
            None => break,
        }
    }
    assert_eq!(
        ios,
        [
            WalIo::Write {
                segment: 0,
                offset: 0,
                len: 24576
            },
            WalIo::Sync { segment: 0 }
        ]
    );
    assert_eq!(replies, 2, "one after the write, one after the flush");
    let mut out = Vec::new();
    r.drain_released(&mut out);
    assert_eq!(out, [1]);
}

proptest! {
    /// Whatever the delays, a commit is released only once its quorum has
    /// confirmed it: never before the k-th fastest standby's round trip
    /// plus its write and fdatasync, and it is released in the end.
    #[test]
    fn released_after_the_quorum_and_only_then(
        rtts in proptest::collection::vec(0u64..20, 1..5),
        k in 1u32..5,
        first in any::<bool>(),
        lsn in 1u64..200_000,
    ) {
        let n = rtts.len() as u32;
        let k = k.min(n);
        let list: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
        let text = format!("{} {k} ({})", if first { "FIRST" } else { "ANY" }, list.join(","));
        let sbs = rtts.iter().enumerate().map(|(i, &ms)| standby(&format!("s{i}"), ms)).collect();
        let mut r = Replication::new(&config(&text, SynchronousCommit::On, sbs));
        let t = release_time(&mut r, lsn, 1_000, 10_000).expect("released");
        let mut cost: Vec<u64> = rtts.iter().map(|ms| ms * MS + 11_000).collect();
        let expect = if first {
            cost[..k as usize].iter().copied().max().unwrap()
        } else {
            cost.sort_unstable();
            cost[k as usize - 1]
        };
        // Writes past 1 MiB or a segment end take more than one I/O.
        prop_assert!(t >= expect, "released at {t}, quorum at {expect}");
        prop_assert!(t <= expect + 40_000, "released at {t}, quorum at {expect}");
    }
}
