//! The data and WAL files on disk.
//!
//! pgiosim works on two kinds of files: one data file holding every data
//! block (`<dir>/pgiosim.data`) and WAL segment files
//! (`<wal_dir>/pgiosim.wal.NNN`). Each starts with an 8 KiB header block that
//! says the file is pgiosim's, which kind it is and which layout it was
//! written for, so a later run can reuse it, and so pgiosim never overwrites
//! or removes a file that is not its own.
//!
//! Every block of a file is really written when the file is prepared (no
//! sparse files, no fallocate): unwritten extents read as zeros without
//! touching the disk, which would make reads look free. The header is written
//! last, after an fdatasync of the body, so a prepare that was interrupted is
//! never taken for a valid file: until then the header is marked "being
//! written", which still identifies the file as pgiosim's, so the next
//! prepare re-creates it and `cleanup` removes it.
//!
//! One pgiosim at a time uses a data set: [`lock`] takes an flock on
//! `pgiosim.lock` in the directory and in the WAL directory before anything
//! is read or written.
//!
//! This file holds the format (header, layout, what a file is); `lock.rs`
//! the lock, `prepare.rs` writing the files, `open.rs` opening them for a
//! run, `cleanup.rs` removing them.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use anyhow::{Context, Result, bail};

use crate::core::io::{IoKind, PAGE_BYTES, WAL_SEGMENT_BYTES};
use crate::error::{Interrupted, UsageError};
use crate::stop::Stop;

/// The first eight bytes of every file pgiosim creates.
pub const HEADER_MAGIC: &[u8; 8] = b"PGIOSIM1";

/// Version of the header format written after the magic.
const FORMAT_VERSION: u32 = 1;
/// Size of the header block at the start of every file.
const HEADER_BYTES: u64 = PAGE_BYTES;
/// Longest description kept in a header (longer ones are cut at a char boundary).
const DESCRIPTION_MAX_BYTES: usize = 4096;
/// Size of one write while filling a file.
const CHUNK_BYTES: u64 = 1 << 20;
/// Dirty-data window while filling a file: written back, then dropped from
/// the page cache, so preparing a big file neither floods memory nor leaves
/// the file cached (which would make a buffered run read from memory).
const FLUSH_WINDOW_BYTES: u64 = 64 << 20;

// Header field offsets (all integers little-endian).
const H_VERSION: usize = 8;
const H_STATE: usize = 12;
const H_KIND: usize = 16;
const H_SEGMENT: usize = 20;
const H_DATA_BLOCKS: usize = 24;
const H_WAL_SEGMENTS: usize = 32;
const H_CREATED_DIRS: usize = 36;
const H_DESC_LEN: usize = 40;
const H_DESC: usize = 64;

const STATE_BEING_WRITTEN: u32 = 0;
const STATE_COMPLETE: u32 = 1;
const KIND_DATA: u32 = 1;
const KIND_WAL: u32 = 2;
/// `created_dirs` bit: pgiosim created `dir`, so `cleanup` may remove it.
const CREATED_DIR: u32 = 1;
/// `created_dirs` bit: pgiosim created `wal_dir`, so `cleanup` may remove it.
const CREATED_WAL_DIR: u32 = 2;

const DATA_FILE_NAME: &str = "pgiosim.data";
/// The lock file of a data set, in `--dir` (and in `--wal-dir` when that is
/// elsewhere): one pgiosim at a time holds an flock on it.
const LOCK_FILE_NAME: &str = "pgiosim.lock";
/// What a lock file pgiosim created says (so `cleanup` knows it is its own).
const LOCK_FILE_TEXT: &[u8] =
    b"pgiosim lock file: a running pgiosim holds an flock on it; `pgiosim cleanup` removes it\n";
const WAL_FILE_PREFIX: &str = "pgiosim.wal.";

/// What the files must look like for one run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// Number of 8 KiB data blocks in the data file (not counting its header).
    pub data_blocks: u64,
    /// Number of 16 MiB WAL segment files.
    pub wal_segments: u32,
    /// Free text recorded in every header ("pgbench scale 100", "iobench"):
    /// a data file written for another description is re-created.
    pub description: String,
}

