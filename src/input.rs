//! Reading the files a user names (postgresql.conf, workload, device
//! profile, fio output, results): regular files only, and never more than a
//! bound, so `--config /dev/zero` or a FIFO is an error and not a hang or an
//! out-of-memory kill.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use anyhow::Result;

use crate::error::UsageError;

/// The largest postgresql.conf, workload file or device profile read
/// (PostgreSQL's own sample postgresql.conf is about 30 kB).
pub const SMALL_FILE_MAX_BYTES: u64 = 16 << 20;
/// The largest result, sweep or fio JSON read (a result with a per-second
/// series of a day's run is a few MB).
pub const LARGE_FILE_MAX_BYTES: u64 = 256 << 20;

/// The bytes of `path`, which must be a regular file of at most `max_bytes`.
/// `what` names it in errors ("--config", "device profile"). Every error is
/// a [`UsageError`]: the file is part of what the user asked for.
pub fn read_bytes(path: &Path, what: &str, max_bytes: u64) -> Result<Vec<u8>> {
    let p = path.display();
    let bad = |msg: String| -> anyhow::Error { UsageError(format!("{what} {p}: {msg}")).into() };
    // O_NONBLOCK: opening a FIFO for reading would otherwise wait for a
    // writer; it changes nothing for a regular file.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| bad(format!("cannot open: {e}")))?;
    // The open file's type, not the path's: nothing can swap it in between.
    let meta = file
        .metadata()
        .map_err(|e| bad(format!("cannot examine: {e}")))?;
    if !meta.is_file() {
        let kind = if meta.is_dir() {
            "a directory"
        } else {
            "not a regular file (a device, FIFO or socket)"
        };
        return Err(bad(format!("is {kind}; give a regular file")));
    }
    if meta.len() > max_bytes {
        return Err(bad(too_big(meta.len(), max_bytes)));
    }
    // The size can change under us (or lie, in /proc): read one byte more
    // than the bound to tell.
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(format!("cannot read: {e}")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(bad(too_big(bytes.len() as u64, max_bytes)));
    }
    Ok(bytes)
}

/// [`read_bytes`] as UTF-8 text.
pub fn read_text(path: &Path, what: &str, max_bytes: u64) -> Result<String> {
    let bytes = read_bytes(path, what, max_bytes)?;
    String::from_utf8(bytes).map_err(|e| {
        UsageError(format!(
            "{what} {}: not UTF-8 text (invalid byte at offset {})",
            path.display(),
            e.utf8_error().valid_up_to()
        ))
        .into()
    })
}

/// Standard input ("-") as UTF-8 text of at most `max_bytes`, with the
/// rules of [`read_text`]: binary input or too much of it is bad input
/// (exit 2), not a failure of the disk.
pub fn read_stdin_text(what: &str, max_bytes: u64) -> Result<String> {
    let bad = |msg: String| -> anyhow::Error {
        UsageError(format!("{what} (standard input): {msg}")).into()
    };
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(max_bytes + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| anyhow::Error::from(e).context(format!("{what}: reading standard input")))?;
    if bytes.len() as u64 > max_bytes {
        return Err(bad(too_big(bytes.len() as u64, max_bytes)));
    }
    String::from_utf8(bytes).map_err(|e| {
        bad(format!(
            "not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })
}

fn too_big(got: u64, max: u64) -> String {
    format!(
        "larger than the {} MiB pgiosim reads ({}{} bytes); is it the right file?",
        max >> 20,
        if got > max { "at least " } else { "" },
        got
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_devices_directories_and_big_files() {
        let e = read_bytes(Path::new("/dev/zero"), "--config", 1024).unwrap_err();
        assert!(format!("{e}").contains("not a regular file"), "{e}");
        assert!(e.downcast_ref::<UsageError>().is_some());
        let e = read_bytes(Path::new("/"), "--config", 1024).unwrap_err();
        assert!(format!("{e}").contains("a directory"), "{e}");
        let f = tempfile::NamedTempFile::new().unwrap();
        std::fs::write(f.path(), vec![b'x'; 2048]).unwrap();
        let e = read_bytes(f.path(), "--workload", 1024).unwrap_err();
        assert!(format!("{e}").contains("larger than"), "{e}");
        assert_eq!(
            read_bytes(f.path(), "--workload", 2048).unwrap().len(),
            2048
        );
    }
}
