//! Benchmarks of the simulation's hot paths: `cargo bench`.
//!
//! Each measures one piece of `model`'s work on a state of server size
//! (two million buffers, a million cached pages), where the CPU caches
//! miss as they do in a model of hundreds of GB; the last measures one
//! simulated second of the cached case of `scripts/bench-model`.

use clap::Parser;
use divan::{Bencher, black_box, counter::ItemsCount};

use pgiosim::cli::ModelArgs;
use pgiosim::core::buffer_pool::{BufferPool, Lookup};
use pgiosim::core::cpu::Cpu;
use pgiosim::core::os_cache::OsCache;
use pgiosim::core::timer_queue::TimerQueue;
use pgiosim::engine::driver::drive;
use pgiosim::execute::model_parts;
use pgiosim::stop::Stop;

fn main() {
    divan::main();
}

/// A cheap, repeatable stream of numbers (no RNG crate in the loop).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 16
    }
}

/// 16 GB of shared_buffers over a 500 GB data set.
const BUFFERS: u32 = 2 * 1024 * 1024;
const BLOCKS: u64 = 64 * 1024 * 1024;
const OPS: usize = 10_000;

/// A pool whose buffers all hold a block (every 32nd of the data set).
fn full_pool() -> BufferPool {
    let mut p = BufferPool::with_blocks(BUFFERS, BLOCKS);
    for i in 0..BUFFERS as u64 {
        let b = p.clock_sweep().expect("a free buffer");
        assert!(p.assign(b, i * 32));
        p.read_done(b);
        p.unpin(b);
    }
    p
}

#[divan::bench(sample_count = 20)]
fn buffer_pool_lookup_hit(bencher: Bencher) {
    let mut pool = full_pool();
    let mut rng = Lcg(1);
    bencher.counter(ItemsCount::new(OPS)).bench_local(|| {
        for _ in 0..OPS {
            let block = rng.next() % BUFFERS as u64 * 32;
            match pool.lookup(block) {
                Lookup::Hit(b) => pool.unpin(b),
                other => panic!("{other:?}"),
            }
        }
    });
}

#[divan::bench(sample_count = 20)]
fn buffer_pool_miss_and_evict(bencher: Bencher) {
    let mut pool = full_pool();
    let mut rng = Lcg(2);
    bencher.counter(ItemsCount::new(OPS)).bench_local(|| {
        for _ in 0..OPS {
            let block = rng.next() % BLOCKS;
            match pool.lookup(block) {
                Lookup::Hit(b) => pool.unpin(b),
                Lookup::Miss => {
                    let v = pool.clock_sweep().expect("a victim");
                    if pool.assign(v, block) {
                        pool.read_done(v);
                    }
                    pool.unpin(v);
                }
                Lookup::ReadInProgress(_) => unreachable!(),
            }
        }
    });
}

#[divan::bench(sample_count = 20)]
fn page_cache_read(bencher: Bencher) {
    let pages = 1 << 20;
    let mut cache = OsCache::new(pages);
    let mut rng = Lcg(3);
    // Full, then reads over twice what fits: about half hit.
    for _ in 0..3 * pages {
        cache.read(rng.next() % (2 * pages as u64));
    }
    bencher.counter(ItemsCount::new(OPS)).bench_local(|| {
        let mut hits = 0;
        for _ in 0..OPS {
            hits += cache.read(rng.next() % (2 * pages as u64)) as u32;
        }
        black_box(hits)
    });
}

#[divan::bench(sample_count = 20)]
fn timer_queue_push_pop(bencher: Bencher) {
    // 200 timers in flight: most of one recurring delay (round trips),
    // the rest scattered (CPU bursts, I/O).
    let mut q: TimerQueue<u32> = TimerQueue::new();
    let mut rng = Lcg(4);
    let mut now = 0;
    for i in 0..200 {
        q.push_after(now, now + 19_000 + i, i as u32);
    }
    bencher.counter(ItemsCount::new(OPS)).bench_local(|| {
        for _ in 0..OPS {
            let (at, item) = q.pop().expect("a timer");
            now = at;
            let delay = if item % 4 == 0 {
                rng.next() % 600_000
            } else {
                19_000
            };
            q.push_after(now, now + delay, item);
        }
    });
}

#[divan::bench(sample_count = 20)]
fn cpu_run_queue(bencher: Bencher) {
    // 64 backends on 16 cores, each asking for bursts of 20 to 620 µs.
    let mut cpu = Cpu::new(16);
    let mut rng = Lcg(5);
    let mut running: TimerQueue<u32> = TimerQueue::new();
    for id in 0..64 {
        if let Some(finish) = cpu.request(0, id, 20_000 + rng.next() % 600_000) {
            running.push(finish, id);
        }
    }
    bencher.counter(ItemsCount::new(OPS)).bench_local(|| {
        for _ in 0..OPS {
            let (now, id) = running.pop().expect("a burst on a core");
            if let Some((next, finish)) = cpu.release(now, id) {
                running.push(finish, next);
            }
            // It sleeps no time at all: it asks again at once.
            if let Some(finish) = cpu.request(now, id, 20_000 + rng.next() % 600_000) {
                running.push(finish, id);
            }
        }
    });
}

#[derive(Parser)]
struct Model {
    #[command(flatten)]
    args: ModelArgs,
}

/// One simulated second of `scripts/bench-model`'s cached case (tpcb-like,
/// scale 100, 32 clients, 4 GB of shared_buffers, nvme).
#[divan::bench(sample_count = 10)]
fn model_cached_one_second(bencher: Bencher) {
    let args = Model::parse_from([
        "model",
        "-q",
        "-s",
        "100",
        "-c",
        "32",
        "--cpus",
        "64",
        "--set",
        "shared_buffers=4GB",
        "-T",
        "1s",
        "--seed",
        "1",
        "--device",
        "nvme",
    ])
    .args;
    let stop = Stop::new();
    bencher
        .with_inputs(|| {
            model_parts(args.plan().expect("a plan")).expect("a model of the cached case")
        })
        .bench_local_values(|(mut db, mut dev)| {
            drive(&mut db, &mut dev, &stop, None, &mut |_| {}).expect("a simulation");
            black_box(db.stats().transactions)
        });
}
