//! The charts of `pgiosim report`, drawn with plotters' SVG backend into
//! strings that the HTML page inlines. Each function takes plain numbers, so
//! the page decides what to chart and this module only how.

use anyhow::{Result, anyhow};
use plotters::coord::Shift;
use plotters::coord::ranged1d::{SegmentValue, SegmentedCoord, ValueFormatter};
use plotters::coord::types::{RangedCoordf64, RangedCoordu32};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Colours of the breakdown buckets (Tableau 10), in `Bucket::ALL` order;
/// the page's legend uses the same.
pub const BUCKET_COLOURS: &[(&str, (u8, u8, u8))] = &[
    ("cpu", (0x4e, 0x79, 0xa7)),
    ("cpu_queue", (0xa0, 0xcb, 0xe8)),
    ("page_read", (0xf2, 0x8e, 0x2b)),
    ("buffer_wait", (0xe1, 0x57, 0x59)),
    ("lock_wait", (0xb0, 0x7a, 0xa1)),
    ("wal_fsync", (0x59, 0xa1, 0x4f)),
    ("sync_rep", (0x76, 0xb7, 0xb2)),
    ("other", (0xba, 0xb0, 0xac)),
    ("client", (0xed, 0xc9, 0x48)),
];

/// Colours of series in line charts.
const SERIES_COLOURS: &[(u8, u8, u8)] = &[
    (0x4e, 0x79, 0xa7),
    (0xf2, 0x8e, 0x2b),
    (0x59, 0xa1, 0x4f),
    (0xe1, 0x57, 0x59),
    (0xb0, 0x7a, 0xa1),
    (0x76, 0xb7, 0xb2),
    (0xed, 0xc9, 0x48),
    (0x9c, 0x75, 0x5f),
    (0xff, 0x9d, 0xa7),
    (0xba, 0xb0, 0xac),
];

/// The colour of a breakdown bucket (grey for an unknown one).
pub fn bucket_colour(bucket: &str) -> RGBColor {
    let (r, g, b) = BUCKET_COLOURS
        .iter()
        .find(|(n, _)| *n == bucket)
        .map_or((0x79, 0x70, 0x6e), |(_, c)| *c);
    RGBColor(r, g, b)
}

/// The colour of the i-th series.
pub fn series_colour(i: usize) -> RGBColor {
    let (r, g, b) = SERIES_COLOURS[i % SERIES_COLOURS.len()];
    RGBColor(r, g, b)
}

const FONT: &str = "sans-serif";
const LIGHT_LINE: RGBColor = RGBColor(0xf2, 0xf2, 0xf2);
const CHECKPOINT_START: RGBColor = RGBColor(0xc0, 0x39, 0x2b);
const CHECKPOINT_END: RGBColor = RGBColor(0x27, 0x6f, 0x3a);

fn err<E: std::fmt::Debug>(e: E) -> anyhow::Error {
    anyhow!("drawing a chart: {e:?}")
}

