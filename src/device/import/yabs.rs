//! Device profiles from YABS (Yet Another Bench Script) disk results:
//! `pgiosim profile from-yabs`.
//!
//! YABS runs one fio test per block size, 4k, 64k, 512k and 1m, each
//! `--rw=randrw --rwmixread=50 --iodepth=64 --numjobs=2 --direct=1
//! --ioengine=libaio --size=2G --runtime=30` on a file in the current
//! directory (masonr/yet-another-bench-script, yabs.sh, `disk_test`), and
//! prints read, write and total throughput and IOPS per size. Its text
//! output gives speeds in thousands of fio's bandwidth unit ("MB/s"; 10^6
//! for "GB/s") and IOPS cut to "5.0k"; its JSON (`-j` / `-w`) gives
//! `speed_r`, `speed_w`, `speed_rw` in fio's KiB/s ("KBps") and the IOPS
//! unrounded. Total rows are recomputed from Read and Write (some pasted
//! results lack them).
//!
//! What that measures, and so what the profile takes from it:
//!
//! | profile field | from |
//! |---|---|
//! | `bandwidth_mib_s` | the highest total throughput of the 512k and 1m tests; where moving the base's QD1 I/O at that rate would take longer than its QD1 latency, `caps.mib_s` instead, with the base's bandwidth |
//! | `caps.iops` | the 4k total IOPS, when the base profile's disk would run that test more than 10% faster: YABS shows only 128 I/Os in flight, so a cap and a slower disk look the same; a cap keeps the base's QD1 latencies |
//! | `channels` | the base's, raised in proportion when the disk runs the 4k test more than 10% faster than the base would |
//!
//! What YABS does not measure, taken from the base profile (`--base`,
//! `nvme` by default) and listed in the profile's `source`: QD1 read and
//! write latency, fsync/fdatasync latency and whether flushes scale
//! (`flush`, `flush_to_media`), the round trip, and whether a cap counts
//! reads and writes together or apart (a 50/50 mix cannot tell). A profile
//! from YABS alone is therefore right about throughput under load and a
//! guess about commit latency; `pgiosim calibrate` on the disk, or
//! `profile from-fio` with the 16-test battery, measures the rest.
//!
//! Reading the file is the only I/O here ([`load`]); parsing and
//! [`build`] are pure.

use std::path::Path;

use anyhow::{Result, anyhow, bail};
use serde_json::Value;

use crate::device::microbench;
use crate::device::profile::{CHANNELS_MAX, Op, Profile};

/// YABS's four block sizes, KiB.
pub const BLOCK_KIB: [u64; 4] = [4, 64, 512, 1024];
/// I/Os in flight in every YABS test: 2 jobs × iodepth 64.
pub const YABS_QD: u32 = 128;
/// The model's and YABS's 4k rates agreeing within this ratio need no change.
pub const AGREEMENT: f64 = 1.10;

const MIB: f64 = 1_048_576.0;

/// One YABS test: a block size, reads and writes half each.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Test {
    pub block_kib: u64,
    /// KiB/s (fio's unit).
    pub read_kib_s: f64,
    pub write_kib_s: f64,
    pub read_iops: f64,
    pub write_iops: f64,
}

impl Test {
    /// Reads and writes together, IOPS.
    pub fn total_iops(&self) -> f64 {
        self.read_iops + self.write_iops
    }

    /// Reads and writes together, MiB/s.
    pub fn total_mib_s(&self) -> f64 {
        (self.read_kib_s + self.write_kib_s) / 1024.0
    }
}

/// One disk's four tests, as YABS printed them.
#[derive(Clone, Debug, PartialEq)]
pub struct Disk {
    /// The partition YABS names ("/dev/sdb"), or "disk N".
    pub label: String,
    /// By block size, in [`BLOCK_KIB`] order.
    pub tests: Vec<Test>,
}

impl Disk {
    /// The test of `kib`, if YABS ran it.
    pub fn test(&self, kib: u64) -> Option<&Test> {
        self.tests.iter().find(|t| t.block_kib == kib)
    }
}

/// Read a YABS result (text or JSON) and return its disks.
pub fn load(path: &Path) -> Result<Vec<Disk>> {
    let text = crate::input::read_text(path, "YABS output", crate::input::SMALL_FILE_MAX_BYTES)?;
    parse(&text, &path.display().to_string()).map_err(crate::error::bad_input)
}

/// The character a JSON object opens with (written as an escape so that
/// brace-counting tools read this file's functions whole).
const JSON_OBJECT: char = '\u{7b}';

