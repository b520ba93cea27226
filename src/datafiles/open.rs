//! The prepared files opened for a run, and dropped from the page cache.

use super::*;

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

    /// The data-file ranges whose writeback starts once the write of
    /// `kind` is done ([`PendingWritebacks::after_write`]); none when the
    /// write does not start its own ([`OpenFiles::starts_writeback`]).
    pub fn writeback_ranges(
        &self,
        pending: &mut super::PendingWritebacks,
        kind: IoKind,
    ) -> Vec<(u64, u64)> {
        if self.starts_writeback(kind) {
            pending.after_write(kind)
        } else {
            Vec::new()
        }
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
        match kind {
            IoKind::ReadPage { block }
            | IoKind::WritePage { block, .. }
            | IoKind::CacheWrite { block } => self.data_page(block, data_blocks),
            IoKind::ReadRun { block, pages } | IoKind::Writeback { block, pages, .. } => {
                self.data_run(block, pages, data_blocks)
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
                let r = self.wal_ref(segment)?;
                if past_segment_end(offset, len) {
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
            IoKind::WalSync { segment } => Ok((self.wal_ref(segment)?, 0, 0)),
            IoKind::DataSync => Ok((FileRef::Data, 0, 0)),
            IoKind::StandbyWalWrite {
                standby,
                segment,
                offset,
                len,
            } => {
                let r = self.standby_wal_ref(standby, segment)?;
                if past_segment_end(offset, len) {
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

/// Whether `len` bytes at `offset` go past the end of a WAL segment.
fn past_segment_end(offset: u64, len: u64) -> bool {
    offset
        .checked_add(len)
        .is_none_or(|end| end > WAL_SEGMENT_BYTES)
}

impl OpenFiles {
    /// Data block `block`, inside the `data_blocks` the file holds.
    fn data_page(&self, block: u64, data_blocks: u64) -> Result<(FileRef, u64, u64)> {
        if block >= data_blocks {
            bail!(
                "data block {block} requested, but {} holds {data_blocks} blocks",
                self.data_path.display()
            );
        }
        Ok((FileRef::Data, data_offset(block), PAGE_BYTES))
    }

    /// `pages` data blocks from `block`, inside the `data_blocks` the file
    /// holds.
    fn data_run(&self, block: u64, pages: u32, data_blocks: u64) -> Result<(FileRef, u64, u64)> {
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

    /// The WAL segment file `segment`, if it is open.
    fn wal_ref(&self, segment: u32) -> Result<FileRef> {
        if segment as usize >= self.wal.len() {
            bail!(
                "WAL segment {segment} requested, but only {} WAL segment files are open",
                self.wal.len()
            );
        }
        Ok(FileRef::Wal(segment))
    }

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
pub(super) fn check_prepared(w: &Wanted, layout: &Layout) -> Result<()> {
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
