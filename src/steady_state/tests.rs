//! The steady-state analysis' tests.
use super::*;
use crate::core::time::SEC;

fn second(tx: u64, lat_ms: u64) -> Second {
    let mut s = Second {
        transactions: tx,
        latency_sum_ns: (tx * lat_ms * 1_000_000) as u128,
        ..Second::default()
    };
    s.bucket_sum_ns[Bucket::Cpu.index()] = tx * lat_ms * 1_000_000;
    s
}

/// A deterministic noise of ±`amp` around 1, uniform (a fixed hash
/// sequence: tests are exact).
fn wobble(i: usize, amp: f64) -> f64 {
    // splitmix64 of i.
    let mut x = (i as u64).wrapping_add(0x9e3779b97f4a7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d049bb133111eb);
    x ^= x >> 31;
    let u = (x >> 11) as f64 / (1u64 << 53) as f64;
    1.0 + amp * (2.0 * u - 1.0)
}

fn run<'a>(seconds: &'a [Second], starts: &'a [Nanos]) -> Run<'a> {
    Run {
        seconds,
        width_s: 1,
        milestones: Milestones::default(),
        fills_shared_buffers: false,
        fills_page_cache: false,
        has_page_cache: false,
        checkpoint_starts: starts,
        vacuum_starts: &[],
        vacuum_cycle_starts: &[],
        vacuum_due: None,
        fresh: None,
    }
}

#[test]
fn mser5_cuts_a_level_shift_at_its_step() {
    let obs: Vec<f64> = (0..200)
        .map(|i| if i < 60 { 2000.0 } else { 1000.0 } * wobble(i, 0.02))
        .collect();
    let cut = mser5(&obs).expect("a cut in the first half");
    assert!((55..=65).contains(&cut), "cut at {cut}");
}

#[test]
fn mser5_keeps_a_stationary_series_whole() {
    let obs: Vec<f64> = (0..200).map(|i| 1000.0 * wobble(i, 0.05)).collect();
    assert!(mser5(&obs).expect("a cut") <= 10);
}

#[test]
fn mser5_refuses_a_series_still_trending() {
    let obs: Vec<f64> = (0..200).map(|i| 1000.0 + 10.0 * i as f64).collect();
    assert_eq!(mser5(&obs), None);
}

#[test]
fn too_short_a_run_is_not_reached_and_says_how_long_it_needs() {
    let s: Vec<Second> = (0..10).map(|_| second(1000, 2)).collect();
    match analyse(&run(&s, &[])) {
        NotReached(why) => assert!(why.contains("at least 50 s"), "{why}"),
        o => panic!("{o:?}"),
    }
}

#[test]
fn a_handful_of_transactions_claims_no_rate() {
    // 99 transactions over 200 s: steady, but known to no precision.
    let s: Vec<Second> = (0..200)
        .map(|i| second(u64::from(i % 2 == 0 && i < 198), 2))
        .collect();
    match analyse(&run(&s, &[])) {
        NotReached(why) => assert!(why.contains("only 99 transactions"), "{why}"),
        o => panic!("{o:?}"),
    }
    // A hundred suffice to be looked at.
    let s: Vec<Second> = (0..200).map(|i| second(u64::from(i % 2 == 0), 2)).collect();
    if let NotReached(why) = analyse(&run(&s, &[])) {
        assert!(!why.contains("transactions completed"), "{why}");
    }
}

#[test]
fn the_steady_state_excludes_the_warm_up_and_names_its_end() {
    let s: Vec<Second> = (0..200)
        .map(|i| {
            let tx = if i < 40 { 3000.0 } else { 1000.0 } * wobble(i, 0.03);
            second(tx as u64, if i < 40 { 1 } else { 3 })
        })
        .collect();
    let mut r = run(&s, &[]);
    r.milestones.shared_buffers_full = Some(38 * SEC);
    let Outcome::Steady(st) = analyse(&r) else {
        panic!("no steady state")
    };
    assert!((35.0..=45.0).contains(&st.warmup_s), "{}", st.warmup_s);
    assert_eq!(st.warmup_end, WarmupEnd::SharedBuffersFull(38 * SEC));
    assert!((st.tps.mean - 1000.0).abs() < 10.0, "{:?}", st.tps);
    assert!(st.tps.relative() < 0.02 && st.tps.half_width > 0.0);
    assert!((st.latency_ms.mean - 3.0).abs() < 0.01);
    assert!((st.buckets_us[Bucket::Cpu.index()].mean - 3000.0).abs() < 10.0);
    assert_eq!(st.checkpoint_cycles, 0);
}

