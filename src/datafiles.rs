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
//! `pgiosim.lock` in the directory (and in the WAL directory when it is
//! elsewhere) before anything is read or written.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{FileExt, FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};

use anyhow::{Context, Result, bail};

use crate::core::io::{IoKind, PAGE_BYTES, WAL_SEGMENT_BYTES};
use crate::error::{Interrupted, UsageError};

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

/// The data set's lock, held from before `prepare` to the end of the run, so
/// that a second pgiosim on the same files is refused instead of
/// interleaving its writes with the first's. Released on drop.
#[derive(Debug)]
pub struct DataSetLock {
    /// The lock files, open and flocked.
    _files: Vec<File>,
    /// `created_dirs` bits of the directories this lock had to create.
    created_dirs: u32,
    /// Those directories, in the order they were created.
    created: Vec<PathBuf>,
}

/// Takes the data set's lock: creates `dd.dir` (and `dd.wal_dir`) if
/// missing (each parent must exist), then an exclusive, non-blocking flock on
/// `pgiosim.lock` in `dd.dir` and in `dd.wal_dir` (inside it or not: another
/// data set may name it as its WAL directory). Refuses at once, naming the
/// lock file, when another process holds it.
pub fn lock(dd: &DataDir) -> Result<DataSetLock> {
    refuse_virtual_fs(&dd.dir)?;
    let mut held = DataSetLock {
        _files: Vec::new(),
        created_dirs: 0,
        created: Vec::new(),
    };
    let result = (|| -> Result<()> {
        if ensure_dir(&dd.dir)? {
            held.created.push(dd.dir.clone());
            held.created_dirs |= CREATED_DIR;
        }
        held._files.push(lock_in(&dd.dir, "--dir")?);
        if !dd.wal_dir.starts_with(&dd.dir) {
            refuse_virtual_fs(&dd.wal_dir)?;
        }
        if ensure_dir(&dd.wal_dir)? {
            held.created.push(dd.wal_dir.clone());
            held.created_dirs |= CREATED_WAL_DIR;
        }
        // The WAL directory is locked even inside --dir: another data set
        // may name it as its --wal-dir, and must find it taken.
        if dd.wal_dir != dd.dir {
            held._files.push(lock_in(&dd.wal_dir, "--wal-dir")?);
        }
        Ok(())
    })();
    if let Err(e) = result {
        for dir in held.created.iter().rev() {
            let _ = fs::remove_file(dir.join(LOCK_FILE_NAME));
            let _ = fs::remove_dir(dir);
        }
        return Err(e);
    }
    Ok(held)
}

/// The flocked lock file in `dir` (which exists), created if missing;
/// `flag` names the flag that chose `dir`, in errors.
fn lock_in(dir: &Path, flag: &str) -> Result<File> {
    let path = dir.join(LOCK_FILE_NAME);
    let p = path.display();
    // The file can be removed (by `cleanup`) between our open and our flock:
    // then the lock is on an unlinked file, so try again.
    for _ in 0..3 {
        let f = match OpenOptions::new().write(true).create_new(true).open(&path) {
            Ok(mut f) => {
                use std::io::Write as _;
                f.write_all(LOCK_FILE_TEXT)
                    .with_context(|| format!("cannot write {p}"))?;
                f
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                let meta =
                    fs::symlink_metadata(&path).with_context(|| format!("cannot examine {p}"))?;
                if !meta.file_type().is_file() || !is_our_lock_file(&path) {
                    bail!(
                        "{p} exists and is not pgiosim's lock file; refusing to use this \
                         directory; remove it or choose another {flag}"
                    );
                }
                File::open(&path).with_context(|| format!("cannot open {p}"))?
            }
            Err(e) => {
                return Err(e)
                    .with_context(|| format!("directory {} is not writable", dir.display()));
            }
        };
        // SAFETY: a plain syscall on an open descriptor; no memory is passed.
        if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } != 0 {
            let e = io::Error::last_os_error();
            if e.raw_os_error() == Some(libc::EWOULDBLOCK) {
                bail!(
                    "another pgiosim is using the data set in {} (it holds the lock on {p}); \
                     wait for it to finish, or give this one another {flag}",
                    dir.display()
                );
            }
            return Err(e).with_context(|| format!("cannot lock {p}"));
        }
        let same = match (f.metadata(), fs::metadata(&path)) {
            (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
            _ => false,
        };
        if same {
            return Ok(f);
        }
    }
    bail!("cannot lock {p}: it keeps being removed and re-created")
}

/// Whether `path` holds what pgiosim writes in a lock file.
fn is_our_lock_file(path: &Path) -> bool {
    let Ok(f) = File::open(path) else {
        return false;
    };
    let mut buf = vec![0u8; LOCK_FILE_TEXT.len() + 1];
    matches!(read_prefix(&f, &mut buf), Ok(n) if &buf[..n] == LOCK_FILE_TEXT)
}

/// After `prepare` stopped or failed while writing `path`: remove the
/// partial file (or, if it was an empty file found there, empty it again) and
/// say so in the error; if that fails too, the error says how to clean up.
fn discard_partial(dd: &DataDir, path: &Path, was_empty: bool, e: anyhow::Error) -> anyhow::Error {
    let undone = if was_empty {
        OpenOptions::new()
            .write(true)
            .open(path)
            .and_then(|f| f.set_len(0))
    } else {
        fs::remove_file(path)
    };
    match undone {
        Ok(()) => e.context(format!(
            "prepare stopped; removed the partial {} (the files already complete are kept)",
            path.display()
        )),
        Err(rm) => e.context(format!(
            "prepare stopped; {} is left marked \"being written\" (no run uses it), and \
             removing it failed ({rm}): run `pgiosim cleanup --dir {}{}`",
            path.display(),
            dd.dir.display(),
            if dd.wal_dir == dd.dir.join("pg_wal") {
                String::new()
            } else {
                format!(" --wal-dir {}", dd.wal_dir.display())
            }
        )),
    }
}

