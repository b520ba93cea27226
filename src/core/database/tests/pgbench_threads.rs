//! pgbench's worker threads: one client at a time on a core, queued for a
//! core like any process, and the CPU of waking a backend onto an idle core.

use super::*;

#[test]
fn a_pgbench_thread_serves_its_clients_one_at_a_time_on_a_core() {
    // Cores to spare and a device that takes no time: each thread, serving
    // its 16 clients one statement at a time, is the bottleneck. It keeps
    // its core while replies wait, so it sends one statement per
    // client_cpu: 7 statements per transaction.
    for threads in [1u32, 2] {
        let mut cfg = config(32, 4096);
        cfg.cpus = 64;
        cfg.client_threads = threads;
        cfg.client_cpu = 100 * US;
        // Scale 100: seldom two clients on one branch row.
        let o = simulate(cfg, 100, INSTANT);
        let s = o.db.stats();
        let bound = threads as f64 * 2.0 * SEC as f64 / (7.0 * 100.0 * US as f64);
        let tx = s.transactions as f64;
        assert!(
            tx <= bound && tx > 0.97 * bound,
            "{threads}: {tx} of {bound}"
        );
        // The clients spend most of their time waiting for their thread,
        // which spent its time on a core.
        let sum: u128 = s.bucket_sum_ns.iter().sum();
        let client = s.bucket_sum_ns[Bucket::Client.index()];
        assert!(client * 10 > sum * 7, "{client} of {sum}");
        let busy = s.counters.client_thread_time.sum_ns as f64;
        assert!(busy > 0.97 * threads as f64 * 2.0 * SEC as f64, "{busy}");
    }
}

#[test]
fn a_pgbench_thread_waits_for_a_core_like_a_backend() {
    // One core: the thread queues behind the backends' CPU, and its clients'
    // wait for it (client) is more than its own CPU per statement.
    let mut cfg = config(8, 4096);
    cfg.cpus = 1;
    cfg.client_threads = 1;
    cfg.client_cpu = 10 * US;
    let o = simulate(cfg, 1, INSTANT);
    let s = o.db.stats();
    let tx = s.transactions as f64;
    let client_per_tx = s.bucket_sum_ns[Bucket::Client.index()] as f64 / tx;
    assert!(
        client_per_tx > 7.0 * 10.0 * US as f64 * 2.0,
        "{client_per_tx}"
    );
    // Its time on or waiting for the core covers at least its CPU.
    let thread_per_tx = s.counters.client_thread_time.sum_ns as f64 / tx;
    assert!(
        thread_per_tx >= 7.0 * 10.0 * US as f64 * 0.99,
        "{thread_per_tx}"
    );
}

#[test]
fn a_round_trip_costs_cpu_only_when_the_statement_wakes_a_backend_onto_an_idle_core() {
    // pgbench's threads on the host: the round trip is the CPU of waking a
    // backend onto an idle core. One client always finds one; sixteen on
    // two cores hardly ever do.
    let run = |clients: u32, round_trip: Nanos| {
        let mut cfg = config(clients, 8192);
        cfg.client_threads = clients.min(2);
        cfg.client_cpu = 10 * US;
        cfg.round_trip = round_trip;
        simulate(cfg, 20, INSTANT)
    };
    let per_tx = |o: &Outcome, b: Bucket| {
        let s = o.db.stats();
        s.bucket_sum_ns[b.index()] as f64 / s.transactions as f64
    };
    let tx = |o: &Outcome| o.db.stats().transactions as f64;
    // 1 client: 7 statements, each 50 µs more of the backend's CPU.
    let (without, with) = (run(1, 0), run(1, 50 * US));
    let more_cpu = per_tx(&with, Bucket::Cpu) - per_tx(&without, Bucket::Cpu);
    assert!(
        (more_cpu - 7.0 * 50.0 * US as f64).abs() < 0.01 * 350.0 * US as f64,
        "{more_cpu}"
    );
    assert_eq!(per_tx(&with, Bucket::Other), 0.0);
    assert!(tx(&with) < 0.75 * tx(&without));
    // 16 clients saturate the cores: the wake-ups queue instead, and cost
    // almost nothing (350 µs per transaction charged every time would
    // nearly halve the rate).
    let (without, with) = (run(16, 0), run(16, 50 * US));
    assert!(
        tx(&with) > 0.95 * tx(&without),
        "{} vs {}",
        tx(&with),
        tx(&without)
    );
    // A statement with no CPU of its own (SELECT 1 here) still pays for
    // its wake-up.
    let mut cfg = config(1, 8192);
    cfg.client_threads = 1;
    cfg.client_cpu = 10 * US;
    cfg.round_trip = 50 * US;
    let o = simulate_workload(cfg, bloated_table(10), INSTANT);
    let cpu = per_tx(&o, Bucket::Cpu);
    assert!(
        (cpu - 50.0 * US as f64).abs() < 0.01 * 50.0 * US as f64,
        "{cpu}"
    );
}
