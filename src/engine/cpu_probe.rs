//! The CPU probe: how fast this host does a statement's kind of work, so
//! that `run` and a calibrated profile describe this host's CPU instead of
//! the machine the workload's CPU figures were measured on.
//!
//! A round is one statement in miniature, both sides of it: a client
//! thread sends 64 bytes over a Unix socket pair, the server thread wakes,
//! parses the bytes, probes a hash table of 64 Ki entries (the buffer
//! mapping and the catalog caches), binary-searches a sorted array (an
//! index), reads one 8 KiB page of a 16 MiB memfd through the page cache
//! (`pread`, PostgreSQL's read of a cached block), sums the page (the
//! executor's tuple walk) and replies; the client wakes and reads the
//! reply. That is user-space integer work, system calls, a page copy and
//! two wake-ups across threads, the parts a backend's CPU per statement is
//! made of (docs/cpu-model.md). Each window's figure is the process's CPU
//! time (`CLOCK_PROCESS_CPUTIME_ID`, both threads) over its rounds; the
//! probe keeps the least of its windows, since a neighbour's burst on a
//! shared host only ever adds time. Both threads run on one CPU: a
//! wake-up across CPUs costs what the hypervisor makes it cost, from one
//! moment to the next, and spreads the windows far more than a pinned
//! probe's (docs/validation.md, "the CPU probe").
//!
//! The speed of this host against the machine of a workload's CPU figures
//! is that machine's probe time (the workload file's `cpu_probe_us`, with
//! its source) over this host's. The probe touches no file: its page is
//! an anonymous memfd.

use std::io::{Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;

use anyhow::{Context, Result, bail};
use serde::Serialize;

/// Rounds in one measured window: long enough that the clock's granularity
/// and a round's scheduling jitter vanish, short enough that the whole
/// probe takes a fraction of a second.
const ROUNDS_PER_WINDOW: u32 = 400;
/// Windows measured; the least is kept.
const WINDOWS: u32 = 5;
/// Rounds run before measuring: the page cache holds the memfd, the table
/// is faulted in and the threads have run once.
const WARMUP_ROUNDS: u32 = 200;
/// Hash table entries (power of two) and sorted-array length.
const TABLE_ENTRIES: usize = 1 << 16;
/// Lookups a round makes in the table, and binary searches in the array.
const LOOKUPS_PER_ROUND: usize = 64;
/// The memfd's size: 2,048 pages of 8 KiB.
const FILE_BYTES: usize = 16 << 20;
const PAGE: usize = 8192;
const MESSAGE: usize = 64;

/// What the probe measured on this host.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct ProbeResult {
    /// CPU time per round, µs: the least window's.
    pub us_per_round: f64,
    /// Every window's CPU time per round, µs, in order.
    pub windows_us: Vec<f64>,
    /// Rounds in a window.
    pub rounds_per_window: u32,
    /// Wall time the probe took, ms.
    pub wall_ms: f64,
}

impl ProbeResult {
    /// This host's speed against a machine whose probe took `reference_us`
    /// a round: 0.5 means each CPU cost here takes twice as long.
    pub fn speed_against(&self, reference_us: f64) -> f64 {
        reference_us / self.us_per_round
    }
}