/// A number for an axis label, without trailing zeros.
pub fn axis_number(v: f64) -> String {
    let a = v.abs();
    let s = if a == 0.0 {
        "0".to_string()
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else if a >= 1.0 {
        format!("{v:.1}")
    } else if a >= 0.01 {
        format!("{v:.3}")
    } else {
        format!("{v:.1e}")
    };
    if s.contains('.') && !s.contains('e') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// One horizontal bar of a stacked breakdown: a label and ms per bucket.
#[derive(Debug, Clone)]
pub struct StackedBar {
    pub label: String,
    pub segments: Vec<(String, f64)>,
}

/// Horizontal stacked bars of the breakdown, ms per transaction, first bar
/// on top. The legend is the page's (`BUCKET_COLOURS`).
pub fn breakdown_bars(title: &str, bars: &[StackedBar], width: u32) -> Result<String> {
    let n = bars.len().max(1);
    let height = 70 + 34 * n as u32 + 40;
    let total_max = bars
        .iter()
        .map(|b| b.segments.iter().map(|s| s.1).sum::<f64>())
        .fold(0.0, f64::max);
    let x_max = if total_max > 0.0 {
        total_max * 1.1
    } else {
        1.0
    };
    let label_width = bars
        .iter()
        .map(|b| b.label.chars().count())
        .max()
        .unwrap_or(4)
        .clamp(4, 40) as u32
        * 7
        + 10;
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        // Bands on a plain axis, bar i in band n-1-i so the first is on
        // top; a segmented axis has no room for a single band.
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 17))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(label_width)
            .build_cartesian_2d(0f64..x_max, 0f64..n as f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_label_formatter(&|v| axis_number(*v))
            .x_desc("ms per transaction")
            .label_style((FONT, 13))
            .max_light_lines(4)
            .light_line_style(LIGHT_LINE)
            .draw()
            .map_err(err)?;
        for (i, bar) in bars.iter().enumerate() {
            draw_bar(&root, &mut chart, bar, (n - 1 - i) as f64)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// A chart on two plain f64 axes.
type PlainChart<'a, 'b> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<RangedCoordf64, RangedCoordf64>>;

/// One bar of the breakdown in `band`: its label left of the axis, its
/// segments end to end, its total at its end.
fn draw_bar(
    root: &DrawingArea<SVGBackend<'_>, Shift>,
    chart: &mut PlainChart<'_, '_>,
    bar: &StackedBar,
    band: f64,
) -> Result<()> {
    let bar_label =
        TextStyle::from((FONT, 13).into_font()).pos(Pos::new(HPos::Right, VPos::Center));
    let (px, py) = chart.backend_coord(&(0.0, band + 0.5));
    root.draw(&Text::new(bar.label.clone(), (px - 6, py), bar_label))
        .map_err(err)?;
    let mut x = 0.0;
    let rects: Vec<Rectangle<(f64, f64)>> = bar
        .segments
        .iter()
        .filter(|s| s.1 > 0.0)
        .map(|(bucket, ms)| {
            let r = Rectangle::new(
                [(x, band + 0.85), (x + ms, band + 0.15)],
                bucket_colour(bucket).filled(),
            );
            x += ms;
            r
        })
        .collect();
    chart.draw_series(rects).map_err(err)?;
    let label = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    chart
        .draw_series(std::iter::once(Text::new(
            format!(" {} ms", axis_number(x)),
            (x, band + 0.5),
            label,
        )))
        .map_err(err)?;
    Ok(())
}

/// A checkpoint to mark: its start and end in seconds (no end: still running).
#[derive(Debug, Clone, Copy)]
pub struct CheckpointSpan {
    pub start_s: f64,
    pub end_s: Option<f64>,
}

/// The steady state on the tps chart: the warm-up it cut (shaded) and its
/// tps over the window it was measured on (a level line).
#[derive(Debug, Clone, Copy)]
pub struct SteadySpan {
    pub warmup_s: f64,
    pub from_s: f64,
    pub to_s: f64,
    pub tps: f64,
}

/// The warm-up's shade and the steady state's line.
const WARMUP: RGBColor = RGBColor(150, 150, 150);
const STEADY: RGBColor = RGBColor(120, 60, 170);

/// tps per second over the run, with checkpoints shaded from start to end
/// and their starts and ends marked.
pub fn tps_over_time(
    title: &str,
    seconds: &[(f64, f64)],
    checkpoints: &[CheckpointSpan],
    steady: Option<SteadySpan>,
    elapsed_s: f64,
    size: (u32, u32),
) -> Result<String> {
    let x_max = elapsed_s.max(seconds.last().map_or(1.0, |s| s.0)).max(1.0);
    let y_max = seconds.iter().map(|s| s.1).fold(0.0, f64::max).max(1.0) * 1.15;
    let ends: Vec<f64> = checkpoints.iter().filter_map(|c| c.end_s).collect();
    let warmup = steady.filter(|s| s.warmup_s > 0.0);
    let legend = tps_legend(!checkpoints.is_empty(), !ends.is_empty(), steady, warmup);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = legend_under(&root, &legend, size)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 16))
            .margin(12)
            .x_label_area_size(38)
            .y_label_area_size(58)
            .build_cartesian_2d(0f64..x_max, 0f64..y_max)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("seconds")
            .y_desc("tps")
            .x_label_formatter(&|v| axis_number(*v))
            .y_label_formatter(&|v| axis_number(*v))
            .label_style((FONT, 12))
            .max_light_lines(4)
            .light_line_style(LIGHT_LINE)
            .draw()
            .map_err(err)?;
        if let Some(w) = warmup {
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(0.0, 0.0), (w.warmup_s.min(x_max), y_max)],
                    WARMUP.mix(0.25).filled(),
                )))
                .map_err(err)?;
        }
        let shade = CHECKPOINT_START.mix(0.08).filled();
        chart
            .draw_series(checkpoints.iter().map(|c| {
                Rectangle::new([(c.start_s, 0.0), (c.end_s.unwrap_or(x_max), y_max)], shade)
            }))
            .map_err(err)?;
        chart
            .draw_series(LineSeries::new(
                seconds.iter().copied(),
                series_colour(0).stroke_width(2),
            ))
            .map_err(err)?;
        mark_checkpoints(&mut chart, checkpoints, &ends, y_max)?;
        if let Some(st) = steady {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(st.from_s, st.tps), (st.to_s.min(x_max), st.tps)],
                    STEADY.stroke_width(2),
                )))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// The tps chart's legend: only the marks drawn, so no "checkpoint end"
