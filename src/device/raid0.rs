//! A striped array of volumes (Linux md RAID0, or LVM striping):
//! `--device raid0:n=4,chunk=512k,member=io1:iops=2000`.
//!
//! md RAID0 maps the array's bytes to its members a chunk at a time, in
//! turn (drivers/md/raid0.c, `map_sector`), and splits a request that
//! crosses a chunk boundary (`raid0_make_request`, `bio_split`). A flush
//! goes to every member (`md_flush_request`), so an fdatasync waits for the
//! slowest. Each member keeps its own caps: four volumes of 2,000 IOPS give
//! 8,000 to I/O spread over them, and one hot chunk gets 2,000.
//!
//! The core's offsets are placed on the array as a filesystem would: data
//! block b at b × 8 KiB, the WAL after the data ([`WAL_BASE`]), segment by
//! segment. Which member a WAL page lands on then turns with it, as on a
//! real array, whatever the data file's size.

use serde::{Deserialize, Serialize};

use super::profile::Profile;
use crate::core::io::{IoKind, PAGE_BYTES, WAL_SEGMENT_BYTES};

/// Where the WAL starts on the array: past any data file the model holds.
pub const WAL_BASE: u64 = 1 << 50;
/// Most members an array may have.
pub const MEMBERS_MAX: u32 = 64;
/// Largest chunk, KiB (md allows up to 4 GiB; 64 MiB covers practice).
pub const CHUNK_KIB_MAX: u32 = 64 * 1024;

/// A profile's array: `members` of the profile's disk, striped at
/// `chunk_kib`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Raid0 {
    /// Volumes in the array (2 to 64).
    pub members: u32,
    /// Bytes each member takes in turn, KiB: a multiple of 8 (a
    /// PostgreSQL page never spans two members).
    pub chunk_kib: u32,
    /// The server's limits on all its volumes together (`--instance`,
    /// `--volume-limits`): they bind the array as a whole, where each
    /// member keeps its own caps. Absent: none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_limits: Option<ServerLimits>,
}

/// What a server lets through to all its volumes together.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ServerLimits {
    /// I/O per second (the burst rate where it bursts).
    pub iops: f64,
    /// MiB per second.
    pub mib_s: f64,
    /// The burst credits and the baseline rate they refill at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub burst: Option<super::profile::Burst>,
}

impl Raid0 {
    /// Checks the array's figures; the error names the field.
    pub fn validate(&self) -> Result<(), String> {
        if !(2..=MEMBERS_MAX).contains(&self.members) {
            return Err(format!(
                "raid0.members: {} must be between 2 and {MEMBERS_MAX}",
                self.members
            ));
        }
        if self.chunk_kib == 0
            || !self.chunk_kib.is_multiple_of(8)
            || self.chunk_kib > CHUNK_KIB_MAX
        {
            return Err(format!(
                "raid0.chunk_kib: {} must be a multiple of 8 (a PostgreSQL page) up to {CHUNK_KIB_MAX}",
                self.chunk_kib
            ));
        }
        Ok(())
    }

    /// The requests `kind` becomes on the members: (member, request), in
    /// the order of the array's bytes. A flush goes to every member.
    pub fn split(&self, kind: IoKind) -> Vec<(usize, IoKind)> {
        let wal_at =
            |segment: u32, offset: u64| WAL_BASE + u64::from(segment) * WAL_SEGMENT_BYTES + offset;
        match kind {
            IoKind::ReadPage { block }
            | IoKind::WritePage { block, .. }
            | IoKind::CacheWrite { block } => {
                vec![(self.member(block * PAGE_BYTES), kind)]
            }
            IoKind::Writeback {
                block,
                pages,
                flusher,
            } => self.page_runs(block, pages, |block, pages| IoKind::Writeback {
                block,
                pages,
                flusher,
            }),
            IoKind::ReadRun { block, pages } => self.page_runs(block, pages, |block, pages| {
                IoKind::ReadRun { block, pages }
            }),
            // WAL requests keep their kind; each piece its own offset and length.
            IoKind::WalWrite {
                segment,
                offset,
                len,
            }
            | IoKind::WalRead {
                segment,
                offset,
                len,
            }
            | IoKind::StandbyWalWrite {
                segment,
                offset,
                len,
                ..
            } => self
                .pieces(wal_at(segment, offset), len)
                .into_iter()
                .map(|(m, at, part)| (m, with_range(kind, at - wal_at(segment, 0), part)))
                .collect(),
            IoKind::WalSync { .. } | IoKind::DataSync | IoKind::StandbyWalSync { .. } => {
                (0..self.members as usize).map(|m| (m, kind)).collect()
            }
        }
    }