/// Run the probe (about a tenth of a second on an idle core).
pub fn measure() -> Result<ProbeResult> {
    let wall = std::time::Instant::now();
    let pinned = Pin::to_current_cpu();
    let page_file = memfd(FILE_BYTES).context("CPU probe: creating its in-memory page file")?;
    let (mut client, server) = UnixStream::pair().context("CPU probe: a socket pair")?;
    let cpu = pinned.as_ref().map(|p| p.cpu);
    let server_thread = std::thread::Builder::new()
        .name("cpu-probe".into())
        .spawn(move || {
            if let Some(cpu) = cpu {
                set_affinity(&[cpu]);
            }
            serve(server, page_file)
        })
        .context("CPU probe: starting its server thread")?;
    let mut round = |n: u32, seed: &mut u64| -> Result<()> {
        let mut msg = [0u8; MESSAGE];
        let mut reply = [0u8; MESSAGE];
        for _ in 0..n {
            *seed = next(*seed);
            msg[..8].copy_from_slice(&seed.to_le_bytes());
            client.write_all(&msg).context("CPU probe: sending")?;
            client
                .read_exact(&mut reply)
                .context("CPU probe: receiving")?;
        }
        Ok(())
    };
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    round(WARMUP_ROUNDS, &mut seed)?;
    let mut windows_us = Vec::with_capacity(WINDOWS as usize);
    for _ in 0..WINDOWS {
        let t0 = process_cpu_ns()?;
        round(ROUNDS_PER_WINDOW, &mut seed)?;
        let t1 = process_cpu_ns()?;
        windows_us.push((t1 - t0) as f64 / 1e3 / f64::from(ROUNDS_PER_WINDOW));
    }
    // Closing our end ends the server's loop.
    drop(client);
    match server_thread.join() {
        Ok(r) => r?,
        Err(_) => bail!("CPU probe: its server thread panicked"),
    }
    drop(pinned);
    let us_per_round = windows_us.iter().copied().fold(f64::INFINITY, f64::min);
    Ok(ProbeResult {
        us_per_round,
        windows_us,
        rounds_per_window: ROUNDS_PER_WINDOW,
        wall_ms: wall.elapsed().as_secs_f64() * 1e3,
    })
}

/// The calling thread held on the CPU it runs on; its former CPUs back
/// when dropped.
struct Pin {
    cpu: usize,
    before: Vec<usize>,
}

impl Pin {
    /// None where the CPU or the affinity cannot be read (then the probe
    /// runs unpinned).
    fn to_current_cpu() -> Option<Pin> {
        // SAFETY: sched_getcpu has no arguments.
        let cpu = unsafe { libc::sched_getcpu() };
        let before = affinity()?;
        let cpu = usize::try_from(cpu).ok()?;
        set_affinity(&[cpu]).then_some(Pin { cpu, before })
    }
}

impl Drop for Pin {
    fn drop(&mut self) {
        set_affinity(&self.before);
    }
}

/// The calling thread's allowed CPUs.
fn affinity() -> Option<Vec<usize>> {
    // SAFETY: a zeroed cpu_set_t is a valid empty set, and we pass its size.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::sched_getaffinity(0, std::mem::size_of_val(&set), &mut set) } == 0;
    ok.then(|| {
        (0..libc::CPU_SETSIZE as usize)
            // SAFETY: `i` is below CPU_SETSIZE.
            .filter(|&i| unsafe { libc::CPU_ISSET(i, &set) })
            .collect()
    })
}

/// Allow the calling thread only `cpus`; whether it took.
fn set_affinity(cpus: &[usize]) -> bool {
    // SAFETY: as in `affinity`; CPU_SET is given indices below CPU_SETSIZE.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus.iter().filter(|&&c| c < libc::CPU_SETSIZE as usize) {
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    unsafe { libc::sched_setaffinity(0, std::mem::size_of_val(&set), &set) == 0 }
}

/// The server side: answer each message until the client hangs up.
fn serve(mut sock: UnixStream, file: OwnedFd) -> Result<()> {
    let (keys, table) = build_table();
    let mut page = vec![0u8; PAGE];
    let mut msg = [0u8; MESSAGE];
    loop {
        match sock.read_exact(&mut msg) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(()),
            Err(e) => return Err(e).context("CPU probe: server receiving"),
        }
        let mut seed = u64::from_le_bytes(msg[..8].try_into().expect("8 bytes"));
        // Parse: scan the message as a lexer scans a query.
        let mut acc = msg.iter().fold(0u64, |h, &b| {
            (h ^ u64::from(b)).wrapping_mul(0x100_0000_01b3)
        });
        for _ in 0..LOOKUPS_PER_ROUND {
            seed = next(seed);
            let key = keys[(seed as usize) % keys.len()];
            acc = acc.wrapping_add(lookup(&table, key));
            acc ^= keys.binary_search(&(key ^ 1)).unwrap_or_else(|i| i) as u64;
        }
        let pages = FILE_BYTES / PAGE;
        let offset = ((seed >> 17) as usize % pages) * PAGE;
        // SAFETY: `page` is PAGE bytes long and the fd is open for the
        // thread's lifetime.
        let n = unsafe {
            libc::pread(
                file.as_raw_fd(),
                page.as_mut_ptr().cast(),
                PAGE,
                offset as libc::off_t,
            )
        };
        if n != PAGE as isize {
            bail!(
                "CPU probe: reading its page file: {}",
                std::io::Error::last_os_error()
            );
        }
        acc = page.chunks_exact(8).fold(acc, |a, w| {
            a.rotate_left(5) ^ u64::from_le_bytes(w.try_into().expect("8"))
        });
        msg[8..16].copy_from_slice(&acc.to_le_bytes());
        sock.write_all(&msg).context("CPU probe: server replying")?;
    }
}