/// Parse YABS's JSON (`{"fio": [...]}`) or its text output, which may hold
/// several disks' results one after another. `origin` names it in errors.
pub fn parse(text: &str, origin: &str) -> Result<Vec<Disk>> {
    let disks = if text.trim_start().starts_with(JSON_OBJECT) {
        vec![parse_json(text, origin)?]
    } else {
        parse_text(text, origin)?
    };
    for d in &disks {
        if d.test(4).is_none() {
            bail!(
                "{origin}: {}: no 4k result; YABS's 4k test is the one a profile needs",
                d.label
            );
        }
        for t in &d.tests {
            check_figures(t).map_err(|e| {
                anyhow!(
                    "{origin}: {}: the {} test {e}",
                    d.label,
                    label_kib(t.block_kib)
                )
            })?;
        }
    }
    Ok(disks)
}

/// The most IOPS and KiB/s a YABS figure may show: 100 million I/O a
/// second and about 1 TB/s, far past any disk. A larger figure is damaged
/// output, and sums of such figures overflow the profile built from them.
const FIGURE_MAX: f64 = 1e8;
const KIB_S_MAX: f64 = 1e9;

/// A test's figures are a measurement: finite and within the bounds above;
/// the 4k test, which the profile comes from, not all 0 (a test that did
/// not run, from which no profile follows).
fn check_figures(t: &Test) -> Result<()> {
    for (what, v, max) in [
        ("read IOPS", t.read_iops, FIGURE_MAX),
        ("write IOPS", t.write_iops, FIGURE_MAX),
        ("read KiB/s", t.read_kib_s, KIB_S_MAX),
        ("write KiB/s", t.write_kib_s, KIB_S_MAX),
    ] {
        if !(v.is_finite() && (0.0..=max).contains(&v)) {
            bail!("shows {what} {v:?}, outside 0 to {max:?}: damaged output");
        }
    }
    if t.block_kib == 4 && (t.total_iops() <= 0.0 || t.total_mib_s() <= 0.0) {
        bail!("shows 0 IOPS or 0 throughput: it did not run, and no profile follows from it");
    }
    Ok(())
}

fn block_kib(s: &str) -> Option<u64> {
    match s.trim().to_ascii_lowercase().as_str() {
        "4k" => Some(4),
        "64k" => Some(64),
        "512k" => Some(512),
        "1m" => Some(1024),
        _ => None,
    }
}

fn parse_json(text: &str, origin: &str) -> Result<Disk> {
    let v: Value =
        serde_json::from_str(text).map_err(|e| anyhow!("{origin}: not valid JSON: {e}"))?;
    let fio = v.get("fio").and_then(Value::as_array).ok_or_else(|| {
        anyhow!("{origin}: no \"fio\" array: not YABS JSON, or run without the disk test")
    })?;
    let mut tests = Vec::new();
    for (i, t) in fio.iter().enumerate() {
        let bs = t.get("bs").and_then(Value::as_str).unwrap_or("?");
        let kib = block_kib(bs).ok_or_else(|| {
            anyhow!("{origin}: fio[{i}].bs: {bs:?} is not a YABS block size (4k, 64k, 512k, 1m)")
        })?;
        let num = |field: &str| -> Result<f64> {
            t.get(field)
                .and_then(Value::as_f64)
                .filter(|x| x.is_finite() && *x >= 0.0)
                .ok_or_else(|| anyhow!("{origin}: fio[{i}].{field}: missing or not a number"))
        };
        if let Some(u) = t.get("speed_units").and_then(Value::as_str)
            && u != "KBps"
        {
            bail!("{origin}: fio[{i}].speed_units: {u:?}; YABS writes KBps (fio's KiB/s)");
        }
        tests.push(Test {
            block_kib: kib,
            read_kib_s: num("speed_r")?,
            write_kib_s: num("speed_w")?,
            read_iops: num("iops_r")?,
            write_iops: num("iops_w")?,
        });
    }
    tests.sort_by_key(|t| t.block_kib);
    Ok(Disk {
        label: "disk 1".into(),
        tests,
    })
}

/// "20.53 MB/s" → KiB/s (YABS divides fio's KiB/s by 1,000 per unit step).
fn speed_kib_s(s: &str) -> Option<f64> {
    let mut parts = s.split_whitespace();
    let v: f64 = parts.next()?.parse().ok()?;
    let scale = match parts.next()? {
        "KB/s" => 1.0,
        "MB/s" => 1e3,
        "GB/s" => 1e6,
        _ => return None,
    };
    (v.is_finite() && v >= 0.0).then_some(v * scale)
}