/// Where the files live: data file `<dir>/pgiosim.data`, WAL segment files
/// `<wal_dir>/pgiosim.wal.NNN` (wal_dir defaults to `<dir>/pg_wal`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataDir {
    /// Directory of the data file.
    pub dir: PathBuf,
    /// Directory of the WAL segment files.
    pub wal_dir: PathBuf,
}

impl DataDir {
    /// Files in `dir`, WAL in `wal_dir` or else in `<dir>/pg_wal`.
    pub fn new(dir: &Path, wal_dir: Option<&Path>) -> Self {
        DataDir {
            dir: dir.to_path_buf(),
            wal_dir: wal_dir.map_or_else(|| dir.join("pg_wal"), Path::to_path_buf),
        }
    }

    /// Path of the data file.
    pub fn data_path(&self) -> PathBuf {
        self.dir.join(DATA_FILE_NAME)
    }

    /// Path of WAL segment file `i`.
    pub fn wal_path(&self, i: u32) -> PathBuf {
        self.wal_dir.join(format!("{WAL_FILE_PREFIX}{i:03}"))
    }
}

/// What `prepare` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prepared {
    /// Every file was already there and matched the layout; nothing was
    /// rewritten (at most a header was brought up to date).
    Reused,
    /// At least one file was written in full.
    Created,
}

/// Byte offset of data block `block` in the data file (block 0 of the file
/// is the header).
pub fn data_offset(block: u64) -> u64 {
    (block + 1) * PAGE_BYTES
}

/// Byte offset in a WAL segment file of WAL byte `offset` in that segment
/// (each segment file is an 8 KiB header then 16 MiB of WAL).
pub fn wal_offset(offset: u64) -> u64 {
    HEADER_BYTES + offset
}

/// Size of the data file for `data_blocks` blocks.
fn data_file_bytes(data_blocks: u64) -> u64 {
    HEADER_BYTES + data_blocks * PAGE_BYTES
}

/// Size of one WAL segment file.
fn wal_file_bytes() -> u64 {
    HEADER_BYTES + WAL_SEGMENT_BYTES
}

/// Which kind of pgiosim file a header describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FileKind {
    Data,
    Wal(u32),
}

/// The decoded header of a pgiosim file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Header {
    complete: bool,
    kind: FileKind,
    data_blocks: u64,
    wal_segments: u32,
    created_dirs: u32,
    description: String,
}

/// `s` cut to at most `DESCRIPTION_MAX_BYTES`, at a char boundary.
fn clip_description(s: &str) -> &str {
    if s.len() <= DESCRIPTION_MAX_BYTES {
        return s;
    }
    let mut end = DESCRIPTION_MAX_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

impl Header {
    fn for_layout(kind: FileKind, layout: &Layout, created_dirs: u32, complete: bool) -> Self {
        Header {
            complete,
            kind,
            data_blocks: layout.data_blocks,
            wal_segments: layout.wal_segments,
            created_dirs,
            description: clip_description(&layout.description).to_string(),
        }
    }

    fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; HEADER_BYTES as usize];
        b[..8].copy_from_slice(HEADER_MAGIC);
        let state = if self.complete {
            STATE_COMPLETE
        } else {
            STATE_BEING_WRITTEN
        };
        let (kind, segment) = match self.kind {
            FileKind::Data => (KIND_DATA, 0),
            FileKind::Wal(i) => (KIND_WAL, i),
        };
        let desc = clip_description(&self.description).as_bytes();
        b[H_VERSION..H_VERSION + 4].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        b[H_STATE..H_STATE + 4].copy_from_slice(&state.to_le_bytes());
        b[H_KIND..H_KIND + 4].copy_from_slice(&kind.to_le_bytes());
        b[H_SEGMENT..H_SEGMENT + 4].copy_from_slice(&segment.to_le_bytes());
        b[H_DATA_BLOCKS..H_DATA_BLOCKS + 8].copy_from_slice(&self.data_blocks.to_le_bytes());
        b[H_WAL_SEGMENTS..H_WAL_SEGMENTS + 4].copy_from_slice(&self.wal_segments.to_le_bytes());
        b[H_CREATED_DIRS..H_CREATED_DIRS + 4].copy_from_slice(&self.created_dirs.to_le_bytes());
        b[H_DESC_LEN..H_DESC_LEN + 4].copy_from_slice(&(desc.len() as u32).to_le_bytes());
        b[H_DESC..H_DESC + desc.len()].copy_from_slice(desc);
        b
    }

    /// Decodes a header that starts with the magic; `None` if it is of
    /// another format version or cut short.
    fn decode(b: &[u8]) -> Option<Header> {
        if b.len() < HEADER_BYTES as usize || &b[..8] != HEADER_MAGIC {
            return None;
        }
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_le_bytes(b[o..o + 8].try_into().unwrap());
        if u32_at(H_VERSION) != FORMAT_VERSION {
            return None;
        }
        let complete = match u32_at(H_STATE) {
            STATE_COMPLETE => true,
            STATE_BEING_WRITTEN => false,
            _ => return None,
        };
        let kind = match u32_at(H_KIND) {
            KIND_DATA => FileKind::Data,
            KIND_WAL => FileKind::Wal(u32_at(H_SEGMENT)),
            _ => return None,
        };
        let desc_len = u32_at(H_DESC_LEN) as usize;
        if desc_len > DESCRIPTION_MAX_BYTES {
            return None;
        }
        let description = String::from_utf8(b[H_DESC..H_DESC + desc_len].to_vec()).ok()?;
        Some(Header {
            complete,
            kind,
            data_blocks: u64_at(H_DATA_BLOCKS),
            wal_segments: u32_at(H_WAL_SEGMENTS),
            created_dirs: u32_at(H_CREATED_DIRS),
            description,
        })
    }
}

