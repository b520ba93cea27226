//! WAL archiving's figures in the result: whether the archive keeps up with
//! the WAL, its backlog over the run and the RPO it implies.

use serde::{Deserialize, Serialize};

use crate::core::archive::Archiver;
use crate::core::io::WAL_SEGMENT_BYTES;
use crate::core::time::{MS, SEC};

/// Archiving over the run (present only with archive_mode on).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ArchiveFigures {
    /// archive_mode ("on" or "always") and archive_timeout (s, 0: none).
    pub archive_mode: String,
    pub archive_timeout_s: u64,
    /// The target's name ("s3", "local", "custom") and where its figures
    /// come from.
    pub target: String,
    pub target_source: String,
    /// Fixed time per segment (ms), throughput of one push (MB/s, 10^6
    /// bytes), pushes at once, and the time one 16 MiB segment takes (s).
    pub latency_ms: f64,
    pub throughput_mb_per_s: f64,
    pub parallel: u32,
    pub push_s: f64,
    /// Segments completed and marked .ready, archived, and switched early
    /// by archive_timeout.
    pub segments_ready: u64,
    pub segments_archived: u64,
    pub segments_switched: u64,
    /// WAL the archive has to take (the flushed WAL position over the run,
    /// switch padding included, MB/s), what the target can take with every
    /// push busy, and what it archived.
    pub wal_mb_per_s: f64,
    pub capacity_mb_per_s: f64,
    pub archived_mb_per_s: f64,
    /// The target's capacity covers the WAL's rate.
    pub keeps_up: bool,
    /// Segments waiting for a push at the end of the run outnumber those at
    /// its middle: the backlog grows.
    pub backlog_grows: bool,
    /// Most segments ready but not archived at once (queued or pushing),
    /// and the bytes of pg_wal they hold; the same at the end.
    pub backlog_max_segments: u64,
    pub backlog_max_bytes: u64,
    pub backlog_end_segments: u64,
    /// The RPO: the age of the oldest WAL not in the archive, what a loss
    /// of the server and its pg_wal would lose (s): largest over the run,
    /// and at its end.
    pub rpo_max_s: f64,
    pub rpo_end_s: f64,
    /// One entry per whole second.
    #[serde(
        deserialize_with = "crate::json_memory::vec::<_, _, { crate::core::stats::SERIES_MAX_POINTS }>"
    )]
    pub seconds: Vec<ArchiveSecondFigures>,
}

/// One second of archiving.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ArchiveSecondFigures {
    /// End of the second, seconds since the start.
    pub t: u64,
    /// Most segments ready but not archived, and their bytes.
    pub backlog_segments: u64,
    pub backlog_bytes: u64,
    /// Most segments waiting for a free push.
    pub queued_segments: u64,
    /// Largest RPO in the second (s).
    pub rpo_s: f64,
    /// Segments archived in the second.
    pub archived: u64,
}

