//! pgbench's TPC-B-like transaction as page accesses, over pgbench's table
//! layout. Every number comes from `workloads/tpcb-like.json`, where each
//! carries its source.

use std::collections::BTreeMap;

use anyhow::{Context, bail};
use rand::RngExt;
use serde::Deserialize;

use super::{Step, Workload};
use crate::core::SimRng;
use crate::core::locks::RowId;
use crate::core::time::US;

/// The shipped TPC-B-like constants, embedded so `run` works from any directory.
pub const TPCB_JSON: &str = include_str!("../../workloads/tpcb-like.json");

#[derive(Debug, Deserialize)]
struct Constant {
    value: f64,
    source: String,
}

#[derive(Debug, Deserialize)]
struct File {
    name: String,
    description: String,
    constants: BTreeMap<String, Constant>,
}

/// A relation's place in the data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Extent {
    /// First data block.
    pub first: u64,
    /// Number of blocks.
    pub blocks: u64,
}

/// A btree laid out level by level: root first, leaves last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Btree {
    /// (first block, pages) per level, root level first.
    pub levels: Vec<Extent>,
    items_per_leaf: u64,
    fanout: u64,
}

impl Btree {
    fn new(first: u64, keys: u64, items_per_leaf: u64, fanout: u64) -> Btree {
        let mut counts = vec![keys.div_ceil(items_per_leaf).max(1)];
        while *counts.last().unwrap() > 1 {
            let above = counts.last().unwrap().div_ceil(fanout);
            counts.push(above);
        }
        counts.reverse();
        let mut levels = Vec::new();
        let mut next = first;
        for c in counts {
            levels.push(Extent {
                first: next,
                blocks: c,
            });
            next += c;
        }
        Btree {
            levels,
            items_per_leaf,
            fanout,
        }
    }

    /// Blocks in the index.
    pub fn blocks(&self) -> u64 {
        self.levels.iter().map(|l| l.blocks).sum()
    }

    /// Pages read to find `key` (0-based), root to leaf.
    pub fn path(&self, key: u64, out: &mut Vec<u64>) {
        let leaf = key / self.items_per_leaf;
        let depth = self.levels.len();
        for (i, level) in self.levels.iter().enumerate() {
            let below = (depth - 1 - i) as u32;
            let idx = (leaf / self.fanout.pow(below)).min(level.blocks - 1);
            out.push(level.first + idx);
        }
    }

    /// The leaf holding `key`.
    pub fn leaf(&self, key: u64) -> u64 {
        let l = self.levels.last().unwrap();
        l.first + (key / self.items_per_leaf).min(l.blocks - 1)
    }
}

/// pgbench's tables at one scale, placed one after another in the data file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    pub accounts: Extent,
    pub accounts_pkey: Btree,
    pub tellers: Extent,
    pub tellers_pkey: Btree,
    pub branches: Extent,
    pub branches_pkey: Btree,
    pub history: Extent,
    pub total_blocks: u64,
}

/// The TPC-B-like workload.
#[derive(Debug)]
pub struct Tpcb {
    name: String,
    description: String,
    constants: BTreeMap<String, Constant>,
    scale: u64,
    layout: Layout,
    accounts: u64,
    tellers: u64,
    branches: u64,
    history_rows: u64,
    c: Params,
    path: Vec<u64>,
}

/// The constants the generator uses, read once.
#[derive(Debug, Clone, Copy)]
struct Params {
    non_hot: f64,
    wal_update: u32,
    wal_index_insert: u32,
    wal_insert: u32,
    wal_commit: u32,
    wal_other: u32,
    fpi: u32,
    checkpoint_record: u32,
    cpu_per_statement: u64,
    history_rows_per_page: u64,
    accounts_rows_per_page: u64,
    tellers_rows_per_page: u64,
    branches_rows_per_page: u64,
}

const TELLER_ROW: RowId = 1 << 60;
const BRANCH_ROW: RowId = 2 << 60;
const ACCOUNT_ROW: RowId = 3 << 60;

impl Tpcb {
    /// The shipped workload at `scale`.
    pub fn shipped(scale: u64) -> anyhow::Result<Tpcb> {
        Tpcb::from_json(TPCB_JSON, scale).context("workloads/tpcb-like.json (embedded)")
    }