/// Fails with a message naming `dir` if a file cannot be created in it.
fn check_writable(dir: &Path) -> Result<()> {
    let probe = dir.join(format!(".pgiosim-write-test.{}", std::process::id()));
    match OpenOptions::new().write(true).create_new(true).open(&probe) {
        Ok(f) => {
            drop(f);
            fs::remove_file(&probe)
                .with_context(|| format!("cannot remove probe file {}", probe.display()))
        }
        Err(e) => Err(e).with_context(|| format!("directory {} is not writable", dir.display())),
    }
}

/// Bytes available to this user on the filesystem holding `dir`; None when
/// the filesystem reports no size at all (ramfs), so there is nothing to check.
fn free_bytes(dir: &Path) -> Result<Option<u64>> {
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes())
        .with_context(|| format!("bad path {}", dir.display()))?;
    // SAFETY: `c` is a valid NUL-terminated string and `st` a writable
    // statvfs that the call fills in; both outlive the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::statvfs(c.as_ptr(), &mut st) };
    if rc != 0 {
        return Err(io::Error::last_os_error())
            .with_context(|| format!("cannot get free space of {}", dir.display()));
    }
    if st.f_blocks == 0 {
        return Ok(None);
    }
    Ok(Some(
        (st.f_bavail as u64).saturating_mul(st.f_frsize as u64),
    ))
}

/// A fixed pseudo-random 8 KiB pattern, XORed per block with a block-derived
/// word so that every block differs (no dedup, no compression) at memory
/// speed.
fn pattern() -> &'static [u64] {
    static PATTERN: OnceLock<Vec<u64>> = OnceLock::new();
    PATTERN.get_or_init(|| {
        let mut s = 0x5047_494f_5349_4d31u64; // "PGIOSIM1"
        (0..PAGE_BYTES / 8).map(|_| splitmix64(&mut s)).collect()
    })
}

fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Fills `buf` (a whole number of 8 KiB blocks) with the content of blocks
/// `first_block..` of a file tagged `tag`: never all zeros, each block
/// stamped with its number and tag in its first 16 bytes.
pub(crate) fn fill_blocks(buf: &mut [u8], first_block: u64, tag: u64) {
    let pat = pattern();
    for (i, block) in buf.chunks_mut(PAGE_BYTES as usize).enumerate() {
        let n = first_block + i as u64;
        let mut s = n ^ tag.rotate_left(32);
        let m = splitmix64(&mut s) | 1;
        for (j, w) in block.chunks_exact_mut(8).enumerate() {
            let v = match j {
                0 => n,
                1 => tag | 1 << 63,
                _ => pat[j] ^ m,
            };
            w.copy_from_slice(&v.to_le_bytes());
        }
    }
}

fn tag_of(kind: FileKind) -> u64 {
    match kind {
        FileKind::Data => 0xda7a,
        FileKind::Wal(i) => 0x3a1_0000_0000 | u64::from(i),
    }
}

/// Writes `path` in full: an "being written" header, every block of the
/// body, fdatasync, then the complete header and fdatasync again. Stops with
/// [`Interrupted`] between two 1 MiB writes once `stop` is set.
fn write_file(
    path: &Path,
    header: &Header,
    bytes: u64,
    bar: &indicatif::ProgressBar,
    stop: &AtomicBool,
) -> Result<()> {
    let ctx = || format!("cannot write {}", path.display());
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .open(path)
        .with_context(ctx)?;
    f.set_len(0).with_context(ctx)?;
    let mut pending = header.clone();
    pending.complete = false;
    f.write_all_at(&pending.encode(), 0).with_context(ctx)?;
    bar.inc(HEADER_BYTES);

    let fd = f.as_raw_fd();
    let tag = tag_of(header.kind);
    let mut buf = vec![0u8; CHUNK_BYTES as usize];
    let mut off = HEADER_BYTES;
    let mut window_start = HEADER_BYTES;
    let mut prev_window: Option<(u64, u64)> = None;
    while off < bytes {
        if stop.load(Ordering::Relaxed) {
            return Err(Interrupted(format!(
                "interrupted while writing {} ({} of {})",
                path.display(),
                crate::units::pretty_bytes(off),
                crate::units::pretty_bytes(bytes)
            ))
            .into());
        }
        let len = (bytes - off).min(CHUNK_BYTES) as usize;
        let chunk = &mut buf[..len];
        fill_blocks(chunk, off / PAGE_BYTES - 1, tag);
        f.write_all_at(chunk, off).with_context(ctx)?;
        off += len as u64;
        bar.inc(len as u64);
        if off - window_start >= FLUSH_WINDOW_BYTES || off == bytes {
            // Start writeback of this window; wait for the previous one and
            // drop it from the page cache. Advisory: the fdatasync below is
            // what reports errors.
            // SAFETY: plain syscalls on an open descriptor, no memory passed.
            unsafe {
                libc::sync_file_range(
                    fd,
                    window_start as libc::off64_t,
                    (off - window_start) as libc::off64_t,
                    libc::SYNC_FILE_RANGE_WRITE,
                );
                if let Some((s, l)) = prev_window {
                    libc::sync_file_range(
                        fd,
                        s as libc::off64_t,
                        l as libc::off64_t,
                        libc::SYNC_FILE_RANGE_WAIT_BEFORE
                            | libc::SYNC_FILE_RANGE_WRITE
                            | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                    );
                    libc::posix_fadvise(
                        fd,
                        s as libc::off_t,
                        l as libc::off_t,
                        libc::POSIX_FADV_DONTNEED,
                    );
                }
            }
            prev_window = Some((window_start, off - window_start));
            window_start = off;
        }
    }
    f.sync_data().with_context(ctx)?;
    // SAFETY: plain syscall on an open descriptor, no memory passed.
    unsafe {
        libc::posix_fadvise(fd, 0, 0, libc::POSIX_FADV_DONTNEED);
    }
    let mut done = header.clone();
    done.complete = true;
    f.write_all_at(&done.encode(), 0).with_context(ctx)?;
    f.sync_data().with_context(ctx)?;
    Ok(())
}

