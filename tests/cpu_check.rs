//! `scripts/cpu-check`: docs/cpu-model.md's check of the CPU model on other
//! servers. Its case list, a bad case refused, and two cases run through the
//! built binary, whose measured figures are the cited rows' and whose
//! modelled figures come from the fit set's workloads
//! (tests/fixtures/cpu-check/). The full table is 28 model runs; the
//! `--mytools` check of the figures needs a mirror of mdcallag/mytools and
//! is not run here.

mod common;

fn cpu_check(args: &[&str]) -> std::process::Output {
    common::script("cpu-check", args)
}

fn lists_its_cases_and_refuses_an_unknown_one() {
    let o = cpu_check(&["--list"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(out.lines().count(), 25, "{out}");
    for id in [
        "pn53-point-query",
        "pn53-io-update-index",
        "ser4-update-nonindex",
        "socket2-point-query",
        "dell32-update-index",
        "hetz48-c40-update-nonindex",
        "smt",
    ] {
        assert!(out.lines().any(|l| l == id), "{id} missing: {out}");
    }
    let o = cpu_check(&["--only", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("pn53-point-query"));
    let o = cpu_check(&["--duration", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

fn prints_the_model_commands_with_each_servers_flags() {
    let o = cpu_check(&["--commands", "--only", "socket2-update-nonindex"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    for want in [
        "--workload tests/fixtures/cpu-check/sysbench-update-nonindex.json",
        "-M prepared -c 16 --cpus 24 --threads-per-core 1 --cpu-speed 0.62",
    ] {
        assert!(out.contains(want), "{want}: {out}");
    }
}

fn two_cases_print_measured_beside_modelled() {
    let o = cpu_check(&[
        "--only",
        "pn53-point-query,pn53-update-nonindex",
        "--duration",
        "20",
    ]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    // | case | server | release | clients | speed | measured | model | cpu bucket | residual | implied speed |
    for (id, measured) in [("pn53-point-query", 36.7), ("pn53-update-nonindex", 53.7)] {
        let row = out
            .lines()
            .find(|l| l.starts_with(&format!("| {id} |")))
            .unwrap_or_else(|| panic!("no row {id}: {out}"));
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        assert_eq!(cells[4], "1", "{row}");
        assert_eq!(cells[5], "1.10", "{row}");
        assert_eq!(cells[6].parse::<f64>().unwrap(), measured, "{row}");
        // The fit set's statement at the estimated speed: 38.4 / 1.10 = 34.9
        // for the point query; the update adds its WAL flush's CPU.
        let model: f64 = cells[7].parse().unwrap();
        assert!(model > 0.7 * measured && model < 1.3 * measured, "{row}");
    }
    assert!(out.contains("update-nonindex over point-query"), "{out}");
    assert!(
        out.contains("may25.pg18beta1/pn53/o.met.cached.pg18.dop1"),
        "{out}"
    );
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        lists_its_cases_and_refuses_an_unknown_one,
        prints_the_model_commands_with_each_servers_flags,
        two_cases_print_measured_beside_modelled
    ])
}