/// when none ended, and none at all without a mark (the line is the tps).
fn tps_legend(
    checkpoints: bool,
    ends: bool,
    steady: Option<SteadySpan>,
    warmup: Option<SteadySpan>,
) -> Vec<(String, RGBColor)> {
    let mut legend: Vec<(String, RGBColor)> = Vec::new();
    if checkpoints || steady.is_some() {
        legend.push(("tps".into(), series_colour(0)));
    }
    if warmup.is_some() {
        legend.push(("warm-up".into(), WARMUP));
    }
    if steady.is_some() {
        legend.push(("steady-state tps".into(), STEADY));
    }
    if checkpoints {
        legend.push(("checkpoint start".into(), CHECKPOINT_START));
        if ends {
            legend.push(("checkpoint end".into(), CHECKPOINT_END));
        }
    }
    legend
}

/// The checkpoints' starts and ends over the tps line.
fn mark_checkpoints(
    chart: &mut PlainChart<'_, '_>,
    checkpoints: &[CheckpointSpan],
    ends: &[f64],
    y_max: f64,
) -> Result<()> {
    chart
        .draw_series(checkpoints.iter().map(|c| {
            PathElement::new(
                vec![(c.start_s, 0.0), (c.start_s, y_max)],
                CHECKPOINT_START.stroke_width(2),
            )
        }))
        .map_err(err)?;
    chart
        .draw_series(
            ends.iter().map(|&e| {
                PathElement::new(vec![(e, 0.0), (e, y_max)], CHECKPOINT_END.stroke_width(2))
            }),
        )
        .map_err(err)?;
    Ok(())
}

/// Highest number of nines the CDF's percentile axis shows (99.999%).
const MAX_NINES: f64 = 5.0;

/// A percentile as "nines": 90% → 1, 99% → 2, 99.9% → 3.
fn nines(percentile: f64) -> f64 {
    let rest = 1.0 - percentile / 100.0;
    if rest <= 10f64.powf(-MAX_NINES) {
        MAX_NINES
    } else {
        -rest.log10()
    }
}

/// The percentile at a number of nines: 0 → "0%", 2 → "99%", 3 → "99.9%".
fn nines_label(y: f64) -> String {
    let k = y.round();
    if y.abs() < 1e-6 {
        "0%".into()
    } else if (y - k).abs() < 1e-6 && k >= 1.0 {
        let k = k as usize;
        let tail = "9".repeat(k.saturating_sub(2));
        if k == 1 {
            "90%".into()
        } else if tail.is_empty() {
            "99%".into()
        } else {
            format!("99.{tail}%")
        }
    } else {
        format!("{:.2}%", 100.0 * (1.0 - 10f64.powf(-y)))
    }
}

/// The widest range a log axis spans, in its units: plotters' log-scale
/// key points loop forever near f64's limits, and no figure pgiosim
/// draws (µs to years) needs more.
const LOG_AXIS_LIMITS: (f64, f64) = (1e-9, 1e15);

/// A log axis's range from the data's, inside [`LOG_AXIS_LIMITS`]; values
/// beyond it are drawn at its edge.
fn log_axis(lo: f64, hi: f64) -> (f64, f64) {
    let (min, max) = LOG_AXIS_LIMITS;
    let hi = if hi.is_finite() {
        hi.clamp(min * 10.0, max)
    } else {
        max
    };
    let lo = if lo.is_finite() {
        lo.clamp(min, hi / 10.0)
    } else {
        min
    };
    (lo, hi)
}

/// Least room between the centres of two neighbouring tick labels of a log
/// axis, in pixels: `per_char` for each character of the two labels
/// (half of each label's width, across the x axis) plus `space`.
#[derive(Debug, Clone, Copy)]
struct TickRoom {
    per_char: f64,
    space: f64,
}