/// "(5.0k)" or "(405)" → IOPS.
fn iops(s: &str) -> Option<f64> {
    let s = s.trim().strip_prefix('(')?.strip_suffix(')')?.trim();
    let (num, scale) = match s.strip_suffix('k') {
        Some(n) => (n, 1e3),
        None => (s, 1.0),
    };
    num.parse::<f64>().ok().map(|v| v * scale)
}

/// One cell of a result row: "20.53 MB/s    (5.0k)" → (KiB/s, IOPS).
fn cell(s: &str) -> Option<(f64, f64)> {
    let open = s.find('(')?;
    Some((speed_kib_s(&s[..open])?, iops(&s[open..])?))
}

fn parse_text(text: &str, origin: &str) -> Result<Vec<Disk>> {
    let mut parser = TextParser {
        origin,
        disks: Vec::new(),
        columns: Vec::new(),
        rows: [None, None],
    };
    for (n, line) in text.lines().enumerate() {
        parser.line(line.trim(), n + 1)?;
    }
    parser.flush(text.lines().count())?;
    if parser.disks.is_empty() {
        bail!("{origin}: no 'fio Disk Speed Tests' section: not YABS output, or run with -f/-d");
    }
    Ok(parser.disks.into_iter().map(RawDisk::into_disk).collect())
}

/// YABS's text output read line by line: a disk's header, then blocks of a
/// "Block Size" line naming a pair of columns and their Read and Write rows.
struct TextParser<'a> {
    origin: &'a str,
    disks: Vec<RawDisk>,
    /// Block sizes of the current pair of columns.
    columns: Vec<u64>,
    /// The Read and Write rows seen for them.
    rows: [Option<Vec<(f64, f64)>>; 2],
}

impl TextParser<'_> {
    /// Reads the trimmed line `t`, number `line_no`.
    fn line(&mut self, t: &str, line_no: usize) -> Result<()> {
        let origin = self.origin;
        if t.starts_with("fio Disk Speed Tests") {
            self.flush(line_no)?;
            self.columns.clear();
            let label = t
                .find("(Partition ")
                .and_then(|i| t[i + 11..].split(')').next())
                .map(str::to_string)
                .unwrap_or_else(|| format!("disk {}", self.disks.len() + 1));
            self.disks.push(RawDisk {
                label,
                cells: Vec::new(),
            });
            return Ok(());
        }
        if self.disks.is_empty() {
            return Ok(());
        }
        let cells: Vec<&str> = t.split('|').map(str::trim).collect();
        match cells.first().copied() {
            Some("Block Size") => {
                self.flush(line_no)?;
                self.columns = cells[1..]
                    .iter()
                    .map(|c| {
                        let bs = c.split_whitespace().next().unwrap_or("");
                        block_kib(bs).ok_or_else(|| {
                            anyhow!("{origin}: line {line_no}: {bs:?} is not a YABS block size")
                        })
                    })
                    .collect::<Result<_>>()?;
            }
            Some(which @ ("Read" | "Write")) if !self.columns.is_empty() => {
                let parsed: Option<Vec<(f64, f64)>> = cells[1..].iter().map(|c| cell(c)).collect();
                let columns = self.columns.len();
                let parsed = parsed.filter(|p| p.len() == columns).ok_or_else(|| {
                    anyhow!(
                        "{origin}: line {line_no}: a {which} row should hold {columns} cells like \
                         '20.53 MB/s (5.0k)': {t:?}"
                    )
                })?;
                self.rows[usize::from(which == "Write")] = Some(parsed);
            }
            // Total rows are the sum of Read and Write (and are missing from
            // some pasted results): recomputed, not read.
            _ => {}
        }
        Ok(())
    }

    /// Adds the current pair of columns' cells to the last disk, before
    /// line `line_no` starts another.
    fn flush(&mut self, line_no: usize) -> Result<()> {
        if self.columns.is_empty() {
            return Ok(());
        }
        let (Some(read), Some(write)) = (self.rows[0].take(), self.rows[1].take()) else {
            bail!(
                "{}: line {line_no}: the block with {} lacks its Read or Write row",
                self.origin,
                self.columns
                    .iter()
                    .map(|k| label_kib(*k))
                    .collect::<Vec<_>>()
                    .join(" and ")
            );
        };
        let disk = self.disks.last_mut().expect("a disk header came first");
        for (i, &kib) in self.columns.iter().enumerate() {
            disk.cells.push((kib, read[i], write[i]));
        }
        Ok(())
    }
}

