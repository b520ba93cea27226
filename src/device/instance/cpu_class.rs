//! CPU classes: the processor an instance preset runs on, and how fast one
//! of its cores is relative to the AMD EPYC 9454P.
//!
//! pgiosim's CPU figures (docs/cpu-model.md) are times measured on Mark
//! Callaghan's 9454P, SMT off. On another CPU the same work takes
//! (9454P time ÷ [`CpuClass::speed`]): the speed is per physical core
//! running one thread, because the model already shares a core between the
//! two hyperthreads of an x86 vCPU pair (`threads_per_core`,
//! src/core/cpu.rs) and must not count that twice.
//!
//! The classes are data, one row per processor in `cpus.tsv` beside this
//! file (read once, at first use, from the binary: `include_str!`), each
//! with the figures its speed comes from: the median Geekbench 6
//! single-core scores of four scalar integer workloads (File Compression,
//! Navigation, Clang, Text Processing) over the instance types Spare Cores
//! measured with that CPU in the families whose presets use the class (a
//! processor that reads more than the ±5% spread apart on two families,
//! the 8370C on Azure Dsv5 and Lsv3, is two classes), and
//! `speed = geomean(the four) / geomean(the 9454P's four)`, rounded to two
//! places. One dataset for every row, so the ratios share a method; the
//! headline score is kept but not used, since its machine-learning and
//! image workloads lean on vector units PostgreSQL does not use. The file's
//! header gives the sources, the bridge from the EPYC 9454 to the 9454P,
//! and why GCP n2 and Hetzner CX have no class. Presets name their class in
//! `presets.tsv` (column `cpu`): [`super::Instance::cpu_class`].

use std::sync::LazyLock;

/// The class table: see its header.
const CPUS_TSV: &str = include_str!("cpus.tsv");

/// The key of the class whose cores are the reference, speed 1.
pub const REFERENCE: &str = "epyc-9454p";

/// How many decimals the speed column keeps: the sizes of one class spread
/// by about ±5%, so more would be false precision.
const SPEED_DECIMALS: i32 = 2;

/// A processor and its speed per core relative to the EPYC 9454P.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CpuClass {
    /// As presets.tsv names it: `xeon-8375c`, `graviton3`, `epyc-9454p`.
    pub key: &'static str,
    /// The processor, as lscpu and the provider name it.
    pub name: &'static str,
    /// Work per second of one core running one thread, relative to a 9454P
    /// core: 0.84 means each CPU cost takes 1/0.84 times as long.
    pub speed: f64,
    /// Geekbench 6 single-core scores, medians over [`CpuClass::measured`]:
    /// File Compression, Navigation, Clang, Text Processing.
    pub workloads: [f64; 4],
    /// The Geekbench 6 single-core headline score, median; for comparison
    /// only (see the module doc).
    pub gb6_score: f64,
    /// The instance types the medians are over.
    pub measured: &'static str,
    /// The key of the row's source line (`sparecores`).
    pub source_key: &'static str,
    /// The text of the row's source: dataset, commit, files.
    pub source: &'static str,
}

impl CpuClass {
    /// The geometric mean of [`CpuClass::workloads`]: the figure the speed
    /// is a ratio of.
    pub fn workload_geomean(&self) -> f64 {
        geomean(&self.workloads)
    }

    /// One line for `pgiosim instances`.
    pub fn summary(&self) -> String {
        format!("{} ×{:.2}", self.name, self.speed)
    }
}

fn geomean(v: &[f64]) -> f64 {
    (v.iter().map(|x| x.ln()).sum::<f64>() / v.len() as f64).exp()
}

/// The classes and their sources, parsed once.
struct Table {
    classes: Vec<CpuClass>,
    sources: Vec<(&'static str, &'static str)>,
}

static TABLE: LazyLock<Table> = LazyLock::new(|| {
    parse_table(CPUS_TSV).unwrap_or_else(|e| panic!("src/device/instance/cpus.tsv: {e}"))
});

/// Every class, in the file's order (the 9454P first).
pub fn cpu_classes() -> &'static [CpuClass] {
    &TABLE.classes
}

/// The class `key` (case-insensitive); None for an unknown key and for '-',
/// a preset whose provider does not fix the processor.
pub fn cpu_class(key: &str) -> Option<&'static CpuClass> {
    cpu_classes()
        .iter()
        .find(|c| c.key.eq_ignore_ascii_case(key))
}