/// Across the x axis: the labels' 12-point style is drawn 9.7 px high in
/// the SVG, about 5.4 px a digit.
const X_TICK_ROOM: TickRoom = TickRoom {
    per_char: 2.8,
    space: 5.0,
};
/// Up the y axis, a label's height whatever its length.
const Y_TICK_ROOM: TickRoom = TickRoom {
    per_char: 0.0,
    space: 18.0,
};

impl TickRoom {
    fn between(self, a: f64, b: f64) -> f64 {
        let chars = axis_number(a).len() + axis_number(b).len();
        self.per_char * chars as f64 + self.space
    }
}

/// The multiples of a power of ten a log axis may label, densest first.
const LOG_STEPS: &[&[f64]] = &[
    &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0],
    &[1.0, 2.0, 3.0, 5.0],
    &[1.0, 2.0, 5.0],
    &[1.0, 3.0],
    &[1.0],
];

/// Each multiple `m × 10^e` of `steps` within `lo..=hi`, ascending.
fn log_multiples(lo: f64, hi: f64, steps: &[f64]) -> Vec<f64> {
    let first = lo.log10().floor() as i32 - 1;
    let last = hi.log10().ceil() as i32;
    let mut out = Vec::new();
    for e in first..=last {
        let decade = 10f64.powi(e);
        for m in steps {
            let v = m * decade;
            if v >= lo * (1.0 - 1e-9) && v <= hi * (1.0 + 1e-9) {
                out.push(v);
            }
        }
    }
    out
}

/// The labelled ticks of a log axis over `lo..hi` drawn `px` pixels long:
/// the densest of 1-9, 1-2-3-5, 1-2-5, 1-3 and 1 per decade whose labels
/// keep `room` between them, so a range inside a decade or two is labelled
/// within it (2, 3, 4, 5, 6 ms), a wider one in 1-2-5 steps, and a very wide
/// one by every n-th decade. plotters' own log ticks label only the powers
/// of ten, leaving a 2-6 ms axis bare.
fn log_ticks(lo: f64, hi: f64, px: u32, room: TickRoom) -> Vec<f64> {
    let decades = (hi / lo).log10();
    if !(decades.is_finite() && decades > 0.0) {
        return vec![lo];
    }
    let px_per_decade = px.max(1) as f64 / decades;
    let dense = log_multiples(lo, hi, LOG_STEPS[0]);
    if dense.len() < 3 {
        // Narrower than 1-9 can label (2.1 to 2.9): evenly spaced round
        // numbers, which a log axis this narrow draws nearly evenly.
        return linear_ticks(lo, hi, 4);
    }
    for steps in LOG_STEPS {
        let ticks = log_multiples(lo, hi, steps);
        let apart = ticks
            .windows(2)
            .all(|w| (w[1] / w[0]).log10() * px_per_decade >= room.between(w[0], w[1]));
        if ticks.len() >= 2 && apart {
            return ticks;
        }
    }
    // Powers of ten alone crowd: every n-th, n decades being room enough
    // for the longest label (1e-9's "1.0e-9").
    let widest = room.between(1e-9, 1e-9);
    let every = (widest / px_per_decade).ceil().max(1.0) as i32;
    let (first, last) = (lo.log10().ceil() as i32, hi.log10().floor() as i32);
    (first..=last)
        .filter(|e| e.rem_euclid(every) == 0)
        .map(|e| 10f64.powi(e))
        .collect()
}

/// About `n` round numbers (1, 2 or 5 × 10^k apart) inside `lo..=hi`.
fn linear_ticks(lo: f64, hi: f64, n: usize) -> Vec<f64> {
    let raw = (hi - lo) / n as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi * (1.0 + 1e-9) && out.len() <= 2 * n {
        out.push(v);
        v += step;
    }
    out
}

/// The light grid lines of a log axis: every 1-9 multiple, when there are
/// few enough to tell apart (none over many decades).
fn log_light_points(lo: f64, hi: f64) -> Vec<f64> {
    let all = log_multiples(lo, hi, LOG_STEPS[0]);
    if all.len() <= 60 { all } else { Vec::new() }
}

/// Pixels of one legend entry: its line, the gap, its text, the space after.
fn legend_entry_px(label: &str) -> u32 {
    18 + 6 + 7 * label.chars().count() as u32 + 20
}

