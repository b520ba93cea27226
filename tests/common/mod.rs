//! Helpers the integration tests share: run the binary, read what it
//! printed, and a temp dir on a real disk. Each test crate uses some of
//! them, hence the `allow(dead_code)`s.

use std::process::{Command, Output};

pub mod harness;
#[allow(unused_imports)]
pub(crate) use harness::{note, trials};

/// Run pgiosim with `args` and wait for it.
#[allow(dead_code)]
pub fn pgiosim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_pgiosim"))
        .args(args)
        .output()
        .expect("start pgiosim")
}

/// Standard output then standard error, as one string.
#[allow(dead_code)]
pub fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// A temp dir under /var/tmp: a real disk filesystem (O_DIRECT works), not
/// tmpfs.
#[allow(dead_code)]
pub fn tmp(prefix: &str) -> tempfile::TempDir {
    tempfile::Builder::new()
        .prefix(prefix)
        .tempdir_in("/var/tmp")
        .unwrap()
}

/// A test that cannot run here (a program, a permission or a service it
/// needs is missing): stops the test, which [`harness`] reports as ignored
/// with `reason`, except under `CI=true`, where every test must run, so a
/// skip fails. Tests never install what they miss; `.ci/run` installs it.
/// Only for tests run by [`harness::run`] (`harness = false` in Cargo.toml):
/// under libtest's own harness it fails the test.
#[allow(dead_code)]
pub fn skip(reason: &str) -> ! {
    // resume_unwind, not panic!: no panic message, the harness says why.
    std::panic::resume_unwind(Box::new(harness::Skip(reason.to_string())))
}

/// Path of an example device profile under `examples/devices/` (a disk
/// measured on one machine, not shipped), for `--device FILE`.
#[allow(dead_code)]
pub fn example_device(name: &str) -> String {
    format!(
        "{}/examples/devices/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    )
}

/// The breakdown bucket `name` of a result's JSON (`breakdown` is a list of
/// `{"bucket": ..., "mean_us": ..., "share": ...}`), if it has one.
#[allow(dead_code)]
pub fn bucket<'a>(result: &'a serde_json::Value, name: &str) -> Option<&'a serde_json::Value> {
    result["breakdown"]
        .as_array()
        .expect("a breakdown list")
        .iter()
        .find(|b| b["bucket"] == name)
}

/// Whether a PostgreSQL release under /usr/lib/postgresql (Debian's
/// layout) has every one of `programs` in its bin directory.
#[allow(dead_code)]
pub fn have_postgres(programs: &[&str]) -> bool {
    let Ok(versions) = std::fs::read_dir("/usr/lib/postgresql") else {
        return false;
    };
    versions.flatten().any(|v| {
        programs
            .iter()
            .all(|p| v.path().join("bin").join(p).exists())
    })
}

/// A test that runs a real PostgreSQL server from a script skips unless
/// it is root (`why_root` says what for) and PostgreSQL is installed.
#[allow(dead_code)]
pub fn need_root_and_postgres(why_root: &str) {
    // SAFETY: geteuid has no preconditions and cannot fail.
    if unsafe { libc::geteuid() } != 0 {
        skip(why_root);
    }
    if !have_postgres(&["pg_ctl", "initdb", "pgbench", "psql"]) {
        skip("PostgreSQL (pg_ctl, pgbench) is not installed (.ci/run installs it)");
    }
}

/// Everything in `dir` but the files named `kept`: what a script left.
#[allow(dead_code)]
pub fn left_behind(dir: &std::path::Path, kept: &[&str]) -> Vec<std::ffi::OsString> {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .filter(|n| !kept.iter().any(|k| n == k))
        .collect()
}

/// Whether the shell finds `program` on the PATH.
#[allow(dead_code)]
pub fn on_path(program: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {program}")])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

/// Run `scripts/NAME` with python3 and `args`, `PGIOSIM` set to this
/// build's binary, and wait. Without python3 the test cannot run
/// ([`skip`]; `.ci/run` installs it).
#[allow(dead_code)]
pub fn script(name: &str, args: &[&str]) -> Output {
    if Command::new("python3").arg("--version").output().is_err() {
        skip("python3 is not installed");
    }
    Command::new("python3")
        .arg(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("scripts")
                .join(name),
        )
        .args(args)
        .env("PGIOSIM", env!("CARGO_BIN_EXE_pgiosim"))
        .output()
        .unwrap_or_else(|e| panic!("start scripts/{name}: {e}"))
}
