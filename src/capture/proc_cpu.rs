//! The CPU a local PostgreSQL server spends, from /proc: the postmaster and
//! every process it started (backends, checkpointer, background writer,
//! WAL writer, autovacuum), user and system time. Read at the capture's
//! start and end; a process that exits between the two takes its CPU with
//! it (pgbench's connections last the run; short-lived ones are lost), so
//! the figure is a floor.

use std::collections::HashMap;
use std::path::Path;

/// One reading: CPU seconds of each process of the server, by pid.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reading {
    pub postmaster: u32,
    pub by_pid: HashMap<u32, f64>,
}

/// The `PPid:` of /proc/PID/status.
fn parent(proc_root: &Path, pid: u32) -> Option<u32> {
    let status = std::fs::read_to_string(proc_root.join(pid.to_string()).join("status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))
        .and_then(|v| v.trim().parse().ok())
}

/// utime + stime of /proc/PID/stat, in clock ticks. The command name (field
/// 2) may hold spaces and parentheses: the fields after it follow its last
/// ')'.
fn ticks(stat: &str) -> Option<u64> {
    let rest = &stat[stat.rfind(')')? + 1..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    // After the name: state is field 3, utime field 14, stime field 15.
    let utime: u64 = f.get(11)?.parse().ok()?;
    let stime: u64 = f.get(12)?.parse().ok()?;
    Some(utime + stime)
}

fn clock_ticks_per_s() -> f64 {
    // SAFETY: sysconf reads a constant of the running kernel.
    let t = unsafe { libc::sysconf(libc::_SC_CLK_TCK) };
    if t > 0 { t as f64 } else { 100.0 }
}

/// The postmaster of the backend `backend_pid`, if that backend runs on
/// this host: its parent, whose command line names postgres.
pub fn local_postmaster(proc_root: &Path, backend_pid: u32) -> Option<u32> {
    let pm = parent(proc_root, backend_pid)?;
    let cmd = std::fs::read(proc_root.join(pm.to_string()).join("cmdline")).ok()?;
    let cmd = String::from_utf8_lossy(&cmd);
    (pm > 1 && (cmd.contains("postgres") || cmd.contains("postmaster"))).then_some(pm)
}

/// The CPU seconds of the postmaster `pm` and its children now.
pub fn read(proc_root: &Path, pm: u32) -> Reading {
    let hz = clock_ticks_per_s();
    let mut by_pid = HashMap::new();
    let Ok(dir) = std::fs::read_dir(proc_root) else {
        return Reading {
            postmaster: pm,
            by_pid,
        };
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid != pm && parent(proc_root, pid) != Some(pm) {
            continue;
        }
        if let Some(t) = std::fs::read_to_string(e.path().join("stat"))
            .ok()
            .as_deref()
            .and_then(ticks)
        {
            by_pid.insert(pid, t as f64 / hz);
        }
    }
    Reading {
        postmaster: pm,
        by_pid,
    }
}

/// CPU seconds spent between two readings: each process's growth, a
/// process started since counted whole.
pub fn spent(start: &Reading, end: &Reading) -> f64 {
    end.by_pid
        .iter()
        .map(|(pid, s)| (s - start.by_pid.get(pid).copied().unwrap_or(0.0)).max(0.0))
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_skip_a_name_with_spaces_and_parentheses() {
        let stat = "4242 (postgres: app db (x) idle) S 4200 4200 4200 0 -1 4194560 \
                    1 0 0 0 120 30 0 0 20 0 1 0 100 0 0";
        assert_eq!(ticks(stat), Some(150));
        assert_eq!(ticks("garbage"), None);
    }

    #[test]
    fn spent_counts_growth_and_new_processes() {
        let a = Reading {
            postmaster: 1,
            by_pid: HashMap::from([(10, 1.0), (11, 2.0), (12, 5.0)]),
        };
        let b = Reading {
            postmaster: 1,
            by_pid: HashMap::from([(10, 1.5), (11, 2.0), (13, 0.25)]),
        };
        assert!((spent(&a, &b) - 0.75).abs() < 1e-9);
    }

    #[test]
    fn this_process_is_read_as_a_postmaster_of_its_children() {
        // The test binary as the "postmaster": itself at least, with a
        // positive CPU figure once it has burnt some.
        let me = std::process::id();
        let mut x = 0u64;
        for i in 0..3_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        let r = read(Path::new("/proc"), me);
        assert!(r.by_pid.get(&me).copied().unwrap_or(0.0) >= 0.0);
        assert!(r.by_pid.contains_key(&me));
    }
}