#[test]
fn checkpoints_cut_the_window_to_whole_cycles() {
    // A 30 s cycle: slower while a checkpoint writes.
    let s: Vec<Second> = (0..200)
        .map(|i| second(if i % 30 < 10 { 800 } else { 1000 }, 2))
        .collect();
    let starts: Vec<Nanos> = (0..7).map(|c| c * 30 * SEC).collect();
    let Outcome::Steady(st) = analyse(&run(&s, &starts)) else {
        panic!("no steady state")
    };
    assert_eq!(st.length_s % 30.0, 0.0, "{st:?}");
    assert!(st.checkpoint_cycles >= 4);
    // Whole cycles: exactly the cycle's mean, (10*800 + 20*1000) / 30.
    assert!((st.tps.mean - 28000.0 / 30.0).abs() < 1e-6, "{:?}", st.tps);
    let wal = Recurring {
        writes_wal: true,
        vacuums: false,
    };
    assert!(settled(&Outcome::Steady(st), 0.1, wal));
}

#[test]
fn settling_needs_a_whole_checkpoint_cycle_and_a_whole_cycle_of_the_costliest_vacuum() {
    let s = steady_100s();
    let o = analyse(&run(&s, &[90 * SEC]));
    let (none, wal) = (
        Recurring::default(),
        Recurring {
            writes_wal: true,
            vacuums: false,
        },
    );
    assert!(settled(&o, 0.02, none));
    assert!(!settled(&o, 0.02, wal));
    let vac = Recurring {
        writes_wal: false,
        vacuums: true,
    };
    assert!(!settled(&o, 0.02, vac));
    // Two vacuums of small tables inside one cycle of the costliest one
    // (whose vacuum started once, at 10 s): not a whole cycle of it.
    let mut r = run(&s, &[]);
    let starts = [10 * SEC, 20 * SEC, 60 * SEC];
    let costliest = [10 * SEC];
    r.vacuum_starts = &starts;
    r.vacuum_cycle_starts = &costliest;
    assert!(!settled(&analyse(&r), 0.02, vac));
    // Two of the costliest table's own: a whole cycle of it.
    let costliest = [20 * SEC, 60 * SEC];
    r.vacuum_cycle_starts = &costliest;
    assert!(settled(&analyse(&r), 0.02, vac));
}

#[test]
fn a_first_autovacuum_still_to_come_holds_the_answer_within_the_horizon() {
    // Steady for 100 s, but a table's first autovacuum is due at 300 s:
    // the rate so far leaves out its cost, so no answer yet, and the
    // table is named. Due past four times the run, it is the user's to
    // ask for (-T) and the answer stands.
    let s = steady_100s();
    let mut r = run(&s, &[]);
    assert!(settled(&analyse(&r), 0.02, Recurring::default()));
    r.vacuum_due = Some(("pgbench_accounts", 300 * SEC));
    let o = analyse(&r);
    assert!(!settled(&o, 0.02, Recurring::default()));
    match &o {
        Outcome::Steady(st) => assert!(
            st.transients.iter().any(|t| t.phrase().starts_with(
                "the first autovacuum of pgbench_accounts is still to come (due at about 300 s"
            )),
            "{:?}",
            st.transients
        ),
        o => panic!("{o:?}"),
    }
    r.vacuum_due = Some(("pgbench_accounts", 401 * SEC));
    assert!(settled(&analyse(&r), 0.02, Recurring::default()));
}