/// One printed figure: (speed in YABS's printed unit, IOPS as printed).
type Figure = (f64, f64);

/// A disk's text cells: (block KiB, read, write).
struct RawDisk {
    label: String,
    cells: Vec<(u64, Figure, Figure)>,
}

impl RawDisk {
    /// YABS prints speed in thousands of fio's bandwidth unit, which has
    /// been KiB/s (the JSON example in YABS's repository: 165,590 at 4k is
    /// 41,397 IOPS × 4 KiB) and 1,000-byte kB/s (the fixture: 20.53 MB/s
    /// beside "5.0k" IOPS at 4k, 207.48 beside "3.1k" at 64k): the unit is
    /// the one that agrees with the IOPS printed beside the speeds, and the
    /// IOPS follow from the speed, which YABS does not round to 0.1k.
    fn into_disk(self) -> Disk {
        let misfit = |unit_bytes: f64| -> f64 {
            self.cells
                .iter()
                .flat_map(|&(kib, r, w)| [(kib, r), (kib, w)])
                .filter(|(_, (speed, shown))| *speed > 0.0 && *shown > 0.0)
                .map(|(kib, (speed, shown))| {
                    let derived = speed * unit_bytes / (kib as f64 * 1024.0);
                    (derived / shown).ln().abs()
                })
                .sum()
        };
        let unit_bytes = if misfit(1000.0) < misfit(1024.0) {
            1000.0
        } else {
            1024.0
        };
        let mut tests: Vec<Test> = self
            .cells
            .iter()
            .map(|&(kib, r, w)| {
                let kib_s = |speed: f64| speed * unit_bytes / 1024.0;
                let iops = |(speed, shown): (f64, f64)| {
                    if speed > 0.0 {
                        kib_s(speed) / kib as f64
                    } else {
                        shown
                    }
                };
                Test {
                    block_kib: kib,
                    read_kib_s: kib_s(r.0),
                    write_kib_s: kib_s(w.0),
                    read_iops: iops(r),
                    write_iops: iops(w),
                }
            })
            .collect();
        tests.sort_by_key(|t| t.block_kib);
        Disk {
            label: self.label,
            tests,
        }
    }
}

fn label_kib(kib: u64) -> String {
    if kib >= 1024 {
        format!("{}m", kib / 1024)
    } else {
        format!("{kib}k")
    }
}

/// A profile built from one disk, with what the model makes of it at each
/// YABS test.
#[derive(Clone, Debug)]
pub struct Import {
    pub profile: Profile,
    /// (YABS test, the model's total IOPS for the same test on the profile).
    pub checks: Vec<(Test, f64)>,
    /// How each field was decided.
    pub notes: Vec<String>,
}

/// Build a profile named `name` from `disk`, the figures YABS does not
/// measure taken from `base`.
pub fn build(disk: &Disk, name: &str, base: &Profile, origin: &str) -> Result<Import> {
    let t4 = *disk.test(4).expect("parse checks the 4k test");
    let mut p = base.clone();
    p.name = name.to_string();
    p.description = format!(
        "Disk measured by YABS ({}, {})",
        disk.label,
        origin_file(origin)
    );
    // Drop the base's caps: the disk's own come from its figures.
    p.caps = Default::default();
    let mut notes = vec![bandwidth(disk, &mut p, base)];
    // The model below runs only on a valid profile: check it first, so a
    // figure the checks in `parse` let through is an error, not a panic.
    Profile::from_json(&p.to_json().to_string(), origin).map_err(crate::error::bad_input)?;
    notes.extend(cap_or_channels(&mut p, base, &t4));
    p.source = source(disk, base, origin, &notes);
    let profile =
        Profile::from_json(&p.to_json().to_string(), origin).map_err(crate::error::bad_input)?;
    let checks = disk
        .tests
        .iter()
        .map(|t| {
            (
                *t,
                microbench::mixed_iops(&profile, t.block_kib * 1024, YABS_QD, 1),
            )
        })
        .collect();
    Ok(Import {
        profile,
        checks,
        notes,
    })
}

