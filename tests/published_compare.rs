//! `scripts/published-compare` runs at small size: one published case, 60
//! simulated seconds, through the built binary, and prints its table.

mod common;

fn published_compare_prints_the_published_figure_next_to_the_model() {
    let o = common::script("published-compare", &["--quick", "--only", "talk-gp3"]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let row = out
        .lines()
        .find(|l| l.starts_with("talk-gp3") && l.contains(" tps "))
        .unwrap_or_else(|| panic!("no tps row: {out}"));
    // published 1,734; the model's figure and its error follow.
    let cells: Vec<&str> = row.split_whitespace().collect();
    assert_eq!(cells[2], "1,734", "{row}");
    let model: f64 = cells[3].replace(',', "").parse().unwrap();
    assert!(model > 100.0, "{row}");
    assert!(out.contains("largest buckets"), "{out}");
    assert!(out.contains("--instance m6id.4xlarge"), "{out}");
    // A case that does not exist is refused with the list.
    let o = common::script("published-compare", &["--only", "nosuch"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("talk-nvme"));
}

fn main() -> std::process::ExitCode {
    common::harness::run(common::trials![
        published_compare_prints_the_published_figure_next_to_the_model
    ])
}