/// What is found at a path pgiosim wants to use.
#[derive(Debug)]
enum Found {
    Missing,
    /// Exists but is not a regular file; says what it is.
    NotRegular(&'static str),
    /// A regular file of zero bytes: nothing to lose by writing it.
    Empty,
    /// A regular file that does not start with pgiosim's magic.
    Foreign,
    /// pgiosim's magic; the header if it could be decoded, the file size.
    Ours(Option<Header>, u64),
}

fn file_type_name(ft: fs::FileType) -> &'static str {
    if ft.is_dir() {
        "a directory"
    } else if ft.is_block_device() {
        "a block device"
    } else if ft.is_char_device() {
        "a character device"
    } else if ft.is_fifo() {
        "a FIFO"
    } else if ft.is_socket() {
        "a socket"
    } else {
        "not a regular file"
    }
}

/// Reads as much of the first `buf.len()` bytes of `f` as there are.
fn read_prefix(f: &File, buf: &mut [u8]) -> io::Result<usize> {
    let mut got = 0;
    while got < buf.len() {
        match f.read_at(&mut buf[got..], got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(got)
}

/// Looks at `path` (following symlinks) without changing anything.
fn inspect(path: &Path) -> Result<Found> {
    let meta = match fs::metadata(path) {
        Ok(m) => m,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Found::Missing),
        Err(e) => return Err(e).with_context(|| format!("cannot examine {}", path.display())),
    };
    if !meta.is_file() {
        return Ok(Found::NotRegular(file_type_name(meta.file_type())));
    }
    if meta.len() == 0 {
        return Ok(Found::Empty);
    }
    let f = File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
    let mut buf = vec![0u8; HEADER_BYTES as usize];
    let got =
        read_prefix(&f, &mut buf).with_context(|| format!("cannot read {}", path.display()))?;
    if got < HEADER_MAGIC.len() || &buf[..HEADER_MAGIC.len()] != HEADER_MAGIC {
        return Ok(Found::Foreign);
    }
    Ok(Found::Ours(Header::decode(&buf[..got]), meta.len()))
}

/// One file pgiosim needs for a layout.
struct Wanted {
    path: PathBuf,
    kind: FileKind,
    bytes: u64,
}

fn wanted_files(dd: &DataDir, layout: &Layout) -> Vec<Wanted> {
    let mut v = vec![Wanted {
        path: dd.data_path(),
        kind: FileKind::Data,
        bytes: data_file_bytes(layout.data_blocks),
    }];
    for i in 0..layout.wal_segments {
        v.push(Wanted {
            path: dd.wal_path(i),
            kind: FileKind::Wal(i),
            bytes: wal_file_bytes(),
        });
    }
    v
}

/// Whether a header found on disk describes a complete file whose content
/// serves `layout`. The data file must have been written for the same number
/// of blocks and the same description; a WAL segment file only has to be
/// that segment (its content does not depend on the rest of the layout).
fn content_matches(h: &Header, size: u64, w: &Wanted, layout: &Layout) -> bool {
    if !h.complete || h.kind != w.kind || size != w.bytes {
        return false;
    }
    match w.kind {
        FileKind::Data => {
            h.data_blocks == layout.data_blocks
                && h.description == clip_description(&layout.description)
        }
        FileKind::Wal(_) => true,
    }
}

/// Whether the header records exactly `layout` (else it is rewritten).
fn header_records(h: &Header, layout: &Layout) -> bool {
    h.data_blocks == layout.data_blocks
        && h.wal_segments == layout.wal_segments
        && h.description == clip_description(&layout.description)
}

fn flag_hint(kind: FileKind) -> &'static str {
    match kind {
        FileKind::Data => "--dir",
        FileKind::Wal(_) => "--wal-dir",
    }
}