/// Rewrites only the header of a complete, matching file so that it records
/// the current layout.
fn refresh_header(path: &Path, header: &Header) -> Result<()> {
    let ctx = || format!("cannot update the header of {}", path.display());
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(ctx)?;
    f.write_all_at(&header.encode(), 0).with_context(ctx)?;
    f.sync_data().with_context(ctx)
}

/// fsync a directory so that new entries in it are durable.
fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync directory {}", dir.display()))
}

/// What `prepare` will do with one file.
enum Action {
    Keep,
    RefreshHeader,
    Create,
}

/// Makes sure the data and WAL files for `layout` exist in `dd`, writing
/// every block of those that are missing or were written for another layout.
/// Takes the data set's lock for the while (see [`lock`]).
pub fn prepare(dd: &DataDir, layout: &Layout, progress: bool) -> Result<Prepared> {
    let held = lock(dd)?;
    prepare_locked(dd, layout, progress, &held, &AtomicBool::new(false))
}

/// [`prepare`] under a lock the caller holds (and keeps for the run).
///
/// Refuses (without changing anything) paths that are not regular files and
/// files that are not pgiosim's. Checks free space before writing. Shows a
/// progress bar on stderr when `progress` is true. Once `stop` is set it
/// stops within one 1 MiB write with an [`Interrupted`] error. A file it
/// was writing when it stopped or failed (disk full, I/O error) is removed,
/// so nothing half-written is left; if even that fails, the error says to run
/// `pgiosim cleanup` (the file is marked "being written" and no run uses it).
pub fn prepare_locked(
    dd: &DataDir,
    layout: &Layout,
    progress: bool,
    held: &DataSetLock,
    stop: &AtomicBool,
) -> Result<Prepared> {
    let result = prepare_inner(dd, layout, progress, held.created_dirs, stop);
    if result.is_err() {
        // Leave no empty directory behind from a prepare that wrote nothing.
        for dir in held.created.iter().rev() {
            let _ = fs::remove_file(dir.join(LOCK_FILE_NAME));
            let _ = fs::remove_dir(dir);
        }
    }
    result
}

fn prepare_inner(
    dd: &DataDir,
    layout: &Layout,
    progress: bool,
    mut created_dirs: u32,
    stop: &AtomicBool,
) -> Result<Prepared> {
    // Look at every path before touching any.
    let wanted = wanted_files(dd, layout);
    let mut plan = Vec::with_capacity(wanted.len());
    for w in &wanted {
        let found = inspect(&w.path)?;
        let action = match &found {
            Found::NotRegular(what) => bail!(
                "{} exists and is {what}, not a regular file; refusing to use it; \
                 remove it or choose another {}",
                w.path.display(),
                flag_hint(w.kind)
            ),
            Found::Foreign => bail!(
                "{} exists and is not a pgiosim file; refusing to overwrite it; \
                 remove it or choose another {}",
                w.path.display(),
                flag_hint(w.kind)
            ),
            Found::Missing | Found::Empty | Found::Ours(None, _) => Action::Create,
            Found::Ours(Some(h), size) => {
                created_dirs |= h.created_dirs;
                if !content_matches(h, *size, w, layout) {
                    Action::Create
                } else if header_records(h, layout) {
                    Action::Keep
                } else {
                    Action::RefreshHeader
                }
            }
        };
        plan.push((found, action));
    }

    let header = |kind, complete| Header::for_layout(kind, layout, created_dirs, complete);
    if plan.iter().all(|(_, a)| !matches!(a, Action::Create)) {
        for (w, (_, a)) in wanted.iter().zip(&plan) {
            if matches!(a, Action::RefreshHeader) {
                refresh_header(&w.path, &header(w.kind, true))?;
            }
        }
        return Ok(Prepared::Reused);
    }

    // Writability per directory, free space per filesystem.
    let mut checked: Vec<PathBuf> = Vec::new();
    let mut dirs: Vec<(PathBuf, u64, u64)> = Vec::new(); // dir, st_dev, bytes needed
    for (w, (found, a)) in wanted.iter().zip(&plan) {
        if !matches!(a, Action::Create) {
            continue;
        }
        let dir = w.path.parent().unwrap_or(Path::new(".")).to_path_buf();
        if !checked.contains(&dir) {
            check_writable(&dir)?;
            checked.push(dir.clone());
        }
        let dev = fs::metadata(&dir)
            .with_context(|| format!("cannot examine {}", dir.display()))?
            .dev();
        // A file being re-created is truncated first: its blocks come back.
        let freed = match found {
            Found::Ours(..) => fs::metadata(&w.path).map(|m| m.blocks() * 512).unwrap_or(0),
            _ => 0,
        };
        let need = w.bytes.saturating_sub(freed);
        match dirs.iter_mut().find(|(_, d, _)| *d == dev) {
            Some(entry) => entry.2 += need,
            None => dirs.push((dir, dev, need)),
        }
    }
    for (dir, _, need) in &dirs {
        let Some(free) = free_bytes(dir)? else {
            continue;
        };
        if *need > free {
            bail!(
                "not enough free space: needs {} in {}, only {} free",
                crate::units::pretty_bytes(*need),
                dir.display(),
                crate::units::pretty_bytes(free)
            );
        }
    }

    let total: u64 = wanted
        .iter()
        .zip(&plan)
        .filter(|(_, (_, a))| matches!(a, Action::Create))
        .map(|(w, _)| w.bytes)
        .sum();
    let bar = if progress {
        let bar = indicatif::ProgressBar::new(total);
        if let Ok(style) = indicatif::ProgressStyle::with_template(
            "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
        ) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_message("writing data files");
        bar
    } else {
        indicatif::ProgressBar::hidden()
    };
    for (w, (found, a)) in wanted.iter().zip(&plan) {
        match a {
            Action::Keep => {}
            Action::RefreshHeader => refresh_header(&w.path, &header(w.kind, true))?,
            Action::Create => {
                if let Err(e) = write_file(&w.path, &header(w.kind, true), w.bytes, &bar, stop) {
                    bar.finish_and_clear();
                    let was_empty = matches!(found, Found::Empty);
                    return Err(discard_partial(dd, &w.path, was_empty, e));
                }
            }
        }
    }
    bar.finish_and_clear();
    sync_dir(&dd.dir)?;
    if layout.wal_segments > 0 && dd.wal_dir != dd.dir {
        sync_dir(&dd.wal_dir)?;
    }
    Ok(Prepared::Created)
}