/// Every source the classes cite, (key, text), in the file's order; some
/// (the processor assignments) are cited by presets.tsv's header, not by a
/// row.
pub fn cpu_sources() -> &'static [(&'static str, &'static str)] {
    &TABLE.sources
}

/// Columns of a class row.
const COLUMNS: usize = 10;

/// The classes of `text` (the format of `cpus.tsv`); an error names the
/// line. Checks that each speed is the ratio its figures give, so the
/// figures and the speed cannot drift apart in an edit.
fn parse_table(text: &'static str) -> Result<Table, String> {
    let (sources, rows) = source_and_class_lines(text)?;
    let mut classes: Vec<CpuClass> = Vec::new();
    for (line, c) in &rows {
        let at = |e: String| format!("line {line}: {e}");
        let num = |i: usize| -> Result<f64, String> {
            c[i].parse::<f64>()
                .ok()
                .filter(|v| v.is_finite() && *v > 0.0)
                .ok_or_else(|| {
                    at(format!(
                        "column {}: {:?} is not a number above 0",
                        i + 1,
                        c[i]
                    ))
                })
        };
        let source = sources
            .iter()
            .find(|(k, _)| *k == c[9])
            .map(|(_, t)| *t)
            .ok_or_else(|| at(format!("source {:?} has no @ line", c[9])))?;
        if classes.iter().any(|k| k.key.eq_ignore_ascii_case(c[0])) {
            return Err(at(format!("{}: two rows", c[0])));
        }
        classes.push(CpuClass {
            key: c[0],
            name: c[1],
            speed: num(2)?,
            workloads: [num(3)?, num(4)?, num(5)?, num(6)?],
            gb6_score: num(7)?,
            measured: c[8],
            source_key: c[9],
            source,
        });
    }
    check_speeds(&classes)?;
    Ok(Table { classes, sources })
}