/// Sets `p`'s bandwidth from the higher of the 512k and 1m tests' total
/// throughput (else keeps `base`'s), and says which.
fn bandwidth(disk: &Disk, p: &mut Profile, base: &Profile) -> String {
    let large = disk
        .tests
        .iter()
        .filter(|t| t.block_kib >= 512 && t.total_mib_s() > 0.0)
        .max_by(|a, b| a.total_mib_s().total_cmp(&b.total_mib_s()));
    match large {
        Some(t) => {
            p.bandwidth_mib_s = t.total_mib_s();
            // A throughput that leaves the base's QD1 latencies no time
            // beyond moving their bytes is a limit on the disk, not its
            // medium's speed: a cap, with the base's medium kept.
            let too_slow = p.fixed_us(Op::Read) >= p.read.median_us
                || p.fixed_us(Op::Write) >= p.write.median_us;
            if too_slow {
                p.bandwidth_mib_s = base.bandwidth_mib_s;
                p.caps.mib_s = Some(t.total_mib_s());
                return format!(
                    "caps.mib_s {:.0}: the {} test's total throughput, the higher of 512k and 1m, \
                     too slow for {}'s QD1 latencies to be its medium's speed",
                    t.total_mib_s(),
                    label_kib(t.block_kib),
                    base.name
                );
            }
            format!(
                "bandwidth_mib_s {:.0}: the {} test's total throughput, the higher of 512k and 1m",
                p.bandwidth_mib_s,
                label_kib(t.block_kib)
            )
        }
        None => format!(
            "bandwidth_mib_s {:.0}: from {} (no 512k or 1m test)",
            p.bandwidth_mib_s, base.name
        ),
    }
}

/// Matches `p`'s 4k IOPS to the YABS test `t4`: a cap when the base's
/// latencies and channels run faster than the disk did, more channels when
/// slower. Returns what it decided.
fn cap_or_channels(p: &mut Profile, base: &Profile, t4: &Test) -> Vec<String> {
    let mut notes = Vec::new();
    let bytes = t4.block_kib * 1024;
    let uncapped = microbench::mixed_iops(p, bytes, YABS_QD, 1);
    let measured = t4.total_iops();
    if uncapped > measured * AGREEMENT {
        p.caps.iops = Some(measured.round());
        notes.push(format!(
            "caps.iops {:.0}: the 4k total; with {}'s latencies and {} channels the disk would \
             run {:.0} IOPS at 128 in flight, so something holds it back (a provisioned cap, or \
             a slower disk: YABS cannot tell them apart)",
            measured, base.name, p.channels, uncapped
        ));
    } else if uncapped * AGREEMENT < measured {
        let k = (f64::from(p.channels) * measured / uncapped).ceil() as u32;
        p.channels = k.clamp(1, CHANNELS_MAX);
        notes.push(format!(
            "channels {}: {}'s {} raised in proportion, as the disk ran the 4k test at {:.0} \
             IOPS against {:.0} with the base's",
            p.channels, base.name, base.channels, measured, uncapped
        ));
        let now = microbench::mixed_iops(p, bytes, YABS_QD, 1);
        if now * AGREEMENT < measured {
            notes.push(format!(
                "still {now:.0} IOPS: with 128 in flight the disk's mean latency was {:.0} µs \
                 (Little's law), below {}'s QD1 latencies; give a faster --base, or a measured \
                 profile (pgiosim calibrate, profile from-fio)",
                f64::from(YABS_QD) / measured * 1e6,
                base.name
            ));
        }
    } else {
        notes.push(format!(
            "channels {}: {}'s, which already runs the 4k test at {:.0} IOPS (YABS {:.0})",
            p.channels, base.name, uncapped, measured
        ));
    }
    notes
}

