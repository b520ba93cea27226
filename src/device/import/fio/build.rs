//! The profile taken from the classified jobs: which slot gives which
//! field, the base profile filling the rest, and the table of what was used.

use super::*;

/// One line of what the import used.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Used {
    pub slot: String,
    /// The fio job, or "default (base profile)".
    pub from: String,
    /// What was read from it ("p50 36 µs, p99 297 µs", "92,077 IOPS").
    pub figure: String,
    /// The profile fields it set.
    pub fields: String,
}

/// A profile built from fio results, with what went into it.
#[derive(Clone, Debug)]
pub struct Import {
    pub profile: Profile,
    /// One row per battery slot.
    pub rows: Vec<Used>,
    /// Slots of the battery with no job in the input.
    pub missing: Vec<Slot>,
    /// Profile fields taken from the base profile because their test was
    /// missing (or unusable).
    pub defaulted: Vec<String>,
    /// Jobs that fit no slot, or a slot already taken, and why.
    pub ignored: Vec<String>,
    /// Other remarks (e.g. a detected cap).
    pub notes: Vec<String>,
}

impl Import {
    /// The warning about missing tests, if any.
    pub fn warning(&self) -> Option<String> {
        if self.missing.is_empty() && self.defaulted.is_empty() {
            return None;
        }
        let mut s = String::new();
        if !self.missing.is_empty() {
            s.push_str(&format!(
                "{} of the 16 battery tests are missing from the input: {}",
                self.missing.len(),
                self.missing
                    .iter()
                    .map(Slot::label)
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
        if !self.defaulted.is_empty() {
            if !s.is_empty() {
                s.push_str("; ");
            }
            s.push_str(&format!(
                "taken from the base profile instead: {}",
                self.defaulted.join(", ")
            ));
        }
        Some(s)
    }
}

fn us(ns: f64) -> f64 {
    ns / 1e3
}

/// Round to 3 significant figures: a profile states measurements, not noise.
pub(crate) fn sig3(x: f64) -> f64 {
    if x == 0.0 || !x.is_finite() {
        return x;
    }
    format!("{x:.2e}").parse().unwrap_or(x)
}

/// Median and p99 of a latency, µs, if both are known.
fn pcts(l: Option<LatencyNs>) -> Option<(f64, f64)> {
    let l = l?;
    Some((us(l.p50?), us(l.p99?)))
}

/// Builds a profile named `name` from parsed fio files; fields whose tests
/// are missing come from `base`. The result is validated as any profile is.
pub fn build(files: &[FioFile], name: &str, base: &Profile) -> Result<Import> {
    let (by_slot, ignored) = assign_slots(files)?;
    let mut b = Building::new(by_slot, name, base);
    let qd1_sync = b.get(Size::Small, Depth::Qd1, Kind::SyncedWrite);
    b.qd1_read();
    b.qd1_write();
    b.flush(qd1_sync);
    b.bandwidth();
    let par_read = b.get(Size::Small, Depth::Parallel, Kind::Read);
    b.parallelism_and_caps(par_read);
    b.flush_scaling(qd1_sync);
    b.defaulted.push(format!(
        "{} (the battery does not measure them; only calibrate does)",
        crate::device::profile::CALIBRATE_ONLY_FIELDS
    ));
    let (all_rows, missing) = b.rows_and_missing();
    let mut notes = b.notes;
    let mut p = b.p;
    p.description = format!(
        "Imported from fio results ({} of the 16 battery tests)",
        16 - missing.len()
    );
    p.source = source_text(files, base, &b.defaulted);
    let text = serde_json::to_string(&p)?;
    let profile = Profile::from_json(&text, "the imported profile")
        .context("the fio figures do not make a valid profile")?;
    // Read back what the model makes of the parallel read, as a check.
    if let Some(j) = par_read {
        let qd = (j.iodepth * j.numjobs).min(1024);
        let modelled = microbench::read_iops(&profile, qd, 1);
        notes.push(format!(
            "the profile's model gives {modelled:.0} IOPS at QD{qd} where fio measured {:.0}",
            j.read.iops
        ));
    }
    Ok(Import {
        profile,
        rows: all_rows,
        missing,
        defaulted: b.defaulted,
        ignored,
        notes,
    })
}

/// Each job to its battery slot, the first one of a slot winning; the jobs
/// that fit none (or a taken one), with why. An error if none fits.
fn assign_slots(files: &[FioFile]) -> Result<(BTreeMap<Slot, &FioJob>, Vec<String>)> {
    let mut by_slot: BTreeMap<Slot, &FioJob> = BTreeMap::new();
    let mut ignored = Vec::new();
    for job in files.iter().flat_map(|f| &f.jobs) {
        match &job.slot {
            Err(why) => ignored.push(format!("{}: {why}", job.describe())),
            Ok(slot) => match by_slot.get(slot) {
                Some(first) => ignored.push(format!(
                    "{}: {} already taken by {}",
                    job.describe(),
                    slot.label(),
                    first.describe()
                )),
                None => {
                    by_slot.insert(*slot, job);
                }
            },
        }
    }
    if by_slot.is_empty() {
        bail!(
            "no fio job fits any of the battery's tests (4k/1M × QD1/parallel × read, write, \
             mixed, fsync'd write): {}",
            ignored.join("; ")
        );
    }
    Ok((by_slot, ignored))
}

/// The profile as the battery's slots fill it in, and what went into it.
struct Building<'a> {
    by_slot: BTreeMap<Slot, &'a FioJob>,
    base: &'a Profile,
    p: Profile,
    defaulted: Vec<String>,
    notes: Vec<String>,
    rows: BTreeMap<Slot, Used>,
}

impl<'a> Building<'a> {
    fn new(by_slot: BTreeMap<Slot, &'a FioJob>, name: &str, base: &'a Profile) -> Self {
        let mut p = base.clone();
        p.name = name.to_string();
        Building {
            by_slot,
            base,
            p,
            defaulted: Vec::new(),
            notes: Vec::new(),
            rows: BTreeMap::new(),
        }
    }

    fn get(&self, size: Size, depth: Depth, kind: Kind) -> Option<&'a FioJob> {
        self.by_slot.get(&Slot { size, depth, kind }).copied()
    }

    /// Record that `job`'s `figure` set `fields`.
    fn used(&mut self, job: &FioJob, figure: String, fields: &str) {
        let slot = job.slot.clone().expect("slotted");
        self.rows.insert(
            slot,
            Used {
                slot: slot.label(),
                from: job.describe(),
                figure,
                fields: fields.to_string(),
            },
        );
    }

    /// `read` and `latency_io_kib`, from the QD1 small random read.
    fn qd1_read(&mut self) {
        let qd1_read = self.get(Size::Small, Depth::Qd1, Kind::Read);
        match qd1_read.and_then(|j| pcts(j.read.clat).map(|l| (j, l))) {
            Some((j, (p50, p99))) => {
                self.p.read = Latency {
                    median_us: sig3(p50),
                    p99_us: sig3(p99.max(p50)),
                };
                self.p.latency_io_kib = (j.bs_read / 1024).max(1) as u32;
                self.used(
                    j,
                    format!("clat p50 {p50:.1} µs, p99 {p99:.1} µs"),
                    "read, latency_io_kib",
                );
            }
            None => self
                .defaulted
                .push("read (QD1 small random read)".to_string()),
        }
    }

    /// `write`, from the QD1 small random write.
    fn qd1_write(&mut self) {
        let qd1_write = self.get(Size::Small, Depth::Qd1, Kind::Write);
        match qd1_write.and_then(|j| pcts(j.write.clat).map(|l| (j, l))) {
            Some((j, (p50, p99))) => {
                self.p.write = Latency {
                    median_us: sig3(p50),
                    p99_us: sig3(p99.max(p50)),
                };
                if j.bs_write / 1024 != u64::from(self.p.latency_io_kib) {
                    self.notes.push(format!(
                        "the QD1 write used {} blocks, the read {} KiB: latency_io_kib follows the read",
                        crate::units::fio_size(j.bs_write),
                        self.p.latency_io_kib
                    ));
                }
                self.used(j, format!("clat p50 {p50:.1} µs, p99 {p99:.1} µs"), "write");
            }
            None => self
                .defaulted
                .push("write (QD1 small random write)".to_string()),
        }
    }

    /// `flush`, from the QD1 fsync'd write: its sync latency, or else the
    /// write+sync pair's time less the write's own.
    fn flush(&mut self, qd1_sync: Option<&FioJob>) {
        let mut flush_from = None;
        if let Some(j) = qd1_sync {
            if let Some((p50, p99)) = pcts(j.sync_lat) {
                flush_from = Some((
                    j,
                    p50,
                    p99,
                    format!("{} p50 {p50:.1} µs, p99 {p99:.1} µs", j.sync),
                ));
            } else if j.write.iops > 0.0 {
                // Only the pair is known: per-op time less the write's own.
                let per_op = 1e6 / j.write.iops;
                let write_mean = j.write.clat.map_or(self.p.write.median_us, |c| us(c.mean));
                let mean = (per_op - write_mean).max(1.0);
                let spread = j
                    .write
                    .clat
                    .and_then(|c| Some(c.p99? / c.p50?))
                    .unwrap_or(3.0)
                    .max(1.0);
                flush_from = Some((
                    j,
                    mean,
                    mean * spread,
                    format!(
                        "{:.0} write+{}/s, less the write's {write_mean:.1} µs",
                        j.write.iops, j.sync
                    ),
                ));
            }
        }
        match flush_from {
            Some((j, p50, p99, figure)) => {
                self.p.flush = Latency {
                    median_us: sig3(p50),
                    p99_us: sig3(p99.max(p50)),
                };
                if j.sync == "fsync" {
                    self.notes.push(
                        "flush comes from fsync, which also writes metadata; PostgreSQL's WAL uses \
                         fdatasync, usually cheaper (fio --fdatasync=1 measures that)"
                            .to_string(),
                    );
                }
                self.used(j, figure, "flush");
            }
            None => self
                .defaulted
                .push("flush (QD1 small fsync'd write)".to_string()),
        }
    }

    /// `bandwidth_mib_s`: the best of the large tests.
    fn bandwidth(&mut self) {
        let mut best: Option<(&FioJob, f64)> = None;
        for kind in [Kind::Read, Kind::Write, Kind::Mixed, Kind::SyncedWrite] {
            for depth in [Depth::Qd1, Depth::Parallel] {
                if let Some(j) = self.get(Size::Large, depth, kind) {
                    let mib = (j.read.bw_bytes + j.write.bw_bytes) / 1_048_576.0;
                    if best.is_none_or(|(_, b)| mib > b) {
                        best = Some((j, mib));
                    }
                }
            }
        }
        match best {
            Some((j, mib)) if mib > 0.0 => {
                self.p.bandwidth_mib_s = sig3(mib);
                for kind in [Kind::Read, Kind::Write, Kind::Mixed, Kind::SyncedWrite] {
                    for depth in [Depth::Qd1, Depth::Parallel] {
                        if let Some(o) = self.get(Size::Large, depth, kind) {
                            let m = (o.read.bw_bytes + o.write.bw_bytes) / 1_048_576.0;
                            let fields = if std::ptr::eq(o, j) {
                                "bandwidth_mib_s (the best large test)"
                            } else {
                                "(bandwidth: below the best)"
                            };
                            self.used(o, format!("{m:.0} MiB/s"), fields);
                        }
                    }
                }
            }
            _ => self
                .defaulted
                .push("bandwidth_mib_s (1M sequential tests)".to_string()),
        }
    }

    /// `channels` and `caps`, from the parallel small tests: channels from
    /// the parallel read's IOPS by Little's law, caps where the rates agree.
    fn parallelism_and_caps(&mut self, par_read: Option<&FioJob>) {
        let par_write = self.get(Size::Small, Depth::Parallel, Kind::Write);
        let par_mixed = self.get(Size::Small, Depth::Parallel, Kind::Mixed);
        self.p.caps = Caps::default();
        match par_read.filter(|j| j.read.iops > 0.0) {
            Some(j) => {
                let qd = u64::from(j.iodepth) * u64::from(j.numjobs);
                let mean_s = self.p.qd1_mean_us(Op::Read) / 1e6;
                let k = (j.read.iops * mean_s).round().clamp(1.0, qd as f64);
                self.p.channels = k as u32;
                let rates = [
                    Some(j.read.iops),
                    par_write.map(|w| w.write.iops),
                    par_mixed.map(|m| m.read.iops + m.write.iops),
                ];
                let fields = match rates {
                    [Some(r), Some(w), Some(m)] => self.iops_caps(r, w, m, k),
                    _ => None,
                }
                .unwrap_or("channels");
                self.used(
                    j,
                    format!("{:.0} IOPS at {} × QD{}", j.read.iops, j.numjobs, j.iodepth),
                    fields,
                );
                for o in [par_write, par_mixed].into_iter().flatten() {
                    self.used(
                        o,
                        format!("{:.0} IOPS", o.read.iops + o.write.iops),
                        if fields == "channels" {
                            "(cap check: no cap)"
                        } else {
                            "(cap check)"
                        },
                    );
                }
            }
            None => {
                self.p.channels = self.base.channels;
                self.p.caps = self.base.caps.clone();
                self.defaulted
                    .push("channels and caps (parallel small random read)".to_string());
            }
        }
    }

    /// The caps the parallel read, write and mixed IOPS (`r`, `w`, `m`)
    /// show, with channels doubled from Little's law's `k` so the cap, not
    /// the channels, holds the rate: a flat cap when all three agree,
    /// per-direction caps when read and write agree and mixed reaches their
    /// sum. Returns the fields set, None without a cap.
    fn iops_caps(&mut self, r: f64, w: f64, m: f64, k: f64) -> Option<&'static str> {
        let hi = r.max(w).max(m);
        let lo = r.min(w).min(m);
        let dir_hi = r.max(w);
        let dir_lo = r.min(w);
        let channels = (2.0 * k).min(f64::from(crate::device::profile::CHANNELS_MAX)) as u32;
        if hi / lo <= CAP_AGREEMENT {
            let cap = sig3((r + w + m) / 3.0);
            self.p.caps.iops = Some(cap);
            self.p.channels = channels;
            self.notes.push(format!(
                "parallel read, write and mixed IOPS agree within 10% ({r:.0}, {w:.0}, \
                 {m:.0}): read as a flat cap of {cap} IOPS"
            ));
            Some("caps.iops, channels")
        } else if dir_hi / dir_lo <= CAP_AGREEMENT
            && (m / (r + w)).clamp(0.0, 2.0) > 1.0 / CAP_AGREEMENT
        {
            let cap = sig3((r + w) / 2.0);
            self.p.caps.read_iops = Some(cap);
            self.p.caps.write_iops = Some(cap);
            self.p.channels = channels;
            self.notes.push(format!(
                "parallel read and write IOPS agree ({r:.0}, {w:.0}) and mixed reaches \
                 their sum ({m:.0}): read as per-direction caps of {cap} IOPS"
            ));
            Some("caps.read_iops, caps.write_iops, channels")
        } else {
            None
        }
    }

