//! Preparing the files: written block by block, checked before reuse,
//! removed if a write fails.

use super::*;

/// After `prepare` stopped or failed while writing `path`: remove the
/// partial file (or, if it was an empty file found there, empty it again) and
/// say so in the error; if that fails too, the error says how to clean up.
pub(super) fn discard_partial(
    dd: &DataDir,
    path: &Path,
    was_empty: bool,
    e: anyhow::Error,
) -> anyhow::Error {
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
pub(super) fn check_writable(dir: &Path) -> Result<()> {
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
pub(super) fn free_bytes(dir: &Path) -> Result<Option<u64>> {
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
pub(super) fn pattern() -> &'static [u64] {
    static PATTERN: OnceLock<Vec<u64>> = OnceLock::new();
    PATTERN.get_or_init(|| {
        let mut s = 0x5047_494f_5349_4d31u64; // "PGIOSIM1"
        (0..PAGE_BYTES / 8).map(|_| splitmix64(&mut s)).collect()
    })
}

pub(super) fn splitmix64(state: &mut u64) -> u64 {
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

pub(super) fn tag_of(kind: FileKind) -> u64 {
    match kind {
        FileKind::Data => 0xda7a,
        FileKind::Wal(i) => 0x3a1_0000_0000 | u64::from(i),
    }
}

/// Writes `path` in full: an "being written" header, every block of the
/// body, fdatasync, then the complete header and fdatasync again. Stops with
/// [`Interrupted`] between two 1 MiB writes once `stop` is set.
pub(super) fn write_file(
    path: &Path,
    header: &Header,
    bytes: u64,
    bar: &indicatif::ProgressBar,
    stop: &Stop,
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
        if stop.is_set() {
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
            let window = (window_start, off - window_start);
            write_back(fd, window, prev_window);
            prev_window = Some(window);
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

/// Starts writeback of the `window` (offset, length) just written; waits
/// for the previous one and drops it from the page cache. Advisory: the
/// fdatasync after the last window is what reports errors.
fn write_back(fd: std::os::fd::RawFd, window: (u64, u64), prev_window: Option<(u64, u64)>) {
    // SAFETY: plain syscalls on an open descriptor, no memory passed.
    unsafe {
        libc::sync_file_range(
            fd,
            window.0 as libc::off64_t,
            window.1 as libc::off64_t,
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
}

/// Rewrites only the header of a complete, matching file so that it records
/// the current layout.
pub(super) fn refresh_header(path: &Path, header: &Header) -> Result<()> {
    let ctx = || format!("cannot update the header of {}", path.display());
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .with_context(ctx)?;
    f.write_all_at(&header.encode(), 0).with_context(ctx)?;
    f.sync_data().with_context(ctx)
}

/// fsync a directory so that new entries in it are durable.
pub(super) fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)
        .and_then(|d| d.sync_all())
        .with_context(|| format!("cannot sync directory {}", dir.display()))
}

/// What `prepare` will do with one file.
pub(super) enum Action {
    Keep,
    RefreshHeader,
    Create,
}

/// Makes sure the data and WAL files for `layout` exist in `dd`, writing
/// every block of those that are missing or were written for another layout.
/// Takes the data set's lock for the while (see [`lock`]).
pub fn prepare(dd: &DataDir, layout: &Layout, progress: bool) -> Result<Prepared> {
    let held = lock(dd)?;
    prepare_locked(dd, layout, progress, &held, &Stop::new())
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
    stop: &Stop,
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

/// What `prepare` does with each of the `wanted` files for `layout`, after
/// looking at every path before touching any; refuses a path that is not a
/// regular file or not pgiosim's. Adds to `created_dirs` the directories a
/// kept file's header says pgiosim created.
fn plan_files(
    wanted: &[Wanted],
    layout: &Layout,
    created_dirs: &mut u32,
) -> Result<Vec<(Found, Action)>> {
    let mut plan = Vec::with_capacity(wanted.len());
    for w in wanted {
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
                *created_dirs |= h.created_dirs;
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
    Ok(plan)
}

/// Checks that every directory a file is created in is writable and that
/// each filesystem has the room the files created on it need.
fn check_room(wanted: &[Wanted], plan: &[(Found, Action)]) -> Result<()> {
    let mut checked: Vec<PathBuf> = Vec::new();
    let mut dirs: Vec<(PathBuf, u64, u64)> = Vec::new(); // dir, st_dev, bytes needed
    for (w, (found, a)) in wanted.iter().zip(plan) {
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
    Ok(())
}

/// The progress bar of writing `total` bytes, hidden without `progress`.
fn progress_bar(progress: bool, total: u64) -> indicatif::ProgressBar {
    if !progress {
        return indicatif::ProgressBar::hidden();
    }
    let bar = indicatif::ProgressBar::new(total);
    if let Ok(style) = indicatif::ProgressStyle::with_template(
        "{msg} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} ETA {eta}",
    ) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message("writing data files");
    bar
}

pub(super) fn prepare_inner(
    dd: &DataDir,
    layout: &Layout,
    progress: bool,
    mut created_dirs: u32,
    stop: &Stop,
) -> Result<Prepared> {
    let wanted = wanted_files(dd, layout);
    let plan = plan_files(&wanted, layout, &mut created_dirs)?;
    let header = |kind, complete| Header::for_layout(kind, layout, created_dirs, complete);
    if plan.iter().all(|(_, a)| !matches!(a, Action::Create)) {
        for (w, (_, a)) in wanted.iter().zip(&plan) {
            if matches!(a, Action::RefreshHeader) {
                refresh_header(&w.path, &header(w.kind, true))?;
            }
        }
        return Ok(Prepared::Reused);
    }
    check_room(&wanted, &plan)?;
    let total: u64 = wanted
        .iter()
        .zip(&plan)
        .filter(|(_, (_, a))| matches!(a, Action::Create))
        .map(|(w, _)| w.bytes)
        .sum();
    let bar = progress_bar(progress, total);
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
