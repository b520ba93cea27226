//! A workload's tables laid out in the data file at one scale: each
//! relation's extent, its B-tree's levels, and what a table remembers of
//! its pages since the load (the rows appended, the pages a full-loaded
//! table has had their first update).

use anyhow::Result;

use super::spec::WorkloadSpec;
use crate::core::io::PAGE_BYTES;
use crate::core::workload::Step;

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
    /// Per level, leaves under one of its pages (fanout^levels below):
    /// computed once, not per lookup.
    spans: Vec<u64>,
}

/// The most blocks a workload's data set may have: the buffer pool's page
/// table keys blocks by `u32` (`NO_BLOCK` is `u32::MAX`), so 32 TiB.
pub const DATA_BLOCKS_MAX: u64 = crate::core::buffer_pool::NO_BLOCK as u64 - 1;

/// The most rows a table may have (2^48, 281 trillion): far past any
/// pgbench scale, and small enough that its index's sizes cannot overflow.
pub const ROWS_MAX: u64 = 1 << 48;

impl Btree {
    pub(super) fn new(first: u64, keys: u64, items_per_leaf: u64, fanout: u64) -> Btree {
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
        let depth = levels.len();
        let spans = (0..depth)
            .map(|i| fanout.saturating_pow((depth - 1 - i) as u32))
            .collect();
        Btree {
            levels,
            items_per_leaf,
            fanout,
            spans,
        }
    }

    /// Blocks in the index.
    pub fn blocks(&self) -> u64 {
        self.levels.iter().map(|l| l.blocks).sum()
    }

    /// Pages read to find `key` (0-based), root to leaf.
    pub fn path(&self, key: u64, out: &mut Vec<u64>) {
        out.extend(self.path_blocks(key));
    }

    pub(super) fn path_blocks(&self, key: u64) -> impl Iterator<Item = u64> + '_ {
        let leaf = key / self.items_per_leaf;
        self.levels
            .iter()
            .zip(&self.spans)
            .map(move |(level, &span)| level.first + (leaf / span).min(level.blocks - 1))
    }

    /// `path` as read steps appended to `out`.
    pub(super) fn read_path(&self, key: u64, out: &mut Vec<Step>) {
        out.extend(self.path_blocks(key).map(Step::Read));
    }

    /// The leaf holding `key`.
    pub fn leaf(&self, key: u64) -> u64 {
        let l = self.levels.last().unwrap();
        l.first + (key / self.items_per_leaf).min(l.blocks - 1)
    }
}

/// A table at one scale.
#[derive(Debug, Clone)]
pub struct Table {
    pub name: String,
    /// Rows it starts with.
    pub rows: u64,
    pub rows_per_page: u64,
    /// Heap pages holding the starting rows.
    pub heap: Extent,
    /// Region appends go to (may be empty).
    pub append: Extent,
    pub index: Option<Btree>,
    pub(super) appended: u64,
    /// full_at_load: one bit per heap page, set once the page was updated.
    pub(super) updated: Option<Vec<u64>>,
    /// Pages of `updated` set so far.
    pub(super) updated_pages: u64,
}

impl Table {
    pub(super) fn heap_block(&self, key: u64) -> u64 {
        self.heap.first + (key / self.rows_per_page).min(self.heap.blocks.max(1) - 1)
    }

    /// The page receiving the next appended row, and whether it is new.
    pub(super) fn append(&mut self) -> (u64, bool) {
        let n = self.appended;
        self.appended += 1;
        let block = self.append.first + (n / self.rows_per_page) % self.append.blocks;
        (block, n.is_multiple_of(self.rows_per_page))
    }

    /// A full-at-load table's page `block` is updated: true if this is its
    /// first update since load (so the row version must move).
    pub(super) fn first_update(&mut self, block: u64) -> bool {
        let Some(bits) = &mut self.updated else {
            return false;
        };
        let i = (block - self.heap.first) as usize;
        let (word, bit) = (i / 64, 1u64 << (i % 64));
        let first = bits[word] & bit == 0;
        bits[word] |= bit;
        self.updated_pages += u64::from(first);
        first
    }
}

/// The tables of `first` (a mix's first workload) at `scale` laid out in one file: every heap first
/// (in name order), then the indexes. Returns them and the blocks in all.
pub(super) fn layout(first: &WorkloadSpec, scale: u64) -> Result<(Vec<Table>, u64)> {
    // Every size is computed with checked arithmetic and bounded before
    // anything is allocated for it: a table of 1e18 rows or 2^40
    // appended pages is refused here, not an overflow, an assertion in
    // the core or an allocation of a hundred GB.
    let too_big = |what: String| {
        anyhow::anyhow!(
            "{what}: the data set would be larger than the {DATA_BLOCKS_MAX} blocks \
             ({} TiB) that are modelled",
            (DATA_BLOCKS_MAX * PAGE_BYTES).div_ceil(1 << 40)
        )
    };
    let mut next = 0u64;
    let mut tables: Vec<Table> = Vec::new();
    for (name, t) in &first.tables {
        let rows = t
            .rows_per_scale
            .checked_mul(scale)
            .filter(|r| *r <= ROWS_MAX)
            .ok_or_else(|| {
                anyhow::anyhow!(
                    "table {name}: rows_per_scale {} at scale {scale} is more than the \
                     {ROWS_MAX} rows a table may have",
                    t.rows_per_scale
                )
            })?;
        let heap = Extent {
            first: next,
            blocks: rows.div_ceil(t.rows_per_page),
        };
        next = next
            .checked_add(heap.blocks)
            .filter(|n| *n <= DATA_BLOCKS_MAX)
            .ok_or_else(|| too_big(format!("table {name}: {rows} rows")))?;
        let append = Extent {
            first: next,
            blocks: t.append_pages,
        };
        next = next
            .checked_add(append.blocks)
            .filter(|n| *n <= DATA_BLOCKS_MAX)
            .ok_or_else(|| too_big(format!("table {name}: append_pages {}", t.append_pages)))?;
        tables.push(Table {
            name: name.clone(),
            rows,
            rows_per_page: t.rows_per_page,
            heap,
            append,
            index: None,
            appended: 0,
            updated: None,
            updated_pages: 0,
        });
    }
    for (t, spec) in tables.iter_mut().zip(first.tables.values()) {
        if spec.full_at_load {
            t.updated = Some(vec![0; t.heap.blocks.div_ceil(64) as usize]);
        }
        if let Some(i) = &spec.index {
            let b = Btree::new(next, t.rows.max(1), i.items_per_leaf, i.fanout);
            next = next
                .checked_add(b.blocks())
                .filter(|n| *n <= DATA_BLOCKS_MAX)
                .ok_or_else(|| too_big(format!("the index of table {}", t.name)))?;
            t.index = Some(b);
        }
    }
    Ok((tables, next))
}