/// The files of one run, open read-write.
#[derive(Debug)]
pub struct OpenFiles {
    /// The data file.
    pub data: File,
    /// Its path, for error messages.
    pub data_path: PathBuf,
    /// WAL segment files, index = segment number.
    pub wal: Vec<File>,
    /// Their paths, for error messages.
    pub wal_paths: Vec<PathBuf>,
    /// Whether the files were opened with O_DIRECT.
    pub direct: bool,
    /// Each standby's WAL segment files (see `attach_standby`), and their paths.
    pub standby_wal: Vec<Vec<File>>,
    pub standby_wal_paths: Vec<Vec<PathBuf>>,
}

/// Which open file a request addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileRef {
    /// The data file.
    Data,
    /// WAL segment file `n`.
    Wal(u32),
    /// Standby `s`'s WAL segment file `n`.
    StandbyWal(u8, u32),
}

impl OpenFiles {
    /// The open file `r` refers to.
    pub fn file(&self, r: FileRef) -> &File {
        match r {
            FileRef::Data => &self.data,
            FileRef::Wal(i) => &self.wal[i as usize],
            FileRef::StandbyWal(s, i) => &self.standby_wal[s as usize][i as usize],
        }
    }

    /// Whether a data-page write must start its own writeback: through the
    /// page cache, when PostgreSQL's writer would call sync_file_range
    /// (its *_flush_after is not 0, so the write is not left to the
    /// kernel). Under cgroup v1 that writeback is charged to the writer's
    /// cgroup, the kernel flusher's is not.
    pub fn starts_writeback(&self, kind: IoKind) -> bool {
        !self.direct
            && matches!(
                kind,
                IoKind::WritePage {
                    kernel_writeback: false,
                    ..
                }
            )
    }

