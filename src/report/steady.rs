//! The steady state in the result: the figures of `steady_state::analyse`
//! as JSON, and how the run came to stop.

use serde::{Deserialize, Serialize};

use crate::core::breakdown::Bucket;
use crate::steady_state::stationarity::CVM_CRITICAL_5PCT;
use crate::steady_state::{Estimate, Outcome, Stationarity, WarmupEnd};

/// A figure and its 95% confidence interval's half width.
#[derive(Debug, Clone, Copy, Serialize, Deserialize)]
pub struct Interval {
    pub mean: f64,
    /// Half width of the 95% interval, in the figure's units.
    pub ci95: f64,
}

impl From<Estimate> for Interval {
    fn from(e: Estimate) -> Self {
        Interval {
            mean: e.mean,
            ci95: e.half_width,
        }
    }
}

/// One bucket's mean µs per transaction in the steady state.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SteadyBucket {
    pub bucket: String,
    pub mean_us: f64,
    pub ci95_us: f64,
}

/// Heidelberger and Welch's stationarity test on the window's batch means.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StationarityFigures {
    /// The window passed: its figures are a steady state's. False: the
    /// rate still moves in it (or too few batches to tell), and the
    /// figures are where it had got to.
    pub passed: bool,
    /// The Cramér–von Mises statistic of the batch means' bridge (null
    /// with too few batches) and the critical value it is held to (5%).
    pub cvm: Option<f64>,
    pub critical: f64,
    /// The batches it was made on: `checkpoint_cycles` (whole ones), or
    /// the interval's (`time` or `vacuum_cycles`).
    pub batches: usize,
    pub batched_by: String,
}

impl StationarityFigures {
    fn new(s: &Stationarity, interval_batched_by: &str) -> Self {
        StationarityFigures {
            passed: s.passed,
            cvm: s.statistic,
            critical: CVM_CRITICAL_5PCT,
            batches: s.batches,
            batched_by: if s.by_checkpoint_cycles {
                "checkpoint_cycles"
            } else {
                interval_batched_by
            }
            .into(),
        }
    }

    /// In words: "stationary (Cramér–von Mises 0.19 ≤ 0.46 over 5 whole
    /// checkpoint cycles)".
    pub fn phrase(&self) -> String {
        let over = match self.batched_by.as_str() {
            "checkpoint_cycles" => format!("{} whole checkpoint cycles", self.batches),
            "vacuum_cycles" => format!("{} whole autovacuum cycles", self.batches),
            _ => format!("{} batch means", self.batches),
        };
        match self.cvm {
            None => format!("not tested: {over} are too few"),
            Some(c) if self.passed => {
                format!(
                    "yes (Cramér–von Mises {c:.2} ≤ {:.2} over {over})",
                    self.critical
                )
            }
            Some(c) => format!(
                "NOT shown (Cramér–von Mises {c:.2} > {:.2} over {over}): the rate still moves",
                self.critical
            ),
        }
    }
}

/// The run after its warm-up.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SteadyFigures {
    /// False when the run holds no steady state; `why_not` says why.
    pub reached: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub why_not: Option<String>,
    /// Seconds of warm-up cut (MSER-5).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_s: Option<f64>,
    /// What ended it: `none`, `shared_buffers_full`, `page_cache_full`,
    /// `first_checkpoint` or `rate_settled`; `warmup_event_s` when.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_end: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub warmup_event_s: Option<f64>,
    /// The window the figures are over.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_s: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub length_s: Option<f64>,
    /// Whole checkpoint cycles the window was cut to (0: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub checkpoint_cycles: Option<u32>,
    /// Vacuums of a table that started in the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub vacuums: Option<u32>,
    /// Batches of the intervals, and what they are: `time` (equal
    /// lengths) or `vacuum_cycles` (whole autovacuum cycles of the table
    /// whose vacuums cost most).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batches: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub batched_by: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tps: Option<Interval>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_ms: Option<Interval>,
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::json_memory::vec::<_, _, 64>"
    )]
    pub breakdown: Vec<SteadyBucket>,
    /// Heidelberger and Welch's stationarity test on the window.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stationarity: Option<StationarityFigures>,
    /// Slow transients still under way, in words ("the interval between
    /// checkpoints still grows (61 → 66 s)").
    #[serde(
        default,
        skip_serializing_if = "Vec::is_empty",
        deserialize_with = "crate::json_memory::vec::<_, _, 64>"
    )]
    pub transients: Vec<String>,
}

impl SteadyFigures {
    /// The analysis's answer as figures.
    pub fn new(o: &Outcome) -> SteadyFigures {
        let none = SteadyFigures {
            reached: false,
            why_not: None,
            warmup_s: None,
            warmup_end: None,
            warmup_event_s: None,
            start_s: None,
            length_s: None,
            checkpoint_cycles: None,
            vacuums: None,
            batches: None,
            batched_by: None,
            tps: None,
            latency_ms: None,
            breakdown: Vec::new(),
            stationarity: None,
            transients: Vec::new(),
        };
        match o {
            Outcome::NotReached(why) => SteadyFigures {
                why_not: Some(why.clone()),
                ..none
            },
            Outcome::Steady(s) => {
                let batched_by = if s.batched_by_vacuum {
                    "vacuum_cycles"
                } else {
                    "time"
                };
                let (kind, at) = match s.warmup_end {
                    WarmupEnd::None => ("none", None),
                    WarmupEnd::SharedBuffersFull(t) => ("shared_buffers_full", Some(t)),
                    WarmupEnd::PageCacheFull(t) => ("page_cache_full", Some(t)),
                    WarmupEnd::FirstCheckpoint(t) => ("first_checkpoint", Some(t)),
                    WarmupEnd::RateSettled => ("rate_settled", None),
                };
                SteadyFigures {
                    reached: true,
                    warmup_s: Some(s.warmup_s),
                    warmup_end: Some(kind.into()),
                    warmup_event_s: at.map(|t| t as f64 / 1e9),
                    start_s: Some(s.start_s),
                    length_s: Some(s.length_s),
                    checkpoint_cycles: Some(s.checkpoint_cycles),
                    vacuums: Some(s.vacuums),
                    batches: Some(s.batches),
                    batched_by: Some(batched_by.into()),
                    tps: Some(s.tps.into()),
                    latency_ms: Some(s.latency_ms.into()),
                    breakdown: Bucket::ALL
                        .iter()
                        .map(|b| {
                            let e = s.buckets_us[b.index()];
                            SteadyBucket {
                                bucket: b.name().into(),
                                mean_us: e.mean,
                                ci95_us: e.half_width,
                            }
                        })
                        .collect(),
                    stationarity: Some(StationarityFigures::new(&s.stationarity, batched_by)),
                    transients: s.transients.iter().map(|t| t.phrase()).collect(),
                    ..none
                }
            }
        }
    }

    /// The warm-up's end in words: "shared_buffers full at 68 s".
    pub fn warmup_phrase(&self) -> String {
        let at = self
            .warmup_event_s
            .map(|t| format!(" at {t:.0} s"))
            .unwrap_or_default();
        match self.warmup_end.as_deref() {
            Some("none") | None => "no warm-up".into(),
            Some("shared_buffers_full") => format!("shared_buffers full{at}"),
            Some("page_cache_full") => format!("page cache full{at}"),
            Some("first_checkpoint") => format!("first checkpoint{at}"),
            Some(_) => "the rate settled".into(),
        }
    }
}
