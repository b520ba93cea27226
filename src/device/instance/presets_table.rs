//! Reading the preset table (`presets.tsv`) and the module's other data
//! files: source lines, rows of tab-separated cells, each cell checked and
//! an error naming its line.

use super::*;

/// A data file of this module (`presets.tsv`, `gcp_vm_limits.tsv`) read as
/// text: its `@KEY<TAB>text` source lines, and its rows of tab-separated
/// cells with their line numbers; blank lines and `#` comments skipped.
pub(in crate::device::instance) struct Tsv {
    pub sources: Vec<(&'static str, &'static str)>,
    pub rows: Vec<(usize, Vec<&'static str>)>,
}

/// `text`'s sources and rows, each row `columns` cells; an error names
/// the line.
pub(in crate::device::instance) fn read_tsv(
    text: &'static str,
    columns: usize,
) -> Result<Tsv, String> {
    let mut tsv = Tsv {
        sources: Vec::new(),
        rows: Vec::new(),
    };
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(def) = line.strip_prefix('@') {
            let source = def
                .split_once('\t')
                .ok_or_else(|| at_line(n, "a source line is @KEY, a tab, the text".into()))?;
            tsv.sources.push(source);
            continue;
        }
        let cells: Vec<&'static str> = line.split('\t').collect();
        if cells.len() != columns {
            return Err(at_line(
                n,
                format!("{} columns, not {columns}", cells.len()),
            ));
        }
        tsv.rows.push((n, cells));
    }
    Ok(tsv)
}

/// An error of a data file's line `n` (1-based).
pub(in crate::device::instance) fn at_line(n: usize, e: String) -> String {
    format!("line {n}: {e}")
}

/// Columns of a preset row.
const COLUMNS: usize = 15;

/// The presets of `text` (the format of `presets.tsv`), their stores'
/// figures computed ([`aws_store::figures`]); an error names the line.
pub(in crate::device::instance) fn parse_table(text: &'static str) -> Result<Table, String> {
    let Tsv { sources, rows } = read_tsv(text, COLUMNS)?;
    let rows = rows
        .iter()
        .map(|(n, cols)| parse_row(cols).map_err(|e| at_line(*n, e)))
        .collect::<Result<Vec<_>, _>>()?;
    for (i, row) in rows.iter().enumerate() {
        if !sources.iter().any(|(k, _)| *k == row.0.source_key) {
            return Err(format!(
                "{}: source {:?} has no @ line",
                row.0.name, row.0.source_key
            ));
        }
        if rows[..i]
            .iter()
            .any(|r| r.0.name.eq_ignore_ascii_case(row.0.name))
        {
            return Err(format!("{}: two rows", row.0.name));
        }
        // A key that names no class would read as "no CPU class" at
        // lookup: refuse it here, so '-' is the only way to say none.
        if let Some(k) = row.0.cpu_key
            && cpu_class(k).is_none()
        {
            return Err(format!(
                "{}: cpu {k:?} is not a key of cpus.tsv",
                row.0.name
            ));
        }
    }
    let instances = aws_store::figures(rows)?;
    Ok(Table { instances, sources })
}

/// A row: the instance without its store, and the store's published
/// columns when it has one.
pub(in crate::device::instance) type Row = (Instance, Option<aws_store::Published>);

fn parse_row(c: &[&'static str]) -> Result<Row, String> {
    let cells = Cells(c);
    let name = c[0];
    let provider = Provider::parse(c[1]).ok_or_else(|| format!("{name}: provider {:?}", c[1]))?;
    let volume_limits = cells.volume_limits()?;
    let (published, unmeasured_disk) = cells.store()?;
    let inst = Instance {
        name,
        provider,
        vcpus: cells.count(2, "vcpus")?,
        threads_per_core: cells.count(3, "threads")?,
        memory_gib: cells.num(4, "memory_gib")?,
        volume_limits,
        store: None,
        unmeasured_disk,
        source_key: c[13],
        cpu_key: Some(c[14]).filter(|k| *k != "-"),
    };
    Ok((inst, published))
}

/// The cells of one row of the table.
struct Cells<'a>(&'a [&'static str]);

impl Cells<'_> {
    /// Cell `i`, column `what`, as a number above 0.
    fn num(&self, i: usize, what: &str) -> Result<f64, String> {
        self.0[i]
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite() && *v > 0.0)
            .ok_or_else(|| format!("{what}: {:?} is not a number above 0", self.0[i]))
    }

    /// Cell `i`, column `what`, as a count above 0.
    fn count(&self, i: usize, what: &str) -> Result<u32, String> {
        self.0[i]
            .parse::<u32>()
            .ok()
            .filter(|v| *v > 0)
            .ok_or_else(|| format!("{what}: {:?} is not a count above 0", self.0[i]))
    }

    /// IOPS a provider may leave unpublished: '-'.
    fn opt(&self, i: usize, what: &str) -> Result<Option<f64>, String> {
        if self.0[i] == "-" {
            Ok(None)
        } else {
            self.num(i, what).map(Some)
        }
    }

    /// Whether every cell in `range` is '-'.
    fn dash(&self, range: std::ops::Range<usize>) -> bool {
        self.0[range].iter().all(|v| *v == "-")
    }

    /// The limits of the server's network volumes, if it has any.
    fn volume_limits(&self) -> Result<Option<VolumeLimits>, String> {
        if self.dash(5..9) {
            return Ok(None);
        }
        let (baseline_mb_s, max_mb_s) =
            (self.num(5, "vol_base_mb_s")?, self.num(6, "vol_max_mb_s")?);
        let (baseline_iops, max_iops) =
            (self.num(7, "vol_base_iops")?, self.num(8, "vol_max_iops")?);
        Ok(Some(VolumeLimits {
            baseline_throughput: baseline_mb_s,
            max_throughput: max_mb_s,
            unit: ThroughputUnit::MBps,
            baseline_iops,
            max_iops,
            bursts: max_iops > baseline_iops || max_mb_s > baseline_mb_s,
        }))
    }

    /// The store's volumes.
    fn disk(&self) -> Result<LocalDisk, String> {
        self.0[9]
            .split_once('x')
            .and_then(|(n, gb)| Some((n.parse::<u32>().ok()?, gb.parse::<u32>().ok()?)))
            .filter(|(n, gb)| *n > 0 && *gb > 0)
            .map(|(volumes, volume_gb)| LocalDisk { volumes, volume_gb })
            .ok_or_else(|| format!("store_volumes: {:?} is not COUNTxGB", self.0[9]))
    }

    /// The instance store: its published columns, or its volumes alone
    /// when no one has measured it.
    fn store(&self) -> Result<(Option<aws_store::Published>, Option<LocalDisk>), String> {
        // Volumes without figures: a disk no one has measured; figures
        // without volumes: an error, as the figures are per size.
        if self.dash(9..13) {
            return Ok((None, None));
        }
        if self.0[12] == "-" {
            if !self.dash(10..12) {
                return Err(format!(
                    "{}: store IOPS without store_figures: say where they come from",
                    self.0[0]
                ));
            }
            return Ok((None, Some(self.disk()?)));
        }
        let d = self.disk()?;
        let published = aws_store::Published {
            volumes: d.volumes,
            volume_gb: d.volume_gb,
            read_iops: self.opt(10, "store_read_iops")?,
            write_iops: self.opt(11, "store_write_iops")?,
            figures: self.0[12],
        };
        Ok((Some(published), None))
    }
}