    /// `sync_file_range(SYNC_FILE_RANGE_WRITE)` over `len` bytes at
    /// `offset` of `r`: start writing them back, without waiting, as
    /// PostgreSQL's IssuePendingWritebacks does.
    pub fn start_writeback(&self, r: FileRef, offset: u64, len: u64) -> io::Result<()> {
        let fd = self.file(r).as_raw_fd();
        let (off, n) = (offset as libc::off64_t, len as libc::off64_t);
        // SAFETY: a plain syscall on an open descriptor; no memory is passed.
        let rc = unsafe { libc::sync_file_range(fd, off, n, libc::SYNC_FILE_RANGE_WRITE) };
        if rc == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// The path of the file `r` refers to.
    pub fn path(&self, r: FileRef) -> &Path {
        match r {
            FileRef::Data => &self.data_path,
            FileRef::Wal(i) => &self.wal_paths[i as usize],
            FileRef::StandbyWal(s, i) => &self.standby_wal_paths[s as usize][i as usize],
        }
    }

    /// Adds the next standby's WAL files (the WAL files of a set opened with
    /// [`open`] in the standby's own directory): its I/O addresses them as
    /// standby `self.standby_wal.len()`.
    pub fn attach_standby(&mut self, standby: OpenFiles) {
        self.standby_wal.push(standby.wal);
        self.standby_wal_paths.push(standby.wal_paths);
    }

    /// Number of data blocks the data file holds, from its size.
    pub fn data_blocks(&self) -> Result<u64> {
        let len = self
            .data
            .metadata()
            .with_context(|| format!("cannot examine {}", self.data_path.display()))?
            .len();
        Ok((len / PAGE_BYTES).saturating_sub(1))
    }

    /// Maps a request to the file it addresses, the byte offset and the byte
    /// length in that file (0 and 0 for syncs), checking that it stays inside
    /// the file. `data_blocks` is [`OpenFiles::data_blocks`], read once.
    pub fn locate(&self, kind: IoKind, data_blocks: u64) -> Result<(FileRef, u64, u64)> {
        let wal = |segment: u32| -> Result<FileRef> {
            if segment as usize >= self.wal.len() {
                bail!(
                    "WAL segment {segment} requested, but only {} WAL segment files are open",
                    self.wal.len()
                );
            }
            Ok(FileRef::Wal(segment))
        };
        match kind {
            IoKind::ReadPage { block } | IoKind::WritePage { block, .. } => {
                if block >= data_blocks {
                    bail!(
                        "data block {block} requested, but {} holds {data_blocks} blocks",
                        self.data_path.display()
                    );
                }
                Ok((FileRef::Data, data_offset(block), PAGE_BYTES))
            }
            IoKind::ReadRun { block, pages } => {
                let end = block.saturating_add(u64::from(pages));
                if pages == 0 || end > data_blocks {
                    bail!(
                        "a read of {pages} data blocks from block {block} requested, but {} holds {data_blocks} blocks",
                        self.data_path.display()
                    );
                }
                Ok((
                    FileRef::Data,
                    data_offset(block),
                    u64::from(pages) * PAGE_BYTES,
                ))
            }
            IoKind::WalWrite {
                segment,
                offset,
                len,
            }
            | IoKind::WalRead {
                segment,
                offset,
                len,
            } => {
                let r = wal(segment)?;
                if offset
                    .checked_add(len)
                    .is_none_or(|end| end > WAL_SEGMENT_BYTES)
                {
                    let what = if matches!(kind, IoKind::WalRead { .. }) {
                        "read"
                    } else {
                        "write"
                    };
                    bail!(
                        "WAL {what} of {len} bytes at {offset} goes past the end of segment {segment}"
                    );
                }
                Ok((r, wal_offset(offset), len))
            }
            IoKind::WalSync { segment } => Ok((wal(segment)?, 0, 0)),
            IoKind::DataSync => Ok((FileRef::Data, 0, 0)),
            IoKind::StandbyWalWrite {
                standby,
                segment,
                offset,
                len,
            } => {
                let r = self.standby_wal_ref(standby, segment)?;
                if offset
                    .checked_add(len)
                    .is_none_or(|end| end > WAL_SEGMENT_BYTES)
                {
                    bail!(
                        "standby WAL write of {len} bytes at {offset} goes past the end of segment {segment}"
                    );
                }
                Ok((r, wal_offset(offset), len))
            }
            IoKind::StandbyWalSync { standby, segment } => {
                Ok((self.standby_wal_ref(standby, segment)?, 0, 0))
            }
        }
    }
}

impl OpenFiles {
    fn standby_wal_ref(&self, standby: u8, segment: u32) -> Result<FileRef> {
        let Some(files) = self.standby_wal.get(standby as usize) else {
            bail!(
                "standby {standby} requested, but only {} standbys' files are open",
                self.standby_wal.len()
            );
        };
        if segment as usize >= files.len() {
            bail!(
                "standby {standby}'s WAL segment {segment} requested, but only {} are open",
                files.len()
            );
        }
        Ok(FileRef::StandbyWal(standby, segment))
    }
}

/// Checks that `path` is a complete pgiosim file serving `w` for `layout`.
fn check_prepared(w: &Wanted, layout: &Layout) -> Result<()> {
    let p = w.path.display();
    let hint = "prepare the files first (pgiosim prepare)";
    match inspect(&w.path)? {
        Found::Missing => bail!("{p} does not exist; {hint}"),
        Found::NotRegular(what) => bail!("{p} is {what}, not a regular file"),
        Found::Empty | Found::Foreign => bail!("{p} is not a pgiosim file"),
        Found::Ours(None, _) => bail!("{p} is of another pgiosim format version; {hint}"),
        Found::Ours(Some(h), size) => {
            if !h.complete {
                bail!("{p} was not completely written (interrupted prepare?); {hint}");
            }
            if !content_matches(&h, size, w, layout) {
                bail!(
                    "{p} was written for another layout ({} blocks, {:?}), this run needs {} \
                     blocks, {:?}; {hint}",
                    h.data_blocks,
                    h.description,
                    layout.data_blocks,
                    clip_description(&layout.description)
                );
            }
            Ok(())
        }
    }
}

/// Opens the data and WAL files for `layout` read-write, with O_DIRECT when
/// `direct`, after checking that their headers match the layout.
pub fn open(dd: &DataDir, layout: &Layout, direct: bool) -> Result<OpenFiles> {
    let wanted = wanted_files(dd, layout);
    for w in &wanted {
        check_prepared(w, layout)?;
    }
    let open_one = |path: &Path| -> Result<File> {
        let mut o = OpenOptions::new();
        o.read(true).write(true);
        if direct {
            o.custom_flags(libc::O_DIRECT);
        }
        match o.open(path) {
            Ok(f) => Ok(f),
            Err(e) if direct && e.raw_os_error() == Some(libc::EINVAL) => bail!(
                "{}: the filesystem does not support O_DIRECT (tmpfs?); use --buffered",
                path.display()
            ),
            Err(e) => Err(e).with_context(|| format!("cannot open {}", path.display())),
        }
    };
    let data_path = dd.data_path();
    let data = open_one(&data_path)?;
    let mut wal = Vec::new();
    let mut wal_paths = Vec::new();
    for w in &wanted[1..] {
        wal.push(open_one(&w.path)?);
        wal_paths.push(w.path.clone());
    }
    Ok(OpenFiles {
        data,
        data_path,
        wal,
        wal_paths,
        direct,
        standby_wal: Vec::new(),
        standby_wal_paths: Vec::new(),
    })
}

/// Asks the kernel to drop the page cache of `layout`'s files in `dd`
/// (`posix_fadvise(DONTNEED)`), so that a run through the page cache
/// starts with nothing of them cached. Clean pages only: dirty ones stay
/// until written back, and a file that cannot be opened is left alone.
pub fn drop_from_page_cache(dd: &DataDir, layout: &Layout) {
    use std::os::fd::AsRawFd;
    for w in wanted_files(dd, layout) {
        if let Ok(f) = File::open(&w.path) {
            // SAFETY: a valid descriptor, open for as long as the call.
            unsafe {
                libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED);
            }
        }
    }
}

