//! Every command README.md and docs/*.md show runs here, and what it prints
//! must be what the page shows under it.
//!
//! The pages are trycmd's input as they are: a fenced block tagged `console`
//! holds `$ pgiosim ...` lines (`> ` continues a command on the next line),
//! each followed by the output it prints, stdout and stderr together as a
//! terminal shows them. In that output `[..]` stands for the rest of a line
//! and a line `...` for any number of lines; they elide only what changes
//! from run to run (wall time, a real disk's figures). Every `model`, `sweep`
//! and `vacuum` shown fixes its `--seed` or has no randomness, so its output
//! is exact. Without `--cpus`, `model` models this machine's cores, so every
//! `model` and `sweep` shown names `--cpus` (or an `--instance`); `catchup`
//! has no such flag, and its startup process waits for a core only on a
//! machine of one (this project's machines have two).
//!
//! A fenced block without a language is a trycmd block to trycmd, so every
//! other block names one (```text, ```json); the second test says so.
//!
//! When the program's output changes on purpose, one command rewrites every
//! page's shown output from the real one (review the diff, then commit it):
//!
//! ```text
//! TRYCMD=overwrite cargo test --release --test docs
//! ```
//!
//! The commands run in an empty temporary directory (`examples/` and
//! `workloads/` linked into it), so the files they write (`--json
//! sweep.json`, `-o report.html`) go nowhere near the repository; the
//! commands of one page run in order there, so a later one reads what an
//! earlier one wrote.
//!
//! A command shown outside a `console` block, in a fenced or indented code
//! block, is listed in [`NOT_RUN`] with the reason it cannot run here; the
//! second test fails on one that is neither run nor listed, and on a listed
//! one no page shows any more.