impl ArchiveFigures {
    /// The figures of a run that lasted `elapsed_ns`.
    pub fn new(a: &Archiver, elapsed_ns: u64) -> ArchiveFigures {
        let cfg = a.config();
        let t = &cfg.target;
        let c = a.counters();
        let elapsed = elapsed_ns.max(1) as f64 / SEC as f64;
        // Past SERIES_MAX_POINTS seconds each point covers `width` seconds:
        // `t` is its end, the maxima its maxima, `archived` its total.
        let width = a.seconds().width_s();
        let whole = (elapsed_ns / SEC / width) as usize;
        let seconds: Vec<ArchiveSecondFigures> = a
            .seconds()
            .iter()
            .take(whole)
            .enumerate()
            .map(|(i, s)| ArchiveSecondFigures {
                t: (i as u64 + 1) * width,
                backlog_segments: s.backlog_max,
                backlog_bytes: s.backlog_max * WAL_SEGMENT_BYTES,
                queued_segments: s.queued_max,
                rpo_s: s.rpo_max as f64 / SEC as f64,
                archived: s.archived,
            })
            .collect();
        let backlog_max = a.seconds().iter().map(|s| s.backlog_max).max().unwrap_or(0);
        let rpo_max = a.seconds().iter().map(|s| s.rpo_max).max().unwrap_or(0);
        let queued_at = |i: usize| seconds.get(i).map_or(0, |s| s.queued_segments);
        let last = seconds.len().saturating_sub(1);
        let backlog_grows = queued_at(last) >= 1 && queued_at(last) > queued_at(last / 2);
        let wal = a.flushed_lsn() as f64 / elapsed;
        let capacity = t.capacity_bytes_per_s();
        ArchiveFigures {
            archive_mode: cfg.mode.name().to_string(),
            archive_timeout_s: cfg.timeout / SEC,
            target: t.name.clone(),
            target_source: crate::archive_target::target_source(&t.name).to_string(),
            latency_ms: t.latency as f64 / MS as f64,
            throughput_mb_per_s: t.bytes_per_s / 1e6,
            parallel: t.parallel,
            push_s: t.push_time(WAL_SEGMENT_BYTES) as f64 / SEC as f64,
            segments_ready: c.ready,
            segments_archived: c.archived,
            segments_switched: c.switches,
            wal_mb_per_s: wal / 1e6,
            capacity_mb_per_s: capacity / 1e6,
            archived_mb_per_s: (c.archived * WAL_SEGMENT_BYTES) as f64 / elapsed / 1e6,
            keeps_up: capacity >= wal,
            backlog_grows,
            backlog_max_segments: backlog_max,
            backlog_max_bytes: backlog_max * WAL_SEGMENT_BYTES,
            backlog_end_segments: a.backlog(),
            rpo_max_s: rpo_max as f64 / SEC as f64,
            rpo_end_s: a.rpo(elapsed_ns) as f64 / SEC as f64,
            seconds,
        }
    }

    /// The text report's lines: (label, value) rows, then warnings.
    pub fn text(&self) -> (Vec<(String, String)>, Vec<String>) {
        (self.rows(), self.warnings())
    }

    /// The text report's (label, value) rows.
    fn rows(&self) -> Vec<(String, String)> {
        vec![
            (
                format!("WAL archiving ({})", self.target),
                format!(
                    "archive_mode={}{}; {:.0} ms + {:.0} MB/s per segment, {} at a time: \
                     {:.2} s per 16 MiB segment",
                    self.archive_mode,
                    if self.archive_timeout_s > 0 {
                        format!(", archive_timeout={}s", self.archive_timeout_s)
                    } else {
                        String::new()
                    },
                    self.latency_ms,
                    self.throughput_mb_per_s,
                    self.parallel,
                    self.push_s
                ),
            ),
            (
                "segments archived".to_string(),
                format!(
                    "{} of {} ready{}",
                    self.segments_archived,
                    self.segments_ready,
                    if self.segments_switched > 0 {
                        format!(
                            " ({} switched early by archive_timeout)",
                            self.segments_switched
                        )
                    } else {
                        String::new()
                    }
                ),
            ),
            (
                "archive capacity vs WAL".to_string(),
                format!(
                    "{:.1} MB/s against {:.1} MB/s of WAL: {}",
                    self.capacity_mb_per_s,
                    self.wal_mb_per_s,
                    if self.keeps_up {
                        "keeps up"
                    } else {
                        "falls behind"
                    }
                ),
            ),
            (
                "archive backlog".to_string(),
                format!(
                    "max {} segments ({} of pg_wal kept), {} at the end",
                    self.backlog_max_segments,
                    crate::units::pretty_bytes(self.backlog_max_bytes),
                    self.backlog_end_segments
                ),
            ),
            (
                "RPO (WAL not yet archived)".to_string(),
                format!(
                    "max {:.1} s, {:.1} s at the end",
                    self.rpo_max_s, self.rpo_end_s
                ),
            ),
        ]
    }

    /// The warning if the archive falls behind the WAL.
    fn warnings(&self) -> Vec<String> {
        let mut warnings = Vec::new();
        if !self.keeps_up || self.backlog_grows {
            warnings.push(format!(
                "warning: the WAL archive falls behind: the WAL comes at {:.1} MB/s and the \
                 target takes {:.1} MB/s{}; pg_wal grows by the backlog and the RPO with it \
                 (more pushes at once, parallel=N, or a faster target)",
                self.wal_mb_per_s,
                self.capacity_mb_per_s,
                if self.backlog_grows {
                    format!(
                        ", and the backlog grew through the run to {} segments",
                        self.backlog_end_segments
                    )
                } else {
                    String::new()
                }
            ));
        }
        warnings
    }
}
