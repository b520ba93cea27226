//! A comparison's result document (`pgiosim.compare`): the inputs, the
//! setups that differ and each figure with its ratio to the first input's.
//! `compare` builds it; here it is rendered as text and as a table for
//! CSV and Markdown.

use std::fmt::Write as _;

use serde::Serialize;

use crate::output;

/// Name of the comparison schema (`schema_version` is the result's).
pub const COMPARE_SCHEMA: &str = "pgiosim.compare";

/// The comparison, as `--json` writes it.
#[derive(Debug, Clone, Serialize)]
pub struct CompareDoc {
    pub schema: &'static str,
    pub schema_version: u32,
    pub pgiosim_version: &'static str,
    /// True when --force let different workloads or scales through.
    pub forced: bool,
    /// What the reader should know: partial runs, forced comparisons.
    pub warnings: Vec<String>,
    pub inputs: Vec<CompareInput>,
    /// Setup that differs between the inputs: one value per input.
    pub differences: Vec<Difference>,
    /// The figures, one value per input, and each one's ratio to the first.
    pub rows: Vec<CompareRow>,
    /// With `--tolerance`: each later input checked against the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tolerance: Option<Verdicts>,
}

/// `compare --tolerance`'s checks and its verdict.
#[derive(Debug, Clone, Serialize)]
pub struct Verdicts {
    /// The reference's label ("A").
    pub reference: String,
    /// tps within this fraction of the reference's.
    pub tps_tolerance: f64,
    /// Shares within this many percentage points.
    pub share_points: f64,
    pub checks: Vec<Check>,
    /// True when every check passed.
    pub pass: bool,
}

/// One check of one input against the reference.
#[derive(Debug, Clone, Serialize)]
pub struct Check {
    /// The input's label ("B").
    pub input: String,
    /// "tps", or "share page_read" and so on.
    pub check: String,
    pub value: f64,
    pub reference: f64,
    /// tps: value / reference − 1; a share: the difference in points.
    pub error: f64,
    /// Its tolerance, in the error's unit.
    pub tolerance: f64,
    pub pass: bool,
}

/// One input file.
#[derive(Debug, Clone, Serialize)]
pub struct CompareInput {
    /// A, B, C...: the column it is in.
    pub label: String,
    pub file: String,
    /// One line: mode, device, workload, scale, clients, cpus, length, seed.
    pub description: String,
    pub mode: String,
    /// The device model's name, or "disk (engine)" for `run`.
    pub target: String,
    pub workload: String,
    pub scale: u64,
    pub clients: u32,
    pub partial: bool,
}

/// A setup item that differs between inputs.
#[derive(Debug, Clone, Serialize)]
pub struct Difference {
    /// "device", "clients", "setting shared_buffers", ...
    pub what: String,
    /// Its value in each input (null where absent).
    pub values: Vec<Option<String>>,
}

/// One compared figure.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// "summary", "latency", "breakdown" or "io".
    pub section: String,
    pub metric: String,
    pub unit: String,
    /// The figure in each input (null where the file lacks it).
    pub values: Vec<Option<f64>>,
    /// values[i] / values[0] (null where undefined); ratios[0] is 1.
    pub ratios: Vec<Option<f64>>,
}

/// The name of the `i`th input of `compare` and `report`: A, B, ... Z,
/// then R27, R28, ...; one function so both name a file alike.
pub fn run_label(i: usize) -> String {
    let letters = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ";
    if i < letters.len() {
        (letters[i] as char).to_string()
    } else {
        format!("R{}", i + 1)
    }
}

/// A figure, to about four significant digits.
pub fn fmt_value(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if a >= 1000.0 || (v.fract() == 0.0 && a < 1e15) {
        format!("{v:.0}")
    } else if a >= 100.0 {
        format!("{v:.1}")
    } else if a >= 1.0 {
        format!("{v:.2}")
    } else if a >= 0.001 {
        format!("{v:.3}")
    } else {
        format!("{v:.6}")
    }
}

/// A ratio: "0.032×", "12.5×".
pub fn fmt_ratio(r: Option<f64>) -> String {
    match r {
        None => "–".into(),
        Some(r) if r >= 100.0 => format!("{r:.0}×"),
        Some(r) if r >= 10.0 => format!("{r:.1}×"),
        Some(r) if r >= 0.1 => format!("{r:.2}×"),
        Some(r) => format!("{r:.3}×"),
    }
}

