//! `scripts/steady-coverage` at small size: its test case with three seeds
//! and two references, checked against the JSON it writes: references from
//! other seeds, at least four times the longest precision run, and the
//! coverage counted from the answers' own intervals.

mod common;

fn steady_coverage_checks_answers_against_longer_runs_of_other_seeds() {
    let dir = common::tmp("steady-coverage");
    let json = dir.path().join("coverage.json");
    let o = common::script(
        "steady-coverage",
        &[
            "--cases",
            "tiny",
            "--seeds",
            "3",
            "--ref-seeds",
            "2",
            "--jobs",
            "1",
            "--json",
            json.to_str().unwrap(),
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    // 1 would be a miss of the target: a finding, not the script's failure.
    assert!(matches!(o.status.code(), Some(0 | 1)), "{out}{err}");
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let case = &doc["cases"][0];
    assert_eq!(case["name"], "tiny", "{case}");
    let f = |v: &serde_json::Value| v.as_f64().unwrap_or_else(|| panic!("{v} in {case}"));

    // Seeds 1..3 checked, 1001..1002 for the references: no shared prefix.
    let seeds: Vec<u64> = case["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["seed"].as_u64().unwrap())
        .collect();
    assert_eq!(seeds, [1, 2, 3]);
    let refs = case["references"].as_array().unwrap();
    assert_eq!(refs.len(), 2);
    for r in refs {
        assert!(!seeds.contains(&r["seed"].as_u64().unwrap()), "{case}");
    }

    // Every precision run stopped on its precision; the references ran
    // their -T, at least four times the longest of them.
    let longest = case["runs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["stopped_on"], "precision", "{r}");
            f(&r["simulated_s"])
        })
        .fold(0.0, f64::max);
    assert_eq!(f(&case["longest_precision_s"]), longest);
    assert!(f(&case["ref_duration_s"]) >= 4.0 * longest, "{case}");
    for r in refs {
        assert_eq!(f(&r["simulated_s"]), f(&case["ref_duration_s"]), "{r}");
    }

    // The reference is the references' mean; its half-width at least their
    // own intervals combined.
    let mean = refs.iter().map(|r| f(&r["tps"])).sum::<f64>() / 2.0;
    let ref_tps = f(&case["ref_tps"]);
    assert!((ref_tps - mean).abs() < 1e-9 * mean, "{case}");
    let own = refs
        .iter()
        .map(|r| f(&r["ci95"]).powi(2))
        .sum::<f64>()
        .sqrt()
        / 2.0;
    let u = f(&case["ref_ci95"]);
    assert!(u >= own * (1.0 - 1e-12), "{case}");

    // Coverage counted from each answer's own interval, and bracketed by
    // the reference's uncertainty.
    let count = |slack: f64| {
        case["runs"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| (f(&r["answer_tps"]) - ref_tps).abs() <= f(&r["answer_ci95"]) + slack)
            .count() as u64
    };
    assert_eq!(case["covered"].as_u64(), Some(count(0.0)), "{case}");
    assert_eq!(case["covered_strict"].as_u64(), Some(count(-u)), "{case}");
    assert_eq!(case["covered_lenient"].as_u64(), Some(count(u)), "{case}");
    assert_eq!(o.status.code() == Some(0), count(0.0) >= 3, "{out}");
    let row = out
        .lines()
        .find(|l| l.starts_with("| tiny | 3 |"))
        .unwrap_or_else(|| panic!("no table row: {out}"));
    assert!(row.contains(&format!("| {} (", count(0.0))), "{row}");

    // A case that does not exist is refused with the list.
    let o = common::script("steady-coverage", &["--cases", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("talk-nvme"));
}

/// The script's arithmetic on figures whose verdicts are known: answers
/// 0.5, 1.5, 4 and 6 away from a reference of 100 ± 2, each with an
/// interval of ±3, and one that reached no steady state.
fn steady_coverage_counts_intervals_and_brackets_them_by_the_reference() {
    let scripts = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    let code = r#"
import importlib.machinery, sys
m = importlib.machinery.SourceFileLoader("sc", sys.argv[1] + "/steady-coverage").load_module()
rows = [{"answer_tps": a, "answer_ci95": 3.0} for a in (100.5, 101.5, 96.0, 106.0)] + [{"answer_tps": None}]
print(*m.judge(rows, 100.0, 2.0)[:3])
print(*("%.4f" % x for x in m.judge(rows, 100.0, 2.0)[3]))
refs = [{"tps": t, "ci95": 1.0} for t in (98.0, 102.0)]
print(*("%.4f" % x for x in m.reference(refs)))
"#;
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(code)
        .arg(&scripts)
        .current_dir(&scripts)
        .output()
        .unwrap_or_else(|e| panic!("python3: {e}"));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lines: Vec<&str> = out.lines().collect();
    // Holding 100: 100.5 and 101.5; holding all of 98..102: 100.5 only;
    // holding some of it: 96 too (99 is in both), never 106.
    assert_eq!(lines[0], "2 1 3", "{out}");
    assert_eq!(lines[1], "0.5000 1.5000 -4.0000 6.0000", "{out}");
    // Mean 100; own intervals sqrt(2)/2 = 0.7071; spread t(1) 12.706 x
    // 2.8284 / sqrt(2) = 25.412, the larger.
    assert_eq!(lines[2], "100.0000 25.4120 25.4120", "{out}");
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        steady_coverage_checks_answers_against_longer_runs_of_other_seeds,
        steady_coverage_counts_intervals_and_brackets_them_by_the_reference
    ])
}