/// The legend's rows at `width` pixels: entries fill a row left to right.
fn legend_layout(entries: &[(String, RGBColor)], width: u32) -> Vec<Vec<usize>> {
    let room = width.saturating_sub(2 * 12 + 64).max(100);
    let mut rows: Vec<Vec<usize>> = Vec::new();
    let mut used = room;
    for (i, (label, _)) in entries.iter().enumerate() {
        let w = legend_entry_px(label);
        if used + w > room {
            rows.push(Vec::new());
            used = 0;
        }
        rows.last_mut().expect("a row was pushed").push(i);
        used += w;
    }
    rows
}

const LEGEND_ROW_PX: u32 = 18;

fn legend_height(entries: &[(String, RGBColor)], width: u32) -> u32 {
    match legend_layout(entries, width).len() {
        0 => 0,
        n => n as u32 * LEGEND_ROW_PX + 6,
    }
}

/// Draws the legend in a strip along the bottom of `root`, under the x
/// axis's title, and returns the area above it for the chart: a legend
/// inside the plot covers the data or an axis wherever it is put.
fn legend_under<'a>(
    root: &DrawingArea<SVGBackend<'a>, Shift>,
    entries: &[(String, RGBColor)],
    size: (u32, u32),
) -> Result<DrawingArea<SVGBackend<'a>, Shift>> {
    let h = legend_height(entries, size.0);
    if h == 0 {
        return Ok(root.clone());
    }
    let (chart, strip) = root.split_vertically(size.1.saturating_sub(h));
    let text = TextStyle::from((FONT, 12).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for (r, row) in legend_layout(entries, size.0).iter().enumerate() {
        let y = (r as u32 * LEGEND_ROW_PX + LEGEND_ROW_PX / 2) as i32;
        let mut x: i32 = 12 + 64;
        for &i in row {
            let (label, colour) = &entries[i];
            strip
                .draw(&PathElement::new(
                    vec![(x, y), (x + 18, y)],
                    colour.stroke_width(3),
                ))
                .map_err(err)?;
            strip
                .draw(&Text::new(label.clone(), (x + 24, y), text.clone()))
                .map_err(err)?;
            x += legend_entry_px(label) as i32;
        }
    }
    Ok(chart)
}

/// A latency distribution to draw: a label and (percentile, ms) points.
#[derive(Debug, Clone)]
pub struct Cdf {
    pub label: String,
    pub points: Vec<(f64, f64)>,
}