/// The checks as text.
pub fn render_verdicts(v: &Verdicts) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "\ntolerance (against {}: tps ±{}%, shares ±{} points)",
        v.reference,
        fmt_value(v.tps_tolerance * 100.0),
        fmt_value(v.share_points)
    );
    for c in &v.checks {
        let (value, reference, error) = if c.check == "tps" {
            (
                fmt_value(c.value),
                fmt_value(c.reference),
                format!("{:+.1}%", c.error * 100.0),
            )
        } else {
            (
                format!("{:.1}%", c.value * 100.0),
                format!("{:.1}%", c.reference * 100.0),
                format!("{:+.1} pts", c.error),
            )
        };
        let _ = writeln!(
            o,
            "  {}  {:<20} {:>12} against {:>12}  {:>10}  {}",
            c.input,
            c.check,
            value,
            reference,
            error,
            if c.pass { "ok" } else { "MISS" }
        );
    }
    let passed = v.checks.iter().filter(|c| c.pass).count();
    let _ = writeln!(
        o,
        "{}: {passed} of {} checks within tolerance",
        if v.pass { "PASS" } else { "FAIL" },
        v.checks.len()
    );
    o
}

/// The comparison's table for export: a row a figure; per input its value
/// and, after the first, its ratio to the first.
pub fn table_of(doc: &CompareDoc) -> output::Table {
    let mut headers: Vec<String> = vec!["section".into(), "metric".into(), "unit".into()];
    for (i, input) in doc.inputs.iter().enumerate() {
        headers.push(input.label.clone());
        if i > 0 {
            headers.push(format!("{}/{}", input.label, doc.inputs[0].label));
        }
    }
    let rows = doc
        .rows
        .iter()
        .map(|r| {
            let mut row = vec![r.section.clone(), r.metric.clone(), r.unit.clone()];
            for (i, v) in r.values.iter().enumerate() {
                row.push(output::cell(*v, 3));
                if i > 0 {
                    row.push(output::cell(r.ratios.get(i).copied().flatten(), 3));
                }
            }
            row
        })
        .collect();
    output::Table { headers, rows }
}

/// Render the comparison as text.
pub fn render(doc: &CompareDoc) -> String {
    let mut o = String::new();
    for i in &doc.inputs {
        let _ = writeln!(o, "{}  {}: {}", i.label, i.file, i.description);
    }
    if !doc.differences.is_empty() {
        let _ = writeln!(o, "\nsetup that differs:");
        for d in &doc.differences {
            let vals: Vec<String> = doc
                .inputs
                .iter()
                .zip(&d.values)
                .map(|(i, v)| format!("{} {}", i.label, v.as_deref().unwrap_or("–")))
                .collect();
            let _ = writeln!(o, "  {:<30} {}", d.what, vals.join(", "));
        }
    }
    let mut head = format!("\n{:<36}", "");
    for (k, i) in doc.inputs.iter().enumerate() {
        let _ = write!(head, "{:>12}", i.label);
        if k > 0 {
            let _ = write!(head, "{:>9}", format!("{}/A", i.label));
        }
    }
    let _ = writeln!(o, "{head}");
    let mut section = "";
    for r in &doc.rows {
        if r.section != section {
            section = &r.section;
            let title = match section {
                "summary" => "summary",
                "latency" => "latency, ms",
                "breakdown" => "breakdown, ms per transaction",
                "io" => "I/O",
                other => other,
            };
            let _ = writeln!(o, "{title}");
        }
        let name = match r.unit.as_str() {
            "%" => format!("{} %", r.metric),
            _ => r.metric.clone(),
        };
        let mut line = format!("  {name:<34}");
        for (k, v) in r.values.iter().enumerate() {
            let _ = write!(line, "{:>12}", v.map_or("–".to_string(), fmt_value));
            if k > 0 {
                let _ = write!(line, "{:>9}", fmt_ratio(r.ratios[k]));
            }
        }
        let _ = writeln!(o, "{}", line.trim_end());
    }
    o
}
