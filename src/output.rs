//! What pgiosim writes for people and for machines: the text report on
//! standard output (or standard error when the JSON has standard output to
//! itself), the JSON, and tables as CSV or Markdown for spreadsheets and
//! issue trackers.
//!
//! Every write to standard output goes through [`stdout`]: a reader that
//! closes the pipe early (`pgiosim devices | head`) ends the program quietly
//! ([`is_broken_pipe`]), not with a panic.

use std::io::{self, IsTerminal, Write};
use std::path::Path;

use anyhow::{Context, Result};

/// "-": the file named standard output.
pub fn is_stdout(path: &Path) -> bool {
    path == Path::new("-")
}

/// Write `text` to standard output.
pub fn stdout(text: &str) -> Result<()> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// Write the text report: to standard output, unless a document (`--json -`
/// and the like) takes standard output, when the report goes to standard
/// error so that standard output is the document alone.
pub fn report(text: &str, stdout_taken: bool) -> Result<()> {
    if stdout_taken {
        eprint!("{text}");
        Ok(())
    } else {
        stdout(text)
    }
}

/// True if `e` is a write to a pipe whose reader has gone.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|io| io.kind() == io::ErrorKind::BrokenPipe)
    })
}

/// Write `text` to `path` ("-": standard output); `flag` names the option
/// in the error. The file is opened by [`open_regular`]: a FIFO or a device
/// named as an output is refused, never waited on.
pub fn write_file(flag: &str, path: &Path, text: &str) -> Result<()> {
    if is_stdout(path) {
        return stdout(text);
    }
    let mut f = open_regular(flag, path, true)?;
    f.write_all(text.as_bytes())
        .and_then(|()| f.flush())
        .with_context(|| format!("{flag} {}: cannot write", path.display()))
}

/// Opens the output `path` for writing (creating it, and truncating it if
/// `truncate`), refusing anything that is not a regular file with a usage
/// error naming `flag`. A FIFO with no reader would block `open(2)` without
/// limit, and a blocked `open` sees no signal: so the path is checked
/// before it is opened, and opened with `O_NONBLOCK` as well (a FIFO put
/// there meanwhile then fails or is seen by `fstat`), which is cleared
/// again once the file is known to be a regular one.
pub fn open_regular(flag: &str, path: &Path, truncate: bool) -> Result<std::fs::File> {
    use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
    use std::os::unix::io::AsRawFd;
    let p = path.display();
    let not_regular = |t: std::fs::FileType| {
        let what = if t.is_dir() {
            "is a directory"
        } else if t.is_fifo() {
            "is a FIFO, not a regular file"
        } else if t.is_socket() {
            "is a socket, not a regular file"
        } else {
            "is a device, not a regular file"
        };
        bad(format!(
            "{flag} {p}: {what} (outputs are regular files, or \"-\" for standard output)"
        ))
    };
    if let Ok(m) = std::fs::metadata(path)
        && !m.is_file()
    {
        return Err(not_regular(m.file_type()));
    }
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(truncate)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|e| match e.raw_os_error() {
            // ENXIO: a FIFO without a reader, opened without blocking.
            Some(libc::ENXIO) => bad(format!("{flag} {p}: is a FIFO, not a regular file")),
            _ => bad(format!("{flag} {p}: cannot write: {e}")),
        })?;
    let m = f
        .metadata()
        .with_context(|| format!("{flag} {p}: cannot stat"))?;
    if !m.is_file() {
        return Err(not_regular(m.file_type()));
    }
    // SAFETY: fcntl on a descriptor this function owns; clearing O_NONBLOCK
    // so that writes to the regular file behave as usual.
    unsafe {
        let fd = f.as_raw_fd();
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags & !libc::O_NONBLOCK);
        }
    }
    Ok(f)
}

/// Write a JSON document to `path` ("-": standard output), for every `--json`.
pub fn write_json(path: &Path, doc: &impl serde::Serialize) -> Result<()> {
    let text = serde_json::to_string_pretty(doc)? + "\n";
    write_file("--json", path, &text)
}