/// Creates `dir` if missing (its parent must exist). Returns whether it was
/// created.
fn ensure_dir(dir: &Path) -> Result<bool> {
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => return Ok(false),
        Ok(_) => bail!("{} exists and is not a directory", dir.display()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot examine {}", dir.display())),
    }
    match fs::create_dir(dir) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            let parent = dir.parent().unwrap_or(Path::new("/"));
            let parent = if parent.as_os_str().is_empty() {
                Path::new(".")
            } else {
                parent
            };
            if parent.is_dir() {
                // The parent is there but refuses new entries with ENOENT:
                // /proc and /sys do that.
                refuse_virtual_fs(parent)?;
                return Err(e).with_context(|| {
                    format!(
                        "cannot create directory {} (its parent {} exists)",
                        dir.display(),
                        parent.display()
                    )
                });
            }
            bail!(
                "directory {} does not exist, and neither does its parent {}; create it first",
                dir.display(),
                parent.display()
            )
        }
        Err(e) => Err(e).with_context(|| format!("cannot create directory {}", dir.display())),
    }
}

/// Refuses a directory on a file system with no disk behind it (procfs,
/// sysfs, cgroup, ...): nothing pgiosim writes there would measure a disk.
pub(crate) fn refuse_virtual_fs(dir: &Path) -> Result<()> {
    // Magic numbers from linux/magic.h.
    const VIRTUAL: [(i64, &str); 10] = [
        (0x9fa0, "procfs"),
        (0x6265_6572, "sysfs"),
        (0x0027_e0eb, "cgroup"),
        (0x6367_7270, "cgroup2"),
        (0x6462_6720, "debugfs"),
        (0x7472_6163, "tracefs"),
        (0x7363_6673, "securityfs"),
        (0x1cd1, "devpts"),
        (0xcafe_4a11, "bpf"),
        (0x6165_676c, "pstore"),
    ];
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return Ok(());
    };
    // SAFETY: `c` is a valid NUL-terminated string and `st` a writable
    // statfs that the call fills in; both outlive the call.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Ok(());
    }
    if let Some((_, name)) = VIRTUAL.iter().find(|(m, _)| *m == st.f_type as i64) {
        return Err(UsageError(format!(
            "{} is on {name}, a virtual file system with no disk behind it: pgiosim cannot \
             put its files there; choose a directory on the disk you want to test (--dir)",
            dir.display()
        ))
        .into());
    }
    Ok(())
}

mod cleanup;
mod lock;
mod open;
mod prepare;
#[cfg(test)]
mod tests;
mod writeback;

pub use cleanup::cleanup;
use lock::*;
pub use lock::{DataSetLock, lock};
pub use open::*;
pub(crate) use prepare::fill_blocks;
pub use prepare::{prepare, prepare_locked};
pub use writeback::PendingWritebacks;