/// The latency CDF: latency on a log axis, the share of transactions at or
/// below it on a "nines" axis (0%, 90%, 99%, 99.9%, ...) so the tail shows.
pub fn latency_cdf(title: &str, cdfs: &[Cdf], size: (u32, u32)) -> Result<String> {
    let all = cdfs.iter().flat_map(|c| c.points.iter());
    let (lo, hi) = all
        .filter(|p| p.1 > 0.0)
        .fold((f64::MAX, 0f64), |(lo, hi), p| (lo.min(p.1), hi.max(p.1)));
    let (lo, hi) = if hi > 0.0 {
        log_axis(lo / 1.3, hi * 1.3)
    } else {
        (0.01, 1.0)
    };
    let legend: Vec<(String, RGBColor)> = cdfs
        .iter()
        .enumerate()
        .map(|(i, c)| (c.label.clone(), series_colour(i)))
        .collect();
    // The x axis's length in pixels: the width less the margins and the
    // y labels' area.
    let x_px = size.0.saturating_sub(2 * 12 + 64);
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = legend_under(&root, &legend, size)?;
        let x = (lo..hi)
            .log_scale()
            .with_key_points(log_ticks(lo, hi, x_px, X_TICK_ROOM))
            .with_light_points(log_light_points(lo, hi));
        let mut chart = ChartBuilder::on(&root)
            .caption(title, (FONT, 16))
            .margin(12)
            .x_label_area_size(38)
            .y_label_area_size(64)
            .build_cartesian_2d(x, 0f64..MAX_NINES + 0.05)
            .map_err(err)?;
        chart
            .configure_mesh()
            .x_desc("latency, ms (log scale)")
            .y_desc("transactions at or below")
            .y_labels(6)
            .x_label_formatter(&|v| axis_number(*v))
            .y_label_formatter(&|y| nines_label(*y))
            .label_style((FONT, 12))
            .max_light_lines(4)
            .light_line_style(LIGHT_LINE)
            .draw()
            .map_err(err)?;
        for (i, c) in cdfs.iter().enumerate() {
            let colour = series_colour(i);
            let pts: Vec<(f64, f64)> = c
                .points
                .iter()
                .filter(|p| p.1 > 0.0)
                .map(|&(p, ms)| (ms, nines(p)))
                .collect();
            chart
                .draw_series(LineSeries::new(pts, colour.stroke_width(2)))
                .map_err(err)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// One line of a sweep chart: a series and its (clients, value) points, and
/// the knee's client count if it has one.
#[derive(Debug, Clone)]
pub struct ClientSeries {
    pub label: String,
    pub points: Vec<(u32, f64)>,
    pub knee: Option<u32>,
}

/// A figure against clients, one line per series, knees circled. Clients go
/// on a log2 axis with a tick at every count swept.
pub fn against_clients(
    title: &str,
    y_desc: &str,
    series: &[ClientSeries],
    log_y: bool,
    size: (u32, u32),
) -> Result<String> {
    let mut clients: Vec<u32> = series
        .iter()
        .flat_map(|s| s.points.iter().map(|p| p.0))
        .collect();
    clients.sort_unstable();
    clients.dedup();
    // Each count swept is a category, equally spaced: a log2 axis for the
    // usual doubling lists, with a tick at every count.
    let k = clients.len().max(1) as u32;
    let values = series.iter().flat_map(|s| s.points.iter().map(|p| p.1));
    let (v_lo, v_hi) = values
        .filter(|v| v.is_finite() && (!log_y || *v > 0.0))
        .fold((f64::MAX, 0f64), |(lo, hi), v| (lo.min(v), hi.max(v)));
    let legend: Vec<(String, RGBColor)> = series
        .iter()
        .enumerate()
        .map(|(i, s)| (s.label.clone(), series_colour(i)))
        .collect();
    // The y axis's length in pixels: the height less the caption, margins,
    // x labels' area and the legend under the chart.
    let y_px = size
        .1
        .saturating_sub(legend_height(&legend, size.0) + 2 * 12 + 30 + 38);
    let plot = ClientsPlot {
        clients: &clients,
        series,
        y_desc,
        log_y,
    };
    let mut svg = String::new();
    {
        let root = SVGBackend::with_string(&mut svg, size).into_drawing_area();
        root.fill(&WHITE).map_err(err)?;
        let root = legend_under(&root, &legend, size)?;
        let builder_x = (0..k - 1).into_segmented();
        let mut cb = ChartBuilder::on(&root);
        cb.caption(title, (FONT, 16))
            .margin(12)
            .x_label_area_size(38)
            .y_label_area_size(64);
        if log_y {
            let (lo, hi) = if v_hi > 0.0 {
                log_axis(v_lo / 1.5, v_hi * 1.5)
            } else {
                (0.1, 1.0)
            };
            let y = (lo..hi)
                .log_scale()
                .with_key_points(log_ticks(lo, hi, y_px, Y_TICK_ROOM))
                .with_light_points(log_light_points(lo, hi));
            plot.draw(cb.build_cartesian_2d(builder_x, y).map_err(err)?)?;
        } else {
            let hi = if v_hi > 0.0 { v_hi * 1.12 } else { 1.0 };
            plot.draw(cb.build_cartesian_2d(builder_x, 0f64..hi).map_err(err)?)?;
        }
        root.present().map_err(err)?;
    }
    Ok(svg)
}

/// What a chart against clients draws on its axes, whichever its y axis.
struct ClientsPlot<'a> {
    /// The counts swept, in order: the x axis's categories.
    clients: &'a [u32],
    series: &'a [ClientSeries],
    y_desc: &'a str,
    log_y: bool,
}

/// A chart against clients with y axis `Y` (linear or log).
type ClientsChart<'a, 'b, Y> =
    ChartContext<'a, SVGBackend<'b>, Cartesian2d<SegmentedCoord<RangedCoordu32>, Y>>;

impl ClientsPlot<'_> {
    /// The category of `c` clients on the x axis.
    fn x_of(&self, c: u32) -> SegmentValue<u32> {
        SegmentValue::CenterOf(self.clients.iter().position(|&x| x == c).unwrap_or(0) as u32)
    }

    /// The mesh with a tick at every count swept, then each series.
    fn draw<Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
        &self,
        mut chart: ClientsChart<'_, '_, Y>,
    ) -> Result<()> {
        let x_fmt = |x: &SegmentValue<u32>| match x {
            SegmentValue::CenterOf(i) => self
                .clients
                .get(*i as usize)
                .map_or(String::new(), u32::to_string),
            _ => String::new(),
        };
        chart
            .configure_mesh()
            .x_desc("clients")
            .x_labels(self.clients.len().max(1))
            .disable_x_mesh()
            .y_desc(self.y_desc)
            .x_label_formatter(&x_fmt)
            .y_label_formatter(&|v| axis_number(*v))
            .label_style((FONT, 12))
            .max_light_lines(4)
            .light_line_style(LIGHT_LINE)
            .draw()
            .map_err(err)?;
        for (i, s) in self.series.iter().enumerate() {
            self.draw_series(&mut chart, s, series_colour(i))?;
        }
        Ok(())
    }

    /// One series: its line, its points, and its knee circled and named.
    fn draw_series<Y: Ranged<ValueType = f64> + ValueFormatter<f64>>(
        &self,
        chart: &mut ClientsChart<'_, '_, Y>,
        s: &ClientSeries,
        colour: RGBColor,
    ) -> Result<()> {
        let pts: Vec<(SegmentValue<u32>, f64)> = s
            .points
            .iter()
            .filter(|p| p.1.is_finite() && (!self.log_y || p.1 > 0.0))
            .map(|&(c, v)| (self.x_of(c), v))
            .collect();
        chart
            .draw_series(LineSeries::new(pts.clone(), colour.stroke_width(2)))
            .map_err(err)?;
        chart
            .draw_series(
                pts.iter()
                    .map(|p| Circle::new(p.clone(), 3, colour.filled())),
            )
            .map_err(err)?;
        if let Some(k) = s.knee
            && let Some(&(_, v)) = s.points.iter().find(|p| p.0 == k)
        {
            let at = (self.x_of(k), v);
            chart
                .draw_series([Circle::new(at.clone(), 8, colour.stroke_width(2))])
                .map_err(err)?;
            // The knee marker's label sits just above the point.
            let style = TextStyle::from((FONT, 12).into_font())
                .color(&colour)
                .pos(Pos::new(HPos::Left, VPos::Bottom));
            chart
                .draw_series([EmptyElement::at(at) + Text::new("knee".to_string(), (8, -8), style)])
                .map_err(err)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nines_axis() {
        assert_eq!(nines(0.0), 0.0);
        assert!((nines(90.0) - 1.0).abs() < 1e-9);
        assert!((nines(99.9) - 3.0).abs() < 1e-9);
        assert_eq!(nines(100.0), MAX_NINES);
        assert_eq!(nines_label(0.0), "0%");
        assert_eq!(nines_label(1.0), "90%");
        assert_eq!(nines_label(2.0), "99%");
        assert_eq!(nines_label(4.0), "99.99%");
    }

    #[test]
    fn breakdown_bars_are_svg_with_each_segment_drawn_and_named() {
        let bars = [StackedBar {
            label: "A nvme".into(),
            segments: vec![("cpu".into(), 0.4), ("wal_fsync".into(), 0.2)],
        }];
        let svg = breakdown_bars("t", &bars, 600).unwrap();
        assert!(svg.starts_with("<svg"), "{}", &svg[..50]);
        // The wal_fsync segment is filled with its colour.
        assert!(svg.contains("#59A14F") || svg.contains("#59a14f"), "{svg}");
        // One bar or two, each segment is drawn with a height, and named.
        for n in [1, 2] {
            let many: Vec<StackedBar> = (0..n).map(|_| bars[0].clone()).collect();
            let svg = breakdown_bars("t", &many, 600).unwrap();
            let heights: Vec<f64> = svg
                .split("<rect")
                .filter(|r| r.contains("#4E79A7") || r.contains("#59A14F"))
                .map(|r| {
                    let h = r.split("height=\"").nth(1).unwrap();
                    h[..h.find('"').unwrap()].parse().unwrap()
                })
                .collect();
            assert_eq!(heights.len(), 2 * n, "{svg}");
            assert!(heights.iter().all(|&h| h >= 10.0), "{heights:?}");
            assert_eq!(svg.matches("A nvme").count(), n, "{svg}");
        }
    }

    /// The tps chart of two seconds over a run of 6 s.
    fn tps_svg(checkpoints: &[CheckpointSpan], steady: Option<SteadySpan>) -> String {
        let seconds = [(1.0, 10.0), (2.0, 12.0)];
        tps_over_time("t", &seconds, checkpoints, steady, 6.0, (500, 300)).unwrap()
    }

    #[test]
    fn the_tps_chart_names_only_the_marks_it_draws() {
        let cps = [CheckpointSpan {
            start_s: 2.0,
            end_s: Some(5.0),
        }];
        let svg = tps_svg(&cps, None);
        assert!(svg.contains("checkpoint start") && svg.contains("checkpoint end"));
        assert!(!svg.contains("warm-up") && !svg.contains("steady-state tps"));
        // The steady state: the warm-up shaded and named, the level drawn.
        let st = SteadySpan {
            warmup_s: 2.0,
            from_s: 2.0,
            to_s: 6.0,
            tps: 11.0,
        };
        let svg = tps_svg(&[], Some(st));
        assert!(svg.contains("warm-up") && svg.contains("steady-state tps"));
        assert!(!svg.contains("checkpoint start"));
        // A checkpoint still running at the end: no "checkpoint end" to name.
        let running = [CheckpointSpan {
            start_s: 2.0,
            end_s: None,
        }];
        let svg = tps_svg(&running, None);
        assert!(svg.contains("checkpoint start") && !svg.contains("checkpoint end"));
    }

    #[test]
    fn the_cdf_shows_the_nines_and_a_knee_is_named() {
        let cdf = Cdf {
            label: "A: nvme, 32 clients".into(),
            points: vec![(0.0, 0.5), (50.0, 1.0), (99.0, 3.0), (100.0, 9.0)],
        };
        let svg = latency_cdf("t", &[cdf], (500, 300)).unwrap();
        assert!(svg.contains("99.9%"), "{svg}");
        let s = ClientSeries {
            label: "nvme".into(),
            points: vec![(1, 100.0), (2, 190.0), (4, 200.0)],
            knee: Some(2),
        };
        let svg = against_clients("t", "tps", &[s], true, (500, 300)).unwrap();
        assert!(svg.contains("\nknee\n"), "{svg}");
    }

    #[test]
    fn a_latency_near_f64s_limit_is_drawn_at_the_axis_edge_not_looped_on() {
        let cdf = Cdf {
            label: "a".into(),
            points: vec![(50.0, 0.6), (99.0, 6.062071e307), (99.9, f64::INFINITY)],
        };
        assert!(latency_cdf("t", &[cdf], (500, 300)).is_ok());
        assert_eq!(log_axis(0.5, 7.9e307), (0.5, 1e15));
        assert_eq!(log_axis(0.0, 1.0), (1e-9, 1.0));
        // The clamp's extremes still get a handful of decade ticks.
        let ticks = log_ticks(1e-9, 1e15, 440, X_TICK_ROOM);
        assert!((2..=14).contains(&ticks.len()), "{ticks:?}");
    }

    #[test]
    fn log_ticks_label_within_a_decade_and_thin_out_over_many() {
        // 2-6 ms with the CDF's margins, on a half-width chart.
        let narrow = log_ticks(2.0 / 1.3, 6.0 * 1.3, 440, X_TICK_ROOM);
        let inside = narrow.iter().filter(|v| (2.0..=6.0).contains(*v)).count();
        assert!(inside >= 3, "{narrow:?}");
        // Two decades: 1-2-5 or denser, never the powers of ten alone.
        let wide = log_ticks(0.4, 40.0, 440, X_TICK_ROOM);
        assert!(wide.len() > 3 && wide.contains(&2.0), "{wide:?}");
        // Labels stay apart: no two closer than the gap.
        for (lo, hi) in [
            (2.0 / 1.3, 6.0 * 1.3),
            (0.4, 40.0),
            (0.41, 3.0),
            (0.02, 900.0),
        ] {
            let ticks = log_ticks(lo, hi, 440, X_TICK_ROOM);
            let px_per_decade = 440.0 / (hi / lo).log10();
            for w in ticks.windows(2) {
                let px = (w[1] / w[0]).log10() * px_per_decade;
                let room = X_TICK_ROOM.between(w[0], w[1]);
                assert!(px >= room - 1e-9, "{lo}..{hi}: {ticks:?}");
            }
        }
        // Inside one tenth of a decade: round numbers, evenly spaced.
        let tiny = log_ticks(2.1, 2.9, 440, X_TICK_ROOM);
        assert!(tiny.len() >= 3, "{tiny:?}");
        // Many decades: at most one label per decade, and few.
        let many = log_ticks(1e-3, 1e9, 200, Y_TICK_ROOM);
        assert!(many.len() <= 12 && many.len() >= 3, "{many:?}");
    }
}
