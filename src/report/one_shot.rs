//! What the result of a one-shot command (`vacuum`, `catchup`) says of
//! where and how it ran, beside the database's own figures.

/// Where a one-shot job ran and how it ended.
#[derive(Debug, Clone)]
pub struct OneShotRun {
    /// "run" (this disk) or "model".
    pub mode: &'static str,
    /// The device as the result names it: `--device` as given, else the
    /// I/O engine on the disk.
    pub device: String,
    /// Interrupted before the job was done.
    pub partial: bool,
    /// On the disk: what reached it over the job (None in the model, or if
    /// unreadable).
    pub disk: Option<DiskCounters>,
}

/// /proc/diskstats of the disk under the data file, over the job (on the
/// disk): what reached it, everyone's I/O included.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct DiskCounters {
    pub disk: String,
    pub reads: u64,
    pub read_bytes: u64,
    pub writes: u64,
    pub write_bytes: u64,
}

impl DiskCounters {
    /// What reached the disk between `before` and these counters.
    pub fn since(&self, before: &DiskCounters) -> DiskCounters {
        DiskCounters {
            disk: self.disk.clone(),
            reads: self.reads.saturating_sub(before.reads),
            read_bytes: self.read_bytes.saturating_sub(before.read_bytes),
            writes: self.writes.saturating_sub(before.writes),
            write_bytes: self.write_bytes.saturating_sub(before.write_bytes),
        }
    }
}
