//! The vocabulary between the core and a device: requests out, completions in.
//!
//! Every request carries a `Token` the device hands back on completion, the
//! way io_uring's `user_data` does. Offsets are in the core's terms (data
//! block numbers, WAL segment and byte offset); the device maps them to files.

use super::time::Nanos;

/// Size of a PostgreSQL page and of a WAL page (BLCKSZ, XLOG_BLCKSZ).
pub const PAGE_BYTES: u64 = 8192;
/// Size of one WAL segment (DEFAULT_XLOG_SEG_SIZE).
pub const WAL_SEGMENT_BYTES: u64 = 16 * 1024 * 1024;

/// Identifies one outstanding request.
pub type Token = u64;

/// What a request asks the device to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    /// Read one 8 KiB data block (`block` counts data blocks from 0).
    ReadPage { block: u64 },
    /// Read `pages` consecutive data blocks from `block` in one request:
    /// what the kernel's readahead sends the disk for a sequential reader.
    ReadRun { block: u64, pages: u32 },
    /// Write one 8 KiB data block. `kernel_writeback`: PostgreSQL leaves
    /// this page's writeback to the kernel (its writer's *_flush_after is 0),
    /// which matters where a cap does not charge the kernel's writeback
    /// (cgroup v1).
    /// `batch`: the writer's writeback batch this page joins
    /// ([`super::writeback::WritebackContext`]); 0 when the kernel writes it
    /// back or no writer batches it.
    WritePage {
        block: u64,
        kernel_writeback: bool,
        batch: u64,
    },
    /// `write()` of one 8 KiB data block into the page cache the core
    /// models: no device I/O, the core's kernel flusher writes the page back
    /// later ([`super::kernel_flusher`]). On real files, a buffered write.
    CacheWrite { block: u64 },
    /// The kernel writes back `pages` dirty data blocks from `block` in one
    /// request: the flusher's (`flusher`, charged to no cgroup where the
    /// profile says so) or an fsync's, in its caller's context.
    Writeback {
        block: u64,
        pages: u32,
        flusher: bool,
    },
    /// Write `len` bytes (a multiple of 8 KiB) of WAL at byte `offset`
    /// (a multiple of 8 KiB) inside WAL segment file `segment`.
    WalWrite { segment: u32, offset: u64, len: u64 },
    /// fdatasync one WAL segment file.
    WalSync { segment: u32 },
    /// Read `len` bytes (a multiple of 8 KiB) of WAL at byte `offset` inside
    /// WAL segment file `segment`: a standby's startup process reading the
    /// WAL it replays, in readahead-sized requests.
    WalRead { segment: u32, offset: u64, len: u64 },
    /// fsync the data file (end of a checkpoint).
    DataSync,
    /// Standby `standby`'s walreceiver writes `len` bytes of WAL at `offset`
    /// in its own segment file `segment` (on the standby's device).
    StandbyWalWrite {
        standby: u8,
        segment: u32,
        offset: u64,
        len: u64,
    },
    /// Standby `standby`'s walreceiver fdatasyncs its segment file `segment`.
    StandbyWalSync { standby: u8, segment: u32 },
}

impl IoKind {
    /// The standby whose device this I/O is for; None: the primary's.
    pub fn standby(self) -> Option<u8> {
        match self {
            IoKind::StandbyWalWrite { standby, .. } | IoKind::StandbyWalSync { standby, .. } => {
                Some(standby)
            }
            _ => None,
        }
    }
}

/// One request from the core to the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoRequest {
    pub token: Token,
    pub kind: IoKind,
}

/// One finished request, stamped with the time it finished.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IoCompletion {
    pub token: Token,
    pub at: Nanos,
}