/// The profile's `source`: the YABS figures, how each field was decided
/// (`notes`) and what comes from `base`.
fn source(disk: &Disk, base: &Profile, origin: &str, notes: &[String]) -> String {
    let figures = disk
        .tests
        .iter()
        .map(|t| {
            format!(
                "{} {:.0} read + {:.0} write IOPS, {:.1} MiB/s",
                label_kib(t.block_kib),
                t.read_iops,
                t.write_iops,
                t.total_mib_s()
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    format!(
        "pgiosim profile from-yabs {} ({}): YABS fio randrw 50/50, 2 jobs x QD64, direct, 30 s: \
         {figures}. {} YABS does not measure QD1 latency, fsync/fdatasync latency or whether \
         flushes scale, nor the round trip: read, write, flush, flush_to_media and \
         network_rtt_us are the {} profile's ({}), and so are {}, which only calibrate \
         measures.",
        origin_file(origin),
        disk.label,
        notes.join("; "),
        base.name,
        base.description,
        crate::device::profile::CALIBRATE_ONLY_FIELDS
    )
}

fn origin_file(origin: &str) -> &str {
    Path::new(origin)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or(origin)
}

/// The table `profile from-yabs` prints: each test, YABS against the model.
pub fn render_table(imp: &Import) -> String {
    let mut out = format!(
        "{:<6} {:>12} {:>12} {:>12} {:>8}\n",
        "block", "YABS IOPS", "YABS MiB/s", "model IOPS", "error"
    );
    for (t, model) in &imp.checks {
        out += &format!(
            "{:<6} {:>12.0} {:>12.1} {:>12.0} {:>+7.1}%\n",
            label_kib(t.block_kib),
            t.total_iops(),
            t.total_mib_s(),
            model,
            (model / t.total_iops() - 1.0) * 100.0
        );
    }
    out
}

/// The MiB/s of `iops` I/Os of `kib` KiB.
pub fn mib_s(iops: f64, kib: u64) -> f64 {
    iops * kib as f64 * 1024.0 / MIB
}

#[cfg(test)]
mod tests {
    use super::*;

    const NORIS: &str = include_str!("../../../tests/fixtures/yabs-noris.txt");

    fn disks() -> Vec<Disk> {
        parse(NORIS, "yabs-noris.txt").unwrap()
    }

    #[test]
    fn the_three_noris_disks_parse() {
        let d = disks();
        let labels: Vec<&str> = d.iter().map(|d| d.label.as_str()).collect();
        assert_eq!(labels, ["/dev/sda1", "/dev/sdb", "/dev/sdc"]);
        for disk in &d {
            let sizes: Vec<u64> = disk.tests.iter().map(|t| t.block_kib).collect();
            assert_eq!(sizes, BLOCK_KIB, "{}", disk.label);
        }
        // Local disk 4k: 20.53 + 20.55 MB/s beside (5.0k) each: MB of
        // 10^6 bytes here (in KiB the IOPS would be 5.1k).
        let t = d[0].test(4).unwrap();
        assert!((t.read_kib_s - 20_530_000.0 / 1024.0).abs() < 1e-6);
        assert!((t.read_iops - 5_012.2).abs() < 0.1, "{}", t.read_iops);
        // rbd_fast 1m: 129.99 + 138.65 MB/s beside (123) and (132).
        let t = d[1].test(1024).unwrap();
        assert!((t.total_mib_s() - 268_640_000.0 / 1_048_576.0).abs() < 1e-6);
        assert!((t.read_iops - 124.0).abs() < 0.1, "{}", t.read_iops);
        // The LUKS disk's 512k and 1m block has no Total row: not needed.
        let t = d[2].test(512).unwrap();
        assert!((t.write_kib_s - 188_790_000.0 / 1024.0).abs() < 1e-6);
    }

    #[test]
    fn text_iops_agree_with_the_figures_yabs_printed() {
        // (disk, block, read IOPS YABS printed): derived IOPS sit between it
        // and the next 0.1k (or within 1 below 1,000).
        for (disk, kib, shown) in [
            (0, 4, 5000.0),
            (0, 64, 3100.0),
            (0, 512, 405.0),
            (1, 4, 1600.0),
            (1, 64, 1500.0),
            (1, 512, 277.0),
            (2, 4, 17500.0),
            (2, 1024, 157.0),
        ] {
            let t = *disks()[disk].test(kib).unwrap();
            let step = if shown >= 1000.0 { 100.0 } else { 1.0 };
            assert!(
                t.read_iops >= shown - 1.0 && t.read_iops < shown + step,
                "disk {disk} {kib}k: {} vs {shown}",
                t.read_iops
            );
        }
    }

    #[test]
    fn profiles_reproduce_the_4k_rate_and_the_large_block_throughput() {
        let base = Profile::shipped("nvme").unwrap();
        for disk in disks() {
            let imp = build(&disk, "yabs-disk", &base, "yabs-noris.txt").unwrap();
            let (t4, m4) = imp.checks[0];
            assert_eq!(t4.block_kib, 4);
            assert!(
                (m4 / t4.total_iops() - 1.0).abs() < 0.10,
                "{}: 4k model {m4:.0} vs YABS {:.0}",
                disk.label,
                t4.total_iops()
            );
            let best_large = disk
                .tests
                .iter()
                .filter(|t| t.block_kib >= 512)
                .map(|t| t.total_mib_s())
                .fold(0.0, f64::max);
            let (t1m, m1m) = imp.checks[3];
            let model_mib_s = mib_s(m1m, t1m.block_kib);
            assert!(
                model_mib_s <= best_large * 1.05 && model_mib_s >= best_large * 0.85,
                "{}: 1m model {model_mib_s:.0} MiB/s vs best large {best_large:.0}",
                disk.label
            );
            // What YABS does not measure is said, and comes from the base.
            assert!(imp.profile.source.contains("fsync/fdatasync"));
            assert_eq!(imp.profile.flush, base.flush);
            assert_eq!(imp.profile.read, base.read);
        }
    }

    #[test]
    fn slow_disks_get_a_cap_and_fast_ones_channels() {
        let base = Profile::shipped("nvme").unwrap();
        let d = disks();
        let rbd = build(&d[1], "rbd", &base, "x").unwrap();
        assert_eq!(rbd.profile.caps.iops, Some(3_247.0));
        // 400,000 IOPS at 4k against a base with 8 channels: the importer
        // adds channels instead of a cap.
        let mut few = base.clone();
        few.channels = 8;
        let fast = |iops: f64| Disk {
            label: "fast".into(),
            tests: vec![
                Test {
                    block_kib: 4,
                    read_kib_s: iops * 2.0,
                    write_kib_s: iops * 2.0,
                    read_iops: iops / 2.0,
                    write_iops: iops / 2.0,
                },
                Test {
                    block_kib: 1024,
                    read_kib_s: 10_485_760.0,
                    write_kib_s: 10_485_760.0,
                    read_iops: 10_240.0,
                    write_iops: 10_240.0,
                },
            ],
        };
        let imp = build(&fast(400_000.0), "fast", &few, "x").unwrap();
        assert!(imp.profile.caps.iops.is_none());
        assert!(imp.profile.channels > few.channels);
        assert_eq!(imp.profile.bandwidth_mib_s, 20_480.0);
        assert!(
            (imp.checks[0].1 / 4e5 - 1.0).abs() < 0.10,
            "{}",
            imp.checks[0].1
        );
        // 2.5 M IOPS at 128 in flight is a 51 µs mean: faster than nvme's
        // QD1 latencies, which channels cannot fix; the notes say so.
        let imp = build(&fast(2.5e6), "fast", &base, "x").unwrap();
        assert!(
            imp.notes.iter().any(|n| n.contains("give a faster --base")),
            "{:?}",
            imp.notes
        );
    }

    #[test]
    fn a_throughput_too_slow_for_the_bases_latencies_is_a_cap() {
        // 4 KiB at 100 MiB/s takes 39 µs, more than nvme's 37 µs QD1
        // write: the disk's 1m figure limits it, it is not the medium.
        let base = Profile::shipped("nvme").unwrap();
        let slow = Disk {
            label: "slow".into(),
            tests: vec![
                Test {
                    block_kib: 4,
                    read_kib_s: 4_000.0,
                    write_kib_s: 4_000.0,
                    read_iops: 1_000.0,
                    write_iops: 1_000.0,
                },
                Test {
                    block_kib: 1024,
                    read_kib_s: 51_200.0,
                    write_kib_s: 51_200.0,
                    read_iops: 50.0,
                    write_iops: 50.0,
                },
            ],
        };
        let imp = build(&slow, "slow", &base, "x").unwrap();
        assert_eq!(imp.profile.caps.mib_s, Some(100.0));
        assert_eq!(imp.profile.bandwidth_mib_s, base.bandwidth_mib_s);
    }

    #[test]
    fn json_parses_like_text() {
        let json = r#"{"version":"v2022-08-17","fio":[
            {"bs":"4k","speed_r":165590,"iops_r":41397,"speed_w":166027,"iops_w":41506,"speed_rw":331617,"iops_rw":82903,"speed_units":"KBps"},
            {"bs":"64k","speed_r":198505,"iops_r":3101,"speed_w":199549,"iops_w":3117,"speed_rw":398054,"iops_rw":6218},
            {"bs":"512k","speed_r":227239,"iops_r":443,"speed_w":239313,"iops_w":467,"speed_rw":466552,"iops_rw":910},
            {"bs":"1m","speed_r":238296,"iops_r":232,"speed_w":254166,"iops_w":248,"speed_rw":492462,"iops_rw":480}]}"#;
        let d = parse(json, "yabs.json").unwrap();
        assert_eq!(d.len(), 1);
        assert_eq!(d[0].test(4).unwrap().read_iops, 41_397.0);
        assert_eq!(d[0].test(1024).unwrap().write_kib_s, 254_166.0);
    }

    #[test]
    fn bad_input_names_the_file_and_the_line() {
        let e = format!("{:#}", parse("hello", "x.txt").unwrap_err());
        assert!(e.contains("x.txt: no 'fio Disk Speed Tests'"), "{e}");
        let broken = NORIS.replacen("Read       | 20.53 MB/s    (5.0k)", "Read | fast", 1);
        let e = format!("{:#}", parse(&broken, "n.txt").unwrap_err());
        assert!(e.contains("n.txt: line ") && e.contains("Read row"), "{e}");
        let e = format!(
            "{:#}",
            parse(r#"{"fio":[{"bs":"8k"}]}"#, "j.json").unwrap_err()
        );
        assert!(e.contains("j.json: fio[0].bs: \"8k\""), "{e}");
        let e = format!(
            "{:#}",
            parse(r#"{"fio":[{"bs":"4k","speed_r":1}]}"#, "j.json").unwrap_err()
        );
        assert!(e.contains("fio[0].speed_w: missing"), "{e}");
        let e = format!("{:#}", parse(r#"{"cpu":{}}"#, "j.json").unwrap_err());
        assert!(e.contains("no \"fio\" array"), "{e}");
    }

    proptest::proptest! {
        // Each case runs the device model on YABS's tests (a tenth of a
        // second in release): few cases, over the whole range parse lets
        // through, from a slow capped volume to a disk beyond any base.
        #![proptest_config(proptest::prelude::ProptestConfig {
            cases: 24,
            failure_persistence: None,
            ..Default::default()
        })]

        /// What the fuzz target no longer runs: `build` over any disk
        /// `parse` accepts gives a valid profile whose 4k rate is the
        /// disk's, through a cap or more channels, or a note saying why not.
        #[test]
        fn build_fits_any_disk_parse_accepts(
            log_iops in 1.0f64..7.5,
            read_share in 0.05f64..0.95,
            large in proptest::option::of(2.0f64..6.0),
            base_name in proptest::sample::select(vec!["nvme", "gp3", "ceph-rbd"]),
        ) {
            let iops = 10f64.powf(log_iops);
            let mut tests = vec![Test {
                block_kib: 4,
                read_kib_s: iops * read_share * 4.0,
                write_kib_s: iops * (1.0 - read_share) * 4.0,
                read_iops: iops * read_share,
                write_iops: iops * (1.0 - read_share),
            }];
            if let Some(log_mib) = large {
                let kib_s = 10f64.powf(log_mib) * 1024.0 / 2.0;
                tests.push(Test {
                    block_kib: 1024,
                    read_kib_s: kib_s,
                    write_kib_s: kib_s,
                    read_iops: kib_s / 1024.0,
                    write_iops: kib_s / 1024.0,
                });
            }
            for t in &tests {
                check_figures(t).expect("the generator stays inside parse's bounds");
            }
            let disk = Disk { label: "d".into(), tests };
            let base = Profile::shipped(base_name).unwrap();
            let imp = build(&disk, "d", &base, "d.txt").expect("a disk parse accepts builds");
            proptest::prop_assert_eq!(imp.checks.len(), disk.tests.len());
            let model_4k = imp.checks[0].1;
            proptest::prop_assert!(model_4k.is_finite() && model_4k > 0.0);
            let slow_base = imp.notes.iter().any(|n| n.contains("give a faster --base"));
            match imp.profile.caps.iops {
                // A cap at the disk's rate holds the model to it.
                Some(cap) => {
                    proptest::prop_assert_eq!(cap, iops.round());
                    proptest::prop_assert!(model_4k <= cap * AGREEMENT, "{} over a cap of {}", model_4k, cap);
                }
                None if !slow_base => proptest::prop_assert!(
                    model_4k * AGREEMENT >= iops && model_4k <= iops * AGREEMENT * AGREEMENT,
                    "model {} against {} IOPS: {:?}", model_4k, iops, imp.notes
                ),
                None => {}
            }
            if let Some(log_mib) = large {
                let mib = 10f64.powf(log_mib);
                // The medium's speed, or a cap where the base's QD1
                // latencies leave it no room to be that.
                let taken = imp.profile.caps.mib_s.unwrap_or(imp.profile.bandwidth_mib_s);
                proptest::prop_assert!((taken / mib - 1.0).abs() < 1e-6);
            }
            let table = render_table(&imp);
            proptest::prop_assert_eq!(table.lines().count(), 1 + disk.tests.len());
        }
    }
}
