//! The page `pgiosim report` writes: one self-contained HTML file with
//! charts of results and sweeps. Everything is inline (CSS, SVG drawn by
//! plotters), with no script, font or image fetched: the file opens offline
//! and can be mailed.
//!
//! The page holds, in this order: for result files, a table of the runs, a
//! stacked bar of each run's breakdown and their latency CDFs together; for
//! each sweep file, tps and p99 against clients (one line per device and
//! setting, knees circled), the sweep's table and the breakdown of each
//! series against clients; then per run, tps over time with checkpoints
//! marked and its latency CDF.

use std::fmt::Write as _;
use std::path::PathBuf;

use anyhow::Result;

use super::charts::{self, CheckpointSpan, ClientSeries, StackedBar};
use super::compare::run_label;
use super::load::{self, Document, LoadedResult};
use super::sweep::SweepDoc;

/// Width of a full-width chart and size of a half-width one, in pixels.
const FULL_WIDTH: u32 = 1100;
const HALF: (u32, u32) = (530, 340);
/// At most this many series get their own breakdown chart in a sweep.
const MAX_SERIES_BREAKDOWNS: usize = 12;

/// Escape text for HTML.
pub fn esc(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            c => o.push(c),
        }
    }
    o
}

const CSS: &str = r#"
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
       margin: 0 auto; max-width: 1140px; padding: 16px 20px 40px; color: #222; background: #fafafa; }