/// Sorted keys and an open-addressing table holding each.
fn build_table() -> (Vec<u64>, Vec<(u64, u64)>) {
    let mut s = 1u64;
    let mut keys: Vec<u64> = (0..TABLE_ENTRIES / 2)
        .map(|_| {
            s = next(s);
            s | 1
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut table = vec![(0u64, 0u64); TABLE_ENTRIES];
    for (i, &k) in keys.iter().enumerate() {
        let mut slot = slot_of(k);
        while table[slot].0 != 0 {
            slot = (slot + 1) & (TABLE_ENTRIES - 1);
        }
        table[slot] = (k, i as u64);
    }
    (keys, table)
}

fn slot_of(key: u64) -> usize {
    (key.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 48) as usize & (TABLE_ENTRIES - 1)
}

fn lookup(table: &[(u64, u64)], key: u64) -> u64 {
    let mut slot = slot_of(key);
    loop {
        let (k, v) = table[slot];
        if k == key {
            return v;
        }
        if k == 0 {
            return 0;
        }
        slot = (slot + 1) & (TABLE_ENTRIES - 1);
    }
}

/// xorshift64*: the probe's choices, the same on every host.
fn next(mut x: u64) -> u64 {
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    x.wrapping_mul(0x2545_f491_4f6c_dd1d)
}

/// An anonymous in-memory file of `bytes`, filled so its pages exist.
fn memfd(bytes: usize) -> Result<OwnedFd> {
    // SAFETY: a NUL-terminated name and no flags beyond close-on-exec.
    let fd = unsafe { libc::memfd_create(c"pgiosim-cpu-probe".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // SAFETY: `fd` was just returned to us and is owned by nothing else.
    let owned = unsafe { OwnedFd::from_raw_fd(fd) };
    let mut f = std::fs::File::from(owned);
    let chunk: Vec<u8> = (0..PAGE).map(|i| (i * 31 % 251) as u8).collect();
    for _ in 0..bytes / PAGE {
        f.write_all(&chunk)?;
    }
    Ok(OwnedFd::from(f))
}

fn process_cpu_ns() -> Result<u64> {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a pointer to a timespec we own.
    if unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) } != 0 {
        return Err(std::io::Error::last_os_error()).context("CPU probe: reading the CPU clock");
    }
    Ok(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_finds_every_key_and_misses_absent_ones() {
        let (keys, table) = build_table();
        for (i, &k) in keys.iter().enumerate() {
            assert_eq!(lookup(&table, k), i as u64);
        }
        // Keys are odd, so an even key is never present.
        assert_eq!(lookup(&table, 2), 0);
    }

    #[test]
    fn probe_measures_positive_windows_and_keeps_the_least() {
        let r = measure().unwrap();
        assert_eq!(r.windows_us.len(), WINDOWS as usize);
        assert!(r.windows_us.iter().all(|w| *w > 0.0));
        let least = r.windows_us.iter().copied().fold(f64::INFINITY, f64::min);
        assert_eq!(r.us_per_round, least);
        assert!((r.speed_against(2.0 * least) - 2.0).abs() < 1e-12);
    }
}