    /// `flush_to_media`: do parallel fsync'd writes scale past QD1's?
    fn flush_scaling(&mut self, qd1_sync: Option<&FioJob>) {
        let par_sync = self.get(Size::Small, Depth::Parallel, Kind::SyncedWrite);
        match (qd1_sync, par_sync) {
            (Some(a), Some(b)) if a.write.iops > 0.0 => {
                let ratio = b.write.iops / a.write.iops;
                self.p.flush_to_media = ratio < FLUSH_SCALING_MIN;
                self.used(
                    b,
                    format!(
                        "{:.0} writes+{}/s, {ratio:.1}× QD1's {:.0}",
                        b.write.iops, b.sync, a.write.iops
                    ),
                    "flush_to_media",
                );
            }
            _ => self
                .defaulted
                .push("flush_to_media (parallel fsync'd write)".to_string()),
        }
    }

    /// One row per battery slot, in battery order (jobs the model does not
    /// use and missing slots included), and the missing slots.
    fn rows_and_missing(&mut self) -> (Vec<Used>, Vec<Slot>) {
        for slot in Slot::all() {
            if let Some(j) = self.by_slot.get(&slot)
                && !self.rows.contains_key(&slot)
            {
                self.rows.insert(
                    slot,
                    Used {
                        slot: slot.label(),
                        from: j.describe(),
                        figure: format!("{:.0} IOPS", j.read.iops + j.write.iops),
                        fields: "(not used by the model)".into(),
                    },
                );
            }
        }
        let missing: Vec<Slot> = Slot::all()
            .into_iter()
            .filter(|s| !self.by_slot.contains_key(s))
            .collect();
        let all_rows = Slot::all()
            .into_iter()
            .map(|s| {
                self.rows.remove(&s).unwrap_or_else(|| Used {
                    slot: s.label(),
                    from: "missing".into(),
                    figure: String::new(),
                    fields: String::new(),
                })
            })
            .collect();
        (all_rows, missing)
    }
}

