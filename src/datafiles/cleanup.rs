//! Removing pgiosim's files, and nothing else.

use super::*;

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