    /// The member holding the array's byte `at`.
    fn member(&self, at: u64) -> usize {
        let chunk = u64::from(self.chunk_kib) * 1024;
        ((at / chunk) % u64::from(self.members)) as usize
    }

    /// The pieces of the array's bytes [at, at + len) cut at chunk
    /// boundaries: (member, offset, length).
    fn pieces(&self, at: u64, len: u64) -> Vec<(usize, u64, u64)> {
        let chunk = u64::from(self.chunk_kib) * 1024;
        let mut out = Vec::new();
        let mut pos = at;
        while pos < at + len {
            let end = ((pos / chunk + 1) * chunk).min(at + len);
            out.push((self.member(pos), pos, end - pos));
            pos = end;
        }
        out
    }

    /// A run of `pages` data pages from `block`, cut at chunk boundaries
    /// into runs of the same kind (`run(block, pages)`).
    fn page_runs(
        &self,
        block: u64,
        pages: u32,
        run: impl Fn(u64, u32) -> IoKind,
    ) -> Vec<(usize, IoKind)> {
        self.pieces(block * PAGE_BYTES, u64::from(pages) * PAGE_BYTES)
            .into_iter()
            .map(|(m, at, len)| (m, run(at / PAGE_BYTES, (len / PAGE_BYTES) as u32)))
            .collect()
    }
}

/// `kind`, a WAL read or write, moved to `offset` and `len` in its segment.
fn with_range(kind: IoKind, offset: u64, len: u64) -> IoKind {
    match kind {
        IoKind::WalWrite { segment, .. } => IoKind::WalWrite {
            segment,
            offset,
            len,
        },
        IoKind::WalRead { segment, .. } => IoKind::WalRead {
            segment,
            offset,
            len,
        },
        IoKind::StandbyWalWrite {
            standby, segment, ..
        } => IoKind::StandbyWalWrite {
            standby,
            segment,
            offset,
            len,
        },
        other => other,
    }
}

/// `raid0:n=N,chunk=SIZE,member=DEVICE`: the array's profile, its member
/// resolved by `member_of` (any `--device` name; `member=` comes last, so a
/// provisioned member keeps its own commas). None when `arg` is not a
/// raid0; an error names the key and the limit.
pub fn parse(
    arg: &str,
    member_of: impl Fn(&str) -> Option<Result<Profile, String>>,
) -> Option<Result<Profile, String>> {
    let rest = arg.strip_prefix("raid0:")?;
    Some(build(rest, member_of))
}

