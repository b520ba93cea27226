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
/// in the error.
pub fn write_file(flag: &str, path: &Path, text: &str) -> Result<()> {
    if is_stdout(path) {
        return stdout(text);
    }
    std::fs::write(path, text).with_context(|| format!("{flag} {}: cannot write", path.display()))
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
        Ok(m) if m.is_dir() => Err(bad(format!("{flag} {p}: is a directory"))),
        Ok(_) => std::fs::OpenOptions::new()
            .write(true)
            .open(path)
            .map(drop)
            .map_err(|e| bad(format!("{flag} {p}: cannot write: {e}"))),
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