    /// Build from a workload file's text at `scale`.
    pub fn from_json(text: &str, scale: u64) -> anyhow::Result<Tpcb> {
        if scale == 0 {
            bail!("scale must be at least 1");
        }
        let file: File = serde_json::from_str(text)?;
        let get = |k: &str| -> anyhow::Result<f64> {
            let c = file
                .constants
                .get(k)
                .with_context(|| format!("constants.{k} is missing"))?;
            if !(c.value.is_finite() && c.value >= 0.0) {
                bail!("constants.{k}: {} is not a non-negative number", c.value);
            }
            Ok(c.value)
        };
        let positive = |k: &str| -> anyhow::Result<u64> {
            let v = get(k)?;
            if v < 1.0 {
                bail!("constants.{k}: must be at least 1, got {v}");
            }
            Ok(v as u64)
        };
        let accounts = positive("accounts_per_scale")? * scale;
        let tellers = positive("tellers_per_scale")? * scale;
        let branches = positive("branches_per_scale")? * scale;
        let leaf_items = positive("index_leaf_items")?;
        let fanout = positive("index_fanout")?.max(2);
        let mut next = 0;
        let mut extent = |blocks: u64| {
            let e = Extent {
                first: next,
                blocks,
            };
            next += blocks;
            e
        };
        let accounts_heap = extent(accounts.div_ceil(positive("accounts_rows_per_page")?));
        let tellers_heap = extent(tellers.div_ceil(positive("tellers_rows_per_page")?));
        let branches_heap = extent(branches.div_ceil(positive("branches_rows_per_page")?));
        let history = extent(positive("history_region_pages")?);
        let accounts_pkey = Btree::new(next, accounts, leaf_items, fanout);
        next += accounts_pkey.blocks();
        let tellers_pkey = Btree::new(next, tellers, leaf_items, fanout);
        next += tellers_pkey.blocks();
        let branches_pkey = Btree::new(next, branches, leaf_items, fanout);
        next += branches_pkey.blocks();
        let statements = positive("statements")?;
        let c = Params {
            non_hot: get("accounts_non_hot_fraction")?.min(1.0),
            wal_update: get("wal_update_bytes")? as u32,
            wal_index_insert: get("wal_index_insert_bytes")? as u32,
            wal_insert: get("wal_insert_bytes")? as u32,
            wal_commit: get("wal_commit_bytes")? as u32,
            wal_other: get("wal_other_bytes_per_tx")? as u32,
            fpi: get("full_page_image_bytes")? as u32,
            checkpoint_record: get("checkpoint_record_bytes")? as u32,
            cpu_per_statement: (get("cpu_us_per_tx")? * US as f64 / statements as f64) as u64,
            history_rows_per_page: positive("history_rows_per_page")?,
            accounts_rows_per_page: positive("accounts_rows_per_page")?,
            tellers_rows_per_page: positive("tellers_rows_per_page")?,
            branches_rows_per_page: positive("branches_rows_per_page")?,
        };
        // Read once so a file without it fails now, not mid-run.
        get("round_trip_us_per_statement")?;
        Ok(Tpcb {
            name: file.name,
            description: file.description,
            constants: file.constants,
            scale,
            layout: Layout {
                accounts: accounts_heap,
                accounts_pkey,
                tellers: tellers_heap,
                tellers_pkey,
                branches: branches_heap,
                branches_pkey,
                history,
                total_blocks: next,
            },
            accounts,
            tellers,
            branches,
            history_rows: 0,
            c,
            path: Vec::new(),
        })
    }

    /// The table layout.
    pub fn layout(&self) -> &Layout {
        &self.layout
    }

    /// Client round trip per statement, in ns.
    pub fn round_trip_ns(&self) -> u64 {
        (self.constants["round_trip_us_per_statement"].value * US as f64) as u64
    }

    fn heap_block(extent: Extent, row: u64, rows_per_page: u64) -> u64 {
        extent.first + (row / rows_per_page).min(extent.blocks - 1)
    }

    fn statement(&self, out: &mut Vec<Step>) {
        out.push(Step::RoundTrip);
        out.push(Step::Cpu(self.c.cpu_per_statement));
    }
}

