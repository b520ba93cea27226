//! The data set's lock: one pgiosim at a time on a data set's directories.

use super::*;

/// The data set's lock, held from before `prepare` to the end of the run, so
/// that a second pgiosim on the same files is refused instead of
/// interleaving its writes with the first's. Released on drop.
#[derive(Debug)]
pub struct DataSetLock {
    /// The lock files, open and flocked.
    _files: Vec<File>,
    /// `created_dirs` bits of the directories this lock had to create.
    pub(super) created_dirs: u32,
    /// Those directories, in the order they were created.
    pub(super) created: Vec<PathBuf>,
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
pub(super) fn lock_in(dir: &Path, flag: &str) -> Result<File> {
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
pub(super) fn is_our_lock_file(path: &Path) -> bool {
    let Ok(f) = File::open(path) else {
        return false;
    };
    let mut buf = vec![0u8; LOCK_FILE_TEXT.len() + 1];
    matches!(read_prefix(&f, &mut buf), Ok(n) if &buf[..n] == LOCK_FILE_TEXT)
}