/// A progress bar is drawn only for a person watching: not when quiet, and
/// not when standard error goes to a file or a pipe.
pub fn progress_bar_wanted(quiet: bool) -> bool {
    !quiet && io::stderr().is_terminal()
}

/// Checks that `path` can be written, before any work is done, so that a
/// long run does not fail at its end: its directory exists, it is not a
/// directory, and it can be opened for writing (an existing file is opened
/// without being changed; a new one is created and removed again). "-" is
/// standard output.
pub fn check_writable(flag: &str, path: &Path) -> Result<()> {
    if is_stdout(path) {
        return Ok(());
    }
    let p = path.display();
    let parent = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    if !parent.is_dir() {
        return Err(bad(format!(
            "{flag} {p}: directory {} does not exist",
            parent.display()
        )));
    }
    match std::fs::metadata(path) {
        // Opened without being truncated: an existing file is not changed.
        Ok(_) => open_regular(flag, path, false).map(drop),
        Err(_) => match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(path)
        {
            Ok(f) => {
                drop(f);
                let _ = std::fs::remove_file(path);
                Ok(())
            }
            Err(e) => Err(bad(format!("{flag} {p}: cannot write: {e}"))),
        },
    }
}

/// Checks a command's outputs together, before any work: each can be
/// written ([`check_writable`]), at most one is standard output (two
/// documents on one stream could not be told apart), and none is one of
/// the command's `inputs` (`report r.json -o r.json` would destroy the
/// result it reads).
pub fn check_outputs(
    outputs: &[(&str, std::path::PathBuf)],
    inputs: &[std::path::PathBuf],
) -> Result<()> {
    let to_stdout: Vec<&str> = outputs
        .iter()
        .filter(|(_, p)| is_stdout(p))
        .map(|(f, _)| *f)
        .collect();
    if to_stdout.len() > 1 {
        return Err(bad(format!(
            "{}: only one output can be standard output (\"-\"); name a file for the others",
            to_stdout
                .iter()
                .map(|f| format!("{f} -"))
                .collect::<Vec<_>>()
                .join(" and ")
        )));
    }
    for (flag, path) in outputs {
        check_writable(flag, path)?;
        if is_stdout(path) {
            continue;
        }
        if let Some(input) = inputs.iter().find(|i| same_file(i, path)) {
            return Err(bad(format!(
                "{flag} {}: is the input {}; writing it would destroy what is read",
                path.display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// True if `a` and `b` both exist and are the same file (device and inode:
/// through links, `./x` and `x` alike).
fn same_file(a: &Path, b: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(x), Ok(y)) => x.dev() == y.dev() && x.ino() == y.ino(),
        _ => false,
    }
}

fn bad(msg: String) -> anyhow::Error {
    crate::error::UsageError(msg).into()
}

/// A table of text cells with a header row, to export.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    pub headers: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// RFC 4180 CSV: a cell with a comma, a quote or a line break is quoted,
    /// its quotes doubled; lines end with CRLF.
    pub fn to_csv(&self) -> String {
        fn cell(s: &str) -> String {
            if s.contains([',', '"', '\n', '\r']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        }
        let mut out = String::new();
        for row in std::iter::once(&self.headers).chain(&self.rows) {
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            out.push_str(&cells.join(","));
            out.push_str("\r\n");
        }
        out
    }

    /// A GitHub-flavoured Markdown table; `|` in a cell is escaped.
    pub fn to_markdown(&self) -> String {
        fn cell(s: &str) -> String {
            s.replace('|', "\\|").replace('\n', " ")
        }
        let line = |row: &[String]| {
            let cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
            format!("| {} |\n", cells.join(" | "))
        };
        let mut out = line(&self.headers);
        out.push_str(&format!("|{}\n", "---|".repeat(self.headers.len())));
        for row in &self.rows {
            out.push_str(&line(row));
        }
        out
    }
}

/// A number for a table cell: as many decimals as `decimals`, nothing for
/// a figure that is not there.
pub fn cell(v: Option<f64>, decimals: usize) -> String {
    match v {
        Some(x) if x.is_finite() => format!("{x:.decimals$}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn is_usage(e: &anyhow::Error) -> bool {
        e.downcast_ref::<crate::error::UsageError>().is_some()
    }

    #[test]
    fn an_output_that_is_not_a_regular_file_is_refused_without_blocking() {
        let d = tempfile::tempdir().unwrap();
        let fifo = d.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a NUL-terminated path that outlives the call.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        // No reader: a blocking open would never return.
        for e in [
            write_file("--json", &fifo, "x").unwrap_err(),
            check_writable("--json", &fifo).unwrap_err(),
        ] {
            assert!(is_usage(&e), "{e}");
            assert!(e.to_string().contains("is a FIFO"), "{e}");
        }
        let e = write_file("-o", Path::new("/dev/null"), "x").unwrap_err();
        assert!(is_usage(&e) && e.to_string().contains("is a device"), "{e}");
        let e = write_file("-o", d.path(), "x").unwrap_err();
        assert!(
            is_usage(&e) && e.to_string().contains("is a directory"),
            "{e}"
        );
        let file = d.path().join("r.json");
        write_file("--json", &file, "long text").unwrap();
        write_file("--json", &file, "short").unwrap();
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "short");
    }

    #[test]
    fn outputs_share_standard_output_with_no_other_and_spare_the_inputs() {
        let d = tempfile::tempdir().unwrap();
        let input = d.path().join("r1.json");
        std::fs::write(&input, "{}").unwrap();
        let out = |f: &'static str, p: &Path| (f, p.to_path_buf());
        let e = check_outputs(
            &[out("--csv", Path::new("-")), out("--json", Path::new("-"))],
            &[],
        )
        .unwrap_err();
        assert!(
            is_usage(&e) && e.to_string().contains("--csv - and --json -"),
            "{e}"
        );
        let e = check_outputs(&[out("-o", &input)], std::slice::from_ref(&input)).unwrap_err();
        assert!(
            is_usage(&e) && e.to_string().contains("is the input"),
            "{e}"
        );
        check_outputs(
            &[
                out("-o", &d.path().join("r.html")),
                out("--json", Path::new("-")),
            ],
            &[input],
        )
        .unwrap();
        assert_eq!(
            std::fs::read_to_string(d.path().join("r1.json")).unwrap(),
            "{}"
        );
    }

    fn table() -> Table {
        Table {
            headers: vec!["series".into(), "tps".into()],
            rows: vec![
                vec!["gp3, commit_delay=10".into(), "1734.5".into()],
                vec!["say \"hi\"|x".into(), String::new()],
            ],
        }
    }

    #[test]
    fn csv_quotes_what_it_must_and_nothing_else() {
        assert_eq!(
            table().to_csv(),
            "series,tps\r\n\"gp3, commit_delay=10\",1734.5\r\n\"say \"\"hi\"\"|x\",\r\n"
        );
    }

    #[test]
    fn markdown_has_a_rule_under_the_header_and_escapes_bars() {
        assert_eq!(
            table().to_markdown(),
            "| series | tps |\n|---|---|\n| gp3, commit_delay=10 | 1734.5 |\n| say \"hi\"\\|x |  |\n"
        );
    }

    #[test]
    fn a_missing_or_infinite_figure_is_an_empty_cell() {
        assert_eq!(cell(Some(1.23456), 2), "1.23");
        assert_eq!(cell(None, 2), "");
        assert_eq!(cell(Some(f64::NAN), 2), "");
    }

    #[test]
    fn a_broken_pipe_is_told_apart_from_other_errors() {
        let e = anyhow::Error::from(io::Error::from(io::ErrorKind::BrokenPipe)).context("writing");
        assert!(is_broken_pipe(&e));
        let e = anyhow::Error::from(io::Error::from(io::ErrorKind::NotFound));
        assert!(!is_broken_pipe(&e));
    }
}
