//! `pgiosim report`'s charts read as a person reads them: the numbers on a
//! log axis, and the legends, taken from the SVG the page inlines.

use serde_json::Value;

mod common;
use common::{pgiosim, text, tmp};

/// The SVG of the page's first figure of `kind` (`data-chart`).
fn figure<'a>(html: &'a str, kind: &str) -> &'a str {
    let start = html
        .find(&format!("data-chart=\"{kind}\""))
        .unwrap_or_else(|| panic!("no {kind} figure"));
    let rest = &html[start..];
    let svg = rest.find("<svg").expect("an inline svg");
    let end = rest.find("</svg>").expect("the svg's end");
    &rest[svg..end]
}

/// The text of every `<text>` element of an SVG.
fn texts(svg: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = svg;
    while let Some(i) = rest.find("<text") {
        rest = &rest[i..];
        let open_end = rest.find('>').expect("a text element's tag ends");
        let close = rest.find("</text>").expect("a text element ends");
        out.push(rest[open_end + 1..close].trim().to_string());
        rest = &rest[close..];
    }
    out
}

/// A run whose every latency lies between 2 and 6 ms is labelled within
/// that range on its CDF's log axis, where plotters' own ticks (the powers
/// of ten) left it without a number; its legend names the run.
#[test]
fn a_2_to_6_ms_latency_cdf_has_its_numbers_on_the_axis() {
    let d = tmp("report-ticks");
    let run = d.path().join("nvme.json");
    let run = run.to_str().unwrap();
    let o = pgiosim(&[
        "model", "--device", "nvme", "-c", "1", "-T", "2", "--seed", "1", "--json", run, "-q",
    ]);
    assert!(o.status.success(), "{}", text(&o));
    // The latencies, moved into 2..6 ms in their order.
    let mut result: Value = serde_json::from_str(&std::fs::read_to_string(run).unwrap()).unwrap();
    let cdf = result["latency_cdf"].as_array_mut().expect("latency_cdf");
    let n = cdf.len();
    assert!(n > 10, "{n} CDF points");
    for (i, p) in cdf.iter_mut().enumerate() {
        p["ms"] = Value::from(2.0 + 4.0 * i as f64 / (n - 1) as f64);
    }
    std::fs::write(run, serde_json::to_string(&result).unwrap()).unwrap();
    let html_path = d.path().join("report.html");
    let o = pgiosim(&["report", run, "-o", html_path.to_str().unwrap()]);
    assert!(o.status.success(), "{}", text(&o));
    let html = std::fs::read_to_string(&html_path).unwrap();
    let svg = figure(&html, "latency-cdf");
    let labels = texts(svg);
    let inside: Vec<f64> = labels
        .iter()
        .filter_map(|t| t.parse::<f64>().ok())
        .filter(|v| (2.0..=6.0).contains(v))
        .collect();
    assert!(
        inside.len() >= 3,
        "tick labels within 2..6 ms: {inside:?}; every text: {labels:?}"
    );
    // The legend names the run by what it is, not by its letter alone.
    assert!(
        labels.iter().any(|t| t.starts_with("A: nvme")),
        "legend: {labels:?}"
    );
    // Two seconds, no checkpoint: the tps chart has no checkpoint legend.
    let tps = texts(figure(&html, "tps-over-time"));
    assert!(!tps.iter().any(|t| t.starts_with("checkpoint")), "{tps:?}");
}