/// A class row of the table: its line number and its columns.
type ClassRow = (usize, [&'static str; COLUMNS]);
/// A source line of the table: its key and its text.
type SourceLine = (&'static str, &'static str);

/// The source lines (`@KEY`, a tab, the text) of `text` and its class
/// rows.
fn source_and_class_lines(text: &'static str) -> Result<(Vec<SourceLine>, Vec<ClassRow>), String> {
    let mut sources = Vec::new();
    let mut rows: Vec<ClassRow> = Vec::new();
    for (n, line) in text.lines().enumerate() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(def) = line.strip_prefix('@') {
            let (key, text) = def
                .split_once('\t')
                .ok_or_else(|| format!("line {}: a source line is @KEY, a tab, the text", n + 1))?;
            sources.push((key, text));
            continue;
        }
        let cols: Vec<&'static str> = line.split('\t').collect();
        let cols: [&'static str; COLUMNS] = cols
            .as_slice()
            .try_into()
            .map_err(|_| format!("line {}: {} columns, not {COLUMNS}", n + 1, cols.len()))?;
        rows.push((n + 1, cols));
    }
    Ok((sources, rows))
}

/// Checks that each class's speed is the ratio its figures give against
/// the [`REFERENCE`] class's.
fn check_speeds(classes: &[CpuClass]) -> Result<(), String> {
    let reference = classes
        .iter()
        .find(|c| c.key == REFERENCE)
        .ok_or_else(|| format!("no {REFERENCE} row: the speeds are relative to it"))?
        .workload_geomean();
    let scale = 10f64.powi(SPEED_DECIMALS);
    for c in classes {
        let ratio = (c.workload_geomean() / reference * scale).round() / scale;
        if (ratio - c.speed).abs() > 1e-9 {
            return Err(format!(
                "{}: speed {} but its figures give {ratio:.2}",
                c.key, c.speed
            ));
        }
    }
    Ok(())
}

/// The per-core speed of preset `name`'s CPU class, for `--instance NAME`
/// where a source server is named; the error is the one line `--instance`
/// reports.
pub fn preset_speed(name: &str) -> Result<f64, String> {
    let i = super::lookup(name)
        .ok_or_else(|| format!("--instance {name}: no such preset (see `pgiosim instances`)"))?;
    i.cpu_class()
        .map(|c| c.speed)
        .ok_or_else(|| format!("--instance {name}: its processor is not fixed; give --cpu-speed"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::instance::{Provider, instances};

    #[test]
    fn the_table_parses_and_the_9454p_is_1() {
        assert!(cpu_classes().len() >= 8);
        let r = cpu_class(REFERENCE).unwrap();
        assert_eq!(r.speed, 1.0);
        assert!(r.name.contains("9454P"), "{}", r.name);
        assert_eq!(cpu_classes()[0].key, REFERENCE);
        assert!(cpu_class("-").is_none());
        assert!(cpu_class("xeon-9999").is_none());
        for c in cpu_classes() {
            assert!(c.source.contains("github.com"), "{}", c.key);
            assert!(!c.measured.is_empty() && !c.name.is_empty());
            // Plausible for server cores of 2017-2025 against a Zen 4.
            assert!((0.3..1.5).contains(&c.speed), "{}: {}", c.key, c.speed);
        }
        assert!(cpu_sources().iter().any(|(k, _)| *k == "aws-cpus"));
    }

    #[test]
    fn known_rows() {
        let ice = cpu_class("XEON-8375C").unwrap();
        assert_eq!(ice.speed, 0.84);
        assert_eq!(ice.workloads, [1608.0, 1548.0, 1763.0, 1660.0]);
        assert_eq!(cpu_class("graviton2").unwrap().speed, 0.53);
        assert_eq!(cpu_class("graviton3").unwrap().speed, 0.72);
        assert_eq!(cpu_class("graviton4").unwrap().speed, 0.95);
        assert_eq!(cpu_class("xeon-8559c").unwrap().speed, 1.10);
        // AWS's Sapphire Rapids (m7i, r7i, c7i), 27 sizes.
        let spr = cpu_class("xeon-8488c").unwrap();
        assert_eq!(spr.workloads, [1824.0, 1522.0, 2035.0, 2132.0]);
        assert_eq!(spr.speed, 0.95);
        // The bridge's check: AWS's SMT-off Genoa at 3.7 GHz against the
        // 9454P's 3.8 GHz boost, within 2% of the clock ratio.
        let r14 = cpu_class("epyc-9r14").unwrap().speed;
        assert!((r14 - 3.7 / 3.8).abs() < 0.02, "{r14}");
        // Newer cores are faster: the order the generations should have.
        let s = |k: &str| cpu_class(k).unwrap().speed;
        assert!(s("graviton2") < s("graviton3") && s("graviton3") < s("graviton4"));
        assert!(s("xeon-8175m-8259cl") < s("xeon-8375c") && s("xeon-8375c") < s("xeon-8559c"));
        assert!(s("epyc-7763") < s("epyc-9v74") && s("epyc-milan") < s("epyc-9454p"));
        assert!(s("xeon-8370c-lsv3") < s("xeon-8573c"));
        // The new rows, recomputed from their medians by the parser; two
        // pinned here against the dataset's numbers.
        let n1 = cpu_class("neoverse-n1-cax").unwrap();
        assert_eq!(n1.workloads, [1072.0, 1043.5, 1252.0, 1090.0]);
        assert_eq!(n1.speed, 0.57);
        assert_eq!(cpu_class("epyc-7b13").unwrap().speed, 0.74);
        // GCP c4 (the 8581C sizes) and n4, from the same dataset.
        let c4 = cpu_class("xeon-8581c").unwrap();
        assert_eq!(c4.workloads, [1976.0, 2025.0, 2173.0, 2223.0]);
        assert_eq!(c4.speed, 1.07);
        assert_eq!(cpu_class("xeon-n4").unwrap().speed, 0.88);
    }

    #[test]
    fn every_preset_names_a_class_or_none() {
        for i in instances() {
            match i.cpu_key {
                Some(k) => assert_eq!(i.cpu_class().map(|c| c.key), Some(k), "{}", i.name),
                None => assert!(i.cpu_class().is_none()),
            }
            // Only GCP n2 (by zone), GCP c4a (no Geekbench run) and
            // Hetzner CX (Intel or AMD by size) leave the processor open.
            let open = match i.provider {
                Provider::Gcp => i.name.starts_with("n2-") || i.name.starts_with("c4a-"),
                Provider::Hetzner => i.name.starts_with("cx"),
                Provider::Aws | Provider::Azure => false,
            };
            assert_eq!(i.cpu_key.is_none(), open, "{}", i.name);
        }
        let m6id = crate::device::instance::lookup("m6id.4xlarge").unwrap();
        assert_eq!(m6id.cpu_class().unwrap().key, "xeon-8375c");
        let key = |n: &str| crate::device::instance::lookup(n).unwrap().cpu_key;
        assert_eq!(key("m6gd.large"), Some("graviton2"));
        assert_eq!(key("m7g.4xlarge"), Some("graviton3"));
        assert_eq!(key("m7gd.4xlarge"), Some("graviton3"));
        assert_eq!(key("m8gd.48xlarge"), Some("graviton4"));
        assert_eq!(key("i3en.large"), Some("xeon-8175m-8259cl"));
        assert_eq!(key("i4i.large"), Some("xeon-8375c"));
        assert_eq!(key("i7i.large"), Some("xeon-8559c"));
        assert_eq!(key("c6id.large"), Some("xeon-8375c"));
        for n in ["m7i.large", "r7i.24xlarge", "c7i.48xlarge"] {
            assert_eq!(key(n), Some("xeon-8488c"), "{n}");
        }
        for n in ["m7a.large", "r7a.24xlarge", "c7a.48xlarge"] {
            assert_eq!(key(n), Some("epyc-9r14"), "{n}");
        }
        assert_eq!(key("Standard_D16s_v5"), Some("xeon-8370c"));
        assert_eq!(key("Standard_E16ds_v5"), Some("xeon-8370c"));
        assert_eq!(key("Standard_D16as_v5"), Some("epyc-7763"));
        assert_eq!(key("Standard_L16s_v3"), Some("xeon-8370c-lsv3"));
        assert_eq!(key("Standard_L16as_v3"), Some("epyc-7763"));
        assert_eq!(key("Standard_L16s_v4"), Some("xeon-8573c"));
        assert_eq!(key("Standard_L16as_v4"), Some("epyc-9v74"));
        assert_eq!(key("n2-standard-16"), None);
        assert_eq!(key("n2d-standard-16"), Some("epyc-7b13"));
        assert_eq!(key("c3-standard-22"), Some("xeon-8481c"));
        assert_eq!(key("c4-standard-16"), Some("xeon-8581c"));
        assert_eq!(key("n4-standard-16"), Some("xeon-n4"));
        assert_eq!(key("c4a-standard-16"), None);
        assert_eq!(key("ccx33"), Some("epyc-milan"));
        assert_eq!(key("cpx42"), Some("epyc-genoa"));
        assert_eq!(key("cax31"), Some("neoverse-n1-cax"));
        // One thread a core: the Arm classes (Graviton, Hetzner's Neoverse
        // N1), AWS's EPYC 9R14 (m7a, r7a, c7a: SMT off), and Hetzner's
        // shared vCPUs as lscpu shows them; every other x86 size two.
        for i in instances() {
            let arm = i
                .cpu_key
                .is_some_and(|k| k.starts_with("graviton") || k.starts_with("neoverse"))
                || i.name.starts_with("c4a-");
            let smt_off = i.cpu_key == Some("epyc-9r14");
            let shared = i.provider == Provider::Hetzner
                && (i.name.starts_with("cpx") || i.name.starts_with("cx"));
            assert_eq!(
                arm || smt_off || shared,
                i.threads_per_core == 1,
                "{}",
                i.name
            );
        }
    }

    #[test]
    fn a_broken_table_names_its_line() {
        let head = "@s\tx\n";
        let row = |speed: &str| {
            let t = format!(
                "{head}epyc-9454p\tA\t1.00\t10\t10\t10\t10\t10\tm\ts\nb\tB\t{speed}\t5\t5\t5\t5\t5\tm\ts\n"
            );
            parse_table(Box::leak(t.into_boxed_str()))
        };
        assert!(row("0.50").is_ok());
        let e = row("0.60").err().unwrap();
        assert!(e.contains("b: speed 0.6 but its figures give 0.50"), "{e}");
        let e = parse_table("@s\tx\na\tb\t1\n").err().unwrap();
        assert!(e.starts_with("line 2: 3 columns"), "{e}");
        let e = parse_table("b\tB\t1\t5\t5\t5\t5\t5\tm\tnone\n")
            .err()
            .unwrap();
        assert!(e.contains("source \"none\" has no @ line"), "{e}");
        let e = parse_table("@s\tx\nb\tB\t1\t5\t5\t5\t5\t5\tm\ts\n")
            .err()
            .unwrap();
        assert!(e.contains("no epyc-9454p row"), "{e}");
    }
}