/// Removes pgiosim's files from `dd` (only files whose header is pgiosim's:
/// the data file and every `pgiosim.wal.*` in the WAL directory), then the
/// WAL directory and the directory if pgiosim created them and they are now
/// empty. Returns what it removed. Never removes anything else.
pub fn cleanup(dd: &DataDir) -> Result<Vec<PathBuf>> {
    // Not while a run uses the files; the lock files go last.
    let mut locks = Vec::new();
    for (dir, flag) in [(&dd.dir, "--dir"), (&dd.wal_dir, "--wal-dir")] {
        if dir.is_dir() && (locks.is_empty() || *dir != dd.dir) {
            locks.push((dir.join(LOCK_FILE_NAME), lock_in(dir, flag)?));
        }
    }
    let mut candidates = vec![dd.data_path()];
    match fs::read_dir(&dd.wal_dir) {
        Ok(entries) => {
            let mut wal: Vec<PathBuf> = Vec::new();
            for e in entries {
                let e = e.with_context(|| format!("cannot list {}", dd.wal_dir.display()))?;
                if e.file_name()
                    .as_bytes()
                    .starts_with(WAL_FILE_PREFIX.as_bytes())
                {
                    wal.push(e.path());
                }
            }
            wal.sort();
            candidates.extend(wal);
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => {}
        Err(e) => return Err(e).with_context(|| format!("cannot list {}", dd.wal_dir.display())),
    }

    let mut removed = Vec::new();
    let mut created_dirs = 0;
    for path in candidates {
        // Only regular files themselves, not symlinks to them.
        match fs::symlink_metadata(&path) {
            Ok(m) if m.file_type().is_file() => {}
            Ok(_) => continue,
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e).with_context(|| format!("cannot examine {}", path.display())),
        }
        if let Found::Ours(h, _) = inspect(&path)? {
            if let Some(h) = h {
                created_dirs |= h.created_dirs;
            }
            fs::remove_file(&path).with_context(|| format!("cannot remove {}", path.display()))?;
            removed.push(path);
        }
    }
    for (path, _held) in &locks {
        if is_our_lock_file(path) {
            fs::remove_file(path).with_context(|| format!("cannot remove {}", path.display()))?;
        }
    }
    drop(locks);
    // remove_dir fails on a directory that is not empty: that is the check.
    if created_dirs & CREATED_WAL_DIR != 0 && fs::remove_dir(&dd.wal_dir).is_ok() {
        removed.push(dd.wal_dir.clone());
    }
    if created_dirs & CREATED_DIR != 0 && fs::remove_dir(&dd.dir).is_ok() {
        removed.push(dd.dir.clone());
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(blocks: u64, wal: u32, desc: &str) -> Layout {
        Layout {
            data_blocks: blocks,
            wal_segments: wal,
            description: desc.to_string(),
        }
    }

    fn header_of(path: &Path) -> Header {
        match inspect(path).unwrap() {
            Found::Ours(Some(h), _) => h,
            other => panic!("{}: {other:?}", path.display()),
        }
    }

    fn mtime(path: &Path) -> std::time::SystemTime {
        fs::metadata(path).unwrap().modified().unwrap()
    }

    #[test]
    fn create_reuse_mismatch_recreate() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::new(&tmp.path().join("d"), None);
        let l = layout(100, 2, "test A");
        assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
        assert_eq!(fs::metadata(dd.data_path()).unwrap().len(), 101 * 8192);
        for i in 0..2 {
            assert_eq!(
                fs::metadata(dd.wal_path(i)).unwrap().len(),
                8192 + 16 * 1024 * 1024
            );
            assert_eq!(header_of(&dd.wal_path(i)).kind, FileKind::Wal(i));
        }
        let h = header_of(&dd.data_path());
        assert!(h.complete);
        assert_eq!(h.kind, FileKind::Data);
        assert_eq!(h.data_blocks, 100);
        assert_eq!(h.description, "test A");

        // Every block is really written, non-zero, and stamped.
        let data = fs::read(dd.data_path()).unwrap();
        for b in 0..100u64 {
            let blk = &data[data_offset(b) as usize..data_offset(b) as usize + 8192];
            assert_eq!(u64::from_le_bytes(blk[..8].try_into().unwrap()), b);
            assert!(blk[16..].iter().any(|&x| x != 0));
        }
        assert_ne!(&data[8192..16384], &data[16384..24576]);

        // Same layout: reused, not rewritten.
        let before = mtime(&dd.data_path());
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Reused);
        assert_eq!(mtime(&dd.data_path()), before);

        // Other size: re-created.
        let l2 = layout(50, 2, "test A");
        assert_eq!(prepare(&dd, &l2, false).unwrap(), Prepared::Created);
        assert_eq!(fs::metadata(dd.data_path()).unwrap().len(), 51 * 8192);
        assert_eq!(header_of(&dd.data_path()).data_blocks, 50);

        // Other description: re-created.
        let l3 = layout(50, 2, "test B");
        assert_eq!(prepare(&dd, &l3, false).unwrap(), Prepared::Created);
        assert_eq!(header_of(&dd.data_path()).description, "test B");

        // More WAL segments: the new one is written, the old headers updated.
        let l4 = layout(50, 3, "test B");
        assert_eq!(prepare(&dd, &l4, false).unwrap(), Prepared::Created);
        for i in 0..3 {
            assert_eq!(header_of(&dd.wal_path(i)).wal_segments, 3);
        }
        assert_eq!(prepare(&dd, &l4, false).unwrap(), Prepared::Reused);

        let files = open(&dd, &l4, false).unwrap();
        assert_eq!(files.wal.len(), 3);
        assert_eq!(files.data_blocks().unwrap(), 50);
        assert!(open(&dd, &l, false).is_err());
    }

    #[test]
    fn refuses_foreign_file_and_keeps_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::new(tmp.path(), None);
        let content = b"precious user data, not pgiosim's".repeat(100);
        fs::write(dd.data_path(), &content).unwrap();
        let err = prepare(&dd, &layout(10, 1, "x"), false).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("is not a pgiosim file"), "{msg}");
        assert!(msg.contains("refusing to overwrite"), "{msg}");
        assert_eq!(fs::read(dd.data_path()).unwrap(), content);
        // Nothing else was written either.
        assert!(!dd.wal_path(0).exists());

        // Same for a foreign WAL segment file.
        fs::remove_file(dd.data_path()).unwrap();
        fs::create_dir_all(&dd.wal_dir).unwrap();
        fs::write(dd.wal_path(0), &content).unwrap();
        let err = prepare(&dd, &layout(10, 1, "x"), false).unwrap_err();
        assert!(format!("{err:#}").contains("not a pgiosim file"));
        assert_eq!(fs::read(dd.wal_path(0)).unwrap(), content);
        assert!(!dd.data_path().exists());
    }

    #[test]
    fn refuses_non_regular_path() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::new(tmp.path(), None);
        fs::create_dir(dd.data_path()).unwrap();
        let err = prepare(&dd, &layout(10, 1, "x"), false).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("is a directory, not a regular file"), "{msg}");
        assert!(dd.data_path().is_dir());

        fs::remove_dir(dd.data_path()).unwrap();
        let fifo = std::ffi::CString::new(dd.data_path().as_os_str().as_bytes()).unwrap();
        // SAFETY: valid NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(fifo.as_ptr(), 0o600) }, 0);
        let err = prepare(&dd, &layout(10, 1, "x"), false).unwrap_err();
        assert!(format!("{err:#}").contains("FIFO"));
        assert!(open(&dd, &layout(10, 1, "x"), false).is_err());
    }

    #[test]
    fn missing_parent_is_an_error_not_mkdir_p() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("a").join("b");
        let dd = DataDir::new(&dir, None);
        let err = prepare(&dd, &layout(1, 1, "x"), false).unwrap_err();
        assert!(format!("{err:#}").contains("does not exist"));
        assert!(!tmp.path().join("a").exists());

        // A missing wal_dir parent: error, and the data dir that was just
        // created is removed again.
        let dd = DataDir::new(&tmp.path().join("d"), Some(&tmp.path().join("x/y")));
        assert!(prepare(&dd, &layout(1, 1, "x"), false).is_err());
        assert!(!tmp.path().join("d").exists());
    }

    #[test]
    fn cleanup_leaves_foreign_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("run");
        let dd = DataDir::new(&root, None);
        prepare(&dd, &layout(10, 2, "x"), false).unwrap();
        fs::write(root.join("notes.txt"), b"mine").unwrap();
        fs::write(dd.wal_dir.join("pgiosim.wal.999"), b"not pgiosim's").unwrap();

        let removed = cleanup(&dd).unwrap();
        assert!(removed.contains(&dd.data_path()));
        assert!(removed.contains(&dd.wal_path(0)));
        assert!(removed.contains(&dd.wal_path(1)));
        assert!(!dd.data_path().exists());
        assert_eq!(fs::read(root.join("notes.txt")).unwrap(), b"mine");
        assert_eq!(
            fs::read(dd.wal_dir.join("pgiosim.wal.999")).unwrap(),
            b"not pgiosim's"
        );
        assert!(root.exists() && dd.wal_dir.exists());

        // Without the foreign files the directories pgiosim made go too.
        fs::remove_file(root.join("notes.txt")).unwrap();
        fs::remove_file(dd.wal_dir.join("pgiosim.wal.999")).unwrap();
        fs::remove_dir(&dd.wal_dir).unwrap();
        fs::remove_dir(&root).unwrap();
        prepare(&dd, &layout(10, 1, "x"), false).unwrap();
        let removed = cleanup(&dd).unwrap();
        assert!(removed.contains(&dd.wal_dir));
        assert!(removed.contains(&root));
        assert!(!root.exists());

        // A directory pgiosim did not create stays, even if empty.
        let dd = DataDir::new(tmp.path(), None);
        prepare(&dd, &layout(10, 1, "x"), false).unwrap();
        let removed = cleanup(&dd).unwrap();
        assert!(!removed.contains(&tmp.path().to_path_buf()));
        assert!(tmp.path().exists());
        assert!(!dd.wal_dir.exists());
    }

    #[test]
    fn header_is_written_last() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::new(tmp.path(), None);
        let l = layout(300, 1, "x");

        // A prepare killed mid-file (SIGKILL, power loss) leaves a file that
        // is pgiosim's but not valid: open refuses it, prepare re-creates it.
        let pending = Header::for_layout(FileKind::Data, &l, 0, false);
        let mut partial = pending.encode();
        partial.resize(100 * 8192, 7);
        fs::write(dd.data_path(), &partial).unwrap();
        let h = header_of(&dd.data_path());
        assert!(!h.complete);
        let msg = format!("{:#}", open(&dd, &l, false).unwrap_err());
        assert!(msg.contains("not completely written"), "{msg}");
        assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
        assert!(header_of(&dd.data_path()).complete);
        assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Reused);

        // A truncated file (header intact, body cut) is re-created.
        let f = OpenOptions::new().write(true).open(dd.data_path()).unwrap();
        f.set_len(100 * 8192).unwrap();
        drop(f);
        assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
        assert_eq!(fs::metadata(dd.data_path()).unwrap().len(), 301 * 8192);

        // A damaged header (magic intact, rest zeroed) is re-created.
        let f = OpenOptions::new().write(true).open(dd.data_path()).unwrap();
        f.write_all_at(&[0u8; 8184], 8).unwrap();
        drop(f);
        assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
        assert!(header_of(&dd.data_path()).complete);

        // A file cut to nothing (interrupted before its first write) too.
        fs::write(dd.wal_path(0), b"").unwrap();
        assert_eq!(prepare(&dd, &l, false).unwrap(), Prepared::Created);
        assert!(header_of(&dd.wal_path(0)).complete);
    }

    #[test]
    fn a_stopped_prepare_removes_its_partial_file() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::new(tmp.path(), None);
        let l = layout(300, 1, "x");
        let held = lock(&dd).unwrap();
        let err = prepare_locked(&dd, &l, false, &held, &AtomicBool::new(true)).unwrap_err();
        assert!(
            crate::error::exit_code(&err) == crate::error::exit::INTERRUPTED,
            "{err:#}"
        );
        assert!(
            format!("{err:#}").contains("removed the partial"),
            "{err:#}"
        );
        assert!(!dd.data_path().exists());
        // A second lock on the same data set is refused while the first is held.
        let msg = format!("{:#}", lock(&dd).unwrap_err());
        assert!(msg.contains("another pgiosim is using"), "{msg}");
        drop(held);
        prepare(&dd, &l, false).unwrap();
        cleanup(&dd).unwrap();
        assert!(!tmp.path().join(LOCK_FILE_NAME).exists());
    }

    #[test]
    fn free_space_check_names_both_figures() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::new(tmp.path(), None);
        // 2^50 blocks of 8 KiB = 8 EiB: no filesystem here has that.
        let err = prepare(&dd, &layout(1 << 50, 1, "x"), false).unwrap_err();
        let msg = format!("{err:#}");
        assert!(msg.contains("needs ") && msg.contains(" free"), "{msg}");
        assert!(!dd.data_path().exists());
    }

    #[test]
    fn buffered_writes_of_writers_with_flush_after_start_their_writeback() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::new(tmp.path(), None);
        let l = layout(10, 1, "x");
        prepare(&dd, &l, false).unwrap();
        let files = open(&dd, &l, false).unwrap();
        let own = IoKind::WritePage {
            block: 3,
            kernel_writeback: false,
        };
        let left = IoKind::WritePage {
            block: 3,
            kernel_writeback: true,
        };
        assert!(files.starts_writeback(own));
        assert!(!files.starts_writeback(left));
        assert!(!files.starts_writeback(IoKind::ReadPage { block: 3 }));
        let (f, off, len) = files.locate(own, files.data_blocks().unwrap()).unwrap();
        files.file(f).write_all_at(&[1u8; 8192], off).unwrap();
        files.start_writeback(f, off, len).unwrap();
        // With O_DIRECT the write itself goes to the disk: nothing to start.
        let direct = OpenFiles {
            direct: true,
            ..files
        };
        assert!(!direct.starts_writeback(own));
    }

    #[test]
    fn locate_maps_and_bounds_requests() {
        let tmp = tempfile::tempdir().unwrap();
        let dd = DataDir::new(tmp.path(), None);
        let l = layout(10, 1, "x");
        prepare(&dd, &l, false).unwrap();
        let files = open(&dd, &l, false).unwrap();
        let n = files.data_blocks().unwrap();
        assert_eq!(
            files.locate(IoKind::ReadPage { block: 9 }, n).unwrap(),
            (FileRef::Data, 10 * 8192, 8192)
        );
        assert!(files.locate(IoKind::ReadPage { block: 10 }, n).is_err());
        assert_eq!(
            files
                .locate(
                    IoKind::WalWrite {
                        segment: 0,
                        offset: 8192,
                        len: 16384
                    },
                    n
                )
                .unwrap(),
            (FileRef::Wal(0), 16384, 16384)
        );
        let past_end = IoKind::WalWrite {
            segment: 0,
            offset: WAL_SEGMENT_BYTES - 8192,
            len: 16384,
        };
        assert!(files.locate(past_end, n).is_err());
        assert!(files.locate(IoKind::WalSync { segment: 1 }, n).is_err());
    }
}