fn build(
    rest: &str,
    member_of: impl Fn(&str) -> Option<Result<Profile, String>>,
) -> Result<Profile, String> {
    let Some((keys, member)) = rest.split_once("member=") else {
        return Err("raid0: give member=DEVICE last (raid0:n=4,chunk=512k,member=gp3)".into());
    };
    let (mut n, mut chunk_kib) = (None, 512);
    for item in keys.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        match item.split_once('=') {
            Some(("n", v)) => {
                n = Some(v.parse::<u32>().map_err(|_| {
                    format!("raid0: n={v} is not a count of volumes (2 to {MEMBERS_MAX})")
                })?)
            }
            Some(("chunk", v)) => {
                let bytes = super::import::fio::parse_size(v)
                    .ok_or_else(|| format!("raid0: chunk={v} is not a size (64k, 512k, 1m)"))?;
                chunk_kib = u32::try_from(bytes / 1024).unwrap_or(u32::MAX);
                if !bytes.is_multiple_of(1024) {
                    chunk_kib = 0;
                }
            }
            _ => {
                return Err(format!(
                    "raid0: {item:?} is not a key; keys: n, chunk (default 512k), member (last)"
                ));
            }
        }
    }
    let Some(n) = n else {
        return Err("raid0: give n=N, the volumes in the array".into());
    };
    let raid = Raid0 {
        members: n,
        chunk_kib,
        server_limits: None,
    };
    raid.validate().map_err(|e| format!("raid0: {e}"))?;
    let mut p = match member_of(member) {
        Some(Ok(p)) => p,
        Some(Err(e)) => return Err(format!("raid0: member={member}: {e}")),
        None => {
            return Err(format!(
                "raid0: member={member} is not a shipped profile, provisioned volume or instance store"
            ));
        }
    };
    if p.raid0.is_some() {
        return Err("raid0: a member may not be an array itself".into());
    }
    p.name = format!("raid0-{n}x{chunk_kib}k-{}", p.name);
    p.description = format!("RAID0 of {n} × {} (chunk {chunk_kib} KiB)", p.description);
    p.source = format!(
        "{}; striped as Linux md RAID0 (drivers/md/raid0.c): each member keeps its caps, a \
         request crossing a chunk is split, a flush goes to every member",
        p.source
    );
    p.raid0 = Some(raid);
    Ok(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn raid(n: u32, chunk_kib: u32) -> Raid0 {
        Raid0 {
            members: n,
            chunk_kib,
            server_limits: None,
        }
    }

    #[test]
    fn pages_go_to_members_a_chunk_at_a_time_and_flushes_to_all() {
        let r = raid(4, 16); // two pages a chunk
        let on = |block| r.split(IoKind::ReadPage { block })[0].0;
        assert_eq!(
            [on(0), on(1), on(2), on(3), on(7), on(8)],
            [0, 0, 1, 1, 3, 0]
        );
        let flush = r.split(IoKind::DataSync);
        assert_eq!(flush.iter().map(|p| p.0).collect::<Vec<_>>(), [0, 1, 2, 3]);
    }

    #[test]
    fn a_request_crossing_a_chunk_is_split_and_keeps_its_bytes() {
        let r = raid(2, 512);
        let parts = r.split(IoKind::WalWrite {
            segment: 0,
            offset: 256 * 1024,
            len: 1024 * 1024,
        });
        let lens: Vec<u64> = parts
            .iter()
            .map(|(_, k)| match k {
                IoKind::WalWrite { len, .. } => *len,
                _ => unreachable!(),
            })
            .collect();
        assert_eq!(lens, [256 * 1024, 512 * 1024, 256 * 1024]);
        assert_eq!(parts.iter().map(|p| p.0).collect::<Vec<_>>(), [0, 1, 0]);
        let run = r.split(IoKind::ReadRun {
            block: 60,
            pages: 8,
        });
        assert_eq!(run.len(), 2, "{run:?}");
    }

    #[test]
    fn parsing_names_the_array_and_refuses_what_md_would_not_build() {
        let shipped = |s: &str| Profile::shipped(s).map(Ok);
        let p = parse("raid0:n=4,chunk=256k,member=gp3", shipped)
            .unwrap()
            .unwrap();
        assert_eq!(p.name, "raid0-4x256k-gp3");
        assert_eq!(p.raid0, Some(raid(4, 256)));
        assert!(parse("gp3", shipped).is_none());
        let err = |a: &str| parse(a, shipped).unwrap().unwrap_err();
        assert!(err("raid0:n=1,member=gp3").contains("between 2 and 64"));
        assert!(err("raid0:n=4,chunk=12k,member=gp3").contains("multiple of 8"));
        assert!(err("raid0:n=4").contains("member=DEVICE"));
        assert!(err("raid0:n=4,member=nope").contains("member=nope"));
        assert!(err("raid0:n=4,width=2,member=gp3").contains("not a key"));
    }
}
