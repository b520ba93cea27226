//! `scripts/cpu-fit` on its fixture (an excerpt of Callaghan's result files,
//! tests/fixtures/cpu-fit/SOURCE.md): the coefficients docs/cpu-model.md
//! gives, and its usage errors.

mod common;

fn cpu_fit(args: &[&str]) -> std::process::Output {
    common::script("cpu-fit", args)
}

fn the_fixture_gives_the_documented_coefficients() {
    let o = cpu_fit(&["--from-fixture", "--json"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(
        v["source"]["commit"],
        "e1ba3d9edff258d867ef6430353cb4dc60e5eca4"
    );
    let coef = |name: &str| {
        v["coefficients"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap_or_else(|| panic!("no {name}"))["value"]
            .as_f64()
            .unwrap()
    };
    // docs/cpu-model.md's table, to its printed precision.
    for (name, want, tol) in [
        ("c_stmt_select", 38.4, 0.05),
        ("c_read", 84.7, 0.05),
        ("c_write", 8.78, 0.005),
        ("growth_per_backend", 0.0170, 0.00005),
    ] {
        let got = coef(name);
        assert!((got - want).abs() <= tol, "{name}: {got} against {want}");
    }
    let text = cpu_fit(&["--from-fixture"]);
    let out = String::from_utf8_lossy(&text.stdout);
    assert!(out.contains("c_read"), "{out}");
}

fn usage_errors_exit_2_and_a_missing_data_set_1() {
    let o = cpu_fit(&["--from-fixture", "--mytools", "/nonexistent"]);
    assert_eq!(o.status.code(), Some(2));
    let o = cpu_fit(&["--mytools", "/nonexistent/pgiosim-no-such-dir"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(!String::from_utf8_lossy(&o.stderr).is_empty());
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        the_fixture_gives_the_documented_coefficients,
        usage_errors_exit_2_and_a_missing_data_set_1
    ])
}