h1 { font-size: 1.6em; margin: 0.2em 0; }
h2 { font-size: 1.25em; margin: 1.6em 0 0.4em; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 1.05em; margin: 1.2em 0 0.3em; }
p.meta, p.note { color: #555; margin: 0.3em 0; }
table { border-collapse: collapse; margin: 0.6em 0; font-size: 0.84em; background: #fff; }
th, td { border: 1px solid #ddd; padding: 3px 6px; text-align: right; white-space: nowrap; }
th { background: #f0f0f0; white-space: normal; vertical-align: bottom; }
td.wrap { white-space: normal; text-align: left; }
td.l, th.l { text-align: left; }
tr.knee td { background: #fff4d6; font-weight: 600; }
.charts { display: flex; flex-wrap: wrap; gap: 12px; }
figure.chart { margin: 6px 0; background: #fff; border: 1px solid #e3e3e3; padding: 4px; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
figure.chart figcaption { font-size: 0.82em; color: #555; padding: 2px 6px 4px; max-width: 1090px; }
.legend { display: flex; flex-wrap: wrap; gap: 4px 14px; font-size: 0.85em; padding: 2px 6px 6px; }
.legend span.sw { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
.scroll { overflow-x: auto; }
"#;

/// One figure: an inline SVG chart with its name and caption.
fn figure(o: &mut String, kind: &str, svg: &str, caption: &str, legend: bool) {
    let _ = write!(o, "<figure class=\"chart\" data-chart=\"{kind}\">");
    o.push_str(svg);
    if legend {
        o.push_str(&bucket_legend());
    }
    if !caption.is_empty() {
        let _ = write!(o, "<figcaption>{}</figcaption>", esc(caption));
    }
    o.push_str("</figure>\n");
}

fn bucket_legend() -> String {
    let mut o = String::from("<div class=\"legend\">");
    for (name, (r, g, b)) in charts::BUCKET_COLOURS {
        let _ = write!(
            o,
            "<span><span class=\"sw\" style=\"background:#{r:02x}{g:02x}{b:02x}\"></span>{name}</span>"
        );
    }
    o.push_str("</div>");
    o
}

/// The breakdown of a result as a stacked bar.
fn bar_of(label: String, r: &LoadedResult) -> StackedBar {
    StackedBar {
        label,
        segments: r
            .breakdown
            .iter()
            .map(|b| (b.bucket.clone(), b.mean_us / 1e3))
            .collect(),
    }
}

fn cdf_of(label: String, r: &LoadedResult) -> charts::Cdf {
    charts::Cdf {
        label,
        points: r.latency_cdf.iter().map(|p| (p.percentile, p.ms)).collect(),
    }
}

/// A short label for a run in charts: "A nvme 16c".
fn short_label(tag: &str, r: &LoadedResult) -> String {
    format!("{tag}: {}, {} clients", r.target(), r.run.clients)
}

/// Milliseconds with three significant digits or more.
fn ms(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.1}")
    } else if v >= 10.0 {
        format!("{v:.2}")
    } else {
        format!("{v:.3}")
    }
}

/// Everything the page shows, read from the files.
pub struct Inputs {
    pub results: Vec<LoadedResult>,
    pub sweeps: Vec<(PathBuf, SweepDoc)>,
}

/// Read the report's files.
pub fn read_inputs(files: &[PathBuf]) -> Result<Inputs> {
    let mut results = Vec::new();
    let mut sweeps = Vec::new();
    for f in files {
        match load::load(f).map_err(crate::error::bad_input)? {
            Document::Result(r) => results.push(*r),
            Document::Sweep(s) => sweeps.push((f.clone(), *s)),
        }
    }
    Ok(Inputs { results, sweeps })
}

/// Render the whole page.
pub fn render(title: &str, inputs: &Inputs) -> Result<String> {
    let mut o = String::new();
    let _ = write!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>{CSS}</style>\n</head>\n<body>\n",
        esc(title)
    );
    let _ = writeln!(o, "<h1>{}</h1>", esc(title));
    let _ = writeln!(
        o,
        "<p class=\"meta\">pgiosim {}: {} run(s), {} sweep(s). Charts are inline SVG; the file needs no network.</p>",
        env!("CARGO_PKG_VERSION"),
        inputs.results.len(),
        inputs.sweeps.len()
    );
    // The overviews first (runs side by side, then sweeps), then each run.
    if !inputs.results.is_empty() {
        runs_section(&mut o, &inputs.results)?;
    }
    for (path, sweep) in &inputs.sweeps {
        sweep_section(&mut o, path, sweep)?;
    }
    for (i, r) in inputs.results.iter().enumerate() {
        run_section(&mut o, &run_label(i), r)?;
    }
    o.push_str("</body>\n</html>\n");
    Ok(o)
}

fn runs_section(o: &mut String, results: &[LoadedResult]) -> Result<()> {
    o.push_str("<section id=\"runs\">\n<h2>Runs</h2>\n<div class=\"scroll\"><table>\n");
    o.push_str(
        "<tr><th class=\"l\"></th><th class=\"l\">file</th><th class=\"l\">run</th><th>tps</th>\
         <th>avg ms</th><th>p50 ms</th><th>p99 ms</th><th>p99.9 ms</th><th>commits per WAL flush</th>\
         <th>data reads/s</th><th>check&shy;points</th></tr>\n",
    );
    for (i, r) in results.iter().enumerate() {
        let l = &r.summary.latency_ms;
        let _ = writeln!(
            o,
            "<tr><td class=\"l\">{}</td><td class=\"l\">{}</td><td class=\"wrap\">{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{:.0}</td><td>{}</td></tr>",
            run_label(i),
            esc(&r.path.display().to_string()),
            esc(&r.describe()),
            r.summary.tps,
            ms(l.average),
            ms(l.p50),
            ms(l.p99),
            ms(l.p99_9),
            r.io.commits_per_flush,
            r.io.data_reads_per_s,
            r.checkpoints.len()
        );
    }
    o.push_str("</table></div>\n");
    let bars: Vec<StackedBar> = results
        .iter()
        .enumerate()
        .map(|(i, r)| bar_of(short_label(&run_label(i), r), r))
        .collect();
    let svg = charts::breakdown_bars("Where each transaction's time goes", &bars, FULL_WIDTH)?;
    figure(
        o,
        "breakdown",
        &svg,
        "Mean time per transaction in each bucket; the buckets sum to the mean latency.",
        true,
    );
    let with_cdf: Vec<(usize, &LoadedResult)> = results
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.latency_cdf.is_empty())
        .collect();
    if with_cdf.len() > 1 {
        let cdfs: Vec<charts::Cdf> = with_cdf
            .iter()
            .map(|(i, r)| cdf_of(short_label(&run_label(*i), r), r))
            .collect();
        let svg = charts::latency_cdf("Latency CDF, all runs", &cdfs, (FULL_WIDTH, 380))?;
        figure(o, "latency-cdf-all", &svg, "", false);
    }
    o.push_str("</section>\n");
    Ok(())
}

fn run_section(o: &mut String, tag: &str, r: &LoadedResult) -> Result<()> {
    let _ = writeln!(
        o,
        "<section class=\"run\" id=\"run-{tag}\">\n<h2>{tag}: {}</h2>\n<p class=\"meta\">{}</p>",
        esc(&r.path.display().to_string()),
        esc(&r.describe())
    );
    o.push_str("<div class=\"charts\">\n");
    if r.timeseries.is_empty() {
        o.push_str("<p class=\"note\">No whole second ran: no tps over time.</p>\n");
    } else {
        tps_figure(o, r)?;
    }
    if r.latency_cdf.is_empty() {
        o.push_str(
            "<p class=\"note\">This file has no latency_cdf (written by an older pgiosim, or no transaction): no CDF.</p>\n",
        );
    } else {
        let svg = charts::latency_cdf("Latency CDF", &[cdf_of(short_label(tag, r), r)], HALF)?;
        let l = &r.summary.latency_ms;
        figure(
            o,
            "latency-cdf",
            &svg,
            &format!(
                "p50 {} ms, p90 {} ms, p99 {} ms, p99.9 {} ms, max {} ms",
                ms(l.p50),
                ms(l.p90),
                ms(l.p99),
                ms(l.p99_9),
                ms(l.max)
            ),
            false,
        );
    }
    o.push_str("</div>\n<table><tr><th class=\"l\">bucket</th><th>mean ms</th><th>share</th><th>p99 ms</th></tr>\n");
    for b in &r.breakdown {
        let _ = writeln!(
            o,
            "<tr><td class=\"l\">{}</td><td>{}</td><td>{:.1}%</td><td>{}</td></tr>",
            esc(&b.bucket),
            ms(b.mean_us / 1e3),
            b.share * 100.0,
            ms(b.p99_us / 1e3)
        );
    }
    o.push_str("</table>\n</section>\n");
    Ok(())
}

/// The run's tps over time with its checkpoints and steady state, and a
/// caption saying when each was.
fn tps_figure(o: &mut String, r: &LoadedResult) -> Result<()> {
    let seconds: Vec<(f64, f64)> = r.timeseries.iter().map(|s| (s.t as f64, s.tps)).collect();
    let spans: Vec<CheckpointSpan> = r
        .checkpoints
        .iter()
        .map(|c| CheckpointSpan {
            start_s: c.start_s,
            end_s: c.end_s,
        })
        .collect();
    let steady = r.steady_state.as_ref().and_then(|st| {
        let (from, len) = (st.start_s?, st.length_s?);
        Some(charts::SteadySpan {
            warmup_s: st.warmup_s?,
            from_s: from,
            to_s: from + len,
            tps: st.tps?.mean,
        })
    });
    let svg = charts::tps_over_time(
        "tps over time",
        &seconds,
        &spans,
        steady,
        r.summary.elapsed_s,
        HALF,
    )?;
    figure(o, "tps-over-time", &svg, &tps_caption(r), false);
    Ok(())
}

/// The tps chart's caption: each checkpoint's span, then the warm-up and
/// the steady state's tps, or why there is none.
fn tps_caption(r: &LoadedResult) -> String {
    let caption = match r.checkpoints.len() {
        0 => "No checkpoint ran".to_string(),
        n => format!(
            "{n} checkpoint(s), shaded from start to end: {}",
            r.checkpoints
                .iter()
                .map(|c| match c.end_s {
                    Some(e) => format!("{} {:.1}–{e:.1} s", c.trigger, c.start_s),
                    None => format!("{} from {:.1} s, running at the end", c.trigger, c.start_s),
                })
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    match &r.steady_state {
        Some(st) => match (st.tps, st.start_s, st.length_s) {
            (Some(t), Some(a), Some(len)) => format!(
                "{caption}. Warm-up (grey) {:.0} s, to {}; steady state (purple) {:.0} tps \
                 ±{:.1}% from {a:.0} to {:.0} s{}.",
                st.warmup_s.unwrap_or(0.0),
                st.warmup_phrase(),
                t.mean,
                if t.mean > 0.0 {
                    t.ci95 / t.mean * 100.0
                } else {
                    0.0
                },
                a + len,
                match &st.stationarity {
                    Some(t) if !t.passed => " (not shown stationary: the rate still moves)",
                    _ => "",
                }
            ),
            _ => format!(
                "{caption}. No steady state: {}.",
                st.why_not.as_deref().unwrap_or("none")
            ),
        },
        None => format!("{caption}."),
    }
}

fn sweep_section(o: &mut String, path: &std::path::Path, s: &SweepDoc) -> Result<()> {
    sweep_heading(o, path, s);
    // Series in table order.
    let mut names: Vec<&str> = Vec::new();
    for r in &s.table {
        if !names.contains(&r.series.as_str()) {
            names.push(&r.series);
        }
    }
    let knee_of = |name: &str| {
        s.knees
            .iter()
            .find(|k| k.series == name)
            .and_then(|k| k.knee.as_ref().map(|k| k.clients))
    };
    let series = |f: fn(&super::sweep::SweepRow) -> f64| -> Vec<ClientSeries> {
        names
            .iter()
            .map(|name| ClientSeries {
                label: name.to_string(),
                points: s
                    .table
                    .iter()
                    .filter(|r| r.series == *name)
                    .map(|r| (r.clients, f(r)))
                    .collect(),
                knee: knee_of(name),
            })
            .collect()
    };
    o.push_str("<div class=\"charts\">\n");
    let svg = charts::against_clients(
        "tps against clients",
        "tps",
        &series(|r| r.tps),
        false,
        HALF,
    )?;
    figure(o, "sweep-tps", &svg, "Knees circled.", false);
    let svg = charts::against_clients(
        "p99 latency against clients",
        "p99 latency, ms (log scale)",
        &series(|r| r.latency_p99_ms),
        true,
        HALF,
    )?;
    figure(o, "sweep-p99", &svg, "", false);
    o.push_str("</div>\n");
    let _ = writeln!(o, "<p class=\"note\">Knee: {}.</p><ul>", esc(&s.knee_rule));
    for k in &s.knees {
        let _ = writeln!(o, "<li><b>{}</b>: {}</li>", esc(&k.series), esc(&k.note));
    }
    o.push_str("</ul>\n");
    sweep_table(o, s, &knee_of);
    sweep_breakdowns(o, s, &names)?;
    o.push_str("</section>\n");
    Ok(())
}

/// The sweep's heading: its file, how many runs of which mode, the seed
/// and the settings every point shares.
fn sweep_heading(o: &mut String, path: &std::path::Path, s: &SweepDoc) {
    let _ = writeln!(
        o,
        "<section class=\"sweep\">\n<h2>Sweep: {}</h2>\n<p class=\"meta\">{} runs in {} mode, seed {}{}{}</p>",
        esc(&path.display().to_string()),
        s.table.len(),
        match s.mode {
            super::sweep::SweepMode::Model => "model",
            super::sweep::SweepMode::Run => "run",
        },
        s.seed,
        if s.grid.fixed_settings.is_empty() {
            String::new()
        } else {
            format!(", {}", esc(&s.grid.fixed_settings.join(" ")))
        },
        if s.partial {
            " (partial: interrupted)"
        } else {
            ""
        }
    );
}

/// Each series' breakdown against clients, the first
/// `MAX_SERIES_BREAKDOWNS` of them.
fn sweep_breakdowns(o: &mut String, s: &SweepDoc, names: &[&str]) -> Result<()> {
    for name in names.iter().take(MAX_SERIES_BREAKDOWNS) {
        let bars: Vec<StackedBar> = s
            .table
            .iter()
            .filter(|r| r.series == *name)
            .map(|r| StackedBar {
                label: match r.clients {
                    1 => "1 client".to_string(),
                    n => format!("{n} clients"),
                },
                segments: crate::core::breakdown::Bucket::ALL
                    .iter()
                    .map(|b| {
                        let n = b.name();
                        (n.to_string(), r.breakdown_ms.get(n).copied().unwrap_or(0.0))
                    })
                    .collect(),
            })
            .collect();
        let svg = charts::breakdown_bars(
            &format!("Breakdown against clients: {name}"),
            &bars,
            FULL_WIDTH,
        )?;
        figure(o, "sweep-breakdown", &svg, "", true);
    }
    if names.len() > MAX_SERIES_BREAKDOWNS {
        let _ = writeln!(
            o,
            "<p class=\"note\">Breakdowns of the other {} series are left out; their figures are in the table.</p>",
            names.len() - MAX_SERIES_BREAKDOWNS
        );
    }
    Ok(())
}

/// A sweep's table, a row a point, its knees marked.
fn sweep_table(o: &mut String, s: &SweepDoc, knee_of: &dyn Fn(&str) -> Option<u32>) {
    o.push_str("<div class=\"scroll\"><table>\n<tr>");
    let has_device = s.table.iter().any(|r| r.device.is_some());
    if has_device {
        o.push_str("<th class=\"l\">device</th>");
    }
    for g in &s.grid.settings {
        let _ = write!(o, "<th>{}</th>", esc(&g.name));
    }
    o.push_str(
        "<th>clients</th><th>tps</th><th>tps per doubling</th><th>avg ms</th><th>p50 ms</th>\
         <th>p99 ms</th><th>commits per WAL flush</th><th>cpu ms</th><th>page_read ms</th>\
         <th>lock_wait ms</th><th>wal_fsync ms</th><th>cpu use</th></tr>\n",
    );
    for r in &s.table {
        let knee = knee_of(&r.series) == Some(r.clients);
        let _ = write!(o, "<tr{}>", if knee { " class=\"knee\"" } else { "" });
        if has_device {
            let _ = write!(
                o,
                "<td class=\"l\">{}</td>",
                esc(r.device.as_deref().unwrap_or(""))
            );
        }
        for g in &s.grid.settings {
            let _ = write!(
                o,
                "<td>{}</td>",
                esc(r.settings.get(&g.name).map_or("", String::as_str))
            );
        }
        let bucket = |b: &str| r.breakdown_ms.get(b).copied().unwrap_or(0.0);
        let _ = writeln!(
            o,
            "<td>{}{}</td><td>{:.0}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.0}%</td></tr>",
            r.clients,
            if knee { " (knee)" } else { "" },
            r.tps,
            r.tps_growth_per_doubling
                .filter(|g| g.is_finite())
                .map_or(String::new(), |g| format!("{:+.0}%", g * 100.0)),
            ms(r.latency_avg_ms),
            ms(r.latency_p50_ms),
            ms(r.latency_p99_ms),
            r.commits_per_flush,
            ms(bucket("cpu") + bucket("cpu_queue")),
            ms(bucket("page_read")),
            ms(bucket("lock_wait")),
            ms(bucket("wal_fsync")),
            r.cpu_utilisation * 100.0,
        );
    }
    o.push_str("</table></div>\n");
}