/// The profile's `source`: the files it came from and what the base filled.
fn source_text(files: &[FioFile], base: &Profile, defaulted: &[String]) -> String {
    let sources: Vec<String> = files
        .iter()
        .map(|f| {
            let disks = if f.disks.is_empty() {
                String::new()
            } else {
                format!(" on {}", f.disks.join(", "))
            };
            let file = Path::new(&f.origin)
                .file_name()
                .map_or(f.origin.clone(), |n| n.to_string_lossy().into_owned());
            format!("{file} ({}, {}{disks})", f.version, f.time)
        })
        .collect();
    let mut source = format!(
        "pgiosim profile from-fio: {}. Latencies are fio's clat p50/p99; channels from parallel \
         read IOPS by Little's law",
        sources.join("; ")
    );
    if !defaulted.is_empty() {
        source.push_str(&format!(
            "; from the base profile {}: {}",
            base.name,
            defaulted.join(", ")
        ));
    }
    source.push('.');
    source
}

/// The import as a table, one row per battery test.
pub fn render_table(imp: &Import) -> String {
    let mut s = format!(
        "{:<28} {:<40} {}\n",
        "battery test", "figure", "→ profile field"
    );
    for r in &imp.rows {
        if r.from == "missing" {
            s.push_str(&format!("{:<28} {:<40} {}\n", r.slot, "(missing)", ""));
        } else {
            s.push_str(&format!("{:<28} {:<40} {}\n", r.slot, r.figure, r.fields));
        }
    }
    s
}
