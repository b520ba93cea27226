//! The instance's processes as the CPU scheduler sees them: every process
//! that asks `Cpu` for a core is a `Proc`.
//!
//! `Cpu` keys its processes by a `u32`: those numbered from 0 up (the
//! backends) in one table, those numbered from `u32::MAX` down (the others)
//! in another. `From<Proc> for u32` and `Proc::decode` are the one place that
//! numbering is defined; everything above them speaks `Proc`.

/// The processes other than backends that write data pages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Background {
    BgWriter = 0,
    Checkpointer = 1,
    Vacuum = 2,
}

/// How many `Background` writers there are: at most one CPU burst each is
/// on a core or queued for one.
pub(super) const WRITERS: usize = 3;

impl Background {
    /// Every background writer, by index.
    const ALL: [Background; WRITERS] = [
        Background::BgWriter,
        Background::Checkpointer,
        Background::Vacuum,
    ];
}

/// A process that takes a core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Proc {
    /// Client backend `c` (in a catch-up, backend 0 is the startup process).
    Backend(u32),
    /// pgbench's worker thread `t` (`-j`).
    PgbenchThread(u32),
    /// A background writer spending the CPU of its data-page writes
    /// (`Database::writer_cpu`).
    Writer(Background),
    /// The process waking from a WAL fdatasync. One flush is in flight at
    /// a time, so one name serves; it is a different backend each time, so
    /// the scheduler forgets its history (`Cpu::forget`).
    Flusher,
    /// The backend that leads the next WAL flush when it wakes (see
    /// `WalLeader`).
    Leader,
}

/// Backends are numbered from 0 below this; the others from `u32::MAX` down
/// to above it (as `Cpu` splits its tables).
const HIGH: u32 = 1 << 31;

/// The first id of the named processes counted down from `u32::MAX`:
/// the flusher, then the writers, then the leader, then pgbench's threads.
const FLUSHER: u32 = u32::MAX;
const WRITER: u32 = FLUSHER - 1;
const LEADER: u32 = WRITER - WRITERS as u32;
const PGBENCH_THREAD: u32 = LEADER - 1;

impl From<Proc> for u32 {
    /// The process's id in the CPU scheduler.
    fn from(p: Proc) -> u32 {
        match p {
            Proc::Backend(c) => {
                debug_assert!(c < HIGH, "backend ids stay below the others");
                c
            }
            Proc::PgbenchThread(t) => PGBENCH_THREAD - t,
            Proc::Writer(w) => WRITER - w as u32,
            Proc::Flusher => FLUSHER,
            Proc::Leader => LEADER,
        }
    }
}

impl Proc {
    /// The process with CPU scheduler id `id` (one that `u32::from` made).
    pub(super) fn decode(id: u32) -> Proc {
        if id < HIGH {
            return Proc::Backend(id);
        }
        match id {
            FLUSHER => Proc::Flusher,
            LEADER => Proc::Leader,
            _ if id > LEADER => Proc::Writer(Background::ALL[(WRITER - id) as usize]),
            _ => Proc::PgbenchThread(PGBENCH_THREAD - id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decode_inverts_the_scheduler_ids_laid_out_from_both_ends() {
        let mut procs = vec![Proc::Flusher, Proc::Leader];
        procs.extend(Background::ALL.map(Proc::Writer));
        procs.extend((0..64).map(Proc::Backend));
        procs.extend((0..64).map(Proc::PgbenchThread));
        for p in procs {
            assert_eq!(Proc::decode(p.into()), p);
        }
        // The numbering the scheduler's tables were laid out by.
        assert_eq!(u32::from(Proc::Flusher), u32::MAX);
        assert_eq!(u32::from(Proc::Writer(Background::BgWriter)), u32::MAX - 1);
        assert_eq!(u32::from(Proc::Writer(Background::Vacuum)), u32::MAX - 3);
        assert_eq!(u32::from(Proc::Leader), u32::MAX - 4);
        assert_eq!(u32::from(Proc::PgbenchThread(0)), u32::MAX - 5);
        assert_eq!(u32::from(Proc::PgbenchThread(2)), u32::MAX - 7);
        assert_eq!(u32::from(Proc::Backend(7)), 7);
    }
}