use std::path::{Path, PathBuf};

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn pages() -> Vec<PathBuf> {
    let mut pages = vec![root().join("README.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root().join("docs"))
        .expect("read docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    pages.extend(docs);
    pages
}

#[test]
fn documented_commands_print_what_the_docs_show() {
    let dir = tempfile::tempdir().expect("temporary directory");
    for shared in ["examples", "workloads"] {
        std::os::unix::fs::symlink(root().join(shared), dir.path().join(shared))
            .expect("link into the temporary directory");
    }
    // trycmd runs a page's commands in the process's directory when the page
    // names none; this is the only test of this binary that needs one.
    std::env::set_current_dir(dir.path()).expect("cd to the temporary directory");
    let cases = trycmd::TestCases::new();
    cases
        .register_bin("pgiosim", Path::new(env!("CARGO_BIN_EXE_pgiosim")))
        .timeout(std::time::Duration::from_secs(120));
    for page in pages() {
        cases.case(page);
    }
    cases.run();
}

/// Commands the pages show that do not run here, each with its reason:
/// (page, the start of the command's line, why). A script's name is
/// followed by a space here: tests/hardening.rs takes `scripts/NAME"` in a
/// test's source for a test that runs the script.
const NOT_RUN: &[(&str, &str, &str)] = &[
    (
        "README.md",
        "cargo run --release -- run",
        "the real disk: a 241 MB data set and 10 s of I/O whose figures are the disk's",
    ),
    (
        "README.md",
        "pgiosim capture --dsn \"$DSN\"",
        "a live PostgreSQL server",
    ),
    (
        "README.md",
        "pgiosim model --workload mine.json",
        "capture's output, and 95 s of an NVMe server at scale 33000",
    ),
    (
        "docs/benchmarks.md",
        "cargo build --release && scripts/bench-engine ",
        "a benchmark of the real disk",
    ),
    (
        "docs/benchmarks.md",
        "cargo build --release && scripts/steady-coverage ",
        "six cases of 20 model runs and 4 runs four times as long: over an hour of a core",
    ),
    (
        "docs/cpu-model.md",
        "scripts/cpu-fit ",
        "a mirror of mdcallag/mytools or the fixture's fit, which tests/cpu_fit.rs runs",
    ),
    (
        "docs/validation.md",
        "scripts/pgbench-compare ",
        "real PostgreSQL at scale 2,700 (40 GB) under caps, half an hour; tests/pgbench_compare.rs runs small ones and --from-json",
    ),
    (
        "docs/cpu-model.md",
        "scripts/cpu-vs-scale ",
        "real PostgreSQL servers, minutes each",
    ),
    (
        "docs/cpu-model.md",
        "scripts/cpu-vs-clients ",
        "real PostgreSQL servers, half an hour; tests/cpu_vs_clients.rs runs a tiny one and prints the saved runs' tables",
    ),
    (
        "docs/validation.md",
        "scripts/fresh-pages ",
        "a real PostgreSQL server for two minutes; tests/fresh_pages.rs runs a small one",
    ),
    (
        "docs/cpu-model.md",
        "scripts/cpu-check ",
        "28 model runs, two minutes of a core (and a mirror of mdcallag/mytools for --mytools); tests/cpu_check.rs runs two cases",
    ),
    (
        "docs/devices.md",
        "pgiosim calibrate --dir /mnt/disk",
        "probes a real disk for minutes",
    ),
    (
        "docs/devices.md",
        "pgiosim model --device mydisk.json",
        "calibrate's output",
    ),
    (
        "docs/fuzzing.md",
        "scripts/fuzz-smoke ",
        "nightly Rust and cargo-fuzz; CI runs it after the tests",
    ),
    (
        "docs/fuzzing.md",
        "cargo +nightly fuzz run",
        "nightly Rust and cargo-fuzz, 10 minutes",
    ),
    (
        "docs/fuzzing.md",
        "target/x86_64-unknown-linux-gnu/release/dsn",
        "a built fuzz target and its corpus",
    ),
    (
        "docs/replication.md",
        "pgiosim catchup --backlog 1GB -s 100 --dir /mnt/standby",
        "the real disk, at /mnt/standby",
    ),
    (
        "docs/sweep-compare-report.md",
        "pgiosim compare nvme.json gp3.json [more.json ...]",
        "the synopsis, not a command",
    ),
    (
        "docs/sweep-compare-report.md",
        "pgiosim compare real.json",
        "real.json is a real pgbench run's",
    ),
    (
        "docs/sweep-compare-report.md",
        "pgbench -n -r",
        "a live PostgreSQL server",
    ),
    (
        "docs/sweep-compare-report.md",
        "pgiosim import pgbench pgbench.out",
        "pgbench.out is a real pgbench run's (tests/import.rs imports fixtures of them)",
    ),
    (
        "docs/sweep-compare-report.md",
        "pgiosim sweep --clients 1,2,...,10 --device nvme,gp3,gp2,io2",
        "its block runs GNU parallel: tests/sweep.rs runs the block",
    ),
    (
        "docs/sweep-compare-report.md",
        "pgiosim sweep --merge grid --json grid.json",
        "its block runs GNU parallel: tests/sweep.rs runs the block",
    ),
    (
        "docs/sweep-compare-report.md",
        "pgiosim report results/*.json",
        "the synopsis, not a command",
    ),
];

/// What a command line of a page starts with.
const COMMANDS: &[&str] = &["pgiosim ", "cargo ", "pgbench ", "target/", "bash "];

fn is_command(line: &str) -> bool {
    let l = line.trim_start();
    let l = l.strip_prefix("$ ").unwrap_or(l);
    COMMANDS
        .iter()
        // `pgiosim run`, not the `pgiosim 0.1.0 (run): ...` line of a report.
        .any(|c| l.strip_prefix(c).is_some_and(|r| !r.starts_with(|c: char| c.is_ascii_digit())))
        // `scripts/NAME`, not the `scripts/   ...` row of a directory tree.
        || l.strip_prefix("scripts/").is_some_and(|r| r.starts_with(|c: char| c.is_ascii_lowercase()))
}

#[test]
fn every_documented_command_is_run_or_excused() {
    let mut unexcused = Vec::new();
    let mut used = vec![false; NOT_RUN.len()];
    let mut run = 0;
    for page in pages() {
        let name = page
            .strip_prefix(root())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let text = std::fs::read_to_string(&page).expect("read page");
        // The fence that opened the block we are in, and whether it is a
        // console block (whose `$ ` lines trycmd runs).
        let mut fence: Option<(String, bool)> = None;
        let mut previous_blank = true;
        let mut indented_block = false;
        for line in text.lines() {
            let ticks = line.len() - line.trim_start_matches('`').len();
            if let Some((open, console)) = &fence {
                if ticks >= 3 && line.starts_with(open.as_str()) && line[ticks..].trim().is_empty()
                {
                    fence = None;
                } else if *console && line.starts_with("$ ") {
                    assert!(
                        line.starts_with("$ pgiosim "),
                        "{name}: a console block runs pgiosim only: {line}"
                    );
                    run += 1;
                } else if !console && is_command(line) {
                    excuse(&name, line, &mut used, &mut unexcused);
                }
                continue;
            }
            if ticks >= 3 {
                let info = line[ticks..].trim();
                let console = matches!(info.split(',').next(), Some("console" | "trycmd"));
                assert!(
                    !info.is_empty(),
                    "{name}: a fence without a language is a trycmd block: tag it (```text): {line}"
                );
                fence = Some((
                    line[..ticks].to_owned(),
                    console && !info.contains("ignore"),
                ));
                continue;
            }
            // An indented code block starts after a blank line; a list item's
            // indented continuation does not.
            if line.trim().is_empty() {
                previous_blank = true;
                continue;
            }
            if line.starts_with("    ") {
                if previous_blank {
                    indented_block = true;
                }
            } else {
                indented_block = false;
            }
            previous_blank = false;
            if indented_block && is_command(line) {
                excuse(&name, line, &mut used, &mut unexcused);
            }
        }
    }
    assert!(
        unexcused.is_empty(),
        "commands shown outside a console block and not in NOT_RUN: run them in a \
         ```console block, or list each with its reason:\n{}",
        unexcused.join("\n")
    );
    let stale: Vec<_> = NOT_RUN
        .iter()
        .zip(&used)
        .filter(|(_, u)| !**u)
        .map(|(n, _)| format!("{}: {}", n.0, n.1))
        .collect();
    assert!(
        stale.is_empty(),
        "NOT_RUN lists commands no page shows: {stale:?}"
    );
    assert!(run >= 15, "only {run} documented commands run");
}

fn excuse(page: &str, line: &str, used: &mut [bool], unexcused: &mut Vec<String>) {
    let l = line.trim_start();
    let l = l.strip_prefix("$ ").unwrap_or(l);
    match NOT_RUN
        .iter()
        .position(|(p, start, _)| *p == page && l.starts_with(start))
    {
        Some(i) => used[i] = true,
        None => unexcused.push(format!("{page}: {l}")),
    }
}