#[test]
fn freshly_loaded_pages_hold_the_answer_until_few_are_left() {
    // Steady for 100 s, but a third of pgbench_accounts' pages have had
    // their first update: the rest still move rows, so no answer, and at
    // this pace (uniform: a share exp(-t/τ) left) 5% are left at
    // 100 · ln 0.05 / ln(2/3) = 739 s.
    let s = steady_100s();
    let mut r = run(&s, &[]);
    let fresh = |updated| FreshPages {
        table: "pgbench_accounts",
        pages: 3000,
        updated,
    };
    r.fresh = Some(fresh(1000));
    let o = analyse(&r);
    assert!(!settled(&o, 0.02, Recurring::default()));
    let Outcome::Steady(st) = &o else {
        panic!("{o:?}")
    };
    match st.transients.as_slice() {
        [Transient::FreshPages { left, done_s, .. }] => {
            assert!((left - 2.0 / 3.0).abs() < 1e-9);
            assert!((done_s - 738.8).abs() < 0.5, "{done_s}");
        }
        t => panic!("{t:?}"),
    }
    assert!(st.transients[0].phrase().starts_with(
        "67% of the pages of pgbench_accounts are still to be updated for the first time"
    ));
    // Few left, a table never updated (select-only), or too few first
    // updates to read a pace from: no transient.
    for updated in [2851, 0, 99] {
        r.fresh = Some(fresh(updated));
        assert!(
            settled(&analyse(&r), 0.02, Recurring::default()),
            "{updated}"
        );
    }
}

#[test]
fn whole_vacuum_cycles_as_batches_give_the_dips_no_false_noise() {
    // A dip of 20 s every 120 s: uniform batches of 30 s hold a dip or
    // not, and their spread is the dip; cycles each hold one.
    let s: Vec<Second> = (0..1200)
        .map(|i| second(if i % 120 < 20 { 800 } else { 1000 }, 2))
        .collect();
    let starts: Vec<Nanos> = (0..10).map(|c| c * 120 * SEC).collect();
    let mut r = run(&s, &[]);
    let uniform = match analyse(&r) {
        Outcome::Steady(st) => st,
        o => panic!("{o:?}"),
    };
    r.vacuum_starts = &starts;
    r.vacuum_cycle_starts = &starts;
    let Outcome::Steady(cycles) = analyse(&r) else {
        panic!("no steady state")
    };
    assert!(cycles.batched_by_vacuum && !uniform.batched_by_vacuum);
    assert_eq!(cycles.length_s % 120.0, 0.0);
    assert!((cycles.tps.mean - (20.0 * 800.0 + 100.0 * 1000.0) / 120.0).abs() < 1e-6);
    assert!(cycles.tps.half_width < 1e-6, "{:?}", cycles.tps);
    assert!(uniform.tps.half_width > 1.0, "{:?}", uniform.tps);
}

/// The gp3 case's shape: a deficit of 10% that decays with a time
/// constant of `tau` s, a checkpoint every 60 s that slows the first
/// 10 s of its cycle by 5%, and noise of ±5% a second.
fn climbing(n: usize, tau: f64) -> (Vec<Second>, Vec<Nanos>) {
    let rate = |i: usize| {
        let ckpt = if i % 60 < 10 { 0.95 } else { 1.0 };
        1030.0 * (1.0 - 0.1 * (-(i as f64) / tau).exp()) * ckpt * wobble(i, 0.05)
    };
    let s = (0..n).map(|i| second(rate(i) as u64, 2)).collect();
    let starts = (0..=(n / 60) as u64).map(|c| c * 60 * SEC).collect();
    (s, starts)
}

const WAL: Recurring = Recurring {
    writes_wal: true,
    vacuums: false,
};