impl Workload for Tpcb {
    fn name(&self) -> &str {
        &self.name
    }

    fn data_blocks(&self) -> u64 {
        self.layout.total_blocks
    }

    fn full_page_image_bytes(&self) -> u32 {
        self.c.fpi
    }

    fn checkpoint_record_bytes(&self) -> u32 {
        self.c.checkpoint_record
    }

    fn next_transaction(&mut self, rng: &mut SimRng, out: &mut Vec<Step>) {
        out.clear();
        let l = &self.layout;
        let aid = rng.random_range(0..self.accounts);
        let tid = rng.random_range(0..self.tellers);
        let bid = rng.random_range(0..self.branches);
        let non_hot = rng.random_bool(self.c.non_hot);
        let accounts_block = Self::heap_block(l.accounts, aid, self.c.accounts_rows_per_page);
        let tellers_block = Self::heap_block(l.tellers, tid, self.c.tellers_rows_per_page);
        let branches_block = Self::heap_block(l.branches, bid, self.c.branches_rows_per_page);
        let accounts_leaf = l.accounts_pkey.leaf(aid);
        let (c, mut path) = (self.c, std::mem::take(&mut self.path));

        // BEGIN
        self.statement(out);
        // UPDATE pgbench_accounts SET abalance = abalance + :delta WHERE aid = :aid
        self.statement(out);
        path.clear();
        self.layout.accounts_pkey.path(aid, &mut path);
        out.extend(path.iter().map(|&b| Step::Read(b)));
        out.push(Step::Lock(ACCOUNT_ROW | aid));
        out.push(Step::Modify {
            block: accounts_block,
            wal_bytes: c.wal_update,
        });
        if non_hot {
            // The new tuple version needs an index entry.
            out.push(Step::Modify {
                block: accounts_leaf,
                wal_bytes: c.wal_index_insert,
            });
        }
        // SELECT abalance FROM pgbench_accounts WHERE aid = :aid
        self.statement(out);
        out.extend(path.iter().map(|&b| Step::Read(b)));
        out.push(Step::Read(accounts_block));
        // UPDATE pgbench_tellers ... WHERE tid = :tid
        self.statement(out);
        path.clear();
        self.layout.tellers_pkey.path(tid, &mut path);
        out.extend(path.iter().map(|&b| Step::Read(b)));
        out.push(Step::Lock(TELLER_ROW | tid));
        out.push(Step::Modify {
            block: tellers_block,
            wal_bytes: c.wal_update,
        });
        // UPDATE pgbench_branches ... WHERE bid = :bid
        self.statement(out);
        path.clear();
        self.layout.branches_pkey.path(bid, &mut path);
        out.extend(path.iter().map(|&b| Step::Read(b)));
        out.push(Step::Lock(BRANCH_ROW | bid));
        out.push(Step::Modify {
            block: branches_block,
            wal_bytes: c.wal_update,
        });
        // INSERT INTO pgbench_history ...: appends to the last page, and
        // extends the relation when that page is full.
        self.statement(out);
        let row = self.history_rows;
        self.history_rows += 1;
        let page = row / c.history_rows_per_page;
        let block = self.layout.history.first + page % self.layout.history.blocks;
        if row.is_multiple_of(c.history_rows_per_page) {
            out.push(Step::Extend {
                block,
                wal_bytes: c.wal_insert,
            });
        } else {
            out.push(Step::Modify {
                block,
                wal_bytes: c.wal_insert,
            });
        }
        // END
        self.statement(out);
        out.push(Step::Commit {
            wal_bytes: c.wal_commit + c.wal_other,
        });
        self.path = path;
    }

