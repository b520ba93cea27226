//! The steady state in the result: the figures of `steady_state::analyse`
//! as JSON, and how the run came to stop.

use serde::{Deserialize, Serialize};

use crate::core::breakdown::Bucket;
use crate::steady_state::{Estimate, Outcome, WarmupEnd};

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
        deserialize_with = "crate::json_bound::vec::<_, _, 64>"
    )]
    pub breakdown: Vec<SteadyBucket>,
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
        };
        match o {
            Outcome::NotReached(why) => SteadyFigures {
                why_not: Some(why.clone()),
                ..none
            },
            Outcome::Steady(s) => {
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
                    batched_by: Some(
                        if s.batched_by_vacuum {
                            "vacuum_cycles"
                        } else {
                            "time"
                        }
                        .into(),
                    ),
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
