//! What pgiosim writes for machines: `--json -` owns standard output, the
//! CSV and Markdown exports of `sweep` and `compare`, and a reader that
//! closes the pipe early.

use std::io::Read;
use std::process::{Command, Stdio};

use serde_json::Value;

mod common;
use common::{pgiosim, text, tmp};

#[test]
fn json_to_stdout_is_the_json_alone_and_the_report_goes_to_stderr() {
    for args in [
        vec!["model", "-s", "2", "-T", "1", "--seed", "1", "--json", "-"],
        vec![
            "model", "-q", "-s", "2", "-T", "1", "--seed", "1", "--json", "-",
        ],
        vec![
            "sweep",
            "-q",
            "--clients",
            "1,2",
            "-s",
            "2",
            "-T",
            "1",
            "--seed",
            "1",
            "--json",
            "-",
        ],
    ] {
        let o = pgiosim(&args);
        assert!(o.status.success(), "{args:?}: {}", text(&o));
        let v: Value = serde_json::from_slice(&o.stdout)
            .unwrap_or_else(|e| panic!("{args:?}: stdout is not JSON alone ({e}): {}", text(&o)));
        assert!(v.is_object());
        // The text report is still there, on standard error.
        assert!(
            String::from_utf8_lossy(&o.stderr).contains("tps"),
            "{args:?}: {}",
            text(&o)
        );
    }
}

#[test]
fn sweep_exports_its_table_as_csv_and_markdown() {
    let dir = tmp("exports");
    let csv = dir.path().join("t.csv");
    let md = dir.path().join("t.md");
    let o = pgiosim(&[
        "sweep",
        "-q",
        "--clients",
        "1,4",
        "--device",
        "nvme,gp3",
        "-s",
        "2",
        "-T",
        "1",
        "--seed",
        "2",
        "--set",
        "commit_delay=0,10",
        "--csv",
        csv.to_str().unwrap(),
        "--markdown",
        md.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = std::fs::read_to_string(&csv).unwrap();
    let lines: Vec<&str> = csv.split("\r\n").filter(|l| !l.is_empty()).collect();
    // A header and a row for each of 2 devices x 2 settings x 2 client counts.
    assert_eq!(lines.len(), 1 + 8, "{csv}");
    let header: Vec<&str> = lines[0].split(',').collect();
    for col in [
        "series",
        "device",
        "commit_delay",
        "clients",
        "tps",
        "latency_p99_ms",
        "wal_fsync_ms",
    ] {
        assert!(header.contains(&col), "no {col} in {header:?}");
    }
    let tps = header.iter().position(|h| *h == "tps").unwrap();
    // The series names hold commas: quoted, so every row has the header's cells
    // once the quoted cell is read as one.
    for row in &lines[1..] {
        let cells = split_csv(row);
        assert_eq!(cells.len(), header.len(), "{row}");
        assert!(cells[tps].parse::<f64>().unwrap() > 0.0);
    }
    let md = std::fs::read_to_string(&md).unwrap();
    let md_lines: Vec<&str> = md.lines().collect();
    assert_eq!(md_lines.len(), 2 + 8, "{md}");
    assert!(md_lines[1].starts_with("|---|"));
}

#[test]
fn compare_exports_values_and_ratios() {
    let dir = tmp("exports");
    let a = dir.path().join("a.json");
    let b = dir.path().join("b.json");
    for (path, device) in [(&a, "nvme"), (&b, "gp3")] {
        let o = pgiosim(&[
            "model",
            "-q",
            "-s",
            "2",
            "-T",
            "1",
            "--seed",
            "4",
            "--device",
            device,
            "--json",
            path.to_str().unwrap(),
        ]);
        assert!(o.status.success(), "{}", text(&o));
    }
    let o = pgiosim(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--csv",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    let csv = String::from_utf8(o.stdout).unwrap();
    let mut lines = csv.split("\r\n");
    assert_eq!(lines.next().unwrap(), "section,metric,unit,A,B,B/A");
    let tps = lines
        .find(|l| l.starts_with("summary,tps,"))
        .expect("a tps row");
    let cells: Vec<&str> = tps.split(',').collect();
    let (va, vb, ratio): (f64, f64, f64) = (
        cells[3].parse().unwrap(),
        cells[4].parse().unwrap(),
        cells[5].parse().unwrap(),
    );
    assert!((vb / va - ratio).abs() < 0.002, "{tps}");
    let o = pgiosim(&[
        "compare",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "--markdown",
        "-",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    assert!(
        String::from_utf8(o.stdout)
            .unwrap()
            .starts_with("| section | metric | unit | A | B | B/A |\n")
    );
}

#[test]
fn a_reader_that_closes_the_pipe_early_ends_it_quietly() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_pgiosim"))
        .args([
            "sweep",
            "--clients",
            "1,2,4,8",
            "-s",
            "2",
            "-T",
            "1",
            "--seed",
            "1",
            "--json",
            "-",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Close the read end before anything is written.
    drop(child.stdout.take());
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}: {err}");
    assert!(!err.contains("panicked") && !err.contains("Error"), "{err}");
}

/// One CSV line's cells, quotes honoured.
fn split_csv(line: &str) -> Vec<String> {
    let mut cells = vec![String::new()];
    let mut quoted = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match (c, quoted) {
            ('"', true) if chars.peek() == Some(&'"') => {
                chars.next();
                cells.last_mut().unwrap().push('"');
            }
            ('"', _) => quoted = !quoted,
            (',', false) => cells.push(String::new()),
            _ => cells.last_mut().unwrap().push(c),
        }
    }
    cells
}