#[test]
fn a_slow_climb_is_not_settled_while_the_test_sees_it() {
    let (s, starts) = climbing(1200, 150.0);
    // At 300 s its batch means agree to within 2%: only the test
    // stops the rule there.
    let early = analyse(&run(&s[..300], &starts));
    let Outcome::Steady(st) = &early else {
        panic!("{early:?}")
    };
    assert!(
        st.tps.relative() <= 0.02 && st.checkpoint_cycles >= 1,
        "{st:?}"
    );
    assert!(!st.stationarity.passed, "{:?}", st.stationarity);
    assert!(!settled(&early, 0.02, WAL));
    // Once it has flattened: the level it climbs to, over whole cycles.
    let late = analyse(&run(&s, &starts));
    let Outcome::Steady(st) = &late else {
        panic!("{late:?}")
    };
    assert!(st.stationarity.passed, "{st:?}");
    assert!(settled(&late, 0.02, WAL));
    let level = 1030.0 * (1.0 - 0.05 * 10.0 / 60.0);
    assert!((st.tps.mean / level - 1.0).abs() < 0.005, "{st:?}");
}

#[test]
fn where_the_window_after_mser5s_cut_still_climbs_the_cut_moves_on() {
    let (s, starts) = climbing(1200, 150.0);
    let mser = mser5(&s.iter().map(|x| x.transactions as f64).collect::<Vec<_>>())
        .expect("a cut in the first half");
    let Outcome::Steady(st) = analyse(&run(&s, &starts)) else {
        panic!("no steady state")
    };
    assert!(st.warmup_s > mser as f64, "{mser}: {st:?}");
    assert!(
        st.stationarity.by_checkpoint_cycles,
        "{:?}",
        st.stationarity
    );
}

#[test]
fn a_run_that_never_flattens_is_marked_and_not_settled() {
    // Still 1% short at the end: MSER-5's own figures, not passed.
    let (s, starts) = climbing(600, 400.0);
    let o = analyse(&run(&s, &starts));
    match &o {
        Outcome::Steady(st) => assert!(!st.stationarity.passed, "{st:?}"),
        NotReached(_) => {}
    }
    assert!(!settled(&o, 0.02, WAL));
}

#[test]
fn mser5_keeps_a_slow_periodic_series_instead_of_refusing_it() {
    // Dips of 30 s every 120 s, as autovacuum makes.
    let obs: Vec<f64> = (0..600)
        .map(|i| if i % 120 >= 100 { 900.0 } else { 1070.0 } * wobble(i, 0.01))
        .collect();
    assert!(mser5(&obs).is_some());
}

#[test]
fn the_interval_widens_with_noise() {
    let calm: Vec<Second> = (0..200)
        .map(|i| second((1000.0 * wobble(i, 0.01)) as u64, 2))
        .collect();
    let noisy: Vec<Second> = (0..200)
        .map(|i| second((1000.0 * wobble(i, 0.2)) as u64, 2))
        .collect();
    let hw = |s: &[Second]| match analyse(&run(s, &[])) {
        Outcome::Steady(st) => st.tps.half_width,
        o => panic!("{o:?}"),
    };
    assert!(hw(&noisy) > 5.0 * hw(&calm));
}

#[test]
fn a_pool_that_stopped_growing_short_of_full_is_not_still_filling() {
    let s: Vec<Second> = (0..200)
        .map(|i| second((1000.0 * wobble(i, 0.03)) as u64, 1))
        .collect();
    let mut r = run(&s, &[]);
    r.fills_shared_buffers = true;
    r.milestones.shared_buffers_grew = Some(40 * SEC);
    assert!(
        matches!(analyse(&r), Outcome::Steady(_)),
        "a pool that last grew at 40 s of 200 holds the working set"
    );
    r.milestones.shared_buffers_grew = Some(150 * SEC);
    let Outcome::NotReached(why) = analyse(&r) else {
        panic!("a pool still growing at 150 s of 200 is filling")
    };
    assert!(why.contains("still filling"), "{why}");
    r.milestones.shared_buffers_grew = None;
    assert!(matches!(analyse(&r), Outcome::NotReached(_)));
}

/// 100 s at 1,000 tps, within ±1% a second.
fn steady_100s() -> Vec<Second> {
    (0..100)
        .map(|i| second((1000.0 * wobble(i, 0.01)) as u64, 2))
        .collect()
}