    fn describe(&self) -> serde_json::Value {
        let constants: serde_json::Map<String, serde_json::Value> = self
            .constants
            .iter()
            .map(|(k, c)| {
                (
                    k.clone(),
                    serde_json::json!({"value": c.value, "source": c.source}),
                )
            })
            .collect();
        serde_json::json!({
            "name": self.name,
            "description": self.description,
            "scale": self.scale,
            "data_blocks": self.layout.total_blocks,
            "data_bytes": self.layout.total_blocks * crate::core::io::PAGE_BYTES,
            "constants": constants,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn layout_matches_measured_sizes() {
        let t = Tpcb::shipped(100).unwrap();
        let l = t.layout();
        // 163,935 heap pages measured at scale 100.
        assert!(
            (l.accounts.blocks as i64 - 163_935).abs() < 100,
            "{}",
            l.accounts.blocks
        );
        assert_eq!(l.tellers.blocks, 6);
        assert_eq!(l.branches.blocks, 1);
        // Three index levels at scale 10 and 100, two at scale 1.
        assert_eq!(l.accounts_pkey.levels.len(), 3);
        assert_eq!(
            Tpcb::shipped(10)
                .unwrap()
                .layout()
                .accounts_pkey
                .levels
                .len(),
            3
        );
        assert_eq!(
            Tpcb::shipped(1)
                .unwrap()
                .layout()
                .accounts_pkey
                .levels
                .len(),
            2
        );
        // Root has about 97 children at scale 100.
        assert!((l.accounts_pkey.levels[1].blocks as i64 - 97).abs() <= 1);
    }

    #[test]
    fn extents_do_not_overlap() {
        let t = Tpcb::shipped(7).unwrap();
        let l = t.layout();
        let mut ex = vec![l.accounts, l.tellers, l.branches, l.history];
        for b in [&l.accounts_pkey, &l.tellers_pkey, &l.branches_pkey] {
            ex.extend(b.levels.iter().copied());
        }
        ex.sort_by_key(|e| e.first);
        for w in ex.windows(2) {
            assert_eq!(w[0].first + w[0].blocks, w[1].first);
        }
        assert_eq!(ex.last().map(|e| e.first + e.blocks), Some(l.total_blocks));
    }

    #[test]
    fn transaction_shape() {
        let mut t = Tpcb::shipped(10).unwrap();
        let mut rng = SimRng::seed_from_u64(1);
        let mut steps = Vec::new();
        let mut non_hot = 0;
        let n = 2000;
        for _ in 0..n {
            t.next_transaction(&mut rng, &mut steps);
            assert_eq!(steps.iter().filter(|s| **s == Step::RoundTrip).count(), 7);
            assert_eq!(
                steps.iter().filter(|s| matches!(s, Step::Lock(_))).count(),
                3
            );
            assert!(matches!(steps.last(), Some(Step::Commit { .. })));
            let modifies = steps
                .iter()
                .filter(|s| matches!(s, Step::Modify { .. } | Step::Extend { .. }))
                .count();
            if modifies == 5 {
                non_hot += 1;
            } else {
                assert_eq!(modifies, 4);
            }
            for s in &steps {
                if let Step::Read(b)
                | Step::Modify { block: b, .. }
                | Step::Extend { block: b, .. } = s
                {
                    assert!(*b < t.data_blocks());
                }
            }
        }
        let frac = non_hot as f64 / n as f64;
        assert!((frac - 0.16).abs() < 0.03, "non-HOT fraction {frac}");
    }

    #[test]
    fn record_bytes_without_fpi_match_measured_403() {
        let mut t = Tpcb::shipped(10).unwrap();
        let mut rng = SimRng::seed_from_u64(2);
        let mut steps = Vec::new();
        t.next_transaction(&mut rng, &mut steps);
        let bytes: u32 = steps
            .iter()
            .map(|s| match s {
                Step::Modify { wal_bytes, .. }
                | Step::Extend { wal_bytes, .. }
                | Step::Commit { wal_bytes } => *wal_bytes,
                _ => 0,
            })
            .sum();
        // 3 updates + insert + commit + prune/lock share, HOT case.
        let hot = 3 * 72 + 79 + 34 + 72;
        assert!(bytes == hot || bytes == hot + 64);
        assert!((hot as f64 - 403.5).abs() / 403.5 < 0.02);
    }

    #[test]
    fn bad_constants_are_refused_with_their_name() {
        let text = TPCB_JSON.replace("\"value\": 61,", "\"value\": 0,");
        let err = Tpcb::from_json(&text, 1).unwrap_err().to_string();
        assert!(err.contains("accounts_rows_per_page"), "{err}");
        assert!(Tpcb::from_json(TPCB_JSON, 0).is_err());
    }
}
